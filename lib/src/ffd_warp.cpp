// Warping by an FFD control grid or a dense displacement field (ffd_warp.h): the moving image
// prefiltered once (sv::Interpolant), the field evaluated slab by slab (one control-point tile
// along the slowest axis, ffd_field on the four control planes it needs), each output row sampled
// at its displaced positions right away.
#include "splineview/ffd_warp.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "ffd_text.h"
#include "parallel.h"
#include "splineview/error.h"
#include "splineview/ffd.h"
#include "splineview/interpolant.h"
#include "splineview/sampler.h"

namespace sv {

namespace {

using detail::axis_name;
using detail::shape_text;

template <class T>
void check_moving(const Array<T>& moving) {
  if (moving.rank() != 2 && moving.rank() != 3)
    throw Error("warp: the moving image must be 2-D or 3-D, got " +
                (moving.rank() == 0 ? std::string("an empty array")
                                    : std::to_string(moving.rank()) + "-D (" +
                                          describe_shape(moving.dims(), moving.channels()) + ")"));
}

// Refuses displacements whose magnitude leaves any sensible use (what: "control grid" or
// "displacement field"); values are known to be finite.
template <class T>
void check_magnitude(const Array<T>& a, const char* what) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(std::fabs(static_cast<double>(a[i])) <= kMaxWarpDisplacement))
      throw Error(std::string("warp: the ") + what + " holds a displacement of " +
                  std::to_string(static_cast<double>(a[i])) + " voxels (component " +
                  axis_name(a.rank(), i % a.channels()) + " at value index " +
                  std::to_string(i / a.channels()) + "); at most 1e9 is accepted");
}

// The moving image's spline: prefiltered (in T, with opt.threads) for the methods that
// prefilter, padded for Nearest and GridConstant as sv::interpolate does.
template <class T>
Interpolant<T> prepare(const Array<T>& moving, const WarpOptions& opt) {
  const SamplerOptions s{method_degree(opt.method), opt.boundary, -1, opt.threads, opt.cval};
  return Interpolant<T>(moving, s, method_prefilters(opt.method));
}

// Samples one output row of nx voxels at positions (lead..., x) + u[x] (u: nx * rank values),
// through sv::sample on the spline's coefficients in one thread (the pad added as
// Interpolant::sample adds it), and rounds the values to T.
template <class T>
class RowSampler {
 public:
  RowSampler(const Interpolant<T>& spline, const WarpOptions& opt, std::size_t nx)
      : spline_(spline),
        opt_{method_degree(opt.method), opt.boundary, -1, 1, opt.cval},
        rank_(spline.rank()),
        pos_(nx * spline.rank()),
        val_(nx * spline.channels()) {}

  void operator()(const std::size_t* lead, std::size_t nx, const T* u, T* out) {
    const double pad = static_cast<double>(spline_.pad());
    const std::size_t r = rank_;
    for (std::size_t x = 0; x < nx; ++x)
      for (std::size_t a = 0; a < r; ++a) {
        const double base = static_cast<double>(a + 1 == r ? x : lead[a]);
        pos_[x * r + a] = (base + static_cast<double>(u[x * r + a])) + pad;
      }
    sample(spline_.coefficients(), pos_.data(), nx, val_.data(), opt_);
    const std::size_t n = nx * spline_.channels();
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<T>(val_[i]);
  }

 private:
  const Interpolant<T>& spline_;
  SamplerOptions opt_;
  std::size_t rank_;
  std::vector<double> pos_, val_;
};

}  // namespace

template <class T>
Array<T> warp(const Array<T>& moving, const Array<T>& grid, const std::vector<int>& delta,
              const WarpOptions& opt) {
  check_moving(moving);
  const std::size_t r = moving.rank();
  const std::vector<std::size_t> shape =
      opt.output_shape.empty() ? moving.dims() : opt.output_shape;
  if (shape.size() != r)
    throw Error("warp: the output shape " + shape_text(shape) + " has rank " +
                std::to_string(shape.size()) + ", the moving image (" +
                describe_shape(moving.dims(), moving.channels()) + ") rank " + std::to_string(r));
  if (grid.rank() != r)
    throw Error("warp: the control grid is " + std::to_string(grid.rank()) + "-D (" +
                describe_shape(grid.dims(), grid.channels()) + "), the moving image " +
                std::to_string(r) + "-D (" + describe_shape(moving.dims(), moving.channels()) +
                "); a " + std::to_string(r) + "-D image needs a " + std::to_string(r) + "-D grid");
  check_ffd_grid(grid, delta, shape);
  check_magnitude(grid, "control grid");
  const Interpolant<T> spline = prepare(moving, opt);

  Array<T> out(shape, moving.channels());
  const std::size_t C = moving.channels(), nx = shape.back();
  const std::size_t d0 = static_cast<std::size_t>(delta[0]);
  const std::size_t slabs = (shape[0] + d0 - 1) / d0;
  // Control values per index of axis 0, and the sub-grid of the four planes a slab uses.
  const std::size_t plane = grid.size() / grid.dim(0);
  std::vector<std::size_t> sub_dims = grid.dims();
  sub_dims[0] = 4;
  const std::size_t rows_per_index = r == 3 ? shape[1] : 1;
  const unsigned threads = detail::thread_count(opt.threads, slabs, 1);
  detail::parallel_for(slabs, threads, [&](std::size_t begin, std::size_t end) {
    RowSampler<T> row(spline, opt, nx);
    Array<T> sub(sub_dims, r);
    for (std::size_t t = begin; t < end; ++t) {
      // Voxels t d0 .. t d0 + n0 - 1 of axis 0 lie in tile t and use control planes t .. t + 3:
      // the field of those planes over an image of n0 voxels there, exactly.
      const std::size_t z0 = t * d0, n0 = std::min(d0, shape[0] - z0);
      std::copy(grid.data() + t * plane, grid.data() + (t + 4) * plane, sub.data());
      std::vector<std::size_t> slab_shape = shape;
      slab_shape[0] = n0;
      const Array<T> u = ffd_field(sub, delta, slab_shape, 1);
      for (std::size_t k = 0; k < n0 * rows_per_index; ++k) {
        const std::size_t lead[2] = {z0 + k / rows_per_index, k % rows_per_index};
        const std::size_t out_row = z0 * rows_per_index + k;
        row(lead, nx, u.data() + k * nx * r, out.data() + out_row * nx * C);
      }
    }
  });
  return out;
}

template <class T>
Array<T> warp_with_field(const Array<T>& moving, const Array<T>& field, const WarpOptions& opt) {
  check_moving(moving);
  const std::size_t r = moving.rank();
  if (field.rank() != r || field.channels() != r)
    throw Error("warp: the displacement field (" + describe_shape(field.dims(), field.channels()) +
                ") must be " + std::to_string(r) + "-D with " + std::to_string(r) +
                " components (" + (r == 3 ? "z, y, x" : "y, x") + ") per voxel for the " +
                std::to_string(r) + "-D moving image (" +
                describe_shape(moving.dims(), moving.channels()) + ")");
  for (std::size_t i = 0; i < field.size(); ++i)
    if (!std::isfinite(field[i]))
      throw Error(std::string("warp: the displacement field holds a non-finite value (") +
                  (std::isnan(field[i]) ? "nan" : "inf") + ") at voxel index " +
                  std::to_string(i / r) + ", component " + axis_name(r, i % r));
  check_magnitude(field, "displacement field");
  const Interpolant<T> spline = prepare(moving, opt);

  const std::vector<std::size_t>& shape = field.dims();
  Array<T> out(shape, moving.channels());
  const std::size_t C = moving.channels(), nx = shape.back();
  const std::size_t rows = field.points() / nx;
  const std::size_t rows_per_index = r == 3 ? shape[1] : 1;
  const unsigned threads = detail::thread_count(opt.threads, rows, 8);
  detail::parallel_for(rows, threads, [&](std::size_t begin, std::size_t end) {
    RowSampler<T> row(spline, opt, nx);
    for (std::size_t k = begin; k < end; ++k) {
      const std::size_t lead[2] = {k / rows_per_index, k % rows_per_index};
      row(lead, nx, field.data() + k * nx * r, out.data() + k * nx * C);
    }
  });
  return out;
}

template Array<float> warp<float>(const Array<float>&, const Array<float>&, const std::vector<int>&,
                                  const WarpOptions&);
template Array<double> warp<double>(const Array<double>&, const Array<double>&,
                                    const std::vector<int>&, const WarpOptions&);
template Array<float> warp_with_field<float>(const Array<float>&, const Array<float>&,
                                             const WarpOptions&);
template Array<double> warp_with_field<double>(const Array<double>&, const Array<double>&,
                                               const WarpOptions&);

}  // namespace sv
