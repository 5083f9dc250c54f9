// Tests of the viewer's zoom/pan map (no window needed): zooming about a point keeps that
// point fixed, fitting centres the whole image, and the shader matrix agrees with the host map.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

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

}  // namespace
