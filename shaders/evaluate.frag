// evaluate.frag: the evaluator's pass (app/gl/src/evaluator.cpp). One fragment per output
// value: either position idx = row * width + column of a list read from a storage buffer
// (float32, array axis order), or the grid position origin + row * step_row + col * step_col
// (SV_GRID; computed in double and rounded once to float, so a grid evaluates exactly where
// evaluate() would at the float-rounded positions). Writes the fetch result as RGBA32F.
// Compiled as a compute shader with SV_COMPUTE (the evaluator's default: on GPUs whose graphics
// pipeline reaches only part of the chip, such as the H100, fragments run on a few SMs while
// compute work uses all of them; docs/BENCHMARKS.md), otherwise as a fragment shader drawn
// with view.vert (one triangle covering the viewport).
#include "bspline_fetch.glsl"

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
// mapping is affine, so the positions of a tile lie (up to the rounding to float) within the box
// of its four corner positions; that box of coefficient indices, widened by the cubic support
// (floor(min) - 1 .. floor(max) + 2 per axis), is loaded once into shared memory with texelFetch
// and the boundary extension (sv_extend), and every invocation (SV_TILE_REP^2 output pixels
// each, SV_TILE_SIDE apart) then blends its 4^rank taps from there with the weights and fma
// order of sv_fetch_cubic_precise: the same arithmetic on the same texel values, no hardware
// filtering.
// A box of more than SV_TILE_BUDGET texels (magnification below about 1) makes the whole
// workgroup use sv_fetch instead (the branch is uniform per workgroup); an invocation whose taps
// fall outside the box anyway (the float rounding of an interior position crossing a corner's
// texel boundary) uses sv_fetch on its own.
shared float sv_tile[SV_TILE_BUDGET];

SV_VEC sv_grid_position(ivec2 rc) {
  dvec3 q = u_origin + double(rc.y) * u_step_row + double(rc.x) * u_step_col;
#if SV_RANK == 2
  return vec2(dvec2(q.y, q.x));
#else
  return vec3(dvec3(q.z, q.y, q.x));
#endif
}

// The precise blend from shared memory: l = index of tap 0 per axis relative to the box origin,
// ext = box size, w = the weights of sv_cubic_weights.
float sv_tile_fetch(SV_IVEC l, SV_IVEC ext, SV_VEC w[4]) {
#if SV_RANK == 2
  float acc = 0.0;
  for (int y = 0; y < 4; ++y) {
    int o = (l.y + y) * ext.x + l.x;
    float row = w[0].x * sv_tile[o];
    row = fma(w[1].x, sv_tile[o + 1], row);
    row = fma(w[2].x, sv_tile[o + 2], row);
    row = fma(w[3].x, sv_tile[o + 3], row);
    acc = fma(w[y].y, row, acc);
  }
  return acc;
#else
  float acc = 0.0;
  for (int z = 0; z < 4; ++z) {
    float plane = 0.0;
    for (int y = 0; y < 4; ++y) {
      int o = ((l.z + z) * ext.y + l.y + y) * ext.x + l.x;
      float row = w[0].x * sv_tile[o];
      row = fma(w[1].x, sv_tile[o + 1], row);
      row = fma(w[2].x, sv_tile[o + 2], row);
      row = fma(w[3].x, sv_tile[o + 3], row);
      plane = fma(w[y].y, row, plane);
    }
    acc = fma(w[z].z, plane, acc);
  }
  return acc;
#endif
}

void main() {
  // The tile's corners (clamped to this pass), the same for every invocation of the group.
  const int side = SV_TILE_SIDE * SV_TILE_REP;  // pixels per tile side
  ivec2 c0 = ivec2(gl_WorkGroupID.xy) * side;
  ivec2 c1 = min(c0 + ivec2(side - 1), u_size - 1);
  SV_VEC p00 = sv_grid_position(c0 + u_first);
  SV_VEC p01 = sv_grid_position(ivec2(c1.x, c0.y) + u_first);
  SV_VEC p10 = sv_grid_position(ivec2(c0.x, c1.y) + u_first);
  SV_VEC p11 = sv_grid_position(c1 + u_first);
  SV_IVEC base = SV_IVEC(floor(min(min(p00, p01), min(p10, p11)))) - SV_IVEC(1);
  SV_IVEC ext = SV_IVEC(floor(max(max(p00, p01), max(p10, p11)))) + SV_IVEC(3) - base;
#if SV_RANK == 2
  int volume = ext.x * ext.y;
#else
  int volume = ext.x * ext.y * ext.z;
#endif
  bool fits = volume <= SV_TILE_BUDGET;  // uniform over the workgroup
  if (fits) {
    SV_IVEC n = textureSize(u_tex, 0);
    for (int t = int(gl_LocalInvocationIndex); t < volume; t += SV_TILE_SIDE * SV_TILE_SIDE) {
      int r = t / ext.x;
#if SV_RANK == 2
      SV_IVEC k = ivec2(t - r * ext.x, r);
#else
      int zq = r / ext.y;
      SV_IVEC k = ivec3(t - r * ext.x, r - zq * ext.y, zq);
#endif
      sv_tile[t] = texelFetch(u_tex, sv_extend(base + k, n), 0).r;
    }
    barrier();
  }
  // Each invocation computes SV_TILE_REP^2 pixels, SV_TILE_SIDE apart.
  for (int sy = 0; sy < SV_TILE_REP; ++sy) {
    for (int sx = 0; sx < SV_TILE_REP; ++sx) {
      ivec2 px = c0 + ivec2(gl_LocalInvocationID.xy) + ivec2(sx, sy) * SV_TILE_SIDE;
      SV_VEC p = sv_grid_position(px + u_first);
      vec4 out_value;
      SV_VEC i = floor(p);
      SV_IVEC l = SV_IVEC(i) - SV_IVEC(1) - base;
      if (fits && all(greaterThanEqual(l, SV_IVEC(0))) &&
          all(lessThanEqual(l + SV_IVEC(4), ext))) {
        SV_VEC w[4];
        sv_cubic_weights(p - i, w[0], w[1], w[2], w[3]);
        out_value = vec4(sv_tile_fetch(l, ext, w), 0.0, 0.0, 1.0);
      } else {
        out_value = sv_fetch(u_tex, p);
      }
      if (all(lessThan(px, u_size))) imageStore(u_out, px, out_value);
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
  out_value = sv_fetch(u_tex, p);
#if defined(SV_COMPUTE)
  imageStore(u_out, px, out_value);
#endif
}
#endif
