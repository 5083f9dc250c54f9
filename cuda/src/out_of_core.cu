// The out-of-core CUDA prefilter (cuda_out_of_core.h).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "check.cuh"
#include "splineview/bspline.h"
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
// `threads` threads (contiguous ranges of slices, or of one slice's bytes when there is one).
template <class Src>
void copy_slices(float* dst, std::size_t count, std::size_t slice, const Src& src,
                 unsigned threads) {
  const std::size_t total = count * slice;
  const unsigned t = static_cast<unsigned>(
      std::max<std::size_t>(1, std::min<std::size_t>(threads, total / (std::size_t{1} << 20))));
  auto work = [&](std::size_t lo, std::size_t hi) {  // float ranges of the destination
    while (lo < hi) {
      const std::size_t j = lo / slice, off = lo % slice;
      const std::size_t n = std::min(hi - lo, slice - off);
      std::memcpy(dst + lo, src(j) + off, n * sizeof(float));
      lo += n;
    }
  };
  if (t <= 1) {
    work(0, total);
    return;
  }
  std::vector<std::thread> pool;
  for (unsigned k = 0; k < t; ++k) pool.emplace_back(work, total * k / t, total * (k + 1) / t);
  for (auto& th : pool) th.join();
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

}  // namespace sv::cuda
