// GRBF interpolation (issue 18) on CUDA: the exact separable solve and the truncated evaluation
// of lib/include/splineview/grbf.h, on the device.
//
// The solve: the weights are (A_0^-1 (x) ... (x) A_{r-1}^-1) f, so each axis's inverse (computed
// once on the host in double, by the column-pivoting elimination of grbf.h, cached per (n,
// sigma, ridge)) is applied along every line of that axis by a banded matrix pass: the entries
// of a row below u(T) max|A^-1| / (2 n) at either end are dropped, which changes A^-1 by at most
// u(T) ||A^-1|| / 2 in the 2-norm (docs/DESIGN.md, "GRBF interpolation"). The evaluation on a
// tensor grid (zoom) is the same banded pass with the Gaussian's samples at each output position
// inside the support radius of grbf_support_radius; at arbitrary positions a thread per point
// sums the (2R + 1)^r box. Sums run in double; results are stored as T.
//
// The host-array functions upload, run on the default stream, wait and download; GrbfTiming
// splits the time (CUDA events for the device work).
#pragma once

#include <cstddef>
#include <vector>

#include "splineview/array.h"
#include "splineview/grbf.h"

namespace sv::cuda {

struct GrbfTiming {
  double inverse_ms = 0;   // host: the per-axis inverses (0 when cached)
  double upload_ms = 0;    // host to device
  double solve_ms = 0;     // device: the weights
  double evaluate_ms = 0;  // device: the evaluation
  double download_ms = 0;  // device to host
};

// The weights of f, solved on the device (the checks, the condition number and its refusal,
// the support radius and the truncation bound as sv::grbf_solve).
template <class T>
GrbfWeights<T> grbf_solve(const Array<T>& f, const GrbfOptions& opt = {},
                          GrbfTiming* timing = nullptr);

// s on the tensor grid of per-axis positions, as sv::grbf_grid (truncated at g.radius).
template <class T>
Array<T> grbf_grid(const GrbfWeights<T>& g, const std::vector<std::vector<double>>& axis_positions,
                   GrbfTiming* timing = nullptr);

// Solve and evaluate on the grid in one go, the weights never leaving the device. `weights`,
// when given, receives them (as grbf_solve's).
template <class T>
Array<T> grbf_interpolate_grid(const Array<T>& f, const GrbfOptions& opt,
                               const std::vector<std::vector<double>>& axis_positions,
                               GrbfTiming* timing = nullptr, GrbfWeights<T>* weights = nullptr);

// s at m positions (positions[i * rank + d], sample units), m * channels values, as
// sv::grbf_sample; a position with a non-finite coordinate gives NaN.
template <class T>
void grbf_sample(const GrbfWeights<T>& g, const double* positions, std::size_t m, double* out,
                 GrbfTiming* timing = nullptr);

}  // namespace sv::cuda
