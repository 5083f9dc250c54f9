// Host-only parts of the CUDA FFD field evaluation (cuda_ffd.h), built with and without the
// toolkit: kernel names, the argument checks and the flop counts.
#include <cstdint>
#include <string>

#include "splineview/cuda_ffd.h"
#include "splineview/error.h"
#include "splineview/ffd.h"

namespace sv::cuda {

const char* ffd_kernel_name(FfdKernel k) {
  switch (k) {
    case FfdKernel::Texture:
      return "texture";
    case FfdKernel::PerVoxel:
      return "per-voxel";
    case FfdKernel::ThreadPerTileLerp:
      return "tile-lerp";
    case FfdKernel::ThreadPerTileFma:
      return "tile-fma";
  }
  return "?";
}

FfdKernel parse_ffd_kernel(const std::string& s) {
  for (FfdKernel k : kFfdKernels)
    if (s == ffd_kernel_name(k)) return k;
  throw Error("unknown FFD kernel '" + s +
              "' (expected texture, per-voxel, tile-lerp or tile-fma)");
}

void check_ffd_arguments(const FfdGrid& grid, FfdKernel kernel, const char* what) {
  const std::string w(what);
  if (kernel != FfdKernel::Texture && kernel != FfdKernel::PerVoxel &&
      kernel != FfdKernel::ThreadPerTileLerp && kernel != FfdKernel::ThreadPerTileFma)
    throw Error(w + ": unknown FFD kernel");
  if (grid.dims.size() == 2 || grid.image_shape.size() == 2)
    throw Error(w +
                ": the CUDA kernels evaluate 3-D control grids only (2-D: sv::ffd_field on "
                "the CPU)");
  if (grid.dims.size() != 3)
    throw Error(w + ": a 3-D control grid needs 3 extents (M_z, M_y, M_x), got " +
                std::to_string(grid.dims.size()));
  if (grid.image_shape.size() != 3)
    throw Error(w + ": the image shape needs 3 extents (N_z, N_y, N_x), got " +
                std::to_string(grid.image_shape.size()));
  if (grid.delta.size() != 3)
    throw Error(w + ": the spacing needs 3 entries (delta_z, delta_y, delta_x), got " +
                std::to_string(grid.delta.size()));
  static const char* const axis[3] = {"z", "y", "x"};
  const bool tiles =
      kernel == FfdKernel::ThreadPerTileLerp || kernel == FfdKernel::ThreadPerTileFma;
  for (int a = 0; a < 3; ++a) {
    if (grid.delta[a] < 1)
      throw Error(w + ": the control-point spacing along " + axis[a] +
                  " must be at least 1 voxel, got " + std::to_string(grid.delta[a]));
    if (tiles && grid.delta[a] > kMaxTileSpacing)
      throw Error(w + ": the " + ffd_kernel_name(kernel) + " kernel takes spacings 1.." +
                  std::to_string(kMaxTileSpacing) + ", got " + std::to_string(grid.delta[a]) +
                  " along " + axis[a] + " (per-voxel and texture take any)");
    if (grid.image_shape[a] == 0)
      throw Error(w + ": the image shape has a zero extent along " + axis[a]);
    if (grid.image_shape[a] >= (std::size_t{1} << 30) || grid.dims[a] >= (std::size_t{1} << 30))
      throw Error(w + ": an extent of 2^30 or more along " + axis[a]);
  }
  const std::vector<std::size_t> need = ffd_grid_shape(grid.image_shape, grid.delta);
  for (int a = 0; a < 3; ++a)
    if (grid.dims[a] < need[a])
      throw Error(w + ": the control grid has " + std::to_string(grid.dims[a]) +
                  " control points along " + axis[a] + ", an image of " +
                  std::to_string(grid.image_shape[a]) + " voxels at spacing " +
                  std::to_string(grid.delta[a]) + " needs at least " + std::to_string(need[a]) +
                  " (floor((N - 1) / delta) + 4)");
  if (grid.dims[0] * grid.dims[1] * grid.dims[2] * 3 >= (std::size_t{1} << 31))
    throw Error(w + ": a control grid of 2^31 floats or more");
  if (!grid.points) throw Error(w + ": the control-point pointer is null");
}

double ffd_kernel_flops_per_voxel(FfdKernel kernel, const std::vector<int>& delta) {
  const double dx = delta.size() == 3 && delta[2] > 0 ? delta[2] : 1;
  switch (kernel) {
    case FfdKernel::Texture:
      return 45 + 3 * 8 + 7 * 3 * 3;
    case FfdKernel::PerVoxel:
      return 45 + 80 + 64 * 3 * 2;
    case FfdKernel::ThreadPerTileFma:
      return 420 / dx + 3 * 7;
    case FfdKernel::ThreadPerTileLerp:
      return 540 / dx + 3 * 3 * 3;
  }
  return 0;
}

}  // namespace sv::cuda
