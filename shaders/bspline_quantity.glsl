// bspline_quantity.glsl: what a pass shows of the reconstructed signal: its value, one partial
// derivative, or a quantity derived from several partial derivatives at the same position, all
// through the fetch variant of bspline_fetch.glsl (derivatives: precise up to order 2 per axis,
// on the fly up to order 1 per axis). One quantity is compiled, chosen with a #define:
//   (none)                          the fetch itself: the value, or the partial derivative of
//                                   SV_DERIVATIVE_ORDER / SV_DERIVATIVE_AXIS
//   SV_QUANTITY_GRADIENT_MAGNITUDE  sqrt(sum_a (ds/dx_a)^2)             (first derivatives)
//   SV_QUANTITY_LAPLACIAN           sum_a d2s/dx_a^2                    (precise only)
//   SV_QUANTITY_HESSIAN_DET         det of the Hessian (d2s/dx_a dx_b)  (precise only)
// Each colour channel separately. `scale` (texture axis order) multiplies a derivative along
// axis a by scale[a] per order: 1 gives derivatives per sample (per texel), 1 / spacing per mm
// for a volume whose voxels are spacing[a] mm apart along its axes (for the derived quantities
// this is the physical gradient or Laplacian when the voxel axes are orthogonal).
#include "bspline_fetch.glsl"

// The unit vector of texture axis d as a multi-index.
SV_IVEC sv_axis(int d) {
  SV_IVEC e = SV_IVEC(0);
  e[d] = 1;
  return e;
}

vec4 sv_quantity(SV_SAMPLER tex, SV_VEC p, SV_VEC scale) {
#if defined(SV_QUANTITY_GRADIENT_MAGNITUDE)
  vec4 sum = vec4(0.0);
  for (int d = 0; d < SV_RANK; ++d) {
    vec4 g = sv_fetch_order(tex, p, sv_axis(d)) * scale[d];
    sum = fma(g, g, sum);
  }
  return sqrt(sum);
#elif defined(SV_QUANTITY_LAPLACIAN)
  vec4 sum = vec4(0.0);
  for (int d = 0; d < SV_RANK; ++d)
    sum = fma(sv_fetch_order(tex, p, 2 * sv_axis(d)), vec4(scale[d] * scale[d]), sum);
  return sum;
#elif defined(SV_QUANTITY_HESSIAN_DET)
  vec4 h[SV_RANK][SV_RANK];
  for (int a = 0; a < SV_RANK; ++a)
    for (int b = a; b < SV_RANK; ++b) {
      h[a][b] = sv_fetch_order(tex, p, sv_axis(a) + sv_axis(b)) * (scale[a] * scale[b]);
      h[b][a] = h[a][b];
    }
#if SV_RANK == 2
  return h[0][0] * h[1][1] - h[0][1] * h[0][1];
#else
  // cofactor expansion along the first row
  return h[0][0] * (h[1][1] * h[2][2] - h[1][2] * h[1][2]) -
         h[0][1] * (h[0][1] * h[2][2] - h[1][2] * h[0][2]) +
         h[0][2] * (h[0][1] * h[1][2] - h[1][1] * h[0][2]);
#endif
#else
  vec4 v = sv_fetch(tex, p);
  SV_IVEC order = sv_default_order();
  float f = 1.0;
  for (int d = 0; d < SV_RANK; ++d)
    for (int k = 0; k < order[d]; ++k) f *= scale[d];
  return v * f;
#endif
}

// True when the compiled variant shows the value itself (not a derivative or derived quantity).
bool sv_quantity_is_value() {
#if defined(SV_QUANTITY_GRADIENT_MAGNITUDE) || defined(SV_QUANTITY_LAPLACIAN) || \
    defined(SV_QUANTITY_HESSIAN_DET)
  return false;
#else
  SV_IVEC o = sv_default_order();
  return all(equal(o, SV_IVEC(0)));
#endif
}

// ---- Display of a quantity (the viewer's passes) ----
// `map` = (1 / range, signed, colour, 0): a signed quantity q shows s = clamp(q / range, -1, 1)
// through a diverging map centred at 0: with `colour` (one-channel data) blue (-1), light grey
// (0), red (+1), the "cool to warm" end points of Moreland's diverging maps; without it (colour
// images, per channel) grey 0.5 + s / 2. A non-negative one (gradient magnitude) shows
// clamp(q / range, 0, 1) as grey (per channel). app/viewer/method_pass.cpp draws the same map as
// the legend (quantity_colour).
vec3 sv_diverging(float s) {
  const vec3 lo = vec3(0.230, 0.299, 0.754);
  const vec3 mid = vec3(0.865, 0.865, 0.865);
  const vec3 hi = vec3(0.706, 0.016, 0.150);
  return s < 0.0 ? mix(mid, lo, -s) : mix(mid, hi, s);
}
vec3 sv_quantity_colour(vec3 q, vec4 map) {
  vec3 t = q * map.x;
  if (map.y > 0.5) {
    vec3 s = clamp(t, -1.0, 1.0);
    return map.z > 0.5 ? sv_diverging(s.r) : 0.5 + 0.5 * s;
  }
  return clamp(t, 0.0, 1.0);
}
