// bspline_fetch.glsl: the fetch library shared by every pass that reconstructs a 2-D or 3-D
// signal from a texture (the viewer's view.frag, the evaluator's evaluate.frag). Included by
// the host-side expander; one variant is compiled, chosen with a #define:
//   SV_FETCH_NEAREST        nearest sample: texelFetch at floor(y + 0.5) (y: p mapped as scipy maps
//                           it outside the array, for ties), indices extended by
//                           the boundary mode (ties round up, as the CPU reference)
//   SV_FETCH_LINEAR         hardware (bi/tri)linear filtering
//   SV_FETCH_CUBIC          cubic B-spline from 2^rank linear fetches with the weights computed
//                           on the fly (Ruijters et al.). On raw samples this is the "cubic
//                           B-spline (unfiltered)"; on coefficients the "prefiltered cubic".
//   SV_FETCH_CUBIC_LUT      the same fetch with (h0, h1, g0) read from a 1-D lookup texture
//                           (Sigg & Hadwiger, GPU Gems 2 ch. 20), bound as sv_lut (unit 1)
//   SV_FETCH_CUBIC_PRECISE  4^rank point fetches (texelFetch at texel centres) blended with fma:
//                           no hardware filtering, so no filter-weight quantisation; with
//                           SV_PRECISE_GATHER the same taps come from textureGather (2x2 texels
//                           per call; single channel, reflect or periodic; 3-D from a 2-D array
//                           copy bound as sv_layers, unit 2)
// sv_fetch(tex, p) then calls the chosen one. Rank, boundary mode and derivative come from
// bspline_common.glsl (SV_RANK, SV_BOUNDARY_*, SV_DERIVATIVE_AXIS, SV_DERIVATIVE_ORDER;
// derivatives exist for SV_FETCH_CUBIC, orders 0..1 per axis, and SV_FETCH_CUBIC_PRECISE, orders
// 0..2 per axis); sv_fetch_order(tex, p, order) takes the multi-index at run time, which the
// derived quantities of bspline_quantity.glsl use.
//
// Conventions (shared with the CPU reference sampler):
//  - position p in texture axis order (x, y[, z]), sample k at position k; texture
//    coordinate u = (p + 0.5) / N;
//  - textures hold float samples or coefficients (R32F, R16F, R16 or their RGBA forms) with
//    GL_LINEAR filtering, no mipmaps, and the wrap mode of the boundary (bspline_common.glsl).
#include "bspline_common.glsl"

// The position nearest rounds: scipy.ndimage's mapping of positions below 0 or at n and beyond
// for reflect and mirror (sv::sample's, lib/src/sampler.cpp), so that ties outside the array go
// where scipy sends them (mirror: -1/2 -> sample 1, n - 1/2 -> n-2; reflect: -3/2 -> sample 1,
// n + 1/2 -> n-1). Away from ties the nearest extended sample is the same. Periodic: unmapped.
SV_VEC sv_nearest_position(SV_VEC x, SV_VEC n) {
#if defined(SV_BOUNDARY_PERIODIC)
  return x;
#else
#if defined(SV_BOUNDARY_MIRROR)
  SV_VEC p = 2.0 * n - 2.0;
  SV_VEC lo = x + p * trunc(-x / p);
  lo = mix(-lo, lo + p, lessThanEqual(lo, 1.0 - n));
  SV_VEC hi = x - p * trunc(x / p);
  hi = mix(hi, p - hi, greaterThanEqual(hi, n));
#else
  SV_VEC p = 2.0 * n;
  SV_VEC lo = mix(x, x + p * trunc(-x / p), lessThan(x, -p));
  lo = mix(-lo - 1.0, lo + p, lessThan(lo, -n));
  SV_VEC hi = x - p * trunc(x / p);
  hi = mix(hi, p - hi - 1.0, greaterThanEqual(hi, n));
#endif
  SV_VEC y = mix(x, lo, lessThan(x, SV_VEC(0.0)));
  y = mix(y, hi, greaterThanEqual(x, n));
  return mix(y, SV_VEC(0.0), lessThanEqual(n, SV_VEC(1.0)));
#endif
}

// The sample nearest to position p (ties round up, as floor(y + 0.5) of the mapped position).
vec4 sv_fetch_nearest(SV_SAMPLER tex, SV_VEC p) {
  SV_IVEC size = textureSize(tex, 0);
  SV_VEC y = sv_nearest_position(p, SV_VEC(size));
  return texelFetch(tex, sv_extend(SV_IVEC(floor(y + 0.5)), size), 0);
}

// Hardware (bi/tri)linear interpolation at position p.
vec4 sv_fetch_linear(SV_SAMPLER tex, SV_VEC p) {
  SV_VEC i = floor(p);
  return sv_fetch_between(tex, SV_IVEC(i), p - i);
}

// The 2^rank linear fetches of the Sigg-Hadwiger scheme. Per axis, with i = floor(p), the
// weighted pair g0 * lerp(c[i-1], c[i], t0) covers taps w0, w1 (g0 = w0 + w1, t0 = w1 / g0)
// and g1 * lerp(c[i+1], c[i+2], t1) covers w2, w3 (g1 = w2 + w3, t1 = w3 / g1). In the
// published notation the fetch offsets from i are h0 = t0 - 1 and h1 = t1 + 1.
vec4 sv_cubic_blend(SV_SAMPLER tex, SV_VEC i, SV_VEC g0, SV_VEC g1, SV_VEC t0, SV_VEC t1) {
  SV_IVEC j0 = SV_IVEC(i) - SV_IVEC(1);
  SV_IVEC j1 = SV_IVEC(i) + SV_IVEC(1);
  vec4 acc = vec4(0.0);
  for (int c = 0; c < (1 << SV_RANK); ++c) {
    SV_BVEC hi = sv_corner(c);
    acc += sv_prod(mix(g0, g1, hi)) * sv_fetch_between(tex, mix(j0, j1, hi), mix(t0, t1, hi));
  }
  return acc;
}

// Cubic B-spline sum_k c[k] beta3(p - k) (or its derivative) over the 4^rank texels around p,
// as 2^rank linear fetches with the weights computed here. For the derivative the pairs have
// one sign each ((w0', w1') <= 0, (w2', w3') >= 0, and g0' = -g1' never vanishes), so the same
// lerp trick applies.
// `order`: 0 or 1 per axis (second derivative weights change sign within a pair, so they have
// no such form; the host refuses them).
vec4 sv_fetch_cubic_order(SV_SAMPLER tex, SV_VEC p, SV_IVEC order) {
  SV_VEC i = floor(p);
  SV_VEC w0, w1, w2, w3;
  sv_cubic_weights_of_order(p - i, order, w0, w1, w2, w3);
  SV_VEC g0 = w0 + w1;
  SV_VEC g1 = w2 + w3;
  return sv_cubic_blend(tex, i, g0, g1, w1 / g0, w3 / g1);
}
vec4 sv_fetch_cubic(SV_SAMPLER tex, SV_VEC p) {
  return sv_fetch_cubic_order(tex, p, sv_default_order());
}

#if defined(SV_FETCH_CUBIC_LUT)
// The filter values as a function of the fractional offset a, from a linearly filtered 1-D
// texture of T texels. Two layouts (LutOptions::mapping on the host):
//  - endpoints (default): texel k holds (h0, h1, g0) at a = k / (T - 1), with the offsets
//    h0 = w1/g0 - 1 and h1 = w3/g1 + 1 taken from i = floor(p); looked up at
//    u = (a (T - 1) + 0.5) / T with clamp-to-edge, so a = 0 and a -> 1 hit texel centres and
//    the table is only interpolated, never wrapped;
//  - SV_LUT_REPEAT, as published (GPU Gems 2 ch. 20, listing 20-2): texel k holds the offsets
//    from p itself, 1 + a - w1/g0 (fetch at p minus it) and 1 - a + w3/g1 (fetch at p plus it),
//    and g0, at a = (k + 0.5) / T; looked up at u = a with GL_REPEAT. For a < 0.5/T or
//    a > 1 - 0.5/T the filter blends the last texel with the first, whose values belong to the
//    other end of the cell: the published scheme errs there, at and next to the sample positions.
layout(binding = 1) uniform sampler1D sv_lut;

vec3 sv_lut_lookup(float a) {
#if defined(SV_LUT_REPEAT)
  return textureLod(sv_lut, a, 0.0).rgb;
#else
  float texels = float(textureSize(sv_lut, 0));
  return textureLod(sv_lut, (a * (texels - 1.0) + 0.5) / texels, 0.0).rgb;
#endif
}

vec4 sv_fetch_cubic_lut(SV_SAMPLER tex, SV_VEC p) {
  SV_VEC i = floor(p);
  SV_VEC a = p - i;
  SV_VEC t0, t1, g0;
  for (int d = 0; d < SV_RANK; ++d) {
    vec3 hg = sv_lut_lookup(a[d]);
#if defined(SV_LUT_REPEAT)
    t0[d] = a[d] - hg.r + 1.0;  // p - offset, from i - 1
    t1[d] = a[d] + hg.g - 1.0;  // p + offset, from i + 1
#else
    t0[d] = hg.r + 1.0;  // i + h0, from i - 1
    t1[d] = hg.g - 1.0;  // i + h1, from i + 1
#endif
    g0[d] = hg.b;
  }
  return sv_cubic_blend(tex, i, g0, 1.0 - g0, t0, t1);
}
#endif

// One row of the precise fetch: sum over the 4 taps of the x axis at the outer texel indices
// (y in 2-D, (y, z) in 3-D), in an fma chain.
#if SV_RANK == 2
#define SV_OUTER int
#else
#define SV_OUTER ivec2
#endif
vec4 sv_precise_row(SV_SAMPLER tex, int x[4], SV_VEC w[4], SV_OUTER outer) {
  vec4 row = vec4(w[0].x) * texelFetch(tex, SV_IVEC(x[0], outer), 0);
  row = fma(vec4(w[1].x), texelFetch(tex, SV_IVEC(x[1], outer), 0), row);
  row = fma(vec4(w[2].x), texelFetch(tex, SV_IVEC(x[2], outer), 0), row);
  row = fma(vec4(w[3].x), texelFetch(tex, SV_IVEC(x[3], outer), 0), row);
  return row;
}

#if defined(SV_PRECISE_GATHER)
// The same taps and fma order as the texelFetch form below, read with textureGather: each call
// returns one 2x2 block of texels as stored (no filtering, so just as exact), 4^rank / 4 calls
// instead of 4^rank texelFetch. The block of texels j, j+1 (per axis) is the one gathered at
// their shared corner, coordinate (j + 1) / N, half a texel away from any other block, and the
// sampler's wrap mode extends its indices as sv_extend does: for reflect and periodic only, and
// for single-channel textures (textureGather returns one component). 3-D textures are gathered
// from a 2-D array copy with one layer per z (SplineTexture::layers(), unit 2); the z index is
// extended here.
#if SV_RANK == 3
layout(binding = 2) uniform sampler2DArray sv_layers;
#endif

// Rows y = i-1 .. i+2 of the 4x4 taps around i (of z layer `layer` in 3-D), each over
// x = i-1 .. i+2; lo and hi are the gather coordinates of the blocks starting at i-1 and i+1.
void sv_gather_rows(SV_SAMPLER tex, vec2 lo, vec2 hi, float layer, out vec4 r[4]) {
  // component order of textureGather: x = (0, 1), y = (1, 1), z = (1, 0), w = (0, 0)
#if SV_RANK == 3
  vec4 a = textureGather(sv_layers, vec3(lo.x, lo.y, layer));
  vec4 b = textureGather(sv_layers, vec3(hi.x, lo.y, layer));
  vec4 c = textureGather(sv_layers, vec3(lo.x, hi.y, layer));
  vec4 d = textureGather(sv_layers, vec3(hi.x, hi.y, layer));
#else
  vec4 a = textureGather(tex, vec2(lo.x, lo.y));
  vec4 b = textureGather(tex, vec2(hi.x, lo.y));
  vec4 c = textureGather(tex, vec2(lo.x, hi.y));
  vec4 d = textureGather(tex, vec2(hi.x, hi.y));
#endif
  r[0] = vec4(a.w, a.z, b.w, b.z);
  r[1] = vec4(a.x, a.y, b.x, b.y);
  r[2] = vec4(c.w, c.z, d.w, d.z);
  r[3] = vec4(c.x, c.y, d.x, d.y);
}

// One 4x4 layer: rows over x in an fma chain, then blended over y, as sv_precise_row does.
float sv_gather_layer(vec4 r[4], SV_VEC w[4]) {
  float plane = 0.0;
  for (int y = 0; y < 4; ++y) {
    float row = w[0].x * r[y].x;
    row = fma(w[1].x, r[y].y, row);
    row = fma(w[2].x, r[y].z, row);
    row = fma(w[3].x, r[y].w, row);
    plane = fma(w[y].y, row, plane);
  }
  return plane;
}

vec4 sv_fetch_cubic_precise_order(SV_SAMPLER tex, SV_VEC p, SV_IVEC order) {
  SV_IVEC n = textureSize(tex, 0);
  SV_VEC i = floor(p);
  SV_VEC w[4];
  sv_cubic_weights_of_order(p - i, order, w[0], w[1], w[2], w[3]);
  vec2 inv = 1.0 / vec2(n.xy);
  vec2 lo = i.xy * inv, hi = (i.xy + 2.0) * inv;
  vec4 r[4];
#if SV_RANK == 2
  sv_gather_rows(tex, lo, hi, 0.0, r);
  return vec4(sv_gather_layer(r, w), 0.0, 0.0, 1.0);
#else
  float acc = 0.0;
  for (int z = 0; z < 4; ++z) {
    sv_gather_rows(tex, lo, hi, float(sv_extend(ivec3(0, 0, int(i.z) + z - 1), n).z), r);
    acc = fma(w[z].z, sv_gather_layer(r, w), acc);
  }
  return vec4(acc, 0.0, 0.0, 1.0);
#endif
}
#else
// Cubic B-spline (or its partial derivative of multi-index `order`, 0..2 per axis) from 4^rank
// point fetches at texel centres, the indices extended explicitly for the boundary mode,
// weights and blends in fma. The texture's filter and wrap settings play no part.
vec4 sv_fetch_cubic_precise_order(SV_SAMPLER tex, SV_VEC p, SV_IVEC order) {
  SV_IVEC n = textureSize(tex, 0);
  SV_VEC i = floor(p);
  SV_VEC w[4];
  sv_cubic_weights_of_order(p - i, order, w[0], w[1], w[2], w[3]);
  SV_IVEC e[4];
  for (int k = 0; k < 4; ++k) e[k] = sv_extend(SV_IVEC(i) + SV_IVEC(k - 1), n);
  int x[4] = int[4](e[0].x, e[1].x, e[2].x, e[3].x);
#if SV_RANK == 2
  vec4 acc = vec4(0.0);
  for (int y = 0; y < 4; ++y) acc = fma(vec4(w[y].y), sv_precise_row(tex, x, w, e[y].y), acc);
  return acc;
#else
  vec4 acc = vec4(0.0);
  for (int z = 0; z < 4; ++z) {
    vec4 plane = vec4(0.0);
    for (int y = 0; y < 4; ++y)
      plane = fma(vec4(w[y].y), sv_precise_row(tex, x, w, ivec2(e[y].y, e[z].z)), plane);
    acc = fma(vec4(w[z].z), plane, acc);
  }
  return acc;
#endif
}
#endif

vec4 sv_fetch_cubic_precise(SV_SAMPLER tex, SV_VEC p) {
  return sv_fetch_cubic_precise_order(tex, p, sv_default_order());
}

#if defined(SV_FETCH_NEAREST)
vec4 sv_fetch(SV_SAMPLER tex, SV_VEC p) { return sv_fetch_nearest(tex, p); }
#elif defined(SV_FETCH_LINEAR)
vec4 sv_fetch(SV_SAMPLER tex, SV_VEC p) { return sv_fetch_linear(tex, p); }
#elif defined(SV_FETCH_CUBIC)
vec4 sv_fetch(SV_SAMPLER tex, SV_VEC p) { return sv_fetch_cubic(tex, p); }
#elif defined(SV_FETCH_CUBIC_LUT)
vec4 sv_fetch(SV_SAMPLER tex, SV_VEC p) { return sv_fetch_cubic_lut(tex, p); }
#elif defined(SV_FETCH_CUBIC_PRECISE)
vec4 sv_fetch(SV_SAMPLER tex, SV_VEC p) { return sv_fetch_cubic_precise(tex, p); }
#endif

// The partial derivative of multi-index `order` (texture axis order) at p, per sample, for the
// variants that have derivatives: precise (0..2 per axis) and on the fly (0..1 per axis; also
// the unfiltered cubic); the others return the value (the host never asks them). Defined only
// where a variant is chosen (passes that use the building blocks alone, such as
// ffd_field.comp, define none).
#if defined(SV_FETCH_CUBIC_PRECISE)
vec4 sv_fetch_order(SV_SAMPLER tex, SV_VEC p, SV_IVEC order) {
  return sv_fetch_cubic_precise_order(tex, p, order);
}
#elif defined(SV_FETCH_CUBIC)
vec4 sv_fetch_order(SV_SAMPLER tex, SV_VEC p, SV_IVEC order) {
  return sv_fetch_cubic_order(tex, p, order);
}
#elif defined(SV_FETCH_NEAREST) || defined(SV_FETCH_LINEAR) || defined(SV_FETCH_CUBIC_LUT)
vec4 sv_fetch_order(SV_SAMPLER tex, SV_VEC p, SV_IVEC order) { return sv_fetch(tex, p); }
#endif
