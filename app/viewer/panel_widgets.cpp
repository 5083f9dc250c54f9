// Shared ImGui widgets (see panel_widgets.h).
#include "panel_widgets.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include <imgui.h>

#include "method_pass.h"

namespace sv::viewer {

const char* method_explanation(gl::Fetch m) {
  switch (m) {
    case gl::Fetch::Nearest:
      return "Each pixel shows the closest sample: blocky when zoomed in.";
    case gl::Fetch::Linear:
      return "Hardware bilinear interpolation: continuous, but with visible kinks at the "
             "samples.";
    case gl::Fetch::CubicUnfiltered:
      return "Cubic B-spline on the raw samples, without the prefilter: smooth, but blurred. It "
             "does not pass through the samples (the common mistake).";
    case gl::Fetch::CubicLut:
      return "Prefiltered cubic B-spline, weights and offsets from a 128-texel half-float lookup "
             "table (Sigg-Hadwiger): 4 bilinear fetches and 2 table reads per pixel.";
    case gl::Fetch::CubicOtf:
      return "Prefiltered cubic B-spline, weights computed on the fly (Ruijters): 4 bilinear "
             "fetches per pixel; exact up to the hardware's filter-weight precision.";
    case gl::Fetch::CubicPrecise:
      return "Prefiltered cubic B-spline from 16 point fetches blended in the shader: no "
             "hardware weights, matches the CPU reference to float rounding.";
  }
  return "";
}

// A combo box choosing one of the six methods.
bool method_combo(const char* label, gl::Fetch* method) {
  bool changed = false;
  if (ImGui::BeginCombo(label, method_display_name(*method))) {
    for (std::size_t i = 0; i < kMethods.size(); ++i) {
      char item[96];
      std::snprintf(item, sizeof item, "%s  [%zu]", method_display_name(kMethods[i]), i + 1);
      if (ImGui::Selectable(item, *method == kMethods[i])) {
        *method = kMethods[i];
        changed = true;
      }
    }
    ImGui::EndCombo();
  }
  return changed;
}

namespace {
template <std::size_t N>
float history_value(void* data, int i) {
  return static_cast<const FrameHistory<N>*>(data)->at(static_cast<std::size_t>(i));
}

}  // namespace

void plot(const char* label, const FrameHistory<kHistoryLength>& h, const char* unit,
          float height) {
  char overlay[64];
  std::snprintf(overlay, sizeof overlay, "avg %.3f %s, max %.3f %s", h.average(), unit, h.max(),
                unit);
  ImGui::PlotLines(label, &history_value<kHistoryLength>,
                   const_cast<FrameHistory<kHistoryLength>*>(&h), static_cast<int>(h.count()), 0,
                   overlay, 0.0f, std::max(h.max() * 1.2f, 1e-3f),
                   ImVec2(ImGui::GetContentRegionAvail().x, height));
}

void section(const char* title) {
  ImGui::Spacing();
  ImGui::TextColored(ImVec4(0.55f, 0.75f, 1.0f, 1.0f), "%s", title);
  ImGui::Separator();
}

bool error_text(const std::string& message, const char* id) {
  if (message.empty()) return false;
  ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.4f, 1.0f));
  ImGui::TextUnformatted(message.c_str());
  ImGui::PopStyleColor();
  ImGui::PushID(id);
  const bool dismissed = ImGui::SmallButton("dismiss");
  ImGui::PopID();
  return dismissed;
}

}  // namespace sv::viewer
