// In-place B-spline prefilter (interpolation to coefficients) for 1-D, 2-D and 3-D arrays with
// interleaved channels. Exact for every line length down to N = 1: the causal start value is a
// finite period sum, truncated only where the neglected tail is provably below the working
// precision of T; the anticausal start is the closed form for the boundary mode.
#pragma once

#include "splineview/array.h"

namespace sv {

// The prefilter of each boundary mode equals scipy.ndimage.spline_filter(mode=...) (measured in
// docs/ACCURACY.md "Boundary modes and scipy"): it is the exact interpolation prefilter under the
// sample extension prefilter_boundary(mode), which is
//   Reflect, Nearest                     -> Reflect  (half-sample symmetric)
//   Mirror, Wrap, Constant, GridConstant -> Mirror   (whole-sample symmetric)
//   Periodic                             -> Periodic
// For Wrap and Constant that is the whole story: the sampler evaluates the Mirror spline on
// [0, N-1] (Wrap maps positions there first). For Nearest and GridConstant it is NOT the
// interpolant of the mode's own extension (edge values / cval repeated for ever), exactly as in
// scipy, whose map_coordinates pads the samples before calling spline_filter: use
// sv::interpolate (sampler.h) for the interpolant, which pads by enough samples to be exact.
struct PrefilterOptions {
  int degree = 3;  // 0..7; 0 and 1 leave the data unchanged
  Boundary boundary = Boundary::Reflect;
  unsigned threads = 0;  // 0 = hardware concurrency
};

Boundary prefilter_boundary(Boundary b);

// Turns samples into coefficients so that the spline of `degree` interpolates them.
// The arithmetic is done in T (float or double).
template <class T>
void prefilter(Array<T>& a, const PrefilterOptions& opt = {});

// Filters one axis only (axis in array order: 0 = slowest). Exposed for benchmarks and tests.
template <class T>
void prefilter_axis(Array<T>& a, std::size_t axis, const PrefilterOptions& opt = {});

}  // namespace sv
