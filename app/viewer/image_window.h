// The display window of the 2-D modes (zoom and rotate): the window in the file's raw units,
// whether it is the automatic one, the mouse drag that changes it (the volume mode's binding:
// middle drag or Shift + left drag, right widens, down raises the level), its panel section
// (window/level and min/max fields, reset (auto), full range of the type, data min..max) and
// its part of the --report JSON. The window reaches the views as a DisplayMap on the normalised
// textures, applied after the interpolation (display_window.h).
#pragma once

#include <optional>

#include <glm/glm.hpp>
#include <nlohmann/json.hpp>

#include "display_window.h"
#include "image_document.h"

namespace sv::viewer {

class ImageWindow {
 public:
  // A new image: the automatic window (range.auto_window()), or the given width and/or level
  // (raw units; a missing one is the automatic window's), which then counts as the user's.
  void reset(const DisplayRange& range, std::optional<double> window = std::nullopt,
             std::optional<double> level = std::nullopt);
  // The user's window (width at least kMinWindow), and back to the automatic one.
  void set(const WindowLevel& wl);
  void set_auto();

  const WindowLevel& window_level() const { return wl_; }
  bool is_auto() const { return !user_; }
  const DisplayRange& range() const { return range_; }
  // What the view shader applies: the identity for the automatic window (the textures are
  // normalised by it), else display_map(window, scale).
  DisplayMap map() const;

  // Mouse input of a frame (needs an ImGui context): a middle click or Shift + left click while
  // `hovering` a view starts a drag, which follows the mouse until its button is released;
  // `delta_px` is the mouse movement in framebuffer pixels. Returns true while a window drag
  // is in progress (the caller then neither pans nor drags anything else).
  bool handle_drag(bool hovering, const glm::dvec2& delta_px);
  bool dragging() const { return dragging_; }

  // The "Display window" panel section.
  void panel(float ui_scale);

  // {"lo", "hi", "window", "level" (raw units), "source": "auto" | "user", "auto": [lo, hi],
  //  "units": "raw", "data_range": [min, max], "type_range": [min, max] or null,
  //  "data_scale": {"offset", "scale"} (raw = offset + scale * normalised)}
  nlohmann::json report() const;

 private:
  DisplayRange range_;
  WindowLevel wl_;
  bool user_ = false;
  bool dragging_ = false;
};

}  // namespace sv::viewer
