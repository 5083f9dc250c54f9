// Host-side GLSL preprocessing: #include expansion with a line map, the version line and
// variant #defines, and rewriting of driver logs to original file:line references.
#include <algorithm>
#include <cctype>
#include <regex>
#include <set>
#include <sstream>

#include "splineview/error.h"
#include "splineview/shaders.h"

namespace sv {
namespace {

constexpr const char* kVersionLine = "#version 450 core";
constexpr const char* kPrelude = "<prelude>";

// Splits into lines without their terminators; a final line without '\n' still counts.
std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

std::string_view trim_left(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}

// If `line` is a preprocessor directive named `word` (spaces allowed around '#'), returns the
// rest of the line after the word; otherwise returns false.
bool directive(std::string_view line, std::string_view word, std::string_view* rest) {
  std::string_view s = trim_left(line);
  if (s.empty() || s.front() != '#') return false;
  s = trim_left(s.substr(1));
  if (s.substr(0, word.size()) != word) return false;
  s = s.substr(word.size());
  if (!s.empty() && s.front() != ' ' && s.front() != '\t' && s.front() != '"' && s.front() != '<')
    return false;  // e.g. "#includes" or "#version_x"
  *rest = s;
  return true;
}

// Updates whether a /* block comment */ is still open at the end of `line`.
bool block_comment_open_after(std::string_view line, bool open) {
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (open) {
      if (line[i] == '*' && i + 1 < line.size() && line[i + 1] == '/') {
        open = false;
        ++i;
      }
    } else if (line[i] == '/' && i + 1 < line.size()) {
      if (line[i + 1] == '/') return false;  // rest is a line comment
      if (line[i + 1] == '*') {
        open = true;
        ++i;
      }
    }
  }
  return open;
}

std::string where(std::string_view file, int line) {
  return std::string(file) + ":" + std::to_string(line);
}

class Expander {
 public:
  explicit Expander(const ShaderLookup& lookup) : lookup_(lookup) {}

  void add_line(std::string_view text, std::string_view file, int line) {
    out_.text.append(text);
    out_.text.push_back('\n');
    out_.lines.push_back({std::string(file), line});
  }

  // Appends the expansion of `name`; `from` names the including place for messages.
  void include(std::string_view name, const std::string& from) {
    const std::string key(name);
    if (std::find(stack_.begin(), stack_.end(), key) != stack_.end()) {
      std::string cycle;
      for (const std::string& s : stack_) cycle += s + " -> ";
      throw Error(from + ": include cycle: " + cycle + key);
    }
    if (done_.count(key)) return;  // included once per shader, like #pragma once
    const char* text = lookup_(name);
    if (!text) {
      throw Error((from.empty() ? std::string("shader") : from) + ": unknown shader file \"" + key +
                  "\"");
    }
    stack_.push_back(key);
    done_.insert(key);
    const std::vector<std::string_view> lines = split_lines(text);
    bool in_comment = false;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const int line_no = static_cast<int>(i) + 1;
      const std::string_view line = lines[i];
      std::string_view rest;
      if (!in_comment && directive(line, "include", &rest)) {
        include(parse_include_name(rest, key, line_no), where(key, line_no));
      } else if (!in_comment && directive(line, "version", &rest)) {
        throw Error(where(key, line_no) +
                    ": shader files must not contain a #version line (the expander prepends \"" +
                    kVersionLine + "\")");
      } else {
        add_line(line, key, line_no);
      }
      in_comment = block_comment_open_after(line, in_comment);
    }
    stack_.pop_back();
  }

  ExpandedShader take() { return std::move(out_); }

 private:
  static std::string_view parse_include_name(std::string_view rest, const std::string& file,
                                             int line) {
    std::string_view s = trim_left(rest);
    const std::size_t close = s.size() > 1 ? s.find('"', 1) : std::string_view::npos;
    if (s.empty() || s.front() != '"' || close == std::string_view::npos || close == 1) {
      throw Error(where(file, line) + ": malformed #include (expected #include \"file.glsl\")");
    }
    std::string_view after = trim_left(s.substr(close + 1));
    if (!after.empty() && after.substr(0, 2) != "//") {
      throw Error(where(file, line) + ": unexpected text after #include \"" +
                  std::string(s.substr(1, close - 1)) + "\"");
    }
    return s.substr(1, close - 1);
  }

  const ShaderLookup& lookup_;
  ExpandedShader out_;
  std::vector<std::string> stack_;
  std::set<std::string> done_;
};

bool valid_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

}  // namespace

SourceLocation ExpandedShader::locate(int line) const {
  if (line < 1 || line > static_cast<int>(lines.size())) return {"<unknown>", line};
  return lines[static_cast<std::size_t>(line - 1)];
}

ExpandedShader expand_shader(std::string_view root, const ShaderDefines& defines,
                             const ShaderLookup& lookup) {
  Expander ex(lookup);
  ex.add_line(kVersionLine, kPrelude, 1);
  int prelude_line = 1;
  for (const auto& [name, value] : defines) {
    if (!valid_identifier(name))
      throw Error("shader " + std::string(root) + ": invalid #define name \"" + name + "\"");
    if (value.find('\n') != std::string::npos)
      throw Error("shader " + std::string(root) + ": #define " + name + " has a multi-line value");
    ex.add_line("#define " + name + (value.empty() ? "" : " " + value), kPrelude, ++prelude_line);
  }
  ex.include(root, "");
  return ex.take();
}

ExpandedShader expand_shader(std::string_view root, const ShaderDefines& defines) {
  return expand_shader(root, defines, [](std::string_view name) -> const char* {
    try {
      return shader_source(name);
    } catch (const Error&) {
      return nullptr;
    }
  });
}

std::string map_compile_log(std::string_view log, const ExpandedShader& shader) {
  // Mesa: "0:12(5): error: ..."   NVIDIA: "0(12) : error C0000: ..."
  // AMD / Intel / glslang: "ERROR: 0:12: ..."
  static const std::regex mesa(R"(^(\s*)\d+:(\d+)\((\d+)\)\s*:\s*(.*)$)");
  static const std::regex nvidia(R"(^(\s*)\d+\((\d+)\)\s*:\s*(.*)$)");
  static const std::regex khronos(R"(^(\s*)(ERROR|WARNING):\s*\d+:(\d+):\s*(.*)$)");
  std::ostringstream out;
  for (std::string_view line_view : split_lines(log)) {
    const std::string line(line_view);
    std::smatch m;
    auto loc = [&](const std::ssub_match& number) {
      const SourceLocation l = shader.locate(std::stoi(number.str()));
      return l.file + ":" + std::to_string(l.line);
    };
    if (std::regex_match(line, m, mesa)) {
      out << m[1] << loc(m[2]) << ":" << m[3] << ": " << m[4] << '\n';
    } else if (std::regex_match(line, m, nvidia)) {
      out << m[1] << loc(m[2]) << ": " << m[3] << '\n';
    } else if (std::regex_match(line, m, khronos)) {
      std::string kind = m[2].str();
      std::transform(kind.begin(), kind.end(), kind.begin(),
                     [](char c) { return static_cast<char>(std::tolower(c)); });
      out << m[1] << loc(m[3]) << ": " << kind << ": " << m[4] << '\n';
    } else {
      out << line << '\n';
    }
  }
  return out.str();
}

}  // namespace sv
