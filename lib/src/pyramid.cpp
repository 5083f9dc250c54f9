// The B-spline pyramid (pyramid.h; the derivation is in docs/DESIGN.md, "The B-spline pyramid").
//
// Every operation is separable: per axis, on blocks of adjacent lines gathered into a double
// buffer, (1) the fine prefilter (samples only), (2) an FIR from the fine line to the coarse
// one (a table of folded indices and weights per output sample), (3) the inverse of the
// coarse Gram matrix, a recursive filter with the poles of beta_{2n+1}. Samples of the coarse
// spline (ReduceOptions::samples) and expand2 are FIR tables too. The recursive filters are
// written here, not taken from prefilter.cpp, because the coarse axes of reduce2 can have a
// different symmetry at each end and the Gram filter needs the poles of degrees up to 15.
#include "splineview/pyramid.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "parallel.h"
#include "pyramid_lines.h"
#include "splineview/bspline.h"
#include "splineview/error.h"

namespace sv {
namespace {

using pyramid_detail::end_of;
using pyramid_detail::Ends;
using pyramid_detail::ends_of;
using pyramid_detail::filter_poles;
using pyramid_detail::fir_lines;
using pyramid_detail::pole_line;
using pyramid_detail::pole_set;
using pyramid_detail::PoleLine;
using pyramid_detail::PoleSet;
using pyramid_detail::PyramidPass;
using pyramid_detail::reduce_plan;
using pyramid_detail::sample_plan;
using pyramid_detail::Taps;

constexpr double kPi = 3.141592653589793238462643383279502884;

// ---- Gauss-Legendre quadrature and the cross-correlation h_T ---------------------------------

struct Gauss {
  std::vector<double> x, w;  // nodes and weights on [-1, 1]
};

Gauss gauss_legendre(int m) {
  Gauss g;
  g.x.resize(m);
  g.w.resize(m);
  for (int i = 0; i < m; ++i) {
    double x = std::cos(kPi * (i + 0.75) / (m + 0.5));
    double dp = 1;
    for (int it = 0; it < 100; ++it) {
      double p0 = 1, p1 = x;  // Legendre P_0, P_1
      for (int k = 2; k <= m; ++k) {
        const double p2 = ((2 * k - 1) * x * p1 - (k - 1) * p0) / k;
        p0 = p1;
        p1 = p2;
      }
      if (m == 1) p0 = 1, p1 = x;
      dp = m * (x * p1 - p0) / (x * x - 1);
      const double dx = p1 / dp;
      x -= dx;
      if (std::fabs(dx) < 1e-17) break;
    }
    g.x[i] = x;
    g.w[i] = 2 / ((1 - x * x) * dp * dp);
  }
  return g;
}

// The taps h_T(x - k) / T of one output at position x (0 <= x < 1, relative to floor(x_j)) for
// k = -r..r (w[k + r]): h_T(x - k) = integral beta_n(y - k) beta_n((y - x)/T) dy, all k at once,
// by Gauss-Legendre with n + 1 nodes on every piece between consecutive knots of the fine
// B-splines (integers for odd n, half-integers for even n) and of the coarse one (exact: the
// product is a polynomial of degree 2n there). At each node the n + 1 fine weights come from
// one Cox-de Boor row.
std::vector<double> projection_row(int n, double T, double x, long r, const Gauss& g) {
  std::vector<double> w(static_cast<std::size_t>(2 * r + 1), 0.0);
  const double half = (n + 1) / 2.0;
  const double lo = x - T * half, hi = x + T * half;
  std::vector<double> cuts{lo, hi};
  const double shift = n % 2 ? 0.0 : 0.5;
  for (double k = std::ceil(lo - shift) + shift; k < hi; k += 1)
    if (k > lo) cuts.push_back(k);
  for (int i = 1; i <= n; ++i) cuts.push_back(x + T * (i - half));
  std::sort(cuts.begin(), cuts.end());
  double fw[kMaxDegree + 1];
  for (std::size_t p = 0; p + 1 < cuts.size(); ++p) {
    const double a = cuts[p], b = cuts[p + 1];
    if (!(b > a)) continue;
    const double mid = (a + b) / 2, rad = (b - a) / 2;
    for (std::size_t q = 0; q < g.x.size(); ++q) {
      const double y = mid + rad * g.x[q];
      const double coarse = bspline(n, (y - x) / T) * g.w[q] * rad / T;
      const long first = bspline_weights<double>(n, y, fw);
      for (int i = 0; i <= n; ++i) {
        const long k = first + i;
        if (k >= -r && k <= r) w[static_cast<std::size_t>(k + r)] += coarse * fw[i];
      }
    }
  }
  return w;
}

// ---- Axis plans -------------------------------------------------------------------------

void check_options(const PyramidOptions& opt, const char* what) {
  check_degree(opt.degree, 0, kMaxDegree, (std::string(what) + " degree").c_str());
  const Boundary b = opt.boundary;
  if (b == Boundary::Wrap)
    throw Error(std::string(what) +
                ": boundary mode 'wrap' is not supported (its spline is the mirror one on "
                "[0, N-1]; use mirror)");
  if (b != Boundary::Reflect && b != Boundary::Mirror && b != Boundary::Periodic)
    throw Error(std::string(what) + ": boundary mode '" + boundary_name(b) +
                "' is not supported: the least-squares projection is defined for the symmetric "
                "and periodic extensions (reflect, mirror, periodic), whose symmetries carry "
                "the coarse grid onto itself; '" +
                boundary_name(b) + "' extends the signal with a constant for ever");
}

PyramidGrid resolve_grid(const PyramidOptions& opt, const char* what) {
  PyramidGrid g = opt.grid;
  if (g == PyramidGrid::ByBoundary)
    g = opt.boundary == Boundary::Mirror ? PyramidGrid::Nodes : PyramidGrid::Cells;
  if (opt.boundary == Boundary::Reflect && g == PyramidGrid::Nodes)
    throw Error(std::string(what) +
                ": reflect needs the Cells grid: its symmetry about -1/2 does not map the "
                "Nodes grid (coarse samples at 0, T, 2T, ...) onto itself");
  if (opt.boundary == Boundary::Mirror && g == PyramidGrid::Cells)
    throw Error(std::string(what) +
                ": mirror needs the Nodes grid: its symmetry about 0 does not map the Cells "
                "grid (coarse samples at T/2 - 1/2 + l T) onto itself");
  return g;
}

}  // namespace

PyramidAxis reduce2_axis(std::size_t n, const PyramidOptions& opt) {
  check_options(opt, "reduce2");
  const PyramidGrid g = resolve_grid(opt, "reduce2");
  if (n == 0) throw Error("reduce2: an axis has no samples");
  PyramidAxis a;
  a.fine = n;
  a.spacing = 2;
  a.origin = g == PyramidGrid::Cells ? 0.5 : 0.0;
  a.left = a.right = opt.boundary;
  if (opt.boundary == Boundary::Periodic) {
    if (n % 2 != 0)
      throw Error("reduce2: a periodic axis of " + std::to_string(n) +
                  " samples cannot be halved (its period must hold a whole number of coarse "
                  "samples); use reduce_to_shape");
    a.coarse = n / 2;
    return a;
  }
  a.coarse = (n + 1) / 2;
  // The fine axis's right end is a symmetry axis of the coarse grid: at N - 1/2 (reflect, Cells
  // x_l = 2l + 1/2) or N - 1 (mirror, Nodes x_l = 2l); it falls on a coarse sample or halfway
  // between two: on a sample (coarse index (N-1)/2) exactly when N is odd.
  a.right = n % 2 == 1 ? Boundary::Mirror : Boundary::Reflect;
  return a;
}

PyramidAxis reduce_axis(std::size_t n, std::size_t m, const PyramidOptions& opt) {
  check_options(opt, "reduce");
  const PyramidGrid g = resolve_grid(opt, "reduce");
  if (n == 0) throw Error("reduce: an axis has no samples");
  if (m == 0 || m > n)
    throw Error("reduce: an axis of " + std::to_string(n) + " samples cannot become " +
                std::to_string(m) + " (the output length must be between 1 and the input's)");
  PyramidAxis a;
  a.fine = n;
  a.coarse = m;
  a.left = a.right = opt.boundary;
  const double N = static_cast<double>(n), M = static_cast<double>(m);
  if (opt.boundary == Boundary::Mirror) {
    // Nodes x_l = l T with T = (N-1)/(M-1); one coarse sample: the constant, which any grid
    // symmetric about 0 and N - 1 represents (T = 2(N-1), the extension's period).
    a.origin = 0;
    a.spacing = m > 1 ? (N - 1) / (M - 1) : (n > 1 ? 2 * (N - 1) : 1.0);
    return a;
  }
  a.spacing = N / M;
  a.origin = g == PyramidGrid::Cells ? (a.spacing - 1) / 2 : 0.0;
  return a;
}

double bspline_any(int d, double x) {
  if (d < 0) throw Error("bspline_any: degree must be >= 0, got " + std::to_string(d));
  // Level e holds beta_e at x + (d - e)/2 - j, j = 0..d-e; level 0 is the half-open box.
  std::vector<double> v(static_cast<std::size_t>(d) + 1);
  for (int j = 0; j <= d; ++j) {
    const double y = x + d / 2.0 - j;
    v[j] = (y >= -0.5 && y < 0.5) ? 1.0 : 0.0;
  }
  for (int e = 1; e <= d; ++e) {
    const double h = (e + 1) / 2.0;
    for (int j = 0; j <= d - e; ++j) {
      const double y = x + (d - e) / 2.0 - j;
      v[j] = ((h + y) * v[j] + (h - y) * v[j + 1]) / e;
    }
  }
  return v[0];
}

std::vector<double> odd_bspline_poles(int d) {
  if (d < 1 || d > 15 || d % 2 == 0)
    throw Error("odd_bspline_poles: degree must be odd and between 1 and 15, got " +
                std::to_string(d));
  const int p = (d - 1) / 2;
  if (p == 0) return {};
  std::vector<long double> b(p + 1);
  for (int m = 0; m <= p; ++m) b[m] = bspline_any(d, m);
  // B(z) = b0 + sum_m b_m (z^m + z^-m) as a polynomial in w = z + 1/z: z^m + z^-m = V_m(w),
  // V_0 = 2, V_1 = w, V_{m+1} = w V_m - V_{m-1}. Its p roots are real and below -2.
  auto poly = [&](long double w) {
    long double v0 = 2, v1 = w, s = b[0] + b[1] * w;
    for (int m = 2; m <= p; ++m) {
      const long double v2 = w * v1 - v0;
      s += b[m] * v2;
      v0 = v1;
      v1 = v2;
    }
    return s;
  };
  // Bracket the roots on w = -2 - 10^s, s from -6 to 14 in steps of 0.001 (|z| from 0.999 to
  // 1e-14), then bisect.
  std::vector<double> roots;
  const long double step = std::pow(10.0L, 0.001L);
  long double e = 1e-6L;
  long double prev_w = -2 - e, prev_v = poly(prev_w);
  for (int i = 1; i <= 20000; ++i) {
    e *= step;
    const long double w = -2 - e;
    const long double v = poly(w);
    if ((v < 0) != (prev_v < 0)) {
      long double lo = prev_w, hi = w, vlo = prev_v;
      for (int it = 0; it < 200; ++it) {
        const long double mid = (lo + hi) / 2;
        const long double vm = poly(mid);
        if ((vm < 0) == (vlo < 0)) {
          lo = mid;
          vlo = vm;
        } else {
          hi = mid;
        }
      }
      const long double r = (lo + hi) / 2;
      // z = (w + sqrt(w^2 - 4)) / 2 written without cancellation.
      roots.push_back(static_cast<double>(2 / (r - std::sqrt(r * r - 4))));
    }
    prev_w = w;
    prev_v = v;
  }
  if (static_cast<int>(roots.size()) != p)
    throw Error("odd_bspline_poles: found " + std::to_string(roots.size()) + " of the " +
                std::to_string(p) + " poles of degree " + std::to_string(d));
  std::sort(roots.begin(), roots.end(),
            [](double u, double v) { return std::fabs(u) > std::fabs(v); });
  return roots;
}

namespace {

// ---- The per-axis pass ----------------------------------------------------------------------

template <class T>
Array<T> run_axis(const Array<T>& a, const PyramidPass& step, unsigned threads) {
  const std::size_t axis = step.axis;
  const std::size_t n = a.dim(axis);
  const std::size_t m = step.has_taps ? step.taps.out() : n;
  std::vector<std::size_t> dims = a.dims();
  dims[axis] = m;
  Array<T> out(dims, a.channels());
  std::size_t outer = 1, inner = a.channels();
  for (std::size_t d = 0; d < axis; ++d) outer *= a.dim(d);
  for (std::size_t d = axis + 1; d < a.rank(); ++d) inner *= a.dim(d);
  const std::size_t lines = outer * inner;
  // Lines per block: up to 32 adjacent ones, fewer for long lines (the block buffer stays within
  // 512 KB). Measured on 256^3 floats (reduce2, one thread): 8 lines 189 ms, 16 131, 32 117,
  // 64 124, 256 221.
  const std::size_t width =
      std::max<std::size_t>(1, std::min<std::size_t>(32, 65536 / std::max(n, m)));
  const std::size_t blocks = (lines + width - 1) / width;
  const bool rows = inner >= width;  // the lines of a block are adjacent in memory
  const PoleLine pre =
      step.has_pre ? pole_line(step.pre, static_cast<long>(n), step.pre_ends) : PoleLine{};
  const PoleLine post =
      step.has_post ? pole_line(step.post, static_cast<long>(m), step.post_ends) : PoleLine{};
  const T* src = a.data();
  T* dst = out.data();
  detail::parallel_for(
      blocks, detail::thread_count(threads, lines * std::max(n, m), 1 << 15),
      [&](std::size_t b0, std::size_t b1) {
        std::vector<double> in(n * width), res(m * width), acc(width);
        std::vector<std::size_t> base_in(width), base_out(width);
        for (std::size_t b = b0; b < b1; ++b) {
          const std::size_t l0 = b * width;
          const std::size_t wn = std::min(width, lines - l0);
          for (std::size_t w = 0; w < wn; ++w) {
            const std::size_t l = l0 + w, o = l / inner, i = l % inner;
            base_in[w] = o * n * inner + i;
            base_out[w] = o * m * inner + i;
          }
          if (rows) {
            for (std::size_t k = 0; k < n; ++k)
              for (std::size_t w = 0; w < wn; ++w)
                in[k * width + w] = static_cast<double>(src[base_in[w] + k * inner]);
          } else {
            for (std::size_t w = 0; w < wn; ++w)
              for (std::size_t k = 0; k < n; ++k)
                in[k * width + w] = static_cast<double>(src[base_in[w] + k * inner]);
          }
          for (std::size_t w = wn; w < width; ++w)
            for (std::size_t k = 0; k < n; ++k) in[k * width + w] = 0;
          if (step.has_pre) filter_poles(in.data(), width, width, pre, acc.data());
          double* result = in.data();
          if (step.has_taps) {
            const Taps& t = step.taps;
            for (std::size_t j = 0; j < m; ++j)
              fir_lines(in.data(), width, res.data() + j * width, width, t.row.data(),
                        t.index.data(), t.weight.data(), j);
            result = res.data();
          }
          if (step.has_post) filter_poles(result, width, width, post, acc.data());
          if (rows) {
            for (std::size_t k = 0; k < m; ++k)
              for (std::size_t w = 0; w < wn; ++w)
                dst[base_out[w] + k * inner] = static_cast<T>(result[k * width + w]);
          } else {
            for (std::size_t w = 0; w < wn; ++w)
              for (std::size_t k = 0; k < m; ++k)
                dst[base_out[w] + k * inner] = static_cast<T>(result[k * width + w]);
          }
        }
      });
  return out;
}

PoleSet fine_poles(int degree) {
  const Poles p = bspline_poles(degree);
  return pole_set(std::vector<double>(p.z.begin(), p.z.begin() + p.count));
}

// The poles of beta_{2n+1}, n = 0..7, computed once.
const PoleSet& gram_poles(int degree) {
  static const std::vector<PoleSet> sets = [] {
    std::vector<PoleSet> v;
    for (int n = 0; n <= kMaxDegree; ++n) v.push_back(pole_set(odd_bspline_poles(2 * n + 1)));
    return v;
  }();
  return sets.at(static_cast<std::size_t>(degree));
}

// reduce2's FIR (the right-hand side of the normal equations divided by T = 2) from the
// two-scale relation beta_n(x/2) = 2^-n sum_i C(n+1, i) beta_n(x - i + (n+1)/2), which gives
// for every real t: h_2(t) = 2^-n sum_i C(n+1, i) beta_{2n+1}(t + i - (n+1)/2). Output j reads
// fine sample 2j - d with weight h_2(origin + d) / 2, |d| <= r (the support 3 (n + 1) / 2 of
// h_2): returned as table[d + r].
std::vector<double> reduce2_kernel(const PyramidAxis& a, int n, long& r) {
  const double half = (n + 1) / 2.0;
  auto h2 = [&](double t) {
    double s = 0, binom = 1;
    for (int i = 0; i <= n + 1; ++i) {
      s += binom * bspline_any(2 * n + 1, t + i - half);
      binom = binom * (n + 1 - i) / (i + 1);
    }
    return std::ldexp(s, -n);
  };
  r = static_cast<long>(std::ceil(3 * half)) + 1;
  std::vector<double> table(static_cast<std::size_t>(2 * r + 1));
  for (long d = -r; d <= r; ++d) table[d + r] = h2(a.origin + static_cast<double>(d)) / 2;
  return table;
}

Taps reduce2_taps(const PyramidAxis& a, int n, Ends fine) {
  long r = 0;
  const std::vector<double> table = reduce2_kernel(a, n, r);
  Taps taps;
  std::vector<std::pair<long, double>> row;
  for (std::size_t j = 0; j < a.coarse; ++j) {
    row.clear();
    for (long d = -r; d <= r; ++d) row.emplace_back(2 * static_cast<long>(j) - d, table[d + r]);
    taps.add_row(row, static_cast<long>(a.fine), fine);
  }
  return taps;
}

// reduce's FIR for any spacing: h_T(x_j - k) / T by quadrature (projection_row), shared by the
// outputs whose positions have the same fractional part.
Taps reduce_taps(const PyramidAxis& a, int n, Ends fine) {
  const Gauss g = gauss_legendre(n + 1);
  const double T = a.spacing;
  const long r = static_cast<long>(std::ceil((n + 1) / 2.0 * (1 + T))) + 1;
  std::map<double, std::vector<double>> cache;
  Taps taps;
  std::vector<std::pair<long, double>> row;
  for (std::size_t j = 0; j < a.coarse; ++j) {
    const double x = a.origin + static_cast<double>(j) * T;
    const double fl = std::floor(x);
    const double frac = x - fl;
    auto it = cache.find(frac);
    if (it == cache.end()) {
      it = cache.emplace(frac, projection_row(n, T, frac, r, g)).first;
    }
    row.clear();
    const long base = static_cast<long>(fl);
    for (long d = -r; d <= r; ++d) row.emplace_back(base + d, it->second[d + r]);
    taps.add_row(row, static_cast<long>(a.fine), fine);
  }
  return taps;
}

// The coarse samples: sum_m beta_n(m) d[j + m], the coefficients extended by the axis's ends.
Taps sample_taps(const PyramidAxis& a, int n) {
  Taps taps;
  std::vector<std::pair<long, double>> row;
  const long r = n / 2;
  for (std::size_t j = 0; j < a.coarse; ++j) {
    row.clear();
    for (long m = -r; m <= r; ++m)
      row.emplace_back(static_cast<long>(j) + m, bspline(n, static_cast<double>(m)));
    taps.add_row(row, static_cast<long>(a.coarse), ends_of(a));
  }
  return taps;
}

// expand2: fine sample i = sum_l d[l] beta_n((i - origin)/2 - l).
Taps expand_taps(const PyramidAxis& a, int n) {
  Taps taps;
  std::vector<std::pair<long, double>> row;
  double w[kMaxDegree + 1];
  for (std::size_t i = 0; i < a.fine; ++i) {
    const double u = (static_cast<double>(i) - a.origin) / a.spacing;
    const long first = bspline_weights<double>(n, u, w);
    row.clear();
    for (int q = 0; q <= n; ++q) row.emplace_back(first + q, w[q]);
    taps.add_row(row, static_cast<long>(a.coarse), ends_of(a));
  }
  return taps;
}

void check_array(std::size_t rank, std::size_t points, const char* what) {
  if (rank == 0 || points == 0) throw Error(std::string(what) + ": the array is empty");
}

template <class T>
Array<T> run_plan(const Array<T>& a, const std::vector<PyramidPass>& plan, unsigned threads) {
  if (plan.empty()) return a;
  Array<T> cur = run_axis(a, plan.front(), threads);
  for (std::size_t p = 1; p < plan.size(); ++p) cur = run_axis(cur, plan[p], threads);
  return cur;
}

template <class T>
Reduced<T> reduce_impl(const Array<T>& a, std::vector<PyramidAxis> axes, const ReduceOptions& opt,
                       bool halving) {
  Reduced<T> r;
  r.coefficients = run_plan(a, reduce_plan(a.dims(), axes, opt, halving), opt.threads);
  if (opt.samples) r.samples = run_plan(r.coefficients, sample_plan(axes, opt.degree), opt.threads);
  r.axes = std::move(axes);
  return r;
}

}  // namespace

namespace pyramid_detail {

std::vector<PyramidPass> reduce_plan(const std::vector<std::size_t>& dims,
                                     const std::vector<PyramidAxis>& axes, const ReduceOptions& opt,
                                     bool halving) {
  const int n = opt.degree;
  const PoleSet fp = fine_poles(n);
  const PoleSet& gp = gram_poles(n);
  const Ends fine{end_of(opt.boundary), end_of(opt.boundary)};
  std::vector<PyramidPass> plan;
  // The fastest axis first: its lines are contiguous, and each pass shrinks the array, so the
  // strided slowest axis is read when it is smallest.
  for (std::size_t d = dims.size(); d-- > 0;) {
    const PyramidAxis& ax = axes[d];
    PyramidPass step;
    step.axis = d;
    step.in_length = dims[d];
    if (!opt.input_is_coefficients && !fp.z.empty()) {
      step.has_pre = true;
      step.pre = fp;
      step.pre_ends = fine;
    }
    const bool identity = ax.coarse == ax.fine && ax.spacing == 1 && ax.origin == 0;
    if (!identity) {
      step.taps = halving ? reduce2_taps(ax, n, fine) : reduce_taps(ax, n, fine);
      step.has_taps = true;
      if (!gp.z.empty()) {
        step.has_post = true;
        step.post = gp;
        step.post_ends = ends_of(ax);
      }
    }
    if (!step.has_pre && !step.has_taps) continue;
    plan.push_back(std::move(step));
  }
  return plan;
}

std::vector<PyramidPass> sample_plan(const std::vector<PyramidAxis>& axes, int degree) {
  std::vector<PyramidPass> plan;
  if (degree < 2) return plan;
  for (std::size_t d = 0; d < axes.size(); ++d) {
    PyramidPass step;
    step.axis = d;
    step.in_length = axes[d].coarse;
    step.taps = sample_taps(axes[d], degree);
    step.has_taps = true;
    plan.push_back(std::move(step));
  }
  return plan;
}

std::vector<PyramidPass> expand_plan(const std::vector<std::size_t>& coarse_dims,
                                     const std::vector<std::size_t>& fine_dims,
                                     const PyramidOptions& opt) {
  check_options(opt, "expand2");
  std::size_t points = 1;
  for (std::size_t d : coarse_dims) points *= d;
  check_array(coarse_dims.size(), points, "expand2");
  if (fine_dims.size() != coarse_dims.size())
    throw Error("expand2: the fine shape has " + std::to_string(fine_dims.size()) +
                " axes for coarse coefficients of " + std::to_string(coarse_dims.size()));
  std::vector<PyramidPass> plan;
  for (std::size_t d = 0; d < coarse_dims.size(); ++d) {
    const PyramidAxis ax = reduce2_axis(fine_dims[d], opt);
    if (ax.coarse != coarse_dims[d])
      throw Error("expand2: axis " + std::to_string(d) + " has " + std::to_string(coarse_dims[d]) +
                  " coarse coefficients, but reduce2 makes " + std::to_string(ax.coarse) + " of " +
                  std::to_string(fine_dims[d]) + " fine samples");
    PyramidPass step;
    step.axis = d;
    step.in_length = coarse_dims[d];
    step.taps = expand_taps(ax, opt.degree);
    step.has_taps = true;
    plan.push_back(std::move(step));
  }
  return plan;
}

ExpandPhases expand_phases(const PyramidAxis& a, int degree) {
  check_degree(degree, 0, kMaxDegree, "expand2 degree");
  if (a.spacing != 2) throw Error("expand2: the phases need an axis of spacing 2");
  ExpandPhases e;
  e.taps = degree + 1;
  e.coarse = static_cast<long>(a.coarse);
  e.fine = static_cast<long>(a.fine);
  e.ends = ends_of(a);
  for (int p = 0; p < 2; ++p)
    e.first[p] = bspline_weights<double>(degree, (p - a.origin) / a.spacing, e.w[p]);
  return e;
}

ReducePhases reduce2_phases(const PyramidAxis& a, int n, bool input_is_coefficients) {
  check_degree(n, 0, kMaxDegree, "reduce2 degree");
  if (a.spacing != 2) throw Error("reduce2: the phases need an axis of spacing 2");
  const Ends fine{end_of(a.left), end_of(a.left)};
  long r = 0;
  const std::vector<double> ht = reduce2_kernel(a, n, r);
  // f = prod_i f_i (from samples): symmetric, taps -p..p.
  std::vector<double> f{1.0};
  std::vector<double> ez;
  if (!input_is_coefficients) {
    const Poles p = bspline_poles(n);
    for (int i = 0; i < p.count; ++i) {
      const double z = p.z[static_cast<std::size_t>(i)];
      const double s = 1 / ((1 + z) * (1 + z));
      const double fi[3] = {z * s, (1 + z * z) * s, z * s};
      std::vector<double> next(f.size() + 2, 0.0);
      for (std::size_t u = 0; u < f.size(); ++u)
        for (int v = 0; v < 3; ++v) next[u + static_cast<std::size_t>(v)] += f[u] * fi[v];
      f = std::move(next);
      ez.push_back(z * z);
    }
  }
  const long p = static_cast<long>(f.size() / 2);
  // g[s] = sum_{d + e = s} ht[d] f[e], s = -(r + p)..(r + p); output j reads x~[2j - s].
  const long rs = r + p;
  std::vector<double> g(static_cast<std::size_t>(2 * rs + 1), 0.0);
  for (long d = -r; d <= r; ++d)
    for (long e = -p; e <= p; ++e)
      g[static_cast<std::size_t>(d + e + rs)] +=
          ht[static_cast<std::size_t>(d + r)] * f[static_cast<std::size_t>(e + p)];
  // Ascending fine index k = 2j + first + i, i.e. s = -(first + i); trim the zero ends.
  long lo = -rs, hi = rs;
  while (lo < hi && g[static_cast<std::size_t>(lo + rs)] == 0) ++lo;
  while (hi > lo && g[static_cast<std::size_t>(hi + rs)] == 0) --hi;
  ReducePhases out;
  out.first = -hi;
  for (long s = hi; s >= lo; --s) out.w.push_back(g[static_cast<std::size_t>(s + rs)]);
  out.taps = static_cast<int>(out.w.size());
  out.fine = static_cast<long>(a.fine);
  out.coarse = static_cast<long>(a.coarse);
  out.fine_ends = fine;
  out.coarse_ends = ends_of(a);
  for (double z : gram_poles(n).z) ez.push_back(z);
  out.poles = pole_set(ez);
  return out;
}

std::vector<PyramidAxis> reduce2_axes(std::size_t rank, std::size_t points,
                                      const std::vector<std::size_t>& dims,
                                      const ReduceOptions& opt) {
  check_options(opt, "reduce2");
  check_array(rank, points, "reduce2");
  std::vector<PyramidAxis> axes;
  for (std::size_t d = 0; d < rank; ++d) axes.push_back(reduce2_axis(dims[d], opt));
  return axes;
}

std::vector<PyramidAxis> reduce_shape_axes(std::size_t rank, std::size_t points,
                                           const std::vector<std::size_t>& dims,
                                           const std::vector<std::size_t>& shape,
                                           const ReduceOptions& opt) {
  check_options(opt, "reduce");
  check_array(rank, points, "reduce");
  if (shape.size() != rank)
    throw Error("reduce: the output shape has " + std::to_string(shape.size()) +
                " axes for an array of " + std::to_string(rank));
  std::vector<PyramidAxis> axes;
  for (std::size_t d = 0; d < rank; ++d) axes.push_back(reduce_axis(dims[d], shape[d], opt));
  return axes;
}

std::vector<std::size_t> reduce_factor_shape(std::size_t rank, std::size_t points,
                                             const std::vector<std::size_t>& dims,
                                             const std::vector<double>& factors,
                                             const ReduceOptions& opt) {
  check_options(opt, "reduce");
  check_array(rank, points, "reduce");
  if (factors.size() != rank)
    throw Error("reduce: " + std::to_string(factors.size()) + " factors for an array of " +
                std::to_string(rank) + " axes");
  std::vector<std::size_t> shape;
  for (std::size_t d = 0; d < rank; ++d) {
    const double f = factors[d];
    if (!(f > 0 && f <= 1))
      throw Error("reduce: the factor of axis " + std::to_string(d) + " must be in (0, 1], got " +
                  std::to_string(f) + " (reduce downscales; use sv::zoom to enlarge)");
    const double m = std::nearbyint(static_cast<double>(dims[d]) * f);
    if (m < 1)
      throw Error("reduce: the factor " + std::to_string(f) + " leaves no sample of the " +
                  std::to_string(dims[d]) + " on axis " + std::to_string(d));
    shape.push_back(static_cast<std::size_t>(m));
  }
  return shape;
}

}  // namespace pyramid_detail

template <class T>
Reduced<T> reduce2(const Array<T>& a, const ReduceOptions& opt) {
  return reduce_impl(a, pyramid_detail::reduce2_axes(a.rank(), a.points(), a.dims(), opt), opt,
                     true);
}

template <class T>
Reduced<T> reduce_to_shape(const Array<T>& a, const std::vector<std::size_t>& shape,
                           const ReduceOptions& opt) {
  return reduce_impl(
      a, pyramid_detail::reduce_shape_axes(a.rank(), a.points(), a.dims(), shape, opt), opt, false);
}

template <class T>
Reduced<T> reduce(const Array<T>& a, const std::vector<double>& factors, const ReduceOptions& opt) {
  return reduce_to_shape(
      a, pyramid_detail::reduce_factor_shape(a.rank(), a.points(), a.dims(), factors, opt), opt);
}

template <class T>
Array<T> expand2(const Array<T>& coarse, const std::vector<std::size_t>& fine_dims,
                 const PyramidOptions& opt) {
  return run_plan(coarse, pyramid_detail::expand_plan(coarse.dims(), fine_dims, opt), opt.threads);
}

std::complex<double> reduce_response(int degree, double spacing, double omega, double offset,
                                     bool input_is_coefficients, bool output_samples) {
  check_degree(degree, 0, kMaxDegree, "reduce_response degree");
  if (!(spacing >= 1) || !std::isfinite(spacing))
    throw Error("reduce_response: the spacing must be at least 1, got " + std::to_string(spacing));
  if (!std::isfinite(omega) || !std::isfinite(offset))
    throw Error("reduce_response: the frequency and the offset must be finite");
  const int n = degree;
  // beta^_n(v) = sinc(v/2)^(n+1); B_d(v) = sum_k beta_d(k) cos(k v).
  auto hat = [n](double v) {
    const double h = v / 2;
    const double s = std::fabs(h) < 1e-8 ? 1 - h * h / 6 : std::sin(h) / h;
    return std::pow(s, n + 1);
  };
  // B_d(v) = b[0] + 2 sum_k b[k] cos(k v) with b[k] = beta_d(k).
  auto samples_of = [](int d) {
    std::vector<double> b;
    for (int k = 0; k <= d / 2 + 1; ++k) b.push_back(bspline_any(d, k));
    return b;
  };
  const std::vector<double> bn = samples_of(n), bg = samples_of(2 * n + 1);
  auto sampled = [](const std::vector<double>& b, double v) {
    double s = b[0];
    for (std::size_t k = 1; k < b.size(); ++k) s += 2 * b[k] * std::cos(static_cast<double>(k) * v);
    return s;
  };
  const double fine = input_is_coefficients ? 1 : sampled(bn, omega);
  // The terms fall like |m|^-(2n+2): enough of them for a tail below 1e-13 (degree 0: 1e-6).
  const long terms = n == 0 ? 100000 : n == 1 ? 20000 : 2000;
  std::complex<double> sum = 0;
  for (long m = -terms; m <= terms; ++m) {
    const double v = omega + 2 * kPi * static_cast<double>(m);
    const double eta = hat(v) / fine;
    if (eta == 0) continue;
    double r = hat(spacing * v) / sampled(bg, spacing * v);
    if (output_samples) r *= sampled(bn, spacing * v);
    const double phase = 2 * kPi * static_cast<double>(m) * offset;
    sum += eta * r * std::complex<double>(std::cos(phase), std::sin(phase));
  }
  return sum;
}

template Reduced<float> reduce2(const Array<float>&, const ReduceOptions&);
template Reduced<double> reduce2(const Array<double>&, const ReduceOptions&);
template Reduced<float> reduce(const Array<float>&, const std::vector<double>&,
                               const ReduceOptions&);
template Reduced<double> reduce(const Array<double>&, const std::vector<double>&,
                                const ReduceOptions&);
template Reduced<float> reduce_to_shape(const Array<float>&, const std::vector<std::size_t>&,
                                        const ReduceOptions&);
template Reduced<double> reduce_to_shape(const Array<double>&, const std::vector<std::size_t>&,
                                         const ReduceOptions&);
template Array<float> expand2(const Array<float>&, const std::vector<std::size_t>&,
                              const PyramidOptions&);
template Array<double> expand2(const Array<double>&, const std::vector<std::size_t>&,
                               const PyramidOptions&);

}  // namespace sv
