// Where the samples of an image or volume sit in the patient (world) frame.
//
// The world frame is RAS+ in millimetres, as in NIfTI, nibabel and 3D Slicer:
//
//   RAS+: world x increases towards the patient's Right, y towards Anterior, z towards
//   Superior. (DICOM and ITK use LPS+: x towards Left, y towards Posterior; a point's LPS
//   coordinates are its RAS coordinates with x and y negated. NRRD files name their space.)
//
// Loaders convert at the edges (DICOM, NRRD "left-posterior-superior", ...), so everything
// inside splineview is RAS+.
//
// Voxel indices (i, j, k): i runs along the array's fastest axis (x, the last of dims()), j
// along the next (y), k along the slowest (z; for a 2-D array k is 0). This is NIfTI's and
// nibabel's index order; our arrays list dims() the other way round, (z, y, x), as NumPy.
// The affine maps an index to a world position: world = affine * (i, j, k, 1).
//
// A file that states no orientation (a PNG, a .npy, a NIfTI with qform_code = sform_code = 0,
// an NRRD without "space") gets the affine diag(spacing) with the origin at 0 and
// oriented() == false: its index axes are NOT known to be patient directions, and a viewer
// must not label them with anatomical letters.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace sv {

using Mat4 = std::array<std::array<double, 4>, 4>;  // row-major
using Vec3 = std::array<double, 3>;

struct Geometry {
  // Not an aggregate on purpose: a braced list of numbers ({2.0, 1.0}) is a spacing vector, never
  // a Geometry, so overloads taking either stay unambiguous.
  Geometry() {}  // NOLINT(modernize-use-equals-default)
  Mat4 affine{{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}};
  // Where the affine came from: "" when the file states no orientation, else e.g. "sform",
  // "qform", "nrrd space", "dicom", ... (reported by `splinetool info`).
  std::string source;

  bool oriented() const { return !source.empty(); }
};

// diag(spacing) with origin 0 and no orientation; `spacing` in array order (z, y, x), rank 1..3,
// every value finite and > 0 (else sv::Error naming the axis).
Geometry geometry_from_spacing(const std::vector<double>& spacing);

// Spacing per array axis, array order (z, y, x) for rank 3: the lengths of the affine's index
// columns (k, j, i).
std::vector<double> geometry_spacing(const Geometry& g, std::size_t rank);

// Throws sv::Error("<what>: <problem>") unless every entry is finite, the last row is 0 0 0 1,
// and the columns of the `rank` index axes are non-zero and linearly independent (the affine
// restricted to them has full rank; relative tolerance 1e-9).
void check_geometry(const Geometry& g, std::size_t rank, const std::string& what);

// The orientation code of nibabel.orientations.aff2axcodes: one letter per index axis i, j, k
// naming the world direction it points to most closely (L/R, P/A, I/S), e.g. "RAS", "LPS",
// "PSR". The closest rotation to the affine's directions is found first (the polar factor of
// its normalised 3x3 part) and the letters are chosen greedily, axis i first, each world axis
// used once, as nibabel does. Returns "" for a singular direction matrix.
std::string orientation_code(const Geometry& g);

Vec3 index_to_world(const Geometry& g, const Vec3& ijk);
// Inverse of index_to_world (throws sv::Error for a singular affine).
Vec3 world_to_index(const Geometry& g, const Vec3& xyz);

// The geometry of a grid whose index q (i, j, k order) sits at input index
// scale * q + offset, per axis: e.g. sv::zoom by f maps output sample q to input position
// (q + 1/2) / f - 1/2, so scale = 1/f and offset = 1/(2f) - 1/2. Orientation is kept.
Geometry geometry_resampled(const Geometry& g, const Vec3& scale_ijk, const Vec3& offset_ijk);

// RAS+ <-> LPS+ (negates the world x and y rows; its own inverse).
Mat4 flip_ras_lps(const Mat4& m);

// 4x4 helpers.
Mat4 mat4_identity();
Mat4 mat4_mul(const Mat4& a, const Mat4& b);
// Throws sv::Error for a singular matrix.
Mat4 mat4_inverse(const Mat4& m);

}  // namespace sv
