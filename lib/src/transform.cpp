// Geometric transforms with scipy.ndimage's semantics, streamed (see transform.h).
#include "splineview/transform.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "parallel.h"
#include "splineview/bspline.h"
#include "splineview/error.h"

namespace sv {

namespace {

constexpr std::size_t kPointBlock = 4096;              // output points per thread at least (affine)
constexpr std::size_t kTileRows = 32, kTileCols = 32;  // affine output tiles
constexpr std::size_t kPlaneGroup = 4;                 // planes sampled together (rotate 3-D)
constexpr std::size_t kPlaneGroupBytes = std::size_t{16} << 20;
constexpr std::size_t kWindowBytes = std::size_t{8} << 20;  // sliding window target (separable)

// The taps of one axis for every output index: what sv::sample computes per point and axis.
struct AxisPlan {
  std::size_t n = 0;    // coefficients on the axis
  std::size_t out = 0;  // output indices
  int taps = 0;
  std::vector<double> w;        // out * taps
  std::vector<long> k;          // out * taps: coefficient index, -1 = cval (GridConstant)
  std::vector<char> cval_here;  // Constant: output index i is outside, every point there is cval
};

AxisPlan plan_axis(const std::vector<double>& x, std::size_t n, double shift,
                   const SamplerOptions& opt) {
  AxisPlan p;
  p.n = n;
  p.out = x.size();
  p.taps = opt.degree + 1;
  const std::size_t taps = static_cast<std::size_t>(p.taps);
  p.w.resize(p.out * taps);
  p.k.resize(p.out * taps);
  p.cval_here.resize(p.out);
  for (std::size_t i = 0; i < p.out; ++i) {
    // As sv::sample: positions beyond this would overflow the index arithmetic.
    if (!(std::fabs(x[i]) < 1e12))
      throw Error("resample: output index " + std::to_string(i) +
                  " maps to a non-finite or huge position (" + std::to_string(x[i]) + ")");
    p.cval_here[i] = axis_weights(x[i] + shift, static_cast<long>(n), opt.degree, opt.boundary, 0,
                                  &p.w[i * taps], &p.k[i * taps])
                         ? 0
                         : 1;
  }
  return p;
}

// Output indices [i0, i1) of a line of the last axis: `ch` interleaved channels.
template <class S>
void line_pass(const AxisPlan& p, const S* src, std::size_t ch, double cval, double* dst,
               std::size_t i0, std::size_t i1) {
  const std::size_t taps = static_cast<std::size_t>(p.taps);
  for (std::size_t i = i0; i < i1; ++i) {
    double* o = dst + i * ch;
    if (p.cval_here[i]) {
      std::fill(o, o + ch, cval);
      continue;
    }
    const double* w = &p.w[i * taps];
    const long* k = &p.k[i * taps];
    for (std::size_t c = 0; c < ch; ++c) {
      double acc = 0;
      for (std::size_t j = 0; j < taps; ++j)
        acc += w[j] * (k[j] >= 0 ? static_cast<double>(src[static_cast<std::size_t>(k[j]) * ch + c])
                                 : cval);
      o[c] = acc;
    }
  }
}

// Output index i of an outer axis: dst (len values) = sum_j w_j row_j, row_j = the slice of
// input index k_j already resampled along the inner axes (nullptr: cval everywhere).
void combine(const AxisPlan& p, std::size_t i, const double* const* rows, std::size_t len,
             double cval, double* dst) {
  if (p.cval_here[i]) {
    std::fill(dst, dst + len, cval);
    return;
  }
  std::fill(dst, dst + len, 0.0);
  const std::size_t taps = static_cast<std::size_t>(p.taps);
  const double* w = &p.w[i * taps];
  for (std::size_t j = 0; j < taps; ++j) {
    const double wj = w[j];
    const double* r = rows[j];
    if (r) {
      for (std::size_t s = 0; s < len; ++s) dst[s] += wj * r[s];
    } else {
      for (std::size_t s = 0; s < len; ++s) dst[s] += wj * cval;
    }
  }
}

struct Geometry {
  std::vector<AxisPlan> plans;
  std::vector<std::size_t> in_inner, out_inner;  // scalars per index of each axis
  std::size_t channels = 1;
  double cval = 0;
};

// Single-threaded: axes a.. of the block at src into dst.
template <class S>
void resample_serial(const Geometry& g, std::size_t a, const S* src, double* dst) {
  const AxisPlan& p = g.plans[a];
  if (a + 1 == g.plans.size()) {
    line_pass(p, src, g.channels, g.cval, dst, 0, p.out);
    return;
  }
  const std::size_t taps = static_cast<std::size_t>(p.taps);
  std::vector<char> needed(p.n, 0);
  for (std::size_t i = 0; i < p.out; ++i)
    if (!p.cval_here[i])
      for (std::size_t j = 0; j < taps; ++j)
        if (p.k[i * taps + j] >= 0) needed[static_cast<std::size_t>(p.k[i * taps + j])] = 1;
  const std::size_t len = g.out_inner[a];
  std::vector<double> temp(p.n * len);
  for (std::size_t k = 0; k < p.n; ++k)
    if (needed[k]) resample_serial(g, a + 1, src + k * g.in_inner[a], temp.data() + k * len);
  const double* rows[kMaxDegree + 1];
  for (std::size_t i = 0; i < p.out; ++i) {
    for (std::size_t j = 0; j < taps; ++j) {
      const long k = p.k[i * taps + j];
      rows[j] = k >= 0 ? temp.data() + static_cast<std::size_t>(k) * len : nullptr;
    }
    combine(p, i, rows, len, g.cval, dst + i * len);
  }
}

// Every axis, threaded: the first axis last, from a sliding window of input slices resampled
// along the others.
template <class S>
void resample_top(const Geometry& g, const S* src, double* dst, unsigned requested_threads) {
  const AxisPlan& p = g.plans[0];
  if (g.plans.size() == 1) {
    const unsigned threads = detail::thread_count(requested_threads, p.out, 4096);
    detail::parallel_for(p.out, threads, [&](std::size_t b, std::size_t e) {
      line_pass(p, src, g.channels, g.cval, dst, b, e);
    });
    return;
  }
  const std::size_t taps = static_cast<std::size_t>(p.taps);
  const std::size_t len = g.out_inner[0];
  const unsigned hw = detail::thread_count(requested_threads, std::size_t{1} << 30, 1);
  // Output indices per chunk: about max(4 per thread, 8 MB) of new input slices, plus the taps.
  const std::size_t want =
      std::max<std::size_t>(4 * hw, kWindowBytes / std::max<std::size_t>(1, len * sizeof(double)));
  const std::size_t chunk =
      std::max<std::size_t>(1, std::min(p.out, static_cast<std::size_t>(static_cast<double>(want) *
                                                                        static_cast<double>(p.out) /
                                                                        static_cast<double>(p.n))));
  // The slices each chunk needs, and the window's capacity (the most any chunk needs).
  std::vector<std::vector<std::size_t>> needs;
  std::size_t capacity = 0;
  {
    std::vector<char> mark(p.n, 0);
    for (std::size_t i0 = 0; i0 < p.out; i0 += chunk) {
      const std::size_t i1 = std::min(p.out, i0 + chunk);
      std::vector<std::size_t> list;
      for (std::size_t i = i0; i < i1; ++i)
        if (!p.cval_here[i])
          for (std::size_t j = 0; j < taps; ++j) {
            const long k = p.k[i * taps + j];
            if (k >= 0 && !mark[static_cast<std::size_t>(k)]) {
              mark[static_cast<std::size_t>(k)] = 1;
              list.push_back(static_cast<std::size_t>(k));
            }
          }
      for (std::size_t k : list) mark[k] = 0;
      capacity = std::max(capacity, list.size());
      needs.push_back(std::move(list));
    }
  }
  std::vector<double> window(capacity * len);
  std::vector<long> slot_of(p.n, -1);
  std::vector<std::size_t> held;  // input slice of each slot
  std::vector<char> in_chunk(p.n, 0);
  for (std::size_t c = 0, i0 = 0; i0 < p.out; ++c, i0 += chunk) {
    const std::size_t i1 = std::min(p.out, i0 + chunk);
    const std::vector<std::size_t>& list = needs[c];
    for (std::size_t k : list) in_chunk[k] = 1;
    // Slots of slices this chunk does not use are free again.
    std::vector<std::size_t> free_slots;
    for (std::size_t s = 0; s < held.size(); ++s) {
      if (held[s] != p.n && !in_chunk[held[s]]) {
        slot_of[held[s]] = -1;
        held[s] = p.n;
      }
      if (held[s] == p.n) free_slots.push_back(s);
    }
    std::vector<std::pair<std::size_t, std::size_t>> todo;  // (slice, slot)
    for (std::size_t k : list) {
      if (slot_of[k] >= 0) continue;
      std::size_t s;
      if (!free_slots.empty()) {
        s = free_slots.back();
        free_slots.pop_back();
      } else {
        s = held.size();
        held.push_back(p.n);
      }
      held[s] = k;
      slot_of[k] = static_cast<long>(s);
      todo.emplace_back(k, s);
    }
    for (std::size_t k : list) in_chunk[k] = 0;
    detail::parallel_for(todo.size(), detail::thread_count(requested_threads, todo.size(), 1),
                         [&](std::size_t b, std::size_t e) {
                           for (std::size_t t = b; t < e; ++t)
                             resample_serial(g, 1, src + todo[t].first * g.in_inner[0],
                                             window.data() + todo[t].second * len);
                         });
    detail::parallel_for(
        i1 - i0, detail::thread_count(requested_threads, (i1 - i0) * len, 1 << 14),
        [&](std::size_t b, std::size_t e) {
          const double* rows[kMaxDegree + 1];
          for (std::size_t i = i0 + b; i < i0 + e; ++i) {
            for (std::size_t j = 0; j < taps; ++j) {
              const long k = p.k[i * taps + j];
              rows[j] =
                  (k >= 0 && !p.cval_here[i])
                      ? window.data() +
                            static_cast<std::size_t>(slot_of[static_cast<std::size_t>(k)]) * len
                      : nullptr;
            }
            combine(p, i, rows, len, g.cval, dst + i * len);
          }
        });
  }
}

void check_options(const SamplerOptions& opt, const char* what) {
  check_degree(opt.degree, 0, kMaxDegree);
  if (opt.derivative_axis >= 0)
    throw Error(std::string(what) + ": derivatives are not supported by the transforms");
}

// The B-spline weights of degree N at x and the first coefficient index: bspline_weights (deriv
// 0) with the degree known at compile time, the same operations in the same order, so the
// weights are bit for bit those of the generic sampler. |x| < 1e12 (floor through the integer
// conversion, exact there).
template <int N>
inline long weights_of(double x, double* w) {
  const double t = (N % 2 == 0) ? x + 0.5 : x;
  double fl = static_cast<double>(static_cast<long>(t));
  if (fl > t) fl -= 1.0;
  double u = t - fl;
  if (u >= 1.0) u = 0.0;
  w[0] = 1.0;
  for (int d = 1; d <= N; ++d) {
    const double inv = 1.0 / static_cast<double>(d);
    double prev = w[0];
    w[0] = (1.0 - u) * prev * inv;
    for (int j = 1; j < d; ++j) {
      const double cur = w[j];
      w[j] =
          ((u + static_cast<double>(d - j)) * prev + (static_cast<double>(j + 1) - u) * cur) * inv;
      prev = cur;
    }
    w[d] = u * prev * inv;
  }
  return static_cast<long>(fl) - N / 2;
}

// The tensor-product sum of sv::sample for C channels, in its order: the last axis innermost,
// each partial sum started at 0. off[d][j]: offset of tap j on axis d (index * stride).
template <int N, int R, int C, class T>
inline void tap_sum(const T* data, const double (*w)[N + 1], const std::size_t (*off)[N + 1],
                    double* o) {
  constexpr int taps = N + 1;
  double acc[C] = {};
  if constexpr (R == 1) {
    for (int a = 0; a < taps; ++a)
      for (int c = 0; c < C; ++c) acc[c] += w[0][a] * data[off[0][a] + c];
  } else if constexpr (R == 2) {
    for (int a = 0; a < taps; ++a) {
      const T* r = data + off[0][a];
      double row[C] = {};
      for (int b = 0; b < taps; ++b)
        for (int c = 0; c < C; ++c) row[c] += w[1][b] * r[off[1][b] + c];
      for (int c = 0; c < C; ++c) acc[c] += w[0][a] * row[c];
    }
  } else {
    for (int a = 0; a < taps; ++a) {
      double plane[C] = {};
      for (int b = 0; b < taps; ++b) {
        const T* r = data + off[0][a] + off[1][b];
        double row[C] = {};
        for (int e = 0; e < taps; ++e)
          for (int c = 0; c < C; ++c) row[c] += w[2][e] * r[off[2][e] + c];
        for (int c = 0; c < C; ++c) plane[c] += w[1][b] * row[c];
      }
      for (int c = 0; c < C; ++c) acc[c] += w[0][a] * plane[c];
    }
  }
  for (int c = 0; c < C; ++c) o[c] = acc[c];
}

// The same with every axis's taps contiguous from first[d] (stride[R-1] is C).
template <int N, int R, int C, class T>
inline void tap_sum_inside(const T* data, const double (*w)[N + 1], const long* first,
                           const std::size_t* stride, double* o) {
  constexpr int taps = N + 1;
  double acc[C] = {};
  if constexpr (R == 1) {
    const T* p = data + static_cast<std::size_t>(first[0]) * C;
    for (int a = 0; a < taps; ++a)
      for (int c = 0; c < C; ++c) acc[c] += w[0][a] * p[a * C + c];
  } else if constexpr (R == 2) {
    const T* p = data + static_cast<std::size_t>(first[0]) * stride[0] +
                 static_cast<std::size_t>(first[1]) * C;
    for (int a = 0; a < taps; ++a) {
      const T* r = p + static_cast<std::size_t>(a) * stride[0];
      double row[C] = {};
      for (int b = 0; b < taps; ++b)
        for (int c = 0; c < C; ++c) row[c] += w[1][b] * r[b * C + c];
      for (int c = 0; c < C; ++c) acc[c] += w[0][a] * row[c];
    }
  } else {
    const T* p = data + static_cast<std::size_t>(first[0]) * stride[0] +
                 static_cast<std::size_t>(first[1]) * stride[1] +
                 static_cast<std::size_t>(first[2]) * C;
    for (int a = 0; a < taps; ++a) {
      double plane[C] = {};
      for (int b = 0; b < taps; ++b) {
        const T* r =
            p + static_cast<std::size_t>(a) * stride[0] + static_cast<std::size_t>(b) * stride[1];
        double row[C] = {};
        for (int e = 0; e < taps; ++e)
          for (int c = 0; c < C; ++c) row[c] += w[2][e] * r[e * C + c];
        for (int c = 0; c < C; ++c) plane[c] += w[1][b] * row[c];
      }
      for (int c = 0; c < C; ++c) acc[c] += w[0][a] * plane[c];
    }
  }
  for (int c = 0; c < C; ++c) o[c] = acc[c];
}

// What the affine rows need to know of the spline and the map.
template <class T>
struct AffineMap {
  const Array<T>* c = nullptr;  // the coefficients (padded by `pad` per side)
  double pad = 0;
  const double* matrix = nullptr;  // in_rank x out_rank, row-major
  const double* offset = nullptr;  // in_rank
  std::size_t in_rank = 0, out_rank = 0;
  const std::size_t* out_dims = nullptr;
  SamplerOptions opt;  // threads = 1
};

// One output row (the last output axis, len points, the outer indices o[0..out_rank-2] fixed)
// into out (point j at out + j * step, channels values). Positions as scipy 1.10 computes them
// (the columns in order, then the offset), per point. One channel: a point whose position is
// inside [0, N-1] on every axis with all its taps inside the coefficients is summed with
// contiguous taps (no mode applies there); outside or near the edges, the modes that only
// extend indices (Reflect, Mirror and Constant from degree 1, Periodic, Nearest) get their
// indices from extend_index, and Constant gives cval outside [0, N-1]; both with the weights and
// the order of sums of sv::sample, so the values are sv::sample's. The remaining points (Wrap
// and GridConstant near or beyond the edges, degree 0 Mirror and Reflect there, several
// channels, positions too large for the index arithmetic) go through sv::sample itself.
template <int N, int R, int C, class T>
void affine_row(const AffineMap<T>& g, const std::size_t* o, std::size_t j0, std::size_t j1,
                double* out, std::size_t step, std::vector<double>& border_pos,
                std::vector<std::size_t>& border_at, std::vector<double>& border_val) {
  constexpr int taps = N + 1;
  const std::size_t ch = g.c->channels(), out_rank = g.out_rank, last = out_rank - 1;
  const Boundary mode = g.opt.boundary;
  const bool extend =
      (mode == Boundary::Reflect || mode == Boundary::Mirror)
          ? N >= 1
          : mode == Boundary::Periodic || mode == Boundary::Nearest || mode == Boundary::Constant;
  long n[R];
  double hi[R];
  std::size_t stride[R];
  double base[R], col[R];
  {
    std::size_t s = ch;
    for (int d = R; d-- > 0;) {
      n[d] = static_cast<long>(g.c->dim(static_cast<std::size_t>(d)));
      hi[d] = static_cast<double>(n[d] - 1);
      stride[d] = s;
      s *= g.c->dim(static_cast<std::size_t>(d));
    }
  }
  for (int h = 0; h < R; ++h) {
    // The outer columns' sum, in scipy's order (it starts at 0 and adds column l = 0, 1, ...).
    double t = 0;
    for (std::size_t l = 0; l < last; ++l)
      t += static_cast<double>(o[l]) * g.matrix[static_cast<std::size_t>(h) * out_rank + l];
    base[h] = t;
    col[h] = g.matrix[static_cast<std::size_t>(h) * out_rank + last];
  }
  const T* data = g.c->data();
  border_pos.clear();
  border_at.clear();
  for (std::size_t j = j0; j < j1; ++j) {
    double x[R];
    bool usable = ch == C, inside = true;
    for (int h = 0; h < R; ++h) {
      double t = base[h];
      t += static_cast<double>(j) * col[h];
      t += g.offset[h];
      x[h] = t + g.pad;
      usable = usable && std::fabs(x[h]) < 1e12;  // false for NaN too
      inside = inside && x[h] >= 0 && x[h] <= hi[h];
    }
    if (usable && inside) {
      double w[R][taps];
      long first[R];
      bool taps_inside = true;
      for (int h = 0; h < R; ++h) {
        first[h] = weights_of<N>(x[h], w[h]);
        taps_inside = taps_inside && first[h] >= 0 && first[h] + N < n[h];
      }
      if (taps_inside) {
        tap_sum_inside<N, R, C>(data, w, first, stride, out + j * step);
        continue;
      }
      if (extend) {
        std::size_t off[R][taps];
        for (int h = 0; h < R; ++h)
          for (int k = 0; k < taps; ++k)
            off[h][k] =
                static_cast<std::size_t>(extend_index(first[h] + k, n[h], mode)) * stride[h];
        tap_sum<N, R, C>(data, w, off, out + j * step);
        continue;
      }
    } else if (usable && extend) {
      if (mode == Boundary::Constant) {
        for (int c = 0; c < C; ++c) out[j * step + static_cast<std::size_t>(c)] = g.opt.cval;
        continue;
      }
      double w[R][taps];
      std::size_t off[R][taps];
      for (int h = 0; h < R; ++h) {
        const long first = weights_of<N>(x[h], w[h]);
        for (int k = 0; k < taps; ++k)
          off[h][k] = static_cast<std::size_t>(extend_index(first + k, n[h], mode)) * stride[h];
      }
      tap_sum<N, R, C>(data, w, off, out + j * step);
      continue;
    }
    for (int h = 0; h < R; ++h) border_pos.push_back(x[h]);
    border_at.push_back(j);
  }
  if (border_at.empty()) return;
  border_val.resize(border_at.size() * ch);
  sample(*g.c, border_pos.data(), border_at.size(), border_val.data(), g.opt);
  for (std::size_t i = 0; i < border_at.size(); ++i)
    for (std::size_t c = 0; c < ch; ++c) out[border_at[i] * step + c] = border_val[i * ch + c];
}

template <class T>
using AffineRowFn = void (*)(const AffineMap<T>&, const std::size_t*, std::size_t, std::size_t,
                             double*, std::size_t, std::vector<double>&, std::vector<std::size_t>&,
                             std::vector<double>&);

template <int N, int R, class T>
AffineRowFn<T> affine_row_for_channels(std::size_t channels) {
  // One channel, or four (rotate's groups of planes); other counts go through sv::sample.
  return channels == 4 ? &affine_row<N, R, 4, T> : &affine_row<N, R, 1, T>;
}

template <int N, class T>
AffineRowFn<T> affine_row_for_rank(std::size_t rank, std::size_t channels) {
  switch (rank) {
    case 1:
      return affine_row_for_channels<N, 1, T>(channels);
    case 2:
      return affine_row_for_channels<N, 2, T>(channels);
    default:
      return affine_row_for_channels<N, 3, T>(channels);
  }
}

template <class T>
AffineRowFn<T> affine_row_for(int degree, std::size_t rank, std::size_t channels) {
  switch (degree) {
    case 0:
      return affine_row_for_rank<0, T>(rank, channels);
    case 1:
      return affine_row_for_rank<1, T>(rank, channels);
    case 2:
      return affine_row_for_rank<2, T>(rank, channels);
    case 3:
      return affine_row_for_rank<3, T>(rank, channels);
    case 4:
      return affine_row_for_rank<4, T>(rank, channels);
    case 5:
      return affine_row_for_rank<5, T>(rank, channels);
    case 6:
      return affine_row_for_rank<6, T>(rank, channels);
    default:
      return affine_row_for_rank<7, T>(rank, channels);
  }
}

// Output rows [begin, end) (a row: every index of the last output axis, the others fixed; rows
// numbered row-major) into out, whose axis l has stride out_stride[l] (in doubles),
// single-threaded. In tiles of kTileRows rows x kTileCols points, so that the input a tile reads
// (a few tens of kB for rotations) stays in the first-level cache and TLB while the tile is
// done, instead of a whole diagonal line of the input per output row.
template <class T>
void affine_rows(const AffineMap<T>& g, std::size_t begin, std::size_t end, double* out,
                 const std::size_t* out_stride) {
  const AffineRowFn<T> row = affine_row_for<T>(g.opt.degree, g.in_rank, g.c->channels());
  const std::size_t last = g.out_rank - 1, len = g.out_dims[last];
  std::vector<double> border_pos, border_val;
  std::vector<std::size_t> border_at;
  border_pos.reserve(std::min(len, kTileCols) * g.in_rank);
  border_at.reserve(std::min(len, kTileCols));
  std::size_t o[kMaxRank] = {0, 0, 0};
  for (std::size_t rb = begin; rb < end; rb += kTileRows) {
    const std::size_t re = std::min(end, rb + kTileRows);
    for (std::size_t j0 = 0; j0 < len; j0 += kTileCols) {
      const std::size_t j1 = std::min(len, j0 + kTileCols);
      for (std::size_t r = rb; r < re; ++r) {
        std::size_t q = r, at = 0;
        for (std::size_t l = last; l-- > 0;) {
          o[l] = q % g.out_dims[l];
          q /= g.out_dims[l];
          at += o[l] * out_stride[l];
        }
        row(g, o, j0, j1, out + at, out_stride[last], border_pos, border_at, border_val);
      }
    }
  }
}

}  // namespace

template <class T>
Array<double> resample_axes(const Interpolant<T>& spline,
                            const std::vector<std::vector<double>>& axes,
                            const SamplerOptions& opt) {
  check_options(opt, "resample");
  const Array<T>& c = spline.coefficients();
  const std::size_t rank = c.rank();
  if (axes.size() != rank)
    throw Error("resample: " + std::to_string(axes.size()) + " axes of positions for a " +
                std::to_string(rank) + "-D array");
  Geometry g;
  g.channels = c.channels();
  g.cval = opt.cval;
  std::vector<std::size_t> out_dims;
  for (std::size_t d = 0; d < rank; ++d) {
    g.plans.push_back(plan_axis(axes[d], c.dim(d), static_cast<double>(spline.pad()), opt));
    out_dims.push_back(axes[d].size());
  }
  g.in_inner.assign(rank, g.channels);
  g.out_inner.assign(rank, g.channels);
  for (std::size_t d = rank - 1; d-- > 0;) {
    g.in_inner[d] = g.in_inner[d + 1] * c.dim(d + 1);
    g.out_inner[d] = g.out_inner[d + 1] * out_dims[d + 1];
  }
  Array<double> out(out_dims, g.channels);
  resample_top(g, c.data(), out.data(), opt.threads);
  return out;
}

std::vector<double> zoom_positions(std::size_t in, std::size_t out, bool grid_mode) {
  const double num = static_cast<double>(grid_mode ? in : in - 1);
  const double div = static_cast<double>(grid_mode ? out : out - 1);
  const double z = div != 0 ? num / div : 1.0;
  std::vector<double> x(out);
  for (std::size_t i = 0; i < out; ++i) {
    double cc = static_cast<double>(i);
    if (grid_mode) {
      cc += 0.5;
      cc *= z;
      cc -= 0.5;
    } else {
      cc *= z;
    }
    x[i] = cc;
  }
  return x;
}

std::vector<double> shift_positions(std::size_t out, double shift) {
  std::vector<double> x(out);
  for (std::size_t i = 0; i < out; ++i) x[i] = static_cast<double>(i) + (-shift);
  return x;
}

std::vector<double> zoom_shift_positions(std::size_t out, double zoom, double shift) {
  std::vector<double> x(out);
  for (std::size_t i = 0; i < out; ++i) x[i] = (static_cast<double>(i) + shift) * zoom;
  return x;
}

std::vector<double> affine_positions(std::size_t out, double m, double offset) {
  std::vector<double> x(out);
  for (std::size_t i = 0; i < out; ++i) x[i] = static_cast<double>(i) * m + offset;
  return x;
}

template <class T>
Array<double> zoom(Array<T> samples, const std::vector<std::size_t>& out_dims, bool grid_mode,
                   const SamplerOptions& opt, bool prefilter) {
  check_options(opt, "zoom");
  if (out_dims.size() != samples.rank())
    throw Error("zoom: output rank " + std::to_string(out_dims.size()) + " for a " +
                std::to_string(samples.rank()) + "-D input");
  std::vector<std::vector<double>> axes;
  for (std::size_t d = 0; d < samples.rank(); ++d) {
    if (out_dims[d] == 0) throw Error("zoom: the output has a zero-size axis");
    axes.push_back(zoom_positions(samples.dim(d), out_dims[d], grid_mode));
  }
  const Interpolant<T> spline(std::move(samples), opt, prefilter);
  return resample_axes(spline, axes, opt);
}

template <class T>
Array<double> shift(Array<T> samples, const std::vector<double>& s, const SamplerOptions& opt,
                    bool prefilter) {
  check_options(opt, "shift");
  if (s.size() != samples.rank())
    throw Error("shift: " + std::to_string(s.size()) + " shifts for a " +
                std::to_string(samples.rank()) + "-D input");
  std::vector<std::vector<double>> axes;
  for (std::size_t d = 0; d < samples.rank(); ++d)
    axes.push_back(shift_positions(samples.dim(d), s[d]));
  const Interpolant<T> spline(std::move(samples), opt, prefilter);
  return resample_axes(spline, axes, opt);
}

template <class T>
Array<double> affine_transform(Array<T> samples, const std::vector<double>& matrix,
                               const std::vector<double>& offset,
                               const std::vector<std::size_t>& out_dims, const SamplerOptions& opt,
                               bool prefilter, bool diagonal_1d) {
  check_options(opt, "affine_transform");
  const std::size_t in_rank = samples.rank(), out_rank = out_dims.size();
  if (out_rank < 1 || out_rank > kMaxRank)
    throw Error("affine_transform: the output rank must be 1, 2 or 3, got " +
                std::to_string(out_rank));
  for (std::size_t d : out_dims)
    if (d == 0) throw Error("affine_transform: the output has a zero-size axis");
  if (offset.size() != in_rank)
    throw Error("affine_transform: " + std::to_string(offset.size()) + " offsets for a " +
                std::to_string(in_rank) + "-D input");
  if (diagonal_1d) {
    if (matrix.size() != in_rank || out_rank != in_rank)
      throw Error("affine_transform: a 1-D matrix needs one entry per axis and the input's rank");
    std::vector<std::vector<double>> axes;
    for (std::size_t d = 0; d < in_rank; ++d)
      axes.push_back(matrix[d] != 0
                         ? zoom_shift_positions(out_dims[d], matrix[d], offset[d] / matrix[d])
                         : affine_positions(out_dims[d], 0.0, offset[d]));
    const Interpolant<T> spline(std::move(samples), opt, prefilter);
    return resample_axes(spline, axes, opt);
  }
  if (matrix.size() != in_rank * out_rank)
    throw Error("affine_transform: the matrix must be " + std::to_string(in_rank) + " x " +
                std::to_string(out_rank));
  bool diagonal = in_rank == out_rank;
  for (std::size_t h = 0; h < in_rank && diagonal; ++h)
    for (std::size_t l = 0; l < out_rank; ++l)
      if (h != l && matrix[h * out_rank + l] != 0) diagonal = false;
  const Interpolant<T> spline(std::move(samples), opt, prefilter);
  if (diagonal) {
    std::vector<std::vector<double>> axes;
    for (std::size_t d = 0; d < in_rank; ++d)
      axes.push_back(affine_positions(out_dims[d], matrix[d * out_rank + d], offset[d]));
    return resample_axes(spline, axes, opt);
  }
  Array<double> out(out_dims, spline.channels());
  AffineMap<T> g;
  g.c = &spline.coefficients();
  g.pad = static_cast<double>(spline.pad());
  g.matrix = matrix.data();
  g.offset = offset.data();
  g.in_rank = in_rank;
  g.out_rank = out_rank;
  g.out_dims = out_dims.data();
  g.opt = opt;
  g.opt.threads = 1;
  std::size_t out_stride[kMaxRank];
  out_stride[out_rank - 1] = spline.channels();
  for (std::size_t l = out_rank - 1; l-- > 0;) out_stride[l] = out_stride[l + 1] * out_dims[l + 1];
  const std::size_t len = out_dims[out_rank - 1], rows = out.points() / len;
  // Rows in contiguous bands, one per thread (neighbouring rows read neighbouring input).
  const unsigned threads = detail::thread_count(opt.threads, out.points(), kPointBlock);
  detail::parallel_for(rows, threads, [&](std::size_t b, std::size_t e) {
    affine_rows(g, b, e, out.data(), out_stride);
  });
  return out;
}

template <class T>
Array<double> affine_transform_planes(const std::vector<std::size_t>& dims, std::size_t ch,
                                      const PlaneLoader<T>& load, std::size_t axis_a,
                                      std::size_t axis_b, const double matrix[4],
                                      const double offset[2], std::size_t out_a, std::size_t out_b,
                                      const SamplerOptions& opt, bool prefilter) {
  check_options(opt, "rotate");
  if (dims.size() != 3 || axis_a >= axis_b || axis_b > 2)
    throw Error("affine_transform_planes: needs a 3-D array and axes a < b <= 2");
  if (out_a == 0 || out_b == 0) throw Error("rotate: the output has a zero-size axis");
  const std::size_t axis_c = 3 - axis_a - axis_b;
  const std::size_t na = dims[axis_a], nb = dims[axis_b], nc = dims[axis_c];
  std::vector<std::size_t> out_dims(3);
  out_dims[axis_a] = out_a;
  out_dims[axis_b] = out_b;
  out_dims[axis_c] = nc;
  Array<double> out(out_dims, ch);
  std::size_t out_stride[3];
  out_stride[2] = ch;
  for (std::size_t d = 2; d-- > 0;) out_stride[d] = out_stride[d + 1] * out_dims[d + 1];
  const std::size_t plane_dims[2] = {out_a, out_b};
  const std::size_t plane_stride[2] = {out_stride[axis_a], out_stride[axis_b]};
  // Planes over the threads where there are enough, else the rows of each plane. Each plane is
  // read (through `load`), prefiltered and sampled on its own, as scipy does: the memory beyond
  // the output is one plane's coefficients per thread.
  const unsigned hw = detail::thread_count(opt.threads, std::size_t{1} << 30, 1);
  const bool by_plane = nc >= hw;
  const unsigned plane_threads = by_plane ? detail::thread_count(opt.threads, nc, 1) : 1;
  // One channel: planes in groups of kPlaneGroup, interleaved as the channels of one 2-D array,
  // so that each output point's weights serve the whole group and the group's input and output
  // values lie side by side (for rotate's default axes, the planes are the fastest axis). The
  // values are the same as plane by plane (sv::sample sums each channel on its own). Groups only
  // while a group's coefficients stay small (kPlaneGroupBytes).
  const std::size_t group =
      (ch == 1 && kPlaneGroup * na * nb * sizeof(T) <= kPlaneGroupBytes) ? kPlaneGroup : 1;
  detail::parallel_for(nc, plane_threads, [&](std::size_t b, std::size_t e) {
    SamplerOptions popt = opt;
    if (by_plane) popt.threads = 1;
    for (std::size_t pc = b; pc < e;) {
      const std::size_t count = e - pc >= group ? group : 1;
      Array<T> plane({na, nb}, ch * count);
      load(pc, count, plane.data());
      const Interpolant<T> spline(std::move(plane), popt, prefilter);
      AffineMap<T> g;
      g.c = &spline.coefficients();
      g.pad = static_cast<double>(spline.pad());
      g.matrix = matrix;
      g.offset = offset;
      g.in_rank = 2;
      g.out_rank = 2;
      g.out_dims = plane_dims;
      g.opt = opt;
      g.opt.threads = 1;
      const unsigned row_threads =
          by_plane ? 1 : detail::thread_count(opt.threads, out_a * out_b, kPointBlock);
      if (count == 1) {
        double* base = out.data() + pc * out_stride[axis_c];
        detail::parallel_for(out_a, row_threads, [&](std::size_t rb, std::size_t re) {
          affine_rows(g, rb, re, base, plane_stride);
        });
      } else {
        // The group's rows into a scratch array of out_b points x count values, then to the
        // planes.
        std::vector<double> rows(kTileRows * out_b * count);
        const std::size_t scratch_stride[2] = {out_b * count, count};
        for (std::size_t r0 = 0; r0 < out_a; r0 += kTileRows) {
          const std::size_t r1 = std::min(out_a, r0 + kTileRows);
          affine_rows(g, r0, r1, rows.data() - r0 * out_b * count, scratch_stride);
          for (std::size_t r = r0; r < r1; ++r)
            for (std::size_t ob = 0; ob < out_b; ++ob) {
              const double* src = rows.data() + ((r - r0) * out_b + ob) * count;
              double* dst = out.data() + pc * out_stride[axis_c] + r * out_stride[axis_a] +
                            ob * out_stride[axis_b];
              for (std::size_t k = 0; k < count; ++k) dst[k * out_stride[axis_c]] = src[k];
            }
        }
      }
      pc += count;
    }
  });
  return out;
}

template <class T>
Array<double> affine_transform_planes(const Array<T>& samples, std::size_t axis_a,
                                      std::size_t axis_b, const double matrix[4],
                                      const double offset[2], std::size_t out_a, std::size_t out_b,
                                      const SamplerOptions& opt, bool prefilter) {
  if (samples.rank() != 3 || axis_a >= axis_b || axis_b > 2)
    throw Error("affine_transform_planes: needs a 3-D array and axes a < b <= 2");
  const std::size_t axis_c = 3 - axis_a - axis_b, ch = samples.channels();
  const std::size_t na = samples.dim(axis_a), nb = samples.dim(axis_b);
  std::size_t in_stride[3];
  in_stride[2] = ch;
  for (std::size_t d = 2; d-- > 0;) in_stride[d] = in_stride[d + 1] * samples.dim(d + 1);
  const PlaneLoader<T> load = [&](std::size_t first, std::size_t count, T* dst) {
    for (std::size_t ia = 0; ia < na; ++ia)
      for (std::size_t ib = 0; ib < nb; ++ib)
        for (std::size_t k = 0; k < count; ++k)
          for (std::size_t c = 0; c < ch; ++c)
            *dst++ = samples[(first + k) * in_stride[axis_c] + ia * in_stride[axis_a] +
                             ib * in_stride[axis_b] + c];
  };
  return affine_transform_planes(samples.dims(), ch, load, axis_a, axis_b, matrix, offset, out_a,
                                 out_b, opt, prefilter);
}

#define SV_TRANSFORM_INSTANTIATE(T)                                                                \
  template Array<double> resample_axes<T>(                                                         \
      const Interpolant<T>&, const std::vector<std::vector<double>>&, const SamplerOptions&);      \
  template Array<double> zoom<T>(Array<T>, const std::vector<std::size_t>&, bool,                  \
                                 const SamplerOptions&, bool);                                     \
  template Array<double> shift<T>(Array<T>, const std::vector<double>&, const SamplerOptions&,     \
                                  bool);                                                           \
  template Array<double> affine_transform<T>(                                                      \
      Array<T>, const std::vector<double>&, const std::vector<double>&,                            \
      const std::vector<std::size_t>&, const SamplerOptions&, bool, bool);                         \
  template Array<double> affine_transform_planes<T>(const Array<T>&, std::size_t, std::size_t,     \
                                                    const double[4], const double[2], std::size_t, \
                                                    std::size_t, const SamplerOptions&, bool);     \
  template Array<double> affine_transform_planes<T>(                                               \
      const std::vector<std::size_t>&, std::size_t, const PlaneLoader<T>&, std::size_t,            \
      std::size_t, const double[4], const double[2], std::size_t, std::size_t,                     \
      const SamplerOptions&, bool);
SV_TRANSFORM_INSTANTIATE(float)
SV_TRANSFORM_INSTANTIATE(double)
#undef SV_TRANSFORM_INSTANTIATE

namespace {

// sindg/cosdg (transform.h): the reduction to octants and the polynomial coefficients of the
// Cephes library's sindg.c (Stephen L. Moshier), which scipy.special.sindg/cosdg wrap.
constexpr double kSinCof[] = {1.58962301572218447952E-10, -2.50507477628503540135E-8,
                              2.75573136213856773549E-6,  -1.98412698295895384658E-4,
                              8.33333333332211858862E-3,  -1.66666666666666307295E-1};
constexpr double kCosCof[] = {1.13678171382044553091E-11, -2.08758833757683644217E-9,
                              2.75573155429816611547E-7,  -2.48015872936186303776E-5,
                              1.38888888888806666760E-3,  -4.16666666666666348141E-2,
                              4.99999999999999999798E-1};
constexpr double kPi180 = 1.74532925199432957692E-2;

template <std::size_t N>
double polevl(double x, const double (&coef)[N]) {
  double ans = coef[0];
  for (std::size_t i = 1; i < N; ++i) ans = ans * x + coef[i];
  return ans;
}

// x >= 0: the octant j (0..7) and the reduced angle z in radians.
int octant(double x, double* z) {
  double y = std::floor(x / 45.0);
  const double r = y - std::ldexp(std::floor(std::ldexp(y, -4)), 4);
  int j = static_cast<int>(r);
  if (j & 1) {
    j += 1;
    y += 1.0;
  }
  *z = (x - y * 45.0) * kPi180;
  return j & 7;
}

}  // namespace

double sindg(double x) {
  int sign = 1;
  if (x < 0) {
    x = -x;
    sign = -1;
  }
  if (x > 1.0e14) return 0.0;
  double z = 0;
  int j = octant(x, &z);
  const double zz = z * z;
  if (j > 3) {
    sign = -sign;
    j -= 4;
  }
  const double y =
      (j == 1 || j == 2) ? 1.0 - zz * polevl(zz, kCosCof) : z + z * (zz * polevl(zz, kSinCof));
  return sign < 0 ? -y : y;
}

double cosdg(double x) {
  int sign = 1;
  x = std::fabs(x);
  if (x > 1.0e14) return 0.0;
  double z = 0;
  int j = octant(x, &z);
  const double zz = z * z;
  if (j > 3) {
    sign = -sign;
    j -= 4;
  }
  if (j > 1) sign = -sign;
  const double y =
      (j == 1 || j == 2) ? z + z * (zz * polevl(zz, kSinCof)) : 1.0 - zz * polevl(zz, kCosCof);
  return sign < 0 ? -y : y;
}

}  // namespace sv
