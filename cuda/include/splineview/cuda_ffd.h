// Dense cubic B-spline FFD displacement fields on the GPU (issue 16 part 2): the field of a 3-D
// (or 2-D) control grid (sv::ffd_field's convention, lib/include/splineview/ffd.h) at every voxel
// of an image, by four kernels behind one call, so that speed and accuracy can be compared on equal
// terms (splinebench-cuda ffd) and the registration can pick one:
//
//   Texture            P4's "TH": the grid in a 3-D float4 texture with hardware trilinear
//                      filtering, the cubic by the Sigg-Hadwiger trick (8 filtered fetches per
//                      voxel). The hardware's 8-bit fractional weights limit its accuracy (P1's
//                      Figure 1 seams): at most 6/256 max|c| off, about 1e-3 max|c| typically.
//   PerVoxel           NiftyReg's GPU kernel, as a baseline: one thread per voxel, its 4 float
//                      weights per axis computed from its position, 64 control points (x 3
//                      components) read from global memory, weighted sums in fma.
//   ThreadPerTileLerp  P4's TTLI: one thread per tile of delta_z x delta_y x delta_x voxels,
//   ThreadPerTileFma   the tile's 64 control points (x 3) in registers, weights of the tile's
//                      positions precomputed in double and rounded to float once; the cubic as
//                      nested linear interpolations (lerp) or as plain weighted sums (fma).
//
// Grid convention (ffd.h): control point j of an axis sits at voxel (j - 1) delta; the grid is
// (M_z, M_y, M_x) points of 3 interleaved float components (z, y, x displacement in voxels),
// M_a >= floor((N_a - 1) / delta_a) + 4. The output is (N_z, N_y, N_x, 3) floats, interleaved,
// in array axis order (x fastest), in device memory. 2-D: a (M_y, M_x) grid of 2 components
// (y, x), output (N_y, N_x, 2); the same four kernels (the texture a 2-D float2 one, 4 fetches
// per pixel; 16 control points per tile).
//
// Spacings: Texture and PerVoxel take any delta >= 1; the thread-per-tile kernels 1..8 per axis
// (kMaxTileSpacing; compiled per delta_x, runtime loops over z and y).
//
// Accuracy against sv::ffd_field_reference (double), eps = 2^-23: PerVoxel and both
// thread-per-tile kernels stay within 8 eps max|c| (the sums of at most 64 + 4 rounded terms
// whose weights are positive and sum to 1; docs/DESIGN.md "FFD fields" has the derivation);
// Texture within 6/256 max|c| (three axes, each a weight error of at most 1/256 on a difference
// of at most 2 max|c|; 4/256 in 2-D).
//
// Errors: bad arguments throw sv::Error with a sentence naming the problem (null pointers, rank,
// spacing, too few control points, sizes that overflow 32-bit indexing); CUDA failures throw
// sv::Error naming the operation. Without CUDA in the build every call throws "this build has no
// CUDA support" after the same argument checks.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "splineview/array.h"

struct CUstream_st;  // cudaStream_t is CUstream_st*: pass one, or nullptr for the default stream

namespace sv::cuda {

enum class FfdKernel { Texture, PerVoxel, ThreadPerTileLerp, ThreadPerTileFma };

constexpr FfdKernel kFfdKernels[] = {FfdKernel::Texture, FfdKernel::PerVoxel,
                                     FfdKernel::ThreadPerTileLerp, FfdKernel::ThreadPerTileFma};

// "texture", "per-voxel", "tile-lerp", "tile-fma".
const char* ffd_kernel_name(FfdKernel k);
// Parses one of ffd_kernel_name()'s names; throws sv::Error naming the bad value.
FfdKernel parse_ffd_kernel(const std::string& s);

// The largest spacing (per axis) of the thread-per-tile kernels.
constexpr int kMaxTileSpacing = 8;

// A control grid in device memory and the image whose field it defines (all in array axis
// order z, y, x; 2-D: y, x and 2 components).
struct FfdGrid {
  const float* points = nullptr;         // (M_z, M_y, M_x, 3) floats, interleaved, device
  std::vector<std::size_t> dims;         // (M_z, M_y, M_x) or (M_y, M_x)
  std::vector<int> delta;                // control-point spacing per axis, voxels
  std::vector<std::size_t> image_shape;  // (N_z, N_y, N_x)
};

// Throws sv::Error("<what>: ...") unless `grid` is valid for `kernel` (see above). Used by every
// entry point; public so that callers can check before allocating.
void check_ffd_arguments(const FfdGrid& grid, FfdKernel kernel, const char* what);

// The floating-point operations per voxel each kernel executes in 3-D (fma = 2, add/sub/mul/div =
// 1, a lerp = sub + fma = 3; the texture unit's filtering not counted), for the benchmark's
// GFLOP/s. The weights of one axis in float cost 15 (a division and 14 for the cubic).
//   PerVoxel   45 (weights) + 16 + 64 (tap weights wz wy wx) + 64 * 3 * 2 (fma)       = 509
//   Texture    45 (weights) + 3 * 8 (pair weights, coordinates) + 3 * 7 lerps * 3    = 132
//   TileFma    420 / delta_x (per voxel row: 12 columns x (4 z chains of 7 + a y chain of 7))
//              + 3 * 7 (x taps)
//   TileLerp   540 / delta_x (per voxel row: 12 columns x 15 lerps) + 3 * 3 lerps * 3
// The thread-per-tile kernels share the (z, y) part along a tile row, hence the delta_x.
// 2-D (delta of 2 entries): PerVoxel 110, Texture 64, TileFma 56 / delta_x + 14, TileLerp
// 72 / delta_x + 18.
double ffd_kernel_flops_per_voxel(FfdKernel kernel, const std::vector<int>& delta);

// The field of `grid` at every voxel into `out` (device, image_shape points x 3 floats), queued
// on `stream` (asynchronous; nothing synchronises the host). Texture builds and frees a CUDA
// array from the grid on every call (it synchronises the stream before freeing it); use
// FfdEvaluator to keep it.
void ffd_field(const FfdGrid& grid, FfdKernel kernel, float* out, CUstream_st* stream = nullptr);

// A grid prepared for repeated evaluation: checks once and, for the Texture kernel, keeps the
// grid in a CUDA array (built on first use; refresh_texture() copies the grid again after the
// caller changed it, e.g. in a registration step). The grid memory stays the caller's.
class FfdEvaluator {
 public:
  explicit FfdEvaluator(const FfdGrid& grid);
  ~FfdEvaluator();
  FfdEvaluator(const FfdEvaluator&) = delete;
  FfdEvaluator& operator=(const FfdEvaluator&) = delete;

  const FfdGrid& grid() const;
  void run(FfdKernel kernel, float* out, CUstream_st* stream = nullptr);
  // Copies the grid into the texture's CUDA array (allocated on the first call), on `stream`.
  void refresh_texture(CUstream_st* stream = nullptr);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Host convenience for tests and tools: a control grid (M_z, M_y, M_x) with 3 channels (or
// (M_y, M_x) with 2), its spacing and the image shape -> device -> `kernel` -> host
// (N_z, N_y, N_x) with 3 channels (or (N_y, N_x) with 2).
// Checks the grid's values as sv::check_ffd_grid does (finite) and its shape as above.
ArrayF ffd_field(const ArrayF& grid, const std::vector<int>& delta,
                 const std::vector<std::size_t>& image_shape, FfdKernel kernel);

}  // namespace sv::cuda
