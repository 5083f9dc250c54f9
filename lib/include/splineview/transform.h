// scipy.ndimage's geometric transforms (zoom, shift, affine_transform, rotate's plane-wise
// affine) on the CPU, streamed: no array of output positions is ever built.
//
// Semantics: each output point takes the spline (sampler.h; prefilter = true: the interpolant
// of the samples, as sv::interpolate, padded for Nearest and GridConstant; false: the array is
// the coefficients, as sv::sample) at an input position computed with scipy 1.10's arithmetic
// (its NI_ZoomShift and NI_GeometricTransform), so every boundary mode, cval and degree-0 tie
// behaves as in scipy.ndimage.map_coordinates at those positions.
//
// Axis-aligned transforms (zoom, shift, diagonal affine matrices) are separable: each axis is
// resampled with the per-axis taps and weights of sv::sample (axis_weights in sampler.h), one
// axis at a time, so a d-D point costs d (degree + 1) multiply-adds per pass instead of
// (degree + 1)^d. The slowest axis is resampled last from a sliding window of input slices
// already resampled along the other axes, so the memory beyond the coefficients and the
// output is a few slices (about 8 MB, or 4 per thread plus the spline's support). Lines and
// slices are spread over the threads. The result equals sv::sample at the same positions to
// rounding (the same products, summed in the same order; Constant and GridConstant put cval in
// line by line).
//
// General matrices go row by row (the last output axis), rows in contiguous bands over the
// threads; each point's position is computed with scipy's arithmetic. Points whose taps all lie
// inside the coefficients (and inside [0, N-1] per axis) are summed by an evaluator specialised
// per degree and rank (weights by the same recursion, products summed in the same order as
// sv::sample, so the values are identical to sv::sample's); the rest of the row (borders,
// outside, several channels) goes through sv::sample, where the mode decides.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "splineview/array.h"
#include "splineview/interpolant.h"
#include "splineview/sampler.h"

namespace sv {

// Resamples every axis d of the spline at the positions axes[d] (sample units of the original
// samples): output[i0, i1, ...] = spline(axes[0][i0], axes[1][i1], ...). axes.size() must be
// the spline's rank. opt.derivative_axis must be -1.
template <class T>
Array<double> resample_axes(const Interpolant<T>& spline,
                            const std::vector<std::vector<double>>& axes,
                            const SamplerOptions& opt);

// scipy's positions, with its arithmetic (z = (in - 1)/(out - 1), or in/out with grid_mode,
// and 1 where the divisor is 0):
//   zoom:        i * z, or with grid_mode ((i + 0.5) * z) - 0.5
//   shift:       i + (-s)
//   zoom_shift:  (i + s) * z   (affine_transform with a 1-D matrix: s = offset / z)
//   affine:      m * i + offset (affine_transform with a diagonal (ndim, ndim) matrix)
std::vector<double> zoom_positions(std::size_t in, std::size_t out, bool grid_mode);
std::vector<double> shift_positions(std::size_t out, double shift);
std::vector<double> zoom_shift_positions(std::size_t out, double zoom, double shift);
std::vector<double> affine_positions(std::size_t out, double m, double offset);

// scipy.ndimage.zoom(input, output shape out_dims, grid_mode) and shift(input, shift).
template <class T>
Array<double> zoom(Array<T> samples, const std::vector<std::size_t>& out_dims, bool grid_mode,
                   const SamplerOptions& opt, bool prefilter = true);
template <class T>
Array<double> shift(Array<T> samples, const std::vector<double>& shift, const SamplerOptions& opt,
                    bool prefilter = true);

// scipy.ndimage.affine_transform with an (in rank) x (out rank) matrix (row-major) and offset:
// output point o takes input position matrix o + offset, summed as scipy 1.10 does (the columns
// in order, then the offset; this decides order-0 ties). A square matrix whose off-diagonal entries
// are all zero takes the separable path. diagonal_1d: `matrix` holds the in-rank diagonal of
// scipy's 1-D form, whose positions are (o + offset / m) * m (scipy's zoom_shift).
template <class T>
Array<double> affine_transform(Array<T> samples, const std::vector<double>& matrix,
                               const std::vector<double>& offset,
                               const std::vector<std::size_t>& out_dims, const SamplerOptions& opt,
                               bool prefilter = true, bool diagonal_1d = false);

// Fills planes first .. first + count - 1 (indices along the third axis) of a 3-D array,
// interleaved: na x nb points, row-major (axis_a, axis_b), each with the `channels` values of
// plane first, then those of plane first + 1, ... Called from several threads at once.
template <class T>
using PlaneLoader = std::function<void(std::size_t first, std::size_t count, T* dst)>;

// The 2-D affine transform (2x2 matrix, offset) applied to every plane of a 3-D array parallel
// to axes (axis_a, axis_b), axis_a < axis_b, each plane interpolated on its own (prefiltered in
// 2-D), as scipy.ndimage.rotate does for 3-D input. The output has out_a x out_b planes, the
// third axis unchanged. Planes are spread over the threads.
template <class T>
Array<double> affine_transform_planes(const Array<T>& samples, std::size_t axis_a,
                                      std::size_t axis_b, const double matrix[4],
                                      const double offset[2], std::size_t out_a, std::size_t out_b,
                                      const SamplerOptions& opt, bool prefilter = true);

// The same for an array of extents `dims` and `channels` held elsewhere (e.g. a NumPy buffer
// with any strides), read one plane at a time through `load`: nothing beyond the output and
// one plane's coefficients per thread is allocated.
template <class T>
Array<double> affine_transform_planes(const std::vector<std::size_t>& dims, std::size_t channels,
                                      const PlaneLoader<T>& load, std::size_t axis_a,
                                      std::size_t axis_b, const double matrix[4],
                                      const double offset[2], std::size_t out_a, std::size_t out_b,
                                      const SamplerOptions& opt, bool prefilter = true);

// cos and sin of an angle in degrees as scipy.special.cosdg/sindg compute them, which
// scipy.ndimage.rotate uses for its matrix: the same reduction to octants and polynomials, so
// the rotation matrix is scipy's to the last bit (an ulp decides order-0 ties; cosdg(90) is
// exactly 0). Used by splinetool's rotate and the Python package's.
double sindg(double degrees);
double cosdg(double degrees);

}  // namespace sv
