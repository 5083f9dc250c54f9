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
// The pass as a compute shader (the default; 8x8 invocations per group, invocation (x, y) in
// place of the fragment at (x, y)), storing into the same RGBA32F target as an image.
layout(local_size_x = 8, local_size_y = 8) in;
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
