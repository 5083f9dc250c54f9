// The interactive viewer's shell: the window, Dear ImGui, the side panel (mode tabs, file
// field, bundled data, progress, errors, timing, screenshots) around one of the modes
// (mode.h), and the --screenshot / --report run.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "method_pass.h"
#include "mode.h"

namespace sv::viewer {

// How to make a mode; modes are made when first shown and kept while the viewer runs.
struct ModeFactory {
  std::string name;   // "zoom", "rotate", "volume"
  std::string label;  // tab label: "Zoom / rotate", ...
  std::function<std::unique_ptr<Mode>(MethodPass&)> make;
};

struct ViewerOptions {
  std::vector<ModeFactory> modes;  // at least one
  std::string initial_mode;        // one of the names
  std::string screenshot;          // non-empty: render until settled, write this PNG, exit
  std::string report;              // non-empty with screenshot: the mode's figures as JSON
  int screenshot_frames = 3;       // frames rendered after settling before the screenshot
  int measure_frames = 0;          // with screenshot: time this many frames (report, stdout)
  bool headless = false;           // draw offscreen in an EGL context (no window system; no input)
  int width = 1280;
  int height = 800;
};

// Runs until the window closes, or, with a screenshot path, until the screenshot is written.
// Returns the process exit code (screenshot mode: 1 when the mode's data failed to load).
// Throws sv::Error for failures that leave nothing to show (no display, no GL 4.5, ...).
int run_viewer(const ViewerOptions& options);

// One job of a batch (--batch): the options of one screenshot run and a name for messages
// ("jobs.txt:3").
struct BatchJob {
  ViewerOptions options;  // headless, with a screenshot path
  std::string name;
};

// Runs the jobs in order in one headless GL context: the context and the compiled method
// programs are made once and shared; everything else (surface, panel, modes and their data) is
// made for each job as a separate run makes it, so each job writes what the same options would
// in a process of their own. Stops at the first job that fails and returns its exit status
// (after a line naming the job on stderr); 0 when all succeed.
int run_viewer_batch(const std::vector<BatchJob>& jobs);

}  // namespace sv::viewer
