// CUDA FFD field kernels (cuda_ffd.h) against the double reference sv::ffd_field_reference on
// random control grids: P4's volume shapes scaled down, spacings 1..8 per axis (different per
// axis, image extents not multiples of them), fixed seeds and a fresh one per run.
//   - PerVoxel, ThreadPerTileLerp and ThreadPerTileFma within 8 eps max|c| (eps = 2^-23): the
//     weights are positive and sum to 1, so |sum w c| <= sum |w c| <= max|c|, and each result is
//     a chain of at most 64 + 4 roundings of partial sums bounded by that.
//   - Texture within 6/256 max|c| (+ 8 eps): each of the 8 trilinear fetches has its three
//     fractional weights rounded to 8 bits (|error| <= 1/256 each) on differences of at most
//     2 max|c|; the fetches' weights sum to 1. And measurably worse than the others (at least
//     100x their worst, and above 1e-4 max|c|): the seams of P1's Figure 1 exist.
//   - Every voxel is written, nothing past the output (NaN-poisoned buffer with a guard).
//   - The lerp form reproduces a constant field exactly (lerp(c, c, t) = c).
//   - 2-D grids (2 components) within the same bounds (texture: 4/256 max|c|).
//   - Bad arguments throw sv::Error naming the problem (these need no device).
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "require_cuda.h"
#include "splineview/cuda_ffd.h"
#include "splineview/cuda_memory.h"
#include "splineview/error.h"
#include "splineview/ffd.h"

namespace {

namespace cu = sv::cuda;
using cu::FfdKernel;
using Shape = std::vector<std::size_t>;

constexpr double kEps = FLT_EPSILON;  // 2^-23

sv::ArrayF random_grid(const Shape& image, const std::vector<int>& delta, std::uint32_t seed,
                       float amplitude = 1.0f) {
  sv::ArrayF g(sv::ffd_grid_shape(image, delta), 3);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-amplitude, amplitude);
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = u(rng);
  return g;
}

sv::Array<double> to_double(const sv::ArrayF& a) {
  sv::Array<double> d(a.dims(), a.channels());
  for (std::size_t i = 0; i < a.size(); ++i) d[i] = a[i];
  return d;
}

double max_abs(const sv::ArrayF& a) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(static_cast<double>(a[i])));
  return m;
}

struct Errors {
  double max = 0, mean = 0;
};

Errors errors(const sv::ArrayF& got, const sv::Array<double>& ref) {
  Errors e;
  EXPECT_EQ(got.size(), ref.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double d = std::fabs(static_cast<double>(got[i]) - ref[i]);
    e.max = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(e.max, d);
    e.mean += d;
  }
  e.mean /= static_cast<double>(got.size());
  return e;
}

std::string text(const Shape& s, const std::vector<int>& d) {
  return std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]) +
         " delta " + std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]);
}

// All four kernels on one random grid against the double reference, with the bounds above.
void check_case(const Shape& image, const std::vector<int>& delta, std::uint32_t seed) {
  SCOPED_TRACE(text(image, delta) + " seed " + std::to_string(seed));
  const sv::ArrayF grid = random_grid(image, delta, seed);
  const sv::Array<double> ref = sv::ffd_field_reference(to_double(grid), delta, image);
  const double cmax = max_abs(grid);
  const double precise_bound = 8 * kEps * cmax;
  const double texture_bound = 6.0 / 256.0 * cmax + precise_bound;
  double worst_precise = 0;
  Errors texture;
  for (FfdKernel k : cu::kFfdKernels) {
    const Errors e = errors(cu::ffd_field(grid, delta, image, k), ref);
    std::printf("  %-24s %-10s max %.3g (%.2f eps max|c|)  mean %.3g\n", text(image, delta).c_str(),
                cu::ffd_kernel_name(k), e.max, e.max / (kEps * cmax), e.mean);
    if (k == FfdKernel::Texture) {
      texture = e;
      EXPECT_LE(e.max, texture_bound) << "texture kernel beyond the 8-bit-weight bound";
    } else {
      worst_precise = std::max(worst_precise, e.max);
      EXPECT_LE(e.max, precise_bound) << cu::ffd_kernel_name(k) << ": beyond 8 eps max|c|";
    }
  }
  EXPECT_GT(texture.max, 100 * worst_precise) << "texture hardware should show its 8-bit seams";
  EXPECT_GT(texture.max, 1e-4 * cmax) << "texture hardware should show its 8-bit seams";
}

TEST(CudaFfd, MatchesReferenceOnP4ShapesScaledDown) {
  REQUIRE_CUDA();
  check_case({61, 43, 37}, {5, 5, 5}, 1);  // P4's default 5^3 tiles
  check_case({37, 43, 61}, {3, 4, 6}, 2);  // different per axis, no extent a multiple
  check_case({43, 37, 61}, {8, 7, 2}, 3);
}

TEST(CudaFfd, MatchesReferenceAt128CubedDelta5) {
  REQUIRE_CUDA();
  check_case({128, 128, 128}, {5, 5, 5}, 4);
}

// Enough tiles that every thread takes a whole tile (small images split a tile's voxel planes
// among threads to fill the device). Reference: sv::ffd_field<double>, the tile-structured
// double field (within a few double ulp of ffd_field_reference, test_core Ffd*).
TEST(CudaFfd, LargeImageWholeTilesPerThread) {
  REQUIRE_CUDA();
  const Shape image = {64, 250, 509};
  const std::vector<int> delta = {3, 2, 2};
  const sv::ArrayF grid = random_grid(image, delta, 51);
  const sv::Array<double> ref = sv::ffd_field<double>(to_double(grid), delta, image);
  const double cmax = max_abs(grid);
  for (FfdKernel k :
       {FfdKernel::PerVoxel, FfdKernel::ThreadPerTileLerp, FfdKernel::ThreadPerTileFma}) {
    const Errors e = errors(cu::ffd_field(grid, delta, image, k), ref);
    std::printf("  %-10s max %.2f eps max|c|\n", cu::ffd_kernel_name(k), e.max / (kEps * cmax));
    EXPECT_LE(e.max, 8 * kEps * cmax) << cu::ffd_kernel_name(k);
  }
}

TEST(CudaFfd, EverySpacingTwoToEightPerAxis) {
  REQUIRE_CUDA();
  // Each delta 2..8 appears on every axis, with the other axes at other spacings.
  for (int d = 2; d <= 8; ++d)
    check_case({29, 31, 33}, {d, (d + 2) % 7 + 2, (d + 5) % 7 + 2}, static_cast<std::uint32_t>(d));
}

TEST(CudaFfd, FreshRandomGrid) {
  REQUIRE_CUDA();
  const std::uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dd(2, 8), nn(9, 60);
  const std::vector<int> delta = {dd(rng), dd(rng), dd(rng)};
  const Shape image = {static_cast<std::size_t>(nn(rng)), static_cast<std::size_t>(nn(rng)),
                       static_cast<std::size_t>(nn(rng))};
  check_case(image, delta, seed);
}

TEST(CudaFfd, SpacingOneOnPerVoxelAndTiles) {
  REQUIRE_CUDA();
  const Shape image = {17, 19, 23};
  const std::vector<int> delta = {1, 1, 1};
  const sv::ArrayF grid = random_grid(image, delta, 11);
  const sv::Array<double> ref = sv::ffd_field_reference(to_double(grid), delta, image);
  for (FfdKernel k :
       {FfdKernel::PerVoxel, FfdKernel::ThreadPerTileLerp, FfdKernel::ThreadPerTileFma}) {
    const Errors e = errors(cu::ffd_field(grid, delta, image, k), ref);
    EXPECT_LE(e.max, 8 * kEps * max_abs(grid)) << cu::ffd_kernel_name(k);
  }
}

TEST(CudaFfd, WritesEveryVoxelAndNothingBeyond) {
  REQUIRE_CUDA();
  const Shape image = {13, 22, 41};  // 41 = 5 tiles of 8 + 1 along x
  const std::vector<int> delta = {3, 6, 8};
  const sv::ArrayF grid = random_grid(image, delta, 21);
  cu::DeviceBuffer points(grid.size());
  points.upload(grid.data(), grid.size());
  cu::FfdGrid g;
  g.points = points.data();
  g.dims = grid.dims();
  g.delta = delta;
  g.image_shape = image;
  const std::size_t n = image[0] * image[1] * image[2] * 3, guard = 4096;
  cu::DeviceBuffer out(n + guard);
  cu::FfdEvaluator evaluator(g);
  for (FfdKernel k : cu::kFfdKernels) {
    SCOPED_TRACE(cu::ffd_kernel_name(k));
    out.fill(std::numeric_limits<float>::quiet_NaN());
    evaluator.run(k, out.data());
    cu::synchronize("test");
    std::vector<float> host(n + guard);
    out.download(host.data(), host.size());
    std::size_t unwritten = 0, overwritten = 0;
    for (std::size_t i = 0; i < n; ++i) unwritten += std::isnan(host[i]) ? 1 : 0;
    for (std::size_t i = n; i < n + guard; ++i) overwritten += std::isnan(host[i]) ? 0 : 1;
    EXPECT_EQ(unwritten, 0u);
    EXPECT_EQ(overwritten, 0u);
  }
}

TEST(CudaFfd, LerpFormReproducesAConstantFieldExactly) {
  REQUIRE_CUDA();
  const Shape image = {20, 21, 22};
  const std::vector<int> delta = {4, 5, 7};
  sv::ArrayF grid(sv::ffd_grid_shape(image, delta), 3);
  const float c[3] = {0.3f, -1.7f, 12.5f};
  for (std::size_t i = 0; i < grid.size(); ++i) grid[i] = c[i % 3];
  const sv::ArrayF u = cu::ffd_field(grid, delta, image, FfdKernel::ThreadPerTileLerp);
  std::size_t off = 0;
  for (std::size_t i = 0; i < u.size(); ++i) off += u[i] == c[i % 3] ? 0 : 1;
  EXPECT_EQ(off, 0u);
}

TEST(CudaFfd, EvaluatorTextureFollowsRefresh) {
  REQUIRE_CUDA();
  const Shape image = {20, 21, 22};
  const std::vector<int> delta = {4, 5, 6};
  sv::ArrayF grid = random_grid(image, delta, 31);
  cu::DeviceBuffer points(grid.size());
  points.upload(grid.data(), grid.size());
  cu::FfdGrid g{points.data(), grid.dims(), delta, image};
  cu::FfdEvaluator evaluator(g);
  cu::DeviceBuffer out(image[0] * image[1] * image[2] * 3);
  std::vector<float> first(out.size()), second(out.size());
  evaluator.run(FfdKernel::Texture, out.data());
  cu::synchronize("test");
  out.download(first.data(), first.size());
  // A new grid in the same memory: the texture shows it only after refresh_texture().
  for (std::size_t i = 0; i < grid.size(); ++i) grid[i] = -2 * grid[i];
  points.upload(grid.data(), grid.size());
  evaluator.run(FfdKernel::Texture, out.data());
  cu::synchronize("test");
  out.download(second.data(), second.size());
  EXPECT_EQ(first, second);
  evaluator.refresh_texture();
  evaluator.run(FfdKernel::Texture, out.data());
  cu::synchronize("test");
  out.download(second.data(), second.size());
  const sv::Array<double> ref = sv::ffd_field_reference(to_double(grid), delta, image);
  double worst = 0;
  for (std::size_t i = 0; i < second.size(); ++i)
    worst = std::max(worst, std::fabs(second[i] - ref[i]));
  EXPECT_LE(worst, (6.0 / 256.0 + 8 * kEps) * max_abs(grid));
}

// 2-D grids: (M_y, M_x, 2) -> (N_y, N_x, 2), the same bounds with two axes (texture: 4/256).
TEST(CudaFfd, TwoDimensionalGrids) {
  REQUIRE_CUDA();
  struct Case {
    Shape image;
    std::vector<int> delta;
  };
  const Case cases[] = {{{61, 43}, {5, 5}}, {{43, 61}, {3, 8}}, {{500, 700}, {2, 7}},
                        {{37, 29}, {8, 2}}, {{17, 23}, {1, 1}}, {{1000, 1200}, {6, 4}},
                        {{9, 300}, {4, 6}}};
  std::uint32_t seed = 61;
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.image[0]) + "x" + std::to_string(c.image[1]) + " delta " +
                 std::to_string(c.delta[0]) + "," + std::to_string(c.delta[1]));
    sv::ArrayF grid(sv::ffd_grid_shape(c.image, c.delta), 2);
    std::mt19937 rng(seed++);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (std::size_t i = 0; i < grid.size(); ++i) grid[i] = u(rng);
    const sv::Array<double> ref = sv::ffd_field_reference(to_double(grid), c.delta, c.image);
    const double cmax = max_abs(grid);
    double worst_precise = 0, texture = 0;
    for (FfdKernel k : cu::kFfdKernels) {
      const sv::ArrayF field = cu::ffd_field(grid, c.delta, c.image, k);
      ASSERT_EQ(field.channels(), 2u);
      const Errors e = errors(field, ref);
      std::printf("  2-D %zux%zu %-10s max %.2f eps max|c|\n", c.image[0], c.image[1],
                  cu::ffd_kernel_name(k), e.max / (kEps * cmax));
      if (k == FfdKernel::Texture) {
        texture = e.max;
        EXPECT_LE(e.max, (4.0 / 256.0 + 8 * kEps) * cmax);
      } else {
        worst_precise = std::max(worst_precise, e.max);
        EXPECT_LE(e.max, 8 * kEps * cmax) << cu::ffd_kernel_name(k);
      }
    }
    EXPECT_GT(texture, 100 * worst_precise) << "texture hardware should show its 8-bit seams";
  }
}

// ---- argument checks (no device needed: they come before any CUDA call) ----

template <class F>
void expect_error(F&& f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no sv::Error (expected one containing '" << part << "')";
  } catch (const sv::Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(CudaFfdArguments, BadArgumentsThrowWithASentence) {
  const Shape image = {20, 21, 22};
  const std::vector<int> delta = {4, 5, 6};
  const sv::ArrayF grid = random_grid(image, delta, 41);
  static float dummy[3];
  cu::FfdGrid g{dummy, grid.dims(), delta, image};
  float* out = dummy;

  // Too few control points along an axis.
  cu::FfdGrid few = g;
  few.dims[1] -= 1;
  expect_error([&] { cu::ffd_field(few, FfdKernel::PerVoxel, out); }, "needs at least");
  // Spacing 0, and beyond the tile kernels' 8.
  cu::FfdGrid zero = g;
  zero.delta[2] = 0;
  expect_error([&] { cu::ffd_field(zero, FfdKernel::ThreadPerTileFma, out); }, "at least 1 voxel");
  cu::FfdGrid wide = g;
  wide.delta = {4, 5, 9};
  wide.dims = sv::ffd_grid_shape(image, wide.delta);
  expect_error([&] { cu::ffd_field(wide, FfdKernel::ThreadPerTileLerp, out); }, "spacings 1..8");
  // Null pointers.
  cu::FfdGrid null_points = g;
  null_points.points = nullptr;
  expect_error([&] { cu::ffd_field(null_points, FfdKernel::Texture, out); }, "pointer is null");
  expect_error([&] { cu::ffd_field(g, FfdKernel::PerVoxel, nullptr); }, "pointer is null");
  // Ranks that disagree, a 2-D grid with too few points, a 1-D grid.
  cu::FfdGrid mixed{dummy, {8, 9}, {4, 4, 4}, {20, 21}};
  expect_error([&] { cu::ffd_field(mixed, FfdKernel::PerVoxel, out); }, "spacing needs 2");
  cu::FfdGrid flat{dummy, {8, 8}, {4, 4}, {20, 21}};
  expect_error([&] { cu::ffd_field(flat, FfdKernel::ThreadPerTileFma, out); }, "needs at least 9");
  cu::FfdGrid line{dummy, {8}, {4}, {20}};
  expect_error([&] { cu::ffd_field(line, FfdKernel::PerVoxel, out); }, "3 extents");
  // The host convenience: the core's checks (too few points, spacing) with its sentences.
  expect_error(
      [&] {
        cu::ffd_field(grid, delta, {40, 21, 22}, FfdKernel::PerVoxel);
      },
      "needs at least");
  expect_error(
      [&] {
        cu::ffd_field(grid, {4, 0, 6}, image, FfdKernel::PerVoxel);
      },
      "at least 1 voxel");
  expect_error([] { cu::parse_ffd_kernel("bicubic"); }, "unknown FFD kernel");
  EXPECT_EQ(cu::parse_ffd_kernel("tile-lerp"), FfdKernel::ThreadPerTileLerp);
}

}  // namespace
