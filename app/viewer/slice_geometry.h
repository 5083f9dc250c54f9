// The geometry of the volume slices mode, free of GL and UI so that it can be tested on its own:
// three orthogonal planes (axial, coronal, sagittal) and one oblique plane (two angles), all
// through one shared crosshair point; each shown in its own view cell in millimetres, so that
// anisotropic voxels keep their true proportions; zoom and pan per view (zoom optionally
// linked); conversions between window pixels, volume positions and world points; slice
// scrolling along a plane's normal; orientation letters at a view's edges.
//
// Coordinates:
//  - volume positions are in voxel index units in array axis order (z, y, x): voxel k of an axis
//    sits at position k, so the volume covers [-0.5, N - 0.5] on each axis (the convention of
//    the CPU sampler and the fetch library);
//  - world points are RAS+ millimetres (splineview/geometry.h): world = affine * (i, j, k, 1)
//    with (i, j, k) = (x, y, z) = positions (2, 1, 0). A volume whose file states no orientation
//    has the affine diag(spacing), so its "world" is its index grid in mm;
//  - window coordinates: framebuffer pixels, origin top left, y down (as view_transform.h); a
//    view's cell is a Rect in those coordinates.
//
// A plane is a frame of unit world vectors: `right` (window x), `down` (window y) and `normal`.
// Its in-plane coordinates (u, v) in mm are measured from the projection of the volume's centre
// onto the plane, so moving the crosshair within a plane does not move that plane's view. A view
// shows in-plane point `centre` at its cell's centre, `zoom` window pixels per mm. The views
// sample the volume at world points mapped to voxel positions through the inverse affine, so an
// oblique acquisition is resliced, not snapped to its nearest axes.
//
// Patient space: the display convention (the one place it is defined).
//  A volume whose file states its orientation (Geometry::oriented()) is shown in the patient
//  frame, wherever its index axes point, in the radiological convention that 3D Slicer and
//  ITK-SNAP use by default:
//    axial     right = L, down = P (patient's left on the screen's right, anterior at the top),
//              normal S
//    coronal   right = L, down = I (left on the right, superior at the top), normal A
//    sagittal  right = P, down = I (anterior on the left, superior at the top, as Slicer shows),
//              normal R
//  `normal` is the direction a positive slice step moves the plane (wheel forward, Up): towards
//  S, A and R; it is right x down for axial and sagittal and its negative for coronal.
//  A volume without orientation shows its index planes in file order and is never given
//  anatomical names or letters: the "k plane" (i right, j down: row 0 on top, like an image;
//  normal +k), the "j plane" (i right, k up; normal +j) and the "i plane" (j right, k up;
//  normal +i).
//  The oblique plane is the first plane's frame (axial, or the k plane) turned by `tilt` about
//  its right axis, then by `turn` about its (original) down axis: its angles are relative to the
//  patient frame when the volume is oriented.
//  Edge letters name the world direction each edge of a view looks towards (left edge: -right,
//  top edge: -down): R/L, A/P, S/I for the largest component, followed by the second largest's
//  letter when the direction lies less than 30 degrees from the diagonal between those two axes
//  (so more than 15 degrees off every axis, for a direction in a plane of two axes): "A", "RA",
//  "SP". Unoriented volumes have none.
#pragma once

#include <array>
#include <cstddef>
#include <string>

#include <glm/glm.hpp>

#include "splineview/geometry.h"
#include "view_transform.h"

namespace sv::viewer {

enum class Plane { Axial, Coronal, Sagittal, Oblique };
constexpr std::array<Plane, 4> kPlanes = {Plane::Axial, Plane::Coronal, Plane::Sagittal,
                                          Plane::Oblique};
constexpr std::size_t plane_index(Plane p) {
  return static_cast<std::size_t>(p);
}
// The view slots' names: "axial", "coronal", "sagittal", "oblique" (the --methods order, the
// report's "plane" key). Shown as such only for oriented volumes (SliceGeometry::view_name).
const char* plane_name(Plane p);

// A frame of unit world vectors (RAS+); see the display convention above.
struct PlaneFrame {
  glm::dvec3 right{-1, 0, 0};
  glm::dvec3 down{0, -1, 0};
  glm::dvec3 normal{0, 0, 1};
};

// The letters at a view's four edges (empty for an unoriented volume).
struct EdgeLetters {
  std::string left, right, top, bottom;
};
// The letters of a world direction (RAS+, any length > 0): see the convention above.
std::string direction_letters(const glm::dvec3& ras);

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
  // `dims` in array order (z, y, x); `geometry` the volume's index-to-world affine (its index
  // columns non-zero and independent: sv::check_geometry, else sv::Error). The crosshair starts
  // at the volume's central voxel (integer indices, (N - 1) / 2 rounded down), the oblique
  // angles at 0 (the oblique plane then equals the first one), every view at zoom 1, centre 0.
  SliceGeometry(const std::array<std::size_t, 3>& dims, const Geometry& geometry);
  // An unoriented volume with `spacing` (mm, array order (z, y, x); values <= 0 read as 1).
  SliceGeometry(const std::array<std::size_t, 3>& dims, const glm::dvec3& spacing);

  const std::array<std::size_t, 3>& dims() const { return dims_; }
  const Geometry& geometry() const { return geometry_; }
  bool oriented() const { return geometry_.oriented(); }
  // Voxel size in mm per array axis (z, y, x): the lengths of the affine's index columns.
  const glm::dvec3& spacing() const { return spacing_; }
  // sv::orientation_code (nibabel's aff2axcodes), "" for an unoriented volume.
  std::string orientation_code() const;

  // What a view is called: plane_name() for an oriented volume, else the index plane ("k
  // plane", "j plane", "i plane"; "oblique").
  std::string view_name(Plane p) const;
  EdgeLetters letters(Plane p) const;

  // Volume positions (array order, voxel units) <-> world points (RAS+ mm), and a world
  // displacement to a displacement in voxel units.
  glm::dvec3 voxel_to_world(const glm::dvec3& position) const;
  glm::dvec3 world_to_voxel(const glm::dvec3& world) const;
  glm::dvec3 world_to_voxel_delta(const glm::dvec3& world_delta) const;
  glm::dvec3 voxel_to_world_delta(const glm::dvec3& position_delta) const;

  // The shared point, in voxel units (array order). Setting it clamps each axis to [0, N - 1].
  const glm::dvec3& crosshair() const { return crosshair_; }
  void set_crosshair(const glm::dvec3& position);
  glm::dvec3 crosshair_world() const { return voxel_to_world(crosshair_); }

  // The oblique plane's angles (radians); see the convention above.
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

  // Fits the volume's world box (the parallelepiped its voxels cover) into each view's cell,
  // centred; with linked zoom all views take the smallest of the fitting zooms. `cells` by
  // plane.
  void fit(const std::array<Rect, 4>& cells);

  // The volume position (voxel units, array order) and the world point under window point `w`
  // of plane p's view in `cell`. They lie on the plane through the crosshair.
  glm::dvec3 volume_position(Plane p, const Rect& cell, const glm::dvec2& w) const;
  glm::dvec3 world_position(Plane p, const Rect& cell, const glm::dvec2& w) const;
  // The window point of plane p's view in `cell` onto which `position` (voxel units; or a world
  // point) projects along the plane's normal; `distance_mm` (if given) receives the signed
  // distance from the plane along the normal.
  glm::dvec2 window_position(Plane p, const Rect& cell, const glm::dvec3& position,
                             double* distance_mm = nullptr) const;
  glm::dvec2 window_position_world(Plane p, const Rect& cell, const glm::dvec3& world,
                                   double* distance_mm = nullptr) const;
  // The shader's map for plane p's view in `cell` (see SliceMapping).
  SliceMapping mapping(Plane p, const Rect& cell) const;

  // The array axis (0..2, (z, y, x)) whose index axis is parallel to plane p's normal (to
  // 1e-9), or -1 (the oblique plane always; an orthogonal plane of an oblique acquisition).
  int normal_axis(Plane p) const;

  // Moves the crosshair to the point under `w` in plane p's view: within that plane only (an
  // index along normal_axis stays exactly), clamped to the volume.
  void move_crosshair(Plane p, const Rect& cell, const glm::dvec2& w);
  // Moves the crosshair by `steps` slices along plane p's normal (clamped to the volume): with
  // a normal_axis, exactly `steps` whole indices along it (a fractional index snaps to the next
  // voxel first); else normal_step_mm() per step along the normal.
  void scroll(Plane p, int steps);
  // The slice step of plane p in mm: the largest move along the normal that changes no voxel
  // index by more than 1 (the normal axis' spacing where there is a normal_axis).
  double normal_step_mm(Plane p) const;
  // Where plane p cuts the volume, for labels: the crosshair's world coordinate along the
  // normal (mm; e.g. its S coordinate for the axial plane, k * spacing for the k plane of an
  // unoriented volume) and its (fractional) index on the normal axis (-1: none); for the
  // oblique plane the signed distance in mm of the plane from the volume centre along the
  // normal (axis -1).
  struct SlicePosition {
    int axis = -1;       // array axis of the normal, -1 where there is none
    double index = 0.0;  // voxel index along that axis
    double mm = 0.0;
  };
  SlicePosition slice_position(Plane p) const;

  // Multiplies plane p's zoom by `factor` (clamped) keeping the point under `w` fixed; with
  // linked zoom the other views take the same zoom about their cell centres.
  void zoom_about(Plane p, const Rect& cell, const glm::dvec2& w, double factor);
  // Moves plane p's view by `delta` window pixels (the content follows the cursor).
  void pan_by(Plane p, const glm::dvec2& delta);

  // The volume's centre (world) and its extent along a world direction (the length of the
  // projection of the volume's world box onto `direction`, a unit vector).
  glm::dvec3 centre_world() const;
  double extent_mm(const glm::dvec3& direction) const;

 private:
  void init(const std::array<std::size_t, 3>& dims);
  // The in-plane origin of a plane: the volume centre projected onto the plane (world).
  glm::dvec3 plane_origin(const PlaneFrame& f) const;
  glm::dvec3 clamp_to_volume(const glm::dvec3& position) const;
  // The world column of array axis a (0: k, 1: j, 2: i).
  glm::dvec3 column(int array_axis) const { return linear_[2 - array_axis]; }

  std::array<std::size_t, 3> dims_{1, 1, 1};
  Geometry geometry_;
  glm::dmat3 linear_{1.0};   // columns: the world vectors of i, j, k
  glm::dmat3 inverse_{1.0};  // world displacement -> (i, j, k)
  glm::dvec3 origin_{0.0};   // the world point of index (0, 0, 0)
  glm::dvec3 spacing_{1.0, 1.0, 1.0};
  glm::dvec3 crosshair_{0.0};
  double tilt_ = 0.0, turn_ = 0.0;
  std::array<ViewState, 4> views_{};
  bool link_zoom_ = true;
};

}  // namespace sv::viewer
