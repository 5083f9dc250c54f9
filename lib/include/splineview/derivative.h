// Derivatives of B-splines of any order (issue 17): partial derivatives of any multi-index (an
// order per axis, 0..degree), the gradient and the Hessian, pointwise at arbitrary positions and
// as whole-array filters computed in the coefficient domain, 1-3 D, float or double storage
// (arithmetic in double), every boundary mode of the sampler.
//
// The filters follow "Scalable GPU acceleration of b-spline signal processing operations"
// (Karantza): d/dx beta_n(x) = beta_{n-1}(x + 1/2) - beta_{n-1}(x - 1/2), so the order-m
// derivative of s(x) = sum_k c[k] beta_n(x - k) is the spline of degree n - m
//   s^(m)(x) = sum_k (D^m c)[k] beta_{n-m}(x - k - m/2),  (D c)[k] = c[k+1] - c[k],
// whose knots are shifted by half a sample for odd m. Per axis a filter takes m forward
// differences of the coefficients, then the indirect transform of degree n - m evaluated at the
// sample positions j (the sampled beta_{n-m}(j - m/2 - k), a half-sample shifted kernel for odd
// m); the result is the derivative of the interpolating spline at the grid points, the value the
// pointwise functions give there to rounding. docs/DESIGN.md "Derivatives and the coefficient
// domain" has the derivation, the boundary handling and the one convention: where a derivative of
// order n (odd n) jumps, at the knots = grid points, both take the right-hand limit (beta_0 is
// 1 on [-1/2, 1/2), as sv::bspline_weights).
#pragma once

#include <cstddef>
#include <vector>

#include "splineview/array.h"

namespace sv {

struct DerivativeOptions {
  int degree = 3;  // 0..7; every order must be <= degree
  Boundary boundary = Boundary::Reflect;
  double cval = 0.0;     // the value outside for Constant and GridConstant
  unsigned threads = 0;  // 0 = hardware concurrency
  // The input holds B-spline coefficients (scipy's prefilter=False) instead of samples. With
  // samples the spline is sv::interpolate's: the prefilter of the mode, after padding by
  // interpolation_pad() for Nearest and GridConstant.
  bool input_is_coefficients = false;
};

// Throws sv::Error naming `what` unless `order` has one entry per axis of a `rank`-D array, each
// in 0..degree (and degree in 0..7).
void check_derivative_order(const std::vector<int>& order, std::size_t rank, int degree,
                            const char* what = "derivative");

// The index of Hessian component (i, j) in the R(R+1)/2 components that hessian_filter returns:
// the upper triangle row by row, (0,0) (0,1) (0,2) (1,1) (1,2) (2,2) in 3-D, (0,0) (0,1) (1,1)
// in 2-D. Symmetric: (i, j) and (j, i) give the same index.
std::size_t hessian_index(std::size_t i, std::size_t j, std::size_t rank);

// ---- Pointwise ------------------------------------------------------------------------------
// The spline of `input` (samples, prefiltered once here, or coefficients) evaluated with its
// derivatives at arbitrary positions (positions[p * rank + d], sample units, array order). The
// modes map positions as sv::sample does (Wrap first wraps the position, Constant gives cval for
// the value and 0 for every derivative outside [0, N-1] on any axis, GridConstant extends the
// coefficients by cval). Accumulates in double whatever T is. Thread-safe (const).
template <class T>
class SplineDerivatives {
 public:
  SplineDerivatives(Array<T> input, const DerivativeOptions& opt);

  std::size_t rank() const { return coefficients_.rank(); }
  std::size_t channels() const { return coefficients_.channels(); }
  int degree() const { return opt_.degree; }
  const Array<T>& coefficients() const { return coefficients_; }
  std::size_t pad() const { return pad_; }  // samples added per side (Nearest, GridConstant)

  // d^|order| s / dx_0^order[0] ... at m positions: out[p * channels + ch].
  void partial(const std::vector<int>& order, const double* positions, std::size_t m,
               double* out) const;
  // The gradient: out[(p * rank + a) * channels + ch] = d s / dx_a.
  void gradient(const double* positions, std::size_t m, double* out) const;
  // The Hessian, full and symmetric: out[((p * rank + a) * rank + b) * channels + ch].
  void hessian(const double* positions, std::size_t m, double* out) const;
  // Several multi-indices at once (each checked): out[(p * orders.size() + q) * channels + ch].
  void partials(const std::vector<std::vector<int>>& orders, const double* positions, std::size_t m,
                double* out) const;

 private:
  Array<T> coefficients_;
  DerivativeOptions opt_;
  std::size_t pad_ = 0;
};

// One multi-index at m positions (a SplineDerivatives built for the call).
template <class T>
std::vector<double> partial_derivative(const Array<T>& input, const std::vector<int>& order,
                                       const std::vector<double>& positions,
                                       const DerivativeOptions& opt = {});

// ---- Whole-array filters (the coefficient domain) ---------------------------------------------
// Each returns arrays of the input's shape and channels (every channel filtered on its own): the
// derivative of the spline at the grid points 0..N-1 of every axis. Every boundary mode; at the
// grid points Wrap and Constant are the Mirror spline (sv::sample's definitions place no grid
// point outside [0, N-1]), Nearest and GridConstant are computed on the padded coefficients and
// cropped. Arithmetic in double per line; intermediate passes are stored in T.

// The partial derivative of multi-index `order` (one entry per axis, each 0..degree).
template <class T>
Array<T> derivative_filter(const Array<T>& input, const std::vector<int>& order,
                           const DerivativeOptions& opt = {});

// The R first derivatives, component a = d s / dx_a.
template <class T>
std::vector<Array<T>> gradient_filter(const Array<T>& input, const DerivativeOptions& opt = {});

// sqrt(sum_a (d s / dx_a)^2) per channel.
template <class T>
Array<T> gradient_magnitude_filter(const Array<T>& input, const DerivativeOptions& opt = {});

// The R(R+1)/2 distinct second derivatives, in hessian_index order (degree >= 2).
template <class T>
std::vector<Array<T>> hessian_filter(const Array<T>& input, const DerivativeOptions& opt = {});

// sum_a d^2 s / dx_a^2 (degree >= 2).
template <class T>
Array<T> laplacian_filter(const Array<T>& input, const DerivativeOptions& opt = {});

}  // namespace sv
