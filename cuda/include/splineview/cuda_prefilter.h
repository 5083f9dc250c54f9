// The CUDA B-spline prefilter: exact (to float32 working precision, like the CPU prefilter) for
// every line length, degrees 2..7 (0 and 1 are the identity), boundary modes reflect, mirror and
// periodic, 1-3 D, 1-4 interleaved channels.
//
// Method: every axis pass splits each line into chunks; a thread block loads a tile of lines x
// (chunk + 2 * apron) samples into shared memory with coalesced reads (for the x axis the tile
// is transposed on the way in and out), runs the causal/anticausal recursions of each pole per
// line from shared memory, and writes the chunk back. The apron is the extended signal (boundary
// mode) or the neighbouring chunk, long enough that the neglected tail of every recursion is
// below half an ulp (the same horizon the CPU prefilter uses). Out of place, a chunk's aprons
// are read from the source. prefilter() runs the axes whose lines are chunked out of place,
// alternating between the array and one scratch copy (an even number of such passes, so the
// result ends in the array); a single in-place chunked pass (prefilter_axis) first copies its
// aprons aside, so no block reads what another block writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "splineview/array.h"
#include "splineview/cuda_memory.h"

namespace sv::cuda {

enum class PrefilterKernel {
  Tiled,  // shared-memory tiles with aprons, coalesced on every axis (the default)
  Naive,  // one thread per line walking global memory, as published (benchmark baseline)
};

struct PrefilterConfig {
  int degree = 3;  // 0..7
  Boundary boundary = Boundary::Reflect;
  PrefilterKernel kernel = PrefilterKernel::Tiled;
  int chunk = 0;  // samples per tile along the axis (Tiled); 0 = automatic (longest that fits)
  int lines = 0;  // lines per tile, at most 32 (Tiled); 0 = 32
  bool async_loads = true;  // tiles load through cp.async (Tiled); false: through registers
  // prefilter() (Tiled): chunked axes ping-pong through one scratch copy of the array; false:
  // every pass in place (chunked ones with an apron side buffer, about 10% of the array).
  bool ping_pong = true;
  // prefilter() (Tiled) on a 3-D array: the y and x passes fused into one kernel
  // (prefilter_fused_xy) where prefilter_fusable() says it applies; false: one pass per axis.
  bool fuse = true;
  // prefilter() (Tiled) on a one-channel 2-D array: both axes in one pass over device memory
  // (side buffers for the aprons of its row chunks and column strips) where prefilter_fusable()
  // says it applies (large images: BENCHMARKS, "2-D in one pass"); false: one pass per axis.
  // The environment variable SV_ONE_PASS_2D=0 turns it off everywhere (for measurements).
  bool one_pass = true;
  // Fused pass: how many planes the x tiles run ahead of the y tiles (0 = automatic).
  int fuse_lag = 0;
  // Fused pass: L2 eviction priorities on its loads and stores (the intermediate kept, the
  // samples and results streamed); false: default caching (a benchmark variant).
  bool fuse_hints = true;
};

// In place on `data` (device memory holding layout.size() floats), all axes in turn. Extra
// device memory: none for lines that fit a tile; else one scratch copy of the array (or, with
// ping_pong off or a single chunked axis and no other, a side buffer of about 10%), from the
// stream-ordered pool.
void prefilter(float* data, const Layout& layout, const PrefilterConfig& cfg);
// One axis only (array order, 0 = slowest), in place; for benchmarks and tests.
void prefilter_axis(float* data, const Layout& layout, std::size_t axis,
                    const PrefilterConfig& cfg);
// One axis, src -> dst (distinct, non-overlapping; src unchanged): the pass prefilter() runs for
// an axis marked in prefilter_out_of_place(); for benchmarks and tests.
void prefilter_axis(const float* src, float* dst, const Layout& layout, std::size_t axis,
                    const PrefilterConfig& cfg);
// Per axis, whether prefilter() runs that axis out of place (see ping_pong).
std::vector<bool> prefilter_out_of_place(const Layout& layout, const PrefilterConfig& cfg);

// The y and x passes of a 3-D array (z, y, x, channels) in one kernel, in place: a persistent
// grid takes work items in a fixed order from a global ticket, the x tiles of plane p + lag
// before the y tiles of plane p; a y tile waits (spinning on a per-plane counter) until every x
// tile of its plane is written, then reads them back through L2, where they still are. The
// intermediate therefore rarely reaches device memory: x and y together cost about one round
// trip instead of two. The same tiles and arithmetic as the per-axis passes (whole lines only).
void prefilter_fused_xy(float* data, const Layout& layout, const PrefilterConfig& cfg);
// Whether prefilter() fuses y and x for this layout: rank 3, Tiled with `fuse` and automatic
// chunks, a degree with poles, x and y short enough for whole-line tiles, at least 8 floats per
// row, and (with the automatic lag) tiles enough to fill the persistent grid twice. Rank 2:
// whether it runs both axes in one pass (Tiled with `one_pass`, automatic chunks and lines, async
// loads, one channel, degree 2-5 (an apron of at most 32 samples), row chunks of at least 8
// aprons in blocks at least as many as the GPU's multiprocessors). No CUDA device: false.
bool prefilter_fusable(const Layout& layout, const PrefilterConfig& cfg);

// Texel formats a prefilter can write into (CUDA arrays behind GL textures).
enum class SurfaceFormat {
  R32F,     // 1 channel, float
  RGBA32F,  // up to 4 channels, float4 (missing channels written as 0, alpha 1)
  R16F,     // 1 channel, half
};

// Prefilters `src` (device, layout.size() floats; left unchanged) and writes the coefficients
// into the CUDA surface object `surface` (a cudaSurfaceObject_t over a 1-D/2-D/3-D CUDA array
// of the layout's extents and `format`). `scratch` must hold layout.size() floats (it is the one
// extra copy); it may be null for a 1-D layout.
void prefilter_to_surface(const float* src, const Layout& layout, std::uint64_t surface,
                          SurfaceFormat format, float* scratch, const PrefilterConfig& cfg);

// Host convenience (splinetool --backend cuda): uploads, filters in place, downloads.
void prefilter(ArrayF& a, const PrefilterConfig& cfg);

}  // namespace sv::cuda
