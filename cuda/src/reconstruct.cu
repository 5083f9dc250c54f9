// CUDA reconstruction (see cuda_reconstruct.h). The coefficients live in a CUDA array read through
// two texture objects: a filtered one (normalized coordinates, linear filtering, the boundary's
// address mode) for the hardware fetches and a point-sampled one (texel indices, no filtering)
// for the nearest fetch and the precise taps. One thread evaluates one position; the kernel is
// specialised per channel vector (float, float2, float4), rank and fetch.
//
// The precise fetch adapts per warp: when the warp's 32 positions need few coefficients between
// them (a slice, a zoom: neighbouring positions a fraction of a texel apart), the warp loads that
// box of coefficients into shared memory once and every thread blends its 4^rank taps from there;
// otherwise (scattered positions) each thread point-fetches its own taps from the texture, whose
// block-linear layout suits a 4x4x4 footprint at a random place best. Both read the same values
// and blend them in the same fma order, so the results are bit-identical. Measured on the H100
// (splinebench-cuda reconstruct, 256^3, 2^24 positions): on a 4096^2 oblique slice the box takes
// 0.36 ms against 1.06 ms for per-thread taps (which are texture-bound there: 64 point fetches
// per position); at random positions, where everything is L2-bound, 4.24 against 4.19 ms, and
// plain loads from a row-major or a tiled global-memory copy instead of the texture were 1.45x
// and 1.26x slower. SPLINEVIEW_CUDA_PRECISE=texture turns the box off (an experiment switch).
//
// Conventions, shared with the CPU reference sv::sample and the GLSL fetch library
// (shaders/bspline_common.glsl, shaders/bspline_fetch.glsl):
//  - sample k of an axis sits at position k, i.e. at normalized texture coordinate (k + 0.5) / N;
//  - positions arrive in array axis order (z, y, x); the kernels work in texture order (x, y, z);
//  - reflect (half-sample symmetric) is the hardware's Mirror address mode, periodic its Wrap
//    mode; whole-sample "mirror" has no address mode, so the texture clamps and every filtered
//    pair (j, j + 1) is mapped explicitly through the extension, as sv_fetch_between does;
//  - indices for point taps are extended in integers (sv::extend_index), never by the hardware.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "boundary.cuh"
#include "check.cuh"
#include "cubic_weights.cuh"
#include "splineview/cuda_reconstruct.h"

namespace sv::cuda {

namespace {

using detail::check;
using detail::check_launch;

constexpr int kBlock = 256;

using detail::boundary_code;
using detail::extend;
using detail::kMirror;
using detail::kPeriodic;
using detail::kReflect;
using detail::nearest_position;

// ---- small vector arithmetic on float, float2, float4 (CUDA defines no operators for them) ----

template <class V>
__device__ __forceinline__ V vzero();
template <>
__device__ __forceinline__ float vzero<float>() {
  return 0.0f;
}
template <>
__device__ __forceinline__ float2 vzero<float2>() {
  return make_float2(0.0f, 0.0f);
}
template <>
__device__ __forceinline__ float4 vzero<float4>() {
  return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}

__device__ __forceinline__ float vfma(float s, float v, float acc) {
  return fmaf(s, v, acc);
}
__device__ __forceinline__ float2 vfma(float s, float2 v, float2 acc) {
  return make_float2(fmaf(s, v.x, acc.x), fmaf(s, v.y, acc.y));
}
__device__ __forceinline__ float4 vfma(float s, float4 v, float4 acc) {
  return make_float4(fmaf(s, v.x, acc.x), fmaf(s, v.y, acc.y), fmaf(s, v.z, acc.z),
                     fmaf(s, v.w, acc.w));
}

__device__ __forceinline__ float vscale(float s, float v) {
  return s * v;
}
__device__ __forceinline__ float2 vscale(float s, float2 v) {
  return make_float2(s * v.x, s * v.y);
}
__device__ __forceinline__ float4 vscale(float s, float4 v) {
  return make_float4(s * v.x, s * v.y, s * v.z, s * v.w);
}

// lo + t (hi - lo): the blend of two weighted pairs whose weights sum to exactly 1, so equal
// inputs (a constant signal) come back unchanged.
__device__ __forceinline__ float vlerp(float lo, float hi, float t) {
  return fmaf(t, hi - lo, lo);
}
__device__ __forceinline__ float2 vlerp(float2 lo, float2 hi, float t) {
  return make_float2(vlerp(lo.x, hi.x, t), vlerp(lo.y, hi.y, t));
}
__device__ __forceinline__ float4 vlerp(float4 lo, float4 hi, float t) {
  return make_float4(vlerp(lo.x, hi.x, t), vlerp(lo.y, hi.y, t), vlerp(lo.z, hi.z, t),
                     vlerp(lo.w, hi.w, t));
}

// Writes the first `channels` components (3-channel data is stored as float4).
__device__ __forceinline__ void store(float* out, float v, int) {
  out[0] = v;
}
__device__ __forceinline__ void store(float* out, float2 v, int) {
  out[0] = v.x;
  out[1] = v.y;
}
__device__ __forceinline__ void store(float* out, float4 v, int channels) {
  out[0] = v.x;
  out[1] = v.y;
  out[2] = v.z;
  if (channels == 4) out[3] = v.w;
}

// ---- index extension and per-axis preparation ----

// floor(x) as a float, computed on x clamped to +-2^30 so that the integer index and its
// neighbours (i - 1 .. i + 2) stay within int whatever the position (huge or NaN positions give
// meaningless values, never an out-of-range tap).
__device__ __forceinline__ float safe_floor(float x) {
  return floorf(fminf(fmaxf(x, -1073741824.0f), 1073741824.0f));
}

// Normalized coordinate of the hardware-filtered value between samples j and j + 1 at fraction
// t in [0, 1]. Reflect and periodic leave the wrapping to the address mode (Mirror, Wrap), which
// extends the filter footprint's texel indices exactly as extend() does. Whole-sample mirror maps
// both indices: they come out adjacent (possibly reversed), so one fetch at min(a, b) plus t or
// 1 - t reproduces the pair on a clamped texture; a == b only for n == 1, where any fraction
// gives c[0].
__device__ __forceinline__ float between(int j, float t, int n, float inv, int boundary) {
  if (boundary != kMirror) return (static_cast<float>(j) + (t + 0.5f)) * inv;
  const int a = extend(j, n, kMirror);
  const int b = extend(j + 1, n, kMirror);
  const float q = static_cast<float>(min(a, b)) + (a < b ? t : 1.0f - t);
  return (q + 0.5f) * inv;
}

// One axis of the Sigg-Hadwiger cubic: the pair (c[i-1], c[i]) with weight g0 = w0 + w1 is read
// as one filtered fetch at fraction w1 / g0 from i - 1, the pair (c[i+1], c[i+2]) with
// g1 = w2 + w3 at fraction w3 / g1 from i + 1; the two are blended as lo + g1 (hi - lo).
struct CubicAxis {
  float lo, hi;  // normalized coordinates of the two filtered fetches
  float g1;      // weight of the upper pair
};

__device__ __forceinline__ CubicAxis cubic_axis(float x, int n, float inv, int boundary) {
  const float fi = safe_floor(x);
  float w[4];
  cubic_weights(x - fi, w);
  const float g0 = w[0] + w[1];  // in [1/6, 5/6]: never zero
  const float g1 = w[2] + w[3];  // likewise
  const int i = static_cast<int>(fi);
  CubicAxis c;
  c.lo = between(i - 1, __fdividef(w[1], g0), n, inv, boundary);
  c.hi = between(i + 1, __fdividef(w[3], g1), n, inv, boundary);
  c.g1 = g1;
  return c;
}

// ---- texture access ----

template <class V, int R>
__device__ __forceinline__ V filtered(cudaTextureObject_t t, float x, float y = 0, float z = 0) {
  if constexpr (R == 1) {
    return tex1D<V>(t, x);
  } else if constexpr (R == 2) {
    return tex2D<V>(t, x, y);
  } else {
    return tex3D<V>(t, x, y, z);
  }
}

// The texel at integer indices (already in range), read at its centre with point sampling.
template <class V, int R>
__device__ __forceinline__ V texel(cudaTextureObject_t t, int x, int y = 0, int z = 0) {
  if constexpr (R == 1) {
    return tex1D<V>(t, static_cast<float>(x) + 0.5f);
  } else if constexpr (R == 2) {
    return tex2D<V>(t, static_cast<float>(x) + 0.5f, static_cast<float>(y) + 0.5f);
  } else {
    return tex3D<V>(t, static_cast<float>(x) + 0.5f, static_cast<float>(y) + 0.5f,
                    static_cast<float>(z) + 0.5f);
  }
}

// The texel whose centre is at (x, y, z) in texel units (precomputed k + 0.5), point sampled.
template <class V, int R>
__device__ __forceinline__ V texel_at(cudaTextureObject_t t, float x, float y, float z) {
  if constexpr (R == 1) {
    return tex1D<V>(t, x);
  } else if constexpr (R == 2) {
    return tex2D<V>(t, x, y);
  } else {
    return tex3D<V>(t, x, y, z);
  }
}

struct Params {
  int n[3];      // extents in texture order (x, y, z); 1 for missing axes
  float inv[3];  // 1 / n
  int boundary;
  int channels;                  // 1..4 values written per position
  cudaTextureObject_t filtered;  // normalized, linear filtering, boundary address mode
  cudaTextureObject_t point;     // texel coordinates, point sampling, clamp
};

// ---- the fetches ----

template <class V, int R>
__device__ __forceinline__ V fetch_nearest(const Params& p, const float* x) {
  int e[3] = {0, 0, 0};
  for (int d = 0; d < R; ++d) {
    // floor(y + 0.5) as the reference computes it in double: y + 0.5 may round up in float
    // (y = 0.5 - 2^-25), y - floor(y) is exact. y: the position mapped as scipy maps it, which
    // decides ties outside the array (boundary.cuh).
    const float y = nearest_position(x[d], p.n[d], p.boundary);
    const float f = safe_floor(y);
    const int k = static_cast<int>(f) + (y - f >= 0.5f ? 1 : 0);
    e[d] = extend(k, p.n[d], p.boundary);
  }
  return texel<V, R>(p.point, e[0], e[1], e[2]);
}

template <class V, int R>
__device__ __forceinline__ V fetch_linear(const Params& p, const float* x) {
  float u[3] = {0, 0, 0};
  for (int d = 0; d < R; ++d) {
    if (p.boundary == kMirror) {
      const float f = safe_floor(x[d]);
      u[d] = between(static_cast<int>(f), x[d] - f, p.n[d], p.inv[d], kMirror);
    } else {
      u[d] = (x[d] + 0.5f) * p.inv[d];
    }
  }
  return filtered<V, R>(p.filtered, u[0], u[1], u[2]);
}

template <class V, int R>
__device__ __forceinline__ V fetch_cubic(const Params& p, const float* x) {
  const CubicAxis ax = cubic_axis(x[0], p.n[0], p.inv[0], p.boundary);
  if constexpr (R == 1) {
    return vlerp(filtered<V, 1>(p.filtered, ax.lo), filtered<V, 1>(p.filtered, ax.hi), ax.g1);
  } else {
    const CubicAxis ay = cubic_axis(x[1], p.n[1], p.inv[1], p.boundary);
    auto row = [&](float v, float w) {
      return vlerp(filtered<V, R>(p.filtered, ax.lo, v, w), filtered<V, R>(p.filtered, ax.hi, v, w),
                   ax.g1);
    };
    if constexpr (R == 2) {
      return vlerp(row(ay.lo, 0.0f), row(ay.hi, 0.0f), ay.g1);
    } else {
      const CubicAxis az = cubic_axis(x[2], p.n[2], p.inv[2], p.boundary);
      const V lo = vlerp(row(ay.lo, az.lo), row(ay.hi, az.lo), ay.g1);
      const V hi = vlerp(row(ay.lo, az.hi), row(ay.hi, az.hi), ay.g1);
      return vlerp(lo, hi, az.g1);
    }
  }
}

// Texels per warp in the precise fetch's shared-memory box: a warp of positions spanning up to
// about two texels per axis (6x6x7 = 252; a slice drawn at 1/8 texel spacing needs about 5x5x6).
// Kept small because shared memory is carved out of the L1 cache, which the scattered positions'
// texture taps depend on: 1 KiB per warp of one channel, 8 KiB per block.
constexpr int kBoxTexels = 256;

// The precise fetch of one warp (all 32 lanes take part; lanes beyond the positions repeat a valid
// one): 4^rank taps at texel centres, weights as sv_cubic_weights, rows over x in an fma chain
// blended over y, then z (sv_fetch_cubic_precise's order). `box` is this warp's shared memory.
// kBox = false: always the per-thread texture taps (no shared memory, no warp-wide steps).
template <class V, int R, bool kBox>
__device__ __forceinline__ V fetch_precise(const Params& p, const float* x, V* box) {
  float w[3][4];
  int i[3] = {0, 0, 0};
  for (int d = 0; d < R; ++d) {
    const float fi = safe_floor(x[d]);
    cubic_weights(x[d] - fi, w[d]);
    i[d] = static_cast<int>(fi);
  }

  auto blend = [&](auto tap) {  // tap(kx, ky, kz) is the texel of taps kx, ky, kz (0..3)
    auto row = [&](int ky, int kz) {
      V r = vscale(w[0][0], tap(0, ky, kz));
      r = vfma(w[0][1], tap(1, ky, kz), r);
      r = vfma(w[0][2], tap(2, ky, kz), r);
      r = vfma(w[0][3], tap(3, ky, kz), r);
      return r;
    };
    if constexpr (R == 1) {
      return row(0, 0);
    } else if constexpr (R == 2) {
      V acc = vzero<V>();
      for (int ky = 0; ky < 4; ++ky) acc = vfma(w[1][ky], row(ky, 0), acc);
      return acc;
    } else {
      V acc = vzero<V>();
      for (int kz = 0; kz < 4; ++kz) {
        V plane = vzero<V>();
        for (int ky = 0; ky < 4; ++ky) plane = vfma(w[1][ky], row(ky, kz), plane);
        acc = vfma(w[2][kz], plane, acc);
      }
      return acc;
    }
  };

  if constexpr (kBox) {
    // The warp's box of unextended indices: [min i - 1, max i + 2] per axis.
    constexpr unsigned kAll = 0xffffffffu;
    int lo[3] = {0, 0, 0};
    int ext[3] = {1, 1, 1};
    long long volume = 1;
    for (int d = 0; d < R; ++d) {
      lo[d] = __reduce_min_sync(kAll, i[d]) - 1;
      // Capped so the product cannot overflow whatever the positions; a capped span means the
      // box does not fit.
      const long long span =
          min(static_cast<long long>(__reduce_max_sync(kAll, i[d])) + 3 - lo[d], kBoxTexels + 1LL);
      volume *= span;
      ext[d] = static_cast<int>(span);
    }
    if (volume <= kBoxTexels) {  // the same decision in every lane
      // Load the box, extending each index by the boundary mode, then read the taps from it
      // with box-relative indices (the extension is already in the box). Box entry j is
      // (bx, by, bz) with j = (bz ext1 + by) ext0 + bx; the quotients come from float
      // reciprocals: (j + 0.5) / e lies at least 0.5 / e from an integer, far more than the
      // float error for j < 256, so truncation gives the exact integer quotient.
      const float inv0 = 1.0f / static_cast<float>(ext[0]);
      const float inv01 = 1.0f / static_cast<float>(ext[0] * ext[1]);
      const int count = static_cast<int>(volume);
      for (int j = static_cast<int>(threadIdx.x & 31); j < count; j += 32) {
        const float fj = static_cast<float>(j) + 0.5f;
        const int q = static_cast<int>(fj * inv0);  // j / ext0
        const int bz = static_cast<int>(fj * inv01);
        const int bx = j - q * ext[0];
        const int by = q - bz * ext[1];
        box[j] = texel<V, R>(p.point, extend(lo[0] + bx, p.n[0], p.boundary),
                             extend(lo[1] + by, p.n[1], p.boundary),
                             extend(lo[2] + bz, p.n[2], p.boundary));
      }
      __syncwarp();
      const int rx = i[0] - 1 - lo[0];
      const int ry = R >= 2 ? i[1] - 1 - lo[1] : 0;
      const int rz = R >= 3 ? i[2] - 1 - lo[2] : 0;
      return blend([&](int kx, int ky, int kz) {
        return box[((rz + kz) * ext[1] + (ry + ky)) * ext[0] + rx + kx];
      });  // one position per thread: the box is not reused, no barrier after
    }
  }

  // Scattered positions: each thread's taps from the texture, the indices extended here.
  float c[3][4] = {};  // texel centres of the taps, texel units
  for (int d = 0; d < R; ++d) {
    if (i[d] >= 1 && i[d] + 2 < p.n[d]) {  // all four inside: no extension needed
      for (int k = 0; k < 4; ++k) c[d][k] = static_cast<float>(i[d] - 1 + k) + 0.5f;
    } else {
      for (int k = 0; k < 4; ++k)
        c[d][k] = static_cast<float>(extend(i[d] - 1 + k, p.n[d], p.boundary)) + 0.5f;
    }
  }
  return blend([&](int kx, int ky, int kz) {
    return texel_at<V, R>(p.point, c[0][kx], c[1][ky], c[2][kz]);
  });
}

template <class V, int R, Fetch F, bool kBox = false>
__global__ void __launch_bounds__(kBlock)
    sample_kernel(const Params p, const float* __restrict__ positions, std::size_t m,
                  float* __restrict__ out) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * kBlock + threadIdx.x;
  std::size_t at = i;
  if constexpr (kBox) {
    // The box works warp by warp: whole warps beyond m leave, the lanes beyond m of
    // the last warp evaluate its first position again and write nothing.
    const std::size_t first = i - (threadIdx.x & 31);
    if (first >= m) return;
    if (i >= m) at = first;
  } else {
    if (i >= m) return;
  }
  float x[3] = {0, 0, 0};  // texture order: x[0] is the last (fastest) array axis
  for (int d = 0; d < R; ++d) x[d] = positions[at * R + (R - 1 - d)];
  V v;
  if constexpr (F == Fetch::Nearest) {
    v = fetch_nearest<V, R>(p, x);
  } else if constexpr (F == Fetch::Linear) {
    v = fetch_linear<V, R>(p, x);
  } else if constexpr (F == Fetch::Cubic) {
    v = fetch_cubic<V, R>(p, x);
  } else if constexpr (kBox) {
    __shared__ V boxes[kBlock / 32][kBoxTexels];
    v = fetch_precise<V, R, true>(p, x, boxes[threadIdx.x / 32]);
    if (i >= m) return;
  } else {
    v = fetch_precise<V, R, false>(p, x, nullptr);
  }
  store(out + i * p.channels, v, p.channels);
}

template <class V, int R>
void launch(Fetch f, bool box, const Params& p, const float* positions, std::size_t m, float* out) {
  const unsigned blocks = static_cast<unsigned>((m + kBlock - 1) / kBlock);
  switch (f) {
    case Fetch::Nearest:
      sample_kernel<V, R, Fetch::Nearest><<<blocks, kBlock>>>(p, positions, m, out);
      break;
    case Fetch::Linear:
      sample_kernel<V, R, Fetch::Linear><<<blocks, kBlock>>>(p, positions, m, out);
      break;
    case Fetch::Cubic:
      sample_kernel<V, R, Fetch::Cubic><<<blocks, kBlock>>>(p, positions, m, out);
      break;
    case Fetch::Precise:
      if (box) {
        sample_kernel<V, R, Fetch::Precise, true><<<blocks, kBlock>>>(p, positions, m, out);
      } else {
        sample_kernel<V, R, Fetch::Precise, false><<<blocks, kBlock>>>(p, positions, m, out);
      }
      break;
  }
}

template <class V>
void launch_rank(std::size_t rank, Fetch f, bool box, const Params& p, const float* positions,
                 std::size_t m, float* out) {
  if (rank == 1) launch<V, 1>(f, box, p, positions, m, out);
  if (rank == 2) launch<V, 2>(f, box, p, positions, m, out);
  if (rank == 3) launch<V, 3>(f, box, p, positions, m, out);
}

// Spreads 3-channel points into float4 (the CUDA array has no 3-component float format).
__global__ void pad3_kernel(const float* __restrict__ src, float4* __restrict__ dst,
                            std::size_t points) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * kBlock + threadIdx.x;
  if (i >= points) return;
  dst[i] = make_float4(src[3 * i], src[3 * i + 1], src[3 * i + 2], 0.0f);
}

// Rounds `count` floats to half (the half coefficient format).
__global__ void to_half_kernel(const float* __restrict__ src, __half* __restrict__ dst,
                               std::size_t count) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * kBlock + threadIdx.x;
  if (i < count) dst[i] = __float2half_rn(src[i]);
}

// ---- owners ----

struct ArrayOwner {
  cudaArray_t array = nullptr;
  ArrayOwner() = default;
  ArrayOwner(const ArrayOwner&) = delete;
  ArrayOwner& operator=(const ArrayOwner&) = delete;
  ~ArrayOwner() {
    if (array) cudaFreeArray(array);
  }
};

struct TextureOwner {
  cudaTextureObject_t texture = 0;
  TextureOwner() = default;
  TextureOwner(const TextureOwner&) = delete;
  TextureOwner& operator=(const TextureOwner&) = delete;
  ~TextureOwner() {
    if (texture) cudaDestroyTextureObject(texture);
  }
};

// Whether the precise fetch may use the per-warp shared-memory box (reconstruct.cu's header):
// SPLINEVIEW_CUDA_PRECISE=box (the default) or texture (per-thread taps only), an experiment
// switch for the benchmark.
bool precise_box() {
  const char* env = std::getenv("SPLINEVIEW_CUDA_PRECISE");
  if (!env || !*env) return true;
  const std::string s(env);
  if (s == "box") return true;
  if (s == "texture") return false;
  throw Error("SPLINEVIEW_CUDA_PRECISE='" + s + "' is not 'box' or 'texture'");
}

int device_attribute(cudaDeviceAttr attr) {
  int device = 0, value = 0;
  check(cudaGetDevice(&device), "CUDA reconstruction: selecting the device");
  check(cudaDeviceGetAttribute(&value, attr, device), "CUDA reconstruction: querying the device");
  return value;
}

}  // namespace

struct SplineVolume::Impl {
  Layout layout;
  Boundary boundary = Boundary::Reflect;
  std::size_t vec = 1;  // floats per texel: 1, 2 or 4
  bool precise_box = true;
  ArrayOwner array;  // declared before the textures, so destroyed after them
  TextureOwner filtered, point;
  Params params{};
};

namespace {

// Checks the layout and the device's texture limits; throws sv::Error naming what is too big.
void check_fits(const Layout& layout) {
  const std::size_t rank = layout.rank();
  std::vector<std::size_t> tex(layout.dims.rbegin(), layout.dims.rend());  // x, y, z
  std::vector<int> limit;
  if (rank == 1) {
    limit = {device_attribute(cudaDevAttrMaxTexture1DWidth)};
  } else if (rank == 2) {
    limit = {device_attribute(cudaDevAttrMaxTexture2DWidth),
             device_attribute(cudaDevAttrMaxTexture2DHeight)};
  } else {
    limit = {device_attribute(cudaDevAttrMaxTexture3DWidth),
             device_attribute(cudaDevAttrMaxTexture3DHeight),
             device_attribute(cudaDevAttrMaxTexture3DDepth)};
  }
  for (std::size_t d = 0; d < rank; ++d)
    if (tex[d] > static_cast<std::size_t>(limit[d]))
      throw Error("CUDA reconstruction: a " + describe_shape(layout.dims, layout.channels) +
                  " array exceeds this device's " + std::to_string(rank) + "-D texture limit of " +
                  std::to_string(limit[d]) + " texels along axis " + std::to_string(rank - 1 - d));
}

void build(SplineVolume::Impl& v, const float* device_data, CoefficientFormat coefficients) {
  const Layout& l = v.layout;
  const std::size_t rank = l.rank();
  const std::size_t points = l.points();
  v.vec = l.channels == 3 ? 4 : l.channels;
  v.precise_box = precise_box();

  // 3-channel data is spread to float4 first; everything else is copied as it is.
  DeviceBuffer padded;
  const float* src = device_data;
  if (l.channels == 3) {
    padded = DeviceBuffer(points * 4);
    pad3_kernel<<<static_cast<unsigned>((points + kBlock - 1) / kBlock), kBlock>>>(
        device_data, reinterpret_cast<float4*>(padded.data()), points);
    check_launch("CUDA reconstruction: padding 3 channels to 4");
    src = padded.data();
  }

  // Half coefficients: rounded once here; the texture unit promotes them to float on fetch.
  const bool half = coefficients == CoefficientFormat::Half;
  std::size_t texel_bytes = v.vec * sizeof(float);
  void* halves = nullptr;
  if (half) {
    const std::size_t count = points * v.vec;
    check(cudaMalloc(&halves, count * sizeof(__half)),
          "CUDA reconstruction: allocating the half coefficients");
    to_half_kernel<<<static_cast<unsigned>((count + kBlock - 1) / kBlock), kBlock>>>(
        src, static_cast<__half*>(halves), count);
    check_launch("CUDA reconstruction: rounding the coefficients to half");
    texel_bytes = v.vec * sizeof(__half);
  }

  std::size_t n[3] = {1, 1, 1};  // texture order
  for (std::size_t d = 0; d < rank; ++d) n[d] = l.dims[rank - 1 - d];
  const cudaChannelFormatDesc format = half         ? (v.vec == 1   ? cudaCreateChannelDescHalf()
                                                       : v.vec == 2 ? cudaCreateChannelDescHalf2()
                                                                    : cudaCreateChannelDescHalf4())
                                       : v.vec == 1 ? cudaCreateChannelDesc<float>()
                                       : v.vec == 2 ? cudaCreateChannelDesc<float2>()
                                                    : cudaCreateChannelDesc<float4>();
  // Height and depth 0 make a 1-D or 2-D array.
  const cudaExtent extent = make_cudaExtent(n[0], rank >= 2 ? n[1] : 0, rank >= 3 ? n[2] : 0);
  check(cudaMalloc3DArray(&v.array.array, &format, extent),
        "CUDA reconstruction: allocating the coefficient array");

  cudaMemcpy3DParms copy{};
  copy.srcPtr =
      make_cudaPitchedPtr(half ? halves : const_cast<float*>(src), n[0] * texel_bytes, n[0], n[1]);
  copy.dstArray = v.array.array;
  copy.extent = make_cudaExtent(n[0], n[1], n[2]);
  copy.kind = cudaMemcpyDeviceToDevice;
  const cudaError_t copied = cudaMemcpy3D(&copy);
  if (halves) cudaFree(halves);  // waits for the copy
  check(copied, "CUDA reconstruction: copying the coefficients into the array");

  cudaResourceDesc res{};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = v.array.array;

  cudaTextureDesc td{};
  const cudaTextureAddressMode mode = v.boundary == Boundary::Reflect    ? cudaAddressModeMirror
                                      : v.boundary == Boundary::Periodic ? cudaAddressModeWrap
                                                                         : cudaAddressModeClamp;
  for (auto& a : td.addressMode) a = mode;
  td.filterMode = cudaFilterModeLinear;
  td.readMode = cudaReadModeElementType;
  td.normalizedCoords = 1;
  check(cudaCreateTextureObject(&v.filtered.texture, &res, &td, nullptr),
        "CUDA reconstruction: creating the filtered texture");

  cudaTextureDesc tp{};
  for (auto& a : tp.addressMode) a = cudaAddressModeClamp;
  tp.filterMode = cudaFilterModePoint;
  tp.readMode = cudaReadModeElementType;
  tp.normalizedCoords = 0;
  check(cudaCreateTextureObject(&v.point.texture, &res, &tp, nullptr),
        "CUDA reconstruction: creating the point-sampled texture");

  Params& p = v.params;
  for (int d = 0; d < 3; ++d) {
    p.n[d] = static_cast<int>(n[d]);
    p.inv[d] = 1.0f / static_cast<float>(n[d]);
  }
  p.boundary = boundary_code(v.boundary);
  p.channels = static_cast<int>(l.channels);
  p.filtered = v.filtered.texture;
  p.point = v.point.texture;

  // The temporary `padded` is freed on return; cudaFree waits for the copies that read it.
}

}  // namespace

SplineVolume::SplineVolume(const float* device_data, const Layout& layout, Boundary boundary,
                           CoefficientFormat format) {
  layout.check("CUDA reconstruction");
  boundary_code(boundary);
  require("CUDA reconstruction");
  if (!device_data) throw Error("CUDA reconstruction: the coefficient pointer is null");
  check_fits(layout);
  auto impl = std::make_unique<Impl>();
  impl->layout = layout;
  impl->boundary = boundary;
  build(*impl, device_data, format);
  impl_ = std::move(impl);
}

SplineVolume::SplineVolume(const ArrayF& host, Boundary boundary, CoefficientFormat format) {
  const Layout layout = Layout::of(host);
  layout.check("CUDA reconstruction");
  boundary_code(boundary);
  require("CUDA reconstruction");
  check_fits(layout);
  DeviceBuffer staging(host.size());
  staging.upload(host.data(), host.size());
  auto impl = std::make_unique<Impl>();
  impl->layout = layout;
  impl->boundary = boundary;
  build(*impl, staging.data(), format);
  impl_ = std::move(impl);
}

SplineVolume::~SplineVolume() = default;

const Layout& SplineVolume::layout() const {
  return impl_->layout;
}
Boundary SplineVolume::boundary() const {
  return impl_->boundary;
}

void SplineVolume::sample(Fetch fetch, const float* device_positions, std::size_t m,
                          float* device_out) const {
  if (fetch != Fetch::Nearest && fetch != Fetch::Linear && fetch != Fetch::Cubic &&
      fetch != Fetch::Precise)
    throw Error("CUDA reconstruction: unknown fetch");
  if (m == 0) return;
  if (!device_positions || !device_out)
    throw Error("CUDA reconstruction: a position or output pointer is null");
  const std::size_t max_blocks = 0x7fffffffu;
  if (m > max_blocks * kBlock)
    throw Error("CUDA reconstruction: " + std::to_string(m) +
                " positions are more than one launch covers");
  const Impl& v = *impl_;
  const std::size_t rank = v.layout.rank();
  if (v.vec == 1)
    launch_rank<float>(rank, fetch, v.precise_box, v.params, device_positions, m, device_out);
  if (v.vec == 2)
    launch_rank<float2>(rank, fetch, v.precise_box, v.params, device_positions, m, device_out);
  if (v.vec == 4)
    launch_rank<float4>(rank, fetch, v.precise_box, v.params, device_positions, m, device_out);
  check_launch("CUDA reconstruction: launching the kernel");
}

void sample(const ArrayF& coefficients, Boundary boundary, Fetch fetch,
            const std::vector<double>& positions, double* out) {
  const Layout layout = Layout::of(coefficients);
  layout.check("CUDA reconstruction");
  const std::size_t rank = layout.rank();
  if (positions.size() % rank != 0)
    throw Error("CUDA reconstruction: " + std::to_string(positions.size()) +
                " coordinates is not a multiple of the array rank " + std::to_string(rank));
  const std::size_t m = positions.size() / rank;
  // The kernels clamp coordinates to +-2^30 to keep their integer indices in range; reject what
  // that would change, as the CPU reference rejects non-finite coordinates.
  std::vector<float> pf(positions.size());
  for (std::size_t i = 0; i < positions.size(); ++i) {
    if (!(std::fabs(positions[i]) < 1073741824.0))
      throw Error("CUDA reconstruction: position " + std::to_string(i / rank) +
                  " has a non-finite coordinate or one beyond +-2^30 (" +
                  std::to_string(positions[i]) + ")");
    pf[i] = static_cast<float>(positions[i]);
  }
  if (m != 0 && !out) throw Error("CUDA reconstruction: the output pointer is null");
  const SplineVolume volume(coefficients, boundary);
  if (m == 0) return;
  DeviceBuffer pos(pf.size());
  pos.upload(pf.data(), pf.size());
  DeviceBuffer result(m * layout.channels);
  volume.sample(fetch, pos.data(), m, result.data());
  synchronize("CUDA reconstruction");
  std::vector<float> host(result.size());
  result.download(host.data(), host.size());
  for (std::size_t i = 0; i < host.size(); ++i) out[i] = host[i];
}

}  // namespace sv::cuda
