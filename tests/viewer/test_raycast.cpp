// Tests of the ray-cast 3-D view (raycast_reference.h, raycast_renderer.h, shaders/raycast.comp)
// in a headless EGL context, each against an oracle that does not share the shader's code:
//  - MIP of a smooth synthetic volume (fresh random Gaussian blobs, anisotropic voxels, an
//    oriented affine) against a ray march written here: rays from the camera through
//    sv::world_to_index, the same segment midpoints, values from sv::sample in double (degree 1
//    on the samples, degree 3 on the double prefilter), within a derived float bound; the
//    empty-space skipping changes no bit; the view's own CPU march (march_ray) agrees with this
//    one to double rounding;
//  - the isosurface of a sphere sampled as a signed distance volume: hit depth and normal
//    against the analytic ray-sphere intersection, and the cubic's normals measurably smoother
//    (angular error) than trilinear's central differences;
//  - DVR of a constant volume against the closed form 1 - exp(-sigma L) over the analytic chord
//    length L of each ray through the box;
//  - every skipping variant (cells, the precise cubic's per-sample Bezier ranges, the MIP's
//    first visit) changes no bit of any mode and method on sharp-edged and noisy volumes, and
//    the ranges hold the interpolants (double evaluations at random points).
// Exits 77 (skipped, with the reason) without a GL 4.5 context.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "raycast_reference.h"
#include "raycast_renderer.h"
#include "splineview/error.h"
#include "splineview/geometry.h"
#include "splineview/gl/gl.h"
#include "splineview/gl/headless.h"
#include "splineview/prefilter.h"
#include "splineview/sampler.h"

namespace {

using namespace sv::viewer;
namespace gl = sv::gl;

std::uint32_t fresh_seed() {
  static std::uint32_t next = std::random_device{}();
  return next++;
}

// An R32F 3-D texture with the volume documents' parameters (GL_LINEAR, GL_MIRRORED_REPEAT).
gl::Texture texture_of(const sv::ArrayF& a) {
  gl::Texture t =
      gl::Texture::create_3d(GL_R32F, static_cast<int>(a.dims()[2]), static_cast<int>(a.dims()[1]),
                             static_cast<int>(a.dims()[0]));
  t.set_filter(GL_LINEAR, GL_LINEAR);
  t.set_wrap(GL_MIRRORED_REPEAT);
  t.upload(GL_RED, GL_FLOAT, a.data());
  return t;
}

// A volume on the GPU as the volume mode holds it: samples and float coefficients (CPU
// prefilter, reflect) in R32F textures with the documents' parameters.
struct GpuVolume {
  sv::ArrayF samples, coefficients;
  sv::ArrayD exact, exact_coefficients;
  gl::Texture samples_tex, coefficients_tex;
  sv::Geometry geometry;
  std::array<std::size_t, 3> dims{};

  GpuVolume(const sv::ArrayD& values, const sv::Geometry& g) : exact(values), geometry(g) {
    dims = {values.dims()[0], values.dims()[1], values.dims()[2]};
    samples = sv::ArrayF::from(values);
    coefficients = samples;
    sv::prefilter(coefficients, sv::PrefilterOptions{3, sv::Boundary::Reflect, 0});
    exact_coefficients = exact;
    sv::prefilter(exact_coefficients, sv::PrefilterOptions{3, sv::Boundary::Reflect, 0});
    samples_tex = texture_of(samples);
    coefficients_tex = texture_of(coefficients);
  }
  RaycastVolume view() const { return {&samples_tex, &coefficients_tex, dims, geometry}; }
};

// An oriented, anisotropic affine: spacing (sx, sy, sz) mm along the index axes, rotated about
// the world z axis by `deg`, origin somewhere off zero.
sv::Geometry tilted_geometry(double sx, double sy, double sz, double deg) {
  const double a = deg * 3.14159265358979323846 / 180.0;
  sv::Geometry g;
  g.affine = {{{std::cos(a) * sx, -std::sin(a) * sy, 0.0, -31.0},
               {std::sin(a) * sx, std::cos(a) * sy, 0.0, 12.5},
               {0.0, 0.0, sz, 40.0},
               {0.0, 0.0, 0.0, 1.0}}};
  g.source = "test";
  return g;
}

// The test's own ray of pixel (x, y): world direction from the camera's basis, then index space
// through sv::world_to_index of two points.
struct TestRay {
  glm::dvec3 eye_idx, dir;  // index space, dir unit
  double mm = 1.0;          // mm per index unit
  glm::dvec3 eye_w, dir_w;  // world, dir_w unit
};
TestRay test_ray(const OrbitCamera& cam, const sv::Geometry& g, int w, int h, int x, int y) {
  const double s = 2.0 * std::tan(cam.fov_deg * 3.14159265358979323846 / 360.0) / std::min(w, h);
  const glm::dvec3 world_dir =
      cam.forward() + (x + 0.5 - w / 2.0) * s * cam.right() + (y + 0.5 - h / 2.0) * s * cam.up();
  const glm::dvec3 e = cam.eye();
  const sv::Vec3 a = sv::world_to_index(g, {e.x, e.y, e.z});
  const glm::dvec3 f = e + world_dir;
  const sv::Vec3 b = sv::world_to_index(g, {f.x, f.y, f.z});
  TestRay r;
  r.eye_idx = {a[0], a[1], a[2]};
  const glm::dvec3 d = glm::dvec3(b[0], b[1], b[2]) - r.eye_idx;
  r.dir = glm::normalize(d);
  r.mm = glm::length(world_dir) / glm::length(d);
  r.eye_w = e;
  r.dir_w = glm::normalize(world_dir);
  return r;
}

// The midpoints of the ray's segments through the box (index units along the ray).
std::vector<double> midpoints(const TestRay& r, const glm::dvec3& n, double h, double* t0_out,
                              double* t1_out) {
  double t0 = 0.0, t1 = 1e300;
  for (int a = 0; a < 3; ++a) {
    const double u = (-0.5 - r.eye_idx[a]) / r.dir[a], v = (n[a] - 0.5 - r.eye_idx[a]) / r.dir[a];
    t0 = std::max(t0, std::min(u, v));
    t1 = std::min(t1, std::max(u, v));
  }
  std::vector<double> mids;
  if (t0_out) *t0_out = t0;
  if (t1_out) *t1_out = t1;
  if (!(t0 < t1)) return mids;
  for (double a = t0; a < t1; a += 0.0) {
    const auto k = static_cast<double>(mids.size());
    const double lo = t0 + k * h;
    if (lo >= t1) break;
    mids.push_back(0.5 * (lo + std::min(lo + h, t1)));
    a = lo + h;
  }
  return mids;
}

// sv::sample at index-space points (texture order x, y, z).
std::vector<double> sample_at(const sv::ArrayD& data, int degree,
                              const std::vector<glm::dvec3>& points) {
  std::vector<double> pos;
  for (const glm::dvec3& p : points) {
    pos.push_back(p.z);
    pos.push_back(p.y);
    pos.push_back(p.x);
  }
  sv::SamplerOptions opt;
  opt.degree = degree;
  opt.threads = 1;
  return sv::sample(data, pos, opt);
}

// Smooth blobs: sum of Gaussians of width 2.5..4 voxels, values in about [0, 1].
sv::ArrayD blobs(const std::array<std::size_t, 3>& dims, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  struct Blob {
    double x, y, z, s, a;
  };
  std::vector<Blob> bl;
  for (int i = 0; i < 7; ++i)
    bl.push_back({u(rng) * static_cast<double>(dims[2]), u(rng) * static_cast<double>(dims[1]),
                  u(rng) * static_cast<double>(dims[0]), 2.5 + 1.5 * u(rng), 0.3 + 0.7 * u(rng)});
  sv::ArrayD a({dims[0], dims[1], dims[2]}, 1);
  for (std::size_t z = 0; z < dims[0]; ++z)
    for (std::size_t y = 0; y < dims[1]; ++y)
      for (std::size_t x = 0; x < dims[2]; ++x) {
        double v = 0.0;
        for (const Blob& b : bl) {
          const double dx = static_cast<double>(x) - b.x, dy = static_cast<double>(y) - b.y,
                       dz = static_cast<double>(z) - b.z;
          const double d2 = dx * dx + dy * dy + dz * dz;
          v += b.a * std::exp(-d2 / (2.0 * b.s * b.s));
        }
        a.data()[(z * dims[1] + y) * dims[2] + x] = v;
      }
  return a;
}

// The angle between two unit vectors in degrees, well conditioned near 0 (acos of a dot product
// near 1 is not: float normals would read as 0.03 degrees apart when equal to 1e-7).
double angle_deg(const glm::dvec3& a, const glm::dvec3& b) {
  return 2.0 * std::asin(std::min(1.0, glm::length(a - b) / 2.0)) * 180.0 / 3.14159265358979323846;
}

// The largest difference between neighbouring texels along any axis (the scale of a hardware
// filter weight's rounding error).
double max_neighbour_difference(const sv::ArrayF& a) {
  const auto& d = a.dims();
  double m = 0.0;
  for (std::size_t z = 0; z < d[0]; ++z)
    for (std::size_t y = 0; y < d[1]; ++y)
      for (std::size_t x = 0; x < d[2]; ++x) {
        const std::size_t i = (z * d[1] + y) * d[2] + x;
        const double v = a.data()[i];
        if (x + 1 < d[2]) m = std::max(m, std::abs(a.data()[i + 1] - v));
        if (y + 1 < d[1]) m = std::max(m, std::abs(a.data()[i + d[2]] - v));
        if (z + 1 < d[0]) m = std::max(m, std::abs(a.data()[i + d[1] * d[2]] - v));
      }
  return m;
}

TEST(Raycast, MipMatchesAnIndependentMarchWithTheSameStep) {
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::array<std::size_t, 3> dims = {14, 22, 26};
  GpuVolume vol(blobs(dims, seed), tilted_geometry(1.2, 0.9, 2.0, 25.0));
  RaycastRenderer renderer;
  renderer.set_volume(vol.view());
  const OrbitCamera cam = fit_camera(vol.geometry, dims, 35.0, 20.0);
  const int w = 48, h = 36;
  const RayFrame frame = ray_frame(cam, vol.geometry, dims, w, h);
  RaySettings st;
  st.mode = RayMode::Mip;
  st.step = 0.37;
  const WindowLevel wl{1.0, 0.5};
  const glm::dvec3 n(static_cast<double>(dims[2]), static_cast<double>(dims[1]),
                     static_cast<double>(dims[0]));
  // Float ray parameters move a sample by about 1e-5 voxel (|position| < 100, several roundings),
  // values change by |grad| <= 0.5 per voxel times that; a hardware filter weight (NVIDIA: 8
  // fractional bits) errs by up to 2^-9 of a neighbour difference per axis and per lerp level.
  const double position_term = 1e-4;
  const double hw_samples = 3.0 * std::ldexp(1.0, -9) * max_neighbour_difference(vol.samples);
  const double hw_coefficients =
      6.0 * std::ldexp(1.0, -9) * max_neighbour_difference(vol.coefficients);
  for (gl::Fetch method : kRayMethods) {
    SCOPED_TRACE(ray_method_label(method));
    const bool cubic = method != gl::Fetch::Linear;
    const sv::ArrayD& data = cubic ? vol.exact_coefficients : vol.exact;
    const RaySpline spline(data, cubic ? 3 : 1);
    const double bound = position_term + (method == gl::Fetch::CubicPrecise ? 1e-5
                                          : cubic                           ? hw_coefficients
                                                                            : hw_samples);
    int cols = 0, rows = 0;
    RayDrawOptions skip_on, skip_off;
    skip_off.skip = false;
    const std::vector<glm::vec4> gpu =
        renderer.measure(method, frame, st, wl, skip_on, 1, 0, &cols, &rows);
    const std::vector<glm::vec4> gpu_noskip =
        renderer.measure(method, frame, st, wl, skip_off, 1, 0, &cols, &rows);
    ASSERT_EQ(cols, w);
    ASSERT_EQ(rows, h);
    double worst = 0.0, worst_vs_view_march = 0.0;
    int hits = 0, skipped_differs = 0;
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const std::size_t i = static_cast<std::size_t>(y * w + x);
        if (gpu[i].x != gpu_noskip[i].x) ++skipped_differs;
        const TestRay r = test_ray(cam, vol.geometry, w, h, x, y);
        const std::vector<double> mids = midpoints(r, n, st.step, nullptr, nullptr);
        const RayResult view_march = march_ray(spline, frame, st, x, y);
        ASSERT_EQ(gpu[i].y > 0.5f, !mids.empty()) << "pixel " << x << "," << y;
        ASSERT_EQ(view_march.hit, !mids.empty());
        if (mids.empty()) continue;
        std::vector<glm::dvec3> pts;
        for (double t : mids) pts.push_back(r.eye_idx + t * r.dir);
        const std::vector<double> v = sample_at(data, cubic ? 3 : 1, pts);
        const double mip = *std::max_element(v.begin(), v.end());
        worst = std::max(worst, std::abs(static_cast<double>(gpu[i].x) - mip));
        worst_vs_view_march = std::max(worst_vs_view_march, std::abs(view_march.value - mip));
        ++hits;
      }
    }
    std::printf("  MIP %s: %d rays, worst |GPU - march| %.3g (bound %.3g); view's CPU march %.3g\n",
                ray_method_label(method), hits, worst, bound, worst_vs_view_march);
    EXPECT_GT(hits, w * h / 4);
    EXPECT_LE(worst, bound);
    // Both marches in double, their rays and box entries computed by different formulae (the
    // camera's basis here, the frame's pixel steps there): positions agree to about 1e-14 of
    // |t| ~ 100 voxels, values to 1e-12 (once seen at 1.02e-12 with |grad| near 1 per voxel).
    EXPECT_LE(worst_vs_view_march, 1e-10);
    EXPECT_EQ(skipped_differs, 0) << "empty-space skipping changed the result";
  }
}

// A sphere of radius R mm about c in a volume of anisotropic voxels, sampled as the signed
// distance R - |x - c| (positive inside).
struct SphereVolume {
  double radius = 11.0;
  glm::dvec3 centre{0.0};
  sv::Geometry geometry = tilted_geometry(0.9, 1.0, 1.4, 10.0);
  std::array<std::size_t, 3> dims = {24, 34, 32};
  sv::ArrayD values() {
    const sv::Vec3 c = sv::index_to_world(geometry, {15.3, 16.8, 11.6});
    centre = {c[0], c[1], c[2]};
    sv::ArrayD a({dims[0], dims[1], dims[2]}, 1);
    for (std::size_t z = 0; z < dims[0]; ++z)
      for (std::size_t y = 0; y < dims[1]; ++y)
        for (std::size_t x = 0; x < dims[2]; ++x) {
          const sv::Vec3 p = sv::index_to_world(
              geometry, {static_cast<double>(x), static_cast<double>(y), static_cast<double>(z)});
          a.data()[(z * dims[1] + y) * dims[2] + x] =
              radius - glm::length(glm::dvec3(p[0], p[1], p[2]) - centre);
        }
    return a;
  }
};

TEST(Raycast, IsosurfaceOfASphereMatchesTheAnalyticSphere) {
  SphereVolume sphere;
  GpuVolume vol(sphere.values(), sphere.geometry);
  RaycastRenderer renderer;
  renderer.set_volume(vol.view());
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  OrbitCamera cam =
      fit_camera(vol.geometry, vol.dims, std::uniform_real_distribution<>(-180, 180)(rng),
                 std::uniform_real_distribution<>(-60, 60)(rng));
  cam.zoom(5.0);  // the sphere fills most of the pane
  const int w = 64, h = 64;
  const RayFrame frame = ray_frame(cam, vol.geometry, vol.dims, w, h);
  RaySettings st;
  st.mode = RayMode::Iso;
  st.iso = 0.0;
  st.step = 0.5;
  const WindowLevel wl{1.0, 0.5};
  double rms_angle[3] = {0, 0, 0};
  for (std::size_t m = 0; m < kRayMethods.size(); ++m) {
    const gl::Fetch method = kRayMethods[m];
    SCOPED_TRACE(ray_method_label(method));
    int cols = 0, rows = 0;
    RayDrawOptions skip_off;
    skip_off.skip = false;
    const std::vector<glm::vec4> gpu =
        renderer.measure(method, frame, st, wl, RayDrawOptions{}, 1, 0, &cols, &rows);
    const std::vector<glm::vec4> gpu_noskip =
        renderer.measure(method, frame, st, wl, skip_off, 1, 0, &cols, &rows);
    double worst_depth = 0.0, sum_angle2 = 0.0, worst_angle = 0.0;
    int hits = 0, mismatched = 0, skip_differs = 0;
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const std::size_t i = static_cast<std::size_t>(y * w + x);
        if (gpu[i] != gpu_noskip[i]) ++skip_differs;
        const TestRay r = test_ray(cam, vol.geometry, w, h, x, y);
        // Analytic first intersection of the world ray with the sphere.
        const glm::dvec3 oc = r.eye_w - sphere.centre;
        const double b = glm::dot(oc, r.dir_w);
        const double disc = b * b - (glm::dot(oc, oc) - sphere.radius * sphere.radius);
        const bool analytic_hit = disc > 0.0;
        // Grazing rays (within 0.3 mm of the silhouette) may go either way.
        const double miss_distance = std::sqrt(std::max(0.0, glm::dot(oc, oc) - b * b));
        const bool grazing = std::abs(miss_distance - sphere.radius) < 0.3;
        const bool gpu_hit = gpu[i].x >= 0.0f;
        if (gpu_hit != analytic_hit) {
          if (!grazing) ++mismatched;
          continue;
        }
        if (!gpu_hit || grazing) continue;
        const double depth = -b - std::sqrt(disc);
        const glm::dvec3 normal = glm::normalize(r.eye_w + depth * r.dir_w - sphere.centre);
        worst_depth = std::max(worst_depth, std::abs(static_cast<double>(gpu[i].x) - depth));
        const double angle = angle_deg(glm::dvec3(gpu[i].y, gpu[i].z, gpu[i].w), normal);
        sum_angle2 += angle * angle;
        worst_angle = std::max(worst_angle, angle);
        ++hits;
      }
    }
    rms_angle[m] = std::sqrt(sum_angle2 / std::max(hits, 1));
    std::printf(
        "  iso sphere %s: %d hits, worst depth error %.4f mm, normal error rms %.3f max %.3f "
        "deg, %d misclassified\n",
        ray_method_label(method), hits, worst_depth, rms_angle[m], worst_angle, mismatched);
    EXPECT_GT(hits, w * h / 6);
    EXPECT_EQ(mismatched, 0);
    EXPECT_EQ(skip_differs, 0) << "empty-space skipping changed the result";
    // The interpolants of a distance function: the cubic's error near the surface is far below
    // a voxel; trilinear's is bounded by the function's curvature over a voxel (h^2 / (8 R)).
    EXPECT_LE(worst_depth, method == gl::Fetch::Linear ? 0.25 : 0.05);
    EXPECT_LE(rms_angle[m], method == gl::Fetch::Linear ? 6.0 : 1.0);
  }
  // Cubic normals are smoother: at most half trilinear's RMS angular error, precise and otf.
  EXPECT_LT(rms_angle[0], 0.5 * rms_angle[2]);
  EXPECT_LT(rms_angle[1], 0.5 * rms_angle[2]);
}

TEST(Raycast, IsosurfaceDepthAgreesWithTheCpuMarch) {
  SphereVolume sphere;
  GpuVolume vol(sphere.values(), sphere.geometry);
  RaycastRenderer renderer;
  renderer.set_volume(vol.view());
  OrbitCamera cam = fit_camera(vol.geometry, vol.dims, 20.0, 10.0);
  cam.zoom(5.0);
  const int w = 40, h = 30;
  const RayFrame frame = ray_frame(cam, vol.geometry, vol.dims, w, h);
  RaySettings st;
  st.mode = RayMode::Iso;
  st.iso = 0.0;
  const RaySpline spline(vol.exact_coefficients, 3);
  int cols = 0, rows = 0;
  const std::vector<glm::vec4> gpu =
      renderer.measure(gl::Fetch::CubicPrecise, frame, st, WindowLevel{}, {}, 1, 0, &cols, &rows);
  double worst = 0.0, worst_angle = 0.0;
  int compared = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const RayResult r = march_ray(spline, frame, st, x, y);
      const glm::vec4 g = gpu[static_cast<std::size_t>(y * w + x)];
      if (r.hit != (g.x >= 0.0f)) continue;  // grazing rays
      if (!r.hit) continue;
      worst = std::max(worst, std::abs(r.depth_mm - g.x));
      worst_angle = std::max(worst_angle, angle_deg(r.normal, glm::dvec3(g.y, g.z, g.w)));
      ++compared;
    }
  std::printf("  iso precise vs the CPU march: %d rays, depth %.3g mm, normal %.3g deg\n", compared,
              worst, worst_angle);
  EXPECT_GT(compared, w * h / 6);
  EXPECT_LE(worst, 1e-3);
  EXPECT_LE(worst_angle, 0.01);
}

// Shaded DVR of smooth blobs (colour scaled by the gradient headlight) against the CPU march in
// double, every method; and the constant volume below stays unshaded (its gradient vanishes).
TEST(Raycast, ShadedDvrMatchesTheCpuMarch) {
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::array<std::size_t, 3> dims = {14, 22, 26};
  GpuVolume vol(blobs(dims, seed), tilted_geometry(1.1, 0.9, 1.6, -15.0));
  RaycastRenderer renderer;
  renderer.set_volume(vol.view());
  const OrbitCamera cam = fit_camera(vol.geometry, dims, -40.0, 30.0);
  const int w = 40, h = 30;
  const RayFrame frame = ray_frame(cam, vol.geometry, dims, w, h);
  RaySettings st;
  st.mode = RayMode::Dvr;
  st.dvr_shade = true;
  st.tf = make_transfer_function("CT bone", 0.1, 0.9, 0.3);
  const RaySpline linear(vol.exact, 1), cubic(vol.exact_coefficients, 3);
  for (gl::Fetch method : kRayMethods) {
    SCOPED_TRACE(ray_method_label(method));
    int cols = 0, rows = 0;
    const std::vector<glm::vec4> gpu =
        renderer.measure(method, frame, st, WindowLevel{}, {}, 1, 0, &cols, &rows);
    std::vector<RayResult> ref;
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        ref.push_back(march_ray(method == gl::Fetch::Linear ? linear : cubic, frame, st, x, y));
    const RayErrors e = compare_rays(RayMode::Dvr, gpu, ref);
    double opacity = 0.0;
    for (const RayResult& r : ref) opacity = std::max(opacity, r.rgba.a);
    std::printf("  shaded DVR %s: %zu rays, rms %.3g max %.3g, largest opacity %.2f\n",
                ray_method_label(method), e.rays, e.rms, e.max, opacity);
    EXPECT_GT(opacity, 0.3);
    // Float rays and weights (1e-6 class on llvmpipe); 8-bit hardware weights on NVIDIA would
    // need about 1e-3.
    EXPECT_LE(e.max, method == gl::Fetch::CubicPrecise ? 1e-4 : 2e-3);
    // The shading is on: the same rays unshaded differ visibly.
    RaySettings flat = st;
    flat.dvr_shade = false;
    const std::vector<glm::vec4> unshaded =
        renderer.measure(method, frame, flat, WindowLevel{}, {}, 1, 0, &cols, &rows);
    float largest = 0.0f;
    for (std::size_t i = 0; i < gpu.size(); ++i)
      largest = std::max(largest, std::abs(gpu[i].r - unshaded[i].r));
    EXPECT_GT(largest, 0.05f);
  }
}

TEST(Raycast, DvrOfAConstantVolumeIsOneMinusExpOfTauL) {
  const std::array<std::size_t, 3> dims = {12, 18, 20};
  sv::ArrayD values({dims[0], dims[1], dims[2]}, 1);
  std::fill(values.vec().begin(), values.vec().end(), 0.5);
  const sv::Geometry g = sv::geometry_from_spacing({2.0, 1.0, 1.5});
  GpuVolume vol(values, g);
  RaycastRenderer renderer;
  renderer.set_volume(vol.view());
  const OrbitCamera cam = fit_camera(g, dims, 40.0, 25.0);
  const int w = 40, h = 32;
  const RayFrame frame = ray_frame(cam, g, dims, w, h);
  RaySettings st;
  st.mode = RayMode::Dvr;
  st.step = 0.5;
  st.dvr_cutoff = 2.0;  // no early termination
  st.dvr_shade = true;  // a constant volume has no gradient: no shading
  st.tf = make_transfer_function("grey ramp", 0.0, 1.0, 0.06);
  const double sigma = st.tf.lookup(0.5).a * st.tf.opacity_per_mm;
  const glm::dvec3 rgb = glm::dvec3(st.tf.lookup(0.5));
  // The box in world mm: index [-1/2, N - 1/2] times the spacing (x, y, z).
  const glm::dvec3 lo(-0.5 * 1.5, -0.5 * 1.0, -0.5 * 2.0);
  const glm::dvec3 hi((static_cast<double>(dims[2]) - 0.5) * 1.5,
                      (static_cast<double>(dims[1]) - 0.5) * 1.0,
                      (static_cast<double>(dims[0]) - 0.5) * 2.0);
  for (gl::Fetch method : kRayMethods) {
    SCOPED_TRACE(ray_method_label(method));
    int cols = 0, rows = 0;
    const std::vector<glm::vec4> gpu =
        renderer.measure(method, frame, st, WindowLevel{}, {}, 1, 0, &cols, &rows);
    double worst = 0.0, largest = 0.0;
    int inside = 0;
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const TestRay r = test_ray(cam, g, w, h, x, y);
        double t0 = 0.0, t1 = 1e300;
        for (int a = 0; a < 3; ++a) {
          const double u = (lo[a] - r.eye_w[a]) / r.dir_w[a], v = (hi[a] - r.eye_w[a]) / r.dir_w[a];
          t0 = std::max(t0, std::min(u, v));
          t1 = std::min(t1, std::max(u, v));
        }
        const double chord = std::max(0.0, t1 - t0);
        const double alpha = 1.0 - std::exp(-sigma * chord);
        const glm::vec4 v = gpu[static_cast<std::size_t>(y * w + x)];
        if (chord > 0.5) ++inside;
        largest = std::max(largest, alpha);
        worst = std::max(worst, static_cast<double>(std::abs(v.a - alpha)));
        for (int c = 0; c < 3; ++c) worst = std::max(worst, std::abs(v[c] - alpha * rgb[c]));
      }
    std::printf("  DVR constant %s: worst |GPU - (1 - exp(-sigma L))| %.3g, largest opacity %.3f\n",
                ray_method_label(method), worst, largest);
    EXPECT_GT(inside, w * h / 4);
    EXPECT_GT(largest, 0.5);
    EXPECT_LE(worst, 2e-5);
  }
}

// Quantised blobs with hard edges (a uint8 scan's skin): the prefilter's coefficients ring there,
// which is where loose bounds would show. On a background of 0 (air) the coefficients' tails
// decay into the subnormal range, where GPUs may flush one pass's arithmetic and not another's.
sv::ArrayD sharp_blobs(const std::array<std::size_t, 3>& dims, std::uint32_t seed,
                       double background) {
  sv::ArrayD a = blobs(dims, seed);
  for (double& v : a.vec()) v = v > 0.35 ? std::round(160.0 + 95.0 * std::min(1.0, v)) : background;
  return a;
}

// Empty-space skipping in every variant (RayDrawOptions: cells; cells and the precise cubic's
// per-sample Bezier ranges; cells and the MIP's first visit; all) gives the same bits as the
// march without skipping, for every mode and method, on sharp-edged blobs and on noise, from a
// random camera (MIP: value and hit; isosurface and DVR: all four outputs).
TEST(Raycast, SkippingChangesNoBitInAnyModeMethodOrVariant) {
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const std::array<std::size_t, 3> dims = {18, 27, 31};
  sv::ArrayD noise({dims[0], dims[1], dims[2]}, 1);
  std::uniform_real_distribution<double> u(0.0, 255.0);
  for (double& v : noise.vec()) v = std::round(u(rng));
  // Air: sharp blobs in the first 24 columns of a volume 100 columns long, zero beyond (the
  // coefficients decay by 0.27 per voxel, below the smallest normal float after about 70).
  const std::array<std::size_t, 3> air_dims = {14, 16, 100};
  sv::ArrayD air({air_dims[0], air_dims[1], air_dims[2]}, 1);
  const sv::ArrayD head = sharp_blobs({air_dims[0], air_dims[1], 24}, seed, 0.0);
  for (std::size_t z = 0; z < air_dims[0]; ++z)
    for (std::size_t y = 0; y < air_dims[1]; ++y)
      for (std::size_t x = 0; x < 24; ++x)
        air.data()[(z * air_dims[1] + y) * air_dims[2] + x] =
            head.data()[(z * air_dims[1] + y) * 24 + x];
  const char* names[3] = {"sharp blobs", "sharp blobs in air", "noise"};
  for (int which = 0; which < 3; ++which) {
    SCOPED_TRACE(names[which]);
    GpuVolume vol(which == 0   ? sharp_blobs(dims, seed, 20.0)
                  : which == 1 ? air
                               : noise,
                  tilted_geometry(1.0, 1.1, 1.7, 30.0));
    const std::array<std::size_t, 3>& vdims = which == 1 ? air_dims : dims;
    RaycastRenderer renderer;
    renderer.set_volume(vol.view());
    OrbitCamera cam =
        fit_camera(vol.geometry, vdims, std::uniform_real_distribution<>(-180, 180)(rng),
                   std::uniform_real_distribution<>(-60, 60)(rng));
    cam.zoom(std::uniform_real_distribution<>(0, 6)(rng));
    const int w = 40, h = 32;
    const RayFrame frame = ray_frame(cam, vol.geometry, vdims, w, h);
    const WindowLevel wl = WindowLevel::from_range(0.0, 255.0);
    for (RayMode mode : kRayModes) {
      RaySettings st;
      st.mode = mode;
      st.step = std::uniform_real_distribution<>(0.3, 0.8)(rng);
      st.iso = std::uniform_real_distribution<>(60.0, 200.0)(rng);
      st.tf = make_transfer_function("MRI soft tissue", 0.0, 255.0, 0.3);
      for (gl::Fetch method : kRayMethodChoices) {
        SCOPED_TRACE(std::string(ray_mode_name(mode)) + " " + ray_method_label(method));
        int cols = 0, rows = 0;
        RayDrawOptions off;
        off.skip = false;
        const std::vector<glm::vec4> ref =
            renderer.measure(method, frame, st, wl, off, 1, 0, &cols, &rows);
        double fetched_cells = 0.0, fetched_all = 0.0, no_skip = 0.0;
        for (int variant = 0; variant < 4; ++variant) {
          RayDrawOptions opt;
          opt.fine_bounds = (variant & 1) != 0;
          opt.mip_first_visit = (variant & 2) != 0;
          const std::vector<glm::vec4> got =
              renderer.measure(method, frame, st, wl, opt, 1, 0, &cols, &rows);
          int differs = 0;
          for (std::size_t i = 0; i < got.size(); ++i) {
            if (mode == RayMode::Mip) {
              differs += got[i].x != ref[i].x || got[i].y != ref[i].y;
              if (variant == 0) fetched_cells += got[i].z;
              if (variant == 3) fetched_all += got[i].z;
              if (variant == 0) no_skip += ref[i].z;
            } else {
              differs += got[i] != ref[i];
            }
          }
          EXPECT_EQ(differs, 0) << "variant: fine bounds " << opt.fine_bounds << ", first visit "
                                << opt.mip_first_visit;
        }
        if (mode == RayMode::Mip)
          std::printf("  %s MIP %s: samples fetched %.0f without skipping, %.0f cells, %.0f all\n",
                      names[which], ray_method_label(method), no_skip, fetched_cells, fetched_all);
      }
    }
  }
}

// The empty-space grid's ranges hold every value a sample in the cell can take (with the half
// voxel of slack the shader relies on): the samples' range for trilinear, the coefficients' range
// for the cubic, checked in double at random points of every cell of rough noise and of smooth
// blobs. This is the property that makes skipping change no result.
TEST(Raycast, EmptySpaceRangesHoldTheInterpolants) {
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const std::array<std::size_t, 3> dims = {13, 21, 18};
  sv::ArrayD noise({dims[0], dims[1], dims[2]}, 1);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (double& v : noise.vec()) v = u(rng);
  for (int which = 0; which < 2; ++which) {
    const sv::ArrayD values = which == 0 ? noise : blobs(dims, seed);
    GpuVolume vol(values, sv::geometry_from_spacing({1.0, 1.0, 1.0}));
    RaycastRenderer renderer;
    renderer.set_volume(vol.view());
    const RaySpline linear(vol.exact, 1), cubic(vol.exact_coefficients, 3);
    const auto read = [](const gl::Texture& t) {
      std::vector<glm::vec2> v(static_cast<std::size_t>(t.width() * t.height() * t.depth()));
      glGetTextureImage(t.id(), 0, GL_RG, GL_FLOAT,
                        static_cast<GLsizei>(v.size() * sizeof(glm::vec2)), v.data());
      return v;
    };
    const gl::Texture& grid = renderer.cells(true);
    const std::vector<glm::vec2> rs = read(renderer.cells(false)), rc = read(grid);
    int outside = 0, checked = 0;
    for (int z = 0; z < grid.depth(); ++z)
      for (int y = 0; y < grid.height(); ++y)
        for (int x = 0; x < grid.width(); ++x) {
          const std::size_t i =
              (static_cast<std::size_t>(z) * static_cast<std::size_t>(grid.height()) +
               static_cast<std::size_t>(y)) *
                  static_cast<std::size_t>(grid.width()) +
              static_cast<std::size_t>(x);
          const int cell[3] = {x, y, z};
          for (int k = 0; k < 300; ++k) {
            glm::dvec3 p;
            bool inside = true;
            for (int a = 0; a < 3; ++a) {
              // The cell [8c - 1/2, 8c + 15/2) and half a voxel beyond on each side.
              p[a] = 8.0 * cell[a] - 1.0 + 9.0 * std::uniform_real_distribution<double>(0, 1)(rng);
              const double n = static_cast<double>(dims[static_cast<std::size_t>(2 - a)]);
              inside = inside && p[a] >= -0.5 && p[a] <= n - 0.5;
            }
            if (!inside) continue;
            const double vl = linear.value(p), vc = cubic.value(p);
            const double tol = 1e-6;
            outside += vl < rs[i].x - tol || vl > rs[i].y + tol;
            outside += vc < rc[i].x - tol || vc > rc[i].y + tol;
            ++checked;
          }
        }
    std::printf("  empty-space ranges (%s): %d points, %d outside their cell's range\n",
                which == 0 ? "noise" : "blobs", checked, outside);
    EXPECT_GT(checked, 2000);
    EXPECT_EQ(outside, 0);

    // The precise cubic's Bezier ranges: texel j + 1 of the fine grid holds the largest value of
    // cube j (positions p with floor(p) = j), cell c of the precise cells a range of the cubes
    // j = C c - 1 .. C c + C - 1 (C = kPreciseCell). Points of each at random; a range that holds
    // them must also lie within the coefficients' range over the same taps (its control points
    // are convex combinations of them).
    const int pc = RaycastRenderer::kPreciseCell;
    const gl::Texture& fine = renderer.precise_fine();
    std::vector<float> top(static_cast<std::size_t>(fine.width() * fine.height() * fine.depth()));
    glGetTextureImage(fine.id(), 0, GL_RED, GL_FLOAT,
                      static_cast<GLsizei>(top.size() * sizeof(float)), top.data());
    for (int level = 0; level < 2; ++level) {
      const gl::Texture& g = level == 0 ? fine : renderer.precise_cells();
      std::vector<glm::vec2> r;
      if (level == 0)
        for (float t : top) r.emplace_back(-std::numeric_limits<float>::infinity(), t);
      else
        r = read(g);
      const int size = level == 0 ? 1 : pc;  // cubes per texel and axis
      const int reach = level == 0 ? 1 : pc + 1;
      int out = 0, points = 0;
      double below_sum = 0.0;
      for (int z = 0; z < g.depth(); ++z)
        for (int y = 0; y < g.height(); ++y)
          for (int x = 0; x < g.width(); ++x) {
            const std::size_t i =
                (static_cast<std::size_t>(z) * static_cast<std::size_t>(g.height()) +
                 static_cast<std::size_t>(y)) *
                    static_cast<std::size_t>(g.width()) +
                static_cast<std::size_t>(x);
            const int cell[3] = {x, y, z};
            // The coefficients' range over every tap of the texel's cubes.
            double cmin = 1e300, cmax = -1e300;
            int lo[3], hi[3];
            for (int a = 0; a < 3; ++a) {
              const int n = static_cast<int>(dims[static_cast<std::size_t>(2 - a)]);
              lo[a] = size * cell[a] - 1;
              hi[a] = std::min(lo[a] + reach - 1, n - 1);
            }
            for (int zz = lo[2] - 1; zz <= hi[2] + 2; ++zz)
              for (int yy = lo[1] - 1; yy <= hi[1] + 2; ++yy)
                for (int xx = lo[0] - 1; xx <= hi[0] + 2; ++xx) {
                  const auto ext = [](int k, std::size_t n) {
                    const int p = 2 * static_cast<int>(n);
                    int m = ((k % p) + p) % p;
                    return static_cast<std::size_t>(m >= static_cast<int>(n) ? p - 1 - m : m);
                  };
                  const double c =
                      vol.exact_coefficients
                          .data()[(ext(zz, dims[0]) * dims[1] + ext(yy, dims[1])) * dims[2] +
                                  ext(xx, dims[2])];
                  cmin = std::min(cmin, c);
                  cmax = std::max(cmax, c);
                }
            below_sum += cmax - r[i].y;
            out += (level == 1 && r[i].x < cmin - 1e-3 * (1.0 + std::abs(cmin))) ||
                   r[i].y > cmax + 1e-3 * (1.0 + std::abs(cmax));
            for (int k = 0; k < 60; ++k) {
              glm::dvec3 p;
              bool inside = true;
              for (int a = 0; a < 3; ++a) {
                const double n = static_cast<double>(dims[static_cast<std::size_t>(2 - a)]);
                p[a] =
                    lo[a] + (hi[a] + 1 - lo[a]) * std::uniform_real_distribution<double>(0, 1)(rng);
                inside = inside && p[a] >= -0.5 && p[a] <= n - 0.5;
              }
              if (!inside) continue;
              const double vc = cubic.value(p);
              const double tol = 1e-6;
              out += vc < r[i].x - tol || vc > r[i].y + tol;
              ++points;
            }
          }
      std::printf(
          "  precise Bezier ranges (%s, %s): %d points, %d outside; largest value below the "
          "coefficients' largest by %.3g on average\n",
          which == 0 ? "noise" : "blobs", level == 0 ? "per unit cube" : "per cell", points, out,
          below_sum / static_cast<double>(r.size()));
      EXPECT_GT(points, 1000);
      EXPECT_EQ(out, 0);
    }
  }
}

TEST(Raycast, RefusesWhatItCannotShow) {
  const std::array<std::size_t, 3> dims = {4, 4, 4};
  sv::ArrayD values({4, 4, 4}, 1);
  GpuVolume vol(values, sv::geometry_from_spacing({1.0, 1.0, 1.0}));
  RaycastRenderer renderer;
  const RayFrame frame = ray_frame(fit_camera(vol.geometry, dims), vol.geometry, dims, 8, 8);
  RayTarget target;
  EXPECT_THROW(renderer.render(gl::Fetch::CubicPrecise, frame, {}, {}, {}, target), sv::Error);
  renderer.set_volume(vol.view());
  try {
    renderer.render(gl::Fetch::Nearest, frame, {}, {}, {}, target);
    ADD_FAILURE() << "nearest accepted";
  } catch (const sv::Error& e) {
    EXPECT_NE(std::string(e.what()).find("nearest"), std::string::npos) << e.what();
  }
  RaySettings st;
  st.step = 0.0;
  EXPECT_THROW(renderer.render(gl::Fetch::Linear, frame, st, {}, {}, target), sv::Error);
  EXPECT_THROW(make_transfer_function("no such preset", 0, 1), sv::Error);
  EXPECT_THROW(make_transfer_function("grey ramp", 1, 1), sv::Error);
  EXPECT_THROW(parse_ray_mode("xray"), sv::Error);
  EXPECT_THROW(ray_frame(OrbitCamera{}, vol.geometry, dims, 0, 4), sv::Error);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::unique_ptr<gl::HeadlessContext> context;
  try {
    context = std::make_unique<gl::HeadlessContext>();
  } catch (const sv::Error& e) {
    std::printf("SKIP: no headless GL 4.5 context: %s\n", e.what());
    return 77;
  }
  std::printf("GL: %s\n", context->description().c_str());
  return RUN_ALL_TESTS();
}
