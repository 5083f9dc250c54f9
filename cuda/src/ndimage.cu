// cuda_ndimage.h: the prefilter along any axis for float and double device arrays, padding, and
// the device selection. The evaluators are in ndimage_sample.cuh.
//
// Per-line prefilter: one thread per line (o, i) of an axis viewed as (outer, n, inner), the
// recursions of lib/src/prefilter.cpp's filter_block for a line of width 1, in T: gain, then per
// pole the causal start summed over the extended signal (closed with 1 / (1 - z^P) when the
// period is within the horizon), the causal sweep, the closed-form (reflect, mirror) or summed
// (periodic) anticausal start and the anticausal sweep. Neighbouring threads take neighbouring
// i, so for every axis but the last the loads of a warp are coalesced; the last axis (inner = 1)
// is strided, as in cupyx. Float arrays filtered on every axis go through the tiled kernels of
// cuda_prefilter.h instead (coalesced on every axis, the project's fast prefilter).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "check.cuh"
#include "ndimage_sample.cuh"
#include "splineview/bspline.h"
#include "splineview/cuda_ndimage.h"
#include "splineview/cuda_prefilter.h"
#include "splineview/prefilter.h"

namespace sv::cuda::nd {
namespace {

using sv::cuda::detail::check;
using sv::cuda::detail::check_launch;

struct Pole {
  double z;
  long long terms;        // causal start: terms of the sum over the extended signal
  double causal_scale;    // 1 / (1 - z^P) in T when terms == P, else 1
  long long pterms;       // periodic anticausal start: terms
  double periodic_scale;  // -z (/ (1 - z^n) when pterms == n), in T
};

struct Poles3 {
  Pole p[3];
  int count;
  double gain;
};

// The exact start of the causal recursion, c+[0] = sum_k z^k g x~[-k] over the extended
// signal (closed with 1 / (1 - z^P) when the period is within the horizon), for the line whose
// sample k is x[k * s].
template <class T>
__device__ __forceinline__ T causal_start(const T* x, long long n, long long s, int mode,
                                          const Pole& P, T g) {
  const T z = static_cast<T>(P.z);
  T acc = T(0), zk = T(1);
  for (long long k = 0; k < P.terms; ++k) {
    acc += zk * (g * x[detail::extend_any(-k, n, mode) * s]);
    zk *= z;
  }
  return acc * static_cast<T>(P.causal_scale);
}

// The exact start of the anticausal recursion, c-[n-1], from the causal output c+ (closed forms
// for reflect and mirror, the period sum for periodic).
template <class T>
__device__ __forceinline__ T anticausal_start(const T* c, long long n, long long s, int mode,
                                              const Pole& P) {
  const T z = static_cast<T>(P.z);
  const T cl = c[(n - 1) * s];
  if (mode == detail::kReflect) return z / (z - T(1)) * cl;
  if (mode == detail::kMirror) return z / (z * z - T(1)) * (cl + z * c[(n - 2) * s]);
  T sum = T(0), zj = T(1);
  for (long long j = 0; j < P.pterms; ++j) {
    sum += zj * c[((n - 1 + j) % n) * s];
    zj *= z;
  }
  return static_cast<T>(P.periodic_scale) * sum;
}

template <class T>
__global__ void filter_lines(T* data, long long outer, long long n, long long inner, int mode,
                             Poles3 poles) {
  const long long line = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (line >= outer * inner) return;
  const long long o = line / inner, i = line % inner;
  T* b = data + o * n * inner + i;
  const long long s = inner;
  // The gain is applied on the fly in the first pole's causal pass (one pass over the line
  // fewer than a separate scaling; the same products as the CPU's scale-then-filter).
  const T gain = static_cast<T>(poles.gain);
  for (int q = 0; q < poles.count; ++q) {
    const Pole P = poles.p[q];
    const T z = static_cast<T>(P.z);
    const T g = q == 0 ? gain : T(1);
    T prev = causal_start(b, n, s, mode, P, g);
    b[0] = prev;
    for (long long k = 1; k < n; ++k) {
      prev = g * b[k * s] + z * prev;
      b[k * s] = prev;
    }
    T next = anticausal_start(b, n, s, mode, P);
    b[(n - 1) * s] = next;
    for (long long k = n - 1; k-- > 0;) {
      next = z * (next - b[k * s]);
      b[k * s] = next;
    }
  }
}

// Segmented recursions for few, long lines (the per-line kernel leaves most of the GPU idle):
// thread (line, segment) runs one pole over its segment, starting `warm` samples early from a
// zero state (|z|^warm is below half an ulp of T, as the CPU prefilter's horizon), except the
// line's first segment (causal) and last segment (anticausal), which take the exact starts.
// Out of place, so warm-ups read values nobody is writing: causal src -> tmp, anticausal
// tmp -> dst.
template <class T>
__global__ void causal_segments(const T* __restrict__ src, T* __restrict__ tmp, long long outer,
                                long long n, long long inner, int mode, Pole P, T g, long long L,
                                long long segs, long long warm) {
  const long long id = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= outer * inner * segs) return;
  // Neighbouring threads take neighbouring lines (coalesced loads on every axis but x).
  const long long lines = outer * inner;
  const long long seg = id / lines, line = id % lines;
  const long long o = line / inner, i = line % inner;
  const T* x = src + o * n * inner + i;
  T* c = tmp + o * n * inner + i;
  const long long s = inner;
  const long long s0 = seg * L, s1 = min(n, s0 + L);
  if (s0 >= s1) return;
  const T z = static_cast<T>(P.z);
  T acc;
  long long k;
  if (s0 - warm <= 0) {  // the exact start at 0 is within reach: take it
    acc = causal_start(x, n, s, mode, P, g);
    if (s0 == 0) c[0] = acc;
    for (k = 1; k < s0; ++k) acc = g * x[k * s] + z * acc;
    if (s0 == 0) k = 1;
  } else {
    acc = T(0);
    for (long long q = s0 - warm; q < s0; ++q) acc = g * x[q * s] + z * acc;
    k = s0;
  }
  for (; k < s1; ++k) {
    acc = g * x[k * s] + z * acc;
    c[k * s] = acc;
  }
}

template <class T>
__global__ void anticausal_segments(const T* __restrict__ tmp, T* __restrict__ dst, long long outer,
                                    long long n, long long inner, int mode, Pole P, long long L,
                                    long long segs, long long warm) {
  const long long id = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= outer * inner * segs) return;
  // Neighbouring threads take neighbouring lines (coalesced loads on every axis but x).
  const long long lines = outer * inner;
  const long long seg = id / lines, line = id % lines;
  const long long o = line / inner, i = line % inner;
  const T* c = tmp + o * n * inner + i;
  T* y = dst + o * n * inner + i;
  const long long s = inner;
  const long long s0 = seg * L, s1 = min(n, s0 + L);
  if (s0 >= s1) return;
  const T z = static_cast<T>(P.z);
  T acc;
  long long k;
  if (s1 - 1 + warm >= n - 1) {  // the exact start at n - 1 is within reach: take it
    acc = anticausal_start(c, n, s, mode, P);
    if (s1 == n) y[(n - 1) * s] = acc;
    for (k = n - 2; k >= s1; --k) acc = z * (acc - c[k * s]);
    if (s1 == n) k = n - 2;
  } else {
    acc = T(0);
    for (long long q = s1 - 1 + warm; q >= s1; --q) acc = z * (acc - c[q * s]);
    k = s1 - 1;
  }
  for (; k >= s0; --k) {
    acc = z * (acc - c[k * s]);
    y[k * s] = acc;
  }
}

template <class T>
long long horizon(double z) {
  const double eps = std::numeric_limits<T>::epsilon() / 2;
  const double a = std::fabs(z);
  return static_cast<long long>(std::ceil(std::log(eps * (1 - a)) / std::log(a))) + 1;
}

template <class T>
Poles3 poles_for(int degree, Boundary b, long long n) {
  const Poles p = bspline_poles(degree);
  Poles3 out{};
  out.count = p.count;
  out.gain = p.gain;
  const long long per = b == Boundary::Reflect ? 2 * n : b == Boundary::Mirror ? 2 * n - 2 : n;
  for (int q = 0; q < p.count; ++q) {
    Pole& P = out.p[q];
    P.z = p.z[q];
    const long long h = horizon<T>(p.z[q]);
    P.terms = std::min(h, per);
    P.causal_scale =
        P.terms == per
            ? static_cast<double>(
                  T(1) / (T(1) - static_cast<T>(std::pow(p.z[q], static_cast<double>(per)))))
            : 1.0;
    P.pterms = std::min(h, n);
    T scale = -static_cast<T>(p.z[q]);
    if (P.pterms == n) scale /= (T(1) - static_cast<T>(std::pow(p.z[q], static_cast<double>(n))));
    P.periodic_scale = static_cast<double>(scale);
  }
  return out;
}

void check_dims(const std::vector<std::size_t>& dims, const char* what) {
  if (dims.empty() || dims.size() > 3)
    throw Error(std::string(what) + ": the array must have 1, 2 or 3 dimensions, not " +
                std::to_string(dims.size()));
  for (std::size_t n : dims)
    if (n == 0) throw Error(std::string(what) + ": the array has an empty axis");
}

// Orders the legacy default stream (where the tiled prefilter runs) after `stream`, or back.
void join(cudaStream_t from, cudaStream_t to, const char* what) {
  if (from == to) return;
  cudaEvent_t e = nullptr;
  check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), what);
  check(cudaEventRecord(e, from), what);
  const cudaError_t err = cudaStreamWaitEvent(to, e, 0);
  cudaEventDestroy(e);
  check(err, what);
}

template <class T>
__global__ void pad_kernel(const T* __restrict__ src, detail::Geometry in, detail::Geometry out,
                           int rank, long long pad, bool edge, double cval, long long total,
                           T* __restrict__ dst) {
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long p = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; p < total;
       p += step) {
    long long rest = p, at = 0;
    bool inside = true;
    for (int d = rank - 1; d >= 0; --d) {
      long long k = rest % out.n[d] - pad;
      rest /= out.n[d];
      if (k < 0 || k >= in.n[d]) {
        inside = false;
        k = k < 0 ? 0 : in.n[d] - 1;
      }
      at += k * in.stride[d];
    }
    dst[p] = (inside || edge) ? src[at] : static_cast<T>(cval);
  }
}

}  // namespace

void use_device(int device) {
  check(cudaSetDevice(device), "CUDA: selecting the array's device");
}

template <class T>
void spline_filter1d(T* data, const std::vector<std::size_t>& dims, std::size_t axis, int degree,
                     Boundary mode, Stream stream) {
  check_dims(dims, "spline_filter1d (CUDA)");
  check_degree(degree, 0, kMaxDegree, "spline order");
  if (axis >= dims.size())
    throw Error("spline_filter1d (CUDA): axis " + std::to_string(axis) + " of a " +
                std::to_string(dims.size()) + "-D array");
  const long long n = static_cast<long long>(dims[axis]);
  if (degree < 2 || n < 2) return;
  if (std::is_same<T, float>::value && n <= (1LL << 30)) {  // the tiled kernels, coalesced
    PrefilterConfig cfg;
    cfg.degree = degree;
    cfg.boundary = prefilter_boundary(mode);
    const cudaStream_t st = reinterpret_cast<cudaStream_t>(stream);
    join(st, cudaStreamLegacy, "spline_filter1d (CUDA): ordering after the caller's stream");
    prefilter_axis(reinterpret_cast<float*>(data), Layout{dims, 1}, axis, cfg);
    join(cudaStreamLegacy, st, "spline_filter1d (CUDA): ordering the caller's stream after");
    return;
  }
  long long outer = 1, inner = 1;
  for (std::size_t d = 0; d < axis; ++d) outer *= static_cast<long long>(dims[d]);
  for (std::size_t d = axis + 1; d < dims.size(); ++d) inner *= static_cast<long long>(dims[d]);
  const Boundary b = prefilter_boundary(mode);
  const Poles3 poles = poles_for<T>(degree, b, n);
  const long long lines = outer * inner;
  // Few long lines: segments in parallel (see causal_segments).
  constexpr long long kWanted = 1LL << 17;  // threads that keep the GPU busy
  if (lines < kWanted / 4) {
    long long warm = 0;
    for (int q = 0; q < poles.count; ++q) warm = std::max(warm, horizon<T>(poles.p[q].z));
    const long long segs = std::min((kWanted + lines - 1) / lines, n / (4 * warm + 1));
    if (segs >= 4) {
      const long long L = (n + segs - 1) / segs;
      const cudaStream_t st = reinterpret_cast<cudaStream_t>(stream);
      void* tmp = nullptr;
      check(cudaMallocAsync(&tmp, static_cast<std::size_t>(lines * n) * sizeof(T), st),
            "spline_filter1d (CUDA): allocating the segment buffer");
      const long long work = lines * segs;
      const unsigned blocks = static_cast<unsigned>((work + 127) / 128);
      for (int q = 0; q < poles.count; ++q) {
        const T g = q == 0 ? static_cast<T>(poles.gain) : T(1);
        causal_segments<T><<<blocks, 128, 0, st>>>(data, static_cast<T*>(tmp), outer, n, inner,
                                                   static_cast<int>(b), poles.p[q], g, L, segs,
                                                   warm);
        check_launch("spline_filter1d (CUDA): launching the causal segments");
        anticausal_segments<T><<<blocks, 128, 0, st>>>(static_cast<const T*>(tmp), data, outer, n,
                                                       inner, static_cast<int>(b), poles.p[q], L,
                                                       segs, warm);
        check_launch("spline_filter1d (CUDA): launching the anticausal segments");
      }
      check(cudaFreeAsync(tmp, st), "spline_filter1d (CUDA): freeing the segment buffer");
      return;
    }
  }
  // Each thread runs a long sequential recursion: with few lines, small blocks spread them
  // over more multiprocessors (2048 lines: 64 SMs instead of 16).
  const int threads = lines < 32768 ? 32 : 128;
  const long long blocks = (lines + threads - 1) / threads;
  if (blocks > (1LL << 31) - 1) throw Error("spline_filter1d (CUDA): too many lines");
  filter_lines<T>
      <<<static_cast<unsigned>(blocks), threads, 0, reinterpret_cast<cudaStream_t>(stream)>>>(
          data, outer, n, inner, static_cast<int>(b), poles);
  check_launch("spline_filter1d (CUDA): launching the line filter");
}

void spline_filter(double* data, const std::vector<std::size_t>& dims, int degree, Boundary mode,
                   Stream stream) {
  check_dims(dims, "spline_filter (CUDA)");
  for (std::size_t axis = 0; axis < dims.size(); ++axis)
    spline_filter1d<double>(data, dims, axis, degree, mode, stream);
}

void spline_filter(float* data, const std::vector<std::size_t>& dims, int degree, Boundary mode,
                   Stream stream) {
  check_dims(dims, "spline_filter (CUDA)");
  check_degree(degree, 0, kMaxDegree, "spline order");
  if (degree < 2) return;
  for (std::size_t n : dims)
    if (n > (std::size_t{1} << 30)) {  // beyond the tiled kernels' index range
      for (std::size_t axis = 0; axis < dims.size(); ++axis)
        spline_filter1d<float>(data, dims, axis, degree, mode, stream);
      return;
    }
  PrefilterConfig cfg;
  cfg.degree = degree;
  cfg.boundary = prefilter_boundary(mode);
  const cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
  join(s, cudaStreamLegacy, "spline_filter (CUDA): ordering after the caller's stream");
  prefilter(data, Layout{dims, 1}, cfg);
  join(cudaStreamLegacy, s, "spline_filter (CUDA): ordering the caller's stream after");
}

template <class T>
void pad(const T* src, const std::vector<std::size_t>& dims, std::size_t pad, bool edge,
         double cval, T* dst, Stream stream) {
  check_dims(dims, "pad (CUDA)");
  std::vector<std::size_t> out_dims(dims);
  long long total = 1;
  for (auto& n : out_dims) {
    n += 2 * pad;
    total *= static_cast<long long>(n);
  }
  const long long blocks = std::min<long long>((total + 255) / 256, 1 << 20);
  pad_kernel<T><<<static_cast<unsigned>(blocks), 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(
      src, detail::geometry_of(dims), detail::geometry_of(out_dims), static_cast<int>(dims.size()),
      static_cast<long long>(pad), edge, cval, total, dst);
  check_launch("pad (CUDA): launching the kernel");
}

template void spline_filter1d<float>(float*, const std::vector<std::size_t>&, std::size_t, int,
                                     Boundary, Stream);
template void spline_filter1d<double>(double*, const std::vector<std::size_t>&, std::size_t, int,
                                      Boundary, Stream);
template void pad<float>(const float*, const std::vector<std::size_t>&, std::size_t, bool, double,
                         float*, Stream);
template void pad<double>(const double*, const std::vector<std::size_t>&, std::size_t, bool, double,
                          double*, Stream);

}  // namespace sv::cuda::nd
