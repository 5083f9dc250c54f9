// GRBF interpolation (grbf.h) against independent oracles: the interpolation property, a dense
// long-double solve of the whole grid's kernel matrix (Gaussian elimination written here), the
// condition numbers from power and inverse iteration on the dense Kronecker matrix, the derived
// truncation bound against the untruncated sum, the refusals, channels, float against double,
// and the published blocked scheme's seams on a step edge (absent from the exact solve).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "splineview/error.h"
#include "splineview/grbf.h"
#include "test_util.h"

namespace {

using sv::Array;
using ld = long double;

constexpr double kPi = 3.14159265358979323846;

std::vector<std::size_t> coords_of(std::size_t i, const std::vector<std::size_t>& dims) {
  std::vector<std::size_t> c(dims.size());
  for (std::size_t d = dims.size(); d-- > 0;) {
    c[d] = i % dims[d];
    i /= dims[d];
  }
  return c;
}

std::size_t points_of(const std::vector<std::size_t>& dims) {
  std::size_t n = 1;
  for (std::size_t d : dims) n *= d;
  return n;
}

// The whole grid's kernel matrix, built here from the definition (not grbf_dense_matrix).
std::vector<ld> kernel_matrix(const std::vector<std::size_t>& dims, const std::vector<double>& s,
                              double ridge = 0) {
  const std::size_t n = points_of(dims);
  std::vector<ld> a(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const auto ci = coords_of(i, dims), cj = coords_of(j, dims);
      ld v = 1;
      for (std::size_t d = 0; d < dims.size(); ++d) {
        const ld t = static_cast<ld>(ci[d]) - static_cast<ld>(cj[d]);
        v *= std::exp(-t * t / (2.0L * s[d] * s[d])) + (ci[d] == cj[d] ? ridge : 0.0L);
      }
      a[i * n + j] = v;
    }
  return a;
}

// Gaussian elimination with partial pivoting in long double: solves A x = b (b: n x k).
std::vector<ld> dense_solve(std::vector<ld> a, std::vector<ld> b, std::size_t n, std::size_t k) {
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t p = c;
    for (std::size_t i = c + 1; i < n; ++i)
      if (std::fabs(a[i * n + c]) > std::fabs(a[p * n + c])) p = i;
    for (std::size_t j = 0; j < n; ++j) std::swap(a[c * n + j], a[p * n + j]);
    for (std::size_t j = 0; j < k; ++j) std::swap(b[c * k + j], b[p * k + j]);
    for (std::size_t i = c + 1; i < n; ++i) {
      const ld f = a[i * n + c] / a[c * n + c];
      for (std::size_t j = c; j < n; ++j) a[i * n + j] -= f * a[c * n + j];
      for (std::size_t j = 0; j < k; ++j) b[i * k + j] -= f * b[c * k + j];
    }
  }
  for (std::size_t i = n; i-- > 0;)
    for (std::size_t j = 0; j < k; ++j) {
      ld s = b[i * k + j];
      for (std::size_t m = i + 1; m < n; ++m) s -= a[i * n + m] * b[m * k + j];
      b[i * k + j] = s / a[i * n + i];
    }
  return b;
}

// s(x) summed over every sample in long double from the weights.
template <class T>
ld full_sum(const Array<T>& w, const std::vector<double>& s, const double* x, std::size_t c) {
  const std::size_t n = w.points();
  ld acc = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto ci = coords_of(i, w.dims());
    ld e = 0;
    for (std::size_t d = 0; d < w.rank(); ++d) {
      const ld t = static_cast<ld>(x[d]) - static_cast<ld>(ci[d]);
      e += t * t / (2.0L * s[d] * s[d]);
    }
    acc += static_cast<ld>(w[i * w.channels() + c]) * std::exp(-e);
  }
  return acc;
}

double unit_roundoff(bool single) {
  return single ? std::numeric_limits<float>::epsilon() / 2
                : std::numeric_limits<double>::epsilon() / 2;
}

double gamma(double k, double u) {
  return k * u / (1 - k * u);
}

double sum_bound(double sigma) {
  return 1 + std::sqrt(2 * kPi) * sigma;
}

// The interpolation residual of the separable Cholesky solve. Along one axis the computed
// weights satisfy (A_d + dA_d) w = f with |dA_d| <= gamma_k |L_d||L_d^T| (Higham, "Accuracy and
// Stability of Numerical Algorithms", Thms 8.5 and 10.4, k the terms per row, here the factor's
// band), so the residual of that axis is at most gamma_k (|L||L^T| |w|); we take k = 16 per axis
// and the row sums of |L||L^T| as S_d (they are within a few percent of A's for these Gaussian
// matrices: an empirical constant, checked by this test), and add the evaluation's rounding
// (gamma_64 prod S_d max|w|) and the truncation bound.
template <class T>
double interpolation_tol(const sv::GrbfWeights<T>& g) {
  const double u = unit_roundoff(sizeof(T) == 4);
  double prod = 1;
  for (double s : g.sigma) prod *= sum_bound(s);
  const double rank = static_cast<double>(g.sigma.size());
  return g.truncation_bound + (rank * gamma(16, u) + gamma(64, u)) * prod * g.max_abs_weight;
}

template <class T>
void check_interpolates(const std::vector<std::size_t>& dims, std::size_t channels,
                        const std::vector<double>& sigma, std::uint32_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed) + " rank " + std::to_string(dims.size()) + " sigma " +
               std::to_string(sigma[0]));
  const Array<T> f = svtest::random_array<T>(dims, channels, seed, -1, 1);
  sv::GrbfOptions o;
  o.sigma = sigma;
  const auto g = sv::grbf_solve(f, o);
  const std::size_t n = f.points(), rank = dims.size();
  std::vector<double> pos(n * rank), out(n * channels);
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = coords_of(i, dims);
    for (std::size_t d = 0; d < rank; ++d) pos[i * rank + d] = static_cast<double>(c[d]);
  }
  sv::grbf_sample(g, pos.data(), n, out.data());
  const double tol = interpolation_tol(g);
  double worst = 0;
  for (std::size_t i = 0; i < f.size(); ++i)
    worst = std::max(worst, std::fabs(out[i] - static_cast<double>(f[i])));
  EXPECT_LE(worst, tol);
  std::printf("[grbf] interpolates %s rank %zu sigma %.2f: worst |s(k) - f[k]| %.3g (bound %.3g)\n",
              sizeof(T) == 4 ? "float" : "double", rank, sigma[0], worst, tol);
}

TEST(Grbf, InterpolatesTheSamples) {
  std::mt19937 rng(svtest::fresh_seed());  // 32-bit draws
  std::uniform_real_distribution<double> us(0.5, 1.2);
  for (int rep = 0; rep < 2; ++rep) {
    check_interpolates<double>({37}, 1, {us(rng)}, static_cast<std::uint32_t>(rng()));
    check_interpolates<double>({13, 19}, 2, {us(rng), us(rng)}, static_cast<std::uint32_t>(rng()));
    check_interpolates<double>({7, 9, 11}, 1, {us(rng)}, static_cast<std::uint32_t>(rng()));
    check_interpolates<float>({41}, 3, {us(rng)}, static_cast<std::uint32_t>(rng()));
    check_interpolates<float>({16, 12}, 1, {1.0}, static_cast<std::uint32_t>(rng()));
    check_interpolates<float>({6, 8, 10}, 1, {1.0, 0.8, 0.9}, static_cast<std::uint32_t>(rng()));
  }
}

// The whole grid's dense system solved here in long double.
void check_dense(const std::vector<std::size_t>& dims, const std::vector<double>& sigma,
                 double ridge, std::uint32_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed) + " rank " + std::to_string(dims.size()));
  const Array<double> f = svtest::random_array<double>(dims, 1, seed, -1, 1);
  sv::GrbfOptions o;
  o.sigma = sigma;
  o.ridge = ridge;
  const auto g = sv::grbf_solve(f, o);
  const std::size_t n = f.points();
  std::vector<ld> b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = f[i];
  const std::vector<ld> w = dense_solve(kernel_matrix(dims, g.sigma, ridge), b, n, 1);
  ld wmax = 0, err = 0;
  for (std::size_t i = 0; i < n; ++i) {
    wmax = std::max(wmax, std::fabs(w[i]));
    err = std::max(err, std::fabs(w[i] - static_cast<ld>(g.w[i])));
  }
  // Forward error of a backward-stable solve: relative error <= cond * (backward error), with
  // the backward error of interpolation_tol (relative to max|w|).
  const double u = unit_roundoff(false);
  double bw = 0;
  for (std::size_t d = 0; d < dims.size(); ++d)
    bw += gamma(3.0 * static_cast<double>(dims[d]) + 1, u) * 2 * sum_bound(g.sigma[d]);
  const double tol = g.system.condition * bw * static_cast<double>(wmax) * std::sqrt(double(n));
  EXPECT_LE(static_cast<double>(err), tol);
  // Off the grid: the truncated sum vs the long-double sum of the oracle's weights.
  std::mt19937 rng(seed);
  double worst = 0, worst_tol = 0;
  for (int k = 0; k < 50; ++k) {
    std::vector<double> x(dims.size());
    for (std::size_t d = 0; d < dims.size(); ++d)
      x[d] = std::uniform_real_distribution<double>(-1.5, double(dims[d]) + 0.5)(rng);
    double v = 0;
    sv::grbf_sample(g, x.data(), 1, &v);
    Array<ld> wo(dims, 1);
    for (std::size_t i = 0; i < n; ++i) wo[i] = w[i];
    const double ref = static_cast<double>(full_sum(wo, g.sigma, x.data(), 0));
    // |dw| summed against the kernel (<= prod S_d max|dw|), the truncation and the rounding.
    double prod = 1;
    for (double s : g.sigma) prod *= sum_bound(s);
    const double t = prod * tol + g.truncation_bound + gamma(64, u) * prod * g.max_abs_weight;
    worst = std::max(worst, std::fabs(v - ref));
    worst_tol = std::max(worst_tol, t);
    EXPECT_LE(std::fabs(v - ref), t);
  }
  std::printf("[grbf] dense oracle rank %zu: weights %.3g (bound %.3g), values %.3g (bound %.3g)\n",
              dims.size(), static_cast<double>(err), tol, worst, worst_tol);
}

TEST(Grbf, MatchesDenseSolveOfTheWholeGrid) {
  std::mt19937 rng(svtest::fresh_seed());  // 32-bit draws
  check_dense({23}, {1.3}, 0, static_cast<std::uint32_t>(rng()));
  check_dense({7, 9}, {1.0}, 0, static_cast<std::uint32_t>(rng()));
  check_dense({6, 11}, {0.7, 1.4}, 0, static_cast<std::uint32_t>(rng()));
  check_dense({4, 5, 6}, {1.0}, 0, static_cast<std::uint32_t>(rng()));
  check_dense({5, 4, 6}, {0.9, 1.1, 1.2}, 0, static_cast<std::uint32_t>(rng()));
  // The ridge: (A_0 + r I) (x) (A_1 + r I), built here per axis.
  check_dense({8, 7}, {1.8}, 1e-3, static_cast<std::uint32_t>(rng()));
}

// Largest and smallest eigenvalues of a symmetric matrix: power iteration, and power iteration
// on the inverse through the long-double solve above.
std::pair<double, double> dense_extremes(const std::vector<ld>& a, std::size_t n) {
  std::vector<ld> v(n), nv(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = 1 + 0.01L * static_cast<ld>(i % 7);
  ld lmax = 0;
  for (int it = 0; it < 3000; ++it) {
    ld norm = 0;
    for (std::size_t i = 0; i < n; ++i) {
      ld s = 0;
      for (std::size_t j = 0; j < n; ++j) s += a[i * n + j] * v[j];
      nv[i] = s;
      norm += s * s;
    }
    norm = std::sqrt(norm);
    lmax = norm;
    for (std::size_t i = 0; i < n; ++i) v[i] = nv[i] / norm;
  }
  for (std::size_t i = 0; i < n; ++i) v[i] = (i % 2 ? -1 : 1) * (1 + 0.01L * (i % 5));
  ld inv_max = 0;
  for (int it = 0; it < 300; ++it) {
    nv = dense_solve(a, v, n, 1);
    ld norm = 0;
    for (ld x : nv) norm += x * x;
    norm = std::sqrt(norm);
    inv_max = norm;
    for (std::size_t i = 0; i < n; ++i) v[i] = nv[i] / norm;
  }
  return {static_cast<double>(1 / inv_max), static_cast<double>(lmax)};
}

TEST(Grbf, ConditionNumbersMatchDenseEigenvalues) {
  struct Case {
    std::vector<std::size_t> dims;
    std::vector<double> sigma;
    double ridge;
  };
  for (const Case& c :
       {Case{{9}, {1.0}, 0.0}, Case{{6, 7}, {1.0}, 0.0}, Case{{5, 6}, {0.8, 1.3}, 0},
        Case{{3, 4, 5}, {1.0}, 0.0}, Case{{12}, {1.7}, 0.0}, Case{{6, 6}, {1.5}, 1e-2}}) {
    sv::GrbfOptions o;
    o.sigma = c.sigma;
    o.ridge = c.ridge;
    const sv::GrbfSystem s = sv::grbf_system(c.dims, o);
    const std::size_t n = points_of(c.dims);
    const auto [mn, mx] = dense_extremes(
        kernel_matrix(c.dims, sv::grbf_sigma_per_axis(c.sigma, c.dims.size()), c.ridge), n);
    EXPECT_NEAR(s.condition, mx / mn, 1e-6 * (mx / mn)) << "dims " << c.dims.size();
    double prod_max = 1, prod_min = 1;
    for (const auto& a : s.axes) {
      EXPECT_TRUE(a.exact);
      prod_max *= a.lambda_max;
      prod_min *= a.lambda_min;
    }
    EXPECT_NEAR(prod_max, mx, 1e-9 * mx);
    EXPECT_NEAR(prod_min, mn, 1e-6 * mn);
  }
}

TEST(Grbf, RefusesSystemsSingularInTheWorkingPrecision) {
  const Array<float> f = svtest::random_array<float>({20, 20}, 1, 7);
  sv::GrbfOptions o;
  o.sigma = {2.0};
  try {
    sv::grbf_solve(f, o);
    FAIL() << "sigma 2 in float was accepted";
  } catch (const sv::Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("sigma 2"), std::string::npos) << m;
    EXPECT_NE(m.find("condition number"), std::string::npos) << m;
    EXPECT_NE(m.find("float"), std::string::npos) << m;
    EXPECT_NE(m.find("ridge"), std::string::npos) << m;
  }
  // The same system is fine in double; sigma 3 is not.
  const Array<double> fd = Array<double>::from(f);
  EXPECT_NO_THROW(sv::grbf_solve(fd, o));
  o.sigma = {3.0};
  EXPECT_THROW(sv::grbf_solve(fd, o), sv::Error);
  // A ridge regularises it: accepted, with the smaller condition number reported.
  o.ridge = 1e-3;
  const auto g = sv::grbf_solve(fd, o);
  EXPECT_LT(g.system.condition * std::numeric_limits<double>::epsilon(), sv::kGrbfSingularLimit);
  // The refusal rule itself: cond * eps against the limit, with the reported condition.
  o = {};
  o.sigma = {1.0};
  const auto s3 = sv::grbf_system({10, 10, 10}, o);
  EXPECT_LT(s3.condition * std::numeric_limits<float>::epsilon(), sv::kGrbfSingularLimit);
  // Bad arguments.
  o.sigma = {1.0, 1.0, 1.0};
  EXPECT_THROW(sv::grbf_solve(fd, o), sv::Error);  // three sigmas for two axes
  o.sigma = {0.0};
  EXPECT_THROW(sv::grbf_solve(fd, o), sv::Error);
  o.sigma = {1.0};
  o.ridge = -1;
  EXPECT_THROW(sv::grbf_solve(fd, o), sv::Error);
  o.ridge = 0;
  Array<double> bad = fd;
  bad[5] = std::numeric_limits<double>::quiet_NaN();
  try {
    sv::grbf_solve(bad, o);
    FAIL();
  } catch (const sv::Error& e) {
    EXPECT_NE(std::string(e.what()).find("NaN"), std::string::npos);
  }
}

TEST(Grbf, TruncatedSumWithinItsDerivedBound) {
  std::mt19937 rng(svtest::fresh_seed());  // 32-bit draws
  for (double sigma : {0.6, 1.0, 1.4}) {
    const Array<double> f =
        svtest::random_array<double>({160}, 1, static_cast<std::uint32_t>(rng()), -1, 1);
    sv::GrbfOptions o;
    o.sigma = {sigma};
    const auto g = sv::grbf_solve(f, o);
    ASSERT_LT(g.radius[0], 60.0) << "nothing would be truncated";
    sv::GrbfEvalOptions full;
    full.truncate = false;
    const double u = unit_roundoff(false);
    for (int k = 0; k < 200; ++k) {
      const double x = std::uniform_real_distribution<double>(-3, 163)(rng);
      double a = 0, b = 0;
      sv::grbf_sample(g, &x, 1, &a);
      sv::grbf_sample(g, &x, 1, &b, full);
      // Rounding of both sums: gamma_{n} sum_k |w_k| g(x - k) <= gamma_n S max|w|.
      const double rounding = 2 * gamma(162, u) * sum_bound(sigma) * g.max_abs_weight;
      EXPECT_LE(std::fabs(a - b), g.truncation_bound + rounding) << "x " << x;
    }
    // The bound keeps what it promises: at most u max|f|.
    EXPECT_LE(g.truncation_bound, u * g.max_abs_sample);
  }
  // 2-D, anisotropic: the box per axis.
  const Array<double> f =
      svtest::random_array<double>({50, 70}, 1, static_cast<std::uint32_t>(rng()), -1, 1);
  sv::GrbfOptions o;
  o.sigma = {0.7, 1.2};
  const auto g = sv::grbf_solve(f, o);
  EXPECT_LT(g.radius[0], g.radius[1]);
  sv::GrbfEvalOptions full;
  full.truncate = false;
  for (int k = 0; k < 50; ++k) {
    const double x[2] = {std::uniform_real_distribution<double>(-2, 51)(rng),
                         std::uniform_real_distribution<double>(-2, 71)(rng)};
    double a = 0, b = 0;
    sv::grbf_sample(g, x, 1, &a);
    sv::grbf_sample(g, x, 1, &b, full);
    const double rounding =
        2 * gamma(3600, unit_roundoff(false)) * sum_bound(0.7) * sum_bound(1.2) * g.max_abs_weight;
    EXPECT_LE(std::fabs(a - b), g.truncation_bound + rounding);
  }
}

TEST(Grbf, ChannelsAreIndependentSolves) {
  const std::uint32_t seed = svtest::fresh_seed();
  const Array<double> f = svtest::random_array<double>({9, 13}, 3, seed, -1, 1);
  sv::GrbfOptions o;
  o.sigma = {0.9, 1.1};
  const auto g = sv::grbf_solve(f, o);
  for (std::size_t c = 0; c < 3; ++c) {
    Array<double> one({9, 13}, 1);
    for (std::size_t i = 0; i < one.size(); ++i) one[i] = f[i * 3 + c];
    const auto gc = sv::grbf_solve(one, o);
    for (std::size_t i = 0; i < one.size(); ++i) EXPECT_EQ(gc.w[i], g.w[i * 3 + c]);
  }
  // The grid evaluation equals the pointwise one, channel by channel.
  const std::vector<std::vector<double>> axes{{-0.5, 0.25, 4.0, 8.75}, {0.0, 3.3, 12.0}};
  const Array<double> grid = sv::grbf_grid(g, axes);
  ASSERT_EQ(grid.dims(), (std::vector<std::size_t>{4, 3}));
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 3; ++j) {
      const double x[2] = {axes[0][i], axes[1][j]};
      double v[3];
      sv::grbf_sample(g, x, 1, v);
      for (std::size_t c = 0; c < 3; ++c)
        EXPECT_NEAR(grid.at2(i, j, c), v[c], 1e-13 * g.max_abs_weight);
    }
}

TEST(Grbf, FloatAgreesWithDoubleWithinTheDerivedBound) {
  std::mt19937 rng(svtest::fresh_seed());  // 32-bit draws
  for (const auto& dims : {std::vector<std::size_t>{64}, std::vector<std::size_t>{20, 24},
                           std::vector<std::size_t>{8, 9, 10}}) {
    const Array<float> ff =
        svtest::random_array<float>(dims, 1, static_cast<std::uint32_t>(rng()), -1, 1);
    const Array<double> fd = Array<double>::from(ff);  // the same numbers
    sv::GrbfOptions o;
    o.sigma = {1.0};
    const auto gf = sv::grbf_solve(ff, o);
    const auto gd = sv::grbf_solve(fd, o);
    // |w_f - w_d| <= cond * backward error (float) * |w| (norm-wise, sqrt(N) from inf to 2).
    const double u = unit_roundoff(true);
    double bw = 0, prod = 1;
    for (std::size_t d = 0; d < dims.size(); ++d) {
      bw += gamma(3.0 * static_cast<double>(dims[d]) + 1, u) * 2 * sum_bound(1.0);
      prod *= sum_bound(1.0);
    }
    const double wtol =
        gd.system.condition * bw * gd.max_abs_weight * std::sqrt(static_cast<double>(ff.points()));
    double werr = 0;
    for (std::size_t i = 0; i < ff.size(); ++i)
      werr = std::max(werr, std::fabs(double(gf.w[i]) - gd.w[i]));
    EXPECT_LE(werr, wtol);
    double serr = 0;
    for (int k = 0; k < 100; ++k) {
      std::vector<double> x(dims.size());
      for (std::size_t d = 0; d < dims.size(); ++d)
        x[d] = std::uniform_real_distribution<double>(0, double(dims[d] - 1))(rng);
      double a = 0, b = 0;
      sv::grbf_sample(gf, x.data(), 1, &a);
      sv::grbf_sample(gd, x.data(), 1, &b);
      serr = std::max(serr, std::fabs(a - b));
      EXPECT_LE(std::fabs(a - b), prod * wtol + gf.truncation_bound + gd.truncation_bound +
                                      gamma(64, unit_roundoff(false)) * prod * gf.max_abs_weight);
    }
    std::printf("[grbf] float vs double rank %zu: weights %.3g (bound %.3g), values %.3g\n",
                dims.size(), werr, wtol, serr);
  }
}

TEST(Grbf, GaussianEliminationAsPublished) {
  const std::vector<std::size_t> dims{5, 6};
  const std::vector<double> a = sv::grbf_dense_matrix(dims, {1.0});
  const std::vector<ld> ref = kernel_matrix(dims, {1.0, 1.0});
  const std::size_t n = 30;
  for (std::size_t i = 0; i < n * n; ++i) EXPECT_NEAR(a[i], static_cast<double>(ref[i]), 1e-15);
  const std::vector<double> inv = sv::gauss_inverse(a, n);
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      ld s = 0;
      for (std::size_t k = 0; k < n; ++k) s += static_cast<ld>(inv[i * n + k]) * a[k * n + j];
      worst = std::max(worst, static_cast<double>(std::fabs(s - (i == j ? 1 : 0))));
    }
  EXPECT_LT(worst, 1e-10);
  std::vector<double> b(n * 2);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::sin(double(i));
  const std::vector<double> x = sv::gauss_solve(a, b, n, 2);
  std::vector<ld> bl(b.begin(), b.end());
  const std::vector<ld> xr = dense_solve(ref, bl, n, 2);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], double(xr[i]), 1e-10);
  std::vector<double> sing(4, 1.0);  // [[1, 1], [1, 1]]
  EXPECT_THROW(sv::gauss_inverse(sing, 2), sv::Error);
}

TEST(Grbf, BlockSpansFollowThePaper) {
  // 120 samples, blocks of 62 with one sample of overlap: tiles of 60, two blocks of 62.
  const auto s = sv::grbf_block_spans(120, 62, 1);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].start, 0u);
  EXPECT_EQ(s[0].size, 62u);
  EXPECT_EQ(s[1].start, 58u);
  EXPECT_EQ(s[1].size, 62u);
  EXPECT_EQ(s[0].ramp_lo, 59.0);  // the blend runs over the samples both blocks hold
  EXPECT_EQ(s[0].ramp_hi, 60.0);
  const auto h = sv::grbf_block_spans(120, 60, 0);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[1].start, 60u);
  EXPECT_EQ(h[0].ramp_lo, 59.5);
  EXPECT_THROW(sv::grbf_block_spans(100, 10, 5), sv::Error);
}

// A step edge across the border of two blocks: the non-overlapping blocked result jumps where
// the blocks meet, the exact solve is continuous there, and the stitched blocks reduce the jump
// and the error.
TEST(Grbf, BlockedSchemeShowsSeamsTheExactSolveDoesNot) {
  const std::size_t H = 24, W = 40;
  Array<double> f({H, W}, 1);
  for (std::size_t y = 0; y < H; ++y)
    for (std::size_t x = 0; x < W; ++x)
      f.at2(y, x) = double(x) + 0.6 * double(y) >= 25 ? 1.0 : 0.0;  // oblique edge
  sv::GrbfOptions o;
  o.sigma = {1.0};
  const auto exact = sv::grbf_solve(f, o);
  sv::GrbfBlockOptions bo;
  bo.sigma = {1.0};
  bo.block = {20};  // tiles of 20 along x (and 20 + 4 along y): a border at x = 19.5
  bo.overlap = 0;
  const auto blocked = sv::grbf_blocked_solve(f, bo);
  bo.block = {22};
  bo.overlap = 1;
  const auto stitched = sv::grbf_blocked_solve(f, bo);
  // Across the border x = 19.5 on a fine set of rows: the jump from 19.5 - d to 19.5 + d.
  const double d = 1e-7;
  double jump_exact = 0, jump_blocked = 0, jump_stitched = 0;
  double err_blocked = 0, err_stitched = 0;
  for (int k = 0; k <= 4 * 22; ++k) {
    const double y = 0.25 * k;
    const double p[4] = {y, 19.5 - d, y, 19.5 + d};
    double e[2], b[2], s[2];
    sv::grbf_sample(exact, p, 2, e);
    sv::grbf_blocked_sample(blocked, p, 2, b);
    sv::grbf_blocked_sample(stitched, p, 2, s);
    jump_exact = std::max(jump_exact, std::fabs(e[1] - e[0]));
    jump_blocked = std::max(jump_blocked, std::fabs(b[1] - b[0]));
    jump_stitched = std::max(jump_stitched, std::fabs(s[1] - s[0]));
    for (double xx = 17.0; xx <= 22.0; xx += 0.25) {
      const double q[2] = {y, xx};
      double ev, bv, sv_;
      sv::grbf_sample(exact, q, 1, &ev);
      sv::grbf_blocked_sample(blocked, q, 1, &bv);
      sv::grbf_blocked_sample(stitched, q, 1, &sv_);
      err_blocked = std::max(err_blocked, std::fabs(bv - ev));
      err_stitched = std::max(err_stitched, std::fabs(sv_ - ev));
    }
  }
  std::printf(
      "[grbf] step edge across a block border: jump exact %.3g, blocked %.3g, stitched %.3g; "
      "max |blocked - exact| %.3g, |stitched - exact| %.3g near the border\n",
      jump_exact, jump_blocked, jump_stitched, err_blocked, err_stitched);
  EXPECT_LT(jump_exact, 1e-5);    // continuous: slope * 2d
  EXPECT_GT(jump_blocked, 1e-3);  // a seam
  EXPECT_GT(jump_blocked, 100 * jump_exact);
  EXPECT_LT(jump_stitched, 1e-5);        // the blend is continuous
  EXPECT_LT(err_stitched, err_blocked);  // and closer to the exact solve
  // Each block interpolates its own samples, as published.
  for (std::size_t y = 0; y < H; y += 5)
    for (std::size_t x = 0; x < W; x += 3) {
      const double p[2] = {double(y), double(x)};
      double v;
      sv::grbf_blocked_sample(blocked, p, 1, &v);
      EXPECT_NEAR(v, f.at2(y, x), 1e-9);
    }
}

}  // namespace
