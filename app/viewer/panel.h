// The viewer's ImGui side panel. It only edits the settings it is given and reports what the
// user asked for (open a file, reset the view, ...); it never computes or touches GL itself.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include <glm/glm.hpp>

#include "frame_history.h"
#include "panel_widgets.h"
#include "image_document.h"
#include "layout.h"
#include "splineview/gl/evaluator.h"
#include "view_transform.h"

namespace sv::viewer {

// What the user can change from the panel (and the keyboard).
struct ViewerSettings {
  Layout layout = Layout::Single;
  // The method of each view in layout order (single: [0]; pair and wipe: [0] left, [1] right;
  // grid: row by row). The A/B key swaps [0] and [1].
  std::array<gl::Fetch, 4> methods = {gl::Fetch::CubicOtf, gl::Fetch::Nearest, gl::Fetch::Linear,
                                      gl::Fetch::CubicUnfiltered};
  float angle_deg = 0.0f;     // view rotation, counter-clockwise as displayed
  float wipe = 0.5f;          // wipe divider, fraction of the view's width from its left
  bool loupe = false;         // magnifier inset at the cursor
  float loupe_factor = 4.0f;  // its zoom relative to the view
};

// The readout under the cursor: one entry per view (per wipe side).
struct ReadoutEntry {
  gl::Fetch method = gl::Fetch::Nearest;
  std::vector<double> values;  // one per channel; empty outside the image
};

// What the panel shows; all read-only.
struct PanelView {
  const ImageDocument* document = nullptr;  // null when no image is loaded
  const std::string* error = nullptr;       // last error, empty when none
  const ViewTransform* view = nullptr;
  std::optional<glm::dvec2> cursor_image;  // image position under the cursor
  std::vector<ReadoutEntry> readout;       // reference values there, per view
  const FrameHistory<kHistoryLength>* cpu_frame_ms = nullptr;
  const FrameHistory<kHistoryLength>* gpu_pass_ms = nullptr;
  std::string gl_description;
  bool gpu_timer_meaningful = true;  // false on software renderers (gl::timer_queries_meaningful)
};

// Requests from the user, handled by the viewer after the panel is drawn.
struct PanelActions {
  std::optional<std::string> open_path;
  bool fit_view = false;
  bool one_to_one = false;
  bool dismiss_error = false;
  bool swap_ab = false;
};

class Panel {
 public:
  // Width of the panel in window pixels at the given UI scale.
  static float width(float scale) { return 360.0f * scale; }

  PanelActions draw(ViewerSettings& settings, const PanelView& view, float scale);

 private:
  std::array<char, 1024> path_buffer_{};
};

}  // namespace sv::viewer
