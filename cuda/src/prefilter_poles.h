// The tiled prefilter pass of cuda/src/prefilter.cu with poles given by the caller (the smoothing
// splines' direct transform, cuda/src/bspline_ops.cu): real poles only, at most three per pass.
#pragma once

#include <cstddef>

#include "splineview/bspline.h"
#include "splineview/cuda_memory.h"

namespace sv::cuda::detail {

// Samples of apron a tiled pass with these poles needs on each side of a chunk (the sum of the
// poles' horizons to a sixteenth of float's epsilon). A tile holds at most 384 samples of window
// for chunked lines, so callers keep this well below 192.
int prefilter_apron(const Poles& poles);

// One axis, src -> dst (equal: in place), boundary Reflect, Mirror or Periodic: the prefilter's
// tiled pass with `poles` (real, |z| < 1, count 0..3) and their gain applied at the store.
void prefilter_axis_poles(const float* src, float* dst, const Layout& layout, std::size_t axis,
                          Boundary boundary, const Poles& poles);

}  // namespace sv::cuda::detail
