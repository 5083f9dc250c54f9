// Tests of the window/level arithmetic every mode uses (display_window.h), without a window:
// the drag goes in the documented directions (right widens the window, down raises the level,
// so the image gets darker) at the documented speed (500 pixels span the data range); the map
// the view shader receives shows raw values as the window says (low black, high white, clamped
// beyond); and the automatic window of a normalised image is the identity.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "display_window.h"

namespace {

using sv::viewer::DataScale;
using sv::viewer::display_grey;
using sv::viewer::display_map;
using sv::viewer::drag_window_level;
using sv::viewer::window_drag_per_pixel;
using sv::viewer::WindowLevel;

// The grey a window gives a raw value, straight from the definition, in double.
double expected_grey(double raw, double low, double high) {
  return std::clamp((raw - low) / (high - low), 0.0, 1.0);
}

TEST(DisplayWindow, RangeAndWidthLevelAreTheSameWindow) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<double> value(-5000.0, 70000.0), width(1e-3, 70000.0);
  for (int i = 0; i < 1000; ++i) {
    const double low = value(rng), high = low + width(rng);
    const WindowLevel wl = WindowLevel::from_range(low, high);
    EXPECT_NEAR(wl.low(), low, 1e-9 * (std::abs(low) + high - low));
    EXPECT_NEAR(wl.high(), high, 1e-9 * (std::abs(high) + high - low));
    EXPECT_NEAR(wl.window, high - low, 1e-9 * (high - low));
  }
}

TEST(DisplayWindow, DragRightWidensDownRaisesTheLevel) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<double> level(-1000.0, 5000.0), window(10.0, 5000.0),
      pixels(1.0, 300.0);
  const double per_pixel = window_drag_per_pixel(0.0, 4095.0);
  for (int i = 0; i < 200; ++i) {
    const WindowLevel wl{window(rng), level(rng)};
    const double d = pixels(rng);
    // Right: wider (less contrast), same level.
    const WindowLevel right = drag_window_level(wl, {d, 0.0}, per_pixel);
    EXPECT_GT(right.window, wl.window);
    EXPECT_EQ(right.level, wl.level);
    // Left: narrower (more contrast), never below the minimum.
    const WindowLevel left = drag_window_level(wl, {-d, 0.0}, per_pixel);
    EXPECT_LT(left.window, wl.window);
    EXPECT_GE(left.window, sv::viewer::kMinWindow);
    // Down (y grows downwards): a higher level, so a value inside the window gets darker.
    const WindowLevel down = drag_window_level(wl, {0.0, d}, per_pixel);
    EXPECT_GT(down.level, wl.level);
    EXPECT_EQ(down.window, wl.window);
    const double v = wl.level;  // mid grey before the drag
    EXPECT_LT(expected_grey(v, down.low(), down.high()), expected_grey(v, wl.low(), wl.high()));
    // Up: brighter.
    const WindowLevel up = drag_window_level(wl, {0.0, -d}, per_pixel);
    EXPECT_GT(expected_grey(v, up.low(), up.high()), expected_grey(v, wl.low(), wl.high()));
  }
}

TEST(DisplayWindow, FiveHundredPixelsSpanTheDataRange) {
  const double lo = -1024.0, hi = 3071.0;  // CT-like
  const double per_pixel = window_drag_per_pixel(lo, hi);
  const WindowLevel wl{400.0, 40.0};
  const WindowLevel right = drag_window_level(wl, {500.0, 0.0}, per_pixel);
  EXPECT_NEAR(right.window - wl.window, hi - lo, 1e-9);
  const WindowLevel down = drag_window_level(wl, {0.0, 250.0}, per_pixel);
  EXPECT_NEAR(down.level - wl.level, (hi - lo) / 2, 1e-9);
  // A dragged-shut window stays open.
  const WindowLevel shut = drag_window_level(wl, {-1e6, 0.0}, per_pixel);
  EXPECT_EQ(shut.window, sv::viewer::kMinWindow);
}

TEST(DisplayWindow, ShaderMapShowsRawValuesAsTheWindowSays) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 200; ++trial) {
    // Textures normalised by some auto window [a, a + s]; the user's window [low, high].
    const DataScale scale{-1000.0 + 3000.0 * u(rng), 10.0 + 60000.0 * u(rng)};
    const double low = scale.offset + scale.scale * (u(rng) - 0.5);
    const double high = low + scale.scale * (0.01 + 2.0 * u(rng));
    const WindowLevel wl = WindowLevel::from_range(low, high);
    const sv::viewer::DisplayMap map = display_map(wl, scale);
    // Low is black, high white.
    EXPECT_NEAR(display_grey(static_cast<float>(scale.normalised(low)), map), 0.0, 1e-4);
    EXPECT_NEAR(display_grey(static_cast<float>(scale.normalised(high)), map), 1.0, 1e-4);
    for (int i = 0; i < 50; ++i) {
      const double raw = low - 0.5 * (high - low) + 2.0 * (high - low) * u(rng);
      const float v = static_cast<float>(scale.normalised(raw));
      // Float arithmetic in the shader: a few ulp of the normalised value times the gain.
      const double tol = 1e-5 * (1.0 + std::abs(static_cast<double>(v))) * map.gain + 1e-6;
      EXPECT_NEAR(display_grey(v, map), expected_grey(raw, low, high), tol)
          << "raw " << raw << " window " << low << ".." << high;
    }
  }
}

TEST(DisplayWindow, TheAutomaticWindowOfNormalisedDataIsTheIdentity) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int i = 0; i < 100; ++i) {
    const DataScale scale{-2000.0 + 4000.0 * u(rng), 1.0 + 65535.0 * u(rng)};
    const WindowLevel automatic = WindowLevel::from_range(scale.offset, scale.offset + scale.scale);
    const sv::viewer::DisplayMap map = display_map(automatic, scale);
    EXPECT_NEAR(map.low, 0.0f, 1e-6f);
    EXPECT_NEAR(map.gain, 1.0f, 1e-6f);
  }
  // The default map is exactly the identity on [0, 1] and clamps beyond.
  const sv::viewer::DisplayMap identity;
  EXPECT_EQ(display_grey(0.3f, identity), 0.3f);
  EXPECT_EQ(display_grey(-0.2f, identity), 0.0f);
  EXPECT_EQ(display_grey(1.7f, identity), 1.0f);
}

}  // namespace
