// Tests of the CUDA-GL interop object (splineview/gl/cuda_interop.h): coefficients written into
// 2-D and 3-D textures of every supported format, read back through GL and compared with the CPU
// prefilter: exactly on the CPU path (which runs everywhere, forced with allow_cuda = false), and
// against the double-precision prefilter within a few float32 ulp on the CUDA path (which skips
// with the reason where there is no CUDA device). Every check first fills the texture with NaN,
// so stale content cannot pass.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "gl_test_util.h"
#include "splineview/cuda_memory.h"
#include "splineview/error.h"
#include "splineview/gl/cuda_interop.h"
#include "splineview/gl/evaluator.h"
#include "splineview/gl/gl.h"
#include "splineview/prefilter.h"
#include "splineview/smoothing.h"

namespace {

using sv::gl::TextureInterop;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
// float32 ulp at 1: the coefficient error unit (2^-24 max|c| is half an ulp of the largest).
constexpr double kUlp = 1.0 / 16777216.0;

// Skips (with the reason) where CUDA cannot run: CI, builds without the toolkit.
#define REQUIRE_CUDA()                                                          \
  do {                                                                          \
    std::string why_not;                                                        \
    if (!sv::cuda::available(&why_not)) GTEST_SKIP() << "no CUDA: " << why_not; \
  } while (0)

const char* format_label(GLenum f) {
  return f == GL_R32F ? "R32F" : f == GL_RGBA32F ? "RGBA32F" : f == GL_R16F ? "R16F" : "?";
}

// A texture for samples of shape `dims` (array order); 1-D data goes into a 2-D texture of
// height 1.
sv::gl::Texture make_texture(const std::vector<std::size_t>& dims, GLenum format) {
  const auto i = [](std::size_t v) { return static_cast<int>(v); };
  if (dims.size() == 1) return sv::gl::Texture::create_2d(format, i(dims[0]), 1);
  if (dims.size() == 2) return sv::gl::Texture::create_2d(format, i(dims[1]), i(dims[0]));
  return sv::gl::Texture::create_3d(format, i(dims[2]), i(dims[1]), i(dims[0]));
}

void poison(const sv::gl::Texture& t) {
  const float nan4[4] = {kNaN, kNaN, kNaN, kNaN};
  SV_GL_CHECK(glClearTexImage(t.id(), 0, GL_RGBA, GL_FLOAT, nan4));
}

std::size_t texel_channels(GLenum format) {
  return format == GL_RGBA32F ? 4 : 1;
}

// Level 0 as floats (1 or 4 per texel), through GL: this also fails if the texture were still
// mapped for CUDA.
std::vector<float> read_back(const sv::gl::Texture& t) {
  const std::size_t n = static_cast<std::size_t>(t.width()) * static_cast<std::size_t>(t.height()) *
                        static_cast<std::size_t>(t.depth()) * texel_channels(t.internal_format());
  std::vector<float> out(n, kNaN);
  SV_GL_CHECK(glPixelStorei(GL_PACK_ALIGNMENT, 4));
  SV_GL_CHECK(glGetTextureImage(t.id(), 0, t.internal_format() == GL_RGBA32F ? GL_RGBA : GL_RED,
                                GL_FLOAT, static_cast<GLsizei>(n * sizeof(float)), out.data()));
  return out;
}

// What the texture must hold on the CPU path: the float prefilter, channels padded as GL pads an
// RGB/RG/R upload into RGBA (0, alpha 1), R16F rounded to the nearest half.
std::vector<float> expected_texels(const sv::ArrayF& coefficients, GLenum format) {
  const std::size_t tc = texel_channels(format), c = coefficients.channels();
  std::vector<float> out(coefficients.points() * tc);
  for (std::size_t p = 0; p < coefficients.points(); ++p)
    for (std::size_t k = 0; k < tc; ++k) {
      float v = k < c ? coefficients[p * c + k] : (k == 3 ? 1.0f : 0.0f);
      if (format == GL_R16F) v = sv::gl::texel_value(v, sv::gl::TexFormat::R16F);
      out[p * tc + k] = v;
    }
  return out;
}

// Number of texels differing from `want` (NaN never equals), and the first one described.
std::size_t count_mismatches(const std::vector<float>& got, const std::vector<float>& want,
                             std::string* first) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i)
    if (!(got[i] == want[i]) && bad++ == 0 && first)
      *first = "value " + std::to_string(i) + ": got " + std::to_string(got[i]) + ", want " +
               std::to_string(want[i]);
  return bad + (got.size() > want.size() ? got.size() - want.size() : want.size() - got.size());
}

// Half-precision spacing at |v| (subnormal spacing below 2^-14).
double half_spacing(double v) {
  const int e =
      std::max(static_cast<int>(std::floor(std::log2(std::max(std::fabs(v), 1e-30)))), -14);
  return std::ldexp(1.0, e - 10);
}

struct Case {
  std::vector<std::size_t> dims;
  GLenum format;
  std::size_t channels;
};

std::string case_name(const Case& c) {
  std::string s = std::to_string(c.dims.size()) + "D_";
  for (std::size_t i = 0; i < c.dims.size(); ++i) s += (i ? "x" : "") + std::to_string(c.dims[i]);
  return s + "_" + format_label(c.format) + "_c" + std::to_string(c.channels);
}

// gtest prints parameters in test listings (and ctest names); without this, a byte dump.
void PrintTo(const Case& c, std::ostream* os) {
  *os << case_name(c);
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const std::vector<std::size_t>& dims :
       std::vector<std::vector<std::size_t>>{{37, 53}, {9, 13, 17}}) {
    cases.push_back({dims, GL_R32F, 1});
    for (std::size_t c : {1, 3, 4}) cases.push_back({dims, GL_RGBA32F, c});
    cases.push_back({dims, GL_R16F, 1});
  }
  // One row into a 2-D texture of height 1, a 2-channel RGBA, and lines long enough for the
  // CUDA prefilter to split them into chunks.
  cases.push_back({{61}, GL_R32F, 1});
  cases.push_back({{61}, GL_RGBA32F, 2});
  cases.push_back({{67, 1031}, GL_R32F, 1});
  cases.push_back({{1031, 67}, GL_RGBA32F, 3});
  return cases;
}

struct Notices {
  std::vector<std::string> lines;
  sv::gl::InteropOptions options(bool allow_cuda = true) {
    sv::gl::InteropOptions o;
    o.allow_cuda = allow_cuda;
    o.on_fallback = [this](const std::string& s) { lines.push_back(s); };
    return o;
  }
};

class InteropCase : public ::testing::TestWithParam<Case> {};

// ---- the CPU path (every machine) ----

TEST_P(InteropCase, CpuPathWritesTheFloatPrefilterExactly) {
  SVGL_REQUIRE_CONTEXT();
  const Case& c = GetParam();
  const sv::gl::Texture tex = make_texture(c.dims, c.format);
  Notices notices;
  TextureInterop io(tex, notices.options(false));
  EXPECT_FALSE(io.uses_cuda());
  EXPECT_FALSE(io.fallback_reason().empty());

  for (int round = 0; round < 2; ++round) {
    const std::uint32_t seed = svgltest::fresh_seed();
    SCOPED_TRACE("seed " + std::to_string(seed) + ", round " + std::to_string(round));
    const sv::ArrayF samples = svgltest::random_array(c.dims, c.channels, seed, -1.0f, 1.0f);
    sv::PrefilterOptions opt;
    opt.degree = round == 0 ? 3 : 5;
    opt.boundary = round == 0 ? sv::Boundary::Reflect : sv::Boundary::Mirror;
    poison(tex);
    io.prefilter_into(samples, opt);
    sv::ArrayF coefficients = samples;
    sv::prefilter(coefficients, opt);
    std::string first;
    EXPECT_EQ(count_mismatches(read_back(tex), expected_texels(coefficients, c.format), &first), 0u)
        << first;
  }
  // Once per object, however many operations.
  ASSERT_EQ(notices.lines.size(), 1u);
  EXPECT_NE(notices.lines[0].find("prefiltering on the CPU and uploading"), std::string::npos)
      << notices.lines[0];
  EXPECT_NE(notices.lines[0].find(io.fallback_reason()), std::string::npos) << notices.lines[0];
  EXPECT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));
}

// ---- the CUDA path (skips without a device) ----

TEST_P(InteropCase, CudaPathWritesCoefficientsWithinFloatPrecision) {
  SVGL_REQUIRE_CONTEXT();
  REQUIRE_CUDA();
  const Case& c = GetParam();
  const sv::gl::Texture tex = make_texture(c.dims, c.format);
  Notices notices;
  TextureInterop io(tex, notices.options());
  ASSERT_TRUE(io.uses_cuda()) << io.fallback_reason();
  EXPECT_TRUE(notices.lines.empty());

  const std::uint32_t seed = svgltest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const sv::ArrayF samples = svgltest::random_array(c.dims, c.channels, seed, -1.0f, 1.0f);
  const sv::PrefilterOptions opt;  // cubic, reflect
  poison(tex);
  io.prefilter_into(samples, opt);
  const std::vector<float> got = read_back(tex);

  sv::ArrayD exact = sv::ArrayD::from(samples);
  sv::prefilter(exact, opt);
  sv::ArrayF cpu = samples;
  sv::prefilter(cpu, opt);
  double scale = 0;
  for (double v : exact.vec()) scale = std::max(scale, std::fabs(v));
  // 16 ulp of the largest coefficient: the CPU float prefilter stays within a few (recorded
  // below), and the CUDA one runs the same recursions in float.
  const double bound = 16 * kUlp * scale;
  const std::size_t tc = texel_channels(c.format);
  // R16F: the error beyond half-precision rounding (in float ulps of max|c|) is what the float
  // arithmetic adds; `other_halves` counts texels whose half differs from the CPU path's.
  double worst = 0, worst_cpu = 0, worst_allowed = 0, worst_excess = 0;
  std::size_t bad = 0, bad_padding = 0, other_halves = 0;
  std::string first;
  for (std::size_t p = 0; p < samples.points(); ++p)
    for (std::size_t k = 0; k < tc; ++k) {
      const float g = got[p * tc + k];
      if (k >= c.channels) {  // padding: 0 in colour, 1 in alpha
        if (!(g == (k == 3 ? 1.0f : 0.0f))) ++bad_padding;
        continue;
      }
      const double want = exact[p * c.channels + k];
      const double err = std::fabs(static_cast<double>(g) - want);
      worst_cpu =
          std::max(worst_cpu, std::fabs(static_cast<double>(cpu[p * c.channels + k]) - want));
      const double allowed = c.format == GL_R16F ? half_spacing(want + bound) / 2 + bound : bound;
      if (!(err <= allowed) && bad++ == 0)
        first = "value " + std::to_string(p * c.channels + k) + ": got " + std::to_string(g) +
                ", want " + std::to_string(want) + " (allowed " + std::to_string(allowed) + ")";
      if (!(err <= worst)) worst = err;
      worst_allowed = std::max(worst_allowed, allowed);
      if (c.format == GL_R16F) {
        worst_excess = std::max(worst_excess, err - half_spacing(want) / 2);
        if (g != sv::gl::texel_value(cpu[p], sv::gl::TexFormat::R16F)) ++other_halves;
      }
    }
  EXPECT_EQ(bad, 0u) << first;
  EXPECT_EQ(bad_padding, 0u) << "channels beyond " << c.channels << " must hold 0 (alpha 1)";
  const double range = svgltest::value_range(samples);
  if (c.format == GL_R16F) {
    svgltest::record("interop cuda " + case_name(c) + " (ulp: beyond half rounding)", worst / range,
                     worst_allowed / range, worst_excess / (kUlp * scale));
    std::printf("%s: %zu of %zu halves differ from the CPU path's (ties decided by float error)\n",
                case_name(c).c_str(), other_halves, samples.points());
  } else {
    svgltest::record("interop cuda " + case_name(c), worst / range, bound / range,
                     worst / (kUlp * scale));
  }
  svgltest::record("interop cpu-float " + case_name(c), worst_cpu / range, bound / range,
                   worst_cpu / (kUlp * scale));
  EXPECT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));
}

TEST_P(InteropCase, CudaPathFromDeviceSamplesLeavesThemUnchanged) {
  SVGL_REQUIRE_CONTEXT();
  REQUIRE_CUDA();
  const Case& c = GetParam();
  if (c.format == GL_R16F) GTEST_SKIP() << "covered by the host-samples test";
  const sv::gl::Texture tex = make_texture(c.dims, c.format);
  TextureInterop io(tex);
  ASSERT_TRUE(io.uses_cuda()) << io.fallback_reason();
  const std::uint32_t seed = svgltest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const sv::ArrayF samples = svgltest::random_array(c.dims, c.channels, seed, -1.0f, 1.0f);
  sv::cuda::DeviceBuffer device(samples.size());
  device.upload(samples.data(), samples.size());
  sv::PrefilterOptions opt;
  opt.boundary = sv::Boundary::Periodic;

  // The host-samples path is the reference here: both must write the same texels.
  poison(tex);
  io.prefilter_into(samples, opt);
  const std::vector<float> from_host = read_back(tex);
  poison(tex);
  io.prefilter_into_from_device(device.data(), sv::cuda::Layout::of(samples), opt);
  std::string first;
  EXPECT_EQ(count_mismatches(read_back(tex), from_host, &first), 0u) << first;

  std::vector<float> after(samples.size());
  device.download(after.data(), after.size());
  EXPECT_EQ(count_mismatches(after, samples.vec(), &first), 0u)
      << "device samples changed: " << first;
}

INSTANTIATE_TEST_SUITE_P(Formats, InteropCase, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& param) {
                           return case_name(param.param);
                         });

// Degrees and boundary modes through the CUDA path on one texture, one object for all of them.
TEST(Interop, CudaPathEveryDegreeAndBoundary) {
  SVGL_REQUIRE_CONTEXT();
  REQUIRE_CUDA();
  const std::vector<std::size_t> dims = {45, 71};
  const sv::gl::Texture tex = make_texture(dims, GL_R32F);
  TextureInterop io(tex);
  ASSERT_TRUE(io.uses_cuda()) << io.fallback_reason();
  for (int degree = 0; degree <= 7; ++degree)
    for (sv::Boundary b : {sv::Boundary::Reflect, sv::Boundary::Mirror, sv::Boundary::Periodic}) {
      const std::uint32_t seed = svgltest::fresh_seed();
      SCOPED_TRACE("degree " + std::to_string(degree) + ", " + sv::boundary_name(b) + ", seed " +
                   std::to_string(seed));
      const sv::ArrayF samples = svgltest::random_array(dims, 1, seed, -1.0f, 1.0f);
      sv::PrefilterOptions opt;
      opt.degree = degree;
      opt.boundary = b;
      poison(tex);
      io.prefilter_into(samples, opt);
      const std::vector<float> got = read_back(tex);
      sv::ArrayD exact = sv::ArrayD::from(samples);
      sv::prefilter(exact, opt);
      double scale = 0, worst = 0;
      for (double v : exact.vec()) scale = std::max(scale, std::fabs(v));
      for (std::size_t i = 0; i < got.size(); ++i) {
        const double err = std::fabs(static_cast<double>(got[i]) - exact[i]);
        if (!(err <= worst)) worst = err;
      }
      EXPECT_LE(worst, 16 * kUlp * scale);
      svgltest::record("interop cuda degree " + std::to_string(degree) + " " + sv::boundary_name(b),
                       worst / svgltest::value_range(samples),
                       16 * kUlp * scale / svgltest::value_range(samples), worst / (kUlp * scale));
    }
}

// ---- smoothing splines (smooth_into, issue 17) ----

// The l1 norm of the direct transform's impulse response on one axis (cubic, lambda): how much
// an error of the samples' size can grow per axis (as tests/cuda/test_cuda_bspline.cpp).
double smoothing_l1(double lambda) {
  sv::ArrayD line({4001});
  line.data()[2000] = 1;
  sv::SplineTransformOptions o;
  o.lambda = lambda;
  o.boundary = sv::Boundary::Periodic;
  sv::direct_transform(line, o);
  double s = 0;
  for (std::size_t i = 0; i < line.size(); ++i) s += std::fabs(line.data()[i]);
  return s;
}

// The CPU path writes sv::direct_transform's float coefficients bit for bit; lambda 0 is the
// prefilter.
TEST(Interop, CpuPathSmoothingWritesTheFloatDirectTransform) {
  SVGL_REQUIRE_CONTEXT();
  const std::vector<std::pair<std::vector<std::size_t>, std::size_t>> shapes = {
      {{37, 53}, 1}, {{29, 31}, 3}, {{9, 13, 17}, 1}};
  for (const auto& [dims, channels] : shapes) {
    const GLenum format = channels == 1 ? GL_R32F : GL_RGBA32F;
    const sv::gl::Texture tex = make_texture(dims, format);
    Notices notices;
    TextureInterop io(tex, notices.options(false));
    for (double lambda : {0.0, 0.5, 40.0}) {
      const std::uint32_t seed = svgltest::fresh_seed();
      SCOPED_TRACE(svgltest::shape_name(dims, channels) + " lambda " + std::to_string(lambda) +
                   " seed " + std::to_string(seed));
      const sv::ArrayF samples = svgltest::random_array(dims, channels, seed, -1.0f, 1.0f);
      sv::SplineTransformOptions opt;
      opt.lambda = lambda;
      poison(tex);
      io.smooth_into(samples, opt);
      sv::ArrayF coefficients = samples;
      sv::direct_transform(coefficients, opt);
      std::string first;
      EXPECT_EQ(count_mismatches(read_back(tex), expected_texels(coefficients, format), &first), 0u)
          << first;
      if (lambda > 0) {  // and it smooths: not the interpolating prefilter's coefficients
        sv::ArrayF interpolating = samples;
        sv::prefilter(interpolating, {});
        EXPECT_GT(count_mismatches(read_back(tex), expected_texels(interpolating, format), &first),
                  samples.size() / 2);
      }
    }
  }
  EXPECT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));
}

// The CUDA path (sv::cuda::direct_transform, then the surface write) against the CPU double
// direct transform within the float bound of tests/cuda/test_cuda_bspline.cpp:
// 16 R P eps L^R max|f| (P poles, L the one-axis l1 norm of the filter).
TEST(Interop, CudaPathSmoothingWithinFloatPrecision) {
  SVGL_REQUIRE_CONTEXT();
  REQUIRE_CUDA();
  const std::vector<std::pair<std::vector<std::size_t>, std::size_t>> shapes = {
      {{45, 71}, 1}, {{29, 31}, 3}, {{9, 13, 17}, 1}};
  for (const auto& [dims, channels] : shapes) {
    const GLenum format = channels == 1 ? GL_R32F : GL_RGBA32F;
    const sv::gl::Texture tex = make_texture(dims, format);
    TextureInterop io(tex);
    ASSERT_TRUE(io.uses_cuda()) << io.fallback_reason();
    for (double lambda : {0.002, 0.5, 30.0}) {
      const std::uint32_t seed = svgltest::fresh_seed();
      SCOPED_TRACE(svgltest::shape_name(dims, channels) + " lambda " + std::to_string(lambda) +
                   " seed " + std::to_string(seed));
      const sv::ArrayF samples = svgltest::random_array(dims, channels, seed, -1.0f, 1.0f);
      sv::SplineTransformOptions opt;
      opt.lambda = lambda;
      poison(tex);
      io.smooth_into(samples, opt);
      ASSERT_TRUE(io.last_kernel_ms().has_value());
      const std::vector<float> got = read_back(tex);
      sv::ArrayD exact = sv::ArrayD::from(samples);
      sv::direct_transform(exact, opt);
      const double R = static_cast<double>(dims.size());
      const double P = static_cast<double>(sv::smoothing_poles(3, lambda).z.size());
      const double bound = 16 * R * P * 0.5 * std::ldexp(1.0, -23) *
                           std::pow(smoothing_l1(lambda), R) * svgltest::max_abs(samples);
      const std::size_t tc = texel_channels(format);
      double worst = 0;
      std::size_t bad = 0, bad_padding = 0;
      for (std::size_t p = 0; p < samples.points(); ++p)
        for (std::size_t k = 0; k < tc; ++k) {
          const float g = got[p * tc + k];
          if (k >= channels) {
            if (!(g == (k == 3 ? 1.0f : 0.0f))) ++bad_padding;
            continue;
          }
          const double err = std::fabs(static_cast<double>(g) - exact[p * channels + k]);
          if (!(err <= bound)) ++bad;
          if (!(err <= worst)) worst = err;
        }
      EXPECT_EQ(bad, 0u) << "worst " << worst << " bound " << bound;
      EXPECT_EQ(bad_padding, 0u);
      svgltest::record("interop cuda smoothing " + svgltest::shape_name(dims, channels) +
                           " lambda " + std::to_string(lambda),
                       worst / svgltest::value_range(samples),
                       bound / svgltest::value_range(samples),
                       worst / (kUlp * svgltest::max_abs(sv::ArrayF::from(exact))));
    }
  }
}

// ---- the announcement ----

TEST(Interop, SaysWhichPathOnceThroughTheSink) {
  SVGL_REQUIRE_CONTEXT();
  const sv::gl::Texture tex = make_texture({12, 10}, GL_R32F);
  Notices notices;
  TextureInterop io(tex, notices.options());
  const sv::ArrayF samples = svgltest::random_array({12, 10}, 1, svgltest::fresh_seed());
  io.prefilter_into(samples);
  io.prefilter_into(samples);
  std::string why;
  if (sv::cuda::available(&why)) {
    EXPECT_TRUE(io.uses_cuda()) << io.fallback_reason();
    EXPECT_TRUE(notices.lines.empty());
  } else {
    EXPECT_FALSE(io.uses_cuda());
    EXPECT_EQ(io.fallback_reason(), why);
    ASSERT_EQ(notices.lines.size(), 1u);
    EXPECT_NE(notices.lines[0].find(why), std::string::npos) << notices.lines[0];
    std::printf("fallback notice: %s\n", notices.lines[0].c_str());
  }
}

TEST(Interop, DefaultSinkIsOneLineOnStderr) {
  SVGL_REQUIRE_CONTEXT();
  const sv::gl::Texture tex = make_texture({4, 5, 6}, GL_R16F);
  sv::gl::InteropOptions opt;
  opt.allow_cuda = false;
  ::testing::internal::CaptureStderr();
  {
    TextureInterop io(tex, opt);
    io.prefilter_into(svgltest::random_array({4, 5, 6}, 1, svgltest::fresh_seed()));
    io.prefilter_into(svgltest::random_array({4, 5, 6}, 1, svgltest::fresh_seed()));
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_EQ(err.rfind("splineview: CUDA prefilter unavailable (", 0), 0u) << err;
  EXPECT_EQ(err.find("GL texture"), std::string::npos) << err;  // no internal names (issue 12)
  EXPECT_NE(err.find("CUDA not allowed by the caller"), std::string::npos) << err;
}

// ---- refusals ----

// Runs `f`, expecting sv::Error whose sentence contains `part`.
template <class F>
void expect_error(F f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no sv::Error (expected one mentioning \"" << part << "\")";
  } catch (const sv::Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(Interop, RefusesShapesAndChannelsThatDoNotFit) {
  SVGL_REQUIRE_CONTEXT();
  for (bool allow_cuda : {false, true}) {
    SCOPED_TRACE(allow_cuda ? "default path" : "CPU path");
    Notices quiet;
    const sv::gl::Texture tex2 = make_texture({5, 8}, GL_R32F);  // 8 wide, 5 high
    TextureInterop io2(tex2, quiet.options(allow_cuda));
    expect_error([&] { io2.prefilter_into(sv::ArrayF({8, 5})); }, "do not fit");
    expect_error([&] { io2.prefilter_into(sv::ArrayF({8})); }, "which takes shape 5x8");
    expect_error([&] { io2.prefilter_into(sv::ArrayF({2, 5, 8})); }, "do not fit");
    expect_error([&] { io2.prefilter_into(sv::ArrayF({5, 8}, 2)); }, "exactly 1 channel");

    const sv::gl::Texture tex16 = make_texture({3, 4, 5}, GL_R16F);
    TextureInterop io16(tex16, quiet.options(allow_cuda));
    expect_error([&] { io16.prefilter_into(sv::ArrayF({3, 4, 5}, 3)); }, "exactly 1 channel");
    expect_error([&] { io16.prefilter_into(sv::ArrayF({4, 5})); }, "do not fit");

    const sv::gl::Texture row = make_texture({9}, GL_RGBA32F);
    TextureInterop io_row(row, quiet.options(allow_cuda));
    expect_error([&] { io_row.prefilter_into(sv::ArrayF({10}, 4)); }, "or 9");
    io_row.prefilter_into(sv::ArrayF({9}, 4));  // (W) and (1, W) both fit a height-1 texture
    io_row.prefilter_into(sv::ArrayF({1, 9}, 2));

    sv::cuda::Layout bad{{5, 9}, 1};
    expect_error([&] { io2.prefilter_into_from_device(nullptr, bad, {}); }, "do not fit");
    sv::cuda::Layout five{{5, 8}, 5};
    expect_error([&] { io2.prefilter_into_from_device(nullptr, five, {}); }, "channels");
  }
  EXPECT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));
}

TEST(Interop, RefusesTexturesItCannotWrite) {
  SVGL_REQUIRE_CONTEXT();
  Notices quiet;
  for (GLenum f : {GL_RGBA16F, GL_R16, GL_RG32F, GL_RGBA8}) {
    const sv::gl::Texture t = sv::gl::Texture::create_2d(f, 4, 4);
    expect_error([&] { TextureInterop io(t, quiet.options()); }, "internal format");
  }
  const sv::gl::Texture t1 = sv::gl::Texture::create_1d(GL_R32F, 16);
  expect_error([&] { TextureInterop io(t1, quiet.options()); }, "height 1");
  expect_error([&] { TextureInterop io(GLuint{0}, quiet.options()); }, "not a texture");
  expect_error([&] { TextureInterop io(GLuint{987654}, quiet.options()); }, "not a texture");
  EXPECT_TRUE(quiet.lines.empty()) << "a refused texture must not announce a fallback";
  while (glGetError() != GL_NO_ERROR) {
  }
}

TEST(Interop, DeviceSamplesNeedCuda) {
  SVGL_REQUIRE_CONTEXT();
  const std::vector<std::size_t> dims = {6, 7};
  const sv::gl::Texture tex = make_texture(dims, GL_R32F);
  Notices quiet;
  TextureInterop io(tex, quiet.options(false));
  std::string why;
  if (!sv::cuda::available(&why)) {
    const float* no_device_memory = nullptr;
    expect_error([&] { io.prefilter_into_from_device(no_device_memory, {dims, 1}, {}); }, why);
    return;
  }
  // CUDA present but not used for this texture: the samples come over to the CPU path.
  const sv::ArrayF samples = svgltest::random_array(dims, 1, svgltest::fresh_seed());
  sv::cuda::DeviceBuffer device(samples.size());
  device.upload(samples.data(), samples.size());
  poison(tex);
  io.prefilter_into_from_device(device.data(), sv::cuda::Layout::of(samples), {});
  sv::ArrayF coefficients = samples;
  sv::prefilter(coefficients);
  std::string first;
  EXPECT_EQ(count_mismatches(read_back(tex), expected_texels(coefficients, GL_R32F), &first), 0u)
      << first;
}

// ---- GL may use the texture after every operation ----

// texelFetch of every texel of a 2-D or 3-D R32F texture by a compute shader, into a storage
// buffer: the texture is sampled by GL, not just copied out.
std::vector<float> fetch_with_shader(const sv::gl::Texture& t) {
  const bool is3d = t.target() == GL_TEXTURE_3D;
  const std::string src =
      std::string(
          "#version 450 core\n"
          "layout(local_size_x = 64) in;\n") +
      (is3d ? "layout(binding = 0) uniform sampler3D tex;\n"
            : "layout(binding = 0) uniform sampler2D tex;\n") +
      "layout(std430, binding = 0) buffer Out { float v[]; };\n"
      "uniform ivec3 size;\n"
      "void main() {\n"
      "  int i = int(gl_GlobalInvocationID.x);\n"
      "  if (i >= size.x * size.y * size.z) return;\n"
      "  ivec3 p = ivec3(i % size.x, (i / size.x) % size.y, i / (size.x * "
      "size.y));\n" +
      (is3d ? "  v[i] = texelFetch(tex, p, 0).r;\n" : "  v[i] = texelFetch(tex, p.xy, 0).r;\n") +
      "}\n";
  const char* text = src.c_str();
  const GLuint program = glCreateShaderProgramv(GL_COMPUTE_SHADER, 1, &text);
  GLint linked = 0;
  glGetProgramiv(program, GL_LINK_STATUS, &linked);
  if (!linked) {
    char log[2048] = {};
    glGetProgramInfoLog(program, sizeof log, nullptr, log);
    glDeleteProgram(program);
    throw std::runtime_error(std::string("test shader: ") + log);
  }
  const std::size_t n = static_cast<std::size_t>(t.width()) * static_cast<std::size_t>(t.height()) *
                        static_cast<std::size_t>(t.depth());
  std::vector<float> out(n, kNaN);
  const sv::gl::Buffer buffer = sv::gl::Buffer::create(static_cast<GLsizeiptr>(n * sizeof(float)),
                                                       out.data(), GL_DYNAMIC_STORAGE_BIT);
  SV_GL_CHECK(glProgramUniform3i(program, glGetUniformLocation(program, "size"), t.width(),
                                 t.height(), t.depth()));
  SV_GL_CHECK(glUseProgram(program));
  SV_GL_CHECK(glBindTextureUnit(0, t.id()));
  SV_GL_CHECK(glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, buffer.id()));
  SV_GL_CHECK(glDispatchCompute(static_cast<GLuint>((n + 63) / 64), 1, 1));
  SV_GL_CHECK(glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT));
  SV_GL_CHECK(glGetNamedBufferSubData(buffer.id(), 0, static_cast<GLsizeiptr>(n * sizeof(float)),
                                      out.data()));
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, 0);
  glBindTextureUnit(0, 0);
  glUseProgram(0);
  glDeleteProgram(program);
  return out;
}

TEST(Interop, GlSamplesTheTextureAfterEachOperation) {
  SVGL_REQUIRE_CONTEXT();
  for (const std::vector<std::size_t>& dims :
       std::vector<std::vector<std::size_t>>{{23, 31}, {7, 11, 13}}) {
    SCOPED_TRACE(svgltest::shape_name(dims, 1));
    const sv::gl::Texture tex = make_texture(dims, GL_R32F);
    Notices quiet;
    TextureInterop io(tex, quiet.options());
    for (int round = 0; round < 3; ++round) {
      const sv::ArrayF samples = svgltest::random_array(dims, 1, svgltest::fresh_seed(), -1, 1);
      poison(tex);
      io.prefilter_into(samples);
      // The shader reads what the readback reads, and GL writes to the texture work between
      // operations (a texture left mapped would fail or read stale data on NVIDIA).
      const std::vector<float> fetched = fetch_with_shader(tex);
      const std::vector<float> read = read_back(tex);
      std::string first;
      EXPECT_EQ(count_mismatches(fetched, read, &first), 0u) << first;
      EXPECT_TRUE(std::none_of(read.begin(), read.end(), [](float v) { return std::isnan(v); }));
    }
  }
  EXPECT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));
}

TEST(Interop, AFailingCudaOperationStillUnmaps) {
  SVGL_REQUIRE_CONTEXT();
  const std::vector<std::size_t> dims = {16, 24};
  const sv::gl::Texture tex = make_texture(dims, GL_R32F);
  Notices quiet;
  TextureInterop io(tex, quiet.options());
  if (!io.uses_cuda()) {
    expect_error([&] { io.run_cuda([](const sv::gl::MappedSurface&) {}); },
                 "not registered with CUDA");
    GTEST_SKIP() << "no CUDA path: " << io.fallback_reason();
  }
  bool ran = false;
  EXPECT_THROW(io.run_cuda([&](const sv::gl::MappedSurface& s) {
    ran = true;
    EXPECT_NE(s.surface, 0u);
    EXPECT_EQ(s.extents.dims, dims);
    EXPECT_EQ(s.extents.channels, 1u);
    throw std::runtime_error("operation failed on purpose");
  }),
               std::runtime_error);
  EXPECT_TRUE(ran);
  // GL may use the texture, and the next operation maps it again.
  poison(tex);
  EXPECT_TRUE(std::isnan(read_back(tex)[0]));
  const sv::ArrayF samples = svgltest::random_array(dims, 1, svgltest::fresh_seed());
  io.prefilter_into(samples);
  const std::vector<float> got = read_back(tex);
  EXPECT_TRUE(std::none_of(got.begin(), got.end(), [](float v) { return std::isnan(v); }));
  EXPECT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));
}

}  // namespace
