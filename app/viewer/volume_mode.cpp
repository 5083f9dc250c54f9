// The volume slices mode (see volume_mode.h).
#include "volume_mode.h"

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include <imgui.h>

#include "layout.h"
#include "method_pass.h"
#include "panel_widgets.h"
#include "splineview/error.h"
#include "splineview/gl/cuda_interop.h"
#include "splineview/sampler.h"
#include "splineview/smoothing.h"

namespace sv::viewer {
namespace {

// The oblique plane's starting angles (radians): 30 degrees of tilt, 20 of turn.
constexpr double kDefaultObliqueTilt = 30.0 * 3.14159265358979323846 / 180.0;
constexpr double kDefaultObliqueTurn = 20.0 * 3.14159265358979323846 / 180.0;

constexpr double kPi = 3.14159265358979323846;
constexpr double kWheelZoom = 1.2;  // zoom factor per wheel notch (with Ctrl)
constexpr float kLabelMargin = 6.0f;
constexpr float kCrosshairGap = 8.0f;  // ImGui units left free around the crosshair point
// GLFW key codes of letters and digits are their ASCII codes; ImGui 1.86 takes them as-is.
constexpr int kKeyR = 'R';
constexpr int kKeyH = 'H';
constexpr int kKey1 = '1';

const char* kAxisNames[3] = {"z", "y", "x"};   // array axes
const char* kIndexNames[3] = {"k", "j", "i"};  // the same axes as NIfTI index names
constexpr const char* kUnorientedNote =
    "orientation not stated by the file: axes shown in file order";

ImU32 plane_colour(Plane p, int alpha = 255) {
  switch (p) {
    case Plane::Axial:
      return IM_COL32(255, 96, 96, alpha);
    case Plane::Coronal:
      return IM_COL32(96, 220, 96, alpha);
    case Plane::Sagittal:
      return IM_COL32(100, 160, 255, alpha);
    case Plane::Oblique:
      return IM_COL32(255, 210, 70, alpha);
  }
  return IM_COL32(255, 255, 255, alpha);
}

std::string format_index(double v) {
  char text[32];
  if (v == std::floor(v)) {
    std::snprintf(text, sizeof text, "%.0f", v);
  } else {
    std::snprintf(text, sizeof text, "%.2f", v);
  }
  return text;
}

bool inside_volume(const glm::dvec3& p, const std::array<std::size_t, 3>& dims) {
  for (int a = 0; a < 3; ++a)
    if (p[a] < -0.5 || p[a] > static_cast<double>(dims[static_cast<std::size_t>(a)]) - 0.5)
      return false;
  return true;
}

// A millimetre figure for labels: one decimal, never "-0.0" (storage order must not change it).
std::string format_mm(double mm, bool sign) {
  if (std::abs(mm) < 0.05) mm = 0.0;
  char text[32];
  std::snprintf(text, sizeof text, sign ? "%+.1f" : "%.1f", mm);
  return text;
}

nlohmann::json vec_json(const glm::dvec3& v) {
  return {v[0], v[1], v[2]};
}

// The voxel nearest to a position inside the volume (array order).
std::array<std::size_t, 3> nearest_voxel(const glm::dvec3& p,
                                         const std::array<std::size_t, 3>& dims) {
  std::array<std::size_t, 3> v{};
  for (int a = 0; a < 3; ++a) {
    const double hi = static_cast<double>(dims[static_cast<std::size_t>(a)]) - 1.0;
    v[static_cast<std::size_t>(a)] =
        static_cast<std::size_t>(std::clamp(std::floor(p[a] + 0.5), 0.0, hi));
  }
  return v;
}

std::string file_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

}  // namespace

VolumeMode::VolumeMode(VolumeOptions options)
    : options_(std::move(options)), view3d_(options_.view3d) {
  methods_.fill(options_.method);
  for (std::size_t i = 0; i < methods_.size(); ++i) {
    if (options_.methods[i]) {
      methods_[i] = *options_.methods[i];
      one_method_ = false;
    }
  }
  for (std::size_t i = 0; i < quantities_.size(); ++i)
    if (options_.quantities[i]) quantities_[i] = *options_.quantities[i];
  lambda_setting_ = options_.lambda;
  accuracy_.enabled = options_.accuracy;
  accuracy_.heat_map = options_.heat_map;
  accuracy_.reference = options_.reference;
  sigma_ = options_.sigma;
  limits_ = query_volume_limits();
  if (options_.texture_budget > 0) limits_.texture_budget = options_.texture_budget;
  if (options_.detail_budget) limits_.detail_budget = *options_.detail_budget;
  timers_meaningful_ = gl::timer_queries_meaningful();
  if (options_.path.empty()) {
    open_bundled(0);
  } else if (options_.path == kMarschnerLobbName) {
    open_bundled(1);
  } else {
    open(options_.path);
  }
}

VolumeMode::~VolumeMode() = default;  // waits for a decode still running (it ends on its own)

std::vector<std::string> VolumeMode::bundled() const {
  return {"MRI head (T1, 128x128x62)", "Marschner-Lobb (synthetic)"};
}

bool VolumeMode::open(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    error_ = path + ": no such file";
    return false;
  }
  // Every file, the bundled head included, shows in the orientation its own header states.
  const std::optional<RawSpec> raw = options_.raw;
  const VolumeLimits limits = limits_;
  start_load(file_name(path), [path, raw, limits] { return decode_volume(path, raw, limits); });
  return true;
}

bool VolumeMode::open_bundled(std::size_t index) {
  if (index == 0) return open(default_volume_path());
  if (index == 1) {
    const VolumeLimits limits = limits_;
    start_load("Marschner-Lobb",
               [limits] { return decode_marschner_lobb(kMarschnerLobbSize, limits); });
    return true;
  }
  error_ = "no bundled volume number " + std::to_string(index);
  return false;
}

std::string VolumeMode::title() const {
  if (doc_) return doc_->volume.name;
  return pending_ ? pending_->label : "volume";
}

void VolumeMode::start_load(std::string label, std::function<DecodedVolume()> decode) {
  if (pending_) abandoned_.push_back(std::move(pending_->decoded));
  pending_ = PendingLoad{std::move(label), std::async(std::launch::async, std::move(decode))};
}

void VolumeMode::complete_load() {
  PendingLoad load = std::move(*pending_);
  pending_.reset();
  try {
    DecodedVolume decoded = load.decoded.get();
    auto doc = std::make_unique<VolumeDocument>(
        upload_volume(std::move(decoded), limits_, options_.allow_cuda));
    const DecodedVolume& v = doc->volume;
    geometry_ = SliceGeometry(v.dims, v.geometry);
    // The oblique view starts tilted, so that it shows a plane none of the other three does.
    geometry_.set_oblique_angles(kDefaultObliqueTilt, kDefaultObliqueTurn);
    window_level_ = v.default_window;
    if (first_load_) {
      if (options_.window && *options_.window > 0) window_level_.window = *options_.window;
      if (options_.level) window_level_.level = *options_.level;
      zoom_pending_ = options_.zoom.has_value();
      if (options_.crosshair) {
        glm::dvec3 q = *options_.crosshair;  // the file's index to the document's
        for (int a = 0; a < 3; ++a) {
          const auto d = static_cast<std::size_t>(a);
          q[a] = (q[a] - v.overview_origin[d]) / v.overview_step[d];
        }
        geometry_.set_crosshair(q);
      }
    }
    first_load_ = false;
    accuracy_.reset(nullptr);  // the meter of the previous volume goes first
    meter_made_ = false;
    quantity_ranges_.clear();
    readout_spline_[0].reset();
    readout_spline_[1].reset();
    streamer_.reset(doc->volume.full_resolution);
    grbf_texture_ = {};
    grbf_.reset(
        doc->volume.samples.empty() ? nullptr : std::make_shared<const ArrayF>(doc->volume.samples),
        doc->volume.exact);
    if (smoothing_.valid()) smoothing_.wait();  // of the previous volume: dropped
    smoothing_ = {};
    doc_ = std::move(doc);
    fit_pending_ = true;
    error_.clear();
    lambda_ = 0.0;
    smoothing_path_ = doc_->prefilter_on_gpu ? "cuda" : "cpu";
    smoothing_note_ = doc_->volume.samples.empty()
                          ? "no smoothing: the samples were not kept (over the readout budget)"
                          : "";
    if (lambda_setting_ > 0 && smoothing_note_.empty()) {
      start_smoothing(lambda_setting_);
      poll_smoothing(true);
    }
  } catch (const std::exception& e) {
    // The previous volume (if any) stays.
    error_ = e.what();
  }
}

void VolumeMode::poll_load() {
  abandoned_.erase(std::remove_if(abandoned_.begin(), abandoned_.end(),
                                  [](std::future<DecodedVolume>& f) {
                                    return f.wait_for(std::chrono::seconds(0)) ==
                                           std::future_status::ready;
                                  }),
                   abandoned_.end());
  if (pending_ && pending_->decoded.wait_for(std::chrono::seconds(0)) == std::future_status::ready)
    complete_load();
}

void VolumeMode::finish() {
  if (pending_) {
    pending_->decoded.wait();
    complete_load();
  }
  poll_smoothing(true);
  if (doc_ && smoothing_note_.empty() && lambda_setting_ != lambda_) {
    start_smoothing(lambda_setting_);
    poll_smoothing(true);
  }
  fit_if_pending();
  if (laid_out_) update_streaming(time_s_, true);
  update_grbf(time_s_, true);
  if (laid_out_) update_accuracy(time_s_, true);
  if (view3d_.active()) view3d_.finish();
}

std::optional<Progress> VolumeMode::progress() const {
  if (pending_) return Progress{"loading " + pending_->label + ": reading and decoding", 0.25f};
  if (streamer_.busy()) return Progress{"streaming the full resolution under the views", 0.5f};
  if (grbf_.solving()) return Progress{grbf_.status(sigma_), -1.0f};
  if (accuracy_.enabled && accuracy_.busy())
    return Progress{"measuring the accuracy of the views", accuracy_.fraction()};
  return std::nullopt;
}

bool VolumeMode::accuracy_settled() const {
  if (!accuracy_.enabled || !doc_ || !laid_out_) return true;
  for (Plane p : kPlanes)
    if (const DetailTextures* d = detail(p);
        d && d->exact && detail_accuracy_of_[plane_index(p)] != d->exact.get())
      return false;
  for (const AccuracyOverlay& o : detail_accuracy_)
    if (!o.settled()) return false;
  return !fit_pending_ && meter_made_ && accuracy_.settled();
}

bool VolumeMode::settled() const {
  const bool smoothed =
      !smoothing_.valid() && (!doc_ || !smoothing_note_.empty() || lambda_setting_ == lambda_);
  return !pending_ && (doc_ || !error_.empty()) && smoothed && accuracy_settled() &&
         (!doc_ || !laid_out_ || (!fit_pending_ && streamer_.settled(detail_plans()))) &&
         (!doc_ || view3d_.settled()) && grbf_.settled(grbf_wanted(), sigma_);
}

std::array<DetailPlan, 4> VolumeMode::detail_plans() const {
  std::array<DetailPlan, 4> plans{};
  if (!doc_ || !laid_out_ || doc_->volume.overview_level == 0) return plans;
  for (Plane p : kPlanes) {
    if (method(p) == gl::Fetch::Grbf) {  // the GRBF's weights are the overview's: no streaming
      plans[plane_index(p)].why = "GRBF views show the overview (its weights)";
      continue;
    }
    plans[plane_index(p)] = plan_detail(doc_->volume, slice_grid(geometry_, p, cell(p)), limits_);
  }
  return plans;
}

const DetailTextures* VolumeMode::detail(Plane p) const {
  if (!doc_ || !laid_out_ || doc_->volume.overview_level == 0) return nullptr;
  return streamer_.detail(plane_index(p), detail_plans()[plane_index(p)]);
}

void VolumeMode::update_streaming(double time_s, bool now) {
  if (!doc_ || !laid_out_ || fit_pending_) return;
  try {
    streamer_.update(detail_plans(), time_s, now);
  } catch (const std::exception& e) {
    error_ = std::string("streaming the full resolution: ") + e.what();
  }
}

std::string VolumeMode::detail_status(Plane p, const DetailPlan& plan) const {
  if (!doc_ || doc_->volume.overview_level == 0) return {};
  if (streamer_.detail(plane_index(p), plan)) return "FULL RESOLUTION (streamed)";
  const std::string level = "OVERVIEW 1/" + std::to_string(1 << doc_->volume.overview_level);
  if (plan.stream && lambda_ > 0) return level + ": streaming off while smoothing (lambda > 0)";
  if (plan.stream) return level + " (streaming the full resolution ...)";
  return level + ": " + plan.why;
}

void VolumeMode::start_smoothing(double lambda) {
  if (!doc_ || doc_->volume.samples.empty()) return;
  if (smoothing_.valid()) smoothing_.wait();
  SplineTransformOptions t;
  t.degree = 3;
  t.lambda = lambda;
  t.boundary = Boundary::Reflect;
  if (doc_->prefilter_on_gpu) {
    // CUDA into the coefficient texture through the interop, as the prefilter at load.
    const auto start = std::chrono::steady_clock::now();
    try {
      gl::TextureInterop interop(doc_->coefficients_texture);
      interop.smooth_into(doc_->volume.samples, t);
      smoothing_path_ = interop.uses_cuda() ? "cuda" : "cpu";
      ArrayF c;
      if (doc_->has_readout()) {
        // The readout and the meter need the coefficients on the host: the CPU transform
        // would be the slow part, so they are read back from the texture.
        c = ArrayF(doc_->volume.samples.dims(), 1);
        SV_GL_CHECK(glGetTextureImage(doc_->coefficients_texture.id(), 0, GL_RED, GL_FLOAT,
                                      static_cast<GLsizei>(c.size() * sizeof(float)), c.data()));
      }
      smoothing_ms_ =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      apply_coefficients(std::move(c), lambda, true);
    } catch (const std::exception& e) {
      error_ = std::string("smoothing: ") + e.what();
      lambda_setting_ = lambda_;
    }
    return;
  }
  smoothing_path_ = "cpu";
  smoothing_lambda_ = lambda;
  smoothing_start_ = std::chrono::steady_clock::now();
  smoothing_ = std::async(std::launch::async, [samples = doc_->volume.samples, t] {
    ArrayF c = samples;
    direct_transform(c, t);
    return c;
  });
}

void VolumeMode::poll_smoothing(bool wait) {
  if (!smoothing_.valid()) return;
  if (!wait && smoothing_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
  try {
    ArrayF c = smoothing_.get();
    smoothing_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                              smoothing_start_)
                        .count();
    apply_coefficients(std::move(c), smoothing_lambda_, false);
  } catch (const std::exception& e) {
    error_ = std::string("smoothing: ") + e.what();
    lambda_setting_ = lambda_;
  }
}

void VolumeMode::apply_coefficients(ArrayF coefficients, double lambda, bool uploaded) {
  if (!doc_) return;
  if (!uploaded) {
    const std::array<std::size_t, 3>& d = doc_->volume.dims;
    GLint alignment = 0;
    glGetIntegerv(GL_UNPACK_ALIGNMENT, &alignment);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    SV_GL_CHECK(glTextureSubImage3D(doc_->coefficients_texture.id(), 0, 0, 0, 0,
                                    static_cast<GLsizei>(d[2]), static_cast<GLsizei>(d[1]),
                                    static_cast<GLsizei>(d[0]), GL_RED, GL_FLOAT,
                                    coefficients.data()));
    glPixelStorei(GL_UNPACK_ALIGNMENT, alignment);
  }
  if (doc_->has_readout() && coefficients.size() == doc_->coefficients.size())
    doc_->coefficients = std::move(coefficients);  // the readout and the meter's input
  lambda_ = lambda;
  quantity_ranges_.clear();
  readout_spline_[0].reset();
  accuracy_.reset(nullptr);  // made again with this lambda's double coefficients
  meter_made_ = false;
  // An overview's streamed boxes are prefiltered with lambda 0: streaming is off meanwhile.
  streamer_.reset(lambda_ > 0 ? nullptr : doc_->volume.full_resolution);
}

void VolumeMode::smoothing_panel(const FrameInfo& f) {
  section("Smoothing");
  if (!smoothing_note_.empty()) {
    ImGui::TextDisabled("%s", smoothing_note_.c_str());
    return;
  }
  const double lo = 0.0, hi = 1000.0;
  if (ImGui::SliderScalar("lambda", ImGuiDataType_Double, &lambda_setting_, &lo, &hi, "%.4g",
                          ImGuiSliderFlags_Logarithmic))
    lambda_changed_s_ = f.time_s;
  ImGui::TextDisabled(
      "the coefficients of the cubic smoothing spline (the direct transform with lambda, per "
      "axis in voxels; 0: the interpolating prefilter), by CUDA into the GL texture where the "
      "prefilter runs there, else on the CPU then uploaded; every prefiltered view, the 3-D "
      "view and the accuracy reference use them%s",
      doc_ && doc_->volume.overview_level > 0 ? "; an overview does not stream while lambda > 0"
                                              : "");
  if (smoothing_.valid()) {
    ImGui::TextDisabled("smoothing with lambda %.4g ...", smoothing_lambda_);
  } else if (lambda_ > 0) {
    ImGui::TextDisabled("shown: lambda %.4g (%s, %.1f ms)", lambda_,
                        smoothing_path_ == "cuda" ? "CUDA into the GL texture" : "CPU",
                        smoothing_ms_);
  }
}

std::vector<double> VolumeMode::quantity_at(Plane p, const glm::dvec3& pos) const {
  const gl::Quantity& q = quantities_[plane_index(p)];
  if (!doc_ || q.kind == gl::QuantityKind::Value || !quantity_problem(p).empty() ||
      !doc_->has_readout())
    return {};
  const bool unfiltered = method(p) == gl::Fetch::CubicUnfiltered;
  const ArrayF& data = unfiltered ? doc_->volume.samples : doc_->coefficients;
  if (data.empty()) return {};
  std::shared_ptr<const SplineDerivatives<double>>& spline = readout_spline_[unfiltered ? 1 : 0];
  if (!spline) {
    DerivativeOptions opt;
    opt.degree = 3;
    opt.boundary = Boundary::Reflect;  // the views' (and the meter's) extension
    opt.input_is_coefficients = true;
    opt.threads = 1;
    spline = std::make_shared<const SplineDerivatives<double>>(ArrayD::from(data), opt);
  }
  const double at[3] = {pos[0], pos[1], pos[2]};
  std::vector<double> v(spline->channels());
  quantity_reference(*spline, q, axis_scale(false), at, 1, v.data());
  return v;
}

std::array<double, 3> VolumeMode::axis_scale(bool streamed) const {
  if (!doc_) return {1.0, 1.0, 1.0};
  const DecodedVolume& v = doc_->volume;
  // Texture order (x, y, z) = array axes 2, 1, 0; a streamed box has the file's spacing, the
  // overview's divided by its step.
  std::array<double, 3> s{};
  for (std::size_t t = 0; t < 3; ++t) {
    const std::size_t a = 2 - t;
    const double spacing = v.spacing[static_cast<int>(a)] / (streamed ? v.overview_step[a] : 1.0);
    s[t] = spacing > 0 && std::isfinite(spacing) ? 1.0 / spacing : 1.0;
  }
  return s;
}

std::string VolumeMode::quantity_problem(Plane p) const {
  return gl::quantity_problem(method(p), quantities_[plane_index(p)], 3);
}

QuantityView VolumeMode::quantity_view(Plane p) const {
  QuantityView v;
  v.quantity = quantities_[plane_index(p)];
  if (v.is_value() || !doc_) return v;
  v.colour = true;
  if (options_.quantity_range) {
    v.range = *options_.quantity_range;
    return v;
  }
  const std::string key = gl::quantity_name(v.quantity);
  auto it = quantity_ranges_.find(key);
  if (it == quantity_ranges_.end())
    it = quantity_ranges_
             .emplace(key, quantity_range(doc_->coefficients, v.quantity, axis_scale(false)))
             .first;
  v.range = it->second;
  return v;
}

std::vector<AccuracyJob> VolumeMode::accuracy_jobs() const {
  std::vector<AccuracyJob> jobs;
  for (Plane p : kPlanes) {
    AccuracyJob job;
    job.method = method(p);
    job.quantity = quantities_[plane_index(p)];
    job.grid = slice_grid(geometry_, p, cell(p));
    jobs.push_back(job);
  }
  return jobs;
}

const AccuracyResult* VolumeMode::detail_accuracy(Plane p) const {
  const std::size_t i = plane_index(p);
  const DetailTextures* d = detail(p);
  if (!accuracy_.enabled || !d || !d->exact || detail_accuracy_of_[i] != d->exact.get())
    return nullptr;
  return detail_accuracy_[i].result(0);
}

void VolumeMode::update_detail_accuracy(double time_s, bool now) {
  for (Plane p : kPlanes) {
    const std::size_t i = plane_index(p);
    AccuracyOverlay& o = detail_accuracy_[i];
    const DetailTextures* d = accuracy_.enabled && doc_ ? detail(p) : nullptr;
    if (!d || !d->exact || !d->exact_coefficients) {
      if (o.has_meter() || detail_accuracy_of_[i]) o.reset(nullptr);
      detail_accuracy_of_[i] = nullptr;
      continue;
    }
    if (detail_accuracy_of_[i] != d->exact.get()) {
      detail_accuracy_of_[i] = d->exact.get();
      try {
        o.reset(std::make_unique<AccuracyMeter>(d->exact, d->samples, d->coefficients,
                                                AnalyticTruth{}, 0.0, axis_scale(true),
                                                d->exact_coefficients));
      } catch (const std::exception& e) {
        o.reset(nullptr, std::string("no accuracy overlay for the streamed box: ") + e.what());
        continue;
      }
    }
    o.enabled = true;
    o.heat_map = accuracy_.heat_map;
    o.heat_opacity = accuracy_.heat_opacity;
    o.reference = accuracy_.reference.kind == ReferenceKind::Truth ? AccuracyReference{}
                                                                   : accuracy_.reference;
    // The view's grid in the box's index: file index (the overview's map) minus the box's origin.
    const DecodedVolume& v = doc_->volume;
    const gl::GridMapping g = slice_grid(geometry_, p, cell(p));
    AccuracyJob job;
    job.method = method(p);
    job.quantity = quantities_[i];
    job.grid = g;
    for (std::size_t a = 0; a < 3; ++a) {
      job.grid.origin[a] = v.overview_origin[a] + v.overview_step[a] * g.origin[a] -
                           static_cast<double>(d->box.lo[a]);
      job.grid.step_row[a] = v.overview_step[a] * g.step_row[a];
      job.grid.step_col[a] = v.overview_step[a] * g.step_col[a];
    }
    try {
      o.update({job}, time_s, now);
    } catch (const std::exception& e) {
      error_ = e.what();
    }
  }
}

void VolumeMode::update_accuracy(double time_s, bool now) {
  if (!accuracy_.enabled || !doc_ || !laid_out_) return;
  update_detail_accuracy(time_s, now);
  if (!meter_made_) {
    meter_made_ = true;
    if (!doc_->has_accuracy_input()) {
      accuracy_.reset(nullptr, doc_->volume.accuracy_note);
    } else {
      try {
        accuracy_.reset(std::make_unique<AccuracyMeter>(doc_->volume.exact, doc_->volume.samples,
                                                        doc_->coefficients, doc_->volume.truth,
                                                        lambda_, axis_scale(false)));
        if (const GrbfSolution* g = grbf_.shown(); g && g->gpu && g->exact)
          accuracy_.meter()->set_grbf(g->gpu, g->exact);
        if (!accuracy_.reference_problem().empty())
          std::fprintf(stderr, "splineview: error: %s: %s\n", doc_->volume.name.c_str(),
                       accuracy_.reference_problem().c_str());
      } catch (const std::exception& e) {
        accuracy_.reset(nullptr, std::string("no accuracy overlay: ") + e.what());
      }
    }
  }
  try {
    accuracy_.update(accuracy_jobs(), time_s, now);
  } catch (const std::exception& e) {
    error_ = e.what();
  }
}

bool VolumeMode::grbf_wanted() const {
  if (!doc_ || view3d_.active()) return false;
  for (Plane p : kPlanes)
    if (method(p) == gl::Fetch::Grbf) return true;
  return false;
}

VolumeGrbf VolumeMode::grbf_view() const {
  VolumeGrbf g;
  if (grbf_texture_) g.weights = &grbf_texture_;
  g.fetch = grbf_fetch_;
  return g;
}

void VolumeMode::use_grbf(const GrbfSolution& s) {
  grbf_texture_ = {};
  if (s.gpu) {
    grbf_texture_ = volume_texture(doc_->volume.dims);
    grbf_texture_.set_filter(GL_NEAREST, GL_NEAREST);  // texelFetch only
    grbf_texture_.upload(GL_RED, GL_FLOAT, s.gpu->w.data());
    grbf_fetch_ = grbf_.fetch_options(true);
  }
  accuracy_.set_grbf(s.gpu, s.exact);
}

void VolumeMode::update_grbf(double time_s, bool now) {
  if (!doc_) return;
  if (std::optional<GrbfSolution> s = grbf_.update(grbf_wanted(), sigma_, time_s, now))
    use_grbf(*s);
}

void VolumeMode::set_window_level(const WindowLevel& wl) {
  window_level_.window = std::max(wl.window, kMinWindow);
  window_level_.level = wl.level;
}

gl::Fetch VolumeMode::method(Plane p) const {
  return one_method_ ? methods_[0] : methods_[plane_index(p)];
}

void VolumeMode::set_method(Plane p, gl::Fetch f) {
  if (one_method_) {
    methods_.fill(f);
  } else {
    methods_[plane_index(p)] = f;
  }
}

std::optional<Plane> VolumeMode::plane_at(const glm::dvec2& w) const {
  for (Plane p : kPlanes)
    if (cell(p).contains(w)) return p;
  return std::nullopt;
}

void VolumeMode::update(const FrameInfo& f) {
  time_s_ = f.time_s;
  poll_load();
  // The smoothing: adopt a finished transform; start the next once the slider has rested.
  poll_smoothing(f.batch);
  if (doc_ && smoothing_note_.empty() && !smoothing_.valid() && lambda_setting_ != lambda_ &&
      (f.batch || f.time_s - lambda_changed_s_ >= 0.2)) {
    start_smoothing(lambda_setting_);
    if (f.batch) poll_smoothing(true);
  }
  if (view3d_.active() && doc_) {  // the ray-cast 3-D view takes the whole area
    view3d_.update(f, *doc_, window_level_);
    if (!view3d_.error().empty()) error_ = view3d_.error();
    view3d_.clear_error();
    return;
  }
  lay_out(f);
  handle_input(f);
  update_streaming(f.time_s, f.batch);
  update_grbf(f.time_s, f.batch);
  update_accuracy(f.time_s, f.batch);
}

void VolumeMode::lay_out(const FrameInfo& f) {
  const std::vector<Rect> cells = layout_cells(Layout::Grid, f.area);
  for (std::size_t i = 0; i < cells_.size() && i < cells.size(); ++i) cells_[i] = cells[i];
  laid_out_ = f.area.width > 0 && f.area.height > 0;
  fit_if_pending();
}

void VolumeMode::fit_if_pending() {
  if (doc_ && fit_pending_ && laid_out_) {
    geometry_.fit(cells_);
    fit_pending_ = false;
    if (zoom_pending_ && options_.zoom) {
      // --zoom: every view at that many pixels per mm, about the crosshair.
      zoom_pending_ = false;
      const bool link = geometry_.link_zoom();
      geometry_.set_link_zoom(false);
      for (Plane p : kPlanes) {
        const glm::dvec2 w = geometry_.window_position(p, cell(p), geometry_.crosshair());
        geometry_.zoom_about(p, cell(p), w, *options_.zoom / geometry_.view(p).zoom);
      }
      geometry_.set_link_zoom(link);
    }
  }
}

void VolumeMode::handle_input(const FrameInfo& f) {
  const ImGuiIO& io = ImGui::GetIO();
  cursor_ = glm::dvec2(io.MousePos.x, io.MousePos.y) * f.fb_scale;
  hover_.reset();
  if (!doc_) {
    drag_ = Drag::None;
    return;
  }
  if (f.mouse_free && ImGui::IsMousePosValid()) hover_ = plane_at(cursor_);

  if (hover_ && drag_ == Drag::None) {
    const Plane p = *hover_;
    if (io.MouseWheel != 0.0f) {
      if (io.KeyCtrl) {
        geometry_.zoom_about(p, cell(p), cursor_,
                             std::pow(kWheelZoom, static_cast<double>(io.MouseWheel)));
      } else {
        // Touchpads send fractions of a notch: whole slices only, the rest carried over.
        wheel_accum_ += io.MouseWheel;
        const int steps = static_cast<int>(wheel_accum_);
        wheel_accum_ -= steps;
        if (steps != 0) geometry_.scroll(p, steps);
      }
    }
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Middle) ||
        (io.KeyShift && ImGui::IsMouseClicked(ImGuiMouseButton_Left))) {
      drag_ = Drag::WindowLevel;
    } else if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
      drag_ = Drag::Crosshair;
    } else if (ImGui::IsMouseClicked(ImGuiMouseButton_Right)) {
      drag_ = Drag::Pan;
    }
    drag_plane_ = p;
  }

  const glm::dvec2 delta = glm::dvec2(io.MouseDelta.x, io.MouseDelta.y) * f.fb_scale;
  switch (drag_) {
    case Drag::None:
      break;
    case Drag::Crosshair:
      if (!io.MouseDown[ImGuiMouseButton_Left]) {
        drag_ = Drag::None;
      } else {
        geometry_.move_crosshair(drag_plane_, cell(drag_plane_), cursor_);
      }
      break;
    case Drag::Pan:
      if (!io.MouseDown[ImGuiMouseButton_Right]) {
        drag_ = Drag::None;
      } else {
        geometry_.pan_by(drag_plane_, delta);
      }
      break;
    case Drag::WindowLevel:
      if (!io.MouseDown[ImGuiMouseButton_Left] && !io.MouseDown[ImGuiMouseButton_Middle]) {
        drag_ = Drag::None;
      } else if (delta != glm::dvec2(0.0)) {
        // A drag of 500 pixels spans the value range (display_window.h, as the 2-D modes).
        const DecodedVolume& v = doc_->volume;
        set_window_level(
            drag_window_level(window_level_, delta, window_drag_per_pixel(v.min, v.max)));
      }
      break;
  }

  if (f.keyboard_free) {
    if (ImGui::IsKeyPressed(kKeyR, false)) fit_pending_ = true;
    if (ImGui::IsKeyPressed(kKeyH, false)) accuracy_.heat_map = !accuracy_.heat_map;
    if (hover_) {
      const int up = ImGui::GetKeyIndex(ImGuiKey_UpArrow);
      const int down = ImGui::GetKeyIndex(ImGuiKey_DownArrow);
      const int page_up = ImGui::GetKeyIndex(ImGuiKey_PageUp);
      const int page_down = ImGui::GetKeyIndex(ImGuiKey_PageDown);
      if (ImGui::IsKeyPressed(up, true) || ImGui::IsKeyPressed(page_up, true))
        geometry_.scroll(*hover_, 1);
      if (ImGui::IsKeyPressed(down, true) || ImGui::IsKeyPressed(page_down, true))
        geometry_.scroll(*hover_, -1);
      for (std::size_t i = 0; i < kViewMethods.size(); ++i)
        if (ImGui::IsKeyPressed(kKey1 + static_cast<int>(i), false))
          set_method(*hover_, kViewMethods[i]);
    }
  }
}

void VolumeMode::panel(const FrameInfo& f) {
  (void)f;
  // The error itself is shown once, by the shell (Data section, from error()).
  if (pending_) ImGui::TextWrapped("Loading %s ...", pending_->label.c_str());
  if (!doc_) return;
  const DecodedVolume& v = doc_->volume;

  section("Volume");
  ImGui::TextWrapped("%s", v.name.c_str());
  ImGui::TextWrapped("%s", v.description.c_str());
  if (!v.overview_note.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 200, 90, 255));
    ImGui::TextWrapped("%s", v.overview_note.c_str());
    ImGui::PopStyleColor();
    if (const auto& source = streamer_.source())
      ImGui::TextWrapped("views zoomed in stream the full resolution from %s",
                         source->description().c_str());
    const std::array<DetailPlan, 4> plans = detail_plans();
    for (Plane p : kPlanes) {
      const bool streamed = streamer_.detail(plane_index(p), plans[plane_index(p)]) != nullptr;
      ImGui::PushStyleColor(ImGuiCol_Text,
                            streamed ? IM_COL32(140, 255, 160, 255) : IM_COL32(255, 200, 90, 255));
      const DetailPlan& plan = plans[plane_index(p)];
      ImGui::TextWrapped("%s: %s%s", geometry_.view_name(p).c_str(), detail_status(p, plan).c_str(),
                         streamed || plan.detail.empty() ? "" : (" (" + plan.detail + ")").c_str());
      ImGui::PopStyleColor();
    }
  }
  if (geometry_.oriented()) {
    ImGui::TextWrapped(
        "shown in patient space (RAS), radiological convention: the patient's left on the "
        "screen's right");
  } else {
    ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 200, 90, 255));
    ImGui::TextWrapped("%s", kUnorientedNote);
    ImGui::PopStyleColor();
  }
  ImGui::Text("values %g .. %g (1st..99th percentile %g .. %g)", v.min, v.max, v.p01, v.p99);
  ImGui::TextWrapped("prefilter: %s",
                     doc_->prefilter_on_gpu ? "CUDA, into the GL texture" : "CPU, uploaded");
  if (!doc_->prefilter_notice.empty()) ImGui::TextWrapped("(%s)", doc_->prefilter_notice.c_str());
  ImGui::Text("load %.1f ms, upload %.1f ms, prefilter %.1f ms", v.load_ms, doc_->upload_ms,
              doc_->prefilter_ms);

  section("Method");
  if (ImGui::Checkbox("one method for all views", &one_method_) && one_method_)
    methods_.fill(methods_[0]);
  if (one_method_) {
    method_combo("method", &methods_[0], true);
    ImGui::TextWrapped("%s", method_explanation(methods_[0]));
  } else {
    for (Plane p : kPlanes) method_combo(plane_name(p), &methods_[plane_index(p)], true);
  }
  {
    // The GRBF's sigma (debounced; solved on a worker thread when a view shows it).
    float sigma = static_cast<float>(sigma_);
    if (ImGui::SliderFloat("GRBF sigma", &sigma, static_cast<float>(kGrbfSigmaMin),
                           static_cast<float>(kGrbfSigmaMax), "%.3f")) {
      sigma_ = static_cast<double>(sigma);
      grbf_.sigma_changed(time_s_);
    }
    if (grbf_wanted()) {
      const std::string status = grbf_.status(sigma_);
      if (const GrbfSolution* g = grbf_.shown(); g && g->gpu && status.empty()) {
        ImGui::TextDisabled(
            "GRBF: sigma %.3g voxels, condition %.3g, radius %.2f, solved in "
            "%.0f ms (CPU, float; reference in double)",
            g->sigma, g->gpu->system.condition, g->gpu->radius.front(), g->ms);
      } else {
        ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 150, 80, 255));
        ImGui::TextWrapped("GRBF: %s", status.c_str());
        ImGui::PopStyleColor();
      }
    }
  }
  smoothing_panel(f);

  section("Quantity");
  for (Plane p : kPlanes) {
    quantity_combo((std::string(plane_name(p)) + "##quantity").c_str(),
                   &quantities_[plane_index(p)], 3, method(p));
    if (const std::string problem = quantity_problem(p); !problem.empty())
      ImGui::TextColored(ImVec4(1.0f, 0.6f, 0.3f, 1.0f), "  %s", problem.c_str());
  }
  {
    std::vector<std::string> shown;
    for (Plane p : kPlanes) {
      const gl::Quantity& q = quantities_[plane_index(p)];
      const std::string key = gl::quantity_name(q);
      if (q.kind == gl::QuantityKind::Value ||
          std::find(shown.begin(), shown.end(), key) != shown.end())
        continue;
      shown.push_back(key);
      const QuantityView qv = quantity_view(p);
      if (options_.quantity_range) {
        ImGui::TextDisabled("%s range %.4g (--quantity-range)", gl::quantity_label(q).c_str(),
                            qv.range);
        continue;
      }
      double r = qv.range;
      const double lo = r / 100.0, hi = r * 100.0;
      if (ImGui::SliderScalar((gl::quantity_label(q) + " range").c_str(), ImGuiDataType_Double, &r,
                              &lo, &hi, gl::quantity_signed(q) ? "+-%.4g" : "0..%.4g",
                              ImGuiSliderFlags_Logarithmic) &&
          r > 0)
        quantity_ranges_[key] = r;
    }
    if (!shown.empty()) {
      if (ImGui::Button("automatic ranges")) quantity_ranges_.clear();
      ImGui::TextDisabled(
          "derivatives along the volume's array axes x, y, z (file order), per mm (divided by "
          "the voxel spacing); signed ones through a diverging map centred at 0");
    }
  }

  AccuracyPanel text;
  for (Plane p : kPlanes)  // a streamed view's figures are the overview's (the meter's input)
    text.views.emplace_back(std::string(plane_name(p)) + (detail(p) ? " (overview's)" : ""));
  text.points_column = true;
  text.digits = 2;  // five columns in the panel's width; the view labels and the report have more
  const AccuracyReference& ref = accuracy_.reference;
  const std::string against =
      ref.kind == ReferenceKind::Truth    ? doc_->volume.truth.label + " in double"
      : ref.kind == ReferenceKind::Method ? "sv::sample of " + reference_label(ref)
                                          : std::string("sv::sample of the same method in double");
  text.explanation =
      "each view's method (GLSL fetch, as drawn) against " + against +
      " at the view's pixel centres inside the volume (voxel positions of the slice shader's "
      "map, rounded once to float); values before window/level." +
      (ref.kind == ReferenceKind::SameMethod
           ? " Same figures as splinetool sample (gl vs cpu double) + compare at those positions."
           : "");
  accuracy_section(accuracy_, text);

  section("Window / level");
  double window = window_level_.window, level = window_level_.level;
  const float speed = static_cast<float>(std::max(v.max - v.min, 1e-6) / 500.0);
  bool changed = ImGui::DragScalar("window", ImGuiDataType_Double, &window, speed);
  changed |= ImGui::DragScalar("level", ImGuiDataType_Double, &level, speed);
  if (changed) set_window_level({window, level});
  if (ImGui::Button("default")) window_level_ = v.default_window;
  ImGui::SameLine();
  if (ImGui::Button("full range"))
    set_window_level({std::max(v.max - v.min, 1e-6), (v.max + v.min) / 2.0});
  ImGui::TextWrapped(
      "middle drag or Shift+left drag: right widens the window, down raises the "
      "level");

  section("Crosshair");
  glm::dvec3 c = geometry_.crosshair();
  bool moved = false;
  for (int a = 2; a >= 0; --a) {
    const double lo = 0.0;
    const double hi = static_cast<double>(geometry_.dims()[static_cast<std::size_t>(a)]) - 1.0;
    char label[24];
    std::snprintf(label, sizeof label, "%s (%s, voxel)", kIndexNames[a], kAxisNames[a]);
    moved |= ImGui::SliderScalar(label, ImGuiDataType_Double, &c[a], &lo, &hi, "%.1f");
  }
  if (moved) geometry_.set_crosshair(c);
  const glm::dvec3 cw = geometry_.crosshair_world();
  ImGui::Text("%s %.1f, %.1f, %.1f",
              geometry_.oriented() ? "world RAS (mm)" : "mm (no orientation)", cw[0], cw[1], cw[2]);
  if (ImGui::Button("centre")) {
    const auto& d = geometry_.dims();
    geometry_.set_crosshair({static_cast<double>((d[0] - 1) / 2),
                             static_cast<double>((d[1] - 1) / 2),
                             static_cast<double>((d[2] - 1) / 2)});
  }
  float tilt = static_cast<float>(geometry_.oblique_tilt() * 180.0 / kPi);
  float turn = static_cast<float>(geometry_.oblique_turn() * 180.0 / kPi);
  bool angles = ImGui::SliderFloat("oblique tilt", &tilt, -90.0f, 90.0f, "%.1f deg");
  angles |= ImGui::SliderFloat("oblique turn", &turn, -90.0f, 90.0f, "%.1f deg");
  if (angles) geometry_.set_oblique_angles(tilt * kPi / 180.0, turn * kPi / 180.0);

  section("Views");
  bool link = geometry_.link_zoom();
  if (ImGui::Checkbox("link zoom (same mm scale)", &link)) geometry_.set_link_zoom(link);
  ImGui::SameLine();
  if (ImGui::Button("fit (R)")) fit_pending_ = true;
  ImGui::TextWrapped(
      "left drag: crosshair; wheel, Up/Down: slice; Ctrl+wheel: zoom; right drag: pan; "
      "1..6: method of the view under the cursor");

  view3d_.panel(f, doc_.get());

  section("Cursor");
  readout_panel();
}

std::optional<VolumeMode::FullResolutionValue> VolumeMode::full_resolution_value(
    Plane p, const glm::dvec3& pos) const {
  const DetailTextures* d = detail(p);
  if (!d) return std::nullopt;
  const DecodedVolume& v = doc_->volume;
  const std::array<double, 3> fi = v.file_index({pos[0], pos[1], pos[2]});
  const std::array<std::size_t, 3> fv = nearest_voxel({fi[0], fi[1], fi[2]}, v.full_dims);
  const DetailBox& b = d->box;
  if (!b.covers({fv, {fv[0] + 1, fv[1] + 1, fv[2] + 1}})) return std::nullopt;
  FullResolutionValue out;
  out.voxel = fv;
  out.raw = d->samples.at3(fv[0] - b.lo[0], fv[1] - b.lo[1], fv[2] - b.lo[2]);
  const gl::Fetch m = method(p);
  const double local[3] = {fi[0] - static_cast<double>(b.lo[0]),
                           fi[1] - static_cast<double>(b.lo[1]),
                           fi[2] - static_cast<double>(b.lo[2])};
  SamplerOptions opt;
  opt.degree = method_degree(m);
  opt.threads = 1;  // one position: no thread pool
  sample(gl::fetch_prefiltered(m) ? d->coefficients : d->samples, local, 1, &out.method_value, opt);
  return out;
}

void VolumeMode::readout_panel() {
  if (!hover_) {
    ImGui::TextDisabled("(move the cursor over a view)");
    return;
  }
  const Plane p = *hover_;
  const glm::dvec3 pos = geometry_.volume_position(p, cell(p), cursor_);
  const glm::dvec3 world = geometry_.voxel_to_world(pos);
  ImGui::Text("%s view", geometry_.view_name(p).c_str());
  if (geometry_.oriented()) {
    ImGui::Text("world RAS (mm) %.1f, %.1f, %.1f", world[0], world[1], world[2]);
  } else {
    ImGui::Text("mm (no orientation) %.1f, %.1f, %.1f", world[0], world[1], world[2]);
  }
  const DecodedVolume& v = doc_->volume;
  const bool overview = v.overview_level > 0;
  if (overview) {
    // Indices of the file, not of the overview's grid, so that they mean what they say.
    const std::array<double, 3> fi = v.file_index({pos[0], pos[1], pos[2]});
    ImGui::Text("file voxel (i, j, k) %.2f, %.2f, %.2f", fi[2], fi[1], fi[0]);
    ImGui::TextDisabled("overview voxel (i, j, k) %.2f, %.2f, %.2f", pos[2], pos[1], pos[0]);
  } else {
    ImGui::Text("voxel (i, j, k) %.2f, %.2f, %.2f", pos[2], pos[1], pos[0]);
  }
  if (!inside_volume(pos, geometry_.dims())) {
    ImGui::TextDisabled("outside the volume");
    return;
  }
  if (const std::optional<FullResolutionValue> fr = full_resolution_value(p, pos)) {
    // A streamed view: the file's own value, and the view's method on what the view draws.
    ImGui::Text("nearest file voxel: array [z, y, x] [%zu, %zu, %zu]", fr->voxel[0], fr->voxel[1],
                fr->voxel[2]);
    ImGui::Text("raw value (full resolution, streamed) %.6g", fr->raw);
    ImGui::Text("value (%s, CPU double, full resolution) %.6g", gl::fetch_name(method(p)),
                fr->method_value);
    return;
  }
  const std::array<std::size_t, 3> at = nearest_voxel(pos, geometry_.dims());
  ImGui::Text("nearest %svoxel: array [z, y, x] [%zu, %zu, %zu]", overview ? "overview " : "",
              at[0], at[1], at[2]);
  // An overview holds no raw values of the file: its samples are the reduction's.
  const char* what = overview ? "overview value" : "raw value";
  if (v.exact) {
    ImGui::Text("%s %.6g", what, v.exact->at3(at[0], at[1], at[2]));
  } else if (!v.samples.empty()) {
    ImGui::Text("%s %.6g", what, static_cast<double>(v.samples.at3(at[0], at[1], at[2])));
  }
  if (!doc_->has_readout()) {
    ImGui::TextWrapped("%s", doc_->readout_note.c_str());
    return;
  }
  const gl::Fetch m = method(p);
  const ArrayF& data = gl::fetch_prefiltered(m) ? doc_->coefficients : v.samples;
  const double position[3] = {pos[0], pos[1], pos[2]};
  SamplerOptions opt;
  opt.degree = method_degree(m);
  opt.threads = 1;  // one position: no thread pool
  double value = 0.0;
  sample(data, position, 1, &value, opt);
  ImGui::Text("value (%s, CPU double) %.6g", gl::fetch_name(m), value);
  if (const std::vector<double> qv = quantity_at(p, pos); !qv.empty())
    ImGui::Text("%s (%s, CPU double, per mm) %.6g",
                gl::quantity_label(quantities_[plane_index(p)]).c_str(), gl::fetch_name(m), qv[0]);
}

void VolumeMode::overlays(const FrameInfo& f, ImDrawList* list) {
  if (!doc_) return;
  if (view3d_.active()) return view3d_.overlays(f, list);
  const glm::dvec2 s = f.fb_scale;
  const auto pt = [&](const glm::dvec2& w) {
    return ImVec2(static_cast<float>(w.x / s.x), static_cast<float>(w.y / s.y));
  };
  const float ui = f.ui_scale;
  const bool heat = accuracy_.enabled && accuracy_.heat_map;
  const std::array<DetailPlan, 4> plans = detail_plans();
  for (Plane p : kPlanes) {
    const Rect& c = cell(p);
    if (c.width <= 0 || c.height <= 0) continue;
    list->PushClipRect(pt({c.x, c.y}), pt({c.x + c.width, c.y + c.height}), true);
    const std::size_t i = plane_index(p);
    // A streamed view is measured on its own box (detail_accuracy_), not by the overview's meter.
    const bool streamed = streamer_.detail(i, plans[i]) != nullptr;
    const AccuracyResult* measured = !accuracy_.enabled ? nullptr
                                     : streamed         ? detail_accuracy(p)
                                                        : accuracy_.result(i);
    if (heat && measured) {
      if (const gl::Texture* t =
              streamed ? detail_accuracy_[i].heat_texture(0) : accuracy_.heat_texture(i))
        draw_heat_map(list, *t, c, accuracy_.heat_opacity, s);
    }

    // The other planes' intersections with this one, through the crosshair, in their colours.
    const PlaneFrame own = geometry_.frame(p);
    const glm::dvec3 x = geometry_.crosshair_world();
    const glm::dvec2 centre = geometry_.window_position_world(p, c, x);
    const double reach = 2.0 * (c.width + c.height);
    for (Plane q : kPlanes) {
      if (q == p) continue;
      const glm::dvec3 d = glm::cross(own.normal, geometry_.frame(q).normal);
      if (glm::length(d) < 1e-6) continue;  // parallel planes (oblique at 0 degrees)
      const glm::dvec2 other = geometry_.window_position_world(p, c, x + glm::normalize(d));
      const glm::dvec2 dir = glm::normalize(other - centre);
      const double gap = kCrosshairGap * ui * s.x;
      for (double sign : {-1.0, 1.0}) {
        list->AddLine(pt(centre + sign * gap * dir), pt(centre + sign * reach * dir),
                      plane_colour(q, 200), 1.5f * ui);
      }
    }

    // Label: view name, slice position, method. Oriented volumes give the crosshair's world
    // coordinate along the normal (S for axial, A for coronal, R for sagittal, as Slicer); files
    // without orientation the index of the slice.
    const SliceGeometry::SlicePosition sp = geometry_.slice_position(p);
    const std::string view_name = geometry_.view_name(p);
    char text[1024];
    if (p == Plane::Oblique) {
      std::snprintf(text, sizeof text, "%s  %s mm from centre\ntilt %.1f, turn %.1f deg\n%s",
                    view_name.c_str(), format_mm(sp.mm, true).c_str(),
                    geometry_.oblique_tilt() * 180.0 / kPi, geometry_.oblique_turn() * 180.0 / kPi,
                    method_short_name(method(p)));
    } else if (geometry_.oriented()) {
      static const char* kNormalLetters[3] = {"S", "A", "R"};
      std::snprintf(text, sizeof text, "%s  %s %s mm\n%s", view_name.c_str(),
                    kNormalLetters[plane_index(p)], format_mm(sp.mm, false).c_str(),
                    method_short_name(method(p)));
    } else {
      const auto axis = static_cast<std::size_t>(sp.axis < 0 ? 0 : sp.axis);
      std::snprintf(text, sizeof text, "%s  %s = %s / %zu  (%s mm)\n%s", view_name.c_str(),
                    kIndexNames[axis], format_index(sp.index).c_str(), geometry_.dims()[axis] - 1,
                    format_mm(sp.mm, false).c_str(), method_short_name(method(p)));
    }
    if (const gl::Quantity& q = quantities_[i]; q.kind != gl::QuantityKind::Value) {
      const std::string problem = quantity_problem(p);
      // A partial's axes are the file's (x = i, the fastest); an oriented volume says where
      // each points ("x: L" for an LIP file).
      std::string axes;
      const std::string code = geometry_.orientation_code();
      if (q.kind == gl::QuantityKind::Partial && code.size() == 3)
        for (std::size_t t = 0; t < 3; ++t)
          if (q.order[t] > 0) axes += std::string(", ") + "xyz"[t] + ": " + code[t];
      const std::string extra =
          "\n" + gl::quantity_label(q) +
          (problem.empty() ? " (per mm" + axes + ")" : ": not shown, " + problem);
      const std::size_t n = std::strlen(text);
      std::snprintf(text + n, sizeof text - n, "%s", extra.c_str());
      if (problem.empty()) draw_quantity_legend(list, c, quantity_view(p), "per mm", s, ui);
    }
    if (method(p) == gl::Fetch::Grbf) {
      const std::string status = grbf_.status(sigma_);
      char extra[640];
      std::snprintf(extra, sizeof extra, ", sigma %.3g%s%s", sigma_, status.empty() ? "" : "\n",
                    wrap_words(status, 64).c_str());
      const std::size_t n = std::strlen(text);
      std::snprintf(text + n, sizeof text - n, "%s", extra);
    }
    if (const std::size_t n = std::strlen(text); measured && measured->points > 0)
      std::snprintf(text + n, sizeof text - n, "   RMS %.2e  max %.2e%s", measured->stats.rms,
                    measured->stats.max_abs, reference_tag(measured->reference).c_str());
    const ImVec2 size = ImGui::CalcTextSize(text);
    const float pad = 4.0f * ui;
    const ImVec2 at = pt({c.x + kLabelMargin * ui * s.x, c.y + kLabelMargin * ui * s.y});
    list->AddRectFilled(at, ImVec2(at.x + size.x + 2 * pad, at.y + size.y + 2 * pad),
                        IM_COL32(0, 0, 0, 170), 3.0f * ui);
    list->AddRectFilled(at, ImVec2(at.x + 3.0f * ui, at.y + size.y + 2 * pad), plane_colour(p));
    list->AddText(ImVec2(at.x + pad + 2.0f * ui, at.y + pad), IM_COL32(235, 235, 235, 255), text);
    ImVec2 label_hi(at.x + size.x + 2 * pad, at.y + size.y + 2 * pad);
    // An overview's view says under its label whether it shows the file's own voxels.
    if (const std::string status = detail_status(p, plans[i]); !status.empty()) {
      const ImVec2 ss = ImGui::CalcTextSize(status.c_str());
      const ImVec2 sat(at.x, label_hi.y + 2.0f * ui);
      const ImVec2 shi(sat.x + ss.x + 2 * pad, sat.y + ss.y + 2 * pad);
      list->AddRectFilled(sat, shi, streamed ? IM_COL32(0, 60, 20, 220) : IM_COL32(60, 40, 0, 220),
                          3.0f * ui);
      list->AddText(ImVec2(sat.x + pad, sat.y + pad),
                    streamed ? IM_COL32(140, 255, 160, 255) : IM_COL32(255, 200, 90, 255),
                    status.c_str());
      label_hi = ImVec2(std::max(label_hi.x, shi.x), shi.y);
    }

    // Orientation letters at the middle of each edge (oriented volumes only).
    const EdgeLetters letters = geometry_.letters(p);
    if (!letters.left.empty()) {
      ImFont* font = ImGui::GetFont();
      const float letter_size = ImGui::GetFontSize() * 1.35f;
      const float margin = kLabelMargin * ui;
      const ImVec2 lo = pt({c.x, c.y}), hi = pt({c.x + c.width, c.y + c.height});
      const ImVec2 mid((lo.x + hi.x) / 2, (lo.y + hi.y) / 2);
      const auto letter = [&](const std::string& t, float fx, float fy, float ax, float ay) {
        // (fx, fy): the anchor point; (ax, ay): where on the text box the anchor sits.
        const ImVec2 ts = font->CalcTextSizeA(letter_size, FLT_MAX, 0.0f, t.c_str());
        const ImVec2 box(fx - ax * ts.x, fy - ay * ts.y);
        const float inset = 2.0f * ui;
        list->AddRectFilled(ImVec2(box.x - inset, box.y - inset / 2),
                            ImVec2(box.x + ts.x + inset, box.y + ts.y + inset / 2),
                            IM_COL32(0, 0, 0, 150), 3.0f * ui);
        list->AddText(font, letter_size, box, IM_COL32(255, 236, 140, 255), t.c_str());
      };
      letter(letters.left, lo.x + margin, mid.y, 0.0f, 0.5f);
      letter(letters.right, hi.x - margin, mid.y, 1.0f, 0.5f);
      // The top letter goes below the label where they would overlap.
      const ImVec2 top_size = font->CalcTextSizeA(letter_size, FLT_MAX, 0.0f, letters.top.c_str());
      const bool under_label = mid.x - top_size.x / 2 - 4.0f * ui < label_hi.x;
      letter(letters.top, mid.x, under_label ? label_hi.y + margin / 2 : lo.y + margin, 0.5f, 0.0f);
      letter(letters.bottom, mid.x, hi.y - margin, 0.5f, 1.0f);
    }

    if (hover_ == p)
      list->AddRect(pt({c.x, c.y}), pt({c.x + c.width, c.y + c.height}), plane_colour(p, 160), 0.0f,
                    0, 2.0f * ui);
    list->PopClipRect();
  }
  if (heat && accuracy_.has_heat_maps()) draw_heat_legend(list, f.area, s, ui);
  // Persistent notes at the bottom centre of the views, stacked: an overview is never taken
  // for the full resolution, an unoriented volume never for anatomy.
  float bottom = 0.0f;  // screen pixels taken from the bottom so far
  const auto bottom_note = [&](const char* text) {
    const ImVec2 size = ImGui::CalcTextSize(text);
    const float pad = 5.0f * ui;
    const ImVec2 lo = pt({f.area.x, f.area.y}),
                 hi = pt({f.area.x + f.area.width, f.area.y + f.area.height});
    const ImVec2 at(std::max(lo.x + pad, (lo.x + hi.x - size.x) / 2),
                    hi.y - size.y - 2 * pad - kLabelMargin * ui - bottom);
    list->AddRectFilled(ImVec2(at.x - pad, at.y - pad),
                        ImVec2(at.x + size.x + pad, at.y + size.y + pad), IM_COL32(60, 40, 0, 220),
                        3.0f * ui);
    list->AddText(at, IM_COL32(255, 200, 90, 255), text);
    bottom += size.y + 3 * pad;
  };
  const DecodedVolume& vol = doc_->volume;
  if (vol.overview_level > 0) {
    char text[200];
    std::snprintf(text, sizeof text,
                  "OVERVIEW 1/%d of %zu x %zu x %zu voxels: each view says what it shows",
                  1 << vol.overview_level, vol.full_dims[2], vol.full_dims[1], vol.full_dims[0]);
    bottom_note(text);
  }
  if (!geometry_.oriented()) bottom_note(kUnorientedNote);
}

void VolumeMode::draw(const FrameInfo& f) {
  if (!doc_ || f.fb_width <= 0 || f.fb_height <= 0) return;
  if (view3d_.active()) return view3d_.draw(f);
  if (!pass_ && !pass_failed_) {
    try {
      pass_ = std::make_unique<SlicePass>();
    } catch (const Error& e) {
      pass_failed_ = true;
      error_ = std::string("slice shaders: ") + e.what();
    }
  }
  if (!pass_) return;
  lay_out(f);
  const float checker = 16.0f * f.ui_scale;
  const std::array<DetailPlan, 4> plans = detail_plans();
  try {
    for (Plane p : kPlanes) {
      const std::size_t i = plane_index(p);
      const std::uint64_t before = timers_[i].finished_count();
      const std::optional<double> ms = timers_[i].poll();
      if (ms && timers_[i].finished_count() != before) pass_ms_[i].push(static_cast<float>(*ms));
      const Rect& c = cell(p);
      if (c.width < 1 || c.height < 1) continue;
      pass_names_[i] = std::string(plane_name(p)) + ": " + method_short_name(method(p));
      gl::ScopedGpuTimer timing(timers_[i]);
      // A streamed view draws the file's own voxels: the same map, moved to its box's index.
      const SliceMapping mapping = geometry_.mapping(p, c);
      const QuantityView q = quantity_view(p);
      if (!q.is_value()) pass_names_[i] += ", " + gl::quantity_label(q.quantity);
      const auto scale = [this](bool streamed) {
        const std::array<double, 3> a = axis_scale(streamed);
        return glm::vec3(static_cast<float>(a[0]), static_cast<float>(a[1]),
                         static_cast<float>(a[2]));
      };
      if (method(p) == gl::Fetch::Grbf) {
        pass_names_[i] += ", sigma " + std::to_string(sigma_).substr(0, 5);
        // The GRBF's weights are the document's (an overview's view does not stream them).
        pass_->draw(doc_->textures(), method(p), mapping, to_viewport(c, f.fb_height),
                    window_level_, checker, q, scale(false), grbf_view());
      } else if (const DetailTextures* d = streamer_.detail(i, plans[i])) {
        pass_->draw(d->textures(), method(p), detail_mapping(doc_->volume, mapping, d->box),
                    to_viewport(c, f.fb_height), window_level_, checker, q, scale(true));
      } else {
        pass_->draw(doc_->textures(), method(p), mapping, to_viewport(c, f.fb_height),
                    window_level_, checker, q, scale(false));
      }
    }
  } catch (const Error& e) {
    error_ = e.what();
  }
}

std::vector<PassTiming> VolumeMode::timings() const {
  std::vector<PassTiming> out;
  if (view3d_.active()) return view3d_.timings();
  if (!timers_meaningful_) return out;
  for (std::size_t i = 0; i < pass_ms_.size(); ++i)
    if (pass_ms_[i].count() > 0) out.push_back({pass_names_[i], &pass_ms_[i]});
  return out;
}

nlohmann::json VolumeMode::report() const {
  nlohmann::json r;
  r["mode"] = name();
  if (!doc_) {
    r["loaded"] = false;
    if (!error_.empty()) r["error"] = error_;
    return r;
  }
  const DecodedVolume& v = doc_->volume;
  r["loaded"] = true;
  r["file"] = v.path.empty() ? v.name : v.path;
  r["name"] = v.name;
  r["dims_zyx"] = {v.dims[0], v.dims[1], v.dims[2]};
  r["spacing_mm_zyx"] = {v.spacing[0], v.spacing[1], v.spacing[2]};
  r["dtype"] = dtype_name(v.dtype);
  r["value_range"] = {v.min, v.max};
  r["percentiles_1_99"] = {v.p01, v.p99};
  r["prefilter"] = {{"path", doc_->prefilter_on_gpu ? "cuda" : "cpu"},
                    {"notice", doc_->prefilter_notice}};
  // Patient space: whether the file states an orientation, its code (nibabel's aff2axcodes),
  // where it came from and the index-to-world affine (RAS+ mm, rows).
  const Geometry& g = geometry_.geometry();
  r["oriented"] = geometry_.oriented();
  r["orientation"] = geometry_.orientation_code();
  r["geometry_source"] = g.source;
  r["affine"] = nlohmann::json::array();
  for (const auto& row : g.affine) r["affine"].push_back({row[0], row[1], row[2], row[3]});
  if (!geometry_.oriented()) r["orientation_note"] = kUnorientedNote;
  const glm::dvec3 c = geometry_.crosshair(), cw = geometry_.crosshair_world();
  r["crosshair"] = {
      {"voxel_zyx", {c[0], c[1], c[2]}}, {"ijk", {c[2], c[1], c[0]}}, {"world_ras", vec_json(cw)}};
  if (doc_->volume.overview_level > 0) {
    // voxel_zyx and ijk are the overview's; the file's index of the same point:
    const std::array<double, 3> fi = doc_->volume.file_index({c[0], c[1], c[2]});
    r["crosshair"]["file_voxel_zyx"] = {fi[0], fi[1], fi[2]};
  }
  r["oblique_deg"] = {{"tilt", geometry_.oblique_tilt() * 180.0 / kPi},
                      {"turn", geometry_.oblique_turn() * 180.0 / kPi}};
  r["lambda"] = lambda_;
  r["smoothing"] = {
      {"lambda", lambda_},
      {"path", smoothing_path_},
      {"transform", lambda_ > 0 ? (smoothing_path_ == "cuda" ? "sv::cuda::direct_transform"
                                                             : "sv::direct_transform")
                                : "prefilter"},
      {"ms", smoothing_ms_}};
  if (!smoothing_note_.empty()) r["smoothing"]["note"] = smoothing_note_;
  r["window"] = window_level_.window;
  r["level"] = window_level_.level;
  nlohmann::json views = nlohmann::json::array();
  const std::array<DetailPlan, 4> plans = detail_plans();
  for (Plane p : kPlanes) {
    const SliceGeometry::SlicePosition sp = geometry_.slice_position(p);
    // "plane": the view's slot (the --methods order), the same for every volume; "name": what
    // the view is called (an index plane when the file states no orientation).
    const PlaneFrame frame = geometry_.frame(p);
    const EdgeLetters letters = geometry_.letters(p);
    nlohmann::json view = {
        {"plane", plane_name(p)},
        {"name", geometry_.view_name(p)},
        {"method", gl::fetch_name(method(p))},
        {"sigma", method(p) == gl::Fetch::Grbf ? nlohmann::json(sigma_) : nlohmann::json(nullptr)},
        {"quantity", gl::quantity_name(quantities_[plane_index(p)])},
        {"quantity_label", gl::quantity_label(quantities_[plane_index(p)])},
        {"zoom_px_per_mm", geometry_.view(p).zoom},
        {"slice_mm", sp.mm},
        {"normal_ras", vec_json(frame.normal)},
        {"right_ras", vec_json(frame.right)},
        {"down_ras", vec_json(frame.down)},
        {"letters",
         {{"left", letters.left},
          {"right", letters.right},
          {"top", letters.top},
          {"bottom", letters.bottom}}}};
    if (sp.axis >= 0) {
      view["normal_axis"] = kAxisNames[sp.axis];
      view["slice_index"] = sp.index;
    }
    const Rect& box = cell(p);
    view["rect"] = {box.x, box.y, box.width, box.height};
    const auto grid_json = [](const gl::GridMapping& m) {
      return nlohmann::json{{"rows", m.rows},
                            {"cols", m.cols},
                            {"origin", {m.origin[0], m.origin[1], m.origin[2]}},
                            {"step_row", {m.step_row[0], m.step_row[1], m.step_row[2]}},
                            {"step_col", {m.step_col[0], m.step_col[1], m.step_col[2]}}};
    };
    // The pixel grid of the view: pixel (r, c) of the rect samples origin + r * step_row + c *
    // step_col, voxel units, array order (z, y, x) (slice_pass.h's slice_grid).
    if (laid_out_) view["grid"] = grid_json(slice_grid(geometry_, p, box));
    // What the view shows: the file's own voxels (a full-resolution document, or an overview's
    // view that streams them: its box in file voxels [z0, y0, x0, z1, y1, x1), end exclusive),
    // or the overview (and why).
    const DetailTextures* streamed = streamer_.detail(plane_index(p), plans[plane_index(p)]);
    view["streamed"] = streamed != nullptr;
    view["full_resolution"] = v.overview_level == 0 || streamed != nullptr;
    if (streamed) {
      const DetailBox& b = streamed->box;
      view["detail_box_zyx"] = {b.lo[0], b.lo[1], b.lo[2], b.hi[0], b.hi[1], b.hi[2]};
      view["detail_ms"] = {{"read_and_prefilter", streamed->compute_ms},
                           {"upload", streamed->upload_ms}};
    }
    if (v.overview_level > 0) {
      const DetailPlan& plan = plans[plane_index(p)];
      view["resolution_note"] = detail_status(p, plan) +
                                (streamed || plan.detail.empty() ? "" : " (" + plan.detail + ")");
    }
    if (streamed && accuracy_.enabled)
      view["accuracy_note"] =
          "measured on the streamed box: its float textures against its coefficients in double "
          "from the same read region and halo (grid in the box's index)";
    if (const AccuracyResult* a = !accuracy_.enabled || !quantity_problem(p).empty() ? nullptr
                                  : streamed ? detail_accuracy(p)
                                             : accuracy_.result(plane_index(p))) {
      // The measured grid (the one above, once measured; accuracy.h's job_positions round it
      // once to float).
      view["grid"] = grid_json(a->job.grid);
      view["accuracy"] = {{"rms", a->stats.rms},
                          {"max_abs", a->stats.max_abs},
                          {"sse", a->stats.sse},
                          {"sum_sq", a->stats.sse},
                          {"psnr_db", std::isfinite(a->stats.psnr) ? nlohmann::json(a->stats.psnr)
                                                                   : nlohmann::json(nullptr)},
                          {"count", a->stats.count},
                          {"points", a->points},
                          {"error_max", a->error_max},
                          {"reference", reference_id(a->reference)}};
    }
    if (const gl::Quantity& q = quantities_[plane_index(p)]; q.kind != gl::QuantityKind::Value) {
      view["quantity_units"] = "per mm (along the volume's array axes x, y, z)";
      if (const std::string problem = quantity_problem(p); !problem.empty()) {
        view["quantity_problem"] = problem;
      } else {
        view["quantity_range"] = quantity_view(p).range;
        view["quantity_map"] =
            gl::quantity_signed(q) ? "diverging blue-grey-red centred at 0" : "grey from 0";
      }
      const std::array<double, 3> a = axis_scale(false);
      view["axis_scale_xyz"] = {a[0], a[1], a[2]};
      // The readout at the crosshair (the point every view passes through), as the panel shows
      // it under the cursor: the document's spline, CPU double, per mm.
      if (const std::vector<double> qv = quantity_at(p, c); !qv.empty()) {
        view["quantity_at_crosshair"] = qv;
        if (v.overview_level > 0) view["quantity_at_crosshair_of"] = "the overview's spline";
      }
    }
    views.push_back(view);
  }
  r["views"] = views;
  if (grbf_wanted() || grbf_.shown()) {
    r["grbf"] = grbf_.report();
    if (!grbf_.has_data()) r["grbf"]["error"] = grbf_.status(sigma_);
  }
  r["times_ms"] = {{"load", v.load_ms},
                   {"upload", doc_->upload_ms},
                   {"prefilter", doc_->prefilter_ms},
                   {"readback", doc_->readback_ms}};
  r["cpu_readout"] = doc_->has_readout() ? "available" : doc_->readout_note;
  r["overview_level"] = v.overview_level;
  if (v.overview_level > 0) r["overview_source"] = v.overview_streamed ? "map" : "ram";
  r["full_dims"] = {v.full_dims[0], v.full_dims[1], v.full_dims[2]};
  if (!v.overview_note.empty()) r["overview"] = v.overview_note;
  if (const auto& source = streamer_.source()) {
    r["streaming"] = {{"source", source->mapped() ? "map" : "ram"},
                      {"description", source->description()},
                      {"detail_budget_bytes", limits_.detail_budget},
                      {"halo", detail_halo()}};
  }
  r["accuracy_reference"] = reference_id(accuracy_.reference);
  if (const std::string problem = accuracy_.reference_problem(); !problem.empty())
    r["accuracy_reference_problem"] = problem;
  if (!accuracy_.enabled) {
    r["accuracy"] = "off";
  } else if (meter_made_ && !accuracy_.has_meter()) {
    r["accuracy"] = accuracy_.note();
  } else if (const std::string problem = accuracy_.reference_problem(); !problem.empty()) {
    r["accuracy"] = problem;
  } else {
    r["accuracy"] = accuracy_.result(0) ? "measured" : "pending";
  }
  r["view3d"] = view3d_.report();
  return r;
}

}  // namespace sv::viewer
