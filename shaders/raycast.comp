// raycast.comp: the volume mode's ray-cast 3-D view, one invocation per pixel of a pane. The
// rays, segments and rules are those of app/viewer/raycast_reference.h (its CPU march is this
// shader's reference): a pixel's ray in voxel index space (texture order x, y, z; voxel k at k)
// enters and leaves the box [-1/2, N - 1/2] at t0 < t1, is cut into segments of u_step voxels
// sampled at their midpoints with the fetch variant chosen by the host (bspline_fetch.glsl:
// SV_FETCH_LINEAR on the samples, SV_FETCH_CUBIC (on the fly) or SV_FETCH_CUBIC_PRECISE on the
// coefficients), and one mode:
//   RC_MIP  the largest sample, grey through window/level;
//   RC_ISO  the first crossing of u_iso (bisection, then one secant step in the last bracket),
//           Blinn-Phong shaded with a headlight; the normal is -grad of the spline: for the cubic
//           the exact derivative weights (precise: one pass over the 4x4x4 taps for value and
//           gradient; on the fly: three derivative fetches of 8 linear fetches each, the lerp
//           trick holding because each pair of derivative weights has one sign), for trilinear
//           central differences over one voxel;
//   RC_DVR  front-to-back emission-absorption through a 1-D transfer function (exact float
//           interpolation of its table), early termination at u_dvr.y; with u_shade.x, each
//           visible sample's colour is scaled by 0.35 + 0.65 |n . v| (a two-sided headlight, n
//           the normalised spline gradient as for the isosurface) where |grad| > u_shade.y.
// Empty-space skipping (u_skip, bit 1): u_cells holds per cell of RC_CELL^3 voxels (8; 4 for the
// precise cubic) a range (min, max) that no sample in the cell leaves (raycast_cells.comp): for
// trilinear and the hardware-filtered cubic the smallest and largest texel over every tap a
// sample in the cell can reach (voxels 8c-2 .. 8c+9 per axis; a cubic B-spline value is a convex
// combination of its 64 coefficients, a trilinear value one of 8 samples); for the precise cubic
// the range of the Bezier control nets of the unit cubes the cell's samples reach (the spline on
// a unit cube is a Bezier patch, within its control points), much tighter where the prefilter's
// coefficients ring. A cell whose range cannot raise the MIP, holds no crossing, or lies where
// the transfer function is transparent is skipped to its exit. The precise cubic also checks
// each sample (bit 2) against u_fine, the largest Bezier control point of the sample's unit cube
// (texel floor(p) + 1), before its 64 taps are read: a MIP sample that cannot exceed the maximum
// so far, an isosurface sample below the iso value, a DVR sample below the transfer function's
// visible range is left out. A MIP with a cubic (bit 4) first visits one sample: the segment
// whose midpoint is the largest on a trilinear march of the samples (u_samples, every
// RC_SEED_STRIDE-th segment), so that the march starts with a value it would reach anyway and
// skips every cell and sample that cannot exceed it. None of this changes a result: the segments
// stay those of the march without skipping, every position is computed by the same precise
// expression (rc_mid, rc_point), and only samples that cannot change the result are left out.
//
// Output: u_colour (RGBA8, composited over the background) and u_data (RGBA32F: MIP (value, hit,
// samples whose taps were read, loop iterations); iso (depth mm or -1, world normal); DVR
// premultiplied (r, g, b, a)). Pixel (gid * u_stride + u_offset) of the pane is written at gid:
// the accuracy meter dispatches every n-th ray into a small image, the view every ray.
#define SV_RANK 3
#include "bspline_fetch.glsl"

layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;

layout(binding = 0) uniform sampler3D u_volume;  // samples or coefficients, R32F, reflect
layout(binding = 3) uniform sampler3D u_cells;   // RG32F (min, max) per 8^3 cell
layout(binding = 4) uniform sampler1D u_tf;      // RGBA32F, RC_DVR
layout(binding = 5) uniform sampler3D u_samples;  // R32F samples, GL_LINEAR: the MIP's first visit
layout(binding = 6) uniform sampler3D u_fine;     // R32F largest Bezier point per unit cube
layout(binding = 0, rgba8) uniform writeonly image2D u_colour;
layout(binding = 1, rgba32f) uniform writeonly image2D u_data;

layout(location = 0) uniform ivec4 u_pane;  // xy: pane size; zw: pixel stride
layout(location = 1) uniform ivec2 u_offset;
layout(location = 2) uniform vec3 u_eye;  // index space
layout(location = 3) uniform vec3 u_d0;   // index-space direction of pixel (0, 0)
layout(location = 4) uniform vec3 u_dx;
layout(location = 5) uniform vec3 u_dy;
layout(location = 6) uniform vec3 u_w0;  // the same in world mm
layout(location = 7) uniform vec3 u_wx;
layout(location = 8) uniform vec3 u_wy;
layout(location = 9) uniform mat3 u_normal_matrix;  // index gradient -> world gradient
layout(location = 10) uniform vec3 u_light;         // world, towards the eye
layout(location = 11) uniform float u_step;
layout(location = 12) uniform vec2 u_low_scale;  // MIP grey = (value - low) * scale
layout(location = 13) uniform vec4 u_iso;        // x: iso value; y: bisection steps
layout(location = 14) uniform vec4 u_tf_range;   // low, high, visible low, visible high
layout(location = 15) uniform vec2 u_dvr;        // opacity per mm, cut-off
layout(location = 16) uniform int u_skip;  // bits: 1 cells, 2 fine (precise), 4 MIP first visit
layout(location = 17) uniform vec3 u_background;
layout(location = 18) uniform vec2 u_shade;  // DVR: x != 0 shades; y: the smallest |gradient|

const float kInf = uintBitsToFloat(0x7f800000u);
#ifndef RC_CELL
#define RC_CELL 8
#endif
const int kCell = RC_CELL;  // voxels per empty-space cell and axis

float rc_value(vec3 p) { return sv_fetch(u_volume, p).r; }

// Segment k of the ray [t0, t1]: [a, b] = [t0 + k step, min(a + step, t1)] and its midpoint,
// computed without contraction so that every place that needs segment k gets the same bits.
float rc_mid(float t0, float t1, int k, out float a, out float b) {
  precise float pa = t0 + float(k) * u_step;
  precise float pb = min(pa + u_step, t1);
  precise float t = 0.5 * (pa + pb);
  a = pa;
  b = pb;
  return t;
}

vec3 rc_point(float t, vec3 dir) {
  precise vec3 p = u_eye + t * dir;
  return p;
}

// Index-space gradient of the pane's interpolant at p.
vec3 rc_gradient(vec3 p) {
#if defined(SV_FETCH_LINEAR)
  // Trilinear has no continuous gradient: central differences over one voxel.
  return 0.5 * vec3(rc_value(p + vec3(1, 0, 0)) - rc_value(p - vec3(1, 0, 0)),
                    rc_value(p + vec3(0, 1, 0)) - rc_value(p - vec3(0, 1, 0)),
                    rc_value(p + vec3(0, 0, 1)) - rc_value(p - vec3(0, 0, 1)));
#else
  vec3 i = floor(p);
  vec3 a = p - i;
  vec3 w0, w1, w2, w3;
  sv_cubic_weights(a, w0, w1, w2, w3);
  vec3 b = 1.0 - a;
  vec3 d0 = -0.5 * b * b;
  vec3 d1 = a * fma(vec3(1.5), a, vec3(-2.0));
  vec3 d3 = 0.5 * a * a;
  vec3 d2 = -((d0 + d1) + d3);
#if defined(SV_FETCH_CUBIC)
  vec3 g = vec3(0.0);
  for (int k = 0; k < 3; ++k) {
    vec3 g0 = w0 + w1, g1 = w2 + w3;
    vec3 t0 = w1 / g0, t1 = w3 / g1;
    g0[k] = d0[k] + d1[k];
    g1[k] = d2[k] + d3[k];
    t0[k] = d1[k] / g0[k];
    t1[k] = d3[k] / g1[k];
    g[k] = sv_cubic_blend(u_volume, i, g0, g1, t0, t1).r;
  }
  return g;
#else
  // Precise: the 4x4x4 taps once, blended with the value and derivative weights.
  ivec3 n = textureSize(u_volume, 0);
  vec3 w[4] = vec3[4](w0, w1, w2, w3);
  vec3 d[4] = vec3[4](d0, d1, d2, d3);
  ivec3 e[4];
  for (int k = 0; k < 4; ++k) e[k] = sv_extend(ivec3(i) + ivec3(k - 1), n);
  vec3 g = vec3(0.0);
  for (int z = 0; z < 4; ++z) {
    for (int y = 0; y < 4; ++y) {
      float rv = 0.0, rd = 0.0;
      for (int x = 0; x < 4; ++x) {
        float c = texelFetch(u_volume, ivec3(e[x].x, e[y].y, e[z].z), 0).r;
        rv = fma(w[x].x, c, rv);
        rd = fma(d[x].x, c, rd);
      }
      g.x = fma(w[z].z * w[y].y, rd, g.x);
      g.y = fma(w[z].z * d[y].y, rv, g.y);
      g.z = fma(d[z].z * w[y].y, rv, g.z);
    }
  }
  return g;
#endif
#endif
}

// The transfer function at a value, its table interpolated with exact float weights.
vec4 rc_tf(float v) {
  int texels = textureSize(u_tf, 0);
  float last = float(texels - 1);
  float u = clamp((v - u_tf_range.x) / (u_tf_range.y - u_tf_range.x) * last, 0.0, last);
  int i = int(floor(u));
  int i1 = min(i + 1, texels - 1);
  return mix(texelFetch(u_tf, i, 0), texelFetch(u_tf, i1, 0), u - float(i));
}

// The exit of the ray from cell c (index units along the ray).
float rc_cell_exit(vec3 eye, vec3 dir, ivec3 c) {
  vec3 lo = vec3(c * kCell) - 0.5;
  vec3 hi = lo + float(kCell);
  vec3 bound = mix(lo, hi, greaterThan(dir, vec3(0.0)));
  vec3 t = mix((bound - eye) / dir, vec3(kInf), equal(dir, vec3(0.0)));
  return min(t.x, min(t.y, t.z));
}

#if defined(RC_MIP) && !defined(SV_FETCH_LINEAR)
// The MIP's first visit: the segment whose midpoint is largest on a trilinear march of the
// samples (every RC_SEED_STRIDE-th segment), a cheap guess at where the cubic's maximum lies.
#ifndef RC_SEED_STRIDE
#define RC_SEED_STRIDE 4
#endif
int rc_seed(float t0, float t1, int segments, vec3 dir) {
  float hi = -kInf;
  int arg = 0;
  for (int k = 0; k < segments; k += RC_SEED_STRIDE) {
    float a, b;
    float v = sv_fetch_linear(u_samples, rc_point(rc_mid(t0, t1, k, a, b), dir)).r;
    if (v > hi) {
      hi = v;
      arg = k;
    }
  }
  return arg;
}
#endif

void main() {
  ivec2 gid = ivec2(gl_GlobalInvocationID.xy);
  ivec2 out_size = imageSize(u_data);
  if (any(greaterThanEqual(gid, out_size))) return;
  ivec2 pixel = gid * u_pane.zw + u_offset;
  if (any(greaterThanEqual(pixel, u_pane.xy))) return;
  vec2 xy = vec2(pixel);
  vec3 w = u_w0 + xy.x * u_wx + xy.y * u_wy;
  vec3 di = u_d0 + xy.x * u_dx + xy.y * u_dy;
  float len = length(di);
  vec3 dir = di / len;
  float mm = length(w) / len;

  vec4 colour = vec4(u_background, 1.0);
  vec4 data = vec4(0.0);
#if defined(RC_ISO)
  data.x = -1.0;
#endif
  // The box [-1/2, N - 1/2].
  vec3 n = vec3(textureSize(u_volume, 0));
  vec3 inv = 1.0 / dir;
  vec3 ta = (vec3(-0.5) - u_eye) * inv, tb = (n - 0.5 - u_eye) * inv;
  vec3 tmin = min(ta, tb), tmax = max(ta, tb);
  float t0 = max(0.0, max(tmin.x, max(tmin.y, tmin.z)));
  float t1 = min(tmax.x, min(tmax.y, tmax.z));
  if (t0 < t1) {
    int segments = int(ceil((t1 - t0) / u_step));
    ivec3 cells = textureSize(u_cells, 0);
    int samples = 0, steps = 0;  // samples whose taps were read; loop iterations
#if defined(RC_MIP)
    float best = -kInf;
#elif defined(RC_ISO)
    bool have_prev = false;
    float prev_t = 0.0, prev_v = 0.0;
    bool hit = false;
    float t_hit = 0.0;
#else
    vec3 acc = vec3(0.0);
    float alpha_acc = 0.0;
#endif
    int first = -1;  // the MIP's first visit, if any
#if defined(RC_MIP) && !defined(SV_FETCH_LINEAR)
    if ((u_skip & 4) != 0) first = rc_seed(t0, t1, segments, dir);
#endif
#if defined(SV_FETCH_CUBIC_PRECISE)
    ivec3 fine = textureSize(u_fine, 0);
#endif
    // Two loops: the inner one finds the next segment whose sample may change the result, reading
    // no taps (cells and per-sample bounds only); the outer one reads its taps. Rays that skip
    // different numbers of samples then still read their taps together, a warp (or SIMD row)
    // at a time, rather than each waiting out the others' fetches.
    bool visit_first = first >= 0;
    int k = 0;
    for (;;) {
      float a = 0.0, b = 0.0, t = 0.0;
      vec3 p = vec3(0.0);
      if (visit_first) {
        ++steps;
        t = rc_mid(t0, t1, first, a, b);
        p = rc_point(t, dir);
      } else {
        bool found = false;
        for (; k < segments; ++k) {
          if (k == first) continue;  // its value is in `best` already
          ++steps;
          t = rc_mid(t0, t1, k, a, b);
          p = rc_point(t, dir);
          if ((u_skip & 1) != 0) {
            ivec3 c = clamp(ivec3(floor((p + 0.5) / float(kCell))), ivec3(0), cells - 1);
            vec2 range = texelFetch(u_cells, c, 0).rg;
#if defined(RC_MIP)
            bool skip = range.y <= best;
#elif defined(RC_ISO)
            // Cells wholly below the iso value hold no crossing; a cell that reaches it is
            // sampled.
            bool skip = range.y < u_iso.x;
#else
            bool skip = range.y < u_tf_range.z || range.x > u_tf_range.w;
#endif
            if (skip) {
              float exit_t = rc_cell_exit(u_eye, dir, c);
              int next = max(k + 1, int(ceil((exit_t - t0) / u_step - 0.5)));
#if defined(RC_ISO)
              // Every skipped midpoint lies below the iso value; the last one opens the next
              // bracket, its value fetched only if a crossing follows.
              have_prev = true;
              float pa, pb;
              prev_t = rc_mid(t0, t1, next - 1, pa, pb);
              prev_v = kInf;
#endif
              k = next - 1;
              continue;
            }
          }
#if defined(SV_FETCH_CUBIC_PRECISE)
          if ((u_skip & 2) != 0) {
            // The largest Bezier control point of unit cube floor(p) (the fetch's own cube).
            float top = texelFetch(u_fine, clamp(ivec3(floor(p)) + 1, ivec3(0), fine - 1), 0).r;
#if defined(RC_MIP)
            if (top <= best) continue;
#elif defined(RC_ISO)
            if (top < u_iso.x) {
              have_prev = true;
              prev_t = t;
              prev_v = kInf;
              continue;
            }
#else
            if (top < u_tf_range.z) continue;
#endif
          }
#endif
          found = true;
          break;
        }
        if (!found) break;
      }
      // The one place that reads taps: the first visit and the march share it (same bits).
      float v = rc_value(p);
      ++samples;
#if defined(RC_MIP)
      best = max(best, v);
#elif defined(RC_ISO)
      if (v >= u_iso.x) {
        hit = true;
        t_hit = t;
        if (have_prev) {
          if (isinf(prev_v)) prev_v = rc_value(rc_point(prev_t, dir));
          float lo = prev_t, hi = t, flo = prev_v - u_iso.x, fhi = v - u_iso.x;
          int steps = int(u_iso.y);
          for (int s = 0; s < steps; ++s) {
            float m = 0.5 * (lo + hi);
            float fm = rc_value(u_eye + m * dir) - u_iso.x;
            if (fm >= 0.0) {
              hi = m;
              fhi = fm;
            } else {
              lo = m;
              flo = fm;
            }
          }
          // One secant step inside the last bracket (flo < 0 <= fhi).
          t_hit = clamp(lo + (hi - lo) * (-flo / (fhi - flo)), lo, hi);
        }
        break;
      }
      have_prev = true;
      prev_t = t;
      prev_v = v;
#else
      vec4 c = rc_tf(v);
      if (u_shade.x != 0.0 && c.a > 0.0) {
        vec3 g = u_normal_matrix * rc_gradient(p);
        float len_g = length(g);
        if (len_g > u_shade.y) c.rgb *= 0.35 + 0.65 * abs(dot(g / len_g, normalize(w)));
      }
      float alpha = 1.0 - exp(-c.a * u_dvr.x * (b - a) * mm);
      float wgt = (1.0 - alpha_acc) * alpha;
      acc += wgt * c.rgb;
      alpha_acc += wgt;
      if (alpha_acc >= u_dvr.y) break;
#endif
      if (visit_first)
        visit_first = false;  // then the march from segment 0
      else
        ++k;
    }
#if defined(RC_MIP)
    data = vec4(best, 1.0, float(samples), float(steps));
    float grey = clamp((best - u_low_scale.x) * u_low_scale.y, 0.0, 1.0);
    colour = vec4(vec3(grey), 1.0);
#elif defined(RC_ISO)
    if (hit) {
      vec3 g = u_normal_matrix * rc_gradient(u_eye + t_hit * dir);
      vec3 nrm = length(g) > 0.0 ? -normalize(g) : u_light;
      vec3 to_eye = -normalize(w);
      if (dot(nrm, to_eye) < 0.0) nrm = -nrm;
      data = vec4(t_hit * mm, nrm);
      // Blinn-Phong with a headlight (light and viewer both at the eye: the half vector is
      // the view direction).
      float diffuse = max(dot(nrm, to_eye), 0.0);
      float specular = pow(diffuse, 48.0);
      vec3 base = vec3(0.92, 0.86, 0.76);
      colour = vec4(base * (0.12 + 0.8 * diffuse) + 0.35 * specular, 1.0);
    }
#else
    data = vec4(acc, alpha_acc);
    colour = vec4(acc + (1.0 - alpha_acc) * u_background, 1.0);
#endif
  }
  imageStore(u_data, gid, data);
  imageStore(u_colour, gid, clamp(colour, 0.0, 1.0));
}
