// The interactive viewer (see viewer.h).
#include "viewer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include "glfw_window.h"
#include "image_document.h"
#include "panel.h"
#include "screenshot.h"
#include "splineview/error.h"
#include "splineview/gl/gl.h"
#include "splineview/gl/timer.h"
#include "splineview/gl/view_pass.h"
#include "view_transform.h"

namespace sv::viewer {
namespace {

// Give up waiting for the window to reach the requested size after this many frames beyond
// the ones asked for.
constexpr int kMaxExtraScreenshotFrames = 120;
constexpr const char* kFontPath = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

// Dear ImGui context with its GLFW and OpenGL 3 backends.
class ImGuiSession {
 public:
  ImGuiSession(GLFWwindow* window, float scale) {
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;  // nothing written to the working directory
    ImGui::StyleColorsDark();
    ImGui::GetStyle().ScaleAllSizes(scale);
    if (std::filesystem::exists(kFontPath)) {
      io.Fonts->AddFontFromFileTTF(kFontPath, 15.0f * scale);
    } else {
      io.Fonts->AddFontDefault();
    }
    ImGui_ImplGlfw_InitForOpenGL(window, true);
    ImGui_ImplOpenGL3_Init("#version 450");
  }
  ~ImGuiSession() {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
  }
  ImGuiSession(const ImGuiSession&) = delete;
  ImGuiSession& operator=(const ImGuiSession&) = delete;
};

float content_scale(GLFWwindow* window) {
  float x = 1, y = 1;
  glfwGetWindowContentScale(window, &x, &y);
  return std::max(1.0f, std::round(std::max(x, y) * 4.0f) / 4.0f);
}

class Viewer {
 public:
  explicit Viewer(const ViewerOptions& options)
      : options_(options),
        window_(options.width, options.height, "splineview"),
        scale_(content_scale(window_.get())),
        imgui_(window_.get(), scale_),
        timer_(4) {
    settings_.method = options.method;
    gl_description_ = gl::context_description();
    gpu_timer_meaningful_ = gl::timer_queries_meaningful();
    glfwSwapInterval(options.screenshot.empty() ? 1 : 0);
  }

  int run() {
    if (!open_initial_image()) return 1;
    int frame = 0;
    auto last = std::chrono::steady_clock::now();
    while (!window_.should_close()) {
      glfwPollEvents();
      for (const std::string& path : window_.take_dropped_paths()) open(path);
      render_frame();
      ++frame;
      ++frames_since_load_;
      if (!options_.screenshot.empty() && screenshot_ready(frame)) {
        int w = 0, h = 0;
        window_.framebuffer_size(&w, &h);
        save_screenshot(options_.screenshot, w, h);
        std::printf("wrote %s (%dx%d, %s)\n", options_.screenshot.c_str(), w, h,
                    gl::display_name(settings_.method));
        return 0;
      }
      glfwSwapBuffers(window_.get());
      const auto now = std::chrono::steady_clock::now();
      cpu_frame_ms_.push(std::chrono::duration<float, std::milli>(now - last).count());
      last = now;
    }
    return 0;
  }

 private:
  // Loads the image named on the command line; interactive mode falls back to the default.
  bool open_initial_image() {
    const std::string fallback = default_image_path();
    const std::string first = options_.image.empty() ? fallback : options_.image;
    if (open(first)) return true;
    if (!options_.screenshot.empty()) {
      std::fprintf(stderr, "splineview: error: %s\n", error_.c_str());
      return false;
    }
    if (first != fallback) {
      const std::string first_error = error_;
      if (open(fallback)) error_ = first_error + "\nShowing the default image instead.";
    }
    return true;  // the viewer runs on, showing the error
  }

  bool open(const std::string& path) {
    try {
      document_ = load_document(path);
      error_.clear();
      frames_since_load_ = 0;
      view_pending_ = true;
      const std::string title = "splineview - " + std::filesystem::path(path).filename().string();
      glfwSetWindowTitle(window_.get(), title.c_str());
      return true;
    } catch (const std::exception& e) {
      error_ = e.what();
      return false;
    }
  }

  // The part of the window right of the panel, in framebuffer pixels (top-left origin).
  Rect image_area(int fb_width, int fb_height) const {
    const double panel = Panel::width(scale_) * framebuffer_scale().x;
    return {panel, 0.0, std::max(1.0, fb_width - panel), static_cast<double>(fb_height)};
  }

  glm::dvec2 framebuffer_scale() const {
    const ImVec2 s = ImGui::GetIO().DisplayFramebufferScale;
    return {s.x > 0 ? s.x : 1.0, s.y > 0 ? s.y : 1.0};
  }

  // Fits the image into the view, or uses the zoom and/or centre given.
  void reset_view(const Rect& area, std::optional<double> zoom = std::nullopt,
                  std::optional<glm::dvec2> center = std::nullopt) {
    if (!document_) return;
    const glm::dvec2 size(document_->width(), document_->height());
    view_ = ViewTransform::looking_at(center.value_or(size / 2.0 - 0.5), area,
                                      zoom.value_or(ViewTransform::fit(size, area).zoom()));
  }

  void handle_input(const Rect& area) {
    const ImGuiIO& io = ImGui::GetIO();
    const glm::dvec2 cursor = glm::dvec2(io.MousePos.x, io.MousePos.y) * framebuffer_scale();
    const bool cursor_valid = ImGui::IsMousePosValid();
    if (!io.WantCaptureMouse && cursor_valid) {
      if (io.MouseWheel != 0.0f && area.contains(cursor))
        view_.zoom_about(cursor, std::pow(1.2, static_cast<double>(io.MouseWheel)));
      if (ImGui::IsMouseClicked(ImGuiMouseButton_Left) && area.contains(cursor)) dragging_ = true;
    }
    if (dragging_) {
      if (io.MouseDown[ImGuiMouseButton_Left]) {
        view_.pan_by(glm::dvec2(io.MouseDelta.x, io.MouseDelta.y) * framebuffer_scale());
      } else {
        dragging_ = false;
      }
    }
    if (!io.WantCaptureKeyboard) {
      if (ImGui::IsKeyPressed(GLFW_KEY_R, false)) reset_view(area);
      for (std::size_t i = 0; i < gl::kFetchMethods.size(); ++i) {
        if (ImGui::IsKeyPressed(GLFW_KEY_1 + static_cast<int>(i), false))
          settings_.method = gl::kFetchMethods[i];
      }
    }
    cursor_image_.reset();
    if (cursor_valid && area.contains(cursor) && !io.WantCaptureMouse)
      cursor_image_ = view_.image_position(cursor);
  }

  void handle_actions(const PanelActions& actions, const Rect& area) {
    if (actions.open_path) open(*actions.open_path);
    if (actions.fit_view) reset_view(area);
    if (actions.one_to_one) view_.zoom_about(area.centre(), 1.0 / view_.zoom());
    if (actions.dismiss_error) error_.clear();
  }

  void render_frame() {
    int fb_width = 0, fb_height = 0;
    window_.framebuffer_size(&fb_width, &fb_height);

    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();

    const Rect area = image_area(fb_width, fb_height);
    if (view_pending_ && fb_width > 0 && fb_height > 0) {
      if (first_view_) {
        reset_view(area, options_.zoom, options_.center);
      } else {
        reset_view(area);
      }
      view_pending_ = false;
      first_view_ = false;
    }
    handle_input(area);

    if (auto ms = timer_.poll(); ms && timer_.finished_count() != timer_results_seen_) {
      timer_results_seen_ = timer_.finished_count();
      gpu_pass_ms_.push(static_cast<float>(*ms));
    }
    PanelView panel_view;
    panel_view.document = document_ ? &*document_ : nullptr;
    panel_view.error = &error_;
    panel_view.view = document_ ? &view_ : nullptr;
    panel_view.cursor_image = cursor_image_;
    panel_view.cpu_frame_ms = &cpu_frame_ms_;
    panel_view.gpu_pass_ms = &gpu_pass_ms_;
    panel_view.gl_description = gl_description_;
    panel_view.gpu_timer_meaningful = gpu_timer_meaningful_;
    const PanelActions actions = panel_.draw(settings_, panel_view, scale_);
    ImGui::Render();
    handle_actions(actions, area);

    glViewport(0, 0, fb_width, fb_height);
    glClearColor(0.11f, 0.11f, 0.12f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    if (document_ && fb_width > 0 && fb_height > 0) {
      // GL viewport of the image area (origin bottom left; the area spans the full height).
      const gl::Viewport viewport{static_cast<int>(area.x), 0, static_cast<int>(area.width),
                                  fb_height};
      gl::ScopedGpuTimer timing(timer_);
      pass_.draw(document_->textures, settings_.method, view_.frag_to_image(fb_height), viewport,
                 16.0f * scale_);
    }
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    gl::check_error("rendering a frame", __FILE__, __LINE__);
  }

  bool screenshot_ready(int frame) const {
    // At least a few frames, so that ImGui has laid out its windows and the GPU timer has
    // results to show.
    if (frames_since_load_ < std::max(3, options_.screenshot_frames)) return false;
    int w = 0, h = 0;
    window_.framebuffer_size(&w, &h);
    return (w == options_.width && h == options_.height) ||
           frame >= options_.screenshot_frames + kMaxExtraScreenshotFrames;
  }

  ViewerOptions options_;
  GlfwWindow window_;  // first: the GL context outlives every GL object below
  float scale_ = 1.0f;
  ImGuiSession imgui_;
  gl::ViewPass pass_;
  gl::GpuTimer timer_;
  std::optional<ImageDocument> document_;

  ViewerSettings settings_;
  Panel panel_;
  ViewTransform view_;
  bool view_pending_ = false;
  bool first_view_ = true;
  bool dragging_ = false;
  std::optional<glm::dvec2> cursor_image_;
  std::string error_;
  std::string gl_description_;
  bool gpu_timer_meaningful_ = true;
  int frames_since_load_ = 0;
  FrameHistory<kHistoryLength> cpu_frame_ms_;
  FrameHistory<kHistoryLength> gpu_pass_ms_;
  std::uint64_t timer_results_seen_ = 0;
};

}  // namespace

int run_viewer(const ViewerOptions& options) {
  Viewer viewer(options);
  return viewer.run();
}

}  // namespace sv::viewer
