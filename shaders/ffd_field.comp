// ffd_field.comp: a cubic B-spline free-form deformation (FFD) field evaluated at every voxel of
// an image, by one of three kernels that mirror the CUDA ones (cuda/include/splineview/
// cuda_ffd.h), for the viewer's deform mode. The grid convention is sv::ffd_field's (ffd.h):
// control point j of an axis sits at voxel (j - 1) delta, so voxel x of an axis lies in tile
// i = x div delta at fraction a = (x mod delta) / delta and takes control points i .. i + 3 with
// the cubic B-spline weights of a. Everything here is in texture axis order (x, y[, z]); the
// grid texture holds the displacement (u_x, u_y[, u_z]) of each control point in its rgb[a].
//
// Compile-time switches (the host sets them):
//   SV_RANK 2 | 3         2-D image or 3-D volume
//   SV_FFD_TEXTURE        texture hardware: the grid with GL_LINEAR filtering and the cubic by
//                         the Sigg-Hadwiger trick (2^rank filtered fetches per voxel, the
//                         fetch library's sv_cubic_blend); the hardware's fractional filter
//                         weights (8 bits on NVIDIA) limit its accuracy
//   SV_FFD_PRECISE        per voxel, exact weights: texelFetch of the 4^rank control points,
//                         the weights computed from the voxel's fraction, fma chains
//   SV_FFD_TILE           thread per tile: one invocation per tile of delta_x x delta_y
//                         [x delta_z] voxels, the tile's 4^rank control points read once into
//                         registers, the weight rows of the tile's positions precomputed in
//                         double on the host (u_weights) and the (y, z) sums shared along a row
//   SV_FFD_JACOBIAN       write det J of x -> x + u(x) (one float) instead of u: each kernel
//                         with the derivative weights of one axis at a time
// Output: layout(binding = 0) image u_out, rgba32f (u in .xy[z]) or r32f (det J).
#include "bspline_fetch.glsl"

#if SV_RANK == 2
#define SV_IMAGE image2D
#define SV_NCP 16
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;
#else
#define SV_IMAGE image3D
#define SV_NCP 64
layout(local_size_x = 4, local_size_y = 4, local_size_z = 4) in;
#endif

#if defined(SV_FFD_JACOBIAN)
layout(binding = 0, r32f) uniform writeonly SV_IMAGE u_out;
#else
layout(binding = 0, rgba32f) uniform writeonly SV_IMAGE u_out;
#endif
// The control grid, (M_x, M_y[, M_z]) texels of (u_x, u_y[, u_z]), RGBA32F.
layout(binding = 0) uniform SV_SAMPLER u_grid;
// Image size in voxels and the control-point spacing per axis (x, y[, z]).
layout(location = 0) uniform ivec3 u_size;
layout(location = 1) uniform ivec3 u_delta;

#if defined(SV_FFD_TILE)
// Weight rows, computed in double and rounded to float once: for axis d (0 = x) and offset r in
// 0 .. delta_d - 1, u_weights[(d * 2 + k) * u_stride + r] holds the four weights (k = 0) or
// their derivatives d/dx in voxel units (k = 1) of the tile's control points.
layout(std430, binding = 0) readonly buffer Weights { vec4 u_weights[]; };
layout(location = 2) uniform int u_stride;
vec4 row_weights(int axis, int deriv, int r) {
  return u_weights[(axis * 2 + deriv) * u_stride + r];
}
#endif

// The cubic B-spline weights of the fraction a for taps i .. i + 3, or (deriv) their derivative
// with respect to the voxel position (chain rule: d/dx = (1 / delta) d/da). The value weights
// are the fetch library's (sv_cubic_weights: partition of unity closed by w2).
vec4 cubic_weights(float a, bool deriv, float delta) {
  if (!deriv) {
    float b = 1.0 - a;
    float a2 = a * a;
    float w0 = b * b * b * (1.0 / 6.0);
    float w1 = fma(a2, 0.5 * a - 1.0, 2.0 / 3.0);
    float w3 = a2 * a * (1.0 / 6.0);
    return vec4(w0, w1, 1.0 - ((w0 + w1) + w3), w3);
  }
  float b = 1.0 - a;
  float d0 = -0.5 * b * b;
  float d1 = a * fma(1.5, a, -2.0);
  float d3 = 0.5 * a * a;
  return vec4(d0, d1, -((d0 + d1) + d3), d3) / delta;
}

#if !defined(SV_FFD_TILE)
// Voxel position -> (tile, fraction) per axis, exactly: the fraction is (x mod delta) / delta
// rounded once, not the fraction of a rounded x / delta.
void locate(SV_IVEC x, out SV_IVEC tile, out SV_VEC frac) {
  SV_IVEC d = SV_IVEC(u_delta);
  tile = x / d;
  frac = SV_VEC(x - tile * d) / SV_VEC(d);
}

// The displacement at voxel `tile * delta + fraction`, with the derivative weights on axis
// `deriv_axis` (-1: none).
vec4 evaluate(SV_IVEC tile, SV_VEC frac, int deriv_axis) {
  SV_VEC w[4];
  for (int d = 0; d < SV_RANK; ++d) {
    vec4 wd = cubic_weights(frac[d], d == deriv_axis, float(u_delta[d]));
    w[0][d] = wd.x;
    w[1][d] = wd.y;
    w[2][d] = wd.z;
    w[3][d] = wd.w;
  }
#if defined(SV_FFD_TEXTURE)
  // Per axis the pairs (w0, w1) and (w2, w3) have one sign each (also for the derivative), so
  // g * lerp(c[j], c[j + 1], t) covers each pair; the grid index of tap 0 is the tile index,
  // and sv_cubic_blend fetches from floor(p) - 1 = tile.
  SV_VEC g0 = w[0] + w[1];
  SV_VEC g1 = w[2] + w[3];
  return sv_cubic_blend(u_grid, SV_VEC(tile + SV_IVEC(1)), g0, g1, w[1] / g0, w[3] / g1);
#else
  // Per voxel, exact weights: 4^rank texelFetch in fma chains (x innermost), as the fetch
  // library's precise variant.
  vec4 acc = vec4(0.0);
#if SV_RANK == 2
  for (int y = 0; y < 4; ++y) {
    vec4 row = vec4(0.0);
    for (int x = 0; x < 4; ++x)
      row = fma(vec4(w[x].x), texelFetch(u_grid, tile + ivec2(x, y), 0), row);
    acc = fma(vec4(w[y].y), row, acc);
  }
#else
  for (int z = 0; z < 4; ++z) {
    vec4 plane = vec4(0.0);
    for (int y = 0; y < 4; ++y) {
      vec4 row = vec4(0.0);
      for (int x = 0; x < 4; ++x)
        row = fma(vec4(w[x].x), texelFetch(u_grid, tile + ivec3(x, y, z), 0), row);
      plane = fma(vec4(w[y].y), row, plane);
    }
    acc = fma(vec4(w[z].z), plane, acc);
  }
#endif
  return acc;
#endif
}
#endif

// det of the Jacobian of x -> x + u(x) from the partial derivatives (column d = d u / d x_d).
#if SV_RANK == 2
float jacobian_determinant(vec4 dx, vec4 dy) {
  return (1.0 + dx.x) * (1.0 + dy.y) - dy.x * dx.y;
}
#else
float jacobian_determinant(vec4 dx, vec4 dy, vec4 dz) {
  mat3 j = mat3(dx.xyz, dy.xyz, dz.xyz) + mat3(1.0);
  return determinant(j);
}
#endif

void store(SV_IVEC x, vec4 v) {
  imageStore(u_out, x, v);
}

#if !defined(SV_FFD_TILE)
void main() {
  SV_IVEC x = SV_IVEC(gl_GlobalInvocationID);
  if (any(greaterThanEqual(x, SV_IVEC(u_size)))) return;
  SV_IVEC tile;
  SV_VEC frac;
  locate(x, tile, frac);
#if defined(SV_FFD_JACOBIAN)
#if SV_RANK == 2
  store(x, vec4(jacobian_determinant(evaluate(tile, frac, 0), evaluate(tile, frac, 1)), 0, 0, 0));
#else
  store(x, vec4(jacobian_determinant(evaluate(tile, frac, 0), evaluate(tile, frac, 1),
                                     evaluate(tile, frac, 2)),
                0, 0, 0));
#endif
#else
  store(x, evaluate(tile, frac, -1));
#endif
}
#else
// Thread per tile: the 4^rank control points of this tile in registers.
vec4 cp[SV_NCP];

// sum over the tile's control points with the weight rows (wx, wy[, wz]): the (y[, z]) sums
// first per x column, then the x taps, the order of the CUDA "fma" form.
#if SV_RANK == 2
vec4 tile_sum(vec4 wx, vec4 wy) {
  vec4 col[4];
  for (int x = 0; x < 4; ++x) {
    vec4 c = vec4(0.0);
    for (int y = 0; y < 4; ++y) c = fma(vec4(wy[y]), cp[y * 4 + x], c);
    col[x] = c;
  }
  vec4 acc = vec4(wx.x) * col[0];
  acc = fma(vec4(wx.y), col[1], acc);
  acc = fma(vec4(wx.z), col[2], acc);
  return fma(vec4(wx.w), col[3], acc);
}
#else
vec4 tile_sum(vec4 wx, vec4 wy, vec4 wz) {
  vec4 col[4];
  for (int x = 0; x < 4; ++x) {
    vec4 c = vec4(0.0);
    for (int z = 0; z < 4; ++z) {
      vec4 r = vec4(0.0);
      for (int y = 0; y < 4; ++y) r = fma(vec4(wy[y]), cp[(z * 4 + y) * 4 + x], r);
      c = fma(vec4(wz[z]), r, c);
    }
    col[x] = c;
  }
  vec4 acc = vec4(wx.x) * col[0];
  acc = fma(vec4(wx.y), col[1], acc);
  acc = fma(vec4(wx.z), col[2], acc);
  return fma(vec4(wx.w), col[3], acc);
}
#endif

void main() {
  SV_IVEC tile = SV_IVEC(gl_GlobalInvocationID);
  SV_IVEC d = SV_IVEC(u_delta);
  SV_IVEC first = tile * d;
  if (any(greaterThanEqual(first, SV_IVEC(u_size)))) return;
  SV_IVEC last = min(first + d, SV_IVEC(u_size));  // exclusive
#if SV_RANK == 2
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) cp[y * 4 + x] = texelFetch(u_grid, tile + ivec2(x, y), 0);
  for (int py = first.y; py < last.y; ++py) {
    int ry = py - first.y;
    vec4 wy = row_weights(1, 0, ry);
    for (int px = first.x; px < last.x; ++px) {
      int rx = px - first.x;
      vec4 wx = row_weights(0, 0, rx);
#if defined(SV_FFD_JACOBIAN)
      vec4 dx = tile_sum(row_weights(0, 1, rx), wy);
      vec4 dy = tile_sum(wx, row_weights(1, 1, ry));
      store(ivec2(px, py), vec4(jacobian_determinant(dx, dy), 0, 0, 0));
#else
      store(ivec2(px, py), tile_sum(wx, wy));
#endif
    }
  }
#else
  for (int z = 0; z < 4; ++z)
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 4; ++x)
        cp[(z * 4 + y) * 4 + x] = texelFetch(u_grid, tile + ivec3(x, y, z), 0);
  for (int pz = first.z; pz < last.z; ++pz) {
    int rz = pz - first.z;
    vec4 wz = row_weights(2, 0, rz);
    for (int py = first.y; py < last.y; ++py) {
      int ry = py - first.y;
      vec4 wy = row_weights(1, 0, ry);
      for (int px = first.x; px < last.x; ++px) {
        int rx = px - first.x;
        vec4 wx = row_weights(0, 0, rx);
#if defined(SV_FFD_JACOBIAN)
        vec4 dx = tile_sum(row_weights(0, 1, rx), wy, wz);
        vec4 dy = tile_sum(wx, row_weights(1, 1, ry), wz);
        vec4 dz = tile_sum(wx, wy, row_weights(2, 1, rz));
        store(ivec3(px, py, pz), vec4(jacobian_determinant(dx, dy, dz), 0, 0, 0));
#else
        store(ivec3(px, py, pz), tile_sum(wx, wy, wz));
#endif
      }
    }
  }
#endif
}
#endif
