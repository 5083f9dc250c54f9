// B-spline derivatives (derivative.h) against independent oracles: a tensor-product evaluation
// of the derivative of beta_n written here from its piecewise polynomial (truncated powers, long
// double) over the coefficients extended by the test's own index walk; central differences of
// the double spline within a derived truncation bound; polynomial reproduction away from the
// borders (a degree-n spline reproduces polynomials of degree n, so their exact derivatives);
// the whole-array filters equal to the pointwise values at the grid points (to rounding); the
// order-0 filter of samples returns the samples; gradient, Hessian, Laplacian and gradient
// magnitude against their definitions; refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "splineview/bspline.h"
#include "splineview/derivative.h"
#include "splineview/prefilter.h"
#include "splineview/sampler.h"
#include "test_util.h"

namespace {

using sv::Array;
using sv::Boundary;

// ---- The oracle ------------------------------------------------------------------------------

// d^m/dx^m beta_n(x) from the truncated-power form
//   beta_n(x) = 1/n! sum_{i=0}^{n+1} (-1)^i C(n+1, i) (x + (n+1)/2 - i)_+^n,
// differentiated term by term: 1/(n-m)! sum (-1)^i C(n+1, i) (x + (n+1)/2 - i)_+^(n-m), with
// (u)_+^0 = 1 for u >= 0 (the right-hand limit at the knots, the library's convention).
long double dbeta_tp(int n, int m, long double x) {
  const long double half = (n + 1) / 2.0L;
  if (x < -half || x >= half) return 0;
  long double s = 0, binom = 1, fact = 1;
  for (int i = 1; i <= n - m; ++i) fact *= i;
  for (int i = 0; i <= n + 1; ++i) {
    const long double u = x + half - i;
    if (u > 0 || (u == 0 && n == m)) {
      long double p = 1;
      for (int k = 0; k < n - m; ++k) p *= u;
      s += ((i % 2) ? -binom : binom) * p;
    }
    binom = binom * (n + 1 - i) / (i + 1);
  }
  return s / fact;
}

// The coefficient index the extension holds at k, or -1 for GridConstant outside.
long ext_index(long k, long n, Boundary b) {
  if (b == Boundary::GridConstant) return (k < 0 || k >= n) ? -1 : k;
  if (b == Boundary::Nearest) return std::clamp(k, 0L, n - 1);
  if (b == Boundary::Wrap || b == Boundary::Constant) b = Boundary::Mirror;
  return svtest::explicit_extension(k, n, b);
}

// sum_k c[ext(k)] prod_d dbeta(n, order_d, x_d - k_d) for channel ch, positions inside
// [0, N-1] (the test keeps Wrap and Constant there, where they are the Mirror spline).
template <class T>
long double oracle(const Array<T>& c, int n, const std::vector<int>& order, const double* x,
                   Boundary b, double cval, std::size_t ch) {
  const std::size_t rank = c.rank();
  const long half = (n + 2) / 2 + 1;
  long lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  for (std::size_t d = 0; d < rank; ++d) {
    lo[d] = static_cast<long>(std::floor(x[d])) - half;
    hi[d] = static_cast<long>(std::floor(x[d])) + half;
  }
  long double sum = 0;
  long k[3] = {0, 0, 0};
  for (k[0] = lo[0]; k[0] <= hi[0]; ++k[0])
    for (k[1] = lo[1]; k[1] <= (rank > 1 ? hi[1] : lo[1]); ++k[1])
      for (k[2] = lo[2]; k[2] <= (rank > 2 ? hi[2] : lo[2]); ++k[2]) {
        long double w = 1;
        std::size_t flat = 0;
        bool out = false;
        for (std::size_t d = 0; d < rank; ++d) {
          w *= dbeta_tp(n, order[d], static_cast<long double>(x[d]) - k[d]);
          const long e = ext_index(k[d], static_cast<long>(c.dim(d)), b);
          if (e < 0) out = true;
          flat = flat * c.dim(d) + static_cast<std::size_t>(std::max(e, 0L));
        }
        if (w == 0) continue;
        sum += w * (out ? static_cast<long double>(cval)
                        : static_cast<long double>(c[flat * c.channels() + ch]));
      }
  return sum;
}

double max_abs(const Array<double>& a) {
  double m = 0;
  for (double v : a.vec()) m = std::max(m, std::fabs(v));
  return m;
}

std::uint32_t next_seed(std::mt19937& rng) {
  return static_cast<std::uint32_t>(rng());
}

std::vector<Boundary> every_mode() {
  return {Boundary::Reflect, Boundary::Mirror,   Boundary::Periodic,    Boundary::Wrap,
          Boundary::Nearest, Boundary::Constant, Boundary::GridConstant};
}

std::vector<std::size_t> random_dims(std::size_t rank, std::mt19937& rng, int lo, int hi) {
  std::uniform_int_distribution<int> u(lo, hi);
  std::vector<std::size_t> d(rank);
  for (auto& v : d) v = static_cast<std::size_t>(u(rng));
  return d;
}

std::vector<int> random_order(std::size_t rank, int degree, std::mt19937& rng) {
  std::uniform_int_distribution<int> u(0, degree);
  std::vector<int> o(rank);
  for (auto& v : o) v = u(rng);
  return o;
}

std::string order_text(const std::vector<int>& o) {
  std::string s;
  for (std::size_t i = 0; i < o.size(); ++i) s += (i ? "," : "") + std::to_string(o[i]);
  return s;
}

// The worst |error| / bound of a test, printed at its end for docs/ACCURACY.md.
struct Worst {
  const char* what;
  double ratio = 0, error = 0;
  void add(double err, double bound) {
    error = std::max(error, err);
    ratio = std::max(ratio, err / bound);
  }
  ~Worst() {
    std::printf("measured: %s: worst |error| %.3g, %.3g of the bound\n", what, error, ratio);
  }
};

// ---- Pointwise against the truncated-power oracle ---------------------------------------------

// The multi-index derivative of a spline given by its coefficients matches the oracle's
// tensor-product sum to a few ulp of the sum of |terms| (every mode, degrees 1..7, 1-3 D, two
// channels, random positions across the whole domain and exactly at knots).
TEST(Derivative, PointwiseMatchesTheTruncatedPowerOracle) {
  const std::uint32_t seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  Worst worst{"pointwise vs truncated-power oracle"};
  for (std::size_t rank = 1; rank <= 3; ++rank)
    for (int n = 1; n <= 7; ++n)
      for (Boundary b : every_mode()) {
        const auto dims = random_dims(rank, rng, 1, rank == 3 ? 6 : 11);
        const Array<double> c = svtest::random_array<double>(dims, 2, next_seed(rng), -1, 1);
        sv::DerivativeOptions opt;
        opt.degree = n;
        opt.boundary = b;
        opt.cval = 0.7;
        opt.input_is_coefficients = true;
        const sv::SplineDerivatives<double> s(c, opt);
        for (int trial = 0; trial < 6; ++trial) {
          const std::vector<int> order = random_order(rank, n, rng);
          std::vector<double> x(rank);
          for (std::size_t d = 0; d < rank; ++d) {
            std::uniform_real_distribution<double> u(0, static_cast<double>(dims[d] - 1));
            x[d] = trial % 3 == 0 ? std::floor(u(rng))
                                  : (trial % 3 == 1 ? std::floor(u(rng)) + 0.5 : u(rng));
            // Inside [0, N-1], where Wrap and Constant are the Mirror spline.
            if (x[d] > static_cast<double>(dims[d] - 1)) x[d] = static_cast<double>(dims[d] - 1);
          }
          double got[2];
          s.partial(order, x.data(), 1, got);
          for (std::size_t ch = 0; ch < 2; ++ch) {
            const long double want = oracle(c, n, order, x.data(), b, opt.cval, ch);
            // Terms bounded by |c| <= 1 (and cval) times prod_d sum_k |beta^(m)| <= 2^m.
            int total = 0;
            for (int o : order) total += o;
            const double tol = 64 * 2.2e-16 * std::ldexp(1.0, total) * std::pow(8.0, rank);
            worst.add(std::fabs(got[ch] - static_cast<double>(want)), tol);
            EXPECT_NEAR(got[ch], static_cast<double>(want), tol)
                << rank << "-D degree " << n << " mode " << sv::boundary_name(b) << " order "
                << order_text(order) << " at x0 " << x[0];
          }
        }
      }
}

// The same through the samples: SplineDerivatives prefilters (and pads Nearest/GridConstant
// like sv::interpolate), so its order-0 value at the grid points is the sample, and its
// derivatives equal those of the coefficients sv::prefilter makes (modes with pad 0).
TEST(Derivative, PointwiseOnSamplesIsTheInterpolant) {
  const std::uint32_t seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (std::size_t rank = 1; rank <= 3; ++rank)
    for (int n = 2; n <= 7; ++n)
      for (Boundary b : every_mode()) {
        const auto dims = random_dims(rank, rng, 2, rank == 3 ? 7 : 12);
        const Array<double> f = svtest::random_array<double>(dims, 1, next_seed(rng), -1, 1);
        sv::DerivativeOptions opt;
        opt.degree = n;
        opt.boundary = b;
        opt.cval = -0.3;
        const sv::SplineDerivatives<double> s(f, opt);
        std::vector<double> pos;
        std::vector<std::size_t> at(rank, 0);
        for (std::size_t p = 0; p < f.points(); ++p) {
          for (std::size_t d = 0; d < rank; ++d) pos.push_back(static_cast<double>(at[d]));
          for (std::size_t d = rank; d-- > 0;)
            if (++at[d] < dims[d])
              break;
            else
              at[d] = 0;
        }
        std::vector<double> v(f.points());
        s.partial(std::vector<int>(rank, 0), pos.data(), f.points(), v.data());
        for (std::size_t p = 0; p < f.points(); ++p)
          ASSERT_NEAR(v[p], f[p], 1e-12)
              << rank << "-D degree " << n << " " << sv::boundary_name(b) << " sample " << p;
        if (s.pad() != 0) continue;
        Array<double> c = f;
        sv::PrefilterOptions po;
        po.degree = n;
        po.boundary = b;
        sv::prefilter(c, po);
        const std::vector<int> order = random_order(rank, n, rng);
        std::vector<double> x(rank);
        for (std::size_t d = 0; d < rank; ++d)
          x[d] = std::uniform_real_distribution<double>(0, static_cast<double>(dims[d] - 1))(rng);
        double got = 0;
        s.partial(order, x.data(), 1, &got);
        const long double want = oracle(c, n, order, x.data(), b, opt.cval, 0);
        EXPECT_NEAR(got, static_cast<double>(want), 1e-10 * std::ldexp(1.0, 2 * n))
            << sv::boundary_name(b) << " order " << order_text(order);
      }
}

// ---- Central differences ----------------------------------------------------------------------

// d/dx_a of the order-(alpha - e_a) derivative by central differences equals the order-alpha
// derivative within the derived bound: for alpha_a + 2 <= n the spline f = s^(alpha - e_a) is C2
// with a bounded third derivative on axis a, so |(f(x+h) - f(x-h))/2h - f'(x)| <= h^2/6 max|f'''|,
// and max|f'''| <= max_k |D^(alpha + 2 e_a) c| over the extended coefficients (B-splines are a
// non-negative partition of unity); for alpha_a >= n - 1 f is piecewise quadratic or linear on
// axis a and the difference is exact when no knot lies within h of x, which the test ensures.
// Rounding adds (n+1)^R eps max|f| / h.
TEST(Derivative, CentralDifferencesWithinTheTruncationBound) {
  const std::uint32_t seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  Worst worst{"central differences (h = 1e-3)"};
  const double h = 1e-3;
  for (std::size_t rank = 1; rank <= 3; ++rank)
    for (int n = 1; n <= 7; ++n)
      for (Boundary b : {Boundary::Reflect, Boundary::Mirror, Boundary::Periodic}) {
        const auto dims = random_dims(rank, rng, 3, rank == 3 ? 7 : 12);
        const Array<double> c = svtest::random_array<double>(dims, 1, next_seed(rng), -1, 1);
        sv::DerivativeOptions opt;
        opt.degree = n;
        opt.boundary = b;
        opt.input_is_coefficients = true;
        const sv::SplineDerivatives<double> s(c, opt);
        for (int trial = 0; trial < 8; ++trial) {
          std::vector<int> alpha = random_order(rank, n, rng);
          const std::size_t a = std::uniform_int_distribution<std::size_t>(0, rank - 1)(rng);
          if (alpha[a] == 0) alpha[a] = 1;
          std::vector<int> lower = alpha;
          --lower[a];
          std::vector<double> x(rank);
          for (std::size_t d = 0; d < rank; ++d)
            x[d] = std::uniform_real_distribution<double>(0.2,
                                                          static_cast<double>(dims[d]) - 1.2)(rng);
          const bool smooth = alpha[a] + 2 <= n;
          if (!smooth) {  // keep knots (integers for odd n, half-integers for even) beyond h
            const double knot_shift = (n % 2 == 0) ? 0.5 : 0.0;
            const double fr = x[a] + knot_shift - std::floor(x[a] + knot_shift);
            if (fr < 2 * h) x[a] += 3 * h;
            if (fr > 1 - 2 * h) x[a] -= 3 * h;
          }
          std::vector<double> xp = x, xm = x;
          xp[a] += h;
          xm[a] -= h;
          double fp = 0, fm = 0, want = 0;
          s.partial(lower, xp.data(), 1, &fp);
          s.partial(lower, xm.data(), 1, &fm);
          s.partial(alpha, x.data(), 1, &want);
          const double fd = (fp - fm) / (2 * h);
          // Bounds from the coefficients: |D^beta c| <= 2^|beta| max|c| = 2^|beta|.
          int total = 0;
          for (int o : lower) total += o;
          const double fmax = std::ldexp(1.0, total);
          const double trunc = smooth ? h * h / 6 * std::ldexp(1.0, total + 3) : 0.0;
          const double round = std::pow(n + 1.0, static_cast<double>(rank)) * 2.2e-16 * fmax / h;
          worst.add(std::fabs(fd - want), trunc + 4 * round);
          EXPECT_NEAR(fd, want, trunc + 4 * round)
              << rank << "-D degree " << n << " " << sv::boundary_name(b) << " alpha "
              << order_text(alpha) << " axis " << a;
        }
      }
}

// ---- Polynomial reproduction ------------------------------------------------------------------

// A degree-n spline interpolating the samples of a polynomial of degree <= n per axis reproduces
// it exactly on the infinite grid; with a boundary mode the difference decays like |z_max|^k
// from the borders, so at least 50 samples in it is below 1e-11 for every degree (0.535^50 ~
// 3e-14 for degree 7). There the derivatives of every multi-index, pointwise and as filters,
// are the polynomial's.
TEST(Derivative, ReproducesPolynomialsAndTheirDerivatives) {
  const std::uint32_t seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  Worst worst{"polynomial reproduction"};
  for (std::size_t rank = 1; rank <= 2; ++rank)
    for (int n = 1; n <= 7; ++n)
      for (Boundary b : {Boundary::Reflect, Boundary::Mirror, Boundary::Nearest}) {
        const std::size_t len = 120;
        const double centre = 60, scale = 60;
        // p(x) = prod_d sum_i a[d][i] t_d^i, t = (x - centre) / scale, degree n per axis.
        std::vector<std::vector<double>> a(rank, std::vector<double>(n + 1));
        for (auto& row : a)
          for (double& v : row) v = std::uniform_real_distribution<double>(-1, 1)(rng);
        auto poly = [&](std::size_t d, double x, int m) {  // m-th derivative of factor d in x
          const double t = (x - centre) / scale;
          double s = 0;
          for (int i = m; i <= n; ++i) {
            double coef = a[d][i];
            for (int k = 0; k < m; ++k) coef *= (i - k);
            s += coef * std::pow(t, i - m);
          }
          return s / std::pow(scale, m);
        };
        std::vector<std::size_t> dims(rank, len);
        Array<double> f(dims, 1);
        for (std::size_t p = 0; p < f.points(); ++p) {
          double v = 1;
          std::size_t q = p;
          for (std::size_t d = rank; d-- > 0;) {
            v *= poly(d, static_cast<double>(q % len), 0);
            q /= len;
          }
          f[p] = v;
        }
        sv::DerivativeOptions opt;
        opt.degree = n;
        opt.boundary = b;
        const sv::SplineDerivatives<double> s(f, opt);
        for (int trial = 0; trial < 4; ++trial) {
          const std::vector<int> order = random_order(rank, n, rng);
          std::vector<double> x(rank);
          double want = 1;
          for (std::size_t d = 0; d < rank; ++d) {
            x[d] = std::uniform_real_distribution<double>(55, 65)(rng);
            want *= poly(d, x[d], order[d]);
          }
          double got = 0;
          s.partial(order, x.data(), 1, &got);
          worst.add(std::fabs(got - want), 1e-10);
          EXPECT_NEAR(got, want, 1e-10) << rank << "-D degree " << n << " " << sv::boundary_name(b)
                                        << " order " << order_text(order);
          // The filter at the grid points 55..65.
          const Array<double> g = sv::derivative_filter(f, order, opt);
          for (std::size_t j = 55; j <= 65; j += 5) {
            std::size_t flat = 0;
            double w = 1;
            for (std::size_t d = 0; d < rank; ++d) {
              flat = flat * len + j;
              w *= poly(d, static_cast<double>(j), order[d]);
            }
            worst.add(std::fabs(g[flat] - w), 1e-10);
            EXPECT_NEAR(g[flat], w, 1e-10)
                << "filter, " << rank << "-D degree " << n << " " << sv::boundary_name(b)
                << " order " << order_text(order) << " at " << j;
          }
        }
      }
}

// ---- Filters ----------------------------------------------------------------------------------

// 1 / B_n(pi) = 1 / sum_k (-1)^k beta_n(k): the l1 norm of the degree-n prefilter (its gain at
// the Nyquist frequency), for the tolerances.
double prefilter_gain(int n) {
  double s = 0;
  for (int k = -4; k <= 4; ++k) s += ((k % 2) ? -1.0 : 1.0) * sv::bspline(n, k);
  return 1 / s;
}

// Every point of the filter output equals the pointwise derivative at that grid point: double
// to 1e-13 of the coefficient-difference scale, float (passes stored in float) to a few float
// ulp of it; every mode, degrees 0..7, 1-3 D, 1-2 channels, samples and coefficients.
template <class T>
void filter_equals_pointwise(double rel) {
  const std::uint32_t seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  Worst worst{sizeof(T) == 4 ? "filter vs pointwise, float" : "filter vs pointwise, double"};
  for (std::size_t rank = 1; rank <= 3; ++rank)
    for (int n = 0; n <= 7; ++n)
      for (Boundary b : every_mode())
        for (bool coeffs : {false, true}) {
          const auto dims = random_dims(rank, rng, 1, rank == 3 ? 7 : 15);
          const std::size_t ch = 1 + rng() % 2;
          const Array<T> in = svtest::random_array<T>(dims, ch, next_seed(rng), -1, 1);
          sv::DerivativeOptions opt;
          opt.degree = n;
          opt.boundary = b;
          opt.cval = 0.4;
          opt.input_is_coefficients = coeffs;
          opt.threads = 1 + static_cast<unsigned>(rng() % 3);
          const std::vector<int> order = random_order(rank, n, rng);
          const Array<T> g = sv::derivative_filter(in, order, opt);
          ASSERT_EQ(g.dims(), in.dims());
          ASSERT_EQ(g.channels(), in.channels());
          const sv::SplineDerivatives<T> s(in, opt);
          std::vector<double> pos;
          std::vector<std::size_t> at(rank, 0);
          for (std::size_t p = 0; p < in.points(); ++p) {
            for (std::size_t d = 0; d < rank; ++d) pos.push_back(static_cast<double>(at[d]));
            for (std::size_t d = rank; d-- > 0;)
              if (++at[d] < dims[d])
                break;
              else
                at[d] = 0;
          }
          std::vector<double> want(in.size());
          s.partial(order, pos.data(), in.points(), want.data());
          // Coefficients of samples in [-1, 1] are at most 1 / B_n(pi) per axis (the l1 norm
          // of the prefilter), and each difference at most doubles them.
          int total = 0;
          for (int o : order) total += o;
          const double scale = std::ldexp(
              coeffs ? 1.0 : std::pow(prefilter_gain(n), static_cast<double>(rank)), total);
          for (std::size_t i = 0; i < g.size(); ++i) {
            worst.add(std::fabs(static_cast<double>(g[i]) - want[i]), rel * scale);
            ASSERT_NEAR(static_cast<double>(g[i]), want[i], rel * scale)
                << rank << "-D " << sv::describe_shape(dims, ch) << " degree " << n << " "
                << sv::boundary_name(b) << (coeffs ? " coefficients" : " samples") << " order "
                << order_text(order) << " element " << i;
          }
        }
}

TEST(Derivative, FilterEqualsPointwiseAtTheGridPointsDouble) {
  filter_equals_pointwise<double>(1e-13);
}
TEST(Derivative, FilterEqualsPointwiseAtTheGridPointsFloat) {
  filter_equals_pointwise<float>(3e-6);
}

// The order-0 filter of samples is the indirect transform of their coefficients: the samples
// again (the interpolation property), every mode and degree.
TEST(Derivative, OrderZeroFilterReturnsTheSamples) {
  const std::uint32_t seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (std::size_t rank = 1; rank <= 3; ++rank)
    for (int n = 0; n <= 7; ++n)
      for (Boundary b : every_mode()) {
        const Array<double> f =
            svtest::random_array<double>(random_dims(rank, rng, 1, 10), 1, next_seed(rng), 0, 255);
        sv::DerivativeOptions opt;
        opt.degree = n;
        opt.boundary = b;
        const Array<double> g = sv::derivative_filter(f, std::vector<int>(rank, 0), opt);
        EXPECT_LE(max_abs([&] {
                    Array<double> d = g;
                    for (std::size_t i = 0; i < d.size(); ++i) d[i] -= f[i];
                    return d;
                  }()),
                  255 * 1e-13)
            << rank << "-D degree " << n << " " << sv::boundary_name(b);
      }
}

// Gradient components are the first-order filters, the Hessian's the second-order ones (and the
// pointwise Hessian is symmetric and equals them at the grid points), the Laplacian the sum of
// the pure second derivatives, the gradient magnitude the root of the sum of squares.
TEST(Derivative, GradientHessianLaplacianMagnitudeFollowTheirDefinitions) {
  const std::uint32_t seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (std::size_t rank = 1; rank <= 3; ++rank)
    for (int n = 2; n <= 5; ++n)
      for (Boundary b : {Boundary::Reflect, Boundary::Mirror, Boundary::Periodic}) {
        const auto dims = random_dims(rank, rng, 2, rank == 3 ? 8 : 14);
        const Array<double> f = svtest::random_array<double>(dims, 1, next_seed(rng), -1, 1);
        sv::DerivativeOptions opt;
        opt.degree = n;
        opt.boundary = b;
        const auto grad = sv::gradient_filter(f, opt);
        const auto hess = sv::hessian_filter(f, opt);
        const Array<double> lap = sv::laplacian_filter(f, opt);
        const Array<double> mag = sv::gradient_magnitude_filter(f, opt);
        ASSERT_EQ(grad.size(), rank);
        ASSERT_EQ(hess.size(), rank * (rank + 1) / 2);
        std::vector<double> lap_sum(f.size(), 0.0), mag_sum(f.size(), 0.0);
        for (std::size_t a = 0; a < rank; ++a) {
          std::vector<int> o(rank, 0);
          o[a] = 1;
          const Array<double> ga = sv::derivative_filter(f, o, opt);
          for (std::size_t i = 0; i < f.size(); ++i) {
            EXPECT_EQ(grad[a][i], ga[i]);
            mag_sum[i] += ga[i] * ga[i];
          }
          for (std::size_t c = a; c < rank; ++c) {
            std::vector<int> o2(rank, 0);
            ++o2[a];
            ++o2[c];
            const Array<double> h = sv::derivative_filter(f, o2, opt);
            const auto& got = hess[sv::hessian_index(a, c, rank)];
            EXPECT_EQ(sv::hessian_index(a, c, rank), sv::hessian_index(c, a, rank));
            for (std::size_t i = 0; i < f.size(); ++i) EXPECT_EQ(got[i], h[i]);
            if (a == c)
              for (std::size_t i = 0; i < f.size(); ++i) lap_sum[i] += h[i];
          }
        }
        for (std::size_t i = 0; i < f.size(); ++i) {
          EXPECT_NEAR(lap[i], lap_sum[i], 1e-13 * 64);
          EXPECT_NEAR(mag[i], std::sqrt(mag_sum[i]), 1e-13 * 16);
        }
        // Pointwise Hessian at the grid points: symmetric, equal to the filter components.
        const sv::SplineDerivatives<double> s(f, opt);
        std::vector<double> x(rank), hpt(rank * rank), gpt(rank);
        for (int trial = 0; trial < 5; ++trial) {
          std::size_t flat = 0;
          for (std::size_t d = 0; d < rank; ++d) {
            const std::size_t j = rng() % dims[d];
            x[d] = static_cast<double>(j);
            flat = flat * dims[d] + j;
          }
          s.hessian(x.data(), 1, hpt.data());
          s.gradient(x.data(), 1, gpt.data());
          for (std::size_t a = 0; a < rank; ++a) {
            EXPECT_NEAR(gpt[a], grad[a][flat], 1e-12);
            for (std::size_t c = 0; c < rank; ++c) {
              EXPECT_EQ(hpt[a * rank + c], hpt[c * rank + a]);
              EXPECT_NEAR(hpt[a * rank + c], hess[sv::hessian_index(a, c, rank)][flat], 1e-11);
            }
          }
        }
      }
}

// The two-stage filter of one axis is the FIR beta_n^(m)(j - k) at integers: for the cubic,
// order 1 is the centred difference (c[j+1] - c[j-1]) / 2 and order 2 the second difference
// c[j+1] - 2 c[j] + c[j-1] (the thesis's [1, -2, 1]), order 3 the right-hand third difference
// c[j+2] - 3 c[j+1] + 3 c[j] - c[j-1].
TEST(Derivative, CubicFiltersAreTheKnownDifferences) {
  const std::uint32_t seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const Array<double> c = svtest::random_array<double>({20}, 1, next_seed(rng), -1, 1);
  sv::DerivativeOptions opt;
  opt.boundary = Boundary::Periodic;
  opt.input_is_coefficients = true;
  const Array<double> d1 = sv::derivative_filter(c, {1}, opt);
  const Array<double> d2 = sv::derivative_filter(c, {2}, opt);
  const Array<double> d3 = sv::derivative_filter(c, {3}, opt);
  auto at = [&](long k) { return c[static_cast<std::size_t>((k + 20) % 20)]; };
  for (long j = 0; j < 20; ++j) {
    const auto i = static_cast<std::size_t>(j);
    EXPECT_NEAR(d1[i], (at(j + 1) - at(j - 1)) / 2, 1e-15);
    EXPECT_NEAR(d2[i], at(j + 1) - 2 * at(j) + at(j - 1), 1e-15);
    EXPECT_NEAR(d3[i], at(j + 2) - 3 * at(j + 1) + 3 * at(j) - at(j - 1), 4e-15);
  }
}

// A multi-threaded filter gives the same bits as one thread (lines are independent).
TEST(Derivative, FilterIsThreadCountIndependent) {
  const Array<float> f = svtest::random_array<float>({23, 41, 37}, 1, 7, 0, 1);
  sv::DerivativeOptions opt;
  opt.threads = 1;
  const Array<float> one = sv::laplacian_filter(f, opt);
  opt.threads = 3;
  const Array<float> three = sv::laplacian_filter(f, opt);
  EXPECT_EQ(one.vec(), three.vec());
}

TEST(Derivative, RefusesOrdersAboveTheDegreeAndWrongRanks) {
  const Array<double> f = svtest::random_array<double>({5, 6}, 1, 3);
  sv::DerivativeOptions opt;
  auto message = [](auto&& fn) {
    try {
      fn();
    } catch (const sv::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] {
              sv::derivative_filter(f, {4, 0}, opt);
            }).find("above the spline's degree 3"),
            std::string::npos);
  EXPECT_NE(message([&] { sv::derivative_filter(f, {1}, opt); }).find("one per axis"),
            std::string::npos);
  EXPECT_NE(message([&] {
              sv::derivative_filter(f, {-1, 0}, opt);
            }).find("0 or more"),
            std::string::npos);
  opt.degree = 1;
  EXPECT_NE(message([&] { sv::laplacian_filter(f, opt); }).find("second derivatives"),
            std::string::npos);
  EXPECT_NE(message([&] { sv::hessian_filter(f, opt); }).find("second derivatives"),
            std::string::npos);
  opt.degree = 0;
  EXPECT_NE(message([&] { sv::gradient_filter(f, opt); }).find("no derivative"), std::string::npos);
  opt.degree = 8;
  EXPECT_NE(message([&] {
              sv::derivative_filter(f, {0, 0}, opt);
            }).find("degree"),
            std::string::npos);
  opt.degree = 3;
  const sv::SplineDerivatives<double> s(f, opt);
  const double bad[2] = {std::nan(""), 1};
  double out = 0;
  EXPECT_NE(message([&] {
              s.partial({1, 0}, bad, 1, &out);
            }).find("non-finite"),
            std::string::npos);
}

}  // namespace
