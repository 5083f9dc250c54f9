// Cubic B-spline weights in float, shared by the kernels that evaluate the cubic themselves
// (reconstruct.cu, ffd.cu) so that they weigh taps exactly as the GLSL fetches do.
#pragma once

// Cubic B-spline weights of c[i-1], c[i], c[i+1], c[i+2] for the fraction a = x - i in [0, 1),
// as sv_cubic_weights (bspline_common.glsl): w1 in one fma, w2 closing the partition of unity.
__device__ __forceinline__ void cubic_weights(float a, float w[4]) {
  const float b = 1.0f - a;
  const float a2 = a * a;
  const float b2 = b * b;
  w[0] = b2 * b * (1.0f / 6.0f);
  w[1] = fmaf(a2, 0.5f * a - 1.0f, 2.0f / 3.0f);
  w[3] = a2 * a * (1.0f / 6.0f);
  w[2] = 1.0f - ((w[0] + w[1]) + w[3]);
}
