// The CUDA GRBF of cuda_grbf.h (issue 18) against the CPU's sv::grbf_* in double on the same
// inputs: the weights (device solve through the axes' inverses vs the CPU's Cholesky solves),
// the interpolation property of the device weights, the tensor-grid evaluation, the evaluation at
// arbitrary positions, the fused solve + grid, and the refusal of a singular system. Each result
// must lie within a bound derived below from the condition number, the unit roundoff and the
// Gaussian sums; the worst share of the bound is printed. Skips with the reason without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "require_cuda.h"
#include "splineview/cuda_grbf.h"
#include "splineview/grbf.h"

namespace {

using sv::Array;
namespace cu = sv::cuda;

constexpr double kPi = 3.14159265358979323846;

template <class T>
Array<T> random_samples(const std::vector<std::size_t>& dims, std::size_t channels, unsigned seed) {
  Array<T> a(dims, channels);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<T>(u(rng));
  return a;
}

// prod_d (1 + sqrt(2 pi) sigma_d): bounds sum_k prod_d g_d(x_d - k_d) for any x (grbf.h).
double gauss_sum_bound(const std::vector<double>& sigma) {
  double s = 1;
  for (double v : sigma) s *= 1 + std::sqrt(2 * kPi) * v;
  return s;
}

struct Case {
  std::vector<std::size_t> dims;
  std::size_t channels;
  std::vector<double> sigma;
};

const std::vector<Case> kCases = {
    {{40}, 1, {1.0}},       {{13, 17}, 1, {1.0}},   {{13, 17}, 3, {0.8, 1.2}},
    {{31, 29}, 1, {1.15}},  {{7, 9, 11}, 1, {1.0}}, {{6, 10, 9}, 2, {0.7, 1.0, 1.1}},
    {{1, 12, 5}, 1, {1.0}}, {{64, 48}, 1, {1.0}},
};

std::string describe(const Case& c) {
  std::string s;
  for (std::size_t d : c.dims) s += (s.empty() ? "" : "x") + std::to_string(d);
  s += " c" + std::to_string(c.channels) + " sigma";
  for (double v : c.sigma) s += " " + std::to_string(v).substr(0, 4);
  return s;
}

// Positions of a zoom by `z` per axis (the output's grid over the input's extent).
std::vector<std::vector<double>> zoom_positions(const std::vector<std::size_t>& dims,
                                                const std::vector<double>& z) {
  std::vector<std::vector<double>> p(dims.size());
  for (std::size_t d = 0; d < dims.size(); ++d) {
    const std::size_t m = std::max<std::size_t>(
        1, static_cast<std::size_t>(std::lround(static_cast<double>(dims[d]) * z[d])));
    for (std::size_t o = 0; o < m; ++o)
      p[d].push_back(m == 1 ? 0.0
                            : static_cast<double>(o) * static_cast<double>(dims[d] - 1) /
                                  static_cast<double>(m - 1));
  }
  return p;
}

template <class T>
void check_solve(const Case& c, double& worst) {
  const Array<T> f = random_samples<T>(c.dims, c.channels, 7);
  sv::GrbfOptions opt;
  opt.sigma = c.sigma;
  const sv::GrbfWeights<double> ref = sv::grbf_solve(Array<double>::from(f), opt);
  const sv::GrbfWeights<T> gpu = cu::grbf_solve(f, opt);
  const double u = 0.5 * std::numeric_limits<T>::epsilon();
  const double cond = ref.system.condition;
  ASSERT_EQ(gpu.w.dims(), f.dims());
  ASSERT_EQ(gpu.w.channels(), f.channels());
  EXPECT_DOUBLE_EQ(gpu.system.condition, cond);
  // Forward error of a linear solve: |dw| <= c n u cond max|w| per axis pass (the inverse's
  // rounding to the band, its own rounding error, the products' rounding in double and the
  // store in T); rank passes, plus the CPU reference's own error in double.
  std::size_t nmax = 0;
  for (std::size_t d : c.dims) nmax = std::max(nmax, d);
  const double bound = 4.0 * static_cast<double>(c.dims.size()) *
                           (u * cond + 64.0 * static_cast<double>(nmax) * 1.2e-16 * cond) *
                           ref.max_abs_weight +
                       64.0 * 1.2e-16 * cond * ref.max_abs_weight;
  double err = 0;
  for (std::size_t i = 0; i < f.size(); ++i)
    err = std::max(err, std::fabs(static_cast<double>(gpu.w[i]) - ref.w[i]));
  EXPECT_LE(err, bound) << describe(c);
  worst = std::max(worst, err / bound);
  EXPECT_NEAR(gpu.max_abs_weight, ref.max_abs_weight, bound);
  // Interpolation: the untruncated sum of the device weights at every sample equals f within
  // the weights' error times the Gaussian sum bound.
  std::vector<double> pos;
  const std::size_t r = c.dims.size();
  for (std::size_t i = 0; i < f.size() / c.channels; ++i) {
    std::size_t rem = i;
    std::vector<double> p(r);
    for (std::size_t d = r; d-- > 0;) {
      p[d] = static_cast<double>(rem % c.dims[d]);
      rem /= c.dims[d];
    }
    pos.insert(pos.end(), p.begin(), p.end());
  }
  sv::GrbfWeights<double> gw;
  gw.w = Array<double>::from(gpu.w);
  gw.sigma = gpu.sigma;
  gw.radius = gpu.radius;
  std::vector<double> s(f.size());
  sv::GrbfEvalOptions full;
  full.truncate = false;
  sv::grbf_sample(gw, pos.data(), pos.size() / r, s.data(), full);
  const double interp_bound =
      (bound + u * ref.max_abs_weight) * gauss_sum_bound(c.sigma) + 2 * u * ref.max_abs_sample;
  double ierr = 0;
  for (std::size_t i = 0; i < f.size(); ++i)
    ierr = std::max(ierr, std::fabs(s[i] - static_cast<double>(f[i])));
  EXPECT_LE(ierr, interp_bound) << describe(c);
  worst = std::max(worst, ierr / interp_bound);
}

TEST(CudaGrbf, SolveMatchesCpuDouble) {
  REQUIRE_CUDA();
  double worst_d = 0, worst_f = 0;
  for (const Case& c : kCases) {
    check_solve<double>(c, worst_d);
    check_solve<float>(c, worst_f);
  }
  std::printf("solve: worst share of the bound: double %.3g, float %.3g\n", worst_d, worst_f);
}

template <class T>
void check_grid(const Case& c, double& worst) {
  const Array<T> f = random_samples<T>(c.dims, c.channels, 11);
  sv::GrbfOptions opt;
  opt.sigma = c.sigma;
  const sv::GrbfWeights<T> g = sv::grbf_solve(f, opt);
  const double u = 0.5 * std::numeric_limits<T>::epsilon();
  std::vector<double> z;
  for (std::size_t d = 0; d < c.dims.size(); ++d) z.push_back(d % 2 ? 2.5 : 0.5);
  const auto pos = zoom_positions(c.dims, z);
  // The same weights in double, the same radius: the CPU's grid in double is the reference.
  sv::GrbfWeights<double> gd;
  gd.w = Array<double>::from(g.w);
  gd.sigma = g.sigma;
  gd.radius = g.radius;
  gd.max_abs_weight = g.max_abs_weight;
  const Array<double> ref = sv::grbf_grid(gd, pos);
  cu::GrbfTiming timing;
  const Array<T> gpu = cu::grbf_grid(g, pos, &timing);
  ASSERT_EQ(gpu.dims(), ref.dims());
  // Each of the rank passes stores in T (relative u of a value at most max|w| times the sums of
  // the Gaussians so far); the sums themselves run in double.
  const double bound = (2.0 * static_cast<double>(c.dims.size()) * u + 1e-13) * g.max_abs_weight *
                       gauss_sum_bound(c.sigma);
  double err = 0;
  for (std::size_t i = 0; i < ref.size(); ++i)
    err = std::max(err, std::fabs(static_cast<double>(gpu[i]) - ref[i]));
  EXPECT_LE(err, bound) << describe(c);
  worst = std::max(worst, err / bound);
  EXPECT_GE(timing.evaluate_ms, 0.0);
  // The fused solve + grid gives the same bits as the two calls.
  sv::GrbfWeights<T> gw;
  const Array<T> fused = cu::grbf_interpolate_grid(f, opt, pos, nullptr, &gw);
  const Array<T> two = cu::grbf_grid(cu::grbf_solve(f, opt), pos);
  ASSERT_EQ(fused.size(), two.size());
  for (std::size_t i = 0; i < fused.size(); ++i) ASSERT_EQ(fused[i], two[i]) << describe(c);
  EXPECT_EQ(gw.radius, cu::grbf_solve(f, opt).radius);
}

TEST(CudaGrbf, GridMatchesCpu) {
  REQUIRE_CUDA();
  double worst_d = 0, worst_f = 0;
  for (const Case& c : kCases) {
    check_grid<double>(c, worst_d);
    check_grid<float>(c, worst_f);
  }
  std::printf("grid: worst share of the bound: double %.3g, float %.3g\n", worst_d, worst_f);
}

template <class T>
void check_points(const Case& c, double& worst) {
  const Array<T> f = random_samples<T>(c.dims, c.channels, 5);
  sv::GrbfOptions opt;
  opt.sigma = c.sigma;
  const sv::GrbfWeights<T> g = sv::grbf_solve(f, opt);
  const std::size_t r = c.dims.size(), m = 777;
  std::mt19937 rng(3);
  std::vector<double> pos(m * r);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t d = 0; d < r; ++d) {
      std::uniform_real_distribution<double> u(-3.0, static_cast<double>(c.dims[d]) + 2.0);
      pos[i * r + d] = u(rng);
    }
  pos[5 * r] = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> ref(m * c.channels), gpu(m * c.channels);
  sv::grbf_sample(g, pos.data(), m, ref.data());
  cu::grbf_sample(g, pos.data(), m, gpu.data());
  // Both sum the same terms in double; exp may differ by an ulp on the device.
  const double bound = 1e-13 * g.max_abs_weight * gauss_sum_bound(c.sigma);
  double err = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (i / c.channels == 5) {
      EXPECT_TRUE(std::isnan(gpu[i])) << describe(c);
      continue;
    }
    err = std::max(err, std::fabs(gpu[i] - ref[i]));
  }
  EXPECT_LE(err, bound) << describe(c);
  worst = std::max(worst, err / bound);
}

TEST(CudaGrbf, PointsMatchCpu) {
  REQUIRE_CUDA();
  double worst = 0;
  for (const Case& c : kCases) {
    check_points<double>(c, worst);
    check_points<float>(c, worst);
  }
  std::printf("points: worst share of the bound %.3g\n", worst);
}

TEST(CudaGrbf, RefusesSingularSystem) {
  REQUIRE_CUDA();
  const Array<float> f = random_samples<float>({40, 40}, 1, 1);
  sv::GrbfOptions opt;
  opt.sigma = {1.6};
  try {
    cu::grbf_solve(f, opt);
    FAIL() << "sigma 1.6 on a 40x40 float grid must be refused";
  } catch (const sv::Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("sigma 1.6"), std::string::npos) << m;
    EXPECT_NE(m.find("condition number"), std::string::npos) << m;
  }
  // The same grid in double is solvable.
  EXPECT_NO_THROW(cu::grbf_solve(Array<double>::from(f), opt));
}

}  // namespace
