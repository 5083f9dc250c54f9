// Synthetic test data: the circular zone plate, a resolution chart (line pairs, checkers, slanted
// edges, text, a Siemens star, a chirp, thin lines) and the Marschner-Lobb test volume. All
// values lie in [0, 1]; arrays follow the NumPy axis order of array.h, (y, x) and (z, y, x).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "splineview/array.h"

namespace sv {

// ---- zone plate ----

// The circular zone plate
//     f(y, x) = 1/2 + 1/2 cos(k r^2),  r^2 = (y - cy)^2 + (x - cx)^2,  k = pi * edge_frequency / R,
// centred at (cy, cx) = ((height - 1) / 2, (width - 1) / 2), R = min(height, width) / 2, r in
// samples. Its local frequency (d/dr of the phase over 2 pi) is k r / pi = edge_frequency * r / R
// cycles per sample: it grows linearly from 0 at the centre to `edge_frequency` at radius R
// (the middle of each edge of a square image). The default 0.5 reaches Nyquist there, so the
// corners (r up to R sqrt 2) are undersampled and show the aliased rings on purpose.
// Throws sv::Error for a zero size or a non-positive edge_frequency.
ArrayF zone_plate(std::size_t height, std::size_t width, double edge_frequency = 0.5);
// The continuous zone plate of the same parameters at position (y, x), in samples.
double zone_plate_at(double y, double x, std::size_t height, std::size_t width,
                     double edge_frequency = 0.5);

// ---- resolution chart ----

// The chart is kChartSize x kChartSize samples on a grey (0.5) background; its features are
// black (0) and white (1) with sharp (not anti-aliased) edges, except the chirp.
constexpr std::size_t kChartSize = 512;

enum class ChartFeature {
  VerticalBars,    // 5 line pairs of bars `size` samples wide, varying along x, black first
  HorizontalBars,  // the same varying along y
  Checker,         // squares of `size` samples, black at the region's top-left corner
  SlantedEdge,     // white where (x - cx) + (y - cy) tan(angle_deg) >= 0, else black: an edge
                   // through the region's centre (cy, cx), tilted `angle_deg` clockwise (as
                   // displayed, y down) from vertical, black on its left
  Text,            // `text` in black on white in a 5x7 font scaled by `size` (6*size advance)
  SiemensStar,     // `size` black/white wedge pairs inside the disc inscribed in the region
  Chirp,           // 1/2 + 1/2 cos(2 pi phase(x)), frequency rising linearly from 0 at the
                   // left to 0.5 cycles per sample at the right edge, constant along y
  ThinLines,       // white vertical lines one sample wide every `size` samples on black, the
                   // first at the region's left edge
};

const char* chart_feature_name(ChartFeature f);

// A rectangle of the chart [y0, y0 + height) x [x0, x0 + width) and what it holds.
struct ChartRegion {
  ChartFeature feature;
  std::size_t y0, x0, height, width;
  std::size_t size;  // bar width, square size, text scale, wedge pairs or line spacing
  double angle_deg;  // SlantedEdge only
  std::string text;  // Text only (upper case letters, digits, space and - . : / = + ?)
};

// The chart's layout: bars 8, 6, 4, 3, 2 and 1 samples wide (periods 16 .. 2, the last at
// Nyquist) in both directions, checkers of 8, 4, 2 and 1, edges tilted 5 and 30 degrees, text at
// scales 1, 2 and 3 (on a white panel), a Siemens star with 18 wedge pairs, a chirp to Nyquist
// and thin lines every 16 samples. Regions do not overlap; text regions are the exact text box.
const std::vector<ChartRegion>& resolution_chart_layout();
// The kChartSize x kChartSize chart drawn from resolution_chart_layout().
ArrayF resolution_chart();

// ---- Marschner-Lobb ----

// The Marschner-Lobb test signal (S. R. Marschner and R. J. Lobb, "An evaluation of
// reconstruction filters for volume rendering", Proc. IEEE Visualization 1994, pp. 100-107):
//     rho(x, y, z) = (1 - sin(pi z / 2) + alpha (1 + rho_r(sqrt(x^2 + y^2)))) / (2 (1 + alpha)),
//     rho_r(r) = cos(2 pi f_M cos(pi r / 2)),
// on [-1, 1]^3, values in [0, 1]. The standard parameters are f_M = 6, alpha = 0.25.
double marschner_lobb_at(double x, double y, double z, double fm = 6.0, double alpha = 0.25);
// The coordinate in [-1, 1] of sample i of n: sample centres, -1 + (2 i + 1) / n (sample k sits
// at position k, and the n samples cover [-1, 1] as n cells of width 2/n).
double marschner_lobb_coord(std::size_t i, std::size_t n);
// The continuous signal behind marschner_lobb(n) at a position (z, y, x) in sample units of the
// n^3 grid (sample k at k): marschner_lobb_at of -1 + (2 p + 1) / n per axis, so that the grid
// holds it (rounded to float) at integer positions.
double marschner_lobb_sample_at(double z, double y, double x, std::size_t n, double fm = 6.0,
                                double alpha = 0.25);
// rho sampled on an n^3 grid (dims (z, y, x)) at marschner_lobb_coord per axis, as float.
// Throws sv::Error for n = 0.
ArrayF marschner_lobb(std::size_t n, double fm = 6.0, double alpha = 0.25);

}  // namespace sv
