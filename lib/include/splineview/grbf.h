// Gaussian radial basis function (GRBF) interpolation on regular 1-3 D grids (issue 18):
//   s(x) = sum_k w[k] prod_d exp(-(x_d - k_d)^2 / (2 sigma_d^2)),   s(k) = f[k] at every sample.
//
// The exact solve: on a grid the kernel matrix is the Kronecker product of one symmetric
// Toeplitz matrix per axis, A_d[i][j] = exp(-(i - j)^2 / (2 sigma_d^2)), so the weights come from
// one Cholesky factorisation per axis (in double) applied along every line of that axis: whole
// images and volumes, no blocks, no seams (docs/DESIGN.md, "GRBF interpolation").
//
// The published baseline ("GRBF interpolation of 2-D and 3-D medical images with CUDA", Chen et
// al.): a dense per-block solve by column-pivoting Gaussian elimination with an explicit inverse,
// blocks of B samples per axis with K samples of overlap and a linear blend across the overlap
// (the paper's "natural stitching"); kept to show the seams the exact solve does not have.
//
// There is no boundary mode: the sum runs over the grid's samples only, so s decays to 0 away
// from the grid, as in the paper. Positions are in sample units, array axis order.
#pragma once

#include <cstddef>
#include <vector>

#include "splineview/array.h"

namespace sv {

struct GrbfOptions {
  // The Gaussian's standard deviation in samples: one value for every axis or one per axis in
  // array order (z, y, x); each in (0, 64].
  std::vector<double> sigma{1.0};
  // Regularisation, off at 0: the weights solve (A_0 + ridge I) (x) ... (x) (A_{d-1} + ridge I)
  // w = f, a ridge on every axis's matrix (not A + ridge I, which is not a Kronecker product).
  // With ridge > 0, s no longer interpolates: s(k) = f[k] - (the ridge's share).
  double ridge = 0.0;
  unsigned threads = 0;  // 0 = default_thread_count()
};

// The spectrum of one axis's matrix A_d + ridge I (eigenvalues in double: Householder
// tridiagonalisation and Sturm bisection; above kGrbfExactEigenMax samples the extremes of the
// matrix's symbol, which bound every Toeplitz section's eigenvalues, so `condition` is then an
// upper bound: `exact` says which).
struct GrbfAxisSystem {
  std::size_t n = 0;
  double sigma = 1.0;
  double ridge = 0.0;
  double lambda_min = 0.0, lambda_max = 0.0;
  double condition = 0.0;  // lambda_max / lambda_min in the 2-norm; +inf if lambda_min <= 0
  bool exact = true;
};
constexpr std::size_t kGrbfExactEigenMax = 1024;

// The whole grid's system: the 2-norm condition number of the Kronecker product is the product
// of the axes' (its eigenvalues are the products of theirs).
struct GrbfSystem {
  std::vector<GrbfAxisSystem> axes;
  double condition = 0.0;
};

// The refusal rule: a system with condition * epsilon(T) >= kGrbfSingularLimit is singular in
// the working precision T (the weights' relative error bound, condition * eps, would reach 10%)
// and grbf_solve throws sv::Error naming sigma and the condition number.
constexpr double kGrbfSingularLimit = 0.1;

// sigma per axis for `rank` axes from one value or one per axis; throws sv::Error naming the
// count or the bad value.
std::vector<double> grbf_sigma_per_axis(const std::vector<double>& sigma, std::size_t rank);

// The condition numbers of the system that grbf_solve would solve for an array of `dims`.
GrbfSystem grbf_system(const std::vector<std::size_t>& dims, const GrbfOptions& opt = {});

// The dense kernel matrix of one axis, n x n row-major (A_d + ridge I).
std::vector<double> grbf_axis_matrix(std::size_t n, double sigma, double ridge = 0.0);

template <class T>
struct GrbfWeights {
  Array<T> w;                 // same shape and channels as the samples
  std::vector<double> sigma;  // per axis
  double ridge = 0.0;
  GrbfSystem system;
  double max_abs_sample = 0.0;  // max |f| over every channel
  double max_abs_weight = 0.0;  // max |w|
  // The truncated sum keeps, on axis d, the samples with |x_d - k_d| <= radius[d]
  // (grbf_support_radius); truncation_bound is the derived bound on what that drops.
  std::vector<double> radius;
  double truncation_bound = 0.0;
};

// Solves for the weights in T (the per-axis factors are computed in double and rounded to T;
// the line solves run in T). Throws sv::Error for non-finite samples, a bad sigma or ridge, or
// a system singular in T (see kGrbfSingularLimit).
template <class T>
GrbfWeights<T> grbf_solve(const Array<T>& f, const GrbfOptions& opt = {});

// grbf_solve's steps around the weights themselves, for the other solvers (sv::cuda's):
// grbf_prepare checks f and the options, computes the system (kept for the shapes already seen)
// and refuses a singular one, leaving w empty; grbf_finish sets max_abs_weight, the support
// radius and the truncation bound once the weights are known.
template <class T>
GrbfWeights<T> grbf_prepare(const Array<T>& f, const GrbfOptions& opt = {});
template <class T>
void grbf_finish(GrbfWeights<T>& g, double max_abs_weight);

// The tail of the truncated sum. With S_e = 1 + sqrt(2 pi) sigma_e (a bound on
// sum_k exp(-(x - k)^2 / (2 sigma_e^2)) over all integers k, for any x) and
// tail(R, sigma) = 2 exp(-R^2 / (2 sigma^2)) / (1 - exp(-R / sigma^2)) (a bound on the same sum
// over |x - k| > R), dropping every sample outside the box |x_d - k_d| <= R_d changes s(x) by at
// most  max|w| * sum_d tail(R_d, sigma_d) prod_{e != d} S_e.
double grbf_truncation_bound(const std::vector<double>& sigma, const std::vector<double>& radius,
                             double max_abs_weight);
// The smallest radii (per axis, multiples of sigma_d / 64) for which that bound is at most
// u(T) * max_abs_sample, u = epsilon / 2: the neglected tail stays below the working precision
// of the data, whatever the weights' size (they alternate and grow with the condition number).
std::vector<double> grbf_support_radius(const std::vector<double>& sigma, double max_abs_weight,
                                        double max_abs_sample, double unit_roundoff);

struct GrbfEvalOptions {
  bool truncate = true;  // false: the sum over every sample (tests, oracles)
  unsigned threads = 0;
};

// s at m positions (positions[i * rank + d]); m * channels values (interleaved), accumulated in
// double whatever T is.
template <class T>
void grbf_sample(const GrbfWeights<T>& g, const double* positions, std::size_t m, double* out,
                 const GrbfEvalOptions& opt = {});

// s on the tensor grid of per-axis positions (axis_positions[d] holds the output's positions
// along axis d): separable, one small matrix per axis. The result has the grid's shape and the
// weights' channels; sums in double, stored as T.
template <class T>
Array<T> grbf_grid(const GrbfWeights<T>& g, const std::vector<std::vector<double>>& axis_positions,
                   const GrbfEvalOptions& opt = {});

// ---- The published scheme (lib/src/grbf_blocked.cpp) ----

// Column-pivoting Gaussian elimination as in the paper, on an n x n row-major matrix in T:
// gauss_inverse reduces [A | I] to [I | A^-1] (the paper's 3-D step); gauss_solve reduces
// [A | B] (nrhs columns, row-major n x nrhs) to upper triangular form and back-substitutes (its
// 2-D step). Throw sv::Error on a zero pivot.
template <class T>
std::vector<T> gauss_inverse(std::vector<T> a, std::size_t n, unsigned threads = 0);
template <class T>
std::vector<T> gauss_solve(std::vector<T> a, std::vector<T> b, std::size_t n, std::size_t nrhs,
                           unsigned threads = 0);

// The whole grid's dense kernel matrix (points in C order), for oracles and the baseline.
std::vector<double> grbf_dense_matrix(const std::vector<std::size_t>& dims,
                                      const std::vector<double>& sigma);

struct GrbfBlockOptions {
  std::vector<double> sigma{1.0};
  // B: samples per block, one value for every axis or one per axis (array order); every block
  // solves a dense system of prod B_d unknowns (blocks at the borders are shifted inwards to
  // keep B_d samples where the axis allows). The tiles that blocks own are B_d - 2K long.
  std::vector<std::size_t> block{60};
  // K: samples each block reaches beyond its tile on every side. 0: non-overlapping blocks,
  // each position evaluated from its tile's block only (the paper's seams); K > 0: positions
  // where two blocks overlap take a linear blend of both (the stitching).
  std::size_t overlap = 0;
  unsigned threads = 0;
};

// One block per axis: the samples [start, start + size) it solves, and the positions where its
// blend weight ramps linearly from 1 to 0 towards the next block: with K > 0 from the next
// tile's first sample - K to this tile's last sample + K (the samples both blocks hold around
// the border), with K = 0 a hard switch half-way between the tiles (ramp_lo = ramp_hi).
struct GrbfBlockSpan {
  std::size_t start = 0, size = 0;
  double ramp_lo = 0.0, ramp_hi = 0.0;
};
std::vector<GrbfBlockSpan> grbf_block_spans(std::size_t n, std::size_t block, std::size_t overlap);

template <class T>
struct GrbfBlocked {
  std::vector<std::size_t> dims;
  std::size_t channels = 1;
  std::vector<double> sigma;
  std::vector<std::vector<GrbfBlockSpan>> spans;  // per axis
  std::vector<GrbfWeights<T>> blocks;             // C order over the per-axis block indices
  double seconds_inverse = 0.0;   // the explicit inverses (one per distinct block shape)
  double seconds_multiply = 0.0;  // weights = inverse x block samples
};

template <class T>
GrbfBlocked<T> grbf_blocked_solve(const Array<T>& f, const GrbfBlockOptions& opt);

template <class T>
void grbf_blocked_sample(const GrbfBlocked<T>& b, const double* positions, std::size_t m,
                         double* out, unsigned threads = 0);

}  // namespace sv
