// The image view pass: draws an image texture into a viewport rectangle, mapping each window
// pixel to an image position through a 3x3 matrix (zoom, pan) and reconstructing with one of
// the fetch methods (shaders/view.vert, shaders/view.frag, shaders/bspline_fetch.glsl).
// Outside the image extent it paints a dark checkerboard. Shared by the viewer and headless
// rendering; leaves the GL state as it found it.
#pragma once

#include <array>

#include <glm/glm.hpp>

#include "splineview/gl/fetch_method.h"
#include "splineview/gl/image_textures.h"
#include "splineview/gl/program.h"

namespace sv::gl {

// A rectangle of the current draw framebuffer in GL window coordinates (origin bottom left).
struct Viewport {
  int x = 0, y = 0, width = 0, height = 0;
};

class ViewPass {
 public:
  // Compiles the fetch variants; needs a current GL 4.5 context. Throws sv::Error with the
  // shader file and line on compile errors.
  ViewPass();

  // Draws `images.for_method(method)` into `viewport` of the bound draw framebuffer.
  // `frag_to_image` maps gl_FragCoord.xy (pixel centres at +0.5) to image positions
  // (sample k at k, x right, y down, as in the array).
  void draw(const ImageTextures& images, FetchMethod method, const glm::mat3& frag_to_image,
            const Viewport& viewport, float checker_px = 16.0f);

 private:
  // One program per fetch variant (nearest, linear, cubic); the two cubic methods share one.
  std::array<Program, 3> programs_;
  VertexArray empty_vao_;

  Program& program_for(FetchMethod m);
};

}  // namespace sv::gl
