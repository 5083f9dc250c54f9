// NiftyReg control-point grids <-> the project's FFD grids (splineview/niftyreg.h, which states
// the format and the mapping; docs/DESIGN.md derives it). The NIfTI reading and writing is
// io_nifti.cpp's (load_nifti_vector, save_nifti_vector); this file checks what the header says,
// relates the grid's geometry to the reference's and converts positions to voxel displacements.
#include "splineview/niftyreg.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "io_common.h"
#include "splineview/error.h"
#include "splineview/ffd.h"
#include "splineview/text.h"

namespace sv {

namespace {

using io::fail;

constexpr int kIntentVector = 1007;  // NIFTI_INTENT_VECTOR

// NiftyReg's transformation kinds, stored in intent_p1 (NREG_TRANS_TYPE in reg-lib/cpu/Maths.hpp).
enum NregTrans {
  kDefField = 0,
  kDispField = 1,
  kCubicSplineGrid = 2,
  kDefVelField = 3,
  kDispVelField = 4,
  kSplineVelGrid = 5,
  kLinearSplineGrid = 6
};

const char* trans_kind(long t) {
  switch (t) {
    case kDefField:
      return "a dense deformation field (world positions per voxel, reg_transform -def)";
    case kDispField:
      return "a dense displacement field (reg_transform -disp)";
    case kDefVelField:
    case kDispVelField:
      return "a dense stationary velocity field";
    case kSplineVelGrid:
      return "a stationary velocity grid (reg_f3d -vel, reg_f3d2: the transformation is the "
             "field's exponential, not the spline itself)";
    case kLinearSplineGrid:
      return "a linear B-spline grid";
    default:
      return nullptr;
  }
}

void check_intent(const NiftiIntent& in, const std::string& path) {
  const std::string cpp_descrip = "Control point position from NiftyReg (reg_f3d)";
  if (in.code == kIntentVector && in.name == "NREG_TRANS") {
    const double p1 = in.p1;
    if (p1 == static_cast<double>(kCubicSplineGrid)) return;
    const long t = std::isfinite(p1) && p1 == std::floor(p1) && std::fabs(p1) < 1e6
                       ? static_cast<long>(p1)
                       : -1;
    const char* kind = trans_kind(t);
    fail(path, std::string("is ") + (kind ? kind : "a NiftyReg transformation of unknown kind") +
                   " (intent_p1 = " + format_number(p1) +
                   "), not a cubic B-spline control-point grid (intent_p1 = 2, what reg_f3d -cpp "
                   "writes)");
  }
  if (in.code == kIntentVector && in.name == "NREG_CPP_FILE") {
    if (in.descrip == cpp_descrip) return;
    fail(path, "is a NiftyReg 1.3 grid (intent_name NREG_CPP_FILE) whose descrip " +
                   io::quote(in.descrip) + " does not say control-point positions (expected '" +
                   cpp_descrip + "'; a reg_f3d2 velocity grid is not a displacement grid)");
  }
  fail(path, "is not a NiftyReg control-point grid: intent_code " + std::to_string(in.code) +
                 ", intent_name " + io::quote(in.name) +
                 " (reg_f3d -cpp writes intent_code 1007 (vector), intent_name 'NREG_TRANS' and "
                 "intent_p1 = 2)");
}

// NIfTI's index axis a (i, j, k) by the array axis it becomes.
std::string index_axis_name(std::size_t a) {
  static const char* const names[] = {"x (i, dim[1])", "y (j, dim[2])", "z (k, dim[3])"};
  return names[a];
}

// The rank-r block of an affine in index order: world rows 0..r-1 of the index columns 0..r-1
// (L), and its origin (b).
struct Block {
  std::size_t r = 3;
  double L[3][3] = {};
  double b[3] = {};
};

Block block_of(const Geometry& g, std::size_t r) {
  Block B;
  B.r = r;
  for (std::size_t a = 0; a < r; ++a) {
    for (std::size_t c = 0; c < r; ++c) B.L[a][c] = g.affine[a][c];
    B.b[a] = g.affine[a][3];
  }
  return B;
}

// The inverse of B.L; sv::Error naming `what` when it is singular relative to its columns (or
// not finite).
Block inverse_of(const Block& B, const std::string& path, const std::string& what) {
  const std::size_t r = B.r;
  Block I;
  I.r = r;
  double det = 0, scale = 1;
  for (std::size_t c = 0; c < r; ++c) {
    double n = 0;
    for (std::size_t a = 0; a < r; ++a) n += B.L[a][c] * B.L[a][c];
    scale *= std::sqrt(n);
  }
  if (r == 2) {
    det = B.L[0][0] * B.L[1][1] - B.L[0][1] * B.L[1][0];
    I.L[0][0] = B.L[1][1] / det, I.L[0][1] = -B.L[0][1] / det;
    I.L[1][0] = -B.L[1][0] / det, I.L[1][1] = B.L[0][0] / det;
  } else {
    const auto& m = B.L;
    det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
          m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
          m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
    for (std::size_t a = 0; a < 3; ++a)
      for (std::size_t c = 0; c < 3; ++c) {
        // The cofactor of m[c][a] over det.
        const std::size_t r0 = (c + 1) % 3, r1 = (c + 2) % 3, c0 = (a + 1) % 3, c1 = (a + 2) % 3;
        I.L[a][c] = (m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0]) / det;
      }
  }
  if (!std::isfinite(det) || !(std::fabs(det) > 1e-9 * scale))
    fail(path, what + (r == 2 ? " has no invertible world x, y block of its voxel axes i, j (a "
                                "2-D NiftyReg grid works in world x and y only)"
                              : " has a singular voxel-to-world affine"));
  for (std::size_t a = 0; a < r; ++a) {
    double s = 0;
    for (std::size_t c = 0; c < r; ++c) s += I.L[a][c] * B.b[c];
    I.b[a] = -s;
  }
  return I;
}

// Where the grid's index axes and origin lie in reference voxels (index order): column a of D
// is grid axis a, s the grid's index 0. Returns the spacing per index axis, after checking that
// D = diag(delta) and s = -delta within kNiftyRegGridTolerance over the whole grid.
std::vector<int> grid_spacing(const Block& Ainv, const Block& G, const std::vector<std::size_t>& M,
                              const std::string& path) {
  const std::size_t r = G.r;
  double D[3][3] = {}, s[3] = {};
  for (std::size_t a = 0; a < r; ++a) {
    for (std::size_t c = 0; c < r; ++c)
      for (std::size_t k = 0; k < r; ++k) D[a][c] += Ainv.L[a][k] * G.L[k][c];
    for (std::size_t k = 0; k < r; ++k) s[a] += Ainv.L[a][k] * G.b[k];
    s[a] += Ainv.b[a];
  }
  std::vector<int> delta(r);
  for (std::size_t a = 0; a < r; ++a) {
    double norm = 0, off = 0;
    for (std::size_t k = 0; k < r; ++k) {
      norm += D[k][a] * D[k][a];
      if (k != a) off = std::max(off, std::fabs(D[k][a]));
    }
    norm = std::sqrt(norm);
    if (!(D[a][a] > 0) || !(off <= 1e-3 * norm)) {
      std::string dir;
      for (std::size_t k = 0; k < r; ++k)
        dir += (k ? ", " : "") + format_number(std::round(D[k][a] / norm * 1e4) / 1e4 + 0.0);
      fail(path, "orientation mismatch: the grid's axis " + index_axis_name(a) + " runs along (" +
                     dir + ") in the reference's voxel axes (i, j" + (r == 3 ? ", k" : "") +
                     "), not along its axis " + index_axis_name(a) +
                     "; reg_f3d gives the grid the reference's orientation (rotated, flipped "
                     "or sheared grid axes, or a grid made for another reference)");
    }
    const double ratio = D[a][a];
    const double whole = std::round(ratio);
    if (whole < 1 || whole > 100000 || !(std::fabs(ratio - whole) <= 1e-4 * ratio))
      fail(path, "the control-point spacing along " + index_axis_name(a) + " is " +
                     format_number(ratio) +
                     " reference voxels; only a whole number of voxels converts exactly "
                     "(reg_f3d -sx/-sy/-sz with a negative value gives a spacing in voxels)");
    delta[a] = static_cast<int>(whole);
  }
  for (std::size_t a = 0; a < r; ++a)
    if (!(std::fabs(s[a] + delta[a]) <= 1e-3 * delta[a]))
      fail(path, "the grid's first control point along " + index_axis_name(a) +
                     " is at reference voxel " + format_number(s[a]) + ", not one spacing (" +
                     std::to_string(delta[a]) +
                     " voxels) before voxel 0 as reg_f3d places it: the grid is shifted against "
                     "the reference");
  // The largest distance, over the grid, between a control point's place (grid index q at
  // D q + s) and the place the conversion assumes, delta (q - 1).
  double worst = 0;
  for (std::size_t a = 0; a < r; ++a) {
    double e = std::fabs(s[a] + delta[a]);
    for (std::size_t c = 0; c < r; ++c)
      e += std::fabs(D[a][c] - (a == c ? delta[a] : 0.0)) * static_cast<double>(M[c] - 1);
    worst = std::max(worst, e);
  }
  if (!(worst <= kNiftyRegGridTolerance))
    fail(path, "the grid's control points lie up to " + format_number(worst) +
                   " reference voxels from a whole-voxel grid aligned with the reference "
                   "(tolerance " +
                   format_number(kNiftyRegGridTolerance) + ")");
  return delta;
}

}  // namespace

FfdGrid niftyreg_grid_to_ffd(const NiftiVector& cpp, const std::string& path,
                             const Geometry& reference,
                             const std::vector<std::size_t>& reference_shape) {
  check_intent(cpp.intent, path);
  const std::size_t r = reference_shape.size();
  if (r != 2 && r != 3)
    fail(path, "the reference is " + std::to_string(r) +
                   "-D; a NiftyReg grid belongs to a 2-D or 3-D reference image");
  const ArrayD& P = cpp.image.array;  // dims (M_z, M_y, M_x), one channel per component
  const std::size_t C = P.channels();
  if (P.rank() != 3) fail(path, "is not a vector image of rank 3");
  if (C != r)
    fail(path, "has " + std::to_string(C) + " components (dim[5]); a grid for a " +
                   std::to_string(r) + "-D reference has " + std::to_string(r));
  if (r == 2 && P.dims()[0] != 1)
    fail(path, "has " + std::to_string(P.dims()[0]) +
                   " control points along z (dim[3]); a grid for a 2-D reference has 1");
  // Grid extents in index order (i, j, k).
  std::vector<std::size_t> M(r);
  for (std::size_t a = 0; a < r; ++a) M[a] = P.dims()[2 - a];

  try {
    check_geometry(reference, r, "the reference geometry");
  } catch (const Error& e) {
    fail(path, e.what());
  }
  const Block Ainv = inverse_of(block_of(reference, r), path, "the reference");
  const std::vector<int> delta_ijk = grid_spacing(Ainv, block_of(cpp.image.geometry, r), M, path);

  // Array-order dims and spacing of the project's grid.
  std::vector<std::size_t> dims(r);
  std::vector<int> delta(r);
  for (std::size_t a = 0; a < r; ++a) {
    dims[a] = M[r - 1 - a];
    delta[a] = delta_ijk[r - 1 - a];
  }
  FfdGrid out{ArrayD(dims, r), delta};
  const double* src = P.data();
  double* dst = out.grid.data();
  const std::size_t Mx = M[0], My = M[1], Mz = r == 3 ? M[2] : 1;
  for (std::size_t k = 0, p = 0; k < Mz; ++k)
    for (std::size_t j = 0; j < My; ++j)
      for (std::size_t i = 0; i < Mx; ++i, ++p) {
        const std::size_t q[3] = {i, j, k};
        double w[3];
        for (std::size_t a = 0; a < r; ++a) {
          w[a] = src[p * C + a] * cpp.unit_mm;
          if (!std::isfinite(w[a]))
            fail(path, "control point (i, j" + std::string(r == 3 ? ", k" : "") + ") = (" +
                           std::to_string(i) + ", " + std::to_string(j) +
                           (r == 3 ? ", " + std::to_string(k) : std::string()) +
                           ") has a non-finite position");
        }
        for (std::size_t a = 0; a < r; ++a) {
          double v = Ainv.b[a];
          for (std::size_t c = 0; c < r; ++c) v += Ainv.L[a][c] * w[c];
          // Minus the point's own place, (q - 1) delta; index axis a is array axis r - 1 - a.
          const double own = (static_cast<double>(q[a]) - 1.0) * delta_ijk[a];
          dst[p * r + (r - 1 - a)] = v - own;
        }
      }
  try {
    check_ffd_grid(out.grid, out.delta, reference_shape);
  } catch (const Error& e) {
    fail(path, std::string("as a grid for the reference: ") + e.what());
  }
  return out;
}

FfdGrid load_niftyreg_grid(const std::string& path, const Geometry& reference,
                           const std::vector<std::size_t>& reference_shape) {
  return niftyreg_grid_to_ffd(load_nifti_vector(path), path, reference, reference_shape);
}

void save_niftyreg_grid(const std::string& path, const ArrayD& grid, const std::vector<int>& delta,
                        const Geometry& reference, DType dtype) {
  if (dtype != DType::F32 && dtype != DType::F64)
    fail(path, std::string("a NiftyReg grid is float32 or float64, not ") + dtype_name(dtype));
  try {
    check_ffd_grid(grid, delta);
    check_geometry(reference, grid.rank(), "the reference geometry");
  } catch (const Error& e) {
    fail(path, e.what());
  }
  const std::size_t r = grid.rank();
  const Block A = block_of(reference, r);
  inverse_of(A, path, "the reference");  // checks the block is invertible
  // The grid's geometry: the reference's, scaled by delta, origin at voxel -delta.
  double d[3] = {1, 1, 1};
  for (std::size_t a = 0; a < r; ++a) d[a] = delta[r - 1 - a];
  Geometry g;
  g.source = "sform";
  for (std::size_t row = 0; row < 3; ++row) {
    double origin = reference.affine[row][3];
    for (std::size_t c = 0; c < 3; ++c) {
      g.affine[row][c] = reference.affine[row][c] * d[c];
      if (c < r) origin -= reference.affine[row][c] * d[c];
    }
    g.affine[row][3] = origin;
  }
  // Positions: P = b + L ((q - 1) delta + c), c in index order.
  ArrayD positions(grid.dims(), r);
  const std::vector<std::size_t>& dims = grid.dims();
  const std::size_t Mx = dims[r - 1], My = dims[r - 2], Mz = r == 3 ? dims[0] : 1;
  const double* src = grid.data();
  double* dst = positions.data();
  for (std::size_t k = 0, p = 0; k < Mz; ++k)
    for (std::size_t j = 0; j < My; ++j)
      for (std::size_t i = 0; i < Mx; ++i, ++p) {
        const std::size_t q[3] = {i, j, k};
        double v[3];
        for (std::size_t a = 0; a < r; ++a)
          v[a] = (static_cast<double>(q[a]) - 1.0) * d[a] + src[p * r + (r - 1 - a)];
        for (std::size_t a = 0; a < r; ++a) {
          double w = A.b[a];
          for (std::size_t c = 0; c < r; ++c) w += A.L[a][c] * v[c];
          dst[p * r + a] = w;
        }
      }
  NiftiIntent intent;
  intent.code = kIntentVector;
  intent.name = "NREG_TRANS";
  intent.p1 = kCubicSplineGrid;
  intent.descrip = "Control point position from splineview";
  save_nifti_vector(path, positions, dtype, g, intent);
}

}  // namespace sv
