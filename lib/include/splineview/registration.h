// Intensity-based registration with a cubic B-spline free-form deformation (issue 16 part 4, the
// CPU version): find the control grid c (ffd.h's convention) that minimises
//
//   f(c) = SSD(F, M o (x + u_c(x))) / N + w * E(c),
//
// F the fixed image, M the moving image (interpolated by its prefiltered cubic spline), N the
// voxel count, E the bending energy (ffd_bending_energy). The gradient with respect to the
// control points is exact: dSSD/dc_j = sum_x 2 (M(x + u(x)) - F(x)) grad M(x + u(x)) beta_j(x),
// with grad M the derivative of M's spline and the sum over x the adjoint of the tile-structured
// field evaluation. Multi-resolution (coarse to fine, exact grid refinement), L-BFGS or gradient
// descent with a backtracking (Armijo) line search. docs/DESIGN.md ("Registration") has the
// details.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "splineview/array.h"

namespace sv {

enum class FfdOptimizer { Lbfgs, GradientDescent };

// The similarity term: Ssd, SSD / N (images of one modality); Nmi, 2 - NMI with NMI = (H(F) +
// H(M)) / H(F, M) from a joint histogram with cubic B-spline Parzen windows (images of different
// modalities; registration_nmi.h, sv::FfdNmiObjective).
enum class FfdMetric { Ssd, Nmi };

struct FfdRegistrationOptions {
  // Control-point spacing per array axis at the finest level, in voxels (>= 1). Required: one
  // entry per image axis.
  std::vector<int> spacing;
  // Resolution levels, coarse to fine (>= 1). Level k (k = levels - 1 the coarsest, 0 the
  // finest) works on images reduced 2^k times (image_pyramid) with the grid at `spacing` of that
  // level's voxels, or on the full images with the grid at spacing * 2^k.
  int levels = 3;
  // true: the fixed and moving images are reduced by 2 per level with sv::reduce2 (the
  // least-squares, anti-aliased B-spline pyramid, Mirror / Nodes geometry: coarse voxel l sits
  // at fine voxel 2 l, so a coarse grid is exactly a fine grid of twice the spacing with
  // displacements scaled by 2). false: every level uses the full images.
  bool image_pyramid = true;
  int iterations = 100;  // the most optimiser iterations per level (>= 0)
  // w: the weight of the bending energy (>= 0), against the SSD / N of the (normalised) images
  // or against 2 - NMI.
  double bending_weight = 1e-3;
  FfdMetric metric = FfdMetric::Ssd;
  // Nmi: the joint histogram's bins per image (8 to 1024; NiftyReg's reg_f3d uses 64).
  int bins = 64;
  // Both images mapped by the linear map that takes the fixed image's [min, max] to [0, 1]
  // before registration (so the SSD, the weight and the history are in units of the fixed
  // image's range squared). false: the values as given.
  bool normalize_intensities = true;
  FfdOptimizer optimizer = FfdOptimizer::Lbfgs;
  int lbfgs_memory = 7;  // correction pairs kept (>= 1)
  // Step control: the first trial step of a line search moves no control point by more than
  // max_step voxels (of the level); L-BFGS tries its full step (1) when that is smaller.
  double max_step = 1.0;
  double armijo = 1e-4;     // sufficient-decrease constant c1 in (0, 1)
  int max_backtracks = 30;  // halvings before the line search gives up (>= 1)
  // Stop a level when an iteration lowers f by less than tolerance * |f| (>= 0).
  double tolerance = 1e-6;
  Boundary boundary = Boundary::Reflect;  // the moving image's extension: Reflect, Mirror, Periodic
  unsigned threads = 0;                   // 0 = sv::default_thread_count()
};

// Seconds spent per stage (summed over every objective evaluation).
struct FfdStageTimes {
  double field = 0;        // the dense displacement field (ffd_field)
  double warp = 0;         // sampling M and grad M at x + u(x), the residuals
  double gradient = 0;     // the adjoint: per-voxel gradients accumulated into control points
  double regulariser = 0;  // bending energy and its gradient
  double setup = 0;        // pyramid, prefilter, refinement between levels
  double total = 0;        // the whole call
};

struct FfdLevelHistory {
  std::vector<std::size_t> image_shape;  // the images at this level
  std::vector<int> spacing;              // the grid's spacing in this level's voxels
  // Per accepted iterate, the starting point first: the similarity term (SSD / N, or 2 - NMI
  // with FfdMetric::Nmi), bending energy and f.
  std::vector<double> ssd, energy, objective;
  int iterations = 0;   // accepted steps
  int evaluations = 0;  // objective evaluations (line-search trials included)
  std::string stop;     // why the level ended: "iterations", "tolerance", "line search", "gradient"
};

struct FfdRegistrationResult {
  Array<double> grid;                   // the control grid for the full-resolution images
  std::vector<int> spacing;             // its spacing (= options.spacing)
  std::vector<FfdLevelHistory> levels;  // coarse to fine
  int iterations = 0;                   // over all levels
  FfdStageTimes time;
};

// Registers `moving` to `fixed` (same shape, rank 2 or 3, one channel): the result's grid warps
// the moving image onto the fixed one (sv::warp(moving, grid, spacing) ~ fixed). T is the
// precision of the field and of the moving image's spline coefficients; sums, the optimiser and
// the bending energy are in double. Deterministic, and independent of the thread count. Throws
// sv::Error naming the problem: shapes that differ, a rank other than 2 or 3, several channels,
// non-finite values, bad options (which one and why), levels that would reduce an axis below 4
// samples.
template <class T>
FfdRegistrationResult register_ffd(const Array<T>& fixed, const Array<T>& moving,
                                   const FfdRegistrationOptions& options);

class FfdObjective;
// Makes the objective of one level from that level's images (normalised and reduced as the
// options say) and its spacing; the options give the weight and the boundary.
template <class T>
using FfdObjectiveFactory = std::function<std::unique_ptr<FfdObjective>(
    const Array<T>& fixed, const Array<T>& moving, const std::vector<int>& spacing,
    const FfdRegistrationOptions& options)>;

// register_ffd with the objective of every level made by `make_objective` (the optimiser, the
// pyramid, the grid transfer and the result are the same; building the objective counts as
// setup): how the GPU registration (sv::cuda::register_ffd) runs the same level loop.
template <class T>
FfdRegistrationResult register_ffd(const Array<T>& fixed, const Array<T>& moving,
                                   const FfdRegistrationOptions& options,
                                   const FfdObjectiveFactory<T>& make_objective);

// The checks FfdSsdObjective's constructor makes (two non-empty one-channel images of the same
// shape, rank 2 or 3, finite values; the spacing, the weight, the boundary), for other
// implementations of FfdObjective; throws sv::Error naming the problem, else returns the grid
// shape (ffd_grid_shape).
template <class T>
std::vector<std::size_t> check_ffd_objective(const Array<T>& fixed, const Array<T>& moving,
                                             const std::vector<int>& spacing, double bending_weight,
                                             Boundary boundary);
// The checks of evaluate(): a valid grid of exactly `grid_shape` for images of `image_shape`,
// displacements within kMaxWarpDisplacement.
void check_ffd_objective_grid(const Array<double>& grid, const std::vector<int>& spacing,
                              const std::vector<std::size_t>& image_shape,
                              const std::vector<std::size_t>& grid_shape);

// One level's objective as the optimiser sees it: f, df/dc, the similarity term (SSD / N; 2 - NMI
// for the NMI objectives) and E at a control grid of grid_shape(). FfdSsdObjective (below, the
// CPU), FfdNmiObjective (registration_nmi.h) and sv::cuda::FfdSsdObjective (cuda_registration.h,
// the GPU) implement it; register_ffd's level loop takes any of them.
class FfdObjective {
 public:
  virtual ~FfdObjective() = default;
  // f(grid); with `gradient` not null also df/dc (the grid's shape); ssd and energy (when not
  // null) receive the similarity term (SSD / N, or 2 - NMI) and E; times (when not null) are
  // added to.
  virtual double evaluate(const Array<double>& grid, Array<double>* gradient = nullptr,
                          double* ssd = nullptr, double* energy = nullptr,
                          FfdStageTimes* times = nullptr) const = 0;
  virtual const std::vector<std::size_t>& grid_shape() const = 0;
};

// The objective of one level, prepared once (the moving image prefiltered) and evaluated at any
// grid of `grid_shape` (ffd_grid_shape of the images for `spacing`): what register_ffd
// minimises, exposed for tests and benchmarks. The images are used as given (no normalisation).
template <class T>
class FfdSsdObjective : public FfdObjective {
 public:
  FfdSsdObjective(const Array<T>& fixed, const Array<T>& moving, std::vector<int> spacing,
                  double bending_weight, Boundary boundary = Boundary::Reflect,
                  unsigned threads = 0);

  double evaluate(const Array<double>& grid, Array<double>* gradient = nullptr,
                  double* ssd = nullptr, double* energy = nullptr,
                  FfdStageTimes* times = nullptr) const override;

  const std::vector<std::size_t>& grid_shape() const override { return grid_shape_; }
  const std::vector<int>& spacing() const { return spacing_; }

 private:
  Array<T> fixed_;
  Array<T> coefficients_;  // the moving image's cubic B-spline coefficients
  std::vector<int> spacing_;
  std::vector<std::size_t> grid_shape_;
  double weight_;
  Boundary boundary_;
  unsigned threads_;
};

}  // namespace sv
