// The interactive viewer (see viewer.h).
#include "viewer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <vector>

#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include "glfw_window.h"
#include "image_document.h"
#include "layout.h"
#include "method_pass.h"
#include "panel.h"
#include "screenshot.h"
#include "splineview/error.h"
#include "splineview/gl/gl.h"
#include "splineview/gl/timer.h"
#include "splineview/sampler.h"
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

constexpr double kPi = 3.14159265358979323846;
// Degrees per press of [ or ].
constexpr float kRotationStep = 5.0f;
// How close (framebuffer pixels) a click must be to the wipe divider to grab it.
constexpr double kDividerGrab = 6.0;
// Side of the loupe inset in window pixels at UI scale 1.
constexpr double kLoupeSide = 240.0;

// Angle in (-180, 180] degrees.
float wrap_degrees(float a) {
  a = std::fmod(a, 360.0f);
  if (a > 180.0f) a -= 360.0f;
  if (a <= -180.0f) a += 360.0f;
  return a;
}

// The GL viewport (origin bottom left) of a window rectangle (origin top left).
gl::Viewport to_viewport(const Rect& r, int fb_height) {
  return {static_cast<int>(r.x), fb_height - static_cast<int>(r.y + r.height),
          static_cast<int>(r.width), static_cast<int>(r.height)};
}

class Viewer {
 public:
  explicit Viewer(const ViewerOptions& options)
      : options_(options),
        window_(options.width, options.height, "splineview"),
        scale_(content_scale(window_.get())),
        imgui_(window_.get(), scale_),
        timer_(4) {
    settings_.layout = options.layout;
    for (std::size_t i = 0; i < options.methods.size(); ++i)
      if (options.methods[i]) settings_.methods[i] = *options.methods[i];
    settings_.angle_deg = wrap_degrees(static_cast<float>(options.angle_deg));
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
        std::string methods;
        for (int i = 0; i < method_count(settings_.layout); ++i)
          methods += (i ? "," : "") + std::string(gl::fetch_name(settings_.methods[i]));
        std::printf("wrote %s (%dx%d, zoom mode, %s layout, %s)\n", options_.screenshot.c_str(), w,
                    h, layout_name(settings_.layout), methods.c_str());
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
  // What the cursor is over: a view cell and the method shown there (the wipe's side).
  struct Hover {
    std::size_t cell = 0;
    std::size_t slot = 0;  // index into settings_.methods
    glm::dvec2 local{};    // cursor in the cell's coordinates
  };

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
      ImageDocument doc = load_document(path);
      // The interop announces its CPU fallback once per texture, i.e. per image; the panel
      // shows it every time, stderr only when it changes.
      if (!doc.prefilter_notice.empty() && doc.prefilter_notice != last_notice_)
        std::fprintf(stderr, "splineview: %s\n", doc.prefilter_notice.c_str());
      last_notice_ = doc.prefilter_notice;
      document_ = std::move(doc);
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

  // The part of the window right of the panel, in framebuffer pixels (top-left origin), with
  // integer corners (GL viewports are integers).
  Rect image_area(int fb_width, int fb_height) const {
    const double panel = std::round(Panel::width(scale_) * framebuffer_scale().x);
    return {panel, 0.0, std::max(1.0, fb_width - panel), static_cast<double>(fb_height)};
  }

  glm::dvec2 framebuffer_scale() const {
    const ImVec2 s = ImGui::GetIO().DisplayFramebufferScale;
    return {s.x > 0 ? s.x : 1.0, s.y > 0 ? s.y : 1.0};
  }

  // One cell in its own coordinates: the frame of the shared view transform.
  static Rect local(const Rect& cell) { return {0.0, 0.0, cell.width, cell.height}; }

  double angle_rad() const { return settings_.angle_deg * kPi / 180.0; }

  // Fits the image into a cell, or uses the zoom and/or centre given, at the current angle.
  void reset_view(const Rect& cell, std::optional<double> zoom = std::nullopt,
                  std::optional<glm::dvec2> center = std::nullopt) {
    if (!document_) return;
    const glm::dvec2 size(document_->width(), document_->height());
    view_ = ViewTransform::looking_at(center.value_or(size / 2.0 - 0.5), local(cell),
                                      zoom.value_or(ViewTransform::fit(size, local(cell)).zoom()),
                                      angle_rad());
  }

  std::optional<Hover> hover(const std::vector<Rect>& cells, const glm::dvec2& cursor) const {
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (!cells[i].contains(cursor)) continue;
      Hover h;
      h.cell = i;
      h.slot = i;
      if (settings_.layout == Layout::Wipe)
        h.slot = cursor.x < wipe_divider_x(cells[i], settings_.wipe) ? 0 : 1;
      h.local = cursor - glm::dvec2(cells[i].x, cells[i].y);
      return h;
    }
    return std::nullopt;
  }

  void handle_input(const std::vector<Rect>& cells) {
    const ImGuiIO& io = ImGui::GetIO();
    const glm::dvec2 cursor = glm::dvec2(io.MousePos.x, io.MousePos.y) * framebuffer_scale();
    const bool cursor_valid = ImGui::IsMousePosValid();
    hover_.reset();
    if (cursor_valid && !io.WantCaptureMouse) hover_ = hover(cells, cursor);
    if (hover_) {
      if (io.MouseWheel != 0.0f)
        view_.zoom_about(hover_->local, std::pow(1.2, static_cast<double>(io.MouseWheel)));
      if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
        const bool on_divider =
            settings_.layout == Layout::Wipe &&
            std::abs(cursor.x - wipe_divider_x(cells[hover_->cell], settings_.wipe)) <=
                kDividerGrab * scale_;
        (on_divider ? dragging_divider_ : dragging_) = true;
      }
    }
    if (dragging_ || dragging_divider_) {
      if (!io.MouseDown[ImGuiMouseButton_Left]) {
        dragging_ = dragging_divider_ = false;
      } else if (dragging_) {
        view_.pan_by(glm::dvec2(io.MouseDelta.x, io.MouseDelta.y) * framebuffer_scale());
      } else if (!cells.empty()) {
        const Rect& c = cells.front();
        settings_.wipe = static_cast<float>(std::clamp((cursor.x - c.x) / c.width, 0.0, 1.0));
      }
    }
    if (!io.WantCaptureKeyboard) {
      if (ImGui::IsKeyPressed(GLFW_KEY_R, false)) reset_requested_ = true;
      if (ImGui::IsKeyPressed(GLFW_KEY_SPACE, false)) swap_ab();
      if (ImGui::IsKeyPressed(GLFW_KEY_L, false)) settings_.loupe = !settings_.loupe;
      if (ImGui::IsKeyPressed(GLFW_KEY_LEFT_BRACKET, true))
        settings_.angle_deg = wrap_degrees(settings_.angle_deg + kRotationStep);
      if (ImGui::IsKeyPressed(GLFW_KEY_RIGHT_BRACKET, true))
        settings_.angle_deg = wrap_degrees(settings_.angle_deg - kRotationStep);
      for (std::size_t i = 0; i < kMethods.size(); ++i) {
        if (ImGui::IsKeyPressed(GLFW_KEY_1 + static_cast<int>(i), false))
          settings_.methods[hover_ ? hover_->slot : 0] = kMethods[i];
      }
    }
  }

  void swap_ab() { std::swap(settings_.methods[0], settings_.methods[1]); }

  // Keeps the image point at the cells' centre when their size changes (layout or window),
  // and applies rotation changes (slider, keys) about that centre.
  void follow_layout(const std::vector<Rect>& cells) {
    if (cells.empty()) return;
    const glm::dvec2 size(cells.front().width, cells.front().height);
    if (size != cell_size_ && cell_size_.x > 0) {
      const glm::dvec2 centre = view_.image_position(cell_size_ / 2.0);
      view_ = ViewTransform::looking_at(centre, local(cells.front()), view_.zoom(), view_.angle());
    }
    cell_size_ = size;
    if (view_.angle() != angle_rad()) view_.rotate_about(size / 2.0, angle_rad());
  }

  void handle_actions(const PanelActions& actions, const std::vector<Rect>& cells) {
    if (actions.open_path) open(*actions.open_path);
    if (actions.swap_ab) swap_ab();
    if (actions.dismiss_error) error_.clear();
    if (cells.empty()) return;
    if (actions.fit_view || reset_requested_) {
      settings_.angle_deg = 0.0f;
      reset_view(cells.front());
    }
    reset_requested_ = false;
    if (actions.one_to_one) view_.zoom_about(local(cells.front()).centre(), 1.0 / view_.zoom());
  }

  // The CPU reference at the cursor for each method shown: the method's degree on the samples
  // (nearest, linear, unfiltered cubic) or on the coefficients the views sample.
  std::vector<ReadoutEntry> readout(const glm::dvec2& p) const {
    std::vector<ReadoutEntry> entries;
    const bool inside = p.x >= -0.5 && p.y >= -0.5 && p.x <= document_->width() - 0.5 &&
                        p.y <= document_->height() - 0.5;
    const double position[2] = {p.y, p.x};  // array axis order
    for (int i = 0; i < method_count(settings_.layout); ++i) {
      ReadoutEntry e;
      e.method = settings_.methods[static_cast<std::size_t>(i)];
      if (inside) {
        const ArrayF& data =
            gl::fetch_prefiltered(e.method) ? document_->coefficients : document_->samples;
        e.values.resize(data.channels());
        SamplerOptions opt;
        opt.degree = method_degree(e.method);
        opt.threads = 1;  // one position: no thread pool
        sample(data, position, 1, e.values.data(), opt);
      }
      entries.push_back(std::move(e));
    }
    return entries;
  }

  void draw_views(const std::vector<Rect>& cells, int fb_height) {
    const float checker = 16.0f * scale_;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const Rect& cell = cells[i];
      const glm::mat3 m = view_.shifted({cell.x, cell.y}).frag_to_image(fb_height);
      if (settings_.layout == Layout::Wipe) {
        // Both sides sample the same positions; each viewport clips its method to its side.
        const double divider = wipe_divider_x(cell, settings_.wipe);
        const Rect left{cell.x, cell.y, divider - cell.x, cell.height};
        const Rect right{divider, cell.y, cell.x + cell.width - divider, cell.height};
        if (left.width > 0)
          pass_->draw(document_->textures, settings_.methods[0], m, to_viewport(left, fb_height),
                      checker);
        if (right.width > 0)
          pass_->draw(document_->textures, settings_.methods[1], m, to_viewport(right, fb_height),
                      checker);
      } else {
        pass_->draw(document_->textures, settings_.methods[i], m, to_viewport(cell, fb_height),
                    checker);
      }
    }
    if (settings_.loupe && hover_) {
      const Rect loupe = loupe_rect(cells[hover_->cell]);
      const glm::dvec2 p = view_.image_position(hover_->local);
      const ViewTransform magnified = ViewTransform::looking_at(
          p, local(loupe), view_.zoom() * settings_.loupe_factor, view_.angle());
      pass_->draw(document_->textures, settings_.methods[hover_->slot],
                  magnified.shifted({loupe.x, loupe.y}).frag_to_image(fb_height),
                  to_viewport(loupe, fb_height), checker);
    }
  }

  // The loupe inset: below right of the cursor, flipped to the other side where it would leave
  // the cell.
  Rect loupe_rect(const Rect& cell) const {
    const double side = std::round(std::min({kLoupeSide * scale_, cell.width, cell.height}));
    const glm::dvec2 cursor = hover_->local + glm::dvec2(cell.x, cell.y);
    const double offset = 24.0 * scale_;
    double x = cursor.x + offset, y = cursor.y + offset;
    if (x + side > cell.x + cell.width) x = cursor.x - offset - side;
    if (y + side > cell.y + cell.height) y = cursor.y - offset - side;
    x = std::clamp(x, cell.x, cell.x + cell.width - side);
    y = std::clamp(y, cell.y, cell.y + cell.height - side);
    return {std::round(x), std::round(y), side, side};
  }

  // Labels, the wipe divider and the loupe frame, drawn by ImGui over the views (ImGui
  // coordinates are window points, not framebuffer pixels).
  void draw_overlays(const std::vector<Rect>& cells) const {
    ImDrawList* list = ImGui::GetBackgroundDrawList();
    const glm::dvec2 fs = framebuffer_scale();
    const auto pt = [&](double x, double y) {
      return ImVec2(static_cast<float>(x / fs.x), static_cast<float>(y / fs.y));
    };
    const auto label = [&](double x, double y, const char* text, bool right_align) {
      const ImVec2 size = ImGui::CalcTextSize(text);
      const float pad = 4.0f * scale_;
      ImVec2 at = pt(x, y);
      if (right_align) at.x -= size.x + 2 * pad;
      list->AddRectFilled(at, ImVec2(at.x + size.x + 2 * pad, at.y + size.y + 2 * pad),
                          IM_COL32(0, 0, 0, 170), 3.0f * scale_);
      list->AddText(ImVec2(at.x + pad, at.y + pad), IM_COL32(235, 235, 235, 255), text);
    };
    const double margin = 6.0 * scale_;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const Rect& c = cells[i];
      if (settings_.layout == Layout::Wipe) {
        const double d = wipe_divider_x(c, settings_.wipe);
        list->AddLine(pt(d, c.y), pt(d, c.y + c.height), IM_COL32(255, 255, 255, 220),
                      2.0f * scale_);
        list->AddCircleFilled(pt(d, c.y + c.height / 2), 7.0f * scale_,
                              IM_COL32(255, 255, 255, 220));
        label(d - margin, c.y + margin, method_short_name(settings_.methods[0]), true);
        label(d + margin, c.y + margin, method_short_name(settings_.methods[1]), false);
      } else {
        char text[96];
        if (settings_.layout == Layout::Single) {
          std::snprintf(text, sizeof text, "%s", method_short_name(settings_.methods[0]));
        } else {
          std::snprintf(text, sizeof text, "%zu  %s", i + 1,
                        method_short_name(settings_.methods[i]));
        }
        label(c.x + margin, c.y + margin, text, false);
      }
    }
    if (settings_.loupe && hover_) {
      const Rect l = loupe_rect(cells[hover_->cell]);
      list->AddRect(pt(l.x - 1, l.y - 1), pt(l.x + l.width + 1, l.y + l.height + 1),
                    IM_COL32(255, 210, 90, 255), 0.0f, 0, 2.0f * scale_);
    }
  }

  void render_frame() {
    int fb_width = 0, fb_height = 0;
    window_.framebuffer_size(&fb_width, &fb_height);

    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();

    std::vector<Rect> cells = layout_cells(settings_.layout, image_area(fb_width, fb_height));
    if (view_pending_ && fb_width > 0 && fb_height > 0) {
      if (first_view_) {
        reset_view(cells.front(), options_.zoom, options_.center);
      } else {
        reset_view(cells.front());
      }
      cell_size_ = glm::dvec2(cells.front().width, cells.front().height);
      view_pending_ = false;
      first_view_ = false;
    }
    handle_input(cells);

    if (auto ms = timer_.poll(); ms && timer_.finished_count() != timer_results_seen_) {
      timer_results_seen_ = timer_.finished_count();
      gpu_pass_ms_.push(static_cast<float>(*ms));
    }
    PanelView panel_view;
    panel_view.document = document_ ? &*document_ : nullptr;
    panel_view.error = &error_;
    panel_view.view = document_ ? &view_ : nullptr;
    if (document_ && hover_) {
      panel_view.cursor_image = view_.image_position(hover_->local);
      panel_view.readout = readout(*panel_view.cursor_image);
    }
    panel_view.cpu_frame_ms = &cpu_frame_ms_;
    panel_view.gpu_pass_ms = &gpu_pass_ms_;
    panel_view.gl_description = gl_description_;
    panel_view.gpu_timer_meaningful = gpu_timer_meaningful_;
    const PanelActions actions = panel_.draw(settings_, panel_view, scale_);
    // The panel may have changed the layout or the angle: the views follow before drawing.
    cells = layout_cells(settings_.layout, image_area(fb_width, fb_height));
    handle_actions(actions, cells);
    follow_layout(cells);
    if (document_) draw_overlays(cells);
    ImGui::Render();

    glViewport(0, 0, fb_width, fb_height);
    glClearColor(0.11f, 0.11f, 0.12f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    if (document_ && fb_width > 0 && fb_height > 0) {
      gl::ScopedGpuTimer timing(timer_);
      draw_views(cells, fb_height);
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
  std::unique_ptr<MethodPass> pass_ = std::make_unique<MethodPass>();
  gl::GpuTimer timer_;
  std::optional<ImageDocument> document_;

  ViewerSettings settings_;
  Panel panel_;
  ViewTransform view_;  // shared by all views, in cell-local coordinates
  glm::dvec2 cell_size_{0.0, 0.0};
  bool view_pending_ = false;
  bool first_view_ = true;
  bool reset_requested_ = false;
  bool dragging_ = false;
  bool dragging_divider_ = false;
  std::optional<Hover> hover_;
  std::string error_;
  std::string last_notice_;
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
