// The image view pass (see splineview/gl/view_pass.h).
#include "splineview/gl/view_pass.h"

#include "splineview/gl/state.h"

namespace sv::gl {
namespace {

// Uniform locations fixed by layout(location = ...) in shaders/view.frag.
constexpr GLint kFragToImage = 0;
constexpr GLint kCheckerPx = 1;
constexpr GLuint kImageUnit = 0;

std::size_t variant_index(FetchMethod m) {
  switch (m) {
    case FetchMethod::Nearest:
      return 0;
    case FetchMethod::Linear:
      return 1;
    case FetchMethod::CubicUnfiltered:
    case FetchMethod::CubicPrefiltered:
      return 2;
  }
  return 0;
}

}  // namespace

ViewPass::ViewPass() : empty_vao_(VertexArray::create()) {
  for (FetchMethod m : {FetchMethod::Nearest, FetchMethod::Linear, FetchMethod::CubicPrefiltered}) {
    programs_[variant_index(m)] =
        Program({{GL_VERTEX_SHADER, "view.vert"}, {GL_FRAGMENT_SHADER, "view.frag"}},
                {{fetch_define(m), ""}});
  }
}

Program& ViewPass::program_for(FetchMethod m) {
  return programs_[variant_index(m)];
}

void ViewPass::draw(const ImageTextures& images, FetchMethod method, const glm::mat3& frag_to_image,
                    const Viewport& viewport, float checker_px) {
  Program& program = program_for(method);
  program.set(kFragToImage, frag_to_image);
  program.set(kCheckerPx, checker_px);

  ScopedState saved;
  glViewport(viewport.x, viewport.y, viewport.width, viewport.height);
  disable_fixed_function();
  glUseProgram(program.id());
  glBindVertexArray(empty_vao_.id());
  images.for_method(method).bind(kImageUnit);
  SV_GL_CHECK(glDrawArrays(GL_TRIANGLES, 0, 3));
}

}  // namespace sv::gl
