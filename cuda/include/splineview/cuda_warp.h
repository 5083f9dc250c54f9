// Warping on the GPU (issue 16 part 3, the CUDA half of sv::warp, ffd_warp.h): the moving image
// or volume resampled at x + u(x), u the cubic B-spline FFD of a control grid (ffd.h's
// convention) evaluated by one of the four field kernels of cuda_ffd.h (tile-fma by default).
//
// The moving image's spline is prepared as sv::interpolate (and the Python package's GPU path,
// cuda_ndimage.h) prepares it: padded for Nearest and GridConstant (interpolation_pad samples per
// side), prefiltered by the CUDA prefilter (cuda_prefilter.h's tiled kernels through
// nd::spline_filter) for the methods that prefilter, then sampled by the same evaluator as
// nd::map_coordinates (weights and sums in double, every boundary mode of sampler.h) at the
// positions (base + u) + pad in double, the arithmetic of sv::warp. Only u (float) and the
// coefficients (float) differ from sv::warp<double>; the field is never written out as
// positions (the sampler reads it directly).
//
// Accuracy against sv::warp<double> (docs/ACCURACY.md 8.2, "On the GPU"): |error| <= sum_a D_a du +
// e_c + eps / 2 |out|, D_a the largest difference of neighbouring double coefficients along axis a
// (a bound of the spline's derivative there), du the field kernel's bound (8 eps max|c| for
// per-voxel and the tile kernels; 6/256 max|c| for texture), e_c the CUDA prefilter's error (8
// eps of the largest coefficient). Constant and Wrap are supported, but their values jump where a
// position crosses the image's edge, so a rounding of u can change a voxel there completely.
//
// Errors: sv::Error naming the problem (rank other than 2 or 3, grid of the wrong rank, component
// count or size, non-finite or too large displacements, a spacing the kernel does not take);
// without CUDA in the build or a device, "... this build has no CUDA" after the same checks.
#pragma once

#include <cstddef>
#include <vector>

#include "splineview/array.h"
#include "splineview/cuda_ffd.h"
#include "splineview/resample.h"

namespace sv::cuda {

struct WarpConfig {
  Method method = Method::Cubic;  // prefiltered cubic B-spline
  Boundary boundary = Boundary::Reflect;
  double cval = 0.0;  // the value outside for Constant and GridConstant
  FfdKernel kernel = FfdKernel::ThreadPerTileFma;
};

// Device API. `moving` (device, one channel, C order, extents moving_shape) warped by
// `grid` (device control points; grid.image_shape is the output's shape, rank = moving's) into
// `out` (device, prod(grid.image_shape) floats). Allocates its scratch (the coefficients and the
// field, 4 + 4 R bytes per voxel) and synchronises `stream` before freeing it.
void warp(const float* moving, const std::vector<std::size_t>& moving_shape, const FfdGrid& grid,
          const WarpConfig& cfg, float* out, CUstream_st* stream = nullptr);

// Host convenience (splinetool warp --backend cuda): a moving image of rank 2 or 3 with 1..4
// channels (each warped in turn), its control grid (the moving image's rank, rank components)
// and spacing; output_shape as WarpOptions::output_shape (empty: the moving image's).
ArrayF warp(const ArrayF& moving, const ArrayF& grid, const std::vector<int>& delta,
            const WarpConfig& cfg = {}, const std::vector<std::size_t>& output_shape = {});

}  // namespace sv::cuda
