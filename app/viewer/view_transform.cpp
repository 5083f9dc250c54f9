// Zoom, pan and rotation of the image view (see view_transform.h).
#include "view_transform.h"

#include <algorithm>
#include <cmath>

namespace sv::viewer {

ViewTransform ViewTransform::fit(const glm::dvec2& image_size, const Rect& area) {
  const double zoom = std::min(area.width / image_size.x, area.height / image_size.y);
  return centred(image_size, area, zoom);
}

ViewTransform ViewTransform::centred(const glm::dvec2& image_size, const Rect& area, double zoom) {
  // The image covers [-0.5, N - 0.5]: its centre is at position N / 2 - 0.5.
  return looking_at(image_size / 2.0 - 0.5, area, zoom);
}

ViewTransform ViewTransform::looking_at(const glm::dvec2& target, const Rect& area, double zoom,
                                        double angle) {
  ViewTransform v;
  v.zoom_ = std::clamp(zoom, kMinZoom, kMaxZoom);
  v.angle_ = angle;
  v.pan_ = area.centre() - v.zoom_ * v.turn(target + 0.5);
  return v;
}

// Counter-clockwise on a y-down screen: the x axis (1, 0) goes to (cos a, -sin a).
glm::dvec2 ViewTransform::turn(const glm::dvec2& v) const {
  if (angle_ == 0.0) return v;  // exact: the unrotated view keeps its exact pixel grid
  const double c = std::cos(angle_), s = std::sin(angle_);
  return {c * v.x + s * v.y, -s * v.x + c * v.y};
}

glm::dvec2 ViewTransform::unturn(const glm::dvec2& v) const {
  if (angle_ == 0.0) return v;
  const double c = std::cos(angle_), s = std::sin(angle_);
  return {c * v.x - s * v.y, s * v.x + c * v.y};
}

glm::dvec2 ViewTransform::image_position(const glm::dvec2& window) const {
  return unturn((window - pan_) / zoom_) - 0.5;
}

glm::dvec2 ViewTransform::window_position(const glm::dvec2& image) const {
  return zoom_ * turn(image + 0.5) + pan_;
}

void ViewTransform::zoom_about(const glm::dvec2& window, double factor) {
  const double new_zoom = std::clamp(zoom_ * factor, kMinZoom, kMaxZoom);
  // Keep (window - pan) / zoom constant; the rotation commutes with the scaling.
  pan_ = window - (window - pan_) * (new_zoom / zoom_);
  zoom_ = new_zoom;
}

void ViewTransform::rotate_about(const glm::dvec2& window, double angle) {
  const glm::dvec2 fixed = image_position(window);
  angle_ = angle;
  pan_ = window - zoom_ * turn(fixed + 0.5);
}

glm::mat3 ViewTransform::frag_to_image(double framebuffer_height) const {
  // w = (fx, H - fy);  d = (w - pan) / zoom;  p = R^-1 d - 0.5 with
  // R^-1 d = (c dx - s dy, s dx + c dy).
  const double s = std::sin(angle_) / zoom_, c = std::cos(angle_) / zoom_;
  const glm::dvec2 origin = image_position({0.0, framebuffer_height});  // fragment (0, 0)
  glm::dmat3 m(1.0);
  m[0] = glm::dvec3(c, s, 0.0);   // column 0: d p / d fx
  m[1] = glm::dvec3(s, -c, 0.0);  // column 1: d p / d fy (window y = H - fy)
  m[2] = glm::dvec3(origin.x, origin.y, 1.0);
  return glm::mat3(m);
}

}  // namespace sv::viewer
