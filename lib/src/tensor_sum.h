// The tensor-product sum of a spline's taps at one position, shared by the double reference
// sampler (sampler.cpp) and the derivatives (derivative.cpp): rank 1-3, `taps` weights per axis
// w[d][j] at element offsets idx[d][j] from `data`, `channels` interleaved values per sample;
// sums in double, the last axis innermost (so every caller gets the same bits).
#pragma once

#include <cstddef>

#include "splineview/array.h"

namespace sv {

template <class T, class Weights, class Offsets>
inline void tensor_sum(const T* data, std::size_t rank, int taps, const Weights& w,
                       const Offsets& idx, std::size_t channels, double* acc) {
  if (rank == 1) {
    for (int a = 0; a < taps; ++a)
      for (std::size_t ch = 0; ch < channels; ++ch) acc[ch] += w[0][a] * data[idx[0][a] + ch];
  } else if (rank == 2) {
    for (int a = 0; a < taps; ++a) {
      double row[kMaxChannels] = {0, 0, 0, 0};
      for (int b = 0; b < taps; ++b) {
        const T* e = data + idx[0][a] + idx[1][b];
        for (std::size_t ch = 0; ch < channels; ++ch) row[ch] += w[1][b] * e[ch];
      }
      for (std::size_t ch = 0; ch < channels; ++ch) acc[ch] += w[0][a] * row[ch];
    }
  } else {
    for (int a = 0; a < taps; ++a) {
      double plane[kMaxChannels] = {0, 0, 0, 0};
      for (int b = 0; b < taps; ++b) {
        double row[kMaxChannels] = {0, 0, 0, 0};
        for (int e = 0; e < taps; ++e) {
          const T* v = data + idx[0][a] + idx[1][b] + idx[2][e];
          for (std::size_t ch = 0; ch < channels; ++ch) row[ch] += w[2][e] * v[ch];
        }
        for (std::size_t ch = 0; ch < channels; ++ch) plane[ch] += w[1][b] * row[ch];
      }
      for (std::size_t ch = 0; ch < channels; ++ch) acc[ch] += w[0][a] * plane[ch];
    }
  }
}

}  // namespace sv
