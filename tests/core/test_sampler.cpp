// Properties of the reference sampler: degree 0/1 are nearest/linear, derivatives match
// finite differences of the spline, index extension follows the boundary modes, bad positions
// are clear errors; and the metrics on known inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "splineview/bspline.h"
#include "splineview/metrics.h"
#include "splineview/prefilter.h"
#include "splineview/sampler.h"
#include "test_util.h"

namespace {

using sv::ArrayD;
using sv::Boundary;

TEST(Sampler, ExtendIndexFollowsTheExplicitExtension) {
  for (Boundary b : svtest::all_boundaries())
    for (long n : {1, 2, 3, 8})
      for (long k = -40; k <= 40; ++k)
        EXPECT_EQ(sv::extend_index(k, n, b), svtest::explicit_extension(k, n, b))
            << sv::boundary_name(b) << " n=" << n << " k=" << k;
}

TEST(Sampler, DegreeZeroIsNearestAndDegreeOneIsLinear) {
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const ArrayD f = svtest::random_array<double>({6, 9}, 1, seed);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uy(0, 5), ux(0, 8);
  for (int t = 0; t < 200; ++t) {
    const double y = uy(rng), x = ux(rng);
    const auto near = sv::sample(f, {y, x}, {0, Boundary::Reflect});
    EXPECT_EQ(near[0], f.at2(static_cast<std::size_t>(std::floor(y + 0.5)),
                             static_cast<std::size_t>(std::floor(x + 0.5))));
    const auto lin = sv::sample(f, {y, x}, {1, Boundary::Reflect});
    const std::size_t y0 = static_cast<std::size_t>(y), x0 = static_cast<std::size_t>(x);
    const double ay = y - static_cast<double>(y0), ax = x - static_cast<double>(x0);
    const double ref = (1 - ay) * ((1 - ax) * f.at2(y0, x0) + ax * f.at2(y0, x0 + 1)) +
                       ay * ((1 - ax) * f.at2(y0 + 1, x0) + ax * f.at2(y0 + 1, x0 + 1));
    EXPECT_NEAR(lin[0], ref, 1e-15);
  }
}

TEST(Sampler, DerivativeMatchesFiniteDifferencesOfTheSpline) {
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int n = 2; n <= sv::kMaxDegree; ++n)
    for (Boundary b : svtest::all_boundaries()) {
      ArrayD c = svtest::random_array<double>({7, 8, 9}, 2, seed + n);
      sv::prefilter(c, {n, b});
      std::mt19937 rng(seed);
      std::uniform_real_distribution<double> u(-2, 10);
      const double h = 1e-6;
      for (int t = 0; t < 30; ++t) {
        std::vector<double> p{u(rng), u(rng), u(rng)};
        for (int axis = 0; axis < 3; ++axis) {
          auto plus = p, minus = p;
          plus[axis] += h;
          minus[axis] -= h;
          const auto d = sv::sample(c, p, {n, b, axis});
          const auto vp = sv::sample(c, plus, {n, b});
          const auto vm = sv::sample(c, minus, {n, b});
          for (int ch = 0; ch < 2; ++ch)
            EXPECT_NEAR(d[ch], (vp[ch] - vm[ch]) / (2 * h), 2e-6)
                << "degree " << n << " axis " << axis;
        }
      }
    }
}

TEST(Sampler, NonFinitePositionIsAClearError) {
  const ArrayD f({4, 4}, 1);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(sv::sample(f, {0.5, nan}, {}), sv::Error);
  EXPECT_THROW(sv::sample(f, {0.5, 1e300}, {}), sv::Error);
  EXPECT_THROW(sv::sample(f, {0.5, 1, 2}, {}), sv::Error);  // not a multiple of the rank
  EXPECT_THROW(sv::sample(f, {0.5, 1}, {3, Boundary::Reflect, 2}), sv::Error);
}

TEST(Metrics, KnownValuesWithAndWithoutMask) {
  ArrayD a({2, 2}, 1), b({2, 2}, 1);
  a[0] = 1;
  a[1] = 0.5;
  a[2] = 0;
  a[3] = 0;
  b[0] = 0.5;
  b[1] = 0.5;
  b[2] = 0.25;
  b[3] = 0;
  const auto s = sv::compare(a, b);
  EXPECT_DOUBLE_EQ(s.max_abs, 0.5);
  EXPECT_DOUBLE_EQ(s.sse, 0.25 + 0.0625);
  EXPECT_DOUBLE_EQ(s.rms, std::sqrt(0.3125 / 4));
  EXPECT_DOUBLE_EQ(s.psnr, 10 * std::log10(1 / (0.3125 / 4)));
  EXPECT_EQ(s.count, 4u);
  const auto m = sv::compare(a, b, {0, 1, 1, 1});
  EXPECT_DOUBLE_EQ(m.max_abs, 0.25);
  EXPECT_EQ(m.count, 3u);
  EXPECT_TRUE(std::isinf(sv::compare(a, a).psnr));
  EXPECT_THROW(sv::compare(a, ArrayD({2, 3}, 1)), sv::Error);
  EXPECT_THROW(sv::compare(a, b, {0, 0, 0, 0}), sv::Error);
}

TEST(Metrics, DiscMaskIsCentredWithTheRequestedRadius) {
  const auto m = sv::disc_mask(101, 101, 0.35);
  std::size_t inside = 0;
  for (auto v : m) inside += v;
  // Area pi r^2 with r = 35.35: within a perimeter's worth of lattice points.
  const double r = 0.35 * 101, area = M_PI * r * r;
  EXPECT_NEAR(static_cast<double>(inside), area, 2 * M_PI * r);
  EXPECT_EQ(m[50 * 101 + 50], 1);
  EXPECT_EQ(m[0], 0);
  // Symmetric under flips.
  for (std::size_t y = 0; y < 101; ++y)
    for (std::size_t x = 0; x < 101; ++x) ASSERT_EQ(m[y * 101 + x], m[(100 - y) * 101 + (100 - x)]);
}

}  // namespace
