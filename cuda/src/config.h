// Argument checks of the CUDA prefilter, shared by the CUDA build and the no-CUDA stand-ins so
// that bad input gets the same sentence everywhere (defined in common.cpp).
#pragma once

#include "splineview/cuda_prefilter.h"

namespace sv::cuda::detail {

// Throws sv::Error("<what>: ...") for a bad layout, a degree outside 0..7, negative chunk or
// lines, or an axis longer than 2^30 samples (the kernels index in 32 bits).
void check_config(const Layout& layout, const PrefilterConfig& cfg, const char* what);

}  // namespace sv::cuda::detail
