// The direct transform with a smoothing parameter and the indirect transform (smoothing.h).
//
// Direct: the poles of 1 / P(z + 1/z) are found once per (degree, lambda) in long double; each
// axis is then filtered like the interpolating prefilter (prefilter.cpp): the gain, then per
// real pole a causal and an anticausal first-order recursion with exact starts. A conjugate pair
// (z, conj z) is filtered in complex<T>: the line goes through the recursions of z and then of
// conj z, and the result, real up to rounding, is its real part. The starts are algebraic
// identities in z (sums over one period of the extended line, closed forms from the symmetry of
// the output), so they hold for complex poles as they are.
//
// Layout as in prefilter.cpp: an axis of length n is viewed as (outer, n, inner), and blocks of up
// to kBlock adjacent lines are filtered together, walking rows.
#include "splineview/smoothing.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>

#include "parallel.h"
#include "pole_filter.h"
#include "splineview/bspline.h"
#include "splineview/error.h"
#include "splineview/prefilter.h"
#include "splineview/sampler.h"

namespace sv {
namespace {

using namespace pole_filter;  // as, horizon, period, one_pole (shared with the prefilter)

constexpr std::size_t kBlock = 64;
using Cl = std::complex<long double>;

void check_lambda(double lambda) {
  if (!(lambda >= 0) || !std::isfinite(lambda)) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", lambda);
    throw Error(std::string("smoothing: lambda must be a finite number >= 0, got ") + text);
  }
}

void check_smoothing_degree(int n, double lambda) {
  check_degree(n, 0, kMaxDegree);
  if (lambda > 0 && n % 2 == 0)
    throw Error(
        "smoothing: lambda > 0 needs an odd degree (1, 3, 5 or 7: the smoothing spline "
        "of degree n = 2r - 1 penalises the r-th derivative), got degree " +
        std::to_string(n));
}

// The coefficients (lowest first) of P(y) = B_n(z) + lambda (2 - y)^r, y = z + 1/z, n = 2r - 1,
// with the leading zero dropped when lambda = 0.
std::vector<long double> denominator(int n, double lambda) {
  const int r = (n + 1) / 2;
  // C_k(y) = z^k + z^-k: C_0 = 2, C_1 = y, C_{k+1} = y C_k - C_{k-1}.
  std::vector<std::vector<long double>> c(static_cast<std::size_t>(r + 1));
  c[0] = {2};
  c[1] = {0, 1};
  for (int k = 1; k < r; ++k) {
    std::vector<long double> next(static_cast<std::size_t>(k + 2), 0);
    for (std::size_t j = 0; j < c[k].size(); ++j) next[j + 1] += c[k][j];
    for (std::size_t j = 0; j < c[k - 1].size(); ++j) next[j] -= c[k - 1][j];
    c[k + 1] = next;
  }
  std::vector<long double> p(static_cast<std::size_t>(r + 1), 0);
  p[0] = bspline(n, 0);
  for (int k = 1; k <= r - 1; ++k)
    for (std::size_t j = 0; j < c[k].size(); ++j) p[j] += bspline(n, k) * c[k][j];
  // lambda (2 - y)^r by the binomial expansion
  long double binom = 1;
  for (int j = 0; j <= r; ++j) {
    p[j] += static_cast<long double>(lambda) * binom * std::pow(2.0L, r - j) * ((j % 2) ? -1 : 1);
    binom = binom * (r - j) / (j + 1);
  }
  while (p.size() > 1 && p.back() == 0) p.pop_back();
  return p;
}

// p(x), p'(x), p''(x) of the polynomial with coefficients a (lowest first).
template <class A>
void evaluate(const std::vector<A>& a, Cl x, Cl& p, Cl& d1, Cl& d2) {
  p = d1 = d2 = 0;
  for (std::size_t j = a.size(); j-- > 0;) {
    d2 = d2 * x + d1;
    d1 = d1 * x + p;
    p = p * x + Cl(a[j]);
  }
  d2 *= 2;
}

// One root of the polynomial a (degree m >= 1) by Laguerre's method from x = 0.
Cl laguerre(const std::vector<Cl>& a) {
  const long double m = static_cast<long double>(a.size() - 1);
  Cl x = 0;
  for (int it = 0; it < 200; ++it) {
    Cl p, d1, d2;
    evaluate(a, x, p, d1, d2);
    if (std::abs(p) == 0) break;
    const Cl g = d1 / p, h = g * g - d2 / p;
    const Cl s = std::sqrt((m - 1) * (m * h - g * g));
    const Cl den = std::abs(g + s) >= std::abs(g - s) ? g + s : g - s;
    // den = 0 only at a stationary point: step off it
    const Cl step = std::abs(den) > 0 ? m / den : Cl(1 + std::abs(x), 0);
    x -= step;
    if (std::abs(step) <= 4 * std::numeric_limits<long double>::epsilon() * std::abs(x)) break;
  }
  return x;
}

// The roots of the real polynomial p (lowest first, degree >= 1), conjugate pairs made exact and
// near-real roots made real.
std::vector<Cl> roots(const std::vector<long double>& p) {
  std::vector<Cl> a(p.begin(), p.end()), found;
  while (a.size() > 1) {
    Cl x = laguerre(a);
    // Newton on the undeflated polynomial: the deflation's rounding does not stay in the root
    for (int it = 0; it < 8; ++it) {
      Cl v, d1, d2;
      evaluate(p, x, v, d1, d2);
      if (std::abs(d1) == 0) break;
      const Cl step = v / d1;
      x -= step;
      if (std::abs(step) <= std::numeric_limits<long double>::epsilon() * std::abs(x)) break;
    }
    found.push_back(x);
    // deflate by (y - x)
    std::vector<Cl> q(a.size() - 1);
    Cl carry = 0;
    for (std::size_t j = a.size(); j-- > 1;) {
      carry = a[j] + carry * x;
      q[j - 1] = carry;
    }
    a = q;
  }
  // Near-real roots are real (a conjugate pair y +- ib moved to y changes P by b^2); the rest
  // are paired with the root nearest to their conjugate, and the pair made symmetric.
  std::vector<Cl> out;
  std::vector<bool> used(found.size(), false);
  for (std::size_t i = 0; i < found.size(); ++i) {
    if (used[i]) continue;
    used[i] = true;
    const Cl y = found[i];
    if (std::fabs(y.imag()) <= 1e-9L * std::abs(y)) {
      out.emplace_back(y.real(), 0);
      continue;
    }
    std::size_t best = i;
    long double dist = HUGE_VALL;
    for (std::size_t j = 0; j < found.size(); ++j)
      if (!used[j] && std::abs(found[j] - std::conj(y)) < dist) {
        dist = std::abs(found[j] - std::conj(y));
        best = j;
      }
    if (best == i) throw Error("smoothing: a complex root of the filter has no conjugate");
    used[best] = true;
    const Cl m = (y + std::conj(found[best])) / 2.0L;
    out.push_back(m);
    out.push_back(std::conj(m));
  }
  return out;
}

// Buffers of one worker.
template <class T>
struct Scratch {
  std::vector<T> acc = std::vector<T>(kBlock);
  std::vector<std::complex<T>> cacc = std::vector<std::complex<T>>(kBlock), line;
};

template <class T>
void smooth_block(T* base, std::size_t n, std::size_t stride, std::size_t width,
                  const SmoothingPoles& p, Boundary b, Scratch<T>& s) {
  const T gain = static_cast<T>(p.gain);
  for (std::size_t k = 0; k < n; ++k) {
    T* row = base + k * stride;
    for (std::size_t i = 0; i < width; ++i) row[i] *= gain;
  }
  for (std::size_t q = 0; q < p.z.size(); ++q) {
    if (p.z[q].imag() == 0) {
      one_pole<T, T>(base, n, stride, width, p.z[q], b, s.acc.data());
      continue;
    }
    // a conjugate pair, in complex<T> on a contiguous copy
    s.line.resize(n * width);
    for (std::size_t k = 0; k < n; ++k)
      for (std::size_t i = 0; i < width; ++i) s.line[k * width + i] = base[k * stride + i];
    one_pole<std::complex<T>, T>(s.line.data(), n, width, width, p.z[q], b, s.cacc.data());
    one_pole<std::complex<T>, T>(s.line.data(), n, width, width, std::conj(p.z[q]), b,
                                 s.cacc.data());
    for (std::size_t k = 0; k < n; ++k)
      for (std::size_t i = 0; i < width; ++i) base[k * stride + i] = s.line[k * width + i].real();
    ++q;  // its conjugate is done
  }
}

// Calls fn(base, n, stride, width) on every block of adjacent lines of `axis`, in parallel.
template <class T, class Fn>
void for_blocks(Array<T>& a, std::size_t axis, unsigned threads, Fn&& fn) {
  const std::size_t n = a.dim(axis);
  std::size_t outer = 1, inner = a.channels();
  for (std::size_t d = 0; d < axis; ++d) outer *= a.dim(d);
  for (std::size_t d = axis + 1; d < a.rank(); ++d) inner *= a.dim(d);
  const std::size_t blocks = (inner + kBlock - 1) / kBlock;
  const std::size_t tasks = outer * blocks;
  T* data = a.data();
  const unsigned t =
      detail::thread_count(threads, tasks * n * std::min(inner, kBlock), std::size_t{1} << 16);
  detail::parallel_for(tasks, t, [&](std::size_t begin, std::size_t end) {
    for (std::size_t task = begin; task < end; ++task) {
      const std::size_t o = task / blocks, blk = task % blocks;
      const std::size_t i0 = blk * kBlock, width = std::min(kBlock, inner - i0);
      fn(data + o * n * inner + i0, n, inner, width);
    }
  });
}

}  // namespace

int transform_degree(const SplineTransformOptions& opt, std::size_t axis, std::size_t rank) {
  if (!opt.degrees.empty() && rank != 0 && opt.degrees.size() != rank)
    throw Error("spline transform: " + std::to_string(opt.degrees.size()) +
                " degrees given for an array of " + std::to_string(rank) +
                " axes; give one per axis");
  const int n = opt.degrees.empty() ? opt.degree : opt.degrees.at(axis);
  check_degree(n, 0, kMaxDegree);
  return n;
}

SmoothingPoles smoothing_poles(int degree, double lambda) {
  check_lambda(lambda);
  check_smoothing_degree(degree, lambda);
  SmoothingPoles out;
  if (lambda == 0) {
    // the interpolating prefilter's poles; even degrees have them too
    const Poles p = bspline_poles(degree);
    if (degree % 2 == 0) {
      for (int i = 0; i < p.count; ++i) out.z.emplace_back(p.z[i], 0);
      out.gain = p.gain;
      return out;
    }
  }
  const std::vector<long double> poly = denominator(degree, lambda);
  if (poly.size() < 2) return out;  // degree 1 with lambda = 0: the identity
  std::vector<std::complex<double>> z;
  for (const Cl& y : roots(poly)) {
    // z + 1/z = y: z = 1/t with t = y/2 +- sqrt(y^2/4 - 1), the sign that makes |t| > 1
    const Cl s = std::sqrt(y * y / 4.0L - 1.0L);
    const Cl t1 = y / 2.0L + s, t2 = y / 2.0L - s;
    const Cl zz = 1.0L / (std::abs(t1) >= std::abs(t2) ? t1 : t2);
    z.emplace_back(static_cast<double>(zz.real()),
                   y.imag() == 0 ? 0.0 : static_cast<double>(zz.imag()));
  }
  // largest magnitude first; of a conjugate pair, Im z > 0 first
  std::sort(z.begin(), z.end(), [](const std::complex<double>& a, const std::complex<double>& b) {
    if (std::abs(a) != std::abs(b)) return std::abs(a) > std::abs(b);
    return a.imag() > b.imag();
  });
  // a pair's two members must have the same magnitude bits: take the conjugate of the first
  for (std::size_t q = 0; q + 1 < z.size(); ++q)
    if (z[q].imag() != 0) {
      z[q + 1] = std::conj(z[q]);
      ++q;
    }
  Cl gain = 1;
  for (const auto& p : z) {
    const Cl zl(p.real(), p.imag());
    gain *= (1.0L - zl) * (1.0L - 1.0L / zl);
  }
  out.z = z;
  out.gain = static_cast<double>(gain.real());
  return out;
}

double smoothing_response(int degree, double lambda, double omega) {
  check_lambda(lambda);
  check_smoothing_degree(degree, lambda);
  double b = bspline(degree, 0);
  for (int k = 1; k <= degree / 2 + 1; ++k) b += 2 * bspline(degree, k) * std::cos(k * omega);
  const int r = (degree + 1) / 2;
  return 1 / (b + (lambda > 0 ? lambda * std::pow(2 - 2 * std::cos(omega), r) : 0.0));
}

template <class T>
void direct_transform_axis(Array<T>& a, std::size_t axis, const SplineTransformOptions& opt) {
  if (axis >= a.rank())
    throw Error("direct transform: axis " + std::to_string(axis) + " out of range");
  const int n = transform_degree(opt, axis, a.rank());
  check_lambda(opt.lambda);
  check_smoothing_degree(n, opt.lambda);
  if (opt.lambda == 0) {
    // the interpolating prefilter itself
    PrefilterOptions p;
    p.degree = n;
    p.boundary = opt.boundary;
    p.threads = opt.threads;
    prefilter_axis(a, axis, p);
    return;
  }
  const SmoothingPoles poles = smoothing_poles(n, opt.lambda);
  if (poles.z.empty() || a.dim(axis) < 2) return;  // a constant line: DC gain 1
  const Boundary b = prefilter_boundary(opt.boundary);
  // one scratch per worker thread
  for_blocks(a, axis, opt.threads, [&](T* base, std::size_t n_, std::size_t stride, std::size_t w) {
    thread_local Scratch<T> s;
    smooth_block<T>(base, n_, stride, w, poles, b, s);
  });
}

template <class T>
void direct_transform(Array<T>& a, const SplineTransformOptions& opt) {
  for (std::size_t axis = 0; axis < a.rank(); ++axis) direct_transform_axis(a, axis, opt);
}

template <class T>
void indirect_transform(Array<T>& a, const SplineTransformOptions& opt) {
  const Boundary b = prefilter_boundary(opt.boundary);
  for (std::size_t axis = 0; axis < a.rank(); ++axis) {
    const int n = transform_degree(opt, axis, a.rank());
    const long h = n / 2;
    const std::size_t len = a.dim(axis);
    if (h == 0 || len < 2) continue;  // degrees 0 and 1, or one sample: the identity
    std::vector<T> w(static_cast<std::size_t>(2 * h + 1));
    for (long m = -h; m <= h; ++m)
      w[static_cast<std::size_t>(m + h)] = static_cast<T>(bspline(n, static_cast<double>(m)));
    // the extended index of every tap, once per axis
    std::vector<std::size_t> idx(len * w.size());
    for (std::size_t j = 0; j < len; ++j)
      for (long m = -h; m <= h; ++m)
        idx[j * w.size() + static_cast<std::size_t>(m + h)] = static_cast<std::size_t>(
            extend_index(static_cast<long>(j) + m, static_cast<long>(len), b));
    for_blocks(a, axis, opt.threads,
               [&](T* base, std::size_t n_, std::size_t stride, std::size_t wd) {
                 thread_local std::vector<T> line;
                 line.resize(n_ * wd);
                 for (std::size_t k = 0; k < n_; ++k)
                   for (std::size_t i = 0; i < wd; ++i) line[k * wd + i] = base[k * stride + i];
                 for (std::size_t k = 0; k < n_; ++k) {
                   T* row = base + k * stride;
                   for (std::size_t i = 0; i < wd; ++i) row[i] = T(0);
                   for (std::size_t m = 0; m < w.size(); ++m) {
                     const T* src = line.data() + idx[k * w.size() + m] * wd;
                     for (std::size_t i = 0; i < wd; ++i) row[i] += w[m] * src[i];
                   }
                 }
               });
  }
}

template void direct_transform<float>(Array<float>&, const SplineTransformOptions&);
template void direct_transform<double>(Array<double>&, const SplineTransformOptions&);
template void direct_transform_axis<float>(Array<float>&, std::size_t,
                                           const SplineTransformOptions&);
template void direct_transform_axis<double>(Array<double>&, std::size_t,
                                            const SplineTransformOptions&);
template void indirect_transform<float>(Array<float>&, const SplineTransformOptions&);
template void indirect_transform<double>(Array<double>&, const SplineTransformOptions&);

}  // namespace sv
