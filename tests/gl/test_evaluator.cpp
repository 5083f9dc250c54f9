// Tests of the GL evaluator and the GLSL fetch family against the CPU double reference
// (sv::sample on the same float coefficients at the same float positions):
//  - precise, otf and lut prefiltered cubics, 2-D and 3-D, every boundary mode, positions
//    uniform in [-3, N+2] per axis (beyond every edge), shapes with size-1 and size-2 axes,
//    1..4 channels; bounds derived from float arithmetic, the measured filter precision and
//    (lut) the table's own error;
//  - the unfiltered cubic is the spline of the raw samples, not the samples;
//  - first derivatives (otf, precise) along every axis;
//  - nearest and linear against their CPU definitions (degree 0 with floor(x + 0.5), degree 1);
//  - R16F within its 10-bit mantissa, R16 (unorm) at its 16-bit step;
//  - grids, tiling of large inputs, timing, bad input, and the GL state left as found.
// Data and positions are fresh random on every run; failures print the seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "gl_test_util.h"
#include "splineview/error.h"
#include "splineview/gl/gl.h"
#include "splineview/prefilter.h"
#include "splineview/sampler.h"

namespace {

using sv::Boundary;
using sv::gl::EvalOptions;
using sv::gl::Fetch;
using sv::gl::TexFormat;
using svgltest::record;

const std::vector<Boundary> kBoundaries = {Boundary::Reflect, Boundary::Mirror, Boundary::Periodic};

struct Shape {
  std::vector<std::size_t> dims;
  std::size_t channels;
};

// Small and odd shapes, size-1 and size-2 axes included; channels vary so that RGBA textures
// (2..4 channels) appear in every flavour.
const std::vector<Shape>& shapes(std::size_t rank) {
  static const std::vector<Shape> two = {{{1, 1}, 1},   {{1, 7}, 2},   {{2, 5}, 1},  {{6, 2}, 3},
                                         {{13, 11}, 1}, {{23, 37}, 4}, {{17, 1}, 1}, {{31, 29}, 1}};
  static const std::vector<Shape> three = {{{1, 1, 1}, 1}, {{1, 3, 4}, 1},   {{2, 2, 2}, 2},
                                           {{5, 1, 6}, 1}, {{6, 7, 5}, 3},   {{9, 4, 11}, 1},
                                           {{3, 2, 9}, 4}, {{12, 13, 10}, 1}};
  return rank == 2 ? two : three;
}

// Float arithmetic of the fetches (weights, fma blends, the CPU reference is exact by
// comparison), relative to the largest coefficient magnitude. Measured on Mesa llvmpipe:
// precise/otf up to about 2.5 ulp of max|c| (see the printed table); asserted with margin.
constexpr double kArith = 8.0 * 5.960464477539063e-08;  // 8 half-ulps of float at 1.0

int degree_of(Fetch f) {
  switch (f) {
    case Fetch::Nearest:
      return 0;
    case Fetch::Linear:
      return 1;
    default:
      return 3;
  }
}

std::string label(const EvalOptions& o, TexFormat fmt, std::size_t rank) {
  std::string s = std::string(sv::gl::fetch_name(o.fetch)) + " " + sv::gl::format_name(fmt) + " " +
                  std::to_string(rank) + "-D";
  if (o.fetch == Fetch::CubicLut)
    s += std::string(" lut ") + std::to_string(o.lut.texels) +
         (o.lut.half_float ? " rgb16f " : " rgb32f ") + sv::gl::lut_mapping_name(o.lut.mapping);
  if (o.derivative_axis >= 0) s += " d/dx" + std::to_string(o.derivative_axis);
  return s;
}

// Per-axis error of the LUT flavour in units of the coefficient range: the host emulates the
// filtered table lookup (exact arithmetic) and compares g0 and the fetch positions t0 (from
// i - 1) and t1 (from i + 1) with the exact values; since the piecewise linear interpolant of
// the coefficients changes by at most the coefficient range per texel, the blend
// g0 L(i - 1 + t0) + g1 L(i + 1 + t1) errs by at most (|dg0| + g0 |dt0| + g1 |dt1|) * range.
double lut_axis_error(const sv::gl::LutOptions& lut) {
  const std::vector<float> table = sv::gl::lut_table(lut);
  const int n = lut.texels;
  double worst = 0;
  const int steps = 200000;
  for (int s = 0; s < steps; ++s) {
    const double a = (s + 0.5) / steps;
    double u = 0;  // position in texel units (texel k centred at k)
    if (lut.mapping == sv::gl::LutMapping::Repeat) {
      u = a * n - 0.5;
    } else {
      u = a * (n - 1);
    }
    const double k0 = std::floor(u);
    const double f = u - k0;
    auto texel = [&](double k, int c) {
      long i = static_cast<long>(k);
      if (lut.mapping == sv::gl::LutMapping::Repeat) {
        i = ((i % n) + n) % n;
      } else {
        i = std::clamp(i, 0L, static_cast<long>(n) - 1);
      }
      return static_cast<double>(table[static_cast<std::size_t>(i) * 3 + c]);
    };
    const double h0 = (1 - f) * texel(k0, 0) + f * texel(k0 + 1, 0);
    const double h1 = (1 - f) * texel(k0, 1) + f * texel(k0 + 1, 1);
    const double g0 = (1 - f) * texel(k0, 2) + f * texel(k0 + 1, 2);
    const double b = 1 - a;
    const double w0 = b * b * b / 6, w1 = 2.0 / 3 - 0.5 * a * a * (2 - a);
    const double w2 = 2.0 / 3 - 0.5 * b * b * (2 - b), w3 = a * a * a / 6;
    const double eg0 = w0 + w1, et0 = w1 / eg0, et1 = w3 / (w2 + w3);
    // Fetch fractions from i - 1 and i + 1 as the shader forms them.
    const bool published = lut.mapping == sv::gl::LutMapping::Repeat;
    const double t0 = published ? a - h0 + 1 : h0 + 1;
    const double t1 = published ? a + h1 - 1 : h1 - 1;
    const double e =
        std::fabs(g0 - eg0) + g0 * std::fabs(t0 - et0) + (1 - g0) * std::fabs(t1 - et1);
    worst = std::max(worst, e);
  }
  return worst;
}

struct Outcome {
  double error = 0;  // max |gpu - ref| / data range
  double bound = 0;  // same units
};

// One case: random samples in [0, 1], prefiltered (float) when the fetch needs coefficients,
// uploaded in `fmt`, evaluated at m random positions in [-3, N+2] per axis, compared with the
// reference on the same coefficients. The bound (relative to the data range) is
//   rank * hw * cr * dw + kArith * cmax * dw + fmt_err
// with hw the measured filter precision (filtered flavours), the lut's table error added to hw,
// cr the coefficient range, cmax the largest coefficient magnitude, dw the sum of |weights| of
// one axis (1, or 1.5 for a derivative), and fmt_err the texel rounding of R16F/R16.
Outcome run_case(const EvalOptions& opt, TexFormat fmt, const Shape& shape, std::size_t m,
                 std::uint32_t seed) {
  const std::size_t rank = shape.dims.size();
  const sv::ArrayF samples = svgltest::random_array(shape.dims, shape.channels, seed);
  sv::ArrayF coeffs = samples;
  if (sv::gl::fetch_prefiltered(opt.fetch)) {
    sv::PrefilterOptions p;
    p.degree = 3;
    p.boundary = opt.boundary;
    sv::prefilter(coeffs, p);
  }
  const sv::gl::SplineTexture tex(coeffs, fmt);
  const std::vector<float> pos = svgltest::random_positions(shape.dims, m, seed);
  const std::vector<float> gpu = svgltest::evaluator(opt, rank).evaluate(tex, pos.data(), m);
  const std::vector<double> ref =
      svgltest::reference(coeffs, pos, degree_of(opt.fetch), opt.boundary, opt.derivative_axis);
  const double range = svgltest::value_range(samples);
  const double cr = svgltest::value_range(coeffs);
  const double cmax = svgltest::max_abs(coeffs);
  const double dw = opt.derivative_axis >= 0 ? 1.5 : 1.0;
  double hw = 0;
  if (opt.fetch != Fetch::Nearest && opt.fetch != Fetch::CubicPrecise)
    hw = svgltest::filter_precision();
  if (opt.fetch == Fetch::CubicLut) hw += lut_axis_error(opt.lut);
  double fmt_err = 0;
  if (fmt == TexFormat::R16F) fmt_err = std::ldexp(cmax, -11);
  if (fmt == TexFormat::R16) fmt_err = 1.0 / 65535.0;
  Outcome o;
  o.error = svgltest::max_abs_difference(gpu, ref) / range;
  o.bound = (static_cast<double>(rank) * hw * cr * dw + kArith * cmax * dw + fmt_err) / range;
  return o;
}

// Runs every shape of a rank and boundary for `opt`, asserting and recording the errors.
void check_all(EvalOptions opt, TexFormat fmt, std::size_t rank, std::size_t m = 1500) {
  for (Boundary b : kBoundaries) {
    opt.boundary = b;
    for (const Shape& shape : shapes(rank)) {
      const std::uint32_t seed = svgltest::fresh_seed();
      SCOPED_TRACE(label(opt, fmt, rank) + " " + sv::boundary_name(b) + " " +
                   svgltest::shape_name(shape.dims, shape.channels) + " seed " +
                   std::to_string(seed));
      const Outcome o = run_case(opt, fmt, shape, m, seed);
      EXPECT_LE(o.error, o.bound);
      record(label(opt, fmt, rank), o.error, o.bound);
    }
  }
}

class GlEvaluator : public ::testing::Test {
 protected:
  void SetUp() override { SVGL_REQUIRE_CONTEXT(); }
};

TEST_F(GlEvaluator, FilterPrecisionIsMeasured) {
  const double hw = svgltest::filter_precision();
  std::printf("filter precision: %.3g texels (2^%.1f)\n", hw, std::log2(std::max(hw, 1e-30)));
  // Any texture unit: at worst the 8-bit weights of NVIDIA (2^-9) plus coordinate rounding.
  EXPECT_LT(hw, 1.0 / 128);
}

TEST_F(GlEvaluator, PreciseMatchesTheReference) {
  EvalOptions opt;
  opt.fetch = Fetch::CubicPrecise;
  for (std::size_t rank : {2u, 3u}) check_all(opt, TexFormat::R32F, rank);
}

TEST_F(GlEvaluator, OnTheFlyMatchesTheReference) {
  EvalOptions opt;
  opt.fetch = Fetch::CubicOtf;
  for (std::size_t rank : {2u, 3u}) check_all(opt, TexFormat::R32F, rank);
}

TEST_F(GlEvaluator, LutMatchesTheReferenceWithinTheTableError) {
  std::vector<sv::gl::LutOptions> luts(4);
  luts[1].half_float = false;                    // 128 RGB32F
  luts[2].mapping = sv::gl::LutMapping::Repeat;  // as published: 128 RGB16F, repeat
  luts[3].texels = 32;                           // small table, interpolation error
  luts[3].half_float = false;
  for (const sv::gl::LutOptions& lut : luts) {
    std::printf("lut %d %s %s: table error per axis %.3g (units of the coefficient range)\n",
                lut.texels, lut.half_float ? "rgb16f" : "rgb32f",
                sv::gl::lut_mapping_name(lut.mapping), lut_axis_error(lut));
    EvalOptions opt;
    opt.fetch = Fetch::CubicLut;
    opt.lut = lut;
    for (std::size_t rank : {2u, 3u}) check_all(opt, TexFormat::R32F, rank, 800);
  }
}

TEST_F(GlEvaluator, UnfilteredIsTheSplineOfTheRawSamples) {
  EvalOptions opt;
  opt.fetch = Fetch::CubicUnfiltered;
  for (std::size_t rank : {2u, 3u}) check_all(opt, TexFormat::R32F, rank);
  // ... and it does not interpolate: at the sample positions it is the (1 4 1)/6 smoothing.
  const std::uint32_t seed = svgltest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const sv::ArrayF samples = svgltest::random_array({9, 10}, 1, seed);
  const sv::gl::SplineTexture tex(samples, TexFormat::R32F);
  std::vector<float> pos;
  for (std::size_t y = 0; y < 9; ++y)
    for (std::size_t x = 0; x < 10; ++x) {
      pos.push_back(static_cast<float>(y));
      pos.push_back(static_cast<float>(x));
    }
  const std::vector<float> gpu = svgltest::evaluator(opt, 2).evaluate(tex, pos.data(), 90);
  double max_diff = 0;
  for (std::size_t i = 0; i < 90; ++i)
    max_diff = std::max(max_diff, std::fabs(static_cast<double>(gpu[i]) - samples[i]));
  EXPECT_GT(max_diff, 0.05) << "the unfiltered cubic reproduced the samples";
}

TEST_F(GlEvaluator, DerivativesMatchTheReference) {
  for (Fetch f : {Fetch::CubicOtf, Fetch::CubicPrecise}) {
    for (std::size_t rank : {2u, 3u}) {
      for (int axis = 0; axis < static_cast<int>(rank); ++axis) {
        EvalOptions opt;
        opt.fetch = f;
        opt.derivative_axis = axis;
        check_all(opt, TexFormat::R32F, rank, 800);
      }
    }
  }
}

TEST_F(GlEvaluator, NearestAndLinearMatchTheirCpuDefinitions) {
  for (Fetch f : {Fetch::Nearest, Fetch::Linear}) {
    EvalOptions opt;
    opt.fetch = f;
    for (std::size_t rank : {2u, 3u}) check_all(opt, TexFormat::R32F, rank);
  }
  // Ties of nearest round up (floor(x + 0.5)), at every half-integer position across the edges.
  for (Boundary b : kBoundaries) {
    EvalOptions opt;
    opt.fetch = Fetch::Nearest;
    opt.boundary = b;
    const std::uint32_t seed = svgltest::fresh_seed();
    SCOPED_TRACE(std::string("ties, ") + sv::boundary_name(b) + ", seed " + std::to_string(seed));
    const sv::ArrayF samples = svgltest::random_array({3, 5}, 1, seed);
    const sv::gl::SplineTexture tex(samples, TexFormat::R32F);
    std::vector<float> pos;
    for (int y = -8; y <= 10; ++y)
      for (int x = -8; x <= 12; ++x) {
        pos.push_back(0.5f * static_cast<float>(y));
        pos.push_back(0.5f * static_cast<float>(x));
      }
    const std::size_t m = pos.size() / 2;
    const std::vector<float> gpu = svgltest::evaluator(opt, 2).evaluate(tex, pos.data(), m);
    const std::vector<double> ref = svgltest::reference(samples, pos, 0, b);
    EXPECT_EQ(svgltest::max_abs_difference(gpu, ref), 0.0);
  }
}

}  // namespace
