// CUDA-GL interop object (see splineview/gl/cuda_interop.h). Compiled by the host compiler; the
// CUDA runtime headers come after glad's GL header, which defines the guard of <GL/gl.h> that
// cuda_gl_interop.h would otherwise pull in with conflicting prototypes.
#include "splineview/gl/cuda_interop.h"

#include <cstdio>
#include <optional>
#include <string>
#include <utility>

#include "splineview/cuda_bspline.h"
#include "splineview/error.h"
#include "splineview/gl/evaluator.h"
#include "splineview/gl/gl.h"

#if SPLINEVIEW_HAVE_CUDA
#include <cuda_gl_interop.h>
#include <cuda_runtime.h>
#endif

namespace sv::gl {

struct TextureInterop::Impl {
  GLuint texture = 0;
  GLenum target = 0;
  GLenum internal_format = 0;
  std::vector<std::size_t> dims;  // array order
  std::string fallback;           // empty: the CUDA path
  // Kept between operations so that a stream of frames does not allocate per frame; they grow
  // to the largest input seen (at most the texture's texels times its channels).
  cuda::DeviceBuffer staging, scratch;
  std::optional<double> kernel_ms;  // CUDA event time of the last prefilter's kernels
#if SPLINEVIEW_HAVE_CUDA
  cudaGraphicsResource_t resource = nullptr;
#endif

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
#if SPLINEVIEW_HAVE_CUDA
    // Destructors must not throw; a failure here leaves nothing the caller could act on.
    if (resource && cudaGraphicsUnregisterResource(resource) != cudaSuccess) cudaGetLastError();
#endif
  }

  std::string name() const {
    return "GL texture " + std::to_string(texture);
  }
  std::size_t max_channels() const {
    return internal_format == GL_RGBA32F ? 4 : 1;
  }
};

namespace {

const char* format_name(GLenum internal_format) {
  switch (internal_format) {
    case GL_R32F:
      return "GL_R32F";
    case GL_RGBA32F:
      return "GL_RGBA32F";
    case GL_R16F:
      return "GL_R16F";
  }
  return "?";
}

std::string texture_shape(const TextureInterop::Impl& m) {
  std::string s = m.dims.size() == 3 ? "3-D " : "2-D ";
  // GL order (width first) as GL users read it, then the array shape it takes.
  for (std::size_t i = m.dims.size(); i-- > 0;) s += std::to_string(m.dims[i]) + (i ? "x" : "");
  return s + " " + format_name(m.internal_format);
}

// Reads what the object needs to know about `texture` from GL itself, so the caller cannot pass
// a size or format that disagrees with the storage.
void describe_texture(TextureInterop::Impl& m, GLuint texture) {
  m.texture = texture;
  if (texture == 0 || glIsTexture(texture) != GL_TRUE)
    throw Error("GL name " + std::to_string(texture) +
                " is not a texture object, so it cannot be written through CUDA interop");
  GLint target = 0;
  SV_GL_CHECK(glGetTextureParameteriv(texture, GL_TEXTURE_TARGET, &target));
  m.target = static_cast<GLenum>(target);
  if (m.target != GL_TEXTURE_2D && m.target != GL_TEXTURE_3D)
    throw Error(m.name() +
                " is neither GL_TEXTURE_2D nor GL_TEXTURE_3D; CUDA interop writes only those "
                "(1-D data goes into a 2-D texture of height 1)");
  GLint width = 0, height = 0, depth = 0, internal = 0;
  SV_GL_CHECK(glGetTextureLevelParameteriv(texture, 0, GL_TEXTURE_WIDTH, &width));
  SV_GL_CHECK(glGetTextureLevelParameteriv(texture, 0, GL_TEXTURE_HEIGHT, &height));
  SV_GL_CHECK(glGetTextureLevelParameteriv(texture, 0, GL_TEXTURE_DEPTH, &depth));
  SV_GL_CHECK(glGetTextureLevelParameteriv(texture, 0, GL_TEXTURE_INTERNAL_FORMAT, &internal));
  if (width < 1 || height < 1 || depth < 1) throw Error(m.name() + " has no storage for level 0");
  m.internal_format = static_cast<GLenum>(internal);
  if (m.internal_format != GL_R32F && m.internal_format != GL_RGBA32F &&
      m.internal_format != GL_R16F) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%04X", static_cast<unsigned>(internal));
    throw Error(m.name() + " has internal format " + hex +
                "; CUDA interop writes GL_R32F, GL_RGBA32F or GL_R16F");
  }
  const auto size = [](GLint v) { return static_cast<std::size_t>(v); };
  if (m.target == GL_TEXTURE_2D) {
    m.dims = {size(height), size(width)};
  } else {
    m.dims = {size(depth), size(height), size(width)};
  }
}

// Throws unless samples of this shape fill the texture exactly: (H, W) or, for height 1, (W);
// (D, H, W) for 3-D; 1 channel for R32F/R16F, 1..4 for RGBA32F.
void check_fits(const TextureInterop::Impl& m, const std::vector<std::size_t>& dims,
                std::size_t channels) {
  const std::string given = "samples of shape " + describe_shape(dims, channels);
  const bool one_row = dims.size() == 1 && m.dims.size() == 2 && m.dims[0] == 1;
  if (dims != m.dims && !(one_row && dims[0] == m.dims[1])) {
    std::string want = describe_shape(m.dims, 1);
    if (m.dims.size() == 2 && m.dims[0] == 1) want += " or " + std::to_string(m.dims[1]);
    throw Error(given + " do not fit " + m.name() + " (" + texture_shape(m) +
                "), which takes shape " + want);
  }
  if (channels < 1 || channels > m.max_channels())
    throw Error(given + " do not fit " + m.name() + " (" + texture_shape(m) + "), which holds " +
                (m.max_channels() == 1 ? std::string("exactly 1 channel")
                                       : std::string("1 to 4 channels")));
}

// The CPU path's upload: tightly packed floats into level 0, whatever unpack state the caller
// left set (restored afterwards), and never from a bound pixel unpack buffer.
class TightUnpackState {
 public:
  TightUnpackState() {
    for (std::size_t i = 0; i < kCount; ++i) {
      glGetIntegerv(kNames[i], &saved_[i]);
      glPixelStorei(kNames[i], kNames[i] == GL_UNPACK_ALIGNMENT ? 1 : 0);
    }
    glGetIntegerv(GL_PIXEL_UNPACK_BUFFER_BINDING, &buffer_);
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
  }
  ~TightUnpackState() {
    for (std::size_t i = 0; i < kCount; ++i) glPixelStorei(kNames[i], saved_[i]);
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, static_cast<GLuint>(buffer_));
  }
  TightUnpackState(const TightUnpackState&) = delete;
  TightUnpackState& operator=(const TightUnpackState&) = delete;

 private:
  // 3-D uploads read IMAGE_HEIGHT and SKIP_IMAGES too.
  static constexpr std::size_t kCount = 6;
  static constexpr GLenum kNames[kCount] = {GL_UNPACK_ALIGNMENT,    GL_UNPACK_ROW_LENGTH,
                                            GL_UNPACK_IMAGE_HEIGHT, GL_UNPACK_SKIP_ROWS,
                                            GL_UNPACK_SKIP_PIXELS,  GL_UNPACK_SKIP_IMAGES};
  GLint saved_[kCount] = {};
  GLint buffer_ = 0;
};

// CPU path: float prefilter, then glTextureSubImage. Channels missing from RGBA32F are left to
// GL's conversion rule (0 for colour, 1 for alpha), which is what the CUDA prefilter writes too.
void upload_on_cpu(const TextureInterop::Impl& m, ArrayF coefficients);

void prefilter_on_cpu(const TextureInterop::Impl& m, ArrayF coefficients,
                      const PrefilterOptions& opt) {
  prefilter(coefficients, opt);
  upload_on_cpu(m, std::move(coefficients));
}

// The coefficients into level 0 with glTextureSubImage (the CPU path's upload).
void upload_on_cpu(const TextureInterop::Impl& m, ArrayF coefficients) {
  if (m.internal_format == GL_R16F) {
    // Rounded here (nearest, ties to even) to values a half represents exactly, so GL's own
    // float->half conversion, whose rounding the GL spec leaves open, has nothing left to round:
    // the texture holds the same halves on every driver.
    for (float& v : coefficients.vec()) v = texel_value(v, TexFormat::R16F);
  }
  static const GLenum kFormats[4] = {GL_RED, GL_RG, GL_RGB, GL_RGBA};
  const GLenum format = kFormats[coefficients.channels() - 1];
  const auto gl_size = [](std::size_t v) { return static_cast<GLsizei>(v); };
  const TightUnpackState unpack;
  if (m.target == GL_TEXTURE_2D) {
    SV_GL_CHECK(glTextureSubImage2D(m.texture, 0, 0, 0, gl_size(m.dims[1]), gl_size(m.dims[0]),
                                    format, GL_FLOAT, coefficients.data()));
  } else {
    SV_GL_CHECK(glTextureSubImage3D(m.texture, 0, 0, 0, 0, gl_size(m.dims[2]), gl_size(m.dims[1]),
                                    gl_size(m.dims[0]), format, GL_FLOAT, coefficients.data()));
  }
}

void ensure_size(cuda::DeviceBuffer& buffer, std::size_t count) {
  if (buffer.size() >= count) return;
  buffer = cuda::DeviceBuffer();  // free first: the peak stays at one buffer
  buffer = cuda::DeviceBuffer(count);
}

#if SPLINEVIEW_HAVE_CUDA

void check_cuda(cudaError_t err, const std::string& what) {
  if (err == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so the next operation starts clean
  throw Error(what + ": " + cudaGetErrorString(err));
}

// Makes the CUDA device that runs the current GL context the current CUDA device (registration
// and the kernels must use the same GPU). Returns a reason when no CUDA device runs the context
// (Mesa's llvmpipe on a machine with a GPU, say); an empty string otherwise, also when the query
// itself fails, in which case the registration decides.
std::string select_gl_device() {
  unsigned count = 0;
  int devices[16] = {};
  const cudaError_t err = cudaGLGetDevices(&count, devices, 16, cudaGLDeviceListAll);
  if (err == cudaErrorNoDevice || (err == cudaSuccess && count == 0)) {
    cudaGetLastError();
    return "no CUDA device runs the current GL context (" + context_description() + ")";
  }
  if (err != cudaSuccess) {
    cudaGetLastError();
    return {};
  }
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess) cudaGetLastError();
  for (unsigned i = 0; i < count && i < 16; ++i)
    if (devices[i] == current) return {};
  if (cudaSetDevice(devices[0]) != cudaSuccess) {
    cudaGetLastError();
    return "cannot select CUDA device " + std::to_string(devices[0]) +
           ", which runs the current GL context";
  }
  return {};
}

// Registers the texture; returns the reason on failure (the object then takes the CPU path).
std::string register_texture(TextureInterop::Impl& m) {
  std::string why;
  if (!cuda::available(&why)) return why;
  why = select_gl_device();
  if (!why.empty()) return why;
  const cudaError_t err = cudaGraphicsGLRegisterImage(&m.resource, m.texture, m.target,
                                                      cudaGraphicsRegisterFlagsSurfaceLoadStore);
  if (err != cudaSuccess) {
    cudaGetLastError();
    m.resource = nullptr;
    return std::string("cudaGraphicsGLRegisterImage: ") + cudaGetErrorString(err);
  }
  return {};
}

// One mapping of the texture for one operation: map, surface over level 0, and on the way out
// wait for the device, destroy the surface and unmap, on success and on every failure alike.
// Waiting for the whole device (not one stream) keeps the guarantee whatever streams the
// operation used: the surface is not destroyed under a running kernel, an asynchronous error is
// reported by the operation that caused it, and GL never touches the texture while it is mapped.
class ScopedMap {
 public:
  ScopedMap(cudaGraphicsResource_t resource, std::string what)
      : resource_(resource), what_(std::move(what)) {
    check_cuda(cudaGraphicsMapResources(1, &resource_, 0), what_ + ": mapping for CUDA");
    mapped_ = true;
    try {
      cudaArray_t array = nullptr;
      check_cuda(cudaGraphicsSubResourceGetMappedArray(&array, resource_, 0, 0),
                 what_ + ": getting the mapped CUDA array");
      cudaResourceDesc desc{};
      desc.resType = cudaResourceTypeArray;
      desc.res.array.array = array;
      check_cuda(cudaCreateSurfaceObject(&surface_, &desc), what_ + ": creating a surface");
    } catch (...) {
      release();
      throw;
    }
  }
  ~ScopedMap() { release(); }
  ScopedMap(const ScopedMap&) = delete;
  ScopedMap& operator=(const ScopedMap&) = delete;

  cudaSurfaceObject_t surface() const { return surface_; }

  // The successful end: reports the first error of the wait, the destruction or the unmap.
  void finish() {
    const cudaError_t err = release();
    check_cuda(err, what_);
  }

 private:
  cudaError_t release() noexcept {
    cudaError_t first = cudaSuccess;
    const auto keep = [&first](cudaError_t e) {
      if (first == cudaSuccess) first = e;
    };
    if (mapped_) keep(cudaDeviceSynchronize());
    if (surface_) keep(cudaDestroySurfaceObject(surface_));
    surface_ = 0;
    if (mapped_) keep(cudaGraphicsUnmapResources(1, &resource_, 0));
    mapped_ = false;
    if (first != cudaSuccess) cudaGetLastError();
    return first;
  }

  cudaGraphicsResource_t resource_;
  std::string what_;
  bool mapped_ = false;
  cudaSurfaceObject_t surface_ = 0;
};

cuda::SurfaceFormat surface_format(GLenum internal_format) {
  switch (internal_format) {
    case GL_RGBA32F:
      return cuda::SurfaceFormat::RGBA32F;
    case GL_R16F:
      return cuda::SurfaceFormat::R16F;
    default:
      return cuda::SurfaceFormat::R32F;
  }
}

#endif  // SPLINEVIEW_HAVE_CUDA

}  // namespace

TextureInterop::TextureInterop(GLuint texture, InteropOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  describe_texture(m, texture);
  if (!options.allow_cuda) {
    m.fallback = "CUDA not allowed by the caller";
  } else {
#if SPLINEVIEW_HAVE_CUDA
    m.fallback = register_texture(m);
#else
    cuda::available(&m.fallback);
    if (m.fallback.empty()) m.fallback = "this build has no CUDA";
#endif
  }
  if (!m.fallback.empty()) {
    // User-facing: says what happens and why, without naming GL objects.
    const std::string notice =
        "CUDA prefilter unavailable (" + m.fallback + "): prefiltering on the CPU and uploading";
    if (options.on_fallback) {
      options.on_fallback(notice);
    } else {
      std::fprintf(stderr, "splineview: %s\n", notice.c_str());
    }
  }
}

TextureInterop::TextureInterop(const Texture& texture, InteropOptions options)
    : TextureInterop(texture.id(), std::move(options)) {}

TextureInterop::~TextureInterop() = default;
TextureInterop::TextureInterop(TextureInterop&&) noexcept = default;
TextureInterop& TextureInterop::operator=(TextureInterop&&) noexcept = default;

bool TextureInterop::uses_cuda() const {
  return impl_->fallback.empty();
}
const std::string& TextureInterop::fallback_reason() const {
  return impl_->fallback;
}
GLuint TextureInterop::texture() const {
  return impl_->texture;
}
GLenum TextureInterop::target() const {
  return impl_->target;
}
GLenum TextureInterop::internal_format() const {
  return impl_->internal_format;
}
const std::vector<std::size_t>& TextureInterop::dims() const {
  return impl_->dims;
}
std::size_t TextureInterop::max_channels() const {
  return impl_->max_channels();
}

void TextureInterop::run_cuda(const std::function<void(const MappedSurface&)>& op) {
  Impl& m = *impl_;
  if (!uses_cuda())
    throw Error("running a CUDA operation on " + m.name() + ": it is not registered with CUDA (" +
                m.fallback + ")");
#if SPLINEVIEW_HAVE_CUDA
  MappedSurface s;
  s.format = surface_format(m.internal_format);
  s.extents = cuda::Layout{m.dims, m.max_channels()};
  ScopedMap map(m.resource, "CUDA operation on " + m.name());
  s.surface = static_cast<std::uint64_t>(map.surface());
  op(s);
  map.finish();
#else
  (void)op;
#endif
}

std::optional<double> TextureInterop::last_kernel_ms() const {
  return impl_->kernel_ms;
}

void TextureInterop::prefilter_into(const ArrayF& samples, const PrefilterOptions& opt) {
  Impl& m = *impl_;
  check_fits(m, samples.dims(), samples.channels());
  if (!uses_cuda()) {
    prefilter_on_cpu(m, samples, opt);
    return;
  }
  const cuda::Layout layout = cuda::Layout::of(samples);
  ensure_size(m.staging, layout.size());
  m.staging.upload(samples.data(), layout.size());
  prefilter_into_from_device(m.staging.data(), layout, opt);
}

void TextureInterop::smooth_into(const ArrayF& samples, const SplineTransformOptions& opt) {
  if (opt.lambda == 0 && opt.degrees.empty()) {
    prefilter_into(samples, PrefilterOptions{opt.degree, opt.boundary, opt.threads});
    return;
  }
  Impl& m = *impl_;
  check_fits(m, samples.dims(), samples.channels());
  if (!uses_cuda()) {
    ArrayF coefficients = samples;
    direct_transform(coefficients, opt);
    upload_on_cpu(m, std::move(coefficients));
    return;
  }
  const cuda::Layout layout = cuda::Layout::of(samples);
  ensure_size(m.staging, layout.size());
  m.staging.upload(samples.data(), layout.size());
  cuda::Layout shape = layout;  // a 2-D surface even for one row, as prefilter_into_from_device
  if (shape.rank() == 1) shape.dims.insert(shape.dims.begin(), 1);
  ensure_size(m.scratch, shape.size());
  // Degree 1 has no poles: the prefilter's surface pass then only writes (and converts).
  cuda::PrefilterConfig write;
  write.degree = 1;
  write.boundary = opt.boundary;
  float* data = m.staging.data();
  float* scratch = m.scratch.data();
  run_cuda([&](const MappedSurface& s) {
    cuda::EventTimer timer;
    timer.start();
    cuda::direct_transform<float>(data, layout, opt);
    cuda::prefilter_to_surface(data, shape, s.surface, s.format, scratch, write);
    timer.stop();
    m.kernel_ms = timer.ms();
  });
}

void TextureInterop::prefilter_into_from_device(const float* device_samples,
                                                const cuda::Layout& layout,
                                                const PrefilterOptions& opt) {
  Impl& m = *impl_;
  layout.check(("prefiltering device samples into " + m.name()).c_str());
  check_fits(m, layout.dims, layout.channels);
  if (!uses_cuda()) {
    // Registration failed but the device may still be there: stage through the host.
    cuda::require(("prefiltering device samples into " + m.name()).c_str());
    ArrayF host(layout.dims, layout.channels);
    cuda::DeviceBuffer copy(layout.size());
    cuda::copy_device(copy.data(), device_samples, layout.size());
    copy.download(host.data(), layout.size());
    prefilter_on_cpu(m, std::move(host), opt);
    return;
  }
  // The surface is a 2-D array even for one row: give the prefilter that 2-D shape (its first
  // axis of length 1 is the identity) rather than a 1-D layout over a 2-D array.
  cuda::Layout shape = layout;
  if (shape.rank() == 1) shape.dims.insert(shape.dims.begin(), 1);
  ensure_size(m.scratch, shape.size());
  cuda::PrefilterConfig cfg;
  cfg.degree = opt.degree;
  cfg.boundary = opt.boundary;
  float* scratch = m.scratch.data();
  run_cuda([&](const MappedSurface& s) {
    cuda::EventTimer timer;
    timer.start();
    cuda::prefilter_to_surface(device_samples, shape, s.surface, s.format, scratch, cfg);
    timer.stop();
    m.kernel_ms = timer.ms();
  });
}

}  // namespace sv::gl
