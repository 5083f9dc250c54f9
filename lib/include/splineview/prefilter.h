// In-place B-spline prefilter (interpolation to coefficients) for 1-D, 2-D and 3-D arrays with
// interleaved channels. Exact for every line length down to N = 1: the causal start value is a
// finite period sum, truncated only where the neglected tail is provably below the working
// precision of T; the anticausal start is the closed form for the boundary mode.
#pragma once

#include "splineview/array.h"

namespace sv {

struct PrefilterOptions {
  int degree = 3;  // 0..7; 0 and 1 leave the data unchanged
  Boundary boundary = Boundary::Reflect;
  unsigned threads = 0;  // 0 = hardware concurrency
};

// Turns samples into coefficients so that the spline of `degree` interpolates them.
// The arithmetic is done in T (float or double).
template <class T>
void prefilter(Array<T>& a, const PrefilterOptions& opt = {});

// Filters one axis only (axis in array order: 0 = slowest). Exposed for benchmarks and tests.
template <class T>
void prefilter_axis(Array<T>& a, std::size_t axis, const PrefilterOptions& opt = {});

}  // namespace sv
