// The display window of the zoom and rotate modes (see image_window.h).
#include "image_window.h"

#include <algorithm>
#include <cstdio>

#include <imgui.h>

#include "panel_widgets.h"

namespace sv::viewer {

void ImageWindow::reset(const DisplayRange& range, std::optional<double> window,
                        std::optional<double> level) {
  range_ = range;
  dragging_ = false;
  set_auto();
  if ((window && *window > 0) || level) {
    WindowLevel wl = wl_;
    if (window && *window > 0) wl.window = *window;
    if (level) wl.level = *level;
    set(wl);
  }
}

void ImageWindow::set(const WindowLevel& wl) {
  wl_ = {std::max(wl.window, kMinWindow), wl.level};
  user_ = true;
}

void ImageWindow::set_auto() {
  wl_ = range_.auto_window();
  user_ = false;
}

DisplayMap ImageWindow::map() const {
  return user_ ? display_map(wl_, range_.scale) : DisplayMap{};
}

bool ImageWindow::handle_drag(bool hovering, const glm::dvec2& delta_px) {
  const ImGuiIO& io = ImGui::GetIO();
  if (!dragging_ && hovering &&
      (ImGui::IsMouseClicked(ImGuiMouseButton_Middle) ||
       (io.KeyShift && ImGui::IsMouseClicked(ImGuiMouseButton_Left))))
    dragging_ = true;
  if (dragging_) {
    if (!io.MouseDown[ImGuiMouseButton_Left] && !io.MouseDown[ImGuiMouseButton_Middle]) {
      dragging_ = false;
    } else if (delta_px != glm::dvec2(0.0)) {
      set(drag_window_level(wl_, delta_px,
                            window_drag_per_pixel(range_.data_min, range_.data_max)));
    }
  }
  return dragging_;
}

void ImageWindow::panel(float ui_scale) {
  section("Display window");
  const float speed = static_cast<float>(window_drag_per_pixel(range_.data_min, range_.data_max));
  const float field = -120.0f * ui_scale;
  double window = wl_.window, level = wl_.level;
  ImGui::SetNextItemWidth(field);
  bool changed = ImGui::DragScalar("window (width)", ImGuiDataType_Double, &window, speed, nullptr,
                                   nullptr, "%.6g");
  ImGui::SetNextItemWidth(field);
  changed |= ImGui::DragScalar("level (centre)", ImGuiDataType_Double, &level, speed, nullptr,
                               nullptr, "%.6g");
  if (changed) set({window, level});
  double low = wl_.low(), high = wl_.high();
  ImGui::SetNextItemWidth(field);
  bool range_changed =
      ImGui::DragScalar("min (black)", ImGuiDataType_Double, &low, speed, nullptr, nullptr, "%.6g");
  ImGui::SetNextItemWidth(field);
  range_changed |= ImGui::DragScalar("max (white)", ImGuiDataType_Double, &high, speed, nullptr,
                                     nullptr, "%.6g");
  if (range_changed && high > low) set(WindowLevel::from_range(low, high));

  if (ImGui::Button("reset (auto)")) set_auto();
  ImGui::TextDisabled("presets:");
  ImGui::SameLine();
  char type_label[96] = "type range###type";
  if (range_.type_range)
    std::snprintf(type_label, sizeof type_label, "type %g..%g###type", (*range_.type_range)[0],
                  (*range_.type_range)[1]);
  ImGui::BeginDisabled(!range_.type_range);
  if (ImGui::Button(type_label) && range_.type_range)
    set(WindowLevel::from_range((*range_.type_range)[0], (*range_.type_range)[1]));
  ImGui::EndDisabled();
  if (!range_.type_range && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("floating-point data has no type range; use data min..max");
  ImGui::SameLine();
  if (ImGui::Button("data min..max") && range_.data_max > range_.data_min)
    set(WindowLevel::from_range(range_.data_min, range_.data_max));

  const WindowLevel automatic = range_.auto_window();
  ImGui::Text("%s: black %.6g, white %.6g", user_ ? "user window" : "auto window", wl_.low(),
              wl_.high());
  if (!range_.note.empty()) {
    ImGui::TextDisabled("auto: %s", range_.note.c_str());
  } else {
    ImGui::TextDisabled("auto: %.6g..%.6g (%s)", automatic.low(), automatic.high(),
                        range_.type_range ? "the type's full scale" : "the values as stored");
  }
  ImGui::TextDisabled("data %.6g..%.6g", range_.data_min, range_.data_max);
  ImGui::TextWrapped(
      "middle drag or Shift+left drag on a view: right widens the window, down raises the level "
      "(darker)");
  ImGui::TextDisabled(
      "In stored units (a file's raw values; video frames 0..255). Applied after the "
      "interpolation, to R, G and B alike (alpha as it is); the readout and any accuracy "
      "figures do not depend on it.");
}

nlohmann::json ImageWindow::report() const {
  const WindowLevel automatic = range_.auto_window();
  return {{"lo", wl_.low()},
          {"hi", wl_.high()},
          {"window", wl_.window},
          {"level", wl_.level},
          {"source", user_ ? "user" : "auto"},
          {"auto", {automatic.low(), automatic.high()}},
          {"units", "raw"},
          {"data_range", {range_.data_min, range_.data_max}},
          {"type_range", range_.type_range
                             ? nlohmann::json{(*range_.type_range)[0], (*range_.type_range)[1]}
                             : nlohmann::json()},
          {"data_scale", {{"offset", range_.scale.offset}, {"scale", range_.scale.scale}}}};
}

}  // namespace sv::viewer
