// Zoom and pan of the image view (see view_transform.h).
#include "view_transform.h"

#include <algorithm>

namespace sv::viewer {

ViewTransform ViewTransform::fit(const glm::dvec2& image_size, const Rect& area) {
  const double zoom = std::min(area.width / image_size.x, area.height / image_size.y);
  return centred(image_size, area, zoom);
}

ViewTransform ViewTransform::centred(const glm::dvec2& image_size, const Rect& area, double zoom) {
  // The image covers [-0.5, N - 0.5]: its centre is at position N / 2 - 0.5.
  return looking_at(image_size / 2.0 - 0.5, area, zoom);
}

ViewTransform ViewTransform::looking_at(const glm::dvec2& target, const Rect& area, double zoom) {
  ViewTransform v;
  v.zoom_ = std::clamp(zoom, kMinZoom, kMaxZoom);
  v.pan_ = area.centre() - v.zoom_ * (target + 0.5);
  return v;
}

glm::dvec2 ViewTransform::image_position(const glm::dvec2& window) const {
  return (window - pan_) / zoom_ - 0.5;
}

glm::dvec2 ViewTransform::window_position(const glm::dvec2& image) const {
  return zoom_ * (image + 0.5) + pan_;
}

void ViewTransform::zoom_about(const glm::dvec2& window, double factor) {
  const double new_zoom = std::clamp(zoom_ * factor, kMinZoom, kMaxZoom);
  // Keep (window - pan) / zoom constant.
  pan_ = window - (window - pan_) * (new_zoom / zoom_);
  zoom_ = new_zoom;
}

glm::mat3 ViewTransform::frag_to_image(double framebuffer_height) const {
  // w = (fx, H - fy);  p = (w - pan) / zoom - 0.5.
  const double s = 1.0 / zoom_;
  glm::dmat3 m(1.0);
  m[0] = glm::dvec3(s, 0.0, 0.0);   // column 0: d p / d fx
  m[1] = glm::dvec3(0.0, -s, 0.0);  // column 1: d p / d fy
  m[2] = glm::dvec3(-pan_.x * s - 0.5, (framebuffer_height - pan_.y) * s - 0.5, 1.0);
  return glm::mat3(m);
}

}  // namespace sv::viewer
