// FFD registration on the GPU (issue 16 part 4): the objective of sv::register_ffd
// (registration.h: SSD / N + w E, its exact gradient with respect to the control points) with
// the field, the warp and the adjoint on the device; the optimiser, the pyramid and the grid
// transfer are the CPU's own (sv::register_ffd's level loop with this objective behind
// sv::FfdObjective), so both find the same kind of result.
//
// One evaluation:
//   1. field     the grid (double on the host) uploaded in double and rounded to float on the
//                device; u(x) by the chosen FfdKernel (cuda_ffd.h; the texture is refreshed
//                from the grid).
//   2. warp      one thread per voxel: the 4^R taps of the moving image's cubic spline (float
//                coefficients from the CUDA prefilter, Reflect / Mirror / Periodic extension)
//                at x + u(x) give M and grad M in float; r = M - F; SSD summed in double per
//                block, the blocks in a fixed order (deterministic); per voxel g = 2 r grad M / N.
//   3. gradient  the adjoint of the tile-structured field, one axis at a time as on the CPU
//                (x, then y, then z): each output (a control-point column of one row, plane or
//                the grid) gathers its 4 delta inputs with the double B-spline weights,
//                accumulates in double and stores float. No atomics: deterministic.
//   4. regulariser  the bending energy and its gradient on the device in double, with
//                ffd_bending_energy's factorisation (ffd.h; its Gram matrices from
//                ffd_bending_gram): banded passes along x, y and z, one thread per grid value;
//                the energy summed per block and over the blocks in a fixed order; the last
//                pass writes the whole gradient, adjoint + w dE/dc, in double. Only the
//                gradient (double), the SSD and the energy come back to the host.
// With `times` the stages are separated by device synchronisations (wall clock per stage); the
// final downloads count as the gradient stage.
//
// The energy agrees with ffd_bending_energy to rounding (different order of the same double
// sums, fused multiply-adds); tests/cuda/test_cuda_registration.cpp derives the bound.
//
// Accuracy against sv::FfdSsdObjective<double> (docs/ACCURACY.md 8.2 has the derivation and the
// measured figures): residuals within sum_a D_a du + 48 eps max|coefficient| (du the field
// kernel's bound, D_a the largest difference of neighbouring coefficients along a), f and the
// gradient within what those residual and derivative errors allow.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "splineview/array.h"
#include "splineview/cuda_ffd.h"
#include "splineview/registration.h"

namespace sv::cuda {

// The GPU objective of one level: what sv::FfdSsdObjective<T> computes, for float images.
// Prepared once (images uploaded, the moving image prefiltered on the device); throws as the
// CPU objective does (sv::check_ffd_objective), and for a spacing the kernel does not take
// (the thread-per-tile kernels: 1..8 per axis).
class FfdSsdObjective : public sv::FfdObjective {
 public:
  FfdSsdObjective(const ArrayF& fixed, const ArrayF& moving, std::vector<int> spacing,
                  double bending_weight, Boundary boundary = Boundary::Reflect,
                  FfdKernel kernel = FfdKernel::ThreadPerTileFma);
  ~FfdSsdObjective() override;
  FfdSsdObjective(const FfdSsdObjective&) = delete;
  FfdSsdObjective& operator=(const FfdSsdObjective&) = delete;

  double evaluate(const Array<double>& grid, Array<double>* gradient = nullptr,
                  double* ssd = nullptr, double* energy = nullptr,
                  FfdStageTimes* times = nullptr) const override;
  const std::vector<std::size_t>& grid_shape() const override;
  FfdKernel kernel() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// sv::register_ffd<float> with the GPU objective at every level (same options, same result;
// options.threads only sets the CPU threads of the pyramid). Setup includes the uploads and
// the prefilters of each level.
FfdRegistrationResult register_ffd(const ArrayF& fixed, const ArrayF& moving,
                                   const FfdRegistrationOptions& options,
                                   FfdKernel kernel = FfdKernel::ThreadPerTileFma);

}  // namespace sv::cuda
