// Grid mappings (evaluator.h) for the resampling transforms of lib/resample.h, so that the GL
// paths sample exactly where sv::rotate and sv::zoom do.
#pragma once

#include <cstddef>

#include "splineview/gl/evaluator.h"

namespace sv::gl {

// sv::rotate's mapping for an H x W image: output (y, x) takes the input at
// R(-degrees) (p - c) + c, c = ((H-1)/2, (W-1)/2).
GridMapping rotation_grid(std::size_t height, std::size_t width, double degrees);

}  // namespace sv::gl
