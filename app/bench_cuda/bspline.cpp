// splinebench-cuda bspline: issue 17's B-spline signal processing on the GPU at the sizes of
// "Scalable GPU acceleration of b-spline signal processing operations" (Karantza; 2-D 1908x467 ..
// 15257x3736, 3-D 51x39x20 .. 400x300x151): the direct transform (lambda 0 and lambda > 0 with
// real and with complex poles), the indirect transform, the Laplacian and a first derivative
// from coefficients, interpolation at random positions (one per sample) and the thesis's
// "practical" pipeline (direct filter, Laplacian in the coefficient domain, indirect filter:
// sv::cuda::direct_transform then sv::cuda::laplacian_filter on the coefficients, which includes
// the indirect transform of the lower degree). Cubic, float, mirror. Against the bandwidth floor
// of the same run (a device-to-device copy of the array: the least any of these can move is one
// read and one write of it) and our CPU on every core (sv::direct_transform etc., float). GPU
// times from CUDA events on device arrays (no host transfers), medians; operations that work in
// place start from restored samples (untimed copy). The thesis's Tables 5.1 and 5.3 are printed
// beside ours. cupyx is timed by tools/bspline_peers.py.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench_cuda.h"
#include "splineview/cuda_bspline.h"
#include "splineview/cuda_device.h"
#include "splineview/cuda_ndimage.h"
#include "splineview/derivative.h"
#include "splineview/smoothing.h"

namespace cbench {
namespace {

namespace cu = sv::cuda;

struct Case {
  std::string name;
  std::vector<std::size_t> dims;  // array order
  // The thesis's GPU (Tesla C2070) seconds: direct, indirect, Laplacian, interpolation,
  // practical (Table 5.1 for 2-D, 5.3 for 3-D); negative where it has none.
  double thesis[5];
};

}  // namespace

Json run_bspline(const BsplineOptions& opt) {
  std::vector<Case> cases = {
      {"1908x467", {467, 1908}, {0.0349435, 0.00433462, 0.00214226, 0.0179, 0.0668724}},
      {"3815x934", {934, 3815}, {0.168642, 0.0124669, 0.00405299, 0.0742955, 0.275525}},
      {"7629x1868", {1868, 7629}, {0.703172, 0.0450161, 0.0117717, 0.262864, 1.01457}},
      {"15257x3736", {3736, 15257}, {2.97078, 0.13825, 0.0433254, -1, 4.21061}},
      {"51x39x20", {20, 39, 51}, {0.00233725, 0.00653725, 0.000595558, 0.00162156, 0.0110168}},
      {"101x76x39", {39, 76, 101}, {0.0136622, 0.00217969, 0.00250267, 0.021428, 0.0360151}},
      {"201x151x76", {76, 151, 201}, {0.108884, 0.00979878, 0.00503281, 0.163852, 0.214102}},
      {"400x300x151", {151, 300, 400}, {0.989294, 0.0603285, 0.0227507, 1.6498, 1.67243}},
  };
  if (opt.quick) cases = {cases[0], cases[4]};
  const int repeats = std::max(1, opt.quick ? std::min(opt.repeats, 3) : opt.repeats);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  const double lambda_real = 0.005, lambda_complex = 0.5;  // cubic: double root at 1/144

  const auto devices = sv::cuda_devices();
  const std::string gpu = devices.empty() ? "?" : devices[0].name;
  Json report;
  report["subcommand"] = "bspline";
  report["device"] = gpu;
  report["cpu_threads"] = threads;
  report["degree"] = 3;
  report["boundary"] = "mirror";
  report["repeats"] = repeats;
  report["lambda_real_poles"] = lambda_real;
  report["lambda_complex_poles"] = lambda_complex;
  report["direct_lambda_real_tiled"] = cu::direct_transform_tiled<float>(3, lambda_real);
  report["direct_lambda_complex_tiled"] = cu::direct_transform_tiled<float>(3, lambda_complex);
  report["cases"] = Json::array();

  std::printf(
      "B-spline signal processing on %s, cubic, mirror, float32; GPU ms (median of %d, CUDA "
      "events, device arrays), fraction of one device-to-device copy of the array (the floor: one "
      "read and one write), CPU ms on %u threads, the thesis's Tesla C2070 ms (Tables 5.1, "
      "5.3)\n\n",
      gpu.c_str(), repeats, threads);
  std::printf(
      "| size | copy ms | operation | GPU ms | of copy | CPU ms | thesis GPU ms |\n"
      "|---|---|---|---|---|---|---|\n");

  for (const Case& c : cases) {
    if (!opt.only.empty() && c.name.rfind(opt.only, 0) != 0) continue;
    std::fprintf(stderr, "bspline %s\n", c.name.c_str());
    const cu::Layout layout{c.dims, 1};
    const std::size_t n = layout.size();
    const double bytes = static_cast<double>(n) * sizeof(float);
    std::mt19937 rng(static_cast<std::uint32_t>(opt.seed));
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    sv::ArrayF samples(c.dims, 1);
    for (std::size_t i = 0; i < n; ++i) samples.data()[i] = u(rng);
    // Positions: one per sample, uniform inside the array, scipy's (d, m) layout.
    const std::size_t rank = c.dims.size();
    std::vector<float> pos(rank * n);
    for (std::size_t d = 0; d < rank; ++d) {
      std::uniform_real_distribution<float> p(0.0f, static_cast<float>(c.dims[d] - 1));
      for (std::size_t i = 0; i < n; ++i) pos[d * n + i] = p(rng);
    }
    cu::DeviceBuffer orig(n), data(n), out(n), coef(n), positions(rank * n);
    orig.upload(samples.data(), n);
    positions.upload(pos.data(), pos.size());

    sv::SplineTransformOptions t0;
    t0.degree = 3;
    t0.boundary = sv::Boundary::Mirror;
    sv::SplineTransformOptions treal = t0, tcomplex = t0;
    treal.lambda = lambda_real;
    tcomplex.lambda = lambda_complex;
    sv::DerivativeOptions dco;
    dco.degree = 3;
    dco.boundary = sv::Boundary::Mirror;
    dco.input_is_coefficients = true;
    coef.copy_from(orig);
    cu::direct_transform<float>(coef.data(), layout, t0);
    cu::nd::Spline spline;
    spline.coefficients = coef.data();
    spline.dims = c.dims;
    spline.degree = 3;
    spline.mode = sv::Boundary::Mirror;
    std::vector<int> d1(rank, 0);
    d1[rank - 1] = 1;

    struct Op {
      std::string name;
      bool restore;  // works in place on `data`: restore the samples first (untimed)
      std::function<void()> run;
      double thesis;
      std::vector<double> t;
    };
    std::vector<Op> ops = {
        {"copy (floor)", false, [&] { cu::copy_device(out.data(), orig.data(), n); }, -1, {}},
        {"direct lambda 0",
         true,
         [&] { cu::direct_transform<float>(data.data(), layout, t0); },
         c.thesis[0],
         {}},
        {"direct lambda 0.005 (real poles)",
         true,
         [&] { cu::direct_transform<float>(data.data(), layout, treal); },
         -1,
         {}},
        {"direct lambda 0.5 (complex pair)",
         true,
         [&] { cu::direct_transform<float>(data.data(), layout, tcomplex); },
         -1,
         {}},
        {"indirect",
         false,
         [&] { cu::indirect_transform<float>(coef.data(), out.data(), layout, t0); },
         c.thesis[1],
         {}},
        {"Laplacian (coefficients to samples)",
         false,
         [&] { cu::laplacian_filter<float>(coef.data(), out.data(), layout, dco); },
         c.thesis[2],
         {}},
        {"d/dx (coefficients to samples)",
         false,
         [&] { cu::derivative_filter<float>(coef.data(), out.data(), layout, d1, dco); },
         -1,
         {}},
        {"interpolation, one random position per sample",
         false,
         [&] { cu::nd::map_coordinates<float, float>(spline, positions.data(), n, out.data(), 0); },
         c.thesis[3],
         {}},
        {"practical: direct, Laplacian, indirect",
         true,
         [&] {
           cu::direct_transform<float>(data.data(), layout, t0);
           cu::laplacian_filter<float>(data.data(), out.data(), layout, dco);
         },
         c.thesis[4],
         {}},
    };
    cu::EventTimer timer;
    for (Op& op : ops) {  // warm-up
      if (op.restore) data.copy_from(orig);
      op.run();
    }
    cu::synchronize("warm-up");
    for (int r = 0; r < repeats; ++r)
      for (Op& op : ops) {  // round robin: every repeat runs every operation
        if (op.restore) data.copy_from(orig);
        timer.start();
        op.run();
        timer.stop();
        op.t.push_back(timer.ms());
      }
    cu::synchronize("bspline");

    // Our CPU, every core, float (fewer repeats: seconds on the large sizes).
    const int cpu_repeats = opt.quick ? 1 : 3;
    sv::SplineTransformOptions c0 = t0;
    c0.threads = threads;
    sv::DerivativeOptions cdo = dco;
    cdo.threads = threads;
    sv::ArrayF cc = samples;
    sv::direct_transform(cc, c0);
    std::vector<double> cpu(ops.size(), -1);
    if (opt.cpu) {
      cpu[1] = wall_ms(
          [&] {
            sv::ArrayF a = samples;
            sv::direct_transform(a, c0);
          },
          cpu_repeats);
      cpu[4] = wall_ms(
          [&] {
            sv::ArrayF a = cc;
            sv::indirect_transform(a, c0);
          },
          cpu_repeats);
      cpu[5] = wall_ms([&] { sv::laplacian_filter(cc, cdo); }, cpu_repeats);
      cpu[6] = wall_ms([&] { sv::derivative_filter(cc, d1, cdo); }, cpu_repeats);
      cpu[8] = wall_ms(
          [&] {
            sv::ArrayF a = samples;
            sv::direct_transform(a, c0);
            sv::laplacian_filter(a, cdo);
          },
          cpu_repeats);
    }

    const double copy_ms = median(ops[0].t);
    Json jc;
    jc["name"] = c.name;
    jc["dims"] = c.dims;
    jc["bytes"] = bytes;
    jc["copy_ms"] = copy_ms;
    jc["copy_gbs"] = 2 * bytes / copy_ms / 1e6;
    jc["ops"] = Json::array();
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const double ms = median(ops[i].t);
      Json jo{{"name", ops[i].name},
              {"gpu_ms", ms},
              {"fraction_of_copy", copy_ms / ms},
              {"cpu_ms", cpu[i]},
              {"thesis_gpu_ms", ops[i].thesis > 0 ? 1000 * ops[i].thesis : -1.0}};
      jc["ops"].push_back(jo);
      if (i == 0) continue;
      std::printf("| %s | %s | %s | %.3f | %.0f%% | %s | %s |\n",
                  i == 1 ? (c.name + fmt(" (%.0f MB)", bytes / 1e6)).c_str() : "",
                  i == 1 ? fmt("%.3f", copy_ms).c_str() : "", ops[i].name.c_str(), ms,
                  100 * copy_ms / ms, cpu[i] >= 0 ? fmt("%.1f", cpu[i]).c_str() : "-",
                  ops[i].thesis > 0 ? fmt("%.2f", 1000 * ops[i].thesis).c_str() : "-");
    }
    report["cases"].push_back(jc);
    std::fflush(stdout);
  }
  return report;
}

}  // namespace cbench
