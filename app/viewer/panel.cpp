// The viewer's ImGui side panel (see panel.h).
#include "panel.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include <imgui.h>

namespace sv::viewer {
namespace {

const char* method_explanation(gl::FetchMethod m) {
  switch (m) {
    case gl::FetchMethod::Nearest:
      return "Each pixel shows the closest sample: blocky when zoomed in.";
    case gl::FetchMethod::Linear:
      return "Hardware bilinear interpolation: continuous, but with visible kinks at the "
             "samples.";
    case gl::FetchMethod::CubicUnfiltered:
      return "Cubic B-spline on the raw samples, without the prefilter: smooth, but blurred. It "
             "does not pass through the samples (the common mistake).";
    case gl::FetchMethod::CubicPrefiltered:
      return "Cubic B-spline on prefiltered coefficients: smooth and exact, it passes through "
             "every sample. 4 bilinear fetches per pixel, weights computed on the fly.";
  }
  return "";
}

template <std::size_t N>
float history_value(void* data, int i) {
  return static_cast<const FrameHistory<N>*>(data)->at(static_cast<std::size_t>(i));
}

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

}  // namespace

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
    ImGui::TextDisabled("load %.1f ms, prefilter (CPU) %.1f ms, upload %.1f ms",
                        v.document->load_ms, v.document->prefilter_ms, v.document->upload_ms);
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

  // ---- method ----
  section("Reconstruction");
  for (std::size_t i = 0; i < gl::kFetchMethods.size(); ++i) {
    const gl::FetchMethod m = gl::kFetchMethods[i];
    char label[96];
    std::snprintf(label, sizeof label, "%s  [%zu]", gl::display_name(m), i + 1);
    if (ImGui::RadioButton(label, settings.method == m)) settings.method = m;
  }
  ImGui::TextDisabled("%s", method_explanation(settings.method));

  // ---- view ----
  section("View");
  if (v.view) {
    const double zoom = v.view->zoom();
    ImGui::Text("zoom %.3gx (%.0f%%)", zoom, zoom * 100.0);
  }
  if (ImGui::Button("Fit [R]")) actions.fit_view = true;
  ImGui::SameLine();
  if (ImGui::Button("1:1")) actions.one_to_one = true;
  ImGui::TextDisabled("wheel: zoom about the cursor, left drag: pan");
  if (v.cursor_image && v.document) {
    const glm::dvec2 p = *v.cursor_image;
    ImGui::Text("cursor at x %.2f, y %.2f", p.x, p.y);
    const int x = static_cast<int>(std::floor(p.x + 0.5));
    const int y = static_cast<int>(std::floor(p.y + 0.5));
    const std::vector<float> value = v.document->value_at(x, y);
    if (value.empty()) {
      ImGui::TextDisabled("outside the image");
    } else {
      char text[128];
      int n = std::snprintf(text, sizeof text, "sample [%d, %d] =", y, x);
      for (float c : value) {
        if (n < 0 || n >= static_cast<int>(sizeof text)) break;
        n += std::snprintf(text + n, sizeof text - static_cast<std::size_t>(n), " %.3f", c);
      }
      ImGui::TextUnformatted(text);
    }
  } else {
    ImGui::TextDisabled("cursor outside the view");
  }

  // ---- timing ----
  section("Timing");
  if (v.cpu_frame_ms) {
    ImGui::Text("frame (CPU, frame to frame): %.2f ms", v.cpu_frame_ms->latest());
    plot("##cpu", *v.cpu_frame_ms, "ms", 48.0f * scale);
  }
  if (v.gpu_pass_ms && !v.gpu_timer_meaningful) {
    ImGui::TextDisabled(
        "image pass (GL timer query): not shown, a software renderer's timer "
        "does not measure GPU time");
  } else if (v.gpu_pass_ms) {
    if (v.gpu_pass_ms->count() > 0) {
      ImGui::Text("image pass (GL timer query): %.3f ms", v.gpu_pass_ms->latest());
      plot("##gpu", *v.gpu_pass_ms, "ms", 48.0f * scale);
    } else {
      ImGui::TextDisabled("image pass (GL timer query): waiting for results");
    }
  }
  ImGui::TextDisabled("%s", v.gl_description.c_str());

  ImGui::PopTextWrapPos();
  ImGui::End();
  return actions;
}

}  // namespace sv::viewer
