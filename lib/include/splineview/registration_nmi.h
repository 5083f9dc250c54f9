// Normalised mutual information for the FFD registration (issue 16 part 4): the objective
//
//   f(c) = 2 - NMI(F, M o (x + u_c(x))) + w * E(c),   NMI = (H(F) + H(M)) / H(F, M)
//
// ("An overlap invariant entropy measure of 3D medical image alignment", Studholme et al.), for
// images of different modalities, with its exact gradient with respect to the control points.
// The joint histogram uses cubic B-spline Parzen windows ("PET-CT image registration in the chest
// using free-form deformations", Mattes et al.): each image's intensities are mapped by its own
// min / max to bin coordinates in [1, bins - 2], and voxel x adds beta3(t_F(x) - i) beta3(t_M(x) -
// k) to bin (i, k), so the histogram, the entropies and f are smooth in the warped intensities
// and the gradient flows through the window's derivative, the moving image's spline derivative
// and the adjoint of the field (as the SSD objective's does). docs/DESIGN.md ("Registration")
// has the derivation. register_ffd uses it with options.metric = FfdMetric::Nmi.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "splineview/array.h"
#include "splineview/registration.h"

namespace sv {

// The fewest and the most histogram bins per image.
constexpr int kNmiMinBins = 8;
constexpr int kNmiMaxBins = 1024;

// Throws sv::Error unless kNmiMinBins <= bins <= kNmiMaxBins.
void check_nmi_bins(int bins);

// An image's intensity v -> bin coordinate t = 1 + (v - lo) * scale, scale = (bins - 3) / (max -
// min) with lo = min of the image's samples (scale 0 for a constant image), so the samples span
// [1, bins - 2] and the four bins a window touches exist. A warped value beyond the range (the
// spline overshoots) is clamped to the end, where f then does not depend on it (its derivative
// is 0).
struct NmiIntensityMap {
  double lo = 0;
  double scale = 0;
  int bins = 64;
  // The clamped coordinate; *inside (if not null) tells whether no clamping happened.
  double coordinate(double v, bool* inside = nullptr) const {
    double t = 1.0 + (v - lo) * scale;
    const double top = static_cast<double>(bins - 2);
    const bool in = t >= 1.0 && t <= top;
    if (!in) t = t < 1.0 ? 1.0 : top;
    if (inside) *inside = in;
    return t;
  }
  // The first of the four bins a window at coordinate t (in [1, bins - 2]) touches, and the
  // window's fraction: bins first .. first + 3 get beta3(t - first - j), j = 0..3, the weights of
  // bspline_weights_frac(3, frac). t = bins - 2 takes first = bins - 4 and frac 1 (its fourth
  // weight is 0), so every index lies in 0 .. bins - 1.
  int window(double t, double* frac) const {
    double fl = std::floor(t);
    if (fl > static_cast<double>(bins - 3)) fl = static_cast<double>(bins - 3);
    *frac = t - fl;
    return static_cast<int>(fl) - 1;
  }
};

template <class T>
NmiIntensityMap nmi_intensity_map(const Array<T>& image, int bins);

// The entropies of a joint histogram and NMI.
struct NmiValue {
  double nmi = 0;       // (h_fixed + h_moving) / h_joint
  double h_fixed = 0;   // H(F) of the fixed marginal
  double h_moving = 0;  // H(M) of the moving marginal
  double h_joint = 0;   // H(F, M)
};

// From the joint histogram `joint` (bins x bins, fixed bin major, sums of window products over
// `voxels` voxels): p = joint / voxels, its marginals and entropies (natural logarithms, 0 log 0
// = 0). With `table` not null it receives, per bin (i, k),
//   G(i, k) = (NMI log p(i, k) - log p_M(k)) / H(F, M)      (log 0 terms taken as 0),
// so that dNMI / dt_M(x) = (1 / voxels) sum_{i,k} beta3(t_F(x) - i) beta3'(t_M(x) - k) G(i, k).
// Sums in a fixed order (deterministic). Shared by the CPU and GPU objectives.
NmiValue nmi_from_histogram(const std::vector<double>& joint, int bins, double voxels,
                            std::vector<double>* table = nullptr);

// The NMI objective of one level, prepared once (the moving image prefiltered, both intensity
// maps taken from the images' own min / max) and evaluated at any grid of `grid_shape`:
// what register_ffd minimises with FfdMetric::Nmi, exposed for tests and benchmarks. evaluate's
// `ssd` receives the similarity term 2 - NMI. Arguments checked as FfdSsdObjective's (and the
// bins). Deterministic and independent of the thread count: the histogram is summed per fixed
// slab of voxel rows (their count depends on the image and the bins only), the slabs in order.
template <class T>
class FfdNmiObjective : public FfdObjective {
 public:
  FfdNmiObjective(const Array<T>& fixed, const Array<T>& moving, std::vector<int> spacing,
                  double bending_weight, int bins = 64, Boundary boundary = Boundary::Reflect,
                  unsigned threads = 0);

  double evaluate(const Array<double>& grid, Array<double>* gradient = nullptr,
                  double* similarity = nullptr, double* energy = nullptr,
                  FfdStageTimes* times = nullptr) const override;
  // NMI and the entropies at a grid.
  NmiValue nmi(const Array<double>& grid) const;

  const std::vector<std::size_t>& grid_shape() const override { return grid_shape_; }
  const std::vector<int>& spacing() const { return spacing_; }
  int bins() const { return bins_; }
  const NmiIntensityMap& fixed_map() const { return fixed_map_; }
  const NmiIntensityMap& moving_map() const { return moving_map_; }

 private:
  double run(const Array<double>& grid, Array<double>* gradient, NmiValue* value,
             FfdStageTimes* times) const;

  Array<T> fixed_;
  Array<T> coefficients_;  // the moving image's cubic B-spline coefficients
  std::vector<int> spacing_;
  std::vector<std::size_t> grid_shape_;
  double weight_;
  int bins_;
  Boundary boundary_;
  unsigned threads_;
  NmiIntensityMap fixed_map_, moving_map_;
  std::vector<double> fixed_t_;  // the fixed image's bin coordinates
};

}  // namespace sv
