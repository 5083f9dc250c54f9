// Error metrics between two arrays of the same shape, optionally restricted to a mask.
#pragma once

#include <cstddef>
#include <vector>

#include "splineview/array.h"

namespace sv {

struct ErrorStats {
  double max_abs = 0;     // max |a - b|
  double rms = 0;         // sqrt(mean (a - b)^2)
  double sse = 0;         // sum (a - b)^2
  double psnr = 0;        // 10 log10(peak^2 / mse) in dB; +inf when identical
  std::size_t count = 0;  // scalars compared (points in the mask * channels)
};

// mask: empty or one byte per point (not per channel); non-zero = included.
// peak: the signal's peak value for PSNR (1 for data in [0,1]).
template <class A, class B>
ErrorStats compare(const Array<A>& a, const Array<B>& b,
                   const std::vector<unsigned char>& mask = {}, double peak = 1.0);

// Points of a 2-D (y, x) grid inside the centred disc of radius `fraction` * min(H, W),
// centre ((H-1)/2, (W-1)/2). Used by the repeated-rotation experiment (fraction 0.35).
std::vector<unsigned char> disc_mask(std::size_t height, std::size_t width, double fraction);

}  // namespace sv
