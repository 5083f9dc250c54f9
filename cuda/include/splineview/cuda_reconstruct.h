// CUDA reconstruction: evaluates the spline with given coefficients at arbitrary positions, in
// 2-D and 3-D (1-D too), with the same conventions as sv::sample (sample k at position k, array
// axis order, boundary extension of the coefficients).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "splineview/array.h"
#include "splineview/cuda_memory.h"

namespace sv::cuda {

enum class Fetch {
  Nearest,  // texture hardware, point sampling (degree 0)
  Linear,   // texture hardware linear / bilinear / trilinear (degree 1)
  Cubic,    // texture hardware: 2 / 4 / 8 linear fetches with B-spline weights (8-bit hardware
            // filter weights limit it, as in GLSL's on-the-fly flavour)
  Precise,  // 4 / 16 / 64 point taps at texel centres, weights and blends with fma (no hardware
            // weights)
};

const char* fetch_name(Fetch f);  // "nearest", "linear", "cubic", "precise"
// Parses one of fetch_name()'s names; throws sv::Error naming the bad value.
Fetch parse_fetch(const std::string& s);

// Coefficients (or raw samples for nearest/linear) resident on the device: a CUDA array with
// texture objects, filtered for the hardware fetches and point-sampled for nearest and the
// precise taps. 1-4 channels (3 are stored as 4).
// Texel format of the coefficient texture. Half is an experiment (splinebench-cuda reconstruct):
// half the bytes per texel, so half the cache and L2 traffic of a fetch, at the cost of rounding
// every coefficient to 11 significant bits (relative error up to 2^-11 of each coefficient).
enum class CoefficientFormat { Float, Half };

class SplineVolume {
 public:
  // From device memory (layout.size() floats) or from the host.
  SplineVolume(const float* device_data, const Layout& layout, Boundary boundary,
               CoefficientFormat format = CoefficientFormat::Float);
  explicit SplineVolume(const ArrayF& host, Boundary boundary,
                        CoefficientFormat format = CoefficientFormat::Float);
  ~SplineVolume();
  SplineVolume(const SplineVolume&) = delete;
  SplineVolume& operator=(const SplineVolume&) = delete;

  const Layout& layout() const;
  Boundary boundary() const;

  // m positions (device memory, m * rank floats, array axis order) -> m * channels values
  // (device memory). Asynchronous on the default stream.
  void sample(Fetch fetch, const float* device_positions, std::size_t m, float* device_out) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Host convenience (splinetool --backend cuda): positions m * rank doubles (rounded to float),
// out m * channels doubles.
void sample(const ArrayF& coefficients, Boundary boundary, Fetch fetch,
            const std::vector<double>& positions, double* out);

}  // namespace sv::cuda
