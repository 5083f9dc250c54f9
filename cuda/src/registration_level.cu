// One level of a GPU registration objective (registration_level.h): set-up, field and the
// adjoint's gather passes (double accumulation, no atomics: deterministic), shared by the SSD
// (registration.cu) and NMI (registration_nmi.cu) objectives.
#include <cuda_runtime.h>

#include <string>
#include <utility>
#include <vector>

#include "boundary.cuh"
#include "check.cuh"
#include "registration_level.h"
#include "splineview/cuda_prefilter.h"

namespace sv::cuda::reg {
namespace {

using detail::check_launch;

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

}  // namespace

Level::Level(const ArrayF& fixed, const ArrayF& moving, std::vector<std::size_t> grid_shape_in,
             std::vector<int> spacing_in, Boundary boundary_in, FfdKernel kernel_in,
             std::string what_in)
    : R(fixed.rank()),
      voxels(static_cast<long long>(fixed.points())),
      image_shape(fixed.dims()),
      grid_shape(std::move(grid_shape_in)),
      spacing(std::move(spacing_in)),
      boundary(detail::boundary_code(boundary_in)),
      kernel(kernel_in),
      what(std::move(what_in)) {
  FfdGrid fg;
  fg.dims = grid_shape;
  fg.delta = spacing;
  fg.image_shape = image_shape;
  fg.points = reinterpret_cast<const float*>(&fg);  // checked for presence only, replaced below
  check_ffd_arguments(fg, kernel, what.c_str());
  require(what.c_str());

  const std::size_t off = 3 - R;
  for (int a = 0; a < 3; ++a) {
    const bool real = static_cast<std::size_t>(a) >= off;
    v.n[a] = real ? static_cast<int>(image_shape[a - off]) : 1;
    v.m[a] = real ? static_cast<int>(grid_shape[a - off]) : 1;
    v.d[a] = real ? spacing[a - off] : 1;
  }
  v.stride = static_cast<long long>(v.n[1]) * v.n[2];
  const std::size_t N = fixed.points();
  const std::size_t gp = static_cast<std::size_t>(v.m[0]) * v.m[1] * v.m[2];

  coef = DeviceBuffer(N);
  coef.upload(moving.data(), N);
  PrefilterConfig pc;
  pc.degree = 3;
  pc.boundary = boundary_in;
  prefilter(coef.data(), Layout{image_shape, 1}, pc);
  grid = DeviceBuffer(gp * R);
  field = DeviceBuffer(N * R);
  g = DeviceBuffer(N * R);
  const std::size_t rows = static_cast<std::size_t>(v.n[0]) * v.n[1];
  A = DeviceBuffer(rows * v.m[2] * R);
  B = DeviceBuffer(static_cast<std::size_t>(v.n[0]) * v.m[1] * v.m[2] * R);
  C = DeviceBuffer(gp * R);
  for (int a = 0; a < 3; ++a) {
    std::vector<double> rows_w(static_cast<std::size_t>(v.d[a]) * 4);
    for (int r = 0; r < v.d[a]; ++r)
      bspline_weights_frac<double>(3, static_cast<double>(r) / v.d[a], rows_w.data() + r * 4, 0);
    weights[a] = DeviceBuffer(rows_w.size() * 2);
    weights[a].upload(reinterpret_cast<const float*>(rows_w.data()), rows_w.size() * 2);
  }
  FfdGrid eg = fg;
  eg.points = grid.data();
  evaluator = std::make_unique<FfdEvaluator>(eg);
}

void Level::evaluate_field() {
  if (kernel == FfdKernel::Texture) evaluator->refresh_texture(nullptr);
  evaluator->run(kernel, field.data(), nullptr);
}

void Level::adjoint() {
  const int Ri = static_cast<int>(R);
  const long long rows = static_cast<long long>(v.n[0]) * v.n[1];
  adjoint_x_kernel<<<blocks_for(rows * v.m[2], what.c_str()), kThreads>>>(
      g.data(), as<double>(weights[2]), Ri, rows, v.n[2], v.m[2], v.d[2], A.data());
  check_launch((what + ": launching the adjoint along x").c_str());
  const long long row_floats = static_cast<long long>(v.m[2]) * Ri;
  float* yout = R == 3 ? B.data() : C.data();
  adjoint_axis_kernel<<<blocks_for(v.n[0] * v.m[1] * row_floats, what.c_str()), kThreads>>>(
      A.data(), as<double>(weights[1]), v.n[0], v.n[1], v.m[1], v.d[1], row_floats, yout);
  check_launch((what + ": launching the adjoint along y").c_str());
  if (R == 3) {
    const long long plane = static_cast<long long>(v.m[1]) * row_floats;
    adjoint_axis_kernel<<<blocks_for(v.m[0] * plane, what.c_str()), kThreads>>>(
        B.data(), as<double>(weights[0]), 1, v.n[0], v.m[0], v.d[0], plane, C.data());
    check_launch((what + ": launching the adjoint along z").c_str());
  }
}

void Level::stage_end(double* slot, Clock::time_point t0) const {
  if (!slot) return;
  synchronize(what.c_str());
  *slot += seconds_since(t0);
}

}  // namespace sv::cuda::reg
