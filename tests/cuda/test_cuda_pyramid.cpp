// The CUDA B-spline pyramid (cuda_pyramid.h, issue 17) against the CPU pyramid (pyramid.h, an
// independent double implementation tested against dense least-squares oracles, scipy and the
// frequency response in tests/core/test_pyramid.cpp) on the same inputs: reduce2, reduce by 1/2
// and by non-dyadic factors (0.3, 0.71), reduce_to_shape, expand2; every degree 0..7, every mode
// and grid (reflect/Cells, mirror/Nodes, periodic/Cells and Nodes), odd and even lengths, 1-3 D,
// 1-3 channels, samples or coefficients in, coefficients and samples out, float and double; the
// device-pointer API with NaN-poisoned outputs; and the refusals (the CPU's sentences, checked
// without a device too).
//
// Bounds, derived (not tuned). Both sides run the same plan in double and round to T at the end
// of each axis pass; they can differ only through the double rounding of the same operations
// (nvcc contracts a * b + c into FMAs, the host compiler does not) and, in float, through that
// difference flipping a rounding to float. If the inputs of a pass differ by at most delta, its
// double outputs differ by at most G delta + (double rounding), and rounding both to T adds at
// most one ulp of T, at most eps_T |value| (eps_T = 2^-23 for float). G is the pass's gain in the
// max norm, the largest l1 norm of a row of its matrix; it is measured here exactly by running
// the CPU in double on the unit impulses of each axis (the 1-D operator of that axis). Values
// after p passes are at most max|in| G_1 ... G_p, so over P passes
//   |CUDA - CPU| <= P (eps_T + 1e-12) max|in| prod_p G_p,
// with 1e-12 covering the double rounding (measured differences are near 1e-16 relative). The
// passes that make the coarse samples and expand2's have nonnegative weights summing to 1 (the
// sampled B-spline, folded), G = 1. For double, eps_T is dropped: 1e-12 relative to
// max|in| prod G.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "require_cuda.h"
#include "splineview/bspline.h"
#include "splineview/cuda_memory.h"
#include "splineview/cuda_pyramid.h"
#include "splineview/error.h"
#include "splineview/pyramid.h"

#include "../../lib/src/pyramid_lines.h"

namespace {

using sv::Array;
using sv::Boundary;
using sv::PyramidGrid;
namespace cu = sv::cuda;

template <class T>
Array<T> random_array(const std::vector<std::size_t>& dims, std::size_t channels, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  Array<T> a(dims, channels);
  for (std::size_t i = 0; i < a.size(); ++i) a.data()[i] = static_cast<T>(u(rng));
  return a;
}

template <class T>
double max_abs(const Array<T>& a) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    m = std::max(m, std::fabs(static_cast<double>(a.data()[i])));
  return m;
}

// Max |a - b|, or infinity for a NaN or a shape mismatch.
template <class T>
double max_diff(const Array<T>& a, const Array<T>& b) {
  if (a.dims() != b.dims() || a.channels() != b.channels())
    return std::numeric_limits<double>::infinity();
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(static_cast<double>(a.data()[i]) - static_cast<double>(b.data()[i]));
    if (!(d == d)) return std::numeric_limits<double>::infinity();
    m = std::max(m, d);
  }
  return m;
}

// The max-norm gain of the 1-D reduce of one axis (N -> M samples, or reduce2 when M == 0): the
// largest l1 norm of a row of the operator's matrix, from its columns (the responses to the unit
// impulses) computed in double by the CPU's 1-D plan (pyramid_lines.h: built once, then its line
// routines per impulse; running sv::reduce per impulse would rebuild the plan N times).
double axis_gain(std::size_t n, std::size_t m, const sv::ReduceOptions& opt) {
  namespace pd = sv::pyramid_detail;
  static std::map<std::tuple<std::size_t, std::size_t, int, int, int, bool>, double> cache;
  const auto key = std::make_tuple(n, m, opt.degree, static_cast<int>(opt.boundary),
                                   static_cast<int>(opt.grid), opt.input_is_coefficients);
  const auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  const std::vector<std::size_t> dims{n};
  const std::vector<sv::PyramidAxis> axes =
      m == 0 ? pd::reduce2_axes(1, n, dims, opt) : pd::reduce_shape_axes(1, n, dims, {m}, opt);
  const std::vector<pd::PyramidPass> plan = pd::reduce_plan(dims, axes, opt, m == 0);
  if (plan.empty()) return cache[key] = 1;  // the identity
  const pd::PyramidPass& p = plan.front();
  const std::size_t out = p.out_length();
  const pd::PoleLine pre =
      p.has_pre ? pd::pole_line(p.pre, static_cast<long>(n), p.pre_ends) : pd::PoleLine{};
  const pd::PoleLine post =
      p.has_post ? pd::pole_line(p.post, static_cast<long>(out), p.post_ends) : pd::PoleLine{};
  std::vector<double> rows(out, 0.0), x(n), y(out);
  double acc = 0;
  for (std::size_t k = 0; k < n; ++k) {
    std::fill(x.begin(), x.end(), 0.0);
    x[k] = 1;
    if (p.has_pre) pd::filter_poles(x.data(), 1, 1, pre, &acc);
    if (p.has_taps) {
      for (std::size_t j = 0; j < out; ++j)
        pd::fir_lines(x.data(), 1, &y[j], 1, p.taps.row.data(), p.taps.index.data(),
                      p.taps.weight.data(), j);
    } else {
      y = x;
    }
    if (p.has_post) pd::filter_poles(y.data(), 1, 1, post, &acc);
    for (std::size_t j = 0; j < out; ++j) rows[j] += std::fabs(y[j]);
  }
  return cache[key] = *std::max_element(rows.begin(), rows.end());
}

struct Worst {
  double share = 0;
  std::string where;
  void note(double diff, double bound, const std::string& what) {
    if (diff / bound > share) {
      share = diff / bound;
      where = what;
    }
  }
};

std::string describe(const std::vector<std::size_t>& dims, std::size_t channels,
                     const sv::ReduceOptions& o, const std::string& op) {
  std::string s = op + " degree " + std::to_string(o.degree) + " " + sv::boundary_name(o.boundary) +
                  (o.grid == PyramidGrid::Nodes   ? " nodes"
                   : o.grid == PyramidGrid::Cells ? " cells"
                                                  : "") +
                  (o.input_is_coefficients ? " coefficients-in" : " samples-in") +
                  (o.samples ? " +samples" : "") + " dims";
  for (std::size_t d : dims) s += " " + std::to_string(d);
  return s + " ch " + std::to_string(channels);
}

// One reduce case in T: CUDA against the CPU, coefficients and (when asked) samples.
template <class T>
void check_reduce(const std::vector<std::size_t>& dims, std::size_t channels,
                  const sv::ReduceOptions& o, const std::vector<double>& factors, unsigned seed,
                  Worst& worst) {
  const Array<T> a = random_array<T>(dims, channels, seed);
  const std::string what = describe(dims, channels, o, factors.empty() ? "reduce2" : "reduce");
  SCOPED_TRACE(what);
  const sv::Reduced<T> cpu = factors.empty() ? sv::reduce2(a, o) : sv::reduce(a, factors, o);
  const sv::Reduced<T> gpu = factors.empty() ? cu::reduce2(a, o) : cu::reduce(a, factors, o);
  ASSERT_EQ(gpu.axes.size(), cpu.axes.size());
  double gain = 1;
  std::size_t passes = 0;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    const sv::PyramidAxis& ax = cpu.axes[d];
    EXPECT_EQ(gpu.axes[d].coarse, ax.coarse);
    EXPECT_EQ(gpu.axes[d].origin, ax.origin);
    EXPECT_EQ(gpu.axes[d].spacing, ax.spacing);
    EXPECT_EQ(gpu.axes[d].left, ax.left);
    EXPECT_EQ(gpu.axes[d].right, ax.right);
    gain *= axis_gain(dims[d], factors.empty() ? 0 : ax.coarse, o);
    passes += 1 + (o.samples ? 1 : 0);
  }
  const double eps = std::is_same<T, float>::value ? std::numeric_limits<float>::epsilon() : 0.0;
  const double bound = static_cast<double>(passes) * (eps + 1e-12) * max_abs(a) * gain;
  const double dc = max_diff(gpu.coefficients, cpu.coefficients);
  EXPECT_LE(dc, bound) << "coefficients, gain " << gain;
  worst.note(dc, bound, what + " coefficients");
  if (o.samples) {
    const double ds = max_diff(gpu.samples, cpu.samples);
    EXPECT_LE(ds, bound) << "samples, gain " << gain;
    worst.note(ds, bound, what + " samples");
  } else {
    EXPECT_EQ(gpu.samples.size(), 0u);
  }
}

struct ModeGrid {
  Boundary b;
  PyramidGrid g;
};
const std::vector<ModeGrid> kModeGrids = {{Boundary::Reflect, PyramidGrid::ByBoundary},
                                          {Boundary::Mirror, PyramidGrid::ByBoundary},
                                          {Boundary::Periodic, PyramidGrid::Cells},
                                          {Boundary::Periodic, PyramidGrid::Nodes}};

struct Shape {
  std::vector<std::size_t> dims;
  std::size_t channels;
};

// Odd and even lengths, 1-3 D, channels; the 2-D 67 x 45 spans several 32 x 32 transpose tiles.
const std::vector<Shape> kShapes = {{{17}, 1},      {{16}, 2},      {{9, 12}, 2},
                                    {{7, 6, 5}, 1}, {{6, 8, 4}, 3}, {{67, 45}, 1}};

// SV_PYRAMID_SMALL=1 (for compute-sanitizer runs): degrees 0, 3, 7 and three shapes only.
bool small_sweep() {
  const char* e = std::getenv("SV_PYRAMID_SMALL");
  return e && *e && *e != '0';
}
bool skip_degree(int n) {
  return small_sweep() && n != 0 && n != 3 && n != 7;
}
std::vector<Shape> shapes() {
  if (small_sweep()) return {kShapes[0], kShapes[2], kShapes[4]};
  return kShapes;
}

// Calls f(o, s) for every degree (but skip_degree's), mode and grid of kModeGrids and shape,
// in that order, except the periodic modes on shapes with an odd axis (reduce2 refuses them).
template <class F>
void each_case(const std::vector<Shape>& shapes, F f) {
  for (int n = 0; n <= sv::kMaxDegree; ++n)
    for (const ModeGrid& mg : kModeGrids)
      for (const Shape& s : shapes) {
        if (skip_degree(n)) continue;
        bool even = true;
        for (std::size_t d : s.dims) even = even && d % 2 == 0;
        if (mg.b == Boundary::Periodic && !even) continue;
        sv::PyramidOptions o;
        o.degree = n;
        o.boundary = mg.b;
        o.grid = mg.g;
        f(o, s);
      }
}

template <class T>
void reduce_sweep(const char* label) {
  Worst worst;
  unsigned seed = 1;
  for (int n = 0; n <= sv::kMaxDegree; ++n)
    for (const ModeGrid& mg : kModeGrids)
      for (const Shape& s : shapes())
        for (int in_coef = 0; in_coef < 2; ++in_coef) {
          if (skip_degree(n)) continue;
          sv::ReduceOptions o;
          o.degree = n;
          o.boundary = mg.b;
          o.grid = mg.g;
          o.input_is_coefficients = in_coef == 1;
          o.samples = (n + in_coef) % 2 == 0;
          bool even = true;
          for (std::size_t d : s.dims) even = even && d % 2 == 0;
          if (mg.b != Boundary::Periodic || even)
            check_reduce<T>(s.dims, s.channels, o, {}, ++seed, worst);
          for (double f : {0.5, 0.3, 0.71}) {
            // Periodic Nodes with reduce: T = N / M, any M.
            check_reduce<T>(s.dims, s.channels, o, std::vector<double>(s.dims.size(), f), ++seed,
                            worst);
          }
        }
  std::printf("[ cuda pyramid ] %s reduce: worst %.3g of the bound (%s)\n", label, worst.share,
              worst.where.c_str());
}

TEST(CudaPyramid, ReduceDoubleMatchesTheCpu) {
  REQUIRE_CUDA();
  reduce_sweep<double>("double");
}

TEST(CudaPyramid, ReduceFloatMatchesTheCpu) {
  REQUIRE_CUDA();
  reduce_sweep<float>("float");
}

// Long lines: the GPU cuts lines of at least four horizons of a pole into segments, each started
// a horizon early from zero (all the lines above are single segments, the CPU's recursion
// exactly). 1-D, the interleaved x axis with channels, and a y axis in the array's order.
// Each case runs three times: the fused kernel with its default tiles (whole lines), with 24 KB
// of shared memory a block (SV_PYRAMID_TILE_KB=24: segments of the long lines, each reaching the
// poles' horizons beyond what it writes), and the separate kernels (SV_PYRAMID_FUSED=0).
TEST(CudaPyramid, LongLinesInSegmentsMatchTheCpu) {
  REQUIRE_CUDA();
  for (int config = 0; config < 3; ++config) {
    if (config == 1) setenv("SV_PYRAMID_TILE_KB", "24", 1);
    if (config == 2) {
      unsetenv("SV_PYRAMID_TILE_KB");
      setenv("SV_PYRAMID_FUSED", "0", 1);
    }
    Worst worst;
    unsigned seed = 500;
    const std::vector<Shape> long_shapes = {{{1537}, 1}, {{3, 2501}, 2}, {{1100, 5}, 1}};
    for (int n : {3, 7})
      for (const ModeGrid& mg : kModeGrids)
        for (const Shape& s : long_shapes)
          for (int in_coef = 0; in_coef < 2; ++in_coef) {
            if (small_sweep() && (n != 3 || mg.g == PyramidGrid::Cells)) continue;
            sv::ReduceOptions o;
            o.degree = n;
            o.boundary = mg.b;
            o.grid = mg.g;
            o.input_is_coefficients = in_coef == 1;
            o.samples = in_coef == 0;
            bool even = true;
            for (std::size_t d : s.dims) even = even && d % 2 == 0;
            if (mg.b != Boundary::Periodic || even) {
              check_reduce<double>(s.dims, s.channels, o, {}, ++seed, worst);
              if (!small_sweep()) check_reduce<float>(s.dims, s.channels, o, {}, ++seed, worst);
            }
            const std::vector<double> f(s.dims.size(), 0.71);
            check_reduce<double>(s.dims, s.channels, o, f, ++seed, worst);
            if (!small_sweep()) check_reduce<float>(s.dims, s.channels, o, f, ++seed, worst);
          }
    std::printf("[ cuda pyramid ] long lines (%s): worst %.3g of the bound (%s)\n",
                config == 0   ? "fused, default tiles"
                : config == 1 ? "fused, 24 KB tiles"
                              : "separate kernels",
                worst.share, worst.where.c_str());
  }
  unsetenv("SV_PYRAMID_FUSED");
}

// reduce_to_shape with mixed factors per axis, one of them 1 (that axis only prefiltered, or
// left alone for coefficients in).
TEST(CudaPyramid, ReduceToShapeWithAnUntouchedAxis) {
  REQUIRE_CUDA();
  Worst worst;
  for (int n : {1, 3, 4, 7})
    for (int in_coef = 0; in_coef < 2; ++in_coef) {
      sv::ReduceOptions o;
      o.degree = n;
      o.input_is_coefficients = in_coef == 1;
      o.samples = true;
      check_reduce<double>({10, 13, 9}, 2, o, {1.0, 0.5, 0.71}, 7u + n, worst);
      check_reduce<float>({10, 13, 9}, 2, o, {0.4, 1.0, 0.3}, 9u + n, worst);
    }
  std::printf("[ cuda pyramid ] mixed factors: worst %.3g of the bound (%s)\n", worst.share,
              worst.where.c_str());
}

template <class T>
void expand_sweep(const char* label) {
  Worst worst;
  unsigned seed = 100;
  const double eps = std::is_same<T, float>::value ? std::numeric_limits<float>::epsilon() : 0.0;
  each_case(shapes(), [&](const sv::PyramidOptions& o, const Shape& s) {
    std::vector<std::size_t> cd;
    for (std::size_t d : s.dims) cd.push_back(sv::reduce2_axis(d, o).coarse);
    const Array<T> c = random_array<T>(cd, s.channels, ++seed);
    sv::ReduceOptions ro;
    static_cast<sv::PyramidOptions&>(ro) = o;
    const std::string what = describe(s.dims, s.channels, ro, "expand2");
    SCOPED_TRACE(what);
    const Array<T> cpu = sv::expand2(c, s.dims, o);
    const Array<T> gpu = cu::expand2(c, s.dims, o);
    const double bound = static_cast<double>(s.dims.size()) * (eps + 1e-12) * max_abs(c);
    const double d = max_diff(gpu, cpu);
    EXPECT_LE(d, bound);
    worst.note(d, bound, what);
  });
  std::printf("[ cuda pyramid ] %s expand2: worst %.3g of the bound (%s)\n", label, worst.share,
              worst.where.c_str());
}

TEST(CudaPyramid, ExpandDoubleMatchesTheCpu) {
  REQUIRE_CUDA();
  expand_sweep<double>("double");
}

TEST(CudaPyramid, ExpandFloatMatchesTheCpu) {
  REQUIRE_CUDA();
  expand_sweep<float>("float");
}

// reduce2 by phases (the default: one decimating FIR over the last two axes, 3-D then a z FIR,
// in double; the poles z_i^2 and the Gram poles on the coarse array in double through the tile
// kernel; one rounding to T) against the
// plan's passes (SV_PYRAMID_REDUCE=passes) and the CPU, on shapes of several tiles (32 x 16
// coarse outputs a block), odd and even (mixed coarse ends), with channels, axes of one sample
// and long lines (segments started from zero a horizon early), from samples and from
// coefficients: within check_reduce's bound of the CPU (the phases round once where the passes
// round once an axis), and the phases taken (their float bits differ from the passes'
// somewhere on every shape of two axes or more).
TEST(CudaPyramid, Reduce2ByPhasesEqualsThePasses) {
  REQUIRE_CUDA();
  std::vector<Shape> shapes = {
      {{300}, 1},        {{45, 131}, 1},   {{33, 200}, 3},  {{1, 130}, 1},     {{131, 1}, 2},
      {{9, 70, 133}, 1}, {{6, 40, 66}, 2}, {{2, 1, 3}, 1},  {{37, 20, 70}, 1}, {{20, 34, 66}, 2},
      {{3, 2600}, 1},    {{700, 5}, 2},    {{300, 4, 6}, 1}};
  if (small_sweep()) shapes = {{{45, 131}, 1}, {{6, 40, 66}, 2}, {{3, 2600}, 1}};
  Worst worst;
  unsigned seed = 900;
  each_case(shapes, [&](const sv::PyramidOptions& po, const Shape& s) {
    const int n = po.degree;
    for (int in_coef = 0; in_coef < 2; ++in_coef) {
      sv::ReduceOptions o;
      static_cast<sv::PyramidOptions&>(o) = po;
      o.input_is_coefficients = in_coef == 1;
      o.samples = (n + in_coef) % 2 == 0;
      check_reduce<float>(s.dims, s.channels, o, {}, ++seed, worst);
      check_reduce<double>(s.dims, s.channels, o, {}, ++seed, worst);
      setenv("SV_PYRAMID_REDUCE", "passes", 1);
      Worst passes;
      check_reduce<float>(s.dims, s.channels, o, {}, ++seed, passes);
      unsetenv("SV_PYRAMID_REDUCE");
      // The pole passes where the tile kernel declines (a periodic line too long for a
      // block; here every pass, SV_PYRAMID_FUSED=0): in double, then converted to float.
      setenv("SV_PYRAMID_FUSED", "0", 1);
      check_reduce<float>(s.dims, s.channels, o, {}, ++seed, passes);
      unsetenv("SV_PYRAMID_FUSED");
      const std::string what = describe(s.dims, s.channels, o, "reduce2 by phases");
      SCOPED_TRACE(what);
      const Array<float> a = random_array<float>(s.dims, s.channels, ++seed);
      const sv::Reduced<float> ph = cu::reduce2(a, o);
      setenv("SV_PYRAMID_REDUCE", "passes", 1);
      const sv::Reduced<float> pa = cu::reduce2(a, o);
      unsetenv("SV_PYRAMID_REDUCE");
      std::size_t big = 0, points = 1;
      for (std::size_t d : s.dims) {
        big += d > 1;
        points *= d;
      }
      if (big >= 2 && points >= 100 && n >= 1) {
        EXPECT_GT(max_diff(ph.coefficients, pa.coefficients), 0.0) << "the phases did not run";
      }
    }
  });
  std::printf("[ cuda pyramid ] reduce2 by phases: worst %.3g of the bound (%s)\n", worst.share,
              worst.where.c_str());
}

// The coarse samples in one pass (the default for degrees 2-7: the last two axes in one kernel,
// a volume's z in a second) against sample_plan's passes (SV_PYRAMID_SAMPLES=passes) and the CPU,
// for reduce2 and reduce by 0.71, on coarse shapes of several 64 x 32 tiles, odd and even, with
// channels and axes of one sample: both within the reduce bound of the CPU, and the one pass taken
// (float rounds once or twice instead of once an axis, so its bits differ from the passes'
// somewhere on every shape of two axes or more).
TEST(CudaPyramid, CoarseSamplesInOnePassEqualThePasses) {
  REQUIRE_CUDA();
  std::vector<Shape> shapes = {{{300}, 1},       {{70, 140}, 1}, {{33, 200}, 3},
                               {{1, 130}, 1},    {{131, 1}, 2},  {{9, 70, 133}, 1},
                               {{6, 40, 66}, 2}, {{2, 1, 3}, 1}, {{37, 20, 70}, 1}};
  if (small_sweep()) shapes = {{{70, 140}, 1}, {{6, 40, 66}, 2}};
  Worst worst;
  unsigned seed = 1300;
  each_case(shapes, [&](const sv::PyramidOptions& po, const Shape& s) {
    if (po.degree < 2) return;
    for (int in_coef = 0; in_coef < 2; ++in_coef)
      for (int op = 0; op < 2; ++op) {
        sv::ReduceOptions o;
        static_cast<sv::PyramidOptions&>(o) = po;
        o.input_is_coefficients = in_coef == 1;
        o.samples = true;
        const std::vector<double> f =
            op == 0 ? std::vector<double>{} : std::vector<double>(s.dims.size(), 0.71);
        check_reduce<float>(s.dims, s.channels, o, f, ++seed, worst);
        check_reduce<double>(s.dims, s.channels, o, f, ++seed, worst);
        setenv("SV_PYRAMID_SAMPLES", "passes", 1);
        Worst passes;
        check_reduce<float>(s.dims, s.channels, o, f, ++seed, passes);
        unsetenv("SV_PYRAMID_SAMPLES");
        const std::string what = describe(s.dims, s.channels, o, "coarse samples in one pass");
        SCOPED_TRACE(what);
        const Array<float> a = random_array<float>(s.dims, s.channels, ++seed);
        const sv::Reduced<float> one = op == 0 ? cu::reduce2(a, o) : cu::reduce(a, f, o);
        setenv("SV_PYRAMID_SAMPLES", "passes", 1);
        const sv::Reduced<float> pa = op == 0 ? cu::reduce2(a, o) : cu::reduce(a, f, o);
        unsetenv("SV_PYRAMID_SAMPLES");
        EXPECT_EQ(max_diff(one.coefficients, pa.coefficients), 0.0) << "the coefficients differ";
        std::size_t big = 0, points = 1;
        for (const sv::PyramidAxis& ax : one.axes) {
          big += ax.coarse > 1;
          points *= ax.coarse;
        }
        if (big >= 2 && points >= 100) {
          EXPECT_GT(max_diff(one.samples, pa.samples), 0.0) << "the one pass did not run";
        }
      }
  });
  std::printf("[ cuda pyramid ] coarse samples in one pass: worst %.3g of the bound (%s)\n",
              worst.share, worst.where.c_str());
}

// expand2 by phases (the default: the last two axes in one pass, 3-D then the plan's z pass)
// against the plan's passes (SV_PYRAMID_EXPAND=passes) and the CPU, on shapes of several tiles
// (64 x 32 outputs a block; a volume's block 64 x 16 x 16), odd and even, with channels and axes
// of one sample: both within the expand bound of the CPU, and the phases taken (float rounds once
// instead of once an axis, so its bits differ from the passes' somewhere on every shape of two axes
// or more).
TEST(CudaPyramid, ExpandByPhasesEqualsThePasses) {
  REQUIRE_CUDA();
  const std::vector<Shape> shapes = {
      {{300}, 1},        {{45, 131}, 1},   {{33, 200}, 3}, {{1, 130}, 1},     {{131, 1}, 2},
      {{9, 70, 133}, 1}, {{6, 40, 65}, 2}, {{2, 1, 3}, 1}, {{37, 20, 70}, 1}, {{20, 33, 66}, 2}};
  Worst worst;
  unsigned seed = 500;
  each_case(shapes, [&](const sv::PyramidOptions& o, const Shape& s) {
    const int n = o.degree;
    std::vector<std::size_t> cd;
    for (std::size_t d : s.dims) cd.push_back(sv::reduce2_axis(d, o).coarse);
    sv::ReduceOptions ro;
    static_cast<sv::PyramidOptions&>(ro) = o;
    const std::string what = describe(s.dims, s.channels, ro, "expand2 by phases");
    SCOPED_TRACE(what);
    const Array<float> cf = random_array<float>(cd, s.channels, ++seed);
    const Array<double> cdb = random_array<double>(cd, s.channels, ++seed);
    const Array<float> cpu_f = sv::expand2(cf, s.dims, o);
    const Array<double> cpu_d = sv::expand2(cdb, s.dims, o);
    const Array<float> ph_f = cu::expand2(cf, s.dims, o);
    const Array<double> ph_d = cu::expand2(cdb, s.dims, o);
    setenv("SV_PYRAMID_EXPAND", "passes", 1);
    const Array<float> pa_f = cu::expand2(cf, s.dims, o);
    const Array<double> pa_d = cu::expand2(cdb, s.dims, o);
    unsetenv("SV_PYRAMID_EXPAND");
    const double R = static_cast<double>(s.dims.size());
    if (s.dims.size() == 3) {
      // The volume kernel with chunks of 6 fine planes, and the plane kernel then the z
      // pass, against the same bound.
      setenv("SV_PYRAMID_EXPAND_CZ", "6", 1);
      const Array<float> c6 = cu::expand2(cf, s.dims, o);
      unsetenv("SV_PYRAMID_EXPAND_CZ");
      setenv("SV_PYRAMID_EXPAND", "planes", 1);
      const Array<float> pl = cu::expand2(cf, s.dims, o);
      unsetenv("SV_PYRAMID_EXPAND");
      const double b3 = 3 * (std::numeric_limits<float>::epsilon() + 1e-12) * max_abs(cf);
      EXPECT_LE(max_diff(c6, cpu_f), b3) << "chunks of 6";
      EXPECT_LE(max_diff(pl, cpu_f), b3) << "planes, then z";
    }
    const double bf = R * (std::numeric_limits<float>::epsilon() + 1e-12) * max_abs(cf);
    const double bd = R * 1e-12 * max_abs(cdb);
    EXPECT_LE(max_diff(ph_f, cpu_f), bf);
    EXPECT_LE(max_diff(pa_f, cpu_f), bf);
    EXPECT_LE(max_diff(ph_f, pa_f), bf);
    EXPECT_LE(max_diff(ph_d, cpu_d), bd);
    EXPECT_LE(max_diff(ph_d, pa_d), bd);
    worst.note(max_diff(ph_f, cpu_f), bf, what + " float");
    worst.note(max_diff(ph_d, cpu_d), bd, what + " double");
    std::size_t big = 0, points = 1;
    for (std::size_t d : s.dims) {
      big += d > 1;
      points *= d;
    }
    if (big >= 2 && points >= 100 && n >= 1) {
      EXPECT_GT(max_diff(ph_f, pa_f), 0.0) << "the phases did not run";
    }
  });
  std::printf("[ cuda pyramid ] expand2 by phases: worst %.3g of the bound (%s)\n", worst.share,
              worst.where.c_str());
}

// ---- The fused pass kernel's phases, emulated on the host (no GPU needed) --------------------

// Runs each phase of a tile for every (lane, chunk) in turn, as the barriers order them on the
// device; `backward` runs the threads of a phase in the reverse order (a phase whose threads
// depended on each other would then differ).
struct HostExec {
  int W, C;
  bool backward;
  template <class F>
  void each(F f) {
    for (int i = 0; i < W * C; ++i) {
      const int t = backward ? W * C - 1 - i : i;
      f(t % W, t / W);
    }
  }
  template <class F>
  void local(F f) {
    each(f);
  }
  template <class F>
  void flat(F f) {
    for (int i = 0; i < W * C; ++i) f(backward ? W * C - 1 - i : i, W * C);
  }
  void sync() {}
  void carries(const double* K, double* R, double*, double zL, bool forward) {
    sv::pyramid_detail::tile_carries_serial(K, R, W, C, zL, forward);
  }
};

// One pass of a plan on lines (outer, n, inner) of doubles, through the tiles of tile_plan for
// `budget` shared doubles, emulated; false where tile_plan declines.
bool emulate_pass(const sv::pyramid_detail::PyramidPass& p, const std::vector<double>& in,
                  std::vector<double>& out, long long outer, long long inner, std::size_t budget,
                  int threads, bool backward, std::size_t& tiles) {
  namespace pd = sv::pyramid_detail;
  const long n = static_cast<long>(p.in_length), m = static_cast<long>(p.out_length());
  const pd::PoleLine pre = p.has_pre ? pd::pole_line(p.pre, n, p.pre_ends) : pd::PoleLine{};
  const pd::PoleLine post = p.has_post ? pd::pole_line(p.post, m, p.post_ends) : pd::PoleLine{};
  pd::TilePlan plan;
  if (!pd::tile_plan(p, pre, post, outer * inner, inner, budget, threads, plan)) return false;
  pd::TileArgs a = plan.args;
  a.row = p.taps.row.data();
  a.index = p.taps.index.data();
  a.weight = p.taps.weight.data();
  EXPECT_LE(a.shared_doubles(), budget);
  out.assign(static_cast<std::size_t>(outer * inner * m), std::nan(""));
  std::vector<double> sm(a.shared_doubles());
  HostExec ex{a.W, a.C, backward};
  tiles = plan.segs.size();
  // The device compiles run_tile per tile width (the lanes' stride known); the emulation runs
  // that code in forward order and the run-time stride's in backward order.
  auto tile = [&](const pd::TileSeg& s, long long l0) {
    const bool per_width = !backward && pd::with_tile_stride(a.LS, [&](auto stride) {
      pd::run_tile<double, decltype(stride)::value>(ex, sm.data(), a, s, in.data(), out.data(), l0);
    });
    if (!per_width) pd::run_tile<double, 0>(ex, sm.data(), a, s, in.data(), out.data(), l0);
  };
  for (long long l0 = 0; l0 < outer * inner; l0 += a.W)
    for (const pd::TileSeg& s : plan.segs) {
      std::fill(sm.begin(), sm.end(), std::nan(""));
      tile(s, l0);
    }
  return true;
}

// The same pass by the CPU's line routines, a line at a time.
std::vector<double> reference_pass(const sv::pyramid_detail::PyramidPass& p,
                                   const std::vector<double>& in, long long outer,
                                   long long inner) {
  namespace pd = sv::pyramid_detail;
  const long n = static_cast<long>(p.in_length), m = static_cast<long>(p.out_length());
  const pd::PoleLine pre = p.has_pre ? pd::pole_line(p.pre, n, p.pre_ends) : pd::PoleLine{};
  const pd::PoleLine post = p.has_post ? pd::pole_line(p.post, m, p.post_ends) : pd::PoleLine{};
  std::vector<double> out(static_cast<std::size_t>(outer * inner * m));
  std::vector<double> x(static_cast<std::size_t>(n)), y(static_cast<std::size_t>(m));
  double acc = 0;
  for (long long l = 0; l < outer * inner; ++l) {
    const long long o = l / inner, i = l % inner;
    for (long k = 0; k < n; ++k)
      x[static_cast<std::size_t>(k)] = in[static_cast<std::size_t>((o * n + k) * inner + i)];
    if (p.has_pre) pd::filter_poles(x.data(), 1, 1, pre, &acc);
    if (p.has_taps) {
      for (long j = 0; j < m; ++j)
        pd::fir_lines(x.data(), 1, &y[static_cast<std::size_t>(j)], 1, p.taps.row.data(),
                      p.taps.index.data(), p.taps.weight.data(), static_cast<std::size_t>(j));
    } else {
      y = x;
    }
    if (p.has_post) pd::filter_poles(y.data(), 1, 1, post, &acc);
    for (long j = 0; j < m; ++j)
      out[static_cast<std::size_t>((o * m + j) * inner + i)] = y[static_cast<std::size_t>(j)];
  }
  return out;
}

// The fused kernel's tiles (whole lines, and segments of long lines under small budgets) against
// the CPU's line routines, in double: reduce2, reduce by 0.71, expand2 and the coarse samples'
// passes, every mode and grid, degrees 1, 2, 3, 7, samples or coefficients in, lines of 1-1601
// samples, lanes along a contiguous axis and a strided one, at most 400, 1500 (threads in reverse
// order) and 12288 shared doubles a block. Runs on the host (no GPU).
TEST(CudaPyramid, FusedTilesOnTheHostMatchTheLineRoutines) {
  namespace pd = sv::pyramid_detail;
  double worst = 0;
  std::string where;
  std::size_t segmented = 0, declined = 0, cases = 0;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int deg : {1, 2, 3, 7})
    for (const ModeGrid& mg : kModeGrids)
      for (long n : {1L, 2L, 5L, 16L, 33L, 300L, 1601L})
        for (int op = 0; op < 4; ++op)
          for (int in_coef = 0; in_coef < 2; ++in_coef) {
            if (mg.b == Boundary::Periodic && n % 2 == 1 && op != 1) continue;
            if (op >= 2 && in_coef == 1) continue;
            sv::ReduceOptions o;
            o.degree = deg;
            o.boundary = mg.b;
            o.grid = mg.g;
            o.input_is_coefficients = in_coef == 1;
            const std::vector<std::size_t> dims{static_cast<std::size_t>(n)};
            std::vector<pd::PyramidPass> plan;
            try {
              if (op == 0 || op == 3) {
                const auto axes = pd::reduce2_axes(1, dims[0], dims, o);
                plan = op == 0 ? pd::reduce_plan(dims, axes, o, true) : pd::sample_plan(axes, deg);
              } else if (op == 1) {
                const auto shape = pd::reduce_factor_shape(1, dims[0], dims, {0.71}, o);
                plan = pd::reduce_plan(dims, pd::reduce_shape_axes(1, dims[0], dims, shape, o), o,
                                       false);
              } else {
                const auto axes = pd::reduce2_axes(1, dims[0], dims, o);
                plan = pd::expand_plan({axes[0].coarse}, dims, o);
              }
            } catch (const sv::Error&) {
              continue;
            }
            if (plan.empty()) continue;
            const pd::PyramidPass& p = plan.front();
            const long ni = static_cast<long>(p.in_length);
            for (int layout = 0; layout < 2; ++layout) {
              const long long outer = layout == 0 ? 3 : 2, inner = layout == 0 ? 1 : 9;
              std::vector<double> in(static_cast<std::size_t>(outer * inner * ni));
              for (double& v : in) v = u(rng);
              const std::vector<double> ref = reference_pass(p, in, outer, inner);
              double scale = 0;
              for (double v : ref) scale = std::max(scale, std::fabs(v));
              for (std::size_t budget : {std::size_t{400}, std::size_t{1500}, std::size_t{12288}}) {
                const int threads = budget == 1500 ? 64 : 256;
                std::vector<double> out;
                std::size_t tiles = 0;
                ++cases;
                if (!emulate_pass(p, in, out, outer, inner, budget, threads, budget == 1500,
                                  tiles)) {
                  ++declined;
                  EXPECT_LT(budget, 12288u) << "whole lines of " << ni << " declined";
                  continue;
                }
                if (tiles > 1) ++segmented;
                double d = 0;
                for (std::size_t i = 0; i < ref.size(); ++i) {
                  const double e = std::fabs(out[i] - ref[i]);
                  d = std::max(d, e == e ? e : std::numeric_limits<double>::infinity());
                }
                const double share = d / (1e-12 * std::max(scale, 1e-300));
                const std::string what =
                    describe(dims, 1, o, "op " + std::to_string(op)) + " layout " +
                    std::to_string(layout) + " budget " + std::to_string(budget) + " threads " +
                    std::to_string(threads) + " tiles " + std::to_string(tiles);
                EXPECT_LE(d, 1e-12 * scale) << what;
                if (share > worst) {
                  worst = share;
                  where = what;
                }
              }
            }
          }
  EXPECT_GT(segmented, 50u);
  std::printf(
      "[ cuda pyramid ] fused tiles on the host: %zu cases (%zu in segments, %zu declined), "
      "worst %.3g of 1e-12 max|out| (%s)\n",
      cases, segmented, declined, worst, where.c_str());
}

// Device memory of n elements of T, poisoned with NaN.
template <class T>
struct Dev {
  explicit Dev(std::size_t n) : buf((std::max<std::size_t>(n, 1) * sizeof(T) + 3) / 4) {
    buf.fill(std::numeric_limits<float>::quiet_NaN());
  }
  T* ptr() { return reinterpret_cast<T*>(buf.data()); }
  void upload(const Array<T>& a) {
    buf.upload(reinterpret_cast<const float*>(a.data()), (a.size() * sizeof(T) + 3) / 4);
  }
  Array<T> download(const std::vector<std::size_t>& dims, std::size_t channels) const {
    Array<T> a(dims, channels);
    std::vector<float> raw(buf.size());
    buf.download(raw.data(), raw.size());
    std::copy_n(reinterpret_cast<const T*>(raw.data()), a.size(), a.data());
    return a;
  }
  cu::DeviceBuffer buf;
};

// The device-pointer API writes every output value (outputs poisoned with NaN) and equals the
// host convenience bit for bit (the same kernels); reduce2_layout / reduce_layout give the CPU's
// shapes.
template <class T>
void device_api() {
  const std::vector<std::size_t> dims{11, 40, 37};
  const Array<T> a = random_array<T>(dims, 2, 42);
  sv::ReduceOptions o;
  o.degree = 3;
  o.boundary = Boundary::Mirror;
  o.samples = true;
  const cu::Layout fine = cu::Layout::of(a);
  const cu::Layout coarse = cu::reduce2_layout(fine, o);
  const sv::Reduced<T> host = cu::reduce2(a, o);
  EXPECT_EQ(coarse.dims, host.coefficients.dims());
  Dev<T> src(a.size()), coef(coarse.size()), smp(coarse.size()), fine_out(a.size());
  src.upload(a);
  cu::reduce2<T>(src.ptr(), fine, coef.ptr(), smp.ptr(), o);
  cu::expand2<T>(coef.ptr(), coarse, dims, fine_out.ptr(), o);
  cu::synchronize("test");
  EXPECT_EQ(max_diff(coef.download(coarse.dims, 2), host.coefficients), 0.0);
  EXPECT_EQ(max_diff(smp.download(coarse.dims, 2), host.samples), 0.0);
  EXPECT_EQ(max_diff(fine_out.download(dims, 2), cu::expand2(host.coefficients, dims, o)), 0.0);
  // reduce_to_shape through the device API.
  const std::vector<double> f{0.71, 0.3, 0.5};
  const cu::Layout rl = cu::reduce_layout(fine, f, o);
  const sv::Reduced<T> hr = cu::reduce(a, f, o);
  EXPECT_EQ(rl.dims, hr.coefficients.dims());
  Dev<T> rc(rl.size());
  o.samples = false;
  cu::reduce_to_shape<T>(src.ptr(), fine, rl.dims, rc.ptr(), nullptr, o);
  cu::synchronize("test");
  EXPECT_EQ(max_diff(rc.download(rl.dims, 2), hr.coefficients), 0.0);
}

TEST(CudaPyramid, DeviceApiWritesEveryOutput) {
  REQUIRE_CUDA();
  device_api<float>();
  device_api<double>();
}

// The refusals carry the CPU's sentences, word for word (checked before any device is needed,
// so this runs without a GPU too).
std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const sv::Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CudaPyramid, RefusalsAreTheCpuSentences) {
  const Array<double> f({8, 6});
  const Array<float> ff({8, 6});
  struct Case {
    std::function<void(sv::ReduceOptions&)> set;
    std::function<void(const sv::ReduceOptions&)> cpu, gpu;
  };
  auto opts = [](int degree, Boundary b, PyramidGrid g) {
    return [=](sv::ReduceOptions& o) {
      o.degree = degree;
      o.boundary = b;
      o.grid = g;
    };
  };
  const auto R = Boundary::Reflect;
  const auto By = PyramidGrid::ByBoundary;
  std::vector<Case> cases = {
      {opts(8, R, By), [&](auto& o) { sv::reduce2(f, o); }, [&](auto& o) { cu::reduce2(f, o); }},
      {opts(-1, R, By),
       [&](auto& o) {
         sv::reduce(f, {0.5, 0.5}, o);
       },
       [&](auto& o) {
         cu::reduce(f, {0.5, 0.5}, o);
       }},
      {opts(3, R, By),
       [&](auto& o) {
         sv::reduce(f, {0.5, 1.5}, o);
       },
       [&](auto& o) {
         cu::reduce(f, {0.5, 1.5}, o);
       }},
      {opts(3, R, By),
       [&](auto& o) {
         sv::reduce(ff, {std::nan(""), 0.5}, o);
       },
       [&](auto& o) {
         cu::reduce(ff, {std::nan(""), 0.5}, o);
       }},
      {opts(3, R, By), [&](auto& o) { sv::reduce(f, {0.5}, o); },
       [&](auto& o) { cu::reduce(f, {0.5}, o); }},
      {opts(3, R, By),
       [&](auto& o) {
         sv::reduce(f, {0.01, 0.5}, o);
       },
       [&](auto& o) {
         cu::reduce(f, {0.01, 0.5}, o);
       }},
      {opts(3, R, By),
       [&](auto& o) {
         sv::reduce_to_shape(f, {9, 3}, o);
       },
       [&](auto& o) {
         cu::reduce_to_shape(f, {9, 3}, o);
       }},
      {opts(3, R, By),
       [&](auto& o) {
         sv::reduce_to_shape(f, {0, 3}, o);
       },
       [&](auto& o) {
         cu::reduce_to_shape(f, {0, 3}, o);
       }},
      {opts(3, R, By), [&](auto& o) { sv::reduce2(Array<double>(), o); },
       [&](auto& o) { cu::reduce2(Array<double>(), o); }},
      {opts(3, Boundary::Nearest, By), [&](auto& o) { sv::reduce2(f, o); },
       [&](auto& o) { cu::reduce2(f, o); }},
      {opts(3, Boundary::GridConstant, By),
       [&](auto& o) {
         sv::reduce(ff, {0.5, 0.5}, o);
       },
       [&](auto& o) {
         cu::reduce(ff, {0.5, 0.5}, o);
       }},
      {opts(3, Boundary::Wrap, By), [&](auto& o) { sv::reduce2(f, o); },
       [&](auto& o) { cu::reduce2(f, o); }},
      {opts(3, R, PyramidGrid::Nodes), [&](auto& o) { sv::reduce2(f, o); },
       [&](auto& o) { cu::reduce2(f, o); }},
      {opts(3, Boundary::Mirror, PyramidGrid::Cells),
       [&](auto& o) {
         sv::reduce(f, {0.5, 0.5}, o);
       },
       [&](auto& o) {
         cu::reduce(f, {0.5, 0.5}, o);
       }},
      {opts(3, Boundary::Periodic, By), [&](auto& o) { sv::reduce2(Array<double>({7}), o); },
       [&](auto& o) { cu::reduce2(Array<double>({7}), o); }},
      {opts(3, R, By),
       [&](auto& o) {
         sv::expand2(Array<double>({3, 3}), {8, 6}, o);
       },
       [&](auto& o) {
         cu::expand2(Array<double>({3, 3}), {8, 6}, o);
       }},
      {opts(3, R, By),
       [&](auto& o) {
         sv::expand2(Array<float>({4, 3}), {8}, o);
       },
       [&](auto& o) {
         cu::expand2(Array<float>({4, 3}), {8}, o);
       }},
      {opts(9, R, By),
       [&](auto& o) {
         sv::expand2(Array<float>({4, 3}), {8, 6}, o);
       },
       [&](auto& o) {
         cu::expand2(Array<float>({4, 3}), {8, 6}, o);
       }},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    sv::ReduceOptions o;
    cases[i].set(o);
    const std::string cpu = message_of([&] { cases[i].cpu(o); });
    const std::string gpu = message_of([&] { cases[i].gpu(o); });
    EXPECT_NE(cpu, "(no error)") << "case " << i;
    EXPECT_EQ(gpu, cpu) << "case " << i;
  }
  // The device API: the same sentences, and a null samples pointer when samples are asked for.
  sv::ReduceOptions o;
  o.boundary = Boundary::Periodic;
  const cu::Layout odd{{7}, 1};
  EXPECT_EQ(message_of([&] { cu::reduce2<double>(nullptr, odd, nullptr, nullptr, o); }),
            message_of([&] { sv::reduce2(Array<double>({7}), o); }));
  o.boundary = Boundary::Reflect;
  o.samples = true;
  const std::string m = message_of([&] {
    cu::reduce2<float>(nullptr, {{8}, 1}, nullptr, nullptr, o);
  });
  EXPECT_NE(m.find("samples pointer is null"), std::string::npos) << m;
}

}  // namespace
