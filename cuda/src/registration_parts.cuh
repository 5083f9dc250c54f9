// Device pieces of the GPU registration objectives' per-voxel kernels (registration.cu: SSD,
// registration_nmi.cu: NMI), one copy: the moving image's cubic spline and its gradient at a
// displaced voxel in float, on the 3-D view of a 2-D or 3-D problem (registration_level.h, with
// the host-side set-up and the adjoint's gather passes).
#pragma once

#include <cuda_runtime.h>

#include "boundary.cuh"
#include "cubic_weights.cuh"
#include "registration_level.h"

namespace sv::cuda::reg {
namespace {

// Derivatives of the cubic B-spline weights of cubic_weights() at the fraction a: d w_k / d a.
__device__ __forceinline__ void cubic_derivative_weights(float a, float w[4]) {
  const float b = 1.0f - a;
  w[0] = -0.5f * b * b;
  w[3] = 0.5f * a * a;
  w[1] = a * fmaf(1.5f, a, -2.0f);  // 3/2 a^2 - 2 a
  w[2] = -((w[0] + w[1]) + w[3]);   // the derivatives sum to 0
}

// M and grad M (d[0..2] along z, y, x of the view; d[0] = 0 in 2-D) at voxel i + u(i), u the
// field (D components per voxel), from the moving image's float coefficients: 4 taps per axis
// with the boundary's index extension, float cubic weights, the 4^D coefficients summed once
// for the value and every derivative.
template <int D>
__device__ __forceinline__ float value_gradient(const float* __restrict__ coef,
                                                const float* __restrict__ field, const View& v,
                                                long long i, int boundary, float d[3]) {
  const long long row = i / v.n[2];
  int pos[3];
  pos[2] = static_cast<int>(i - row * v.n[2]);
  pos[0] = static_cast<int>(row / v.n[1]);
  pos[1] = static_cast<int>(row - static_cast<long long>(pos[0]) * v.n[1]);
  constexpr int first = 3 - D;
  float w[3][4], dw[3][4];
  long long k[3][4];
  const long long stride[3] = {v.stride, v.n[2], 1};
#pragma unroll
  for (int a = first; a < 3; ++a) {
    // x + u split as integer + fraction without rounding: u - floor(u) is exact in float.
    const float u = field[i * D + (a - first)];
    const float fl = floorf(u);
    const float t = u - fl;
    const int base = pos[a] + static_cast<int>(fl) - 1;
    cubic_weights(t, w[a]);
    cubic_derivative_weights(t, dw[a]);
#pragma unroll
    for (int j = 0; j < 4; ++j)
      k[a][j] = static_cast<long long>(detail::extend(base + j, v.n[a], boundary)) * stride[a];
  }
  if (D == 2) {
    w[0][0] = 1.0f;
    dw[0][0] = 0.0f;
    k[0][0] = 0;
  }
  constexpr int L = D == 3 ? 4 : 1;
  float val = 0.0f, d0 = 0.0f, d1 = 0.0f, d2 = 0.0f;
#pragma unroll
  for (int l = 0; l < L; ++l) {
    float pv = 0.0f, p1 = 0.0f, p2 = 0.0f;
#pragma unroll
    for (int m = 0; m < 4; ++m) {
      const float* cr = coef + k[0][l] + k[1][m];
      float s = 0.0f, sd = 0.0f;
#pragma unroll
      for (int n = 0; n < 4; ++n) {
        const float c = __ldg(cr + k[2][n]);
        s = fmaf(w[2][n], c, s);
        sd = fmaf(dw[2][n], c, sd);
      }
      pv = fmaf(w[1][m], s, pv);
      p2 = fmaf(w[1][m], sd, p2);
      p1 = fmaf(dw[1][m], s, p1);
    }
    val = fmaf(w[0][l], pv, val);
    d2 = fmaf(w[0][l], p2, d2);
    d1 = fmaf(w[0][l], p1, d1);
    d0 = fmaf(dw[0][l], pv, d0);
  }
  d[0] = d0;
  d[1] = d1;
  d[2] = d2;
  return val;
}

}  // namespace
}  // namespace sv::cuda::reg
