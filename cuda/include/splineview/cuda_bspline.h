// B-spline signal processing on the GPU (issue 17): the direct transform with a smoothing
// parameter lambda >= 0, the indirect transform, and the derivative filters (any multi-index up to
// the degree, the gradient, the Hessian, the Laplacian and the gradient magnitude) on device
// arrays of float or double, with the semantics of the CPU versions (smoothing.h, derivative.h):
// the same options structs, every boundary mode those accept, 1-3 D, 1-4 interleaved channels.
//
// Method (docs/DESIGN.md "B-spline signal processing on CUDA"):
//  - Direct transform: per axis, the poles of 1 / (B_n(z) + lambda (-z + 2 - z^-1)^r) computed on
//    the host (sv::smoothing_poles). lambda = 0 in float is sv::cuda::prefilter itself (same
//    bits); real poles whose start horizon fits a tile run in the prefilter's tiled kernels
//    (float); double, complex conjugate pairs and poles too close to the unit circle for a tile
//    run in segments of lines (a thread per segment, warmed up over the horizon, the CPU's exact
//    starts at the line ends; complex pairs in complex arithmetic, in scratch copies).
//  - Filters: every term of the result (one for a derivative or the indirect transform, R for the
//    Laplacian, the gradient and its magnitude, R(R+1)/2 for the Hessian) is a tensor product of
//    per-axis FIRs whose taps are the m-th coefficient differences folded into the sampled
//    B-spline of degree n - m (half-sample shifted for odd m). One kernel computes all terms of a
//    result in one pass over the array. 2-D and 3-D arrays with spans up to 5: a block walks a
//    chunk of planes along the outer axis, each plane (with its halo, the boundary extension)
//    copied once into shared memory, filtered along x and y in registers and added into each
//    term's running z sums. Otherwise a block loads a tile with its halo into shared memory and
//    runs the x, y and z FIRs there, sharing the partial sums that terms have in common. Extra
//    device memory: none from coefficients; from samples one padded copy (the coefficients); the
//    segmented direct transform up to four copies (complex pairs) plus one for the transposed x
//    axis.
//  - From samples (input_is_coefficients false) the coefficients are made first (the prefilter
//    of the mode, after padding by interpolation_pad() for Nearest and GridConstant), in a
//    scratch copy; the filters then crop the pad, as the CPU does.
//
// Device pointers are C-order arrays of layout.size() elements of T; src and dst must not overlap
// (the transforms work in place where noted). Work is queued on the legacy default stream, like
// sv::cuda::prefilter; nothing synchronises the host. Bad arguments throw sv::Error naming the
// operation; so do launch failures and out-of-memory.
#pragma once

#include <complex>
#include <cstddef>
#include <vector>

#include "splineview/array.h"
#include "splineview/cuda_memory.h"
#include "splineview/derivative.h"
#include "splineview/smoothing.h"

namespace sv::cuda {

// ---- Device arrays --------------------------------------------------------------------------

// Samples to coefficients, in place (lambda = 0: the interpolating prefilter). opt.threads is
// ignored.
template <class T>
void direct_transform(T* data, const Layout& layout, const SplineTransformOptions& opt);

// Coefficients to the samples of their spline at the grid (per-axis degree), src -> dst.
template <class T>
void indirect_transform(const T* src, T* dst, const Layout& layout,
                        const SplineTransformOptions& opt);

// The partial derivative of multi-index `order` (one entry per axis, 0..degree) at the grid.
template <class T>
void derivative_filter(const T* src, T* dst, const Layout& layout, const std::vector<int>& order,
                       const DerivativeOptions& opt);
// dst[a] = d s / dx_a, R arrays.
template <class T>
void gradient_filter(const T* src, const std::vector<T*>& dst, const Layout& layout,
                     const DerivativeOptions& opt);
template <class T>
void gradient_magnitude_filter(const T* src, T* dst, const Layout& layout,
                               const DerivativeOptions& opt);
// R(R+1)/2 arrays in sv::hessian_index order (degree >= 2).
template <class T>
void hessian_filter(const T* src, const std::vector<T*>& dst, const Layout& layout,
                    const DerivativeOptions& opt);
template <class T>
void laplacian_filter(const T* src, T* dst, const Layout& layout, const DerivativeOptions& opt);

// A conjugate pole pair (z, conj z) of the direct transform runs as one complex (causal,
// anticausal) pass pair keeping Im(.) / Im(z + 1/z) (half the passes of z then conj z) when
// this factor, (2 + |a|) / |Im a| with a = z + 1/z, is at most kPairTwoPassLimit: it bounds how
// much the rounding of the complex pass grows relative to the result (|H_z x| / |result| is
// |w - conj a| <= 2 + |a| on the unit circle w = 2 cos(omega)). Cubic lambda 0.5: 3.07.
constexpr double kPairTwoPassLimit = 6.0;
inline double pair_amplification(std::complex<double> z) {
  const std::complex<double> a = z + 1.0 / z;
  return (2 + std::abs(a)) / std::abs(a.imag());
}

// Whether direct_transform of this T, degree and lambda runs in the prefilter's tiled kernels on
// every axis (else some axis runs one thread per line: slower on x); for benchmarks and reports.
template <class T>
bool direct_transform_tiled(int degree, double lambda);

// ---- Host conveniences (upload, run, download; splinetool --backend cuda) -------------------

template <class T>
void direct_transform(Array<T>& a, const SplineTransformOptions& opt);
template <class T>
void indirect_transform(Array<T>& a, const SplineTransformOptions& opt);
template <class T>
Array<T> derivative_filter(const Array<T>& input, const std::vector<int>& order,
                           const DerivativeOptions& opt);
template <class T>
std::vector<Array<T>> gradient_filter(const Array<T>& input, const DerivativeOptions& opt);
template <class T>
Array<T> gradient_magnitude_filter(const Array<T>& input, const DerivativeOptions& opt);
template <class T>
std::vector<Array<T>> hessian_filter(const Array<T>& input, const DerivativeOptions& opt);
template <class T>
Array<T> laplacian_filter(const Array<T>& input, const DerivativeOptions& opt);

}  // namespace sv::cuda
