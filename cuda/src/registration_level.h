// What the two GPU registration objectives (registration.cu: SSD, registration_nmi.cu: NMI)
// hold and do alike for one level, on the host (registration_level.cu): the 3-D view of a 2-D
// or 3-D problem, the moving image's cubic coefficients (prefiltered on the device), the float
// grid and its field (FfdEvaluator), the per-voxel gradient g and the adjoint's pass buffers
// and weight rows; the field evaluation and the adjoint's launch sequence (g -> C). Each
// objective's Impl derives from Level and adds its own buffers.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "splineview/array.h"
#include "splineview/bspline.h"
#include "splineview/cuda_ffd.h"
#include "splineview/cuda_memory.h"
#include "splineview/error.h"

namespace sv::cuda::reg {

constexpr int kThreads = 256;

struct View {
  int n[3];          // image extents (z, y, x); 2-D: n[0] = 1
  int m[3];          // grid extents
  int d[3];          // spacing
  long long stride;  // n[1] * n[2]
};

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Blocks of kThreads for `count` threads; throws past one launch's grid.
inline unsigned blocks_for(long long count, const char* what) {
  const long long b = (count + kThreads - 1) / kThreads;
  if (b > 0x7fffffffLL) throw Error(std::string(what) + ": too many voxels for one launch");
  return static_cast<unsigned>(std::max<long long>(b, 1));
}

// A device buffer as another element type (DeviceBuffer holds floats; cudaMalloc aligns to 256
// bytes).
template <class U>
U* as(DeviceBuffer& b) {
  return reinterpret_cast<U*>(b.data());
}

struct Level {
  // After the objective's own argument checks: the kernel's check (check_ffd_arguments) and a
  // device (require), then the uploads, the prefilter and the buffers. `what` names the
  // objective in every error.
  Level(const ArrayF& fixed, const ArrayF& moving, std::vector<std::size_t> grid_shape,
        std::vector<int> spacing, Boundary boundary, FfdKernel kernel, std::string what);

  // u(x) into `field` from the float grid in `grid` (the texture refreshed first).
  void evaluate_field();
  // The adjoint of the tile-structured field, x, then y, then z (2-D: x and y): g (R floats per
  // voxel) into C (R floats per control point), through A and B.
  void adjoint();
  // With `times`: a device synchronisation, then the seconds since t0 added to `*slot`.
  void stage_end(double* slot, Clock::time_point t0) const;

  std::size_t R = 0;
  View v{};
  long long voxels = 0;
  std::vector<std::size_t> image_shape, grid_shape;
  std::vector<int> spacing;
  int boundary = 0;
  FfdKernel kernel = FfdKernel::ThreadPerTileFma;
  std::string what;
  DeviceBuffer coef, grid, field, g, A, B, C, weights[3];
  std::unique_ptr<FfdEvaluator> evaluator;
};

}  // namespace sv::cuda::reg
