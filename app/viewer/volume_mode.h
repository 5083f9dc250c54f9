// The viewer's volume slices mode: a 2x2 grid of the axial, coronal, sagittal and an oblique
// plane through one shared crosshair point, each drawn in millimetres (anisotropic voxels keep
// their proportions) with one of the seven reconstruction methods of the 2-D view, grey through
// window/level. The volume loads without blocking the UI: a worker thread reads and decodes the
// file, update() then uploads and prefilters it on the GL thread (volume_document.h).
//
// Patient space (slice_geometry.h has the convention): a volume whose file states its
// orientation is shown in planes of the patient frame (RAS+), radiological, resliced through
// its affine, with orientation letters at the edges of each view and world coordinates in the
// labels and the readout (world RAS mm, voxel i, j, k, array [z, y, x], raw value). A file that
// states none shows its index planes in file order ("k plane", "j plane", "i plane"), without
// anatomical names or letters, and a note saying so. No file is treated specially by name.
//
// A volume over the GPU texture limits opens as its overview (volume_document.h); each view
// zoomed in far enough streams the file's full-resolution box under it into its own textures
// (volume_stream.h) and draws exactly what a full-resolution document draws. Every view of an
// overview says which it shows (a status line under its label, the panel, the report's
// "streamed", "full_resolution", "detail_box_zyx" and "resolution_note"), and the readout over a
// streamed view gives the file's own value.
//
// Accuracy overlay (accuracy.h, as in the zoom mode): each view's method measured against the
// double-precision reference at exactly that view's pixel positions in the volume (slice_grid:
// the affine map slice.frag evaluates), RMS, max and sum of squares per view, and an error heat
// map over each view with its colour scale. Debounced: a measurement restarts once the views
// (crosshair, zoom, pan, angles, methods) have stopped changing; its GPU side runs a few ms per
// frame, its reference on a worker thread. The meter is made when first needed, and only for
// volumes within VolumeLimits::accuracy_budget (larger ones: the panel says why).
//
// Mouse and keys over a view (also listed in the panel):
//   left click/drag        moves the crosshair (within that view's plane)
//   wheel                  next/previous slice of that view (one voxel along its normal)
//   Ctrl+wheel             zoom about the cursor (all views alike while "link zoom" is on)
//   right drag             pan that view
//   middle drag or Shift+left drag   window/level: right widens the window, down raises the
//                          level (darker)
//   Up/Down, PgUp/PgDn     next/previous slice of the view under the cursor
//   1..7                   method of the view under the cursor (7: GRBF) (of all views while "one
//                          method for all views" is on)
//   R                      fit all views
//   H                      error heat map on/off
#pragma once

#include <array>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "accuracy.h"
#include "grbf_views.h"
#include "mode.h"
#include "raycast_view.h"
#include "slice_geometry.h"
#include "slice_pass.h"
#include "splineview/gl/evaluator.h"
#include "splineview/gl/timer.h"
#include "splineview/io.h"
#include "volume_document.h"
#include "volume_stream.h"

namespace sv::viewer {

// The path that opens the bundled Marschner-Lobb volume (--mode volume marschner-lobb).
constexpr const char* kMarschnerLobbName = "marschner-lobb";

struct VolumeOptions {
  // The volume file (NRRD, NIfTI-1 .nii/.nii.gz, .npy, or raw with `raw`); empty: the bundled
  // MRI head (assets/mri_t1_head.nrrd, found like default_image_path()).
  std::string path;
  // How to read a path without a known extension (headerless raw data).
  std::optional<RawSpec> raw;
  // The method of all four views at the start.
  gl::Fetch method = gl::Fetch::CubicOtf;
  // Per view at the start (plane order: axial, coronal, sagittal, oblique), overriding
  // `method`; any one given turns "one method for all views" off.
  std::array<std::optional<gl::Fetch>, 4> methods;
  // The first volume's window and level (in the volume's values); each defaults to the
  // document's (decode_volume: percentiles for integer data, the range for float data).
  std::optional<double> window;
  std::optional<double> level;
  // false: prefilter on the CPU even where CUDA could (the interop's CPU path).
  bool allow_cuda = true;
  // Bytes of GPU texture memory the volume may take (samples and coefficients); a volume over
  // it is shown as an overview (DecodedVolume::overview_level). 0: VolumeLimits' default.
  std::size_t texture_budget = 0;
  // Bytes of GPU textures the streamed full-resolution boxes of an overview's four views may
  // take together (volume_stream.h); 0: no streaming. Unset: VolumeLimits' default.
  std::optional<std::size_t> detail_budget;
  // The first volume's zoom in window pixels per mm, all views, about the crosshair; unset:
  // fit the views.
  std::optional<double> zoom;
  // The first volume's crosshair at this voxel of the file (array order z, y, x; an overview
  // maps it to its own index); unset: the central voxel.
  std::optional<glm::dvec3> crosshair;
  bool accuracy = true;         // measure the views against the double reference
  bool heat_map = false;        // show the error heat map over the views
  AccuracyReference reference;  // what the views are measured against (--reference)
  // The ray-cast 3-D view (raycast_view.h): on, it takes the whole area instead of the slices.
  RaycastOptions view3d;
  // What each view shows (plane order; --quantity): the value (default) or a derivative
  // quantity (gl::Quantity) along the volume's array axes x, y, z, per mm (each axis's
  // derivative divided by its voxel spacing; the gradient magnitude and the Laplacian are then
  // the physical ones where the voxel axes are orthogonal).
  std::array<std::optional<gl::Quantity>, 4> quantities;
  // The derivative views' display range (as ZoomOptions::quantity_range); unset: automatic.
  std::optional<double> quantity_range;
  // The Gaussian RBF's sigma in voxels (--sigma; the grbf views, gl::Fetch::Grbf: weights of
  // the volume's samples solved in float on a worker thread, grbf_views.h).
  double sigma = 1.0;
  // The smoothing parameter of the coefficients (--lambda, >= 0; 0: the interpolating
  // prefilter): sv::direct_transform with lambda, by CUDA into the coefficient texture where the
  // prefilter ran there, else on the CPU on a worker thread; every volume.
  double lambda = 0.0;
};

class VolumeMode : public Mode {
 public:
  // Starts loading options.path (or the bundled volume) in the background; needs the GL
  // context current (it reads GL_MAX_3D_TEXTURE_SIZE). Never throws for a bad file: the error
  // goes to error().
  explicit VolumeMode(VolumeOptions options = {});
  ~VolumeMode() override;
  VolumeMode(const VolumeMode&) = delete;
  VolumeMode& operator=(const VolumeMode&) = delete;

  const char* name() const override { return "volume"; }
  bool open(const std::string& path) override;
  std::vector<std::string> bundled() const override;
  bool open_bundled(std::size_t index) override;
  std::string title() const override;

  void update(const FrameInfo& f) override;
  void panel(const FrameInfo& f) override;
  void overlays(const FrameInfo& f, ImDrawList* list) override;
  void draw(const FrameInfo& f) override;

  std::optional<Progress> progress() const override;
  // Loaded and prefiltered (or the load failed, with error() set) and nothing pending.
  // ... and, once the views are laid out (by update() or draw()), the accuracy of the current
  // views measured (or the overlay off or unavailable).
  bool settled() const override;
  // Completes the pending load, then the accuracy measurement of the views as last laid out.
  void finish() override;

  const std::string& error() const override { return error_; }
  void clear_error() override { error_.clear(); }

  // GPU time of each view's slice pass ("axial: prefiltered cubic: precise"), where timer
  // queries mean something (gl::timer_queries_meaningful).
  std::vector<PassTiming> timings() const override;

  nlohmann::json report() const override;

  // For tests and the shell: the document (nullptr until the first volume is loaded), the
  // geometry, the window/level and each view's method (by plane).
  const VolumeDocument* document() const { return doc_.get(); }
  SliceGeometry& geometry() { return geometry_; }
  const WindowLevel& window_level() const { return window_level_; }
  void set_window_level(const WindowLevel& wl);
  gl::Fetch method(Plane p) const;
  void set_method(Plane p, gl::Fetch f);
  // The accuracy overlay (its results by plane index, once measured).
  AccuracyOverlay& accuracy() { return accuracy_; }
  const AccuracyOverlay& accuracy() const { return accuracy_; }
  // The ray-cast 3-D view (active or not).
  RaycastView& view3d() { return view3d_; }
  // The accuracy jobs of the current views (by plane: method and slice_grid of its cell).
  std::vector<AccuracyJob> accuracy_jobs() const;
  // The accuracy of a streamed view p, measured on its box (nullptr: not streamed or not yet).
  const AccuracyResult* detail_accuracy(Plane p) const;
  // Streaming of an overview's full resolution (volume_stream.h): each view's plan for its
  // current grid (nothing to stream at full resolution), and the box it draws from (nullptr:
  // the overview).
  std::array<DetailPlan, 4> detail_plans() const;
  const DetailTextures* detail(Plane p) const;
  const VolumeStreamer& streamer() const { return streamer_; }
  // The readout over a streamed view p at volume position `pos` (the overview's index): the
  // file's nearest voxel (array order), its value as the file stores it, and p's method
  // evaluated on the streamed box (CPU, double) at the file position; nullopt where p does not
  // stream or `pos` lies outside its box.
  struct FullResolutionValue {
    std::array<std::size_t, 3> voxel{};
    double raw = 0;
    double method_value = 0;
  };
  std::optional<FullResolutionValue> full_resolution_value(Plane p, const glm::dvec3& pos) const;

 private:
  struct PendingLoad {
    std::string label;  // "mri_t1_head.nrrd"
    std::future<DecodedVolume> decoded;
  };
  enum class Drag { None, Crosshair, Pan, WindowLevel };

  void start_load(std::string label, std::function<DecodedVolume()> decode);
  void complete_load();  // the pending decode must be ready
  void poll_load();
  // The 2x2 grid's cells from f.area (by plane), and a pending fit.
  void lay_out(const FrameInfo& f);
  void fit_if_pending();
  // Makes the meter on first need (or records why there is none), then feeds it the current
  // jobs (AccuracyOverlay::update); errors go to error_.
  void update_accuracy(double time_s, bool now);
  bool accuracy_settled() const;
  // Feeds the streamer the current plans (debounced; at once with `now`); errors to error_.
  void update_streaming(double time_s, bool now);
  // Where view p's status line (streamed or overview, and why) stands; empty at full resolution.
  std::string detail_status(Plane p, const DetailPlan& plan) const;
  void handle_input(const FrameInfo& f);
  const Rect& cell(Plane p) const { return cells_[plane_index(p)]; }
  std::optional<Plane> plane_at(const glm::dvec2& w) const;
  void readout_panel();
  // Derivative views: what view p shows and its display range (the range computed on first
  // need), why its method cannot show it (empty when it can), and the factors of the derivatives
  // per axis (texture order x, y, z): 1 / spacing of the textures view p draws from (per mm).
  QuantityView quantity_view(Plane p) const;
  std::string quantity_problem(Plane p) const;
  // The view's quantity (not Value) at voxel position pos (array order z, y, x) of the document,
  // CPU double, raw units per mm (axis_scale(false)), one value per channel; empty where the
  // view shows values, cannot show its quantity or the document keeps no readout coefficients.
  std::vector<double> quantity_at(Plane p, const glm::dvec3& pos) const;
  std::array<double, 3> axis_scale(bool streamed) const;
  // The GRBF views (grbf_views.h): whether a view shows it, the per-frame solve, and the upload
  // of its weights into grbf_texture_ (and the meter's reference).
  bool grbf_wanted() const;
  void update_grbf(double time_s, bool now);
  void use_grbf(const GrbfSolution& s);
  VolumeGrbf grbf_view() const;
  // The smoothing (as the zoom mode's): start_smoothing applies `lambda` (CUDA through the
  // interop at once, or a CPU job), poll_smoothing adopts a finished CPU job; apply_coefficients
  // stores them (uploading unless already there) and resets the meter, the automatic ranges and
  // an overview's streaming (its boxes are prefiltered with lambda 0: off while lambda > 0).
  void start_smoothing(double lambda);
  void poll_smoothing(bool wait);
  void apply_coefficients(ArrayF coefficients, double lambda, bool uploaded);
  void smoothing_panel(const FrameInfo& f);

  VolumeOptions options_;
  VolumeLimits limits_;
  std::unique_ptr<VolumeDocument> doc_;
  std::optional<PendingLoad> pending_;
  std::vector<std::future<DecodedVolume>> abandoned_;  // superseded loads, dropped when done
  bool first_load_ = true;
  std::unique_ptr<SlicePass> pass_;
  bool pass_failed_ = false;
  bool timers_meaningful_ = false;
  std::array<gl::GpuTimer, 4> timers_;  // by plane
  std::array<FrameHistory<kHistoryLength>, 4> pass_ms_;
  std::array<std::string, 4> pass_names_;

  SliceGeometry geometry_;
  std::array<Rect, 4> cells_{};  // by plane, framebuffer pixels
  bool laid_out_ = false;        // cells_ come from a non-empty area
  bool fit_pending_ = false;
  bool zoom_pending_ = false;  // options_.zoom, after the first fit
  WindowLevel window_level_;
  std::array<gl::Fetch, 4> methods_{};
  bool one_method_ = true;
  std::array<gl::Quantity, 4> quantities_{};  // by plane
  GrbfViews grbf_;
  double sigma_ = 1.0;        // the panel's slider (applied when it has rested)
  gl::Texture grbf_texture_;  // the float weights, R32F 3-D; empty until solved
  gl::GrbfFetchOptions grbf_fetch_;
  mutable std::map<std::string, double> quantity_ranges_;  // automatic ones, per document
  // The readout's double splines (0: the coefficients; 1: the samples, for the unfiltered
  // cubic), made when a quantity is first read; dropped with the coefficients they copy.
  mutable std::shared_ptr<const SplineDerivatives<double>> readout_spline_[2];

  std::optional<Plane> hover_;
  glm::dvec2 cursor_{0.0};
  Drag drag_ = Drag::None;
  Plane drag_plane_ = Plane::Axial;
  double wheel_accum_ = 0.0;
  std::string error_;

  VolumeStreamer streamer_;
  AccuracyOverlay accuracy_;
  // A streamed view's own overlay (by plane): a meter on its box's textures against the box's
  // coefficients in double (volume_stream.h), remade when the box changes.
  std::array<AccuracyOverlay, 4> detail_accuracy_;
  // What each one measures: the box's exact values (new for every streamed box).
  std::array<const ArrayD*, 4> detail_accuracy_of_{};
  void update_detail_accuracy(double time_s, bool now);
  RaycastView view3d_;
  bool meter_made_ = false;  // for doc_: the meter made, or refused (accuracy_.note())
  double time_s_ = 0.0;      // of the last update()

  // Smoothing: the slider, the lambda the coefficients were made with, the pending CPU job.
  double lambda_setting_ = 0.0;
  double lambda_ = 0.0;
  double lambda_changed_s_ = -1.0;
  std::future<ArrayF> smoothing_;
  double smoothing_lambda_ = 0.0;
  std::chrono::steady_clock::time_point smoothing_start_{};
  double smoothing_ms_ = 0.0;
  std::string smoothing_path_ = "cpu";
  std::string smoothing_note_;  // why the slider is off (no samples kept), else empty
};

}  // namespace sv::viewer
