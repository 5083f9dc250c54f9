// Error statistics shared by the GPU test suites (GL and CUDA): a GPU result against the double
// reference, and the ranges the bounds scale with.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "splineview/array.h"

namespace svtest {

// max |gpu - ref| over all values; a NaN anywhere makes the result NaN (fails every bound).
inline double max_abs_difference(const std::vector<float>& gpu, const std::vector<double>& ref) {
  EXPECT_EQ(gpu.size(), ref.size());
  double m = 0;
  for (std::size_t i = 0; i < std::min(gpu.size(), ref.size()); ++i) {
    const double d = std::fabs(static_cast<double>(gpu[i]) - ref[i]);
    if (!(d <= m)) m = d;  // NaN propagates as the maximum
  }
  return m;
}

// max - min over all values (1 when constant).
inline double value_range(const sv::ArrayF& a) {
  const auto [lo, hi] = std::minmax_element(a.vec().begin(), a.vec().end());
  const double r = static_cast<double>(*hi) - static_cast<double>(*lo);
  return r > 0 ? r : 1.0;
}

// max |a| over all values.
inline double max_abs(const sv::ArrayF& a) {
  double m = 0;
  for (float v : a.vec()) m = std::max(m, std::fabs(static_cast<double>(v)));
  return m;
}

}  // namespace svtest
