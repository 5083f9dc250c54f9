// splinebench-cuda ffd: dense cubic B-spline FFD fields on the device (cuda_ffd.h), P4's
// experiment: its four volumes (512x228x385, 294x130x208, 303x167x212, 267x169x237 voxels as
// x*y*z, P4's order; our arrays are (z, y, x), so 512x228x385 is an array of (385, 228, 512)),
// cubic tiles 3^3..7^3, for each kernel (texture hardware, per-voxel, thread per tile in lerp
// and fma form):
//   ms           CUDA events around each launch on the default stream, after 2 warm-up rounds;
//                the kernels take turns repeat by repeat; the median of --repeats runs
//   Gvoxels/s    voxels / time
//   GFLOP/s      sv::cuda::ffd_kernel_flops_per_voxel (the arithmetic each kernel executes per
//                voxel, fma = 2; the texture unit's filtering not counted) x voxels / time
//   GB/s         output bytes written (12 per voxel) / time, against a write-only fill of the
//                same bytes measured in the same run (the floor of any kernel that writes it)
//   mean, max    absolute error against the double field: sv::ffd_field<double> on the CPU, the
//                tile-structured double evaluation, which equals ffd_field_reference to a few
//                double ulp (test_core Ffd*: within 6 ulp of max|c|), far below the float errors
//                measured here; the per-voxel reference would take minutes per volume.
// The control grid: uniform random displacements in [-A, A] voxels per component (A =
// --amplitude, 10 by default), a fresh grid per volume and tile (seeded). The texture kernel's
// refresh (the grid padded to float4 and copied into its CUDA array: paid again whenever the
// grid changes, as in every registration iteration) is timed as a row of its own.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "bench_cuda.h"
#include "splineview/cuda_device.h"
#include "splineview/cuda_ffd.h"
#include "splineview/cuda_memory.h"
#include "splineview/ffd.h"

namespace cbench {
namespace {

namespace cu = sv::cuda;
using cu::FfdKernel;

struct Volume {
  std::string name;  // P4's x*y*z
  std::size_t x, y, z;
};

}  // namespace

Json run_ffd(const FfdOptions& opt) {
  std::vector<Volume> volumes = {{"512x228x385", 512, 228, 385},
                                 {"294x130x208", 294, 130, 208},
                                 {"303x167x212", 303, 167, 212},
                                 {"267x169x237", 267, 169, 237}};
  std::vector<int> tiles = opt.tiles;
  if (opt.quick) {
    volumes = {{"96x64x80", 96, 64, 80}};
    if (tiles.empty()) tiles = {5};
  }
  if (tiles.empty()) tiles = {3, 4, 5, 6, 7};
  if (!opt.only.empty()) {
    std::vector<Volume> kept;
    for (const Volume& v : volumes)
      if (v.name.rfind(opt.only, 0) == 0) kept.push_back(v);
    if (kept.empty()) throw sv::Error("--only '" + opt.only + "' matches no volume");
    volumes = kept;
  }
  const int repeats = std::max(1, opt.quick ? std::min(opt.repeats, 5) : opt.repeats);

  const auto devices = sv::cuda_devices();
  const std::string device = devices.empty() ? "?" : devices[0].name;
  Json report;
  report["subcommand"] = "ffd";
  report["device"] = device;
  report["repeats"] = repeats;
  report["amplitude_voxels"] = opt.amplitude;
  report["axis_order"] = "volume names are P4's x*y*z; arrays are (z, y, x), x fastest";
  report["reference"] =
      "sv::ffd_field<double> (tile-structured, equals ffd_field_reference to a few double ulp)";
  report["flops_per_voxel"] =
      "sv::cuda::ffd_kernel_flops_per_voxel: executed arithmetic per voxel, fma = 2; texture "
      "filtering not counted";
  report["published_p4"] = {
      {"gpu", "GTX 1050 / RTX 2070"},
      {"mae_1e6", {{"texture", 9245}, {"niftyreg_tv", 5.3}, {"tt", 5.6}, {"ttli", 2.8}}},
      {"ttli_speedup_over_niftyreg", 6.5},
      {"ttli_speedup_over_niftyreg_max", 7.0},
      {"ttli_over_tt", "1.77x GTX 1050, 1.5x RTX 2070"},
      {"ttli_gflops_gtx1050_tile5", 670}};
  report["cases"] = Json::array();

  std::printf(
      "CUDA FFD field evaluation on %s: displacements uniform in [-%g, %g] voxels; median of %d "
      "runs; errors against the double field\n\n",
      device.c_str(), opt.amplitude, opt.amplitude, repeats);
  std::printf(
      "| volume (x*y*z) | tile | kernel | ms | Gvoxels/s | GFLOP/s | GB/s written | x per-voxel | "
      "mean abs err | max abs err |\n|---|---|---|---|---|---|---|---|---|---|\n");

  std::uint64_t seed = opt.seed;
  for (const Volume& v : volumes) {
    for (int t : tiles) {
      std::fprintf(stderr, "ffd %s tile %d^3\n", v.name.c_str(), t);
      const std::vector<std::size_t> shape = {v.z, v.y, v.x};
      const std::vector<int> delta = {t, t, t};
      sv::ArrayF grid(sv::ffd_grid_shape(shape, delta), 3);
      std::mt19937_64 rng(seed++);
      std::uniform_real_distribution<float> u(static_cast<float>(-opt.amplitude),
                                              static_cast<float>(opt.amplitude));
      for (std::size_t i = 0; i < grid.size(); ++i) grid[i] = u(rng);

      const std::size_t voxels = v.x * v.y * v.z;
      const std::size_t n = voxels * 3;
      const double out_bytes = static_cast<double>(n) * 4;
      cu::DeviceBuffer points(grid.size()), out(n);
      points.upload(grid.data(), grid.size());
      cu::FfdGrid g{points.data(), grid.dims(), delta, shape};
      cu::FfdEvaluator evaluator(g);

      // Timing: warm-up, then the kernels (and the floors) take turns.
      cu::EventTimer timer;
      const std::size_t K = std::size(cu::kFfdKernels);
      std::vector<std::vector<double>> times(K);
      std::vector<double> fill_ms, refresh_ms;
      for (int w = 0; w < 2; ++w) {
        evaluator.refresh_texture();
        for (FfdKernel k : cu::kFfdKernels) evaluator.run(k, out.data());
      }
      cu::synchronize("ffd warm-up");
      for (int r = 0; r < repeats; ++r) {
        timer.start();
        out.fill(0.0f);
        timer.stop();
        fill_ms.push_back(timer.ms());
        timer.start();
        evaluator.refresh_texture();
        timer.stop();
        refresh_ms.push_back(timer.ms());
        for (std::size_t i = 0; i < K; ++i) {
          timer.start();
          evaluator.run(cu::kFfdKernels[i], out.data());
          timer.stop();
          times[i].push_back(timer.ms());
        }
      }

      // Accuracy: each kernel once more into a poisoned buffer, against the double field.
      sv::Array<double> grid_d(grid.dims(), 3);
      for (std::size_t i = 0; i < grid.size(); ++i) grid_d[i] = grid[i];
      const sv::Array<double> ref = sv::ffd_field<double>(grid_d, delta, shape);
      std::vector<float> host(n);
      const double fill = median(fill_ms);
      const double per_voxel_ms = median(times[1]);  // kFfdKernels[1] is PerVoxel
      Json jc;
      jc["volume"] = v.name;
      jc["array_dims_zyx"] = shape;
      jc["tile"] = t;
      jc["voxels"] = voxels;
      jc["output_bytes"] = out_bytes;
      jc["write_fill_ms"] = fill;
      jc["texture_refresh_ms"] = median(refresh_ms);
      jc["kernels"] = Json::array();
      std::printf(
          "| %s | %d^3 | write-only fill of the output (%.0f MB) | %.4f | | | %.0f | | | |\n",
          v.name.c_str(), t, out_bytes / 1e6, fill, out_bytes / fill / 1e6);
      std::printf("| | | texture refresh (grid to its CUDA array) | %.4f | | | | | | |\n",
                  median(refresh_ms));
      for (std::size_t i = 0; i < K; ++i) {
        const FfdKernel k = cu::kFfdKernels[i];
        out.fill(std::nanf(""));
        evaluator.run(k, out.data());
        cu::synchronize("ffd accuracy run");
        out.download(host.data(), n);
        double max_err = 0, sum_err = 0;
        std::size_t nan = 0;
        for (std::size_t j = 0; j < n; ++j) {
          const double d = std::fabs(static_cast<double>(host[j]) - ref[j]);
          if (std::isnan(d)) {
            ++nan;
            continue;
          }
          max_err = std::max(max_err, d);
          sum_err += d;
        }
        const double ms = median(times[i]);
        const double flops = cu::ffd_kernel_flops_per_voxel(k, delta);
        Json jk;
        jk["kernel"] = cu::ffd_kernel_name(k);
        jk["ms"] = ms;
        jk["ms_all"] = times[i];
        jk["gvoxels_per_s"] = static_cast<double>(voxels) / ms / 1e6;
        jk["flops_per_voxel"] = flops;
        jk["gflops"] = flops * static_cast<double>(voxels) / ms / 1e6;
        jk["gbs_written"] = out_bytes / ms / 1e6;
        jk["speedup_over_per_voxel"] = per_voxel_ms / ms;
        jk["vs_write_fill"] = ms / fill;
        jk["mean_abs_err"] = sum_err / static_cast<double>(n);
        jk["max_abs_err"] = max_err;
        jk["unwritten_values"] = nan;
        jc["kernels"].push_back(jk);
        std::printf("| | | %s | %.4f | %.2f | %.0f | %.0f | %.2f | %.3g | %.3g |%s\n",
                    cu::ffd_kernel_name(k), ms, static_cast<double>(voxels) / ms / 1e6,
                    flops * static_cast<double>(voxels) / ms / 1e6, out_bytes / ms / 1e6,
                    per_voxel_ms / ms, sum_err / static_cast<double>(n), max_err,
                    nan ? " UNWRITTEN VALUES" : "");
        if (nan) jc["error"] = "a kernel left values unwritten";
      }
      report["cases"].push_back(jc);
      std::fflush(stdout);
    }
  }

  std::printf(
      "\nFlops per voxel (executed, fma = 2; tile kernels at delta_x = 5): texture %.0f, "
      "per-voxel %.0f, tile-lerp %.0f, tile-fma %.0f.\n",
      cu::ffd_kernel_flops_per_voxel(FfdKernel::Texture, {5, 5, 5}),
      cu::ffd_kernel_flops_per_voxel(FfdKernel::PerVoxel, {5, 5, 5}),
      cu::ffd_kernel_flops_per_voxel(FfdKernel::ThreadPerTileLerp, {5, 5, 5}),
      cu::ffd_kernel_flops_per_voxel(FfdKernel::ThreadPerTileFma, {5, 5, 5}));
  std::printf(
      "P4's published figures (GTX 1050 / RTX 2070, its own grids): mean abs error 9245e-6 "
      "texture hardware, 5.3e-6 NiftyReg (TV), 5.6e-6 TT, 2.8e-6 TTLI; TTLI 6.5x (up to 7x) "
      "faster than NiftyReg's GPU kernel, 1.5-1.77x over TT; 670 GFLOP/s (GTX 1050, 5^3).\n");
  return report;
}

}  // namespace cbench
