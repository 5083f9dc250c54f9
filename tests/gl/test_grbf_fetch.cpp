// Tests of the GLSL GRBF fetch (shaders/grbf_fetch.glsl through gl::Evaluator, Fetch::Grbf)
// against the core's double evaluation (sv::grbf_sample on the double weights of
// sv::grbf_solve<double>, at the same float positions):
//  - 2-D and 3-D, 1 and 3 channels, sigma per axis, fresh random data; positions inside, between
//    samples, near and beyond the border (out to where the sum has no terms left);
//  - with the weights' own (double) support radius and with the float working radius the viewer
//    uses (grbf_support_radius for u = 2^-24, the truncation bound recomputed for it);
//  - interpolation: the GLSL value at every sample k is f[k] within the same bound;
//  - refusals: derivatives of grbf, a radius beyond the fetch's taps, a bad sigma.
// The bound (grbf_fetch_bound) is derived from the float arithmetic of the fetch, not measured.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gl_test_util.h"
#include "splineview/error.h"
#include "splineview/grbf.h"

namespace {

using sv::gl::EvalOptions;
using sv::gl::Fetch;

constexpr double kU = 5.960464477539063e-08;  // 2^-24, the unit roundoff of float
constexpr double kPi = 3.14159265358979323846;

// The GLSL value's distance from the double truncated sum, for weights w (max |w| = W) read as
// floats, sigma_d and radius R_d per axis, S_d = 1 + sqrt(2 pi) sigma_d (a bound on the sum of
// one axis's Gaussian factors over all integers, grbf.h):
//  - the weights rounded to float: u W prod S;
//  - each axis's factor exp(c t^2), c = -1/(2 sigma^2) with sigma a float uniform: the argument
//    x = c t^2 carries about 6 roundings (sigma, sigma^2, the division, t, t^2, the product),
//    i.e. 6u|x| absolute, and GLSL's exp may err by 3 + 2|x| ulp (GLSL 4.50, 4.7.1), at most
//    (6 + 4|x|) u relatively: (6 + 10 |x|) u per factor. Summed over the integers with the
//    Gaussian's weight, sum_t g(t) (6 + 5 t^2 / sigma^2) <= 6 S + 5 (sqrt(2 pi) sigma + 2/e)
//    <= 11 S, so u W prod S * 11 per axis;
//  - the fma chains (n_d = floor(2 R_d) + 1 taps per axis, nested): (sum_d n_d) u W prod S;
//  - the box: float ceil/floor of p -+ R may keep or drop the sample at distance R (to rounding)
//    that the double box drops or keeps: W sum_d g_d(R_d) prod_{e != d} S_e;
//  - plus the truncation bound of the weights (what the box drops at all), as the brief of
//    the GRBF evaluation states it (grbf.h), and the double solve's own residual (cond eps_d).
double grbf_fetch_bound(const sv::GrbfWeights<double>& g) {
  const std::size_t rank = g.sigma.size();
  double prod_s = 1.0, taps = 0.0, edge = 0.0;
  for (std::size_t d = 0; d < rank; ++d) {
    prod_s *= 1.0 + std::sqrt(2 * kPi) * g.sigma[d];
    taps += std::floor(2 * g.radius[d]) + 1;
  }
  for (std::size_t d = 0; d < rank; ++d) {
    double others = 1.0;
    for (std::size_t e = 0; e < rank; ++e)
      if (e != d) others *= 1.0 + std::sqrt(2 * kPi) * g.sigma[e];
    edge += std::exp(-g.radius[d] * g.radius[d] / (2 * g.sigma[d] * g.sigma[d])) * others;
  }
  const double w = g.max_abs_weight;
  return kU * w * prod_s * (1.0 + 11.0 * static_cast<double>(rank) + taps) + w * edge +
         g.truncation_bound + g.system.condition * 2.2e-16 * w * prod_s;
}

// The same weights with the float working precision's support radius (what the viewer draws
// with) and its truncation bound.
sv::GrbfWeights<double> with_float_radius(sv::GrbfWeights<double> g) {
  g.radius = sv::grbf_support_radius(g.sigma, g.max_abs_weight, g.max_abs_sample, kU);
  g.truncation_bound = sv::grbf_truncation_bound(g.sigma, g.radius, g.max_abs_weight);
  return g;
}

EvalOptions grbf_options(const sv::GrbfWeights<double>& g) {
  EvalOptions opt;
  opt.fetch = Fetch::Grbf;
  opt.grbf.sigma = g.sigma;
  opt.grbf.radius = g.radius;
  return opt;
}

// Positions: uniform over the grid widened by R + 2 on every side (border and beyond), the
// half-integer midpoints of a few rows, and some far outside (no terms: 0 both).
std::vector<float> test_positions(const std::vector<std::size_t>& dims, double margin,
                                  std::uint32_t seed) {
  std::vector<float> p = svgltest::random_positions(dims, 1500, seed, margin, margin);
  const std::size_t rank = dims.size();
  for (std::size_t i = 0; i < 60; ++i)
    for (std::size_t d = 0; d < rank; ++d)
      p.push_back(static_cast<float>(
          std::fmod(static_cast<double>(i * (d + 1)) * 0.5, static_cast<double>(dims[d]))));
  for (std::size_t d = 0; d < rank; ++d) p.push_back(-60.0f);
  for (std::size_t d = 0; d < rank; ++d) p.push_back(static_cast<float>(dims[d]) + 45.5f);
  return p;
}

struct Case {
  std::vector<std::size_t> dims;
  std::size_t channels;
  std::vector<double> sigma;
};

void check_case(const Case& c, bool float_radius) {
  const std::uint32_t seed = svgltest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + ", " + svgltest::shape_name(c.dims, c.channels) +
               (float_radius ? ", float radius" : ", double radius"));
  const sv::ArrayF f = svgltest::random_array(c.dims, c.channels, seed, -1.0f, 1.0f);
  sv::GrbfOptions so;
  so.sigma = c.sigma;
  sv::GrbfWeights<double> g = sv::grbf_solve(sv::ArrayD::from(f), so);
  if (float_radius) g = with_float_radius(std::move(g));
  const double bound = grbf_fetch_bound(g);

  sv::gl::Evaluator ev(grbf_options(g), c.dims.size());
  const sv::gl::SplineTexture tex(sv::ArrayF::from(g.w), sv::gl::TexFormat::R32F);
  const std::size_t rank = c.dims.size();
  double margin = 2.0;
  for (double r : g.radius) margin = std::max(margin, r + 2.0);
  const std::vector<float> pos = test_positions(c.dims, margin, seed);
  const std::size_t m = pos.size() / rank;
  const std::vector<float> gpu = ev.evaluate(tex, pos.data(), m);
  std::vector<double> posd(pos.begin(), pos.end());
  std::vector<double> ref(m * c.channels);
  sv::grbf_sample(g, posd.data(), m, ref.data());
  double worst = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i)
    worst = std::max(worst, std::fabs(static_cast<double>(gpu[i]) - ref[i]));
  EXPECT_LE(worst, bound) << "max |GLSL - grbf_sample| over " << m << " positions";
  // The far positions have no samples within the radius: exactly 0.
  for (std::size_t ch = 0; ch < c.channels; ++ch) {
    EXPECT_EQ(gpu[(m - 1) * c.channels + ch], 0.0f);
    EXPECT_EQ(gpu[(m - 2) * c.channels + ch], 0.0f);
  }
  svgltest::record("grbf " + svgltest::shape_name(c.dims, c.channels) +
                       (float_radius ? " float R" : " double R"),
                   worst, bound, worst / (kU * g.max_abs_weight));

  // Interpolation: s(k) = f[k] at every sample.
  std::vector<float> samples_at;
  const std::size_t points = f.points();
  for (std::size_t i = 0; i < points; ++i) {
    std::size_t rest = i;
    std::vector<float> k(rank);
    for (std::size_t d = rank; d-- > 0;) {
      k[d] = static_cast<float>(rest % c.dims[d]);
      rest /= c.dims[d];
    }
    samples_at.insert(samples_at.end(), k.begin(), k.end());
  }
  const std::vector<float> at = ev.evaluate(tex, samples_at.data(), points);
  double worst_interp = 0.0;
  for (std::size_t i = 0; i < points * c.channels; ++i)
    worst_interp = std::max(worst_interp, std::fabs(static_cast<double>(at[i]) - f.data()[i]));
  EXPECT_LE(worst_interp, bound) << "max |s(k) - f[k]|";
  svgltest::record("grbf s(k)=f[k] " + svgltest::shape_name(c.dims, c.channels) +
                       (float_radius ? " float R" : " double R"),
                   worst_interp, bound, worst_interp / (kU * g.max_abs_weight));
}

TEST(GlGrbf, MatchesDoubleSum2D) {
  SVGL_REQUIRE_CONTEXT();
  for (bool fr : {false, true}) {
    check_case({{23, 31}, 1, {1.0}}, fr);
    check_case({{19, 26}, 3, {0.9, 1.15}}, fr);
    check_case({{17, 20}, 1, {0.6, 0.8}}, fr);
  }
}

TEST(GlGrbf, MatchesDoubleSum3D) {
  SVGL_REQUIRE_CONTEXT();
  for (bool fr : {false, true}) {
    check_case({{7, 9, 11}, 1, {1.0, 0.8, 0.7}}, fr);
    check_case({{6, 8, 7}, 3, {0.75}}, fr);
  }
}

// The weights of the float solve, as the viewer uploads them (exact in R32F), against the
// double sum of the same float weights (sv::grbf_sample<float> accumulates in double).
TEST(GlGrbf, FloatWeightsMatchTheirDoubleSum) {
  SVGL_REQUIRE_CONTEXT();
  const std::uint32_t seed = svgltest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const sv::ArrayF f = svgltest::random_array({21, 24}, 1, seed);
  sv::GrbfOptions so;
  so.sigma = {1.0};
  const sv::GrbfWeights<float> gf = sv::grbf_solve(f, so);
  // The bound's terms from the float weights' own figures (no rounding of the weights now).
  sv::GrbfWeights<double> shape;
  shape.sigma = gf.sigma;
  shape.radius = gf.radius;
  shape.max_abs_weight = gf.max_abs_weight;
  shape.truncation_bound = gf.truncation_bound;
  shape.system = gf.system;
  const double bound = grbf_fetch_bound(shape);
  EvalOptions opt;
  opt.fetch = Fetch::Grbf;
  opt.grbf.sigma = gf.sigma;
  opt.grbf.radius = gf.radius;
  sv::gl::Evaluator ev(opt, 2);
  const sv::gl::SplineTexture tex(gf.w, sv::gl::TexFormat::R32F);
  const std::vector<float> pos = test_positions({21, 24}, gf.radius[0] + 2.0, seed);
  const std::size_t m = pos.size() / 2;
  const std::vector<float> gpu = ev.evaluate(tex, pos.data(), m);
  std::vector<double> posd(pos.begin(), pos.end()), ref(m);
  sv::grbf_sample(gf, posd.data(), m, ref.data());
  double worst = 0.0;
  for (std::size_t i = 0; i < m; ++i)
    worst = std::max(worst, std::fabs(static_cast<double>(gpu[i]) - ref[i]));
  EXPECT_LE(worst, bound);
  svgltest::record("grbf float weights 21x24", worst, bound, worst / (kU * gf.max_abs_weight));
}

// A grid render gives what evaluate gives at the grid's float positions (same fetch).
TEST(GlGrbf, GridMatchesPositions) {
  SVGL_REQUIRE_CONTEXT();
  const sv::ArrayF f = svgltest::random_array({12, 15}, 1, svgltest::fresh_seed());
  sv::GrbfWeights<double> g = with_float_radius(sv::grbf_solve(sv::ArrayD::from(f)));
  sv::gl::Evaluator ev(grbf_options(g), 2);
  const sv::gl::SplineTexture tex(sv::ArrayF::from(g.w), sv::gl::TexFormat::R32F);
  sv::gl::GridMapping grid;
  grid.rows = 40;
  grid.cols = 50;
  grid.origin = {-2.25, -3.5, 0.0};
  grid.step_row = {0.4, 0.05, 0.0};
  grid.step_col = {-0.03, 0.42, 0.0};
  const sv::ArrayF out = ev.render_grid(tex, grid);
  std::vector<float> pos;
  for (std::size_t r = 0; r < grid.rows; ++r)
    for (std::size_t c = 0; c < grid.cols; ++c)
      for (std::size_t d = 0; d < 2; ++d)
        pos.push_back(static_cast<float>(grid.origin[d] +
                                         static_cast<double>(r) * grid.step_row[d] +
                                         static_cast<double>(c) * grid.step_col[d]));
  const std::vector<float> at = ev.evaluate(tex, pos.data(), grid.rows * grid.cols);
  for (std::size_t i = 0; i < at.size(); ++i) ASSERT_EQ(out.data()[i], at[i]) << "pixel " << i;
}

TEST(GlGrbf, Refusals) {
  EXPECT_EQ(sv::gl::parse_fetch("grbf"), Fetch::Grbf);
  EXPECT_TRUE(sv::gl::fetch_grbf(Fetch::Grbf));
  EXPECT_FALSE(sv::gl::fetch_prefiltered(Fetch::Grbf));
  const sv::gl::Quantity dx = sv::gl::parse_quantity("dx", 2);
  EXPECT_NE(sv::gl::quantity_problem(Fetch::Grbf, dx, 2).find("value only"), std::string::npos);
  EXPECT_TRUE(sv::gl::quantity_problem(Fetch::Grbf, {}, 2).empty());
  sv::gl::GrbfFetchOptions g;
  g.sigma = {1.0};
  g.radius = {40.0};
  EXPECT_THROW(sv::gl::grbf_uniforms(g, 2), sv::Error);
  g.radius = {6.0};
  g.sigma = {0.0};
  EXPECT_THROW(sv::gl::grbf_uniforms(g, 2), sv::Error);
  g.sigma = {1.0, 1.0, 1.0};
  EXPECT_THROW(sv::gl::grbf_uniforms(g, 2), sv::Error);
  g.sigma = {1.0, 0.5};
  const auto u = sv::gl::grbf_uniforms(g, 2);  // texture order: x is the last array axis
  EXPECT_EQ(u[0][0], 0.5);
  EXPECT_EQ(u[0][1], 1.0);
  SVGL_REQUIRE_CONTEXT();
  EvalOptions opt;
  opt.fetch = Fetch::Grbf;
  opt.quantity = dx;
  EXPECT_THROW(sv::gl::Evaluator(opt, 2), sv::Error);
  opt.quantity = {};
  opt.derivative_axis = 0;
  EXPECT_THROW(sv::gl::Evaluator(opt, 2), sv::Error);
}

}  // namespace
