// Small ImGui widgets shared by the side panel and the modes' controls.
#pragma once

#include <cstddef>

#include "frame_history.h"
#include "splineview/gl/evaluator.h"

namespace sv::viewer {

constexpr std::size_t kHistoryLength = 240;

// A section heading with a rule under it.
void section(const char* title);
// A combo box choosing one of the six methods (kMethods); returns true when changed.
bool method_combo(const char* label, gl::Fetch* method);
// One sentence on what the method does, for the panel.
const char* method_explanation(gl::Fetch m);
// A line plot of a history with "avg .. max .." over it, full panel width.
void plot(const char* label, const FrameHistory<kHistoryLength>& h, const char* unit, float height);
// Red wrapped text for an error, with a dismiss button; returns true when dismissed.
bool error_text(const std::string& message, const char* id);

}  // namespace sv::viewer
