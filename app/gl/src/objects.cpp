// GL object owners (see splineview/gl/objects.h).
#include "splineview/gl/objects.h"

#include "splineview/error.h"

namespace sv::gl {
namespace detail {

void TextureTraits::destroy(GLuint id) noexcept {
  SV_GL_CHECK_NOTHROW(glDeleteTextures(1, &id));
}
void ShaderTraits::destroy(GLuint id) noexcept {
  SV_GL_CHECK_NOTHROW(glDeleteShader(id));
}
void ProgramTraits::destroy(GLuint id) noexcept {
  SV_GL_CHECK_NOTHROW(glDeleteProgram(id));
}
void BufferTraits::destroy(GLuint id) noexcept {
  SV_GL_CHECK_NOTHROW(glDeleteBuffers(1, &id));
}
void VertexArrayTraits::destroy(GLuint id) noexcept {
  SV_GL_CHECK_NOTHROW(glDeleteVertexArrays(1, &id));
}
void FramebufferTraits::destroy(GLuint id) noexcept {
  SV_GL_CHECK_NOTHROW(glDeleteFramebuffers(1, &id));
}
void QueryTraits::destroy(GLuint id) noexcept {
  SV_GL_CHECK_NOTHROW(glDeleteQueries(1, &id));
}
void SamplerTraits::destroy(GLuint id) noexcept {
  SV_GL_CHECK_NOTHROW(glDeleteSamplers(1, &id));
}

}  // namespace detail

namespace {

// Sets the pixel unpack state for tightly packed rows and restores the previous one.
class TightUnpack {
 public:
  TightUnpack() {
    glGetIntegerv(GL_UNPACK_ALIGNMENT, &alignment_);
    glGetIntegerv(GL_UNPACK_ROW_LENGTH, &row_length_);
    glGetIntegerv(GL_UNPACK_SKIP_ROWS, &skip_rows_);
    glGetIntegerv(GL_UNPACK_SKIP_PIXELS, &skip_pixels_);
    glGetIntegerv(GL_PIXEL_UNPACK_BUFFER_BINDING, &buffer_);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    glPixelStorei(GL_UNPACK_SKIP_ROWS, 0);
    glPixelStorei(GL_UNPACK_SKIP_PIXELS, 0);
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
  }
  ~TightUnpack() {
    glPixelStorei(GL_UNPACK_ALIGNMENT, alignment_);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, row_length_);
    glPixelStorei(GL_UNPACK_SKIP_ROWS, skip_rows_);
    glPixelStorei(GL_UNPACK_SKIP_PIXELS, skip_pixels_);
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, static_cast<GLuint>(buffer_));
  }
  TightUnpack(const TightUnpack&) = delete;
  TightUnpack& operator=(const TightUnpack&) = delete;

 private:
  GLint alignment_ = 4, row_length_ = 0, skip_rows_ = 0, skip_pixels_ = 0, buffer_ = 0;
};

}  // namespace

Texture Texture::create_2d(GLenum internal_format, int width, int height, int levels) {
  GLint max_size = 0;
  SV_GL_CHECK(glGetIntegerv(GL_MAX_TEXTURE_SIZE, &max_size));
  if (width < 1 || height < 1 || width > max_size || height > max_size) {
    throw Error("texture size " + std::to_string(width) + "x" + std::to_string(height) +
                " is outside 1.." + std::to_string(max_size) + " (GL_MAX_TEXTURE_SIZE)");
  }
  GLuint id = 0;
  SV_GL_CHECK(glCreateTextures(GL_TEXTURE_2D, 1, &id));
  Texture t;
  t.handle_ = detail::Handle<detail::TextureTraits>(id);
  SV_GL_CHECK(glTextureStorage2D(id, levels, internal_format, width, height));
  t.target_ = GL_TEXTURE_2D;
  t.width_ = width;
  t.height_ = height;
  t.internal_format_ = internal_format;
  return t;
}

Texture Texture::create_1d(GLenum internal_format, int width) {
  GLint max_size = 0;
  SV_GL_CHECK(glGetIntegerv(GL_MAX_TEXTURE_SIZE, &max_size));
  if (width < 1 || width > max_size) {
    throw Error("1-D texture size " + std::to_string(width) + " is outside 1.." +
                std::to_string(max_size) + " (GL_MAX_TEXTURE_SIZE)");
  }
  GLuint id = 0;
  SV_GL_CHECK(glCreateTextures(GL_TEXTURE_1D, 1, &id));
  Texture t;
  t.handle_ = detail::Handle<detail::TextureTraits>(id);
  SV_GL_CHECK(glTextureStorage1D(id, 1, internal_format, width));
  t.target_ = GL_TEXTURE_1D;
  t.width_ = width;
  t.height_ = 1;
  t.internal_format_ = internal_format;
  return t;
}

Texture Texture::create_3d(GLenum internal_format, int width, int height, int depth) {
  GLint max_size = 0;
  SV_GL_CHECK(glGetIntegerv(GL_MAX_3D_TEXTURE_SIZE, &max_size));
  if (width < 1 || height < 1 || depth < 1 || width > max_size || height > max_size ||
      depth > max_size) {
    throw Error("3-D texture size " + std::to_string(width) + "x" + std::to_string(height) + "x" +
                std::to_string(depth) + " is outside 1.." + std::to_string(max_size) +
                " (GL_MAX_3D_TEXTURE_SIZE)");
  }
  GLuint id = 0;
  SV_GL_CHECK(glCreateTextures(GL_TEXTURE_3D, 1, &id));
  Texture t;
  t.handle_ = detail::Handle<detail::TextureTraits>(id);
  SV_GL_CHECK(glTextureStorage3D(id, 1, internal_format, width, height, depth));
  t.target_ = GL_TEXTURE_3D;
  t.width_ = width;
  t.height_ = height;
  t.depth_ = depth;
  t.internal_format_ = internal_format;
  return t;
}

void Texture::set_filter(GLenum min_filter, GLenum mag_filter) {
  SV_GL_CHECK(glTextureParameteri(id(), GL_TEXTURE_MIN_FILTER, static_cast<GLint>(min_filter)));
  SV_GL_CHECK(glTextureParameteri(id(), GL_TEXTURE_MAG_FILTER, static_cast<GLint>(mag_filter)));
}

void Texture::set_wrap(GLenum wrap) {
  SV_GL_CHECK(glTextureParameteri(id(), GL_TEXTURE_WRAP_S, static_cast<GLint>(wrap)));
  SV_GL_CHECK(glTextureParameteri(id(), GL_TEXTURE_WRAP_T, static_cast<GLint>(wrap)));
  SV_GL_CHECK(glTextureParameteri(id(), GL_TEXTURE_WRAP_R, static_cast<GLint>(wrap)));
}

void Texture::set_swizzle(GLint r, GLint g, GLint b, GLint a) {
  const GLint swizzle[4] = {r, g, b, a};
  SV_GL_CHECK(glTextureParameteriv(id(), GL_TEXTURE_SWIZZLE_RGBA, swizzle));
}

void Texture::upload_2d(GLenum format, GLenum type, const void* pixels) {
  TightUnpack unpack;
  SV_GL_CHECK(glTextureSubImage2D(id(), 0, 0, 0, width_, height_, format, type, pixels));
}

void Texture::upload(GLenum format, GLenum type, const void* pixels) {
  TightUnpack unpack;
  switch (target_) {
    case GL_TEXTURE_1D:
      SV_GL_CHECK(glTextureSubImage1D(id(), 0, 0, width_, format, type, pixels));
      break;
    case GL_TEXTURE_2D:
      SV_GL_CHECK(glTextureSubImage2D(id(), 0, 0, 0, width_, height_, format, type, pixels));
      break;
    case GL_TEXTURE_3D:
      SV_GL_CHECK(
          glTextureSubImage3D(id(), 0, 0, 0, 0, width_, height_, depth_, format, type, pixels));
      break;
    default:
      throw Error("Texture::upload: the texture has no storage");
  }
}

void Texture::bind(GLuint unit) const {
  SV_GL_CHECK(glBindTextureUnit(unit, id()));
}

Sampler Sampler::create() {
  GLuint id = 0;
  SV_GL_CHECK(glCreateSamplers(1, &id));
  Sampler s;
  s.handle_ = detail::Handle<detail::SamplerTraits>(id);
  return s;
}

void Sampler::set_filter(GLenum min_filter, GLenum mag_filter) {
  SV_GL_CHECK(glSamplerParameteri(id(), GL_TEXTURE_MIN_FILTER, static_cast<GLint>(min_filter)));
  SV_GL_CHECK(glSamplerParameteri(id(), GL_TEXTURE_MAG_FILTER, static_cast<GLint>(mag_filter)));
}

void Sampler::set_wrap(GLenum wrap) {
  SV_GL_CHECK(glSamplerParameteri(id(), GL_TEXTURE_WRAP_S, static_cast<GLint>(wrap)));
  SV_GL_CHECK(glSamplerParameteri(id(), GL_TEXTURE_WRAP_T, static_cast<GLint>(wrap)));
  SV_GL_CHECK(glSamplerParameteri(id(), GL_TEXTURE_WRAP_R, static_cast<GLint>(wrap)));
}

void Sampler::bind(GLuint unit) const {
  SV_GL_CHECK(glBindSampler(unit, id()));
}

Shader::Shader(GLenum stage) : stage_(stage) {
  const GLuint id = glCreateShader(stage);
  check_error("glCreateShader", __FILE__, __LINE__);
  if (id == 0) throw Error("glCreateShader returned 0");
  handle_ = detail::Handle<detail::ShaderTraits>(id);
}

Buffer Buffer::create(GLsizeiptr bytes, const void* data, GLbitfield flags) {
  GLuint id = 0;
  SV_GL_CHECK(glCreateBuffers(1, &id));
  Buffer b;
  b.handle_ = detail::Handle<detail::BufferTraits>(id);
  SV_GL_CHECK(glNamedBufferStorage(id, bytes, data, flags));
  b.size_ = bytes;
  return b;
}

VertexArray VertexArray::create() {
  GLuint id = 0;
  SV_GL_CHECK(glCreateVertexArrays(1, &id));
  VertexArray v;
  v.handle_ = detail::Handle<detail::VertexArrayTraits>(id);
  return v;
}

Framebuffer Framebuffer::create() {
  GLuint id = 0;
  SV_GL_CHECK(glCreateFramebuffers(1, &id));
  Framebuffer f;
  f.handle_ = detail::Handle<detail::FramebufferTraits>(id);
  return f;
}

void Framebuffer::attach_color(const Texture& texture, int index, int level) {
  SV_GL_CHECK(glNamedFramebufferTexture(id(), GL_COLOR_ATTACHMENT0 + static_cast<GLenum>(index),
                                        texture.id(), level));
}

void Framebuffer::check_complete() const {
  GLenum status = 0;
  SV_GL_CHECK(status = glCheckNamedFramebufferStatus(id(), GL_FRAMEBUFFER));
  if (status == GL_FRAMEBUFFER_COMPLETE) return;
  std::string name;
  switch (status) {
    case GL_FRAMEBUFFER_INCOMPLETE_ATTACHMENT:
      name = "INCOMPLETE_ATTACHMENT";
      break;
    case GL_FRAMEBUFFER_INCOMPLETE_MISSING_ATTACHMENT:
      name = "MISSING_ATTACHMENT";
      break;
    case GL_FRAMEBUFFER_UNSUPPORTED:
      name = "UNSUPPORTED";
      break;
    case GL_FRAMEBUFFER_INCOMPLETE_MULTISAMPLE:
      name = "INCOMPLETE_MULTISAMPLE";
      break;
    default:
      name = "status " + std::to_string(status);
  }
  throw Error("framebuffer " + std::to_string(id()) + " is incomplete: GL_FRAMEBUFFER_" + name);
}

Query Query::create(GLenum target) {
  GLuint id = 0;
  SV_GL_CHECK(glCreateQueries(target, 1, &id));
  Query q;
  q.handle_ = detail::Handle<detail::QueryTraits>(id);
  q.target_ = target;
  return q;
}

}  // namespace sv::gl
