// NiftyReg's cubic B-spline control-point grids (the NIfTI file `reg_f3d -cpp` writes) converted
// to and from the project's FFD convention (splineview/ffd.h) for a given reference image.
// docs/DESIGN.md ("Deformation fields", "NiftyReg control-point grids") has the derivation.
//
// The format, as NiftyReg's sources define it (repository KCL-BMEIS/niftyreg: reg-lib/cpu/
// _reg_localTrans.cpp, reg_createControlPointGrid and reg_cubic_spline_getDeformationField2D/3D;
// reg-lib/cpu/Maths.hpp, NREG_TRANS_TYPE; reg-apps/reg_f3d.cpp):
//   - a NIfTI vector image (sv::load_nifti_vector): dim = (5, M_x, M_y, M_z, 1, R), M_z = 1 and
//     R = 2 for a 2-D reference, float32 (or float64); intent_code 1007 (NIFTI_INTENT_VECTOR),
//     intent_name "NREG_TRANS", intent_p1 = 2 (CUB_SPLINE_GRID). NiftyReg 1.3.9 wrote
//     intent_name "NREG_CPP_FILE" and descrip "Control point position from NiftyReg (reg_f3d)".
//   - The values are control-point POSITIONS, world x, y (, z) in the file's units (mm), not
//     displacements: an identity grid holds every point's own position.
//   - The grid's sform (when sform_code > 0, else its qform) G places control point q (grid
//     index, i j k order) at world G q. The field at a world point w is p(w) =
//     sum_q P_q beta3(t - q) over the tensor product, t = G^-1 w (NiftyReg maps w through the
//     grid's sto_ijk/qto_ijk and takes the points floor(t) - 1 .. floor(t) + 2).
//   - reg_f3d makes G from the reference's own transform: the same directions, pixdim = the
//     spacing in mm (-sx/-sy/-sz; negative values are voxels, default 5 voxels), and the origin
//     one spacing before the reference's voxel 0 (grid index (-1, -1, -1) -> reference origin).
//
// With A the reference's voxel-to-world affine (linear part L, origin b) and G = A (diag(delta)
// q - delta), t = x / delta + 1 at reference voxel x, so p(A x) = sum_j P_j beta3(x / delta -
// j + 1) per axis: the project's convention with control point j at voxel (j - 1) delta.
// B-splines reproduce linear functions, so the voxel displacement field u(x) = L^-1 (p(A x) -
// A x) has the control points c_j = L^-1 (P_j - b) - (j - 1) delta, reordered from NIfTI's
// (i, j, k) = (x, y, z) to the array's (z, y, x). That is exact for every grid reg_f3d makes on
// that reference with a spacing that is a whole number of its voxels; other grids are refused.
// In 2-D, NiftyReg works in world x and y only: L and b are the reference's x, y rows of its
// i, j columns.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "splineview/array.h"
#include "splineview/geometry.h"
#include "splineview/io.h"

namespace sv {

// A control grid in the convention of splineview/ffd.h and its spacing (array order).
struct FfdGrid {
  ArrayD grid;
  std::vector<int> delta;
};

// How far the grid's control points may lie from where the conversion puts them: at most
// this many reference voxels at any control point (float32 headers are good to about 1e-5).
inline constexpr double kNiftyRegGridTolerance = 1e-3;

// The grid of a NiftyReg control-point file `cpp` (as load_nifti_vector read it from `path`,
// which errors name) for the reference image of `reference_shape` (array order, rank 2 or 3)
// whose voxel-to-world transform is `reference` (RAS+ mm, as every loader reports it; NIfTI's
// world is RAS+ too). Refused with sv::Error("<path>: ..."), naming the field or axis:
//   - another kind of file or transformation: intent_code/intent_name not NiftyReg's, or
//     intent_p1 naming a deformation or displacement field, a velocity grid (reg_f3d -vel,
//     reg_f3d2) or a linear spline grid;
//   - components (dim[5]) other than the reference's rank, M_z > 1 for a 2-D reference;
//   - grid axes that are not the reference's voxel axes (rotated, flipped, sheared: an
//     orientation mismatch), a spacing that is not a whole number of reference voxels along an
//     axis (the message gives the ratio, e.g. 4.16667 = 5 mm / 1.2 mm), an origin other than one
//     spacing before voxel 0, or any control point more than kNiftyRegGridTolerance voxels from
//     where the conversion assumes it;
//   - a grid too small for the reference (check_ffd_grid), a non-finite position.
// Positions are scaled by cpp.unit_mm, as the grid's geometry was.
FfdGrid niftyreg_grid_to_ffd(const NiftiVector& cpp, const std::string& path,
                             const Geometry& reference,
                             const std::vector<std::size_t>& reference_shape);

// load_nifti_vector(path), then niftyreg_grid_to_ffd.
FfdGrid load_niftyreg_grid(const std::string& path, const Geometry& reference,
                           const std::vector<std::size_t>& reference_shape);

// The opposite direction: writes `grid` (the project's convention, spacing `delta`) for the
// reference whose voxel-to-world transform is `reference` as the control-point grid reg_f3d
// would have written for it (positions P_j = b + L ((j - 1) delta + c_j), the grid's sform and
// qform one spacing before the reference's origin, intent "NREG_TRANS" / CUB_SPLINE_GRID,
// units mm), for NiftyReg's reg_resample -trans and reg_transform (the layout is taken from
// NiftyReg's sources; no NiftyReg binary was at hand to run it). dtype F32 (what
// reg_f3d writes) or F64. .nii or .nii.gz. sv::Error("<path>: ...") for an invalid grid or
// delta (check_ffd_grid) or a reference whose rank-R block of its affine is singular.
void save_niftyreg_grid(const std::string& path, const ArrayD& grid, const std::vector<int>& delta,
                        const Geometry& reference, DType dtype = DType::F32);

}  // namespace sv
