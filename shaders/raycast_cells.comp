// raycast_cells.comp: the ray caster's empty-space grid (raycast.comp). Cell c of 8^3 voxels
// covers positions p with floor((p + 1/2) / 8) = c, i.e. [8c - 1/2, 8c + 15/2) per axis; a sample
// there (and up to half a voxel beyond, for rounding) reads taps floor(p) - 1 .. floor(p) + 2,
// so the cell stores the smallest and largest texel of voxels 8c - 2 .. 8c + 9, clamped to the
// volume (the reflect boundary's taps outside it repeat voxels inside that range).
layout(local_size_x = 4, local_size_y = 4, local_size_z = 4) in;

layout(binding = 0) uniform sampler3D u_volume;
layout(binding = 0, rg32f) uniform writeonly image3D u_cells;

void main() {
  ivec3 c = ivec3(gl_GlobalInvocationID);
  if (any(greaterThanEqual(c, imageSize(u_cells)))) return;
  ivec3 n = textureSize(u_volume, 0);
  ivec3 lo = max(c * 8 - 2, ivec3(0));
  ivec3 hi = min(c * 8 + 9, n - 1);
  float vmin = uintBitsToFloat(0x7f800000u), vmax = -vmin;
  for (int z = lo.z; z <= hi.z; ++z)
    for (int y = lo.y; y <= hi.y; ++y)
      for (int x = lo.x; x <= hi.x; ++x) {
        float v = texelFetch(u_volume, ivec3(x, y, z), 0).r;
        vmin = min(vmin, v);
        vmax = max(vmax, v);
      }
  imageStore(u_cells, c, vec4(vmin, vmax, 0.0, 0.0));
}
