// splineview._cuda: the package's GPU path (pybind11 over cuda_ndimage.h, and cuda_bspline.h for
// issue 17's derivative filters, smoothing splines and the indirect transform, cuda_pyramid.h for
// its reduce2/expand2). It takes raw device
// pointers, extents and the caller's CUDA stream and device from the Python layer
// (splineview/_gpu.py), which reads them from CuPy arrays or torch tensors, allocates the
// results with the same library and keeps them alive; nothing here owns device memory beyond
// the prefilter's stream-ordered scratch. Work is queued on the caller's stream; the GIL is
// released while the host side queues it.
#include <cuda_runtime.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "splineview/array.h"
#include "splineview/cuda_bspline.h"
#include "splineview/cuda_memory.h"
#include "splineview/cuda_ndimage.h"
#include "splineview/cuda_out_of_core.h"
#include "splineview/cuda_pyramid.h"
#include "splineview/derivative.h"
#include "splineview/error.h"
#include "splineview/pyramid.h"
#include "splineview/sampler.h"
#include "splineview/smoothing.h"
#include "splineview/transform.h"

namespace py = pybind11;
namespace nd = sv::cuda::nd;

namespace {

using Dims = std::vector<std::size_t>;

sv::Boundary mode_of(const std::string& mode) {
  try {
    return sv::parse_boundary(mode);
  } catch (const sv::Error& e) {
    throw py::value_error(e.what());
  }
}

// 'f' (float32) or 'd' (float64): the data types the kernels take.
bool is_double(const std::string& dtype) {
  if (dtype == "d") return true;
  if (dtype == "f") return false;
  throw py::value_error("CUDA path: data type code '" + dtype + "' (expected 'f' or 'd')");
}

template <class F>
void on_device(int device, F&& f) {
  py::gil_scoped_release release;
  nd::use_device(device);
  f();
}

void spline_filter1d(std::uintptr_t data, const std::string& dtype, const Dims& dims,
                     std::size_t axis, int order, const std::string& mode, std::uintptr_t stream,
                     int device) {
  const sv::Boundary b = mode_of(mode);
  on_device(device, [&] {
    if (is_double(dtype))
      nd::spline_filter1d(reinterpret_cast<double*>(data), dims, axis, order, b, stream);
    else
      nd::spline_filter1d(reinterpret_cast<float*>(data), dims, axis, order, b, stream);
  });
}

void spline_filter(std::uintptr_t data, const std::string& dtype, const Dims& dims, int order,
                   const std::string& mode, std::uintptr_t stream, int device) {
  const sv::Boundary b = mode_of(mode);
  on_device(device, [&] {
    if (is_double(dtype))
      nd::spline_filter(reinterpret_cast<double*>(data), dims, order, b, stream);
    else
      nd::spline_filter(reinterpret_cast<float*>(data), dims, order, b, stream);
  });
}

void pad(std::uintptr_t src, std::uintptr_t dst, const std::string& dtype, const Dims& dims,
         std::size_t width, bool edge, double cval, std::uintptr_t stream, int device) {
  on_device(device, [&] {
    if (is_double(dtype))
      nd::pad(reinterpret_cast<const double*>(src), dims, width, edge, cval,
              reinterpret_cast<double*>(dst), stream);
    else
      nd::pad(reinterpret_cast<const float*>(src), dims, width, edge, cval,
              reinterpret_cast<float*>(dst), stream);
  });
}

nd::Spline spline_of(std::uintptr_t coefficients, const Dims& dims, int order,
                     const std::string& mode, double cval, double shift) {
  nd::Spline s;
  s.coefficients = reinterpret_cast<const void*>(coefficients);
  s.dims = dims;
  s.degree = order;
  s.mode = mode_of(mode);
  s.cval = cval;
  s.shift = shift;
  return s;
}

void map_coordinates(std::uintptr_t coefficients, const std::string& dtype, const Dims& dims,
                     int order, const std::string& mode, double cval, double shift,
                     int derivative_axis, std::uintptr_t coordinates,
                     const std::string& coordinate_dtype, std::size_t m, std::uintptr_t out,
                     std::uintptr_t stream, int device) {
  nd::Spline s = spline_of(coefficients, dims, order, mode, cval, shift);
  s.derivative_axis = derivative_axis < 0 ? -1 : derivative_axis;
  const bool cd = is_double(coordinate_dtype);
  on_device(device, [&] {
    if (is_double(dtype)) {
      if (cd)
        nd::map_coordinates(s, reinterpret_cast<const double*>(coordinates), m,
                            reinterpret_cast<double*>(out), stream);
      else
        nd::map_coordinates(s, reinterpret_cast<const float*>(coordinates), m,
                            reinterpret_cast<double*>(out), stream);
    } else {
      if (cd)
        nd::map_coordinates(s, reinterpret_cast<const double*>(coordinates), m,
                            reinterpret_cast<float*>(out), stream);
      else
        nd::map_coordinates(s, reinterpret_cast<const float*>(coordinates), m,
                            reinterpret_cast<float*>(out), stream);
    }
  });
}

void sample_tables(std::uintptr_t coefficients, const std::string& dtype, const Dims& dims,
                   int order, const std::string& mode, double cval, double shift,
                   const std::vector<std::vector<double>>& tables, std::uintptr_t out,
                   std::uintptr_t stream, int device) {
  const nd::Spline s = spline_of(coefficients, dims, order, mode, cval, shift);
  on_device(device, [&] {
    if (is_double(dtype))
      nd::sample_tables(s, tables, reinterpret_cast<double*>(out), stream);
    else
      nd::sample_tables(s, tables, reinterpret_cast<float*>(out), stream);
  });
}

void sample_affine(std::uintptr_t coefficients, const std::string& dtype, const Dims& dims,
                   int order, const std::string& mode, double cval, double shift,
                   const std::vector<double>& matrix, const std::vector<double>& offset,
                   const Dims& out_dims, std::uintptr_t out, std::uintptr_t stream, int device) {
  const nd::Spline s = spline_of(coefficients, dims, order, mode, cval, shift);
  on_device(device, [&] {
    if (is_double(dtype))
      nd::sample_affine(s, matrix, offset, out_dims, reinterpret_cast<double*>(out), stream);
    else
      nd::sample_affine(s, matrix, offset, out_dims, reinterpret_cast<float*>(out), stream);
  });
}

// The figures of an out-of-core pass, as the Python functions return them.
py::dict stats_dict(const sv::cuda::OutOfCoreStats& st) {
  py::dict d;
  d["slabs"] = st.slabs;
  d["slab_slices"] = st.slab_slices;
  d["halo"] = st.halo;
  d["device_bytes"] = st.device_bytes;
  d["seconds"] = st.seconds;
  d["bytes_up"] = st.bytes_up;
  d["bytes_down"] = st.bytes_down;
  return d;
}

// In place on a C-contiguous float32 host array (NumPy, np.memmap of a file): the out-of-core
// prefilter (cuda_out_of_core.h). Returns its figures.
py::dict prefilter_out_of_core(std::uintptr_t data, const Dims& dims, std::size_t channels,
                               int order, const std::string& mode, std::size_t budget_bytes,
                               bool pinned, int device) {
  sv::cuda::OutOfCoreConfig cfg;
  cfg.degree = order;
  cfg.boundary = mode_of(mode);
  cfg.device_budget = budget_bytes;
  cfg.host_pinned = pinned;
  sv::cuda::OutOfCoreStats st;
  {
    py::gil_scoped_release release;
    nd::use_device(device);
    st = sv::cuda::prefilter_out_of_core(reinterpret_cast<float*>(data),
                                         sv::cuda::Layout{dims, channels}, cfg);
  }
  return stats_dict(st);
}

// Runs `pass` with both arrays page-locked for the call when `pinned` (cudaHostRegister), else
// as they are; returns the seconds the locking took.
template <class Pass>
double with_pinned(float* src, std::size_t in_points, float* dst, std::size_t out_points,
                   bool pinned, const Pass& pass) {
  if (!pinned) {
    pass();
    return 0;
  }
  const sv::cuda::HostRegistration lock_in(src, in_points * sizeof(float));
  const sv::cuda::HostRegistration lock_out(dst, out_points * sizeof(float));
  pass();
  return lock_in.seconds() + lock_out.seconds();
}

// zoom of a C-contiguous float32 host array (NumPy, np.memmap) into another, in output slabs
// (resample_out_of_core with scipy's zoom positions). pinned: both arrays are page-locked for
// the call (cudaHostRegister; the time it took is returned as lock_seconds).
py::dict zoom_out_of_core(std::uintptr_t in, const Dims& in_dims, std::uintptr_t out,
                          const Dims& out_dims, int order, const std::string& mode, double cval,
                          bool prefilter, bool grid_mode, std::size_t budget_bytes,
                          std::size_t slab, bool pinned, int device) {
  if (in_dims.size() != out_dims.size())
    throw py::value_error("zoom_out_of_core: input and output ranks differ");
  sv::cuda::OutOfCoreResampleConfig cfg;
  cfg.degree = order;
  cfg.mode = mode_of(mode);
  cfg.cval = cval;
  cfg.prefilter = prefilter;
  cfg.device_budget = budget_bytes;
  cfg.slab = slab;
  cfg.host_pinned = pinned;
  std::vector<std::vector<double>> tables;
  std::size_t in_points = 1, out_points = 1;
  for (std::size_t d = 0; d < in_dims.size(); ++d) {
    tables.push_back(sv::zoom_positions(in_dims[d], out_dims[d], grid_mode));
    in_points *= in_dims[d];
    out_points *= out_dims[d];
  }
  sv::cuda::OutOfCoreStats st;
  double lock_seconds = 0;
  {
    py::gil_scoped_release release;
    nd::use_device(device);
    const sv::cuda::Layout layout{in_dims, 1};
    auto* src = reinterpret_cast<float*>(in);
    auto* dst = reinterpret_cast<float*>(out);
    lock_seconds = with_pinned(src, in_points, dst, out_points, pinned, [&] {
      st = sv::cuda::resample_out_of_core(src, layout, tables, dst, cfg);
    });
  }
  py::dict d = stats_dict(st);
  d["lock_seconds"] = lock_seconds;
  return d;
}

// affine_transform of a C-contiguous float32 host array into another with a square matrix
// (rank x rank, row-major) and offset, in output slabs (affine_out_of_core); pinned as above.
py::dict affine_out_of_core(std::uintptr_t in, const Dims& in_dims, std::uintptr_t out,
                            const Dims& out_dims, const std::vector<double>& matrix,
                            const std::vector<double>& offset, int order, const std::string& mode,
                            double cval, bool prefilter, std::size_t budget_bytes, std::size_t slab,
                            bool pinned, int device) {
  sv::cuda::OutOfCoreResampleConfig cfg;
  cfg.degree = order;
  cfg.mode = mode_of(mode);
  cfg.cval = cval;
  cfg.prefilter = prefilter;
  cfg.device_budget = budget_bytes;
  cfg.slab = slab;
  cfg.host_pinned = pinned;
  std::size_t in_points = 1, out_points = 1;
  for (std::size_t n : in_dims) in_points *= n;
  for (std::size_t n : out_dims) out_points *= n;
  sv::cuda::OutOfCoreStats st;
  double lock_seconds = 0;
  {
    py::gil_scoped_release release;
    nd::use_device(device);
    const sv::cuda::Layout layout{in_dims, 1};
    auto* src = reinterpret_cast<float*>(in);
    auto* dst = reinterpret_cast<float*>(out);
    lock_seconds = with_pinned(src, in_points, dst, out_points, pinned, [&] {
      st = sv::cuda::affine_out_of_core(src, layout, matrix, offset, out_dims, dst, cfg);
    });
  }
  py::dict d = stats_dict(st);
  d["lock_seconds"] = lock_seconds;
  return d;
}

// ---- Issue 17 on device arrays (cuda_bspline.h): the direct and indirect transforms and the
// derivative filters, for splineview/_bspline.py. Those functions queue their work on the legacy
// default stream; here the legacy stream first waits for the caller's stream (events, no host
// synchronisation) and the caller's stream then waits for the legacy stream, so the work is
// ordered on the caller's stream as every other call of this module. Arrays: C order, `dims`
// (1-3 axes) of `channels` interleaved values (1-4), float32 ('f') or float64 ('d'); sources
// and destinations must not overlap (the Python layer allocates the results).

// Makes `to` wait for the work queued so far on `from` (no-op when they are the same stream).
void stream_wait(cudaStream_t from, cudaStream_t to, const char* what) {
  if (from == to) return;
  cudaEvent_t e = nullptr;
  cudaError_t err = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  if (err == cudaSuccess) err = cudaEventRecord(e, from);
  if (err == cudaSuccess) err = cudaStreamWaitEvent(to, e, 0);
  if (e) cudaEventDestroy(e);
  if (err != cudaSuccess)
    throw sv::Error(std::string(what) +
                    ": ordering against the caller's stream failed: " + cudaGetErrorString(err));
}

// Runs `f` (which queues work on the legacy default stream) ordered on the caller's stream.
template <class F>
void on_legacy_stream(std::uintptr_t stream, int device, const char* what, F&& f) {
  py::gil_scoped_release release;
  nd::use_device(device);
  cudaStream_t caller = reinterpret_cast<cudaStream_t>(stream);
  if (caller == nullptr) caller = cudaStreamLegacy;  // 0: the legacy default stream itself
  stream_wait(caller, cudaStreamLegacy, what);
  try {
    f();
  } catch (...) {  // what was queued before the failure still runs before the caller's next work
    try {
      stream_wait(cudaStreamLegacy, caller, what);
    } catch (...) {
    }
    throw;
  }
  stream_wait(cudaStreamLegacy, caller, what);
}

sv::cuda::Layout layout_of(const Dims& dims, std::size_t channels, const char* what) {
  sv::cuda::Layout layout{dims, channels};
  try {
    layout.check(what);
  } catch (const sv::Error& e) {
    throw py::value_error(e.what());
  }
  return layout;
}

sv::SplineTransformOptions transform_options(const std::vector<int>& degrees, double lambda,
                                             const std::string& mode, std::size_t rank) {
  sv::SplineTransformOptions opt;
  opt.degrees = degrees;
  opt.lambda = lambda;
  opt.boundary = mode_of(mode);
  try {  // the library's refusals (degree range, even degrees with lambda > 0) before any work
    for (std::size_t d = 0; d < rank; ++d)
      sv::smoothing_poles(sv::transform_degree(opt, d, rank), lambda);
  } catch (const sv::Error& e) {
    throw py::value_error(e.what());
  }
  return opt;
}

// Samples to coefficients in place (lambda >= 0: the smoothing spline; 0: the interpolating
// prefilter), a degree per axis.
void bspline_direct_transform(std::uintptr_t data, const std::string& dtype, const Dims& dims,
                              std::size_t channels, const std::vector<int>& degrees, double lambda,
                              const std::string& mode, std::uintptr_t stream, int device) {
  const sv::cuda::Layout layout = layout_of(dims, channels, "direct_transform");
  const sv::SplineTransformOptions opt = transform_options(degrees, lambda, mode, dims.size());
  const bool dbl = is_double(dtype);
  on_legacy_stream(stream, device, "direct_transform", [&] {
    if (dbl)
      sv::cuda::direct_transform(reinterpret_cast<double*>(data), layout, opt);
    else
      sv::cuda::direct_transform(reinterpret_cast<float*>(data), layout, opt);
  });
}

// Coefficients to the samples of their spline at the grid, src -> dst, a degree per axis.
void bspline_indirect_transform(std::uintptr_t src, std::uintptr_t dst, const std::string& dtype,
                                const Dims& dims, std::size_t channels,
                                const std::vector<int>& degrees, const std::string& mode,
                                std::uintptr_t stream, int device) {
  const sv::cuda::Layout layout = layout_of(dims, channels, "indirect_transform");
  const sv::SplineTransformOptions opt = transform_options(degrees, 0.0, mode, dims.size());
  const bool dbl = is_double(dtype);
  on_legacy_stream(stream, device, "indirect_transform", [&] {
    if (dbl)
      sv::cuda::indirect_transform(reinterpret_cast<const double*>(src),
                                   reinterpret_cast<double*>(dst), layout, opt);
    else
      sv::cuda::indirect_transform(reinterpret_cast<const float*>(src),
                                   reinterpret_cast<float*>(dst), layout, opt);
  });
}

sv::DerivativeOptions derivative_options(int degree, const std::string& mode, double cval,
                                         bool prefilter) {
  if (degree < 0 || degree > 7)
    throw py::value_error("spline degree must be between 0 and 7 (got " + std::to_string(degree) +
                          ")");
  sv::DerivativeOptions opt;
  opt.degree = degree;
  opt.boundary = mode_of(mode);
  opt.cval = cval;
  opt.input_is_coefficients = !prefilter;
  return opt;
}

// The partial derivative of multi-index `order` at the grid, src -> dst.
void bspline_derivative(std::uintptr_t src, std::uintptr_t dst, const std::string& dtype,
                        const Dims& dims, std::size_t channels, const std::vector<int>& order,
                        int degree, const std::string& mode, double cval, bool prefilter,
                        std::uintptr_t stream, int device) {
  const sv::cuda::Layout layout = layout_of(dims, channels, "spline_derivative");
  const sv::DerivativeOptions opt = derivative_options(degree, mode, cval, prefilter);
  try {
    sv::check_derivative_order(order, dims.size(), degree, "spline_derivative");
  } catch (const sv::Error& e) {
    throw py::value_error(e.what());
  }
  const bool dbl = is_double(dtype);
  on_legacy_stream(stream, device, "spline_derivative", [&] {
    if (dbl)
      sv::cuda::derivative_filter(reinterpret_cast<const double*>(src),
                                  reinterpret_cast<double*>(dst), layout, order, opt);
    else
      sv::cuda::derivative_filter(reinterpret_cast<const float*>(src),
                                  reinterpret_cast<float*>(dst), layout, order, opt);
  });
}

template <class T>
std::vector<T*> pointers(const std::vector<std::uintptr_t>& p) {
  std::vector<T*> out;
  for (std::uintptr_t v : p) out.push_back(reinterpret_cast<T*>(v));
  return out;
}

template <class T>
void quantity(const std::string& kind, std::uintptr_t src, const std::vector<std::uintptr_t>& dst,
              const sv::cuda::Layout& layout, const sv::DerivativeOptions& opt) {
  const T* s = reinterpret_cast<const T*>(src);
  if (kind == "gradient")
    sv::cuda::gradient_filter(s, pointers<T>(dst), layout, opt);
  else if (kind == "hessian")
    sv::cuda::hessian_filter(s, pointers<T>(dst), layout, opt);
  else if (kind == "laplacian")
    sv::cuda::laplacian_filter(s, reinterpret_cast<T*>(dst[0]), layout, opt);
  else
    sv::cuda::gradient_magnitude_filter(s, reinterpret_cast<T*>(dst[0]), layout, opt);
}

// kind "gradient" (R destinations, d/dx_a), "hessian" (R(R+1)/2 in sv::hessian_index order),
// "laplacian" or "gradient_magnitude" (one), each an array of the input's layout.
void bspline_quantity(std::uintptr_t src, const std::vector<std::uintptr_t>& dst,
                      const std::string& kind, const std::string& dtype, const Dims& dims,
                      std::size_t channels, int degree, const std::string& mode, double cval,
                      bool prefilter, std::uintptr_t stream, int device) {
  const sv::cuda::Layout layout = layout_of(dims, channels, "spline derivative filter");
  const sv::DerivativeOptions opt = derivative_options(degree, mode, cval, prefilter);
  const std::size_t r = dims.size();
  std::size_t want = 1;
  if (kind == "gradient")
    want = r;
  else if (kind == "hessian")
    want = r * (r + 1) / 2;
  else if (kind != "laplacian" && kind != "gradient_magnitude")
    throw py::value_error("unknown derivative quantity " + kind);
  if (dst.size() != want)
    throw py::value_error(kind + " of a " + std::to_string(r) + "-D array writes " +
                          std::to_string(want) + " arrays, got " + std::to_string(dst.size()));
  const int least = kind == "gradient" || kind == "gradient_magnitude" ? 1 : 2;
  if (degree < least)
    throw py::value_error(kind + " needs degree >= " + std::to_string(least) + " (got " +
                          std::to_string(degree) + ")");
  const bool dbl = is_double(dtype);
  on_legacy_stream(stream, device, kind.c_str(), [&] {
    if (dbl)
      quantity<double>(kind, src, dst, layout, opt);
    else
      quantity<float>(kind, src, dst, layout, opt);
  });
}

// ---- The pyramid on device arrays (cuda_pyramid.h): reduce2 and expand2, with the checks and
// sentences of the CPU binding (python/src/module.cpp), so device input is refused alike.

sv::ReduceOptions pyramid_options(int degree, const std::string& mode) {
  if (degree < 0 || degree > 7)
    throw py::value_error("spline order must be between 0 and 7 (got " + std::to_string(degree) +
                          ")");
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

// The coarse extents reduce2 gives for fine extents `dims` (the CPU's refusals, e.g. an odd
// periodic axis, as ValueError).
Dims bspline_reduce2_shape(const Dims& dims, int degree, const std::string& mode) {
  const sv::ReduceOptions opt = pyramid_options(degree, mode);
  const sv::cuda::Layout fine = layout_of(dims, 1, "reduce2");
  try {
    return sv::cuda::reduce2_layout(fine, opt).dims;
  } catch (const sv::Error& e) {
    throw py::value_error(e.what());
  }
}

// reduce2 of src (samples, or coefficients without prefilter) into the coarse coefficients and,
// when `samples` is not 0, the coarse samples (each of reduce2_shape's extents).
void bspline_reduce2(std::uintptr_t src, std::uintptr_t coefficients, std::uintptr_t samples,
                     const std::string& dtype, const Dims& dims, std::size_t channels, int degree,
                     const std::string& mode, bool prefilter, std::uintptr_t stream, int device) {
  sv::ReduceOptions opt = pyramid_options(degree, mode);
  opt.input_is_coefficients = !prefilter;
  opt.samples = samples != 0;
  const sv::cuda::Layout fine = layout_of(dims, channels, "reduce2");
  try {
    sv::cuda::reduce2_layout(fine, opt);
  } catch (const sv::Error& e) {
    throw py::value_error(e.what());
  }
  const bool dbl = is_double(dtype);
  on_legacy_stream(stream, device, "reduce2", [&] {
    if (dbl)
      sv::cuda::reduce2(reinterpret_cast<const double*>(src), fine,
                        reinterpret_cast<double*>(coefficients), reinterpret_cast<double*>(samples),
                        opt);
    else
      sv::cuda::reduce2(reinterpret_cast<const float*>(src), fine,
                        reinterpret_cast<float*>(coefficients), reinterpret_cast<float*>(samples),
                        opt);
  });
}

// The fine extents of expand2 after the CPU binding's checks: `shape` 1-3 positive extents, one
// per axis of the coefficients, each giving the coefficients' extent under reduce2.
Dims bspline_expand2_shape(const Dims& coarse, const std::vector<long long>& shape, int degree,
                           const std::string& mode) {
  const sv::ReduceOptions opt = pyramid_options(degree, mode);
  if (shape.empty() || shape.size() > 3)
    throw py::value_error("shape must have 1, 2 or 3 dimensions (got " +
                          std::to_string(shape.size()) + "); splineview handles up to 3-D data");
  Dims fine;
  for (long long n : shape) {
    if (n <= 0) throw py::value_error("shape has an empty axis");
    fine.push_back(static_cast<std::size_t>(n));
  }
  if (fine.size() != coarse.size())
    throw py::value_error("shape has " + std::to_string(fine.size()) + " axes for " +
                          std::to_string(coarse.size()) + "-D coefficients");
  for (std::size_t d = 0; d < fine.size(); ++d) {
    std::size_t m = 0;
    try {
      m = sv::reduce2_axis(fine[d], opt).coarse;
    } catch (const sv::Error& e) {
      throw py::value_error(e.what());
    }
    if (m != coarse[d])
      throw py::value_error("coefficients axis " + std::to_string(d) + " has " +
                            std::to_string(coarse[d]) + " samples; reduce2 of " +
                            std::to_string(fine[d]) + " fine samples gives " + std::to_string(m));
  }
  return fine;
}

// expand2 of the coarse coefficients src (extents `coarse`) to dst (extents `fine`).
void bspline_expand2(std::uintptr_t src, std::uintptr_t dst, const std::string& dtype,
                     const Dims& coarse, std::size_t channels, const Dims& fine, int degree,
                     const std::string& mode, std::uintptr_t stream, int device) {
  const sv::ReduceOptions opt = pyramid_options(degree, mode);
  const sv::cuda::Layout layout = layout_of(coarse, channels, "expand2");
  std::vector<long long> shape(fine.begin(), fine.end());
  bspline_expand2_shape(coarse, shape, degree, mode);
  const sv::PyramidOptions& popt = opt;
  const bool dbl = is_double(dtype);
  on_legacy_stream(stream, device, "expand2", [&] {
    if (dbl)
      sv::cuda::expand2(reinterpret_cast<const double*>(src), layout, fine,
                        reinterpret_cast<double*>(dst), popt);
    else
      sv::cuda::expand2(reinterpret_cast<const float*>(src), layout, fine,
                        reinterpret_cast<float*>(dst), popt);
  });
}

py::tuple available() {
  std::string why;
  const bool ok = sv::cuda::available(&why);
  return py::make_tuple(ok, why);
}

}  // namespace

PYBIND11_MODULE(_cuda, m) {
  m.doc() = "splineview's GPU path for CuPy and torch arrays (used by splineview._gpu)";
  m.def("available", &available);
  m.def("interpolation_pad", [](const std::string& mode, int order) {
    return sv::interpolation_pad(mode_of(mode), order);
  });
  m.def("spline_filter1d", &spline_filter1d);
  m.def("spline_filter", &spline_filter);
  m.def("pad", &pad);
  m.def("map_coordinates", &map_coordinates);
  m.def("sample_tables", &sample_tables);
  m.def("sample_affine", &sample_affine);
  m.def("prefilter_out_of_core", &prefilter_out_of_core);
  m.def("zoom_out_of_core", &zoom_out_of_core);
  m.def("affine_out_of_core", &affine_out_of_core);
  m.def("bspline_direct_transform", &bspline_direct_transform);
  m.def("bspline_indirect_transform", &bspline_indirect_transform);
  m.def("bspline_derivative", &bspline_derivative);
  m.def("bspline_quantity", &bspline_quantity);
  m.def("bspline_reduce2_shape", &bspline_reduce2_shape);
  m.def("bspline_reduce2", &bspline_reduce2);
  m.def("bspline_expand2_shape", &bspline_expand2_shape);
  m.def("bspline_expand2", &bspline_expand2);
}
