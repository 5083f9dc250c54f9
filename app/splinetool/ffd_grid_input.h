// splinetool ffd and warp: a NiftyReg control-point grid as GRID (a .nii/.nii.gz that reg_f3d
// wrote with -cpp), converted to the project's grid convention for the reference image given
// with --reference (sv::load_niftyreg_grid; splineview/niftyreg.h states the mapping), and the
// checks that go with it. ffd_commands.cpp calls these; the contract is in
// app/splinetool/README.md ("Deformation fields").
#pragma once

#include <string>
#include <vector>

#include "splineview/array.h"
#include "splineview/io.h"

namespace splinetool {

// True when GRID ends in .nii or .nii.gz (any case): a NiftyReg grid, whose spacing and
// geometry come from the file. (.npy and NRRD grids are the project's own convention.)
bool is_niftyreg_grid(const std::string& grid);

// The grid of the NiftyReg file `grid` for the reference image `reference` (its shape and
// voxel-to-world transform; only its header is read where the format allows), and its spacing
// in `delta` (array order). UsageError when `reference` is empty, or when `spacing` (the typed
// --spacing, "" when not given) is not the file's spacing; sv::Error "<command>: GRID '<grid>':
// ..." when the file is not such a grid or does not fit the reference (niftyreg.h).
sv::ArrayD load_niftyreg_grid_input(const std::string& grid, const std::string& spacing,
                                    const std::string& reference, const char* command,
                                    std::vector<int>& delta);

// warp: UsageError when --reference is given with a grid that is not a NiftyReg grid (the
// project's grids are in MOVING's voxels and need none). Checked before any input is read.
void check_warp_reference_option(const std::string& grid, const std::string& reference);

// warp with a NiftyReg grid: the grid's displacements are in the reference's voxels, and warp
// resamples MOVING on its own voxel grid, so MOVING must have the reference's shape and, when
// it states an orientation, its voxel-to-world transform (within 1e-4 voxel over the image);
// sv::Error naming both files otherwise. Does nothing for other grids.
void check_moving_on_reference(const std::string& grid, const std::string& reference,
                               const sv::Loaded& moving, const std::string& moving_path);

}  // namespace splinetool
