// splinetool's deformation-field commands (issue 16): `ffd` (the dense displacement field of a
// cubic B-spline control grid, and its Jacobian determinant), `warp` (an image or volume
// resampled at x + u(x)) and `register` (the grid that warps MOVING onto FIXED: sv::register_ffd
// on the CPU or sv::cuda::register_ffd, as NiftyReg's reg_f3d). Their arguments, how they join the
// command line (main.cpp calls add_ffd_commands while declaring the commands and run_ffd_commands
// after parsing), and the commands themselves; the contract is in app/splinetool/README.md
// ("Deformation fields").
#pragma once

#include <string>

#include "commands.h"

namespace CLI {
class App;
}

namespace splinetool {

struct FfdArgs {
  CommonArgs common;
  std::string grid, out;
  std::string shape;              // --shape N0,N1[,N2] (array order), as typed; "" with --reference
  std::string reference;          // --reference IMAGE: shape and geometry from this image
  std::string spacing;            // --spacing D | D0,D1[,D2] (voxels), as typed
  std::string jacobian;           // --jacobian JOUT: also the Jacobian determinant map
  bool double_precision = false;  // --double: OUT as float64 (default float32)
};

struct WarpArgs {
  CommonArgs common;
  std::string moving, grid, out;
  std::string spacing;    // --spacing D | D0,D1[,D2] (voxels), as typed
  std::string jacobian;   // --jacobian JOUT
  std::string reference;  // --reference REF: the image a NiftyReg GRID was computed for
  std::string method = "cubic";
  std::string mode = "reflect";  // ours or scipy.ndimage's names (sv::parse_boundary)
  double cval = 0.0;
  // single: float samples, grid, field and coefficients; empty: double on the CPU, single with
  // --backend cuda
  std::string precision;
  bool channels = false;            // the last axis of a .npy MOVING is channels
  std::string backend = "cpu";      // cpu | cuda (sv::cuda::warp)
  std::string kernel = "tile-fma";  // --backend cuda: the field kernel (cuda_ffd.h's names)
};

struct RegisterArgs {
  CommonArgs common;
  std::string fixed, moving, out;  // OUT: the control grid (.npy, or NiftyReg .nii/.nii.gz)
  std::string spacing = "5";       // --spacing D | D0,D1[,D2] at the finest level (voxels)
  std::string warped;              // --warped WOUT: also MOVING warped onto FIXED
  std::string jacobian;            // --jacobian JOUT
  std::string metric = "nmi";      // nmi (reg_f3d's default) | ssd
  int bins = 64;
  int levels = 3;
  int iterations = 150;  // per level (reg_f3d's -maxit default)
  double bending = 1e-3;
  std::string optimizer = "lbfgs";  // lbfgs | gd
  double tolerance = 1e-6;
  std::string precision;  // single | double; default double on the CPU, single on cuda
  std::string backend = "cpu";
  std::string kernel = "tile-fma";
};

// The subcommands as declared, to learn which one was given.
struct FfdCommands {
  FfdArgs ffd;
  WarpArgs warp;
  RegisterArgs reg;
  CLI::App* ffd_app = nullptr;
  CLI::App* warp_app = nullptr;
  CLI::App* register_app = nullptr;
};

// Declares `ffd`, `warp` and `register` on `app`, bound to `c` (which must outlive the parse).
void add_ffd_commands(CLI::App& app, FfdCommands& c);

// Runs whichever was parsed (nothing when none was).
void run_ffd_commands(const FfdCommands& c);

void run_ffd(const FfdArgs& args);
void run_warp(const WarpArgs& args);
void run_register(const RegisterArgs& args);

}  // namespace splinetool
