// Properties of the B-spline basis: partition of unity, agreement with the explicit
// truncated-power formula, derivatives, poles as roots of the characteristic polynomial.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "splineview/bspline.h"
#include "splineview/error.h"
#include "test_util.h"

namespace {

// beta_n(t) = 1/n! sum_j (-1)^j C(n+1, j) (t + (n+1)/2 - j)_+^n in long double: an independent
// (cancellation-prone but, for n <= 7 and |t| < 4, accurate to ~1e-15) definition.
long double truncated_power(int n, long double t) {
  long double s = 0, fact = 1, binom = 1;
  for (int i = 2; i <= n; ++i) fact *= i;
  for (int j = 0; j <= n + 1; ++j) {
    if (j > 0) binom = binom * (n + 2 - j) / j;
    const long double v = t + (n + 1) / 2.0L - j;
    if (v > 0 || (n == 0 && v == 0)) s += ((j % 2) ? -1 : 1) * binom * std::pow(v, n);
  }
  return s / fact;
}

TEST(BSpline, WeightsAreAPartitionOfUnityAndMatchTheExplicitFormula) {
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-20, 20);
  for (int n = 0; n <= sv::kMaxDegree; ++n) {
    for (int trial = 0; trial < 200; ++trial) {
      const double x = trial < 5 ? trial - 2.0 : u(rng);  // integers and random positions
      double w[sv::kMaxDegree + 1];
      const long first = sv::bspline_weights<double>(n, x, w);
      double sum = 0;
      for (int j = 0; j <= n; ++j) {
        sum += w[j];
        const long double ref = truncated_power(n, x - static_cast<double>(first + j));
        EXPECT_NEAR(w[j], static_cast<double>(ref), 2e-15) << "n=" << n << " x=" << x << " j=" << j;
      }
      EXPECT_NEAR(sum, 1.0, 1e-15) << "n=" << n;
      // No other coefficient contributes: the neighbours just outside have zero weight.
      EXPECT_NEAR(static_cast<double>(truncated_power(n, x - static_cast<double>(first - 1))), 0.0,
                  1e-15);
      EXPECT_NEAR(static_cast<double>(truncated_power(n, x - static_cast<double>(first + n + 1))),
                  0.0, 1e-15);
    }
  }
}

TEST(BSpline, CubicWeightsMatchTheClosedForm) {
  for (double a = 0; a < 1; a += 1.0 / 64) {
    double w[4];
    sv::bspline_weights_frac<double>(3, a, w);
    EXPECT_NEAR(w[0], (1 - a) * (1 - a) * (1 - a) / 6, 1e-16);
    EXPECT_NEAR(w[1], 2.0 / 3 - a * a * (2 - a) / 2, 1e-16);
    EXPECT_NEAR(w[2], 2.0 / 3 - (1 - a) * (1 - a) * (1 + a) / 2, 1e-16);
    EXPECT_NEAR(w[3], a * a * a / 6, 1e-16);
  }
}

TEST(BSpline, DerivativeWeightsMatchFiniteDifferences) {
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-5, 5);
  for (int n = 1; n <= sv::kMaxDegree; ++n) {
    for (int deriv = 1; deriv <= std::min(n, 3); ++deriv) {
      // Step sizes balance truncation and rounding for each order of differencing.
      const double h = deriv == 1 ? 1e-5 : (deriv == 2 ? 1e-4 : 1e-3);
      for (int trial = 0; trial < 50; ++trial) {
        const double x = u(rng);
        double w[sv::kMaxDegree + 1];
        const long first = sv::bspline_weights<double>(n, x, w, deriv);
        double sum = 0;
        for (int j = 0; j <= n; ++j) {
          sum += w[j];
          const double t = x - static_cast<double>(first + j);
          // Central differences of the (deriv-1)-th derivative through the explicit formula.
          auto f = [&](double s) -> double {
            if (deriv == 1) return static_cast<double>(truncated_power(n, s));
            if (deriv == 2)
              return static_cast<double>((truncated_power(n, s + h) - truncated_power(n, s - h)) /
                                         (2 * h));
            return static_cast<double>((truncated_power(n, s + h) - 2 * truncated_power(n, s) +
                                        truncated_power(n, s - h)) /
                                       (h * h));
          };
          const double fd = (f(t + h) - f(t - h)) / (2 * h);
          // Skip points within h of a knot, where the (n-deriv)-times smooth function kinks.
          const double knot = (n % 2) ? t : t + 0.5;
          if (std::fabs(knot - std::round(knot)) < 4 * h) continue;
          EXPECT_NEAR(w[j], fd, deriv == 1 ? 1e-7 : (deriv == 2 ? 1e-5 : 1e-3))
              << "n=" << n << " deriv=" << deriv << " x=" << x;
        }
        EXPECT_NEAR(sum, 0.0, 1e-12) << "derivative weights of a constant sum to zero";
      }
    }
  }
}

TEST(BSpline, PolesAreRootsOfTheSampledBSplineAndGainNormalises) {
  for (int n = 2; n <= sv::kMaxDegree; ++n) {
    const sv::Poles p = sv::bspline_poles(n);
    EXPECT_EQ(p.count, n / 2);
    double dc = 0;  // sum_k beta_n(k): must be 1
    for (int k = -n; k <= n; ++k) dc += sv::bspline(n, k);
    EXPECT_NEAR(dc, 1.0, 1e-15);
    for (int i = 0; i < p.count; ++i) {
      const double z = p.z[i];
      EXPECT_LT(std::fabs(z), 1.0);
      double v = 0, scale = 0;  // sum_k beta_n(k) z^k, k = -n/2 .. n/2, and its term sizes
      for (int k = -n / 2; k <= n / 2; ++k) {
        v += sv::bspline(n, k) * std::pow(z, k);
        scale += std::fabs(sv::bspline(n, k) * std::pow(z, k));
      }
      EXPECT_LT(std::fabs(v) / scale, 1e-15) << "degree " << n << " pole " << z;
    }
  }
  EXPECT_NEAR(sv::bspline_poles(3).gain, 6.0, 1e-14);
  EXPECT_NEAR(sv::bspline_poles(3).z[0], std::sqrt(3.0) - 2, 2e-16);
  EXPECT_EQ(sv::bspline_poles(0).count, 0);
  EXPECT_EQ(sv::bspline_poles(1).count, 0);
}

TEST(BSpline, DegreeOutOfRangeIsAClearError) {
  double w[9];
  EXPECT_THROW(sv::bspline_weights<double>(8, 0.5, w), sv::Error);
  EXPECT_THROW(sv::bspline_poles(-1), sv::Error);
  try {
    sv::bspline_poles(9);
    FAIL();
  } catch (const sv::Error& e) {
    EXPECT_NE(std::string(e.what()).find("between 0 and 7, got 9"), std::string::npos) << e.what();
  }
}

}  // namespace
