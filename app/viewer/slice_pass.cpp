// The slice pass (see slice_pass.h).
#include "slice_pass.h"

#include <vector>

#include "splineview/error.h"
#include "splineview/gl/state.h"

namespace sv::viewer {
namespace {

// Uniform locations and units fixed by shaders/slice.frag and shaders/bspline_fetch.glsl.
constexpr GLint kCorner = 0;
constexpr GLint kRight = 1;
constexpr GLint kUp = 2;
constexpr GLint kViewportOrigin = 3;
constexpr GLint kLowScale = 4;
constexpr GLint kCheckerPx = 5;
constexpr GLint kQuantityMap = 6;
constexpr GLint kAxisScale = 7;
constexpr GLuint kVolumeUnit = 0;
constexpr GLuint kLutUnit = 1;

// Array order (z, y, x) to the shader's texture order (x, y, z).
glm::vec4 texture_order(const glm::dvec3& v) {
  return {static_cast<float>(v[2]), static_cast<float>(v[1]), static_cast<float>(v[0]), 0.0f};
}

glm::vec2 low_scale(const WindowLevel& wl) {
  return {static_cast<float>(wl.level - wl.window / 2.0), static_cast<float>(1.0 / wl.window)};
}

// Restores the 3-D binding of unit 0 and the 1-D binding of unit 1, which ScopedState does not
// cover.
class ScopedTextureBindings {
 public:
  ScopedTextureBindings() {
    glGetIntegerv(GL_ACTIVE_TEXTURE, &active_);
    glActiveTexture(GL_TEXTURE0 + kVolumeUnit);
    glGetIntegerv(GL_TEXTURE_BINDING_3D, &volume_);
    glActiveTexture(GL_TEXTURE0 + kLutUnit);
    glGetIntegerv(GL_TEXTURE_BINDING_1D, &lut_);
    glActiveTexture(static_cast<GLenum>(active_));
  }
  ~ScopedTextureBindings() {
    glActiveTexture(GL_TEXTURE0 + kVolumeUnit);
    glBindTexture(GL_TEXTURE_3D, static_cast<GLuint>(volume_));
    glActiveTexture(GL_TEXTURE0 + kLutUnit);
    glBindTexture(GL_TEXTURE_1D, static_cast<GLuint>(lut_));
    glActiveTexture(static_cast<GLenum>(active_));
  }
  ScopedTextureBindings(const ScopedTextureBindings&) = delete;
  ScopedTextureBindings& operator=(const ScopedTextureBindings&) = delete;

 private:
  GLint active_ = GL_TEXTURE0;
  GLint volume_ = 0;
  GLint lut_ = 0;
};

}  // namespace

gl::GridMapping slice_grid(const SliceGeometry& geometry, Plane plane, const Rect& cell) {
  const SliceMapping m = geometry.mapping(plane, cell);
  gl::GridMapping g;
  g.rows = cell.height > 0 ? static_cast<std::size_t>(cell.height) : 0;
  g.cols = cell.width > 0 ? static_cast<std::size_t>(cell.width) : 0;
  const double top = static_cast<double>(g.rows) - 0.5;  // b of the top row's centres
  for (int d = 0; d < 3; ++d) {
    const auto i = static_cast<std::size_t>(d);
    g.origin[i] = m.corner[d] + 0.5 * m.right[d] + top * m.up[d];
    g.step_col[i] = m.right[d];
    g.step_row[i] = -m.up[d];
  }
  return g;
}

float window_level_grey(float value, const WindowLevel& wl) {
  const glm::vec2 ls = low_scale(wl);
  const float g = (value - ls.x) * ls.y;
  return g < 0.0f ? 0.0f : (g > 1.0f ? 1.0f : g);
}

SlicePass::SlicePass() : lut_(make_lut_texture()), empty_vao_(gl::VertexArray::create()) {
  for (gl::Fetch f : kViewMethods) {
    programs_[method_index(f)] =
        gl::Program({{GL_VERTEX_SHADER, "view.vert"}, {GL_FRAGMENT_SHADER, "slice.frag"}},
                    {{method_fetch_define(f), ""}});
  }
}

gl::Program& SlicePass::program(gl::Fetch method, const gl::Quantity& q) {
  if (q.kind == gl::QuantityKind::Value) return programs_[method_index(method)];
  const std::string key = std::string(gl::fetch_name(method)) + "/" + gl::quantity_name(q);
  auto it = quantity_programs_.find(key);
  if (it == quantity_programs_.end())
    it = quantity_programs_
             .emplace(key, gl::Program({{GL_VERTEX_SHADER, "view.vert"},
                                        {GL_FRAGMENT_SHADER, "slice.frag"}},
                                       view_defines(method, q, 3)))
             .first;
  return it->second;
}

bool SlicePass::draw(const VolumeTextures& volume, gl::Fetch method, const SliceMapping& mapping,
                     const gl::Viewport& viewport, const WindowLevel& wl, float checker_px,
                     const QuantityView& quantity, const glm::vec3& axis_scale,
                     const VolumeGrbf& grbf) {
  if (!gl::quantity_problem(method, quantity.quantity, 3).empty()) return false;
  if (method == gl::Fetch::Grbf && (!grbf.weights || !*grbf.weights)) return false;  // not solved
  const gl::Texture* texture = method == gl::Fetch::Grbf       ? grbf.weights
                               : gl::fetch_prefiltered(method) ? volume.coefficients
                                                               : volume.samples;
  if (!texture || !*texture) throw Error("slice pass: no volume texture for this method");
  gl::Program& program = this->program(method, quantity.quantity);
  if (method == gl::Fetch::Grbf) gl::set_grbf_uniforms(program.id(), grbf.fetch, 3);
  if (!quantity.is_value()) {
    program.set(kQuantityMap, glm::vec4(static_cast<float>(1.0 / quantity.range),
                                        gl::quantity_signed(quantity.quantity) ? 1.0f : 0.0f,
                                        quantity.colour ? 1.0f : 0.0f, 0.0f));
    SV_GL_CHECK(
        glProgramUniform3f(program.id(), kAxisScale, axis_scale.x, axis_scale.y, axis_scale.z));
  }
  program.set(kCorner, texture_order(mapping.corner));
  program.set(kRight, texture_order(mapping.right));
  program.set(kUp, texture_order(mapping.up));
  program.set(kViewportOrigin,
              glm::vec2(static_cast<float>(viewport.x), static_cast<float>(viewport.y)));
  program.set(kLowScale, low_scale(wl));
  program.set(kCheckerPx, checker_px);

  gl::ScopedState saved;
  ScopedTextureBindings saved_textures;
  glViewport(viewport.x, viewport.y, viewport.width, viewport.height);
  gl::disable_fixed_function();
  glUseProgram(program.id());
  glBindVertexArray(empty_vao_.id());
  texture->bind(kVolumeUnit);
  if (method == gl::Fetch::CubicLut) lut_.bind(kLutUnit);
  SV_GL_CHECK(glDrawArrays(GL_TRIANGLES, 0, 3));
  return true;
}

}  // namespace sv::viewer
