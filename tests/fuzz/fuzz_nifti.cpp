// libFuzzer target: sv::load_nifti (.nii, or .nii.gz when the input starts with the gzip
// signature: the loader decides by content; the name follows suit), and the memory-mapped read,
// which must agree with it (svfuzz::check_mapped); then the same file as a 5-D vector image
// (sv::load_nifti_vector) and, when that reads, as a NiftyReg control-point grid
// (sv::niftyreg_grid_to_ffd) for two references: a fixed oblique one, and one derived from the
// grid's own geometry (spacing 2, the origin where reg_f3d puts it), so that a well-formed grid
// passes the geometry checks and the conversion and size checks run too.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "fuzz_util.h"
#include "splineview/error.h"
#include "splineview/io.h"
#include "splineview/niftyreg.h"

namespace {

void convert(const sv::NiftiVector& v, const std::string& path) {
  const sv::ArrayD& a = v.image.array;
  const std::size_t r = a.channels() == 2 && a.dims()[0] == 1 ? 2 : 3;
  // Reference voxel x at grid index x / 2 + 1: A = G (x / 2 + 1); its extent (M - 3) 2.
  sv::Geometry ref;
  ref.source = "sform";
  const sv::Mat4& G = v.image.geometry.affine;
  for (int row = 0; row < 3; ++row) {
    double origin = G[row][3];
    for (int c = 0; c < 3; ++c) {
      const bool used = static_cast<std::size_t>(c) < r;
      ref.affine[row][c] = used ? G[row][c] / 2 : G[row][c];
      if (used) origin += G[row][c];
    }
    ref.affine[row][3] = origin;
  }
  std::vector<std::size_t> shape(r);
  for (std::size_t k = 0; k < r; ++k) {
    const std::size_t m = a.dims()[3 - r + k];
    shape[k] = m > 4 ? (m - 3) * 2 : 1;
  }
  try {
    sv::niftyreg_grid_to_ffd(v, path, ref, shape);
  } catch (const sv::Error&) {
  }
  // A fixed oblique reference (most grids are refused by its geometry).
  sv::Geometry oblique;
  oblique.source = "sform";
  oblique.affine = {{{0.8, 0.1, 0, -40}, {-0.1, 1.3, 0.2, 12}, {0, -0.2, -2.5, 30}, {0, 0, 0, 1}}};
  try {
    sv::niftyreg_grid_to_ffd(v, path, oblique, shape);
  } catch (const sv::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const bool gz = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  const std::string path = svfuzz::write_input(gz ? "input.nii.gz" : "input.nii", data, size);
  std::optional<sv::Loaded> loaded;
  try {
    loaded = sv::load_nifti(path);
  } catch (const sv::Error&) {
  }
  svfuzz::check_mapped(path, false, loaded ? &*loaded : nullptr);
  std::optional<sv::NiftiVector> vec;
  try {
    vec = sv::load_nifti_vector(path);
  } catch (const sv::Error&) {
  }
  // A file is a vector image or a 1..4-D image, never both.
  if (vec && loaded) std::abort();
  if (vec) convert(*vec, path);
  return 0;
}
