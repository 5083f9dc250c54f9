// Back buffer read-back and PNG writing for --screenshot (see screenshot.h).
#include "screenshot.h"

#include <cstdint>
#include <vector>

#include "splineview/error.h"
#include "splineview/gl/gl.h"
#include "splineview/io.h"

namespace sv::viewer {

void save_screenshot(const std::string& path, int width, int height, unsigned framebuffer) {
  if (width <= 0 || height <= 0) throw Error("cannot take a screenshot of an empty window");
  const std::size_t row = static_cast<std::size_t>(width) * 3;
  std::vector<std::uint8_t> pixels(row * static_cast<std::size_t>(height));

  GLint pack_alignment = 4, read_framebuffer = 0, read_buffer = GL_BACK, pack_buffer = 0;
  glGetIntegerv(GL_PACK_ALIGNMENT, &pack_alignment);
  glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &read_framebuffer);
  glGetIntegerv(GL_READ_BUFFER, &read_buffer);
  glGetIntegerv(GL_PIXEL_PACK_BUFFER_BINDING, &pack_buffer);
  glBindFramebuffer(GL_READ_FRAMEBUFFER, framebuffer);
  glReadBuffer(framebuffer == 0 ? GL_BACK : GL_COLOR_ATTACHMENT0);
  glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  SV_GL_CHECK(glReadPixels(0, 0, width, height, GL_RGB, GL_UNSIGNED_BYTE, pixels.data()));
  glPixelStorei(GL_PACK_ALIGNMENT, pack_alignment);
  glBindBuffer(GL_PIXEL_PACK_BUFFER, static_cast<GLuint>(pack_buffer));
  glBindFramebuffer(GL_READ_FRAMEBUFFER, static_cast<GLuint>(read_framebuffer));
  glReadBuffer(static_cast<GLenum>(read_buffer));

  // GL rows start at the bottom; image rows at the top. sv::save_image writes through a
  // temporary file, so a failed write never leaves a truncated PNG behind.
  ArrayD image({static_cast<std::size_t>(height), static_cast<std::size_t>(width)}, 3);
  for (int y = 0; y < height; ++y) {
    const std::uint8_t* src = &pixels[static_cast<std::size_t>(height - 1 - y) * row];
    double* dst = &image.at2(static_cast<std::size_t>(y), 0);
    for (std::size_t i = 0; i < row; ++i) dst[i] = src[i];  // stored 8-bit values
  }
  save_image(path, image, 8);
}

}  // namespace sv::viewer
