// Upload of 2-D images as float textures (see splineview/gl/image_textures.h).
#include "splineview/gl/image_textures.h"

#include "splineview/error.h"

namespace sv::gl {

Texture upload_image(const ArrayF& image) {
  if (image.rank() != 2) {
    throw Error("only 2-D images can be shown, got an array of shape " +
                describe_shape(image.dims(), image.channels()));
  }
  struct Format {
    GLenum internal, format;
    GLint swizzle[4];
  };
  static const Format kFormats[4] = {
      {GL_R32F, GL_RED, {GL_RED, GL_RED, GL_RED, GL_ONE}},
      {GL_RG32F, GL_RG, {GL_RED, GL_RED, GL_RED, GL_GREEN}},
      {GL_RGB32F, GL_RGB, {GL_RED, GL_GREEN, GL_BLUE, GL_ONE}},
      {GL_RGBA32F, GL_RGBA, {GL_RED, GL_GREEN, GL_BLUE, GL_ALPHA}},
  };
  const Format& f = kFormats[image.channels() - 1];
  Texture t = Texture::create_2d(f.internal, static_cast<int>(image.dim(1)),
                                 static_cast<int>(image.dim(0)));
  t.set_filter(GL_LINEAR, GL_LINEAR);
  t.set_wrap(GL_MIRRORED_REPEAT);
  t.set_swizzle(f.swizzle[0], f.swizzle[1], f.swizzle[2], f.swizzle[3]);
  t.upload_2d(f.format, GL_FLOAT, image.data());
  return t;
}

}  // namespace sv::gl
