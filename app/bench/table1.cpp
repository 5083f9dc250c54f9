// splinebench table1: Table 1 of Ruijters et al. (on-the-fly vs lookup-table cubic B-spline
// weights): sum of squared error over a 256 x 256 output and time per frame, LUT vs OTF, with
// the precise flavour added. Our test: the central 64 x 64 region of assets/ascent.png magnified
// 4x (the whole image is prefiltered in float and uploaded; the output grid covers the centre),
// SSE against the double reference (double prefilter, double sampler, exact positions) and
// against the float-coefficient reference; GPU ms per frame from timer queries, median of many
// repeats after a warm-up frame. The published data set differs (see docs/ACCURACY.md).
#include <cstdio>

#include "bench.h"
#include "splineview/prefilter.h"
#include "splineview/sampler.h"

namespace bench {
namespace {

namespace gl = sv::gl;

struct Variant {
  const char* name;
  gl::Fetch fetch;
  bool lut_half = true;
  gl::LutMapping lut_mapping = gl::LutMapping::Endpoints;
};

}  // namespace

Json run_table1(const Table1Options& opt) {
  const Common& c = opt.common;
  const int repeats = opt.repeats > 0 ? opt.repeats : (c.quick ? 10 : 200);
  Json report = report_header("table1", c);

  const sv::ArrayF image = load_asset(c, "ascent.png");
  const std::size_t h = image.dim(0), w = image.dim(1), region = 64, zoom = 4, out = region * zoom;
  const double r0 = static_cast<double>((h - region) / 2),
               c0 = static_cast<double>((w - region) / 2);
  // Output pixel j of an axis sits at r0 + (j + 1/2) / zoom - 1/2 (pixel areas aligned).
  gl::GridMapping grid;
  grid.rows = grid.cols = out;
  const double step = 1.0 / static_cast<double>(zoom);
  grid.origin = {r0 + 0.5 * step - 0.5, c0 + 0.5 * step - 0.5, 0.0};
  grid.step_row = {step, 0.0, 0.0};
  grid.step_col = {0.0, step, 0.0};
  std::vector<float> positions(out * out * 2);
  for (std::size_t i = 0; i < out; ++i)
    for (std::size_t j = 0; j < out; ++j) {
      positions[(i * out + j) * 2] =
          static_cast<float>(grid.origin[0] + static_cast<double>(i) * step);
      positions[(i * out + j) * 2 + 1] =
          static_cast<float>(grid.origin[1] + static_cast<double>(j) * step);
    }

  sv::ArrayD coeff_d = sv::ArrayD::from(image);
  sv::prefilter(coeff_d, sv::PrefilterOptions{3, sv::Boundary::Reflect, 0});
  const std::vector<double> ref_d = reference(coeff_d, positions, 3, sv::Boundary::Reflect);
  const sv::ArrayF coeff_f = cubic_coefficients(image, sv::Boundary::Reflect);
  const std::vector<double> ref_f = reference(coeff_f, positions, 3, sv::Boundary::Reflect);
  const Stats float_cost = error_stats(std::vector<float>(ref_f.begin(), ref_f.end()), ref_d);

  report["test"] = {{"image", "assets/ascent.png (512x512 grey, values in [0, 1])"},
                    {"region", "central 64x64, rows and columns 224..287"},
                    {"zoom", zoom},
                    {"output", {out, out}},
                    {"repeats", repeats},
                    {"reference", "double prefilter + double sampler at the exact positions"},
                    {"float_coefficients_vs_double", stats_json(float_cost)}};
  report["published"] = {{"source",
                          "Ruijters, ter Haar Romeny, Suetens 2008, Table 1 (QuadroFX 3500; their "
                          "data set, not ascent)"},
                         {"lut", {{"sse", 7.68e-4}, {"ms", 15.0}}},
                         {"otf", {{"sse", 5.83e-4}, {"ms", 15.6}}}};

  const Variant variants[] = {{"lut", gl::Fetch::CubicLut, true},
                              {"lut-repeat", gl::Fetch::CubicLut, true, gl::LutMapping::Repeat},
                              {"lut-rgb32f", gl::Fetch::CubicLut, false},
                              {"otf", gl::Fetch::CubicOtf},
                              {"precise", gl::Fetch::CubicPrecise},
                              {"linear", gl::Fetch::Linear}};
  Json rows = Json::array();
  for (gl::TexFormat format : {gl::TexFormat::R32F, gl::TexFormat::R16F}) {
    const gl::SplineTexture coeffs(coeff_f, format), samples(image, format);
    for (const Variant& v : variants) {
      gl::EvalOptions eo;
      eo.fetch = v.fetch;
      eo.lut.half_float = v.lut_half;
      eo.lut.mapping = v.lut_mapping;
      gl::Evaluator ev(eo, 2);
      const bool pre = gl::fetch_prefiltered(v.fetch);
      const gl::SplineTexture& tex = pre ? coeffs : samples;
      time_grid(ev, tex, grid, 1);  // warm-up
      sv::ArrayF result;
      const FrameTime t = time_grid(ev, tex, grid, repeats, &result);
      Json row{{"variant", v.name},
               {"fetch", gl::fetch_name(v.fetch)},
               {"format", gl::format_name(format)},
               {"lut_table",
                v.fetch == gl::Fetch::CubicLut ? (v.lut_half ? "rgb16f" : "rgb32f") : "none"},
               {"lut_mapping",
                v.fetch == gl::Fetch::CubicLut ? gl::lut_mapping_name(v.lut_mapping) : "none"},
               {"ms_per_frame", t.ms()},
               {"time", frame_time_json(t)}};
      if (pre) {
        row["vs_double"] = stats_json(error_stats(result.vec(), ref_d));
        row["vs_float_coefficients"] = stats_json(error_stats(result.vec(), ref_f));
      } else {
        row["vs_double"] = nullptr;  // a different spline (degree 1): timing baseline only
      }
      rows.push_back(row);
    }
  }
  report["results"] = rows;

  std::printf(
      "\n### table1: 256x256 output (central 64x64 of ascent, zoom 4): SSE and GPU time "
      "per frame (median of %d)\n\n",
      repeats);
  std::printf("%s",
              md_header({"variant", "format", "SSE vs double", "max abs vs double",
                         "SSE vs float coeffs", "ms / frame", "published SSE", "published ms"})
                  .c_str());
  bool wall = false;
  for (const Json& r : rows) {
    const std::string v = r["variant"];
    wall = wall || r["time"]["source"] == "wall-clock";
    const bool has = !r["vs_double"].is_null();
    const bool lut16 = v == "lut" || v == "lut-repeat";  // the published table is RGB16F
    const std::string pub_sse = lut16 ? "7.68e-4" : v == "otf" ? "5.83e-4" : "-";
    const std::string pub_ms = lut16 ? "15.0" : v == "otf" ? "15.6" : "-";
    std::printf(
        "%s", md_row({v, r["format"].get<std::string>(),
                      has ? fmt(r["vs_double"]["sse"].get<double>(), "%.3e") : "-",
                      has ? fmt(r["vs_double"]["max_abs"].get<double>(), "%.2e") : "-",
                      has ? fmt(r["vs_float_coefficients"]["sse"].get<double>(), "%.3e") : "-",
                      fmt(r["ms_per_frame"].get<double>(), "%.4f"),
                      r["format"] == "r32f" ? pub_sse : "-", r["format"] == "r32f" ? pub_ms : "-"})
                  .c_str());
  }
  if (wall)
    std::printf(
        "\nThe GL timer is not used here (software renderer, or implausible values): times are "
        "wall-clock per frame, including a share of the readback.\n");
  std::printf("\nfloat coefficients alone (CPU, double accumulation) vs double: SSE %.3e\n",
              float_cost.sse);
  std::printf("\n");
  return report;
}

}  // namespace bench
