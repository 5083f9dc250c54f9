// Stand-in for builds without the CUDA toolkit: there is never a device.
#include "splineview/cuda_device.h"

namespace sv {

bool cuda_compiled() {
  return false;
}

std::vector<CudaDeviceInfo> cuda_devices(std::string* why_none) {
  if (why_none)
    *why_none = "this build has no CUDA support (it was built without the CUDA toolkit)";
  return {};
}

}  // namespace sv
