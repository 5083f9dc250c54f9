// The viewer's image pass for the six reconstruction methods (see method_pass.h).
#include "method_pass.h"

#include <string>
#include <vector>

#include "splineview/error.h"
#include "splineview/gl/state.h"

namespace sv::viewer {
namespace {

// Uniform locations and units fixed by shaders/view.frag and shaders/bspline_fetch.glsl.
constexpr GLint kFragToImage = 0;
constexpr GLint kCheckerPx = 1;
constexpr GLint kLowGain = 2;
constexpr GLuint kImageUnit = 0;
constexpr GLuint kLutUnit = 1;

}  // namespace

gl::Viewport to_viewport(const Rect& r, int fb_height) {
  return {static_cast<int>(r.x), fb_height - static_cast<int>(r.y + r.height),
          static_cast<int>(r.width), static_cast<int>(r.height)};
}

std::size_t method_index(gl::Fetch f) {
  for (std::size_t i = 0; i < kMethods.size(); ++i)
    if (kMethods[i] == f) return i;
  return 0;
}

const char* method_fetch_define(gl::Fetch f) {
  switch (f) {
    case gl::Fetch::Nearest:
      return "SV_FETCH_NEAREST";
    case gl::Fetch::Linear:
      return "SV_FETCH_LINEAR";
    case gl::Fetch::CubicUnfiltered:
    case gl::Fetch::CubicOtf:
      return "SV_FETCH_CUBIC";
    case gl::Fetch::CubicLut:
      return "SV_FETCH_CUBIC_LUT";
    case gl::Fetch::CubicPrecise:
      return "SV_FETCH_CUBIC_PRECISE";
  }
  return "SV_FETCH_NEAREST";
}

gl::Texture make_lut_texture() {
  const gl::LutOptions lut_options;
  const std::vector<float> table = gl::lut_table(lut_options);
  gl::Texture lut =
      gl::Texture::create_1d(lut_options.half_float ? GL_RGB16F : GL_RGB32F, lut_options.texels);
  lut.set_filter(GL_LINEAR, GL_LINEAR);
  lut.set_wrap(GL_CLAMP_TO_EDGE);  // the default "endpoints" layout never wraps
  lut.upload(GL_RGB, GL_FLOAT, table.data());
  return lut;
}

const char* method_display_name(gl::Fetch f) {
  switch (f) {
    case gl::Fetch::Nearest:
      return "nearest";
    case gl::Fetch::Linear:
      return "linear";
    case gl::Fetch::CubicUnfiltered:
      return "cubic B-spline (unfiltered)";
    case gl::Fetch::CubicLut:
      return "prefiltered cubic, lookup table";
    case gl::Fetch::CubicOtf:
      return "prefiltered cubic, on the fly";
    case gl::Fetch::CubicPrecise:
      return "prefiltered cubic, precise";
  }
  return "?";
}

const char* method_short_name(gl::Fetch f) {
  switch (f) {
    case gl::Fetch::Nearest:
      return "nearest";
    case gl::Fetch::Linear:
      return "linear";
    case gl::Fetch::CubicUnfiltered:
      return "cubic, unfiltered";
    case gl::Fetch::CubicLut:
      return "prefiltered cubic: LUT";
    case gl::Fetch::CubicOtf:
      return "prefiltered cubic: on the fly";
    case gl::Fetch::CubicPrecise:
      return "prefiltered cubic: precise";
  }
  return "?";
}

gl::Fetch parse_method(const std::string& name) {
  if (name == "cubic") return gl::Fetch::CubicOtf;
  std::string valid;
  for (gl::Fetch f : kMethods) {
    if (name == gl::fetch_name(f)) return f;
    valid += std::string(gl::fetch_name(f)) + ", ";
  }
  throw Error("unknown method \"" + name + "\" (valid: " + valid + "cubic = otf)");
}

int method_degree(gl::Fetch f) {
  switch (f) {
    case gl::Fetch::Nearest:
      return 0;
    case gl::Fetch::Linear:
      return 1;
    default:
      return 3;
  }
}

MethodPass::MethodPass() : lut_(make_lut_texture()), empty_vao_(gl::VertexArray::create()) {
  for (gl::Fetch f : kMethods) {
    programs_[method_index(f)] =
        gl::Program({{GL_VERTEX_SHADER, "view.vert"}, {GL_FRAGMENT_SHADER, "view.frag"}},
                    {{method_fetch_define(f), ""}});
  }
}

void MethodPass::draw(const gl::ImageTextures& images, gl::Fetch method,
                      const glm::mat3& frag_to_image, const gl::Viewport& viewport,
                      float checker_px, const DisplayMap& display) {
  gl::Program& program = programs_[method_index(method)];
  program.set(kFragToImage, frag_to_image);
  program.set(kCheckerPx, checker_px);
  program.set(kLowGain, glm::vec2(display.low, display.gain));

  gl::ScopedState saved;
  glViewport(viewport.x, viewport.y, viewport.width, viewport.height);
  gl::disable_fixed_function();
  glUseProgram(program.id());
  glBindVertexArray(empty_vao_.id());
  const gl::Texture& texture = gl::fetch_prefiltered(method) ? images.coefficients : images.samples;
  texture.bind(kImageUnit);
  if (method == gl::Fetch::CubicLut) lut_.bind(kLutUnit);
  SV_GL_CHECK(glDrawArrays(GL_TRIANGLES, 0, 3));
}

}  // namespace sv::viewer
