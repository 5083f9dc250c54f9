// Argument checks of the CUDA upscaling, shared by the CUDA build and the no-CUDA stand-ins so
// that bad input gets the same sentence everywhere (defined in upscale_common.cpp).
#pragma once

#include <cstddef>

#include "splineview/cuda_upscale.h"

namespace sv::cuda::detail {

// Throws sv::Error("<what>: ...") unless the layout is a 2-D image of 1..4 channels, factor is
// 1..kMaxUpscaleFactor, the method and boundary are known and the output extents (H f, W f)
// stay below 2^30.
void check_upscale(const Layout& layout, int factor, UpscaleMethod method, Boundary boundary,
                   const char* what);

// Throws sv::Error("<what>: ...") unless the layout is a 2-D image, src_channels is 1..4 and at
// least layout.channels, and src_pitch holds a row of W * src_channels bytes.
void check_unpack(std::size_t src_pitch, int src_channels, const Layout& layout, const char* what);

}  // namespace sv::cuda::detail
