// The sentence every stand-in of a build without the CUDA toolkit throws (none.cpp and the
// *_none.cpp files): "<what>: <why there is no device>".
#pragma once

#include <string>

#include "splineview/cuda_device.h"
#include "splineview/error.h"

namespace sv::cuda {

[[noreturn]] inline void no_cuda(const std::string& what) {
  std::string why;
  cuda_devices(&why);
  throw Error(what + ": " + why);
}

}  // namespace sv::cuda
