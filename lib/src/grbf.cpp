// GRBF interpolation on regular grids, the exact separable solve (grbf.h; docs/DESIGN.md,
// "GRBF interpolation"): one Cholesky factor per axis in double, the line solves in T, the
// spectrum of each axis's matrix for the condition number, the derived support radius and the
// truncated evaluation at positions and on tensor grids.
#include "splineview/grbf.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

#include "parallel.h"

namespace sv {
namespace {

constexpr double kPi = 3.14159265358979323846;

std::string fmt(double v, const char* f = "%.3g") {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string join(const std::vector<double>& v, const char* sep = ",") {
  if (std::all_of(v.begin(), v.end(), [&](double x) { return x == v[0]; }))
    return fmt(v[0], "%.6g");
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + fmt(v[i], "%.6g");
  return s;
}

// Householder reduction of a symmetric n x n matrix (row-major, overwritten) to tridiagonal
// form: diagonal d, off-diagonal e (n - 1 entries). Same eigenvalues.
void tridiagonalise(std::vector<double>& a, std::size_t n, std::vector<double>& d,
                    std::vector<double>& e) {
  d.assign(n, 0.0);
  e.assign(n > 0 ? n - 1 : 0, 0.0);
  std::vector<double> v(n), p(n);
  for (std::size_t k = 0; k + 2 < n; ++k) {
    const std::size_t m = n - k - 1;  // the trailing block a[k+1.., k+1..]
    double norm2 = 0;
    for (std::size_t i = 0; i < m; ++i) {
      v[i] = a[(k + 1 + i) * n + k];
      norm2 += v[i] * v[i];
    }
    const double norm = std::sqrt(norm2);
    if (norm == 0) {
      e[k] = 0;
      continue;
    }
    const double alpha = v[0] > 0 ? -norm : norm;
    v[0] -= alpha;
    double vv = 0;
    for (std::size_t i = 0; i < m; ++i) vv += v[i] * v[i];
    e[k] = alpha;
    if (vv == 0) continue;
    const double beta = 2.0 / vv;
    double vp = 0;
    for (std::size_t i = 0; i < m; ++i) {
      const double* row = &a[(k + 1 + i) * n + k + 1];
      double s = 0;
      for (std::size_t j = 0; j < m; ++j) s += row[j] * v[j];
      p[i] = beta * s;
      vp += v[i] * p[i];
    }
    const double kk = 0.5 * beta * vp;
    for (std::size_t i = 0; i < m; ++i) p[i] -= kk * v[i];  // q
    for (std::size_t i = 0; i < m; ++i) {
      double* row = &a[(k + 1 + i) * n + k + 1];
      for (std::size_t j = 0; j < m; ++j) row[j] -= v[i] * p[j] + p[i] * v[j];
    }
  }
  if (n >= 2) e[n - 2] = a[(n - 1) * n + (n - 2)];
  for (std::size_t i = 0; i < n; ++i) d[i] = a[i * n + i];
}

// Number of eigenvalues of the tridiagonal (d, e) below x (Sturm sequence).
std::size_t count_below(const std::vector<double>& d, const std::vector<double>& e, double x) {
  std::size_t count = 0;
  double q = 1;
  for (std::size_t i = 0; i < d.size(); ++i) {
    const double off = i ? e[i - 1] * e[i - 1] : 0.0;
    q = d[i] - x - (i ? off / q : 0.0);
    if (q == 0) q = -std::numeric_limits<double>::min();  // just below: counted
    if (q < 0) ++count;
  }
  return count;
}

// The smallest and largest eigenvalues of the tridiagonal by bisection.
std::pair<double, double> extreme_eigenvalues(const std::vector<double>& d,
                                              const std::vector<double>& e) {
  const std::size_t n = d.size();
  double lo = HUGE_VAL, hi = -HUGE_VAL;
  for (std::size_t i = 0; i < n; ++i) {
    const double r = (i ? std::fabs(e[i - 1]) : 0.0) + (i + 1 < n ? std::fabs(e[i]) : 0.0);
    lo = std::min(lo, d[i] - r);
    hi = std::max(hi, d[i] + r);
  }
  auto bisect = [&](std::size_t k) {  // the k-th smallest eigenvalue (count_below(x) >= k)
    double a = lo, b = hi;
    for (int it = 0; it < 200 && b - a > 0; ++it) {
      const double mid = 0.5 * (a + b);
      if (mid <= a || mid >= b) break;
      if (count_below(d, e, mid) >= k)
        b = mid;
      else
        a = mid;
    }
    return 0.5 * (a + b);
  };
  return {bisect(1), bisect(n)};
}

// The symbol f(theta) = sum_k exp(-k^2 / (2 sigma^2)) exp(i k theta) of the infinite Toeplitz
// matrix: its extremes f(0) (all terms positive) and f(pi) (by Poisson summation,
// sqrt(2 pi) sigma sum_m exp(-sigma^2 pi^2 (2m - 1)^2 / 2), a sum of positive terms, so no
// cancellation) bound the eigenvalues of every n x n section.
std::pair<double, double> symbol_extremes(double sigma) {
  double fmax = 1;
  for (int k = 1; k < 100000; ++k) {
    const double t = std::exp(-0.5 * k * k / (sigma * sigma));
    fmax += 2 * t;
    if (t < 1e-20 * fmax) break;
  }
  double fmin = 0;
  for (int m = 1; m < 100000; ++m) {
    const double a = (2.0 * m - 1) * kPi * sigma;
    const double t = 2 * std::exp(-0.5 * a * a);
    fmin += t;
    if (t < 1e-20 * fmin || t == 0) break;
  }
  return {std::sqrt(2 * kPi) * sigma * fmin, fmax};
}

GrbfAxisSystem axis_system(std::size_t n, double sigma, double ridge) {
  GrbfAxisSystem s;
  s.n = n;
  s.sigma = sigma;
  s.ridge = ridge;
  if (n <= kGrbfExactEigenMax) {
    std::vector<double> a = grbf_axis_matrix(n, sigma, 0.0), d, e;
    tridiagonalise(a, n, d, e);
    auto [mn, mx] = extreme_eigenvalues(d, e);
    s.lambda_min = mn + ridge;
    s.lambda_max = mx + ridge;
    s.exact = true;
  } else {
    auto [mn, mx] = symbol_extremes(sigma);
    s.lambda_min = mn + ridge;
    s.lambda_max = mx + ridge;
    s.exact = false;
  }
  s.condition = s.lambda_min > 0 ? s.lambda_max / s.lambda_min : HUGE_VAL;
  return s;
}

// The Cholesky factor of one axis's matrix, rounded to T, with the prefix of each row whose
// entries are all at most u(T) sqrt(lambda_max) / n dropped (docs/DESIGN.md: a backward
// perturbation of at most 2 u ||A|| in the 2-norm, the size of the factorisation's own).
template <class T>
struct AxisFactor {
  std::size_t n = 0;
  std::vector<T> l;                // n x n row-major, lower triangle
  std::vector<std::size_t> first;  // first kept column of each row
};

template <class T>
AxisFactor<T> factorise(std::size_t n, double sigma, double ridge, double lambda_max) {
  std::vector<double> a = grbf_axis_matrix(n, sigma, ridge);
  for (std::size_t j = 0; j < n; ++j) {
    double djj = a[j * n + j];
    for (std::size_t k = 0; k < j; ++k) djj -= a[j * n + k] * a[j * n + k];
    if (!(djj > 0))
      throw Error("GRBF: the " + std::to_string(n) + "-sample kernel matrix for sigma " +
                  fmt(sigma, "%.6g") + " is not positive definite in double precision (pivot " +
                  std::to_string(j) + ")");
    const double ljj = std::sqrt(djj);
    a[j * n + j] = ljj;
    for (std::size_t i = j + 1; i < n; ++i) {
      double s = a[i * n + j];
      const double* ri = &a[i * n];
      const double* rj = &a[j * n];
      for (std::size_t k = 0; k < j; ++k) s -= ri[k] * rj[k];
      a[i * n + j] = s / ljj;
    }
  }
  AxisFactor<T> f;
  f.n = n;
  f.l.assign(n * n, T(0));
  f.first.assign(n, 0);
  const double drop =
      0.5 * std::numeric_limits<T>::epsilon() * std::sqrt(lambda_max) / static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t j0 = 0;
    while (j0 < i && std::fabs(a[i * n + j0]) <= drop) ++j0;
    f.first[i] = j0;
    for (std::size_t j = j0; j <= i; ++j) f.l[i * n + j] = static_cast<T>(a[i * n + j]);
  }
  return f;
}

// Solves (L L^T) x = b along axis `axis` of `a` (viewed as outer x n x inner), in place.
template <class T>
void solve_axis(Array<T>& a, std::size_t axis, const AxisFactor<T>& f, unsigned threads) {
  const std::size_t n = a.dim(axis);
  std::size_t outer = 1, inner = a.channels();
  for (std::size_t d = 0; d < axis; ++d) outer *= a.dim(d);
  for (std::size_t d = axis + 1; d < a.rank(); ++d) inner *= a.dim(d);
  constexpr std::size_t kW = 64;
  const std::size_t chunks = (inner + kW - 1) / kW;
  const std::size_t tasks = outer * chunks;
  T* data = a.data();
  detail::parallel_for(tasks, detail::thread_count(threads, tasks * n, 4096),
                       [&](std::size_t b, std::size_t e) {
                         std::vector<T> buf(n * kW);
                         for (std::size_t t = b; t < e; ++t) {
                           const std::size_t o = t / chunks, c0 = (t % chunks) * kW;
                           const std::size_t w = std::min(kW, inner - c0);
                           T* base = data + o * n * inner + c0;
                           for (std::size_t i = 0; i < n; ++i)
                             for (std::size_t c = 0; c < w; ++c)
                               buf[i * kW + c] = base[i * inner + c];
                           for (std::size_t i = 0; i < n; ++i) {  // L y = b
                             T* bi = &buf[i * kW];
                             const T* li = &f.l[i * n];
                             for (std::size_t j = f.first[i]; j < i; ++j) {
                               const T lij = li[j];
                               const T* bj = &buf[j * kW];
                               for (std::size_t c = 0; c < w; ++c) bi[c] -= lij * bj[c];
                             }
                             const T lii = li[i];
                             for (std::size_t c = 0; c < w; ++c) bi[c] /= lii;
                           }
                           for (std::size_t i = n; i-- > 0;) {  // L^T x = y, by columns of L^T
                             T* bi = &buf[i * kW];
                             const T* li = &f.l[i * n];
                             const T lii = li[i];
                             for (std::size_t c = 0; c < w; ++c) bi[c] /= lii;
                             for (std::size_t j = f.first[i]; j < i; ++j) {
                               const T lij = li[j];
                               T* bj = &buf[j * kW];
                               for (std::size_t c = 0; c < w; ++c) bj[c] -= lij * bi[c];
                             }
                           }
                           for (std::size_t i = 0; i < n; ++i)
                             for (std::size_t c = 0; c < w; ++c)
                               base[i * inner + c] = buf[i * kW + c];
                         }
                       });
}

double tail_bound(double r, double sigma) {
  if (!(r > 0)) return HUGE_VAL;
  const double s2 = sigma * sigma;
  return 2 * std::exp(-0.5 * r * r / s2) / (1 - std::exp(-r / s2));
}

double full_sum_bound(double sigma) {
  return 1 + std::sqrt(2 * kPi) * sigma;
}

// The samples an axis of n keeps for position x: [lo, hi] (lo > hi: none) and their Gaussian
// factors.
void axis_taps(double x, std::size_t n, double sigma, double radius, bool truncate, long& lo,
               long& hi, std::vector<double>& g) {
  if (truncate) {
    const double a = std::ceil(x - radius), b = std::floor(x + radius);
    lo = a < 0 ? 0 : (a > static_cast<double>(n) ? static_cast<long>(n) : static_cast<long>(a));
    hi = b > static_cast<double>(n) - 1 ? static_cast<long>(n) - 1
                                        : (b < -1 ? -1 : static_cast<long>(b));
  } else {
    lo = 0;
    hi = static_cast<long>(n) - 1;
  }
  g.clear();
  const double c = -0.5 / (sigma * sigma);
  for (long k = lo; k <= hi; ++k) {
    const double t = x - static_cast<double>(k);
    g.push_back(std::exp(c * t * t));
  }
}

}  // namespace

std::vector<double> grbf_sigma_per_axis(const std::vector<double>& sigma, std::size_t rank) {
  if (sigma.size() != 1 && sigma.size() != rank)
    throw Error("GRBF: sigma takes one value or one per axis (" + std::to_string(rank) + "), got " +
                std::to_string(sigma.size()) + " values");
  std::vector<double> s(rank, sigma[0]);
  if (sigma.size() == rank) s = sigma;
  for (double v : s)
    if (!(v > 0 && v <= 64))
      throw Error("GRBF: sigma must be in (0, 64] samples, got " + fmt(v, "%.6g"));
  return s;
}

std::vector<double> grbf_axis_matrix(std::size_t n, double sigma, double ridge) {
  std::vector<double> a(n * n);
  const double c = -0.5 / (sigma * sigma);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const double t = static_cast<double>(i) - static_cast<double>(j);
      a[i * n + j] = std::exp(c * t * t) + (i == j ? ridge : 0.0);
    }
  return a;
}

GrbfSystem grbf_system(const std::vector<std::size_t>& dims, const GrbfOptions& opt) {
  if (dims.empty() || dims.size() > kMaxRank) throw Error("GRBF: the grid must have 1 to 3 axes");
  const std::vector<double> sigma = grbf_sigma_per_axis(opt.sigma, dims.size());
  if (!(opt.ridge >= 0 && std::isfinite(opt.ridge)))
    throw Error("GRBF: ridge must be a finite number >= 0, got " + fmt(opt.ridge, "%.6g"));
  GrbfSystem s;
  s.condition = 1;
  std::map<std::pair<std::size_t, double>, GrbfAxisSystem> seen;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    auto key = std::make_pair(dims[d], sigma[d]);
    auto it = seen.find(key);
    if (it == seen.end()) it = seen.emplace(key, axis_system(dims[d], sigma[d], opt.ridge)).first;
    s.axes.push_back(it->second);
    s.condition *= it->second.condition;
  }
  return s;
}

double grbf_truncation_bound(const std::vector<double>& sigma, const std::vector<double>& radius,
                             double max_abs_weight) {
  if (max_abs_weight == 0) return 0;
  double sum = 0;
  for (std::size_t d = 0; d < sigma.size(); ++d) {
    double term = tail_bound(radius[d], sigma[d]);
    for (std::size_t e = 0; e < sigma.size(); ++e)
      if (e != d) term *= full_sum_bound(sigma[e]);
    sum += term;
  }
  return max_abs_weight * sum;
}

std::vector<double> grbf_support_radius(const std::vector<double>& sigma, double max_abs_weight,
                                        double max_abs_sample, double unit_roundoff) {
  std::vector<double> r(sigma.size(), 0.0);
  if (max_abs_weight == 0) return r;
  const double target = unit_roundoff * max_abs_sample;
  for (int step = 1; step <= 64 * 40; ++step) {
    const double t = step / 64.0;
    for (std::size_t d = 0; d < sigma.size(); ++d) r[d] = t * sigma[d];
    if (grbf_truncation_bound(sigma, r, max_abs_weight) <= target) return r;
  }
  return r;  // 40 sigma: exp(-800) underflows; nothing is dropped that double can hold
}

template <class T>
GrbfWeights<T> grbf_prepare(const Array<T>& f, const GrbfOptions& opt) {
  if (f.empty()) throw Error("GRBF: the samples are empty");
  GrbfWeights<T> g;
  g.sigma = grbf_sigma_per_axis(opt.sigma, f.rank());
  g.ridge = opt.ridge;
  for (std::size_t i = 0; i < f.size(); ++i) {
    if (!std::isfinite(static_cast<double>(f[i])))
      throw Error("GRBF: the samples hold NaN or inf (at scalar " + std::to_string(i) + ")");
    g.max_abs_sample = std::max(g.max_abs_sample, std::fabs(static_cast<double>(f[i])));
  }
  {
    // The spectra (O(n^3) per axis) are kept for the shapes already seen.
    static std::mutex mutex;
    static std::map<std::tuple<std::vector<std::size_t>, std::vector<double>, double>, GrbfSystem>
        seen;
    std::lock_guard<std::mutex> lock(mutex);
    const auto key = std::make_tuple(f.dims(), g.sigma, opt.ridge);
    auto it = seen.find(key);
    if (it == seen.end()) {
      if (seen.size() > 64) seen.clear();
      it = seen.emplace(key, grbf_system(f.dims(), opt)).first;
    }
    g.system = it->second;
  }
  const double eps = std::numeric_limits<T>::epsilon();
  const char* prec = sizeof(T) == 4 ? "float" : "double";
  if (!(g.system.condition * eps < kGrbfSingularLimit)) {
    std::string per_axis;
    for (std::size_t d = 0; d < g.system.axes.size(); ++d)
      per_axis += (d ? " x " : "") + fmt(g.system.axes[d].condition);
    throw Error("GRBF: sigma " + join(g.sigma) + " makes the " + describe_shape(f.dims(), 1) +
                " system singular in " + prec + " precision: condition number " +
                fmt(g.system.condition) + " (per axis " + per_axis + "), condition * epsilon = " +
                fmt(g.system.condition * eps) + " >= " + fmt(kGrbfSingularLimit) +
                (opt.ridge > 0 ? " with ridge " + fmt(opt.ridge, "%.6g") : std::string()) +
                "; use a smaller sigma, double precision, or a (larger) ridge");
  }
  return g;
}

template <class T>
GrbfWeights<T> grbf_solve(const Array<T>& f, const GrbfOptions& opt) {
  GrbfWeights<T> g = grbf_prepare(f, opt);
  g.w = f;
  std::map<std::pair<std::size_t, double>, AxisFactor<T>> factors;
  for (std::size_t d = 0; d < f.rank(); ++d) {
    auto key = std::make_pair(f.dim(d), g.sigma[d]);
    auto it = factors.find(key);
    if (it == factors.end())
      it = factors
               .emplace(key,
                        factorise<T>(f.dim(d), g.sigma[d], opt.ridge, g.system.axes[d].lambda_max))
               .first;
    solve_axis(g.w, d, it->second, opt.threads);
  }
  double max_abs_weight = 0;
  for (std::size_t i = 0; i < g.w.size(); ++i)
    max_abs_weight = std::max(max_abs_weight, std::fabs(static_cast<double>(g.w[i])));
  grbf_finish(g, max_abs_weight);
  return g;
}

template <class T>
void grbf_finish(GrbfWeights<T>& g, double max_abs_weight) {
  const double eps = std::numeric_limits<T>::epsilon();
  g.max_abs_weight = max_abs_weight;
  g.radius = grbf_support_radius(g.sigma, g.max_abs_weight, g.max_abs_sample, 0.5 * eps);
  g.truncation_bound = grbf_truncation_bound(g.sigma, g.radius, g.max_abs_weight);
}

template <class T>
void grbf_sample(const GrbfWeights<T>& g, const double* positions, std::size_t m, double* out,
                 const GrbfEvalOptions& opt) {
  const std::size_t rank = g.w.rank(), C = g.w.channels();
  // Padded to three axes (leading axes of one sample).
  std::size_t dims[3] = {1, 1, 1};
  for (std::size_t d = 0; d < rank; ++d) dims[3 - rank + d] = g.w.dim(d);
  const T* w = g.w.data();
  detail::parallel_for(
      m, detail::thread_count(opt.threads, m, 64), [&](std::size_t b, std::size_t e) {
        std::vector<double> gz, gy, gx;
        std::vector<double>* gs[3] = {&gz, &gy, &gx};
        for (std::size_t i = b; i < e; ++i) {
          const double* p = positions + i * rank;
          double* o = out + i * C;
          bool finite = true;
          for (std::size_t d = 0; d < rank; ++d) finite = finite && std::isfinite(p[d]);
          if (!finite) {
            for (std::size_t c = 0; c < C; ++c) o[c] = std::numeric_limits<double>::quiet_NaN();
            continue;
          }
          long lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
          for (std::size_t a = 0; a < 3; ++a) {
            if (a < 3 - rank) {
              gs[a]->assign(1, 1.0);
              continue;
            }
            const std::size_t d = a - (3 - rank);
            axis_taps(p[d], dims[a], g.sigma[d], g.radius.empty() ? 0.0 : g.radius[d], opt.truncate,
                      lo[a], hi[a], *gs[a]);
          }
          double acc[kMaxChannels] = {0, 0, 0, 0};
          for (long z = lo[0]; z <= hi[0]; ++z) {
            const double wz = gz[static_cast<std::size_t>(z - lo[0])];
            for (long y = lo[1]; y <= hi[1]; ++y) {
              const double wzy = wz * gy[static_cast<std::size_t>(y - lo[1])];
              const T* row =
                  w + ((static_cast<std::size_t>(z) * dims[1] + static_cast<std::size_t>(y)) *
                       dims[2]) *
                          C;
              for (long x = lo[2]; x <= hi[2]; ++x) {
                const double k = wzy * gx[static_cast<std::size_t>(x - lo[2])];
                const T* s = row + static_cast<std::size_t>(x) * C;
                for (std::size_t c = 0; c < C; ++c) acc[c] += k * static_cast<double>(s[c]);
              }
            }
          }
          for (std::size_t c = 0; c < C; ++c) o[c] = acc[c];
        }
      });
}

template <class T>
Array<T> grbf_grid(const GrbfWeights<T>& g, const std::vector<std::vector<double>>& axis_positions,
                   const GrbfEvalOptions& opt) {
  const std::size_t rank = g.w.rank(), C = g.w.channels();
  if (axis_positions.size() != rank)
    throw Error("GRBF: the output grid needs positions for " + std::to_string(rank) +
                " axes, got " + std::to_string(axis_positions.size()));
  std::vector<std::size_t> cur = g.w.dims();
  std::vector<double> data(g.w.size());
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<double>(g.w[i]);
  for (std::size_t d = 0; d < rank; ++d) {
    const std::vector<double>& xs = axis_positions[d];
    if (xs.empty()) throw Error("GRBF: the output grid has an empty axis");
    for (double x : xs)
      if (!std::isfinite(x)) throw Error("GRBF: an output grid position is not finite");
    const std::size_t n = cur[d], mo = xs.size();
    std::vector<long> lo(mo), hi(mo);
    std::vector<std::vector<double>> taps(mo);
    for (std::size_t j = 0; j < mo; ++j)
      axis_taps(xs[j], n, g.sigma[d], g.radius.empty() ? 0.0 : g.radius[d], opt.truncate, lo[j],
                hi[j], taps[j]);
    std::size_t outer = 1, inner = C;
    for (std::size_t e = 0; e < d; ++e) outer *= cur[e];
    for (std::size_t e = d + 1; e < rank; ++e) inner *= cur[e];
    std::vector<double> next(outer * mo * inner, 0.0);
    const std::size_t tasks = outer * mo;
    detail::parallel_for(tasks, detail::thread_count(opt.threads, tasks * inner, 4096),
                         [&](std::size_t b, std::size_t e) {
                           for (std::size_t t = b; t < e; ++t) {
                             const std::size_t o = t / mo, j = t % mo;
                             double* dst = &next[(o * mo + j) * inner];
                             for (long k = lo[j]; k <= hi[j]; ++k) {
                               const double gk = taps[j][static_cast<std::size_t>(k - lo[j])];
                               const double* src =
                                   &data[(o * n + static_cast<std::size_t>(k)) * inner];
                               for (std::size_t c = 0; c < inner; ++c) dst[c] += gk * src[c];
                             }
                           }
                         });
    data.swap(next);
    cur[d] = mo;
  }
  Array<T> out(cur, C);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<T>(data[i]);
  return out;
}

template GrbfWeights<float> grbf_solve(const Array<float>&, const GrbfOptions&);
template GrbfWeights<float> grbf_prepare(const Array<float>&, const GrbfOptions&);
template GrbfWeights<double> grbf_prepare(const Array<double>&, const GrbfOptions&);
template void grbf_finish(GrbfWeights<float>&, double);
template void grbf_finish(GrbfWeights<double>&, double);
template GrbfWeights<double> grbf_solve(const Array<double>&, const GrbfOptions&);
template void grbf_sample(const GrbfWeights<float>&, const double*, std::size_t, double*,
                          const GrbfEvalOptions&);
template void grbf_sample(const GrbfWeights<double>&, const double*, std::size_t, double*,
                          const GrbfEvalOptions&);
template Array<float> grbf_grid(const GrbfWeights<float>&, const std::vector<std::vector<double>>&,
                                const GrbfEvalOptions&);
template Array<double> grbf_grid(const GrbfWeights<double>&,
                                 const std::vector<std::vector<double>>&, const GrbfEvalOptions&);

}  // namespace sv
