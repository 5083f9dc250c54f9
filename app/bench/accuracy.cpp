// splinebench accuracy: the error of every GLSL fetch flavour and texture format against the CPU
// double reference (sv::sample on the same float coefficients, or for nearest / linear / the
// unfiltered cubic the CPU spline of the matching degree on the same samples), at identical
// float positions, uniform in [-2, N+1] per axis (edges and beyond) and inside [0, N-1] only.
// Data: random 2-D and 3-D arrays in [0, 1], the bundled photographs (grey and RGB) and the
// Marschner-Lobb volume. The prefiltered flavours are measured under every boundary mode.
// For R16F the error is also given against the reference on the half-rounded texture contents,
// which separates the storage rounding from the filtering error.
#include <cstdio>
#include <map>
#include <tuple>

#include "bench.h"
#include "splineview/error.h"

namespace bench {
namespace {

namespace gl = sv::gl;

struct Dataset {
  std::string name;
  sv::ArrayF samples;
};

struct PositionSet {
  const char* name;
  double lo, hi_offset;  // uniform in [lo, N - 1 + hi_offset] per axis
};
const PositionSet kPositionSets[] = {{"full", -2.0, 2.0}, {"interior", 0.0, 0.0}};

std::string dims_string(const sv::ArrayF& a) {
  std::string s;
  for (std::size_t d : a.dims()) s += (s.empty() ? "" : "x") + std::to_string(d);
  if (a.channels() > 1) s += "x" + std::to_string(a.channels()) + "ch";
  return s;
}

}  // namespace

Json run_accuracy(const AccuracyOptions& opt) {
  const Common& c = opt.common;
  const std::size_t m = opt.positions ? opt.positions : (c.quick ? 1u << 14 : 1u << 18);
  Json report = report_header("accuracy", c);
  report["positions_per_case"] = m;
  report["position_sets"] = {{"full", "uniform in [-2, N+1] per axis"},
                             {"interior", "uniform in [0, N-1] per axis"}};

  const std::size_t n2 = c.quick ? 64 : 256, n3 = c.quick ? 24 : 64, nml = c.quick ? 32 : 64;
  std::vector<Dataset> sets;
  sets.push_back({"random-2d", random_array({n2, n2}, 1, c.seed)});
  sets.push_back({"ascent", load_asset(c, "ascent.png")});
  sets.push_back({"coffee-rgb", load_asset(c, "coffee.png")});
  sets.push_back({"random-3d", random_array({n3, n3, n3}, 1, c.seed + 1)});
  sets.push_back({"marschner-lobb", marschner_lobb(nml)});

  const gl::TexFormat formats[] = {gl::TexFormat::R32F, gl::TexFormat::R16F};
  const sv::Boundary boundaries[] = {sv::Boundary::Reflect, sv::Boundary::Mirror,
                                     sv::Boundary::Periodic};
  std::map<std::tuple<int, int, std::size_t>, std::unique_ptr<gl::Evaluator>> evaluators;
  const auto evaluator = [&](gl::Fetch f, sv::Boundary b, std::size_t rank) -> gl::Evaluator& {
    auto& e = evaluators[{static_cast<int>(f), static_cast<int>(b), rank}];
    if (!e) {
      gl::EvalOptions eo;
      eo.fetch = f;
      eo.boundary = b;
      e = std::make_unique<gl::Evaluator>(eo, rank);
    }
    return *e;
  };

  Json rows = Json::array();
  Json data_json = Json::array();
  for (std::size_t si = 0; si < sets.size(); ++si) {
    const Dataset& ds = sets[si];
    const std::size_t rank = ds.samples.rank();
    data_json.push_back({{"name", ds.name}, {"shape", dims_string(ds.samples)}});
    std::fprintf(stderr, "accuracy: %s (%s)\n", ds.name.c_str(), dims_string(ds.samples).c_str());
    std::vector<std::vector<float>> positions;
    for (std::size_t p = 0; p < 2; ++p)
      positions.push_back(random_positions(ds.samples.dims(), m, kPositionSets[p].lo,
                                           kPositionSets[p].hi_offset,
                                           c.seed * 1000 + si * 10 + p));
    for (sv::Boundary b : boundaries) {
      const sv::ArrayF coeffs = cubic_coefficients(ds.samples, b);
      // Reference values per (reads coefficients, degree, position set, stored format).
      std::map<std::tuple<bool, int, std::size_t, int>, std::vector<double>> refs;
      const auto ref = [&](bool pre, int degree, std::size_t p,
                           gl::TexFormat tfstored) -> const std::vector<double>& {
        auto& r = refs[{pre, degree, p, static_cast<int>(tfstored)}];
        if (r.empty()) {
          const sv::ArrayF& data = pre ? coeffs : ds.samples;
          r = tfstored == gl::TexFormat::R32F
                  ? reference(data, positions[p], degree, b)
                  : reference(stored_as(data, tfstored), positions[p], degree, b);
        }
        return r;
      };
      for (gl::TexFormat tf : formats) {
        const gl::SplineTexture tex_samples(ds.samples, tf), tex_coeffs(coeffs, tf);
        for (gl::Fetch f : all_fetches()) {
          const bool pre = gl::fetch_prefiltered(f);
          if (!pre && b != sv::Boundary::Reflect) continue;
          gl::Evaluator& ev = evaluator(f, b, rank);
          for (std::size_t p = 0; p < 2; ++p) {
            const std::vector<float> got =
                ev.evaluate(pre ? tex_coeffs : tex_samples, positions[p].data(), m);
            Json row{{"dataset", ds.name},
                     {"rank", rank},
                     {"fetch", gl::fetch_name(f)},
                     {"format", gl::format_name(tf)},
                     {"boundary", sv::boundary_name(b)},
                     {"positions", kPositionSets[p].name},
                     {"reference_degree", fetch_degree(f)},
                     {"reference_on", pre ? "float coefficients" : "float samples"},
                     {"error", stats_json(error_stats(
                                   got, ref(pre, fetch_degree(f), p, gl::TexFormat::R32F)))}};
            if (tf != gl::TexFormat::R32F)
              row["error_vs_stored"] =
                  stats_json(error_stats(got, ref(pre, fetch_degree(f), p, tf)));
            rows.push_back(row);
          }
        }
      }
    }
  }
  report["datasets"] = data_json;
  report["results"] = rows;

  // Markdown summaries.
  const auto find = [&](const std::string& ds, gl::Fetch f, gl::TexFormat fm, sv::Boundary b,
                        const char* pos) -> const Json* {
    for (const Json& r : rows)
      if (r["dataset"] == ds && r["fetch"] == gl::fetch_name(f) &&
          r["format"] == gl::format_name(fm) && r["boundary"] == sv::boundary_name(b) &&
          r["positions"] == pos)
        return &r;
    return nullptr;
  };
  const auto cell = [](const Json* r, const char* key = "error") -> std::string {
    if (!r || !r->contains(key)) return "-";
    const Json& e = (*r)[key];
    if (e["max_abs"].is_null()) return "NaN";
    return fmt(e["max_abs"].get<double>(), "%.2e") + " (" + fmt(e["rms"].get<double>(), "%.1e") +
           ")";
  };
  std::vector<std::string> head = {"flavour", "format"};
  for (const Dataset& ds : sets) head.push_back(ds.name + " " + dims_string(ds.samples));
  for (const char* pos : {"full", "interior"}) {
    std::printf(
        "\n### accuracy: max abs error (RMS) vs the CPU double reference, reflect, "
        "positions %s\n\n",
        pos[0] == 'f' ? "uniform in [-2, N+1]" : "inside [0, N-1]");
    std::printf("%s", md_header(head).c_str());
    for (gl::TexFormat fm : formats)
      for (gl::Fetch f : all_fetches()) {
        std::vector<std::string> line = {gl::fetch_name(f), gl::format_name(fm)};
        for (const Dataset& ds : sets)
          line.push_back(cell(find(ds.name, f, fm, sv::Boundary::Reflect, pos)));
        std::printf("%s", md_row(line).c_str());
      }
  }
  std::printf(
      "\n### accuracy: R16F against the half-rounded texture contents (filtering error "
      "alone), reflect, positions in [-2, N+1]\n\n");
  std::printf("%s", md_header(head).c_str());
  for (gl::Fetch f : all_fetches()) {
    std::vector<std::string> line = {gl::fetch_name(f), "r16f"};
    for (const Dataset& ds : sets)
      line.push_back(cell(find(ds.name, f, gl::TexFormat::R16F, sv::Boundary::Reflect, "full"),
                          "error_vs_stored"));
    std::printf("%s", md_row(line).c_str());
  }
  std::vector<std::string> bhead = {"flavour", "boundary"};
  for (const Dataset& ds : sets) bhead.push_back(ds.name);
  std::printf(
      "\n### accuracy: boundary modes, R32F, max abs error (RMS), positions in [-2, N+1]\n\n");
  std::printf("%s", md_header(bhead).c_str());
  for (gl::Fetch f : {gl::Fetch::CubicLut, gl::Fetch::CubicOtf, gl::Fetch::CubicPrecise})
    for (sv::Boundary b : boundaries) {
      std::vector<std::string> line = {gl::fetch_name(f), sv::boundary_name(b)};
      for (const Dataset& ds : sets)
        line.push_back(cell(find(ds.name, f, gl::TexFormat::R32F, b, "full")));
      std::printf("%s", md_row(line).c_str());
    }
  std::printf("\n");
  return report;
}

}  // namespace bench
