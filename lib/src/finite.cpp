// Counting and locating non-finite values; see finite.h.
#include "splineview/finite.h"

#include <cmath>

namespace sv {

template <class T>
NonFinite scan_nonfinite(const T* data, std::size_t n) {
  NonFinite nf;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isfinite(data[i])) continue;
    if (nf.count++ == 0) {
      nf.first = i;
      nf.first_value = static_cast<double>(data[i]);
    }
  }
  return nf;
}

template NonFinite scan_nonfinite<float>(const float*, std::size_t);
template NonFinite scan_nonfinite<double>(const double*, std::size_t);

std::vector<std::size_t> unravel_index(const std::vector<std::size_t>& dims, std::size_t channels,
                                       std::size_t flat, bool with_channel) {
  std::vector<std::size_t> index(dims.size() + (with_channel ? 1 : 0), 0);
  const std::size_t ch = channels == 0 ? 1 : channels;
  if (with_channel) index.back() = flat % ch;
  std::size_t point = flat / ch;
  for (std::size_t d = dims.size(); d-- > 0;) {
    const std::size_t n = dims[d] == 0 ? 1 : dims[d];
    index[d] = point % n;
    point /= n;
  }
  return index;
}

std::string format_index(const std::vector<std::size_t>& index) {
  std::string s = "[";
  for (std::size_t i = 0; i < index.size(); ++i) s += (i ? ", " : "") + std::to_string(index[i]);
  return s + "]";
}

const char* nonfinite_name(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+inf" : "-inf";
  return "finite";
}

std::string describe_nonfinite(const NonFinite& nf, const std::vector<std::size_t>& dims,
                               std::size_t channels, bool with_channel) {
  std::string s =
      std::to_string(nf.count) + (nf.count == 1 ? " non-finite value" : " non-finite values");
  if (nf.count == 0) return s;
  return s + " (" + nonfinite_name(nf.first_value) + " at " +
         format_index(unravel_index(dims, channels, nf.first, with_channel)) + " first)";
}

}  // namespace sv
