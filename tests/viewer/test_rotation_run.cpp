// The repeated-rotation engine (app/viewer/rotation_run.h) in a headless EGL context: its
// results and measurements against independent recomputations (sv::rotate on the CPU, the
// splinetool GL code path rebuilt here), the expected ranking of the methods, its memory
// budget, and its refusals. Exits 77 (skipped, with the reason) without a GL 4.5 context.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "image_document.h"
#include "rotate_mode.h"
#include "rotation_run.h"
#include "splineview/error.h"
#include "splineview/gl/gl.h"
#include "splineview/gl/grids.h"
#include "splineview/gl/headless.h"
#include "splineview/io.h"
#include "splineview/metrics.h"
#include "splineview/prefilter.h"
#include "splineview/resample.h"

#include "method_pass.h"

namespace {

// An image file as the viewer's rotate mode works on it: values in [0, 1].
sv::ArrayD unit_image(const std::string& path) {
  sv::Loaded l = sv::load_image(path);
  sv::scale_to_unit(l);
  return std::move(l.array);
}

using sv::viewer::RotationRun;
using sv::viewer::RotationSettings;
namespace gl = sv::gl;

std::uint32_t fresh_seed() {
  static std::uint32_t s = std::random_device{}();
  return s++;
}

sv::ArrayF random_image(std::size_t h, std::size_t w, std::size_t channels, std::uint32_t seed) {
  sv::ArrayF a({h, w}, channels);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = u(rng);
  return a;
}

// A smooth image: a few random low-frequency waves (periods of 12 samples or more).
sv::ArrayF smooth_image(std::size_t h, std::size_t w, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> freq(-1.0 / 12, 1.0 / 12), phase(0, 6.283185307179586);
  struct Wave {
    double fy, fx, ph;
  };
  std::vector<Wave> waves;
  for (int i = 0; i < 5; ++i) waves.push_back({freq(rng), freq(rng), phase(rng)});
  sv::ArrayF a({h, w});
  for (std::size_t y = 0; y < h; ++y)
    for (std::size_t x = 0; x < w; ++x) {
      double v = 0.5;
      for (const Wave& wv : waves)
        v += 0.09 * std::cos(6.283185307179586 *
                                 (wv.fy * static_cast<double>(y) + wv.fx * static_cast<double>(x)) +
                             wv.ph);
      a.at2(y, x) = static_cast<float>(v);
    }
  return a;
}

RotationSettings cpu_settings(double step_deg, int steps) {
  RotationSettings s;
  s.step_deg = step_deg;
  s.steps = steps;
  s.cuda_prefilter = false;
  return s;
}

bool same(const sv::ArrayF& a, const sv::ArrayF& b) {
  return a.dims() == b.dims() && a.channels() == b.channels() && a.vec() == b.vec();
}

double max_abs_diff(const sv::ArrayF& a, const sv::ArrayF& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    m = std::fmax(m, std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
  return m;
}

// The smallest distance of any rotation-grid position (either axis) from a half-integer, where
// nearest-neighbour rounding flips: above float rounding it cannot tie.
double min_distance_to_half(std::size_t h, std::size_t w, double degrees) {
  const gl::GridMapping g = gl::rotation_grid(h, w, degrees);
  double d = 1.0;
  for (std::size_t r = 0; r < h; ++r)
    for (std::size_t c = 0; c < w; ++c)
      for (int axis = 0; axis < 2; ++axis) {
        const double p = g.origin[axis] + static_cast<double>(r) * g.step_row[axis] +
                         static_cast<double>(c) * g.step_col[axis];
        d = std::fmin(d, std::fabs(p - std::floor(p) - 0.5));
      }
  return d;
}

std::string thrown_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const sv::Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not an sv::Error: ") + e.what();
  }
  return "nothing thrown";
}

TEST(RotationRun, StepZeroIsTheOriginalAndUnitsAreCounted) {
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const sv::ArrayF image = random_image(23, 31, 3, seed);
  RotationRun run(image, {gl::Fetch::Nearest, gl::Fetch::CubicOtf}, cpu_settings(10, 3));
  EXPECT_EQ(run.progress(), 0.0);
  EXPECT_FALSE(run.done());
  for (std::size_t m = 0; m < 2; ++m) {
    EXPECT_TRUE(same(run.result(m, 0), image));
    EXPECT_TRUE(run.psnr(m).empty());
    EXPECT_NE(thrown_message([&] { run.result(m, 1); }).find("not done"), std::string::npos);
  }
  for (int unit = 1; unit <= 6; ++unit) {
    EXPECT_EQ(run.next_method(), static_cast<std::size_t>((unit - 1) % 2));
    EXPECT_EQ(run.next_step(), (unit - 1) / 2 + 1);
    run.advance();
    EXPECT_DOUBLE_EQ(run.progress(), unit / 6.0);
    EXPECT_EQ(run.steps_done(), unit / 2);
  }
  EXPECT_TRUE(run.done());
  run.advance();  // nothing left: no change
  EXPECT_EQ(run.psnr(0).size(), 3u);
  EXPECT_EQ(run.rms(1).size(), 3u);
  EXPECT_EQ(run.timing(1).size(), 3u);
  EXPECT_TRUE(same(run.result(0, 0), image));
  EXPECT_GT(run.timing(1)[0].prefilter_ms, 0.0);  // otf prefilters
  EXPECT_EQ(run.timing(0)[0].prefilter_ms, 0.0);  // nearest does not
  EXPECT_EQ(run.timing(0)[0].gpu_ms.has_value(), gl::timer_queries_meaningful());
}

// Nearest on the GPU against sv::rotate nearest, step by step, on an image size and angle whose
// positions never come near a rounding tie: the images must be identical and so the
// measurements.
TEST(RotationRun, NearestEqualsCpuRotateExactly) {
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::size_t h = 37, w = 52;
  const double deg = 10.0;
  ASSERT_GT(min_distance_to_half(h, w, deg), 1e-4) << "this size has near-ties; pick another";
  const sv::ArrayD original = sv::ArrayD::from(random_image(h, w, 2, seed));
  const int steps = 12;
  RotationRun run(original, {gl::Fetch::Nearest}, cpu_settings(deg, steps));
  run.run_to_end();
  const std::vector<unsigned char> mask = sv::disc_mask(h, w, 0.35);
  sv::ArrayF expected = sv::ArrayF::from(original);
  sv::ResampleOptions opt;
  opt.method = sv::Method::Nearest;
  for (int k = 1; k <= steps; ++k) {
    expected = sv::rotate(expected, deg, opt);
    ASSERT_TRUE(same(run.result(0, k), expected)) << "step " << k;
    const sv::ErrorStats s = sv::compare(expected, original, mask, 1.0);
    EXPECT_EQ(run.psnr(0)[static_cast<std::size_t>(k - 1)], s.psnr) << "step " << k;
    EXPECT_EQ(run.rms(0)[static_cast<std::size_t>(k - 1)], s.rms) << "step " << k;
  }
}

// The precise fetch against sv::rotate's cubic in float (same float coefficients, reference
// sampler accumulating in double): the same experiment up to float rounding.
TEST(RotationRun, PreciseMatchesCpuCubicRotation) {
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::size_t h = 40, w = 33;
  const double deg = 17.0;
  const sv::ArrayD original = sv::ArrayD::from(random_image(h, w, 1, seed));
  const int steps = 8;
  RotationRun run(original, {gl::Fetch::CubicPrecise}, cpu_settings(deg, steps));
  run.run_to_end();
  const std::vector<unsigned char> mask = sv::disc_mask(h, w, 0.35);
  sv::ArrayF expected = sv::ArrayF::from(original);
  double worst_image = 0, worst_db = 0;
  for (int k = 1; k <= steps; ++k) {
    expected = sv::rotate(expected, deg, sv::ResampleOptions{});
    const double d = max_abs_diff(run.result(0, k), expected);
    const double db = std::fabs(run.psnr(0)[static_cast<std::size_t>(k - 1)] -
                                sv::compare(expected, original, mask, 1.0).psnr);
    worst_image = std::fmax(worst_image, d);
    worst_db = std::fmax(worst_db, db);
    EXPECT_LT(d, 2e-5) << "step " << k;
    EXPECT_LT(db, 1e-3) << "step " << k;
  }
  std::printf(
      "precise vs CPU cubic over %d steps: max |image diff| %.3g, max |PSNR diff| %.3g dB\n", steps,
      worst_image, worst_db);
}

// Every method against splinetool's GL code path rebuilt here (app/splinetool/backend_gl.cpp
// rotate(): CPU float prefilter for the prefiltered fetches, R32F SplineTexture, an Evaluator of
// the fetch with the reflect boundary, rotation_grid): bit-identical results and measurements.
TEST(RotationRun, CpuPrefilterPathIsSplinetools) {
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::size_t h = 29, w = 41;
  const double deg = 10.0;
  const sv::ArrayD original = sv::ArrayD::from(random_image(h, w, 3, seed));
  const std::vector<gl::Fetch> methods = {gl::Fetch::Linear, gl::Fetch::CubicUnfiltered,
                                          gl::Fetch::CubicLut, gl::Fetch::CubicOtf};
  const int steps = 3;
  RotationRun run(original, methods, cpu_settings(deg, steps));
  run.run_to_end();
  EXPECT_STREQ(run.prefilter_backend(), "cpu");
  const std::vector<unsigned char> mask = sv::disc_mask(h, w, 0.35);
  for (std::size_t m = 0; m < methods.size(); ++m) {
    SCOPED_TRACE(gl::fetch_name(methods[m]));
    gl::EvalOptions eo;
    eo.fetch = methods[m];
    gl::Evaluator ev(eo, 2);
    sv::ArrayF a = sv::ArrayF::from(original);
    for (int k = 1; k <= steps; ++k) {
      sv::ArrayF c = a;
      if (gl::fetch_prefiltered(methods[m]))
        sv::prefilter(c, sv::PrefilterOptions{3, sv::Boundary::Reflect, 0});
      const gl::SplineTexture tex(c, gl::TexFormat::R32F);
      a = ev.render_grid(tex, gl::rotation_grid(h, w, deg));
      ASSERT_TRUE(same(run.result(m, k), a)) << "step " << k;
      EXPECT_EQ(run.psnr(m)[static_cast<std::size_t>(k - 1)],
                sv::compare(a, original, mask, 1.0).psnr)
          << "step " << k;
      // The second curve: against the original turned once by k x deg with the exact model.
      sv::ResampleOptions ro;
      ro.method = sv::Method::Cubic;
      const sv::ArrayD turned = sv::rotate(original, deg * k, ro);
      EXPECT_EQ(run.psnr_rotated(m)[static_cast<std::size_t>(k - 1)],
                sv::compare(a, turned, mask, 1.0).psnr)
          << "step " << k;
      EXPECT_EQ(run.rms_rotated(m)[static_cast<std::size_t>(k - 1)],
                sv::compare(a, turned, mask, 1.0).rms)
          << "step " << k;
    }
  }
}

// The rotated-reference curve: at whole turns it is the plain comparison with the original; in
// between, on a smooth image, the exactly turned original is far closer to every method's
// result than the unturned one, and the precise cubic after one step is close to exact.
TEST(RotationRun, RotatedReferenceCurve) {
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::size_t h = 48, w = 56;
  const sv::ArrayD original = sv::ArrayD::from(smooth_image(h, w, seed));
  const std::vector<gl::Fetch> methods = {gl::Fetch::Linear, gl::Fetch::CubicPrecise};
  RotationRun run(original, methods, cpu_settings(30.0, 13));
  run.run_to_end();
  for (std::size_t m = 0; m < methods.size(); ++m) {
    SCOPED_TRACE(gl::fetch_name(methods[m]));
    const std::vector<double>& p = run.psnr(m);
    const std::vector<double>& r = run.psnr_rotated(m);
    ASSERT_EQ(r.size(), 13u);
    EXPECT_EQ(r[11], p[11]);  // step 12: 360 degrees
    for (int k = 1; k <= 13; ++k) {
      const auto i = static_cast<std::size_t>(k - 1);
      if (k != 12) {
        EXPECT_GT(r[i], p[i] + 6) << "step " << k;
      }
    }
    std::printf("%s: after 1 step %.2f dB, after 6 %.2f dB, after 12 %.2f dB (exact rotation)\n",
                gl::fetch_name(methods[m]), r[0], r[5], r[11]);
  }
  // One step of the precise cubic is the reference's own model, up to float rounding.
  EXPECT_GT(run.psnr_rotated(1)[0], 100.0);
  EXPECT_GT(run.psnr_rotated(1)[0], run.psnr_rotated(0)[0] + 20);
}

// Asking for CUDA in a build or on a machine without it: the CPU path, said so, same numbers.
TEST(RotationRun, CudaRequestFallsBackVisibly) {
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const sv::ArrayF image = random_image(20, 24, 1, seed);
  RotationSettings s = cpu_settings(10, 2);
  s.cuda_prefilter = true;
  RotationRun asked(image, {gl::Fetch::CubicPrecise}, s);
  if (std::string(asked.prefilter_backend()) == "cuda")
    GTEST_SKIP() << "a CUDA device is available here";
  RotationRun cpu(image, {gl::Fetch::CubicPrecise}, cpu_settings(10, 2));
  asked.run_to_end();
  cpu.run_to_end();
  EXPECT_STREQ(asked.prefilter_backend(), "cpu");
  EXPECT_NE(asked.prefilter_notice().find("CPU"), std::string::npos) << asked.prefilter_notice();
  EXPECT_TRUE(cpu.prefilter_notice().empty());
  EXPECT_EQ(asked.psnr(0), cpu.psnr(0));
}

// 36 steps of 10 degrees on a smooth image: the prefiltered cubics keep the image best, then
// linear, then nearest.
TEST(RotationRun, FullTurnRanksTheMethods) {
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const sv::ArrayF image = smooth_image(64, 72, seed);
  RotationRun run(
      image, {gl::Fetch::Nearest, gl::Fetch::Linear, gl::Fetch::CubicOtf, gl::Fetch::CubicPrecise},
      cpu_settings(10, 36));
  run.run_to_end();
  const double nearest = run.psnr(0).back(), linear = run.psnr(1).back(), otf = run.psnr(2).back(),
               precise = run.psnr(3).back();
  std::printf("PSNR after 36 x 10 deg: nearest %.2f, linear %.2f, otf %.2f, precise %.2f dB\n",
              nearest, linear, otf, precise);
  EXPECT_GT(precise, linear + 3.0);
  EXPECT_GT(otf, linear + 3.0);
  EXPECT_GT(linear, nearest);
  // A rotation that changes the image measures finite error.
  EXPECT_TRUE(std::isfinite(precise));
}

// Beyond the float budget the results are kept as 16-bit copies (measurements unchanged);
// beyond even that the run is refused with the sizes named.
TEST(RotationRun, MemoryBudget) {
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const sv::ArrayF image = random_image(16, 20, 1, seed);
  RotationSettings s = cpu_settings(10, 4);
  const std::size_t float_bytes = 16 * 20 * 4 * 2 * sizeof(float);  // 2 methods, 4 steps
  RotationRun full(image, {gl::Fetch::Linear, gl::Fetch::CubicOtf}, s);
  EXPECT_TRUE(full.keeps_float());
  EXPECT_EQ(full.kept_bytes(), float_bytes);
  s.memory_budget = float_bytes - 1;
  RotationRun half(image, {gl::Fetch::Linear, gl::Fetch::CubicOtf}, s);
  EXPECT_FALSE(half.keeps_float());
  EXPECT_EQ(half.kept_bytes(), float_bytes / 2);
  full.run_to_end();
  half.run_to_end();
  for (std::size_t m = 0; m < 2; ++m) {
    EXPECT_EQ(full.psnr(m), half.psnr(m));
    for (int k = 1; k <= 4; ++k) {
      sv::ArrayF clamped = full.result(m, k);
      for (float& v : clamped.vec()) v = std::fmin(std::fmax(v, 0.0f), 1.0f);
      EXPECT_LE(max_abs_diff(clamped, half.result(m, k)), 0.5 / 65535 + 1e-7);
    }
  }
  s.memory_budget = float_bytes / 2 - 1;
  const std::string msg = thrown_message([&] {
    RotationRun(image, {gl::Fetch::Linear, gl::Fetch::CubicOtf}, s);
  });
  EXPECT_NE(msg.find("budget"), std::string::npos) << msg;
}

TEST(RotationRun, RefusesBadInput) {
  const sv::ArrayF image = random_image(8, 8, 1, 1);
  const auto message = [](const auto& original, std::vector<gl::Fetch> methods,
                          RotationSettings s) {
    return thrown_message([&] { RotationRun(original, methods, s); });
  };
  const std::vector<gl::Fetch> one = {gl::Fetch::Linear};
  const RotationSettings ok = cpu_settings(10, 2);
  // A 5-D array cannot be built (sv::Array refuses it); 1-D, 3-D and empty ones reach the run.
  EXPECT_NE(thrown_message([] { sv::ArrayF({2, 2, 2, 2, 2}); }).find("rank"), std::string::npos);
  EXPECT_NE(message(sv::ArrayF({4, 4, 4}), one, ok).find("2-D image"), std::string::npos);
  EXPECT_NE(message(sv::ArrayF({16}), one, ok).find("2-D image"), std::string::npos);
  EXPECT_NE(message(sv::ArrayD(), one, ok).find("empty array"), std::string::npos);
  EXPECT_NE(message(image, {}, ok).find("1 to 4 methods, got 0"), std::string::npos);
  EXPECT_NE(message(image, std::vector<gl::Fetch>(5, gl::Fetch::Linear), ok)
                .find("1 to 4 methods, got 5"),
            std::string::npos);
  EXPECT_NE(message(image, one, cpu_settings(10, 0)).find("at least 1 step, got 0"),
            std::string::npos);
  EXPECT_NE(message(image, one, cpu_settings(10, -3)).find("at least 1 step, got -3"),
            std::string::npos);
  EXPECT_NE(message(image, one, cpu_settings(NAN, 3)).find("finite angle"), std::string::npos);
  RotationSettings tiny = ok;
  tiny.disc = 0.01;
  EXPECT_NE(message(image, one, tiny).find("contains no pixel"), std::string::npos);
  tiny.disc = -1;
  EXPECT_NE(message(image, one, tiny).find("disc"), std::string::npos);
  sv::ArrayF nan = image;
  nan[5] = NAN;
  EXPECT_NE(message(nan, one, ok).find("non-finite"), std::string::npos);
}

// The rotate mode's report, driven without a window (no ImGui context: update() skips input):
// the same measurements as the engine, in the documented JSON shape.
TEST(RotateMode, ReportMatchesTheEngine) {
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("rotate_mode_" + std::to_string(seed));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "noise.png").string();
  sv::save_image(path, sv::ArrayD::from(random_image(30, 26, 1, seed)), 8);

  sv::viewer::MethodPass pass;
  sv::viewer::RotateOptions opt;
  opt.image = path;
  opt.methods = {gl::Fetch::Nearest, gl::Fetch::CubicPrecise};
  opt.steps = 5;
  opt.step_deg = 12;
  opt.cuda_prefilter = false;
  sv::viewer::RotateMode mode(opt, pass);
  EXPECT_STREQ(mode.name(), "rotate");
  EXPECT_FALSE(mode.settled());
  // Until an update() takes the decoded image, the mode says it is loading.
  const std::optional<sv::viewer::Progress> loading = mode.progress();
  ASSERT_TRUE(loading.has_value());
  EXPECT_NE(loading->what.find("loading noise.png"), std::string::npos) << loading->what;
  // Frames as the shell would run them: the decode lands, then the run advances a few ms per
  // frame until every step is done.
  sv::viewer::FrameInfo frame;
  frame.area = {360, 0, 840, 760};
  frame.fb_width = 1200;
  frame.fb_height = 760;
  for (int i = 0; i < 100000 && !mode.settled(); ++i) mode.update(frame);
  EXPECT_FALSE(mode.progress().has_value());
  mode.finish();  // nothing left to do
  EXPECT_TRUE(mode.settled()) << mode.error();
  EXPECT_TRUE(mode.error().empty()) << mode.error();
  const nlohmann::json r = mode.report();

  RotationRun run(unit_image(path), opt.methods, cpu_settings(12, 5));
  run.run_to_end();
  EXPECT_EQ(r.at("mode"), "rotate");
  EXPECT_EQ(r.at("steps"), 5);
  EXPECT_EQ(r.at("prefilter"), "cpu");
  ASSERT_EQ(r.at("methods").size(), 2u);
  for (std::size_t m = 0; m < 2; ++m) {
    const nlohmann::json& j = r.at("methods")[m];
    EXPECT_EQ(j.at("method"), gl::fetch_name(opt.methods[m]));
    ASSERT_EQ(j.at("psnr_db").size(), 5u);
    for (std::size_t k = 0; k < 5; ++k) {
      EXPECT_EQ(j.at("psnr_db")[k].get<double>(), run.psnr(m)[k]);
      EXPECT_EQ(j.at("rms")[k].get<double>(), run.rms(m)[k]);
    }
  }
  std::filesystem::remove_all(dir);
}

// The viewer's default experiment on the bundled photograph, timed; also prints the final PSNRs
// with all digits for a comparison with splinetool. A benchmark, not run by default (run it with
// --gtest_also_run_disabled_tests): viewer_rotate_vs_splinetool runs the same experiment through
// the rotate mode (this engine, CPU prefilter, 36 x 10 degrees on coffee.png) and checks the same
// ranking there (precise and lut > linear > nearest), with every step against splinetool.
TEST(RotationRun, DISABLED_CoffeeFullTurnTimed) {
  const std::string path = sv::viewer::default_image_path();
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path;
  const sv::ArrayD original = unit_image(path);
  const std::vector<gl::Fetch> methods = {gl::Fetch::Nearest, gl::Fetch::Linear,
                                          gl::Fetch::CubicPrecise};
  const auto start = std::chrono::steady_clock::now();
  RotationRun run(original, methods, cpu_settings(10, 36));
  run.run_to_end();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("coffee.png, 36 x 10 deg, %zu methods (%s prefilter): %.2f s\n", methods.size(),
              run.prefilter_backend(), seconds);
  for (std::size_t m = 0; m < methods.size(); ++m) {
    double prefilter = 0, total = 0;
    for (const sv::viewer::StepTiming& t : run.timing(m)) {
      prefilter += t.prefilter_ms;
      total += t.total_ms;
    }
    std::printf("  %-8s PSNR %.17g dB after 36 steps; %.1f ms per step (prefilter %.1f)\n",
                gl::fetch_name(methods[m]), run.psnr(m).back(), total / 36, prefilter / 36);
  }
  EXPECT_GT(run.psnr(2).back(), run.psnr(1).back());  // precise > linear
  EXPECT_GT(run.psnr(1).back(), run.psnr(0).back());  // linear > nearest
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::unique_ptr<gl::HeadlessContext> context;
  try {
    context = std::make_unique<gl::HeadlessContext>();
  } catch (const std::exception& e) {
    std::printf("skipped: no headless GL 4.5 context: %s\n", e.what());
    return 77;
  }
  std::printf("headless GL: %s (EGL platform %s)\n", context->description().c_str(),
              context->platform().c_str());
  const int rc = RUN_ALL_TESTS();
  return rc;
}
