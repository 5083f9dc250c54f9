// B-spline basis functions of degree 0..7 (centred, beta_n with support (-(n+1)/2, (n+1)/2)):
// weights and derivative weights for a position, and the poles and gain of the prefilter.
#pragma once

#include <array>
#include <cstddef>

namespace sv {

constexpr int kMaxDegree = 7;

// Value of the centred B-spline beta_n(t), n in 0..7, in double precision.
double bspline(int n, double t);

// The n+1 coefficients c[first .. first+n] that contribute to s(x) = sum_k c[k] beta_n(x - k):
// returns `first` and writes w[j] = d^deriv/dx^deriv beta_n(x - (first + j)), j = 0..n.
// deriv in 0..n. For odd n first = floor(x) - (n-1)/2; for even n first = floor(x+1/2) - n/2.
// Computed with the positive Cox-de Boor recursion (no cancellation).
template <class T>
long bspline_weights(int n, T x, T* w, int deriv = 0);

// Same, for a fractional offset u in [0,1) relative to the first knot: the weights at
// position first + floor(n/2) + u (odd n) or first + n/2 + u - 1/2 (even n).
template <class T>
void bspline_weights_frac(int n, T u, T* w, int deriv = 0);

// Prefilter poles |z| < 1 of degree n (2..7), largest magnitude first; count = floor(n/2).
struct Poles {
  std::array<double, 3> z{};
  int count = 0;
  // Gain prod_i (1 - z_i)(1 - 1/z_i): makes the filter's DC gain 1.
  double gain = 1.0;
};
// Throws sv::Error for n outside 0..7. Degrees 0 and 1 have no poles (the prefilter is the
// identity).
Poles bspline_poles(int n);

// Throws sv::Error with a sentence naming `what` when n is outside [lo, hi].
void check_degree(int n, int lo, int hi, const char* what = "degree");

}  // namespace sv
