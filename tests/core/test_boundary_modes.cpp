// Every scipy.ndimage boundary mode in the core (issue 14), by properties that need no scipy
// (tests/cli/test_scipy_modes.py compares with scipy itself): interpolate() reproduces the
// samples for every mode, degree and size; each mode's extension behaves as documented in
// sampler.h (periodicity, symmetry, cval, edge values), and Nearest / GridConstant agree with
// the spline of the samples padded explicitly far beyond interpolation_pad().
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "splineview/prefilter.h"
#include "splineview/sampler.h"
#include "test_util.h"

namespace {

using sv::ArrayD;
using sv::Boundary;

const Boundary kModes[] = {Boundary::Reflect,     Boundary::Mirror,  Boundary::Periodic,
                           Boundary::Wrap,        Boundary::Nearest, Boundary::Constant,
                           Boundary::GridConstant};

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

double max_abs(const ArrayD& a) {
  double m = 0;
  for (double v : a.vec()) m = std::max(m, std::fabs(v));
  return m;
}

TEST(BoundaryModes, NamesParseInOursAndScipys) {
  EXPECT_EQ(sv::parse_boundary("periodic"), Boundary::Periodic);
  EXPECT_EQ(sv::parse_boundary("grid-wrap"), Boundary::Periodic);
  EXPECT_EQ(sv::parse_boundary("grid-mirror"), Boundary::Reflect);
  EXPECT_EQ(sv::parse_boundary("wrap"), Boundary::Wrap);
  for (Boundary b : kModes) {
    EXPECT_EQ(sv::parse_boundary(sv::boundary_name(b)), b);
    EXPECT_EQ(sv::parse_boundary(sv::boundary_scipy_name(b)), b);
  }
  EXPECT_STREQ(sv::boundary_scipy_name(Boundary::Periodic), "grid-wrap");
  EXPECT_THROW(sv::parse_boundary("clamp"), sv::Error);
  EXPECT_TRUE(sv::boundary_on_gpu(Boundary::Mirror));
  EXPECT_FALSE(sv::boundary_on_gpu(Boundary::Nearest));
}

TEST(BoundaryModes, ExtendIndexOfTheNewModes) {
  for (long n : {1, 2, 5})
    for (long k = -30; k <= 30; ++k) {
      const long mirror = svtest::explicit_extension(k, n, Boundary::Mirror);
      EXPECT_EQ(sv::extend_index(k, n, Boundary::Wrap), mirror);
      EXPECT_EQ(sv::extend_index(k, n, Boundary::Constant), mirror);
      EXPECT_EQ(sv::extend_index(k, n, Boundary::Nearest), std::clamp(k, 0L, n - 1));
      EXPECT_EQ(sv::extend_index(k, n, Boundary::GridConstant), (k >= 0 && k < n) ? k : -1);
    }
}

// scipy's spline_filter: nearest uses the reflect prefilter; wrap, constant and grid-constant
// the mirror prefilter (measured, docs/ACCURACY.md). Bit for bit the same computation.
TEST(BoundaryModes, PrefilterOfEachModeIsItsScipyCounterpart) {
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const ArrayD f = svtest::random_array<double>({5, 7}, 2, seed, -1, 3);
  for (int n = 2; n <= 7; ++n)
    for (Boundary b : kModes) {
      ArrayD c = f, ref = f;
      sv::prefilter(c, {n, b, 0});
      sv::prefilter(ref, {n, sv::prefilter_boundary(b), 0});
      EXPECT_EQ(c.vec(), ref.vec()) << sv::boundary_name(b) << " degree " << n;
    }
  EXPECT_EQ(sv::prefilter_boundary(Boundary::Nearest), Boundary::Reflect);
  EXPECT_EQ(sv::prefilter_boundary(Boundary::GridConstant), Boundary::Mirror);
}

TEST(BoundaryModes, InterpolateReproducesTheSamplesForEveryModeDegreeAndShape) {
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<std::vector<std::size_t>> shapes = {{1},    {2},    {3},      {8},
                                                        {1, 3}, {4, 5}, {2, 3, 4}};
  for (const auto& dims : shapes)
    for (std::size_t ch : {1, 3}) {
      if (dims.size() == 3 && ch > 1) continue;  // padded 3-D: (N + 2 pad)^3, slow under ASan
      const ArrayD f = svtest::random_array<double>(dims, ch, seed + 1, -1, 3);
      const std::vector<double> pos = grid_positions(dims);
      for (Boundary b : kModes)
        for (int n = 0; n <= 7; ++n) {
          sv::SamplerOptions opt{n, b, -1, 0, 5.5};
          const std::vector<double> v = sv::interpolate(f, pos, opt);
          double err = 0;
          for (std::size_t i = 0; i < v.size(); ++i) err = std::max(err, std::fabs(v[i] - f[i]));
          EXPECT_LT(err, 1e-13 * 4) << sv::boundary_name(b) << " degree " << n << " shape "
                                    << sv::describe_shape(dims, ch);
        }
    }
}

// The value at position x of each mode, through interpolate, in 1-D.
double at(const ArrayD& f, double x, int n, Boundary b, double cval = 0) {
  return sv::interpolate(f, std::vector<double>{x}, sv::SamplerOptions{n, b, -1, 1, cval})[0];
}

TEST(BoundaryModes, PeriodicSymmetricAndWrapExtensionsBehaveAsDocumented) {
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.01, 0.99);
  for (std::size_t len : {2, 3, 7}) {
    const ArrayD f = svtest::random_array<double>({len}, 1, seed + 2, -1, 3);
    const double N = static_cast<double>(len);
    for (int n = 1; n <= 7; ++n)
      for (int t = 0; t < 20; ++t) {
        const double x = u(rng) * (N - 1);  // inside, not at a sample
        const double tol = 1e-13 * 4;
        for (int k : {-3, -1, 1, 2, 4}) {
          EXPECT_NEAR(at(f, x + k * N, n, Boundary::Periodic), at(f, x, n, Boundary::Periodic),
                      tol);
          // scipy 'wrap': period N-1, the Mirror spline on [0, N-1]
          EXPECT_NEAR(at(f, x + k * (N - 1), n, Boundary::Wrap), at(f, x, n, Boundary::Mirror),
                      tol);
          EXPECT_NEAR(at(f, x + 2 * k * N, n, Boundary::Reflect), at(f, x, n, Boundary::Reflect),
                      tol);
          EXPECT_NEAR(at(f, x + 2 * k * (N - 1), n, Boundary::Mirror),
                      at(f, x, n, Boundary::Mirror), tol);
        }
        EXPECT_NEAR(at(f, -1 - x, n, Boundary::Reflect), at(f, x, n, Boundary::Reflect), tol);
        EXPECT_NEAR(at(f, -x, n, Boundary::Mirror), at(f, x, n, Boundary::Mirror), tol);
        // constant: the Mirror spline inside, cval outside (exactly)
        EXPECT_NEAR(at(f, x, n, Boundary::Constant, 7.25), at(f, x, n, Boundary::Mirror), tol);
        EXPECT_EQ(at(f, -x - 1e-9, n, Boundary::Constant, 7.25), 7.25);
        EXPECT_EQ(at(f, N - 1 + x, n, Boundary::Constant, 7.25), 7.25);
      }
  }
}

// The spline of the samples extended explicitly (edge values / cval) over `pad` samples per
// side, with the Mirror prefilter on the padded array: an independent construction of the
// Nearest / GridConstant interpolant (for a pad far beyond interpolation_pad(); 1-D and 2-D
// only: the 3-D explicit pad is too slow under ASan, and tests/cli/test_scipy_modes.py checks
// 3-D against its own padded dense solve).
std::vector<double> explicitly_padded(const ArrayD& f, const std::vector<double>& pos, int n,
                                      Boundary b, double cval, std::size_t pad) {
  const std::size_t rank = f.rank();
  std::vector<std::size_t> dims;
  for (std::size_t d : f.dims()) dims.push_back(d + 2 * pad);
  ArrayD g(dims, f.channels());
  const std::vector<double> gp = grid_positions(dims);
  for (std::size_t p = 0; p < g.points(); ++p) {
    std::size_t src = 0;
    bool inside = true;
    for (std::size_t d = 0; d < rank; ++d) {
      long k = static_cast<long>(gp[p * rank + d]) - static_cast<long>(pad);
      const long len = static_cast<long>(f.dim(d));
      if (k < 0 || k >= len) inside = false;
      k = std::clamp(k, 0L, len - 1);
      src = src * f.dim(d) + static_cast<std::size_t>(k);
    }
    for (std::size_t c = 0; c < f.channels(); ++c)
      g[p * f.channels() + c] = inside || b == Boundary::Nearest ? f[src * f.channels() + c] : cval;
  }
  sv::prefilter(g, {n, Boundary::Mirror, 0});
  std::vector<double> shifted = pos;
  for (double& x : shifted) x += static_cast<double>(pad);
  // Beyond the explicit pad the coefficients are the edge value / cval to far below 1e-16.
  return sv::sample(g, shifted, sv::SamplerOptions{n, b, -1, 0, cval});
}

TEST(BoundaryModes, NearestAndGridConstantAreTheSplineOfTheSamplesExtendedForEver) {
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (const std::vector<std::size_t>& dims :
       std::vector<std::vector<std::size_t>>{{1}, {2}, {5}, {3, 4}, {1, 2}}) {
    const ArrayD f = svtest::random_array<double>(dims, 1, seed + 3, -1, 3);
    std::vector<double> pos;
    for (int t = 0; t < 60; ++t)
      for (std::size_t d : dims) {
        const double len = static_cast<double>(d);
        pos.push_back(std::uniform_real_distribution<double>(-3 * len - 90, 4 * len + 90)(rng));
      }
    for (Boundary b : {Boundary::Nearest, Boundary::GridConstant})
      for (int n = 2; n <= 7; ++n) {
        const double cval = -2.5;
        const std::vector<double> got =
            sv::interpolate(f, pos, sv::SamplerOptions{n, b, -1, 0, cval});
        const std::vector<double> want = explicitly_padded(f, pos, n, b, cval, 160);
        const double scale = std::max(max_abs(f), std::fabs(cval));
        for (std::size_t i = 0; i < got.size(); ++i)
          ASSERT_NEAR(got[i], want[i], 1e-13 * scale)
              << sv::boundary_name(b) << " degree " << n << " point " << i;
      }
  }
}

TEST(BoundaryModes, FarOutNearestIsTheEdgeValueAndGridConstantIsCval) {
  const ArrayD f = svtest::random_array<double>({3, 4}, 2, svtest::fresh_seed(), -1, 3);
  for (int n = 0; n <= 7; ++n) {
    const double far = 200.25;
    const std::vector<double> pos = {-far, -far, -far, 3 + far, 2 + far, 1.5};
    const auto near = sv::interpolate(f, pos, sv::SamplerOptions{n, Boundary::Nearest});
    const auto cons =
        sv::interpolate(f, pos, sv::SamplerOptions{n, Boundary::GridConstant, -1, 0, 0.75});
    for (std::size_t c = 0; c < 2; ++c) {
      EXPECT_NEAR(near[0 * 2 + c], f.at2(0, 0, c), 1e-14 * 4) << n;  // corner (0, 0)
      EXPECT_NEAR(near[1 * 2 + c], f.at2(0, 3, c), 1e-14 * 4) << n;  // corner (0, 3)
      for (std::size_t p = 0; p < 3; ++p) EXPECT_NEAR(cons[p * 2 + c], 0.75, 1e-14 * 4) << n;
    }
  }
}

}  // namespace
