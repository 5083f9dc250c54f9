// splinetool-gl.so: the GL backend as a module (modules.h). backend_gl.cpp and the GL layer are
// linked in; only these C functions are exported.
#include "backend_gl.h"
#include "modules.h"

namespace {

const splinetool::GlModule kTable = {splinetool::make_gl_backend, splinetool::gl_status,
                                     splinetool::share_gl_context};

}  // namespace

extern "C" {

__attribute__((visibility("default"))) const char* splinetool_module_build_key() {
  static const std::string key = splinetool::module_build_key();
  return key.c_str();
}

__attribute__((visibility("default"))) const splinetool::GlModule* splinetool_gl_module() {
  return &kTable;
}

}  // extern "C"
