// The CUDA prefilter for arrays in host memory larger than the GPU's (or than a budget given to
// it): slabs along the slowest axis, each uploaded with a halo of slices from the boundary
// mode's extension (halo.h: the derived bound), filtered on every axis by the tiled kernels of
// cuda_prefilter.h (the slab axis with mirror starts at the window's ends, the other axes whole,
// with the mode's own starts), and its centre written back. Transfers overlap the kernels: two
// sets of pinned staging and device buffers, uploads and downloads on their own streams, the
// host's gathers and scatters (multi-threaded copies between the array and the pinned staging)
// meanwhile on the CPU.
//
// In place: a slab's window is gathered before the previous slab's result is written back, so
// every halo reads original samples (periodic arrays keep a copy of their first `halo` slices
// for the last slab's wrap-around). Works on any host memory: malloc'd, or a writable memory
// map of a file (raw, .npy, NRRD, NIfTI, TIFF data at an offset), so the array never has to
// fit in RAM either.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "splineview/array.h"
#include "splineview/cuda_memory.h"

namespace sv::cuda {

struct OutOfCoreConfig {
  int degree = 3;                        // 0..7 (0, 1: nothing to do)
  Boundary boundary = Boundary::Mirror;  // the prefilter's extension: prefilter_boundary(mode)
  // Device memory the pass may hold (both buffer sets and the kernels' side buffers), bytes;
  // 0: 80% of the free device memory.
  std::size_t device_budget = 0;
  std::size_t slab = 0;       // slices per slab (0: the most the budget allows)
  double tolerance = 0;       // chunk_bound target relative to the data's range; 0: float eps / 2
  unsigned host_threads = 0;  // threads for the host copies (0: up to 16)
  // The array is page-locked (cudaMallocHost, or a HostRegistration below): windows go up and
  // results come down straight between it and the device, with no staging copies on the host.
  bool host_pinned = false;
  // Called after each slab is written back (slices done, slices in all).
  std::function<void(std::size_t, std::size_t)> progress;
};

struct OutOfCoreStats {
  std::size_t slabs = 0, slab_slices = 0, halo = 0;
  std::size_t device_bytes = 0;  // the two buffer sets
  double seconds = 0;            // wall time of the whole pass
  std::size_t bytes_up = 0, bytes_down = 0;
};

// Page-locks [ptr, ptr + bytes) for the lifetime of the object (cudaHostRegister), so that
// prefilter_out_of_core can run with host_pinned; seconds() is what the locking took.
class HostRegistration {
 public:
  HostRegistration(void* ptr, std::size_t bytes);
  ~HostRegistration();
  HostRegistration(const HostRegistration&) = delete;
  HostRegistration& operator=(const HostRegistration&) = delete;
  double seconds() const { return seconds_; }

 private:
  void* ptr_ = nullptr;
  double seconds_ = 0;
};

// In place on host memory `data` (layout.size() floats, slices along axis 0 contiguous: the
// C-order layout of sv::Array). Throws sv::Error naming the problem (a budget too small for one
// slab of halo + 1 slices, no CUDA, a CUDA failure).
OutOfCoreStats prefilter_out_of_core(float* data, const Layout& layout, const OutOfCoreConfig& cfg);

// Resampling of a host array larger than the GPU, in output slabs along the slowest axis:
// output point (o0, o1, ...) takes the spline at (tables[0][o0], tables[1][o1], ...) (scipy's
// zoom and shift positions: sv::zoom_positions, sv::shift_positions), with the semantics of
// the package's GPU path (every mode, cval, degrees 0-7, the interpolant of the samples with
// prefilter). tables[0] must be non-decreasing. For each output slab the input window its
// positions need (taps plus the halo, from the mode's extension along axis 0; Wrap positions
// folded, Constant slabs outside the array filled with cval) goes up, is padded and prefiltered
// there, and the slab is evaluated and comes down. Channels: 1. Sequential transfers (pageable
// copies): see docs/BENCHMARKS.md for what that costs.
struct OutOfCoreResampleConfig {
  int degree = 3;
  Boundary mode = Boundary::Mirror;
  double cval = 0.0;
  bool prefilter = true;
  std::size_t device_budget = 0;  // bytes; 0: 80% of the free memory
  std::size_t slab = 0;           // output slices per slab at most (0: what the budget allows)
  // `in` and `out` are page-locked (cudaMallocHost, or HostRegistration): windows go up and
  // slabs come down straight between them and the device, overlapped with the kernels (two
  // device buffer sets); else sequential through pinned staging.
  bool host_pinned = false;
  std::function<void(std::size_t, std::size_t)> progress;  // output slices done, in all
  // Without host_pinned: when set, every read of `in` goes through read_input(dst, src, floats)
  // instead of memcpy (splinetool passes MappedVolume::copy_native_f32, a copy guarded against
  // a file truncated under its map); what it throws ends the call, buffers freed.
  std::function<void(float*, const float*, std::size_t)> read_input;
};
OutOfCoreStats resample_out_of_core(const float* in, const Layout& layout,
                                    const std::vector<std::vector<double>>& tables, float* out,
                                    const OutOfCoreResampleConfig& cfg);

// Affine resampling (scipy.ndimage.affine_transform with a square matrix; rotate is one: see
// splinetool resample --rotate --out-of-core) of a host array larger than the GPU: output point
// o (extents out_dims) takes the spline at matrix o + offset (row-major rank x rank; scipy
// 1.10's arithmetic, so every position is the in-memory path's to the last bit), with the
// semantics of resample_out_of_core. Output slabs along axis 0; a slab's input window along
// axis 0 spans the axis-0 positions of its 2^rank corners (an affine map takes a box's extremes
// at its corners) plus the taps, the halo and a slice of margin; the window goes up, is padded
// and prefiltered there, and the slab is evaluated in it (nd::Spline::window_first/extent: the
// mode's folds and Constant's test on the whole array's axis) and comes down. Each slab is the
// longest run of output slices whose buffers fit the budget, so a transform that keeps axis 0
// (a rotation in the plane of the last two axes) streams in thin windows, and one that tilts
// axis 0 needs windows of many input slices. Wrap, and order 0 with mirror or reflect, fold
// positions: a slab whose positions leave the array needs the whole axis. Constant and
// GridConstant slabs wholly outside the array are cval without any transfer. Transfers as
// resample_out_of_core's: through pinned staging, or with cfg.host_pinned straight and
// overlapped with the kernels (two buffer sets in the budget); cfg.read_input is used.
// Throws sv::Error naming the problem: bad extents or values, channels, an output slice whose
// window does not fit the budget (naming the slices it needs and the budget), no CUDA.
OutOfCoreStats affine_out_of_core(const float* in, const Layout& layout,
                                  const std::vector<double>& matrix,
                                  const std::vector<double>& offset,
                                  const std::vector<std::size_t>& out_dims, float* out,
                                  const OutOfCoreResampleConfig& cfg);

}  // namespace sv::cuda
