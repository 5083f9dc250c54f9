// The ray-cast 3-D view's model without GL: the orbit camera, the rays of a pane (patient mm
// and voxel index space), the modes (maximum intensity projection, isosurface, direct volume
// rendering), the transfer function presets, and a CPU ray march in double that follows the
// same rules as shaders/raycast.comp, sample for sample. The march is the accuracy overlay's
// reference (raycast_view.h) and the tests' baseline beside the analytic results.
//
// Rays (shared with the shader, which receives the RayFrame's vectors rounded to float):
//  - the camera lives in the patient frame (RAS+ mm, splineview/geometry.h); pixel (x, y) of a
//    W x H pane (y up from the bottom row) looks along w(x, y) = forward + (x + 1/2 - W/2) s right
//    + (y + 1/2 - H/2) s up, s = 2 tan(fov/2) / min(W, H) (the field of view spans the pane's
//    shorter side, so narrow side-by-side panes still show the whole volume);
//  - the march happens in voxel index space (i, j, k = texture x, y, z; voxel k at position k):
//    the eye E = A^-1 (eye), the direction d = M w / |M w| with M the inverse of the affine's
//    3x3 part, so anisotropic voxels keep their proportions and oriented files look as they do
//    in the slices; one index unit along the ray is |w| / |M w| mm;
//  - the ray enters and leaves the box [-1/2, N - 1/2] per axis at t0 < t1 (index units; t0 >= 0);
//    it is cut into segments [t0 + k h, min(t0 + (k + 1) h, t1)] of h = step voxels, and each
//    segment is sampled once at its midpoint;
//  - MIP: the largest sampled value; isosurface: the first midpoint with value >= iso after one
//    below it (or the first midpoint when the ray starts inside), the crossing refined between the
//    two by bisection, the normal -grad s (world frame: M^T grad, normalised, facing the eye);
//    DVR: front-to-back emission-absorption, each segment of length L mm with opacity
//    1 - exp(-sigma L), sigma = tf.alpha(value) * opacity_per_mm, colour tf.rgb(value),
//    stopping once the accumulated opacity reaches the cut-off.
// Methods: trilinear (degree 1 on the samples), cubic (degree 3 on the B-spline coefficients;
// the GPU's on-the-fly and precise fetches both approximate it). The trilinear gradient is a
// central difference over one voxel per axis (the interpolant has no continuous gradient).
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <glm/glm.hpp>

#include "splineview/array.h"
#include "splineview/geometry.h"

namespace sv::viewer {

enum class RayMode { Mip, Iso, Dvr };
constexpr std::array<RayMode, 3> kRayModes = {RayMode::Mip, RayMode::Iso, RayMode::Dvr};
const char* ray_mode_name(RayMode m);   // "mip", "iso", "dvr" (command line, report)
const char* ray_mode_label(RayMode m);  // "maximum intensity", "isosurface", "volume rendering"
// Throws sv::Error listing the valid names.
RayMode parse_ray_mode(const std::string& name);

// An orbit camera about a target point, as in 3D Slicer's 3-D view: yaw about the patient's
// superior axis (world z), pitch towards it; yaw 0, pitch 0 looks from anterior (+y) at the face,
// superior up, the patient's right on the screen's left.
struct OrbitCamera {
  glm::dvec3 target{0.0};  // world mm
  double yaw_deg = 0.0;
  double pitch_deg = 0.0;  // clamped to +-89
  double distance_mm = 500.0;
  double fov_deg = 30.0;  // across the pane's shorter side

  glm::dvec3 eye() const;
  glm::dvec3 forward() const;  // unit, from the eye to the target
  glm::dvec3 right() const;    // unit, screen right
  glm::dvec3 up() const;       // unit, screen up
  // Drag by (dx, dy) window pixels: 0.4 degrees per pixel, right drag turns the volume right.
  void rotate(double dx_px, double dy_px);
  // Wheel notches (positive: closer), 10% per notch, within [1 mm, 100 m].
  void zoom(double notches);
};
// Looks at the volume's centre from its default direction, far enough that its bounding sphere
// fits the field of view with a margin. dims in array order (z, y, x).
OrbitCamera fit_camera(const Geometry& g, const std::array<std::size_t, 3>& dims,
                       double yaw_deg = 0.0, double pitch_deg = 0.0);

// The rays of a W x H pane, in double (the shader gets them rounded to float).
struct RayFrame {
  int width = 0, height = 0;
  glm::dvec3 eye{0.0};                   // index space (texture order x, y, z)
  glm::dvec3 d0{0.0}, dx{0.0}, dy{0.0};  // index-space direction of pixel (0, 0), per pixel
  glm::dvec3 w0{0.0}, wx{0.0}, wy{0.0};  // the same in world mm (unnormalised)
  glm::dmat3 normal_matrix{1.0};         // M^T: index-space gradient -> world gradient
  glm::dvec3 light{0.0, 0.0, 1.0};       // world, unit, from the surface towards the eye
  glm::dvec3 dims{1.0};                  // voxels per axis, texture order (x, y, z)
};
RayFrame ray_frame(const OrbitCamera& c, const Geometry& g, const std::array<std::size_t, 3>& dims,
                   int width, int height);

// A 1-D transfer function: `table` holds kTfTexels RGBA entries (colour, opacity in [0, 1]) at
// values low + (high - low) k / (kTfTexels - 1), linearly interpolated between them (in the
// shader too, with exact float weights); values below low take entry 0, above high the last.
// sigma = opacity * opacity_per_mm is the extinction per mm.
constexpr int kTfTexels = 256;
struct TransferFunction {
  std::string preset;  // "CT bone", "MRI soft tissue", "grey ramp"
  double low = 0.0, high = 1.0;
  double opacity_per_mm = 0.05;
  std::vector<glm::vec4> table;  // kTfTexels entries
  glm::dvec4 lookup(double value) const;
  // The value range outside which the opacity is 0 (-inf/+inf when the ends are opaque): samples
  // there add nothing, so the march may skip them.
  double visible_low() const;
  double visible_high() const;
};
const std::vector<std::string>& tf_presets();
// A preset over the value range [low, high] (e.g. the display window). Throws sv::Error for an
// unknown name (listing the presets) or low >= high.
TransferFunction make_transfer_function(const std::string& preset, double low, double high,
                                        double opacity_per_mm = 0.05);

struct RaySettings {
  RayMode mode = RayMode::Mip;
  double step = 0.5;    // voxels (index units) per segment, 0.05 .. 1
  double iso = 0.5;     // isosurface value
  int bisections = 10;  // isosurface refinement steps on the GPU (the reference converges)
  double dvr_cutoff = 0.99;
  // DVR: shade each visible sample by 0.35 + 0.65 |n . v| (n the normalised gradient, v the view
  // direction: a two-sided headlight) where |grad| (world, per mm) exceeds
  // dvr_shade_threshold(); unshaded where the gradient vanishes (flat regions keep their colour).
  bool dvr_shade = false;
  TransferFunction tf = make_transfer_function("grey ramp", 0.0, 1.0);
};

// 1e-6 of the transfer function's value range per mm.
double dvr_shade_threshold(const RaySettings& s);

// One ray's outcome, the quantity the pane shows.
struct RayResult {
  bool hit = false;        // the ray met the box (MIP, DVR) or the isosurface (iso)
  double value = 0.0;      // MIP: the largest sample
  double depth_mm = 0.0;   // iso: distance from the eye to the crossing
  glm::dvec3 normal{0.0};  // iso: world, unit, facing the eye
  glm::dvec4 rgba{0.0};    // DVR: premultiplied colour and opacity
  int samples = 0;         // midpoints evaluated
};

// The ray's entry and exit in index units (t0 >= 0); false when it misses the box.
bool ray_box(const glm::dvec3& eye, const glm::dvec3& dir, const glm::dvec3& dims, double* t0,
             double* t1);

// A spline of the volume in double for the march: degree 1 (trilinear on the samples) or 3 (the
// cubic on its coefficients), reflect boundary as the textures' mirrored repeat.
class RaySpline {
 public:
  // `data`: samples (degree 1) or B-spline coefficients (degree 3), dims (z, y, x), one channel;
  // kept by reference.
  RaySpline(const ArrayD& data, int degree);
  double value(const glm::dvec3& p) const;  // p in texture order (x, y, z)
  // Index-space gradient: the cubic's exact one; for degree 1 the central difference
  // (s(p + e) - s(p - e)) / 2 per axis, as the shader computes it.
  glm::dvec3 gradient(const glm::dvec3& p) const;
  int degree() const { return degree_; }

 private:
  double eval(const glm::dvec3& p, int derivative_axis) const;
  const ArrayD& data_;
  int degree_;
  long n_[3];  // x, y, z
};

// The function synthetic data was sampled from (e.g. Marschner-Lobb), for the overlay's ground
// truth: `f` takes a position in array order (z, y, x), voxel units. The gradient is a central
// difference of 1e-4 voxel (its error, about 1e-9 of the function's third derivative, is far below
// anything the GPU's float rays resolve).
class RayTruth {
 public:
  explicit RayTruth(std::function<double(const double* zyx)> f);
  double value(const glm::dvec3& p) const;  // p in texture order (x, y, z)
  glm::dvec3 gradient(const glm::dvec3& p) const;

 private:
  std::function<double(const double*)> f_;
};

// The march of pixel (x, y) of `frame` (pixel centre as in the shader) through the method's
// spline in double, or through the analytic function (the same segments; the isosurface's
// bisection converged on it).
RayResult march_ray(const RaySpline& s, const RayFrame& frame, const RaySettings& settings, int x,
                    int y);
RayResult march_ray(const RayTruth& t, const RayFrame& frame, const RaySettings& settings, int x,
                    int y);

// A pane's GPU rays against the reference march, over the rays compared:
//   MIP  |value - reference| (rms, max);
//   iso  |depth - reference| in mm (rms, max) and the normal's angle in degrees (angle_rms,
//        angle_max) over rays both call a hit; `mismatched` counts rays only one calls a hit
//        (grazing rays, where a float rounding decides);
//   DVR  the largest |channel - reference| of premultiplied RGBA (rms, max).
struct RayErrors {
  double rms = 0.0, max = 0.0;
  double angle_rms = 0.0, angle_max = 0.0;
  std::size_t rays = 0;        // compared
  std::size_t mismatched = 0;  // iso: hit on one side only
};
// `gpu`: the data image's values (shaders/raycast.comp), one per reference result.
RayErrors compare_rays(RayMode mode, const std::vector<glm::vec4>& gpu,
                       const std::vector<RayResult>& reference);
// The angle between two unit vectors in degrees, well conditioned near 0.
double angle_between_deg(const glm::dvec3& a, const glm::dvec3& b);

}  // namespace sv::viewer
