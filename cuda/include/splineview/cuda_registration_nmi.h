// The NMI objective of the FFD registration on the GPU (issue 16 part 4): what
// sv::FfdNmiObjective<float> computes (registration_nmi.h: f = 2 - NMI + w E with cubic B-spline
// Parzen windows, its exact gradient), with the field, the warp, the joint histogram, the
// per-voxel gradient and the adjoint on the device; sv::register_ffd's level loop runs it like
// the SSD objective (cuda_registration.h).
//
// One evaluation:
//   1. field      the grid rounded to float and uploaded; u(x) by the chosen FfdKernel.
//   2. histogram  one thread per voxel: M and grad M at x + u(x) in float (the SSD objective's
//                 taps and weights), t_M = 1 + (M - lo) scale in double (clamped as on the CPU),
//                 the 16 window products (double) rounded to multiples of 2^-32 and added as
//                 64-bit integers, in shared memory per block (bins <= 64) then into the global
//                 histogram, or into the global histogram directly. Integer addition is exact
//                 and associative, so the histogram is the same on every run whatever the order
//                 of the atomics (deterministic); the rounding moves each product by at most
//                 2^-33. The histogram is downloaded and NMI, the entropies and the table G
//                 (nmi_from_histogram, the CPU's own) computed on the host in double.
//   3. gradient   per voxel df/du = -(1/N) sum_{i,k} beta3(t_F - i) beta3'(t_M - k) G(i,k)
//                 dt_M/du (double sums, float store), then the SSD objective's three gather
//                 passes of the adjoint (no atomics).
//   4. regulariser ffd_bending_energy of the double grid on the host.
// At most 2^31 - 1 voxels (the integer histogram's range).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "splineview/array.h"
#include "splineview/cuda_ffd.h"
#include "splineview/registration.h"
#include "splineview/registration_nmi.h"

namespace sv::cuda {

class FfdNmiObjective : public sv::FfdObjective {
 public:
  // Throws as sv::FfdNmiObjective's constructor does, for a spacing the kernel does not take
  // and for images of 2^31 voxels or more.
  FfdNmiObjective(const ArrayF& fixed, const ArrayF& moving, std::vector<int> spacing,
                  double bending_weight, int bins = 64, Boundary boundary = Boundary::Reflect,
                  FfdKernel kernel = FfdKernel::ThreadPerTileFma);
  ~FfdNmiObjective() override;
  FfdNmiObjective(const FfdNmiObjective&) = delete;
  FfdNmiObjective& operator=(const FfdNmiObjective&) = delete;

  // `similarity` receives 2 - NMI.
  double evaluate(const Array<double>& grid, Array<double>* gradient = nullptr,
                  double* similarity = nullptr, double* energy = nullptr,
                  FfdStageTimes* times = nullptr) const override;
  // NMI and the entropies at a grid.
  NmiValue nmi(const Array<double>& grid) const;
  const std::vector<std::size_t>& grid_shape() const override;
  FfdKernel kernel() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sv::cuda
