// Per-frame upload of video frames (see frame_upload.h).
#include "splineview/gl/frame_upload.h"

#include <chrono>
#include <cstring>
#include <string>
#include <utility>

#include "splineview/array.h"
#include "splineview/cuda_memory.h"
#include "splineview/cuda_prefilter.h"
#include "splineview/cuda_upscale.h"
#include "splineview/error.h"
#include "splineview/gl/gl.h"

#if SPLINEVIEW_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace sv::gl {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

#if SPLINEVIEW_HAVE_CUDA
void check_cuda(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  cudaGetLastError();
  throw Error(std::string("video frame upload: ") + what + ": " + cudaGetErrorString(err));
}

// Pinned host memory, a device byte buffer and events: the CUDA half of the staging.
struct CudaStaging {
  std::array<std::uint8_t*, 2> pinned{};
  std::array<cudaEvent_t, 2> copied{};  // the async copy out of pinned[i] has finished
  std::uint8_t* device_bytes = nullptr;
  cudaEvent_t t0 = nullptr, t1 = nullptr, t2 = nullptr;

  explicit CudaStaging(std::size_t bytes) {
    try {
      for (std::size_t i = 0; i < 2; ++i) {
        check_cuda(cudaHostAlloc(reinterpret_cast<void**>(&pinned[i]), bytes, cudaHostAllocDefault),
                   "allocating pinned host memory");
        check_cuda(cudaEventCreate(&copied[i]), "creating an event");
      }
      check_cuda(cudaMalloc(reinterpret_cast<void**>(&device_bytes), bytes),
                 "allocating device memory for a frame");
      check_cuda(cudaEventCreate(&t0), "creating an event");
      check_cuda(cudaEventCreate(&t1), "creating an event");
      check_cuda(cudaEventCreate(&t2), "creating an event");
    } catch (...) {
      release();
      throw;
    }
  }
  ~CudaStaging() { release(); }
  CudaStaging(const CudaStaging&) = delete;
  CudaStaging& operator=(const CudaStaging&) = delete;

  void release() {
    for (std::size_t i = 0; i < 2; ++i) {
      if (pinned[i]) cudaFreeHost(pinned[i]);
      if (copied[i]) cudaEventDestroy(copied[i]);
      pinned[i] = nullptr;
      copied[i] = nullptr;
    }
    if (device_bytes) cudaFree(device_bytes);
    device_bytes = nullptr;
    for (cudaEvent_t* e : {&t0, &t1, &t2}) {
      if (*e) cudaEventDestroy(*e);
      *e = nullptr;
    }
  }
};
#endif

}  // namespace

struct FrameUploader::Impl {
  int width = 0, height = 0;
  std::size_t bytes = 0;
  ImageTextures textures;
  std::unique_ptr<TextureInterop> interop;  // over textures.coefficients
  // Samples: two persistently mapped unpack buffers and their fences.
  std::array<Buffer, 2> pbo;
  std::array<void*, 2> mapped{};
  std::array<GLsync, 2> fence{};
  int next = 0;
  // CUDA path.
#if SPLINEVIEW_HAVE_CUDA
  std::unique_ptr<CudaStaging> staging;
#endif
  cuda::DeviceBuffer frame_float;   // (H, W, 3), v / 255
  cuda::DeviceBuffer coefficients;  // the tile path's prefiltered copy
  // Tile path.
  ImageTextures tiles;
  std::unique_ptr<TextureInterop> tile_interop;
  int tile_factor = 0;
  FrameUploadTimes times;
  bool has_frame = false;
  ArrayF cpu_frame;  // the CPU path's float frame, reused from frame to frame

  cuda::Layout layout() const {
    return cuda::Layout{{static_cast<std::size_t>(height), static_cast<std::size_t>(width)}, 3};
  }

  ~Impl() {
    for (std::size_t i = 0; i < 2; ++i) {
      if (fence[i]) glDeleteSync(fence[i]);
      if (mapped[i]) glUnmapNamedBuffer(pbo[i].id());
    }
  }
};

FrameUploader::FrameUploader(int width, int height, InteropOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  if (width < 1 || height < 1)
    throw Error("video frame upload: the frame size must be positive, got " +
                std::to_string(width) + " x " + std::to_string(height));
  m.width = width;
  m.height = height;
  m.bytes = static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 4;
  m.textures.samples = Texture::create_2d(GL_RGBA8, width, height);
  m.textures.coefficients = Texture::create_2d(GL_RGBA32F, width, height);
  const GLbitfield flags = GL_MAP_WRITE_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
  for (std::size_t i = 0; i < 2; ++i) {
    m.pbo[i] = Buffer::create(static_cast<GLsizeiptr>(m.bytes), nullptr, flags);
    m.mapped[i] = glMapNamedBufferRange(m.pbo[i].id(), 0, static_cast<GLsizeiptr>(m.bytes), flags);
    if (!m.mapped[i])
      throw Error("video frame upload: cannot map a " + std::to_string(m.bytes >> 20) +
                  " MiB pixel buffer (" + error_name(glGetError()) + ")");
  }
  m.interop = std::make_unique<TextureInterop>(m.textures.coefficients, std::move(options));
#if SPLINEVIEW_HAVE_CUDA
  if (m.interop->uses_cuda()) {
    m.staging = std::make_unique<CudaStaging>(m.bytes);
    m.frame_float = cuda::DeviceBuffer(m.layout().size());
  }
#endif
}

FrameUploader::~FrameUploader() = default;

int FrameUploader::width() const {
  return impl_->width;
}
int FrameUploader::height() const {
  return impl_->height;
}
bool FrameUploader::uses_cuda() const {
  return impl_->interop->uses_cuda();
}
const std::string& FrameUploader::fallback_reason() const {
  return impl_->interop->fallback_reason();
}
const ImageTextures& FrameUploader::textures() const {
  return impl_->textures;
}
const ImageTextures& FrameUploader::tiles() const {
  return impl_->tiles;
}
int FrameUploader::tile_factor() const {
  return impl_->tile_factor;
}
const FrameUploadTimes& FrameUploader::times() const {
  return impl_->times;
}

void FrameUploader::upload(const std::uint8_t* rgba, bool coefficients) {
  Impl& m = *impl_;
  const auto t0 = std::chrono::steady_clock::now();
  FrameUploadTimes t;

  // Samples: wait until the GL copy out of this buffer (two frames ago) is done, fill, copy.
  const int slot = m.next;
  m.next ^= 1;
  if (GLsync& f = m.fence[static_cast<std::size_t>(slot)]) {
    glClientWaitSync(f, GL_SYNC_FLUSH_COMMANDS_BIT, GLuint64{5'000'000'000});
    glDeleteSync(f);
    f = nullptr;
  }
  std::memcpy(m.mapped[static_cast<std::size_t>(slot)], rgba, m.bytes);
  GLint alignment = 4, row_length = 0, bound = 0;
  glGetIntegerv(GL_UNPACK_ALIGNMENT, &alignment);
  glGetIntegerv(GL_UNPACK_ROW_LENGTH, &row_length);
  glGetIntegerv(GL_PIXEL_UNPACK_BUFFER_BINDING, &bound);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, m.pbo[static_cast<std::size_t>(slot)].id());
  glTextureSubImage2D(m.textures.samples.id(), 0, 0, 0, m.width, m.height, GL_RGBA,
                      GL_UNSIGNED_BYTE, nullptr);
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, static_cast<GLuint>(bound));
  glPixelStorei(GL_UNPACK_ALIGNMENT, alignment);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, row_length);
  m.fence[static_cast<std::size_t>(slot)] = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
  if (const GLenum e = glGetError(); e != GL_NO_ERROR)
    throw Error(std::string("video frame upload: the samples texture upload failed (") +
                error_name(e) + ")");

  PrefilterOptions opt;
  opt.degree = 3;
  opt.boundary = Boundary::Reflect;
#if SPLINEVIEW_HAVE_CUDA
  if (m.staging) {
    CudaStaging& s = *m.staging;
    const auto i = static_cast<std::size_t>(slot);
    check_cuda(cudaEventSynchronize(s.copied[i]), "waiting for a staging buffer");
    std::memcpy(s.pinned[i], rgba, m.bytes);
    check_cuda(cudaEventRecord(s.t0, 0), "recording an event");
    check_cuda(cudaMemcpyAsync(s.device_bytes, s.pinned[i], m.bytes, cudaMemcpyHostToDevice, 0),
               "copying a frame to the device");
    check_cuda(cudaEventRecord(s.copied[i], 0), "recording an event");
    check_cuda(cudaEventRecord(s.t1, 0), "recording an event");
    cuda::unpack_u8(s.device_bytes, static_cast<std::size_t>(m.width) * 4, 4, m.frame_float.data(),
                    m.layout());
    check_cuda(cudaEventRecord(s.t2, 0), "recording an event");
    check_cuda(cudaEventSynchronize(s.t2), "waiting for the frame's unpack");
    float a = 0, b = 0;
    check_cuda(cudaEventElapsedTime(&a, s.t0, s.t1), "reading an event");
    check_cuda(cudaEventElapsedTime(&b, s.t1, s.t2), "reading an event");
    t.transfer_ms = a;
    t.unpack_ms = b;
    if (coefficients) {
      m.interop->prefilter_into_from_device(m.frame_float.data(), m.layout(), opt);
      t.prefilter_ms = m.interop->last_kernel_ms();
    }
    m.has_frame = true;
    t.host_ms = ms_since(t0);
    m.times = t;
    return;
  }
#endif
  if (coefficients) {
    if (m.cpu_frame.empty())
      m.cpu_frame =
          ArrayF({static_cast<std::size_t>(m.height), static_cast<std::size_t>(m.width)}, 3);
    ArrayF& frame = m.cpu_frame;
    const std::size_t n = static_cast<std::size_t>(m.width) * static_cast<std::size_t>(m.height);
    for (std::size_t p = 0; p < n; ++p)
      for (std::size_t c = 0; c < 3; ++c)
        frame[p * 3 + c] = static_cast<float>(rgba[p * 4 + c]) / 255.0f;
    m.interop->prefilter_into(frame, opt);
  }
  m.has_frame = true;
  t.host_ms = ms_since(t0);
  m.times = t;
}

void FrameUploader::upscale_tiles(int factor) {
  Impl& m = *impl_;
  if (factor < 2 || factor > 4)
    throw Error("video tile upscale: the factor must be 2, 3 or 4, got " + std::to_string(factor));
  if (!uses_cuda())
    throw Error("video tile upscale needs CUDA: " +
                (fallback_reason().empty() ? std::string("not available") : fallback_reason()));
  if (!m.has_frame) return;
  if (m.tile_factor != factor) {
    m.tile_interop.reset();
    m.tiles.samples = Texture::create_2d(GL_RGBA32F, m.width * factor, m.height * factor);
    InteropOptions o;
    o.on_fallback = [](const std::string&) {};
    m.tile_interop = std::make_unique<TextureInterop>(m.tiles.samples, o);
    if (!m.tile_interop->uses_cuda()) {
      const std::string why = m.tile_interop->fallback_reason();
      m.tile_interop.reset();
      m.tiles.samples = Texture();
      m.tile_factor = 0;
      throw Error("video tile upscale: the output texture cannot be shared with CUDA: " + why);
    }
    m.tile_factor = factor;
  }
  const cuda::Layout layout = m.layout();
  if (m.coefficients.size() < layout.size()) m.coefficients = cuda::DeviceBuffer(layout.size());
  cuda::EventTimer timer;
  timer.start();
  cuda::copy_device(m.coefficients.data(), m.frame_float.data(), layout.size());
  cuda::PrefilterConfig cfg;
  cfg.degree = 3;
  cfg.boundary = Boundary::Reflect;
  cuda::prefilter(m.coefficients.data(), layout, cfg);
  const float* src = m.coefficients.data();
  m.tile_interop->run_cuda([&](const MappedSurface& s) {
    cuda::upscale_to_surface(src, layout, factor, cuda::UpscaleMethod::Cubic, Boundary::Reflect,
                             s.surface, s.format);
  });
  timer.stop();
  m.times.tiles_ms = timer.ms();
}

std::optional<std::size_t> device_memory_used() {
#if SPLINEVIEW_HAVE_CUDA
  if (!cuda::available()) return std::nullopt;
  std::size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
    cudaGetLastError();
    return std::nullopt;
  }
  return total - free;
#else
  return std::nullopt;
#endif
}

}  // namespace sv::gl
