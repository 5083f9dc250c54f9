// GL function loading and error checks (see splineview/gl/gl.h).
#include "splineview/gl/gl.h"

#include <cstdio>
#include <sstream>

#include "splineview/error.h"

namespace sv::gl {
namespace {

// Collects all pending errors (GL may queue several) into "GL_X, GL_Y"; empty when none.
std::string drain_errors() {
  std::string names;
  for (int guard = 0; guard < 16; ++guard) {
    const GLenum e = glGetError();
    if (e == GL_NO_ERROR) break;
    names += (names.empty() ? "" : ", ") + error_name(e);
  }
  return names;
}

std::string describe(const char* call, const char* file, int line, const std::string& errors) {
  std::ostringstream s;
  s << call << " failed with " << errors << " (" << file << ":" << line << ")";
  return s.str();
}

const char* gl_string(GLenum name) {
  const GLubyte* s = glGetString(name);
  return s ? reinterpret_cast<const char*>(s) : "?";
}

}  // namespace

void load_functions(GLADloadfunc get_proc) {
  const int version = gladLoadGL(get_proc);
  if (version == 0) throw Error("gladLoadGL failed: no current OpenGL context?");
  const int major = GLAD_VERSION_MAJOR(version);
  const int minor = GLAD_VERSION_MINOR(version);
  if (major < 4 || (major == 4 && minor < 5)) {
    throw Error("OpenGL 4.5 core is required, the context provides " + std::to_string(major) + "." +
                std::to_string(minor) + " (" + context_description() + ")");
  }
}

std::string error_name(GLenum error) {
  switch (error) {
    case GL_NO_ERROR:
      return "GL_NO_ERROR";
    case GL_INVALID_ENUM:
      return "GL_INVALID_ENUM";
    case GL_INVALID_VALUE:
      return "GL_INVALID_VALUE";
    case GL_INVALID_OPERATION:
      return "GL_INVALID_OPERATION";
    case GL_INVALID_FRAMEBUFFER_OPERATION:
      return "GL_INVALID_FRAMEBUFFER_OPERATION";
    case GL_OUT_OF_MEMORY:
      return "GL_OUT_OF_MEMORY";
    case GL_STACK_UNDERFLOW:
      return "GL_STACK_UNDERFLOW";
    case GL_STACK_OVERFLOW:
      return "GL_STACK_OVERFLOW";
    default: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "GL error 0x%04X", error);
      return buf;
    }
  }
}

void check_error(const char* call, const char* file, int line) {
  const std::string errors = drain_errors();
  if (!errors.empty()) throw Error(describe(call, file, line, errors));
}

bool check_error_nothrow(const char* call, const char* file, int line) noexcept {
  try {
    const std::string errors = drain_errors();
    if (errors.empty()) return true;
    std::fprintf(stderr, "splineview: %s\n", describe(call, file, line, errors).c_str());
  } catch (...) {
  }
  return false;
}

bool timer_queries_meaningful() {
  const std::string renderer = gl_string(GL_RENDERER);
  for (const char* soft : {"llvmpipe", "softpipe", "swrast"})
    if (renderer.find(soft) != std::string::npos) return false;
  return true;
}

std::string context_description() {
  return std::string(gl_string(GL_RENDERER)) + ", " + gl_string(GL_VERSION) + ", " +
         gl_string(GL_VENDOR);
}

}  // namespace sv::gl
