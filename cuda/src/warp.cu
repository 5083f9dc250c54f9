// Warping on the GPU (cuda_warp.h): the field by an FfdEvaluator kernel, the moving image's
// spline prepared by nd::pad / nd::spline_filter (the CUDA prefilter), and the nd sampler
// (ndimage_sample.cuh, the evaluator of map_coordinates) fed by a position generator that reads
// the field: position (base + u) + pad in double, the arithmetic of sv::warp's RowSampler.
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "check.cuh"
#include "ndimage_sample.cuh"
#include "splineview/cuda_memory.h"
#include "splineview/cuda_warp.h"
#include "splineview/ffd.h"
#include "splineview/ffd_warp.h"
#include "splineview/sampler.h"

namespace sv::cuda {
namespace {

// Output voxel p (C order, extents od) sits at its integer position; the sampler gets that
// position plus the field's displacement (D components per voxel, interleaved).
struct FieldGen {
  const float* u;
  long long od[3];
  template <int D>
  __device__ __forceinline__ void operator()(long long p, double* pos) const {
    long long o[3];
    nd::detail::unravel(p, D, od, o);
#pragma unroll
    for (int d = 0; d < D; ++d)
      pos[d] = static_cast<double>(o[d]) + static_cast<double>(u[p * D + d]);
  }
};

void check_config(const WarpConfig& cfg, const char* what) {
  const int degree = method_degree(cfg.method);  // throws for an unknown method
  (void)degree;
  if (!std::isfinite(cfg.cval)) throw Error(std::string(what) + ": cval must be finite");
}

}  // namespace

void warp(const float* moving, const std::vector<std::size_t>& moving_shape, const FfdGrid& grid,
          const WarpConfig& cfg, float* out, CUstream_st* stream) {
  const std::string what = std::string("CUDA warp (") + ffd_kernel_name(cfg.kernel) + ")";
  const std::size_t R = moving_shape.size();
  if (R != 2 && R != 3)
    throw Error(what + ": the moving image must be 2-D or 3-D, got rank " + std::to_string(R));
  if (grid.dims.size() != R)
    throw Error(what + ": a " + std::to_string(grid.dims.size()) + "-D control grid for a " +
                std::to_string(R) + "-D moving image");
  for (std::size_t n : moving_shape)
    if (n == 0 || n >= (std::size_t{1} << 30))
      throw Error(what + ": the moving image has an extent of 0 or 2^30 or more");
  check_ffd_arguments(grid, cfg.kernel, what.c_str());
  check_config(cfg, what.c_str());
  if (!moving) throw Error(what + ": the moving image pointer is null");
  if (!out) throw Error(what + ": the output pointer is null");

  const int degree = method_degree(cfg.method);
  const bool filter = method_prefilters(cfg.method) && degree >= 2;
  const std::size_t pad = filter ? interpolation_pad(cfg.boundary, degree) : 0;
  std::vector<std::size_t> cdims = moving_shape;
  std::size_t coef_count = 1;
  for (std::size_t& n : cdims) {
    n += 2 * pad;
    coef_count *= n;
  }
  std::size_t voxels = 1;
  for (std::size_t n : grid.image_shape) voxels *= n;
  const nd::Stream st = reinterpret_cast<nd::Stream>(stream);

  // The spline: the moving image itself (no prefilter), or padded / copied and prefiltered.
  DeviceBuffer coef;
  const float* c = moving;
  if (filter) {
    coef = DeviceBuffer(coef_count);
    if (pad > 0) {
      nd::pad(moving, moving_shape, pad, cfg.boundary == Boundary::Nearest, cfg.cval, coef.data(),
              st);
    } else {
      detail::check(cudaMemcpyAsync(coef.data(), moving, coef_count * sizeof(float),
                                    cudaMemcpyDeviceToDevice, stream),
                    (what + ": copying the moving image").c_str());
    }
    nd::spline_filter(coef.data(), cdims, degree, cfg.boundary, st);
    c = coef.data();
  }

  DeviceBuffer field(voxels * R);
  {
    FfdEvaluator evaluator(grid);
    evaluator.run(cfg.kernel, field.data(), stream);
    nd::Spline s;
    s.coefficients = c;
    s.dims = cdims;
    s.degree = degree;
    s.mode = cfg.boundary;
    s.cval = cfg.cval;
    s.shift = static_cast<double>(pad);
    FieldGen gen{field.data(), {1, 1, 1}};
    for (std::size_t a = 0; a < R; ++a) gen.od[a] = static_cast<long long>(grid.image_shape[a]);
    const long long m = static_cast<long long>(voxels);
    if (R == 2)
      nd::detail::launch_degree<2>(s, gen, m, out, st);
    else
      nd::detail::launch_degree<3>(s, gen, m, out, st);
  }  // the evaluator waits for a texture launch before freeing its array
  detail::check(cudaStreamSynchronize(stream), (what + ": running").c_str());
}

ArrayF warp(const ArrayF& moving, const ArrayF& grid, const std::vector<int>& delta,
            const WarpConfig& cfg, const std::vector<std::size_t>& output_shape) {
  const std::string what = std::string("CUDA warp (") + ffd_kernel_name(cfg.kernel) + ")";
  const std::size_t R = moving.rank();
  if (R != 2 && R != 3)
    throw Error(what + ": the moving image must be 2-D or 3-D, got rank " + std::to_string(R));
  if (moving.channels() < 1 || moving.channels() > 4)
    throw Error(what + ": the moving image must have 1 to 4 channels, got " +
                std::to_string(moving.channels()));
  const std::vector<std::size_t> shape = output_shape.empty() ? moving.dims() : output_shape;
  if (shape.size() != R)
    throw Error(what + ": the output shape has " + std::to_string(shape.size()) +
                " extents, the moving image is " + std::to_string(R) + "-D");
  if (grid.rank() != R)
    throw Error(what + ": a " + std::to_string(grid.rank()) + "-D control grid for a " +
                std::to_string(R) + "-D moving image");
  sv::check_ffd_grid(grid, delta, shape);  // components, values, size
  for (std::size_t i = 0; i < grid.size(); ++i)
    if (!(std::fabs(static_cast<double>(grid[i])) <= kMaxWarpDisplacement))
      throw Error(what + ": the control grid holds a displacement of " +
                  std::to_string(static_cast<double>(grid[i])) +
                  " voxels; at most 1e9 is accepted");
  for (std::size_t i = 0; i < moving.size(); ++i)
    if (!std::isfinite(moving[i])) throw Error(what + ": the moving image has a non-finite value");
  FfdGrid g;
  g.dims = grid.dims();
  g.delta = delta;
  g.image_shape = shape;
  g.points = grid.data();  // host: only checked for presence before the upload
  check_ffd_arguments(g, cfg.kernel, what.c_str());
  check_config(cfg, what.c_str());
  require(what.c_str());

  DeviceBuffer points(grid.size());
  points.upload(grid.data(), grid.size());
  g.points = points.data();
  const std::size_t C = moving.channels(), n = moving.points();
  ArrayF result(shape, C);
  const std::size_t m = result.points();
  DeviceBuffer src(n), dst(m);
  std::vector<float> plane(std::max(n, m));
  for (std::size_t ch = 0; ch < C; ++ch) {
    for (std::size_t i = 0; i < n; ++i) plane[i] = moving[i * C + ch];
    src.upload(plane.data(), n);
    warp(src.data(), moving.dims(), g, cfg, dst.data(), nullptr);
    dst.download(plane.data(), m);
    for (std::size_t i = 0; i < m; ++i) result[i * C + ch] = plane[i];
  }
  return result;
}

}  // namespace sv::cuda
