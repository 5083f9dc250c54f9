// GLSL sources of splineview: the files under shaders/ embedded into the binary at build time,
// and the host-side preprocessor that turns one of them into a compilable shader string
// (the "#version 450 core" line, variant #defines, and every `#include "file.glsl"` expanded),
// together with a line map that sends the driver's line numbers back to file and line.
// Pure text processing: nothing here needs a GL context.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sv {

// The embedded text of shaders/<name> (e.g. "bspline_fetch.glsl"); throws sv::Error naming
// the file and listing the known ones when there is no such file.
const char* shader_source(std::string_view name);

// Names of all embedded shader files, sorted.
std::vector<std::string> shader_names();

// Where one line of an expanded shader came from. Lines added by the expander itself (the
// version line and the #defines) have file "<prelude>".
struct SourceLocation {
  std::string file;
  int line = 0;  // 1-based
};

// A shader after preprocessing: the text to hand to glShaderSource, and for each of its lines
// (index = line number - 1) the file and line it came from.
struct ExpandedShader {
  std::string text;
  std::vector<SourceLocation> lines;

  // Location of 1-based expanded line `line`; {"<unknown>", line} when out of range.
  SourceLocation locate(int line) const;
};

// A #define prepended after the version line: `#define name value` (value may be empty).
using ShaderDefines = std::vector<std::pair<std::string, std::string>>;

// Returns the text of a file by name, or nullptr when there is none.
using ShaderLookup = std::function<const char*(std::string_view name)>;

// Expands `#include "name"` lines recursively (each file is included at most once per shader,
// like #pragma once), prepends "#version 450 core" and the defines. Throws sv::Error naming
// file and line for an unknown include, an include cycle, a malformed #include, or a
// #version line inside a file (the expander owns the version line).
ExpandedShader expand_shader(std::string_view root, const ShaderDefines& defines,
                             const ShaderLookup& lookup);
// Same, reading the embedded files.
ExpandedShader expand_shader(std::string_view root, const ShaderDefines& defines = {});

// Rewrites a driver's compile log so that line references name the original file and line.
// Understands the common formats "0:12(5): error ..." (Mesa), "0(12) : error ..." (NVIDIA)
// and "ERROR: 0:12: ..." (AMD, Intel, glslang); other lines are kept as they are.
std::string map_compile_log(std::string_view log, const ExpandedShader& shader);

}  // namespace sv
