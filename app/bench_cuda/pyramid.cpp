// splinebench-cuda pyramid: issue 17's B-spline pyramid on the GPU (cuda_pyramid.h) at the
// thesis's largest 2-D and 3-D sizes (15257x3736, 400x300x151): reduce2 from samples to the
// coarse coefficients, reduce2 with the coarse samples too, reduce by 0.71 (the non-dyadic FIR)
// and expand2 of the coarse coefficients. Cubic, reflect, float32, device arrays (no host
// transfers), CUDA events, medians; against the floor of the same run (a device-to-device copy of
// the fine array: reduce reads it once and writes a quarter or an eighth of it, expand reads the
// small one and writes it once) and our CPU on every core (sv::reduce2 etc., float, wall clock).
// The first call of each operation (wall clock, before the timed runs) also builds its plan on
// the host (the FIR tables; reduce's non-dyadic table takes a quadrature per output sample) and
// uploads it; later calls with the same shape and options reuse it.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench_cuda.h"
#include "splineview/cuda_device.h"
#include "splineview/cuda_memory.h"
#include "splineview/cuda_pyramid.h"
#include "splineview/pyramid.h"

namespace cbench {

Json run_pyramid(const PyramidBenchOptions& opt) {
  struct Case {
    std::string name;
    std::vector<std::size_t> dims;
  };
  std::vector<Case> cases = {{"15257x3736", {3736, 15257}}, {"400x300x151", {151, 300, 400}}};
  if (opt.quick) cases = {{"1908x467", {467, 1908}}, {"101x76x39", {39, 76, 101}}};
  if (!opt.only.empty()) {
    cases.erase(std::remove_if(cases.begin(), cases.end(),
                               [&](const Case& c) { return c.name != opt.only; }),
                cases.end());
    if (cases.empty()) throw std::runtime_error("pyramid --only: no size named " + opt.only);
  }
  namespace cu = sv::cuda;
  const int repeats = std::max(1, opt.quick ? std::min(opt.repeats, 3) : opt.repeats);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  const auto devices = sv::cuda_devices();
  const std::string gpu = devices.empty() ? "?" : devices[0].name;
  Json report;
  report["subcommand"] = "pyramid";
  report["device"] = gpu;
  report["cpu_threads"] = threads;
  report["degree"] = 3;
  report["boundary"] = "reflect";
  report["repeats"] = repeats;
  // The fused pass kernel's switches (cuda/src/pyramid.cu), as this run saw them.
  for (const char* name : {"SV_PYRAMID_FUSED", "SV_PYRAMID_TILE_KB", "SV_PYRAMID_THREADS"}) {
    const char* e = std::getenv(name);
    report[name] = e ? e : "";
  }
  report["cases"] = Json::array();
  std::printf(
      "B-spline pyramid on %s, cubic, reflect, float32; GPU ms (median of %d, CUDA events, device "
      "arrays; the first call, wall clock, builds the plan), fraction of one device-to-device copy "
      "of the fine array, CPU ms on %u threads\n\n",
      gpu.c_str(), repeats, threads);
  std::printf(
      "| size | copy ms | operation | GPU ms | first call ms | copy / GPU | CPU ms | CPU / GPU |\n"
      "|---|---|---|---|---|---|---|---|\n");
  for (const Case& c : cases) {
    std::fprintf(stderr, "pyramid %s\n", c.name.c_str());
    const cu::Layout fine{c.dims, 1};
    const std::size_t n = fine.size();
    std::mt19937 rng(static_cast<std::uint32_t>(opt.seed));
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    sv::ArrayF samples(c.dims, 1);
    for (std::size_t i = 0; i < n; ++i) samples.data()[i] = u(rng);
    sv::ReduceOptions ro;
    ro.degree = 3;
    ro.boundary = sv::Boundary::Reflect;
    sv::ReduceOptions rs = ro;
    rs.samples = true;
    const std::vector<double> f(c.dims.size(), 0.71);
    const cu::Layout coarse = cu::reduce2_layout(fine, ro);
    const cu::Layout zl = cu::reduce_layout(fine, f, ro);
    std::vector<std::size_t> zshape = zl.dims;
    cu::DeviceBuffer src(n), copy(n), coef(coarse.size()), smp(coarse.size()), zc(zl.size()),
        back(n);
    src.upload(samples.data(), n);
    struct Op {
      std::string name;
      std::function<void()> gpu;
      std::function<void()> cpu;
      std::vector<double> t;
      double first_ms = 0;
    };
    sv::ArrayF coarse_host;
    std::vector<Op> ops = {
        {"copy (floor)", [&] { cu::copy_device(copy.data(), src.data(), n); }, nullptr, {}},
        {"reduce2, samples to coefficients",
         [&] { cu::reduce2<float>(src.data(), fine, coef.data(), nullptr, ro); },
         [&] {
           sv::ReduceOptions o = ro;
           o.threads = threads;
           coarse_host = sv::reduce2(samples, o).coefficients;
         },
         {}},
        {"reduce2, coefficients and samples",
         [&] { cu::reduce2<float>(src.data(), fine, coef.data(), smp.data(), rs); },
         [&] {
           sv::ReduceOptions o = rs;
           o.threads = threads;
           sv::reduce2(samples, o);
         },
         {}},
        {"reduce by 0.71 (any-spacing FIR)",
         [&] { cu::reduce_to_shape<float>(src.data(), fine, zshape, zc.data(), nullptr, ro); },
         [&] {
           sv::ReduceOptions o = ro;
           o.threads = threads;
           sv::reduce(samples, f, o);
         },
         {}},
        {"expand2, coarse coefficients to fine samples",
         [&] { cu::expand2<float>(coef.data(), coarse, c.dims, back.data(), ro); },
         [&] {
           sv::PyramidOptions o = ro;
           o.threads = threads;
           sv::expand2(coarse_host, c.dims, o);
         },
         {}},
    };
    if (!opt.op.empty()) {
      ops.erase(
          std::remove_if(ops.begin() + 1, ops.end(),
                         [&](const Op& o) { return o.name.find(opt.op) == std::string::npos; }),
          ops.end());
      if (ops.size() == 1) throw std::runtime_error("pyramid --op: no operation matches " + opt.op);
      // The CPU's expand2 takes the coarse coefficients the CPU's reduce2 would have made.
      if (opt.cpu) coarse_host = sv::reduce2(samples, ro).coefficients;
    }
    cu::EventTimer timer;
    for (Op& op : ops)  // warm-up (and coef for expand2); plans are built and kept here
      op.first_ms = wall_ms(
          [&] {
            op.gpu();
            cu::synchronize("warm-up");
          },
          1);
    for (int r = 0; r < repeats; ++r)
      for (Op& op : ops) {
        timer.start();
        op.gpu();
        timer.stop();
        op.t.push_back(timer.ms());
      }
    cu::synchronize("pyramid");
    const double copy_ms = median(ops[0].t);
    Json jc;
    jc["size"] = c.name;
    jc["dims"] = c.dims;
    jc["copy_ms"] = copy_ms;
    jc["operations"] = Json::array();
    for (Op& op : ops) {
      const double g = median(op.t);
      double cpu_ms = -1;
      if (op.cpu && opt.cpu) cpu_ms = wall_ms(op.cpu, opt.quick ? 1 : 2);
      jc["operations"].push_back({{"name", op.name},
                                  {"gpu_ms", g},
                                  {"gpu_all_ms", op.t},
                                  {"first_call_ms", op.first_ms},
                                  {"cpu_ms", cpu_ms}});
      std::printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n", c.name.c_str(),
                  fmt("%.3f", copy_ms).c_str(), op.name.c_str(), fmt("%.3f", g).c_str(),
                  fmt("%.1f", op.first_ms).c_str(), fmt("%.2f", copy_ms / g).c_str(),
                  cpu_ms < 0 ? "-" : fmt("%.1f", cpu_ms).c_str(),
                  cpu_ms < 0 ? "-" : fmt("%.0f", cpu_ms / g).c_str());
    }
    report["cases"].push_back(jc);
  }
  return report;
}

}  // namespace cbench
