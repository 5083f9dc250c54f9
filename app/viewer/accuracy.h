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
//  - Reference: sv::sample in double on a worker thread, on the file's values in double
//    (degree 0 nearest, 1 linear, 3 on the samples for the unfiltered cubic, 3 on the double
//    prefilter of the samples for the prefiltered flavours), at the same float positions.
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

#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "splineview/array.h"
#include "splineview/gl/evaluator.h"
#include "splineview/gl/objects.h"
#include "splineview/metrics.h"

namespace sv::viewer {

struct AccuracyJob {
  gl::Fetch method = gl::Fetch::CubicOtf;
  gl::GridMapping grid;
};

struct AccuracyResult {
  AccuracyJob job;
  ErrorStats stats;          // over the measured points and all channels
  std::size_t points = 0;    // measured pixels (inside the image)
  std::vector<float> error;  // grid.rows * grid.cols, row major; NaN where not measured
  float error_max = 0;       // largest value in `error`
};

class AccuracyMeter {
 public:
  // `exact`: the data's values in double (as read from the file); `samples` and `coefficients`:
  // the float arrays the GPU textures hold (same shape). Uploads float textures of both; needs
  // a current GL 4.5 context, as do step() and finish().
  AccuracyMeter(std::shared_ptr<const ArrayD> exact, const ArrayF& samples,
                const ArrayF& coefficients);
  ~AccuracyMeter();
  AccuracyMeter(const AccuracyMeter&) = delete;
  AccuracyMeter& operator=(const AccuracyMeter&) = delete;

  // Starts measuring these views; abandons any measurement in progress. Results of the previous
  // completed measurement stay readable until this one completes.
  void measure(std::vector<AccuracyJob> jobs);
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
  gl::SplineTexture samples_tex_;
  gl::SplineTexture coefficients_tex_;
  std::map<gl::Fetch, std::unique_ptr<gl::Evaluator>> evaluators_;

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

  bool enabled = true;         // measure the views (the panel's checkbox, --no-accuracy)
  bool heat_map = false;       // show the heat maps (key H, --heat-map)
  float heat_opacity = 0.85f;  // the view shows through the rest

  // A new document: its meter (nullptr when there is none; `note` then says why, for the
  // panel and the report). Forgets the jobs, results and heat maps of the previous one.
  void reset(std::unique_ptr<AccuracyMeter> meter, std::string note = {});
  bool has_meter() const { return meter_ != nullptr; }
  const AccuracyMeter* meter() const { return meter_.get(); }
  const std::string& note() const { return note_; }

  // Per frame, with the jobs of the current view: a changed view is measured once it has been
  // unchanged for kDebounceS (at once with `now`, which also completes the measurement before
  // returning); otherwise the meter works for kBudgetMs. Uploads the heat maps of new results.
  // Does nothing while disabled or without a meter. Throws sv::Error from the meter.
  void update(std::vector<AccuracyJob> jobs, double time_s, bool now);

  // The result of job i of the current view; nullptr while the view is still being measured,
  // or changed since its last measurement.
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
  bool settled() const { return !enabled || !meter_ || (jobs_measured_ && !meter_->busy()); }

 private:
  void upload_heat_maps();

  std::unique_ptr<AccuracyMeter> meter_;
  std::string note_;
  std::vector<AccuracyJob> jobs_;
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
