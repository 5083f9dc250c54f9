// Warping an image or volume by a deformation: output(x) = moving(x + u(x)) at every voxel x of
// the output grid, u a cubic B-spline FFD (ffd.h, its control-grid convention) or a dense
// displacement field, the moving image interpolated with any of the library's methods and
// boundary modes (resample.h's Method, sampler.h's Boundary and cval, with sv::interpolate's
// semantics: the moving image is prefiltered once, padded for Nearest and GridConstant, then
// sampled at the displaced positions). docs/DESIGN.md ("Warping") has the details.
//
// Streaming: no array of positions (nor, for the grid variant, a dense field) is built. The
// output is cut into slabs of one control-point tile along the slowest axis (delta_z slices in
// 3-D, delta_y rows in 2-D); each slab's field is evaluated by ffd_field on the four planes of
// control points it needs (bit for bit the values the whole-image ffd_field gives), then every
// row of the slab is sampled at once. Slabs are spread over the threads.
//
// Positions are (z, y, x) in 3-D and (y, x) in 2-D, in voxels of the moving image; output voxel
// k sits at position k (the output grid is the moving image's, extended or cut by
// output_shape).
#pragma once

#include <cstddef>
#include <vector>

#include "splineview/array.h"
#include "splineview/resample.h"

namespace sv {

struct WarpOptions {
  Method method = Method::Cubic;  // prefiltered cubic B-spline
  Boundary boundary = Boundary::Reflect;
  double cval = 0.0;     // the value outside for Constant and GridConstant
  unsigned threads = 0;  // 0 = sv::default_thread_count()
  // The output's spatial extents (array order, the moving image's rank); empty: the moving
  // image's own. The grid must be valid for this shape (check_ffd_grid).
  std::vector<std::size_t> output_shape;
};

// Displacements beyond this many voxels (a grid or field value, in magnitude) are refused: the
// positions would leave any sensible use (the sampler's own limit is 1e12).
constexpr double kMaxWarpDisplacement = 1e9;

// The moving image (rank 2 or 3, 1..4 channels) warped by the control grid `grid` at spacing
// `delta` (ffd.h; grid.rank() must be the moving image's rank). Interpolation in double from
// coefficients in T (as sv::interpolate), the field in T; the result rounded to T, with the
// moving image's channels. Throws sv::Error naming the problem: a grid of another rank or
// component count, too few control points for the output shape (axis, count, minimum), a
// non-finite or too large grid value, an output shape of the wrong rank.
template <class T>
Array<T> warp(const Array<T>& moving, const Array<T>& grid, const std::vector<int>& delta,
              const WarpOptions& opt = {});

// The same with a dense displacement field: an array of the output shape (opt.output_shape is
// ignored: the field's dims are the output's) with rank-many channels, channel c the
// displacement along array axis c in voxels (as ffd_field returns it).
template <class T>
Array<T> warp_with_field(const Array<T>& moving, const Array<T>& field,
                         const WarpOptions& opt = {});

}  // namespace sv
