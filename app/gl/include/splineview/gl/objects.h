// Move-only owners of GL objects (textures, samplers, shaders, programs, buffers, vertex
// arrays, framebuffers, queries). Each deletes its object when it dies; moved-from owners are
// empty. Creation uses GL 4.5 direct state access, so no binding (and no state change) is needed to
// set up an object. All functions need a current context with loaded functions.
#pragma once

#include <string>
#include <utility>

#include "splineview/gl/gl.h"

namespace sv::gl {
namespace detail {

// The shared move-only mechanics; Traits::destroy(GLuint) deletes one object.
template <class Traits>
class Handle {
 public:
  Handle() = default;
  explicit Handle(GLuint id) : id_(id) {}
  ~Handle() { reset(); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept : id_(std::exchange(other.id_, 0)) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, 0);
    }
    return *this;
  }

  GLuint id() const { return id_; }
  explicit operator bool() const { return id_ != 0; }
  void reset() noexcept {
    if (id_ != 0) Traits::destroy(id_);
    id_ = 0;
  }

 private:
  GLuint id_ = 0;
};

struct TextureTraits {
  static void destroy(GLuint id) noexcept;
};
struct ShaderTraits {
  static void destroy(GLuint id) noexcept;
};
struct ProgramTraits {
  static void destroy(GLuint id) noexcept;
};
struct BufferTraits {
  static void destroy(GLuint id) noexcept;
};
struct VertexArrayTraits {
  static void destroy(GLuint id) noexcept;
};
struct FramebufferTraits {
  static void destroy(GLuint id) noexcept;
};
struct QueryTraits {
  static void destroy(GLuint id) noexcept;
};
struct SamplerTraits {
  static void destroy(GLuint id) noexcept;
};

}  // namespace detail

// A texture with immutable storage.
class Texture {
 public:
  Texture() = default;
  // 2-D texture of `levels` mip levels; throws sv::Error when the size exceeds
  // GL_MAX_TEXTURE_SIZE or the storage cannot be allocated.
  static Texture create_2d(GLenum internal_format, int width, int height, int levels = 1);
  // 1-D texture (width up to GL_MAX_TEXTURE_SIZE) and 3-D texture (each side up to
  // GL_MAX_3D_TEXTURE_SIZE), one mip level; throws sv::Error like create_2d.
  static Texture create_1d(GLenum internal_format, int width);
  static Texture create_3d(GLenum internal_format, int width, int height, int depth);

  GLuint id() const { return handle_.id(); }
  explicit operator bool() const { return bool(handle_); }
  GLenum target() const { return target_; }  // GL_TEXTURE_1D, _2D or _3D
  int width() const { return width_; }
  int height() const { return height_; }
  int depth() const { return depth_; }
  GLenum internal_format() const { return internal_format_; }

  void set_filter(GLenum min_filter, GLenum mag_filter);
  void set_wrap(GLenum wrap);  // S, T and R
  // Which source component feeds r, g, b, a (GL_RED.., GL_ZERO, GL_ONE).
  void set_swizzle(GLint r, GLint g, GLint b, GLint a);
  // Replaces level 0 with tightly packed rows (`format`/`type` as in glTexSubImage2D). Sets and
  // restores the pixel unpack state it needs, so callers' settings are untouched.
  void upload_2d(GLenum format, GLenum type, const void* pixels);
  // Replaces level 0 of a 1-D, 2-D or 3-D texture with tightly packed data (x fastest, then
  // y, then z); unpack state handled as in upload_2d.
  void upload(GLenum format, GLenum type, const void* pixels);
  void bind(GLuint unit) const;

 private:
  detail::Handle<detail::TextureTraits> handle_;
  GLenum target_ = 0;
  int width_ = 0;
  int height_ = 0;
  int depth_ = 1;
  GLenum internal_format_ = 0;
};

// A sampler object: filtering and wrap settings that override the bound texture's own.
class Sampler {
 public:
  Sampler() = default;
  static Sampler create();
  GLuint id() const { return handle_.id(); }
  explicit operator bool() const { return bool(handle_); }
  void set_filter(GLenum min_filter, GLenum mag_filter);
  void set_wrap(GLenum wrap);  // S, T and R
  void bind(GLuint unit) const;

 private:
  detail::Handle<detail::SamplerTraits> handle_;
};

// A compiled shader stage (see program.h for building one from the shader files).
class Shader {
 public:
  Shader() = default;
  explicit Shader(GLenum stage);
  GLuint id() const { return handle_.id(); }
  GLenum stage() const { return stage_; }
  explicit operator bool() const { return bool(handle_); }

 private:
  detail::Handle<detail::ShaderTraits> handle_;
  GLenum stage_ = 0;
};

// A buffer with immutable storage.
class Buffer {
 public:
  Buffer() = default;
  static Buffer create(GLsizeiptr bytes, const void* data = nullptr, GLbitfield flags = 0);
  GLuint id() const { return handle_.id(); }
  GLsizeiptr size() const { return size_; }
  explicit operator bool() const { return bool(handle_); }

 private:
  detail::Handle<detail::BufferTraits> handle_;
  GLsizeiptr size_ = 0;
};

// A vertex array object. Core profile needs one bound for every draw, even attribute-less
// ones such as the full-screen triangle.
class VertexArray {
 public:
  VertexArray() = default;
  static VertexArray create();
  GLuint id() const { return handle_.id(); }
  explicit operator bool() const { return bool(handle_); }

 private:
  detail::Handle<detail::VertexArrayTraits> handle_;
};

// A framebuffer object for off-screen passes.
class Framebuffer {
 public:
  Framebuffer() = default;
  static Framebuffer create();
  GLuint id() const { return handle_.id(); }
  explicit operator bool() const { return bool(handle_); }
  void attach_color(const Texture& texture, int index = 0, int level = 0);
  // Throws sv::Error naming the completeness status when the framebuffer is incomplete.
  void check_complete() const;

 private:
  detail::Handle<detail::FramebufferTraits> handle_;
};

// A query object (GL_TIME_ELAPSED, GL_TIMESTAMP, GL_SAMPLES_PASSED, ...).
class Query {
 public:
  Query() = default;
  static Query create(GLenum target);
  GLuint id() const { return handle_.id(); }
  GLenum target() const { return target_; }
  explicit operator bool() const { return bool(handle_); }

 private:
  detail::Handle<detail::QueryTraits> handle_;
  GLenum target_ = 0;
};

}  // namespace sv::gl
