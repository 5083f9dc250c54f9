// splinetool's derivative filters (issue 17 part 1): `derivative` (any partial derivative, an
// order per axis), `gradient` (the R first derivatives as a component axis), `gradient-magnitude`,
// `laplacian` and `hessian` (the R x R second derivatives as two component axes) of the
// interpolating B-spline at the grid points, computed in the coefficient domain by the core
// (sv::derivative_filter and friends, derivative.h). CPU only for now: --backend cuda is refused
// as not yet there. main.cpp calls add_filter_commands while declaring the commands and
// run_filter_commands after parsing; the contract is in app/splinetool/README.md ("Derivatives").
#pragma once

#include <string>

#include "commands.h"

namespace CLI {
class App;
}

namespace splinetool {

struct FilterArgs {
  std::string in, out;
  std::string order;  // derivative: --order M0,M1[,M2] (array order), as typed
  int degree = 3;
  std::string mode = "reflect";  // ours or scipy.ndimage's names (sv::parse_boundary)
  double cval = 0.0;
  std::string precision = "double";  // single: float storage and passes; double
  std::string backend = "cpu";       // cpu | cuda (refused: not yet)
  bool no_prefilter = false;         // IN holds B-spline coefficients
  bool channels = false;             // the last axis of a .npy IN is channels
  bool json = false;
  unsigned threads = 0;
  bool allow_special = false;
  long volume = -1;
};

// The five subcommands as declared, to learn which one was given.
struct FilterCommands {
  FilterArgs derivative, gradient, gradient_magnitude, laplacian, hessian;
  CLI::App* derivative_app = nullptr;
  CLI::App* gradient_app = nullptr;
  CLI::App* gradient_magnitude_app = nullptr;
  CLI::App* laplacian_app = nullptr;
  CLI::App* hessian_app = nullptr;
};

// Declares the commands on `app`, bound to `c` (which must outlive the parse).
void add_filter_commands(CLI::App& app, FilterCommands& c);

// Runs whichever was parsed (nothing when none was).
void run_filter_commands(const FilterCommands& c);

}  // namespace splinetool
