// scipy.ndimage's interpolation on device arrays (the Python package's GPU path for CuPy and torch
// arrays): the B-spline prefilter along any axis and the spline evaluated at positions given as
// an array (map_coordinates), as per-axis tables (zoom, shift, diagonal affine_transform) or by
// a matrix (affine_transform, rotate), for float and double data in device memory, C order,
// rank 1-3, no channels. Every boundary mode of sv::Boundary, degrees 0-7, cval: the semantics
// of sv::prefilter / sv::Interpolant / sv::sample (sampler.h), with the positions computed by
// the same arithmetic (no fused multiply-add in a position), weights and sums in double.
//
// Work is queued on `stream` (a cudaStream_t from the caller's array library, as an integer;
// 0 is the legacy default stream) of device `device`; nothing synchronises the host. Errors in
// the arguments throw sv::Error naming the problem; launch failures throw sv::Error too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "splineview/array.h"

namespace sv::cuda::nd {

using Stream = std::uintptr_t;

// Selects `device` for the calls that follow on this thread (the caller's array lives there).
void use_device(int device);

// In place along `axis` (0 = slowest) of the C-order array of extents `dims`: the coefficients of
// the spline of `degree` under the samples extended by prefilter_boundary(mode). Double: one
// thread per line (causal start summed over the extended signal, closed-form anticausal start,
// as the CPU prefilter). Float: the same, or for spline_filter() the tiled kernels of
// cuda_prefilter.h (exact to float working precision, reflect/mirror/periodic extensions).
template <class T>
void spline_filter1d(T* data, const std::vector<std::size_t>& dims, std::size_t axis, int degree,
                     Boundary mode, Stream stream);
// Every axis in turn (float: the tiled kernels, ordered after `stream` through events).
void spline_filter(float* data, const std::vector<std::size_t>& dims, int degree, Boundary mode,
                   Stream stream);
void spline_filter(double* data, const std::vector<std::size_t>& dims, int degree, Boundary mode,
                   Stream stream);

// dst (extents dims + 2 pad per axis) = src padded with `pad` samples per side: edge values
// (edge = true, Nearest) or cval (GridConstant); what sv::Interpolant does before filtering.
template <class T>
void pad(const T* src, const std::vector<std::size_t>& dims, std::size_t pad, bool edge,
         double cval, T* dst, Stream stream);

// The spline with coefficients `coefficients` (extents dims) of `degree`, boundary `mode`, cval,
// evaluated at positions + shift (shift: the pad added per side, 0 without), into `out`.
struct Spline {
  const void* coefficients = nullptr;
  std::vector<std::size_t> dims;
  int degree = 3;
  Boundary mode = Boundary::Mirror;
  double cval = 0.0;
  double shift = 0.0;
  int derivative_axis = -1;  // >= 0: the first derivative along that axis (degree >= 1)
  // An out-of-core window (window_extent > 0): the coefficients hold slices window_first, ...
  // of an array of window_extent slices along axis 0 (its extension where outside it), and
  // positions along axis 0 are the whole array's. Wrap's fold, order 0's Mirror/Reflect folds
  // and Constant's outside test use window_extent; then window_first is subtracted (an integer:
  // exact). The window must hold every tap of every folded position (and, filtered, the halo).
  double window_first = 0.0;
  long long window_extent = 0;
};

// m positions, coordinate d of point p at coordinates[d * m + p] (scipy's (d, ...) layout).
template <class T, class C>
void map_coordinates(const Spline& spline, const C* coordinates, std::size_t m, T* out,
                     Stream stream);
// Output point (o_0, ..., o_{r-1}) takes the position (tables[0][o_0], ..., tables[r-1][o_r-1])
// (scipy's zoom / shift positions); out has extents tables[d].size().
template <class T>
void sample_tables(const Spline& spline, const std::vector<std::vector<double>>& tables, T* out,
                   Stream stream);
// Output point o (extents out_dims, rank 1-3) takes position matrix o + offset: per input axis
// d, the products matrix[d * out_rank + j] * o_j summed over j in order, then + offset[d]
// (scipy 1.10's NI_GeometricTransform arithmetic). out_first: out holds output slices
// out_first, out_first + out_dims[0] - 1 of a larger output (o_0 counts from out_first).
template <class T>
void sample_affine(const Spline& spline, const std::vector<double>& matrix,
                   const std::vector<double>& offset, const std::vector<std::size_t>& out_dims,
                   T* out, Stream stream, std::size_t out_first = 0);

}  // namespace sv::cuda::nd
