// evaluate.frag: the evaluator's pass (app/gl/src/evaluator.cpp). One fragment per output
// value: either position idx = row * width + column of a list read from a storage buffer
// (float32, array axis order), or the grid position origin + row * step_row + col * step_col
// (SV_GRID; computed in double and rounded once to float, so a grid evaluates exactly where
// evaluate() would at the float-rounded positions). Writes the fetch result (or the quantity of
// bspline_quantity.glsl: a derivative, gradient magnitude, Laplacian) as RGBA32F.
// Compiled as a compute shader with SV_COMPUTE (the evaluator's default: on GPUs whose graphics
// pipeline reaches only part of the chip, such as the H100, fragments run on a few SMs while
// compute work uses all of them; docs/BENCHMARKS.md), otherwise as a fragment shader drawn
// with view.vert (one triangle covering the viewport).
#include "grbf_fetch.glsl"  // SV_FETCH_GRBF: the GRBF as sv_fetch (before the quantities)
#include "bspline_quantity.glsl"

// Per texture axis, the factor a derivative along it takes per order (bspline_quantity.glsl):
// 1 (per sample) unless the host defines it.
#ifndef SV_AXIS_SCALE
#define SV_AXIS_SCALE SV_VEC(1.0)
#endif

// Samples or B-spline coefficients; wrap mode and filtering come from the bound sampler.
layout(binding = 0) uniform SV_SAMPLER u_tex;

#if defined(SV_COMPUTE)
// The pass as a compute shader (the default; 8x8 invocations per group, or SV_TILE_SIDE^2 with
// SV_TILE, invocation (x, y) in place of the fragment at (x, y)), storing into the same RGBA32F
// target as an image.
#if defined(SV_TILE)
#ifndef SV_TILE_REP
#define SV_TILE_REP 1
#endif
layout(local_size_x = SV_TILE_SIDE, local_size_y = SV_TILE_SIDE) in;
#else
layout(local_size_x = 8, local_size_y = 8) in;
#endif
layout(binding = 0, rgba32f) uniform writeonly image2D u_out;
layout(location = 4) uniform ivec2 u_size;  // fragments of this pass (columns, rows)
#else
layout(location = 0) out vec4 out_value;
#endif

#if defined(SV_GRID)
// Grid origin and steps in array axis order (z, y, x) or (y, x) in the first SV_RANK
// components; u_first = (first column, first row) of this tile.
layout(location = 0) uniform dvec3 u_origin;
layout(location = 1) uniform dvec3 u_step_row;
layout(location = 2) uniform dvec3 u_step_col;
layout(location = 3) uniform ivec2 u_first;
#else
// Positions of this tile, SV_RANK floats each in array axis order.
layout(std430, binding = 0) readonly buffer sv_positions { float u_positions[]; };
layout(location = 0) uniform int u_width;  // render target width in fragments
layout(location = 1) uniform int u_count;  // positions in this tile
#endif

#if defined(SV_TILE)
// Shared-memory tiled precise fetch over a grid (SV_TILE with SV_COMPUTE, SV_GRID,
// SV_FETCH_CUBIC_PRECISE, a single-channel texture; the host uses it for 3-D). Each workgroup
// of SV_TILE_SIDE^2 invocations is one tile of (SV_TILE_SIDE * SV_TILE_REP)^2 outputs. The grid
// mapping is affine, so the positions of a tile lie (up to rounding) within the box of its four
// corner positions; that box of coefficient indices, widened by the cubic support
// (floor(min) - 1 .. floor(max) + 2 per axis, plus a margin for the float arithmetic of the
// corners), is loaded once into shared memory with texelFetch (and the boundary extension,
// sv_extend, unless the box lies inside the texture), and every invocation (SV_TILE_REP^2
// output pixels, SV_TILE_SIDE apart) then blends its 4^rank taps from there with the weights and
// fma order of sv_fetch_cubic_precise: the same arithmetic on the same texel values, no
// hardware filtering. Each pixel's position is the grid's double-precision position rounded
// once to float, exactly as in the untiled grid pass.
// A box of more than SV_TILE_BUDGET texels (magnification below about 1 for 32-pixel tiles)
// makes the whole workgroup use sv_fetch instead (the branch is uniform per workgroup); an
// invocation whose taps fall outside the box anyway (rounding at a corner's texel boundary)
// uses sv_fetch on its own.
shared float sv_tile[SV_TILE_BUDGET];
vec4 sv_tile_row(int o) { return vec4(sv_tile[o], sv_tile[o + 1], sv_tile[o + 2], sv_tile[o + 3]); }

// Conversions run at a fraction of the FP32 rate, so the tiled pass avoids most of them:
// double(x) for 0 <= x < 2^32 from the bits of 2^52 + x; the integer of an integer-valued float
// |i| < 2^22 from the bits of i + 1.5 * 2^23 (exponent 23: the low mantissa bits are i + 2^22);
// float(x) for 0 <= x < 2^23 from the bits of 2^23 + x.
double sv_exact_double(int x) {
  return packDouble2x32(uvec2(uint(x), 0x43300000u)) - 4503599627370496.0;
}
SV_IVEC sv_exact_int(SV_VEC i) { return floatBitsToInt(i + 12582912.0) - 0x4B400000; }
float sv_exact_float(int x) { return intBitsToFloat(x + 0x4B000000) - 8388608.0; }

// The grid position of column col in the row whose part u_origin + row * u_step_row is q_row:
// the operations and order of the untiled grid pass (main below), with the row part shared.
SV_VEC sv_grid_position_in(dvec3 q_row, int col) {
  dvec3 q = q_row + sv_exact_double(col) * u_step_col;
#if SV_RANK == 2
  return vec2(dvec2(q.y, q.x));
#else
  return vec3(dvec3(q.z, q.y, q.x));
#endif
}
dvec3 sv_grid_row(int row) { return u_origin + sv_exact_double(row) * u_step_row; }

// One row of 4 taps (t, along x) weighted with w[0..3].x in the fma order of sv_precise_row.
float sv_tile_blend_row(vec4 t, SV_VEC w[4]) {
  float row = w[0].x * t.x;
  row = fma(w[1].x, t.y, row);
  row = fma(w[2].x, t.z, row);
  row = fma(w[3].x, t.w, row);
  return row;
}

// The precise blend from shared memory: l = index of tap 0 per axis relative to the box origin,
// ext = box size, w = the weights of sv_cubic_weights.
float sv_tile_fetch(SV_IVEC l, SV_IVEC ext, SV_VEC w[4]) {
#if SV_RANK == 2
  float acc = 0.0;
  for (int y = 0; y < 4; ++y)
    acc = fma(w[y].y, sv_tile_blend_row(sv_tile_row((l.y + y) * ext.x + l.x), w), acc);
  return acc;
#else
  float acc = 0.0;
  for (int z = 0; z < 4; ++z) {
    float plane = 0.0;
    for (int y = 0; y < 4; ++y) {
      vec4 t = sv_tile_row(((l.z + z) * ext.y + l.y + y) * ext.x + l.x);
      plane = fma(w[y].y, sv_tile_blend_row(t, w), plane);
    }
    acc = fma(w[z].z, plane, acc);
  }
  return acc;
#endif
}

// One output at p: from shared memory when its taps lie in the box, else from the texture.
vec4 sv_tile_pixel(SV_VEC p, bool fits, SV_IVEC base, SV_IVEC ext) {
  SV_VEC i = floor(p);
  SV_IVEC l = sv_exact_int(i) - SV_IVEC(1) - base;  // fits: |p| < 2^21 in this tile
  if (fits && all(greaterThanEqual(l, SV_IVEC(0))) && all(lessThanEqual(l + SV_IVEC(4), ext))) {
    SV_VEC w[4];
    sv_cubic_weights(p - i, w[0], w[1], w[2], w[3]);
    return vec4(sv_tile_fetch(l, ext, w), 0.0, 0.0, 1.0);
  }
  return sv_fetch(u_tex, p);
}

void main() {
  // The tile's corners (clamped to this pass), the same for every invocation of the group.
  const int side = SV_TILE_SIDE * SV_TILE_REP;  // pixels per tile side
  ivec2 c0 = ivec2(gl_WorkGroupID.xy) * side;
  ivec2 c1 = min(c0 + ivec2(side - 1), u_size - 1);
  // The corners in float arithmetic (no conversions beyond the floors), the box widened by a
  // margin above their rounding error (|p| < 2^21 is required for the tile, see below); a
  // position outside it anyway is caught per invocation.
#if SV_RANK == 2
  SV_VEC o = vec2(u_origin.y, u_origin.x), sr = vec2(u_step_row.y, u_step_row.x),
         sc = vec2(u_step_col.y, u_step_col.x);
#else
  SV_VEC o = vec3(u_origin.z, u_origin.y, u_origin.x),
         sr = vec3(u_step_row.z, u_step_row.y, u_step_row.x),
         sc = vec3(u_step_col.z, u_step_col.y, u_step_col.x);
#endif
  ivec2 f0 = c0 + u_first, f1 = c1 + u_first;
  float r0 = sv_exact_float(f0.y), r1 = sv_exact_float(f1.y);
  float q0 = sv_exact_float(f0.x), q1 = sv_exact_float(f1.x);
  SV_VEC p00 = o + r0 * sr + q0 * sc, p01 = o + r0 * sr + q1 * sc;
  SV_VEC p10 = o + r1 * sr + q0 * sc, p11 = o + r1 * sr + q1 * sc;
  SV_VEC lo = min(min(p00, p01), min(p10, p11)), hi = max(max(p00, p01), max(p10, p11));
  SV_VEC margin = SV_VEC(1e-3) + 1e-5 * max(abs(lo), abs(hi));
  bool small = all(lessThan(max(abs(lo), abs(hi)), SV_VEC(2097152.0)));  // 2^21
  lo = clamp(floor(lo - margin), SV_VEC(-2097152.0), SV_VEC(2097152.0));
  hi = clamp(floor(hi + margin), SV_VEC(-2097152.0), SV_VEC(2097152.0));
  SV_IVEC base = sv_exact_int(lo) - SV_IVEC(1);
  SV_IVEC ext = sv_exact_int(hi) + SV_IVEC(3) - base;
#if SV_RANK == 2
  int volume = ext.x * ext.y;
#else
  int volume = ext.x * ext.y * ext.z;
#endif
  bool fits = small && volume <= SV_TILE_BUDGET;  // uniform over the workgroup
  if (fits) {
    SV_IVEC n = textureSize(u_tex, 0);
    // Flat index t -> box indices; the quotients by ext.x and ext.y come from float reciprocals,
    // exact here: t < SV_TILE_BUDGET <= 2^12, so (t + 1/2) / e stays at least 1 / (2 e) from an integer while
    // its rounding error is below 2^-10 / e.
    vec2 inv = 1.0 / vec2(ext.xy);
    bool inside = all(greaterThanEqual(base, SV_IVEC(0))) && all(lessThanEqual(base + ext, n));
    for (int t = int(gl_LocalInvocationIndex); t < volume; t += SV_TILE_SIDE * SV_TILE_SIDE) {
      int r = int((float(t) + 0.5) * inv.x);
#if SV_RANK == 2
      SV_IVEC k = ivec2(t - r * ext.x, r);
#else
      int zq = int((float(r) + 0.5) * inv.y);
      SV_IVEC k = ivec3(t - r * ext.x, r - zq * ext.y, zq);
#endif
      // boxes inside the texture (uniform) need no boundary extension
      SV_IVEC j = inside ? base + k : sv_extend(base + k, n);
      sv_tile[t] = texelFetch(u_tex, j, 0).r;
    }
    barrier();
  }
  // Each invocation computes SV_TILE_REP^2 pixels, SV_TILE_SIDE apart.
  for (int sy = 0; sy < SV_TILE_REP; ++sy) {
    dvec3 q_row = sv_grid_row(c0.y + int(gl_LocalInvocationID.y) + sy * SV_TILE_SIDE + u_first.y);
    for (int sx = 0; sx < SV_TILE_REP; ++sx) {
      ivec2 px = c0 + ivec2(gl_LocalInvocationID.xy) + ivec2(sx, sy) * SV_TILE_SIDE;
      SV_VEC p = sv_grid_position_in(q_row, px.x + u_first.x);
      vec4 v = sv_tile_pixel(p, fits, base, ext);
      if (all(lessThan(px, u_size))) imageStore(u_out, px, v);
    }
  }
}
#else
void main() {
#if defined(SV_COMPUTE)
  ivec2 px = ivec2(gl_GlobalInvocationID.xy);
  if (any(greaterThanEqual(px, u_size))) return;
  vec4 out_value;
#else
  ivec2 px = ivec2(gl_FragCoord.xy);
#endif
#if defined(SV_GRID)
  ivec2 rc = px + u_first;
  dvec3 q = u_origin + double(rc.y) * u_step_row + double(rc.x) * u_step_col;
#if SV_RANK == 2
  SV_VEC p = vec2(dvec2(q.y, q.x));
#else
  SV_VEC p = vec3(dvec3(q.z, q.y, q.x));
#endif
#else
  int idx = px.y * u_width + px.x;
  if (idx >= u_count) {
#if defined(SV_COMPUTE)
    imageStore(u_out, px, vec4(0.0));
#else
    out_value = vec4(0.0);
#endif
    return;
  }
  int base = idx * SV_RANK;
#if SV_RANK == 2
  SV_VEC p = vec2(u_positions[base + 1], u_positions[base]);
#else
  SV_VEC p = vec3(u_positions[base + 2], u_positions[base + 1], u_positions[base]);
#endif
#endif
  out_value = sv_quantity(u_tex, p, SV_AXIS_SCALE);
#if defined(SV_COMPUTE)
  imageStore(u_out, px, out_value);
#endif
}
#endif
