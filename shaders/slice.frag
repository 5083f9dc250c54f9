// slice.frag: a planar slice through a volume. Maps each window pixel to a volume position
// through an affine map (position = corner + a * right + b * up for the fragment a pixels right
// of and b pixels above the viewport's bottom-left corner; the host computes it in double, see
// app/viewer/slice_geometry.h), reconstructs the volume there with the fetch variant chosen by
// the host (SV_RANK 3, bspline_fetch.glsl), maps the value through window/level to grey, and
// paints a dark checkerboard outside the volume. Drawn with view.vert. Variants compiled with a
// quantity (bspline_quantity.glsl) show it, per mm along the volume's axes (u_axis_scale = 1 /
// spacing), through u_quantity_map instead of window/level.
#define SV_RANK 3
#include "grbf_fetch.glsl"  // SV_FETCH_GRBF: the GRBF as sv_fetch (before the quantities)
#include "bspline_quantity.glsl"

// Samples or B-spline coefficients, R32F (the value is in .r), GL_MIRRORED_REPEAT.
layout(binding = 0) uniform sampler3D u_volume;
// The affine map, positions in texture axis order (x, y, z), voxel k at position k.
layout(location = 0) uniform vec4 u_corner;  // xyz: position at the viewport's corner
layout(location = 1) uniform vec4 u_right;   // xyz: position change per pixel to the right
layout(location = 2) uniform vec4 u_up;      // xyz: position change per pixel upwards
// gl_FragCoord.xy of the viewport's bottom-left corner (its lower-left pixel's corner).
layout(location = 3) uniform vec2 u_viewport_origin;
// Window/level as grey = clamp((value - low) * scale, 0, 1): low = level - window / 2 and
// scale = 1 / window, computed on the host.
layout(location = 4) uniform vec2 u_low_scale;
// Side of one checkerboard square in window pixels.
layout(location = 5) uniform float u_checker_px;
// The quantity's display (sv_quantity_colour): (1 / range, signed, colour map, 0).
layout(location = 6) uniform vec4 u_quantity_map = vec4(1.0, 1.0, 1.0, 0.0);
// Per texture axis (x, y, z): the factor of a derivative along it, 1 / spacing (per mm).
layout(location = 7) uniform vec3 u_axis_scale = vec3(1.0);

layout(location = 0) out vec4 out_color;

vec3 background(vec2 frag) {
  ivec2 cell = ivec2(floor(frag / u_checker_px));
  return ((cell.x + cell.y) & 1) == 0 ? vec3(0.16) : vec3(0.20);
}

void main() {
  // Offsets from the viewport corner are exact (half-integers), so the error of p is that of
  // the float map, not of large window coordinates.
  vec2 ab = gl_FragCoord.xy - u_viewport_origin;
  vec3 p = u_corner.xyz + ab.x * u_right.xyz + ab.y * u_up.xyz;
  vec3 extent = vec3(textureSize(u_volume, 0));
  // The volume covers positions [-0.5, N - 0.5] on each axis.
  if (any(lessThan(p, vec3(-0.5))) || any(greaterThan(p, extent - 0.5))) {
    out_color = vec4(background(gl_FragCoord.xy), 1.0);
    return;
  }
  if (!sv_quantity_is_value()) {
    float q = sv_quantity(u_volume, p, u_axis_scale).r;
    out_color = vec4(sv_quantity_colour(vec3(q), u_quantity_map), 1.0);
    return;
  }
  float value = sv_fetch(u_volume, p).r;
  float grey = clamp((value - u_low_scale.x) * u_low_scale.y, 0.0, 1.0);
  out_color = vec4(vec3(grey), 1.0);
}
