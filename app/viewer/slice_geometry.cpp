// The slice planes, their views and the crosshair (see slice_geometry.h).
#include "slice_geometry.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace sv::viewer {
namespace {

constexpr double kPi = 3.14159265358979323846;
// Two letters when a direction is less than this from the diagonal of its two largest axes.
constexpr double kDiagonalDeg = 30.0;
// Parallel to an index axis: |cos| above 1 - this.
constexpr double kParallel = 1e-9;

// Rotation of v about the unit axis k by angle a (Rodrigues).
glm::dvec3 rotate(const glm::dvec3& v, const glm::dvec3& k, double a) {
  const double c = std::cos(a), s = std::sin(a);
  return v * c + glm::cross(k, v) * s + k * glm::dot(k, v) * (1.0 - c);
}

char axis_letter(int axis, bool positive) {
  static const char kPositive[3] = {'R', 'A', 'S'};
  static const char kNegative[3] = {'L', 'P', 'I'};
  return positive ? kPositive[axis] : kNegative[axis];
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

std::string direction_letters(const glm::dvec3& ras) {
  const double length = glm::length(ras);
  if (!(length > 0.0) || !std::isfinite(length)) return "";
  const glm::dvec3 d = ras / length;
  std::array<int, 3> order = {0, 1, 2};
  std::stable_sort(order.begin(), order.end(),
                   [&d](int a, int b) { return std::abs(d[a]) > std::abs(d[b]); });
  const int a1 = order[0], a2 = order[1];
  std::string out(1, axis_letter(a1, d[a1] > 0.0));
  glm::dvec3 diagonal(0.0);
  diagonal[a1] = d[a1] > 0.0 ? 1.0 : -1.0;
  diagonal[a2] = d[a2] > 0.0 ? 1.0 : -1.0;
  const double cos_angle = std::clamp(glm::dot(d, diagonal) / std::sqrt(2.0), -1.0, 1.0);
  if (std::acos(cos_angle) < kDiagonalDeg * kPi / 180.0) out += axis_letter(a2, d[a2] > 0.0);
  return out;
}

SliceGeometry::SliceGeometry(const std::array<std::size_t, 3>& dims, const Geometry& geometry)
    : geometry_(geometry) {
  check_geometry(geometry_, 3, "volume geometry");
  init(dims);
}

SliceGeometry::SliceGeometry(const std::array<std::size_t, 3>& dims, const glm::dvec3& spacing) {
  std::vector<double> s(3);
  for (int a = 0; a < 3; ++a)
    s[static_cast<std::size_t>(a)] =
        spacing[a] > 0.0 && std::isfinite(spacing[a]) ? spacing[a] : 1.0;
  geometry_ = geometry_from_spacing(s);
  init(dims);
}

void SliceGeometry::init(const std::array<std::size_t, 3>& dims) {
  dims_ = dims;
  for (int c = 0; c < 3; ++c) {
    for (int r = 0; r < 3; ++r)
      linear_[c][r] = geometry_.affine[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)];
    origin_[c] = geometry_.affine[static_cast<std::size_t>(c)][3];
  }
  inverse_ = glm::inverse(linear_);
  for (int a = 0; a < 3; ++a) {
    dims_[static_cast<std::size_t>(a)] =
        std::max<std::size_t>(dims_[static_cast<std::size_t>(a)], 1);
    spacing_[a] = glm::length(column(a));
    crosshair_[a] = static_cast<double>((dims_[static_cast<std::size_t>(a)] - 1) / 2);
  }
}

std::string SliceGeometry::orientation_code() const {
  return oriented() ? sv::orientation_code(geometry_) : std::string();
}

std::string SliceGeometry::view_name(Plane p) const {
  if (oriented() || p == Plane::Oblique) return plane_name(p);
  static const char* kIndexPlanes[3] = {"k plane", "j plane", "i plane"};
  return kIndexPlanes[plane_index(p)];
}

EdgeLetters SliceGeometry::letters(Plane p) const {
  if (!oriented()) return {};
  const PlaneFrame f = frame(p);
  return {direction_letters(-f.right), direction_letters(f.right), direction_letters(-f.down),
          direction_letters(f.down)};
}

glm::dvec3 SliceGeometry::voxel_to_world(const glm::dvec3& position) const {
  return origin_ + voxel_to_world_delta(position);
}

glm::dvec3 SliceGeometry::voxel_to_world_delta(const glm::dvec3& position_delta) const {
  return linear_ * glm::dvec3(position_delta[2], position_delta[1], position_delta[0]);
}

glm::dvec3 SliceGeometry::world_to_voxel(const glm::dvec3& world) const {
  return world_to_voxel_delta(world - origin_);
}

glm::dvec3 SliceGeometry::world_to_voxel_delta(const glm::dvec3& world_delta) const {
  const glm::dvec3 ijk = inverse_ * world_delta;
  return {ijk[2], ijk[1], ijk[0]};
}

void SliceGeometry::set_crosshair(const glm::dvec3& position) {
  crosshair_ = clamp_to_volume(position);
}

void SliceGeometry::set_oblique_angles(double tilt, double turn) {
  tilt_ = tilt;
  turn_ = turn;
}

PlaneFrame SliceGeometry::frame(Plane p) const {
  PlaneFrame f;
  const Plane base = p == Plane::Oblique ? Plane::Axial : p;  // oblique starts as the first
  if (oriented()) {
    switch (base) {
      case Plane::Axial:
        f = {{-1, 0, 0}, {0, -1, 0}, {0, 0, 1}};  // L right, P down, normal S
        break;
      case Plane::Coronal:
        f = {{-1, 0, 0}, {0, 0, -1}, {0, 1, 0}};  // L right, I down, normal A
        break;
      default:
        f = {{0, -1, 0}, {0, 0, -1}, {1, 0, 0}};  // P right, I down, normal R
        break;
    }
  } else {
    const glm::dvec3 i = glm::normalize(column(2)), j = glm::normalize(column(1)),
                     k = glm::normalize(column(0));
    switch (base) {
      case Plane::Axial:
        f = {i, j, k};  // the k plane: i right, j down
        break;
      case Plane::Coronal:
        f = {i, -k, j};  // the j plane: i right, k up
        break;
      default:
        f = {j, -k, i};  // the i plane: j right, k up
        break;
    }
  }
  if (p == Plane::Oblique) {
    const glm::dvec3 r0 = f.right, d0 = f.down;
    f.right = rotate(rotate(f.right, r0, tilt_), d0, turn_);
    f.down = rotate(rotate(f.down, r0, tilt_), d0, turn_);
    f.normal = rotate(rotate(f.normal, r0, tilt_), d0, turn_);
  }
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

glm::dvec3 SliceGeometry::centre_world() const {
  glm::dvec3 c;
  for (int a = 0; a < 3; ++a)
    c[a] = (static_cast<double>(dims_[static_cast<std::size_t>(a)]) - 1.0) / 2.0;
  return voxel_to_world(c);
}

double SliceGeometry::extent_mm(const glm::dvec3& direction) const {
  double e = 0.0;
  for (int a = 0; a < 3; ++a)
    e += std::abs(glm::dot(direction, column(a))) *
         static_cast<double>(dims_[static_cast<std::size_t>(a)]);
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

glm::dvec3 SliceGeometry::plane_origin(const PlaneFrame& f) const {
  const glm::dvec3 c = centre_world();
  return c + glm::dot(crosshair_world() - c, f.normal) * f.normal;
}

glm::dvec3 SliceGeometry::world_position(Plane p, const Rect& cell, const glm::dvec2& w) const {
  const PlaneFrame f = frame(p);
  const ViewState& v = view(p);
  const glm::dvec2 uv = v.centre + (w - cell.centre()) / v.zoom;
  return plane_origin(f) + uv.x * f.right + uv.y * f.down;
}

glm::dvec3 SliceGeometry::volume_position(Plane p, const Rect& cell, const glm::dvec2& w) const {
  return world_to_voxel(world_position(p, cell, w));
}

glm::dvec2 SliceGeometry::window_position_world(Plane p, const Rect& cell, const glm::dvec3& world,
                                                double* distance_mm) const {
  const PlaneFrame f = frame(p);
  const ViewState& v = view(p);
  const glm::dvec3 d = world - plane_origin(f);
  if (distance_mm) *distance_mm = glm::dot(d, f.normal);
  const glm::dvec2 uv(glm::dot(d, f.right), glm::dot(d, f.down));
  return cell.centre() + (uv - v.centre) * v.zoom;
}

glm::dvec2 SliceGeometry::window_position(Plane p, const Rect& cell, const glm::dvec3& position,
                                          double* distance_mm) const {
  return window_position_world(p, cell, voxel_to_world(position), distance_mm);
}

SliceMapping SliceGeometry::mapping(Plane p, const Rect& cell) const {
  const PlaneFrame f = frame(p);
  const double per_pixel = 1.0 / view(p).zoom;  // mm per window pixel
  SliceMapping m;
  m.corner = volume_position(p, cell, {cell.x, cell.y + cell.height});
  m.right = world_to_voxel_delta(f.right * per_pixel);
  m.up = world_to_voxel_delta(-f.down * per_pixel);
  return m;
}

int SliceGeometry::normal_axis(Plane p) const {
  if (p == Plane::Oblique) return -1;
  const glm::dvec3 n = frame(p).normal;
  for (int a = 0; a < 3; ++a)
    if (std::abs(glm::dot(glm::normalize(column(a)), n)) > 1.0 - kParallel) return a;
  return -1;
}

void SliceGeometry::move_crosshair(Plane p, const Rect& cell, const glm::dvec2& w) {
  glm::dvec3 target = volume_position(p, cell, w);
  // A plane along an index axis keeps that index exactly (no rounding drift while dragging).
  if (const int n = normal_axis(p); n >= 0) target[n] = crosshair_[n];
  set_crosshair(target);
}

double SliceGeometry::normal_step_mm(Plane p) const {
  const glm::dvec3 d = world_to_voxel_delta(frame(p).normal);
  double m = 0.0;
  for (int a = 0; a < 3; ++a) m = std::max(m, std::abs(d[a]));
  return 1.0 / m;
}

void SliceGeometry::scroll(Plane p, int steps) {
  const PlaneFrame f = frame(p);
  if (const int n = normal_axis(p); n >= 0) {
    // Whole indices: a fractional crosshair (from a click) snaps to the next voxel first.
    const int s = glm::dot(column(n), f.normal) > 0.0 ? steps : -steps;
    glm::dvec3 c = crosshair_;
    c[n] = s > 0 ? std::floor(c[n]) + s : std::ceil(c[n]) + s;
    set_crosshair(c);
    return;
  }
  set_crosshair(crosshair_ + world_to_voxel_delta(f.normal * (normal_step_mm(p) * steps)));
}

SliceGeometry::SlicePosition SliceGeometry::slice_position(Plane p) const {
  SlicePosition s;
  const PlaneFrame f = frame(p);
  if (p == Plane::Oblique) {
    s.mm = glm::dot(crosshair_world() - centre_world(), f.normal);
    return s;
  }
  s.mm = glm::dot(crosshair_world(), f.normal);
  s.axis = normal_axis(p);
  if (s.axis >= 0) s.index = crosshair_[s.axis];
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
    c[a] =
        std::clamp(position[a], 0.0, static_cast<double>(dims_[static_cast<std::size_t>(a)]) - 1.0);
  return c;
}

}  // namespace sv::viewer
