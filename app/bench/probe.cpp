// splinebench probe: how precisely the texture hardware filters. (1) A 2-texel texture holding 0
// and 1, sampled with hardware linear filtering at a fine ramp of positions between the two texel
// centres: the number of distinct output levels reveals the fixed-point weight resolution
// (NVIDIA: 8 fractional bits, 257 levels including both ends; a software renderer may compute
// in float). (2) The experiment of Figure 3 in Ruijters et al.: the same ramp between 0 and
// 1/65535 in R16 (unsigned normalised), R16F and R32F textures: filtered fetches return the
// texture's own precision, so R16 gives only 0 or 1 LSB. Distinct levels and max error against
// the exact ramp.
#include <cmath>
#include <cstdio>
#include <set>

#include "bench.h"

namespace bench {
namespace {

namespace gl = sv::gl;

struct Ramp {
  std::size_t levels = 0;
  double max_abs = 0;
  bool monotone = true;
};

Ramp measure_ramp(gl::Evaluator& ev, float hi, gl::TexFormat format, int steps) {
  sv::ArrayF two({1, 2});
  two[0] = 0.0f;
  two[1] = hi;
  const gl::SplineTexture tex(two, format);
  std::vector<float> pos(static_cast<std::size_t>(steps + 1) * 2);
  for (int i = 0; i <= steps; ++i) {
    pos[static_cast<std::size_t>(i) * 2] = 0.0f;
    pos[static_cast<std::size_t>(i) * 2 + 1] = static_cast<float>(i) / static_cast<float>(steps);
  }
  const std::vector<float> v = ev.evaluate(tex, pos.data(), static_cast<std::size_t>(steps + 1));
  Ramp r;
  r.levels = std::set<float>(v.begin(), v.end()).size();
  for (int i = 0; i <= steps; ++i) {
    const double exact = static_cast<double>(hi) * i / steps;
    r.max_abs = std::max(r.max_abs, std::fabs(v[static_cast<std::size_t>(i)] - exact));
    if (i > 0 && v[static_cast<std::size_t>(i)] < v[static_cast<std::size_t>(i) - 1])
      r.monotone = false;
  }
  return r;
}

}  // namespace

Json run_probe(const ProbeOptions& opt) {
  Json report = report_header("probe", opt.common);
  report["steps"] = opt.steps;
  gl::EvalOptions eo;
  eo.fetch = gl::Fetch::Linear;
  gl::Evaluator ev(eo, 2);

  Json weights = Json::array();
  std::printf("\n### probe: hardware linear filtering between texels 0 and 1, %d steps\n\n",
              opt.steps);
  std::printf("%s", md_header({"format", "distinct levels", "weight bits (log2(levels-1))",
                               "max abs error vs exact ramp", "monotone"})
                        .c_str());
  for (gl::TexFormat f : {gl::TexFormat::R32F, gl::TexFormat::R16F, gl::TexFormat::R16}) {
    const Ramp r = measure_ramp(ev, 1.0f, f, opt.steps);
    const double bits = std::log2(static_cast<double>(r.levels) - 1.0);
    weights.push_back({{"format", gl::format_name(f)},
                       {"levels", r.levels},
                       {"weight_bits", bits},
                       {"every_step_distinct", r.levels == static_cast<std::size_t>(opt.steps) + 1},
                       {"max_abs", r.max_abs},
                       {"monotone", r.monotone}});
    const bool saturated = r.levels == static_cast<std::size_t>(opt.steps) + 1;
    std::printf("%s", md_row({gl::format_name(f), std::to_string(r.levels),
                              (saturated ? ">= " : "") + fmt(bits, "%.2f"), fmt(r.max_abs, "%.2e"),
                              r.monotone ? "yes" : "no"})
                          .c_str());
  }
  report["weight_resolution"] = weights;

  const float lsb = 1.0f / 65535.0f;
  Json fig3 = Json::array();
  std::printf("\n### probe (Figure 3): ramp between 0 and 1/65535, %d steps\n\n", opt.steps);
  std::printf(
      "%s",
      md_header({"format", "distinct levels", "max abs error", "max error / (1/65535)"}).c_str());
  for (gl::TexFormat f : {gl::TexFormat::R16, gl::TexFormat::R16F, gl::TexFormat::R32F}) {
    const Ramp r = measure_ramp(ev, lsb, f, opt.steps);
    fig3.push_back({{"format", gl::format_name(f)},
                    {"levels", r.levels},
                    {"max_abs", r.max_abs},
                    {"max_abs_in_lsb", r.max_abs / lsb},
                    {"monotone", r.monotone}});
    std::printf("%s", md_row({gl::format_name(f), std::to_string(r.levels), fmt(r.max_abs, "%.2e"),
                              fmt(r.max_abs / lsb, "%.3f")})
                          .c_str());
  }
  report["figure3"] = fig3;
  std::printf("\n");
  return report;
}

}  // namespace bench
