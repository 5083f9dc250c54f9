// What CUDA can do in this build and on this machine. Plain C++: no CUDA types leak out.
#pragma once

#include <string>
#include <vector>

namespace sv {

struct CudaDeviceInfo {
  int index = 0;
  std::string name;
  int major = 0, minor = 0;       // compute capability
  std::size_t global_memory = 0;  // bytes
  int multiprocessors = 0;
  double memory_bandwidth_gbs = 0;  // theoretical peak from clock and bus width (0 if unknown)
};

// True when the build compiled the CUDA code (nvcc was found at configure time).
bool cuda_compiled();

// The devices the CUDA runtime sees; empty (never throws) when there is no driver, no device
// or no CUDA in the build. `why_none` receives a sentence saying why the list is empty.
std::vector<CudaDeviceInfo> cuda_devices(std::string* why_none = nullptr);

}  // namespace sv
