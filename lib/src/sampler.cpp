// The double-precision reference sampler (see sampler.h).
#include "splineview/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "parallel.h"
#include "splineview/bspline.h"
#include "splineview/interpolant.h"
#include "splineview/prefilter.h"
#include "tensor_sum.h"

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
    case Boundary::Mirror:
    case Boundary::Wrap:
    case Boundary::Constant: {
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
    case Boundary::Nearest:
      return k < 0 ? 0 : n - 1;
    case Boundary::GridConstant:
      return -1;
  }
  return 0;
}

std::size_t interpolation_pad(Boundary b, int degree) {
  check_degree(degree, 0, kMaxDegree);
  if ((b != Boundary::Nearest && b != Boundary::GridConstant) || degree < 2) return 0;
  // The largest |pole| decays slowest; the pad holds its tail down to half an ulp of double
  // (relative to the coefficient range), plus `degree` samples of margin for the spline's
  // support and the inverse filter's gain.
  const Poles p = bspline_poles(degree);
  double zmax = 0;
  for (int q = 0; q < p.count; ++q) zmax = std::max(zmax, std::fabs(p.z[q]));
  const double eps = std::numeric_limits<double>::epsilon() / 2;
  const double h = std::ceil(std::log(eps * (1 - zmax)) / std::log(zmax));
  return static_cast<std::size_t>(h) + static_cast<std::size_t>(degree) + 1;
}

double wrap_position(double x, long n) {
  if (x >= 0 && x <= static_cast<double>(n - 1)) return x;
  if (n <= 1) return 0;
  const double p = static_cast<double>(n - 1);
  if (x < 0) return x + p * (static_cast<double>(static_cast<long>(-x / p)) + 1);
  return x - p * static_cast<double>(static_cast<long>(x / p));
}

namespace {

// scipy.ndimage's position mappings for 'mirror' and 'reflect', with its arithmetic. Used for
// degree 0 only, where they decide ties (for degree >= 1 the spline is continuous and the
// mapping changes nothing): scipy maps the position first and then rounds it up on a tie
// (floor(x + 1/2)), and maps only positions below 0 or at N and beyond (not those in
// (N-1, N)). So with N samples, 'mirror' sends -1/2 to sample 1 and N - 1/2 to sample N-2
// (N - 1/2 is not mapped, rounds to N, which mirrors to N-2), and 'reflect' sends -3/2 to
// sample 1 and N + 1/2 to sample N-1 (where rounding first would give 0 and N-2).
double mirror_position(double x, long n) {
  if (x >= 0 && x < static_cast<double>(n)) return x;
  if (n <= 1) return 0;
  const double p = static_cast<double>(2 * n - 2);
  if (x < 0) {
    x += p * static_cast<double>(static_cast<long>(-x / p));
    return x <= static_cast<double>(1 - n) ? x + p : -x;
  }
  x -= p * static_cast<double>(static_cast<long>(x / p));
  return x >= static_cast<double>(n) ? p - x : x;
}

double reflect_position(double x, long n) {
  if (x >= 0 && x < static_cast<double>(n)) return x;
  if (n <= 1) return 0;
  const double p = static_cast<double>(2 * n);
  if (x < 0) {
    if (x < -p) x += p * static_cast<double>(static_cast<long>(-x / p));
    return x < static_cast<double>(-n) ? x + p : -x - 1;
  }
  x -= p * static_cast<double>(static_cast<long>(x / p));
  return x >= static_cast<double>(n) ? p - x - 1 : x;
}

}  // namespace

bool axis_weights(double x, long n, int degree, Boundary b, int derivative, double* w, long* k) {
  if (b == Boundary::Wrap) x = wrap_position(x, n);
  if (b == Boundary::Mirror && degree == 0) x = mirror_position(x, n);
  if (b == Boundary::Reflect && degree == 0) x = reflect_position(x, n);
  const bool inside = b != Boundary::Constant || (x >= 0 && x <= static_cast<double>(n - 1));
  const long first = bspline_weights<double>(degree, x, w, derivative);
  for (int j = 0; j <= degree; ++j) k[j] = extend_index(first + j, n, b);
  return inside;
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
      // GridConstant: taps outside get weight 0 here, and cval the weight they had:
      // cval * (prod_d sum_j w[d][j] - prod_d sum_{j inside} w[d][j]).
      double all = 1, inside = 1;
      bool outside = false;
      for (std::size_t d = 0; d < rank; ++d) {
        const int deriv = (static_cast<int>(d) == opt.derivative_axis) ? 1 : 0;
        long k[kMaxDegree + 1];
        if (!axis_weights(positions[p * rank + d], static_cast<long>(c.dim(d)), n, opt.boundary,
                          deriv, w[d], k))
          outside = true;
        double sum_all = 0, sum_in = 0;
        for (int j = 0; j < taps; ++j) {
          sum_all += w[d][j];
          if (k[j] < 0) {  // GridConstant, outside
            w[d][j] = 0;
            idx[d][j] = 0;
          } else {
            sum_in += w[d][j];
            idx[d][j] = k[j] * static_cast<long>(stride[d]);
          }
        }
        all *= sum_all;
        inside *= sum_in;
      }
      if (outside) {  // Constant: cval at any position outside [0, N-1] on some axis
        for (std::size_t ch = 0; ch < channels; ++ch)
          out[p * channels + ch] = opt.derivative_axis >= 0 ? 0.0 : opt.cval;
        continue;
      }
      double acc[kMaxChannels] = {0, 0, 0, 0};
      tensor_sum(c.data(), rank, taps, w, idx, channels, acc);
      if (opt.boundary == Boundary::GridConstant && opt.cval != 0)
        for (std::size_t ch = 0; ch < channels; ++ch) acc[ch] += opt.cval * (all - inside);
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

template <class T>
void interpolate(const Array<T>& f, const double* positions, std::size_t m, double* out,
                 const SamplerOptions& opt) {
  check_degree(opt.degree, 0, kMaxDegree);
  if (f.rank() == 0) throw Error("interpolate: the sample array is empty");
  // The padding for Nearest and GridConstant and the prefilter: sv::Interpolant (one place).
  const Interpolant<T> spline(f, opt, true);
  spline.sample(positions, m, out);
}

template <class T>
std::vector<double> interpolate(const Array<T>& f, const std::vector<double>& positions,
                                const SamplerOptions& opt) {
  if (f.rank() == 0) throw Error("interpolate: the sample array is empty");
  if (positions.size() % f.rank() != 0)
    throw Error("interpolate: " + std::to_string(positions.size()) +
                " coordinates is not a multiple of the array rank " + std::to_string(f.rank()));
  const std::size_t m = positions.size() / f.rank();
  std::vector<double> out(m * f.channels());
  interpolate(f, positions.data(), m, out.data(), opt);
  return out;
}

template void interpolate<float>(const Array<float>&, const double*, std::size_t, double*,
                                 const SamplerOptions&);
template void interpolate<double>(const Array<double>&, const double*, std::size_t, double*,
                                  const SamplerOptions&);
template std::vector<double> interpolate<float>(const Array<float>&, const std::vector<double>&,
                                                const SamplerOptions&);
template std::vector<double> interpolate<double>(const Array<double>&, const std::vector<double>&,
                                                 const SamplerOptions&);
template void sample<float>(const Array<float>&, const double*, std::size_t, double*,
                            const SamplerOptions&);
template void sample<double>(const Array<double>&, const double*, std::size_t, double*,
                             const SamplerOptions&);
template std::vector<double> sample<float>(const Array<float>&, const std::vector<double>&,
                                           const SamplerOptions&);
template std::vector<double> sample<double>(const Array<double>&, const std::vector<double>&,
                                            const SamplerOptions&);

}  // namespace sv
