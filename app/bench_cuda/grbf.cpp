// splinebench-cuda grbf: GRBF interpolation (issue 18) at the sizes of "GRBF interpolation of
// 2-D and 3-D medical images with CUDA" (Chen et al.): a real 60x60 image (a crop of the bundled
// ascent.png) zoomed by 0.5, 2, 4 and 8; the same image at 120x120 and 512x512 zoomed by 2; a
// 512x512x192 volume upsampled axially by 2 and 3 (the paper's confocal stack's size; smooth
// random data, since the stack is not available) and the bundled MRI head axially by 2 and 3. sigma
// 1, float on the GPU (as the paper), double on the CPU (every core). Beside GRBF, the GPU's cubic
// and quintic B-spline zoom of the same samples at the same positions (prefilter + evaluation,
// float, mirror), per output sample: the cost comparison of issue 18.
//
// Times split as the paper's: the solve (CPU: sv::grbf_solve's Cholesky solves; GPU: the banded
// inverse products on the device, the host inverses cached) and the resampling (the tensor-grid
// evaluation); the GPU total is the whole grbf_interpolate_grid call with its transfers, the
// first call (inverses computed) reported apart. The published scheme (sv::grbf_blocked_solve:
// dense explicit inverses of the 60x60 blocks, on the CPU) is timed on the 60x60 and 120x120
// images. Accuracy: the GPU's float result against the CPU's double one (max and mean squared
// difference, relative to the data's range).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bench_cuda.h"
#include "splineview/cuda_device.h"
#include "splineview/cuda_grbf.h"
#include "splineview/cuda_memory.h"
#include "splineview/cuda_ndimage.h"
#include "splineview/grbf.h"
#include "splineview/io.h"

namespace cbench {
namespace {

namespace cu = sv::cuda;

// Output positions of scipy's zoom (grid_mode False) by factor z on an axis of n samples.
std::vector<double> zoom_axis(std::size_t n, double z) {
  const std::size_t m =
      std::max<std::size_t>(1, static_cast<std::size_t>(std::lround(static_cast<double>(n) * z)));
  std::vector<double> p(m);
  for (std::size_t o = 0; o < m; ++o)
    p[o] = m == 1
               ? 0.0
               : static_cast<double>(o) * static_cast<double>(n - 1) / static_cast<double>(m - 1);
  return p;
}

struct Task {
  std::string name;
  sv::ArrayD data;  // in [0, 1]
  std::vector<double> zoom;
  bool blocked = false;  // time the published 60x60-block scheme too
};

sv::ArrayD crop(const sv::ArrayD& img, std::size_t y0, std::size_t x0, std::size_t h,
                std::size_t w) {
  sv::ArrayD c({h, w});
  for (std::size_t y = 0; y < h; ++y)
    for (std::size_t x = 0; x < w; ++x) c.at2(y, x) = img.at2(y0 + y, x0 + x);
  return c;
}

sv::ArrayD unit(sv::ArrayD a) {
  double lo = a[0], hi = a[0];
  for (std::size_t i = 0; i < a.size(); ++i) {
    lo = std::min(lo, a[i]);
    hi = std::max(hi, a[i]);
  }
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = hi > lo ? (a[i] - lo) / (hi - lo) : 0.0;
  return a;
}

// Smooth random volume: noise through three box blurs per axis.
sv::ArrayD smooth_volume(const std::vector<std::size_t>& dims, std::uint64_t seed) {
  sv::ArrayD a(dims);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = u(rng);
  for (std::size_t axis = 0; axis < 3; ++axis) {
    std::size_t outer = 1, inner = 1;
    for (std::size_t d = 0; d < axis; ++d) outer *= dims[d];
    for (std::size_t d = axis + 1; d < 3; ++d) inner *= dims[d];
    const std::size_t n = dims[axis];
    std::vector<double> line(n);
    for (std::size_t o = 0; o < outer; ++o)
      for (std::size_t i = 0; i < inner; ++i) {
        double* base = a.data() + o * n * inner + i;
        for (int pass = 0; pass < 2; ++pass) {
          for (std::size_t k = 0; k < n; ++k) line[k] = base[k * inner];
          for (std::size_t k = 0; k < n; ++k) {
            const double l = line[k == 0 ? 0 : k - 1], r = line[k + 1 == n ? k : k + 1];
            base[k * inner] = (l + line[k] + r) / 3;
          }
        }
      }
  }
  return unit(std::move(a));
}

// The cubic or quintic B-spline zoom of the same samples at the same positions on the GPU, in
// float (sv::cuda::nd: the prefilter in place, mirror, then the evaluation at the per-axis
// tables): device milliseconds (CUDA events), median of `reps`.
double spline_ms(const sv::ArrayF& f, const std::vector<std::vector<double>>& pos, int degree,
                 int reps) {
  const std::size_t n = f.size();
  std::size_t m = 1;
  for (const auto& p : pos) m *= p.size();
  cu::DeviceBuffer src(n), coef(n), out(m);
  src.upload(f.data(), n);
  std::vector<double> t;
  for (int r = 0; r < reps + 1; ++r) {
    coef.copy_from(src);
    cu::EventTimer timer;
    timer.start();
    cu::nd::spline_filter(coef.data(), f.dims(), degree, sv::Boundary::Mirror, 0);
    cu::nd::Spline s;
    s.coefficients = coef.data();
    s.dims = f.dims();
    s.degree = degree;
    s.mode = sv::Boundary::Mirror;
    cu::nd::sample_tables<float>(s, pos, out.data(), 0);
    timer.stop();
    if (r > 0) t.push_back(timer.ms());  // the first run warms up
  }
  return median(t);
}

}  // namespace

Json run_grbf(const GrbfBenchOptions& opt) {
  const auto devices = sv::cuda_devices();
  const std::string gpu = devices.empty() ? "none" : devices[0].name;
  std::fprintf(stderr, "grbf: GPU %s\n", gpu.c_str());
  const int reps = opt.quick ? 2 : opt.repeats;

  std::vector<Task> tasks;
  const sv::Loaded ascent = sv::load_image(opt.asset_dir + "/ascent.png");
  sv::ArrayD grey({ascent.array.dim(0), ascent.array.dim(1)});
  for (std::size_t y = 0; y < grey.dim(0); ++y)
    for (std::size_t x = 0; x < grey.dim(1); ++x) {
      double s = 0;
      for (std::size_t c = 0; c < ascent.array.channels(); ++c) s += ascent.array.at2(y, x, c);
      grey.at2(y, x) = s / static_cast<double>(ascent.array.channels());
    }
  grey = unit(std::move(grey));
  const sv::ArrayD small = crop(grey, 200, 200, 60, 60);
  for (double z : {0.5, 2.0, 4.0, 8.0})
    tasks.push_back({"ascent 60x60, zoom " + fmt("%g", z), small, {z, z}, z == 2.0});
  if (!opt.quick) {
    tasks.push_back({"ascent 120x120, zoom 2", crop(grey, 170, 170, 120, 120), {2, 2}, true});
    tasks.push_back({"ascent 512x512, zoom 2", grey, {2, 2}, false});
    const sv::ArrayD vol = smooth_volume({192, 512, 512}, opt.seed);
    tasks.push_back({"512x512x192, axial x2", vol, {2, 1, 1}, false});
    tasks.push_back({"512x512x192, axial x3", vol, {3, 1, 1}, false});
    sv::Loaded mri = sv::load_nrrd(opt.asset_dir + "/mri_t1_head.nrrd");
    const sv::ArrayD head = unit(std::move(mri.array));
    for (double z : {2.0, 3.0})
      tasks.push_back(
          {"MRI head " + sv::describe_shape(head.dims(), 1) + ", axial x" + fmt("%g", z),
           head,
           {z, 1, 1},
           false});
  }

  Json rows = Json::array();
  std::printf(
      "GPU: %s; sigma 1; GPU float, CPU double on every core; medians of %d runs\n\n"
      "| task | output | CPU solve ms | CPU resample ms | GPU solve ms | GPU resample ms | GPU "
      "transfers ms | GPU total ms (first call) | CPU total / GPU total | resample CPU / GPU | "
      "blocked 60x60 CPU "
      "ms | GPU vs CPU max / range | GPU vs CPU MSE | GPU ns per output: GRBF (solve + resample) / "
      "cubic / quintic B-spline (prefilter + zoom) "
      "|\n|---|---|---|---|---|---|---|---|---|---|---|"
      "---|---|---|\n",
      gpu.c_str(), reps);
  for (const Task& t : tasks) {
    std::fprintf(stderr, "grbf: %s\n", t.name.c_str());
    std::vector<std::vector<double>> pos;
    for (std::size_t d = 0; d < t.data.rank(); ++d)
      pos.push_back(zoom_axis(t.data.dim(d), t.zoom[d]));
    sv::GrbfOptions go;
    go.sigma = {1.0};
    // CPU, double.
    sv::GrbfWeights<double> w;
    sv::ArrayD cpu_out;
    const double cpu_solve = wall_ms([&] { w = sv::grbf_solve(t.data, go); }, reps);
    const double cpu_grid = wall_ms([&] { cpu_out = sv::grbf_grid(w, pos); }, reps);
    // GPU, float.
    const sv::ArrayF f = sv::ArrayF::from(t.data);
    cu::GrbfTiming first;
    sv::ArrayF gpu_out = cu::grbf_interpolate_grid(f, go, pos, &first);
    std::vector<double> solve, eval, total, xfer;
    for (int r = 0; r < reps; ++r) {
      cu::GrbfTiming tm;
      const auto t0 = std::chrono::steady_clock::now();
      gpu_out = cu::grbf_interpolate_grid(f, go, pos, &tm);
      total.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      solve.push_back(tm.solve_ms);
      eval.push_back(tm.evaluate_ms);
      xfer.push_back(tm.upload_ms + tm.download_ms);
    }
    const double first_ms =
        first.inverse_ms + first.upload_ms + first.solve_ms + first.evaluate_ms + first.download_ms;
    double blocked_ms = -1;
    if (t.blocked) {
      sv::GrbfBlockOptions bo;
      bo.sigma = {1.0};
      bo.block = {60};
      bo.overlap = t.data.dim(0) > 60 ? 1 : 0;
      blocked_ms = wall_ms(
          [&] {
            const auto b = sv::grbf_blocked_solve(t.data, bo);
            std::vector<double> p;
            for (double y : pos[0])
              for (double x : pos[1]) {
                p.push_back(y);
                p.push_back(x);
              }
            std::vector<double> o(p.size() / 2);
            sv::grbf_blocked_sample(b, p.data(), o.size(), o.data());
          },
          1);
    }
    double maxd = 0, mse = 0;
    for (std::size_t i = 0; i < cpu_out.size(); ++i) {
      const double d = static_cast<double>(gpu_out[i]) - cpu_out[i];
      maxd = std::max(maxd, std::fabs(d));
      mse += d * d;
    }
    mse /= static_cast<double>(cpu_out.size());
    const double gpu_total = median(total);
    const double outputs = static_cast<double>(cpu_out.size());
    const double grbf_ns = (median(solve) + median(eval)) * 1e6 / outputs;
    const double cubic_ns = spline_ms(f, pos, 3, reps) * 1e6 / outputs;
    const double quintic_ns = spline_ms(f, pos, 5, reps) * 1e6 / outputs;
    const std::string out = sv::describe_shape(cpu_out.dims(), 1);
    std::printf(
        "| %s | %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f (%.1f) | %.1fx | %.1fx | %s | %.2g | "
        "%.2g | %.3g / %.3g / %.3g |\n",
        t.name.c_str(), out.c_str(), cpu_solve, cpu_grid, median(solve), median(eval), median(xfer),
        gpu_total, first_ms, (cpu_solve + cpu_grid) / gpu_total, cpu_grid / median(eval),
        blocked_ms < 0 ? "-" : fmt("%.1f", blocked_ms).c_str(), maxd, mse, grbf_ns, cubic_ns,
        quintic_ns);
    std::fflush(stdout);
    rows.push_back({{"task", t.name},
                    {"output", out},
                    {"cpu_solve_ms", cpu_solve},
                    {"cpu_resample_ms", cpu_grid},
                    {"gpu_solve_ms", median(solve)},
                    {"gpu_resample_ms", median(eval)},
                    {"gpu_transfer_ms", median(xfer)},
                    {"gpu_total_ms", gpu_total},
                    {"gpu_first_call_ms", first_ms},
                    {"gpu_first_inverse_ms", first.inverse_ms},
                    {"blocked_cpu_ms", blocked_ms},
                    {"max_diff", maxd},
                    {"mse", mse},
                    {"grbf_ns_per_output", grbf_ns},
                    {"cubic_ns_per_output", cubic_ns},
                    {"quintic_ns_per_output", quintic_ns}});
  }
  return Json{{"gpu", gpu}, {"repeats", reps}, {"rows", rows}};
}

}  // namespace cbench
