// The direct and indirect B-spline transforms as first-class operations (issue 17): samples to
// coefficients with a smoothing parameter lambda >= 0 (Unser's smoothing splines; lambda = 0 is
// the interpolating prefilter of prefilter.h), and coefficients back to samples at the grid, with
// a degree per axis. The derivation, the poles and the exact boundary starts are in
// docs/DESIGN.md ("Smoothing splines"); in short, per axis, for odd degree n = 2r - 1:
//
//   the smoothing spline s(x) = sum_k c[k] beta_n(x - k) of samples f minimises
//       sum_k (f[k] - s(k))^2 + lambda integral (s^(r)(x))^2 dx
//   over one period of the signal extended by the boundary mode, and
//       c = f filtered by 1 / (B_n(z) + lambda (-z + 2 - z^-1)^r),  B_n(z) = sum_k beta_n(k) z^k
//   whose frequency response is 1 / (B_n(w) + lambda (2 - 2 cos w)^r).
//
// The denominator is a polynomial P of degree r in y = z + 1/z; its r roots give r poles |z| < 1
// (real, or complex conjugate pairs once lambda is large enough), each filtered by a causal and an
// anticausal first-order recursion with the interpolating prefilter's exact starts.
#pragma once

#include <complex>
#include <cstddef>
#include <vector>

#include "splineview/array.h"

namespace sv {

struct SplineTransformOptions {
  // The degree of every axis (0..7), unless `degrees` gives one per axis (array order).
  int degree = 3;
  std::vector<int> degrees;
  // The smoothing parameter of the direct transform (finite, >= 0; 0 = interpolation). With
  // lambda > 0 every axis needs an odd degree 1, 3, 5 or 7 (n = 2r - 1: the penalty is the r-th
  // derivative); even degrees have no smoothing spline of this form and are refused.
  double lambda = 0;
  // As sv::prefilter: the samples are extended by prefilter_boundary(boundary) (Reflect, Mirror
  // or Periodic), and the coefficients by the same mode in the indirect transform.
  Boundary boundary = Boundary::Reflect;
  unsigned threads = 0;  // 0 = hardware concurrency
};

// The poles of 1 / (B_n(z) + lambda (-z + 2 - z^-1)^r) inside the unit circle: r of them for
// lambda > 0, r - 1 for lambda = 0 (then bspline_poles(n) to rounding), largest magnitude first;
// complex poles come in conjugate pairs, the one with Im z > 0 first. The gain
// prod_i (1 - z_i)(1 - 1/z_i) makes the DC gain 1 (B_n(1) = 1 and the penalty vanishes at DC).
// Computed in long double: the roots of P(y) by Laguerre's method with deflation, each polished
// by Newton's method on the undeflated P, then z = 1 / (y/2 + sqrt(y^2/4 - 1)) (the root of
// z + 1/z = y inside the circle). Throws sv::Error for an even or out-of-range degree with
// lambda > 0, and for lambda negative or not finite.
struct SmoothingPoles {
  std::vector<std::complex<double>> z;
  double gain = 1.0;
};
SmoothingPoles smoothing_poles(int degree, double lambda);

// 1 / (B_n(w) + lambda (2 - 2 cos w)^r): the frequency response of the direct transform at w
// (radians per sample). With lambda = 0 any degree 0..7 (r unused).
double smoothing_response(int degree, double lambda, double omega);

// The direct transform in place: samples to the coefficients of the smoothing spline (lambda >
// 0) or of the interpolating spline (lambda = 0: exactly sv::prefilter, same bits). Separable:
// each axis in turn is filtered by its 1-D filter (a tensor product of the 1-D smoothing
// filters, as in the thesis "Scalable GPU B-spline signal processing", not the isotropic
// thin-plate functional). Arithmetic in T (complex<T> for conjugate pole pairs).
template <class T>
void direct_transform(Array<T>& a, const SplineTransformOptions& opt = {});
// One axis only (axis in array order), with that axis's degree.
template <class T>
void direct_transform_axis(Array<T>& a, std::size_t axis, const SplineTransformOptions& opt = {});

// The indirect transform in place: coefficients c to the samples s[j] = sum_k c[k] beta_n(j - k)
// of their spline at the grid, per axis with its degree (0..7), the coefficients extended by
// prefilter_boundary(boundary). indirect_transform(direct_transform(f)) = f to rounding for
// lambda = 0; for lambda > 0 it gives the smoothing spline's samples.
template <class T>
void indirect_transform(Array<T>& a, const SplineTransformOptions& opt = {});

// The degree of `axis` under `opt` (degrees[axis] when given), checked against the array's rank
// when `rank` is not 0.
int transform_degree(const SplineTransformOptions& opt, std::size_t axis, std::size_t rank = 0);

}  // namespace sv
