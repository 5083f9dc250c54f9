// Internal: how the FFD code (ffd.cpp, ffd_warp.cpp, registration.cpp) names axes and shapes
// in its messages.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace sv::detail {

// Axis names in array axis order: (z, y, x) in 3-D, (y, x) in 2-D.
inline const char* axis_name(std::size_t rank, std::size_t axis) {
  static const char* const names3[] = {"z", "y", "x"};
  static const char* const names2[] = {"y", "x"};
  return rank == 3 ? names3[axis] : names2[axis];
}

// "62 x 128 x 128".
inline std::string shape_text(const std::vector<std::size_t>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? " x " : "") + std::to_string(v[i]);
  return s;
}

}  // namespace sv::detail
