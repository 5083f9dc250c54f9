// The viewer's volume slices mode: a 2x2 grid of the axial, coronal, sagittal and an oblique
// plane through one shared crosshair point, each drawn in millimetres (anisotropic voxels keep
// their proportions) with one of the six reconstruction methods of the 2-D view, grey through
// window/level. The volume loads without blocking the UI: a worker thread reads and decodes the
// file, update() then uploads and prefilters it on the GL thread (volume_document.h).
//
// Mouse and keys over a view (also listed in the panel):
//   left click/drag        moves the crosshair (within that view's plane)
//   wheel                  next/previous slice of that view (one voxel along its normal)
//   Ctrl+wheel             zoom about the cursor (all views alike while "link zoom" is on)
//   right drag             pan that view
//   middle drag or Shift+left drag   window/level: right widens the window, down raises the
//                          level (darker)
//   Up/Down, PgUp/PgDn     next/previous slice of the view under the cursor
//   1..6                   method of the view under the cursor (of all views while "one
//                          method for all views" is on)
//   R                      fit all views
#pragma once

#include <array>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mode.h"
#include "slice_geometry.h"
#include "slice_pass.h"
#include "splineview/gl/evaluator.h"
#include "splineview/gl/timer.h"
#include "splineview/io.h"
#include "volume_document.h"

namespace sv::viewer {

struct VolumeOptions {
  // The volume file (NRRD, NIfTI-1 .nii/.nii.gz, .npy, or raw with `raw`); empty: the bundled
  // MRI head (assets/mri_t1_head.nrrd, found like default_image_path()).
  std::string path;
  // How to read a path without a known extension (headerless raw data).
  std::optional<RawSpec> raw;
  // The method of all four views at the start.
  gl::Fetch method = gl::Fetch::CubicOtf;
  // The first volume's window and level (in the volume's values); each defaults to the
  // document's (decode_volume: percentiles for integer data, the range for float data).
  std::optional<double> window;
  std::optional<double> level;
  // false: prefilter on the CPU even where CUDA could (the interop's CPU path).
  bool allow_cuda = true;
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
  bool settled() const override;
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
  void handle_input(const FrameInfo& f);
  const Rect& cell(Plane p) const { return cells_[plane_index(p)]; }
  std::optional<Plane> plane_at(const glm::dvec2& w) const;
  void readout_panel();

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
  bool fit_pending_ = false;
  WindowLevel window_level_;
  std::array<gl::Fetch, 4> methods_{};
  bool one_method_ = true;

  std::optional<Plane> hover_;
  glm::dvec2 cursor_{0.0};
  Drag drag_ = Drag::None;
  Plane drag_plane_ = Plane::Axial;
  double wheel_accum_ = 0.0;
  std::string error_;
};

}  // namespace sv::viewer
