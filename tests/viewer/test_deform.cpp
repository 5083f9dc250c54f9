// Tests of the deform mode's engine (app/viewer/deform_field.h) in a headless EGL context, each
// against an independent double-precision oracle of the core library:
//  - the per-voxel and thread-per-tile GLSL fields equal sv::ffd_field_reference within a
//    derived float bound, in 2-D and 3-D, for spacings that do and do not divide the image;
//    the texture-hardware field within the filter unit's 8-bit weight bound (and the measured
//    figure of this GL implementation is printed);
//  - det J of each kernel against sv::ffd_jacobian_determinant_reference within a derived
//    bound, and the view's det J overlay paints pure red exactly at the voxels whose det J is
//    <= 0, which for the folding preset are the CPU's folded voxels except where |det J| is
//    within that bound;
//  - the warped image equals sv::warp (double, prefiltered cubic, reflect) within a bound
//    derived from the field bound and the spline's Lipschitz constant;
//  - presets and the .npy grid loader: refusals name the file and the problem.
// Exits 77 (skipped, with the reason) without a GL 4.5 context.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "deform_field.h"
#include "splineview/error.h"
#include "splineview/ffd.h"
#include "splineview/ffd_warp.h"
#include "splineview/gl/gl.h"
#include "splineview/gl/headless.h"
#include "splineview/gl/objects.h"
#include "splineview/gl/program.h"
#include "splineview/io.h"
#include "splineview/prefilter.h"

namespace {

using namespace sv::viewer;
namespace gl = sv::gl;
namespace fs = std::filesystem;

constexpr double kEps = 1.1920928955078125e-7;  // 2^-23

std::uint32_t fresh_seed() {
  static std::uint32_t next = std::random_device{}();
  return next++;
}

sv::ArrayD random_grid(const std::vector<std::size_t>& shape, const std::vector<int>& delta,
                       double amplitude, std::uint32_t seed) {
  const std::vector<std::size_t> m = sv::ffd_grid_shape(shape, delta);
  sv::ArrayD g(m, shape.size());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-amplitude, amplitude);
  for (double& v : g.vec()) v = u(rng);
  return g;
}

double max_abs(const sv::ArrayD& a) {
  double m = 0;
  for (double v : a.vec()) m = std::max(m, std::abs(v));
  return m;
}

// Coefficients of a random image in [0, 1] (double prefilter, rounded to float once), and the
// double image itself.
struct Moving {
  sv::ArrayD values;
  sv::ArrayF coefficients;
};
Moving random_moving(const std::vector<std::size_t>& shape, std::size_t channels,
                     std::uint32_t seed) {
  Moving m{sv::ArrayD(shape, channels), {}};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (double& v : m.values.vec()) v = u(rng);
  sv::ArrayD c = m.values;
  sv::prefilter(c);
  m.coefficients = sv::ArrayF::from(c);
  return m;
}

// The field bound of the per-voxel and tile kernels, per component, for a rank-R grid:
// per axis the four float weights each carry an absolute error of at most 2 eps (the fraction
// r / delta rounded once, then a few roundings on numbers <= 1; the tile kernel's rows are
// rounded once from double), so a weighted sum of control points at most max|c| in magnitude
// errs by at most 8 eps max|c| per axis, 8 R eps max|c| over the tensor product to first
// order; the nested fma sums (a chain of 4 per axis whose partial sums stay within max|c|
// because the weights are positive and sum to 1) add at most 4 R eps max|c|. Total
// 12 R eps max|c| (2-D: 24, 3-D: 36 eps max|c|).
double field_bound(std::size_t rank, double cmax) {
  return 12.0 * static_cast<double>(rank) * kEps * cmax;
}

struct Case {
  std::vector<std::size_t> shape;
  std::vector<int> delta;
};

void check_fields(const Case& c, std::uint32_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::size_t r = c.shape.size();
  const Moving moving = random_moving(c.shape, 1, seed);
  FfdGlEngine engine(moving.coefficients);
  const sv::ArrayD grid = random_grid(c.shape, c.delta, 6.0, seed + 1);
  engine.set_grid(grid, c.delta);
  const sv::ArrayD reference = sv::ffd_field_reference(grid, c.delta, c.shape);
  const sv::ArrayD detj = sv::ffd_jacobian_determinant_reference(grid, c.delta, c.shape);
  const double cmax = max_abs(grid);
  for (FfdGlKernel k : kFfdGlKernels) {
    engine.run(k);
    const sv::ArrayF field = engine.read_field(k);
    const FieldError e = field_error(field, reference);
    const double bound = k == FfdGlKernel::Texture
                             ? 2.0 * static_cast<double>(r) / 256.0 * cmax + field_bound(r, cmax)
                             : field_bound(r, cmax);
    std::printf("  %zu-D %s: max |du| %.3g = %.2f eps max|c| (bound %.2f), mean %.3g\n", r,
                ffd_gl_kernel_name(k), e.max_component, e.max_component / (kEps * cmax),
                bound / (kEps * cmax), e.mean);
    EXPECT_LE(e.max_component, bound) << ffd_gl_kernel_name(k);
    // det J: the derivative weights are the value weights' derivatives over delta (each
    // within 2 eps / delta of the exact ones, the same argument), so each entry of the
    // Jacobian errs by at most 12 R eps max|c| / min(delta); the determinant of I + D with
    // |D| entries at most g errs by at most R (1 + g)^(R-1) times that (first order).
    const sv::ArrayF gl_detj = engine.read_detj(k);
    if (k != FfdGlKernel::Texture) {
      const double g = 4.0 * cmax / *std::min_element(c.delta.begin(), c.delta.end());
      const double entry = field_bound(r, cmax) / *std::min_element(c.delta.begin(), c.delta.end());
      const double jbound =
          2.0 * static_cast<double>(r) * std::pow(1.0 + g, static_cast<double>(r - 1)) * entry;
      double worst = 0;
      for (std::size_t i = 0; i < detj.size(); ++i)
        worst = std::max(worst, std::abs(static_cast<double>(gl_detj[i]) - detj[i]));
      std::printf("  %zu-D %s: det J max error %.3g (bound %.3g)\n", r, ffd_gl_kernel_name(k),
                  worst, jbound);
      EXPECT_LE(worst, jbound) << ffd_gl_kernel_name(k);
    }
  }
}

TEST(DeformEngine, FieldsMatchTheDoubleReference2D) {
  const std::uint32_t seed = fresh_seed();
  for (const Case& c : {Case{{97, 131}, {7, 5}}, Case{{64, 64}, {8, 8}}, Case{{50, 33}, {16, 3}},
                        Case{{40, 41}, {1, 2}}})
    check_fields(c, seed);
}

TEST(DeformEngine, FieldsMatchTheDoubleReference3D) {
  const std::uint32_t seed = fresh_seed();
  for (const Case& c :
       {Case{{23, 31, 27}, {5, 6, 4}}, Case{{16, 16, 16}, {8, 8, 8}}, Case{{9, 20, 13}, {2, 7, 3}}})
    check_fields(c, seed);
}

// The view's det J overlay (deform_view.frag, overlays = det J only) drawn at one pixel per
// voxel: pure red exactly where det J <= 0.
TEST(DeformEngine, DetJOverlayIsRedExactlyWhereTheFieldFolds) {
  const std::vector<std::size_t> shape{150, 200};
  const std::vector<int> delta{16, 16};
  const Moving moving = random_moving(shape, 1, fresh_seed());
  FfdGlEngine engine(moving.coefficients);
  const sv::ArrayD grid = make_preset_grid(FfdPreset::Folding, shape, delta, 1.0);
  engine.set_grid(grid, delta);
  const sv::ArrayD cpu = sv::ffd_jacobian_determinant_reference(grid, delta, shape);
  const DetJStats cpu_stats = detj_stats(cpu);
  ASSERT_GT(cpu_stats.folded, 100u) << "the folding preset must fold";
  EXPECT_GT(cpu_stats.max, 1.0);
  // And only the folding preset folds at its default amplitude.
  for (FfdPreset p : {FfdPreset::None, FfdPreset::SmoothRandom, FfdPreset::Swirl}) {
    const double a = p == FfdPreset::SmoothRandom ? 0.25 : 0.5;
    EXPECT_EQ(detj_stats(sv::ffd_jacobian_determinant_reference(
                             make_preset_grid(p, shape, delta, a), delta, shape))
                  .folded,
              0u)
        << ffd_preset_name(p);
  }

  const int w = static_cast<int>(shape[1]), h = static_cast<int>(shape[0]);
  gl::Texture colour = gl::Texture::create_2d(GL_RGBA8, w, h);
  gl::Framebuffer fbo = gl::Framebuffer::create();
  fbo.attach_color(colour);
  fbo.check_complete();
  gl::Program program({{GL_VERTEX_SHADER, "view.vert"}, {GL_FRAGMENT_SHADER, "deform_view.frag"}},
                      {{"SV_RANK", "2"}});
  gl::VertexArray vao = gl::VertexArray::create();
  // gl_FragCoord (x + 0.5, y + 0.5), y up -> image position (x, h - 1 - y).
  glm::mat3 m(1.0f);
  m[1] = glm::vec3(0.0f, -1.0f, 0.0f);
  m[2] = glm::vec3(-0.5f, static_cast<float>(h) - 0.5f, 1.0f);
  for (FfdGlKernel k : {FfdGlKernel::PerVoxel, FfdGlKernel::Tile, FfdGlKernel::Texture}) {
    engine.run(k);
    const sv::ArrayF gl_detj = engine.read_detj(k);
    SV_GL_CHECK(glBindFramebuffer(GL_FRAMEBUFFER, fbo.id()));
    SV_GL_CHECK(glViewport(0, 0, w, h));
    SV_GL_CHECK(glUseProgram(program.id()));
    SV_GL_CHECK(glBindVertexArray(vao.id()));
    program.set(0, m);
    program.set(1, 16.0f);
    program.set(2, glm::vec2(0.0f, 1.0f));
    program.set(3, 0);
    program.set(4, 1);  // det J only
    program.set(5, glm::vec2(16.0f, 16.0f));
    program.set(6, 1e-2f);
    program.set(7, 0.6f);
    SV_GL_CHECK(glBindTextureUnit(0, engine.warped_texture(k).id()));
    SV_GL_CHECK(glBindTextureUnit(1, engine.detj_texture(k).id()));
    SV_GL_CHECK(glBindTextureUnit(2, engine.detj_texture(k).id()));
    SV_GL_CHECK(glBindTextureUnit(3, engine.field_texture(k).id()));
    SV_GL_CHECK(glDrawArrays(GL_TRIANGLES, 0, 3));
    std::vector<unsigned char> px(static_cast<std::size_t>(w * h * 4));
    SV_GL_CHECK(glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, px.data()));
    SV_GL_CHECK(glBindFramebuffer(GL_FRAMEBUFFER, 0));
    std::size_t red = 0, gl_folded = 0, disagree = 0, near_zero = 0;
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const unsigned char* p = &px[static_cast<std::size_t>(((h - 1 - y) * w + x) * 4)];
        const bool is_red = p[0] == 255 && p[1] == 0 && p[2] == 0;
        const std::size_t i = static_cast<std::size_t>(y * w + x);
        const bool folded = !(gl_detj[i] > 0.0f);
        red += is_red;
        gl_folded += folded;
        EXPECT_EQ(is_red, folded) << "pixel " << x << ", " << y;
        if (folded != !(cpu[i] > 0.0)) {
          ++disagree;
          // Only where det J is within the kernel's error of 0 (1e-4 is far above the derived
          // det J bound of check_fields for this grid, and far below the folds' depth).
          EXPECT_LT(std::abs(cpu[i]), k == FfdGlKernel::Texture ? 0.05 : 1e-4)
              << ffd_gl_kernel_name(k) << " at " << x << ", " << y;
        }
        near_zero += std::abs(cpu[i]) < 1e-4;
      }
    }
    std::printf(
        "  %s: %zu red pixels, GL folded %zu, CPU folded %zu, %zu disagree (%zu CPU "
        "|det J| < 1e-4)\n",
        ffd_gl_kernel_name(k), red, gl_folded, cpu_stats.folded, disagree, near_zero);
    if (k != FfdGlKernel::Texture) {
      EXPECT_LE(disagree, near_zero);
    }
  }
}

// The warped image against sv::warp in double. The GL warp samples the float coefficients C
// (rounded from the double prefilter: eps/2 |C|) at x + u_gl, with u_gl within the field bound
// b of the exact u and the position x + u rounded to float (eps/2 (N + |u|) per axis). A cubic
// spline's derivative along an axis is a quadratic spline on coefficient differences, so it is
// at most 2 max|C|: the value moves by at most 2 max|C| (b + eps/2 (N + |u|)) per axis. The
// precise fetch's own rounding adds 12 R eps max|C| (the field bound's argument on the
// coefficients).
void check_warp(const std::vector<std::size_t>& shape, const std::vector<int>& delta,
                std::size_t channels, std::uint32_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::size_t r = shape.size();
  const Moving moving = random_moving(shape, channels, seed);
  FfdGlEngine engine(moving.coefficients);
  const sv::ArrayD grid = make_preset_grid(FfdPreset::SmoothRandom, shape, delta, 0.4, seed);
  engine.set_grid(grid, delta);
  const sv::ArrayD expected = sv::warp(moving.values, grid, delta);
  double cmax = 0;
  for (float v : moving.coefficients.vec()) cmax = std::max(cmax, static_cast<double>(std::abs(v)));
  const double gmax = max_abs(grid);
  const double n = static_cast<double>(*std::max_element(shape.begin(), shape.end()));
  const double bound =
      2.0 * cmax * static_cast<double>(r) * (field_bound(r, gmax) + kEps / 2 * (n + gmax)) +
      12.0 * static_cast<double>(r) * kEps * cmax + kEps / 2 * cmax;
  for (FfdGlKernel k : {FfdGlKernel::PerVoxel, FfdGlKernel::Tile}) {
    engine.run(k);
    const sv::ArrayF warped = engine.read_warped(k);
    ASSERT_EQ(warped.dims(), expected.dims());
    ASSERT_EQ(warped.channels(), expected.channels());
    double worst = 0;
    for (std::size_t i = 0; i < expected.size(); ++i)
      worst = std::max(worst, std::abs(static_cast<double>(warped[i]) - expected[i]));
    std::printf("  %zu-D %zu ch %s: warped vs sv::warp max %.3g (bound %.3g)\n", r, channels,
                ffd_gl_kernel_name(k), worst, bound);
    EXPECT_LE(worst, bound) << ffd_gl_kernel_name(k);
  }
}

TEST(DeformEngine, WarpedImageEqualsSvWarp) {
  check_warp({90, 70}, {8, 8}, 1, fresh_seed());
  check_warp({61, 80}, {10, 6}, 3, fresh_seed());
  check_warp({20, 24, 18}, {5, 6, 4}, 1, fresh_seed());
}

// ---- presets, spacing and the grid loader (no GL) ----

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("sv_deform_" + std::to_string(fresh_seed()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const sv::Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(DeformGrid, LoadsNpyGridsAndRefusesBadOnesByName) {
  TempDir dir;
  const std::vector<std::size_t> shape{40, 50};
  const std::vector<int> delta{8, 8};
  const sv::ArrayD good = random_grid(shape, delta, 2.0, fresh_seed());
  sv::save_any(dir.file("good.npy"), good, sv::DType::F64, true);
  const sv::ArrayD loaded = load_ffd_grid(dir.file("good.npy"), delta, shape);
  EXPECT_EQ(loaded.dims(), good.dims());
  EXPECT_EQ(loaded.vec(), good.vec());

  std::string msg = error_of([&] { load_ffd_grid(dir.file("missing.npy"), delta, shape); });
  EXPECT_NE(msg.find("missing.npy"), std::string::npos) << msg;
  // Three components for a 2-D image.
  sv::ArrayD three(good.dims(), 3);
  sv::save_any(dir.file("three.npy"), three, sv::DType::F64, true);
  msg = error_of([&] { load_ffd_grid(dir.file("three.npy"), delta, shape); });
  EXPECT_NE(msg.find("three.npy"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(M_y, M_x, 2)"), std::string::npos) << msg;
  // Too few control points along x.
  sv::ArrayD small({good.dim(0), good.dim(1) - 1}, 2);
  sv::save_any(dir.file("small.npy"), small, sv::DType::F64, true);
  msg = error_of([&] { load_ffd_grid(dir.file("small.npy"), delta, shape); });
  EXPECT_NE(msg.find("small.npy"), std::string::npos) << msg;
  EXPECT_NE(msg.find("x"), std::string::npos) << msg;
  // A NaN.
  sv::ArrayD nan = good;
  nan[5] = std::numeric_limits<double>::quiet_NaN();
  sv::save_any(dir.file("nan.npy"), nan, sv::DType::F64, true);
  msg = error_of([&] { load_ffd_grid(dir.file("nan.npy"), delta, shape); });
  EXPECT_NE(msg.find("nan.npy"), std::string::npos) << msg;
  EXPECT_NE(msg.find("finite"), std::string::npos) << msg;
}

TEST(DeformGrid, SpacingAndNames) {
  EXPECT_EQ(parse_spacing("8", 2), (std::vector<int>{8, 8}));
  EXPECT_EQ(parse_spacing("4x8x6", 3), (std::vector<int>{4, 8, 6}));
  EXPECT_NE(error_of([] { parse_spacing("8x", 2); }).find("--spacing"), std::string::npos);
  EXPECT_NE(error_of([] { parse_spacing("0", 2); }).find("--spacing"), std::string::npos);
  EXPECT_NE(error_of([] { parse_spacing("4x4x4", 2); }).find("3 values"), std::string::npos);
  for (FfdGlKernel k : kFfdGlKernels) EXPECT_EQ(parse_ffd_gl_kernel(ffd_gl_kernel_name(k)), k);
  EXPECT_NE(error_of([] { parse_ffd_gl_kernel("cuda"); }).find("cuda"), std::string::npos);
  EXPECT_EQ(parse_ffd_preset("folding"), FfdPreset::Folding);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::unique_ptr<gl::HeadlessContext> context;
  try {
    context = std::make_unique<gl::HeadlessContext>();
  } catch (const std::exception& e) {
    std::printf("skipped: no headless GL 4.5 context: %s\n", e.what());
    return 77;
  }
  std::printf("headless GL: %s (EGL platform %s)\n", context->description().c_str(),
              context->platform().c_str());
  return RUN_ALL_TESTS();
}
