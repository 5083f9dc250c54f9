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
//  - grids, the shared-memory tiled precise grid pass, tiling of large inputs, timing, bad input,
//  and the GL state left as found.
// Data and positions are fresh random on every run; failures print the seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "gl_test_util.h"
#include "splineview/error.h"
#include "splineview/gl/gl.h"
#include "splineview/gl/program.h"
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

// Float arithmetic of the fetches (weights, fma blends; the CPU reference is exact by
// comparison) in units of 2^-24 max|c|. Measured on Mesa llvmpipe for precise: at most 4 units
// (2-D) and 5.8 units (3-D) over 144 cases each (the printed table's last column); asserted
// with about twice that.
double arith(std::size_t rank) {
  return 4.0 * static_cast<double>(rank) * 5.960464477539063e-08;
}

// The precise flavour's target (issue 3): within 1e-6 of the data range on R32F coefficients.
// Measured on Mesa llvmpipe over 144 random cases per rank: 3.8e-7 (2-D) and 7.0e-7 (3-D), so
// 2-D is held to 7.5e-7.
double precise_cap(std::size_t rank) {
  return rank == 2 ? 7.5e-7 : 1e-6;
}

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
  double ulps = 0;   // max |gpu - ref| in float ulps of max |c| (2^-24 max|c|)
};

// One case: random samples in [0, 1], prefiltered (float) when the fetch needs coefficients,
// uploaded in `fmt`, evaluated at m random positions in [-3, N+2] per axis, compared with the
// reference on the same coefficients (texel_reference: on the coefficients as the texture holds
// them after rounding to `fmt`). The bound (relative to the data range) is
//   rank * hw * cr * dw + arith(rank) * cmax * dw + fmt_err
// with hw the measured filter precision (filtered flavours), the lut's table error added to hw,
// cr the coefficient range, cmax the largest coefficient magnitude, dw the sum of |weights| of
// one axis (1, or 1.5 for a derivative), and fmt_err the texel rounding of R16F (2^-11 max|c|,
// the 10-bit mantissa) or R16 (half a step of 1/65535) unless texel_reference, plus one R16
// step for filtered R16 fetches.
Outcome run_case(const EvalOptions& opt, TexFormat fmt, const Shape& shape, std::size_t m,
                 std::uint32_t seed, bool texel_reference = false) {
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
  sv::ArrayF ref_coeffs = coeffs;
  if (texel_reference)
    for (float& v : ref_coeffs.vec()) v = sv::gl::texel_value(v, fmt);
  const std::vector<double> ref =
      svgltest::reference(ref_coeffs, pos, degree_of(opt.fetch), opt.boundary, opt.derivative_axis);
  const double range = svgltest::value_range(samples);
  const double cr = svgltest::value_range(coeffs);
  const double cmax = svgltest::max_abs(coeffs);
  const double dw = opt.derivative_axis >= 0 ? 1.5 : 1.0;
  double hw = 0;
  if (opt.fetch != Fetch::Nearest && opt.fetch != Fetch::CubicPrecise)
    hw = svgltest::filter_precision();
  if (opt.fetch == Fetch::CubicLut) hw += lut_axis_error(opt.lut);
  double fmt_err = 0;
  if (!texel_reference && fmt == TexFormat::R16F) fmt_err = std::ldexp(cmax, -11) * dw;
  if (!texel_reference && fmt == TexFormat::R16) fmt_err = 0.5 / 65535.0 * dw;
  // Filtered fetches of an integer format may come back at the format's own precision (NVIDIA:
  // a ramp between two adjacent R16 values has no steps in between, docs/SOURCES.md section 2).
  if (fmt == TexFormat::R16 && opt.fetch != Fetch::Nearest && opt.fetch != Fetch::CubicPrecise)
    fmt_err += 1.0 / 65535.0 * dw;
  const double abs_error = svgltest::max_abs_difference(gpu, ref);
  Outcome o;
  o.error = abs_error / range;
  o.bound = (static_cast<double>(rank) * hw * cr * dw + arith(rank) * cmax * dw + fmt_err) / range;
  o.ulps = abs_error / std::ldexp(cmax, -24);
  return o;
}

// Runs every shape of a rank and boundary for `opt`, asserting and recording the errors.
// `cap` (relative to the data range) is asserted on top of the derived bound.
void check_all(EvalOptions opt, TexFormat fmt, std::size_t rank, std::size_t m = 1500,
               bool texel_reference = false, double cap = 1.0) {
  for (Boundary b : kBoundaries) {
    opt.boundary = b;
    for (const Shape& shape : shapes(rank)) {
      const std::uint32_t seed = svgltest::fresh_seed();
      SCOPED_TRACE(label(opt, fmt, rank) + " " + sv::boundary_name(b) + " " +
                   svgltest::shape_name(shape.dims, shape.channels) + " seed " +
                   std::to_string(seed));
      const Outcome o = run_case(opt, fmt, shape, m, seed, texel_reference);
      EXPECT_LE(o.error, o.bound);
      EXPECT_LE(o.error, cap);
      record(label(opt, fmt, rank) + (texel_reference ? " vs texels" : ""), o.error,
             std::min(o.bound, cap), o.ulps);
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
  for (std::size_t rank : {2u, 3u})
    check_all(opt, TexFormat::R32F, rank, 1500, false, precise_cap(rank));
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

TEST_F(GlEvaluator, HalfFloatCoefficientsStayWithinTheirMantissa) {
  for (Fetch f : {Fetch::CubicPrecise, Fetch::CubicOtf}) {
    EvalOptions opt;
    opt.fetch = f;
    for (std::size_t rank : {2u, 3u}) {
      // Against the float coefficients: off by at most the 10-bit rounding of each one.
      check_all(opt, TexFormat::R16F, rank, 800);
      // Against the coefficients as rounded on upload: as exact as R32F.
      check_all(opt, TexFormat::R16F, rank, 800, true);
    }
  }
}

TEST_F(GlEvaluator, Unorm16SamplesAreReadAtTheirStep) {
  for (Fetch f : {Fetch::Nearest, Fetch::Linear, Fetch::CubicUnfiltered}) {
    EvalOptions opt;
    opt.fetch = f;
    for (std::size_t rank : {2u, 3u}) {
      check_all(opt, TexFormat::R16, rank, 800);
      check_all(opt, TexFormat::R16, rank, 800, true);
    }
  }
}

TEST_F(GlEvaluator, GridEqualsEvaluateAtTheRoundedPositions) {
  for (std::size_t rank : {2u, 3u}) {
    for (Fetch f : {Fetch::CubicOtf, Fetch::CubicPrecise, Fetch::CubicLut, Fetch::Nearest}) {
      const std::uint32_t seed = svgltest::fresh_seed();
      SCOPED_TRACE(std::string(sv::gl::fetch_name(f)) + " " + std::to_string(rank) + "-D seed " +
                   std::to_string(seed));
      const std::vector<std::size_t> dims =
          rank == 2 ? std::vector<std::size_t>{19, 23} : std::vector<std::size_t>{7, 9, 11};
      const sv::ArrayF data = svgltest::random_array(dims, 2, seed);
      const sv::gl::SplineTexture tex(data, TexFormat::R32F);
      EvalOptions opt;
      opt.fetch = f;
      opt.boundary = Boundary::Mirror;
      // An oblique grid (rotation and zoom), reaching beyond the edges.
      sv::gl::GridMapping g;
      g.rows = 37;
      g.cols = 41;
      g.origin = {-2.3, -1.7, -2.9};
      g.step_row = {0.31, 0.07, -0.013};
      g.step_col = {-0.05, 0.27, 0.33};
      if (rank == 2) g.origin[2] = g.step_row[2] = g.step_col[2] = 0;
      sv::gl::Evaluator& ev = svgltest::evaluator(opt, rank);
      const sv::ArrayF grid = ev.render_grid(tex, g);
      ASSERT_EQ(grid.dims(), (std::vector<std::size_t>{g.rows, g.cols}));
      ASSERT_EQ(grid.channels(), 2u);
      std::vector<float> pos;
      for (std::size_t r = 0; r < g.rows; ++r)
        for (std::size_t c = 0; c < g.cols; ++c)
          for (std::size_t d = 0; d < rank; ++d)
            pos.push_back(static_cast<float>(g.origin[d] + static_cast<double>(r) * g.step_row[d] +
                                             static_cast<double>(c) * g.step_col[d]));
      const std::vector<float> listed = ev.evaluate(tex, pos.data(), g.rows * g.cols);
      EXPECT_EQ(listed, grid.vec());
    }
  }
}

TEST_F(GlEvaluator, PreciseGridFromSharedMemoryTilesMatchesTheReference) {
  // render_grid with the precise fetch stages each output tile's coefficients in shared
  // memory (single channel, 3-D or 2-D with "tile2d", compute pass) unless the tile's box of
  // coefficients is too big (magnification below about 1), where the workgroup falls back to the
  // untiled fetch. Oblique grids at several zooms reaching beyond the edges, every boundary, 2-D
  // and 3-D, derivatives included; sizes not a multiple of 16 leave partial tiles at the edges.
  double worst_vs_listed = 0;  // relative to the data range
  for (std::size_t rank : {2u, 3u}) {
    for (Boundary b : kBoundaries) {
      for (int deriv : {-1, 0}) {
        for (double scale : {0.12, 0.3, 0.9, 2.7, 7.0}) {
          const std::uint32_t seed = svgltest::fresh_seed();
          SCOPED_TRACE(std::to_string(rank) + "-D " + sv::boundary_name(b) + " scale " +
                       std::to_string(scale) + " d/dx" + std::to_string(deriv) + " seed " +
                       std::to_string(seed));
          const std::vector<std::size_t> dims =
              rank == 2 ? std::vector<std::size_t>{19, 23} : std::vector<std::size_t>{12, 13, 10};
          const sv::ArrayF samples = svgltest::random_array(dims, 1, seed);
          sv::ArrayF coeffs = samples;
          sv::PrefilterOptions pf;
          pf.degree = 3;
          pf.boundary = b;
          sv::prefilter(coeffs, pf);
          const sv::gl::SplineTexture tex(coeffs, TexFormat::R32F);
          EvalOptions opt;
          opt.fetch = Fetch::CubicPrecise;
          opt.boundary = b;
          opt.derivative_axis = deriv;
          sv::gl::GridMapping g;
          g.rows = 45;
          g.cols = 38;
          g.origin = {-2.3, -1.7, -2.9};
          g.step_row = {0.83 * scale, 0.19 * scale, -0.035 * scale};
          g.step_col = {-0.13 * scale, 0.73 * scale, 0.89 * scale};
          if (rank == 2) g.origin[2] = g.step_row[2] = g.step_col[2] = 0;
          // 3-D tiles by default; 2-D only with SPLINEVIEW_GL_EXP=tile2d (read when an
          // evaluator is built).
          std::unique_ptr<sv::gl::Evaluator> tiled_2d;
          if (rank == 2) {
            const char* old = std::getenv("SPLINEVIEW_GL_EXP");
            const std::string saved = old ? old : "";
            setenv("SPLINEVIEW_GL_EXP", "tile2d", 1);
            tiled_2d = std::make_unique<sv::gl::Evaluator>(opt, rank);
            if (old) {
              setenv("SPLINEVIEW_GL_EXP", saved.c_str(), 1);
            } else {
              unsetenv("SPLINEVIEW_GL_EXP");
            }
          }
          sv::gl::Evaluator& ev = tiled_2d ? *tiled_2d : svgltest::evaluator(opt, rank);
          const sv::ArrayF grid = ev.render_grid(tex, g);
          std::vector<float> pos;
          for (std::size_t r = 0; r < g.rows; ++r)
            for (std::size_t c = 0; c < g.cols; ++c)
              for (std::size_t d = 0; d < rank; ++d)
                pos.push_back(static_cast<float>(g.origin[d] +
                                                 static_cast<double>(r) * g.step_row[d] +
                                                 static_cast<double>(c) * g.step_col[d]));
          const std::vector<double> ref = svgltest::reference(coeffs, pos, 3, b, deriv);
          const double range = svgltest::value_range(samples);
          const double dw = deriv >= 0 ? 1.5 : 1.0;
          const double bound = arith(rank) * svgltest::max_abs(coeffs) * dw / range;
          const double error = svgltest::max_abs_difference(grid.vec(), ref) / range;
          EXPECT_LE(error, bound);
          if (deriv < 0) {
            EXPECT_LE(error, precise_cap(rank));
          }
          // The untiled fetch at the same positions does the same arithmetic on the same texels.
          const std::vector<float> listed = ev.evaluate(tex, pos.data(), g.rows * g.cols);
          double vs_listed = 0;
          for (std::size_t i = 0; i < listed.size(); ++i)
            vs_listed = std::max(vs_listed, std::fabs(static_cast<double>(listed[i]) - grid[i]));
          EXPECT_LE(vs_listed / range, bound);
          worst_vs_listed = std::max(worst_vs_listed, vs_listed / range);
          record(std::string("precise tiled grid ") + std::to_string(rank) + "-D" +
                     (deriv >= 0 ? " d/dx0" : ""),
                 error, bound, error * range / std::ldexp(svgltest::max_abs(coeffs), -24));
        }
      }
    }
  }
  std::printf(
      "precise tiled grid vs the untiled fetch at the same positions: max %.3g of the "
      "data range\n",
      worst_vs_listed);
}

TEST_F(GlEvaluator, LargeInputsAreTiled) {
  // More positions than one 2048 x 2048 pass, and a grid wider and taller than one tile. The
  // texel values are their own indices, so every output names the texel it came from.
  const std::uint32_t seed = svgltest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  sv::ArrayF index({50, 60});
  for (std::size_t i = 0; i < index.size(); ++i) index[i] = static_cast<float>(i);
  const sv::gl::SplineTexture tex(index, TexFormat::R32F);
  EvalOptions opt;
  opt.fetch = Fetch::Nearest;
  opt.boundary = Boundary::Periodic;
  sv::gl::Evaluator& ev = svgltest::evaluator(opt, 2);
  const std::size_t m = 2048u * 2048u + 4321u;
  const std::vector<float> pos = svgltest::random_positions({50, 60}, m, seed);
  double ms = 0;
  const std::vector<float> gpu = ev.evaluate(tex, pos.data(), m, &ms);
  const std::vector<double> ref = svgltest::reference(index, pos, 0, opt.boundary);
  EXPECT_EQ(svgltest::max_abs_difference(gpu, ref), 0.0);
  EXPECT_GT(ms, 0.0);
  std::printf("nearest, %zu positions in %d passes: %.2f ms GPU\n", m, 2, ms);

  for (const auto& [rows, cols] : {std::pair<std::size_t, std::size_t>{3, 4100}, {4100, 2}}) {
    sv::gl::GridMapping g;
    g.rows = rows;
    g.cols = cols;
    g.origin = {-1.0, -2.0, 0.0};
    g.step_row = {0.75, 0.125, 0.0};
    g.step_col = {0.0625, 0.5, 0.0};
    const sv::ArrayF grid = ev.render_grid(tex, g);
    std::vector<double> p;
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c) {
        p.push_back(g.origin[0] + static_cast<double>(r) * g.step_row[0] +
                    static_cast<double>(c) * g.step_col[0]);
        p.push_back(g.origin[1] + static_cast<double>(r) * g.step_row[1] +
                    static_cast<double>(c) * g.step_col[1]);
      }
    sv::SamplerOptions so;
    so.degree = 0;
    so.boundary = opt.boundary;
    const std::vector<double> expect = sv::sample(index, p, so);
    double worst = 0;
    for (std::size_t i = 0; i < expect.size(); ++i)
      worst = std::max(worst, std::fabs(static_cast<double>(grid[i]) - expect[i]));
    EXPECT_EQ(worst, 0.0) << rows << " x " << cols;
  }
}

TEST_F(GlEvaluator, ReportsGpuTimeAndTheMedianOfRepeats) {
  const sv::ArrayF data = svgltest::random_array({64, 64}, 1, svgltest::fresh_seed());
  const sv::gl::SplineTexture tex(data, TexFormat::R32F);
  EvalOptions opt;
  opt.fetch = Fetch::CubicPrecise;
  sv::gl::Evaluator& ev = svgltest::evaluator(opt, 2);
  sv::gl::GridMapping g;
  g.rows = g.cols = 256;
  g.step_row = {0.25, 0, 0};
  g.step_col = {0, 0.25, 0};
  double ms = -1;
  ev.render_grid(tex, g, &ms, 5);
  EXPECT_GT(ms, 0.0);
  EXPECT_TRUE(std::isfinite(ms));
  const std::vector<float> pos = svgltest::random_positions({64, 64}, 1000, 1);
  double ms2 = -1;
  ev.evaluate(tex, pos.data(), 1000, &ms2);
  EXPECT_GT(ms2, 0.0);
  std::printf("precise 256 x 256 grid: median %.4g ms; 1000 positions: %.4g ms\n", ms, ms2);
}

TEST_F(GlEvaluator, RejectsWhatItCannotDo) {
  auto throws_naming = [](auto&& f, const std::string& word) {
    try {
      f();
    } catch (const sv::Error& e) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
      return;
    }
    ADD_FAILURE() << "no sv::Error (expected one naming \"" << word << "\")";
  };
  for (Fetch f : {Fetch::Nearest, Fetch::Linear, Fetch::CubicLut}) {
    EvalOptions opt;
    opt.fetch = f;
    opt.derivative_axis = 0;
    throws_naming([&] { sv::gl::Evaluator ev(opt, 2); }, "derivative");
  }
  EvalOptions deriv;
  deriv.derivative_axis = 2;
  throws_naming([&] { sv::gl::Evaluator ev(deriv, 2); }, "axis 2");
  throws_naming([] { sv::gl::Evaluator ev(EvalOptions{}, 1); }, "1-D");
  EvalOptions lut;
  lut.fetch = Fetch::CubicLut;
  lut.lut.texels = 1;
  throws_naming([&] { sv::gl::Evaluator ev(lut, 2); }, "2 texels");
  throws_naming([] { sv::gl::SplineTexture t(sv::ArrayF({5}), TexFormat::R32F); }, "2-D or 3-D");
  sv::ArrayF negative({3, 3});
  negative[4] = -0.25f;
  throws_naming([&] { sv::gl::SplineTexture t(negative, TexFormat::R16); }, "[0, 1]");
  const sv::gl::SplineTexture tex3(sv::ArrayF({2, 3, 4}), TexFormat::R32F);
  throws_naming(
      [&] {
        float p[2] = {0, 0};
        svgltest::evaluator(EvalOptions{}, 2).evaluate(tex3, p, 1);
      },
      "3-D");
  const sv::gl::SplineTexture tex2(sv::ArrayF({3, 4}), TexFormat::R32F);
  throws_naming(
      [&] {
        float p[2] = {0, std::nanf("")};
        svgltest::evaluator(EvalOptions{}, 2).evaluate(tex2, p, 1);
      },
      "non-finite");
  throws_naming([] { sv::gl::parse_fetch("cubic"); }, "precise");
  throws_naming([] { sv::gl::parse_format("rgba8"); }, "r16f");
  for (Fetch f : {Fetch::Nearest, Fetch::Linear, Fetch::CubicUnfiltered, Fetch::CubicLut,
                  Fetch::CubicOtf, Fetch::CubicPrecise})
    EXPECT_EQ(sv::gl::parse_fetch(sv::gl::fetch_name(f)), f);
  EXPECT_TRUE(svgltest::evaluator(EvalOptions{}, 2).evaluate(tex2, nullptr, 0).empty());
}

// Everything a pass binds or sets comes back as it was (the viewer shares its context with
// ImGui).
TEST_F(GlEvaluator, LeavesTheGlStateAsFound) {
  sv::gl::Texture t2 = sv::gl::Texture::create_2d(GL_R32F, 4, 4);
  sv::gl::Texture t3 = sv::gl::Texture::create_3d(GL_R32F, 2, 2, 2);
  sv::gl::Texture t1 = sv::gl::Texture::create_1d(GL_R32F, 8);
  sv::gl::Sampler sampler = sv::gl::Sampler::create();
  sv::gl::Buffer buffer = sv::gl::Buffer::create(1024);
  sv::gl::Texture color = sv::gl::Texture::create_2d(GL_RGBA8, 8, 8);
  sv::gl::Framebuffer fb = sv::gl::Framebuffer::create();
  fb.attach_color(color);
  sv::gl::VertexArray vao = sv::gl::VertexArray::create();
  sv::gl::Program program({{GL_VERTEX_SHADER, "view.vert"}, {GL_FRAGMENT_SHADER, "view.frag"}},
                          {{"SV_FETCH_LINEAR", ""}});
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_2D, t2.id());
  glBindTexture(GL_TEXTURE_3D, t3.id());
  glBindSampler(0, sampler.id());
  glActiveTexture(GL_TEXTURE1);
  glBindTexture(GL_TEXTURE_1D, t1.id());
  glBindSampler(1, sampler.id());
  glActiveTexture(GL_TEXTURE3);
  glBindBufferRange(GL_SHADER_STORAGE_BUFFER, 0, buffer.id(), 256, 512);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glPixelStorei(GL_PACK_ROW_LENGTH, 3);
  glViewport(1, 2, 3, 4);
  glEnable(GL_BLEND);
  glEnable(GL_SCISSOR_TEST);
  glBindFramebuffer(GL_DRAW_FRAMEBUFFER, fb.id());
  glBindVertexArray(vao.id());
  glUseProgram(program.id());
  ASSERT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));

  const sv::ArrayF data = svgltest::random_array({5, 6, 7}, 3, svgltest::fresh_seed());
  const sv::gl::SplineTexture tex(data, TexFormat::R32F);
  EvalOptions opt;
  opt.fetch = Fetch::CubicLut;
  sv::gl::Evaluator& ev = svgltest::evaluator(opt, 3);
  const std::vector<float> pos = svgltest::random_positions({5, 6, 7}, 100, 2);
  double ms = 0;
  ev.evaluate(tex, pos.data(), 100, &ms);
  sv::gl::GridMapping g;
  g.rows = 3;
  g.cols = 5;
  g.step_col = {0, 0, 1};
  ev.render_grid(tex, g, &ms, 2);
  ASSERT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));

  auto integer = [](GLenum name) {
    GLint v = 0;
    glGetIntegerv(name, &v);
    return v;
  };
  auto indexed = [](GLenum name, GLuint i) {
    GLint64 v = 0;
    glGetInteger64i_v(name, i, &v);
    return v;
  };
  EXPECT_EQ(integer(GL_ACTIVE_TEXTURE), static_cast<GLint>(GL_TEXTURE3));
  glActiveTexture(GL_TEXTURE0);
  EXPECT_EQ(integer(GL_TEXTURE_BINDING_2D), static_cast<GLint>(t2.id()));
  EXPECT_EQ(integer(GL_TEXTURE_BINDING_3D), static_cast<GLint>(t3.id()));
  EXPECT_EQ(integer(GL_SAMPLER_BINDING), static_cast<GLint>(sampler.id()));
  glActiveTexture(GL_TEXTURE1);
  EXPECT_EQ(integer(GL_TEXTURE_BINDING_1D), static_cast<GLint>(t1.id()));
  EXPECT_EQ(integer(GL_SAMPLER_BINDING), static_cast<GLint>(sampler.id()));
  glActiveTexture(GL_TEXTURE3);
  EXPECT_EQ(indexed(GL_SHADER_STORAGE_BUFFER_BINDING, 0), static_cast<GLint64>(buffer.id()));
  EXPECT_EQ(indexed(GL_SHADER_STORAGE_BUFFER_START, 0), 256);
  EXPECT_EQ(indexed(GL_SHADER_STORAGE_BUFFER_SIZE, 0), 512);
  EXPECT_EQ(integer(GL_PACK_ALIGNMENT), 1);
  EXPECT_EQ(integer(GL_PACK_ROW_LENGTH), 3);
  GLint viewport[4] = {};
  glGetIntegerv(GL_VIEWPORT, viewport);
  EXPECT_EQ(viewport[0], 1);
  EXPECT_EQ(viewport[3], 4);
  EXPECT_TRUE(glIsEnabled(GL_BLEND));
  EXPECT_TRUE(glIsEnabled(GL_SCISSOR_TEST));
  EXPECT_EQ(integer(GL_DRAW_FRAMEBUFFER_BINDING), static_cast<GLint>(fb.id()));
  EXPECT_EQ(integer(GL_VERTEX_ARRAY_BINDING), static_cast<GLint>(vao.id()));
  EXPECT_EQ(integer(GL_CURRENT_PROGRAM), static_cast<GLint>(program.id()));

  // Back to the defaults for the other tests.
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_2D, 0);
  glBindTexture(GL_TEXTURE_3D, 0);
  glBindSampler(0, 0);
  glBindSampler(1, 0);
  glBindTexture(GL_TEXTURE_1D, 0);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, 0);
  glPixelStorei(GL_PACK_ALIGNMENT, 4);
  glPixelStorei(GL_PACK_ROW_LENGTH, 0);
  glDisable(GL_BLEND);
  glDisable(GL_SCISSOR_TEST);
  glBindFramebuffer(GL_DRAW_FRAMEBUFFER, 0);
  glBindVertexArray(0);
  glUseProgram(0);
}

}  // namespace
