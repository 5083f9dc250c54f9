// grbf_fetch.glsl: Gaussian radial basis function interpolation (GRBF, issue 18) as a fetch of
// the GLSL library: the value at position p of
//   s(p) = sum_k w[k] prod_d exp(-(p_d - k_d)^2 / (2 sigma_d^2))
// over the samples k of the grid in the box |p_d - k_d| <= R_d (the support radius that the
// core derives, lib/include/splineview/grbf.h: what the box drops stays below the working
// precision). The weights w come from sv::grbf_solve (or its CUDA twin) and are read with
// texelFetch from a float texture (R32F, or RGBA32F for several channels, as the B-spline
// textures hold them); no hardware filtering, no boundary mode: outside the grid the sum just
// has fewer terms and decays to 0, as in the core.
//
// Conventions are the B-spline fetches' (bspline_fetch.glsl): positions in texture axis order
// (x, y[, z]), sample k at position k (the centre of texel k). Rank from SV_RANK
// (bspline_common.glsl). With SV_FETCH_GRBF, sv_fetch(tex, p) is this fetch, so the passes that
// call sv_fetch (view.frag, slice.frag, evaluate.frag) show the GRBF; include this file before
// bspline_quantity.glsl. Only the value: sv_fetch_order returns the value too (the host refuses
// derivatives of the GRBF, gl::quantity_problem).
//
// Arithmetic: the Gaussian factors of the x axis once per call (at most SV_GRBF_MAX_TAPS, the
// host checks floor(2 R_x) + 1 against it), the y (and z) factors once per row (plane); rows are
// fma chains over x, blended over y (and z), in float.
#include "bspline_common.glsl"

#ifndef SV_GRBF_MAX_TAPS
#define SV_GRBF_MAX_TAPS 64
#endif

// sigma and R per texture axis (x, y, z; z unused in 2-D), in samples. Locations fixed here and
// in app/gl/src/evaluator.cpp (kGrbfSigma...): above the passes' own uniforms.
layout(location = 16) uniform vec3 sv_grbf_sigma = vec3(1.0);
layout(location = 17) uniform vec3 sv_grbf_radius = vec3(0.0);
// 1: the result's alpha is 1 (images without alpha, whose textures swizzle alpha to 1, would
// otherwise sum the Gaussians there); 0: alpha is interpolated like the colours.
layout(location = 18) uniform float sv_grbf_opaque = 0.0;

vec4 sv_fetch_grbf(SV_SAMPLER tex, SV_VEC p) {
  SV_IVEC n = textureSize(tex, 0);
  SV_VEC sigma = SV_VEC(sv_grbf_sigma);
  SV_VEC radius = SV_VEC(sv_grbf_radius);
  SV_VEC c = -0.5 / (sigma * sigma);
  // The box of samples within the radius, clamped to the grid (empty far outside it).
  SV_IVEC lo = max(SV_IVEC(ceil(p - radius)), SV_IVEC(0));
  SV_IVEC hi = min(SV_IVEC(floor(p + radius)), n - SV_IVEC(1));
  int taps = min(hi.x - lo.x + 1, SV_GRBF_MAX_TAPS);
  float gx[SV_GRBF_MAX_TAPS];
  for (int i = 0; i < taps; ++i) {
    float t = p.x - float(lo.x + i);
    gx[i] = exp(c.x * t * t);
  }
  vec4 acc = vec4(0.0);
#if SV_RANK == 2
  for (int y = lo.y; y <= hi.y; ++y) {
    float t = p.y - float(y);
    vec4 row = vec4(0.0);
    for (int i = 0; i < taps; ++i) row = fma(vec4(gx[i]), texelFetch(tex, ivec2(lo.x + i, y), 0), row);
    acc = fma(vec4(exp(c.y * t * t)), row, acc);
  }
#else
  for (int z = lo.z; z <= hi.z; ++z) {
    float tz = p.z - float(z);
    vec4 plane = vec4(0.0);
    for (int y = lo.y; y <= hi.y; ++y) {
      float t = p.y - float(y);
      vec4 row = vec4(0.0);
      for (int i = 0; i < taps; ++i)
        row = fma(vec4(gx[i]), texelFetch(tex, ivec3(lo.x + i, y, z), 0), row);
      plane = fma(vec4(exp(c.y * t * t)), row, plane);
    }
    acc = fma(vec4(exp(c.z * tz * tz)), plane, acc);
  }
#endif
  acc.a = mix(acc.a, 1.0, sv_grbf_opaque);
  return acc;
}

#if defined(SV_FETCH_GRBF)
vec4 sv_fetch(SV_SAMPLER tex, SV_VEC p) { return sv_fetch_grbf(tex, p); }
vec4 sv_fetch_order(SV_SAMPLER tex, SV_VEC p, SV_IVEC order) { return sv_fetch_grbf(tex, p); }
#endif
