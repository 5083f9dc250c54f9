// GL state save/restore around splineview's passes (see splineview/gl/state.h).
#include "splineview/gl/state.h"

namespace sv::gl {
namespace {

void set_enabled(GLenum cap, GLboolean on) {
  if (on) {
    glEnable(cap);
  } else {
    glDisable(cap);
  }
}

}  // namespace

ScopedState::ScopedState() {
  glGetIntegerv(GL_VIEWPORT, viewport_);
  glGetIntegerv(GL_SCISSOR_BOX, scissor_box_);
  blend_ = glIsEnabled(GL_BLEND);
  depth_test_ = glIsEnabled(GL_DEPTH_TEST);
  scissor_test_ = glIsEnabled(GL_SCISSOR_TEST);
  cull_face_ = glIsEnabled(GL_CULL_FACE);
  framebuffer_srgb_ = glIsEnabled(GL_FRAMEBUFFER_SRGB);
  glGetIntegerv(GL_CURRENT_PROGRAM, &program_);
  glGetIntegerv(GL_VERTEX_ARRAY_BINDING, &vertex_array_);
  glGetIntegerv(GL_DRAW_FRAMEBUFFER_BINDING, &draw_framebuffer_);
  glGetIntegerv(GL_ACTIVE_TEXTURE, &active_texture_);
  glActiveTexture(GL_TEXTURE0);
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &texture_unit0_);
  glActiveTexture(static_cast<GLenum>(active_texture_));
  check_error("ScopedState (saving GL state)", __FILE__, __LINE__);
}

ScopedState::~ScopedState() {
  glViewport(viewport_[0], viewport_[1], viewport_[2], viewport_[3]);
  glScissor(scissor_box_[0], scissor_box_[1], scissor_box_[2], scissor_box_[3]);
  set_enabled(GL_BLEND, blend_);
  set_enabled(GL_DEPTH_TEST, depth_test_);
  set_enabled(GL_SCISSOR_TEST, scissor_test_);
  set_enabled(GL_CULL_FACE, cull_face_);
  set_enabled(GL_FRAMEBUFFER_SRGB, framebuffer_srgb_);
  glUseProgram(static_cast<GLuint>(program_));
  glBindVertexArray(static_cast<GLuint>(vertex_array_));
  glBindFramebuffer(GL_DRAW_FRAMEBUFFER, static_cast<GLuint>(draw_framebuffer_));
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(texture_unit0_));
  glActiveTexture(static_cast<GLenum>(active_texture_));
  check_error_nothrow("ScopedState (restoring GL state)", __FILE__, __LINE__);
}

void disable_fixed_function() {
  glDisable(GL_BLEND);
  glDisable(GL_DEPTH_TEST);
  glDisable(GL_SCISSOR_TEST);
  glDisable(GL_CULL_FACE);
  glDisable(GL_FRAMEBUFFER_SRGB);
}

}  // namespace sv::gl
