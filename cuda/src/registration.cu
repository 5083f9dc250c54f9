// FFD registration on the GPU (cuda_registration.h): the SSD objective's field (FfdEvaluator),
// the fused warp / residual / per-voxel gradient kernel, the deterministic SSD reduction and the
// three adjoint passes; the optimiser is sv::register_ffd's (lib/src/registration.cpp).
//
// Layout: a 2-D problem is one z slice (N_z = 1) of the 3-D view, as in the CPU objective; the
// per-voxel gradient g has R components per voxel (array axis order), like the grid. The view,
// the set-up, the field and the adjoint are the level's (registration_level.h), shared with the
// NMI objective, and so is the per-voxel spline (registration_parts.cuh).
#include <cuda_runtime.h>

#include <string>
#include <utility>
#include <vector>

#include "check.cuh"
#include "registration_level.h"
#include "registration_parts.cuh"
#include "splineview/cuda_memory.h"
#include "splineview/cuda_registration.h"
#include "splineview/ffd.h"

namespace sv::cuda {
namespace {

using detail::check;
using detail::check_launch;
using reg::as;
using reg::blocks_for;
using reg::Clock;
using reg::kThreads;
using reg::seconds_since;

constexpr int kReduceThreads = 1024;

// The block's sum of every thread's v into partial[blockIdx.x] (called by all kThreads threads):
// lanes by shuffles (a fixed tree), then the warps in order. Deterministic.
__device__ __forceinline__ void block_sum(double v, double* __restrict__ partial) {
  __shared__ double warp_sums[kThreads / 32];
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    double s = 0.0;
    for (int j = 0; j < kThreads / 32; ++j) s += warp_sums[j];
    partial[blockIdx.x] = s;
  }
}

// Per voxel: M and grad M at x + u(x) from the moving image's coefficients, r = M - F, the
// block's sum of r^2 (double, fixed order) into partial[block], and g = scale r grad M when
// `grad` is not null. D = 2 or 3 (components of u and g).
template <int D>
__global__ void __launch_bounds__(kThreads)
    warp_kernel(const float* __restrict__ coef, const float* __restrict__ fixed,
                const float* __restrict__ field, const reg::View v, long long voxels, int boundary,
                float scale, float* __restrict__ grad, double* __restrict__ partial) {
  const long long i = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
  double sq = 0.0;
  if (i < voxels) {
    float d[3];
    const float val = reg::value_gradient<D>(coef, field, v, i, boundary, d);
    const float r = val - fixed[i];
    sq = static_cast<double>(r) * static_cast<double>(r);
    if (grad) {
      const float sr = scale * r;
      if (D == 3) {
        grad[i * 3 + 0] = sr * d[0];
        grad[i * 3 + 1] = sr * d[1];
        grad[i * 3 + 2] = sr * d[2];
      } else {
        grad[i * 2 + 0] = sr * d[1];
        grad[i * 2 + 1] = sr * d[2];
      }
    }
  }
  block_sum(sq, partial);
}

// One block: the sum of `count` partials in a fixed order (strided per thread, then a tree).
__global__ void __launch_bounds__(kReduceThreads)
    reduce_kernel(const double* __restrict__ partial, long long count, double* __restrict__ out) {
  __shared__ double s[kReduceThreads];
  double acc = 0.0;
  for (long long j = threadIdx.x; j < count; j += kReduceThreads) acc += partial[j];
  s[threadIdx.x] = acc;
  __syncthreads();
  for (int h = kReduceThreads / 2; h > 0; h >>= 1) {
    if (static_cast<int>(threadIdx.x) < h) s[threadIdx.x] += s[threadIdx.x + h];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = s[0];
}

// ---- The regulariser on the device -----------------------------------------------------------
//
// ffd_bending_energy's factorisation (ffd.h), per value of the double grid (R per control point,
// x fastest), one thread each, double throughout, the 7 band taps in ascending order:
//   pass x:  X_d = G_x^(d) c along x, d = 0, 1, 2;
//   pass y:  A = G_y^(0) X0, B = G_y^(0) X2 + G_y^(2) X0 + 2 G_y^(1) X1, Cm = G_y^(1) X0 +
//            G_y^(0) X1 (the pairs grouped by their z order; in 2-D B is the whole sum);
//   pass z:  acc = G_z^(2) A + G_z^(0) B + 2 G_z^(1) Cm; the block's sum of c acc (shuffles,
//            then the warps in order) and the gradient g = adjoint + coef acc (coef = 2 w /
//            |Omega|), so the regulariser's part never leaves the device.

// acc + sum_k scale G[j][k] in[k stride], k over the band of j (the CPU's band_rows order).
__device__ __forceinline__ double band_sum(const double* __restrict__ G, int j, int m,
                                           const double* __restrict__ in, long long stride,
                                           double scale, double acc) {
  const int k0 = max(0, j - 3), k1 = min(m - 1, j + 3);
  for (int k = k0; k <= k1; ++k) acc += (scale * G[j * 7 + (k - j + 3)]) * in[k * stride];
  return acc;
}

__global__ void __launch_bounds__(kThreads)
    bend_x_kernel(const double* __restrict__ c, const double* __restrict__ G0,
                  const double* __restrict__ G1, const double* __restrict__ G2, int mx, int R,
                  long long n, double* __restrict__ X0, double* __restrict__ X1,
                  double* __restrict__ X2) {
  const long long i = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= n) return;
  const long long p = i / R;
  const int j = static_cast<int>(p % mx);
  const double* line = c + (i - static_cast<long long>(j) * R);
  X0[i] = band_sum(G0, j, mx, line, R, 1.0, 0.0);
  X1[i] = band_sum(G1, j, mx, line, R, 1.0, 0.0);
  X2[i] = band_sum(G2, j, mx, line, R, 1.0, 0.0);
}

__global__ void __launch_bounds__(kThreads)
    bend_y_kernel(const double* __restrict__ X0, const double* __restrict__ X1,
                  const double* __restrict__ X2, const double* __restrict__ G0,
                  const double* __restrict__ G1, const double* __restrict__ G2, int my,
                  long long row, long long n, int three, double* __restrict__ A,
                  double* __restrict__ B, double* __restrict__ Cm) {
  const long long i = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= n) return;
  const int y = static_cast<int>((i / row) % my);
  const long long at = i - y * row;
  double b = band_sum(G0, y, my, X2 + at, row, 1.0, 0.0);
  b = band_sum(G2, y, my, X0 + at, row, 1.0, b);
  B[i] = band_sum(G1, y, my, X1 + at, row, 2.0, b);
  if (!three) return;
  A[i] = band_sum(G0, y, my, X0 + at, row, 1.0, 0.0);
  Cm[i] = band_sum(G0, y, my, X1 + at, row, 1.0, band_sum(G1, y, my, X0 + at, row, 1.0, 0.0));
}

// The last pass; `adjoint` (float, the SSD's gradient) and `grad` may be null.
__global__ void __launch_bounds__(kThreads)
    bend_z_kernel(const double* __restrict__ c, const double* __restrict__ A,
                  const double* __restrict__ B, const double* __restrict__ Cm,
                  const double* __restrict__ G0, const double* __restrict__ G1,
                  const double* __restrict__ G2, int mz, long long plane, long long n, int three,
                  const float* __restrict__ adjoint, double coef, double* __restrict__ grad,
                  double* __restrict__ partial) {
  const long long i = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
  double e = 0.0;
  if (i < n) {
    double acc;
    if (three) {
      const int z = static_cast<int>(i / plane);
      const long long at = i - z * plane;
      acc = band_sum(G2, z, mz, A + at, plane, 1.0, 0.0);
      acc = band_sum(G0, z, mz, B + at, plane, 1.0, acc);
      acc = band_sum(G1, z, mz, Cm + at, plane, 2.0, acc);
    } else {
      acc = B[i];
    }
    e = c[i] * acc;
    if (grad) grad[i] = (adjoint ? static_cast<double>(adjoint[i]) : 0.0) + coef * acc;
  }
  block_sum(e, partial);
}

__global__ void __launch_bounds__(kThreads)
    widen_kernel(const float* __restrict__ in, long long n, double* __restrict__ out) {
  const long long i = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
  if (i < n) out[i] = static_cast<double>(in[i]);
}

__global__ void __launch_bounds__(kThreads)
    narrow_kernel(const double* __restrict__ in, long long n, float* __restrict__ out) {
  const long long i = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
  if (i < n) out[i] = static_cast<float>(in[i]);
}

}  // namespace

// The level (coefficients, field, adjoint) and the SSD objective's own buffers.
struct FfdSsdObjective::Impl : reg::Level {
  using Level::Level;
  double weight = 0;
  DeviceBuffer fixed, partial, total;
  // The regulariser: the grid and the gradient in double, the Gram matrices (gram_at[axis][order]
  // into `gram`), the six pass buffers (X0, X1, X2, A, B, Cm) and the energy's block sums.
  DeviceBuffer grid_d, grad_d, gram, bend, bend_partial;
  std::size_t gram_at[3][3] = {};
  double volume = 1;
  long long values = 0, bend_blocks = 0;
  long long blocks = 0;
};

FfdSsdObjective::FfdSsdObjective(const ArrayF& fixed, const ArrayF& moving,
                                 std::vector<int> spacing, double bending_weight, Boundary boundary,
                                 FfdKernel kernel) {
  std::vector<std::size_t> gshape =
      sv::check_ffd_objective(fixed, moving, spacing, bending_weight, boundary);
  const std::string what = std::string("CUDA registration (") + ffd_kernel_name(kernel) + ")";
  impl_ = std::make_unique<Impl>(fixed, moving, std::move(gshape), std::move(spacing), boundary,
                                 kernel, what);
  Impl& m = *impl_;
  m.weight = bending_weight;
  const std::size_t off = 3 - m.R;
  const std::size_t N = fixed.points(), R = m.R;
  const std::size_t gp = static_cast<std::size_t>(m.v.m[0]) * m.v.m[1] * m.v.m[2];

  m.fixed = DeviceBuffer(N);
  m.fixed.upload(fixed.data(), N);
  m.blocks = (m.voxels + kThreads - 1) / kThreads;
  m.partial = DeviceBuffer(static_cast<std::size_t>(m.blocks) * 2);
  m.total = DeviceBuffer(4);  // SSD, energy (double)
  m.values = static_cast<long long>(gp * R);
  const std::size_t n = gp * R;
  m.grid_d = DeviceBuffer(n * 2);
  m.grad_d = DeviceBuffer(n * 2);
  m.bend = DeviceBuffer(n * 2 * 6);
  m.bend_blocks = (m.values + kThreads - 1) / kThreads;
  m.bend_partial = DeviceBuffer(static_cast<std::size_t>(m.bend_blocks) * 2);
  std::vector<double> grams;
  for (int a = static_cast<int>(off); a < 3; ++a) {
    m.volume *= static_cast<double>(m.v.m[a] - 3) * m.v.d[a];
    for (int d = 0; d <= 2; ++d) {
      const std::vector<double> G =
          ffd_bending_gram(static_cast<std::size_t>(m.v.m[a]), m.v.d[a], d);
      m.gram_at[a][d] = grams.size();
      grams.insert(grams.end(), G.begin(), G.end());
    }
  }
  m.gram = DeviceBuffer(grams.size() * 2);
  m.gram.upload(reinterpret_cast<const float*>(grams.data()), grams.size() * 2);
  synchronize(what.c_str());
}

FfdSsdObjective::~FfdSsdObjective() = default;

const std::vector<std::size_t>& FfdSsdObjective::grid_shape() const {
  return impl_->grid_shape;
}

FfdKernel FfdSsdObjective::kernel() const {
  return impl_->kernel;
}

double FfdSsdObjective::evaluate(const Array<double>& grid, Array<double>* gradient,
                                 double* ssd_out, double* energy_out, FfdStageTimes* times) const {
  Impl& m = *impl_;
  sv::check_ffd_objective_grid(grid, m.spacing, m.image_shape, m.grid_shape);
  const std::string& what = m.what;
  const std::size_t R = m.R;
  const long long n = m.values;
  const unsigned nblocks = blocks_for(n, what.c_str());

  // 1. The field: the double grid uploaded (the regulariser's input), rounded to float on the
  // device (the field kernels' input).
  auto t0 = Clock::now();
  check(cudaMemcpy(as<double>(m.grid_d), grid.data(), grid.size() * sizeof(double),
                   cudaMemcpyHostToDevice),
        (what + ": uploading the control grid").c_str());
  narrow_kernel<<<nblocks, kThreads>>>(as<double>(m.grid_d), n, m.grid.data());
  check_launch((what + ": launching the grid's rounding").c_str());
  m.evaluate_field();
  m.stage_end(times ? &times->field : nullptr, t0);

  // 2. The warp: residuals, SSD (total[0]), per-voxel gradients.
  t0 = Clock::now();
  const bool want_grad = gradient != nullptr;
  const float scale = static_cast<float>(2.0 / static_cast<double>(m.voxels));
  const unsigned blocks = static_cast<unsigned>(m.blocks);
  if (R == 3)
    warp_kernel<3><<<blocks, kThreads>>>(m.coef.data(), m.fixed.data(), m.field.data(), m.v,
                                         m.voxels, m.boundary, scale,
                                         want_grad ? m.g.data() : nullptr, as<double>(m.partial));
  else
    warp_kernel<2><<<blocks, kThreads>>>(m.coef.data(), m.fixed.data(), m.field.data(), m.v,
                                         m.voxels, m.boundary, scale,
                                         want_grad ? m.g.data() : nullptr, as<double>(m.partial));
  check_launch((what + ": launching the warp").c_str());
  reduce_kernel<<<1, kReduceThreads>>>(as<double>(m.partial), m.blocks, as<double>(m.total));
  check_launch((what + ": launching the reduction").c_str());
  m.stage_end(times ? &times->warp : nullptr, t0);

  // 3. The adjoint: x, then y, then z (2-D: x and y), into C (float).
  if (want_grad) {
    t0 = Clock::now();
    m.adjoint();
    m.stage_end(times ? &times->gradient : nullptr, t0);
  }

  // 4. The regulariser on the device (double): the energy into total[1]; the gradient
  // C + w dE/dc into grad_d. Without the energy, the gradient is C widened to double.
  t0 = Clock::now();
  const bool want_energy = m.weight > 0 || energy_out;
  double* grad_d = as<double>(m.grad_d);
  if (want_energy) {
    double* X = as<double>(m.bend);
    const double* Gb = as<double>(m.gram);
    auto G = [&](int axis, int order) { return Gb + m.gram_at[axis][order]; };
    const int three = R == 3;
    const long long row = static_cast<long long>(m.v.m[2]) * static_cast<long long>(R);
    const long long plane = row * m.v.m[1];
    bend_x_kernel<<<nblocks, kThreads>>>(as<double>(m.grid_d), G(2, 0), G(2, 1), G(2, 2), m.v.m[2],
                                         static_cast<int>(R), n, X, X + n, X + 2 * n);
    check_launch((what + ": launching the bending energy along x").c_str());
    double* Y = X + 3 * n;
    bend_y_kernel<<<nblocks, kThreads>>>(X, X + n, X + 2 * n, G(1, 0), G(1, 1), G(1, 2), m.v.m[1],
                                         row, n, three, Y, Y + n, Y + 2 * n);
    check_launch((what + ": launching the bending energy along y").c_str());
    const double coef = want_grad ? 2.0 * m.weight / m.volume : 0.0;
    bend_z_kernel<<<nblocks, kThreads>>>(as<double>(m.grid_d), Y, Y + n, Y + 2 * n,
                                         three ? G(0, 0) : nullptr, three ? G(0, 1) : nullptr,
                                         three ? G(0, 2) : nullptr, m.v.m[0], plane, n, three,
                                         want_grad ? m.C.data() : nullptr, coef,
                                         want_grad ? grad_d : nullptr, as<double>(m.bend_partial));
    check_launch((what + ": launching the bending energy along z").c_str());
    reduce_kernel<<<1, kReduceThreads>>>(as<double>(m.bend_partial), m.bend_blocks,
                                         as<double>(m.total) + 1);
    check_launch((what + ": launching the energy's reduction").c_str());
  } else if (want_grad) {
    widen_kernel<<<nblocks, kThreads>>>(m.C.data(), n, grad_d);
    check_launch((what + ": launching the gradient's widening").c_str());
  }
  m.stage_end(times ? &times->regulariser : nullptr, t0);

  // The results: SSD and energy, and the gradient (straight into the caller's array).
  t0 = Clock::now();
  double totals[2] = {0, 0};
  check(cudaMemcpy(totals, m.total.data(), sizeof totals, cudaMemcpyDeviceToHost),
        (what + ": reading the SSD and the energy").c_str());
  if (want_grad) {
    if (gradient->dims() != grid.dims() || gradient->channels() != R)
      *gradient = Array<double>(grid.dims(), R);
    check(
        cudaMemcpy(gradient->data(), grad_d, grid.size() * sizeof(double), cudaMemcpyDeviceToHost),
        (what + ": reading the gradient").c_str());
  }
  if (times) (want_grad ? times->gradient : times->warp) += seconds_since(t0);
  const double ssd = totals[0] / static_cast<double>(m.voxels);
  const double energy = want_energy ? totals[1] / m.volume : 0.0;
  if (ssd_out) *ssd_out = ssd;
  if (energy_out) *energy_out = energy;
  return ssd + m.weight * energy;
}

}  // namespace sv::cuda
