// The repeated-rotation engine (see rotation_run.h).
#include "rotation_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <utility>

#include "elapsed.h"
#include "splineview/cuda_memory.h"
#include "splineview/cuda_prefilter.h"
#include "splineview/error.h"
#include "splineview/gl/gl.h"
#include "splineview/gl/grids.h"
#include "splineview/metrics.h"
#include "splineview/prefilter.h"
#include "splineview/resample.h"

namespace sv::viewer {
namespace {

constexpr std::size_t kMaxMethods = 4;

std::string mib(std::size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// The checks that do not need the data's values beyond the shape, before any work.
void check_arguments(const ArrayF& original, const std::vector<gl::Fetch>& methods,
                     const RotationSettings& s) {
  if (original.rank() != 2)
    throw Error("repeated rotation needs a 2-D image (height, width), got " +
                (original.empty()
                     ? std::string("an empty array")
                     : "shape " + describe_shape(original.dims(), original.channels())));
  if (methods.empty() || methods.size() > kMaxMethods)
    throw Error("repeated rotation compares 1 to 4 methods, got " + std::to_string(methods.size()) +
                " methods");
  if (s.steps < 1)
    throw Error("repeated rotation needs at least 1 step, got " + std::to_string(s.steps) +
                " steps");
  if (!std::isfinite(s.step_deg))
    throw Error("repeated rotation needs a finite angle per step, got " + number(s.step_deg));
  if (!(s.disc >= 0) || !std::isfinite(s.disc))
    throw Error(
        "repeated rotation: the measuring disc must be a fraction >= 0 (0 = whole image), "
        "got " +
        number(s.disc));
  for (float v : original.vec())
    if (!std::isfinite(v))
      throw Error("repeated rotation: the image has non-finite values (NaN or infinity)");
}

// The float working copy; an empty array stays empty (check_arguments names it).
ArrayF to_float(const ArrayD& a) {
  return a.empty() ? ArrayF() : ArrayF::from(a);
}

// The original rotated once by `degrees` with the interpolating cubic B-spline in double; at a
// whole number of turns the original itself (no resampling at all).
ArrayD exact_rotation(const ArrayD& original, double degrees) {
  const double turns = degrees / 360.0;
  if (std::fabs(turns - std::round(turns)) < 1e-12) return original;
  ResampleOptions opt;
  opt.method = Method::Cubic;
  opt.boundary = Boundary::Reflect;
  return rotate(original, degrees, opt);
}

}  // namespace

RotationRun::RotationRun(const ArrayD& original, std::vector<gl::Fetch> methods,
                         const RotationSettings& settings)
    : RotationRun(to_float(original),
                  original.rank() == 2 ? std::make_unique<ArrayD>(original) : nullptr,
                  std::move(methods), settings) {}

RotationRun::RotationRun(const ArrayF& original, std::vector<gl::Fetch> methods,
                         const RotationSettings& settings)
    : RotationRun(original, nullptr, std::move(methods), settings) {}

RotationRun::RotationRun(ArrayF original_f, std::unique_ptr<ArrayD> original_d,
                         std::vector<gl::Fetch> methods, const RotationSettings& settings)
    : original_f_(std::move(original_f)),
      original_d_(std::move(original_d)),
      methods_(std::move(methods)),
      settings_(settings) {
  check_arguments(original_f_, methods_, settings_);
  exact_ = original_d_ ? std::make_shared<const ArrayD>(*original_d_)
                       : std::make_shared<const ArrayD>(ArrayD::from(original_f_));
  const std::size_t h = height(), w = width();
  if (settings_.disc > 0) {
    mask_ = disc_mask(h, w, settings_.disc);
    if (std::none_of(mask_.begin(), mask_.end(), [](unsigned char c) { return c != 0; }))
      throw Error("repeated rotation: the measuring disc of radius " + number(settings_.disc) +
                  " x min(height, width) contains no pixel of this " + std::to_string(w) + " x " +
                  std::to_string(h) + " image; use a larger disc or 0 for the whole image");
  }

  // The kept results: float when they fit the budget, else 16-bit display copies.
  const std::size_t per_step = original_f_.size() * methods_.size();
  const std::size_t steps = static_cast<std::size_t>(settings_.steps);
  if (per_step * steps * sizeof(float) <= settings_.memory_budget) {
    keep_float_ = true;
    kept_bytes_ = per_step * steps * sizeof(float);
  } else if (per_step * steps * sizeof(std::uint16_t) <= settings_.memory_budget) {
    keep_float_ = false;
    kept_bytes_ = per_step * steps * sizeof(std::uint16_t);
  } else {
    throw Error("repeated rotation: keeping " + std::to_string(settings_.steps) + " steps of " +
                std::to_string(methods_.size()) + " methods of this " + std::to_string(w) + " x " +
                std::to_string(h) + " image (" + std::to_string(channels()) +
                " channels) for scrubbing needs " + mib(per_step * steps * sizeof(std::uint16_t)) +
                " even as 16-bit copies, over the budget of " + mib(settings_.memory_budget) +
                "; use fewer steps or methods, or a smaller image");
  }

  if (settings_.cuda_prefilter) {
    std::string why;
    use_cuda_ = cuda::available(&why);
    if (!use_cuda_) prefilter_notice_ = "prefilter on the CPU: " + why;
  }

  grid_ = gl::rotation_grid(h, w, settings_.step_deg);
  timer_meaningful_ = gl::timer_queries_meaningful();
  for (gl::Fetch f : methods_) {
    gl::EvalOptions opt;
    opt.fetch = f;
    opt.boundary = Boundary::Reflect;
    evaluators_.push_back(std::make_unique<gl::Evaluator>(opt, 2));
  }
  restart_on_cpu("");
}

RotationRun::~RotationRun() = default;

// Clears every result (the run starts from step 1 again); with a reason, also turns the CUDA
// prefilter off for the rest of the run.
void RotationRun::restart_on_cpu(const std::string& why) {
  if (!why.empty()) {
    use_cuda_ = false;
    prefilter_notice_ = why;
  }
  const std::size_t n = methods_.size();
  current_.assign(n, original_f_);
  kept_.assign(n, {});
  psnr_.assign(n, {});
  rms_.assign(n, {});
  psnr_rotated_.assign(n, {});
  rms_rotated_.assign(n, {});
  timing_.assign(n, {});
  for (std::size_t m = 0; m < n; ++m) {
    kept_[m].reserve(static_cast<std::size_t>(settings_.steps));
    psnr_[m].reserve(static_cast<std::size_t>(settings_.steps));
  }
  units_done_ = 0;
}

bool RotationRun::done() const {
  return units_done_ >= methods_.size() * static_cast<std::size_t>(settings_.steps);
}

double RotationRun::progress() const {
  return static_cast<double>(units_done_) /
         static_cast<double>(methods_.size() * static_cast<std::size_t>(settings_.steps));
}

std::size_t RotationRun::next_method() const {
  return units_done_ % methods_.size();
}

int RotationRun::next_step() const {
  return static_cast<int>(units_done_ / methods_.size()) + 1;
}

int RotationRun::steps_done(std::size_t m) const {
  return static_cast<int>(psnr_.at(m).size());
}

int RotationRun::steps_done() const {
  return static_cast<int>(units_done_ / methods_.size());
}

const std::vector<double>& RotationRun::psnr(std::size_t m) const {
  return psnr_.at(m);
}

const std::vector<double>& RotationRun::rms(std::size_t m) const {
  return rms_.at(m);
}

const std::vector<double>& RotationRun::psnr_rotated(std::size_t m) const {
  return psnr_rotated_.at(m);
}

const std::vector<double>& RotationRun::rms_rotated(std::size_t m) const {
  return rms_rotated_.at(m);
}

const ArrayD& RotationRun::rotated_reference(int k) {
  if (reference_step_ == k) return reference_;
  const auto job = [exact = exact_, deg = settings_.step_deg](int step) {
    return exact_rotation(*exact, deg * step);
  };
  if (next_reference_.valid() && next_reference_step_ == k) {
    reference_ = next_reference_.get();
  } else {
    if (next_reference_.valid()) next_reference_.wait();
    reference_ = job(k);
  }
  reference_step_ = k;
  if (k < settings_.steps) {
    next_reference_step_ = k + 1;
    next_reference_ = std::async(std::launch::async, job, k + 1);
  }
  return reference_;
}

const std::vector<StepTiming>& RotationRun::timing(std::size_t m) const {
  return timing_.at(m);
}

void RotationRun::advance() {
  if (done()) return;
  const std::size_t m = next_method();
  const gl::Fetch fetch = methods_[m];
  const auto start = std::chrono::steady_clock::now();
  StepTiming t;

  // The texture's contents: splinetool's coefficients() for the same method.
  ArrayF prefiltered;
  if (gl::fetch_prefiltered(fetch)) {
    const auto p0 = std::chrono::steady_clock::now();
    prefiltered = current_[m];
    if (use_cuda_) {
      try {
        cuda::PrefilterConfig cfg;
        cfg.degree = 3;
        cfg.boundary = Boundary::Reflect;
        cuda::prefilter(prefiltered, cfg);
      } catch (const Error& e) {
        restart_on_cpu(std::string("the CUDA prefilter failed (") + e.what() +
                       "); prefiltering on the CPU, from step 1 again");
        return;
      }
    } else {
      prefilter(prefiltered, PrefilterOptions{3, Boundary::Reflect, 0});
    }
    t.prefilter_ms = ms_since(p0);
  }
  const ArrayF& data = gl::fetch_prefiltered(fetch) ? prefiltered : current_[m];

  const auto u0 = std::chrono::steady_clock::now();
  const gl::SplineTexture texture(data, gl::TexFormat::R32F);
  t.upload_ms = ms_since(u0);

  double gpu_ms = 0;
  ArrayF out = evaluators_[m]->render_grid(texture, grid_, &gpu_ms);
  if (timer_meaningful_) t.gpu_ms = gpu_ms;

  const ErrorStats stats =
      original_d_ ? compare(out, *original_d_, mask_, 1.0) : compare(out, original_f_, mask_, 1.0);
  current_[m] = std::move(out);
  keep(m, current_[m]);
  psnr_[m].push_back(stats.psnr);
  rms_[m].push_back(stats.rms);
  const ErrorStats rotated = compare(current_[m], rotated_reference(next_step()), mask_, 1.0);
  psnr_rotated_[m].push_back(rotated.psnr);
  rms_rotated_[m].push_back(rotated.rms);
  t.total_ms = ms_since(start);
  timing_[m].push_back(t);
  ++units_done_;
}

void RotationRun::run_to_end() {
  while (!done()) advance();
}

void RotationRun::keep(std::size_t m, const ArrayF& result) {
  Kept k;
  if (keep_float_) {
    k.f = result.vec();
  } else {
    k.u16.resize(result.size());
    for (std::size_t i = 0; i < result.size(); ++i) {
      const float v = std::clamp(result[i], 0.0f, 1.0f);
      k.u16[i] = static_cast<std::uint16_t>(std::lround(v * 65535.0f));
    }
  }
  kept_[m].push_back(std::move(k));
}

std::vector<float> RotationRun::pixel(std::size_t m, int k, std::size_t x, std::size_t y) const {
  check_result(m, k);
  if (x >= width() || y >= height())
    throw Error("repeated rotation: no pixel (" + std::to_string(x) + ", " + std::to_string(y) +
                ") in a " + std::to_string(width()) + " x " + std::to_string(height()) + " image");
  const std::size_t c = channels(), at = (y * width() + x) * c;
  std::vector<float> out(c);
  for (std::size_t i = 0; i < c; ++i) {
    if (k == 0) {
      out[i] = original_f_[at + i];
    } else {
      const Kept& kept = kept_[m][static_cast<std::size_t>(k - 1)];
      out[i] = keep_float_ ? kept.f[at + i] : static_cast<float>(kept.u16[at + i]) / 65535.0f;
    }
  }
  return out;
}

void RotationRun::check_result(std::size_t m, int k) const {
  if (m >= methods_.size())
    throw Error("repeated rotation: no method " + std::to_string(m) + " (the run has " +
                std::to_string(methods_.size()) + ")");
  if (k < 0 || k > steps_done(m))
    throw Error("repeated rotation: step " + std::to_string(k) + " of " +
                gl::fetch_name(methods_[m]) + " is not done (" + std::to_string(steps_done(m)) +
                " of " + std::to_string(settings_.steps) + " steps are)");
}

ArrayF RotationRun::result(std::size_t m, int k) const {
  check_result(m, k);
  if (k == 0) return original_f_;
  const Kept& kept = kept_[m][static_cast<std::size_t>(k - 1)];
  ArrayF out(original_f_.dims(), original_f_.channels());
  if (keep_float_) {
    out.vec() = kept.f;
  } else {
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = static_cast<float>(kept.u16[i]) / 65535.0f;
  }
  return out;
}

}  // namespace sv::viewer
