// The volume mode's ray-cast 3-D view (see raycast_view.h).
#include "raycast_view.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

#include <imgui.h>

#include "method_pass.h"
#include "panel_widgets.h"
#include "splineview/error.h"
#include "splineview/gl/gl.h"
#include "splineview/gl/state.h"
#include "splineview/prefilter.h"
#include "volume_document.h"

namespace sv::viewer {
namespace {

constexpr double kDebounceS = 0.25;
constexpr double kRaysPerPane = 3000.0;
constexpr int kGap = 2;  // pixels between panes

const char* method_cli_name(gl::Fetch f) {
  return gl::fetch_name(f);
}

}  // namespace

struct RaycastView::Measurement {
  std::string key;
  std::vector<std::vector<glm::vec4>> gpu;  // per pane, every stride-th ray
  std::shared_ptr<std::atomic<bool>> cancel = std::make_shared<std::atomic<bool>>(false);
  struct Result {
    std::shared_ptr<const ArrayD> coefficients;
    std::vector<std::vector<RayResult>> reference;
  };
  std::future<Result> reference;
};

RaycastView::RaycastView(RaycastOptions options) : options_(std::move(options)) {
  settings_.step = options_.step;
  settings_.dvr_shade = options_.dvr_shade;
  draw_options_ = RayDrawOptions{};
  apply_methods();
}

RaycastView::~RaycastView() {
  if (measuring_) {
    measuring_->cancel->store(true);
    if (measuring_->reference.valid()) measuring_->reference.wait();
  }
}

void RaycastView::apply_methods() {
  std::vector<gl::Fetch> methods;
  for (gl::Fetch m : options_.methods)
    if (is_ray_method(m) && std::find(methods.begin(), methods.end(), m) == methods.end())
      methods.push_back(m);
  if (methods.empty()) methods.push_back(gl::Fetch::CubicPrecise);
  if (methods.size() > 4) methods.resize(4);
  std::vector<Pane> panes;
  for (gl::Fetch m : methods) {
    auto it =
        std::find_if(panes_.begin(), panes_.end(), [&](const Pane& p) { return p.method == m; });
    if (it != panes_.end()) {
      panes.push_back(std::move(*it));
    } else {
      Pane p{m, {}, {}, gl::GpuTimer{}, {}, {}, {}};
      panes.push_back(std::move(p));
    }
  }
  panes_ = std::move(panes);
}

void RaycastView::set_document(const VolumeDocument& doc, const WindowLevel& wl) {
  const bool first = doc_ == nullptr;
  doc_ = &doc;
  wl_ = wl;
  const DecodedVolume& v = doc.volume;
  value_min_ = v.min;
  value_max_ = v.max > v.min ? v.max : v.min + 1.0;
  camera_ = fit_camera(v.geometry, v.dims, options_.yaw_deg, options_.pitch_deg);
  settings_.iso = first && options_.iso ? *options_.iso : wl.low() + 0.3 * wl.window;
  // The first volume takes the command line's choices; later ones keep the panel's.
  if (first || tf_preset_.empty())
    tf_preset_ = !options_.tf_preset.empty() ? options_.tf_preset : "MRI soft tissue";
  tf_low_ = static_cast<float>(wl.low());
  tf_high_ = static_cast<float>(wl.high());
  if (first) {
    opacity_ = static_cast<float>(options_.opacity ? *options_.opacity : 0.05);
    settings_.mode = options_.mode;
  }
  try {
    settings_.tf = make_transfer_function(tf_preset_, tf_low_, tf_high_, opacity_);
  } catch (const Error& e) {
    error_ = e.what();
    tf_preset_ = "grey ramp";
    settings_.tf = make_transfer_function(tf_preset_, tf_low_, tf_high_, opacity_);
  }
  exact_ = v.exact;
  exact_coefficients_.reset();
  truth_ = nullptr;
  if (v.truth) {
    auto value = v.truth.value;
    truth_ = [value](const double* zyx) { return value(zyx, 0); };
  }
  accuracy_note_ = exact_ ? std::string() : v.accuracy_note;
  measured_key_.clear();
  for (Pane& p : panes_) p.accuracy.reset();
  if (renderer_) {
    try {
      renderer_->set_volume({&doc.samples_texture, &doc.coefficients_texture, v.dims, v.geometry});
    } catch (const Error& e) {
      error_ = e.what();
    }
  }
}

void RaycastView::lay_out(const Rect& area) {
  const int n = static_cast<int>(panes_.size());
  const int x0 = static_cast<int>(std::round(area.x)), y0 = static_cast<int>(std::round(area.y));
  const int w = static_cast<int>(std::round(area.width)),
            h = static_cast<int>(std::round(area.height));
  const int pane_w = std::max(0, (w - kGap * (n - 1)) / std::max(n, 1));
  for (int i = 0; i < n; ++i)
    panes_[static_cast<std::size_t>(i)].rect = {
        static_cast<double>(x0 + i * (pane_w + kGap)), static_cast<double>(y0),
        static_cast<double>(pane_w), static_cast<double>(h)};
}

void RaycastView::handle_input(const FrameInfo& f) {
  const ImGuiIO& io = ImGui::GetIO();
  const glm::dvec2 mouse = glm::dvec2(io.MousePos.x, io.MousePos.y) * f.fb_scale;
  const bool over = f.mouse_free && ImGui::IsMousePosValid() && f.area.contains(mouse);
  if (over && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
    dragging_ = true;
    last_mouse_ = mouse;
  }
  if (!ImGui::IsMouseDown(ImGuiMouseButton_Left)) dragging_ = false;
  if (dragging_) {
    const glm::dvec2 d = mouse - last_mouse_;
    if (d.x != 0.0 || d.y != 0.0) camera_.rotate(d.x / f.fb_scale.x, d.y / f.fb_scale.y);
    last_mouse_ = mouse;
  }
  if (over && io.MouseWheel != 0.0f) camera_.zoom(io.MouseWheel);
  const bool reset = (over && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) ||
                     (f.keyboard_free && ImGui::IsKeyPressed('R', false));
  if (reset && doc_)
    camera_ =
        fit_camera(doc_->volume.geometry, doc_->volume.dims, options_.yaw_deg, options_.pitch_deg);
}

void RaycastView::update(const FrameInfo& f, const VolumeDocument& doc, const WindowLevel& wl) {
  if (!renderer_ && !renderer_failed_) {
    try {
      renderer_ = std::make_unique<RaycastRenderer>();
      timers_meaningful_ = gl::timer_queries_meaningful();
    } catch (const Error& e) {
      renderer_failed_ = true;
      error_ = std::string("ray-cast shaders: ") + e.what();
    }
  }
  if (doc_ != &doc) {
    doc_ = nullptr;
    set_document(doc, wl);
  }
  if (renderer_ && !renderer_->has_volume()) {
    try {
      renderer_->set_volume(
          {&doc.samples_texture, &doc.coefficients_texture, doc.volume.dims, doc.volume.geometry});
    } catch (const Error& e) {
      error_ = e.what();
    }
  }
  wl_ = wl;
  lay_out(f.area);
  handle_input(f);
  update_accuracy(f.time_s, f.batch);
}

std::string RaycastView::state_key() const {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%p|%d|%.17g|%.17g|%.17g|%.17g|%.17g %.17g %.17g|%.17g|%.17g|%s|%.9g|%.9g|%.9g",
                static_cast<const void*>(doc_), static_cast<int>(settings_.mode), camera_.yaw_deg,
                camera_.pitch_deg, camera_.distance_mm, camera_.fov_deg, camera_.target.x,
                camera_.target.y, camera_.target.z, settings_.step, settings_.iso,
                settings_.tf.preset.c_str(), settings_.tf.low, settings_.tf.high,
                settings_.tf.opacity_per_mm);
  std::string key = buf;
  key += settings_.dvr_shade ? "|shaded" : "|flat";
  key += options_.truth && truth_ ? "|truth" : "|same";
  for (const Pane& p : panes_)
    key += "|" + std::string(gl::fetch_name(p.method)) + ":" + std::to_string(p.rect.width) + "x" +
           std::to_string(p.rect.height);
  return key;
}

void RaycastView::update_accuracy(double time_s, bool now) {
  const bool truth = options_.truth && truth_;
  if (!options_.accuracy || !doc_ || !renderer_ || !renderer_->has_volume() || (!exact_ && !truth))
    return;
  for (const Pane& p : panes_)
    if (p.rect.width < 1 || p.rect.height < 1) return;
  const std::string key = state_key();
  if (key != changed_key_) {
    changed_key_ = key;
    changed_s_ = time_s;
  }
  if (measuring_ && measuring_->key != key) {
    measuring_->cancel->store(true);
    if (measuring_->reference.valid()) measuring_->reference.wait();  // stops within a ray
    measuring_.reset();
  }
  if (!measuring_ && measured_key_ != key && (now || time_s - changed_s_ >= kDebounceS)) {
    try {
      auto m = std::make_unique<Measurement>();
      m->key = key;
      std::vector<RayFrame> frames;
      std::vector<int> strides, cols;
      const Geometry& g = doc_->volume.geometry;
      for (const Pane& p : panes_) {
        const int w = static_cast<int>(p.rect.width), h = static_cast<int>(p.rect.height);
        const RayFrame frame = ray_frame(camera_, g, doc_->volume.dims, w, h);
        const int stride = std::max(
            1, static_cast<int>(std::ceil(std::sqrt(double(w) * double(h) / kRaysPerPane))));
        int c = 0, r = 0;
        m->gpu.push_back(renderer_->measure(p.method, frame, settings_, wl_, draw_options_, stride,
                                            stride / 2, &c, &r));
        frames.push_back(frame);
        strides.push_back(stride);
        cols.push_back(c);
      }
      std::vector<gl::Fetch> methods;
      for (const Pane& p : panes_) methods.push_back(p.method);
      m->reference =
          std::async(std::launch::async, [exact = exact_, coefficients = exact_coefficients_,
                                          cancel = m->cancel, frames, strides, cols, methods,
                                          settings = settings_, sizes = m->gpu,
                                          truth_fn = truth ? truth_ : nullptr]() mutable {
            Measurement::Result out;
            if (truth_fn) {  // every pane against the analytic function
              const RayTruth t(truth_fn);
              for (std::size_t i = 0; i < frames.size(); ++i) {
                std::vector<RayResult> rays(sizes[i].size());
                const std::size_t c = static_cast<std::size_t>(cols[i]);
                for (std::size_t k = 0; k < rays.size(); ++k) {
                  if (cancel->load()) return out;
                  rays[k] = march_ray(t, frames[i], settings,
                                      static_cast<int>(k % c) * strides[i] + strides[i] / 2,
                                      static_cast<int>(k / c) * strides[i] + strides[i] / 2);
                }
                out.reference.push_back(std::move(rays));
              }
              return out;
            }
            if (!coefficients) {
              auto c = std::make_shared<ArrayD>(*exact);
              prefilter(*c, PrefilterOptions{3, Boundary::Reflect, 0});
              coefficients = std::move(c);
            }
            out.coefficients = coefficients;
            const RaySpline linear(*exact, 1), cubic(*coefficients, 3), unfiltered(*exact, 3);
            for (std::size_t i = 0; i < frames.size(); ++i) {
              const RaySpline& s = methods[i] == gl::Fetch::Linear            ? linear
                                   : methods[i] == gl::Fetch::CubicUnfiltered ? unfiltered
                                                                              : cubic;
              std::vector<RayResult> rays(sizes[i].size());
              const std::size_t c = static_cast<std::size_t>(cols[i]);
              for (std::size_t k = 0; k < rays.size(); ++k) {
                if (cancel->load()) return out;
                const int x = static_cast<int>(k % c) * strides[i] + strides[i] / 2;
                const int y = static_cast<int>(k / c) * strides[i] + strides[i] / 2;
                rays[k] = march_ray(s, frames[i], settings, x, y);
              }
              out.reference.push_back(std::move(rays));
            }
            return out;
          });
      measuring_ = std::move(m);
    } catch (const Error& e) {
      error_ = e.what();
      measured_key_ = key;  // do not retry every frame
    }
  }
  if (measuring_) {
    if (now) measuring_->reference.wait();
    if (measuring_->reference.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
      Measurement::Result r = measuring_->reference.get();
      if (!exact_coefficients_) exact_coefficients_ = r.coefficients;
      if (r.reference.size() == panes_.size()) {
        for (std::size_t i = 0; i < panes_.size(); ++i)
          panes_[i].accuracy = compare_rays(settings_.mode, measuring_->gpu[i], r.reference[i]);
        measured_key_ = measuring_->key;
      }
      measuring_.reset();
    }
  }
}

bool RaycastView::settled() const {
  if (!options_.active) return true;
  if (!doc_) return false;
  if (!options_.accuracy || !exact_ || !renderer_) return true;
  return !measuring_ && measured_key_ == state_key();
}

void RaycastView::finish() {
  if (!options_.active || !doc_) return;
  update_accuracy(changed_s_ + kDebounceS, true);
}

void RaycastView::draw(const FrameInfo& f) {
  if (!renderer_ || !doc_ || !renderer_->has_volume() || f.fb_width <= 0) return;
  lay_out(f.area);
  try {
    GLint draw_fb = 0;
    glGetIntegerv(GL_DRAW_FRAMEBUFFER_BINDING, &draw_fb);
    const Geometry& g = doc_->volume.geometry;
    for (Pane& p : panes_) {
      const std::uint64_t before = p.timer.finished_count();
      const std::optional<double> ms = p.timer.poll();
      if (ms && p.timer.finished_count() != before) p.ms.push(static_cast<float>(*ms));
      const int w = static_cast<int>(p.rect.width), h = static_cast<int>(p.rect.height);
      if (w < 1 || h < 1) continue;
      p.name =
          std::string("3-D ") + ray_mode_name(settings_.mode) + ": " + ray_method_label(p.method);
      const RayFrame frame = ray_frame(camera_, g, doc_->volume.dims, w, h);
      {
        gl::ScopedGpuTimer timing(p.timer);
        renderer_->render(p.method, frame, settings_, wl_, draw_options_, p.target);
      }
      gl::ScopedState saved;
      glDisable(GL_SCISSOR_TEST);
      const gl::Viewport vp = to_viewport(p.rect, f.fb_height);
      SV_GL_CHECK(glBlitNamedFramebuffer(p.target.framebuffer.id(), static_cast<GLuint>(draw_fb), 0,
                                         0, w, h, vp.x, vp.y, vp.x + w, vp.y + h,
                                         GL_COLOR_BUFFER_BIT, GL_NEAREST));
    }
  } catch (const Error& e) {
    error_ = e.what();
  }
}

void RaycastView::overlays(const FrameInfo& f, ImDrawList* list) {
  if (!doc_) return;
  const glm::dvec2 s = f.fb_scale;
  const auto pt = [&](double x, double y) {
    return ImVec2(static_cast<float>(x / s.x), static_cast<float>(y / s.y));
  };
  const float line = ImGui::GetTextLineHeightWithSpacing();
  for (const Pane& p : panes_) {
    if (p.rect.width < 1) continue;
    list->PushClipRect(pt(p.rect.x, p.rect.y),
                       pt(p.rect.x + p.rect.width, p.rect.y + p.rect.height), true);
    ImVec2 at = pt(p.rect.x + 8.0 * f.ui_scale, p.rect.y + 6.0 * f.ui_scale);
    std::string title =
        std::string(ray_method_label(p.method)) + "  (" + ray_mode_label(settings_.mode) + ")";
    list->AddText(at, IM_COL32(255, 255, 255, 255), title.c_str());
    at.y += line;
    char text[200] = "";
    if (settings_.mode == RayMode::Iso && p.method == gl::Fetch::Linear) {
      list->AddText(at, IM_COL32(200, 200, 200, 255), "normal: central differences (1 voxel)");
      at.y += line;
    }
    const bool truth = options_.truth && truth_;
    const char* against = truth ? "vs truth" : "float vs double";
    if (options_.accuracy && !accuracy_note_.empty() && !truth) {
      list->AddText(at, IM_COL32(255, 200, 90, 255), "accuracy: no double values for this volume");
    } else if (options_.accuracy && p.accuracy && measured_key_ == state_key()) {
      const RayErrors& e = *p.accuracy;
      if (settings_.mode == RayMode::Iso)
        std::snprintf(text, sizeof text, "%s: depth %.2g mm, normal %.2g deg", against, e.max,
                      e.angle_max);
      else
        std::snprintf(text, sizeof text, "%s: rms %.2g, max %.2g", against, e.rms, e.max);
      list->AddText(at, IM_COL32(140, 255, 160, 255), text);
    } else if (options_.accuracy) {
      std::snprintf(text, sizeof text, "%s: measuring...", against);
      list->AddText(at, IM_COL32(200, 200, 200, 255), text);
    }
    at.y += line;
    if (timers_meaningful_ && p.ms.count() > 0) {
      std::snprintf(text, sizeof text, "GPU %.2f ms", static_cast<double>(p.ms.average()));
      list->AddText(at, IM_COL32(200, 200, 200, 255), text);
    }
    list->PopClipRect();
  }
  const ImVec2 bottom =
      pt(f.area.x + 8.0 * f.ui_scale, f.area.y + f.area.height - 6.0 * f.ui_scale - line * s.y);
  list->AddText(bottom, IM_COL32(200, 200, 200, 255),
                "3-D view: drag rotates, wheel zooms, double-click or R resets");
}

void RaycastView::panel(const FrameInfo& f, const VolumeDocument* doc) {
  (void)f;
  section("3-D view (ray cast)");
  ImGui::Checkbox("show the 3-D view instead of the slices", &options_.active);
  if (!options_.active || !doc) return;
  int mode = static_cast<int>(settings_.mode);
  const char* modes[] = {"maximum intensity (MIP)", "isosurface", "volume rendering (DVR)"};
  if (ImGui::Combo("rendering", &mode, modes, 3)) settings_.mode = static_cast<RayMode>(mode);
  ImGui::TextUnformatted("panes:");
  bool changed = false;
  for (gl::Fetch m : kRayMethodChoices) {
    bool on =
        std::find(options_.methods.begin(), options_.methods.end(), m) != options_.methods.end();
    ImGui::SameLine();
    if (ImGui::Checkbox(ray_method_label(m), &on)) {
      changed = true;
      if (on)
        options_.methods.push_back(m);
      else
        options_.methods.erase(std::remove(options_.methods.begin(), options_.methods.end(), m),
                               options_.methods.end());
    }
  }
  if (changed) apply_methods();
  float step = static_cast<float>(settings_.step);
  if (ImGui::SliderFloat("step (voxels)", &step, 0.05f, 1.0f, "%.2f")) settings_.step = step;
  if (settings_.mode == RayMode::Iso) {
    float iso = static_cast<float>(settings_.iso);
    if (ImGui::SliderFloat("iso value", &iso, static_cast<float>(value_min_),
                           static_cast<float>(value_max_)))
      settings_.iso = iso;
  }
  if (settings_.mode == RayMode::Dvr) {
    bool tf = false;
    if (ImGui::BeginCombo("transfer function", tf_preset_.c_str())) {
      for (const std::string& name : tf_presets())
        if (ImGui::Selectable(name.c_str(), name == tf_preset_)) {
          tf_preset_ = name;
          tf = true;
        }
      ImGui::EndCombo();
    }
    tf |= ImGui::DragFloatRange2("value range", &tf_low_, &tf_high_,
                                 static_cast<float>((value_max_ - value_min_) / 500.0),
                                 static_cast<float>(value_min_), static_cast<float>(value_max_));
    tf |= ImGui::SliderFloat("opacity per mm", &opacity_, 0.001f, 1.0f, "%.3f",
                             ImGuiSliderFlags_Logarithmic);
    ImGui::Checkbox("shade (gradient headlight)", &settings_.dvr_shade);
    if (tf && tf_low_ < tf_high_)
      settings_.tf = make_transfer_function(tf_preset_, tf_low_, tf_high_, opacity_);
  }
  ImGui::Checkbox("skip empty space (exact)", &draw_options_.skip);
  ImGui::Checkbox("measure against double", &options_.accuracy);
  if (truth_) {
    ImGui::SameLine();
    ImGui::Checkbox("against the truth", &options_.truth);
  }
  ImGui::Text("camera: yaw %.0f, pitch %.0f deg, %.0f mm", camera_.yaw_deg, camera_.pitch_deg,
              camera_.distance_mm);
  if (ImGui::Button("reset camera (R)") && doc_)
    camera_ =
        fit_camera(doc_->volume.geometry, doc_->volume.dims, options_.yaw_deg, options_.pitch_deg);
}

std::vector<PassTiming> RaycastView::timings() const {
  std::vector<PassTiming> out;
  if (!options_.active || !timers_meaningful_) return out;
  for (const Pane& p : panes_)
    if (p.ms.count() > 0) out.push_back({p.name, &p.ms});
  return out;
}

nlohmann::json RaycastView::report() const {
  nlohmann::json r = {{"active", options_.active}};
  if (!options_.active) return r;
  r["mode"] = ray_mode_name(settings_.mode);
  r["step_voxels"] = settings_.step;
  if (settings_.mode == RayMode::Iso) r["iso"] = settings_.iso;
  if (settings_.mode == RayMode::Dvr)
    r["transfer_function"] = {{"preset", settings_.tf.preset},
                              {"low", settings_.tf.low},
                              {"high", settings_.tf.high},
                              {"opacity_per_mm", settings_.tf.opacity_per_mm},
                              {"shaded", settings_.dvr_shade}};
  r["skip_empty_space"] = draw_options_.skip;
  r["camera"] = {{"yaw_deg", camera_.yaw_deg},
                 {"pitch_deg", camera_.pitch_deg},
                 {"distance_mm", camera_.distance_mm},
                 {"fov_deg", camera_.fov_deg},
                 {"target_ras", {camera_.target.x, camera_.target.y, camera_.target.z}}};
  if (!accuracy_note_.empty()) r["accuracy_note"] = accuracy_note_;
  r["accuracy_reference"] = options_.truth && truth_ ? "truth" : "same-method";
  nlohmann::json panes = nlohmann::json::array();
  const bool current = measured_key_ == state_key();
  for (const Pane& p : panes_) {
    nlohmann::json j = {{"method", method_cli_name(p.method)},
                        {"label", ray_method_label(p.method)},
                        {"size", {p.rect.width, p.rect.height}},
                        // framebuffer pixels, origin top left; the pane's pixel (x, y) (y up
                        // from its bottom row) is the window's column rect[0] + x, row
                        // rect[1] + rect[3] - 1 - y
                        {"rect", {p.rect.x, p.rect.y, p.rect.width, p.rect.height}}};
    if (timers_meaningful_ && p.ms.count() > 0) j["gpu_ms_avg"] = p.ms.average();
    if (p.accuracy && current) {
      const RayErrors& e = *p.accuracy;
      j["accuracy"] = {{"rays", e.rays}, {"rms", e.rms}, {"max", e.max}};
      if (settings_.mode == RayMode::Iso) {
        j["accuracy"]["unit"] = "mm (depth)";
        j["accuracy"]["normal_rms_deg"] = e.angle_rms;
        j["accuracy"]["normal_max_deg"] = e.angle_max;
        j["accuracy"]["mismatched"] = e.mismatched;
      }
    }
    panes.push_back(j);
  }
  r["panes"] = panes;
  return r;
}

}  // namespace sv::viewer
