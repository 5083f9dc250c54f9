// How the viewer splits its image area into views: one view, two side by side, a 2x2 grid, or
// one view split by a draggable wipe divider (two methods, left and right of it). Pure
// geometry, shared by the viewer and the screenshot checks so that both place the views alike.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "view_transform.h"

namespace sv::viewer {

enum class Layout { Single, Pair, Grid, Wipe };

// "single", "pair", "grid", "wipe".
const char* layout_name(Layout layout);
std::optional<Layout> parse_layout(const std::string& name);

// Methods a layout shows at once: 1, 2, 4, and 2 for the wipe (left and right).
int method_count(Layout layout);

// Pixels between adjacent views.
constexpr int kViewGap = 4;

// The views' rectangles in window coordinates, in method order (row by row), all of the same
// integer size so that one view transform in cell-local coordinates shows the same image
// region in each. The wipe is one cell. `area` should have integer corners.
std::vector<Rect> layout_cells(Layout layout, const Rect& area);

// The wipe divider's window x for a divider `fraction` (0..1) of the cell's width, on a pixel
// boundary.
int wipe_divider_x(const Rect& cell, double fraction);

// The magnifier loupe's square (side `side`, at most the cell's smaller extent) beside the
// cursor: `offset` pixels below and right of it, flipped to the other side where it would leave
// the cell, kept inside the cell, on whole pixels.
Rect loupe_rect(const Rect& cell, const glm::dvec2& cursor, double side, double offset);

}  // namespace sv::viewer
