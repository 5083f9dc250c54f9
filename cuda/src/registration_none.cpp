// Stand-ins for builds without the CUDA toolkit (cuda_registration.h): the CPU objective's
// argument checks, then a sentence saying this build has no CUDA.
#include <string>

#include "splineview/cuda_device.h"
#include "splineview/cuda_registration.h"
#include "splineview/cuda_registration_nmi.h"
#include "splineview/error.h"

namespace sv::cuda {
namespace {
[[noreturn]] void no_cuda(const std::string& what) {
  std::string why;
  cuda_devices(&why);
  throw Error(what + ": " + why);
}
}  // namespace

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

FfdRegistrationResult register_ffd(const ArrayF& fixed, const ArrayF& moving,
                                   const FfdRegistrationOptions& options, FfdKernel kernel) {
  return sv::register_ffd<float>(
      fixed, moving, options,
      [kernel](const ArrayF& f, const ArrayF& mv, const std::vector<int>& spacing,
               const FfdRegistrationOptions& o) -> std::unique_ptr<sv::FfdObjective> {
        if (o.metric == FfdMetric::Nmi)
          return std::make_unique<FfdNmiObjective>(f, mv, spacing, o.bending_weight, o.bins,
                                                   o.boundary, kernel);
        return std::make_unique<FfdSsdObjective>(f, mv, spacing, o.bending_weight, o.boundary,
                                                 kernel);
      });
}

}  // namespace sv::cuda
