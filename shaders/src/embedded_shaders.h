// The table of embedded shader files, defined in the source that shaders/embed.cmake
// generates at build time. Internal to splineview_shaders: use splineview/shaders.h.
#pragma once

#include <cstddef>

namespace sv::detail {

struct EmbeddedShader {
  const char* name;  // file name, e.g. "bspline_fetch.glsl"
  const char* text;  // NUL-terminated file contents
  std::size_t size;  // bytes, without the terminator
};

extern const EmbeddedShader kEmbeddedShaders[];
extern const std::size_t kEmbeddedShaderCount;

}  // namespace sv::detail
