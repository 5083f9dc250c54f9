// The viewer's ImGui side panel (see panel.h).
#include "panel.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include <imgui.h>

#include "method_pass.h"
#include "panel_widgets.h"

namespace sv::viewer {

PanelActions Panel::draw(ViewerSettings& settings, const PanelView& v, float scale) {
  PanelActions actions;
  const ImGuiIO& io = ImGui::GetIO();
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(ImVec2(width(scale), io.DisplaySize.y));
  ImGui::Begin("splineview", nullptr,
               ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                   ImGuiWindowFlags_NoSavedSettings);
  ImGui::PushTextWrapPos(0.0f);

  // ---- image ----
  section("Image");
  if (v.document) {
    ImGui::Text("%s", std::filesystem::path(v.document->path).filename().string().c_str());
    ImGui::TextDisabled("%s", v.document->description.c_str());
    ImGui::TextDisabled(
        "load %.1f ms, upload %.1f ms, prefilter (%s) %.1f ms", v.document->load_ms,
        v.document->upload_ms,
        v.document->prefilter_on_gpu ? "CUDA into the GL texture" : "CPU, then upload",
        v.document->prefilter_ms);
    if (!v.document->prefilter_notice.empty())
      ImGui::TextDisabled("%s", v.document->prefilter_notice.c_str());
  } else {
    ImGui::Text("no image loaded");
  }
  ImGui::SetNextItemWidth(-70.0f * scale);
  const bool enter =
      ImGui::InputTextWithHint("##path", "path to a PNG or JPEG", path_buffer_.data(),
                               path_buffer_.size(), ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  if ((ImGui::Button("Open", ImVec2(-1.0f, 0.0f)) || enter) && path_buffer_[0] != '\0')
    actions.open_path = std::string(path_buffer_.data());
  ImGui::TextDisabled("or drop a file onto the window");
  if (v.error && !v.error->empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.4f, 1.0f));
    ImGui::TextUnformatted(v.error->c_str());
    ImGui::PopStyleColor();
    if (ImGui::SmallButton("dismiss")) actions.dismiss_error = true;
  }

  // ---- views ----
  section("Views");
  int layout = static_cast<int>(settings.layout);
  const Layout layouts[] = {Layout::Single, Layout::Pair, Layout::Grid, Layout::Wipe};
  for (int i = 0; i < 4; ++i) {
    if (i > 0) ImGui::SameLine();
    ImGui::RadioButton(layout_name(layouts[i]), &layout, static_cast<int>(layouts[i]));
  }
  settings.layout = static_cast<Layout>(layout);
  const int shown = method_count(settings.layout);
  for (int i = 0; i < shown; ++i) {
    char label[32];
    if (settings.layout == Layout::Wipe) {
      std::snprintf(label, sizeof label, i == 0 ? "left" : "right");
    } else if (shown == 1) {
      std::snprintf(label, sizeof label, "method");
    } else {
      std::snprintf(label, sizeof label, "view %d", i + 1);
    }
    ImGui::SetNextItemWidth(-80.0f * scale);
    method_combo(label, &settings.methods[static_cast<std::size_t>(i)]);
  }
  if (ImGui::Button(settings.layout == Layout::Single ? "A/B: show the other method [Space]"
                                                      : "A/B: swap the first two [Space]"))
    actions.swap_ab = true;
  if (settings.layout == Layout::Single) {
    ImGui::TextDisabled("B is %s", method_display_name(settings.methods[1]));
    ImGui::TextDisabled("%s", method_explanation(settings.methods[0]));
  } else if (settings.layout == Layout::Wipe) {
    ImGui::TextDisabled("drag the divider to move it");
  }
  ImGui::TextDisabled("keys 1-6 set the method of the view under the cursor");

  // ---- view ----
  section("View");
  if (v.view) {
    const double zoom = v.view->zoom();
    ImGui::Text("zoom %.3gx (%.0f%%)", zoom, zoom * 100.0);
  }
  ImGui::SetNextItemWidth(-80.0f * scale);
  ImGui::SliderFloat("rotation", &settings.angle_deg, -180.0f, 180.0f, "%.1f deg");
  if (ImGui::Button("Reset [R]")) actions.fit_view = true;
  ImGui::SameLine();
  if (ImGui::Button("1:1")) actions.one_to_one = true;
  ImGui::SameLine();
  ImGui::Checkbox("loupe [L]", &settings.loupe);
  if (settings.loupe) {
    ImGui::SetNextItemWidth(-80.0f * scale);
    ImGui::SliderFloat("loupe zoom", &settings.loupe_factor, 2.0f, 16.0f, "%.0fx");
  }
  ImGui::TextDisabled("wheel: zoom about the cursor, left drag: pan, [ and ]: rotate by 5 deg");
  if (v.cursor_image && v.document) {
    const glm::dvec2 p = *v.cursor_image;
    ImGui::Text("source position x %.3f, y %.3f", p.x, p.y);
    if (v.readout.empty() || v.readout.front().values.empty()) {
      ImGui::TextDisabled("outside the image");
    } else {
      for (const ReadoutEntry& e : v.readout) {
        char text[160];
        int n = std::snprintf(text, sizeof text, "%s:", method_short_name(e.method));
        for (double c : e.values) {
          if (n < 0 || n >= static_cast<int>(sizeof text)) break;
          n += std::snprintf(text + n, sizeof text - static_cast<std::size_t>(n), " %.4f", c);
        }
        ImGui::TextUnformatted(text);
      }
      ImGui::TextDisabled(
          "values of the CPU double reference (sv::sample, the method's degree, on the same "
          "samples or coefficients), not read back from the screen");
    }
  } else {
    ImGui::TextDisabled("cursor outside the views");
  }

  // ---- timing ----
  section("Timing");
  if (v.cpu_frame_ms) {
    ImGui::Text("frame (CPU, frame to frame): %.2f ms", v.cpu_frame_ms->latest());
    plot("##cpu", *v.cpu_frame_ms, "ms", 48.0f * scale);
  }
  if (v.gpu_pass_ms && !v.gpu_timer_meaningful) {
    ImGui::TextDisabled(
        "image passes (GL timer query): not shown, a software renderer's timer "
        "does not measure GPU time");
  } else if (v.gpu_pass_ms) {
    if (v.gpu_pass_ms->count() > 0) {
      ImGui::Text("image passes (GL timer query): %.3f ms", v.gpu_pass_ms->latest());
      plot("##gpu", *v.gpu_pass_ms, "ms", 48.0f * scale);
    } else {
      ImGui::TextDisabled("image passes (GL timer query): waiting for results");
    }
  }
  ImGui::TextDisabled("%s", v.gl_description.c_str());

  ImGui::PopTextWrapPos();
  ImGui::End();
  return actions;
}

}  // namespace sv::viewer
