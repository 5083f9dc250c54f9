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

constexpr std::size_t kPointBlock = 4096;                   // output points per block (affine)
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

// Output points [begin, end) of the affine map into out (channels per point), single-threaded.
template <class T>
void affine_points(const Interpolant<T>& spline, const std::vector<double>& matrix,
                   const std::vector<double>& offset, const std::vector<std::size_t>& out_dims,
                   const SamplerOptions& opt, std::size_t begin, std::size_t end, double* out) {
  const std::size_t in_rank = spline.rank(), out_rank = out_dims.size();
  const double pad = static_cast<double>(spline.pad());
  SamplerOptions one = opt;
  one.threads = 1;
  std::vector<double> pos(kPointBlock * in_rank);
  std::size_t o[kMaxRank] = {0, 0, 0};
  for (std::size_t start = begin; start < end; start += kPointBlock) {
    const std::size_t n = std::min(kPointBlock, end - start);
    std::size_t q = start;
    for (std::size_t l = out_rank; l-- > 0;) {
      o[l] = q % out_dims[l];
      q /= out_dims[l];
    }
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t h = 0; h < in_rank; ++h) {
        // scipy 1.10's arithmetic (established on order-0 ties): the columns in order, then
        // the offset.
        double t = 0;
        for (std::size_t l = 0; l < out_rank; ++l)
          t += static_cast<double>(o[l]) * matrix[h * out_rank + l];
        t += offset[h];
        pos[i * in_rank + h] = t + pad;
      }
      for (std::size_t l = out_rank; l-- > 0;) {
        if (++o[l] < out_dims[l]) break;
        o[l] = 0;
      }
    }
    sample(spline.coefficients(), pos.data(), n, out + (start - begin) * spline.channels(), one);
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
  const std::size_t m = out.points();
  const std::size_t blocks = (m + kPointBlock - 1) / kPointBlock;
  const unsigned threads = detail::thread_count(opt.threads, blocks, 1);
  detail::parallel_for(blocks, threads, [&](std::size_t b, std::size_t e) {
    const std::size_t begin = b * kPointBlock, end = std::min(m, e * kPointBlock);
    affine_points(spline, matrix, offset, out_dims, opt, begin, end,
                  out.data() + begin * spline.channels());
  });
  return out;
}

template <class T>
Array<double> affine_transform_planes(const Array<T>& samples, std::size_t axis_a,
                                      std::size_t axis_b, const double matrix[4],
                                      const double offset[2], std::size_t out_a, std::size_t out_b,
                                      const SamplerOptions& opt, bool prefilter) {
  check_options(opt, "rotate");
  if (samples.rank() != 3 || axis_a >= axis_b || axis_b > 2)
    throw Error("affine_transform_planes: needs a 3-D array and axes a < b <= 2");
  if (out_a == 0 || out_b == 0) throw Error("rotate: the output has a zero-size axis");
  const std::size_t axis_c = 3 - axis_a - axis_b, ch = samples.channels();
  const std::size_t na = samples.dim(axis_a), nb = samples.dim(axis_b), nc = samples.dim(axis_c);
  std::vector<std::size_t> out_dims(3);
  out_dims[axis_a] = out_a;
  out_dims[axis_b] = out_b;
  out_dims[axis_c] = nc;
  Array<double> out(out_dims, ch);
  std::size_t in_stride[3], out_stride[3];
  in_stride[2] = out_stride[2] = ch;
  for (std::size_t d = 2; d-- > 0;) {
    in_stride[d] = in_stride[d + 1] * samples.dim(d + 1);
    out_stride[d] = out_stride[d + 1] * out_dims[d + 1];
  }
  const std::vector<double> m(matrix, matrix + 4), off(offset, offset + 2);
  const std::vector<std::size_t> plane_dims{out_a, out_b};
  // Planes over the threads where there are enough, else the points of each plane.
  const unsigned hw = detail::thread_count(opt.threads, std::size_t{1} << 30, 1);
  const bool by_plane = nc >= hw;
  const unsigned plane_threads = by_plane ? detail::thread_count(opt.threads, nc, 1) : 1;
  detail::parallel_for(nc, plane_threads, [&](std::size_t b, std::size_t e) {
    SamplerOptions popt = opt;
    if (by_plane) popt.threads = 1;
    for (std::size_t pc = b; pc < e; ++pc) {
      Array<T> plane({na, nb}, ch);
      for (std::size_t ia = 0; ia < na; ++ia)
        for (std::size_t ib = 0; ib < nb; ++ib)
          for (std::size_t c = 0; c < ch; ++c)
            plane[(ia * nb + ib) * ch + c] =
                samples[pc * in_stride[axis_c] + ia * in_stride[axis_a] + ib * in_stride[axis_b] +
                        c];
      const Array<double> res =
          affine_transform(std::move(plane), m, off, plane_dims, popt, prefilter);
      for (std::size_t oa = 0; oa < out_a; ++oa)
        for (std::size_t ob = 0; ob < out_b; ++ob)
          for (std::size_t c = 0; c < ch; ++c)
            out[pc * out_stride[axis_c] + oa * out_stride[axis_a] + ob * out_stride[axis_b] + c] =
                res[(oa * out_b + ob) * ch + c];
    }
  });
  return out;
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
                                                    std::size_t, const SamplerOptions&, bool);
SV_TRANSFORM_INSTANTIATE(float)
SV_TRANSFORM_INSTANTIATE(double)
#undef SV_TRANSFORM_INSTANTIATE

}  // namespace sv
