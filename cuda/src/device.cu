// Device enumeration through the CUDA runtime (no kernels): used by `splinetool info` and to
// decide whether CUDA tests run or skip.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <string>

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
      // The runtime answers cudaErrorInsufficientDriver both when the driver is too old and when
      // there is none at all (no libcuda.so.1); cudaDriverGetVersion tells them apart (0: none).
      int driver = 0, runtime = 0;
      if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
      if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = 0;
      const auto cuda_version = [](int v) {
        return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
      };
      // A device list hidden by CUDA_VISIBLE_DEVICES is said (its value only when short and
      // printable: it reaches the terminal).
      std::string hidden;
      if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
        std::string v(visible);
        const bool plain = v.size() <= 64 && std::all_of(v.begin(), v.end(), [](char c) {
                             return c >= 0x20 && c < 0x7f && c != '\'';
                           });
        hidden =
            plain ? " (CUDA_VISIBLE_DEVICES is '" + v + "')" : " (CUDA_VISIBLE_DEVICES is set)";
      }
      if (err == cudaErrorNoDevice)
        *why_none = "no CUDA device on this machine" + hidden;
      else if (err == cudaErrorInsufficientDriver && driver == 0)
        *why_none = "no NVIDIA driver is installed on this machine";
      else if (err == cudaErrorInsufficientDriver)
        *why_none = "the NVIDIA driver supports CUDA " + cuda_version(driver) +
                    ", older than the CUDA " + cuda_version(runtime) +
                    " this build needs (update the driver)";
      else
        *why_none = std::string("no usable CUDA device (") + cudaGetErrorString(err) + ")";
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
