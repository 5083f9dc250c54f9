// CUDA FFD field evaluation: the texture-hardware, per-voxel and thread-per-tile kernels of
// cuda_ffd.h, and FfdEvaluator (the grid kept in a texture for the Texture kernel).
//
// Common ground. Voxel k of an axis lies in tile k / delta and uses control points
// tile .. tile + 3 (array indices) with the cubic B-spline weights of u = (k mod delta) / delta.
// The kernels differ in where the weights come from, how the 64 control points reach the
// arithmetic and how the sum is arranged:
//
// - Texture (P4's TH, Sigg and Hadwiger's trick): per axis the float weights w0..w3 of u, the
//   pair (c0, c1) read as one filtered fetch at texel coordinate tile + 0.5 + w1 / (w0 + w1), the
//   pair (c2, c3) at tile + 2.5 + w3 / (w2 + w3), blended as lo + g1 (hi - lo), g1 = w2 + w3.
//   Eight trilinear fetches of a float4 texture (the 3 components and a pad) per voxel. The
//   hardware rounds each fetch's fractional weights to 8 bits (1/256).
// - PerVoxel (NiftyReg's GPU kernel): a thread per voxel (linear index, x fastest), weights of
//   each axis in float from u = r / delta (cubic_weights.cuh, as reconstruct.cu), 64 taps x 3
//   components through the read-only cache, each tap's weight wz wy wx formed in float and
//   accumulated in fma.
// - ThreadPerTile (P4's TT / TTLI): a thread per tile; its 4 x 4 x 4 x 3 control points are loaded
//   once into registers (192 floats, indices all compile-time so they stay there). For each
//   voxel row (rz, ry) of the tile the (z, y) part of the sum is taken once per control-point
//   column: R[n][c] = sum_l sum_m wz[rz][l] wy[ry][m] C[l][m][n][c] (12 values), and every voxel
//   rx of the row then needs only the 4 x taps of R. That is P4's register tiling with the
//   tensor product's (z, y) factor shared along the row (P4 recomputes all 63 lerps per voxel);
//   the per-voxel arithmetic falls from 189 lerps to 9 (lerp form) or from 192 fma to 12 (fma
//   form), and the kernels are bound by their stores, not their arithmetic.
//   Lerp form: per axis sum_k w_k c_k = lerp(lerp(c0, c1, h0), lerp(c2, c3, h1), g1) with
//   h0 = w1 / (w0 + w1), h1 = w3 / (w2 + w3), g1 = w2 + w3 (exact when w0 + w1 = 1 - g1, true of
//   the exact weights); lerp(a, b, t) = fma(t, b - a, a). Nested per axis: z lerps, then y, then x
//   (P4 groups the same lerps by 2x2x2 sub-cubes: the same products, another order).
//   Fma form: the same weights w, sums as fma chains (z taps, then y, then x).
//   Weights of the tile positions: computed in double on the host (sv::bspline_weights_frac,
//   the reference's own) and rounded to float once; passed as kernel parameters (the constant
//   bank), indexed by rz and ry at run time (uniform across the warp) and by rx at compile time.
//   Templates: delta_x (1..8, the unrolled voxel loop and the stage size) and the form; delta_z
//   and delta_y are runtime loop bounds (16 kernels instead of 1024).
//   Stores: a warp takes 32 consecutive tiles along x of one tile row (ty, tz); each voxel row
//   (rz, ry) of the 32 tiles is 32 delta_x voxels x 3 floats contiguous in the output. The
//   lanes write their delta_x x 3 values into the warp's shared-memory stage, then the warp
//   writes the row with consecutive lanes at consecutive addresses (whole 128-byte lines),
//   clipped to the image. The block's 4 warps take neighbouring tile rows along y (they share
//   3 of their 4 control-point rows in L1). Writing each thread's tile directly (lanes 12
//   delta_x bytes apart) would make every warp store touch 32 separate sectors.
//
// 2-D grids run the same three schemes on 2 components: a float2 2-D texture (4 fetches), a
// thread per pixel (16 taps), and a thread per tile of delta_y x delta_x pixels (16 control
// points in registers, the y part shared along the pixel row, rows staged per warp).
//
// Measured on an NVIDIA H100 80GB HBM3 (splinebench-cuda ffd, 512x228x385 voxels, 5^3 tiles,
// 539 MB written): texture 5.52 ms, per-voxel 2.29, tile-lerp 0.269, tile-fma 0.263, against
// 0.184 ms for a write-only fill of the output. Over P4's four volumes and tiles 3^3..7^3 the
// tile kernels run 4.8-9.3x the per-voxel kernel; the texture kernel is bound by the filtering
// rate of its 8 float4 trilinear fetches per voxel (0.4x the per-voxel kernel).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "check.cuh"
#include "cubic_weights.cuh"
#include "splineview/bspline.h"
#include "splineview/cuda_ffd.h"
#include "splineview/cuda_memory.h"
#include "splineview/ffd.h"

namespace sv::cuda {
namespace {

using detail::check;
using detail::check_launch;

constexpr int kVoxelThreads = 256;  // per-voxel and texture kernels
constexpr int kTileWarps = 4;       // thread-per-tile: warps per block (along y)
constexpr int kTileThreads = 32 * kTileWarps;
constexpr unsigned kMaxGridYZ = 65535;
constexpr int kWarpsPerSm = 16;  // thread-per-tile: fewer warps than this per SM split tiles

struct Geometry {
  int rank;      // 3, or 2: a 2-D grid is axis 0 of extent 1 (n, m, d, tiles 1)
  int n[3];      // image extents (z, y, x)
  int m[3];      // control-grid extents
  int d[3];      // spacing
  int tiles[3];  // ceil(n / d)
  int zparts;    // thread-per-tile: threads per tile, each a slab of zrows voxel planes
  int zrows;
};

// Weights of the tile positions r = 0 .. delta - 1 per axis (thread-per-tile kernels).
struct TileWeights {
  float w[3][kMaxTileSpacing][4];  // fma form: w0..w3
  float h[3][kMaxTileSpacing][3];  // lerp form: h0, h1, g1
};

// ---- shared device helpers ----

__device__ __forceinline__ float lerp(float a, float b, float t) {
  return fmaf(t, b - a, a);
}

// The x taps of voxel rx of a tile row: the row's four (z, y) partial sums R combined with the
// row's x weights, in the lerp or the fma form.
template <bool kLerp>
__device__ __forceinline__ float x_taps(const float R[4], const TileWeights& tw, int rx) {
  if constexpr (kLerp) {
    return lerp(lerp(R[0], R[1], tw.h[2][rx][0]), lerp(R[2], R[3], tw.h[2][rx][1]), tw.h[2][rx][2]);
  } else {
    float o = tw.w[2][rx][0] * R[0];
#pragma unroll
    for (int n = 1; n < 4; ++n) o = fmaf(tw.w[2][rx][n], R[n], o);
    return o;
  }
}

__device__ __forceinline__ float4 lerp4(const float4& a, const float4& b, float t) {
  return make_float4(lerp(a.x, b.x, t), lerp(a.y, b.y, t), lerp(a.z, b.z, t), 0.0f);
}

// Voxel k of an axis: its tile and its fraction u = (k mod d) / d, correctly rounded.
__device__ __forceinline__ int tile_of(int k, int d, float* u) {
  const int t = k / d;
  *u = static_cast<float>(k - t * d) / static_cast<float>(d);
  return t;
}

// The (z, y, x) voxel of linear index i (x fastest).
__device__ __forceinline__ void voxel_of(long long i, const Geometry& g, int v[3]) {
  const long long row = i / g.n[2];
  v[2] = static_cast<int>(i - row * g.n[2]);
  v[0] = static_cast<int>(row / g.n[1]);
  v[1] = static_cast<int>(row - static_cast<long long>(v[0]) * g.n[1]);
}

// ---- PerVoxel ----

__global__ void __launch_bounds__(kVoxelThreads)
    per_voxel_kernel(const float* __restrict__ grid, const Geometry g, long long voxels,
                     float* __restrict__ out) {
  const long long i = static_cast<long long>(blockIdx.x) * kVoxelThreads + threadIdx.x;
  if (i >= voxels) return;
  int v[3];
  voxel_of(i, g, v);
  float w[3][4];
  int t[3];
#pragma unroll
  for (int a = 0; a < 3; ++a) {
    float u;
    t[a] = tile_of(v[a], g.d[a], &u);
    cubic_weights(u, w[a]);
  }
  const float* base = grid + (static_cast<std::size_t>(t[0]) * g.m[1] + t[1]) * g.m[2] * 3 +
                      static_cast<std::size_t>(t[2]) * 3;
  float acc[3] = {0.0f, 0.0f, 0.0f};
#pragma unroll
  for (int l = 0; l < 4; ++l)
#pragma unroll
    for (int m = 0; m < 4; ++m) {
      const float wzy = w[0][l] * w[1][m];
      const float* row = base + (static_cast<std::size_t>(l) * g.m[1] + m) * g.m[2] * 3;
#pragma unroll
      for (int n = 0; n < 4; ++n) {
        const float wt = wzy * w[2][n];
#pragma unroll
        for (int c = 0; c < 3; ++c) acc[c] = fmaf(wt, __ldg(row + 3 * n + c), acc[c]);
      }
    }
#pragma unroll
  for (int c = 0; c < 3; ++c) out[i * 3 + c] = acc[c];
}

// ---- Texture ----

// One axis of the Sigg-Hadwiger cubic at voxel k: texel coordinates of the two filtered fetches
// (unnormalized: texel j's centre at j + 0.5) and the weight of the upper pair.
struct TexAxis {
  float lo, hi, g1;
};

__device__ __forceinline__ TexAxis tex_axis(int k, int d) {
  float u;
  const int t = tile_of(k, d, &u);
  float w[4];
  cubic_weights(u, w);
  const float g0 = w[0] + w[1];  // in [1/6, 5/6]: never zero
  const float g1 = w[2] + w[3];
  TexAxis a;
  a.lo = static_cast<float>(t) + 0.5f + w[1] / g0;
  a.hi = static_cast<float>(t) + 2.5f + w[3] / g1;
  a.g1 = g1;
  return a;
}

__global__ void __launch_bounds__(kVoxelThreads)
    texture_kernel(cudaTextureObject_t tex, const Geometry g, long long voxels,
                   float* __restrict__ out) {
  const long long i = static_cast<long long>(blockIdx.x) * kVoxelThreads + threadIdx.x;
  if (i >= voxels) return;
  int v[3];
  voxel_of(i, g, v);
  const TexAxis az = tex_axis(v[0], g.d[0]);
  const TexAxis ay = tex_axis(v[1], g.d[1]);
  const TexAxis ax = tex_axis(v[2], g.d[2]);
  auto row = [&](float y, float z) {
    return lerp4(tex3D<float4>(tex, ax.lo, y, z), tex3D<float4>(tex, ax.hi, y, z), ax.g1);
  };
  const float4 lo = lerp4(row(ay.lo, az.lo), row(ay.hi, az.lo), ay.g1);
  const float4 hi = lerp4(row(ay.lo, az.hi), row(ay.hi, az.hi), ay.g1);
  const float4 r = lerp4(lo, hi, az.g1);
  // Texture channels hold the components in array order (z, y, x), as the grid.
  out[i * 3 + 0] = r.x;
  out[i * 3 + 1] = r.y;
  out[i * 3 + 2] = r.z;
}

// 3 interleaved components -> float4 (the texture's texel), pad 0.
__global__ void pad_kernel(const float* __restrict__ src, float4* __restrict__ dst,
                           long long points) {
  const long long i = static_cast<long long>(blockIdx.x) * kVoxelThreads + threadIdx.x;
  if (i >= points) return;
  dst[i] = make_float4(src[3 * i], src[3 * i + 1], src[3 * i + 2], 0.0f);
}

// ---- ThreadPerTile ----

template <int DX, bool kLerp>
__global__ void __launch_bounds__(kTileThreads)
    tile_kernel(const float* __restrict__ grid, const Geometry g, const TileWeights tw,
                float* __restrict__ out) {
  constexpr int kRow = 32 * DX * 3;  // floats of one staged voxel row of the warp's 32 tiles
  __shared__ float stage_all[kTileWarps][kRow];
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const int ty = static_cast<int>(blockIdx.y) * kTileWarps + warp;
  const int tz = static_cast<int>(blockIdx.z) / g.zparts;
  const int part = static_cast<int>(blockIdx.z) - tz * g.zparts;
  if (ty >= g.tiles[1]) return;  // the whole warp
  const int tx0 = static_cast<int>(blockIdx.x) * 32;
  // Lanes past the last tile repeat it; their voxels lie beyond the image and are not stored.
  const int tx = min(tx0 + lane, g.tiles[2] - 1);
  float* stage = stage_all[warp];

  // The tile's control points, C[l][m][n][c] = grid[tz + l][ty + m][tx + n][c].
  float C[4][4][4][3];
#pragma unroll
  for (int l = 0; l < 4; ++l)
#pragma unroll
    for (int m = 0; m < 4; ++m) {
      const float* row =
          grid + ((static_cast<std::size_t>(tz + l) * g.m[1] + (ty + m)) * g.m[2] + tx) * 3;
#pragma unroll
      for (int k = 0; k < 12; ++k) C[l][m][k / 3][k % 3] = __ldg(row + k);
    }

  const int z0 = tz * g.d[0], y0 = ty * g.d[1], x0 = tx0 * DX;
  const int rz_begin = part * g.zrows;
  const int rz_end = min(min(g.d[0], rz_begin + g.zrows), g.n[0] - z0);
  const int ry_end = min(g.d[1], g.n[1] - y0);
  const int row_floats = min(32 * DX, g.n[2] - x0) * 3;

  for (int rz = rz_begin; rz < rz_end; ++rz) {
    for (int ry = 0; ry < ry_end; ++ry) {
      // One component at a time (4 live partial sums, not 12): the (z, y) part of the sum for
      // the 4 control-point columns n, R[n], then the voxels of the row from the 4 x taps of R.
#pragma unroll
      for (int c = 0; c < 3; ++c) {
        float R[4];
        if constexpr (kLerp) {
          const float hz0 = tw.h[0][rz][0], hz1 = tw.h[0][rz][1], gz1 = tw.h[0][rz][2];
          const float hy0 = tw.h[1][ry][0], hy1 = tw.h[1][ry][1], gy1 = tw.h[1][ry][2];
#pragma unroll
          for (int n = 0; n < 4; ++n) {
            float zs[4];
#pragma unroll
            for (int m = 0; m < 4; ++m)
              zs[m] = lerp(lerp(C[0][m][n][c], C[1][m][n][c], hz0),
                           lerp(C[2][m][n][c], C[3][m][n][c], hz1), gz1);
            R[n] = lerp(lerp(zs[0], zs[1], hy0), lerp(zs[2], zs[3], hy1), gy1);
          }
        } else {
#pragma unroll
          for (int n = 0; n < 4; ++n) {
            float acc = 0.0f;
#pragma unroll
            for (int m = 0; m < 4; ++m) {
              float zs = tw.w[0][rz][0] * C[0][m][n][c];
#pragma unroll
              for (int l = 1; l < 4; ++l) zs = fmaf(tw.w[0][rz][l], C[l][m][n][c], zs);
              acc = m == 0 ? tw.w[1][ry][0] * zs : fmaf(tw.w[1][ry][m], zs, acc);
            }
            R[n] = acc;
          }
        }
#pragma unroll
        for (int rx = 0; rx < DX; ++rx) stage[(lane * DX + rx) * 3 + c] = x_taps<kLerp>(R, tw, rx);
      }
      __syncwarp();
      float* dst =
          out + ((static_cast<std::size_t>(z0 + rz) * g.n[1] + (y0 + ry)) * g.n[2] + x0) * 3;
      for (int e = lane; e < row_floats; e += 32) dst[e] = stage[e];
      __syncwarp();  // the stage is rewritten by the next row
    }
  }
}

// ---- 2-D: the same three schemes on a (M_y, M_x, 2) grid (axes 1 and 2 of Geometry) ----

__global__ void __launch_bounds__(kVoxelThreads)
    per_voxel_kernel_2d(const float* __restrict__ grid, const Geometry g, long long pixels,
                        float* __restrict__ out) {
  const long long i = static_cast<long long>(blockIdx.x) * kVoxelThreads + threadIdx.x;
  if (i >= pixels) return;
  const int y = static_cast<int>(i / g.n[2]);
  const int x = static_cast<int>(i - static_cast<long long>(y) * g.n[2]);
  float wy[4], wx[4], u;
  const int ty = tile_of(y, g.d[1], &u);
  cubic_weights(u, wy);
  const int tx = tile_of(x, g.d[2], &u);
  cubic_weights(u, wx);
  const float* base = grid + (static_cast<std::size_t>(ty) * g.m[2] + tx) * 2;
  float acc[2] = {0.0f, 0.0f};
#pragma unroll
  for (int m = 0; m < 4; ++m) {
    const float* row = base + static_cast<std::size_t>(m) * g.m[2] * 2;
#pragma unroll
    for (int n = 0; n < 4; ++n) {
      const float wt = wy[m] * wx[n];
#pragma unroll
      for (int c = 0; c < 2; ++c) acc[c] = fmaf(wt, __ldg(row + 2 * n + c), acc[c]);
    }
  }
  out[i * 2 + 0] = acc[0];
  out[i * 2 + 1] = acc[1];
}

__device__ __forceinline__ float2 lerp2(const float2& a, const float2& b, float t) {
  return make_float2(lerp(a.x, b.x, t), lerp(a.y, b.y, t));
}

__global__ void __launch_bounds__(kVoxelThreads)
    texture_kernel_2d(cudaTextureObject_t tex, const Geometry g, long long pixels,
                      float* __restrict__ out) {
  const long long i = static_cast<long long>(blockIdx.x) * kVoxelThreads + threadIdx.x;
  if (i >= pixels) return;
  const int y = static_cast<int>(i / g.n[2]);
  const int x = static_cast<int>(i - static_cast<long long>(y) * g.n[2]);
  const TexAxis ay = tex_axis(y, g.d[1]);
  const TexAxis ax = tex_axis(x, g.d[2]);
  auto row = [&](float v) {
    return lerp2(tex2D<float2>(tex, ax.lo, v), tex2D<float2>(tex, ax.hi, v), ax.g1);
  };
  const float2 r = lerp2(row(ay.lo), row(ay.hi), ay.g1);
  out[i * 2 + 0] = r.x;
  out[i * 2 + 1] = r.y;
}

// Thread per tile of delta_y x delta_x pixels, its 4 x 4 x 2 control points in registers; per
// pixel row the y part of the sum per column, then 4 x taps per pixel; rows staged per warp as
// in 3-D. blockIdx.z splits a tile's rows among threads on small images (zparts, zrows).
template <int DX, bool kLerp>
__global__ void __launch_bounds__(kTileThreads)
    tile_kernel_2d(const float* __restrict__ grid, const Geometry g, const TileWeights tw,
                   float* __restrict__ out) {
  constexpr int kRow = 32 * DX * 2;
  __shared__ float stage_all[kTileWarps][kRow];
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const int ty = static_cast<int>(blockIdx.y) * kTileWarps + warp;
  const int part = static_cast<int>(blockIdx.z);
  if (ty >= g.tiles[1]) return;  // the whole warp
  const int tx0 = static_cast<int>(blockIdx.x) * 32;
  const int tx = min(tx0 + lane, g.tiles[2] - 1);
  float* stage = stage_all[warp];

  float C[4][4][2];
#pragma unroll
  for (int m = 0; m < 4; ++m) {
    const float* row = grid + (static_cast<std::size_t>(ty + m) * g.m[2] + tx) * 2;
#pragma unroll
    for (int k = 0; k < 8; ++k) C[m][k / 2][k % 2] = __ldg(row + k);
  }

  const int y0 = ty * g.d[1], x0 = tx0 * DX;
  const int ry_begin = part * g.zrows;
  const int ry_end = min(min(g.d[1], ry_begin + g.zrows), g.n[1] - y0);
  const int row_floats = min(32 * DX, g.n[2] - x0) * 2;
  for (int ry = ry_begin; ry < ry_end; ++ry) {
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      float R[4];
#pragma unroll
      for (int n = 0; n < 4; ++n) {
        if constexpr (kLerp) {
          R[n] = lerp(lerp(C[0][n][c], C[1][n][c], tw.h[1][ry][0]),
                      lerp(C[2][n][c], C[3][n][c], tw.h[1][ry][1]), tw.h[1][ry][2]);
        } else {
          float acc = tw.w[1][ry][0] * C[0][n][c];
#pragma unroll
          for (int m = 1; m < 4; ++m) acc = fmaf(tw.w[1][ry][m], C[m][n][c], acc);
          R[n] = acc;
        }
      }
#pragma unroll
      for (int rx = 0; rx < DX; ++rx) stage[(lane * DX + rx) * 2 + c] = x_taps<kLerp>(R, tw, rx);
    }
    __syncwarp();
    float* dst = out + (static_cast<std::size_t>(y0 + ry) * g.n[2] + x0) * 2;
    for (int e = lane; e < row_floats; e += 32) dst[e] = stage[e];
    __syncwarp();
  }
}

template <int DX, bool kLerp>
void launch_tile_dx(dim3 grid, cudaStream_t s, const float* points, const Geometry& g,
                    const TileWeights& tw, float* out) {
  if (g.rank == 2)
    tile_kernel_2d<DX, kLerp><<<grid, kTileThreads, 0, s>>>(points, g, tw, out);
  else
    tile_kernel<DX, kLerp><<<grid, kTileThreads, 0, s>>>(points, g, tw, out);
}

template <bool kLerp>
void launch_tile(int dx, dim3 grid, cudaStream_t s, const float* points, const Geometry& g,
                 const TileWeights& tw, float* out) {
  switch (dx) {
    case 1:
      return launch_tile_dx<1, kLerp>(grid, s, points, g, tw, out);
    case 2:
      return launch_tile_dx<2, kLerp>(grid, s, points, g, tw, out);
    case 3:
      return launch_tile_dx<3, kLerp>(grid, s, points, g, tw, out);
    case 4:
      return launch_tile_dx<4, kLerp>(grid, s, points, g, tw, out);
    case 5:
      return launch_tile_dx<5, kLerp>(grid, s, points, g, tw, out);
    case 6:
      return launch_tile_dx<6, kLerp>(grid, s, points, g, tw, out);
    case 7:
      return launch_tile_dx<7, kLerp>(grid, s, points, g, tw, out);
    default:
      return launch_tile_dx<8, kLerp>(grid, s, points, g, tw, out);
  }
}

// ---- host side ----

// Streaming multiprocessors of the current device (an attribute query, not the slow property
// query); 132 if it cannot be read.
int multiprocessors() {
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      sms < 1) {
    cudaGetLastError();
    return 132;
  }
  return sms;
}

Geometry geometry_of(const FfdGrid& grid) {
  Geometry g{};
  g.rank = static_cast<int>(grid.dims.size());
  const int off = 3 - g.rank;
  for (int a = 0; a < 3; ++a) {
    g.n[a] = a < off ? 1 : static_cast<int>(grid.image_shape[a - off]);
    g.m[a] = a < off ? 1 : static_cast<int>(grid.dims[a - off]);
    g.d[a] = a < off ? 1 : grid.delta[a - off];
    g.tiles[a] = (g.n[a] + g.d[a] - 1) / g.d[a];
  }
  // Thread-per-tile parallelism: one thread per tile gives few warps on small images with big
  // tiles (294x130x208 at 7^3: 570 warps, about 4 per SM of an H200). Below kWarpsPerSm warps
  // per SM the tile's voxel planes are split among up to delta_z threads (each loads the same
  // control points, from L1/L2).
  const long long warps = static_cast<long long>((g.tiles[2] + 31) / 32) * g.tiles[1] * g.tiles[0];
  const long long want = static_cast<long long>(multiprocessors()) * kWarpsPerSm;
  // (2-D: the rows of a tile, delta_y, are split the same way.)
  const int split_axis = g.rank == 2 ? 1 : 0;
  const int d = g.d[split_axis];
  int parts = static_cast<int>(std::min<long long>(d, (want + warps - 1) / warps));
  parts = std::max(parts, 1);
  g.zrows = (d + parts - 1) / parts;
  g.zparts = (d + g.zrows - 1) / g.zrows;
  return g;
}

TileWeights tile_weights(const Geometry& g) {
  TileWeights tw{};
  for (int a = 0; a < 3; ++a)
    for (int r = 0; r < g.d[a]; ++r) {
      double w[4];
      bspline_weights_frac<double>(3, static_cast<double>(r) / g.d[a], w);
      for (int k = 0; k < 4; ++k) tw.w[a][r][k] = static_cast<float>(w[k]);
      tw.h[a][r][0] = static_cast<float>(w[1] / (w[0] + w[1]));
      tw.h[a][r][1] = static_cast<float>(w[3] / (w[2] + w[3]));
      tw.h[a][r][2] = static_cast<float>(w[2] + w[3]);
    }
  return tw;
}

std::string describe(FfdKernel kernel) {
  return std::string("CUDA FFD field (") + ffd_kernel_name(kernel) + ")";
}

unsigned voxel_blocks(long long count, const std::string& what) {
  const long long blocks = (count + kVoxelThreads - 1) / kVoxelThreads;
  if (blocks > 0x7fffffffLL) throw Error(what + ": too many voxels for one launch");
  return static_cast<unsigned>(blocks);
}

}  // namespace

struct FfdEvaluator::Impl {
  FfdGrid grid;
  Geometry geometry{};
  TileWeights weights{};
  cudaArray_t array = nullptr;
  cudaTextureObject_t texture = 0;
  DeviceBuffer padded;  // the grid as float4 texels, the copy's source
  cudaStream_t last_stream = nullptr;
  bool texture_used = false;

  ~Impl() {
    // The last Texture launch may still read the array: wait for it (errors ignored here; they
    // surface at the caller's next synchronising call).
    if (texture_used) cudaStreamSynchronize(last_stream);
    if (texture) cudaDestroyTextureObject(texture);
    if (array) cudaFreeArray(array);
  }
};

FfdEvaluator::FfdEvaluator(const FfdGrid& grid) {
  // No require() (a device-property query, about half a millisecond per call): without a device
  // the launch check reports the reason.
  check_ffd_arguments(grid, FfdKernel::PerVoxel, "CUDA FFD field");
  impl_ = std::make_unique<Impl>();
  impl_->grid = grid;
  impl_->geometry = geometry_of(grid);
  impl_->weights = tile_weights(impl_->geometry);
}

FfdEvaluator::~FfdEvaluator() = default;

const FfdGrid& FfdEvaluator::grid() const {
  return impl_->grid;
}

void FfdEvaluator::refresh_texture(CUstream_st* stream) {
  const char* what = "CUDA FFD field (texture)";
  Impl& m = *impl_;
  const Geometry& g = m.geometry;
  const long long points = static_cast<long long>(g.m[0]) * g.m[1] * g.m[2];
  const bool flat = g.rank == 2;  // a 2-D float2 array, filled straight from the grid
  if (!m.array) {
    int device = 0;
    check(cudaGetDevice(&device), what);
    int limit[3] = {1, 0, 0};  // depth, height, width
    if (!flat) check(cudaDeviceGetAttribute(&limit[0], cudaDevAttrMaxTexture3DDepth, device), what);
    check(cudaDeviceGetAttribute(
              &limit[1], flat ? cudaDevAttrMaxTexture2DHeight : cudaDevAttrMaxTexture3DHeight,
              device),
          what);
    check(
        cudaDeviceGetAttribute(
            &limit[2], flat ? cudaDevAttrMaxTexture2DWidth : cudaDevAttrMaxTexture3DWidth, device),
        what);
    for (int a = 0; a < 3; ++a)
      if (g.m[a] > limit[a])
        throw Error(std::string(what) + ": a control grid of " + std::to_string(g.m[a]) +
                    " points along " + "zyx"[a] + " exceeds this device's texture limit of " +
                    std::to_string(limit[a]));
    if (flat) {
      const cudaChannelFormatDesc format = cudaCreateChannelDesc<float2>();
      check(cudaMallocArray(&m.array, &format, static_cast<std::size_t>(g.m[2]),
                            static_cast<std::size_t>(g.m[1])),
            "CUDA FFD field (texture): allocating the control-grid array");
    } else {
      m.padded = DeviceBuffer(static_cast<std::size_t>(points) * 4);
      const cudaChannelFormatDesc format = cudaCreateChannelDesc<float4>();
      check(cudaMalloc3DArray(&m.array, &format, make_cudaExtent(g.m[2], g.m[1], g.m[0])),
            "CUDA FFD field (texture): allocating the control-grid array");
    }
    cudaResourceDesc res{};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = m.array;
    cudaTextureDesc td{};
    for (auto& a : td.addressMode) a = cudaAddressModeClamp;
    td.filterMode = cudaFilterModeLinear;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 0;
    check(cudaCreateTextureObject(&m.texture, &res, &td, nullptr),
          "CUDA FFD field (texture): creating the texture object");
  }
  if (flat) {
    const std::size_t row = static_cast<std::size_t>(g.m[2]) * 2 * sizeof(float);
    check(cudaMemcpy2DToArrayAsync(m.array, 0, 0, m.grid.points, row, row,
                                   static_cast<std::size_t>(g.m[1]), cudaMemcpyDeviceToDevice,
                                   stream),
          "CUDA FFD field (texture): copying the grid");
    m.texture_used = true;
    m.last_stream = stream;
    return;
  }
  pad_kernel<<<voxel_blocks(points, what), kVoxelThreads, 0, stream>>>(
      m.grid.points, reinterpret_cast<float4*>(m.padded.data()), points);
  check_launch("CUDA FFD field (texture): padding the grid to float4");
  cudaMemcpy3DParms copy{};
  copy.srcPtr =
      make_cudaPitchedPtr(m.padded.data(), static_cast<std::size_t>(g.m[2]) * 16,
                          static_cast<std::size_t>(g.m[2]), static_cast<std::size_t>(g.m[1]));
  copy.dstArray = m.array;
  copy.extent = make_cudaExtent(g.m[2], g.m[1], g.m[0]);
  copy.kind = cudaMemcpyDeviceToDevice;
  check(cudaMemcpy3DAsync(&copy, stream), "CUDA FFD field (texture): copying the grid");
  m.texture_used = true;
  m.last_stream = stream;
}

void FfdEvaluator::run(FfdKernel kernel, float* out, CUstream_st* stream) {
  const std::string what = describe(kernel);
  Impl& m = *impl_;
  check_ffd_arguments(m.grid, kernel, what.c_str());
  if (!out) throw Error(what + ": the output pointer is null");
  const Geometry& g = m.geometry;
  const long long voxels = static_cast<long long>(g.n[0]) * g.n[1] * g.n[2];
  switch (kernel) {
    case FfdKernel::Texture:
      if (!m.array) refresh_texture(stream);
      if (g.rank == 2)
        texture_kernel_2d<<<voxel_blocks(voxels, what), kVoxelThreads, 0, stream>>>(m.texture, g,
                                                                                    voxels, out);
      else
        texture_kernel<<<voxel_blocks(voxels, what), kVoxelThreads, 0, stream>>>(m.texture, g,
                                                                                 voxels, out);
      m.texture_used = true;
      m.last_stream = stream;
      break;
    case FfdKernel::PerVoxel:
      if (g.rank == 2)
        per_voxel_kernel_2d<<<voxel_blocks(voxels, what), kVoxelThreads, 0, stream>>>(
            m.grid.points, g, voxels, out);
      else
        per_voxel_kernel<<<voxel_blocks(voxels, what), kVoxelThreads, 0, stream>>>(m.grid.points, g,
                                                                                   voxels, out);
      break;
    case FfdKernel::ThreadPerTileLerp:
    case FfdKernel::ThreadPerTileFma: {
      const dim3 grid(static_cast<unsigned>((g.tiles[2] + 31) / 32),
                      static_cast<unsigned>((g.tiles[1] + kTileWarps - 1) / kTileWarps),
                      static_cast<unsigned>(g.tiles[0] * g.zparts));
      if (grid.y > kMaxGridYZ || grid.z > kMaxGridYZ)
        throw Error(what + ": too many tiles along z or y for one launch");
      if (kernel == FfdKernel::ThreadPerTileLerp)
        launch_tile<true>(g.d[2], grid, stream, m.grid.points, g, m.weights, out);
      else
        launch_tile<false>(g.d[2], grid, stream, m.grid.points, g, m.weights, out);
      break;
    }
  }
  check_launch((what + ": launching the kernel").c_str());
}

void ffd_field(const FfdGrid& grid, FfdKernel kernel, float* out, CUstream_st* stream) {
  check_ffd_arguments(grid, kernel, describe(kernel).c_str());
  if (!out) throw Error(describe(kernel) + ": the output pointer is null");
  FfdEvaluator e(grid);
  e.run(kernel, out, stream);
}

ArrayF ffd_field(const ArrayF& grid, const std::vector<int>& delta,
                 const std::vector<std::size_t>& image_shape, FfdKernel kernel) {
  const std::string what = describe(kernel);
  sv::check_ffd_grid(grid, delta, image_shape);  // rank, components, values, shape
  FfdGrid g;
  g.dims = grid.dims();
  g.delta = delta;
  g.image_shape = image_shape;
  g.points = grid.data();  // host: only its presence is checked before the upload
  check_ffd_arguments(g, kernel, what.c_str());
  require(what.c_str());
  DeviceBuffer points(grid.size());
  points.upload(grid.data(), grid.size());
  g.points = points.data();
  ArrayF out(image_shape, image_shape.size());
  DeviceBuffer result(out.size());
  ffd_field(g, kernel, result.data(), nullptr);
  synchronize(what.c_str());
  result.download(out.data(), out.size());
  return out;
}

}  // namespace sv::cuda
