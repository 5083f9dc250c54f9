// Grid mappings for the resampling transforms (see grids.h).
#include "splineview/gl/grids.h"

#include <cmath>

namespace sv::gl {

GridMapping rotation_grid(std::size_t height, std::size_t width, double degrees) {
  const double cy = (static_cast<double>(height) - 1) / 2;
  const double cx = (static_cast<double>(width) - 1) / 2;
  const double th = degrees * M_PI / 180.0, c = std::cos(th), s = std::sin(th);
  GridMapping g;
  g.rows = height;
  g.cols = width;
  g.origin = {-cx * s - cy * c + cy, -cx * c + cy * s + cx, 0.0};
  g.step_row = {c, -s, 0.0};
  g.step_col = {s, c, 0.0};
  return g;
}

}  // namespace sv::gl
