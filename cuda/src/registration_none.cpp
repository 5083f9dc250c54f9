// Stand-ins for builds without the CUDA toolkit (cuda_registration.h, cuda_registration_nmi.h):
// the CPU objectives' argument checks, then a sentence saying this build has no CUDA
// (register_ffd is registration_common.cpp's, built in both).
#include <string>

#include "no_cuda.h"
#include "splineview/cuda_device.h"
#include "splineview/cuda_registration.h"
#include "splineview/cuda_registration_nmi.h"
#include "splineview/error.h"

namespace sv::cuda {

struct FfdSsdObjective::Impl {
  std::vector<std::size_t> grid_shape;
};

FfdSsdObjective::FfdSsdObjective(const ArrayF& fixed, const ArrayF& moving,
                                 std::vector<int> spacing, double bending_weight, Boundary boundary,
                                 FfdKernel kernel) {
  sv::check_ffd_objective(fixed, moving, spacing, bending_weight, boundary);
  no_cuda(std::string("CUDA registration (") + ffd_kernel_name(kernel) + ")");
}
FfdSsdObjective::~FfdSsdObjective() = default;
const std::vector<std::size_t>& FfdSsdObjective::grid_shape() const {
  no_cuda("CUDA registration");
}
FfdKernel FfdSsdObjective::kernel() const {
  no_cuda("CUDA registration");
}
double FfdSsdObjective::evaluate(const Array<double>&, Array<double>*, double*, double*,
                                 FfdStageTimes*) const {
  no_cuda("CUDA registration");
}

struct FfdNmiObjective::Impl {};

FfdNmiObjective::FfdNmiObjective(const ArrayF& fixed, const ArrayF& moving,
                                 std::vector<int> spacing, double bending_weight, int bins,
                                 Boundary boundary, FfdKernel kernel) {
  sv::check_ffd_objective(fixed, moving, spacing, bending_weight, boundary);
  check_nmi_bins(bins);
  no_cuda(std::string("CUDA NMI registration (") + ffd_kernel_name(kernel) + ")");
}
FfdNmiObjective::~FfdNmiObjective() = default;
double FfdNmiObjective::evaluate(const Array<double>&, Array<double>*, double*, double*,
                                 FfdStageTimes*) const {
  no_cuda("CUDA NMI registration");
}
NmiValue FfdNmiObjective::nmi(const Array<double>&) const {
  no_cuda("CUDA NMI registration");
}
const std::vector<std::size_t>& FfdNmiObjective::grid_shape() const {
  no_cuda("CUDA NMI registration");
}
FfdKernel FfdNmiObjective::kernel() const {
  no_cuda("CUDA NMI registration");
}

}  // namespace sv::cuda
