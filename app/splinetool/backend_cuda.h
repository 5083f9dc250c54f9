// The CUDA backend of splinetool: prefilter and reconstruction kernels of splineview_cuda, in
// float. Compiled into every build; without the CUDA toolkit or without a device the factory
// refuses with the reason, before any work.
#pragma once

#include <memory>

#include "backend.h"

namespace splinetool {

// Checks that a CUDA device can run the kernels (throws sv::Error naming CUDA and the reason
// when not) and creates the backend; opt.fetch is one of fetch_names("cuda") or empty
// (precise), checked by make_backend.
std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& opt);

}  // namespace splinetool
