// Tests of the shader sources without a GL context: the embedded files, the #include expander
// (version line, defines, include-once, errors naming file and line) and the mapping of driver
// log line numbers back to the original files.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <tuple>

#include "splineview/error.h"
#include "splineview/shaders.h"

namespace {

// In-memory shader files for the expander.
struct Files {
  std::map<std::string, std::string, std::less<>> files;
  sv::ShaderLookup lookup() const {
    return [this](std::string_view name) -> const char* {
      auto it = files.find(name);
      return it == files.end() ? nullptr : it->second.c_str();
    };
  }
};

// The 1-based line of `text` that contains `needle` (0 if none).
int line_of(const std::string& text, const std::string& needle) {
  int line = 1;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (text.substr(start, end - start).find(needle) != std::string::npos) return line;
    start = end + 1;
    ++line;
  }
  return 0;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const sv::Error& e) {
    return e.what();
  }
  return "(no sv::Error thrown)";
}

TEST(ShaderExpander, PrependsVersionThenDefinesThenSource) {
  Files fs;
  fs.files["main.frag"] = "void main() {}\n";
  const sv::ExpandedShader e =
      sv::expand_shader("main.frag", {{"SV_FETCH_CUBIC", ""}, {"N", "4"}}, fs.lookup());
  EXPECT_EQ(e.text, "#version 450 core\n#define SV_FETCH_CUBIC\n#define N 4\nvoid main() {}\n");
  ASSERT_EQ(e.lines.size(), 4u);
  EXPECT_EQ(e.locate(1).file, "<prelude>");
  EXPECT_EQ(e.locate(4).file, "main.frag");
  EXPECT_EQ(e.locate(4).line, 1);
}

TEST(ShaderExpander, ExpandsNestedIncludesOnceAndMapsEveryLine) {
  Files fs;
  fs.files["a.glsl"] = "// a line 1\n#include \"b.glsl\"\nfloat a_three;\n";
  fs.files["b.glsl"] = "// b line 1\nfloat b_two;\n";
  fs.files["main.frag"] =
      "// main 1\n#include \"a.glsl\"\n  #  include \"b.glsl\"  // again: skipped\n"
      "float main_four;\n";
  const sv::ExpandedShader e = sv::expand_shader("main.frag", {}, fs.lookup());
  EXPECT_EQ(e.text.find("#include"), std::string::npos);
  // b.glsl appears once although included twice.
  EXPECT_EQ(e.text.find("b_two"), e.text.rfind("b_two"));
  for (const auto& [needle, file, line] :
       {std::tuple{"b_two", "b.glsl", 2}, std::tuple{"a_three", "a.glsl", 3},
        std::tuple{"main_four", "main.frag", 4}, std::tuple{"main 1", "main.frag", 1}}) {
    const sv::SourceLocation loc = e.locate(line_of(e.text, needle));
    EXPECT_EQ(loc.file, file) << needle;
    EXPECT_EQ(loc.line, line) << needle;
  }
  EXPECT_EQ(e.lines.size(), static_cast<std::size_t>(line_of(e.text, "main_four")));
}

TEST(ShaderExpander, UnknownIncludeNamesIncludingFileAndLine) {
  Files fs;
  fs.files["main.frag"] = "\n\n#include \"missing.glsl\"\n";
  const std::string msg = error_of([&] { sv::expand_shader("main.frag", {}, fs.lookup()); });
  EXPECT_NE(msg.find("main.frag:3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("missing.glsl"), std::string::npos) << msg;
}

TEST(ShaderExpander, UnknownRootNamesTheFile) {
  Files fs;
  const std::string msg = error_of([&] { sv::expand_shader("nope.frag", {}, fs.lookup()); });
  EXPECT_NE(msg.find("nope.frag"), std::string::npos) << msg;
}

TEST(ShaderExpander, RejectsCyclesMalformedIncludesAndVersionLines) {
  Files fs;
  fs.files["x.glsl"] = "#include \"y.glsl\"\n";
  fs.files["y.glsl"] = "float y;\n#include \"x.glsl\"\n";
  fs.files["bad.frag"] = "#include <x.glsl>\n";
  fs.files["trailing.frag"] = "#include \"x.glsl\" junk\n";
  fs.files["version.frag"] = "// fine\n#version 330\n";
  std::string msg = error_of([&] { sv::expand_shader("x.glsl", {}, fs.lookup()); });
  EXPECT_NE(msg.find("y.glsl:2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cycle"), std::string::npos) << msg;
  msg = error_of([&] { sv::expand_shader("bad.frag", {}, fs.lookup()); });
  EXPECT_NE(msg.find("bad.frag:1"), std::string::npos) << msg;
  msg = error_of([&] { sv::expand_shader("trailing.frag", {}, fs.lookup()); });
  EXPECT_NE(msg.find("trailing.frag:1"), std::string::npos) << msg;
  msg = error_of([&] { sv::expand_shader("version.frag", {}, fs.lookup()); });
  EXPECT_NE(msg.find("version.frag:2"), std::string::npos) << msg;
  msg = error_of([&] { sv::expand_shader("x.glsl", {{"1BAD", ""}}, fs.lookup()); });
  EXPECT_NE(msg.find("1BAD"), std::string::npos) << msg;
}

TEST(ShaderExpander, IgnoresIncludesInsideBlockComments) {
  Files fs;
  fs.files["main.frag"] = "/* example:\n#include \"missing.glsl\"\n*/ float ok;\n";
  const sv::ExpandedShader e = sv::expand_shader("main.frag", {}, fs.lookup());
  EXPECT_NE(e.text.find("float ok;"), std::string::npos);
}

TEST(CompileLog, MapsMesaNvidiaAndKhronosFormatsToFileAndLine) {
  Files fs;
  fs.files["lib.glsl"] = "float f() {\n  return oops;\n}\n";
  fs.files["main.frag"] = "#include \"lib.glsl\"\nvoid main() { bad; }\n";
  const sv::ExpandedShader e = sv::expand_shader("main.frag", {{"A", "1"}}, fs.lookup());
  const int oops = line_of(e.text, "oops");
  const int bad = line_of(e.text, "bad;");
  ASSERT_GT(oops, 0);
  const std::string n_oops = std::to_string(oops), n_bad = std::to_string(bad);
  const std::string log = "0:" + n_oops + "(10): error: `oops' undeclared\n" + "0(" + n_bad +
                          ") : error C1008: undefined variable \"bad\"\n" + "ERROR: 0:" + n_bad +
                          ": 'bad' : undeclared identifier\n" + "some other line\n";
  const std::string mapped = sv::map_compile_log(log, e);
  EXPECT_NE(mapped.find("lib.glsl:2:10: error: `oops' undeclared"), std::string::npos) << mapped;
  EXPECT_NE(mapped.find("main.frag:2: error C1008"), std::string::npos) << mapped;
  EXPECT_NE(mapped.find("main.frag:2: error: 'bad'"), std::string::npos) << mapped;
  EXPECT_NE(mapped.find("some other line"), std::string::npos) << mapped;
}

TEST(EmbeddedShaders, HoldsTheShaderFilesByName) {
  const std::vector<std::string> names = sv::shader_names();
  for (const char* expected : {"bspline_fetch.glsl", "view.vert", "view.frag"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  EXPECT_NE(std::string(sv::shader_source("bspline_fetch.glsl")).find("vec4 sv_fetch_cubic("),
            std::string::npos);
}

TEST(EmbeddedShaders, UnknownNameThrowsNamingItAndTheKnownFiles) {
  const std::string msg = error_of([] { sv::shader_source("no_such.glsl"); });
  EXPECT_NE(msg.find("no_such.glsl"), std::string::npos) << msg;
  EXPECT_NE(msg.find("view.frag"), std::string::npos) << msg;
}

TEST(EmbeddedShaders, ViewShaderExpandsWithEachFetchVariant) {
  for (const char* variant : {"SV_FETCH_NEAREST", "SV_FETCH_LINEAR", "SV_FETCH_CUBIC"}) {
    const sv::ExpandedShader e = sv::expand_shader("view.frag", {{variant, ""}});
    EXPECT_EQ(e.text.rfind("#version 450 core\n#define ", 0), 0u) << variant;
    EXPECT_EQ(e.text.find("#include"), std::string::npos) << variant;
    // The fetch library is inside, and its lines map back to it.
    const int line = line_of(e.text, "vec4 sv_fetch_cubic(");
    ASSERT_GT(line, 0);
    EXPECT_EQ(e.locate(line).file, "bspline_fetch.glsl");
    EXPECT_EQ(e.locate(line).line,
              line_of(sv::shader_source("bspline_fetch.glsl"), "vec4 sv_fetch_cubic("));
  }
}

}  // namespace
