// View layouts of the viewer (see layout.h).
#include "layout.h"

#include <algorithm>
#include <cmath>

namespace sv::viewer {

const char* layout_name(Layout layout) {
  switch (layout) {
    case Layout::Single:
      return "single";
    case Layout::Pair:
      return "pair";
    case Layout::Grid:
      return "grid";
    case Layout::Wipe:
      return "wipe";
  }
  return "?";
}

std::optional<Layout> parse_layout(const std::string& name) {
  for (Layout l : {Layout::Single, Layout::Pair, Layout::Grid, Layout::Wipe})
    if (name == layout_name(l)) return l;
  return std::nullopt;
}

int method_count(Layout layout) {
  switch (layout) {
    case Layout::Single:
      return 1;
    case Layout::Pair:
    case Layout::Wipe:
      return 2;
    case Layout::Grid:
      return 4;
  }
  return 1;
}

std::vector<Rect> layout_cells(Layout layout, const Rect& area) {
  const int columns = layout == Layout::Pair || layout == Layout::Grid ? 2 : 1;
  const int rows = layout == Layout::Grid ? 2 : 1;
  // Equal integer cells: the remainder pixel of an odd split stays unused at the right/bottom.
  const double w = std::max(1.0, std::floor((area.width - (columns - 1) * kViewGap) / columns));
  const double h = std::max(1.0, std::floor((area.height - (rows - 1) * kViewGap) / rows));
  std::vector<Rect> cells;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < columns; ++c)
      cells.push_back({area.x + c * (w + kViewGap), area.y + r * (h + kViewGap), w, h});
  return cells;
}

int wipe_divider_x(const Rect& cell, double fraction) {
  return static_cast<int>(std::lround(cell.x + std::clamp(fraction, 0.0, 1.0) * cell.width));
}

Rect loupe_rect(const Rect& cell, const glm::dvec2& cursor, double side, double offset) {
  side = std::round(std::min({side, cell.width, cell.height}));
  double x = cursor.x + offset, y = cursor.y + offset;
  if (x + side > cell.x + cell.width) x = cursor.x - offset - side;
  if (y + side > cell.y + cell.height) y = cursor.y - offset - side;
  x = std::clamp(x, cell.x, cell.x + cell.width - side);
  y = std::clamp(y, cell.y, cell.y + cell.height - side);
  return {std::round(x), std::round(y), side, side};
}

}  // namespace sv::viewer
