// The spline evaluator of cuda_ndimage.h: one thread per output point, its position from a
// generator (coordinate array, per-axis tables, affine matrix), per-axis weights and indices as
// sv::axis_weights (lib/src/sampler.cpp) computes them, products summed in sv::sample's order, in
// double. Included by ndimage_sample_float.cu and ndimage_sample_double.cu (one instantiation set
// per data type, so the two compile in parallel).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "check.cuh"
#include "splineview/bspline.h"
#include "splineview/cuda_ndimage.h"
#include "splineview/error.h"

namespace sv::cuda::nd::detail {

// sv::Boundary's enumerators as kernel codes.
constexpr int kReflect = static_cast<int>(Boundary::Reflect);
constexpr int kMirror = static_cast<int>(Boundary::Mirror);
constexpr int kPeriodic = static_cast<int>(Boundary::Periodic);
constexpr int kWrap = static_cast<int>(Boundary::Wrap);
constexpr int kNearest = static_cast<int>(Boundary::Nearest);
constexpr int kConstant = static_cast<int>(Boundary::Constant);
constexpr int kGridConstant = static_cast<int>(Boundary::GridConstant);

// sv::extend_index for every mode (-1: GridConstant outside).
__device__ __forceinline__ long long extend_any(long long k, long long n, int mode) {
  if (k >= 0 && k < n) return k;
  if (mode == kReflect) {
    const long long p = 2 * n;
    long long r = k % p;
    if (r < 0) r += p;
    return r < n ? r : p - 1 - r;
  }
  if (mode == kPeriodic) {
    const long long r = k % n;
    return r < 0 ? r + n : r;
  }
  if (mode == kNearest) return k < 0 ? 0 : n - 1;
  if (mode == kGridConstant) return -1;
  if (n == 1) return 0;  // Mirror, Wrap, Constant
  const long long p = 2 * n - 2;
  long long r = k % p;
  if (r < 0) r += p;
  return r < n ? r : p - r;
}

// scipy's position mappings (sampler.cpp: wrap_position, mirror_position, reflect_position).
__device__ __forceinline__ double wrap_position(double x, long long n) {
  if (x >= 0 && x <= static_cast<double>(n - 1)) return x;
  if (n <= 1) return 0;
  const double p = static_cast<double>(n - 1);
  if (x < 0) return x + p * (trunc(-x / p) + 1);
  return x - p * trunc(x / p);
}

__device__ __forceinline__ double mirror_position(double x, long long n) {
  if (x >= 0 && x < static_cast<double>(n)) return x;
  if (n <= 1) return 0;
  const double p = static_cast<double>(2 * n - 2);
  if (x < 0) {
    x += p * trunc(-x / p);
    return x <= static_cast<double>(1 - n) ? x + p : -x;
  }
  x -= p * trunc(x / p);
  return x >= static_cast<double>(n) ? p - x : x;
}

__device__ __forceinline__ double reflect_position(double x, long long n) {
  if (x >= 0 && x < static_cast<double>(n)) return x;
  if (n <= 1) return 0;
  const double p = static_cast<double>(2 * n);
  if (x < 0) {
    if (x < -p) x += p * trunc(-x / p);
    return x < static_cast<double>(-n) ? x + p : -x - 1;
  }
  x -= p * trunc(x / p);
  return x >= static_cast<double>(n) ? p - x - 1 : x;
}

// bspline_weights (lib/src/bspline.cpp) for a compile-time degree: Cox-de Boor, no cancellation.
template <int N>
__device__ __forceinline__ long long weights(double x, double* w) {
  const double t = (N % 2 == 0) ? x + 0.5 : x;
  const double fl = floor(t);
  double u = t - fl;
  if (u >= 1.0) u = 0.0;
  w[0] = 1.0;
#pragma unroll
  for (int d = 1; d <= N; ++d) {
    const double inv = 1.0 / static_cast<double>(d);
    double prev = w[0];
    w[0] = (1.0 - u) * prev * inv;
#pragma unroll
    for (int j = 1; j < d; ++j) {
      const double cur = w[j];
      w[j] =
          ((u + static_cast<double>(d - j)) * prev + (static_cast<double>(j + 1) - u) * cur) * inv;
      prev = cur;
    }
    w[d] = u * prev * inv;
  }
  return static_cast<long long>(fl) - N / 2;
}

// The weights of the first derivative from those of one degree lower (bspline_weights_frac's
// step): beta_n'(t) = beta_{n-1}(t + 1/2) - beta_{n-1}(t - 1/2). w holds N entries on entry.
template <int N>
__device__ __forceinline__ void differentiate(double* w) {
  w[N] = w[N - 1];
#pragma unroll
  for (int j = N - 1; j >= 1; --j) w[j] = w[j - 1] - w[j];
  w[0] = -w[0];
}

// First tap and weights at x (of the derivative when `derivative`): for the derivative, the
// degree N-1 weights at the same offset u, then one difference step (as bspline_weights).
template <int N>
__device__ __forceinline__ long long weights_or_derivative(double x, double* w, bool derivative) {
  if constexpr (N >= 1) {
    if (derivative) {
      const double t = (N % 2 == 0) ? x + 0.5 : x;
      const double fl = floor(t);
      double u = t - fl;
      if (u >= 1.0) u = 0.0;
      constexpr int M = N - 1;
      w[0] = 1.0;
#pragma unroll
      for (int d = 1; d <= M; ++d) {
        const double inv = 1.0 / static_cast<double>(d);
        double prev = w[0];
        w[0] = (1.0 - u) * prev * inv;
#pragma unroll
        for (int j = 1; j < d; ++j) {
          const double cur = w[j];
          w[j] =
              ((u + static_cast<double>(d - j)) * prev + (static_cast<double>(j + 1) - u) * cur) *
              inv;
          prev = cur;
        }
        w[d] = u * prev * inv;
      }
      differentiate<N>(w);
      return static_cast<long long>(fl) - N / 2;
    }
  }
  return weights<N>(x, w);
}

struct Geometry {
  long long n[3];
  long long stride[3];
};

// Output index p -> multi-index of an array of rank r with extents od (C order).
__device__ __forceinline__ void unravel(long long p, int r, const long long* od, long long* o) {
  for (int j = r - 1; j > 0; --j) {
    o[j] = p % od[j];
    p /= od[j];
  }
  o[0] = p;
}

template <class C>
struct CoordGen {
  const C* c;
  long long m;
  template <int D>
  __device__ __forceinline__ void operator()(long long p, double* pos) const {
#pragma unroll
    for (int d = 0; d < D; ++d) pos[d] = static_cast<double>(c[d * m + p]);
  }
};

struct TableGen {
  const double* t;
  long long off[3];
  long long od[3];
  template <int D>
  __device__ __forceinline__ void operator()(long long p, double* pos) const {
    long long o[3];
    unravel(p, D, od, o);
#pragma unroll
    for (int d = 0; d < D; ++d) pos[d] = t[off[d] + o[d]];
  }
};

struct AffineGen {
  double m[9];
  double offset[3];
  long long od[3];
  int out_rank;
  long long out_first;  // added to output index 0 (an out-of-core slab's first slice)
  template <int D>
  __device__ __forceinline__ void operator()(long long p, double* pos) const {
    long long o[3] = {0, 0, 0};
    unravel(p, out_rank, od, o);
    o[0] += out_first;
#pragma unroll
    for (int d = 0; d < D; ++d) {
      // scipy's sum: from 0, column by column, then the offset; _rn: no fused multiply-add, so
      // every position is scipy's to the last bit (order-0 ties depend on it).
      double s = 0.0;
      for (int j = 0; j < out_rank; ++j)
        s = __dadd_rn(s, __dmul_rn(static_cast<double>(o[j]), m[d * out_rank + j]));
      pos[d] = __dadd_rn(s, offset[d]);
    }
  }
};

template <int N, int D, class T, class Gen>
__global__ void __launch_bounds__(256)
    sample_kernel(const T* __restrict__ c, Geometry g, Gen gen, long long m, T* __restrict__ out,
                  int mode, double cval, double shift, int derivative_axis, double win_first,
                  long long win_n) {
  constexpr int K = N + 1;
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long p = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; p < m;
       p += step) {
    double pos[D];
    gen.template operator()<D>(p, pos);
    double w[D][K];
    long long idx[D][K];
    double all = 1.0, inside = 1.0;
    bool outside = false, bad = false;
#pragma unroll
    for (int d = 0; d < D; ++d) {
      double x = pos[d];
      // The CPU refuses such positions; here the point becomes NaN (no index is formed).
      if (!(fabs(x) < 1e12)) {
        bad = true;
        x = 0.0;
      }
      // An out-of-core window along axis 0 (Spline::window_extent): the position is the whole
      // array's; its folds and the Constant test use the array's extent, then it moves into the
      // window (exact: window_first is an integer).
      if (d == 0 && win_n > 0) {
        if (mode == kWrap) x = wrap_position(x, win_n);
        if (N == 0 && mode == kMirror) x = mirror_position(x, win_n);
        if (N == 0 && mode == kReflect) x = reflect_position(x, win_n);
        if (mode == kConstant && !(x >= 0.0 && x <= static_cast<double>(win_n - 1))) outside = true;
        x = __dsub_rn(x, win_first);
      }
      x = __dadd_rn(x, shift);
      const long long n = g.n[d];
      if (mode == kWrap) x = wrap_position(x, n);
      if (N == 0 && mode == kMirror) x = mirror_position(x, n);
      if (N == 0 && mode == kReflect) x = reflect_position(x, n);
      if (mode == kConstant && !(x >= 0.0 && x <= static_cast<double>(n - 1))) outside = true;
      const long long first = weights_or_derivative<N>(x, w[d], d == derivative_axis);
      double sum_all = 0.0, sum_in = 0.0;
#pragma unroll
      for (int j = 0; j < K; ++j) {
        sum_all += w[d][j];
        const long long k = extend_any(first + j, n, mode);
        if (k < 0) {
          w[d][j] = 0.0;
          idx[d][j] = 0;
        } else {
          sum_in += w[d][j];
          idx[d][j] = k * g.stride[d];
        }
      }
      all *= sum_all;
      inside *= sum_in;
    }
    double acc = 0.0;
    if (bad) {
      acc = nan("");
    } else if (outside) {
      acc = derivative_axis >= 0 ? 0.0 : cval;
    } else {
      if (D == 1) {
#pragma unroll
        for (int a = 0; a < K; ++a) acc += w[0][a] * static_cast<double>(c[idx[0][a]]);
      } else if (D == 2) {
        for (int a = 0; a < K; ++a) {
          double row = 0.0;
          const T* base = c + idx[0][a];
#pragma unroll
          for (int b = 0; b < K; ++b) row += w[D - 1][b] * static_cast<double>(base[idx[D - 1][b]]);
          acc += w[0][a] * row;
        }
      } else {
        for (int a = 0; a < K; ++a) {
          double plane = 0.0;
          for (int b = 0; b < K; ++b) {
            double row = 0.0;
            const T* base = c + idx[0][a] + idx[1 % D][b];
#pragma unroll
            for (int e = 0; e < K; ++e)
              row += w[D - 1][e] * static_cast<double>(base[idx[D - 1][e]]);
            plane += w[1 % D][b] * row;
          }
          acc += w[0][a] * plane;
        }
      }
      if (mode == kGridConstant && cval != 0.0) acc += cval * (all - inside);
    }
    out[p] = static_cast<T>(acc);
  }
}

inline Geometry geometry_of(const std::vector<std::size_t>& dims) {
  Geometry g{};
  long long s = 1;
  for (std::size_t d = dims.size(); d-- > 0;) {
    g.n[d] = static_cast<long long>(dims[d]);
    g.stride[d] = s;
    s *= static_cast<long long>(dims[d]);
  }
  return g;
}

inline void check_spline(const Spline& s, const char* what) {
  if (s.dims.empty() || s.dims.size() > 3)
    throw Error(std::string(what) + ": the array must have 1, 2 or 3 dimensions, not " +
                std::to_string(s.dims.size()));
  for (std::size_t n : s.dims)
    if (n == 0) throw Error(std::string(what) + ": the array has an empty axis");
  check_degree(s.degree, 0, kMaxDegree, "spline order");
  if (s.derivative_axis >= static_cast<int>(s.dims.size()))
    throw Error(std::string(what) + ": derivative axis " + std::to_string(s.derivative_axis) +
                " of a " + std::to_string(s.dims.size()) + "-D array");
  if (s.derivative_axis >= 0 && s.degree == 0)
    throw Error(std::string(what) + ": order 0 (nearest) has no derivative");
  if (!s.coefficients) throw Error(std::string(what) + ": no coefficient array");
}

template <int N, int D, class T, class Gen>
void launch(const Spline& s, const Gen& gen, long long m, T* out, Stream stream) {
  if (m <= 0) return;
  const long long blocks = std::min<long long>((m + 255) / 256, 1 << 20);
  sample_kernel<N, D, T, Gen>
      <<<static_cast<unsigned>(blocks), 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(
          static_cast<const T*>(s.coefficients), geometry_of(s.dims), gen, m, out,
          static_cast<int>(s.mode), s.cval, s.shift, s.derivative_axis, s.window_first,
          s.window_extent);
  sv::cuda::detail::check_launch("CUDA spline evaluation: launching the kernel");
}

template <int D, class T, class Gen>
void launch_degree(const Spline& s, const Gen& gen, long long m, T* out, Stream stream) {
  switch (s.degree) {
    case 0:
      return launch<0, D>(s, gen, m, out, stream);
    case 1:
      return launch<1, D>(s, gen, m, out, stream);
    case 2:
      return launch<2, D>(s, gen, m, out, stream);
    case 3:
      return launch<3, D>(s, gen, m, out, stream);
    case 4:
      return launch<4, D>(s, gen, m, out, stream);
    case 5:
      return launch<5, D>(s, gen, m, out, stream);
    case 6:
      return launch<6, D>(s, gen, m, out, stream);
    default:
      return launch<7, D>(s, gen, m, out, stream);
  }
}

template <class T, class Gen>
void dispatch(const Spline& s, const Gen& gen, long long m, T* out, Stream stream) {
  switch (s.dims.size()) {
    case 1:
      return launch_degree<1>(s, gen, m, out, stream);
    case 2:
      return launch_degree<2>(s, gen, m, out, stream);
    default:
      return launch_degree<3>(s, gen, m, out, stream);
  }
}

// The three public evaluators for one data type T.
template <class T, class C>
void map_coordinates_impl(const Spline& s, const C* coordinates, std::size_t m, T* out,
                          Stream stream) {
  check_spline(s, "map_coordinates (CUDA)");
  if (m == 0) return;
  dispatch(s, CoordGen<C>{coordinates, static_cast<long long>(m)}, static_cast<long long>(m), out,
           stream);
}

// Device copy of the position tables, freed in stream order after the kernel.
template <class T>
void sample_tables_impl(const Spline& s, const std::vector<std::vector<double>>& tables, T* out,
                        Stream stream) {
  check_spline(s, "zoom/shift (CUDA)");
  if (tables.size() != s.dims.size())
    throw Error("zoom/shift (CUDA): " + std::to_string(tables.size()) + " position tables for a " +
                std::to_string(s.dims.size()) + "-D array");
  TableGen gen{};
  std::vector<double> flat;
  long long m = 1;
  for (std::size_t d = 0; d < tables.size(); ++d) {
    gen.off[d] = static_cast<long long>(flat.size());
    gen.od[d] = static_cast<long long>(tables[d].size());
    m *= gen.od[d];
    flat.insert(flat.end(), tables[d].begin(), tables[d].end());
  }
  if (m == 0) return;
  const cudaStream_t st = reinterpret_cast<cudaStream_t>(stream);
  void* dev = nullptr;
  using sv::cuda::detail::check;
  check(cudaMallocAsync(&dev, flat.size() * sizeof(double), st),
        "zoom/shift (CUDA): allocating the position tables");
  check(cudaMemcpyAsync(dev, flat.data(), flat.size() * sizeof(double), cudaMemcpyHostToDevice, st),
        "zoom/shift (CUDA): copying the position tables");
  gen.t = static_cast<const double*>(dev);
  try {
    dispatch(s, gen, m, out, stream);
  } catch (...) {
    cudaFreeAsync(dev, st);
    throw;
  }
  check(cudaFreeAsync(dev, st), "zoom/shift (CUDA): freeing the position tables");
  // The host vector must outlive the asynchronous copy from pageable memory: cudaMemcpyAsync
  // from pageable memory returns only once the data is staged, so `flat` may go now.
}

template <class T>
void sample_affine_impl(const Spline& s, const std::vector<double>& matrix,
                        const std::vector<double>& offset, const std::vector<std::size_t>& out_dims,
                        T* out, Stream stream, std::size_t out_first) {
  check_spline(s, "affine_transform (CUDA)");
  const std::size_t r = out_dims.size(), in = s.dims.size();
  if (r < 1 || r > 3)
    throw Error("affine_transform (CUDA): the output must have 1, 2 or 3 dimensions, not " +
                std::to_string(r));
  if (matrix.size() != in * r || offset.size() != in)
    throw Error("affine_transform (CUDA): a " + std::to_string(in) + " x " + std::to_string(r) +
                " matrix and " + std::to_string(in) + " offsets are needed");
  AffineGen gen{};
  long long m = 1;
  for (std::size_t j = 0; j < r; ++j) {
    gen.od[j] = static_cast<long long>(out_dims[j]);
    m *= gen.od[j];
  }
  for (std::size_t i = 0; i < matrix.size(); ++i) gen.m[i] = matrix[i];
  for (std::size_t d = 0; d < in; ++d) gen.offset[d] = offset[d];
  gen.out_rank = static_cast<int>(r);
  gen.out_first = static_cast<long long>(out_first);
  dispatch(s, gen, m, out, stream);
}

}  // namespace sv::cuda::nd::detail

// The public evaluators, instantiated per data type in ndimage_sample_<T>.cu.
namespace sv::cuda::nd {

template <class T, class C>
void map_coordinates(const Spline& s, const C* coordinates, std::size_t m, T* out, Stream stream) {
  detail::map_coordinates_impl<T, C>(s, coordinates, m, out, stream);
}

template <class T>
void sample_tables(const Spline& s, const std::vector<std::vector<double>>& tables, T* out,
                   Stream stream) {
  detail::sample_tables_impl<T>(s, tables, out, stream);
}

template <class T>
void sample_affine(const Spline& s, const std::vector<double>& matrix,
                   const std::vector<double>& offset, const std::vector<std::size_t>& out_dims,
                   T* out, Stream stream, std::size_t out_first) {
  detail::sample_affine_impl<T>(s, matrix, offset, out_dims, out, stream, out_first);
}

}  // namespace sv::cuda::nd

#define SV_ND_SAMPLE_INSTANTIATE(T)                                                               \
  template void sv::cuda::nd::map_coordinates<T, float>(const Spline&, const float*, std::size_t, \
                                                        T*, Stream);                              \
  template void sv::cuda::nd::map_coordinates<T, double>(const Spline&, const double*,            \
                                                         std::size_t, T*, Stream);                \
  template void sv::cuda::nd::sample_tables<T>(                                                   \
      const Spline&, const std::vector<std::vector<double>>&, T*, Stream);                        \
  template void sv::cuda::nd::sample_affine<T>(                                                   \
      const Spline&, const std::vector<double>&, const std::vector<double>&,                      \
      const std::vector<std::size_t>&, T*, Stream, std::size_t);
