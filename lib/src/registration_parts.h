// The pieces the CPU registration objectives share (registration.cpp's SSD, registration_nmi.cpp's
// NMI): the 3-D view of a 2-D or 3-D problem, the moving image's cubic spline and its gradient at
// a displaced voxel (one pass over the 4^R coefficients), and the adjoint of the tile-structured
// field evaluation (per-voxel vectors summed into control points). docs/DESIGN.md
// ("Registration") describes them.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "splineview/array.h"
#include "splineview/sampler.h"

namespace sv::detail {

// A 2-D problem is one z slice of the 3-D view with a one-tap z axis.
struct FfdView {
  std::size_t R = 0;             // the images' rank (2 or 3)
  std::size_t off = 0;           // 3 - R: the first real axis of the view
  std::size_t N[3] = {1, 1, 1};  // image extents (z, y, x)
  std::size_t M[3] = {1, 1, 1};  // control-grid extents
  int delta[3] = {1, 1, 1};      // spacing
  std::size_t rows() const { return N[0] * N[1]; }
  std::size_t voxels() const { return N[0] * N[1] * N[2]; }
};

FfdView ffd_view(const std::vector<std::size_t>& image_shape,
                 const std::vector<std::size_t>& grid_shape, const std::vector<int>& spacing);

// Per-axis taps of the moving image's spline at one coordinate: value and derivative weights.
struct SplineTaps {
  int count = 4;
  long k[4] = {0, 0, 0, 0};
  double w[4] = {1, 0, 0, 0};
  double dw[4] = {0, 0, 0, 0};
};

// The taps at coordinate x of an axis of n samples: floor(x) - 1 .. floor(x) + 2, extended by
// the boundary b near the ends.
void spline_taps(double x, long n, Boundary b, SplineTaps& t);

// The moving image's cubic spline (coefficients `coef`, the view's extents) at voxel (row, x) of
// the view displaced by u (R components, array axis order): returns M, and d[0..2] receives
// dM/dz, dM/dy, dM/dx (d[0] = 0 in 2-D). One pass over the 4^R coefficients: row sums along x
// with value and derivative weights, combined with the y and z weights.
template <class T>
inline double spline_value_gradient(const T* coef, const FfdView& v, std::size_t row, std::size_t x,
                                    const T* u, Boundary boundary, double d[3]) {
  const double base[3] = {static_cast<double>(row / v.N[1]), static_cast<double>(row % v.N[1]),
                          static_cast<double>(x)};
  SplineTaps t[3];
  if (v.R == 2) t[0].count = 1;
  for (std::size_t a = v.off; a < 3; ++a)
    spline_taps(base[a] + static_cast<double>(u[a - v.off]), static_cast<long>(v.N[a]), boundary,
                t[a]);
  double val = 0, d0 = 0, d1 = 0, d2 = 0;
  for (int l = 0; l < t[0].count; ++l) {
    for (int m = 0; m < 4; ++m) {
      const T* cr = coef + (static_cast<std::size_t>(t[0].k[l]) * v.N[1] +
                            static_cast<std::size_t>(t[1].k[m])) *
                               v.N[2];
      double s = 0, sd = 0;
      for (int n = 0; n < 4; ++n) {
        const double c = static_cast<double>(cr[t[2].k[n]]);
        s += t[2].w[n] * c;
        sd += t[2].dw[n] * c;
      }
      const double w01 = t[0].w[l] * t[1].w[m];
      val += w01 * s;
      d2 += w01 * sd;
      d1 += t[0].w[l] * t[1].dw[m] * s;
      d0 += t[0].dw[l] * t[1].w[m] * s;
    }
  }
  d[0] = d0;
  d[1] = d1;
  d[2] = d2;
  return val;
}

// The weights of the four control points of each voxel offset r = 0 .. delta - 1 in a tile
// (rows[r * 4 + n]), as ffd_field computes them (the offset r / delta, exact weights).
std::vector<double> ffd_weight_rows(int delta);

// The adjoint (transpose) of the tile-structured field evaluation: gradient[j] = sum_x g(x)
// beta_j(x), g the per-voxel vectors (the view's image extents, R components), the result of
// grid_shape with R components. One axis at a time (x, then y, then z), every parallel stage
// writing disjoint outputs in a fixed order: independent of the thread count.
void ffd_adjoint(const Array<double>& g, const FfdView& v,
                 const std::vector<std::size_t>& grid_shape, unsigned threads,
                 Array<double>& gradient);

}  // namespace sv::detail
