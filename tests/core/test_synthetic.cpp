// Properties of the synthetic data (zone plate, resolution chart, Marschner-Lobb) measured on
// the arrays, with the expected values computed here independently; and the bundled volume.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "splineview/io.h"
#include "splineview/synthetic.h"

namespace {

using sv::ArrayF;
using sv::ChartFeature;
using sv::ChartRegion;

constexpr double kPi = 3.14159265358979323846;

// ---- zone plate ----

TEST(ZonePlate, RangeAndCentre) {
  const ArrayF z = sv::zone_plate(257, 301);
  ASSERT_EQ(z.dims(), (std::vector<std::size_t>{257, 301}));
  for (float v : z.vec()) {
    ASSERT_GE(v, 0.0f);
    ASSERT_LE(v, 1.0f);
  }
  EXPECT_FLOAT_EQ(z.at2(128, 150), 1.0f);  // the centre sample sits at r = 0
}

TEST(ZonePlate, RadiallySymmetric) {
  // Even and odd sizes: the centre is ((n-1)/2, (n-1)/2), so the eight reflections and quarter
  // turns about it map samples onto samples of the same radius.
  for (std::size_t n : {64u, 65u}) {
    const ArrayF z = sv::zone_plate(n, n);
    for (std::size_t y = 0; y < n; ++y)
      for (std::size_t x = 0; x < n; ++x) {
        const float v = z.at2(y, x);
        ASSERT_FLOAT_EQ(z.at2(x, y), v) << n << " " << y << " " << x;
        ASSERT_FLOAT_EQ(z.at2(n - 1 - y, x), v);
        ASSERT_FLOAT_EQ(z.at2(y, n - 1 - x), v);
      }
  }
  // Samples at the same distance but not related by those symmetries: offsets (0, 5) and
  // (3, 4) from the centre of an odd-sized plate.
  const ArrayF z = sv::zone_plate(101, 101);
  EXPECT_NEAR(z.at2(50, 55), z.at2(53, 54), 1e-6);
  EXPECT_NEAR(z.at2(50, 75), z.at2(65, 70), 1e-6);  // (0, 25) and (15, 20)
}

// Sign changes of v - 1/2 between consecutive samples along the centre row, x in [a, b).
int crossings(const ArrayF& z, std::size_t row, std::size_t a, std::size_t b) {
  int n = 0;
  for (std::size_t x = a; x + 1 < b; ++x)
    if ((z.at2(row, x) - 0.5f) * (z.at2(row, x + 1) - 0.5f) < 0) ++n;
  return n;
}

TEST(ZonePlate, LocalFrequencyGrowsLinearlyToNyquistAtTheEdge) {
  // Odd size: the centre row passes through the centre, and x - c is the radius. A signal of
  // local frequency f has 2 f sign changes per sample; in a window the count measures the mean
  // frequency there. Expected: f(r) = 0.5 r / R with R = n / 2.
  const std::size_t n = 513, c = 256;
  const double radius = static_cast<double>(n) / 2;
  const ArrayF z = sv::zone_plate(n, n);
  const std::size_t w = 32;
  for (std::size_t r0 = 16; r0 + w <= 256; r0 += w) {
    const double measured = crossings(z, c, c + r0, c + r0 + w + 1) / (2.0 * w);
    const double expected = 0.5 * (static_cast<double>(r0) + w / 2.0) / radius;
    EXPECT_NEAR(measured, expected, 1.0 / w) << "radius " << r0;
  }
  // The last 16 samples to the edge: nearly every pair of neighbours changes sign (Nyquist).
  const int last = crossings(z, c, n - 16, n);
  EXPECT_GE(last, 14);
  // Both halves of the row agree.
  EXPECT_EQ(crossings(z, c, 0, c + 1), crossings(z, c, c, n));
  // Half the edge frequency: half the sign changes over the same radius.
  const ArrayF h = sv::zone_plate(n, n, 0.25);
  EXPECT_NEAR(crossings(h, c, c, n), crossings(z, c, c, n) / 2.0, 1.0);
  // The closed form along the row, computed here.
  for (std::size_t x = 0; x < n; ++x) {
    const double r = static_cast<double>(x) - 256.0;
    ASSERT_NEAR(z.at2(c, x), 0.5 + 0.5 * std::cos(kPi * 0.5 / radius * r * r), 2e-6);
  }
}

TEST(ZonePlate, RejectsBadArguments) {
  EXPECT_THROW(sv::zone_plate(0, 4), sv::Error);
  EXPECT_THROW(sv::zone_plate(4, 4, 0.0), sv::Error);
  EXPECT_THROW(sv::zone_plate(4, 4, std::nan("")), sv::Error);
}

// ---- resolution chart ----

// Runs of equal values along a line: (value, length).
struct Segment {
  float value;
  std::size_t length;
};
template <class Get>
std::vector<Segment> runs(std::size_t n, Get get) {
  std::vector<Segment> out;
  for (std::size_t i = 0; i < n; ++i) {
    const float v = get(i);
    if (!out.empty() && out.back().value == v)
      ++out.back().length;
    else
      out.push_back({v, 1});
  }
  return out;
}

std::vector<const ChartRegion*> regions(ChartFeature f) {
  std::vector<const ChartRegion*> out;
  for (const ChartRegion& r : sv::resolution_chart_layout())
    if (r.feature == f) out.push_back(&r);
  return out;
}

TEST(ResolutionChart, LayoutFitsAndDoesNotOverlap) {
  const auto& l = sv::resolution_chart_layout();
  ASSERT_GE(l.size(), 20u);
  for (std::size_t i = 0; i < l.size(); ++i) {
    const ChartRegion& a = l[i];
    EXPECT_GE(a.y0, 1u);
    EXPECT_GE(a.x0, 1u);
    EXPECT_LT(a.y0 + a.height, sv::kChartSize);
    EXPECT_LT(a.x0 + a.width, sv::kChartSize);
    for (std::size_t j = i + 1; j < l.size(); ++j) {
      const ChartRegion& b = l[j];
      const bool apart = a.y0 + a.height <= b.y0 || b.y0 + b.height <= a.y0 ||
                         a.x0 + a.width <= b.x0 || b.x0 + b.width <= a.x0;
      EXPECT_TRUE(apart) << i << " (" << sv::chart_feature_name(a.feature) << ") and " << j;
    }
  }
}

TEST(ResolutionChart, RangeAndBackground) {
  const ArrayF c = sv::resolution_chart();
  ASSERT_EQ(c.dims(), (std::vector<std::size_t>{sv::kChartSize, sv::kChartSize}));
  for (float v : c.vec()) {
    ASSERT_GE(v, 0.0f);
    ASSERT_LE(v, 1.0f);
  }
  EXPECT_EQ(c.at2(0, 0), 0.5f);
  EXPECT_EQ(c.at2(511, 511), 0.5f);
}

TEST(ResolutionChart, LinePairsHaveTheirWidthsDownToNyquist) {
  const ArrayF c = sv::resolution_chart();
  std::vector<std::size_t> widths;
  for (ChartFeature f : {ChartFeature::VerticalBars, ChartFeature::HorizontalBars}) {
    const bool vertical = f == ChartFeature::VerticalBars;
    const auto rs = regions(f);
    ASSERT_EQ(rs.size(), 6u);
    for (const ChartRegion* r : rs) {
      SCOPED_TRACE(std::string(sv::chart_feature_name(f)) + " " + std::to_string(r->size));
      if (vertical) widths.push_back(r->size);
      // Every line across the bars, one sample of background included on both sides: grey,
      // then 5 line pairs (black first) of exactly `size` samples each, then grey.
      const std::size_t across = vertical ? r->height : r->width;
      const std::size_t along = (vertical ? r->width : r->height) + 2;
      for (std::size_t i = 0; i < across; ++i) {
        const auto rr = runs(along, [&](std::size_t k) {
          return vertical ? c.at2(r->y0 + i, r->x0 - 1 + k) : c.at2(r->y0 - 1 + k, r->x0 + i);
        });
        ASSERT_EQ(rr.size(), 12u) << "line " << i;
        EXPECT_EQ(rr.front().value, 0.5f);
        EXPECT_EQ(rr.back().value, 0.5f);
        for (std::size_t k = 1; k <= 10; ++k) {
          EXPECT_EQ(rr[k].value, k % 2 == 1 ? 0.0f : 1.0f);
          EXPECT_EQ(rr[k].length, r->size);
        }
      }
    }
  }
  EXPECT_EQ(widths, (std::vector<std::size_t>{8, 6, 4, 3, 2, 1}));
}

TEST(ResolutionChart, CheckersAlternateEverySquare) {
  const ArrayF c = sv::resolution_chart();
  const auto rs = regions(ChartFeature::Checker);
  ASSERT_EQ(rs.size(), 4u);
  EXPECT_EQ(rs.back()->size, 1u);
  for (const ChartRegion* r : rs) {
    const std::size_t s = r->size;
    for (std::size_t y = 0; y < r->height; ++y) {
      const auto rr = runs(r->width, [&](std::size_t k) { return c.at2(r->y0 + y, r->x0 + k); });
      ASSERT_EQ(rr.size(), r->width / s) << s;
      for (const Segment& run : rr) EXPECT_EQ(run.length, s);
      // The row starts black in even bands of squares, white in odd ones.
      EXPECT_EQ(rr.front().value, (y / s) % 2 == 0 ? 0.0f : 1.0f);
    }
  }
}

TEST(ResolutionChart, SlantedEdgesHaveOneEdgePerRowAtTheirAngle) {
  const ArrayF c = sv::resolution_chart();
  const auto rs = regions(ChartFeature::SlantedEdge);
  ASSERT_EQ(rs.size(), 2u);
  for (const ChartRegion* r : rs) {
    // Position of the first white sample per row; a least-squares slope of x against y.
    double sy = 0, sx = 0, syy = 0, sxy = 0;
    const double n = static_cast<double>(r->height);
    for (std::size_t y = 0; y < r->height; ++y) {
      const auto rr = runs(r->width, [&](std::size_t k) { return c.at2(r->y0 + y, r->x0 + k); });
      ASSERT_EQ(rr.size(), 2u) << "row " << y;
      ASSERT_EQ(rr[0].value, 0.0f);
      ASSERT_EQ(rr[1].value, 1.0f);
      const double yy = static_cast<double>(y), xx = static_cast<double>(rr[0].length);
      sy += yy;
      sx += xx;
      syy += yy * yy;
      sxy += xx * yy;
    }
    const double slope = (n * sxy - sx * sy) / (n * syy - sy * sy);
    EXPECT_NEAR(slope, -std::tan(r->angle_deg * kPi / 180), 0.02) << r->angle_deg;
  }
}

TEST(ResolutionChart, TextIsBinaryPixelBlocksWithKnownGlyphs) {
  const ArrayF c = sv::resolution_chart();
  const auto rs = regions(ChartFeature::Text);
  ASSERT_EQ(rs.size(), 3u);
  for (const ChartRegion* r : rs) {
    const std::size_t s = r->size;
    ASSERT_EQ(r->height, 7 * s);
    ASSERT_EQ(r->width, (6 * r->text.size() - 1) * s);
    std::size_t ink = 0;
    for (std::size_t y = 0; y < r->height; ++y)
      for (std::size_t x = 0; x < r->width; ++x) {
        const float v = c.at2(r->y0 + y, r->x0 + x);
        ASSERT_TRUE(v == 0.0f || v == 1.0f);
        // Each font pixel is an s x s block.
        ASSERT_EQ(v, c.at2(r->y0 + y / s * s, r->x0 + x / s * s));
        if (v == 0.0f) ++ink;
      }
    // Every character cell but spaces has ink; the gap column after it has none.
    for (std::size_t i = 0; i < r->text.size(); ++i) {
      std::size_t cell = 0;
      for (std::size_t y = 0; y < 7; ++y)
        for (std::size_t x = 0; x < 5; ++x)
          if (c.at2(r->y0 + y * s, r->x0 + (6 * i + x) * s) == 0.0f) ++cell;
      EXPECT_EQ(cell == 0, r->text[i] == ' ') << r->text << " [" << i << "]";
      if (i + 1 < r->text.size()) {
        for (std::size_t y = 0; y < 7; ++y)
          EXPECT_EQ(c.at2(r->y0 + y * s, r->x0 + (6 * i + 5) * s), 1.0f);
      }
    }
    EXPECT_GT(ink, r->height * r->width / 10);
  }
  // The first line starts with 'T': a full top row and a full middle column, nothing else.
  const ChartRegion* t = rs.front();
  ASSERT_EQ(t->text.front(), 'T');
  for (std::size_t y = 0; y < 7; ++y)
    for (std::size_t x = 0; x < 5; ++x)
      EXPECT_EQ(c.at2(t->y0 + y, t->x0 + x), (y == 0 || x == 2) ? 0.0f : 1.0f) << y << " " << x;
  // The third line, scale 3, starts with 'C': no ink in the corners of the 5x7 cell.
  const ChartRegion* big = rs.back();
  ASSERT_EQ(big->size, 3u);
  ASSERT_EQ(big->text.front(), 'C');
  EXPECT_EQ(c.at2(big->y0, big->x0), 1.0f);
  EXPECT_EQ(c.at2(big->y0 + 20, big->x0 + 14), 1.0f);
  EXPECT_EQ(c.at2(big->y0 + 9, big->x0 + 1), 0.0f);  // the left stroke
}

TEST(ResolutionChart, SiemensStarHasItsWedges) {
  const ArrayF c = sv::resolution_chart();
  const auto rs = regions(ChartFeature::SiemensStar);
  ASSERT_EQ(rs.size(), 1u);
  const ChartRegion& r = *rs[0];
  const double cy = static_cast<double>(r.y0) + (static_cast<double>(r.height) - 1) / 2;
  const double cx = static_cast<double>(r.x0) + (static_cast<double>(r.width) - 1) / 2;
  // Around a circle of radius 50 (wedges about 8.7 samples wide there), sampled finely at the
  // nearest sample: 2 transitions per wedge pair.
  for (double radius : {30.0, 50.0}) {
    int transitions = 0;
    const int steps = 4096;
    float prev = -1;
    for (int i = 0; i <= steps; ++i) {
      const double a = 2 * kPi * (i + 0.5) / steps;
      const auto y = static_cast<std::size_t>(std::lround(cy + radius * std::sin(a)));
      const auto x = static_cast<std::size_t>(std::lround(cx + radius * std::cos(a)));
      const float v = c.at2(y, x);
      ASSERT_TRUE(v == 0.0f || v == 1.0f);
      if (prev >= 0 && v != prev) ++transitions;
      prev = v;
    }
    EXPECT_EQ(transitions, static_cast<int>(2 * r.size)) << radius;
  }
  EXPECT_EQ(c.at2(r.y0, r.x0), 0.5f);  // corners outside the disc are background
}

TEST(ResolutionChart, ChirpReachesNyquist) {
  const ArrayF c = sv::resolution_chart();
  const auto rs = regions(ChartFeature::Chirp);
  ASSERT_EQ(rs.size(), 1u);
  const ChartRegion& r = *rs[0];
  const std::size_t row = r.y0 + r.height / 2;
  // Frequency f(u) = 0.5 u / L: the phase over the region is 0.25 L cycles, 0.5 L sign changes;
  // the first half of the width has a quarter of them.
  const double len = static_cast<double>(r.width - 1);
  int all = 0, first_half = 0;
  for (std::size_t x = 0; x + 1 < r.width; ++x) {
    const bool change = (c.at2(row, r.x0 + x) - 0.5f) * (c.at2(row, r.x0 + x + 1) - 0.5f) < 0;
    all += change;
    if (x + 1 <= r.width / 2) first_half += change;
  }
  EXPECT_NEAR(all, 0.5 * len, 2.0);
  EXPECT_NEAR(first_half, 0.125 * len, 2.0);
  // Constant along y.
  for (std::size_t y = r.y0; y < r.y0 + r.height; ++y)
    for (std::size_t x = r.x0; x < r.x0 + r.width; ++x) ASSERT_EQ(c.at2(y, x), c.at2(r.y0, x));
}

TEST(ResolutionChart, ThinLinesAreSingleSamples) {
  const ArrayF c = sv::resolution_chart();
  const auto rs = regions(ChartFeature::ThinLines);
  ASSERT_EQ(rs.size(), 1u);
  const ChartRegion& r = *rs[0];
  for (std::size_t y = r.y0; y < r.y0 + r.height; ++y) {
    const auto rr = runs(r.width, [&](std::size_t k) { return c.at2(y, r.x0 + k); });
    std::size_t lines = 0;
    for (const Segment& run : rr)
      if (run.value == 1.0f) {
        ++lines;
        EXPECT_EQ(run.length, 1u);
      } else {
        EXPECT_EQ(run.value, 0.0f);
      }
    EXPECT_EQ(lines, (r.width + r.size - 1) / r.size);
  }
}

// ---- Marschner-Lobb ----

// The closed form of Marschner & Lobb (1994), f_M = 6, alpha = 1/4, written out here.
double ml_reference(double x, double y, double z) {
  const double r = std::hypot(x, y);
  const double rho_r = std::cos(12 * kPi * std::cos(kPi * r / 2));
  return (1 - std::sin(kPi * z / 2) + 0.25 * (1 + rho_r)) / 2.5;
}

TEST(MarschnerLobb, MatchesTheClosedFormAtTheSampleCentres) {
  const std::size_t n = 41;
  const ArrayF v = sv::marschner_lobb(n);
  ASSERT_EQ(v.dims(), (std::vector<std::size_t>{n, n, n}));
  // Sample i sits at the centre of cell i of n cells covering [-1, 1].
  const auto at = [n](std::size_t i) {
    return (static_cast<double>(i) + 0.5) * 2 / static_cast<double>(n) - 1;
  };
  EXPECT_DOUBLE_EQ(at(20), 0.0);
  for (std::size_t z = 0; z < n; ++z)
    for (std::size_t y = 0; y < n; ++y)
      for (std::size_t x = 0; x < n; ++x)
        ASSERT_NEAR(v.at3(z, y, x), ml_reference(at(x), at(y), at(z)), 1e-6)
            << z << " " << y << " " << x;
  // The centre: r = 0, z = 0: (1 + 0.25 (1 + cos 12 pi)) / 2.5 = 0.6.
  EXPECT_NEAR(v.at3(20, 20, 20), 0.6, 1e-7);
  EXPECT_NEAR(sv::marschner_lobb_at(0, 0, 1), 0.2, 1e-15);   // sin = 1, rho_r = 1
  EXPECT_NEAR(sv::marschner_lobb_at(0, 0, -1), 1.0, 1e-15);  // the maximum
}

TEST(MarschnerLobb, RangeIsZeroToOne) {
  const ArrayF v = sv::marschner_lobb(64);
  float lo = 1, hi = 0;
  for (float s : v.vec()) {
    lo = std::min(lo, s);
    hi = std::max(hi, s);
  }
  EXPECT_GE(lo, 0.0f);
  EXPECT_LE(hi, 1.0f);
  // Close to both ends: the extremes are near the z = +-1 faces.
  EXPECT_LT(lo, 0.02f);
  EXPECT_GT(hi, 0.98f);
  // The continuous signal reaches 0 (z = 1, rho_r = -1) and 1 (z = -1, rho_r = 1).
  // rho_r = -1 where 12 cos(pi r / 2) = 11.
  EXPECT_NEAR(sv::marschner_lobb_at(2 / kPi * std::acos(11.0 / 12), 0, 1), 0.0, 1e-12);
  EXPECT_THROW(sv::marschner_lobb(0), sv::Error);
}

TEST(MarschnerLobb, OtherParameters) {
  // f_M = 0 removes the radial term: rho = (1 - sin(pi z / 2) + 2 alpha) / (2 (1 + alpha)).
  const ArrayF v = sv::marschner_lobb(8, 0.0, 0.5);
  for (std::size_t z = 0; z < 8; ++z) {
    const double pz = sv::marschner_lobb_coord(z, 8);
    EXPECT_NEAR(v.at3(z, 3, 5), (1 - std::sin(kPi * pz / 2) + 1.0) / 3.0, 1e-6);
  }
}

// ---- the bundled volume ----

TEST(BundledVolume, LoadsWithTheDocumentedShapeAndSpacing) {
  const std::string path = std::string(SPLINEVIEW_ASSET_DIR) + "/mri_t1_head.nrrd";
  const sv::Loaded l = sv::load_any(path, false);
  EXPECT_EQ(l.array.dims(), (std::vector<std::size_t>{62, 128, 128}));
  EXPECT_EQ(l.array.channels(), 1u);
  EXPECT_EQ(l.dtype, sv::DType::U8);
  EXPECT_EQ(l.spacing, (std::vector<double>{3, 2, 2}));
  double lo = 1e9, hi = -1e9, sum = 0;
  for (double v : l.array.vec()) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  EXPECT_EQ(lo, 0);
  EXPECT_EQ(hi, 255);
  // Real content, not a blank volume: a head fills a good part of the field of view.
  EXPECT_GT(sum / static_cast<double>(l.array.size()), 10.0);
}

}  // namespace
