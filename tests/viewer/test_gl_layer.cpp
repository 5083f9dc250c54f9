// Tests of the GL layer with a real context (an invisible GLFW window; run under Xvfb by
// ctest, skipped with the reason when no display or no GL 4.5 is available):
//  - compile errors name the shader file and line, mapped back through #include;
//  - the view pass renders nearest exactly, the prefiltered cubic interpolates the samples
//    and matches the double-precision reference everywhere inside the image extent (borders
//    included, so the mirrored-repeat addressing must agree with the reflect boundary), and
//    the unfiltered cubic is the (1 4 1)/6 smoothing of the samples;
//  - the pass leaves the GL state as it found it; the GPU timer delivers results.
// Images are fresh random data on every run (the seed is printed on failure).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include "splineview/error.h"
#include "splineview/gl/gl.h"
#include "splineview/gl/image_textures.h"
#include "splineview/gl/program.h"
#include "splineview/gl/timer.h"
#include "splineview/gl/view_pass.h"
#include "splineview/prefilter.h"
#include "splineview/sampler.h"

namespace {

// Exit status that ctest reads as "skipped" (SKIP_RETURN_CODE in tests/viewer/CMakeLists.txt).
constexpr int kSkip = 77;

GLFWwindow* g_window = nullptr;
// Created on first use; destroyed in main while the context is still current.
std::unique_ptr<sv::gl::ViewPass> g_pass;

std::uint32_t fresh_seed() {
  static std::uint32_t s = std::random_device{}();
  return s++;
}

sv::ArrayF random_image(std::size_t h, std::size_t w, std::size_t channels, std::uint32_t seed) {
  sv::ArrayF a({h, w}, channels);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = u(rng);
  return a;
}

// Renders `method` into an RGBA32F framebuffer of fb_w x fb_h and reads it back (rows top
// first, as the image). `frag_to_image` maps gl_FragCoord to image positions.
std::vector<float> render(const sv::gl::ImageTextures& images, sv::gl::FetchMethod method,
                          const glm::mat3& frag_to_image, int fb_w, int fb_h) {
  if (!g_pass) g_pass = std::make_unique<sv::gl::ViewPass>();
  sv::gl::Texture target = sv::gl::Texture::create_2d(GL_RGBA32F, fb_w, fb_h);
  sv::gl::Framebuffer fb = sv::gl::Framebuffer::create();
  fb.attach_color(target);
  fb.check_complete();
  glBindFramebuffer(GL_DRAW_FRAMEBUFFER, fb.id());
  g_pass->draw(images, method, frag_to_image, {0, 0, fb_w, fb_h});
  glBindFramebuffer(GL_DRAW_FRAMEBUFFER, 0);
  std::vector<float> rgba(static_cast<std::size_t>(fb_w) * fb_h * 4);
  SV_GL_CHECK(glGetTextureImage(target.id(), 0, GL_RGBA, GL_FLOAT,
                                static_cast<GLsizei>(rgba.size() * sizeof(float)), rgba.data()));
  // GL row 0 is the bottom row: flip so that row 0 is the top.
  std::vector<float> flipped(rgba.size());
  const std::size_t row = static_cast<std::size_t>(fb_w) * 4;
  for (int y = 0; y < fb_h; ++y)
    std::copy_n(&rgba[static_cast<std::size_t>(fb_h - 1 - y) * row], row, &flipped[y * row]);
  return flipped;
}

// The checkerboard that view.frag paints behind the image (16 px squares) at GL pixel (x, y).
double background(int x, int y) {
  return ((x / 16 + y / 16) & 1) == 0 ? 0.16 : 0.20;
}

// gl_FragCoord -> image position for zoom z, the image corner (-0.5, -0.5) at window pixel
// offset (ox, oy) from the top-left corner, framebuffer height fb_h.
glm::mat3 view_matrix(double z, double ox, double oy, int fb_h) {
  glm::mat3 m(1.0f);
  m[0] = glm::vec3(static_cast<float>(1 / z), 0, 0);
  m[1] = glm::vec3(0, static_cast<float>(-1 / z), 0);
  m[2] = glm::vec3(static_cast<float>(-ox / z - 0.5), static_cast<float>((fb_h - oy) / z - 0.5), 1);
  return m;
}

sv::gl::ImageTextures upload(const sv::ArrayF& samples) {
  sv::ArrayF coefficients = samples;
  sv::prefilter<float>(coefficients, {3, sv::Boundary::Reflect, 0});
  sv::gl::ImageTextures t;
  t.samples = sv::gl::upload_image(samples);
  t.coefficients = sv::gl::upload_image(coefficients);
  return t;
}

TEST(GlProgram, CompileErrorNamesTheIncludedFileAndLine) {
  std::map<std::string, std::string, std::less<>> files{
      {"lib.glsl", "float helper() {\n  return 1.0;\n}\nfloat broken() { return nope; }\n"},
      {"main.frag", "#include \"lib.glsl\"\nout vec4 c;\nvoid main() { c = vec4(broken()); }\n"}};
  const sv::ExpandedShader e =
      sv::expand_shader("main.frag", {{"X", "1"}}, [&](std::string_view n) -> const char* {
        auto it = files.find(n);
        return it == files.end() ? nullptr : it->second.c_str();
      });
  try {
    sv::gl::compile_shader(GL_FRAGMENT_SHADER, e, "main.frag");
    FAIL() << "a shader with an undeclared identifier compiled";
  } catch (const sv::Error& err) {
    const std::string msg = err.what();
    EXPECT_NE(msg.find("fragment shader main.frag"), std::string::npos) << msg;
    EXPECT_NE(msg.find("lib.glsl:4"), std::string::npos) << msg;
  }
}

TEST(GlProgram, EmbeddedViewShadersBuildInEveryVariant) {
  for (sv::gl::FetchMethod m : sv::gl::kFetchMethods) {
    EXPECT_NO_THROW(
        sv::gl::Program({{GL_VERTEX_SHADER, "view.vert"}, {GL_FRAGMENT_SHADER, "view.frag"}},
                        {{sv::gl::fetch_define(m), ""}}))
        << sv::gl::cli_name(m);
  }
}

TEST(GlViewPass, NearestAndPrefilteredCubicReproduceTheSamples) {
  for (std::size_t channels : {1u, 3u, 4u}) {
    const std::uint32_t seed = fresh_seed();
    SCOPED_TRACE("seed " + std::to_string(seed) + ", channels " + std::to_string(channels));
    const int w = 37, h = 23;  // odd sizes: no accidental symmetry
    const sv::ArrayF samples = random_image(h, w, channels, seed);
    const sv::gl::ImageTextures images = upload(samples);
    const glm::mat3 m = view_matrix(1.0, 0.0, 0.0, h);  // pixel (x, y) <-> sample (x, y)
    for (sv::gl::FetchMethod method :
         {sv::gl::FetchMethod::Nearest, sv::gl::FetchMethod::CubicPrefiltered}) {
      const std::vector<float> out = render(images, method, m, w, h);
      double max_error = 0;
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
          for (std::size_t c = 0; c < 3; ++c) {
            // Grey is shown as (g, g, g); with alpha the pass blends over the background.
            const double value = samples.at2(y, x, channels == 1 ? 0 : c);
            const double alpha = channels == 4 ? samples.at2(y, x, 3) : 1.0;
            const double bg = background(x, h - 1 - y);
            const double expected = bg + (value - bg) * alpha;
            max_error = std::max(
                max_error, std::abs(double(out[(std::size_t(y) * w + x) * 4 + c]) - expected));
          }
      // Nearest returns the stored floats (up to float rounding in the alpha blend). The cubic goes
      // through float coefficients and hardware bilinear weights; 8-bit weight quantisation (common
      // on GPUs) would cost up to about 2e-3 here, llvmpipe reaches about 1e-6.
      EXPECT_LE(max_error, method == sv::gl::FetchMethod::Nearest ? 1e-6 : 3e-3)
          << sv::gl::cli_name(method);
      std::printf("%-17s channels %zu: max |GPU - sample| = %.3g\n", sv::gl::cli_name(method),
                  channels, max_error);
    }
  }
}

TEST(GlViewPass, UnfilteredCubicIsTheSmoothedSamplesNotTheSamples) {
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const int w = 29, h = 17;
  const sv::ArrayF samples = random_image(h, w, 1, seed);
  const sv::gl::ImageTextures images = upload(samples);
  const std::vector<float> out =
      render(images, sv::gl::FetchMethod::CubicUnfiltered, view_matrix(1.0, 0, 0, h), w, h);
  auto f = [&](int y, int x) {  // reflect extension
    x = x < 0 ? -x - 1 : (x >= w ? 2 * w - 1 - x : x);
    y = y < 0 ? -y - 1 : (y >= h ? 2 * h - 1 - y : y);
    return double(samples.at2(y, x));
  };
  double max_error = 0, max_change = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const double smooth_x[3] = {(f(y - 1, x - 1) + 4 * f(y - 1, x) + f(y - 1, x + 1)) / 6,
                                  (f(y, x - 1) + 4 * f(y, x) + f(y, x + 1)) / 6,
                                  (f(y + 1, x - 1) + 4 * f(y + 1, x) + f(y + 1, x + 1)) / 6};
      const double expected = (smooth_x[0] + 4 * smooth_x[1] + smooth_x[2]) / 6;
      const double got = out[(std::size_t(y) * w + x) * 4];
      max_error = std::max(max_error, std::abs(got - expected));
      max_change = std::max(max_change, std::abs(got - f(y, x)));
    }
  EXPECT_LE(max_error, 3e-3);
  EXPECT_GT(max_change, 0.1) << "the unfiltered cubic should not reproduce random samples";
}

TEST(GlViewPass, PrefilteredCubicMatchesTheDoubleReferenceIncludingTheBorder) {
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const int w = 19, h = 13, fb_w = 180, fb_h = 140;
  const double zoom = 7.3, ox = 11.25, oy = 8.5;  // whole image plus background around it
  const sv::ArrayF samples = random_image(h, w, 3, seed);
  const sv::gl::ImageTextures images = upload(samples);
  const glm::mat3 m = view_matrix(zoom, ox, oy, fb_h);
  const std::vector<float> out =
      render(images, sv::gl::FetchMethod::CubicPrefiltered, m, fb_w, fb_h);

  sv::ArrayD coefficients = sv::ArrayD::from(samples);
  sv::prefilter<double>(coefficients, {3, sv::Boundary::Reflect, 0});
  std::vector<double> positions;
  std::vector<std::size_t> pixels;
  int border_pixels = 0;
  for (int y = 0; y < fb_h; ++y)
    for (int x = 0; x < fb_w; ++x) {
      const double px = (x + 0.5 - ox) / zoom - 0.5, py = (y + 0.5 - oy) / zoom - 0.5;
      const double e = 1e-3;
      if (px < -0.5 + e || py < -0.5 + e || px > w - 0.5 - e || py > h - 0.5 - e) continue;
      positions.push_back(py);
      positions.push_back(px);
      pixels.push_back(std::size_t(y) * fb_w + x);
      border_pixels += px < 0 || py < 0 || px > w - 1 || py > h - 1;
    }
  ASSERT_GT(border_pixels, 100);
  std::vector<double> reference(pixels.size() * 3);
  sv::sample(coefficients, positions.data(), pixels.size(), reference.data(),
             {3, sv::Boundary::Reflect});
  double max_error = 0;
  for (std::size_t i = 0; i < pixels.size(); ++i)
    for (std::size_t c = 0; c < 3; ++c) {
      // The pass clamps to the displayable range [0, 1].
      const double expected = std::clamp(reference[3 * i + c], 0.0, 1.0);
      max_error = std::max(max_error, std::abs(double(out[pixels[i] * 4 + c]) - expected));
    }
  std::printf(
      "prefiltered cubic vs double reference, %zu pixels (%d in the outer border): "
      "max error %.3g\n",
      pixels.size(), border_pixels, max_error);
  EXPECT_LE(max_error, 3e-3);
}

TEST(GlViewPass, LeavesTheGlStateAsItFoundIt) {
  const sv::gl::ImageTextures images = upload(random_image(8, 8, 3, fresh_seed()));
  sv::gl::VertexArray vao = sv::gl::VertexArray::create();
  sv::gl::Texture other = sv::gl::Texture::create_2d(GL_RGBA8, 4, 4);
  glViewport(3, 4, 50, 60);
  glEnable(GL_BLEND);
  glEnable(GL_SCISSOR_TEST);
  glScissor(1, 2, 30, 40);
  glBindVertexArray(vao.id());
  glActiveTexture(GL_TEXTURE3);
  glBindTextureUnit(0, other.id());
  render(images, sv::gl::FetchMethod::CubicPrefiltered, view_matrix(1, 0, 0, 8), 8, 8);
  GLint viewport[4], scissor[4], vertex_array = 0, active = 0, texture0 = 0, program = -1;
  glGetIntegerv(GL_VIEWPORT, viewport);
  glGetIntegerv(GL_SCISSOR_BOX, scissor);
  glGetIntegerv(GL_VERTEX_ARRAY_BINDING, &vertex_array);
  glGetIntegerv(GL_ACTIVE_TEXTURE, &active);
  glGetIntegerv(GL_CURRENT_PROGRAM, &program);
  glActiveTexture(GL_TEXTURE0);
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &texture0);
  EXPECT_EQ(viewport[0], 3);
  EXPECT_EQ(viewport[3], 60);
  EXPECT_EQ(scissor[2], 30);
  EXPECT_TRUE(glIsEnabled(GL_BLEND));
  EXPECT_TRUE(glIsEnabled(GL_SCISSOR_TEST));
  EXPECT_EQ(GLuint(vertex_array), vao.id());
  EXPECT_EQ(active, GL_TEXTURE3);
  EXPECT_EQ(GLuint(texture0), other.id());
  EXPECT_EQ(program, 0);
  glDisable(GL_BLEND);
  glDisable(GL_SCISSOR_TEST);
  glBindVertexArray(0);
  EXPECT_EQ(glGetError(), GLenum(GL_NO_ERROR));
}

TEST(GlTimer, DeliversResultsWithoutWaitingAndSkipsWhenAllAreInFlight) {
  const sv::gl::ImageTextures images = upload(random_image(64, 64, 3, fresh_seed()));
  sv::gl::GpuTimer timer(3);
  for (int i = 0; i < 5; ++i) {  // more intervals than queries, without collecting
    sv::gl::ScopedGpuTimer t(timer);
    render(images, sv::gl::FetchMethod::CubicPrefiltered, view_matrix(1, 0, 0, 64), 64, 64);
  }
  glFinish();
  const std::optional<double> ms = timer.poll();
  ASSERT_TRUE(ms.has_value());
  EXPECT_GE(*ms, 0.0);
  EXPECT_LT(*ms, 10000.0);
  // Every interval was either measured or skipped (never waited for); after glFinish all
  // measured ones have been collected, and at least as many as there are queries.
  EXPECT_EQ(timer.finished_count() + timer.skipped_count(), 5u);
  EXPECT_GE(timer.finished_count(), 3u);
}

TEST(GlObjects, MoveTransfersOwnershipAndErrorsNameTheCall) {
  sv::gl::Texture a = sv::gl::Texture::create_2d(GL_R32F, 4, 4);
  const GLuint id = a.id();
  sv::gl::Texture b = std::move(a);
  EXPECT_EQ(b.id(), id);
  EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  EXPECT_TRUE(glIsTexture(id));
  b = sv::gl::Texture();
  EXPECT_FALSE(glIsTexture(id));
  try {
    SV_GL_CHECK(glBindTextureUnit(0, 123456));  // not a texture name
    FAIL() << "no error for an invalid texture name";
  } catch (const sv::Error& e) {
    EXPECT_NE(std::string(e.what()).find("glBindTextureUnit"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("GL_INVALID_OPERATION"), std::string::npos) << e.what();
  }
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (!glfwInit()) {
    const char* why = nullptr;
    glfwGetError(&why);
    std::printf("SKIP: cannot initialise GLFW (%s)\n", why ? why : "no reason given");
    return kSkip;
  }
  glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 4);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 5);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  g_window = glfwCreateWindow(64, 64, "test_gl_layer", nullptr, nullptr);
  if (!g_window) {
    const char* why = nullptr;
    glfwGetError(&why);
    std::printf("SKIP: no OpenGL 4.5 core context (%s)\n", why ? why : "no reason given");
    glfwTerminate();
    return kSkip;
  }
  glfwMakeContextCurrent(g_window);
  sv::gl::load_functions(glfwGetProcAddress);
  std::printf("GL: %s\n", sv::gl::context_description().c_str());
  const int result = RUN_ALL_TESTS();
  g_pass.reset();
  glfwDestroyWindow(g_window);
  glfwTerminate();
  return result;
}
