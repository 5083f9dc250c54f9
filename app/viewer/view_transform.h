// Zoom, pan and rotation of the image view: the map between window pixels and image
// positions, kept free of GL and UI so that it can be tested on its own.
//
// Window coordinates w: framebuffer pixels, origin at the top-left corner, x right, y down
// (pixel j covers [j, j+1)). Image positions p: sample k at position k, x right, y down, so the
// image covers [-0.5, N - 0.5] on each axis. The view is w = zoom * R (p + 0.5) + pan, where R
// turns the image counter-clockwise as displayed by the angle (the convention of sv::rotate);
// at angle 0 it is the identity.
#pragma once

#include <glm/glm.hpp>

namespace sv::viewer {

// A rectangle in window coordinates (top-left origin).
struct Rect {
  double x = 0, y = 0, width = 0, height = 0;
  glm::dvec2 centre() const { return {x + width / 2, y + height / 2}; }
  bool contains(const glm::dvec2& w) const {
    return w.x >= x && w.y >= y && w.x < x + width && w.y < y + height;
  }
};

class ViewTransform {
 public:
  static constexpr double kMinZoom = 1.0 / 64;
  static constexpr double kMaxZoom = 1024.0;

  ViewTransform() = default;
  // Whole image of `image_size` (width, height in samples) fitted into `area`, centred.
  static ViewTransform fit(const glm::dvec2& image_size, const Rect& area);
  // Image centre at the centre of `area`, at the given zoom (clamped to the zoom range).
  static ViewTransform centred(const glm::dvec2& image_size, const Rect& area, double zoom);
  // Image position `target` at the centre of `area`, at the given zoom (clamped) and angle
  // (radians).
  static ViewTransform looking_at(const glm::dvec2& target, const Rect& area, double zoom,
                                  double angle = 0.0);

  double zoom() const { return zoom_; }
  double angle() const { return angle_; }  // radians, counter-clockwise as displayed
  const glm::dvec2& pan() const { return pan_; }

  glm::dvec2 image_position(const glm::dvec2& window) const;
  glm::dvec2 window_position(const glm::dvec2& image) const;

  // Multiplies the zoom by `factor` (result clamped to the zoom range) keeping the image point
  // under `window` fixed.
  void zoom_about(const glm::dvec2& window, double factor);
  void pan_by(const glm::dvec2& delta_window) { pan_ += delta_window; }
  // Sets the angle (radians) keeping the image point under `window` fixed.
  void rotate_about(const glm::dvec2& window, double angle);
  // The same view for window coordinates whose origin is at `origin` of these ones: views
  // that share one transform in cell-local coordinates are drawn through their shifted copies.
  ViewTransform shifted(const glm::dvec2& origin) const {
    ViewTransform v = *this;
    v.pan_ += origin;
    return v;
  }

  // Matrix for shaders/view.frag: gl_FragCoord.xy (origin bottom left) -> image position, for
  // a framebuffer `framebuffer_height` pixels high.
  glm::mat3 frag_to_image(double framebuffer_height) const;

 private:
  // R (p + 0.5) and its inverse, for the current angle.
  glm::dvec2 turn(const glm::dvec2& v) const;
  glm::dvec2 unturn(const glm::dvec2& v) const;

  double zoom_ = 1.0;         // window pixels per image sample
  double angle_ = 0.0;        // radians, counter-clockwise as displayed
  glm::dvec2 pan_{0.0, 0.0};  // window position of the image corner (position -0.5, -0.5)
};

}  // namespace sv::viewer
