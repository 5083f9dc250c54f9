// Properties of the prefilter: the spline interpolates the samples for every degree, mode, size
// and channel count; the spline beyond the edges equals that of the explicitly extended
// samples; float stays within a few ulp of double; constants stay constant.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "splineview/bspline.h"
#include "splineview/prefilter.h"
#include "splineview/sampler.h"
#include "test_util.h"

namespace {

using sv::Array;
using sv::ArrayD;
using sv::ArrayF;
using sv::Boundary;

// All integer positions of an array, in array order.
std::vector<double> grid_positions(const std::vector<std::size_t>& dims) {
  std::size_t total = 1;
  for (auto d : dims) total *= d;
  std::vector<double> pos;
  std::vector<std::size_t> at(dims.size(), 0);
  for (std::size_t p = 0; p < total; ++p) {
    for (auto v : at) pos.push_back(static_cast<double>(v));
    for (std::size_t d = dims.size(); d-- > 0;) {
      if (++at[d] < dims[d]) break;
      at[d] = 0;
    }
  }
  return pos;
}

struct Shape {
  std::vector<std::size_t> dims;
  std::size_t channels;
};

std::vector<Shape> shapes() {
  std::vector<Shape> s;
  for (std::size_t n : {1, 2, 3, 4, 5, 7, 13, 31, 97}) s.push_back({{n}, 1});
  s.push_back({{17}, 3});
  for (std::size_t c = 1; c <= 4; ++c) {
    s.push_back({{1, 1}, c});
    s.push_back({{2, 3}, c});
    s.push_back({{5, 7}, c});
    s.push_back({{13, 11}, c});
  }
  s.push_back({{3, 4, 5}, 1});
  s.push_back({{7, 1, 2}, 2});
  s.push_back({{5, 6, 3}, 4});
  return s;
}

TEST(Prefilter, SplineInterpolatesTheSamplesForEveryDegreeModeAndShape) {
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int n = 0; n <= sv::kMaxDegree; ++n)
    for (Boundary b : svtest::all_boundaries())
      for (const Shape& sh : shapes()) {
        const ArrayD f = svtest::random_array<double>(sh.dims, sh.channels, seed + n);
        ArrayD c = f;
        sv::prefilter(c, {n, b});
        const auto pos = grid_positions(sh.dims);
        const auto v = sv::sample(c, pos, sv::SamplerOptions{n, b, -1, 0});
        double err = 0;
        for (std::size_t i = 0; i < f.size(); ++i) err = std::max(err, std::fabs(v[i] - f[i]));
        EXPECT_LT(err, 1e-13) << "degree " << n << " " << sv::boundary_name(b) << " shape "
                              << sv::describe_shape(sh.dims, sh.channels);
      }
}

TEST(Prefilter, FloatInterpolatesToAFewUlpOfTheCoefficientRange) {
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int n = 2; n <= sv::kMaxDegree; ++n)
    for (Boundary b : svtest::all_boundaries()) {
      const ArrayF f =
          svtest::random_array<float>({23, 29}, 2, seed + static_cast<std::uint32_t>(n));
      ArrayF c = f;
      sv::prefilter(c, {n, b});
      const auto v = sv::sample(c, grid_positions(f.dims()), sv::SamplerOptions{n, b, -1, 0});
      double err = 0, range = 0;
      for (std::size_t i = 0; i < f.size(); ++i) {
        err = std::max(err, std::fabs(v[i] - f[i]));
        range = std::max(range, std::fabs(static_cast<double>(c[i])));
      }
      EXPECT_LT(err, 8 * range * std::numeric_limits<float>::epsilon())
          << "degree " << n << " " << sv::boundary_name(b);
    }
}

// The coefficients of the infinitely extended signal, approximated by prefiltering a long
// explicit extension (the influence of its far ends decays like |z|^E, below 1e-15 here).
TEST(Prefilter, BeyondTheEdgesTheSplineEqualsThatOfTheExtendedSamples) {
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int n = 2; n <= sv::kMaxDegree; ++n)
    for (Boundary b : svtest::all_boundaries())
      for (std::size_t len : {1, 2, 3, 6, 11}) {
        const ArrayD f =
            svtest::random_array<double>({len}, 1, seed + static_cast<std::uint32_t>(n + len));
        const long e = 80;
        ArrayD g({len + 2 * e}, 1);
        for (long j = 0; j < static_cast<long>(g.size()); ++j)
          g[j] = f[svtest::explicit_extension(j - e, static_cast<long>(len), b)];
        ArrayD cf = f, cg = g;
        sv::prefilter(cf, {n, b});
        sv::prefilter(cg, {n, b});
        std::vector<double> pf, pg;
        for (double x = -4.0; x <= static_cast<double>(len) + 3.0; x += 0.37) {
          pf.push_back(x);
          pg.push_back(x + e);
        }
        const auto vf = sv::sample(cf, pf, {n, b});
        const auto vg = sv::sample(cg, pg, {n, b});
        for (std::size_t i = 0; i < vf.size(); ++i)
          ASSERT_NEAR(vf[i], vg[i], 1e-12)
              << "degree " << n << " " << sv::boundary_name(b) << " N=" << len << " x=" << pf[i];
      }
}

TEST(Prefilter, FloatCoefficientsAreWithinAFewUlpOfDouble) {
  // Measured as ulp of the coefficient range: random data has strong Nyquist content, which
  // the prefilter amplifies by 1/B(-1) per axis (3 for cubic, 7.5 for quintic), so the
  // coefficients span far more than the data; float rounding is relative to that span.
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int n = 2; n <= sv::kMaxDegree; ++n)
    for (Boundary b : svtest::all_boundaries()) {
      const ArrayD fd =
          svtest::random_array<double>({9, 31, 27}, 1, seed + static_cast<std::uint32_t>(n));
      ArrayF cf = ArrayF::from(fd);
      ArrayD cd = ArrayD::from(cf);  // the same float inputs, in double
      sv::prefilter(cf, {n, b});
      sv::prefilter(cd, {n, b});
      double err = 0, range = 0;
      for (std::size_t i = 0; i < cd.size(); ++i) {
        err = std::max(err, std::fabs(cf[i] - cd[i]));
        range = std::max(range, std::fabs(cd[i]));
      }
      const double ulps = err / (range * std::numeric_limits<float>::epsilon());
      RecordProperty("ulp_degree" + std::to_string(n) + "_" + sv::boundary_name(b),
                     std::to_string(ulps));
      std::printf("float vs double coefficients, degree %d %-8s: %.2f ulp of max|c| = %.3g\n", n,
                  sv::boundary_name(b), ulps, range);
      EXPECT_LT(ulps, 8.0) << "degree " << n << " " << sv::boundary_name(b);
    }
}

TEST(Prefilter, ConstantSignalGivesConstantCoefficients) {
  for (int n = 0; n <= sv::kMaxDegree; ++n)
    for (Boundary b : svtest::all_boundaries())
      for (std::size_t len : {1, 2, 5, 200}) {
        ArrayD a({len, 3}, 2);
        for (std::size_t i = 0; i < a.size(); ++i) a[i] = 0.75;
        sv::prefilter(a, {n, b});
        for (std::size_t i = 0; i < a.size(); ++i)
          ASSERT_NEAR(a[i], 0.75, 1e-14) << "degree " << n << " " << sv::boundary_name(b);
      }
}

TEST(Prefilter, LongLinesUseTheTruncatedStartWithoutLosingExactness) {
  // 4000 samples: far beyond the truncation horizon of every pole, in both precisions.
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (Boundary b : svtest::all_boundaries()) {
    const ArrayD f = svtest::random_array<double>({4000}, 1, seed);
    ArrayD c = f;
    sv::prefilter(c, {7, b});
    const auto v = sv::sample(c, grid_positions(f.dims()), {7, b});
    for (std::size_t i = 0; i < f.size(); ++i) ASSERT_NEAR(v[i], f[i], 1e-13) << i;
  }
}

TEST(Prefilter, ThreadCountDoesNotChangeTheResult) {
  const ArrayD f = svtest::random_array<double>({40, 50, 30}, 1, svtest::fresh_seed());
  ArrayD a = f, b = f;
  sv::prefilter(a, {3, Boundary::Reflect, 1});
  sv::prefilter(b, {3, Boundary::Reflect, 7});
  EXPECT_EQ(a.vec(), b.vec());
}

}  // namespace
