// The out-of-core CUDA prefilter (cuda_out_of_core.h) against the CPU prefilter in double and
// the in-memory CUDA prefilter on the same float data: slabs forced by a capped slab size or
// device budget, every degree, the prefilter extensions of every mode, 1-3 D, 1 and 3 channels,
// last slabs shorter than the halo; the difference must stay within the halo's bound
// (chunk_bound times the data's range) plus float rounding. Skips with the reason when there is
// no device.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "require_cuda.h"
#include "splineview/cuda_memory.h"
#include "splineview/cuda_out_of_core.h"
#include "splineview/cuda_prefilter.h"
#include "splineview/error.h"
#include "splineview/halo.h"
#include "splineview/prefilter.h"
#include "splineview/sampler.h"
#include "splineview/transform.h"

namespace {

using sv::Boundary;
namespace cu = sv::cuda;

TEST(OutOfCore, SlabsEqualTheWholeArrayWithinTheBound) {
  REQUIRE_CUDA();
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const double eps = std::numeric_limits<float>::epsilon();
  int cases = 0;
  double worst = 0;  // in units of the allowed error
  for (int degree = 2; degree <= 7; ++degree) {
    for (Boundary mode : {Boundary::Reflect, Boundary::Mirror, Boundary::Periodic,
                          Boundary::Nearest, Boundary::Constant}) {
      for (std::size_t rank = 1; rank <= 3; ++rank) {
        for (std::size_t channels : {std::size_t{1}, std::size_t{3}}) {
          if (rank == 1 && channels == 3) continue;
          std::vector<std::size_t> dims;
          dims.push_back(rank == 1 ? 700 + rng() % 300 : 90 + rng() % 60);
          for (std::size_t d = 1; d < rank; ++d) dims.push_back(rank == 3 ? 20 + rng() % 20 : 150);
          const cu::Layout layout{dims, channels};
          std::vector<float> f(layout.size());
          for (float& v : f) v = u(rng);
          // Double reference.
          sv::ArrayD ref(dims, channels);
          for (std::size_t i = 0; i < f.size(); ++i) ref[i] = f[i];
          sv::PrefilterOptions po;
          po.degree = degree;
          po.boundary = mode;
          sv::prefilter(ref, po);
          // Out of core, slabs of a few sizes (the last one shorter than the halo too).
          cu::OutOfCoreConfig cfg;
          cfg.degree = degree;
          cfg.boundary = mode;
          const std::size_t h = sv::prefilter_halo(degree, rank, eps / 2);
          for (std::size_t slab : {h + 1, 2 * h + 3, std::max(h + 1, dims[0] / 3 + 1)}) {
            cfg.slab = slab;
            // Every other case with page-locked host data (no staging: straight transfers).
            cfg.host_pinned = (cases % 2) == 1;
            std::vector<float> got = f;
            cu::OutOfCoreStats st;
            if (cfg.host_pinned) {
              const cu::HostRegistration lock(got.data(), got.size() * sizeof(float));
              st = cu::prefilter_out_of_core(got.data(), layout, cfg);
            } else {
              st = cu::prefilter_out_of_core(got.data(), layout, cfg);
            }
            ASSERT_EQ(st.halo, h);
            ASSERT_GE(st.slabs, 2u);
            double err = 0, range = 2.0, maxref = 0;
            for (std::size_t i = 0; i < got.size(); ++i) {
              err = std::max(err, std::fabs(static_cast<double>(got[i]) - ref[i]));
              maxref = std::max(maxref, std::fabs(ref[i]));
            }
            // The bound plus the float prefilter's own rounding (a few ulp of the largest
            // coefficient, as the in-memory CUDA test allows).
            const double allowed = range * sv::chunk_bound(degree, rank, h) + 24 * eps * maxref;
            EXPECT_LE(err, allowed)
                << "degree " << degree << " mode " << sv::boundary_name(mode) << " rank " << rank
                << " channels " << channels << " slab " << slab;
            worst = std::max(worst, err / allowed);
            ++cases;
          }
        }
      }
    }
  }
  std::printf("out of core: %d cases, largest error %.3g of the allowed\n", cases, worst);
}

TEST(OutOfCore, BudgetDecidesTheSlabAndATinyOneIsRefused) {
  REQUIRE_CUDA();
  const cu::Layout layout{{300, 64, 64}, 1};
  std::vector<float> f(layout.size(), 1.0f);
  cu::OutOfCoreConfig cfg;
  cfg.device_budget = 4u << 20;  // 4 MiB: about 25 slices of 16 KiB per window set
  const cu::OutOfCoreStats st = cu::prefilter_out_of_core(f.data(), layout, cfg);
  EXPECT_GT(st.slabs, 3u);
  EXPECT_LE(st.device_bytes, cfg.device_budget);
  for (float v : f) ASSERT_NEAR(v, 1.0f, 1e-5f);  // a constant stays constant
  cfg.device_budget = 64u << 10;
  try {
    cu::prefilter_out_of_core(f.data(), layout, cfg);
    FAIL() << "a 64 KiB budget was accepted";
  } catch (const sv::Error& e) {
    EXPECT_NE(std::string(e.what()).find("budget"), std::string::npos) << e.what();
  }
}

}  // namespace

namespace {

TEST(OutOfCoreResample, ZoomEqualsTheCpuZoomInSlabs) {
  REQUIRE_CUDA();
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  double worst = 0;
  int cases = 0;
  for (Boundary mode : {Boundary::Reflect, Boundary::Mirror, Boundary::Periodic, Boundary::Wrap,
                        Boundary::Nearest, Boundary::Constant, Boundary::GridConstant}) {
    for (int degree : {0, 1, 3, 5}) {
      for (std::size_t rank : {std::size_t{2}, std::size_t{3}}) {
        std::vector<std::size_t> dims{90 + rng() % 40, 30 + rng() % 10};
        if (rank == 3) dims.push_back(20 + rng() % 10);
        const cu::Layout layout{dims, 1};
        std::vector<float> f(layout.size());
        for (float& v : f) v = u(rng);
        for (bool grid_mode : {false, true}) {
          std::vector<std::size_t> out_dims;
          std::vector<std::vector<double>> tables;
          for (std::size_t d = 0; d < rank; ++d) {
            const double factor = d == 0 ? 1.7 : 0.8;
            out_dims.push_back(
                static_cast<std::size_t>(std::lround(static_cast<double>(dims[d]) * factor)));
            tables.push_back(sv::zoom_positions(dims[d], out_dims[d], grid_mode));
          }
          sv::ArrayD a(dims, 1);
          for (std::size_t i = 0; i < f.size(); ++i) a[i] = f[i];
          sv::SamplerOptions so;
          so.degree = degree;
          so.boundary = mode;
          so.cval = 0.3;
          const sv::ArrayD want = sv::zoom(a, out_dims, grid_mode, so, true);
          cu::OutOfCoreResampleConfig cfg;
          cfg.degree = degree;
          cfg.mode = mode;
          cfg.cval = 0.3;
          cfg.slab = 17;  // many output slabs, each with its own window and halo
          // Every other case on the page-locked path (two buffer sets, three streams).
          cfg.host_pinned = (cases % 2) == 1;
          std::vector<float> got(want.size(), -7.0f);
          cu::OutOfCoreStats st;
          if (cfg.host_pinned) {
            const cu::HostRegistration lock_in(f.data(), f.size() * sizeof(float));
            const cu::HostRegistration lock_out(got.data(), got.size() * sizeof(float));
            st = cu::resample_out_of_core(f.data(), layout, tables, got.data(), cfg);
          } else {
            st = cu::resample_out_of_core(f.data(), layout, tables, got.data(), cfg);
          }
          EXPECT_GE(st.slabs, 2u) << "the budget should force slabs";
          double err = 0;
          for (std::size_t i = 0; i < got.size(); ++i)
            err = std::max(err, std::fabs(static_cast<double>(got[i]) - want[i]));
          EXPECT_LE(err, 2e-5) << sv::boundary_name(mode) << " degree " << degree << " rank "
                               << rank << " grid_mode " << grid_mode << " slabs " << st.slabs
                               << (cfg.host_pinned ? " page-locked" : " pageable");
          worst = std::max(worst, err);
          ++cases;
        }
      }
    }
  }
  std::printf("out-of-core zoom: %d cases, worst |error| %.3g (data in [0, 1])\n", cases, worst);
}

TEST(OutOfCoreResample, ReadsItsInputThroughTheGivenReadAndStopsOnItsError) {
  // cfg.read_input (splinetool: a copy guarded against a file truncated under its map) is the
  // only reader of `in`: results bit for bit those of plain copies, every input float read;
  // an error it throws (here after some reads) ends the call with that error, and the next
  // call works.
  REQUIRE_CUDA();
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const std::vector<std::size_t> dims{96, 40, 36};
  const cu::Layout layout{dims, 1};
  std::vector<float> f(layout.size());
  for (float& v : f) v = u(rng);
  const std::vector<std::size_t> out_dims{150, 40, 36};
  std::vector<std::vector<double>> tables;
  for (std::size_t d = 0; d < 3; ++d)
    tables.push_back(sv::zoom_positions(dims[d], out_dims[d], false));
  cu::OutOfCoreResampleConfig cfg;
  cfg.slab = 16;
  std::vector<float> plain(150 * 40 * 36), hooked(plain.size(), -7.0f);
  cu::resample_out_of_core(f.data(), layout, tables, plain.data(), cfg);
  std::atomic<std::size_t> floats{0};
  std::vector<char> touched(f.size(), 0);
  std::mutex touched_lock;
  cfg.read_input = [&](float* dst, const float* src, std::size_t n) {
    ASSERT_GE(src, f.data());
    ASSERT_LE(src + n, f.data() + f.size());
    std::memcpy(dst, src, n * sizeof(float));
    const std::lock_guard<std::mutex> lock(touched_lock);  // mirrored windows may repeat slices
    std::fill_n(touched.begin() + (src - f.data()), n, char{1});
    floats += n;
  };
  const cu::OutOfCoreStats st =
      cu::resample_out_of_core(f.data(), layout, tables, hooked.data(), cfg);
  EXPECT_GE(st.slabs, 5u);
  EXPECT_EQ(std::memcmp(plain.data(), hooked.data(), plain.size() * sizeof(float)), 0);
  EXPECT_GE(floats.load(), f.size());  // windows overlap by their halos
  EXPECT_EQ(std::count(touched.begin(), touched.end(), char{1}),
            static_cast<std::ptrdiff_t>(f.size()));
  std::atomic<int> calls{0};
  cfg.read_input = [&](float* dst, const float* src, std::size_t n) {
    if (++calls > 3) throw sv::Error("in.npy: the file became shorter while it was being read");
    std::memcpy(dst, src, n * sizeof(float));
  };
  try {
    cu::resample_out_of_core(f.data(), layout, tables, hooked.data(), cfg);
    ADD_FAILURE() << "the read's error did not end the call";
  } catch (const sv::Error& e) {
    EXPECT_NE(std::string(e.what()).find("became shorter"), std::string::npos) << e.what();
  }
  cfg.read_input = nullptr;
  std::vector<float> again(plain.size(), -7.0f);
  cu::resample_out_of_core(f.data(), layout, tables, again.data(), cfg);
  EXPECT_EQ(std::memcmp(plain.data(), again.data(), plain.size() * sizeof(float)), 0);
}

// The rotation of scipy.ndimage.rotate (degrees, about the centre, output = input's extents) as a
// full square matrix on the plane (a, b) of a rank-r array, with its offset.
void rotation(std::size_t r, std::size_t a, std::size_t b, double degrees,
              const std::vector<std::size_t>& dims, std::vector<double>& m,
              std::vector<double>& off) {
  const double c = sv::cosdg(degrees), s = sv::sindg(degrees);
  m.assign(r * r, 0.0);
  off.assign(r, 0.0);
  for (std::size_t d = 0; d < r; ++d) m[d * r + d] = 1.0;
  m[a * r + a] = c;
  m[a * r + b] = s;
  m[b * r + a] = -s;
  m[b * r + b] = c;
  const double ca = (static_cast<double>(dims[a]) - 1) / 2,
               cb = (static_cast<double>(dims[b]) - 1) / 2;
  off[a] = ca - (c * ca + s * cb);
  off[b] = cb - (-s * ca + c * cb);
}

TEST(OutOfCoreAffine, EqualsTheCpuAffineTransformInSlabs) {
  // Rotations in every plane (those that tilt axis 0 need wide windows), a shear with scaling
  // and a translation that leaves the array: every mode, orders 0-5, 2-D and 3-D, many slabs
  // (cfg.slab); against sv::affine_transform in double on the same
  // float samples. Order 0's positions are the CPU's to the last bit (ties), so it is exact.
  REQUIRE_CUDA();
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  double worst = 0;
  int cases = 0;
  for (std::size_t rank : {std::size_t{2}, std::size_t{3}}) {
    std::vector<std::size_t> dims{70 + rng() % 20, 30 + rng() % 8};
    if (rank == 3) dims.push_back(24 + rng() % 6);
    const cu::Layout layout{dims, 1};
    std::vector<float> f(layout.size());
    for (float& v : f) v = u(rng);
    sv::ArrayD a(dims, 1);
    for (std::size_t i = 0; i < f.size(); ++i) a[i] = f[i];
    struct Transform {
      std::string name;
      std::vector<double> m, off;
      std::vector<std::size_t> out;
    };
    std::vector<Transform> ts;
    for (std::size_t pa = 0; pa < rank; ++pa)
      for (std::size_t pb = pa + 1; pb < rank; ++pb) {
        Transform t;
        t.name = "rotate 23 in (" + std::to_string(pa) + ", " + std::to_string(pb) + ")";
        rotation(rank, pa, pb, 23.0, dims, t.m, t.off);
        t.out = dims;
        ts.push_back(t);
      }
    Transform shear;
    shear.name = "shear, scale and translate";
    shear.m.assign(rank * rank, 0.0);
    for (std::size_t d = 0; d < rank; ++d)
      shear.m[d * rank + d] = 0.8 + 0.15 * static_cast<double>(d);
    shear.m[1] = 0.2;             // axis 0 takes 0.2 of output axis 1
    shear.m[rank] = -0.1;         // axis 1 takes -0.1 of output axis 0
    shear.off.assign(rank, 3.5);  // partly outside the array
    shear.off[0] = -20.25;
    shear.out = dims;
    shear.out[0] += 9;
    ts.push_back(shear);
    for (const Transform& t : ts)
      for (Boundary mode : {Boundary::Reflect, Boundary::Mirror, Boundary::Periodic, Boundary::Wrap,
                            Boundary::Nearest, Boundary::Constant, Boundary::GridConstant})
        for (int degree : {0, 1, 3, 5}) {
          sv::SamplerOptions so;
          so.degree = degree;
          so.boundary = mode;
          so.cval = 0.3;
          const sv::ArrayD want = sv::affine_transform(a, t.m, t.off, t.out, so, true);
          cu::OutOfCoreResampleConfig cfg;
          cfg.degree = degree;
          cfg.mode = mode;
          cfg.cval = 0.3;
          cfg.slab = 9;
          // Every other case on the page-locked path (two buffer sets, three streams).
          cfg.host_pinned = (cases % 2) == 1;
          std::vector<float> got(want.size(), -7.0f);
          cu::OutOfCoreStats st;
          if (cfg.host_pinned) {
            const cu::HostRegistration lock_in(f.data(), f.size() * sizeof(float));
            const cu::HostRegistration lock_out(got.data(), got.size() * sizeof(float));
            st = cu::affine_out_of_core(f.data(), layout, t.m, t.off, t.out, got.data(), cfg);
          } else {
            st = cu::affine_out_of_core(f.data(), layout, t.m, t.off, t.out, got.data(), cfg);
          }
          EXPECT_GE(st.slabs, 2u) << t.name;
          double err = 0;
          std::size_t unequal = 0;  // order 0: the same sample (float), or cval rounded to float
          for (std::size_t i = 0; i < got.size(); ++i) {
            err = std::max(err, std::fabs(static_cast<double>(got[i]) - want[i]));
            unequal += got[i] != static_cast<float>(want[i]);
          }
          if (degree == 0) {
            EXPECT_EQ(unequal, 0u) << t.name << ", " << sv::boundary_name(mode);
          }
          EXPECT_LE(err, 2e-5) << t.name << ", " << sv::boundary_name(mode) << ", degree " << degree
                               << ", rank " << rank << ", slabs " << st.slabs;
          worst = std::max(worst, err);
          ++cases;
        }
  }
  std::printf("out-of-core affine: %d cases, worst |error| %.3g (data in [0, 1])\n", cases, worst);
}

TEST(OutOfCoreAffine, TheBudgetDecidesTheSlabs) {
  // A volume of 4.9 MB under a 1 MiB budget (2 MiB page-locked, with two buffer sets): in-plane
  // rotations (thin windows) and a tilt of axis 0 (wide ones), cubic, pageable and page-locked,
  // the device memory held never above the budget.
  REQUIRE_CUDA();
  const std::vector<std::size_t> dims{300, 64, 64};
  const cu::Layout layout{dims, 1};
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> f(layout.size());
  for (float& v : f) v = u(rng);
  sv::ArrayD a(dims, 1);
  for (std::size_t i = 0; i < f.size(); ++i) a[i] = f[i];
  for (int k = 0; k < 4; ++k) {
    const std::size_t pa = k % 2 ? 0 : 1;
    const bool pinned = k >= 2;
    std::vector<double> m, off;
    rotation(3, pa, 2, 10.0, dims, m, off);
    sv::SamplerOptions so;
    so.degree = 3;
    so.boundary = Boundary::Mirror;
    const sv::ArrayD want = sv::affine_transform(a, m, off, dims, so, true);
    cu::OutOfCoreResampleConfig cfg;
    cfg.mode = Boundary::Mirror;
    cfg.device_budget = (pinned ? 2u : 1u) << 20;  // page-locked: two buffer sets
    cfg.host_pinned = pinned;
    std::vector<float> got(want.size(), -7.0f);
    cu::OutOfCoreStats st;
    if (pinned) {
      const cu::HostRegistration lock_in(f.data(), f.size() * sizeof(float));
      const cu::HostRegistration lock_out(got.data(), got.size() * sizeof(float));
      st = cu::affine_out_of_core(f.data(), layout, m, off, dims, got.data(), cfg);
    } else {
      st = cu::affine_out_of_core(f.data(), layout, m, off, dims, got.data(), cfg);
    }
    EXPECT_GE(st.slabs, 3u) << "plane (" << pa << ", 2)";
    EXPECT_LE(st.device_bytes, cfg.device_budget) << "plane (" << pa << ", 2)";
    double err = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
      err = std::max(err, std::fabs(static_cast<double>(got[i]) - want[i]));
    EXPECT_LE(err, 2e-5) << "plane (" << pa << ", 2)";
    std::printf(
        "out-of-core rotation in (%zu, 2) under 1 MiB: %zu slabs of <= %zu slices, "
        "%.1f MB up, worst |error| %.3g\n",
        pa, st.slabs, st.slab_slices, static_cast<double>(st.bytes_up) / 1e6, err);
  }
}

TEST(OutOfCoreAffine, ABudgetBelowOneSlicesWindowIsRefusedAndOutsideSlabsAreCval) {
  REQUIRE_CUDA();
  const std::vector<std::size_t> dims{200, 64, 64};
  const cu::Layout layout{dims, 1};
  std::vector<float> f(layout.size(), 1.0f);
  std::vector<double> m, off;
  // 60 degrees in (0, 2): one output slice crosses about 55 input slices of 16 KiB each.
  rotation(3, 0, 2, 60.0, dims, m, off);
  cu::OutOfCoreResampleConfig cfg;
  cfg.device_budget = 256u << 10;
  std::vector<float> out(f.size(), -7.0f);
  try {
    cu::affine_out_of_core(f.data(), layout, m, off, dims, out.data(), cfg);
    ADD_FAILURE() << "a 256 KiB budget was accepted";
  } catch (const sv::Error& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("output slice 0 needs input slices"), std::string::npos) << w;
    EXPECT_NE(w.find("budget of 262144 bytes"), std::string::npos) << w;
  }
  // Constant: a translation that takes output slices 0..99 beyond axis 0's end: cval there,
  // no window uploaded for them; the rest equals the array (a shift by whole slices).
  const std::vector<double> id{1, 0, 0, 0, 1, 0, 0, 0, 1};
  const std::vector<double> shift{100.0, 0.0, 0.0};
  cfg.device_budget = 0;
  cfg.slab = 25;
  cfg.mode = Boundary::Constant;
  cfg.cval = -2.0;
  for (std::size_t i = 0; i < f.size(); ++i) f[i] = static_cast<float>(i % 977) / 977.0f;
  const cu::OutOfCoreStats st =
      cu::affine_out_of_core(f.data(), layout, id, shift, dims, out.data(), cfg);
  const std::size_t slice = 64 * 64;
  for (std::size_t i = 0; i < 100 * slice; ++i) ASSERT_EQ(out[i + 100 * slice], -2.0f) << i;
  for (std::size_t i = 0; i < 100 * slice; ++i) ASSERT_NEAR(out[i], f[i + 100 * slice], 2e-6) << i;
  EXPECT_EQ(st.slabs, 8u);
  // Slabs 5..8 (output slices 100..199) upload nothing: the windows of the first four only.
  EXPECT_LE(st.bytes_up, 4 * (25 + 2 * (st.halo + 4)) * slice * sizeof(float));
}

}  // namespace
