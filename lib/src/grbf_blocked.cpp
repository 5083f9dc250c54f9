// The published GRBF scheme as a baseline (grbf.h; "GRBF interpolation of 2-D and 3-D medical
// images with CUDA", Chen et al.): dense column-pivoting Gaussian elimination (an explicit
// inverse, or elimination with back substitution), blocks of B samples per axis with K samples
// of overlap, and a linear blend across the overlap where two blocks meet.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "parallel.h"
#include "splineview/grbf.h"

namespace sv {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Row k holds the largest |a[i][col]| for i >= k: swap it there (the paper's column pivoting).
template <class T>
void pivot(std::vector<T>& a, std::size_t width, std::size_t k, std::size_t col,
           std::vector<T>* b = nullptr, std::size_t bwidth = 0) {
  const std::size_t n = a.size() / width;
  std::size_t best = k;
  for (std::size_t i = k + 1; i < n; ++i)
    if (std::fabs(a[i * width + col]) > std::fabs(a[best * width + col])) best = i;
  if (!(a[best * width + col] != T(0)))
    throw Error("Gaussian elimination: zero pivot in column " + std::to_string(col) + " of " +
                std::to_string(n) + " (the matrix is singular in " +
                (sizeof(T) == 4 ? "float" : "double") + " precision)");
  if (best != k) {
    std::swap_ranges(a.begin() + static_cast<long>(k * width),
                     a.begin() + static_cast<long>((k + 1) * width),
                     a.begin() + static_cast<long>(best * width));
    if (b)
      std::swap_ranges(b->begin() + static_cast<long>(k * bwidth),
                       b->begin() + static_cast<long>((k + 1) * bwidth),
                       b->begin() + static_cast<long>(best * bwidth));
  }
}

}  // namespace

template <class T>
std::vector<T> gauss_inverse(std::vector<T> a, std::size_t n, unsigned threads) {
  if (a.size() != n * n) throw Error("gauss_inverse: the matrix is not n x n");
  // [A | I], n x 2n.
  const std::size_t w = 2 * n;
  std::vector<T> m(n * w, T(0));
  for (std::size_t i = 0; i < n; ++i) {
    std::copy(a.begin() + static_cast<long>(i * n), a.begin() + static_cast<long>((i + 1) * n),
              m.begin() + static_cast<long>(i * w));
    m[i * w + n + i] = T(1);
  }
  a.clear();
  a.shrink_to_fit();
  const unsigned nt = detail::thread_count(threads, n * n, 1 << 16);
  for (std::size_t k = 0; k < n; ++k) {
    pivot(m, w, k, k);
    T* rk = &m[k * w];
    const T inv = T(1) / rk[k];
    for (std::size_t j = k; j < w; ++j) rk[j] *= inv;
    detail::parallel_for(n, nt, [&](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) {
        if (i == k) continue;
        T* ri = &m[i * w];
        const T f = ri[k];
        if (f == T(0)) continue;
        for (std::size_t j = k; j < w; ++j) ri[j] -= f * rk[j];
      }
    });
  }
  std::vector<T> inv(n * n);
  for (std::size_t i = 0; i < n; ++i)
    std::copy(m.begin() + static_cast<long>(i * w + n), m.begin() + static_cast<long>((i + 1) * w),
              inv.begin() + static_cast<long>(i * n));
  return inv;
}

template <class T>
std::vector<T> gauss_solve(std::vector<T> a, std::vector<T> b, std::size_t n, std::size_t nrhs,
                           unsigned threads) {
  if (a.size() != n * n || b.size() != n * nrhs)
    throw Error("gauss_solve: the matrix is not n x n or the right-hand side not n x nrhs");
  const unsigned nt = detail::thread_count(threads, n * n, 1 << 16);
  for (std::size_t k = 0; k + 1 < n; ++k) {
    pivot(a, n, k, k, &b, nrhs);
    const T* rk = &a[k * n];
    const T* bk = &b[k * nrhs];
    const std::size_t rows = n - k - 1;
    detail::parallel_for(rows, nt, [&](std::size_t lo, std::size_t hi) {
      for (std::size_t r = lo; r < hi; ++r) {
        const std::size_t i = k + 1 + r;
        T* ri = &a[i * n];
        const T f = ri[k] / rk[k];
        if (f == T(0)) continue;
        ri[k] = T(0);
        for (std::size_t j = k + 1; j < n; ++j) ri[j] -= f * rk[j];
        T* bi = &b[i * nrhs];
        for (std::size_t c = 0; c < nrhs; ++c) bi[c] -= f * bk[c];
      }
    });
  }
  if (!(a[n * n - 1] != T(0)))
    throw Error("Gaussian elimination: zero pivot in column " + std::to_string(n - 1) + " of " +
                std::to_string(n));
  for (std::size_t i = n; i-- > 0;) {  // back substitution
    T* bi = &b[i * nrhs];
    for (std::size_t j = i + 1; j < n; ++j) {
      const T aij = a[i * n + j];
      const T* bj = &b[j * nrhs];
      for (std::size_t c = 0; c < nrhs; ++c) bi[c] -= aij * bj[c];
    }
    for (std::size_t c = 0; c < nrhs; ++c) bi[c] /= a[i * n + i];
  }
  return b;
}

std::vector<double> grbf_dense_matrix(const std::vector<std::size_t>& dims,
                                      const std::vector<double>& sigma) {
  const std::vector<double> s = grbf_sigma_per_axis(sigma, dims.size());
  std::size_t n = 1;
  for (std::size_t d : dims) n *= d;
  std::vector<double> a(n * n);
  std::vector<std::size_t> pi(dims.size()), pj(dims.size());
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t r = i;
    for (std::size_t d = dims.size(); d-- > 0;) {
      pi[d] = r % dims[d];
      r /= dims[d];
    }
    for (std::size_t j = 0; j < n; ++j) {
      r = j;
      double e = 0;
      for (std::size_t d = dims.size(); d-- > 0;) {
        pj[d] = r % dims[d];
        r /= dims[d];
        const double t = static_cast<double>(pi[d]) - static_cast<double>(pj[d]);
        e += t * t / (2 * s[d] * s[d]);
      }
      a[i * n + j] = std::exp(-e);
    }
  }
  return a;
}

std::vector<GrbfBlockSpan> grbf_block_spans(std::size_t n, std::size_t block, std::size_t overlap) {
  if (block < 1 || block <= 2 * overlap)
    throw Error("GRBF blocks: a block of " + std::to_string(block) + " samples cannot reach " +
                std::to_string(overlap) + " samples beyond its tile on both sides (need B > 2K)");
  const std::size_t tile = block - 2 * overlap;
  const std::size_t nt = (n + tile - 1) / tile;
  std::vector<GrbfBlockSpan> s(nt);
  for (std::size_t t = 0; t < nt; ++t) {
    const std::size_t ts = t * tile, te = std::min(n, ts + tile);
    std::size_t a = ts >= overlap ? ts - overlap : 0, b = std::min(n, te + overlap);
    if (b - a < block && n >= block) {  // keep B samples: shift inwards at the borders
      if (a == 0)
        b = block;
      else if (b == n)
        a = n - block;
    }
    s[t].start = a;
    s[t].size = b - a;
  }
  for (std::size_t t = 0; t < nt; ++t) {
    if (t + 1 == nt) {
      s[t].ramp_lo = s[t].ramp_hi = HUGE_VAL;
      continue;
    }
    const double boundary = static_cast<double>((t + 1) * tile) - 0.5;
    if (overlap == 0) {
      s[t].ramp_lo = s[t].ramp_hi = boundary;
    } else {  // from the first sample of block t + 1 to the last of block t, around the border
      const double te = static_cast<double>((t + 1) * tile), k = static_cast<double>(overlap);
      s[t].ramp_lo = te - k;
      s[t].ramp_hi = std::min(te + k - 1, static_cast<double>(n) - 1);
    }
    if (t > 0 && s[t].ramp_lo <= s[t - 1].ramp_hi)
      throw Error("GRBF blocks: the overlap " + std::to_string(overlap) +
                  " is too large for tiles of " + std::to_string(tile) + " samples");
  }
  return s;
}

namespace {

// The weight of span t at x: 1 inside its tile, ramping linearly across the overlaps.
double fall(const GrbfBlockSpan& s, double x) {
  if (s.ramp_lo == s.ramp_hi) return x < s.ramp_lo ? 1.0 : 0.0;
  if (x <= s.ramp_lo) return 1.0;
  if (x >= s.ramp_hi) return 0.0;
  return (s.ramp_hi - x) / (s.ramp_hi - s.ramp_lo);
}

double span_weight(const std::vector<GrbfBlockSpan>& s, std::size_t t, double x) {
  const double rise = t == 0 ? 1.0 : 1.0 - fall(s[t - 1], x);
  return rise * fall(s[t], x);
}

}  // namespace

template <class T>
GrbfBlocked<T> grbf_blocked_solve(const Array<T>& f, const GrbfBlockOptions& opt) {
  if (f.empty()) throw Error("GRBF blocks: the samples are empty");
  for (std::size_t i = 0; i < f.size(); ++i)
    if (!std::isfinite(static_cast<double>(f[i])))
      throw Error("GRBF blocks: the samples hold NaN or inf (at scalar " + std::to_string(i) + ")");
  const std::size_t rank = f.rank(), C = f.channels();
  GrbfBlocked<T> r;
  r.dims = f.dims();
  r.channels = C;
  r.sigma = grbf_sigma_per_axis(opt.sigma, rank);
  if (opt.block.size() != 1 && opt.block.size() != rank)
    throw Error("GRBF blocks: the block size takes one value or one per axis (" +
                std::to_string(rank) + "), got " + std::to_string(opt.block.size()));
  std::size_t points = 1;
  for (std::size_t d = 0; d < rank; ++d) {
    const std::size_t bd = opt.block.size() == 1 ? opt.block[0] : opt.block[d];
    r.spans.push_back(grbf_block_spans(f.dim(d), bd, opt.overlap));
    points *= std::min(f.dim(d), bd);
  }
  if (points > 20000)
    throw Error("GRBF blocks: a block of " + std::to_string(points) +
                " samples needs a dense inverse of " + std::to_string(points) + "^2 values; " +
                "the published scheme is kept for blocks of at most 20000 samples");
  std::size_t count = 1;
  for (const auto& s : r.spans) count *= s.size();
  std::map<std::vector<std::size_t>, std::vector<T>> inverses;
  const double u = 0.5 * std::numeric_limits<T>::epsilon();
  for (std::size_t b = 0; b < count; ++b) {
    std::vector<std::size_t> idx(rank), shape(rank), start(rank);
    std::size_t rem = b;
    for (std::size_t d = rank; d-- > 0;) {
      idx[d] = rem % r.spans[d].size();
      rem /= r.spans[d].size();
      shape[d] = r.spans[d][idx[d]].size;
      start[d] = r.spans[d][idx[d]].start;
    }
    std::size_t n = 1;
    for (std::size_t v : shape) n *= v;
    auto it = inverses.find(shape);
    if (it == inverses.end()) {
      const auto t0 = std::chrono::steady_clock::now();
      const std::vector<double> ad = grbf_dense_matrix(shape, r.sigma);
      std::vector<T> a(ad.begin(), ad.end());
      it = inverses.emplace(shape, gauss_inverse(std::move(a), n, opt.threads)).first;
      r.seconds_inverse += seconds_since(t0);
    }
    const auto t1 = std::chrono::steady_clock::now();
    GrbfWeights<T> g;
    g.sigma = r.sigma;
    Array<T> fb(shape, C);
    for (std::size_t p = 0; p < n; ++p) {  // gather the block's samples
      std::size_t q = p, src = 0, mul = 1;
      std::vector<std::size_t> pos(rank);
      for (std::size_t d = rank; d-- > 0;) {
        pos[d] = q % shape[d];
        q /= shape[d];
      }
      for (std::size_t d = rank; d-- > 0;) {
        src += (start[d] + pos[d]) * mul;
        mul *= f.dim(d);
      }
      for (std::size_t c = 0; c < C; ++c) {
        fb[p * C + c] = f[src * C + c];
        g.max_abs_sample =
            std::max(g.max_abs_sample, std::fabs(static_cast<double>(f[src * C + c])));
      }
    }
    g.w = Array<T>(shape, C);
    const std::vector<T>& inv = it->second;
    detail::parallel_for(n, detail::thread_count(opt.threads, n * n, 1 << 16),
                         [&](std::size_t lo, std::size_t hi) {
                           for (std::size_t i = lo; i < hi; ++i)
                             for (std::size_t c = 0; c < C; ++c) {
                               T s = T(0);
                               const T* row = &inv[i * n];
                               for (std::size_t j = 0; j < n; ++j) s += row[j] * fb[j * C + c];
                               g.w[i * C + c] = s;
                             }
                         });
    for (std::size_t i = 0; i < g.w.size(); ++i)
      g.max_abs_weight = std::max(g.max_abs_weight, std::fabs(static_cast<double>(g.w[i])));
    g.radius = grbf_support_radius(g.sigma, g.max_abs_weight, g.max_abs_sample, u);
    g.truncation_bound = grbf_truncation_bound(g.sigma, g.radius, g.max_abs_weight);
    r.blocks.push_back(std::move(g));
    r.seconds_multiply += seconds_since(t1);
  }
  return r;
}

template <class T>
void grbf_blocked_sample(const GrbfBlocked<T>& b, const double* positions, std::size_t m,
                         double* out, unsigned threads) {
  const std::size_t rank = b.dims.size(), C = b.channels;
  detail::parallel_for(m, detail::thread_count(threads, m, 16),
                       [&](std::size_t lo, std::size_t hi) {
                         GrbfEvalOptions one;
                         one.threads = 1;
                         for (std::size_t i = lo; i < hi; ++i) {
                           const double* p = positions + i * rank;
                           double* o = out + i * C;
                           for (std::size_t c = 0; c < C; ++c) o[c] = 0;
                           // Per axis the (at most two) spans with a weight at p[d].
                           std::size_t ti[3][2] = {{0, 0}, {0, 0}, {0, 0}};
                           double tw[3][2] = {{0, 0}, {0, 0}, {0, 0}};
                           std::size_t tn[3] = {0, 0, 0};
                           bool finite = true;
                           for (std::size_t d = 0; d < rank; ++d) {
                             if (!std::isfinite(p[d])) {
                               finite = false;
                               break;
                             }
                             for (std::size_t t = 0; t < b.spans[d].size() && tn[d] < 2; ++t) {
                               const double w = span_weight(b.spans[d], t, p[d]);
                               if (w > 0) {
                                 ti[d][tn[d]] = t;
                                 tw[d][tn[d]] = w;
                                 ++tn[d];
                               }
                             }
                           }
                           if (!finite) {
                             for (std::size_t c = 0; c < C; ++c)
                               o[c] = std::numeric_limits<double>::quiet_NaN();
                             continue;
                           }
                           std::size_t combos = 1;
                           for (std::size_t d = 0; d < rank; ++d) combos *= tn[d];
                           for (std::size_t k = 0; k < combos; ++k) {
                             std::size_t rem = k, block = 0, mul = 1;
                             double weight = 1;
                             double local[3];
                             for (std::size_t d = rank; d-- > 0;) {
                               const std::size_t pick = rem % tn[d];
                               rem /= tn[d];
                               const std::size_t t = ti[d][pick];
                               weight *= tw[d][pick];
                               local[d] = p[d] - static_cast<double>(b.spans[d][t].start);
                               block += t * mul;
                               mul *= b.spans[d].size();
                             }
                             double v[kMaxChannels];
                             grbf_sample(b.blocks[block], local, 1, v, one);
                             for (std::size_t c = 0; c < C; ++c) o[c] += weight * v[c];
                           }
                         }
                       });
}

template std::vector<float> gauss_inverse(std::vector<float>, std::size_t, unsigned);
template std::vector<double> gauss_inverse(std::vector<double>, std::size_t, unsigned);
template std::vector<float> gauss_solve(std::vector<float>, std::vector<float>, std::size_t,
                                        std::size_t, unsigned);
template std::vector<double> gauss_solve(std::vector<double>, std::vector<double>, std::size_t,
                                         std::size_t, unsigned);
template GrbfBlocked<float> grbf_blocked_solve(const Array<float>&, const GrbfBlockOptions&);
template GrbfBlocked<double> grbf_blocked_solve(const Array<double>&, const GrbfBlockOptions&);
template void grbf_blocked_sample(const GrbfBlocked<float>&, const double*, std::size_t, double*,
                                  unsigned);
template void grbf_blocked_sample(const GrbfBlocked<double>&, const double*, std::size_t, double*,
                                  unsigned);

}  // namespace sv
