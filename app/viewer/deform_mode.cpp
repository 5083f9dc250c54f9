// The deform mode (see deform_mode.h).
#include "deform_mode.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include <imgui.h>

#include "image_document.h"
#include "panel_widgets.h"
#include "splineview/error.h"
#include "splineview/ffd.h"
#include "splineview/gl/gl.h"
#include "splineview/gl/state.h"
#include "splineview/io.h"
#include "splineview/prefilter.h"

namespace sv::viewer {
namespace {

struct Bundled {
  const char* label;
  const char* asset;
};
constexpr Bundled kBundled[] = {
    {"photograph: ascent (512 x 512, grey)", "ascent.png"},
    {"photograph: coffee (600 x 400, RGB)", "coffee.png"},
    {"MRI head (128 x 128 x 62, 3-D: slices along z)", "mri_t1_head.nrrd"},
};
constexpr const char* kPresetLabels[] = {"none", "smooth random", "swirl", "folding"};
constexpr double kGap = 4.0;           // framebuffer pixels between views
constexpr double kHandleRadius = 3.0;  // window pixels at UI scale 1
constexpr double kHandleGrab = 9.0;

double default_amplitude(FfdPreset p) {
  switch (p) {
    case FfdPreset::SmoothRandom:
      return 0.25;
    case FfdPreset::Swirl:
      return 0.5;
    case FfdPreset::Folding:
      return 1.0;
    default:
      return 0.0;
  }
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string shape_words(const std::vector<std::size_t>& s) {
  return s.size() == 2 ? std::to_string(s[1]) + " x " + std::to_string(s[0])
                       : std::to_string(s[2]) + " x " + std::to_string(s[1]) + " x " +
                             std::to_string(s[0]) + " (x, y, z)";
}

nlohmann::json number_or_null(std::optional<double> v) {
  return v && std::isfinite(*v) ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

DeformMode::DeformMode(const DeformOptions& options) : options_(options) {
  amplitude_ = static_cast<float>(options.amplitude.value_or(default_amplitude(options.preset)));
  preset_ui_ = static_cast<int>(options.preset);
  heat_top_ = static_cast<float>(options.heat_top);
  view_program_ =
      gl::Program({{GL_VERTEX_SHADER, "view.vert"}, {GL_FRAGMENT_SHADER, "deform_view.frag"}},
                  {{"SV_RANK", "2"}});
  vao_ = gl::VertexArray::create();
  const std::string first = options.path.empty() ? asset_path("ascent.png") : options.path;
  if (!load(first) && !options.strict && !options.path.empty()) {
    const std::string e = error_;
    if (load(asset_path("ascent.png"))) error_ = e + "\nShowing the bundled image instead.";
  }
}

DeformMode::~DeformMode() = default;

bool DeformMode::open(const std::string& path) {
  options_.grid.clear();  // a loaded grid belongs to the image it was given for
  return load(path);
}

std::vector<std::string> DeformMode::bundled() const {
  std::vector<std::string> labels;
  for (const Bundled& b : kBundled) labels.emplace_back(b.label);
  return labels;
}

bool DeformMode::open_bundled(std::size_t index) {
  if (index >= std::size(kBundled)) return false;
  return open(asset_path(kBundled[index].asset));
}

std::string DeformMode::title() const {
  return doc_ ? doc_->label + " (deform)" : std::string();
}

bool DeformMode::load(const std::string& path) {
  try {
    Document d;
    d.path = path;
    d.label = std::filesystem::path(path).filename().string();
    Loaded l = load_any(path, false);
    if (l.array.rank() == 2) {
      to_display_range(l);  // 8-bit by full scale, others by percentiles (as the zoom mode)
    } else if (l.array.rank() == 3) {
      if (l.array.channels() != 1)
        throw Error(path + ": the deform mode shows single-channel volumes, got " +
                    std::to_string(l.array.channels()) + " channels");
      const auto [lo, hi] = std::minmax_element(l.array.vec().begin(), l.array.vec().end());
      const double a = *lo, s = *hi > *lo ? *hi - *lo : 1.0;
      for (double& v : l.array.vec()) v = (v - a) / s;
    } else {
      throw Error(path + ": the deform mode shows 2-D images and 3-D volumes, got " +
                  describe_shape(l.array.dims(), l.array.channels()));
    }
    d.shape = l.array.dims();
    d.channels = l.array.channels();
    d.values = std::move(l.array);
    ArrayD c = d.values;
    prefilter(c);  // cubic, reflect: as sv::warp prefilters the moving image
    d.coefficients = ArrayF::from(c);
    d.description = shape_words(d.shape) + ", " + std::to_string(d.channels) + " channel" +
                    (d.channels == 1 ? "" : "s") + ", " + dtype_name(l.dtype);
    d.engine = std::make_unique<FfdGlEngine>(d.coefficients);
    doc_ = std::move(d);
    error_.clear();
  } catch (const std::exception& e) {
    error_ = e.what();
    return false;
  }
  slice_ = doc_->shape.size() == 3
               ? std::clamp(options_.slice.value_or(static_cast<int>(doc_->shape[0] / 2)), 0,
                            static_cast<int>(doc_->shape[0]) - 1)
               : 0;
  // The spacing: the command line's, else 32 voxels in 2-D and 12 in 3-D.
  try {
    delta_ = options_.spacing.empty()
                 ? std::vector<int>(doc_->shape.size(), doc_->shape.size() == 2 ? 32 : 12)
                 : parse_spacing(options_.spacing, doc_->shape.size());
  } catch (const std::exception& e) {
    error_ = e.what();
    delta_ = std::vector<int>(doc_->shape.size(), 32);
  }
  spacing_ui_ = delta_.back();
  reset_grid();
  view_pending_ = true;
  return error_.empty();
}

void DeformMode::reset_grid() {
  if (!doc_) return;
  if (!options_.grid.empty()) {
    try {
      grid_ = load_ffd_grid(options_.grid, delta_, doc_->shape);
      grid_source_ = "file " + std::filesystem::path(options_.grid).filename().string();
      dirty_ = true;
      return;
    } catch (const std::exception& e) {
      error_ = e.what();
      options_.grid.clear();
    }
  }
  const FfdPreset p = static_cast<FfdPreset>(preset_ui_);
  grid_ = make_preset_grid(p, doc_->shape, delta_, amplitude_);
  grid_source_ = std::string("preset ") + ffd_preset_name(p);
  dirty_ = true;
}

std::vector<std::size_t> DeformMode::enabled() const {
  std::vector<std::size_t> e;
  for (std::size_t k = 0; k < 3; ++k)
    if (options_.kernels[k]) e.push_back(k);
  return e;
}

void DeformMode::recompute(bool with_accuracy) {
  if (!doc_) return;
  FfdGlEngine& engine = *doc_->engine;
  engine.set_grid(grid_, delta_);
  if (with_accuracy && options_.accuracy) {
    const auto t0 = std::chrono::steady_clock::now();
    reference_ = ffd_field<double>(grid_, delta_, doc_->shape);
    reference_ms_ = ms_since(t0);
    reference_detj_ =
        detj_stats(ffd_jacobian_determinant_field<double>(grid_, delta_, doc_->shape));
  }
  for (std::size_t k : enabled()) {
    KernelResult& r = results_[k];
    const FfdGlKernel kernel = kFfdGlKernels[k];
    r.timing = engine.run(kernel);
    field_ms_[k].push(static_cast<float>(r.timing.gpu_ms.value_or(r.timing.wall_ms)));
    r.detj = detj_stats(engine.read_detj(kernel));
    if (with_accuracy && options_.accuracy) {
      r.error = field_error(engine.read_field(kernel), reference_);
      const std::vector<std::size_t>& s = doc_->shape;
      const int w = static_cast<int>(s.back()), h = static_cast<int>(s[s.size() - 2]);
      if (!r.error_texture || r.error_texture.width() != w || r.error_texture.height() != h) {
        r.error_texture = s.size() == 2
                              ? gl::Texture::create_2d(GL_R32F, w, h)
                              : gl::Texture::create_3d(GL_R32F, w, h, static_cast<int>(s[0]));
        r.error_texture.set_filter(GL_NEAREST, GL_NEAREST);
        r.error_texture.set_wrap(GL_CLAMP_TO_EDGE);
      }
      r.error_texture.upload(GL_RED, GL_FLOAT, r.error->per_voxel.data());
    } else if (!with_accuracy) {
      r.error.reset();
    }
  }
  accuracy_stale_ = !(with_accuracy && options_.accuracy);
  dirty_ = false;
}

std::vector<Rect> DeformMode::cells(const FrameInfo& f) const {
  const std::vector<std::size_t> e = enabled();
  std::vector<Rect> out;
  if (e.empty()) return out;
  const double n = static_cast<double>(e.size());
  const double w = std::floor((f.area.width - kGap * (n - 1)) / n);
  for (std::size_t i = 0; i < e.size(); ++i)
    out.push_back(
        {std::floor(f.area.x + static_cast<double>(i) * (w + kGap)), f.area.y, w, f.area.height});
  return out;
}

int DeformMode::slice() const {
  return slice_;
}

glm::dvec2 DeformMode::handle_position(std::size_t j, std::size_t i) const {
  // Control point (j, i) sits at ((i - 1) dx, (j - 1) dy); the content there comes from
  // about p + c, so its handle is drawn where that content lands: p - c (the field is smooth,
  // so u(p - c) is close to c).
  const double* c = grid_.data() + (j * grid_.dim(1) + i) * 2;
  return {(static_cast<double>(i) - 1.0) * delta_[1] - c[1],
          (static_cast<double>(j) - 1.0) * delta_[0] - c[0]};
}

void DeformMode::handle_input(const FrameInfo& f, const std::vector<Rect>& cells) {
  const ImGuiIO& io = ImGui::GetIO();
  const glm::dvec2 cursor = glm::dvec2(io.MousePos.x, io.MousePos.y) * f.fb_scale;
  std::optional<std::size_t> over;
  if (ImGui::IsMousePosValid() && f.mouse_free)
    for (std::size_t i = 0; i < cells.size(); ++i)
      if (cells[i].contains(cursor)) over = i;
  const bool editable = doc_ && doc_->shape.size() == 2 && show_handles_;
  hover_point_.reset();
  if (over && !dragging_ && !drag_point_) {
    const glm::dvec2 local_cursor = cursor - glm::dvec2(cells[*over].x, cells[*over].y);
    if (editable) {
      double best = kHandleGrab * f.ui_scale;
      for (std::size_t j = 0; j < grid_.dim(0); ++j)
        for (std::size_t i = 0; i < grid_.dim(1); ++i) {
          const double d = glm::length(view_.window_position(handle_position(j, i)) - local_cursor);
          if (d < best) {
            best = d;
            hover_point_ = std::array<std::size_t, 2>{j, i};
          }
        }
    }
    if (io.MouseWheel != 0.0f)
      view_.zoom_about(local_cursor, std::pow(1.2, static_cast<double>(io.MouseWheel)));
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
      if (hover_point_) {
        drag_point_ = hover_point_;
      } else {
        dragging_ = true;
      }
    }
  }
  if (!ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
    if (drag_point_) dirty_ = true;  // the release: measure again
    dragging_ = false;
    drag_point_.reset();
  }
  if (dragging_) view_.pan_by(glm::dvec2(io.MouseDelta.x, io.MouseDelta.y) * f.fb_scale);
  if (drag_point_ && over && (io.MouseDelta.x != 0.0f || io.MouseDelta.y != 0.0f)) {
    const glm::dvec2 at = view_.image_position(cursor - glm::dvec2(cells[*over].x, cells[*over].y));
    const auto [j, i] = *drag_point_;
    double* c = grid_.data() + (j * grid_.dim(1) + i) * 2;
    c[0] = (static_cast<double>(j) - 1.0) * delta_[0] - at.y;
    c[1] = (static_cast<double>(i) - 1.0) * delta_[1] - at.x;
    grid_source_ = "edited";
    dirty_ = true;
  }
}

void DeformMode::update(const FrameInfo& f) {
  if (!doc_) return;
  const std::vector<Rect> c = cells(f);
  if (view_pending_ && !c.empty()) {
    const glm::dvec2 size(static_cast<double>(doc_->shape.back()),
                          static_cast<double>(doc_->shape[doc_->shape.size() - 2]));
    const Rect cell = local(c.front());
    view_ = options_.zoom ? ViewTransform::centred(size, cell, *options_.zoom)
                          : ViewTransform::fit(size, cell);
    view_pending_ = false;
  }
  if (!f.batch) handle_input(f, c);
  try {
    if (dirty_) {
      // While a control point is dragged only the fields are evaluated (the GL kernels are
      // fast); the CPU reference and the heat maps follow when it is let go.
      recompute(!drag_point_.has_value());
    }
  } catch (const std::exception& e) {
    error_ = e.what();
    dirty_ = false;
  }
}

void DeformMode::panel(const FrameInfo& f) {
  const float scale = f.ui_scale;
  section("Image");
  if (!doc_) {
    ImGui::TextDisabled("nothing loaded");
    return;
  }
  ImGui::TextUnformatted(doc_->label.c_str());
  ImGui::TextDisabled("%s", doc_->description.c_str());
  if (doc_->shape.size() == 3) {
    ImGui::SetNextItemWidth(-80.0f * scale);
    ImGui::SliderInt("slice (z)", &slice_, 0, static_cast<int>(doc_->shape[0]) - 1);
  }

  section("Field");
  ImGui::TextDisabled("%s", grid_source_.c_str());
  ImGui::SetNextItemWidth(-80.0f * scale);
  if (ImGui::Combo("preset", &preset_ui_, kPresetLabels, 4)) {
    amplitude_ = static_cast<float>(default_amplitude(static_cast<FfdPreset>(preset_ui_)));
    options_.grid.clear();
    reset_grid();
  }
  ImGui::SetNextItemWidth(-80.0f * scale);
  if (ImGui::SliderInt("spacing", &spacing_ui_, 4, 64, "%d voxels")) {
    delta_.assign(doc_->shape.size(), spacing_ui_);
    options_.grid.clear();
    reset_grid();
  }
  ImGui::SetNextItemWidth(-80.0f * scale);
  if (ImGui::SliderFloat("amplitude", &amplitude_, 0.0f, 2.0f, "%.2f")) {
    options_.grid.clear();
    reset_grid();
  }
  ImGui::TextDisabled(
      "control points every %s voxels (%zu points); amplitude: random displacement in spacings, "
      "swirl in quarter turns, folding shear in 1.5 spacings",
      delta_.size() == 2 ? (std::to_string(delta_[0]) + " x " + std::to_string(delta_[1])).c_str()
                         : (std::to_string(delta_[0]) + " x " + std::to_string(delta_[1]) + " x " +
                            std::to_string(delta_[2]))
                               .c_str(),
      grid_.points());
  if (doc_->shape.size() == 2) {
    ImGui::Checkbox("control points (drag to deform)", &show_handles_);
  } else {
    ImGui::TextDisabled("control points are dragged in 2-D images only");
  }

  section("Views");
  for (std::size_t k = 0; k < 3; ++k) {
    if (k > 0) ImGui::SameLine();
    bool on = options_.kernels[k];
    if (ImGui::Checkbox(ffd_gl_kernel_name(kFfdGlKernels[k]), &on)) {
      options_.kernels[k] = on;
      dirty_ = true;
    }
  }
  ImGui::Checkbox("grid", &options_.grid_lines);
  ImGui::SameLine();
  ImGui::Checkbox("det J", &options_.detj);
  ImGui::SameLine();
  ImGui::Checkbox("heat map", &options_.heat_map);
  ImGui::SetNextItemWidth(-80.0f * scale);
  ImGui::SliderFloat("heat top", &heat_top_, 1e-6f, 1.0f, "%.1e vox", ImGuiSliderFlags_Logarithmic);
  ImGui::SetNextItemWidth(-80.0f * scale);
  ImGui::SliderFloat("opacity", &opacity_, 0.0f, 1.0f, "%.2f");
  ImGui::TextDisabled(
      "det J: blue compression, orange expansion, red folding (det J <= 0); heat map: "
      "|u_kernel - u_reference| on four decades up to 'heat top'; grid: the control grid "
      "carried by the deformation");

  section("Accuracy");
  if (!options_.accuracy) {
    ImGui::TextDisabled("off (--no-accuracy)");
  } else if (accuracy_stale_) {
    ImGui::TextDisabled("measured when the control point is let go");
  } else {
    ImGui::TextDisabled(
        "each kernel's field (GLSL, float) against sv::ffd_field<double> at every voxel: "
        "|u_kernel - u_reference| in voxels (%.1f ms on the CPU); det J by each kernel with "
        "derivative weights. CPU double: det J %.3f .. %.3f, %zu folded",
        reference_ms_, reference_detj_.min, reference_detj_.max, reference_detj_.folded);
    if (ImGui::BeginTable("ffd", 4, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingStretchProp)) {
      ImGui::TableSetupColumn("kernel");
      ImGui::TableSetupColumn("max");
      ImGui::TableSetupColumn("mean");
      ImGui::TableSetupColumn("folded");
      ImGui::TableHeadersRow();
      for (std::size_t k : enabled()) {
        const KernelResult& r = results_[k];
        if (!r.error) continue;
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(ffd_gl_kernel_name(kFfdGlKernels[k]));
        ImGui::TableNextColumn();
        ImGui::Text("%.2e", r.error->max);
        ImGui::TableNextColumn();
        ImGui::Text("%.2e", r.error->mean);
        ImGui::TableNextColumn();
        ImGui::Text("%zu", r.detj.folded);
      }
      ImGui::EndTable();
    }
  }
  ImGui::TextDisabled("wheel: zoom, left drag: pan (or move a control point)");
}

void DeformMode::overlays(const FrameInfo& f, ImDrawList* list) {
  if (!doc_) return;
  const std::vector<Rect> c = cells(f);
  last_cells_ = c;
  const std::vector<std::size_t> e = enabled();
  const glm::dvec2 fs = f.fb_scale;
  const float s = f.ui_scale;
  const auto pt = [&](double x, double y) {
    return ImVec2(static_cast<float>(x / fs.x), static_cast<float>(y / fs.y));
  };
  for (std::size_t v = 0; v < c.size(); ++v) {
    const Rect& cell = c[v];
    const KernelResult& r = results_[e[v]];
    list->PushClipRect(pt(cell.x, cell.y), pt(cell.x + cell.width, cell.y + cell.height), true);
    if (doc_->shape.size() == 2 && show_handles_) {
      const double spacing_px = view_.zoom() * std::min(delta_[0], delta_[1]);
      if (spacing_px >= 12.0 * s || drag_point_) {
        for (std::size_t j = 0; j < grid_.dim(0); ++j)
          for (std::size_t i = 0; i < grid_.dim(1); ++i) {
            const glm::dvec2 w =
                view_.window_position(handle_position(j, i)) + glm::dvec2(cell.x, cell.y);
            const bool hot = (hover_point_ && (*hover_point_)[0] == j && (*hover_point_)[1] == i) ||
                             (drag_point_ && (*drag_point_)[0] == j && (*drag_point_)[1] == i);
            list->AddCircleFilled(pt(w.x, w.y),
                                  static_cast<float>(kHandleRadius) * s * (hot ? 1.6f : 1.0f),
                                  hot ? IM_COL32(255, 230, 80, 255) : IM_COL32(80, 255, 140, 150));
          }
      }
    }
    char text[200];
    int n = std::snprintf(text, sizeof text, "%s", ffd_gl_kernel_label(kFfdGlKernels[e[v]]));
    if (r.error && n > 0 && n < static_cast<int>(sizeof text))
      n += std::snprintf(text + n, sizeof text - static_cast<std::size_t>(n),
                         "\n|u - u_ref| max %.2e  mean %.2e voxel", r.error->max, r.error->mean);
    if (n > 0 && n < static_cast<int>(sizeof text))
      std::snprintf(text + n, sizeof text - static_cast<std::size_t>(n),
                    "\ndet J %.3f .. %.3f, %zu folded%s", r.detj.min, r.detj.max, r.detj.folded,
                    doc_->shape.size() == 3 ? " (volume)" : "");
    const ImVec2 size = ImGui::CalcTextSize(text);
    const float pad = 4.0f * s;
    const ImVec2 at = pt(cell.x + 6.0 * s, cell.y + 6.0 * s);
    list->AddRectFilled(at, ImVec2(at.x + size.x + 2 * pad, at.y + size.y + 2 * pad),
                        IM_COL32(0, 0, 0, 170), 3.0f * s);
    list->AddText(ImVec2(at.x + pad, at.y + pad), IM_COL32(235, 235, 235, 255), text);
    list->PopClipRect();
  }
  if (options_.heat_map && !c.empty()) {
    // The heat map's scale: four decades below 'heat top', as deform_view.frag colours them.
    const Rect& a = f.area;
    const double box = 22.0 * s, x1 = a.x + a.width - 8.0 * s, x0 = x1 - box * 8,
                 y1 = a.y + a.height - 8.0 * s, y0 = y1 - box * 0.8;
    list->AddRectFilled(pt(x0 - 6 * s, y0 - 24 * s), pt(x1 + 4 * s, y1 + 4 * s),
                        IM_COL32(0, 0, 0, 190), 3.0f * s);
    const ImU32 colours[] = {IM_COL32(64, 0, 115, 255), IM_COL32(217, 38, 89, 255),
                             IM_COL32(255, 153, 26, 255), IM_COL32(255, 255, 128, 255)};
    for (int k = 0; k < 8; ++k) {
      const float t = (static_cast<float>(k) + 0.5f) / 8.0f * 3.0f;
      const int i = std::min(2, static_cast<int>(t));
      const float u = t - static_cast<float>(i);
      const ImVec4 p = ImGui::ColorConvertU32ToFloat4(colours[i]);
      const ImVec4 q = ImGui::ColorConvertU32ToFloat4(colours[i + 1]);
      const ImVec4 m(p.x + (q.x - p.x) * u, p.y + (q.y - p.y) * u, p.z + (q.z - p.z) * u, 1.0f);
      list->AddRectFilled(pt(x0 + k * box, y0), pt(x0 + (k + 1) * box, y1),
                          ImGui::ColorConvertFloat4ToU32(m));
    }
    char text[64];
    std::snprintf(text, sizeof text, "|du| %.0e .. %.0e vox", heat_top_ * 1e-4, heat_top_);
    list->AddText(pt(x0, y0 - 20 * s), IM_COL32(235, 235, 235, 255), text);
  }
}

void DeformMode::draw(const FrameInfo& f) {
  if (!doc_ || f.fb_width <= 0 || f.fb_height <= 0) return;
  const std::vector<Rect> c = cells(f);
  const std::vector<std::size_t> e = enabled();
  gl::ScopedState saved;
  gl::disable_fixed_function();
  const bool three = doc_->shape.size() == 3;
  if (three && view_program_.label().find("SV_RANK=3") == std::string::npos)
    view_program_ =
        gl::Program({{GL_VERTEX_SHADER, "view.vert"}, {GL_FRAGMENT_SHADER, "deform_view.frag"}},
                    {{"SV_RANK", "3"}});
  if (!three && view_program_.label().find("SV_RANK=2") == std::string::npos)
    view_program_ =
        gl::Program({{GL_VERTEX_SHADER, "view.vert"}, {GL_FRAGMENT_SHADER, "deform_view.frag"}},
                    {{"SV_RANK", "2"}});
  gl::Program& p = view_program_;
  const int overlays = (options_.detj ? 1 : 0) | (options_.heat_map && options_.accuracy ? 2 : 0) |
                       (options_.grid_lines ? 4 : 0);
  SV_GL_CHECK(glUseProgram(p.id()));
  SV_GL_CHECK(glBindVertexArray(vao_.id()));
  for (std::size_t v = 0; v < c.size(); ++v) {
    const std::size_t k = e[v];
    const FfdGlKernel kernel = kFfdGlKernels[k];
    const KernelResult& r = results_[k];
    const gl::Viewport vp = to_viewport(c[v], f.fb_height);
    SV_GL_CHECK(glViewport(vp.x, vp.y, vp.width, vp.height));
    const glm::mat3 m = view_.shifted({c[v].x, c[v].y}).frag_to_image(f.fb_height);
    p.set(0, m);
    p.set(1, 16.0f * f.ui_scale);
    p.set(2, glm::vec2(0.0f, 1.0f));
    p.set(3, slice());
    const bool heat = (overlays & 2) && r.error_texture && r.error;
    p.set(4, heat ? overlays : overlays & ~2);
    p.set(5, glm::vec2(static_cast<float>(delta_.back()),
                       static_cast<float>(delta_[delta_.size() - 2])));
    p.set(6, heat_top_);
    p.set(7, opacity_);
    SV_GL_CHECK(glBindTextureUnit(0, doc_->engine->warped_texture(kernel).id()));
    SV_GL_CHECK(glBindTextureUnit(1, doc_->engine->detj_texture(kernel).id()));
    SV_GL_CHECK(glBindTextureUnit(
        2, heat ? r.error_texture.id() : doc_->engine->detj_texture(kernel).id()));
    SV_GL_CHECK(glBindTextureUnit(3, doc_->engine->field_texture(kernel).id()));
    SV_GL_CHECK(glDrawArrays(GL_TRIANGLES, 0, 3));
  }
  for (GLuint unit = 0; unit < 4; ++unit) SV_GL_CHECK(glBindTextureUnit(unit, 0));
}

bool DeformMode::settled() const {
  return doc_ && !dirty_ && !view_pending_ && (!options_.accuracy || !accuracy_stale_);
}

std::vector<PassTiming> DeformMode::timings() const {
  std::vector<PassTiming> t;
  for (std::size_t k : enabled())
    t.push_back({std::string("field: ") + ffd_gl_kernel_label(kFfdGlKernels[k]), &field_ms_[k]});
  return t;
}

nlohmann::json DeformMode::report() const {
  nlohmann::json j;
  j["mode"] = "deform";
  if (!doc_) return j;
  j["image"] = doc_->label;
  j["path"] = doc_->path;
  j["shape"] = doc_->shape;
  j["rank"] = doc_->shape.size();
  j["channels"] = doc_->channels;
  j["grid_source"] = grid_source_;
  j["grid_shape"] = grid_.dims();
  j["spacing"] = delta_;
  j["amplitude"] = amplitude_;
  if (doc_->shape.size() == 3) j["slice"] = slice_;
  j["zoom"] = view_.zoom();
  j["overlays"] = {{"grid", options_.grid_lines},
                   {"detj", options_.detj},
                   {"heat_map", options_.heat_map},
                   {"heat_top", heat_top_}};
  double max_abs = 0;
  for (double v : grid_.vec()) max_abs = std::max(max_abs, std::abs(v));
  j["grid_max_abs"] = max_abs;
  if (options_.accuracy && !accuracy_stale_) {
    j["reference"] = {{"what", "sv::ffd_field<double> and ffd_jacobian_determinant_field<double>"},
                      {"ms", reference_ms_},
                      {"detj_min", reference_detj_.min},
                      {"detj_max", reference_detj_.max},
                      {"folded", reference_detj_.folded}};
  }
  nlohmann::json views = nlohmann::json::array();
  const std::vector<std::size_t> e = enabled();
  for (std::size_t v = 0; v < e.size(); ++v) {
    const KernelResult& r = results_[e[v]];
    nlohmann::json o;
    o["kernel"] = ffd_gl_kernel_name(kFfdGlKernels[e[v]]);
    if (v < last_cells_.size())
      o["rect"] = {last_cells_[v].x, last_cells_[v].y, last_cells_[v].width, last_cells_[v].height};
    if (r.error) {
      o["field_error_max"] = r.error->max;
      o["field_error_mean"] = r.error->mean;
      o["field_error_max_component"] = r.error->max_component;
    }
    o["folded"] = r.detj.folded;
    o["detj_min"] = r.detj.min;
    o["detj_max"] = r.detj.max;
    o["field_gpu_ms"] = number_or_null(r.timing.gpu_ms);
    o["field_wall_ms"] = r.timing.wall_ms;
    views.push_back(o);
  }
  j["views"] = views;
  return j;
}

}  // namespace sv::viewer
