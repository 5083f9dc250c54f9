// bspline_common.glsl: the rank-generic building blocks of the fetch library
// (bspline_fetch.glsl): vector types for 2-D or 3-D, exact integer index extension for each
// boundary mode, the linear fetch between two adjacent texels (hardware filtered, with the
// whole-sample "mirror" boundary mapped explicitly), and the cubic B-spline weights.
//
// Compile-time switches (set by the host with #defines):
//   SV_RANK 2 | 3                 texture rank (default 2): sampler2D/vec2 or sampler3D/vec3
//   SV_BOUNDARY_REFLECT (default) half-sample symmetric; texture wrap GL_MIRRORED_REPEAT
//   SV_BOUNDARY_MIRROR            whole-sample symmetric; texture wrap GL_CLAMP_TO_EDGE (indices
//                                 are extended here, the hardware never wraps)
//   SV_BOUNDARY_PERIODIC          periodic; texture wrap GL_REPEAT
//   SV_DERIVATIVE_AXIS k          first derivative along texture axis k (0 = x, the fastest
//                                 array axis) instead of the value
//   SV_DERIVATIVE_ORDER o         the partial derivative of multi-index o instead of the value:
//                                 an SV_IVEC expression in texture axis order, e.g. ivec2(2, 0)
//                                 for d2/dx2, ivec3(1, 1, 0) for d2/dxdy; 0..2 per axis for the
//                                 precise fetch, 0..1 for the on-the-fly one (overrides
//                                 SV_DERIVATIVE_AXIS). Derivatives are per sample (per texel).
//
// All positions here are in texture axis order (x, y[, z]) and in sample units: sample k of an
// axis sits at position k, i.e. texture coordinate (k + 0.5) / N.

#ifndef SV_RANK
#define SV_RANK 2
#endif

#if SV_RANK == 2
#define SV_SAMPLER sampler2D
#define SV_VEC vec2
#define SV_IVEC ivec2
#define SV_BVEC bvec2
#elif SV_RANK == 3
#define SV_SAMPLER sampler3D
#define SV_VEC vec3
#define SV_IVEC ivec3
#define SV_BVEC bvec3
#else
#error "SV_RANK must be 2 or 3"
#endif

#if defined(SV_BOUNDARY_MIRROR) && defined(SV_BOUNDARY_PERIODIC)
#error "define at most one SV_BOUNDARY_*"
#endif

// k mod p in [0, p) for any k and p > 0, in integers only (GLSL leaves % undefined for
// negative operands, and a float quotient can be off by one).
SV_IVEC sv_mod(SV_IVEC k, SV_IVEC p) {
  SV_IVEC up = max(k, SV_IVEC(0)) % p;
  SV_IVEC down = p - SV_IVEC(1) - (max(-k - SV_IVEC(1), SV_IVEC(0)) % p);
  return mix(up, down, lessThan(k, SV_IVEC(0)));
}

// Maps integer sample indices k to [0, n-1] per the boundary mode (sv::extend_index):
//   reflect   ... 1 0 | 0 1 ... n-1 | n-1 n-2 ...   (period 2n)
//   mirror    ... 2 1 | 0 1 ... n-1 | n-2 ...       (period 2n-2; n = 1 gives 0)
//   periodic  ... n-1 | 0 1 ... n-1 | 0 ...         (period n)
SV_IVEC sv_extend(SV_IVEC k, SV_IVEC n) {
#if defined(SV_BOUNDARY_MIRROR)
  SV_IVEC p = max(2 * n - 2, SV_IVEC(1));
  SV_IVEC r = sv_mod(k, p);
  return mix(r, p - r, greaterThanEqual(r, n));
#elif defined(SV_BOUNDARY_PERIODIC)
  return sv_mod(k, n);
#else
  SV_IVEC p = 2 * n;
  SV_IVEC r = sv_mod(k, p);
  return mix(r, p - SV_IVEC(1) - r, greaterThanEqual(r, n));
#endif
}

// Hardware-filtered value at position j + t, meant for t in [0, 1] (between samples j and
// j+1 of each axis). Reflect and periodic leave the wrapping to the texture unit
// (GL_MIRRORED_REPEAT, GL_REPEAT), which extends the texel indices of the filter footprint
// exactly as sv_extend does. For mirror both indices go through sv_extend; they come out
// adjacent (possibly in reverse order), so one linear fetch at min(a, b) plus t or 1 - t
// reproduces the pair; a == b happens only for n == 1, where every fraction gives c[0].
// A t outside [0, 1] (a LUT's interpolated offsets can stray) is re-split first.
vec4 sv_fetch_between(SV_SAMPLER tex, SV_IVEC j, SV_VEC t) {
  SV_IVEC n = textureSize(tex, 0);
#if defined(SV_BOUNDARY_MIRROR)
  SV_VEC shift = floor(t);
  j += SV_IVEC(shift);
  t -= shift;
  SV_IVEC a = sv_extend(j, n);
  SV_IVEC b = sv_extend(j + SV_IVEC(1), n);
  SV_VEC q = SV_VEC(min(a, b)) + mix(t, 1.0 - t, greaterThan(a, b));
#else
  SV_VEC q = SV_VEC(j) + t;
#endif
  return textureLod(tex, (q + 0.5) / SV_VEC(n), 0.0);
}

// Cubic B-spline weights of c[i-1], c[i], c[i+1], c[i+2] for the fractional offset a = p - i
// in [0, 1), per axis (docs/SOURCES.md section 1):
//   w0 = (1-a)^3/6, w1 = 2/3 - a^2 (2-a)/2, w2 = 2/3 - (1-a)^2 (1+a)/2, w3 = a^3/6.
// w1 takes one fma; w2 closes the partition of unity (w2 = 1 - w0 - w1 - w3, which equals
// 2/3 - (1-a)^2 (1+a)/2), so the weights sum to 1 up to one rounding and a constant signal comes
// back exactly. An axis of derivative order 1 takes the derivative weights d/da: -b^2/2,
// a (3a - 4)/2, b (1 + 3a)/2 (again closing the sum, to 0), a^2/2, i.e. a pair (w0', w1') <= 0
// and a pair (w2', w3') >= 0; order 2 the second derivative weights d2/da2: b, 3a - 2, 1 - 3a
// (closing the sum to 0), a. Orders above 2 are not defined here (the host refuses them).
void sv_cubic_weights_of_order(SV_VEC a, SV_IVEC order, out SV_VEC w0, out SV_VEC w1,
                               out SV_VEC w2, out SV_VEC w3) {
  SV_VEC b = 1.0 - a;
  SV_VEC a2 = a * a;
  SV_VEC b2 = b * b;
  w0 = b2 * b * (1.0 / 6.0);
  w1 = fma(a2, 0.5 * a - 1.0, SV_VEC(2.0 / 3.0));
  w3 = a2 * a * (1.0 / 6.0);
  w2 = 1.0 - ((w0 + w1) + w3);
  for (int d = 0; d < SV_RANK; ++d) {
    if (order[d] == 1) {
      w0[d] = -0.5 * b2[d];
      w1[d] = a[d] * fma(1.5, a[d], -2.0);
      w3[d] = 0.5 * a2[d];
      w2[d] = -((w0[d] + w1[d]) + w3[d]);
    } else if (order[d] == 2) {
      w0[d] = b[d];
      w1[d] = fma(3.0, a[d], -2.0);
      w3[d] = a[d];
      w2[d] = -((w0[d] + w1[d]) + w3[d]);
    }
  }
}

// The derivative multi-index the variant was compiled for (zero: the value).
SV_IVEC sv_default_order() {
#if defined(SV_DERIVATIVE_ORDER)
  return SV_DERIVATIVE_ORDER;
#else
  SV_IVEC o = SV_IVEC(0);
#if defined(SV_DERIVATIVE_AXIS)
  o[SV_DERIVATIVE_AXIS] = 1;
#endif
  return o;
#endif
}

// The weights of the compiled variant's multi-index (sv_default_order).
void sv_cubic_weights(SV_VEC a, out SV_VEC w0, out SV_VEC w1, out SV_VEC w2, out SV_VEC w3) {
  sv_cubic_weights_of_order(a, sv_default_order(), w0, w1, w2, w3);
}

// Product of the components (the tensor-product weight of one corner or tap).
float sv_prod(vec2 v) { return v.x * v.y; }
float sv_prod(vec3 v) { return v.x * v.y * v.z; }

// Corner c (0 .. 2^rank - 1) of the 2x2(x2) footprint: bit d selects the upper pair of axis d.
SV_BVEC sv_corner(int c) {
#if SV_RANK == 2
  return bvec2((c & 1) != 0, (c & 2) != 0);
#else
  return bvec3((c & 1) != 0, (c & 2) != 0, (c & 4) != 0);
#endif
}
