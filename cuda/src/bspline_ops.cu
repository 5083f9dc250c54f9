// cuda_bspline.h: the direct transform with lambda, the indirect transform and the derivative
// filters on device arrays (float, double).
//
// Kernels of its own:
//  - causal_segments / anticausal_segments: the recursions of one pole over segments of lines of
//    an axis viewed as (outer, n, inner), a thread per (segment, line), with the CPU's exact
//    starts where a segment reaches the line's end (lib/src/pole_filter.h: the causal start
//    summed over one period of the extended line and closed by 1 / (1 - z^P) within the horizon,
//    the anticausal start in closed form for reflect and mirror, the period sum for periodic),
//    elsewhere a warm-up over the horizon from zero. A complex pole runs in complex arithmetic
//    (real and imaginary parts in separate arrays); its conjugate follows and the real part is
//    kept (as smoothing.cpp does). Used where the tiled prefilter cannot go: double, complex
//    pairs, horizons longer than a tile's apron. The x axis of one-channel data is transposed
//    (transpose_kernel) so that its lines are filtered coalesced.
//  - stencil_kernel: every term of a filter (a tensor product of per-axis FIRs) in one pass. A
//    persistent block takes tiles of BZ x BY x 32 outputs (one channel); it loads the input tile
//    with the halo of every axis (the boundary extension, or cval for GridConstant) into shared
//    memory, runs the distinct x FIRs into one buffer each, the distinct (y, x) pairs into one
//    buffer each, and each term's z FIR into registers, then stores the term (gradient, Hessian)
//    or combines the terms (sum: Laplacian; root of the sum of squares: gradient magnitude).
//    Each per-axis FIR has the order-m differences folded into its taps: sum_t w[t] (D^m c)[j +
//    first + t] = sum_u K[u] c[j + first + u], K = w convolved with the m-th difference.
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "check.cuh"
#include "device_copy.cuh"
#include "prefilter_poles.h"
#include "splineview/bspline.h"
#include "splineview/cuda_bspline.h"
#include "splineview/cuda_prefilter.h"
#include "splineview/prefilter.h"
#include "splineview/sampler.h"

namespace sv::cuda {
namespace {

using detail::check;
using detail::check_launch;

// ---- Boundary extension of the filters (all of sv::extend_index's modes) ---------------------

constexpr int kExtReflect = 0, kExtMirror = 1, kExtPeriodic = 2, kExtNearest = 3, kExtConst = 4;

int ext_code(Boundary b) {
  switch (b) {
    case Boundary::Reflect:
      return kExtReflect;
    case Boundary::Mirror:
    case Boundary::Wrap:
    case Boundary::Constant:
      return kExtMirror;  // at the grid points, the mirror spline (as extend_index)
    case Boundary::Periodic:
      return kExtPeriodic;
    case Boundary::Nearest:
      return kExtNearest;
    case Boundary::GridConstant:
      return kExtConst;
  }
  return kExtMirror;
}

// sv::extend_index on the device: -1 means "outside" (GridConstant).
__host__ __device__ __forceinline__ int ext(int k, int n, int mode) {
  if (k >= 0 && k < n) return k;
  switch (mode) {
    case kExtReflect: {
      const int p = 2 * n;
      int r = k % p;
      if (r < 0) r += p;
      return r < n ? r : p - 1 - r;
    }
    case kExtMirror: {
      if (n == 1) return 0;
      const int p = 2 * n - 2;
      int r = k % p;
      if (r < 0) r += p;
      return r < n ? r : p - r;
    }
    case kExtPeriodic: {
      const int r = k % n;
      return r < 0 ? r + n : r;
    }
    case kExtNearest:
      return k < 0 ? 0 : n - 1;
    default:
      return -1;
  }
}

// a b + c rounded once. The filter kernels accumulate through it rather than `c += a * b`,
// which the compiler may contract either way where both addends are products (after unrolling):
// so every kernel rounds the same sums the same way, and their outputs agree bit for bit.
template <class T>
__device__ __forceinline__ T fmadd(T a, T b, T c) {
  if constexpr (std::is_same<T, float>::value)
    return fmaf(a, b, c);
  else
    return fma(a, b, c);
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

// ---- Scratch memory from the stream-ordered pool ---------------------------------------------

template <class T>
class Scratch {
 public:
  Scratch() = default;
  Scratch(std::size_t count, const char* what) : bytes_(count * sizeof(T)) {
    if (!bytes_) return;
    void* p = nullptr;
    check(cudaMallocAsync(&p, bytes_, 0), what);
    ptr_ = static_cast<T*>(p);
    detail::note_alloc(bytes_);
  }
  ~Scratch() {
    if (ptr_) {
      cudaFreeAsync(ptr_, 0);
      detail::note_free(bytes_);
    }
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  T* get() const { return ptr_; }

 private:
  T* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// ---- Lines with exact starts (double, complex pairs, long horizons) ---------------------------

template <class T>
struct Cx {
  T re, im;
};
template <class T>
__device__ __forceinline__ Cx<T> cmul(Cx<T> a, Cx<T> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <class T>
__device__ __forceinline__ Cx<T> cadd(Cx<T> a, Cx<T> b) {
  return {a.re + b.re, a.im + b.im};
}
template <class T>
__device__ __forceinline__ Cx<T> csub(Cx<T> a, Cx<T> b) {
  return {a.re - b.re, a.im - b.im};
}

// One pole, everything the line kernel needs computed once on the host (in T, as the CPU).
struct LinePole {
  double zr, zi;      // z
  long long terms;    // causal start: terms summed
  double cs_r, cs_i;  // 1 / (1 - z^P) when terms == P, else 1
  long long pterms;   // periodic anticausal start: terms
  double ps_r, ps_i;  // -z (/ (1 - z^n) when pterms == n)
  double mr_r, mr_i;  // reflect: z / (z - 1); mirror: z / (z^2 - 1)
  long long warm;     // the horizon: terms after which |z|^k is below half an ulp of T
};

constexpr int kMaxLinePoles = 4;
struct LinePoles {
  LinePole p[kMaxLinePoles];
  int count;
  double gain;
  bool complex_any;
};

template <class T>
std::size_t line_horizon(double a) {
  if (a == 0) return 1;
  const double eps = std::numeric_limits<T>::epsilon() / 2;
  return static_cast<std::size_t>(std::ceil(std::log(eps * (1 - a)) / std::log(a))) + 1;
}

std::complex<double> pole_pow(std::complex<double> z, double e) {
  if (z.imag() == 0) return {std::pow(z.real(), e), 0.0};
  return std::pow(z, e);
}

template <class T>
LinePoles line_poles(const std::vector<std::complex<double>>& z, double gain, Boundary b,
                     long long n) {
  LinePoles out{};
  if (z.size() > kMaxLinePoles) throw Error("CUDA direct transform: more than 4 poles");
  out.count = static_cast<int>(z.size());
  out.gain = gain;
  const long long per = b == Boundary::Reflect ? 2 * n : b == Boundary::Mirror ? 2 * n - 2 : n;
  for (int q = 0; q < out.count; ++q) {
    const std::complex<double> zd = z[static_cast<std::size_t>(q)];
    using C = std::complex<T>;
    const C zt(static_cast<T>(zd.real()), static_cast<T>(zd.imag()));
    LinePole& P = out.p[q];
    P.zr = zd.real();
    P.zi = zd.imag();
    if (zd.imag() != 0) out.complex_any = true;
    const long long h = static_cast<long long>(line_horizon<T>(std::abs(zd)));
    P.warm = h;
    P.terms = std::min(h, per);
    C cs(1);
    if (P.terms == per) {
      const std::complex<double> zp = pole_pow(zd, static_cast<double>(per));
      cs = C(1) / (C(1) - C(static_cast<T>(zp.real()), static_cast<T>(zp.imag())));
    }
    P.cs_r = cs.real();
    P.cs_i = cs.imag();
    P.pterms = std::min(h, n);
    C ps = -zt;
    if (P.pterms == n) {
      const std::complex<double> zn = pole_pow(zd, static_cast<double>(n));
      ps /= (C(1) - C(static_cast<T>(zn.real()), static_cast<T>(zn.imag())));
    }
    P.ps_r = ps.real();
    P.ps_i = ps.imag();
    const C mr = b == Boundary::Reflect ? zt / (zt - C(1)) : zt / (zt * zt - C(1));
    P.mr_r = mr.real();
    P.mr_i = mr.imag();
  }
  return out;
}

// Line value k of a line starting at re (+ i im when kC), stride s.
template <class T, bool kC>
__device__ __forceinline__ Cx<T> at(const T* re, const T* im, long long k, long long s) {
  return {re[k * s], kC ? im[k * s] : T(0)};
}

// Segments of lines: thread (segment, line), the line index fastest (coalesced on every axis but
// x). A segment's recursion starts `warm` samples early from a zero state (|z|^warm / (1 - |z|)
// is below half an ulp of T, the CPU's horizon), except where the line's exact start is within
// reach (the first segment of the causal pass, the last of the anticausal), which runs from it.
// Out of place, so a warm-up reads values nobody writes.
struct Segments {
  long long outer, n, inner, L, segs, warm;
  int mode;
};

__device__ __forceinline__ bool segment_of(const Segments& G, long long& base, long long& s0,
                                           long long& s1) {
  const long long id = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long lines = G.outer * G.inner;
  if (id >= lines * G.segs) return false;
  const long long seg = id / lines, line = id % lines;
  base = (line / G.inner) * G.n * G.inner + line % G.inner;
  s0 = seg * G.L;
  s1 = min(G.n, s0 + G.L);
  return s0 < s1;
}

// c+[k] = g x[k] + z c+[k-1], x real (kIn false) or complex, c+ complex (kOut) or real.
template <class T, bool kIn, bool kOut>
__global__ void causal_segments(const T* __restrict__ xr, const T* __restrict__ xi,
                                T* __restrict__ cr, T* __restrict__ ci, Segments G, LinePole P,
                                T g) {
  long long base, s0, s1;
  if (!segment_of(G, base, s0, s1)) return;
  const long long s = G.inner, n = G.n;
  xr += base;
  cr += base;
  if (kIn) xi += base;
  if (kOut) ci += base;
  const Cx<T> z{static_cast<T>(P.zr), static_cast<T>(P.zi)};
  Cx<T> acc{T(0), T(0)};
  long long k;
  auto in = [&](long long j) {
    const Cx<T> v = at<T, kIn>(xr, xi, j, s);
    return Cx<T>{g * v.re, g * v.im};
  };
  if (s0 - G.warm <= 0) {
    // The exact start: one period of the extended line, closed by 1 / (1 - z^P).
    Cx<T> zk{T(1), T(0)};
    for (long long q = 0; q < P.terms; ++q) {
      acc = cadd(acc, cmul(zk, in(ext(static_cast<int>(-q), static_cast<int>(n), G.mode))));
      zk = cmul(zk, z);
    }
    acc = cmul(acc, Cx<T>{static_cast<T>(P.cs_r), static_cast<T>(P.cs_i)});
    if (s0 == 0) {
      cr[0] = acc.re;
      if (kOut) ci[0] = acc.im;
    }
    for (k = 1; k < s0; ++k) acc = cadd(in(k), cmul(z, acc));
    k = s0 == 0 ? 1 : s0;
  } else {
    for (long long q = s0 - G.warm; q < s0; ++q) acc = cadd(in(q), cmul(z, acc));
    k = s0;
  }
  for (; k < s1; ++k) {
    acc = cadd(in(k), cmul(z, acc));
    cr[k * s] = acc.re;
    if (kOut) ci[k * s] = acc.im;
  }
}

// c-[k] = z (c-[k+1] - c+[k]) from the whole causal output c+ (real or complex, kIn), into y
// (complex when kOut, else the real part).
// kIm (real output of a complex pass): y = im_scale Im(c-) instead of Re(c-), the whole
// conjugate pair at once (direct_lines).
template <class T, bool kIn, bool kOut, bool kIm = false>
__global__ void anticausal_segments(const T* __restrict__ cr, const T* __restrict__ ci,
                                    T* __restrict__ yr, T* __restrict__ yi, Segments G, LinePole P,
                                    T im_scale = T(0)) {
  long long base, s0, s1;
  if (!segment_of(G, base, s0, s1)) return;
  const long long s = G.inner, n = G.n;
  cr += base;
  yr += base;
  if (kIn) ci += base;
  if (kOut) yi += base;
  const Cx<T> z{static_cast<T>(P.zr), static_cast<T>(P.zi)};
  Cx<T> acc{T(0), T(0)};
  long long k;
  if (s1 - 1 + G.warm >= n - 1) {
    // The exact start c-[n-1]: closed forms (reflect, mirror), the period sum (periodic).
    const Cx<T> cl = at<T, kIn>(cr, ci, n - 1, s);
    const Cx<T> m{static_cast<T>(P.mr_r), static_cast<T>(P.mr_i)};
    if (G.mode == kExtReflect) {
      acc = cmul(m, cl);
    } else if (G.mode == kExtMirror) {
      acc = cmul(m, cadd(cl, cmul(z, at<T, kIn>(cr, ci, n - 2, s))));
    } else {
      Cx<T> zj{T(1), T(0)};
      for (long long j = 0; j < P.pterms; ++j) {
        acc = cadd(acc, cmul(zj, at<T, kIn>(cr, ci, (n - 1 + j) % n, s)));
        zj = cmul(zj, z);
      }
      acc = cmul(Cx<T>{static_cast<T>(P.ps_r), static_cast<T>(P.ps_i)}, acc);
    }
    if (s1 == n) {
      yr[(n - 1) * s] = kIm ? im_scale * acc.im : acc.re;
      if (kOut) yi[(n - 1) * s] = acc.im;
    }
    for (k = n - 2; k >= s1; --k) acc = cmul(z, csub(acc, at<T, kIn>(cr, ci, k, s)));
    k = s1 == n ? n - 2 : s1 - 1;
  } else {
    for (long long q = s1 - 1 + G.warm; q >= s1; --q)
      acc = cmul(z, csub(acc, at<T, kIn>(cr, ci, q, s)));
    k = s1 - 1;
  }
  for (; k >= s0; --k) {
    acc = cmul(z, csub(acc, at<T, kIn>(cr, ci, k, s)));
    yr[k * s] = kIm ? im_scale * acc.im : acc.re;
    if (kOut) yi[k * s] = acc.im;
  }
}

// ---- The tensor-product FIR stencil ------------------------------------------------------------

constexpr int kThreads = 256;
constexpr int kBX = 32;       // outputs of a tile along x (a warp's row)
constexpr int kMaxSets = 3;   // distinct FIRs per axis (orders 0, 1, 2 of one filter)
constexpr int kMaxTerms = 6;  // the 3-D Hessian
constexpr int kMaxTaps = 16;  // span of an axis's FIRs (first offsets differ by order)

enum Combine : int { kEach = 0, kSum = 1, kNorm = 2 };

struct Stencil {
  int in[3];    // input extents (z, y, x), rank padded with leading 1s
  int out[3];   // output extents
  int crop[3];  // input index of output 0, minus nothing (the pad)
  int channels;
  int mode;
  double outside;  // GridConstant's value
  // Per axis: the common span S and first offset of its FIRs, and the taps of each set.
  int span[3], first[3], sets[3];
  double taps[3][kMaxSets][kMaxTaps];
  // The (y, x) pairs the terms use, and each term's z set and pair.
  int pairs;
  int pair_y[kMaxTerms], pair_x[kMaxTerms];
  int terms;
  int term_z[kMaxTerms], term_pair[kMaxTerms];
  int combine;
  int BY, BZ;            // outputs of a tile along y and z
  int one_row;           // load the tile a row at a time (the former kernel, for measurements)
  void* dst[kMaxTerms];  // the outputs (T*)
};

// A persistent grid: each block takes tiles blockIdx.x, + gridDim.x, ... (its set-up, the taps
// and indices copied into shared memory, paid once). Arrays of the description are read from the
// kernel parameters at run-time indices once, into shared memory.
template <class T, int SZ, int SY, int SX>
__global__ void __launch_bounds__(kThreads)
    stencil_kernel(const T* __restrict__ src, const Stencil S) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ T s_taps[3][kMaxSets][kMaxTaps];  // uniform reads: broadcast, no conflicts
  __shared__ T* s_dst[kMaxTerms];
  __shared__ int s_pair_y[kMaxTerms], s_pair_x[kMaxTerms], s_term_z[kMaxTerms],
      s_term_pair[kMaxTerms];
  for (int t = threadIdx.x; t < 3 * kMaxSets * kMaxTaps; t += kThreads)
    (&s_taps[0][0][0])[t] = static_cast<T>((&S.taps[0][0][0])[t]);
  if (threadIdx.x < kMaxTerms) {
    const int q = threadIdx.x;
    s_dst[q] = static_cast<T*>(S.dst[q]);
    s_pair_y[q] = S.pair_y[q];
    s_pair_x[q] = S.pair_x[q];
    s_term_z[q] = S.term_z[q];
    s_term_pair[q] = S.term_pair[q];
  }
  __syncthreads();
  T* sh = reinterpret_cast<T*>(smem_raw);
  const int BY = S.BY, BZ = S.BZ;
  const int spx = SX > 0 ? SX : S.span[2], spy = SY > 0 ? SY : S.span[1];
  const int spz = SZ > 0 ? SZ : S.span[0];
  const int IX = kBX + spx - 1, IY = BY + spy - 1, IZ = BZ + spz - 1;
  T* s_in = sh;                               // IZ x IY x IX
  T* s_x = s_in + IZ * IY * IX;               // sets[2] x IZ x IY x kBX
  T* s_xy = s_x + S.sets[2] * IZ * IY * kBX;  // pairs x IZ x BY x kBX
  const int tiles_x = (S.out[2] + kBX - 1) / kBX;
  const int tiles_y = (S.out[1] + BY - 1) / BY;
  const int tiles_z = (S.out[0] + BZ - 1) / BZ;
  const long long tiles = static_cast<long long>(tiles_x) * tiles_y * tiles_z * S.channels;
  const int C = S.channels;
  const T outside = static_cast<T>(S.outside);
  const int rows = IZ * IY;
  const int pstride = IZ * BY * kBX;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    long long rest = tile;
    const int x0 = static_cast<int>(rest % tiles_x) * kBX;
    rest /= tiles_x;
    const int y0 = static_cast<int>(rest % tiles_y) * BY;
    rest /= tiles_y;
    const int z0 = static_cast<int>(rest % tiles_z) * BZ;
    const int c = static_cast<int>(rest / tiles_z);

    // 1. The input tile with its halo, a warp per row of IX (<= 64) samples along x (coalesced
    //    but for the channel stride); the row's y and z extension computed once. A warp issues
    //    the loads of kRowBatch rows into registers before storing any, so that many loads are
    //    in flight (one row at a time left the SM waiting on DRAM latency).
    const int xs = S.crop[2] + x0 + S.first[2];
    constexpr int kWarps = kThreads / 32, kRowBatch = 8;
    // S.one_row: the former load, a row at a time (SV_STENCIL_ONE_ROW=1, for measurements).
    for (int row = warp; S.one_row && row < rows; row += kWarps) {
      const int y = row % IY, z = row / IY;
      const int ey = ext(S.crop[1] + y0 + S.first[1] + y, S.in[1], S.mode);
      const int ez = ext(S.crop[0] + z0 + S.first[0] + z, S.in[0], S.mode);
      T* d = s_in + row * IX;
      const T* g = src + (static_cast<long long>(ez) * S.in[1] + ey) * S.in[2] * C + c;
      for (int x = lane; x < IX; x += 32) {
        const int ex = ext(xs + x, S.in[2], S.mode);
        d[x] = (ey | ez) >= 0 && ex >= 0 ? __ldg(g + static_cast<long long>(ex) * C) : outside;
      }
    }
    for (int r0 = warp; !S.one_row && r0 < rows; r0 += kWarps * kRowBatch) {
      T v[kRowBatch][2];
#pragma unroll
      for (int j = 0; j < kRowBatch; ++j) {
        v[j][0] = v[j][1] = outside;
        const int row = r0 + j * kWarps;
        if (row >= rows) continue;
        const int y = row % IY, z = row / IY;
        const int ey = ext(S.crop[1] + y0 + S.first[1] + y, S.in[1], S.mode);
        const int ez = ext(S.crop[0] + z0 + S.first[0] + z, S.in[0], S.mode);
        if ((ey | ez) < 0) continue;
        const T* g = src + (static_cast<long long>(ez) * S.in[1] + ey) * S.in[2] * C + c;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int x = lane + 32 * h;
          if (x >= IX) continue;
          const int ex = ext(xs + x, S.in[2], S.mode);
          if (ex >= 0) v[j][h] = __ldg(g + static_cast<long long>(ex) * C);
        }
      }
#pragma unroll
      for (int j = 0; j < kRowBatch; ++j) {
        const int row = r0 + j * kWarps;
        if (row >= rows) continue;
#pragma unroll
        for (int h = 0; h < 2; ++h)
          if (lane + 32 * h < IX) s_in[row * IX + lane + 32 * h] = v[j][h];
      }
    }
    __syncthreads();

    // 2. x FIRs: s_x[set][z][y][x] = sum_u K[u] s_in[z][y][x + u].
    for (int sx = 0; sx < S.sets[2]; ++sx) {
      const T* k = s_taps[2][sx];
      T* out = s_x + sx * rows * kBX;
      for (int t = threadIdx.x; t < rows * kBX; t += kThreads) {
        const int x = t % kBX, r = t / kBX;
        const T* in = s_in + r * IX + x;
        T acc = T(0);
#pragma unroll
        for (int u = 0; u < spx; ++u) acc = fmadd(k[u], in[u], acc);
        out[t] = acc;
      }
    }
    __syncthreads();

    // 3. y FIRs of each (y, x) pair: s_xy[p][z][y][x] = sum_u K[u] s_x[set x][z][y + u][x].
    for (int p = 0; p < S.pairs; ++p) {
      const T* k = s_taps[1][s_pair_y[p]];
      const T* in0 = s_x + s_pair_x[p] * rows * kBX;
      T* out = s_xy + p * pstride;
      for (int t = threadIdx.x; t < pstride; t += kThreads) {
        const int x = t % kBX, r = t / kBX;
        const int y = r % BY, z = r / BY;
        const T* in = in0 + (z * IY + y) * kBX + x;
        T acc = T(0);
#pragma unroll
        for (int u = 0; u < spy; ++u) acc = fmadd(k[u], in[u * kBX], acc);
        out[t] = acc;
      }
    }
    __syncthreads();

    // 4. z FIRs per term, combined, stored.
    const int items = BZ * BY * kBX;
    for (int t = threadIdx.x; t < items; t += kThreads) {
      const int x = t % kBX, r = t / kBX;
      const int y = r % BY, z = r / BY;
      const int gx = x0 + x, gy = y0 + y, gz = z0 + z;
      if (gx >= S.out[2] || gy >= S.out[1] || gz >= S.out[0]) continue;
      const long long o = ((static_cast<long long>(gz) * S.out[1] + gy) * S.out[2] + gx) * C + c;
      T comb = T(0);
      for (int q = 0; q < S.terms; ++q) {
        const T* in = s_xy + s_term_pair[q] * pstride + (z * BY + y) * kBX + x;
        const T* k = s_taps[0][s_term_z[q]];
        T acc = T(0);
#pragma unroll
        for (int u = 0; u < spz; ++u) acc = fmadd(k[u], in[u * BY * kBX], acc);
        if (S.combine == kEach)
          s_dst[q][o] = acc;
        else if (S.combine == kSum)
          comb += acc;
        else
          comb = fmadd(acc, acc, comb);
      }
      if (S.combine == kSum)
        s_dst[0][o] = comb;
      else if (S.combine == kNorm)
        s_dst[0][o] = sqrt(comb);
    }
    __syncthreads();  // the next tile overwrites the buffers
  }
}

// One-term filters of 1-D and 2-D arrays with short spans (the indirect transform, a single
// derivative: up to 5 taps an axis) read their taps straight from global memory, a thread per
// output along x and a block row per y: neighbouring threads share their inputs through L1, and
// nothing waits on a shared-memory tile. Its taps in registers (compile-time indices, runtime
// spans up to kDirectMax). On an H200 it took the 2-D indirect transform and d/dx from 9% to 12%
// of a copy (15257x3736: 1.26 -> 0.95 ms); on 3-D arrays (27 taps, rows of other planes) it was
// twice as slow as the tile kernel (400x300x151: 0.80 against 0.42 ms), so 3-D stays there.
constexpr int kDirectMax = 5;
struct DirectTaps {
  float kz[kDirectMax], ky[kDirectMax], kx[kDirectMax];
  double dz[kDirectMax], dy[kDirectMax], dx[kDirectMax];
};

template <class T>
__device__ __forceinline__ T direct_tap(const DirectTaps& k, int axis, int u) {
  if constexpr (std::is_same<T, float>::value)
    return axis == 0 ? k.kz[u] : axis == 1 ? k.ky[u] : k.kx[u];
  else
    return axis == 0 ? k.dz[u] : axis == 1 ? k.dy[u] : k.dx[u];
}

template <class T>
__global__ void __launch_bounds__(256)
    direct_stencil_kernel(const T* __restrict__ src, T* __restrict__ dst, const Stencil S,
                          const DirectTaps K) {
  const int C = S.channels;
  const int xi = blockIdx.x * blockDim.x + threadIdx.x;
  if (xi >= S.out[2] * C) return;
  const int x = xi / C, c = xi - x * C;
  const int y = blockIdx.y, z = blockIdx.z;
  const int spz = S.span[0], spy = S.span[1], spx = S.span[2];
  int ez[kDirectMax], ey[kDirectMax], ex[kDirectMax];
  const int iz0 = S.crop[0] + z + S.first[0], iy0 = S.crop[1] + y + S.first[1];
  const int ix0 = S.crop[2] + x + S.first[2];
  const bool inside = iz0 >= 0 && iz0 + spz <= S.in[0] && iy0 >= 0 && iy0 + spy <= S.in[1] &&
                      ix0 >= 0 && ix0 + spx <= S.in[2];
#pragma unroll
  for (int u = 0; u < kDirectMax; ++u) {
    ez[u] = inside ? iz0 + u : ext(iz0 + u, S.in[0], S.mode);
    ey[u] = inside ? iy0 + u : ext(iy0 + u, S.in[1], S.mode);
    ex[u] = inside ? ix0 + u : ext(ix0 + u, S.in[2], S.mode);
  }
  const T outside = static_cast<T>(S.outside);
  T acc = T(0);
#pragma unroll
  for (int uz = 0; uz < kDirectMax; ++uz) {
    if (uz >= spz) break;
#pragma unroll
    for (int uy = 0; uy < kDirectMax; ++uy) {
      if (uy >= spy) break;
      const bool row_out = (ez[uz] | ey[uy]) < 0;
      const T* row = src + (static_cast<long long>(ez[uz]) * S.in[1] + ey[uy]) * S.in[2] * C + c;
      T r = T(0);
#pragma unroll
      for (int ux = 0; ux < kDirectMax; ++ux) {
        if (ux >= spx) break;
        const T v =
            row_out || ex[ux] < 0 ? outside : __ldg(row + static_cast<long long>(ex[ux]) * C);
        r += direct_tap<T>(K, 2, ux) * v;
      }
      acc += direct_tap<T>(K, 0, uz) * direct_tap<T>(K, 1, uy) * r;
    }
  }
  const long long o = ((static_cast<long long>(z) * S.out[1] + y) * S.out[2] + x) * C + c;
  dst[o] = S.combine == kNorm ? static_cast<T>(fabs(acc)) : acc;
}

// Streamed filters of 2-D and 3-D arrays (the common case: spans up to 5 per axis, up to 6 terms
// with up to 3 distinct x FIRs). A block owns an in-plane tile (3-D: 32 x 8 RY outputs, a thread
// per x and RY rows; 2-D: 256 outputs along x, the rows being the "planes") and walks a chunk of
// planes along the outermost axis: each input plane is loaded once into shared memory (its
// in-plane halo from L1/L2), filtered along x and y in registers, and added into each term's
// S running z sums; the output plane whose last tap has arrived is combined and stored. So the
// array is read about once and written once per output, with one barrier per plane (the plane
// buffers alternate) and the next plane's loads in flight while the current one is filtered.
// Sums run in the tile kernel's order (x, then y, then z, taps ascending), the same arithmetic.
struct StreamTaps {
  // Per distinct x FIR, and per term its y FIR, z FIR and x FIR index; S taps each (zero-padded).
  // The same in float, for float arrays (the FMAs then take them as they are: no conversion of
  // a double per tap and output).
  double kx[kMaxSets][5], ky[kMaxTerms][5], kz[kMaxTerms][5];
  float fx[kMaxSets][5], fy[kMaxTerms][5], fz[kMaxTerms][5];
  int term_x[kMaxTerms];
  int sets_x;
  int chunk;  // output planes per block
  // The merged Laplacian (kLap kernels): every axis's second-derivative FIR is lap * (b - delta)
  // with b its value FIR (row 0 of each table) and delta at the window's centre.
  double lap;
  float flap;
};

// Tap u of row q of a tap table (x FIR s, or term q's y or z FIR), in T: the float copy for
// float arrays.
template <class T, int N>
__device__ __forceinline__ T tap(const double (&d)[N][5], const float (&f)[N][5], int q, int u) {
  if constexpr (std::is_same<T, float>::value)
    return f[q][u];
  else
    return d[q][u];
}

template <class T, int S, int NT>
struct StreamShape {
  static constexpr int RY = NT * S * static_cast<int>(sizeof(T)) <= 48 ? 2 : 1;
};

// kStages > 0: the planes travel by cp.async into a ring of kStages plane buffers, kStages - 1
// planes ahead of the one being filtered (no registers held for them); kStages == 0: one plane
// ahead through registers.
// kLap (NT = 1): the Laplacian of a degree whose second-derivative FIRs are lap (b - delta) on
// every axis (degrees 2 and 3), merged into one term (DESIGN, "The merged Laplacian"): with d =
// lap (b - delta) the sum of the rank terms is, in 3-D,
//   lap (bz (3 by bx - by delta_x - delta_y bx) - delta_z (by bx)),
// one x FIR, two y FIRs and one z FIR an output where the terms take two, three and three.
template <class T, int S, bool k3D, int NT, int kStages, int kRows = 0, bool kLap = false>
__global__ void __launch_bounds__(256)
    stream_stencil_kernel(const T* __restrict__ src, const Stencil St, const StreamTaps K) {
  static_assert(!kLap || NT == 1, "the merged Laplacian is one term");
  constexpr int RY = k3D ? (kRows > 0 ? kRows : StreamShape<T, S, NT>::RY) : 1;
  constexpr int BXT = k3D ? 32 : 256;   // threads along x
  constexpr int TY = k3D ? 8 * RY : 1;  // outputs along y of a tile
  constexpr int SY = k3D ? S : 1;       // the y span (2-D: none)
  constexpr int IX = BXT + S - 1, IY = TY + SY - 1;
  constexpr int kPlane = IX * IY;
  constexpr int kLoads = (kPlane + 255) / 256;
  constexpr int kBufs = kStages > 0 ? kStages : 2;
  // Planes a ring buffer holds, one barrier and one cp.async group for PR of them (2-D: rows;
  // 2-D 8 rows and 3-D 1 plane were slower, BENCHMARKS).
  constexpr int PR = kStages == 0 ? 1 : k3D ? 2 : 4;
  __shared__ __align__(16) T plane[kBufs][PR * kPlane];

  const int C = St.channels;
  const int tiles_x = (St.out[2] + BXT - 1) / BXT;
  const int tiles_y = (St.out[1] + TY - 1) / TY;
  const int chunks = (St.out[0] + K.chunk - 1) / K.chunk;
  long long rest = blockIdx.x;
  const int x0 = static_cast<int>(rest % tiles_x) * BXT;
  rest /= tiles_x;
  const int y0 = static_cast<int>(rest % tiles_y) * TY;
  rest /= tiles_y;
  const int zc = static_cast<int>(rest % chunks) * K.chunk;
  const int c = static_cast<int>(rest / chunks);
  const int zn = min(K.chunk, St.out[0] - zc);  // output planes of this block
  const int planes = zn + S - 1;                // input planes it reads
  const int tx = threadIdx.x % BXT, ty = threadIdx.x / BXT;
  const T outside = static_cast<T>(St.outside);

  // Each load slot's in-plane offset (the same on every plane), or -1 where GridConstant's
  // outside value goes.
  long long off[kLoads];
#pragma unroll
  for (int l = 0; l < kLoads; ++l) {
    const int e = threadIdx.x + 256 * l;
    off[l] = -1;
    if (e < kPlane) {
      const int y = e / IX, x = e % IX;
      const int ey = k3D ? ext(St.crop[1] + y0 + St.first[1] + y, St.in[1], St.mode) : 0;
      const int ex = ext(St.crop[2] + x0 + St.first[2] + x, St.in[2], St.mode);
      if (ey >= 0 && ex >= 0) off[l] = (static_cast<long long>(ey) * St.in[2] + ex) * C + c;
    }
  }
  const long long pstride = static_cast<long long>(St.in[1]) * St.in[2] * C;
  const int zin0 = St.crop[0] + zc + St.first[0];
  T pf[kStages > 0 ? 1 : kLoads];
  auto fetch = [&](int i) {
    const int ez = ext(zin0 + i, St.in[0], St.mode);
    const T* p = src + static_cast<long long>(ez) * pstride;
#pragma unroll
    for (int l = 0; l < kLoads; ++l) pf[l] = ez >= 0 && off[l] >= 0 ? __ldg(p + off[l]) : outside;
  };
  // Planes g PR .. g PR + PR - 1 (those that exist) into ring buffer buf, as one cp.async group
  // (empty past the end, so that every thread counts the same groups).
  auto fetch_async = [&](int g, T* buf) {
#pragma unroll
    for (int pr = 0; pr < PR; ++pr) {
      const int i = g * PR + pr;
      if (i >= planes) break;
      const int ez = ext(zin0 + i, St.in[0], St.mode);
      const T* p = src + static_cast<long long>(ez) * pstride;
#pragma unroll
      for (int l = 0; l < kLoads; ++l) {
        const int e = threadIdx.x + 256 * l;
        if (e >= kPlane) continue;
        if (ez >= 0 && off[l] >= 0)
          __pipeline_memcpy_async(buf + pr * kPlane + e, p + off[l], sizeof(T));
        else
          buf[pr * kPlane + e] = outside;
      }
    }
    __pipeline_commit();
  };

  T acc[NT][RY][S];
#pragma unroll
  for (int q = 0; q < NT; ++q)
#pragma unroll
    for (int r = 0; r < RY; ++r)
#pragma unroll
      for (int j = 0; j < S; ++j) acc[q][r][j] = T(0);
  // kLap: the smoothed value by bx of the planes whose delta_z is still to come (like acc: slot j
  // for output plane i - S + 1 + j).
  T cen[kLap ? RY : 1][kLap ? S : 1];
#pragma unroll
  for (int r = 0; r < (kLap ? RY : 1); ++r)
#pragma unroll
    for (int j = 0; j < (kLap ? S : 1); ++j) cen[r][j] = T(0);

  const int gx = x0 + tx;
  const long long orow = static_cast<long long>(St.out[2]) * C;
  const long long ostride = orow * St.out[1];
  long long ocur = (static_cast<long long>(zc) * St.out[1] + (k3D ? y0 + ty * RY : 0)) * orow +
                   static_cast<long long>(gx) * C + c;
  if (kStages > 0) {
#pragma unroll
    for (int s = 0; s + 1 < kBufs; ++s) fetch_async(s, plane[s]);
  } else {
    fetch(0);
  }
  for (int g = 0; g * PR < planes; ++g) {
    T* gbuf = plane[g % kBufs];
    if (kStages > 0) {
      // Group g has landed once at most kStages - 2 younger groups are pending; after the
      // barrier every thread has finished group g - 1, whose buffer takes group g + kStages - 1.
      __pipeline_wait_prior(kBufs - 2);
      __syncthreads();
      fetch_async(g + kBufs - 1, plane[(g + kBufs - 1) % kBufs]);
    } else {
      const int i = g;
      T* buf = gbuf;
#pragma unroll
      for (int l = 0; l < kLoads; ++l) {
        const int e = threadIdx.x + 256 * l;
        if (e < kPlane) buf[e] = pf[l];
      }
      __syncthreads();
      if (i + 1 < planes) fetch(i + 1);
    }
#pragma unroll
    for (int pr = 0; pr < PR; ++pr) {
      const int i = g * PR + pr;
      if (i >= planes) break;
      T* buf = gbuf + pr * kPlane;

      // x FIRs of the rows this thread needs (RY + SY - 1 of them), each distinct x FIR once,
      // each row's S inputs read from shared memory once for all of them.
      T xs[kMaxSets][RY + SY - 1];
      T raw[kLap ? RY + SY - 1 : 1];  // kLap: the rows' centre samples (delta_x)
#pragma unroll
      for (int j = 0; j < RY + SY - 1; ++j) {
        const T* in = buf + (ty * RY + j) * IX + tx;
        T w[S];
#pragma unroll
        for (int u = 0; u < S; ++u) w[u] = in[u];
        if constexpr (kLap) raw[j] = w[S / 2];
#pragma unroll
        for (int s = 0; s < (kLap ? 1 : kMaxSets); ++s) {
          if (s >= K.sets_x) break;
          T a = T(0);
#pragma unroll
          for (int u = 0; u < S; ++u) a = fmadd(tap<T>(K.kx, K.fx, s, u), w[u], a);
          xs[s][j] = a;
        }
      }
      // Per term: its y FIR, then into its running z sums (output plane i - S + 1 + j takes tap
      // S - 1 - j of this plane).
      if constexpr (kLap) {
#pragma unroll
        for (int r = 0; r < RY; ++r) {
          T t1, v;
          if constexpr (k3D) {
            T a = T(0), b = T(0);
#pragma unroll
            for (int u = 0; u < SY; ++u) {
              a = fmadd(tap<T>(K.ky, K.fy, 0, u), xs[0][r + u], a);
              b = fmadd(tap<T>(K.ky, K.fy, 0, u), raw[r + u], b);
            }
            t1 = a;
            v = T(3) * a - xs[0][r + SY / 2] - b;
          } else {
            t1 = xs[0][0];
            v = T(2) * t1 - raw[0];
          }
#pragma unroll
          for (int j = 0; j < S; ++j)
            acc[0][r][j] = fmadd(tap<T>(K.kz, K.fz, 0, S - 1 - j), v, acc[0][r][j]);
          cen[r][S - 1 - S / 2] = t1;
        }
      }
#pragma unroll
      for (int q = 0; q < (kLap ? 0 : NT); ++q) {
        const int sx = K.term_x[q];
#pragma unroll
        for (int r = 0; r < RY; ++r) {
          T v;
          if (k3D) {
            // (A branch on the term's x FIR, the same for every thread, rather than a select per
            // product.)
            auto yfir = [&](const T(&row)[RY + SY - 1]) {
              T a = T(0);
#pragma unroll
              for (int u = 0; u < SY; ++u) a = fmadd(tap<T>(K.ky, K.fy, q, u), row[r + u], a);
              return a;
            };
            if (sx == 0)
              v = yfir(xs[0]);
            else if (sx == 1)
              v = yfir(xs[1]);
            else
              v = yfir(xs[2]);
          } else {
            v = sx == 0 ? xs[0][0] : sx == 1 ? xs[1][0] : xs[2][0];
          }
#pragma unroll
          for (int j = 0; j < S; ++j)
            acc[q][r][j] = fmadd(tap<T>(K.kz, K.fz, q, S - 1 - j), v, acc[q][r][j]);
        }
      }
      // The output plane whose taps are complete.
      // (ocur: its first row's index, a step of a plane per output plane.)
      const int o = i - (S - 1);
      if (o >= 0 && gx < St.out[2]) {
#pragma unroll
        for (int r = 0; r < RY; ++r) {
          const int gy = k3D ? y0 + ty * RY + r : 0;
          if (gy >= St.out[1]) continue;
          const long long idx = ocur + r * orow;
          if constexpr (kLap) {
            const T lap =
                std::is_same<T, float>::value ? static_cast<T>(K.flap) : static_cast<T>(K.lap);
            static_cast<T*>(St.dst[0])[idx] = lap * (acc[0][r][0] - cen[r][0]);
          } else if (St.combine == kEach) {
#pragma unroll
            for (int q = 0; q < NT; ++q) static_cast<T*>(St.dst[q])[idx] = acc[q][r][0];
          } else {
            T comb = T(0);
#pragma unroll
            for (int q = 0; q < NT; ++q)
              comb = St.combine == kSum ? comb + acc[q][r][0]
                                        : fmadd(acc[q][r][0], acc[q][r][0], comb);
            static_cast<T*>(St.dst[0])[idx] = St.combine == kSum ? comb : sqrt(comb);
          }
        }
      }
      if (o >= 0) ocur += ostride;
#pragma unroll
      for (int q = 0; q < NT; ++q)
#pragma unroll
        for (int r = 0; r < RY; ++r) {
#pragma unroll
          for (int j = 0; j + 1 < S; ++j) acc[q][r][j] = acc[q][r][j + 1];
          acc[q][r][S - 1] = T(0);
        }
      if constexpr (kLap) {
#pragma unroll
        for (int r = 0; r < RY; ++r) {
#pragma unroll
          for (int j = 0; j + 1 < S; ++j) cen[r][j] = cen[r][j + 1];
          cen[r][S - 1] = T(0);
        }
      }
    }
  }
}

// The streamed kernel for S's filter when it fits (rank 2 or 3, spans <= 5, 1, 2, 3 or 6
// terms); false to leave it to the tile kernels.
template <class T, int S, bool k3D, int kStages, int kRows = 0>
void launch_stream(const T* src, const Stencil& St, StreamTaps& K, const char* what, bool lap) {
  // The kernel for the term count, and its rows of outputs a thread.
  void (*kernel)(const T*, const Stencil, const StreamTaps) = nullptr;
  int ry = 1;
  auto pick = [&](auto terms) {
    constexpr int NT = decltype(terms)::value;
    kernel = stream_stencil_kernel<T, S, k3D, NT, kStages, kRows>;
    ry = kRows > 0 ? kRows : StreamShape<T, S, NT>::RY;
  };
  if (lap) {
    kernel = stream_stencil_kernel<T, S, k3D, 1, kStages, kRows, true>;
    ry = kRows > 0 ? kRows : StreamShape<T, S, 1>::RY;
  } else
    switch (St.terms) {
      case 1:
        pick(std::integral_constant<int, 1>{});
        break;
      case 2:
        pick(std::integral_constant<int, 2>{});
        break;
      case 3:
        pick(std::integral_constant<int, 3>{});
        break;
      default:
        pick(std::integral_constant<int, 6>{});
        break;
    }
  const long long bx = k3D ? 32 : 256, ty = k3D ? 8 * ry : 1;
  const long long plane_tiles =
      (St.out[2] + bx - 1) / bx * ((St.out[1] + ty - 1) / ty) * St.channels;
  int per_sm = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 256, 0), what);
  // Chunks of planes: enough blocks for four waves of the resident ones, each chunk at least
  // 8 (S - 1) planes long (its halo planes are read twice).
  static const long long waves = [] {
    const char* e = std::getenv("SV_STREAM_WAVES");  // for measurements
    return e ? std::max(1LL, std::atoll(e)) : 4LL;
  }();
  const long long want = waves * std::max(1, per_sm) * multiprocessors();
  long long chunk = (static_cast<long long>(St.out[0]) * plane_tiles + want - 1) / want;
  chunk = std::max<long long>(chunk, 8 * (S - 1));
  chunk = std::min<long long>(chunk, St.out[0]);
  K.chunk = static_cast<int>(chunk);
  const long long blocks = plane_tiles * ((St.out[0] + chunk - 1) / chunk);
  if (blocks >= (1LL << 31)) throw Error(std::string(what) + ": array too large");
  kernel<<<static_cast<unsigned>(blocks), 256>>>(src, St, K);
  check_launch(what);
}

// Whether S is a Laplacian (the sum of rank terms, each the second-derivative FIR d on its own
// axis and the value FIR b on the others) whose d is lap (b - delta) on every axis, delta at the
// centre of the kernel's window of kspan taps, with one lap: then K becomes the merged
// Laplacian's taps (row 0: b on each axis, 2-D: y the identity and z the array's y) and lap
// (DESIGN, "The merged Laplacian"). SV_STREAM_LAPLACIAN=terms keeps the terms (for the test
// that compares the streamed and tile kernels bit for bit, and for measurements; read at every
// call).
bool merged_laplacian(const Stencil& S, std::size_t rank, int kspan, StreamTaps& K) {
  const char* e = std::getenv("SV_STREAM_LAPLACIAN");
  if (e && std::string(e) == "terms") return false;
  if (S.combine != kSum || S.terms != static_cast<int>(rank) || S.channels < 1) return false;
  const int lead = 3 - static_cast<int>(rank), p = kspan / 2;
  int bset[3] = {0, 0, 0};
  double c = 0;
  for (int a = lead; a < 3; ++a) {
    if (S.sets[a] != 2 || S.span[a] != kspan) return false;
    double sum[2] = {0, 0};
    for (int k = 0; k < 2; ++k)
      for (int u = 0; u < kspan; ++u) sum[k] += S.taps[a][k][u];
    const int b = std::fabs(sum[0] - 1) < 1e-12 ? 0 : 1, d = 1 - b;
    if (std::fabs(sum[b] - 1) > 1e-12 || std::fabs(sum[d]) > 1e-12) return false;
    const double* B = S.taps[a][b];
    const double* D = S.taps[a][d];
    if (B[p] == 1) return false;
    const double ca = D[p] / (B[p] - 1);
    for (int u = 0; u < kspan; ++u)
      if (std::fabs(D[u] - ca * (B[u] - (u == p ? 1 : 0))) > 1e-12 * std::fabs(ca)) return false;
    if (a > lead && std::fabs(ca - c) > 1e-12 * std::fabs(c)) return false;
    c = ca;
    bset[a] = b;
  }
  // Each term: d on one axis, b on the others, a different axis per term.
  int seen = 0;
  for (int q = 0; q < S.terms; ++q) {
    const int pq = S.term_pair[q];
    const int set[3] = {S.term_z[q], S.pair_y[pq], S.pair_x[pq]};
    int daxis = -1;
    for (int a = lead; a < 3; ++a)
      if (set[a] != bset[a]) {
        if (daxis >= 0) return false;
        daxis = a;
      }
    if (daxis < 0 || (seen >> daxis) & 1) return false;
    seen |= 1 << daxis;
  }
  const bool three = rank == 3;
  K.sets_x = 1;
  K.term_x[0] = 0;
  for (int u = 0; u < 5; ++u) {
    K.kx[0][u] = u < kspan ? S.taps[2][bset[2]][u] : 0.0;
    K.ky[0][u] = three ? (u < kspan ? S.taps[1][bset[1]][u] : 0.0) : (u == 0 ? 1.0 : 0.0);
    K.kz[0][u] = u < kspan ? (three ? S.taps[0][bset[0]][u] : S.taps[1][bset[1]][u]) : 0.0;
  }
  K.lap = c;
  K.flap = static_cast<float>(c);
  return true;
}

template <class T>
bool run_stream(const T* src, const Stencil& S, std::size_t rank, const char* what) {
  if (rank < 2 || S.sets[2] > kMaxSets) return false;
  if (!(S.terms == 1 || S.terms == 2 || S.terms == 3 || S.terms == 6)) return false;
  const bool three = rank == 3;
  // The streamed axis: z (3-D) or y (2-D, whose planes are rows).
  const int za = three ? 0 : 1;
  int span = std::max(S.span[za], S.span[2]);
  if (three) span = std::max(span, S.span[1]);
  if (span > 5) return false;
  Stencil St = S;
  StreamTaps K{};
  K.sets_x = S.sets[2];
  for (int s = 0; s < S.sets[2]; ++s)
    for (int u = 0; u < 5 && u < kMaxTaps; ++u) K.kx[s][u] = S.taps[2][s][u];
  for (int q = 0; q < S.terms; ++q) {
    const int p = S.term_pair[q];
    K.term_x[q] = S.pair_x[p];
    for (int u = 0; u < 5; ++u) {
      K.ky[q][u] = three ? S.taps[1][S.pair_y[p]][u] : (u == 0 ? 1.0 : 0.0);
      K.kz[q][u] = three ? S.taps[0][S.term_z[q]][u] : S.taps[1][S.pair_y[p]][u];
    }
  }
  const int kspan = span <= 3 ? 3 : 5;  // the kernel's window
  // (K then holds the merged taps: every launch below must take `lap`.)
  const bool lap = merged_laplacian(S, rank, kspan, K);
  for (int s = 0; s < kMaxSets; ++s)
    for (int u = 0; u < 5; ++u) K.fx[s][u] = static_cast<float>(K.kx[s][u]);
  for (int q = 0; q < kMaxTerms; ++q)
    for (int u = 0; u < 5; ++u) {
      K.fy[q][u] = static_cast<float>(K.ky[q][u]);
      K.fz[q][u] = static_cast<float>(K.kz[q][u]);
    }
  if (!three) {  // rows become planes: axis 1 -> 0, axis 1 a unit axis
    St.in[0] = S.in[1], St.out[0] = S.out[1], St.crop[0] = S.crop[1], St.first[0] = S.first[1];
    St.in[1] = St.out[1] = 1, St.crop[1] = St.first[1] = 0;
  }
  // SV_STREAM_REGISTERS=1: the planes through registers, one ahead (for measurements).
  static const bool registers = [] {
    const char* e = std::getenv("SV_STREAM_REGISTERS");
    return e && *e == '1';
  }();
  // SV_STREAM_ROWS=1: one row of outputs a thread in 3-D whatever the registers allow (for
  // measurements; 3 and 6 plane buffers were measured too, and lost to 4: BENCHMARKS).
  static const bool one_row = [] {
    const char* e = std::getenv("SV_STREAM_ROWS");
    return e && *e == '1';
  }();
  if (!registers && one_row && three) {
    if (span <= 3)
      launch_stream<T, 3, true, 4, 1>(src, St, K, what, lap);
    else
      launch_stream<T, 5, true, 4, 1>(src, St, K, what, lap);
    return true;
  }
  constexpr int kStages = 4;
  if (registers) {
    if (span <= 3)
      three ? launch_stream<T, 3, true, 0>(src, St, K, what, lap)
            : launch_stream<T, 3, false, 0>(src, St, K, what, lap);
    else
      three ? launch_stream<T, 5, true, 0>(src, St, K, what, lap)
            : launch_stream<T, 5, false, 0>(src, St, K, what, lap);
  } else {
    if (span <= 3)
      three ? launch_stream<T, 3, true, kStages>(src, St, K, what, lap)
            : launch_stream<T, 3, false, kStages>(src, St, K, what, lap);
    else
      three ? launch_stream<T, 5, true, kStages>(src, St, K, what, lap)
            : launch_stream<T, 5, false, kStages>(src, St, K, what, lap);
  }
  return true;
}

// The composite taps of one axis: order m of degree n, as K[u] on c[j + first + u].
struct AxisFir {
  long first = 0;
  int span = 1;
  double k[kMaxDegree + 2] = {1};
};

AxisFir axis_fir(int degree, int order) {
  AxisFir f;
  double w[kMaxDegree + 1] = {};
  f.first = bspline_weights<double>(degree - order, -0.5 * order, w);
  const int nw = degree - order + 1;
  // K = w convolved with the m-th forward difference sum_s (-1)^(m-s) C(m, s) delta[s].
  std::fill(f.k, f.k + kMaxDegree + 2, 0.0);
  double binom = 1;
  for (int s = 0; s <= order; ++s) {
    const double d = ((order - s) % 2 ? -1.0 : 1.0) * binom;
    for (int t = 0; t < nw; ++t) f.k[t + s] += d * w[t];
    binom = binom * (order - s) / (s + 1);
  }
  f.span = nw + order;
  // Trim zero taps at the ends (e.g. the cubic's fourth weight at position 0).
  int lo = 0, hi = f.span - 1;
  while (lo < hi && f.k[lo] == 0) ++lo;
  while (hi > lo && f.k[hi] == 0) --hi;
  if (lo > 0)
    for (int u = lo; u <= hi; ++u) f.k[u - lo] = f.k[u];
  for (int u = hi - lo + 1; u < kMaxDegree + 2; ++u) f.k[u] = 0;
  f.first += lo;
  f.span = hi - lo + 1;
  return f;
}

// A filter: terms, each a per-axis (degree, order) list in array order.
struct Term {
  std::vector<int> degree, order;
};

int shared_bytes(const Stencil& S, int by, int bz, std::size_t elem) {
  const int IX = kBX + S.span[2] - 1, IY = by + S.span[1] - 1, IZ = bz + S.span[0] - 1;
  const long long n = static_cast<long long>(IZ) * IY * IX +
                      static_cast<long long>(S.sets[2]) * IZ * IY * kBX +
                      static_cast<long long>(S.pairs) * IZ * by * kBX;
  return static_cast<int>(n * static_cast<long long>(elem));
}

// dst[q] (or dst[0] combined) = the terms of `terms` on src (extents in, channels), output extents
// in - 2 crop per axis.
template <class T>
void run_stencil(const T* src, const std::vector<T*>& dst, const Layout& in, std::size_t crop,
                 const std::vector<Term>& terms, int combine, Boundary boundary, double cval,
                 const char* what) {
  const std::size_t rank = in.rank();
  Stencil S{};
  for (int a = 0; a < 3; ++a) {
    S.in[a] = S.out[a] = 1;
    S.crop[a] = 0;
    S.span[a] = 1;
    S.first[a] = 0;
    S.sets[a] = 1;
    S.taps[a][0][0] = 1;
  }
  const int lead = 3 - static_cast<int>(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    const int a = lead + static_cast<int>(d);
    S.in[a] = static_cast<int>(in.dims[d]);
    S.crop[a] = static_cast<int>(crop);
    S.out[a] = S.in[a] - 2 * static_cast<int>(crop);
    S.sets[a] = 0;
  }
  S.channels = static_cast<int>(in.channels);
  S.mode = ext_code(boundary);
  S.outside = cval;
  S.combine = combine;
  S.terms = static_cast<int>(terms.size());
  if (S.terms < 1 || S.terms > kMaxTerms) throw Error(std::string(what) + ": too many terms");
  // Distinct (degree, order) per axis -> sets; common span per axis.
  std::vector<std::vector<std::pair<int, int>>> keys(3);
  std::vector<std::vector<AxisFir>> firs(3);
  std::vector<std::vector<int>> term_set(terms.size(), std::vector<int>(3, 0));
  for (std::size_t q = 0; q < terms.size(); ++q)
    for (std::size_t d = 0; d < rank; ++d) {
      const int a = lead + static_cast<int>(d);
      const std::pair<int, int> key{terms[q].degree[d], terms[q].order[d]};
      auto it = std::find(keys[a].begin(), keys[a].end(), key);
      if (it == keys[a].end()) {
        keys[a].push_back(key);
        firs[a].push_back(axis_fir(key.first, key.second));
        it = keys[a].end() - 1;
      }
      term_set[q][a] = static_cast<int>(it - keys[a].begin());
    }
  for (std::size_t d = 0; d < rank; ++d) {
    const int a = lead + static_cast<int>(d);
    if (keys[a].size() > kMaxSets) throw Error(std::string(what) + ": too many FIRs per axis");
    long lo = 0, hi = 0;
    bool firstf = true;
    for (const AxisFir& f : firs[a]) {
      lo = firstf ? f.first : std::min(lo, f.first);
      hi = firstf ? f.first + f.span - 1 : std::max(hi, f.first + f.span - 1);
      firstf = false;
    }
    S.first[a] = static_cast<int>(lo);
    S.span[a] = static_cast<int>(hi - lo + 1);
    if (S.span[a] > kMaxTaps) throw Error(std::string(what) + ": FIR span too long");
    S.sets[a] = static_cast<int>(firs[a].size());
    for (int sidx = 0; sidx < S.sets[a]; ++sidx) {
      const AxisFir& f = firs[a][static_cast<std::size_t>(sidx)];
      for (int u = 0; u < kMaxTaps; ++u) S.taps[a][sidx][u] = 0;
      for (int u = 0; u < f.span; ++u) S.taps[a][sidx][f.first - lo + u] = f.k[u];
    }
  }
  // Pairs (y set, x set) and the terms' indices.
  S.pairs = 0;
  for (std::size_t q = 0; q < terms.size(); ++q) {
    const int sy = term_set[q][1], sx = term_set[q][2];
    int p = 0;
    while (p < S.pairs && !(S.pair_y[p] == sy && S.pair_x[p] == sx)) ++p;
    if (p == S.pairs) {
      S.pair_y[p] = sy;
      S.pair_x[p] = sx;
      ++S.pairs;
    }
    S.term_pair[q] = p;
    S.term_z[q] = term_set[q][0];
  }
  // Tile: the largest BZ x BY (3-D 8 x 8, 2-D 1 x 16, 1-D 1 x 1) whose shared memory stays within
  // 100 KB (two blocks per multiprocessor), halved until it does.
  int by = rank >= 2 ? (rank == 3 ? 8 : 16) : 1;
  int bz = rank == 3 ? 8 : 1;
  by = std::min(by, S.out[1]);
  bz = std::min(bz, S.out[0]);
  constexpr int kBudget = 100 * 1024;
  while (shared_bytes(S, by, bz, sizeof(T)) > kBudget && (by > 1 || bz > 1)) {
    if (bz >= by && bz > 1)
      bz = (bz + 1) / 2;
    else
      by = (by + 1) / 2;
  }
  S.BY = by;
  S.BZ = bz;
  static const bool one_row = [] {
    const char* e = std::getenv("SV_STENCIL_ONE_ROW");
    return e && *e == '1';
  }();
  S.one_row = one_row ? 1 : 0;
  const int shmem = shared_bytes(S, by, bz, sizeof(T));
  if (shmem > 200 * 1024) throw Error(std::string(what) + ": the filter's tile is too large");
  for (std::size_t q = 0; q < dst.size() && q < kMaxTerms; ++q) S.dst[q] = dst[q];
  const long long tx = (S.out[2] + kBX - 1) / kBX, ty = (S.out[1] + by - 1) / by;
  const long long tz = (S.out[0] + bz - 1) / bz;
  const long long gx = tx * ty, gy = tz * S.channels;
  if (gx * gy > (1LL << 46)) throw Error(std::string(what) + ": array too large");
  // SV_STENCIL_KERNEL=tile|direct keeps the former kernels (for measurements, and for the test
  // that compares them: read at every call); else the streamed kernel wherever it fits.
  const int choice = [] {
    const char* e = std::getenv("SV_STENCIL_KERNEL");
    const std::string v = e ? e : "";
    return v == "tile" ? 1 : v == "direct" ? 2 : 0;
  }();
  if (choice == 0 && run_stream(src, S, rank, what)) return;
  // One term with short spans: the direct kernel (above), unless the grid's y or z would be too
  // large for a launch.
  const int span_all = S.span[0] * S.span[1] * S.span[2];
  if (choice != 1 && S.terms == 1 && S.in[0] == 1 && S.span[1] <= kDirectMax &&
      S.span[2] <= kDirectMax && span_all <= 25 && S.out[1] <= 65535 &&
      static_cast<long long>(S.out[2]) * S.channels < (1LL << 30)) {
    DirectTaps K{};
    const int p = S.term_pair[0];
    const int sets[3] = {S.term_z[0], S.pair_y[p], S.pair_x[p]};
    for (int u = 0; u < kDirectMax; ++u) {
      K.dz[u] = u < S.span[0] ? S.taps[0][sets[0]][u] : 0.0;
      K.dy[u] = u < S.span[1] ? S.taps[1][sets[1]][u] : 0.0;
      K.dx[u] = u < S.span[2] ? S.taps[2][sets[2]][u] : 0.0;
      K.kz[u] = static_cast<float>(K.dz[u]);
      K.ky[u] = static_cast<float>(K.dy[u]);
      K.kx[u] = static_cast<float>(K.dx[u]);
    }
    const long long row = static_cast<long long>(S.out[2]) * S.channels;
    const dim3 grid(static_cast<unsigned>((row + 255) / 256), static_cast<unsigned>(S.out[1]),
                    static_cast<unsigned>(S.out[0]));
    direct_stencil_kernel<T><<<grid, 256>>>(src, dst[0], S, K);
    check_launch(what);
    return;
  }
  // The common spans (cubic: 3 on every axis, quintic 5) have their own unrolled kernels.
  void (*kernel)(const T*, const Stencil) = stencil_kernel<T, 0, 0, 0>;
  const int a = S.span[0], b = S.span[1], x = S.span[2];
  if (x == 3 && b == 3 && a == 3) kernel = stencil_kernel<T, 3, 3, 3>;
  if (x == 3 && b == 3 && a == 1) kernel = stencil_kernel<T, 1, 3, 3>;
  if (x == 3 && b == 1 && a == 1) kernel = stencil_kernel<T, 1, 1, 3>;
  if (x == 5 && b == 5 && a == 5) kernel = stencil_kernel<T, 5, 5, 5>;
  if (x == 5 && b == 5 && a == 1) kernel = stencil_kernel<T, 1, 5, 5>;
  if (x == 5 && b == 1 && a == 1) kernel = stencil_kernel<T, 1, 1, 5>;
  if (shmem > 48 * 1024)
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shmem), what);
  // As many blocks as are resident at once (each then loops over tiles).
  int per_sm = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads,
                                                      static_cast<std::size_t>(shmem)),
        what);
  const long long tiles = gx * gy;
  const long long blocks =
      std::min(tiles, std::max(1LL, static_cast<long long>(per_sm) * multiprocessors()));
  kernel<<<static_cast<unsigned>(blocks), kThreads, static_cast<std::size_t>(shmem)>>>(src, S);
  check_launch(what);
}

// ---- Padding (Nearest, GridConstant), with channels -------------------------------------------

struct PadGeometry {
  long long in[3], out[3], pad[3];
  int channels;
};

template <class T>
__global__ void pad_kernel(const T* __restrict__ src, T* __restrict__ dst, PadGeometry G, bool edge,
                           T cval, long long total) {
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long p = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; p < total;
       p += step) {
    const long long c = p % G.channels;
    long long rest = p / G.channels;
    bool inside = true;
    long long idx[3];
    for (int a = 2; a >= 0; --a) {
      long long k = rest % G.out[a] - G.pad[a];
      rest /= G.out[a];
      if (k < 0 || k >= G.in[a]) {
        inside = false;
        k = k < 0 ? 0 : G.in[a] - 1;
      }
      idx[a] = k;
    }
    const long long at = ((idx[0] * G.in[1] + idx[1]) * G.in[2] + idx[2]) * G.channels + c;
    dst[p] = (inside || edge) ? src[at] : cval;
  }
}

// ---- Helpers ----------------------------------------------------------------------------------

struct AxisView {
  long long outer = 1, inner = 1, n = 1;
};

AxisView view_of(const Layout& layout, std::size_t axis) {
  AxisView v;
  v.n = static_cast<long long>(layout.dims[axis]);
  v.inner = static_cast<long long>(layout.channels);
  for (std::size_t d = 0; d < axis; ++d) v.outer *= static_cast<long long>(layout.dims[d]);
  for (std::size_t d = axis + 1; d < layout.rank(); ++d)
    v.inner *= static_cast<long long>(layout.dims[d]);
  return v;
}

void check_layout(const Layout& layout, const char* what) {
  layout.check(what);
  for (std::size_t d : layout.dims)
    if (d > (std::size_t{1} << 30))
      throw Error(std::string(what) + ": axis longer than 2^30 samples");
}

// Longest start horizon a tiled pass may take (sum over the poles of one pass): a chunked tile's
// window is 384 samples, so chunks of at least 128 remain.
constexpr int kMaxTiledApron = 128;

// Poles of one axis as the tiled prefilter's passes, or empty when they do not fit (too long a
// horizon). Sections in the order of sp.z, three at most per pass: a real pole, or a conjugate
// pair (listed as z, conj z) as one second-order section, whose |z|^2 (the factor its two
// first-order passes would have) joins the gain of the first pass.
// SV_PAIR_LINES=1: axes with pairs run in the line kernels instead (for measurements).
std::vector<detail::Sections> tiled_passes(const SmoothingPoles& sp) {
  static const bool pair_lines = [] {
    const char* e = std::getenv("SV_PAIR_LINES");
    return e && *e == '1';
  }();
  std::vector<std::complex<double>> sec;
  double gain = sp.gain;
  for (std::size_t q = 0; q < sp.z.size(); ++q) {
    const std::complex<double> z = sp.z[q];
    sec.push_back(z);
    if (z.imag() != 0) {
      if (pair_lines) return {};
      gain *= std::norm(z);
      ++q;  // conj z: the same section
    }
  }
  std::vector<detail::Sections> out;
  for (std::size_t q = 0; q < sec.size(); q += 3) {
    detail::Sections p;
    p.count = static_cast<int>(std::min<std::size_t>(3, sec.size() - q));
    for (int i = 0; i < p.count; ++i) p.z[static_cast<std::size_t>(i)] = sec[q + i];
    p.gain = q == 0 ? gain : 1.0;
    if (detail::prefilter_apron(p) > kMaxTiledApron) return {};
    out.push_back(p);
  }
  return out;
}

// dst (cols x rows) = the transpose of src (rows x cols), through 32 x 32 shared-memory tiles.
template <class T>
__global__ void transpose_kernel(const T* __restrict__ src, T* __restrict__ dst, long long rows,
                                 long long cols) {
  __shared__ T tile[32][33];
  const long long r0 = static_cast<long long>(blockIdx.y) * 32,
                  c0 = static_cast<long long>(blockIdx.x) * 32;
  for (int i = threadIdx.y; i < 32; i += blockDim.y) {
    const long long r = r0 + i, c = c0 + threadIdx.x;
    if (r < rows && c < cols) tile[i][threadIdx.x] = src[r * cols + c];
  }
  __syncthreads();
  for (int i = threadIdx.y; i < 32; i += blockDim.y) {
    const long long c = c0 + i, r = r0 + threadIdx.x;
    if (r < rows && c < cols) dst[c * rows + r] = tile[threadIdx.x][i];
  }
}

template <class T>
void transpose(const T* src, T* dst, long long rows, long long cols, const char* what) {
  const long long bx = (cols + 31) / 32, by = (rows + 31) / 32;
  if (bx > 0x7fffffffLL || by > 65535) throw Error(std::string(what) + ": array too large");
  transpose_kernel<T><<<dim3(static_cast<unsigned>(bx), static_cast<unsigned>(by)), dim3(32, 8)>>>(
      src, dst, rows, cols);
  check_launch(what);
}

template <class T>
void direct_lines(T* data, const AxisView& v, std::size_t size, const SmoothingPoles& sp,
                  Boundary b);

// The segmented line filter of one axis. The x axis of one-channel data (lines contiguous in
// memory: a warp's threads would walk 32 rows apart) is transposed first, filtered as a column
// axis (coalesced) and transposed back.
template <class T>
void direct_axis_lines(T* data, const Layout& layout, std::size_t axis, const SmoothingPoles& sp,
                       Boundary b) {
  const char* what = "CUDA direct transform (lines)";
  const AxisView v = view_of(layout, axis);
  if (v.inner == 1 && v.outer >= 32) {
    Scratch<T> t(layout.size(), what);
    transpose<T>(data, t.get(), v.outer, v.n, what);
    direct_lines<T>(t.get(), AxisView{1, v.outer, v.n}, layout.size(), sp, b);
    transpose<T>(t.get(), data, v.n, v.outer, what);
    return;
  }
  direct_lines<T>(data, v, layout.size(), sp, b);
}

template <class T>
void direct_lines(T* data, const AxisView& v, std::size_t size, const SmoothingPoles& sp,
                  Boundary b) {
  const char* what = "CUDA direct transform (lines)";
  const LinePoles lp = line_poles<T>(sp.z, sp.gain, b, v.n);
  const long long lines = v.outer * v.inner;
  // Segments enough for about 2^17 threads, each at least four horizons long.
  long long warm = 1;
  for (int q = 0; q < lp.count; ++q) warm = std::max(warm, lp.p[q].warm);
  constexpr long long kWanted = 1LL << 17;
  const long long segs =
      std::max(1LL, std::min((kWanted + lines - 1) / lines, v.n / std::max(1LL, 4 * warm)));
  Segments G{v.outer, v.n, v.inner, (v.n + segs - 1) / segs, segs, warm, ext_code(b)};
  const long long work = lines * segs;
  const long long blocks = (work + 127) / 128;
  if (blocks > 0x7fffffffLL) throw Error("CUDA direct transform: too many lines");
  const unsigned nb = static_cast<unsigned>(blocks);
  // A conjugate pair (z, conj z) whose imaginary-part amplification (pair_amplification) is
  // at most kPairTwoPassLimit runs as one complex pass pair and keeps Im / Im(z + 1/z); the
  // others as z then conj z, four passes.
  // SV_PAIR_FOUR_PASS=1: every pair in four passes (for measurements).
  static const bool force_four = [] {
    const char* e = std::getenv("SV_PAIR_FOUR_PASS");
    return e && *e == '1';
  }();
  auto two_pass = [&](std::complex<double> z) {
    return !force_four && pair_amplification(z) <= kPairTwoPassLimit;
  };
  bool four_pass = false;
  for (int q = 0; q < lp.count; ++q)
    if (lp.p[q].zi != 0) {
      if (!two_pass({lp.p[q].zr, lp.p[q].zi})) four_pass = true;
      ++q;
    }
  Scratch<T> a_re(size, what), a_im(lp.complex_any ? size : 0, what);
  Scratch<T> b_re(four_pass ? size : 0, what), b_im(four_pass ? size : 0, what);
  for (int q = 0; q < lp.count; ++q) {
    const LinePole& P = lp.p[q];
    const T g = q == 0 ? static_cast<T>(lp.gain) : T(1);
    const std::complex<double> zc(P.zr, P.zi);
    if (P.zi == 0) {  // data -> a -> data
      G.warm = P.warm;
      causal_segments<T, false, false><<<nb, 128>>>(data, nullptr, a_re.get(), nullptr, G, P, g);
      anticausal_segments<T, false, false><<<nb, 128>>>(a_re.get(), nullptr, data, nullptr, G, P);
    } else if (two_pass(zc)) {
      // The pair's filter g / ((w - a)(w - conj a)), w = q + 1/q, a = z + 1/z, is
      // (H_z - H_conj z) / (a - conj a) with H_z = g / (w - a) the (causal, anticausal) pass of
      // z; on real data H_conj z x = conj(H_z x), so it is Im(H_z x) / Im(a): data -> a -> data.
      G.warm = P.warm;
      const double im_a = (zc + 1.0 / zc).imag();
      causal_segments<T, false, true><<<nb, 128>>>(data, nullptr, a_re.get(), a_im.get(), G, P, g);
      anticausal_segments<T, true, false, true>
          <<<nb, 128>>>(a_re.get(), a_im.get(), data, nullptr, G, P, static_cast<T>(1.0 / im_a));
      ++q;
    } else {  // z then conj z: data -> a -> b -> a -> data (the real part)
      const LinePole& Q = lp.p[q + 1];
      G.warm = P.warm;
      causal_segments<T, false, true><<<nb, 128>>>(data, nullptr, a_re.get(), a_im.get(), G, P, g);
      anticausal_segments<T, true, true>
          <<<nb, 128>>>(a_re.get(), a_im.get(), b_re.get(), b_im.get(), G, P);
      causal_segments<T, true, true>
          <<<nb, 128>>>(b_re.get(), b_im.get(), a_re.get(), a_im.get(), G, Q, T(1));
      anticausal_segments<T, true, false><<<nb, 128>>>(a_re.get(), a_im.get(), data, nullptr, G, Q);
      ++q;
    }
    check_launch(what);
  }
}

SmoothingPoles as_smoothing(const Poles& p) {
  SmoothingPoles sp;
  for (int q = 0; q < p.count; ++q) sp.z.emplace_back(p.z[static_cast<std::size_t>(q)], 0.0);
  sp.gain = p.gain;
  return sp;
}

// The interpolating prefilter of every axis (degree, boundary already mapped), in place.
template <class T>
void prefilter_all(T* data, const Layout& layout, int degree, Boundary b) {
  if (degree < 2) return;
  if constexpr (std::is_same<T, float>::value) {
    PrefilterConfig cfg;
    cfg.degree = degree;
    cfg.boundary = b;
    prefilter(data, layout, cfg);
  } else {
    const SmoothingPoles sp = as_smoothing(bspline_poles(degree));
    for (std::size_t axis = 0; axis < layout.rank(); ++axis)
      if (layout.dims[axis] >= 2) direct_axis_lines<T>(data, layout, axis, sp, b);
  }
}

void copy_async(void* dst, const void* src, std::size_t bytes, const char* what) {
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0), what);
}

// The filters' common path: the coefficients (made from the samples unless the input holds
// them), then every term in one stencil pass.
template <class T>
void filter_terms(const T* src, const std::vector<T*>& dst, const Layout& layout,
                  const std::vector<std::vector<int>>& orders, int combine,
                  const DerivativeOptions& opt, const char* what) {
  check_layout(layout, what);
  check_degree(opt.degree, 0, kMaxDegree);
  if (!src) throw Error(std::string(what) + ": a null source");
  const std::size_t want = combine == kEach ? orders.size() : 1;
  if (dst.size() != want)
    throw Error(std::string(what) + ": " + std::to_string(want) + " outputs expected, got " +
                std::to_string(dst.size()));
  for (T* d : dst)
    if (!d) throw Error(std::string(what) + ": a null destination");
  std::vector<Term> terms;
  for (const auto& order : orders) {
    check_derivative_order(order, layout.rank(), opt.degree, what);
    terms.push_back(Term{std::vector<int>(layout.rank(), opt.degree), order});
  }
  const std::size_t pad =
      opt.input_is_coefficients ? 0 : interpolation_pad(opt.boundary, opt.degree);
  if (opt.input_is_coefficients || opt.degree < 2) {
    run_stencil(src, dst, layout, 0, terms, combine, opt.boundary, opt.cval, what);
    return;
  }
  Layout padded = layout;
  for (auto& d : padded.dims) d += 2 * pad;
  check_layout(padded, what);
  Scratch<T> coef(padded.size(), "CUDA derivative filter: allocating the coefficients");
  if (pad == 0) {
    copy_async(coef.get(), src, layout.size() * sizeof(T), what);
  } else {
    PadGeometry G{};
    const int lead = 3 - static_cast<int>(layout.rank());
    for (int a = 0; a < 3; ++a) G.in[a] = G.out[a] = 1, G.pad[a] = 0;
    for (std::size_t d = 0; d < layout.rank(); ++d) {
      const int a = lead + static_cast<int>(d);
      G.in[a] = static_cast<long long>(layout.dims[d]);
      G.out[a] = static_cast<long long>(padded.dims[d]);
      G.pad[a] = static_cast<long long>(pad);
    }
    G.channels = static_cast<int>(layout.channels);
    const long long total = static_cast<long long>(padded.size());
    const long long blocks = std::min<long long>((total + 255) / 256, 1 << 16);
    pad_kernel<T><<<static_cast<unsigned>(blocks), 256>>>(
        src, coef.get(), G, opt.boundary == Boundary::Nearest, static_cast<T>(opt.cval), total);
    check_launch(what);
  }
  prefilter_all<T>(coef.get(), padded, opt.degree, prefilter_boundary(opt.boundary));
  run_stencil<T>(coef.get(), dst, padded, pad, terms, combine, opt.boundary, opt.cval, what);
}

std::vector<int> unit(std::size_t rank, std::size_t a, int m) {
  std::vector<int> o(rank, 0);
  o[a] = m;
  return o;
}

}  // namespace

// ---- Device arrays --------------------------------------------------------------------------

template <class T>
bool direct_transform_tiled(int degree, double lambda) {
  if (!std::is_same<T, float>::value) return false;
  if (lambda == 0) return true;
  const SmoothingPoles sp = smoothing_poles(degree, lambda);
  return sp.z.empty() || !tiled_passes(sp).empty();
}

template <class T>
void direct_transform(T* data, const Layout& layout, const SplineTransformOptions& opt) {
  const char* what = "CUDA direct transform";
  check_layout(layout, what);
  if (!data) throw Error(std::string(what) + ": a null array");
  const std::size_t rank = layout.rank();
  // Every check before any work: degrees, lambda, the poles of each axis.
  std::vector<int> degree(rank);
  std::vector<SmoothingPoles> poles(rank);
  for (std::size_t a = 0; a < rank; ++a) {
    degree[a] = transform_degree(opt, a, rank);
    poles[a] = smoothing_poles(degree[a], opt.lambda);
  }
  const Boundary b = prefilter_boundary(opt.boundary);
  if (std::is_same<T, float>::value && opt.lambda == 0 &&
      std::all_of(degree.begin(), degree.end(), [&](int n) { return n == degree[0]; })) {
    prefilter_all<T>(data, layout, degree[0], b);  // the prefilter itself: the same bits
    return;
  }
  if constexpr (std::is_same<T, float>::value) {
    // 2-D, the same degree on both axes: both axes in one pass where it applies.
    if (rank == 2 && degree[0] == degree[1] && !poles[0].z.empty()) {
      const std::vector<detail::Sections> passes = tiled_passes(poles[0]);
      if (passes.size() == 1 && detail::prefilter_2d_sections(data, layout, b, passes[0])) return;
    }
  }
  for (std::size_t a = 0; a < rank; ++a) {
    if (poles[a].z.empty() || layout.dims[a] < 2) continue;
    if constexpr (std::is_same<T, float>::value) {
      if (opt.lambda == 0) {
        PrefilterConfig cfg;
        cfg.degree = degree[a];
        cfg.boundary = b;
        prefilter_axis(data, layout, a, cfg);
        continue;
      }
      const std::vector<detail::Sections> passes = tiled_passes(poles[a]);
      if (!passes.empty()) {
        for (const detail::Sections& p : passes)
          detail::prefilter_axis_sections(data, data, layout, a, b, p);
        continue;
      }
    }
    direct_axis_lines<T>(data, layout, a, poles[a], b);
  }
}

template <class T>
void indirect_transform(const T* src, T* dst, const Layout& layout,
                        const SplineTransformOptions& opt) {
  const char* what = "CUDA indirect transform";
  check_layout(layout, what);
  if (!src || !dst) throw Error(std::string(what) + ": a null source or destination");
  Term t;
  for (std::size_t a = 0; a < layout.rank(); ++a) {
    t.degree.push_back(transform_degree(opt, a, layout.rank()));
    t.order.push_back(0);
  }
  const Boundary b = prefilter_boundary(opt.boundary);
  if (src == dst) {
    Scratch<T> copy(layout.size(), "CUDA indirect transform: allocating a copy");
    copy_async(copy.get(), src, layout.size() * sizeof(T), what);
    run_stencil<T>(copy.get(), {dst}, layout, 0, {t}, kEach, b, 0.0, what);
    return;
  }
  run_stencil<T>(src, {dst}, layout, 0, {t}, kEach, b, 0.0, what);
}

template <class T>
void derivative_filter(const T* src, T* dst, const Layout& layout, const std::vector<int>& order,
                       const DerivativeOptions& opt) {
  filter_terms<T>(src, {dst}, layout, {order}, kEach, opt, "CUDA derivative");
}

template <class T>
void gradient_filter(const T* src, const std::vector<T*>& dst, const Layout& layout,
                     const DerivativeOptions& opt) {
  if (opt.degree < 1) throw Error("CUDA gradient: degree 0 (nearest) has no derivative");
  std::vector<std::vector<int>> orders;
  for (std::size_t a = 0; a < layout.rank(); ++a) orders.push_back(unit(layout.rank(), a, 1));
  filter_terms<T>(src, dst, layout, orders, kEach, opt, "CUDA gradient");
}

template <class T>
void gradient_magnitude_filter(const T* src, T* dst, const Layout& layout,
                               const DerivativeOptions& opt) {
  if (opt.degree < 1) throw Error("CUDA gradient magnitude: degree 0 (nearest) has no derivative");
  std::vector<std::vector<int>> orders;
  for (std::size_t a = 0; a < layout.rank(); ++a) orders.push_back(unit(layout.rank(), a, 1));
  filter_terms<T>(src, {dst}, layout, orders, kNorm, opt, "CUDA gradient magnitude");
}

static void check_second(const DerivativeOptions& opt, const char* what) {
  if (opt.degree < 2)
    throw Error(std::string(what) + " needs second derivatives: degree " +
                std::to_string(opt.degree) + " has none (use degree 2..7)");
}

template <class T>
void hessian_filter(const T* src, const std::vector<T*>& dst, const Layout& layout,
                    const DerivativeOptions& opt) {
  check_second(opt, "CUDA Hessian");
  std::vector<std::vector<int>> orders;
  const std::size_t rank = layout.rank();
  for (std::size_t a = 0; a < rank; ++a)
    for (std::size_t b = a; b < rank; ++b) {
      std::vector<int> o(rank, 0);
      ++o[a];
      ++o[b];
      orders.push_back(o);
    }
  filter_terms<T>(src, dst, layout, orders, kEach, opt, "CUDA Hessian");
}

template <class T>
void laplacian_filter(const T* src, T* dst, const Layout& layout, const DerivativeOptions& opt) {
  check_second(opt, "CUDA Laplacian");
  std::vector<std::vector<int>> orders;
  for (std::size_t a = 0; a < layout.rank(); ++a) orders.push_back(unit(layout.rank(), a, 2));
  filter_terms<T>(src, {dst}, layout, orders, kSum, opt, "CUDA Laplacian");
}

// ---- Host conveniences ------------------------------------------------------------------------

namespace {

using detail::DeviceCopy;

template <class T>
Layout checked(const Array<T>& a, const char* what) {
  if (a.rank() == 0) throw Error(std::string(what) + ": the input array is empty");
  const Layout l = Layout::of(a);
  check_layout(l, what);
  require(what);
  return l;
}

// Runs `f(src, outs)` for `count` outputs of the input's shape and downloads them.
template <class T, class F>
std::vector<Array<T>> run_host(const Array<T>& input, std::size_t count, const char* what, F f) {
  const Layout l = checked(input, what);
  DeviceCopy<T> src(input, what);
  std::vector<DeviceCopy<T>> outs;
  std::vector<T*> ptrs;
  for (std::size_t q = 0; q < count; ++q) {
    outs.emplace_back(input.size(), what);
    ptrs.push_back(outs.back().get());
  }
  f(src.get(), ptrs, l);
  synchronize(what);
  std::vector<Array<T>> res;
  for (std::size_t q = 0; q < count; ++q) {
    Array<T> a(input.dims(), input.channels());
    outs[q].download(a, what);
    res.push_back(std::move(a));
  }
  return res;
}

}  // namespace

template <class T>
void direct_transform(Array<T>& a, const SplineTransformOptions& opt) {
  const char* what = "CUDA direct transform";
  const Layout l = checked(a, what);
  DeviceCopy<T> d(a, what);
  direct_transform<T>(d.get(), l, opt);
  synchronize(what);
  d.download(a, what);
}

template <class T>
void indirect_transform(Array<T>& a, const SplineTransformOptions& opt) {
  a = run_host<T>(a, 1, "CUDA indirect transform",
                  [&](const T* s, const std::vector<T*>& o, const Layout& l) {
                    indirect_transform<T>(s, o[0], l, opt);
                  })[0];
}

template <class T>
Array<T> derivative_filter(const Array<T>& input, const std::vector<int>& order,
                           const DerivativeOptions& opt) {
  check_derivative_order(order, input.rank(), opt.degree, "CUDA derivative");
  return run_host<T>(input, 1, "CUDA derivative",
                     [&](const T* s, const std::vector<T*>& o, const Layout& l) {
                       derivative_filter<T>(s, o[0], l, order, opt);
                     })[0];
}

template <class T>
std::vector<Array<T>> gradient_filter(const Array<T>& input, const DerivativeOptions& opt) {
  return run_host<T>(input, input.rank(), "CUDA gradient",
                     [&](const T* s, const std::vector<T*>& o, const Layout& l) {
                       gradient_filter<T>(s, o, l, opt);
                     });
}

template <class T>
Array<T> gradient_magnitude_filter(const Array<T>& input, const DerivativeOptions& opt) {
  return run_host<T>(input, 1, "CUDA gradient magnitude",
                     [&](const T* s, const std::vector<T*>& o, const Layout& l) {
                       gradient_magnitude_filter<T>(s, o[0], l, opt);
                     })[0];
}

template <class T>
std::vector<Array<T>> hessian_filter(const Array<T>& input, const DerivativeOptions& opt) {
  const std::size_t r = input.rank();
  return run_host<T>(input, r * (r + 1) / 2, "CUDA Hessian",
                     [&](const T* s, const std::vector<T*>& o, const Layout& l) {
                       hessian_filter<T>(s, o, l, opt);
                     });
}

template <class T>
Array<T> laplacian_filter(const Array<T>& input, const DerivativeOptions& opt) {
  return run_host<T>(input, 1, "CUDA Laplacian",
                     [&](const T* s, const std::vector<T*>& o, const Layout& l) {
                       laplacian_filter<T>(s, o[0], l, opt);
                     })[0];
}

#define SV_BSPLINE_INSTANTIATE(T)                                                                  \
  template bool direct_transform_tiled<T>(int, double);                                            \
  template void direct_transform<T>(T*, const Layout&, const SplineTransformOptions&);             \
  template void indirect_transform<T>(const T*, T*, const Layout&, const SplineTransformOptions&); \
  template void derivative_filter<T>(const T*, T*, const Layout&, const std::vector<int>&,         \
                                     const DerivativeOptions&);                                    \
  template void gradient_filter<T>(const T*, const std::vector<T*>&, const Layout&,                \
                                   const DerivativeOptions&);                                      \
  template void gradient_magnitude_filter<T>(const T*, T*, const Layout&,                          \
                                             const DerivativeOptions&);                            \
  template void hessian_filter<T>(const T*, const std::vector<T*>&, const Layout&,                 \
                                  const DerivativeOptions&);                                       \
  template void laplacian_filter<T>(const T*, T*, const Layout&, const DerivativeOptions&);        \
  template void direct_transform<T>(Array<T>&, const SplineTransformOptions&);                     \
  template void indirect_transform<T>(Array<T>&, const SplineTransformOptions&);                   \
  template Array<T> derivative_filter<T>(const Array<T>&, const std::vector<int>&,                 \
                                         const DerivativeOptions&);                                \
  template std::vector<Array<T>> gradient_filter<T>(const Array<T>&, const DerivativeOptions&);    \
  template Array<T> gradient_magnitude_filter<T>(const Array<T>&, const DerivativeOptions&);       \
  template std::vector<Array<T>> hessian_filter<T>(const Array<T>&, const DerivativeOptions&);     \
  template Array<T> laplacian_filter<T>(const Array<T>&, const DerivativeOptions&);

SV_BSPLINE_INSTANTIATE(float)
SV_BSPLINE_INSTANTIATE(double)

}  // namespace sv::cuda
