// Tests of the zoom and volume modes' GRBF weights (app/viewer/grbf_views.h), without GL: no
// solve while no view shows the GRBF, the debounce of the sigma slider, the two precisions of a
// solve (float weights that interpolate the float samples, double weights that interpolate the
// double values, both checked against a dense numpy-free oracle: s(k) = f[k] through the core's
// untruncated sum), the refusal of a sigma singular in float as the core's sentence, the size
// limit, the report's figures, and the label wrapping.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>

#include "grbf_views.h"
#include "splineview/grbf.h"

namespace {

using sv::viewer::GrbfSolution;
using sv::viewer::GrbfViews;

std::shared_ptr<const sv::ArrayF> random_image(std::size_t h, std::size_t w, unsigned seed) {
  auto a = std::make_shared<sv::ArrayF>(std::vector<std::size_t>{h, w});
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (std::size_t i = 0; i < a->size(); ++i) (*a)[i] = u(rng);
  return a;
}

// max |s(k) - f[k]| over the samples, s the untruncated sum of the weights.
template <class T, class U>
double interpolation_error(const sv::GrbfWeights<T>& g, const sv::Array<U>& f) {
  const std::size_t h = f.dim(0), w = f.dim(1);
  std::vector<double> pos;
  for (std::size_t y = 0; y < h; ++y)
    for (std::size_t x = 0; x < w; ++x) {
      pos.push_back(static_cast<double>(y));
      pos.push_back(static_cast<double>(x));
    }
  std::vector<double> s(h * w);
  sv::GrbfEvalOptions eo;
  eo.truncate = false;
  sv::grbf_sample(g, pos.data(), h * w, s.data(), eo);
  double worst = 0;
  for (std::size_t i = 0; i < h * w; ++i)
    worst = std::max(worst, std::fabs(s[i] - static_cast<double>(f[i])));
  return worst;
}

TEST(GrbfViews, SolvesOnlyWhenWantedAndAfterTheDebounce) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  auto samples = random_image(12, 17, seed);
  auto exact = std::make_shared<const sv::ArrayD>(sv::ArrayD::from(*samples));
  GrbfViews v;
  v.reset(samples, exact);
  EXPECT_FALSE(v.update(false, 1.0, 10.0, false));  // no view shows it
  EXPECT_FALSE(v.solving());
  EXPECT_TRUE(v.settled(false, 1.0));
  EXPECT_FALSE(v.settled(true, 1.0));
  v.sigma_changed(10.0);
  EXPECT_FALSE(v.update(true, 0.9, 10.0 + 0.5 * GrbfViews::kDebounceS, false));  // resting
  EXPECT_FALSE(v.solving());
  EXPECT_NE(v.status(0.9).find("not solved"), std::string::npos);
  (void)v.update(true, 0.9, 10.0 + 2 * GrbfViews::kDebounceS, false);     // starts (may finish)
  const std::optional<GrbfSolution> s = v.update(true, 0.9, 11.0, true);  // waits
  const GrbfSolution* shown = v.shown();
  ASSERT_NE(shown, nullptr);
  EXPECT_EQ(shown->sigma, 0.9);
  EXPECT_TRUE(shown->error.empty()) << shown->error;
  ASSERT_TRUE(shown->gpu && shown->exact);
  EXPECT_TRUE(v.settled(true, 0.9));
  EXPECT_TRUE(v.status(0.9).empty());
  // The float weights interpolate the float samples within the float solve's error (condition
  // times u, relative to the weights' size), the double ones the values to double rounding.
  const double cond = shown->gpu->system.condition;
  EXPECT_LE(interpolation_error(*shown->gpu, *samples),
            8 * cond * 6e-8 * shown->gpu->max_abs_weight);
  EXPECT_LE(interpolation_error(*shown->exact, *exact),
            8 * cond * 1.2e-16 * shown->exact->max_abs_weight);
  // Same sigma again: nothing to do.
  EXPECT_FALSE(v.update(true, 0.9, 20.0, true));
  // The report names what a user needs.
  const nlohmann::json j = v.report();
  EXPECT_EQ(j["state"], "solved");
  EXPECT_EQ(j["sigma"], 0.9);
  EXPECT_EQ(j["condition"].get<double>(), cond);
  EXPECT_EQ(j["radius"].size(), 2u);
  EXPECT_EQ(j["condition_per_axis"].size(), 2u);
  // The fetch options carry the float radius and say whether alpha is opaque.
  const sv::gl::GrbfFetchOptions o = v.fetch_options(true);
  EXPECT_EQ(o.radius, shown->gpu->radius);
  EXPECT_EQ(o.sigma, shown->gpu->sigma);
  EXPECT_TRUE(o.opaque);
}

TEST(GrbfViews, RefusesASigmaSingularInFloat) {
  auto samples = random_image(20, 26, std::random_device{}());
  GrbfViews v;
  v.reset(samples, nullptr);
  v.update(true, 1.6, 0.0, true);
  ASSERT_NE(v.shown(), nullptr);
  const std::string status = v.status(1.6);
  EXPECT_NE(status.find("sigma 1.6"), std::string::npos) << status;
  EXPECT_NE(status.find("singular in float"), std::string::npos) << status;
  EXPECT_NE(status.find("condition number"), std::string::npos) << status;
  EXPECT_FALSE(v.shown()->gpu);
  EXPECT_EQ(v.report()["state"], "refused");
  EXPECT_TRUE(v.settled(true, 1.6));  // refused is settled: no retry loop
  // A smaller sigma then solves (no exact values: no reference weights).
  v.update(true, 1.0, 1.0, true);
  ASSERT_NE(v.shown(), nullptr);
  EXPECT_TRUE(v.shown()->gpu);
  EXPECT_FALSE(v.shown()->exact);
}

TEST(GrbfViews, RefusesDataAboveTheLimitAndSaysWhenThereIsNone) {
  const sv::ArrayF big({sv::viewer::kGrbfMaxSamples / 1024 + 1, 1024});
  const GrbfSolution s = sv::viewer::solve_grbf(big, nullptr, 1.0);
  EXPECT_NE(s.error.find("GRBF is offered up to 16 Mi samples"), std::string::npos) << s.error;
  EXPECT_FALSE(s.gpu);
  GrbfViews none;
  EXPECT_NE(none.status(1.0).find("not kept"), std::string::npos);
  EXPECT_TRUE(none.settled(true, 1.0));
}

TEST(GrbfViews, WrapsLabels) {
  const std::string text = "GRBF: sigma 1.6 makes the 20x26 system singular in float precision";
  const std::string w = sv::viewer::wrap_words(text, 20);
  std::size_t start = 0, longest = 0;
  for (std::size_t i = 0; i <= w.size(); ++i)
    if (i == w.size() || w[i] == '\n') {
      longest = std::max(longest, i - start);
      start = i + 1;
    }
  EXPECT_LE(longest, 22u) << w;
  std::string joined = w;
  for (char& c : joined)
    if (c == '\n') c = ' ';
  EXPECT_EQ(joined, text);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
