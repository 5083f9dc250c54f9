// splinetool's B-spline transform commands (issue 17 parts 2-3): `smooth` (the direct transform
// with a smoothing parameter lambda: the smoothing spline's samples or coefficients), `indirect`
// (coefficients back to samples at the grid), and the pyramid, `reduce` (least-squares, anti-
// aliased) and `expand`. All on the CPU (sv::direct_transform, sv::indirect_transform, sv::reduce2,
// sv::reduce, sv::expand2); --backend cuda is refused as not yet there. main.cpp calls
// add_spline_commands while declaring the commands and run_spline_commands after parsing; the
// contract is in app/splinetool/README.md ("B-spline transforms").
#pragma once

#include <string>

#include "commands.h"

namespace CLI {
class App;
}

namespace splinetool {

// What the four commands share.
struct SplineArgs {
  std::string in, out;
  std::string backend = "cpu";
  std::string mode = "reflect";  // reflect|mirror|periodic or scipy.ndimage's names
  std::string precision = "double";
  std::string degree = "3";      // N, or N0,N1[,N2] per axis (smooth, indirect)
  double lambda = 0;             // smooth
  bool coefficients = false;     // smooth, reduce: write coefficients instead of samples
  bool coefficients_in = false;  // reduce: IN holds coefficients
  std::string zoom;              // reduce: F or F0,F1[,F2] (default: halve every axis)
  std::string shape;             // expand: the fine shape N0,N1[,N2]
  bool channels = false;
  bool json = false;
  unsigned threads = 0;
};

struct SplineCommands {
  SplineArgs smooth, indirect, reduce, expand;
  CLI::App* smooth_app = nullptr;
  CLI::App* indirect_app = nullptr;
  CLI::App* reduce_app = nullptr;
  CLI::App* expand_app = nullptr;
};

// Declares smooth, indirect, reduce and expand on `app`, bound to `c` (which must outlive the
// parse).
void add_spline_commands(CLI::App& app, SplineCommands& c);

// Runs whichever of them was parsed (nothing when none was).
void run_spline_commands(const SplineCommands& c);

}  // namespace splinetool
