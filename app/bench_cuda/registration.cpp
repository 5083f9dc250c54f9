// splinebench-cuda registration: the FFD registration of issue 16 (SSD / N + w bending energy,
// exact gradient, L-BFGS, registration.h) with the objective on the GPU (cuda_registration.h)
// for each field kernel, and on the CPU (sv::FfdSsdObjective<float>, every core) in the same run.
//
// Volumes: the bundled MRI head (62 x 128 x 128), and P4's 294x130x208 and 512x228x385 (x*y*z;
// arrays (z, y, x)) as synthetic volumes: the first component of an FFD field of random control
// points at spacings 8 and 3 (a smooth random texture with detail), in [0, 1]. The fixed image
// is the moving image warped (sv::cuda::warp, tile-fma) by a known smooth field (random at twice
// the spacing, refined; up to 3 voxels), so the registration has a true answer to move toward.
//
// Two measurements per backend:
//   per evaluation  the objective with its gradient at one grid (the truth's half, a realistic
//                   mid-registration state), after 2 warm-up evaluations (CPU: 1, and at most
//                   3 runs); the median of --repeats runs per stage (field, warp, gradient,
//                   regulariser), the stages separated by device synchronisations (wall clock).
//   end to end      one level of --iterations L-BFGS iterations from the zero grid
//                   (tolerance 0): total seconds, setup (upload and prefilter, or the CPU
//                   prefilter) apart, ms per iteration (line-search evaluations included), and
//                   the SSD reduction reached, and the host's share per iteration (total -
//                   setup - the four stages: the optimiser's vector work, the grid checks, the
//                   transfers' waits). The end-to-end ratio per-voxel / tile-fma is the figure
//                   to hold against P4's registration speed-up (1.30x and 1.14x); the ratio of
//                   the per-evaluation totals is printed beside it.
// The CPU is timed end to end only on volumes of at most 1e7 voxels (one of its evaluations of
// the largest takes seconds).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench_cuda.h"
#include "splineview/cuda_device.h"
#include "splineview/cuda_registration.h"
#include "splineview/cuda_warp.h"
#include "splineview/ffd.h"
#include "splineview/io.h"
#include "splineview/registration.h"
#include "splineview/threads.h"

namespace cbench {
namespace {

namespace cu = sv::cuda;
using cu::FfdKernel;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Volume {
  std::string name;
  std::vector<std::size_t> shape;  // (z, y, x)
};

// A smooth random grid at `delta` (random at 2 delta, refined exactly, cut to size).
sv::ArrayD smooth_grid(const std::vector<std::size_t>& image, int delta, double amplitude,
                       std::mt19937_64& rng) {
  const std::vector<int> coarse(3, 2 * delta), fine_d(3, delta);
  std::vector<std::size_t> cshape = sv::ffd_grid_shape(image, coarse);
  for (std::size_t& m : cshape) ++m;
  sv::ArrayD c(cshape, 3);
  std::uniform_real_distribution<double> U(-amplitude, amplitude);
  for (double& v : c.vec()) v = U(rng);
  const sv::ArrayD fine = sv::ffd_refine(c, coarse);
  const std::vector<std::size_t> shape = sv::ffd_grid_shape(image, fine_d);
  sv::ArrayD g(shape, 3);
  for (std::size_t z = 0; z < shape[0]; ++z)
    for (std::size_t y = 0; y < shape[1]; ++y)
      for (std::size_t x = 0; x < shape[2]; ++x)
        for (std::size_t k = 0; k < 3; ++k)
          g[((z * shape[1] + y) * shape[2] + x) * 3 + k] =
              fine[((z * fine.dim(1) + y) * fine.dim(2) + x) * 3 + k];
  return g;
}

// A smooth random texture in [0, 1]: component 0 of FFD fields of random points at spacings 8
// and 3.
sv::ArrayF synthetic(const std::vector<std::size_t>& shape, std::mt19937_64& rng) {
  sv::ArrayF sum(shape);
  for (int d : {8, 3}) {
    const std::vector<int> delta(3, d);
    sv::ArrayF g(sv::ffd_grid_shape(shape, delta), 3);
    std::uniform_real_distribution<float> U(-1.0f, 1.0f);
    for (float& v : g.vec()) v = U(rng);
    const sv::ArrayF f = sv::ffd_field<float>(g, delta, shape);
    const float weight = d == 8 ? 1.0f : 0.5f;
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += weight * f[i * 3];
  }
  const auto [lo, hi] = std::minmax_element(sum.vec().begin(), sum.vec().end());
  const float l = *lo, s = 1.0f / (*hi - *lo);
  for (float& v : sum.vec()) v = (v - l) * s;
  return sum;
}

struct Backend {
  std::string name;
  bool cpu;
  FfdKernel kernel;
};

double ssd(const sv::ArrayF& a, const sv::ArrayF& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    s += d * d;
  }
  return s;
}

}  // namespace

Json run_registration(const RegistrationOptions& opt) {
  std::vector<Volume> volumes = {
      {"head 62x128x128", {}}, {"294x130x208", {208, 130, 294}}, {"512x228x385", {385, 228, 512}}};
  if (opt.quick) volumes.resize(1);
  if (!opt.only.empty()) {
    std::vector<Volume> kept;
    for (const Volume& v : volumes)
      if (v.name.rfind(opt.only, 0) == 0) kept.push_back(v);
    if (kept.empty()) throw sv::Error("--only '" + opt.only + "' matches no volume");
    volumes = kept;
  }
  const int repeats = std::max(1, opt.quick ? std::min(opt.repeats, 3) : opt.repeats);
  const int iterations = std::max(1, opt.quick ? std::min(opt.iterations, 5) : opt.iterations);
  const double weight = 1e-3;
  const auto devices = sv::cuda_devices();
  const std::string device = devices.empty() ? "?" : devices[0].name;
  const unsigned threads = sv::default_thread_count();

  std::vector<Backend> backends;
  if (opt.cpu) backends.push_back({"cpu (" + std::to_string(threads) + " threads)", true, {}});
  for (FfdKernel k : cu::kFfdKernels) backends.push_back({cu::ffd_kernel_name(k), false, k});

  Json report;
  report["subcommand"] = "registration";
  report["device"] = device;
  report["cpu_threads"] = threads;
  report["repeats"] = repeats;
  report["iterations"] = iterations;
  report["spacing"] = opt.spacing;
  report["bending_weight"] = weight;
  report["published_p4"] =
      "registration (NiftyReg f3d, thread-per-tile field kernel against NiftyReg's own GPU "
      "kernel) 1.30x and 1.14x faster end to end";
  report["cases"] = Json::array();

  std::vector<std::string> lines_eval, lines_e2e;
  std::mt19937_64 rng(opt.seed);
  for (Volume& v : volumes) {
    sv::ArrayF moving;
    if (v.name.rfind("head", 0) == 0) {
      sv::ArrayF h =
          sv::ArrayF::from(sv::load_any(opt.asset_dir + "/mri_t1_head.nrrd", false).array);
      for (float& x : h.vec()) x /= 255.0f;
      moving = std::move(h);
      v.shape = moving.dims();
    } else {
      moving = synthetic(v.shape, rng);
    }
    const std::vector<int> delta(3, opt.spacing);
    const sv::ArrayD truth = smooth_grid(v.shape, opt.spacing, 3.0, rng);
    cu::WarpConfig wc;
    const sv::ArrayF fixed = cu::warp(moving, sv::ArrayF::from(truth), delta, wc);
    sv::ArrayD half = truth;
    for (double& x : half.vec()) x *= 0.5;
    const double voxels = static_cast<double>(moving.points());
    const double before = ssd(fixed, moving);
    std::fprintf(stderr, "registration %s\n", v.name.c_str());

    double e2e_per_voxel = 0, e2e_tile_fma = 0, eval_per_voxel = 0, eval_tile_fma = 0;
    for (const Backend& b : backends) {
      Json jc;
      jc["volume"] = v.name;
      jc["backend"] = b.name;
      // Per evaluation.
      std::vector<double> tf, tw, tg, tr, tt;
      {
        const auto t0 = Clock::now();
        std::unique_ptr<sv::FfdObjective> obj;
        if (b.cpu)
          obj = std::make_unique<sv::FfdSsdObjective<float>>(fixed, moving, delta, weight);
        else
          obj = std::make_unique<cu::FfdSsdObjective>(fixed, moving, delta, weight,
                                                      sv::Boundary::Reflect, b.kernel);
        jc["objective_setup_s"] = seconds_since(t0);
        sv::ArrayD g;
        // The CPU: at most 3 timed runs after one warm-up (its evaluations take seconds on
        // the largest volume).
        const int reps = b.cpu ? std::max(1, std::min(repeats, 3)) : repeats;
        const int warm = b.cpu ? 1 : 2;
        for (int r = 0; r < reps + warm; ++r) {
          sv::FfdStageTimes t;
          const auto t1 = Clock::now();
          obj->evaluate(half, &g, nullptr, nullptr, &t);
          const double total = seconds_since(t1);
          if (r < warm) continue;
          tf.push_back(t.field);
          tw.push_back(t.warp);
          tg.push_back(t.gradient);
          tr.push_back(t.regulariser);
          tt.push_back(total);
        }
      }
      jc["eval_ms"] = {{"field", 1e3 * median(tf)},
                       {"warp", 1e3 * median(tw)},
                       {"gradient", 1e3 * median(tg)},
                       {"regulariser", 1e3 * median(tr)},
                       {"total", 1e3 * median(tt)}};
      char line[512];
      std::snprintf(line, sizeof line, "| %s | %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f |",
                    v.name.c_str(), b.name.c_str(), 1e3 * median(tf), 1e3 * median(tw),
                    1e3 * median(tg), 1e3 * median(tr), 1e3 * median(tt),
                    voxels / median(tt) / 1e9);
      lines_eval.emplace_back(line);
      if (!b.cpu && b.kernel == FfdKernel::PerVoxel) eval_per_voxel = median(tt);
      if (!b.cpu && b.kernel == FfdKernel::ThreadPerTileFma) eval_tile_fma = median(tt);
      std::printf("%s\n", line);
      std::fflush(stdout);

      // End to end, one level.
      const bool skip_cpu_e2e = b.cpu && voxels > 1.0e7;
      if (!skip_cpu_e2e) {
        sv::FfdRegistrationOptions ro;
        ro.spacing = delta;
        ro.levels = 1;
        ro.iterations = iterations;
        ro.tolerance = 0;
        ro.bending_weight = weight;
        const auto t0 = Clock::now();
        const sv::FfdRegistrationResult r = b.cpu ? sv::register_ffd<float>(fixed, moving, ro)
                                                  : cu::register_ffd(fixed, moving, ro, b.kernel);
        const double secs = seconds_since(t0);
        const sv::ArrayF warped = cu::warp(moving, sv::ArrayF::from(r.grid), delta, wc);
        const double after = ssd(fixed, warped);
        const int evals = r.levels.empty() ? 0 : r.levels[0].evaluations;
        const double per_it = (secs - r.time.setup) / std::max(1, r.iterations);
        const double stages = r.time.field + r.time.warp + r.time.gradient + r.time.regulariser;
        const double host_it = (secs - r.time.setup - stages) / std::max(1, r.iterations);
        if (!b.cpu && b.kernel == FfdKernel::PerVoxel) e2e_per_voxel = per_it;
        if (!b.cpu && b.kernel == FfdKernel::ThreadPerTileFma) e2e_tile_fma = per_it;
        jc["e2e"] = {{"seconds", secs},
                     {"setup_s", r.time.setup},
                     {"iterations", r.iterations},
                     {"evaluations", evals},
                     {"ms_per_iteration", 1e3 * per_it},
                     {"host_ms_per_iteration", 1e3 * host_it},
                     {"stage_s",
                      {{"field", r.time.field},
                       {"warp", r.time.warp},
                       {"gradient", r.time.gradient},
                       {"regulariser", r.time.regulariser}}},
                     {"ssd_reduction_percent", 100 * (1 - after / before)},
                     {"stop", r.levels.empty() ? "" : r.levels[0].stop}};
        std::snprintf(line, sizeof line,
                      "| %s | %s | %d | %d | %.3f | %.3f | %.2f | %.2f | %.3f | %.3f | %.3f | "
                      "%.3f | %.1f |",
                      v.name.c_str(), b.name.c_str(), r.iterations, evals, secs, r.time.setup,
                      1e3 * per_it, 1e3 * host_it, r.time.field, r.time.warp, r.time.gradient,
                      r.time.regulariser, 100 * (1 - after / before));
        lines_e2e.emplace_back(line);
        std::printf("%s\n", line);
        std::fflush(stdout);
      }
      report["cases"].push_back(jc);
    }
    if (e2e_per_voxel > 0 && e2e_tile_fma > 0) {
      const double ratio = e2e_per_voxel / e2e_tile_fma;
      report["per_voxel_over_tile_fma"][v.name] = ratio;
      char line[256];
      const double eval_ratio = eval_tile_fma > 0 ? eval_per_voxel / eval_tile_fma : 0.0;
      report["per_voxel_over_tile_fma_per_evaluation"][v.name] = eval_ratio;
      std::snprintf(line, sizeof line,
                    "%s: end to end per iteration, per-voxel / tile-fma = %.2fx (per evaluation "
                    "%.2fx; P4: 1.30x, 1.14x)",
                    v.name.c_str(), ratio, eval_ratio);
      lines_e2e.emplace_back(line);
    }
  }

  std::printf("\nFFD registration on %s (spacing %d^3, w %g), %d CPU threads\n\n", device.c_str(),
              opt.spacing, weight, threads);
  std::printf(
      "Per objective evaluation with gradient (median of %d; ms):\n\n"
      "| volume | backend | field | warp | gradient | regulariser | total | Gvoxel/s |\n"
      "|---|---|---|---|---|---|---|---|\n",
      repeats);
  for (const std::string& l : lines_eval) std::printf("%s\n", l.c_str());
  std::printf(
      "\nEnd to end, one level, %d L-BFGS iterations from zero (s; stage sums over the run):\n\n"
      "| volume | backend | iterations | evaluations | total s | setup s | ms/iteration | host "
      "ms/iteration | field | warp | gradient | regulariser | SSD less %% |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
      iterations);
  for (const std::string& l : lines_e2e) std::printf("%s\n", l.c_str());
  return report;
}

}  // namespace cbench
