// Shared pieces of splinebench, the GL accuracy and speed study: options every subcommand takes,
// the headless context, test data (random, the bundled photographs, Marschner-Lobb), position
// sets, error statistics against the CPU double reference, medians, and the JSON/Markdown
// output. Each subcommand lives in its own file and returns its JSON report.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "splineview/array.h"
#include "splineview/gl/evaluator.h"
#include "splineview/gl/headless.h"

namespace bench {

using Json = nlohmann::json;

// Options every subcommand takes.
struct Common {
  std::string out;     // JSON report file
  std::string assets;  // folder with ascent.png and coffee.png
  bool quick = false;  // small sizes and few repeats (for software renderers such as llvmpipe)
  std::uint64_t seed = 1;
};

struct AccuracyOptions {
  Common common;
  std::size_t positions = 0;  // per case; 0 = default (2^18, quick 2^14)
};
struct Table1Options {
  Common common;
  int repeats = 0;  // timed frames; 0 = default (200, quick 10)
};
struct ProbeOptions {
  Common common;
  int steps = 4096;  // positions between the two texel centres
};
struct RotationOptions {
  Common common;
  int steps = 36;
  double degrees = 10.0;
};
struct SpeedOptions {
  Common common;
  int repeats = 0;                   // timed frames after warm-up; 0 = default (50, quick 3)
  std::string only;                  // workloads whose name starts with this ("" = all)
  std::vector<std::string> formats;  // texture formats ("" = r32f and r16f)
  std::vector<std::string> fetches;  // flavours (empty = all)
  // Experiment: each entry is a value of SPLINEVIEW_GL_EXP (comma-separated switches of the
  // evaluator, "base" = none) under which every selected flavour is timed; the first entry's
  // results are the reference of the others' max_abs_vs_first.
  std::vector<std::string> exps;
};

Json run_accuracy(const AccuracyOptions& opt);
Json run_table1(const Table1Options& opt);
Json run_probe(const ProbeOptions& opt);
Json run_rotation(const RotationOptions& opt);
Json run_speed(const SpeedOptions& opt);

// ---- shared helpers (bench.cpp) ----

// The GL context of the run, created once; its description goes into every report.
sv::gl::HeadlessContext& context();
// {"renderer": ..., "platform": ...} plus the host's CPU count.
Json machine_json();

// Every report starts with these fields.
Json report_header(const char* subcommand, const Common& c);
// Writes the report (pretty JSON) to c.out, atomically (temporary file + rename).
void write_report(const Json& report, const Common& c);

// Test data, all in [0, 1].
sv::ArrayF random_array(std::vector<std::size_t> dims, std::size_t channels, std::uint64_t seed);
sv::ArrayF load_asset(const Common& c, const std::string& name);  // "ascent.png", "coffee.png"
// The Marschner-Lobb test signal (f_M = 6, alpha = 0.25) sampled at n^3 points over [-1, 1]^3
// (sample centres), values in [0, 1]: sv::marschner_lobb (splineview/synthetic.h).
sv::ArrayF marschner_lobb(std::size_t n);
// A smooth 2-D test image of any size: a few oriented sinusoids plus a radial chirp, in [0, 1].
sv::ArrayF smooth_image(std::size_t height, std::size_t width);

// The float coefficients of the cubic B-spline (sv::prefilter<float>).
sv::ArrayF cubic_coefficients(const sv::ArrayF& samples, sv::Boundary boundary);
// `a` with every value replaced by what a texel of the format holds (sv::gl::texel_value).
sv::ArrayF stored_as(const sv::ArrayF& a, sv::gl::TexFormat format);

// m random positions (rank components each) uniform in [lo, hi(axis)] per axis, where
// hi(axis) = dims[axis] - 1 + hi_offset, as float (what the GPU receives).
std::vector<float> random_positions(const std::vector<std::size_t>& dims, std::size_t m, double lo,
                                    double hi_offset, std::uint64_t seed);

// The CPU double reference: sv::sample (degree, boundary) of `coeffs` at float positions.
std::vector<double> reference(const sv::ArrayF& coeffs, const std::vector<float>& positions,
                              int degree, sv::Boundary boundary);
std::vector<double> reference(const sv::ArrayD& coeffs, const std::vector<float>& positions,
                              int degree, sv::Boundary boundary);

struct Stats {
  double max_abs = 0, rms = 0, sse = 0;
  std::size_t count = 0;
};
Stats error_stats(const std::vector<float>& got, const std::vector<double>& want);
Json stats_json(const Stats& s);

double median(std::vector<double> v);

// False on software renderers (Mesa llvmpipe/softpipe), whose GL_TIME_ELAPSED results are not
// the draw's time (measured: timestamps, or a fraction of the wall-clock time of a draw that
// waits for its result).
bool gl_timer_trusted();

// The time of one frame of render_grid: the GPU timer's median over the repeats, and the wall
// clock of the whole call divided by the repeats (every timed draw waits for its query, so this
// is the frame time plus a share of the readback). The timer is used unless it is untrusted
// (gl_timer_trusted) or implausible (its frames add up to more than the wall clock); then ms()
// is the wall-clock figure.
struct FrameTime {
  double gpu_ms = 0, wall_ms = 0;
  bool timer_ok = false;
  double ms() const { return timer_ok ? gpu_ms : wall_ms; }
  const char* source() const { return timer_ok ? "gl-timer" : "wall-clock"; }
};
FrameTime time_grid(sv::gl::Evaluator& ev, const sv::gl::SplineTexture& tex,
                    const sv::gl::GridMapping& grid, int repeats, sv::ArrayF* result = nullptr);
Json frame_time_json(const FrameTime& t);

// The degree of the CPU spline that a flavour reproduces, and whether it reads coefficients.
int fetch_degree(sv::gl::Fetch f);

// All flavours in the order the tables list them.
const std::vector<sv::gl::Fetch>& all_fetches();

// Markdown helpers: "| a | b |" rows.
std::string md_row(const std::vector<std::string>& cells);
std::string md_header(const std::vector<std::string>& cells);
std::string fmt(double v, const char* f = "%.3g");

}  // namespace bench
