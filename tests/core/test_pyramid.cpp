// The B-spline pyramid (pyramid.h) against independent oracles: a dense least-squares solve of
// the normal equations over one period of the extended signal, built from B-spline inner
// products computed here (truncated powers, Gauss-Legendre on every polynomial piece); the
// projection property where the coarse space lies in the fine one; polynomial reproduction;
// the measured gain of sinusoids against reduce_response; separability; float against double;
// the refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "../../lib/src/pyramid_lines.h"
#include "splineview/bspline.h"
#include "splineview/prefilter.h"
#include "splineview/pyramid.h"
#include "splineview/sampler.h"
#include "test_util.h"

namespace {

using sv::Array;
using sv::Boundary;
using sv::PyramidGrid;

constexpr long double kPiL = 3.141592653589793238462643383279502884L;

// ---- The oracle ------------------------------------------------------------------------------

// beta_n by the truncated-power formula (not the library's recursion), long double.
long double beta_tp(int n, long double x) {
  const long double half = (n + 1) / 2.0L;
  if (!(std::fabs(x) < half)) return 0;
  long double s = 0, binom = 1, fact = 1;
  for (int i = 1; i <= n; ++i) fact *= i;
  for (int i = 0; i <= n + 1; ++i) {
    const long double u = x + half - i;
    if (u > 0) {
      long double un = 1;
      for (int k = 0; k < n; ++k) un *= u;
      s += ((i % 2) ? -binom : binom) * un;
    }
    binom = binom * (n + 1 - i) / (i + 1);
  }
  return s / fact;
}

// 16-point Gauss-Legendre (exact for degree 31) by Newton on the three-term recurrence.
struct Rule {
  std::vector<long double> x, w;
};
const Rule& rule16() {
  static const Rule r = [] {
    Rule q;
    const int m = 16;
    for (int i = 1; i <= m; ++i) {
      long double x = std::cos(kPiL * (i - 0.25L) / (m + 0.5L)), d = 0;
      for (int it = 0; it < 50; ++it) {
        long double p0 = 1, p1 = x;
        for (int k = 2; k <= m; ++k) {
          const long double p2 = ((2 * k - 1) * x * p1 - (k - 1) * p0) / k;
          p0 = p1;
          p1 = p2;
        }
        d = m * (x * p1 - p0) / (x * x - 1);
        x -= p1 / d;
      }
      q.x.push_back(x);
      q.w.push_back(2 / ((1 - x * x) * d * d));
    }
    return q;
  }();
  return r;
}

// Folds a position into the fundamental domain of the fine extension: [-1/2, N - 1/2] for
// reflect, [0, N - 1] for mirror, [-1/2, N - 1/2) for periodic.
long double fold_position(long double x, long n, Boundary b) {
  if (b == Boundary::Periodic) {
    while (x < -0.5L) x += n;
    while (x >= n - 0.5L) x -= n;
    return x;
  }
  const long double lo = b == Boundary::Reflect ? -0.5L : 0.0L;
  const long double hi = b == Boundary::Reflect ? n - 0.5L : n - 1.0L;
  while (x < lo - 1e-12L || x > hi + 1e-12L) x = x < lo ? 2 * lo - x : 2 * hi - x;
  return x;
}

// The least-squares coarse coefficients of the fine spline with coefficients c (extended by
// b), on the lattice x_l = origin + l T with M free coefficients: the coefficient of every
// lattice point is that of the point its position folds to (which must be one of the M), and
// the normal equations are integrated over one period of the extension. Returns an empty
// vector (and fails) when the lattice is not mapped onto itself.
std::vector<double> oracle(const std::vector<double>& c, int n, Boundary b, double origin, double T,
                           std::size_t M) {
  const long N = static_cast<long>(c.size());
  long double lo, hi;
  if (b == Boundary::Reflect) {
    lo = -0.5L;
    hi = 2 * N - 0.5L;
  } else if (b == Boundary::Mirror) {
    lo = 0;
    hi = 2 * N - 2;
  } else {
    lo = -0.5L;
    hi = N - 0.5L;
  }
  const long double half = (n + 1) / 2.0L;
  // Lattice points whose support meets [lo, hi) and the coefficient each one takes.
  std::vector<long double> xs;
  std::vector<std::size_t> owner;
  const long l0 = static_cast<long>(std::floor((lo - T * half - origin) / T)) - 1;
  const long l1 = static_cast<long>(std::ceil((hi + T * half - origin) / T)) + 1;
  for (long l = l0; l <= l1; ++l) {
    const long double x = origin + static_cast<long double>(l) * T;
    const long double y = fold_position(x, N, b);
    const long double q = (y - origin) / T;
    const long r = std::lround(static_cast<double>(q));
    if (std::fabs(q - r) > 1e-9L || r < 0 || r >= static_cast<long>(M)) {
      ADD_FAILURE() << "lattice point " << l << " folds to " << static_cast<double>(y)
                    << ", not a coarse sample";
      return {};
    }
    xs.push_back(x);
    owner.push_back(static_cast<std::size_t>(r));
  }
  // Pieces between consecutive knots of both families.
  std::vector<long double> cuts{lo, hi};
  const long double fine_shift = n % 2 ? 0.0L : 0.5L;
  for (long k = static_cast<long>(std::floor(lo)) - 1; k <= static_cast<long>(hi) + 1; ++k) {
    const long double kn = k + fine_shift;
    if (kn > lo && kn < hi) cuts.push_back(kn);
  }
  for (long double x : xs)
    for (int i = 0; i <= n + 1; ++i) {
      const long double kn = x + T * (i - half);
      if (kn > lo && kn < hi) cuts.push_back(kn);
    }
  std::sort(cuts.begin(), cuts.end());
  std::vector<long double> A(M * M, 0), r(M, 0), psi(M);
  const Rule& g = rule16();
  for (std::size_t p = 0; p + 1 < cuts.size(); ++p) {
    const long double a = cuts[p], e = cuts[p + 1];
    if (!(e - a > 1e-13L)) continue;
    for (std::size_t i = 0; i < g.x.size(); ++i) {
      const long double y = (a + e) / 2 + (e - a) / 2 * g.x[i], wt = (e - a) / 2 * g.w[i];
      long double s = 0;
      for (long k = static_cast<long>(std::floor(y - half)); k <= static_cast<long>(y + half) + 1;
           ++k)
        s += c[svtest::explicit_extension(k, N, b)] * beta_tp(n, y - k);
      std::fill(psi.begin(), psi.end(), 0.0L);
      // xs[i] = origin + (l0 + i) T: only those within T (n+1)/2 of y.
      const long q0 = std::max(0L, static_cast<long>(std::floor((y - T * half - origin) / T)) - l0);
      const long q1 = std::min(static_cast<long>(xs.size()) - 1,
                               static_cast<long>(std::ceil((y + T * half - origin) / T)) - l0);
      for (long q = q0; q <= q1; ++q) psi[owner[q]] += beta_tp(n, (y - xs[q]) / T);
      for (std::size_t u = 0; u < M; ++u) {
        if (psi[u] == 0) continue;
        r[u] += wt * psi[u] * s;
        for (std::size_t v = 0; v < M; ++v) A[u * M + v] += wt * psi[u] * psi[v];
      }
    }
  }
  // Gaussian elimination with partial pivoting.
  for (std::size_t col = 0; col < M; ++col) {
    std::size_t piv = col;
    for (std::size_t i = col + 1; i < M; ++i)
      if (std::fabs(A[i * M + col]) > std::fabs(A[piv * M + col])) piv = i;
    for (std::size_t j = 0; j < M; ++j) std::swap(A[col * M + j], A[piv * M + j]);
    std::swap(r[col], r[piv]);
    for (std::size_t i = col + 1; i < M; ++i) {
      const long double f = A[i * M + col] / A[col * M + col];
      for (std::size_t j = col; j < M; ++j) A[i * M + j] -= f * A[col * M + j];
      r[i] -= f * r[col];
    }
  }
  std::vector<double> d(M);
  for (std::size_t i = M; i-- > 0;) {
    long double s = r[i];
    for (std::size_t j = i + 1; j < M; ++j) s -= A[i * M + j] * d[j];
    d[i] = static_cast<double>(s / A[i * M + i]);
  }
  return d;
}

// ---- Helpers ---------------------------------------------------------------------------------

// The gain of the coarse Gram filter (the inverse of the sampled beta_{2n+1}) at the Nyquist
// frequency, 1 / sum_k beta_{2n+1}(k) (-1)^k: 1 for degree 0, 3 for 1, 18.5 for 3, 687 for 7.
// Rounding errors of everything before it grow by up to this on every axis.
double gram_gain(int n) {
  long double b = 0;
  for (int k = -n; k <= n; ++k) b += beta_tp(2 * n + 1, k) * ((k % 2) ? -1 : 1);
  return static_cast<double>(1 / b);
}

sv::ReduceOptions options(int degree, Boundary b, PyramidGrid g = PyramidGrid::ByBoundary) {
  sv::ReduceOptions o;
  o.degree = degree;
  o.boundary = b;
  o.grid = g;
  return o;
}

std::uint32_t seed_of(std::mt19937& rng) {
  return static_cast<std::uint32_t>(rng());
}

std::vector<double> random_line(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

Array<double> line_array(const std::vector<double>& v) {
  Array<double> a({v.size()});
  std::copy(v.begin(), v.end(), a.data());
  return a;
}

double max_abs_diff(const Array<double>& a, const Array<double>& b) {
  EXPECT_EQ(a.dims(), b.dims());
  EXPECT_EQ(a.channels(), b.channels());
  double m = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

// The grids each mode takes: reflect Cells, mirror Nodes, periodic both.
std::vector<PyramidGrid> grids_of(Boundary b) {
  if (b == Boundary::Periodic) return {PyramidGrid::Cells, PyramidGrid::Nodes};
  return {b == Boundary::Reflect ? PyramidGrid::Cells : PyramidGrid::Nodes};
}

// Applies a 1-D function to every line of `a` along `axis` (all channels).
Array<double> per_line(const Array<double>& a, std::size_t axis,
                       const std::function<Array<double>(const Array<double>&)>& f) {
  std::size_t outer = 1, inner = a.channels();
  for (std::size_t d = 0; d < axis; ++d) outer *= a.dim(d);
  for (std::size_t d = axis + 1; d < a.rank(); ++d) inner *= a.dim(d);
  const std::size_t n = a.dim(axis);
  Array<double> out;
  std::size_t m = 0;
  for (std::size_t o = 0; o < outer; ++o)
    for (std::size_t i = 0; i < inner; ++i) {
      Array<double> line({n});
      for (std::size_t k = 0; k < n; ++k) line[k] = a[(o * n + k) * inner + i];
      const Array<double> r = f(line);
      if (out.empty()) {
        m = r.dim(0);
        std::vector<std::size_t> dims = a.dims();
        dims[axis] = m;
        out = Array<double>(dims, a.channels());
      }
      for (std::size_t k = 0; k < m; ++k) out[(o * m + k) * inner + i] = r[k];
    }
  return out;
}

template <class Fn>
void expect_error(Fn&& fn, const std::string& words) {
  try {
    fn();
    ADD_FAILURE() << "no sv::Error; expected one containing '" << words << "'";
  } catch (const sv::Error& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos)
        << "message: " << e.what() << "\nexpected: " << words;
  }
}

// ---- The basis and the poles -----------------------------------------------------------------

TEST(Pyramid, BsplineAnyMatchesTheLibraryAndSumsToOne) {
  std::mt19937 rng(svtest::fresh_seed());
  std::uniform_real_distribution<double> u(-5, 5);
  for (int n = 0; n <= sv::kMaxDegree; ++n)
    for (int i = 0; i < 200; ++i) {
      const double x = u(rng);
      EXPECT_NEAR(sv::bspline_any(n, x), sv::bspline(n, x), 1e-15) << n << " " << x;
      EXPECT_NEAR(sv::bspline_any(n, x), static_cast<double>(beta_tp(n, x)), 1e-13) << n;
    }
  for (int d = 0; d <= 15; ++d)
    for (int i = 0; i < 20; ++i) {
      const double x = u(rng);
      double s = 0;
      for (int k = -12; k <= 12; ++k) s += sv::bspline_any(d, x - k);
      EXPECT_NEAR(s, 1.0, 1e-14) << d;
    }
}

TEST(Pyramid, OddPolesMatchTheLibraryAndAreRootsForEveryDegree) {
  for (int d : {3, 5, 7}) {
    const std::vector<double> z = sv::odd_bspline_poles(d);
    const sv::Poles p = sv::bspline_poles(d);
    ASSERT_EQ(static_cast<int>(z.size()), p.count);
    for (int i = 0; i < p.count; ++i) EXPECT_NEAR(z[i], p.z[i], 1e-15 * std::fabs(p.z[i])) << d;
  }
  EXPECT_TRUE(sv::odd_bspline_poles(1).empty());
  for (int d = 9; d <= 15; d += 2) {
    const std::vector<double> z = sv::odd_bspline_poles(d);
    ASSERT_EQ(static_cast<int>(z.size()), (d - 1) / 2);
    for (double q : z) {
      ASSERT_TRUE(q < 0 && q > -1) << q;
      // sum_m beta_d(m) q^m = 0 relative to the sum of the absolute terms.
      long double s = 0, mag = 0;
      for (int m = -(d - 1) / 2; m <= (d - 1) / 2; ++m) {
        const long double t = beta_tp(d, m) * std::pow(static_cast<long double>(q), m);
        s += t;
        mag += std::fabs(t);
      }
      EXPECT_LT(std::fabs(s) / mag, 1e-13) << d << " " << q;
    }
  }
}

// ---- Against the dense least-squares solve ---------------------------------------------------

// Every degree 0..7, mode and grid, lines of 1..13 samples; reduce2 and reduce_to_shape to
// output lengths 1..3, about N/2 and N-1..N; the input as coefficients and as samples. Within
// 1e-14 times the Gram gain (7e-12 at degree 7, 1.9e-13 at 3) of the largest coefficient.
TEST(Pyramid, ReduceEqualsTheDenseLeastSquaresSolution) {
  const std::uint32_t seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  double worst = 0;
  int cases = 0;
  for (int n = 0; n <= sv::kMaxDegree; ++n)
    for (Boundary b : svtest::all_boundaries())
      for (PyramidGrid g : grids_of(b))
        for (std::size_t N = 1; N <= 13; ++N) {
          const std::vector<double> f = random_line(N, rng);
          for (bool coefficients : {true, false}) {
            sv::ReduceOptions o = options(n, b, g);
            o.input_is_coefficients = coefficients;
            std::vector<double> c = f;
            if (!coefficients) {
              Array<double> ca = line_array(f);
              sv::PrefilterOptions po;
              po.degree = n;
              po.boundary = b;
              sv::prefilter(ca, po);
              c = ca.vec();
            }
            std::vector<sv::Reduced<double>> runs;
            if (!(b == Boundary::Periodic && N % 2 == 1))
              runs.push_back(sv::reduce2(line_array(f), o));
            for (std::size_t M = 1; M <= N; ++M)
              if (M <= 3 || M + 1 >= N || M == (N + 1) / 2 || M == N / 2 + 2)
                runs.push_back(sv::reduce_to_shape(line_array(f), {M}, o));
            for (const auto& r : runs) {
              const sv::PyramidAxis& ax = r.axes[0];
              SCOPED_TRACE("degree " + std::to_string(n) + " " + sv::boundary_name(b) + " N " +
                           std::to_string(N) + " M " + std::to_string(ax.coarse) + " T " +
                           std::to_string(ax.spacing) + " origin " + std::to_string(ax.origin));
              std::vector<double> want;
              if (N == 1 && b == Boundary::Mirror)
                want.assign(1, c[0]);  // the constant (no period to integrate over)
              else
                want = oracle(c, n, b, ax.origin, ax.spacing, ax.coarse);
              ASSERT_EQ(want.size(), r.coefficients.size());
              double scale = 1;
              for (double v : c) scale = std::max(scale, std::fabs(v));
              for (std::size_t j = 0; j < want.size(); ++j) {
                const double e = std::fabs(r.coefficients[j] - want[j]) / scale;
                worst = std::max(worst, e / gram_gain(n));
                EXPECT_LT(e, 1e-14 * gram_gain(n)) << "coefficient " << j;
              }
              ++cases;
            }
          }
        }
  std::printf(
      "[ pyramid ] %d cases against the dense solve, worst difference %.3g x the Gram gain\n",
      cases, worst);
}

// ---- The projection property and expand2 ----------------------------------------------------

// Where the coarse space lies in the fine one (odd degree with Nodes, even degree with Cells),
// reduce2 of expand2's samples returns the coarse coefficients to rounding: 1e-14 times the
// Gram gain per axis (each axis's expand2 / reduce2 pair rounds on its own, and what an earlier
// axis rounded passes the later axes' pairs, which are the identity on the coarse space; one
// axis measured up to 3e-15 of the gain, three axes up to 1.01e-14 in a random draw of CI):
// 1-D lines of 1..12 samples and 3-D arrays with channels; from the samples and from their
// prefiltered coefficients.
TEST(Pyramid, ExpandThenReduceIsTheIdentityWhereTheSpacesAreNested) {
  const std::uint32_t seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  double worst = 0;
  for (int n = 0; n <= sv::kMaxDegree; ++n)
    for (Boundary b : svtest::all_boundaries())
      for (PyramidGrid g : grids_of(b)) {
        if ((n % 2 == 1) != (g == PyramidGrid::Nodes)) continue;
        std::vector<std::vector<std::size_t>> shapes;
        for (std::size_t N = 1; N <= 12; ++N) shapes.push_back({N});
        shapes.push_back({6, 4, 8});
        if (b != Boundary::Periodic) shapes.push_back({5, 3, 7});
        for (const auto& fine : shapes) {
          if (b == Boundary::Periodic &&
              std::any_of(fine.begin(), fine.end(), [](std::size_t v) { return v % 2; }))
            continue;
          sv::ReduceOptions o = options(n, b, g);
          std::vector<std::size_t> coarse_dims;
          for (std::size_t v : fine) coarse_dims.push_back(sv::reduce2_axis(v, o).coarse);
          const std::size_t ch = fine.size() == 3 ? 2 : 1;
          const Array<double> d =
              svtest::random_array<double>(coarse_dims, ch, seed_of(rng), -1, 1);
          const Array<double> up = sv::expand2(d, fine, o);
          ASSERT_EQ(up.dims(), fine);
          const double e1 = max_abs_diff(sv::reduce2(up, o).coefficients, d);
          Array<double> cf = up;
          sv::PrefilterOptions po;
          po.degree = n;
          po.boundary = b;
          sv::prefilter(cf, po);
          o.input_is_coefficients = true;
          const double e2 = max_abs_diff(sv::reduce2(cf, o).coefficients, d);
          worst = std::max({worst, e1 / gram_gain(n), e2 / gram_gain(n)});
          const double bound = 1e-14 * static_cast<double>(fine.size()) * gram_gain(n);
          EXPECT_LT(e1, bound) << "degree " << n << " " << sv::boundary_name(b) << " "
                               << fine.size() << "-D, first axis " << fine[0];
          EXPECT_LT(e2, bound) << "degree " << n << " " << sv::boundary_name(b);
        }
      }
  std::printf("[ pyramid ] reduce2(expand2(d)) - d: worst %.3g x the Gram gain\n", worst);
}

// With the other pairing the coarse spline is not a fine spline: expand2 then reduce2 is close
// to the identity but not equal (measured on random coefficients).
TEST(Pyramid, ExpandThenReduceIsNotTheIdentityWhereTheSpacesAreNotNested) {
  std::mt19937 rng(svtest::fresh_seed());
  for (int n : {1, 2, 3, 5}) {
    const PyramidGrid g = n % 2 ? PyramidGrid::Cells : PyramidGrid::Nodes;
    const Boundary b = n % 2 ? Boundary::Reflect : Boundary::Mirror;
    const sv::ReduceOptions o = options(n, b, g);
    const Array<double> d = svtest::random_array<double>({32}, 1, seed_of(rng), -1, 1);
    const double e = max_abs_diff(sv::reduce2(sv::expand2(d, {64}, o), o).coefficients, d);
    std::printf("[ pyramid ] degree %d %s: reduce2(expand2(d)) - d = %.3g (not nested)\n", n,
                sv::boundary_name(b), e);
    EXPECT_GT(e, 1e-4) << n;
    EXPECT_LT(e, 0.5) << n;
  }
}

// expand2 evaluates the coarse spline: where its ends are one sv::Boundary it equals the
// library's sampler at the positions (i - origin) / 2.
TEST(Pyramid, ExpandEqualsTheSamplerOnTheCoarseSpline) {
  std::mt19937 rng(svtest::fresh_seed());
  for (int n = 0; n <= sv::kMaxDegree; ++n)
    for (Boundary b : svtest::all_boundaries())
      for (PyramidGrid g : grids_of(b))
        for (std::size_t N : {2, 3, 8, 9, 16, 17}) {
          const sv::ReduceOptions o = options(n, b, g);
          if (b == Boundary::Periodic && N % 2) continue;
          const sv::PyramidAxis ax = sv::reduce2_axis(N, o);
          if (ax.left != ax.right) continue;
          const Array<double> d = svtest::random_array<double>({ax.coarse}, 1, seed_of(rng), -1, 1);
          const Array<double> up = sv::expand2(d, {N}, o);
          std::vector<double> pos;
          for (std::size_t i = 0; i < N; ++i)
            pos.push_back((static_cast<double>(i) - ax.origin) / 2);
          sv::SamplerOptions so;
          so.degree = n;
          so.boundary = b;
          const std::vector<double> want = sv::sample(d, pos, so);
          for (std::size_t i = 0; i < N; ++i)
            EXPECT_NEAR(up[i], want[i], 1e-14) << n << " " << sv::boundary_name(b) << " " << N;
        }
}

// ---- reduce2 and reduce ------------------------------------------------------------------------

// reduce at factor 1/2 (or to the shape (N+1)/2 for odd mirror axes) is reduce2: the FIR of the
// one from the two-scale relation, of the other from quadrature.
TEST(Pyramid, ReduceAtOneHalfEqualsReduce2) {
  std::mt19937 rng(svtest::fresh_seed());
  double worst = 0;
  for (int n = 0; n <= sv::kMaxDegree; ++n) {
    // Rounding: the taps of the two differ by about an ulp, and every axis's Gram filter can grow
    // such differences by up to its gain at the Nyquist frequency, G = 1 / sum_k beta_{2n+1}(k)
    // (-1)^k (1 for degree 0, 3 for 1, 18.5 for 3, 687 for 7). Measured on these 3-D arrays:
    // up to 6e-14 G over 20 runs (degree 7, mirror; reflect stays below 1e-15 G); allowed 2e-13 G.
    const double gain = gram_gain(n);
    for (Boundary b : svtest::all_boundaries())
      for (PyramidGrid g : grids_of(b))
        for (bool samples : {false, true}) {
          sv::ReduceOptions o = options(n, b, g);
          o.samples = samples;
          const std::vector<std::size_t> dims = b == Boundary::Mirror
                                                    ? std::vector<std::size_t>{9, 5, 13}
                                                    : std::vector<std::size_t>{8, 6, 12};
          const Array<double> f = svtest::random_array<double>(dims, 2, seed_of(rng), -1, 1);
          const sv::Reduced<double> r2 = sv::reduce2(f, o);
          const sv::Reduced<double> r = b == Boundary::Mirror ? sv::reduce_to_shape(f, {5, 3, 7}, o)
                                                              : sv::reduce(f, {0.5, 0.5, 0.5}, o);
          const double e = max_abs_diff(r.coefficients, r2.coefficients);
          worst = std::max(worst, e / gain);
          EXPECT_LT(e, 2e-13 * gain) << n << " " << sv::boundary_name(b);
          if (samples) {
            EXPECT_LT(max_abs_diff(r.samples, r2.samples), 2e-13 * gain) << n;
          }
          for (std::size_t d = 0; d < 3; ++d) {
            EXPECT_EQ(r.axes[d].origin, r2.axes[d].origin);
            EXPECT_EQ(r.axes[d].spacing, r2.axes[d].spacing);
          }
        }
  }
  std::printf("[ pyramid ] reduce(1/2) - reduce2: worst %.3g x the Gram gain\n", worst);
}

// Degree 0 on the Cells grid is the mean over the fine samples each coarse one covers.
TEST(Pyramid, DegreeZeroOnCellsIsTheBlockMean) {
  std::mt19937 rng(svtest::fresh_seed());
  const Array<double> f = svtest::random_array<double>({12, 18}, 3, seed_of(rng));
  for (std::size_t k : {2, 3, 6}) {
    sv::ReduceOptions o = options(0, Boundary::Reflect);
    const sv::Reduced<double> r = sv::reduce_to_shape(f, {12 / k, 18 / k}, o);
    for (std::size_t y = 0; y < 12 / k; ++y)
      for (std::size_t x = 0; x < 18 / k; ++x)
        for (std::size_t c = 0; c < 3; ++c) {
          double s = 0;
          for (std::size_t i = 0; i < k; ++i)
            for (std::size_t j = 0; j < k; ++j) s += f.at2(y * k + i, x * k + j, c);
          EXPECT_NEAR(r.coefficients.at2(y, x, c), s / static_cast<double>(k * k), 1e-14);
        }
  }
}

// Polynomials of degree <= n are reproduced away from the ends (the projection onto a space
// that holds them; the ends see the extension, which is not the polynomial). Degree n + 1 is
// not, except at the coarse samples for even n and factor 1/2: both the fine interpolation and
// the projection then commute with the reflection about a coarse sample (a fine sample or the
// midpoint of two), which turns x^(n+1) into -x^(n+1) plus lower terms, so the error is odd
// about every coarse sample and vanishes there. At other spacings the coarse samples are no
// symmetry centres of the fine grid and the error is small but not zero.
TEST(Pyramid, ReproducesPolynomialsUpToTheDegree) {
  for (int n = 0; n <= sv::kMaxDegree; ++n)
    for (Boundary b : {Boundary::Reflect, Boundary::Mirror})
      for (double factor : {0.5, 0.37}) {
        sv::ReduceOptions o = options(n, b);
        o.samples = true;
        // A line long enough that the ends, where the extension is not the polynomial and
        // values reach (600/8)^7, are hundreds of coarse samples from the window checked.
        const std::size_t N = 1201;
        const double s = 8;
        for (int p = 0; p <= n + 1; ++p) {
          auto poly = [p, s](double x) {
            const double u = (x - 600) / s;
            return std::pow(u, p) + 0.5 * std::pow(u, std::max(0, p - 1)) - 0.25;
          };
          Array<double> f({N});
          for (std::size_t k = 0; k < N; ++k) f[k] = poly(static_cast<double>(k));
          const sv::Reduced<double> r =
              factor == 0.5 ? sv::reduce2(f, o) : sv::reduce(f, {factor}, o);
          const sv::PyramidAxis& ax = r.axes[0];
          double worst = 0, scale = 0;
          for (std::size_t j = 0; j < ax.coarse; ++j) {
            const double x = ax.origin + static_cast<double>(j) * ax.spacing;
            if (x < 500 || x > 700) continue;
            worst = std::max(worst, std::fabs(r.samples[j] - poly(x)));
            scale = std::max(scale, std::fabs(poly(x)));
          }
          SCOPED_TRACE("degree " + std::to_string(n) + " polynomial " + std::to_string(p) + " " +
                       sv::boundary_name(b) + " factor " + std::to_string(factor));
          // The (n+1)-th derivative of the polynomial, which sets the size of the error.
          const double derivative = std::tgamma(n + 2) / std::pow(s, n + 1);
          if (p <= n || (n % 2 == 0 && factor == 0.5)) {
            EXPECT_LT(worst / scale, 1e-12);
          } else if (n % 2 == 1) {
            EXPECT_GT(worst / derivative, 1e-4);
          }
        }
      }
}

// ---- Frequency response and aliasing -----------------------------------------------------------

// A sinusoid (periodic line of 256 samples) at 0.5 .. 2 times the coarse Nyquist frequency
// pi/2: reduce2's output equals Re(A exp(i (w x_l + phi))) with A = reduce_response (samples
// and coefficients); above the Nyquist frequency A is small, while point decimation keeps the
// whole amplitude (at the aliased frequency).
TEST(Pyramid, SinusoidsAreAttenuatedAsTheResponseSays) {
  const std::size_t N = 256;
  const double phi = 0.3;
  for (int n : {0, 1, 3, 5})
    for (PyramidGrid g : {PyramidGrid::Nodes, PyramidGrid::Cells})
      for (std::size_t p : {32, 48, 64, 80, 96, 128}) {
        const double w = 2 * 3.14159265358979323846 * static_cast<double>(p) / N;
        Array<double> f({N});
        for (std::size_t k = 0; k < N; ++k) f[k] = std::cos(w * static_cast<double>(k) + phi);
        sv::ReduceOptions o = options(n, Boundary::Periodic, g);
        o.samples = true;
        const sv::Reduced<double> r = sv::reduce2(f, o);
        const double x0 = r.axes[0].origin;
        const std::complex<double> As = sv::reduce_response(n, 2, w, x0, false, true);
        const std::complex<double> Ac = sv::reduce_response(n, 2, w, x0, false, false);
        double es = 0, ec = 0, amp = 0;
        for (std::size_t l = 0; l < N / 2; ++l) {
          const double x = x0 + 2.0 * static_cast<double>(l);
          const std::complex<double> e(std::cos(w * x + phi), std::sin(w * x + phi));
          es = std::max(es, std::fabs(r.samples[l] - (As * e).real()));
          ec = std::max(ec, std::fabs(r.coefficients[l] - (Ac * e).real()));
          amp = std::max(amp, std::fabs(r.samples[l]));
        }
        const double tol = n == 0 ? 2e-6 : 1e-12;
        EXPECT_LT(es, tol) << "degree " << n << " p " << p;
        EXPECT_LT(ec, tol) << "degree " << n << " p " << p;
        const double ratio = static_cast<double>(p) / 64;
        if (ratio >= 1.5 && n >= 1) {
          EXPECT_LT(std::abs(As), n == 1 ? 0.1 : 0.02) << n;
          EXPECT_LT(amp, n == 1 ? 0.1 : 0.02) << n;
        }
        if (ratio <= 0.5 && n >= 1) {
          EXPECT_GT(std::abs(As), 0.9) << n;
        }
        // Point decimation (Nodes: every other sample) keeps the full amplitude.
        if (g == PyramidGrid::Nodes) {
          double pd = 0;
          for (std::size_t l = 0; l < N / 2; ++l) pd = std::max(pd, std::fabs(f[2 * l]));
          EXPECT_GT(pd, 0.95);
        }
      }
}

// At a spacing that is not an integer (256 -> 100) each output has its own fractional
// position: the output is exp(i w x_l) A(w, frac(x_l)) sample by sample.
TEST(Pyramid, ResponseHoldsAtAnySpacing) {
  const std::size_t N = 256, M = 100;
  for (int n : {1, 3})
    for (std::size_t p : {10, 40, 60, 90}) {
      const double w = 2 * 3.14159265358979323846 * static_cast<double>(p) / N;
      Array<double> f({N});
      for (std::size_t k = 0; k < N; ++k) f[k] = std::cos(w * static_cast<double>(k));
      sv::ReduceOptions o = options(n, Boundary::Periodic);
      o.samples = true;
      const sv::Reduced<double> r = sv::reduce_to_shape(f, {M}, o);
      const sv::PyramidAxis& ax = r.axes[0];
      double worst = 0;
      std::map<double, std::complex<double>> gains;  // by fractional position
      for (std::size_t l = 0; l < M; ++l) {
        const double x = ax.origin + static_cast<double>(l) * ax.spacing;
        const double frac = x - std::floor(x);
        auto it = gains.find(frac);
        if (it == gains.end())
          it = gains.emplace(frac, sv::reduce_response(n, ax.spacing, w, frac)).first;
        const std::complex<double> A = it->second;
        const double want = (A * std::complex<double>(std::cos(w * x), std::sin(w * x))).real();
        worst = std::max(worst, std::fabs(r.samples[l] - want));
      }
      EXPECT_LT(worst, 1e-11) << n << " " << p;
    }
  EXPECT_NEAR(std::abs(sv::reduce_response(3, 2.5, 0)), 1.0, 1e-12);
}

// ---- Separability, precision, threads, small axes ---------------------------------------------

TEST(Pyramid, TwoAndThreeDimensionsAreTheOneDimensionalPassesPerAxis) {
  std::mt19937 rng(svtest::fresh_seed());
  for (Boundary b : svtest::all_boundaries())
    for (const std::vector<std::size_t>& dims :
         {std::vector<std::size_t>{7, 10}, std::vector<std::size_t>{6, 9, 10}}) {
      const Array<double> f = svtest::random_array<double>(dims, 2, seed_of(rng), -1, 1);
      std::vector<std::size_t> shape;
      for (std::size_t v : dims) shape.push_back(v > 6 ? v / 2 : v - 1);
      sv::ReduceOptions o = options(3, b);
      o.samples = true;
      const sv::Reduced<double> r = sv::reduce_to_shape(f, shape, o);
      Array<double> want = f;
      for (std::size_t d = 0; d < dims.size(); ++d)
        want = per_line(want, d, [&](const Array<double>& line) {
          return sv::reduce_to_shape(line, {shape[d]}, o).samples;
        });
      EXPECT_LT(max_abs_diff(r.samples, want), 1e-13) << sv::boundary_name(b);
      if (b == Boundary::Periodic) continue;
      const sv::Reduced<double> r2 = sv::reduce2(f, o);
      Array<double> want2 = f;
      for (std::size_t d = 0; d < dims.size(); ++d)
        want2 = per_line(want2, d,
                         [&](const Array<double>& line) { return sv::reduce2(line, o).samples; });
      EXPECT_LT(max_abs_diff(r2.samples, want2), 1e-13) << sv::boundary_name(b);
    }
}

TEST(Pyramid, FloatAgreesWithDouble) {
  std::mt19937 rng(svtest::fresh_seed());
  const Array<double> f = svtest::random_array<double>({20, 17, 33}, 1, seed_of(rng), -1, 1);
  const Array<float> ff = Array<float>::from(f);
  for (int n : {1, 3, 5})
    for (Boundary b : svtest::all_boundaries()) {
      sv::ReduceOptions o = options(n, b);
      o.samples = true;
      const std::vector<std::size_t> shape{9, 8, 12};
      const sv::Reduced<double> rd = sv::reduce_to_shape(f, shape, o);
      const sv::Reduced<float> rf = sv::reduce_to_shape(ff, shape, o);
      double worst = 0;
      for (std::size_t i = 0; i < rd.samples.size(); ++i)
        worst = std::max(worst, std::fabs(rd.samples[i] - static_cast<double>(rf.samples[i])));
      EXPECT_LT(worst, 2e-6) << n << " " << sv::boundary_name(b);
      if (b != Boundary::Periodic) {
        const Array<float> back = sv::expand2(sv::reduce2(ff, o).coefficients, ff.dims(), o);
        const Array<double> backd = sv::expand2(sv::reduce2(f, o).coefficients, f.dims(), o);
        double e = 0;
        for (std::size_t i = 0; i < back.size(); ++i)
          e = std::max(e, std::fabs(backd[i] - static_cast<double>(back[i])));
        EXPECT_LT(e, 2e-6) << n;
      }
    }
}

TEST(Pyramid, ThreadsDoNotChangeTheResult) {
  std::mt19937 rng(svtest::fresh_seed());
  const Array<float> f = svtest::random_array<float>({33, 40, 70}, 1, seed_of(rng));
  sv::ReduceOptions o = options(3, Boundary::Reflect);
  o.samples = true;
  o.threads = 1;
  const sv::Reduced<float> a = sv::reduce2(f, o);
  o.threads = 4;
  const sv::Reduced<float> b = sv::reduce2(f, o);
  EXPECT_EQ(a.coefficients.vec(), b.coefficients.vec());
  EXPECT_EQ(a.samples.vec(), b.samples.vec());
}

// Constants stay constant for every degree, mode, grid and length 1..5 (the DC gain of every
// step is 1), and the coarse lengths and positions are the documented ones.
TEST(Pyramid, ShortAxesKeepConstantsAndTheDocumentedGrid) {
  for (int n = 0; n <= sv::kMaxDegree; ++n)
    for (Boundary b : svtest::all_boundaries())
      for (PyramidGrid g : grids_of(b))
        for (std::size_t N = 1; N <= 5; ++N) {
          sv::ReduceOptions o = options(n, b, g);
          o.samples = true;
          Array<double> f({N, 2});
          for (std::size_t i = 0; i < f.size(); ++i) f[i] = 2.5;
          for (std::size_t M = 1; M <= N; ++M) {
            const sv::Reduced<double> r = sv::reduce_to_shape(f, {M, 1}, o);
            for (std::size_t i = 0; i < r.samples.size(); ++i) {
              EXPECT_NEAR(r.samples[i], 2.5, 1e-12) << n << " " << N << " " << M;
              EXPECT_NEAR(r.coefficients[i], 2.5, 1e-12);
            }
            const sv::PyramidAxis& ax = r.axes[0];
            if (M == N) {
              EXPECT_EQ(ax.spacing, 1);
              EXPECT_EQ(ax.origin, 0);
            } else if (b == Boundary::Mirror) {
              EXPECT_EQ(ax.origin, 0);
              if (M > 1) {
                EXPECT_DOUBLE_EQ(ax.spacing,
                                 static_cast<double>(N - 1) / static_cast<double>(M - 1));
              }
            } else {
              EXPECT_DOUBLE_EQ(ax.spacing, static_cast<double>(N) / static_cast<double>(M));
              EXPECT_DOUBLE_EQ(ax.origin, g == PyramidGrid::Cells ? (ax.spacing - 1) / 2 : 0.0);
            }
          }
          if (b == Boundary::Periodic && N % 2) continue;
          const sv::Reduced<double> r2 = sv::reduce2(f, o);
          const sv::PyramidAxis& ax = r2.axes[0];
          EXPECT_EQ(ax.coarse, b == Boundary::Periodic ? N / 2 : (N + 1) / 2);
          EXPECT_EQ(ax.origin, g == PyramidGrid::Cells ? 0.5 : 0.0);
          for (std::size_t i = 0; i < r2.samples.size(); ++i)
            EXPECT_NEAR(r2.samples[i], 2.5, 1e-12) << n << " " << N;
          const Array<double> up = sv::expand2(r2.coefficients, f.dims(), o);
          for (std::size_t i = 0; i < up.size(); ++i) EXPECT_NEAR(up[i], 2.5, 1e-12);
        }
}

TEST(Pyramid, MixedEndsOfOddReflectAndEvenMirrorAxes) {
  sv::PyramidOptions o;
  o.boundary = Boundary::Reflect;
  sv::PyramidAxis a = sv::reduce2_axis(7, o);
  EXPECT_EQ(a.coarse, 4u);
  EXPECT_EQ(a.left, Boundary::Reflect);
  EXPECT_EQ(a.right, Boundary::Mirror);
  EXPECT_EQ(sv::reduce2_axis(8, o).right, Boundary::Reflect);
  o.boundary = Boundary::Mirror;
  a = sv::reduce2_axis(8, o);
  EXPECT_EQ(a.coarse, 4u);
  EXPECT_EQ(a.left, Boundary::Mirror);
  EXPECT_EQ(a.right, Boundary::Reflect);
  EXPECT_EQ(sv::reduce2_axis(9, o).right, Boundary::Mirror);
}

// ---- Refusals
// ------------------------------------------------------------------------------------

TEST(Pyramid, RefusesBadInputWithASentence) {
  const Array<double> f({8, 6});
  sv::ReduceOptions o;
  o.degree = 8;
  expect_error([&] { sv::reduce2(f, o); }, "degree must be between 0 and 7, got 8");
  o.degree = -1;
  expect_error([&] { sv::reduce(f, {0.5, 0.5}, o); }, "degree must be between 0 and 7, got -1");
  o.degree = 3;
  expect_error([&] { sv::reduce(f, {0.5, 1.5}, o); }, "factor of axis 1 must be in (0, 1]");
  expect_error([&] { sv::reduce(f, {0.0, 0.5}, o); }, "factor of axis 0 must be in (0, 1]");
  expect_error([&] { sv::reduce(f, {-0.5, 0.5}, o); }, "must be in (0, 1]");
  expect_error([&] { sv::reduce(f, {std::nan(""), 0.5}, o); }, "must be in (0, 1]");
  expect_error([&] { sv::reduce(f, {0.5}, o); }, "1 factors for an array of 2 axes");
  expect_error([&] { sv::reduce(f, {0.01, 0.5}, o); }, "leaves no sample");
  expect_error([&] { sv::reduce_to_shape(f, {9, 3}, o); }, "cannot become 9");
  expect_error([&] { sv::reduce_to_shape(f, {0, 3}, o); }, "cannot become 0");
  expect_error([&] { sv::reduce2(Array<double>(), o); }, "the array is empty");
  expect_error([&] { sv::reduce(Array<float>(), {}, o); }, "the array is empty");
  for (Boundary b : {Boundary::Nearest, Boundary::Constant, Boundary::GridConstant}) {
    o.boundary = b;
    expect_error([&] { sv::reduce2(f, o); }, "is not supported");
  }
  o.boundary = Boundary::Wrap;
  expect_error([&] { sv::reduce2(f, o); }, "use mirror");
  o.boundary = Boundary::Reflect;
  o.grid = PyramidGrid::Nodes;
  expect_error([&] { sv::reduce2(f, o); }, "reflect needs the Cells grid");
  o.boundary = Boundary::Mirror;
  o.grid = PyramidGrid::Cells;
  expect_error([&] { sv::reduce(f, {0.5, 0.5}, o); }, "mirror needs the Nodes grid");
  o.boundary = Boundary::Periodic;
  o.grid = PyramidGrid::ByBoundary;
  expect_error([&] { sv::reduce2(Array<double>({7}), o); }, "periodic axis of 7 samples");
  o.boundary = Boundary::Reflect;
  expect_error(
      [&] {
        sv::expand2(Array<double>({3, 3}), {8, 6}, o);
      },
      "axis 0 has 3 coarse coefficients, but reduce2 makes 4 of 8");
  expect_error([&] { sv::expand2(Array<double>({4, 3}), {8}, o); }, "fine shape has 1 axes");
  expect_error([&] { sv::reduce_response(3, 0.5, 1); }, "spacing must be at least 1");
}

// expand2's two phases (pyramid_detail::expand_phases, what CUDA's expand2 runs) are the table
// of expand_plan: for every fine sample, its taps extended by fold and merged give the same
// folded indices and the same weights, for every degree, mode, grid and length 1-41.
TEST(Pyramid, ExpandPhasesAreTheExpandTables) {
  namespace pd = sv::pyramid_detail;
  std::size_t rows = 0;
  for (int n = 0; n <= sv::kMaxDegree; ++n)
    for (Boundary b : {Boundary::Reflect, Boundary::Mirror, Boundary::Periodic})
      for (PyramidGrid g : {PyramidGrid::ByBoundary, PyramidGrid::Cells, PyramidGrid::Nodes})
        for (std::size_t N = 1; N <= 41; ++N) {
          if (b == Boundary::Periodic && (N % 2 != 0 || g == PyramidGrid::ByBoundary)) continue;
          if (b != Boundary::Periodic && g != PyramidGrid::ByBoundary) continue;
          sv::PyramidOptions o;
          o.degree = n;
          o.boundary = b;
          o.grid = g;
          const sv::PyramidAxis ax = sv::reduce2_axis(N, o);
          const pd::Taps t = pd::expand_plan({ax.coarse}, {N}, o).front().taps;
          const pd::ExpandPhases e = pd::expand_phases(ax, n);
          ASSERT_EQ(e.taps, n + 1);
          ASSERT_EQ(t.out(), N);
          for (std::size_t i = 0; i < N; ++i) {
            const long q = static_cast<long>(i / 2);
            const int p = static_cast<int>(i % 2);
            std::map<long, double> merged;
            for (int k = 0; k < e.taps; ++k)
              if (e.w[p][k] != 0)
                merged[pd::fold(q + e.first[p] + k, e.coarse, e.ends)] += e.w[p][k];
            std::map<long, double> want;
            for (std::size_t r = t.row[i]; r < t.row[i + 1]; ++r) want[t.index[r]] += t.weight[r];
            SCOPED_TRACE("degree " + std::to_string(n) + " " + sv::boundary_name(b) + " N " +
                         std::to_string(N) + " i " + std::to_string(i));
            ASSERT_EQ(merged.size(), want.size());
            for (const auto& [k, w] : want) {
              ASSERT_EQ(merged.count(k), 1u) << "index " << k;
              EXPECT_NEAR(merged[k], w, 1e-15);
            }
            ++rows;
          }
        }
  EXPECT_GT(rows, 4000u);
}

// reduce2 by phases (CUDA's route): one decimating FIR over the fine line, then the poles z_i^2
// and the Gram poles on the coarse line, against reduce2's passes (prefilter, FIR, Gram filter)
// for every degree, mode, grid and length 1-41, from samples and from coefficients.
TEST(Pyramid, Reduce2ByPhasesEqualsReduce2) {
  namespace pd = sv::pyramid_detail;
  const std::uint32_t seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  double worst = 0;
  std::size_t cases = 0;
  for (int n = 0; n <= sv::kMaxDegree; ++n)
    for (Boundary b : {Boundary::Reflect, Boundary::Mirror, Boundary::Periodic})
      for (PyramidGrid g : {PyramidGrid::ByBoundary, PyramidGrid::Cells, PyramidGrid::Nodes})
        for (std::size_t N = 1; N <= 41; ++N)
          for (int coef = 0; coef < 2; ++coef) {
            if (b == Boundary::Periodic && (N % 2 != 0 || g == PyramidGrid::ByBoundary)) continue;
            if (b != Boundary::Periodic && g != PyramidGrid::ByBoundary) continue;
            sv::ReduceOptions o = options(n, b, g);
            o.input_is_coefficients = coef == 1;
            const sv::PyramidAxis ax = sv::reduce2_axis(N, o);
            const pd::ReducePhases ph = pd::reduce2_phases(ax, n, o.input_is_coefficients);
            ASSERT_EQ(ph.taps, static_cast<int>(ph.w.size()));
            ASSERT_LE(ph.taps, 3 * (n + 1) + 2 * (n / 2) + 1);
            ASSERT_LE(ph.poles.z.size(), static_cast<std::size_t>(pd::kMaxPoles));
            const std::vector<double> x = random_line(N, rng);
            std::vector<double> y(ax.coarse);
            for (std::size_t j = 0; j < ax.coarse; ++j) {
              double s = 0;
              for (int k = 0; k < ph.taps; ++k)
                s += ph.w[static_cast<std::size_t>(k)] *
                     x[static_cast<std::size_t>(
                         pd::fold(2 * static_cast<long>(j) + ph.first + k, ph.fine, ph.fine_ends))];
              y[j] = s;
            }
            double acc = 0;
            pd::filter_poles(y.data(), 1, 1, pd::pole_line(ph.poles, ph.coarse, ph.coarse_ends),
                             &acc);
            const Array<double> want = sv::reduce2(line_array(x), o).coefficients;
            const double e = max_abs_diff(line_array(y), want);
            SCOPED_TRACE("degree " + std::to_string(n) + " " + sv::boundary_name(b) + " N " +
                         std::to_string(N) + (coef ? " coefficients-in" : " samples-in"));
            EXPECT_LT(e, 1e-14 * gram_gain(n));
            worst = std::max(worst, e / gram_gain(n));
            ++cases;
          }
  EXPECT_GT(cases, 1500u);
  std::printf("[ pyramid ] reduce2 by phases: %zu cases, worst %.3g of the Gram gain\n", cases,
              worst);
}

}  // namespace
