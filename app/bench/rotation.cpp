// splinebench rotation: the repeated-rotation experiment (36 x 10 degrees, assets/ascent.png)
// through the GL fetches. Each step prefilters the previous result on the CPU in float
// (sv::prefilter<float>, for the prefiltered flavours) and resamples it on the GPU. Reported:
// PSNR against the original inside the centred disc of radius 0.35 N, and PSNR / max abs
// against the CPU double result of the same method (sv::rotate<double>, 36 steps): what the
// hardware's 8-bit weights and float arithmetic cost after 36 resamplings.
#include <cmath>
#include <cstdio>

#include "bench.h"
#include "splineview/gl/grids.h"
#include "splineview/metrics.h"
#include "splineview/resample.h"

namespace bench {
namespace {

namespace gl = sv::gl;

sv::Method method_of(gl::Fetch f) {
  switch (f) {
    case gl::Fetch::Nearest:
      return sv::Method::Nearest;
    case gl::Fetch::Linear:
      return sv::Method::Linear;
    case gl::Fetch::CubicUnfiltered:
      return sv::Method::CubicUnfiltered;
    default:
      return sv::Method::Cubic;
  }
}

double finite_or_nan(double v) {
  return std::isfinite(v) ? v : NAN;
}

Json num(double v) {
  return std::isfinite(v) ? Json(v) : Json(nullptr);
}

}  // namespace

Json run_rotation(const RotationOptions& opt) {
  const Common& c = opt.common;
  Json report = report_header("rotation", c);
  sv::ArrayF image = load_asset(c, "ascent.png");
  if (c.quick) {  // the central 256 x 256
    sv::ArrayF crop({256, 256});
    const std::size_t y0 = (image.dim(0) - 256) / 2, x0 = (image.dim(1) - 256) / 2;
    for (std::size_t y = 0; y < 256; ++y)
      for (std::size_t x = 0; x < 256; ++x) crop.at2(y, x) = image.at2(y0 + y, x0 + x);
    image = crop;
  }
  const std::size_t h = image.dim(0), w = image.dim(1);
  const std::vector<unsigned char> disc = sv::disc_mask(h, w, 0.35);
  report["test"] = {{"image", c.quick ? "assets/ascent.png, central 256x256" : "assets/ascent.png"},
                    {"steps", opt.steps},
                    {"degrees", opt.degrees},
                    {"disc", 0.35},
                    {"boundary", "reflect"}};
  const gl::GridMapping grid = gl::rotation_grid(h, w, opt.degrees);

  // CPU double results per method.
  const sv::ArrayD original = sv::ArrayD::from(image);
  std::vector<std::pair<sv::Method, sv::ArrayD>> cpu;
  Json cpu_json = Json::array();
  for (sv::Method m :
       {sv::Method::Nearest, sv::Method::Linear, sv::Method::CubicUnfiltered, sv::Method::Cubic}) {
    sv::ArrayD a = original;
    for (int k = 0; k < opt.steps; ++k)
      a = sv::rotate(a, opt.degrees, sv::ResampleOptions{m, sv::Boundary::Reflect, 0});
    const sv::ErrorStats s = sv::compare(a, original, disc);
    cpu_json.push_back({{"method", sv::method_name(m)}, {"psnr_vs_original", num(s.psnr)}});
    cpu.emplace_back(m, std::move(a));
  }
  report["cpu_double"] = cpu_json;
  const auto cpu_result = [&](sv::Method m) -> const sv::ArrayD& {
    for (const auto& p : cpu)
      if (p.first == m) return p.second;
    return cpu.front().second;
  };

  Json rows = Json::array();
  const gl::Fetch order[] = {gl::Fetch::CubicOtf, gl::Fetch::CubicLut, gl::Fetch::CubicPrecise,
                             gl::Fetch::Linear,   gl::Fetch::Nearest,  gl::Fetch::CubicUnfiltered};
  for (gl::TexFormat format : {gl::TexFormat::R32F, gl::TexFormat::R16F}) {
    for (gl::Fetch f : order) {
      std::fprintf(stderr, "rotation: %s %s\n", gl::fetch_name(f), gl::format_name(format));
      gl::EvalOptions eo;
      eo.fetch = f;
      gl::Evaluator ev(eo, 2);
      sv::ArrayF a = image;
      double total_ms = 0;
      bool timer_ok = true;
      for (int k = 0; k < opt.steps; ++k) {
        const sv::ArrayF data =
            gl::fetch_prefiltered(f) ? cubic_coefficients(a, sv::Boundary::Reflect) : a;
        const gl::SplineTexture tex(data, format);
        const FrameTime t = time_grid(ev, tex, grid, 1, &a);
        total_ms += t.ms();
        timer_ok = timer_ok && t.timer_ok;
      }
      const sv::Method m = method_of(f);
      const sv::ErrorStats vs_orig = sv::compare(a, original, disc);
      const sv::ErrorStats vs_cpu = sv::compare(a, cpu_result(m), disc);
      const sv::ErrorStats vs_cpu_all = sv::compare(a, cpu_result(m));
      rows.push_back({{"fetch", gl::fetch_name(f)},
                      {"format", gl::format_name(format)},
                      {"cpu_method", sv::method_name(m)},
                      {"psnr_vs_original", num(vs_orig.psnr)},
                      {"psnr_vs_cpu_double", num(vs_cpu.psnr)},
                      {"max_abs_vs_cpu_double_disc", vs_cpu.max_abs},
                      {"max_abs_vs_cpu_double_all", vs_cpu_all.max_abs},
                      {"rms_vs_cpu_double_disc", vs_cpu.rms},
                      {"ms_total", total_ms},
                      {"time_source", timer_ok ? "gl-timer" : "wall-clock"}});
    }
  }
  report["results"] = rows;

  std::printf("\n### rotation: %d x %g degrees, %zux%zu, PSNR inside the disc of radius 0.35 N\n\n",
              opt.steps, opt.degrees, h, w);
  std::printf("%s", md_header({"flavour", "format", "PSNR vs original (dB)",
                               "CPU double, same method (dB)", "PSNR vs CPU double (dB)",
                               "max abs vs CPU double (disc)", "ms (all steps)", "clock"})
                        .c_str());
  for (const Json& r : rows) {
    double cpu_psnr = NAN;
    for (const Json& cj : cpu_json)
      if (cj["method"] == r["cpu_method"] && !cj["psnr_vs_original"].is_null())
        cpu_psnr = cj["psnr_vs_original"].get<double>();
    const auto get = [&](const char* k) {
      return r[k].is_null() ? NAN : finite_or_nan(r[k].get<double>());
    };
    std::printf("%s", md_row({r["fetch"].get<std::string>(), r["format"].get<std::string>(),
                              fmt(get("psnr_vs_original"), "%.3f"), fmt(cpu_psnr, "%.3f"),
                              r["psnr_vs_cpu_double"].is_null() &&
                                      r["max_abs_vs_cpu_double_disc"].get<double>() == 0.0
                                  ? "identical"
                                  : fmt(get("psnr_vs_cpu_double"), "%.2f"),
                              fmt(get("max_abs_vs_cpu_double_disc"), "%.2e"),
                              fmt(get("ms_total"), "%.2f"), r["time_source"].get<std::string>()})
                          .c_str());
  }
  std::printf("\n");
  return report;
}

}  // namespace bench
