// Shader compilation and program linking from the embedded files (see splineview/gl/program.h).
#include "splineview/gl/program.h"

#include <glm/gtc/type_ptr.hpp>

#include "splineview/error.h"

namespace sv::gl {
namespace {

std::string shader_log(GLuint shader) {
  GLint length = 0;
  glGetShaderiv(shader, GL_INFO_LOG_LENGTH, &length);
  std::string log(static_cast<std::size_t>(length > 0 ? length : 0), '\0');
  if (length > 0) glGetShaderInfoLog(shader, length, nullptr, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

std::string program_log(GLuint program) {
  GLint length = 0;
  glGetProgramiv(program, GL_INFO_LOG_LENGTH, &length);
  std::string log(static_cast<std::size_t>(length > 0 ? length : 0), '\0');
  if (length > 0) glGetProgramInfoLog(program, length, nullptr, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

// Indents every line of a (multi-line) log by two spaces.
std::string indent(const std::string& text) {
  std::string out = "  ";
  for (char c : text) {
    out.push_back(c);
    if (c == '\n') out += "  ";
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '\n')) out.pop_back();
  return out;
}

}  // namespace

const char* stage_name(GLenum type) {
  switch (type) {
    case GL_VERTEX_SHADER:
      return "vertex";
    case GL_FRAGMENT_SHADER:
      return "fragment";
    case GL_GEOMETRY_SHADER:
      return "geometry";
    case GL_TESS_CONTROL_SHADER:
      return "tessellation control";
    case GL_TESS_EVALUATION_SHADER:
      return "tessellation evaluation";
    case GL_COMPUTE_SHADER:
      return "compute";
    default:
      return "unknown-stage";
  }
}

Shader compile_shader(GLenum type, const ExpandedShader& source, const std::string& file) {
  Shader shader(type);
  const GLchar* text = source.text.c_str();
  SV_GL_CHECK(glShaderSource(shader.id(), 1, &text, nullptr));
  SV_GL_CHECK(glCompileShader(shader.id()));
  GLint ok = GL_FALSE;
  SV_GL_CHECK(glGetShaderiv(shader.id(), GL_COMPILE_STATUS, &ok));
  if (ok != GL_TRUE) {
    std::string log = shader_log(shader.id());
    if (log.empty()) log = "(the driver gave no log)";
    throw Error(std::string("compiling ") + stage_name(type) + " shader " + file + " failed:\n" +
                indent(map_compile_log(log, source)));
  }
  return shader;
}

Program::Program(const std::vector<ShaderStage>& stages, const ShaderDefines& defines) {
  if (stages.empty()) throw Error("a program needs at least one shader stage");
  std::string label;
  for (const ShaderStage& s : stages) label += (label.empty() ? "" : "+") + s.file;
  for (const auto& [name, value] : defines)
    label += " " + name + (value.empty() ? "" : "=" + value);

  std::vector<Shader> shaders;
  for (const ShaderStage& s : stages)
    shaders.push_back(compile_shader(s.type, expand_shader(s.file, defines), s.file));
  std::vector<const Shader*> pointers;
  for (const Shader& s : shaders) pointers.push_back(&s);
  *this = link(pointers, label);
}

Program Program::link(const std::vector<const Shader*>& shaders, const std::string& label) {
  const GLuint id = glCreateProgram();
  check_error("glCreateProgram", __FILE__, __LINE__);
  if (id == 0) throw Error("glCreateProgram returned 0");
  Program p;
  p.handle_ = detail::Handle<detail::ProgramTraits>(id);
  p.label_ = label;
  for (const Shader* s : shaders) SV_GL_CHECK(glAttachShader(id, s->id()));
  SV_GL_CHECK(glLinkProgram(id));
  for (const Shader* s : shaders) SV_GL_CHECK(glDetachShader(id, s->id()));
  GLint ok = GL_FALSE;
  SV_GL_CHECK(glGetProgramiv(id, GL_LINK_STATUS, &ok));
  if (ok != GL_TRUE) {
    std::string log = program_log(id);
    if (log.empty()) log = "(the driver gave no log)";
    throw Error("linking program " + label + " failed:\n" + indent(log));
  }
  return p;
}

GLint Program::uniform_location(const char* name) const {
  GLint location = -1;
  SV_GL_CHECK(location = glGetUniformLocation(id(), name));
  return location;
}

void Program::set(GLint location, int value) {
  SV_GL_CHECK(glProgramUniform1i(id(), location, value));
}
void Program::set(GLint location, float value) {
  SV_GL_CHECK(glProgramUniform1f(id(), location, value));
}
void Program::set(GLint location, const glm::vec2& value) {
  SV_GL_CHECK(glProgramUniform2fv(id(), location, 1, glm::value_ptr(value)));
}
void Program::set(GLint location, const glm::vec4& value) {
  SV_GL_CHECK(glProgramUniform4fv(id(), location, 1, glm::value_ptr(value)));
}
void Program::set(GLint location, const glm::mat3& value) {
  SV_GL_CHECK(glProgramUniformMatrix3fv(id(), location, 1, GL_FALSE, glm::value_ptr(value)));
}

}  // namespace sv::gl
