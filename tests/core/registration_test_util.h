// Helpers shared by the registration tests (test_registration.cpp, test_registration_nmi.cpp):
// the run's seed, the gradient check by extrapolated central differences, and the field and
// Jacobian measures of a recovered deformation.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

#include "splineview/array.h"
#include "splineview/ffd.h"

namespace svtest {

// A fresh seed every run (printed by the tests' traces); SPLINEVIEW_TEST_SEED=N repeats a run.
inline unsigned seed() {
  static const unsigned s = [] {
    const char* env = std::getenv("SPLINEVIEW_TEST_SEED");
    return env ? static_cast<unsigned>(std::strtoul(env, nullptr, 10)) : std::random_device{}();
  }();
  return s;
}

// Central differences of the objective (an SSD or NMI objective: evaluate(grid, &gradient) and
// evaluate(grid)) at `count` random control-point components the images drive, against the
// analytic gradient; returns the worst relative error.
template <class Obj>
double worst_gradient_error(const Obj& obj, const sv::ArrayD& grid, int count, std::mt19937& rng) {
  sv::ArrayD g;
  obj.evaluate(grid, &g);
  double gmax = 0;
  for (double v : g.vec()) gmax = std::max(gmax, std::abs(v));
  EXPECT_GT(gmax, 0.0);
  std::uniform_int_distribution<std::size_t> pick(0, grid.size() - 1);
  double worst = 0;
  int checked = 0;
  for (int tries = 0; checked < count && tries < 100 * count; ++tries) {
    const std::size_t i = pick(rng);
    if (std::abs(g[i]) < 0.05 * gmax) continue;
    // Central differences at h and h / 2, extrapolated (Richardson): the h^2 term cancels.
    // Plain central differences at h = 1e-4 erred by 2.4e-5 of a small component once (NMI,
    // seed 978311284, 2-D 5 x 7, 64 bins, w 0.05), converging as h^2 to the analytic value.
    auto at = [&](double s) {  // the objective with component i moved by s
      sv::ArrayD q = grid;
      q[i] += s;
      return obj.evaluate(q);
    };
    auto central = [&](double h) { return (at(h) - at(-h)) / (2 * h); };
    const auto error_at = [&](double h) {
      const double fd = (4 * central(h / 2) - central(h)) / 3;
      return std::abs(fd - g[i]) / std::abs(g[i]);
    };
    // The NMI objective is only piecewise smooth: a warped value that overshoots the intensity
    // range is clamped, which puts a kink where it crosses the end. A kink at distance d from
    // the point spoils every central difference with h > d (seed 2828534222, 2-D 5 x 7, 64 bins,
    // w 0.05: the error stayed near 3e-4 from h = 1e-2 to 1e-4 and fell to 1e-7 at h = 3e-5;
    // seed 3342881072, 8 x 8, 64 bins, w 0: 5e-4 at h = 1e-4, 1e-6 only below h = 2e-5, where
    // rounding reaches 1e-5). A kink lies on one side: the one-sided second-order difference
    // of the other side is unaffected, so where the central one errs by 1e-6 or more the
    // forward and backward ones (h = 1e-4, truncation h^2 / 3 f''') are tried too and the best
    // counts. A wrong gradient is wrong on both sides; kinks within 2e-4 on both sides at once
    // are rarer by the square of their density.
    double e = error_at(1e-4);
    if (e >= 1e-6) {
      const double h = 1e-4;
      const double f0 = obj.evaluate(grid);
      const double fwd = (-3 * f0 + 4 * at(h) - at(2 * h)) / (2 * h);
      const double bwd = (3 * f0 - 4 * at(-h) + at(-2 * h)) / (2 * h);
      e = std::min(
          {e, std::abs(fwd - g[i]) / std::abs(g[i]), std::abs(bwd - g[i]) / std::abs(g[i])});
    }
    worst = std::max(worst, e);
    ++checked;
  }
  EXPECT_EQ(checked, count);
  return worst;
}

// RMS of |u - u_true| (vector norm, voxels) over the voxels where `mask` exceeds `threshold`.
inline double field_rms_error(const sv::ArrayD& grid, const sv::ArrayD& truth,
                              const std::vector<int>& delta, const sv::ArrayD& mask,
                              double threshold, std::size_t* count = nullptr) {
  const sv::ArrayD u = sv::ffd_field(grid, delta, mask.dims());
  const sv::ArrayD t = sv::ffd_field(truth, delta, mask.dims());
  const std::size_t R = mask.rank();
  double sum = 0;
  std::size_t n = 0;
  for (std::size_t v = 0; v < mask.points(); ++v) {
    if (mask[v] <= threshold) continue;
    for (std::size_t c = 0; c < R; ++c) {
      const double d = u[v * R + c] - t[v * R + c];
      sum += d * d;
    }
    ++n;
  }
  if (count) *count = n;
  return n ? std::sqrt(sum / static_cast<double>(n)) : 0.0;
}

inline double min_det(const sv::ArrayD& grid, const std::vector<int>& delta,
                      const std::vector<std::size_t>& shape) {
  const sv::ArrayD d = sv::ffd_jacobian_determinant_field(grid, delta, shape);
  return *std::min_element(d.vec().begin(), d.vec().end());
}

}  // namespace svtest
