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
  const std::size_t R = grid.dims.size();
  if (R != 2 && R != 3)
    throw Error(w + ": a control grid has 3 extents (M_z, M_y, M_x) or 2 (M_y, M_x), got " +
                std::to_string(R));
  const char* const names = R == 3 ? "(N_z, N_y, N_x)" : "(N_y, N_x)";
  if (grid.image_shape.size() != R)
    throw Error(w + ": the image shape needs " + std::to_string(R) + " extents " + names +
                " for a " + std::to_string(R) + "-D grid, got " +
                std::to_string(grid.image_shape.size()));
  if (grid.delta.size() != R)
    throw Error(w + ": the spacing needs " + std::to_string(R) + " entries (one per axis), got " +
                std::to_string(grid.delta.size()));
  static const char* const axes3[3] = {"z", "y", "x"};
  static const char* const axes2[2] = {"y", "x"};
  const char* const* axis = R == 3 ? axes3 : axes2;
  const bool tiles =
      kernel == FfdKernel::ThreadPerTileLerp || kernel == FfdKernel::ThreadPerTileFma;
  for (std::size_t a = 0; a < R; ++a) {
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
  std::size_t floats = R;
  for (std::size_t a = 0; a < R; ++a) {
    if (grid.dims[a] < need[a])
      throw Error(w + ": the control grid has " + std::to_string(grid.dims[a]) +
                  " control points along " + axis[a] + ", an image of " +
                  std::to_string(grid.image_shape[a]) + " voxels at spacing " +
                  std::to_string(grid.delta[a]) + " needs at least " + std::to_string(need[a]) +
                  " (floor((N - 1) / delta) + 4)");
    floats *= grid.dims[a];
  }
  if (floats >= (std::size_t{1} << 31)) throw Error(w + ": a control grid of 2^31 floats or more");
  if (!grid.points) throw Error(w + ": the control-point pointer is null");
}

double ffd_kernel_flops_per_voxel(FfdKernel kernel, const std::vector<int>& delta) {
  const double dx = !delta.empty() && delta.back() > 0 ? delta.back() : 1;
  if (delta.size() == 2) {
    switch (kernel) {
      case FfdKernel::Texture:
        return 30 + 2 * 8 + 3 * 2 * 3;
      case FfdKernel::PerVoxel:
        return 30 + 16 + 16 * 2 * 2;
      case FfdKernel::ThreadPerTileFma:
        return 56 / dx + 2 * 7;
      case FfdKernel::ThreadPerTileLerp:
        return 72 / dx + 2 * 3 * 3;
    }
    return 0;
  }
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
