// splinebench-cuda out-of-core: the out-of-core prefilter of a host volume of 512 x 512 float
// slices, of a size given in GiB (larger than the device when asked), against the host-device
// transfer floor measured in the same run: pinned uploads, downloads, both at once on two
// streams, and the host's own copy bandwidth (the staging copies). Checks three slabs' worth of
// slices (start, middle, end) against the in-memory CUDA prefilter of a window twice the halo
// wider, cut from a copy of the original data.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <thread>
#include <vector>

#include "bench_cuda.h"
#include "splineview/cuda_out_of_core.h"
#include "splineview/cuda_prefilter.h"
#include "splineview/halo.h"
#include "splineview/sampler.h"
#include "splineview/transform.h"

namespace cbench {
namespace {

void ck(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Bandwidths in GB/s of 1 GiB transfers: up, down, both at once (sum of the two directions).
struct Floor {
  double up = 0, down = 0, duplex = 0, host_copy = 0, pageable_up = 0, pageable_down = 0;
};

Floor measure_floor(unsigned threads) {
  const std::size_t bytes = std::size_t{1} << 30;
  void *h1 = nullptr, *h2 = nullptr, *d1 = nullptr, *d2 = nullptr;
  ck(cudaMallocHost(&h1, bytes), "pinned");
  ck(cudaMallocHost(&h2, bytes), "pinned");
  ck(cudaMalloc(&d1, bytes), "device");
  ck(cudaMalloc(&d2, bytes), "device");
  std::memset(h1, 1, bytes);
  std::memset(h2, 2, bytes);
  cudaStream_t s1, s2;
  ck(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), "stream");
  ck(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking), "stream");
  auto best = [&](auto&& fn) {
    double b = 1e30;
    for (int r = 0; r < 5; ++r) {
      const double t = now();
      fn();
      b = std::min(b, now() - t);
    }
    return b;
  };
  Floor f;
  const double gb = static_cast<double>(bytes) / 1e9;
  f.up = gb / best([&] {
           ck(cudaMemcpyAsync(d1, h1, bytes, cudaMemcpyHostToDevice, s1), "up");
           ck(cudaStreamSynchronize(s1), "sync");
         });
  f.down = gb / best([&] {
             ck(cudaMemcpyAsync(h2, d2, bytes, cudaMemcpyDeviceToHost, s2), "down");
             ck(cudaStreamSynchronize(s2), "sync");
           });
  f.duplex = 2 * gb / best([&] {
               ck(cudaMemcpyAsync(d1, h1, bytes, cudaMemcpyHostToDevice, s1), "up");
               ck(cudaMemcpyAsync(h2, d2, bytes, cudaMemcpyDeviceToHost, s2), "down");
               ck(cudaStreamSynchronize(s1), "sync");
               ck(cudaStreamSynchronize(s2), "sync");
             });
  std::vector<char> a(bytes, 3), b(bytes);
  f.pageable_up =
      gb / best([&] { ck(cudaMemcpy(d1, a.data(), bytes, cudaMemcpyHostToDevice), "up"); });
  f.pageable_down =
      gb / best([&] { ck(cudaMemcpy(b.data(), d2, bytes, cudaMemcpyDeviceToHost), "down"); });
  f.host_copy = gb / best([&] {
                  std::vector<std::thread> pool;
                  for (unsigned k = 0; k < threads; ++k)
                    pool.emplace_back([&, k] {
                      const std::size_t lo = bytes * k / threads, hi = bytes * (k + 1) / threads;
                      std::memcpy(b.data() + lo, a.data() + lo, hi - lo);
                    });
                  for (auto& t : pool) t.join();
                });
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
  cudaFreeHost(h1);
  cudaFreeHost(h2);
  cudaFree(d1);
  cudaFree(d2);
  return f;
}

// Out-of-core rotation (cubic, mirror) by scipy.ndimage.rotate's matrix in the plane opt.axes,
// the output the input's extents: output slices checked against the CPU's affine transform of
// the same positions (sv::affine_transform on a window of input slices that holds them).
Json run_rotate(const OutOfCoreOptions& opt, std::vector<float>& vol, std::size_t nz,
                std::size_t ny, std::size_t nx, double gbytes, const Floor& fl,
                const cudaDeviceProp& prop) {
  const std::size_t slice = ny * nx;
  const std::size_t a = opt.axes == "1,2" ? 1 : 0, b = opt.axes == "0,1" ? 1 : 2;
  const std::vector<std::size_t> dims{nz, ny, nx};
  const double c = sv::cosdg(opt.rotate), s = sv::sindg(opt.rotate);
  std::vector<double> m(9, 0.0), off(3, 0.0);
  m[0] = m[4] = m[8] = 1.0;
  m[a * 3 + a] = c;
  m[a * 3 + b] = s;
  m[b * 3 + a] = -s;
  m[b * 3 + b] = c;
  const double ca = (static_cast<double>(dims[a]) - 1) / 2,
               cb = (static_cast<double>(dims[b]) - 1) / 2;
  off[a] = ca - (c * ca + s * cb);
  off[b] = cb - (-s * ca + c * cb);
  std::vector<float> out(vol.size());
  sv::cuda::OutOfCoreResampleConfig rc;
  rc.degree = 3;
  rc.mode = sv::Boundary::Mirror;
  rc.device_budget = opt.budget_mib * (std::size_t{1} << 20);
  sv::cuda::OutOfCoreStats st;
  double lock_s = 0;
  const sv::cuda::Layout layout{dims, 1};
  if (opt.pinned) {
    const sv::cuda::HostRegistration lock_in(vol.data(), vol.size() * sizeof(float));
    const sv::cuda::HostRegistration lock_out(out.data(), out.size() * sizeof(float));
    lock_s = lock_in.seconds() + lock_out.seconds();
    rc.host_pinned = true;
    st = sv::cuda::affine_out_of_core(vol.data(), layout, m, off, dims, out.data(), rc);
  } else {
    st = sv::cuda::affine_out_of_core(vol.data(), layout, m, off, dims, out.data(), rc);
  }
  // Check: output slices 0, nz / 2 and nz - 1 against the CPU in double, from the input slices
  // their positions reach (plus 40 on each side: the halo's tail is far below float there).
  double worst = 0;
  for (std::size_t z : {std::size_t{0}, nz / 2, nz - 1}) {
    double zmin = HUGE_VAL, zmax = -HUGE_VAL;
    for (double oy : {0.0, static_cast<double>(ny - 1)})
      for (double ox : {0.0, static_cast<double>(nx - 1)}) {
        const double p = m[0] * static_cast<double>(z) + m[1] * oy + m[2] * ox + off[0];
        zmin = std::min(zmin, p);
        zmax = std::max(zmax, p);
      }
    const long lo = std::max(0L, static_cast<long>(std::floor(zmin)) - 40);
    const long hi = std::min(static_cast<long>(nz), static_cast<long>(std::ceil(zmax)) + 41);
    // Where the window stops inside the array its own mirror ends differ from the whole
    // array's by the prefilter's tail over 40 slices (0.268^40): far below float.
    sv::ArrayD win({static_cast<std::size_t>(hi - lo), ny, nx}, 1);
    for (std::size_t i = 0; i < win.size(); ++i)
      win[i] = vol[static_cast<std::size_t>(lo) * slice + i];
    // The slice as a one-slice output: output z's column of the matrix moves into the offset,
    // and axis 0 into the window.
    std::vector<double> o2 = off;
    for (std::size_t d = 0; d < 3; ++d) o2[d] += m[d * 3] * static_cast<double>(z);
    o2[0] -= static_cast<double>(lo);
    sv::SamplerOptions so;
    so.degree = 3;
    so.boundary = sv::Boundary::Mirror;
    const sv::ArrayD want = sv::affine_transform(win, m, o2, {1, ny, nx}, so, true);
    for (std::size_t i = 0; i < slice; ++i)
      worst = std::max(worst, std::fabs(static_cast<double>(out[z * slice + i]) - want[i]));
  }
  const double gb = static_cast<double>(out.size() * sizeof(float)) / 1e9;
  const double floor_s = gbytes / fl.up + gb / fl.down;
  Json r;
  r["gpu"] = prop.name;
  r["rotate"] = opt.rotate;
  r["axes"] = opt.axes;
  r["in_gbytes"] = gbytes;
  r["out_gbytes"] = gb;
  r["slabs"] = st.slabs;
  r["slab_slices"] = st.slab_slices;
  r["halo"] = st.halo;
  r["seconds"] = st.seconds;
  r["floor_pinned_s"] = floor_s;
  r["bytes_up"] = st.bytes_up;
  r["device_bytes"] = st.device_bytes;
  r["max_diff_vs_cpu"] = worst;
  r["host_pinned"] = opt.pinned;
  r["lock_seconds"] = lock_s;
  std::printf(
      "| GPU | rotate | axes | host | GB | slabs x slices | up GB | time s | pinned floor s | "
      "time / floor | max diff vs cpu |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::printf("| %s | %.1f | (%s) | %s | %.1f | %zu x %zu | %.1f | %.2f | %.2f | %.2f | %.1e |\n",
              prop.name, opt.rotate, opt.axes.c_str(), opt.pinned ? "page-locked" : "pageable",
              gbytes, st.slabs, st.slab_slices, static_cast<double>(st.bytes_up) / 1e9, st.seconds,
              floor_s, st.seconds / floor_s, worst);
  return r;
}

}  // namespace

Json run_out_of_core(const OutOfCoreOptions& opt) {
  const std::size_t nx = 512, ny = 512, slice = nx * ny;
  const std::size_t nz = std::max<std::size_t>(
      64, static_cast<std::size_t>(opt.gib * 1073741824.0 / (slice * sizeof(float))));
  const double gbytes = static_cast<double>(nz * slice * sizeof(float)) / 1e9;
  const unsigned threads = std::min(8u, std::max(1u, std::thread::hardware_concurrency()));
  std::size_t free_b = 0, total_b = 0;
  ck(cudaMemGetInfo(&free_b, &total_b), "memory info");
  cudaDeviceProp prop{};
  ck(cudaGetDeviceProperties(&prop, 0), "properties");
  std::fprintf(stderr, "out-of-core: %zu x %zu x %zu float (%.1f GB) on %s (%.1f GB)\n", nz, ny, nx,
               gbytes, prop.name, static_cast<double>(total_b) / 1e9);
  const Floor fl = measure_floor(threads);

  // The volume: smooth-ish deterministic noise, filled on every thread.
  std::vector<float> vol(nz * slice);
  {
    std::vector<std::thread> pool;
    const unsigned t = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned k = 0; k < t; ++k)
      pool.emplace_back([&, k] {
        for (std::size_t i = vol.size() * k / t; i < vol.size() * (k + 1) / t; ++i) {
          std::uint64_t x = i * 0x9E3779B97F4A7C15ull;
          x ^= x >> 29;
          x *= 0xBF58476D1CE4E5B9ull;
          x ^= x >> 32;
          vol[i] = static_cast<float>(static_cast<double>(x & 0xFFFFFF) / 8388608.0 - 1.0);
        }
      });
    for (auto& th : pool) th.join();
  }
  if (opt.rotate != 0) return run_rotate(opt, vol, nz, ny, nx, gbytes, fl, prop);
  if (opt.zoom > 0) {
    // Out-of-core zoom along axis 0 (cubic, mirror), y and x kept: output slices checked
    // against the CPU zoom of the same slices' 1-D lines.
    const std::size_t nz_out =
        static_cast<std::size_t>(std::lround(static_cast<double>(nz) * opt.zoom));
    std::vector<std::vector<double>> tables{sv::zoom_positions(nz, nz_out, false),
                                            sv::zoom_positions(ny, ny, false),
                                            sv::zoom_positions(nx, nx, false)};
    std::vector<float> out(nz_out * slice);
    sv::cuda::OutOfCoreResampleConfig rc;
    rc.degree = 3;
    rc.mode = sv::Boundary::Mirror;
    rc.device_budget = opt.budget_mib * (std::size_t{1} << 20);
    sv::cuda::OutOfCoreStats zs;
    double lock_s = 0;
    if (opt.pinned) {
      // Page-locked input and output (the registration is timed apart, as for the prefilter).
      const sv::cuda::HostRegistration lock_in(vol.data(), vol.size() * sizeof(float));
      const sv::cuda::HostRegistration lock_out(out.data(), out.size() * sizeof(float));
      lock_s = lock_in.seconds() + lock_out.seconds();
      rc.host_pinned = true;
      zs = sv::cuda::resample_out_of_core(vol.data(), sv::cuda::Layout{{nz, ny, nx}, 1}, tables,
                                          out.data(), rc);
    } else {
      zs = sv::cuda::resample_out_of_core(vol.data(), sv::cuda::Layout{{nz, ny, nx}, 1}, tables,
                                          out.data(), rc);
    }
    // Check: a few (y, x) lines along z against the CPU zoom in double.
    double worst = 0;
    for (std::size_t line : {std::size_t{0}, slice / 3, slice - 1}) {
      sv::ArrayD col({nz}, 1);
      for (std::size_t k = 0; k < nz; ++k) col[k] = vol[k * slice + line];
      sv::SamplerOptions so;
      so.degree = 3;
      so.boundary = sv::Boundary::Mirror;
      const sv::ArrayD want = sv::zoom(col, {nz_out}, false, so, true);
      for (std::size_t k = 0; k < nz_out; ++k)
        worst = std::max(worst, std::fabs(static_cast<double>(out[k * slice + line]) - want[k]));
    }
    const double gb_out = static_cast<double>(out.size() * sizeof(float)) / 1e9;
    const double floor_s = gbytes / fl.up + gb_out / fl.down;
    Json r;
    r["gpu"] = prop.name;
    r["zoom"] = opt.zoom;
    r["in_gbytes"] = gbytes;
    r["out_gbytes"] = gb_out;
    r["slabs"] = zs.slabs;
    r["halo"] = zs.halo;
    r["seconds"] = zs.seconds;
    r["floor_pinned_s"] = floor_s;
    r["bytes_up"] = zs.bytes_up;
    r["max_diff_vs_cpu"] = worst;
    r["host_pinned"] = opt.pinned;
    r["lock_seconds"] = lock_s;
    std::printf(
        "| GPU | zoom | host | in GB | out GB | slabs | time s | pinned floor s | time / floor | "
        "max diff vs cpu |\n|---|---|---|---|---|---|---|---|---|---|\n");
    std::printf("| %s | %.2f | %s | %.1f | %.1f | %zu | %.2f | %.2f | %.2f | %.1e |\n", prop.name,
                opt.zoom, opt.pinned ? "page-locked" : "pageable", gbytes, gb_out, zs.slabs,
                zs.seconds, floor_s, zs.seconds / floor_s, worst);
    return r;
  }
  sv::cuda::OutOfCoreConfig cfg;
  cfg.degree = 3;
  cfg.boundary = sv::Boundary::Mirror;
  cfg.device_budget = opt.budget_mib * (std::size_t{1} << 20);
  const std::size_t h = sv::prefilter_halo(3, 3, std::numeric_limits<float>::epsilon() / 2);
  const sv::cuda::Layout layout{{nz, ny, nx}, 1};
  // Originals of the checked windows (slices [a - 2h, b + 2h), extended), kept before the run.
  const std::size_t span = 8;
  const std::vector<std::size_t> starts{0, nz / 2 - span / 2, nz - span};
  std::vector<std::vector<float>> windows;
  for (std::size_t a : starts) {
    std::vector<float> w((span + 4 * h) * slice);
    for (std::size_t j = 0; j < span + 4 * h; ++j) {
      const long k = static_cast<long>(a + j) - static_cast<long>(2 * h);
      const long z = sv::extend_index(k, static_cast<long>(nz), sv::Boundary::Mirror);
      std::memcpy(w.data() + j * slice, vol.data() + static_cast<std::size_t>(z) * slice,
                  slice * sizeof(float));
    }
    windows.push_back(std::move(w));
  }
  double lock_seconds = 0;
  sv::cuda::OutOfCoreStats st;
  if (opt.pinned) {
    const sv::cuda::HostRegistration lock(vol.data(), vol.size() * sizeof(float));
    lock_seconds = lock.seconds();
    cfg.host_pinned = true;
    st = sv::cuda::prefilter_out_of_core(vol.data(), layout, cfg);
  } else {
    st = sv::cuda::prefilter_out_of_core(vol.data(), layout, cfg);
  }
  // Check: each window filtered in memory (mirror starts at its ends along z).
  double worst = 0;
  for (std::size_t c = 0; c < starts.size(); ++c) {
    std::vector<float>& w = windows[c];
    sv::cuda::DeviceBuffer d(w.size());
    d.upload(w.data(), w.size());
    sv::cuda::PrefilterConfig pc;
    pc.degree = 3;
    pc.boundary = sv::Boundary::Mirror;
    sv::cuda::prefilter(d.data(), sv::cuda::Layout{{span + 4 * h, ny, nx}, 1}, pc);
    d.download(w.data(), w.size());
    for (std::size_t j = 0; j < span; ++j)
      for (std::size_t i = 0; i < slice; ++i)
        worst = std::max(worst, static_cast<double>(std::fabs(w[(j + 2 * h) * slice + i] -
                                                              vol[(starts[c] + j) * slice + i])));
  }
  const double floor_seq = gbytes / fl.up + gbytes / fl.down;
  const double floor_duplex = 2 * gbytes / fl.duplex;
  Json r;
  r["gpu"] = prop.name;
  r["shape"] = {nz, ny, nx};
  r["gbytes"] = gbytes;
  r["halo"] = st.halo;
  r["slabs"] = st.slabs;
  r["slab_slices"] = st.slab_slices;
  r["device_bytes"] = st.device_bytes;
  r["seconds"] = st.seconds;
  r["host_pinned"] = opt.pinned;
  r["page_lock_seconds"] = lock_seconds;
  r["gb_per_s"] = gbytes / st.seconds;
  r["floor_up_gbs"] = fl.up;
  r["floor_down_gbs"] = fl.down;
  r["floor_duplex_gbs"] = fl.duplex;
  r["host_copy_gbs"] = fl.host_copy;
  r["floor_sequential_s"] = floor_seq;
  r["floor_duplex_s"] = floor_duplex;
  r["max_diff_vs_in_memory_window"] = worst;
  r["bound"] = 2.0 * (sv::chunk_bound(3, 3, h) + sv::chunk_bound(3, 3, 2 * h));
  const double floor_pageable = gbytes / fl.pageable_up + gbytes / fl.pageable_down;
  r["floor_pageable_s"] = floor_pageable;
  std::printf(
      "| GPU | volume | GB | host | slabs x slices | time s | GB/s | pinned up / down / both "
      "GB/s | floor s: pinned seq / duplex, pageable | time / floor | host copy GB/s | page "
      "lock s | max diff |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::printf(
      "| %s | %zux%zux%zu | %.1f | %s | %zu x %zu | %.2f | %.1f | %.1f / %.1f / %.1f | "
      "%.2f / %.2f, %.2f | %.2f / %.2f, %.2f | %.1f | %.2f | %.1e |\n",
      prop.name, nz, ny, nx, gbytes, opt.pinned ? "page-locked" : "pageable", st.slabs,
      st.slab_slices, st.seconds, gbytes / st.seconds, fl.up, fl.down, fl.duplex, floor_seq,
      floor_duplex, floor_pageable, st.seconds / floor_seq, st.seconds / floor_duplex,
      st.seconds / floor_pageable, fl.host_copy, lock_seconds, worst);
  return r;
}

}  // namespace cbench
