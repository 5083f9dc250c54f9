// FFD registration (splineview/registration.h): the analytic gradient of the objective against
// central differences, recovery of a known smooth deformation of the bundled MRI head (2-D slice
// and a reduced volume), independence of the thread count, and the refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "splineview/error.h"
#include "splineview/ffd.h"
#include "splineview/ffd_warp.h"
#include "splineview/io.h"
#include "splineview/pyramid.h"
#include "splineview/registration.h"

#include "registration_test_util.h"

namespace {

using svtest::field_rms_error;
using svtest::min_det;
using svtest::seed;
using svtest::worst_gradient_error;

// The bundled head (62 x 128 x 128, uint8), scaled to [0, 1].
const sv::ArrayD& head() {
  static const sv::ArrayD h = [] {
    sv::ArrayD a =
        sv::load_any(std::string(SPLINEVIEW_ASSET_DIR) + "/mri_t1_head.nrrd", false).array;
    for (double& v : a.vec()) v /= 255.0;
    return a;
  }();
  return h;
}

sv::ArrayD head_slice(std::size_t z) {
  const sv::ArrayD& h = head();
  sv::ArrayD s({h.dim(1), h.dim(2)});
  for (std::size_t y = 0; y < h.dim(1); ++y)
    for (std::size_t x = 0; x < h.dim(2); ++x) s.at2(y, x) = h.at3(z, y, x);
  return s;
}

// A box of the head: z0.., y0.., x0.. of the given shape.
sv::ArrayD head_box(std::size_t z0, std::size_t y0, std::size_t x0,
                    const std::vector<std::size_t>& shape) {
  const sv::ArrayD& h = head();
  sv::ArrayD b(shape);
  for (std::size_t z = 0; z < shape[0]; ++z)
    for (std::size_t y = 0; y < shape[1]; ++y)
      for (std::size_t x = 0; x < shape[2]; ++x) b.at3(z, y, x) = h.at3(z0 + z, y0 + y, x0 + x);
  return b;
}

sv::ArrayD random_grid(const std::vector<std::size_t>& image_shape, const std::vector<int>& delta,
                       double amplitude, std::mt19937& rng) {
  sv::ArrayD g(sv::ffd_grid_shape(image_shape, delta), image_shape.size());
  std::uniform_real_distribution<double> U(-amplitude, amplitude);
  for (double& v : g.vec()) v = U(rng);
  return g;
}

// A smooth random grid at `delta`: a random grid at 2 delta (one point more per axis than it
// needs) refined exactly (ffd_refine) and cut to ffd_grid_shape (the points cut touch no voxel).
sv::ArrayD random_smooth_grid(const std::vector<std::size_t>& image_shape,
                              const std::vector<int>& delta, double amplitude, std::mt19937& rng) {
  std::vector<int> coarse = delta;
  for (int& d : coarse) d *= 2;
  std::vector<std::size_t> cshape = sv::ffd_grid_shape(image_shape, coarse);
  for (std::size_t& m : cshape) ++m;
  sv::ArrayD c(cshape, image_shape.size());
  std::uniform_real_distribution<double> U(-amplitude, amplitude);
  for (double& v : c.vec()) v = U(rng);
  const sv::ArrayD fine = sv::ffd_refine(c, coarse);
  const std::vector<std::size_t> shape = sv::ffd_grid_shape(image_shape, delta);
  sv::ArrayD g(shape, image_shape.size());
  const std::size_t R = image_shape.size();
  for (std::size_t i = 0; i < g.points(); ++i) {
    std::size_t rest = i, src = 0, stride = 1;
    for (std::size_t a = R; a-- > 0;) {
      src += (rest % shape[a]) * stride;
      rest /= shape[a];
      stride *= fine.dim(a);
    }
    for (std::size_t k = 0; k < R; ++k) g[i * R + k] = fine[src * R + k];
  }
  return g;
}

double ssd(const sv::ArrayD& a, const sv::ArrayD& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
  return s;
}

}  // namespace

TEST(FfdRegistration, GradientMatchesCentralDifferences2D) {
  std::mt19937 rng(seed());
  SCOPED_TRACE("seed " + std::to_string(seed()));
  const sv::ArrayD fixed = head_slice(31), moving = head_slice(34);
  for (const std::vector<int>& delta : {std::vector<int>{8, 8}, std::vector<int>{5, 7}}) {
    for (double w : {0.0, 0.05}) {
      sv::FfdSsdObjective<double> obj(fixed, moving, delta, w);
      const sv::ArrayD grid = random_grid(fixed.dims(), delta, 2.0, rng);
      const double worst = worst_gradient_error(obj, grid, 12, rng);
      std::printf("2-D delta %d x %d, w %g: worst relative error %.3g\n", delta[0], delta[1], w,
                  worst);
      EXPECT_LT(worst, 1e-5);
    }
  }
}

TEST(FfdRegistration, GradientMatchesCentralDifferences3D) {
  std::mt19937 rng(seed() + 1);
  SCOPED_TRACE("seed " + std::to_string(seed()));
  const sv::ArrayD fixed = head_box(20, 30, 30, {18, 36, 40});
  const sv::ArrayD moving = head_box(22, 31, 29, {18, 36, 40});
  const std::vector<int> delta{4, 5, 6};
  for (double w : {0.0, 0.05}) {
    sv::FfdSsdObjective<double> obj(fixed, moving, delta, w);
    const sv::ArrayD grid = random_grid(fixed.dims(), delta, 1.5, rng);
    const double worst = worst_gradient_error(obj, grid, 12, rng);
    std::printf("3-D delta 4 x 5 x 6, w %g: worst relative error %.3g\n", w, worst);
    EXPECT_LT(worst, 1e-5);
  }
}

// Registers fixed = original(x + u_true(x)) to moving = original (u_true is then the exact
// solution), prints the figures, checks SSD down by over 90% and the field's RMS error inside
// the head (deformed image above 0.15 of full scale) under 0.5 voxel.
void expect_recovery(const char* name, const sv::ArrayD& original, const sv::ArrayD& truth,
                     const sv::FfdRegistrationOptions& opt) {
  const std::vector<int>& delta = opt.spacing;
  ASSERT_GT(min_det(truth, delta, original.dims()), 0.0);
  const sv::ArrayD deformed = sv::warp(original, truth, delta);
  const auto t0 = std::chrono::steady_clock::now();
  const sv::FfdRegistrationResult r = sv::register_ffd(deformed, original, opt);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double before = ssd(deformed, original);
  const double after = ssd(deformed, sv::warp(original, r.grid, delta));
  std::size_t inside = 0;
  const double rms = field_rms_error(r.grid, truth, delta, deformed, 0.15, &inside);
  std::printf(
      "%s: SSD %.4g -> %.4g (%.2f%% less), field RMS error %.3f voxel over %zu voxels, "
      "%d iterations, %.2f s (field %.3f, warp %.3f, gradient %.3f, regulariser %.3f, "
      "setup %.3f)\n",
      name, before, after, 100 * (1 - after / before), rms, inside, r.iterations, secs,
      r.time.field, r.time.warp, r.time.gradient, r.time.regulariser, r.time.setup);
  for (const auto& l : r.levels) {
    std::string shape;
    for (std::size_t n : l.image_shape) shape += (shape.empty() ? "" : "x") + std::to_string(n);
    std::printf(
        "  level %s, spacing %d: %d iterations, %d evaluations, SSD/N %.4g -> %.4g, "
        "stop: %s\n",
        shape.c_str(), l.spacing[0], l.iterations, l.evaluations, l.ssd.front(), l.ssd.back(),
        l.stop.c_str());
  }
  EXPECT_LT(after, 0.1 * before);
  EXPECT_LT(rms, 0.5);
  EXPECT_GT(inside, original.points() / 8);  // the head, not a few voxels
  EXPECT_EQ(r.grid.dims(), sv::ffd_grid_shape(original.dims(), delta));
  ASSERT_EQ(r.levels.size(), static_cast<std::size_t>(opt.levels));
  for (const auto& l : r.levels) {
    ASSERT_FALSE(l.objective.empty());
    for (std::size_t i = 1; i < l.objective.size(); ++i)
      EXPECT_LE(l.objective[i], l.objective[i - 1]);  // the line search only accepts decreases
  }
}

TEST(FfdRegistration, RecoversAKnownDeformationOfTheHeadSlice) {
  std::mt19937 rng(seed() + 2);
  SCOPED_TRACE("seed " + std::to_string(seed()));
  const sv::ArrayD original = head_slice(31);
  sv::FfdRegistrationOptions opt;
  opt.spacing = {8, 8};
  // A smooth field (random at spacing 16, refined to 8): coarse to fine, three levels.
  opt.levels = 3;
  opt.iterations = 100;
  expect_recovery("2-D 128x128, smooth field, 3 levels", original,
                  random_smooth_grid(original.dims(), opt.spacing, 3.0, rng), opt);
  // Independent random control points at spacing 8 (detail at the grid's own scale, which
  // coarser grids cannot hold): one level.
  opt.levels = 1;
  opt.iterations = 150;
  expect_recovery("2-D 128x128, control points independent, 1 level", original,
                  random_grid(original.dims(), opt.spacing, 3.0, rng), opt);
}

TEST(FfdRegistration, RecoversAKnownDeformationOfTheReducedHeadVolume) {
  std::mt19937 rng(seed() + 3);
  SCOPED_TRACE("seed " + std::to_string(seed()));
  // The head reduced by 2 (31 x 64 x 64) with the anti-aliased pyramid.
  sv::ReduceOptions ro;
  ro.samples = true;
  const sv::ArrayD original = sv::reduce2(head(), ro).samples;
  sv::FfdRegistrationOptions opt;
  opt.spacing = {8, 8, 8};
  opt.levels = 2;
  opt.iterations = 40;
  expect_recovery("3-D 31x64x64, smooth field, 2 levels", original,
                  random_smooth_grid(original.dims(), opt.spacing, 3.0, rng), opt);
}

TEST(FfdRegistration, FullResolutionLevelsGradientDescentAndFloatAlsoRecover) {
  std::mt19937 rng(seed() + 4);
  SCOPED_TRACE("seed " + std::to_string(seed()));
  const sv::ArrayD original = head_slice(28);
  const std::vector<int> delta{8, 8};
  const sv::ArrayD truth = random_smooth_grid(original.dims(), delta, 3.0, rng);
  ASSERT_GT(min_det(truth, delta, original.dims()), 0.0);
  const sv::ArrayD deformed = sv::warp(original, truth, delta);
  const double before = ssd(deformed, original);
  struct Case {
    const char* name;
    bool pyramid;
    sv::FfdOptimizer optimizer;
    bool single;
    int iterations;
  };
  for (const Case& c :
       {Case{"full-resolution levels, L-BFGS", false, sv::FfdOptimizer::Lbfgs, false, 100},
        Case{"pyramid, gradient descent", true, sv::FfdOptimizer::GradientDescent, false, 300},
        Case{"pyramid, L-BFGS, float", true, sv::FfdOptimizer::Lbfgs, true, 100}}) {
    SCOPED_TRACE(c.name);
    sv::FfdRegistrationOptions opt;
    opt.spacing = delta;
    opt.levels = 2;
    opt.image_pyramid = c.pyramid;
    opt.optimizer = c.optimizer;
    opt.iterations = c.iterations;
    sv::ArrayD grid;
    if (c.single) {
      grid = sv::register_ffd(sv::ArrayF::from(deformed), sv::ArrayF::from(original), opt).grid;
    } else {
      grid = sv::register_ffd(deformed, original, opt).grid;
    }
    const double after = ssd(deformed, sv::warp(original, grid, delta));
    const double rms = field_rms_error(grid, truth, delta, deformed, 0.15);
    std::printf("%s: SSD %.2f%% less, field RMS error %.3f voxel\n", c.name,
                100 * (1 - after / before), rms);
    EXPECT_LT(after, 0.1 * before);
    EXPECT_LT(rms, 0.5);
  }
}

TEST(FfdRegistration, ResultDoesNotDependOnTheThreadCount) {
  const sv::ArrayD fixed = head_slice(30), moving = head_slice(32);
  sv::FfdRegistrationOptions opt;
  opt.spacing = {6, 9};
  opt.levels = 2;
  opt.iterations = 15;
  opt.threads = 1;
  const sv::FfdRegistrationResult a = sv::register_ffd(fixed, moving, opt);
  opt.threads = 5;
  const sv::FfdRegistrationResult b = sv::register_ffd(fixed, moving, opt);
  EXPECT_EQ(a.grid.vec(), b.grid.vec());
  EXPECT_EQ(a.iterations, b.iterations);
  EXPECT_GT(a.iterations, 0);
}

// A grid of 3 x 22 x 67 x 67 = 296,274 values (spacing 1): the optimiser's vector work (blocks
// of 8192 values, at least 4 per thread) is split over up to 7 threads here, and the bending
// energy's passes too; every bit of the result and of the history must match one thread's.
TEST(FfdRegistration, LargeGridResultDoesNotDependOnTheThreadCount) {
  const sv::ArrayD fixed = head_box(20, 30, 30, {19, 64, 64});
  const sv::ArrayD moving = head_box(21, 31, 30, {19, 64, 64});
  sv::FfdRegistrationOptions opt;
  opt.spacing = {1, 1, 1};
  opt.levels = 1;
  opt.iterations = 4;
  opt.tolerance = 0;
  opt.threads = 1;
  const sv::FfdRegistrationResult a = sv::register_ffd(fixed, moving, opt);
  opt.threads = 7;
  const sv::FfdRegistrationResult b = sv::register_ffd(fixed, moving, opt);
  ASSERT_EQ(a.grid.size(), 296274u);
  EXPECT_EQ(a.grid.vec(), b.grid.vec());
  EXPECT_EQ(a.iterations, b.iterations);
  EXPECT_GT(a.iterations, 1);
  ASSERT_EQ(a.levels.size(), 1u);
  EXPECT_EQ(a.levels[0].objective, b.levels[0].objective);
  EXPECT_EQ(a.levels[0].energy, b.levels[0].energy);
  EXPECT_LT(a.levels[0].objective.back(), a.levels[0].objective.front());
}

namespace {

void expect_refusal(const std::function<void()>& fn, const std::string& words) {
  try {
    fn();
    ADD_FAILURE() << "no sv::Error, expected one mentioning '" << words << "'";
  } catch (const sv::Error& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(FfdRegistration, RefusesMismatchedImagesAndBadOptions) {
  const sv::ArrayD a({40, 48}), b({40, 47}), c({40, 48}, 2), v({8, 40, 48});
  sv::FfdRegistrationOptions ok;
  ok.spacing = {8, 8};
  ok.levels = 2;
  auto with = [&](auto change) {
    sv::FfdRegistrationOptions o = ok;
    change(o);
    return o;
  };
  using O = sv::FfdRegistrationOptions;
  expect_refusal([&] { sv::register_ffd(a, b, ok); }, "must have the same shape");
  expect_refusal([&] { sv::register_ffd(a, v, ok); }, "must have the same shape");
  expect_refusal([&] { sv::register_ffd(c, c, ok); }, "one channel");
  expect_refusal([&] { sv::register_ffd(sv::ArrayD({40}), sv::ArrayD({40}), ok); }, "2-D or 3-D");
  sv::ArrayD nan = a;
  nan[7] = std::nan("");
  expect_refusal([&] { sv::register_ffd(a, nan, ok); }, "moving image has a non-finite value");
  expect_refusal([&] { sv::register_ffd(a, a, with([](O& o) { o.spacing = {8}; })); },
                 "spacing has 1 entries");
  expect_refusal([&] { sv::register_ffd(a, a, with([](O& o) {
                                          o.spacing = {8, 0};
                                        })); },
                 "along axis x must be at least 1");
  expect_refusal([&] { sv::register_ffd(a, a, with([](O& o) { o.levels = 0; })); }, "levels");
  expect_refusal([&] { sv::register_ffd(a, a, with([](O& o) { o.levels = 5; })); },
                 "reduce axis y (40 voxels) to 3");
  expect_refusal([&] { sv::register_ffd(a, a, with([](O& o) { o.iterations = -1; })); },
                 "iterations");
  expect_refusal([&] { sv::register_ffd(a, a, with([](O& o) { o.bending_weight = -1; })); },
                 "bending-energy weight");
  expect_refusal(
      [&] { sv::register_ffd(a, a, with([](O& o) { o.bending_weight = std::nan(""); })); },
      "bending-energy weight");
  expect_refusal([&] { sv::register_ffd(a, a, with([](O& o) { o.max_step = 0; })); }, "max_step");
  expect_refusal([&] { sv::register_ffd(a, a, with([](O& o) { o.armijo = 1; })); }, "Armijo");
  expect_refusal([&] { sv::register_ffd(a, a, with([](O& o) { o.lbfgs_memory = 0; })); },
                 "lbfgs_memory");
  expect_refusal([&] { sv::register_ffd(a, a, with([](O& o) { o.max_backtracks = 0; })); },
                 "max_backtracks");
  expect_refusal([&] { sv::register_ffd(a, a, with([](O& o) { o.tolerance = -1; })); },
                 "tolerance");
  expect_refusal(
      [&] { sv::register_ffd(a, a, with([](O& o) { o.boundary = sv::Boundary::Constant; })); },
      "reflect, mirror or periodic");
  // The objective refuses a grid of another shape.
  sv::FfdSsdObjective<double> obj(a, a, {8, 8}, 0.0);
  expect_refusal([&] { obj.evaluate(sv::ArrayD({9, 10}, 2)); }, "control grid");
  sv::ArrayD huge(obj.grid_shape(), 2);
  huge[3] = 1e12;
  expect_refusal([&] { obj.evaluate(huge); }, "beyond the limit");
}
