// Helpers of the GL evaluator tests (see gl_test_util.h) and the test program's main: the
// headless context lives for the whole run, the evaluators die before it, and the table of
// measured errors is printed at the end.
#include "gl_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "splineview/error.h"
#include "splineview/sampler.h"

namespace svgltest {
namespace {

struct State {
  bool tried = false;
  std::unique_ptr<sv::gl::HeadlessContext> context;
  std::string error;
  std::map<std::string, std::unique_ptr<sv::gl::Evaluator>> evaluators;
  double filter_precision = -1.0;
  struct Entry {
    double error = 0, bound = 0, ulps = 0;
    int cases = 0;
  };
  std::map<std::string, Entry> measured;
};

State& state() {
  static State s;
  return s;
}

std::string key_of(const sv::gl::EvalOptions& o, std::size_t rank) {
  return std::to_string(rank) + "/" + sv::gl::fetch_name(o.fetch) + "/" +
         sv::boundary_name(o.boundary) + "/" + std::to_string(o.derivative_axis) + "/" +
         std::to_string(o.lut.texels) + (o.lut.half_float ? "h" : "f") +
         sv::gl::lut_mapping_name(o.lut.mapping) + "/" + sv::gl::quantity_name(o.quantity) + "/" +
         std::to_string(o.axis_scale[0]) + "," + std::to_string(o.axis_scale[1]) + "," +
         std::to_string(o.axis_scale[2]);
}

class Environment : public ::testing::Environment {
 public:
  void TearDown() override {
    State& s = state();
    if (!s.measured.empty()) {
      std::printf("\nMeasured max |GPU - CPU reference| / data range (%s):\n",
                  s.context ? s.context->description().c_str() : "no context");
      std::printf("  %-52s %10s %10s %14s %6s\n", "case", "measured", "bound", "ulp(max|c|)",
                  "cases");
      for (const auto& [key, e] : s.measured)
        std::printf("  %-52s %10.3g %10.3g %14.3g %6d\n", key.c_str(), e.error, e.bound, e.ulps,
                    e.cases);
    }
    s.evaluators.clear();
    s.context.reset();
  }
};

}  // namespace

sv::gl::HeadlessContext* context() {
  State& s = state();
  if (!s.tried) {
    s.tried = true;
    try {
      s.context = std::make_unique<sv::gl::HeadlessContext>();
      std::printf("headless GL: %s (EGL platform %s)\n", s.context->description().c_str(),
                  s.context->platform().c_str());
    } catch (const std::exception& e) {
      s.error = e.what();
    }
  }
  return s.context.get();
}

const std::string& context_error() {
  return state().error;
}

std::uint32_t fresh_seed() {
  static std::uint32_t s = std::random_device{}();
  return s++;
}

sv::ArrayF random_array(const std::vector<std::size_t>& dims, std::size_t channels,
                        std::uint32_t seed, float lo, float hi) {
  sv::ArrayF a(dims, channels);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = u(rng);
  return a;
}

std::vector<float> random_positions(const std::vector<std::size_t>& dims, std::size_t m,
                                    std::uint32_t seed, double margin_lo, double margin_hi) {
  std::mt19937 rng(seed ^ 0x9e3779b9u);
  std::vector<float> p(m * dims.size());
  for (std::size_t d = 0; d < dims.size(); ++d) {
    std::uniform_real_distribution<double> u(-margin_lo,
                                             static_cast<double>(dims[d]) - 1.0 + margin_hi);
    for (std::size_t i = 0; i < m; ++i) p[i * dims.size() + d] = static_cast<float>(u(rng));
  }
  return p;
}

std::vector<double> reference(const sv::ArrayF& coefficients, const std::vector<float>& positions,
                              int degree, sv::Boundary boundary, int derivative_axis) {
  sv::SamplerOptions opt;
  opt.degree = degree;
  opt.boundary = boundary;
  opt.derivative_axis = derivative_axis;
  const std::vector<double> pd(positions.begin(), positions.end());
  return sv::sample(coefficients, pd, opt);
}

sv::gl::Evaluator& evaluator(const sv::gl::EvalOptions& opt, std::size_t rank) {
  auto& map = state().evaluators;
  const std::string key = key_of(opt, rank);
  auto it = map.find(key);
  if (it == map.end()) it = map.emplace(key, std::make_unique<sv::gl::Evaluator>(opt, rank)).first;
  return *it->second;
}

double filter_precision() {
  State& s = state();
  if (s.filter_precision >= 0) return s.filter_precision;
  // Tents along each axis of a 2-D and a 3-D texture (constant along the others), hardware
  // linear fetches at positions uniform in [-3, N+2] per axis with every boundary mode, against
  // the CPU's linear interpolation of the same data: with a slope of at most 1 per texel the
  // difference is the position error of the filter, in texels.
  double worst = 0;
  const std::vector<std::vector<std::size_t>> shapes = {{47, 61}, {29, 7, 37}};
  for (const std::vector<std::size_t>& dims : shapes) {
    const std::size_t rank = dims.size();
    for (std::size_t axis = 0; axis < rank; ++axis) {
      sv::ArrayF ramp(dims);
      std::size_t inner = 1;
      for (std::size_t d = axis + 1; d < rank; ++d) inner *= dims[d];
      // A tent min(k, N - k): slope 1 everywhere, across the periodic wrap too.
      for (std::size_t i = 0; i < ramp.size(); ++i) {
        const std::size_t k = (i / inner) % dims[axis];
        ramp[i] = static_cast<float>(std::min(k, dims[axis] - k));
      }
      const sv::gl::SplineTexture tex(ramp, sv::gl::TexFormat::R32F);
      for (sv::Boundary b : {sv::Boundary::Reflect, sv::Boundary::Mirror, sv::Boundary::Periodic}) {
        sv::gl::EvalOptions opt;
        opt.fetch = sv::gl::Fetch::Linear;
        opt.boundary = b;
        const std::size_t m = 8000;
        const std::vector<float> p =
            random_positions(dims, m, static_cast<std::uint32_t>(axis * 7 + rank));
        const std::vector<float> out = evaluator(opt, rank).evaluate(tex, p.data(), m);
        const std::vector<double> ref = reference(ramp, p, 1, b);
        worst = std::max(worst, max_abs_difference(out, ref));
      }
    }
  }
  s.filter_precision = worst;
  std::printf(
      "measured filter precision (texels; tents along each axis, 2-D and 3-D, all boundary "
      "modes, positions in [-3, N+2]): %.3g\n",
      worst);
  return worst;
}

void record(const std::string& key, double error, double bound, double ulps) {
  State::Entry& e = state().measured[key];
  e.error = std::max(e.error, error);
  e.bound = std::max(e.bound, bound);
  e.ulps = std::max(e.ulps, ulps);
  ++e.cases;
}

std::string shape_name(const std::vector<std::size_t>& dims, std::size_t channels) {
  return sv::describe_shape(dims, channels);
}

}  // namespace svgltest

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new svgltest::Environment);
  return RUN_ALL_TESTS();
}
