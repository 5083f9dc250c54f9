// The viewer's repeated-rotation mode: an image turned K times by the same angle, each step
// resampling the previous result, side by side for up to four reconstruction methods, with the
// PSNR after every step against the original turned once by the same total angle (exact model)
// and against the original itself (the experiment of `splinetool resample --rotate A
// --repeat K --backend gl --compare-original --disc 0.35`, computed by RotationRun).
//
// - The image is decoded off the GL thread (std::async) and the run advances a few ms per frame,
//   so the UI stays live; progress() names the step in work.
// - Views: one per method (single, pair or 2x2 grid), all under one view transform (wheel zooms
//   about the cursor, drag pans, R fits), each showing that method's result at the displayed
//   step drawn with nearest (every pixel is one result sample), or instead its error image:
//   grey = min(1, gain x max over channels |result - original|), gain 10 by default, so black
//   is exact and white an error of a tenth of the range or more. The measuring disc is outlined.
// - Display window (image_window.h): in the file's raw units, automatic by default, middle or
//   Shift + left drag, panel fields and presets; applied to the results as drawn (not to the
//   error image). The readout gives the pixel under the cursor in raw units: the original's
//   stored value and each method's result at the shown step.
// - Controls: methods per view, angle per step, K, the CUDA prefilter choice, restart; step
//   back/forward, play/pause (4 steps per second; keys Left, Right, Space), a scrub slider over
//   0..K, and a PSNR-vs-step plot (one curve per method, legend, current step marked; click or
//   drag in it to scrub).
// While the run computes, the display follows the newest step done by every method until the
// user scrubs, steps or plays.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "method_pass.h"
#include "mode.h"

namespace sv::viewer {

struct RotateOptions {
  std::string image;  // a file to open; empty: the bundled photograph (default_image_path())
  std::vector<gl::Fetch> methods = {gl::Fetch::Nearest, gl::Fetch::Linear, gl::Fetch::CubicOtf,
                                    gl::Fetch::CubicPrecise};  // 1..4, one view each
  double step_deg = 10.0;                                      // degrees per step
  int steps = 36;                                              // K
  bool cuda_prefilter = true;  // prefilter with CUDA when a device is available (else the CPU)
  double disc = 0.35;          // PSNR inside disc_mask(H, W, disc); 0 = the whole image
  // The first image's display window in raw units (--window, --level; a missing one is the
  // automatic window's), and image positions (x, y) whose readout the report lists (--probe).
  std::optional<double> window;
  std::optional<double> level;
  std::vector<glm::dvec2> probes;
};

class RotateMode final : public Mode {
 public:
  // Starts decoding options.image (or the bundled photograph) in the background; nothing GL
  // happens before the first update(). Bad option values are reported through error() once the
  // run is built, never thrown. `pass` must outlive the mode.
  RotateMode(const RotateOptions& options, MethodPass& pass);
  ~RotateMode() override;
  RotateMode(const RotateMode&) = delete;
  RotateMode& operator=(const RotateMode&) = delete;

  const char* name() const override { return "rotate"; }
  // A missing file is refused at once (false, error()); decoding happens in the background and
  // its errors arrive through error(), the previous image staying.
  bool open(const std::string& path) override;
  // "photograph (coffee.png)", "zone plate 512 x 512", "resolution chart 512 x 512".
  std::vector<std::string> bundled() const override;
  bool open_bundled(std::size_t index) override;
  std::string title() const override;

  // Works without an ImGui context (headless tests): input is then skipped.
  void update(const FrameInfo& f) override;
  void panel(const FrameInfo& f) override;
  void overlays(const FrameInfo& f, ImDrawList* list) override;
  void draw(const FrameInfo& f) override;

  std::optional<Progress> progress() const override;
  // Image loaded and every step of every method done (or the run stopped by an error, which
  // error() shows: nothing is pending then either).
  bool settled() const override;
  void finish() override;

  const std::string& error() const override;
  void clear_error() override;

  // {"mode": "rotate", "image", "step_deg", "steps", "disc", "prefilter": "cpu" | "cuda",
  //  "prefilter_notice", "steps_done", "kept": "float" | "16-bit",
  //  "methods": [{"method": gl::fetch_name, "psnr_db": [step 1..], "rms": [step 1..],
  //               "prefilter_ms_per_step", "gpu_ms_per_step" (null on software renderers),
  //               "rect": the view as last drawn, [x, y, width, height] framebuffer pixels}],
  //  "display_window": ImageWindow::report(), "readout": [{"position", "pixel", "step",
  //  "stored", "values": {method: [raw per channel]}} per probe]}
  // PSNR entries are null where +inf (identical images); PSNR and RMS in normalised units
  // (peak 1 = "raw_per_unit" raw units).
  nlohmann::json report() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sv::viewer
