// Window/level: the map from data values to display grey that every mode applies (volume slices
// in their stored values, the zoom and rotate modes in the file's raw units), and the mouse drag
// that changes it, kept free of GL and UI so that the arithmetic can be tested on its own.
//
// A window [low, high] maps a value v to grey clamp((v - low) / (high - low), 0, 1): low is black,
// high white. It is affine up to the clamp, and the clamp is applied only when a pixel is
// displayed, after the interpolation: the methods reconstruct the unclamped data, so the cubic's
// overshoot and every accuracy figure are the same whatever the window.
//
// The 2-D modes keep their images normalised (image_document.h, to_display_range): the textures
// hold v = (raw - offset) / scale, with offset and scale fixed at load time (the auto window),
// and the window the user sets in raw units becomes one more affine map on v in the view shader
// (DisplayMap).
#pragma once

#include <glm/glm.hpp>

namespace sv::viewer {

// Window width and centre (level): a value maps to grey clamp((value - (level - window / 2)) /
// window, 0, 1), so window = 1, level = 0.5 is the identity on [0, 1].
struct WindowLevel {
  double window = 1.0;  // > 0
  double level = 0.5;

  double low() const { return level - window / 2.0; }   // black
  double high() const { return level + window / 2.0; }  // white
  // The window from its black and white values (high > low).
  static WindowLevel from_range(double low, double high) {
    return {high - low, low + (high - low) / 2.0};
  }
};

// The smallest window width the drag and the fields allow.
constexpr double kMinWindow = 1e-12;

// Mouse drag on window/level, the same in every mode (the volume mode's convention, as in
// medical viewers): middle drag or Shift + left drag; moving right widens the window (lower
// contrast), moving down raises the level (darker image); `delta_px` in framebuffer pixels
// (x right, y down). The window never drops below kMinWindow.
WindowLevel drag_window_level(const WindowLevel& wl, const glm::dvec2& delta_px, double per_pixel);
// Value change per pixel of drag: a drag of 500 pixels spans the data range [min, max].
double window_drag_per_pixel(double data_min, double data_max);

// How the 2-D modes' textures relate to the file's values: raw = offset + scale * normalised.
struct DataScale {
  double offset = 0.0;
  double scale = 1.0;  // > 0
  double raw(double normalised) const { return offset + scale * normalised; }
  double normalised(double raw) const { return (raw - offset) / scale; }
};

// The map view.frag applies to the normalised colour channels (not alpha) before the clamp:
// grey = clamp((v - low) * gain, 0, 1). The default is the identity.
struct DisplayMap {
  float low = 0.0f;
  float gain = 1.0f;
};
// The map of window `wl` (raw units) for textures normalised by `scale`, in float as the shader
// receives it.
DisplayMap display_map(const WindowLevel& wl, const DataScale& scale);
// The display grey of a normalised value, computed as view.frag computes it.
float display_grey(float normalised, const DisplayMap& map);

}  // namespace sv::viewer
