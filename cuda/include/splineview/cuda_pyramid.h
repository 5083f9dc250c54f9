// The B-spline pyramid on the GPU (issue 17): reduce2, reduce / reduce_to_shape (any factor in
// (0, 1]) and expand2 of float or double arrays, with the semantics, options, output shapes,
// axis geometry and error sentences of the CPU functions (splineview/pyramid.h); opt.threads is
// ignored.
//
// Method (docs/DESIGN.md, "The B-spline pyramid", its CUDA paragraph): the CPU builds the plan
// (lib/src/pyramid_lines.h: per filtered axis the fine prefilter's poles, the FIR table of
// folded indices and weights, the poles of beta_{2n+1} with the coarse axis's ends), and the GPU
// runs the CPU's line routines on it (the exact recursive-filter starts, the recursions, the FIR
// rows: __host__ __device__), in double, rounding to T at the end of each axis pass as the CPU
// does, so CUDA and CPU agree to rounding. Per axis pass: the recursive filters run a thread per
// (line, segment) on a double copy of the lines (the x axis, whose lines are contiguous,
// transposed into line-interleaved order through shared memory so that a warp's loads
// coalesce); a line at least four horizons of a pole long is cut into segments, each started a
// horizon early from zero (the truncation is below half an ulp of double, as in the CPU's own
// start sums) or from the line's exact start where that is within reach. The FIRs (reduce's
// decimating FIR of any spacing, the coarse samples, expand2's evaluation) run a thread per
// output sample. Plans with their FIR tables on the device are kept for the last 8 shapes and
// options: the first call of a shape builds it on the host (reduce's non-dyadic table takes a
// quadrature per output sample), later calls only run kernels.
//
// reduce2 and expand2 run by phases by default (docs/DESIGN.md, "expand2 by phases", "reduce2
// by phases"): expand2 in one pass over the fine array; reduce2 as one decimating FIR into a
// double array of the coarse shape (the fine prefilter split into a three-tap FIR per pole and
// its squared pole on the coarse grid), then the squared poles and the Gram poles as the plan's
// pole passes on that array in double, rounded to T once (extra memory: at most three double
// arrays of the coarse shape; a volume's FIR first writes one with the fine planes, twice that,
// for its z taps). The coarse samples (degrees 2-7) run in one pass over the coarse array, a
// volume's in two through a double array of the coarse shape (docs/DESIGN.md, "The coarse
// samples in one pass").
//
// Extra device memory, per axis pass of an input of P values and an output of Q values: at most
// 2 P doubles while the input lines are prefiltered (from samples), then P + Q doubles around
// the FIR (2 Q from coefficients; none for a pass that is an FIR alone: expand2, the coarse
// samples), and one T array of Q values between passes (two for 3-D arrays); plus the kept
// plans' FIR tables (about 15 indices and weights per output sample of reduce, n + 1 of expand).
// The host conveniences add the input and output arrays themselves.
//
// Device pointers are C-order arrays (NumPy axis order, x fastest, channels interleaved, as
// sv::Array and sv::cuda::Layout); src and dst must not overlap. Work is queued on the legacy
// default stream; the device-pointer functions do not synchronise the host. Bad arguments throw
// the CPU's sv::Error before anything runs; launch failures and out-of-memory throw sv::Error
// naming the operation.
#pragma once

#include <cstddef>
#include <vector>

#include "splineview/array.h"
#include "splineview/cuda_memory.h"
#include "splineview/pyramid.h"

namespace sv::cuda {

// ---- Device arrays --------------------------------------------------------------------------

// The layout of reduce2's output (and of expand2's input) for a fine layout: M = ceil(N / 2)
// per axis (N / 2 for periodic), the same channels. Throws reduce2's sv::Error for refused
// options or shapes.
Layout reduce2_layout(const Layout& fine, const PyramidOptions& opt);
// The layout of reduce's output for per-axis factors in (0, 1] (round(N F), as sv::reduce).
Layout reduce_layout(const Layout& fine, const std::vector<double>& factors,
                     const ReduceOptions& opt);

// reduce2 of the fine array `src` (samples, or coefficients with opt.input_is_coefficients):
// writes the coarse coefficients to `coefficients` (reduce2_layout(fine) values) and, when
// opt.samples, the coarse samples to `samples` (as many values; must then be non-null,
// otherwise ignored).
template <class T>
void reduce2(const T* src, const Layout& fine, T* coefficients, T* samples,
             const ReduceOptions& opt);
// reduce_to_shape: the same to an explicit coarse shape (1 <= M <= N per axis, no channels).
template <class T>
void reduce_to_shape(const T* src, const Layout& fine, const std::vector<std::size_t>& shape,
                     T* coefficients, T* samples, const ReduceOptions& opt);
// expand2 of coarse coefficients (layout `coarse`, which must be reduce2_layout of fine_dims)
// to dst (fine_dims x coarse.channels values).
template <class T>
void expand2(const T* coarse, const Layout& coarse_layout,
             const std::vector<std::size_t>& fine_dims, T* dst, const PyramidOptions& opt);

// ---- Host conveniences (upload, run, download; splinetool --backend cuda) -------------------

template <class T>
Reduced<T> reduce2(const Array<T>& a, const ReduceOptions& opt);
template <class T>
Reduced<T> reduce(const Array<T>& a, const std::vector<double>& factors, const ReduceOptions& opt);
template <class T>
Reduced<T> reduce_to_shape(const Array<T>& a, const std::vector<std::size_t>& shape,
                           const ReduceOptions& opt);
template <class T>
Array<T> expand2(const Array<T>& coarse, const std::vector<std::size_t>& fine_dims,
                 const PyramidOptions& opt);

}  // namespace sv::cuda
