// Properties of zoom and rotation: identity transforms reproduce the samples for the
// interpolating methods, quarter turns are exact index permutations, the direction is
// counter-clockwise as displayed, and linear data stays linear under linear zoom.
#include <gtest/gtest.h>

#include <cmath>

#include "splineview/resample.h"
#include "test_util.h"

namespace {

using sv::ArrayD;
using sv::Method;

const Method kAll[] = {Method::Nearest, Method::Linear,  Method::CubicUnfiltered,
                       Method::Cubic,   Method::Quintic, Method::Septic};

TEST(Resample, QuarterTurnIsNumpyRot90ForInterpolatingMethods) {
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const ArrayD f = svtest::random_array<double>({9, 9}, 3, seed);
  for (Method m : kAll) {
    if (m == Method::CubicUnfiltered) continue;  // does not interpolate
    const ArrayD r = sv::rotate(f, 90.0, {m});
    for (std::size_t i = 0; i < 9; ++i)
      for (std::size_t j = 0; j < 9; ++j)
        for (std::size_t c = 0; c < 3; ++c)
          ASSERT_NEAR(r.at2(i, j, c), f.at2(j, 8 - i, c), 1e-12) << sv::method_name(m);
  }
}

TEST(Resample, UnfilteredCubicBlursEvenWithoutMotion) {
  const ArrayD f = svtest::random_array<double>({16, 16}, 1, svtest::fresh_seed());
  const ArrayD r = sv::rotate(f, 0.0, {Method::CubicUnfiltered});
  double diff = 0;
  for (std::size_t i = 0; i < f.size(); ++i) diff = std::max(diff, std::fabs(r[i] - f[i]));
  EXPECT_GT(diff, 0.05);
}

TEST(Resample, ZoomByOneIsTheIdentityAndLinearZoomKeepsARamp) {
  const ArrayD f = svtest::random_array<double>({5, 6, 7}, 1, svtest::fresh_seed());
  for (Method m : {Method::Nearest, Method::Linear, Method::Cubic, Method::Septic}) {
    const ArrayD z = sv::zoom(f, 1.0, {m});
    for (std::size_t i = 0; i < f.size(); ++i) ASSERT_NEAR(z[i], f[i], 1e-12);
  }
  ArrayD ramp({1, 10}, 1);
  for (std::size_t x = 0; x < 10; ++x) ramp[x] = 0.1 * static_cast<double>(x);
  const ArrayD z = sv::zoom(ramp, 2.0, {Method::Linear});
  ASSERT_EQ(z.dims(), (std::vector<std::size_t>{2, 20}));
  for (std::size_t j = 1; j + 1 < 20; ++j)  // inside: output j sits at (j + 0.5) / 2 - 0.5
    EXPECT_NEAR(z.at2(0, j), 0.1 * ((static_cast<double>(j) + 0.5) / 2 - 0.5), 1e-15);
}

TEST(Resample, RotationIsCounterClockwiseAsDisplayed) {
  ArrayD f({11, 11}, 1);
  f.at2(5, 9) = 1;  // a dot right of the centre
  const ArrayD r = sv::rotate(f, 90.0, {Method::Nearest});
  EXPECT_EQ(r.at2(1, 5), 1.0);  // moves up (y down on screen)
}

TEST(Resample, BadArgumentsAreClearErrors) {
  const ArrayD f({4, 4}, 1);
  EXPECT_THROW(sv::zoom(f, 0.0), sv::Error);
  EXPECT_THROW(sv::zoom(f, -2.0), sv::Error);
  EXPECT_THROW(sv::rotate(ArrayD({3, 3, 3}, 1), 10.0), sv::Error);
  EXPECT_THROW(sv::parse_method("bicubic"), sv::Error);
}

}  // namespace
