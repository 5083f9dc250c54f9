// FFD registration on the GPU (cuda_registration.h): the SSD objective's field (FfdEvaluator),
// the fused warp / residual / per-voxel gradient kernel, the deterministic SSD reduction and the
// three adjoint passes; the optimiser is sv::register_ffd's (lib/src/registration.cpp).
//
// Layout: a 2-D problem is one z slice (N_z = 1) of the 3-D view, as in the CPU objective; the
// per-voxel gradient g has R components per voxel (array axis order), like the grid.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "boundary.cuh"
#include "check.cuh"
#include "cubic_weights.cuh"
#include "splineview/bspline.h"
#include "splineview/cuda_memory.h"
#include "splineview/cuda_prefilter.h"
#include "splineview/cuda_registration.h"
#include "splineview/ffd.h"

namespace sv::cuda {
namespace {

using detail::check;
using detail::check_launch;
using Clock = std::chrono::steady_clock;

constexpr int kThreads = 256;
constexpr int kReduceThreads = 1024;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct View {
  int n[3];          // image extents (z, y, x); 2-D: n[0] = 1
  int m[3];          // grid extents
  int d[3];          // spacing
  long long stride;  // n[1] * n[2]
};

// Derivatives of the cubic B-spline weights of cubic_weights() at the fraction a: d w_k / d a.
__device__ __forceinline__ void cubic_derivative_weights(float a, float w[4]) {
  const float b = 1.0f - a;
  w[0] = -0.5f * b * b;
  w[3] = 0.5f * a * a;
  w[1] = a * fmaf(1.5f, a, -2.0f);  // 3/2 a^2 - 2 a
  w[2] = -((w[0] + w[1]) + w[3]);   // the derivatives sum to 0
}

// Per voxel: M and grad M at x + u(x) from the moving image's coefficients, r = M - F, the
// block's sum of r^2 (double, fixed order) into partial[block], and g = scale r grad M when
// `grad` is not null. D = 2 or 3 (components of u and g).
template <int D>
__global__ void __launch_bounds__(kThreads)
    warp_kernel(const float* __restrict__ coef, const float* __restrict__ fixed,
                const float* __restrict__ field, const View v, long long voxels, int boundary,
                float scale, float* __restrict__ grad, double* __restrict__ partial) {
  __shared__ double warp_sums[kThreads / 32];
  const long long i = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
  double sq = 0.0;
  if (i < voxels) {
    const long long row = i / v.n[2];
    int pos[3];
    pos[2] = static_cast<int>(i - row * v.n[2]);
    pos[0] = static_cast<int>(row / v.n[1]);
    pos[1] = static_cast<int>(row - static_cast<long long>(pos[0]) * v.n[1]);
    constexpr int first = 3 - D;  // the first real axis of the 3-D view
    float w[3][4], dw[3][4];
    long long k[3][4];
    const long long stride[3] = {v.stride, v.n[2], 1};
#pragma unroll
    for (int a = first; a < 3; ++a) {
      // x + u split as integer + fraction without rounding: u - floor(u) is exact in float.
      const float u = field[i * D + (a - first)];
      const float fl = floorf(u);
      const float t = u - fl;
      const int base = pos[a] + static_cast<int>(fl) - 1;
      cubic_weights(t, w[a]);
      cubic_derivative_weights(t, dw[a]);
#pragma unroll
      for (int j = 0; j < 4; ++j)
        k[a][j] = static_cast<long long>(detail::extend(base + j, v.n[a], boundary)) * stride[a];
    }
    if (D == 2) {
      w[0][0] = 1.0f;
      dw[0][0] = 0.0f;
      k[0][0] = 0;
    }
    constexpr int L = D == 3 ? 4 : 1;
    float val = 0.0f, d0 = 0.0f, d1 = 0.0f, d2 = 0.0f;
#pragma unroll
    for (int l = 0; l < L; ++l) {
      float pv = 0.0f, p1 = 0.0f, p2 = 0.0f;
#pragma unroll
      for (int m = 0; m < 4; ++m) {
        const float* cr = coef + k[0][l] + k[1][m];
        float s = 0.0f, sd = 0.0f;
#pragma unroll
        for (int n = 0; n < 4; ++n) {
          const float c = __ldg(cr + k[2][n]);
          s = fmaf(w[2][n], c, s);
          sd = fmaf(dw[2][n], c, sd);
        }
        pv = fmaf(w[1][m], s, pv);
        p2 = fmaf(w[1][m], sd, p2);
        p1 = fmaf(dw[1][m], s, p1);
      }
      val = fmaf(w[0][l], pv, val);
      d2 = fmaf(w[0][l], p2, d2);
      d1 = fmaf(w[0][l], p1, d1);
      d0 = fmaf(dw[0][l], pv, d0);
    }
    const float r = val - fixed[i];
    sq = static_cast<double>(r) * static_cast<double>(r);
    if (grad) {
      const float sr = scale * r;
      if (D == 3) {
        grad[i * 3 + 0] = sr * d0;
        grad[i * 3 + 1] = sr * d1;
        grad[i * 3 + 2] = sr * d2;
      } else {
        grad[i * 2 + 0] = sr * d1;
        grad[i * 2 + 1] = sr * d2;
      }
    }
  }
  // The block's sum: lanes by shuffles (a fixed tree), then the warps in order.
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) sq += __shfl_down_sync(0xffffffffu, sq, off);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = sq;
  __syncthreads();
  if (threadIdx.x == 0) {
    double s = 0.0;
    for (int j = 0; j < kThreads / 32; ++j) s += warp_sums[j];
    partial[blockIdx.x] = s;
  }
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

// The B-spline weight of control point `k` at voxel `x` of an axis with spacing d: x lies in
// tile t = x / d at offset r, and uses points t .. t + 3 with the weights of r / d (rows[r * 4 +
// k - t], double, from the host).
//
// Pass x: A[row][kx][c] = sum_x g[row][x][c] w(x, kx), x over the 4 tiles kx - 3 .. kx.
__global__ void __launch_bounds__(kThreads)
    adjoint_x_kernel(const float* __restrict__ g, const double* __restrict__ wx, int R,
                     long long rows, int nx, int mx, int dx, float* __restrict__ A) {
  const long long i = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= rows * mx) return;
  const long long row = i / mx;
  const int kx = static_cast<int>(i - row * mx);
  const int x0 = max(0, (kx - 3) * dx), x1 = min(nx, (kx + 1) * dx);
  double acc[3] = {0.0, 0.0, 0.0};
  const float* gr = g + row * nx * R;
  for (int x = x0; x < x1; ++x) {
    const int t = x / dx;
    const double w = wx[(x - t * dx) * 4 + (kx - t)];
    for (int c = 0; c < R; ++c) acc[c] += w * static_cast<double>(gr[x * R + c]);
  }
  for (int c = 0; c < R; ++c) A[i * R + c] = static_cast<float>(acc[c]);
}

// Pass y (and z): out[outer][k][e] = sum_y in[outer][y][e] w(y, k), e over `inner` floats (the
// control-point columns of a row, or of a plane), y over the 4 tiles k - 3 .. k. Consecutive
// threads take consecutive e (coalesced).
__global__ void __launch_bounds__(kThreads)
    adjoint_axis_kernel(const float* __restrict__ in, const double* __restrict__ wy,
                        long long outer, int ny, int my, int dy, long long inner,
                        float* __restrict__ out) {
  const long long i = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= outer * my * inner) return;
  const long long e = i % inner;
  const long long rest = i / inner;
  const int ky = static_cast<int>(rest % my);
  const long long o = rest / my;
  const int y0 = max(0, (ky - 3) * dy), y1 = min(ny, (ky + 1) * dy);
  double acc = 0.0;
  const float* base = in + o * ny * inner + e;
  for (int y = y0; y < y1; ++y) {
    const int t = y / dy;
    acc += wy[(y - t * dy) * 4 + (ky - t)] * static_cast<double>(base[y * inner]);
  }
  out[i] = static_cast<float>(acc);
}

unsigned blocks_for(long long count, const char* what) {
  const long long b = (count + kThreads - 1) / kThreads;
  if (b > 0x7fffffffLL) throw Error(std::string(what) + ": too many voxels for one launch");
  return static_cast<unsigned>(std::max<long long>(b, 1));
}

// A device buffer of doubles (DeviceBuffer holds floats; cudaMalloc aligns to 256 bytes).
double* as_double(DeviceBuffer& b) {
  return reinterpret_cast<double*>(b.data());
}

}  // namespace

struct FfdSsdObjective::Impl {
  std::size_t R = 0;
  View v{};
  long long voxels = 0;
  std::vector<std::size_t> image_shape, grid_shape;
  std::vector<int> spacing;
  double weight = 0;
  int boundary = 0;
  FfdKernel kernel = FfdKernel::ThreadPerTileFma;
  DeviceBuffer fixed, coef, grid, field, g, A, B, C, weights[3], partial, total;
  std::unique_ptr<FfdEvaluator> evaluator;
  long long blocks = 0;
  mutable std::vector<float> host_grid, host_gradient;
};

FfdSsdObjective::FfdSsdObjective(const ArrayF& fixed, const ArrayF& moving,
                                 std::vector<int> spacing, double bending_weight, Boundary boundary,
                                 FfdKernel kernel) {
  const std::vector<std::size_t> gshape =
      sv::check_ffd_objective(fixed, moving, spacing, bending_weight, boundary);
  const std::string what = std::string("CUDA registration (") + ffd_kernel_name(kernel) + ")";
  FfdGrid fg;
  fg.dims = gshape;
  fg.delta = spacing;
  fg.image_shape = fixed.dims();
  fg.points = reinterpret_cast<const float*>(&fg);  // checked for presence only, replaced below
  check_ffd_arguments(fg, kernel, what.c_str());
  require(what.c_str());

  impl_ = std::make_unique<Impl>();
  Impl& m = *impl_;
  m.R = fixed.rank();
  m.image_shape = fixed.dims();
  m.grid_shape = gshape;
  m.spacing = std::move(spacing);
  m.weight = bending_weight;
  m.boundary = detail::boundary_code(boundary);
  m.kernel = kernel;
  const std::size_t off = 3 - m.R;
  for (int a = 0; a < 3; ++a) {
    const bool real = static_cast<std::size_t>(a) >= off;
    m.v.n[a] = real ? static_cast<int>(m.image_shape[a - off]) : 1;
    m.v.m[a] = real ? static_cast<int>(m.grid_shape[a - off]) : 1;
    m.v.d[a] = real ? m.spacing[a - off] : 1;
  }
  m.v.stride = static_cast<long long>(m.v.n[1]) * m.v.n[2];
  m.voxels = static_cast<long long>(fixed.points());
  const std::size_t N = fixed.points(), R = m.R;
  const std::size_t gp = static_cast<std::size_t>(m.v.m[0]) * m.v.m[1] * m.v.m[2];

  m.fixed = DeviceBuffer(N);
  m.fixed.upload(fixed.data(), N);
  m.coef = DeviceBuffer(N);
  m.coef.upload(moving.data(), N);
  PrefilterConfig pc;
  pc.degree = 3;
  pc.boundary = boundary;
  prefilter(m.coef.data(), Layout{m.image_shape, 1}, pc);
  m.grid = DeviceBuffer(gp * R);
  m.field = DeviceBuffer(N * R);
  m.g = DeviceBuffer(N * R);
  const std::size_t rows = static_cast<std::size_t>(m.v.n[0]) * m.v.n[1];
  m.A = DeviceBuffer(rows * m.v.m[2] * R);
  m.B = DeviceBuffer(static_cast<std::size_t>(m.v.n[0]) * m.v.m[1] * m.v.m[2] * R);
  m.C = DeviceBuffer(gp * R);
  for (int a = 0; a < 3; ++a) {
    std::vector<double> rows_w(static_cast<std::size_t>(m.v.d[a]) * 4);
    for (int r = 0; r < m.v.d[a]; ++r)
      bspline_weights_frac<double>(3, static_cast<double>(r) / m.v.d[a], rows_w.data() + r * 4, 0);
    m.weights[a] = DeviceBuffer(rows_w.size() * 2);
    m.weights[a].upload(reinterpret_cast<const float*>(rows_w.data()), rows_w.size() * 2);
  }
  m.blocks = (m.voxels + kThreads - 1) / kThreads;
  m.partial = DeviceBuffer(static_cast<std::size_t>(m.blocks) * 2);
  m.total = DeviceBuffer(2);
  FfdGrid eg = fg;
  eg.points = m.grid.data();
  m.evaluator = std::make_unique<FfdEvaluator>(eg);
  m.host_grid.resize(gp * R);
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
  const std::string what = std::string("CUDA registration (") + ffd_kernel_name(m.kernel) + ")";
  const std::size_t R = m.R;
  auto stage_end = [&](double* slot, Clock::time_point t0) {
    if (!times) return;
    synchronize(what.c_str());
    *slot += seconds_since(t0);
  };

  // 1. The field.
  auto t0 = Clock::now();
  for (std::size_t i = 0; i < grid.size(); ++i) m.host_grid[i] = static_cast<float>(grid[i]);
  m.grid.upload(m.host_grid.data(), m.host_grid.size());
  if (m.kernel == FfdKernel::Texture) m.evaluator->refresh_texture(nullptr);
  m.evaluator->run(m.kernel, m.field.data(), nullptr);
  stage_end(times ? &times->field : nullptr, t0);

  // 2. The warp: residuals, SSD, per-voxel gradients.
  t0 = Clock::now();
  const bool want_grad = gradient != nullptr;
  const float scale = static_cast<float>(2.0 / static_cast<double>(m.voxels));
  const unsigned blocks = static_cast<unsigned>(m.blocks);
  if (R == 3)
    warp_kernel<3><<<blocks, kThreads>>>(m.coef.data(), m.fixed.data(), m.field.data(), m.v,
                                         m.voxels, m.boundary, scale,
                                         want_grad ? m.g.data() : nullptr, as_double(m.partial));
  else
    warp_kernel<2><<<blocks, kThreads>>>(m.coef.data(), m.fixed.data(), m.field.data(), m.v,
                                         m.voxels, m.boundary, scale,
                                         want_grad ? m.g.data() : nullptr, as_double(m.partial));
  check_launch((what + ": launching the warp").c_str());
  reduce_kernel<<<1, kReduceThreads>>>(as_double(m.partial), m.blocks, as_double(m.total));
  check_launch((what + ": launching the reduction").c_str());
  double ssd = 0;
  check(cudaMemcpy(&ssd, m.total.data(), sizeof(double), cudaMemcpyDeviceToHost),
        (what + ": reading the SSD").c_str());
  ssd /= static_cast<double>(m.voxels);
  if (times) times->warp += seconds_since(t0);

  // 3. The adjoint: x, then y, then z (2-D: x and y).
  if (want_grad) {
    t0 = Clock::now();
    const int Ri = static_cast<int>(R);
    const long long rows = static_cast<long long>(m.v.n[0]) * m.v.n[1];
    adjoint_x_kernel<<<blocks_for(rows * m.v.m[2], what.c_str()), kThreads>>>(
        m.g.data(), as_double(m.weights[2]), Ri, rows, m.v.n[2], m.v.m[2], m.v.d[2], m.A.data());
    check_launch((what + ": launching the adjoint along x").c_str());
    const long long row_floats = static_cast<long long>(m.v.m[2]) * Ri;
    float* yout = R == 3 ? m.B.data() : m.C.data();
    adjoint_axis_kernel<<<blocks_for(m.v.n[0] * m.v.m[1] * row_floats, what.c_str()), kThreads>>>(
        m.A.data(), as_double(m.weights[1]), m.v.n[0], m.v.n[1], m.v.m[1], m.v.d[1], row_floats,
        yout);
    check_launch((what + ": launching the adjoint along y").c_str());
    if (R == 3) {
      const long long plane = static_cast<long long>(m.v.m[1]) * row_floats;
      adjoint_axis_kernel<<<blocks_for(m.v.m[0] * plane, what.c_str()), kThreads>>>(
          m.B.data(), as_double(m.weights[0]), 1, m.v.n[0], m.v.m[0], m.v.d[0], plane, m.C.data());
      check_launch((what + ": launching the adjoint along z").c_str());
    }
    m.host_gradient.resize(grid.size());
    m.C.download(m.host_gradient.data(), grid.size());
    *gradient = Array<double>(grid.dims(), R);
    for (std::size_t i = 0; i < grid.size(); ++i)
      (*gradient)[i] = static_cast<double>(m.host_gradient[i]);
    if (times) times->gradient += seconds_since(t0);
  }

  // 4. The regulariser (host, double).
  t0 = Clock::now();
  double energy = 0;
  if (m.weight > 0 || energy_out) {
    Array<double> ge;
    energy = ffd_bending_energy(grid, m.spacing, want_grad && m.weight > 0 ? &ge : nullptr);
    if (want_grad && m.weight > 0)
      for (std::size_t i = 0; i < ge.size(); ++i) (*gradient)[i] += m.weight * ge[i];
  }
  if (times) times->regulariser += seconds_since(t0);
  if (ssd_out) *ssd_out = ssd;
  if (energy_out) *energy_out = energy;
  return ssd + m.weight * energy;
}

FfdRegistrationResult register_ffd(const ArrayF& fixed, const ArrayF& moving,
                                   const FfdRegistrationOptions& options, FfdKernel kernel) {
  return sv::register_ffd<float>(
      fixed, moving, options,
      [kernel](const ArrayF& f, const ArrayF& mv, const std::vector<int>& spacing,
               const FfdRegistrationOptions& o) -> std::unique_ptr<sv::FfdObjective> {
        return std::make_unique<FfdSsdObjective>(f, mv, spacing, o.bending_weight, o.boundary,
                                                 kernel);
      });
}

}  // namespace sv::cuda
