// Error checking for CUDA runtime calls inside cuda/: every failure becomes sv::Error naming the
// call site's operation and the runtime's sentence.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "splineview/error.h"

namespace sv::cuda::detail {

inline void check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so later calls can proceed
  if (err == cudaErrorMemoryAllocation) throw Error(std::string(what) + ": out of GPU memory");
  throw Error(std::string(what) + ": " + cudaGetErrorString(err));
}

// Bookkeeping of device memory the library allocates outside DeviceBuffer (stream-ordered
// scratch), so that allocation_stats() reports the true peak.
void note_alloc(std::size_t bytes);
void note_free(std::size_t bytes);

// After a kernel launch: reports launch-configuration errors at once (execution errors surface
// at the next synchronising call).
inline void check_launch(const char* what) {
  check(cudaGetLastError(), what);
}

}  // namespace sv::cuda::detail
