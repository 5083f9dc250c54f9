// Small ImGui widgets shared by the side panel and the modes' controls.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <glm/glm.hpp>

#include "accuracy.h"
#include "frame_history.h"
#include "method_pass.h"
#include "splineview/gl/evaluator.h"
#include "view_transform.h"

struct ImDrawList;

namespace sv::viewer {

constexpr std::size_t kHistoryLength = 240;

// A section heading with a rule under it.
void section(const char* title);
// A combo box choosing one of the six methods (kMethods), or of the seven with the GRBF
// (kViewMethods: the zoom and volume modes); returns true when changed.
bool method_combo(const char* label, gl::Fetch* method, bool with_grbf = false);
// A combo box choosing a quantity for a `rank`-D view (gl::quantity_choices); returns true when
// changed. Choices the view's `method` cannot show are listed with the reason.
bool quantity_combo(const char* label, gl::Quantity* quantity, std::size_t rank, gl::Fetch method);
// One sentence on what the method does, for the panel.
const char* method_explanation(gl::Fetch m);
// A line plot of a history with "avg .. max .." over it, full panel width.
void plot(const char* label, const FrameHistory<kHistoryLength>& h, const char* unit, float height);
// Red wrapped text for an error, with a dismiss button; returns true when dismissed.
bool error_text(const std::string& message, const char* id);

// The accuracy overlay's panel section (zoom and volume modes): the measure checkbox, the heat
// map toggle and its opacity, the progress of a measurement, the table of the last results and
// the sentence that says what they are.
struct AccuracyPanel {
  // A label per job ("axial"): the first column shows it with the method under it; empty: the
  // first column shows the method only.
  std::vector<std::string> views;
  bool points_column = false;  // a "points" column (measured pixels per view)
  int digits = 3;              // significant digits of the figures
  // What the figures are, after "current view: " or "previous view: ".
  std::string explanation;
};
void accuracy_section(AccuracyOverlay& overlay, const AccuracyPanel& panel);

// Overlay drawing, in framebuffer pixels (converted with fb_scale to ImGui units): a heat map
// texture over `rect`, and the heat map's colour scale in the bottom-right corner of `area`.
void draw_heat_map(ImDrawList* list, const gl::Texture& heat, const Rect& rect, float opacity,
                   const glm::dvec2& fb_scale);
void draw_heat_legend(ImDrawList* list, const Rect& area, const glm::dvec2& fb_scale,
                      float ui_scale);
// The colour scale of a derivative view (quantity_colour), bottom left of `rect`: the bar from
// -range (0 for a non-negative quantity) to +range with its end and centre values and the unit
// ("per texel", "per mm").
void draw_quantity_legend(ImDrawList* list, const Rect& rect, const QuantityView& view,
                          const char* units, const glm::dvec2& fb_scale, float ui_scale);

}  // namespace sv::viewer
