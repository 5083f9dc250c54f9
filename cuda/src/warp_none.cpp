// Stand-ins for builds without the CUDA toolkit (cuda_warp.h): the argument checks, then a
// sentence saying this build has no CUDA.
#include <string>

#include "no_cuda.h"
#include "splineview/cuda_device.h"
#include "splineview/cuda_warp.h"
#include "splineview/error.h"
#include "splineview/ffd.h"

namespace sv::cuda {
namespace {
std::string describe(const WarpConfig& cfg) {
  return std::string("CUDA warp (") + ffd_kernel_name(cfg.kernel) + ")";
}
}  // namespace

void warp(const float*, const std::vector<std::size_t>&, const FfdGrid& grid, const WarpConfig& cfg,
          float*, CUstream_st*) {
  check_ffd_arguments(grid, cfg.kernel, describe(cfg).c_str());
  no_cuda(describe(cfg));
}

ArrayF warp(const ArrayF& moving, const ArrayF& grid, const std::vector<int>& delta,
            const WarpConfig& cfg, const std::vector<std::size_t>& output_shape) {
  const std::vector<std::size_t> shape = output_shape.empty() ? moving.dims() : output_shape;
  sv::check_ffd_grid(grid, delta, shape);
  no_cuda(describe(cfg));
}

}  // namespace sv::cuda
