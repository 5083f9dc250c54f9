// The CUDA device query: either a described device, or an empty list with a reason; tests that
// need a device skip visibly (GTEST_SKIP prints the reason, ctest reports "Skipped").
#include <gtest/gtest.h>

#include "splineview/cuda_device.h"

namespace {

TEST(CudaDevice, EmptyListAlwaysComesWithAReason) {
  std::string why;
  const auto devices = sv::cuda_devices(&why);
  if (devices.empty()) {
    EXPECT_FALSE(why.empty());
  } else {
    EXPECT_TRUE(sv::cuda_compiled());
  }
}

TEST(CudaDevice, DevicesAreDescribed) {
  std::string why;
  const auto devices = sv::cuda_devices(&why);
  if (devices.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  for (const auto& d : devices) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_GE(d.major, 5) << d.name;
    EXPECT_GT(d.global_memory, std::size_t{1} << 30) << d.name;
    EXPECT_GT(d.multiprocessors, 0) << d.name;
    std::printf("CUDA device %d: %s, sm_%d%d, %.1f GiB, %d SMs, %.0f GB/s peak\n", d.index,
                d.name.c_str(), d.major, d.minor, static_cast<double>(d.global_memory) / (1 << 30),
                d.multiprocessors, d.memory_bandwidth_gbs);
  }
}

}  // namespace
