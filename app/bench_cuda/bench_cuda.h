// Shared declarations of splinebench-cuda: one function per subcommand, each returning its JSON
// report and printing a short Markdown table on stdout (progress on stderr).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cbench {

using Json = nlohmann::json;

// The median of timings (the mean of the middle two for an even count).
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// One number through a printf format ("%.3f").
inline std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// The median wall-clock milliseconds of `repeats` calls of f (host work, or device work that f
// waits for).
inline double wall_ms(const std::function<void()>& f, int repeats) {
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(t);
}

struct PrefilterOptions {
  bool quick = false;  // small sizes, few repeats
  std::string only;    // run only the case whose name starts with this (e.g. "256^3")
  int repeats = 20;    // timed runs per case (median reported)
  std::uint64_t seed = 1;
};

struct ReconstructOptions {
  bool quick = false;
  int repeats = 20;
  std::size_t positions = std::size_t{1} << 24;  // random positions per run
  std::uint64_t seed = 1;
};

struct UpscaleOptions {
  bool quick = false;  // one small frame, few repeats
  int repeats = 50;    // timed runs per step (median reported)
  std::uint64_t seed = 1;
};

struct OutOfCoreOptions {
  double gib = 4;              // host volume size (512 x 512 float slices)
  std::size_t budget_mib = 0;  // device budget (0: 80% of free memory)
  bool pinned = false;         // page-lock the volume first (timed apart), no staging copies
  double zoom = 0;             // > 0: out-of-core resampling, zoom along the slowest axis
  double rotate = 0;           // != 0: out-of-core rotation by this many degrees in `axes`
  std::string axes = "1,2";    // the plane of --rotate
};

struct FfdOptions {
  bool quick = false;      // one small volume, tile 5^3, few repeats
  std::string only;        // only the volume whose name (P4's x*y*z) starts with this
  std::vector<int> tiles;  // cubic tile sizes (empty: 3..7)
  int repeats = 20;        // timed runs per kernel (median reported)
  double amplitude = 10;   // control-point displacements uniform in [-amplitude, amplitude]
  std::uint64_t seed = 1;
};

struct RegistrationOptions {
  bool quick = false;   // the head only, few repeats and iterations
  std::string only;     // only the volume whose name starts with this ("head", "294x130x208")
  int repeats = 10;     // timed objective evaluations per backend (median per stage)
  int iterations = 20;  // optimiser iterations of the end-to-end run (one level)
  int spacing = 5;      // control-point spacing (cubic tiles, P4's usual 5^3)
  bool cpu = true;      // time the CPU objective and registration too
  std::string asset_dir = "assets";  // where mri_t1_head.nrrd is
  std::uint64_t seed = 1;
};

struct BsplineOptions {
  bool quick = false;  // the smallest 2-D and 3-D sizes, few repeats
  std::string only;    // only the size whose name starts with this (e.g. "400x300")
  int repeats = 20;    // timed GPU runs per operation (median reported)
  bool cpu = true;     // time our CPU too (every core)
  std::uint64_t seed = 1;
};

struct GrbfBenchOptions {
  bool quick = false;                // the 60x60 image only, few repeats
  int repeats = 10;                  // timed runs per task (median reported)
  std::string asset_dir = "assets";  // where ascent.png and mri_t1_head.nrrd are
  std::uint64_t seed = 1;
};

struct PyramidBenchOptions {
  bool quick = false;  // small 2-D and 3-D sizes, few repeats
  int repeats = 20;    // timed GPU runs per operation (median reported)
  bool cpu = true;     // time our CPU too (every core)
  std::uint64_t seed = 1;
  std::string only;  // one size by its name (e.g. 400x300x151); empty: every size
  std::string op;    // only the operations whose name contains this (the copy always runs)
};

Json run_bspline(const BsplineOptions& opt);
Json run_pyramid(const PyramidBenchOptions& opt);
Json run_grbf(const GrbfBenchOptions& opt);
Json run_ffd(const FfdOptions& opt);
Json run_registration(const RegistrationOptions& opt);
Json run_prefilter(const PrefilterOptions& opt);
Json run_out_of_core(const OutOfCoreOptions& opt);
Json run_reconstruct(const ReconstructOptions& opt);
Json run_upscale(const UpscaleOptions& opt);

}  // namespace cbench
