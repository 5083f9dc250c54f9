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
#include "splineview/cuda_registration_nmi.h"
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
  __shared__ double warp_sums[kThreads / 32];
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
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) e += __shfl_down_sync(0xffffffffu, e, off);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = e;
  __syncthreads();
  if (threadIdx.x == 0) {
    double s = 0.0;
    for (int j = 0; j < kThreads / 32; ++j) s += warp_sums[j];
    partial[blockIdx.x] = s;
  }
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
  // The regulariser: the grid and the gradient in double, the Gram matrices (gram_at[axis][order]
  // into `gram`), the six pass buffers (X0, X1, X2, A, B, Cm) and the energy's block sums.
  DeviceBuffer grid_d, grad_d, gram, bend, bend_partial;
  std::size_t gram_at[3][3] = {};
  double volume = 1;
  long long values = 0, bend_blocks = 0;
  std::unique_ptr<FfdEvaluator> evaluator;
  long long blocks = 0;
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
  FfdGrid eg = fg;
  eg.points = m.grid.data();
  m.evaluator = std::make_unique<FfdEvaluator>(eg);
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
  const long long n = m.values;
  const unsigned nblocks = blocks_for(n, what.c_str());
  auto stage_end = [&](double* slot, Clock::time_point t0) {
    if (!times) return;
    synchronize(what.c_str());
    *slot += seconds_since(t0);
  };

  // 1. The field: the double grid uploaded (the regulariser's input), rounded to float on the
  // device (the field kernels' input).
  auto t0 = Clock::now();
  check(cudaMemcpy(as_double(m.grid_d), grid.data(), grid.size() * sizeof(double),
                   cudaMemcpyHostToDevice),
        (what + ": uploading the control grid").c_str());
  narrow_kernel<<<nblocks, kThreads>>>(as_double(m.grid_d), n, m.grid.data());
  check_launch((what + ": launching the grid's rounding").c_str());
  if (m.kernel == FfdKernel::Texture) m.evaluator->refresh_texture(nullptr);
  m.evaluator->run(m.kernel, m.field.data(), nullptr);
  stage_end(times ? &times->field : nullptr, t0);

  // 2. The warp: residuals, SSD (total[0]), per-voxel gradients.
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
  stage_end(times ? &times->warp : nullptr, t0);

  // 3. The adjoint: x, then y, then z (2-D: x and y), into C (float).
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
    stage_end(times ? &times->gradient : nullptr, t0);
  }

  // 4. The regulariser on the device (double): the energy into total[1]; the gradient
  // C + w dE/dc into grad_d. Without the energy, the gradient is C widened to double.
  t0 = Clock::now();
  const bool want_energy = m.weight > 0 || energy_out;
  double* grad_d = as_double(m.grad_d);
  if (want_energy) {
    double* X = as_double(m.bend);
    const double* Gb = as_double(m.gram);
    auto G = [&](int axis, int order) { return Gb + m.gram_at[axis][order]; };
    const int three = R == 3;
    const long long row = static_cast<long long>(m.v.m[2]) * static_cast<long long>(R);
    const long long plane = row * m.v.m[1];
    bend_x_kernel<<<nblocks, kThreads>>>(as_double(m.grid_d), G(2, 0), G(2, 1), G(2, 2), m.v.m[2],
                                         static_cast<int>(R), n, X, X + n, X + 2 * n);
    check_launch((what + ": launching the bending energy along x").c_str());
    double* Y = X + 3 * n;
    bend_y_kernel<<<nblocks, kThreads>>>(X, X + n, X + 2 * n, G(1, 0), G(1, 1), G(1, 2), m.v.m[1],
                                         row, n, three, Y, Y + n, Y + 2 * n);
    check_launch((what + ": launching the bending energy along y").c_str());
    const double coef = want_grad ? 2.0 * m.weight / m.volume : 0.0;
    bend_z_kernel<<<nblocks, kThreads>>>(as_double(m.grid_d), Y, Y + n, Y + 2 * n,
                                         three ? G(0, 0) : nullptr, three ? G(0, 1) : nullptr,
                                         three ? G(0, 2) : nullptr, m.v.m[0], plane, n, three,
                                         want_grad ? m.C.data() : nullptr, coef,
                                         want_grad ? grad_d : nullptr, as_double(m.bend_partial));
    check_launch((what + ": launching the bending energy along z").c_str());
    reduce_kernel<<<1, kReduceThreads>>>(as_double(m.bend_partial), m.bend_blocks,
                                         as_double(m.total) + 1);
    check_launch((what + ": launching the energy's reduction").c_str());
  } else if (want_grad) {
    widen_kernel<<<nblocks, kThreads>>>(m.C.data(), n, grad_d);
    check_launch((what + ": launching the gradient's widening").c_str());
  }
  stage_end(times ? &times->regulariser : nullptr, t0);

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

FfdRegistrationResult register_ffd(const ArrayF& fixed, const ArrayF& moving,
                                   const FfdRegistrationOptions& options, FfdKernel kernel) {
  return sv::register_ffd<float>(
      fixed, moving, options,
      [kernel](const ArrayF& f, const ArrayF& mv, const std::vector<int>& spacing,
               const FfdRegistrationOptions& o) -> std::unique_ptr<sv::FfdObjective> {
        if (o.metric == FfdMetric::Nmi)
          return std::make_unique<FfdNmiObjective>(f, mv, spacing, o.bending_weight, o.bins,
                                                   o.boundary, kernel);
        return std::make_unique<FfdSsdObjective>(f, mv, spacing, o.bending_weight, o.boundary,
                                                 kernel);
      });
}

}  // namespace sv::cuda
