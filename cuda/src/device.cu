// Device enumeration through the CUDA runtime (no kernels): used by `splinetool info` and to
// decide whether CUDA tests run or skip.
#include <cuda_runtime.h>

#include "splineview/cuda_device.h"

namespace sv {

bool cuda_compiled() {
  return true;
}

std::vector<CudaDeviceInfo> cuda_devices(std::string* why_none) {
  std::vector<CudaDeviceInfo> out;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    if (why_none) {
      if (err == cudaErrorNoDevice)
        *why_none = "no CUDA device on this machine";
      else if (err == cudaErrorInsufficientDriver)
        *why_none =
            "no NVIDIA driver new enough for this CUDA runtime on this machine "
            "(cudaGetDeviceCount: " +
            std::string(cudaGetErrorString(err)) + ")";
      else
        *why_none = std::string("no usable CUDA device (cudaGetDeviceCount: ") +
                    cudaGetErrorString(err) + ")";
    }
    cudaGetLastError();  // clear the sticky error state
    return out;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
    CudaDeviceInfo d;
    d.index = i;
    d.name = p.name;
    d.major = p.major;
    d.minor = p.minor;
    d.global_memory = p.totalGlobalMem;
    d.multiprocessors = p.multiProcessorCount;
    int clock_khz = 0, bus_bits = 0;
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, i);
    cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, i);
    // Double data rate: two transfers per clock.
    d.memory_bandwidth_gbs = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
    out.push_back(d);
  }
  if (out.empty() && why_none) *why_none = "the CUDA runtime reports no device";
  return out;
}

}  // namespace sv
