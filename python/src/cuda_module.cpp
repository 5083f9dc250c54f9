// splineview._cuda: the package's GPU path (pybind11 over cuda_ndimage.h). It takes raw device
// pointers, extents and the caller's CUDA stream and device from the Python layer
// (splineview/_gpu.py), which reads them from CuPy arrays or torch tensors, allocates the
// results with the same library and keeps them alive; nothing here owns device memory beyond
// the prefilter's stream-ordered scratch. Work is queued on the caller's stream; the GIL is
// released while the host side queues it.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "splineview/array.h"
#include "splineview/cuda_memory.h"
#include "splineview/cuda_ndimage.h"
#include "splineview/cuda_out_of_core.h"
#include "splineview/error.h"
#include "splineview/sampler.h"
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
}
