// The CUDA thread-per-tile upscaling (cuda_upscale.h) against the double-precision CPU reference
// at the same positions: sv::sample (degree 0, 1, 3) at (j + 1/2) / f - 1/2 on every axis, and
// sv::zoom in double for the whole chain (prefilter included). Factors 1..4, channels 1..4, odd
// and tiny sizes, every boundary mode; output buffers poisoned (NaN, 0xAB / 0x54) with guard
// zones, so an unwritten or stray output is caught. The 8-bit unpacking and rounding, the surface
// output, the frame upscaler (repeated frames, shape changes) and the argument checks are tested
// too. Skips with the reason when there is no device (the argument checks run everywhere).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../core/test_util.h"
#include "require_cuda.h"
#include "splineview/cuda_prefilter.h"
#include "splineview/cuda_upscale.h"
#include "splineview/prefilter.h"
#include "splineview/resample.h"
#include "splineview/sampler.h"

#if SPLINEVIEW_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace {

using sv::ArrayD;
using sv::ArrayF;
using sv::Boundary;
namespace cu = sv::cuda;
using cu::UpscaleMethod;

constexpr double kFloatEps = std::numeric_limits<float>::epsilon();
constexpr std::size_t kGuard = 1024;  // poisoned floats / bytes before and after each output
const std::vector<UpscaleMethod> kMethods = {UpscaleMethod::Nearest, UpscaleMethod::Linear,
                                             UpscaleMethod::Cubic};

int degree_of(UpscaleMethod m) {
  return m == UpscaleMethod::Nearest ? 0 : m == UpscaleMethod::Linear ? 1 : 3;
}

std::string describe(const ArrayF& a, int f, UpscaleMethod m, Boundary b) {
  return std::to_string(a.dim(0)) + "x" + std::to_string(a.dim(1)) + " x" +
         std::to_string(a.channels()) + " factor " + std::to_string(f) + " " +
         cu::upscale_method_name(m) + " " + sv::boundary_name(b);
}

// The spline with coefficients (or samples) `c` at the upscaled grid's positions, in double.
std::vector<double> reference(const ArrayF& c, int f, UpscaleMethod m, Boundary b) {
  const std::size_t h = c.dim(0) * f, w = c.dim(1) * f;
  std::vector<double> pos(h * w * 2);
  for (std::size_t y = 0; y < h; ++y)
    for (std::size_t x = 0; x < w; ++x) {
      pos[(y * w + x) * 2] = (static_cast<double>(y) + 0.5) / f - 0.5;
      pos[(y * w + x) * 2 + 1] = (static_cast<double>(x) + 0.5) / f - 0.5;
    }
  return sv::sample(c, pos, sv::SamplerOptions{degree_of(m), b, -1, 0});
}

// Largest |got - ref| in float ulp of `scale` (max|coefficient|); NaN counts as infinite.
double ulps(const std::vector<float>& got, const std::vector<double>& ref, double scale) {
  double err = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double d = std::fabs(static_cast<double>(got[i]) - ref[i]);
    err = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(err, d);
  }
  return err / (std::max(scale, 1e-30) * kFloatEps);
}

double max_abs(const float* v, std::size_t n) {
  double m = 0;
  for (std::size_t i = 0; i < n; ++i) m = std::max(m, std::fabs(static_cast<double>(v[i])));
  return m;
}

// A device float buffer of n values between NaN guard zones; check() fails the test if a guard
// changed and returns the n values.
struct Guarded {
  cu::DeviceBuffer buf;
  std::size_t n;
  explicit Guarded(std::size_t count) : buf(count + 2 * kGuard), n(count) {
    buf.fill(std::numeric_limits<float>::quiet_NaN());
  }
  float* data() { return buf.data() + kGuard; }
  std::vector<float> check() {
    cu::synchronize("test");
    std::vector<float> host(buf.size());
    buf.download(host.data(), host.size());
    for (std::size_t i = 0; i < kGuard; ++i) {
      EXPECT_TRUE(std::isnan(host[i])) << "guard before the output written at " << i;
      EXPECT_TRUE(std::isnan(host[host.size() - 1 - i])) << "guard after the output written";
    }
    return {host.begin() + kGuard, host.begin() + static_cast<long>(kGuard + n)};
  }
};

// Device bytes (cu::DeviceBuffer holds floats: bytes are carved out of it).
struct Bytes {
  cu::DeviceBuffer buf;
  explicit Bytes(std::size_t n) : buf((n + 2 * kGuard + 3) / 4) {}
  std::uint8_t* data() { return reinterpret_cast<std::uint8_t*>(buf.data()) + kGuard; }
  // Fills everything with `v` (guards included).
  void poison(std::uint8_t v) {
    float f;
    const std::uint32_t word = 0x01010101u * v;
    std::memcpy(&f, &word, 4);
    buf.fill(f);
  }
  void upload(const std::vector<std::uint8_t>& v) {
    std::vector<float> host(buf.size());
    buf.download(host.data(), host.size());
    std::memcpy(reinterpret_cast<std::uint8_t*>(host.data()) + kGuard, v.data(), v.size());
    buf.upload(host.data(), host.size());
  }
  // The n bytes, after checking that the guards still hold `v`.
  std::vector<std::uint8_t> check(std::size_t n, std::uint8_t v) {
    cu::synchronize("test");
    std::vector<float> host(buf.size());
    buf.download(host.data(), host.size());
    const auto* b = reinterpret_cast<const std::uint8_t*>(host.data());
    for (std::size_t i = 0; i < kGuard; ++i) {
      EXPECT_EQ(b[i], v) << "guard before the output written at " << i;
      EXPECT_EQ(b[kGuard + n + i], v) << "guard after the output written at " << i;
    }
    return {b + kGuard, b + kGuard + n};
  }
};

// Runs cu::upscale on the host array `c` into a poisoned, guarded buffer.
std::vector<float> run_upscale(const ArrayF& c, int f, UpscaleMethod m, Boundary b) {
  cu::DeviceBuffer src(c.size());
  src.upload(c.data(), c.size());
  Guarded out(c.size() * static_cast<std::size_t>(f * f));
  cu::upscale(src.data(), cu::Layout::of(c), f, m, b, out.data());
  return out.check();
}

struct Size {
  std::size_t h, w;
};

void expect_matches_reference(const ArrayF& c, int f, UpscaleMethod m, Boundary b, double* worst) {
  const std::vector<float> got = run_upscale(c, f, m, b);
  const std::vector<double> ref = reference(c, f, m, b);
  const double u = ulps(got, ref, max_abs(c.data(), c.size()));
  if (m == UpscaleMethod::Nearest) {
    EXPECT_EQ(u, 0.0) << describe(c, f, m, b);  // copies of the samples
  } else {
    EXPECT_LE(u, m == UpscaleMethod::Linear ? 4.0 : 8.0) << describe(c, f, m, b);
    if (m == UpscaleMethod::Cubic) *worst = std::max(*worst, u);
  }
}

TEST(CudaUpscale, MatchesTheDoubleReferenceForEveryFactorChannelCountMethodAndBoundary) {
  REQUIRE_CUDA();
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<Size> sizes = {{1, 1}, {1, 9}, {6, 1}, {2, 3}, {7, 5}, {37, 64}, {65, 33}};
  double worst = 0;
  for (const Size& s : sizes)
    for (std::size_t ch = 1; ch <= 4; ++ch)
      for (int f = 1; f <= cu::kMaxUpscaleFactor; ++f)
        for (UpscaleMethod m : kMethods)
          for (Boundary b : svtest::all_boundaries()) {
            // Coefficients overshoot the sample range and can be negative.
            const ArrayF c = svtest::random_array<float>({s.h, s.w}, ch, seed + f, -1.0, 2.0);
            expect_matches_reference(c, f, m, b, &worst);
          }
  std::printf("CUDA upscale (cubic) vs double: worst %.2f ulp of max|c|\n", worst);
  RecordProperty("worst_ulp", std::to_string(worst));
}

TEST(CudaUpscale, LargerImagesSpanManyBlocksAndRuns) {
  // 300x200 spans several warps' strips and runs; 3x700 and 700x3 one of each extreme; the run
  // length (cell rows per warp) forced short and odd too, and both block layouts (the kernel's
  // experiment switches SPLINEVIEW_CUDA_UPSCALE_RUN and SPLINEVIEW_CUDA_UPSCALE_WARPS).
  REQUIRE_CUDA();
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  struct Switches {
    const char* run;
    const char* warps;
  };
  auto set = [](const char* name, const char* value) {
    if (*value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  };
  double worst = 0;
  for (const Switches& sw :
       std::vector<Switches>{{"", ""}, {"1", ""}, {"3", "stacked"}, {"", "stacked"}}) {
    set("SPLINEVIEW_CUDA_UPSCALE_RUN", sw.run);
    set("SPLINEVIEW_CUDA_UPSCALE_WARPS", sw.warps);
    SCOPED_TRACE(std::string("run '") + sw.run + "' warps '" + sw.warps + "'");
    const bool all = !*sw.run && !*sw.warps;
    for (const Size& s : std::vector<Size>{{300, 200}, {3, 700}, {700, 3}})
      for (std::size_t ch : {1u, 3u, 4u})
        for (int f = 1; f <= cu::kMaxUpscaleFactor; ++f)
          for (UpscaleMethod m : kMethods) {
            if (!all && (ch != 3 || s.h != 300)) continue;
            const ArrayF c = svtest::random_array<float>({s.h, s.w}, ch, seed + f, -1.0, 2.0);
            expect_matches_reference(c, f, m, Boundary::Reflect, &worst);
          }
  }
  unsetenv("SPLINEVIEW_CUDA_UPSCALE_RUN");
  unsetenv("SPLINEVIEW_CUDA_UPSCALE_WARPS");
  std::printf("CUDA upscale (cubic, large) vs double: worst %.2f ulp of max|c|\n", worst);
}

TEST(CudaUpscale, FactorOneReproducesTheSamples) {
  // Nearest and linear return the samples exactly; cubic on the coefficients of the samples
  // (CPU prefilter in double, rounded to float) interpolates them within the ulp bound.
  REQUIRE_CUDA();
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (Boundary b : svtest::all_boundaries())
    for (std::size_t ch = 1; ch <= 4; ++ch) {
      const ArrayF s =
          svtest::random_array<float>({37, 64}, ch, seed + static_cast<std::uint32_t>(ch));
      for (UpscaleMethod m : {UpscaleMethod::Nearest, UpscaleMethod::Linear}) {
        const std::vector<float> got = run_upscale(s, 1, m, b);
        EXPECT_TRUE(std::equal(got.begin(), got.end(), s.data()))
            << cu::upscale_method_name(m) << " " << sv::boundary_name(b);
      }
      ArrayD cd = ArrayD::from(s);
      sv::prefilter(cd, {3, b});
      const ArrayF c = ArrayF::from(cd);
      const std::vector<float> got = run_upscale(c, 1, UpscaleMethod::Cubic, b);
      const std::vector<double> samples(s.data(), s.data() + s.size());
      EXPECT_LE(ulps(got, samples, max_abs(c.data(), c.size())), 8.0) << sv::boundary_name(b);
    }
}

TEST(CudaUpscale, HostConvenienceEqualsTheCpuZoomInDouble) {
  // The whole chain (GPU prefilter for cubic, then the tiles) against sv::zoom<double>: within
  // the prefilter's and the upscale's ulp bounds together (weights of the cubic sum to 1).
  REQUIRE_CUDA();
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (Boundary b : svtest::all_boundaries())
    for (const Size& s : std::vector<Size>{{7, 5}, {45, 130}})
      for (std::size_t ch : {1u, 3u})
        for (int f = 1; f <= cu::kMaxUpscaleFactor; ++f)
          for (UpscaleMethod m : kMethods) {
            const ArrayF in = svtest::random_array<float>({s.h, s.w}, ch, seed + f);
            const ArrayF got = cu::upscale(in, f, m, b);
            sv::ResampleOptions opt;
            opt.method = m == UpscaleMethod::Nearest  ? sv::Method::Nearest
                         : m == UpscaleMethod::Linear ? sv::Method::Linear
                                                      : sv::Method::Cubic;
            opt.boundary = b;
            const ArrayD ref = sv::zoom(ArrayD::from(in), static_cast<double>(f), opt);
            ASSERT_EQ(got.dims(), ref.dims());
            ArrayD cd = ArrayD::from(in);
            if (m == UpscaleMethod::Cubic) sv::prefilter(cd, {3, b});
            double scale = 0;
            for (double v : cd.vec()) scale = std::max(scale, std::fabs(v));
            EXPECT_LE(ulps(got.vec(), ref.vec(), scale), m == UpscaleMethod::Cubic ? 16.0 : 4.0)
                << describe(in, f, m, b);
          }
}

TEST(CudaUpscale, UnpackIsExact) {
  // v / 255 for every byte, every (source channels, float channels) pair, a pitch with padding.
  REQUIRE_CUDA();
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const std::size_t h = 37, w = 53;
  for (int sc = 1; sc <= 4; ++sc)
    for (std::size_t c = 1; c <= static_cast<std::size_t>(sc); ++c)
      for (std::size_t pad : {0u, 3u}) {
        const std::size_t pitch = w * static_cast<std::size_t>(sc) + pad;
        std::vector<std::uint8_t> bytes(h * pitch);
        for (std::size_t i = 0; i < bytes.size(); ++i)
          bytes[i] = static_cast<std::uint8_t>(i < 256 ? i : rng() & 0xff);
        Bytes src(bytes.size());
        src.poison(0);
        src.upload(bytes);
        Guarded out(h * w * c);
        cu::unpack_u8(src.data(), pitch, sc, out.data(), {{h, w}, c});
        const std::vector<float> got = out.check();
        bool same = true;
        for (std::size_t y = 0; y < h; ++y)
          for (std::size_t x = 0; x < w; ++x)
            for (std::size_t ch = 0; ch < c; ++ch) {
              const float want =
                  static_cast<float>(bytes[y * pitch + x * static_cast<std::size_t>(sc) + ch]) /
                  255.0f;
              same = same && got[(y * w + x) * c + ch] == want;
            }
        EXPECT_TRUE(same) << sc << " source channels to " << c << ", pad " << pad;
      }
}

// The documented 8-bit rounding: rint(clamp(v, 0, 1) * 255), half to even, NaN -> 0.
std::uint8_t to_u8(float v) {
  if (std::isnan(v)) return 0;
  const float t = std::min(std::max(v, 0.0f), 1.0f) * 255.0f;
  return static_cast<std::uint8_t>(std::nearbyint(t));
}

TEST(CudaUpscale, EightBitOutputIsTheRoundedFloatOutput) {
  REQUIRE_CUDA();
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const Size& s : std::vector<Size>{{7, 5}, {37, 64}, {1, 1}})
    for (std::size_t ch = 1; ch <= 4; ++ch)
      for (int f = 1; f <= cu::kMaxUpscaleFactor; ++f)
        for (UpscaleMethod m : kMethods) {
          // Beyond [0, 1] on both sides, so the clamping is exercised.
          ArrayF c = svtest::random_array<float>({s.h, s.w}, ch, seed + f, -0.2, 1.2);
          c[0] = 0.5f / 255.0f;  // near a tie of the rounding
          const std::vector<float> ref = run_upscale(c, f, m, Boundary::Reflect);
          cu::DeviceBuffer src(c.size());
          src.upload(c.data(), c.size());
          const std::size_t n = ref.size();
          Bytes out(n);
          for (std::uint8_t poison : {std::uint8_t{0xab}, std::uint8_t{0x54}}) {
            out.poison(poison);
            cu::upscale_u8(src.data(), cu::Layout::of(c), f, m, Boundary::Reflect, out.data());
            const std::vector<std::uint8_t> got = out.check(n, poison);
            std::size_t bad = 0;
            for (std::size_t i = 0; i < n; ++i) bad += got[i] != to_u8(ref[i]);
            EXPECT_EQ(bad, 0u) << describe(c, f, m, Boundary::Reflect) << " poison " << int{poison};
          }
        }
}

#if SPLINEVIEW_HAVE_CUDA
void ok(cudaError_t e) {
  ASSERT_EQ(e, cudaSuccess) << cudaGetErrorString(e);
}

// upscale_to_surface into a NaN-poisoned CUDA array, read back: equal to upscale() bit for bit,
// padding channels 0 and alpha 1.
void surface_case(const ArrayF& c, int f, UpscaleMethod m, cu::SurfaceFormat format) {
  const std::size_t ch = c.channels();
  const std::size_t w = c.dim(1) * f, h = c.dim(0) * f;
  const bool r32 = format == cu::SurfaceFormat::R32F;
  const std::size_t texel = r32 ? 4 : 16;
  SCOPED_TRACE(describe(c, f, m, Boundary::Mirror) + (r32 ? " R32F" : " RGBA32F"));
  const cudaChannelFormatDesc desc =
      r32 ? cudaCreateChannelDesc<float>() : cudaCreateChannelDesc<float4>();
  cudaArray_t arr = nullptr;
  ok(cudaMallocArray(&arr, &desc, w, h, cudaArraySurfaceLoadStore));
  const std::vector<unsigned char> poison(w * h * texel, 0xff);  // NaN
  ok(cudaMemcpy2DToArray(arr, 0, 0, poison.data(), w * texel, w * texel, h,
                         cudaMemcpyHostToDevice));
  cudaResourceDesc rd{};
  rd.resType = cudaResourceTypeArray;
  rd.res.array.array = arr;
  cudaSurfaceObject_t surf = 0;
  ok(cudaCreateSurfaceObject(&surf, &rd));

  cu::DeviceBuffer src(c.size());
  src.upload(c.data(), c.size());
  cu::upscale_to_surface(src.data(), cu::Layout::of(c), f, m, Boundary::Mirror, surf, format);
  cu::synchronize("test");
  std::vector<float> back(w * h * texel / 4);
  ok(cudaMemcpy2DFromArray(back.data(), w * texel, arr, 0, 0, w * texel, h,
                           cudaMemcpyDeviceToHost));
  cudaDestroySurfaceObject(surf);
  cudaFreeArray(arr);

  const std::vector<float> want = run_upscale(c, f, m, Boundary::Mirror);
  const std::size_t per = texel / 4;
  std::size_t bad = 0;
  for (std::size_t p = 0; p < w * h; ++p)
    for (std::size_t k = 0; k < per; ++k) {
      const float v = back[p * per + k];
      const float expect = k < ch ? want[p * ch + k] : (k == 3 ? 1.0f : 0.0f);
      bad += !(v == expect);
    }
  EXPECT_EQ(bad, 0u);
}

TEST(CudaUpscale, SurfaceOutputEqualsTheBufferOutput) {
  REQUIRE_CUDA();
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int f = 1; f <= cu::kMaxUpscaleFactor; ++f)
    for (UpscaleMethod m : kMethods) {
      surface_case(svtest::random_array<float>({37, 70}, 1, seed + f), f, m,
                   cu::SurfaceFormat::R32F);
      for (std::size_t ch = 1; ch <= 4; ++ch)
        surface_case(svtest::random_array<float>({37, 70}, ch, seed + f), f, m,
                     cu::SurfaceFormat::RGBA32F);
    }
}
#endif

// The frame upscaler's chain done by hand on the device: unpack, prefilter (cubic), upscale_u8.
std::vector<std::uint8_t> by_hand(const std::vector<std::uint8_t>& frame, std::size_t w,
                                  std::size_t h, std::size_t c, int f, UpscaleMethod m) {
  Bytes in(frame.size());
  in.poison(0);
  in.upload(frame);
  const cu::Layout layout{{h, w}, c};
  cu::DeviceBuffer samples(h * w * c);
  cu::unpack_u8(in.data(), w * c, static_cast<int>(c), samples.data(), layout);
  if (m == UpscaleMethod::Cubic) cu::prefilter(samples.data(), layout, {3, Boundary::Reflect});
  const std::size_t n = frame.size() * static_cast<std::size_t>(f * f);
  Bytes out(n);
  out.poison(0xab);
  cu::upscale_u8(samples.data(), layout, f, m, Boundary::Reflect, out.data());
  return out.check(n, 0xab);
}

TEST(CudaUpscale, FrameUpscalerEqualsTheChainAcrossFramesAndShapeChanges) {
  REQUIRE_CUDA();
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  struct Frame {
    std::size_t w, h, c;
  };
  // Same shape twice (buffers kept), then other shapes, then the first again.
  const std::vector<Frame> frames = {{64, 36, 3}, {64, 36, 3}, {17, 9, 4},
                                     {5, 7, 1},   {33, 20, 2}, {64, 36, 3}};
  for (int f = 1; f <= cu::kMaxUpscaleFactor; ++f)
    for (UpscaleMethod m : kMethods) {
      cu::FrameUpscaler up(f, m);
      for (const Frame& fr : frames) {
        SCOPED_TRACE(std::to_string(fr.w) + "x" + std::to_string(fr.h) + " x" +
                     std::to_string(fr.c) + " factor " + std::to_string(f) + " " +
                     cu::upscale_method_name(m));
        std::vector<std::uint8_t> frame(fr.w * fr.h * fr.c);
        for (auto& v : frame) v = static_cast<std::uint8_t>(rng() & 0xff);
        const std::size_t n = frame.size() * static_cast<std::size_t>(f * f);
        std::vector<std::uint8_t> got(n + 16, 0xcd);
        up.run(frame.data(), static_cast<int>(fr.w), static_cast<int>(fr.h), static_cast<int>(fr.c),
               got.data());
        for (std::size_t i = n; i < got.size(); ++i) ASSERT_EQ(got[i], 0xcd) << "wrote past dst";
        got.resize(n);
        EXPECT_EQ(got, by_hand(frame, fr.w, fr.h, fr.c, f, m));
        const cu::FrameUpscaler::Timing& t = up.last_timing();
        EXPECT_GE(t.upload, 0.0);
        EXPECT_GE(t.unpack, 0.0);
        EXPECT_GE(t.prefilter, 0.0);
        EXPECT_GT(t.upscale, 0.0);
        EXPECT_GE(t.download, 0.0);

        // And within one level of the double reference (zoom of v / 255, rounded).
        ArrayD s({fr.h, fr.w}, fr.c);
        for (std::size_t i = 0; i < frame.size(); ++i) s[i] = frame[i] / 255.0;
        sv::ResampleOptions opt;
        opt.method = m == UpscaleMethod::Nearest  ? sv::Method::Nearest
                     : m == UpscaleMethod::Linear ? sv::Method::Linear
                                                  : sv::Method::Cubic;
        const ArrayD ref = sv::zoom(s, static_cast<double>(f), opt);
        int worst = 0;
        for (std::size_t i = 0; i < n; ++i) {
          const double r = std::nearbyint(std::min(std::max(ref[i], 0.0), 1.0) * 255.0);
          worst = std::max(worst, std::abs(int{got[i]} - static_cast<int>(r)));
        }
        EXPECT_LE(worst, 1);
      }
    }
}

TEST(CudaUpscale, RefusesBadArguments) {
  // Runs without a device too: the checks come before anything touches CUDA, and every refusal
  // is an sv::Error whose sentence names the problem.
  auto expect_error = [](auto&& call, const std::string& words) {
    try {
      call();
      ADD_FAILURE() << "no error; expected one mentioning '" << words << "'";
    } catch (const sv::Error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  float* none = nullptr;
  std::uint8_t* none8 = nullptr;
  const cu::Layout ok_layout{{8, 8}, 3};
  for (int f : {0, -1, 5, 8})
    expect_error(
        [&] { cu::upscale(none, ok_layout, f, UpscaleMethod::Cubic, Boundary::Reflect, none); },
        "factor");
  expect_error(
      [&] { cu::upscale_u8(none, ok_layout, 0, UpscaleMethod::Linear, Boundary::Reflect, none8); },
      "factor");
  expect_error(
      [&] {
        cu::upscale(none, {{8, 8}, 5}, 2, UpscaleMethod::Cubic, Boundary::Reflect, none);
      },
      "channels");
  expect_error(
      [&] {
        cu::upscale(none, {{8}, 1}, 2, UpscaleMethod::Cubic, Boundary::Reflect, none);
      },
      "2-D");
  expect_error(
      [&] {
        cu::upscale(none, {{2, 8, 8}, 1}, 2, UpscaleMethod::Cubic, Boundary::Reflect, none);
      },
      "2-D");
  expect_error([&] { cu::unpack_u8(none8, 24, 3, none, {{8, 8}, 4}); }, "4 float channels");
  expect_error([&] { cu::unpack_u8(none8, 24, 5, none, {{8, 8}, 3}); }, "1 to 4 channels");
  expect_error([&] { cu::unpack_u8(none8, 20, 3, none, {{8, 8}, 3}); }, "pitch");
  expect_error([&] { cu::FrameUpscaler(0, UpscaleMethod::Cubic); }, "factor");
  expect_error([&] { cu::FrameUpscaler(5, UpscaleMethod::Nearest); }, "factor");
  expect_error([&] { cu::parse_upscale_method("bicubic"); }, "bicubic");
  for (UpscaleMethod m : kMethods)
    EXPECT_EQ(cu::parse_upscale_method(cu::upscale_method_name(m)), m);

  std::string why;
  if (!cu::available(&why)) GTEST_SKIP() << "the rest needs a CUDA device: " << why;
  expect_error(
      [&] {
        cu::upscale_to_surface(none, {{8, 8}, 3}, 2, UpscaleMethod::Cubic, Boundary::Reflect, 0,
                               cu::SurfaceFormat::R32F);
      },
      "channels");
  expect_error(
      [&] {
        cu::upscale_to_surface(none, {{8, 8}, 1}, 2, UpscaleMethod::Cubic, Boundary::Reflect, 0,
                               cu::SurfaceFormat::R16F);
      },
      "R32F and RGBA32F");
  expect_error(
      [&] { cu::upscale(none, ok_layout, 2, UpscaleMethod::Cubic, Boundary::Reflect, none); },
      "null");
  cu::FrameUpscaler up(2, UpscaleMethod::Cubic);
  std::vector<std::uint8_t> frame(64 * 4), out(64 * 16);
  expect_error([&] { up.run(frame.data(), 8, 8, 5, out.data()); }, "1 to 4 channels");
  expect_error([&] { up.run(frame.data(), 0, 8, 3, out.data()); }, "no pixels");
  expect_error([&] { up.run(nullptr, 8, 8, 1, out.data()); }, "null");
}

}  // namespace
