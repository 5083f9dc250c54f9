// GRBF on CUDA (cuda_grbf.h): banded matrix passes along each axis for the solve (the axes'
// inverses) and the grid evaluation (the Gaussian's samples), a thread per point elsewhere.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "check.cuh"
#include "splineview/cuda_grbf.h"
#include "splineview/cuda_memory.h"
#include "splineview/error.h"

namespace sv::cuda {
namespace {

using detail::check;
using detail::check_launch;

template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(std::size_t n, const char* what) : n_(n) {
    if (n == 0) return;
    check(cudaMalloc(&p_, n * sizeof(T)), what);
    detail::note_alloc(n * sizeof(T));
  }
  ~DeviceArray() {
    if (p_) {
      cudaFree(p_);
      detail::note_free(n_ * sizeof(T));
    }
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* get() { return p_; }
  const T* get() const { return p_; }
  void upload(const T* host, std::size_t n, const char* what) {
    check(cudaMemcpy(p_, host, n * sizeof(T), cudaMemcpyHostToDevice), what);
  }
  void download(T* host, std::size_t n, const char* what) const {
    check(cudaMemcpy(host, p_, n * sizeof(T), cudaMemcpyDeviceToHost), what);
  }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

// A matrix of `rows` rows over `cols` columns with, per row, `count[o]` consecutive entries
// from column first[o] (row-major, `band` slots a row).
struct Banded {
  std::size_t rows = 0, cols = 0;
  int band = 0;
  std::vector<int> first, count;
  std::vector<double> w;
};

// The inverse of one axis's matrix, its rows trimmed at both ends below
// u max|A^-1| / (2 n) (cuda_grbf.h).
Banded inverse_band(std::size_t n, double sigma, double ridge, double unit_roundoff) {
  const std::vector<double> inv = gauss_inverse<double>(grbf_axis_matrix(n, sigma, ridge), n);
  double big = 0;
  for (double v : inv) big = std::max(big, std::fabs(v));
  const double drop = unit_roundoff * big / (2.0 * static_cast<double>(n));
  Banded b;
  b.rows = b.cols = n;
  b.first.resize(n);
  b.count.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t lo = 0, hi = n;
    while (lo < i && std::fabs(inv[i * n + lo]) <= drop) ++lo;
    while (hi > i + 1 && std::fabs(inv[i * n + hi - 1]) <= drop) --hi;
    b.first[i] = static_cast<int>(lo);
    b.count[i] = static_cast<int>(hi - lo);
    b.band = std::max(b.band, b.count[i]);
  }
  b.w.assign(n * static_cast<std::size_t>(b.band), 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (int j = 0; j < b.count[i]; ++j)
      b.w[i * b.band + j] = inv[i * n + b.first[i] + static_cast<std::size_t>(j)];
  return b;
}

// The inverses already computed (the same (n, sigma, ridge, precision) in every call).
const Banded& cached_inverse(std::size_t n, double sigma, double ridge, double unit_roundoff,
                             double* ms) {
  static std::mutex mutex;
  static std::map<std::tuple<std::size_t, double, double, double>, Banded> cache;
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_tuple(n, sigma, ridge, unit_roundoff);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  const auto t0 = std::chrono::steady_clock::now();
  if (cache.size() > 64) cache.clear();
  it = cache.emplace(key, inverse_band(n, sigma, ridge, unit_roundoff)).first;
  if (ms)
    *ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return it->second;
}

// The Gaussian's samples at `positions` over an axis of n samples, kept within `radius`
// (the box of grbf.h's truncated sum).
Banded gauss_band(const std::vector<double>& positions, std::size_t n, double sigma,
                  double radius) {
  Banded b;
  b.rows = positions.size();
  b.cols = n;
  b.first.resize(b.rows);
  b.count.resize(b.rows);
  const double c = -0.5 / (sigma * sigma);
  std::vector<std::vector<double>> rows(b.rows);
  for (std::size_t o = 0; o < b.rows; ++o) {
    const double x = positions[o];
    if (!std::isfinite(x))
      throw Error("CUDA GRBF: the grid position " + std::to_string(o) + " is not finite");
    const double lo = std::max(0.0, std::ceil(x - radius));
    const double hi = std::min(static_cast<double>(n) - 1, std::floor(x + radius));
    b.first[o] = 0;
    b.count[o] = 0;
    if (lo > hi) continue;
    b.first[o] = static_cast<int>(lo);
    for (double k = lo; k <= hi; k += 1) {
      const double t = x - k;
      rows[o].push_back(std::exp(c * t * t));
    }
    b.count[o] = static_cast<int>(rows[o].size());
    b.band = std::max(b.band, b.count[o]);
  }
  b.band = std::max(b.band, 1);
  b.w.assign(b.rows * static_cast<std::size_t>(b.band), 0.0);
  for (std::size_t o = 0; o < b.rows; ++o)
    std::copy(rows[o].begin(), rows[o].end(), b.w.begin() + o * b.band);
  return b;
}

// out[(ob, o, i)] = sum_j w[o][j] in[(ob, first[o] + j, i)], the array viewed as
// outer x n x inner; sums in double.
template <class T>
__global__ void apply_band(const T* __restrict__ in, T* __restrict__ out, std::size_t outer,
                           std::size_t n_in, std::size_t n_out, std::size_t inner,
                           const int* __restrict__ first, const int* __restrict__ count,
                           const double* __restrict__ w, int band) {
  const std::size_t total = outer * n_out * inner;
  for (std::size_t idx = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
       idx < total; idx += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t i = idx % inner;
    const std::size_t o = (idx / inner) % n_out;
    const std::size_t ob = idx / (inner * n_out);
    const int k0 = first[o], kc = count[o];
    const T* src = in + (ob * n_in + static_cast<std::size_t>(k0)) * inner + i;
    const double* wr = w + o * static_cast<std::size_t>(band);
    double s = 0;
    for (int j = 0; j < kc; ++j) s = fma(wr[j], static_cast<double>(src[j * inner]), s);
    out[idx] = static_cast<T>(s);
  }
}

constexpr int kMaxTaps = 192;  // taps per axis of the point kernel (2 R + 1)

struct PointSpline {
  int rank;
  long long n[3];  // padded to three axes
  double coef[3];  // -1 / (2 sigma^2)
  double radius[3];
  int channels;
};

template <class T>
__global__ void sample_points(const T* __restrict__ w, PointSpline s,
                              const double* __restrict__ positions, std::size_t m,
                              double* __restrict__ out) {
  const std::size_t p = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (p >= m) return;
  double x[3] = {0, 0, 0};
  bool finite = true;
  for (int d = 0; d < s.rank; ++d) {
    x[3 - s.rank + d] = positions[p * s.rank + d];
    finite = finite && isfinite(positions[p * s.rank + d]);
  }
  double acc[4] = {0, 0, 0, 0};
  long long lo[3], hi[3];
  for (int d = 0; d < 3; ++d) {
    if (d < 3 - s.rank) {
      lo[d] = hi[d] = 0;
      continue;
    }
    const double a = ceil(x[d] - s.radius[d]), b = floor(x[d] + s.radius[d]);
    lo[d] = a < 0 ? 0 : static_cast<long long>(fmin(a, static_cast<double>(s.n[d])));
    hi[d] =
        b > static_cast<double>(s.n[d] - 1) ? s.n[d] - 1 : static_cast<long long>(fmax(b, -1.0));
  }
  if (!finite) {
    for (int c = 0; c < s.channels; ++c) out[p * s.channels + c] = nan("");
    return;
  }
  double gx[kMaxTaps];
  for (long long k = lo[2]; k <= hi[2]; ++k) {
    const double t = x[2] - static_cast<double>(k);
    gx[k - lo[2]] = s.rank >= 1 ? exp(s.coef[2] * t * t) : 1.0;
  }
  for (long long kz = lo[0]; kz <= hi[0]; ++kz) {
    const double tz = x[0] - static_cast<double>(kz);
    const double gz = s.rank == 3 ? exp(s.coef[0] * tz * tz) : 1.0;
    for (long long ky = lo[1]; ky <= hi[1]; ++ky) {
      const double ty = x[1] - static_cast<double>(ky);
      const double gzy = gz * (s.rank >= 2 ? exp(s.coef[1] * ty * ty) : 1.0);
      const T* row = w + ((kz * s.n[1] + ky) * s.n[2]) * s.channels;
      for (long long kx = lo[2]; kx <= hi[2]; ++kx) {
        const double g = gzy * gx[kx - lo[2]];
        for (int c = 0; c < s.channels; ++c)
          acc[c] = fma(g, static_cast<double>(row[kx * s.channels + c]), acc[c]);
      }
    }
  }
  for (int c = 0; c < s.channels; ++c) out[p * s.channels + c] = acc[c];
}

// max |a[i]| into *result (a non-negative double's bits order as an unsigned integer).
template <class T>
__global__ void max_abs(const T* __restrict__ a, std::size_t n,
                        unsigned long long* __restrict__ result) {
  double m = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    m = fmax(m, fabs(static_cast<double>(a[i])));
  for (int off = 16; off > 0; off /= 2) m = fmax(m, __shfl_down_sync(0xffffffffu, m, off));
  if ((threadIdx.x & 31) == 0)
    atomicMax(result, static_cast<unsigned long long>(__double_as_longlong(m)));
}

int grid_for(std::size_t total) {
  const std::size_t blocks = (total + 255) / 256;
  return static_cast<int>(std::min<std::size_t>(blocks, 65535 * 8));
}

class Events {
 public:
  Events() {
    check(cudaEventCreate(&a_), "CUDA GRBF: event");
    check(cudaEventCreate(&b_), "CUDA GRBF: event");
  }
  ~Events() {
    cudaEventDestroy(a_);
    cudaEventDestroy(b_);
  }
  void start() { check(cudaEventRecord(a_), "CUDA GRBF: event"); }
  double stop() {
    check(cudaEventRecord(b_), "CUDA GRBF: event");
    check(cudaEventSynchronize(b_), "CUDA GRBF: kernels");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, a_, b_), "CUDA GRBF: event");
    return ms;
  }

 private:
  cudaEvent_t a_{}, b_{};
};

// One banded pass along `axis` of `dims` (channels inner), src -> dst; dims[axis] becomes rows.
template <class T>
void run_band(const Banded& b, const T* src, T* dst, std::vector<std::size_t>& dims,
              std::size_t axis, std::size_t channels) {
  std::size_t outer = 1, inner = channels;
  for (std::size_t d = 0; d < axis; ++d) outer *= dims[d];
  for (std::size_t d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
  DeviceArray<int> first(b.rows, "CUDA GRBF: band"), count(b.rows, "CUDA GRBF: band");
  DeviceArray<double> w(b.w.size(), "CUDA GRBF: band");
  first.upload(b.first.data(), b.rows, "CUDA GRBF: band upload");
  count.upload(b.count.data(), b.rows, "CUDA GRBF: band upload");
  w.upload(b.w.data(), b.w.size(), "CUDA GRBF: band upload");
  const std::size_t total = outer * b.rows * inner;
  apply_band<T><<<grid_for(total), 256>>>(src, dst, outer, b.cols, b.rows, inner, first.get(),
                                          count.get(), w.get(), b.band);
  check_launch("CUDA GRBF: banded pass");
  dims[axis] = b.rows;
  // The band's arrays are freed on return: wait for the pass first.
  check(cudaDeviceSynchronize(), "CUDA GRBF: banded pass");
}

std::size_t product(const std::vector<std::size_t>& dims) {
  std::size_t p = 1;
  for (std::size_t d : dims) p *= d;
  return p;
}

double elapsed_ms(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Solves on the device: `buf` holds f on entry (uploaded) and the weights on return.
template <class T>
void solve_on_device(GrbfWeights<T>& g, const std::vector<std::size_t>& dims, std::size_t channels,
                     std::unique_ptr<DeviceArray<T>>& buf, GrbfTiming* timing) {
  const double u = 0.5 * std::numeric_limits<T>::epsilon();
  std::vector<const Banded*> inv;
  double inverse_ms = 0;
  for (std::size_t d = 0; d < dims.size(); ++d)
    inv.push_back(&cached_inverse(dims[d], g.sigma[d], g.ridge, u, &inverse_ms));
  const std::size_t n = product(dims) * channels;
  auto other = std::make_unique<DeviceArray<T>>(n, "CUDA GRBF: weights");
  Events ev;
  ev.start();
  std::vector<std::size_t> cur = dims;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    run_band(*inv[d], buf->get(), other->get(), cur, d, channels);
    std::swap(buf, other);
  }
  const double solve_ms = ev.stop();
  DeviceArray<unsigned long long> mx(1, "CUDA GRBF: max");
  check(cudaMemset(mx.get(), 0, sizeof(unsigned long long)), "CUDA GRBF: max");
  max_abs<T><<<grid_for(n), 256>>>(buf->get(), n, mx.get());
  check_launch("CUDA GRBF: max |w|");
  unsigned long long bits = 0;
  mx.download(&bits, 1, "CUDA GRBF: max |w|");
  double m = 0;
  std::memcpy(&m, &bits, sizeof m);
  grbf_finish(g, m);
  if (timing) {
    timing->inverse_ms += inverse_ms;
    timing->solve_ms += solve_ms;
  }
}

// s on the grid from the weights in `buf` (extents dims, C channels).
template <class T>
Array<T> evaluate_on_device(const GrbfWeights<T>& g, const std::vector<std::size_t>& dims,
                            std::size_t C, std::unique_ptr<DeviceArray<T>>& buf,
                            const std::vector<std::vector<double>>& axis_positions,
                            GrbfTiming* timing) {
  if (axis_positions.size() != dims.size())
    throw Error("CUDA GRBF: the grid has " + std::to_string(axis_positions.size()) +
                " axes of positions for a " + std::to_string(dims.size()) + "-axis array");
  std::vector<std::size_t> out_dims;
  for (const auto& p : axis_positions) {
    if (p.empty()) throw Error("CUDA GRBF: an axis of the output grid has no positions");
    out_dims.push_back(p.size());
  }
  std::vector<Banded> bands;
  for (std::size_t d = 0; d < dims.size(); ++d)
    bands.push_back(gauss_band(axis_positions[d], dims[d], g.sigma[d], g.radius[d]));
  // Shrinking axes first keeps the intermediates small.
  std::vector<std::size_t> order(dims.size());
  for (std::size_t d = 0; d < order.size(); ++d) order[d] = d;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return static_cast<double>(out_dims[a]) / dims[a] < static_cast<double>(out_dims[b]) / dims[b];
  });
  Events ev;
  ev.start();
  std::vector<std::size_t> cur = dims;
  for (std::size_t d : order) {
    std::vector<std::size_t> next = cur;
    next[d] = out_dims[d];
    auto dst = std::make_unique<DeviceArray<T>>(product(next) * C, "CUDA GRBF: grid");
    run_band(bands[d], buf->get(), dst->get(), cur, d, C);
    buf = std::move(dst);
  }
  const double evaluate_ms = ev.stop();
  Array<T> out(out_dims, C);
  const auto t0 = std::chrono::steady_clock::now();
  buf->download(out.data(), out.size(), "CUDA GRBF: download");
  if (timing) {
    timing->evaluate_ms += evaluate_ms;
    timing->download_ms += elapsed_ms(t0);
  }
  return out;
}

template <class T>
std::unique_ptr<DeviceArray<T>> upload(const Array<T>& a, GrbfTiming* timing) {
  const auto t0 = std::chrono::steady_clock::now();
  auto buf = std::make_unique<DeviceArray<T>>(a.size(), "CUDA GRBF: upload");
  buf->upload(a.data(), a.size(), "CUDA GRBF: upload");
  if (timing) timing->upload_ms += elapsed_ms(t0);
  return buf;
}

}  // namespace

template <class T>
GrbfWeights<T> grbf_solve(const Array<T>& f, const GrbfOptions& opt, GrbfTiming* timing) {
  require("CUDA GRBF");
  GrbfWeights<T> g = grbf_prepare(f, opt);
  auto buf = upload(f, timing);
  solve_on_device(g, f.dims(), f.channels(), buf, timing);
  g.w = Array<T>(f.dims(), f.channels());
  const auto t0 = std::chrono::steady_clock::now();
  buf->download(g.w.data(), g.w.size(), "CUDA GRBF: download");
  if (timing) timing->download_ms += elapsed_ms(t0);
  return g;
}

template <class T>
Array<T> grbf_grid(const GrbfWeights<T>& g, const std::vector<std::vector<double>>& axis_positions,
                   GrbfTiming* timing) {
  require("CUDA GRBF");
  auto buf = upload(g.w, timing);
  return evaluate_on_device(g, g.w.dims(), g.w.channels(), buf, axis_positions, timing);
}

template <class T>
Array<T> grbf_interpolate_grid(const Array<T>& f, const GrbfOptions& opt,
                               const std::vector<std::vector<double>>& axis_positions,
                               GrbfTiming* timing, GrbfWeights<T>* weights) {
  require("CUDA GRBF");
  GrbfWeights<T> g = grbf_prepare(f, opt);
  auto buf = upload(f, timing);
  solve_on_device(g, f.dims(), f.channels(), buf, timing);
  if (weights) {
    g.w = Array<T>(f.dims(), f.channels());
    buf->download(g.w.data(), g.w.size(), "CUDA GRBF: download");
    *weights = g;
  }
  return evaluate_on_device(g, f.dims(), f.channels(), buf, axis_positions, timing);
}

template <class T>
void grbf_sample(const GrbfWeights<T>& g, const double* positions, std::size_t m, double* out,
                 GrbfTiming* timing) {
  require("CUDA GRBF");
  const std::size_t rank = g.w.rank(), C = g.w.channels();
  PointSpline s{};
  s.rank = static_cast<int>(rank);
  s.channels = static_cast<int>(C);
  for (int d = 0; d < 3; ++d) {
    s.n[d] = 1;
    s.coef[d] = 0;
    s.radius[d] = 0;
  }
  for (std::size_t d = 0; d < rank; ++d) {
    const std::size_t e = 3 - rank + d;
    s.n[e] = static_cast<long long>(g.w.dim(d));
    s.coef[e] = -0.5 / (g.sigma[d] * g.sigma[d]);
    s.radius[e] = g.radius[d];
    if (2 * std::floor(g.radius[d]) + 2 > kMaxTaps)
      throw Error("CUDA GRBF: the support radius " + std::to_string(g.radius[d]) +
                  " samples on axis " + std::to_string(d) + " (sigma " +
                  std::to_string(g.sigma[d]) + ") exceeds the point kernel's " +
                  std::to_string(kMaxTaps) + " taps per axis");
  }
  if (m == 0) return;
  auto w = upload(g.w, timing);
  const auto t0 = std::chrono::steady_clock::now();
  DeviceArray<double> pos(m * rank, "CUDA GRBF: positions"), res(m * C, "CUDA GRBF: values");
  pos.upload(positions, m * rank, "CUDA GRBF: positions");
  if (timing) timing->upload_ms += elapsed_ms(t0);
  Events ev;
  ev.start();
  sample_points<T>
      <<<static_cast<unsigned>((m + 127) / 128), 128>>>(w->get(), s, pos.get(), m, res.get());
  check_launch("CUDA GRBF: point evaluation");
  const double ms = ev.stop();
  const auto t1 = std::chrono::steady_clock::now();
  res.download(out, m * C, "CUDA GRBF: values");
  if (timing) {
    timing->evaluate_ms += ms;
    timing->download_ms += elapsed_ms(t1);
  }
}

#define SV_GRBF_INSTANTIATE(T)                                                                  \
  template GrbfWeights<T> grbf_solve(const Array<T>&, const GrbfOptions&, GrbfTiming*);         \
  template Array<T> grbf_grid(const GrbfWeights<T>&, const std::vector<std::vector<double>>&,   \
                              GrbfTiming*);                                                     \
  template Array<T> grbf_interpolate_grid(const Array<T>&, const GrbfOptions&,                  \
                                          const std::vector<std::vector<double>>&, GrbfTiming*, \
                                          GrbfWeights<T>*);                                     \
  template void grbf_sample(const GrbfWeights<T>&, const double*, std::size_t, double*,         \
                            GrbfTiming*);
SV_GRBF_INSTANTIATE(float)
SV_GRBF_INSTANTIATE(double)
#undef SV_GRBF_INSTANTIATE

}  // namespace sv::cuda
