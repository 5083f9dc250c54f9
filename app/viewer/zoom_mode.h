// The zoom/rotate compare mode for 2-D images: up to four synchronised views or a split wipe,
// each with its own reconstruction method; wheel zoom about the cursor, drag to pan, rotation
// by slider and keys, a magnifier loupe, a readout under the cursor; per-view GPU time; and the
// accuracy overlay (RMS, max, sum of squares against the double-precision reference at the
// views' pixels, and an error heat map with its colour scale, see accuracy.h); a display window
// in the file's raw units (image_window.h: middle or Shift + left drag, panel fields, presets),
// applied after the interpolation, and a readout of raw values.
#pragma once

#include <array>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "accuracy.h"
#include "grbf_views.h"
#include "image_document.h"
#include "image_window.h"
#include "layout.h"
#include "method_pass.h"
#include "mode.h"
#include "splineview/gl/timer.h"

namespace sv::viewer {

// The image name that opens the bundled zone plate (--mode zoom zone-plate).
constexpr const char* kZonePlateName = "zone-plate";

struct ZoomOptions {
  std::string image;  // empty: the bundled photograph
  Layout layout = Layout::Single;
  // Methods of the views in layout order; std::nullopt keeps the default for that view.
  std::array<std::optional<gl::Fetch>, 4> methods;
  double angle_deg = 0;              // counter-clockwise as displayed
  std::optional<double> zoom;        // window pixels per sample; empty: fit
  std::optional<glm::dvec2> center;  // image position (x, y) at the views' centre
  bool accuracy = true;              // measure the views against the double reference
  bool heat_map = false;             // show the error heat map over the views
  AccuracyReference reference;       // what the views are measured against (--reference)
  // The first image's display window in its raw units (--window, --level); each missing one is
  // the automatic window's (percentiles, or the 8-bit full scale).
  std::optional<double> window;
  std::optional<double> level;
  // Image positions (x, y) whose readout the report lists (--probe).
  std::vector<glm::dvec2> probes;
  // The image failing to load is final (screenshot mode) rather than a fallback to the default.
  bool strict = false;
  // What the views show (--quantity NAME or N1,N2,..., layout order): the value (default), a
  // partial derivative, the gradient magnitude, ... (gl::parse_quantity), per texel; std::nullopt
  // keeps the value for that view.
  std::array<std::optional<gl::Quantity>, 4> quantities;
  // The derivative views' display range (--quantity-range): +-R for signed quantities, [0, R]
  // for the gradient magnitude; unset: automatic per quantity (quantity_range).
  std::optional<double> quantity_range;
  // The smoothing parameter of the coefficients (--lambda, >= 0; 0: the interpolating
  // prefilter): sv::direct_transform with lambda on the CPU, applied to every image.
  double lambda = 0.0;
  // The Gaussian RBF's sigma in samples (--sigma; the grbf views, gl::Fetch::Grbf).
  double sigma = 1.0;
};

class ZoomMode final : public Mode {
 public:
  ZoomMode(const ZoomOptions& options, MethodPass& pass);
  ~ZoomMode() override;

  const char* name() const override { return "zoom"; }
  bool open(const std::string& path) override;
  std::vector<std::string> bundled() const override;
  bool open_bundled(std::size_t index) override;
  std::string title() const override;

  void update(const FrameInfo& f) override;
  void panel(const FrameInfo& f) override;
  void overlays(const FrameInfo& f, ImDrawList* list) override;
  void draw(const FrameInfo& f) override;

  std::optional<Progress> progress() const override;
  bool settled() const override;
  void finish() override;
  const std::string& error() const override { return error_; }
  void clear_error() override { error_.clear(); }
  std::vector<PassTiming> timings() const override;
  nlohmann::json report() const override;

  // The readout at image position `p` (x, y): the position, the nearest pixel and its stored
  // values, and every method's interpolated value there, all in the file's raw units. The
  // report's "readout" entries; the panel shows the same for the cursor.
  nlohmann::json readout(const glm::dvec2& p) const;

 private:
  struct Settings {
    Layout layout = Layout::Single;
    std::array<gl::Fetch, 4> methods = {gl::Fetch::CubicOtf, gl::Fetch::Nearest, gl::Fetch::Linear,
                                        gl::Fetch::CubicUnfiltered};
    float angle_deg = 0.0f;
    float wipe = 0.5f;
    bool loupe = false;
    float loupe_factor = 4.0f;
    std::array<gl::Quantity, 4> quantities{};  // per view, as methods
    double lambda = 0.0;                       // the panel's slider (applied when settled)
    double sigma = 1.0;                        // the GRBF's (applied when settled)
  };
  struct Hover {
    std::size_t cell = 0;
    std::size_t slot = 0;  // index into settings_.methods
    glm::dvec2 local{};    // cursor in the cell's coordinates
  };
  // One displayed method over a rectangle of a cell (the wipe has two per cell).
  struct Pane {
    std::size_t slot = 0;
    Rect rect;         // framebuffer pixels, top-left origin
    double x_in_cell;  // rect.x - cell.x
  };

  void start_decode(std::function<DecodedImage()> decode, std::string what);
  void adopt(DecodedImage decoded);
  void poll_decode();
  std::vector<Rect> cells(const FrameInfo& f) const;
  std::vector<Pane> panes(const std::vector<Rect>& cells) const;
  std::vector<AccuracyJob> accuracy_jobs(const std::vector<Rect>& cells) const;
  void update_accuracy(const FrameInfo& f, bool now);
  // What view `slot` shows (its quantity and display range; the range computed on first need).
  QuantityView quantity_view(std::size_t slot) const;
  // Why view `slot`'s method cannot show its quantity; empty when it can.
  std::string quantity_problem(std::size_t slot) const;
  // The smoothing: applies `lambda` to the document now (CPU direct_transform, upload, a new
  // accuracy meter with the same lambda); start_smoothing runs the transform on a worker thread
  // and poll_smoothing adopts its result on the GL thread.
  // `uploaded`: the texture already holds them (the CUDA path wrote them through the interop).
  void apply_coefficients(ArrayF coefficients, double lambda, bool uploaded = false);
  void start_smoothing(double lambda);
  void poll_smoothing(bool wait);
  void make_meter();
  // The GRBF views (grbf_views.h): whether a shown view uses it, and the per-frame solve and
  // upload of its weights into document_->textures.grbf (and the meter's reference).
  bool grbf_wanted() const;
  void update_grbf(double time_s, bool now);
  void use_grbf(const GrbfSolution& s);
  void reset_view(const Rect& cell, std::optional<double> zoom = std::nullopt,
                  std::optional<glm::dvec2> center = std::nullopt);
  std::optional<Hover> hover_at(const std::vector<Rect>& cells, const glm::dvec2& cursor) const;
  void handle_input(const FrameInfo& f, const std::vector<Rect>& cells);
  void follow_layout(const std::vector<Rect>& cells);
  Rect loupe_rect(const Rect& cell) const;
  double angle_rad() const;

  ZoomOptions options_;
  MethodPass& pass_;
  Settings settings_;
  std::optional<ImageDocument> document_;
  std::future<DecodedImage> decoding_;
  std::string decoding_what_;
  bool fallback_pending_ = false;  // the first image failed: show the default after it
  bool first_document_ = true;     // the command line's window applies to the first image only
  ImageWindow window_;

  ViewTransform view_;
  glm::dvec2 cell_size_{0.0, 0.0};
  bool view_pending_ = false;
  bool first_view_ = true;
  bool dragging_ = false;
  bool dragging_divider_ = false;
  std::optional<Hover> hover_;
  std::string error_;
  std::string notice_;
  float ui_scale_ = 1.0f;
  std::vector<Rect> last_cells_;

  // Accuracy: one job per pane, the heat maps of the last results (one per pane).
  AccuracyOverlay accuracy_;

  // The readout's derivative quantities in double at the cursor (or a --probe): view `slot`'s
  // quantity of its method's spline, in raw units per texel; empty for a value view or one
  // whose method cannot show it. The splines (the coefficients' and, for the unfiltered cubic,
  // the samples') are made on first need and forgotten with the coefficients.
  std::vector<double> quantity_at(std::size_t slot, const glm::dvec2& p) const;
  mutable std::shared_ptr<const SplineDerivatives<double>> readout_spline_[2];
  // Derivative views: display range per quantity name (automatic ones are computed on first
  // need and forgotten with the coefficients).
  mutable std::map<std::string, double> quantity_ranges_;
  // Smoothing: the lambda the coefficients were made with, the pending job, the slider's last
  // change (debounce), and the last transform's time.
  double lambda_ = 0.0;
  std::future<ArrayF> smoothing_;
  double smoothing_lambda_ = 0.0;  // of the pending job
  double lambda_changed_s_ = -1.0;
  double smoothing_ms_ = 0.0;
  std::string smoothing_path_ = "cpu";  // of the coefficients shown: "cuda" or "cpu"
  std::optional<double> smoothing_kernel_ms_;
  std::chrono::steady_clock::time_point smoothing_start_{};

  GrbfViews grbf_;

  // GPU time per pane slot (view 1..4, and the loupe), buffered timer queries.
  std::array<gl::GpuTimer, 5> timers_;
  std::array<FrameHistory<kHistoryLength>, 5> pass_ms_;
  std::array<std::string, 5> pass_names_;
  bool timers_meaningful_ = true;
};

}  // namespace sv::viewer
