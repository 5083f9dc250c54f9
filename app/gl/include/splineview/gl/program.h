// Shader programs built from the embedded shader files (shaders/): each stage is expanded
// (#version, variant #defines, #includes) and compiled; a compile error throws sv::Error whose
// message names the shader file and line where the problem is, mapped back through the
// #include expansion. Uniforms are set with glProgramUniform*, so no program is bound.
#pragma once

#include <string>
#include <vector>

#include <glm/glm.hpp>

#include "splineview/gl/objects.h"
#include "splineview/shaders.h"

namespace sv::gl {

// One stage of a program: GL_VERTEX_SHADER etc. and the name of an embedded shader file.
struct ShaderStage {
  GLenum type;
  std::string file;
};

// "vertex", "fragment", "compute", ...
const char* stage_name(GLenum type);

// Compiles an already expanded shader. On failure throws sv::Error:
//   "compiling fragment shader view.frag failed:\n  bspline_fetch.glsl:31:5: error: ..."
// `file` is the root file name used in that first line.
Shader compile_shader(GLenum type, const ExpandedShader& source, const std::string& file);

class Program {
 public:
  Program() = default;
  // Builds a program from embedded shader files, all expanded with the same defines.
  Program(const std::vector<ShaderStage>& stages, const ShaderDefines& defines = {});
  // Links already compiled shaders; `label` names the program in error messages.
  static Program link(const std::vector<const Shader*>& shaders, const std::string& label);

  GLuint id() const { return handle_.id(); }
  explicit operator bool() const { return bool(handle_); }
  const std::string& label() const { return label_; }

  // Location of an active uniform, or -1 when the name is not used by the program.
  GLint uniform_location(const char* name) const;

  void set(GLint location, int value);
  void set(GLint location, float value);
  void set(GLint location, const glm::vec2& value);
  void set(GLint location, const glm::vec4& value);
  void set(GLint location, const glm::mat3& value);

 private:
  detail::Handle<detail::ProgramTraits> handle_;
  std::string label_;
};

}  // namespace sv::gl
