// splinetool's GRBF interpolation (issue 18): `sample --method grbf` and `resample --method
// grbf`, the exact separable solve (sv::grbf_solve) or, with --grbf-blocks, the published
// blocked scheme (sv::grbf_blocked_solve), on the CPU. main.cpp declares the options with
// add_grbf_options and hands the parsed command here when --method is grbf; the contract is in
// app/splinetool/README.md ("GRBF interpolation").
#pragma once

#include <string>

#include "commands.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace splinetool {

struct GrbfArgs {
  std::string method;       // sample's --method: "" (the spline of --degree) or "grbf"
  std::string sigma = "1";  // --sigma S or S0,S1[,S2] (array order)
  double ridge = 0;         // --ridge LAMBDA: (A_d + LAMBDA I) on every axis
  std::string blocks;       // --grbf-blocks B or BxB[xB]: the published scheme ("" = exact)
  std::size_t overlap = 0;  // --overlap K: samples each block reaches beyond its tile
  // The options as declared, to refuse them without --method grbf.
  CLI::Option* sigma_opt = nullptr;
  CLI::Option* ridge_opt = nullptr;
  CLI::Option* blocks_opt = nullptr;
  CLI::Option* overlap_opt = nullptr;
};

// Declares --sigma, --ridge, --grbf-blocks, --overlap on `sub` (and, with `method`, sample's
// --method grbf), bound to `g`.
void add_grbf_options(CLI::App* sub, GrbfArgs& g, bool method);

// True when `method` is grbf; otherwise throws UsageError if a GRBF option was given.
bool grbf_requested(const GrbfArgs& g, const std::string& method, const char* command);

void run_grbf_sample(const SampleArgs& args, const GrbfArgs& g);
void run_grbf_resample(const ResampleArgs& args, const GrbfArgs& g);

}  // namespace splinetool
