// Cubic B-spline free-form deformation: checks, the pointwise double reference, the
// tile-structured dense evaluation, bending energy and refinement (splineview/ffd.h).
#include "splineview/ffd.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <string>

#include "ffd_text.h"
#include "parallel.h"
#include "splineview/bspline.h"
#include "splineview/error.h"
#include "splineview/threads.h"

namespace sv {

namespace {

using detail::axis_name;
using detail::shape_text;

void check_delta(const std::vector<int>& delta, std::size_t rank) {
  if (delta.size() != rank)
    throw Error("FFD spacing has " + std::to_string(delta.size()) + " entries, the " +
                std::to_string(rank) + "-D grid needs one per axis");
  for (std::size_t a = 0; a < rank; ++a)
    if (delta[a] < 1)
      throw Error(std::string("FFD control-point spacing along axis ") + axis_name(rank, a) +
                  " must be at least 1 voxel, got " + std::to_string(delta[a]));
}

// Rank, channels, spacing and at least 4 points per axis; not the values.
template <class T>
void check_structure(const Array<T>& grid, const std::vector<int>& delta) {
  const std::size_t r = grid.rank();
  if (r != 2 && r != 3)
    throw Error(
        "FFD control grid must be 2-D or 3-D (an array of shape (M_y, M_x, 2) or (M_z, "
        "M_y, M_x, 3)), got rank " +
        std::to_string(r));
  if (grid.channels() != r)
    throw Error("FFD control grid of rank " + std::to_string(r) + " needs " + std::to_string(r) +
                " displacement components per control point (" + (r == 3 ? "z, y, x" : "y, x") +
                "), got " + std::to_string(grid.channels()));
  check_delta(delta, r);
  for (std::size_t a = 0; a < r; ++a)
    if (grid.dim(a) < 4)
      throw Error(std::string("FFD control grid has ") + std::to_string(grid.dim(a)) +
                  " control points along axis " + axis_name(r, a) +
                  ", a cubic B-spline needs at least 4");
}

// The grid seen as 3-D: a 2-D grid is one plane (M0 = 1) whose axis 0 has a single tap of
// weight 1 (multiplying by 1 and adding nothing is exact, so nothing changes numerically).
struct Layout {
  std::size_t rank = 0;  // 2 or 3
  std::size_t comps = 0;
  std::size_t M[3] = {1, 1, 1};
  std::size_t N[3] = {1, 1, 1};  // image shape (dense evaluation)
  int delta[3] = {1, 1, 1};
  int taps[3] = {1, 4, 4};
};

template <class T>
Layout make_layout(const Array<T>& grid, const std::vector<int>& delta,
                   const std::vector<std::size_t>* image_shape) {
  Layout L;
  L.rank = grid.rank();
  L.comps = grid.channels();
  const std::size_t off = 3 - L.rank;
  for (std::size_t a = 0; a < L.rank; ++a) {
    L.M[a + off] = grid.dim(a);
    L.delta[a + off] = delta[a];
    L.taps[a + off] = 4;
    if (image_shape) L.N[a + off] = (*image_shape)[a];
  }
  return L;
}

// Per-axis weights at a position: the first control point and the weights of derivative order
// 0, 1, 2 (in voxel units) of the four control points first .. first + 3.
struct AxisWeights {
  long first = 0;
  double w[3][4] = {};
};

AxisWeights axis_weights(double x, int delta) {
  AxisWeights aw;
  // t = x / delta + 1 in control-point units; the first contributing point is floor(t) - 1 =
  // floor(x / delta), at fractional offset x / delta - floor(x / delta) (exact).
  const double s = x / delta;
  const double fl = std::floor(s);
  const double u = s - fl;
  aw.first = static_cast<long>(fl);
  double scale = 1.0;
  for (int d = 0; d <= 2; ++d) {
    bspline_weights_frac<double>(3, u, aw.w[d], d);
    if (d > 0)
      for (double& v : aw.w[d]) v /= scale;
    scale *= delta;
  }
  return aw;
}

// sum over the 4^R taps of prod_a w_a[d_a] * c, for every component; taps outside the grid
// count as zero.
void tap_sums(const Array<double>& grid, const Layout& L, const AxisWeights* aw, const int* d,
              double* out) {
  for (std::size_t c = 0; c < L.comps; ++c) out[c] = 0.0;
  const double one[4] = {1.0, 0.0, 0.0, 0.0};
  for (int l = 0; l < L.taps[0]; ++l) {
    const long k0 = L.rank == 3 ? aw[0].first + l : 0;
    if (k0 < 0 || k0 >= static_cast<long>(L.M[0])) continue;
    const double w0 = L.rank == 3 ? aw[0].w[d[0]][l] : one[l];
    for (int m = 0; m < 4; ++m) {
      const long k1 = aw[1].first + m;
      if (k1 < 0 || k1 >= static_cast<long>(L.M[1])) continue;
      const double w1 = aw[1].w[d[1]][m];
      for (int n = 0; n < 4; ++n) {
        const long k2 = aw[2].first + n;
        if (k2 < 0 || k2 >= static_cast<long>(L.M[2])) continue;
        const double w = w0 * w1 * aw[2].w[d[2]][n];
        const double* cp =
            grid.data() +
            ((static_cast<std::size_t>(k0) * L.M[1] + static_cast<std::size_t>(k1)) * L.M[2] +
             static_cast<std::size_t>(k2)) *
                L.comps;
        for (std::size_t c = 0; c < L.comps; ++c) out[c] += w * cp[c];
      }
    }
  }
}

void point_weights(const Layout& L, const double* pos, AxisWeights* aw) {
  const std::size_t off = 3 - L.rank;
  for (std::size_t a = 0; a < L.rank; ++a) aw[a + off] = axis_weights(pos[a], L.delta[a + off]);
}

void displacement_unchecked(const Array<double>& grid, const Layout& L, const double* pos,
                            double* u) {
  AxisWeights aw[3];
  point_weights(L, pos, aw);
  const int d[3] = {0, 0, 0};
  tap_sums(grid, L, aw, d, u);
}

template <class T>
T det_of(const T* J, std::size_t r) {
  if (r == 2) return J[0] * J[3] - J[1] * J[2];
  return J[0] * (J[4] * J[8] - J[5] * J[7]) - J[1] * (J[3] * J[8] - J[5] * J[6]) +
         J[2] * (J[3] * J[7] - J[4] * J[6]);
}

double jacobian_unchecked(const Array<double>& grid, const Layout& L, const double* pos,
                          double* J) {
  AxisWeights aw[3];
  point_weights(L, pos, aw);
  const std::size_t r = L.rank, off = 3 - r;
  double du[3];
  for (std::size_t b = 0; b < r; ++b) {
    int d[3] = {0, 0, 0};
    d[b + off] = 1;
    tap_sums(grid, L, aw, d, du);
    for (std::size_t a = 0; a < r; ++a) J[a * r + b] = (a == b ? 1.0 : 0.0) + du[a];
  }
  return det_of(J, r);
}

// ---- The tile-structured dense evaluation ----------------------------------------------------

// Weight rows of one axis: for the voxel offsets r = 0 .. delta - 1 within a tile, the taps'
// weights of derivative order d (rows[d][r * 4 + k]); computed in double, stored in T.
template <class T>
struct WeightRows {
  std::vector<T> rows[2];
};

template <class T>
WeightRows<T> weight_rows(int delta, int taps) {
  WeightRows<T> wr;
  for (int d = 0; d < 2; ++d) wr.rows[d].assign(static_cast<std::size_t>(delta) * 4, T(0));
  if (taps == 1) {  // the dummy axis of a 2-D grid
    wr.rows[0][0] = T(1);
    return wr;
  }
  for (int r = 0; r < delta; ++r) {
    // Voxel tile * delta + r: the same offset as axis_weights computes, x / delta - floor.
    double w[4];
    const double u = static_cast<double>(r) / delta;
    for (int d = 0; d < 2; ++d) {
      bspline_weights_frac<double>(3, u, w, d);
      for (int k = 0; k < 4; ++k)
        wr.rows[d][static_cast<std::size_t>(r) * 4 + k] = static_cast<T>(d ? w[k] / delta : w[k]);
    }
  }
  return wr;
}

// Evaluates, at every voxel, the sums for a few derivative patterns (d0, d1, d2), each 0 or 1,
// one axis at a time, and hands them to emit(voxel index, values[pattern][component]).
template <class T, class Emit>
void dense_eval(const Array<T>& grid, const Layout& L, const std::vector<std::array<int, 3>>& pats,
                unsigned threads, Emit&& emit) {
  WeightRows<T> wr[3];
  for (int a = 0; a < 3; ++a) wr[a] = weight_rows<T>(L.delta[a], L.taps[a]);
  const std::size_t C = L.comps, P = pats.size();
  const std::size_t plane = L.M[1] * L.M[2] * C, row = L.M[2] * C;
  // Distinct z orders and (z, y) prefixes among the patterns.
  bool need_z[2] = {false, false};
  for (const auto& p : pats) need_z[p[0]] = true;

  // One z slice, rows y in tiles [ty0, ty1): planes[dz] holds the control points contracted
  // over z (or the grid itself for a 2-D grid).
  auto do_rows = [&](std::size_t z, const T* const* planes, std::size_t ty0, std::size_t ty1,
                     std::vector<T>& rows, std::vector<T>& vals) {
    const std::size_t d1 = static_cast<std::size_t>(L.delta[1]);
    const std::size_t d2 = static_cast<std::size_t>(L.delta[2]);
    for (std::size_t ty = ty0; ty < ty1; ++ty) {
      for (std::size_t ry = 0; ry < d1; ++ry) {
        const std::size_t y = ty * d1 + ry;
        if (y >= L.N[1]) break;
        // Contract over y for each pattern (cheap; patterns sharing a prefix repeat the work).
        for (std::size_t p = 0; p < P; ++p) {
          const T* wy = wr[1].rows[pats[p][1]].data() + ry * 4;
          const T* src = planes[pats[p][0]] + ty * row;
          T* dst = rows.data() + p * row;
          for (std::size_t i = 0; i < row; ++i)
            dst[i] = ((wy[0] * src[i] + wy[1] * src[row + i]) + wy[2] * src[2 * row + i]) +
                     wy[3] * src[3 * row + i];
        }
        std::size_t x = 0;
        const std::size_t base = (z * L.N[1] + y) * L.N[2];
        for (std::size_t tx = 0; x < L.N[2]; ++tx) {
          for (std::size_t rx = 0; rx < d2 && x < L.N[2]; ++rx, ++x) {
            for (std::size_t p = 0; p < P; ++p) {
              const T* wx = wr[2].rows[pats[p][2]].data() + rx * 4;
              const T* src = rows.data() + p * row + tx * C;
              for (std::size_t c = 0; c < C; ++c)
                vals[p * C + c] = ((wx[0] * src[c] + wx[1] * src[C + c]) + wx[2] * src[2 * C + c]) +
                                  wx[3] * src[3 * C + c];
            }
            emit(base + x, vals.data());
          }
        }
      }
    }
  };

  const std::size_t tiles_y = (L.N[1] - 1) / static_cast<std::size_t>(L.delta[1]) + 1;
  if (L.rank == 2) {
    const T* planes[2] = {grid.data(), grid.data()};
    detail::parallel_for(tiles_y, detail::thread_count(threads, tiles_y, 1),
                         [&](std::size_t b, std::size_t e) {
                           std::vector<T> rows(P * row), vals(P * C);
                           do_rows(0, planes, b, e, rows, vals);
                         });
    return;
  }
  const std::size_t d0 = static_cast<std::size_t>(L.delta[0]);
  detail::parallel_for(
      L.N[0], detail::thread_count(threads, L.N[0], 1), [&](std::size_t b, std::size_t e) {
        std::vector<T> buf[2];
        std::vector<T> rows(P * row), vals(P * C);
        for (int dz = 0; dz < 2; ++dz)
          if (need_z[dz]) buf[dz].resize(plane);
        for (std::size_t z = b; z < e; ++z) {
          const std::size_t tz = z / d0, rz = z % d0;
          const T* src = grid.data() + tz * plane;
          for (int dz = 0; dz < 2; ++dz) {
            if (!need_z[dz]) continue;
            const T* wz = wr[0].rows[dz].data() + rz * 4;
            T* dst = buf[dz].data();
            for (std::size_t i = 0; i < plane; ++i)
              dst[i] = ((wz[0] * src[i] + wz[1] * src[plane + i]) + wz[2] * src[2 * plane + i]) +
                       wz[3] * src[3 * plane + i];
          }
          const T* planes[2] = {buf[0].data(), buf[1].data()};
          do_rows(z, planes, 0, tiles_y, rows, vals);
        }
      });
}

// ---- Bending energy: banded Gram matrices ----------------------------------------------------

// G[j * 7 + (k - j + 3)] = integral over [0, (M - 3) delta] of the d-th derivatives of the basis
// functions of points j and k (zero for |j - k| > 3).
std::vector<double> gram(std::size_t M, int delta, int d) {
  // 4-point Gauss-Legendre on [0, 1]: exact for the degree-6 products of cubic pieces.
  static const double xi[4] = {-0.86113631159405257522, -0.33998104358485626480,
                               0.33998104358485626480, 0.86113631159405257522};
  static const double wi[4] = {0.34785484513737982297, 0.65214515486262017703,
                               0.65214515486262017703, 0.34785484513737982297};
  double local[4][4] = {};
  for (int g = 0; g < 4; ++g) {
    double w[4];
    bspline_weights_frac<double>(3, 0.5 * (1.0 + xi[g]), w, d);
    for (int p = 0; p < 4; ++p)
      for (int q = 0; q < 4; ++q) local[p][q] += 0.5 * wi[g] * w[p] * w[q];
  }
  // x = delta * t: d/dx = d/dt / delta, dx = delta dt.
  const double scale = std::pow(static_cast<double>(delta), 1 - 2 * d);
  std::vector<double> G(M * 7, 0.0);
  for (std::size_t m = 0; m + 3 < M; ++m)  // tile m uses points m .. m + 3
    for (int p = 0; p < 4; ++p)
      for (int q = 0; q < 4; ++q) G[(m + p) * 7 + (q - p + 3)] += scale * local[p][q];
  return G;
}

// y = G x along `axis` of a scalar field of dims M (3-D view).
void apply_axis(const std::vector<double>& G, const std::size_t* M, int axis,
                const std::vector<double>& x, std::vector<double>& y) {
  std::size_t stride = 1;
  for (int a = 2; a > axis; --a) stride *= M[a];
  const std::size_t n = M[axis];
  const std::size_t outer = x.size() / (n * stride);
  y.assign(x.size(), 0.0);
  for (std::size_t o = 0; o < outer; ++o)
    for (std::size_t s = 0; s < stride; ++s) {
      const std::size_t base = o * n * stride + s;
      for (std::size_t j = 0; j < n; ++j) {
        double acc = 0.0;
        const std::size_t k0 = j >= 3 ? j - 3 : 0, k1 = std::min(n - 1, j + 3);
        for (std::size_t k = k0; k <= k1; ++k) acc += G[j * 7 + (k + 3 - j)] * x[base + k * stride];
        y[base + j * stride] = acc;
      }
    }
}

}  // namespace

// ---- Checks -----------------------------------------------------------------------------------

std::vector<std::size_t> ffd_grid_shape(const std::vector<std::size_t>& image_shape,
                                        const std::vector<int>& delta) {
  const std::size_t r = image_shape.size();
  if (r != 2 && r != 3)
    throw Error("FFD image shape must be 2-D or 3-D, got rank " + std::to_string(r));
  check_delta(delta, r);
  std::vector<std::size_t> m(r);
  for (std::size_t a = 0; a < r; ++a) {
    if (image_shape[a] == 0)
      throw Error(std::string("FFD image shape has a zero extent along axis ") + axis_name(r, a));
    m[a] = (image_shape[a] - 1) / static_cast<std::size_t>(delta[a]) + 4;
  }
  return m;
}

template <class T>
void check_ffd_grid(const Array<T>& grid, const std::vector<int>& delta) {
  check_structure(grid, delta);
  const std::size_t r = grid.rank(), C = grid.channels();
  for (std::size_t i = 0; i < grid.size(); ++i) {
    if (std::isfinite(grid[i])) continue;
    std::size_t p = i / C;
    std::vector<std::size_t> idx(r);
    for (std::size_t a = r; a-- > 0;) {
      idx[a] = p % grid.dim(a);
      p /= grid.dim(a);
    }
    std::string where;
    for (std::size_t a = 0; a < r; ++a) where += (a ? ", " : "") + std::to_string(idx[a]);
    throw Error(std::string("FFD control grid holds a non-finite value (") +
                (std::isnan(grid[i]) ? "nan" : "inf") + ") at control point (" +
                (r == 3 ? "z, y, x" : "y, x") + ") = (" + where + "), component " +
                axis_name(r, i % C));
  }
}

template <class T>
void check_ffd_grid(const Array<T>& grid, const std::vector<int>& delta,
                    const std::vector<std::size_t>& image_shape) {
  check_ffd_grid(grid, delta);
  const std::size_t r = grid.rank();
  if (image_shape.size() != r)
    throw Error("FFD image shape " + shape_text(image_shape) + " has rank " +
                std::to_string(image_shape.size()) + ", the control grid rank " +
                std::to_string(r));
  const std::vector<std::size_t> need = ffd_grid_shape(image_shape, delta);
  for (std::size_t a = 0; a < r; ++a)
    if (grid.dim(a) < need[a])
      throw Error(std::string("FFD control grid has ") + std::to_string(grid.dim(a)) +
                  " control points along axis " + axis_name(r, a) + ", an image of " +
                  std::to_string(image_shape[a]) + " voxels at spacing " +
                  std::to_string(delta[a]) + " needs at least " + std::to_string(need[a]) +
                  " (floor((N - 1) / delta) + 4)");
}

// ---- Pointwise ---------------------------------------------------------------------------------

void ffd_displacement(const Array<double>& grid, const std::vector<int>& delta, const double* pos,
                      double* u) {
  check_structure(grid, delta);
  displacement_unchecked(grid, make_layout(grid, delta, nullptr), pos, u);
}

double ffd_jacobian(const Array<double>& grid, const std::vector<int>& delta, const double* pos,
                    double* J) {
  check_structure(grid, delta);
  return jacobian_unchecked(grid, make_layout(grid, delta, nullptr), pos, J);
}

double ffd_jacobian_determinant(const Array<double>& grid, const std::vector<int>& delta,
                                const double* pos) {
  double J[9];
  return ffd_jacobian(grid, delta, pos, J);
}

// ---- Dense --------------------------------------------------------------------------------------

Array<double> ffd_field_reference(const Array<double>& grid, const std::vector<int>& delta,
                                  const std::vector<std::size_t>& image_shape) {
  check_ffd_grid(grid, delta, image_shape);
  const Layout L = make_layout(grid, delta, &image_shape);
  Array<double> out(image_shape, L.comps);
  double pos[3];
  for (std::size_t z = 0, i = 0; z < L.N[0]; ++z)
    for (std::size_t y = 0; y < L.N[1]; ++y)
      for (std::size_t x = 0; x < L.N[2]; ++x, ++i) {
        const double p3[3] = {static_cast<double>(z), static_cast<double>(y),
                              static_cast<double>(x)};
        for (std::size_t a = 0; a < L.rank; ++a) pos[a] = p3[a + 3 - L.rank];
        displacement_unchecked(grid, L, pos, out.data() + i * L.comps);
      }
  return out;
}

Array<double> ffd_jacobian_determinant_reference(const Array<double>& grid,
                                                 const std::vector<int>& delta,
                                                 const std::vector<std::size_t>& image_shape) {
  check_ffd_grid(grid, delta, image_shape);
  const Layout L = make_layout(grid, delta, &image_shape);
  Array<double> out(image_shape, 1);
  double pos[3], J[9];
  for (std::size_t z = 0, i = 0; z < L.N[0]; ++z)
    for (std::size_t y = 0; y < L.N[1]; ++y)
      for (std::size_t x = 0; x < L.N[2]; ++x, ++i) {
        const double p3[3] = {static_cast<double>(z), static_cast<double>(y),
                              static_cast<double>(x)};
        for (std::size_t a = 0; a < L.rank; ++a) pos[a] = p3[a + 3 - L.rank];
        out[i] = jacobian_unchecked(grid, L, pos, J);
      }
  return out;
}

template <class T>
Array<T> ffd_field(const Array<T>& grid, const std::vector<int>& delta,
                   const std::vector<std::size_t>& image_shape, unsigned threads) {
  check_ffd_grid(grid, delta, image_shape);
  const Layout L = make_layout(grid, delta, &image_shape);
  Array<T> out(image_shape, L.comps);
  T* o = out.data();
  const std::size_t C = L.comps;
  dense_eval(grid, L, {{0, 0, 0}}, threads, [&](std::size_t i, const T* v) {
    for (std::size_t c = 0; c < C; ++c) o[i * C + c] = v[c];
  });
  return out;
}

template <class T>
Array<T> ffd_jacobian_determinant_field(const Array<T>& grid, const std::vector<int>& delta,
                                        const std::vector<std::size_t>& image_shape,
                                        unsigned threads) {
  check_ffd_grid(grid, delta, image_shape);
  const Layout L = make_layout(grid, delta, &image_shape);
  Array<T> out(image_shape, 1);
  T* o = out.data();
  const std::size_t r = L.rank;
  // Pattern b: the derivative along array axis b (3-D view axis b + 3 - r).
  std::vector<std::array<int, 3>> pats;
  for (std::size_t b = 0; b < r; ++b) {
    std::array<int, 3> p{0, 0, 0};
    p[b + 3 - r] = 1;
    pats.push_back(p);
  }
  dense_eval(grid, L, pats, threads, [&](std::size_t i, const T* v) {
    // v[b * r + a] = d u_a / d x_b.
    T J[9];
    for (std::size_t a = 0; a < r; ++a)
      for (std::size_t b = 0; b < r; ++b) J[a * r + b] = (a == b ? T(1) : T(0)) + v[b * r + a];
    o[i] = det_of(J, r);
  });
  return out;
}

// ---- Bending energy
// -------------------------------------------------------------------------------

namespace {

// The grid's Gram matrices and domain, shared by the two implementations.
struct BendingSetup {
  Layout L;
  std::vector<double> G[3][3];  // per axis (3-D view), orders 0, 1, 2; empty for a dummy axis
  double volume = 1.0;
};

BendingSetup bending_setup(const Array<double>& grid, const std::vector<int>& delta) {
  check_ffd_grid(grid, delta);
  BendingSetup s;
  s.L = make_layout(grid, delta, nullptr);
  for (std::size_t a = 3 - s.L.rank; a < 3; ++a) {
    for (int d = 0; d <= 2; ++d) s.G[a][d] = gram(s.L.M[a], s.L.delta[a], d);
    s.volume *= static_cast<double>((s.L.M[a] - 3) * static_cast<std::size_t>(s.L.delta[a]));
  }
  return s;
}

// out[e] = sum_k G[j][k] in_k[e] (+= when `add`), k over the band of j, for e < n: in_k, row
// (or element) k of a line whose rows are `stride` doubles apart, is at in + (k - first) stride
// (`in` holds rows first ..).
inline void band_rows(const double* G, std::size_t j, std::size_t M, const double* in,
                      std::size_t first, std::size_t stride, std::size_t n, double scale,
                      double* out, bool add) {
  const std::size_t k0 = j >= 3 ? j - 3 : 0, k1 = std::min(M - 1, j + 3);
  if (!add)
    for (std::size_t e = 0; e < n; ++e) out[e] = 0.0;
  for (std::size_t k = k0; k <= k1; ++k) {
    const double g = scale * G[j * 7 + (k + 3 - j)];
    const double* src = in + (k - first) * stride;
    for (std::size_t e = 0; e < n; ++e) out[e] += g * src[e];
  }
}

// An uninitialised buffer (first touched by the worker threads, not zeroed by the caller).
std::unique_ptr<double[]> scratch(std::size_t n) {
  return std::unique_ptr<double[]>(new double[n]);
}

}  // namespace

double ffd_bending_energy(const Array<double>& grid, const std::vector<int>& delta,
                          Array<double>* gradient, unsigned threads) {
  const BendingSetup S = bending_setup(grid, delta);
  const Layout& L = S.L;
  const std::size_t C = L.comps, Mz = L.M[0], My = L.M[1], Mx = L.M[2];
  const std::size_t row = Mx * C, plane = My * row, n = Mz * plane, rows = Mz * My;
  const bool three = L.rank == 3;
  const std::size_t min_rows = 8;  // rows per thread in pass z

  // Passes x and y by tasks of one z plane and a block of output rows y0 .. y1 (blocks only
  // where planes are too few to share among the threads): pass x into a task-local scratch for
  // the rows y0 - 3 .. y1 + 2 that pass y reads, X_d = G_x^(d) c along x (d = 0, 1, 2); then
  // pass y per output row, the sums of the pairs that share their z order:
  //   A  = G_y^(0) X0                                  (then z order 2: the pair zz)
  //   B  = G_y^(0) X2 + G_y^(2) X0 + 2 G_y^(1) X1       (z order 0: xx, yy, 2 yx)
  //   Cm = G_y^(1) X0 + G_y^(0) X1                      (z order 1, times 2: zy, zx)
  // In 2-D, B is the whole sum. A row of X is the same whichever task computes it, so the
  // split changes no bit.
  auto Y = scratch((three ? 3 : 1) * n);
  double* B = Y.get();
  double* A = three ? B + n : nullptr;
  double* Cm = three ? A + n : nullptr;
  const double* Gx[3] = {S.G[2][0].data(), S.G[2][1].data(), S.G[2][2].data()};
  const double* Gy[3] = {S.G[1][0].data(), S.G[1][1].data(), S.G[1][2].data()};
  const unsigned hw = threads ? threads : default_thread_count();
  const std::size_t want_tasks = 4 * static_cast<std::size_t>(hw);
  const std::size_t per_plane =
      Mz >= want_tasks ? 1 : std::min((want_tasks + Mz - 1) / Mz, (My + 7) / 8);
  const std::size_t yb = (My + per_plane - 1) / per_plane;  // output rows per task
  const std::size_t tasks = Mz * ((My + yb - 1) / yb);
  detail::parallel_for(
      tasks, detail::thread_count(threads, tasks, 1), [&](std::size_t b, std::size_t e) {
        const std::size_t span = std::min(My, yb + 6);
        std::vector<double> xs(3 * span * row);
        for (std::size_t t = b; t < e; ++t) {
          const std::size_t z = t / ((My + yb - 1) / yb);
          const std::size_t y0 = (t % ((My + yb - 1) / yb)) * yb, y1 = std::min(My, y0 + yb);
          const std::size_t r0 = y0 >= 3 ? y0 - 3 : 0, r1 = std::min(My, y1 + 3);
          // xs[d][r - r0] = row r of X_d.
          double* X[3] = {xs.data(), xs.data() + span * row, xs.data() + 2 * span * row};
          for (std::size_t r = r0; r < r1; ++r) {
            const double* src = grid.data() + z * plane + r * row;
            for (std::size_t j = 0; j < Mx; ++j)
              for (int d = 0; d <= 2; ++d)
                band_rows(Gx[d], j, Mx, src, 0, C, C, 1.0, X[d] + (r - r0) * row + j * C, false);
          }
          const double* X0 = X[0];
          const double* X1 = X[1];
          const double* X2 = X[2];
          for (std::size_t j = y0; j < y1; ++j) {
            const std::size_t out = z * plane + j * row;
            band_rows(Gy[0], j, My, X2, r0, row, row, 1.0, B + out, false);
            band_rows(Gy[2], j, My, X0, r0, row, row, 1.0, B + out, true);
            band_rows(Gy[1], j, My, X1, r0, row, row, 2.0, B + out, true);
            if (!three) continue;
            band_rows(Gy[0], j, My, X0, r0, row, row, 1.0, A + out, false);
            band_rows(Gy[1], j, My, X0, r0, row, row, 1.0, Cm + out, false);
            band_rows(Gy[0], j, My, X1, r0, row, row, 1.0, Cm + out, true);
          }
        }
      });

  // Pass z (3-D): acc = G_z^(2) A + G_z^(0) B + 2 G_z^(1) Cm, per output row (k, y); then the
  // row's share of c . acc (summed in order within the row) and the gradient 2 acc / |Omega|.
  std::unique_ptr<double[]> acc_buf;
  if (gradient && (gradient->dims() != grid.dims() || gradient->channels() != C))
    *gradient = Array<double>(grid.dims(), C);  // (every value is written below)
  double* acc = gradient ? gradient->data() : nullptr;
  if (three && !acc) {
    acc_buf = scratch(n);
    acc = acc_buf.get();
  }
  std::vector<double> partial(rows, 0.0);
  const double* Gz[3] = {three ? S.G[0][0].data() : nullptr, three ? S.G[0][1].data() : nullptr,
                         three ? S.G[0][2].data() : nullptr};
  const double gscale = 2.0 / S.volume;
  detail::parallel_for(rows, detail::thread_count(threads, rows, min_rows),
                       [&](std::size_t b, std::size_t e) {
                         for (std::size_t r = b; r < e; ++r) {
                           const std::size_t k = r / My, y = r % My;
                           const std::size_t out = r * row, at = y * row;
                           const double* a = B + out;  // 2-D: acc = B
                           if (three) {
                             band_rows(Gz[2], k, Mz, A + at, 0, plane, row, 1.0, acc + out, false);
                             band_rows(Gz[0], k, Mz, B + at, 0, plane, row, 1.0, acc + out, true);
                             band_rows(Gz[1], k, Mz, Cm + at, 0, plane, row, 2.0, acc + out, true);
                             a = acc + out;
                           }
                           const double* c = grid.data() + out;
                           double s = 0.0;
                           for (std::size_t i = 0; i < row; ++i) s += c[i] * a[i];
                           partial[r] = s;
                           if (gradient) {
                             double* g = gradient->data() + out;
                             for (std::size_t i = 0; i < row; ++i) g[i] = gscale * a[i];
                           }
                         }
                       });
  double energy = 0.0;
  for (double p : partial) energy += p;
  return energy / S.volume;
}

std::vector<double> ffd_bending_gram(std::size_t M, int delta, int order) {
  if (M < 4)
    throw Error("FFD bending-energy Gram matrix: " + std::to_string(M) +
                " control points, a cubic B-spline needs at least 4");
  if (delta < 1)
    throw Error("FFD bending-energy Gram matrix: the spacing must be at least 1 voxel, got " +
                std::to_string(delta));
  if (order < 0 || order > 2)
    throw Error("FFD bending-energy Gram matrix: the derivative order must be 0, 1 or 2, got " +
                std::to_string(order));
  return gram(M, delta, order);
}

double ffd_bending_energy_reference(const Array<double>& grid, const std::vector<int>& delta,
                                    Array<double>* gradient) {
  const BendingSetup S = bending_setup(grid, delta);
  const Layout& L = S.L;
  const std::size_t r = L.rank, off = 3 - r, C = L.comps, pts = grid.points();
  if (gradient) *gradient = Array<double>(grid.dims(), C);
  double energy = 0.0;
  std::vector<double> x(pts), y, t;
  for (std::size_t c = 0; c < C; ++c) {
    for (std::size_t i = 0; i < pts; ++i) x[i] = grid[i * C + c];
    std::vector<double> acc(pts, 0.0);
    // Ordered pairs (a, b): a == b once with order 2 on a; a < b twice with order 1 on both.
    for (std::size_t a = off; a < 3; ++a)
      for (std::size_t b = a; b < 3; ++b) {
        const double weight = a == b ? 1.0 : 2.0;
        y = x;
        for (std::size_t ax = off; ax < 3; ++ax) {
          const int order = a == b ? (ax == a ? 2 : 0) : (ax == a || ax == b ? 1 : 0);
          apply_axis(S.G[ax][order], L.M, static_cast<int>(ax), y, t);
          y.swap(t);
        }
        for (std::size_t i = 0; i < pts; ++i) acc[i] += weight * y[i];
      }
    for (std::size_t i = 0; i < pts; ++i) energy += x[i] * acc[i];
    if (gradient)
      for (std::size_t i = 0; i < pts; ++i) (*gradient)[i * C + c] = 2.0 * acc[i] / S.volume;
  }
  return energy / S.volume;
}

// ---- Refinement
// -----------------------------------------------------------------------------------

template <class T>
Array<T> ffd_refine(const Array<T>& grid, const std::vector<int>& delta) {
  check_ffd_grid(grid, delta);
  const std::size_t r = grid.rank(), C = grid.channels();
  for (std::size_t a = 0; a < r; ++a)
    if (delta[a] % 2 != 0)
      throw Error(std::string("FFD refinement halves the spacing, which must be even: axis ") +
                  axis_name(r, a) + " has spacing " + std::to_string(delta[a]));
  static const double h[5] = {1.0 / 8, 4.0 / 8, 6.0 / 8, 4.0 / 8, 1.0 / 8};  // k = -2 .. 2
  Array<T> cur = grid;
  for (std::size_t axis = 0; axis < r; ++axis) {
    std::vector<std::size_t> dims = cur.dims();
    const std::size_t M = dims[axis], F = 2 * M - 3;
    dims[axis] = F;
    Array<T> next(dims, C);
    std::size_t stride = C;
    for (std::size_t a = r; a-- > axis + 1;) stride *= dims[a];
    std::size_t outer = 1;
    for (std::size_t a = 0; a < axis; ++a) outer *= dims[a];
    for (std::size_t o = 0; o < outer; ++o)
      for (std::size_t s = 0; s < stride; ++s) {
        const T* src = cur.data() + o * M * stride + s;
        T* dst = next.data() + o * F * stride + s;
        for (std::size_t i = 0; i < F; ++i) {
          // Fine point i = sum_j h[i - 2 j + 1] c[j], |i - 2 j + 1| <= 2.
          T acc = T(0);
          for (long j = (static_cast<long>(i) - 2) / 2; j <= (static_cast<long>(i) + 3) / 2; ++j) {
            const long k = static_cast<long>(i) - 2 * j + 1;
            if (j < 0 || j >= static_cast<long>(M) || k < -2 || k > 2) continue;
            acc += static_cast<T>(h[k + 2]) * src[static_cast<std::size_t>(j) * stride];
          }
          dst[i * stride] = acc;
        }
      }
    cur = std::move(next);
  }
  return cur;
}

template void check_ffd_grid<float>(const Array<float>&, const std::vector<int>&);
template void check_ffd_grid<double>(const Array<double>&, const std::vector<int>&);
template void check_ffd_grid<float>(const Array<float>&, const std::vector<int>&,
                                    const std::vector<std::size_t>&);
template void check_ffd_grid<double>(const Array<double>&, const std::vector<int>&,
                                     const std::vector<std::size_t>&);
template Array<float> ffd_field<float>(const Array<float>&, const std::vector<int>&,
                                       const std::vector<std::size_t>&, unsigned);
template Array<double> ffd_field<double>(const Array<double>&, const std::vector<int>&,
                                         const std::vector<std::size_t>&, unsigned);
template Array<float> ffd_jacobian_determinant_field<float>(const Array<float>&,
                                                            const std::vector<int>&,
                                                            const std::vector<std::size_t>&,
                                                            unsigned);
template Array<double> ffd_jacobian_determinant_field<double>(const Array<double>&,
                                                              const std::vector<int>&,
                                                              const std::vector<std::size_t>&,
                                                              unsigned);
template Array<float> ffd_refine<float>(const Array<float>&, const std::vector<int>&);
template Array<double> ffd_refine<double>(const Array<double>&, const std::vector<int>&);

}  // namespace sv
