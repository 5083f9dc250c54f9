// bspline_fetch.glsl: the 2-D fetch library shared by every pass that reconstructs an image
// from a texture. Included by the host-side expander; the variant is chosen with a #define:
//   SV_FETCH_NEAREST  nearest sample (texelFetch with the reflect boundary done by hand)
//   SV_FETCH_LINEAR   hardware bilinear filtering
//   SV_FETCH_CUBIC    cubic B-spline from 4 bilinear fetches (Sigg & Hadwiger, weights on the
//                     fly as in Ruijters et al.). On the raw-sample texture this is the
//                     "cubic B-spline (unfiltered)"; on the coefficient texture it is the
//                     interpolating "prefiltered cubic B-spline".
// sv_fetch(tex, p) then calls the chosen one.
//
// Conventions (shared with the CPU reference sampler):
//  - sample k sits at position k; texture coordinate u = (position + 0.5) / N;
//  - textures hold float samples or coefficients, GL_MIRRORED_REPEAT addressing (the
//    half-sample symmetric "reflect" boundary, exact beyond the border too) and GL_LINEAR
//    filtering without mipmaps.

// Half-sample symmetric index: ... 1 0 | 0 1 ... n-1 | n-1 n-2 ...
ivec2 sv_reflect_index(ivec2 i, ivec2 n) {
  ivec2 period = 2 * n;
  ivec2 m = ivec2(mod(vec2(i), vec2(period)));  // exact for |i| < 2^24
  return mix(m, period - 1 - m, greaterThanEqual(m, n));
}

// The sample nearest to position p (ties round up, as floor(p + 0.5)).
vec4 sv_fetch_nearest(sampler2D tex, vec2 p) {
  ivec2 n = textureSize(tex, 0);
  return texelFetch(tex, sv_reflect_index(ivec2(floor(p + 0.5)), n), 0);
}

// Hardware bilinear interpolation at position p.
vec4 sv_fetch_linear(sampler2D tex, vec2 p) {
  return textureLod(tex, (p + 0.5) / vec2(textureSize(tex, 0)), 0.0);
}

// Cubic B-spline sum_k c[k] beta3(p - k) over the 4x4 texels around p, as 4 bilinear fetches.
// Per axis, with i = floor(p) and a = p - i, the weights of c[i-1..i+2] are w0..w3; the pairs
// (w0, w1) and (w2, w3) become one linear fetch each, at offsets h0 = w1/g0 - 1 and
// h1 = w3/g1 + 1 from i, weighted by g0 = w0 + w1 and g1 = w2 + w3 (g0, g1 >= 1/6).
vec4 sv_fetch_cubic(sampler2D tex, vec2 p) {
  vec2 n = vec2(textureSize(tex, 0));
  vec2 i = floor(p);
  vec2 a = p - i;
  vec2 b = 1.0 - a;
  vec2 w0 = b * b * b / 6.0;
  vec2 w1 = 2.0 / 3.0 - 0.5 * a * a * (2.0 - a);
  vec2 w2 = 2.0 / 3.0 - 0.5 * b * b * (1.0 + a);
  vec2 w3 = a * a * a / 6.0;
  vec2 g0 = w0 + w1;
  vec2 g1 = w2 + w3;
  // Texture coordinates of the two fetch positions per axis.
  vec2 t0 = (i + (w1 / g0 - 1.0) + 0.5) / n;
  vec2 t1 = (i + (w3 / g1 + 1.0) + 0.5) / n;
  vec4 s00 = textureLod(tex, vec2(t0.x, t0.y), 0.0);
  vec4 s10 = textureLod(tex, vec2(t1.x, t0.y), 0.0);
  vec4 s01 = textureLod(tex, vec2(t0.x, t1.y), 0.0);
  vec4 s11 = textureLod(tex, vec2(t1.x, t1.y), 0.0);
  return g0.y * (g0.x * s00 + g1.x * s10) + g1.y * (g0.x * s01 + g1.x * s11);
}

#if defined(SV_FETCH_NEAREST)
vec4 sv_fetch(sampler2D tex, vec2 p) { return sv_fetch_nearest(tex, p); }
#elif defined(SV_FETCH_LINEAR)
vec4 sv_fetch(sampler2D tex, vec2 p) { return sv_fetch_linear(tex, p); }
#elif defined(SV_FETCH_CUBIC)
vec4 sv_fetch(sampler2D tex, vec2 p) { return sv_fetch_cubic(tex, p); }
#endif
