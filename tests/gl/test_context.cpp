// Tests of the headless EGL context: it provides GL 4.5 core without any window system, names
// its platform and renderer, and rejects a bad SPLINEVIEW_EGL_PLATFORM with a clear message.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "gl_test_util.h"
#include "splineview/error.h"
#include "splineview/gl/gl.h"

namespace {

TEST(GlHeadless, ProvidesGl45CoreWithoutAWindow) {
  SVGL_REQUIRE_CONTEXT();
  sv::gl::HeadlessContext& ctx = *svgltest::context();
  EXPECT_TRUE(ctx.platform() == "surfaceless" || ctx.platform() == "device") << ctx.platform();
  EXPECT_FALSE(ctx.description().empty());
  GLint major = 0, minor = 0, profile = 0;
  glGetIntegerv(GL_MAJOR_VERSION, &major);
  glGetIntegerv(GL_MINOR_VERSION, &minor);
  glGetIntegerv(GL_CONTEXT_PROFILE_MASK, &profile);
  EXPECT_TRUE(major > 4 || (major == 4 && minor >= 5)) << major << "." << minor;
  EXPECT_NE(profile & GL_CONTEXT_CORE_PROFILE_BIT, 0);
  // No default framebuffer: rendering needs a framebuffer object, which the evaluator makes.
  EXPECT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));
  std::printf("context: %s, platform %s\n", ctx.description().c_str(), ctx.platform().c_str());
}

TEST(GlHeadless, RejectsAnUnknownForcedPlatform) {
  SVGL_REQUIRE_CONTEXT();
  const char* old = std::getenv("SPLINEVIEW_EGL_PLATFORM");
  const std::string saved = old ? old : "";
  setenv("SPLINEVIEW_EGL_PLATFORM", "x11", 1);
  try {
    sv::gl::HeadlessContext ctx;
    ADD_FAILURE() << "SPLINEVIEW_EGL_PLATFORM=x11 was accepted";
  } catch (const sv::Error& e) {
    EXPECT_NE(std::string(e.what()).find("SPLINEVIEW_EGL_PLATFORM"), std::string::npos) << e.what();
  }
  if (old) {
    setenv("SPLINEVIEW_EGL_PLATFORM", saved.c_str(), 1);
  } else {
    unsetenv("SPLINEVIEW_EGL_PLATFORM");
  }
}

}  // namespace
