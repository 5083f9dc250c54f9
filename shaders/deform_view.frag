// deform_view.frag: one view of the deform mode. Maps each window pixel to an image position
// through a 3x3 matrix (zoom and pan, as view.frag), shows the warped image of one field kernel
// there (the voxel nearest to the position: the warp is computed at voxels, ffd_warp.comp), the
// display window on it, and the overlays:
//   det J      a colour map of det J of x -> x + u(x) (blue: compression, orange: expansion,
//              opacity growing with |log det J|); det J <= 0 (folding) opaque pure red
//   heat map   |u_kernel - u_reference| (voxels, from the CPU double reference) on a log scale
//              of four decades below u_heat_top, from transparent to yellow
//   grid       the deformed control grid: the lines where x + u(x) crosses a control-point
//              position (j - 1) delta, u interpolated linearly between voxels, about one pixel
//              wide at any zoom
// Outside the image: a dark checkerboard. SV_RANK 3: the slice z = u_slice of volume textures.
#include "bspline_common.glsl"

layout(binding = 0) uniform SV_SAMPLER u_warped;  // RGBA32F
layout(binding = 1) uniform SV_SAMPLER u_detj;    // R32F
layout(binding = 2) uniform SV_SAMPLER u_error;   // R32F
layout(binding = 3) uniform SV_SAMPLER u_field;   // RGBA32F, GL_LINEAR

layout(location = 0) uniform mat3 u_frag_to_image;
layout(location = 1) uniform float u_checker_px;
layout(location = 2) uniform vec2 u_low_gain;
layout(location = 3) uniform int u_slice;
// Bit 0: det J, bit 1: heat map, bit 2: grid.
layout(location = 4) uniform int u_overlays;
layout(location = 5) uniform vec2 u_delta;  // control-point spacing (x, y), voxels
layout(location = 6) uniform float u_heat_top;
layout(location = 7) uniform float u_opacity;  // of the det J and heat map colours

layout(location = 0) out vec4 out_color;

vec3 background(vec2 frag) {
  ivec2 cell = ivec2(floor(frag / u_checker_px));
  return ((cell.x + cell.y) & 1) == 0 ? vec3(0.16) : vec3(0.20);
}

// The heat map's colours: t in [0, 1] from dark violet through red and orange to yellow.
vec3 heat_colour(float t) {
  vec3 a = vec3(0.25, 0.0, 0.45), b = vec3(0.85, 0.15, 0.35), c = vec3(1.0, 0.6, 0.1),
       d = vec3(1.0, 1.0, 0.5);
  if (t < 1.0 / 3.0) return mix(a, b, t * 3.0);
  if (t < 2.0 / 3.0) return mix(b, c, t * 3.0 - 1.0);
  return mix(c, d, t * 3.0 - 2.0);
}

void main() {
  vec2 p = (u_frag_to_image * vec3(gl_FragCoord.xy, 1.0)).xy;
  SV_IVEC size = textureSize(u_warped, 0);
  vec2 extent = vec2(size.xy);
  if (any(lessThan(p, vec2(-0.5))) || any(greaterThan(p, extent - 0.5))) {
    out_color = vec4(background(gl_FragCoord.xy), 1.0);
    return;
  }
  ivec2 k = clamp(ivec2(floor(p + 0.5)), ivec2(0), size.xy - 1);
#if SV_RANK == 2
  SV_IVEC at = k;
  SV_VEC tc = (p + 0.5) / extent;
#else
  SV_IVEC at = ivec3(k, u_slice);
  SV_VEC tc = vec3((p + 0.5) / extent, (float(u_slice) + 0.5) / float(size.z));
#endif
  vec4 v = texelFetch(u_warped, at, 0);
  vec3 c = clamp((v.rgb - u_low_gain.x) * u_low_gain.y, 0.0, 1.0);
  float j = texelFetch(u_detj, at, 0).r;
  if ((u_overlays & 1) != 0 && j > 0.0) {
    float l = log2(j);
    vec3 tint = l < 0.0 ? vec3(0.2, 0.45, 1.0) : vec3(1.0, 0.55, 0.1);
    c = mix(c, tint, u_opacity * clamp(abs(l), 0.0, 1.0));
  }
  if ((u_overlays & 2) != 0) {
    float e = texelFetch(u_error, at, 0).r;
    if (e > 0.0) {
      float t = clamp((log(e / u_heat_top) / log(10.0) + 4.0) / 4.0, 0.0, 1.0);
      if (t > 0.0) c = mix(c, heat_colour(t), u_opacity);
    }
  }
  // Folding stays pure red over the heat map (and under the grid lines only).
  if ((u_overlays & 1) != 0 && !(j > 0.0)) c = vec3(1.0, 0.0, 0.0);
  if ((u_overlays & 4) != 0) {
    vec2 q = p + texture(u_field, tc).xy;
    vec2 g = q / u_delta + 1.0;  // control point j at g == j
    vec2 dist = abs(fract(g + 0.5) - 0.5) / max(fwidth(g), vec2(1e-6));
    float line = 1.0 - smoothstep(0.5, 1.25, min(dist.x, dist.y));
    c = mix(c, vec3(0.3, 1.0, 0.55), 0.6 * line);
  }
  out_color = vec4(c, 1.0);
}
