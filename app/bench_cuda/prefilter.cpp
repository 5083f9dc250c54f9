// splinebench-cuda prefilter: the CUDA prefilter per axis and in total at the paper's sizes,
// against the bandwidth floor measured in the same run (a device-to-device copy of the array:
// each axis pass reads and writes the array once, as a copy does). Kernel variants are timed
// round-robin (every repeat runs every variant), each run starting from the original samples
// (restored by an untimed copy), medians reported. Per axis, each pass is timed as prefilter()
// runs it: in place, or out of place where prefilter() ping-pongs the axis through its scratch
// copy. Peak memory is the most the library's device allocations held during a whole
// prefilter, beyond the array itself.
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench_cuda.h"
#include "splineview/cuda_device.h"
#include "splineview/cuda_prefilter.h"

namespace cbench {
namespace {

namespace cu = sv::cuda;

struct Case {
  std::string name;
  std::vector<std::size_t> dims;
  std::size_t channels;
  // GeForce 9800 GTX totals in ms of the paper's two kernels, "temp array / step" ("GPU
  // Prefilter for Accurate Cubic B-spline Interpolation", Table 1 for volumes, Table 2 for RGB
  // frames), when the paper measured this size. Our naive kernel (one thread per line in global
  // memory) corresponds to the paper's "step" variant.
  std::string published;
  bool sweep;  // also time the tile-shape variants
};

struct Variant {
  std::string name;
  cu::PrefilterConfig cfg;
};

}  // namespace

Json run_prefilter(const PrefilterOptions& opt) {
  std::vector<Case> cases = {
      {"32^3 float", {32, 32, 32}, 1, "1.7 / 1.6", false},
      {"256^3 float", {256, 256, 256}, 1, "70 / 142", true},
      {"512x512x300 float", {300, 512, 512}, 1, "413 / 644", true},
      {"400x300x151 float", {151, 300, 400}, 1, "", false},
      {"1024x1024x128 float", {128, 1024, 1024}, 1, "", false},
      {"160x120 RGB", {120, 160}, 3, "2.1 / 0.8", false},
      {"1024x1024 RGB", {1024, 1024}, 3, "29 / 31", false},
      {"1920x1080 RGBA", {1080, 1920}, 4, "", false},
      {"3840x2160 RGBA", {2160, 3840}, 4, "", true},
  };
  if (opt.quick) cases = {cases[0], {"64^3 float", {64, 64, 64}, 1, "", true}, cases[5]};
  const int repeats = std::max(1, opt.quick ? std::min(opt.repeats, 3) : opt.repeats);

  const auto devices = sv::cuda_devices();
  Json report;
  report["subcommand"] = "prefilter";
  report["device"] = devices.empty() ? "" : devices[0].name;
  report["peak_bandwidth_gbs"] = devices.empty() ? 0.0 : devices[0].memory_bandwidth_gbs;
  report["degree"] = 3;
  report["boundary"] = "reflect";
  report["repeats"] = repeats;
  report["cases"] = Json::array();

  std::printf("CUDA prefilter, cubic, reflect, float32 on %s; median of %d runs\n\n",
              devices.empty() ? "?" : devices[0].name.c_str(), repeats);
  std::printf(
      "| data | kernel | per axis ms (slowest axis first in array order) | total ms | "
      "GB/s per axis | fraction of copy per axis | total vs copies | extra memory | "
      "9800 GTX ms |\n|---|---|---|---|---|---|---|---|---|\n");

  for (const Case& c : cases) {
    if (!opt.only.empty() && c.name.rfind(opt.only, 0) != 0) continue;
    std::fprintf(stderr, "prefilter %s\n", c.name.c_str());
    const cu::Layout layout{c.dims, c.channels};
    const std::size_t n = layout.size();
    const double bytes = static_cast<double>(n) * sizeof(float);
    std::vector<float> host(n);
    std::mt19937 rng(static_cast<std::uint32_t>(opt.seed));
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    for (float& v : host) v = u(rng);
    cu::DeviceBuffer orig(n), data(n);
    orig.upload(host.data(), n);

    std::vector<Variant> variants = {{"tiled", {}}};
    Variant in_place{"tiled, every pass in place (apron side buffer)", {}};
    in_place.cfg.ping_pong = false;
    const std::vector<bool> plan = cu::prefilter_out_of_place(layout, {});
    if (std::find(plan.begin(), plan.end(), true) != plan.end()) variants.push_back(in_place);
    if (cu::prefilter_fusable(layout, {})) {
      // The default fuses y and x on 3-D arrays; the per-axis passes are the alternative, and
      // the lag of the fused pass is swept on the sweep sizes.
      Variant per_axis{"tiled, one pass per axis", {}};
      per_axis.cfg.fuse = false;
      variants.push_back(per_axis);
      if (c.sweep) {
        Variant nh{"fused, no L2 hints", {}};
        nh.cfg.fuse_hints = false;
        variants.push_back(nh);
      }
      if (c.sweep)
        for (int lag : {1, 4, 8, 16, 32}) {
          Variant v{"fused, lag " + std::to_string(lag), {}};
          v.cfg.fuse_lag = lag;
          variants.push_back(v);
        }
    }
    Variant reg{"tiled, loads through registers", {}};
    reg.cfg.async_loads = false;
    variants.push_back(reg);
    if (c.sweep) {
      Variant v64{"tiled, 16 lines", {}};
      v64.cfg.lines = 16;
      Variant c128{"tiled, chunk 128", {}};
      c128.cfg.chunk = 128;
      Variant c512{"tiled, chunk 512", {}};
      c512.cfg.chunk = 512;
      Variant c1024{"tiled, chunk 1024", {}};
      c1024.cfg.chunk = 1024;
      variants.push_back(v64);
      variants.push_back(c128);
      variants.push_back(c512);
      variants.push_back(c1024);
    }
    Variant naive{"naive (thread per line)", {}};
    naive.cfg.kernel = cu::PrefilterKernel::Naive;
    variants.push_back(naive);

    cu::EventTimer timer;
    const std::size_t rank = layout.rank();
    std::vector<double> copy_t;
    std::vector<std::vector<std::vector<double>>> axis_t(variants.size(),
                                                         std::vector<std::vector<double>>(rank));
    std::vector<std::vector<double>> total_t(variants.size()), fused_t(variants.size());
    std::vector<std::size_t> extra(variants.size(), 0);
    // Per axis, the pass as prefilter() runs it: in place, or out of place (orig -> data) where
    // it ping-pongs through the scratch copy (then it reads and writes the array once, as the
    // copy does).
    std::vector<std::vector<bool>> out_of_place;
    for (const Variant& v : variants)
      out_of_place.push_back(v.cfg.kernel == cu::PrefilterKernel::Tiled
                                 ? cu::prefilter_out_of_place(layout, v.cfg)
                                 : std::vector<bool>(rank, false));

    // Warm-up: every kernel once.
    for (const Variant& v : variants) {
      data.copy_from(orig);
      cu::prefilter(data.data(), layout, v.cfg);
    }
    cu::synchronize("warm-up");

    for (int r = 0; r < repeats; ++r) {
      timer.start();
      cu::copy_device(data.data(), orig.data(), n);
      timer.stop();
      copy_t.push_back(timer.ms());
      for (std::size_t vi = 0; vi < variants.size(); ++vi) {
        const Variant& v = variants[vi];
        for (std::size_t axis = 0; axis < rank; ++axis) {
          data.copy_from(orig);
          timer.start();
          if (out_of_place[vi][axis])
            cu::prefilter_axis(orig.data(), data.data(), layout, axis, v.cfg);
          else
            cu::prefilter_axis(data.data(), layout, axis, v.cfg);
          timer.stop();
          axis_t[vi][axis].push_back(timer.ms());
        }
        if (v.cfg.kernel == cu::PrefilterKernel::Tiled && cu::prefilter_fusable(layout, v.cfg)) {
          data.copy_from(orig);
          timer.start();
          cu::prefilter_fused_xy(data.data(), layout, v.cfg);
          timer.stop();
          fused_t[vi].push_back(timer.ms());
        }
        data.copy_from(orig);
        cu::synchronize("prefilter");
        cu::reset_allocation_peak();
        const std::size_t before = cu::allocation_stats().current;
        timer.start();
        cu::prefilter(data.data(), layout, v.cfg);
        timer.stop();
        total_t[vi].push_back(timer.ms());
        extra[vi] = std::max(extra[vi], cu::allocation_stats().peak - before);
      }
    }

    const double copy_ms = median(copy_t);
    Json jc;
    jc["name"] = c.name;
    jc["dims"] = c.dims;
    jc["channels"] = c.channels;
    jc["bytes"] = bytes;
    jc["copy_ms"] = copy_ms;
    jc["copy_gbs"] = 2 * bytes / copy_ms / 1e6;
    jc["published_9800gtx_ms"] = c.published;
    jc["variants"] = Json::array();
    for (std::size_t vi = 0; vi < variants.size(); ++vi) {
      Json jv;
      jv["name"] = variants[vi].name;
      for (std::size_t axis = 0; axis < rank; ++axis)
        jv["axis_out_of_place"].push_back(static_cast<bool>(out_of_place[vi][axis]));
      std::string ms_s, gbs_s, frac_s;
      for (std::size_t axis = 0; axis < rank; ++axis) {
        const double ms = median(axis_t[vi][axis]);
        jv["axis_ms"].push_back(ms);
        jv["axis_gbs"].push_back(2 * bytes / ms / 1e6);
        jv["axis_fraction_of_copy"].push_back(copy_ms / ms);
        const char* sep = axis ? " / " : "";
        ms_s += sep + fmt("%.3f", ms);
        gbs_s += sep + fmt("%.0f", 2 * bytes / ms / 1e6);
        frac_s += sep + fmt("%.0f%%", 100 * copy_ms / ms);
      }
      const double total = median(total_t[vi]);
      jv["total_ms"] = total;
      // The fused y/x pass alone (prefilter() then adds the z pass), where it applies.
      if (!fused_t[vi].empty()) {
        const double f = median(fused_t[vi]);
        jv["fused_xy_ms"] = f;
        jv["fused_xy_fraction_of_copy"] = copy_ms / f;
        ms_s += fmt(" (fused y/x %.3f)", f);
      }
      jv["total_fraction_of_copies"] = static_cast<double>(rank) * copy_ms / total;
      jv["extra_bytes"] = extra[vi];
      jc["variants"].push_back(jv);
      std::printf("| %s | %s | %s | %.3f | %s | %s | %.0f%% | %.1f MB (%.0f%%) | %s |\n",
                  vi ? "" : (c.name + fmt(" (%.1f MB)", bytes / 1e6)).c_str(),
                  variants[vi].name.c_str(), ms_s.c_str(), total, gbs_s.c_str(), frac_s.c_str(),
                  100 * static_cast<double>(rank) * copy_ms / total,
                  static_cast<double>(extra[vi]) / 1e6,
                  100 * static_cast<double>(extra[vi]) / bytes,
                  vi ? "" : (c.published.empty() ? "-" : c.published.c_str()));
    }
    std::printf("| | device-to-device copy | %.3f ms = %.0f GB/s | | | | | | |\n", copy_ms,
                2 * bytes / copy_ms / 1e6);
    report["cases"].push_back(jc);
  }
  return report;
}

}  // namespace cbench
