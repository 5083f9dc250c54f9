// REQUIRE_CUDA(): skips the current GoogleTest test, with the reason, where no CUDA device is
// usable (CI machines without a GPU), so that a GPU-only test never passes silently.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "splineview/cuda_memory.h"

#define REQUIRE_CUDA()                                                           \
  do {                                                                           \
    std::string why_;                                                            \
    if (!sv::cuda::available(&why_)) GTEST_SKIP() << "no CUDA device: " << why_; \
  } while (0)
