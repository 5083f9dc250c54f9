// Shared ImGui widgets (see panel_widgets.h).
#include "panel_widgets.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
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
    case gl::Fetch::Grbf:
      return "Gaussian radial basis functions (GRBF, sigma below): one Gaussian per sample, "
             "weights from the exact separable solve in float on the CPU, summed over every "
             "sample within the support radius (about 14 x 14 point fetches per pixel at sigma "
             "1). Interpolates; grows unstable as sigma grows (the condition number).";
  }
  return "";
}

// A combo box choosing one of the six methods (seven with the GRBF).
bool method_combo(const char* label, gl::Fetch* method, bool with_grbf) {
  bool changed = false;
  if (ImGui::BeginCombo(label, method_display_name(*method))) {
    const std::size_t n = with_grbf ? kViewMethods.size() : kMethods.size();
    for (std::size_t i = 0; i < n; ++i) {
      char item[96];
      std::snprintf(item, sizeof item, "%s  [%zu]", method_display_name(kViewMethods[i]), i + 1);
      if (ImGui::Selectable(item, *method == kViewMethods[i])) {
        *method = kViewMethods[i];
        changed = true;
      }
    }
    ImGui::EndCombo();
  }
  return changed;
}

bool quantity_combo(const char* label, gl::Quantity* quantity, std::size_t rank, gl::Fetch method) {
  bool changed = false;
  if (ImGui::BeginCombo(label, gl::quantity_label(*quantity).c_str())) {
    for (const gl::Quantity& q : gl::quantity_choices(rank)) {
      const std::string problem = gl::quantity_problem(method, q, rank);
      const std::string item =
          gl::quantity_label(q) + (problem.empty() ? "" : "   (" + problem + ")");
      if (ImGui::Selectable(item.c_str(), *quantity == q)) {
        *quantity = q;
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

namespace {

// The reference the figures and heat maps are measured against: same method, another method
// (a combo), or the analytic function (disabled, with the reason, for data that has none).
void reference_choice(AccuracyOverlay& overlay) {
  AccuracyReference& ref = overlay.reference;
  int kind = static_cast<int>(ref.kind);
  ImGui::TextUnformatted("reference:");
  ImGui::RadioButton("same method in double", &kind, static_cast<int>(ReferenceKind::SameMethod));
  ImGui::SameLine();
  ImGui::TextDisabled("how exact is this GPU path");
  ImGui::RadioButton("another method in double:", &kind, static_cast<int>(ReferenceKind::Method));
  ImGui::Indent();
  ImGui::SetNextItemWidth(-1.0f);
  gl::Fetch method = ref.method;
  if (method_combo("##reference method", &method)) {
    ref.method = method;
    kind = static_cast<int>(ReferenceKind::Method);
  }
  ImGui::Unindent();
  const bool truth = overlay.has_truth();
  if (!truth && ref.kind != ReferenceKind::Truth) ImGui::BeginDisabled();
  ImGui::RadioButton("ground truth: the analytic function", &kind,
                     static_cast<int>(ReferenceKind::Truth));
  if (!truth && ref.kind != ReferenceKind::Truth) ImGui::EndDisabled();
  if (!truth && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip(
        "only for analytic data (the zone plate, the Marschner-Lobb volume): a file's samples "
        "come from an unknown signal, so there is no truth to compare with");
  ref.kind = static_cast<ReferenceKind>(kind);
  ImGui::Text("errors against: %s", reference_label(ref).c_str());
}

}  // namespace

void accuracy_section(AccuracyOverlay& overlay, const AccuracyPanel& panel) {
  section("Accuracy");
  ImGui::Checkbox("measure against the double reference", &overlay.enabled);
  ImGui::Checkbox("error heat map [H]", &overlay.heat_map);
  if (overlay.heat_map) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(-1.0f);
    ImGui::SliderFloat("##opacity", &overlay.heat_opacity, 0.2f, 1.0f, "opacity %.2f");
  }
  if (!overlay.enabled) return;
  if (!overlay.has_meter()) {
    if (!overlay.note().empty()) ImGui::TextWrapped("%s", overlay.note().c_str());
    return;
  }
  reference_choice(overlay);
  if (const std::string problem = overlay.reference_problem(); !problem.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.4f, 1.0f));
    ImGui::TextWrapped("%s", problem.c_str());
    ImGui::PopStyleColor();
    return;
  }
  if (overlay.busy() || !overlay.started()) {
    ImGui::ProgressBar(overlay.started() ? overlay.fraction() : 0.0f, ImVec2(-1.0f, 0.0f),
                       overlay.started() ? "measuring the view" : "waiting for the view to settle");
  }
  const std::vector<AccuracyResult>& results = overlay.results();
  if (results.empty()) return;
  // With views the first column names the view and, under it, its method (the panel is too
  // narrow for both side by side).
  const bool view_column = !panel.views.empty();
  const int columns = 4 + (panel.points_column ? 1 : 0);
  // With the view and points columns the table is wide: each column as wide as its content.
  const ImGuiTableFlags sizing =
      view_column ? ImGuiTableFlags_SizingFixedFit : ImGuiTableFlags_SizingStretchProp;
  if (view_column) ImGui::PushTextWrapPos(-1.0f);  // the panel wraps text; figures must not
  if (ImGui::BeginTable("accuracy", columns, sizing | ImGuiTableFlags_RowBg)) {
    ImGui::TableSetupColumn(view_column ? "view" : "method");
    ImGui::TableSetupColumn("RMS");
    ImGui::TableSetupColumn("max");
    ImGui::TableSetupColumn("sum sq.");
    if (panel.points_column) ImGui::TableSetupColumn("points");
    ImGui::TableHeadersRow();
    for (std::size_t i = 0; i < results.size(); ++i) {
      const AccuracyResult& r = results[i];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      if (view_column) {
        ImGui::TextUnformatted(i < panel.views.size() ? panel.views[i].c_str() : "");
        ImGui::TextDisabled("%s", r.job.method == gl::Fetch::CubicUnfiltered
                                      ? "unfiltered"  // narrow column
                                      : gl::fetch_name(r.job.method));
      } else {
        ImGui::TextUnformatted(gl::fetch_name(r.job.method));
      }
      if (r.points == 0) {
        ImGui::TableNextColumn();
        ImGui::TextDisabled("outside");
        continue;
      }
      ImGui::TableNextColumn();
      ImGui::Text("%.*g", panel.digits, r.stats.rms);
      ImGui::TableNextColumn();
      ImGui::Text("%.*g", panel.digits, r.stats.max_abs);
      ImGui::TableNextColumn();
      ImGui::Text("%.*g", panel.digits, r.stats.sse);
      if (panel.points_column) {
        ImGui::TableNextColumn();
        ImGui::Text("%zu", r.points);
      }
    }
    ImGui::EndTable();
  }
  if (view_column) ImGui::PopTextWrapPos();
  ImGui::TextDisabled("%s: %s", overlay.result(0) ? "current view" : "previous view",
                      panel.explanation.c_str());
}

namespace {
ImVec2 to_imgui(double x, double y, const glm::dvec2& fb_scale) {
  return ImVec2(static_cast<float>(x / fb_scale.x), static_cast<float>(y / fb_scale.y));
}
}  // namespace

void draw_heat_map(ImDrawList* list, const gl::Texture& heat, const Rect& rect, float opacity,
                   const glm::dvec2& fb_scale) {
  list->AddImage(reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(heat.id())),
                 to_imgui(rect.x, rect.y, fb_scale),
                 to_imgui(rect.x + rect.width, rect.y + rect.height, fb_scale), ImVec2(0, 0),
                 ImVec2(1, 1),
                 IM_COL32(255, 255, 255, static_cast<int>(std::lround(opacity * 255.0f))));
}

void draw_heat_legend(ImDrawList* list, const Rect& area, const glm::dvec2& fb_scale,
                      float ui_scale) {
  // One box per half decade, bottom right of the area.
  const float s = ui_scale;
  const auto pt = [&](double x, double y) { return to_imgui(x, y, fb_scale); };
  const double margin = 6.0 * s;
  const int steps = 2 * (kHeatMaxDecade - kHeatMinDecade);
  const double box = 18.0 * s, x1 = area.x + area.width - margin, x0 = x1 - box * (steps + 1),
               y1 = area.y + area.height - margin, y0 = y1 - box;
  list->AddRectFilled(pt(x0 - 8 * s, y0 - 26 * s), pt(x1 + 4 * s, y1 + 4 * s),
                      IM_COL32(0, 0, 0, 190), 3.0f * s);
  for (int k = 0; k <= steps; ++k) {
    const float e = static_cast<float>(std::pow(10.0, kHeatMinDecade + 0.5 * k));
    list->AddRectFilled(pt(x0 + k * box, y0), pt(x0 + (k + 1) * box, y1), heat_colour(e));
  }
  char text[64];
  std::snprintf(text, sizeof text, "|error| 1e%d", kHeatMinDecade);
  list->AddText(pt(x0, y0 - 22 * s), IM_COL32(235, 235, 235, 255), text);
  std::snprintf(text, sizeof text, "1e%d+", kHeatMaxDecade);
  const ImVec2 size = ImGui::CalcTextSize(text);
  list->AddText(ImVec2(pt(x1, y0 - 22 * s).x - size.x, pt(x1, y0 - 22 * s).y),
                IM_COL32(235, 235, 235, 255), text);
}

void draw_quantity_legend(ImDrawList* list, const Rect& rect, const QuantityView& view,
                          const char* units, const glm::dvec2& fb_scale, float ui_scale) {
  const float s = ui_scale;
  const auto pt = [&](double x, double y) { return to_imgui(x, y, fb_scale); };
  const bool is_signed = gl::quantity_signed(view.quantity);
  const double margin = 6.0 * s, width = std::min(220.0 * s, rect.width - 2 * margin),
               bar = 12.0 * s;
  if (width < 40.0 * s) return;
  const double x0 = rect.x + margin, x1 = x0 + width;
  const double y1 = rect.y + rect.height - margin, y0 = y1 - bar;
  list->AddRectFilled(pt(x0 - 4 * s, y0 - 22 * s), pt(x1 + 4 * s, y1 + 4 * s),
                      IM_COL32(0, 0, 0, 190), 3.0f * s);
  constexpr int kSteps = 64;
  for (int k = 0; k < kSteps; ++k) {
    const double t = (k + 0.5) / kSteps;
    const double q = (is_signed ? 2.0 * t - 1.0 : t) * view.range;
    const glm::vec3 c = quantity_colour(q, view);
    const auto byte = [](float v) { return static_cast<int>(std::lround(v * 255.0f)); };
    list->AddRectFilled(pt(x0 + width * k / kSteps, y0), pt(x0 + width * (k + 1) / kSteps, y1),
                        IM_COL32(byte(c.r), byte(c.g), byte(c.b), 255));
  }
  char lo[32], hi[48];
  std::snprintf(lo, sizeof lo, "%.3g", is_signed ? -view.range : 0.0);
  std::snprintf(hi, sizeof hi, "%+.3g", view.range);
  const ImU32 text = IM_COL32(235, 235, 235, 255);
  list->AddText(pt(x0, y0 - 20 * s), text, lo);
  const ImVec2 hs = ImGui::CalcTextSize(hi);
  list->AddText(ImVec2(pt(x1, 0).x - hs.x, pt(0, y0 - 20 * s).y), text, hi);
  const std::string middle = is_signed ? std::string("0  ") + units : std::string(units);
  const ImVec2 ms = ImGui::CalcTextSize(middle.c_str());
  list->AddText(ImVec2(pt((x0 + x1) / 2, 0).x - ms.x / 2, pt(0, y0 - 20 * s).y), text,
                middle.c_str());
}

}  // namespace sv::viewer
