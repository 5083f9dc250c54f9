// The viewer's shell (see viewer.h).
#include "viewer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include <cfloat>

#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include "glfw_window.h"
#include "panel_widgets.h"
#include "screenshot.h"
#include "splineview/error.h"
#include "splineview/gl/gl.h"
#include "splineview/gl/headless.h"
#include "splineview/gl/objects.h"

namespace sv::viewer {
namespace {

// Give up waiting for the window to reach the requested size after this many frames.
constexpr int kMaxExtraScreenshotFrames = 120;
// Screenshot mode gives up when the mode has not settled after this long.
constexpr double kSettleTimeoutS = 600.0;
constexpr const char* kFontPath = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
constexpr float kPanelWidth = 360.0f;  // window pixels at UI scale 1

// Where the viewer draws: a GLFW window, or (--headless) an offscreen framebuffer in an EGL
// context without any window system, so that the same frames can be rendered and timed on a
// GPU machine without a display.
class Surface {
 public:
  virtual ~Surface() = default;
  virtual void framebuffer_size(int* width, int* height) const = 0;
  virtual bool should_close() const = 0;
  virtual std::vector<std::string> take_dropped_paths() = 0;
  virtual void begin_frame() = 0;  // binds the framebuffer to draw into
  virtual void present() = 0;
  virtual void set_title(const std::string& title) = 0;
  virtual unsigned framebuffer() const = 0;  // 0: the window's default framebuffer
  virtual GLFWwindow* window() const { return nullptr; }
};

class WindowSurface final : public Surface {
 public:
  WindowSurface(int width, int height, bool vsync) : window_(width, height, "splineview") {
    glfwSwapInterval(vsync ? 1 : 0);
  }
  void framebuffer_size(int* width, int* height) const override {
    window_.framebuffer_size(width, height);
  }
  bool should_close() const override { return window_.should_close(); }
  std::vector<std::string> take_dropped_paths() override {
    glfwPollEvents();
    return window_.take_dropped_paths();
  }
  void begin_frame() override { glBindFramebuffer(GL_FRAMEBUFFER, 0); }
  void present() override { glfwSwapBuffers(window_.get()); }
  void set_title(const std::string& title) override {
    glfwSetWindowTitle(window_.get(), title.c_str());
  }
  unsigned framebuffer() const override { return 0; }
  GLFWwindow* window() const override { return window_.get(); }

 private:
  GlfwWindow window_;
};

class HeadlessSurface final : public Surface {
 public:
  // own_context: make the EGL context here (a single run); a batch makes it once for all jobs.
  HeadlessSurface(int width, int height, bool own_context)
      : context_(own_context ? std::make_unique<gl::HeadlessContext>() : nullptr),
        width_(width),
        height_(height) {
    colour_ = gl::Texture::create_2d(GL_RGBA8, width, height);
    fbo_ = gl::Framebuffer::create();
    fbo_.attach_color(colour_);
    fbo_.check_complete();
  }
  void framebuffer_size(int* width, int* height) const override {
    *width = width_;
    *height = height_;
  }
  bool should_close() const override { return false; }
  std::vector<std::string> take_dropped_paths() override { return {}; }
  void begin_frame() override { glBindFramebuffer(GL_FRAMEBUFFER, fbo_.id()); }
  void present() override { glFlush(); }
  void set_title(const std::string&) override {}
  unsigned framebuffer() const override { return fbo_.id(); }

 private:
  std::unique_ptr<gl::HeadlessContext> context_;  // first: the objects below live in it
  int width_, height_;
  gl::Texture colour_;
  gl::Framebuffer fbo_;
};

// shared_context: a batch's context is current already (headless only).
std::unique_ptr<Surface> make_surface(const ViewerOptions& o, bool shared_context) {
  if (o.headless) return std::make_unique<HeadlessSurface>(o.width, o.height, !shared_context);
  return std::make_unique<WindowSurface>(o.width, o.height, o.screenshot.empty());
}

class ImGuiSession {
 public:
  // window: null for the headless surface (no platform backend: the shell feeds display size
  // and time itself, and there is no input).
  ImGuiSession(GLFWwindow* window, float scale) : window_(window) {
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
    if (window_) ImGui_ImplGlfw_InitForOpenGL(window_, true);
    ImGui_ImplOpenGL3_Init("#version 450");
  }
  ~ImGuiSession() {
    ImGui_ImplOpenGL3_Shutdown();
    if (window_) ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
  }
  ImGuiSession(const ImGuiSession&) = delete;
  ImGuiSession& operator=(const ImGuiSession&) = delete;

  void new_frame(int width, int height) {
    ImGui_ImplOpenGL3_NewFrame();
    if (window_) {
      ImGui_ImplGlfw_NewFrame();
    } else {
      ImGuiIO& io = ImGui::GetIO();
      io.DisplaySize = ImVec2(static_cast<float>(width), static_cast<float>(height));
      io.DisplayFramebufferScale = ImVec2(1.0f, 1.0f);
      io.DeltaTime = 1.0f / 60.0f;
      io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
    }
    ImGui::NewFrame();
  }

 private:
  GLFWwindow* window_;
};

float content_scale(GLFWwindow* window) {
  if (!window) return 1.0f;
  float x = 1, y = 1;
  glfwGetWindowContentScale(window, &x, &y);
  return std::max(1.0f, std::round(std::max(x, y) * 4.0f) / 4.0f);
}

// Writes `text` to `path` through a temporary file renamed into place, so that a failed write
// never leaves a truncated report.
void write_text_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(path + ": cannot write the report (cannot create " + tmp + ")");
    out << text;
    out.flush();
    if (!out) throw Error(path + ": cannot write the report");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw Error(path + ": cannot write the report: " + ec.message());
}

class Viewer {
 public:
  // shared_pass: a batch's method programs, in its context (current already); null for a
  // single run, which makes its context and programs itself.
  Viewer(const ViewerOptions& options, MethodPass* shared_pass)
      : options_(options),
        surface_(make_surface(options, shared_pass != nullptr)),
        scale_(content_scale(surface_->window())),
        imgui_(surface_->window(), scale_),
        own_pass_(shared_pass ? nullptr : std::make_unique<MethodPass>()),
        pass_(shared_pass ? *shared_pass : *own_pass_) {
    if (options_.modes.empty()) throw Error("the viewer needs at least one mode");
    gl_description_ = gl::context_description();
    gpu_timer_meaningful_ = gl::timer_queries_meaningful();
    current_ = 0;
    for (std::size_t i = 0; i < options_.modes.size(); ++i)
      if (options_.modes[i].name == options_.initial_mode) current_ = i;
    start_ = std::chrono::steady_clock::now();
    std::snprintf(screenshot_path_.data(), screenshot_path_.size(), "splineview-%s.png",
                  options_.modes[current_].name.c_str());
  }

  int run() {
    Mode& first = mode();  // makes the initial mode (and starts its loading)
    (void)first;
    const bool screenshot = !options_.screenshot.empty();
    int frame = 0, settled_frames = 0;
    auto last = std::chrono::steady_clock::now();
    while (!surface_->should_close()) {
      for (const std::string& path : surface_->take_dropped_paths()) mode().open(path);
      if (screenshot) mode().finish();
      render_frame();
      ++frame;
      if (screenshot) {
        Mode& m = mode();
        if (!m.settled()) {
          settled_frames = 0;
          if (!m.progress() && !m.error().empty()) {
            std::fprintf(stderr, "splineview: error: %s\n", m.error().c_str());
            return 1;
          }
          if (seconds() > kSettleTimeoutS) {
            std::fprintf(stderr, "splineview: error: the %s view did not settle in %.0f s\n",
                         m.name(), kSettleTimeoutS);
            return 1;
          }
        } else if (++settled_frames >= std::max(3, options_.screenshot_frames) &&
                   size_reached(frame)) {
          if (!m.error().empty()) {
            std::fprintf(stderr, "splineview: error: %s\n", m.error().c_str());
            return 1;
          }
          int w = 0, h = 0;
          surface_->framebuffer_size(&w, &h);
          nlohmann::json timing;
          if (options_.measure_frames > 0) {
            timing = measure_frames();
            if (!m.error().empty()) {  // e.g. a video that turned out damaged while playing
              std::fprintf(stderr, "splineview: error: %s\n", m.error().c_str());
              return 1;
            }
          }
          save_screenshot(options_.screenshot, w, h, surface_->framebuffer());
          if (!options_.report.empty()) {
            nlohmann::json j = m.report();
            j["window_size"] = {w, h};
            j["gl"] = gl_description_;
            j["headless"] = options_.headless;
            if (!timing.is_null()) j["frame_timing"] = timing;
            write_text_file(options_.report, j.dump(2) + "\n");
          }
          std::printf("wrote %s (%dx%d, %s mode)\n", options_.screenshot.c_str(), w, h, m.name());
          return 0;
        }
      }
      if (save_requested_) save_from_ui();
      surface_->present();
      const auto now = std::chrono::steady_clock::now();
      frame_ms_.push(std::chrono::duration<float, std::milli>(now - last).count());
      last = now;
    }
    return 0;
  }

 private:
  Mode& mode() {
    auto it = made_.find(current_);
    if (it == made_.end()) {
      std::unique_ptr<Mode> m;
      try {
        m = options_.modes[current_].make(pass_);
      } catch (const std::exception& e) {
        shell_error_ = options_.modes[current_].label + ": " + e.what();
        throw;
      }
      it = made_.emplace(current_, std::move(m)).first;
      update_title();
    }
    return *it->second;
  }

  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  void update_title() {
    auto it = made_.find(current_);
    const std::string t = it == made_.end() ? std::string() : it->second->title();
    const std::string title = t.empty() ? "splineview" : "splineview - " + t;
    if (title != title_) {
      surface_->set_title(title);
      title_ = title;
    }
  }

  glm::dvec2 framebuffer_scale() const {
    const ImVec2 s = ImGui::GetIO().DisplayFramebufferScale;
    return {s.x > 0 ? s.x : 1.0, s.y > 0 ? s.y : 1.0};
  }

  FrameInfo frame_info(int fb_width, int fb_height) const {
    FrameInfo f;
    const double panel = std::round(kPanelWidth * scale_ * framebuffer_scale().x);
    f.area = {panel, 0.0, std::max(1.0, fb_width - panel), static_cast<double>(fb_height)};
    f.fb_width = fb_width;
    f.fb_height = fb_height;
    f.fb_scale = framebuffer_scale();
    f.ui_scale = scale_;
    f.mouse_free = !ImGui::GetIO().WantCaptureMouse;
    f.keyboard_free = !ImGui::GetIO().WantCaptureKeyboard;
    f.time_s = seconds();
    f.batch = !options_.screenshot.empty();
    return f;
  }

  void panel(const FrameInfo& f) {
    const ImGuiIO& io = ImGui::GetIO();
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(ImVec2(kPanelWidth * scale_, io.DisplaySize.y));
    ImGui::Begin("splineview", nullptr,
                 ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                     ImGuiWindowFlags_NoSavedSettings);
    ImGui::PushTextWrapPos(0.0f);

    // ---- mode tabs ----
    if (ImGui::BeginTabBar("modes")) {
      for (std::size_t i = 0; i < options_.modes.size(); ++i) {
        const ImGuiTabItemFlags flags =
            i == current_ && !tab_selected_once_ ? ImGuiTabItemFlags_SetSelected : 0;
        if (ImGui::BeginTabItem(options_.modes[i].label.c_str(), nullptr, flags)) {
          if (tab_selected_once_ && i != current_) switch_to_ = i;
          ImGui::EndTabItem();
        }
      }
      tab_selected_once_ = true;
      ImGui::EndTabBar();
    }
    Mode& m = mode();

    // ---- data ----
    section("Data");
    ImGui::SetNextItemWidth(-70.0f * scale_);
    const bool enter =
        ImGui::InputTextWithHint("##path", "path to a file", path_buffer_.data(),
                                 path_buffer_.size(), ImGuiInputTextFlags_EnterReturnsTrue);
    ImGui::SameLine();
    if ((ImGui::Button("Open", ImVec2(-1.0f, 0.0f)) || enter) && path_buffer_[0] != '\0')
      m.open(std::string(path_buffer_.data()));
    const std::vector<std::string> bundled = m.bundled();
    if (!bundled.empty()) {
      ImGui::SetNextItemWidth(-1.0f);
      if (ImGui::BeginCombo("##bundled", "bundled data...")) {
        for (std::size_t i = 0; i < bundled.size(); ++i)
          if (ImGui::Selectable(bundled[i].c_str())) m.open_bundled(i);
        ImGui::EndCombo();
      }
    }
    ImGui::TextDisabled("or drop a file onto the window");
    if (const std::optional<Progress> p = m.progress()) {
      const float fraction =
          p->fraction >= 0 ? p->fraction : static_cast<float>(0.5 + 0.5 * std::sin(f.time_s * 4.0));
      ImGui::ProgressBar(fraction, ImVec2(-1.0f, 0.0f), p->what.c_str());
    }
    if (error_text(m.error(), "mode-error")) m.clear_error();
    if (error_text(shell_error_, "shell-error")) shell_error_.clear();

    m.panel(f);

    // ---- timing ----
    section("Timing");
    const float fps = frame_ms_.latest() > 0 ? 1000.0f / frame_ms_.average() : 0.0f;
    ImGui::Text("frame %.2f ms (%.0f fps)", frame_ms_.latest(), fps);
    plot("##frame", frame_ms_, "ms", 40.0f * scale_);
    if (!gpu_timer_meaningful_) {
      ImGui::TextDisabled(
          "GPU pass times: not shown, a software renderer's timer does not measure GPU time");
    } else {
      const std::vector<PassTiming> timings = m.timings();
      if (timings.empty()) ImGui::TextDisabled("GPU pass times: waiting for results");
      for (std::size_t i = 0; i < timings.size(); ++i) {
        const PassTiming& t = timings[i];
        ImGui::Text("%s: %.3f ms (GPU)", t.name.c_str(), t.history->latest());
        ImGui::PushID(static_cast<int>(i));
        plot("##pass", *t.history, "ms", 28.0f * scale_);
        ImGui::PopID();
      }
    }
    ImGui::TextDisabled("%s", gl_description_.c_str());

    // ---- screenshot ----
    section("Screenshot");
    ImGui::SetNextItemWidth(-70.0f * scale_);
    ImGui::InputText("##shot", screenshot_path_.data(), screenshot_path_.size());
    ImGui::SameLine();
    if (ImGui::Button("Save", ImVec2(-1.0f, 0.0f)) && screenshot_path_[0] != '\0')
      save_requested_ = true;
    if (!save_message_.empty()) ImGui::TextDisabled("%s", save_message_.c_str());

    ImGui::PopTextWrapPos();
    ImGui::End();
  }

  // Writes the window (panel and overlays included) as it was just rendered.
  void save_from_ui() {
    save_requested_ = false;
    int w = 0, h = 0;
    surface_->framebuffer_size(&w, &h);
    const std::string path(screenshot_path_.data());
    try {
      save_screenshot(path, w, h, surface_->framebuffer());
      save_message_ = "wrote " + path + " (" + std::to_string(w) + "x" + std::to_string(h) + ")";
    } catch (const std::exception& e) {
      save_message_.clear();
      shell_error_ = e.what();
    }
  }

  void render_frame() {
    int fb_width = 0, fb_height = 0;
    surface_->framebuffer_size(&fb_width, &fb_height);
    surface_->begin_frame();
    imgui_.new_frame(fb_width, fb_height);

    if (switch_to_) {
      current_ = *switch_to_;
      switch_to_.reset();
    }
    FrameInfo f = frame_info(fb_width, fb_height);
    Mode& m = mode();
    try {
      m.update(f);
      panel(f);
      f = frame_info(fb_width, fb_height);
      m.overlays(f, ImGui::GetBackgroundDrawList());
    } catch (const Error& e) {
      shell_error_ = e.what();
    }
    update_title();
    ImGui::Render();

    glViewport(0, 0, fb_width, fb_height);
    glClearColor(0.11f, 0.11f, 0.12f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    if (fb_width > 0 && fb_height > 0) {
      try {
        m.draw(f);
      } catch (const Error& e) {
        shell_error_ = e.what();
      }
    }
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    gl::check_error("rendering a frame", __FILE__, __LINE__);
  }

  // --measure N: N more frames of the settled view, each finished (glFinish) before the next,
  // so that the wall time is the frame's whole cost (UI, views, overlays); with the modes'
  // GPU pass times (timer queries) over the same frames.
  nlohmann::json measure_frames() {
    std::vector<double> wall;
    for (int i = 0; i < options_.measure_frames; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      render_frame();
      glFinish();
      wall.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::vector<double> sorted = wall;
    std::sort(sorted.begin(), sorted.end());
    const auto at = [&](double q) {
      return sorted[static_cast<std::size_t>(q * static_cast<double>(sorted.size() - 1))];
    };
    nlohmann::json j = {{"frames", wall.size()},
                        {"wall_ms_median", at(0.5)},
                        {"wall_ms_p95", at(0.95)},
                        {"wall_ms_max", sorted.back()},
                        {"fps_median", 1000.0 / at(0.5)}};
    nlohmann::json passes = nlohmann::json::array();
    if (gpu_timer_meaningful_) {
      for (const PassTiming& t : mode().timings())
        passes.push_back({{"pass", t.name},
                          {"gpu_ms_avg", t.history->average()},
                          {"gpu_ms_max", t.history->max()}});
    }
    j["passes"] = passes;
    std::printf("measured %zu frames: median %.2f ms (%.0f fps), p95 %.2f ms\n", wall.size(),
                at(0.5), 1000.0 / at(0.5), at(0.95));
    for (const auto& p : passes)
      std::printf("  %s: GPU %.3f ms\n", p["pass"].get<std::string>().c_str(),
                  p["gpu_ms_avg"].get<double>());
    return j;
  }

  bool size_reached(int frame) const {
    int w = 0, h = 0;
    surface_->framebuffer_size(&w, &h);
    return (w == options_.width && h == options_.height) || frame >= kMaxExtraScreenshotFrames;
  }

  ViewerOptions options_;
  std::unique_ptr<Surface> surface_;  // first: the GL context outlives every GL object below
  float scale_ = 1.0f;
  ImGuiSession imgui_;
  std::unique_ptr<MethodPass> own_pass_;  // a single run's programs
  MethodPass& pass_;
  std::map<std::size_t, std::unique_ptr<Mode>> made_;
  std::size_t current_ = 0;
  std::optional<std::size_t> switch_to_;
  bool tab_selected_once_ = false;
  std::chrono::steady_clock::time_point start_;
  std::string title_;
  std::string gl_description_;
  bool gpu_timer_meaningful_ = true;
  std::string shell_error_;
  std::array<char, 1024> path_buffer_{};
  std::array<char, 1024> screenshot_path_{};
  bool save_requested_ = false;
  std::string save_message_;
  FrameHistory<kHistoryLength> frame_ms_;
};

}  // namespace

int run_viewer(const ViewerOptions& options) {
  Viewer viewer(options, nullptr);
  return viewer.run();
}

int run_viewer_batch(const std::vector<BatchJob>& jobs) {
  for (const BatchJob& job : jobs)
    if (!job.options.headless || job.options.screenshot.empty())
      throw Error(job.name + ": a batch job renders headless to a screenshot");
  gl::HeadlessContext context;
  MethodPass pass;  // after the context, destroyed before it
  for (const BatchJob& job : jobs) {
    int status = 1;
    try {
      Viewer viewer(job.options, &pass);
      status = viewer.run();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "splineview: error: %s\n", e.what());
    }
    if (status != 0) {
      std::fprintf(
          stderr, "splineview: error: %s failed (exit status %d); the jobs after it were not run\n",
          job.name.c_str(), status);
      return status;
    }
  }
  return 0;
}

}  // namespace sv::viewer
