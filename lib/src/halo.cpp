// Halos for chunked prefiltering (halo.h; derivation in docs/DESIGN.md).
#include "splineview/halo.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <mutex>
#include <string>

#include "splineview/bspline.h"
#include "splineview/error.h"
#include "splineview/sampler.h"

namespace sv {
namespace {

// Samples of g kept per side: the largest pole magnitude (degree 7) is 0.5353, and
// 0.5353^1200 is far below anything a double tail sum can see.
constexpr std::size_t kLength = 1200;

// g[0..kLength] per degree, computed once: the convolution of the poles' responses
// (1 - z)^2 z^|m| / (1 - z^2), in long double.
const std::vector<long double>& response(int degree) {
  static std::array<std::vector<long double>, kMaxDegree + 1> cache;
  static std::once_flag once[kMaxDegree + 1];
  check_degree(degree, 0, kMaxDegree);
  std::call_once(once[degree], [degree] {
    const Poles p = bspline_poles(degree);
    const long L = static_cast<long>(kLength);
    // Symmetric sequences on [-L, L], stored at index m + L.
    std::vector<long double> g(static_cast<std::size_t>(2 * L + 1), 0.0L);
    g[static_cast<std::size_t>(L)] = 1.0L;
    for (int q = 0; q < p.count; ++q) {
      const long double z = p.z[q];
      const long double scale = (1 - z) * (1 - z) / (1 - z * z);
      std::vector<long double> r(static_cast<std::size_t>(2 * L + 1));
      long double zm = 1;
      for (long m = 0; m <= L; ++m) {
        r[static_cast<std::size_t>(L + m)] = r[static_cast<std::size_t>(L - m)] = scale * zm;
        zm *= z;
      }
      std::vector<long double> out(g.size(), 0.0L);
      for (long i = -L; i <= L; ++i) {
        const long double gi = g[static_cast<std::size_t>(i + L)];
        if (gi == 0) continue;
        for (long j = std::max(-L, -L - i); j <= std::min(L, L - i); ++j)
          out[static_cast<std::size_t>(i + j + L)] += gi * r[static_cast<std::size_t>(j + L)];
      }
      g.swap(out);
    }
    cache[degree].assign(g.begin() + L, g.end());
  });
  return cache[degree];
}

}  // namespace

std::vector<double> prefilter_impulse_response(int degree, std::size_t m_max) {
  const auto& g = response(degree);
  std::vector<double> out(m_max + 1, 0.0);
  for (std::size_t m = 0; m <= m_max && m < g.size(); ++m) out[m] = static_cast<double>(g[m]);
  return out;
}

double prefilter_tail(int degree, std::size_t h) {
  const auto& g = response(degree);
  long double t = 0;
  for (std::size_t m = g.size(); m-- > h + 1;) t += std::fabs(g[m]);  // smallest terms first
  return static_cast<double>(2 * t);
}

double prefilter_norm(int degree) {
  const auto& g = response(degree);
  long double t = 0;
  for (std::size_t m = g.size(); m-- > 1;) t += std::fabs(g[m]);
  return static_cast<double>(std::fabs(g[0]) + 2 * t);
}

double chunk_bound(int degree, std::size_t rank, std::size_t halo) {
  if (rank == 0) throw Error("chunk_bound: rank must be at least 1");
  return static_cast<double>(rank) *
         std::pow(prefilter_norm(degree), static_cast<double>(rank - 1)) *
         prefilter_tail(degree, halo);
}

std::size_t prefilter_halo(int degree, std::size_t rank, double tolerance) {
  if (!(tolerance > 0))
    throw Error("prefilter_halo: the tolerance must be positive, got " + std::to_string(tolerance));
  check_degree(degree, 0, kMaxDegree);
  for (std::size_t h = 0; h + 1 < kLength; ++h)
    if (chunk_bound(degree, rank, h) <= tolerance) return h;
  throw Error("prefilter_halo: tolerance " + std::to_string(tolerance) +
              " is below what double precision can state");
}

template <class T>
std::size_t prefilter_halo(int degree, std::size_t rank) {
  return prefilter_halo(degree, rank, std::numeric_limits<T>::epsilon() / 2);
}

template <class T>
Array<T> prefilter_region(const Array<T>& f, const std::vector<std::size_t>& lo,
                          const std::vector<std::size_t>& hi, const PrefilterOptions& opt,
                          double cval, std::size_t halo) {
  check_degree(opt.degree, 0, kMaxDegree);
  const std::size_t rank = f.rank(), channels = f.channels();
  if (rank == 0) throw Error("prefilter_region: the array is empty");
  if (lo.size() != rank || hi.size() != rank)
    throw Error("prefilter_region: the region needs " + std::to_string(rank) + " bounds per side");
  for (std::size_t d = 0; d < rank; ++d)
    if (!(lo[d] < hi[d] && hi[d] <= f.dim(d)))
      throw Error("prefilter_region: region [" + std::to_string(lo[d]) + ", " +
                  std::to_string(hi[d]) + ") on axis " + std::to_string(d) +
                  " is empty or outside the array (" + std::to_string(f.dim(d)) + " samples)");
  // The window: the region plus the halo on each side, read from the mode's extension.
  std::vector<std::size_t> wdims(rank);
  std::vector<std::vector<long>> src(rank);  // per axis: source index, or -1 for cval
  const Boundary b = opt.boundary;
  for (std::size_t d = 0; d < rank; ++d) {
    wdims[d] = hi[d] - lo[d] + 2 * halo;
    const long n = static_cast<long>(f.dim(d));
    for (std::size_t i = 0; i < wdims[d]; ++i) {
      const long k = static_cast<long>(lo[d] + i) - static_cast<long>(halo);
      long s;
      if (b == Boundary::Nearest)
        s = k < 0 ? 0 : (k >= n ? n - 1 : k);
      else if (b == Boundary::GridConstant)
        s = (k < 0 || k >= n) ? -1 : k;
      else
        s = extend_index(k, n, prefilter_boundary(b));
      src[d].push_back(s);
    }
  }
  Array<T> w(wdims, channels);
  std::vector<std::size_t> at(rank, 0), stride(rank);
  {
    std::size_t s = channels;
    for (std::size_t d = rank; d-- > 0;) {
      stride[d] = s;
      s *= f.dim(d);
    }
  }
  for (std::size_t p = 0; p < w.points(); ++p) {
    bool inside = true;
    std::size_t off = 0;
    for (std::size_t d = 0; d < rank; ++d) {
      const long s = src[d][at[d]];
      if (s < 0) {
        inside = false;
        break;
      }
      off += static_cast<std::size_t>(s) * stride[d];
    }
    for (std::size_t c = 0; c < channels; ++c)
      w[p * channels + c] = inside ? f[off + c] : static_cast<T>(cval);
    for (std::size_t d = rank; d-- > 0;) {
      if (++at[d] < wdims[d]) break;
      at[d] = 0;
    }
  }
  // Any extension beyond the window keeps the bound (its values lie within the data's range);
  // mirror is the prefilter's cheapest exact start.
  PrefilterOptions wopt = opt;
  wopt.boundary = Boundary::Mirror;
  prefilter(w, wopt);
  // Crop the region.
  std::vector<std::size_t> rdims(rank);
  for (std::size_t d = 0; d < rank; ++d) rdims[d] = hi[d] - lo[d];
  Array<T> out(rdims, channels);
  std::vector<std::size_t> wstride(rank);
  {
    std::size_t s = channels;
    for (std::size_t d = rank; d-- > 0;) {
      wstride[d] = s;
      s *= wdims[d];
    }
  }
  std::fill(at.begin(), at.end(), 0);
  for (std::size_t p = 0; p < out.points(); ++p) {
    std::size_t off = 0;
    for (std::size_t d = 0; d < rank; ++d) off += (at[d] + halo) * wstride[d];
    for (std::size_t c = 0; c < channels; ++c) out[p * channels + c] = w[off + c];
    for (std::size_t d = rank; d-- > 0;) {
      if (++at[d] < rdims[d]) break;
      at[d] = 0;
    }
  }
  return out;
}

template std::size_t prefilter_halo<float>(int, std::size_t);
template std::size_t prefilter_halo<double>(int, std::size_t);
template Array<float> prefilter_region<float>(const Array<float>&, const std::vector<std::size_t>&,
                                              const std::vector<std::size_t>&,
                                              const PrefilterOptions&, double, std::size_t);
template Array<double> prefilter_region<double>(const Array<double>&,
                                                const std::vector<std::size_t>&,
                                                const std::vector<std::size_t>&,
                                                const PrefilterOptions&, double, std::size_t);

}  // namespace sv
