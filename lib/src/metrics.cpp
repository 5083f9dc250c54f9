// Error metrics (max abs, RMS, SSE, PSNR) with an optional per-point mask; non-finite values
// are counted apart (see metrics.h).
#include "splineview/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace sv {

template <class A, class B>
ErrorStats compare(const Array<A>& a, const Array<B>& b, const std::vector<unsigned char>& mask,
                   double peak) {
  if (a.dims() != b.dims() || a.channels() != b.channels())
    throw Error("compare: shapes differ: " + describe_shape(a.dims(), a.channels()) + " vs " +
                describe_shape(b.dims(), b.channels()));
  if (!mask.empty() && mask.size() != a.points())
    throw Error("compare: the mask has " + std::to_string(mask.size()) + " entries for " +
                std::to_string(a.points()) + " points");
  if (!(peak > 0)) throw Error("compare: the PSNR peak must be positive");
  ErrorStats s;
  const std::size_t ch = a.channels();
  std::size_t selected = 0;
  // The point count (a product over the axes) and the raw data once, not per point.
  const std::size_t points = a.points();
  const A* da = a.data();
  const B* db = b.data();
  const unsigned char* m = mask.empty() ? nullptr : mask.data();
  for (std::size_t p = 0; p < points; ++p) {
    if (m && !m[p]) continue;
    for (std::size_t c = 0; c < ch; ++c) {
      const std::size_t i = p * ch + c;
      const double x = static_cast<double>(da[i]), y = static_cast<double>(db[i]);
      ++selected;
      const bool fx = std::isfinite(x), fy = std::isfinite(y);
      if (fx && fy) {
        const double d = x - y;
        s.sse += d * d;
        s.max_abs = std::max(s.max_abs, std::fabs(d));
        ++s.count;
        continue;
      }
      if (!fx && s.nonfinite_a++ == 0) s.first_nonfinite_a = i;
      if (!fy && s.nonfinite_b++ == 0) s.first_nonfinite_b = i;
      // Both the same infinity: equal. Anything else (NaN on either side, inf against a
      // finite value or the other infinity) is a difference without a size.
      if (!(std::isinf(x) && x == y)) ++s.nonfinite_mismatch;
    }
  }
  if (selected == 0) throw Error("compare: the mask selects no points");
  const double mse = s.count > 0 ? s.sse / static_cast<double>(s.count) : 0.0;
  s.rms = std::sqrt(mse);
  if (s.nonfinite_mismatch > 0)
    s.psnr = -std::numeric_limits<double>::infinity();
  else
    s.psnr =
        mse > 0 ? 10.0 * std::log10(peak * peak / mse) : std::numeric_limits<double>::infinity();
  return s;
}

std::vector<unsigned char> disc_mask(std::size_t height, std::size_t width, double fraction) {
  std::vector<unsigned char> m(height * width, 0);
  const double cy = (static_cast<double>(height) - 1) / 2,
               cx = (static_cast<double>(width) - 1) / 2;
  const double r = fraction * static_cast<double>(std::min(height, width));
  for (std::size_t y = 0; y < height; ++y)
    for (std::size_t x = 0; x < width; ++x) {
      const double dy = static_cast<double>(y) - cy, dx = static_cast<double>(x) - cx;
      m[y * width + x] = (dy * dy + dx * dx <= r * r) ? 1 : 0;
    }
  return m;
}

template ErrorStats compare<float, float>(const ArrayF&, const ArrayF&,
                                          const std::vector<unsigned char>&, double);
template ErrorStats compare<double, double>(const ArrayD&, const ArrayD&,
                                            const std::vector<unsigned char>&, double);
template ErrorStats compare<float, double>(const ArrayF&, const ArrayD&,
                                           const std::vector<unsigned char>&, double);
template ErrorStats compare<double, float>(const ArrayD&, const ArrayF&,
                                           const std::vector<unsigned char>&, double);

}  // namespace sv
