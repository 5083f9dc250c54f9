// splinebench speed: GPU time per frame (GL timer queries, median of the repeats after a warm-up
// frame) of every fetch flavour in R32F and R16F, on two workloads: a 2-D zoom by 2 from a
// 1920x1080 source to a 3840x2160 output, and an oblique 2048x2048 slice through a 256^3 volume
// (Marschner-Lobb). Each time is also given as a ratio to hardware bi/trilinear measured in the
// same run on the same texture format. Goals: fast cubic (lut, otf) within 1.5x of linear,
// precise within 3x.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "bench.h"

namespace bench {
namespace {

namespace gl = sv::gl;

struct Workload {
  std::string name;
  sv::ArrayF samples;
  gl::GridMapping grid;
};

// Zoom by `factor` over the whole image: output j sits at (j + 1/2) / factor - 1/2.
gl::GridMapping zoom_grid(std::size_t h, std::size_t w, std::size_t factor) {
  gl::GridMapping g;
  g.rows = h * factor;
  g.cols = w * factor;
  const double s = 1.0 / static_cast<double>(factor);
  g.origin = {0.5 * s - 0.5, 0.5 * s - 0.5, 0.0};
  g.step_row = {s, 0.0, 0.0};
  g.step_col = {0.0, s, 0.0};
  return g;
}

using Vec3 = std::array<double, 3>;
Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
Vec3 normalised(const Vec3& a) {
  const double n = std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
  return {a[0] / n, a[1] / n, a[2] / n};
}

// A square slice of side n voxels through the centre of an n^3 volume, tilted against every
// axis (normal along (0.3, 0.5, 0.8) in (z, y, x)), sampled at `pixels` x `pixels`.
gl::GridMapping oblique_grid(std::size_t n, std::size_t pixels) {
  const Vec3 normal = normalised({0.3, 0.5, 0.8});
  const Vec3 u = normalised(cross(normal, {1.0, 0.0, 0.0}));
  const Vec3 v = cross(normal, u);
  const double side = static_cast<double>(n), step = side / static_cast<double>(pixels);
  const double centre = (side - 1) / 2;
  gl::GridMapping g;
  g.rows = g.cols = pixels;
  for (int d = 0; d < 3; ++d) {
    g.step_row[d] = v[d] * step;
    g.step_col[d] = u[d] * step;
    g.origin[d] = centre - (side / 2 - step / 2) * (u[d] + v[d]);
  }
  return g;
}

}  // namespace

Json run_speed(const SpeedOptions& opt) {
  const Common& c = opt.common;
  const int repeats = opt.repeats > 0 ? opt.repeats : (c.quick ? 10 : 50);
  Json report = report_header("speed", c);
  report["repeats"] = repeats;
  report["goals"] = {{"fast_cubic_vs_linear", 1.5}, {"precise_vs_linear", 3.0}};

  const std::size_t sw = c.quick ? 480 : 1920, sh = c.quick ? 270 : 1080;
  const std::size_t vn = c.quick ? 64 : 256, slice = c.quick ? 256 : 2048;
  std::vector<Workload> loads;
  loads.push_back({"zoom2d " + std::to_string(sw) + "x" + std::to_string(sh) + " -> " +
                       std::to_string(2 * sw) + "x" + std::to_string(2 * sh),
                   smooth_image(sh, sw), zoom_grid(sh, sw, 2)});
  std::fprintf(stderr, "speed: building the %zu^3 volume\n", vn);
  loads.push_back({"oblique3d " + std::to_string(vn) + "^3 -> " + std::to_string(slice) + "x" +
                       std::to_string(slice),
                   marschner_lobb(vn), oblique_grid(vn, slice)});

  std::vector<gl::TexFormat> formats;
  for (const std::string& f : opt.formats) formats.push_back(gl::parse_format(f));
  if (formats.empty()) formats = {gl::TexFormat::R32F, gl::TexFormat::R16F};
  std::vector<gl::Fetch> fetches;
  for (const std::string& f : opt.fetches) fetches.push_back(gl::parse_fetch(f));
  if (fetches.empty()) fetches = all_fetches();
  std::vector<std::string> exps = opt.exps;
  if (exps.empty()) exps = {""};

  Json rows = Json::array();
  for (const Workload& wl : loads) {
    if (wl.name.rfind(opt.only, 0) != 0) continue;
    const std::size_t rank = wl.samples.rank();
    const sv::ArrayF coeffs = cubic_coefficients(wl.samples, sv::Boundary::Reflect);
    const double pixels = static_cast<double>(wl.grid.rows * wl.grid.cols);
    for (gl::TexFormat format : formats) {
      const gl::SplineTexture tex_s(wl.samples, format), tex_c(coeffs, format);
      std::map<gl::Fetch, sv::ArrayF> first;
      for (const std::string& exp : exps) {
        const bool experiment = !opt.exps.empty();
        if (experiment) setenv("SPLINEVIEW_GL_EXP", exp == "base" ? "" : exp.c_str(), 1);
        double linear_ms = NAN;
        std::vector<Json> group;
        // Every flavour gets its evaluator and warm-up first; then the timed frames are taken in
        // interleaved rounds (each round times every flavour once), and a flavour's time is the
        // median of its round medians. GPU clock changes during the run (frames of 0.05-0.3 ms
        // leave the GPU idle between the waited-for queries) then hit every flavour alike, so
        // the ratios to linear stay comparable.
        const int rounds = c.quick ? 1 : 5;
        const int per_round = std::max(3, repeats / rounds);
        std::vector<gl::Evaluator> evs;
        std::vector<std::vector<FrameTime>> times(fetches.size());
        std::vector<sv::ArrayF> results(fetches.size());
        for (gl::Fetch f : fetches) {
          std::fprintf(stderr, "speed: %s %s %s %s\n", wl.name.c_str(), gl::format_name(format),
                       gl::fetch_name(f), exp.c_str());
          gl::EvalOptions eo;
          eo.fetch = f;
          evs.emplace_back(eo, rank);
          const gl::SplineTexture& tex = gl::fetch_prefiltered(f) ? tex_c : tex_s;
          time_grid(evs.back(), tex, wl.grid, c.quick ? 1 : 3,
                    experiment ? &results[evs.size() - 1] : nullptr);  // warm-up
        }
        for (int round = 0; round < rounds; ++round)
          for (std::size_t i = 0; i < fetches.size(); ++i) {
            const gl::SplineTexture& tex = gl::fetch_prefiltered(fetches[i]) ? tex_c : tex_s;
            times[i].push_back(time_grid(evs[i], tex, wl.grid, per_round));
          }
        for (std::size_t i = 0; i < fetches.size(); ++i) {
          const gl::Fetch f = fetches[i];
          std::vector<FrameTime>& ts = times[i];
          std::sort(ts.begin(), ts.end(),
                    [](const FrameTime& a, const FrameTime& b) { return a.ms() < b.ms(); });
          const FrameTime t = ts[ts.size() / 2];
          const double ms = t.ms();
          if (f == gl::Fetch::Linear) linear_ms = ms;
          sv::ArrayF& result = results[i];
          Json diff = nullptr;
          if (experiment) {
            if (!first.count(f)) {
              first[f] = std::move(result);
            } else {
              double d = 0;
              for (std::size_t k = 0; k < result.size(); ++k)
                d = std::max(d, static_cast<double>(std::fabs(result[k] - first[f][k])));
              diff = d;
            }
          }
          group.push_back({{"workload", experiment ? wl.name + " [" + exp + "]" : wl.name},
                           {"rank", rank},
                           {"fetch", gl::fetch_name(f)},
                           {"format", gl::format_name(format)},
                           {"ms", ms},
                           {"mpix_per_s", pixels / ms / 1e3},
                           {"rounds", rounds},
                           {"frames_per_round", per_round},
                           {"time", frame_time_json(t)}});
          if (experiment) group.back()["max_abs_vs_first"] = diff;
        }
        for (Json& r : group) {
          const double ratio = r["ms"].get<double>() / linear_ms;
          r["ratio_to_linear"] = std::isfinite(ratio) ? Json(ratio) : Json(nullptr);
          const std::string f = r["fetch"];
          if (f == "lut" || f == "otf" || f == "cubic-unfiltered")
            r["meets_goal"] = ratio <= 1.5;
          else if (f == "precise")
            r["meets_goal"] = ratio <= 3.0;
          rows.push_back(r);
        }
      }
    }
  }
  report["results"] = rows;

  std::printf(
      "\n### speed: GPU ms per frame (median of %d after warm-up), ratio to hardware "
      "linear in the same run\n\n",
      repeats);
  std::printf("%s", md_header({"workload", "format", "flavour", "ms / frame", "Mpixel/s",
                               "x linear", "goal", "clock", "max diff vs first"})
                        .c_str());
  for (const Json& r : rows) {
    const std::string goal =
        r.contains("meets_goal") ? (r["meets_goal"].get<bool>() ? "met" : "missed") : "";
    std::printf("%s", md_row({r["workload"].get<std::string>(), r["format"].get<std::string>(),
                              r["fetch"].get<std::string>(), fmt(r["ms"].get<double>(), "%.3f"),
                              fmt(r["mpix_per_s"].get<double>(), "%.0f"),
                              r["ratio_to_linear"].is_null()
                                  ? "n/a"
                                  : fmt(r["ratio_to_linear"].get<double>(), "%.2f"),
                              goal, r["time"]["source"].get<std::string>(),
                              !r.contains("max_abs_vs_first") || r["max_abs_vs_first"].is_null()
                                  ? ""
                                  : fmt(r["max_abs_vs_first"].get<double>(), "%.2e")})
                          .c_str());
  }
  std::printf("\n");
  return report;
}

}  // namespace bench
