// CUDA-GL interop: B-spline coefficients computed by CUDA go straight into a GL texture, with no
// host round trip. This is the one place that knows both worlds: kernels (cuda/) never see GL
// objects, and the GL layer never sees CUDA types (this header names neither cudaArray_t nor
// cudaGraphicsResource_t; the surface travels as the std::uint64_t that sv::cuda expects).
//
// One TextureInterop serves one GL texture (GL_TEXTURE_2D or GL_TEXTURE_3D; GL_R32F,
// GL_RGBA32F or GL_R16F). On construction it registers the texture with CUDA; each operation
// maps it, runs exactly one CUDA operation on a surface over level 0, waits for it and unmaps it
// before returning, so GL never samples the texture while CUDA holds it.
//
// Without a usable CUDA device (no CUDA in the build or on the machine, or a GL context on a
// device CUDA cannot reach, so the registration fails) the same calls prefilter on the CPU
// (sv::prefilter in float) and upload the coefficients with glTextureSubImage; the object says so
// once, through its message sink, and fallback_reason() keeps the sentence.
//
// All calls need the GL context that owns the texture to be current on the calling thread, and
// the object must die before the texture and the context.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "splineview/array.h"
#include "splineview/cuda_memory.h"
#include "splineview/cuda_prefilter.h"
#include "splineview/gl/objects.h"
#include "splineview/prefilter.h"
#include "splineview/smoothing.h"

namespace sv::gl {

// Receives the one fallback notice of an object (a sentence without a trailing newline).
using MessageSink = std::function<void(const std::string&)>;

struct InteropOptions {
  // false: never register with CUDA; every operation takes the CPU path (for comparisons and
  // for testing that path on a machine with a GPU). The notice then says it was asked for.
  bool allow_cuda = true;
  // Where the fallback notice goes; empty: one line on stderr.
  MessageSink on_fallback;
};

// What a CUDA operation gets while the texture is mapped (valid only during the operation).
struct MappedSurface {
  std::uint64_t surface = 0;  // cudaSurfaceObject_t over level 0 of the texture
  cuda::SurfaceFormat format = cuda::SurfaceFormat::R32F;
  // The texture's extents in array order, (H, W) or (D, H, W); channels 1 (R32F, R16F) or 4.
  cuda::Layout extents;
};

class TextureInterop {
 public:
  // Reads the target, level-0 size and internal format of `texture` from GL. Throws sv::Error
  // (naming the texture) when it is not a texture, is neither 2-D nor 3-D, or has an internal
  // format other than GL_R32F, GL_RGBA32F and GL_R16F. A failed CUDA registration is not an
  // error: it selects the CPU path.
  explicit TextureInterop(GLuint texture, InteropOptions options = {});
  explicit TextureInterop(const Texture& texture, InteropOptions options = {});
  // Unregisters the texture. A moved-from object may only be destroyed or assigned to.
  ~TextureInterop();
  TextureInterop(TextureInterop&&) noexcept;
  TextureInterop& operator=(TextureInterop&&) noexcept;
  TextureInterop(const TextureInterop&) = delete;
  TextureInterop& operator=(const TextureInterop&) = delete;

  // True when operations run through CUDA on the registered texture.
  bool uses_cuda() const;
  // Why the CPU path is used (a sentence); empty when uses_cuda().
  const std::string& fallback_reason() const;

  GLuint texture() const;
  GLenum target() const;           // GL_TEXTURE_2D or GL_TEXTURE_3D
  GLenum internal_format() const;  // GL_R32F, GL_RGBA32F or GL_R16F
  // Texture extents in array order: (H, W) or (D, H, W).
  const std::vector<std::size_t>& dims() const;
  // Most channels the format holds: 4 for GL_RGBA32F, 1 otherwise.
  std::size_t max_channels() const;

  // Prefilters `samples` (1..4 channels; shape (H, W) for a 2-D texture, or (W) when its height
  // is 1; (D, H, W) for a 3-D one) with opt.degree and opt.boundary and writes the coefficients
  // into level 0. RGBA32F with fewer than 4 channels gets 0 in the missing colour channels and 1
  // in alpha; R16F holds each coefficient rounded to the nearest half (ties to even) on both
  // paths. Throws sv::Error for a shape or channel count that does not fit the texture, and for
  // CUDA or GL failures (the texture is never left mapped).
  void prefilter_into(const ArrayF& samples, const PrefilterOptions& opt = {});
  // CUDA event time (ms) of the last prefilter's kernels on the CUDA path (without the upload
  // of host samples); empty before the first one and on the CPU path.
  std::optional<double> last_kernel_ms() const;

  // The coefficients of the smoothing spline of `samples` (sv::direct_transform with opt.lambda,
  // opt.degree or opt.degrees, opt.boundary; issue 17) written into level 0 as prefilter_into
  // writes its own: on the CUDA path sv::cuda::direct_transform in device memory, then one
  // pass without poles that writes them into the surface; on the CPU path sv::direct_transform
  // in float and an upload. lambda 0 with one degree is prefilter_into itself. The same errors
  // as prefilter_into, and sv::Error for options direct_transform refuses.
  void smooth_into(const ArrayF& samples, const SplineTransformOptions& opt);

  // The same from samples already in device memory (layout.size() floats, left unchanged).
  // Without CUDA on the machine this throws sv::Error; with CUDA but a failed registration the
  // samples are copied to the host and take the CPU path.
  void prefilter_into_from_device(const float* device_samples, const cuda::Layout& layout,
                                  const PrefilterOptions& opt = {});

  // Maps the texture, runs `op` on a surface over level 0, waits for the GPU work queued on the
  // default stream and unmaps, also when `op` throws. For CUDA operations other than the
  // prefilter. Throws sv::Error unless uses_cuda().
  void run_cuda(const std::function<void(const MappedSurface&)>& op);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace sv::gl
