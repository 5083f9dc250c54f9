// Tests of the CUDA reconstruction kernels against the CPU double reference: sv::sample on the
// same float coefficients at the same float positions (positions rounded to float first).
//  - random coefficients, positions uniform in [-3, N+2] on every axis (beyond every edge), every
//    boundary mode, 1-D / 2-D / 3-D, 1..4 channels, axes of size 1 and 2, prime sizes;
//  - precise within a fixed fraction of the data range (float arithmetic only);
//  - cubic and linear within a bound derived from the hardware filter precision, which the test
//    measures itself (slope-1 ramps read with linear fetches at fine steps), so the bound is tight
//    on exact hardware and honest on NVIDIA's 8-bit filter weights;
//  - nearest exactly;
//  - constants come back, every output value is written (NaN-poisoned buffer, guard after it),
//    the host convenience equals the device path, bad input throws sv::Error.
// Data and positions are fresh random on every run; failures print the seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "../common/error_stats.h"
#include "splineview/cuda_device.h"
#include "splineview/cuda_memory.h"
#include "splineview/cuda_reconstruct.h"
#include "splineview/error.h"
#include "splineview/sampler.h"

namespace {

using sv::Boundary;
using sv::cuda::Fetch;

const std::vector<Boundary> kBoundaries = {Boundary::Reflect, Boundary::Mirror, Boundary::Periodic};
const std::vector<Fetch> kFetches = {Fetch::Nearest, Fetch::Linear, Fetch::Cubic, Fetch::Precise};

// Small and odd shapes: size-1 and size-2 axes, primes (31, 37, 13, 17, ...). Each case gets
// 1..4 channels, rotated with the boundary mode so every shape meets three channel counts.
const std::vector<std::vector<std::size_t>>& shapes(std::size_t rank) {
  static const std::vector<std::vector<std::size_t>> one = {{1}, {2}, {3}, {7}, {31}, {64}};
  static const std::vector<std::vector<std::size_t>> two = {{1, 1},   {1, 7},   {2, 5},  {6, 2},
                                                            {13, 11}, {23, 37}, {17, 1}, {31, 29}};
  static const std::vector<std::vector<std::size_t>> three = {
      {1, 1, 1}, {1, 3, 4}, {2, 2, 2}, {5, 1, 6}, {6, 7, 5}, {9, 4, 11}, {3, 2, 9}, {12, 13, 17}};
  return rank == 1 ? one : rank == 2 ? two : three;
}

int degree_of(Fetch f) {
  switch (f) {
    case Fetch::Nearest:
      return 0;
    case Fetch::Linear:
      return 1;
    default:
      return 3;
  }
}

std::uint32_t fresh_seed() {
  static std::uint32_t s = std::random_device{}();
  return s++;
}

sv::ArrayF random_array(const std::vector<std::size_t>& dims, std::size_t channels,
                        std::uint32_t seed) {
  sv::ArrayF a(dims, channels);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = u(rng);
  // The data range is exactly [0, 1] (tiny arrays would otherwise have a tiny range, against
  // which the float arithmetic's error on max|c| looks large).
  if (a.size() >= 2) {
    a[static_cast<std::size_t>(rng() % ((a.size() + 1) / 2))] = 0.0f;  // lower half, 1 upper
    a[a.size() - 1 - static_cast<std::size_t>(rng() % (a.size() / 2))] = 1.0f;
  }
  return a;
}

// m positions, uniform in [-3, N+2] per axis, rounded to float.
std::vector<float> random_positions(const std::vector<std::size_t>& dims, std::size_t m,
                                    std::uint32_t seed) {
  std::mt19937 rng(seed ^ 0x9e3779b9u);
  std::vector<float> p(m * dims.size());
  for (std::size_t d = 0; d < dims.size(); ++d) {
    std::uniform_real_distribution<double> u(-3.0, static_cast<double>(dims[d]) + 2.0);
    for (std::size_t i = 0; i < m; ++i) p[i * dims.size() + d] = static_cast<float>(u(rng));
  }
  return p;
}

std::vector<double> reference(const sv::ArrayF& c, const std::vector<float>& positions, int degree,
                              Boundary b) {
  sv::SamplerOptions opt;
  opt.degree = degree;
  opt.boundary = b;
  return sv::sample(c, std::vector<double>(positions.begin(), positions.end()), opt);
}

// The volume's values at `positions` for `fetch`, read back from a NaN-poisoned buffer.
std::vector<float> gpu_sample(const sv::cuda::SplineVolume& v, Fetch fetch,
                              const std::vector<float>& positions) {
  const std::size_t rank = v.layout().rank();
  const std::size_t m = positions.size() / rank;
  sv::cuda::DeviceBuffer pos(positions.size());
  pos.upload(positions.data(), positions.size());
  sv::cuda::DeviceBuffer out(m * v.layout().channels);
  out.fill(std::numeric_limits<float>::quiet_NaN());
  v.sample(fetch, pos.data(), m, out.data());
  sv::cuda::synchronize("test");
  std::vector<float> host(out.size());
  out.download(host.data(), host.size());
  return host;
}

using svtest::max_abs;
using svtest::max_abs_difference;
using svtest::value_range;

// Float arithmetic of the kernels (weights, fma blends; the reference is exact by comparison)
// in units of 2^-24 max|c|: 4 per axis. Measured for precise on the H100: at most 2.2 units in
// 1-D, 4 in 2-D and 3-D (1.31e-7, 2.38e-7, 2.38e-7 of the data range over 66 random cases per
// rank, every run alike); a host emulation of the same float arithmetic gives 2.3 / 3.2 / 3.0.
double arith(std::size_t rank) {
  return 4.0 * static_cast<double>(rank) * 5.960464477539063e-08;
}

// The precise fetch's target is 1e-6 of the data range (issue 4); held to about twice what the
// H100 measured (2.4e-7 at most, see arith).
double precise_cap(std::size_t) {
  return 5e-7;
}

// Position error of the hardware filter, in texels: slope-1 tents min(k, N - k) along each axis
// of 1-D, 2-D and 3-D arrays (constant along the others), read with linear fetches at steps of
// 1/1024 texel over [-3, N+2] on that axis (random on the others), every boundary mode, against the
// reference's linear interpolation. With slope at most 1 the difference is the error of the
// filter's fraction. The error changes by at most one texel per texel of position, so the true
// maximum is within half a probe step of the probed one; that half step is added.
double filter_precision() {
  static double cached = -1;
  if (cached >= 0) return cached;
  const double step = 1.0 / 1024;
  double worst = 0;
  const std::vector<std::vector<std::size_t>> probe = {{40}, {5, 40}, {3, 4, 40}};
  for (const std::vector<std::size_t>& base : probe) {
    const std::size_t rank = base.size();
    for (std::size_t axis = 0; axis < rank; ++axis) {
      std::vector<std::size_t> dims(rank, 3);
      dims[axis] = base.back();
      sv::ArrayF ramp(dims);
      std::size_t inner = 1;
      for (std::size_t d = axis + 1; d < rank; ++d) inner *= dims[d];
      for (std::size_t i = 0; i < ramp.size(); ++i) {
        const std::size_t k = (i / inner) % dims[axis];
        ramp[i] = static_cast<float>(std::min(k, dims[axis] - k));
      }
      const double n = static_cast<double>(dims[axis]);
      const std::size_t m = static_cast<std::size_t>((n + 5.0) / step);
      std::vector<float> p = random_positions(dims, m, static_cast<std::uint32_t>(rank * 3 + axis));
      for (std::size_t i = 0; i < m; ++i)
        p[i * rank + axis] = static_cast<float>(-3.0 + static_cast<double>(i) * step);  // exact
      for (Boundary b : kBoundaries) {
        const sv::cuda::SplineVolume v(ramp, b);
        worst = std::max(
            worst, max_abs_difference(gpu_sample(v, Fetch::Linear, p), reference(ramp, p, 1, b)));
      }
    }
  }
  cached = worst + step / 2;
  std::printf(
      "measured filter precision: %.4g texels (2^%.2f; probed %.4g + half a probe step; slope-1 "
      "tents along each axis of 1-D, 2-D and 3-D arrays, every boundary mode, positions in "
      "[-3, N+2] at 1/1024 texel steps)\n",
      cached, std::log2(cached), worst);
  return cached;
}

struct Measured {
  double error = 0, bound = 0;
  int cases = 0;
};

void print_table(const char* title, const std::map<std::string, Measured>& table) {
  std::printf("%s\n  %-22s %11s %11s %6s\n", title, "case", "measured", "bound", "cases");
  for (const auto& [key, e] : table)
    std::printf("  %-22s %11.3g %11.3g %6d\n", key.c_str(), e.error, e.bound, e.cases);
}

// Every shape of every rank and every boundary mode for `fetch`; errors relative to the data
// range against the bound of that fetch:
//   nearest  0 (the same texel)
//   linear   rank * hw * cr + arith(rank) * cmax
//   cubic    rank * hw * cr + arith(rank) * cmax (per axis two lerps, each off by at most hw
//            times the difference of its two coefficients, blended with weights summing to 1)
//   precise  arith(rank) * cmax, capped at precise_cap(rank)
// with hw the measured filter precision, cr the coefficient range, cmax max |c|.
void check_fetch(Fetch fetch) {
  const double hw = (fetch == Fetch::Linear || fetch == Fetch::Cubic) ? filter_precision() : 0.0;
  std::map<std::string, Measured> table;
  for (std::size_t rank = 1; rank <= 3; ++rank) {
    const std::vector<std::vector<std::size_t>>& list = shapes(rank);
    for (std::size_t s = 0; s < list.size(); ++s) {
      for (std::size_t bi = 0; bi < kBoundaries.size(); ++bi) {
        const Boundary b = kBoundaries[bi];
        const std::size_t channels = 1 + (s + bi) % 4;
        const std::uint32_t seed = fresh_seed();
        SCOPED_TRACE(std::string(sv::cuda::fetch_name(fetch)) + " " + sv::boundary_name(b) + " " +
                     sv::describe_shape(list[s], channels) + " seed " + std::to_string(seed));
        const sv::ArrayF c = random_array(list[s], channels, seed);
        const std::vector<float> pos = random_positions(list[s], 3000, seed);
        const sv::cuda::SplineVolume v(c, b);
        const std::vector<float> gpu = gpu_sample(v, fetch, pos);
        const std::vector<double> ref = reference(c, pos, degree_of(fetch), b);
        const double range = value_range(c);
        const double error = max_abs_difference(gpu, ref) / range;
        const double r = static_cast<double>(rank);
        double bound = 0;
        if (fetch == Fetch::Linear || fetch == Fetch::Cubic)
          bound = (r * hw * value_range(c) + arith(rank) * max_abs(c)) / range;
        if (fetch == Fetch::Precise)
          bound = std::min(arith(rank) * max_abs(c) / range, precise_cap(rank));
        if (fetch == Fetch::Nearest) {
          EXPECT_EQ(error, 0.0);
        } else {
          EXPECT_LE(error, bound);
        }
        Measured& e = table[std::to_string(rank) + "-D " + sv::boundary_name(b)];
        e.error = std::max(e.error, error);
        e.bound = std::max(e.bound, bound);
        ++e.cases;
      }
    }
  }
  print_table(
      (std::string("max |CUDA ") + sv::cuda::fetch_name(fetch) + " - CPU reference| / data range:")
          .c_str(),
      table);
}

TEST(CudaReconstruct, FilterPrecisionIsMeasured) {
  std::string why;
  if (!sv::cuda::available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  const double hw = filter_precision();
  // Any texture unit: at worst NVIDIA's 8 fractional weight bits (2^-9) plus coordinate rounding.
  EXPECT_LT(hw, 1.0 / 128);
  EXPECT_GT(hw, 0.0);
}

TEST(CudaReconstruct, PreciseMatchesTheReference) {
  std::string why;
  if (!sv::cuda::available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  check_fetch(Fetch::Precise);
}

TEST(CudaReconstruct, CubicMatchesTheReferenceWithinTheFilterPrecision) {
  std::string why;
  if (!sv::cuda::available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  check_fetch(Fetch::Cubic);
}

TEST(CudaReconstruct, LinearMatchesTheReferenceWithinTheFilterPrecision) {
  std::string why;
  if (!sv::cuda::available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  check_fetch(Fetch::Linear);
}

TEST(CudaReconstruct, NearestIsExact) {
  std::string why;
  if (!sv::cuda::available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  check_fetch(Fetch::Nearest);
}

TEST(CudaReconstruct, NearestRoundsHalfwayUpLikeTheReference) {
  std::string why;
  if (!sv::cuda::available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  // x + 0.5 rounds up in float for the float just below 0.5 (and such values near other
  // half-integers); the reference decides in double.
  const sv::ArrayF c = random_array({9}, 1, fresh_seed());
  std::vector<float> pos;
  for (float base : {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 4.5f, 8.5f, 10.5f}) {
    pos.push_back(base);
    pos.push_back(std::nextafter(base, -100.0f));
    pos.push_back(std::nextafter(base, 100.0f));
  }
  for (Boundary b : kBoundaries) {
    SCOPED_TRACE(sv::boundary_name(b));
    const sv::cuda::SplineVolume v(c, b);
    EXPECT_EQ(max_abs_difference(gpu_sample(v, Fetch::Nearest, pos), reference(c, pos, 0, b)), 0.0);
  }
}

TEST(CudaReconstruct, PreciseIsTheSameForCoherentAndScatteredPositions) {
  std::string why;
  if (!sv::cuda::available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  // Positions along oblique lines a small step apart, crossing the volume and its borders: each
  // warp's 32 positions need a small box of coefficients (the shared-memory path). The same
  // positions shuffled scatter every warp over the volume (the per-thread texture path). Both
  // must give the same bits, and match the reference.
  const std::vector<std::size_t> dims = {11, 20, 23};
  for (std::size_t channels = 1; channels <= 4; ++channels) {
    for (Boundary b : kBoundaries) {
      const std::uint32_t seed = fresh_seed();
      SCOPED_TRACE(std::string(sv::boundary_name(b)) + " " + sv::describe_shape(dims, channels) +
                   " seed " + std::to_string(seed));
      const sv::ArrayF c = random_array(dims, channels, seed);
      std::mt19937 rng(seed);
      std::uniform_real_distribution<double> start(-3.0, 2.0), dir(0.2, 1.0);
      const std::size_t per_line = 2048, lines = 8, m = per_line * lines;
      std::vector<float> line(m * 3);
      for (std::size_t l = 0; l < lines; ++l) {
        double p0[3], v[3], len = 0;
        for (int d = 0; d < 3; ++d) {
          p0[d] = start(rng);
          v[d] = dir(rng);
          len = std::max(len, v[d] / (static_cast<double>(dims[d]) + 4.0));
        }
        // Step so that the line ends beyond the far border on its fastest axis.
        const double step = 1.0 / (len * static_cast<double>(per_line));
        for (std::size_t j = 0; j < per_line; ++j)
          for (int d = 0; d < 3; ++d)
            line[((l * per_line) + j) * 3 + d] =
                static_cast<float>(p0[d] + v[d] * step * static_cast<double>(j));
      }
      std::vector<std::size_t> perm(m);
      for (std::size_t j = 0; j < m; ++j) perm[j] = j;
      std::shuffle(perm.begin(), perm.end(), rng);
      std::vector<float> shuffled(m * 3);
      for (std::size_t j = 0; j < m; ++j)
        for (int d = 0; d < 3; ++d) shuffled[j * 3 + d] = line[perm[j] * 3 + d];
      const sv::cuda::SplineVolume v(c, b);
      const std::vector<float> a = gpu_sample(v, Fetch::Precise, line);
      const std::vector<float> s = gpu_sample(v, Fetch::Precise, shuffled);
      std::size_t differ = 0;
      for (std::size_t j = 0; j < m; ++j)
        for (std::size_t ch = 0; ch < channels; ++ch)
          differ += s[j * channels + ch] == a[perm[j] * channels + ch] ? 0 : 1;
      EXPECT_EQ(differ, 0u);
      EXPECT_LE(max_abs_difference(a, reference(c, line, 3, b)) / value_range(c),
                arith(3) * max_abs(c) / value_range(c));
    }
  }
}

TEST(CudaReconstruct, ConstantsComeBack) {
  std::string why;
  if (!sv::cuda::available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  // Nearest, linear and cubic blend equal values with weights that sum to exactly 1 (lerps), so
  // the constant comes back exactly from exact hardware; precise sums 4^rank products and may be
  // off by its float arithmetic. The largest deviation is printed.
  const float value = 0.7310586f;
  for (std::size_t rank = 1; rank <= 3; ++rank) {
    const std::vector<std::size_t>& dims = shapes(rank).back();
    sv::ArrayF c(dims, 2);
    std::fill(c.vec().begin(), c.vec().end(), value);
    const std::vector<float> pos = random_positions(dims, 4000, fresh_seed());
    for (Boundary b : kBoundaries) {
      const sv::cuda::SplineVolume v(c, b);
      for (Fetch f : kFetches) {
        SCOPED_TRACE(std::to_string(rank) + "-D " + sv::boundary_name(b) + " " +
                     sv::cuda::fetch_name(f));
        double worst = 0;
        for (float g : gpu_sample(v, f, pos)) {
          const double d = std::fabs(static_cast<double>(g) - value);
          if (!(d <= worst)) worst = d;
        }
        const double allowed = f == Fetch::Precise ? arith(rank) * value : 4 * 5.96e-8 * value;
        EXPECT_LE(worst, allowed);
        if (worst > 0)
          std::printf("constant %g, %zu-D %s %s: off by %.3g\n", value, rank, sv::boundary_name(b),
                      sv::cuda::fetch_name(f), worst);
      }
    }
  }
}

TEST(CudaReconstruct, EveryOutputIsWrittenAndNothingBeyond) {
  std::string why;
  if (!sv::cuda::available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  // m is not a multiple of the block size; the buffer has a NaN guard after m * channels values.
  const std::size_t m = 100003, guard = 64;
  for (std::size_t channels = 1; channels <= 4; ++channels) {
    const sv::ArrayF c = random_array({7, 5, 6}, channels, fresh_seed());
    const std::vector<float> pos = random_positions(c.dims(), m, fresh_seed());
    sv::cuda::DeviceBuffer dpos(pos.size());
    dpos.upload(pos.data(), pos.size());
    const sv::cuda::SplineVolume v(c, Boundary::Mirror);
    for (Fetch f : kFetches) {
      SCOPED_TRACE(std::string(sv::cuda::fetch_name(f)) + " channels " + std::to_string(channels));
      sv::cuda::DeviceBuffer out(m * channels + guard);
      out.fill(std::numeric_limits<float>::quiet_NaN());
      v.sample(f, dpos.data(), m, out.data());
      sv::cuda::synchronize("test");
      std::vector<float> host(out.size());
      out.download(host.data(), host.size());
      std::size_t nan = 0, written_guard = 0;
      for (std::size_t i = 0; i < m * channels; ++i) nan += std::isnan(host[i]) ? 1 : 0;
      for (std::size_t i = m * channels; i < host.size(); ++i)
        written_guard += std::isnan(host[i]) ? 0 : 1;
      EXPECT_EQ(nan, 0u);
      EXPECT_EQ(written_guard, 0u);
    }
  }
}

TEST(CudaReconstruct, HostConvenienceEqualsTheDevicePath) {
  std::string why;
  if (!sv::cuda::available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  const sv::ArrayF c = random_array({6, 9, 4}, 3, fresh_seed());
  const std::vector<float> pf = random_positions(c.dims(), 777, fresh_seed());
  const std::vector<double> pd(pf.begin(), pf.end());
  const sv::cuda::SplineVolume v(c, Boundary::Periodic);
  for (Fetch f : kFetches) {
    SCOPED_TRACE(sv::cuda::fetch_name(f));
    std::vector<double> out(777 * 3);
    sv::cuda::sample(c, Boundary::Periodic, f, pd, out.data());
    const std::vector<float> direct = gpu_sample(v, f, pf);
    ASSERT_EQ(direct.size(), out.size());
    for (std::size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], direct[i]) << i;
  }
  // No positions: nothing to do, nothing written.
  sv::cuda::sample(c, Boundary::Reflect, Fetch::Cubic, {}, nullptr);
  // Constructed from device memory: the same values as from the host.
  sv::cuda::DeviceBuffer dc(c.size());
  dc.upload(c.data(), c.size());
  const sv::cuda::SplineVolume vd(dc.data(), sv::cuda::Layout::of(c), Boundary::Periodic);
  EXPECT_EQ(vd.layout().dims, c.dims());
  EXPECT_EQ(vd.layout().channels, 3u);
  EXPECT_EQ(vd.boundary(), Boundary::Periodic);
  for (Fetch f : kFetches) {
    SCOPED_TRACE(sv::cuda::fetch_name(f));
    EXPECT_EQ(gpu_sample(vd, f, pf), gpu_sample(v, f, pf));
  }
}

TEST(CudaReconstruct, BadInputThrowsSvError) {
  // Layout checks come before any device is touched: these throw sv::Error with or without one
  // (a build without CUDA says so instead).
  const bool compiled = sv::cuda_compiled();
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const sv::Error& e) {
      return std::string(e.what());
    }
    return std::string("(no sv::Error)");
  };
  const std::string zero = message([] {
    sv::cuda::SplineVolume v(nullptr, sv::cuda::Layout{{4, 0}, 1}, Boundary::Reflect);
  });
  const std::string five = message([] {
    sv::cuda::SplineVolume v(nullptr, sv::cuda::Layout{{4, 4}, 5}, Boundary::Reflect);
  });
  const std::string empty =
      message([] { sv::cuda::SplineVolume v(sv::ArrayF{}, Boundary::Mirror); });
  std::printf("zero-size: %s\nfive channels: %s\nempty array: %s\n", zero.c_str(), five.c_str(),
              empty.c_str());
  EXPECT_NE(zero, "(no sv::Error)");
  EXPECT_NE(five, "(no sv::Error)");
  EXPECT_NE(empty, "(no sv::Error)");
  if (compiled) {
    EXPECT_NE(zero.find("zero-size"), std::string::npos) << zero;
    EXPECT_NE(five.find("5"), std::string::npos) << five;
  }

  std::string why;
  if (!sv::cuda::available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  const sv::ArrayF c = random_array({3, 4}, 1, 1);
  std::vector<double> out(10);
  EXPECT_THROW(sv::cuda::sample(c, Boundary::Reflect, Fetch::Cubic, {1.0, 2.0, 3.0}, out.data()),
               sv::Error);  // 3 coordinates in 2-D
  EXPECT_THROW(sv::cuda::sample(c, Boundary::Reflect, Fetch::Cubic,
                                {1.0, std::numeric_limits<double>::quiet_NaN()}, out.data()),
               sv::Error);
  const sv::cuda::SplineVolume v(c, Boundary::Reflect);
  EXPECT_THROW(v.sample(Fetch::Cubic, nullptr, 5, nullptr), sv::Error);
  EXPECT_THROW(v.sample(static_cast<Fetch>(17), nullptr, 5, nullptr), sv::Error);
  v.sample(Fetch::Cubic, nullptr, 0, nullptr);  // no positions: nothing happens
  // Far beyond any texture limit.
  sv::cuda::DeviceBuffer one(1);
  EXPECT_THROW(sv::cuda::SplineVolume(one.data(), sv::cuda::Layout{{std::size_t{1} << 30}, 1},
                                      Boundary::Reflect),
               sv::Error);
}

}  // namespace
