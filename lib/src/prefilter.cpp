// CPU B-spline prefilter: per pole a causal and an anticausal first-order recursion along each
// axis in turn (separable), exact for every line length.
//
// Layout: an axis of length n is viewed as (outer, n, inner): element (o, k, i) sits at
// (o * n + k) * inner + i. For axes other than x, `inner` is large and a block of up to
// kBlock contiguous lines is filtered together, walking rows (cache- and SIMD-friendly). For x,
// inner is the channel count, so the channels of one line are filtered together.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "parallel.h"
#include "pole_filter.h"
#include "splineview/bspline.h"
#include "splineview/prefilter.h"
#include "splineview/sampler.h"

namespace sv {
namespace {

constexpr std::size_t kBlock = 64;

// Filters `width` adjacent lines of length n (n >= 2) whose element k is at base[k * stride].
template <class T>
void filter_block(T* base, std::size_t n, std::size_t stride, std::size_t width, const Poles& p,
                  Boundary b, T* acc) {
  const T gain = static_cast<T>(p.gain);
  for (std::size_t k = 0; k < n; ++k) {
    T* row = base + k * stride;
    for (std::size_t i = 0; i < width; ++i) row[i] *= gain;
  }
  // Each pole: the causal and anticausal recursions with exact starts (pole_filter.h, shared
  // with the smoothing splines: the same bits for the same pole).
  for (int q = 0; q < p.count; ++q)
    pole_filter::one_pole<T, T>(base, n, stride, width, p.z[q], b, acc);
}

}  // namespace

Boundary prefilter_boundary(Boundary b) {
  switch (b) {
    case Boundary::Reflect:
    case Boundary::Nearest:
      return Boundary::Reflect;
    case Boundary::Periodic:
      return Boundary::Periodic;
    case Boundary::Mirror:
    case Boundary::Wrap:
    case Boundary::Constant:
    case Boundary::GridConstant:
      return Boundary::Mirror;
  }
  return Boundary::Mirror;
}

template <class T>
void prefilter_axis(Array<T>& a, std::size_t axis, const PrefilterOptions& opt) {
  check_degree(opt.degree, 0, kMaxDegree);
  if (axis >= a.rank()) throw Error("prefilter: axis " + std::to_string(axis) + " out of range");
  const Poles poles = bspline_poles(opt.degree);
  const std::size_t n = a.dim(axis);
  if (poles.count == 0 || n < 2) return;  // identity: degree 0/1, or a constant line
  std::size_t outer = 1, inner = a.channels();
  for (std::size_t d = 0; d < axis; ++d) outer *= a.dim(d);
  for (std::size_t d = axis + 1; d < a.rank(); ++d) inner *= a.dim(d);
  const std::size_t blocks = (inner + kBlock - 1) / kBlock;
  const std::size_t tasks = outer * blocks;
  T* data = a.data();
  const Boundary boundary = prefilter_boundary(opt.boundary);
  const unsigned threads =
      detail::thread_count(opt.threads, tasks * n * std::min(inner, kBlock), std::size_t{1} << 16);
  detail::parallel_for(tasks, threads, [&](std::size_t begin, std::size_t end) {
    std::vector<T> acc(kBlock);
    for (std::size_t t = begin; t < end; ++t) {
      const std::size_t o = t / blocks, blk = t % blocks;
      const std::size_t i0 = blk * kBlock, width = std::min(kBlock, inner - i0);
      filter_block<T>(data + o * n * inner + i0, n, inner, width, poles, boundary, acc.data());
    }
  });
}

template <class T>
void prefilter(Array<T>& a, const PrefilterOptions& opt) {
  check_degree(opt.degree, 0, kMaxDegree);
  for (std::size_t axis = 0; axis < a.rank(); ++axis) prefilter_axis(a, axis, opt);
}

template void prefilter<float>(Array<float>&, const PrefilterOptions&);
template void prefilter<double>(Array<double>&, const PrefilterOptions&);
template void prefilter_axis<float>(Array<float>&, std::size_t, const PrefilterOptions&);
template void prefilter_axis<double>(Array<double>&, std::size_t, const PrefilterOptions&);

}  // namespace sv
