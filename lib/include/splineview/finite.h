// Non-finite values (NaN, +inf, -inf) in arrays: how many, where the first one is, and the one
// sentence every splinetool command uses to refuse them ("3 non-finite values (NaN at [0, 5, 7]
// first)"). The prefilter is a recursion over whole lines, so one NaN spreads along every line
// through it; the commands therefore refuse non-finite data unless asked (--allow-nonfinite),
// and sv::compare reports them separately (metrics.h).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "splineview/array.h"

namespace sv {

struct NonFinite {
  std::size_t count = 0;   // scalars that are NaN, +inf or -inf
  std::size_t first = 0;   // flat scalar index of the first one (meaningful when count > 0)
  double first_value = 0;  // that value: NaN, +inf or -inf
};

// Scans n scalars (one pass, no allocation).
template <class T>
NonFinite scan_nonfinite(const T* data, std::size_t n);
template <class T>
NonFinite scan_nonfinite(const Array<T>& a) {
  return scan_nonfinite(a.data(), a.size());
}

// The multi-index of scalar `flat` of an array of `dims` with `channels` interleaved channels,
// in array order (z, y, x), followed by the channel index when `with_channel` is true.
std::vector<std::size_t> unravel_index(const std::vector<std::size_t>& dims, std::size_t channels,
                                       std::size_t flat, bool with_channel);
// "[0, 5, 7]".
std::string format_index(const std::vector<std::size_t>& index);
// "NaN", "+inf" or "-inf" ("finite" for anything else).
const char* nonfinite_name(double v);
// "3 non-finite values (NaN at [0, 5, 7] first)"; "1 non-finite value (+inf at [4] first)".
// with_channel: the index names the channel too (arrays stored with a channel axis).
std::string describe_nonfinite(const NonFinite& nf, const std::vector<std::size_t>& dims,
                               std::size_t channels, bool with_channel);

}  // namespace sv
