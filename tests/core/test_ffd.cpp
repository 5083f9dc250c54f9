// Cubic B-spline FFD (ffd.h): the zero grid is the identity; polynomial reproduction (linear and
// quadratic, with the B-spline's variance correction); the tile-structured dense field and
// Jacobian determinant against the per-voxel double reference; the Jacobian against central
// differences and a folding field with the predicted determinants; bending energy against
// analytic values and two numerical integrations, its gradient against differences, the
// separable threaded evaluation against the first implementation and across thread counts;
// exact refinement; the refusals and their messages.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "splineview/bspline.h"
#include "splineview/error.h"
#include "splineview/ffd.h"
#include "test_util.h"

namespace {

using sv::Array;
using Shape = std::vector<std::size_t>;
using Delta = std::vector<int>;

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kEpsF = std::numeric_limits<float>::epsilon();

// A random control grid with the minimum point counts for `shape` plus `extra` per axis.
Array<double> random_grid(const Shape& shape, const Delta& delta, std::uint32_t seed,
                          double amplitude = 2.0, std::size_t extra = 0) {
  Shape m = sv::ffd_grid_shape(shape, delta);
  for (auto& v : m) v += extra;
  return svtest::random_array<double>(m, shape.size(), seed, -amplitude, amplitude);
}

double max_abs(const Array<double>& a) {
  double m = 0;
  for (double v : a.vec()) m = std::max(m, std::fabs(v));
  return m;
}

template <class T>
double max_diff(const Array<T>& a, const Array<double>& b) {
  EXPECT_EQ(a.dims(), b.dims());
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    m = std::max(m, std::fabs(static_cast<double>(a[i]) - b[i]));
  return m;
}

// Visits every voxel of a 2-D or 3-D shape with its position (array axis order) and flat index.
void for_each_voxel(const Shape& s, const std::function<void(const double*, std::size_t)>& fn) {
  const std::size_t nz = s.size() == 3 ? s[0] : 1, ny = s[s.size() - 2], nx = s.back();
  std::size_t i = 0;
  for (std::size_t z = 0; z < nz; ++z)
    for (std::size_t y = 0; y < ny; ++y)
      for (std::size_t x = 0; x < nx; ++x, ++i) {
        const double p3[3] = {double(z), double(y), double(x)};
        fn(p3 + (3 - s.size()), i);
      }
}

// Calls fn(index, position) for every control point; position = (j - 1) * delta per axis.
void for_each_control(const Array<double>& g, const Delta& delta,
                      const std::function<void(std::size_t, const double*)>& fn) {
  const std::size_t r = g.rank();
  for (std::size_t p = 0; p < g.points(); ++p) {
    double pos[3];
    std::size_t q = p;
    for (std::size_t a = r; a-- > 0;) {
      pos[a] = (static_cast<double>(q % g.dim(a)) - 1.0) * delta[a];
      q /= g.dim(a);
    }
    fn(p, pos);
  }
}

// Determinant by Gaussian elimination with partial pivoting (independent of the library's
// cofactor formula).
double det_lu(std::vector<double> m, std::size_t n) {
  double det = 1;
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t piv = k;
    for (std::size_t i = k + 1; i < n; ++i)
      if (std::fabs(m[i * n + k]) > std::fabs(m[piv * n + k])) piv = i;
    if (m[piv * n + k] == 0) return 0;
    if (piv != k) {
      for (std::size_t j = 0; j < n; ++j) std::swap(m[k * n + j], m[piv * n + j]);
      det = -det;
    }
    det *= m[k * n + k];
    for (std::size_t i = k + 1; i < n; ++i) {
      const double f = m[i * n + k] / m[k * n + k];
      for (std::size_t j = k; j < n; ++j) m[i * n + j] -= f * m[k * n + j];
    }
  }
  return det;
}

// ---- Identity -------------------------------------------------------------------------------

TEST(FfdIdentity, ZeroGridGivesZeroFieldAndUnitDeterminant) {
  for (const Shape& shape : {Shape{13, 17}, Shape{7, 9, 11}}) {
    const Delta delta(shape.size(), 3);
    Array<double> grid(sv::ffd_grid_shape(shape, delta), shape.size());
    EXPECT_EQ(max_abs(sv::ffd_field_reference(grid, delta, shape)), 0.0);
    EXPECT_EQ(max_abs(sv::ffd_field(grid, delta, shape)), 0.0);
    const Array<double> det = sv::ffd_jacobian_determinant_field(grid, delta, shape);
    const Array<double> det_ref = sv::ffd_jacobian_determinant_reference(grid, delta, shape);
    for (std::size_t i = 0; i < det.size(); ++i) {
      ASSERT_EQ(det[i], 1.0);
      ASSERT_EQ(det_ref[i], 1.0);
    }
    EXPECT_EQ(sv::ffd_bending_energy(grid, delta), 0.0);
  }
}

// ---- Polynomial reproduction -----------------------------------------------------------------

// Each component c is f_c(x) = b_c + sum_a A_ca x_a + sum_{a<=b} Q_cab x_a x_b. Control values:
// f_c at the control point minus sum_a delta_a^2 / 6 * d^2 f_c / dx_a^2 (sum_j j^2 beta3(t - j)
// = t^2 + 1/3, so the quadratic part needs that shift; the linear part needs none).
void check_polynomial(const Shape& shape, const Delta& delta, bool quadratic, std::uint32_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed) + (quadratic ? " quadratic" : " linear"));
  const std::size_t r = shape.size();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> U(-1, 1);
  double b[3], A[3][3], Q[3][3][3] = {};
  for (std::size_t c = 0; c < r; ++c) {
    b[c] = 3 * U(rng);
    for (std::size_t a = 0; a < r; ++a) {
      A[c][a] = 0.3 * U(rng);
      for (std::size_t e = a; e < r; ++e) Q[c][a][e] = quadratic ? 0.01 * U(rng) : 0.0;
    }
  }
  auto f = [&](std::size_t c, const double* x) {
    double v = b[c];
    for (std::size_t a = 0; a < r; ++a) {
      v += A[c][a] * x[a];
      for (std::size_t e = a; e < r; ++e) v += Q[c][a][e] * x[a] * x[e];
    }
    return v;
  };
  Array<double> grid(sv::ffd_grid_shape(shape, delta), r);
  for_each_control(grid, delta, [&](std::size_t p, const double* pos) {
    for (std::size_t c = 0; c < r; ++c) {
      double shift = 0;
      for (std::size_t a = 0; a < r; ++a) shift += delta[a] * delta[a] / 6.0 * 2 * Q[c][a][a];
      grid[p * r + c] = f(c, pos) - shift;
    }
  });
  const Array<double> field = sv::ffd_field(grid, delta, shape);
  double worst = 0, scale = 0;
  for_each_voxel(shape, [&](const double* x, std::size_t i) {
    for (std::size_t c = 0; c < r; ++c) {
      worst = std::max(worst, std::fabs(field[i * r + c] - f(c, x)));
      scale = std::max(scale, std::fabs(f(c, x)));
    }
  });
  EXPECT_LE(worst, 16 * kEps * scale);
  // Off the voxels too, and the Jacobian is I + df/dx.
  std::uniform_real_distribution<double> P(0, 1);
  for (int k = 0; k < 200; ++k) {
    double x[3], u[3], J[9];
    for (std::size_t a = 0; a < r; ++a) x[a] = P(rng) * static_cast<double>(shape[a] - 1);
    sv::ffd_displacement(grid, delta, x, u);
    sv::ffd_jacobian(grid, delta, x, J);
    for (std::size_t c = 0; c < r; ++c) {
      ASSERT_NEAR(u[c], f(c, x), 16 * kEps * scale);
      for (std::size_t a = 0; a < r; ++a) {
        double d = A[c][a] + (c == a ? 1.0 : 0.0);
        for (std::size_t e = 0; e < r; ++e)
          d += (e == a ? 2 * Q[c][a][a] * x[a] : Q[c][std::min(a, e)][std::max(a, e)] * x[e]);
        ASSERT_NEAR(J[c * r + a], d, 1e-12);
      }
    }
  }
}

TEST(FfdPolynomial, LinearIsReproducedWithControlValuesAtTheControlPoints) {
  check_polynomial({23, 31}, {4, 5}, false, svtest::fresh_seed());
  check_polynomial({11, 14, 17}, {3, 2, 5}, false, svtest::fresh_seed());
}

TEST(FfdPolynomial, QuadraticIsReproducedWithTheVarianceCorrection) {
  check_polynomial({23, 31}, {4, 5}, true, svtest::fresh_seed());
  check_polynomial({11, 14, 17}, {3, 2, 5}, true, svtest::fresh_seed());
  check_polynomial({9, 10, 12}, {1, 7, 8}, true, svtest::fresh_seed());
}

// The variance correction is needed: without it the quadratic misses by delta^2 q / 3.
TEST(FfdPolynomial, QuadraticWithoutTheCorrectionIsOffByTheVariance) {
  const Shape shape{20, 21};
  const Delta delta{4, 6};
  Array<double> grid(sv::ffd_grid_shape(shape, delta), 2);
  const double q = 0.01;
  for_each_control(grid, delta, [&](std::size_t p, const double* pos) {
    grid[p * 2 + 1] = q * pos[1] * pos[1];
  });
  const Array<double> field = sv::ffd_field(grid, delta, shape);
  for_each_voxel(shape, [&](const double* x, std::size_t i) {
    ASSERT_NEAR(field[i * 2 + 1] - q * x[1] * x[1], q * 36 / 3, 1e-12);
  });
}

// ---- The tile-structured field against the reference ----------------------------------------

TEST(FfdField, TileStructuredEqualsTheReferencePerVoxel2D) {
  const std::uint32_t seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  double worst_ulp = 0, worst_ulp_f = 0, worst_ulp_u = 0;
  for (int dy = 1; dy <= 8; ++dy)
    for (int dx = 1; dx <= 8; ++dx) {
      const Shape shape{static_cast<std::size_t>(3 * dy + 2), static_cast<std::size_t>(4 * dx + 1)};
      const Delta delta{dy, dx};
      const Array<double> grid = random_grid(shape, delta, seed + 64 * dy + dx, 3.0, dx % 2);
      const Array<double> ref = sv::ffd_field_reference(grid, delta, shape);
      const double scale = max_abs(grid);  // bounds sum |w c| and so |u|
      const double scale_u = max_abs(ref);
      const double d = max_diff(sv::ffd_field(grid, delta, shape, 3), ref);
      const double df = max_diff(sv::ffd_field(Array<float>::from(grid), delta, shape, 2), ref);
      worst_ulp = std::max(worst_ulp, d / (kEps * scale));
      worst_ulp_u = std::max(worst_ulp_u, d / (kEps * scale_u));
      worst_ulp_f = std::max(worst_ulp_f, df / (kEpsF * scale));
      ASSERT_LE(d, 6 * kEps * scale) << "delta " << dy << "," << dx;
      ASSERT_LE(df, 4 * kEpsF * scale) << "delta " << dy << "," << dx;
    }
  std::printf("2-D field: worst %.2f ulp of max|c| (double; %.2f ulp of max|u|), %.2f (float)\n",
              worst_ulp, worst_ulp_u, worst_ulp_f);
}

TEST(FfdField, TileStructuredEqualsTheReferencePerVoxel3D) {
  const std::uint32_t seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  double worst_ulp = 0, worst_ulp_f = 0, worst_ulp_u = 0;
  for (int d = 1; d <= 8; ++d) {
    // Every delta 1..8 on every axis, a different one per axis, odd shapes not tile multiples.
    const Delta delta{d, (d % 8) + 1, ((d + 4) % 8) + 1};
    const Shape shape{static_cast<std::size_t>(2 * delta[0] + 1),
                      static_cast<std::size_t>(2 * delta[1] + 3),
                      static_cast<std::size_t>(3 * delta[2] + 2)};
    const Array<double> grid = random_grid(shape, delta, seed + d, 3.0, d % 2);
    const Array<double> ref = sv::ffd_field_reference(grid, delta, shape);
    const double scale = max_abs(grid);  // bounds sum |w c| and so |u|
    const double scale_u = max_abs(ref);
    const Array<double> fast = sv::ffd_field(grid, delta, shape, 3);
    const double dd = max_diff(fast, ref);
    const double df = max_diff(sv::ffd_field(Array<float>::from(grid), delta, shape), ref);
    worst_ulp = std::max(worst_ulp, dd / (kEps * scale));
    worst_ulp_u = std::max(worst_ulp_u, dd / (kEps * scale_u));
    worst_ulp_f = std::max(worst_ulp_f, df / (kEpsF * scale));
    ASSERT_LE(dd, 6 * kEps * scale) << "delta " << delta[0] << "," << delta[1] << "," << delta[2];
    ASSERT_LE(df, 4 * kEpsF * scale) << "delta " << delta[0] << "," << delta[1] << "," << delta[2];
    // The thread count does not change a bit.
    EXPECT_EQ(sv::ffd_field(grid, delta, shape, 1).vec(), fast.vec());
  }
  std::printf("3-D field: worst %.2f ulp of max|c| (double; %.2f ulp of max|u|), %.2f (float)\n",
              worst_ulp, worst_ulp_u, worst_ulp_f);
}

// ---- Jacobian -------------------------------------------------------------------------------

TEST(FfdJacobian, MatchesCentralDifferencesAndItsDeterminant) {
  const std::uint32_t seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> P(0, 1);
  double worst = 0;
  for (const Shape& shape : {Shape{19, 23}, Shape{13, 11, 17}}) {
    const std::size_t r = shape.size();
    const Delta delta = r == 2 ? Delta{4, 3} : Delta{3, 5, 4};
    const Array<double> grid = random_grid(shape, delta, seed + static_cast<std::uint32_t>(r));
    const double h = 1e-5;
    for (int k = 0; k < 300; ++k) {
      double x[3], J[9], up[3], um[3];
      for (std::size_t a = 0; a < r; ++a) x[a] = P(rng) * static_cast<double>(shape[a] - 1);
      const double det = sv::ffd_jacobian(grid, delta, x, J);
      for (std::size_t b = 0; b < r; ++b) {
        double xp[3], xm[3];
        std::copy(x, x + 3, xp);
        std::copy(x, x + 3, xm);
        xp[b] += h;
        xm[b] -= h;
        sv::ffd_displacement(grid, delta, xp, up);
        sv::ffd_displacement(grid, delta, xm, um);
        for (std::size_t a = 0; a < r; ++a) {
          const double fd = (a == b ? 1.0 : 0.0) + (up[a] - um[a]) / (2 * h);
          worst = std::max(worst, std::fabs(fd - J[a * r + b]));
          ASSERT_NEAR(J[a * r + b], fd, 1e-8);
        }
      }
      const double lu = det_lu(std::vector<double>(J, J + r * r), r);
      ASSERT_NEAR(det, lu, 1e-13 * std::max(1.0, std::fabs(lu)));
      ASSERT_EQ(det, sv::ffd_jacobian_determinant(grid, delta, x));
    }
    // The dense determinant (tile-structured) against the per-voxel reference.
    const Array<double> ref = sv::ffd_jacobian_determinant_reference(grid, delta, shape);
    const double scale = max_abs(ref);
    EXPECT_LE(max_diff(sv::ffd_jacobian_determinant_field(grid, delta, shape, 2), ref),
              16 * kEps * scale);
    EXPECT_LE(
        max_diff(sv::ffd_jacobian_determinant_field(Array<float>::from(grid), delta, shape), ref),
        16 * kEpsF * scale);
  }
  std::printf("Jacobian against central differences: worst %.2e\n", worst);
}

// One control point pushed along x by A: u_x = A beta3(t_y) beta3(t_x) around it, so at its row
// det J = 1 + A / delta_x * beta3(0) * beta3'(s) with beta3'(+-1) = -+1/2: 1 - A / (3 delta_x)
// one spacing to its right (negative, a fold, for A > 3 delta_x) and 1 + A / (3 delta_x) one
// spacing to its left.
TEST(FfdJacobian, FoldingFieldHasNegativeDeterminantsWhereExpected) {
  const Shape shape{41, 41};
  const Delta delta{5, 5};
  Array<double> grid(sv::ffd_grid_shape(shape, delta), 2);
  const std::size_t jy = 4, jx = 4;  // at voxel (15, 15)
  const double A = 6.0 * delta[1];
  grid.at2(jy, jx, 1) = A;
  const Array<double> det = sv::ffd_jacobian_determinant_field(grid, delta, shape);
  const Array<double> ref = sv::ffd_jacobian_determinant_reference(grid, delta, shape);
  auto at = [&](const Array<double>& a, std::size_t y, std::size_t x) { return a[y * 41 + x]; };
  EXPECT_NEAR(at(det, 15, 20), 1 - A / 15, 1e-13);  // -1
  EXPECT_NEAR(at(det, 15, 10), 1 + A / 15, 1e-13);  // 3
  EXPECT_NEAR(at(ref, 15, 20), -1.0, 1e-13);
  // Folding only right of the point, within its support; identity outside the support.
  std::size_t negative = 0;
  for (std::size_t y = 0; y < 41; ++y)
    for (std::size_t x = 0; x < 41; ++x) {
      const double v = at(det, y, x);
      if (v < 0) {
        ++negative;
        EXPECT_GT(x, 15u);
        EXPECT_LT(x, 25u);
        EXPECT_GT(y, 5u);
        EXPECT_LT(y, 25u);
      }
      if (x >= 25 || x <= 5 || y >= 25 || y <= 5) {
        EXPECT_EQ(v, 1.0) << y << "," << x;
      }
    }
  EXPECT_GT(negative, 10u);
  // A small push does not fold.
  grid.at2(jy, jx, 1) = 2.0 * delta[1];
  const Array<double> mild = sv::ffd_jacobian_determinant_field(grid, delta, shape);
  EXPECT_GT(*std::min_element(mild.vec().begin(), mild.vec().end()), 0.0);
}

// ---- Bending energy -------------------------------------------------------------------------

TEST(FfdBendingEnergy, ZeroForAffineAndAnalyticForQuadratics) {
  const std::uint32_t seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> U(-1, 1);
  for (const Delta& delta : {Delta{4, 6}, Delta{3, 5, 2}}) {
    const std::size_t r = delta.size();
    const Shape m = r == 2 ? Shape{8, 9} : Shape{6, 7, 8};
    // Affine: c = A pos + b.
    Array<double> grid(m, r);
    double A[3][3], b[3];
    for (std::size_t c = 0; c < r; ++c) {
      b[c] = 5 * U(rng);
      for (std::size_t a = 0; a < r; ++a) A[c][a] = U(rng);
    }
    double norm2 = 0;
    for_each_control(grid, delta, [&](std::size_t p, const double* pos) {
      for (std::size_t c = 0; c < r; ++c) {
        double v = b[c];
        for (std::size_t a = 0; a < r; ++a) v += A[c][a] * pos[a];
        grid[p * r + c] = v;
        norm2 += v * v;
      }
    });
    Array<double> grad;
    EXPECT_LE(std::fabs(sv::ffd_bending_energy(grid, delta, &grad)), 1e-13 * norm2);
    for (double g : grad.vec()) ASSERT_LE(std::fabs(g), 1e-12 * std::sqrt(norm2));
    // u_last = q x_last^2 (with the variance correction): d2/dx2 = 2q everywhere, E = 4 q^2.
    // u_0 = q x_0 x_last: the mixed derivative q counts twice, E = 2 q^2.
    const double q = 0.05;
    for (int kind = 0; kind < 2; ++kind) {
      Array<double> g2(m, r);
      for_each_control(g2, delta, [&](std::size_t p, const double* pos) {
        if (kind == 0)
          g2[p * r + r - 1] =
              q * pos[r - 1] * pos[r - 1] - delta[r - 1] * delta[r - 1] / 6.0 * 2 * q;
        else
          g2[p * r] = q * pos[0] * pos[r - 1];
      });
      const double e = sv::ffd_bending_energy(g2, delta);
      EXPECT_NEAR(e, kind == 0 ? 4 * q * q : 2 * q * q, 1e-14) << "kind " << kind;
    }
  }
}

// Second derivatives of the field at x, evaluated here from the basis directly:
// H[c][a][b] = d2 u_c / dx_a dx_b (zero-extended grid).
void hessian(const Array<double>& g, const Delta& delta, const double* x, double* H) {
  const std::size_t r = g.rank();
  long first[3];
  double w[3][3][4];
  for (std::size_t a = 0; a < r; ++a)
    for (int d = 0; d <= 2; ++d) {
      first[a] = sv::bspline_weights<double>(3, x[a] / delta[a] + 1.0, w[a][d], d);
      for (double& v : w[a][d]) v /= std::pow(delta[a], d);
    }
  std::fill(H, H + 27, 0.0);
  const std::size_t nz = r == 3 ? 4 : 1;
  for (std::size_t a = 0; a < r; ++a)
    for (std::size_t b = 0; b < r; ++b)
      for (std::size_t l = 0; l < nz; ++l)
        for (std::size_t mm = 0; mm < 4; ++mm)
          for (std::size_t n = 0; n < 4; ++n) {
            const std::size_t t[3] = {l, mm, n};
            const std::size_t* tt = t + (3 - r);
            double wt = 1;
            long idx = 0;
            bool inside = true;
            for (std::size_t e = 0; e < r; ++e) {
              const int d = (e == a) + (e == b);
              wt *= w[e][d][tt[e]];
              const long k = first[e] + static_cast<long>(tt[e]);
              if (k < 0 || k >= static_cast<long>(g.dim(e))) inside = false;
              idx = idx * static_cast<long>(g.dim(e)) + k;
            }
            if (!inside) continue;
            for (std::size_t c = 0; c < r; ++c)
              H[(c * 3 + a) * 3 + b] += wt * g[static_cast<std::size_t>(idx) * r + c];
          }
}

// integral over Omega of sum_c sum_ab H^2 / |Omega|, by a tensor rule of `k` nodes per tile and
// axis: Gauss-Legendre (4 nodes, exact for these degree-6 pieces) or the midpoint rule.
double integrate_energy(const Array<double>& g, const Delta& delta, bool gauss, int k) {
  static const double xi[4] = {-0.86113631159405257522, -0.33998104358485626480,
                               0.33998104358485626480, 0.86113631159405257522};
  static const double wi[4] = {0.34785484513737982297, 0.65214515486262017703,
                               0.65214515486262017703, 0.34785484513737982297};
  const std::size_t r = g.rank();
  std::vector<std::vector<double>> nodes(r), weights(r);
  double volume = 1;
  for (std::size_t a = 0; a < r; ++a) {
    const double len = static_cast<double>((g.dim(a) - 3) * delta[a]);
    volume *= len;
    for (std::size_t t = 0; t + 3 < g.dim(a); ++t)
      for (int i = 0; i < k; ++i) {
        const double u = gauss ? 0.5 * (1 + xi[i]) : (i + 0.5) / k;
        nodes[a].push_back((static_cast<double>(t) + u) * delta[a]);
        weights[a].push_back((gauss ? 0.5 * wi[i] : 1.0 / k) * delta[a]);
      }
  }
  double sum = 0, x[3], H[27];
  const std::size_t nz = r == 3 ? nodes[0].size() : 1;
  for (std::size_t i = 0; i < nz; ++i)
    for (std::size_t j = 0; j < nodes[r - 2].size(); ++j)
      for (std::size_t l = 0; l < nodes[r - 1].size(); ++l) {
        double wt = weights[r - 2][j] * weights[r - 1][l];
        if (r == 3) {
          x[0] = nodes[0][i];
          wt *= weights[0][i];
        }
        x[r - 2] = nodes[r - 2][j];
        x[r - 1] = nodes[r - 1][l];
        hessian(g, delta, x, H);
        for (double h : H) sum += wt * h * h;
      }
  return sum / volume;
}

TEST(FfdBendingEnergy, MatchesNumericalIntegrationAndItsGradientMatchesDifferences) {
  const std::uint32_t seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (const Delta& delta : {Delta{3, 4}, Delta{2, 3, 4}}) {
    const std::size_t r = delta.size();
    const Shape m = r == 2 ? Shape{7, 8} : Shape{5, 6, 7};
    const Array<double> grid =
        svtest::random_array<double>(m, r, seed + static_cast<std::uint32_t>(r), -1, 1);
    Array<double> grad;
    const double e = sv::ffd_bending_energy(grid, delta, &grad);
    const double gauss = integrate_energy(grid, delta, true, 4);
    const double mid = integrate_energy(grid, delta, false, 12);
    std::printf(
        "%zu-D bending energy: closed form %.15g, Gauss-Legendre rel. diff %.2e, midpoint "
        "(12 per tile) rel. diff %.2e\n",
        r, e, std::fabs(gauss - e) / e, std::fabs(mid - e) / e);
    EXPECT_NEAR(gauss, e, 1e-12 * e);
    EXPECT_NEAR(mid, e, 1e-2 * e);
    EXPECT_GT(std::fabs(mid - e), 1e-8 * e);  // the midpoint rule is a different rule
    // The energy is quadratic in the grid, so central differences are exact up to rounding.
    std::uniform_int_distribution<std::size_t> pick(0, grid.size() - 1);
    double worst = 0;
    for (int k = 0; k < 25; ++k) {
      const std::size_t i = k == 0 ? 0 : pick(rng);
      Array<double> gp = grid, gm = grid;
      const double h = 1e-3;
      gp[i] += h;
      gm[i] -= h;
      const double fd =
          (sv::ffd_bending_energy(gp, delta) - sv::ffd_bending_energy(gm, delta)) / (2 * h);
      worst = std::max(worst, std::fabs(fd - grad[i]));
      ASSERT_NEAR(grad[i], fd, 1e-9 * std::max(1.0, std::fabs(fd))) << "index " << i;
    }
    std::printf("%zu-D bending energy gradient against differences: worst %.2e\n", r, worst);
  }
}

// A bound on the rounding difference of two double evaluations of the bending energy's quadratic
// form E = sum_c sum_(a,b) w_ab c^T K_ab c / |Omega| (K_ab the Kronecker product of one banded
// Gram matrix per axis), each of which sums at most `depth` products along any path: every
// computed value is within gamma_depth (|K| |c|) of the exact one (Higham, "Accuracy and
// Stability of Numerical Algorithms", 3.1 and 3.5). The row sums of |G^(d)| along an axis of
// spacing delta are at most delta^(1 - 2d) int |b^(d)| sup_t sum_k |b_k^(d)(t)| (b the cubic
// B-spline in control-point units): 1 for d = 0; (4/3) (4 * 2/3) / delta for d = 1 (total
// variation 4/3, |b'| <= 2/3); (8/3) (4 * 2) / delta^3 for d = 2 (total variation of b' 8/3,
// |b''| <= 2). So (|K_ab| |c|)_i <= max|c| prod_axes rho_a, and
//   |dE| <= 2 gamma_depth sum_(a,b) w_ab prod rho sum_i |c_i| max|c| / |Omega|,
//   |dg_i| <= 2 gamma_depth 2 sum_(a,b) w_ab prod rho max|c| / |Omega|.
struct BendingBound {
  double energy = 0, gradient = 0;
};

std::string shape_text(const Shape& s) {
  std::string t;
  for (std::size_t n : s) t += (t.empty() ? "" : "x") + std::to_string(n);
  return t;
}

BendingBound bending_rounding_bound(const Array<double>& grid, const Delta& delta, double depth) {
  const std::size_t r = grid.rank();
  auto rho = [&](std::size_t a, int d) {
    const double h = delta[a];
    return d == 0 ? 1.0 : d == 1 ? (4.0 / 3) * (8.0 / 3) / h : (8.0 / 3) * 8.0 / (h * h * h);
  };
  double pairs = 0, volume = 1;
  for (std::size_t a = 0; a < r; ++a) {
    volume *= static_cast<double>((grid.dim(a) - 3) * static_cast<std::size_t>(delta[a]));
    for (std::size_t b = a; b < r; ++b) {
      double p = a == b ? 1.0 : 2.0;
      for (std::size_t e = 0; e < r; ++e)
        p *= rho(e, a == b ? (e == a ? 2 : 0) : (e == a || e == b));
      pairs += p;
    }
  }
  double sum_abs = 0, maxc = 0;
  for (double v : grid.vec()) {
    sum_abs += std::fabs(v);
    maxc = std::max(maxc, std::fabs(v));
  }
  const double gamma = depth * kEps / (1 - depth * kEps);
  return {2 * gamma * pairs * sum_abs * maxc / volume, 2 * gamma * 2 * pairs * maxc / volume};
}

// The separable, threaded bending energy against the first implementation (one pair and one
// component at a time, three full passes each): equal within the rounding bound above, for 2-D
// and 3-D grids of several shapes and spacings, fresh random values; and the same bits for every
// thread count.
TEST(FfdBendingEnergy, SeparableThreadedMatchesTheReferenceAndIgnoresTheThreadCount) {
  const std::uint32_t seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  struct Case {
    Shape m;
    Delta delta;
  };
  const std::vector<Case> cases = {{{4, 4}, {1, 1}},         {{40, 9}, {3, 5}},
                                   {{7, 61}, {8, 2}},        {{4, 4, 4}, {2, 3, 4}},
                                   {{9, 13, 11}, {4, 5, 6}}, {{17, 6, 5}, {1, 7, 3}},
                                   {{5, 23, 8}, {5, 5, 5}}};
  std::uint32_t k = 0;
  for (const Case& c : cases) {
    const std::size_t r = c.m.size();
    const Array<double> grid = svtest::random_array<double>(c.m, r, seed + k++, -3, 3);
    Array<double> g_ref, g1;
    const double e_ref = sv::ffd_bending_energy_reference(grid, c.delta, &g_ref);
    const double e1 = sv::ffd_bending_energy(grid, c.delta, &g1, 1);
    // Depth: the reference sums 7 taps per axis (3 x 8), 6 pairs and the weight, then every
    // value of a component in turn; the new one 8 + 22 + 22 along x, y, z, then a row and the
    // rows. Both bounded by 100 + 2 n, n the grid's value count.
    const BendingBound bb =
        bending_rounding_bound(grid, c.delta, 100.0 + 2.0 * static_cast<double>(grid.size()));
    double worst = 0;
    for (std::size_t i = 0; i < g1.size(); ++i)
      worst = std::max(worst, std::fabs(g1[i] - g_ref[i]));
    std::printf(
        "bending %s spacing %s: E %.17g vs reference %.17g (|dE| %.2e, bound %.2e), gradient "
        "max diff %.2e (bound %.2e)\n",
        shape_text(c.m).c_str(), shape_text(Shape(c.delta.begin(), c.delta.end())).c_str(), e1,
        e_ref, std::fabs(e1 - e_ref), bb.energy, worst, bb.gradient);
    EXPECT_LE(std::fabs(e1 - e_ref), bb.energy);
    EXPECT_LE(worst, bb.gradient);
    EXPECT_GT(e1, 0.0);
    // Without the gradient: the same energy.
    EXPECT_EQ(sv::ffd_bending_energy(grid, c.delta, nullptr, 1), e1);
    for (unsigned threads : {2u, 3u, 5u, 8u, 0u}) {
      Array<double> gt;
      EXPECT_EQ(sv::ffd_bending_energy(grid, c.delta, &gt, threads), e1) << threads << " threads";
      EXPECT_EQ(gt.vec(), g1.vec()) << threads << " threads";
    }
    // A gradient array of the right shape is overwritten, not added to.
    Array<double> reuse = g1;
    for (double& v : reuse.vec()) v = 1e300;
    sv::ffd_bending_energy(grid, c.delta, &reuse, 3);
    EXPECT_EQ(reuse.vec(), g1.vec());
  }
}

// ---- Refinement -----------------------------------------------------------------------------

TEST(FfdRefine, RefinedGridGivesTheSameField) {
  const std::uint32_t seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  double worst = 0;
  for (const Shape& shape : {Shape{29, 37}, Shape{13, 17, 21}}) {
    const std::size_t r = shape.size();
    const Delta delta = r == 2 ? Delta{4, 8} : Delta{4, 2, 6};
    const Array<double> grid =
        random_grid(shape, delta, seed + static_cast<std::uint32_t>(r), 3.0, 1);
    const Array<double> fine = sv::ffd_refine(grid, delta);
    Delta half(r);
    for (std::size_t a = 0; a < r; ++a) {
      half[a] = delta[a] / 2;
      EXPECT_EQ(fine.dim(a), 2 * grid.dim(a) - 3);
    }
    const Array<double> coarse_field = sv::ffd_field_reference(grid, delta, shape);
    const double d = max_diff(sv::ffd_field_reference(fine, half, shape), coarse_field);
    worst = std::max(worst, d);
    EXPECT_LE(d, 1e-12);
    // Twice, down to spacing 1 where possible; the float version too.
    if (r == 2) {
      const Array<double> finer = sv::ffd_refine(fine, half);
      EXPECT_LE(max_diff(sv::ffd_field_reference(finer, {1, 2}, shape), coarse_field), 1e-12);
    }
    const Array<float> fine_f = sv::ffd_refine(Array<float>::from(grid), delta);
    EXPECT_LE(max_diff(sv::ffd_field(fine_f, half, shape), coarse_field), 1e-5);
    // The refined grid has the same domain, so the same bending energy.
    EXPECT_NEAR(sv::ffd_bending_energy(fine, half), sv::ffd_bending_energy(grid, delta),
                1e-10 * sv::ffd_bending_energy(grid, delta));
  }
  std::printf("refinement: worst field difference %.2e\n", worst);
}

// ---- Refusals -------------------------------------------------------------------------------

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

template <class Fn>
std::string message_of(Fn&& fn) {
  try {
    fn();
  } catch (const sv::Error& e) {
    return e.what();
  }
  return "(no sv::Error)";
}

TEST(FfdErrors, BadInputIsRefusedWithAClearMessage) {
  const Shape shape{10, 20, 30};
  const Delta delta{3, 4, 5};
  EXPECT_EQ(sv::ffd_grid_shape(shape, delta), (Shape{7, 8, 9}));
  EXPECT_EQ(sv::ffd_grid_shape({1, 1}, {1, 1}), (Shape{4, 4}));
  Array<double> grid(Shape{7, 8, 8}, 3);
  std::string m = message_of([&] { sv::ffd_field(grid, delta, shape); });
  EXPECT_PRED2(contains, m, ("8 control points along axis x"));
  EXPECT_PRED2(contains, m, ("30 voxels at spacing 5 needs at least 9"));
  m = message_of([&] { sv::ffd_field_reference(grid, {0, 4, 5}, shape); });
  EXPECT_PRED2(contains, m, ("spacing along axis z must be at least 1"));
  EXPECT_PRED2(contains, m, ("got 0"));
  m = message_of([&] { sv::ffd_grid_shape(shape, {3, -2, 5}); });
  EXPECT_PRED2(contains, m, ("axis y must be at least 1 voxel, got -2"));
  Array<double> two(Shape{7, 8, 9}, 2);
  m = message_of([&] { sv::ffd_field(two, delta, shape); });
  EXPECT_PRED2(contains, m, ("needs 3 displacement components"));
  EXPECT_PRED2(contains, m, ("got 2"));
  m = message_of([&] { sv::ffd_field(Array<double>(Shape{7, 8}, 3), {3, 4}, {10, 20}); });
  EXPECT_PRED2(contains, m, ("needs 2 displacement components"));
  Array<double> ok(Shape{7, 8, 9}, 3);
  ok.at3(2, 3, 4, 1) = std::nan("");
  m = message_of([&] { sv::ffd_field(ok, delta, shape); });
  EXPECT_PRED2(contains, m,
               ("non-finite value (nan) at control point (z, y, x) = (2, 3, 4), "
                "component y"));
  ok.at3(2, 3, 4, 1) = 0;
  ok.at3(0, 0, 1, 2) = -INFINITY;
  m = message_of([&] { sv::ffd_bending_energy(ok, delta); });
  EXPECT_PRED2(contains, m, ("non-finite value (inf)"));
  m = message_of([&] { sv::ffd_refine(Array<double>(Shape{7, 8, 9}, 3), delta); });
  EXPECT_PRED2(contains, m, ("axis z has spacing 3"));
  m = message_of([&] { sv::ffd_field(Array<double>(Shape{7, 8, 9}, 3), {3, 4}, shape); });
  EXPECT_PRED2(contains, m, ("spacing has 2 entries"));
  m = message_of([&] { sv::ffd_field(Array<double>(Shape{9}, 1), {3}, {10}); });
  EXPECT_PRED2(contains, m, ("must be 2-D or 3-D"));
  double pos[2] = {0, 0}, u[2];
  m = message_of([&] { sv::ffd_displacement(Array<double>(Shape{3, 8}, 2), {1, 1}, pos, u); });
  EXPECT_PRED2(contains, m, ("3 control points along axis y, a cubic B-spline needs at least 4"));
  m = message_of([&] { sv::ffd_field(Array<double>(Shape{7, 8, 9}, 3), delta, {10, 20}); });
  EXPECT_PRED2(contains, m, ("has rank 2, the control grid rank 3"));
}

}  // namespace
