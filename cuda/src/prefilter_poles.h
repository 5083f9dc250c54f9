// The tiled prefilter pass of cuda/src/prefilter.cu with poles given by the caller (the smoothing
// splines' direct transform, cuda/src/bspline_ops.cu): at most three sections per pass, each a
// real pole (a first-order causal and anticausal recursion) or a conjugate pair (one
// second-order causal and anticausal recursion).
#pragma once

#include <array>
#include <complex>
#include <cstddef>

#include "splineview/bspline.h"
#include "splineview/cuda_memory.h"
#include "splineview/cuda_prefilter.h"

namespace sv::cuda::detail {

// Samples of apron a tiled pass with these poles needs on each side of a chunk (the sum of the
// poles' horizons to a sixteenth of float's epsilon). A tile holds at most 384 samples of window
// for chunked lines, so callers keep this well below 192.
int prefilter_apron(const Poles& poles);

// A pass's sections: z[q] real (imag 0) is a real pole, run as c <- x + z c and c <- z (c - x)
// like the interpolating prefilter; z[q] with imag != 0 stands for the pair (z, conj z), run as
// y <- x + a1 y[-1] + a2 y[-2] both ways, a1 = 2 Re z, a2 = -|z|^2, which is the product of the
// pair's two first-order passes divided by |z|^2: callers fold |z|^2 into `gain`.
struct Sections {
  std::array<std::complex<double>, 3> z{};
  int count = 0;
  double gain = 1.0;
};
// The apron of `s` (a pair's warm-up: the tail of its second-order impulse response, to the
// same sixteenth of float's epsilon).
int prefilter_apron(const Sections& s);
// Both axes of a one-channel 2-D array in one pass (the same sections on each), in place; false
// (nothing done) where the one-pass kernel does not apply or SV_ONE_PASS_2D=0.
bool prefilter_2d_sections(float* data, const Layout& layout, Boundary boundary, const Sections& s);
void prefilter_axis_sections(const float* src, float* dst, const Layout& layout, std::size_t axis,
                             Boundary boundary, const Sections& s);

// One axis, src -> dst (equal: in place), boundary Reflect, Mirror or Periodic: the prefilter's
// tiled pass with `poles` (real, |z| < 1, count 0..3) and their gain applied at the store.
void prefilter_axis_poles(const float* src, float* dst, const Layout& layout, std::size_t axis,
                          Boundary boundary, const Poles& poles);

// All three axes of a one-channel 3-D array in one pass over device memory (experimental; with
// SV_ONE_PASS_3D=1 prefilter() takes it where it applies): the fused y/x pass's persistent grid
// with z items that run the causal recursion batch by batch and the anticausal of the batch
// before from a warm-up in the next. Applies to one real pole (degrees 2 and 3), reflect or
// mirror, the fused pass's layouts and at least 16 planes; false (nothing done) elsewhere.
bool prefilter_one_pass_3d(float* data, const Layout& layout, const PrefilterConfig& cfg);

}  // namespace sv::cuda::detail
