// A spline prepared once and evaluated many times: the samples' coefficients for one degree and
// boundary mode (padded where the mode needs it), then sample() at any positions, in blocks.
// What sv::interpolate does per call (sampler.h), split so that callers that stream positions
// (the Python package's map_coordinates, blockwise resampling) prefilter only once.
#pragma once

#include <cstddef>

#include "splineview/array.h"
#include "splineview/sampler.h"

namespace sv {

template <class T>
class Interpolant {
 public:
  // prefilter = true: `samples` are samples (scipy's prefilter=True): the coefficients are
  // computed (in T) after padding by interpolation_pad(opt.boundary, opt.degree) samples per
  // side for Nearest and GridConstant. prefilter = false: `samples` are coefficients, used as
  // they are. Degrees 0 and 1 never filter.
  Interpolant(Array<T> samples, const SamplerOptions& opt, bool prefilter = true);

  // Evaluates at m positions (positions[i * rank + d], sample units of the original array) into
  // out (m * channels values). Thread-safe: const, no shared scratch.
  void sample(const double* positions, std::size_t m, double* out) const;

  std::size_t rank() const { return coefficients_.rank(); }
  std::size_t channels() const { return coefficients_.channels(); }
  const Array<T>& coefficients() const { return coefficients_; }
  std::size_t pad() const { return pad_; }  // samples added per side

 private:
  Array<T> coefficients_;
  SamplerOptions opt_;
  std::size_t pad_ = 0;
};

}  // namespace sv
