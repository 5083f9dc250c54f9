// The GRBF weights of the zoom and volume modes' views (see grbf_views.h).
#include "grbf_views.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>

#include "splineview/error.h"

namespace sv::viewer {

std::string wrap_words(const std::string& text, std::size_t width) {
  std::string out = text;
  std::size_t line_start = 0, last_space = std::string::npos;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '\n') {
      line_start = i + 1;
      last_space = std::string::npos;
      continue;
    }
    if (out[i] == ' ') last_space = i;
    if (i - line_start >= width && last_space != std::string::npos && last_space > line_start) {
      out[last_space] = '\n';
      line_start = last_space + 1;
      last_space = std::string::npos;
    }
  }
  return out;
}

GrbfSolution solve_grbf(const ArrayF& samples, const ArrayD* exact, double sigma) {
  GrbfSolution s;
  s.sigma = sigma;
  const auto start = std::chrono::steady_clock::now();
  try {
    if (samples.points() > kGrbfMaxSamples) {
      char text[240];
      std::snprintf(text, sizeof text,
                    "GRBF is offered up to %zu Mi samples (the views sum (2R + 1)^rank weights "
                    "per pixel); this data has %.1f Mi",
                    kGrbfMaxSamples >> 20, static_cast<double>(samples.points()) / 1048576.0);
      throw Error(text);
    }
    GrbfOptions opt;
    opt.sigma = {sigma};
    s.gpu = std::make_shared<GrbfWeights<float>>(grbf_solve(samples, opt));
    if (exact) s.exact = std::make_shared<GrbfWeights<double>>(grbf_solve(*exact, opt));
  } catch (const std::exception& e) {
    s.gpu.reset();
    s.exact.reset();
    s.error = e.what();
  }
  s.ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return s;
}

GrbfViews::~GrbfViews() {
  if (solving_.valid()) solving_.wait();
}

void GrbfViews::reset(std::shared_ptr<const ArrayF> samples, std::shared_ptr<const ArrayD> exact) {
  if (solving_.valid()) solving_.wait();
  solving_ = {};
  shown_.reset();
  samples_ = std::move(samples);
  exact_ = std::move(exact);
}

std::optional<GrbfSolution> GrbfViews::update(bool wanted, double sigma, double time_s, bool now) {
  if (!samples_) return std::nullopt;
  const auto adopt = [this]() -> std::optional<GrbfSolution> {
    shown_ = solving_.get();
    solving_ = {};
    return shown_;
  };
  if (solving_.valid()) {
    if (now) solving_.wait();
    if (solving_.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
      return std::nullopt;
    std::optional<GrbfSolution> s = adopt();
    if (!wanted || s->sigma == sigma) return s;
    // The slider moved on meanwhile: the newer sigma follows (below), this one is shown first.
    if (!now) return s;
  }
  if (!wanted || (shown_ && shown_->sigma == sigma)) return std::nullopt;
  if (!now && time_s - changed_s_ < kDebounceS) return std::nullopt;
  solving_sigma_ = sigma;
  solving_ = std::async(std::launch::async, [samples = samples_, exact = exact_, sigma] {
    return solve_grbf(*samples, exact.get(), sigma);
  });
  if (now) {
    solving_.wait();
    return adopt();
  }
  return std::nullopt;
}

bool GrbfViews::settled(bool wanted, double sigma) const {
  if (!wanted || !samples_) return true;
  return !solving_.valid() && shown_ && shown_->sigma == sigma;
}

std::string GrbfViews::status(double sigma) const {
  char text[64];
  if (!samples_) return "no GRBF: the samples were not kept (over the readout budget)";
  if (solving_.valid()) {
    std::snprintf(text, sizeof text, "solving the GRBF weights, sigma %.3g ...", solving_sigma_);
    return text;
  }
  if (!shown_) return "GRBF weights not solved yet";
  if (!shown_->error.empty()) return shown_->error;
  if (shown_->sigma != sigma) {
    std::snprintf(text, sizeof text, "sigma %.3g shown (the new one follows)", shown_->sigma);
    return text;
  }
  return {};
}

gl::GrbfFetchOptions GrbfViews::fetch_options(bool opaque) const {
  gl::GrbfFetchOptions o;
  if (shown_ && shown_->gpu) {
    o.sigma = shown_->gpu->sigma;
    o.radius = shown_->gpu->radius;
  }
  o.opaque = opaque;
  return o;
}

nlohmann::json GrbfViews::report() const {
  nlohmann::json j;
  if (!shown_) {
    j["state"] = solving_.valid() ? "solving" : "not solved";
    return j;
  }
  const GrbfSolution& s = *shown_;
  j["sigma"] = s.sigma;
  j["solve_ms"] = s.ms;
  if (!s.error.empty()) {
    j["state"] = "refused";
    j["error"] = s.error;
    return j;
  }
  const GrbfWeights<float>& g = *s.gpu;
  j["state"] = "solved";
  j["path"] = "cpu";
  j["precision"] = "float";
  j["solver"] = "sv::grbf_solve<float> (exact separable solve)";
  j["condition"] = g.system.condition;
  nlohmann::json axes = nlohmann::json::array();
  for (const GrbfAxisSystem& a : g.system.axes) axes.push_back(a.condition);
  j["condition_per_axis"] = axes;
  j["radius"] = g.radius;
  j["sigma_per_axis"] = g.sigma;
  j["truncation_bound"] = g.truncation_bound;
  j["max_abs_weight"] = g.max_abs_weight;
  j["max_abs_sample"] = g.max_abs_sample;
  j["reference"] = s.exact ? "sv::grbf_sample on sv::grbf_solve<double> weights" : "none";
  if (s.exact) j["reference_radius"] = s.exact->radius;
  return j;
}

}  // namespace sv::viewer
