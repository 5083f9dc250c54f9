// The geometry of the volume slices mode, free of GL and UI so that it can be tested on its own:
// three orthogonal planes (axial, coronal, sagittal) and one oblique plane (two angles), all
// through one shared crosshair point; each shown in its own view cell in millimetres, so that
// anisotropic voxels keep their true proportions (a 3 mm slice spacing is drawn 1.5x as long as
// a 2 mm pixel spacing); zoom and pan per view (zoom optionally linked); conversions between
// window pixels and volume positions both ways; slice scrolling along a plane's normal.
//
// Coordinates:
//  - volume positions are in voxel index units in array axis order (z, y, x): voxel k of an axis
//    sits at position k, so the volume covers [-0.5, N - 0.5] on each axis (the convention of
//    the CPU sampler and the fetch library);
//  - millimetres: mm = position * spacing per axis (array order), so the volume's centre is at
//    (N - 1) / 2 * spacing;
//  - window coordinates: framebuffer pixels, origin top left, y down (as view_transform.h); a
//    view's cell is a Rect in those coordinates.
//
// A plane is an orthonormal frame in mm space: `right` (window x), `down` (window y) and the
// normal right x down. Its in-plane coordinates (u, v) in mm are measured from the projection of
// the volume centre onto the plane, so moving the crosshair within a plane does not move that
// plane's view. A view shows in-plane point `centre` at its cell's centre, `zoom` window pixels
// per mm.
#pragma once

#include <array>
#include <cstddef>
#include <string>

#include <glm/glm.hpp>

#include "view_transform.h"

namespace sv::viewer {

enum class Plane { Axial, Coronal, Sagittal, Oblique };
constexpr std::array<Plane, 4> kPlanes = {Plane::Axial, Plane::Coronal, Plane::Sagittal,
                                          Plane::Oblique};
constexpr std::size_t plane_index(Plane p) {
  return static_cast<std::size_t>(p);
}
// "axial", "coronal", "sagittal", "oblique".
const char* plane_name(Plane p);

// Which array axes an orthogonal plane shows: the axis that runs left to right (`right`) and
// the one that runs top to bottom (`down`), each possibly reversed (index decreasing to the
// right / downwards). The plane's normal axis is the remaining one.
struct PlaneAxes {
  int right = 2;
  bool right_reversed = false;
  int down = 1;
  bool down_reversed = false;
  int normal() const { return 3 - right - down; }
};

// The display axes of the three orthogonal planes, by plane (axial, coronal, sagittal).
struct Orientation {
  std::array<PlaneAxes, 3> planes;
  // An axial stack in file order, z the slice axis: axial shows x right and y down; coronal x
  // right and z up; sagittal y right and z up. The default for files, whose orientation
  // metadata the loaders ignore.
  static Orientation file_order();
};

// An orthonormal frame in mm space, components in array axis order (z, y, x).
struct PlaneFrame {
  glm::dvec3 right{0, 0, 1};
  glm::dvec3 down{0, 1, 0};
  glm::dvec3 normal{1, 0, 0};  // right x down
};

// Zoom and pan of one view.
struct ViewState {
  double zoom = 1.0;            // window pixels per mm
  glm::dvec2 centre{0.0, 0.0};  // in-plane (u, v) in mm shown at the cell's centre
};

// The affine map from a view's fragments to volume positions, for the slice pass: the
// fragment a pixels right of and b pixels above the bottom-left corner of the cell's viewport
// samples position corner + a * right + b * up (array order, voxel units). Fragment centres
// are at half-integer a, b, like window pixel centres.
struct SliceMapping {
  glm::dvec3 corner{0.0};
  glm::dvec3 right{0.0};
  glm::dvec3 up{0.0};
};

class SliceGeometry {
 public:
  static constexpr double kMinZoom = 1e-3;  // window pixels per mm
  static constexpr double kMaxZoom = 1e3;

  SliceGeometry() = default;
  // `dims` and `spacing` (mm, > 0) in array order (z, y, x). The crosshair starts at the
  // volume's central voxel (integer indices, (N - 1) / 2 rounded down), the oblique angles at 0
  // (the oblique plane then equals the axial one), every view at zoom 1 and centre 0.
  SliceGeometry(const std::array<std::size_t, 3>& dims, const glm::dvec3& spacing,
                const Orientation& orientation = Orientation::file_order());

  const std::array<std::size_t, 3>& dims() const { return dims_; }
  const glm::dvec3& spacing() const { return spacing_; }
  const Orientation& orientation() const { return orientation_; }

  // The shared point, in voxel units (array order). Setting it clamps each axis to [0, N - 1].
  const glm::dvec3& crosshair() const { return crosshair_; }
  void set_crosshair(const glm::dvec3& position);
  glm::dvec3 crosshair_mm() const { return crosshair_ * spacing_; }

  // The oblique plane: the axial frame turned by `tilt` about its right axis, then by `turn`
  // about its (original) down axis; radians.
  double oblique_tilt() const { return tilt_; }
  double oblique_turn() const { return turn_; }
  void set_oblique_angles(double tilt, double turn);

  PlaneFrame frame(Plane p) const;

  ViewState& view(Plane p) { return views_[plane_index(p)]; }
  const ViewState& view(Plane p) const { return views_[plane_index(p)]; }
  // With linked zoom (the default) every view has the same mm scale: zooming one zooms all
  // (each about its own cell centre, the one under the cursor about the cursor).
  bool link_zoom() const { return link_zoom_; }
  void set_link_zoom(bool link);

  // Fits the whole volume into each view's cell, centred; with linked zoom all views take the
  // smallest of the fitting zooms. `cells` by plane.
  void fit(const std::array<Rect, 4>& cells);

  // The volume position (voxel units, array order) under window point `w` of plane p's view
  // in `cell`. It lies on the plane through the crosshair.
  glm::dvec3 volume_position(Plane p, const Rect& cell, const glm::dvec2& w) const;
  // The window point of plane p's view in `cell` onto which `position` (voxel units) projects
  // along the plane's normal; `distance_mm` (if given) receives the signed distance from the
  // plane along the normal.
  glm::dvec2 window_position(Plane p, const Rect& cell, const glm::dvec3& position,
                             double* distance_mm = nullptr) const;
  // The shader's map for plane p's view in `cell` (see SliceMapping).
  SliceMapping mapping(Plane p, const Rect& cell) const;

  // Moves the crosshair to the point under `w` in plane p's view: within that plane only (its
  // position along the plane's normal stays), clamped to the volume.
  void move_crosshair(Plane p, const Rect& cell, const glm::dvec2& w);
  // Moves the crosshair by `steps` slices along plane p's normal (clamped to the volume). One
  // slice is one voxel: exactly one index along the normal axis of an orthogonal plane; for the
  // oblique plane the step of normal_step_mm().
  void scroll(Plane p, int steps);
  // The slice step of plane p in mm: the largest move along the normal that changes no voxel
  // index by more than 1, 1 / max_i(|n_i| / spacing_i) (the normal axis' spacing for an
  // orthogonal plane).
  double normal_step_mm(Plane p) const;
  // Where plane p cuts the volume, for labels: the crosshair's (fractional) voxel index on the
  // normal axis and its mm (orthogonal planes), or the signed distance in mm of the plane from
  // the volume centre along the normal (oblique; index -1).
  struct SlicePosition {
    int axis = -1;       // array axis of the normal, -1 for the oblique plane
    double index = 0.0;  // voxel index along that axis
    double mm = 0.0;
  };
  SlicePosition slice_position(Plane p) const;

  // Multiplies plane p's zoom by `factor` (clamped) keeping the point under `w` fixed; with
  // linked zoom the other views take the same zoom about their cell centres.
  void zoom_about(Plane p, const Rect& cell, const glm::dvec2& w, double factor);
  // Moves plane p's view by `delta` window pixels (the content follows the cursor).
  void pan_by(Plane p, const glm::dvec2& delta);

  // The volume's centre in mm and its extent along a mm-space direction (the length of the
  // volume box's projection onto `direction`, a unit vector).
  glm::dvec3 centre_mm() const;
  double extent_mm(const glm::dvec3& direction) const;

 private:
  // The in-plane origin of plane p: the volume centre projected onto the plane (mm).
  glm::dvec3 plane_origin_mm(const PlaneFrame& f) const;
  glm::dvec3 clamp_to_volume(const glm::dvec3& position) const;

  std::array<std::size_t, 3> dims_{1, 1, 1};
  glm::dvec3 spacing_{1.0, 1.0, 1.0};
  Orientation orientation_ = Orientation::file_order();
  glm::dvec3 crosshair_{0.0};
  double tilt_ = 0.0, turn_ = 0.0;
  std::array<ViewState, 4> views_{};
  bool link_zoom_ = true;
};

}  // namespace sv::viewer
