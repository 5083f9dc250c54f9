// Host-only part of the GPU registration (cuda_registration.h), built with and without the
// toolkit: sv::cuda::register_ffd, sv::register_ffd<float> with the GPU objective of the chosen
// metric at every level (without CUDA the objectives' stand-ins throw after their argument
// checks).
#include <memory>
#include <vector>

#include "splineview/cuda_registration.h"
#include "splineview/cuda_registration_nmi.h"

namespace sv::cuda {

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
