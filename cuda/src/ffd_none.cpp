// Stand-ins for builds without the CUDA toolkit (cuda_ffd.h): the same argument checks as the
// CUDA build, then a sentence saying this build has no CUDA.
#include <string>

#include "no_cuda.h"
#include "splineview/cuda_device.h"
#include "splineview/cuda_ffd.h"
#include "splineview/error.h"
#include "splineview/ffd.h"

namespace sv::cuda {
namespace {
std::string describe(FfdKernel kernel) {
  return std::string("CUDA FFD field (") + ffd_kernel_name(kernel) + ")";
}
}  // namespace

struct FfdEvaluator::Impl {};

FfdEvaluator::FfdEvaluator(const FfdGrid& grid) {
  check_ffd_arguments(grid, FfdKernel::PerVoxel, "CUDA FFD field");
  no_cuda("CUDA FFD field");
}
FfdEvaluator::~FfdEvaluator() = default;
const FfdGrid& FfdEvaluator::grid() const {
  no_cuda("CUDA FFD field");
}
void FfdEvaluator::run(FfdKernel kernel, float*, CUstream_st*) {
  no_cuda(describe(kernel));
}
void FfdEvaluator::refresh_texture(CUstream_st*) {
  no_cuda("CUDA FFD field (texture)");
}

void ffd_field(const FfdGrid& grid, FfdKernel kernel, float* out, CUstream_st*) {
  check_ffd_arguments(grid, kernel, describe(kernel).c_str());
  if (!out) throw Error(describe(kernel) + ": the output pointer is null");
  no_cuda(describe(kernel));
}

ArrayF ffd_field(const ArrayF& grid, const std::vector<int>& delta,
                 const std::vector<std::size_t>& image_shape, FfdKernel kernel) {
  sv::check_ffd_grid(grid, delta, image_shape);
  FfdGrid g;
  g.dims = grid.dims();
  g.delta = delta;
  g.image_shape = image_shape;
  g.points = grid.data();  // host: only its presence is checked
  check_ffd_arguments(g, kernel, describe(kernel).c_str());
  no_cuda(describe(kernel));
}

}  // namespace sv::cuda
