// GPU evaluation of splines through the GLSL fetch family (shaders/bspline_fetch*.glsl):
// upload samples or coefficients into a 2-D or 3-D texture, then evaluate at arbitrary
// positions (one fragment per position, read back as float32) or over a regular grid (zoom,
// rotation, oblique slices). Needs a current GL 4.5 core context (HeadlessContext or a window).
//
// Conventions are the CPU reference sampler's: array axis order (z, y, x), sample k at position
// k, texture coordinate u = (position + 0.5) / N; boundary modes as in sv::Boundary.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "splineview/array.h"
#include "splineview/gl/objects.h"

namespace sv::gl {

// How the value at a position is reconstructed.
enum class Fetch {
  Nearest,          // nearest texel
  Linear,           // hardware (bi/tri)linear filtering
  CubicUnfiltered,  // the on-the-fly cubic fetch on raw samples (blurs; shown for comparison)
  CubicLut,         // prefiltered cubic, Sigg-Hadwiger: g0, h0, h1 from a 1-D lookup texture
  CubicOtf,         // prefiltered cubic, Ruijters: weights computed in the shader
  CubicPrecise      // prefiltered cubic, 4^d point fetches at texel centres, fma blends
};
const char* fetch_name(Fetch f);           // "nearest", "linear", "cubic-unfiltered", "lut",
                                           // "otf", "precise"
Fetch parse_fetch(const std::string& s);   // throws sv::Error listing the valid names
bool fetch_prefiltered(Fetch f);           // true for lut, otf, precise

// Storage of the spline texture. R16 is unsigned-normalised (study of integer formats only;
// values must lie in [0, 1]); R32F and R16F are signed floats as coefficients need.
enum class TexFormat { R32F, R16F, R16 };
const char* format_name(TexFormat f);      // "r32f", "r16f", "r16"
TexFormat parse_format(const std::string& s);

// The lookup table of the LUT flavour (GPU Gems 2 ch. 20): texels of (h0, h1, g0) over the
// fractional offset a in [0, 1), linearly filtered.
struct LutOptions {
  int texels = 128;               // table size
  bool half_float = true;         // RGB16F as published; false: RGB32F
};

struct EvalOptions {
  Fetch fetch = Fetch::CubicOtf;
  Boundary boundary = Boundary::Reflect;
  int derivative_axis = -1;       // >= 0: first derivative along this array axis (otf, precise)
  LutOptions lut{};
};

// Samples or coefficients of a 2-D (H, W) or 3-D (D, H, W) array with 1..4 channels, in a
// texture of the given format (channels > 1 use the RGBA variant of the format).
class SplineTexture {
 public:
  // Throws sv::Error for unsupported ranks/sizes (beyond GL limits) or R16 data outside [0,1].
  SplineTexture(const ArrayF& data, TexFormat format);
  std::size_t rank() const { return dims_.size(); }
  const std::vector<std::size_t>& dims() const { return dims_; }
  std::size_t channels() const { return channels_; }
  TexFormat format() const { return format_; }
  const Texture& texture() const { return texture_; }

 private:
  std::vector<std::size_t> dims_;
  std::size_t channels_ = 1;
  TexFormat format_ = TexFormat::R32F;
  Texture texture_;
};

// A regular grid of positions for render_grid: output pixel (row r, column c) evaluates at
// origin + r * step_row + c * step_col (positions in array axis order, 2 or 3 components).
struct GridMapping {
  std::size_t rows = 0, cols = 0;
  std::array<double, 3> origin{}, step_row{}, step_col{};
};

class Evaluator {
 public:
  // Compiles the program variant for `opt` (and the LUT texture when needed); throws sv::Error
  // naming the shader file and line on a compile error, or for an unsupported combination
  // (derivatives of nearest/linear/lut).
  explicit Evaluator(const EvalOptions& opt, std::size_t rank);
  ~Evaluator();
  Evaluator(Evaluator&&) noexcept;
  Evaluator& operator=(Evaluator&&) noexcept;

  const EvalOptions& options() const;

  // Evaluates at m positions (positions[i * rank + d], array axis order) and returns
  // m * channels floats (interleaved). gpu_ms (optional) receives the GL timer-query time of the
  // evaluation pass.
  std::vector<float> evaluate(const SplineTexture& tex, const float* positions, std::size_t m,
                              double* gpu_ms = nullptr);

  // Evaluates over a grid into a (rows, cols) array with the texture's channels; gpu_ms as above.
  // repeats > 1 renders the pass that many times (for timing) and reports the median time.
  ArrayF render_grid(const SplineTexture& tex, const GridMapping& grid, double* gpu_ms = nullptr,
                     int repeats = 1);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sv::gl
