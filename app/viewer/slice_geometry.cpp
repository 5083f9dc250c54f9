// The slice planes, their views and the crosshair (see slice_geometry.h).
#include "slice_geometry.h"

#include <algorithm>
#include <cmath>

namespace sv::viewer {
namespace {

glm::dvec3 unit_axis(int axis, bool reversed) {
  glm::dvec3 v(0.0);
  v[axis] = reversed ? -1.0 : 1.0;
  return v;
}

// Rotation of v about the unit axis k by angle a (Rodrigues).
glm::dvec3 rotate(const glm::dvec3& v, const glm::dvec3& k, double a) {
  const double c = std::cos(a), s = std::sin(a);
  return v * c + glm::cross(k, v) * s + k * glm::dot(k, v) * (1.0 - c);
}

}  // namespace

const char* plane_name(Plane p) {
  switch (p) {
    case Plane::Axial:
      return "axial";
    case Plane::Coronal:
      return "coronal";
    case Plane::Sagittal:
      return "sagittal";
    case Plane::Oblique:
      return "oblique";
  }
  return "?";
}

Orientation Orientation::file_order() {
  Orientation o;
  o.planes[0] = {2, false, 1, false};  // axial: x right, y down
  o.planes[1] = {2, false, 0, true};   // coronal: x right, z up
  o.planes[2] = {1, false, 0, true};   // sagittal: y right, z up
  return o;
}

SliceGeometry::SliceGeometry(const std::array<std::size_t, 3>& dims, const glm::dvec3& spacing,
                             const Orientation& orientation)
    : dims_(dims), spacing_(spacing), orientation_(orientation) {
  for (int a = 0; a < 3; ++a) {
    dims_[a] = std::max<std::size_t>(dims_[a], 1);
    if (!(spacing_[a] > 0.0) || !std::isfinite(spacing_[a])) spacing_[a] = 1.0;
    crosshair_[a] = static_cast<double>((dims_[a] - 1) / 2);
  }
}

void SliceGeometry::set_crosshair(const glm::dvec3& position) {
  crosshair_ = clamp_to_volume(position);
}

void SliceGeometry::set_oblique_angles(double tilt, double turn) {
  tilt_ = tilt;
  turn_ = turn;
}

PlaneFrame SliceGeometry::frame(Plane p) const {
  const PlaneAxes& axes =
      orientation_.planes[p == Plane::Oblique ? 0 : plane_index(p)];  // oblique starts axial
  PlaneFrame f;
  f.right = unit_axis(axes.right, axes.right_reversed);
  f.down = unit_axis(axes.down, axes.down_reversed);
  if (p == Plane::Oblique) {
    const glm::dvec3 r0 = f.right, d0 = f.down;
    f.right = rotate(rotate(f.right, r0, tilt_), d0, turn_);
    f.down = rotate(rotate(f.down, r0, tilt_), d0, turn_);
  }
  f.normal = glm::cross(f.right, f.down);
  return f;
}

void SliceGeometry::set_link_zoom(bool link) {
  link_zoom_ = link;
  if (!link) return;
  // Linking takes the smallest zoom, so every view still shows what it showed.
  double z = kMaxZoom;
  for (const ViewState& v : views_) z = std::min(z, v.zoom);
  for (ViewState& v : views_) v.zoom = z;
}

glm::dvec3 SliceGeometry::centre_mm() const {
  glm::dvec3 c;
  for (int a = 0; a < 3; ++a) c[a] = (static_cast<double>(dims_[a]) - 1.0) / 2.0 * spacing_[a];
  return c;
}

double SliceGeometry::extent_mm(const glm::dvec3& direction) const {
  double e = 0.0;
  for (int a = 0; a < 3; ++a)
    e += std::abs(direction[a]) * static_cast<double>(dims_[a]) * spacing_[a];
  return e;
}

void SliceGeometry::fit(const std::array<Rect, 4>& cells) {
  double smallest = kMaxZoom;
  for (Plane p : kPlanes) {
    const PlaneFrame f = frame(p);
    const Rect& cell = cells[plane_index(p)];
    const double z = std::min(cell.width / extent_mm(f.right), cell.height / extent_mm(f.down));
    ViewState& v = view(p);
    v.zoom = std::clamp(z, kMinZoom, kMaxZoom);
    v.centre = glm::dvec2(0.0);
    smallest = std::min(smallest, v.zoom);
  }
  if (link_zoom_)
    for (ViewState& v : views_) v.zoom = smallest;
}

glm::dvec3 SliceGeometry::plane_origin_mm(const PlaneFrame& f) const {
  const glm::dvec3 c = centre_mm();
  return c + glm::dot(crosshair_mm() - c, f.normal) * f.normal;
}

glm::dvec3 SliceGeometry::volume_position(Plane p, const Rect& cell, const glm::dvec2& w) const {
  const PlaneFrame f = frame(p);
  const ViewState& v = view(p);
  const glm::dvec2 uv = v.centre + (w - cell.centre()) / v.zoom;
  const glm::dvec3 mm = plane_origin_mm(f) + uv.x * f.right + uv.y * f.down;
  return mm / spacing_;
}

glm::dvec2 SliceGeometry::window_position(Plane p, const Rect& cell, const glm::dvec3& position,
                                          double* distance_mm) const {
  const PlaneFrame f = frame(p);
  const ViewState& v = view(p);
  const glm::dvec3 d = position * spacing_ - plane_origin_mm(f);
  if (distance_mm) *distance_mm = glm::dot(d, f.normal);
  const glm::dvec2 uv(glm::dot(d, f.right), glm::dot(d, f.down));
  return cell.centre() + (uv - v.centre) * v.zoom;
}

SliceMapping SliceGeometry::mapping(Plane p, const Rect& cell) const {
  const PlaneFrame f = frame(p);
  const double per_pixel = 1.0 / view(p).zoom;  // mm per window pixel
  SliceMapping m;
  m.corner = volume_position(p, cell, {cell.x, cell.y + cell.height});
  m.right = f.right * per_pixel / spacing_;
  m.up = -f.down * per_pixel / spacing_;
  return m;
}

void SliceGeometry::move_crosshair(Plane p, const Rect& cell, const glm::dvec2& w) {
  glm::dvec3 target = volume_position(p, cell, w);
  // An orthogonal plane keeps its normal index exactly (no rounding drift while dragging).
  if (p != Plane::Oblique) {
    const int n = orientation_.planes[plane_index(p)].normal();
    target[n] = crosshair_[n];
  }
  set_crosshair(target);
}

double SliceGeometry::normal_step_mm(Plane p) const {
  const glm::dvec3 n = frame(p).normal;
  double m = 0.0;
  for (int a = 0; a < 3; ++a) m = std::max(m, std::abs(n[a]) / spacing_[a]);
  return 1.0 / m;
}

void SliceGeometry::scroll(Plane p, int steps) {
  if (p != Plane::Oblique) {
    const int n = orientation_.planes[plane_index(p)].normal();
    glm::dvec3 c = crosshair_;
    // Whole indices: a fractional crosshair (from a click) snaps to the next voxel first.
    c[n] = steps > 0 ? std::floor(c[n]) + steps : std::ceil(c[n]) + steps;
    set_crosshair(c);
    return;
  }
  const PlaneFrame f = frame(p);
  const glm::dvec3 move_mm = f.normal * (normal_step_mm(p) * steps);
  set_crosshair(crosshair_ + move_mm / spacing_);
}

SliceGeometry::SlicePosition SliceGeometry::slice_position(Plane p) const {
  SlicePosition s;
  if (p == Plane::Oblique) {
    const PlaneFrame f = frame(p);
    s.mm = glm::dot(crosshair_mm() - centre_mm(), f.normal);
    return s;
  }
  s.axis = orientation_.planes[plane_index(p)].normal();
  s.index = crosshair_[s.axis];
  s.mm = s.index * spacing_[s.axis];
  return s;
}

void SliceGeometry::zoom_about(Plane p, const Rect& cell, const glm::dvec2& w, double factor) {
  ViewState& v = view(p);
  const glm::dvec2 uv = v.centre + (w - cell.centre()) / v.zoom;
  const double z = std::clamp(v.zoom * factor, kMinZoom, kMaxZoom);
  v.zoom = z;
  v.centre = uv - (w - cell.centre()) / z;
  if (link_zoom_)
    for (ViewState& other : views_) other.zoom = z;  // each about its own cell centre
}

void SliceGeometry::pan_by(Plane p, const glm::dvec2& delta) {
  ViewState& v = view(p);
  v.centre -= delta / v.zoom;
}

glm::dvec3 SliceGeometry::clamp_to_volume(const glm::dvec3& position) const {
  glm::dvec3 c;
  for (int a = 0; a < 3; ++a)
    c[a] = std::clamp(position[a], 0.0, static_cast<double>(dims_[a]) - 1.0);
  return c;
}

}  // namespace sv::viewer
