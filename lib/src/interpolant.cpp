// sv::Interpolant (interpolant.h): padding and prefiltering once, sampling in blocks.
#include "splineview/interpolant.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "splineview/error.h"
#include "splineview/prefilter.h"

namespace sv {

namespace {

// `f` with `pad` samples added on each side of every axis: edge values (Nearest) or cval.
template <class T>
Array<T> padded(const Array<T>& f, std::size_t pad, bool edge, double cval) {
  const std::size_t rank = f.rank(), channels = f.channels();
  std::vector<std::size_t> dims(rank);
  for (std::size_t d = 0; d < rank; ++d) dims[d] = f.dim(d) + 2 * pad;
  Array<T> c(dims, channels);
  std::vector<std::size_t> at(rank, 0);
  const long lpad = static_cast<long>(pad);
  for (std::size_t p = 0; p < c.points(); ++p) {
    std::size_t src = 0;
    bool in = true;
    for (std::size_t d = 0; d < rank; ++d) {
      const long len = static_cast<long>(f.dim(d));
      long k = static_cast<long>(at[d]) - lpad;
      if (k < 0 || k >= len) {
        in = false;
        k = k < 0 ? 0 : len - 1;
      }
      src = src * f.dim(d) + static_cast<std::size_t>(k);
    }
    for (std::size_t ch = 0; ch < channels; ++ch)
      c[p * channels + ch] = (in || edge) ? f[src * channels + ch] : static_cast<T>(cval);
    for (std::size_t d = rank; d-- > 0;) {
      if (++at[d] < dims[d]) break;
      at[d] = 0;
    }
  }
  return c;
}

constexpr std::size_t kShiftBlock = std::size_t{1}
                                    << 16;  // positions shifted at a time for a padded spline

}  // namespace

template <class T>
Interpolant<T>::Interpolant(Array<T> samples, const SamplerOptions& opt, bool prefilter_samples)
    : opt_(opt) {
  if (samples.rank() == 0) throw Error("interpolate: the sample array is empty");
  if (!prefilter_samples || opt.degree < 2) {
    coefficients_ = std::move(samples);
    return;
  }
  pad_ = interpolation_pad(opt.boundary, opt.degree);
  const PrefilterOptions popt{opt.degree, opt.boundary, opt.threads};
  if (pad_ == 0) {
    coefficients_ = std::move(samples);
  } else {
    coefficients_ = padded(samples, pad_, opt.boundary == Boundary::Nearest, opt.cval);
    samples = Array<T>();  // the caller's copy is no longer needed: free it before filtering
  }
  prefilter(coefficients_, popt);
}

template <class T>
void Interpolant<T>::sample(const double* positions, std::size_t m, double* out) const {
  if (pad_ == 0) {
    sv::sample(coefficients_, positions, m, out, opt_);
    return;
  }
  const std::size_t rank = coefficients_.rank(), channels = coefficients_.channels();
  const double shift = static_cast<double>(pad_);
  std::vector<double> shifted(std::min(m, kShiftBlock) * rank);
  for (std::size_t start = 0; start < m; start += kShiftBlock) {
    const std::size_t n = std::min(kShiftBlock, m - start);
    for (std::size_t i = 0; i < n * rank; ++i) shifted[i] = positions[start * rank + i] + shift;
    sv::sample(coefficients_, shifted.data(), n, out + start * channels, opt_);
  }
}

template class Interpolant<float>;
template class Interpolant<double>;

}  // namespace sv
