// The zoom/rotate compare mode (see zoom_mode.h).
#include "zoom_mode.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include <imgui.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include "panel_widgets.h"
#include "splineview/derivative.h"
#include "splineview/error.h"
#include "splineview/gl/cuda_interop.h"
#include "splineview/gl/gl.h"
#include "splineview/smoothing.h"
#include "splineview/synthetic.h"

namespace sv::viewer {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr float kRotationStep = 5.0f;  // degrees per press of [ or ]
constexpr double kDividerGrab = 6.0;   // framebuffer pixels either side of the wipe divider
constexpr double kLoupeSide = 240.0;   // window pixels at UI scale 1
constexpr std::size_t kLoupeSlot = 4;

float wrap_degrees(float a) {
  a = std::fmod(a, 360.0f);
  if (a > 180.0f) a -= 360.0f;
  if (a <= -180.0f) a += 360.0f;
  return a;
}

// The bundled images: label and how to make them.
struct Bundled {
  const char* label;
  const char* asset;  // file in assets/, or null for a generated one
};
constexpr Bundled kBundled[] = {
    {"photograph: coffee (600 x 400, RGB)", "coffee.png"},
    {"photograph: ascent (512 x 512, grey)", "ascent.png"},
    {"zone plate (512 x 512): aliasing and ringing", nullptr},
    {"resolution chart (512 x 512): fine text and line pairs", nullptr},
};

nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

// The slider's debounce: a new lambda is applied once it has been unchanged this long.
constexpr double kLambdaDebounceS = 0.2;
constexpr double kLambdaMax = 1000.0;

// The cubic coefficients of the smoothing spline of `samples` with `lambda` (reflect, as the
// textures; lambda 0: the interpolating prefilter, sv::prefilter's bits).
ArrayF smoothed(const ArrayF& samples, double lambda) {
  ArrayF c = samples;
  SplineTransformOptions t;
  t.degree = 3;
  t.lambda = lambda;
  t.boundary = Boundary::Reflect;
  direct_transform(c, t);
  return c;
}

// Uploads coefficients into the document's coefficient texture (R32F for grey, else RGBA32F
// with the interop's layout: unused colour channels 0, alpha 1 unless given).
void upload_coefficients(gl::Texture& texture, const ArrayF& c) {
  const std::size_t ch = c.channels();
  if (ch == 1) {
    texture.upload_2d(GL_RED, GL_FLOAT, c.data());
    return;
  }
  const std::size_t n = c.dim(0) * c.dim(1);
  std::vector<float> rgba(n * 4, 0.0f);
  for (std::size_t i = 0; i < n; ++i) {
    if (ch < 4) rgba[i * 4 + 3] = 1.0f;
    for (std::size_t k = 0; k < ch; ++k) rgba[i * 4 + k] = c.data()[i * ch + k];
  }
  texture.upload_2d(GL_RGBA, GL_FLOAT, rgba.data());
}

// The units of the zoom mode's derivative views.
constexpr const char* kQuantityUnits = "per texel";

}  // namespace

ZoomMode::ZoomMode(const ZoomOptions& options, MethodPass& pass) : options_(options), pass_(pass) {
  settings_.layout = options.layout;
  for (std::size_t i = 0; i < options.methods.size(); ++i)
    if (options.methods[i]) settings_.methods[i] = *options.methods[i];
  for (std::size_t i = 0; i < options.quantities.size(); ++i)
    if (options.quantities[i]) settings_.quantities[i] = *options.quantities[i];
  settings_.lambda = options.lambda;
  settings_.sigma = options.sigma;
  settings_.angle_deg = wrap_degrees(static_cast<float>(options.angle_deg));
  accuracy_.enabled = options.accuracy;
  accuracy_.heat_map = options.heat_map;
  accuracy_.reference = options.reference;
  timers_meaningful_ = gl::timer_queries_meaningful();
  if (options.image == kZonePlateName) {  // the bundled zone plate, with its function
    open_bundled(2);
    return;
  }
  const std::string first = options.image.empty() ? default_image_path() : options.image;
  fallback_pending_ = !options.strict && first != default_image_path();
  open(first);
}

ZoomMode::~ZoomMode() {
  if (decoding_.valid()) decoding_.wait();
  if (smoothing_.valid()) smoothing_.wait();
}

void ZoomMode::start_decode(std::function<DecodedImage()> decode, std::string what) {
  if (decoding_.valid()) decoding_.wait();  // one load at a time; the newest request wins
  decoding_ = std::async(std::launch::async, std::move(decode));
  decoding_what_ = std::move(what);
}

bool ZoomMode::open(const std::string& path) {
  start_decode([path] { return decode_image(path); },
               "loading " + std::filesystem::path(path).filename().string());
  return true;
}

std::vector<std::string> ZoomMode::bundled() const {
  std::vector<std::string> labels;
  for (const Bundled& b : kBundled) labels.emplace_back(b.label);
  return labels;
}

bool ZoomMode::open_bundled(std::size_t index) {
  if (index >= std::size(kBundled)) return false;
  const Bundled& b = kBundled[index];
  if (b.asset) return open(asset_path(b.asset));
  if (index == 2) {
    start_decode([] { return zone_plate_image(); }, "generating the zone plate");
  } else {
    start_decode([] { return synthetic_image("resolution chart 512 x 512", resolution_chart()); },
                 "generating the resolution chart");
  }
  return true;
}

std::string ZoomMode::title() const {
  return document_ ? document_->label : std::string();
}

void ZoomMode::adopt(DecodedImage decoded) {
  ImageDocument doc = make_document(std::move(decoded));
  if (!doc.prefilter_notice.empty() && doc.prefilter_notice != notice_)
    std::fprintf(stderr, "splineview: %s\n", doc.prefilter_notice.c_str());
  notice_ = doc.prefilter_notice;
  if (smoothing_.valid()) smoothing_.wait();  // of the previous image: dropped
  smoothing_ = {};
  if (first_document_) {
    window_.reset(doc.range, options_.window, options_.level);
  } else {
    window_.reset(doc.range);  // another image: its own automatic window
  }
  first_document_ = false;
  document_ = std::move(doc);
  grbf_.reset(std::make_shared<const ArrayF>(document_->samples), document_->exact);
  view_pending_ = true;
  lambda_ = 0.0;
  smoothing_path_ = document_->prefilter_on_gpu ? "cuda" : "cpu";
  smoothing_kernel_ms_.reset();
  if (settings_.lambda > 0) {
    // The image's smoothing spline at once (the command line's lambda, or the slider's).
    start_smoothing(settings_.lambda);
    poll_smoothing(true);
  } else {
    quantity_ranges_.clear();
    readout_spline_[0].reset();
    readout_spline_[1].reset();
    make_meter();
  }
  if (accuracy_.enabled && !accuracy_.reference_problem().empty())
    std::fprintf(stderr, "splineview: error: %s: %s\n", document_->label.c_str(),
                 accuracy_.reference_problem().c_str());
}

void ZoomMode::make_meter() {
  const ImageDocument& doc = *document_;
  accuracy_.reset(nullptr);
  accuracy_.reset(std::make_unique<AccuracyMeter>(doc.exact, doc.samples, doc.coefficients,
                                                  doc.truth, lambda_));
  if (const GrbfSolution* g = grbf_.shown(); g && g->gpu && g->exact && accuracy_.has_meter())
    accuracy_.meter()->set_grbf(g->gpu, g->exact);
}

bool ZoomMode::grbf_wanted() const {
  if (!document_) return false;
  const int shown = settings_.layout == Layout::Wipe ? 2 : method_count(settings_.layout);
  for (int i = 0; i < shown; ++i)
    if (settings_.methods[static_cast<std::size_t>(i)] == gl::Fetch::Grbf) return true;
  return false;
}

void ZoomMode::use_grbf(const GrbfSolution& s) {
  if (!document_) return;
  gl::ImageTextures& t = document_->textures;
  t.grbf = {};
  if (s.gpu) {
    t.grbf = gl::upload_image(s.gpu->w);
    const std::size_t ch = s.gpu->w.channels();
    t.grbf_fetch = grbf_.fetch_options(ch == 1 || ch == 3);
  }
  accuracy_.set_grbf(s.gpu, s.exact);
}

void ZoomMode::update_grbf(double time_s, bool now) {
  if (!document_) return;
  if (std::optional<GrbfSolution> s = grbf_.update(grbf_wanted(), settings_.sigma, time_s, now))
    use_grbf(*s);
}

void ZoomMode::apply_coefficients(ArrayF coefficients, double lambda, bool uploaded) {
  if (!document_) return;
  if (!uploaded) upload_coefficients(document_->textures.coefficients, coefficients);
  document_->coefficients = std::move(coefficients);  // the readout evaluates these
  lambda_ = lambda;
  quantity_ranges_.clear();
  readout_spline_[0].reset();
  readout_spline_[1].reset();
  make_meter();
}

std::vector<double> ZoomMode::quantity_at(std::size_t slot, const glm::dvec2& p) const {
  const gl::Quantity& q = settings_.quantities[slot];
  const gl::Fetch m = settings_.methods[slot];
  if (!document_ || q.kind == gl::QuantityKind::Value || !quantity_problem(slot).empty()) return {};
  const bool unfiltered = m == gl::Fetch::CubicUnfiltered;
  std::shared_ptr<const SplineDerivatives<double>>& spline = readout_spline_[unfiltered ? 1 : 0];
  if (!spline) {
    DerivativeOptions opt;
    opt.degree = 3;
    opt.boundary = Boundary::Reflect;
    opt.input_is_coefficients = true;
    opt.threads = 1;
    spline = std::make_shared<const SplineDerivatives<double>>(
        ArrayD::from(unfiltered ? document_->samples : document_->coefficients), opt);
  }
  const double at[2] = {p.y, p.x};
  std::vector<double> v(spline->channels());
  quantity_reference(*spline, q, {1.0, 1.0, 1.0}, at, 1, v.data());
  // Raw units: the normalisation is affine (raw = offset + scale v), so each derivative order
  // takes one factor of the scale (the offset drops out); the Hessian's determinant two.
  const double s = document_->range.scale.scale;
  const double f = q.kind == gl::QuantityKind::HessianDeterminant  ? s * s
                   : q.kind == gl::QuantityKind::GradientMagnitude ? std::fabs(s)
                                                                   : s;
  for (double& x : v) x *= f;
  return v;
}

void ZoomMode::start_smoothing(double lambda) {
  if (!document_) return;
  if (smoothing_.valid()) smoothing_.wait();
  if (document_->prefilter_on_gpu) {
    // CUDA into the coefficient texture through the interop, as the prefilter at load (one
    // transform of one image: milliseconds, so here on the GL thread), then read back for the
    // readout and the meter's GPU side.
    const auto start = std::chrono::steady_clock::now();
    try {
      gl::TextureInterop interop(document_->textures.coefficients);
      SplineTransformOptions t;
      t.degree = 3;
      t.lambda = lambda;
      t.boundary = Boundary::Reflect;
      interop.smooth_into(document_->samples, t);
      smoothing_path_ = interop.uses_cuda() ? "cuda" : "cpu";
      smoothing_kernel_ms_ = interop.last_kernel_ms();
      ArrayF c = read_back(document_->textures.coefficients, document_->samples.dims(),
                           document_->samples.channels());
      smoothing_ms_ =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      apply_coefficients(std::move(c), lambda, true);
    } catch (const std::exception& e) {
      error_ = std::string("smoothing: ") + e.what();
      settings_.lambda = lambda_;  // back to what is shown
    }
    return;
  }
  smoothing_path_ = "cpu";
  smoothing_kernel_ms_.reset();
  smoothing_lambda_ = lambda;
  smoothing_start_ = std::chrono::steady_clock::now();
  smoothing_ = std::async(std::launch::async, [samples = document_->samples, lambda] {
    return smoothed(samples, lambda);
  });
}

void ZoomMode::poll_smoothing(bool wait) {
  if (!smoothing_.valid()) return;
  if (!wait && smoothing_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
  try {
    ArrayF c = smoothing_.get();
    smoothing_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                              smoothing_start_)
                        .count();
    apply_coefficients(std::move(c), smoothing_lambda_);
  } catch (const std::exception& e) {
    error_ = std::string("smoothing: ") + e.what();
    settings_.lambda = lambda_;  // back to what is shown
  }
}

std::string ZoomMode::quantity_problem(std::size_t slot) const {
  return gl::quantity_problem(settings_.methods[slot], settings_.quantities[slot], 2);
}

QuantityView ZoomMode::quantity_view(std::size_t slot) const {
  QuantityView v;
  v.quantity = settings_.quantities[slot];
  if (v.is_value() || !document_) return v;
  v.colour = document_->samples.channels() == 1;
  if (options_.quantity_range) {
    v.range = *options_.quantity_range;
    return v;
  }
  const std::string key = gl::quantity_name(v.quantity);
  auto it = quantity_ranges_.find(key);
  if (it == quantity_ranges_.end())
    it = quantity_ranges_.emplace(key, quantity_range(document_->coefficients, v.quantity)).first;
  v.range = it->second;
  return v;
}

void ZoomMode::poll_decode() {
  if (!decoding_.valid() ||
      decoding_.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
    return;
  try {
    adopt(decoding_.get());
    if (!fallback_pending_) error_.clear();
    fallback_pending_ = false;
  } catch (const std::exception& e) {
    error_ = e.what();
    if (fallback_pending_) {
      fallback_pending_ = false;
      error_ += "\nShowing the default image instead.";
      const std::string fallback = default_image_path();
      start_decode([fallback] { return decode_image(fallback); }, "loading the default image");
      fallback_pending_ = true;  // keep the error above once the fallback loads
    }
  }
}

std::vector<Rect> ZoomMode::cells(const FrameInfo& f) const {
  return layout_cells(settings_.layout, f.area);
}

std::vector<ZoomMode::Pane> ZoomMode::panes(const std::vector<Rect>& cells) const {
  std::vector<Pane> out;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const Rect& c = cells[i];
    if (settings_.layout == Layout::Wipe) {
      const double d = wipe_divider_x(c, settings_.wipe);
      if (d > c.x) out.push_back({0, {c.x, c.y, d - c.x, c.height}, 0.0});
      if (c.x + c.width > d) out.push_back({1, {d, c.y, c.x + c.width - d, c.height}, d - c.x});
    } else {
      out.push_back({i, c, 0.0});
    }
  }
  return out;
}

double ZoomMode::angle_rad() const {
  return settings_.angle_deg * kPi / 180.0;
}

std::vector<AccuracyJob> ZoomMode::accuracy_jobs(const std::vector<Rect>& cells) const {
  std::vector<AccuracyJob> jobs;
  for (const Pane& p : panes(cells)) {
    // Pixel (r, c) of the pane has its centre at (x_in_cell + c + 0.5, r + 0.5) in the cell's
    // coordinates, where the shared view transform applies.
    const glm::dvec2 o = view_.image_position({p.x_in_cell + 0.5, 0.5});
    const glm::dvec2 dc = view_.image_position({p.x_in_cell + 1.5, 0.5}) - o;
    const glm::dvec2 dr = view_.image_position({p.x_in_cell + 0.5, 1.5}) - o;
    AccuracyJob job;
    job.method = settings_.methods[p.slot];
    job.quantity = settings_.quantities[p.slot];
    job.grid.rows = static_cast<std::size_t>(p.rect.height);
    job.grid.cols = static_cast<std::size_t>(p.rect.width);
    job.grid.origin = {o.y, o.x, 0.0};  // array axis order (y, x)
    job.grid.step_row = {dr.y, dr.x, 0.0};
    job.grid.step_col = {dc.y, dc.x, 0.0};
    jobs.push_back(job);
  }
  return jobs;
}

void ZoomMode::update_accuracy(const FrameInfo& f, bool now) {
  if (!document_ || !accuracy_.has_meter() || !accuracy_.enabled) return;
  try {
    accuracy_.update(accuracy_jobs(cells(f)), f.time_s, now);
  } catch (const std::exception& e) {
    error_ = e.what();
  }
}

void ZoomMode::reset_view(const Rect& cell, std::optional<double> zoom,
                          std::optional<glm::dvec2> center) {
  if (!document_) return;
  const glm::dvec2 size(document_->width(), document_->height());
  view_ = ViewTransform::looking_at(center.value_or(size / 2.0 - 0.5), local(cell),
                                    zoom.value_or(ViewTransform::fit(size, local(cell)).zoom()),
                                    angle_rad());
}

std::optional<ZoomMode::Hover> ZoomMode::hover_at(const std::vector<Rect>& cells,
                                                  const glm::dvec2& cursor) const {
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

void ZoomMode::handle_input(const FrameInfo& f, const std::vector<Rect>& cells) {
  const ImGuiIO& io = ImGui::GetIO();
  const glm::dvec2 cursor = glm::dvec2(io.MousePos.x, io.MousePos.y) * f.fb_scale;
  hover_.reset();
  if (ImGui::IsMousePosValid() && f.mouse_free) hover_ = hover_at(cells, cursor);
  // Window/level first: Shift + left drag must not also pan.
  const bool window_drag =
      window_.handle_drag(hover_.has_value() && !dragging_ && !dragging_divider_,
                          glm::dvec2(io.MouseDelta.x, io.MouseDelta.y) * f.fb_scale);
  if (hover_) {
    if (io.MouseWheel != 0.0f)
      view_.zoom_about(hover_->local, std::pow(1.2, static_cast<double>(io.MouseWheel)));
    if (!window_drag && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
      const bool on_divider =
          settings_.layout == Layout::Wipe &&
          std::abs(cursor.x - wipe_divider_x(cells[hover_->cell], settings_.wipe)) <=
              kDividerGrab * f.ui_scale;
      (on_divider ? dragging_divider_ : dragging_) = true;
    }
  }
  if (dragging_ || dragging_divider_) {
    if (!io.MouseDown[ImGuiMouseButton_Left]) {
      dragging_ = dragging_divider_ = false;
    } else if (dragging_) {
      view_.pan_by(glm::dvec2(io.MouseDelta.x, io.MouseDelta.y) * f.fb_scale);
    } else if (!cells.empty()) {
      const Rect& c = cells.front();
      settings_.wipe = static_cast<float>(std::clamp((cursor.x - c.x) / c.width, 0.0, 1.0));
    }
  }
  if (f.keyboard_free) {
    if (ImGui::IsKeyPressed(GLFW_KEY_R, false) && !cells.empty()) {
      settings_.angle_deg = 0.0f;
      reset_view(cells.front());
    }
    if (ImGui::IsKeyPressed(GLFW_KEY_SPACE, false))
      std::swap(settings_.methods[0], settings_.methods[1]);
    if (ImGui::IsKeyPressed(GLFW_KEY_L, false)) settings_.loupe = !settings_.loupe;
    if (ImGui::IsKeyPressed(GLFW_KEY_H, false)) accuracy_.heat_map = !accuracy_.heat_map;
    if (ImGui::IsKeyPressed(GLFW_KEY_LEFT_BRACKET, true))
      settings_.angle_deg = wrap_degrees(settings_.angle_deg + kRotationStep);
    if (ImGui::IsKeyPressed(GLFW_KEY_RIGHT_BRACKET, true))
      settings_.angle_deg = wrap_degrees(settings_.angle_deg - kRotationStep);
    for (std::size_t i = 0; i < kViewMethods.size(); ++i) {
      if (ImGui::IsKeyPressed(GLFW_KEY_1 + static_cast<int>(i), false))
        settings_.methods[hover_ ? hover_->slot : 0] = kViewMethods[i];
    }
  }
}

void ZoomMode::follow_layout(const std::vector<Rect>& cells) {
  if (cells.empty()) return;
  const glm::dvec2 size(cells.front().width, cells.front().height);
  if (size != cell_size_ && cell_size_.x > 0) {
    const glm::dvec2 centre = view_.image_position(cell_size_ / 2.0);
    view_ = ViewTransform::looking_at(centre, local(cells.front()), view_.zoom(), view_.angle());
  }
  cell_size_ = size;
  if (view_.angle() != angle_rad()) view_.rotate_about(size / 2.0, angle_rad());
}

void ZoomMode::update(const FrameInfo& f) {
  ui_scale_ = f.ui_scale;
  poll_decode();
  // The smoothing: adopt a finished transform; start the next once the slider has rested.
  poll_smoothing(f.batch);
  if (document_ && !smoothing_.valid() && settings_.lambda != lambda_ &&
      (f.batch || f.time_s - lambda_changed_s_ >= kLambdaDebounceS)) {
    start_smoothing(settings_.lambda);
    if (f.batch) poll_smoothing(true);
  }
  const std::vector<Rect> c = cells(f);
  if (document_ && view_pending_ && !c.empty() && f.fb_width > 0 && f.fb_height > 0) {
    if (first_view_) {
      reset_view(c.front(), options_.zoom, options_.center);
    } else {
      reset_view(c.front());
    }
    cell_size_ = glm::dvec2(c.front().width, c.front().height);
    view_pending_ = false;
    first_view_ = false;
  }
  if (document_) {
    handle_input(f, c);
    follow_layout(c);
  }
  update_grbf(f.time_s, f.batch);
  update_accuracy(f, f.batch);
}

std::vector<PassTiming> ZoomMode::timings() const {
  std::vector<PassTiming> out;
  if (!timers_meaningful_) return out;
  for (std::size_t i = 0; i < pass_ms_.size(); ++i)
    if (pass_ms_[i].count() > 0) out.push_back({pass_names_[i], &pass_ms_[i]});
  return out;
}

void ZoomMode::panel(const FrameInfo& f) {
  const float scale = f.ui_scale;
  section("Image");
  if (document_) {
    ImGui::TextUnformatted(document_->label.c_str());
    ImGui::TextDisabled("%s", document_->description.c_str());
    if (document_->prefilter_on_gpu) {
      if (document_->prefilter_kernel_ms) {
        ImGui::TextDisabled("prefilter: CUDA into the GL texture, kernels %.3f ms (CUDA events)",
                            *document_->prefilter_kernel_ms);
      }
      ImGui::TextDisabled("load %.1f ms, upload %.1f ms, prefilter call %.1f ms",
                          document_->load_ms, document_->upload_ms, document_->prefilter_ms);
    } else {
      ImGui::TextDisabled("load %.1f ms, upload %.1f ms, prefilter (CPU, then upload) %.1f ms",
                          document_->load_ms, document_->upload_ms, document_->prefilter_ms);
    }
    if (!document_->prefilter_notice.empty())
      ImGui::TextDisabled("%s", document_->prefilter_notice.c_str());
  } else {
    ImGui::TextDisabled("no image loaded");
  }
  if (document_) window_.panel(scale);

  section("Views");
  int layout = static_cast<int>(settings_.layout);
  const Layout layouts[] = {Layout::Single, Layout::Pair, Layout::Grid, Layout::Wipe};
  for (int i = 0; i < 4; ++i) {
    if (i > 0) ImGui::SameLine();
    ImGui::RadioButton(layout_name(layouts[i]), &layout, static_cast<int>(layouts[i]));
  }
  settings_.layout = static_cast<Layout>(layout);
  const int shown = method_count(settings_.layout);
  for (int i = 0; i < shown; ++i) {
    char label[32];
    if (settings_.layout == Layout::Wipe) {
      std::snprintf(label, sizeof label, i == 0 ? "left" : "right");
    } else if (shown == 1) {
      std::snprintf(label, sizeof label, "method");
    } else {
      std::snprintf(label, sizeof label, "view %d", i + 1);
    }
    ImGui::SetNextItemWidth(-80.0f * scale);
    method_combo(label, &settings_.methods[static_cast<std::size_t>(i)], true);
    char qlabel[48];
    std::snprintf(qlabel, sizeof qlabel, "  shows##q%d", i);
    ImGui::SetNextItemWidth(-80.0f * scale);
    quantity_combo(qlabel, &settings_.quantities[static_cast<std::size_t>(i)], 2,
                   settings_.methods[static_cast<std::size_t>(i)]);
    if (const std::string problem = quantity_problem(static_cast<std::size_t>(i)); !problem.empty())
      ImGui::TextColored(ImVec4(1.0f, 0.6f, 0.3f, 1.0f), "  %s", problem.c_str());
  }
  {
    // The derivative views' display ranges (one per quantity shown).
    std::vector<std::string> shown_q;
    for (int i = 0; i < shown; ++i) {
      const gl::Quantity& q = settings_.quantities[static_cast<std::size_t>(i)];
      const std::string key = gl::quantity_name(q);
      if (q.kind == gl::QuantityKind::Value || !document_ ||
          std::find(shown_q.begin(), shown_q.end(), key) != shown_q.end())
        continue;
      shown_q.push_back(key);
      const QuantityView v = quantity_view(static_cast<std::size_t>(i));
      if (options_.quantity_range) {
        ImGui::TextDisabled("%s range %.4g (--quantity-range)", gl::quantity_label(q).c_str(),
                            v.range);
        continue;
      }
      double r = v.range;
      const double lo = r / 100.0, hi = r * 100.0;
      ImGui::SetNextItemWidth(-80.0f * scale);
      const std::string label = gl::quantity_label(q) + " range";
      if (ImGui::SliderScalar(label.c_str(), ImGuiDataType_Double, &r, &lo, &hi,
                              gl::quantity_signed(q) ? "+-%.4g" : "0..%.4g",
                              ImGuiSliderFlags_Logarithmic) &&
          r > 0)
        quantity_ranges_[key] = r;
    }
    if (!shown_q.empty()) {
      if (ImGui::Button("automatic ranges")) quantity_ranges_.clear();
      ImGui::TextDisabled(
          "derivatives in normalised units per texel (sample spacing); signed ones through a "
          "diverging map centred at 0, the gradient magnitude from 0; automatic range: the "
          "99.5th percentile of |value| over the image");
    }
  }
  {
    // The GRBF's sigma (debounced like lambda; solved on a worker thread when a view shows it).
    float sigma = static_cast<float>(settings_.sigma);
    ImGui::SetNextItemWidth(-80.0f * scale);
    if (ImGui::SliderFloat("GRBF sigma", &sigma, static_cast<float>(kGrbfSigmaMin),
                           static_cast<float>(kGrbfSigmaMax), "%.3f")) {
      settings_.sigma = static_cast<double>(sigma);
      grbf_.sigma_changed(f.time_s);
    }
    if (grbf_wanted()) {
      const std::string status = grbf_.status(settings_.sigma);
      if (const GrbfSolution* g = grbf_.shown(); g && g->gpu && status.empty()) {
        ImGui::TextDisabled(
            "GRBF: sigma %.3g, condition %.3g, radius %.2f, solved in %.1f ms (CPU, "
            "float; reference in double)",
            g->sigma, g->gpu->system.condition, g->gpu->radius.front(), g->ms);
      } else if (const GrbfSolution* r = grbf_.shown();
                 r && !r->error.empty() && !grbf_.solving()) {
        ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 150, 80, 255));
        ImGui::TextWrapped("GRBF: %s", status.c_str());
        ImGui::PopStyleColor();
      } else {
        ImGui::TextDisabled("GRBF: %s", status.c_str());
      }
    }
  }
  if (ImGui::Button(settings_.layout == Layout::Single ? "A/B: show the other method [Space]"
                                                       : "A/B: swap the first two [Space]"))
    std::swap(settings_.methods[0], settings_.methods[1]);
  if (settings_.layout == Layout::Single) {
    ImGui::TextDisabled("B is %s", method_display_name(settings_.methods[1]));
    ImGui::TextDisabled("%s", method_explanation(settings_.methods[0]));
  } else if (settings_.layout == Layout::Wipe) {
    ImGui::TextDisabled("drag the divider to move it");
  }
  ImGui::TextDisabled("keys 1-7 set the method of the view under the cursor (7: GRBF)");

  section("Smoothing");
  {
    ImGui::SetNextItemWidth(-80.0f * scale);
    const double lo = 0.0, hi = kLambdaMax;
    if (ImGui::SliderScalar("lambda", ImGuiDataType_Double, &settings_.lambda, &lo, &hi, "%.4g",
                            ImGuiSliderFlags_Logarithmic))
      lambda_changed_s_ = f.time_s;
    ImGui::TextDisabled(
        "the coefficients of the cubic smoothing spline (the direct transform with lambda; 0: "
        "the interpolating prefilter), by CUDA into the GL texture where the prefilter runs "
        "there, else on the CPU then uploaded; the prefiltered views and the accuracy "
        "reference use them");
    if (smoothing_.valid()) {
      ImGui::TextDisabled("smoothing with lambda %.4g ...", smoothing_lambda_);
    } else if (lambda_ > 0) {
      ImGui::TextDisabled("shown: lambda %.4g (%s, %.1f ms)", lambda_,
                          smoothing_path_ == "cuda" ? "CUDA into the GL texture" : "CPU",
                          smoothing_ms_);
    }
  }

  section("View");
  if (document_) ImGui::Text("zoom %.3gx (%.0f%%)", view_.zoom(), view_.zoom() * 100.0);
  ImGui::SetNextItemWidth(-80.0f * scale);
  ImGui::SliderFloat("rotation", &settings_.angle_deg, -180.0f, 180.0f, "%.1f deg");
  if (ImGui::Button("Reset [R]") && !last_cells_.empty()) {
    settings_.angle_deg = 0.0f;
    reset_view(last_cells_.front());
  }
  ImGui::SameLine();
  if (ImGui::Button("1:1") && !last_cells_.empty())
    view_.zoom_about(local(last_cells_.front()).centre(), 1.0 / view_.zoom());
  ImGui::SameLine();
  ImGui::Checkbox("loupe [L]", &settings_.loupe);
  if (settings_.loupe) {
    ImGui::SetNextItemWidth(-80.0f * scale);
    ImGui::SliderFloat("loupe zoom", &settings_.loupe_factor, 2.0f, 16.0f, "%.0fx");
  }
  ImGui::TextDisabled(
      "wheel: zoom about the cursor, left drag: pan, [ and ]: rotate by 5 deg, middle or "
      "Shift+left drag: window/level");
  if (hover_ && document_) {
    const glm::dvec2 p = view_.image_position(hover_->local);
    ImGui::Text("source position x %.3f, y %.3f", p.x, p.y);
    const nlohmann::json r = readout(p);
    if (r["pixel"].is_null()) {
      ImGui::TextDisabled("outside the image");
    } else {
      const auto line = [](const std::string& head, const nlohmann::json& values) {
        std::string text = head;
        char number[32];
        for (const nlohmann::json& v : values) {
          std::snprintf(number, sizeof number, " %.6g", v.get<double>());
          text += number;
        }
        ImGui::TextUnformatted(text.c_str());
      };
      line("pixel (" + std::to_string(r["pixel"][0].get<int>()) + ", " +
               std::to_string(r["pixel"][1].get<int>()) + ") stored:",
           r["stored"]);
      for (int i = 0; i < method_count(settings_.layout); ++i) {
        const gl::Fetch m = settings_.methods[static_cast<std::size_t>(i)];
        if (!r["values"].contains(gl::fetch_name(m))) continue;  // the GRBF before its solve
        line(std::string(method_short_name(m)) + ":", r["values"][gl::fetch_name(m)]);
      }
      if (r.contains("quantities"))
        for (const nlohmann::json& q : r["quantities"])
          line("view " + std::to_string(q["view"].get<int>()) + " " +
                   gl::quantity_label(gl::parse_quantity(q["quantity"].get<std::string>(), 2)) +
                   " (raw per texel):",
               q["values"]);
      ImGui::TextDisabled(
          "raw values (the file's units); the methods' values from the CPU double reference "
          "(sv::sample, the method's degree, on the same samples or coefficients), not read "
          "back from the screen, so not windowed");
    }
  } else {
    ImGui::TextDisabled("cursor outside the views");
  }

  AccuracyPanel text;
  if (const std::vector<AccuracyResult>& results = accuracy_.results(); !results.empty()) {
    char explanation[480];
    const AccuracyReference& ref = results.front().reference;
    const std::string against =
        ref.kind == ReferenceKind::Truth
            ? (document_ ? document_->truth.label : std::string("the function")) +
                  " in double at the same float positions"
        : ref.kind == ReferenceKind::Method
            ? "sv::sample of " + reference_label(ref)
            : std::string("sv::sample of the same method in double");
    std::snprintf(explanation, sizeof explanation,
                  "each view's method (GLSL, as drawn) against %s at the view's %zu pixel "
                  "centres inside the image, all channels; in normalised units (1 = %.6g raw, "
                  "the automatic window's width), before the display window and its clamp, so "
                  "the window does not change them.%s",
                  against.c_str(), results.front().points,
                  document_ ? document_->range.scale.scale : 1.0,
                  ref.kind == ReferenceKind::SameMethod
                      ? " Same figures as splinetool sample (gl vs cpu double) + compare at "
                        "those positions."
                      : "");
    text.explanation = explanation;
  }
  accuracy_section(accuracy_, text);
  (void)scale;
}

void ZoomMode::overlays(const FrameInfo& f, ImDrawList* list) {
  if (!document_) return;
  const std::vector<Rect> c = cells(f);
  last_cells_ = c;
  const glm::dvec2 fs = f.fb_scale;
  const float s = f.ui_scale;
  const auto pt = [&](double x, double y) {
    return ImVec2(static_cast<float>(x / fs.x), static_cast<float>(y / fs.y));
  };
  const auto label = [&](double x, double y, const char* text, bool right_align) {
    const ImVec2 size = ImGui::CalcTextSize(text);
    const float pad = 4.0f * s;
    ImVec2 at = pt(x, y);
    if (right_align) at.x -= size.x + 2 * pad;
    list->AddRectFilled(at, ImVec2(at.x + size.x + 2 * pad, at.y + size.y + 2 * pad),
                        IM_COL32(0, 0, 0, 170), 3.0f * s);
    list->AddText(ImVec2(at.x + pad, at.y + pad), IM_COL32(235, 235, 235, 255), text);
  };
  // Heat maps first, labels on top.
  const std::vector<Pane> p = panes(c);
  const bool heat = accuracy_.heat_map && accuracy_.enabled;
  if (heat) {
    for (std::size_t i = 0; i < p.size(); ++i) {
      const gl::Texture* t = accuracy_.heat_texture(i);
      if (!t || !accuracy_.result(i)) continue;
      draw_heat_map(list, *t, p[i].rect, accuracy_.heat_opacity, fs);
    }
  }
  const double margin = 6.0 * s;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const Pane& pane = p[i];
    char text[1024];
    std::string name = method_short_name(settings_.methods[pane.slot]);
    const gl::Quantity& q = settings_.quantities[pane.slot];
    const std::string problem = quantity_problem(pane.slot);
    if (settings_.methods[pane.slot] == gl::Fetch::Grbf) {
      const std::string status = grbf_.status(settings_.sigma);
      char sigma[48];
      std::snprintf(sigma, sizeof sigma, ", sigma %.3g", settings_.sigma);
      name += sigma;
      if (!status.empty()) name += "\n" + wrap_words(status, 56);
    }
    if (!problem.empty()) {
      name += "\n" + gl::quantity_label(q) + ": not shown, " + problem;
    } else if (q.kind != gl::QuantityKind::Value) {
      name += "\n" + gl::quantity_label(q) + " (" + kQuantityUnits + ")";
      draw_quantity_legend(list, pane.rect, quantity_view(pane.slot), kQuantityUnits, fs, s);
    }
    int n = settings_.layout == Layout::Single || settings_.layout == Layout::Wipe
                ? std::snprintf(text, sizeof text, "%s", name.c_str())
                : std::snprintf(text, sizeof text, "%zu  %s", pane.slot + 1, name.c_str());
    if (const AccuracyResult* r = accuracy_.enabled ? accuracy_.result(i) : nullptr;
        r && r->points > 0 && n > 0 && n < static_cast<int>(sizeof text))
      std::snprintf(text + n, sizeof text - static_cast<std::size_t>(n), "   RMS %.2e  max %.2e%s",
                    r->stats.rms, r->stats.max_abs, reference_tag(r->reference).c_str());
    const bool right = settings_.layout == Layout::Wipe && pane.slot == 0;
    label(right ? pane.rect.x + pane.rect.width - margin : pane.rect.x + margin,
          pane.rect.y + margin, text, right);
  }
  if (settings_.layout == Layout::Wipe) {
    for (const Rect& cell : c) {
      const double d = wipe_divider_x(cell, settings_.wipe);
      list->AddLine(pt(d, cell.y), pt(d, cell.y + cell.height), IM_COL32(255, 255, 255, 220),
                    2.0f * s);
      list->AddCircleFilled(pt(d, cell.y + cell.height / 2), 7.0f * s,
                            IM_COL32(255, 255, 255, 220));
    }
  }
  if (settings_.loupe && hover_ && hover_->cell < c.size()) {
    const Rect l = loupe_rect(c[hover_->cell]);
    list->AddRect(pt(l.x - 1, l.y - 1), pt(l.x + l.width + 1, l.y + l.height + 1),
                  IM_COL32(255, 210, 90, 255), 0.0f, 0, 2.0f * s);
  }
  if (heat && accuracy_.has_heat_maps()) draw_heat_legend(list, f.area, fs, s);
}

Rect ZoomMode::loupe_rect(const Rect& cell) const {
  return viewer::loupe_rect(cell, hover_->local + glm::dvec2(cell.x, cell.y),
                            kLoupeSide * ui_scale_, 24.0 * ui_scale_);
}

void ZoomMode::draw(const FrameInfo& f) {
  if (!document_ || f.fb_width <= 0 || f.fb_height <= 0) return;
  const std::vector<Rect> c = cells(f);
  const float checker = 16.0f * f.ui_scale;
  // Collect finished timer results (one per frame per slot at most).
  for (std::size_t i = 0; i < timers_.size(); ++i) {
    const std::uint64_t before = timers_[i].finished_count();
    const std::optional<double> ms = timers_[i].poll();
    if (ms && timers_[i].finished_count() != before) pass_ms_[i].push(static_cast<float>(*ms));
  }
  for (const Pane& p : panes(c)) {
    const Rect& cell = c[settings_.layout == Layout::Wipe ? 0 : p.slot];
    const glm::mat3 m = view_.shifted({cell.x, cell.y}).frag_to_image(f.fb_height);
    const gl::Fetch method = settings_.methods[p.slot];
    pass_names_[p.slot] =
        (settings_.layout == Layout::Wipe ? (p.slot == 0 ? "left: " : "right: ")
                                          : "view " + std::to_string(p.slot + 1) + ": ") +
        std::string(method_display_name(method));
    const QuantityView q = quantity_view(p.slot);
    if (!q.is_value()) pass_names_[p.slot] += ", " + gl::quantity_label(q.quantity);
    if (method == gl::Fetch::Grbf) {
      char sigma[40];
      std::snprintf(sigma, sizeof sigma, ", sigma %.3g", settings_.sigma);
      pass_names_[p.slot] += sigma;
    }
    gl::ScopedGpuTimer timing(timers_[p.slot]);
    pass_.draw(document_->textures, method, m, to_viewport(p.rect, f.fb_height), checker,
               window_.map(), q);
  }
  if (settings_.loupe && hover_ && hover_->cell < c.size()) {
    const Rect loupe = loupe_rect(c[hover_->cell]);
    const glm::dvec2 p = view_.image_position(hover_->local);
    const ViewTransform magnified = ViewTransform::looking_at(
        p, local(loupe), view_.zoom() * settings_.loupe_factor, view_.angle());
    pass_names_[kLoupeSlot] =
        std::string("loupe: ") + method_display_name(settings_.methods[hover_->slot]);
    gl::ScopedGpuTimer timing(timers_[kLoupeSlot]);
    pass_.draw(document_->textures, settings_.methods[hover_->slot],
               magnified.shifted({loupe.x, loupe.y}).frag_to_image(f.fb_height),
               to_viewport(loupe, f.fb_height), checker, window_.map(),
               quantity_view(hover_->slot));
  }
}

std::optional<Progress> ZoomMode::progress() const {
  if (decoding_.valid()) return Progress{decoding_what_, -1.0f};
  if (grbf_.solving()) return Progress{grbf_.status(settings_.sigma), -1.0f};
  if (accuracy_.enabled && accuracy_.busy())
    return Progress{"measuring the accuracy of the views", accuracy_.fraction()};
  return std::nullopt;
}

bool ZoomMode::settled() const {
  return document_ && !decoding_.valid() && !view_pending_ && !smoothing_.valid() &&
         settings_.lambda == lambda_ && accuracy_.settled() &&
         grbf_.settled(grbf_wanted(), settings_.sigma);
}

void ZoomMode::finish() {
  while (decoding_.valid()) {
    decoding_.wait();
    poll_decode();
  }
  poll_smoothing(true);
  if (document_ && settings_.lambda != lambda_) {
    start_smoothing(settings_.lambda);
    poll_smoothing(true);
  }
  update_grbf(0.0, true);
}

nlohmann::json ZoomMode::readout(const glm::dvec2& p) const {
  nlohmann::json r;
  r["position"] = {p.x, p.y};
  r["units"] = "raw";
  if (!document_) return r;
  const bool inside = p.x >= -0.5 && p.y >= -0.5 && p.x <= document_->width() - 0.5 &&
                      p.y <= document_->height() - 0.5;
  if (!inside) {
    r["pixel"] = nullptr;
    return r;
  }
  const int x = std::clamp(static_cast<int>(std::floor(p.x + 0.5)), 0, document_->width() - 1);
  const int y = std::clamp(static_cast<int>(std::floor(p.y + 0.5)), 0, document_->height() - 1);
  r["pixel"] = {x, y};
  r["stored"] = raw_pixel(*document_, x, y);
  nlohmann::json values;
  for (gl::Fetch m : kMethods) values[gl::fetch_name(m)] = raw_value_at(*document_, m, p);
  if (const GrbfSolution* g = grbf_.shown(); g && g->exact) {
    // The GRBF interpolant in double (the accuracy reference's weights), in raw units.
    const double at[2] = {p.y, p.x};
    std::vector<double> v(g->exact->w.channels());
    grbf_sample(*g->exact, at, 1, v.data());
    for (double& value : v) value = document_->range.scale.raw(value);
    values[gl::fetch_name(gl::Fetch::Grbf)] = v;
  }
  r["values"] = values;
  // The derivative views' quantities there (raw units per texel).
  nlohmann::json quantities = nlohmann::json::array();
  for (int i = 0; i < method_count(settings_.layout); ++i) {
    const auto slot = static_cast<std::size_t>(i);
    const std::vector<double> v = quantity_at(slot, p);
    if (v.empty()) continue;
    quantities.push_back({{"view", i + 1},
                          {"method", gl::fetch_name(settings_.methods[slot])},
                          {"quantity", gl::quantity_name(settings_.quantities[slot])},
                          {"values", v}});
  }
  if (!quantities.empty()) r["quantities"] = quantities;
  return r;
}

nlohmann::json ZoomMode::report() const {
  nlohmann::json j;
  j["mode"] = "zoom";
  if (!document_) return j;
  j["image"] = document_->label;
  j["path"] = document_->path;
  j["width"] = document_->width();
  j["height"] = document_->height();
  j["channels"] = document_->samples.channels();
  j["prefilter"] = document_->prefilter_on_gpu ? "cuda" : "cpu";
  j["prefilter_call_ms"] = document_->prefilter_ms;
  if (document_->prefilter_kernel_ms) j["prefilter_kernel_ms"] = *document_->prefilter_kernel_ms;
  j["lambda"] = lambda_;
  j["smoothing"] = {
      {"lambda", lambda_},
      {"path", lambda_ > 0 ? smoothing_path_ : (document_->prefilter_on_gpu ? "cuda" : "cpu")},
      {"transform", lambda_ > 0 ? (smoothing_path_ == "cuda" ? "sv::cuda::direct_transform"
                                                             : "sv::direct_transform")
                                : "prefilter"},
      {"ms", smoothing_ms_}};
  if (lambda_ > 0 && smoothing_kernel_ms_) j["smoothing"]["kernel_ms"] = *smoothing_kernel_ms_;
  j["layout"] = layout_name(settings_.layout);
  j["angle_deg"] = settings_.angle_deg;
  j["zoom"] = view_.zoom();
  nlohmann::json views = nlohmann::json::array();
  const std::vector<Pane> p = panes(last_cells_);
  for (std::size_t i = 0; i < p.size(); ++i) {
    nlohmann::json v;
    v["method"] = gl::fetch_name(settings_.methods[p[i].slot]);
    if (settings_.methods[p[i].slot] == gl::Fetch::Grbf) {
      v["sigma"] = settings_.sigma;
      if (const std::string status = grbf_.status(settings_.sigma); !status.empty())
        v["grbf_problem"] = status;
    }
    const gl::Quantity& q = settings_.quantities[p[i].slot];
    v["quantity"] = gl::quantity_name(q);
    v["quantity_label"] = gl::quantity_label(q);
    if (q.kind != gl::QuantityKind::Value) {
      v["quantity_units"] = std::string("normalised units ") + kQuantityUnits;
      const std::string problem = quantity_problem(p[i].slot);
      if (!problem.empty()) {
        v["quantity_problem"] = problem;
      } else {
        const QuantityView qv = quantity_view(p[i].slot);
        v["quantity_range"] = qv.range;
        v["quantity_map"] = !gl::quantity_signed(q) ? "grey from 0"
                            : qv.colour             ? "diverging blue-grey-red centred at 0"
                                                    : "diverging grey per channel centred at 0";
      }
    }
    v["rect"] = {p[i].rect.x, p[i].rect.y, p[i].rect.width, p[i].rect.height};
    const bool grbf_refused =
        settings_.methods[p[i].slot] == gl::Fetch::Grbf && !grbf_.status(settings_.sigma).empty();
    if (const AccuracyResult* r = accuracy_.result(i);
        r && quantity_problem(p[i].slot).empty() && !grbf_refused) {
      const gl::GridMapping& g = r->job.grid;
      v["grid"] = {{"rows", g.rows},
                   {"cols", g.cols},
                   {"origin", {g.origin[0], g.origin[1]}},
                   {"step_row", {g.step_row[0], g.step_row[1]}},
                   {"step_col", {g.step_col[0], g.step_col[1]}}};
      v["accuracy"] = {{"rms", r->stats.rms},       {"max_abs", r->stats.max_abs},
                       {"sse", r->stats.sse},       {"psnr_db", number_or_null(r->stats.psnr)},
                       {"count", r->stats.count},   {"points", r->points},
                       {"error_max", r->error_max}, {"reference", reference_id(r->reference)}};
    }
    views.push_back(v);
  }
  j["views"] = views;
  if (grbf_wanted() || grbf_.shown()) j["grbf"] = grbf_.report();
  j["display_window"] = window_.report();
  // The accuracy figures are in normalised units: one unit is this many raw units.
  j["accuracy_units"] = {{"normalised", true}, {"raw_per_unit", document_->range.scale.scale}};
  nlohmann::json probes = nlohmann::json::array();
  for (const glm::dvec2& at : options_.probes) probes.push_back(readout(at));
  j["readout"] = probes;
  j["accuracy_reference"] = reference_id(accuracy_.reference);
  if (const std::string problem = accuracy_.reference_problem(); !problem.empty())
    j["accuracy_reference_problem"] = problem;
  return j;
}

}  // namespace sv::viewer
