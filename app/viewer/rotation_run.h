// The repeated-rotation experiment as an incremental engine, without any UI: an image is turned
// by the same angle K times, each step resampling the previous step's float result, once per
// reconstruction method, and after every step the result is measured against the original
// (PSNR and RMS inside the centred disc of sv::disc_mask, peak 1).
//
// Each step is exactly what `splinetool resample IN OUT --rotate A --repeat K --method M
// --backend gl --fetch F --disc D --compare-original` does (app/splinetool/backend_gl.cpp): the
// previous result, prefiltered in float on the CPU (sv::prefilter<float>, degree 3, reflect) for
// the prefiltered fetches (lut, otf, precise) or raw for nearest, linear and cubic-unfiltered,
// goes into a gl::SplineTexture (R32F, RGBA32F for colour), and a gl::Evaluator of the fetch
// renders gl::rotation_grid (the mapping of sv::rotate) into the next result; the error is
// sv::compare against the original as given (double for a loaded file, as splinetool compares).
// With the CPU prefilter the numbers are therefore bit-identical to splinetool's. When
// RotationSettings::cuda_prefilter is set and a CUDA device is available, the prefilter runs
// with sv::cuda::prefilter instead; the results then differ from the CPU path by float ulps.
//
// The work is split into units of one step of one method (advance()), taken step by step (all
// methods of step k before step k + 1), so that a UI can interleave it with frames and show the
// curves growing together. Every result is kept for scrubbing, within a memory budget: as float
// when all of them fit, else as 16-bit display copies (values clamped to [0, 1] and rounded to
// 1/65535; the measurements always use the float results), else the constructor refuses.
//
// Two figures per step k. psnr()/rms(): against the original as given, inside the disc, which is
// splinetool's `--compare-original` (meaningful at full turns, where the image is back in place).
// psnr_rotated()/rms_rotated(): against the original rotated ONCE by the accumulated angle k * A
// with the exact model, the interpolating cubic B-spline in double (sv::rotate<double>, cubic,
// reflect), so every step is compared with where an ideal image would be and the curve shows how
// the error accumulates; at full turns that reference is the original itself (not resampled), so
// the two figures coincide there. The reference of step k is computed once for all methods, on a
// worker thread one step ahead of the GPU work.
//
// Needs a current GL 4.5 context (the evaluators compile in the constructor) on the calling
// thread for its whole life. advance() waits for the GPU (the result is read back) and uses a
// GL_TIME_ELAPSED query: it must not run while another such query is active.
#pragma once

#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "splineview/array.h"
#include "splineview/gl/evaluator.h"

namespace sv::viewer {

struct RotationSettings {
  double step_deg = 10.0;  // degrees per step, counter-clockwise as displayed (sv::rotate)
  int steps = 36;          // K >= 1
  double disc = 0.35;      // measure inside disc_mask(H, W, disc); 0 = the whole image
  // Prefilter with sv::cuda::prefilter when a CUDA device is available; false: always on the
  // CPU (the splinetool-identical path; tests force it).
  bool cuda_prefilter = true;
  // Bytes for the kept results (all methods, steps 1..K); see the header comment.
  std::size_t memory_budget = std::size_t{1} << 30;
};

// Where a step's time went. gpu_ms is the GL timer query around the evaluator's pass; it is
// absent on software renderers (gl::timer_queries_meaningful), whose timer results are not the
// draw's time.
struct StepTiming {
  double prefilter_ms = 0;  // CPU or CUDA prefilter (0 for methods without one)
  double upload_ms = 0;     // the gl::SplineTexture
  std::optional<double> gpu_ms;
  double total_ms = 0;  // the whole step: prefilter, upload, pass, readback, measurement
};

class RotationRun {
 public:
  // `original`: dims (H, W), 1..4 channels, finite values; `methods`: 1..4 fetches (repeats
  // allowed). The double overload takes an image as sv::load_image returns it: the steps work on
  // its float conversion and the measurements compare with the double values, as splinetool
  // does. Throws sv::Error naming the problem (shape, method count, steps, angle, disc, memory
  // budget, GL compile errors).
  RotationRun(const ArrayD& original, std::vector<gl::Fetch> methods,
              const RotationSettings& settings = {});
  RotationRun(const ArrayF& original, std::vector<gl::Fetch> methods,
              const RotationSettings& settings = {});
  ~RotationRun();
  RotationRun(const RotationRun&) = delete;
  RotationRun& operator=(const RotationRun&) = delete;

  // One unit of work: the next step of the next method (step-major order); nothing when done().
  // Throws sv::Error from the GL layer or the prefilter. When the CUDA prefilter fails, the run
  // switches to the CPU prefilter and starts again from step 1 (prefilter_notice() says why), so
  // that one run never mixes the two.
  void advance();
  // advance() until done().
  void run_to_end();
  bool done() const;
  // Fraction of the units done, 0..1.
  double progress() const;
  // The unit advance() does next: method index and step (1..K); meaningless when done().
  std::size_t next_method() const;
  int next_step() const;

  const std::vector<gl::Fetch>& methods() const { return methods_; }
  const RotationSettings& settings() const { return settings_; }
  std::size_t height() const { return original_f_.dim(0); }
  std::size_t width() const { return original_f_.dim(1); }
  std::size_t channels() const { return original_f_.channels(); }
  // The original as the steps see it (float).
  const ArrayF& original() const { return original_f_; }

  // Steps finished by method m, and by every method (the steps that can be shown side by side).
  int steps_done(std::size_t m) const;
  int steps_done() const;

  // Per step 1..steps_done(m) (entry k - 1 for step k): PSNR in dB against the original, peak 1
  // (+inf when identical), and the RMS error.
  const std::vector<double>& psnr(std::size_t m) const;
  const std::vector<double>& rms(std::size_t m) const;
  // The same against the original rotated once by k * angle (see the header comment).
  const std::vector<double>& psnr_rotated(std::size_t m) const;
  const std::vector<double>& rms_rotated(std::size_t m) const;
  const std::vector<StepTiming>& timing(std::size_t m) const;

  // The result of method m after step k (0 = the original), from the kept copies (16-bit
  // ones when keeps_float() is false). Throws sv::Error for a method or step not done.
  ArrayF result(std::size_t m, int k) const;
  // The channels of pixel (x, y) of that result, without copying the image (same checks).
  std::vector<float> pixel(std::size_t m, int k, std::size_t x, std::size_t y) const;

  // "cpu" or "cuda": where the prefilter runs in this run.
  const char* prefilter_backend() const { return use_cuda_ ? "cuda" : "cpu"; }
  // Why the CUDA prefilter is not used although asked for (empty when it is, or was not asked).
  const std::string& prefilter_notice() const { return prefilter_notice_; }
  // Whether the kept results are float (else 16-bit display copies), and their bytes when all
  // steps are done.
  bool keeps_float() const { return keep_float_; }
  std::size_t kept_bytes() const { return kept_bytes_; }

 private:
  RotationRun(ArrayF original_f, std::unique_ptr<ArrayD> original_d, std::vector<gl::Fetch> methods,
              const RotationSettings& settings);
  void restart_on_cpu(const std::string& why);
  void keep(std::size_t m, const ArrayF& result);
  // Throws sv::Error unless step k of method m is done.
  void check_result(std::size_t m, int k) const;
  // The exact rotation of the original for step k (waits for the worker when needed) and starts
  // the one for step k + 1.
  const ArrayD& rotated_reference(int k);

  struct Kept {  // one step of one method: exactly one of the two is filled
    std::vector<float> f;
    std::vector<std::uint16_t> u16;
  };

  ArrayF original_f_;
  std::unique_ptr<ArrayD> original_d_;   // the reference when given in double, else null
  std::shared_ptr<const ArrayD> exact_;  // the original in double (input of the rotated references)
  int reference_step_ = 0;               // step of reference_ (0: none yet)
  ArrayD reference_;
  int next_reference_step_ = 0;
  std::future<ArrayD> next_reference_;
  std::vector<gl::Fetch> methods_;
  RotationSettings settings_;
  gl::GridMapping grid_;
  std::vector<unsigned char> mask_;  // empty: the whole image
  std::vector<std::unique_ptr<gl::Evaluator>> evaluators_;
  bool timer_meaningful_ = false;
  bool use_cuda_ = false;
  std::string prefilter_notice_;
  bool keep_float_ = true;
  std::size_t kept_bytes_ = 0;

  std::vector<ArrayF> current_;  // per method: the newest result (the next step's input)
  std::vector<std::vector<Kept>> kept_;
  std::vector<std::vector<double>> psnr_, rms_;
  std::vector<std::vector<double>> psnr_rotated_, rms_rotated_;
  std::vector<std::vector<StepTiming>> timing_;
  std::size_t units_done_ = 0;
};

}  // namespace sv::viewer
