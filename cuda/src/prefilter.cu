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
// prefilter() avoids the in-place chunked pass where it can: it ping-pongs the chunked axes
// between the array and one scratch copy (out of place, no gather kernel, no side buffer), with
// an even number of out-of-place passes so the result ends in the array (plan_ping_pong()).
// On 3-D arrays with whole x and y lines, prefilter() runs x and y in one persistent kernel
// (fused_xy_kernel: x tiles of a plane, then its y tiles some planes later, read back from L2)
// and then z.
#include <cuda_fp16.h>
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "boundary.cuh"
#include "check.cuh"
#include "config.h"
#include "prefilter_poles.h"
#include "splineview/bspline.h"
#include "splineview/cuda_prefilter.h"

namespace sv::cuda {
namespace {

using detail::boundary_code;
using detail::check;
using detail::check_config;
using detail::check_launch;
using detail::extend;

constexpr int kThreads = 256;    // threads per block (loads and stores)
constexpr int kLines = 32;       // lines per tile: one warp runs the recursions
constexpr int kMaxWindow = 384;  // longest window (chunk + 2 aprons) of a chunked tile: 48 KiB
constexpr int kMaxWholeWindow = 1088;  // longest window of a whole-line tile (136 KiB)
constexpr int kBatch = 8;              // values per register batch in the recursions
constexpr int kApronTable = 128;       // whole-line aprons up to this many samples use a table

enum class SurfaceKind : int { None = 0, R32F, RGBA32F, R16F };

struct Pass {
  const float* src;
  float* dst;
  const float* apron;  // side buffer (chunked, in place), else null
  unsigned long long surface;
  SurfaceKind surface_kind;
  long long outer, inner, lines_total;
  int n, H, L, chunks;
  int lines;  // column tiles: lines per tile (<= kLines)
  int rows;   // transposed tiles: rows of o per tile (rows * channels <= kLines)
  int S;      // shared row stride of one line (transposed tiles)
  int channels;
  int boundary;  // detail::kReflect, kMirror, kPeriodic
  int rank;
  int nx, ny;  // surface coordinates of a point
  float gain;
  float z[3];   // real pole: z; conjugate pair (bit q of pairs): a1 = 2 Re z
  float a2[3];  // pair: -|z|^2
  float ss[3];  // pair: 1 / (1 - a1 - a2), the steady state of a constant input
  int pairs;    // bit q: section q is a conjugate pair (second-order recursions)
  int hz[3];    // horizon of each section (warm-up length of a segment's recursion)
  bool whole;
  bool async_loads;  // global -> shared through cp.async (else through registers)
  bool vec4;         // rows of column tiles are 16-byte aligned (inner % 4 == 0, aligned src)
  int hint;          // L2 priorities (fused pass): 0 none, 1 x tiles, 2 y tiles (l2_policy)
  // Whole lines: the window index each apron sample copies (hs = 0 .. 2H-1: left then right),
  // computed once on the host, so no tile evaluates extend() (integer divisions) for them.
  bool apron_table;
  int apron_src[kApronTable];
};

// Position of window sample w of tile line l in shared memory: column tiles interleave the
// lines (a warp reads one row), transposed tiles keep each line contiguous (odd stride S).
template <int C>
__device__ __forceinline__ int sidx(const Pass& P, int l, int w) {
  return C == 0 ? w * kLines + l : l * P.S + w;
}

// Walks `count` values at p, p + d, p + 2d, ... (d: a signed stride, a constant in the callers
// that can make it one), applying y = step(x, k) to the k-th; with kWrite each y is stored in
// place. Values come in register batches, the next batch loaded before the current one is used,
// so shared-memory latency hides behind the chain of the steps (the recursions are bound by
// instruction issue: a walking pointer, no bounds test per value, full batches, then a short
// remainder).
template <bool kWrite, class Step>
__device__ __forceinline__ void walk(float* p, int count, int d, Step step) {
  int k = 0;
  if (count >= kBatch) {
    float v[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) v[j] = p[j * d];
    for (; k + 2 * kBatch <= count; k += kBatch) {
      float nx[kBatch];
#pragma unroll
      for (int j = 0; j < kBatch; ++j) nx[j] = p[(kBatch + j) * d];
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        const float y = step(v[j], k + j);
        if (kWrite) p[j * d] = y;
      }
      p += kBatch * d;
#pragma unroll
      for (int j = 0; j < kBatch; ++j) v[j] = nx[j];
    }
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const float y = step(v[j], k + j);
      if (kWrite) p[j * d] = y;
    }
    p += kBatch * d;
    k += kBatch;
  }
  for (; k < count; ++k, p += d) {
    const float y = step(*p, k);
    if (kWrite) *p = y;
  }
}

// Runs a first-order recursion over `count` values at b[pos * ST], pos = first, first + dir, ...,
// from the state `c` before the first, and returns the state after the last. Causal:
// c <- x + z c; anticausal: c <- z (c - x), as fma(z, c, -z x). With kWrite the states are
// stored in place.
template <int ST, bool kCausal, bool kWrite>
__device__ __forceinline__ float run(float* b, int first, int count, float z, float c) {
  const float nz = -z;
  walk<kWrite>(b + first * ST, count, kCausal ? ST : -ST, [&](float x, int) {
    c = kCausal ? fmaf(z, c, x) : fmaf(z, c, nz * x);
    return c;
  });
  return c;
}

// The second-order recursion of a conjugate pair, y <- x + a1 y[-1] + a2 y[-2], over `count`
// values at b[pos * ST], pos = first, first + dir, ..., from the states s = (y[-1], y[-2]); the
// same both ways (the anticausal walks backwards). Returns the states after the last value.
template <int ST, bool kCausal, bool kWrite>
__device__ __forceinline__ float2 run2(float* b, int first, int count, float a1, float a2,
                                       float2 s) {
  float y1 = s.x, y2 = s.y;
  walk<kWrite>(b + first * ST, count, kCausal ? ST : -ST, [&](float x, int) {
    const float y = fmaf(a1, y1, fmaf(a2, y2, x));
    y2 = y1;
    y1 = y;
    return y;
  });
  return make_float2(y1, y2);
}

// The recursions of every pole over the tile's lines, in place, by all threads of the block:
// thread t takes line t % 32 and segment t / 32 of the window. A segment's recursion starts hq
// values early (hq = the pole's horizon), reading its neighbour's values before anyone writes
// (hence the first __syncthreads of each direction), so that the start error has died out where
// the segment begins: the apron idea again, inside the tile. The window's own ends start from
// the assumption that the signal continues as its end value.
constexpr int kSegments = kThreads / kLines;

// kPairs: sections may be conjugate pairs (Pass::pairs), each one second-order recursion each
// way, started like the first-order ones: from the steady state of the first value read.
template <int ST, int NP, bool kPairs>
__device__ __forceinline__ void filter_tile(const Pass& P, float* line, bool active, int len) {
  const int seg = threadIdx.x / kLines;
  const int seg_len = (len + kSegments - 1) / kSegments;
  const int a = min(len, seg * seg_len), e = min(len, a + seg_len);
  const bool has = active && a < e;
#pragma unroll
  for (int q = 0; q < NP; ++q) {
    const float z = P.z[q];
    const int hq = P.hz[q];
    if (kPairs && ((P.pairs >> q) & 1)) {
      const float a2 = P.a2[q], ss = P.ss[q];
      // Causal.
      float2 st = make_float2(0.0f, 0.0f);
      if (has && a > 0) {
        const int ws = max(0, a - hq);
        const float y0 = line[ws * ST] * ss;
        st = run2<ST, true, false>(line, ws, a - ws, z, a2, make_float2(y0, y0));
      }
      __syncthreads();
      if (has) {
        if (a == 0) {
          const float y0 = line[0] * ss;
          st = make_float2(y0, y0);
        }
        run2<ST, true, true>(line, a, e - a, z, a2, st);
      }
      __syncthreads();
      // Anticausal.
      if (has && e < len) {
        const int we = min(len, e + hq) - 1;
        const float w0 = line[we * ST] * ss;
        st = run2<ST, false, false>(line, we, we - e + 1, z, a2, make_float2(w0, w0));
      }
      __syncthreads();
      if (has) {
        if (e == len) {
          const float w0 = line[(len - 1) * ST] * ss;
          st = make_float2(w0, w0);
        }
        run2<ST, false, true>(line, e - 1, e - a, z, a2, st);
      }
      __syncthreads();
      continue;
    }
    // Causal.
    float c = 0.0f;
    if (has && a > 0) {
      const int ws = max(0, a - hq);
      c = run<ST, true, false>(line, ws + 1, a - ws - 1, z, line[ws * ST] * (1.0f / (1.0f - z)));
    }
    __syncthreads();
    if (has) {
      int first = a;
      if (a == 0) {
        c = line[0] * (1.0f / (1.0f - z));
        line[0] = c;
        first = 1;
      }
      run<ST, true, true>(line, first, e - first, z, c);
    }
    __syncthreads();
    // Anticausal.
    if (has && e < len) {
      const int we = min(len, e + hq) - 1;
      c = run<ST, false, false>(line, we - 1, we - e, z, line[we * ST] * (z / (z - 1.0f)));
    }
    __syncthreads();
    if (has) {
      int first = e - 1;
      if (e == len) {
        c = line[(len - 1) * ST] * (z / (z - 1.0f));
        line[(len - 1) * ST] = c;
        first = len - 2;
      }
      run<ST, false, true>(line, first, first - a + 1, z, c);
    }
    __syncthreads();
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

// 16 bytes global -> shared through L2 only (cp.async.cg): the fused pass's y tiles read what
// other blocks of the same kernel wrote, which this SM's L1 may hold stale.
__device__ __forceinline__ void copy16_async_cg(float* smem, const float* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
}

// L2 eviction priorities for the fused pass (Pass::hint): its x tiles read the samples once
// (evict first) and write the intermediate that the y tiles read soon after (evict last); the
// y tiles read the intermediate and write the result, both once (evict first).
__device__ __forceinline__ unsigned long long l2_policy(bool last) {
  unsigned long long p;
  if (last)
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  else
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}

__device__ __forceinline__ void copy4_async_hint(float* smem, const float* gmem,
                                                 unsigned long long pol) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global.L2::cache_hint [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem),
               "l"(pol)
               : "memory");
}

__device__ __forceinline__ void copy16_async_cg_hint(float* smem, const float* gmem,
                                                     unsigned long long pol) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem),
               "l"(pol)
               : "memory");
}

__device__ __forceinline__ void store_hint(float* g, float v, unsigned long long pol) {
  asm volatile("st.global.L2::cache_hint.f32 [%0], %1, %2;" ::"l"(g), "f"(v), "l"(pol) : "memory");
}

// One tile: lines x window [s - H, e + H) of chunk `ch` = [s, e). C = 0: column tile (inner >=
// 32), lines i0 .. i0 + valid_lines - 1 of outer index o0; C = 1..4: transposed tile of the x
// axis with C interleaved channels, rows o0 .. o0 + valid_rows - 1. NP: number of poles.
// kCoherent: the tile's samples were written by other blocks of the same launch (the fused
// pass), so they are read through L2 (cp.async.cg, or ld.global.cg), never through L1 or the
// read-only path. Ends after the stores (no barrier).
template <int C, int NP, bool kCoherent, bool kPairs = false>
__device__ __forceinline__ void tile_body(const Pass& P, float* sh, int ch, long long o0,
                                          long long i0, int valid_lines, int valid_rows) {
  const int s = ch * P.L;
  const int e = min(s + P.L, P.n);
  const int m = e - s;
  const int H = P.H;
  const int len = m + 2 * H;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  constexpr int kWarps = kThreads / 32;
  constexpr int CC = C > 0 ? C : 1;  // channels of a transposed tile (no division by 0)

  // 1. Load the centre [s, e) from src, then the aprons: straight from src through the boundary
  //    extension when they can be read there (chunked, out of place), else from the side buffer
  //    or, for whole lines, in step 2. The filter is linear, so the gain is applied once, at the
  //    store. With async_loads every load of the tile is in flight at once (cp.async, no
  //    registers); otherwise in batches of eight.
  const bool apron_direct = !P.whole && P.apron == nullptr;
  const float gain = P.gain;
  const unsigned long long load_pol = P.hint ? l2_policy(false) : 0;
  const unsigned long long store_pol = P.hint ? l2_policy(P.hint == 1) : 0;
  if (kCoherent) {
    if (C == 0 && P.vec4) {
      // Rows of the tile as 16-byte pieces (8 threads per row of 32 lines, 32 rows at a time).
      const int q = threadIdx.x % 8, r0 = threadIdx.x / 8;
      if (4 * q < valid_lines) {
        const float* g = P.src + i0 + 4 * q + (o0 * P.n + s + r0) * P.inner;
        float* d = sh + (H + r0) * kLines + 4 * q;
        const long long step = (kThreads / 8) * P.inner;
        for (int w = r0; w < m; w += kThreads / 8, g += step, d += (kThreads / 8) * kLines)
          if (P.hint)
            copy16_async_cg_hint(d, g, load_pol);
          else
            copy16_async_cg(d, g);
      }
      __pipeline_commit();
      __pipeline_wait_prior(0);
    } else if (C == 0) {
      if (lane < valid_lines) {
        const float* g = P.src + i0 + lane + (o0 * P.n + s) * P.inner;
        for (int w = warp; w < m; w += kWarps)
          sh[sidx<C>(P, lane, H + w)] = __ldcg(g + static_cast<long long>(w) * P.inner);
      }
    } else {
      for (int r = warp; r < valid_rows; r += kWarps) {
        const float* row = P.src + ((o0 + r) * P.n + s) * CC;
        float* line0 = sh + sidx<C>(P, r * CC, 0);
        for (int f = lane; f < m * CC; f += 32)
          line0[(f % CC) * P.S + H + f / CC] = __ldcg(row + f);
      }
    }
  } else if (P.async_loads) {
    if (C == 0) {
      if (lane < valid_lines) {  // a walking pointer, no extension
        const long long step = kWarps * P.inner;
        const float* g = P.src + i0 + lane + (o0 * P.n + s + warp) * P.inner;
        float* d = sh + (H + warp) * kLines + lane;
        for (int w = warp; w < m; w += kWarps, g += step, d += kWarps * kLines)
          __pipeline_memcpy_async(d, g, sizeof(float));
      }
    } else {
      for (int r = warp; r < valid_rows; r += kWarps) {  // contiguous in memory
        float* line0 = sh + sidx<C>(P, r * CC, 0);
        const float* row = P.src + ((o0 + r) * P.n + s) * CC;
        if (C == 1) {  // pointer walks: no index arithmetic per sample
          const float* g = row + lane;
          float* d = line0 + H + lane;
          if (P.hint)
            for (int f = lane; f < m; f += 32, g += 32, d += 32) copy4_async_hint(d, g, load_pol);
          else
            for (int f = lane; f < m; f += 32, g += 32, d += 32)
              __pipeline_memcpy_async(d, g, sizeof(float));
        } else {
          for (int f = lane; f < m * CC; f += 32)
            if (P.hint)
              copy4_async_hint(line0 + (f % CC) * P.S + H + f / CC, row + f, load_pol);
            else
              __pipeline_memcpy_async(line0 + (f % CC) * P.S + H + f / CC, row + f, sizeof(float));
        }
      }
    }
  } else if (C == 0) {
    const bool ok = lane < valid_lines;
    const float* col = P.src + i0 + lane + (o0 * P.n + s) * P.inner;
    for (int w0 = warp; w0 < m; w0 += kWarps * 8) {
      float v[8];
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        const int w = w0 + u * kWarps;
        v[u] = ok && w < m ? __ldg(col + static_cast<long long>(w) * P.inner) : 0.0f;
      }
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        const int w = w0 + u * kWarps;
        if (w < m) sh[sidx<C>(P, lane, H + w)] = v[u];
      }
    }
  } else {
    // A warp per row: lanes walk the row's chunk in order (coalesced), eight loads in flight.
    const int per_row = m * CC;
    for (int r = warp; r < valid_rows; r += kWarps) {
      const float* row = P.src + ((o0 + r) * P.n + s) * CC;
      float* line0 = sh + sidx<C>(P, r * CC, 0);
      for (int f0 = lane; f0 < per_row; f0 += 32 * 8) {
        float v[8];
#pragma unroll
        for (int u = 0; u < 8; ++u) {
          const int f = f0 + 32 * u;
          v[u] = f < per_row ? __ldg(row + f) : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < 8; ++u) {
          const int f = f0 + 32 * u;
          if (f < per_row) line0[(f % CC) * P.S + H + f / CC] = v[u];
        }
      }
    }
  }
  if (apron_direct) {
    // 2 H samples per line through the extension. Column tiles: a lane per line (a warp reads
    // 128 contiguous bytes); transposed tiles: each row's apron side is H * C contiguous floats.
    const int per_side = C > 0 ? H * CC : H;
    const int count = 2 * per_side * (C > 0 ? valid_rows : valid_lines);
    for (int t = threadIdx.x; t < count; t += kThreads) {
      float* d;
      const float* g;
      if (C == 0) {
        const int l = t % valid_lines, hs = t / valid_lines;
        const int w = hs < H ? hs : m + hs;  // m + hs = H + m + (hs - H)
        d = sh + sidx<C>(P, l, w);
        g = P.src + i0 + l + (o0 * P.n + extend(s - H + w, P.n, P.boundary)) * P.inner;
      } else {
        const int c = t % CC, rest = t / CC;
        const int h = rest % H, rs = rest / H;
        const int r = rs % valid_rows, side = rs / valid_rows;
        const int w = side == 0 ? h : H + m + h;
        d = sh + sidx<C>(P, r * CC + c, w);
        g = P.src + ((o0 + r) * P.n + extend(s - H + w, P.n, P.boundary)) * CC + c;
      }
      if (P.async_loads)
        __pipeline_memcpy_async(d, g, sizeof(float));
      else
        *d = __ldg(g);
    }
  }
  if (!kCoherent && P.async_loads) __pipeline_commit();
  if (!P.whole && !apron_direct) {
    for (int t = threadIdx.x; t < 2 * H * valid_lines; t += kThreads) {
      const int l = t % valid_lines, hs = t / valid_lines;
      const int side = hs / H, h = hs % H;
      const long long g = C > 0 ? (o0 + l / CC) * C + l % CC : o0 * P.inner + i0 + l;
      const int w = side == 0 ? h : H + m + h;
      sh[sidx<C>(P, l, w)] = __ldg(P.apron + aoff(P, ch, side, h, g));
    }
  }
  if (!kCoherent && P.async_loads) __pipeline_wait_prior(0);
  __syncthreads();

  // 2. Whole lines: the apron is the boundary extension of the tile's own centre.
  if (P.whole && H > 0) {
    // A warp per apron position, a lane per line (no division).
    for (int hs = warp; hs < 2 * H; hs += kWarps) {
      const int w = hs < H ? hs : H + P.n + (hs - H);
      const int k = P.apron_table ? P.apron_src[hs] : extend(w - H, P.n, P.boundary);
      if (lane < valid_lines) sh[sidx<C>(P, lane, w)] = sh[sidx<C>(P, lane, H + k)];
    }
    __syncthreads();
  }

  // 3. Recursions, all threads (line x segment); ends with __syncthreads.
  {
    const int l = threadIdx.x % kLines;
    const bool active = l < valid_lines;
    if (C == 0)
      filter_tile<kLines, NP, kPairs>(P, sh + l, active, len);
    else
      filter_tile<1, NP, kPairs>(P, sh + (active ? l : 0) * P.S, active, len);
  }

  // 4. Store the chunk [s, e).
  if (C == 0) {
    if (lane < valid_lines) {
      const long long step = kWarps * P.inner;
      float* g = P.dst + i0 + lane + (o0 * P.n + s + warp) * P.inner;
      const float* d = sh + (H + warp) * kLines + lane;
      if (P.hint)
        for (int w = warp; w < m; w += kWarps, g += step, d += kWarps * kLines)
          store_hint(g, gain * *d, store_pol);
      else
        for (int w = warp; w < m; w += kWarps, g += step, d += kWarps * kLines) *g = gain * *d;
    }
  } else if (P.surface_kind != SurfaceKind::None) {
    for (int r = 0; r < valid_rows; ++r)
      for (int x = threadIdx.x; x < m; x += kThreads) {
        float v[4] = {0, 0, 0, 0};
#pragma unroll
        for (int c = 0; c < C; ++c) v[c] = gain * sh[sidx<C>(P, r * C + c, H + x)];
        store_surface(P, (o0 + r) * P.n + s + x, v);
      }
  } else {
    // A warp per row (the row is contiguous in memory): per-row set-up amortised over the
    // row, pointer walks for one channel.
    for (int r = warp; r < valid_rows; r += kWarps) {
      float* row = P.dst + ((o0 + r) * P.n + s) * CC;
      const float* line0 = sh + sidx<C>(P, r * CC, H);
      if (C == 1) {
        float* g = row + lane;
        const float* d = line0 + lane;
        if (P.hint) {
#pragma unroll 4
          for (int f = lane; f < m; f += 32, g += 32, d += 32) store_hint(g, gain * *d, store_pol);
        } else {
#pragma unroll 4
          for (int f = lane; f < m; f += 32, g += 32, d += 32) *g = gain * *d;
        }
      } else if (P.hint) {
        for (int f = lane; f < m * CC; f += 32)
          store_hint(row + f, gain * line0[(f % CC) * P.S + f / CC], store_pol);
      } else {
        for (int f = lane; f < m * CC; f += 32) row[f] = gain * line0[(f % CC) * P.S + f / CC];
      }
    }
  }
}

// One tile per block: blockIdx.x picks the lines, blockIdx.y the chunk.
template <int C, int NP, bool kPairs = false>
__global__ void __launch_bounds__(kThreads, 5) tile_kernel(Pass P) {
  extern __shared__ float sh[];
  long long o0 = 0, i0 = 0;
  int valid_lines, valid_rows = 0;
  if (C > 0) {
    o0 = static_cast<long long>(blockIdx.x) * P.rows;
    valid_rows = static_cast<int>(min(static_cast<long long>(P.rows), P.outer - o0));
    valid_lines = valid_rows * C;
  } else {
    const long long tiles_per_o = (P.inner + P.lines - 1) / P.lines;
    o0 = blockIdx.x / tiles_per_o;
    i0 = (blockIdx.x % tiles_per_o) * P.lines;
    valid_lines = static_cast<int>(min(static_cast<long long>(P.lines), P.inner - i0));
  }
  tile_body<C, NP, false, kPairs>(P, sh, static_cast<int>(blockIdx.y), o0, i0, valid_lines,
                                  valid_rows);
}

// The fused y/x pass (prefilter_fused_xy): a persistent grid; work item t (from a global
// ticket, so items start in order) is an x tile (rows of one plane; X, transposed with C
// channels) or a y tile (32 columns of one plane; Y, column tile). Order: the x tiles of planes
// 0 .. lag-1, then per step s the y tiles of plane s - lag and the x tiles of plane s, then the
// last y tiles. A y tile waits until all x tiles of its plane have counted themselves done.
// No deadlock: an item waits only for items with smaller tickets, taken by blocks that are
// running and wait, in turn, only for smaller ones.
struct Fused {
  unsigned long long* ticket;
  int* done;  // per plane: x tiles written
  long long planes, total;
  int rows_per_plane;  // ny
  int x_tiles, y_tiles, lag;
};

__device__ __forceinline__ int load_acquire(const int* p) {
  int v;
  asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

struct Item {
  bool is_y;
  long long plane;
  int tile;
};

__device__ __forceinline__ Item decode_item(const Fused& F, long long t) {
  const long long per_step = F.x_tiles + F.y_tiles;
  const long long head = static_cast<long long>(F.lag) * F.x_tiles;
  const long long middle = (F.planes - F.lag) * per_step;
  Item it;
  if (t < head) {
    it.is_y = false;
    it.plane = t / F.x_tiles;
    it.tile = static_cast<int>(t % F.x_tiles);
  } else if (t - head < middle) {
    const long long u = t - head;
    const long long step = F.lag + u / per_step;
    const int r = static_cast<int>(u % per_step);
    it.is_y = r < F.y_tiles;
    it.plane = it.is_y ? step - F.lag : step;
    it.tile = it.is_y ? r : r - F.y_tiles;
  } else {
    const long long w = t - head - middle;
    it.is_y = true;
    it.plane = F.planes - F.lag + w / F.y_tiles;
    it.tile = static_cast<int>(w % F.y_tiles);
  }
  return it;
}

template <int C, int NP>
__global__ void __launch_bounds__(kThreads, 5) fused_xy_kernel(Pass X, Pass Y, Fused F) {
  extern __shared__ float sh[];
  __shared__ unsigned long long ticket;
  for (;;) {
    if (threadIdx.x == 0) ticket = atomicAdd(F.ticket, 1ULL);
    __syncthreads();  // also: the previous item's stores have read their tile
    const long long t = static_cast<long long>(ticket);
    __syncthreads();
    if (t >= F.total) return;
    const Item it = decode_item(F, t);
    if (!it.is_y) {
      const int r0 = it.tile * X.rows;
      const int valid_rows = min(X.rows, F.rows_per_plane - r0);
      tile_body<C, NP, false>(X, sh, 0, it.plane * F.rows_per_plane + r0, 0, valid_rows * C,
                              valid_rows);
      // Release: every thread's stores before the count (fence, barrier, then one atomic).
      __threadfence();
      __syncthreads();
      if (threadIdx.x == 0) atomicAdd(F.done + it.plane, 1);
    } else {
      if (threadIdx.x == 0)
        while (load_acquire(F.done + it.plane) < F.x_tiles) __nanosleep(100);
      __syncthreads();
      const long long i0 = static_cast<long long>(it.tile) * Y.lines;
      const int valid_lines = static_cast<int>(min(static_cast<long long>(Y.lines), Y.inner - i0));
      tile_body<0, NP, true>(Y, sh, 0, it.plane, i0, valid_lines, 0);
    }
  }
}

// ---- 3-D in one pass (one_pass_3d_kernel; experimental, SV_ONE_PASS_3D=1) ------------------
//
// The fused y/x pass's persistent grid with a third kind of work item, so that z runs in the
// same pass and the array crosses device memory about once. A z item (strip j, batch b) owns
// kZLines consecutive lines of a plane (a thread a line) and the planes [bB, bB + B) (the last
// batch takes the rest, B to 2B - 1 planes). It waits until every y tile of its planes has
// written them and until item (j, b - 1) is done, then:
//  - runs the causal recursion down its batch from the state item (j, b - 1) left (batch 0:
//    from the window's left apron, the boundary extension of planes 0 .. H), stores the causal
//    values in place and its final state in a per-line buffer;
//  - runs the anticausal recursion of batch b - 1 (its causal values, stored by item (j, b - 1)),
//    started H planes into batch b from the steady state of the causal value there (the apron
//    idea along z: the neglected rest is below float's epsilon), storing the coefficients;
//  - the last batch also runs the causal recursion through the right apron (the extension of
//    its own planes, kept in shared memory) and the anticausal from the window's end down
//    through its batch and batch b - 1 without a warm-up.
// Every plane is then written four times (x, y, causal, result) and read four times, by items
// a few planes of work apart: with the items in plane order, what they hand on is still in L2.
// One channel, one real pole (degrees 2 and 3), reflect or mirror.
constexpr int kZLines = kThreads;  // lines of a z item

struct OnePass3D {
  float* data;
  float* state;                // per line: the causal state after the batch of the last z item
  int* x_done;                 // per plane: x tiles written
  int* y_done;                 // per plane: y tiles written
  int* z_done;                 // per strip: batches done
  const uint2* items;          // ticket -> (kind << 30 | plane or batch, tile or strip)
  unsigned long long* ticket;  // the next work item
  long long total;             // work items
  long long plane;             // samples per plane (ny * nx)
  int nz, B, nb, H;
  int rows_per_plane, x_tiles, y_tiles;
  float z, gain;
  int lsrc[32];  // plane of window sample -H + h (the left apron)
  int rsrc[32];  // plane of window sample nz + h (the right apron)
};

__device__ __forceinline__ void z_item(const OnePass3D& Z, float* sh, int b, int j) {
  const bool last = b == Z.nb - 1;
  const int p0 = b * Z.B, m = (last ? Z.nz : p0 + Z.B) - p0;
  if (threadIdx.x == 0) {
    for (int p = p0; p < p0 + m; ++p)
      while (load_acquire(Z.y_done + p) < Z.y_tiles) __nanosleep(64);
    if (b > 0)
      while (load_acquire(Z.z_done + j) < b) __nanosleep(64);
  }
  __syncthreads();
  const long long line = static_cast<long long>(j) * kZLines + threadIdx.x;
  if (line >= Z.plane) return;
  const long long P = Z.plane;
  float* g = Z.data + line;
  float* col = sh + threadIdx.x;  // row k of this line at col[k * kZLines]
  const float z = Z.z, nz = -z, gain = Z.gain;
  const int H = Z.H;
  // Rows: [0, m) this batch, then (the last batch) [m, m + H) its right apron; batch b - 1's
  // causal values at [2B - 1 + H, ...) would overlap nothing, but they are read in place below.
  {
    const float* s = g + p0 * P;
    int k = 0;
    for (; k + 8 <= m; k += 8) {
      float v[8];
#pragma unroll
      for (int u = 0; u < 8; ++u) v[u] = __ldcg(s + (k + u) * P);
#pragma unroll
      for (int u = 0; u < 8; ++u) col[(k + u) * kZLines] = v[u];
    }
    for (; k < m; ++k) col[k * kZLines] = __ldcg(s + k * P);
  }
  float c;
  if (b == 0) {
    // The window starts H samples before plane 0, at the steady state of its first value.
    c = col[Z.lsrc[0] * kZLines] * (1.0f / (1.0f - z));
    for (int h = 1; h < H; ++h) c = fmaf(z, c, col[Z.lsrc[h] * kZLines]);
  } else {
    c = __ldcg(Z.state + line);
  }
  int len = m;
  if (last) {
    for (int h = 0; h < H; ++h) col[(m + h) * kZLines] = col[(Z.rsrc[h] - p0) * kZLines];
    len = m + H;
  }
  for (int k = 0; k < len; ++k) {
    c = fmaf(z, c, col[k * kZLines]);
    col[k * kZLines] = c;
  }
  float a = 0.0f;
  if (!last) {
    Z.state[line] = c;
    float* s = g + p0 * P;
    for (int k = 0; k < m; ++k) s[k * P] = col[k * kZLines];
    if (b == 0) return;
    // Batch b - 1's anticausal starts H planes into this batch.
    a = col[(H - 1) * kZLines] * (z / (z - 1.0f));
    for (int k = H - 2; k >= 0; --k) a = fmaf(z, a, nz * col[k * kZLines]);
  } else {
    a = col[(len - 1) * kZLines] * (z / (z - 1.0f));
    for (int k = len - 2; k >= m; --k) a = fmaf(z, a, nz * col[k * kZLines]);
    float* s = g + p0 * P;
    for (int k = m - 1; k >= 0; --k) {
      a = fmaf(z, a, nz * col[k * kZLines]);
      s[k * P] = gain * a;
    }
    if (b == 0) return;
  }
  // Batch b - 1: its causal values from the array (item (j, b - 1) stored them), in register
  // batches of eight, backwards.
  float* s = g + static_cast<long long>(p0 - Z.B) * P;
  int k = Z.B - 1;
  for (; k >= 7; k -= 8) {
    float v[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) v[u] = __ldcg(s + (k - u) * P);
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      a = fmaf(z, a, nz * v[u]);
      s[(k - u) * P] = gain * a;
    }
  }
  for (; k >= 0; --k) {
    a = fmaf(z, a, nz * __ldcg(s + k * P));
    s[k * P] = gain * a;
  }
}

template <int C, int NP>
__global__ void __launch_bounds__(kThreads, 3) one_pass_3d_kernel(Pass X, Pass Y, OnePass3D Z) {
  extern __shared__ float sh[];
  __shared__ unsigned long long ticket;
  for (;;) {
    if (threadIdx.x == 0) ticket = atomicAdd(Z.ticket, 1ULL);
    __syncthreads();  // also: the previous item's stores have read their tile
    const long long t = static_cast<long long>(ticket);
    __syncthreads();
    if (t >= Z.total) return;
    const uint2 code = Z.items[t];
    const int kind = static_cast<int>(code.x >> 30);
    const int a = static_cast<int>(code.x & 0x3fffffffu), tile = static_cast<int>(code.y);
    int* counter;
    if (kind == 0) {
      const int r0 = tile * X.rows;
      const int valid_rows = min(X.rows, Z.rows_per_plane - r0);
      tile_body<C, NP, false>(X, sh, 0, static_cast<long long>(a) * Z.rows_per_plane + r0, 0,
                              valid_rows * C, valid_rows);
      counter = Z.x_done + a;
    } else if (kind == 1) {
      if (threadIdx.x == 0)
        while (load_acquire(Z.x_done + a) < Z.x_tiles) __nanosleep(100);
      __syncthreads();
      const long long i0 = static_cast<long long>(tile) * Y.lines;
      const int valid_lines = static_cast<int>(min(static_cast<long long>(Y.lines), Y.inner - i0));
      tile_body<0, NP, true>(Y, sh, 0, a, i0, valid_lines, 0);
      counter = Z.y_done + a;
    } else {
      z_item(Z, sh, a, tile);
      counter = Z.z_done + tile;
    }
    // Release: every thread's stores before the count (fence, barrier, then one atomic).
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(counter, 1);
  }
}

// Copies the aprons of every chunk of every line into the side buffer (raw samples). Index
// order: line fastest.
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
    const int k = extend(side == 0 ? s - P.H + h : e + h, P.n, P.boundary);
    const long long o = g / P.inner, i = g % P.inner;
    const_cast<float*>(P.apron)[t] = P.src[goff(P, o, k, i)];
  }
}

// ---- 2-D in one pass (single_pass_2d) ---------------------------------------------------------
//
// A block owns the outputs [y0, y0 + Ly) x [x0, x0 + W) of a one-channel 2-D array and walks
// the rows [y0 - H, y0 + Ly + H) (H = the apron) in batches of kSpRows rows: each batch is
// loaded as rows of the window [x0 - H, x0 + W + H), filtered along x in shared memory (the
// tiles' filter_tile, 32 rows as its lines), then a thread per column runs the y causal
// recursions of every section down the batch (states carried from batch to batch) and the y
// anticausal recursions of the batch before, started H rows into this batch (the apron idea
// along y: the neglected rest is below float's epsilon), and stores that batch. So the array is
// read once and written once instead of twice. In place: the samples a block reads outside its
// own outputs (the x aprons of every row, the y apron rows) come from side buffers that
// gather_sp_aprons() fills before the pass, raw, so no block reads what another has written.
constexpr int kSpRows = 32;  // rows per batch (= kLines: the x filter's lines)
constexpr int kSpWindow =
    288;                    // longest row window W + 2H: two batches of it fit three times per SM
constexpr int kSpBufs = 2;  // batches held: the one filtered, the one awaiting its anticausal

struct SinglePass {
  Pass P;                 // sections (z, a2, ss, pairs, hz), gain, boundary, H
  float* data;            // ny x nx, in place
  const float* xa;        // x aprons: [block column j][row y][side][h]
  const float* ya;        // y apron rows: [chunk c][side][h][column]
  int nx, ny, W, Ly, bx;  // bx: block columns
  int S;                  // shared row stride (odd)
};

// The side buffers of single_pass_kernel, in 32-bit index arithmetic where it fits (the host
// keeps the counts below 2^31): blockIdx.y = 0 the x aprons, a thread per (block column, side,
// h), the same source column for every row, eight rows of it per step (loads together, then the
// stores), a block per eight rows (grid-stride); blockIdx.y = 1 the y apron rows, in items of
// 2048 columns of one row (chunk, side, h), eight columns a thread, loads before stores.
constexpr int kGatherRows = 8;
constexpr int kGatherSeg = kThreads * kGatherRows;  // columns of an apron row's item
__global__ void gather_sp_aprons(SinglePass Q, float* __restrict__ xa, float* __restrict__ ya,
                                 int chunks) {
  const int H = Q.P.H;
  const float* __restrict__ data = Q.data;
  if (blockIdx.y == 0) {
    const int per_row = Q.bx * 2 * H;
    for (int k = threadIdx.x; k < per_row; k += blockDim.x) {
      const int h = k % H, side = (k / H) % 2, j = k / (2 * H);
      const int x0 = j * Q.W, w = min(Q.W, Q.nx - x0);
      const int x = extend(side == 0 ? x0 - H + h : x0 + w + h, Q.nx, Q.P.boundary);
      float* dst = xa + static_cast<long long>(j) * Q.ny * 2 * H + side * H + h;
      for (int y = blockIdx.x * kGatherRows; y < Q.ny; y += gridDim.x * kGatherRows) {
        float v[kGatherRows];
#pragma unroll
        for (int i = 0; i < kGatherRows; ++i)
          v[i] = y + i < Q.ny ? data[static_cast<long long>(y + i) * Q.nx + x] : 0.0f;
#pragma unroll
        for (int i = 0; i < kGatherRows; ++i)
          if (y + i < Q.ny) dst[static_cast<long long>(y + i) * 2 * H] = v[i];
      }
    }
  } else {
    // Items of kGatherSeg columns of one apron row, eight loads a thread in flight (a block per
    // whole row, a load at a time, kept about 2 KB in flight per multiprocessor: the gather
    // took a fifth of the pass on 15257x3736).
    const int segs = (Q.nx + kGatherSeg - 1) / kGatherSeg;
    const int items = chunks * 2 * H * segs;
    for (int it = blockIdx.x; it < items; it += gridDim.x) {
      const int r = it / segs, x0 = (it % segs) * kGatherSeg + threadIdx.x;
      const int h = r % H, side = (r / H) % 2, c = r / (2 * H);
      const int y0 = c * Q.Ly, l = min(Q.Ly, Q.ny - y0);
      const int y = extend(side == 0 ? y0 - H + h : y0 + l + h, Q.ny, Q.P.boundary);
      const float* row = Q.data + static_cast<long long>(y) * Q.nx;
      float* d = ya + static_cast<long long>(r) * Q.nx;
      float v[kGatherRows];
#pragma unroll
      for (int i = 0; i < kGatherRows; ++i) {
        const int x = x0 + i * kThreads;
        v[i] = x < Q.nx ? row[x] : 0.0f;
      }
#pragma unroll
      for (int i = 0; i < kGatherRows; ++i) {
        const int x = x0 + i * kThreads;
        if (x < Q.nx) d[x] = v[i];
      }
    }
  }
}

// One section's causal step on v (real pole: c <- v + z c; pair: y <- v + a1 y1 + a2 y2).
template <bool kPairs>
__device__ __forceinline__ float sp_causal(const Pass& P, int q, float v, float& s1, float& s2) {
  if (kPairs && ((P.pairs >> q) & 1)) {
    const float y = fmaf(P.z[q], s1, fmaf(P.a2[q], s2, v));
    s2 = s1;
    s1 = y;
    return y;
  }
  s1 = fmaf(P.z[q], s1, v);
  return s1;
}

// One section's anticausal step (real pole: c <- z (c - v); pair: as the causal one).
template <bool kPairs>
__device__ __forceinline__ float sp_anticausal(const Pass& P, int q, float v, float& s1,
                                               float& s2) {
  if (kPairs && ((P.pairs >> q) & 1)) {
    const float y = fmaf(P.z[q], s1, fmaf(P.a2[q], s2, v));
    s2 = s1;
    s1 = y;
    return y;
  }
  s1 = fmaf(P.z[q], s1, -P.z[q] * v);
  return s1;
}

// States as if the section's input had been v forever (its steady state), then v's output.
template <bool kPairs>
__device__ __forceinline__ float sp_start(const Pass& P, int q, bool causal, float v, float& s1,
                                          float& s2) {
  if (kPairs && ((P.pairs >> q) & 1)) {
    s1 = s2 = v * P.ss[q];
    return s1;
  }
  const float z = P.z[q];
  s1 = causal ? v * (1.0f / (1.0f - z)) : v * (z / (z - 1.0f));
  return s1;
}

template <int NP, bool kPairs>
__global__ void __launch_bounds__(kThreads, 3) single_pass_kernel(SinglePass Q) {
  extern __shared__ float sh[];
  const Pass& P = Q.P;
  const int H = P.H, S = Q.S;
  const int j = blockIdx.x % Q.bx, c = blockIdx.x / Q.bx;
  const int x0 = j * Q.W, w = min(Q.W, Q.nx - x0);
  const int y0 = c * Q.Ly, ly = min(Q.Ly, Q.ny - y0);
  const int len = w + 2 * H;  // the row window
  const int V = ly + 2 * H;   // rows walked: virtual row v is array row y0 - H + v
  const int nb = (V + kSpRows - 1) / kSpRows;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int t = threadIdx.x;
  const bool col = t < w;

  // Batch b's rows into buffer b % kSpBufs, one cp.async group (empty past the last batch).
  auto load = [&](int b) {
    if (b < nb) {
      float* buf = sh + (b % kSpBufs) * kSpRows * S;
      for (int r = warp; r < kSpRows; r += kThreads / 32) {
        const int v = b * kSpRows + r;
        if (v >= V) break;
        float* d = buf + r * S;
        const int y = y0 - H + v;
        if (v >= H && v < H + ly) {  // own row: centre from the array, aprons from xa
          const float* row = Q.data + static_cast<long long>(y) * Q.nx + x0 - H;
          const float* xr = Q.xa + (static_cast<long long>(j) * Q.ny + y) * 2 * H;
          if (lane < H) {
            __pipeline_memcpy_async(d + lane, xr + lane, sizeof(float));
            __pipeline_memcpy_async(d + H + w + lane, xr + H + lane, sizeof(float));
          }
          // Pointer walks, four samples a step at fixed offsets (indices cost four integer
          // instructions a sample in 64-bit address arithmetic).
          const float* g = row + H + lane;
          const float* const gend = row + H + w;
          float* sd = d + H + lane;
          for (; g + 96 < gend; g += 128, sd += 128) {
            __pipeline_memcpy_async(sd, g, sizeof(float));
            __pipeline_memcpy_async(sd + 32, g + 32, sizeof(float));
            __pipeline_memcpy_async(sd + 64, g + 64, sizeof(float));
            __pipeline_memcpy_async(sd + 96, g + 96, sizeof(float));
          }
          for (; g < gend; g += 32, sd += 32) __pipeline_memcpy_async(sd, g, sizeof(float));
        } else {  // apron row: the whole window from ya (raw, full width)
          const int side = v < H ? 0 : 1, h = v < H ? v : v - H - ly;
          const float* yr = Q.ya + ((static_cast<long long>(c) * 2 + side) * H + h) * Q.nx;
          for (int k = lane; k < len; k += 32)
            __pipeline_memcpy_async(d + k, yr + extend(x0 - H + k, Q.nx, P.boundary),
                                    sizeof(float));
        }
      }
    }
    __pipeline_commit();
  };

  // y states of every section (pairs: two each).
  float cs1[NP] = {}, cs2[NP] = {};
  float* out_col = Q.data + static_cast<long long>(y0) * Q.nx + x0 + t;

  // The causal steps of every section over `count` rows at p, p + S, ..., in place.
  auto causal_rows = [&](float* p, int count) {
    walk<true>(p, count, S, [&](float u, int) {
#pragma unroll
      for (int q = 0; q < NP; ++q) u = sp_causal<kPairs>(P, q, u, cs1[q], cs2[q]);
      return u;
    });
  };
  // The anticausal steps over `count` rows at p, p - S, ... (walk rows v, v - 1, ...); with
  // kStore every row is an output row and its results are stored (times the gain), through a
  // walking pointer; else the rows only warm the states up.
  float as1[NP] = {}, as2[NP] = {};
  const long long nxl = Q.nx;
  auto anticausal_rows = [&](float* p, int count, int v, auto store) {
    constexpr bool kStore = decltype(store)::value;
    float* o = out_col + (v - H) * nxl;  // row v's output (used where v is an output row)
    walk<false>(p, count, -S, [&](float u, int) {
#pragma unroll
      for (int q = 0; q < NP; ++q) u = sp_anticausal<kPairs>(P, q, u, as1[q], as2[q]);
      if (kStore) {
        *o = P.gain * u;
        o -= nxl;
      }
      return u;
    });
  };
  auto row_ptr = [&](int v) {
    return sh + ((v / kSpRows) % kSpBufs) * kSpRows * S + (v % kSpRows) * S + H + t;
  };
  // Rows top, top - 1, ..., bottom (one buffer's), the output rows [H, H + ly) among them stored:
  // the apron rows above, the output rows, the apron rows below, each its own walk.
  auto anticausal_span = [&](int top, int bottom) {
    const int a = min(top, H + ly - 1), z = max(bottom, H);
    if (top > a)
      anticausal_rows(row_ptr(top), top - max(a, bottom - 1), top,
                      std::integral_constant<bool, false>{});
    if (a >= z) anticausal_rows(row_ptr(a), a - z + 1, a, std::integral_constant<bool, true>{});
    const int c = min(top, z - 1);
    if (c >= bottom)
      anticausal_rows(row_ptr(c), c - bottom + 1, c, std::integral_constant<bool, false>{});
  };

  // The anticausal recursions of batch b (its final values stored), started at row `from` of
  // the walk: H rows into batch b + 1 (a warm-up whose neglected start is below float's
  // epsilon, the apron idea along y), or the walk's last row.
  auto anticausal = [&](int b) {
    if (!col) return;
    const int first = b * kSpRows, last = min(V, first + kSpRows) - 1;
    const int from = min(V - 1, last + H);
    float u = *row_ptr(from);
#pragma unroll
    for (int q = 0; q < NP; ++q) u = sp_start<kPairs>(P, q, false, u, as1[q], as2[q]);
    if (from > last) {
      anticausal_rows(row_ptr(from - 1), from - 1 - last, from - 1,
                      std::integral_constant<bool, false>{});
      anticausal_span(last, first);
    } else if (last > first) {  // the walk's last row is in this batch: an apron row
      anticausal_span(last - 1, first);
    }
  };

  load(0);
  for (int b = 0; b < nb; ++b) {
    __pipeline_wait_prior(0);
    __syncthreads();
    float* buf = sh + (b % kSpBufs) * kSpRows * S;
    const int rows = min(kSpRows, V - b * kSpRows);
    // x: the rows as the tile's lines (all threads; ends with a barrier).
    {
      const int l = threadIdx.x % kLines;
      filter_tile<1, NP, kPairs>(P, buf + (l < rows ? l : 0) * S, l < rows, len);
    }
    // y causal down this batch, a thread per column (the walk's first row: the steady state).
    if (col) {
      float* p = buf + H + t;
      if (b == 0) {
        float u = *p;
#pragma unroll
        for (int q = 0; q < NP; ++q) u = sp_start<kPairs>(P, q, true, u, cs1[q], cs2[q]);
        *p = u;
        causal_rows(p + S, rows - 1);
      } else {
        causal_rows(p, rows);
      }
    }
    // y anticausal of the batch before (its warm-up reads this batch's first H rows).
    if (b > 0) anticausal(b - 1);
    __syncthreads();  // batch b - 1's buffer is free: batch b + 1 goes there
    load(b + 1);
  }
  anticausal(nb - 1);
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
  const int period = boundary == detail::kReflect  ? 2 * n
                     : boundary == detail::kMirror ? 2 * n - 2
                                                   : n;
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
    if (boundary == detail::kReflect) {
      last = z / (z - 1.0f) * b[(n - 1) * st];
    } else if (boundary == detail::kMirror) {
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

using detail::Sections;

// A conjugate pair's horizon: the smallest K with sum_{k >= K} |h[k]| below the same sixteenth
// of float's epsilon, h the impulse response of 1 / ((1 - z w^-1)(1 - conj z w^-1)),
// |h[k]| = |z|^k |sin((k + 1) theta) / sin theta| <= |z|^k min(k + 1, 1 / |sin theta|) (the bound
// is what is summed). At least the first-order horizon of |z|.
int pair_horizon(std::complex<double> z) {
  const double eps = std::numeric_limits<float>::epsilon() / 16;
  const double r = std::abs(z), s = std::fabs(std::sin(std::arg(z)));
  const int h1 = horizon(r);
  if (s == 0) return 2 * h1;  // (never: pairs have imag != 0)
  // The tail from K on, summed until its terms are negligible (they fall as r^k, r < 1).
  auto tail = [&](int K) {
    double t = 0, rk = std::pow(r, K);
    for (int k = K; rk > eps * 1e-6 && k < K + 100000; ++k, rk *= r)
      t += rk * std::min(static_cast<double>(k + 1), 1 / s);
    return t;
  };
  int K = h1;
  while (tail(K) > eps && K < 100000) ++K;
  return K;
}

int section_horizon(const Sections& p, int q) {
  const std::complex<double> z = p.z[static_cast<std::size_t>(q)];
  return z.imag() != 0 ? pair_horizon(z) : horizon(z.real());
}

int apron(const Sections& p) {
  int h = 0;
  for (int q = 0; q < p.count; ++q) h += section_horizon(p, q);
  return h;
}

Sections sections_of(const Poles& p) {
  Sections s;
  s.count = p.count;
  s.gain = p.gain;
  for (int q = 0; q < p.count; ++q) s.z[static_cast<std::size_t>(q)] = {p.z[q], 0.0};
  return s;
}

int apron(const Poles& p) {
  return apron(sections_of(p));
}

// The stream-ordered pool returns its memory to the system at every synchronisation by default,
// which makes the next allocation slow (tens of microseconds); keep up to 1 GiB instead (the pool
// then holds the largest side buffer or scratch copy used so far, up to that; beyond it a pass
// takes milliseconds and the allocation is noise).
void keep_pool_memory() {
  static const bool done = [] {
    int dev = 0;
    cudaMemPool_t pool = nullptr;
    if (cudaGetDevice(&dev) == cudaSuccess &&
        cudaDeviceGetDefaultMemPool(&pool, dev) == cudaSuccess) {
      std::uint64_t keep = std::uint64_t{1} << 30;
      cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
    }
    cudaGetLastError();
    return true;
  }();
  (void)done;
}

int multiprocessors() {
  static const int count = [] {
    int dev = 0, n = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
      cudaGetLastError();
      return 100;
    }
    return n;
  }();
  return count;
}

template <int C>
void launch_tile_c(const Pass& P, int npoles, dim3 grid, std::size_t shmem) {
  // Passes with conjugate pairs (smoothing splines) take kernels of their own, so that the
  // interpolating prefilter's code is the same as without them.
  const bool pairs = P.pairs != 0;
  void (*kernel)(Pass) = npoles == 0   ? tile_kernel<C, 0>
                         : npoles == 1 ? (pairs ? tile_kernel<C, 1, true> : tile_kernel<C, 1>)
                         : npoles == 2 ? (pairs ? tile_kernel<C, 2, true> : tile_kernel<C, 2>)
                                       : (pairs ? tile_kernel<C, 3, true> : tile_kernel<C, 3>);
  // Opt in to large tiles, and prefer the largest shared-memory carveout: the tiles are the
  // occupancy limit (cheap calls; set per launch).
  if (shmem > 48 * 1024)
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(shmem)),
          "configuring the CUDA prefilter");
  check(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                             cudaSharedmemCarveoutMaxShared),
        "configuring the CUDA prefilter");
  kernel<<<grid, kThreads, shmem>>>(P);
}

void launch_tile(const Pass& P, int C, int npoles, dim3 grid, std::size_t shmem) {
  switch (C) {
    case 0:
      return launch_tile_c<0>(P, npoles, grid, shmem);
    case 1:
      return launch_tile_c<1>(P, npoles, grid, shmem);
    case 2:
      return launch_tile_c<2>(P, npoles, grid, shmem);
    case 3:
      return launch_tile_c<3>(P, npoles, grid, shmem);
    default:
      return launch_tile_c<4>(P, npoles, grid, shmem);
  }
}

// (outer, n, inner) of `axis`, as the CPU prefilter views it.
struct AxisView {
  long long outer = 1, inner = 1;
  int n = 1;
};

AxisView view_of(const Layout& layout, std::size_t axis) {
  AxisView v;
  v.n = static_cast<int>(layout.dims[axis]);
  v.inner = static_cast<long long>(layout.channels);
  for (std::size_t d = 0; d < axis; ++d) v.outer *= static_cast<long long>(layout.dims[d]);
  for (std::size_t d = axis + 1; d < layout.rank(); ++d)
    v.inner *= static_cast<long long>(layout.dims[d]);
  return v;
}

// Chunk length of a tiled pass (n = whole lines).
int chunk_length(const AxisView& v, int H, const PrefilterConfig& cfg) {
  const int n = v.n;
  // Automatic chunks: the longest the shared-memory window allows, balanced (no short last
  // chunk), then halved while the grid would leave the GPU short of blocks (small images).
  const int max_chunk = std::max(16, kMaxWindow - 2 * H);
  int chunk = cfg.chunk;
  if (chunk == 0) {
    const long long inner = v.inner, outer = v.outer;
    const bool trans_axis = inner <= 4;
    const long long line_tiles =
        trans_axis ? (outer + std::max(1LL, kLines / inner) - 1) / std::max(1LL, kLines / inner)
                   : outer * ((inner + kLines - 1) / kLines);
    const long long want_blocks = 4LL * multiprocessors();
    int count = (n + max_chunk - 1) / max_chunk;
    // Whole lines need no aprons from other blocks (no side buffer, no extra reads): take them
    // up to the largest tile when the grid still has blocks enough.
    if (n + 2 * H <= kMaxWholeWindow && line_tiles >= 2LL * multiprocessors()) count = 1;
    while (line_tiles * count < want_blocks && (n + 2 * count - 1) / (2 * count) >= 4 * H &&
           (n + 2 * count - 1) / (2 * count) >= 64)
      count *= 2;
    chunk = (n + count - 1) / count;
  }
  return std::min(chunk, n);
}

// Which axes prefilter() runs out of place (src -> the other of array and scratch). An in-place
// pass over chunked lines needs the gather kernel and the side buffer (about 10% more traffic
// and a launch); out of place it reads its aprons straight from src. So every chunked axis goes
// out of place, and the count is made even (the result must end in the array, without a copy
// back): with an odd count, one whole-line axis goes out of place too (as fast as in place), or,
// with none, the first chunked axis stays in place (side buffer, freed before the scratch is
// taken: the peak stays one copy of the array). Empty when nothing needs a scratch.
std::vector<bool> plan_ping_pong(const Layout& layout, const PrefilterConfig& cfg) {
  const std::size_t rank = layout.rank();
  std::vector<bool> out(rank, false);
  if (cfg.kernel != PrefilterKernel::Tiled || !cfg.ping_pong) return {};
  const Poles poles = bspline_poles(cfg.degree);
  if (poles.count == 0) return {};
  const int H = apron(poles);
  std::vector<std::size_t> chunked, whole;
  for (std::size_t a = 0; a < rank; ++a) {
    const AxisView v = view_of(layout, a);
    if (v.n < 2) continue;  // identity: no pass
    (chunk_length(v, H, cfg) < v.n ? chunked : whole).push_back(a);
  }
  if (chunked.size() % 2 == 1) {
    if (!whole.empty())
      chunked.push_back(whole.front());
    else
      chunked.erase(chunked.begin());
  }
  if (chunked.empty()) return {};
  for (std::size_t a : chunked) out[a] = true;
  return out;
}

// The description of one tiled pass over `axis` (src -> dst, dst may equal src, or src ->
// surface), its tile kind C (0: column tiles, 1..4: transposed with C channels) and the bytes of
// shared memory a tile takes.
struct PassPlan {
  Pass P;
  int C = 0;
  std::size_t shmem = 0;
};

// The sections' coefficients, horizons, apron and gain into P.
void set_sections(Pass& P, const Sections& poles) {
  P.gain = static_cast<float>(poles.gain);
  for (int q = 0; q < poles.count; ++q) {
    const std::complex<double> z = poles.z[static_cast<std::size_t>(q)];
    if (z.imag() != 0) {
      const double a1 = 2 * z.real(), a2 = -std::norm(z);
      P.pairs |= 1 << q;
      P.z[q] = static_cast<float>(a1);
      P.a2[q] = static_cast<float>(a2);
      P.ss[q] = static_cast<float>(1 / (1 - a1 - a2));
    } else {
      P.z[q] = static_cast<float>(z.real());
    }
    P.hz[q] = section_horizon(poles, q);
  }
  P.H = poles.count ? apron(poles) : 0;
}

PassPlan plan_pass(const float* src, float* dst, const Layout& layout, std::size_t axis,
                   const PrefilterConfig& cfg, const Sections& poles, unsigned long long surface,
                   SurfaceKind kind) {
  const AxisView view = view_of(layout, axis);
  const int n = view.n;
  const long long outer = view.outer, inner = view.inner;

  PassPlan plan;
  Pass& P = plan.P;
  P = Pass{};
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
  set_sections(P, poles);
  const int chunk = chunk_length(view, P.H, cfg);

  P.L = std::min(chunk, n);
  P.chunks = (n + P.L - 1) / P.L;
  P.whole = P.chunks == 1;
  P.apron_table = P.whole && 2 * P.H <= kApronTable;
  if (P.apron_table)
    for (int hs = 0; hs < 2 * P.H; ++hs) {
      const int w = hs < P.H ? hs : P.H + n + (hs - P.H);
      P.apron_src[hs] = detail::extend(w - P.H, n, P.boundary);
    }
  P.async_loads = cfg.async_loads;
  const int window = P.L + 2 * P.H;
  // Transposed tiles for the x axis (inner = channels); column tiles elsewhere. An axis with
  // inner < 32 that is not x (e.g. y of a 2 x 4 x 3 array) is treated like x with `inner`
  // channels only when inner <= 4; otherwise column tiles with fewer valid lines.
  plan.C = inner <= 4 ? static_cast<int>(inner) : 0;
  const int want = cfg.lines > 0 ? std::min(cfg.lines, kLines) : kLines;
  if (plan.C > 0) {
    P.rows = std::max(1, want / plan.C);
    P.lines = P.rows * plan.C;
    P.S = window | 1;  // odd stride: per-line walks hit distinct banks
  } else {
    P.rows = 1;
    P.lines = want;
    P.S = window;
  }
  P.vec4 = inner % 4 == 0 && P.lines % 4 == 0 && reinterpret_cast<std::uintptr_t>(src) % 16 == 0;
  plan.shmem =
      static_cast<std::size_t>(plan.C > 0 ? P.lines * P.S : kLines * window) * sizeof(float);
  if (plan.shmem > 200 * 1024)
    throw Error("CUDA prefilter: a tile of " + std::to_string(plan.shmem) +
                " bytes exceeds shared memory; use a shorter chunk");
  return plan;
}

// One tiled pass over `axis`: src -> dst (dst may equal src) or src -> surface.
PassPlan plan_pass(const float* src, float* dst, const Layout& layout, std::size_t axis,
                   const PrefilterConfig& cfg, const Poles& poles, unsigned long long surface,
                   SurfaceKind kind) {
  return plan_pass(src, dst, layout, axis, cfg, sections_of(poles), surface, kind);
}

void tiled_pass(const float* src, float* dst, const Layout& layout, std::size_t axis,
                const PrefilterConfig& cfg, const Sections& poles, unsigned long long surface,
                SurfaceKind kind) {
  PassPlan plan = plan_pass(src, dst, layout, axis, cfg, poles, surface, kind);
  Pass& P = plan.P;
  const int C = plan.C;
  const std::size_t shmem = plan.shmem;
  const long long outer = P.outer, inner = P.inner;

  // The side buffer comes from the stream-ordered allocator: no device-wide synchronisation,
  // freed in stream order after the pass.
  float* aprons = nullptr;
  std::size_t apron_bytes = 0;
  if (!P.whole && src == dst && kind == SurfaceKind::None) {
    apron_bytes = static_cast<std::size_t>(P.chunks) * 2 * P.H * P.lines_total * sizeof(float);
    keep_pool_memory();
    void* p = nullptr;
    check(cudaMallocAsync(&p, apron_bytes, 0), "CUDA prefilter: allocating the apron buffer");
    aprons = static_cast<float*>(p);
    detail::note_alloc(apron_bytes);
    P.apron = aprons;
    gather_aprons<<<2048, 256>>>(P);
    check_launch("CUDA prefilter (aprons)");
  }
  const long long blocks_x =
      C > 0 ? (outer + P.rows - 1) / P.rows : outer * ((inner + P.lines - 1) / P.lines);
  if (blocks_x > 0x7fffffffLL || P.chunks > 65535)
    throw Error("CUDA prefilter: array too large for one launch");
  const dim3 grid(static_cast<unsigned>(blocks_x), static_cast<unsigned>(P.chunks));
  launch_tile(P, C, poles.count, grid, shmem);
  check_launch("CUDA prefilter");
  if (aprons) {
    check(cudaFreeAsync(aprons, 0), "CUDA prefilter: freeing the apron buffer");
    detail::note_free(apron_bytes);
  }
}

void tiled_pass(const float* src, float* dst, const Layout& layout, std::size_t axis,
                const PrefilterConfig& cfg, const Poles& poles, unsigned long long surface,
                SurfaceKind kind) {
  tiled_pass(src, dst, layout, axis, cfg, sections_of(poles), surface, kind);
}

template <int NP>
void* single_pass_kernel_np(bool pairs) {
  return pairs ? reinterpret_cast<void*>(single_pass_kernel<NP, true>)
               : reinterpret_cast<void*>(single_pass_kernel<NP, false>);
}

// SV_ONE_PASS_2D=0: never the one-pass 2-D kernel, whatever PrefilterConfig asks (for
// measurements: the per-axis passes in the same run).
bool one_pass_off() {
  static const bool off = [] {
    const char* e = std::getenv("SV_ONE_PASS_2D");
    return e && *e == '0';
  }();
  return off;
}

// Both axes of a one-channel 2-D array in one pass (single_pass_kernel), in place, with the same
// sections on both axes; false (nothing done) where it does not apply: other shapes, aprons
// longer than a batch, or images too small for row chunks of at least 8 aprons in blocks enough
// for every multiprocessor (there the apron rows and the idle SMs cost more than the second
// pass: 3815x934 0.049 against 0.039 ms per axis, BENCHMARKS).
// With run false only whether it applies (no allocation, no launch).
bool single_pass_2d(float* data, const Layout& layout, Boundary boundary, const Sections& s,
                    bool run = true) {
  if (layout.rank() != 2 || layout.channels != 1 || s.count < 1 || s.count > 3 ||
      layout.dims[0] < 2 || layout.dims[1] < 2 || layout.dims[0] > (1u << 30) ||
      layout.dims[1] > (1u << 30))
    return false;
  SinglePass Q{};
  Q.P.boundary = boundary_code(boundary);
  set_sections(Q.P, s);
  Q.P.gain = static_cast<float>(s.gain * s.gain);  // the sections run on both axes
  const int H = Q.P.H;
  if (H > kSpRows || 2 * H + 32 > kSpWindow) return false;
  Q.data = data;
  Q.ny = static_cast<int>(layout.dims[0]);
  Q.nx = static_cast<int>(layout.dims[1]);
  Q.W = std::min(kThreads, kSpWindow - 2 * H);
  Q.S = (Q.W + 2 * H) | 1;
  Q.bx = (Q.nx + Q.W - 1) / Q.W;
  const std::size_t shmem = static_cast<std::size_t>(kSpBufs) * kSpRows * Q.S * sizeof(float);
  const bool pairs = Q.P.pairs != 0;
  void* kernel = s.count == 1   ? single_pass_kernel_np<1>(pairs)
                 : s.count == 2 ? single_pass_kernel_np<2>(pairs)
                                : single_pass_kernel_np<3>(pairs);
  check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(shmem)),
        "configuring the one-pass CUDA prefilter");
  check(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                             cudaSharedmemCarveoutMaxShared),
        "configuring the one-pass CUDA prefilter");
  int per_sm = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, shmem),
        "configuring the one-pass CUDA prefilter");
  const long long sms = multiprocessors();
  // Chunks of rows: the count whose waves of resident blocks walk the fewest rows in all
  // (waves x (chunk rows + 2 H): a last wave that is barely filled costs a whole one, short
  // chunks walk their aprons again), each chunk at least 8 aprons and 64 rows long.
  const long long resident = std::max(1, per_sm) * sms;
  const long long most = std::max(1LL, static_cast<long long>(Q.ny) / std::max(8 * H, 64));
  long long chunks = 1, best = -1;
  for (long long c = 1; c <= most; ++c) {
    const long long ly = (Q.ny + c - 1) / c;
    const long long waves = (Q.bx * c + resident - 1) / resident;
    const long long cost = waves * (ly + 2 * H);
    if (best < 0 || cost < best) best = cost, chunks = c;
  }
  Q.Ly = static_cast<int>((Q.ny + chunks - 1) / chunks);
  chunks = (Q.ny + Q.Ly - 1) / Q.Ly;
  const long long blocks = Q.bx * chunks;
  const long long nside = Q.bx * static_cast<long long>(Q.ny) * 2 * H;
  if (per_sm < 1 || blocks < sms || blocks > 0x7fffffffLL || nside >= (1LL << 31) ||
      chunks * 2 * H >= (1LL << 31))
    return false;
  if (!run) return true;
  // The side buffers (stream-ordered, freed after the pass).
  const std::size_t nxa = static_cast<std::size_t>(Q.bx) * Q.ny * 2 * H;
  const std::size_t nya = static_cast<std::size_t>(chunks) * 2 * H * Q.nx;
  const std::size_t bytes = (nxa + nya) * sizeof(float);
  keep_pool_memory();
  void* p = nullptr;
  check(cudaMallocAsync(&p, bytes, 0), "CUDA prefilter: allocating the one-pass aprons");
  detail::note_alloc(bytes);
  float* xa = static_cast<float*>(p);
  float* ya = xa + nxa;
  Q.xa = xa;
  Q.ya = ya;
  const long long y_items = chunks * 2 * H * ((Q.nx + kGatherSeg - 1) / kGatherSeg);
  const int gx = std::max(static_cast<int>(std::min<long long>(y_items, 4096)),
                          std::min((Q.ny + kGatherRows - 1) / kGatherRows, 4096));
  gather_sp_aprons<<<dim3(static_cast<unsigned>(gx), 2), kThreads>>>(Q, xa, ya,
                                                                     static_cast<int>(chunks));
  check_launch("CUDA prefilter (one-pass aprons)");
  void* args[] = {&Q};
  check(
      cudaLaunchKernel(kernel, dim3(static_cast<unsigned>(blocks)), dim3(kThreads), args, shmem, 0),
      "CUDA prefilter (one pass)");
  check_launch("CUDA prefilter (one pass)");
  check(cudaFreeAsync(p, 0), "CUDA prefilter: freeing the one-pass aprons");
  detail::note_free(bytes);
  return true;
}

// The fused y/x pass, if it applies to this layout (else C of the result is -1).
struct FusedPlan {
  PassPlan x, y;
  int lag = 0;
  int blocks = 0;  // resident blocks of the persistent grid
  std::size_t shmem = 0;
  bool ok = false;
};

template <int C>
void* fused_kernel_c(int npoles) {
  return npoles == 1   ? reinterpret_cast<void*>(fused_xy_kernel<C, 1>)
         : npoles == 2 ? reinterpret_cast<void*>(fused_xy_kernel<C, 2>)
                       : reinterpret_cast<void*>(fused_xy_kernel<C, 3>);
}

void* fused_kernel(int C, int npoles) {
  switch (C) {
    case 1:
      return fused_kernel_c<1>(npoles);
    case 2:
      return fused_kernel_c<2>(npoles);
    case 3:
      return fused_kernel_c<3>(npoles);
    default:
      return fused_kernel_c<4>(npoles);
  }
}

FusedPlan plan_fused(float* data, const Layout& layout, const PrefilterConfig& cfg,
                     const Poles& poles) {
  FusedPlan f;
  if (layout.rank() != 3 || cfg.kernel != PrefilterKernel::Tiled || !cfg.fuse || poles.count == 0 ||
      layout.dims[1] < 2 || layout.dims[2] < 2)
    return f;
  // Whole lines on both axes wherever they fit a tile (the per-axis passes may chunk a small
  // array's lines for more blocks; the fused pass has blocks enough in its planes).
  const int H = apron(poles);
  const int longest = static_cast<int>(std::max(layout.dims[1], layout.dims[2]));
  if (cfg.chunk > 0 || longest + 2 * H > kMaxWholeWindow) return f;
  PrefilterConfig whole = cfg;
  whole.chunk = longest;
  f.x = plan_pass(data, data, layout, 2, whole, poles, 0, SurfaceKind::None);
  f.y = plan_pass(data, data, layout, 1, whole, poles, 0, SurfaceKind::None);
  if (!f.x.P.whole || !f.y.P.whole || f.x.C == 0 || f.y.C != 0 || f.y.P.inner < 8) return f;
  if (cfg.fuse_hints) {
    f.x.P.hint = 1;
    f.y.P.hint = 2;
  }
  f.shmem = std::max(f.x.shmem, f.y.shmem);
  void* kernel = fused_kernel(f.x.C, poles.count);
  check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(f.shmem)),
        "configuring the fused CUDA prefilter");
  check(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                             cudaSharedmemCarveoutMaxShared),
        "configuring the fused CUDA prefilter");
  int per_sm = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, f.shmem),
        "configuring the fused CUDA prefilter");
  if (per_sm < 1) return f;
  f.blocks = per_sm * multiprocessors();
  const long long planes = static_cast<long long>(layout.dims[0]);
  const long long x_tiles = (static_cast<long long>(layout.dims[1]) + f.x.P.rows - 1) / f.x.P.rows;
  const long long y_tiles = (f.y.P.inner + f.y.P.lines - 1) / f.y.P.lines;
  // Automatic lag: the planes the resident blocks span, plus one, so that a y tile rarely finds
  // its plane unfinished; the window of planes between an x tile's store and the y tile's load
  // (lag plus the planes in flight, twice for safety) must stay in L2.
  const long long span = (f.blocks + x_tiles + y_tiles - 1) / (x_tiles + y_tiles);
  const long long lag = cfg.fuse_lag > 0 ? cfg.fuse_lag : span + 1;
  f.lag = static_cast<int>(std::min(lag, planes));
  // Automatic: only where the items fill the persistent grid at least twice; smaller arrays
  // (32^3: 0.026 fused against 0.022 ms per axis on the H100) are bound by launches and the
  // counters' set-up, not by memory.
  if (cfg.fuse_lag == 0 && planes * (x_tiles + y_tiles) < 2LL * f.blocks) return f;
  f.ok = true;
  return f;
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

void prefilter_axis(const float* src, float* dst, const Layout& layout, std::size_t axis,
                    const PrefilterConfig& cfg) {
  if (src == dst) return prefilter_axis(dst, layout, axis, cfg);
  check_config(layout, cfg, "CUDA prefilter");
  if (axis >= layout.rank())
    throw Error("CUDA prefilter: axis " + std::to_string(axis) + " out of range");
  if (!src || !dst) throw Error("CUDA prefilter: a null source or destination");
  const Poles poles = bspline_poles(cfg.degree);
  if (poles.count == 0 || layout.dims[axis] < 2 || cfg.kernel == PrefilterKernel::Naive) {
    copy_device(dst, src, layout.size());
    prefilter_axis(dst, layout, axis, cfg);
    return;
  }
  tiled_pass(src, dst, layout, axis, cfg, poles, 0, SurfaceKind::None);
}

namespace detail {

int prefilter_apron(const Poles& poles) {
  return apron(poles);
}

int prefilter_apron(const Sections& s) {
  return apron(s);
}

bool prefilter_2d_sections(float* data, const Layout& layout, Boundary boundary,
                           const Sections& s) {
  if (one_pass_off()) return false;
  PrefilterConfig cfg;
  cfg.boundary = boundary;
  check_config(layout, cfg, "CUDA direct transform");
  return single_pass_2d(data, layout, boundary, s);
}

void prefilter_axis_sections(const float* src, float* dst, const Layout& layout, std::size_t axis,
                             Boundary boundary, const Sections& s) {
  PrefilterConfig cfg;
  cfg.boundary = boundary;
  check_config(layout, cfg, "CUDA direct transform");
  if (axis >= layout.rank())
    throw Error("CUDA direct transform: axis " + std::to_string(axis) + " out of range");
  if (s.count < 0 || s.count > 3)
    throw Error("CUDA direct transform: " + std::to_string(s.count) + " sections in one pass");
  if (s.count == 0 || layout.dims[axis] < 2) {
    if (src != dst) copy_device(dst, src, layout.size());
    return;
  }
  tiled_pass(src, dst, layout, axis, cfg, s, 0, SurfaceKind::None);
}

void prefilter_axis_poles(const float* src, float* dst, const Layout& layout, std::size_t axis,
                          Boundary boundary, const Poles& poles) {
  PrefilterConfig cfg;
  cfg.boundary = boundary;
  check_config(layout, cfg, "CUDA direct transform");
  if (axis >= layout.rank())
    throw Error("CUDA direct transform: axis " + std::to_string(axis) + " out of range");
  if (poles.count == 0 || layout.dims[axis] < 2) {
    if (src != dst) copy_device(dst, src, layout.size());
    return;
  }
  tiled_pass(src, dst, layout, axis, cfg, poles, 0, SurfaceKind::None);
}

}  // namespace detail

bool prefilter_fusable(const Layout& layout, const PrefilterConfig& cfg) {
  check_config(layout, cfg, "CUDA prefilter");
  if (!available()) return false;
  const Poles poles = bspline_poles(cfg.degree);
  if (layout.rank() == 2)
    return cfg.kernel == PrefilterKernel::Tiled && cfg.one_pass && !one_pass_off() &&
           cfg.chunk == 0 && cfg.lines == 0 && cfg.async_loads &&
           single_pass_2d(nullptr, layout, cfg.boundary, sections_of(poles), false);
  // Alignment does not decide whether it fuses (only how the y tiles load): a 16-byte aligned
  // stand-in pointer.
  return plan_fused(reinterpret_cast<float*>(std::uintptr_t{256}), layout, cfg, poles).ok;
}

namespace {

// Launches the fused pass that plan_fused() planned (f.ok; its passes hold the array).
void run_fused(const Layout& layout, FusedPlan& f, int npoles) {
  Fused F{};
  F.planes = static_cast<long long>(layout.dims[0]);
  F.rows_per_plane = static_cast<int>(layout.dims[1]);
  F.x_tiles = (F.rows_per_plane + f.x.P.rows - 1) / f.x.P.rows;
  F.y_tiles = static_cast<int>((f.y.P.inner + f.y.P.lines - 1) / f.y.P.lines);
  F.lag = f.lag;
  F.total = F.planes * (F.x_tiles + F.y_tiles);
  // The ticket and the per-plane counters: one small stream-ordered buffer, zeroed.
  const std::size_t bytes = sizeof(unsigned long long) + static_cast<std::size_t>(F.planes) * 4;
  keep_pool_memory();
  void* p = nullptr;
  check(cudaMallocAsync(&p, bytes, 0), "CUDA prefilter: allocating the fused pass's counters");
  detail::note_alloc(bytes);
  check(cudaMemsetAsync(p, 0, bytes, 0), "CUDA prefilter: zeroing the fused pass's counters");
  F.ticket = static_cast<unsigned long long*>(p);
  F.done = reinterpret_cast<int*>(static_cast<char*>(p) + sizeof(unsigned long long));
  const long long blocks = std::min<long long>(f.blocks, F.total);
  void* kernel = fused_kernel(f.x.C, npoles);
  void* args[] = {&f.x.P, &f.y.P, &F};
  check(cudaLaunchKernel(kernel, dim3(static_cast<unsigned>(blocks)), dim3(kThreads), args, f.shmem,
                         0),
        "CUDA prefilter (fused y/x pass)");
  check_launch("CUDA prefilter (fused y/x pass)");
  check(cudaFreeAsync(p, 0), "CUDA prefilter: freeing the fused pass's counters");
  detail::note_free(bytes);
}

// ---- 3-D in one pass (experimental) -----------------------------------------------------------

// SV_ONE_PASS_3D=1: prefilter() runs 3-D arrays in one pass where one_pass_3d() applies
// (experimental: off by default until it is measured faster than the fused y/x pass and z).
bool one_pass_3d_on() {
  const char* e = std::getenv("SV_ONE_PASS_3D");
  return e != nullptr && e[0] == '1';
}

int env_int(const char* name, int fallback) {
  const char* e = std::getenv(name);
  return e != nullptr && e[0] != '\0' ? std::atoi(e) : fallback;
}

// The work items' order, built on the host and kept on the device between calls of the same
// shape and lags (a few hundred KB each, at most eight kept): step s takes the x tiles of plane s,
// the y tiles of plane s - ly and, where plane s - ly - lz is the last of z batch b, the z items of
// batch b. Every wait is then for items of smaller tickets.
struct ItemList {
  uint2* dev = nullptr;
  long long count = 0;
};

const uint2* one_pass_3d_items(const std::vector<long long>& key, int nz, int x_tiles, int y_tiles,
                               int strips, int B, int nb, int ly, int lz, long long* count) {
  static std::map<std::vector<long long>, ItemList> lists;
  const auto found = lists.find(key);
  if (found != lists.end()) {
    *count = found->second.count;
    return found->second.dev;
  }
  if (lists.size() >= 8) {
    check(cudaFree(lists.begin()->second.dev), "CUDA prefilter: freeing a work list");
    lists.erase(lists.begin());
  }
  ItemList cache;
  std::vector<uint2> items;
  std::vector<int> z_step(static_cast<std::size_t>(nz) + ly + lz + 1, -1);
  for (int b = 0; b < nb; ++b) {
    const int last_plane = b == nb - 1 ? nz - 1 : (b + 1) * B - 1;
    z_step[static_cast<std::size_t>(last_plane + ly + lz)] = b;
  }
  for (int s = 0; s < nz + ly + lz; ++s) {
    if (s < nz)
      for (int t = 0; t < x_tiles; ++t)
        items.push_back(make_uint2(static_cast<unsigned>(s), static_cast<unsigned>(t)));
    const int q = s - ly;
    if (q >= 0 && q < nz)
      for (int t = 0; t < y_tiles; ++t)
        items.push_back(
            make_uint2((1u << 30) | static_cast<unsigned>(q), static_cast<unsigned>(t)));
    const int b = z_step[static_cast<std::size_t>(s)];
    if (b >= 0)
      for (int j = 0; j < strips; ++j)
        items.push_back(
            make_uint2((2u << 30) | static_cast<unsigned>(b), static_cast<unsigned>(j)));
  }
  check(cudaMalloc(&cache.dev, items.size() * sizeof(uint2)),
        "CUDA prefilter: allocating the one-pass work list");
  check(cudaMemcpy(cache.dev, items.data(), items.size() * sizeof(uint2), cudaMemcpyHostToDevice),
        "CUDA prefilter: uploading the one-pass work list");
  cache.count = static_cast<long long>(items.size());
  lists[key] = cache;
  *count = cache.count;
  return cache.dev;
}

// All three axes of a one-channel 3-D array in one pass (one_pass_3d_kernel), in place; false
// (nothing done) where it does not apply: rank 3, one channel, one real pole (degrees 2 and 3),
// reflect or mirror, whole-line x and y tiles (the fused pass's conditions), at least B planes.
bool one_pass_3d(float* data, const Layout& layout, const PrefilterConfig& cfg) {
  if (layout.rank() != 3 || layout.channels != 1 || cfg.boundary == Boundary::Periodic)
    return false;
  const Poles poles = bspline_poles(cfg.degree);
  if (poles.count != 1) return false;
  FusedPlan f = plan_fused(data, layout, cfg, poles);
  if (!f.ok || f.x.C != 1) return false;
  const int H = apron(poles);
  const int nz = static_cast<int>(layout.dims[0]);
  const int B = std::max(env_int("SV_ONE_PASS_3D_BATCH", 16), H + 1);
  if (H > 32 || nz < B || nz >= (1 << 30)) return false;
  const int nb = nz / B;
  const long long plane = static_cast<long long>(layout.dims[1]) * layout.dims[2];
  const int strips = static_cast<int>((plane + kZLines - 1) / kZLines);
  // Loads evict first, stores (the intermediate the z items read) evict last.
  f.x.P.hint = 1;
  f.y.P.hint = 1;
  const std::size_t zmem = static_cast<std::size_t>(2 * B - 1 + H) * kZLines * sizeof(float);
  const std::size_t shmem = std::max(f.shmem, zmem);
  void* kernel = reinterpret_cast<void*>(one_pass_3d_kernel<1, 1>);
  check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(shmem)),
        "configuring the one-pass 3-D CUDA prefilter");
  check(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                             cudaSharedmemCarveoutMaxShared),
        "configuring the one-pass 3-D CUDA prefilter");
  int per_sm = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, shmem),
        "configuring the one-pass 3-D CUDA prefilter");
  if (per_sm < 1) return false;
  const long long blocks = static_cast<long long>(per_sm) * multiprocessors();

  OnePass3D Z{};
  Z.data = data;
  Z.plane = plane;
  Z.nz = nz;
  Z.B = B;
  Z.nb = nb;
  Z.H = H;
  Z.rows_per_plane = static_cast<int>(layout.dims[1]);
  Z.x_tiles = (Z.rows_per_plane + f.x.P.rows - 1) / f.x.P.rows;
  Z.y_tiles = static_cast<int>((f.y.P.inner + f.y.P.lines - 1) / f.y.P.lines);
  Z.z = static_cast<float>(poles.z[0]);
  Z.gain = static_cast<float>(poles.gain);
  const int code = boundary_code(cfg.boundary);
  for (int h = 0; h < H; ++h) {
    Z.lsrc[h] = extend(-H + h, nz, code);
    Z.rsrc[h] = extend(nz + h, nz, code);
  }
  // The lags: the planes the resident blocks span, plus one (as the fused pass's).
  const long long per_plane = Z.x_tiles + Z.y_tiles + (strips + B - 1) / B;
  const int span = static_cast<int>((blocks + per_plane - 1) / per_plane);
  const int ly =
      cfg.fuse_lag > 0 ? cfg.fuse_lag : std::max(1, env_int("SV_ONE_PASS_3D_LAG_Y", span + 1));
  const int lz = std::max(1, env_int("SV_ONE_PASS_3D_LAG_Z", span + 1));
  const std::vector<long long> key = {
      nz,        Z.rows_per_plane, static_cast<long long>(layout.dims[2]), B, ly, lz,
      Z.x_tiles, Z.y_tiles};
  Z.items = one_pass_3d_items(key, nz, Z.x_tiles, Z.y_tiles, strips, B, nb, ly, lz, &Z.total);

  // The ticket, the counters and the causal states: one stream-ordered buffer.
  const std::size_t counters =
      sizeof(unsigned long long) + (2 * static_cast<std::size_t>(nz) + strips) * sizeof(int);
  const std::size_t bytes = counters + static_cast<std::size_t>(plane) * sizeof(float) + 16;
  keep_pool_memory();
  void* p = nullptr;
  check(cudaMallocAsync(&p, bytes, 0), "CUDA prefilter: allocating the one-pass counters");
  detail::note_alloc(bytes);
  check(cudaMemsetAsync(p, 0, counters, 0), "CUDA prefilter: zeroing the one-pass counters");
  char* base = static_cast<char*>(p);
  Z.ticket = reinterpret_cast<unsigned long long*>(base);
  Z.x_done = reinterpret_cast<int*>(base + sizeof(unsigned long long));
  Z.y_done = Z.x_done + nz;
  Z.z_done = Z.y_done + nz;
  Z.state = reinterpret_cast<float*>(base + ((counters + 15) / 16) * 16);
  void* args[] = {&f.x.P, &f.y.P, &Z};
  check(cudaLaunchKernel(kernel, dim3(static_cast<unsigned>(std::min(blocks, Z.total))),
                         dim3(kThreads), args, shmem, 0),
        "CUDA prefilter (one-pass 3-D)");
  check_launch("CUDA prefilter (one-pass 3-D)");
  check(cudaFreeAsync(p, 0), "CUDA prefilter: freeing the one-pass counters");
  detail::note_free(bytes);
  return true;
}

}  // namespace

namespace detail {

bool prefilter_one_pass_3d(float* data, const Layout& layout, const PrefilterConfig& cfg) {
  check_config(layout, cfg, "CUDA prefilter");
  if (cfg.kernel != PrefilterKernel::Tiled || !cfg.fuse) return false;
  return one_pass_3d(data, layout, cfg);
}

}  // namespace detail

void prefilter_fused_xy(float* data, const Layout& layout, const PrefilterConfig& cfg) {
  check_config(layout, cfg, "CUDA prefilter");
  const Poles poles = bspline_poles(cfg.degree);
  FusedPlan f = plan_fused(data, layout, cfg, poles);
  if (!f.ok)
    throw Error(
        "CUDA prefilter: the fused y/x pass does not apply to this layout (see "
        "prefilter_fusable)");
  run_fused(layout, f, poles.count);
}

std::vector<bool> prefilter_out_of_place(const Layout& layout, const PrefilterConfig& cfg) {
  check_config(layout, cfg, "CUDA prefilter");
  std::vector<bool> plan = plan_ping_pong(layout, cfg);
  plan.resize(layout.rank(), false);
  return plan;
}

void prefilter(float* data, const Layout& layout, const PrefilterConfig& cfg) {
  check_config(layout, cfg, "CUDA prefilter");
  if (cfg.kernel == PrefilterKernel::Tiled && cfg.one_pass && !one_pass_off() &&
      layout.rank() == 2 && cfg.chunk == 0 && cfg.lines == 0 && cfg.async_loads &&
      single_pass_2d(data, layout, cfg.boundary, sections_of(bspline_poles(cfg.degree))))
    return;
  if (cfg.kernel == PrefilterKernel::Tiled && cfg.fuse && layout.rank() == 3) {
    if (one_pass_3d_on() && one_pass_3d(data, layout, cfg)) return;
    const Poles poles = bspline_poles(cfg.degree);
    FusedPlan f = plan_fused(data, layout, cfg, poles);
    if (f.ok) {
      // y and x in one pass, then z in place (whole lines: no scratch; chunked: side buffer).
      run_fused(layout, f, poles.count);
      prefilter_axis(data, layout, 0, cfg);
      return;
    }
  }
  const std::vector<bool> plan = plan_ping_pong(layout, cfg);
  if (plan.empty()) {
    for (std::size_t axis = 0; axis < layout.rank(); ++axis)
      prefilter_axis(data, layout, axis, cfg);
    return;
  }
  // Axes in order; an in-place pass before the first out-of-place one (the chunked axis that
  // plan_ping_pong() leaves in place) frees its side buffer before the scratch is taken. The
  // scratch comes from the stream-ordered pool, like the side buffer.
  const Poles poles = bspline_poles(cfg.degree);
  const std::size_t bytes = layout.size() * sizeof(float);
  float* scratch = nullptr;
  float* cur = data;
  for (std::size_t axis = 0; axis < layout.rank(); ++axis) {
    if (!plan[axis]) {
      prefilter_axis(cur, layout, axis, cfg);
      continue;
    }
    if (!scratch) {
      keep_pool_memory();
      void* p = nullptr;
      check(cudaMallocAsync(&p, bytes, 0), "CUDA prefilter: allocating the scratch copy");
      scratch = static_cast<float*>(p);
      detail::note_alloc(bytes);
    }
    float* next = cur == data ? scratch : data;
    tiled_pass(cur, next, layout, axis, cfg, poles, 0, SurfaceKind::None);
    cur = next;
  }
  // The plan has an even number of out-of-place passes, so the result is back in `data`.
  if (cur != data) copy_device(data, cur, layout.size());
  if (scratch) {
    check(cudaFreeAsync(scratch, 0), "CUDA prefilter: freeing the scratch copy");
    detail::note_free(bytes);
  }
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
