// The double-precision reference sampler (see sampler.h).
#include "splineview/sampler.h"

#include <cmath>
#include <string>

#include "parallel.h"
#include "splineview/bspline.h"

namespace sv {

long extend_index(long k, long n, Boundary b) {
  if (k >= 0 && k < n) return k;
  switch (b) {
    case Boundary::Reflect: {
      const long p = 2 * n;
      long r = k % p;
      if (r < 0) r += p;
      return r < n ? r : p - 1 - r;
    }
    case Boundary::Mirror: {
      if (n == 1) return 0;
      const long p = 2 * n - 2;
      long r = k % p;
      if (r < 0) r += p;
      return r < n ? r : p - r;
    }
    case Boundary::Periodic: {
      long r = k % n;
      return r < 0 ? r + n : r;
    }
  }
  return 0;
}

template <class T>
void sample(const Array<T>& c, const double* positions, std::size_t m, double* out,
            const SamplerOptions& opt) {
  check_degree(opt.degree, 0, kMaxDegree);
  const std::size_t rank = c.rank(), channels = c.channels();
  if (rank == 0) throw Error("sample: the coefficient array is empty");
  if (opt.derivative_axis >= static_cast<int>(rank))
    throw Error("sample: derivative axis " + std::to_string(opt.derivative_axis) +
                " does not exist in a " + std::to_string(rank) + "-D array");
  if (opt.derivative_axis >= 0 && opt.degree == 0)
    throw Error("sample: degree 0 (nearest) has no derivative");
  // Positions beyond this are outside any sensible use and would overflow the index arithmetic.
  constexpr double kLimit = 1e12;
  for (std::size_t i = 0; i < m * rank; ++i)
    if (!(std::fabs(positions[i]) < kLimit))
      throw Error("sample: position " + std::to_string(i / rank) +
                  " has a non-finite or huge "
                  "coordinate (" +
                  std::to_string(positions[i]) + ")");

  const int n = opt.degree, taps = n + 1;
  const unsigned threads = detail::thread_count(opt.threads, m, 4096);
  detail::parallel_for(m, threads, [&](std::size_t begin, std::size_t end) {
    double w[kMaxRank][kMaxDegree + 1];
    long idx[kMaxRank][kMaxDegree + 1];
    std::size_t stride[kMaxRank];
    std::size_t s = channels;
    for (std::size_t d = rank; d-- > 0;) {
      stride[d] = s;
      s *= c.dim(d);
    }
    for (std::size_t p = begin; p < end; ++p) {
      for (std::size_t d = 0; d < rank; ++d) {
        const int deriv = (static_cast<int>(d) == opt.derivative_axis) ? 1 : 0;
        const long first = bspline_weights<double>(n, positions[p * rank + d], w[d], deriv);
        const long len = static_cast<long>(c.dim(d));
        for (int j = 0; j < taps; ++j)
          idx[d][j] = extend_index(first + j, len, opt.boundary) * static_cast<long>(stride[d]);
      }
      double acc[kMaxChannels] = {0, 0, 0, 0};
      const T* data = c.data();
      if (rank == 1) {
        for (int a = 0; a < taps; ++a)
          for (std::size_t ch = 0; ch < channels; ++ch) acc[ch] += w[0][a] * data[idx[0][a] + ch];
      } else if (rank == 2) {
        for (int a = 0; a < taps; ++a) {
          double row[kMaxChannels] = {0, 0, 0, 0};
          for (int b = 0; b < taps; ++b) {
            const T* e = data + idx[0][a] + idx[1][b];
            for (std::size_t ch = 0; ch < channels; ++ch) row[ch] += w[1][b] * e[ch];
          }
          for (std::size_t ch = 0; ch < channels; ++ch) acc[ch] += w[0][a] * row[ch];
        }
      } else {
        for (int a = 0; a < taps; ++a) {
          double plane[kMaxChannels] = {0, 0, 0, 0};
          for (int b = 0; b < taps; ++b) {
            double row[kMaxChannels] = {0, 0, 0, 0};
            for (int e = 0; e < taps; ++e) {
              const T* v = data + idx[0][a] + idx[1][b] + idx[2][e];
              for (std::size_t ch = 0; ch < channels; ++ch) row[ch] += w[2][e] * v[ch];
            }
            for (std::size_t ch = 0; ch < channels; ++ch) plane[ch] += w[1][b] * row[ch];
          }
          for (std::size_t ch = 0; ch < channels; ++ch) acc[ch] += w[0][a] * plane[ch];
        }
      }
      for (std::size_t ch = 0; ch < channels; ++ch) out[p * channels + ch] = acc[ch];
    }
  });
}

template <class T>
std::vector<double> sample(const Array<T>& c, const std::vector<double>& positions,
                           const SamplerOptions& opt) {
  if (c.rank() == 0) throw Error("sample: the coefficient array is empty");
  if (positions.size() % c.rank() != 0)
    throw Error("sample: " + std::to_string(positions.size()) +
                " coordinates is not a multiple of the array rank " + std::to_string(c.rank()));
  const std::size_t m = positions.size() / c.rank();
  std::vector<double> out(m * c.channels());
  sample(c, positions.data(), m, out.data(), opt);
  return out;
}

template void sample<float>(const Array<float>&, const double*, std::size_t, double*,
                            const SamplerOptions&);
template void sample<double>(const Array<double>&, const double*, std::size_t, double*,
                             const SamplerOptions&);
template std::vector<double> sample<float>(const Array<float>&, const std::vector<double>&,
                                           const SamplerOptions&);
template std::vector<double> sample<double>(const Array<double>&, const std::vector<double>&,
                                            const SamplerOptions&);

}  // namespace sv
