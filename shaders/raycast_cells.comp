// raycast_cells.comp: the ray caster's empty-space grids (raycast.comp), three variants:
//
// (default) Per cell c of 8^3 voxels, the smallest and largest texel a sample in the cell can
//   reach. Cell c covers positions p with floor((p + 1/2) / 8) = c, i.e. [8c - 1/2, 8c + 15/2)
//   per axis; a sample there (and up to half a voxel beyond, for rounding) reads taps
//   floor(p) - 1 .. floor(p) + 2, so the cell stores the range of voxels 8c - 2 .. 8c + 9,
//   clamped to the volume (the reflect boundary's taps outside it repeat voxels inside that
//   range). Used for trilinear (a convex combination of 8 samples) and the hardware-filtered
//   cubic (a convex combination of 64 texels, whatever the filter weights' precision), widened
//   by 2^-16 of the largest |texel| for the filter's rounding.
//
// RC_BOUNDS_CELLS: the precise cubic's cells of RC_CELL^3 voxels: as the default, but the upper
//   end is the largest texel of the fine grid (u_fine, unit 1, below) over the cubes a sample of
//   cell c reaches, j = C c - 1 .. C c + C - 1 (C = RC_CELL; the cell covers [C c - 1/2,
//   C c + C - 1/2) as raycast.comp looks it up, plus half a voxel of slack), i.e. fine texels
//   C c .. C c + C. The lower end stays the coefficients' smallest (a valid, looser bound; only
//   DVR's "above the visible range" uses it), which keeps this pass as cheap as the default.
//
// RC_BOUNDS: for the precise cubic, a range of the spline itself. On the unit cube [j, j + 1]
//   (j = floor(p) per axis) the cubic B-spline is a tensor-product Bezier patch whose control net
//   follows from the 4 coefficients c0..c3 of taps j-1 .. j+2 per axis: (c0 + 4 c1 + c2) / 6,
//   (2 c1 + c2) / 3, (c1 + 2 c2) / 3, (c1 + 4 c2 + c3) / 6 (the first and last are the spline's
//   values at the knots). The Bernstein weights are non-negative and sum to 1, so the patch
//   stays within the smallest and largest of its 64 control points (the convex hull property):
//   far tighter than the 64 coefficients' range, which carries the prefilter's ringing. Texel c
//   holds the cubes j = RC_BOUNDS_BLOCK c - 1 .. + RC_BOUNDS_REACH - 1 per axis (clamped to the
//   volume; j = -1 is the half voxel below 0). The fine grid (RC_BOUNDS_BLOCK 1,
//   RC_BOUNDS_REACH 1, RC_BOUNDS_MAX_ONLY) has one texel per cube, texel j + 1, holding only
//   the largest control point (R32F: as much memory as the coefficients; half precision would
//   cost skipping, see docs/BENCHMARKS.md).
//   Ranges are widened by 2^-16 (256 units in the last place) of the largest |tap|, and by at
//   least 1e-30 (for subnormals, see main): the float rounding of the shader's 64-tap fetch
//   (three levels of 4-term fma chains, about 12 units, and its weights, each within about 18
//   units, 54 for a product of three) and of this net (three levels of a few operations and a
//   division, about 20 units) stays below about 90 units of that size, so a computed sample
//   never leaves its range.
#if defined(RC_BOUNDS)
#define SV_RANK 3
#include "bspline_common.glsl"
#endif

layout(local_size_x = 4, local_size_y = 4, local_size_z = 4) in;

layout(binding = 0) uniform sampler3D u_volume;
#if defined(RC_BOUNDS_CELLS)
layout(binding = 1) uniform sampler3D u_fine;
#endif
#if defined(RC_BOUNDS_MAX_ONLY)
layout(binding = 0, r32f) uniform writeonly image3D u_cells;
#else
layout(binding = 0, rg32f) uniform writeonly image3D u_cells;
#endif

const float kInf = uintBitsToFloat(0x7f800000u);
#ifndef RC_CELL
#define RC_CELL 8
#endif

#if defined(RC_BOUNDS)
// The Bezier control points of one axis's 4 coefficients.
vec4 rc_bezier(vec4 c) {
  return vec4((c.x + 4.0 * c.y + c.z) / 6.0, (2.0 * c.y + c.z) / 3.0, (c.y + 2.0 * c.z) / 3.0,
              (c.y + 4.0 * c.z + c.w) / 6.0);
}

// Range (min, max) of the Bezier net of unit cube j and the largest |tap|, and in `bits` the
// largest |tap|'s bits (integer arithmetic: no subnormal is flushed to zero there).
vec3 rc_cube_range(ivec3 j, ivec3 n, inout uint bits) {
  ivec3 e[4];
  for (int k = 0; k < 4; ++k) e[k] = sv_extend(j + ivec3(k - 1), n);
  // x first: per (y, z) tap row, the 4 Bezier points along x.
  vec4 bx[4][4];
  float amax = 0.0;
  for (int z = 0; z < 4; ++z)
    for (int y = 0; y < 4; ++y) {
      vec4 c = vec4(texelFetch(u_volume, ivec3(e[0].x, e[y].y, e[z].z), 0).r,
                    texelFetch(u_volume, ivec3(e[1].x, e[y].y, e[z].z), 0).r,
                    texelFetch(u_volume, ivec3(e[2].x, e[y].y, e[z].z), 0).r,
                    texelFetch(u_volume, ivec3(e[3].x, e[y].y, e[z].z), 0).r);
      vec4 a = abs(c);
      amax = max(amax, max(max(a.x, a.y), max(a.z, a.w)));
      uvec4 u = floatBitsToUint(c) & 0x7fffffffu;
      bits = max(bits, max(max(u.x, u.y), max(u.z, u.w)));
      bx[z][y] = rc_bezier(c);
    }
  // then y (per z and x-point), then z.
  vec4 bxy[4][4];  // [z][x-point] -> 4 y points
  for (int z = 0; z < 4; ++z)
    for (int x = 0; x < 4; ++x)
      bxy[z][x] = rc_bezier(vec4(bx[z][0][x], bx[z][1][x], bx[z][2][x], bx[z][3][x]));
  float lo = kInf, hi = -kInf;
  for (int x = 0; x < 4; ++x)
    for (int y = 0; y < 4; ++y) {
      vec4 b = rc_bezier(vec4(bxy[0][x][y], bxy[1][x][y], bxy[2][x][y], bxy[3][x][y]));
      lo = min(lo, min(min(b.x, b.y), min(b.z, b.w)));
      hi = max(hi, max(max(b.x, b.y), max(b.z, b.w)));
    }
  return vec3(lo, hi, amax);
}
#endif

void main() {
  ivec3 c = ivec3(gl_GlobalInvocationID);
  if (any(greaterThanEqual(c, imageSize(u_cells)))) return;
  ivec3 n = textureSize(u_volume, 0);
  float vmin = kInf, vmax = -kInf;
#if defined(RC_BOUNDS)
  ivec3 lo = c * RC_BOUNDS_BLOCK - 1;
  ivec3 hi = min(lo + RC_BOUNDS_REACH - 1, n - 1);
  float amax = 0.0;
  uint bits = 0u;
  for (int z = lo.z; z <= hi.z; ++z)
    for (int y = lo.y; y <= hi.y; ++y)
      for (int x = lo.x; x <= hi.x; ++x) {
        vec3 r = rc_cube_range(ivec3(x, y, z), n, bits);
        vmin = min(vmin, r.x);
        vmax = max(vmax, r.y);
        amax = max(amax, r.z);
      }
#else
  ivec3 lo = max(c * RC_CELL - 2, ivec3(0));
  ivec3 hi = min(c * RC_CELL + RC_CELL + 1, n - 1);
  uint bits = 0u;
  for (int z = lo.z; z <= hi.z; ++z)
    for (int y = lo.y; y <= hi.y; ++y)
      for (int x = lo.x; x <= hi.x; ++x) {
        float v = texelFetch(u_volume, ivec3(x, y, z), 0).r;
        vmin = min(vmin, v);
        vmax = max(vmax, v);
        bits = max(bits, floatBitsToUint(v) & 0x7fffffffu);
      }
  // A filtered value is a convex combination of these texels only up to rounding (float or
  // fixed-point lerps can land an ulp beyond a plateau's value, which the MIP's "cannot exceed"
  // would miss): the same widening as the precise cubic's ranges.
  float amax = max(abs(vmin), abs(vmax));
#endif
  // At least 1e-30, far above the subnormal range, where GPUs may flush this pass's arithmetic
  // to zero but not the fetch's (a background of coefficients ~1e-40 gave 0 here and a MIP of
  // 1.4e-45 there), and far below any value a volume means; none where every tap is exactly
  // zero (so is every value there), which keeps empty space skippable at a MIP of 0.
  float margin = bits == 0u ? 0.0 : max(amax * (1.0 / 65536.0), 1e-30);
  vmin -= margin;
  vmax += margin;
#if defined(RC_BOUNDS_CELLS)
  // The fine grid's texels already carry their margin.
  ivec3 f0 = c * RC_CELL;
  ivec3 f1 = min(f0 + RC_CELL, textureSize(u_fine, 0) - 1);
  vmax = -kInf;
  for (int z = f0.z; z <= f1.z; ++z)
    for (int y = f0.y; y <= f1.y; ++y)
      for (int x = f0.x; x <= f1.x; ++x) vmax = max(vmax, texelFetch(u_fine, ivec3(x, y, z), 0).r);
#endif
#if defined(RC_BOUNDS_MAX_ONLY)
  imageStore(u_cells, c, vec4(vmax));
#else
  imageStore(u_cells, c, vec4(vmin, vmax, 0.0, 0.0));
#endif
}
