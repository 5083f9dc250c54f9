// The CUDA prefilter against the CPU prefilter in double on the same float inputs: every degree,
// boundary mode, rank, channel count and a range of lengths (1, 2, 3, primes, lines long enough
// to be chunked), forced chunk and tile sizes, the naive kernel, single axes, and guard zones
// around the array that must stay untouched. Skips with the reason when there is no device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "../../cuda/src/prefilter_poles.h"
#include "../core/test_util.h"
#include "require_cuda.h"
#include "splineview/bspline.h"
#include "splineview/cuda_prefilter.h"
#include "splineview/prefilter.h"

namespace {

using sv::ArrayD;
using sv::ArrayF;
using sv::Boundary;
namespace cu = sv::cuda;

constexpr double kFloatEps = std::numeric_limits<float>::epsilon();

// Error of `got` against the double reference, in float ulp of max|reference|.
double ulps(const std::vector<float>& got, const ArrayD& ref) {
  double err = 0, range = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double d = std::fabs(static_cast<double>(got[i]) - ref[i]);
    err = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(err, d);
    range = std::max(range, std::fabs(ref[i]));
  }
  return err / (std::max(range, 1e-30) * kFloatEps);
}

// Runs `filter(device pointer, layout)` on `in` in place, in a buffer with NaN guard zones on
// both sides, and returns the result; fails the test if a guard changed.
template <class Filter>
std::vector<float> run_guarded(const ArrayF& in, Filter filter) {
  constexpr std::size_t kGuard = 4096;
  const cu::Layout layout = cu::Layout::of(in);
  cu::DeviceBuffer buf(in.size() + 2 * kGuard);
  buf.fill(std::numeric_limits<float>::quiet_NaN());
  std::vector<float> host(buf.size(), std::numeric_limits<float>::quiet_NaN());
  std::copy(in.data(), in.data() + in.size(), host.begin() + kGuard);
  buf.upload(host.data(), host.size());
  filter(buf.data() + kGuard, layout);
  cu::synchronize("test");
  buf.download(host.data(), host.size());
  for (std::size_t i = 0; i < kGuard; ++i) {
    EXPECT_TRUE(std::isnan(host[i])) << "guard before the array written at " << i;
    EXPECT_TRUE(std::isnan(host[host.size() - 1 - i])) << "guard after the array written";
  }
  return {host.begin() + kGuard, host.begin() + kGuard + static_cast<long>(in.size())};
}

// The CUDA prefilter (all axes, or one) on `in`, guarded as above.
std::vector<float> run_device(const ArrayF& in, const cu::PrefilterConfig& cfg, int axis = -1) {
  return run_guarded(in, [&](float* data, const cu::Layout& layout) {
    if (axis < 0)
      cu::prefilter(data, layout, cfg);
    else
      cu::prefilter_axis(data, layout, static_cast<std::size_t>(axis), cfg);
  });
}

ArrayD reference(const ArrayF& in, int degree, Boundary b, int axis = -1) {
  ArrayD d = ArrayD::from(in);
  if (axis < 0)
    sv::prefilter(d, {degree, b});
  else
    sv::prefilter_axis(d, static_cast<std::size_t>(axis), {degree, b});
  return d;
}

std::string describe(const ArrayF& a, int degree, Boundary b) {
  std::string s = "dims";
  for (std::size_t d : a.dims()) s += " " + std::to_string(d);
  return s + " x" + std::to_string(a.channels()) + " degree " + std::to_string(degree) + " " +
         sv::boundary_name(b);
}

struct Shape {
  std::vector<std::size_t> dims;
  std::size_t channels;
};

TEST(CudaPrefilter, MatchesTheDoubleReferenceForEveryDegreeModeRankAndChannelCount) {
  REQUIRE_CUDA();
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<Shape> shapes = {
      {{1}, 1},         {{2}, 1},          {{3}, 2},         {{17}, 1},      {{601}, 3},
      {{1300}, 1},      {{5, 1}, 1},       {{2, 7}, 4},      {{7, 5}, 3},    {{31, 29}, 1},
      {{3, 1100}, 4},   {{1030, 3}, 1},    {{1, 1, 9}, 1},   {{5, 6, 7}, 4}, {{9, 31, 27}, 1},
      {{13, 2, 37}, 2}, {{40, 3, 520}, 1}, {{530, 4, 5}, 1},
  };
  double worst = 0;
  for (int n = 2; n <= sv::kMaxDegree; ++n)
    for (Boundary b : svtest::all_boundaries())
      for (const Shape& s : shapes) {
        const ArrayF in = svtest::random_array<float>(s.dims, s.channels, seed + n);
        const double u = ulps(run_device(in, {n, b}), reference(in, n, b));
        worst = std::max(worst, u);
        EXPECT_LT(u, 8.0) << describe(in, n, b);
      }
  std::printf("CUDA prefilter vs double: worst %.2f ulp of max|c|\n", worst);
  RecordProperty("worst_ulp", std::to_string(worst));
}

TEST(CudaPrefilter, ForcedChunksAndTilesDoNotLeaveSeams) {
  // Chunks shorter than the apron, a last chunk of one sample, tiles of one line: the chunked
  // passes, out of place through the scratch copy (aprons from the source) or in place (aprons
  // from the side buffer), must agree with the whole-line result.
  REQUIRE_CUDA();
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<Shape> shapes = {{{45, 97}, 3}, {{20, 30, 41}, 1}, {{257}, 4}};
  for (int n : {3, 5, 7})
    for (Boundary b : svtest::all_boundaries())
      for (const Shape& s : shapes)
        for (int chunk : {1, 7, 16, 37, 96})
          for (int lines : {1, 5, 64}) {
            const ArrayF in = svtest::random_array<float>(s.dims, s.channels, seed + chunk);
            cu::PrefilterConfig cfg{n, b};
            cfg.chunk = chunk;
            cfg.lines = lines;
            cfg.async_loads = lines != 5;    // both loaders
            cfg.ping_pong = chunk % 2 == 1;  // both ways of getting the aprons
            EXPECT_LT(ulps(run_device(in, cfg), reference(in, n, b)), 8.0)
                << describe(in, n, b) << " chunk " << chunk << " lines " << lines
                << (cfg.ping_pong ? " ping-pong" : " in place");
          }
}

TEST(CudaPrefilter, NaiveKernelMatchesToo) {
  REQUIRE_CUDA();
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int n = 2; n <= sv::kMaxDegree; ++n)
    for (Boundary b : svtest::all_boundaries())
      for (const Shape& s : std::vector<Shape>{{{2}, 1}, {{7, 5}, 3}, {{9, 31, 27}, 1}}) {
        const ArrayF in = svtest::random_array<float>(s.dims, s.channels, seed + n);
        cu::PrefilterConfig cfg{n, b};
        cfg.kernel = cu::PrefilterKernel::Naive;
        EXPECT_LT(ulps(run_device(in, cfg), reference(in, n, b)), 8.0) << describe(in, n, b);
      }
}

TEST(CudaPrefilter, SingleAxesMatchTheCpuSingleAxes) {
  REQUIRE_CUDA();
  const auto seed = svtest::fresh_seed();
  const ArrayF in = svtest::random_array<float>({11, 300, 23}, 2, seed);
  for (int axis = 0; axis < 3; ++axis)
    for (auto kernel : {cu::PrefilterKernel::Tiled, cu::PrefilterKernel::Naive}) {
      cu::PrefilterConfig cfg{3, Boundary::Reflect};
      cfg.kernel = kernel;
      EXPECT_LT(ulps(run_device(in, cfg, axis), reference(in, 3, Boundary::Reflect, axis)), 8.0)
          << "axis " << axis;
    }
}

TEST(CudaPrefilter, OutOfPlaceAxesMatchAndLeaveTheSourceAlone) {
  // The passes prefilter() ping-pongs (src -> dst), chunked and whole, on both tile shapes.
  REQUIRE_CUDA();
  const auto seed = svtest::fresh_seed();
  const ArrayF in = svtest::random_array<float>({700, 1500}, 4, seed);
  const cu::Layout layout = cu::Layout::of(in);
  cu::DeviceBuffer src(in.size()), dst(in.size());
  src.upload(in.data(), in.size());
  for (Boundary b : svtest::all_boundaries())
    for (int axis = 0; axis < 2; ++axis)
      for (int chunk : {0, 100}) {
        cu::PrefilterConfig cfg{3, b};
        cfg.chunk = chunk;
        dst.fill(std::numeric_limits<float>::quiet_NaN());
        cu::prefilter_axis(src.data(), dst.data(), layout, static_cast<std::size_t>(axis), cfg);
        std::vector<float> got(in.size()), back(in.size());
        dst.download(got.data(), got.size());
        src.download(back.data(), back.size());
        EXPECT_LT(ulps(got, reference(in, 3, b, axis)), 8.0)
            << sv::boundary_name(b) << " axis " << axis << " chunk " << chunk;
        EXPECT_TRUE(std::equal(back.begin(), back.end(), in.data())) << "source changed";
      }
  // 2-D with both axes chunked: both out of place, none in place.
  const std::vector<bool> plan = cu::prefilter_out_of_place(layout, {});
  EXPECT_EQ(plan, (std::vector<bool>{true, true}));
  cu::PrefilterConfig off{};
  off.ping_pong = false;
  EXPECT_EQ(cu::prefilter_out_of_place(layout, off), (std::vector<bool>{false, false}));
}

// The per-axis passes in the fused pass's order (x, y, then z), on the device; the fused pass
// runs the same tiles with the same arithmetic, so the two agree bit for bit.
std::vector<float> run_axes_xyz(const ArrayF& in, const cu::PrefilterConfig& cfg) {
  const cu::Layout layout = cu::Layout::of(in);
  cu::DeviceBuffer buf(in.size());
  buf.upload(in.data(), in.size());
  // The fused pass runs whole lines on y and x (the per-axis passes may chunk small arrays).
  cu::PrefilterConfig whole = cfg;
  whole.chunk = static_cast<int>(std::max(in.dims()[1], in.dims()[2]));
  for (int axis = 2; axis >= 0; --axis)
    cu::prefilter_axis(buf.data(), layout, static_cast<std::size_t>(axis), axis ? whole : cfg);
  std::vector<float> out(in.size());
  buf.download(out.data(), out.size());
  return out;
}

TEST(CudaPrefilter, FusedPassEqualsTheAxisPassesBitForBitAndTheReference) {
  // prefilter() on 3-D arrays fuses y and x (prefilter_fused_xy): every degree and mode, plane
  // sizes that leave partial tiles, 1-4 channels, a lag of one plane (y tiles then nearly always
  // wait for their plane) up to more than the planes (an explicit lag fuses even arrays this
  // small; the automatic one is checked on a large volume below). A y tile that read an x result
  // too early (a missing wait or a stale cache line) would differ from the axis passes by far more
  // than rounding.
  REQUIRE_CUDA();
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<Shape> shapes = {{{7, 33, 40}, 1}, {{5, 31, 9}, 3},  {{3, 100, 257}, 1},
                                     {{2, 2, 8}, 1},   {{9, 45, 70}, 4}, {{40, 17, 2}, 4},
                                     {{2, 900, 12}, 1}};
  int fused = 0;
  for (int n = 2; n <= sv::kMaxDegree; ++n)
    for (Boundary b : svtest::all_boundaries())
      for (const Shape& s : shapes)
        for (int lag : {1, 3, 1000}) {
          const ArrayF in = svtest::random_array<float>(s.dims, s.channels, seed + n + lag);
          cu::PrefilterConfig cfg{n, b};
          cfg.fuse_lag = lag;
          cfg.fuse_hints = lag != 3;
          ASSERT_TRUE(cu::prefilter_fusable(cu::Layout::of(in), cfg)) << describe(in, n, b);
          ++fused;
          const auto got = run_device(in, cfg);
          // Degrees 6 and 7 on lines of 2 samples (whole-line tiles whose 47-sample aprons
          // reflect the line many times) reached 9.8 ulp once in about 6000 such cases on the
          // H100; the axis passes give the same values bit for bit (below), so the bound for
          // those degrees is the interop tests' 16 ulp.
          EXPECT_LT(ulps(got, reference(in, n, b)), n >= 6 ? 16.0 : 8.0)
              << describe(in, n, b) << " lag " << lag;
          const auto axes = run_axes_xyz(in, cfg);
          EXPECT_TRUE(std::equal(got.begin(), got.end(), axes.begin()))
              << describe(in, n, b) << " lag " << lag << ": fused differs from the axis passes";
        }
  EXPECT_GT(fused, 0);
}

// The one-pass 3-D kernel (detail::prefilter_one_pass_3d, experimental) on `in`, guarded as
// run_device; `applied` says whether it ran.
std::vector<float> run_one_pass_3d(const ArrayF& in, const cu::PrefilterConfig& cfg,
                                   bool* applied) {
  return run_guarded(in, [&](float* data, const cu::Layout& layout) {
    *applied = cu::detail::prefilter_one_pass_3d(data, layout, cfg);
  });
}

TEST(CudaPrefilter, OnePass3DEqualsTheReferenceAndDoesNotDependOnTheOrderOfWork) {
  // All three axes in one pass: degrees 2 and 3, reflect and mirror, plane counts from one batch
  // (16) to several with a long last batch, planes with partial tiles and strips; lags of the y
  // tiles behind the x tiles from one plane (the z items then wait for nearly every plane) to
  // more than the planes. Against the double reference, and bit for bit the same whatever the
  // lag (each line's arithmetic is fixed; a z item that read a plane too early, or the causal
  // values of its batch before, would differ by far more than rounding).
  REQUIRE_CUDA();
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<Shape> shapes = {
      {{17, 33, 40}, 1}, {{47, 17, 9}, 1}, {{33, 100, 257}, 1}, {{64, 64, 64}, 1}, {{31, 2, 8}, 1}};
  for (int n = 2; n <= 3; ++n)
    for (Boundary b : {Boundary::Reflect, Boundary::Mirror})
      for (const Shape& s : shapes) {
        const ArrayF in = svtest::random_array<float>(s.dims, s.channels, seed + n);
        const ArrayD ref = reference(in, n, b);
        std::vector<float> first;
        for (int lag : {1, 3, 1000}) {
          cu::PrefilterConfig cfg{n, b};
          cfg.fuse_lag = lag;
          bool applied = false;
          const auto got = run_one_pass_3d(in, cfg, &applied);
          ASSERT_TRUE(applied) << describe(in, n, b);
          EXPECT_LT(ulps(got, ref), 8.0) << describe(in, n, b) << " lag " << lag;
          if (first.empty())
            first = got;
          else
            EXPECT_TRUE(std::equal(got.begin(), got.end(), first.begin()))
                << describe(in, n, b) << " lag " << lag << ": differs from lag 1";
        }
      }
}

TEST(CudaPrefilter, OnePass3DAppliesOnlyWhereItCanAndLeavesTheRestAlone) {
  REQUIRE_CUDA();
  const ArrayF in = svtest::random_array<float>({40, 33, 40}, 1, svtest::fresh_seed());
  struct Case {
    int degree;
    Boundary boundary;
  };
  // Two poles (degree 5), periodic (its left apron is the volume's end), fewer planes than a
  // batch, and several channels do not apply; the array must come back untouched.
  for (const Case c : {Case{5, Boundary::Mirror}, Case{3, Boundary::Periodic}}) {
    cu::PrefilterConfig cfg{c.degree, c.boundary};
    cfg.fuse_lag = 1;
    bool applied = true;
    const auto got = run_one_pass_3d(in, cfg, &applied);
    EXPECT_FALSE(applied);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), in.data()));
  }
  const ArrayF thin = svtest::random_array<float>({8, 33, 40}, 1, 7);
  const ArrayF rgb = svtest::random_array<float>({40, 33, 40}, 3, 7);
  for (const ArrayF* a : {&thin, &rgb}) {
    cu::PrefilterConfig cfg{3, Boundary::Mirror};
    cfg.fuse_lag = 1;
    bool applied = true;
    const auto got = run_one_pass_3d(*a, cfg, &applied);
    EXPECT_FALSE(applied);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), a->data()));
  }
}

TEST(CudaPrefilter, OnePass3DHasNoRaceOnAVolumeOfManyPlanes) {
  // The benchmark's volume (300 planes of 512 x 512), the automatic lags and a lag of one plane,
  // repeated: within the reference's bound against the axis passes' result, and bit for bit
  // the same every time.
  REQUIRE_CUDA();
  const ArrayF in = svtest::random_array<float>({300, 512, 512}, 1, svtest::fresh_seed());
  const ArrayD ref = reference(in, 3, Boundary::Reflect);
  std::vector<float> first;
  for (int lag : {0, 1})
    for (int r = 0; r < 2; ++r) {
      cu::PrefilterConfig cfg{3, Boundary::Reflect};
      cfg.fuse_lag = lag;
      bool applied = false;
      const auto got = run_one_pass_3d(in, cfg, &applied);
      ASSERT_TRUE(applied);
      EXPECT_LT(ulps(got, ref), 8.0) << "lag " << lag << " repeat " << r;
      if (first.empty()) first = got;
      std::size_t diff = 0;
      for (std::size_t i = 0; i < got.size(); ++i) diff += got[i] != first[i];
      EXPECT_EQ(diff, 0u) << "lag " << lag << " repeat " << r;
    }
}

TEST(CudaPrefilter, FusedPassHasNoRaceOnAVolumeOfManyPlanes) {
  // 300 planes of 512 x 512 (the benchmark's volume), repeated, with the automatic lag and with
  // a lag of one plane: bit for bit the axis passes every time.
  REQUIRE_CUDA();
  const ArrayF in = svtest::random_array<float>({300, 512, 512}, 1, svtest::fresh_seed());
  for (int lag : {0, 1}) {
    cu::PrefilterConfig cfg{3, Boundary::Mirror};
    cfg.fuse_lag = lag;
    ASSERT_TRUE(cu::prefilter_fusable(cu::Layout::of(in), cfg));
    const auto axes = run_axes_xyz(in, cfg);
    for (int r = 0; r < 3; ++r) {
      const auto got = run_device(in, cfg);
      std::size_t diff = 0;
      for (std::size_t i = 0; i < got.size(); ++i) diff += got[i] != axes[i];
      EXPECT_EQ(diff, 0u) << "lag " << lag << " repeat " << r;
    }
  }
}

TEST(CudaPrefilter, FusableOnlyWhereTheFusedPassApplies) {
  REQUIRE_CUDA();
  cu::PrefilterConfig on{};
  EXPECT_TRUE(cu::prefilter_fusable({{300, 512, 512}, 1}, on));
  EXPECT_TRUE(cu::prefilter_fusable({{128, 128, 128}, 2}, on));
  EXPECT_FALSE(cu::prefilter_fusable({{32, 32, 32}, 1}, on));  // too few tiles to pay
  cu::PrefilterConfig lag2{};
  lag2.fuse_lag = 2;
  EXPECT_TRUE(cu::prefilter_fusable({{32, 32, 32}, 1}, lag2));
  EXPECT_FALSE(cu::prefilter_fusable({{512, 512}, 1}, on));      // 2-D
  EXPECT_FALSE(cu::prefilter_fusable({{10, 64, 3000}, 1}, on));  // x lines chunked
  EXPECT_FALSE(cu::prefilter_fusable({{10, 3000, 64}, 1}, on));  // y lines chunked
  EXPECT_FALSE(cu::prefilter_fusable({{10, 64, 1}, 1}, on));     // one column
  cu::PrefilterConfig chunked{};
  chunked.chunk = 32;
  EXPECT_FALSE(cu::prefilter_fusable({{300, 512, 512}, 1}, chunked));
  cu::PrefilterConfig off{};
  off.fuse = false;
  EXPECT_FALSE(cu::prefilter_fusable({{300, 512, 512}, 1}, off));
  EXPECT_FALSE(cu::prefilter_fusable({{300, 512, 512}, 1}, {1, Boundary::Mirror}));
  float dummy = 0;
  EXPECT_THROW(cu::prefilter_fused_xy(&dummy, {{512, 512}, 1}, on), sv::Error);
}

TEST(CudaPrefilter, LongLinesStayExact) {
  REQUIRE_CUDA();
  const auto seed = svtest::fresh_seed();
  const ArrayF in = svtest::random_array<float>({3, 20000}, 1, seed);
  for (Boundary b : svtest::all_boundaries())
    EXPECT_LT(ulps(run_device(in, {3, b}), reference(in, 3, b)), 8.0) << sv::boundary_name(b);
}

TEST(CudaPrefilter, ConstantsStayConstantAndLowDegreesAreTheIdentity) {
  REQUIRE_CUDA();
  ArrayF c({6, 7, 300}, 1);
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = 0.625f;
  for (int n = 2; n <= sv::kMaxDegree; ++n)
    for (Boundary b : svtest::all_boundaries()) {
      const auto out = run_device(c, {n, b});
      for (float v : out) ASSERT_NEAR(v, 0.625, 8 * kFloatEps) << "degree " << n;
    }
  const ArrayF r = svtest::random_array<float>({5, 9}, 2, 7);
  for (int n : {0, 1}) {
    const auto out = run_device(r, {n, Boundary::Reflect});
    for (std::size_t i = 0; i < r.size(); ++i) ASSERT_EQ(out[i], r[i]) << "degree " << n;
  }
}

// 2-D arrays large enough for the one-pass kernel (PrefilterConfig::one_pass, on by default:
// both axes in one pass, side buffers for the aprons, row chunks): against the double reference
// like every other path, and against the per-axis passes; degree 7 (an apron of 42 > 32), a
// two-channel image and a small one stay per axis.
TEST(CudaPrefilter, OnePass2DEqualsTheReference) {
  REQUIRE_CUDA();
  // SV_ONEPASS_SMALL=1 (the compute-sanitizer runs): one shape, degree, mode.
  const bool small = std::getenv("SV_ONEPASS_SMALL") != nullptr;
  const std::vector<std::vector<std::size_t>> shapes = {{2600, 3001}, {3001, 2600}};
  for (const auto& dims : shapes) {
    if (small && dims[0] != 2600) continue;
    const ArrayF in = svtest::random_array<float>(dims, 1, 23);
    const cu::Layout layout = cu::Layout::of(in);
    for (int n : {2, 3, 5})
      for (Boundary b : {Boundary::Reflect, Boundary::Mirror, Boundary::Periodic}) {
        if (small && (n != 3 || b != Boundary::Mirror)) continue;
        const cu::PrefilterConfig cfg{n, b};  // one_pass: on by default
        ASSERT_TRUE(cu::prefilter_fusable(layout, cfg)) << describe(in, n, b);
        const std::vector<float> got = run_device(in, cfg);
        const ArrayD ref = reference(in, n, b);
        EXPECT_LT(ulps(got, ref), 8.0) << describe(in, n, b);
        cu::PrefilterConfig axes = cfg;
        axes.one_pass = false;
        const std::vector<float> per_axis = run_device(in, axes);
        EXPECT_LT(ulps(per_axis, ref), 8.0) << describe(in, n, b);
        double worst = 0;
        int shown = 0;
        for (std::size_t i = 0; i < got.size(); ++i) {
          const double d = std::fabs(static_cast<double>(got[i]) - per_axis[i]);
          worst = std::max(worst, d);
          if (d > 1e-4 && shown < 12) {  // where the one pass goes wrong, if it does
            ++shown;
            std::printf("[ one pass ] differs at row %zu column %zu by %g\n", i / dims[1],
                        i % dims[1], d);
          }
        }
        std::printf("[ one pass ] %s: %.2f ulp against the reference, %.3g from the axes\n",
                    describe(in, n, b).c_str(), ulps(got, ref), worst);
      }
    EXPECT_FALSE(cu::prefilter_fusable(layout, {7, Boundary::Reflect}));
  }
  const cu::PrefilterConfig cubic{3, Boundary::Reflect};
  const ArrayF two = svtest::random_array<float>({2600, 3001}, 2, 5);
  EXPECT_FALSE(cu::prefilter_fusable(cu::Layout::of(two), cubic));
  EXPECT_FALSE(
      cu::prefilter_fusable(cu::Layout::of(svtest::random_array<float>({64, 64}, 1, 5)), cubic));
}

TEST(CudaPrefilter, HostConvenienceEqualsTheDevicePath) {
  REQUIRE_CUDA();
  ArrayF a = svtest::random_array<float>({33, 65}, 3, 11);
  const auto dev = run_device(a, {5, Boundary::Mirror});
  cu::prefilter(a, {5, Boundary::Mirror});
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], dev[i]);
}

TEST(CudaPrefilter, BadInputIsRefusedWithASentence) {
  // Checked before any device work, so these run without a GPU as well.
  float dummy = 0;
  const auto expect_error = [&](const cu::Layout& l, const cu::PrefilterConfig& cfg,
                                const char* needle) {
    try {
      cu::prefilter(&dummy, l, cfg);
      ADD_FAILURE() << "no error for " << needle;
    } catch (const sv::Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error({{4, 0}, 1}, {}, "zero-size");
  expect_error({{}, 1}, {}, "rank");
  expect_error({{4, 4, 4, 4}, 1}, {}, "rank");
  expect_error({{4}, 5}, {}, "channels");
  expect_error({{4}, 1}, {8, Boundary::Reflect}, "degree");
  cu::PrefilterConfig bad;
  bad.chunk = -1;
  expect_error({{4}, 1}, bad, "chunk");
  cu::PrefilterConfig bad_lag;
  bad_lag.fuse_lag = -2;
  expect_error({{4, 4, 4}, 1}, bad_lag, "fuse_lag");
}

}  // namespace
