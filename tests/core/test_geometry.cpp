// sv::Geometry: orientation codes (nibabel's aff2axcodes rules), index <-> world, resampled
// grids, checks. The nibabel oracle for codes of real files is tests/cli/test_geometry.py.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "splineview/error.h"
#include "splineview/geometry.h"

namespace {

sv::Geometry with_columns(const sv::Vec3& i, const sv::Vec3& j, const sv::Vec3& k,
                          const sv::Vec3& origin = {0, 0, 0}) {
  sv::Geometry g;
  for (int r = 0; r < 3; ++r) {
    g.affine[r][0] = i[r];
    g.affine[r][1] = j[r];
    g.affine[r][2] = k[r];
    g.affine[r][3] = origin[r];
  }
  g.source = "test";
  return g;
}

TEST(Geometry, CodesOfAxisAlignedAffinesNameWhereEachIndexAxisPoints) {
  EXPECT_EQ(sv::orientation_code(with_columns({1, 0, 0}, {0, 1, 0}, {0, 0, 1})), "RAS");
  EXPECT_EQ(sv::orientation_code(with_columns({-1, 0, 0}, {0, -1, 0}, {0, 0, 1})), "LPS");
  EXPECT_EQ(sv::orientation_code(with_columns({-2, 0, 0}, {0, 3, 0}, {0, 0, 1.5})), "LAS");
  // A sagittal acquisition: i runs anterior to posterior, j superior to inferior, k left to
  // right.
  EXPECT_EQ(sv::orientation_code(with_columns({0, -1, 0}, {0, 0, -1}, {1, 0, 0})), "PIR");
  // Coronal: i to the left, j down, k to anterior.
  EXPECT_EQ(sv::orientation_code(with_columns({-1, 0, 0}, {0, 0, -1}, {0, 1, 0})), "LIA");
}

TEST(Geometry, ObliqueAndShearedAffinesTakeTheClosestAxis) {
  const double c = std::cos(0.5), s = std::sin(0.5);  // 28.6 degrees about z
  EXPECT_EQ(sv::orientation_code(with_columns({c, s, 0}, {-s, c, 0}, {0, 0, 1})), "RAS");
  // 60 degrees: i is closer to A than to R.
  const double c6 = std::cos(M_PI / 3), s6 = std::sin(M_PI / 3);
  EXPECT_EQ(sv::orientation_code(with_columns({c6, s6, 0}, {-s6, c6, 0}, {0, 0, 1})), "ALS");
  // A shear that leaves the polar factor near the identity.
  EXPECT_EQ(sv::orientation_code(with_columns({1, 0.3, 0}, {0, 1, 0.2}, {0, 0, 1})), "RAS");
  // Singular directions have no code.
  EXPECT_EQ(sv::orientation_code(with_columns({1, 0, 0}, {2, 0, 0}, {0, 0, 1})), "");
}

TEST(Geometry, WorldToIndexInvertsIndexToWorld) {
  const sv::Geometry g = with_columns({0, -0.9, 0.1}, {0, 0.1, -1.2}, {2.5, 0, 0}, {10, -20, 30});
  const sv::Vec3 ijk{3.25, -1.5, 7};
  const sv::Vec3 w = sv::index_to_world(g, ijk);
  EXPECT_DOUBLE_EQ(w[0], 10 + 2.5 * 7);
  const sv::Vec3 back = sv::world_to_index(g, w);
  for (int a = 0; a < 3; ++a) EXPECT_NEAR(back[a], ijk[a], 1e-12);
  EXPECT_THROW(sv::world_to_index(with_columns({1, 0, 0}, {1, 0, 0}, {0, 0, 1}), w), sv::Error);
}

TEST(Geometry, SpacingIsArrayOrderAndComesBack) {
  const sv::Geometry g = sv::geometry_from_spacing({2.5, 0.75, 0.5});  // (z, y, x)
  EXPECT_FALSE(g.oriented());
  EXPECT_DOUBLE_EQ(g.affine[0][0], 0.5);  // i = x
  EXPECT_DOUBLE_EQ(g.affine[2][2], 2.5);  // k = z
  const std::vector<double> s = sv::geometry_spacing(g, 3);
  EXPECT_EQ(s, (std::vector<double>{2.5, 0.75, 0.5}));
  const sv::Geometry g2 = sv::geometry_from_spacing({0.3, 0.2});  // (y, x)
  EXPECT_EQ(sv::geometry_spacing(g2, 2), (std::vector<double>{0.3, 0.2}));
  EXPECT_THROW(sv::geometry_from_spacing({1, 0, 1}), sv::Error);
  EXPECT_THROW(sv::geometry_from_spacing({1, NAN}), sv::Error);
}

TEST(Geometry, ZoomedGridKeepsTheImageExtentInTheWorld) {
  // sv::zoom by f: output q sits at input (q + 1/2)/f - 1/2. The outer edges of the first and
  // last samples (index -1/2 and N - 1/2) must land on the same world points.
  const sv::Geometry g = with_columns({0, -2, 0}, {0, 0, 1}, {3, 0, 0}, {5, 6, 7});
  const double f = 2.5;
  const sv::Geometry z = sv::geometry_resampled(g, {1 / f, 1 / f, 1 / f},
                                                {0.5 / f - 0.5, 0.5 / f - 0.5, 0.5 / f - 0.5});
  const sv::Vec3 a = sv::index_to_world(g, {-0.5, -0.5, -0.5});
  const sv::Vec3 b = sv::index_to_world(z, {-0.5, -0.5, -0.5});
  const sv::Vec3 c = sv::index_to_world(g, {9.5, 3.5, 1.5});  // N = 10, 4, 2
  const sv::Vec3 d = sv::index_to_world(z, {24.5, 9.5, 4.5});
  for (int r = 0; r < 3; ++r) {
    EXPECT_NEAR(a[r], b[r], 1e-12);
    EXPECT_NEAR(c[r], d[r], 1e-12);
  }
  EXPECT_EQ(z.source, "test");
  EXPECT_EQ(sv::orientation_code(z), sv::orientation_code(g));
}

TEST(Geometry, ChecksNameTheProblem) {
  sv::Geometry g = with_columns({1, 0, 0}, {0, 1, 0}, {0, 0, 1});
  EXPECT_NO_THROW(sv::check_geometry(g, 3, "x"));
  g.affine[1][2] = NAN;
  try {
    sv::check_geometry(g, 3, "f.nii");
    FAIL();
  } catch (const sv::Error& e) {
    EXPECT_NE(std::string(e.what()).find("f.nii: the affine has a non-finite entry"),
              std::string::npos);
  }
  // Only the used columns matter: a 2-D image may have a zero k column.
  g = with_columns({1, 0, 0}, {0, 1, 0}, {0, 0, 0});
  EXPECT_NO_THROW(sv::check_geometry(g, 2, "x"));
  EXPECT_THROW(sv::check_geometry(g, 3, "x"), sv::Error);
  g = with_columns({1, 1, 0}, {2, 2, 0}, {0, 0, 1});
  EXPECT_THROW(sv::check_geometry(g, 2, "x"), sv::Error);
}

TEST(Geometry, RasLpsFlipIsItsOwnInverse) {
  const sv::Geometry g = with_columns({0, -0.9, 0.1}, {0, 0.1, -1.2}, {2.5, 0, 0}, {10, -20, 30});
  const sv::Mat4 f = sv::flip_ras_lps(g.affine);
  EXPECT_EQ(f[0][3], -10);
  EXPECT_EQ(f[1][3], 20);
  EXPECT_EQ(f[2][3], 30);
  EXPECT_EQ(sv::flip_ras_lps(f), g.affine);
  const sv::Mat4 id = sv::mat4_mul(g.affine, sv::mat4_inverse(g.affine));
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) EXPECT_NEAR(id[r][c], r == c ? 1.0 : 0.0, 1e-12);
}

}  // namespace
