// NiftyReg control-point grids as GRID of splinetool ffd and warp (ffd_grid_input.h): the
// reference's header, the conversion (sv::niftyreg_grid_to_ffd), --spacing against the file,
// and MOVING against the reference.
#include "ffd_grid_input.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "commands.h"
#include "splineview/error.h"
#include "splineview/geometry.h"
#include "splineview/io.h"
#include "splineview/mapped.h"
#include "splineview/niftyreg.h"
#include "splineview/text.h"

namespace splinetool {
namespace {

struct ReferenceHeader {
  std::vector<std::size_t> dims;
  sv::Geometry geometry;
};

// The shape and geometry of `path`: from its header alone where it can be mapped (.npy, NRRD,
// .nii, TIFF, raw), else by loading it.
ReferenceHeader reference_header(const std::string& path) {
  try {
    const sv::MappedVolume m = sv::open_mapped(path, false);
    return {m.dims(), m.geometry()};
  } catch (const sv::NotMappable&) {
    const sv::Loaded l = sv::load_any(path, false);
    return {l.array.dims(), l.geometry};
  }
}

std::string joined(const std::vector<int>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

// --spacing as typed ("D" or one value per axis) equals `delta`.
bool same_spacing(const std::string& text, const std::vector<int>& delta) {
  std::vector<std::string> items(1);
  for (char ch : text) {
    if (ch == ',')
      items.emplace_back();
    else
      items.back() += ch;
  }
  if (items.size() != 1 && items.size() != delta.size()) return false;
  for (std::size_t a = 0; a < delta.size(); ++a) {
    const std::string& item = items.size() == 1 ? items[0] : items[a];
    if (item.empty() || item.size() > 9 ||
        item.find_first_not_of("0123456789") != std::string::npos || std::stol(item) != delta[a])
      return false;
  }
  return true;
}

}  // namespace

bool is_niftyreg_grid(const std::string& grid) {
  const std::string e = extension(grid);
  return e == ".nii" || e == ".nii.gz";
}

sv::ArrayD load_niftyreg_grid_input(const std::string& grid, const std::string& spacing,
                                    const std::string& reference, const char* command,
                                    std::vector<int>& delta) {
  const std::string where = std::string(command) + ": GRID '" + shown(grid) + "'";
  if (reference.empty())
    throw UsageError(where +
                     " is a NiftyReg control-point grid (.nii/.nii.gz): give the image it was "
                     "computed for (reg_f3d -ref) with --reference REF; its world positions "
                     "become displacements in REF's voxels");
  const ReferenceHeader ref = reference_header(reference);
  sv::FfdGrid g;
  try {
    g = sv::niftyreg_grid_to_ffd(sv::load_nifti_vector(grid), grid, ref.geometry, ref.dims);
  } catch (const sv::Error& e) {
    std::string m = e.what();
    if (m.rfind(grid + ": ", 0) == 0) m = m.substr(grid.size() + 2);
    throw sv::Error(where + ": " + m + " (reference '" + shown(reference) + "')");
  }
  if (!spacing.empty() && !same_spacing(spacing, g.delta))
    throw UsageError(std::string(command) + ": --spacing " + sv::printable(spacing, 40) +
                     " conflicts with the spacing of the NiftyReg grid '" + shown(grid) + "', " +
                     joined(g.delta) +
                     " voxels (array order, from its header and the reference); leave --spacing "
                     "out");
  delta = g.delta;
  return std::move(g.grid);
}

void check_warp_reference_option(const std::string& grid, const std::string& reference) {
  if (!reference.empty() && !is_niftyreg_grid(grid))
    throw UsageError(
        "warp: --reference is for a NiftyReg .nii/.nii.gz GRID (whose positions "
        "are converted to the reference's voxels); GRID '" +
        shown(grid) + "' is in MOVING's voxels already");
}

void check_moving_on_reference(const std::string& grid, const std::string& reference,
                               const sv::Loaded& moving, const std::string& moving_path) {
  if (!is_niftyreg_grid(grid)) return;
  const ReferenceHeader ref = reference_header(reference);
  const std::string why =
      " (the NiftyReg grid's displacements are in the reference's voxels and warp resamples "
      "MOVING on its own grid; resample MOVING onto the reference first)";
  const std::vector<std::size_t>& dims = moving.array.dims();
  if (dims != ref.dims)
    throw sv::Error("warp: MOVING '" + shown(moving_path) + "' is " +
                    sv::describe_shape(dims, moving.array.channels()) + ", the reference '" +
                    shown(reference) + "' " + sv::describe_shape(ref.dims, 1) + why);
  if (!moving.geometry.oriented()) return;
  // MOVING's voxel -> the reference's voxel must be the identity: within 1e-4 voxel at every
  // corner of the image.
  const sv::Mat4 D = sv::mat4_mul(sv::mat4_inverse(ref.geometry.affine), moving.geometry.affine);
  const std::size_t r = dims.size();
  double worst = 0;
  for (std::size_t a = 0; a < 3; ++a) {
    double e = std::fabs(D[a][3]);
    for (std::size_t c = 0; c < r; ++c)
      e += std::fabs(D[a][c] - (a == c ? 1.0 : 0.0)) * static_cast<double>(dims[r - 1 - c] - 1);
    worst = std::max(worst, a < r ? e : 0.0);
  }
  if (!(worst <= 1e-4))
    throw sv::Error("warp: MOVING '" + shown(moving_path) +
                    "' does not lie on the voxel grid of the reference '" + shown(reference) +
                    "': its voxels are up to " + sv::format_number(worst) +
                    " reference voxels from the reference's" + why);
}

}  // namespace splinetool
