// Tests of the viewer's zoom/pan map (no window needed): zooming about a point keeps that
// point fixed, fitting centres the whole image, and the shader matrix agrees with the host map.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "layout.h"
#include "view_transform.h"

namespace {

using sv::viewer::Rect;
using sv::viewer::ViewTransform;

TEST(ViewTransform, FitShowsTheWholeImageCentred) {
  const Rect area{360, 0, 840, 760};
  const ViewTransform v = ViewTransform::fit({600, 400}, area);
  EXPECT_DOUBLE_EQ(v.zoom(), 1.4);  // 840 / 600 < 760 / 400
  const glm::dvec2 top_left = v.window_position({-0.5, -0.5});
  const glm::dvec2 bottom_right = v.window_position({599.5, 399.5});
  EXPECT_NEAR(top_left.x, 360, 1e-9);
  EXPECT_NEAR(bottom_right.x, 1200, 1e-9);
  EXPECT_NEAR((top_left.y + bottom_right.y) / 2, 380, 1e-9);
}

TEST(ViewTransform, ZoomAboutKeepsThePointUnderTheCursor) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<double> u(0, 1000), f(0.2, 5);
  ViewTransform v = ViewTransform::centred({600, 400}, {0, 0, 1000, 800}, 2.0);
  for (int i = 0; i < 100; ++i) {
    const glm::dvec2 cursor(u(rng), u(rng));
    const glm::dvec2 before = v.image_position(cursor);
    const double factor = f(rng);
    const double expected_zoom =
        std::clamp(v.zoom() * factor, ViewTransform::kMinZoom, ViewTransform::kMaxZoom);
    v.zoom_about(cursor, factor);
    EXPECT_DOUBLE_EQ(v.zoom(), expected_zoom);
    const glm::dvec2 after = v.image_position(cursor);
    EXPECT_NEAR(after.x, before.x, 1e-9 * (1 + std::abs(before.x)));
    EXPECT_NEAR(after.y, before.y, 1e-9 * (1 + std::abs(before.y)));
  }
}

TEST(ViewTransform, PixelCentreConventionAtZoomOne) {
  // At zoom 1 with the image corner at the window corner, window pixel j shows sample j.
  const ViewTransform v = ViewTransform::centred({100, 50}, {0, 0, 100, 50}, 1.0);
  const glm::dvec2 p = v.image_position({7.5, 3.5});  // centre of window pixel (7, 3)
  EXPECT_DOUBLE_EQ(p.x, 7.0);
  EXPECT_DOUBLE_EQ(p.y, 3.0);
}

TEST(ViewTransform, ShaderMatrixMatchesTheHostMap) {
  ViewTransform v = ViewTransform::centred({600, 400}, {360, 0, 840, 760}, 6.0);
  v.zoom_about({700.25, 123.5}, 1.37);
  v.pan_by({13.5, -7.25});
  const double fb_height = 760;
  const glm::mat3 m = v.frag_to_image(fb_height);
  for (const glm::dvec2 frag :
       {glm::dvec2(360.5, 0.5), glm::dvec2(1199.5, 759.5), glm::dvec2(777.5, 301.5)}) {
    const glm::vec3 p = m * glm::vec3(static_cast<float>(frag.x), static_cast<float>(frag.y), 1);
    // gl_FragCoord has its origin at the bottom left; window coordinates at the top left.
    const glm::dvec2 expected = v.image_position({frag.x, fb_height - frag.y});
    EXPECT_NEAR(p.x, expected.x, 1e-3);
    EXPECT_NEAR(p.y, expected.y, 1e-3);
  }
}

TEST(ViewTransform, RotationIsCounterClockwiseAsDisplayedAndKeepsTheCentreFixed) {
  const Rect area{0, 0, 800, 600};
  ViewTransform v = ViewTransform::centred({600, 400}, area, 2.0);
  const glm::dvec2 centre = v.image_position(area.centre());
  v.rotate_about(area.centre(), std::acos(-1.0) / 2);  // 90 degrees
  const glm::dvec2 after = v.image_position(area.centre());
  EXPECT_NEAR(after.x, centre.x, 1e-9);
  EXPECT_NEAR(after.y, centre.y, 1e-9);
  // Counter-clockwise on a y-down screen: the image's +x axis now points up the screen.
  const glm::dvec2 right = v.window_position(centre + glm::dvec2(10, 0));
  EXPECT_NEAR(right.x, area.centre().x, 1e-9);
  EXPECT_NEAR(right.y, area.centre().y - 20, 1e-9);
}

TEST(ViewTransform, RotatedShaderMatrixAndShiftedCopiesMatchTheHostMap) {
  ViewTransform v = ViewTransform::looking_at({123.25, 45.5}, {0, 0, 418, 378}, 3.7, 0.61);
  v.zoom_about({100.5, 33.25}, 1.7);
  const glm::dvec2 origin(364, 382);
  const ViewTransform shifted = v.shifted(origin);
  const double fb_height = 760;
  const glm::mat3 m = shifted.frag_to_image(fb_height);
  for (const glm::dvec2 frag :
       {glm::dvec2(364.5, 0.5), glm::dvec2(781.5, 377.5), glm::dvec2(500.5, 101.5)}) {
    const glm::vec3 p = m * glm::vec3(static_cast<float>(frag.x), static_cast<float>(frag.y), 1);
    const glm::dvec2 window(frag.x, fb_height - frag.y);
    const glm::dvec2 expected = v.image_position(window - origin);
    EXPECT_NEAR(p.x, expected.x, 1e-3);
    EXPECT_NEAR(p.y, expected.y, 1e-3);
    const glm::dvec2 same = shifted.image_position(window);
    EXPECT_NEAR(same.x, expected.x, 1e-9);
    EXPECT_NEAR(same.y, expected.y, 1e-9);
  }
}

TEST(Layout, CellsAreEqualDisjointAndInsideTheArea) {
  using sv::viewer::Layout;
  const Rect area{360, 0, 841, 761};
  for (Layout l : {Layout::Single, Layout::Pair, Layout::Grid, Layout::Wipe}) {
    const std::vector<Rect> cells = sv::viewer::layout_cells(l, area);
    ASSERT_EQ(static_cast<int>(cells.size()), l == Layout::Wipe ? 1 : sv::viewer::method_count(l));
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const Rect& c = cells[i];
      EXPECT_EQ(c.width, cells[0].width);
      EXPECT_EQ(c.height, cells[0].height);
      EXPECT_EQ(c.x, std::floor(c.x));
      EXPECT_EQ(c.y, std::floor(c.y));
      EXPECT_GE(c.x, area.x);
      EXPECT_GE(c.y, area.y);
      EXPECT_LE(c.x + c.width, area.x + area.width);
      EXPECT_LE(c.y + c.height, area.y + area.height);
      for (std::size_t j = 0; j < i; ++j) {
        const Rect& d = cells[j];
        const bool apart = c.x >= d.x + d.width || d.x >= c.x + c.width || c.y >= d.y + d.height ||
                           d.y >= c.y + c.height;
        EXPECT_TRUE(apart) << "cells " << j << " and " << i << " overlap";
      }
    }
  }
  EXPECT_EQ(sv::viewer::parse_layout("grid"), Layout::Grid);
  EXPECT_FALSE(sv::viewer::parse_layout("quad").has_value());
}

}  // namespace
