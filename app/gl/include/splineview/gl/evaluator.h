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
#include "splineview/shaders.h"

namespace sv::gl {

// How the value at a position is reconstructed.
enum class Fetch {
  Nearest,          // nearest texel
  Linear,           // hardware (bi/tri)linear filtering
  CubicUnfiltered,  // the on-the-fly cubic fetch on raw samples (blurs; shown for comparison)
  CubicLut,         // prefiltered cubic, Sigg-Hadwiger: g0, h0, h1 from a 1-D lookup texture
  CubicOtf,         // prefiltered cubic, Ruijters: weights computed in the shader
  CubicPrecise,     // prefiltered cubic, 4^d point fetches at texel centres, fma blends
  Grbf              // Gaussian RBF (shaders/grbf_fetch.glsl): the texture holds the weights of
                    // sv::grbf_solve; sigma and the support radius from EvalOptions::grbf
};
const char* fetch_name(Fetch f);          // "nearest", "linear", "cubic-unfiltered", "lut",
                                          // "otf", "precise", "grbf"
Fetch parse_fetch(const std::string& s);  // throws sv::Error listing the valid names
bool fetch_prefiltered(Fetch f);          // true for lut, otf, precise (B-spline coefficients)
bool fetch_grbf(Fetch f);  // true for grbf (GRBF weights: neither samples nor coefficients)

// Storage of the spline texture. R16 is unsigned-normalised (study of integer formats only;
// values must lie in [0, 1]); R32F and R16F are signed floats as coefficients need.
enum class TexFormat { R32F, R16F, R16 };
const char* format_name(TexFormat f);  // "r32f", "r16f", "r16"
TexFormat parse_format(const std::string& s);

// Layout of the LUT (see shaders/bspline_fetch.glsl). Both store three values per texel with
// g0 = w0 + w1 third (the layout is documented in shaders/bspline_fetch.glsl).
enum class LutMapping {
  Endpoints,  // texel k holds h0 = w1/g0 - 1 and h1 = w3/g1 + 1 (offsets from i = floor(p)) at
              // a = k / (texels - 1), looked up at u = (a (texels-1) + 0.5) / texels with
              // clamp-to-edge: a = 0 and a -> 1 fall on texel centres, nothing wraps (default)
  Repeat      // as published (GPU Gems 2 ch. 20): texel k holds the offsets from p itself,
              // 1 + a - w1/g0 and 1 - a + w3/g1, at a = (k + 0.5) / texels, looked up at u = a
              // with GL_REPEAT; within half a texel of a = 0 the filter blends the values for
              // a -> 1 with those for a = 0, which belong to different cells (published error)
};
const char* lut_mapping_name(LutMapping m);  // "endpoints", "repeat"

// The lookup table of the LUT flavour (GPU Gems 2 ch. 20): two fetch offsets and g0 over the
// fractional offset a in [0, 1), linearly filtered (layout: LutMapping).
struct LutOptions {
  int texels = 128;        // table size, 2 .. GL_MAX_TEXTURE_SIZE
  bool half_float = true;  // RGB16F as published; false: RGB32F
  LutMapping mapping = LutMapping::Endpoints;
};

// The table exactly as uploaded: texels * 3 floats (offset 0, offset 1, g0 per texel, as
// LutMapping describes), rounded to half
// precision when opt.half_float. For deriving error bounds on the host. Throws sv::Error for
// texels < 2.
std::vector<float> lut_table(const LutOptions& opt);

// The value a texel of the given format holds for v: R32F v itself, R16F v rounded to the
// nearest half (ties to even, as SplineTexture converts), R16 round(v * 65535) / 65535 for v in
// [0, 1].
float texel_value(float v, TexFormat format);

// What a pass shows of the reconstructed spline (shaders/bspline_quantity.glsl): the value, one
// partial derivative, or a quantity derived from several at the same position. Derivatives are
// per sample (texel) unless an axis scale says otherwise (EvalOptions::axis_scale; the viewer's
// volume mode uses 1 / spacing: per mm).
enum class QuantityKind {
  Value,
  Partial,            // the multi-index `order`
  GradientMagnitude,  // sqrt(sum_a (ds/dx_a)^2)
  Laplacian,          // sum_a d2s/dx_a^2
  HessianDeterminant  // det (d2s/dx_a dx_b)
};
struct Quantity {
  QuantityKind kind = QuantityKind::Value;
  // Partial: the derivative order per TEXTURE axis (x, y, z): order[0] belongs to the last
  // (fastest) array axis, the image's columns. 0..2 each (precise), 0..1 (otf).
  std::array<int, 3> order{0, 0, 0};
};
bool operator==(const Quantity& a, const Quantity& b);
inline bool operator!=(const Quantity& a, const Quantity& b) {
  return !(a == b);
}
// Command-line names: "value", "dx", "dy", "dz", "dxx", "dxy", ..., "dxxyy" (the letters of a
// partial: x, then y, then z, each as often as its order), "gradient-magnitude", "laplacian",
// "hessian-det".
std::string quantity_name(const Quantity& q);
// Short labels for views: "value", "d/dx", "d2/dx dy", "|gradient|", "Laplacian", "det Hessian".
std::string quantity_label(const Quantity& q);
// Parses a command-line name for a `rank`-D signal (rank 2 has no z); throws sv::Error naming
// the valid names.
Quantity parse_quantity(const std::string& name, std::size_t rank);
// The choices a user interface lists for `rank`: value, each first and second partial (mixed
// included), gradient magnitude, Laplacian, Hessian determinant.
std::vector<Quantity> quantity_choices(std::size_t rank);
// The highest derivative order along one axis the quantity needs (0 for the value).
int quantity_max_order(const Quantity& q);
// Can be negative (partials, Laplacian, Hessian determinant) or not (value, gradient magnitude).
bool quantity_signed(const Quantity& q);
// Why the fetch `f` cannot show `q` for a `rank`-D texture ("linear has no derivatives", "otf
// has first derivatives only (order 1 per axis): use precise"), or empty when it can.
std::string quantity_problem(Fetch f, const Quantity& q, std::size_t rank);
// The #defines of bspline_quantity.glsl (and SV_DERIVATIVE_ORDER) for q; none for the value.
ShaderDefines quantity_defines(const Quantity& q, std::size_t rank);

// The Gaussian of the GRBF fetch (Fetch::Grbf): sigma and the support radius R per ARRAY axis
// (as sv::GrbfWeights holds them: one value for every axis or one per axis), in samples. The
// fetch sums the weights in the box |p_d - k_d| <= R_d; floor(2 R_d) + 1 <= kGrbfMaxTaps.
struct GrbfFetchOptions {
  std::vector<double> sigma{1.0};
  std::vector<double> radius{0.0};
  // The pass's alpha is 1 rather than interpolated (images without alpha; the viewer's RGBA
  // swizzle would otherwise sum the Gaussians into it). The evaluator reads channels only.
  bool opaque = false;
};
constexpr int kGrbfMaxTaps = 64;  // SV_GRBF_MAX_TAPS of shaders/grbf_fetch.glsl
// Checks sigma (finite, > 0) and the radius (finite, >= 0, within kGrbfMaxTaps) for `rank`
// axes; throws sv::Error naming the value. Returns (sigma, radius) per TEXTURE axis (x, y, z),
// the uniforms of grbf_fetch.glsl (z = 1 and 0 in 2-D).
std::array<std::array<double, 3>, 2> grbf_uniforms(const GrbfFetchOptions& g, std::size_t rank);
// Sets those uniforms on `program` (locations of shaders/grbf_fetch.glsl).
void set_grbf_uniforms(GLuint program, const GrbfFetchOptions& g, std::size_t rank);

struct EvalOptions {
  Fetch fetch = Fetch::CubicOtf;
  Boundary boundary = Boundary::Reflect;
  int derivative_axis = -1;  // >= 0: first derivative along this array axis (otf, precise)
  // What to evaluate (value by default); derivative_axis >= 0 is the same as a Partial of order
  // 1 along that axis, and may not be combined with another quantity.
  Quantity quantity{};
  // Per TEXTURE axis (x, y, z): the factor a derivative along it takes per order (1: per sample;
  // 1 / spacing: per mm). The value is unaffected.
  std::array<double, 3> axis_scale{1.0, 1.0, 1.0};
  LutOptions lut{};
  GrbfFetchOptions grbf{};  // Fetch::Grbf only
};

// Samples or coefficients of a 2-D (H, W) or 3-D (D, H, W) array with 1..4 channels, in a
// texture of the given format (channels > 1 use the RGBA variant of the format, the unused
// channels padded with 0). The conversion to R16F/R16 happens on the host (see texel_value).
// The texture's own filter is GL_LINEAR without mipmaps; the wrap mode comes from the
// evaluator's sampler object for its boundary mode.
class SplineTexture {
 public:
  // Throws sv::Error for unsupported ranks/sizes (beyond GL limits) or R16 data outside [0,1].
  SplineTexture(const ArrayF& data, TexFormat format);
  std::size_t rank() const { return dims_.size(); }
  const std::vector<std::size_t>& dims() const { return dims_; }
  std::size_t channels() const { return channels_; }
  TexFormat format() const { return format_; }
  const Texture& texture() const { return texture_; }
  // 3-D textures: a GL_TEXTURE_2D_ARRAY copy of texture() (layer k = z slice k, same format),
  // made on the first call (by the evaluator's precise fetch, which gathers 2x2 texel blocks
  // from it: textureGather has no 3-D form); 0 for 2-D textures. Doubles the texture memory.
  GLuint layers() const;

 private:
  std::vector<std::size_t> dims_;
  std::size_t channels_ = 1;
  TexFormat format_ = TexFormat::R32F;
  Texture texture_;
  mutable detail::Handle<detail::TextureTraits> layers_;
};

// A regular grid of positions for render_grid: output pixel (row r, column c) evaluates at
// origin + r * step_row + c * step_col (positions in array axis order, 2 or 3 components).
struct GridMapping {
  std::size_t rows = 0, cols = 0;
  std::array<double, 3> origin{}, step_row{}, step_col{};
};

// Evaluates one fetch flavour, boundary mode and rank. Passes draw into the evaluator's own
// RGBA32F framebuffer with one fragment per output value (tiles of at most 2048 x 2048
// fragments; larger inputs take several passes) and read back as float32. The GL state that a
// pass changes (viewport, enables, program, vertex array, draw framebuffer, texture and sampler
// bindings of units 0 and 1, storage buffer binding 0, pixel pack state) is restored afterwards,
// so an evaluator can share a context with a UI. Timing (gpu_ms) uses GL_TIME_ELAPSED queries
// around the draws only (never the upload or readback) and waits for their results; it must not
// be requested while another GL_TIME_ELAPSED query is active.
//
// Positions: evaluate() takes float32 positions as given. render_grid() computes each position
// in double (origin + r * step_row + c * step_col) and rounds it once to float, so a grid gives
// exactly what evaluate() gives at the float-rounded grid positions. Fetches need |position| <
// 2^22 (float texel arithmetic); evaluate() throws sv::Error for non-finite or larger ones.
class Evaluator {
 public:
  // Compiles the program variant for `opt` (and the LUT texture when needed); throws sv::Error
  // naming the shader file and line on a compile error, or for an unsupported combination
  // (derivatives of nearest/linear/lut, second derivatives of otf: quantity_problem). The grid
  // variant is compiled on the first render_grid call. Derivatives are along the array axes, in
  // sample units times EvalOptions::axis_scale.
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
