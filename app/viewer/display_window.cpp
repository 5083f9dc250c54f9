// Window/level arithmetic shared by the viewer's modes (see display_window.h).
#include "display_window.h"

#include <algorithm>

namespace sv::viewer {

WindowLevel drag_window_level(const WindowLevel& wl, const glm::dvec2& delta_px, double per_pixel) {
  return {std::max(wl.window + delta_px.x * per_pixel, kMinWindow),
          wl.level + delta_px.y * per_pixel};
}

double window_drag_per_pixel(double data_min, double data_max) {
  return std::max(data_max - data_min, 1e-6) / 500.0;
}

DisplayMap display_map(const WindowLevel& wl, const DataScale& scale) {
  return {static_cast<float>(scale.normalised(wl.low())),
          static_cast<float>(scale.scale / wl.window)};
}

float display_grey(float normalised, const DisplayMap& map) {
  const float g = (normalised - map.low) * map.gain;
  return g < 0.0f ? 0.0f : (g > 1.0f ? 1.0f : g);
}

}  // namespace sv::viewer
