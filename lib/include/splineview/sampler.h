// The double-precision reference sampler: evaluates s(x) = sum_k c[k] beta_n(x - k) at arbitrary
// real positions, with the coefficients extended beyond [0, N-1] by the boundary mode (the
// prefilter makes the coefficients inherit the samples' symmetry, so this is exact everywhere).
// Positions are in sample units, array axis order: position k is the centre of sample k.
#pragma once

#include <cstddef>
#include <vector>

#include "splineview/array.h"

namespace sv {

struct SamplerOptions {
  int degree = 3;  // 0 nearest, 1 linear, 2..7 B-spline
  Boundary boundary = Boundary::Reflect;
  int derivative_axis = -1;  // >= 0: evaluate d s / d x_axis instead of s
  unsigned threads = 0;      // 0 = hardware concurrency
};

// Maps an integer index to [0, n-1] according to the boundary mode.
long extend_index(long k, long n, Boundary b);

// Evaluates the spline with coefficients `c` at m positions (positions[i*rank + d]) and writes
// m * channels values (interleaved). Accumulates in double whatever T is.
template <class T>
void sample(const Array<T>& c, const double* positions, std::size_t m, double* out,
            const SamplerOptions& opt = {});

template <class T>
std::vector<double> sample(const Array<T>& c, const std::vector<double>& positions,
                           const SamplerOptions& opt = {});

}  // namespace sv
