// The volume mode's ray-cast 3-D view (issue 17 part 5): the whole image area shows the volume
// ray cast (raycast_renderer.h, shaders/raycast.comp) in one to four panes side by side, one
// method each (default cubic precise | cubic otf | trilinear) under one shared orbit camera, so
// that surface smoothness and normals can be compared. Modes: maximum intensity projection (grey
// through the mode's window/level), isosurface (Blinn-Phong, normal from the spline gradient),
// DVR (a transfer function preset over an editable value range and opacity).
//
// Mouse over the view: left drag rotates (as 3D Slicer's 3-D view), wheel zooms, double-click
// (or R) resets the camera.
//
// Accuracy overlay (as the slice views'): once the camera and settings have been still for
// AccuracyOverlay::kDebounceS, every n-th ray of each pane (about 3000 rays per pane) is cast on
// the GPU into a small image and read back, and the same rays are marched on a worker thread in
// double (march_ray: the method's spline in double, converged bisection); RMS and max per pane
// (MIP value, iso depth in mm and normal angle in degrees, DVR premultiplied RGBA) are shown on
// the pane and in the report. For data with an analytic origin (Marschner-Lobb) the panel (or
// --reference truth) measures against that function instead: each method's true error. The GPU
// time of each pane (gl::GpuTimer) joins the timing overlay.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frame_history.h"
#include "mode.h"
#include "raycast_reference.h"
#include "raycast_renderer.h"
#include "splineview/gl/timer.h"

namespace sv::viewer {

struct VolumeDocument;

// What the 3-D view starts with (command line: --view3d, --view3d-methods, --iso, --tf, ...).
struct RaycastOptions {
  bool active = false;  // show the 3-D view instead of the slices
  RayMode mode = RayMode::Iso;
  std::vector<gl::Fetch> methods = {kRayMethods.begin(), kRayMethods.end()};
  double step = 0.5;              // voxels
  std::optional<double> iso;      // default: 30% into the display window
  std::string tf_preset;          // default: "MRI soft tissue" ("CT bone" for CT-like ranges)
  std::optional<double> opacity;  // per mm
  bool dvr_shade = false;         // DVR: shade by the gradient (RaySettings::dvr_shade)
  double yaw_deg = 120.0, pitch_deg = 10.0;  // from behind the patient's right ear
  bool accuracy = true;
  // Measure against the function the data was sampled from where the volume has one
  // (Marschner-Lobb; --reference truth): each method's true error instead of its float error.
  bool truth = false;
};

class RaycastView {
 public:
  explicit RaycastView(RaycastOptions options = {});
  ~RaycastView();
  RaycastView(const RaycastView&) = delete;
  RaycastView& operator=(const RaycastView&) = delete;

  bool active() const { return options_.active; }
  void set_active(bool on) { options_.active = on; }

  // Per frame while active, with the mode's document and window/level: picks up a new document
  // (camera fitted, settings defaulted from its window), handles the mouse over f.area, and
  // advances the accuracy measurement (at once with f.batch).
  void update(const FrameInfo& f, const VolumeDocument& doc, const WindowLevel& wl);
  // The panel section (shown whether active or not: the toggle lives here).
  void panel(const FrameInfo& f, const VolumeDocument* doc);
  void overlays(const FrameInfo& f, ImDrawList* list);
  void draw(const FrameInfo& f);

  bool settled() const;
  void finish();
  std::vector<PassTiming> timings() const;
  nlohmann::json report() const;
  const std::string& error() const { return error_; }
  void clear_error() { error_.clear(); }

  // For tests: the camera, the settings, the panes' last accuracy.
  OrbitCamera& camera() { return camera_; }
  RaySettings& settings() { return settings_; }

 private:
  struct Pane {
    gl::Fetch method;
    Rect rect;
    RayTarget target;
    gl::GpuTimer timer;
    FrameHistory<kHistoryLength> ms;
    std::string name;
    std::optional<RayErrors> accuracy;
  };
  struct Measurement;  // one in flight

  void set_document(const VolumeDocument& doc, const WindowLevel& wl);
  void lay_out(const Rect& area);
  void handle_input(const FrameInfo& f);
  void update_accuracy(double time_s, bool now);
  // A fingerprint of everything a pane's picture depends on (camera, settings, panes, sizes).
  std::string state_key() const;
  void apply_methods();

  RaycastOptions options_;
  std::unique_ptr<RaycastRenderer> renderer_;
  bool renderer_failed_ = false;
  const VolumeDocument* doc_ = nullptr;
  WindowLevel wl_;
  OrbitCamera camera_;
  RaySettings settings_;
  RayDrawOptions draw_options_;
  std::vector<Pane> panes_;
  bool timers_meaningful_ = false;
  double value_min_ = 0.0, value_max_ = 1.0;
  std::string tf_preset_;
  float tf_low_ = 0.0f, tf_high_ = 1.0f, opacity_ = 0.05f;

  bool dragging_ = false;
  glm::dvec2 last_mouse_{0.0};

  // Accuracy: the double data (exact samples and their coefficients), made once per document.
  std::shared_ptr<const ArrayD> exact_;
  std::shared_ptr<const ArrayD> exact_coefficients_;
  std::unique_ptr<Measurement> measuring_;
  std::string measured_key_;  // state_key() of the panes' accuracy
  std::string changed_key_;
  double changed_s_ = 0.0;
  std::string accuracy_note_;
  std::function<double(const double*)> truth_;  // the document's analytic function, if any
  std::string error_;
};

}  // namespace sv::viewer
