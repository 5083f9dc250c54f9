// FFD registration with normalised mutual information (splineview/registration_nmi.h): NMI
// against a direct double reference (sv::warp, then the Parzen-window histogram from sv::bspline),
// the analytic gradient against central differences, NMI of an image with itself as the maximum
// and its invariance to intensity remaps (which SSD lacks), recovery of a known deformation of
// the bundled MRI head from an intensity-remapped copy where SSD fails, independence of the
// thread count, and the refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "splineview/bspline.h"
#include "splineview/error.h"
#include "splineview/ffd.h"
#include "splineview/ffd_warp.h"
#include "splineview/io.h"
#include "splineview/pyramid.h"
#include "splineview/registration.h"
#include "splineview/registration_nmi.h"

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

sv::ArrayD head_box(std::size_t z0, std::size_t y0, std::size_t x0,
                    const std::vector<std::size_t>& shape) {
  const sv::ArrayD& h = head();
  sv::ArrayD b(shape);
  for (std::size_t z = 0; z < shape[0]; ++z)
    for (std::size_t y = 0; y < shape[1]; ++y)
      for (std::size_t x = 0; x < shape[2]; ++x) b.at3(z, y, x) = h.at3(z0 + z, y0 + y, x0 + x);
  return b;
}

sv::ArrayD remapped(const sv::ArrayD& a, const std::function<double(double)>& f) {
  sv::ArrayD r = a;
  for (double& v : r.vec()) v = f(v);
  return r;
}

sv::ArrayD random_grid(const std::vector<std::size_t>& image_shape, const std::vector<int>& delta,
                       double amplitude, std::mt19937& rng) {
  sv::ArrayD g(sv::ffd_grid_shape(image_shape, delta), image_shape.size());
  std::uniform_real_distribution<double> U(-amplitude, amplitude);
  for (double& v : g.vec()) v = U(rng);
  return g;
}

// A smooth random grid at `delta`: random at 2 delta, refined exactly and cut to the shape.
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

// A translation by `shift` voxels (array order): every control point displaced alike.
sv::ArrayD translation(const std::vector<std::size_t>& image_shape, const std::vector<int>& delta,
                       const std::vector<double>& shift) {
  sv::ArrayD g(sv::ffd_grid_shape(image_shape, delta), image_shape.size());
  for (std::size_t p = 0; p < g.points(); ++p)
    for (std::size_t c = 0; c < shift.size(); ++c) g[p * shift.size() + c] = shift[c];
  return g;
}

// NMI computed directly: the moving image warped by sv::warp (double, prefiltered cubic,
// Reflect), each image mapped by its own min / max to [1, bins - 2] (warped values clamped),
// the joint histogram of beta3(t_F - i) beta3(t_M - k) over every bin pair (sv::bspline), its
// marginals and entropies.
sv::NmiValue reference_nmi(const sv::ArrayD& fixed, const sv::ArrayD& moving,
                           const sv::ArrayD& grid, const std::vector<int>& delta, int bins) {
  const sv::ArrayD warped = sv::warp(moving, grid, delta);
  auto to_bins = [bins](const sv::ArrayD& range) {
    const auto mm = std::minmax_element(range.vec().begin(), range.vec().end());
    const double lo = *mm.first, hi = *mm.second;
    return [bins, lo, hi](double v) {
      return std::clamp(1 + (v - lo) * (bins - 3) / (hi - lo), 1.0, bins - 2.0);
    };
  };
  const auto fixed_bins = to_bins(fixed), moving_bins = to_bins(moving);
  const std::size_t B = static_cast<std::size_t>(bins);
  std::vector<double> p(B * B, 0.0);
  for (std::size_t v = 0; v < fixed.size(); ++v) {
    const double tf = fixed_bins(fixed[v]), tm = moving_bins(warped[v]);
    // beta3 vanishes beyond 2 bins: the bins within 2 of each coordinate.
    const long i0 = std::max(0L, static_cast<long>(tf) - 2),
               k0 = std::max(0L, static_cast<long>(tm) - 2);
    const long i1 = std::min(bins - 1L, static_cast<long>(tf) + 2),
               k1 = std::min(bins - 1L, static_cast<long>(tm) + 2);
    for (long i = i0; i <= i1; ++i) {
      const double wf = sv::bspline(3, tf - static_cast<double>(i));
      for (long k = k0; k <= k1; ++k)
        p[static_cast<std::size_t>(i) * B + static_cast<std::size_t>(k)] +=
            wf * sv::bspline(3, tm - static_cast<double>(k));
    }
  }
  std::vector<double> pf(B, 0.0), pm(B, 0.0);
  sv::NmiValue r;
  for (std::size_t i = 0; i < B; ++i)
    for (std::size_t k = 0; k < B; ++k) {
      const double q = p[i * B + k] / static_cast<double>(fixed.size());
      pf[i] += q;
      pm[k] += q;
      if (q > 0) r.h_joint -= q * std::log(q);
    }
  for (std::size_t i = 0; i < B; ++i) {
    if (pf[i] > 0) r.h_fixed -= pf[i] * std::log(pf[i]);
    if (pm[i] > 0) r.h_moving -= pm[i] * std::log(pm[i]);
  }
  r.nmi = (r.h_fixed + r.h_moving) / r.h_joint;
  return r;
}

}  // namespace

TEST(FfdNmi, MatchesADirectReference) {
  std::mt19937 rng(seed());
  SCOPED_TRACE("seed " + std::to_string(seed()));
  const sv::ArrayD fixed = head_slice(31);
  const sv::ArrayD moving = remapped(head_slice(33), [](double v) { return v * v; });
  const std::vector<int> delta{8, 8};
  for (int bins : {16, 64}) {
    sv::FfdNmiObjective<double> obj(fixed, moving, delta, 0.0, bins);
    for (double amplitude : {0.0, 1.5, 4.0}) {
      const sv::ArrayD grid = random_grid(fixed.dims(), delta, amplitude, rng);
      const sv::NmiValue got = obj.nmi(grid);
      const sv::NmiValue want = reference_nmi(fixed, moving, grid, delta, bins);
      std::printf(
          "bins %d, amplitude %g: NMI %.12f (reference %.12f), H(F) %.6f H(M) %.6f "
          "H(F,M) %.6f\n",
          bins, amplitude, got.nmi, want.nmi, got.h_fixed, got.h_moving, got.h_joint);
      EXPECT_NEAR(got.nmi, want.nmi, 1e-12);
      EXPECT_NEAR(got.h_fixed, want.h_fixed, 1e-12);
      EXPECT_NEAR(got.h_moving, want.h_moving, 1e-12);
      EXPECT_NEAR(got.h_joint, want.h_joint, 1e-12);
      double term = 0;
      obj.evaluate(grid, nullptr, &term);
      EXPECT_DOUBLE_EQ(term, 2 - got.nmi);
    }
  }
}

TEST(FfdNmi, GradientMatchesCentralDifferences2D) {
  std::mt19937 rng(seed() + 1);
  SCOPED_TRACE("seed " + std::to_string(seed()));
  const sv::ArrayD fixed = head_slice(31);
  const sv::ArrayD moving = remapped(head_slice(34), [](double v) { return 1 - v; });
  for (const std::vector<int>& delta : {std::vector<int>{8, 8}, std::vector<int>{5, 7}}) {
    for (int bins : {16, 64}) {
      for (double w : {0.0, 0.05}) {
        sv::FfdNmiObjective<double> obj(fixed, moving, delta, w, bins);
        const sv::ArrayD grid = random_grid(fixed.dims(), delta, 2.0, rng);
        const double worst = worst_gradient_error(obj, grid, 12, rng);
        std::printf("2-D delta %d x %d, %d bins, w %g: worst relative error %.3g\n", delta[0],
                    delta[1], bins, w, worst);
        EXPECT_LT(worst, 1e-5);
      }
    }
  }
}

TEST(FfdNmi, GradientMatchesCentralDifferences3D) {
  std::mt19937 rng(seed() + 2);
  SCOPED_TRACE("seed " + std::to_string(seed()));
  const sv::ArrayD fixed = head_box(20, 30, 30, {18, 36, 40});
  const sv::ArrayD moving =
      remapped(head_box(22, 31, 29, {18, 36, 40}), [](double v) { return std::sqrt(v); });
  const std::vector<int> delta{4, 5, 6};
  for (double w : {0.0, 0.05}) {
    sv::FfdNmiObjective<double> obj(fixed, moving, delta, w, 32);
    const sv::ArrayD grid = random_grid(fixed.dims(), delta, 1.5, rng);
    const double worst = worst_gradient_error(obj, grid, 12, rng);
    std::printf("3-D delta 4 x 5 x 6, 32 bins, w %g: worst relative error %.3g\n", w, worst);
    EXPECT_LT(worst, 1e-5);
  }
}

// NMI of the head slice with itself is the largest over translations and random deformations,
// and stays the largest when the moving copy's intensities are remapped monotonically; affine
// remaps (inversion included) leave NMI unchanged (each image is binned by its own min / max and
// the window is symmetric). SSD's minimum, by contrast, leaves the identity once the contrast is
// inverted.
TEST(FfdNmi, SelfAlignmentIsTheMaximumAndRemapsDoNotMoveIt) {
  std::mt19937 rng(seed() + 3);
  SCOPED_TRACE("seed " + std::to_string(seed()));
  const sv::ArrayD F = head_slice(31);
  const std::vector<int> delta{8, 8};
  std::vector<sv::ArrayD> grids{translation(F.dims(), delta, {0.25, 0}),
                                translation(F.dims(), delta, {0, -0.5}),
                                translation(F.dims(), delta, {1, 1})};
  for (double a : {0.25, 1.0, 3.0}) grids.push_back(random_grid(F.dims(), delta, a, rng));
  const sv::ArrayD identity(sv::ffd_grid_shape(F.dims(), delta), 2);
  struct Remap {
    const char* name;
    std::function<double(double)> f;
    bool affine;
  };
  const Remap remaps[] = {{"identity", [](double v) { return v; }, true},
                          {"inverted", [](double v) { return 1 - v; }, true},
                          {"3 v + 7", [](double v) { return 3 * v + 7; }, true},
                          {"squared", [](double v) { return v * v; }, false},
                          {"square root", [](double v) { return std::sqrt(v); }, false},
                          {"1 - v^3", [](double v) { return 1 - v * v * v; }, false}};
  const sv::FfdNmiObjective<double> self(F, F, delta, 0.0, 64);
  for (const Remap& r : remaps) {
    SCOPED_TRACE(r.name);
    const sv::FfdNmiObjective<double> obj(F, remapped(F, r.f), delta, 0.0, 64);
    const double best = obj.nmi(identity).nmi;
    double second = 0;
    for (const sv::ArrayD& g : grids) {
      const double n = obj.nmi(g).nmi;
      second = std::max(second, n);
      EXPECT_LT(n, best);
      if (r.affine) {
        EXPECT_NEAR(n, self.nmi(g).nmi, 1e-12);
      }
    }
    std::printf("%-12s NMI at the identity %.6f, largest elsewhere %.6f\n", r.name, best, second);
  }
  // SSD against the inverted copy: a translation lowers it (the identity is not its minimum).
  const sv::FfdSsdObjective<double> ssd(F, remapped(F, [](double v) { return 1 - v; }), delta, 0);
  const double at_identity = ssd.evaluate(identity), shifted = ssd.evaluate(grids[2]);
  std::printf("SSD / N against the inverted copy: identity %.5f, shifted by (1, 1) %.5f\n",
              at_identity, shifted);
  EXPECT_LT(shifted, at_identity);
}

namespace {

struct Outcome {
  double rms = 0;
  std::size_t inside = 0;
  int iterations = 0;
  double seconds = 0;
};

Outcome register_and_measure(const char* name, const sv::ArrayD& fixed, const sv::ArrayD& moving,
                             const sv::ArrayD& truth, const sv::FfdRegistrationOptions& opt) {
  const sv::FfdRegistrationResult r = sv::register_ffd(fixed, moving, opt);
  Outcome o;
  o.rms = field_rms_error(r.grid, truth, opt.spacing, fixed, 0.15, &o.inside);
  o.iterations = r.iterations;
  o.seconds = r.time.total;
  std::printf("%s: field RMS error %.3f voxel over %zu voxels, %d iterations, %.2f s\n", name,
              o.rms, o.inside, o.iterations, o.seconds);
  for (const auto& l : r.levels) {
    std::printf(
        "  level spacing %d: %d iterations, %d evaluations, similarity %.4g -> %.4g, stop: %s\n",
        l.spacing[0], l.iterations, l.evaluations, l.ssd.front(), l.ssd.back(), l.stop.c_str());
    for (std::size_t i = 1; i < l.objective.size(); ++i)
      EXPECT_LE(l.objective[i], l.objective[i - 1]);
  }
  return o;
}

}  // namespace

// fixed = head(x + u_true(x)), moving = a remapped head: u_true is the solution for NMI; SSD,
// which compares intensities, cannot find it.
TEST(FfdNmi, RecoversAKnownDeformationOfARemappedHeadSliceWhereSsdFails) {
  std::mt19937 rng(seed() + 4);
  SCOPED_TRACE("seed " + std::to_string(seed()));
  const sv::ArrayD original = head_slice(31);
  sv::FfdRegistrationOptions opt;
  opt.spacing = {8, 8};
  opt.levels = 3;
  opt.iterations = 100;
  const sv::ArrayD truth = random_smooth_grid(original.dims(), opt.spacing, 3.0, rng);
  ASSERT_GT(min_det(truth, opt.spacing, original.dims()), 0.0);
  const sv::ArrayD fixed = sv::warp(original, truth, opt.spacing);
  for (const auto& remap :
       {std::make_pair("inverted", std::function<double(double)>([](double v) { return 1 - v; })),
        std::make_pair("squared", std::function<double(double)>([](double v) { return v * v; }))}) {
    SCOPED_TRACE(remap.first);
    const sv::ArrayD moving = remapped(original, remap.second);
    opt.metric = sv::FfdMetric::Nmi;
    const Outcome nmi = register_and_measure((std::string("NMI, ") + remap.first).c_str(), fixed,
                                             moving, truth, opt);
    opt.metric = sv::FfdMetric::Ssd;
    const Outcome ssd = register_and_measure((std::string("SSD, ") + remap.first).c_str(), fixed,
                                             moving, truth, opt);
    EXPECT_LT(nmi.rms, 0.5);
    EXPECT_GT(nmi.inside, original.points() / 8);
    if (std::string(remap.first) == "inverted") {
      EXPECT_GT(ssd.rms, 0.5);
    }
  }
}

TEST(FfdNmi, RecoversAKnownDeformationOfAnInvertedReducedHeadVolume) {
  std::mt19937 rng(seed() + 5);
  SCOPED_TRACE("seed " + std::to_string(seed()));
  sv::ReduceOptions ro;
  ro.samples = true;
  const sv::ArrayD original = sv::reduce2(head(), ro).samples;
  sv::FfdRegistrationOptions opt;
  opt.spacing = {8, 8, 8};
  opt.levels = 2;
  opt.iterations = 40;
  const sv::ArrayD truth = random_smooth_grid(original.dims(), opt.spacing, 3.0, rng);
  ASSERT_GT(min_det(truth, opt.spacing, original.dims()), 0.0);
  const sv::ArrayD fixed = sv::warp(original, truth, opt.spacing);
  const sv::ArrayD moving = remapped(original, [](double v) { return 1 - v; });
  opt.metric = sv::FfdMetric::Nmi;
  const Outcome nmi = register_and_measure("3-D NMI, inverted", fixed, moving, truth, opt);
  opt.metric = sv::FfdMetric::Ssd;
  const Outcome ssd = register_and_measure("3-D SSD, inverted", fixed, moving, truth, opt);
  EXPECT_LT(nmi.rms, 0.5);
  EXPECT_GT(ssd.rms, 0.5);
}

TEST(FfdNmi, ResultDoesNotDependOnTheThreadCount) {
  const sv::ArrayD fixed = head_slice(30);
  const sv::ArrayD moving = remapped(head_slice(32), [](double v) { return 1 - v; });
  sv::FfdRegistrationOptions opt;
  opt.metric = sv::FfdMetric::Nmi;
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

TEST(FfdNmi, RefusesBadBinsAndBadGrids) {
  const sv::ArrayD a({40, 48}), b({40, 47});
  auto expect_refusal = [](const std::function<void()>& fn, const std::string& words) {
    try {
      fn();
      ADD_FAILURE() << "no sv::Error, expected one mentioning '" << words << "'";
    } catch (const sv::Error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  sv::FfdRegistrationOptions opt;
  opt.metric = sv::FfdMetric::Nmi;
  opt.spacing = {8, 8};
  opt.levels = 1;
  for (int bins : {7, 0, -3, 1025}) {
    opt.bins = bins;
    expect_refusal([&] { sv::register_ffd(a, a, opt); },
                   "needs 8 to 1024 bins per image, got " + std::to_string(bins));
    expect_refusal([&] { sv::FfdNmiObjective<double>(a, a, {8, 8}, 0.0, bins); }, "bins");
  }
  expect_refusal([&] { sv::FfdNmiObjective<double>(a, b, {8, 8}, 0.0); }, "same shape");
  expect_refusal([&] { sv::FfdNmiObjective<double>(a, a, {8, 8}, -1.0); }, "bending-energy");
  const sv::FfdNmiObjective<double> obj(a, a, {8, 8}, 0.0);
  expect_refusal([&] { obj.evaluate(sv::ArrayD({9, 10}, 2)); }, "control grid");
  sv::ArrayD huge(obj.grid_shape(), 2);
  huge[3] = 1e12;
  expect_refusal([&] { obj.evaluate(huge); }, "beyond the limit");
  // A constant image: no information, a zero gradient (the optimiser stops at once).
  sv::ArrayD g;
  obj.evaluate(sv::ArrayD(obj.grid_shape(), 2), &g);
  for (double v : g.vec()) EXPECT_EQ(v, 0.0);
}
