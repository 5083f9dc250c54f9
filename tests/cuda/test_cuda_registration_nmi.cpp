// The GPU NMI objective (cuda_registration_nmi.h) against the CPU's in double
// (sv::FfdNmiObjective<double> on the same float images and grid), within bounds derived here
// from the float arithmetic (nothing is a figure measured from our own code):
//   - e_v, the warped intensity's error: sum_a D_a du + 48 eps max|coef| (du the field kernel's
//     bound + the grid's rounding, D_a the largest neighbouring coefficient difference; as
//     test_cuda_registration.cpp derives it), so t_M moves by at most dt = scale_M e_v; e_d = R H
//     du + 48 eps max|coef| bounds the derivatives' error.
//   - NMI: to first order |dNMI| <= dt S + Q, S = (1/N) sum_x sum_{i,k} beta3(t_F - i)
//     |beta3'(t_M - k)| |G(i,k)| (from the CPU's own histogram and table in double), Q the
//     integer histogram's rounding (each product moved by <= 2^-33: 2^-29 in all per voxel, times
//     the largest |dNMI/dp| <= (2 + NMI)(1 + log(N 2^32)) / H(F,M)); twice that is the bound (the
//     second-order remainder is far smaller while dt S << 1).
//   - The gradient: per histogram cell |dp| <= D(i,k) = (1/N) sum_x wf_i |dwm_k| dt (+ the
//     rounding), hence |dG(i,k)| <= (NMI D/p + |dNMI| |log p| + D_M/p_M + |G| dH) / H(F,M); per
//     voxel |ds| <= sum wf_i (|beta3''| dt |G| + |dwm_k| |dG|), the per-voxel gradient within
//     (1/N) scale_M (|ds| max D_a + |s| e_d) (the whole value near the clamp ends, where dt_M/du
//     may switch off), and a control point within twice prod(delta) times the largest of those
//     plus 8 eps of the largest gradient (float stores and products).
//   - Determinism: the same grid gives the same bits on every run (integer histogram).
//   - Recovery: a known smooth deformation of the head from an inverted copy, < 0.5 voxel RMS in
//     the head, per precise kernel, through sv::cuda::register_ffd with metric Nmi.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "require_cuda.h"
#include "splineview/bspline.h"
#include "splineview/cuda_registration.h"
#include "splineview/cuda_registration_nmi.h"
#include "splineview/error.h"
#include "splineview/ffd.h"
#include "splineview/ffd_warp.h"
#include "splineview/interpolant.h"
#include "splineview/io.h"
#include "splineview/registration.h"
#include "splineview/registration_nmi.h"

namespace {

namespace cu = sv::cuda;
using cu::FfdKernel;
using sv::ArrayD;
using sv::ArrayF;
using Shape = std::vector<std::size_t>;

constexpr double kEps = FLT_EPSILON;

const ArrayD& head() {
  static const ArrayD h = [] {
    std::vector<std::string> dirs;
    if (const char* e = std::getenv("SPLINEVIEW_ASSET_DIR")) dirs.emplace_back(e);
    dirs.emplace_back(SPLINEVIEW_ASSET_DIR);
    dirs.emplace_back("assets");
    for (const std::string& d : dirs) {
      const std::string path = d + "/mri_t1_head.nrrd";
      if (!std::ifstream(path)) continue;
      ArrayD a = sv::load_any(path, false).array;
      for (double& v : a.vec()) v /= 255.0;
      return a;
    }
    return ArrayD();
  }();
  return h;
}

#define REQUIRE_HEAD() \
  if (head().empty()) GTEST_SKIP() << "the bundled MRI head (assets/mri_t1_head.nrrd) is missing"

ArrayD head_slice(std::size_t z) {
  const ArrayD& h = head();
  ArrayD s({h.dim(1), h.dim(2)});
  for (std::size_t y = 0; y < h.dim(1); ++y)
    for (std::size_t x = 0; x < h.dim(2); ++x) s.at2(y, x) = h.at3(z, y, x);
  return s;
}

ArrayD head_box(std::size_t z0, std::size_t y0, std::size_t x0, const Shape& shape) {
  const ArrayD& h = head();
  ArrayD b(shape);
  for (std::size_t z = 0; z < shape[0]; ++z)
    for (std::size_t y = 0; y < shape[1]; ++y)
      for (std::size_t x = 0; x < shape[2]; ++x) b.at3(z, y, x) = h.at3(z0 + z, y0 + y, x0 + x);
  return b;
}

ArrayD inverted(const ArrayD& a) {
  ArrayD r = a;
  for (double& v : r.vec()) v = 1 - v;
  return r;
}

ArrayD random_grid(const Shape& image, const std::vector<int>& delta, double amplitude,
                   std::mt19937& rng) {
  ArrayD g(sv::ffd_grid_shape(image, delta), image.size());
  std::uniform_real_distribution<double> U(-amplitude, amplitude);
  for (double& v : g.vec()) v = U(rng);
  return g;
}

ArrayD random_smooth_grid(const Shape& image, const std::vector<int>& delta, double amplitude,
                          std::mt19937& rng) {
  std::vector<int> coarse = delta;
  for (int& d : coarse) d *= 2;
  Shape cshape = sv::ffd_grid_shape(image, coarse);
  for (std::size_t& m : cshape) ++m;
  ArrayD c(cshape, image.size());
  std::uniform_real_distribution<double> U(-amplitude, amplitude);
  for (double& v : c.vec()) v = U(rng);
  const ArrayD fine = sv::ffd_refine(c, coarse);
  const Shape shape = sv::ffd_grid_shape(image, delta);
  ArrayD g(shape, image.size());
  const std::size_t R = image.size();
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

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

// max|c|, D_a per axis (neighbouring differences, the wrap pair included), H (second
// differences, pure and mixed; at least 2 max D).
struct SplineBounds {
  double maxc = 0, H = 0;
  std::vector<double> D;
};

SplineBounds spline_bounds(const ArrayD& c) {
  SplineBounds b;
  const std::size_t R = c.rank();
  b.maxc = max_abs(c.vec());
  b.D.assign(R, 0.0);
  std::vector<std::size_t> stride(R, 1);
  for (std::size_t a = R - 1; a-- > 0;) stride[a] = stride[a + 1] * c.dim(a + 1);
  for (std::size_t i = 0; i < c.points(); ++i) {
    std::vector<std::size_t> at(R);
    for (std::size_t a = 0, rest = i; a < R; ++a) {
      at[R - 1 - a] = rest % c.dim(R - 1 - a);
      rest /= c.dim(R - 1 - a);
    }
    for (std::size_t a = 0; a < R; ++a) {
      const std::size_t n = c.dim(a);
      const std::size_t next = at[a] + 1 < n ? i + stride[a] : i - (n - 1) * stride[a];
      b.D[a] = std::max(b.D[a], std::fabs(c[next] - c[i]));
      if (at[a] + 1 < n && at[a] > 0)
        b.H = std::max(b.H, std::fabs(c[i + stride[a]] - 2 * c[i] + c[i - stride[a]]));
      for (std::size_t e = a + 1; e < R; ++e)
        if (at[a] + 1 < c.dim(a) && at[e] + 1 < c.dim(e))
          b.H = std::max(b.H, std::fabs(c[i + stride[a] + stride[e]] - c[i + stride[a]] -
                                        c[i + stride[e]] + c[i]));
    }
  }
  for (double d : b.D) b.H = std::max(b.H, 2 * d);
  return b;
}

struct Bounds {
  double nmi = 0, gradient = 0;
};

// The bounds of the header comment, from the CPU's quantities in double.
Bounds derive_bounds(const ArrayD& fixed, const ArrayD& moving, const ArrayD& grid,
                     const std::vector<int>& delta, int bins, double du) {
  const sv::FfdNmiObjective<double> cpu(fixed, moving, delta, 0.0, bins);
  const sv::NmiIntensityMap& fm = cpu.fixed_map();
  const sv::NmiIntensityMap& mm = cpu.moving_map();
  const ArrayD warped = sv::warp(moving, grid, delta);
  const sv::Interpolant<double> spline(moving, {3, sv::Boundary::Reflect}, true);
  const SplineBounds sb = spline_bounds(spline.coefficients());
  const std::size_t N = fixed.size(), B = static_cast<std::size_t>(bins), R = fixed.rank();
  double sumD = 0, maxD = 0;
  for (double d : sb.D) {
    sumD += d;
    maxD = std::max(maxD, d);
  }
  const double e_v = sumD * du + 48 * kEps * sb.maxc;
  const double e_d = static_cast<double>(R) * sb.H * du + 48 * kEps * sb.maxc;
  const double dt = mm.scale * e_v;
  struct Voxel {
    int i0, k0;
    double wf[4], wm[4], dwm[4], ddwm[4];
    double t;
  };
  std::vector<Voxel> vox(N);
  std::vector<double> joint(B * B, 0.0);
  for (std::size_t v = 0; v < N; ++v) {
    Voxel& x = vox[v];
    double ff, fmv;
    x.t = mm.coordinate(warped[v]);
    x.i0 = fm.window(fm.coordinate(fixed[v]), &ff);
    x.k0 = mm.window(x.t, &fmv);
    sv::bspline_weights_frac<double>(3, ff, x.wf, 0);
    sv::bspline_weights_frac<double>(3, fmv, x.wm, 0);
    sv::bspline_weights_frac<double>(3, fmv, x.dwm, 1);
    sv::bspline_weights_frac<double>(3, fmv, x.ddwm, 2);
    for (int i = 0; i < 4; ++i)
      for (int k = 0; k < 4; ++k) joint[(x.i0 + i) * B + x.k0 + k] += x.wf[i] * x.wm[k];
  }
  std::vector<double> G;
  const sv::NmiValue nv = sv::nmi_from_histogram(joint, bins, static_cast<double>(N), &G);
  const double L = std::log(static_cast<double>(N) * 4294967296.0);
  const double Q =
      (std::ldexp(1.0, -29) * (2 + nv.nmi) * (1 + L) +
       static_cast<double>(B * B) * std::ldexp(1.0, -32) / static_cast<double>(N) * (1 + L) * 3) /
      nv.h_joint;
  std::vector<double> Dc(B * B, 0.0);
  double S = 0;
  for (const Voxel& x : vox)
    for (int i = 0; i < 4; ++i)
      for (int k = 0; k < 4; ++k) {
        const std::size_t c = (x.i0 + i) * B + x.k0 + k;
        S += x.wf[i] * std::fabs(x.dwm[k]) * std::fabs(G[c]);
        Dc[c] += x.wf[i] * std::fabs(x.dwm[k]) * dt + std::ldexp(1.0, -33);
      }
  S /= static_cast<double>(N);
  Bounds b;
  b.nmi = 2 * (dt * S + Q);
  std::vector<double> p(B * B), pm(B, 0.0), Dm(B, 0.0);
  double dH = 0;
  for (std::size_t c = 0; c < B * B; ++c) {
    p[c] = joint[c] / static_cast<double>(N);
    Dc[c] /= static_cast<double>(N);
    pm[c % B] += p[c];
    Dm[c % B] += Dc[c];
    dH += Dc[c] * (1 + (p[c] > 0 ? std::fabs(std::log(p[c])) : L));
  }
  std::vector<double> dG(B * B, 0.0);
  for (std::size_t c = 0; c < B * B; ++c) {
    if (!(p[c] > 0)) continue;
    const std::size_t k = c % B;
    dG[c] = (nv.nmi * Dc[c] / p[c] + b.nmi * std::fabs(std::log(p[c])) + Dm[k] / pm[k] +
             std::fabs(G[c]) * dH) /
            nv.h_joint;
  }
  double worst = 0, largest = 0;
  const double top = bins - 2.0;
  for (const Voxel& x : vox) {
    double s = 0, ds = 0;
    for (int i = 0; i < 4; ++i)
      for (int k = 0; k < 4; ++k) {
        const std::size_t c = (x.i0 + i) * B + x.k0 + k;
        s += x.wf[i] * x.dwm[k] * G[c];
        ds += x.wf[i] * (std::fabs(x.ddwm[k]) * dt * std::fabs(G[c]) + std::fabs(x.dwm[k]) * dG[c]);
      }
    const double near_clamp = (x.t - 1.0 <= dt || top - x.t <= dt) ? 1.0 : 0.0;
    const double bound = mm.scale * ((ds + near_clamp * std::fabs(s)) * maxD + std::fabs(s) * e_d) /
                         static_cast<double>(N);
    worst = std::max(worst, bound);
    largest = std::max(largest, mm.scale * std::fabs(s) * maxD / static_cast<double>(N));
  }
  double tiles = 1;
  for (int d : delta) tiles *= d;
  b.gradient = 2 * tiles * worst + 8 * kEps * tiles * largest;
  return b;
}

double kernel_du(std::size_t, double maxg) {
  return 8.5 * kEps * maxg;  // per-voxel and the tile kernels (cuda_ffd.h), + the grid's rounding
}

const FfdKernel kPrecise[] = {FfdKernel::PerVoxel, FfdKernel::ThreadPerTileFma,
                              FfdKernel::ThreadPerTileLerp};

}  // namespace

TEST(CudaNmi, ObjectiveAndGradientMatchTheCpuWithinTheDerivedBounds) {
  REQUIRE_CUDA();
  REQUIRE_HEAD();
  std::mt19937 rng(20240612);
  struct Case {
    ArrayD fixed, moving;
    std::vector<int> delta;
    int bins;
    double amplitude;
  };
  std::vector<Case> cases;
  cases.push_back({head_slice(31), inverted(head_slice(33)), {8, 8}, 64, 3.0});
  cases.push_back({head_slice(20), head_slice(22), {5, 7}, 32, 2.0});
  cases.push_back({head_slice(28), inverted(head_slice(29)), {6, 6}, 100, 2.0});  // global atomics
  cases.push_back({head_box(20, 30, 30, {18, 36, 40}),
                   inverted(head_box(22, 31, 29, {18, 36, 40})),
                   {4, 5, 6},
                   32,
                   1.5});
  for (const Case& c : cases) {
    // Both objectives see the same float images and grid.
    const ArrayF ff = ArrayF::from(c.fixed), mf = ArrayF::from(c.moving);
    const ArrayD fd = ArrayD::from(ff), md = ArrayD::from(mf);
    const ArrayD grid =
        ArrayD::from(ArrayF::from(random_grid(c.fixed.dims(), c.delta, c.amplitude, rng)));
    const sv::FfdNmiObjective<double> cpu(fd, md, c.delta, 0.0, c.bins);
    ArrayD gc;
    const double f_cpu = cpu.evaluate(grid, &gc);
    const Bounds b = derive_bounds(fd, md, grid, c.delta, c.bins,
                                   kernel_du(c.fixed.rank(), max_abs(grid.vec())));
    for (FfdKernel k : kPrecise) {
      const cu::FfdNmiObjective gpu(ff, mf, c.delta, 0.0, c.bins, sv::Boundary::Reflect, k);
      ArrayD gg, gg2;
      const double f_gpu = gpu.evaluate(grid, &gg);
      const double f_again = gpu.evaluate(grid, &gg2);
      EXPECT_EQ(f_gpu, f_again);
      EXPECT_EQ(gg.vec(), gg2.vec());  // deterministic
      double worst = 0;
      for (std::size_t i = 0; i < gc.size(); ++i) worst = std::max(worst, std::fabs(gg[i] - gc[i]));
      std::printf(
          "%zu-D %zux%zu.. bins %d, %s: |f gpu - cpu| %.3g (bound %.3g), max|g gpu - cpu| %.3g "
          "(bound %.3g, max|g| %.3g)\n",
          c.fixed.rank(), c.fixed.dim(0), c.fixed.dim(1), c.bins, cu::ffd_kernel_name(k),
          std::fabs(f_gpu - f_cpu), b.nmi, worst, b.gradient, max_abs(gc.vec()));
      EXPECT_LE(std::fabs(f_gpu - f_cpu), b.nmi);
      EXPECT_LE(worst, b.gradient);
    }
  }
}

TEST(CudaNmi, RecoversAKnownDeformationOfAnInvertedHeadSlice) {
  REQUIRE_CUDA();
  REQUIRE_HEAD();
  std::mt19937 rng(20240613);
  const ArrayD original = head_slice(31);
  sv::FfdRegistrationOptions opt;
  opt.metric = sv::FfdMetric::Nmi;
  opt.spacing = {8, 8};
  opt.levels = 3;
  opt.iterations = 100;
  const ArrayD truth = random_smooth_grid(original.dims(), opt.spacing, 3.0, rng);
  const ArrayD fixed = sv::warp(original, truth, opt.spacing);
  const ArrayF ff = ArrayF::from(fixed), mf = ArrayF::from(inverted(original));
  for (FfdKernel k : kPrecise) {
    const sv::FfdRegistrationResult r = cu::register_ffd(ff, mf, opt, k);
    const ArrayD u = sv::ffd_field(r.grid, opt.spacing, fixed.dims());
    const ArrayD t = sv::ffd_field(truth, opt.spacing, fixed.dims());
    double sum = 0;
    std::size_t n = 0;
    for (std::size_t v = 0; v < fixed.points(); ++v) {
      if (fixed[v] <= 0.15) continue;
      for (std::size_t a = 0; a < 2; ++a)
        sum += (u[v * 2 + a] - t[v * 2 + a]) * (u[v * 2 + a] - t[v * 2 + a]);
      ++n;
    }
    const double rms = std::sqrt(sum / static_cast<double>(n));
    std::printf(
        "GPU NMI %s, inverted head slice: field RMS error %.3f voxel over %zu voxels, %d "
        "iterations, %.3f s (field %.3f, warp+histogram %.3f, gradient %.3f)\n",
        cu::ffd_kernel_name(k), rms, n, r.iterations, r.time.total, r.time.field, r.time.warp,
        r.time.gradient);
    EXPECT_LT(rms, 0.5);
    EXPECT_GT(n, original.points() / 8);
  }
}

TEST(CudaNmi, RefusesBadArguments) {
  const ArrayF a({40, 48}), b({40, 47});
  auto refuses = [](const std::function<void()>& fn, const std::string& words) {
    try {
      fn();
      ADD_FAILURE() << "no sv::Error, expected one mentioning '" << words << "'";
    } catch (const sv::Error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  refuses([&] { cu::FfdNmiObjective(a, a, {8, 8}, 0.0, 7); }, "8 to 1024 bins");
  refuses([&] { cu::FfdNmiObjective(a, b, {8, 8}, 0.0); }, "same shape");
  refuses([&] { cu::FfdNmiObjective(a, a, {8, 8}, -1.0); }, "bending-energy");
  refuses(
      [&] {
        cu::FfdNmiObjective(a, a, {8, 9}, 0.0, 64, sv::Boundary::Reflect,
                            FfdKernel::ThreadPerTileFma);
      },
      "takes spacings 1..");
}
