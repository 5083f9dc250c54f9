// view.frag: the image view. Maps each window pixel to an image position through a 3x3
// matrix (zoom and pan), reconstructs the image there with the fetch variant chosen by the
// host (see bspline_fetch.glsl), applies the display window to the result (after the
// interpolation, so the methods reconstruct unclamped data), and paints a dark checkerboard
// outside the image extent. Variants compiled with a quantity (bspline_quantity.glsl: a partial
// derivative, gradient magnitude, Laplacian, per texel) show it through u_quantity_map instead of
// the window.
#include "grbf_fetch.glsl"  // SV_FETCH_GRBF: the GRBF as sv_fetch (before the quantities)
#include "bspline_quantity.glsl"

// Samples or B-spline coefficients, RGBA (grey images are swizzled to RGBA by the host).
layout(binding = 0) uniform sampler2D u_image;
// gl_FragCoord.xy (window pixels, origin bottom left) -> image position (sample k at k,
// x right, y down).
layout(location = 0) uniform mat3 u_frag_to_image;
// Side of one checkerboard square in window pixels.
layout(location = 1) uniform float u_checker_px;
// The display window on the (normalised) colour channels: grey = clamp((v - low) * gain, 0, 1),
// (low, gain) = (0, 1), the initial value (passes that never set it), shows [0, 1] as it is
// (app/viewer/display_window.h, DisplayMap).
layout(location = 2) uniform vec2 u_low_gain = vec2(0.0, 1.0);
// The quantity's display (sv_quantity_colour): (1 / range, signed, colour map, 0).
layout(location = 3) uniform vec4 u_quantity_map = vec4(1.0, 1.0, 1.0, 0.0);

layout(location = 0) out vec4 out_color;

vec3 background(vec2 frag) {
  ivec2 cell = ivec2(floor(frag / u_checker_px));
  return ((cell.x + cell.y) & 1) == 0 ? vec3(0.16) : vec3(0.20);
}

void main() {
  vec2 p = (u_frag_to_image * vec3(gl_FragCoord.xy, 1.0)).xy;
  vec2 extent = vec2(textureSize(u_image, 0));
  vec3 bg = background(gl_FragCoord.xy);
  // The image covers positions [-0.5, N - 0.5] on each axis.
  if (any(lessThan(p, vec2(-0.5))) || any(greaterThan(p, extent - 0.5))) {
    out_color = vec4(bg, 1.0);
    return;
  }
  // The reconstruction overshoots (and so do coefficients): window, then clamp to the
  // displayable range. Alpha is not windowed.
  if (!sv_quantity_is_value()) {
    // Derivatives are opaque (alpha's derivative is not a coverage).
    out_color = vec4(sv_quantity_colour(sv_quantity(u_image, p, vec2(1.0)).rgb, u_quantity_map),
                     1.0);
    return;
  }
  vec4 v = sv_fetch(u_image, p);
  vec4 c = clamp(vec4((v.rgb - u_low_gain.x) * u_low_gain.y, v.a), 0.0, 1.0);
  out_color = vec4(mix(bg, c.rgb, c.a), 1.0);
}
