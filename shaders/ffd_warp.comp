// ffd_warp.comp: the deform mode's warped image, output(x) = moving(x + u(x)) at every voxel x,
// as sv::warp computes it (ffd_warp.h) with the prefiltered cubic B-spline and the reflect
// boundary: u read from a field image written by ffd_field.comp (texture axis order, voxels),
// the moving image's coefficients sampled with the fetch library's precise cubic (4^rank
// texelFetch, exact weights, indices extended by the reflect boundary), so that the field
// kernel is the only difference between the views.
#define SV_FETCH_CUBIC_PRECISE
#include "bspline_fetch.glsl"

#if SV_RANK == 2
#define SV_IMAGE image2D
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;
#else
#define SV_IMAGE image3D
layout(local_size_x = 4, local_size_y = 4, local_size_z = 4) in;
#endif

// The moving image's B-spline coefficients (reflect boundary), RGBA as the fetch library reads.
layout(binding = 0) uniform SV_SAMPLER u_coefficients;
layout(binding = 0, rgba32f) uniform readonly SV_IMAGE u_field;
layout(binding = 1, rgba32f) uniform writeonly SV_IMAGE u_out;
layout(location = 0) uniform ivec3 u_size;

void main() {
  SV_IVEC x = SV_IVEC(gl_GlobalInvocationID);
  if (any(greaterThanEqual(x, SV_IVEC(u_size)))) return;
#if SV_RANK == 2
  SV_VEC u = imageLoad(u_field, x).xy;
#else
  SV_VEC u = imageLoad(u_field, x).xyz;
#endif
  imageStore(u_out, x, sv_fetch(u_coefficients, SV_VEC(x) + u));
}
