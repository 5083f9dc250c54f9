// sv::compare with non-finite values (NaN and infinities are counted per side, located, and
// never folded into the figures or called identical) and the finite.h helpers. The oracle is a
// plain re-computation of each figure over the finite pairs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "splineview/finite.h"
#include "splineview/metrics.h"
#include "test_util.h"

namespace {

using sv::ArrayD;
using sv::ArrayF;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

ArrayD ramp(std::vector<std::size_t> dims, std::size_t channels = 1) {
  ArrayD a(std::move(dims), channels);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = 0.01 * static_cast<double>(i);
  return a;
}

TEST(Metrics, FiniteArraysKeepTheirFigures) {
  ArrayD a = ramp({4, 5});
  ArrayD b = a;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] += 0.1;
  const sv::ErrorStats s = sv::compare(a, b);
  EXPECT_NEAR(s.max_abs, 0.1, 1e-15);
  EXPECT_NEAR(s.rms, 0.1, 1e-15);
  EXPECT_NEAR(s.psnr, 20.0, 1e-9);
  EXPECT_EQ(s.count, 20u);
  EXPECT_EQ(s.nonfinite_a + s.nonfinite_b + s.nonfinite_mismatch, 0u);
  EXPECT_FALSE(s.identical());
  const sv::ErrorStats same = sv::compare(a, a);
  EXPECT_TRUE(same.identical());
  EXPECT_EQ(same.psnr, kInf);
}

// Issue 12 item 1: a NaN in B made compare report max_abs 0 and an infinite PSNR ("identical"),
// or max_abs NaN when the NaN came last. Every position of the NaN: never identical, the
// finite pairs measured alone, the NaN counted and located.
TEST(Metrics, NaNOnOneSideIsCountedLocatedAndNeverIdentical) {
  const ArrayD a = ramp({3, 4});
  for (std::size_t at = 0; at < a.size(); ++at) {
    SCOPED_TRACE(at);
    ArrayD b = a;
    b[at] = kNaN;
    for (int swap = 0; swap < 2; ++swap) {
      const sv::ErrorStats s = swap ? sv::compare(b, a) : sv::compare(a, b);
      EXPECT_FALSE(s.identical());
      EXPECT_EQ(s.max_abs, 0.0);
      EXPECT_FALSE(std::isnan(s.max_abs));
      EXPECT_EQ(s.count, a.size() - 1);
      EXPECT_EQ(s.nonfinite_mismatch, 1u);
      EXPECT_EQ(s.psnr, -kInf);
      EXPECT_EQ(swap ? s.nonfinite_a : s.nonfinite_b, 1u);
      EXPECT_EQ(swap ? s.nonfinite_b : s.nonfinite_a, 0u);
      EXPECT_EQ(swap ? s.first_nonfinite_a : s.first_nonfinite_b, at);
    }
  }
}

TEST(Metrics, NaNEqualsNothingNotEvenNaN) {
  ArrayD a = ramp({6});
  a[2] = kNaN;
  const sv::ErrorStats s = sv::compare(a, a);
  EXPECT_FALSE(s.identical());
  EXPECT_EQ(s.nonfinite_b, 1u);
  EXPECT_EQ(s.nonfinite_a, 1u);
  EXPECT_EQ(s.nonfinite_mismatch, 1u);
  EXPECT_EQ(s.max_abs, 0.0);
  EXPECT_EQ(s.count, 5u);
}

TEST(Metrics, TheSameInfinityIsEqualOppositeOnesAreNot) {
  ArrayD a = ramp({2, 3});
  a[4] = kInf;
  ArrayD b = a;
  sv::ErrorStats s = sv::compare(a, b);
  EXPECT_TRUE(s.identical());
  EXPECT_EQ(s.nonfinite_a, 1u);
  EXPECT_EQ(s.nonfinite_b, 1u);
  EXPECT_EQ(s.first_nonfinite_a, 4u);
  EXPECT_EQ(s.nonfinite_mismatch, 0u);
  EXPECT_EQ(s.psnr, kInf);
  b[4] = -kInf;
  s = sv::compare(a, b);
  EXPECT_FALSE(s.identical());
  EXPECT_EQ(s.nonfinite_mismatch, 1u);
  b[4] = 1.0;  // inf against a finite value
  s = sv::compare(a, b);
  EXPECT_FALSE(s.identical());
  EXPECT_EQ(s.nonfinite_mismatch, 1u);
  EXPECT_EQ(s.nonfinite_b, 0u);
}

TEST(Metrics, FiniteFiguresMatchAnIndependentComputationOverTheFinitePairs) {
  const std::uint32_t seed = svtest::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937 rng(seed);
  const ArrayF a = svtest::random_array<float>({7, 9}, 3, seed);
  ArrayD b = svtest::random_array<double>({7, 9}, 3, seed + 1);
  ArrayF a2 = a;
  std::bernoulli_distribution pick(0.1);
  std::uniform_int_distribution<int> kind(0, 2);
  const double specials[] = {kNaN, kInf, -kInf};
  for (std::size_t i = 0; i < a2.size(); ++i) {
    if (pick(rng)) a2[i] = static_cast<float>(specials[kind(rng)]);
    if (pick(rng)) b[i] = specials[kind(rng)];
  }
  std::vector<unsigned char> mask(a2.points());
  for (auto& m : mask) m = pick(rng) ? 0 : 1;
  const sv::ErrorStats s = sv::compare(a2, b, mask, 2.0);
  double sse = 0, max_abs = 0;
  std::size_t count = 0, na = 0, nb = 0, mismatch = 0, first_a = 0, first_b = 0;
  for (std::size_t i = 0; i < a2.size(); ++i) {
    if (!mask[i / 3]) continue;
    const double x = a2[i], y = b[i];
    if (std::isfinite(x) && std::isfinite(y)) {
      sse += (x - y) * (x - y);
      max_abs = std::max(max_abs, std::abs(x - y));
      ++count;
      continue;
    }
    if (!std::isfinite(x) && na++ == 0) first_a = i;
    if (!std::isfinite(y) && nb++ == 0) first_b = i;
    const bool same_inf = std::isinf(x) && std::isinf(y) && (x > 0) == (y > 0);
    if (!same_inf) ++mismatch;
  }
  ASSERT_GT(na, 0u);
  ASSERT_GT(nb, 0u);
  EXPECT_EQ(s.count, count);
  EXPECT_EQ(s.nonfinite_a, na);
  EXPECT_EQ(s.nonfinite_b, nb);
  EXPECT_EQ(s.first_nonfinite_a, first_a);
  EXPECT_EQ(s.first_nonfinite_b, first_b);
  EXPECT_EQ(s.nonfinite_mismatch, mismatch);
  EXPECT_DOUBLE_EQ(s.sse, sse);
  EXPECT_EQ(s.max_abs, max_abs);
  EXPECT_DOUBLE_EQ(s.rms, std::sqrt(sse / static_cast<double>(count)));
  EXPECT_EQ(s.psnr, mismatch ? -kInf : 10 * std::log10(4.0 / (sse / static_cast<double>(count))));
}

TEST(Metrics, NonFiniteValuesOutsideTheMaskAreIgnored) {
  const ArrayD a = ramp({2, 2});
  ArrayD b = a;
  b[3] = kNaN;
  const sv::ErrorStats s = sv::compare(a, b, {1, 1, 1, 0});
  EXPECT_TRUE(s.identical());
  EXPECT_EQ(s.nonfinite_b, 0u);
  EXPECT_EQ(s.count, 3u);
}

TEST(Metrics, AllNonFiniteStillMeasuresWithoutDividingByZero) {
  ArrayD a({3}), b({3});
  for (std::size_t i = 0; i < 3; ++i) a[i] = b[i] = kNaN;
  const sv::ErrorStats s = sv::compare(a, b);
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.rms, 0.0);
  EXPECT_EQ(s.nonfinite_mismatch, 3u);
  EXPECT_FALSE(s.identical());
  EXPECT_THROW(sv::compare(a, b, {0, 0, 0}), sv::Error);
}

TEST(Finite, ScanCountsAndLocatesTheFirst) {
  ArrayF f({4, 5}, 2);
  EXPECT_EQ(sv::scan_nonfinite(f).count, 0u);
  f[13] = static_cast<float>(-kInf);
  f[31] = static_cast<float>(kNaN);
  f[39] = static_cast<float>(kInf);
  const sv::NonFinite nf = sv::scan_nonfinite(f);
  EXPECT_EQ(nf.count, 3u);
  EXPECT_EQ(nf.first, 13u);
  EXPECT_EQ(nf.first_value, -kInf);
  // Scalar 13 of a (4, 5) array with 2 channels: point 6 = (1, 1), channel 1.
  EXPECT_EQ(sv::unravel_index(f.dims(), 2, 13, true), (std::vector<std::size_t>{1, 1, 1}));
  EXPECT_EQ(sv::unravel_index(f.dims(), 2, 13, false), (std::vector<std::size_t>{1, 1}));
  EXPECT_EQ(sv::describe_nonfinite(nf, f.dims(), 2, true),
            "3 non-finite values (-inf at [1, 1, 1] first)");
  ArrayD d({3, 4, 5});
  d[59] = kNaN;
  const sv::NonFinite one = sv::scan_nonfinite(d);
  EXPECT_EQ(sv::describe_nonfinite(one, d.dims(), 1, false),
            "1 non-finite value (NaN at [2, 3, 4] first)");
}

}  // namespace
