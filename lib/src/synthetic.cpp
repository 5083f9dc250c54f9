// Synthetic test data (see synthetic.h): zone plate, resolution chart, Marschner-Lobb.
#include "splineview/synthetic.h"

#include <algorithm>
#include <cmath>

#include "splineview/error.h"

namespace sv {

namespace {

constexpr double kPi = 3.14159265358979323846;

// ---- a 5x7 bitmap font (written for this project) ----
// Seven rows per glyph, top first; bit 4 is the leftmost of the five columns.
struct Glyph {
  char c;
  unsigned char rows[7];
};

constexpr Glyph kFont[] = {
    {' ', {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}},
    {'0', {0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E}},
    {'1', {0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E}},
    {'2', {0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F}},
    {'3', {0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E}},
    {'4', {0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02}},
    {'5', {0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E}},
    {'6', {0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E}},
    {'7', {0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08}},
    {'8', {0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E}},
    {'9', {0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C}},
    {'A', {0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11}},
    {'B', {0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E}},
    {'C', {0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E}},
    {'D', {0x1E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x1E}},
    {'E', {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F}},
    {'F', {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10}},
    {'G', {0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F}},
    {'H', {0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11}},
    {'I', {0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E}},
    {'J', {0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C}},
    {'K', {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11}},
    {'L', {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F}},
    {'M', {0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11}},
    {'N', {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11}},
    {'O', {0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}},
    {'P', {0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10}},
    {'Q', {0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D}},
    {'R', {0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11}},
    {'S', {0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E}},
    {'T', {0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04}},
    {'U', {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}},
    {'V', {0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04}},
    {'W', {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A}},
    {'X', {0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11}},
    {'Y', {0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04}},
    {'Z', {0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F}},
    {'-', {0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00}},
    {'.', {0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C}},
    {':', {0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00}},
    {'/', {0x01, 0x01, 0x02, 0x04, 0x08, 0x10, 0x10}},
    {'=', {0x00, 0x00, 0x1F, 0x00, 0x1F, 0x00, 0x00}},
    {'+', {0x00, 0x04, 0x04, 0x1F, 0x04, 0x04, 0x00}},
    {'?', {0x0E, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04}},
};

const Glyph& glyph(char c) {
  for (const Glyph& g : kFont)
    if (g.c == c) return g;
  throw Error(std::string("resolution chart: no glyph for character '") + c + "'");
}

constexpr std::size_t kGlyphW = 5, kGlyphH = 7, kAdvance = 6;

std::size_t text_width(const std::string& text, std::size_t scale) {
  return text.empty() ? 0 : (text.size() * kAdvance - 1) * scale;
}

void fill(ArrayF& a, std::size_t y0, std::size_t x0, std::size_t h, std::size_t w, float v) {
  for (std::size_t y = y0; y < y0 + h; ++y)
    for (std::size_t x = x0; x < x0 + w; ++x) a.at2(y, x) = v;
}

// Centre of a region, in sample positions.
double centre_y(const ChartRegion& r) {
  return static_cast<double>(r.y0) + (static_cast<double>(r.height) - 1) / 2;
}
double centre_x(const ChartRegion& r) {
  return static_cast<double>(r.x0) + (static_cast<double>(r.width) - 1) / 2;
}

void draw(ArrayF& a, const ChartRegion& r) {
  switch (r.feature) {
    case ChartFeature::VerticalBars:
    case ChartFeature::HorizontalBars:
    case ChartFeature::Checker:
      for (std::size_t y = 0; y < r.height; ++y)
        for (std::size_t x = 0; x < r.width; ++x) {
          std::size_t phase = r.feature == ChartFeature::VerticalBars     ? x / r.size
                              : r.feature == ChartFeature::HorizontalBars ? y / r.size
                                                                          : x / r.size + y / r.size;
          a.at2(r.y0 + y, r.x0 + x) = phase % 2 == 0 ? 0.0f : 1.0f;
        }
      break;
    case ChartFeature::SlantedEdge: {
      const double t = std::tan(r.angle_deg * kPi / 180), cy = centre_y(r), cx = centre_x(r);
      for (std::size_t y = r.y0; y < r.y0 + r.height; ++y)
        for (std::size_t x = r.x0; x < r.x0 + r.width; ++x) {
          const double s = (static_cast<double>(x) - cx) + (static_cast<double>(y) - cy) * t;
          a.at2(y, x) = s >= 0 ? 1.0f : 0.0f;
        }
      break;
    }
    case ChartFeature::Text:
      fill(a, r.y0, r.x0, r.height, r.width, 1.0f);
      for (std::size_t i = 0; i < r.text.size(); ++i) {
        const Glyph& g = glyph(r.text[i]);
        for (std::size_t gy = 0; gy < kGlyphH; ++gy)
          for (std::size_t gx = 0; gx < kGlyphW; ++gx)
            if (g.rows[gy] & (1u << (kGlyphW - 1 - gx)))
              fill(a, r.y0 + gy * r.size, r.x0 + (i * kAdvance + gx) * r.size, r.size, r.size,
                   0.0f);
      }
      break;
    case ChartFeature::SiemensStar: {
      const double cy = centre_y(r), cx = centre_x(r);
      const double radius = static_cast<double>(std::min(r.height, r.width)) / 2;
      const double wedge = kPi / static_cast<double>(r.size);
      for (std::size_t y = r.y0; y < r.y0 + r.height; ++y)
        for (std::size_t x = r.x0; x < r.x0 + r.width; ++x) {
          const double dy = static_cast<double>(y) - cy, dx = static_cast<double>(x) - cx;
          if (dx * dx + dy * dy > radius * radius) continue;
          const auto k = static_cast<long>(std::floor((std::atan2(dy, dx) + kPi) / wedge));
          a.at2(y, x) = k % 2 == 0 ? 0.0f : 1.0f;
        }
      break;
    }
    case ChartFeature::Chirp: {
      const double len = static_cast<double>(r.width - 1);
      for (std::size_t x = 0; x < r.width; ++x) {
        const double u = static_cast<double>(x);
        const double phase = 0.5 * u * u / (2 * len);  // frequency 0.5 u / len
        const auto v = static_cast<float>(0.5 + 0.5 * std::cos(2 * kPi * phase));
        for (std::size_t y = r.y0; y < r.y0 + r.height; ++y) a.at2(y, r.x0 + x) = v;
      }
      break;
    }
    case ChartFeature::ThinLines:
      for (std::size_t y = r.y0; y < r.y0 + r.height; ++y)
        for (std::size_t x = 0; x < r.width; ++x)
          a.at2(y, r.x0 + x) = x % r.size == 0 ? 1.0f : 0.0f;
      break;
  }
}

std::vector<ChartRegion> make_layout() {
  std::vector<ChartRegion> l;
  const std::size_t bars[] = {8, 6, 4, 3, 2, 1};
  std::size_t x = 16;
  for (std::size_t b : bars) {  // 5 line pairs each
    l.push_back({ChartFeature::VerticalBars, 16, x, 64, 10 * b, b, 0.0, ""});
    x += 10 * b + 16;
  }
  x = 16;
  for (std::size_t b : bars) {
    l.push_back({ChartFeature::HorizontalBars, 96, x, 10 * b, 64, b, 0.0, ""});
    x += 80;
  }
  const std::size_t squares[] = {8, 4, 2, 1};
  x = 16;
  for (std::size_t s : squares) {
    l.push_back({ChartFeature::Checker, 192, x, 64, 64, s, 0.0, ""});
    x += 80;
  }
  l.push_back({ChartFeature::SlantedEdge, 192, 336, 64, 64, 0, 5.0, ""});
  l.push_back({ChartFeature::SlantedEdge, 192, 416, 64, 64, 0, 30.0, ""});
  struct Line {
    std::size_t y0, scale;
    const char* text;
  };
  const Line lines[] = {{276, 1, "THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG 0123456789"},
                        {291, 2, "SPLINEVIEW RESOLUTION CHART"},
                        {313, 3, "CUBIC B-SPLINE 1:1"}};
  for (const Line& t : lines)
    l.push_back({ChartFeature::Text, t.y0, 24, kGlyphH * t.scale, text_width(t.text, t.scale),
                 t.scale, 0.0, t.text});
  l.push_back({ChartFeature::SiemensStar, 360, 16, 128, 128, 18, 0.0, ""});
  l.push_back({ChartFeature::Chirp, 360, 160, 64, 336, 0, 0.0, ""});
  l.push_back({ChartFeature::ThinLines, 440, 160, 56, 336, 16, 0.0, ""});
  return l;
}

}  // namespace

// ---- zone plate ----

double zone_plate_at(double y, double x, std::size_t height, std::size_t width,
                     double edge_frequency) {
  const double cy = (static_cast<double>(height) - 1) / 2,
               cx = (static_cast<double>(width) - 1) / 2;
  const double radius = static_cast<double>(std::min(height, width)) / 2;
  const double k = kPi * edge_frequency / radius;
  const double r2 = (y - cy) * (y - cy) + (x - cx) * (x - cx);
  return 0.5 + 0.5 * std::cos(k * r2);
}

ArrayF zone_plate(std::size_t height, std::size_t width, double edge_frequency) {
  if (height == 0 || width == 0) throw Error("zone plate: the size must not be zero");
  if (!(edge_frequency > 0) || !std::isfinite(edge_frequency))
    throw Error("zone plate: the edge frequency must be positive");
  ArrayF a({height, width});
  for (std::size_t y = 0; y < height; ++y)
    for (std::size_t x = 0; x < width; ++x)
      a.at2(y, x) = static_cast<float>(zone_plate_at(static_cast<double>(y), static_cast<double>(x),
                                                     height, width, edge_frequency));
  return a;
}

// ---- resolution chart ----

const char* chart_feature_name(ChartFeature f) {
  switch (f) {
    case ChartFeature::VerticalBars:
      return "vertical bars";
    case ChartFeature::HorizontalBars:
      return "horizontal bars";
    case ChartFeature::Checker:
      return "checker";
    case ChartFeature::SlantedEdge:
      return "slanted edge";
    case ChartFeature::Text:
      return "text";
    case ChartFeature::SiemensStar:
      return "Siemens star";
    case ChartFeature::Chirp:
      return "chirp";
    case ChartFeature::ThinLines:
      return "thin lines";
  }
  return "?";
}

const std::vector<ChartRegion>& resolution_chart_layout() {
  static const std::vector<ChartRegion> layout = make_layout();
  return layout;
}

ArrayF resolution_chart() {
  ArrayF a({kChartSize, kChartSize});
  std::fill(a.vec().begin(), a.vec().end(), 0.5f);
  fill(a, 268, 16, 76, 480, 1.0f);  // white panel behind the text lines
  for (const ChartRegion& r : resolution_chart_layout()) draw(a, r);
  return a;
}

// ---- Marschner-Lobb ----

double marschner_lobb_at(double x, double y, double z, double fm, double alpha) {
  const double r = std::sqrt(x * x + y * y);
  const double rho_r = std::cos(2 * kPi * fm * std::cos(kPi * r / 2));
  return (1 - std::sin(kPi * z / 2) + alpha * (1 + rho_r)) / (2 * (1 + alpha));
}

double marschner_lobb_coord(std::size_t i, std::size_t n) {
  return -1.0 + 2.0 * (static_cast<double>(i) + 0.5) / static_cast<double>(n);
}

double marschner_lobb_sample_at(double z, double y, double x, std::size_t n, double fm,
                                double alpha) {
  const double nd = static_cast<double>(n);
  const auto coord = [nd](double p) { return -1.0 + 2.0 * (p + 0.5) / nd; };
  return marschner_lobb_at(coord(x), coord(y), coord(z), fm, alpha);
}

ArrayF marschner_lobb(std::size_t n, double fm, double alpha) {
  if (n == 0) throw Error("Marschner-Lobb volume: the size must not be zero");
  ArrayF a({n, n, n});
  for (std::size_t z = 0; z < n; ++z)
    for (std::size_t y = 0; y < n; ++y)
      for (std::size_t x = 0; x < n; ++x)
        a.at3(z, y, x) = static_cast<float>(
            marschner_lobb_at(marschner_lobb_coord(x, n), marschner_lobb_coord(y, n),
                              marschner_lobb_coord(z, n), fm, alpha));
  return a;
}

}  // namespace sv
