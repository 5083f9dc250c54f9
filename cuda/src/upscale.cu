// CUDA integer-factor upscaling, thread per tile (see cuda_upscale.h for the geometry).
//
// Work split: cell i of an axis (i = -1 .. N - 1) is the interval [i, i + 1) of input positions;
// its f outputs sit at the fractions a_s (s = 0 .. f - 1), the same for every cell. Cells are
// numbered from 0 in the kernel (cell index c = i + 1, 0 .. N). A warp takes 32 consecutive cell
// columns (one per lane) and a run of consecutive cell rows (8 by default); the kWarps warps of a
// block take neighbouring strips of the same run, so a block writes 128 f C contiguous values
// per output row (stacking them over neighbouring runs instead measured the same).
//
// Per lane, the 4 (cubic) or 2 (linear, nearest) rows of its neighbourhood sit in registers:
// k x k values per channel, k = 4 or 2. A step down one cell row loads the one new row (k
// values per channel, through the read-only cache: neighbouring lanes share all but one of
// them) and shifts the others; linear and nearest load it one cell ahead. The cell's outputs are
// separable fma chains: for output row sy the k columns are blended vertically with the weights
// of sub-position sy, then each output column sx blends those k values horizontally. The weights
// are the double-precision B-spline weights (sv::bspline_weights_frac, the reference's own) at
// a_s, rounded to float once on the host; they sit in the kernel parameters (the constant bank,
// free fma operands). Nearest picks the tap a_s rounds to, a compile-time choice.
//
// The f x f x C outputs of each lane go to the warp's shared-memory stage, f output rows of
// 32 f C floats, each row written at an offset (0..3) that makes the stage's float4s line up
// with the output's 16-byte (float) or 4-byte (8-bit) boundaries. Then the warp writes each
// staged row to global memory clipped to the image: one float4 (or 4 packed bytes) per lane,
// consecutive lanes at consecutive addresses, single values only at the row's ends (surfaces:
// one pixel per lane). The store stream is what the kernel's speed is about.
//
// Measured on an H200 (splinebench-cuda upscale, 1920x1080 -> 3840x2160 RGB float, 99.5 MB
// written): cubic 0.059 ms, linear 0.042, nearest 0.042, against 0.031 ms for a write-only fill
// of the same bytes and 0.053 ms for a copy of them; with the prefilter, cubic takes 0.097 ms per
// frame, torch's bicubic F.interpolate 0.52 ms on the same frame. Cubic is bound by instruction
// issue at 25% occupancy (96 registers), not by memory: ncu shows 65% SM throughput.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "boundary.cuh"
#include "check.cuh"
#include "splineview/bspline.h"
#include "splineview/cuda_upscale.h"
#include "upscale_check.h"

namespace sv::cuda {
namespace {

using detail::boundary_code;
using detail::check;
using detail::check_launch;
using detail::extend;

constexpr int kWarps = 4;              // warps per block (each a run of cell rows)
constexpr int kThreads = 32 * kWarps;  // threads per block
constexpr int kDefaultRun = 8;         // cell rows per warp run
constexpr int kMaxGridY = 65535;

enum class OutKind : int { Float = 0, U8, SurfaceR32F, SurfaceRGBA32F };

struct Params {
  const float* src;
  int nx, ny;  // input extents (x fastest)
  int ox, oy;  // output extents: f nx, f ny
  int boundary;
  int run;              // cell rows per warp
  int side_by_side;     // warps of a block side by side along x (1) or stacked along y (0)
  float w[4][4];        // weights of sub-position s (cubic: 4 taps, linear: 2)
  OutKind out;          // where the staged rows go
  float* dst;           // OutKind::Float
  unsigned char* dst8;  // OutKind::U8
  unsigned long long surface;
  int dst_offset;  // (address of dst or dst8, in elements) mod 4; 0 for surfaces
};

// The 8-bit value of v (cuda_upscale.h): rint(clamp(v, 0, 1) * 255), half to even; NaN -> 0
// (__saturatef maps NaN to 0).
__device__ __forceinline__ unsigned char to_u8(float v) {
  return static_cast<unsigned char>(__float2int_rn(__saturatef(v) * 255.0f));
}

// Packs 4 staged values (16-byte aligned in shared memory) as one aligned store: float4, or 4
// bytes in a 32-bit word.
__device__ __forceinline__ void store4(float* out, const float* row) {
  *reinterpret_cast<float4*>(out) = *reinterpret_cast<const float4*>(row);
}
__device__ __forceinline__ void store4(unsigned char* out, const float* row) {
  const float4 v = *reinterpret_cast<const float4*>(row);
  *reinterpret_cast<unsigned*>(out) =
      static_cast<unsigned>(to_u8(v.x)) | static_cast<unsigned>(to_u8(v.y)) << 8 |
      static_cast<unsigned>(to_u8(v.z)) << 16 | static_cast<unsigned>(to_u8(v.w)) << 24;
}
__device__ __forceinline__ void store1(float* out, float v) {
  *out = v;
}
__device__ __forceinline__ void store1(unsigned char* out, float v) {
  *out = to_u8(v);
}

// Writes staged values row[0 .. n - 1] of one output row to out[0 .. n - 1], by the whole warp:
// single values up to the first 16-byte (float) or 4-byte (8-bit) boundary of `out`, then one
// aligned 4-value store per lane (consecutive lanes, consecutive addresses), then the tail. The
// stage was written at an offset that puts out's boundaries on 16-byte boundaries of `row`, so
// each 4-value store reads its values as one float4 from shared memory.
template <class T>
__device__ __forceinline__ void store_span(T* out, const float* row, int n, int lane) {
  constexpr unsigned kAlign = 4 * sizeof(T);
  const int head =
      min(n, static_cast<int>((kAlign - (reinterpret_cast<std::uintptr_t>(out) & (kAlign - 1))) &
                              (kAlign - 1)) /
                 static_cast<int>(sizeof(T)));
  if (lane < head) store1(out + lane, row[lane]);
  const int body = (n - head) / 4;
  for (int w = lane; w < body; w += 32) store4(out + head + 4 * w, row + head + 4 * w);
  const int done = head + 4 * body;
  if (lane < n - done) store1(out + done + lane, row[done + lane]);
}

template <int F, int C, UpscaleMethod M>
__global__ void __launch_bounds__(kThreads) upscale_kernel(const Params p) {
  constexpr int K = M == UpscaleMethod::Cubic ? 4 : 2;    // neighbourhood per axis
  constexpr int kLo = M == UpscaleMethod::Cubic ? 1 : 0;  // taps i - kLo .. i - kLo + K - 1
  constexpr int O = F / 2;                                // output j = F i + O + s
  constexpr int kRow = 32 * F * C;                        // staged floats of one output row
  constexpr int kRowStride = kRow + 4;                    // room for the alignment offset
  __shared__ float4 stage_all[kWarps][F * kRowStride / 4];

  const int lane = static_cast<int>(threadIdx.x & 31);
  const int warp = static_cast<int>(threadIdx.x >> 5);
  float* stage = reinterpret_cast<float*>(stage_all[warp]);

  // Side by side: the block's warps take neighbouring strips of 32 cells of the same run, so
  // together they write 128 f C contiguous values per output row. Stacked: the same strip,
  // neighbouring runs.
  const int run =
      static_cast<int>(blockIdx.y) * (p.side_by_side ? 1 : kWarps) + (p.side_by_side ? 0 : warp);
  const int cy_begin = run * p.run;
  const int cy_end = min(cy_begin + p.run, p.ny + 1);
  if (cy_begin >= cy_end) return;  // the whole warp

  const int cx0 =  // the warp's first cell column
      (static_cast<int>(blockIdx.x) * (p.side_by_side ? kWarps : 1) + (p.side_by_side ? warp : 0)) *
      32;
  if (cx0 > p.nx) return;  // the whole warp
  // Lanes past the last cell repeat it; their outputs lie beyond the image and are not stored.
  const int ix = min(cx0 + lane, p.nx) - 1;
  int col[K];
#pragma unroll
  for (int k = 0; k < K; ++k) col[k] = extend(ix - kLo + k, p.nx, p.boundary) * C;

  const float* __restrict__ src = p.src;
  float r[K][K][C];  // rows (oldest first) x columns x channels
  auto load_row = [&](int iy, float(&row)[K][C]) {
    const float* line = src + static_cast<std::size_t>(extend(iy, p.ny, p.boundary)) *
                                  static_cast<std::size_t>(p.nx) * C;
#pragma unroll
    for (int k = 0; k < K; ++k)
#pragma unroll
      for (int ch = 0; ch < C; ++ch) row[k][ch] = __ldg(line + col[k] + ch);
  };
#pragma unroll
  for (int q = 0; q < K - 1; ++q) load_row(cy_begin - 1 - kLo + q, r[q]);
  // Linear and nearest load the newest row of the next cell one cell ahead, so its latency hides
  // behind this cell's blends and stores (the extension makes any row index valid: the last
  // prefetch of a run reads a row it does not use). Cubic does not: the 4 C more registers cost
  // it occupancy, and it was slower with them on the H200 (0.058 -> 0.068 ms at 1080p -> 4K).
  constexpr bool kPrefetch = K == 2;
  float next[K][C];
  if constexpr (kPrefetch) load_row(cy_begin - 1 - kLo + K - 1, next);

  // Output columns of the warp's staged rows and the part of them inside the image.
  const int x_first = F * (cx0 - 1) + O;
  const int x_lo = max(0, x_first);
  const int x_hi = min(p.ox, x_first + 32 * F);
  const int e_lo = (x_lo - x_first) * C;
  const int e_hi = (x_hi - x_first) * C;

  for (int cy = cy_begin; cy < cy_end; ++cy) {
    const int iy = cy - 1;
    if constexpr (kPrefetch) {
#pragma unroll
      for (int k = 0; k < K; ++k)
#pragma unroll
        for (int ch = 0; ch < C; ++ch) r[K - 1][k][ch] = next[k][ch];
      load_row(iy + 1 - kLo + K - 1, next);
    } else {
      load_row(iy - kLo + K - 1, r[K - 1]);
    }

    // Compute: f output rows of f pixels into the stage. Staged row sy holds element e (output
    // x_first + e / C, channel e % C) at shift[sy] + e, where shift[sy] is the element's global
    // index mod 4 (16-byte or 4-byte boundaries of the output fall on float4s of the stage).
    int shift[F];
#pragma unroll
    for (int sy = 0; sy < F; ++sy) {
      const long long g = (static_cast<long long>(F * iy + O + sy) * p.ox + x_first) * C;
      shift[sy] = static_cast<int>((g + p.dst_offset) & 3);
    }
#pragma unroll
    for (int sy = 0; sy < F; ++sy) {
      float v[K][C];
      if constexpr (M == UpscaleMethod::Nearest) {
        const int t = sy >= F - O ? 1 : 0;  // a_sy >= 1/2 takes c[i + 1]
#pragma unroll
        for (int k = 0; k < K; ++k)
#pragma unroll
          for (int ch = 0; ch < C; ++ch) v[k][ch] = r[t][k][ch];
      } else {
#pragma unroll
        for (int k = 0; k < K; ++k)
#pragma unroll
          for (int ch = 0; ch < C; ++ch) {
            float acc = p.w[sy][0] * r[0][k][ch];
#pragma unroll
            for (int q = 1; q < K; ++q) acc = fmaf(p.w[sy][q], r[q][k][ch], acc);
            v[k][ch] = acc;
          }
      }
#pragma unroll
      for (int sx = 0; sx < F; ++sx) {
#pragma unroll
        for (int ch = 0; ch < C; ++ch) {
          float o;
          if constexpr (M == UpscaleMethod::Nearest) {
            o = v[sx >= F - O ? 1 : 0][ch];
          } else {
            o = p.w[sx][0] * v[0][ch];
#pragma unroll
            for (int k = 1; k < K; ++k) o = fmaf(p.w[sx][k], v[k][ch], o);
          }
          stage[sy * kRowStride + shift[sy] + (lane * F + sx) * C + ch] = o;
        }
      }
    }
    __syncwarp();

    // Store: each staged row inside the image as consecutive words from consecutive lanes.
#pragma unroll
    for (int sy = 0; sy < F; ++sy) {
      const int y = F * iy + O + sy;
      if (y < 0 || y >= p.oy) continue;
      const float* row = stage + sy * kRowStride + shift[sy];              // element 0
      const long long at = (static_cast<long long>(y) * p.ox + x_lo) * C;  // element e_lo
      if (p.out == OutKind::Float) {
        store_span(p.dst + at, row + e_lo, e_hi - e_lo, lane);
      } else if (p.out == OutKind::U8) {
        store_span(p.dst8 + at, row + e_lo, e_hi - e_lo, lane);
      } else if (p.out == OutKind::SurfaceR32F) {
        for (int x = x_lo + lane; x < x_hi; x += 32)
          surf2Dwrite(row[x - x_first], p.surface, x * 4, y);
      } else {
        for (int x = x_lo + lane; x < x_hi; x += 32) {
          const float* e = row + (x - x_first) * C;
          const float4 t =
              make_float4(e[0], C > 1 ? e[1] : 0.0f, C > 2 ? e[2] : 0.0f, C > 3 ? e[3] : 1.0f);
          surf2Dwrite(t, p.surface, x * 16, y);
        }
      }
    }
    __syncwarp();  // the stage is rewritten by the next cell row

#pragma unroll
    for (int q = 0; q < K - 1; ++q)
#pragma unroll
      for (int k = 0; k < K; ++k)
#pragma unroll
        for (int ch = 0; ch < C; ++ch) r[q][k][ch] = r[q + 1][k][ch];
  }
}

template <int F, int C>
void launch_fc(UpscaleMethod m, const Params& p, dim3 grid) {
  switch (m) {
    case UpscaleMethod::Nearest:
      upscale_kernel<F, C, UpscaleMethod::Nearest><<<grid, kThreads>>>(p);
      break;
    case UpscaleMethod::Linear:
      upscale_kernel<F, C, UpscaleMethod::Linear><<<grid, kThreads>>>(p);
      break;
    case UpscaleMethod::Cubic:
      upscale_kernel<F, C, UpscaleMethod::Cubic><<<grid, kThreads>>>(p);
      break;
  }
}

template <int F>
void launch_f(int channels, UpscaleMethod m, const Params& p, dim3 grid) {
  switch (channels) {
    case 1:
      return launch_fc<F, 1>(m, p, grid);
    case 2:
      return launch_fc<F, 2>(m, p, grid);
    case 3:
      return launch_fc<F, 3>(m, p, grid);
    default:
      return launch_fc<F, 4>(m, p, grid);
  }
}

// Cell rows per warp run: SPLINEVIEW_CUDA_UPSCALE_RUN (an experiment switch for the benchmark,
// 1..1024) or kDefaultRun.
int run_length() {
  const char* env = std::getenv("SPLINEVIEW_CUDA_UPSCALE_RUN");
  if (!env || !*env) return kDefaultRun;
  const int v = std::atoi(env);
  if (v < 1 || v > 1024)
    throw Error(std::string("SPLINEVIEW_CUDA_UPSCALE_RUN='") + env + "' is not a number 1..1024");
  return v;
}

// The block layout: SPLINEVIEW_CUDA_UPSCALE_WARPS=side (the default) or stacked, an experiment
// switch for the benchmark.
bool side_by_side() {
  const char* env = std::getenv("SPLINEVIEW_CUDA_UPSCALE_WARPS");
  if (!env || !*env) return true;
  const std::string s(env);
  if (s == "side") return true;
  if (s == "stacked") return false;
  throw Error("SPLINEVIEW_CUDA_UPSCALE_WARPS='" + s + "' is not 'side' or 'stacked'");
}

// Checks the arguments, fills the geometry and weights of `p`, and launches.
void launch(const char* what, const float* src, const Layout& layout, int factor,
            UpscaleMethod method, Boundary boundary, Params p) {
  // No require() here: it queries the device properties (about half a millisecond), which a
  // per-frame call cannot afford; without a device the launch check below reports the reason.
  detail::check_upscale(layout, factor, method, boundary, what);
  if (!src) throw Error(std::string(what) + ": the source pointer is null");
  if ((p.out == OutKind::Float && !p.dst) || (p.out == OutKind::U8 && !p.dst8))
    throw Error(std::string(what) + ": the destination pointer is null");
  p.src = src;
  p.dst_offset =
      p.out == OutKind::Float ? static_cast<int>((reinterpret_cast<std::uintptr_t>(p.dst) / 4) & 3)
      : p.out == OutKind::U8  ? static_cast<int>(reinterpret_cast<std::uintptr_t>(p.dst8) & 3)
                              : 0;
  p.ny = static_cast<int>(layout.dims[0]);
  p.nx = static_cast<int>(layout.dims[1]);
  p.oy = p.ny * factor;
  p.ox = p.nx * factor;
  p.boundary = boundary_code(boundary);

  // Sub-position s at fraction a_s = (o + s + 1/2) / f - 1/2 of its cell, in double.
  const int o = factor / 2;
  std::memset(p.w, 0, sizeof p.w);
  for (int s = 0; s < factor; ++s) {
    const double a = (o + s + 0.5) / factor - 0.5;
    double w[4] = {0, 0, 0, 0};
    if (method == UpscaleMethod::Cubic) bspline_weights_frac<double>(3, a, w);
    if (method == UpscaleMethod::Linear) bspline_weights_frac<double>(1, a, w);
    for (int k = 0; k < 4; ++k) p.w[s][k] = static_cast<float>(w[k]);
  }

  // Runs of cell rows, lengthened if the grid's y limit would be exceeded.
  const long long cells_y = p.ny + 1LL;
  p.run = run_length();
  p.side_by_side = side_by_side() ? 1 : 0;
  const long long max_run_count = static_cast<long long>(kMaxGridY) * (p.side_by_side ? 1 : kWarps);
  if ((cells_y + p.run - 1) / p.run > max_run_count)
    p.run = static_cast<int>((cells_y + max_run_count - 1) / max_run_count);
  const long long runs = (cells_y + p.run - 1) / p.run;
  const long long strips = (p.nx + 1 + 31) / 32;
  const dim3 grid = p.side_by_side ? dim3(static_cast<unsigned>((strips + kWarps - 1) / kWarps),
                                          static_cast<unsigned>(runs))
                                   : dim3(static_cast<unsigned>(strips),
                                          static_cast<unsigned>((runs + kWarps - 1) / kWarps));

  const int c = static_cast<int>(layout.channels);
  switch (factor) {
    case 1:
      launch_f<1>(c, method, p, grid);
      break;
    case 2:
      launch_f<2>(c, method, p, grid);
      break;
    case 3:
      launch_f<3>(c, method, p, grid);
      break;
    default:
      launch_f<4>(c, method, p, grid);
      break;
  }
  check_launch((std::string(what) + ": launching the kernel").c_str());
}

// ---- unpacking 8-bit frames ----

constexpr int kUnpackThreads = 256;

// One block row of threads per image row: thread e of row y writes float e of the row (pixel
// e / C, channel e % C), so the stores are consecutive words.
template <int C>
__global__ void __launch_bounds__(kUnpackThreads)
    unpack_kernel(const unsigned char* __restrict__ src, std::size_t pitch, int src_channels,
                  float* __restrict__ dst, int width) {
  const int e = static_cast<int>(blockIdx.x) * kUnpackThreads + static_cast<int>(threadIdx.x);
  if (e >= width * C) return;
  const std::size_t y = blockIdx.y;
  const int x = e / C;
  const int ch = e - x * C;
  const unsigned char v = src[y * pitch + static_cast<std::size_t>(x) * src_channels + ch];
  dst[y * static_cast<std::size_t>(width) * C + e] = __fdiv_rn(static_cast<float>(v), 255.0f);
}

// ---- RAII owners for FrameUpscaler ----

struct DeviceBytes {
  unsigned char* ptr = nullptr;
  std::size_t bytes = 0;
  DeviceBytes() = default;
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  ~DeviceBytes() { reset(); }
  void reset() {
    if (ptr) cudaFree(ptr);
    ptr = nullptr;
    bytes = 0;
  }
  void allocate(std::size_t n, const char* what) {
    reset();
    void* p = nullptr;
    check(cudaMalloc(&p, n), what);
    ptr = static_cast<unsigned char*>(p);
    bytes = n;
  }
};

struct PinnedBytes {
  unsigned char* ptr = nullptr;
  PinnedBytes() = default;
  PinnedBytes(const PinnedBytes&) = delete;
  PinnedBytes& operator=(const PinnedBytes&) = delete;
  ~PinnedBytes() { reset(); }
  void reset() {
    if (ptr) cudaFreeHost(ptr);
    ptr = nullptr;
  }
  void allocate(std::size_t n, const char* what) {
    reset();
    void* p = nullptr;
    check(cudaMallocHost(&p, n), what);
    ptr = static_cast<unsigned char*>(p);
  }
};

struct Events {
  static constexpr int kCount = 6;
  cudaEvent_t e[kCount] = {};
  Events() {
    for (auto& ev : e) check(cudaEventCreate(&ev), "CUDA frame upscaler: creating an event");
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  ~Events() {
    for (auto& ev : e)
      if (ev) cudaEventDestroy(ev);
  }
  double ms(int a, int b) const {
    float t = 0;
    check(cudaEventElapsedTime(&t, e[a], e[b]), "CUDA frame upscaler: reading an event time");
    return t;
  }
};

}  // namespace

void unpack_u8(const std::uint8_t* src, std::size_t src_pitch, int src_channels, float* dst,
               const Layout& layout) {
  const char* what = "CUDA unpacking of 8-bit pixels";
  detail::check_unpack(src_pitch, src_channels, layout, what);  // no require(): see launch()
  if (!src || !dst) throw Error(std::string(what) + ": a null source or destination");
  const int height = static_cast<int>(layout.dims[0]);
  const int width = static_cast<int>(layout.dims[1]);
  const int c = static_cast<int>(layout.channels);
  const long long per_row = static_cast<long long>(width) * c;
  if (height > kMaxGridY)
    throw Error(std::string(what) + ": more than " + std::to_string(kMaxGridY) + " rows");
  const dim3 grid(static_cast<unsigned>((per_row + kUnpackThreads - 1) / kUnpackThreads),
                  static_cast<unsigned>(height));
  switch (c) {
    case 1:
      unpack_kernel<1><<<grid, kUnpackThreads>>>(src, src_pitch, src_channels, dst, width);
      break;
    case 2:
      unpack_kernel<2><<<grid, kUnpackThreads>>>(src, src_pitch, src_channels, dst, width);
      break;
    case 3:
      unpack_kernel<3><<<grid, kUnpackThreads>>>(src, src_pitch, src_channels, dst, width);
      break;
    default:
      unpack_kernel<4><<<grid, kUnpackThreads>>>(src, src_pitch, src_channels, dst, width);
      break;
  }
  check_launch("CUDA unpacking of 8-bit pixels: launching the kernel");
}

void upscale(const float* src, const Layout& layout, int factor, UpscaleMethod method,
             Boundary boundary, float* dst) {
  Params p{};
  p.out = OutKind::Float;
  p.dst = dst;
  launch("CUDA upscaling", src, layout, factor, method, boundary, p);
}

void upscale_u8(const float* src, const Layout& layout, int factor, UpscaleMethod method,
                Boundary boundary, std::uint8_t* dst) {
  Params p{};
  p.out = OutKind::U8;
  p.dst8 = dst;
  launch("CUDA upscaling to 8 bits", src, layout, factor, method, boundary, p);
}

void upscale_to_surface(const float* src, const Layout& layout, int factor, UpscaleMethod method,
                        Boundary boundary, std::uint64_t surface, SurfaceFormat format) {
  const char* what = "CUDA upscaling into a texture";
  Params p{};
  if (format == SurfaceFormat::R32F) {
    if (layout.channels != 1)
      throw Error(std::string(what) + ": a one-channel texture format cannot hold " +
                  std::to_string(layout.channels) + " channels");
    p.out = OutKind::SurfaceR32F;
  } else if (format == SurfaceFormat::RGBA32F) {
    p.out = OutKind::SurfaceRGBA32F;
  } else {
    throw Error(std::string(what) + ": only R32F and RGBA32F textures are supported");
  }
  p.surface = surface;
  launch(what, src, layout, factor, method, boundary, p);
}

// ---- FrameUpscaler ----

struct FrameUpscaler::Impl {
  int factor = 1;
  UpscaleMethod method = UpscaleMethod::Cubic;
  int width = 0, height = 0, channels = 0;  // shape of the buffers (0: none yet)
  DeviceBuffer samples;                     // float frame, coefficients after the prefilter
  DeviceBytes in, out;                      // 8-bit frames on the device
  PinnedBytes in_host, out_host;            // pinned staging
  Events events;
  Timing timing;
};

FrameUpscaler::FrameUpscaler(int factor, UpscaleMethod method) {
  detail::check_upscale(Layout{{1, 1}, 1}, factor, method, Boundary::Reflect,
                        "CUDA frame upscaler");
  require("CUDA frame upscaler");
  impl_ = std::make_unique<Impl>();
  impl_->factor = factor;
  impl_->method = method;
}

FrameUpscaler::~FrameUpscaler() = default;

const FrameUpscaler::Timing& FrameUpscaler::last_timing() const {
  return impl_->timing;
}

void FrameUpscaler::run(const std::uint8_t* src, int width, int height, int channels,
                        std::uint8_t* dst) {
  const char* what = "CUDA frame upscaler";
  if (width < 1 || height < 1)
    throw Error(std::string(what) + ": a frame of " + std::to_string(width) + "x" +
                std::to_string(height) + " pixels has no pixels");
  if (channels < 1 || channels > 4)
    throw Error(std::string(what) + ": frames must have 1 to 4 channels, got " +
                std::to_string(channels));
  if (!src || !dst) throw Error(std::string(what) + ": a null source or destination");
  Impl& m = *impl_;
  const std::size_t w = static_cast<std::size_t>(width), h = static_cast<std::size_t>(height);
  const std::size_t c = static_cast<std::size_t>(channels);
  const Layout layout{{h, w}, c};
  detail::check_upscale(layout, m.factor, m.method, Boundary::Reflect, what);
  const std::size_t f = static_cast<std::size_t>(m.factor);
  const std::size_t in_bytes = h * w * c;  // also the float count of the frame
  const std::size_t out_bytes = in_bytes * f * f;

  if (width != m.width || height != m.height || channels != m.channels) {
    m.width = m.height = m.channels = 0;  // no buffers until all are allocated
    m.samples = DeviceBuffer();
    m.samples = DeviceBuffer(in_bytes);
    m.in.allocate(in_bytes, "CUDA frame upscaler: allocating the 8-bit frame");
    m.out.allocate(out_bytes, "CUDA frame upscaler: allocating the 8-bit result");
    m.in_host.allocate(in_bytes, "CUDA frame upscaler: allocating pinned staging");
    m.out_host.allocate(out_bytes, "CUDA frame upscaler: allocating pinned staging");
    m.width = width;
    m.height = height;
    m.channels = channels;
  }

  cudaEvent_t* e = m.events.e;
  std::memcpy(m.in_host.ptr, src, in_bytes);
  check(cudaEventRecord(e[0], 0), "CUDA frame upscaler: recording an event");
  check(cudaMemcpyAsync(m.in.ptr, m.in_host.ptr, in_bytes, cudaMemcpyHostToDevice, 0),
        "CUDA frame upscaler: copying the frame to the GPU");
  check(cudaEventRecord(e[1], 0), "CUDA frame upscaler: recording an event");
  unpack_u8(m.in.ptr, w * c, channels, m.samples.data(), layout);
  check(cudaEventRecord(e[2], 0), "CUDA frame upscaler: recording an event");
  if (m.method == UpscaleMethod::Cubic) {
    PrefilterConfig cfg;
    cfg.degree = 3;
    cfg.boundary = Boundary::Reflect;
    prefilter(m.samples.data(), layout, cfg);
  }
  check(cudaEventRecord(e[3], 0), "CUDA frame upscaler: recording an event");
  upscale_u8(m.samples.data(), layout, m.factor, m.method, Boundary::Reflect, m.out.ptr);
  check(cudaEventRecord(e[4], 0), "CUDA frame upscaler: recording an event");
  check(cudaMemcpyAsync(m.out_host.ptr, m.out.ptr, out_bytes, cudaMemcpyDeviceToHost, 0),
        "CUDA frame upscaler: copying the result from the GPU");
  check(cudaEventRecord(e[5], 0), "CUDA frame upscaler: recording an event");
  check(cudaEventSynchronize(e[5]), "CUDA frame upscaler: running the frame");
  synchronize(what);

  Timing t;
  t.upload = m.events.ms(0, 1);
  t.unpack = m.events.ms(1, 2);
  t.prefilter = m.events.ms(2, 3);
  t.upscale = m.events.ms(3, 4);
  t.download = m.events.ms(4, 5);
  m.timing = t;
  std::memcpy(dst, m.out_host.ptr, out_bytes);
}

ArrayF upscale(const ArrayF& samples, int factor, UpscaleMethod method, Boundary boundary) {
  const char* what = "CUDA upscaling";
  const Layout layout = Layout::of(samples);
  detail::check_upscale(layout, factor, method, boundary, what);
  require(what);
  DeviceBuffer in(samples.size());
  in.upload(samples.data(), samples.size());
  if (method == UpscaleMethod::Cubic) {
    PrefilterConfig cfg;
    cfg.degree = 3;
    cfg.boundary = boundary;
    prefilter(in.data(), layout, cfg);
  }
  const std::size_t f = static_cast<std::size_t>(factor);
  ArrayF out({layout.dims[0] * f, layout.dims[1] * f}, layout.channels);
  DeviceBuffer result(out.size());
  upscale(in.data(), layout, factor, method, boundary, result.data());
  synchronize(what);
  result.download(out.data(), out.size());
  return out;
}

}  // namespace sv::cuda
