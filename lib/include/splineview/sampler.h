// The double-precision reference sampler: evaluates s(x) = sum_k c[k] beta_n(x - k) at arbitrary
// real positions, with the coefficients extended beyond [0, N-1] by the boundary mode.
// Positions are in sample units, array axis order: position k is the centre of sample k.
//
// sample() is scipy.ndimage.map_coordinates(c, ..., prefilter=False) for every mode (measured
// against scipy 1.10 in docs/ACCURACY.md "Boundary modes and scipy"):
//   Reflect, Mirror, Periodic  coefficient indices extended like the samples (extend_index); the
//                              prefilter makes the coefficients inherit the samples' symmetry,
//                              so prefilter + sample is exact everywhere, borders included.
//                              Degree 0 (nearest sample, ties rounded up: floor(x + 1/2)) with
//                              Mirror or Reflect first maps positions below 0 or at N and
//                              beyond with scipy's arithmetic, then rounds, so ties go where
//                              scipy sends them: mirror -1/2 -> sample 1, N - 1/2 -> N-2;
//                              reflect -3/2 -> sample 1, N + 1/2 -> N-1.
//   Wrap          each coordinate outside [0, N-1] is first moved by a multiple of N-1 into it,
//                 with scipy's rule: x < 0 -> x + (N-1) (trunc(-x / (N-1)) + 1) (so x = -(N-1)
//                 lands on N-1), x > N-1 -> x - (N-1) trunc(x / (N-1)) (x = 2(N-1) lands on
//                 0); N = 1 -> 0. Then the Mirror spline is evaluated there.
//   Nearest       coefficient indices clamped to [0, N-1] (positions are not clamped).
//   Constant      a position with any coordinate outside [0, N-1] gives cval (0 for a
//                 derivative); inside, coefficient indices extend as Mirror.
//   GridConstant  every coefficient outside [0, N-1] is cval (on any axis).
// interpolate() is map_coordinates(samples, ..., prefilter=True): prefilter + sample, except
// that for Nearest and GridConstant (degree >= 2) the samples are first padded by
// interpolation_pad() samples per side (edge values / cval; scipy pads 12), prefiltered with
// prefilter_boundary() and sampled with the mode, which is the interpolant of the samples
// extended for ever by the mode, to within the working precision.
#pragma once

#include <cstddef>
#include <vector>

#include "splineview/array.h"

namespace sv {

struct SamplerOptions {
  int degree = 3;  // 0 nearest, 1 linear, 2..7 B-spline
  Boundary boundary = Boundary::Reflect;
  int derivative_axis = -1;  // >= 0: evaluate d s / d x_axis instead of s
  unsigned threads = 0;      // 0 = hardware concurrency
  double cval = 0.0;         // the value outside for Constant and GridConstant
};

// Maps an integer index to [0, n-1] according to the boundary mode (Wrap and Constant: as
// Mirror; Nearest: clamped); returns -1 for GridConstant outside [0, n-1] (the value there is
// cval).
long extend_index(long k, long n, Boundary b);

// scipy.ndimage's 'wrap' position mapping, with its arithmetic (see Wrap above): a coordinate
// outside [0, n-1] moved by a multiple of n-1 into it; n = 1 gives 0.
double wrap_position(double x, long n);

// Samples per side that interpolate() pads for `b` at `degree`: 0 unless b is Nearest or
// GridConstant and degree >= 2; then enough that the largest pole's |z|^pad is far below
// double precision (the neglected tail of the coefficients), 33 for degree 3 up to 69 for 7.
std::size_t interpolation_pad(Boundary b, int degree);

// The per-axis part of sample(), shared with the separable resampling (transform.h): the
// `degree + 1` weights w[] (of the derivative when `derivative` is 1) and coefficient indices
// k[] in [0, n-1] for coordinate x on an axis of n coefficients, after the mode's position
// mapping (Wrap; Mirror and Reflect at degree 0). k[j] = -1 where GridConstant puts cval (w[j]
// is kept). Returns false when the mode is Constant and x is outside [0, n-1] (the value at the
// point is cval). The value of a d-D spline is the tensor product of its axes' sums.
bool axis_weights(double x, long n, int degree, Boundary b, int derivative, double* w, long* k);

// Evaluates the spline with coefficients `c` at m positions (positions[i*rank + d]) and writes
// m * channels values (interleaved). Accumulates in double whatever T is.
template <class T>
void sample(const Array<T>& c, const double* positions, std::size_t m, double* out,
            const SamplerOptions& opt = {});

template <class T>
std::vector<double> sample(const Array<T>& c, const std::vector<double>& positions,
                           const SamplerOptions& opt = {});

// Interpolates the samples `f` at m positions: prefilter (in T) and sample, the padding above
// included (scipy.ndimage.map_coordinates with prefilter=True). Degrees 0 and 1 do not prefilter.
template <class T>
void interpolate(const Array<T>& f, const double* positions, std::size_t m, double* out,
                 const SamplerOptions& opt = {});

template <class T>
std::vector<double> interpolate(const Array<T>& f, const std::vector<double>& positions,
                                const SamplerOptions& opt = {});

}  // namespace sv
