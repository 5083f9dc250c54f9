// GPU spline evaluation through the GLSL fetch family (see splineview/gl/evaluator.h): spline
// textures in R32F/R16F/R16 (or RGBA), the LUT of the Sigg-Hadwiger flavour, and the passes
// that evaluate at listed positions (storage buffer -> one fragment each) or over a grid.
#include "splineview/gl/evaluator.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "splineview/error.h"
#include "splineview/gl/program.h"
#include "splineview/gl/state.h"

namespace sv::gl {
namespace {

// Largest render target side per pass; bigger inputs are tiled.
constexpr int kTileSide = 2048;
// Positions must stay where float texel arithmetic is exact enough (see evaluator.h).
constexpr float kMaxPosition = 4194304.0f;  // 2^22

// Uniform locations fixed by layout(location = ...) in shaders/evaluate.frag.
constexpr GLint kWidth = 0, kCount = 1;                               // position list
constexpr GLint kOrigin = 0, kStepRow = 1, kStepCol = 2, kFirst = 3;  // grid
constexpr GLint kSize = 4;                                            // compute pass
// shaders/grbf_fetch.glsl's uniforms (sigma, radius per texture axis; opaque alpha).
constexpr GLint kGrbfSigma = 16, kGrbfRadius = 17, kGrbfOpaque = 18;
constexpr GLuint kSplineUnit = 0, kLutUnit = 1, kLayersUnit = 2, kPositionBinding = 0;
constexpr GLuint kImageUnit = 0;
constexpr int kGroupSide = 8;  // local_size_x and _y of evaluate.frag as a compute shader

const std::vector<ShaderStage> kFragmentStages = {{GL_VERTEX_SHADER, "view.vert"},
                                                  {GL_FRAGMENT_SHADER, "evaluate.frag"}};
const std::vector<ShaderStage> kComputeStages = {{GL_COMPUTE_SHADER, "evaluate.frag"}};

// The tiled precise grid pass (SV_TILE): workgroup shape and shared-memory budget; a tile's box
// of coefficients bigger than the budget makes the workgroup fall back to the untiled fetch.
bool exp_flag(const char* name);

struct TileShape {
  int group_side;  // invocations per workgroup side
  int rep;         // pixels per invocation per axis (the tile is group_side * rep pixels wide);
                   // 0: 4 where a 64-pixel tile's box fits the budget, else 2 (tile_rep)
  int budget;      // texels of the box in shared memory (16 KiB of floats)
};
// The default (16 x 16 invocations of 4 x 4 or 2 x 2 pixels: 64 x 64 or 32 x 32 pixel tiles)
// and the fixed shapes of the H100 study ("tile16x1" etc. in SPLINEVIEW_GL_EXP).
TileShape tile_shape() {
  if (exp_flag("tile16x1")) return {16, 1, 4096};
  if (exp_flag("tile16x2")) return {16, 2, 4096};
  if (exp_flag("tile16x4")) return {16, 4, 4096};
  if (exp_flag("tile8x4")) return {8, 4, 4096};
  return {16, 0, 4096};
}

// Pixels per invocation per axis for `grid`: the larger tiles (fewer box texels and corner
// computations per pixel; H100: 1.34x against 1.42x linear for 32-pixel tiles, oblique 3-D
// slice at 8x) where their box, estimated from the grid steps with room to spare, fits the
// budget (magnification above about 7 for an oblique 3-D slice), else 2.
int tile_rep(const TileShape& shape, const GridMapping& grid, std::size_t rank) {
  if (shape.rep > 0) return shape.rep;
  const double pixels = shape.group_side * 4 - 1;
  double volume = 1;
  for (std::size_t d = 0; d < rank; ++d)
    volume *= pixels * (std::fabs(grid.step_row[d]) + std::fabs(grid.step_col[d])) + 5;
  return volume <= 0.75 * shape.budget ? 4 : 2;
}

// Float to IEEE half, round to nearest, ties to even (subnormals, overflow to infinity).
std::uint16_t float_to_half(float f) {
  std::uint32_t x = 0;
  std::memcpy(&x, &f, sizeof x);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u)
    return static_cast<std::uint16_t>(sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // >= 65520: inf
  if (abs < 0x38800000u) {  // below 2^-14: half subnormal, unit 2^-24
    float v = 0;
    std::memcpy(&v, &abs, sizeof v);
    const auto q = static_cast<std::uint32_t>(std::nearbyint(v * 16777216.0f));  // exact scale
    return static_cast<std::uint16_t>(sign | q);
  }
  const std::uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
  return static_cast<std::uint16_t>(sign | ((rounded - (112u << 23)) >> 13));
}

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = (h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  const std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {
    const float v = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -v : v;
  }
  std::uint32_t bits = 0;
  if (exponent == 31) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  }
  float f = 0;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

std::uint16_t float_to_unorm16(float v) {
  return static_cast<std::uint16_t>(std::lround(static_cast<double>(v) * 65535.0));
}

GLenum pixel_format(std::size_t channels) {
  static const GLenum kFormats[4] = {GL_RED, GL_RG, GL_RGB, GL_RGBA};
  return kFormats[channels - 1];
}

const char* boundary_define(Boundary b) {
  switch (b) {
    case Boundary::Reflect:
      return "SV_BOUNDARY_REFLECT";
    case Boundary::Mirror:
      return "SV_BOUNDARY_MIRROR";
    case Boundary::Periodic:
      return "SV_BOUNDARY_PERIODIC";
    case Boundary::Wrap:
    case Boundary::Nearest:
    case Boundary::Constant:
    case Boundary::GridConstant:
      throw Error(std::string("the GL evaluator has no boundary mode '") + boundary_name(b) +
                  "' (reflect, mirror and periodic only; the others are CPU only)");
  }
  return "SV_BOUNDARY_REFLECT";
}

GLenum boundary_wrap(Boundary b) {
  switch (b) {
    case Boundary::Reflect:
      return GL_MIRRORED_REPEAT;
    case Boundary::Mirror:  // indices are extended in the shader; the hardware never wraps
      return GL_CLAMP_TO_EDGE;
    case Boundary::Periodic:
      return GL_REPEAT;
    case Boundary::Wrap:
    case Boundary::Nearest:
    case Boundary::Constant:
    case Boundary::GridConstant:
      throw Error(std::string("the GL evaluator has no boundary mode '") + boundary_name(b) + "'");
  }
  return GL_MIRRORED_REPEAT;
}

const char* fetch_define(Fetch f) {
  switch (f) {
    case Fetch::Nearest:
      return "SV_FETCH_NEAREST";
    case Fetch::Linear:
      return "SV_FETCH_LINEAR";
    case Fetch::CubicUnfiltered:
    case Fetch::CubicOtf:
      return "SV_FETCH_CUBIC";
    case Fetch::CubicLut:
      return "SV_FETCH_CUBIC_LUT";
    case Fetch::CubicPrecise:
      return "SV_FETCH_CUBIC_PRECISE";
    case Fetch::Grbf:
      return "SV_FETCH_GRBF";
  }
  return "SV_FETCH_CUBIC";
}

// Saves what the evaluator's passes change beyond ScopedState (texture and sampler bindings of
// units 0 and 1, storage buffer binding 0, pixel pack state) and restores it at scope exit.
class ScopedEvaluatorState {
 public:
  ScopedEvaluatorState() {
    glGetIntegerv(GL_ACTIVE_TEXTURE, &active_);
    for (int u = 0; u < 2; ++u) {
      glActiveTexture(GL_TEXTURE0 + static_cast<GLenum>(u));
      glGetIntegerv(GL_TEXTURE_BINDING_1D, &tex1d_[u]);
      glGetIntegerv(GL_TEXTURE_BINDING_2D, &tex2d_[u]);
      glGetIntegerv(GL_TEXTURE_BINDING_3D, &tex3d_[u]);
      glGetIntegerv(GL_SAMPLER_BINDING, &sampler_[u]);
    }
    glActiveTexture(GL_TEXTURE0 + kLayersUnit);
    glGetIntegerv(GL_TEXTURE_BINDING_2D_ARRAY, &layers_tex_);
    glGetIntegerv(GL_SAMPLER_BINDING, &layers_sampler_);
    glActiveTexture(static_cast<GLenum>(active_));
    glGetIntegeri_v(GL_IMAGE_BINDING_NAME, kImageUnit, &image_);
    glGetIntegeri_v(GL_IMAGE_BINDING_LEVEL, kImageUnit, &image_level_);
    glGetIntegeri_v(GL_IMAGE_BINDING_LAYERED, kImageUnit, &image_layered_);
    glGetIntegeri_v(GL_IMAGE_BINDING_LAYER, kImageUnit, &image_layer_);
    glGetIntegeri_v(GL_IMAGE_BINDING_ACCESS, kImageUnit, &image_access_);
    glGetIntegeri_v(GL_IMAGE_BINDING_FORMAT, kImageUnit, &image_format_);
    glGetIntegerv(GL_SHADER_STORAGE_BUFFER_BINDING, &ssbo_generic_);
    glGetIntegeri_v(GL_SHADER_STORAGE_BUFFER_BINDING, kPositionBinding, &ssbo_);
    glGetInteger64i_v(GL_SHADER_STORAGE_BUFFER_START, kPositionBinding, &ssbo_start_);
    glGetInteger64i_v(GL_SHADER_STORAGE_BUFFER_SIZE, kPositionBinding, &ssbo_size_);
    glGetIntegerv(GL_PACK_ALIGNMENT, &pack_alignment_);
    glGetIntegerv(GL_PACK_ROW_LENGTH, &pack_row_length_);
    glGetIntegerv(GL_PACK_SKIP_ROWS, &pack_skip_rows_);
    glGetIntegerv(GL_PACK_SKIP_PIXELS, &pack_skip_pixels_);
    glGetIntegerv(GL_PIXEL_PACK_BUFFER_BINDING, &pack_buffer_);
    glPixelStorei(GL_PACK_ALIGNMENT, 4);
    glPixelStorei(GL_PACK_ROW_LENGTH, 0);
    glPixelStorei(GL_PACK_SKIP_ROWS, 0);
    glPixelStorei(GL_PACK_SKIP_PIXELS, 0);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
    check_error("saving the evaluator's GL state", __FILE__, __LINE__);
  }
  ~ScopedEvaluatorState() {
    for (int u = 0; u < 2; ++u) {
      glActiveTexture(GL_TEXTURE0 + static_cast<GLenum>(u));
      glBindTexture(GL_TEXTURE_1D, static_cast<GLuint>(tex1d_[u]));
      glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(tex2d_[u]));
      glBindTexture(GL_TEXTURE_3D, static_cast<GLuint>(tex3d_[u]));
      glBindSampler(static_cast<GLuint>(u), static_cast<GLuint>(sampler_[u]));
    }
    glActiveTexture(GL_TEXTURE0 + kLayersUnit);
    glBindTexture(GL_TEXTURE_2D_ARRAY, static_cast<GLuint>(layers_tex_));
    glBindSampler(kLayersUnit, static_cast<GLuint>(layers_sampler_));
    glActiveTexture(static_cast<GLenum>(active_));
    glBindImageTexture(kImageUnit, static_cast<GLuint>(image_), image_level_,
                       image_layered_ ? GL_TRUE : GL_FALSE, image_layer_,
                       static_cast<GLenum>(image_access_), static_cast<GLenum>(image_format_));
    if (ssbo_size_ > 0) {
      glBindBufferRange(GL_SHADER_STORAGE_BUFFER, kPositionBinding, static_cast<GLuint>(ssbo_),
                        static_cast<GLintptr>(ssbo_start_), static_cast<GLsizeiptr>(ssbo_size_));
    } else {
      glBindBufferBase(GL_SHADER_STORAGE_BUFFER, kPositionBinding, static_cast<GLuint>(ssbo_));
    }
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, static_cast<GLuint>(ssbo_generic_));
    glPixelStorei(GL_PACK_ALIGNMENT, pack_alignment_);
    glPixelStorei(GL_PACK_ROW_LENGTH, pack_row_length_);
    glPixelStorei(GL_PACK_SKIP_ROWS, pack_skip_rows_);
    glPixelStorei(GL_PACK_SKIP_PIXELS, pack_skip_pixels_);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, static_cast<GLuint>(pack_buffer_));
    check_error_nothrow("restoring the evaluator's GL state", __FILE__, __LINE__);
  }
  ScopedEvaluatorState(const ScopedEvaluatorState&) = delete;
  ScopedEvaluatorState& operator=(const ScopedEvaluatorState&) = delete;

 private:
  GLint active_ = GL_TEXTURE0;
  GLint tex1d_[2] = {}, tex2d_[2] = {}, tex3d_[2] = {}, sampler_[2] = {};
  GLint layers_tex_ = 0, layers_sampler_ = 0;
  GLint image_ = 0, image_level_ = 0, image_layered_ = 0, image_layer_ = 0;
  GLint image_access_ = GL_READ_ONLY, image_format_ = GL_R8;
  GLint ssbo_generic_ = 0, ssbo_ = 0;
  GLint64 ssbo_start_ = 0, ssbo_size_ = 0;
  GLint pack_alignment_ = 4, pack_row_length_ = 0, pack_skip_rows_ = 0, pack_skip_pixels_ = 0;
  GLint pack_buffer_ = 0;
};

// Diagnostic switches (SPLINEVIEW_GL_EXP, comma-separated; splinebench speed --exp sets it),
// read when an evaluator is built: "fragment" runs the pass as a fragment shader into the
// framebuffer (the evaluator's pass before it became a compute shader), "nogather" makes the
// precise fetch use texelFetch for every tap, "notile" turns off the shared-memory tiled
// precise grid pass, "tile2d" turns it on for 2-D textures too (off by default: on the H100 the
// 2-D gather fetch, 4 textureGather per value, was as fast or faster).
bool exp_flag(const char* name) {
  const char* e = std::getenv("SPLINEVIEW_GL_EXP");
  if (!e) return false;
  const std::string all = "," + std::string(e) + ",";
  return all.find("," + std::string(name) + ",") != std::string::npos;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

// ---- names ----

const char* fetch_name(Fetch f) {
  switch (f) {
    case Fetch::Nearest:
      return "nearest";
    case Fetch::Linear:
      return "linear";
    case Fetch::CubicUnfiltered:
      return "cubic-unfiltered";
    case Fetch::CubicLut:
      return "lut";
    case Fetch::CubicOtf:
      return "otf";
    case Fetch::CubicPrecise:
      return "precise";
    case Fetch::Grbf:
      return "grbf";
  }
  return "?";
}

Fetch parse_fetch(const std::string& s) {
  std::string valid;
  for (Fetch f : {Fetch::Nearest, Fetch::Linear, Fetch::CubicUnfiltered, Fetch::CubicLut,
                  Fetch::CubicOtf, Fetch::CubicPrecise, Fetch::Grbf}) {
    if (s == fetch_name(f)) return f;
    valid += (valid.empty() ? "" : ", ") + std::string(fetch_name(f));
  }
  throw Error("unknown GL fetch \"" + s + "\" (valid: " + valid + ")");
}

bool fetch_prefiltered(Fetch f) {
  return f == Fetch::CubicLut || f == Fetch::CubicOtf || f == Fetch::CubicPrecise;
}

bool fetch_grbf(Fetch f) {
  return f == Fetch::Grbf;
}

std::array<std::array<double, 3>, 2> grbf_uniforms(const GrbfFetchOptions& g, std::size_t rank) {
  const auto per_axis = [&](const std::vector<double>& v, const char* what) {
    if (v.size() != 1 && v.size() != rank)
      throw Error(std::string("the GRBF fetch takes one ") + what + " or one per axis (" +
                  std::to_string(rank) + "), got " + std::to_string(v.size()) + " values");
    std::array<double, 3> t{};
    for (std::size_t d = 0; d < rank; ++d) t[rank - 1 - d] = v.size() == 1 ? v[0] : v[d];
    return t;
  };
  std::array<double, 3> sigma = per_axis(g.sigma, "sigma");
  std::array<double, 3> radius = per_axis(g.radius, "radius");
  for (std::size_t d = 0; d < rank; ++d) {
    if (!std::isfinite(sigma[d]) || sigma[d] <= 0)
      throw Error("the GRBF fetch's sigma must be finite and positive, got " +
                  std::to_string(sigma[d]));
    if (!std::isfinite(radius[d]) || radius[d] < 0)
      throw Error("the GRBF fetch's support radius must be finite and at least 0, got " +
                  std::to_string(radius[d]));
    if (std::floor(2 * radius[d]) + 1 > kGrbfMaxTaps)
      throw Error("the GRBF support radius " + std::to_string(radius[d]) +
                  " needs more than the GLSL fetch's " + std::to_string(kGrbfMaxTaps) +
                  " samples per axis (a smaller sigma, or weights that grow less, shrink it)");
  }
  if (rank == 2) {
    sigma[2] = 1.0;
    radius[2] = 0.0;
  }
  return {sigma, radius};
}

void set_grbf_uniforms(GLuint program, const GrbfFetchOptions& g, std::size_t rank) {
  const auto u = grbf_uniforms(g, rank);
  SV_GL_CHECK(glProgramUniform3f(program, kGrbfSigma, static_cast<float>(u[0][0]),
                                 static_cast<float>(u[0][1]), static_cast<float>(u[0][2])));
  SV_GL_CHECK(glProgramUniform3f(program, kGrbfRadius, static_cast<float>(u[1][0]),
                                 static_cast<float>(u[1][1]), static_cast<float>(u[1][2])));
  SV_GL_CHECK(glProgramUniform1f(program, kGrbfOpaque, g.opaque ? 1.0f : 0.0f));
}

const char* format_name(TexFormat f) {
  switch (f) {
    case TexFormat::R32F:
      return "r32f";
    case TexFormat::R16F:
      return "r16f";
    case TexFormat::R16:
      return "r16";
  }
  return "?";
}

TexFormat parse_format(const std::string& s) {
  for (TexFormat f : {TexFormat::R32F, TexFormat::R16F, TexFormat::R16})
    if (s == format_name(f)) return f;
  throw Error("unknown texture format \"" + s + "\" (valid: r32f, r16f, r16)");
}

const char* lut_mapping_name(LutMapping m) {
  return m == LutMapping::Repeat ? "repeat" : "endpoints";
}

float texel_value(float v, TexFormat format) {
  switch (format) {
    case TexFormat::R32F:
      return v;
    case TexFormat::R16F:
      return half_to_float(float_to_half(v));
    case TexFormat::R16:
      return static_cast<float>(float_to_unorm16(v) / 65535.0);
  }
  return v;
}

std::vector<float> lut_table(const LutOptions& opt) {
  if (opt.texels < 2)
    throw Error("the LUT needs at least 2 texels, got " + std::to_string(opt.texels));
  const int n = opt.texels;
  std::vector<float> table(static_cast<std::size_t>(n) * 3);
  for (int k = 0; k < n; ++k) {
    const double a = opt.mapping == LutMapping::Repeat ? (k + 0.5) / n : double(k) / (n - 1);
    const double b = 1.0 - a;
    const double w0 = b * b * b / 6.0;
    const double w1 = 2.0 / 3.0 - 0.5 * a * a * (2.0 - a);
    const double w2 = 2.0 / 3.0 - 0.5 * b * b * (2.0 - b);
    const double w3 = a * a * a / 6.0;
    const double g0 = w0 + w1, g1 = w2 + w3;
    // Endpoints: offsets from i = floor(p); repeat (published): offsets from p itself.
    const bool published = opt.mapping == LutMapping::Repeat;
    const double values[3] = {published ? 1.0 + a - w1 / g0 : w1 / g0 - 1.0,
                              published ? 1.0 - a + w3 / g1 : w3 / g1 + 1.0, g0};
    for (int c = 0; c < 3; ++c) {
      const auto f = static_cast<float>(values[c]);
      table[static_cast<std::size_t>(k) * 3 + c] =
          opt.half_float ? half_to_float(float_to_half(f)) : f;
    }
  }
  return table;
}

// ---- SplineTexture ----

SplineTexture::SplineTexture(const ArrayF& data, TexFormat format)
    : dims_(data.dims()), channels_(data.channels()), format_(format) {
  const std::size_t rank = data.rank();
  if (rank != 2 && rank != 3)
    throw Error("a spline texture must be 2-D or 3-D, got an array of shape " +
                describe_shape(data.dims(), data.channels()));
  const std::size_t points = data.points();
  const std::size_t texel_channels = channels_ == 1 ? 1 : 4;
  if (format == TexFormat::R16) {
    for (std::size_t i = 0; i < data.size(); ++i)
      if (!(data[i] >= 0.0f && data[i] <= 1.0f))
        throw Error("an R16 (unsigned normalised) texture holds values in [0, 1] only; element " +
                    std::to_string(i) + " is " + std::to_string(data[i]) +
                    " (coefficients need r32f or r16f)");
  }
  for (std::size_t d : dims_)
    if (d > static_cast<std::size_t>(1) << 30)
      throw Error("array of shape " + describe_shape(dims_, channels_) +
                  " is too large for a texture");

  GLenum internal = 0, type = 0;
  switch (format) {
    case TexFormat::R32F:
      internal = texel_channels == 1 ? GL_R32F : GL_RGBA32F;
      type = GL_FLOAT;
      break;
    case TexFormat::R16F:
      internal = texel_channels == 1 ? GL_R16F : GL_RGBA16F;
      type = GL_HALF_FLOAT;
      break;
    case TexFormat::R16:
      internal = texel_channels == 1 ? GL_R16 : GL_RGBA16;
      type = GL_UNSIGNED_SHORT;
      break;
  }
  const int width = static_cast<int>(dims_[rank - 1]);
  const int height = static_cast<int>(dims_[rank - 2]);
  texture_ = rank == 2 ? Texture::create_2d(internal, width, height)
                       : Texture::create_3d(internal, width, height, static_cast<int>(dims_[0]));
  texture_.set_filter(GL_LINEAR, GL_LINEAR);
  texture_.set_wrap(GL_MIRRORED_REPEAT);

  // Texel data in the upload type, channels padded to RGBA with 0. `convert` writes every
  // texel, so the buffers are left uninitialised (new T[n], not a zero-filled vector).
  auto convert = [&](auto to_texel, auto* out) {
    for (std::size_t p = 0; p < points; ++p)
      for (std::size_t c = 0; c < texel_channels; ++c)
        out[p * texel_channels + c] =
            c < channels_ ? to_texel(data[p * channels_ + c]) : to_texel(0.0f);
  };
  const GLenum pixels = texel_channels == 1 ? GL_RED : GL_RGBA;
  if (format == TexFormat::R32F) {
    if (texel_channels == channels_) {
      texture_.upload(pixels, type, data.data());
    } else {
      const std::unique_ptr<float[]> texels(new float[points * texel_channels]);
      convert([](float v) { return v; }, texels.get());
      texture_.upload(pixels, type, texels.get());
    }
  } else {
    const std::unique_ptr<std::uint16_t[]> texels(new std::uint16_t[points * texel_channels]);
    if (format == TexFormat::R16F) {
      convert(float_to_half, texels.get());
    } else {
      convert(float_to_unorm16, texels.get());
    }
    texture_.upload(pixels, type, texels.get());
  }
}

// ---- Evaluator ----

struct Evaluator::Impl {
  EvalOptions opt;
  std::size_t rank = 2;
  bool compute = !exp_flag("fragment");  // the pass as a compute shader (default)
  // The precise fetch gathers 2x2 texel blocks (SV_PRECISE_GATHER) from single-channel textures
  // with a hardware wrap mode (reflect, periodic); otherwise it uses texelFetch for every tap.
  bool gather = false;
  // [grid][gathering]: programs for listed positions / the grid mapping, without or with
  // SV_PRECISE_GATHER; compiled on first use (the constructor compiles the list program that a
  // single-channel texture needs, so compile errors surface there).
  Program programs[2][2];
  // The precise grid pass staging each tile's coefficients in shared memory (SV_TILE): compute
  // pass, single-channel 3-D textures (2-D with "tile2d"); [gathering] for the fallback of large
  // boxes, [1, 2 or 4 pixels per invocation per axis].
  bool tile = false;
  TileShape tile_shape_;
  Program tile_programs[2][3];
  ShaderDefines defines;  // shared by all programs; each adds its own
  Sampler sampler;
  Texture lut;
  VertexArray vao;
  Buffer positions;
  Texture target;
  Framebuffer framebuffer;
  Query query;

  bool gathers_for(const SplineTexture& tex) const { return gather && tex.channels() == 1; }
  bool tiles_for(const SplineTexture& tex) const { return tile && tex.channels() == 1; }

  Program& tile_program(bool gathering, int rep) {
    Program& p = tile_programs[gathering ? 1 : 0][rep == 4 ? 2 : rep == 2 ? 1 : 0];
    if (!p) {
      ShaderDefines d = defines;
      d.push_back({"SV_GRID", ""});
      if (gathering) d.push_back({"SV_PRECISE_GATHER", ""});
      d.push_back({"SV_COMPUTE", ""});
      d.push_back({"SV_TILE", ""});
      d.push_back({"SV_TILE_SIDE", std::to_string(tile_shape_.group_side)});
      d.push_back({"SV_TILE_REP", std::to_string(rep)});
      d.push_back({"SV_TILE_BUDGET", std::to_string(tile_shape_.budget)});
      p = Program(kComputeStages, d);
    }
    return p;
  }

  Program& program(bool grid, bool gathering) {
    Program& p = programs[grid ? 1 : 0][gathering ? 1 : 0];
    if (!p) {
      ShaderDefines d = defines;
      if (grid) d.push_back({"SV_GRID", ""});
      if (gathering) d.push_back({"SV_PRECISE_GATHER", ""});
      if (compute) d.push_back({"SV_COMPUTE", ""});
      p = Program(compute ? kComputeStages : kFragmentStages, d);
    }
    return p;
  }

  // Makes the render target at least w x h (it is reused between calls).
  void ensure_target(int w, int h) {
    if (target && target.width() >= w && target.height() >= h) return;
    const int nw = std::max(w, target ? target.width() : 0);
    const int nh = std::max(h, target ? target.height() : 0);
    target = Texture::create_2d(GL_RGBA32F, nw, nh);
    framebuffer = Framebuffer::create();
    framebuffer.attach_color(target);
    framebuffer.check_complete();
  }

  // Binds everything a pass needs (state is saved by the caller).
  void bind_pass(const Program& program, const SplineTexture& tex) {
    disable_fixed_function();
    glUseProgram(program.id());
    if (compute) {
      glBindImageTexture(kImageUnit, target.id(), 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RGBA32F);
    } else {
      glBindVertexArray(vao.id());
      glBindFramebuffer(GL_DRAW_FRAMEBUFFER, framebuffer.id());
    }
    tex.texture().bind(kSplineUnit);
    sampler.bind(kSplineUnit);
    if (opt.fetch == Fetch::Grbf) set_grbf_uniforms(program.id(), opt.grbf, rank);
    if (lut) {
      lut.bind(kLutUnit);
      glBindSampler(kLutUnit, 0);
    }
    if (gathers_for(tex) && tex.rank() == 3) {
      glBindTextureUnit(kLayersUnit, tex.layers());
      sampler.bind(kLayersUnit);
    }
    check_error("binding the evaluator's pass", __FILE__, __LINE__);
  }

  // Runs one pass over (0, 0, w, h), timed when `ms` is given (waits for the result).
  void draw(const Program& program, int w, int h, double* ms, int group = kGroupSide) {
    if (compute) {
      SV_GL_CHECK(glProgramUniform2i(program.id(), kSize, w, h));
    } else {
      glViewport(0, 0, w, h);
    }
    if (ms) SV_GL_CHECK(glBeginQuery(GL_TIME_ELAPSED, query.id()));
    if (compute) {
      SV_GL_CHECK(glDispatchCompute(static_cast<GLuint>((w + group - 1) / group),
                                    static_cast<GLuint>((h + group - 1) / group), 1));
    } else {
      SV_GL_CHECK(glDrawArrays(GL_TRIANGLES, 0, 3));
    }
    if (ms) {
      SV_GL_CHECK(glEndQuery(GL_TIME_ELAPSED));
      GLuint64 ns = 0;
      SV_GL_CHECK(glGetQueryObjectui64v(query.id(), GL_QUERY_RESULT, &ns));
      *ms = static_cast<double>(ns) * 1e-6;
    }
  }

  // Reads w x h values of `channels` components from the target (row 0 = the pass's first row).
  void read(int w, int h, std::size_t channels, std::vector<float>& out) {
    out.resize(static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * channels);
    if (compute) SV_GL_CHECK(glMemoryBarrier(GL_TEXTURE_UPDATE_BARRIER_BIT));
    SV_GL_CHECK(glGetTextureSubImage(target.id(), 0, 0, 0, 0, w, h, 1, pixel_format(channels),
                                     GL_FLOAT, static_cast<GLsizei>(out.size() * sizeof(float)),
                                     out.data()));
  }

  void check_texture(const SplineTexture& tex) const {
    if (tex.rank() != rank)
      throw Error("this GL evaluator was built for " + std::to_string(rank) +
                  "-D textures, got a " + std::to_string(tex.rank()) + "-D one");
  }
};

bool operator==(const Quantity& a, const Quantity& b) {
  return a.kind == b.kind && (a.kind != QuantityKind::Partial || a.order == b.order);
}

std::string quantity_name(const Quantity& q) {
  switch (q.kind) {
    case QuantityKind::Value:
      return "value";
    case QuantityKind::Partial: {
      std::string s = "d";
      for (int d = 0; d < 3; ++d)
        s.append(static_cast<std::size_t>(std::max(q.order[d], 0)), "xyz"[d]);
      return s;
    }
    case QuantityKind::GradientMagnitude:
      return "gradient-magnitude";
    case QuantityKind::Laplacian:
      return "laplacian";
    case QuantityKind::HessianDeterminant:
      return "hessian-det";
  }
  return "value";
}

std::string quantity_label(const Quantity& q) {
  switch (q.kind) {
    case QuantityKind::Value:
      return "value";
    case QuantityKind::Partial: {
      const int total = q.order[0] + q.order[1] + q.order[2];
      std::string s = total == 1 ? "d/" : "d" + std::to_string(total) + "/";
      bool first = true;
      for (int d = 0; d < 3; ++d) {
        if (q.order[d] == 0) continue;
        if (!first) s += " ";
        first = false;
        s += std::string("d") + "xyz"[d];
        if (q.order[d] > 1) s += std::to_string(q.order[d]);
      }
      return s;
    }
    case QuantityKind::GradientMagnitude:
      return "|gradient|";
    case QuantityKind::Laplacian:
      return "Laplacian";
    case QuantityKind::HessianDeterminant:
      return "det Hessian";
  }
  return "value";
}

std::vector<Quantity> quantity_choices(std::size_t rank) {
  std::vector<Quantity> out;
  out.push_back({});
  const int r = static_cast<int>(rank);
  const auto partial = [](std::array<int, 3> o) { return Quantity{QuantityKind::Partial, o}; };
  for (int d = 0; d < r; ++d) {
    std::array<int, 3> o{0, 0, 0};
    o[static_cast<std::size_t>(d)] = 1;
    out.push_back(partial(o));
  }
  out.push_back({QuantityKind::GradientMagnitude, {0, 0, 0}});
  for (int a = 0; a < r; ++a)
    for (int b = a; b < r; ++b) {
      std::array<int, 3> o{0, 0, 0};
      ++o[static_cast<std::size_t>(a)];
      ++o[static_cast<std::size_t>(b)];
      out.push_back(partial(o));
    }
  out.push_back({QuantityKind::Laplacian, {0, 0, 0}});
  out.push_back({QuantityKind::HessianDeterminant, {0, 0, 0}});
  return out;
}

Quantity parse_quantity(const std::string& name, std::size_t rank) {
  const std::string axes = rank == 3 ? "x, y, z" : "x, y";
  const auto bad = [&](const std::string& why) {
    return Error("quantity \"" + name + "\": " + why +
                 " (valid: value, gradient-magnitude, laplacian, hessian-det, or a partial "
                 "derivative d followed by the axes " +
                 axes + ", each at most twice, in that order: dx, dy, dxx, dxy, ...)");
  };
  if (name == "value") return {};
  if (name == "gradient-magnitude" || name == "gradmag") return {QuantityKind::GradientMagnitude};
  if (name == "laplacian") return {QuantityKind::Laplacian};
  if (name == "hessian-det" || name == "hessian-determinant")
    return {QuantityKind::HessianDeterminant};
  if (name.size() < 2 || name[0] != 'd') throw bad("unknown name");
  Quantity q{QuantityKind::Partial, {0, 0, 0}};
  int last = -1;
  for (std::size_t i = 1; i < name.size(); ++i) {
    const char c = name[i];
    const int d = c == 'x' ? 0 : c == 'y' ? 1 : c == 'z' ? 2 : -1;
    if (d < 0) throw bad(std::string("'") + c + "' is not an axis");
    if (d >= static_cast<int>(rank))
      throw bad("a " + std::to_string(rank) + "-D signal has no " + c + " axis");
    if (d < last) throw bad("name the axes in the order x, y, z");
    last = d;
    if (++q.order[static_cast<std::size_t>(d)] > 2)
      throw bad(std::string("order above 2 along ") + c +
                " (the cubic's derivatives of order 3 "
                "are piecewise constant and not offered)");
  }
  return q;
}

int quantity_max_order(const Quantity& q) {
  switch (q.kind) {
    case QuantityKind::Value:
      return 0;
    case QuantityKind::Partial:
      return std::max({q.order[0], q.order[1], q.order[2]});
    case QuantityKind::GradientMagnitude:
      return 1;
    case QuantityKind::Laplacian:
    case QuantityKind::HessianDeterminant:
      return 2;
  }
  return 0;
}

bool quantity_signed(const Quantity& q) {
  return q.kind == QuantityKind::Partial || q.kind == QuantityKind::Laplacian ||
         q.kind == QuantityKind::HessianDeterminant;
}

std::string quantity_problem(Fetch f, const Quantity& q, std::size_t rank) {
  if (q.kind == QuantityKind::Partial) {
    for (std::size_t d = 0; d < 3; ++d) {
      if (q.order[d] < 0 || q.order[d] > 2)
        return "derivative orders are 0..2 per axis, got " + std::to_string(q.order[d]);
      if (d >= rank && q.order[d] != 0)
        return "a " + std::to_string(rank) + "-D signal has no " + "xyz"[d] + " axis";
    }
  }
  const int order = quantity_max_order(q);
  if (order == 0) return {};
  switch (f) {
    case Fetch::Grbf:
      return "grbf shows the value only (no derivatives of the GRBF here)";
    case Fetch::Nearest:
    case Fetch::Linear:
    case Fetch::CubicLut:
      return std::string(fetch_name(f)) + " has no derivatives (use precise or otf)";
    case Fetch::CubicOtf:
    case Fetch::CubicUnfiltered:
      if (order > 1)
        return std::string(fetch_name(f)) +
               " has first derivatives only (order 1 per axis): use precise";
      return {};
    case Fetch::CubicPrecise:
      return {};
  }
  return {};
}

ShaderDefines quantity_defines(const Quantity& q, std::size_t rank) {
  switch (q.kind) {
    case QuantityKind::Value:
      return {};
    case QuantityKind::Partial: {
      std::string v = rank == 3 ? "ivec3(" : "ivec2(";
      for (std::size_t d = 0; d < rank; ++d)
        v += std::to_string(q.order[d]) + (d + 1 < rank ? ", " : ")");
      return {{"SV_DERIVATIVE_ORDER", v}};
    }
    case QuantityKind::GradientMagnitude:
      return {{"SV_QUANTITY_GRADIENT_MAGNITUDE", ""}};
    case QuantityKind::Laplacian:
      return {{"SV_QUANTITY_LAPLACIAN", ""}};
    case QuantityKind::HessianDeterminant:
      return {{"SV_QUANTITY_HESSIAN_DET", ""}};
  }
  return {};
}

GLuint SplineTexture::layers() const {
  if (rank() != 3) return 0;
  if (!layers_) {
    GLuint id = 0;
    SV_GL_CHECK(glCreateTextures(GL_TEXTURE_2D_ARRAY, 1, &id));
    layers_ = detail::Handle<detail::TextureTraits>(id);
    const Texture& t = texture_;
    SV_GL_CHECK(glTextureStorage3D(id, 1, t.internal_format(), t.width(), t.height(), t.depth()));
    SV_GL_CHECK(glCopyImageSubData(t.id(), GL_TEXTURE_3D, 0, 0, 0, 0, id, GL_TEXTURE_2D_ARRAY, 0, 0,
                                   0, 0, t.width(), t.height(), t.depth()));
  }
  return layers_.id();
}

Evaluator::Evaluator(const EvalOptions& opt, std::size_t rank) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.opt = opt;
  m.rank = rank;
  if (rank != 2 && rank != 3)
    throw Error("the GL evaluator handles 2-D and 3-D textures, not " + std::to_string(rank) +
                "-D");
  if (opt.derivative_axis >= static_cast<int>(rank) || opt.derivative_axis < -1)
    throw Error("derivative axis " + std::to_string(opt.derivative_axis) + " does not exist in " +
                std::to_string(rank) + "-D");
  if (opt.derivative_axis >= 0 &&
      !(opt.fetch == Fetch::CubicOtf || opt.fetch == Fetch::CubicPrecise ||
        opt.fetch == Fetch::CubicUnfiltered))
    throw Error(std::string("the GL fetch \"") + fetch_name(opt.fetch) +
                "\" has no derivative (use otf, precise or cubic-unfiltered)");
  if (opt.derivative_axis >= 0 && opt.quantity.kind != QuantityKind::Value)
    throw Error("the GL evaluator takes a derivative axis or a quantity, not both");
  if (const std::string problem = quantity_problem(opt.fetch, opt.quantity, rank); !problem.empty())
    throw Error("the GL evaluator cannot show the quantity " + quantity_name(opt.quantity) + ": " +
                problem);
  for (double s : opt.axis_scale)
    if (!std::isfinite(s) || s <= 0)
      throw Error("the GL evaluator's axis scale must be finite and positive");
  if (opt.fetch == Fetch::Grbf) (void)grbf_uniforms(opt.grbf, rank);  // throws on bad values

  ShaderDefines defines = {{"SV_RANK", std::to_string(rank)},
                           {boundary_define(opt.boundary), ""},
                           {fetch_define(opt.fetch), ""}};
  if (opt.derivative_axis >= 0)  // array axis -> texture component (x = the last array axis)
    defines.push_back(
        {"SV_DERIVATIVE_AXIS", std::to_string(static_cast<int>(rank) - 1 - opt.derivative_axis)});
  for (const auto& d : quantity_defines(opt.quantity, rank)) defines.push_back(d);
  const bool unit_scale = opt.axis_scale[0] == 1.0 && opt.axis_scale[1] == 1.0 &&
                          (rank == 2 || opt.axis_scale[2] == 1.0);
  if (!unit_scale) {
    char v[96];
    if (rank == 3) {
      std::snprintf(v, sizeof v, "vec3(%.9g, %.9g, %.9g)", opt.axis_scale[0], opt.axis_scale[1],
                    opt.axis_scale[2]);
    } else {
      std::snprintf(v, sizeof v, "vec2(%.9g, %.9g)", opt.axis_scale[0], opt.axis_scale[1]);
    }
    defines.push_back({"SV_AXIS_SCALE", v});
  }
  if (opt.fetch == Fetch::CubicLut) {
    const std::vector<float> table = lut_table(opt.lut);
    if (opt.lut.mapping == LutMapping::Repeat) defines.push_back({"SV_LUT_REPEAT", ""});
    m.lut = Texture::create_1d(opt.lut.half_float ? GL_RGB16F : GL_RGB32F, opt.lut.texels);
    m.lut.set_filter(GL_LINEAR, GL_LINEAR);
    m.lut.set_wrap(opt.lut.mapping == LutMapping::Repeat ? GL_REPEAT : GL_CLAMP_TO_EDGE);
    if (opt.lut.half_float) {
      std::vector<std::uint16_t> halves(table.size());
      std::transform(table.begin(), table.end(), halves.begin(), float_to_half);
      m.lut.upload(GL_RGB, GL_HALF_FLOAT, halves.data());
    } else {
      m.lut.upload(GL_RGB, GL_FLOAT, table.data());
    }
  }
  m.defines = defines;
  m.gather =
      opt.fetch == Fetch::CubicPrecise && opt.boundary != Boundary::Mirror && !exp_flag("nogather");
  // The tiled pass blends the value or the compiled partial from shared memory, per sample.
  const bool tile_quantity = unit_scale && (opt.quantity.kind == QuantityKind::Value ||
                                            opt.quantity.kind == QuantityKind::Partial);
  m.tile = tile_quantity && opt.fetch == Fetch::CubicPrecise && m.compute && !exp_flag("notile") &&
           (rank == 3 || exp_flag("tile2d"));
  m.tile_shape_ = tile_shape();
  m.program(false, m.gather);
  m.sampler = Sampler::create();
  m.sampler.set_filter(GL_LINEAR, GL_LINEAR);
  m.sampler.set_wrap(boundary_wrap(opt.boundary));
  m.vao = VertexArray::create();
  m.query = Query::create(GL_TIME_ELAPSED);
}

Evaluator::~Evaluator() = default;
Evaluator::Evaluator(Evaluator&&) noexcept = default;
Evaluator& Evaluator::operator=(Evaluator&&) noexcept = default;

const EvalOptions& Evaluator::options() const {
  return impl_->opt;
}

std::vector<float> Evaluator::evaluate(const SplineTexture& tex, const float* positions,
                                       std::size_t m, double* gpu_ms) {
  Impl& im = *impl_;
  im.check_texture(tex);
  if (gpu_ms) *gpu_ms = 0.0;
  const std::size_t channels = tex.channels();
  std::vector<float> out(m * channels);
  if (m == 0) return out;
  if (!positions) throw Error("evaluate: no positions given");
  const std::size_t rank = im.rank;
  for (std::size_t i = 0; i < m * rank; ++i)
    if (!(std::fabs(positions[i]) < kMaxPosition))
      throw Error("evaluate: position " + std::to_string(i / rank) +
                  " has a non-finite or huge "
                  "coordinate (" +
                  std::to_string(positions[i]) + "; the GL fetches need |x| < 2^22)");

  // Tile: a roughly square target, at most kTileSide x kTileSide positions per pass.
  const std::size_t max_tile = static_cast<std::size_t>(kTileSide) * kTileSide;
  const int width = static_cast<int>(
      std::min<std::size_t>(kTileSide, static_cast<std::size_t>(std::ceil(std::sqrt(double(m))))));
  const std::size_t tile = std::min(m, max_tile);
  const int max_rows = static_cast<int>((tile + width - 1) / static_cast<std::size_t>(width));
  const auto buffer_bytes = static_cast<GLsizeiptr>(tile * rank * sizeof(float));
  if (!im.positions || im.positions.size() < buffer_bytes)
    im.positions = Buffer::create(buffer_bytes, nullptr, GL_DYNAMIC_STORAGE_BIT);

  Program& program = im.program(false, im.gathers_for(tex));
  ScopedState saved;
  ScopedEvaluatorState saved_more;
  im.ensure_target(width, max_rows);
  im.bind_pass(program, tex);
  SV_GL_CHECK(glBindBufferBase(GL_SHADER_STORAGE_BUFFER, kPositionBinding, im.positions.id()));
  program.set(kWidth, width);
  std::vector<float> values;
  for (std::size_t first = 0; first < m; first += tile) {
    const std::size_t count = std::min(tile, m - first);
    const int rows = static_cast<int>((count + width - 1) / static_cast<std::size_t>(width));
    SV_GL_CHECK(glNamedBufferSubData(im.positions.id(), 0,
                                     static_cast<GLsizeiptr>(count * rank * sizeof(float)),
                                     positions + first * rank));
    program.set(kCount, static_cast<int>(count));
    double ms = 0.0;
    im.draw(program, width, rows, gpu_ms ? &ms : nullptr);
    if (gpu_ms) *gpu_ms += ms;
    im.read(width, rows, channels, values);
    std::copy_n(values.begin(), count * channels,
                out.begin() + static_cast<std::ptrdiff_t>(first * channels));
  }
  return out;
}

ArrayF Evaluator::render_grid(const SplineTexture& tex, const GridMapping& grid, double* gpu_ms,
                              int repeats) {
  Impl& im = *impl_;
  im.check_texture(tex);
  if (grid.rows == 0 || grid.cols == 0)
    throw Error("render_grid: the grid is empty (" + std::to_string(grid.rows) + " x " +
                std::to_string(grid.cols) + ")");
  if (grid.rows > (std::size_t{1} << 30) || grid.cols > (std::size_t{1} << 30))
    throw Error("render_grid: the grid is too large");
  if (repeats < 1) throw Error("render_grid: repeats must be at least 1");
  if (!gpu_ms) repeats = 1;
  const std::size_t channels = tex.channels();
  ArrayF out({grid.rows, grid.cols}, channels);

  const bool tiled = im.tiles_for(tex);
  const int rep = tiled ? tile_rep(im.tile_shape_, grid, im.rank) : 1;
  const Program& grid_program =
      tiled ? im.tile_program(im.gathers_for(tex), rep) : im.program(true, im.gathers_for(tex));
  const int group = tiled ? im.tile_shape_.group_side * rep : kGroupSide;
  // Positions in array axis order fill the first `rank` components of the dvec3 uniforms.
  const int tile_w = static_cast<int>(std::min<std::size_t>(kTileSide, grid.cols));
  const int tile_h = static_cast<int>(std::min<std::size_t>(kTileSide, grid.rows));
  ScopedState saved;
  ScopedEvaluatorState saved_more;
  im.ensure_target(tile_w, tile_h);
  im.bind_pass(grid_program, tex);
  const GLuint program = grid_program.id();
  SV_GL_CHECK(glProgramUniform3dv(program, kOrigin, 1, grid.origin.data()));
  SV_GL_CHECK(glProgramUniform3dv(program, kStepRow, 1, grid.step_row.data()));
  SV_GL_CHECK(glProgramUniform3dv(program, kStepCol, 1, grid.step_col.data()));

  std::vector<double> times(static_cast<std::size_t>(repeats), 0.0);
  std::vector<float> values;
  for (std::size_t row0 = 0; row0 < grid.rows; row0 += static_cast<std::size_t>(tile_h)) {
    for (std::size_t col0 = 0; col0 < grid.cols; col0 += static_cast<std::size_t>(tile_w)) {
      const int w = static_cast<int>(std::min<std::size_t>(tile_w, grid.cols - col0));
      const int h = static_cast<int>(std::min<std::size_t>(tile_h, grid.rows - row0));
      SV_GL_CHECK(
          glProgramUniform2i(program, kFirst, static_cast<GLint>(col0), static_cast<GLint>(row0)));
      for (int r = 0; r < repeats; ++r) {
        double ms = 0.0;
        im.draw(grid_program, w, h, gpu_ms ? &ms : nullptr, group);
        times[static_cast<std::size_t>(r)] += ms;
      }
      im.read(w, h, channels, values);
      for (int y = 0; y < h; ++y)
        std::copy_n(
            values.begin() +
                static_cast<std::ptrdiff_t>(y) * w * static_cast<std::ptrdiff_t>(channels),
            static_cast<std::size_t>(w) * channels,
            out.data() + ((row0 + static_cast<std::size_t>(y)) * grid.cols + col0) * channels);
    }
  }
  if (gpu_ms) *gpu_ms = median(times);
  return out;
}

}  // namespace sv::gl
