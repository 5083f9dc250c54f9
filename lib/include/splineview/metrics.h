// Error metrics between two arrays of the same shape, optionally restricted to a mask, with
// non-finite values (NaN, +-inf) counted apart rather than folded into the figures.
#pragma once

#include <cstddef>
#include <vector>

#include "splineview/array.h"

namespace sv {

// Over the scalars selected by the mask (every channel of a selected point):
//  - max_abs, rms, sse and count cover the scalars where both sides are finite;
//  - nonfinite_a / nonfinite_b count the NaN/inf scalars of each side, first_nonfinite_a/_b is
//    the flat scalar index of the first one in array order (meaningful when the count is > 0;
//    sv::unravel_index in finite.h turns it into a multi-index);
//  - nonfinite_mismatch counts the scalars where at least one side is non-finite and the two
//    are not the same infinity: NaN equals nothing, not even NaN (IEEE), +inf equals +inf;
//  - psnr is 10 log10(peak^2 / mse) over the finite pairs, +inf when they are all equal and
//    there is no mismatch, -inf when there is a mismatch (an unbounded error somewhere).
// identical() is true only when no scalar differs: no mismatch and max_abs == 0. So an array
// holding a NaN is never identical to anything, itself included.
struct ErrorStats {
  double max_abs = 0;     // max |a - b| over the finite pairs
  double rms = 0;         // sqrt(mean (a - b)^2) over the finite pairs (0 when there are none)
  double sse = 0;         // sum (a - b)^2 over the finite pairs
  double psnr = 0;        // dB; +inf identical; -inf with a non-finite mismatch
  std::size_t count = 0;  // finite pairs compared (points in the mask * channels, less those)
  std::size_t nonfinite_a = 0, nonfinite_b = 0;
  std::size_t first_nonfinite_a = 0, first_nonfinite_b = 0;
  std::size_t nonfinite_mismatch = 0;
  bool identical() const { return nonfinite_mismatch == 0 && max_abs == 0; }
};

// mask: empty or one byte per point (not per channel); non-zero = included.
// peak: the signal's peak value for PSNR (1 for data in [0,1]).
// Throws sv::Error when the shapes differ, the mask has the wrong size or selects no point, or
// peak is not positive.
template <class A, class B>
ErrorStats compare(const Array<A>& a, const Array<B>& b,
                   const std::vector<unsigned char>& mask = {}, double peak = 1.0);

// Points of a 2-D (y, x) grid inside the centred disc of radius `fraction` * min(H, W),
// centre ((H-1)/2, (W-1)/2). Used by the repeated-rotation experiment (fraction 0.35).
std::vector<unsigned char> disc_mask(std::size_t height, std::size_t width, double fraction);

}  // namespace sv
