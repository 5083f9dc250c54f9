// The B-spline pyramid's per-line arithmetic and its per-axis plan, shared by the CPU
// (pyramid.cpp) and CUDA (cuda/src/pyramid.cu) so that both compute the same thing in the same
// order and agree to rounding.
//
// A pyramid operation is a list of passes (PyramidPass), one per filtered axis: (1) optionally
// the fine interpolating prefilter of the input lines, (2) optionally an FIR from the input line
// to the output line (Taps: a table of folded indices and weights per output sample), (3)
// optionally the inverse of the coarse Gram matrix, a recursive filter with the poles of
// beta_{2n+1}, on the output lines. Each pass works in double and rounds to T at its end. The
// plans (reduce_plan, sample_plan, expand_plan) are built on the host by pyramid.cpp; the line
// routines below (filter_poles, fir_lines) are inline and, under nvcc, __host__ __device__.
//
// Lines are "lanes": element k of lane w of a group of `width` lanes sits at x[k * stride + w]
// (the CPU: blocks of up to 32 interleaved lines, stride = width; CUDA: one lane per thread,
// width 1, stride = the distance between a line's consecutive samples in its buffer).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "splineview/array.h"
#include "splineview/bspline.h"
#include "splineview/error.h"
#include "splineview/pyramid.h"

#if defined(__CUDACC__)
#define SV_PYRAMID_HD __host__ __device__
#else
#define SV_PYRAMID_HD
#endif
#if defined(__CUDA_ARCH__)
#define SV_PYRAMID_UNROLL _Pragma("unroll")
#else
#define SV_PYRAMID_UNROLL
#endif

namespace sv::pyramid_detail {

// ---- Extensions with a symmetry of its own at each end --------------------------------------

// Whole: whole-sample symmetric (mirror), Half: half-sample symmetric (reflect).
enum class End { Whole, Half, Periodic };

struct Ends {
  End left = End::Half, right = End::Half;
};

inline End end_of(Boundary b) {
  switch (b) {
    case Boundary::Mirror:
      return End::Whole;
    case Boundary::Periodic:
      return End::Periodic;
    default:
      return End::Half;
  }
}

inline Ends ends_of(const PyramidAxis& a) {
  return {end_of(a.left), end_of(a.right)};
}

// Period of the extended line of n >= 2 samples: x[0..n-1] followed by the reflected part,
// which starts at x[n-1] (Half right end) or x[n-2] (Whole) and runs back to x[0] (Half left
// end) or x[1] (Whole).
SV_PYRAMID_HD inline long period(long n, Ends e) {
  if (e.left == End::Periodic) return n;
  const long start = e.right == End::Half ? n - 1 : n - 2;
  const long stop = e.left == End::Half ? 0 : 1;
  const long refl = start - stop + 1;
  return n + (refl > 0 ? refl : 0);
}

// The index in [0, n) that the extended line holds at k.
SV_PYRAMID_HD inline long fold(long k, long n, Ends e) {
  if (k >= 0 && k < n) return k;
  if (n == 1) return 0;
  const long p = period(n, e);
  long m = k % p;
  if (m < 0) m += p;
  if (m < n) return m;
  const long start = e.right == End::Half ? n - 1 : n - 2;
  return start - (m - n);
}

// ---- Recursive symmetric all-pole filters ---------------------------------------------------

struct PoleSet {
  std::vector<double> z;
  double gain = 1;  // prod (1 - z)(1 - 1/z): DC gain 1
};

inline PoleSet pole_set(std::vector<double> z) {
  PoleSet p;
  p.z = std::move(z);
  for (double q : p.z) p.gain *= (1 - q) * (1 - 1 / q);
  return p;
}

// Terms K of sum_k z^k x_k after which the tail |z|^K / (1 - |z|) is below half an ulp of double.
inline std::size_t horizon(double z) {
  const double eps = std::numeric_limits<double>::epsilon() / 2;
  const double a = std::fabs(z);
  if (a < 1e-300) return 1;
  return static_cast<std::size_t>(std::ceil(std::log(eps * (1 - a)) / std::log(a))) + 1;
}

// The poles of a PoleSet with their exact starts for lines of n samples extended by `e`,
// computed once on the host (beta_15 has 7 poles; reduce2 by phases adds the 3 squared poles of
// the degree-7 prefilter).
constexpr int kMaxPoles = 10;
struct LinePole {
  double z = 0;
  long terms = 0;             // causal start: terms summed (the horizon or one period)
  double causal_scale = 1;    // 1 / (1 - z^period) when terms is the period, else 1
  long pterms = 0;            // periodic anticausal start: terms summed
  double periodic_scale = 0;  // -z (/ (1 - z^n) when pterms == n)
  long horizon = 0;           // terms after which |z|^k / (1 - |z|) is below half an ulp
};
struct PoleLine {
  int count = 0;
  double gain = 1;
  long n = 0;
  Ends ends;
  LinePole p[kMaxPoles];
};

inline PoleLine pole_line(const PoleSet& s, long n, Ends e) {
  if (s.z.size() > static_cast<std::size_t>(kMaxPoles))
    throw Error("pyramid: " + std::to_string(s.z.size()) + " poles in one filter, at most " +
                std::to_string(kMaxPoles));
  PoleLine out;
  out.count = static_cast<int>(s.z.size());
  out.gain = s.gain;
  out.n = n;
  out.ends = e;
  if (n < 2) return out;
  const long per = period(n, e);
  for (int q = 0; q < out.count && q < kMaxPoles; ++q) {
    const double z = s.z[static_cast<std::size_t>(q)];
    LinePole& P = out.p[q];
    P.z = z;
    const std::size_t h = horizon(z);
    P.horizon = static_cast<long>(h);
    const std::size_t terms = std::min<std::size_t>(h, static_cast<std::size_t>(per));
    P.terms = static_cast<long>(terms);
    if (terms == static_cast<std::size_t>(per))
      P.causal_scale = 1 / (1 - std::pow(z, static_cast<double>(per)));
    const std::size_t pt = std::min<std::size_t>(h, static_cast<std::size_t>(n));
    P.pterms = static_cast<long>(pt);
    double s2 = -z;
    if (pt == static_cast<std::size_t>(n)) s2 /= 1 - std::pow(z, static_cast<double>(n));
    P.periodic_scale = s2;
  }
  return out;
}

// The causal start of one pole for `width` lanes: c+[0] = sum_{k >= 0} z^k x~[-k] of the line
// src (times `scale`, exact for 1) extended by `e`, summed over one period of the extension
// (closed by 1 / (1 - z^P)) or over the horizon, into dst[0..width) (acc holds `width` doubles;
// dst may be src).
SV_PYRAMID_HD inline void causal_start(const double* src, double* dst, long n, std::size_t width,
                                       std::size_t stride, const LinePole& P, Ends e, double scale,
                                       double* acc) {
  const double z = P.z;
  for (std::size_t w = 0; w < width; ++w) acc[w] = 0.0;
  double zk = 1;
  for (long k = 0; k < P.terms; ++k) {
    const double* row = src + static_cast<std::size_t>(fold(-k, n, e)) * stride;
    for (std::size_t w = 0; w < width; ++w) acc[w] += zk * (row[w] * scale);
    zk *= z;
  }
  if (P.causal_scale != 1)
    for (std::size_t w = 0; w < width; ++w) acc[w] *= P.causal_scale;
  for (std::size_t w = 0; w < width; ++w) dst[w] = acc[w];
}

// The anticausal start: c-[n-1] = -sum_{m >= 0} z^(m+1) c+[n-1+m] in closed form for the right
// end's symmetry (the period sum for periodic), from the causal line src into out[0..width)
// (element n-1 of the destination line, which may be src's).
SV_PYRAMID_HD inline void anticausal_start(const double* src, double* out, long n,
                                           std::size_t width, std::size_t stride, const LinePole& P,
                                           Ends e, double* acc) {
  const double z = P.z;
  const double* last = src + static_cast<std::size_t>(n - 1) * stride;
  switch (e.right) {
    case End::Half: {
      const double s = z / (z - 1);
      for (std::size_t w = 0; w < width; ++w) out[w] = last[w] * s;
      break;
    }
    case End::Whole: {
      const double s = z / (z * z - 1);
      const double* before = last - stride;
      for (std::size_t w = 0; w < width; ++w) out[w] = s * (last[w] + z * before[w]);
      break;
    }
    case End::Periodic: {
      for (std::size_t w = 0; w < width; ++w) acc[w] = 0.0;
      double zj = 1;
      for (long j = 0; j < P.pterms; ++j) {
        const double* row = src + static_cast<std::size_t>((n - 1 + j) % n) * stride;
        for (std::size_t w = 0; w < width; ++w) acc[w] += zj * row[w];
        zj *= z;
      }
      for (std::size_t w = 0; w < width; ++w) out[w] = P.periodic_scale * acc[w];
      break;
    }
  }
}

// Applies prod_z (1-z)(1-1/z) / ((1 - z Z^-1)(1 - z Z)) to `width` lanes of p.n samples extended
// by p.ends (element k of lane w at x[k * stride + w]; acc holds `width` doubles): per pole the
// causal recursion started with the exact sum over one period of the extension (or over the
// horizon when the period is longer), then the anticausal one started with the closed form of
// the right end's symmetry. Exact on the infinite extended line for every n (n = 1: the
// identity). (CUDA runs the same starts and recursions with the lines cut into segments:
// cuda/src/pyramid.cu.)
inline void filter_poles(double* x, std::size_t width, std::size_t stride, const PoleLine& p,
                         double* acc) {
  const long n = p.n;
  const Ends e = p.ends;
  if (n == 1 || p.count == 0) return;
  for (long k = 0; k < n; ++k) {
    double* row = x + static_cast<std::size_t>(k) * stride;
    for (std::size_t w = 0; w < width; ++w) row[w] *= p.gain;
  }
  for (int q = 0; q < p.count; ++q) {
    const double z = p.p[q].z;
    causal_start(x, x, n, width, stride, p.p[q], e, 1.0, acc);
    for (long k = 1; k < n; ++k) {
      double* row = x + static_cast<std::size_t>(k) * stride;
      const double* prev = row - stride;
      for (std::size_t w = 0; w < width; ++w) row[w] += z * prev[w];
    }
    anticausal_start(x, x + static_cast<std::size_t>(n - 1) * stride, n, width, stride, p.p[q], e,
                     acc);
    for (long k = n - 2; k >= 0; --k) {
      double* row = x + static_cast<std::size_t>(k) * stride;
      const double* next = row + stride;
      for (std::size_t w = 0; w < width; ++w) row[w] = z * (next[w] - row[w]);
    }
  }
}

// ---- FIR tables -------------------------------------------------------------------------

// Output j = sum_{t in [row[j], row[j+1])} weight[t] * input[index[t]].
struct Taps {
  std::vector<std::size_t> row{0};
  std::vector<long> index;
  std::vector<double> weight;
  std::size_t out() const { return row.size() - 1; }
  // Appends one output row from (unfolded index, weight) pairs, folding the indices into
  // [0, n) and merging repeats.
  void add_row(const std::vector<std::pair<long, double>>& taps, long n, Ends e) {
    std::map<long, double> merged;
    for (const auto& [k, w] : taps)
      if (w != 0) merged[fold(k, n, e)] += w;
    for (const auto& [k, w] : merged) {
      index.push_back(k);
      weight.push_back(w);
    }
    row.push_back(index.size());
  }
};

// Output j of `width` lanes: out[w] = sum_t weight[t] * in[index[t] * stride + w], summed in
// the order of the table, in double.
template <class In>
SV_PYRAMID_HD inline void fir_lines(const In* in, std::size_t stride, double* out,
                                    std::size_t width, const std::size_t* row, const long* index,
                                    const double* weight, std::size_t j) {
  for (std::size_t w = 0; w < width; ++w) out[w] = 0.0;
  for (std::size_t t = row[j]; t < row[j + 1]; ++t) {
    const double wt = weight[t];
    const In* x = in + static_cast<std::size_t>(index[t]) * stride;
    for (std::size_t w = 0; w < width; ++w) out[w] += wt * static_cast<double>(x[w]);
  }
}

// ---- Fused tiles: a pass's line routines on a tile of lines at once (CUDA's pass kernel) ------
//
// CUDA runs a whole pass (prefilter, FIR, Gram filter) in one kernel: a block holds a tile of W
// lanes of one segment of the lines in shared memory (double), element k of lane w at
// buf[k * LS + w], and C threads per lane share each recursion: every thread runs its chunk of
// L samples from zero, the chunks' carries are combined by a scan (the recursion is affine:
// y_true[k] = y_local[k] + z^(k - a + 1) y_true[a - 1]), and each thread adds its carry times
// the powers of z. The first and last chunks start from the CPU's exact starts (causal_start,
// anticausal_start) where the tile holds the line's end; elsewhere (a segment of a long line)
// the tile reaches the sum of the poles' horizons beyond the samples it writes, so that starting
// from zero there is below half an ulp of double at the written ones (the truncation the CPU's
// own start sums make). The phases below are written once for both the device (a phase per
// thread, then __syncthreads) and a host emulation (a phase for every thread in turn), which
// tests/cuda/test_cuda_pyramid.cpp checks against the line routines above without a GPU.

// One tile along the lines: fine input samples [e0, e1), the FIR's outputs [c0, c1) (the line
// itself when the pass has no FIR), of which [v0, v1) are written.
struct TileSeg {
  long e0 = 0, e1 = 0, c0 = 0, c1 = 0, v0 = 0, v1 = 0;
};

// Everything a tile needs besides its data (plain values: a kernel argument).
struct TileArgs {
  int W = 1, C = 1;         // lanes per tile, threads (chunks) per lane
  long LS = 1;              // doubles between a lane's consecutive elements (W or W + 1)
  long fmax = 0, gmax = 0;  // buffer lengths (fine, coarse; gmax 0 without an FIR)
  long lf = 1, lg = 1;      // chunk lengths
  long n = 0, m = 0;        // line lengths before and after the pass
  long long lanes = 0, inner = 1;
  bool k_fast = false;  // loads and stores walk along the lines (contiguous lines)
  bool has_pre = false, has_taps = false, has_post = false;
  PoleLine pre, post;
  const std::size_t* row = nullptr;
  const long* index = nullptr;
  const double* weight = nullptr;
  // The FIR's interior rows [fir_lo, fir_hi) repeat with period fir_period (1 or 2; 0: none):
  // row fir_lo + ph + q P has the taps of row fir_lo + ph (fir_w, the same order) at indices
  // fir_first[ph] + q fir_shift + fir_off[ph][t] / LS (fir_off holds the offsets in the tile's
  // buffer: times LS). They are read from here (the kernel's arguments) instead of the table.
  static constexpr int kFirTaps = 32;
  int fir_period = 0;
  long fir_lo = 0, fir_hi = 0, fir_shift = 0;
  int fir_count[2] = {0, 0};
  long fir_first[2] = {0, 0};
  int fir_off[2][kFirTaps] = {};
  double fir_w[2][kFirTaps] = {};
  // Shared doubles of a tile: lane offsets (2 W), the fine and coarse buffers, the scan (W C:
  // each chunk's value, replaced by its carry; 2 W per warp: the warps' totals forward and
  // backward).
  static std::size_t shared_doubles(int W, int C, long LS, long fmax, long gmax) {
    const long warps = (static_cast<long>(W) * C + 31) / 32;
    return static_cast<std::size_t>(2L * W + LS * (fmax + gmax) + static_cast<long>(W) * C +
                                    2L * W * warps);
  }
  std::size_t shared_doubles() const { return shared_doubles(W, C, LS, fmax, gmax); }
};

// causal_start for one lane of a tile that starts where its line does (scale 1, element k at
// x[k * LS]), into x[0]: the same terms in the same order, with the folded index walked (a step
// back, bouncing off the ends or wrapping for periodic) instead of fold's divisions.
SV_PYRAMID_HD inline void tile_causal_start(double* x, long LS, long n, const LinePole& P, Ends e) {
  const double z = P.z;
  double acc = 0, zk = 1;
  // Where the terms end before the line's right end (the usual case), the folded index runs
  // straight: x[0], then x[0], x[1], ... (half-sample left end), x[1], x[2], ... (whole-sample),
  // or x[n - 1], x[n - 2], ... (periodic): the same terms in the same order, by a pointer.
  const bool straight = e.left == End::Periodic ? P.terms <= n
                        : e.left == End::Half   ? P.terms <= n + 1
                                                : P.terms <= n;
  if (straight && P.terms > 0) {
    const int T = static_cast<int>(P.terms), ls = static_cast<int>(LS);
    acc = x[0];
    zk = z;
    const double* p = e.left == End::Periodic ? x + (n - 1) * LS : e.left == End::Half ? x : x + LS;
    const int step = e.left == End::Periodic ? -ls : ls;
    int k = 1;
    for (; k + 4 <= T; k += 4, p += 4 * step) {
      double v[4];
      SV_PYRAMID_UNROLL
      for (int u = 0; u < 4; ++u) v[u] = p[u * step];
      SV_PYRAMID_UNROLL
      for (int u = 0; u < 4; ++u) {
        acc += zk * v[u];
        zk *= z;
      }
    }
    for (; k < T; ++k, p += step) {
      acc += zk * *p;
      zk *= z;
    }
  } else {
    long i = 0, d = -1;
    for (long k = 0; k < P.terms; ++k) {
      acc += zk * x[i * LS];
      zk *= z;
      i += d;
      if (i < 0) {
        if (e.left == End::Periodic) {
          i = n - 1;
        } else {
          i = e.left == End::Half ? 0 : 1;
          d = 1;
        }
      } else if (i >= n) {
        i = e.right == End::Half ? n - 1 : n - 2;
        d = -1;
      }
    }
  }
  if (P.causal_scale != 1) acc *= P.causal_scale;
  x[0] = acc;
}

// anticausal_start for one lane of a tile that ends where its line does (len samples; the whole
// line for periodic), into x[len - 1]: the same arithmetic, the periodic sum's index wrapped by a
// subtraction.
SV_PYRAMID_HD inline void tile_anticausal_start(double* x, long LS, long len, const LinePole& P,
                                                Ends e) {
  const double z = P.z;
  double* last = x + (len - 1) * LS;
  switch (e.right) {
    case End::Half:
      *last = *last * (z / (z - 1));
      break;
    case End::Whole: {
      const double s = z / (z * z - 1);
      *last = s * (*last + z * *(last - LS));
      break;
    }
    case End::Periodic: {
      double acc = 0, zj = 1;
      long i = len - 1;
      for (long j = 0; j < P.pterms; ++j) {
        acc += zj * x[i * LS];
        zj *= z;
        if (++i >= len) i -= len;
      }
      *last = P.periodic_scale * acc;
      break;
    }
  }
}

// The chunks' carries (forward: the true value at the end of chunk c - 1, y_end[c - 1], where
// y_end[c] = K[c] + z^L y_end[c - 1]; backward: y_first[c + 1], where y_first[c] = K[c] +
// z^L y_first[c + 1]; 0 past the first / last chunk) from each chunk's value run from zero,
// K[c W + w], into R[c W + w] (R may be K); chunks past the line's end hold 0, and only the last
// nonempty chunk may be shorter than L, whose own scanned value no one reads. The host's
// sequential version (the emulation's Exec::carries calls it); the device combines the chunks of
// a warp by shuffles and the warps' totals through shared memory (cuda/src/pyramid.cu).
inline void tile_carries_serial(const double* K, double* R, int W, int C, double zL, bool forward) {
  for (int w = 0; w < W; ++w) {
    double y = 0;
    for (int i = 0; i < C; ++i) {
      const int c = forward ? i : C - 1 - i;
      const double k = K[c * W + w];
      R[c * W + w] = y;
      y = k + zL * y;
    }
  }
}

// Walks `count` values x[k * LS], k = first, first + DIR, ..., v <- step(v) for each; eight
// loaded before their arithmetic (the stores could alias them for all the compiler knows). LSC:
// LS known when compiling (the device's kernels, one per tile width: the eight addresses are then
// one register and constant offsets), or 0 (LS as given).
template <int DIR, int LSC, class Step>
SV_PYRAMID_HD inline void tile_walk(double* x, long LS, long first, long count, Step step) {
  const int d = DIR * (LSC > 0 ? LSC : static_cast<int>(LS));
  double* p = x + first * (LSC > 0 ? LSC : LS);
  const int n = static_cast<int>(count);
  int i = 0;
  for (; i + 8 <= n; i += 8, p += 8 * d) {
    double r[8];
    SV_PYRAMID_UNROLL
    for (int u = 0; u < 8; ++u) r[u] = p[u * d];
    SV_PYRAMID_UNROLL
    for (int u = 0; u < 8; ++u) r[u] = step(r[u]);
    SV_PYRAMID_UNROLL
    for (int u = 0; u < 8; ++u) p[u * d] = r[u];
  }
  for (; i < n; ++i, p += d) *p = step(*p);
}

#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
// filter_poles without the gain on a tile buffer of `len` samples per lane, chunks of L: the
// line has p.n samples; at_start / at_end: the buffer starts / ends where the line does. K holds
// W C doubles and 2 W per warp (the chunks' values, replaced by their carries; the scan's
// scratch). Exec: each(f) runs f(w, c) for every lane and chunk and then a barrier; local(f) the
// same without the barrier (f touches only its own chunk); carries(K, R, tot, zL, forward) the
// scan above (a barrier inside); sync() a barrier. Per pole and direction a thread runs its
// chunk from zero, the scan gives it the carry of the chunks before it, and it adds the carry
// times the powers of z; the chunk that holds the line's last samples also runs the anticausal
// start (except for periodic ends, whose start sums the whole line, or where that chunk holds a
// single sample), so a pole costs three barriers besides the scans'.
template <int LSC, class Exec>
SV_PYRAMID_HD inline void tile_poles(Exec& ex, double* buf, long len, long L, int W, int C, long LS,
                                     const PoleLine& p, bool at_start, bool at_end, double* K) {
  if (p.n == 1 || p.count == 0 || len < 1) return;
  if (LSC > 0) LS = LSC;
  double* R = K;  // each chunk's carry replaces its value
  double* tot = K + static_cast<long>(W) * C;
  const long last = (len - 1) / L;  // the chunk that holds the buffer's last sample
  const bool own_end = !(at_end && p.ends.right == End::Periodic) && len - last * L >= 2;
  for (int q = 0; q < p.count; ++q) {
    const LinePole& P = p.p[q];
    const double z = P.z;
    double zL = 1;
    for (long i = 0; i < L; ++i) zL *= z;
    // Causal: the exact start where the line starts here (else from zero: y[0] = x[0]); it reads
    // other chunks (the first ones, or the last for periodic ends), so between barriers.
    if (q > 0) ex.sync();  // the caller's phase before ended with one
    ex.each([&](int w, int c) {
      if (c == 0 && at_start) tile_causal_start(buf + w, LS, p.n, P, p.ends);
    });
    ex.local([&](int w, int c) {
      const long a = c * L, b = a + L < len ? a + L : len;
      double* x = buf + w;
      double prev = 0;
      if (a < b) {
        long k = a;
        if (c == 0) {
          prev = x[0];
          k = 1;
        }
        tile_walk<1, LSC>(x, LS, k, b - k, [&](double v) {
          prev = v + z * prev;
          return prev;
        });
      }
      K[c * W + w] = prev;
    });
    ex.carries(K, R, tot, zL, true);
    // The carry; then the anticausal start where the line ends here (else from zero: -z
    // x[len - 1]) and the chunk's anticausal run.
    auto anticausal_start = [&](int w) {
      double* x = buf + w;
      if (at_end) {
        tile_anticausal_start(x, LS, len, P, p.ends);
      } else {
        x[(len - 1) * LS] = z * (0.0 - x[(len - 1) * LS]);
      }
    };
    auto anticausal_run = [&](int w, int c) {
      const long a = c * L, b = a + L < len ? a + L : len;
      double* x = buf + w;
      double next = 0;
      if (a < b) {
        long k = b - 1;
        if (b == len) {
          next = x[(len - 1) * LS];
          k = len - 2;
        }
        tile_walk<-1, LSC>(x, LS, k, k - a + 1, [&](double v) {
          next = z * (next - v);
          return next;
        });
      }
      K[c * W + w] = next;
    };
    ex.local([&](int w, int c) {
      const long a = c * L, b = a + L < len ? a + L : len;
      if (c > 0 && a < b) {
        const double carry = R[c * W + w];
        double zj = z;
        tile_walk<1, LSC>(buf + w, LS, a, b - a, [&](double v) {
          v += zj * carry;
          zj *= z;
          return v;
        });
      }
      if (own_end) {
        if (c == last) anticausal_start(w);
        anticausal_run(w, c);
      }
    });
    if (!own_end) {
      ex.sync();
      ex.each([&](int w, int c) {
        if (c == 0) anticausal_start(w);
      });
      ex.local(anticausal_run);
    }
    ex.carries(K, R, tot, zL, false);
    ex.local([&](int w, int c) {
      const long a = c * L, b = a + L < len ? a + L : len;
      if (a >= b || b == len) return;
      const double carry = R[c * W + w];
      double* x = buf + w;
      double zj = z;
      tile_walk<-1, LSC>(x, LS, b - 1, b - a, [&](double v) {
        v += zj * carry;
        zj *= z;
        return v;
      });
    });
  }
  ex.sync();
}

#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
// One tile of a pass: W lanes from lane l0 of the array src (lines (outer, n, inner), lane
// l = o inner + i) through the prefilter, the FIR and the Gram filter into dst (lines (outer, m,
// inner)), each value rounded to Out (T, as run_axis does, or float from double: the last pole
// pass of reduce2 by phases) once at the end. `sm` holds
// a.shared_doubles() doubles. Exec: each(f) runs f(w, c) for every lane and chunk, flat(f)
// f(t, threads), each followed by a barrier; local, carries and sync as in tile_poles. LSC: a.LS
// when compiling (the device), or 0.
template <class T, int LSC = 0, class Exec, class Out>
SV_PYRAMID_HD inline void run_tile(Exec& ex, double* sm, const TileArgs& a, const TileSeg& s,
                                   const T* src, Out* dst, long long l0) {
  const int W = LSC == 1 ? 1 : LSC > 0 ? LSC - 1 : a.W, C = a.C;
  const long LS = LSC > 0 ? LSC : a.LS;
  long long* base_in = reinterpret_cast<long long*>(sm);
  long long* base_out = base_in + W;
  double* F = sm + 2 * W;
  double* G = a.has_taps ? F + LS * a.fmax : F;
  double* K = F + LS * (a.fmax + a.gmax);
  const long flen = s.e1 - s.e0, glen = s.c1 - s.c0, vlen = s.v1 - s.v0;
  const bool pre = a.has_pre && a.pre.n > 1 && a.pre.count > 0;
  const bool post = a.has_post && a.post.n > 1 && a.post.count > 0;
  ex.flat([&](int t, int) {
    if (t < W) {
      const long long l = l0 + t;
      const long long o = l / a.inner, i = l % a.inner;
      base_in[t] = l < a.lanes ? o * a.n * a.inner + i : -1;
      base_out[t] = l < a.lanes ? o * a.m * a.inner + i : -1;
    }
  });
  // Contiguous lines (k_fast) go a lane at a time, consecutive threads on consecutive samples
  // (no division by the tile's length per element); strided lanes interleave (W a power of 2),
  // thread t on lane t % W. Either way a thread walks a lane by an offset (no 64-bit multiply
  // per element).
  ex.flat([&](int t, int threads) {
    const int fl = static_cast<int>(flen);
    auto lane = [&](int w, int k0, int dk) {
      const long long b = base_in[w];
      double* f = F + w;
      if (b < 0) {
        for (int k = k0; k < fl; k += dk) f[k * LS] = 0.0;
        return;
      }
      long long o = b + (s.e0 + k0) * a.inner;  // an offset walked (no pointer past the lane)
      const long long step = static_cast<long long>(dk) * a.inner;
      for (int k = k0; k < fl; k += dk, o += step) {
        double v = static_cast<double>(src[o]);
        if (pre) v *= a.pre.gain;
        f[k * LS] = v;
      }
    };
    if (W == 1) {
      lane(0, t, threads);
    } else if (a.k_fast) {
      for (int w = 0; w < W; ++w) lane(w, t, threads);
    } else {
      lane(t % W, t / W, threads / W);  // threads = W C
    }
  });
  if (a.has_pre) tile_poles<LSC>(ex, F, flen, a.lf, W, C, LS, a.pre, s.e0 == 0, s.e1 == a.n, K);
  if (a.has_taps) {
    // A thread takes outputs in groups of the repeating rows' period P (1 or 2), so that the
    // threads of a warp are at the same phase and read the same taps from the kernel's
    // parameters (one address for the warp); the phase and period count by a mask and a shift.
    const int P = a.fir_period == 2 ? 2 : 1;
    ex.each([&](int w, int c) {
      for (long j0 = static_cast<long>(c) * P; j0 < glen; j0 += static_cast<long>(C) * P)
        for (int e = 0; e < P && j0 + e < glen; ++e) {
          const long j = j0 + e;
          const long jj = s.c0 + j;
          double r = 0;
          if (jj >= a.fir_lo && jj < a.fir_hi) {
            const long rel = jj - a.fir_lo;
            const int ph = static_cast<int>(rel & (P - 1));
            const long q = P == 2 ? rel >> 1 : rel;
            const double* x = F + (a.fir_first[ph] + q * a.fir_shift - s.e0) * LS + w;
            const int count = a.fir_count[ph];
            int t = 0;
            for (; t + 4 <= count; t += 4) {  // four taps' loads before their arithmetic
              double v[4];
              SV_PYRAMID_UNROLL
              for (int k = 0; k < 4; ++k) v[k] = x[a.fir_off[ph][t + k]];
              SV_PYRAMID_UNROLL
              for (int k = 0; k < 4; ++k) r += a.fir_w[ph][t + k] * v[k];
            }
            for (; t < count; ++t) r += a.fir_w[ph][t] * x[a.fir_off[ph][t]];
          } else {
            const std::size_t t0 = a.row[jj], t1 = a.row[jj + 1];
            std::size_t t = t0;
            for (; t + 4 <= t1; t += 4) {  // four taps' loads before their arithmetic
              double v[4], wt[4];
              SV_PYRAMID_UNROLL
              for (int u = 0; u < 4; ++u) {
                wt[u] = a.weight[t + u];
                v[u] = F[(a.index[t + u] - s.e0) * LS + w];
              }
              SV_PYRAMID_UNROLL
              for (int u = 0; u < 4; ++u) r += wt[u] * v[u];
            }
            for (; t < t1; ++t) r += a.weight[t] * F[(a.index[t] - s.e0) * LS + w];
          }
          G[j * LS + w] = post ? r * a.post.gain : r;
        }
    });
    if (a.has_post) tile_poles<LSC>(ex, G, glen, a.lg, W, C, LS, a.post, s.c0 == 0, s.c1 == a.m, K);
  }
  ex.flat([&](int t, int threads) {  // as the loads
    const int vl = static_cast<int>(vlen);
    const long off = s.v0 - s.c0;
    auto lane = [&](int w, int j0, int dj) {
      const long long b = base_out[w];
      if (b < 0) return;
      long long o = b + (s.v0 + j0) * a.inner;
      const double* g = G + off * LS + w;
      const long long step = static_cast<long long>(dj) * a.inner;
      for (int j = j0; j < vl; j += dj, o += step) dst[o] = static_cast<Out>(g[j * LS]);
    };
    if (W == 1) {
      lane(0, t, threads);
    } else if (a.k_fast) {
      for (int w = 0; w < W; ++w) lane(w, t, threads);
    } else {
      lane(t % W, t / W, threads / W);
    }
  });
}

// Calls f(std::integral_constant<int, S>{}) with S = LS, the lanes' stride of one of tile_plan's
// tile widths W = 1, 2, 4, 8, 16, 32 (LS = 1 or W + 1), for code compiled per width (run_tile's
// LSC); returns false for any other stride.
template <class F>
inline bool with_tile_stride(long LS, F&& f) {
  switch (LS) {
    case 1:
      f(std::integral_constant<int, 1>{});
      return true;
    case 3:
      f(std::integral_constant<int, 3>{});
      return true;
    case 5:
      f(std::integral_constant<int, 5>{});
      return true;
    case 9:
      f(std::integral_constant<int, 9>{});
      return true;
    case 17:
      f(std::integral_constant<int, 17>{});
      return true;
    case 33:
      f(std::integral_constant<int, 33>{});
      return true;
    default:
      return false;
  }
}

// ---- Per-axis plans ---------------------------------------------------------------------

// One separable pass along `axis`: pre-filter the input lines (optional), map them through
// `taps` (optional: otherwise the length stays), post-filter the output lines (optional).
struct PyramidPass {
  std::size_t axis = 0;
  bool has_pre = false, has_taps = false, has_post = false;
  PoleSet pre;
  Ends pre_ends;
  Taps taps;
  PoleSet post;
  Ends post_ends;
  std::size_t in_length = 0;  // the axis's length before the pass
  std::size_t out_length() const { return has_taps ? taps.out() : in_length; }
};

// The tiles of a pass (its segments and threads) for a shared-memory budget of `budget` doubles
// per block and at most `max_threads` threads; `strided`: the lanes are adjacent in memory (the
// pass's axis is not the fastest), so tiles of at least 8 lanes read whole sectors. Lines that
// fit are one tile each; longer ones are cut into segments that reach the poles' horizons beyond
// what they write. Returns false where no tiling fits (a periodic line too long for the budget:
// its exact starts need the whole line), and the caller keeps the unfused kernels.
struct TilePlan {
  TileArgs args;
  std::vector<TileSeg> segs;
};

inline long sum_horizons(const PoleLine& p) {
  long h = 0;
  if (p.n < 2) return 0;
  for (int q = 0; q < p.count; ++q) h += p.p[q].horizon;
  return h;
}

// Whether the exact starts of p on a tile [t0, t1) of its line read only inside the tile.
inline bool starts_inside(const PoleLine& p, long t0, long t1) {
  if (p.n < 2 || p.count == 0) return true;
  if (t0 == 0 && t1 == p.n) return true;
  if (t1 - t0 < 2) return false;
  for (int q = 0; q < p.count; ++q) {
    if (t0 == 0)
      for (long k = 0; k < p.p[q].terms; ++k)
        if (fold(-k, p.n, p.ends) >= t1) return false;
    if (t1 == p.n && p.ends.right == End::Periodic) return false;
  }
  return true;
}

inline bool tile_plan(const PyramidPass& pass, const PoleLine& pre, const PoleLine& post,
                      long long lanes, long long inner, std::size_t budget, int max_threads,
                      TilePlan& out, int min_lanes = 1, int min_lanes_fast = 1) {
  const long n = static_cast<long>(pass.in_length);
  const long m = static_cast<long>(pass.out_length());
  if (n < 1 || m < 1 || lanes < 1) return false;
  std::vector<long> lo(static_cast<std::size_t>(m)), hi(static_cast<std::size_t>(m));
  for (long j = 0; j < m; ++j) {
    if (pass.has_taps) {
      const Taps& t = pass.taps;
      long a = n, b = -1;
      for (std::size_t i = t.row[static_cast<std::size_t>(j)];
           i < t.row[static_cast<std::size_t>(j) + 1]; ++i) {
        a = std::min(a, t.index[i]);
        b = std::max(b, t.index[i]);
      }
      if (b < a) a = b = std::min(j, n - 1);  // an empty row reads nothing
      lo[static_cast<std::size_t>(j)] = a;
      hi[static_cast<std::size_t>(j)] = b;
    } else {
      lo[static_cast<std::size_t>(j)] = hi[static_cast<std::size_t>(j)] = j;
    }
  }
  // The FIR's repeating interior (see TileArgs::fir_period).
  TileArgs fir;
  if (pass.has_taps && m >= 8) {
    const Taps& t = pass.taps;
    auto row_of = [&](long j) { return static_cast<std::size_t>(j); };
    long best_cover = 0;
    for (int P : {1, 2}) {
      const long mid = (m / 2) - (m / 2) % P;
      if (mid + P >= m) continue;
      const std::size_t r0 = t.row[row_of(mid)], r1 = t.row[row_of(mid + P)];
      if (t.row[row_of(mid) + 1] == r0 || t.row[row_of(mid + P) + 1] == r1) continue;
      const long shift = t.index[r1] - t.index[r0];
      // Row j against its reference row (mid or mid + 1), q periods away.
      auto same = [&](long j) {
        const long ref = mid + (((j - mid) % P) + P) % P;
        const long q = (j - ref) / P;
        const std::size_t a0 = t.row[row_of(j)], a1 = t.row[row_of(j) + 1];
        const std::size_t b0 = t.row[row_of(ref)], b1 = t.row[row_of(ref) + 1];
        if (a1 - a0 != b1 - b0 || b1 - b0 > static_cast<std::size_t>(TileArgs::kFirTaps))
          return false;
        for (std::size_t u = 0; u < a1 - a0; ++u)
          if (t.weight[a0 + u] != t.weight[b0 + u] ||
              t.index[a0 + u] != t.index[b0 + u] + q * shift)
            return false;
        return true;
      };
      if (!same(mid) || !same(mid + P - 1)) continue;
      long flo = mid, fhi = mid + P;
      while (flo > 0 && same(flo - 1)) --flo;
      while (fhi < m && same(fhi)) ++fhi;
      if (fhi - flo > best_cover && fhi - flo >= 2 * P) {
        best_cover = fhi - flo;
        fir.fir_period = P;
        fir.fir_lo = flo;
        fir.fir_hi = fhi;
        fir.fir_shift = shift;
        for (int ph = 0; ph < P; ++ph) {
          const std::size_t b0 = t.row[row_of(flo + ph)], b1 = t.row[row_of(flo + ph) + 1];
          fir.fir_count[ph] = static_cast<int>(b1 - b0);
          fir.fir_first[ph] = t.index[b0];
          for (std::size_t u = 0; u < b1 - b0; ++u) {
            fir.fir_off[ph][u] = static_cast<int>(t.index[b0 + u] - t.index[b0]);
            fir.fir_w[ph][u] = t.weight[b0 + u];
          }
        }
      }
    }
  }
  const long hp = pass.has_pre ? sum_horizons(pre) : 0;
  const long hg = pass.has_post ? sum_horizons(post) : 0;
  const bool strided = inner > 4;
  // The segments for `count` pieces of the output, or false if their starts would read outside.
  auto segments = [&](long count, std::vector<TileSeg>& segs, long& fmax, long& gmax) {
    segs.clear();
    fmax = gmax = 0;
    const long sv = (m + count - 1) / count;
    for (long v0 = 0; v0 < m; v0 += sv) {
      TileSeg s;
      s.v0 = v0;
      s.v1 = std::min(m, v0 + sv);
      if (count == 1) {
        s.e0 = 0;
        s.e1 = n;
        s.c0 = 0;
        s.c1 = m;
      } else {
        s.c0 = std::max(0L, s.v0 - hg);
        s.c1 = std::min(m, s.v1 + hg);
        long a = n, b = -1;
        for (long j = s.c0; j < s.c1; ++j) {
          a = std::min(a, lo[static_cast<std::size_t>(j)]);
          b = std::max(b, hi[static_cast<std::size_t>(j)]);
        }
        s.e0 = std::max(0L, a - hp);
        s.e1 = std::min(n, b + 1 + hp);
        if (!pass.has_taps) {  // the line itself: one buffer
          s.e0 = std::min(s.e0, s.c0);
          s.e1 = std::max(s.e1, s.c1);
          s.c0 = s.e0;
          s.c1 = s.e1;
        }
        if (pass.has_pre && !starts_inside(pre, s.e0, s.e1)) return false;
        if (pass.has_post && !starts_inside(post, s.c0, s.c1)) return false;
      }
      fmax = std::max(fmax, s.e1 - s.e0);
      gmax = std::max(gmax, pass.has_taps ? s.c1 - s.c0 : 0L);
      segs.push_back(s);
    }
    return true;
  };
  // The choice: lanes per tile W, threads per lane C and the shared memory per block (at most
  // `budget` doubles), by a rough model of the time: tiles x the latency of one tile / the tiles
  // an SM holds at once (by shared memory, registers (64 a thread: 32 warps) and 32 blocks). A
  // tile's latency counts its phases: loads and stores (slower where fewer than 8 strided lanes
  // share a sector), per pole and direction the chunk's recursion and fix-up (2 L steps), the
  // scan's log2(C) barriers and the exact starts' terms, and the FIR's taps per thread (cheaper for
  // the repeating interior read from the arguments). Constants in cycles, measured only roughly.
  const double taps_per_row =
      pass.has_taps ? static_cast<double>(pass.taps.index.size()) / static_cast<double>(m) : 0;
  const double compact =
      fir.fir_period ? static_cast<double>(fir.fir_hi - fir.fir_lo) / static_cast<double>(m) : 0;
  // An FIR read mostly from the table (the non-dyadic reduce) reads a row's indices and weights
  // once for the tile's lanes: on a strided axis, tiles of at least 8 lanes where one fits
  // (measured on an H100: reduce by 0.71 of 400x300x151 1.77 -> 1.44 ms; the model alone picked
  // 1-4 lanes there).
  if (strided && pass.has_taps && compact < 0.5) min_lanes = std::max(min_lanes, 8);
  // On the fastest axis, at least 4 (H200, reduce by 0.71 of 400x300x151 1.42 -> 1.25 ms,
  // 15257x3736 4.27 -> 4.22; 8 or more made the image slower).
  if (!strided && pass.has_taps && compact < 0.5) min_lanes_fast = std::max(min_lanes_fast, 4);
  auto poles_of = [](const PoleLine& p) { return p.n < 2 ? 0 : p.count; };
  auto terms_of = [](const PoleLine& p) {
    long t = 0;
    for (int q = 0; p.n >= 2 && q < p.count; ++q) t += p.p[q].terms;
    return static_cast<double>(t);
  };
  const int npre = pass.has_pre ? poles_of(pre) : 0, npost = pass.has_post ? poles_of(post) : 0;
  double best = -1;
  for (int W : {32, 16, 8, 4, 2, 1}) {
    if (W > lanes && W > 1 && W / 2 >= lanes) continue;
    const int fewest = strided ? min_lanes : min_lanes_fast;
    if (W < fewest && lanes >= fewest && best >= 0) continue;
    const long LS = W == 1 ? 1 : W + 1;
    const int max_c = std::max(1, max_threads / W);
    std::vector<TileSeg> segs;
    for (std::size_t share : {1, 2, 3, 4, 6, 8, 12}) {
      const long cap_all = static_cast<long>(budget / share);
      // Fixed part: lane offsets and the scan (for the most threads); the rest LS (fmax + gmax).
      const long fixed = static_cast<long>(TileArgs::shared_doubles(W, max_c, LS, 0, 0));
      if (cap_all <= fixed) continue;
      const long cap = (cap_all - fixed) / LS;
      long fmax = 0, gmax = 0;
      // The fewest segments that fit (fmax + gmax falls as the count grows).
      if (!segments(1, segs, fmax, gmax)) continue;
      if (fmax + gmax > cap) {
        // Doubling, then halving the interval: a probe costs the count times its tiles' reach.
        auto fits = [&](long count) {
          return segments(count, segs, fmax, gmax) && fmax + gmax <= cap;
        };
        long hi_c = 2, size = fmax + gmax;
        while (hi_c < m && !fits(hi_c)) {
          // Past the point where more segments shrink the tiles (their reach alone is too big).
          if (fmax + gmax > size * 9 / 10) break;
          size = fmax + gmax;
          hi_c = std::min(m, 2 * hi_c);
        }
        long lo_c = hi_c / 2 + 1;
        if (lo_c < 2) lo_c = 2;
        while (lo_c < hi_c) {
          const long mid_c = (lo_c + hi_c) / 2;
          if (fits(mid_c))
            hi_c = mid_c;
          else
            lo_c = mid_c + 1;
        }
        if (lo_c > m || !segments(lo_c, segs, fmax, gmax) || fmax + gmax > cap) continue;
      }
      const double nseg = static_cast<double>(segs.size());
      double fsum = 0, gsum = 0, vsum = 0;
      for (const TileSeg& sg : segs) {
        fsum += static_cast<double>(sg.e1 - sg.e0);
        gsum += static_cast<double>(pass.has_taps ? sg.c1 - sg.c0 : 0);
        vsum += static_cast<double>(sg.v1 - sg.v0);
      }
      const double favg = fsum / nseg, gavg = gsum / nseg, vavg = vsum / nseg;
      const double sector = strided && W < 8 ? 8.0 / W : 1.0;
      for (int C = 1; C <= max_c; C *= 2) {
        if (C > 1 && (std::max(fmax, gmax) + C - 1) / C < 4) break;
        const long threads = static_cast<long>(W) * C;
        const double bytes =
            8.0 * static_cast<double>(TileArgs::shared_doubles(W, C, LS, fmax, gmax));
        const double warps = static_cast<double>((threads + 31) / 32);
        const double per_sm =
            std::min({32.0, std::floor(227.0 * 1024 / (bytes + 1024)), std::floor(32.0 / warps)});
        if (per_sm < 1) continue;
        const double lf = std::ceil(favg / C), lg = std::ceil(gavg / C);
        // The scan: log2 of the chunks a warp holds in shuffles, then the warps' totals.
        double log_s = 0;
        for (int c = 1; c < std::min(C, std::max(1, 32 / W)); c *= 2) log_s += 1;
        const double barrier = 40 + 8 * warps;
        const double pole = 2.5 * barrier + log_s * 15 + warps * 12;  // barriers, scan
        double cyc = 600 + 6 * std::ceil(favg * W / static_cast<double>(threads)) * sector;
        cyc += npre * 2 * ((2 * lf + 4) * 12 + pole) + terms_of(pre) * 12 / nseg;
        cyc += std::ceil(gavg / C) * (taps_per_row * (compact * 10 + (1 - compact) * 40) + 40);
        cyc += npost * 2 * ((2 * lg + 4) * 12 + pole) + terms_of(post) * 12 / nseg;
        cyc += 300 + 6 * std::ceil(vavg * W / static_cast<double>(threads)) * sector;
        const double tiles = std::ceil(static_cast<double>(lanes) / W) * nseg;
        const double time = tiles * cyc / per_sm;
        if (best < 0 || time < best) {
          best = time;
          TileArgs& t = out.args;
          t = TileArgs{};
          t.W = W;
          t.C = C;
          t.LS = LS;
          t.fmax = fmax;
          t.gmax = gmax;
          t.lf = std::max(1L, (fmax + C - 1) / C);
          t.lg = std::max(1L, (gmax + C - 1) / C);
          if (W <= 2 && C > 1 && t.lf % 2 == 0) ++t.lf;  // odd strides between chunks
          if (W <= 2 && C > 1 && t.lg % 2 == 0) ++t.lg;
          out.segs = segs;
        }
      }
    }
  }
  if (best < 0) return false;
  TileArgs& t = out.args;
  t.n = n;
  t.m = m;
  t.lanes = lanes;
  t.inner = inner;
  t.k_fast = !strided;
  t.has_pre = pass.has_pre;
  t.has_taps = pass.has_taps;
  t.has_post = pass.has_post;
  t.pre = pre;
  t.post = post;
  t.fir_period = fir.fir_period;
  t.fir_lo = fir.fir_lo;
  t.fir_hi = fir.fir_hi;
  t.fir_shift = fir.fir_shift;
  for (int ph = 0; ph < 2; ++ph) {
    t.fir_count[ph] = fir.fir_count[ph];
    t.fir_first[ph] = fir.fir_first[ph];
    for (int u = 0; u < TileArgs::kFirTaps; ++u) {
      t.fir_off[ph][u] = fir.fir_off[ph][u] * static_cast<int>(t.LS);
      t.fir_w[ph][u] = fir.fir_w[ph][u];
    }
  }
  return true;
}

// The passes that make the coarse coefficients of an array of shape `dims` (reduce2 when
// `halving`, else reduce_to_shape) along the checked axes, in the order the CPU runs them;
// axes that stay as they are (identity, coefficients in) have no pass.
std::vector<PyramidPass> reduce_plan(const std::vector<std::size_t>& dims,
                                     const std::vector<PyramidAxis>& axes, const ReduceOptions& opt,
                                     bool halving);
// The passes that make the coarse samples from the coarse coefficients (none below degree 2).
std::vector<PyramidPass> sample_plan(const std::vector<PyramidAxis>& axes, int degree);
// expand2's passes (and its checks: it throws the sv::Error that sv::expand2 throws).
std::vector<PyramidPass> expand_plan(const std::vector<std::size_t>& coarse_dims,
                                     const std::vector<std::size_t>& fine_dims,
                                     const PyramidOptions& opt);

// expand2 along one axis of a reduce2 axis (spacing 2) as two phases: fine sample i = 2q + p is
// sum_{k < taps} w[p][k] d~[q + first[p] + k], d~ the coarse coefficients extended by the axis's
// ends (fold). These are the weights that expand_plan's table holds folded and merged: u = (i -
// origin) / 2 = q + (p - origin) / 2 exactly, so the B-spline weights of u are those of (p -
// origin) / 2 and its first index is q more. CUDA's expand2 runs them in one pass over the last
// two axes (docs/DESIGN.md, "expand2 by phases").
struct ExpandPhases {
  int taps = 1;  // degree + 1
  long first[2] = {0, 0};
  double w[2][kMaxDegree + 1] = {};
  long coarse = 1, fine = 1;
  Ends ends;
};
ExpandPhases expand_phases(const PyramidAxis& a, int degree);

// reduce2 along one axis as one decimating FIR over the fine line and all-pole filters on the
// coarse one (docs/DESIGN.md, "reduce2 by phases"). The fine prefilter factors as
// 1/B_n(z) = prod_i f_i(z) A_{z_i^2}(z^2), f_i(z) = (z_i z + 1 + z_i^2 + z_i / z) / (1 + z_i)^2
// and A_w the all-pole filter of pole w with DC gain 1, and decimation commutes with a filter
// in z^2: [down 2] (G(z^2) X) = G(z) [down 2] X. So coarse output j is
// y[j] = sum_{k < taps} w[k] x~[2 j + first + k] (x~ the fine line extended by its mode: the
// reduce2 FIR convolved with the f_i), then the coarse line y through the poles z_i^2 and the
// Gram poles of beta_{2n+1} with the coarse axis's two ends: no recursion runs on the fine grid.
// From coefficients the f_i and z_i^2 are left out. `poles` holds both sets (at most 3 + 7).
struct ReducePhases {
  int taps = 1;
  long first = 0;
  std::vector<double> w;
  PoleSet poles;
  long fine = 1, coarse = 1;
  Ends fine_ends, coarse_ends;
};
ReducePhases reduce2_phases(const PyramidAxis& a, int degree, bool input_is_coefficients);

// The checks and axes of reduce2 / reduce / reduce_to_shape (the same sv::Error sentences);
// `what` names the operation in messages.
std::vector<PyramidAxis> reduce2_axes(std::size_t rank, std::size_t points,
                                      const std::vector<std::size_t>& dims,
                                      const ReduceOptions& opt);
std::vector<PyramidAxis> reduce_shape_axes(std::size_t rank, std::size_t points,
                                           const std::vector<std::size_t>& dims,
                                           const std::vector<std::size_t>& shape,
                                           const ReduceOptions& opt);
std::vector<std::size_t> reduce_factor_shape(std::size_t rank, std::size_t points,
                                             const std::vector<std::size_t>& dims,
                                             const std::vector<double>& factors,
                                             const ReduceOptions& opt);

}  // namespace sv::pyramid_detail
