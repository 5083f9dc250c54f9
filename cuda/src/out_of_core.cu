// The out-of-core CUDA prefilter (cuda_out_of_core.h).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "check.cuh"
#include "splineview/bspline.h"
#include "splineview/cuda_ndimage.h"
#include "splineview/cuda_out_of_core.h"
#include "splineview/cuda_prefilter.h"
#include "splineview/halo.h"
#include "splineview/prefilter.h"
#include "splineview/sampler.h"

namespace sv::cuda {
namespace {

using detail::check;

struct Pinned {
  float* ptr = nullptr;
  Pinned() = default;
  Pinned(const Pinned&) = delete;
  Pinned& operator=(const Pinned&) = delete;
  ~Pinned() {
    if (ptr) cudaFreeHost(ptr);
  }
  void allocate(std::size_t floats) {
    void* p = nullptr;
    check(cudaMallocHost(&p, floats * sizeof(float)),
          "out-of-core prefilter: allocating pinned staging");
    ptr = static_cast<float*>(p);
  }
};

struct Device {
  float* ptr = nullptr;
  Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  ~Device() {
    if (ptr) cudaFree(ptr);
  }
  void allocate(std::size_t floats) {
    void* p = nullptr;
    check(cudaMalloc(&p, floats * sizeof(float)),
          "out-of-core prefilter: allocating a slab buffer");
    ptr = static_cast<float*>(p);
  }
};

struct Event {
  cudaEvent_t e = nullptr;
  Event() { check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "creating an event"); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() { cudaEventDestroy(e); }
};

struct Stream {
  cudaStream_t s = nullptr;
  Stream() {
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "creating a copy stream");
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() { cudaStreamDestroy(s); }
};

// Copies `count` slices of `slice` floats, slice j from src(j) to dst + j * slice, on up to
// `threads` threads (contiguous ranges of slices, or of one slice's bytes when there is one),
// with `read` (dst, src, floats) where given (a guarded read from a memory map, which may throw)
// else memcpy. The first exception of any thread is rethrown once all have stopped.
using HostRead = std::function<void(float*, const float*, std::size_t)>;
template <class Src>
void copy_slices(float* dst, std::size_t count, std::size_t slice, const Src& src, unsigned threads,
                 const HostRead* read = nullptr) {
  const std::size_t total = count * slice;
  const unsigned t = static_cast<unsigned>(
      std::max<std::size_t>(1, std::min<std::size_t>(threads, total / (std::size_t{1} << 20))));
  auto work = [&](std::size_t lo, std::size_t hi) {  // float ranges of the destination
    while (lo < hi) {
      const std::size_t j = lo / slice, off = lo % slice;
      const std::size_t n = std::min(hi - lo, slice - off);
      if (read && *read)
        (*read)(dst + lo, src(j) + off, n);
      else
        std::memcpy(dst + lo, src(j) + off, n * sizeof(float));
      lo += n;
    }
  };
  if (t <= 1) {
    work(0, total);
    return;
  }
  std::vector<std::exception_ptr> errors(t);
  std::vector<std::thread> pool;
  for (unsigned k = 0; k < t; ++k)
    pool.emplace_back([&, k] {
      try {
        work(total * k / t, total * (k + 1) / t);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    });
  for (auto& th : pool) th.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

// Page-locked host data: windows go up and results come down straight between the array and
// the device, no staging copies. A window reads the previous slab's last slices, so that slab's
// result goes down only after the window is up (events order the two copy streams).
OutOfCoreStats run_pinned(float* data, const Layout& layout, const OutOfCoreConfig& cfg,
                          OutOfCoreStats st, std::size_t slab, std::size_t hw, Boundary pb,
                          std::chrono::steady_clock::time_point t0) {
  const std::size_t rank = layout.rank(), n = layout.dims[0];
  const std::size_t slice = layout.size() / n, slice_bytes = slice * sizeof(float);
  const bool single = hw == 0;
  const std::size_t window = slab + 2 * hw, slabs = st.slabs;
  Device dev[2];
  const std::size_t sets = std::min<std::size_t>(2, slabs);
  for (std::size_t b = 0; b < sets; ++b) dev[b].allocate(window * slice);
  st.device_bytes = sets * window * slice_bytes;
  Pinned first;  // periodic: the first slices, for the last slab's wrap-around
  if (pb == Boundary::Periodic && slabs > 1) {
    first.allocate(hw * slice);
    std::memcpy(first.ptr, data, hw * slice_bytes);
  }
  Stream up, down;
  Event uploaded[2], filtered[2], downloaded[2];
  PrefilterConfig pc;
  pc.degree = cfg.degree;
  auto range = [&](std::size_t i) {
    return std::make_pair(i * slab, std::min(n, i * slab + slab));
  };
  auto download = [&](std::size_t i) {
    const std::size_t b = i % 2;
    const auto [z0, z1] = range(i);
    check(cudaStreamWaitEvent(down.s, filtered[b].e, 0), "out-of-core prefilter: ordering");
    check(cudaMemcpyAsync(data + z0 * slice, dev[b].ptr + hw * slice, (z1 - z0) * slice_bytes,
                          cudaMemcpyDeviceToHost, down.s),
          "out-of-core prefilter: downloading a slab");
    check(cudaEventRecord(downloaded[b].e, down.s), "out-of-core prefilter: recording");
    st.bytes_down += (z1 - z0) * slice_bytes;
  };
  for (std::size_t i = 0; i < slabs; ++i) {
    const std::size_t b = i % 2;
    const auto [z0, z1] = range(i);
    const std::size_t wlen = z1 - z0 + 2 * hw;
    if (i >= 2)
      check(cudaStreamWaitEvent(up.s, downloaded[b].e, 0), "out-of-core prefilter: ordering");
    // Runs of consecutive slices go up as one copy.
    const long lo = static_cast<long>(z0) - static_cast<long>(hw);
    std::size_t j = 0;
    while (j < wlen) {
      const long z = extend_index(lo + static_cast<long>(j), static_cast<long>(n), pb);
      const float* from = (first.ptr && i >= 1 && z < static_cast<long>(hw))
                              ? first.ptr + static_cast<std::size_t>(z) * slice
                              : data + static_cast<std::size_t>(z) * slice;
      std::size_t run = 1;
      if (from >= data && from < data + n * slice)
        while (j + run < wlen &&
               extend_index(lo + static_cast<long>(j + run), static_cast<long>(n), pb) ==
                   z + static_cast<long>(run) &&
               !(first.ptr && i >= 1 && z + static_cast<long>(run) < static_cast<long>(hw)))
          ++run;
      check(cudaMemcpyAsync(dev[b].ptr + j * slice, from, run * slice_bytes, cudaMemcpyHostToDevice,
                            up.s),
            "out-of-core prefilter: uploading a slab");
      j += run;
    }
    check(cudaEventRecord(uploaded[b].e, up.s), "out-of-core prefilter: recording");
    st.bytes_up += wlen * slice_bytes;
    check(cudaStreamWaitEvent(cudaStreamLegacy, uploaded[b].e, 0),
          "out-of-core prefilter: ordering");
    std::vector<std::size_t> wdims = layout.dims;
    wdims[0] = wlen;
    const Layout wl{wdims, layout.channels};
    for (std::size_t axis = 0; axis < rank; ++axis) {
      pc.boundary = (axis == 0 && !single) ? Boundary::Mirror : pb;
      prefilter_axis(dev[b].ptr, wl, axis, pc);
    }
    check(cudaEventRecord(filtered[b].e, cudaStreamLegacy), "out-of-core prefilter: recording");
    // Slab i - 1 goes down once this window (which read its last slices) is up.
    if (i >= 1) {
      check(cudaStreamWaitEvent(down.s, uploaded[b].e, 0), "out-of-core prefilter: ordering");
      download(i - 1);
    }
  }
  download(slabs - 1);
  synchronize("out-of-core prefilter");
  if (cfg.progress) cfg.progress(n, n);
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return st;
}

}  // namespace

HostRegistration::HostRegistration(void* ptr, std::size_t bytes) {
  const auto t0 = std::chrono::steady_clock::now();
  check(cudaHostRegister(ptr, bytes, cudaHostRegisterDefault),
        "page-locking host memory for the GPU");
  ptr_ = ptr;
  seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

HostRegistration::~HostRegistration() {
  if (ptr_) cudaHostUnregister(ptr_);
}

OutOfCoreStats prefilter_out_of_core(float* data, const Layout& layout,
                                     const OutOfCoreConfig& cfg) {
  layout.check("out-of-core prefilter");
  check_degree(cfg.degree, 0, kMaxDegree);
  require("out-of-core prefilter");
  const auto t0 = std::chrono::steady_clock::now();
  OutOfCoreStats st;
  const std::size_t rank = layout.rank();
  const std::size_t n = layout.dims[0];
  const std::size_t slice = layout.size() / n;  // floats per slice (channels included)
  if (cfg.degree < 2) return st;
  const Boundary pb = prefilter_boundary(cfg.boundary);
  const double tol = cfg.tolerance > 0 ? cfg.tolerance : std::numeric_limits<float>::epsilon() / 2;
  const std::size_t h = prefilter_halo(cfg.degree, rank, tol);
  st.halo = h;
  const unsigned threads = cfg.host_threads
                               ? cfg.host_threads
                               : std::min(16u, std::max(1u, std::thread::hardware_concurrency()));

  // Slab size from the budget: two device windows of (slab + 2h) slices plus the kernels' side
  // buffers (the in-place chunked pass keeps about 10% of a window aside; 25% reserved).
  std::size_t budget = cfg.device_budget;
  if (budget == 0) {
    std::size_t free_bytes = 0, total_bytes = 0;
    check(cudaMemGetInfo(&free_bytes, &total_bytes), "out-of-core prefilter: reading free memory");
    budget = free_bytes / 10 * 8;
  }
  const std::size_t slice_bytes = slice * sizeof(float);
  const std::size_t fit = static_cast<std::size_t>(static_cast<double>(budget) /
                                                   (3.5 * static_cast<double>(slice_bytes)));
  // Unless told, slabs of about 256 MiB: four pinned buffers of about that size on the host
  // (pinning costs time), enough slabs for the transfers to overlap the kernels, and a halo
  // overhead of 2h slices per slab.
  const std::size_t cap = std::max<std::size_t>(4 * h, (std::size_t{256} << 20) / slice_bytes);
  std::size_t slab;
  if (cfg.slab) {
    slab = std::max(cfg.slab, h + 1);  // a slab must cover the next one's left halo
  } else {
    if (fit < n && fit < 3 * h + 1)
      throw Error("out-of-core prefilter: a device budget of " + std::to_string(budget) +
                  " bytes holds " + std::to_string(fit) + " slices of " +
                  std::to_string(slice_bytes) + " bytes; a slab needs at least " +
                  std::to_string(3 * h + 1) + " (halo " + std::to_string(h) +
                  " per side): raise the budget");
    slab = std::min(fit >= n ? n : fit - 2 * h, std::max(cap, h + 1));
  }
  if (slab >= n) slab = n;
  const bool single = slab >= n;
  const std::size_t hw = single ? 0 : h;  // halo slices per side of a window
  const std::size_t window = slab + 2 * hw;
  const std::size_t slabs = (n + slab - 1) / slab;
  st.slabs = slabs;
  st.slab_slices = slab;

  if (cfg.host_pinned) return run_pinned(data, layout, cfg, st, slab, hw, pb, t0);
  constexpr std::size_t K = 3;  // buffer sets: slab i is gathered while slab i - 2 goes back
  Pinned in_stage[K], out_stage[K];
  Device dev[K];
  const std::size_t sets = std::min<std::size_t>(K, slabs);
  for (std::size_t b = 0; b < sets; ++b) {
    in_stage[b].allocate(window * slice);
    out_stage[b].allocate(slab * slice);
    dev[b].allocate(window * slice);
  }
  st.device_bytes = sets * window * slice_bytes;
  // Periodic: the last slab's halo wraps onto the first slices, written back long before.
  std::vector<float> first;
  if (pb == Boundary::Periodic && slabs > 1) {
    first.resize(hw * slice);
    copy_slices(
        first.data(), hw, slice, [&](std::size_t j) { return data + j * slice; }, threads);
  }
  Stream up, down;
  Event uploaded[K], filtered[K], downloaded[K];
  PrefilterConfig pc;
  pc.degree = cfg.degree;

  auto slab_range = [&](std::size_t i) {
    const std::size_t z0 = i * slab;
    return std::make_pair(z0, std::min(n, z0 + slab));
  };
  auto scatter = [&](std::size_t i, unsigned t) {
    const std::size_t b = i % K;
    const auto [z0, z1] = slab_range(i);
    check(cudaEventSynchronize(downloaded[b].e), "out-of-core prefilter: downloading a slab");
    copy_slices(
        data + z0 * slice, z1 - z0, slice,
        [&](std::size_t j) { return out_stage[b].ptr + j * slice; }, t);
    st.bytes_down += (z1 - z0) * slice_bytes;
    if (cfg.progress) cfg.progress(z1, n);
  };

  for (std::size_t i = 0; i < slabs; ++i) {
    const std::size_t b = i % K;
    const auto [z0, z1] = slab_range(i);
    const std::size_t len = z1 - z0, wlen = len + 2 * hw;
    // The staging set is free once slab i - K's upload has finished.
    if (i >= K) check(cudaEventSynchronize(uploaded[b].e), "out-of-core prefilter: uploading");
    // Window slice j comes from slice z of the array (the mode's extension), or from the saved
    // first slices (periodic wrap-around once slab 0 may have gone back).
    const long lo = static_cast<long>(z0) - static_cast<long>(hw);
    std::vector<const float*> src(wlen);
    for (std::size_t j = 0; j < wlen; ++j) {
      const long z = extend_index(lo + static_cast<long>(j), static_cast<long>(n), pb);
      const bool saved = !first.empty() && i >= 1 && z < static_cast<long>(hw);
      src[j] = saved ? first.data() + static_cast<std::size_t>(z) * slice
                     : data + static_cast<std::size_t>(z) * slice;
    }
    // The window reads slabs i - 1 .. i + 1 (a slab holds at least halo + 1 slices), so slab
    // i - 2's result can go back at the same time.
    auto gather = [&](unsigned t) {
      copy_slices(
          in_stage[b].ptr, wlen, slice, [&](std::size_t j) { return src[j]; }, t);
    };
    if (i >= K - 1) {
      std::thread back([&] { scatter(i - (K - 1), std::max(1u, threads / 2)); });
      gather(std::max(1u, threads - threads / 2));
      back.join();
    } else {
      gather(threads);
    }
    // The device buffer is free once slab i - K's download has finished.
    if (i >= K)
      check(cudaStreamWaitEvent(up.s, downloaded[b].e, 0), "out-of-core prefilter: ordering");
    check(cudaMemcpyAsync(dev[b].ptr, in_stage[b].ptr, wlen * slice_bytes, cudaMemcpyHostToDevice,
                          up.s),
          "out-of-core prefilter: uploading a slab");
    check(cudaEventRecord(uploaded[b].e, up.s), "out-of-core prefilter: recording");
    st.bytes_up += wlen * slice_bytes;
    // Kernels (the tiled prefilter runs on the legacy default stream): every axis, the slab
    // axis with mirror starts at the window's ends (the halo holds the true extension), the
    // others whole with the mode's own.
    check(cudaStreamWaitEvent(cudaStreamLegacy, uploaded[b].e, 0),
          "out-of-core prefilter: ordering");
    std::vector<std::size_t> wdims = layout.dims;
    wdims[0] = wlen;
    const Layout wl{wdims, layout.channels};
    for (std::size_t axis = 0; axis < rank; ++axis) {
      pc.boundary = (axis == 0 && !single) ? Boundary::Mirror : pb;
      prefilter_axis(dev[b].ptr, wl, axis, pc);
    }
    check(cudaEventRecord(filtered[b].e, cudaStreamLegacy), "out-of-core prefilter: recording");
    check(cudaStreamWaitEvent(down.s, filtered[b].e, 0), "out-of-core prefilter: ordering");
    check(cudaMemcpyAsync(out_stage[b].ptr, dev[b].ptr + hw * slice, len * slice_bytes,
                          cudaMemcpyDeviceToHost, down.s),
          "out-of-core prefilter: downloading a slab");
    check(cudaEventRecord(downloaded[b].e, down.s), "out-of-core prefilter: recording");
  }
  for (std::size_t i = slabs >= K - 1 ? slabs - (K - 1) : 0; i < slabs; ++i) scatter(i, threads);
  synchronize("out-of-core prefilter");
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return st;
}

namespace {

// The sample index that the interpolant's extension puts at k on an axis of n (-1: cval).
long interp_index(long k, long n, Boundary mode) {
  if (k >= 0 && k < n) return k;
  switch (mode) {
    case Boundary::Nearest:
      return k < 0 ? 0 : n - 1;
    case Boundary::GridConstant:
      return -1;
    default:
      return extend_index(k, n, prefilter_boundary(mode));
  }
}

// One output slab of the resampling: output slices [o0, o1), of which [a, b) need the array
// (the rest are cval: Constant slices outside it), from input window [lo, lo + wn) of the
// interpolant's extension along axis 0.
struct ResampleSlab {
  std::size_t o0, o1, a, b;
  long lo;
  std::size_t wn;
};

// Evaluates slab r's output slices [a, b) into dout from the spline of its window (sp: the
// window's coefficients, extents, degree, mode, cval and pad shift, set by the caller; the
// sampler adds what its positions need), queued on stream s.
using SlabSampler =
    std::function<void(nd::Spline& sp, const ResampleSlab& r, float* dout, nd::Stream s)>;

// The separable path's slabs: fixed runs of `slab` output slices; positions z per output slice
// along axis 0 (folded for Wrap), `outside`: Constant slices beyond the array.
std::vector<ResampleSlab> plan_resample_slabs(const std::vector<double>& z,
                                              const std::vector<bool>& outside, std::size_t slab,
                                              long taps, std::size_t h) {
  std::vector<ResampleSlab> slabs;
  const std::size_t nout = z.size();
  for (std::size_t o0 = 0; o0 < nout; o0 += slab) {
    ResampleSlab r{o0, std::min(nout, o0 + slab), 0, 0, 0, 0};
    r.a = r.o0;
    r.b = r.o1;
    while (r.a < r.b && outside[r.a]) ++r.a;
    while (r.b > r.a && outside[r.b - 1]) --r.b;
    if (r.a < r.b) {
      double zmin = z[r.a], zmax = z[r.a];
      for (std::size_t i = r.a; i < r.b; ++i) {
        zmin = std::min(zmin, z[i]);
        zmax = std::max(zmax, z[i]);
      }
      r.lo = static_cast<long>(std::floor(zmin)) - taps - static_cast<long>(h) - 1;
      const long hi = static_cast<long>(std::ceil(zmax)) + taps + static_cast<long>(h) + 2;
      r.wn = static_cast<std::size_t>(hi - r.lo);
    }
    slabs.push_back(r);
  }
  return slabs;
}

// Device floats of one buffer set for these slabs: the largest window, its padded copy (pad > 0)
// and the largest output slab.
struct SlabBuffers {
  std::size_t win = 0, padded = 0, out = 0;
  std::size_t floats() const { return win + padded + out; }
};

SlabBuffers slab_buffers(const std::vector<ResampleSlab>& slabs, const Layout& layout,
                         std::size_t out_slice, std::size_t pad) {
  const std::size_t in_slice = layout.points() / layout.dims[0];
  std::size_t max_wn = 0;
  SlabBuffers b;
  for (const ResampleSlab& r : slabs) {
    max_wn = std::max(max_wn, r.wn);
    b.out = std::max(b.out, (r.b - r.a) * out_slice);
  }
  b.win = max_wn * in_slice;
  if (pad && max_wn) {
    b.padded = max_wn + 2 * pad;
    for (std::size_t d = 1; d < layout.rank(); ++d) b.padded *= layout.dims[d] + 2 * pad;
  }
  return b;
}

// The window of slab r (on the device, wn slices) padded (pad > 0) and prefiltered (filtered)
// on stream cs: the spline to evaluate, without positions.
nd::Spline window_spline(float* dwin, float* dpad, const Layout& layout, const ResampleSlab& r,
                         const OutOfCoreResampleConfig& cfg, bool filtered, std::size_t pad,
                         nd::Stream cs) {
  std::vector<std::size_t> wdims = layout.dims;
  wdims[0] = r.wn;
  const float* coef = dwin;
  std::vector<std::size_t> cdims = wdims;
  if (filtered) {
    if (pad) {
      for (auto& d : cdims) d += 2 * pad;
      nd::pad(dwin, wdims, pad, cfg.mode == Boundary::Nearest, cfg.cval, dpad, cs);
      nd::spline_filter(dpad, cdims, cfg.degree, cfg.mode, cs);
      coef = dpad;
    } else {
      nd::spline_filter(dwin, wdims, cfg.degree, cfg.mode, cs);
    }
  }
  nd::Spline sp;
  sp.coefficients = coef;
  sp.dims = cdims;
  sp.degree = cfg.degree;
  sp.mode = cfg.mode;
  sp.cval = cfg.cval;
  sp.shift = static_cast<double>(pad);
  return sp;
}

void fill_outside(const ResampleSlab& r, std::size_t out_slice, float* out, double cval) {
  for (std::size_t o = r.o0; o < r.o1; ++o)
    if (o < r.a || o >= r.b)
      std::fill(out + o * out_slice, out + (o + 1) * out_slice, static_cast<float>(cval));
}

// The page-locked path (cfg.host_pinned: `in` and `out` page-locked): no host copies at all.
// Two device buffer sets; slab i uses set i % 2: its window goes up straight from the array in
// runs of consecutive source slices (upload stream), is padded, prefiltered and evaluated
// (compute stream), and the output slab comes down straight into `out` (download stream), so
// the upload of slab i + 1 and the download of slab i - 1 overlap the kernels of slab i. Events
// keep a set from being refilled before its previous slab's kernels (window) and download
// (output) are done.
void run_pinned(const float* in, const Layout& layout, const std::vector<ResampleSlab>& slabs,
                std::size_t out_slice, std::size_t nout, const SlabSampler& sample, float* out,
                const OutOfCoreResampleConfig& cfg, std::size_t pad, OutOfCoreStats& st) {
  const long n = static_cast<long>(layout.dims[0]);
  const std::size_t in_slice = layout.points() / layout.dims[0];
  const Boundary mode = cfg.mode;
  const bool filtered = cfg.prefilter && cfg.degree >= 2;
  const SlabBuffers need = slab_buffers(slabs, layout, out_slice, filtered ? pad : 0);
  Device dwin[2], dpad[2], dout[2];
  for (int k = 0; k < 2; ++k) {
    if (need.win) dwin[k].allocate(need.win);
    if (need.padded) dpad[k].allocate(need.padded);
    if (need.out) dout[k].allocate(need.out);
  }
  st.device_bytes = 2 * need.floats() * sizeof(float);
  Pinned cval_slice;  // the source of Constant slices outside the array
  cval_slice.allocate(in_slice);
  std::fill(cval_slice.ptr, cval_slice.ptr + in_slice, static_cast<float>(cfg.cval));
  Stream up, comp, down;
  Event up_done[2], comp_done[2], down_done[2];
  const std::size_t slice_bytes = in_slice * sizeof(float);
  for (std::size_t i = 0; i < slabs.size(); ++i) {
    const ResampleSlab& r = slabs[i];
    const int k = static_cast<int>(i % 2);
    ++st.slabs;
    fill_outside(r, out_slice, out, cfg.cval);
    if (r.a < r.b) {
      // The window: runs of consecutive source slices, each one copy.
      if (i >= 2) check(cudaStreamWaitEvent(up.s, comp_done[k].e, 0), "ordering an upload");
      for (std::size_t j = 0; j < r.wn;) {
        const long src = interp_index(r.lo + static_cast<long>(j), n, mode);
        std::size_t run = 1;
        if (src >= 0)
          while (j + run < r.wn && interp_index(r.lo + static_cast<long>(j + run), n, mode) ==
                                       src + static_cast<long>(run))
            ++run;
        const float* from =
            src < 0 ? cval_slice.ptr : in + static_cast<std::size_t>(src) * in_slice;
        check(cudaMemcpyAsync(dwin[k].ptr + j * in_slice, from, run * slice_bytes,
                              cudaMemcpyHostToDevice, up.s),
              "out-of-core resampling: uploading a window");
        j += run;
      }
      st.bytes_up += r.wn * slice_bytes;
      check(cudaEventRecord(up_done[k].e, up.s), "recording an upload");
      check(cudaStreamWaitEvent(comp.s, up_done[k].e, 0), "ordering the kernels");
      if (i >= 2) check(cudaStreamWaitEvent(comp.s, down_done[k].e, 0), "ordering the kernels");
      const nd::Stream cs = reinterpret_cast<nd::Stream>(comp.s);
      nd::Spline sp = window_spline(dwin[k].ptr, dpad[k].ptr, layout, r, cfg, filtered, pad, cs);
      const std::size_t count = (r.b - r.a) * out_slice;
      sample(sp, r, dout[k].ptr, cs);
      check(cudaEventRecord(comp_done[k].e, comp.s), "recording the kernels");
      check(cudaStreamWaitEvent(down.s, comp_done[k].e, 0), "ordering a download");
      check(cudaMemcpyAsync(out + r.a * out_slice, dout[k].ptr, count * sizeof(float),
                            cudaMemcpyDeviceToHost, down.s),
            "out-of-core resampling: downloading a slab");
      check(cudaEventRecord(down_done[k].e, down.s), "recording a download");
      st.bytes_down += count * sizeof(float);
    }
    // At most two slabs in flight: wait for the previous one's download, then report it.
    if (i >= 1) {
      const ResampleSlab& prev = slabs[i - 1];
      if (prev.a < prev.b)
        check(cudaEventSynchronize(down_done[1 - k].e), "out-of-core resampling: a download");
      if (cfg.progress) cfg.progress(prev.o1, nout);
    }
  }
  check(cudaStreamSynchronize(down.s), "out-of-core resampling: the last download");
  check(cudaStreamSynchronize(comp.s), "out-of-core resampling: the last kernels");
  if (cfg.progress && !slabs.empty()) cfg.progress(nout, nout);
}

// The pageable path: one buffer set; each slab's window is gathered from the interpolant's
// extension into pinned staging by host threads (through cfg.read_input where set), goes up,
// is padded, prefiltered and evaluated, comes down into pinned staging and is scattered into
// `out`, one step after the other.
void run_staged(const float* in, const Layout& layout, const std::vector<ResampleSlab>& slabs,
                std::size_t out_slice, std::size_t nout, const SlabSampler& sample, float* out,
                const OutOfCoreResampleConfig& cfg, std::size_t pad, OutOfCoreStats& st) {
  const long n = static_cast<long>(layout.dims[0]);
  const std::size_t in_slice = layout.points() / layout.dims[0];
  const bool filtered = cfg.prefilter && cfg.degree >= 2;
  const SlabBuffers need = slab_buffers(slabs, layout, out_slice, filtered ? pad : 0);
  const unsigned threads = std::min(16u, std::max(1u, std::thread::hardware_concurrency()));
  Pinned win_stage, out_stage;
  Device dwin, dpad, dout;
  if (need.win) {
    win_stage.allocate(need.win);
    dwin.allocate(need.win);
  }
  if (need.padded) dpad.allocate(need.padded);
  if (need.out) {
    out_stage.allocate(need.out);
    dout.allocate(need.out);
  }
  st.device_bytes = need.floats() * sizeof(float);
  const std::vector<float> cval_slice(in_slice, static_cast<float>(cfg.cval));
  for (const ResampleSlab& r : slabs) {
    ++st.slabs;
    fill_outside(r, out_slice, out, cfg.cval);
    if (r.a < r.b) {
      copy_slices(
          win_stage.ptr, r.wn, in_slice,
          [&](std::size_t j) -> const float* {
            const long src = interp_index(r.lo + static_cast<long>(j), n, cfg.mode);
            return src < 0 ? cval_slice.data() : in + static_cast<std::size_t>(src) * in_slice;
          },
          threads, &cfg.read_input);
      check(cudaMemcpy(dwin.ptr, win_stage.ptr, r.wn * in_slice * sizeof(float),
                       cudaMemcpyHostToDevice),
            "out-of-core resampling: uploading a window");
      st.bytes_up += r.wn * in_slice * sizeof(float);
      nd::Spline sp = window_spline(dwin.ptr, dpad.ptr, layout, r, cfg, filtered, pad, 0);
      const std::size_t count = (r.b - r.a) * out_slice;
      sample(sp, r, dout.ptr, 0);
      check(cudaMemcpy(out_stage.ptr, dout.ptr, count * sizeof(float), cudaMemcpyDeviceToHost),
            "out-of-core resampling: downloading a slab");
      copy_slices(
          out + r.a * out_slice, r.b - r.a, out_slice,
          [&](std::size_t j) { return out_stage.ptr + j * out_slice; }, threads);
      st.bytes_down += count * sizeof(float);
    }
    if (cfg.progress) cfg.progress(r.o1, nout);
  }
  synchronize("out-of-core resampling");
}

// The slabs on the page-locked path (cfg.host_pinned) or the staged one.
void run_slabs(const float* in, const Layout& layout, const std::vector<ResampleSlab>& slabs,
               std::size_t out_slice, std::size_t nout, const SlabSampler& sample, float* out,
               const OutOfCoreResampleConfig& cfg, std::size_t pad, OutOfCoreStats& st) {
  if (cfg.host_pinned)
    run_pinned(in, layout, slabs, out_slice, nout, sample, out, cfg, pad, st);
  else
    run_staged(in, layout, slabs, out_slice, nout, sample, out, cfg, pad, st);
}

std::size_t device_budget(const OutOfCoreResampleConfig& cfg, const char* what) {
  if (cfg.device_budget) return cfg.device_budget;
  std::size_t free_bytes = 0, total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), (std::string(what) + ": free memory").c_str());
  return free_bytes / 10 * 8;
}

}  // namespace

OutOfCoreStats resample_out_of_core(const float* in, const Layout& layout,
                                    const std::vector<std::vector<double>>& tables, float* out,
                                    const OutOfCoreResampleConfig& cfg) {
  layout.check("out-of-core resampling");
  check_degree(cfg.degree, 0, kMaxDegree);
  require("out-of-core resampling");
  if (layout.channels != 1)
    throw Error("out-of-core resampling: arrays with channels are not supported (got " +
                std::to_string(layout.channels) + ")");
  const std::size_t rank = layout.rank();
  if (tables.size() != rank)
    throw Error("out-of-core resampling: " + std::to_string(tables.size()) +
                " position tables for a " + std::to_string(rank) + "-D array");
  for (const auto& t : tables)
    if (t.empty()) throw Error("out-of-core resampling: an output axis is empty");
  for (const auto& t : tables)
    for (double x : t)
      if (!(std::fabs(x) < 1e12))
        throw Error("out-of-core resampling: a position is non-finite or huge");
  const auto t0 = std::chrono::steady_clock::now();
  OutOfCoreStats st;
  const long n = static_cast<long>(layout.dims[0]);
  const std::size_t in_slice = layout.points() / layout.dims[0];
  std::size_t out_slice = 1;
  for (std::size_t d = 1; d < rank; ++d) out_slice *= tables[d].size();
  const std::size_t nout = tables[0].size();
  const Boundary mode = cfg.mode;
  // Slab-axis positions: folded for Wrap; Constant: outside [0, n-1] is cval (whole slices).
  std::vector<double> z = tables[0];
  std::vector<bool> outside(nout, false);
  for (std::size_t i = 0; i < nout; ++i) {
    if (i && z[i] < tables[0][i - 1])
      throw Error("out-of-core resampling: the positions along axis 0 must not decrease");
    if (mode == Boundary::Wrap) z[i] = wrap_position(z[i], n);
    if (mode == Boundary::Constant && !(z[i] >= 0 && z[i] <= static_cast<double>(n - 1)))
      outside[i] = true;
  }
  const bool filtered = cfg.prefilter && cfg.degree >= 2;
  const std::size_t h =
      filtered ? prefilter_halo(cfg.degree, rank, std::numeric_limits<float>::epsilon() / 2) : 0;
  const std::size_t pad = filtered ? interpolation_pad(mode, cfg.degree) : 0;
  const long taps = cfg.degree / 2 + 1;
  st.halo = h;
  // Output slab size from the budget: a window of about (slab * max zoom + margins) input
  // slices, its padded copy, and the output slab.
  const std::size_t budget = device_budget(cfg, "out-of-core resampling");
  std::size_t padded_slice = 1;
  for (std::size_t d = 1; d < rank; ++d) padded_slice *= layout.dims[d] + 2 * pad;
  const double per_in = static_cast<double>((in_slice + padded_slice) * sizeof(float));
  const double step =
      nout > 1 ? std::max(1.0, (z.back() - z.front()) / static_cast<double>(nout - 1)) : 1.0;
  const double margin = static_cast<double>(2 * (taps + h + pad + 2));
  // slab output slices need about slab * step + margin input slices.
  const double per_out = static_cast<double>(out_slice * sizeof(float)) + step * per_in;
  const double avail = static_cast<double>(budget) - margin * per_in;
  if (avail < per_out)
    throw Error("out-of-core resampling: a device budget of " + std::to_string(budget) +
                " bytes cannot hold one output slice with its input window (" +
                std::to_string(static_cast<std::size_t>(per_out + margin * per_in)) +
                " bytes); raise the budget");
  std::size_t slab = std::min<std::size_t>(nout, static_cast<std::size_t>(avail / per_out));
  slab = std::max<std::size_t>(
      1, std::min<std::size_t>(slab, (std::size_t{256} << 20) / (out_slice * sizeof(float)) + 1));
  if (cfg.host_pinned) slab = std::max<std::size_t>(1, slab / 2);  // two buffer sets
  if (cfg.slab) slab = std::min(slab, cfg.slab);
  st.slab_slices = slab;
  const std::vector<ResampleSlab> slabs = plan_resample_slabs(z, outside, slab, taps, h);
  // The positions of slab r: axis 0's (folded) minus the window's first slice.
  const SlabSampler sample = [&](nd::Spline& sp, const ResampleSlab& r, float* dout, nd::Stream s) {
    std::vector<std::vector<double>> local = tables;
    local[0].assign(z.begin() + static_cast<long>(r.a), z.begin() + static_cast<long>(r.b));
    for (double& x : local[0]) x -= static_cast<double>(r.lo);
    nd::sample_tables(sp, local, dout, s);
  };
  run_slabs(in, layout, slabs, out_slice, nout, sample, out, cfg, pad, st);
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return st;
}

OutOfCoreStats affine_out_of_core(const float* in, const Layout& layout,
                                  const std::vector<double>& matrix,
                                  const std::vector<double>& offset,
                                  const std::vector<std::size_t>& out_dims, float* out,
                                  const OutOfCoreResampleConfig& cfg) {
  const char* what = "out-of-core affine resampling";
  layout.check(what);
  check_degree(cfg.degree, 0, kMaxDegree);
  if (layout.channels != 1)
    throw Error(std::string(what) + ": arrays with channels are not supported (got " +
                std::to_string(layout.channels) + ")");
  const std::size_t rank = layout.rank();
  if (rank < 1 || rank > 3)
    throw Error(std::string(what) + ": the array must have 1, 2 or 3 dimensions, not " +
                std::to_string(rank));
  if (out_dims.size() != rank || matrix.size() != rank * rank || offset.size() != rank)
    throw Error(std::string(what) + ": a " + std::to_string(rank) + "-D array needs a " +
                std::to_string(rank) + " x " + std::to_string(rank) + " matrix, " +
                std::to_string(rank) + " offsets and " + std::to_string(rank) + " output extents");
  for (std::size_t d : out_dims)
    if (d == 0) throw Error(std::string(what) + ": an output axis is empty");
  for (double v : matrix)
    if (!(std::fabs(v) < 1e12)) throw Error(std::string(what) + ": a matrix entry is non-finite");
  for (double v : offset)
    if (!(std::fabs(v) < 1e12)) throw Error(std::string(what) + ": an offset is non-finite");
  require(what);
  const auto t0 = std::chrono::steady_clock::now();
  OutOfCoreStats st;
  const long n = static_cast<long>(layout.dims[0]);
  const std::size_t in_slice = layout.points() / layout.dims[0];
  std::size_t out_slice = 1;
  for (std::size_t d = 1; d < rank; ++d) out_slice *= out_dims[d];
  const std::size_t nout = out_dims[0];
  const Boundary mode = cfg.mode;
  const bool filtered = cfg.prefilter && cfg.degree >= 2;
  const std::size_t h =
      filtered ? prefilter_halo(cfg.degree, rank, std::numeric_limits<float>::epsilon() / 2) : 0;
  const std::size_t pad = filtered ? interpolation_pad(mode, cfg.degree) : 0;
  const long taps = cfg.degree / 2 + 1;
  st.halo = h;
  // Positions that the kernel folds with the array's extent before moving them into the window
  // (Spline::window_extent): a slab whose positions leave the array needs the whole axis.
  const bool folds = mode == Boundary::Wrap ||
                     (cfg.degree == 0 && (mode == Boundary::Mirror || mode == Boundary::Reflect));
  const bool constant = mode == Boundary::Constant || mode == Boundary::GridConstant;
  const std::size_t budget = device_budget(cfg, what);
  const std::size_t sets = cfg.host_pinned ? 2 : 1;
  std::size_t padded_slice = 1;
  for (std::size_t d = 1; d < rank; ++d) padded_slice *= layout.dims[d] + 2 * pad;

  // Slab [o0, o1): an affine map takes its extremes over a box at the box's corners, so the
  // axis-0 positions of the slab lie in [zmin, zmax] of its 2^rank corners. Constant and
  // GridConstant slabs whose positions all lie beyond the array (and, for GridConstant, the
  // support of its padded spline) are cval: a = b, no window.
  auto slab_of = [&](std::size_t o0, std::size_t o1) {
    ResampleSlab r{o0, o1, o0, o1, 0, 0};
    double zmin = HUGE_VAL, zmax = -HUGE_VAL;
    for (unsigned c = 0; c < (1u << rank); ++c) {
      double z = 0.0;
      for (std::size_t j = 0; j < rank; ++j) {
        const bool high = (c >> j) & 1u;
        const double o = j == 0 ? static_cast<double>(high ? o1 - 1 : o0)
                                : static_cast<double>(high ? out_dims[j] - 1 : 0);
        z += o * matrix[j];
      }
      z += offset[0];
      zmin = std::min(zmin, z);
      zmax = std::max(zmax, z);
    }
    const double last = static_cast<double>(n - 1);
    const double reach =
        mode == Boundary::Constant ? 0.0 : static_cast<double>(taps + static_cast<long>(pad) + 1);
    if (constant && (zmax < -reach || zmin > last + reach)) {
      r.a = r.b = o0;
      return r;
    }
    if (folds && !(zmin >= 0 && zmax <= last)) {
      zmin = 0;
      zmax = last;
    }
    // A rounding margin of one slice beyond the taps and the halo on each side.
    r.lo = static_cast<long>(std::floor(zmin)) - taps - static_cast<long>(h) - 1;
    const long hi = static_cast<long>(std::ceil(zmax)) + taps + static_cast<long>(h) + 2;
    r.wn = static_cast<std::size_t>(hi - r.lo);
    return r;
  };
  // Device bytes for the slabs planned so far plus r (buffers sized for the largest).
  std::size_t max_wn = 0, max_out = 0;
  auto bytes_with = [&](const ResampleSlab& r) {
    const double wn = static_cast<double>(std::max(max_wn, r.wn));
    double floats = wn * static_cast<double>(in_slice) +
                    static_cast<double>(std::max(max_out, (r.b - r.a) * out_slice));
    if (filtered && pad && wn > 0)
      floats += (wn + 2.0 * static_cast<double>(pad)) * static_cast<double>(padded_slice);
    return static_cast<double>(sets) * floats * sizeof(float);
  };
  // At most 256 MiB of output per slab (as the separable path), and cfg.slab; each slab the
  // longest run from o0 that fits (the window grows with the slab: a binary search).
  std::size_t cap =
      std::max<std::size_t>(1, (std::size_t{256} << 20) / (out_slice * sizeof(float)) + 1);
  if (cfg.slab) cap = std::min(cap, cfg.slab);
  std::vector<ResampleSlab> slabs;
  for (std::size_t o0 = 0; o0 < nout;) {
    const ResampleSlab one = slab_of(o0, o0 + 1);
    if (bytes_with(one) > static_cast<double>(budget))
      throw Error(std::string(what) + ": output slice " + std::to_string(o0) +
                  " needs input slices " + std::to_string(one.lo) + " to " +
                  std::to_string(one.lo + static_cast<long>(one.wn) - 1) + " along axis 0 (" +
                  std::to_string(one.wn) + " slices of " +
                  std::to_string(in_slice * sizeof(float)) + " bytes with the taps and the halo" +
                  (sets == 2 ? ", two buffer sets" : "") + "), more than the device budget of " +
                  std::to_string(budget) +
                  " bytes; raise the budget, or rotate in the plane of the last two axes (a "
                  "transform that moves along axis 0 needs many input slices per output slice)");
    std::size_t lo_n = 1, hi_n = std::min(cap, nout - o0);
    while (lo_n < hi_n) {
      const std::size_t mid = lo_n + (hi_n - lo_n + 1) / 2;
      if (bytes_with(slab_of(o0, o0 + mid)) <= static_cast<double>(budget))
        lo_n = mid;
      else
        hi_n = mid - 1;
    }
    const ResampleSlab r = slab_of(o0, o0 + lo_n);
    max_wn = std::max(max_wn, r.wn);
    max_out = std::max(max_out, (r.b - r.a) * out_slice);
    st.slab_slices = std::max(st.slab_slices, lo_n);
    slabs.push_back(r);
    o0 += lo_n;
  }
  // The positions of slab r: the whole output's, from output slice r.a on, moved into the
  // window by the kernel (Spline::window_first; folds and Constant's test on the array's axis).
  const SlabSampler sample = [&](nd::Spline& sp, const ResampleSlab& r, float* dout, nd::Stream s) {
    sp.window_first = static_cast<double>(r.lo);
    sp.window_extent = n;
    std::vector<std::size_t> slab_dims = out_dims;
    slab_dims[0] = r.b - r.a;
    nd::sample_affine(sp, matrix, offset, slab_dims, dout, s, r.a);
  };
  run_slabs(in, layout, slabs, out_slice, nout, sample, out, cfg, pad, st);
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return st;
}

}  // namespace sv::cuda
