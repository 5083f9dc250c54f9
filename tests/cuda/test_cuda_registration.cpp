// The CUDA warp (cuda_warp.h) and the GPU registration objective (cuda_registration.h) against
// the CPU in double, within bounds derived from the float arithmetic (nothing here is a figure
// measured from our own code):
//   - du, the field's error: the kernel's bound (cuda_ffd.h: 8 eps max|c| for per-voxel and the
//     tile kernels; 6/256 max|c| for the texture in 3-D, 4/256 in 2-D) + eps/2 max|c| for the
//     grid's rounding to float.
//   - D_a, the largest difference of neighbouring double coefficients along axis a (the
//     boundary's wrap-around pair included): the spline's derivative along a is a quadratic
//     spline of those differences with positive weights summing to 1, so |d M / d x_a| <= D_a
//     and a position error du moves M by at most sum_a D_a du. H, the largest second difference
//     (pure or mixed), bounds the second derivatives the same way.
//   - The warp: |cuda - cpu| <= sum_a D_a du + 8 eps max|coef| (the CUDA prefilter's tested
//     bound) + eps / 2 max|coef| (the output's rounding); the sampler works in double.
//   - The objective: residuals within e_v = sum_a D_a du + 48 eps max|coef| (float weights:
//     <= 6 eps per axis; three levels of 4-term fma sums: 12 eps; the prefilter: 8 eps; the
//     subtraction), derivatives within e_d = R H du + 48 eps max|coef|. Then
//     |df| <= 2 sqrt(SSD/N) e_v + e_v^2 (Cauchy-Schwarz), and every gradient component within
//     (2/N) prod(delta) (e_v D + Rmax e_d + e_v e_d + 8 eps Rmax D): a control point's basis sums
//     to exactly prod(delta) over the integer voxels, Rmax = max|coef| + max|F| bounds |r|, and
//     8 eps covers the float products and the three float stores of the adjoint.
//   - The bending energy (computed on the device in double since the regulariser moved there)
//     against ffd_bending_energy: two double evaluations of the same quadratic form in different
//     orders, each within gamma_depth (|K| |c|) of the exact one (Higham, "Accuracy and
//     Stability of Numerical Algorithms", 3.1), with the per-axis row sums of |G^(d)| bounded
//     by 1, (4/3)(8/3)/delta and (8/3) 8/delta^3 (total variation of the B-spline's d-th
//     derivative times 4 max|b^(d)|): bending_bound() below. f and every gradient component
//     get w times that bound added.
//   - Central differences of the GPU objective agree with its gradient within the CPU's own
//     central-difference error at the same step + 2 |df| / (2 h) + the gradient bound.
//   - Recovery of a known smooth deformation of the bundled MRI head, as the CPU test:
//     SSD down by more than 90 %, field RMS error in the head under 0.5 voxel, per kernel; the
//     texture kernel is held to 80 % and 1 voxel (its 8-bit weights move the field by up to
//     6/256 max|c|, and the gradient is the adjoint of the exact field, not of the texture's).
//   - Bad arguments throw sv::Error naming the problem (these need no device).
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "require_cuda.h"
#include "splineview/cuda_registration.h"
#include "splineview/cuda_warp.h"
#include "splineview/error.h"
#include "splineview/ffd.h"
#include "splineview/ffd_warp.h"
#include "splineview/interpolant.h"
#include "splineview/io.h"
#include "splineview/prefilter.h"
#include "splineview/pyramid.h"
#include "splineview/registration.h"

namespace {

namespace cu = sv::cuda;
using cu::FfdKernel;
using sv::ArrayD;
using sv::ArrayF;
using sv::Boundary;
using Shape = std::vector<std::size_t>;

constexpr double kEps = FLT_EPSILON;

// The bundled head (62 x 128 x 128, uint8) scaled to [0, 1]. The asset folder: the environment's
// SPLINEVIEW_ASSET_DIR, the source tree's, or ./assets (runs from a copied checkout).
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

ArrayD random_grid(const Shape& image, const std::vector<int>& delta, double amplitude,
                   std::mt19937& rng) {
  ArrayD g(sv::ffd_grid_shape(image, delta), image.size());
  std::uniform_real_distribution<double> U(-amplitude, amplitude);
  for (double& v : g.vec()) v = U(rng);
  return g;
}

// A smooth random grid at `delta`: random at 2 delta, refined exactly, cut to ffd_grid_shape.
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

// Bounds of a coefficient array (one channel): max|c|, D_a per axis, H.
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
      // the next sample along a, wrapping around (the periodic extension's pair)
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
  // The extension's second differences at the edges are differences of the same samples; the
  // periodic wrap pair can add at most 2 D.
  for (double d : b.D) b.H = std::max(b.H, 2 * d);
  return b;
}

double kernel_du(FfdKernel k, std::size_t rank, double maxg) {
  const double base = 8.5 * kEps * maxg;
  if (k != FfdKernel::Texture) return base;
  return base + (rank == 3 ? 6.0 : 4.0) / 256.0 * maxg;
}

// The rounding bound of the bending energy and of each component of its gradient (see the top):
// |dE| <= 2 gamma S sum_i |c_i| max|c| / |Omega|, |dg_i| <= 2 gamma 2 S max|c| / |Omega|, S =
// sum over the pairs (a, b) of w_ab prod_e rho_e, depth 100 + 2 n (n the grid's values: the
// CPU's sums over rows, the tree's far fewer).
struct BendingBound {
  double energy = 0, gradient = 0;
};

BendingBound bending_bound(const ArrayD& grid, const std::vector<int>& delta) {
  const std::size_t r = grid.rank();
  auto rho = [&](std::size_t a, int d) {
    const double h = delta[a];
    return d == 0 ? 1.0 : d == 1 ? (4.0 / 3) * (8.0 / 3) / h : (8.0 / 3) * 8.0 / (h * h * h);
  };
  double pairs = 0, volume = 1;
  for (std::size_t a = 0; a < r; ++a) {
    volume *= static_cast<double>((grid.dim(a) - 3) * static_cast<std::size_t>(delta[a]));
    for (std::size_t b = a; b < r; ++b) {
      double p = a == b ? 1.0 : 2.0;
      for (std::size_t e = 0; e < r; ++e)
        p *= rho(e, a == b ? (e == a ? 2 : 0) : (e == a || e == b));
      pairs += p;
    }
  }
  double sum_abs = 0, maxc = 0;
  for (double v : grid.vec()) {
    sum_abs += std::fabs(v);
    maxc = std::max(maxc, std::fabs(v));
  }
  const double depth = 100.0 + 2.0 * static_cast<double>(grid.size());
  const double eps = DBL_EPSILON, gamma = depth * eps / (1 - depth * eps);
  return {2 * gamma * pairs * sum_abs * maxc / volume, 2 * gamma * 2 * pairs * maxc / volume};
}

std::string shape_text(const Shape& s) {
  std::string t;
  for (std::size_t n : s) t += (t.empty() ? "" : "x") + std::to_string(n);
  return t;
}

ArrayF to_float(const ArrayD& a) {
  return ArrayF::from(a);
}
ArrayD to_double(const ArrayF& a) {
  return ArrayD::from(a);
}

}  // namespace

// ---- Warp ------------------------------------------------------------------------------------

TEST(CudaWarp, MatchesTheCpuWarpInDoubleWithinTheDerivedBound) {
  REQUIRE_CUDA();
  REQUIRE_HEAD();
  std::mt19937 rng(20240611);
  struct Case {
    ArrayD moving;
    std::vector<int> delta;
    double amplitude;
  };
  std::vector<Case> cases;
  cases.push_back({head_slice(31), {8, 8}, 3.0});
  {
    ArrayD s({77, 100});
    const ArrayD h = head_slice(25);
    for (std::size_t y = 0; y < 77; ++y)
      for (std::size_t x = 0; x < 100; ++x) s.at2(y, x) = h.at2(y + 20, x + 10);
    cases.push_back({s, {5, 7}, 4.0});
  }
  cases.push_back({head_box(10, 20, 30, {23, 45, 38}), {3, 5, 4}, 2.5});
  cases.push_back({head_box(30, 40, 20, {17, 30, 29}), {6, 2, 7}, 3.0});
  const Boundary modes[] = {Boundary::Reflect, Boundary::Mirror, Boundary::Periodic,
                            Boundary::Nearest, Boundary::GridConstant};
  for (const Case& c : cases) {
    const ArrayD grid = random_grid(c.moving.dims(), c.delta, c.amplitude, rng);
    const ArrayF gridf = to_float(grid);
    const ArrayF movingf = to_float(c.moving);
    const double maxg = max_abs(to_double(gridf).vec());
    for (Boundary b : modes) {
      sv::WarpOptions wo;
      wo.boundary = b;
      wo.cval = 0.3;
      const ArrayD ref = sv::warp(to_double(movingf), to_double(gridf), c.delta, wo);
      const sv::Interpolant<double> spline(to_double(movingf), {3, b, -1, 0, 0.3}, true);
      const SplineBounds sb = spline_bounds(spline.coefficients());
      for (FfdKernel k : cu::kFfdKernels) {
        cu::WarpConfig cfg;
        cfg.boundary = b;
        cfg.cval = 0.3;
        cfg.kernel = k;
        const ArrayF got = cu::warp(movingf, gridf, c.delta, cfg);
        ASSERT_EQ(got.dims(), ref.dims());
        double du_sum = 0;
        for (double d : sb.D) du_sum += d * kernel_du(k, grid.rank(), maxg);
        const double bound = du_sum + 8.5 * kEps * sb.maxc;
        double worst = 0;
        for (std::size_t i = 0; i < ref.size(); ++i) {
          const double d = std::fabs(static_cast<double>(got[i]) - ref[i]);
          worst = std::isnan(d) ? INFINITY : std::max(worst, d);
        }
        std::printf("warp %s delta %d.. %s %s: max |cuda - cpu| %.3g (bound %.3g)\n",
                    shape_text(c.moving.dims()).c_str(), c.delta[0], sv::boundary_name(b),
                    cu::ffd_kernel_name(k), worst, bound);
        EXPECT_LE(worst, bound) << shape_text(c.moving.dims()) << " " << sv::boundary_name(b) << " "
                                << cu::ffd_kernel_name(k);
      }
    }
  }
}

TEST(CudaWarp, OtherMethodsChannelsAndOutputShapes) {
  REQUIRE_CUDA();
  REQUIRE_HEAD();
  std::mt19937 rng(7);
  const ArrayD slice = head_slice(30);
  const std::vector<int> delta{6, 5};
  const Shape out_shape{90, 140};  // the grid covers the output, not the moving image
  const ArrayF gridf = to_float(random_grid(out_shape, delta, 3.0, rng));
  const double maxg = max_abs(to_double(gridf).vec());
  // Two channels: the head and its square.
  ArrayF two(slice.dims(), 2);
  for (std::size_t i = 0; i < slice.points(); ++i) {
    two[2 * i] = static_cast<float>(slice[i]);
    two[2 * i + 1] = static_cast<float>(slice[i] * slice[i]);
  }
  for (sv::Method method : {sv::Method::Linear, sv::Method::Cubic, sv::Method::Quintic}) {
    sv::WarpOptions wo;
    wo.method = method;
    wo.output_shape = out_shape;
    const ArrayD ref = sv::warp(to_double(two), to_double(gridf), delta, wo);
    cu::WarpConfig cfg;
    cfg.method = method;
    const ArrayF got = cu::warp(two, gridf, delta, cfg, out_shape);
    ASSERT_EQ(got.dims(), out_shape);
    ASSERT_EQ(got.channels(), 2u);
    for (std::size_t ch = 0; ch < 2; ++ch) {
      ArrayD one(slice.dims());
      for (std::size_t i = 0; i < one.points(); ++i) one[i] = two[2 * i + ch];
      const sv::Interpolant<double> spline(one, {sv::method_degree(method), Boundary::Reflect},
                                           sv::method_prefilters(method));
      const SplineBounds sb = spline_bounds(spline.coefficients());
      double du_sum = 0;
      for (double d : sb.D) du_sum += d * kernel_du(FfdKernel::ThreadPerTileFma, 2, maxg);
      // Quintic: the derivative bound D_a holds for any degree (the derivative is a spline of
      // one degree lower over the differences); the CUDA prefilter's 8 eps likewise.
      const double bound = du_sum + 8.5 * kEps * sb.maxc;
      double worst = 0;
      for (std::size_t i = 0; i < got.points(); ++i)
        worst = std::max(worst, std::fabs(static_cast<double>(got[i * 2 + ch]) - ref[i * 2 + ch]));
      std::printf("warp %s, channel %zu, output %s: max |cuda - cpu| %.3g (bound %.3g)\n",
                  sv::method_name(method), ch, shape_text(out_shape).c_str(), worst, bound);
      EXPECT_LE(worst, bound) << sv::method_name(method) << " channel " << ch;
    }
  }
}

TEST(CudaWarp, RefusesBadArguments) {
  const ArrayF moving({40, 48});
  const std::vector<int> delta{8, 8};
  const ArrayF grid(sv::ffd_grid_shape(moving.dims(), delta), 2);
  auto refuses = [](const std::function<void()>& fn, const std::string& words) {
    try {
      fn();
      ADD_FAILURE() << "no sv::Error, expected one mentioning '" << words << "'";
    } catch (const sv::Error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  refuses([&] { cu::warp(ArrayF({40}), grid, delta); }, "2-D or 3-D");
  refuses([&] { cu::warp(ArrayF({4, 40, 48}), grid, delta); }, "control grid");
  refuses([&] { cu::warp(moving, ArrayF({5, 5}, 2), delta); }, "control points");
  ArrayF nan = grid;
  nan[3] = NAN;
  refuses([&] { cu::warp(moving, nan, delta); }, "finite");
  cu::WarpConfig cfg;
  cfg.kernel = FfdKernel::ThreadPerTileLerp;
  const std::vector<int> wide{9, 9};
  refuses([&] { cu::warp(moving, ArrayF(sv::ffd_grid_shape(moving.dims(), wide), 2), wide, cfg); },
          "spacings 1..8");
}

// ---- The objective ---------------------------------------------------------------------------

namespace {

struct ObjectiveBounds {
  double f = 0;
  std::vector<double> g;  // per component axis
};

// The derived bounds of |f_gpu - f_cpu| and of each gradient component (see the top).
ObjectiveBounds objective_bounds(const ArrayD& fixed, const ArrayD& moving, Boundary b,
                                 const std::vector<int>& delta, FfdKernel k, double maxg,
                                 double ssd_cpu) {
  ArrayD coef = moving;
  sv::prefilter(coef, {3, b});
  const SplineBounds sb = spline_bounds(coef);
  const std::size_t R = fixed.rank();
  const double du = kernel_du(k, R, maxg);
  double G1 = 0, Dmax = 0;
  for (double d : sb.D) {
    G1 += d;
    Dmax = std::max(Dmax, d);
  }
  const double ev = G1 * du + 48 * kEps * sb.maxc;
  const double ed = static_cast<double>(R) * sb.H * du + 48 * kEps * sb.maxc;
  const double rmax = sb.maxc + max_abs(fixed.vec());
  double cell = 1;
  for (int d : delta) cell *= d;
  const double scale = 2.0 / static_cast<double>(fixed.points()) * cell;
  ObjectiveBounds o;
  o.f = 2 * std::sqrt(ssd_cpu) * ev + ev * ev + 1e-12 * ssd_cpu;
  for (std::size_t a = 0; a < R; ++a)
    o.g.push_back(scale * (ev * sb.D[a] + rmax * ed + ev * ed + 8 * kEps * rmax * sb.D[a]));
  return o;
}

struct ObjectiveCase {
  const char* name;
  ArrayD fixed, moving;
  std::vector<int> delta;
  double amplitude;
  Boundary boundary;
};

std::vector<ObjectiveCase> objective_cases() {
  std::vector<ObjectiveCase> c;
  c.push_back(
      {"2-D 128x128 delta 8,8", head_slice(31), head_slice(34), {8, 8}, 2.0, Boundary::Reflect});
  c.push_back({"2-D 128x128 delta 5,7 mirror",
               head_slice(40),
               head_slice(42),
               {5, 7},
               2.0,
               Boundary::Mirror});
  c.push_back({"3-D 18x36x40 delta 4,5,6",
               head_box(20, 30, 30, {18, 36, 40}),
               head_box(22, 31, 29, {18, 36, 40}),
               {4, 5, 6},
               1.5,
               Boundary::Reflect});
  c.push_back({"3-D 21x33x30 delta 7,3,8 periodic",
               head_box(25, 40, 40, {21, 33, 30}),
               head_box(24, 42, 41, {21, 33, 30}),
               {7, 3, 8},
               2.0,
               Boundary::Periodic});
  return c;
}

}  // namespace

TEST(CudaRegistration, ObjectiveAndGradientMatchTheCpuInDouble) {
  REQUIRE_CUDA();
  REQUIRE_HEAD();
  std::mt19937 rng(99);
  for (const ObjectiveCase& c : objective_cases()) {
    // The images as float (what the GPU gets); the CPU works on the same values in double.
    const ArrayF ff = to_float(c.fixed), mf = to_float(c.moving);
    const ArrayD fd = to_double(ff), md = to_double(mf);
    const ArrayD grid = random_grid(fd.dims(), c.delta, c.amplitude, rng);
    const double w = 0.05;
    const sv::FfdSsdObjective<double> cpu(fd, md, c.delta, w, c.boundary);
    ArrayD gc;
    double ssd_c = 0, e_c = 0;
    const double f_c = cpu.evaluate(grid, &gc, &ssd_c, &e_c);
    double maxg = 0;
    for (double v : grid.vec()) maxg = std::max(maxg, std::fabs(static_cast<double>(float(v))));
    for (FfdKernel k : cu::kFfdKernels) {
      const cu::FfdSsdObjective gpu(ff, mf, c.delta, w, c.boundary, k);
      EXPECT_EQ(gpu.grid_shape(), cpu.grid_shape());
      ArrayD gg;
      double ssd_g = 0, e_g = 0;
      sv::FfdStageTimes t;
      const double f_g = gpu.evaluate(grid, &gg, &ssd_g, &e_g, &t);
      ObjectiveBounds ob = objective_bounds(fd, md, c.boundary, c.delta, k, maxg, ssd_c);
      // The energy: the device's double evaluation against the CPU's, within the rounding bound.
      const BendingBound bb = bending_bound(grid, c.delta);
      EXPECT_LE(std::fabs(e_g - e_c), bb.energy) << c.name << " " << cu::ffd_kernel_name(k);
      ob.f += w * bb.energy;
      for (double& b : ob.g) b += w * bb.gradient;
      const double df = std::fabs(f_g - f_c);
      EXPECT_LE(df, ob.f) << c.name << " " << cu::ffd_kernel_name(k);
      EXPECT_LE(std::fabs(ssd_g - ssd_c), ob.f) << c.name << " " << cu::ffd_kernel_name(k);
      ASSERT_EQ(gg.dims(), gc.dims());
      const std::size_t R = grid.rank();
      double worst_ratio = 0, worst_abs = 0;
      for (std::size_t i = 0; i < gg.size(); ++i) {
        const double d = std::fabs(gg[i] - gc[i]);
        worst_abs = std::isnan(d) ? INFINITY : std::max(worst_abs, d);
        worst_ratio = std::max(worst_ratio, d / ob.g[i % R]);
      }
      const double gmax = max_abs(gc.vec());
      std::printf(
          "objective %s %s: f %.9g vs %.9g (|df| %.3g, bound %.3g), E %.17g vs %.17g (|dE| "
          "%.3g, bound %.3g), max |dg| %.3g = %.3g of max|g| (%.3g of the bound); field %.3f "
          "ms, warp %.3f, gradient %.3f, regulariser %.3f\n",
          c.name, cu::ffd_kernel_name(k), f_g, f_c, df, ob.f, e_g, e_c, std::fabs(e_g - e_c),
          bb.energy, worst_abs, worst_abs / gmax, worst_ratio, 1e3 * t.field, 1e3 * t.warp,
          1e3 * t.gradient, 1e3 * t.regulariser);
      EXPECT_LE(worst_ratio, 1.0) << c.name << " " << cu::ffd_kernel_name(k);
      // Deterministic: the same grid gives the same bits.
      ArrayD g2;
      EXPECT_EQ(gpu.evaluate(grid, &g2), f_g);
      EXPECT_EQ(g2.vec(), gg.vec());
      // Without the gradient: the same f; the energy alone: the same bits.
      EXPECT_EQ(gpu.evaluate(grid), f_g);
      double e_only = -1;
      gpu.evaluate(grid, nullptr, nullptr, &e_only);
      EXPECT_EQ(e_only, e_g);
    }
  }
}

// The regulariser's part of the GPU gradient alone: with a large weight W the gradient is the
// adjoint's (float, summed in double) + W dE/dc; the difference of the gradients at W and at 0
// is W dE/dc up to the roundings of the scaling, the addition, the subtraction and the CPU's
// product W dE/dc (5 eps (|g_0| + |g_W|)) plus W times the energy's rounding bound. Checked
// against ffd_bending_energy on grids of several shapes (2-D and 3-D, 8 to 43 points per axis);
// at weight 0, f is the SSD term, and an energy asked for is the same bits as at weight W and
// leaves the gradient unchanged.
TEST(CudaRegistration, RegulariserOnTheDeviceMatchesTheCpuInDouble) {
  REQUIRE_CUDA();
  REQUIRE_HEAD();
  std::mt19937 rng(314);
  struct Case {
    ArrayD fixed, moving;
    std::vector<int> delta;
  };
  std::vector<Case> cases;
  cases.push_back({head_slice(20), head_slice(23), {2, 3}});
  cases.push_back({head_slice(40), head_slice(41), {8, 5}});
  cases.push_back(
      {head_box(10, 20, 20, {40, 50, 60}), head_box(11, 21, 19, {40, 50, 60}), {1, 2, 3}});
  cases.push_back(
      {head_box(5, 8, 8, {50, 100, 100}), head_box(6, 8, 9, {50, 100, 100}), {7, 4, 5}});
  const double W = 10.0;
  for (const Case& c : cases) {
    const ArrayF ff = to_float(c.fixed), mf = to_float(c.moving);
    ArrayD grid = random_grid(c.fixed.dims(), c.delta, 1.0, rng);
    for (double& v : grid.vec()) v = static_cast<double>(static_cast<float>(v));
    ArrayD ge;
    const double e_cpu = sv::ffd_bending_energy(grid, c.delta, &ge);
    const BendingBound bb = bending_bound(grid, c.delta);
    for (FfdKernel k : {FfdKernel::PerVoxel, FfdKernel::ThreadPerTileFma}) {
      const cu::FfdSsdObjective with(ff, mf, c.delta, W, Boundary::Reflect, k);
      const cu::FfdSsdObjective without(ff, mf, c.delta, 0.0, Boundary::Reflect, k);
      ArrayD gw, g0, g0e;
      double ssd_w = 0, e_w = 0, ssd_0 = 0, e_asked = 0;
      const double f_w = with.evaluate(grid, &gw, &ssd_w, &e_w);
      const double f_0 = without.evaluate(grid, &g0, &ssd_0);
      EXPECT_EQ(f_0, ssd_0);    // weight 0: f is the SSD term
      EXPECT_EQ(ssd_w, ssd_0);  // the same SSD stages
      // The energy asked for at weight 0: the same device computation, the gradient unchanged.
      without.evaluate(grid, &g0e, nullptr, &e_asked);
      EXPECT_EQ(e_asked, e_w);
      EXPECT_EQ(g0e.vec(), g0.vec());
      EXPECT_LE(std::fabs(e_w - e_cpu), bb.energy);
      EXPECT_EQ(f_w, ssd_w + W * e_w);
      ASSERT_EQ(gw.dims(), ge.dims());
      double worst = 0, worst_ratio = 0;
      for (std::size_t i = 0; i < gw.size(); ++i) {
        const double reg = gw[i] - g0[i];
        const double bound =
            W * bb.gradient + 5 * DBL_EPSILON * (std::fabs(gw[i]) + std::fabs(g0[i]));
        const double d = std::fabs(reg - W * ge[i]);
        worst = std::isnan(d) ? INFINITY : std::max(worst, d);
        worst_ratio = std::max(worst_ratio, d / bound);
      }
      std::printf(
          "regulariser %s spacing %d,%d%s %s: E %.17g vs CPU %.17g (|dE| %.3g, bound %.3g), "
          "gradient part within %.3g (%.3g of the bound; max |W dE/dc| %.3g)\n",
          shape_text(c.fixed.dims()).c_str(), c.delta[0], c.delta[1],
          c.delta.size() == 3 ? ("," + std::to_string(c.delta[2])).c_str() : "",
          cu::ffd_kernel_name(k), e_w, e_cpu, std::fabs(e_w - e_cpu), bb.energy, worst, worst_ratio,
          W * max_abs(ge.vec()));
      EXPECT_LE(worst_ratio, 1.0);
      // A gradient array of the right shape is overwritten.
      ArrayD reuse = gw;
      for (double& v : reuse.vec()) v = 1e300;
      with.evaluate(grid, &reuse);
      EXPECT_EQ(reuse.vec(), gw.vec());
    }
  }
}

TEST(CudaRegistration, GradientMatchesCentralDifferences) {
  REQUIRE_CUDA();
  REQUIRE_HEAD();
  std::mt19937 rng(5);
  const double h = 0.02;
  for (const ObjectiveCase& c : objective_cases()) {
    const ArrayF ff = to_float(c.fixed), mf = to_float(c.moving);
    const ArrayD fd = to_double(ff), md = to_double(mf);
    const ArrayD grid = random_grid(fd.dims(), c.delta, c.amplitude, rng);
    const sv::FfdSsdObjective<double> cpu(fd, md, c.delta, 0.05, c.boundary);
    ArrayD gc;
    double ssd_c = 0;
    cpu.evaluate(grid, &gc, &ssd_c);
    double maxg = 0;
    for (double v : grid.vec()) maxg = std::max(maxg, std::fabs(v) + h);
    for (FfdKernel k : {FfdKernel::PerVoxel, FfdKernel::ThreadPerTileFma}) {
      const cu::FfdSsdObjective gpu(ff, mf, c.delta, 0.05, c.boundary, k);
      ArrayD gg;
      gpu.evaluate(grid, &gg);
      // The perturbed grids' SSD: taken as at most 4 times the unperturbed one (h moves the
      // field by at most h; the bound grows with sqrt(SSD)).
      const ObjectiveBounds ob = objective_bounds(fd, md, c.boundary, c.delta, k, maxg, 4 * ssd_c);
      const double gmax = max_abs(gg.vec());
      std::uniform_int_distribution<std::size_t> pick(0, grid.size() - 1);
      int checked = 0;
      double worst_rel = 0;
      for (int tries = 0; checked < 10 && tries < 1000; ++tries) {
        const std::size_t i = pick(rng);
        if (std::fabs(gg[i]) < 0.1 * gmax) continue;
        ArrayD p = grid, m = grid;
        p[i] += h;
        m[i] -= h;
        const double fd_gpu = (gpu.evaluate(p) - gpu.evaluate(m)) / (2 * h);
        const double fd_cpu = (cpu.evaluate(p) - cpu.evaluate(m)) / (2 * h);
        const double tol = std::fabs(fd_cpu - gc[i]) + 2 * ob.f / (2 * h) + ob.g[i % grid.rank()];
        EXPECT_LE(std::fabs(fd_gpu - gg[i]), tol) << c.name << " component " << i;
        worst_rel = std::max(worst_rel, std::fabs(fd_gpu - gg[i]) / std::fabs(gg[i]));
        ++checked;
      }
      EXPECT_EQ(checked, 10);
      std::printf("central differences %s %s (h %.2g): worst relative error %.3g\n", c.name,
                  cu::ffd_kernel_name(k), h, worst_rel);
    }
  }
}

TEST(CudaRegistration, RefusesWhatTheCpuObjectiveRefuses) {
  const ArrayF a({40, 48}), b({40, 47});
  auto refuses = [](const std::function<void()>& fn, const std::string& words) {
    try {
      fn();
      ADD_FAILURE() << "no sv::Error, expected one mentioning '" << words << "'";
    } catch (const sv::Error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  refuses([&] { cu::FfdSsdObjective(a, b, {8, 8}, 0.0); }, "must have the same shape");
  refuses([&] { cu::FfdSsdObjective(a, a, {8}, 0.0); }, "spacing has 1 entries");
  refuses([&] { cu::FfdSsdObjective(a, a, {8, 8}, -1.0); }, "bending-energy weight");
  refuses(
      [&] {
        cu::FfdSsdObjective(a, a, {8, 8}, 0.0, Boundary::Nearest);
      },
      "reflect, mirror or periodic");
  refuses([&] { cu::FfdSsdObjective(a, a, {9, 8}, 0.0, Boundary::Reflect); }, "spacings 1..8");
  sv::FfdRegistrationOptions opt;
  opt.spacing = {8, 8};
  opt.levels = 5;
  refuses([&] { cu::register_ffd(a, a, opt); }, "reduce axis y (40 voxels) to 3");
}

// ---- Registration ----------------------------------------------------------------------------

namespace {

double ssd(const ArrayD& a, const ArrayD& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
  return s;
}

double field_rms_error(const ArrayD& grid, const ArrayD& truth, const std::vector<int>& delta,
                       const ArrayD& mask, double threshold, std::size_t* count) {
  const ArrayD u = sv::ffd_field_reference(grid, delta, mask.dims());
  const ArrayD t = sv::ffd_field_reference(truth, delta, mask.dims());
  const std::size_t R = mask.rank();
  double sum = 0;
  std::size_t n = 0;
  for (std::size_t v = 0; v < mask.points(); ++v) {
    if (mask[v] <= threshold) continue;
    for (std::size_t c = 0; c < R; ++c)
      sum += (u[v * R + c] - t[v * R + c]) * (u[v * R + c] - t[v * R + c]);
    ++n;
  }
  *count = n;
  return n ? std::sqrt(sum / static_cast<double>(n)) : 0.0;
}

void expect_recovery(const char* name, const ArrayD& original, const ArrayD& truth,
                     const sv::FfdRegistrationOptions& opt) {
  const std::vector<int>& delta = opt.spacing;
  const ArrayD deformed = sv::warp(original, truth, delta);
  const double before = ssd(deformed, original);
  for (FfdKernel k : cu::kFfdKernels) {
    const auto t0 = std::chrono::steady_clock::now();
    const sv::FfdRegistrationResult r =
        cu::register_ffd(to_float(deformed), to_float(original), opt, k);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double after = ssd(deformed, sv::warp(original, r.grid, delta));
    std::size_t inside = 0;
    const double rms = field_rms_error(r.grid, truth, delta, deformed, 0.15, &inside);
    std::printf(
        "%s, %s: SSD %.4g -> %.4g (%.2f%% less), field RMS error %.3f voxel over %zu voxels, "
        "%d iterations, %.3f s (field %.4f, warp %.4f, gradient %.4f, regulariser %.4f, setup "
        "%.4f)\n",
        name, cu::ffd_kernel_name(k), before, after, 100 * (1 - after / before), rms, inside,
        r.iterations, secs, r.time.field, r.time.warp, r.time.gradient, r.time.regulariser,
        r.time.setup);
    for (const auto& l : r.levels)
      std::printf("  level %s: %d iterations, %d evaluations, stop: %s\n",
                  shape_text(l.image_shape).c_str(), l.iterations, l.evaluations, l.stop.c_str());
    const bool texture = k == FfdKernel::Texture;
    EXPECT_LT(after, (texture ? 0.2 : 0.1) * before) << name << " " << cu::ffd_kernel_name(k);
    EXPECT_LT(rms, texture ? 1.0 : 0.5) << name << " " << cu::ffd_kernel_name(k);
    EXPECT_GT(inside, original.points() / 8);
    EXPECT_EQ(r.grid.dims(), sv::ffd_grid_shape(original.dims(), delta));
    ASSERT_EQ(r.levels.size(), static_cast<std::size_t>(opt.levels));
    for (const auto& l : r.levels)
      for (std::size_t i = 1; i < l.objective.size(); ++i)
        EXPECT_LE(l.objective[i], l.objective[i - 1]);
  }
}

}  // namespace

TEST(CudaRegistration, RecoversAKnownDeformationOfTheHeadWithEveryKernel) {
  REQUIRE_CUDA();
  REQUIRE_HEAD();
  std::mt19937 rng(2024);
  {
    const ArrayD original = head_slice(31);
    sv::FfdRegistrationOptions opt;
    opt.spacing = {8, 8};
    opt.levels = 3;
    opt.iterations = 100;
    expect_recovery("2-D 128x128, smooth field, 3 levels", original,
                    random_smooth_grid(original.dims(), opt.spacing, 3.0, rng), opt);
  }
  {
    // The whole head (62 x 128 x 128), three levels.
    const ArrayD& original = head();
    sv::FfdRegistrationOptions opt;
    opt.spacing = {8, 8, 8};
    opt.levels = 3;
    opt.iterations = 40;
    expect_recovery("3-D 62x128x128, smooth field, 3 levels", original,
                    random_smooth_grid(original.dims(), opt.spacing, 3.0, rng), opt);
  }
}
