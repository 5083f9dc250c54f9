// The viewer's accuracy overlay: the error of each displayed method against the double-precision
// reference, at exactly the positions of the view's pixels.
//
// A job is one view: its method and the affine map from the view's pixel grid to image
// positions (gl::GridMapping: pixel (row r, column c) of the view, top row first, centre at
// origin + r * step_row + c * step_col, array axis order). Positions are computed in double in
// that order and rounded once to float; only positions inside the image extent ([-0.5, N - 0.5]
// per axis, where the view shows the image) are measured.
//
//  - GPU side: the method's GLSL fetch (the same shader library the views use) through
//    gl::Evaluator::evaluate at those float positions, on float textures of the samples and of
//    the coefficients the viewer's prefilter produced (CUDA or the CPU fallback), in bands of
//    rows per step() so that the UI stays live.
//  - Reference, one of three (AccuracyReference), computed in double on a worker thread at the
//    same float positions:
//      same method: sv::sample of the job's own method on the file's values in double (degree
//        0 nearest, 1 linear, 3 on the samples for the unfiltered cubic, 3 on the double
//        prefilter of the samples for the prefiltered flavours): how exact the GPU path is;
//      another method: sv::sample of one chosen method (default precise, the prefiltered cubic
//        B-spline) for every job: how different each view's method is from that one;
//      truth: the analytic function the data was sampled from (AnalyticTruth: the zone plate,
//        Marschner-Lobb), only for such data: each method's true interpolation error.
//  - Figures: sv::compare of the two (RMS, max |error|, sum of squares over all channels of the
//    measured points), which is the code and the order splinetool's compare uses, so that
//    `splinetool sample` (gl and cpu double) at the same positions gives the same numbers.
//  - Heat map: per pixel the largest error over the channels (NaN outside the image).
//
// The meter works for 2-D images (grid positions (y, x)) and 3-D volumes (grid positions
// (z, y, x): a view's pixel grid is then a plane through the volume, e.g. a slice view).
//
// AccuracyOverlay is what a mode keeps around the meter: the jobs of its current view, the
// debounce that restarts a measurement only after the view has stopped changing, the results
// that belong to the current view, and the heat maps as textures. The zoom and the volume
// modes share it (and the panel and overlay widgets of panel_widgets.h that draw it).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "splineview/array.h"
#include "splineview/derivative.h"
#include "splineview/gl/evaluator.h"
#include "splineview/gl/objects.h"
#include "splineview/grbf.h"
#include "splineview/metrics.h"

namespace sv::viewer {

// The continuous function synthetic data was sampled from: value of channel `channel` at a
// position in sample units (array axis order, rank components; sample k sits at k), in the
// values the viewer works on. Empty for data read from files.
struct AnalyticTruth {
  std::string label;  // "the zone plate function"
  std::function<double(const double* position, std::size_t channel)> value;
  explicit operator bool() const { return static_cast<bool>(value); }
};

// What the GPU results are compared with.
enum class ReferenceKind {
  SameMethod,  // each job's own method in double
  Method,      // one method in double for all jobs
  Truth,       // the analytic function (AnalyticTruth)
};
struct AccuracyReference {
  ReferenceKind kind = ReferenceKind::SameMethod;
  gl::Fetch method = gl::Fetch::CubicPrecise;  // ReferenceKind::Method only
};
bool operator==(const AccuracyReference& a, const AccuracyReference& b);
inline bool operator!=(const AccuracyReference& a, const AccuracyReference& b) {
  return !(a == b);
}
// The report's name: "same-method", "method:<fetch_name>" ("method:precise"), "truth".
std::string reference_id(const AccuracyReference& r);
// The panel's words after "errors against: ": "each view's own method in double", "precise
// cubic in double", "the analytic function (ground truth)".
std::string reference_label(const AccuracyReference& r);
// A short suffix for the on-view labels: "" (same method), "  vs precise", "  vs truth".
std::string reference_tag(const AccuracyReference& r);
// Parses the command line's --reference: "same", "truth", or a method name (parse_method:
// "precise", "nearest", ...) for ReferenceKind::Method. Throws sv::Error listing the choices.
AccuracyReference parse_reference(const std::string& name);

struct AccuracyJob {
  gl::Fetch method = gl::Fetch::CubicOtf;
  gl::GridMapping grid;
  // A derivative quantity instead of the value (gl::Quantity): measured against the same
  // quantity of the reference spline in double (sv::SplineDerivatives, degree 3), scaled per
  // axis as the meter's axis_scale says. A job whose method cannot show the quantity, or a
  // derivative job against ReferenceKind::Truth (the analytic functions have no derivatives
  // here), measures no points.
  gl::Quantity quantity{};
};

// The quantity `q` in double at m positions (array axis order, rank components each) of the
// cubic spline `spline`, one value per channel: out[i * channels + c]. axis_scale (texture
// order x, y, z) multiplies each derivative along an axis per order (1: per sample).
void quantity_reference(const SplineDerivatives<double>& spline, const gl::Quantity& q,
                        const std::array<double, 3>& axis_scale, const double* positions,
                        std::size_t m, double* out);

// A display range for a derivative view of `q`: the 99.5th percentile of |q| (of q for the
// gradient magnitude) over up to 8192 evenly spread positions inside the array, evaluated on
// the CPU from `coefficients` (the B-spline coefficients the GPU views sample; all channels);
// 1 where that is 0 or not finite.
double quantity_range(const ArrayF& coefficients, const gl::Quantity& q,
                      const std::array<double, 3>& axis_scale = {1.0, 1.0, 1.0});

struct AccuracyResult {
  AccuracyJob job;
  AccuracyReference reference;  // what it was measured against
  ErrorStats stats;             // over the measured points and all channels
  std::size_t points = 0;       // measured pixels (inside the image)
  std::vector<float> error;     // grid.rows * grid.cols, row major; NaN where not measured
  float error_max = 0;          // largest value in `error`
};

class AccuracyMeter {
 public:
  // `exact`: the data's values in double (as read from the file); `samples` and `coefficients`:
  // the float arrays the GPU textures hold (same shape); `truth`: the function the data was
  // sampled from, for ReferenceKind::Truth (empty for files). Uploads float textures of both;
  // needs a current GL 4.5 context, as do step() and finish().
  // `lambda`: the smoothing parameter the GPU coefficients were made with (sv::direct_transform;
  // 0 = the interpolating prefilter); the double reference's coefficients use the same.
  // `axis_scale` (texture order x, y, z): the derivative jobs' factor per order along each axis
  // (1 / spacing in mm for the volume mode), as the views apply it.
  // `exact_coefficients`, when given, are the reference's coefficients (a streamed box's, made in
  // double from its read region with the halo, volume_stream.h) instead of the prefilter of
  // `exact`.
  AccuracyMeter(std::shared_ptr<const ArrayD> exact, const ArrayF& samples,
                const ArrayF& coefficients, AnalyticTruth truth = {}, double lambda = 0.0,
                const std::array<double, 3>& axis_scale = {1.0, 1.0, 1.0},
                std::shared_ptr<ArrayD> exact_coefficients = nullptr);
  double lambda() const { return lambda_; }
  const std::array<double, 3>& axis_scale() const { return axis_scale_; }
  // The Gaussian RBF's weights for gl::Fetch::Grbf jobs (issue 18): `gpu`, the float weights the
  // views draw (uploaded here as an R32F texture, with their sigma and support radius), and
  // `exact`, the weights of the same sigma solved in double from the exact values: the
  // reference of a grbf job (ReferenceKind::SameMethod) is sv::grbf_sample on them, the GRBF
  // interpolant in double. Abandons a measurement in progress. Without weights (before the
  // first call, or after clear_grbf) grbf jobs measure no points.
  void set_grbf(std::shared_ptr<const GrbfWeights<float>> gpu,
                std::shared_ptr<const GrbfWeights<double>> exact);
  void clear_grbf();
  bool has_grbf() const { return grbf_exact_ != nullptr; }
  ~AccuracyMeter();
  AccuracyMeter(const AccuracyMeter&) = delete;
  AccuracyMeter& operator=(const AccuracyMeter&) = delete;

  // Starts measuring these views; abandons any measurement in progress. Results of the previous
  // completed measurement stay readable until this one completes. Throws sv::Error for
  // ReferenceKind::Truth without a truth function.
  void measure(std::vector<AccuracyJob> jobs, AccuracyReference reference = {});
  bool has_truth() const { return static_cast<bool>(truth_); }
  const AnalyticTruth& truth() const { return truth_; }
  // Does GPU work for about `budget_ms` and collects the reference when ready (GL thread).
  void step(double budget_ms);
  // Completes the current measurement now (blocks).
  void finish();

  bool busy() const { return busy_; }
  // Progress of the current measurement, 0..1.
  float fraction() const;
  // The last completed measurement, one result per job in job order; empty before the first.
  const std::vector<AccuracyResult>& results() const { return results_; }
  // Counts completed measurements (to notice new results).
  std::uint64_t generation() const { return generation_; }

 private:
  struct Pending;
  void start_reference();
  void stop_worker();
  void complete();

  std::shared_ptr<const ArrayD> exact_;
  std::shared_ptr<ArrayD> exact_coefficients_;  // computed once, on the worker
  // The derivative references (made on the worker when first needed): the prefiltered spline
  // (exact_coefficients_) and the spline of the samples (the unfiltered cubic).
  std::shared_ptr<SplineDerivatives<double>> prefiltered_derivatives_;
  std::shared_ptr<SplineDerivatives<double>> unfiltered_derivatives_;
  AnalyticTruth truth_;
  double lambda_ = 0.0;
  std::array<double, 3> axis_scale_{1.0, 1.0, 1.0};
  gl::SplineTexture samples_tex_;
  gl::SplineTexture coefficients_tex_;
  std::shared_ptr<const GrbfWeights<float>> grbf_gpu_;
  std::shared_ptr<const GrbfWeights<double>> grbf_exact_;
  std::unique_ptr<gl::SplineTexture> grbf_tex_;
  std::map<std::string, std::unique_ptr<gl::Evaluator>> evaluators_;  // "method/quantity"

  std::unique_ptr<Pending> pending_;
  std::thread worker_;
  std::atomic<bool> cancel_{false};
  bool busy_ = false;
  std::vector<AccuracyResult> results_;
  std::uint64_t generation_ = 0;
};

// The jobs are the same views: methods and grids equal.
bool same_jobs(const std::vector<AccuracyJob>& a, const std::vector<AccuracyJob>& b);

// A mode's accuracy overlay: the settings the panel edits, the meter, the current view's jobs
// and the heat maps of the last results. GL thread only.
class AccuracyOverlay {
 public:
  // The view must stay unchanged this long before a measurement restarts, so that a drag or a
  // wheel spin does not start one per frame.
  static constexpr double kDebounceS = 0.25;
  // Time per frame given to the measurement's GPU side.
  static constexpr double kBudgetMs = 6.0;

  bool enabled = true;          // measure the views (the panel's checkbox, --no-accuracy)
  bool heat_map = false;        // show the heat maps (key H, --heat-map)
  float heat_opacity = 0.85f;   // the view shows through the rest
  AccuracyReference reference;  // what the views are measured against (the panel, --reference)

  // A new document: its meter (nullptr when there is none; `note` then says why, for the
  // panel and the report). Forgets the jobs, results and heat maps of the previous one.
  void reset(std::unique_ptr<AccuracyMeter> meter, std::string note = {});
  bool has_meter() const { return meter_ != nullptr; }
  const AccuracyMeter* meter() const { return meter_.get(); }
  AccuracyMeter* meter() { return meter_.get(); }
  // New GRBF weights for the views (both null: none): handed to the meter (set_grbf or
  // clear_grbf) and the current view measured again. Nothing without a meter.
  void set_grbf(std::shared_ptr<const GrbfWeights<float>> gpu,
                std::shared_ptr<const GrbfWeights<double>> exact) {
    if (!meter_) return;
    if (gpu && exact)
      meter_->set_grbf(std::move(gpu), std::move(exact));
    else
      meter_->clear_grbf();
    remeasure();
  }
  // What the views show changed without the jobs changing (new GRBF weights): forget the
  // measurement of the current view and its heat maps, so that it is measured again.
  void remeasure() {
    jobs_.clear();
    jobs_measured_ = false;
    heat_.clear();
  }
  const std::string& note() const { return note_; }
  // Why `reference` cannot be measured for this document (truth asked for data that is not
  // analytic); empty when it can. Nothing is measured meanwhile.
  std::string reference_problem() const;
  bool has_truth() const { return meter_ && meter_->has_truth(); }

  // Per frame, with the jobs of the current view: a changed view is measured once it has been
  // unchanged for kDebounceS (at once with `now`, which also completes the measurement before
  // returning); otherwise the meter works for kBudgetMs. Uploads the heat maps of new results.
  // Does nothing while disabled or without a meter. Throws sv::Error from the meter.
  void update(std::vector<AccuracyJob> jobs, double time_s, bool now);

  // The result of job i of the current view; nullptr while the view is still being measured,
  // or changed (view or reference) since its last measurement.
  const AccuracyResult* result(std::size_t i) const;
  // All results of the last completed measurement (perhaps of a previous view).
  const std::vector<AccuracyResult>& results() const;
  // The heat map of job i of the last results (a texture of the job's grid, RGBA8, nearest
  // filtering, top row first); nullptr when there is none.
  const gl::Texture* heat_texture(std::size_t i) const;
  bool has_heat_maps() const { return !heat_.empty(); }

  // A measurement of the current view has started (it may still run).
  bool started() const { return jobs_measured_; }
  bool busy() const { return meter_ && meter_->busy(); }
  float fraction() const { return meter_ ? meter_->fraction() : 1.0f; }
  // Nothing left to do: disabled, no meter, or the current view measured.
  bool settled() const {
    return !enabled || !meter_ || !reference_problem().empty() ||
           (jobs_measured_ && !meter_->busy());
  }

 private:
  void upload_heat_maps();

  std::unique_ptr<AccuracyMeter> meter_;
  std::string note_;
  std::vector<AccuracyJob> jobs_;
  AccuracyReference jobs_reference_;  // the reference of jobs_'s measurement
  double jobs_changed_s_ = 0;
  bool jobs_measured_ = false;
  std::uint64_t heat_generation_ = 0;
  std::vector<gl::Texture> heat_;
};

// Positions of a job's measured pixels (float, array axis order, `rank` components each) and
// their pixel indices (r * cols + c), in pixel order: the float positions the meter evaluates.
void job_positions(const gl::GridMapping& grid, const std::vector<std::size_t>& dims,
                   std::vector<float>* positions, std::vector<std::size_t>* pixels);

// Colour of an error for the heat map: log scale from 1e-7 (dark blue) through 1e-4 (green,
// yellow) to 1e-1 and above (white-hot red); transparent where not measured (NaN). RGBA8.
std::uint32_t heat_colour(float error);
// The scale's end points (decades) for the legend.
constexpr int kHeatMinDecade = -7;
constexpr int kHeatMaxDecade = -1;

}  // namespace sv::viewer
