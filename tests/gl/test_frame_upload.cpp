// Tests of the video mode's per-frame upload (splineview/gl/frame_upload.h) in a headless
// context: the samples texture holds exactly the frame's bytes after each of several frames (the
// two pixel buffers alternate, so a stale or swapped buffer shows), the coefficients texture
// holds the cubic B-spline coefficients of the frame's RGB / 255 (against the double-precision
// prefilter: exact float rounding on the CPU path, a few float ulps on the CUDA path), alpha 1,
// and the CUDA tile path's texture equals sv::zoom of the frame in double (cubic, reflect) at
// factors 2..4. Every texture is poisoned with NaN before it is checked.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gl_test_util.h"
#include "splineview/cuda_memory.h"
#include "splineview/error.h"
#include "splineview/gl/frame_upload.h"
#include "splineview/gl/gl.h"
#include "splineview/prefilter.h"
#include "splineview/resample.h"

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<std::uint8_t> random_frame(int w, int h, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<std::uint8_t> f(static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * 4);
  for (std::size_t i = 0; i < f.size(); ++i)
    f[i] = (i % 4 == 3) ? 255 : static_cast<std::uint8_t>(byte(rng));
  return f;
}

// The frame's RGB / 255 in double, shape (h, w), 3 channels.
sv::ArrayD frame_rgb(const std::vector<std::uint8_t>& f, int w, int h) {
  sv::ArrayD a({static_cast<std::size_t>(h), static_cast<std::size_t>(w)}, 3);
  for (std::size_t p = 0; p < a.points(); ++p)
    for (std::size_t c = 0; c < 3; ++c) a[p * 3 + c] = f[p * 4 + c] / 255.0;
  return a;
}

std::vector<float> read_rgba32f(const sv::gl::Texture& t, int w, int h) {
  std::vector<float> v(static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * 4);
  SV_GL_CHECK(glGetTextureImage(t.id(), 0, GL_RGBA, GL_FLOAT,
                                static_cast<GLsizei>(v.size() * sizeof(float)), v.data()));
  return v;
}

std::vector<std::uint8_t> read_rgba8(const sv::gl::Texture& t, int w, int h) {
  std::vector<std::uint8_t> v(static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * 4);
  SV_GL_CHECK(glPixelStorei(GL_PACK_ALIGNMENT, 1));
  SV_GL_CHECK(glGetTextureImage(t.id(), 0, GL_RGBA, GL_UNSIGNED_BYTE,
                                static_cast<GLsizei>(v.size()), v.data()));
  return v;
}

void poison(const sv::gl::Texture& t) {
  const float nan4[4] = {kNaN, kNaN, kNaN, kNaN};
  SV_GL_CHECK(glClearTexImage(t.id(), 0, GL_RGBA, GL_FLOAT, nan4));
}

// Largest |texture - reference| over RGB, and whether alpha is 1 everywhere.
double max_rgb_error(const std::vector<float>& tex, const sv::ArrayD& ref, bool* alpha_one) {
  double worst = 0;
  *alpha_one = true;
  for (std::size_t p = 0; p < ref.points(); ++p) {
    for (std::size_t c = 0; c < 3; ++c) {
      const double e = std::fabs(static_cast<double>(tex[p * 4 + c]) - ref[p * 3 + c]);
      if (!(e <= worst)) worst = std::isnan(e) ? std::numeric_limits<double>::infinity() : e;
    }
    if (tex[p * 4 + 3] != 1.0f) *alpha_one = false;
  }
  return worst;
}

void check_frames(bool allow_cuda) {
  const int w = 37, h = 23;
  sv::gl::InteropOptions io;
  io.allow_cuda = allow_cuda;
  io.on_fallback = [](const std::string&) {};
  sv::gl::FrameUploader up(w, h, io);
  if (allow_cuda && !up.uses_cuda()) GTEST_SKIP() << "no CUDA path: " << up.fallback_reason();
  EXPECT_EQ(up.uses_cuda(), allow_cuda);
  for (int n = 0; n < 4; ++n) {
    const std::uint32_t seed = svgltest::fresh_seed();
    SCOPED_TRACE("frame " + std::to_string(n) + ", seed " + std::to_string(seed));
    const std::vector<std::uint8_t> frame = random_frame(w, h, seed);
    poison(up.textures().coefficients);
    up.upload(frame.data());
    EXPECT_EQ(read_rgba8(up.textures().samples, w, h), frame);
    sv::ArrayD c = frame_rgb(frame, w, h);
    sv::prefilter(c, sv::PrefilterOptions{3, sv::Boundary::Reflect, 0});
    bool alpha_one = false;
    const double err = max_rgb_error(read_rgba32f(up.textures().coefficients, w, h), c, &alpha_one);
    // Coefficients of [0, 1] data stay within about [-0.5, 1.5]: float rounding is 2^-24 * 1.5
    // on the CPU path (prefiltered in float: a few ulps), a few ulps on CUDA.
    EXPECT_LE(err, 16 * 1.5 / 16777216.0);
    EXPECT_TRUE(alpha_one);
    std::printf("frame %d (%s): max |coefficient - double prefilter| = %.3g\n", n,
                up.uses_cuda() ? "cuda" : "cpu", err);
  }
}

TEST(FrameUploader, CpuPathSamplesAndCoefficients) {
  SVGL_REQUIRE_CONTEXT();
  check_frames(false);
}

TEST(FrameUploader, CudaPathSamplesAndCoefficients) {
  SVGL_REQUIRE_CONTEXT();
  std::string why;
  if (!sv::cuda::available(&why)) GTEST_SKIP() << "no CUDA: " << why;
  check_frames(true);
}

TEST(FrameUploader, TilesEqualTheDoubleZoom) {
  SVGL_REQUIRE_CONTEXT();
  std::string why;
  if (!sv::cuda::available(&why)) GTEST_SKIP() << "no CUDA: " << why;
  const int w = 29, h = 17;
  sv::gl::FrameUploader up(w, h);
  if (!up.uses_cuda()) GTEST_SKIP() << "no CUDA path: " << up.fallback_reason();
  const std::uint32_t seed = svgltest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<std::uint8_t> frame = random_frame(w, h, seed);
  up.upload(frame.data(), false);
  for (int f = 2; f <= 4; ++f) {
    SCOPED_TRACE("factor " + std::to_string(f));
    up.upscale_tiles(f);
    ASSERT_EQ(up.tile_factor(), f);
    sv::ResampleOptions ro;
    ro.method = sv::Method::Cubic;
    const sv::ArrayD ref = sv::zoom(frame_rgb(frame, w, h), f, ro);
    bool alpha_one = false;
    const double err =
        max_rgb_error(read_rgba32f(up.tiles().samples, w * f, h * f), ref, &alpha_one);
    EXPECT_LE(err, 16 * 1.5 / 16777216.0);
    EXPECT_TRUE(alpha_one);
    std::printf("tiles %dx: max |tile - double zoom| = %.3g\n", f, err);
  }
  EXPECT_THROW(up.upscale_tiles(5), sv::Error);
}

TEST(FrameUploader, TilesNeedCudaAndRefuseBadSizes) {
  SVGL_REQUIRE_CONTEXT();
  sv::gl::InteropOptions io;
  io.allow_cuda = false;
  io.on_fallback = [](const std::string&) {};
  sv::gl::FrameUploader up(8, 8, io);
  try {
    up.upscale_tiles(2);
    ADD_FAILURE() << "tiles without CUDA did not throw";
  } catch (const sv::Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs CUDA"), std::string::npos) << e.what();
  }
  EXPECT_THROW(sv::gl::FrameUploader(0, 8, io), sv::Error);
}

}  // namespace
