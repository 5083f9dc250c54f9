// Cubic B-spline free-form deformation (FFD) fields in 2-D and 3-D: the displacement of a
// control grid at any position, the dense field over an image (a per-voxel double reference and
// a tile-structured, separable, multi-threaded evaluation), the Jacobian of x -> x + u(x), the
// bending energy of a grid with its gradient, and exact grid refinement. docs/DESIGN.md
// ("Deformation fields") has the derivations.
//
// The convention (the .npy control grids of splinetool and the registration use the same):
//   - A control grid is an sv::Array of rank R (2 or 3) with R channels: dims (M_z, M_y, M_x)
//     in 3-D, (M_y, M_x) in 2-D, channel c the displacement along array axis c (z, y, x), in
//     voxel units. As a NumPy array that is shape (M_z, M_y, M_x, 3) or (M_y, M_x, 2), the last
//     axis in array axis order (z, y, x), which is exactly the interleaved layout of sv::Array.
//   - The spacing delta[a] >= 1 (integer, voxels) is given per array axis a.
//   - Control point j of an axis sits at voxel position (j - 1) * delta: the grid starts one
//     spacing before voxel 0. Per axis the field is u(x) = sum_j c[j] beta3(x / delta - j + 1),
//     and in R dimensions the tensor product of R such sums.
//   - An image of N samples along an axis needs at least floor((N - 1) / delta) + 4 control
//     points there (ffd_grid_shape); then every voxel has its 4^R control points in the grid.
//     At other positions control points outside the grid count as zero.
//   - Positions are (z, y, x) in 3-D and (y, x) in 2-D, in voxels (voxel k at position k).
#pragma once

#include <cstddef>
#include <vector>

#include "splineview/array.h"

namespace sv {

// The minimum control-point counts per axis for an image of `image_shape` samples with spacing
// `delta` (both in array axis order): floor((N - 1) / delta) + 4. Throws sv::Error for a rank
// other than 2 or 3, a zero extent, a delta below 1 or sizes that disagree.
std::vector<std::size_t> ffd_grid_shape(const std::vector<std::size_t>& image_shape,
                                        const std::vector<int>& delta);

// Throws sv::Error with a sentence naming the problem unless `grid` is a valid control grid for
// `delta`: rank 2 or 3, as many channels as the rank, delta of the same size with every entry
// >= 1, at least 4 points per axis, every value finite.
template <class T>
void check_ffd_grid(const Array<T>& grid, const std::vector<int>& delta);
// The same, and the grid has at least ffd_grid_shape(image_shape, delta) points on every axis
// (the message names the axis, the count and the minimum).
template <class T>
void check_ffd_grid(const Array<T>& grid, const std::vector<int>& delta,
                    const std::vector<std::size_t>& image_shape);

// ---- Pointwise, double (the reference) -------------------------------------------------------

// The displacement at `pos` (grid.rank() coordinates, array axis order, voxels): writes
// grid.rank() components to `u`. Exact B-spline weights, the 4^R products summed in double.
void ffd_displacement(const Array<double>& grid, const std::vector<int>& delta, const double* pos,
                      double* u);

// The Jacobian matrix of x -> x + u(x) at `pos`: J[a * R + b] = (a == b) + d u_a / d x_b,
// R = grid.rank(), a and b array axes. Returns det J.
double ffd_jacobian(const Array<double>& grid, const std::vector<int>& delta, const double* pos,
                    double* J);

// det of the Jacobian matrix of x -> x + u(x) at `pos`.
double ffd_jacobian_determinant(const Array<double>& grid, const std::vector<int>& delta,
                                const double* pos);

// ---- Dense, over the voxels of an image ------------------------------------------------------

// The field at every voxel of an image of `image_shape` (rank R, array axis order): an Array
// of that shape with R channels. The reference: ffd_displacement at each voxel.
Array<double> ffd_field_reference(const Array<double>& grid, const std::vector<int>& delta,
                                  const std::vector<std::size_t>& image_shape);

// The same field, evaluated with the tile structure: voxel k of an axis lies in tile
// k / delta and uses control points tile .. tile + 3 with the weight row of k % delta, so the
// delta weight rows per axis are computed once, and the sum is taken one axis at a time (z
// first, over whole planes of control points; then y; then x). Arithmetic in T; slices of z are
// shared among `threads` threads (0 = sv::default_thread_count()). In double it equals the
// reference to a few ulp of max |u|.
template <class T>
Array<T> ffd_field(const Array<T>& grid, const std::vector<int>& delta,
                   const std::vector<std::size_t>& image_shape, unsigned threads = 0);

// det J at every voxel (one channel): the reference (ffd_jacobian_determinant per voxel) and
// the tile-structured evaluation (derivative weight rows, as ffd_field).
Array<double> ffd_jacobian_determinant_reference(const Array<double>& grid,
                                                 const std::vector<int>& delta,
                                                 const std::vector<std::size_t>& image_shape);
template <class T>
Array<T> ffd_jacobian_determinant_field(const Array<T>& grid, const std::vector<int>& delta,
                                        const std::vector<std::size_t>& image_shape,
                                        unsigned threads = 0);

// ---- Bending energy --------------------------------------------------------------------------

// The thin-plate bending energy of the field, averaged over the grid's domain
//   Omega = [0, (M_a - 3) delta_a] per axis (the tiles whose 4^R control points all exist;
//           it covers the image for any grid that is valid for it),
//   E = 1/|Omega| integral_Omega sum_c sum_a sum_b (d^2 u_c / dx_a dx_b)^2 dx,
// a and b over all ordered pairs of axes (so the mixed terms count twice, as in Rueckert et al.
// 1999), derivatives in voxel units. Computed in closed form: E = sum_c sum_(a,b) c^T (G_z (x)
// G_y (x) G_x) c / |Omega| with per-axis banded Gram matrices of B-spline derivatives, exact
// to rounding. `gradient`, when not null, receives dE/dc (an array of the grid's shape).
//
// The six pairs share their one-axis products: three banded products along x (orders 0, 1, 2),
// three sums of products along y (the pairs grouped by their z order) and one sum along z, each
// pass split by rows of control points over `threads` threads (0 = sv::default_thread_count()).
// Every value is computed in the same order whatever the split, and c . (K c) is summed per row
// and then over the rows in order, so the result is the same bit for bit for any thread count.
double ffd_bending_energy(const Array<double>& grid, const std::vector<int>& delta,
                          Array<double>* gradient = nullptr, unsigned threads = 0);

// The banded Gram matrix of one axis (M >= 4 control points, spacing delta >= 1, derivative
// order 0, 1 or 2) that ffd_bending_energy uses: G[j * 7 + (k - j + 3)] = the integral over
// [0, (M - 3) delta] of the order-th derivatives (voxel units) of the basis functions of points j
// and k (zero for |j - k| > 3 and for k outside the grid). For other implementations of the
// energy (the GPU objective, cuda_registration.h). Throws sv::Error for other arguments.
std::vector<double> ffd_bending_gram(std::size_t M, int delta, int order);

// The same energy and gradient by the first implementation, kept as a reference for tests: one
// component and one pair (a, b) at a time, three full one-axis passes per pair, one thread.
double ffd_bending_energy_reference(const Array<double>& grid, const std::vector<int>& delta,
                                    Array<double>* gradient = nullptr);

// ---- Refinement ------------------------------------------------------------------------------

// The grid at half the spacing (every delta must be even) that gives the same field: the
// two-scale relation beta3(t / 2) = sum_k h[k] beta3(t - k), h = (1, 4, 6, 4, 1) / 8, so fine
// point i = sum_j h[i - 2 j + 1] c[j] (coarse points outside the grid are zero). The fine grid
// has 2 M - 3 points per axis: the same domain Omega (so the same bending energy), valid for
// exactly the images the coarse grid is valid for. The new spacing is delta / 2.
template <class T>
Array<T> ffd_refine(const Array<T>& grid, const std::vector<int>& delta);

}  // namespace sv
