// Saves the GL state that splineview's passes change and restores it at scope exit, so that a
// pass can share the context with Dear ImGui (or any other renderer) without leaking state:
// viewport, scissor box, enables (blend, depth test, scissor test, cull face, sRGB),
// program, vertex array, draw framebuffer, active texture unit and the 2-D texture bound to
// unit 0.
#pragma once

#include "splineview/gl/gl.h"

namespace sv::gl {

class ScopedState {
 public:
  ScopedState();
  ~ScopedState();
  ScopedState(const ScopedState&) = delete;
  ScopedState& operator=(const ScopedState&) = delete;

 private:
  GLint viewport_[4] = {};
  GLint scissor_box_[4] = {};
  GLboolean blend_ = GL_FALSE;
  GLboolean depth_test_ = GL_FALSE;
  GLboolean scissor_test_ = GL_FALSE;
  GLboolean cull_face_ = GL_FALSE;
  GLboolean framebuffer_srgb_ = GL_FALSE;
  GLint program_ = 0;
  GLint vertex_array_ = 0;
  GLint draw_framebuffer_ = 0;
  GLint active_texture_ = GL_TEXTURE0;
  GLint texture_unit0_ = 0;
};

// Disables what a full-screen or compute pass must not inherit (blend, depth test, scissor test,
// cull face, sRGB conversion). Callers save the state first (ScopedState).
void disable_fixed_function();

}  // namespace sv::gl
