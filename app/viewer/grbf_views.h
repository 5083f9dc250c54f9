// The Gaussian RBF (GRBF, issue 18) as a method of the zoom and volume modes: the weights of the
// shown data for the sigma the user chose, solved on a worker thread as the zoom mode's
// smoothing is (the slider's value is applied once it has rested for kDebounceS; one solve at a
// time, the newest sigma wins), in two precisions from the same data:
//  - float (sv::grbf_solve<float> on the float samples the views show): the weights the views
//    draw (uploaded by the mode into their own texture, gl::Fetch::Grbf) with the float support
//    radius; a sigma whose system is singular in float is refused with sv::Error's sentence
//    (naming sigma and the condition number), which the views show instead of an image;
//  - double (sv::grbf_solve<double> on the values in double): the accuracy overlay's
//    reference, the GRBF interpolant in double (AccuracyMeter::set_grbf).
// A data set above kGrbfMaxSamples is refused with a sentence (the solve is linear in the
// samples, but a volume's views then sum (2R + 1)^3 weights per pixel).
#pragma once

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "splineview/array.h"
#include "splineview/gl/evaluator.h"
#include "splineview/grbf.h"

namespace sv::viewer {

constexpr std::size_t kGrbfMaxSamples = std::size_t{16} << 20;  // 16 Mi samples
constexpr double kGrbfSigmaMin = 0.25, kGrbfSigmaMax = 2.5;     // the panel slider's range

struct GrbfSolution {
  double sigma = 1.0;
  std::shared_ptr<const GrbfWeights<float>> gpu;     // null when refused
  std::shared_ptr<const GrbfWeights<double>> exact;  // null when refused or without exact data
  std::string error;                                 // the refusal's sentence; empty when solved
  double ms = 0.0;                                   // both solves, on the worker
};

class GrbfViews {
 public:
  static constexpr double kDebounceS = 0.2;

  ~GrbfViews();

  // New data: the float samples the views show and their values in double (null: no accuracy
  // reference). Drops the weights and waits for a solve still running.
  void reset(std::shared_ptr<const ArrayF> samples, std::shared_ptr<const ArrayD> exact);
  bool has_data() const { return samples_ != nullptr; }

  // The slider moved (starts the debounce).
  void sigma_changed(double time_s) { changed_s_ = time_s; }

  // Per frame: when a view shows the GRBF (`wanted`) and `sigma` is not what is shown or being
  // solved, starts a solve once sigma has rested (at once with `now`; `now` also waits for it).
  // Returns the new solution when one was adopted this call (the caller uploads its weights).
  std::optional<GrbfSolution> update(bool wanted, double sigma, double time_s, bool now);

  // The solution shown (solved or refused), if any.
  const GrbfSolution* shown() const { return shown_ ? &*shown_ : nullptr; }
  bool solving() const { return solving_.valid(); }
  double solving_sigma() const { return solving_sigma_; }
  // Nothing left to do for `sigma`: no view wants the GRBF, or its solution is shown.
  bool settled(bool wanted, double sigma) const;

  // One line for a view that shows the GRBF: "" when its weights are shown, else "solving ..."
  // or the refusal.
  std::string status(double sigma) const;
  // The GRBF fetch's options for the shown weights (`opaque`: alpha 1 for images without it).
  gl::GrbfFetchOptions fetch_options(bool opaque) const;
  // The report's "grbf" object: sigma, state, condition number (whole and per axis), radius,
  // truncation bound, max |w|, solve time and path, or the refusal.
  nlohmann::json report() const;

 private:
  std::shared_ptr<const ArrayF> samples_;
  std::shared_ptr<const ArrayD> exact_;
  std::future<GrbfSolution> solving_;
  double solving_sigma_ = 0.0;
  std::optional<GrbfSolution> shown_;
  double changed_s_ = -1e30;
};

// `text` with its spaces turned into line breaks so that no line exceeds `width` characters
// (where a word allows), for the views' labels.
std::string wrap_words(const std::string& text, std::size_t width);

// Solves both precisions for `sigma` (what the worker runs); refusals become `error`.
GrbfSolution solve_grbf(const ArrayF& samples, const ArrayD* exact, double sigma);

}  // namespace sv::viewer
