// The viewer's image pass for the six reconstruction methods (see method_pass.h).
#include "method_pass.h"

#include <algorithm>
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
constexpr GLint kQuantityMap = 3;
constexpr GLuint kImageUnit = 0;
constexpr GLuint kLutUnit = 1;

}  // namespace

gl::Viewport to_viewport(const Rect& r, int fb_height) {
  return {static_cast<int>(r.x), fb_height - static_cast<int>(r.y + r.height),
          static_cast<int>(r.width), static_cast<int>(r.height)};
}

std::size_t method_index(gl::Fetch f) {
  for (std::size_t i = 0; i < kViewMethods.size(); ++i)
    if (kViewMethods[i] == f) return i;
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
    case gl::Fetch::Grbf:
      return "SV_FETCH_GRBF";
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
    case gl::Fetch::Grbf:
      return "Gaussian RBF (GRBF)";
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
    case gl::Fetch::Grbf:
      return "GRBF";
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

gl::Fetch parse_view_method(const std::string& name) {
  if (name == gl::fetch_name(gl::Fetch::Grbf)) return gl::Fetch::Grbf;
  try {
    return parse_method(name);
  } catch (const Error&) {
    std::string valid;
    for (gl::Fetch f : kViewMethods) valid += std::string(gl::fetch_name(f)) + ", ";
    throw Error("unknown method \"" + name + "\" (valid: " + valid + "cubic = otf)");
  }
}

int method_degree(gl::Fetch f) {
  switch (f) {
    case gl::Fetch::Nearest:
      return 0;
    case gl::Fetch::Linear:
      return 1;
    case gl::Fetch::Grbf:
      return -1;  // not a B-spline
    default:
      return 3;
  }
}

glm::vec3 quantity_colour(double q, const QuantityView& view) {
  const double t = q / view.range;
  if (!gl::quantity_signed(view.quantity)) {
    const auto g = static_cast<float>(std::clamp(t, 0.0, 1.0));
    return glm::vec3(g);
  }
  const auto s = static_cast<float>(std::clamp(t, -1.0, 1.0));
  if (!view.colour) return glm::vec3(0.5f + 0.5f * s);
  // The shader's sv_diverging (bspline_quantity.glsl).
  const glm::vec3 lo(0.230f, 0.299f, 0.754f), mid(0.865f), hi(0.706f, 0.016f, 0.150f);
  return s < 0 ? glm::mix(mid, lo, -s) : glm::mix(mid, hi, s);
}

ShaderDefines view_defines(gl::Fetch method, const gl::Quantity& q, std::size_t rank) {
  ShaderDefines d = {{method_fetch_define(method), ""}};
  for (const auto& x : gl::quantity_defines(q, rank)) d.push_back(x);
  return d;
}

gl::Program& MethodPass::program(gl::Fetch method, const gl::Quantity& q) {
  if (q.kind == gl::QuantityKind::Value) return programs_[method_index(method)];
  const std::string key = std::string(gl::fetch_name(method)) + "/" + gl::quantity_name(q);
  auto it = quantity_programs_.find(key);
  if (it == quantity_programs_.end())
    it = quantity_programs_
             .emplace(key, gl::Program(
                               {{GL_VERTEX_SHADER, "view.vert"}, {GL_FRAGMENT_SHADER, "view.frag"}},
                               view_defines(method, q, 2)))
             .first;
  return it->second;
}

MethodPass::MethodPass() : lut_(make_lut_texture()), empty_vao_(gl::VertexArray::create()) {
  for (gl::Fetch f : kViewMethods) {
    programs_[method_index(f)] =
        gl::Program({{GL_VERTEX_SHADER, "view.vert"}, {GL_FRAGMENT_SHADER, "view.frag"}},
                    {{method_fetch_define(f), ""}});
  }
}

bool MethodPass::draw(const gl::ImageTextures& images, gl::Fetch method,
                      const glm::mat3& frag_to_image, const gl::Viewport& viewport,
                      float checker_px, const DisplayMap& display, const QuantityView& quantity) {
  if (!gl::quantity_problem(method, quantity.quantity, 2).empty()) return false;
  if (method == gl::Fetch::Grbf && !images.grbf) return false;
  gl::Program& program = this->program(method, quantity.quantity);
  if (method == gl::Fetch::Grbf) gl::set_grbf_uniforms(program.id(), images.grbf_fetch, 2);
  program.set(kFragToImage, frag_to_image);
  program.set(kCheckerPx, checker_px);
  program.set(kLowGain, glm::vec2(display.low, display.gain));
  if (!quantity.is_value())
    program.set(kQuantityMap, glm::vec4(static_cast<float>(1.0 / quantity.range),
                                        gl::quantity_signed(quantity.quantity) ? 1.0f : 0.0f,
                                        quantity.colour ? 1.0f : 0.0f, 0.0f));

  gl::ScopedState saved;
  glViewport(viewport.x, viewport.y, viewport.width, viewport.height);
  gl::disable_fixed_function();
  glUseProgram(program.id());
  glBindVertexArray(empty_vao_.id());
  const gl::Texture& texture = method == gl::Fetch::Grbf       ? images.grbf
                               : gl::fetch_prefiltered(method) ? images.coefficients
                                                               : images.samples;
  texture.bind(kImageUnit);
  if (method == gl::Fetch::CubicLut) lut_.bind(kLutUnit);
  SV_GL_CHECK(glDrawArrays(GL_TRIANGLES, 0, 3));
  return true;
}

}  // namespace sv::viewer
