// Tests of NiftyReg control-point grids (splineview/niftyreg.h) and NIfTI vector images
// (sv::load_nifti_vector, sv::save_nifti_vector). The grids are written here byte by byte at the
// offsets of the NIfTI-1 standard (independent of nifti1.h and of the loader), laid out as
// NiftyReg's reg_createControlPointGrid lays them out (dim = (5, M_x, M_y, M_z, 1, R), world
// positions, intent "NREG_TRANS" / 2, the grid's transform the reference's scaled by the
// spacing with the origin one spacing before voxel 0), for references with oblique, flipped and
// anisotropic voxel axes. Their positions come from a known world map p(w) = B w + e: cubic
// B-splines reproduce linear functions, so the converted grid must give the voxel displacement
// u(x) = L^-1 (B A x + e - b) - x at every voxel, solved here by Cramer's rule, to 1e-9 voxel.
// The refusals (spacing ratio, components, orientation, origin, intent, size) are asserted by
// their messages.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "splineview/error.h"
#include "splineview/ffd.h"
#include "splineview/io.h"
#include "splineview/niftyreg.h"
#include "temp_dir_test.h"

namespace {

using svtest::io::read_bytes;
using svtest::io::write_bytes;

class NiftyRegTest : public svtest::TempDirTest {};

template <class T>
std::string pack(T v, bool big_endian) {
  std::string s(sizeof(T), '\0');
  std::memcpy(&s[0], &v, sizeof(T));
  if (big_endian) std::reverse(s.begin(), s.end());  // the test machines are little endian
  return s;
}

template <class T>
T unpack(const std::string& bytes, std::size_t off) {
  T v;
  std::memcpy(&v, bytes.data() + off, sizeof(T));
  return v;
}

float f32(double v) {
  return static_cast<float>(v);
}

// A NIfTI-1 single file: the fields used here at the offsets of the NIfTI-1 standard.
struct Nifti1 {
  std::vector<int> dim = {3, 1, 1, 1, 1, 1, 1, 1};  // dim[0..7]
  int datatype = 64, bitpix = 64;
  std::vector<float> pixdim = {1, 1, 1, 1, 1, 1, 1, 1};  // pixdim[0] = qfac
  float intent_p1 = 0;
  int intent_code = 0;
  std::string intent_name, descrip;
  int qform_code = 0, sform_code = 0;
  float quatern[3] = {0, 0, 0}, qoffset[3] = {0, 0, 0};
  float srow[3][4] = {};
  int xyzt_units = 2;  // mm
  bool big_endian = false;
  std::string data;

  std::string bytes() const {
    std::string h(352, '\0');
    auto put = [&](std::size_t off, const std::string& b) { h.replace(off, b.size(), b); };
    auto i16 = [](int v) { return static_cast<std::int16_t>(v); };
    const bool be = big_endian;
    put(0, pack<std::int32_t>(348, be));
    for (std::size_t i = 0; i < 8; ++i) put(40 + 2 * i, pack(i16(dim[i]), be));
    put(56, pack(intent_p1, be));
    put(68, pack(i16(intent_code), be));
    put(70, pack(i16(datatype), be));
    put(72, pack(i16(bitpix), be));
    for (std::size_t i = 0; i < 8; ++i) put(76 + 4 * i, pack(pixdim[i], be));
    put(108, pack(352.0f, be));  // vox_offset
    put(112, pack(1.0f, be));    // scl_slope
    h[123] = static_cast<char>(xyzt_units);
    put(148, descrip);
    put(252, pack(i16(qform_code), be));
    put(254, pack(i16(sform_code), be));
    for (std::size_t i = 0; i < 3; ++i) {
      put(256 + 4 * i, pack(quatern[i], be));
      put(268 + 4 * i, pack(qoffset[i], be));
      for (std::size_t c = 0; c < 4; ++c) put(280 + 16 * i + 4 * c, pack(srow[i][c], be));
    }
    put(328, intent_name);
    put(344, std::string("n+1\0", 4));
    return h + data;
  }
};

// An affine in index order: world = L (i, j, k) + b; entries float32-representable (what a
// NIfTI-1 header holds exactly).
struct Affine {
  double L[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  double b[3] = {0, 0, 0};
  void round_to_float() {
    for (auto& row : L)
      for (double& v : row) v = f32(v);
    for (double& v : b) v = f32(v);
  }
  sv::Geometry geometry() const {
    sv::Geometry g;
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) g.affine[r][c] = L[r][c];
      g.affine[r][3] = b[r];
    }
    g.source = "sform";
    return g;
  }
  void to_sform(Nifti1& f) const {
    f.sform_code = 2;
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) f.srow[r][c] = f32(L[r][c]);
      f.srow[r][3] = f32(b[r]);
    }
  }
};

// The rotation of the NIfTI-1 quaternion (b, c, d), a = sqrt(1 - b^2 - c^2 - d^2).
void quaternion_rotation(double b, double c, double d, double R[3][3]) {
  const double a = std::sqrt(1 - b * b - c * c - d * d);
  const double M[3][3] = {
      {a * a + b * b - c * c - d * d, 2 * (b * c - a * d), 2 * (b * d + a * c)},
      {2 * (b * c + a * d), a * a + c * c - b * b - d * d, 2 * (c * d - a * b)},
      {2 * (b * d - a * c), 2 * (c * d + a * b), a * a + d * d - c * c - b * b}};
  std::memcpy(R, M, sizeof M);
}

// Solves the r x r system L u = y (Cramer's rule).
void solve(const double L[3][3], const double* y, std::size_t r, double* u) {
  auto det = [&](const double m[3][3]) {
    if (r == 2) return m[0][0] * m[1][1] - m[0][1] * m[1][0];
    return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
           m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
           m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
  };
  const double D = det(L);
  for (std::size_t c = 0; c < r; ++c) {
    double m[3][3];
    std::memcpy(m, L, sizeof m);
    for (std::size_t a = 0; a < r; ++a) m[a][c] = y[a];
    u[c] = det(m) / D;
  }
}

// A reference image and a known world map p(w) = B w + e, and the NiftyReg grid for them.
struct Case {
  std::size_t r = 3;
  std::vector<std::size_t> shape;  // reference, array order
  Affine A;                        // reference voxel -> world
  std::vector<int> delta_ijk;      // grid spacing in reference voxels, index order
  std::vector<std::size_t> M_ijk;  // grid extents, index order
  double B[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  double e[3] = {0, 0, 0};

  // World position of grid point q (index order) under the map: B A (delta (q - 1)) + e.
  void position(const std::size_t* q, double* P) const {
    double x[3] = {0, 0, 0}, w[3];
    for (std::size_t a = 0; a < r; ++a) x[a] = (static_cast<double>(q[a]) - 1.0) * delta_ijk[a];
    for (std::size_t a = 0; a < r; ++a) {
      w[a] = A.b[a];
      for (std::size_t c = 0; c < r; ++c) w[a] += A.L[a][c] * x[c];
    }
    for (std::size_t a = 0; a < r; ++a) {
      P[a] = e[a];
      for (std::size_t c = 0; c < r; ++c) P[a] += B[a][c] * w[c];
    }
  }

  // The expected voxel displacement at reference voxel x (index order): L u = B (L x + b) + e
  // - (L x + b).
  void expected(const double* x, double* u) const {
    double w[3], y[3];
    for (std::size_t a = 0; a < r; ++a) {
      w[a] = A.b[a];
      for (std::size_t c = 0; c < r; ++c) w[a] += A.L[a][c] * x[c];
    }
    for (std::size_t a = 0; a < r; ++a) {
      y[a] = e[a] - w[a];
      for (std::size_t c = 0; c < r; ++c) y[a] += B[a][c] * w[c];
    }
    solve(A.L, y, r, u);
  }

  // The grid file as reg_createControlPointGrid lays it out; the geometry as the sform.
  Nifti1 grid_file(bool float64 = true) const {
    Nifti1 f;
    f.dim = {5,
             static_cast<int>(M_ijk[0]),
             static_cast<int>(M_ijk[1]),
             r == 3 ? static_cast<int>(M_ijk[2]) : 1,
             1,
             static_cast<int>(r),
             1,
             1};
    f.datatype = float64 ? 64 : 16;
    f.bitpix = float64 ? 64 : 32;
    f.intent_code = 1007;
    f.intent_name = "NREG_TRANS";
    f.intent_p1 = 2;
    f.descrip = "Control point position from NiftyReg (reg_f3d)";
    Affine G;
    for (std::size_t row = 0; row < 3; ++row) {
      G.b[row] = A.b[row];
      for (std::size_t c = 0; c < 3; ++c) {
        const double d = c < r ? delta_ijk[c] : 1.0;
        G.L[row][c] = A.L[row][c] * d;
        if (c < r) G.b[row] -= A.L[row][c] * d;
      }
    }
    G.to_sform(f);
    for (std::size_t c = 0; c < 3; ++c)
      f.pixdim[c + 1] =
          f32(std::sqrt(G.L[0][c] * G.L[0][c] + G.L[1][c] * G.L[1][c] + G.L[2][c] * G.L[2][c]));
    f.data = positions(float64, f.big_endian);
    return f;
  }

  // The positions, component planes one after another (x fastest within each).
  std::string positions(bool float64, bool be) const {
    std::string planes[3];
    const std::size_t Mz = r == 3 ? M_ijk[2] : 1;
    for (std::size_t k = 0; k < Mz; ++k)
      for (std::size_t j = 0; j < M_ijk[1]; ++j)
        for (std::size_t i = 0; i < M_ijk[0]; ++i) {
          const std::size_t q[3] = {i, j, k};
          double P[3];
          position(q, P);
          for (std::size_t a = 0; a < r; ++a)
            planes[a] += float64 ? pack(P[a], be) : pack(f32(P[a]), be);
        }
    return planes[0] + planes[1] + planes[2];
  }

  // The reference image file (its values do not matter): dim[0] = rank, the affine as sform.
  Nifti1 reference_file() const {
    Nifti1 f;
    f.dim = {static_cast<int>(r), 1, 1, 1, 1, 1, 1, 1};
    std::size_t n = 1;
    for (std::size_t a = 0; a < r; ++a) {
      f.dim[a + 1] = static_cast<int>(shape[r - 1 - a]);
      n *= shape[a];
    }
    f.datatype = 2;
    f.bitpix = 8;
    A.to_sform(f);
    f.data.assign(n, '\x05');
    return f;
  }
};

// An oblique, flipped, anisotropic 3-D reference (a rotation from a quaternion, qfac -1, voxels
// 0.8 x 1.3 x 2.5 mm) of 9 x 11 x 13 voxels, a spacing of (3, 2, 4) voxels and a slightly
// affine world map.
Case oblique_case() {
  Case c;
  c.r = 3;
  c.shape = {9, 11, 13};
  double R[3][3];
  quaternion_rotation(0.1, -0.25, 0.3, R);
  const double s[3] = {0.8, 1.3, -2.5};  // qfac -1 flips k
  for (int a = 0; a < 3; ++a)
    for (int k = 0; k < 3; ++k) c.A.L[a][k] = R[a][k] * s[k];
  c.A.b[0] = -40.25, c.A.b[1] = 12.5, c.A.b[2] = 30.0;
  c.A.round_to_float();
  c.delta_ijk = {3, 2, 4};
  // NiftyReg's extents: ceil(N / delta) + 3 (one more along j).
  c.M_ijk = {13 / 3 + 1 + 3, 11 / 2 + 1 + 3 + 1, 9 / 4 + 1 + 3};
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> small(-0.03, 0.03);
  for (auto& row : c.B)
    for (double& v : row) v += small(rng);
  c.e[0] = 1.5, c.e[1] = -2.25, c.e[2] = 0.75;
  return c;
}

// A 2-D reference rotated by 30 degrees in world x-y with its j axis flipped (0.7 x 1.1 mm).
Case planar_case() {
  Case c;
  c.r = 2;
  c.shape = {10, 14};
  const double t = 30.0 * M_PI / 180.0;
  const double R[2][2] = {{std::cos(t), -std::sin(t)}, {std::sin(t), std::cos(t)}};
  const double s[2] = {0.7, -1.1};
  for (int a = 0; a < 2; ++a)
    for (int k = 0; k < 2; ++k) c.A.L[a][k] = R[a][k] * s[k];
  c.A.b[0] = 5.5, c.A.b[1] = -7.0, c.A.b[2] = 0.0;
  c.A.round_to_float();
  c.delta_ijk = {5, 3};
  c.M_ijk = {14 / 5 + 1 + 3, 10 / 3 + 1 + 3};
  c.B[0][0] = 1.02, c.B[0][1] = -0.015, c.B[1][0] = 0.01, c.B[1][1] = 0.98;
  c.e[0] = -0.8, c.e[1] = 1.25;
  return c;
}

// The float32 rounding bound of a conversion of c's positions: |P| times 2^-24 per component,
// through L^-1, whose rows are at most 1 / (the smallest voxel size) long, so at most
// max|P| 2^-24 sqrt(R) / min spacing voxels; the B-spline weights sum to 1.
double float32_bound(const Case& c, double min_spacing) {
  double maxP = 0;
  const std::size_t Mz = c.r == 3 ? c.M_ijk[2] : 1;
  for (std::size_t k = 0; k < Mz; ++k)
    for (std::size_t j = 0; j < c.M_ijk[1]; ++j)
      for (std::size_t i = 0; i < c.M_ijk[0]; ++i) {
        const std::size_t q[3] = {i, j, k};
        double P[3];
        c.position(q, P);
        for (std::size_t a = 0; a < c.r; ++a) maxP = std::max(maxP, std::fabs(P[a]));
      }
  return maxP * std::ldexp(1.0, -24) * std::sqrt(static_cast<double>(c.r)) / min_spacing;
}

// The largest difference over every reference voxel between the converted grid's displacement
// and the expected one (voxels).
double worst_error(const Case& c, const sv::FfdGrid& g) {
  const std::size_t r = c.r;
  const std::size_t Nz = r == 3 ? c.shape[0] : 1, Ny = c.shape[r - 2], Nx = c.shape[r - 1];
  double worst = 0;
  for (std::size_t z = 0; z < Nz; ++z)
    for (std::size_t y = 0; y < Ny; ++y)
      for (std::size_t x = 0; x < Nx; ++x) {
        const double ijk[3] = {static_cast<double>(x), static_cast<double>(y),
                               static_cast<double>(z)};
        double pos[3], u[3], want[3];
        for (std::size_t a = 0; a < r; ++a) pos[a] = ijk[r - 1 - a];  // array order
        sv::ffd_displacement(g.grid, g.delta, pos, u);
        c.expected(ijk, want);
        for (std::size_t a = 0; a < r; ++a)
          worst = std::max(worst, std::fabs(u[a] - want[r - 1 - a]));
      }
  return worst;
}

std::vector<int> array_order(const std::vector<int>& ijk) {
  return std::vector<int>(ijk.rbegin(), ijk.rend());
}

void expect_error(const std::string& p, const std::vector<std::string>& parts,
                  const std::function<void()>& fn) {
  try {
    fn();
    ADD_FAILURE() << "no error for " << p << " (expected '" << parts[0] << "')";
  } catch (const sv::Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(p + ": ", 0), 0u) << msg;
    for (const std::string& part : parts)
      EXPECT_NE(msg.find(part), std::string::npos) << msg << "\n(expected '" << part << "')";
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

void write_gz(const std::string& p, const std::string& bytes) {
  gzFile f = gzopen(p.c_str(), "wb");
  ASSERT_NE(f, nullptr) << p;
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

// ---------------------------------------------------------------------------------------------

TEST_F(NiftyRegTest, VectorImageReadsAsWhatItIs) {
  // 3 x 4 x 2 voxels, 3 components stored one plane after another, big-endian float32.
  Nifti1 f;
  f.dim = {5, 2, 4, 3, 1, 3, 1, 1};
  f.datatype = 16, f.bitpix = 32;
  f.big_endian = true;
  f.intent_code = 1007;
  f.intent_name = "NREG_TRANS";
  f.intent_p1 = 2;
  f.descrip = "hello";
  f.pixdim = {1, 0.5f, 0.75f, 2.0f, 1, 1, 1, 1};
  for (int c = 0; c < 3; ++c)
    for (int p = 0; p < 24; ++p) f.data += pack(static_cast<float>(100 * c + p), true);
  write_bytes(path("v.nii"), f.bytes());
  const sv::NiftiVector v = sv::load_nifti_vector(path("v.nii"));
  EXPECT_EQ(v.image.array.dims(), (std::vector<std::size_t>{3, 4, 2}));
  ASSERT_EQ(v.image.array.channels(), 3u);
  EXPECT_TRUE(v.image.channel_axis);
  EXPECT_EQ(v.image.dtype, sv::DType::F32);
  for (std::size_t p = 0; p < 24; ++p)
    for (std::size_t c = 0; c < 3; ++c)
      EXPECT_EQ(v.image.array[p * 3 + c], static_cast<double>(100 * c + p));
  EXPECT_EQ(v.intent.code, 1007);
  EXPECT_EQ(v.intent.name, "NREG_TRANS");
  EXPECT_EQ(v.intent.p1, 2.0);
  EXPECT_EQ(v.intent.descrip, "hello");
  EXPECT_EQ(v.image.spacing, (std::vector<double>{2.0, 0.75, 0.5}));

  // load_nifti still refuses it, as it always has.
  try {
    sv::load_nifti(path("v.nii"));
    ADD_FAILURE() << "load_nifti read a 5-D file";
  } catch (const sv::Error& e) {
    EXPECT_NE(std::string(e.what()).find("axes 5 to 7 must have size 1"), std::string::npos);
  }

  // Refusals of the vector layout.
  f.dim = {5, 2, 4, 3, 2, 3, 1, 1};
  write_bytes(path("t.nii"), f.bytes());
  expect_error(path("t.nii"), {"dim[4] is 2", "one time point"},
               [&] { sv::load_nifti_vector(path("t.nii")); });
  f.dim = {5, 2, 4, 3, 1, 5, 1, 1};
  f.data += f.data;
  write_bytes(path("c.nii"), f.bytes());
  expect_error(path("c.nii"), {"5 vector components (dim[5])"},
               [&] { sv::load_nifti_vector(path("c.nii")); });
  // dim[5] = 1: an image for load_nifti, not a vector image.
  f.dim = {5, 2, 4, 3, 1, 1, 1, 1};
  f.data.resize(24 * 4);
  write_bytes(path("one.nii"), f.bytes());
  expect_error(path("one.nii"), {"1 vector component (dim[5])"},
               [&] { sv::load_nifti_vector(path("one.nii")); });
  EXPECT_EQ(sv::load_nifti(path("one.nii")).array.dims(), (std::vector<std::size_t>{3, 4, 2}));
  f.dim = {3, 2, 4, 3, 1, 1, 1, 1};
  write_bytes(path("s.nii"), f.bytes());
  expect_error(path("s.nii"), {"is 3-D, not a vector image"},
               [&] { sv::load_nifti_vector(path("s.nii")); });
  f.dim = {5, 2, 4, 3, 1, 3, 1, 1};
  f.data.resize(24 * 3 * 4 - 1);
  write_bytes(path("cut.nii"), f.bytes());
  expect_error(path("cut.nii"), {"truncated"}, [&] { sv::load_nifti_vector(path("cut.nii")); });
}

TEST_F(NiftyRegTest, SaveNiftiVectorRoundTrip) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> val(-50, 50);
  for (std::size_t C : {2u, 3u}) {
    sv::ArrayD a({3, 5, 4}, C);
    for (double& v : a.vec()) v = val(rng);
    Affine A;
    A.L[0][0] = -0.5, A.L[1][1] = 0.75, A.L[2][2] = 2, A.b[0] = 3;
    sv::NiftiIntent in;
    in.code = 1007;
    in.name = "SOMETHING_LONGER_THAN_15";
    in.p1 = 6;
    in.descrip = "d";
    const std::string p = path("rt" + std::to_string(C) + ".nii.gz");
    sv::save_nifti_vector(p, a, sv::DType::F64, A.geometry(), in);
    const sv::NiftiVector v = sv::load_nifti_vector(p);
    EXPECT_EQ(v.image.array.dims(), a.dims());
    EXPECT_EQ(v.image.array.vec(), a.vec());
    EXPECT_EQ(v.intent.name, "SOMETHING_LONGE");  // 15 characters and the NUL
    EXPECT_EQ(v.intent.p1, 6.0);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 4; ++c)
        EXPECT_EQ(v.image.geometry.affine[r][c], A.geometry().affine[r][c]);
  }
}

TEST_F(NiftyRegTest, ObliqueFlippedAnisotropicGridReproducesTheKnownField) {
  const Case c = oblique_case();
  write_bytes(path("ref.nii"), c.reference_file().bytes());
  const sv::Loaded ref = sv::load_nifti(path("ref.nii"));
  ASSERT_EQ(ref.array.dims(), c.shape);

  // The grid's transform as an sform (float64 positions), as .nii and .nii.gz.
  Nifti1 f = c.grid_file();
  write_bytes(path("cpp.nii"), f.bytes());
  write_gz(path("cpp.nii.gz"), f.bytes());
  for (const std::string name : {"cpp.nii", "cpp.nii.gz"}) {
    const sv::FfdGrid g = sv::load_niftyreg_grid(path(name), ref.geometry, ref.array.dims());
    EXPECT_EQ(g.delta, array_order(c.delta_ijk));
    EXPECT_EQ(g.grid.dims(), (std::vector<std::size_t>{c.M_ijk[2], c.M_ijk[1], c.M_ijk[0]}));
    const double err = worst_error(c, g);
    std::printf("[ oblique 3-D %s ] worst |u - u_expected| = %.3g voxel\n", name.c_str(), err);
    EXPECT_LT(err, 1e-9);
  }

  // The same grid with its transform as a qform only (quaternion, qfac -1, pixdim = spacing in
  // mm, qoffset = the reference's voxel -delta), big-endian, the reference as a Geometry.
  f.sform_code = 0;
  f.qform_code = 1;
  f.big_endian = true;
  f.quatern[0] = 0.1f, f.quatern[1] = -0.25f, f.quatern[2] = 0.3f;
  f.pixdim[0] = -1;
  const double s[3] = {0.8, 1.3, 2.5};
  for (int a = 0; a < 3; ++a) f.pixdim[a + 1] = f32(s[a] * c.delta_ijk[a]);
  for (int row = 0; row < 3; ++row) {
    double o = c.A.b[row];
    for (int k = 0; k < 3; ++k) o -= c.A.L[row][k] * c.delta_ijk[k];
    f.qoffset[row] = f32(o);
  }
  f.data = c.positions(true, true);
  write_bytes(path("q.nii"), f.bytes());
  sv::FfdGrid g = sv::load_niftyreg_grid(path("q.nii"), c.A.geometry(), c.shape);
  EXPECT_EQ(g.delta, array_order(c.delta_ijk));
  EXPECT_LT(worst_error(c, g), 1e-9);

  // float32 positions (what reg_f3d writes): within their rounding (float32_bound).
  f = c.grid_file(false);
  write_bytes(path("f32.nii"), f.bytes());
  g = sv::load_niftyreg_grid(path("f32.nii"), ref.geometry, ref.array.dims());
  const double err32 = worst_error(c, g), bound = float32_bound(c, 0.8);
  std::printf("[ oblique 3-D float32 ] worst |u - u_expected| = %.3g voxel (bound %.3g)\n", err32,
              bound);
  EXPECT_LT(err32, bound);
}

TEST_F(NiftyRegTest, PlanarGridReproducesTheKnownField) {
  const Case c = planar_case();
  write_bytes(path("ref2.nii"), c.reference_file().bytes());
  const sv::Loaded ref = sv::load_nifti(path("ref2.nii"));
  ASSERT_EQ(ref.array.dims(), c.shape);
  write_bytes(path("cpp2.nii"), c.grid_file().bytes());
  const sv::FfdGrid g = sv::load_niftyreg_grid(path("cpp2.nii"), ref.geometry, c.shape);
  EXPECT_EQ(g.delta, array_order(c.delta_ijk));
  EXPECT_EQ(g.grid.dims(), (std::vector<std::size_t>{c.M_ijk[1], c.M_ijk[0]}));
  const double err = worst_error(c, g);
  std::printf("[ planar 2-D ] worst |u - u_expected| = %.3g voxel\n", err);
  EXPECT_LT(err, 1e-9);
}

TEST_F(NiftyRegTest, UnorientedReferenceAndOldIntent) {
  // A reference that states no orientation (diag(spacing), origin 0): reg_f3d gives the grid a
  // qform with the identity quaternion and qoffset = -spacing. NiftyReg 1.3.9's intent_name.
  Case c = oblique_case();
  for (auto& row : c.A.L)
    for (double& v : row) v = 0;
  c.A.L[0][0] = 0.75, c.A.L[1][1] = 1.25, c.A.L[2][2] = 2.5;  // exact in float32
  c.A.b[0] = c.A.b[1] = c.A.b[2] = 0;
  c.A.round_to_float();
  Nifti1 f = c.grid_file();
  f.sform_code = 0;
  f.qform_code = 1;
  f.intent_name = "NREG_CPP_FILE";
  f.intent_p1 = 0;
  for (int a = 0; a < 3; ++a) {
    f.pixdim[a + 1] = f32(c.A.L[a][a] * c.delta_ijk[a]);
    f.qoffset[a] = f32(-c.A.L[a][a] * c.delta_ijk[a]);
  }
  write_bytes(path("u.nii"), f.bytes());
  const sv::FfdGrid g =
      sv::load_niftyreg_grid(path("u.nii"), sv::geometry_from_spacing({2.5, 1.25, 0.75}), c.shape);
  EXPECT_EQ(g.delta, array_order(c.delta_ijk));
  EXPECT_LT(worst_error(c, g), 1e-9);
}

TEST_F(NiftyRegTest, SaveNiftyRegGridRoundTripAndLayout) {
  const Case c = oblique_case();
  const sv::Geometry A = c.A.geometry();
  const std::vector<int> delta = array_order(c.delta_ijk);
  const std::vector<std::size_t> dims = {c.M_ijk[2], c.M_ijk[1], c.M_ijk[0]};
  std::mt19937 rng(19);
  std::uniform_real_distribution<double> val(-2, 2);
  sv::ArrayD grid(dims, 3);
  for (double& v : grid.vec()) v = val(rng);

  sv::save_niftyreg_grid(path("out.nii.gz"), grid, delta, A, sv::DType::F64);
  sv::FfdGrid back = sv::load_niftyreg_grid(path("out.nii.gz"), A, c.shape);
  EXPECT_EQ(back.delta, delta);
  double worst = 0;
  for (std::size_t i = 0; i < grid.size(); ++i)
    worst = std::max(worst, std::fabs(back.grid[i] - grid[i]));
  EXPECT_LT(worst, 1e-12);

  sv::save_niftyreg_grid(path("out32.nii"), grid, delta, A);  // float32, as reg_f3d writes
  back = sv::load_niftyreg_grid(path("out32.nii"), A, c.shape);
  worst = 0;
  for (std::size_t i = 0; i < grid.size(); ++i)
    worst = std::max(worst, std::fabs(back.grid[i] - grid[i]));
  // float32_bound's argument for this grid's own positions, A (delta (q - 1) + c).
  double maxP = 0;
  for (std::size_t k = 0, p = 0; k < c.M_ijk[2]; ++k)
    for (std::size_t j = 0; j < c.M_ijk[1]; ++j)
      for (std::size_t i = 0; i < c.M_ijk[0]; ++i, ++p) {
        const double q[3] = {static_cast<double>(i), static_cast<double>(j),
                             static_cast<double>(k)};
        for (int a = 0; a < 3; ++a) {
          double w = c.A.b[a];
          for (int m = 0; m < 3; ++m)
            w += c.A.L[a][m] * ((q[m] - 1) * c.delta_ijk[m] + grid[p * 3 + (2 - m)]);
          maxP = std::max(maxP, std::fabs(w));
        }
      }
  const double bound = maxP * std::ldexp(1.0, -24) * std::sqrt(3.0) / 0.8;
  std::printf("[ save/load float32 ] worst control-point change %.3g voxel (bound %.3g)\n", worst,
              bound);
  EXPECT_LT(worst, bound);

  // The header and data as the NIfTI-1 standard lays them out, read here by offset: a zero
  // grid holds every control point's own world position, A (delta (q - 1)).
  sv::ArrayD zero(dims, 3);
  sv::save_niftyreg_grid(path("zero.nii"), zero, delta, A);
  const std::string b = read_bytes(path("zero.nii"));
  EXPECT_EQ(unpack<std::int16_t>(b, 40), 5);
  EXPECT_EQ(unpack<std::int16_t>(b, 42), static_cast<int>(c.M_ijk[0]));
  EXPECT_EQ(unpack<std::int16_t>(b, 44), static_cast<int>(c.M_ijk[1]));
  EXPECT_EQ(unpack<std::int16_t>(b, 46), static_cast<int>(c.M_ijk[2]));
  EXPECT_EQ(unpack<std::int16_t>(b, 48), 1);
  EXPECT_EQ(unpack<std::int16_t>(b, 50), 3);
  EXPECT_EQ(unpack<float>(b, 56), 2.0f);         // intent_p1 CUB_SPLINE_GRID
  EXPECT_EQ(unpack<std::int16_t>(b, 68), 1007);  // NIFTI_INTENT_VECTOR
  EXPECT_EQ(unpack<std::int16_t>(b, 70), 16);    // float32
  EXPECT_EQ(std::string(b.data() + 328), "NREG_TRANS");
  EXPECT_GT(unpack<std::int16_t>(b, 254), 0);  // sform_code
  const std::size_t n = c.M_ijk[0] * c.M_ijk[1] * c.M_ijk[2];
  ASSERT_EQ(b.size(), 352 + 3 * n * 4);
  Case identity = c;
  for (int a = 0; a < 3; ++a)
    for (int k = 0; k < 3; ++k) identity.B[a][k] = a == k;
  identity.e[0] = identity.e[1] = identity.e[2] = 0;
  double worst_mm = 0;
  for (std::size_t k = 0, p = 0; k < c.M_ijk[2]; ++k)
    for (std::size_t j = 0; j < c.M_ijk[1]; ++j)
      for (std::size_t i = 0; i < c.M_ijk[0]; ++i, ++p) {
        const std::size_t q[3] = {i, j, k};
        double P[3];
        identity.position(q, P);
        for (std::size_t a = 0; a < 3; ++a)
          worst_mm = std::max(worst_mm, std::fabs(unpack<float>(b, 352 + 4 * (a * n + p)) - P[a]));
      }
  EXPECT_LT(worst_mm, 1e-5);
  // The grid's sform: the first control point one spacing before the reference's origin.
  for (int row = 0; row < 3; ++row) {
    double o = c.A.b[row];
    for (int k = 0; k < 3; ++k) o -= c.A.L[row][k] * c.delta_ijk[k];
    EXPECT_NEAR(unpack<float>(b, 280 + 16 * row + 12), o, 1e-5);
  }

  // 2-D: dim[3] = 1, two components.
  const Case p2 = planar_case();
  sv::ArrayD g2({p2.M_ijk[1], p2.M_ijk[0]}, 2);
  for (double& v : g2.vec()) v = val(rng);
  sv::save_niftyreg_grid(path("g2.nii"), g2, array_order(p2.delta_ijk), p2.A.geometry(),
                         sv::DType::F64);
  const std::string b2 = read_bytes(path("g2.nii"));
  EXPECT_EQ(unpack<std::int16_t>(b2, 46), 1);
  EXPECT_EQ(unpack<std::int16_t>(b2, 50), 2);
  back = sv::load_niftyreg_grid(path("g2.nii"), p2.A.geometry(), p2.shape);
  worst = 0;
  for (std::size_t i = 0; i < g2.size(); ++i)
    worst = std::max(worst, std::fabs(back.grid[i] - g2[i]));
  EXPECT_LT(worst, 1e-12);
}

TEST_F(NiftyRegTest, Refusals) {
  const Case c = oblique_case();
  const sv::Geometry A = c.A.geometry();
  auto load = [&](const Nifti1& f, const std::string& name, const std::vector<std::size_t>& shape) {
    write_bytes(path(name), f.bytes());
    return sv::load_niftyreg_grid(path(name), A, shape);
  };

  // A spacing that is not a whole number of reference voxels: 5 mm on 1.2 mm voxels along x.
  {
    Nifti1 f = c.grid_file();
    for (int row = 0; row < 3; ++row) f.srow[row][0] = f32(c.A.L[row][0] * 5.0 / 1.2);
    expect_error(path("ratio.nii"),
                 {"spacing along x (i, dim[1]) is 4.1666", "reference voxels", "whole number"},
                 [&] { load(f, "ratio.nii", c.shape); });
  }
  // Components that do not match the reference: a 2-component grid for a 3-D reference.
  {
    Nifti1 f = c.grid_file();
    f.dim[5] = 2;
    f.data.resize(f.data.size() * 2 / 3);
    expect_error(path("comp.nii"), {"has 2 components (dim[5])", "3-D reference has 3"},
                 [&] { load(f, "comp.nii", c.shape); });
  }
  // Grid axes rotated by 90 degrees about k against the reference's.
  {
    Nifti1 f = c.grid_file();
    for (int row = 0; row < 3; ++row) {
      const float x = f.srow[row][0], y = f.srow[row][1];
      f.srow[row][0] = f32(y * 3.0 / 2.0);
      f.srow[row][1] = f32(-x * 2.0 / 3.0);
    }
    expect_error(path("rot.nii"), {"orientation mismatch", "axis x (i, dim[1])"},
                 [&] { load(f, "rot.nii", c.shape); });
  }
  // A flipped grid axis.
  {
    Nifti1 f = c.grid_file();
    for (int row = 0; row < 3; ++row) f.srow[row][2] = -f.srow[row][2];
    expect_error(path("flip.nii"), {"orientation mismatch", "axis z (k, dim[3])"},
                 [&] { load(f, "flip.nii", c.shape); });
  }
  // An origin half a spacing off along y.
  {
    Nifti1 f = c.grid_file();
    for (int row = 0; row < 3; ++row) f.srow[row][3] += f32(0.5 * f.srow[row][1]);
    expect_error(path("shift.nii"),
                 {"first control point along y (j, dim[2]) is at reference voxel -1", "shifted"},
                 [&] { load(f, "shift.nii", c.shape); });
  }
  // Other NiftyReg transformations and other vector images.
  {
    Nifti1 f = c.grid_file();
    f.intent_p1 = 5;
    expect_error(path("vel.nii"), {"stationary velocity grid", "intent_p1 = 5"},
                 [&] { load(f, "vel.nii", c.shape); });
    f.intent_p1 = 0;
    expect_error(path("def.nii"), {"dense deformation field"},
                 [&] { load(f, "def.nii", c.shape); });
    f.intent_name = "";
    f.intent_code = 0;
    expect_error(path("plain.nii"), {"not a NiftyReg control-point grid", "intent_code 0"},
                 [&] { load(f, "plain.nii", c.shape); });
    f.intent_code = 1007;
    f.intent_name = "NREG_CPP_FILE";
    f.descrip = "Velocity field grid from NiftyReg (reg_f3d2)";
    expect_error(path("old.nii"), {"NREG_CPP_FILE", "Velocity field grid"},
                 [&] { load(f, "old.nii", c.shape); });
  }
  // A grid too small for the reference, a 3-D grid for a 2-D reference, a non-finite position.
  {
    const Nifti1 f = c.grid_file();
    expect_error(path("small.nii"), {"as a grid for the reference", "axis"}, [&] {
      load(f, "small.nii", {40, 11, 13});
    });
    expect_error(path("rank.nii"), {"has 3 components (dim[5])", "2-D reference has 2"}, [&] {
      load(f, "rank.nii", {11, 13});
    });
    Nifti1 nan = f;
    const double q = std::nan("");
    nan.data.replace(8 * 5, 8, pack(q, false));
    expect_error(path("nan.nii"), {"control point (i, j, k) = (5, 0, 0)", "non-finite"},
                 [&] { load(nan, "nan.nii", c.shape); });
  }
  // save_niftyreg_grid: an invalid grid or dtype.
  sv::ArrayD bad({4, 4}, 2);
  expect_error(path("bad.nii"), {"float32 or float64"}, [&] {
    sv::save_niftyreg_grid(path("bad.nii"), bad, {1, 1}, A, sv::DType::U8);
  });
  expect_error(path("bad.nii"), {"spacing along axis y must be at least 1"}, [&] {
    sv::save_niftyreg_grid(path("bad.nii"), bad, {0, 1}, A);
  });
}

}  // namespace
