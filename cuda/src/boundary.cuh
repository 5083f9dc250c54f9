// Boundary extension on the device, shared by the CUDA prefilter and reconstruction: the codes
// that carry sv::Boundary into kernels, and the index mapping of sv::extend_index.
#pragma once

#include <string>

#include "splineview/array.h"
#include "splineview/error.h"

namespace sv::cuda::detail {

constexpr int kReflect = 0;
constexpr int kMirror = 1;
constexpr int kPeriodic = 2;

inline int boundary_code(Boundary b) {
  switch (b) {
    case Boundary::Reflect:
      return kReflect;
    case Boundary::Mirror:
      return kMirror;
    case Boundary::Periodic:
      return kPeriodic;
    case Boundary::Wrap:
    case Boundary::Nearest:
    case Boundary::Constant:
    case Boundary::GridConstant:
      throw Error(std::string("CUDA: boundary mode '") + boundary_name(b) +
                  "' is CPU only; the CUDA kernels implement reflect, mirror and periodic");
  }
  throw Error("CUDA: unknown boundary mode");
}

// Maps an integer sample index to [0, n-1] per boundary mode, exactly like sv::extend_index:
//   reflect  ... 1 0 | 0 1 ... n-1 | n-1 ...  (period 2n)
//   mirror   ... 2 1 | 0 1 ... n-1 | n-2 ...  (period 2n-2; n = 1 gives 0)
//   periodic ... n-1 | 0 1 ... n-1 | 0 ...    (period n)
// Any int maps into range. 32-bit arithmetic (a 64-bit division costs far more); callers keep
// n <= 2^30 so that 2n does not overflow.
__host__ __device__ __forceinline__ int extend(int k, int n, int boundary) {
  if (k >= 0 && k < n) return k;  // the common case: no integer division
  if (boundary == kPeriodic) {
    const int r = k % n;
    return r < 0 ? r + n : r;
  }
  if (boundary == kMirror) {
    if (n == 1) return 0;
    const int p = 2 * n - 2;
    int r = k % p;
    if (r < 0) r += p;
    return r < n ? r : p - r;
  }
  const int p = 2 * n;
  int r = k % p;
  if (r < 0) r += p;
  return r < n ? r : p - 1 - r;
}

// The position the nearest fetch rounds, floor(y + 0.5): scipy.ndimage's mapping of positions
// below 0 or at n and beyond for reflect and mirror (sv::sample's, lib/src/sampler.cpp), so that
// ties outside the array go where scipy sends them (mirror: -1/2 -> sample 1, n - 1/2 -> n-2;
// reflect: -3/2 -> sample 1, n + 1/2 -> n-1). Away from ties it changes nothing: the nearest
// extended sample is the same. Periodic positions are not mapped. Exact in float for ties
// (half-integers) of moderate size.
__device__ __forceinline__ float nearest_position(float x, int n, int boundary) {
  if (boundary == kPeriodic || (x >= 0.0f && x < static_cast<float>(n))) return x;
  if (n <= 1) return 0.0f;
  const float fn = static_cast<float>(n);
  if (boundary == kMirror) {
    const float p = 2.0f * fn - 2.0f;
    if (x < 0.0f) {
      x += p * truncf(-x / p);
      return x <= 1.0f - fn ? x + p : -x;
    }
    x -= p * truncf(x / p);
    return x >= fn ? p - x : x;
  }
  const float p = 2.0f * fn;
  if (x < 0.0f) {
    if (x < -p) x += p * truncf(-x / p);
    return x < -fn ? x + p : -x - 1.0f;
  }
  x -= p * truncf(x / p);
  return x >= fn ? p - x - 1.0f : x;
}

}  // namespace sv::cuda::detail
