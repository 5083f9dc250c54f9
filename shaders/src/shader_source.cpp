// Lookup of the shader files embedded at build time (see shaders/embed.cmake).
#include <algorithm>
#include <string>

#include "embedded_shaders.h"
#include "splineview/error.h"
#include "splineview/shaders.h"

namespace sv {

const char* shader_source(std::string_view name) {
  for (std::size_t i = 0; i < detail::kEmbeddedShaderCount; ++i) {
    if (name == detail::kEmbeddedShaders[i].name) return detail::kEmbeddedShaders[i].text;
  }
  std::string known;
  for (const std::string& n : shader_names()) known += (known.empty() ? "" : ", ") + n;
  throw Error("unknown shader file \"" + std::string(name) + "\" (embedded: " + known + ")");
}

std::vector<std::string> shader_names() {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < detail::kEmbeddedShaderCount; ++i)
    names.emplace_back(detail::kEmbeddedShaders[i].name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace sv
