// prefilter_to_surface: the CUDA prefilter writing straight into a CUDA array through a surface
// object (what the GL interop maps), for R32F, RGBA32F (1, 3, 4 channels) and R16F, 2-D and 3-D.
// The array is poisoned with NaN first; the result must match the CPU double prefilter within a
// few float ulp (half rounding for R16F), and the source must be left unchanged.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "../core/test_util.h"
#include "splineview/cuda_prefilter.h"
#include "splineview/prefilter.h"

namespace {

namespace cu = sv::cuda;

void ok(cudaError_t e) {
  ASSERT_EQ(e, cudaSuccess) << cudaGetErrorString(e);
}

struct Case {
  std::vector<std::size_t> dims;
  std::size_t channels;
  cu::SurfaceFormat format;
};

const char* name(cu::SurfaceFormat f) {
  return f == cu::SurfaceFormat::R32F ? "R32F" : f == cu::SurfaceFormat::R16F ? "R16F" : "RGBA32F";
}

void run_case(const Case& c, sv::Boundary b, int degree, std::uint32_t seed) {
  SCOPED_TRACE(std::string(name(c.format)) + " rank " + std::to_string(c.dims.size()) + " x" +
               std::to_string(c.channels) + " " + sv::boundary_name(b));
  const sv::ArrayF in = svtest::random_array<float>(c.dims, c.channels, seed);
  sv::ArrayD ref = sv::ArrayD::from(in);
  sv::prefilter(ref, {degree, b});

  const std::size_t rank = c.dims.size();
  const std::size_t nx = c.dims[rank - 1], ny = rank >= 2 ? c.dims[rank - 2] : 1,
                    nz = rank == 3 ? c.dims[0] : 0;
  cudaChannelFormatDesc desc = c.format == cu::SurfaceFormat::R32F ? cudaCreateChannelDesc<float>()
                               : c.format == cu::SurfaceFormat::R16F
                                   ? cudaCreateChannelDescHalf()
                                   : cudaCreateChannelDesc<float4>();
  const std::size_t texel = c.format == cu::SurfaceFormat::R32F   ? 4
                            : c.format == cu::SurfaceFormat::R16F ? 2
                                                                  : 16;
  cudaArray_t arr = nullptr;
  ok(cudaMalloc3DArray(&arr, &desc, make_cudaExtent(nx, ny, nz), cudaArraySurfaceLoadStore));
  const std::size_t depth = nz ? nz : 1;
  std::vector<unsigned char> poison(nx * ny * depth * texel, 0xff);  // NaN in float and half
  cudaMemcpy3DParms p{};
  p.srcPtr = make_cudaPitchedPtr(poison.data(), nx * texel, nx, ny);
  p.dstArray = arr;
  p.extent = make_cudaExtent(nx, ny, depth);
  p.kind = cudaMemcpyHostToDevice;
  ok(cudaMemcpy3D(&p));

  cudaResourceDesc rd{};
  rd.resType = cudaResourceTypeArray;
  rd.res.array.array = arr;
  cudaSurfaceObject_t surf = 0;
  ok(cudaCreateSurfaceObject(&surf, &rd));

  cu::DeviceBuffer src(in.size()), scratch(in.size());
  src.upload(in.data(), in.size());
  scratch.fill(std::numeric_limits<float>::quiet_NaN());
  cu::PrefilterConfig cfg{degree, b};
  cu::prefilter_to_surface(src.data(), cu::Layout::of(in), surf, c.format, scratch.data(), cfg);
  cu::synchronize("test");

  std::vector<unsigned char> back(poison.size());
  cudaMemcpy3DParms q{};
  q.srcArray = arr;
  q.dstPtr = make_cudaPitchedPtr(back.data(), nx * texel, nx, ny);
  q.extent = p.extent;
  q.kind = cudaMemcpyDeviceToHost;
  ok(cudaMemcpy3D(&q));
  cudaDestroySurfaceObject(surf);
  cudaFreeArray(arr);

  std::vector<float> src_back(in.size());
  src.download(src_back.data(), src_back.size());
  for (std::size_t i = 0; i < in.size(); ++i) ASSERT_EQ(src_back[i], in[i]) << "source changed";

  double err = 0, range = 0;
  const std::size_t C = c.channels;
  for (std::size_t pt = 0; pt < in.points(); ++pt)
    for (std::size_t ch = 0; ch < 4; ++ch) {
      float v;
      if (c.format == cu::SurfaceFormat::R16F) {
        __half h;
        std::memcpy(&h, back.data() + pt * 2, 2);
        v = __half2float(h);
      } else {
        std::memcpy(&v, back.data() + pt * texel + ch * 4, 4);
      }
      if (c.format != cu::SurfaceFormat::RGBA32F && ch > 0) break;
      if (ch >= C) {  // padding channels: 0, alpha 1
        ASSERT_EQ(v, ch == 3 ? 1.0f : 0.0f) << "padding channel " << ch;
        continue;
      }
      const double r = ref[pt * C + ch];
      const double d = std::fabs(v - r);
      ASSERT_FALSE(std::isnan(v)) << "texel " << pt << " not written";
      if (c.format == cu::SurfaceFormat::R16F) {
        // Rounded to half: within half an ulp of half at |r| (plus the float error).
        ASSERT_LE(d, std::ldexp(std::fabs(r), -11) + 1e-6) << "texel " << pt;
      }
      err = std::max(err, d);
      range = std::max(range, std::fabs(r));
    }
  if (c.format != cu::SurfaceFormat::R16F) {
    const double u = err / (range * std::numeric_limits<float>::epsilon());
    EXPECT_LT(u, 8.0);
  }
}

TEST(CudaPrefilterSurface, WritesExactCoefficientsIntoEveryFormat) {
  std::string why;
  if (!cu::available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<Case> cases = {
      {{37, 53}, 1, cu::SurfaceFormat::R32F},      {{9, 1300}, 1, cu::SurfaceFormat::R32F},
      {{11, 13, 600}, 1, cu::SurfaceFormat::R32F}, {{37, 53}, 4, cu::SurfaceFormat::RGBA32F},
      {{37, 53}, 3, cu::SurfaceFormat::RGBA32F},   {{5, 7, 9}, 1, cu::SurfaceFormat::RGBA32F},
      {{6, 700}, 2, cu::SurfaceFormat::RGBA32F},   {{37, 53}, 1, cu::SurfaceFormat::R16F},
      {{5, 7, 9}, 1, cu::SurfaceFormat::R16F},     {{1, 40}, 1, cu::SurfaceFormat::R32F},
      {{40, 1}, 1, cu::SurfaceFormat::R32F},
  };
  for (sv::Boundary b : svtest::all_boundaries())
    for (const Case& c : cases) run_case(c, b, 3, seed);
  for (int degree : {0, 1, 5, 7}) run_case(cases[2], sv::Boundary::Mirror, degree, seed);
}

TEST(CudaPrefilterSurface, RefusesChannelsThatDoNotFitTheFormat) {
  std::string why;
  if (!cu::available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  cu::DeviceBuffer src(64), scratch(64);
  EXPECT_THROW(cu::prefilter_to_surface(src.data(), {{8, 4}, 2}, 0, cu::SurfaceFormat::R32F,
                                        scratch.data(), {}),
               sv::Error);
  EXPECT_THROW(
      cu::prefilter_to_surface(src.data(), {{8, 8}, 1}, 0, cu::SurfaceFormat::R32F, nullptr, {}),
      sv::Error);
}

}  // namespace
