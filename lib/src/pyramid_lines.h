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

#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "splineview/array.h"
#include "splineview/pyramid.h"

#if defined(__CUDACC__)
#define SV_PYRAMID_HD __host__ __device__
#else
#define SV_PYRAMID_HD
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
// computed once on the host (beta_15 has 7 poles).
constexpr int kMaxPoles = 7;
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
