// cuda_pyramid.h: the B-spline pyramid on the GPU, running the CPU's plan (the per-axis passes
// of lib/src/pyramid_lines.h) with the CPU's line routines.
//
// Kernels:
//  - tile_kernel (the default): a whole pass in one kernel, pyramid_detail::run_tile
//    (lib/src/pyramid_lines.h): a block loads a tile of W lanes (whole lines, or a segment of
//    long lines reaching the poles' horizons beyond what it writes) into shared memory in double,
//    runs the prefilter, the FIR and the Gram filter there (C threads a lane: chunks from zero,
//    their carries combined by a scan; the CPU's exact starts at the lines' ends) and writes the
//    output once in T. tile_plan picks W, C and the segments by a rough cost model; a periodic
//    line too long for a block (its exact starts need the whole line) keeps the kernels below.
//    SV_PYRAMID_FUSED=0 runs the kernels below everywhere (measured slower: docs/BENCHMARKS.md).
//  - to_lanes / from_lanes: an axis's lines between the array's order (outer, n, inner) and a
//    double buffer of lanes. Where inner <= 4 (the x axis: its lines are contiguous) the buffer
//    is line-interleaved, element k of lane l at k * L + l (L lanes), through 32 x 32 shared
//    tiles; elsewhere it keeps the array's order (stride inner, adjacent lanes adjacent).
//  - causal_kernel / anticausal_kernel: one pole's recursions, a thread per (segment, lane), out
//    of place (A -> B -> A). The CPU's exact starts (causal_start, anticausal_start) where a
//    segment holds the line's end; elsewhere the segment's recursion starts `horizon` samples
//    early from zero (|z|^horizon / (1 - |z|) is below half an ulp of double: the truncation the
//    CPU's own start sums make). Lines shorter than four horizons are one segment, which is the
//    CPU's recursion exactly. The pole set's gain is applied while the first causal pass reads.
//  - fir_kernel: fir_lines for one output per thread, from lanes or from the array (T) to lanes
//    or to the array; consecutive threads take consecutive outputs of the destination's order,
//    so loads and stores coalesce in both.
//  - expand_phases_kernel / expand_phases3_kernel: expand2 by phases, one pass over the fine
//    array (docs/DESIGN.md, "expand2 by phases").
//  - reduce_phases_kernel / reduce_z_kernel: reduce2 by phases, one decimating FIR into a double
//    array of the coarse shape, whose pole passes (the squared prefilter poles and the Gram
//    poles) then run in tile_kernel (docs/DESIGN.md, "reduce2 by phases").
//  - samples_kernel / samples_z_kernel: the coarse samples from the coarse coefficients, the
//    last two axes in one pass and a volume's z in a second (docs/DESIGN.md, "The coarse
//    samples in one pass").
// Every pass rounds its result to T, as run_axis does on the CPU. Plans (the host's
// reduce_plan / sample_plan / expand_plan with their FIR tables uploaded) are kept for the last
// few shapes and options, so repeated calls (a pyramid's levels in a loop, benchmarks) do not
// rebuild them: the non-dyadic FIR's table takes a quadrature per output sample.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "../../lib/src/pyramid_lines.h"
#include "check.cuh"
#include "device_copy.cuh"
#include "splineview/cuda_pyramid.h"
#include "splineview/error.h"

namespace sv::cuda {
namespace {

using detail::check;
using detail::check_launch;
using pyramid_detail::Ends;
using pyramid_detail::LinePole;
using pyramid_detail::PoleLine;
using pyramid_detail::PyramidPass;

// ---- Scratch memory from the stream-ordered pool ---------------------------------------------

// The pool returns its memory to the system at every synchronisation by default, so that each
// call would map its scratch arrays again (for the 15257 x 3736 image's 114 MB intermediate, a
// large part of the call); keep up to 1 GiB in the pool instead, as the prefilter does.
void keep_pool_memory() {
  static const bool done = [] {
    int dev = 0;
    cudaMemPool_t pool = nullptr;
    if (cudaGetDevice(&dev) == cudaSuccess &&
        cudaDeviceGetDefaultMemPool(&pool, dev) == cudaSuccess) {
      std::uint64_t keep = std::uint64_t{1} << 30;
      std::uint64_t now = 0;
      cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &now);
      if (now < keep) cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
    }
    cudaGetLastError();
    return true;
  }();
  (void)done;
}

template <class T>
class Scratch {
 public:
  Scratch() = default;
  Scratch(std::size_t count, const char* what) { allocate(count, what); }
  ~Scratch() { release(); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void allocate(std::size_t count, const char* what) {
    release();
    bytes_ = count * sizeof(T);
    if (!bytes_) return;
    void* p = nullptr;
    check(cudaMallocAsync(&p, bytes_, 0), what);
    ptr_ = static_cast<T*>(p);
    detail::note_alloc(bytes_);
  }
  void upload(const std::vector<T>& host, const char* what) {
    allocate(host.size(), what);
    if (bytes_) check(cudaMemcpyAsync(ptr_, host.data(), bytes_, cudaMemcpyHostToDevice, 0), what);
  }
  T* get() const { return ptr_; }

 private:
  void release() {
    if (ptr_) {
      cudaFreeAsync(ptr_, 0);
      detail::note_free(bytes_);
    }
    ptr_ = nullptr;
    bytes_ = 0;
  }
  T* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// ---- One axis of an array as lines ------------------------------------------------------------

// Lines of length n along an axis of an array viewed as (outer, n, inner); lane l = o inner + i.
struct Lines {
  long long outer, n, inner;
  bool interleaved;  // lanes buffer: element k of lane l at k * L + l, else (o n + k) inner + i
  __host__ __device__ long long lanes() const { return outer * inner; }
  // The first element of lane l and the distance between its elements, in a lanes buffer.
  __host__ __device__ long long base(long long l) const {
    return interleaved ? l : (l / inner) * n * inner + l % inner;
  }
  __host__ __device__ long long stride() const { return interleaved ? outer * inner : inner; }
};

constexpr int kTile = 32;
constexpr int kInterleaveMaxInner = 4;

// Array (outer, n, inner) of In -> interleaved double lanes, or the reverse (kToLanes false),
// a 32 (o) x 32 (k) tile per block, one channel after another.
template <class From, class To, bool kToLanes>
__global__ void interleave_kernel(const From* __restrict__ src, To* __restrict__ dst,
                                  long long outer, long long n, long long inner) {
  __shared__ double tile[kTile][kTile + 1];
  const long long o0 = static_cast<long long>(blockIdx.x) * kTile;
  const long long k0 = static_cast<long long>(blockIdx.y) * kTile;
  const long long L = outer * inner;
  for (long long i = 0; i < inner; ++i) {
    // Load: the array side walks k with threadIdx.x (kToLanes), the lanes side walks o.
    for (int r = threadIdx.y; r < kTile; r += blockDim.y) {
      if (kToLanes) {
        const long long o = o0 + r, k = k0 + threadIdx.x;
        if (o < outer && k < n)
          tile[r][threadIdx.x] = static_cast<double>(src[(o * n + k) * inner + i]);
      } else {
        const long long k = k0 + r, o = o0 + threadIdx.x;
        if (o < outer && k < n)
          tile[threadIdx.x][r] = static_cast<double>(src[k * L + o * inner + i]);
      }
    }
    __syncthreads();
    for (int r = threadIdx.y; r < kTile; r += blockDim.y) {
      if (kToLanes) {
        const long long k = k0 + r, o = o0 + threadIdx.x;
        if (o < outer && k < n) dst[k * L + o * inner + i] = static_cast<To>(tile[threadIdx.x][r]);
      } else {
        const long long o = o0 + r, k = k0 + threadIdx.x;
        if (o < outer && k < n)
          dst[(o * n + k) * inner + i] = static_cast<To>(tile[r][threadIdx.x]);
      }
    }
    __syncthreads();
  }
}

template <class From, class To>
__global__ void convert_kernel(const From* __restrict__ src, To* __restrict__ dst,
                               long long count) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < count) dst[t] = static_cast<To>(src[t]);
}

unsigned blocks_for(long long count, int threads, const char* what) {
  const long long b = (count + threads - 1) / threads;
  if (b > 0x7fffffffLL) throw Error(std::string(what) + ": array too large");
  return static_cast<unsigned>(std::max(1LL, b));
}

// The array's lines (outer, n, inner) of From into the lanes buffer of To (or back).
template <bool kToLanes, class From, class To>
void move_lanes(const From* src, To* dst, const Lines& v, const char* what) {
  if (v.interleaved) {
    const long long bo = (v.outer + kTile - 1) / kTile, bk = (v.n + kTile - 1) / kTile;
    if (bo > 0x7fffffffLL || bk > 65535) throw Error(std::string(what) + ": array too large");
    interleave_kernel<From, To, kToLanes>
        <<<dim3(static_cast<unsigned>(bo), static_cast<unsigned>(bk)), dim3(kTile, 8)>>>(
            src, dst, v.outer, v.n, v.inner);
  } else {
    const long long count = v.outer * v.n * v.inner;
    convert_kernel<From, To><<<blocks_for(count, 256, what), 256>>>(src, dst, count);
  }
  check_launch(what);
}
template <class From, class To>
void to_lanes(const From* src, To* dst, const Lines& v, const char* what) {
  move_lanes<true>(src, dst, v, what);
}
template <class From, class To>
void from_lanes(const From* src, To* dst, const Lines& v, const char* what) {
  move_lanes<false>(src, dst, v, what);
}

// ---- The line routines, a lane or an output per thread ----------------------------------------

// Segments of the lanes of one axis for one pole: `segs` segments of `len` samples per line.
struct SegPlan {
  long long segs, len, warm;
};

constexpr int kAhead = 8;  // loads a thread issues before their arithmetic

// #pragma unroll for the device pass only (the host compiler does not know it).
#if defined(__CUDA_ARCH__)
#define SV_UNROLL _Pragma("unroll")
#else
#define SV_UNROLL
#endif

// c+ = the causal recursion of src * scale (scale: the pole set's gain on the first pole, else
// 1), src -> dst.
// a * b rounded, never fused into an FMA (the CPU rounds the product on its own).
__host__ __device__ inline double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

// Thread t of causal_kernel (a function of its own so that the host can run it too).
__host__ __device__ inline void causal_segment(const double* __restrict__ src,
                                               double* __restrict__ dst, const Lines& v,
                                               const LinePole& P, Ends e, double scale,
                                               const SegPlan& g, long long t) {
  const long long L = v.lanes();
  if (t >= L * g.segs) return;
  const long long l = t % L, s = t / L, n = v.n;
  const long long a = s * g.len, b = a + g.len < n ? a + g.len : n;
  if (a >= b) return;
  const std::size_t st = static_cast<std::size_t>(v.stride());
  const double* x = src + v.base(l);
  double* y = dst + v.base(l);
  const double z = P.z;
  double prev;
  long long k;
  if (s == 0) {
    double acc;
    pyramid_detail::causal_start(x, y, static_cast<long>(n), 1, st, P, e, scale, &acc);
    prev = y[0];
    k = 1;
  } else if (a <= g.warm) {  // the line's start within reach: from its exact start
    double acc;
    pyramid_detail::causal_start(x, &prev, static_cast<long>(n), 1, st, P, e, scale, &acc);
    for (long long i = 1; i < a; ++i)
      prev = mul_rn(x[static_cast<std::size_t>(i) * st], scale) + z * prev;
    k = a;
  } else {
    prev = 0;
    for (long long i = a - g.warm; i < a; ++i)
      prev = mul_rn(x[static_cast<std::size_t>(i) * st], scale) + z * prev;
    k = a;
  }
  for (; k + kAhead <= b; k += kAhead) {
    double r[kAhead];
    SV_UNROLL
    for (int u = 0; u < kAhead; ++u) r[u] = mul_rn(x[static_cast<std::size_t>(k + u) * st], scale);
    SV_UNROLL
    for (int u = 0; u < kAhead; ++u) {
      r[u] += z * prev;
      prev = r[u];
      y[static_cast<std::size_t>(k + u) * st] = r[u];
    }
  }
  for (; k < b; ++k) {
    double r = mul_rn(x[static_cast<std::size_t>(k) * st], scale);
    r += z * prev;
    prev = r;
    y[static_cast<std::size_t>(k) * st] = r;
  }
}

__global__ void causal_kernel(const double* __restrict__ src, double* __restrict__ dst, Lines v,
                              LinePole P, Ends e, double scale, SegPlan g) {
  causal_segment(src, dst, v, P, e, scale, g,
                 static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x);
}

// c- = the anticausal recursion of c+ (src) -> dst; thread t of anticausal_kernel.
__host__ __device__ inline void anticausal_segment(const double* __restrict__ src,
                                                   double* __restrict__ dst, const Lines& v,
                                                   const LinePole& P, Ends e, const SegPlan& g,
                                                   long long t) {
  const long long L = v.lanes();
  if (t >= L * g.segs) return;
  const long long l = t % L, s = t / L, n = v.n;
  const long long a = s * g.len, b = a + g.len < n ? a + g.len : n;
  if (a >= b) return;
  const std::size_t st = static_cast<std::size_t>(v.stride());
  const double* x = src + v.base(l);
  double* y = dst + v.base(l);
  const double z = P.z;
  double next;
  long long k;
  if (b == n) {
    double acc;
    pyramid_detail::anticausal_start(x, y + static_cast<std::size_t>(n - 1) * st,
                                     static_cast<long>(n), 1, st, P, e, &acc);
    next = y[static_cast<std::size_t>(n - 1) * st];
    k = n - 2;
  } else if (b - 1 + g.warm >= n - 1) {  // the line's end within reach: from its exact start
    double acc;
    pyramid_detail::anticausal_start(x, &next, static_cast<long>(n), 1, st, P, e, &acc);
    for (long long i = n - 2; i >= b; --i) next = z * (next - x[static_cast<std::size_t>(i) * st]);
    k = b - 1;
  } else {
    next = 0;
    for (long long i = b - 1 + g.warm; i >= b; --i)
      next = z * (next - x[static_cast<std::size_t>(i) * st]);
    k = b - 1;
  }
  for (; k - kAhead + 1 >= a; k -= kAhead) {
    double r[kAhead];
    SV_UNROLL
    for (int u = 0; u < kAhead; ++u) r[u] = x[static_cast<std::size_t>(k - u) * st];
    SV_UNROLL
    for (int u = 0; u < kAhead; ++u) {
      r[u] = z * (next - r[u]);
      next = r[u];
      y[static_cast<std::size_t>(k - u) * st] = r[u];
    }
  }
  for (; k >= a; --k) {
    const double r = z * (next - x[static_cast<std::size_t>(k) * st]);
    next = r;
    y[static_cast<std::size_t>(k) * st] = r;
  }
}

struct DeviceTaps {
  const std::size_t* row;
  const long* index;
  const double* weight;
};

// Output j of every lane: dst (m outputs per line, in `out`'s order: the array's when
// out_array, else the lanes order) from src (n inputs per line, `in`'s order likewise).
template <class In, class Out>
__global__ void fir_kernel(const In* __restrict__ src, Lines in, bool in_array,
                           Out* __restrict__ dst, Lines out, bool out_array, DeviceTaps taps) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long L = out.lanes();
  if (t >= L * out.n) return;
  long long j, l;
  if (out_array || !out.interleaved) {  // t = (o m + j) inner + i
    const long long i = t % out.inner, r = t / out.inner;
    j = r % out.n;
    l = (r / out.n) * out.inner + i;
  } else {  // t = j L + l
    j = t / L;
    l = t % L;
  }
  long long base, stride;
  if (in_array || !in.interleaved) {
    base = (l / in.inner) * in.n * in.inner + l % in.inner;
    stride = in.inner;
  } else {
    base = l;
    stride = L;
  }
  double r = 0;
  pyramid_detail::fir_lines(src + base, static_cast<std::size_t>(stride), &r, 1, taps.row,
                            taps.index, taps.weight, static_cast<std::size_t>(j));
  dst[t] = static_cast<Out>(r);
}

template <class In, class Out>
void fir(const In* src, const Lines& in, bool in_array, Out* dst, const Lines& out, bool out_array,
         const DeviceTaps& taps, const char* what) {
  const long long count = out.lanes() * out.n;
  fir_kernel<In, Out>
      <<<blocks_for(count, 256, what), 256>>>(src, in, in_array, dst, out, out_array, taps);
  check_launch(what);
}

__global__ void anticausal_kernel(const double* __restrict__ src, double* __restrict__ dst, Lines v,
                                  LinePole P, Ends e, SegPlan g) {
  anticausal_segment(src, dst, v, P, e, g,
                     static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x);
}

// The segments of one pole: enough for about 2^17 threads, each at least four horizons long.
// SV_PYRAMID_ONE_SEGMENT=1 keeps every line whole (a thread per line; for measurements).
SegPlan seg_plan(long long lanes, long long n, const LinePole& P) {
  constexpr long long kWanted = 1LL << 17;
  static const bool whole = [] {
    const char* e = std::getenv("SV_PYRAMID_ONE_SEGMENT");
    return e && *e && *e != '0';
  }();
  const long long warm = std::max<long long>(1, P.horizon);
  long long segs =
      whole ? 1 : std::max(1LL, std::min((kWanted + lanes - 1) / lanes, n / (4 * warm)));
  const long long len = (n + segs - 1) / segs;
  segs = (n + len - 1) / len;
  return {segs, len, warm};
}

// filter_poles on the lanes of `a` (result in `a`; `b` is scratch of the same size).
void poles(double* a, double* b, const Lines& v, const PoleLine& p, const char* what) {
  if (p.n == 1 || p.count == 0) return;  // as filter_poles: not even the gain
  const long long L = v.lanes();
  for (int q = 0; q < p.count; ++q) {
    const LinePole& P = p.p[q];
    const SegPlan g = seg_plan(L, v.n, P);
    const unsigned blocks = blocks_for(L * g.segs, 128, what);
    causal_kernel<<<blocks, 128>>>(a, b, v, P, p.ends, q == 0 ? p.gain : 1.0, g);
    anticausal_kernel<<<blocks, 128>>>(b, a, v, P, p.ends, g);
    check_launch(what);
  }
}

// ---- Plans on the device ---------------------------------------------------------------------

// Device memory that lives as long as a cached plan (cudaMalloc; freed without checking, since
// the cache may outlive the CUDA runtime at exit).
template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(const std::vector<T>& host, const char* what) {
    if (host.empty()) return;
    check(cudaMalloc(&p_, host.size() * sizeof(T)), what);
    const cudaError_t e =
        cudaMemcpy(p_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
    if (e != cudaSuccess) {
      cudaFree(p_);
      p_ = nullptr;
      check(e, what);
    }
  }
  ~DeviceArray() {
    if (p_) cudaFree(p_);
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& o) noexcept { std::swap(p_, o.p_); }
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  const T* get() const { return static_cast<const T*>(p_); }

 private:
  void* p_ = nullptr;
};

// One pass with its FIR table on the device and its pole filters' starts for its line lengths.
struct DevicePass {
  std::size_t axis = 0, in_length = 0, out_length = 0;
  // The fewest lanes of a tile on a strided axis where such a tiling fits (tile_plan's
  // min_lanes; SV_PYRAMID_MIN_LANES overrides it).
  int min_lanes = 1;
  bool has_pre = false, has_taps = false, has_post = false;
  PoleLine pre, post;
  DeviceArray<std::size_t> row;
  DeviceArray<long> index;
  DeviceArray<double> weight;
  DeviceTaps taps() const { return {row.get(), index.get(), weight.get()}; }
  PyramidPass host;  // for tile_plan (the FIR rows' reach)
  // The fused kernel's tiles, by (lanes, inner, budget, threads); declined: none fits.
  struct Tiles {
    long long lanes, inner;
    std::size_t budget;
    int threads, min_lanes, min_lanes_fast;
    bool ok;
    pyramid_detail::TileArgs args;
    std::size_t segs;
    DeviceArray<pyramid_detail::TileSeg> dsegs;
  };
  mutable std::mutex tiles_mutex;
  mutable std::list<Tiles> tiles;
  const Tiles& tiles_for(long long lanes, long long inner, std::size_t budget, int threads,
                         int min_lanes, int min_lanes_fast, const char* what) const {
    std::lock_guard<std::mutex> lock(tiles_mutex);
    for (const Tiles& t : tiles)
      if (t.lanes == lanes && t.inner == inner && t.budget == budget && t.threads == threads &&
          t.min_lanes == min_lanes && t.min_lanes_fast == min_lanes_fast)
        return t;
    pyramid_detail::TilePlan plan;
    const bool ok = pyramid_detail::tile_plan(host, pre, post, lanes, inner, budget, threads, plan,
                                              min_lanes, min_lanes_fast);
    tiles.push_back(Tiles{lanes,
                          inner,
                          budget,
                          threads,
                          min_lanes,
                          min_lanes_fast,
                          ok,
                          plan.args,
                          plan.segs.size(),
                          {}});
    if (ok) tiles.back().dsegs = DeviceArray<pyramid_detail::TileSeg>(plan.segs, what);
    return tiles.back();
  }
};

struct DevicePlan {
  std::vector<std::unique_ptr<DevicePass>> passes;
  // reduce2 by phases: each axis's decimating FIR (the passes are then its coarse pole passes).
  std::vector<pyramid_detail::ReducePhases> phases;
};

std::shared_ptr<DevicePlan> upload_plan(const std::vector<PyramidPass>& plan, const char* what,
                                        int min_lanes = 1) {
  auto out = std::make_shared<DevicePlan>();
  for (const PyramidPass& p : plan) {
    auto d = std::make_unique<DevicePass>();
    d->min_lanes = min_lanes;
    d->axis = p.axis;
    d->in_length = p.in_length;
    d->out_length = p.out_length();
    d->has_pre = p.has_pre;
    d->has_taps = p.has_taps;
    d->has_post = p.has_post;
    if (p.has_pre)
      d->pre = pyramid_detail::pole_line(p.pre, static_cast<long>(p.in_length), p.pre_ends);
    if (p.has_post)
      d->post = pyramid_detail::pole_line(p.post, static_cast<long>(p.out_length()), p.post_ends);
    d->host = p;
    if (p.has_taps) {
      d->row = DeviceArray<std::size_t>(p.taps.row, what);
      d->index = DeviceArray<long>(p.taps.index, what);
      d->weight = DeviceArray<double>(p.taps.weight, what);
    }
    out->passes.push_back(std::move(d));
  }
  return out;
}

// The last few plans, by a key naming the operation, shapes and options.
std::mutex plan_mutex;
std::list<std::pair<std::string, std::shared_ptr<const DevicePlan>>> plan_cache;
constexpr std::size_t kPlansKept = 8;

std::shared_ptr<const DevicePlan> find_plan(const std::string& key) {
  std::lock_guard<std::mutex> lock(plan_mutex);
  for (auto it = plan_cache.begin(); it != plan_cache.end(); ++it)
    if (it->first == key) {
      plan_cache.splice(plan_cache.begin(), plan_cache, it);
      return plan_cache.front().second;
    }
  return nullptr;
}

std::shared_ptr<const DevicePlan> keep_plan(const std::string& key,
                                            std::shared_ptr<const DevicePlan> plan) {
  std::lock_guard<std::mutex> lock(plan_mutex);
  plan_cache.emplace_front(key, plan);
  if (plan_cache.size() > kPlansKept) plan_cache.pop_back();
  return plan;
}

// The device check (require: cuda_devices, whose cudaGetDeviceProperties takes about a
// millisecond) runs only where the plan is made: a kept plan was made on a device.
std::shared_ptr<const DevicePlan> cached_plan(const std::string& key,
                                              const std::function<std::vector<PyramidPass>()>& make,
                                              const char* what) {
  if (auto p = find_plan(key)) return p;
  require(what);
  return keep_plan(key, upload_plan(make(), what));
}

std::string plan_key(const char* op, const std::vector<std::size_t>& a,
                     const std::vector<std::size_t>& b, const PyramidOptions& o, bool coef) {
  std::string k = op;
  for (std::size_t d : a) k += " " + std::to_string(d);
  k += " |";
  for (std::size_t d : b) k += " " + std::to_string(d);
  k += " | " + std::to_string(o.degree) + " " + std::to_string(static_cast<int>(o.boundary)) + " " +
       std::to_string(static_cast<int>(o.grid)) + (coef ? " c" : " s");
  return k;
}

// ---- One pass, a plan ------------------------------------------------------------------------

// ---- The fused pass kernel ---------------------------------------------------------------------

struct DeviceExec {
  int w, c, t, threads, W, C;
  // The scan's layout, once per thread (carries ran two emulated integer divisions per call,
  // some 6% of reduce by 0.71's instructions): S = the chunks of a lane in a warp, cw = c % S.
  int S, cw;
  template <class F>
  __device__ void each(F f) {
    f(w, c);
    __syncthreads();
  }
  template <class F>
  __device__ void local(F f) {
    f(w, c);
  }
  template <class F>
  __device__ void flat(F f) {
    f(t, threads);
    __syncthreads();
  }
  __device__ void sync() { __syncthreads(); }
  // pyramid_detail::tile_carries_serial's result, R[t] = the carry of this thread's chunk, from
  // K[t] (which this thread wrote): the S = 32 / W chunks of a lane that share a warp (thread t =
  // c W + w, W a power of two up to 32) combine by shuffles in log2(S) steps, each warp's total
  // goes to tot (a half per direction), and after one barrier each thread combines the totals of
  // the warps before it (after it, backward; at most 16). One barrier instead of one per doubling
  // step.
  __device__ void carries(const double* K, double* R, double* tot, double zL, bool forward) {
    const int warp = t / 32, warps = (threads + 31) / 32;
    const unsigned mask = threads >= 32 ? 0xffffffffu : (1u << threads) - 1u;
    double v = K[t], zs = zL;
    for (int s = 1; s < S; s <<= 1) {
      const double o = forward ? __shfl_up_sync(mask, v, s * W) : __shfl_down_sync(mask, v, s * W);
      if (forward ? cw >= s : cw + s < S) v += zs * o;
      zs *= zs;
    }
    // v: this chunk's value with the carries of the warp's chunks before (after) it; zs = zL^S.
    double y = 0;  // the true value at the last (first) chunk of the warp before (after)
    if (warps > 1) {
      // Each direction its own totals: a thread may reach the next scan while another still
      // reads these.
      if (!forward) tot += W * warps;
      if (forward ? cw == S - 1 : cw == 0) tot[warp * W + w] = v;
      __syncthreads();
      if (forward) {
        for (int q = 0; q < warp; ++q) y = tot[q * W + w] + zs * y;
      } else {
        for (int q = warps - 1; q > warp; --q) y = tot[q * W + w] + zs * y;
      }
    }
    const double n = forward ? __shfl_up_sync(mask, v, W) : __shfl_down_sync(mask, v, W);
    const int d = forward ? cw : S - 1 - cw;  // chunks between this one and the warp's edge
    double p = 1, b = zL;                     // zL^d by squaring (d < 32)
    for (int e = d; e > 0; e >>= 1) {
      if (e & 1) p *= b;
      b *= b;
    }
    R[t] = (d > 0 ? n : 0.0) + p * y;
  }
};

// A tile (blockIdx.x: W lanes, blockIdx.y: a segment of the lines) through the whole pass
// (pyramid_detail::run_tile: loads, prefilter, FIR, Gram filter, stores) in shared memory.
// LSC: the lanes' stride in the buffer, known when compiling (1, 3, 5, 9, 17, 33: tiles of 1,
// 2, 4, 8, 16 or 32 lanes; the host emulation runs the same code with it given at run time).
template <class T, int LSC, class Out = T>
__global__ void __launch_bounds__(512, 2)
    tile_kernel(const T* __restrict__ src, Out* __restrict__ dst, pyramid_detail::TileArgs a,
                const pyramid_detail::TileSeg* segs) {
  extern __shared__ double sm[];
  constexpr int kW = LSC == 1 ? 1 : LSC - 1;  // the tile's lanes (a.W), known when compiling
  const int t = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);
  const int S = threads < 32 ? a.C : 32 / kW;
  DeviceExec ex{t % kW, t / kW, t, threads, kW, a.C, S, (t / kW) % S};
  const pyramid_detail::TileSeg s = segs[blockIdx.y];
  pyramid_detail::run_tile<T, LSC>(ex, sm, a, s, src, dst,
                                   static_cast<long long>(blockIdx.x) * a.W);
}

template <class T, int LSC, class Out = T>
void launch_tiles(dim3 grid, unsigned block, std::size_t bytes, const T* src, Out* dst,
                  const pyramid_detail::TileArgs& a, const pyramid_detail::TileSeg* segs) {
  static std::once_flag once;  // one per instantiation
  std::call_once(once, [] {
    cudaFuncSetAttribute(tile_kernel<T, LSC, Out>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         220 * 1024);
    cudaGetLastError();
  });
  tile_kernel<T, LSC, Out><<<grid, block, bytes>>>(src, dst, a, segs);
}

// The fused kernel's settings: SV_PYRAMID_FUSED=0 runs the separate kernels below instead (for
// measurements); SV_PYRAMID_TILE_KB and SV_PYRAMID_THREADS bound the shared memory and the threads
// of a block that tile_plan may choose (defaults 200 KB and 512, the kernel's launch bound; for
// measurements and tests), SV_PYRAMID_MIN_LANES the fewest lanes of a tile on a strided axis
// where some tiling with that many fits (default 1: the model's choice), SV_PYRAMID_MIN_LANES_FAST
// the same on the fastest axis (its lines contiguous). Read on every call.
long env_long(const char* name, long fallback) {
  const char* e = std::getenv(name);
  if (!e || !*e) return fallback;
  char* end = nullptr;
  const long v = std::strtol(e, &end, 10);
  return end && *end == 0 ? v : fallback;
}

// Runs the pass with the fused kernel; false where it does not apply (switched off, or no tiling
// fits: a periodic line too long for a block's shared memory).
template <class T, class Out = T>
bool run_fused(const T* src, Out* dst, long long outer, long long inner, const DevicePass& pass,
               const char* what) {
  if (env_long("SV_PYRAMID_FUSED", 1) == 0) return false;
  const long kb = std::max(4L, std::min(220L, env_long("SV_PYRAMID_TILE_KB", 200)));
  const int threads =
      static_cast<int>(std::max(32L, std::min(512L, env_long("SV_PYRAMID_THREADS", 512))));
  const std::size_t budget = static_cast<std::size_t>(kb) * 1024 / sizeof(double);
  const int min_lanes = static_cast<int>(
      std::max(1L, std::min(32L, env_long("SV_PYRAMID_MIN_LANES", pass.min_lanes))));
  const int min_lanes_fast =
      static_cast<int>(std::max(1L, std::min(32L, env_long("SV_PYRAMID_MIN_LANES_FAST", 1))));
  const auto& t =
      pass.tiles_for(outer * inner, inner, budget, threads, min_lanes, min_lanes_fast, what);
  if (!t.ok) return false;
  pyramid_detail::TileArgs a = t.args;
  const DeviceTaps taps = pass.taps();
  a.row = taps.row;
  a.index = taps.index;
  a.weight = taps.weight;
  const long long bx = (a.lanes + a.W - 1) / a.W;
  if (bx > 0x7fffffffLL || t.segs > 65535) return false;
  const std::size_t bytes = a.shared_doubles() * sizeof(double);
  const dim3 grid(static_cast<unsigned>(bx), static_cast<unsigned>(t.segs));
  const unsigned block = static_cast<unsigned>(a.W * a.C);
  const bool launched = pyramid_detail::with_tile_stride(a.LS, [&](auto stride) {
    launch_tiles<T, decltype(stride)::value, Out>(grid, block, bytes, src, dst, a, t.dsegs.get());
  });
  if (!launched)
    throw Error(std::string(what) + ": internal error: tile width " + std::to_string(a.W));
  check_launch(what);
  return true;
}

// An axis of an array (dims, channels) as lines (outer, dims[axis], inner).
void lines_of(const std::vector<std::size_t>& dims, std::size_t channels, std::size_t axis,
              long long& outer, long long& inner) {
  outer = 1;
  inner = static_cast<long long>(channels);
  for (std::size_t d = 0; d < axis; ++d) outer *= static_cast<long long>(dims[d]);
  for (std::size_t d = axis + 1; d < dims.size(); ++d) inner *= static_cast<long long>(dims[d]);
}

// Runs `pass` on src (dims, channels) into dst (dims with the pass's axis at its output length).
// Double scratch: the lanes before the FIR and a pole filter's second buffer (2 P values), then
// the lanes after it (Q values, the first buffer reused as the second).
template <class T>
void run_pass(const T* src, T* dst, const std::vector<std::size_t>& dims, std::size_t channels,
              const DevicePass& pass, const char* what) {
  const std::size_t axis = pass.axis;
  long long outer, inner;
  lines_of(dims, channels, axis, outer, inner);
  const long long n = static_cast<long long>(dims[axis]);
  const long long m = static_cast<long long>(pass.out_length);
  const bool inter = inner <= kInterleaveMaxInner;
  const Lines vin{outer, n, inner, inter}, vout{outer, m, inner, inter};
  if (run_fused<T>(src, dst, outer, inner, pass, what)) return;
  const DeviceTaps taps = pass.taps();
  const std::size_t pn = static_cast<std::size_t>(outer * n * inner);
  const std::size_t pm = static_cast<std::size_t>(outer * m * inner);
  Scratch<double> w, r;
  if (pass.has_pre) {
    w.allocate(pn, what);
    to_lanes<T, double>(src, w.get(), vin, what);
    {
      Scratch<double> b(pass.pre.n > 1 && pass.pre.count > 0 ? pn : 0, what);
      poles(w.get(), b.get(), vin, pass.pre, what);
    }
    if (!pass.has_taps) {
      from_lanes<double, T>(w.get(), dst, vin, what);
      return;
    }
  }
  if (!pass.has_post) {  // the FIR straight into the array
    if (pass.has_pre)
      fir<double, T>(w.get(), vin, false, dst, vout, true, taps, what);
    else
      fir<T, T>(src, vin, true, dst, vout, true, taps, what);
    return;
  }
  r.allocate(pm, what);
  if (pass.has_pre)
    fir<double, double>(w.get(), vin, false, r.get(), vout, false, taps, what);
  else
    fir<T, double>(src, vin, true, r.get(), vout, false, taps, what);
  if (!pass.has_pre) w.allocate(pass.post.n > 1 && pass.post.count > 0 ? pm : 0, what);
  poles(r.get(), w.get(), vout, pass.post, what);
  from_lanes<double, T>(r.get(), dst, vout, what);
}

std::size_t count_of(const std::vector<std::size_t>& dims, std::size_t channels) {
  std::size_t c = channels;
  for (std::size_t d : dims) c *= d;
  return c;
}

// Runs the passes from src (dims, channels) into dst, through at most two T arrays between
// passes; an empty plan copies. With Out other than T (reduce2 by phases: double to float) the
// last pass rounds to Out as it stores (the tile kernel with an Out output), or, where that
// kernel declines, runs in T and is converted.
template <class T, class Out = T>
void run_plan(const T* src, Out* dst, std::vector<std::size_t> dims, std::size_t channels,
              const DevicePlan& plan, const char* what) {
  constexpr bool same = std::is_same<T, Out>::value;
  auto convert = [&](const T* from) {
    const long long count = static_cast<long long>(count_of(dims, channels));
    convert_kernel<T, Out><<<blocks_for(count, 256, what), 256>>>(from, dst, count);
    check_launch(what);
  };
  if (plan.passes.empty()) {
    if constexpr (same)
      check(cudaMemcpyAsync(dst, src, count_of(dims, channels) * sizeof(T),
                            cudaMemcpyDeviceToDevice, 0),
            what);
    else
      convert(src);
    return;
  }
  keep_pool_memory();
  Scratch<T> tmp[2];
  const T* cur = src;
  for (std::size_t p = 0; p < plan.passes.size(); ++p) {
    const DevicePass& pass = *plan.passes[p];
    std::vector<std::size_t> next = dims;
    next[pass.axis] = pass.out_length;
    const bool last = p + 1 == plan.passes.size();
    if constexpr (same) {
      if (last) {
        run_pass<T>(cur, dst, dims, channels, pass, what);
        return;
      }
    } else if (last) {
      long long outer, inner;
      lines_of(dims, channels, pass.axis, outer, inner);
      if (run_fused<T, Out>(cur, dst, outer, inner, pass, what)) return;
    }
    tmp[p % 2].allocate(count_of(next, channels), what);
    run_pass<T>(cur, tmp[p % 2].get(), dims, channels, pass, what);
    cur = tmp[p % 2].get();
    dims = std::move(next);
  }
  convert(cur);  // Out != T, the last pass declined by the tile kernel
}

// ---- expand2 by phases: the last two axes in one pass ------------------------------------------

// A block's tile of fine outputs: 64 columns by 32 rows (256 threads: each column of the tile is
// a thread's for every row, so the x weights and the y phase stay in its registers).
constexpr int kPhaseTX = 64, kPhaseTY = 32;
// Coarse columns and rows a tile reads: half its outputs, plus the phases' offsets (0 or 1)
// and the taps (at most kMaxDegree + 1).
constexpr int kPhaseCoarseX = kPhaseTX / 2 + 1 + kMaxDegree;
static_assert(kPhaseCoarseX <= 64, "the phase kernels load two columns a lane");
constexpr int kPhaseRows = kPhaseTY;  // >= kPhaseTY / 2 + 1 + kMaxDegree; the identity axis's rows

// pyramid_detail::ExpandPhases on the device, with the tile's coarse span.
struct PhaseAxis {
  int M = 1, N = 1;  // coarse and fine lengths
  int lo = 0;        // min(first[0], first[1])
  int width = 1;     // coarse samples a tile reads: tile / 2 + |first[1] - first[0]| + taps - 1
  int first[2] = {0, 0};
  double w[2][kMaxDegree + 1] = {};
  Ends ends;
};

PhaseAxis phase_axis(const pyramid_detail::ExpandPhases& e, int tile) {
  PhaseAxis a;
  a.M = static_cast<int>(e.coarse);
  a.N = static_cast<int>(e.fine);
  a.first[0] = static_cast<int>(e.first[0]);
  a.first[1] = static_cast<int>(e.first[1]);
  a.lo = std::min(a.first[0], a.first[1]);
  a.width = tile / 2 + std::abs(a.first[1] - a.first[0]) + e.taps - 1;
  for (int p = 0; p < 2; ++p)
    for (int k = 0; k < e.taps; ++k) a.w[p][k] = e.w[p][k];
  a.ends = e.ends;
  return a;
}

struct PhaseArgs {
  PhaseAxis x, y;  // the last axis; the one before (up_y), else rows that stay as they are
  bool up_y = true;
  int channels = 1;
  long long rows = 1;  // output rows of a plane (y.N, or the identity's rows)
};

// Fine (plane, y, x, c) from coarse (plane, y, x, c) (up_y; else y stays), blockIdx.z = plane *
// channels + c: the tile's coarse samples, extended by fold, into shared memory in double; the
// x sums of every coarse row; then each output's y sum, rounded to T once.
template <class T, int K>
__global__ void __launch_bounds__(256)
    expand_phases_kernel(const T* __restrict__ src, T* __restrict__ dst, const PhaseArgs a) {
  __shared__ double tile[kPhaseRows][kPhaseCoarseX + 1];
  __shared__ double xs[kPhaseRows][kPhaseTX];
  const int tid = static_cast<int>(threadIdx.x);
  const int x0 = static_cast<int>(blockIdx.x) * kPhaseTX;
  const long long y0 = static_cast<long long>(blockIdx.y) * kPhaseTY;
  const long long C = a.channels;
  const long long c = blockIdx.z % C, plane = blockIdx.z / C;
  const long long rows_in = a.up_y ? a.y.M : a.rows;
  const T* in = src + plane * rows_in * a.x.M * C + c;
  T* out = dst + plane * a.rows * a.x.N * C + c;
  const long qx0 = x0 / 2 + a.x.lo;
  const long qy0 = a.up_y ? static_cast<long>(y0 / 2) + a.y.lo : static_cast<long>(y0);
  const int WX = a.x.width;
  const int WY =
      a.up_y ? a.y.width : static_cast<int>(min(static_cast<long long>(kPhaseTY), a.rows - y0));
  {
    // A warp a row (rows warp, warp + 8, ...), a lane columns lane and lane + 32: the folds of a
    // thread's two columns once, of a row once for the warp.
    const int lane = tid & 31, warp = tid >> 5;
    const long long ox0 = pyramid_detail::fold(qx0 + lane, a.x.M, a.x.ends) * C;
    const bool two = lane + 32 < WX;
    const long long ox1 = two ? pyramid_detail::fold(qx0 + lane + 32, a.x.M, a.x.ends) * C : 0;
    for (int r = warp; r < WY; r += 8) {
      const long ly = a.up_y ? pyramid_detail::fold(qy0 + r, a.y.M, a.y.ends) : qy0 + r;
      const T* row = in + ly * a.x.M * C;
      tile[r][lane] = static_cast<double>(row[ox0]);
      if (two) tile[r][lane + 32] = static_cast<double>(row[ox1]);
    }
  }
  __syncthreads();
  const int xf = tid & (kPhaseTX - 1);
  {
    const int p = xf & 1;  // x0 is even
    double w[K];
#pragma unroll
    for (int k = 0; k < K; ++k) w[k] = a.x.w[p][k];
    const int base = (xf >> 1) + a.x.first[p] - a.x.lo;
    for (int r = tid / kPhaseTX; r < WY; r += 256 / kPhaseTX) {
      double s = 0;
#pragma unroll
      for (int k = 0; k < K; ++k) s = fma(w[k], tile[r][base + k], s);
      xs[r][xf] = s;
    }
  }
  __syncthreads();
  const long long x = x0 + xf;
  if (x >= a.x.N) return;
  const int yb = tid / kPhaseTX;  // 0..3: the rows yb, yb + 4, ... (one y phase)
  if (!a.up_y) {
    for (int r = yb; r < WY; r += 256 / kPhaseTX)
      out[((y0 + r) * a.x.N + x) * C] = static_cast<T>(xs[r][xf]);
    return;
  }
  const int p = yb & 1;  // y0 is even
  double w[K];
#pragma unroll
  for (int k = 0; k < K; ++k) w[k] = a.y.w[p][k];
  for (int yf = yb; yf < kPhaseTY; yf += 256 / kPhaseTX) {
    const long long y = y0 + yf;
    if (y >= a.y.N) break;
    const int base = (yf >> 1) + a.y.first[p] - a.y.lo;
    double s = 0;
#pragma unroll
    for (int k = 0; k < K; ++k) s = fma(w[k], xs[base + k][xf], s);
    out[(y * a.x.N + x) * C] = static_cast<T>(s);
  }
}

template <class T>
void launch_phases(const T* src, T* dst, const PhaseArgs& a, long long planes, int taps,
                   const char* what) {
  const dim3 grid(static_cast<unsigned>((a.x.N + kPhaseTX - 1) / kPhaseTX),
                  static_cast<unsigned>((a.rows + kPhaseTY - 1) / kPhaseTY),
                  static_cast<unsigned>(planes * a.channels));
  switch (taps) {
#define SV_PHASES_CASE(K)                                   \
  case K:                                                   \
    expand_phases_kernel<T, K><<<grid, 256>>>(src, dst, a); \
    break;
    SV_PHASES_CASE(1)
    SV_PHASES_CASE(2)
    SV_PHASES_CASE(3)
    SV_PHASES_CASE(4)
    SV_PHASES_CASE(5)
    SV_PHASES_CASE(6)
    SV_PHASES_CASE(7)
    SV_PHASES_CASE(8)
#undef SV_PHASES_CASE
    default:
      throw Error(std::string(what) + ": no phase kernel for " + std::to_string(taps) + " taps");
  }
  check_launch(what);
}

// ---- expand2 by phases: a volume in one pass ----------------------------------------------------

// A block's tile of fine outputs in a plane (64 x 16) and its chunk of fine planes (cz, even).
constexpr int kPhase3TY = 16;
constexpr int kPhase3Rows = kPhase3TY / 2 + 1 + kMaxDegree;  // coarse rows a tile reads, at most
static_assert(kPhase3Rows <= 16, "the volume kernel loads two rows a warp");

struct Phase3Args {
  PhaseAxis x, y, z;
  int channels = 1;
  int cz = 16;
};

// Shared doubles of the volume kernel: the coarse tile, the x sums of its rows and a ring of K
// planes of the tile's x-y sums.
constexpr std::size_t phase3_shared_doubles(int K) {
  return static_cast<std::size_t>(kPhase3Rows) * (kPhaseCoarseX + 1) +
         static_cast<std::size_t>(kPhase3Rows) * kPhaseTX +
         static_cast<std::size_t>(K) * kPhase3TY * kPhaseTX;
}

// Fine (z, y, x, c) from coarse (z, y, x, c), blockIdx.z = chunk * channels + c: the block walks
// the coarse planes its chunk of fine planes needs; each plane's tile (extended by fold on all
// three axes) gets its x sums and y sums as in the plane kernel, into slot l mod K of a ring;
// after coarse plane l, the fine planes whose last z tap is l (one of each phase at most) are
// the z sums over the ring, rounded to T once.
template <class T, int K>
__global__ void __launch_bounds__(256)
    expand_phases3_kernel(const T* __restrict__ src, T* __restrict__ dst, const Phase3Args a) {
  extern __shared__ double sm[];
  auto tile = reinterpret_cast<double(*)[kPhaseCoarseX + 1]>(sm);
  auto xs = reinterpret_cast<double(*)[kPhaseTX]>(sm + kPhase3Rows * (kPhaseCoarseX + 1));
  auto ring = reinterpret_cast<double(*)[kPhase3TY][kPhaseTX]>(
      sm + kPhase3Rows * (kPhaseCoarseX + 1) + kPhase3Rows * kPhaseTX);
  const int tid = static_cast<int>(threadIdx.x);
  const int x0 = static_cast<int>(blockIdx.x) * kPhaseTX;
  const int y0 = static_cast<int>(blockIdx.y) * kPhase3TY;
  const long long C = a.channels;
  const long long c = blockIdx.z % C, chunk = blockIdx.z / C;
  const long long z0 = chunk * a.cz, z1 = min(z0 + a.cz, static_cast<long long>(a.z.N));
  const long long Mx = a.x.M, My = a.y.M, Nx = a.x.N, Ny = a.y.N;
  const long qx0 = x0 / 2 + a.x.lo, qy0 = y0 / 2 + a.y.lo;
  const int WX = a.x.width, WY = a.y.width;
  const long lbeg = static_cast<long>(z0 / 2) + a.z.lo;
  const long lend = static_cast<long>((z1 - 1) / 2) + max(a.z.first[0], a.z.first[1]) + K - 1;
  const int xf = tid & (kPhaseTX - 1), yb = tid / kPhaseTX;  // yb: rows yb, yb + 4, ...
  double wx[K], wy[K];
  const int px = xf & 1, py = yb & 1;  // x0, y0 even
#pragma unroll
  for (int k = 0; k < K; ++k) {
    wx[k] = a.x.w[px][k];
    wy[k] = a.y.w[py][k];
  }
  const int bx = (xf >> 1) + a.x.first[px] - a.x.lo;
  // The loads: a warp a row (rows warp and warp + 8), a lane columns lane and lane + 32, their
  // folded offsets in a plane found once.
  const int lane = tid & 31, warp = tid >> 5;
  const long long ox0 = pyramid_detail::fold(qx0 + lane, a.x.M, a.x.ends) * C;
  const bool two = lane + 32 < WX;
  const long long ox1 = two ? pyramid_detail::fold(qx0 + lane + 32, a.x.M, a.x.ends) * C : 0;
  const bool row1 = warp + 8 < WY;
  const long long oy0 = pyramid_detail::fold(qy0 + warp, a.y.M, a.y.ends) * Mx * C;
  const long long oy1 = row1 ? pyramid_detail::fold(qy0 + warp + 8, a.y.M, a.y.ends) * Mx * C : 0;
  const bool row0 = warp < WY;
  for (long l = lbeg; l <= lend; ++l) {
    const long lz = pyramid_detail::fold(l, a.z.M, a.z.ends);
    const T* in = src + lz * My * Mx * C + c;
    if (row0) {
      tile[warp][lane] = static_cast<double>(in[oy0 + ox0]);
      if (two) tile[warp][lane + 32] = static_cast<double>(in[oy0 + ox1]);
    }
    if (row1) {
      tile[warp + 8][lane] = static_cast<double>(in[oy1 + ox0]);
      if (two) tile[warp + 8][lane + 32] = static_cast<double>(in[oy1 + ox1]);
    }
    __syncthreads();
    for (int r = yb; r < WY; r += 256 / kPhaseTX) {
      double s = 0;
#pragma unroll
      for (int k = 0; k < K; ++k) s = fma(wx[k], tile[r][bx + k], s);
      xs[r][xf] = s;
    }
    __syncthreads();
    const int slot = static_cast<int>((l - lbeg) % K);
    for (int yf = yb; yf < kPhase3TY; yf += 256 / kPhaseTX) {
      const int by = (yf >> 1) + a.y.first[py] - a.y.lo;
      double s = 0;
#pragma unroll
      for (int k = 0; k < K; ++k) s = fma(wy[k], xs[by + k][xf], s);
      ring[slot][yf][xf] = s;
    }
    __syncthreads();
    const long long x = x0 + xf;
    if (x >= Nx) continue;
    for (int pz = 0; pz < 2; ++pz) {
      const long long i = 2 * (static_cast<long long>(l) - a.z.first[pz] - K + 1) + pz;
      if (i < z0 || i >= z1) continue;
      const int s0 = static_cast<int>((l - K + 1 - lbeg) % K);
      for (int yf = yb; yf < kPhase3TY; yf += 256 / kPhaseTX) {
        const long long y = y0 + yf;
        if (y >= Ny) break;
        double s = 0;
#pragma unroll
        for (int k = 0; k < K; ++k) {
          const int sl = s0 + k < K ? s0 + k : s0 + k - K;
          s = fma(a.z.w[pz][k], ring[sl][yf][xf], s);
        }
        dst[((i * Ny + y) * Nx + x) * C + c] = static_cast<T>(s);
      }
    }
  }
}

// SV_PYRAMID_EXPAND_CZ: the volume kernel's fine planes a block (even, default 16; for
// measurements).
int expand_chunk() {
  const char* e = std::getenv("SV_PYRAMID_EXPAND_CZ");
  const long v = e ? std::atol(e) : 16;
  return static_cast<int>(std::max(2L, std::min(4096L, v / 2 * 2)));
}

template <class T>
void launch_phases3(const T* src, T* dst, const Phase3Args& a, int taps, const char* what) {
  const long long chunks = (a.z.N + a.cz - 1) / a.cz;
  const dim3 grid(static_cast<unsigned>((a.x.N + kPhaseTX - 1) / kPhaseTX),
                  static_cast<unsigned>((a.y.N + kPhase3TY - 1) / kPhase3TY),
                  static_cast<unsigned>(chunks * a.channels));
  switch (taps) {
#define SV_PHASES3_CASE(K)                                                  \
  case K: {                                                                 \
    const std::size_t bytes = phase3_shared_doubles(K) * sizeof(double);    \
    check(cudaFuncSetAttribute(expand_phases3_kernel<T, K>,                 \
                               cudaFuncAttributeMaxDynamicSharedMemorySize, \
                               static_cast<int>(bytes)),                    \
          what);                                                            \
    expand_phases3_kernel<T, K><<<grid, 256, bytes>>>(src, dst, a);         \
    break;                                                                  \
  }
    SV_PHASES3_CASE(1)
    SV_PHASES3_CASE(2)
    SV_PHASES3_CASE(3)
    SV_PHASES3_CASE(4)
    SV_PHASES3_CASE(5)
    SV_PHASES3_CASE(6)
    SV_PHASES3_CASE(7)
    SV_PHASES3_CASE(8)
#undef SV_PHASES3_CASE
    default:
      throw Error(std::string(what) + ": no phase kernel for " + std::to_string(taps) + " taps");
  }
  check_launch(what);
}

// expand2 by phases (the default; SV_PYRAMID_EXPAND=passes runs the plan's passes, for
// measurements and the test that compares the two): 1-D and 2-D arrays in one pass (the plane
// kernel), 3-D in one pass (the volume kernel; SV_PYRAMID_EXPAND=planes runs the plane kernel
// over the coarse planes into a scratch array, then the plan's z pass).
// False where it does not apply (switched off, or a grid dimension past CUDA's limits).
template <class T>
bool expand_by_phases(const T* coarse, T* dst, const std::vector<std::size_t>& cdims,
                      const std::vector<std::size_t>& fdims, std::size_t channels,
                      const DevicePlan& plan, const PyramidOptions& opt, const char* what) {
  const char* e = std::getenv("SV_PYRAMID_EXPAND");
  if (e && std::string(e) == "passes") return false;
  const std::size_t R = cdims.size();
  if (R < 1 || R > 3 || plan.passes.size() != R) return false;
  auto phases = [&](std::size_t d, int tile) {
    return phase_axis(pyramid_detail::expand_phases(sv::reduce2_axis(fdims[d], opt), opt.degree),
                      tile);
  };
  PhaseArgs a;
  a.channels = static_cast<int>(channels);
  a.x = phases(R - 1, kPhaseTX);
  a.up_y = R >= 2;
  if (a.up_y) a.y = phases(R - 2, kPhaseTY);
  a.rows = a.up_y ? a.y.N : 1;
  const long long planes = R == 3 ? static_cast<long long>(cdims[0]) : 1;
  if ((a.rows + kPhaseTY - 1) / kPhaseTY > 65535 || planes * a.channels > 65535 ||
      fdims[R - 1] > (1u << 30))
    return false;
  const int taps = opt.degree + 1;
  if (R < 3) {
    launch_phases<T>(coarse, dst, a, planes, taps, what);
    return true;
  }
  if (!(e && std::string(e) == "planes")) {
    Phase3Args b;
    b.channels = a.channels;
    b.x = a.x;
    b.y = phases(1, kPhase3TY);
    b.z = phases(0, 2);
    b.cz = expand_chunk();
    if ((b.z.N + b.cz - 1) / b.cz * b.channels <= 65535 &&
        (b.y.N + kPhase3TY - 1) / kPhase3TY <= 65535) {
      launch_phases3<T>(coarse, dst, b, taps, what);
      return true;
    }
  }
  keep_pool_memory();
  const std::vector<std::size_t> mid{cdims[0], fdims[1], fdims[2]};
  Scratch<T> tmp(count_of(mid, channels), what);
  launch_phases<T>(coarse, tmp.get(), a, planes, taps, what);
  run_pass<T>(tmp.get(), dst, mid, channels, *plan.passes[0], what);
  return true;
}

std::vector<std::size_t> coarse_dims(const std::vector<PyramidAxis>& axes) {
  std::vector<std::size_t> out;
  for (const PyramidAxis& a : axes) out.push_back(a.coarse);
  return out;
}

// ---- reduce2 by phases: one decimating FIR, then the poles on the coarse array only ----------

// pyramid_detail::reduce2_phases on the device: coarse output j of an axis is
// sum_{k < K} w[k] x~[2 j + first + k] (x~ extended by the fine ends), K a multiple of 8 (the
// taps padded with zero weights: fma(0, x, s) == s for finite x).
constexpr int kReduceMaxTaps = 32;
struct ReduceAxis {
  int N = 1, M = 1;  // fine and coarse lengths
  int first = 0;
  double w[kReduceMaxTaps] = {};
  Ends ends;  // the fine line's
};

int padded_taps(int taps) {
  return taps <= 8 ? 8 : taps <= 16 ? 16 : taps <= 24 ? 24 : 32;
}

ReduceAxis reduce_axis_of(const pyramid_detail::ReducePhases& p) {
  ReduceAxis a;
  a.N = static_cast<int>(p.fine);
  a.M = static_cast<int>(p.coarse);
  a.first = static_cast<int>(p.first);
  for (int k = 0; k < p.taps; ++k) a.w[k] = p.w[static_cast<std::size_t>(k)];
  a.ends = p.fine_ends;
  return a;
}

// A block's tile of coarse outputs: 32 columns by 32 rows (256 threads; each thread makes four
// adjacent x sums of a fine row, then four adjacent y sums of a column).
constexpr int kRedTX = 32, kRedTY = 32, kRedR = 4;

struct ReduceArgs {
  ReduceAxis x, y;  // the last axis; the one before (down_y), else rows that stay as they are
  bool down_y = true;
  int channels = 1;
  long long rows_in = 1, rows = 1;  // input and output rows of a plane
};

// Shared memory of reduce_phases_kernel<T, K>: the fine tile in T, rows of kStride, and the x
// sums of its rows in double.
template <class S, int K>
struct ReduceTile {
  static constexpr int kCols = 2 * kRedTX + K - 1 + 1;  // + 1: a thread's last pair is whole
  static constexpr int kStride = kCols + 1;
  static constexpr int kRows = 2 * kRedTY + K - 1;
  // The x sums start at a 16-byte boundary (their stores are paired).
  static constexpr std::size_t tile_bytes() { return (sizeof(S) * kRows * kStride + 15) / 16 * 16; }
  static constexpr std::size_t bytes() { return tile_bytes() + sizeof(double) * kRows * kRedTX; }
};

// Coarse (plane, y, x, c) of double from fine (plane, y, x, c) of T (down_y; else y stays),
// blockIdx.z = plane * channels + c: the tile's fine samples (folded by the fine ends) into
// shared memory; the x sums of its rows, a thread four adjacent outputs of a row from the
// 2 x 4 + K - 2 samples they read (kept in registers); then the y sums, a thread four adjacent
// outputs of a column; all in double, the taps read from the kernel's arguments.
template <class T, int K>
__global__ void __launch_bounds__(256)
    reduce_phases_kernel(const T* __restrict__ src, double* __restrict__ dst, const ReduceArgs a) {
  using S = T;  // the tile's type (in double: no faster, BENCHMARKS "reduce2 by phases")
  using Tile = ReduceTile<S, K>;
  constexpr int V = 2 * kRedR + K - 2;  // fine samples of a thread's four x sums
  extern __shared__ double sm_reduce[];
  S* tile = reinterpret_cast<S*>(sm_reduce);  // [row][kStride]
  double* xs = reinterpret_cast<double*>(sm_reduce) + Tile::tile_bytes() / sizeof(double);
  // xs: [row][kRedTX]
  const int tid = static_cast<int>(threadIdx.x);
  const int x0 = static_cast<int>(blockIdx.x) * kRedTX;
  const long long y0 = static_cast<long long>(blockIdx.y) * kRedTY;
  const long long C = a.channels;
  const long long c = blockIdx.z % C, plane = blockIdx.z / C;
  const T* in = src + plane * a.rows_in * a.x.N * C + c;
  double* out = dst + plane * a.rows * a.x.M * C + c;
  const long fx0 = 2L * x0 + a.x.first;
  const long fy0 = a.down_y ? 2L * static_cast<long>(y0) + a.y.first : static_cast<long>(y0);
  const int WY =
      a.down_y ? Tile::kRows : static_cast<int>(min(static_cast<long long>(kRedTY), a.rows - y0));
  {
    // A warp a row, a lane the columns lane, lane + 32, lane + 64 (folded once).
    const int lane = tid & 31, warp = tid >> 5;
    long long ox[3];
#pragma unroll
    for (int u = 0; u < 3; ++u) {
      const int col = lane + 32 * u;
      ox[u] = col < Tile::kCols ? pyramid_detail::fold(fx0 + col, a.x.N, a.x.ends) * C : 0;
    }
    for (int r = warp; r < WY; r += 8) {
      const long ly = a.down_y ? pyramid_detail::fold(fy0 + r, a.y.N, a.y.ends) : fy0 + r;
      const T* row = in + ly * a.x.N * C;
#pragma unroll
      for (int u = 0; u < 3; ++u) {
        const int col = lane + 32 * u;
        if (col < Tile::kCols) tile[r * Tile::kStride + col] = static_cast<S>(row[ox[u]]);
      }
    }
  }
  __syncthreads();
  {
    const int q = tid & (kRedTX / kRedR - 1);  // outputs 4q .. 4q + 3 of a row
    for (int r = tid / (kRedTX / kRedR); r < WY; r += 256 / (kRedTX / kRedR)) {
      const S* f = tile + r * Tile::kStride + 2 * kRedR * q;
      double v[V];
#pragma unroll
      for (int j = 0; j < V; ++j) v[j] = static_cast<double>(f[j]);
#pragma unroll
      for (int u = 0; u < kRedR; ++u) {
        double s = 0;
#pragma unroll
        for (int k = 0; k < K; ++k) s = fma(a.x.w[k], v[2 * u + k], s);
        xs[r * kRedTX + kRedR * q + u] = s;
      }
    }
  }
  __syncthreads();
  const int cx = tid & (kRedTX - 1), g = tid / kRedTX;  // rows 4g .. 4g + 3 of column cx
  const long long x = x0 + cx;
  if (x >= a.x.M) return;
  if (!a.down_y) {
    for (int r = g; r < WY; r += 256 / kRedTX)
      out[((y0 + r) * a.x.M + x) * C] = xs[r * kRedTX + cx];
    return;
  }
  const double* col = xs + 2 * kRedR * g * kRedTX + cx;
  double v[V];
#pragma unroll
  for (int j = 0; j < V; ++j) v[j] = col[j * kRedTX];
#pragma unroll
  for (int u = 0; u < kRedR; ++u) {
    const long long y = y0 + kRedR * g + u;
    if (y >= a.y.M) break;
    double s = 0;
#pragma unroll
    for (int k = 0; k < K; ++k) s = fma(a.y.w[k], v[2 * u + k], s);
    out[(y * a.x.M + x) * C] = s;
  }
}

template <class T>
void launch_reduce_phases(const T* src, double* dst, const ReduceArgs& a, long long planes,
                          int taps, const char* what) {
  const dim3 grid(static_cast<unsigned>((a.x.M + kRedTX - 1) / kRedTX),
                  static_cast<unsigned>((a.rows + kRedTY - 1) / kRedTY),
                  static_cast<unsigned>(planes * a.channels));
  switch (padded_taps(taps)) {
#define SV_REDUCE_CASE(K)                                                   \
  case K: {                                                                 \
    const std::size_t bytes = ReduceTile<T, K>::bytes();                    \
    check(cudaFuncSetAttribute(reduce_phases_kernel<T, K>,                  \
                               cudaFuncAttributeMaxDynamicSharedMemorySize, \
                               static_cast<int>(bytes)),                    \
          what);                                                            \
    reduce_phases_kernel<T, K><<<grid, 256, bytes>>>(src, dst, a);          \
    break;                                                                  \
  }
    SV_REDUCE_CASE(8)
    SV_REDUCE_CASE(16)
    SV_REDUCE_CASE(24)
    SV_REDUCE_CASE(32)
#undef SV_REDUCE_CASE
    default:
      throw Error(std::string(what) + ": no phase kernel for " + std::to_string(taps) + " taps");
  }
  check_launch(what);
}

// The z axis of a volume (planes of `inner` values, double): coarse plane j is
// sum_k w[k] x~[2 j + first + k], a thread per output value.
__global__ void reduce_z_kernel(const double* __restrict__ src, double* __restrict__ dst,
                                const ReduceAxis z, int taps, long long inner) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= inner * z.M) return;
  const long long j = t / inner, i = t % inner;
  double s = 0;
  for (int k = 0; k < taps; ++k)
    s = fma(z.w[k], src[pyramid_detail::fold(2 * j + z.first + k, z.N, z.ends) * inner + i], s);
  dst[t] = s;
}

// The device plan of reduce2 by phases (kept with the other plans): per axis (the fastest
// first) one pass of the poles z_i^2 and the Gram poles on the coarse lines with the coarse ends,
// and the axes' FIRs (pyramid_detail::reduce2_phases).
std::shared_ptr<const DevicePlan> reduce_phase_plan(const std::vector<PyramidAxis>& axes,
                                                    const std::vector<std::size_t>& fine,
                                                    const ReduceOptions& opt, const char* what) {
  const std::string key =
      plan_key("reduce2 phases", fine, coarse_dims(axes), opt, opt.input_is_coefficients);
  if (auto p = find_plan(key)) return p;
  require(what);
  std::vector<pyramid_detail::ReducePhases> phases;
  for (std::size_t d = 0; d < axes.size(); ++d)
    phases.push_back(
        pyramid_detail::reduce2_phases(axes[d], opt.degree, opt.input_is_coefficients));
  std::vector<PyramidPass> passes;
  for (std::size_t d = axes.size(); d-- > 0;) {
    const pyramid_detail::ReducePhases& ph = phases[d];
    if (ph.poles.z.empty() || ph.coarse < 2) continue;
    PyramidPass step;
    step.axis = d;
    step.in_length = axes[d].coarse;
    step.has_pre = true;
    step.pre = ph.poles;
    step.pre_ends = ph.coarse_ends;
    passes.push_back(std::move(step));
  }
  // The pole passes on strided axes take at least 16 lanes a tile (H100, 15257x3736: the tile
  // model's choice of one lane 1.33 ms, 8 lanes 1.15, 16 lanes 1.05, 32 lanes 1.15).
  auto plan = upload_plan(passes, what, 16);
  plan->phases = std::move(phases);
  return keep_plan(key, plan);
}

// reduce2 by phases (the default; SV_PYRAMID_REDUCE=passes runs the plan's passes, for
// measurements and the test that compares the two): the FIR of the last two axes in one pass
// (reduce_phases_kernel) into a double array of the coarse shape (3-D: of the fine planes, then
// reduce_z_kernel), the pole passes on it in double (the tile kernel), rounded to T once. False
// where it does not apply (switched off, or a grid dimension past CUDA's limits).
template <class T>
bool reduce_by_phases(const T* src, T* coefficients, const std::vector<std::size_t>& fdims,
                      const std::vector<PyramidAxis>& axes, std::size_t channels,
                      const ReduceOptions& opt, const char* what) {
  const char* e = std::getenv("SV_PYRAMID_REDUCE");
  if (e && std::string(e) == "passes") return false;
  const std::size_t R = fdims.size();
  if (R < 1 || R > 3) return false;
  for (std::size_t d = 0; d < R; ++d)
    if (fdims[d] >= (std::size_t{1} << 30)) return false;
  const std::vector<std::size_t> cd = coarse_dims(axes);
  ReduceArgs a;
  a.channels = static_cast<int>(channels);
  a.down_y = R >= 2;
  a.rows_in = a.down_y ? static_cast<long long>(fdims[R - 2]) : 1;
  a.rows = a.down_y ? static_cast<long long>(cd[R - 2]) : 1;
  const long long planes = R == 3 ? static_cast<long long>(fdims[0]) : 1;
  if ((a.rows + kRedTY - 1) / kRedTY > 65535 || planes * a.channels > 65535) return false;
  const auto plan = reduce_phase_plan(axes, fdims, opt, what);
  keep_pool_memory();
  a.x = reduce_axis_of(plan->phases[R - 1]);
  int taps = plan->phases[R - 1].taps;
  if (a.down_y) {
    a.y = reduce_axis_of(plan->phases[R - 2]);
    taps = std::max(taps, plan->phases[R - 2].taps);
  }
  std::vector<std::size_t> mid = cd;
  if (R == 3) mid[0] = fdims[0];
  Scratch<double> y(count_of(cd, channels), what), m;
  if (R == 3) {
    m.allocate(count_of(mid, channels), what);
    launch_reduce_phases<T>(src, m.get(), a, planes, taps, what);
    const long long inner = static_cast<long long>(cd[1] * cd[2] * channels);
    const ReduceAxis z = reduce_axis_of(plan->phases[0]);
    reduce_z_kernel<<<blocks_for(inner * z.M, 256, what), 256>>>(m.get(), y.get(), z,
                                                                 plan->phases[0].taps, inner);
    check_launch(what);
    m.allocate(0, what);
  } else {
    launch_reduce_phases<T>(src, y.get(), a, planes, taps, what);
  }
  run_plan<double, T>(y.get(), coefficients, cd, channels, *plan, what);
  return true;
}

// ---- The coarse samples in one pass -------------------------------------------------------------

// The coarse samples are the coefficients through the sampled B-spline along every axis,
// sum_{|m| <= r} beta_n(m) d[j + m] (r = n / 2, the coefficients extended by the coarse axis's two
// ends): sample_plan's FIR, which the passes run an axis at a time, each rounded to T. Here the
// last two axes go in one kernel (a 64 x 32 tile of outputs a block: the tile's coefficients,
// extended by fold, into shared memory in double, the x sums of every row, then each output's y
// sum) and a volume's z in a second one, rounded once at the end (2-D) or twice (3-D).
constexpr int kSmpTX = 64, kSmpTY = 32, kSmpK = 2 * (kMaxDegree / 2) + 1;
struct SampleAxis {
  int M = 1, r = 0;
  double w[kSmpK] = {};
  Ends ends;
};
struct SampleArgs {
  SampleAxis x, y;  // the last axis; the one before (filter_y), else rows left as they are
  bool filter_y = true;
  int channels = 1;
  long long rows = 1;  // rows of a plane (y.M, or 1 for a line)
};

SampleAxis sample_axis_of(const PyramidAxis& ax, int degree) {
  SampleAxis a;
  a.M = static_cast<int>(ax.coarse);
  a.r = degree / 2;
  for (int m = -a.r; m <= a.r; ++m) a.w[m + a.r] = bspline(degree, static_cast<double>(m));
  a.ends = pyramid_detail::ends_of(ax);
  return a;
}

template <class In, class Out, int K>
__global__ void __launch_bounds__(256)
    samples_kernel(const In* __restrict__ src, Out* __restrict__ dst, const SampleArgs a) {
  __shared__ double tile[kSmpTY + K - 1][kSmpTX + K];
  __shared__ double xs[kSmpTY + K - 1][kSmpTX];
  constexpr int R = K / 2;
  const int tid = static_cast<int>(threadIdx.x);
  const int x0 = static_cast<int>(blockIdx.x) * kSmpTX;
  const long long y0 = static_cast<long long>(blockIdx.y) * kSmpTY;
  const long long C = a.channels;
  const long long c = blockIdx.z % C, plane = blockIdx.z / C;
  const long long plane_size = a.rows * a.x.M * C;
  const In* in = src + plane * plane_size + c;
  Out* out = dst + plane * plane_size + c;
  const int ry = a.filter_y ? R : 0;
  const int WX = min(kSmpTX, a.x.M - x0) + 2 * R;
  const int rows_out = static_cast<int>(min(static_cast<long long>(kSmpTY), a.rows - y0));
  const int WY = rows_out + 2 * ry;
  {
    // A warp a row, a lane columns lane, lane + 32 and lane + 64, each folded once.
    const int lane = tid & 31, warp = tid >> 5;
    long long ox[3];
#pragma unroll
    for (int u = 0; u < 3; ++u)
      ox[u] = lane + 32 * u < WX ? pyramid_detail::fold(x0 - R + lane + 32 * u, a.x.M, a.x.ends) * C
                                 : 0;
    for (int r = warp; r < WY; r += 8) {
      const long ly = a.filter_y
                          ? pyramid_detail::fold(static_cast<long>(y0) - ry + r, a.y.M, a.y.ends)
                          : static_cast<long>(y0) + r;
      const In* row = in + ly * a.x.M * C;
#pragma unroll
      for (int u = 0; u < 3; ++u)
        if (lane + 32 * u < WX) tile[r][lane + 32 * u] = static_cast<double>(row[ox[u]]);
    }
  }
  __syncthreads();
  const int xf = tid & (kSmpTX - 1);
  {
    double w[K];
#pragma unroll
    for (int k = 0; k < K; ++k) w[k] = a.x.w[k];
    for (int r = tid / kSmpTX; r < WY; r += 256 / kSmpTX) {
      double s = 0;
#pragma unroll
      for (int k = 0; k < K; ++k) s = fma(w[k], tile[r][xf + k], s);
      xs[r][xf] = s;
    }
  }
  __syncthreads();
  const int x = x0 + xf;
  if (x >= a.x.M) return;
  double w[K];
#pragma unroll
  for (int k = 0; k < K; ++k) w[k] = a.y.w[k];
  for (int yf = tid / kSmpTX; yf < rows_out; yf += 256 / kSmpTX) {
    double s;
    if (a.filter_y) {
      s = 0;
#pragma unroll
      for (int k = 0; k < K; ++k) s = fma(w[k], xs[yf + k][xf], s);
    } else {
      s = xs[yf][xf];
    }
    out[((y0 + yf) * a.x.M + x) * C] = static_cast<Out>(s);
  }
}

// A volume's z sums (the planes' x and y sums in src, double), rounded to T.
template <class T>
__global__ void samples_z_kernel(const double* __restrict__ src, T* __restrict__ dst,
                                 const SampleAxis z, long long inner) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= inner * z.M) return;
  const long long j = t / inner, i = t % inner;
  double s = 0;
  for (int k = 0; k <= 2 * z.r; ++k)
    s = fma(z.w[k], src[pyramid_detail::fold(j - z.r + k, z.M, z.ends) * inner + i], s);
  dst[t] = static_cast<T>(s);
}

template <class In, class Out>
void launch_samples(const In* src, Out* dst, const SampleArgs& a, long long planes, int degree,
                    const char* what) {
  const dim3 grid(static_cast<unsigned>((a.x.M + kSmpTX - 1) / kSmpTX),
                  static_cast<unsigned>((a.rows + kSmpTY - 1) / kSmpTY),
                  static_cast<unsigned>(planes * a.channels));
  switch (2 * (degree / 2) + 1) {
#define SV_SAMPLES_CASE(K)                                  \
  case K:                                                   \
    samples_kernel<In, Out, K><<<grid, 256>>>(src, dst, a); \
    break;
    SV_SAMPLES_CASE(3)
    SV_SAMPLES_CASE(5)
    SV_SAMPLES_CASE(7)
#undef SV_SAMPLES_CASE
    default:
      throw Error(std::string(what) + ": no samples kernel for degree " + std::to_string(degree));
  }
  check_launch(what);
}

// The coarse samples from the coarse coefficients (both of the coarse shape cd) in one pass (a
// volume: two); false where it does not apply (SV_PYRAMID_SAMPLES=passes, for measurements and the
// test that compares the two; degrees 0 and 1, whose samples are the coefficients; grids past
// CUDA's limits), and the caller runs sample_plan's passes.
template <class T>
bool samples_by_stencil(const T* coefficients, T* samples, const std::vector<std::size_t>& cd,
                        const std::vector<PyramidAxis>& axes, std::size_t channels,
                        const ReduceOptions& opt, const char* what) {
  const char* e = std::getenv("SV_PYRAMID_SAMPLES");
  if (e && std::string(e) == "passes") return false;
  const std::size_t R = cd.size();
  if (opt.degree < 2 || opt.degree > kMaxDegree || R < 1 || R > 3) return false;
  for (std::size_t d = 0; d < R; ++d)
    if (cd[d] >= (std::size_t{1} << 30)) return false;
  SampleArgs a;
  a.channels = static_cast<int>(channels);
  a.filter_y = R >= 2;
  a.rows = a.filter_y ? static_cast<long long>(cd[R - 2]) : 1;
  a.x = sample_axis_of(axes[R - 1], opt.degree);
  if (a.filter_y) a.y = sample_axis_of(axes[R - 2], opt.degree);
  const long long planes = R == 3 ? static_cast<long long>(cd[0]) : 1;
  if ((a.rows + kSmpTY - 1) / kSmpTY > 65535 || planes * a.channels > 65535) return false;
  if (R < 3) {
    launch_samples<T, T>(coefficients, samples, a, planes, opt.degree, what);
    return true;
  }
  Scratch<double> m(count_of(cd, channels), what);
  launch_samples<T, double>(coefficients, m.get(), a, planes, opt.degree, what);
  const long long inner = static_cast<long long>(cd[1] * cd[2] * channels);
  const SampleAxis z = sample_axis_of(axes[0], opt.degree);
  samples_z_kernel<T><<<blocks_for(inner * z.M, 256, what), 256>>>(m.get(), samples, z, inner);
  check_launch(what);
  return true;
}

void check_layout(const Layout& layout, const char* what) {
  layout.check(what);
  if (layout.size() >= (std::size_t{1} << 40)) throw Error(std::string(what) + ": array too large");
}

template <class T>
void reduce_device(const T* src, const Layout& fine, const std::vector<PyramidAxis>& axes,
                   bool halving, T* coefficients, T* samples, const ReduceOptions& opt,
                   const char* what) {
  check_layout(fine, what);
  if (opt.samples && !samples)
    throw Error(std::string(what) + ": opt.samples is set but the samples pointer is null");
  const std::vector<std::size_t> cd = coarse_dims(axes);
  if (!halving ||
      !reduce_by_phases<T>(src, coefficients, fine.dims, axes, fine.channels, opt, what)) {
    const auto plan = cached_plan(
        plan_key(halving ? "reduce2" : "reduce", fine.dims, cd, opt, opt.input_is_coefficients),
        [&] { return pyramid_detail::reduce_plan(fine.dims, axes, opt, halving); }, what);
    run_plan<T>(src, coefficients, fine.dims, fine.channels, *plan, what);
  }
  if (opt.samples &&
      !samples_by_stencil<T>(coefficients, samples, cd, axes, fine.channels, opt, what)) {
    const auto sp = cached_plan(
        plan_key(halving ? "samples2" : "samples", fine.dims, cd, opt, false),
        [&] { return pyramid_detail::sample_plan(axes, opt.degree); }, what);
    run_plan<T>(coefficients, samples, cd, fine.channels, *sp, what);
  }
}

// Device copies of the host conveniences.
using detail::DeviceCopy;

// expand2's plan after the CPU's checks (expand_plan throws its sentences; a cached plan passed
// them), the layout checks and the device check (where the plan is made), in that order.
std::shared_ptr<const DevicePlan> expand_device_plan(const Layout& cl,
                                                     const std::vector<std::size_t>& fine_dims,
                                                     const PyramidOptions& opt, const char* what) {
  const std::string key = plan_key("expand2", cl.dims, fine_dims, opt, true);
  std::shared_ptr<const DevicePlan> plan = find_plan(key);
  std::vector<PyramidPass> host;
  if (!plan) host = pyramid_detail::expand_plan(cl.dims, fine_dims, opt);
  check_layout(cl, what);
  check_layout(Layout{fine_dims, cl.channels}, what);
  if (!plan) {
    require(what);
    plan = keep_plan(key, upload_plan(host, what));
  }
  return plan;
}

template <class T>
Reduced<T> reduce_host(const Array<T>& a, std::vector<PyramidAxis> axes, bool halving,
                       const ReduceOptions& opt, const char* what) {
  const Layout fine = Layout::of(a);
  check_layout(fine, what);
  require(what);
  const std::vector<std::size_t> cd = coarse_dims(axes);
  Reduced<T> r;
  r.coefficients = Array<T>(cd, a.channels());
  if (opt.samples) r.samples = Array<T>(cd, a.channels());
  DeviceCopy<T> src(a, what), coef(r.coefficients.size(), what),
      smp(opt.samples ? r.samples.size() : 0, what);
  reduce_device<T>(src.get(), fine, axes, halving, coef.get(), smp.get(), opt, what);
  synchronize(what);
  coef.download(r.coefficients, what);
  if (opt.samples) smp.download(r.samples, what);
  r.axes = std::move(axes);
  return r;
}

}  // namespace

Layout reduce2_layout(const Layout& fine, const PyramidOptions& opt) {
  ReduceOptions o;
  static_cast<PyramidOptions&>(o) = opt;
  const auto axes = pyramid_detail::reduce2_axes(fine.rank(), fine.points(), fine.dims, o);
  return Layout{coarse_dims(axes), fine.channels};
}

Layout reduce_layout(const Layout& fine, const std::vector<double>& factors,
                     const ReduceOptions& opt) {
  const auto shape =
      pyramid_detail::reduce_factor_shape(fine.rank(), fine.points(), fine.dims, factors, opt);
  const auto axes =
      pyramid_detail::reduce_shape_axes(fine.rank(), fine.points(), fine.dims, shape, opt);
  return Layout{coarse_dims(axes), fine.channels};
}

template <class T>
void reduce2(const T* src, const Layout& fine, T* coefficients, T* samples,
             const ReduceOptions& opt) {
  const auto axes = pyramid_detail::reduce2_axes(fine.rank(), fine.points(), fine.dims, opt);
  reduce_device<T>(src, fine, axes, true, coefficients, samples, opt, "CUDA reduce2");
}

template <class T>
void reduce_to_shape(const T* src, const Layout& fine, const std::vector<std::size_t>& shape,
                     T* coefficients, T* samples, const ReduceOptions& opt) {
  const auto axes =
      pyramid_detail::reduce_shape_axes(fine.rank(), fine.points(), fine.dims, shape, opt);
  reduce_device<T>(src, fine, axes, false, coefficients, samples, opt, "CUDA reduce");
}

template <class T>
void expand2(const T* coarse, const Layout& coarse_layout,
             const std::vector<std::size_t>& fine_dims, T* dst, const PyramidOptions& opt) {
  const char* what = "CUDA expand2";
  const auto plan = expand_device_plan(coarse_layout, fine_dims, opt, what);
  if (!expand_by_phases<T>(coarse, dst, coarse_layout.dims, fine_dims, coarse_layout.channels,
                           *plan, opt, what))
    run_plan<T>(coarse, dst, coarse_layout.dims, coarse_layout.channels, *plan, what);
}

template <class T>
Reduced<T> reduce2(const Array<T>& a, const ReduceOptions& opt) {
  return reduce_host<T>(a, pyramid_detail::reduce2_axes(a.rank(), a.points(), a.dims(), opt), true,
                        opt, "CUDA reduce2");
}

template <class T>
Reduced<T> reduce_to_shape(const Array<T>& a, const std::vector<std::size_t>& shape,
                           const ReduceOptions& opt) {
  return reduce_host<T>(
      a, pyramid_detail::reduce_shape_axes(a.rank(), a.points(), a.dims(), shape, opt), false, opt,
      "CUDA reduce");
}

template <class T>
Reduced<T> reduce(const Array<T>& a, const std::vector<double>& factors, const ReduceOptions& opt) {
  return sv::cuda::reduce_to_shape<T>(
      a, pyramid_detail::reduce_factor_shape(a.rank(), a.points(), a.dims(), factors, opt), opt);
}

template <class T>
Array<T> expand2(const Array<T>& coarse, const std::vector<std::size_t>& fine_dims,
                 const PyramidOptions& opt) {
  const char* what = "CUDA expand2";
  const Layout cl = Layout::of(coarse);
  const auto plan = expand_device_plan(cl, fine_dims, opt, what);
  Array<T> out(fine_dims, coarse.channels());
  DeviceCopy<T> src(coarse, what), dst(out.size(), what);
  if (!expand_by_phases<T>(src.get(), dst.get(), cl.dims, fine_dims, cl.channels, *plan, opt, what))
    run_plan<T>(src.get(), dst.get(), cl.dims, cl.channels, *plan, what);
  synchronize(what);
  dst.download(out, what);
  return out;
}

#define SV_PYRAMID_INSTANTIATE(T)                                                                \
  template void reduce2<T>(const T*, const Layout&, T*, T*, const ReduceOptions&);               \
  template void reduce_to_shape<T>(const T*, const Layout&, const std::vector<std::size_t>&, T*, \
                                   T*, const ReduceOptions&);                                    \
  template void expand2<T>(const T*, const Layout&, const std::vector<std::size_t>&, T*,         \
                           const PyramidOptions&);                                               \
  template Reduced<T> reduce2<T>(const Array<T>&, const ReduceOptions&);                         \
  template Reduced<T> reduce<T>(const Array<T>&, const std::vector<double>&,                     \
                                const ReduceOptions&);                                           \
  template Reduced<T> reduce_to_shape<T>(const Array<T>&, const std::vector<std::size_t>&,       \
                                         const ReduceOptions&);                                  \
  template Array<T> expand2<T>(const Array<T>&, const std::vector<std::size_t>&,                 \
                               const PyramidOptions&);

SV_PYRAMID_INSTANTIATE(float)
SV_PYRAMID_INSTANTIATE(double)

}  // namespace sv::cuda
