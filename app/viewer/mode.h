// One of the viewer's modes (zoom/rotate compare, repeated rotation, volume slices). The viewer
// shell owns the window, the ImGui frame, the side panel's window, file opening and the timing
// section; a mode owns its document, its views, its controls and its long-running work.
//
// Per frame the shell calls, in this order:
//   update()    input (when ImGui does not want it) and at most one bounded unit of pending
//               work (a few ms on a GPU), so the UI stays live while long work runs;
//   panel()     the mode's controls, inside the side panel window (plain ImGui calls);
//   overlays()  labels and frames over the views, on ImGui's background draw list (ImGui
//               coordinates = framebuffer pixels / FrameInfo::fb_scale);
//   draw()      after ImGui::Render(), the GL views into the default framebuffer (the UI is
//               drawn on top afterwards). GL state must be left as found (gl::ScopedState).
// All calls happen on the thread that owns the GL context. Modes report errors through
// error() and keep running; they never throw out of these calls except for GL context loss.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <glm/glm.hpp>
#include <nlohmann/json.hpp>

#include "frame_history.h"
#include "panel_widgets.h"
#include "view_transform.h"

struct ImDrawList;

namespace sv::viewer {

struct FrameInfo {
  Rect area;  // the image area right of the panel: framebuffer pixels, origin top left
  int fb_width = 0, fb_height = 0;
  glm::dvec2 fb_scale{1.0, 1.0};  // framebuffer pixels per ImGui coordinate unit
  float ui_scale = 1.0f;          // UI scale (1 at 96 dpi); sizes in the UI scale with it
  bool mouse_free = true;         // ImGui does not want the mouse: the views may use it
  bool keyboard_free = true;      // ImGui does not want the keyboard
  double time_s = 0;              // seconds since the viewer started (for animation)
  // Screenshot run: nobody interacts, so pending work may take the whole frame (no budget,
  // no debouncing); the view still settles through settled().
  bool batch = false;
};

// A named unit of long work in progress, for the shell's progress bar.
struct Progress {
  std::string what;       // "rotating: step 12 of 36 (cubic, on the fly)"
  float fraction = 0.0f;  // 0..1; negative: not known (an indeterminate bar)
};

struct PassTiming {
  std::string name;
  const FrameHistory<kHistoryLength>* history = nullptr;  // milliseconds per frame
};

class Mode {
 public:
  virtual ~Mode() = default;

  // "zoom", "rotate", "volume".
  virtual const char* name() const = 0;

  // Opens a file (command line, drop, file field). Returns false and sets error() when it
  // cannot be shown; the previous document stays.
  virtual bool open(const std::string& path) = 0;
  // The mode's bundled defaults, by label (e.g. "photograph (coffee.png)", "zone plate").
  virtual std::vector<std::string> bundled() const = 0;
  virtual bool open_bundled(std::size_t index) = 0;
  // Title for the window ("coffee.png", "Marschner-Lobb 64^3").
  virtual std::string title() const = 0;

  virtual void update(const FrameInfo& f) = 0;
  virtual void panel(const FrameInfo& f) = 0;
  virtual void overlays(const FrameInfo& f, ImDrawList* list) = 0;
  virtual void draw(const FrameInfo& f) = 0;

  // Long work still to do (nullopt when idle).
  virtual std::optional<Progress> progress() const = 0;
  // True when the view is final: document loaded and no pending work. The screenshot mode
  // renders until settled (calling finish() first).
  virtual bool settled() const = 0;
  // Runs the pending work to completion now (screenshot mode only; blocks).
  virtual void finish() = 0;

  // The last error for the UI (empty when none), and dismissing it.
  virtual const std::string& error() const = 0;
  virtual void clear_error() = 0;

  // GPU time of the mode's passes, named in words a user understands ("view 1: prefiltered
  // cubic, LUT"), each with its recent history (GL timer queries, buffered: see gl::GpuTimer),
  // and other measured times (the CUDA prefilter's event time). The shell shows them with the
  // frame time. Default: none.
  virtual std::vector<PassTiming> timings() const { return {}; }

  // The figures the mode shows (accuracy, PSNR curves, view parameters), for --report and
  // the tests that compare them with splinetool.
  virtual nlohmann::json report() const = 0;
};

}  // namespace sv::viewer
