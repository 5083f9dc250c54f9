// The direct transform with lambda (smoothing splines) and the indirect transform (smoothing.h)
// against independent oracles: the smoothing spline minimises
//   sum_k (f[k] - s(k))^2 + lambda integral (s^(r))^2      (degree n = 2r - 1)
// over one period of the extended signal, checked against a dense solve of the normal equations
// built here (truncated-power B-splines and their r-th derivatives, Gauss-Legendre on every unit
// interval); the measured frequency response on a periodic cosine; the poles as roots of the
// denominator written here; lambda = 0 bit for bit the prefilter; the lambda -> 0 and large
// limits; every boundary mode on short lines; the indirect transform against a direct evaluation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

#include "splineview/bspline.h"
#include "splineview/error.h"
#include "splineview/prefilter.h"
#include "splineview/smoothing.h"
#include "test_util.h"

namespace {

using sv::Array;
using sv::Boundary;
using ld = long double;

constexpr ld kPiL = 3.141592653589793238462643383279502884L;

// d^deriv/dx^deriv beta_n(x) by the truncated-power formula: sum_i (-1)^i C(n+1, i)
// (x + (n+1)/2 - i)_+^(n - deriv) / (n - deriv)!  (the library's recursion is not used).
ld beta_tp(int n, ld x, int deriv = 0) {
  const ld half = (n + 1) / 2.0L;
  if (!(std::fabs(x) < half)) return 0;
  const int p = n - deriv;
  ld s = 0, binom = 1, fact = 1;
  for (int i = 1; i <= p; ++i) fact *= i;
  for (int i = 0; i <= n + 1; ++i) {
    const ld u = x + half - i;
    if (u > 0) {
      ld up = 1;
      for (int k = 0; k < p; ++k) up *= u;
      s += ((i % 2) ? -binom : binom) * up;
    }
    binom = binom * (n + 1 - i) / (i + 1);
  }
  return s / fact;
}

// 8-point Gauss-Legendre on [0, 1] (exact for degree 15), by Newton on the recurrence.
struct Rule {
  std::vector<ld> x, w;
};
const Rule& rule8() {
  static const Rule r = [] {
    Rule q;
    const int m = 8;
    for (int i = 1; i <= m; ++i) {
      ld t = std::cos(kPiL * (i - 0.25L) / (m + 0.5L)), dp = 0;
      for (int it = 0; it < 100; ++it) {
        ld p0 = 1, p1 = t;
        for (int k = 2; k <= m; ++k) {
          const ld p2 = ((2 * k - 1) * t * p1 - (k - 1) * p0) / k;
          p0 = p1;
          p1 = p2;
        }
        dp = m * (t * p1 - p0) / (t * t - 1);
        const ld step = p1 / dp;
        t -= step;
        if (std::fabs(step) < 1e-19L) break;
      }
      q.x.push_back((1 + t) / 2);
      q.w.push_back(1 / ((1 - t * t) * dp * dp));  // 2 / (...) on [-1,1], halved for [0,1]
    }
    return q;
  }();
  return r;
}

// integral beta_n^(r)(x) beta_n^(r)(x - m) dx over the real line (the pieces of both are unit
// intervals with integer ends for odd n).
ld penalty_inner(int n, int r, long m) {
  const long half = (n + 1) / 2;
  ld s = 0;
  const Rule& q = rule8();
  for (long a = -half; a < half + std::labs(m); ++a)
    for (std::size_t i = 0; i < q.x.size(); ++i) {
      const ld x = a + q.x[i];
      s += q.w[i] * beta_tp(n, x, r) * beta_tp(n, x - std::labs(m), r);
    }
  return s;
}

// Solves A x = b (dense, long double, partial pivoting).
std::vector<ld> solve(std::vector<std::vector<ld>> a, std::vector<ld> b) {
  const std::size_t n = b.size();
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t p = c;
    for (std::size_t r = c + 1; r < n; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[p][c])) p = r;
    std::swap(a[p], a[c]);
    std::swap(b[p], b[c]);
    for (std::size_t r = c + 1; r < n; ++r) {
      const ld f = a[r][c] / a[c][c];
      for (std::size_t k = c; k < n; ++k) a[r][k] -= f * a[c][k];
      b[r] -= f * b[c];
    }
  }
  std::vector<ld> x(n);
  for (std::size_t c = n; c-- > 0;) {
    ld s = b[c];
    for (std::size_t k = c + 1; k < n; ++k) s -= a[c][k] * x[k];
    x[c] = s / a[c][c];
  }
  return x;
}

// The smoothing spline's coefficients of a P-periodic signal f: the minimiser of
// |f - B c|^2 + lambda c^T G c, from (B^T B + lambda G) c = B^T f, every matrix periodised here.
std::vector<ld> oracle_periodic(const std::vector<ld>& f, int n, double lambda) {
  const long p = static_cast<long>(f.size());
  const int r = (n + 1) / 2;
  const long reach = n + 2;  // images beyond this contribute nothing
  std::vector<std::vector<ld>> bm(p, std::vector<ld>(p, 0)), g(p, std::vector<ld>(p, 0));
  for (long j = 0; j < p; ++j)
    for (long k = 0; k < p; ++k)
      for (long q = -reach - 1; q <= reach + 1; ++q) {
        const long m = j - k - q * p;
        if (std::labs(m) > reach) continue;
        bm[j][k] += beta_tp(n, m);
        if (lambda > 0) g[j][k] += penalty_inner(n, r, m);
      }
  std::vector<std::vector<ld>> a(p, std::vector<ld>(p, 0));
  std::vector<ld> rhs(p, 0);
  for (long i = 0; i < p; ++i)
    for (long k = 0; k < p; ++k) {
      ld s = 0;
      for (long j = 0; j < p; ++j) s += bm[j][i] * bm[j][k];
      a[i][k] = s + static_cast<ld>(lambda) * g[i][k];
      rhs[i] += bm[k][i] * f[k];
    }
  return solve(a, rhs);
}

// The period of the extension of N samples by b, as samples.
std::vector<ld> extended_period(const std::vector<double>& f, Boundary b) {
  const long n = static_cast<long>(f.size());
  const long p = b == Boundary::Reflect ? 2 * n : b == Boundary::Mirror ? 2 * n - 2 : n;
  std::vector<ld> e(static_cast<std::size_t>(p));
  for (long k = 0; k < p; ++k) e[k] = f[svtest::explicit_extension(k, n, b)];
  return e;
}

// B_n(w) + lambda (2 - 2 cos w)^r written here from beta_tp.
ld denominator_at(int n, double lambda, ld w) {
  ld b = 0;
  for (int k = -n; k <= n; ++k) b += beta_tp(n, k) * std::cos(k * w);
  return b + lambda * std::pow(2 - 2 * std::cos(w), (n + 1) / 2);
}

const int kOdd[] = {1, 3, 5, 7};
const double kLambdas[] = {1e-3, 1.0 / 144, 0.01, 0.3, 1, 100};

TEST(Smoothing, MinimisesThePenalisedFunctionalOnEveryModeAndShortLine) {
  for (int n : kOdd)
    for (double lambda : kLambdas)
      for (Boundary b : svtest::all_boundaries())
        for (std::size_t len = 1; len <= 7; ++len) {
          const std::uint32_t seed = svtest::fresh_seed();
          SCOPED_TRACE("degree " + std::to_string(n) + " lambda " + std::to_string(lambda) + " " +
                       sv::boundary_name(b) + " N " + std::to_string(len) + " seed " +
                       std::to_string(seed));
          Array<double> a = svtest::random_array<double>({len}, 1, seed, -1, 1);
          const std::vector<double> f = a.vec();
          sv::SplineTransformOptions opt;
          opt.degree = n;
          opt.lambda = lambda;
          opt.boundary = b;
          sv::direct_transform(a, opt);
          if (len == 1 || (b == Boundary::Mirror && len < 2)) {
            EXPECT_EQ(a[0], f[0]);  // a constant signal: DC gain 1
            continue;
          }
          const std::vector<ld> c = oracle_periodic(extended_period(f, b), n, lambda);
          for (std::size_t k = 0; k < len; ++k)
            EXPECT_NEAR(a[k], static_cast<double>(c[k]), 2e-12) << "k " << k;
        }
}

TEST(Smoothing, FrequencyResponseOnAPeriodicCosine) {
  const std::size_t len = 48;
  for (int n : kOdd)
    for (double lambda : {0.0, 1e-3, 0.05, 2.0, 500.0})
      for (int m : {0, 1, 5, 12, 23, 24}) {
        SCOPED_TRACE("degree " + std::to_string(n) + " lambda " + std::to_string(lambda) + " m " +
                     std::to_string(m));
        const ld w = 2 * kPiL * m / len;
        Array<double> a({len}, 1);
        for (std::size_t k = 0; k < len; ++k) a[k] = static_cast<double>(std::cos(w * k + 0.3L));
        Array<float> af = Array<float>::from(a);
        sv::SplineTransformOptions opt;
        opt.degree = n;
        opt.lambda = lambda;
        opt.boundary = Boundary::Periodic;
        sv::direct_transform(a, opt);
        sv::direct_transform(af, opt);
        const ld gain = 1 / denominator_at(n, lambda, w);
        EXPECT_NEAR(sv::smoothing_response(n, lambda, static_cast<double>(w)),
                    static_cast<double>(gain), 1e-13 * static_cast<double>(gain));
        for (std::size_t k = 0; k < len; ++k) {
          const double want = static_cast<double>(gain * std::cos(w * k + 0.3L));
          EXPECT_NEAR(a[k], want, 1e-12 * std::max<double>(1, static_cast<double>(gain)));
          EXPECT_NEAR(af[k], want, 3e-5 * std::max<double>(1, static_cast<double>(gain)));
        }
      }
}

TEST(Smoothing, PolesAreTheRootsInsideTheCircleWithTheDcGain) {
  for (int n : kOdd)
    for (double lambda : {0.0, 1e-6, 1e-3, 1.0 / 144, 0.01, 1.0, 1e6}) {
      SCOPED_TRACE("degree " + std::to_string(n) + " lambda " + std::to_string(lambda));
      const sv::SmoothingPoles p = sv::smoothing_poles(n, lambda);
      const int r = (n + 1) / 2;
      EXPECT_EQ(static_cast<int>(p.z.size()), lambda > 0 ? r : r - 1);
      std::complex<ld> gain = 1;
      for (std::size_t i = 0; i < p.z.size(); ++i) {
        const std::complex<ld> z(p.z[i].real(), p.z[i].imag());
        EXPECT_LT(std::abs(z), 1);
        if (i > 0) {
          EXPECT_LE(std::abs(p.z[i]), std::abs(p.z[i - 1]) * (1 + 1e-15));
        }
        // D(z) = sum beta_n(k) z^k + lambda (-z + 2 - 1/z)^r vanishes at the pole rounded to
        // double: a Newton step D / D' within rounding of |z|, or (near the double root of
        // lambda = 1/144, where D' vanishes too) |D| within rounding of the size of its terms
        std::complex<ld> d = 0, d1 = 0;
        ld size = 0;
        for (int k = -r; k <= r; ++k) {
          d += beta_tp(n, k) * std::pow(z, k);
          d1 += beta_tp(n, k) * static_cast<ld>(k) * std::pow(z, k - 1);
          size += std::fabs(beta_tp(n, k)) * std::pow(std::abs(z), k);
        }
        const std::complex<ld> u = 2.0L - z - 1.0L / z;
        d += static_cast<ld>(lambda) * std::pow(u, r);
        size += static_cast<ld>(lambda) * std::pow(std::abs(u), r);
        d1 += static_cast<ld>(lambda) * static_cast<ld>(r) * std::pow(u, r - 1) *
              (-1.0L + 1.0L / (z * z));
        EXPECT_TRUE(std::abs(d / d1) < 1e-13L * std::abs(z) || std::abs(d) < 1e-14L * size)
            << "pole " << i << ": |D| " << static_cast<double>(std::abs(d)) << ", |D/D'| "
            << static_cast<double>(std::abs(d / d1));
        gain *= (1.0L - z) * (1.0L - 1.0L / z);
        if (p.z[i].imag() > 0) {  // a conjugate pair, Im > 0 first
          ASSERT_LT(i + 1, p.z.size());
          EXPECT_EQ(p.z[i + 1], std::conj(p.z[i]));
        } else if (p.z[i].imag() < 0) {
          ASSERT_GT(i, 0u);
          EXPECT_EQ(p.z[i - 1], std::conj(p.z[i]));
        }
      }
      EXPECT_NEAR(p.gain, static_cast<double>(gain.real()), 1e-13 * std::fabs(p.gain));
      if (lambda == 0) {  // the interpolating prefilter's poles
        const sv::Poles q = sv::bspline_poles(n);
        ASSERT_EQ(q.count, static_cast<int>(p.z.size()));
        for (int i = 0; i < q.count; ++i) EXPECT_NEAR(p.z[i].real(), q.z[i], 1e-15);
      }
    }
  // the cubic's poles turn complex past the double root of P at lambda = 1/144
  EXPECT_EQ(sv::smoothing_poles(3, 0.006).z[0].imag(), 0);
  EXPECT_NE(sv::smoothing_poles(3, 0.008).z[0].imag(), 0);
}

TEST(Smoothing, LambdaZeroIsThePrefilterBitForBit) {
  for (int n = 0; n <= 7; ++n)
    for (Boundary b : {Boundary::Reflect, Boundary::Mirror, Boundary::Periodic, Boundary::Nearest,
                       Boundary::Wrap, Boundary::Constant, Boundary::GridConstant}) {
      const std::uint32_t seed = svtest::fresh_seed();
      Array<float> f = svtest::random_array<float>({9, 13}, 2, seed);
      Array<double> d = svtest::random_array<double>({5, 4, 7}, 1, seed);
      Array<float> fp = f;
      Array<double> dp = d;
      sv::PrefilterOptions po;
      po.degree = n;
      po.boundary = b;
      sv::prefilter(fp, po);
      sv::prefilter(dp, po);
      sv::SplineTransformOptions so;
      so.degree = n;
      so.boundary = b;
      sv::direct_transform(f, so);
      sv::direct_transform(d, so);
      EXPECT_EQ(f.vec(), fp.vec()) << "degree " << n;
      EXPECT_EQ(d.vec(), dp.vec()) << "degree " << n;
    }
}

TEST(Smoothing, LimitsOfLambda) {
  for (int n : kOdd)
    for (Boundary b : svtest::all_boundaries()) {
      const std::uint32_t seed = svtest::fresh_seed();
      SCOPED_TRACE("degree " + std::to_string(n) + " " + sv::boundary_name(b) + " seed " +
                   std::to_string(seed));
      const Array<double> f = svtest::random_array<double>({16}, 1, seed, -1, 1);
      sv::SplineTransformOptions opt;
      opt.degree = n;
      opt.boundary = b;
      // lambda -> 0: the interpolating prefilter (through the general path: lambda > 0)
      Array<double> pre = f;
      sv::direct_transform(pre, opt);
      opt.lambda = 1e-14;
      Array<double> tiny = f;
      sv::direct_transform(tiny, opt);
      double scale = 1;
      for (double v : pre.vec()) scale = std::max(scale, std::fabs(v));
      for (std::size_t k = 0; k < 16; ++k) EXPECT_NEAR(tiny[k], pre[k], 1e-10 * scale);
      // lambda large: the constant of the period's mean (the only spline without an r-th
      // derivative that is periodic)
      const std::vector<ld> e = extended_period(f.vec(), b);
      ld mean = 0;
      for (ld v : e) mean += v;
      mean /= static_cast<ld>(e.size());
      opt.lambda = 1e12;
      Array<double> big = f;
      sv::direct_transform(big, opt);
      for (std::size_t k = 0; k < 16; ++k) EXPECT_NEAR(big[k], static_cast<double>(mean), 1e-6);
    }
}

TEST(Smoothing, OtherModesFollowThePrefilterExtensionAndFloatFollowsDouble) {
  const std::uint32_t seed = svtest::fresh_seed();
  const Array<double> f = svtest::random_array<double>({6, 11}, 3, seed);
  sv::SplineTransformOptions opt;
  opt.degree = 3;
  opt.lambda = 0.2;
  for (Boundary b :
       {Boundary::Nearest, Boundary::Wrap, Boundary::Constant, Boundary::GridConstant}) {
    Array<double> x = f, y = f;
    opt.boundary = b;
    sv::direct_transform(x, opt);
    opt.boundary = sv::prefilter_boundary(b);
    sv::direct_transform(y, opt);
    EXPECT_EQ(x.vec(), y.vec());
  }
  for (double lambda : {0.001, 0.2, 50.0}) {
    opt.lambda = lambda;
    opt.boundary = Boundary::Reflect;
    opt.degrees = {5, 3};
    Array<double> d = f;
    Array<float> s = Array<float>::from(f);
    sv::direct_transform(d, opt);
    sv::direct_transform(s, opt);
    for (std::size_t i = 0; i < d.size(); ++i) EXPECT_NEAR(s[i], d[i], 2e-6);
    // per-axis degrees: axis 0 of degree 5 alone, then axis 1 of degree 3, is the whole
    Array<double> e = f;
    sv::SplineTransformOptions one = opt;
    one.degrees.clear();
    one.degree = 5;
    sv::direct_transform_axis(e, 0, one);
    one.degree = 3;
    sv::direct_transform_axis(e, 1, one);
    EXPECT_EQ(e.vec(), d.vec());
  }
}

TEST(Indirect, EvaluatesTheSplineAtTheGridAndInvertsTheDirectTransform) {
  for (int n = 0; n <= 7; ++n)
    for (Boundary b : svtest::all_boundaries())
      for (std::size_t len : {1, 2, 3, 8}) {
        const std::uint32_t seed = svtest::fresh_seed();
        SCOPED_TRACE("degree " + std::to_string(n) + " " + sv::boundary_name(b) + " N " +
                     std::to_string(len) + " seed " + std::to_string(seed));
        const Array<double> c = svtest::random_array<double>({len, 5}, 1, seed, -1, 1);
        sv::SplineTransformOptions opt;
        opt.degrees = {n, 3};
        opt.boundary = b;
        Array<double> s = c;
        sv::indirect_transform(s, opt);
        // direct evaluation: sum_k c[k] beta(j - k) per axis, the coefficients extended here
        const long h = 6;
        for (std::size_t j = 0; j < len; ++j)
          for (std::size_t i = 0; i < 5; ++i) {
            ld want = 0;
            for (long dj = -h; dj <= h; ++dj)
              for (long di = -2; di <= 2; ++di) {
                const long kj = svtest::explicit_extension(static_cast<long>(j) + dj,
                                                           static_cast<long>(len), b);
                const long ki = svtest::explicit_extension(static_cast<long>(i) + di, 5, b);
                want += beta_tp(n, -dj) * beta_tp(3, -di) * c.at2(kj, ki);
              }
            EXPECT_NEAR(s.at2(j, i), static_cast<double>(want), 1e-14);
          }
        Array<double> back = c;
        sv::direct_transform(back, opt);
        sv::indirect_transform(back, opt);
        for (std::size_t k = 0; k < c.size(); ++k) EXPECT_NEAR(back[k], c[k], 1e-12);
      }
}

TEST(Smoothing, RefusesBadLambdaAndDegree) {
  Array<double> a({8}, 1);
  sv::SplineTransformOptions opt;
  for (double bad : {-1.0, std::nan(""), HUGE_VAL}) {
    opt.lambda = bad;
    EXPECT_THROW(sv::direct_transform(a, opt), sv::Error);
  }
  opt.lambda = 1;
  opt.degree = 2;
  try {
    sv::direct_transform(a, opt);
    ADD_FAILURE() << "degree 2 with lambda > 0 was accepted";
  } catch (const sv::Error& e) {
    EXPECT_NE(std::string(e.what()).find("odd degree"), std::string::npos) << e.what();
  }
  opt.degree = 8;
  EXPECT_THROW(sv::direct_transform(a, opt), sv::Error);
  opt.degree = 3;
  opt.degrees = {3, 3};
  EXPECT_THROW(sv::direct_transform(a, opt), sv::Error);  // two degrees for one axis
}

}  // namespace
