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
#include "splineview/bspline.h"
#include "splineview/prefilter.h"
#include "splineview/sampler.h"

namespace sv {
namespace {

constexpr std::size_t kBlock = 64;

// Period of the extended signal for each boundary mode (n >= 2).
std::size_t period(Boundary b, std::size_t n) {
  switch (b) {
    case Boundary::Reflect:
      return 2 * n;
    case Boundary::Mirror:
      return 2 * n - 2;
    default:  // Periodic (filter_block only sees the three prefilter_boundary() modes)
      return n;
  }
}

// Number of terms K of the geometric sum sum_k z^k x_k after which the neglected tail,
// |z|^K / (1 - |z|) * max|x|, is below half an ulp of T relative to max|x|.
template <class T>
std::size_t horizon(double z) {
  const double eps = std::numeric_limits<T>::epsilon() / 2;
  const double a = std::fabs(z);
  return static_cast<std::size_t>(std::ceil(std::log(eps * (1 - a)) / std::log(a))) + 1;
}

// Filters `width` adjacent lines of length n (n >= 2) whose element k is at base[k * stride].
template <class T>
void filter_block(T* base, std::size_t n, std::size_t stride, std::size_t width, const Poles& p,
                  Boundary b, T* acc) {
  const T gain = static_cast<T>(p.gain);
  for (std::size_t k = 0; k < n; ++k) {
    T* row = base + k * stride;
    for (std::size_t i = 0; i < width; ++i) row[i] *= gain;
  }
  const std::size_t per = period(b, n);
  const long ln = static_cast<long>(n);
  for (int q = 0; q < p.count; ++q) {
    const T z = static_cast<T>(p.z[q]);
    const std::size_t h = horizon<T>(p.z[q]);

    // Causal start: c+[0] = sum_{k>=0} z^k f~[-k] over the extended signal, summed over one
    // period and closed with 1 / (1 - z^P) when the period is within the horizon.
    const std::size_t terms = std::min(h, per);
    std::fill(acc, acc + width, T(0));
    T zk = T(1);
    for (std::size_t k = 0; k < terms; ++k) {
      const T* row = base + extend_index(-static_cast<long>(k), ln, b) * stride;
      for (std::size_t i = 0; i < width; ++i) acc[i] += zk * row[i];
      zk *= z;
    }
    if (terms == per) {
      const T scale = T(1) / (T(1) - static_cast<T>(std::pow(p.z[q], static_cast<double>(per))));
      for (std::size_t i = 0; i < width; ++i) acc[i] *= scale;
    }
    std::copy(acc, acc + width, base);

    for (std::size_t k = 1; k < n; ++k) {
      T* row = base + k * stride;
      const T* prev = row - stride;
      for (std::size_t i = 0; i < width; ++i) row[i] += z * prev[i];
    }

    // Anticausal start c-[N-1], closed form from the symmetry of the output.
    T* last = base + (n - 1) * stride;
    if (b == Boundary::Reflect) {
      const T s = z / (z - T(1));
      for (std::size_t i = 0; i < width; ++i) last[i] *= s;
    } else if (b == Boundary::Mirror) {
      const T s = z / (z * z - T(1));
      const T* prev = last - stride;
      for (std::size_t i = 0; i < width; ++i) last[i] = s * (last[i] + z * prev[i]);
    } else {
      // c-[N-1] = -z sum_{j>=0} z^j c+[(N-1+j) mod N]; c+ is N-periodic.
      const std::size_t pterms = std::min(h, n);
      std::fill(acc, acc + width, T(0));
      T zj = T(1);
      for (std::size_t j = 0; j < pterms; ++j) {
        const T* row = base + ((n - 1 + j) % n) * stride;
        for (std::size_t i = 0; i < width; ++i) acc[i] += zj * row[i];
        zj *= z;
      }
      T scale = -z;
      if (pterms == n) scale /= (T(1) - static_cast<T>(std::pow(p.z[q], static_cast<double>(n))));
      for (std::size_t i = 0; i < width; ++i) last[i] = scale * acc[i];
    }

    for (std::size_t k = n - 1; k-- > 0;) {
      T* row = base + k * stride;
      const T* next = row + stride;
      for (std::size_t i = 0; i < width; ++i) row[i] = z * (next[i] - row[i]);
    }
  }
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
