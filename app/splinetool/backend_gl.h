// The GL backend of splinetool (compiled only when the GL layer is built, SPLINEVIEW_HAVE_GL):
// evaluation through the GLSL fetch family in a headless EGL context, prefiltering on the CPU.
#pragma once

#include <memory>

#include "backend.h"

namespace splinetool {

// Checks the fetch/format names; the GL context is created on the first operation.
std::unique_ptr<Backend> make_gl_backend(const BackendOptions& opt);

// true: the GL backends made from now on share one context and its compiled shaders (a batch
// of commands); false: that shared context is destroyed now, and each backend owns its own again.
void share_gl_context(bool share);

}  // namespace splinetool
