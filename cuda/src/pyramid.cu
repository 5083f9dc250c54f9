// cuda_pyramid.h: the B-spline pyramid on the GPU, running the CPU's plan (the per-axis passes
// of lib/src/pyramid_lines.h) with the CPU's line routines.
//
// Kernels:
//  - to_lanes / from_lanes: an axis's lines between the array's order (outer, n, inner) and a
//    double buffer of lanes. Where inner <= 4 (the x axis: its lines are contiguous) the buffer
//    is line-interleaved, element k of lane l at k * L + l (L lanes), through 32 x 32 shared
//    tiles; elsewhere it keeps the array's order (stride inner, adjacent lanes adjacent).
//  - pole_lines: filter_poles on one lane per thread (the CPU's routine with width 1).
//  - fir_outputs: fir_lines for one output per thread, from lanes or from the array (T) to lanes
//    or to the array; consecutive threads take consecutive outputs of the destination's order,
//    so loads and stores coalesce in both.
// Every pass rounds its result to T, as run_axis does on the CPU.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "../../lib/src/pyramid_lines.h"
#include "check.cuh"
#include "splineview/cuda_pyramid.h"
#include "splineview/error.h"

namespace sv::cuda {
namespace {

using detail::check;
using detail::check_launch;
using pyramid_detail::PoleLine;
using pyramid_detail::PyramidPass;

// ---- Scratch memory from the stream-ordered pool ---------------------------------------------

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
template <class From, class To>
void to_lanes(const From* src, To* dst, const Lines& v, const char* what) {
  if (v.interleaved) {
    const long long bo = (v.outer + kTile - 1) / kTile, bk = (v.n + kTile - 1) / kTile;
    if (bo > 0x7fffffffLL || bk > 65535) throw Error(std::string(what) + ": array too large");
    interleave_kernel<From, To, true>
        <<<dim3(static_cast<unsigned>(bo), static_cast<unsigned>(bk)), dim3(kTile, 8)>>>(
            src, dst, v.outer, v.n, v.inner);
  } else {
    const long long count = v.outer * v.n * v.inner;
    convert_kernel<From, To><<<blocks_for(count, 256, what), 256>>>(src, dst, count);
  }
  check_launch(what);
}
template <class From, class To>
void from_lanes(const From* src, To* dst, const Lines& v, const char* what) {
  if (v.interleaved) {
    const long long bo = (v.outer + kTile - 1) / kTile, bk = (v.n + kTile - 1) / kTile;
    if (bo > 0x7fffffffLL || bk > 65535) throw Error(std::string(what) + ": array too large");
    interleave_kernel<From, To, false>
        <<<dim3(static_cast<unsigned>(bo), static_cast<unsigned>(bk)), dim3(kTile, 8)>>>(
            src, dst, v.outer, v.n, v.inner);
  } else {
    const long long count = v.outer * v.n * v.inner;
    convert_kernel<From, To><<<blocks_for(count, 256, what), 256>>>(src, dst, count);
  }
  check_launch(what);
}

// ---- The line routines, a lane or an output per thread ----------------------------------------

__global__ void pole_lines_kernel(double* __restrict__ x, Lines v, PoleLine p) {
  const long long l = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (l >= v.lanes()) return;
  double acc = 0;
  pyramid_detail::filter_poles(x + v.base(l), 1, static_cast<std::size_t>(v.stride()), p, &acc);
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

void poles(double* x, const Lines& v, const PoleLine& p, const char* what) {
  pole_lines_kernel<<<blocks_for(v.lanes(), 128, what), 128>>>(x, v, p);
  check_launch(what);
}

// ---- One pass, a plan ------------------------------------------------------------------------

// Runs `pass` on src (dims, channels) into dst (dims with the pass's axis at its output length).
template <class T>
void run_pass(const T* src, T* dst, const std::vector<std::size_t>& dims, std::size_t channels,
              const PyramidPass& pass, const char* what) {
  const std::size_t axis = pass.axis;
  long long outer = 1, inner = static_cast<long long>(channels);
  for (std::size_t d = 0; d < axis; ++d) outer *= static_cast<long long>(dims[d]);
  for (std::size_t d = axis + 1; d < dims.size(); ++d) inner *= static_cast<long long>(dims[d]);
  const long long n = static_cast<long long>(dims[axis]);
  const long long m = static_cast<long long>(pass.out_length());
  const bool inter = inner <= kInterleaveMaxInner;
  const Lines vin{outer, n, inner, inter}, vout{outer, m, inner, inter};
  Scratch<std::size_t> row;
  Scratch<long> index;
  Scratch<double> weight;
  DeviceTaps taps{};
  if (pass.has_taps) {
    row.upload(pass.taps.row, what);
    index.upload(pass.taps.index, what);
    weight.upload(pass.taps.weight, what);
    taps = {row.get(), index.get(), weight.get()};
  }
  Scratch<double> w, r;
  if (pass.has_pre) {
    w.allocate(static_cast<std::size_t>(outer * n * inner), what);
    to_lanes<T, double>(src, w.get(), vin, what);
    poles(w.get(), vin, pyramid_detail::pole_line(pass.pre, static_cast<long>(n), pass.pre_ends),
          what);
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
  r.allocate(static_cast<std::size_t>(outer * m * inner), what);
  if (pass.has_pre)
    fir<double, double>(w.get(), vin, false, r.get(), vout, false, taps, what);
  else
    fir<T, double>(src, vin, true, r.get(), vout, false, taps, what);
  w.allocate(0, what);
  poles(r.get(), vout, pyramid_detail::pole_line(pass.post, static_cast<long>(m), pass.post_ends),
        what);
  from_lanes<double, T>(r.get(), dst, vout, what);
}

std::size_t count_of(const std::vector<std::size_t>& dims, std::size_t channels) {
  std::size_t c = channels;
  for (std::size_t d : dims) c *= d;
  return c;
}

// Runs the passes from src (dims, channels) into dst, through at most two T arrays between
// passes; an empty plan copies.
template <class T>
void run_plan(const T* src, T* dst, std::vector<std::size_t> dims, std::size_t channels,
              const std::vector<PyramidPass>& plan, const char* what) {
  if (plan.empty()) {
    check(cudaMemcpyAsync(dst, src, count_of(dims, channels) * sizeof(T), cudaMemcpyDeviceToDevice,
                          0),
          what);
    return;
  }
  Scratch<T> tmp[2];
  const T* cur = src;
  for (std::size_t p = 0; p < plan.size(); ++p) {
    std::vector<std::size_t> next = dims;
    next[plan[p].axis] = plan[p].out_length();
    T* out = dst;
    if (p + 1 < plan.size()) {
      tmp[p % 2].allocate(count_of(next, channels), what);
      out = tmp[p % 2].get();
    }
    run_pass<T>(cur, out, dims, channels, plan[p], what);
    cur = out;
    dims = std::move(next);
  }
}

void check_layout(const Layout& layout, const char* what) {
  layout.check(what);
  if (layout.size() >= (std::size_t{1} << 40)) throw Error(std::string(what) + ": array too large");
}

std::vector<std::size_t> coarse_dims(const std::vector<PyramidAxis>& axes) {
  std::vector<std::size_t> out;
  for (const PyramidAxis& a : axes) out.push_back(a.coarse);
  return out;
}

template <class T>
void reduce_device(const T* src, const Layout& fine, const std::vector<PyramidAxis>& axes,
                   bool halving, T* coefficients, T* samples, const ReduceOptions& opt,
                   const char* what) {
  check_layout(fine, what);
  if (opt.samples && !samples)
    throw Error(std::string(what) + ": opt.samples is set but the samples pointer is null");
  require(what);
  run_plan<T>(src, coefficients, fine.dims, fine.channels,
              pyramid_detail::reduce_plan(fine.dims, axes, opt, halving), what);
  if (opt.samples)
    run_plan<T>(coefficients, samples, coarse_dims(axes), fine.channels,
                pyramid_detail::sample_plan(axes, opt.degree), what);
}

// Device copies of the host conveniences.
template <class T>
class DeviceCopy {
 public:
  DeviceCopy(std::size_t n, const char* what) : n_(n) {
    check(cudaMalloc(&p_, std::max<std::size_t>(n, 1) * sizeof(T)), what);
  }
  DeviceCopy(const Array<T>& a, const char* what) : DeviceCopy(a.size(), what) {
    check(cudaMemcpy(p_, a.data(), a.size() * sizeof(T), cudaMemcpyHostToDevice), what);
  }
  ~DeviceCopy() { cudaFree(p_); }
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
  T* get() const { return static_cast<T*>(p_); }
  void download(Array<T>& a, const char* what) const {
    check(cudaMemcpy(a.data(), p_, a.size() * sizeof(T), cudaMemcpyDeviceToHost), what);
  }

 private:
  void* p_ = nullptr;
  std::size_t n_ = 0;
};

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
  const auto plan = pyramid_detail::expand_plan(coarse_layout.dims, fine_dims, opt);
  check_layout(coarse_layout, what);
  check_layout(Layout{fine_dims, coarse_layout.channels}, what);
  require(what);
  run_plan<T>(coarse, dst, coarse_layout.dims, coarse_layout.channels, plan, what);
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
  const auto plan = pyramid_detail::expand_plan(coarse.dims(), fine_dims, opt);
  const Layout cl = Layout::of(coarse);
  check_layout(cl, what);
  check_layout(Layout{fine_dims, coarse.channels()}, what);
  require(what);
  Array<T> out(fine_dims, coarse.channels());
  DeviceCopy<T> src(coarse, what), dst(out.size(), what);
  run_plan<T>(src.get(), dst.get(), coarse.dims(), coarse.channels(), plan, what);
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
