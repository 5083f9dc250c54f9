// Entry point of the GL layer: the GLAD loader header, function loading for a current
// context, and error checks that name the failed call. Include this instead of glad/gl.h.
// Works with any context provider (GLFW window, headless EGL): nothing here needs a window.
#pragma once

#include <glad/gl.h>

#include <string>

namespace sv::gl {

// Loads the GL 4.5 core functions through `get_proc` for the current context; throws
// sv::Error when loading fails or the context is older than 4.5.
void load_functions(GLADloadfunc get_proc);

// "GL_INVALID_ENUM" etc.; "GL error 0x...." for unknown codes.
std::string error_name(GLenum error);

// Reads all pending GL errors; throws sv::Error naming `call` and the place when there was
// one. Used through SV_GL_CHECK.
void check_error(const char* call, const char* file, int line);
// Same, but prints to stderr instead of throwing (for destructors). Returns false on error.
bool check_error_nothrow(const char* call, const char* file, int line) noexcept;

// Vendor, renderer and version strings of the current context, for logs and the UI.
std::string context_description();

// False on software renderers (Mesa llvmpipe/softpipe/swrast), whose GL_TIME_ELAPSED results
// are not GPU time (llvmpipe 22.3 returns timestamps for small draws and a fraction of the work
// for large ones): timing displays and benchmarks must not present them as such.
bool timer_queries_meaningful();

}  // namespace sv::gl

// Runs a GL call and throws sv::Error naming it when it raised a GL error:
//   SV_GL_CHECK(glTextureStorage2D(id, 1, GL_RGBA32F, w, h));
#define SV_GL_CHECK(call)                             \
  do {                                                \
    call;                                             \
    ::sv::gl::check_error(#call, __FILE__, __LINE__); \
  } while (0)

// Non-throwing variant for destructors and cleanup paths.
#define SV_GL_CHECK_NOTHROW(call)                             \
  do {                                                        \
    call;                                                     \
    ::sv::gl::check_error_nothrow(#call, __FILE__, __LINE__); \
  } while (0)
