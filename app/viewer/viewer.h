// The interactive viewer: window, ImGui panel, input (zoom, pan, rotation, keys, dropped files),
// the zoom/rotate compare mode (up to four synchronised views or a split wipe, each with its own
// reconstruction method, a magnifier loupe, a readout under the cursor) with its GPU timer, and
// the --screenshot mode.
#pragma once

#include <array>
#include <optional>
#include <string>

#include <glm/glm.hpp>

#include "layout.h"
#include "splineview/gl/evaluator.h"

namespace sv::viewer {

struct ViewerOptions {
  std::string image;  // empty: the bundled default image
  Layout layout = Layout::Single;
  // Methods of the views in layout order; std::nullopt keeps the viewer's default for that view.
  std::array<std::optional<gl::Fetch>, 4> methods;
  double angle_deg = 0;              // view rotation, counter-clockwise as displayed
  std::optional<double> zoom;        // window pixels per sample; empty: fit the image
  std::optional<glm::dvec2> center;  // image position (x, y) shown at the view's centre
  std::string screenshot;            // non-empty: render, write this PNG and exit
  int screenshot_frames = 3;         // frames rendered after loading before the screenshot
  int width = 1280;
  int height = 800;
};

// Runs until the window closes, or, with a screenshot path, until the screenshot is written.
// Returns the process exit code. Interactive mode falls back to the default image when the
// given one cannot be loaded (and shows why); screenshot mode treats that as a failure.
// Throws sv::Error for failures that leave nothing to show (no display, no GL 4.5, ...).
int run_viewer(const ViewerOptions& options);

}  // namespace sv::viewer
