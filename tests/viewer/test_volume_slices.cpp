// Tests of the volume slices mode's engine in a headless EGL context: the slice geometry
// (round trips between window pixels and volume positions, anisotropic scaling, scrolling,
// zoom), the slice pass through the real shaders (nearest reproduces the samples exactly at
// voxel-centred pixels of the three orthogonal planes; the precise prefiltered cubic on an
// oblique plane matches the double-precision CPU reference; window/level maps as specified),
// the volume document (refusals name the file; the Marschner-Lobb and the bundled MRI volume
// load as specified) and the mode itself (loads, reports, keeps its volume on a bad file).
// The accuracy overlay in 3-D: each view's pixel grid (slice_grid) puts pixel centres where the
// geometry and the shader's float map do, the meter measures at the positions the pass draws,
// its figures for 3-D data have the properties they must (nearest exact on float samples,
// precise within float rounding), and the mode measures its four views.
// Exits 77 (skipped, with the reason) without a GL 4.5 context.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "accuracy.h"
#include "layout.h"
#include "slice_geometry.h"
#include "slice_pass.h"
#include "splineview/error.h"
#include "splineview/geometry.h"
#include "splineview/gl/evaluator.h"
#include "splineview/gl/gl.h"
#include "splineview/gl/headless.h"
#include "splineview/gl/objects.h"
#include "splineview/halo.h"
#include "splineview/io.h"
#include "splineview/prefilter.h"
#include "splineview/pyramid.h"
#include "splineview/sampler.h"
#include "splineview/synthetic.h"
#include "volume_document.h"
#include "volume_mode.h"
#include "volume_stream.h"

namespace {

using namespace sv::viewer;
namespace gl = sv::gl;
namespace fs = std::filesystem;

std::uint32_t fresh_seed() {
  static std::uint32_t next = std::random_device{}();
  return next++;
}

sv::ArrayF random_volume(const std::vector<std::size_t>& dims, std::uint32_t seed) {
  sv::ArrayF a(dims, 1);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (float& v : a.vec()) v = u(rng);
  return a;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const sv::Error& e) {
    return e.what();
  }
  return "(no error)";
}

// A temporary folder per test, removed at the end.
class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("sv_volume_slices_" + std::to_string(fresh_seed()) + "_" +
                                         std::to_string(reinterpret_cast<std::uintptr_t>(this)));
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

// ---- geometry (no GL) ----

const Rect kCell{100, 50, 300, 200};

// ---- patient space ----

// The world direction (RAS+) of an orientation letter.
glm::dvec3 letter_direction(char c) {
  switch (c) {
    case 'R':
      return {1, 0, 0};
    case 'L':
      return {-1, 0, 0};
    case 'A':
      return {0, 1, 0};
    case 'P':
      return {0, -1, 0};
    case 'S':
      return {0, 0, 1};
    default:
      return {0, 0, -1};  // 'I'
  }
}

// An oriented geometry whose index axes i, j, k point along the letters of `code` (e.g. "PIR":
// i posterior, j inferior, k right), with spacing (i, j, k) and the origin given, then turned by
// `rotation` (world from world).
sv::Geometry coded_geometry(const std::string& code, const glm::dvec3& spacing_ijk,
                            const glm::dvec3& origin,
                            const glm::dmat3& rotation = glm::dmat3(1.0)) {
  sv::Geometry g;
  for (int c = 0; c < 3; ++c) {
    const glm::dvec3 col =
        rotation * letter_direction(code[static_cast<std::size_t>(c)]) * spacing_ijk[c];
    for (int r = 0; r < 3; ++r)
      g.affine[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)] = col[r];
  }
  for (int r = 0; r < 3; ++r) g.affine[static_cast<std::size_t>(r)][3] = origin[r];
  g.source = "test";
  return g;
}

// Rotation about a world axis (0: x, 1: y, 2: z) by `deg` degrees.
glm::dmat3 rotation_about(int axis, double deg) {
  const double a = deg * 3.14159265358979323846 / 180.0, c = std::cos(a), s = std::sin(a);
  glm::dmat3 m(1.0);
  const int u = (axis + 1) % 3, v = (axis + 2) % 3;
  m[u][u] = c;  // glm: m[column][row]
  m[u][v] = s;
  m[v][u] = -s;
  m[v][v] = c;
  return m;
}

struct Case {
  std::string name;
  std::string code;  // orientation code the geometry is built from
  glm::dmat3 rotation;
};

std::vector<Case> patient_cases() {
  return {{"RAS", "RAS", glm::dmat3(1.0)},
          {"LAS", "LAS", glm::dmat3(1.0)},
          {"LPS", "LPS", glm::dmat3(1.0)},
          {"sagittal PIR", "PIR", glm::dmat3(1.0)},
          {"coronal LIA", "LIA", glm::dmat3(1.0)},
          {"bundled head LIP", "LIP", glm::dmat3(1.0)},
          // An oblique acquisition: RAS turned 20 degrees about S, then 12 about R.
          {"oblique RAS", "RAS", rotation_about(0, 12.0) * rotation_about(2, 20.0)}};
}

void expect_near(const glm::dvec3& a, const glm::dvec3& b, double tol, const std::string& what) {
  EXPECT_NEAR(glm::length(a - b), 0.0, tol)
      << what << ": (" << a[0] << ", " << a[1] << ", " << a[2] << ") vs (" << b[0] << ", " << b[1]
      << ", " << b[2] << ")";
}

TEST(PatientSpace, PlanesAreThePatientFrameWhateverTheFileAxes) {
  const Rect cell{10, 20, 300, 240};
  for (const Case& c : patient_cases()) {
    SCOPED_TRACE(c.name);
    const SliceGeometry g({21, 25, 23},
                          coded_geometry(c.code, {1.2, 0.9, 2.5}, {-30, 12, 7}, c.rotation));
    ASSERT_TRUE(g.oriented());
    if (c.rotation == glm::dmat3(1.0)) {
      EXPECT_EQ(g.orientation_code(), c.code);
    }
    // The convention (slice_geometry.h): radiological, normals S, A, R.
    expect_near(g.frame(Plane::Axial).normal, {0, 0, 1}, 1e-12, "axial normal");
    expect_near(g.frame(Plane::Coronal).normal, {0, 1, 0}, 1e-12, "coronal normal");
    expect_near(g.frame(Plane::Sagittal).normal, {1, 0, 0}, 1e-12, "sagittal normal");
    expect_near(g.frame(Plane::Axial).right, {-1, 0, 0}, 1e-12, "axial right: patient's left");
    expect_near(g.frame(Plane::Axial).down, {0, -1, 0}, 1e-12, "axial down: posterior");
    expect_near(g.frame(Plane::Coronal).right, {-1, 0, 0}, 1e-12, "coronal right: left");
    expect_near(g.frame(Plane::Coronal).down, {0, 0, -1}, 1e-12, "coronal down: inferior");
    expect_near(g.frame(Plane::Sagittal).right, {0, -1, 0}, 1e-12, "sagittal right: posterior");
    expect_near(g.frame(Plane::Sagittal).down, {0, 0, -1}, 1e-12, "sagittal down: inferior");
    // Letters at the edges.
    const auto letters = [&g](Plane p) {
      const EdgeLetters e = g.letters(p);
      return e.left + " " + e.right + " " + e.top + " " + e.bottom;
    };
    EXPECT_EQ(letters(Plane::Axial), "R L A P");
    EXPECT_EQ(letters(Plane::Coronal), "R L S I");
    EXPECT_EQ(letters(Plane::Sagittal), "A P S I");
    EXPECT_EQ(g.view_name(Plane::Axial), "axial");
    EXPECT_EQ(g.view_name(Plane::Sagittal), "sagittal");
    // What the views show, in the world: the screen's right in the axial view is the patient's
    // left, whatever the storage. A step of one pixel to the right moves the sampled world point
    // by 1/zoom mm towards L.
    const glm::dvec3 w0 = g.world_position(Plane::Axial, cell, {100.5, 90.5});
    const glm::dvec3 w1 = g.world_position(Plane::Axial, cell, {101.5, 90.5});
    expect_near((w1 - w0) * g.view(Plane::Axial).zoom, {-1, 0, 0}, 1e-9, "axial pixel step");
    // The mapping the shader receives agrees: its voxel step is the world step through the
    // inverse affine (resliced, not snapped to the nearest index axis).
    const SliceMapping m = g.mapping(Plane::Axial, cell);
    expect_near(g.voxel_to_world_delta(m.right) * g.view(Plane::Axial).zoom, {-1, 0, 0}, 1e-9,
                "shader right");
    expect_near(g.voxel_to_world_delta(m.up) * g.view(Plane::Axial).zoom, {0, 1, 0}, 1e-9,
                "shader up: anterior");
  }
}

TEST(PatientSpace, TheCrosshairIsOneWorldPointInAllViews) {
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const std::array<Rect, 4> cells = {Rect{0, 0, 320, 250}, Rect{330, 0, 320, 250},
                                     Rect{0, 260, 320, 250}, Rect{330, 260, 320, 250}};
  for (const Case& c : patient_cases()) {
    SCOPED_TRACE(c.name);
    SliceGeometry g({19, 26, 22},
                    coded_geometry(c.code, {1.1, 2.0, 0.8}, {5, -40, 22}, c.rotation));
    g.set_oblique_angles(u(rng) - 0.5, u(rng) - 0.5);
    g.fit(cells);
    for (int trial = 0; trial < 20; ++trial) {
      // Click somewhere in one view: the crosshair goes to the world point under the cursor
      // (inside the volume) ...
      const Plane clicked = kPlanes[static_cast<std::size_t>(trial % 3)];
      const Rect& cc = cells[plane_index(clicked)];
      const glm::dvec2 w(cc.x + cc.width * (0.35 + 0.3 * u(rng)),
                         cc.y + cc.height * (0.35 + 0.3 * u(rng)));
      const glm::dvec3 target = g.world_position(clicked, cc, w);
      g.move_crosshair(clicked, cc, w);
      const glm::dvec3 x = g.crosshair_world();
      const glm::dvec3 tv = g.world_to_voxel(target);
      bool inside = true;
      for (int q = 0; q < 3; ++q)
        inside = inside && tv[q] >= 0 &&
                 tv[q] <= static_cast<double>(g.dims()[static_cast<std::size_t>(q)]) - 1;
      if (inside) expect_near(x, target, 1e-9, "crosshair at the clicked point");
      double off_clicked = 1.0;
      g.window_position_world(clicked, cc, x, &off_clicked);
      EXPECT_NEAR(off_clicked, 0.0, 1e-9) << "the clicked plane keeps its slice";
      // ... and in every view the point under the crosshair's window position is that same
      // world point, on that view's plane.
      for (Plane p : kPlanes) {
        const Rect& cell = cells[plane_index(p)];
        double distance = 1.0;
        const glm::dvec2 at = g.window_position_world(p, cell, x, &distance);
        EXPECT_NEAR(distance, 0.0, 1e-9) << plane_name(p);
        expect_near(g.world_position(p, cell, at), x, 1e-9, plane_name(p));
        expect_near(g.voxel_to_world(g.volume_position(p, cell, at)), x, 1e-9, plane_name(p));
      }
    }
  }
}

TEST(PatientSpace, StorageOrderDoesNotChangeWhatTheViewsSample) {
  // The same world content stored as RAS and as PIR with a flip: every view pixel samples the
  // same world point, and the voxel it falls in holds the same value in both arrays.
  const std::array<std::size_t, 3> dims_ras{9, 11, 13};  // (k, j, i) = S, A, R extents
  const sv::ArrayF ras = random_volume({9, 11, 13}, fresh_seed());
  // PIR: i' = P (reversed A), j' = I (reversed S), k' = R. Array (z', y', x') = (k', j', i').
  const std::array<std::size_t, 3> dims_pir{13, 9, 11};
  sv::ArrayF pir({13, 9, 11}, 1);
  for (std::size_t k = 0; k < 9; ++k)
    for (std::size_t j = 0; j < 11; ++j)
      for (std::size_t i = 0; i < 13; ++i)
        pir.vec()[(i * 9 + (8 - k)) * 11 + (10 - j)] = ras.at3(k, j, i);
  const sv::Geometry g_ras = coded_geometry("RAS", {1, 1, 1}, {-6, -5, -4});
  // Index 0 of PIR is the most anterior (j = 10), most superior (k = 8), i = 0 voxel.
  const sv::Geometry g_pir = coded_geometry("PIR", {1, 1, 1}, {-6, 5, 4});
  SliceGeometry a(dims_ras, g_ras), b(dims_pir, g_pir);
  expect_near(a.centre_world(), b.centre_world(), 1e-12, "centres");
  const std::array<Rect, 4> cells = {Rect{0, 0, 64, 50}, Rect{70, 0, 64, 50}, Rect{0, 56, 64, 50},
                                     Rect{70, 56, 64, 50}};
  a.set_oblique_angles(0.3, 0.2);
  b.set_oblique_angles(0.3, 0.2);
  a.fit(cells);
  b.fit(cells);
  expect_near(a.crosshair_world(), b.crosshair_world(), 1e-12, "crosshair (odd dims)");
  const auto at = [](const sv::ArrayF& v, const std::array<std::size_t, 3>& d, glm::dvec3 p) {
    for (int q = 0; q < 3; ++q)
      p[q] = std::clamp(std::floor(p[q] + 0.5), 0.0, static_cast<double>(d[q] - 1));
    return v.at3(static_cast<std::size_t>(p[0]), static_cast<std::size_t>(p[1]),
                 static_cast<std::size_t>(p[2]));
  };
  int compared = 0;
  for (Plane p : kPlanes) {
    EXPECT_NEAR(a.view(p).zoom, b.view(p).zoom, 1e-12 * a.view(p).zoom);
    const Rect& cell = cells[plane_index(p)];
    for (int y = 0; y < 50; ++y) {
      for (int x = 0; x < 64; ++x) {
        const glm::dvec2 w(cell.x + x + 0.5, cell.y + y + 0.5);
        const glm::dvec3 pa = a.volume_position(p, cell, w), pb = b.volume_position(p, cell, w);
        expect_near(a.voxel_to_world(pa), b.voxel_to_world(pb), 1e-9, plane_name(p));
        bool clear = true;  // inside, and not on a voxel boundary of either
        for (int q = 0; q < 3; ++q) {
          const double fa = pa[q] - std::floor(pa[q]), fb = pb[q] - std::floor(pb[q]);
          clear = clear && std::abs(fa - 0.5) > 1e-6 && std::abs(fb - 0.5) > 1e-6 && pa[q] > -0.5 &&
                  pa[q] < static_cast<double>(dims_ras[static_cast<std::size_t>(q)]) - 0.5;
        }
        if (!clear) continue;
        ASSERT_EQ(at(ras, dims_ras, pa), at(pir, dims_pir, pb))
            << plane_name(p) << " " << x << ", " << y;
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 4000);
}

TEST(PatientSpace, ObliqueAcquisitionsAreReslicedAndFitted) {
  const glm::dmat3 turn = rotation_about(0, 12.0) * rotation_about(2, 20.0);
  SliceGeometry g({30, 40, 50}, coded_geometry("LPS", {0.8, 0.8, 2.0}, {10, 20, 30}, turn));
  for (Plane p : {Plane::Axial, Plane::Coronal, Plane::Sagittal})
    EXPECT_EQ(g.normal_axis(p), -1) << plane_name(p) << ": no index axis along the normal";
  // A slice step moves along S by the largest step that changes no index by more than one.
  const glm::dvec3 before = g.crosshair_world();
  g.scroll(Plane::Axial, 2);
  const glm::dvec3 moved = g.crosshair_world() - before;
  expect_near(moved, glm::dvec3(0, 0, 2 * g.normal_step_mm(Plane::Axial)), 1e-9, "axial step");
  const glm::dvec3 index_moved = g.world_to_voxel_delta(moved / 2.0);
  EXPECT_NEAR(
      std::max({std::abs(index_moved[0]), std::abs(index_moved[1]), std::abs(index_moved[2])}), 1.0,
      1e-12);
  // The fit covers the world box: all eight corners of the volume project inside each cell.
  const std::array<Rect, 4> cells = {Rect{0, 0, 300, 200}, Rect{310, 0, 300, 200},
                                     Rect{0, 210, 300, 200}, Rect{310, 210, 300, 200}};
  g.set_oblique_angles(0.5, -0.4);
  g.fit(cells);
  for (Plane p : kPlanes) {
    const Rect& cell = cells[plane_index(p)];
    double lo_x = 1e9, hi_x = -1e9, lo_y = 1e9, hi_y = -1e9;
    for (int corner = 0; corner < 8; ++corner) {
      glm::dvec3 v;
      for (int q = 0; q < 3; ++q)
        v[q] = (corner >> q) & 1 ? static_cast<double>(g.dims()[static_cast<std::size_t>(q)]) - 0.5
                                 : -0.5;
      const glm::dvec2 w = g.window_position(p, cell, v);
      EXPECT_GE(w.x, cell.x - 1e-9) << plane_name(p);
      EXPECT_LE(w.x, cell.x + cell.width + 1e-9) << plane_name(p);
      EXPECT_GE(w.y, cell.y - 1e-9) << plane_name(p);
      EXPECT_LE(w.y, cell.y + cell.height + 1e-9) << plane_name(p);
      lo_x = std::min(lo_x, w.x);
      hi_x = std::max(hi_x, w.x);
      lo_y = std::min(lo_y, w.y);
      hi_y = std::max(hi_y, w.y);
    }
    // Centred.
    EXPECT_NEAR((lo_x + hi_x) / 2, cell.centre().x, 1e-9) << plane_name(p);
    EXPECT_NEAR((lo_y + hi_y) / 2, cell.centre().y, 1e-9) << plane_name(p);
  }
  // The oblique view's angles are relative to the patient frame: at 0 it is the axial plane,
  // whatever the acquisition.
  g.set_oblique_angles(0.0, 0.0);
  expect_near(g.frame(Plane::Oblique).normal, {0, 0, 1}, 1e-12, "oblique at 0");
  g.set_oblique_angles(3.14159265358979323846 / 2, 0.0);  // tilted 90 degrees about L
  expect_near(glm::abs(g.frame(Plane::Oblique).normal), {0, 1, 0}, 1e-12, "oblique at 90");
}

TEST(PatientSpace, LettersOfDirections) {
  const auto dir = [](double deg) {  // in the R-A plane, `deg` from R towards A
    const double a = deg * 3.14159265358979323846 / 180.0;
    return glm::dvec3(std::cos(a), std::sin(a), 0.0);
  };
  EXPECT_EQ(direction_letters({1, 0, 0}), "R");
  EXPECT_EQ(direction_letters({0, -2, 0}), "P");
  EXPECT_EQ(direction_letters({0, 0, -0.5}), "I");
  EXPECT_EQ(direction_letters(dir(10)), "R");   // 35 degrees from the diagonal
  EXPECT_EQ(direction_letters(dir(16)), "RA");  // 29 degrees from it
  EXPECT_EQ(direction_letters(dir(45)), "RA");
  EXPECT_EQ(direction_letters(dir(60)), "AR");  // A dominant
  EXPECT_EQ(direction_letters(dir(80)), "A");
  EXPECT_EQ(direction_letters(dir(180 + 30)), "LP");
  EXPECT_EQ(direction_letters({0.1, -0.2, 0.9}), "S");
  EXPECT_EQ(direction_letters({0, 0, 0}), "");
  // An oblique view's edges name their dominant directions.
  SliceGeometry g({10, 10, 10}, coded_geometry("RAS", {1, 1, 1}, {0, 0, 0}));
  g.set_oblique_angles(0.0, 3.14159265358979323846 / 4);  // turned 45 degrees about P
  const EdgeLetters e = g.letters(Plane::Oblique);
  EXPECT_EQ(e.top, "A");
  EXPECT_EQ(e.bottom, "P");
  EXPECT_EQ(e.left.size(), 2u) << e.left;
  EXPECT_EQ(e.right.size(), 2u) << e.right;
}

TEST(PatientSpace, UnorientedVolumesHaveIndexPlanesAndNoLetters) {
  // diag(spacing), no orientation: the index planes in file order, never anatomy.
  const SliceGeometry g({20, 30, 40}, {3, 2, 2});
  EXPECT_FALSE(g.oriented());
  EXPECT_EQ(g.orientation_code(), "");
  EXPECT_EQ(g.view_name(Plane::Axial), "k plane");
  EXPECT_EQ(g.view_name(Plane::Coronal), "j plane");
  EXPECT_EQ(g.view_name(Plane::Sagittal), "i plane");
  for (Plane p : kPlanes) {
    const EdgeLetters e = g.letters(p);
    EXPECT_EQ(e.left + e.right + e.top + e.bottom, "") << plane_name(p);
  }
  // k plane: i right, j down; j plane: i right, k up; i plane: j right, k up (array (z, y, x)).
  expect_near(g.world_to_voxel_delta(g.frame(Plane::Axial).right), {0, 0, 0.5}, 1e-15, "k right");
  expect_near(g.world_to_voxel_delta(g.frame(Plane::Axial).down), {0, 0.5, 0}, 1e-15, "k down");
  expect_near(g.world_to_voxel_delta(g.frame(Plane::Coronal).down), {-1.0 / 3, 0, 0}, 1e-15,
              "j down");
  expect_near(g.world_to_voxel_delta(g.frame(Plane::Sagittal).right), {0, 0.5, 0}, 1e-15,
              "i right");
  EXPECT_EQ(g.normal_axis(Plane::Axial), 0);
  EXPECT_EQ(g.normal_axis(Plane::Coronal), 1);
  EXPECT_EQ(g.normal_axis(Plane::Sagittal), 2);
  // The same axes with an orientation stated do get letters: the distinction is the file's.
  sv::Geometry stated = sv::geometry_from_spacing({3, 2, 2});
  stated.source = "test";
  EXPECT_EQ(SliceGeometry({20, 30, 40}, stated).letters(Plane::Axial).left, "R");
}

TEST(SliceGeometry, FramesAreOrthonormal) {
  SliceGeometry unoriented({20, 30, 40}, {3, 2, 2});
  SliceGeometry oblique({20, 30, 40},
                        coded_geometry("PIR", {3, 2, 2}, {1, 2, 3}, rotation_about(1, 25.0)));
  for (SliceGeometry* g : {&unoriented, &oblique}) {
    g->set_oblique_angles(0.4, -0.7);
    for (Plane p : kPlanes) {
      const PlaneFrame f = g->frame(p);
      EXPECT_NEAR(glm::length(f.right), 1.0, 1e-12) << plane_name(p);
      EXPECT_NEAR(glm::length(f.down), 1.0, 1e-12) << plane_name(p);
      EXPECT_NEAR(glm::dot(f.right, f.down), 0.0, 1e-12) << plane_name(p);
      // The normal is +-right x down (slice_geometry.h: the direction of a positive step).
      EXPECT_NEAR(std::abs(glm::dot(glm::cross(f.right, f.down), f.normal)), 1.0, 1e-12);
    }
  }
}

TEST(SliceGeometry, WindowVolumeRoundTrips) {
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  SliceGeometry g({17, 33, 25}, {2.5, 0.8, 1.3});
  g.set_oblique_angles(u(rng) * 2 - 1, u(rng) * 2 - 1);
  g.set_crosshair({u(rng) * 16, u(rng) * 32, u(rng) * 24});
  g.set_link_zoom(false);
  for (Plane p : kPlanes) {
    g.view(p).zoom = 0.5 + 5 * u(rng);
    g.view(p).centre = {u(rng) * 20 - 10, u(rng) * 20 - 10};
    for (int i = 0; i < 50; ++i) {
      const glm::dvec2 w(kCell.x + u(rng) * kCell.width, kCell.y + u(rng) * kCell.height);
      const glm::dvec3 v = g.volume_position(p, kCell, w);
      double dist = 1.0;
      const glm::dvec2 back = g.window_position(p, kCell, v, &dist);
      EXPECT_NEAR(back.x, w.x, 1e-9) << plane_name(p);
      EXPECT_NEAR(back.y, w.y, 1e-9) << plane_name(p);
      EXPECT_NEAR(dist, 0.0, 1e-9) << plane_name(p) << ": the position lies on the plane";
      // The plane passes through the crosshair.
      double to_crosshair = 1.0;
      g.window_position(p, kCell, g.crosshair(), &to_crosshair);
      EXPECT_NEAR(to_crosshair, 0.0, 1e-9);
    }
    // A point off the plane projects along the normal: same window point, signed distance.
    const glm::dvec3 on = g.volume_position(p, kCell, {160.0, 90.0});
    const glm::dvec3 off = on + g.world_to_voxel_delta(2.0 * g.frame(p).normal);
    double dist = 0.0;
    const glm::dvec2 w = g.window_position(p, kCell, off, &dist);
    EXPECT_NEAR(w.x, 160.0, 1e-9);
    EXPECT_NEAR(w.y, 90.0, 1e-9);
    EXPECT_NEAR(dist, 2.0, 1e-9);
    // The shader's affine map agrees with volume_position at fragment centres.
    const SliceMapping m = g.mapping(p, kCell);
    const double a = 17.5, b = 42.5;  // fragment offsets from the viewport's bottom-left
    const glm::dvec3 via_map = m.corner + a * m.right + b * m.up;
    const glm::dvec3 direct =
        g.volume_position(p, kCell, {kCell.x + a, kCell.y + kCell.height - b});
    EXPECT_NEAR(glm::length(via_map - direct), 0.0, 1e-9);
  }
}

TEST(SliceGeometry, AnisotropicSpacingKeepsMillimetres) {
  // Spacing (z, y, x) = 3, 2, 2 mm: in the coronal view (x right, z up) one slice step of z is
  // 1.5x as long on screen as one column of x, and both match zoom * mm.
  SliceGeometry g({62, 128, 128}, {3, 2, 2});
  g.view(Plane::Coronal).zoom = 2.0;
  const glm::dvec3 c = g.crosshair();
  const glm::dvec2 w0 = g.window_position(Plane::Coronal, kCell, c);
  const glm::dvec2 wx = g.window_position(Plane::Coronal, kCell, c + glm::dvec3(0, 0, 1));
  const glm::dvec2 wz = g.window_position(Plane::Coronal, kCell, c + glm::dvec3(1, 0, 0));
  EXPECT_NEAR(glm::length(wx - w0), 4.0, 1e-9);
  EXPECT_NEAR(glm::length(wz - w0), 6.0, 1e-9);
  EXPECT_NEAR(wz.y - w0.y, -6.0, 1e-9) << "z runs upwards in the coronal view (file order)";
  EXPECT_NEAR(glm::length(wz - w0) / glm::length(wx - w0), 1.5, 1e-12);
  // Fitting with linked zoom gives every view the same mm scale, the volume inside each cell.
  std::array<Rect, 4> cells;
  for (std::size_t i = 0; i < 4; ++i) cells[i] = {static_cast<double>(i) * 310.0, 0, 300, 200};
  g.fit(cells);
  for (Plane p : kPlanes) {
    EXPECT_DOUBLE_EQ(g.view(p).zoom, g.view(Plane::Axial).zoom);
    const PlaneFrame f = g.frame(p);
    EXPECT_LE(g.extent_mm(f.right) * g.view(p).zoom, cells[plane_index(p)].width + 1e-9);
    EXPECT_LE(g.extent_mm(f.down) * g.view(p).zoom, cells[plane_index(p)].height + 1e-9);
  }
}

TEST(SliceGeometry, ScrollMovesOneVoxelAlongTheNormal) {
  SliceGeometry g({10, 12, 14}, {3, 2, 1});
  const glm::dvec3 start = g.crosshair();
  g.scroll(Plane::Axial, 1);
  EXPECT_EQ(g.crosshair(), start + glm::dvec3(1, 0, 0));
  g.scroll(Plane::Coronal, -2);
  EXPECT_EQ(g.crosshair(), start + glm::dvec3(1, -2, 0));
  g.scroll(Plane::Sagittal, 3);
  EXPECT_EQ(g.crosshair(), start + glm::dvec3(1, -2, 3));
  g.scroll(Plane::Axial, 100);  // clamped to the last slice
  EXPECT_EQ(g.crosshair()[0], 9.0);
  EXPECT_EQ(g.slice_position(Plane::Axial).index, 9.0);
  EXPECT_EQ(g.slice_position(Plane::Axial).mm, 27.0);
  // Oblique: one step changes no index by more than one voxel, and one axis by exactly one.
  g.set_crosshair({5, 6, 7});
  g.set_oblique_angles(0.5, 0.3);
  const glm::dvec3 before = g.crosshair();
  g.scroll(Plane::Oblique, 1);
  const glm::dvec3 moved = glm::abs(g.crosshair() - before);
  EXPECT_NEAR(std::max({moved[0], moved[1], moved[2]}), 1.0, 1e-12);
  EXPECT_NEAR(glm::length((g.crosshair() - before) * g.spacing()), g.normal_step_mm(Plane::Oblique),
              1e-12);
  // Moving the crosshair within a view keeps its normal index.
  g.set_crosshair({4, 6, 7});
  g.move_crosshair(Plane::Axial, kCell, {123.4, 156.7});
  EXPECT_EQ(g.crosshair()[0], 4.0);
}

TEST(SliceGeometry, ZoomKeepsThePointUnderTheCursor) {
  SliceGeometry g({20, 30, 40}, {1, 1.5, 0.7});
  g.set_oblique_angles(0.2, 0.9);
  for (Plane p : kPlanes) {
    const glm::dvec2 w(173.0, 121.0);
    const glm::dvec3 before = g.volume_position(p, kCell, w);
    g.zoom_about(p, kCell, w, 1.7);
    EXPECT_NEAR(glm::length(g.volume_position(p, kCell, w) - before), 0.0, 1e-9);
    EXPECT_DOUBLE_EQ(g.view(Plane::Axial).zoom, g.view(p).zoom) << "linked zoom";
    const glm::dvec3 under = g.volume_position(p, kCell, w);
    g.pan_by(p, {10, -4});
    EXPECT_NEAR(glm::length(g.volume_position(p, kCell, w + glm::dvec2(10, -4)) - under), 0.0,
                1e-9);
  }
}

// A geometry with every degree of freedom away from its default: anisotropic spacing, oblique
// angles, a crosshair off the centre, per-view zoom and pan.
SliceGeometry random_geometry(const std::array<std::size_t, 3>& dims, const glm::dvec3& spacing,
                              std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  SliceGeometry g(dims, spacing);
  g.set_oblique_angles(u(rng) * 2 - 1, u(rng) * 2 - 1);
  g.set_crosshair({u(rng) * static_cast<double>(dims[0] - 1),
                   u(rng) * static_cast<double>(dims[1] - 1),
                   u(rng) * static_cast<double>(dims[2] - 1)});
  g.set_link_zoom(false);
  for (Plane p : kPlanes) {
    g.view(p).zoom = 0.5 + 5 * u(rng);
    g.view(p).centre = {u(rng) * 20 - 10, u(rng) * 20 - 10};
  }
  return g;
}

TEST(SliceGrid, PixelCentresAreWhereTheGeometryAndTheShaderPutThem) {
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const SliceGeometry g = random_geometry({17, 33, 25}, {2.5, 0.8, 1.3}, rng);
  const Rect cell{37, 21, 301, 187};  // integer corners, odd sizes, off the origin
  for (Plane p : kPlanes) {
    SCOPED_TRACE(plane_name(p));
    const gl::GridMapping grid = slice_grid(g, p, cell);
    ASSERT_EQ(grid.rows, 187u);
    ASSERT_EQ(grid.cols, 301u);
    const SliceMapping m = g.mapping(p, cell);
    // Float uniforms, as the slice pass hands them to slice.frag.
    glm::vec3 corner_f(m.corner), right_f(m.right), up_f(m.up);
    for (const std::array<std::size_t, 2> rc :
         {std::array<std::size_t, 2>{0, 0}, std::array<std::size_t, 2>{0, 300},
          std::array<std::size_t, 2>{186, 0}, std::array<std::size_t, 2>{186, 300},
          std::array<std::size_t, 2>{93, 150}}) {
      const double r = static_cast<double>(rc[0]), c = static_cast<double>(rc[1]);
      glm::dvec3 via_grid;
      for (int d = 0; d < 3; ++d) {
        const auto i = static_cast<std::size_t>(d);
        via_grid[d] = grid.origin[i] + r * grid.step_row[i] + c * grid.step_col[i];
      }
      // The geometry's own pixel-to-voxel map at the pixel's centre.
      const glm::dvec3 direct = g.volume_position(p, cell, {cell.x + c + 0.5, cell.y + r + 0.5});
      EXPECT_NEAR(glm::length(via_grid - direct), 0.0, 1e-9) << "pixel " << r << ", " << c;
      // slice.frag: gl_FragCoord - viewport origin = (c + 0.5, height - r - 0.5), float map.
      const float a = static_cast<float>(c) + 0.5f;
      const float b = static_cast<float>(cell.height - r) - 0.5f;
      const glm::vec3 shader = corner_f + a * right_f + b * up_f;
      for (int d = 0; d < 3; ++d) {
        // A few roundings of each term (uniforms, products, sums).
        const double magnitude =
            std::abs(m.corner[d]) + std::abs(a * m.right[d]) + std::abs(b * m.up[d]);
        EXPECT_NEAR(static_cast<double>(shader[d]), via_grid[d],
                    8.0 * magnitude * std::ldexp(1.0, -24))
            << "axis " << d << " pixel " << r << ", " << c;
      }
    }
  }
}

// ---- the slice pass ----

// An RGBA32F framebuffer of the given size, bound for drawing while alive.
class FloatTarget {
 public:
  FloatTarget(int width, int height)
      : width_(width),
        height_(height),
        colour_(gl::Texture::create_2d(GL_RGBA32F, width, height)),
        fbo_(gl::Framebuffer::create()) {
    fbo_.attach_color(colour_);
    fbo_.check_complete();
    glBindFramebuffer(GL_FRAMEBUFFER, fbo_.id());
    const float nan = std::nanf("");
    const float clear[4] = {nan, nan, nan, nan};
    glClearBufferfv(GL_COLOR, 0, clear);
  }
  ~FloatTarget() { glBindFramebuffer(GL_FRAMEBUFFER, 0); }
  // Red channel, rows top to bottom (window order).
  std::vector<float> read() const {
    std::vector<float> rgba(static_cast<std::size_t>(width_ * height_) * 4);
    glPixelStorei(GL_PACK_ALIGNMENT, 4);
    glReadPixels(0, 0, width_, height_, GL_RGBA, GL_FLOAT, rgba.data());
    std::vector<float> red(static_cast<std::size_t>(width_ * height_));
    for (int y = 0; y < height_; ++y)
      for (int x = 0; x < width_; ++x)
        red[static_cast<std::size_t>(y * width_ + x)] =
            rgba[(static_cast<std::size_t>((height_ - 1 - y) * width_ + x)) * 4];
    return red;
  }
  int width() const { return width_; }
  int height() const { return height_; }

 private:
  int width_, height_;
  gl::Texture colour_;
  gl::Framebuffer fbo_;
};

gl::Viewport viewport_of(const Rect& r, int fb_height) {
  return {static_cast<int>(r.x), fb_height - static_cast<int>(r.y + r.height),
          static_cast<int>(r.width), static_cast<int>(r.height)};
}

SlicePass& pass() {
  static SlicePass p;
  return p;
}

TEST(SlicePass, NearestReproducesTheSamplesAtVoxelCentres) {
  const std::uint32_t seed = fresh_seed();
  std::printf("nearest slices: seed %u\n", seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  // Odd spacings at 1 pixel per mm put every voxel centre on a pixel centre.
  const std::array<std::size_t, 3> dims{7, 9, 11};
  const glm::dvec3 spacing(3, 1, 5);
  VolumeLimits limits;
  VolumeDocument doc = upload_volume(
      decode_samples(random_volume({7, 9, 11}, seed), spacing, "random", sv::DType::F32, limits),
      limits, false);
  std::mt19937 rng(seed);
  // Unoriented (file order), and the same spacings as an oriented coronal LIA file: the views
  // then sample through a permuted, flipped affine.
  for (const bool oriented : {false, true}) {
    SCOPED_TRACE(oriented ? "LIA" : "unoriented");
    SliceGeometry g = oriented ? SliceGeometry(dims, coded_geometry("LIA", {5, 1, 3}, {7, -3, 2}))
                               : SliceGeometry(dims, spacing);
    g.set_crosshair({static_cast<double>(rng() % 7), static_cast<double>(rng() % 9),
                     static_cast<double>(rng() % 11)});
    const WindowLevel identity{1.0, 0.5};
    for (Plane p : {Plane::Axial, Plane::Coronal, Plane::Sagittal}) {
      SCOPED_TRACE(plane_name(p));
      const PlaneFrame f = g.frame(p);
      // The cell: the volume plus a border of 4 background pixels, placed off the origin.
      const Rect cell{5, 3, g.extent_mm(f.right) + 8, g.extent_mm(f.down) + 8};
      FloatTarget target(static_cast<int>(cell.width) + 12, static_cast<int>(cell.height) + 9);
      pass().draw(doc.textures(), gl::Fetch::Nearest, g.mapping(p, cell),
                  viewport_of(cell, target.height()), identity, 16.0f);
      const std::vector<float> image = target.read();
      const auto pixel = [&](int x, int y) {
        return image[static_cast<std::size_t>(y * target.width() + x)];
      };
      // The array axes along the view's right and down (the planes are along index axes here).
      const auto axis_of = [&g](const glm::dvec3& world_direction) {
        const glm::dvec3 d = glm::abs(g.world_to_voxel_delta(world_direction));
        return d[0] > 1e-9 ? 0 : (d[1] > 1e-9 ? 1 : 2);
      };
      const int right_axis = axis_of(f.right), down_axis = axis_of(f.down);
      ASSERT_NE(right_axis, down_axis);
      int checked = 0;
      for (std::size_t i = 0; i < dims[static_cast<std::size_t>(right_axis)]; ++i) {
        for (std::size_t j = 0; j < dims[static_cast<std::size_t>(down_axis)]; ++j) {
          glm::dvec3 v = g.crosshair();
          v[right_axis] = static_cast<double>(i);
          v[down_axis] = static_cast<double>(j);
          const glm::dvec2 w = g.window_position(p, cell, v);
          ASSERT_EQ(w.x - std::floor(w.x), 0.5) << "voxel centre on a pixel centre";
          ASSERT_EQ(w.y - std::floor(w.y), 0.5);
          const float expected =
              doc.volume.samples.at3(static_cast<std::size_t>(v[0]), static_cast<std::size_t>(v[1]),
                                     static_cast<std::size_t>(v[2]));
          ASSERT_EQ(pixel(static_cast<int>(w.x), static_cast<int>(w.y)), expected)
              << "voxel (z, y, x) " << v[0] << ", " << v[1] << ", " << v[2];
          ++checked;
        }
      }
      EXPECT_GT(checked, 20);
      // The border is background (checkerboard greys), pixels outside the cell untouched (NaN).
      const float corner = pixel(static_cast<int>(cell.x) + 1, static_cast<int>(cell.y) + 1);
      EXPECT_TRUE(corner == 0.16f || corner == 0.20f) << corner;
      EXPECT_TRUE(std::isnan(pixel(static_cast<int>(cell.x) - 1, static_cast<int>(cell.y))));
    }
  }
}

TEST(SlicePass, PreciseObliqueMatchesTheDoubleReference) {
  const std::uint32_t seed = fresh_seed();
  std::printf("precise oblique: seed %u\n", seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<std::size_t> shape{12, 14, 16};
  const glm::dvec3 spacing(1.5, 1.0, 1.2);
  const sv::ArrayF samples = random_volume(shape, seed);
  VolumeLimits limits;
  VolumeDocument doc = upload_volume(
      decode_samples(samples, spacing, "random", sv::DType::F32, limits), limits, false);
  // The double reference: the double prefilter of the same samples.
  sv::ArrayD reference = sv::ArrayD::from(samples);
  sv::prefilter(reference, {3, sv::Boundary::Reflect, 0});

  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  SliceGeometry g({12, 14, 16}, spacing);
  // The crosshair in the middle half of each axis, so that the oblique plane through it cuts
  // the volume broadly whatever its angles (near a corner it could leave too few pixels inside).
  g.set_crosshair({2.75 + u(rng) * 5.5, 3.25 + u(rng) * 6.5, 3.75 + u(rng) * 7.5});
  g.set_oblique_angles(0.3 + 0.9 * u(rng), -1.2 + 0.9 * u(rng));
  const Rect cell{0, 0, 96, 96};
  g.fit({cell, cell, cell, cell});
  g.zoom_about(Plane::Oblique, cell, cell.centre(), 1.3);  // some pixels fall outside
  // Window 4, level 1: grey = (value + 1) / 4, exact to one rounding of value + 1 (2^-23 for
  // |value + 1| < 2), so the spline's overshoot beyond [0, 1] is seen too.
  const WindowLevel wl{4.0, 1.0};
  FloatTarget target(96, 96);
  pass().draw(doc.textures(), gl::Fetch::CubicPrecise, g.mapping(Plane::Oblique, cell),
              viewport_of(cell, 96), wl, 8.0f);
  const std::vector<float> image = target.read();
  const SliceMapping m = g.mapping(Plane::Oblique, cell);
  double max_error = 0.0, max_ratio = 0.0;
  int compared = 0;
  for (int y = 0; y < 96; ++y) {
    for (int x = 0; x < 96; ++x) {
      const glm::dvec3 p = g.volume_position(Plane::Oblique, cell, {x + 0.5, y + 0.5});
      bool inside = true, near_edge = false;
      for (int a = 0; a < 3; ++a) {
        const double hi = static_cast<double>(shape[static_cast<std::size_t>(a)]) - 0.5;
        inside = inside && p[a] >= -0.5 && p[a] <= hi;
        near_edge = near_edge || std::abs(p[a] + 0.5) < 1e-3 || std::abs(p[a] - hi) < 1e-3;
      }
      if (near_edge) continue;
      const float grey = image[static_cast<std::size_t>(y * 96 + x)];
      if (!inside) {
        EXPECT_TRUE(grey == 0.16f || grey == 0.20f) << "background at " << x << ", " << y;
        continue;
      }
      const double value = static_cast<double>(grey * 4.0f - 1.0f);
      const double pos[3] = {p[0], p[1], p[2]};
      sv::SamplerOptions opt;
      opt.threads = 1;
      double exact = 0.0;
      sv::sample(reference, pos, 1, &exact, opt);
      // The float map's position error (a few roundings of each term of corner + a right +
      // b up), times the spline's slope there.
      const double a = x + 0.5, b = 96 - (y + 0.5);
      double slope_term = 0.0;
      for (int d = 0; d < 3; ++d) {
        opt.derivative_axis = d;
        double slope = 0.0;
        sv::sample(reference, pos, 1, &slope, opt);
        const double magnitude =
            std::abs(m.corner[d]) + std::abs(a * m.right[d]) + std::abs(b * m.up[d]);
        slope_term += std::abs(slope) * 8.0 * magnitude * std::ldexp(1.0, -24);
      }
      // 1e-6 of the data range (1) for the precise fetch's float arithmetic and the float
      // prefilter, 2^-23 for the grey encoding, and the position term.
      const double bound = 1e-6 + std::ldexp(1.0, -23) + slope_term;
      const double error = std::abs(value - exact);
      max_error = std::max(max_error, error);
      max_ratio = std::max(max_ratio, error / bound);
      EXPECT_LE(error, bound) << "pixel " << x << ", " << y << " position (z, y, x) " << p[0]
                              << ", " << p[1] << ", " << p[2];
      ++compared;
    }
  }
  std::printf("precise oblique: %d pixels, max error %.3g of the range (%.2f of the bound)\n",
              compared, max_error, max_ratio);
  EXPECT_GT(compared, 1000);
}

TEST(SlicePass, WindowLevelMapsAsSpecified) {
  // A ramp of integer values 0..99 along x, shown with nearest at voxel centres.
  sv::ArrayF ramp({1, 1, 100}, 1);
  for (std::size_t i = 0; i < 100; ++i) ramp.vec()[i] = static_cast<float>(i);
  VolumeLimits limits;
  VolumeDocument doc =
      upload_volume(decode_samples(ramp, {1, 1, 1}, "ramp", sv::DType::U8, limits), limits, false);
  SliceGeometry g({1, 1, 100}, {1, 1, 1});
  const Rect cell{0, 0, 100, 1};
  for (const WindowLevel wl :
       {WindowLevel{40, 50}, WindowLevel{99, 49.5}, WindowLevel{7, 3.5}, WindowLevel{1000, -200}}) {
    FloatTarget target(100, 1);
    pass().draw(doc.textures(), gl::Fetch::Nearest, g.mapping(Plane::Axial, cell),
                viewport_of(cell, 1), wl, 16.0f);
    const std::vector<float> image = target.read();
    for (int i = 0; i < 100; ++i) {
      const double spec = std::clamp((i - (wl.level - wl.window / 2)) / wl.window, 0.0, 1.0);
      EXPECT_NEAR(image[static_cast<std::size_t>(i)], spec, 1e-6)
          << "value " << i << " window " << wl.window << " level " << wl.level;
      EXPECT_EQ(image[static_cast<std::size_t>(i)], window_level_grey(static_cast<float>(i), wl));
    }
  }
}

TEST(SlicePass, LeavesTheGlStateAsFound) {
  VolumeLimits limits;
  VolumeDocument doc = upload_volume(decode_marschner_lobb(8, limits), limits, false);
  SliceGeometry g({8, 8, 8}, {1, 1, 1});
  const Rect cell{0, 0, 32, 32};
  FloatTarget target(32, 32);
  glViewport(1, 2, 3, 4);
  glEnable(GL_BLEND);
  for (gl::Fetch f : kMethods) {
    pass().draw(doc.textures(), f, g.mapping(Plane::Oblique, cell), viewport_of(cell, 32), {},
                4.0f);
  }
  GLint viewport[4] = {}, program = -1, texture3d = -1;
  glGetIntegerv(GL_VIEWPORT, viewport);
  glGetIntegerv(GL_CURRENT_PROGRAM, &program);
  glGetIntegerv(GL_TEXTURE_BINDING_3D, &texture3d);
  EXPECT_EQ(viewport[0], 1);
  EXPECT_EQ(viewport[3], 4);
  EXPECT_EQ(program, 0);
  EXPECT_EQ(texture3d, 0);
  EXPECT_TRUE(glIsEnabled(GL_BLEND));
  glDisable(GL_BLEND);
  EXPECT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));
}

// ---- the accuracy meter on slices ----

TEST(SliceAccuracy, TheMeterEvaluatesWhereThePassDraws) {
  // The pass's precise fetch at each pixel equals the evaluator's at the grid's float position
  // of that pixel (up to the float map's rounding times the slope): the meter measures what is
  // drawn. The pixels the meter measures are those the pass draws the volume in.
  const std::uint32_t seed = fresh_seed();
  std::printf("meter vs pass: seed %u\n", seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::array<std::size_t, 3> dims{11, 13, 15};
  const glm::dvec3 spacing(1.7, 0.9, 1.1);
  const sv::ArrayF samples = random_volume({11, 13, 15}, seed);
  VolumeLimits limits;
  VolumeDocument doc = upload_volume(
      decode_samples(samples, spacing, "random", sv::DType::F32, limits), limits, false);
  std::mt19937 rng(seed);
  SliceGeometry g(dims, spacing);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  g.set_crosshair({u(rng) * 10, u(rng) * 12, u(rng) * 14});
  g.set_oblique_angles(0.3 + 0.9 * u(rng), -1.2 + 0.9 * u(rng));
  const Rect cell{0, 0, 80, 72};
  g.fit({cell, cell, cell, cell});
  g.zoom_about(Plane::Oblique, cell, cell.centre(), 1.2);
  sv::ArrayD reference = sv::ArrayD::from(samples);
  sv::prefilter(reference, {3, sv::Boundary::Reflect, 0});
  gl::SplineTexture coefficients(doc.coefficients, gl::TexFormat::R32F);
  gl::EvalOptions eo;
  eo.fetch = gl::Fetch::CubicPrecise;
  gl::Evaluator evaluator(eo, 3);
  const WindowLevel wl{4.0, 1.0};  // grey = (value + 1) / 4: no clamping of the overshoot
  for (Plane p : kPlanes) {
    SCOPED_TRACE(plane_name(p));
    FloatTarget target(80, 72);
    pass().draw(doc.textures(), gl::Fetch::CubicPrecise, g.mapping(p, cell), viewport_of(cell, 72),
                wl, 8.0f);
    const std::vector<float> image = target.read();
    const gl::GridMapping grid = slice_grid(g, p, cell);
    std::vector<float> positions;
    std::vector<std::size_t> pixels;
    job_positions(grid, {11, 13, 15}, &positions, &pixels);
    ASSERT_GT(pixels.size(), 500u);
    const std::vector<float> values =
        evaluator.evaluate(coefficients, positions.data(), pixels.size());
    const SliceMapping m = g.mapping(p, cell);
    double max_ratio = 0.0;
    std::vector<bool> measured(80 * 72, false);
    for (std::size_t k = 0; k < pixels.size(); ++k) {
      measured[pixels[k]] = true;
      const std::size_t r = pixels[k] / 80, c = pixels[k] % 80;
      const double pos[3] = {positions[3 * k], positions[3 * k + 1], positions[3 * k + 2]};
      bool near_edge = false;
      for (int d = 0; d < 3; ++d) {
        const double hi = static_cast<double>(dims[static_cast<std::size_t>(d)]) - 0.5;
        near_edge = near_edge || pos[d] + 0.5 < 1e-3 || hi - pos[d] < 1e-3;
      }
      if (near_edge) continue;  // the float map may fall on the other side of the border
      const float grey = image[pixels[k]];
      ASSERT_FALSE(grey == 0.16f || grey == 0.20f) << "background at a measured pixel";
      const double drawn = static_cast<double>(grey * 4.0f - 1.0f);
      const double a = static_cast<double>(c) + 0.5, b = 72.0 - (static_cast<double>(r) + 0.5);
      double slope_term = 0.0;
      sv::SamplerOptions opt;
      opt.threads = 1;
      for (int d = 0; d < 3; ++d) {
        opt.derivative_axis = d;
        double slope = 0.0;
        sv::sample(reference, pos, 1, &slope, opt);
        const double magnitude =
            std::abs(m.corner[d]) + std::abs(a * m.right[d]) + std::abs(b * m.up[d]);
        // The shader's float map and the grid's once-rounded position: both within a few
        // roundings of the exact position.
        slope_term += std::abs(slope) * 10.0 * magnitude * std::ldexp(1.0, -24);
      }
      const double bound = 2e-6 + std::ldexp(1.0, -23) + slope_term;
      const double error = std::abs(drawn - static_cast<double>(values[k]));
      max_ratio = std::max(max_ratio, error / bound);
      ASSERT_LE(error, bound) << "pixel " << r << ", " << c;
    }
    // Pixels not measured are background (or within rounding of the border).
    for (std::size_t i = 0; i < measured.size(); ++i) {
      if (measured[i]) continue;
      const glm::dvec3 q = g.volume_position(
          p, cell, {static_cast<double>(i % 80) + 0.5, static_cast<double>(i / 80) + 0.5});
      bool near_edge = false;
      for (int d = 0; d < 3; ++d) {
        const double hi = static_cast<double>(dims[static_cast<std::size_t>(d)]) - 0.5;
        near_edge = near_edge || std::abs(q[d] + 0.5) < 1e-3 || std::abs(hi - q[d]) < 1e-3;
      }
      if (near_edge) continue;
      const float grey = image[i];
      EXPECT_TRUE(grey == 0.16f || grey == 0.20f) << "pixel " << i << " drawn but not measured";
    }
    std::printf("%s: %zu pixels measured, drawn vs evaluated within %.2f of the bound\n",
                plane_name(p), pixels.size(), max_ratio);
  }
}

TEST(SliceAccuracy, MeterFiguresOfAVolumeHaveTheirProperties) {
  const std::uint32_t seed = fresh_seed();
  std::printf("meter on a volume: seed %u\n", seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::array<std::size_t, 3> dims{9, 14, 12};
  VolumeLimits limits;
  VolumeDocument doc =
      upload_volume(decode_samples(random_volume({9, 14, 12}, seed), {2.0, 1.0, 1.3}, "random",
                                   sv::DType::F32, limits),
                    limits, false);
  ASSERT_TRUE(doc.has_accuracy_input());
  EXPECT_EQ(doc.volume.exact->vec(), sv::ArrayD::from(doc.volume.samples).vec());
  std::mt19937 rng(seed);
  SliceGeometry g = random_geometry(dims, {2.0, 1.0, 1.3}, rng);
  const Rect cell{0, 0, 90, 70};
  g.fit({cell, cell, cell, cell});
  const std::array<gl::Fetch, 4> methods = {gl::Fetch::Nearest, gl::Fetch::CubicPrecise,
                                            gl::Fetch::CubicOtf, gl::Fetch::CubicUnfiltered};
  std::vector<AccuracyJob> jobs;
  for (Plane p : kPlanes) jobs.push_back({methods[plane_index(p)], slice_grid(g, p, cell)});
  // The same plane twice: precise and otf see the same pixels.
  jobs.push_back({gl::Fetch::CubicOtf, slice_grid(g, Plane::Coronal, cell)});
  AccuracyMeter meter(doc.volume.exact, doc.volume.samples, doc.coefficients);
  meter.measure(jobs);
  meter.finish();
  const std::vector<AccuracyResult>& results = meter.results();
  ASSERT_EQ(results.size(), jobs.size());
  for (std::size_t j = 0; j < results.size(); ++j) {
    const AccuracyResult& r = results[j];
    SCOPED_TRACE("job " + std::to_string(j) + " " + gl::fetch_name(r.job.method));
    std::vector<float> positions;
    std::vector<std::size_t> pixels;
    job_positions(r.job.grid, {9, 14, 12}, &positions, &pixels);
    EXPECT_EQ(r.points, pixels.size());
    EXPECT_GT(r.points, 300u);
    EXPECT_EQ(r.stats.count, r.points);
    ASSERT_EQ(r.error.size(), 90u * 70u);
    std::size_t finite = 0;
    float largest = 0.0f;
    for (float e : r.error) {
      if (std::isnan(e)) continue;
      ++finite;
      largest = std::max(largest, e);
    }
    EXPECT_EQ(finite, r.points) << "the heat map is NaN outside the volume only";
    EXPECT_EQ(largest, r.error_max);
    EXPECT_NEAR(r.error_max, r.stats.max_abs, 1e-7 * r.stats.max_abs + 1e-30);
    EXPECT_LE(r.stats.rms, r.stats.max_abs);
    EXPECT_NEAR(r.stats.sse, r.stats.rms * r.stats.rms * static_cast<double>(r.stats.count),
                1e-9 * r.stats.sse + 1e-30);
  }
  // Nearest on float samples: exact. Precise: float rounding of a [0, 1] volume. Otf: no
  // better than precise on the same pixels. The unfiltered cubic against its own reference
  // (the cubic on the raw samples): float rounding on a software renderer, whose linear
  // filtering is float arithmetic; on GPUs its 8 trilinear fetches carry the texture unit's
  // 8-bit weights (each fetch off by up to about 2^-9 of the local data range), like otf.
  EXPECT_EQ(results[0].stats.max_abs, 0.0);
  EXPECT_LT(results[1].stats.max_abs, 1e-5);
  EXPECT_LE(results[1].stats.max_abs, results[4].stats.max_abs);
  EXPECT_LE(results[1].stats.rms, results[4].stats.rms);
  const bool software_filtering = !gl::timer_queries_meaningful();
  EXPECT_LT(results[3].stats.max_abs, software_filtering ? 1e-5 : 3e-2);
  std::printf("nearest max %.3g, precise rms %.3g max %.3g, otf rms %.3g max %.3g\n",
              results[0].stats.max_abs, results[1].stats.rms, results[1].stats.max_abs,
              results[4].stats.rms, results[4].stats.max_abs);
}

TEST(SliceAccuracy, OverlayWaitsForTheViewToSettleAndWorksInSteps) {
  // The interactive path: a changed view starts a measurement only after kDebounceS without
  // change, then the meter works a budget per update; results belong to the view they measured.
  VolumeLimits limits;
  VolumeDocument doc = upload_volume(decode_samples(random_volume({8, 10, 12}, fresh_seed()),
                                                    {1.5, 1, 1}, "random", sv::DType::F32, limits),
                                     limits, false);
  SliceGeometry g({8, 10, 12}, {1.5, 1, 1});
  const Rect cell{0, 0, 64, 48};
  g.fit({cell, cell, cell, cell});
  const auto jobs_of = [&](const SliceGeometry& geometry) {
    std::vector<AccuracyJob> jobs;
    for (Plane p : kPlanes)
      jobs.push_back({gl::Fetch::CubicPrecise, slice_grid(geometry, p, cell)});
    return jobs;
  };
  AccuracyOverlay overlay;
  EXPECT_TRUE(overlay.settled()) << "no meter: nothing to do";
  overlay.reset(
      std::make_unique<AccuracyMeter>(doc.volume.exact, doc.volume.samples, doc.coefficients));
  double t = 10.0;
  overlay.update(jobs_of(g), t, false);
  EXPECT_FALSE(overlay.started());
  EXPECT_FALSE(overlay.settled());
  overlay.update(jobs_of(g), t + 0.5 * AccuracyOverlay::kDebounceS, false);
  EXPECT_FALSE(overlay.started()) << "still within the debounce time";
  t += AccuracyOverlay::kDebounceS;
  int updates = 0;
  while (!overlay.settled() && updates < 100000) {
    overlay.update(jobs_of(g), t, false);
    EXPECT_TRUE(overlay.started());
    ++updates;
    t += 0.016;
  }
  ASSERT_TRUE(overlay.settled());
  for (std::size_t i = 0; i < 4; ++i) {
    ASSERT_NE(overlay.result(i), nullptr);
    ASSERT_NE(overlay.heat_texture(i), nullptr);
    EXPECT_EQ(overlay.heat_texture(i)->width(), 64);
  }
  // The view changes: the old results are no longer the current view's, and nothing starts
  // before the debounce time has passed.
  g.scroll(Plane::Coronal, 1);
  overlay.update(jobs_of(g), t, false);
  EXPECT_EQ(overlay.result(1), nullptr);
  EXPECT_FALSE(overlay.started());
  EXPECT_EQ(overlay.results().size(), 4u) << "the previous results stay readable";
  overlay.update(jobs_of(g), t, true);  // `now`: measured at once and completed
  EXPECT_TRUE(overlay.settled());
  ASSERT_NE(overlay.result(1), nullptr);
  EXPECT_TRUE(same_jobs({overlay.result(1)->job}, {jobs_of(g)[1]}));
  std::printf("overlay: the first measurement took %d updates\n", updates);
}

TEST(VolumeDocument, KeepsTheDoublesForTheOverlayWithinItsBudget) {
  VolumeLimits limits = query_volume_limits();
  // The MRI file's values as read, in double (uint8: exact in float too).
  const DecodedVolume v = decode_volume(default_volume_path(), std::nullopt, limits);
  ASSERT_TRUE(v.exact);
  EXPECT_EQ(v.exact->dims(), v.samples.dims());
  EXPECT_EQ(v.exact->vec(), sv::ArrayD::from(v.samples).vec());
  EXPECT_EQ(v.accuracy_note, "");
  // Over the budget: no doubles, and one sentence naming the volume and the sizes.
  VolumeLimits small = limits;
  small.accuracy_budget = 1 << 20;
  const DecodedVolume w = decode_volume(default_volume_path(), std::nullopt, small);
  EXPECT_FALSE(w.exact);
  EXPECT_NE(w.accuracy_note.find("mri_t1_head.nrrd"), std::string::npos) << w.accuracy_note;
  EXPECT_NE(w.accuracy_note.find("7.8 MiB"), std::string::npos) << w.accuracy_note;
  EXPECT_NE(w.accuracy_note.find("budget"), std::string::npos) << w.accuracy_note;
  const VolumeDocument doc = upload_volume(w, small, false);
  EXPECT_FALSE(doc.has_accuracy_input());
  const DecodedVolume generated = decode_samples(random_volume({70, 70, 70}, 5), {1, 1, 1},
                                                 "big random", sv::DType::F32, small);
  EXPECT_FALSE(generated.exact);
  EXPECT_NE(generated.accuracy_note.find("big random"), std::string::npos);
}

TEST(VolumeDocument, OverTheTextureLimitsItShowsAnExactlyPlacedOverview) {
  // The bundled MRI at full resolution, then under a texture budget it exceeds and under a
  // texture side it exceeds: the smallest reduction by 2^k that fits, every overview voxel
  // where the reduction puts it in the patient frame, the volume's outer edges unmoved, the
  // values those of the least-squares reduction of the file's values, and a note that says so.
  const std::string path = default_volume_path();
  const DecodedVolume full = decode_volume(path, std::nullopt, VolumeLimits{});
  EXPECT_EQ(full.overview_level, 0);
  EXPECT_TRUE(full.overview_note.empty());
  EXPECT_EQ(full.full_dims, full.dims);
  const std::array<std::size_t, 3> n = full.dims;
  const double texture_bytes = 8.0 * static_cast<double>(n[0] * n[1] * n[2]);

  VolumeLimits budget;
  budget.texture_budget = static_cast<std::size_t>(texture_bytes / 3);  // 1/8 fits, 1 does not
  const DecodedVolume v = decode_volume(path, std::nullopt, budget);
  ASSERT_EQ(v.overview_level, 1);
  EXPECT_EQ(overview_level_for(n, budget), 1);
  EXPECT_EQ(v.full_dims, n);
  for (std::size_t d = 0; d < 3; ++d)
    EXPECT_EQ(v.dims[d], static_cast<std::size_t>(std::nearbyint(static_cast<double>(n[d]) / 2.0)))
        << "axis " << d;
  EXPECT_EQ(v.samples.dims(), (std::vector<std::size_t>{v.dims[0], v.dims[1], v.dims[2]}));
  for (const char* word : {"mri_t1_head.nrrd", "overview", "1/2", "texture budget"})
    EXPECT_NE(v.overview_note.find(word), std::string::npos) << word << ": " << v.overview_note;
  EXPECT_NE(v.description.find("overview 1/2"), std::string::npos) << v.description;
  EXPECT_EQ(v.geometry.source, full.geometry.source);
  EXPECT_EQ(sv::orientation_code(v.geometry), sv::orientation_code(full.geometry));
  // Integer data: the overview opens with the file's own window (its percentiles), not one
  // from the overview's values, which ring beyond the file's.
  ASSERT_TRUE(full.integer_valued);
  EXPECT_FALSE(v.integer_valued);
  EXPECT_DOUBLE_EQ(v.default_window.window, full.default_window.window);
  EXPECT_DOUBLE_EQ(v.default_window.level, full.default_window.level);
  EXPECT_DOUBLE_EQ(v.p01, full.p01);
  EXPECT_DOUBLE_EQ(v.p99, full.p99);

  // Geometry: the outer corners (index -1/2 and N - 1/2) stay; voxel l of an axis sits at the
  // file's index x_l = (l + 1/2) N / M - 1/2 (the pixel-edge grid), in mm.
  const auto world = [](const sv::Geometry& g, double i, double j, double k) {
    return sv::index_to_world(g, {i, j, k});
  };
  const auto near = [](const sv::Vec3& a, const sv::Vec3& b) {
    return std::fabs(a[0] - b[0]) + std::fabs(a[1] - b[1]) + std::fabs(a[2] - b[2]) < 1e-9;
  };
  EXPECT_TRUE(near(world(v.geometry, -0.5, -0.5, -0.5), world(full.geometry, -0.5, -0.5, -0.5)));
  const auto far_corner = [&](const sv::Geometry& g, const std::array<std::size_t, 3>& dims) {
    return world(g, static_cast<double>(dims[2]) - 0.5, static_cast<double>(dims[1]) - 0.5,
                 static_cast<double>(dims[0]) - 0.5);
  };
  EXPECT_TRUE(near(far_corner(v.geometry, v.dims), far_corner(full.geometry, n)));
  const auto fine = [&](std::size_t d, double l) {  // file index of overview index l, axis d
    return (l + 0.5) * static_cast<double>(n[d]) / static_cast<double>(v.dims[d]) - 0.5;
  };
  for (std::size_t l : {std::size_t{0}, std::size_t{5}, v.dims[2] - 1}) {
    const double i = static_cast<double>(l);
    EXPECT_TRUE(
        near(world(v.geometry, i, 3, 2), world(full.geometry, fine(2, i), fine(1, 3), fine(0, 2))))
        << "x voxel " << l;
  }
  // The file index of an overview index (the readout's "file voxel"): the same positions.
  for (std::size_t d = 0; d < 3; ++d) {
    std::array<double, 3> q{0, 0, 0};
    q[d] = 7;
    EXPECT_NEAR(v.file_index(q)[d], fine(d, 7), 1e-12) << "axis " << d;
  }
  // Spacing scales by N / M per axis.
  for (int d = 0; d < 3; ++d)
    EXPECT_NEAR(v.spacing[d],
                full.spacing[d] * static_cast<double>(n[d]) / static_cast<double>(v.dims[d]),
                1e-12);

  // Values: the reduction of the file's values (sv::reduce, reflect, pixel-edge grid, cubic),
  // in float; the mean within 1% (the projection keeps the integral).
  sv::ReduceOptions ro;
  ro.degree = 3;
  ro.boundary = sv::Boundary::Reflect;
  ro.grid = sv::PyramidGrid::Cells;
  ro.samples = true;
  const sv::Reduced<double> want = sv::reduce(sv::load_any(path, false).array, {0.5, 0.5, 0.5}, ro);
  ASSERT_EQ(want.samples.size(), v.samples.size());
  double worst = 0, mean_v = 0, mean_full = 0;
  for (std::size_t i = 0; i < want.samples.size(); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(v.samples[i]) - want.samples[i]));
    mean_v += v.samples[i];
  }
  for (float x : full.samples.vec()) mean_full += x;
  mean_v /= static_cast<double>(v.samples.size());
  mean_full /= static_cast<double>(full.samples.size());
  EXPECT_LE(worst, 1e-4 * std::max(1.0, full.max));
  EXPECT_NEAR(mean_v, mean_full, 0.01 * std::fabs(mean_full));

  // The texture side decides too: the smallest level whose every axis fits.
  VolumeLimits side;
  side.max_texture_side = 40;
  const int level = overview_level_for(n, side);
  ASSERT_GT(level, 0);
  const DecodedVolume w = decode_volume(path, std::nullopt, side);
  EXPECT_EQ(w.overview_level, level);
  for (std::size_t d = 0; d < 3; ++d) EXPECT_LE(w.dims[d], 40u);
  bool previous_fits = true;
  for (std::size_t d = 0; d < 3; ++d)
    if (std::nearbyint(std::ldexp(static_cast<double>(n[d]), 1 - level)) > 40.0)
      previous_fits = false;
  EXPECT_FALSE(previous_fits) << "level " << level << " is not the smallest that fits";
  EXPECT_NE(w.overview_note.find("largest 3-D texture"), std::string::npos) << w.overview_note;
}

TEST(VolumeDocument, AnOverviewOfAMappableFileIsBuiltFromItsMapSlabBySlab) {
  // The bundled MRI as a mappable .npy and as a gzip NIfTI (read into memory), under budgets
  // that force overviews at 1/2 and 1/4: the .npy's overview is built from its map slab by
  // slab (overview_source "map": the volume never in RAM), the .nii.gz's from the values read;
  // both equal sv::reduce of the whole volume in double to rounding, with the same window (the
  // same percentile picks) as the file at full resolution. A float volume with fractions is
  // not an overview of integers on either path.
  TempDir dir;
  const sv::Loaded mri = sv::load_any(default_volume_path(), false);
  const std::string npy = dir.file("mri.npy"), gz = dir.file("mri.nii.gz");
  sv::save_npy(npy, mri.array, sv::DType::U16, false);
  sv::save_nifti(gz, mri.array, sv::DType::U16, mri.geometry);
  const DecodedVolume full = decode_volume(npy, std::nullopt, VolumeLimits{});
  EXPECT_FALSE(full.overview_streamed);
  const std::array<std::size_t, 3> n = full.dims;
  const double bytes = 8.0 * static_cast<double>(n[0] * n[1] * n[2]);
  sv::ReduceOptions ro;
  ro.degree = 3;
  ro.boundary = sv::Boundary::Reflect;
  ro.grid = sv::PyramidGrid::Cells;
  ro.samples = true;
  for (int level : {1, 2}) {
    VolumeLimits budget;
    budget.texture_budget = static_cast<std::size_t>(bytes / std::pow(8.0, level) * 1.5);
    const DecodedVolume mapped = decode_volume(npy, std::nullopt, budget);
    const DecodedVolume read = decode_volume(gz, std::nullopt, budget);
    ASSERT_EQ(mapped.overview_level, level);
    ASSERT_EQ(read.overview_level, level);
    EXPECT_TRUE(mapped.overview_streamed);
    EXPECT_FALSE(read.overview_streamed);
    const double f = std::ldexp(1.0, -level);
    const sv::Reduced<double> want = sv::reduce(mri.array, {f, f, f}, ro);
    ASSERT_EQ(mapped.samples.size(), want.samples.size());
    ASSERT_EQ(read.samples.size(), want.samples.size());
    double worst_mapped = 0, worst_read = 0, range = 0;
    for (std::size_t i = 0; i < want.samples.size(); ++i) {
      worst_mapped = std::max(worst_mapped, std::fabs(mapped.samples[i] - want.samples[i]));
      worst_read = std::max(worst_read, std::fabs(read.samples[i] - want.samples[i]));
      range = std::max(range, std::fabs(want.samples[i]));
    }
    // Float samples of double results: half a float ulp (at most 2^-24 of the range), plus
    // the streamed path's other order of the separable passes (double rounding).
    const double bound = range * (std::ldexp(1.0, -24) + 1e-12);
    EXPECT_LE(worst_mapped, bound) << "level " << level;
    EXPECT_LE(worst_read, bound) << "level " << level;
    for (std::size_t d = 0; d < 3; ++d) {
      EXPECT_DOUBLE_EQ(mapped.overview_origin[d], want.axes[d].origin) << d;
      EXPECT_DOUBLE_EQ(mapped.overview_step[d], want.axes[d].spacing) << d;
    }
    EXPECT_TRUE(mapped.overview_of_integers);
    EXPECT_DOUBLE_EQ(mapped.p01, full.p01);
    EXPECT_DOUBLE_EQ(mapped.p99, full.p99);
    EXPECT_DOUBLE_EQ(read.p01, full.p01);
    EXPECT_DOUBLE_EQ(read.p99, full.p99);
    EXPECT_EQ(sv::orientation_code(mapped.geometry), sv::orientation_code(full.geometry));
    ASSERT_NE(mapped.full_resolution, nullptr);
    EXPECT_TRUE(mapped.full_resolution->mapped());
    std::printf(
        "overview 1/%d from the map: max |error| %.3g, from the values read %.3g "
        "(range %.3g)\n",
        1 << level, worst_mapped, worst_read, range);
  }
  sv::ArrayD fractions = mri.array;
  for (std::size_t i = 0; i < fractions.size(); ++i)
    fractions[i] += 0.25 * static_cast<double>(i % 3);
  const std::string fnpy = dir.file("fractions.npy");
  sv::save_npy(fnpy, fractions, sv::DType::F32, false);
  VolumeLimits budget;
  budget.texture_budget = static_cast<std::size_t>(bytes / 3);
  const DecodedVolume fv = decode_volume(fnpy, std::nullopt, budget);
  EXPECT_TRUE(fv.overview_streamed);
  EXPECT_FALSE(fv.overview_of_integers);
}

// ---- streaming the full resolution under the views of an overview ----

// A texture budget the bundled MRI exceeds, so that it opens as its overview at level 1.
VolumeOptions overview_options(const std::string& path, const std::array<std::size_t, 3>& dims) {
  VolumeOptions o;
  o.path = path;
  o.allow_cuda = false;
  o.accuracy = false;
  o.method = gl::Fetch::CubicPrecise;
  o.texture_budget =
      static_cast<std::size_t>(8.0 * static_cast<double>(dims[0] * dims[1] * dims[2]) / 3);
  return o;
}

// Gives `mode` the views of `reference` (another document of the same file: the same world
// frame): the crosshair at the same world point, each view's zoom and centre.
void copy_views(VolumeMode& reference, VolumeMode& mode) {
  SliceGeometry& from = reference.geometry();
  SliceGeometry& to = mode.geometry();
  to.set_crosshair(to.world_to_voxel(from.crosshair_world()));
  for (Plane p : kPlanes) to.view(p) = from.view(p);
}

// The views of `mode` drawn into a fresh float target (red channel, rows top down; NaN where
// nothing was drawn), all with method `m` and a window wide enough that nothing clamps.
std::vector<float> render_views(VolumeMode& mode, const FrameInfo& f, gl::Fetch m,
                                const WindowLevel& wl) {
  for (Plane p : kPlanes) mode.set_method(p, m);
  mode.set_window_level(wl);
  FloatTarget target(f.fb_width, f.fb_height);
  mode.draw(f);
  return target.read();
}

// The largest difference of two renders in the volume's values (grey times the window), and
// the count of pixels compared.
double max_value_difference(const std::vector<float>& a, const std::vector<float>& b,
                            const WindowLevel& wl, std::size_t* compared = nullptr) {
  double worst = 0;
  std::size_t n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) != std::isnan(b[i])) return std::numeric_limits<double>::infinity();
    if (std::isnan(a[i])) continue;
    worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]) * wl.window);
    ++n;
  }
  if (compared) *compared = n;
  return worst;
}

FrameInfo frame_of(int width, int height) {
  FrameInfo f;
  f.area = {0, 0, static_cast<double>(width), static_cast<double>(height)};
  f.fb_width = width;
  f.fb_height = height;
  return f;
}

// Streams the views of an overview of `path` zoomed to `zoom` px/mm about a fixed file voxel,
// and renders them as the full-resolution document and the overview (streaming off) show the
// same views: the largest differences from the full resolution per method.
struct StreamComparison {
  bool mapped = false;
  std::array<double, 2> streamed{}, overview{};  // precise, linear
  std::size_t pixels = 0;
};
StreamComparison compare_streamed(const std::string& path, double zoom) {
  StreamComparison out;
  const FrameInfo f = frame_of(360, 280);
  VolumeOptions full_options;
  full_options.path = path;
  full_options.allow_cuda = false;
  full_options.accuracy = false;
  VolumeMode full(full_options);
  full.finish();
  EXPECT_EQ(full.error(), "");
  if (!full.document()) return out;
  const DecodedVolume& fv = full.document()->volume;
  const VolumeOptions o = overview_options(path, fv.dims);
  VolumeMode streamed(o);
  VolumeOptions off = o;
  off.detail_budget = 0;
  VolumeMode overview(off);
  streamed.finish();
  overview.finish();
  EXPECT_EQ(streamed.document()->volume.overview_level, 1);
  EXPECT_EQ(overview.document()->volume.overview_level, 1);
  // Lay out and fit, then one view for all three: a file voxel off the centre, zoomed in.
  FloatTarget scratch(f.fb_width, f.fb_height);
  for (VolumeMode* m : {&full, &streamed, &overview}) m->draw(f);
  full.geometry().set_crosshair({static_cast<double>(fv.dims[0] / 2 + 3),
                                 static_cast<double>(fv.dims[1] / 2 - 5),
                                 static_cast<double>(fv.dims[2] / 2 + 7)});
  for (Plane p : kPlanes) full.geometry().view(p).zoom = zoom;
  copy_views(full, streamed);
  copy_views(full, overview);
  EXPECT_EQ(streamed.settled(), false) << "the zoomed views wait for their boxes";
  streamed.finish();
  overview.finish();
  EXPECT_TRUE(streamed.settled());
  EXPECT_EQ(streamed.error(), "");
  const auto& source = streamed.streamer().source();
  EXPECT_NE(source, nullptr);
  out.mapped = source && source->mapped();
  for (Plane p : kPlanes)
    EXPECT_NE(streamed.detail(p), nullptr) << plane_name(p) << " does not stream";
  EXPECT_EQ(overview.detail(Plane::Axial), nullptr);
  const WindowLevel wl{4.0 * (fv.max - fv.min), (fv.max + fv.min) / 2.0};
  const gl::Fetch methods[2] = {gl::Fetch::CubicPrecise, gl::Fetch::Linear};
  for (std::size_t k = 0; k < 2; ++k) {
    const std::vector<float> want = render_views(full, f, methods[k], wl);
    const std::vector<float> got = render_views(streamed, f, methods[k], wl);
    const std::vector<float> coarse = render_views(overview, f, methods[k], wl);
    out.streamed[k] = max_value_difference(got, want, wl, &out.pixels);
    out.overview[k] = max_value_difference(coarse, want, wl);
  }
  EXPECT_EQ(streamed.error(), "");
  return out;
}

TEST(VolumeStream, AZoomedInViewOfAnOverviewShowsTheFilesOwnVoxels) {
  // The bundled MRI as an overview at 1/2, its views zoomed in: each view streams a box of the
  // file that covers its pixels and lies within the file, whose coefficients are the whole
  // volume's within the halo's bound, and draws what the full-resolution document draws.
  const std::string path = default_volume_path();
  const FrameInfo f = frame_of(360, 280);
  VolumeOptions full_options;
  full_options.path = path;
  full_options.allow_cuda = false;
  full_options.accuracy = false;
  VolumeMode full(full_options);
  full.finish();
  ASSERT_EQ(full.error(), "");
  const VolumeDocument& fd = *full.document();
  ASSERT_TRUE(fd.has_readout());
  const std::array<std::size_t, 3> n = fd.volume.dims;
  VolumeMode mode(overview_options(path, n));
  mode.finish();
  ASSERT_EQ(mode.error(), "");
  const DecodedVolume& v = mode.document()->volume;
  ASSERT_EQ(v.overview_level, 1);
  FloatTarget scratch(f.fb_width, f.fb_height);
  mode.draw(f);
  full.draw(f);
  for (Plane p : kPlanes) mode.geometry().view(p).zoom = 3.0;  // pixels of 1/3 mm
  mode.finish();
  ASSERT_TRUE(mode.settled());
  ASSERT_EQ(mode.error(), "");
  const std::vector<Rect> cells = layout_cells(Layout::Grid, f.area);
  const double range = fd.volume.max - fd.volume.min;
  const double bound = sv::chunk_bound(3, 3, detail_halo()) * range;
  // Both prefilters round in float: a few ulp of the largest value.
  const double rounding =
      8.0 * std::ldexp(1.0, -23) * std::max(std::fabs(fd.volume.max), std::fabs(fd.volume.min));
  std::printf("halo %zu: bound %.3g + rounding %.3g\n", detail_halo(), bound, rounding);
  const nlohmann::json report = mode.report();
  for (Plane p : kPlanes) {
    SCOPED_TRACE(plane_name(p));
    const std::size_t i = plane_index(p);
    const DetailTextures* d = mode.detail(p);
    ASSERT_NE(d, nullptr);
    const DetailBox& b = d->box;
    // (a) Within the file, and around every pixel the view samples, the cubic's support.
    const gl::GridMapping g = slice_grid(mode.geometry(), p, cells[i]);
    for (std::size_t d3 = 0; d3 < 3; ++d3) EXPECT_LE(b.hi[d3], n[d3]);
    for (const double r : {0.0, static_cast<double>(g.rows - 1)})
      for (const double c : {0.0, static_cast<double>(g.cols - 1)}) {
        std::array<double, 3> q{};
        for (std::size_t a = 0; a < 3; ++a)
          q[a] = g.origin[a] + r * g.step_row[a] + c * g.step_col[a];
        const std::array<double, 3> fi = v.file_index(q);
        for (std::size_t a = 0; a < 3; ++a) {
          if (fi[a] < -0.5 || fi[a] > static_cast<double>(n[a]) - 0.5) continue;  // outside
          EXPECT_TRUE(b.lo[a] == 0 || static_cast<double>(b.lo[a]) <= std::floor(fi[a]) - 1.0)
              << "axis " << a << " lo " << b.lo[a] << " position " << fi[a];
          EXPECT_TRUE(b.hi[a] == n[a] || static_cast<double>(b.hi[a]) >= std::floor(fi[a]) + 3.0)
              << "axis " << a << " hi " << b.hi[a] << " position " << fi[a];
        }
      }
    // The report says so, with the box.
    const nlohmann::json& view = report["views"][i];
    EXPECT_EQ(view["streamed"], true);
    EXPECT_EQ(view["full_resolution"], true);
    EXPECT_EQ(view["detail_box_zyx"],
              nlohmann::json({b.lo[0], b.lo[1], b.lo[2], b.hi[0], b.hi[1], b.hi[2]}));
    EXPECT_NE(view["resolution_note"].get<std::string>().find("FULL RESOLUTION"),
              std::string::npos);
    // (b) The samples are the file's; the coefficients the whole-volume prefilter's within the
    // halo's bound (plus float rounding of both prefilters).
    double worst = 0;
    for (std::size_t z = b.lo[0]; z < b.hi[0]; ++z)
      for (std::size_t y = b.lo[1]; y < b.hi[1]; ++y)
        for (std::size_t x = b.lo[2]; x < b.hi[2]; ++x) {
          const std::size_t lz = z - b.lo[0], ly = y - b.lo[1], lx = x - b.lo[2];
          ASSERT_EQ(d->samples.at3(lz, ly, lx), fd.volume.samples.at3(z, y, x));
          worst = std::max(worst, std::fabs(static_cast<double>(d->coefficients.at3(lz, ly, lx)) -
                                            fd.coefficients.at3(z, y, x)));
        }
    std::printf("%s: box [%zu, %zu, %zu] .. [%zu, %zu, %zu], coefficients within %.3g\n",
                plane_name(p), b.lo[0], b.lo[1], b.lo[2], b.hi[0], b.hi[1], b.hi[2], worst);
    EXPECT_LE(worst, bound + rounding);
  }
  EXPECT_EQ(report["streaming"]["source"], "ram") << "the bundled NRRD is gzip-compressed";

  // The readout over a streamed view: the file's value at the nearest file voxel, and the
  // view's method (precise cubic) on the box equal to the full-resolution document's.
  const glm::dvec3 at = mode.geometry().crosshair() + glm::dvec3(0.3, 0.0, -0.2);
  const std::optional<VolumeMode::FullResolutionValue> fr =
      mode.full_resolution_value(Plane::Axial, at);
  ASSERT_TRUE(fr.has_value());
  const std::array<double, 3> fi = v.file_index({at[0], at[1], at[2]});
  for (std::size_t a = 0; a < 3; ++a)
    EXPECT_EQ(static_cast<double>(fr->voxel[a]), std::floor(fi[a] + 0.5)) << "axis " << a;
  EXPECT_EQ(fr->raw, fd.volume.samples.at3(fr->voxel[0], fr->voxel[1], fr->voxel[2]));
  double want = 0;
  sv::SamplerOptions so;
  so.degree = 3;
  so.threads = 1;
  sv::sample(fd.coefficients, fi.data(), 1, &want, so);
  EXPECT_NEAR(fr->method_value, want, 1e-3) << "the readout's cubic is not the file's";
  EXPECT_FALSE(full.full_resolution_value(Plane::Axial, at).has_value());

  // A slice further (scrolling) stays within the streamed box's margin: no new box, no wait.
  const DetailBox before = mode.detail(Plane::Axial)->box;
  mode.geometry().scroll(Plane::Axial, 1);
  ASSERT_NE(mode.detail(Plane::Axial), nullptr);
  EXPECT_EQ(mode.detail(Plane::Axial)->box, before);
  EXPECT_TRUE(mode.settled());

  // (d) Zoomed out until a pixel spans more than an overview voxel: the overview, and the
  // view says why.
  for (Plane p : kPlanes) mode.geometry().view(p).zoom = 0.2;
  mode.finish();
  EXPECT_TRUE(mode.settled());
  const nlohmann::json out = mode.report();
  for (Plane p : kPlanes) {
    EXPECT_EQ(mode.detail(p), nullptr);
    EXPECT_EQ(out["views"][plane_index(p)]["streamed"], false);
    EXPECT_EQ(out["views"][plane_index(p)]["full_resolution"], false);
    EXPECT_NE(out["views"][plane_index(p)]["resolution_note"].get<std::string>().find("zoom in"),
              std::string::npos);
  }
  // A box over the detail budget: too large to stream, said so.
  VolumeOptions small = overview_options(path, n);
  small.detail_budget = 4 * 1024;  // 1 KiB a view
  VolumeMode tight(small);
  tight.finish();
  tight.draw(f);
  tight.finish();
  EXPECT_TRUE(tight.settled());
  EXPECT_EQ(tight.detail(Plane::Axial), nullptr);
  EXPECT_NE(tight.report()["views"][0]["resolution_note"].get<std::string>().find("too large"),
            std::string::npos);
}

TEST(VolumeStream, StreamedViewsDrawWhatTheFullResolutionDraws) {
  // (c) The precise cubic and linear views of the streamed overview equal the full-resolution
  // document's views (float map and fetch rounding only), where the overview's differ by far
  // more; (e) from the file's map (.npy) and from RAM (.nii.gz, the bundled gzip NRRD).
  TempDir dir;
  const sv::Loaded mri = sv::load_any(default_volume_path(), false);
  const std::string npy = dir.file("mri.npy"), gz = dir.file("mri.nii.gz");
  sv::save_npy(npy, sv::ArrayF::from(mri.array), false);
  sv::save_nifti(gz, mri.array, sv::DType::F32, mri.geometry);
  double lo = mri.array[0], hi = mri.array[0];
  for (double x : mri.array.vec()) {
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  const double range = hi - lo;
  for (const std::string& path : {default_volume_path(), npy, gz}) {
    SCOPED_TRACE(path);
    const StreamComparison c = compare_streamed(path, 3.0);
    std::printf(
        "%s (%s): %zu pixels, max |streamed - full| precise %.3g, linear %.3g; overview "
        "%.3g, %.3g\n",
        fs::path(path).filename().c_str(), c.mapped ? "map" : "RAM", c.pixels, c.streamed[0],
        c.streamed[1], c.overview[0], c.overview[1]);
    EXPECT_EQ(c.mapped, path == npy);
    EXPECT_GT(c.pixels, 50000u);
    for (std::size_t k = 0; k < 2; ++k) {
      EXPECT_LE(c.streamed[k], 2e-5 * range) << (k ? "linear" : "precise");
      EXPECT_GT(c.overview[k], 0.05 * range) << "the overview must differ visibly";
      EXPECT_GT(c.overview[k], 100.0 * c.streamed[k]);
    }
  }
}

TEST(VolumeStream, StreamerDebouncesKeepsCoveringBoxesAndDropsStaleOnes) {
  // The bookkeeping on a fresh random volume in RAM: no job before the box has been still for
  // the debounce time; a box that covers the view is kept without a new job; a view whose box
  // is not covered shows the overview (nullptr) until its own arrives; a result that no longer
  // covers its view is dropped.
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const sv::ArrayF volume = random_volume({24, 30, 36}, seed);
  VolumeStreamer s;
  s.reset(std::make_shared<const FullResolutionSource>(sv::ArrayF(volume)));
  const auto plan = [](std::array<std::size_t, 3> lo, std::array<std::size_t, 3> hi) {
    DetailPlan p;
    p.stream = true;
    p.core = {lo, hi};
    return p;
  };
  std::array<DetailPlan, 4> plans{};  // views 1..3 do not stream
  plans[0] = plan({4, 5, 6}, {14, 20, 30});
  s.update(plans, 10.0, false);
  EXPECT_FALSE(s.busy()) << "a job before the view was still";
  EXPECT_FALSE(s.settled(plans));
  s.update(plans, 10.1, false);
  EXPECT_FALSE(s.busy());
  s.update(plans, 10.3, false);
  EXPECT_TRUE(s.busy()) << "no job once the view was still for the debounce time";
  s.update(plans, 10.3, true);  // waits and uploads
  ASSERT_NE(s.detail(0, plans[0]), nullptr);
  EXPECT_TRUE(s.settled(plans));
  const DetailTextures* d = s.detail(0, plans[0]);
  EXPECT_EQ(d->box, plans[0].core);
  for (std::size_t z = 4; z < 14; ++z)
    for (std::size_t y = 5; y < 20; ++y)
      for (std::size_t x = 6; x < 30; ++x)
        ASSERT_EQ(d->samples.at3(z - 4, y - 5, x - 6), volume.at3(z, y, x));
  EXPECT_EQ(s.detail(1, plans[1]), nullptr);
  // A smaller box inside: the same textures, no job.
  std::array<DetailPlan, 4> inside = plans;
  inside[0] = plan({5, 6, 7}, {13, 19, 29});
  s.update(inside, 11.0, false);
  s.update(inside, 12.0, false);
  EXPECT_FALSE(s.busy());
  EXPECT_EQ(s.detail(0, inside[0]), d);
  // A box beyond it: the overview (nullptr) until the new box is there.
  std::array<DetailPlan, 4> moved = plans;
  moved[0] = plan({10, 5, 6}, {20, 20, 30});
  s.update(moved, 13.0, false);
  EXPECT_EQ(s.detail(0, moved[0]), nullptr);
  EXPECT_FALSE(s.settled(moved));
  // Its job starts; the view moves on before it ends: the result is dropped.
  s.update(moved, 13.5, false);
  ASSERT_TRUE(s.busy());
  std::array<DetailPlan, 4> away = plans;
  away[0] = plan({0, 0, 0}, {6, 6, 6});
  while (s.busy()) {
    s.update(away, 13.6, false);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(s.detail(0, moved[0]), nullptr) << "a stale result was kept";
  EXPECT_EQ(s.detail(0, away[0]), nullptr);
  s.update(away, 13.6, true);
  ASSERT_NE(s.detail(0, away[0]), nullptr);
  EXPECT_EQ(s.detail(0, away[0])->box, away[0].core);
  // Boxes cover what lies within them.
  EXPECT_TRUE(plans[0].core.covers(inside[0].core));
  EXPECT_FALSE(plans[0].core.covers(moved[0].core));
}

// ---- the document ----

TEST(VolumeDocument, RefusesBadFilesNamingThem) {
  TempDir dir;
  VolumeLimits limits;
  // Missing file.
  const std::string missing = dir.file("missing.nrrd");
  EXPECT_NE(error_of([&] { decode_volume(missing, std::nullopt, limits); }).find(missing),
            std::string::npos);
  // Garbage with a volume extension.
  const std::string garbage = dir.file("garbage.nrrd");
  std::ofstream(garbage) << "this is not a NRRD file\n";
  EXPECT_NE(error_of([&] { decode_volume(garbage, std::nullopt, limits); }).find(garbage),
            std::string::npos);
  // Truncated: a valid NIfTI file cut short.
  const std::string truncated = dir.file("truncated.nii");
  sv::save_nifti(truncated, sv::ArrayD::from(random_volume({4, 5, 6}, 1)), sv::DType::F32);
  fs::resize_file(truncated, fs::file_size(truncated) - 10);
  EXPECT_NE(error_of([&] { decode_volume(truncated, std::nullopt, limits); }).find(truncated),
            std::string::npos);
  // Raw data that does not match its spec.
  const std::string raw = dir.file("volume.raw");
  std::ofstream(raw, std::ios::binary) << std::string(100, '\0');
  const std::string raw_msg =
      error_of([&] { decode_volume(raw, sv::parse_raw_spec("4x5x6:u8"), limits); });
  EXPECT_NE(raw_msg.find(raw), std::string::npos) << raw_msg;
  // Unknown extension without a raw spec.
  EXPECT_NE(error_of([&] { decode_volume(raw, std::nullopt, limits); }).find(raw),
            std::string::npos);
  // A 2-D array and a colour volume.
  const std::string flat = dir.file("flat.npy");
  sv::save_npy(flat, random_volume({5, 6}, 2), false);
  const std::string flat_msg = error_of([&] { decode_volume(flat, std::nullopt, limits); });
  EXPECT_NE(flat_msg.find(flat), std::string::npos) << flat_msg;
  EXPECT_NE(flat_msg.find("3-D"), std::string::npos) << flat_msg;
  const std::string colour = dir.file("colour.nrrd");
  sv::save_nrrd(colour, sv::ArrayD({3, 4, 5}, 3), sv::DType::F32, true);
  const std::string colour_msg = error_of([&] { decode_volume(colour, std::nullopt, limits); });
  EXPECT_NE(colour_msg.find(colour), std::string::npos) << colour_msg;
  EXPECT_NE(colour_msg.find("channels"), std::string::npos) << colour_msg;
  // Too large: a file over the texture budget or the largest 3-D texture becomes an overview
  // (the test above), refused only where not even one voxel fits.
  const std::string fine = dir.file("fine.nrrd");
  sv::save_nrrd(fine, sv::ArrayD::from(random_volume({16, 8, 8}, 3)), sv::DType::F32, false);
  VolumeLimits tight;
  tight.texture_budget = 1024;  // 8 KiB at full resolution, 1 KiB at 1/2
  const DecodedVolume reduced = decode_volume(fine, std::nullopt, tight);
  EXPECT_EQ(reduced.overview_level, 1);
  EXPECT_NE(reduced.overview_note.find("fine.nrrd"), std::string::npos) << reduced.overview_note;
  VolumeLimits nothing_fits;
  nothing_fits.texture_budget = 4;  // less than one voxel's two textures
  const std::string budget_msg = error_of([&] { decode_volume(fine, std::nullopt, nothing_fits); });
  EXPECT_NE(budget_msg.find(fine), std::string::npos) << budget_msg;
  EXPECT_NE(budget_msg.find("8x8x16"), std::string::npos) << budget_msg;
  EXPECT_NE(budget_msg.find("budget"), std::string::npos) << budget_msg;
  VolumeLimits small_side;
  small_side.max_texture_side = 8;
  const DecodedVolume narrow = decode_volume(fine, std::nullopt, small_side);
  EXPECT_EQ(narrow.overview_level, 1);
  EXPECT_NE(narrow.overview_note.find("largest 3-D texture"), std::string::npos)
      << narrow.overview_note;
  // The real limit of this context refuses a volume one voxel longer than it allows.
  const VolumeLimits real = query_volume_limits();
  ASSERT_GT(real.max_texture_side, 0);
  const std::string long_msg = error_of([&] {
    decode_samples(sv::ArrayF({1, 1, static_cast<std::size_t>(real.max_texture_side) + 1}, 1),
                   {1, 1, 1}, "long volume", sv::DType::F32, real);
  });
  EXPECT_NE(long_msg.find("long volume"), std::string::npos) << long_msg;
  // A file that loads is accepted, with its spacing.
  EXPECT_EQ(decode_volume(fine, std::nullopt, limits).dims, (std::array<std::size_t, 3>{16, 8, 8}));
}

TEST(VolumeDocument, MarschnerLobbHasItsDimsAndValues) {
  VolumeLimits limits = query_volume_limits();
  VolumeDocument doc =
      upload_volume(decode_marschner_lobb(kMarschnerLobbSize, limits), limits, false);
  const DecodedVolume& v = doc.volume;
  const std::size_t n = kMarschnerLobbSize;
  EXPECT_EQ(v.dims, (std::array<std::size_t, 3>{n, n, n}));
  EXPECT_EQ(v.spacing, glm::dvec3(1.0));
  EXPECT_FALSE(v.integer_valued);
  EXPECT_GE(v.min, 0.0);
  EXPECT_LE(v.max, 1.0);
  EXPECT_DOUBLE_EQ(v.default_window.window, v.max - v.min);
  for (const std::array<std::size_t, 3>& zyx :
       {std::array<std::size_t, 3>{0, 0, 0}, std::array<std::size_t, 3>{20, 20, 20},
        std::array<std::size_t, 3>{3, 17, 40}}) {
    const double expected = sv::marschner_lobb_at(sv::marschner_lobb_coord(zyx[2], n),
                                                  sv::marschner_lobb_coord(zyx[1], n),
                                                  sv::marschner_lobb_coord(zyx[0], n));
    EXPECT_NEAR(v.samples.at3(zyx[0], zyx[1], zyx[2]), expected, 1e-7);
  }
  // The coefficients read back are the CPU float prefilter's (the CPU interop path).
  ASSERT_TRUE(doc.has_readout());
  sv::ArrayF expected = v.samples;
  sv::prefilter(expected, {3, sv::Boundary::Reflect, 0});
  EXPECT_EQ(doc.coefficients.vec(), expected.vec());
  EXPECT_FALSE(doc.prefilter_on_gpu);
}

TEST(VolumeDocument, BundledMriLoadsWithItsSpacingAndWindow) {
  VolumeLimits limits = query_volume_limits();
  const DecodedVolume v = decode_volume(default_volume_path(), std::nullopt, limits);
  EXPECT_EQ(v.dims, (std::array<std::size_t, 3>{62, 128, 128}));
  EXPECT_EQ(v.spacing, glm::dvec3(3, 2, 2));
  // Its orientation comes from its own header (no special case by file name): i to the left,
  // j inferior, k posterior.
  EXPECT_TRUE(v.geometry.oriented());
  EXPECT_EQ(sv::orientation_code(v.geometry), "LIP");
  EXPECT_NE(v.description.find("LIP"), std::string::npos) << v.description;
  EXPECT_TRUE(v.integer_valued);
  EXPECT_LT(v.p01, v.p99);
  EXPECT_DOUBLE_EQ(v.default_window.window, v.p99 - v.p01);
  EXPECT_DOUBLE_EQ(v.default_window.level, (v.p99 + v.p01) / 2);
  // Over the readout budget: no coefficients kept, and the note says why.
  VolumeLimits no_readout = limits;
  no_readout.readout_budget = 1024;
  const VolumeDocument doc = upload_volume(v, no_readout, false);
  EXPECT_FALSE(doc.has_readout());
  EXPECT_NE(doc.readout_note.find("MiB"), std::string::npos) << doc.readout_note;
}

// ---- the mode ----

TEST(VolumeMode, LoadsReportsAndKeepsItsVolumeOnErrors) {
  VolumeOptions options;
  options.method = gl::Fetch::CubicPrecise;
  options.window = 100.0;
  options.level = 60.0;
  options.allow_cuda = false;
  VolumeMode mode(options);
  mode.finish();
  ASSERT_TRUE(mode.settled());
  ASSERT_EQ(mode.error(), "");
  ASSERT_NE(mode.document(), nullptr);
  nlohmann::json r = mode.report();
  EXPECT_EQ(r["mode"], "volume");
  EXPECT_EQ(r["dims_zyx"], nlohmann::json({62, 128, 128}));
  EXPECT_EQ(r["spacing_mm_zyx"], nlohmann::json({3.0, 2.0, 2.0}));
  EXPECT_EQ(r["prefilter"]["path"], "cpu");
  EXPECT_EQ(r["window"], 100.0);
  EXPECT_EQ(r["level"], 60.0);
  EXPECT_EQ(r["views"][0]["method"], "precise");
  EXPECT_EQ(mode.title(), "mri_t1_head.nrrd");
  // Patient space, from the file's own header.
  EXPECT_EQ(r["oriented"], true);
  EXPECT_EQ(r["orientation"], "LIP");
  EXPECT_EQ(r["views"][0]["name"], "axial");
  EXPECT_EQ(r["views"][0]["normal_ras"], nlohmann::json({0.0, 0.0, 1.0}));
  EXPECT_EQ(r["views"][1]["normal_ras"], nlohmann::json({0.0, 1.0, 0.0}));
  EXPECT_EQ(r["views"][2]["normal_ras"], nlohmann::json({1.0, 0.0, 0.0}));
  EXPECT_EQ(r["views"][0]["letters"],
            nlohmann::json({{"left", "R"}, {"right", "L"}, {"top", "A"}, {"bottom", "P"}}));
  EXPECT_EQ(r["views"][2]["letters"],
            nlohmann::json({{"left", "A"}, {"right", "P"}, {"top", "S"}, {"bottom", "I"}}));
  EXPECT_FALSE(r.contains("orientation_note"));

  // Drawing all four views into a framebuffer leaves no GL error and no mode error.
  FloatTarget target(400, 300);
  FrameInfo f;
  f.area = {0, 0, 400, 300};
  f.fb_width = 400;
  f.fb_height = 300;
  // (update() needs ImGui's input state; draw() lays the views out from the same area.)
  mode.draw(f);
  EXPECT_EQ(mode.error(), "");
  EXPECT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));
  // Every pixel of the 2x2 grid's cells was drawn (volume or background); the gaps were not.
  const std::vector<float> image = target.read();
  for (const Rect& c : layout_cells(Layout::Grid, f.area)) {
    for (int y = static_cast<int>(c.y); y < static_cast<int>(c.y + c.height); y += 7)
      for (int x = static_cast<int>(c.x); x < static_cast<int>(c.x + c.width); x += 7)
        ASSERT_FALSE(std::isnan(image[static_cast<std::size_t>(y * 400 + x)])) << x << ", " << y;
  }

  // A file that cannot be read: the error names it, the volume stays.
  TempDir dir;
  const std::string bad = dir.file("bad.nii");
  std::ofstream(bad) << "not a NIfTI file";
  EXPECT_TRUE(mode.open(bad));
  mode.finish();
  EXPECT_NE(mode.error().find(bad), std::string::npos) << mode.error();
  EXPECT_EQ(mode.report()["dims_zyx"], nlohmann::json({62, 128, 128}));
  EXPECT_FALSE(mode.open(dir.file("missing.nrrd")));
  mode.clear_error();

  // The synthetic volume replaces it.
  ASSERT_EQ(mode.bundled().size(), 2u);
  EXPECT_TRUE(mode.open_bundled(1));
  EXPECT_FALSE(mode.settled());
  mode.finish();
  EXPECT_TRUE(mode.settled());
  EXPECT_EQ(mode.report()["dims_zyx"], nlohmann::json({41, 41, 41}));

  // A file without orientation (.npy): index planes, no letters, the note.
  const std::string npy = dir.file("plain.npy");
  sv::save_npy(npy, random_volume({5, 6, 7}, 9), false);
  ASSERT_TRUE(mode.open(npy));
  mode.finish();
  ASSERT_EQ(mode.error(), "");
  const nlohmann::json u = mode.report();
  EXPECT_EQ(u["oriented"], false);
  EXPECT_EQ(u["orientation"], "");
  EXPECT_NE(u["orientation_note"].get<std::string>().find("orientation not stated"),
            std::string::npos);
  const char* names[4] = {"k plane", "j plane", "i plane", "oblique"};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(u["views"][i]["name"], names[i]);
    for (const char* edge : {"left", "right", "top", "bottom"})
      EXPECT_EQ(u["views"][i]["letters"][edge], "") << names[i] << " " << edge;
  }
}

TEST(VolumeMode, MeasuresItsFourViews) {
  VolumeOptions options;
  options.methods = {gl::Fetch::CubicPrecise, gl::Fetch::Nearest, gl::Fetch::CubicOtf,
                     gl::Fetch::Linear};
  options.allow_cuda = false;
  VolumeMode mode(options);
  mode.finish();
  ASSERT_EQ(mode.error(), "");
  EXPECT_TRUE(mode.settled()) << "nothing to measure before the views are laid out";
  FloatTarget target(360, 280);
  FrameInfo f;
  f.area = {0, 0, 360, 280};
  f.fb_width = 360;
  f.fb_height = 280;
  mode.draw(f);  // lays the views out
  EXPECT_FALSE(mode.settled()) << "the views are not measured yet";
  mode.finish();
  ASSERT_EQ(mode.error(), "");
  ASSERT_TRUE(mode.settled());
  const nlohmann::json r = mode.report();
  EXPECT_EQ(r["accuracy"], "measured");
  const std::vector<Rect> cells = layout_cells(Layout::Grid, f.area);
  for (Plane p : kPlanes) {
    const std::size_t i = plane_index(p);
    SCOPED_TRACE(plane_name(p));
    const nlohmann::json& v = r["views"][i];
    ASSERT_TRUE(v.contains("accuracy")) << v.dump();
    EXPECT_EQ(v["method"], gl::fetch_name(*options.methods[i]));
    EXPECT_EQ(v["grid"]["rows"], static_cast<std::size_t>(cells[i].height));
    EXPECT_EQ(v["grid"]["cols"], static_cast<std::size_t>(cells[i].width));
    const gl::GridMapping expected = slice_grid(mode.geometry(), p, cells[i]);
    for (std::size_t d = 0; d < 3; ++d) {
      EXPECT_EQ(v["grid"]["origin"][d].get<double>(), expected.origin[d]);
      EXPECT_EQ(v["grid"]["step_row"][d].get<double>(), expected.step_row[d]);
      EXPECT_EQ(v["grid"]["step_col"][d].get<double>(), expected.step_col[d]);
    }
    EXPECT_GT(v["accuracy"]["points"].get<std::size_t>(), 1000u);
    EXPECT_EQ(v["accuracy"]["sse"], v["accuracy"]["sum_sq"]);
  }
  EXPECT_EQ(r["views"][1]["accuracy"]["max_abs"], 0.0) << "nearest on 8-bit samples";
  // A changed view is measured again; the old results no longer count as the current ones.
  mode.geometry().scroll(Plane::Axial, 3);
  EXPECT_EQ(mode.accuracy_jobs().size(), 4u);
  mode.finish();
  ASSERT_NE(mode.accuracy().result(0), nullptr);
  EXPECT_TRUE(same_jobs({mode.accuracy().result(0)->job}, {mode.accuracy_jobs()[0]}));

  // --no-accuracy: nothing measured, nothing pending.
  options.accuracy = false;
  VolumeMode off(options);
  off.finish();
  off.draw(f);
  off.finish();
  EXPECT_TRUE(off.settled());
  EXPECT_EQ(off.report()["accuracy"], "off");
  EXPECT_FALSE(off.report()["views"][0].contains("accuracy"));
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
