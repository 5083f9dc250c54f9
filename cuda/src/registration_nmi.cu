// The NMI objective on the GPU (cuda_registration_nmi.h): the field (FfdEvaluator), the warp and
// joint-histogram kernel (64-bit integer atomics: deterministic), the per-voxel gradient kernel
// and the SSD objective's set-up, field, per-voxel spline and adjoint passes (registration_level.h,
// registration_parts.cuh); NMI and its table G on the host (nmi_from_histogram).
#include <cuda_runtime.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "check.cuh"
#include "registration_level.h"
#include "registration_parts.cuh"
#include "splineview/cuda_memory.h"
#include "splineview/cuda_registration_nmi.h"
#include "splineview/ffd.h"

namespace sv::cuda {
namespace {

using detail::check;
using detail::check_launch;
using reg::as;
using reg::Clock;
using reg::kThreads;
using reg::seconds_since;

// Window products are added as integers in units of 2^-32.
constexpr double kFixedOne = 4294967296.0;
// Histograms of up to this many bins per image are summed in shared memory per block first.
constexpr int kSharedBins = 64;

// NmiIntensityMap::window on the device.
__device__ __forceinline__ int window(double t, int bins, double* frac) {
  double fl = floor(t);
  if (fl > static_cast<double>(bins - 3)) fl = static_cast<double>(bins - 3);
  *frac = t - fl;
  return static_cast<int>(fl) - 1;
}

// Cubic B-spline weights beta3(f + 1 - j), j = 0..3, and their derivatives, in double.
__device__ __forceinline__ void window_weights(double f, double w[4]) {
  const double g = 1.0 - f, f2 = f * f, f3 = f2 * f;
  w[0] = g * g * g / 6.0;
  w[1] = (3.0 * f3 - 6.0 * f2 + 4.0) / 6.0;
  w[2] = (-3.0 * f3 + 3.0 * f2 + 3.0 * f + 1.0) / 6.0;
  w[3] = f3 / 6.0;
}

__device__ __forceinline__ void window_derivatives(double f, double w[4]) {
  const double g = 1.0 - f;
  w[0] = -0.5 * g * g;
  w[1] = 1.5 * f * f - 2.0 * f;
  w[2] = -1.5 * f * f + f + 0.5;
  w[3] = 0.5 * f * f;
}

// Per voxel: M and grad M at x + u(x), t_M (double, clamped) into tm, dt_M / du into dtm (when
// not null; 0 where clamped), the window products into the histogram (shared per block when
// kShared, then global).
template <int D, bool kShared>
__global__ void __launch_bounds__(kThreads)
    histogram_kernel(const float* __restrict__ coef, const float* __restrict__ field,
                     const double* __restrict__ fixed_t, const reg::View v, long long voxels,
                     int boundary, double lo, double scale, int bins, double* __restrict__ tm,
                     float* __restrict__ dtm, unsigned long long* __restrict__ hist) {
  extern __shared__ unsigned long long shared_hist[];
  const int cells = bins * bins;
  if (kShared) {
    for (int j = threadIdx.x; j < cells; j += kThreads) shared_hist[j] = 0ull;
    __syncthreads();
  }
  const long long i = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
  if (i < voxels) {
    float d[3];
    const float val = reg::value_gradient<D>(coef, field, v, i, boundary, d);
    double t = 1.0 + (static_cast<double>(val) - lo) * scale;
    const double top = static_cast<double>(bins - 2);
    const bool inside = t >= 1.0 && t <= top;
    if (!inside) t = t < 1.0 ? 1.0 : top;
    tm[i] = t;
    if (dtm) {
#pragma unroll
      for (int a = 0; a < D; ++a)
        dtm[i * D + a] = inside ? static_cast<float>(scale * d[a + 3 - D]) : 0.0f;
    }
    double ff, fm, wf[4], wm[4];
    const int i0 = window(fixed_t[i], bins, &ff);
    const int k0 = window(t, bins, &fm);
    window_weights(ff, wf);
    window_weights(fm, wm);
    unsigned long long* h = kShared ? shared_hist : hist;
#pragma unroll
    for (int a = 0; a < 4; ++a)
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        const unsigned long long q = __double2ull_rn(wf[a] * wm[b] * kFixedOne);
        if (q) atomicAdd(h + (i0 + a) * bins + (k0 + b), q);
      }
  }
  if (kShared) {
    __syncthreads();
    for (int j = threadIdx.x; j < cells; j += kThreads)
      if (shared_hist[j]) atomicAdd(hist + j, shared_hist[j]);
  }
}

// Per voxel: g = scale sum_{i,k} wf_i dwm_k G(i,k) dt_M / du (scale = -1 / N).
template <int D>
__global__ void __launch_bounds__(kThreads)
    nmi_gradient_kernel(const double* __restrict__ fixed_t, const double* __restrict__ tm,
                        const float* __restrict__ dtm, const double* __restrict__ table, int bins,
                        long long voxels, double scale, float* __restrict__ g) {
  const long long i = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= voxels) return;
  double ff, fm, wf[4], dwm[4];
  const int i0 = window(fixed_t[i], bins, &ff);
  const int k0 = window(tm[i], bins, &fm);
  window_weights(ff, wf);
  window_derivatives(fm, dwm);
  double sum = 0.0;
#pragma unroll
  for (int a = 0; a < 4; ++a) {
    const double* gr = table + (i0 + a) * bins + k0;
    double s = 0.0;
#pragma unroll
    for (int b = 0; b < 4; ++b) s += dwm[b] * gr[b];
    sum += wf[a] * s;
  }
  const double c = scale * sum;
#pragma unroll
  for (int a = 0; a < D; ++a)
    g[i * D + a] = static_cast<float>(c * static_cast<double>(dtm[i * D + a]));
}

}  // namespace

// The level (coefficients, field, adjoint) and the NMI objective's own state.
struct FfdNmiObjective::Impl : reg::Level {
  using Level::Level;
  double weight = 0;
  int bins = 64;
  NmiIntensityMap fixed_map, moving_map;
  DeviceBuffer fixed_t, tm, dtm, hist, table;
  mutable std::vector<float> host_grid, host_gradient;
  mutable std::vector<unsigned long long> host_hist;

  double run(const Array<double>& grid, Array<double>* gradient, NmiValue* value,
             FfdStageTimes* times);
};

FfdNmiObjective::FfdNmiObjective(const ArrayF& fixed, const ArrayF& moving,
                                 std::vector<int> spacing, double bending_weight, int bins,
                                 Boundary boundary, FfdKernel kernel) {
  std::vector<std::size_t> gshape =
      sv::check_ffd_objective(fixed, moving, spacing, bending_weight, boundary);
  check_nmi_bins(bins);
  const std::string what = std::string("CUDA NMI registration (") + ffd_kernel_name(kernel) + ")";
  if (fixed.points() >= (std::size_t{1} << 31))
    throw Error(what + ": the images have " + std::to_string(fixed.points()) +
                " voxels; the integer joint histogram takes at most 2^31 - 1");
  impl_ = std::make_unique<Impl>(fixed, moving, std::move(gshape), std::move(spacing), boundary,
                                 kernel, what);
  Impl& m = *impl_;
  m.weight = bending_weight;
  m.bins = bins;
  m.fixed_map = nmi_intensity_map(fixed, bins);
  m.moving_map = nmi_intensity_map(moving, bins);
  const std::size_t N = fixed.points(), R = m.R;
  const std::size_t gp = static_cast<std::size_t>(m.v.m[0]) * m.v.m[1] * m.v.m[2];

  std::vector<double> ft(N);
  for (std::size_t i = 0; i < N; ++i) ft[i] = m.fixed_map.coordinate(static_cast<double>(fixed[i]));
  m.fixed_t = DeviceBuffer(N * 2);
  m.fixed_t.upload(reinterpret_cast<const float*>(ft.data()), N * 2);
  m.tm = DeviceBuffer(N * 2);
  m.dtm = DeviceBuffer(N * R);
  const std::size_t cells = static_cast<std::size_t>(bins) * bins;
  m.hist = DeviceBuffer(cells * 2);
  m.table = DeviceBuffer(cells * 2);
  m.host_hist.resize(cells);
  m.host_grid.resize(gp * R);
  synchronize(what.c_str());
}

FfdNmiObjective::~FfdNmiObjective() = default;

const std::vector<std::size_t>& FfdNmiObjective::grid_shape() const {
  return impl_->grid_shape;
}

FfdKernel FfdNmiObjective::kernel() const {
  return impl_->kernel;
}

double FfdNmiObjective::Impl::run(const Array<double>& grid_in, Array<double>* gradient,
                                  NmiValue* value, FfdStageTimes* times) {
  Impl& m = *this;
  sv::check_ffd_objective_grid(grid_in, m.spacing, m.image_shape, m.grid_shape);

  // 1. The field.
  auto t0 = Clock::now();
  for (std::size_t i = 0; i < grid_in.size(); ++i) m.host_grid[i] = static_cast<float>(grid_in[i]);
  m.grid.upload(m.host_grid.data(), m.host_grid.size());
  m.evaluate_field();
  m.stage_end(times ? &times->field : nullptr, t0);

  // 2. The warp and the joint histogram, NMI on the host.
  t0 = Clock::now();
  const bool want_grad = gradient != nullptr;
  const int B = m.bins;
  const std::size_t cells = static_cast<std::size_t>(B) * B;
  check(cudaMemset(m.hist.data(), 0, cells * sizeof(unsigned long long)),
        (m.what + ": clearing the histogram").c_str());
  const unsigned blocks = reg::blocks_for(m.voxels, m.what.c_str());
  const bool shared = B <= kSharedBins;
  const std::size_t shared_bytes = shared ? cells * sizeof(unsigned long long) : 0;
  float* dtm = want_grad ? m.dtm.data() : nullptr;
  auto* hist = as<unsigned long long>(m.hist);
  const double lo = m.moving_map.lo, scale = m.moving_map.scale;
#define SV_HISTOGRAM(D, S)                                                                        \
  histogram_kernel<D, S><<<blocks, kThreads, shared_bytes>>>(                                     \
      m.coef.data(), m.field.data(), as<double>(m.fixed_t), m.v, m.voxels, m.boundary, lo, scale, \
      B, as<double>(m.tm), dtm, hist)
  if (m.R == 3) {
    if (shared)
      SV_HISTOGRAM(3, true);
    else
      SV_HISTOGRAM(3, false);
  } else {
    if (shared)
      SV_HISTOGRAM(2, true);
    else
      SV_HISTOGRAM(2, false);
  }
#undef SV_HISTOGRAM
  check_launch((m.what + ": launching the histogram").c_str());
  check(cudaMemcpy(m.host_hist.data(), hist, cells * sizeof(unsigned long long),
                   cudaMemcpyDeviceToHost),
        (m.what + ": reading the histogram").c_str());
  std::vector<double> joint(cells);
  for (std::size_t c = 0; c < cells; ++c)
    joint[c] = static_cast<double>(m.host_hist[c]) / kFixedOne;
  std::vector<double> table;
  const NmiValue nv =
      nmi_from_histogram(joint, B, static_cast<double>(m.voxels), want_grad ? &table : nullptr);
  if (value) *value = nv;
  if (times) times->warp += seconds_since(t0);

  // 3. The gradient: per voxel, then the adjoint x, y, z (2-D: x and y).
  if (want_grad) {
    t0 = Clock::now();
    m.table.upload(reinterpret_cast<const float*>(table.data()), cells * 2);
    const double gscale = -1.0 / static_cast<double>(m.voxels);
    if (m.R == 3)
      nmi_gradient_kernel<3><<<blocks, kThreads>>>(as<double>(m.fixed_t), as<double>(m.tm),
                                                   m.dtm.data(), as<double>(m.table), B, m.voxels,
                                                   gscale, m.g.data());
    else
      nmi_gradient_kernel<2><<<blocks, kThreads>>>(as<double>(m.fixed_t), as<double>(m.tm),
                                                   m.dtm.data(), as<double>(m.table), B, m.voxels,
                                                   gscale, m.g.data());
    check_launch((m.what + ": launching the per-voxel gradient").c_str());
    m.adjoint();
    m.host_gradient.resize(grid_in.size());
    m.C.download(m.host_gradient.data(), grid_in.size());
    *gradient = Array<double>(grid_in.dims(), m.R);
    for (std::size_t i = 0; i < grid_in.size(); ++i)
      (*gradient)[i] = static_cast<double>(m.host_gradient[i]);
    if (times) times->gradient += seconds_since(t0);
  }
  return 2.0 - nv.nmi;
}

double FfdNmiObjective::evaluate(const Array<double>& grid, Array<double>* gradient,
                                 double* similarity, double* energy_out,
                                 FfdStageTimes* times) const {
  Impl& m = *impl_;
  const double term = m.run(grid, gradient, nullptr, times);
  const auto t0 = Clock::now();
  double energy = 0;
  if (m.weight > 0 || energy_out) {
    Array<double> ge;
    const bool want = gradient != nullptr && m.weight > 0;
    energy = ffd_bending_energy(grid, m.spacing, want ? &ge : nullptr);
    if (want)
      for (std::size_t i = 0; i < ge.size(); ++i) (*gradient)[i] += m.weight * ge[i];
  }
  if (times) times->regulariser += seconds_since(t0);
  if (similarity) *similarity = term;
  if (energy_out) *energy_out = energy;
  return term + m.weight * energy;
}

NmiValue FfdNmiObjective::nmi(const Array<double>& grid) const {
  NmiValue v;
  impl_->run(grid, nullptr, &v, nullptr);
  return v;
}

}  // namespace sv::cuda
