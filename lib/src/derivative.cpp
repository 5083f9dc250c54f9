// B-spline derivatives, pointwise and as coefficient-domain filters (see derivative.h and
// docs/DESIGN.md "Derivatives and the coefficient domain").
#include "splineview/derivative.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "parallel.h"
#include "splineview/bspline.h"
#include "splineview/interpolant.h"
#include "splineview/sampler.h"
#include "tensor_sum.h"

namespace sv {

void check_derivative_order(const std::vector<int>& order, std::size_t rank, int degree,
                            const char* what) {
  check_degree(degree, 0, kMaxDegree);
  if (order.size() != rank)
    throw Error(std::string(what) + ": the order has " + std::to_string(order.size()) +
                " entries; a " + std::to_string(rank) + "-D array needs one per axis");
  for (std::size_t a = 0; a < order.size(); ++a) {
    if (order[a] < 0)
      throw Error(std::string(what) + ": the order on axis " + std::to_string(a) + " is " +
                  std::to_string(order[a]) + "; orders are 0 or more");
    if (order[a] > degree)
      throw Error(std::string(what) + ": the order on axis " + std::to_string(a) + " is " +
                  std::to_string(order[a]) + ", above the spline's degree " +
                  std::to_string(degree) +
                  " (a degree-n spline has derivatives up to order n; the next is a sum of "
                  "Dirac impulses at the knots)");
  }
}

std::size_t hessian_index(std::size_t i, std::size_t j, std::size_t rank) {
  if (i > j) std::swap(i, j);
  if (j >= rank) throw Error("hessian_index: component beyond the rank");
  // Rows 0..i-1 of the upper triangle hold rank + (rank-1) + ... entries.
  return i * rank - i * (i - 1) / 2 + (j - i);
}

namespace {

SamplerOptions sampler_options(const DerivativeOptions& o) {
  SamplerOptions s;
  s.degree = o.degree;
  s.boundary = o.boundary;
  s.threads = o.threads;
  s.cval = o.cval;
  return s;
}

// The taps of one axis at one position: weights of every order 0..max_order and the indices.
struct AxisTaps {
  double w[kMaxDegree + 1][kMaxDegree + 1];  // [order][tap]
  long k[kMaxDegree + 1];                    // -1: GridConstant's cval
};

}  // namespace

template <class T>
SplineDerivatives<T>::SplineDerivatives(Array<T> input, const DerivativeOptions& opt) : opt_(opt) {
  check_degree(opt.degree, 0, kMaxDegree);
  if (input.rank() == 0) throw Error("derivative: the input array is empty");
  const Interpolant<T> spline(std::move(input), sampler_options(opt), !opt.input_is_coefficients);
  coefficients_ = spline.coefficients();
  pad_ = spline.pad();
}

template <class T>
void SplineDerivatives<T>::partials(const std::vector<std::vector<int>>& orders,
                                    const double* positions, std::size_t m, double* out) const {
  const std::size_t rank = coefficients_.rank(), channels = coefficients_.channels();
  const int n = opt_.degree, taps = n + 1;
  int top[kMaxRank] = {0, 0, 0};  // the highest order asked per axis
  for (const std::vector<int>& o : orders) {
    check_derivative_order(o, rank, n);
    for (std::size_t d = 0; d < rank; ++d) top[d] = std::max(top[d], o[d]);
  }
  constexpr double kLimit = 1e12;  // as sv::sample: beyond this the index arithmetic overflows
  for (std::size_t i = 0; i < m * rank; ++i)
    if (!(std::fabs(positions[i]) < kLimit))
      throw Error("derivative: position " + std::to_string(i / rank) +
                  " has a non-finite or huge coordinate (" + std::to_string(positions[i]) + ")");
  const std::size_t q_count = orders.size();
  const double shift = static_cast<double>(pad_);
  const bool grid_constant = opt_.boundary == Boundary::GridConstant;
  const unsigned threads = detail::thread_count(opt_.threads, m, 2048);
  detail::parallel_for(m, threads, [&](std::size_t begin, std::size_t end) {
    AxisTaps ax[kMaxRank];
    std::size_t stride[kMaxRank];
    std::size_t s = channels;
    for (std::size_t d = rank; d-- > 0;) {
      stride[d] = s;
      s *= coefficients_.dim(d);
    }
    const T* data = coefficients_.data();
    for (std::size_t p = begin; p < end; ++p) {
      bool outside = false;
      for (std::size_t d = 0; d < rank; ++d) {
        const double x = positions[p * rank + d] + shift;
        const long len = static_cast<long>(coefficients_.dim(d));
        for (int o = 0; o <= top[d]; ++o)
          if (!axis_weights(x, len, n, opt_.boundary, o, ax[d].w[o], ax[d].k)) outside = true;
      }
      for (std::size_t q = 0; q < q_count; ++q) {
        const std::vector<int>& ord = orders[q];
        double* o = out + (p * q_count + q) * channels;
        if (outside) {  // Constant: cval for the value, 0 for any derivative
          bool value = true;
          for (int v : ord) value = value && v == 0;
          for (std::size_t ch = 0; ch < channels; ++ch) o[ch] = value ? opt_.cval : 0.0;
          continue;
        }
        const double* w[kMaxRank];
        long idx[kMaxRank][kMaxDegree + 1];
        double wz[kMaxRank][kMaxDegree + 1];  // weights with GridConstant's outside taps zeroed
        double all = 1, inside = 1;
        for (std::size_t d = 0; d < rank; ++d) {
          double sum_all = 0, sum_in = 0;
          for (int j = 0; j < taps; ++j) {
            const double wj = ax[d].w[ord[d]][j];
            sum_all += wj;
            if (ax[d].k[j] < 0) {
              wz[d][j] = 0;
              idx[d][j] = 0;
            } else {
              wz[d][j] = wj;
              sum_in += wj;
              idx[d][j] = ax[d].k[j] * static_cast<long>(stride[d]);
            }
          }
          w[d] = wz[d];
          all *= sum_all;
          inside *= sum_in;
        }
        double acc[kMaxChannels] = {0, 0, 0, 0};
        tensor_sum(data, rank, taps, w, idx, channels, acc);
        // GridConstant: the coefficients outside are cval; their share is cval times the
        // weight they had (the sums of derivative weights are 0, so only `inside` remains).
        if (grid_constant && opt_.cval != 0)
          for (std::size_t ch = 0; ch < channels; ++ch) acc[ch] += opt_.cval * (all - inside);
        for (std::size_t ch = 0; ch < channels; ++ch) o[ch] = acc[ch];
      }
    }
  });
}

template <class T>
void SplineDerivatives<T>::partial(const std::vector<int>& order, const double* positions,
                                   std::size_t m, double* out) const {
  partials({order}, positions, m, out);
}

template <class T>
void SplineDerivatives<T>::gradient(const double* positions, std::size_t m, double* out) const {
  const std::size_t rank = coefficients_.rank();
  std::vector<std::vector<int>> orders(rank, std::vector<int>(rank, 0));
  for (std::size_t a = 0; a < rank; ++a) orders[a][a] = 1;
  partials(orders, positions, m, out);
}

template <class T>
void SplineDerivatives<T>::hessian(const double* positions, std::size_t m, double* out) const {
  const std::size_t rank = coefficients_.rank(), channels = coefficients_.channels();
  // Each distinct component once, then copied to both places of the symmetric matrix.
  std::vector<std::vector<int>> orders;
  for (std::size_t a = 0; a < rank; ++a)
    for (std::size_t b = a; b < rank; ++b) {
      std::vector<int> o(rank, 0);
      ++o[a];
      ++o[b];
      orders.push_back(o);
    }
  const std::size_t q = orders.size();
  std::vector<double> distinct(std::min<std::size_t>(m, 4096) * q * channels);
  for (std::size_t start = 0; start < m; start += 4096) {
    const std::size_t cnt = std::min<std::size_t>(4096, m - start);
    partials(orders, positions + start * rank, cnt, distinct.data());
    for (std::size_t p = 0; p < cnt; ++p)
      for (std::size_t a = 0; a < rank; ++a)
        for (std::size_t b = 0; b < rank; ++b)
          for (std::size_t ch = 0; ch < channels; ++ch)
            out[(((start + p) * rank + a) * rank + b) * channels + ch] =
                distinct[(p * q + hessian_index(a, b, rank)) * channels + ch];
  }
}

template <class T>
std::vector<double> partial_derivative(const Array<T>& input, const std::vector<int>& order,
                                       const std::vector<double>& positions,
                                       const DerivativeOptions& opt) {
  if (input.rank() == 0) throw Error("derivative: the input array is empty");
  check_derivative_order(order, input.rank(), opt.degree);
  if (positions.size() % input.rank() != 0)
    throw Error("derivative: " + std::to_string(positions.size()) +
                " coordinates is not a multiple of the array rank " + std::to_string(input.rank()));
  const SplineDerivatives<T> s(input, opt);
  const std::size_t m = positions.size() / input.rank();
  std::vector<double> out(m * input.channels());
  s.partial(order, positions.data(), m, out.data());
  return out;
}

// ---- Filters ----------------------------------------------------------------------------------

namespace {

// One axis of a filter: m forward differences, then the indirect transform of degree n - m at
// the grid points: out[j] = sum_t w[t] (D^m c)[j + first + t], where first and w are the
// sampler's weights of the degree n - m spline at position -m/2 (the same for every j).
struct AxisFilter {
  int order = 0;
  int degree = 3;
  long first = 0;
  double w[kMaxDegree + 1] = {};
};

AxisFilter axis_filter(int degree, int order) {
  AxisFilter f;
  f.order = order;
  f.degree = degree;
  f.first = bspline_weights<double>(degree - order, -0.5 * order, f.w);
  return f;
}

constexpr std::size_t kBlock = 64;  // adjacent lines filtered together (rows are contiguous)

// dst = the filter along `axis` of src extended by `b` (GridConstant: `outside` beyond the ends),
// keeping output samples crop .. crop + dst.dim(axis) - 1 of the axis.
template <class T>
void filter_axis(const Array<T>& src, Array<T>& dst, std::size_t axis, const AxisFilter& f,
                 Boundary b, double outside, std::size_t crop, unsigned threads) {
  const std::size_t rank = src.rank();
  std::size_t outer = 1, inner = src.channels();
  for (std::size_t d = 0; d < axis; ++d) outer *= src.dim(d);
  for (std::size_t d = axis + 1; d < rank; ++d) inner *= src.dim(d);
  const long len = static_cast<long>(src.dim(axis));
  const long nout = static_cast<long>(dst.dim(axis));
  const int m = f.order, n = f.degree;
  // c indices lo .. lo + lb - 1 feed outputs 0..nout-1.
  const long lo = static_cast<long>(crop) + f.first;
  const long lb = nout + n;
  std::vector<long> ext(static_cast<std::size_t>(lb));
  for (long i = 0; i < lb; ++i) ext[static_cast<std::size_t>(i)] = extend_index(lo + i, len, b);
  int t0 = 0, t1 = n - m;  // the non-zero taps
  while (t0 < t1 && f.w[t0] == 0) ++t0;
  while (t1 > t0 && f.w[t1] == 0) --t1;
  const std::size_t blocks = (inner + kBlock - 1) / kBlock;
  const std::size_t items = outer * blocks;
  const unsigned nt =
      detail::thread_count(threads, items * static_cast<std::size_t>(lb), std::size_t{1} << 15);
  detail::parallel_for(items, nt, [&](std::size_t begin, std::size_t end) {
    std::vector<double> buf(static_cast<std::size_t>(lb) * kBlock);
    for (std::size_t it = begin; it < end; ++it) {
      const std::size_t o = it / blocks, i0 = (it % blocks) * kBlock;
      const std::size_t bw = std::min(kBlock, inner - i0);  // also the buffer's row stride
      const T* s = src.data() + o * static_cast<std::size_t>(len) * inner + i0;
      for (long i = 0; i < lb; ++i) {
        double* row = buf.data() + static_cast<std::size_t>(i) * bw;
        const long k = ext[static_cast<std::size_t>(i)];
        if (k < 0) {
          for (std::size_t c = 0; c < bw; ++c) row[c] = outside;
        } else {
          const T* r = s + static_cast<std::size_t>(k) * inner;
          for (std::size_t c = 0; c < bw; ++c) row[c] = static_cast<double>(r[c]);
        }
      }
      // m forward differences, in place: row i becomes (D^r c)[lo + i].
      for (int r = 0; r < m; ++r)
        for (long i = 0; i + r + 1 < lb; ++i) {
          double* a = buf.data() + static_cast<std::size_t>(i) * bw;
          const double* next = a + bw;
          for (std::size_t c = 0; c < bw; ++c) a[c] = next[c] - a[c];
        }
      T* d = dst.data() + o * static_cast<std::size_t>(nout) * inner + i0;
      for (long j = 0; j < nout; ++j) {
        double acc[kBlock];
        for (std::size_t c = 0; c < bw; ++c) acc[c] = 0;
        for (int t = t0; t <= t1; ++t) {
          const double wt = f.w[t];
          const double* row = buf.data() + static_cast<std::size_t>(j + t) * bw;
          for (std::size_t c = 0; c < bw; ++c) acc[c] += wt * row[c];
        }
        T* out = d + static_cast<std::size_t>(j) * inner;
        for (std::size_t c = 0; c < bw; ++c) out[c] = static_cast<T>(acc[c]);
      }
    }
  });
}

// The whole separable filter of multi-index `order` on the coefficients of `spline` (padded by
// `pad` per side), cropped back to the input's shape.
template <class T>
Array<T> filter_coefficients(const Array<T>& c, std::size_t pad, const std::vector<int>& order,
                             const DerivativeOptions& opt) {
  const std::size_t rank = c.rank();
  Array<T> cur;
  double outside = opt.cval;  // GridConstant's value beyond the ends of the current array
  for (std::size_t step = 0; step < rank; ++step) {
    // x (contiguous lines) first: on the padded input that pass shrinks the array the most
    // cheaply; the order of the axes does not change the result beyond rounding.
    const std::size_t axis = rank - 1 - step;
    const AxisFilter f = axis_filter(opt.degree, order[axis]);
    const Array<T>& src = step == 0 ? c : cur;
    std::vector<std::size_t> dims = src.dims();
    dims[axis] -= 2 * pad;
    Array<T> dst(dims, src.channels());
    filter_axis(src, dst, axis, f, opt.boundary, outside, pad, opt.threads);
    if (f.order > 0) outside = 0;  // differences of a constant; an order-0 pass keeps it
    cur = std::move(dst);
  }
  return cur;
}

template <class T>
Interpolant<T> prepared(const Array<T>& input, const DerivativeOptions& opt, const char* what) {
  check_degree(opt.degree, 0, kMaxDegree);
  if (input.rank() == 0) throw Error(std::string(what) + ": the input array is empty");
  return Interpolant<T>(input, sampler_options(opt), !opt.input_is_coefficients);
}

void check_second_order(const DerivativeOptions& opt, const char* what) {
  if (opt.degree < 2)
    throw Error(std::string(what) + " needs second derivatives: degree " +
                std::to_string(opt.degree) + " has none (use degree 2..7)");
}

}  // namespace

template <class T>
Array<T> derivative_filter(const Array<T>& input, const std::vector<int>& order,
                           const DerivativeOptions& opt) {
  check_derivative_order(order, input.rank(), opt.degree);
  const Interpolant<T> spline = prepared(input, opt, "derivative");
  return filter_coefficients(spline.coefficients(), spline.pad(), order, opt);
}

template <class T>
std::vector<Array<T>> gradient_filter(const Array<T>& input, const DerivativeOptions& opt) {
  if (opt.degree < 1) throw Error("gradient: degree 0 (nearest) has no derivative");
  const Interpolant<T> spline = prepared(input, opt, "gradient");
  const std::size_t rank = input.rank();
  std::vector<Array<T>> out;
  for (std::size_t a = 0; a < rank; ++a) {
    std::vector<int> order(rank, 0);
    order[a] = 1;
    out.push_back(filter_coefficients(spline.coefficients(), spline.pad(), order, opt));
  }
  return out;
}

template <class T>
Array<T> gradient_magnitude_filter(const Array<T>& input, const DerivativeOptions& opt) {
  if (opt.degree < 1) throw Error("gradient magnitude: degree 0 (nearest) has no derivative");
  const Interpolant<T> spline = prepared(input, opt, "gradient magnitude");
  const std::size_t rank = input.rank();
  std::vector<double> sum(input.size(), 0.0);
  for (std::size_t a = 0; a < rank; ++a) {
    std::vector<int> order(rank, 0);
    order[a] = 1;
    const Array<T> g = filter_coefficients(spline.coefficients(), spline.pad(), order, opt);
    for (std::size_t i = 0; i < g.size(); ++i) {
      const double v = static_cast<double>(g[i]);
      sum[i] += v * v;
    }
  }
  Array<T> out(input.dims(), input.channels());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<T>(std::sqrt(sum[i]));
  return out;
}

template <class T>
std::vector<Array<T>> hessian_filter(const Array<T>& input, const DerivativeOptions& opt) {
  check_second_order(opt, "the Hessian");
  const Interpolant<T> spline = prepared(input, opt, "hessian");
  const std::size_t rank = input.rank();
  std::vector<Array<T>> out;
  for (std::size_t a = 0; a < rank; ++a)
    for (std::size_t b = a; b < rank; ++b) {
      std::vector<int> order(rank, 0);
      ++order[a];
      ++order[b];
      out.push_back(filter_coefficients(spline.coefficients(), spline.pad(), order, opt));
    }
  return out;
}

template <class T>
Array<T> laplacian_filter(const Array<T>& input, const DerivativeOptions& opt) {
  check_second_order(opt, "the Laplacian");
  const Interpolant<T> spline = prepared(input, opt, "laplacian");
  const std::size_t rank = input.rank();
  std::vector<double> sum(input.size(), 0.0);
  for (std::size_t a = 0; a < rank; ++a) {
    std::vector<int> order(rank, 0);
    order[a] = 2;
    const Array<T> g = filter_coefficients(spline.coefficients(), spline.pad(), order, opt);
    for (std::size_t i = 0; i < g.size(); ++i) sum[i] += static_cast<double>(g[i]);
  }
  Array<T> out(input.dims(), input.channels());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<T>(sum[i]);
  return out;
}

template class SplineDerivatives<float>;
template class SplineDerivatives<double>;
template std::vector<double> partial_derivative<float>(const Array<float>&, const std::vector<int>&,
                                                       const std::vector<double>&,
                                                       const DerivativeOptions&);
template std::vector<double> partial_derivative<double>(const Array<double>&,
                                                        const std::vector<int>&,
                                                        const std::vector<double>&,
                                                        const DerivativeOptions&);
template Array<float> derivative_filter<float>(const Array<float>&, const std::vector<int>&,
                                               const DerivativeOptions&);
template Array<double> derivative_filter<double>(const Array<double>&, const std::vector<int>&,
                                                 const DerivativeOptions&);
template std::vector<Array<float>> gradient_filter<float>(const Array<float>&,
                                                          const DerivativeOptions&);
template std::vector<Array<double>> gradient_filter<double>(const Array<double>&,
                                                            const DerivativeOptions&);
template Array<float> gradient_magnitude_filter<float>(const Array<float>&,
                                                       const DerivativeOptions&);
template Array<double> gradient_magnitude_filter<double>(const Array<double>&,
                                                         const DerivativeOptions&);
template std::vector<Array<float>> hessian_filter<float>(const Array<float>&,
                                                         const DerivativeOptions&);
template std::vector<Array<double>> hessian_filter<double>(const Array<double>&,
                                                           const DerivativeOptions&);
template Array<float> laplacian_filter<float>(const Array<float>&, const DerivativeOptions&);
template Array<double> laplacian_filter<double>(const Array<double>&, const DerivativeOptions&);

}  // namespace sv
