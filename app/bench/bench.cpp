// Shared pieces of splinebench (see bench.h): context, test data, positions, the CPU double
// reference, statistics and report output.
#include "bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <thread>

#include "splineview/error.h"
#include "splineview/gl/gl.h"
#include "splineview/io.h"
#include "splineview/prefilter.h"
#include "splineview/sampler.h"
#include "splineview/synthetic.h"

namespace bench {

namespace gl = sv::gl;

gl::HeadlessContext& context() {
  static gl::HeadlessContext ctx;
  return ctx;
}

Json machine_json() {
  gl::HeadlessContext& ctx = context();
  return Json{{"renderer", ctx.description()},
              {"egl_platform", ctx.platform()},
              {"cpu_threads", std::thread::hardware_concurrency()}};
}

Json report_header(const char* subcommand, const Common& c) {
  return Json{{"program", "splinebench"},
              {"subcommand", subcommand},
              {"quick", c.quick},
              {"seed", c.seed},
              {"machine", machine_json()}};
}

void write_report(const Json& report, const Common& c) {
  if (c.out.empty()) return;
  const std::string tmp = c.out + ".tmp";
  {
    std::ofstream f(tmp);
    if (!f) throw sv::Error(c.out + ": cannot open for writing");
    f << report.dump(2) << "\n";
    if (!f) throw sv::Error(c.out + ": write failed");
  }
  if (std::rename(tmp.c_str(), c.out.c_str()) != 0)
    throw sv::Error(c.out + ": cannot rename the temporary file into place");
}

sv::ArrayF random_array(std::vector<std::size_t> dims, std::size_t channels, std::uint64_t seed) {
  sv::ArrayF a(std::move(dims), channels);
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (float& v : a.vec()) v = u(gen);
  return a;
}

sv::ArrayF load_asset(const Common& c, const std::string& name) {
  const std::string path = (c.assets.empty() ? std::string("assets") : c.assets) + "/" + name;
  sv::Loaded l = sv::load_image(path);
  sv::scale_to_unit(l);  // the studies work on [0, 1] images
  return sv::ArrayF::from(l.array);
}

sv::ArrayF marschner_lobb(std::size_t n) {
  return sv::marschner_lobb(n);
}

sv::ArrayF smooth_image(std::size_t height, std::size_t width) {
  sv::ArrayF a({height, width});
  const double h = static_cast<double>(height), w = static_cast<double>(width);
  for (std::size_t y = 0; y < height; ++y)
    for (std::size_t x = 0; x < width; ++x) {
      const double u = static_cast<double>(x) / w, v = static_cast<double>(y) / h;
      const double r2 = (u - 0.5) * (u - 0.5) + (v - 0.5) * (v - 0.5);
      const double s = 0.4 * std::sin(2 * M_PI * (7 * u + 3 * v)) +
                       0.3 * std::sin(2 * M_PI * (2 * u - 9 * v) + 1.0) +
                       0.3 * std::cos(2 * M_PI * 60 * r2);
      a.at2(y, x) = static_cast<float>(0.5 + 0.5 * s);
    }
  return a;
}

sv::ArrayF cubic_coefficients(const sv::ArrayF& samples, sv::Boundary boundary) {
  sv::ArrayF c = samples;
  sv::prefilter(c, sv::PrefilterOptions{3, boundary, 0});
  return c;
}

sv::ArrayF stored_as(const sv::ArrayF& a, gl::TexFormat format) {
  sv::ArrayF s = a;
  for (float& v : s.vec()) v = gl::texel_value(v, format);
  return s;
}

std::vector<float> random_positions(const std::vector<std::size_t>& dims, std::size_t m, double lo,
                                    double hi_offset, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  const std::size_t rank = dims.size();
  std::vector<float> p(m * rank);
  std::vector<std::uniform_real_distribution<double>> u;
  for (std::size_t d = 0; d < rank; ++d)
    u.emplace_back(lo, static_cast<double>(dims[d]) - 1.0 + hi_offset);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t d = 0; d < rank; ++d) p[i * rank + d] = static_cast<float>(u[d](gen));
  return p;
}

namespace {
template <class T>
std::vector<double> reference_t(const sv::Array<T>& coeffs, const std::vector<float>& positions,
                                int degree, sv::Boundary boundary) {
  const std::vector<double> p(positions.begin(), positions.end());
  const std::size_t m = p.size() / coeffs.rank();
  std::vector<double> out(m * coeffs.channels());
  sv::sample(coeffs, p.data(), m, out.data(), sv::SamplerOptions{degree, boundary, -1, 0});
  return out;
}
}  // namespace

std::vector<double> reference(const sv::ArrayF& coeffs, const std::vector<float>& positions,
                              int degree, sv::Boundary boundary) {
  return reference_t(coeffs, positions, degree, boundary);
}
std::vector<double> reference(const sv::ArrayD& coeffs, const std::vector<float>& positions,
                              int degree, sv::Boundary boundary) {
  return reference_t(coeffs, positions, degree, boundary);
}

Stats error_stats(const std::vector<float>& got, const std::vector<double>& want) {
  if (got.size() != want.size())
    throw sv::Error("internal: " + std::to_string(got.size()) + " results for " +
                    std::to_string(want.size()) + " reference values");
  Stats s;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double e = static_cast<double>(got[i]) - want[i];
    s.max_abs = std::isnan(e) ? NAN : std::max(s.max_abs, std::fabs(e));
    s.sse += e * e;
  }
  s.count = got.size();
  s.rms = s.count ? std::sqrt(s.sse / static_cast<double>(s.count)) : 0.0;
  return s;
}

Json stats_json(const Stats& s) {
  const auto num = [](double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); };
  return Json{
      {"max_abs", num(s.max_abs)}, {"rms", num(s.rms)}, {"sse", num(s.sse)}, {"count", s.count}};
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

bool gl_timer_trusted() {
  static const bool trusted = (context(), gl::timer_queries_meaningful());
  return trusted;
}

FrameTime time_grid(gl::Evaluator& ev, const gl::SplineTexture& tex, const gl::GridMapping& grid,
                    int repeats, sv::ArrayF* result) {
  FrameTime t;
  const auto start = std::chrono::steady_clock::now();
  sv::ArrayF r = ev.render_grid(tex, grid, &t.gpu_ms, repeats);
  const double wall =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  t.wall_ms = wall / repeats;
  t.timer_ok = gl_timer_trusted() && t.gpu_ms >= 0 && t.gpu_ms * repeats <= wall + 1.0;
  if (result) *result = std::move(r);
  return t;
}

Json frame_time_json(const FrameTime& t) {
  return Json{{"ms", t.ms()},
              {"source", t.source()},
              {"gpu_timer_ms", t.timer_ok ? Json(t.gpu_ms) : Json(nullptr)},
              {"wall_ms", t.wall_ms}};
}

int fetch_degree(gl::Fetch f) {
  switch (f) {
    case gl::Fetch::Nearest:
      return 0;
    case gl::Fetch::Linear:
      return 1;
    default:
      return 3;
  }
}

const std::vector<gl::Fetch>& all_fetches() {
  static const std::vector<gl::Fetch> v = {gl::Fetch::Nearest,         gl::Fetch::Linear,
                                           gl::Fetch::CubicUnfiltered, gl::Fetch::CubicLut,
                                           gl::Fetch::CubicOtf,        gl::Fetch::CubicPrecise};
  return v;
}

std::string md_row(const std::vector<std::string>& cells) {
  std::string s = "|";
  for (const std::string& c : cells) s += " " + c + " |";
  return s + "\n";
}

std::string md_header(const std::vector<std::string>& cells) {
  std::string s = md_row(cells) + "|";
  for (std::size_t i = 0; i < cells.size(); ++i) s += "---|";
  return s + "\n";
}

std::string fmt(double v, const char* f) {
  if (std::isnan(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace bench
