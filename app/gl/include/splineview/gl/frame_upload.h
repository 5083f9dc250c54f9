// Per-frame upload of 8-bit video frames for the viewer's video mode: every decoded frame goes
// into two GL textures, the raw samples (nearest, linear and the unfiltered cubic sample them)
// and the cubic B-spline coefficients (the prefiltered flavours), and, for the CUDA
// thread-per-tile path, into a third texture holding the frame already upscaled by an integer
// factor.
//
// - Samples: a GL_RGBA8 texture (exactly the frame's 8-bit values), filled from one of two
//   persistently mapped pixel-unpack buffers (double-buffered: the CPU writes frame n + 1 into
//   one while the GL copy of frame n from the other may still be in flight; a fence per buffer
//   says when it is free again).
// - Coefficients: a GL_RGBA32F texture registered with CUDA (gl::TextureInterop). On the CUDA
//   path the frame is copied into one of two pinned host buffers, sent to the device with an
//   asynchronous copy, unpacked to float RGB (sv::cuda::unpack_u8, v / 255) and prefiltered
//   straight into the texture (sv::cuda::prefilter_to_surface; alpha is 1). Without CUDA the
//   frame is converted and prefiltered on the CPU and uploaded (the interop's fallback, which
//   says so once).
// - Tiles (CUDA only): the float frame prefiltered in device memory, then
//   sv::cuda::upscale_to_surface (one thread per input cell, its f x f output pixels) into a
//   GL_RGBA32F texture of (f H, f W). Output pixel j of an axis sits at input position
//   (j + 1/2) / f - 1/2, so tile texture coordinate q = f p + (f - 1) / 2 for image position p.
//
// Needs the GL context current on the calling thread for its whole life.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "splineview/gl/cuda_interop.h"
#include "splineview/gl/image_textures.h"
#include "splineview/gl/objects.h"

namespace sv::gl {

// Where the last frame's time went, in milliseconds.
struct FrameUploadTimes {
  double host_ms = 0;  // CPU time of upload() (copies into the staging buffers, CPU prefilter)
  std::optional<double> transfer_ms;   // CUDA: host-to-device copy (events)
  std::optional<double> unpack_ms;     // CUDA: 8-bit to float
  std::optional<double> prefilter_ms;  // CUDA: the prefilter's kernels (events)
  std::optional<double> tiles_ms;      // CUDA: prefilter in device memory + tile upscale
};

class FrameUploader {
 public:
  // Textures for frames of width x height. Throws sv::Error for a size GL cannot hold or when
  // the buffers cannot be allocated.
  FrameUploader(int width, int height, InteropOptions options = {});
  ~FrameUploader();
  FrameUploader(const FrameUploader&) = delete;
  FrameUploader& operator=(const FrameUploader&) = delete;

  int width() const;
  int height() const;
  // True when the coefficients are computed by CUDA (and the tile path is available).
  bool uses_cuda() const;
  // Why not (a sentence), empty when uses_cuda().
  const std::string& fallback_reason() const;

  // Uploads one frame: width * height RGBA8 pixels, top row first. `coefficients`: also
  // prefilter into the coefficients texture (skip when no view needs it). Throws sv::Error on
  // GL or CUDA failures.
  void upload(const std::uint8_t* rgba, bool coefficients = true);
  // CUDA only: upscales the last uploaded frame by `factor` (2..4) into tiles() with one thread
  // per input cell. Throws sv::Error without CUDA or for a bad factor.
  void upscale_tiles(int factor);

  const ImageTextures& textures() const;  // samples (RGBA8) and coefficients (RGBA32F)
  // The tile path's output as ImageTextures::samples (draw it with nearest sampling); empty
  // before the first upscale_tiles().
  const ImageTextures& tiles() const;
  int tile_factor() const;  // factor of tiles(), 0 before the first upscale_tiles()
  const FrameUploadTimes& times() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Device memory in use on the current CUDA device (total - free, cudaMemGetInfo), for the video
// mode's memory check; empty without CUDA.
std::optional<std::size_t> device_memory_used();

}  // namespace sv::gl
