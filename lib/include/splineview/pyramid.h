// The B-spline pyramid: the least-squares approximation of a spline in the spline space of a
// coarser grid (twice the spacing, or any spacing T > 1), and the exact evaluation of the coarse
// spline back on the fine grid. The derivation, the filters and their measured responses are in
// docs/DESIGN.md ("The B-spline pyramid"); in short, per axis:
//
//   fine spline    s(x) = sum_k c[k] beta_n(x - k)      (c = prefilter(samples), or given)
//   coarse space   V_T = { sum_l d[l] beta_n((x - x_l) / T) },  x_l = origin + l T
//   reduce         d = the coefficients of the orthogonal projection of s onto V_T:
//                  T sum_l beta_{2n+1}(j - l) d[l] = sum_k c[k] h_T(x_j - k),
//                  h_T(t) = integral beta_n(y) beta_n((y - t) / T) dy
//                  (a spatially fixed FIR for T = 2, per output sample for other T, then the
//                  inverse of the sampled beta_{2n+1}, a recursive filter with exact starts).
//
// The projection is that of the signal extended for ever by the boundary mode (Reflect, Mirror,
// Periodic). It is a finite, exact problem only where the mode's symmetries map the coarse grid
// onto itself; that decides where coarse samples sit (PyramidGrid) and which grid goes with
// which mode. The other modes are refused.
#pragma once

#include <complex>
#include <cstddef>
#include <vector>

#include "splineview/array.h"

namespace sv {

// Where coarse sample l of an axis sits, in fine sample units (fine sample k at position k),
// for N fine and M coarse samples at spacing T:
//   Cells  x_l = (l + 1/2) T - 1/2: the coarse samples tile the fine ones like pixels and the
//          outer edges -1/2 and N - 1/2 stay in place (scipy.ndimage.zoom's grid_mode=True,
//          sv::zoom, splinetool resample --zoom). With T = 2: x_l = 2l + 1/2, the centre of fine
//          samples 2l and 2l + 1 (the "centered" pyramid).
//   Nodes  x_l = l T: fine sample 0 is coarse sample 0 (scipy.ndimage.zoom's grid_mode=False,
//          where T = (N - 1)/(M - 1) so that the last samples coincide too). With T = 2:
//          x_l = 2l, every other fine sample (the "interpolating" pyramid).
//   ByBoundary  Cells for Reflect and Periodic, Nodes for Mirror.
// Reflect (half-sample symmetric about -1/2 and N - 1/2) maps only the Cells grid onto itself,
// Mirror (whole-sample symmetric about 0 and N - 1) only the Nodes grid; Periodic takes either.
// The other pairs are refused.
// The coarse space is a subspace of the fine one (so expand2 then reduce2 returns the coarse
// coefficients exactly) for odd degrees with Nodes and even degrees with Cells at T = 2; with
// the other pairing reduce2 is still the exact least-squares projection, onto a space that is
// not part of the fine one.
enum class PyramidGrid { ByBoundary, Cells, Nodes };

struct PyramidOptions {
  int degree = 3;                         // 0..7
  Boundary boundary = Boundary::Reflect;  // Reflect, Mirror or Periodic
  PyramidGrid grid = PyramidGrid::ByBoundary;
  unsigned threads = 0;  // 0 = hardware concurrency
};

struct ReduceOptions : PyramidOptions {
  // The input holds the fine B-spline coefficients c (degree `degree`, extended by `boundary`)
  // instead of samples (which are prefiltered first with sv::prefilter's filter).
  bool input_is_coefficients = false;
  // Also return the coarse samples: the coarse spline at the coarse positions x_l (the
  // indirect transform sum_l d[l] beta_n(j - l)).
  bool samples = false;
};

// How one axis of a coarse result sits on the fine axis, and how its coefficients extend beyond
// [0, M-1]: left and right are Reflect (half-sample symmetric), Mirror (whole-sample symmetric)
// or Periodic. They equal the fine axis's mode except in reduce2 at the right end of an odd
// Reflect axis (Mirror there: the fine axis's end N - 1/2 is coarse sample (N-1)/2) and of an
// even Mirror axis (Reflect there: the end N - 1 lies halfway between two coarse samples). Such
// an axis cannot be sampled with one sv::Boundary; expand2 evaluates it exactly.
struct PyramidAxis {
  std::size_t fine = 0;    // N
  std::size_t coarse = 0;  // M
  double origin = 0;       // fine position of coarse sample 0
  double spacing = 1;      // T, in fine samples
  Boundary left = Boundary::Reflect, right = Boundary::Reflect;
};

template <class T>
struct Reduced {
  Array<T> coefficients;  // the coarse B-spline coefficients d
  Array<T> samples;       // the coarse samples (empty unless ReduceOptions::samples)
  std::vector<PyramidAxis> axes;
};

// Halves every axis: the least-squares approximation at spacing T = 2. M = ceil(N/2) per axis
// (Periodic needs even N). Computed per axis with the z-domain filters of the two-scale relation
// (docs/DESIGN.md), in double whatever T is.
template <class T>
Reduced<T> reduce2(const Array<T>& a, const ReduceOptions& opt = {});

// The exact samples at the fine positions 0..N-1 of the coarse spline with coefficients
// `coarse` (as reduce2 returns them for an array of shape fine_dims with the same options): per
// axis s(i) = sum_l d[l] beta_n((i - origin)/2 - l), the coefficients extended as
// reduce2_axis() says. coarse.dims() must be reduce2's output shape for fine_dims.
template <class T>
Array<T> expand2(const Array<T>& coarse, const std::vector<std::size_t>& fine_dims,
                 const PyramidOptions& opt = {});

// Anti-aliased downscaling by any factor 0 < F <= 1 per axis: the least-squares approximation
// of the fine spline in the spline space of spacing T. The output shape is M = round(N F)
// (halves to even, as scipy.ndimage.zoom and sv::zoom), M >= 1, and, as in scipy.ndimage.zoom,
// the spacing comes from the shapes: T = N / M for Cells and Periodic Nodes, T = (N - 1)/(M - 1)
// for Mirror Nodes (M = 1: the mean, at position 0). F = 1 (or M = N) leaves an axis as it is
// (only prefiltered when the input holds samples). For F = 1/2 with even N (Cells) or with
// M = (N + 1)/2 and Mirror Nodes this is reduce2 to rounding.
template <class T>
Reduced<T> reduce(const Array<T>& a, const std::vector<double>& factors,
                  const ReduceOptions& opt = {});
// The same to an explicit output shape (1 <= M <= N per axis).
template <class T>
Reduced<T> reduce_to_shape(const Array<T>& a, const std::vector<std::size_t>& shape,
                           const ReduceOptions& opt = {});

// The axis geometry of reduce2 and reduce_to_shape, without computing anything; they throw
// sv::Error for the refused inputs as the functions above do.
PyramidAxis reduce2_axis(std::size_t n, const PyramidOptions& opt);
PyramidAxis reduce_axis(std::size_t n, std::size_t m, const PyramidOptions& opt);

// The frequency response of reduce (the filter before decimation) on the infinite line, with
// everything from the fine samples to the coarse output: for fine input f[k] = exp(i w k)
// (w in radians per fine sample), coarse output l is exp(i w x_l) * A(w, frac(x_l)), where
//   A(w, p) = sum_m  eta_m(w) R(w + 2 pi m) exp(2 pi i m p),
//   eta_m(w) = beta^_n(w + 2 pi m) / B_n(w)   (the fine interpolating spline; without the
//              division when the input holds coefficients),
//   R(v)     = beta^_n(T v) [B_n(T v)] / B_{2n+1}(T v)   (the bracket when the output is samples),
// beta^_n(v) = (sin(v/2) / (v/2))^(n+1), B_d(v) = sum_k beta_d(k) cos(k v). For integer T and
// positions at integers (Nodes) or half-integers (Cells, T even) p is the same for every l, so A
// is the exact gain and phase of the whole operator; the coarse Nyquist frequency is pi / T.
// The terms fall like |m|^-(2n+2); the sum runs over |m| <= 2000 (degree 1: 20000, degree 0:
// 100000), which leaves out less than 1e-13 (degree 0: about 1e-6).
std::complex<double> reduce_response(int degree, double spacing, double omega, double offset = 0,
                                     bool input_is_coefficients = false,
                                     bool output_samples = true);

// The value of the centred B-spline of any degree d >= 0 (the library's bspline() stops at 7;
// the pyramid needs beta_{2n+1} up to degree 15), by the positive recursion
// beta_d(x) = ((d+1)/2 + x) beta_{d-1}(x + 1/2) + ((d+1)/2 - x) beta_{d-1}(x - 1/2)) / d.
double bspline_any(int d, double x);

// The poles |z| < 1 of the sampled B-spline of odd degree d (1..15), largest magnitude first
// (computed as the roots of sum_m beta_d(m) z^m in the variable z + 1/z, in long double);
// bspline_poles() holds the same for d <= 7.
std::vector<double> odd_bspline_poles(int d);

}  // namespace sv
