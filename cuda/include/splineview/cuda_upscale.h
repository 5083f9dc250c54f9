// Integer-factor upscaling of 2-D images on the GPU (live video: 1920x1080 -> 3840x2160 per
// frame), thread per tile: the scheme of the third paper (B-spline evaluation for integer
// upsampling with the control grid aligned with the output grid, coefficients in registers,
// blends in fma), applied to nearest, linear and the exact cubic B-spline.
//
// Geometry (exactly sv::zoom's, lib/include/splineview/resample.h): output sample j of an axis
// of length N, upscaled by f, sits at input position p_j = (j + 1/2) / f - 1/2. Between input
// samples i and i + 1 (the "cell" i, i = -1 .. N - 1) lie the f outputs j = f i + o + s,
// s = 0 .. f - 1, o = floor(f / 2), all at the same fractions a_s = (o + s + 1/2) / f - 1/2 in
// [0, 1): the weights of a sub-position are constants of f (computed in double, rounded to float
// once), and every output of a cell needs the same 4x4 coefficients c[i-1 .. i+2] (cubic) or
// 2x2 samples c[i .. i+1] (linear, nearest). Cells -1 and N - 1 lie half outside the image and
// write only their inside outputs. Coefficients beyond the edges are extended by the boundary
// mode (sv::extend_index), so the edges are exact too.
//
// Kernel (upscale.cu): a warp owns 32 neighbouring cells of a row of cells and walks down a run
// of cell rows; each lane keeps the last 4 (cubic) or 2 rows of its neighbourhood in registers,
// so moving one cell down loads one new row of 4 (or 2) values per channel. A cell's f x f x C
// outputs come from separable fma chains (vertical blends of the 4 columns per output row, then
// horizontal blends per output column), are staged in the warp's shared memory as f output rows,
// and leave as aligned float4 (or 4-byte) stores from consecutive lanes, coalesced whatever f
// and C. The work is write-bound in principle: a 1920x1080 RGB float frame upscaled by 2 writes
// 99.5 MB (H200: cubic 0.059 ms, linear and nearest 0.042 ms, a write-only fill 0.031 ms).
//
// Nearest never needs a tie rule: a_s = 1/2 cannot happen for integer f (o + s + 1/2 = f has no
// integer solution), so each sub-position takes c[i] (a_s < 1/2) or c[i + 1] exactly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "splineview/array.h"
#include "splineview/cuda_memory.h"
#include "splineview/cuda_prefilter.h"

namespace sv::cuda {

enum class UpscaleMethod {
  Nearest,  // sample replication (f x f copies of the nearest input sample)
  Linear,   // bilinear on the samples
  Cubic,    // interpolating cubic B-spline on prefiltered coefficients, exact taps (no hardware
            // filter weights)
};

const char* upscale_method_name(UpscaleMethod m);  // "nearest" "linear" "cubic"
// Parses one of upscale_method_name()'s names; throws sv::Error naming the bad value.
UpscaleMethod parse_upscale_method(const std::string& s);

constexpr int kMaxUpscaleFactor = 4;

// 8-bit interleaved rows (src_pitch bytes apart, src_channels 1..4 per pixel) -> float
// interleaved layout (H, W, C) with C = layout.channels <= src_channels (RGBA8 -> RGB float
// drops alpha), values v / 255 (correctly rounded division). Device pointers; asynchronous on
// the default stream. Throws sv::Error for a layout that is not 2-D, more output channels than
// source channels, or a pitch shorter than a row.
void unpack_u8(const std::uint8_t* src, std::size_t src_pitch, int src_channels, float* dst,
               const Layout& layout);

// Thread-per-tile upscale by integer `factor` (1..4; 1 = the spline at the samples, for checks)
// of `src` (device, 2-D layout (H, W, C = 1..4 interleaved): B-spline coefficients for Cubic,
// samples otherwise) to dst (device, (H f, W f, C) floats). Boundary extension as `boundary`
// (use the prefilter's). Asynchronous on the default stream.
void upscale(const float* src, const Layout& layout, int factor, UpscaleMethod method,
             Boundary boundary, float* dst);

// Same, rounded to 8 bits: u = rint(clamp(v, 0, 1) * 255) with round half to even (the product
// in float, as __float2int_rn / std::nearbyint round it); NaN gives 0. Out channels =
// layout.channels, tightly packed rows of W f C bytes.
void upscale_u8(const float* src, const Layout& layout, int factor, UpscaleMethod method,
                Boundary boundary, std::uint8_t* dst);

// Same, written into a CUDA surface object (cudaSurfaceObject_t as std::uint64_t, over a 2-D
// CUDA array of width W f and height H f) of format R32F (C == 1) or RGBA32F (C = 1..4; missing
// colour channels 0, alpha 1 when C < 4). R16F is refused.
void upscale_to_surface(const float* src, const Layout& layout, int factor, UpscaleMethod method,
                        Boundary boundary, std::uint64_t surface, SurfaceFormat format);

// Whole-frame convenience for splinetool upscale-video and tests: 8-bit interleaved image
// (H, W, C = 1..4, tightly packed, host memory) -> device -> unpack_u8 -> prefilter (cubic only:
// sv::cuda::prefilter, degree 3, reflect) -> upscale_u8 (reflect) -> host (H f, W f, C). Keeps its
// device buffers and pinned staging between calls of the same shape and reallocates when the
// shape changes. Throws sv::Error on a bad factor, channels, sizes or CUDA failures; `dst` is
// written only after the frame is complete.
class FrameUpscaler {
 public:
  FrameUpscaler(int factor, UpscaleMethod method);
  ~FrameUpscaler();
  FrameUpscaler(const FrameUpscaler&) = delete;
  FrameUpscaler& operator=(const FrameUpscaler&) = delete;

  void run(const std::uint8_t* src, int width, int height, int channels, std::uint8_t* dst);

  // CUDA event times of the last run() (ms): upload, unpack, prefilter (0 unless cubic),
  // upscale, download.
  struct Timing {
    double upload = 0, unpack = 0, prefilter = 0, upscale = 0, download = 0;
  };
  const Timing& last_timing() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Host convenience for tests: 2-D float image -> device -> (prefilter, degree 3, `boundary`, for
// Cubic) -> upscale -> host (H f, W f, C).
ArrayF upscale(const ArrayF& samples, int factor, UpscaleMethod method,
               Boundary boundary = Boundary::Reflect);

}  // namespace sv::cuda
