// splineview._core: the library's exact CPU paths for NumPy arrays (pybind11). The scipy.ndimage
// signatures, argument checks and output dtypes live in Python (splineview/_ndimage.py); this
// module takes float64 data and returns float64 results.
//
// Copies: the input is converted once into the library's float64 array (the copy scipy makes
// too; rotate in 3-D reads plane by plane instead, as scipy does), filtered in place, and the
// result's buffer is handed to NumPy without another copy (a capsule owns it). Coordinates of
// map_coordinates are read in blocks of kBlock points, so no (M, d) position array is ever
// materialised. The GIL is released while the library works.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "splineview/array.h"
#include "splineview/derivative.h"
#include "splineview/error.h"
#include "splineview/halo.h"
#include "splineview/interpolant.h"
#include "splineview/prefilter.h"
#include "splineview/pyramid.h"
#include "splineview/sampler.h"
#include "splineview/smoothing.h"
#include "splineview/threads.h"
#include "splineview/transform.h"
#include "splineview/version.h"

namespace py = pybind11;

namespace {

using Float64 = py::array_t<double, py::array::c_style | py::array::forcecast>;

constexpr std::size_t kBlock = 1 << 16;  // positions per block in map_coordinates

// The library's arrays have rank 1..3; scipy's any rank.
std::vector<std::size_t> dims_of(const py::array& a, const char* what) {
  if (a.ndim() < 1 || a.ndim() > 3)
    throw py::value_error(std::string(what) + " must have 1, 2 or 3 dimensions (got " +
                          std::to_string(a.ndim()) + "); splineview handles up to 3-D data");
  std::vector<std::size_t> dims;
  for (py::ssize_t d = 0; d < a.ndim(); ++d) {
    if (a.shape(d) == 0) throw py::value_error(std::string(what) + " has an empty axis");
    dims.push_back(static_cast<std::size_t>(a.shape(d)));
  }
  return dims;
}

sv::Array<double> to_array(const Float64& a, const char* what) {
  sv::Array<double> out(dims_of(a, what), 1);
  std::memcpy(out.data(), a.data(), out.size() * sizeof(double));
  return out;
}

// Hands the array's buffer to NumPy (no copy), with the given shape.
py::array_t<double> to_numpy(sv::Array<double>&& a, const std::vector<py::ssize_t>& shape) {
  auto* owner = new std::vector<double>(std::move(a.vec()));
  py::capsule free_when_done(owner, [](void* p) { delete static_cast<std::vector<double>*>(p); });
  return py::array_t<double>(shape, owner->data(), free_when_done);
}

std::vector<py::ssize_t> shape_of(const py::array& a) {
  return std::vector<py::ssize_t>(a.shape(), a.shape() + a.ndim());
}

sv::Boundary mode_of(const std::string& mode) {
  try {
    return sv::parse_boundary(mode);
  } catch (const sv::Error& e) {
    throw py::value_error(e.what());
  }
}

void check_order(int order) {
  if (order < 0 || order > 7)
    throw py::value_error("spline order must be between 0 and 7 (got " + std::to_string(order) +
                          ")");
}

// In place along one axis (negative axes count from the end).
py::array_t<double> spline_filter1d(const Float64& input, int order, int axis,
                                    const std::string& mode) {
  check_order(order);
  const sv::Boundary b = mode_of(mode);
  const int rank = static_cast<int>(input.ndim());
  if (axis < -rank || axis >= rank)
    throw py::value_error("axis " + std::to_string(axis) + " is out of range for a " +
                          std::to_string(rank) + "-D array");
  if (axis < 0) axis += rank;
  sv::Array<double> a = to_array(input, "input");
  {
    py::gil_scoped_release release;
    sv::PrefilterOptions opt;
    opt.degree = order;
    opt.boundary = sv::prefilter_boundary(b);
    if (order > 1) sv::prefilter_axis(a, static_cast<std::size_t>(axis), opt);
  }
  return to_numpy(std::move(a), shape_of(input));
}

py::array_t<double> spline_filter(const Float64& input, int order, const std::string& mode) {
  check_order(order);
  const sv::Boundary b = mode_of(mode);
  sv::Array<double> a = to_array(input, "input");
  {
    py::gil_scoped_release release;
    sv::PrefilterOptions opt;
    opt.degree = order;
    opt.boundary = sv::prefilter_boundary(b);
    if (order > 1) sv::prefilter(a, opt);
  }
  return to_numpy(std::move(a), shape_of(input));
}

// coordinates: (d, ...) as in scipy; returns an array of coordinates.shape[1:].
// derivative_axis >= 0: the first derivative of the spline along that axis (sample units).
py::array_t<double> map_coordinates(const Float64& input, const Float64& coordinates, int order,
                                    const std::string& mode, double cval, bool prefilter,
                                    int derivative_axis) {
  check_order(order);
  const sv::Boundary b = mode_of(mode);
  const std::vector<std::size_t> dims = dims_of(input, "input");
  const std::size_t rank = dims.size();
  if (derivative_axis >= static_cast<int>(rank))
    throw py::value_error("derivative axis " + std::to_string(derivative_axis) + " of a " +
                          std::to_string(rank) + "-D input");
  if (derivative_axis >= 0 && order == 0)
    throw py::value_error("order 0 (nearest) has no derivative");
  if (coordinates.ndim() < 1 || static_cast<std::size_t>(coordinates.shape(0)) != rank)
    throw py::value_error("coordinates must have shape (" + std::to_string(rank) + ", ...) for a " +
                          std::to_string(rank) + "-D input");
  std::vector<py::ssize_t> out_shape(coordinates.shape() + 1,
                                     coordinates.shape() + coordinates.ndim());
  std::size_t m = 1;
  for (py::ssize_t s : out_shape) m *= static_cast<std::size_t>(s);
  sv::Array<double> f = to_array(input, "input");
  auto* result = new std::vector<double>(m);
  std::unique_ptr<std::vector<double>> keep(result);
  const double* coords = coordinates.data();
  {
    py::gil_scoped_release release;
    sv::SamplerOptions opt;
    opt.degree = order;
    opt.boundary = b;
    opt.cval = cval;
    opt.derivative_axis = derivative_axis < 0 ? -1 : derivative_axis;
    const sv::Interpolant<double> spline(std::move(f), opt, prefilter);
    std::vector<double> block(std::min(m, kBlock) * rank);
    for (std::size_t start = 0; start < m; start += kBlock) {
      const std::size_t n = std::min(kBlock, m - start);
      for (std::size_t d = 0; d < rank; ++d) {
        const double* src = coords + d * m + start;
        for (std::size_t i = 0; i < n; ++i) block[i * rank + d] = src[i];
      }
      spline.sample(block.data(), n, result->data() + start);
    }
  }
  keep.release();
  py::capsule free_when_done(result, [](void* p) { delete static_cast<std::vector<double>*>(p); });
  return py::array_t<double>(out_shape, result->data(), free_when_done);
}

sv::SamplerOptions sampler_options(int order, const std::string& mode, double cval) {
  check_order(order);
  sv::SamplerOptions opt;
  opt.degree = order;
  opt.boundary = mode_of(mode);
  opt.cval = cval;
  return opt;
}

std::vector<std::size_t> extents(const std::vector<py::ssize_t>& shape, const char* what) {
  if (shape.empty() || shape.size() > 3)
    throw py::value_error(std::string(what) + " must have 1, 2 or 3 dimensions (got " +
                          std::to_string(shape.size()) + "); splineview handles up to 3-D data");
  std::vector<std::size_t> dims;
  for (py::ssize_t s : shape) {
    if (s <= 0) throw py::value_error(std::string(what) + " has an empty axis");
    dims.push_back(static_cast<std::size_t>(s));
  }
  return dims;
}

py::array_t<double> result(sv::Array<double>&& a) {
  const std::vector<py::ssize_t> shape(a.dims().begin(), a.dims().end());
  return to_numpy(std::move(a), shape);
}

// scipy.ndimage.zoom to the output shape out_shape (computed by the caller as scipy does).
py::array_t<double> zoom(const Float64& input, const std::vector<py::ssize_t>& out_shape, int order,
                         const std::string& mode, double cval, bool prefilter, bool grid_mode) {
  const sv::SamplerOptions opt = sampler_options(order, mode, cval);
  const std::vector<std::size_t> out_dims = extents(out_shape, "output");
  sv::Array<double> a = to_array(input, "input");
  sv::Array<double> out;
  {
    py::gil_scoped_release release;
    out = sv::zoom(std::move(a), out_dims, grid_mode, opt, prefilter);
  }
  return result(std::move(out));
}

py::array_t<double> shift(const Float64& input, const std::vector<double>& shift, int order,
                          const std::string& mode, double cval, bool prefilter) {
  const sv::SamplerOptions opt = sampler_options(order, mode, cval);
  sv::Array<double> a = to_array(input, "input");
  sv::Array<double> out;
  {
    py::gil_scoped_release release;
    out = sv::shift(std::move(a), shift, opt, prefilter);
  }
  return result(std::move(out));
}

// output[i0, i1, ...] = the spline at (axes[0][i0], axes[1][i1], ...): the separable evaluation
// of zoom and shift at given per-axis positions (the dask path's blocks use it).
py::array_t<double> resample_axes(const Float64& input,
                                  const std::vector<std::vector<double>>& axes, int order,
                                  const std::string& mode, double cval, bool prefilter) {
  const sv::SamplerOptions opt = sampler_options(order, mode, cval);
  sv::Array<double> a = to_array(input, "input");
  if (axes.size() != a.rank())
    throw py::value_error(std::to_string(axes.size()) + " position axes for a " +
                          std::to_string(a.rank()) + "-D input");
  for (const auto& ax : axes)
    if (ax.empty()) throw py::value_error("an axis has no positions");
  sv::Array<double> out;
  {
    py::gil_scoped_release release;
    const sv::Interpolant<double> spline(std::move(a), opt, prefilter);
    out = sv::resample_axes(spline, axes, opt);
  }
  return result(std::move(out));
}

// matrix: (ndim, out ndim) row-major, or the ndim diagonal of scipy's 1-D form (diagonal_1d).
py::array_t<double> affine_transform(const Float64& input, const std::vector<double>& matrix,
                                     const std::vector<double>& offset,
                                     const std::vector<py::ssize_t>& out_shape, int order,
                                     const std::string& mode, double cval, bool prefilter,
                                     bool diagonal_1d) {
  const sv::SamplerOptions opt = sampler_options(order, mode, cval);
  const std::vector<std::size_t> out_dims = extents(out_shape, "output");
  sv::Array<double> a = to_array(input, "input");
  sv::Array<double> out;
  {
    py::gil_scoped_release release;
    out = sv::affine_transform(std::move(a), matrix, offset, out_dims, opt, prefilter, diagonal_1d);
  }
  return result(std::move(out));
}

// Plane p of a 3-D NumPy array of element type S, any strides (bytes), converted to double.
template <class S>
sv::PlaneLoader<double> strided_planes(const py::array& a, std::size_t axis_a, std::size_t axis_b) {
  const std::size_t axis_c = 3 - axis_a - axis_b;
  const char* base = static_cast<const char*>(a.data());
  const py::ssize_t sa = a.strides(static_cast<py::ssize_t>(axis_a));
  const py::ssize_t sb = a.strides(static_cast<py::ssize_t>(axis_b));
  const py::ssize_t sc = a.strides(static_cast<py::ssize_t>(axis_c));
  const py::ssize_t na = a.shape(static_cast<py::ssize_t>(axis_a));
  const py::ssize_t nb = a.shape(static_cast<py::ssize_t>(axis_b));
  return [=](std::size_t first, std::size_t count, double* dst) {
    const char* plane = base + static_cast<py::ssize_t>(first) * sc;
    const py::ssize_t k_end = static_cast<py::ssize_t>(count);
    for (py::ssize_t ia = 0; ia < na; ++ia) {
      const char* row = plane + ia * sa;
      for (py::ssize_t ib = 0; ib < nb; ++ib) {
        const char* at = row + ib * sb;
        for (py::ssize_t k = 0; k < k_end; ++k) {
          S v;  // memcpy: NumPy buffers need not be aligned
          std::memcpy(&v, at + k * sc, sizeof(S));
          *dst++ = static_cast<double>(v);
        }
      }
    }
  };
}

template <class S>
bool try_planes(const py::array& a, std::size_t axis_a, std::size_t axis_b,
                sv::PlaneLoader<double>& load) {
  if (!a.dtype().is(py::dtype::of<S>())) return false;  // also false for a foreign byte order
  load = strided_planes<S>(a, axis_a, axis_b);
  return true;
}

// The 2x2 affine map on every plane (axis_a, axis_b) of a 3-D input (scipy's rotate in 3-D). The
// planes are read one at a time straight from the NumPy buffer (native byte order, bool, integer
// or float32/64 elements, any strides) and converted to float64 plane by plane, as scipy does:
// no copy of the whole input. Other dtypes (float16, long double, swapped byte order) are first
// converted whole.
py::array_t<double> affine_transform_planes(const py::array& input, int axis_a, int axis_b,
                                            const std::vector<double>& matrix,
                                            const std::vector<double>& offset, py::ssize_t out_a,
                                            py::ssize_t out_b, int order, const std::string& mode,
                                            double cval, bool prefilter) {
  const sv::SamplerOptions opt = sampler_options(order, mode, cval);
  if (matrix.size() != 4 || offset.size() != 2)
    throw py::value_error("affine_transform_planes: a 2x2 matrix and 2 offsets");
  if (out_a <= 0 || out_b <= 0) throw py::value_error("output has an empty axis");
  if (input.ndim() != 3) throw py::value_error("affine_transform_planes: input must be 3-D");
  if (axis_a < 0 || axis_b <= axis_a || axis_b > 2)
    throw py::value_error("affine_transform_planes: axes must satisfy 0 <= a < b <= 2");
  const std::vector<std::size_t> dims = dims_of(input, "input");
  const std::size_t a = static_cast<std::size_t>(axis_a), b = static_cast<std::size_t>(axis_b);
  py::array source = input;
  sv::PlaneLoader<double> load;
  if (!(try_planes<double>(source, a, b, load) || try_planes<float>(source, a, b, load) ||
        try_planes<std::int8_t>(source, a, b, load) ||
        try_planes<std::uint8_t>(source, a, b, load) ||
        try_planes<std::int16_t>(source, a, b, load) ||
        try_planes<std::uint16_t>(source, a, b, load) ||
        try_planes<std::int32_t>(source, a, b, load) ||
        try_planes<std::uint32_t>(source, a, b, load) ||
        try_planes<std::int64_t>(source, a, b, load) ||
        try_planes<std::uint64_t>(source, a, b, load) || try_planes<bool>(source, a, b, load))) {
    source = Float64::ensure(input);
    if (!source) throw py::error_already_set();
    load = strided_planes<double>(source, a, b);
  }
  sv::Array<double> out;
  {
    py::gil_scoped_release release;
    out = sv::affine_transform_planes<double>(dims, 1, load, a, b, matrix.data(), offset.data(),
                                              static_cast<std::size_t>(out_a),
                                              static_cast<std::size_t>(out_b), opt, prefilter);
  }
  return result(std::move(out));
}

// ---- Issue 17: derivative filters, smoothing splines, the indirect transform, the pyramid ----
// float64 in, float64 out, one channel; the Python layer (splineview/_bspline.py) checks the
// arguments with scipy's messages and handles dtypes. The library's checks (orders against the
// degree, even degrees with lambda > 0, the pyramid's modes) raise ValueError via sv::Error.

sv::DerivativeOptions derivative_options(int degree, const std::string& mode, double cval,
                                         bool prefilter) {
  check_order(degree);
  sv::DerivativeOptions opt;
  opt.degree = degree;
  opt.boundary = mode_of(mode);
  opt.cval = cval;
  opt.input_is_coefficients = !prefilter;
  return opt;
}

py::array_t<double> derivative_filter(const Float64& input, const std::vector<int>& order,
                                      int degree, const std::string& mode, double cval,
                                      bool prefilter) {
  const sv::DerivativeOptions opt = derivative_options(degree, mode, cval, prefilter);
  sv::Array<double> a = to_array(input, "input");
  sv::check_derivative_order(order, a.rank(), degree, "spline_derivative");
  sv::Array<double> out;
  {
    py::gil_scoped_release release;
    out = sv::derivative_filter(a, order, opt);
  }
  return result(std::move(out));
}

// Components stacked along a new first axis: (K, *input.shape).
py::array_t<double> stacked(std::vector<sv::Array<double>>&& parts) {
  const std::vector<std::size_t>& dims = parts.at(0).dims();
  const std::size_t n = parts[0].size();
  auto* owner = new std::vector<double>(parts.size() * n);
  std::unique_ptr<std::vector<double>> keep(owner);
  for (std::size_t k = 0; k < parts.size(); ++k)
    std::memcpy(owner->data() + k * n, parts[k].data(), n * sizeof(double));
  std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(parts.size())};
  shape.insert(shape.end(), dims.begin(), dims.end());
  keep.release();
  py::capsule free_when_done(owner, [](void* p) { delete static_cast<std::vector<double>*>(p); });
  return py::array_t<double>(shape, owner->data(), free_when_done);
}

// kind: "gradient" (R, ...), "hessian" (R(R+1)/2, ..., in sv::hessian_index order),
// "laplacian" and "gradient_magnitude" (input shape).
py::array_t<double> derivative_quantity(const Float64& input, const std::string& kind, int degree,
                                        const std::string& mode, double cval, bool prefilter) {
  const sv::DerivativeOptions opt = derivative_options(degree, mode, cval, prefilter);
  sv::Array<double> a = to_array(input, "input");
  if (kind == "gradient" || kind == "hessian") {
    std::vector<sv::Array<double>> parts;
    {
      py::gil_scoped_release release;
      parts = kind == "gradient" ? sv::gradient_filter(a, opt) : sv::hessian_filter(a, opt);
    }
    return stacked(std::move(parts));
  }
  if (kind != "laplacian" && kind != "gradient_magnitude")
    throw py::value_error("unknown derivative quantity " + kind);
  sv::Array<double> out;
  {
    py::gil_scoped_release release;
    out =
        kind == "laplacian" ? sv::laplacian_filter(a, opt) : sv::gradient_magnitude_filter(a, opt);
  }
  return result(std::move(out));
}

sv::SplineTransformOptions transform_options(const std::vector<int>& degrees, double lambda,
                                             const std::string& mode) {
  sv::SplineTransformOptions opt;
  opt.degrees = degrees;
  opt.lambda = lambda;
  opt.boundary = mode_of(mode);
  return opt;
}

// samples -> coefficients (lambda >= 0), degrees one per axis.
py::array_t<double> direct_transform(const Float64& input, const std::vector<int>& degrees,
                                     double lambda, const std::string& mode) {
  const sv::SplineTransformOptions opt = transform_options(degrees, lambda, mode);
  sv::Array<double> a = to_array(input, "input");
  for (std::size_t d = 0; d < a.rank(); ++d)
    sv::smoothing_poles(sv::transform_degree(opt, d, a.rank()), lambda);  // refuse before work
  {
    py::gil_scoped_release release;
    sv::direct_transform(a, opt);
  }
  return result(std::move(a));
}

py::array_t<double> indirect_transform(const Float64& input, const std::vector<int>& degrees,
                                       const std::string& mode) {
  const sv::SplineTransformOptions opt = transform_options(degrees, 0.0, mode);
  sv::Array<double> a = to_array(input, "input");
  for (std::size_t d = 0; d < a.rank(); ++d) sv::transform_degree(opt, d, a.rank());
  {
    py::gil_scoped_release release;
    sv::indirect_transform(a, opt);
  }
  return result(std::move(a));
}

sv::ReduceOptions pyramid_options(int degree, const std::string& mode) {
  check_order(degree);
  sv::ReduceOptions opt;
  opt.degree = degree;
  opt.boundary = mode_of(mode);
  if (opt.boundary != sv::Boundary::Reflect && opt.boundary != sv::Boundary::Mirror &&
      opt.boundary != sv::Boundary::Periodic)
    throw py::value_error("mode '" + mode +
                          "' has no exact least-squares pyramid; use 'reflect' (= 'grid-mirror'), "
                          "'mirror' or 'grid-wrap'");
  return opt;
}

// Returns (coarse coefficients, coarse samples).
py::tuple reduce2(const Float64& input, int degree, const std::string& mode, bool prefilter) {
  sv::ReduceOptions opt = pyramid_options(degree, mode);
  opt.input_is_coefficients = !prefilter;
  opt.samples = true;
  sv::Array<double> a = to_array(input, "input");
  sv::Reduced<double> r;
  {
    py::gil_scoped_release release;
    r = sv::reduce2(a, opt);
  }
  return py::make_tuple(result(std::move(r.coefficients)), result(std::move(r.samples)));
}

py::array_t<double> expand2(const Float64& coarse, const std::vector<py::ssize_t>& fine_shape,
                            int degree, const std::string& mode) {
  const sv::ReduceOptions opt = pyramid_options(degree, mode);
  const std::vector<std::size_t> fine = extents(fine_shape, "shape");
  sv::Array<double> a = to_array(coarse, "coefficients");
  if (fine.size() != a.rank())
    throw py::value_error("shape has " + std::to_string(fine.size()) + " axes for " +
                          std::to_string(a.rank()) + "-D coefficients");
  for (std::size_t d = 0; d < fine.size(); ++d) {
    const std::size_t m = sv::reduce2_axis(fine[d], opt).coarse;
    if (m != a.dims()[d])
      throw py::value_error("coefficients axis " + std::to_string(d) + " has " +
                            std::to_string(a.dims()[d]) + " samples; reduce2 of " +
                            std::to_string(fine[d]) + " fine samples gives " + std::to_string(m));
  }
  sv::Array<double> out;
  {
    py::gil_scoped_release release;
    out = sv::expand2(a, fine, opt);
  }
  return result(std::move(out));
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "splineview's exact CPU B-spline paths (use the splineview package, not this module)";
  m.attr("__version__") = sv::version();
  // sv::Error (bad input the library found) -> ValueError; std::bad_alloc -> MemoryError is
  // pybind11's own translation.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const sv::Error& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  m.def("spline_filter1d", &spline_filter1d, py::arg("input"), py::arg("order"), py::arg("axis"),
        py::arg("mode"));
  m.def("spline_filter", &spline_filter, py::arg("input"), py::arg("order"), py::arg("mode"));
  m.def("cosdg", &sv::cosdg, py::arg("degrees"));  // as scipy.special, for rotate's matrix
  m.def("sindg", &sv::sindg, py::arg("degrees"));
  m.def("map_coordinates", &map_coordinates, py::arg("input"), py::arg("coordinates"),
        py::arg("order"), py::arg("mode"), py::arg("cval"), py::arg("prefilter"),
        py::arg("derivative_axis") = -1);
  m.def("resample_axes", &resample_axes, py::arg("input"), py::arg("axes"), py::arg("order"),
        py::arg("mode"), py::arg("cval"), py::arg("prefilter"));
  // Halos for chunked prefiltering (halo.h, docs/DESIGN.md "Halos").
  m.def(
      "prefilter_halo",
      [](int order, std::size_t ndim, double tolerance) {
        return sv::prefilter_halo(order, ndim, tolerance);
      },
      py::arg("order"), py::arg("ndim"), py::arg("tolerance"));
  // The CPU thread count for calls that do not set one (threads.h: SPLINEVIEW_NUM_THREADS, else
  // OMP_NUM_THREADS, else the cores), read once per process.
  m.def("default_thread_count", &sv::default_thread_count);
  m.def("chunk_bound", &sv::chunk_bound, py::arg("order"), py::arg("ndim"), py::arg("halo"));
  m.def("interpolation_pad", [](const std::string& mode, int order) {
    return sv::interpolation_pad(mode_of(mode), order);
  });
  m.def("zoom", &zoom, py::arg("input"), py::arg("output_shape"), py::arg("order"), py::arg("mode"),
        py::arg("cval"), py::arg("prefilter"), py::arg("grid_mode"));
  m.def("shift", &shift, py::arg("input"), py::arg("shift"), py::arg("order"), py::arg("mode"),
        py::arg("cval"), py::arg("prefilter"));
  m.def("affine_transform", &affine_transform, py::arg("input"), py::arg("matrix"),
        py::arg("offset"), py::arg("output_shape"), py::arg("order"), py::arg("mode"),
        py::arg("cval"), py::arg("prefilter"), py::arg("diagonal_1d"));
  m.def("affine_transform_planes", &affine_transform_planes, py::arg("input"), py::arg("axis_a"),
        py::arg("axis_b"), py::arg("matrix"), py::arg("offset"), py::arg("out_a"), py::arg("out_b"),
        py::arg("order"), py::arg("mode"), py::arg("cval"), py::arg("prefilter"));
  m.def("derivative_filter", &derivative_filter, py::arg("input"), py::arg("order"),
        py::arg("degree"), py::arg("mode"), py::arg("cval"), py::arg("prefilter"));
  m.def("derivative_quantity", &derivative_quantity, py::arg("input"), py::arg("kind"),
        py::arg("degree"), py::arg("mode"), py::arg("cval"), py::arg("prefilter"));
  m.def("direct_transform", &direct_transform, py::arg("input"), py::arg("degrees"), py::arg("lam"),
        py::arg("mode"));
  m.def("indirect_transform", &indirect_transform, py::arg("input"), py::arg("degrees"),
        py::arg("mode"));
  m.def("reduce2", &reduce2, py::arg("input"), py::arg("degree"), py::arg("mode"),
        py::arg("prefilter"));
  m.def("expand2", &expand2, py::arg("coefficients"), py::arg("shape"), py::arg("degree"),
        py::arg("mode"));
}
