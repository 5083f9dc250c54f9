// splinebench-cuda upscale: live-video upscaling per frame on the device, to 3840x2160 from
// 1920x1080 (factor 2), 1280x720 (3) and 960x540 (4), RGB float32 interleaved and RGBA8 frames.
// Rows: unpack (RGBA8 -> RGB float), the CUDA prefilter (cubic, reflect), the thread-per-tile
// upscale for cubic / linear / nearest with float and 8-bit output, prefilter + cubic upscale
// (the goal: <= 0.5 ms per frame at 1080p -> 4K, and faster than torch's bicubic, which
// tools/bench_torch_upscale.py times on the same sizes), the whole device chain of a frame
// (unpack + prefilter + upscale to 8 bits, no host copies), and FrameUpscaler::run (host to
// host through pinned staging, its own event times). Each row stands against the bandwidth
// floor measured in the same run: a device-to-device copy of the row's output bytes (reads and
// writes them: the reference) and a write-only fill of them (the floor of a kernel that
// only writes, which an upscale nearly is: it reads 1/f^2 of what it writes).
// Timing: CUDA events on the default stream around each step, after a warm-up; the steps take
// turns repeat by repeat (clock changes hit all alike); medians are reported.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bench_cuda.h"
#include "splineview/cuda_device.h"
#include "splineview/cuda_memory.h"
#include "splineview/cuda_prefilter.h"
#include "splineview/cuda_upscale.h"

namespace cbench {
namespace {

namespace cu = sv::cuda;
using cu::UpscaleMethod;

constexpr double kGoalMs = 0.5;  // prefilter + cubic upscale, 1080p -> 4K

struct Case {
  std::string name;
  std::size_t w, h;
  int factor;
};

struct Step {
  std::string name;
  bool u8_out;   // compare with the floors of the 8-bit output (else the float output)
  double bytes;  // bytes read + written by the step (nominal: each input and output once)
  std::function<void()> run;
};

}  // namespace

Json run_upscale(const UpscaleOptions& opt) {
  std::vector<Case> cases = {
      {"1920x1080 -> 3840x2160", 1920, 1080, 2},
      {"1280x720 -> 3840x2160", 1280, 720, 3},
      {"960x540 -> 3840x2160", 960, 540, 4},
  };
  if (opt.quick) cases = {{"320x180 -> 640x360", 320, 180, 2}};
  const int repeats = std::max(1, opt.quick ? std::min(opt.repeats, 5) : opt.repeats);

  const auto devices = sv::cuda_devices();
  Json report;
  report["subcommand"] = "upscale";
  report["device"] = devices.empty() ? "" : devices[0].name;
  report["peak_bandwidth_gbs"] = devices.empty() ? 0.0 : devices[0].memory_bandwidth_gbs;
  report["boundary"] = "reflect";
  report["repeats"] = repeats;
  report["goal"] = "prefilter + cubic upscale <= 0.5 ms per 1920x1080 -> 3840x2160 RGB frame";
  report["cases"] = Json::array();

  std::printf(
      "CUDA upscaling per frame (thread per tile), RGB float32 and RGBA8 frames on %s; median of "
      "%d runs\n\n",
      devices.empty() ? "?" : devices[0].name.c_str(), repeats);
  std::printf(
      "| frames | step | ms | GB/s (nominal bytes) | x copy of the output | x write of the output "
      "|\n|---|---|---|---|---|---|\n");

  for (const Case& c : cases) {
    std::fprintf(stderr, "upscale %s\n", c.name.c_str());
    const std::size_t f = static_cast<std::size_t>(c.factor);
    const std::size_t C = 3;
    const cu::Layout layout{{c.h, c.w}, C};
    const std::size_t in_n = layout.size();  // floats of the RGB frame
    const std::size_t out_n = in_n * f * f;  // floats (or bytes) of the upscaled RGB frame
    const double in_bytes = static_cast<double>(in_n) * 4;
    const double out_bytes = static_cast<double>(out_n) * 4;
    const double rgba8_bytes = static_cast<double>(c.w * c.h * 4);

    std::mt19937 rng(static_cast<std::uint32_t>(opt.seed));
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::vector<float> host(in_n);
    for (float& v : host) v = u(rng);
    std::vector<std::uint8_t> frame(c.w * c.h * 4);
    for (auto& v : frame) v = static_cast<std::uint8_t>(rng() & 0xff);

    cu::DeviceBuffer samples(in_n), coef(in_n), work(in_n);
    samples.upload(host.data(), in_n);
    coef.copy_from(samples);
    cu::prefilter(coef.data(), layout, {3, sv::Boundary::Reflect});
    // 8-bit buffers carved out of float buffers (sizes rounded up to whole floats).
    cu::DeviceBuffer rgba8((frame.size() + 3) / 4);
    {
      std::vector<float> staging(rgba8.size(), 0.0f);
      std::copy(frame.begin(), frame.end(), reinterpret_cast<std::uint8_t*>(staging.data()));
      rgba8.upload(staging.data(), staging.size());
    }
    const auto* frame_dev = reinterpret_cast<const std::uint8_t*>(rgba8.data());
    cu::DeviceBuffer out(out_n), out_copy(out_n);
    cu::DeviceBuffer out8((out_n + 3) / 4), out8_copy((out_n + 3) / 4);
    auto* out8_ptr = reinterpret_cast<std::uint8_t*>(out8.data());
    const cu::PrefilterConfig pf{3, sv::Boundary::Reflect};

    std::vector<Step> steps;
    steps.push_back({"unpack RGBA8 -> RGB float", false, rgba8_bytes + in_bytes,
                     [&] { cu::unpack_u8(frame_dev, c.w * 4, 4, work.data(), layout); }});
    steps.push_back({"prefilter (cubic, in place)", false, 4 * in_bytes,
                     [&] { cu::prefilter(work.data(), layout, pf); }});
    for (UpscaleMethod m : {UpscaleMethod::Cubic, UpscaleMethod::Linear, UpscaleMethod::Nearest}) {
      const float* src = m == UpscaleMethod::Cubic ? coef.data() : samples.data();
      steps.push_back({std::string("upscale ") + cu::upscale_method_name(m) + ", float out", false,
                       in_bytes + out_bytes, [&, m, src] {
                         cu::upscale(src, layout, c.factor, m, sv::Boundary::Reflect, out.data());
                       }});
    }
    for (UpscaleMethod m : {UpscaleMethod::Cubic, UpscaleMethod::Linear, UpscaleMethod::Nearest}) {
      const float* src = m == UpscaleMethod::Cubic ? coef.data() : samples.data();
      steps.push_back({std::string("upscale ") + cu::upscale_method_name(m) + ", 8-bit out", true,
                       in_bytes + static_cast<double>(out_n), [&, m, src] {
                         cu::upscale_u8(src, layout, c.factor, m, sv::Boundary::Reflect, out8_ptr);
                       }});
    }
    steps.push_back({"prefilter + upscale cubic, float out", false, 4 * in_bytes + out_bytes, [&] {
                       cu::prefilter(work.data(), layout, pf);
                       cu::upscale(work.data(), layout, c.factor, UpscaleMethod::Cubic,
                                   sv::Boundary::Reflect, out.data());
                     }});
    steps.push_back({"chain: unpack + prefilter + upscale cubic, 8-bit out", true,
                     rgba8_bytes + 5 * in_bytes + static_cast<double>(out_n), [&] {
                       cu::unpack_u8(frame_dev, c.w * 4, 4, work.data(), layout);
                       cu::prefilter(work.data(), layout, pf);
                       cu::upscale_u8(work.data(), layout, c.factor, UpscaleMethod::Cubic,
                                      sv::Boundary::Reflect, out8_ptr);
                     }});
    steps.push_back({"chain: unpack + upscale linear, 8-bit out", true,
                     rgba8_bytes + 2 * in_bytes + static_cast<double>(out_n), [&] {
                       cu::unpack_u8(frame_dev, c.w * 4, 4, work.data(), layout);
                       cu::upscale_u8(work.data(), layout, c.factor, UpscaleMethod::Linear,
                                      sv::Boundary::Reflect, out8_ptr);
                     }});

    // The floors: a copy and a write-only fill of the float and of the 8-bit output.
    struct Floor {
      std::vector<double> copy, write;
    } floor_f, floor_8;

    cu::EventTimer timer;
    std::vector<std::vector<double>> times(steps.size());
    for (int w = 0; w < 3; ++w)
      for (Step& s : steps) {
        work.copy_from(samples);
        s.run();
      }
    cu::synchronize("warm-up");
    for (int r = 0; r < repeats; ++r) {
      timer.start();
      cu::copy_device(out_copy.data(), out.data(), out_n);
      timer.stop();
      floor_f.copy.push_back(timer.ms());
      timer.start();
      out.fill(0.0f);
      timer.stop();
      floor_f.write.push_back(timer.ms());
      timer.start();
      cu::copy_device(out8_copy.data(), out8.data(), out8.size());
      timer.stop();
      floor_8.copy.push_back(timer.ms());
      timer.start();
      out8.fill(0.0f);
      timer.stop();
      floor_8.write.push_back(timer.ms());
      for (std::size_t i = 0; i < steps.size(); ++i) {
        work.copy_from(samples);  // untimed: the in-place steps start from the samples
        timer.start();
        steps[i].run();
        timer.stop();
        times[i].push_back(timer.ms());
      }
    }

    // FrameUpscaler::run, host to host (RGBA8 in and out: it keeps the frame's channels).
    std::vector<double> fu_total, fu_upload, fu_unpack, fu_prefilter, fu_upscale, fu_download;
    {
      cu::FrameUpscaler up(c.factor, UpscaleMethod::Cubic);
      std::vector<std::uint8_t> result(frame.size() * f * f);
      for (int r = 0; r < repeats + 2; ++r) {
        up.run(frame.data(), static_cast<int>(c.w), static_cast<int>(c.h), 4, result.data());
        if (r < 2) continue;  // warm-up
        const cu::FrameUpscaler::Timing& t = up.last_timing();
        fu_upload.push_back(t.upload);
        fu_unpack.push_back(t.unpack);
        fu_prefilter.push_back(t.prefilter);
        fu_upscale.push_back(t.upscale);
        fu_download.push_back(t.download);
        fu_total.push_back(t.upload + t.unpack + t.prefilter + t.upscale + t.download);
      }
    }

    const double copy_f = median(floor_f.copy), write_f = median(floor_f.write);
    const double copy_8 = median(floor_8.copy), write_8 = median(floor_8.write);
    Json jc;
    jc["name"] = c.name;
    jc["in_dims"] = {c.h, c.w};
    jc["channels"] = C;
    jc["factor"] = c.factor;
    jc["out_bytes_float"] = out_bytes;
    jc["out_bytes_u8"] = static_cast<double>(out_n);
    jc["copy_float_ms"] = copy_f;
    jc["write_float_ms"] = write_f;
    jc["copy_u8_ms"] = copy_8;
    jc["write_u8_ms"] = write_8;
    jc["steps"] = Json::array();
    std::printf("| %s (x%d, RGB) | copy of the float output (%.1f MB) | %.4f | %.0f | 1.00 | |\n",
                c.name.c_str(), c.factor, out_bytes / 1e6, copy_f, 2 * out_bytes / copy_f / 1e6);
    std::printf("| | write-only fill of the float output | %.4f | %.0f | | 1.00 |\n", write_f,
                out_bytes / write_f / 1e6);
    std::printf("| | copy of the 8-bit output (%.1f MB) | %.4f | %.0f | 1.00 | |\n",
                static_cast<double>(out_n) / 1e6, copy_8,
                2 * static_cast<double>(out_n) / copy_8 / 1e6);
    std::printf("| | write-only fill of the 8-bit output | %.4f | %.0f | | 1.00 |\n", write_8,
                static_cast<double>(out_n) / write_8 / 1e6);
    double goal_ms = 0;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const Step& s = steps[i];
      const double ms = median(times[i]);
      const double copy = s.u8_out ? copy_8 : copy_f;
      const double write = s.u8_out ? write_8 : write_f;
      Json js;
      js["name"] = s.name;
      js["ms"] = ms;
      js["bytes"] = s.bytes;
      js["gbs"] = s.bytes / ms / 1e6;
      js["vs_copy_of_output"] = ms / copy;
      js["vs_write_of_output"] = ms / write;
      jc["steps"].push_back(js);
      if (s.name == "prefilter + upscale cubic, float out") goal_ms = ms;
      std::printf("| | %s | %.4f | %.0f | %.2f | %.2f |\n", s.name.c_str(), ms, s.bytes / ms / 1e6,
                  ms / copy, ms / write);
    }
    Json fu;
    fu["total_ms"] = median(fu_total);
    fu["upload_ms"] = median(fu_upload);
    fu["unpack_ms"] = median(fu_unpack);
    fu["prefilter_ms"] = median(fu_prefilter);
    fu["upscale_ms"] = median(fu_upscale);
    fu["download_ms"] = median(fu_download);
    fu["channels"] = 4;
    jc["frame_upscaler"] = fu;
    std::printf(
        "| | FrameUpscaler::run, RGBA8 host to host (upload / unpack / prefilter / upscale / "
        "download) | %.4f | (%.3f / %.3f / %.3f / %.3f / %.3f) | | |\n",
        median(fu_total), median(fu_upload), median(fu_unpack), median(fu_prefilter),
        median(fu_upscale), median(fu_download));
    if (c.factor == 2 && !opt.quick) {
      jc["goal_ms"] = kGoalMs;
      jc["goal_met"] = goal_ms <= kGoalMs;
      report["goal_ms"] = goal_ms;
      report["goal_met"] = goal_ms <= kGoalMs;
      std::printf("| | goal: prefilter + cubic upscale <= %.1f ms | %s (%.4f ms) | | | |\n",
                  kGoalMs, goal_ms <= kGoalMs ? "met" : "NOT met", goal_ms);
    }
    report["cases"].push_back(jc);
  }
  return report;
}

}  // namespace cbench
