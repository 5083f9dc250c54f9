// The NMI objective of the FFD registration on the CPU (splineview/registration_nmi.h): the
// joint histogram with cubic B-spline Parzen windows, NMI, and its exact gradient through the
// window's derivative, the moving image's spline derivative and the adjoint of the field.
#include "splineview/registration_nmi.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <utility>

#include "parallel.h"
#include "registration_parts.h"
#include "splineview/bspline.h"
#include "splineview/error.h"
#include "splineview/ffd.h"
#include "splineview/prefilter.h"

namespace sv {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The histogram is summed per slab of voxel rows, the slabs in order: at most 32 slabs, fewer
// for many bins (their partial histograms stay within 4 Mi doubles), never more than the rows.
std::size_t slab_count(std::size_t rows, int bins) {
  const std::size_t cells = static_cast<std::size_t>(bins) * static_cast<std::size_t>(bins);
  const std::size_t by_memory = std::max<std::size_t>(1, (std::size_t{1} << 22) / cells);
  return std::max<std::size_t>(1, std::min({rows, std::size_t{32}, by_memory}));
}

// -p log p with 0 log 0 = 0.
double entropy_term(double p) {
  return p > 0 ? -p * std::log(p) : 0.0;
}

}  // namespace

void check_nmi_bins(int bins) {
  if (bins < kNmiMinBins || bins > kNmiMaxBins)
    throw Error("registration: the NMI joint histogram needs " + std::to_string(kNmiMinBins) +
                " to " + std::to_string(kNmiMaxBins) + " bins per image, got " +
                std::to_string(bins));
}

template <class T>
NmiIntensityMap nmi_intensity_map(const Array<T>& image, int bins) {
  check_nmi_bins(bins);
  NmiIntensityMap m;
  m.bins = bins;
  if (image.empty()) return m;
  double lo = static_cast<double>(image[0]), hi = lo;
  for (T v : image.vec()) {
    lo = std::min(lo, static_cast<double>(v));
    hi = std::max(hi, static_cast<double>(v));
  }
  m.lo = lo;
  m.scale = hi > lo ? static_cast<double>(bins - 3) / (hi - lo) : 0.0;
  return m;
}

NmiValue nmi_from_histogram(const std::vector<double>& joint, int bins, double voxels,
                            std::vector<double>* table) {
  check_nmi_bins(bins);
  const std::size_t B = static_cast<std::size_t>(bins);
  if (joint.size() != B * B)
    throw Error("registration: the joint histogram has " + std::to_string(joint.size()) +
                " cells, " + std::to_string(bins) + " bins need " + std::to_string(B * B));
  if (!(voxels > 0)) throw Error("registration: the joint histogram counts no voxel");
  const double inv = 1.0 / voxels;
  std::vector<double> pf(B, 0.0), pm(B, 0.0);
  NmiValue r;
  for (std::size_t i = 0; i < B; ++i)
    for (std::size_t k = 0; k < B; ++k) {
      const double p = joint[i * B + k] * inv;
      pf[i] += p;
      pm[k] += p;
      r.h_joint += entropy_term(p);
    }
  for (std::size_t i = 0; i < B; ++i) {
    r.h_fixed += entropy_term(pf[i]);
    r.h_moving += entropy_term(pm[i]);
  }
  r.nmi = r.h_joint > 0 ? (r.h_fixed + r.h_moving) / r.h_joint : 2.0;
  if (table) {
    table->assign(B * B, 0.0);
    if (r.h_joint > 0) {
      const double ih = 1.0 / r.h_joint;
      for (std::size_t i = 0; i < B; ++i)
        for (std::size_t k = 0; k < B; ++k) {
          const double p = joint[i * B + k] * inv;
          const double lp = p > 0 ? std::log(p) : 0.0;
          const double lm = pm[k] > 0 ? std::log(pm[k]) : 0.0;
          (*table)[i * B + k] = (r.nmi * lp - lm) * ih;
        }
    }
  }
  return r;
}

template <class T>
FfdNmiObjective<T>::FfdNmiObjective(const Array<T>& fixed, const Array<T>& moving,
                                    std::vector<int> spacing, double bending_weight, int bins,
                                    Boundary boundary, unsigned threads)
    : fixed_(fixed),
      coefficients_(moving),
      spacing_(std::move(spacing)),
      weight_(bending_weight),
      bins_(bins),
      boundary_(boundary),
      threads_(threads ? threads : default_thread_count()) {
  grid_shape_ = check_ffd_objective(fixed, moving, spacing_, bending_weight, boundary);
  check_nmi_bins(bins);
  fixed_map_ = nmi_intensity_map(fixed, bins);
  moving_map_ = nmi_intensity_map(moving, bins);
  fixed_t_.resize(fixed.size());
  for (std::size_t v = 0; v < fixed.size(); ++v)
    fixed_t_[v] = fixed_map_.coordinate(static_cast<double>(fixed[v]));
  PrefilterOptions po;
  po.degree = 3;
  po.boundary = boundary;
  po.threads = threads_;
  prefilter(coefficients_, po);
}

template <class T>
double FfdNmiObjective<T>::run(const Array<double>& grid, Array<double>* gradient, NmiValue* value,
                               FfdStageTimes* times) const {
  const std::size_t R = fixed_.rank();
  check_ffd_objective_grid(grid, spacing_, fixed_.dims(), grid_shape_);
  const detail::FfdView view = detail::ffd_view(fixed_.dims(), grid.dims(), spacing_);
  const std::size_t voxels = view.voxels(), rows = view.rows();
  const std::size_t B = static_cast<std::size_t>(bins_);

  // 1. The field.
  auto t0 = Clock::now();
  const Array<T> u = ffd_field<T>(Array<T>::from(grid), spacing_, fixed_.dims(), threads_);
  if (times) times->field += seconds_since(t0);

  // 2. The warp and the joint histogram: per voxel M(x + u) -> t_M, the window products added
  // to its slab's histogram; kept for the gradient: t_M and dt_M / du = scale grad M (0 where
  // t_M is clamped).
  t0 = Clock::now();
  const bool want_grad = gradient != nullptr;
  std::vector<double> tm(voxels);
  std::vector<double> dtm;
  if (want_grad) dtm.assign(voxels * R, 0.0);
  const std::size_t slabs = slab_count(rows, bins_);
  std::vector<double> partial(slabs * B * B, 0.0);
  const T* coef = coefficients_.data();
  const T* uf = u.data();
  detail::parallel_for(
      slabs, detail::thread_count(threads_, slabs, 1), [&](std::size_t b, std::size_t e) {
        for (std::size_t s = b; s < e; ++s) {
          double* h = partial.data() + s * B * B;
          const std::size_t r0 = s * rows / slabs, r1 = (s + 1) * rows / slabs;
          for (std::size_t row = r0; row < r1; ++row)
            for (std::size_t x = 0; x < view.N[2]; ++x) {
              const std::size_t v = row * view.N[2] + x;
              double d[3];
              const double val =
                  detail::spline_value_gradient(coef, view, row, x, uf + v * R, boundary_, d);
              bool inside = true;
              const double t = moving_map_.coordinate(val, &inside);
              tm[v] = t;
              if (want_grad && inside)
                for (std::size_t a = 0; a < R; ++a)
                  dtm[v * R + a] = moving_map_.scale * d[a + view.off];
              double ff, fm, wf[4], wm[4];
              const int i0 = fixed_map_.window(fixed_t_[v], &ff);
              const int k0 = moving_map_.window(t, &fm);
              bspline_weights_frac<double>(3, ff, wf, 0);
              bspline_weights_frac<double>(3, fm, wm, 0);
              for (int i = 0; i < 4; ++i) {
                double* hr =
                    h + static_cast<std::size_t>(i0 + i) * B + static_cast<std::size_t>(k0);
                for (int k = 0; k < 4; ++k) hr[k] += wf[i] * wm[k];
              }
            }
        }
      });
  std::vector<double> joint(B * B, 0.0);
  for (std::size_t s = 0; s < slabs; ++s) {
    const double* h = partial.data() + s * B * B;
    for (std::size_t c = 0; c < B * B; ++c) joint[c] += h[c];
  }
  std::vector<double> table;
  const NmiValue nv =
      nmi_from_histogram(joint, bins_, static_cast<double>(voxels), want_grad ? &table : nullptr);
  if (value) *value = nv;
  if (times) times->warp += seconds_since(t0);

  // 3. The gradient: per voxel df / du = -dNMI / dt_M dt_M / du, then the adjoint of the field.
  if (want_grad) {
    t0 = Clock::now();
    Array<double> g(fixed_.dims(), R);
    const double scale = -1.0 / static_cast<double>(voxels);
    detail::parallel_for(
        rows, detail::thread_count(threads_, rows, 4), [&](std::size_t b, std::size_t e) {
          for (std::size_t v = b * view.N[2]; v < e * view.N[2]; ++v) {
            double ff, fm, wf[4], dwm[4];
            const int i0 = fixed_map_.window(fixed_t_[v], &ff);
            const int k0 = moving_map_.window(tm[v], &fm);
            bspline_weights_frac<double>(3, ff, wf, 0);
            bspline_weights_frac<double>(3, fm, dwm, 1);
            double sum = 0;
            for (int i = 0; i < 4; ++i) {
              const double* gr = table.data() + static_cast<std::size_t>(i0 + i) * B +
                                 static_cast<std::size_t>(k0);
              double si = 0;
              for (int k = 0; k < 4; ++k) si += dwm[k] * gr[k];
              sum += wf[i] * si;
            }
            const double c = scale * sum;
            for (std::size_t a = 0; a < R; ++a) g[v * R + a] = c * dtm[v * R + a];
          }
        });
    detail::ffd_adjoint(g, view, grid.dims(), threads_, *gradient);
    if (times) times->gradient += seconds_since(t0);
  }
  return 2.0 - nv.nmi;
}

template <class T>
double FfdNmiObjective<T>::evaluate(const Array<double>& grid, Array<double>* gradient,
                                    double* similarity, double* energy_out,
                                    FfdStageTimes* times) const {
  const double term = run(grid, gradient, nullptr, times);
  const auto t0 = Clock::now();
  double energy = 0;
  if (weight_ > 0 || energy_out) {
    Array<double> ge;
    const bool want = gradient != nullptr && weight_ > 0;
    energy = ffd_bending_energy(grid, spacing_, want ? &ge : nullptr, threads_);
    if (want)
      for (std::size_t i = 0; i < ge.size(); ++i) (*gradient)[i] += weight_ * ge[i];
  }
  if (times) times->regulariser += seconds_since(t0);
  if (similarity) *similarity = term;
  if (energy_out) *energy_out = energy;
  return term + weight_ * energy;
}

template <class T>
NmiValue FfdNmiObjective<T>::nmi(const Array<double>& grid) const {
  NmiValue v;
  run(grid, nullptr, &v, nullptr);
  return v;
}

template class FfdNmiObjective<float>;
template class FfdNmiObjective<double>;
template NmiIntensityMap nmi_intensity_map<float>(const Array<float>&, int);
template NmiIntensityMap nmi_intensity_map<double>(const Array<double>&, int);

}  // namespace sv
