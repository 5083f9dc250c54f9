// CUDA B-spline prefilter (see cuda_prefilter.h for the method in one paragraph).
//
// An axis of length n is viewed as (outer, n, inner), element (o, k, i) at (o * n + k) * inner
// + i, exactly like the CPU prefilter. A "line" is one (o, i) pair. Two tile shapes:
//  - column tiles (inner >= 32, every axis but x): the block's lines are `W` consecutive i of
//    one o; a warp reads one row of the tile as 128 contiguous bytes;
//  - transposed tiles (inner < 32: the x axis, where inner is the channel count): the block's
//    lines are all channels of `rows` consecutive o; the tile's window of each row is contiguous
//    in memory, so the threads read it in order and scatter it into per-line rows of shared
//    memory (odd row stride: the per-line walks are free of bank conflicts).
// Every block runs the recursions of its lines over the window [s - H, e + H) of its chunk
// [s, e): H samples of apron on both sides, enough for the neglected start of each recursion to
// fall below float precision (see apron()). The apron holds the boundary extension of the
// samples (reflect / mirror / periodic via extend()), so the coefficients of the extended signal
// come out exact at the line ends as well, for every length down to n = 2.
//
// Where the aprons come from:
//  - whole-line tiles (one chunk per line): from the tile itself, after the centre is loaded;
//  - chunked and out of place (src != dst): straight from src;
//  - chunked and in place: from a side buffer that gather_aprons() fills before the pass, so
//    that no block reads samples another block may already have overwritten.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "check.cuh"
#include "splineview/bspline.h"
#include "splineview/cuda_prefilter.h"

namespace sv::cuda {
namespace {

using detail::check;
using detail::check_launch;

constexpr int kThreads = 256;     // threads per block (loads and stores)
constexpr int kColumnLines = 32;  // lines per column tile (one warp-wide row)
constexpr int kTransLines = 32;   // lines per transposed tile (rows * channels <= this)
constexpr int kWholeMax = 512;    // lines up to this length are filtered as one tile
constexpr int kChunk = 256;       // chunk length of longer lines

enum class SurfaceKind : int { None = 0, R32F, RGBA32F, R16F };

struct Pass {
  const float* src;
  float* dst;
  const float* apron;  // side buffer (chunked, in place), else null
  unsigned long long surface;
  SurfaceKind surface_kind;
  long long outer, inner, lines_total;
  int n, H, L, chunks;
  int lines;  // lines per tile
  int rows;   // transposed: rows of o per tile
  int S;      // shared stride of one line (transposed) ; column: S = window length
  int channels;
  int boundary;  // 0 reflect, 1 mirror, 2 periodic
  int rank;
  int nx, ny;  // surface coordinates of a point
  float gain;
  float z[3];
  bool whole;
};

// Maps any integer index into [0, n-1] per the boundary mode (sv::extend_index).
__device__ __forceinline__ int extend(long long k, int n, int boundary) {
  if (k >= 0 && k < n) return static_cast<int>(k);
  if (boundary == 1) {  // mirror, period 2n - 2
    if (n == 1) return 0;
    const long long p = 2LL * n - 2;
    long long r = k % p;
    if (r < 0) r += p;
    return static_cast<int>(r < n ? r : p - r);
  }
  if (boundary == 2) {  // periodic
    long long r = k % n;
    return static_cast<int>(r < 0 ? r + n : r);
  }
  const long long p = 2LL * n;  // reflect
  long long r = k % p;
  if (r < 0) r += p;
  return static_cast<int>(r < n ? r : p - 1 - r);
}

// Position of window sample w of tile line l in shared memory.
template <bool kTrans>
__device__ __forceinline__ int sidx(const Pass& P, int l, int w) {
  return kTrans ? l * P.S + w : w * P.lines + l;
}

// Runs the causal and anticausal recursion of every pole over one line of the tile in place.
// The starts assume the signal continues as its end value (exact for constant tails); their
// error dies out within the apron.
template <bool kTrans, int NP>
__device__ __forceinline__ void filter_line(const Pass& P, float* sh, int l, int len) {
  const int st = kTrans ? 1 : P.lines;
  float* b = sh + sidx<kTrans>(P, l, 0);
#pragma unroll
  for (int q = 0; q < NP; ++q) {
    const float z = P.z[q];
    float c = b[0] * (1.0f / (1.0f - z));
    b[0] = c;
#pragma unroll 8
    for (int k = 1; k < len; ++k) {
      c = fmaf(z, c, b[k * st]);
      b[k * st] = c;
    }
    c *= z / (z - 1.0f);
    b[(len - 1) * st] = c;
#pragma unroll 8
    for (int k = len - 2; k >= 0; --k) {
      c = z * (c - b[k * st]);
      b[k * st] = c;
    }
  }
}

// Global offset of sample k of line (o, i).
__device__ __forceinline__ long long goff(const Pass& P, long long o, long long k, long long i) {
  return (o * P.n + k) * P.inner + i;
}

// Apron value `h` (0..H-1) of side `side` (0 left, 1 right) of chunk `ch` of global line `g`
// in the side buffer.
__device__ __forceinline__ long long aoff(const Pass& P, int ch, int side, int h, long long g) {
  return ((static_cast<long long>(ch) * 2 + side) * P.H + h) * P.lines_total + g;
}

__device__ __forceinline__ void store_surface(const Pass& P, long long point, const float* v) {
  const int x = static_cast<int>(point % P.nx);
  const long long rest = point / P.nx;
  const int y = P.rank >= 2 ? static_cast<int>(rest % P.ny) : 0;
  const int zc = P.rank == 3 ? static_cast<int>(rest / P.ny) : 0;
  const cudaSurfaceObject_t s = P.surface;
  if (P.surface_kind == SurfaceKind::R32F) {
    if (P.rank == 3)
      surf3Dwrite(v[0], s, x * 4, y, zc);
    else
      surf2Dwrite(v[0], s, x * 4, y);
  } else if (P.surface_kind == SurfaceKind::R16F) {
    const unsigned short h = __half_as_ushort(__float2half_rn(v[0]));
    if (P.rank == 3)
      surf3Dwrite(h, s, x * 2, y, zc);
    else
      surf2Dwrite(h, s, x * 2, y);
  } else {
    const float4 t = make_float4(v[0], P.channels > 1 ? v[1] : 0.0f, P.channels > 2 ? v[2] : 0.0f,
                                 P.channels > 3 ? v[3] : 1.0f);
    if (P.rank == 3)
      surf3Dwrite(t, s, x * 16, y, zc);
    else
      surf2Dwrite(t, s, x * 16, y);
  }
}

template <bool kTrans, int NP>
__global__ void __launch_bounds__(kThreads) tile_kernel(Pass P) {
  extern __shared__ float sh[];
  const int ch = blockIdx.y;
  const int s = ch * P.L;
  const int e = min(s + P.L, P.n);
  const int len = e - s + 2 * P.H;  // window [s - H, e + H)
  const int H = P.H;

  // The block's lines: column tiles cover i in [i0, i0 + lines) of one o; transposed tiles
  // cover all channels of o in [o0, o0 + rows).
  long long o0 = 0, i0 = 0;
  int valid_lines = P.lines, valid_rows = P.rows;
  if (kTrans) {
    o0 = static_cast<long long>(blockIdx.x) * P.rows;
    valid_rows = static_cast<int>(min(static_cast<long long>(P.rows), P.outer - o0));
    valid_lines = valid_rows * static_cast<int>(P.inner);
  } else {
    const long long tiles_per_o = (P.inner + P.lines - 1) / P.lines;
    o0 = blockIdx.x / tiles_per_o;
    i0 = (blockIdx.x % tiles_per_o) * P.lines;
    valid_lines = static_cast<int>(min(static_cast<long long>(P.lines), P.inner - i0));
  }

  // 1. Load: centre always from src; aprons from src (out of place), the side buffer (in place)
  //    or, for whole lines, from the tile itself in step 2.
  const bool apron_direct = !P.whole && P.apron == nullptr;
  const int w_first = (P.whole || !apron_direct) ? H : 0;
  const int w_last = (P.whole || !apron_direct) ? H + (e - s) : len;  // exclusive
  if (kTrans) {
    const int per_row = (w_last - w_first) * static_cast<int>(P.inner);
    for (int t = threadIdx.x; t < valid_rows * per_row; t += blockDim.x) {
      const int r = t / per_row, rem = t % per_row;
      const int w = w_first + rem / static_cast<int>(P.inner);
      const int c = rem % static_cast<int>(P.inner);
      const int k = extend(static_cast<long long>(s) - H + w, P.n, P.boundary);
      sh[sidx<true>(P, r * static_cast<int>(P.inner) + c, w)] =
          P.gain * P.src[goff(P, o0 + r, k, c)];
    }
  } else {
    for (int t = threadIdx.x; t < (w_last - w_first) * P.lines; t += blockDim.x) {
      const int w = w_first + t / P.lines, l = t % P.lines;
      if (l >= valid_lines) continue;
      const int k = extend(static_cast<long long>(s) - H + w, P.n, P.boundary);
      sh[sidx<false>(P, l, w)] = P.gain * P.src[goff(P, o0, k, i0 + l)];
    }
  }
  if (!P.whole && !apron_direct) {
    // Aprons from the side buffer: per line, H left and H right values.
    for (int t = threadIdx.x; t < 2 * H * valid_lines; t += blockDim.x) {
      const int l = t % valid_lines, hs = t / valid_lines;
      const int side = hs / H, h = hs % H;
      const long long g =
          kTrans ? (o0 + l / P.inner) * P.inner + l % P.inner : o0 * P.inner + i0 + l;
      const int w = side == 0 ? h : H + (e - s) + h;
      sh[sidx<kTrans>(P, l, w)] = P.gain * P.apron[aoff(P, ch, side, h, g)];
    }
  }
  __syncthreads();

  // 2. Whole lines: the apron is the boundary extension of the tile's own centre.
  if (P.whole) {
    for (int t = threadIdx.x; t < 2 * H * valid_lines; t += blockDim.x) {
      const int l = t % valid_lines, hs = t / valid_lines;
      const int w = hs < H ? hs : H + P.n + (hs - H);
      const int k = extend(static_cast<long long>(w) - H, P.n, P.boundary);
      sh[sidx<kTrans>(P, l, w)] = sh[sidx<kTrans>(P, l, H + k)];
    }
    __syncthreads();
  }

  // 3. Recursions, one thread per line.
  for (int l = threadIdx.x; l < valid_lines; l += blockDim.x)
    filter_line<kTrans, NP>(P, sh, l, len);
  __syncthreads();

  // 4. Store the chunk [s, e).
  const int m = e - s;
  if (kTrans) {
    const int C = static_cast<int>(P.inner);
    if (P.surface_kind != SurfaceKind::None) {
      for (int t = threadIdx.x; t < valid_rows * m; t += blockDim.x) {
        const int r = t / m, w = H + t % m;
        float v[4];
        for (int c = 0; c < C; ++c) v[c] = sh[sidx<true>(P, r * C + c, w)];
        store_surface(P, (o0 + r) * P.n + s + (t % m), v);
      }
    } else {
      const int per_row = m * C;
      for (int t = threadIdx.x; t < valid_rows * per_row; t += blockDim.x) {
        const int r = t / per_row, rem = t % per_row;
        const int w = H + rem / C, c = rem % C;
        P.dst[goff(P, o0 + r, s + rem / C, c)] = sh[sidx<true>(P, r * C + c, w)];
      }
    }
  } else {
    for (int t = threadIdx.x; t < m * P.lines; t += blockDim.x) {
      const int w = H + t / P.lines, l = t % P.lines;
      if (l >= valid_lines) continue;
      P.dst[goff(P, o0, s + t / P.lines, i0 + l)] = sh[sidx<false>(P, l, w)];
    }
  }
}

// Copies the aprons of every chunk of every line into the side buffer (raw samples; the pass
// applies the gain). Index order: line fastest.
__global__ void gather_aprons(Pass P) {
  const long long total = static_cast<long long>(P.chunks) * 2 * P.H * P.lines_total;
  for (long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; t < total;
       t += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long g = t % P.lines_total;
    long long rest = t / P.lines_total;
    const int h = static_cast<int>(rest % P.H);
    rest /= P.H;
    const int side = static_cast<int>(rest % 2);
    const int ch = static_cast<int>(rest / 2);
    const int s = ch * P.L, e = min(s + P.L, P.n);
    const long long pos = side == 0 ? static_cast<long long>(s) - P.H + h : e + h;
    const int k = extend(pos, P.n, P.boundary);
    const long long o = g / P.inner, i = g % P.inner;
    const_cast<float*>(P.apron)[t] = P.src[goff(P, o, k, i)];
  }
}

// The published approach (one thread per line, walking global memory), exact like the CPU:
// truncated causal start over the extended signal, closed-form anticausal start. The benchmark's
// baseline; on the x axis its neighbouring threads walk lines a row apart (uncoalesced).
template <int NP>
__global__ void naive_kernel(float* data, long long outer, int n, long long inner, int boundary,
                             float gain, float z0, float z1, float z2, int h0, int h1, int h2) {
  const long long g = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (g >= outer * inner) return;
  const long long o = g / inner, i = g % inner;
  float* b = data + o * n * inner + i;
  const long long st = inner;
  for (int k = 0; k < n; ++k) b[k * st] *= gain;
  const float zs[3] = {z0, z1, z2};
  const int hs[3] = {h0, h1, h2};
  const int period = boundary == 0 ? 2 * n : boundary == 1 ? 2 * n - 2 : n;
#pragma unroll
  for (int q = 0; q < NP; ++q) {
    const float z = zs[q];
    const int terms = min(hs[q], period);
    float acc = 0.0f, zk = 1.0f;
    for (int k = 0; k < terms; ++k) {
      acc += zk * b[extend(-k, n, boundary) * st];
      zk *= z;
    }
    if (terms == period) acc /= (1.0f - powf(z, static_cast<float>(period)));
    b[0] = acc;
    for (int k = 1; k < n; ++k) b[k * st] += z * b[(k - 1) * st];
    float last;
    if (boundary == 0) {
      last = z / (z - 1.0f) * b[(n - 1) * st];
    } else if (boundary == 1) {
      last = z / (z * z - 1.0f) * (b[(n - 1) * st] + z * b[(n - 2) * st]);
    } else {
      const int pt = min(hs[q], n);
      float a2 = 0.0f, zj = 1.0f;
      for (int j = 0; j < pt; ++j) {
        a2 += zj * b[((n - 1 + j) % n) * st];
        zj *= z;
      }
      float sc = -z;
      if (pt == n) sc /= (1.0f - powf(z, static_cast<float>(n)));
      last = sc * a2;
    }
    b[(n - 1) * st] = last;
    for (int k = n - 2; k >= 0; --k) b[k * st] = z * (b[(k + 1) * st] - b[k * st]);
  }
}

// Terms after which the neglected tail |z|^K / (1 - |z|) of a recursion's start is below a
// sixteenth of float's epsilon (a margin for the gain and the passes that follow).
int horizon(double z) {
  const double eps = std::numeric_limits<float>::epsilon() / 16;
  const double a = std::fabs(z);
  return static_cast<int>(std::ceil(std::log(eps * (1 - a)) / std::log(a))) + 1;
}

int apron(const Poles& p) {
  int h = 0;
  for (int q = 0; q < p.count; ++q) h += horizon(p.z[q]);
  return h;
}

int boundary_code(Boundary b) {
  return b == Boundary::Mirror ? 1 : b == Boundary::Periodic ? 2 : 0;
}

template <bool kTrans>
void launch_tile(const Pass& P, int npoles, dim3 grid, std::size_t shmem) {
  auto pick = [&](void (*kernel)(Pass)) {
    if (shmem > 48 * 1024)  // opt in to large tiles (cheap; set per launch)
      check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(shmem)),
            "configuring the CUDA prefilter");
    kernel<<<grid, kThreads, shmem>>>(P);
  };
  switch (npoles) {
    case 0:
      pick(tile_kernel<kTrans, 0>);
      break;
    case 1:
      pick(tile_kernel<kTrans, 1>);
      break;
    case 2:
      pick(tile_kernel<kTrans, 2>);
      break;
    default:
      pick(tile_kernel<kTrans, 3>);
      break;
  }
}

// One tiled pass over `axis`: src -> dst (dst may equal src) or src -> surface.
void tiled_pass(const float* src, float* dst, const Layout& layout, std::size_t axis,
                const PrefilterConfig& cfg, const Poles& poles, unsigned long long surface,
                SurfaceKind kind) {
  const int n = static_cast<int>(layout.dims[axis]);
  long long outer = 1, inner = static_cast<long long>(layout.channels);
  for (std::size_t d = 0; d < axis; ++d) outer *= static_cast<long long>(layout.dims[d]);
  for (std::size_t d = axis + 1; d < layout.rank(); ++d)
    inner *= static_cast<long long>(layout.dims[d]);

  Pass P{};
  P.src = src;
  P.dst = dst;
  P.surface = surface;
  P.surface_kind = kind;
  P.outer = outer;
  P.inner = inner;
  P.lines_total = outer * inner;
  P.n = n;
  P.channels = static_cast<int>(layout.channels);
  P.boundary = boundary_code(cfg.boundary);
  P.rank = static_cast<int>(layout.rank());
  P.nx = static_cast<int>(layout.dims.back());
  P.ny = layout.rank() >= 2 ? static_cast<int>(layout.dims[layout.rank() - 2]) : 1;
  P.gain = static_cast<float>(poles.gain);
  for (int q = 0; q < poles.count; ++q) P.z[q] = static_cast<float>(poles.z[q]);
  P.H = poles.count ? apron(poles) : 0;

  const int chunk = cfg.chunk > 0 ? cfg.chunk : (n <= kWholeMax ? n : kChunk);
  P.L = std::min(chunk, n);
  P.chunks = (n + P.L - 1) / P.L;
  P.whole = P.chunks == 1;
  const int window = P.L + 2 * P.H;
  const bool trans = inner < 32;
  const int want = cfg.lines > 0 ? cfg.lines : (trans ? kTransLines : kColumnLines);
  if (trans) {
    P.rows = std::max(1, want / static_cast<int>(inner));
    P.lines = P.rows * static_cast<int>(inner);
    P.S = window | 1;  // odd stride: per-line walks hit distinct banks
  } else {
    P.rows = 1;
    P.lines = want;
    P.S = window;
  }
  const std::size_t shmem =
      static_cast<std::size_t>(trans ? P.lines * P.S : P.lines * window) * sizeof(float);
  if (shmem > 200 * 1024)
    throw Error("CUDA prefilter: tile of " + std::to_string(shmem) +
                " bytes exceeds shared memory; use a shorter chunk or fewer lines");

  DeviceBuffer aprons;
  if (!P.whole && src == dst && kind == SurfaceKind::None) {
    aprons = DeviceBuffer(static_cast<std::size_t>(P.chunks) * 2 * P.H * P.lines_total);
    P.apron = aprons.data();
    gather_aprons<<<2048, 256>>>(P);
    check_launch("CUDA prefilter (aprons)");
  }
  const long long blocks_x =
      trans ? (outer + P.rows - 1) / P.rows : outer * ((inner + P.lines - 1) / P.lines);
  if (blocks_x > 0x7fffffffLL || P.chunks > 65535)
    throw Error("CUDA prefilter: array too large for one launch");
  const dim3 grid(static_cast<unsigned>(blocks_x), static_cast<unsigned>(P.chunks));
  if (trans)
    launch_tile<true>(P, poles.count, grid, shmem);
  else
    launch_tile<false>(P, poles.count, grid, shmem);
  check_launch("CUDA prefilter");
  if (aprons.size()) synchronize("CUDA prefilter");  // the side buffer dies with this scope
}

void naive_pass(float* data, const Layout& layout, std::size_t axis, const PrefilterConfig& cfg,
                const Poles& poles) {
  const int n = static_cast<int>(layout.dims[axis]);
  long long outer = 1, inner = static_cast<long long>(layout.channels);
  for (std::size_t d = 0; d < axis; ++d) outer *= static_cast<long long>(layout.dims[d]);
  for (std::size_t d = axis + 1; d < layout.rank(); ++d)
    inner *= static_cast<long long>(layout.dims[d]);
  const long long lines = outer * inner;
  const unsigned blocks = static_cast<unsigned>((lines + 127) / 128);
  float z[3] = {0, 0, 0};
  int h[3] = {0, 0, 0};
  for (int q = 0; q < poles.count; ++q) {
    z[q] = static_cast<float>(poles.z[q]);
    h[q] = horizon(poles.z[q]);
  }
  const float gain = static_cast<float>(poles.gain);
  const int b = boundary_code(cfg.boundary);
  switch (poles.count) {
    case 1:
      naive_kernel<1>
          <<<blocks, 128>>>(data, outer, n, inner, b, gain, z[0], z[1], z[2], h[0], h[1], h[2]);
      break;
    case 2:
      naive_kernel<2>
          <<<blocks, 128>>>(data, outer, n, inner, b, gain, z[0], z[1], z[2], h[0], h[1], h[2]);
      break;
    default:
      naive_kernel<3>
          <<<blocks, 128>>>(data, outer, n, inner, b, gain, z[0], z[1], z[2], h[0], h[1], h[2]);
      break;
  }
  check_launch("CUDA prefilter (naive)");
}

void check_config(const Layout& layout, const PrefilterConfig& cfg, const char* what) {
  layout.check(what);
  check_degree(cfg.degree, 0, kMaxDegree);
  if (cfg.chunk < 0 || cfg.lines < 0)
    throw Error(std::string(what) + ": chunk and lines must be >= 0");
  for (std::size_t d : layout.dims)
    if (d > 0x7fffffffULL) throw Error(std::string(what) + ": axis longer than 2^31 samples");
}

}  // namespace

void prefilter_axis(float* data, const Layout& layout, std::size_t axis,
                    const PrefilterConfig& cfg) {
  check_config(layout, cfg, "CUDA prefilter");
  if (axis >= layout.rank())
    throw Error("CUDA prefilter: axis " + std::to_string(axis) + " out of range");
  const Poles poles = bspline_poles(cfg.degree);
  if (poles.count == 0 || layout.dims[axis] < 2) return;  // identity
  if (cfg.kernel == PrefilterKernel::Naive)
    naive_pass(data, layout, axis, cfg, poles);
  else
    tiled_pass(data, data, layout, axis, cfg, poles, 0, SurfaceKind::None);
}

void prefilter(float* data, const Layout& layout, const PrefilterConfig& cfg) {
  check_config(layout, cfg, "CUDA prefilter");
  for (std::size_t axis = 0; axis < layout.rank(); ++axis) prefilter_axis(data, layout, axis, cfg);
}

void prefilter_to_surface(const float* src, const Layout& layout, std::uint64_t surface,
                          SurfaceFormat format, float* scratch, const PrefilterConfig& cfg) {
  check_config(layout, cfg, "CUDA prefilter into a texture");
  const SurfaceKind kind = format == SurfaceFormat::R32F   ? SurfaceKind::R32F
                           : format == SurfaceFormat::R16F ? SurfaceKind::R16F
                                                           : SurfaceKind::RGBA32F;
  if (kind != SurfaceKind::RGBA32F && layout.channels != 1)
    throw Error("CUDA prefilter into a texture: a one-channel texture format cannot hold " +
                std::to_string(layout.channels) + " channels");
  if (layout.rank() > 1 && scratch == nullptr)
    throw Error("CUDA prefilter into a texture: a scratch buffer is required for 2-D and 3-D");
  const Poles poles = bspline_poles(cfg.degree);
  PrefilterConfig c = cfg;
  c.kernel = PrefilterKernel::Tiled;
  // All axes but x: src -> scratch (first pass out of place), then in place on scratch.
  const float* cur = src;
  const std::size_t last = layout.rank() - 1;
  for (std::size_t axis = 0; axis < last; ++axis) {
    if (poles.count == 0 || layout.dims[axis] < 2) {
      if (cur == src) {
        copy_device(scratch, src, layout.size());
        cur = scratch;
      }
      continue;
    }
    tiled_pass(cur, scratch, layout, axis, c, poles, 0, SurfaceKind::None);
    cur = scratch;
  }
  // x last, into the surface (a pass without poles copies when x has length 1 or degree < 2).
  Poles px = poles;
  if (layout.dims[last] < 2) px = Poles{};
  tiled_pass(cur, nullptr, layout, last, c, px, surface, kind);
}

void prefilter(ArrayF& a, const PrefilterConfig& cfg) {
  const Layout layout = Layout::of(a);
  check_config(layout, cfg, "CUDA prefilter");
  require("CUDA prefilter");
  DeviceBuffer buf(a.size());
  buf.upload(a.data(), a.size());
  prefilter(buf.data(), layout, cfg);
  buf.download(a.data(), a.size());
  synchronize("CUDA prefilter");
}

}  // namespace sv::cuda
