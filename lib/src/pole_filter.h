// One pole of a symmetric recursive B-spline filter on a block of lines, with exact starts:
// the interpolating prefilter (prefilter.cpp, real poles) and the smoothing splines
// (smoothing.cpp, real poles and complex-conjugate pairs) share it, so both give the same bits
// for the same real pole.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <limits>
#include <type_traits>

#include "splineview/array.h"
#include "splineview/sampler.h"

namespace sv {
namespace pole_filter {

template <class V>
struct IsComplex : std::false_type {};
template <class T>
struct IsComplex<std::complex<T>> : std::true_type {};

// z (double) as the working type V (T, or complex<T>).
template <class V>
V as(std::complex<double> z) {
  if constexpr (IsComplex<V>::value)
    return V(static_cast<typename V::value_type>(z.real()),
             static_cast<typename V::value_type>(z.imag()));
  else
    return static_cast<V>(z.real());
}

// z^e in double: a real pole through the real pow (the prefilter's own arithmetic), a complex one
// through the complex pow.
inline std::complex<double> pole_power(std::complex<double> z, double e) {
  if (z.imag() == 0) return std::complex<double>(std::pow(z.real(), e), 0.0);
  return std::pow(z, e);
}

// Number of terms K of sum_k z^k x_k after which the neglected tail, |z|^K / (1 - |z|) max|x|,
// is below half an ulp of T relative to max|x|.
template <class T>
std::size_t horizon(double a) {
  if (a == 0) return 1;
  const double eps = std::numeric_limits<T>::epsilon() / 2;
  return static_cast<std::size_t>(std::ceil(std::log(eps * (1 - a)) / std::log(a))) + 1;
}

inline std::size_t period(Boundary b, std::size_t n) {
  switch (b) {
    case Boundary::Reflect:
      return 2 * n;
    case Boundary::Mirror:
      return 2 * n - 2;
    default:
      return n;
  }
}

// The causal and anticausal recursions of one pole zd on `width` adjacent lines of length n >= 2
// (element k of line i at base[k * stride + i]) extended by b (Reflect, Mirror or Periodic):
// 1 / (Z + 1/Z - zd - 1/zd) in the shift Z, with exact starts. V = T or complex<T>.
template <class V, class T>
void one_pole(V* base, std::size_t n, std::size_t stride, std::size_t width,
              std::complex<double> zd, Boundary b, V* acc) {
  const V z = as<V>(zd);
  const std::size_t h = horizon<T>(std::abs(zd));
  const std::size_t per = period(b, n);
  const long ln = static_cast<long>(n);

  // c+[0] = sum_{k>=0} z^k f~[-k], over one period and closed by 1 / (1 - z^P) when the period
  // lies within the horizon.
  const std::size_t terms = std::min(h, per);
  std::fill(acc, acc + width, V(0));
  V zk = V(1);
  for (std::size_t k = 0; k < terms; ++k) {
    const V* row = base + extend_index(-static_cast<long>(k), ln, b) * stride;
    for (std::size_t i = 0; i < width; ++i) acc[i] += zk * row[i];
    zk *= z;
  }
  if (terms == per) {
    const V scale = V(1) / (V(1) - as<V>(pole_power(zd, static_cast<double>(per))));
    for (std::size_t i = 0; i < width; ++i) acc[i] *= scale;
  }
  std::copy(acc, acc + width, base);
  for (std::size_t k = 1; k < n; ++k) {
    V* row = base + k * stride;
    const V* prev = row - stride;
    for (std::size_t i = 0; i < width; ++i) row[i] += z * prev[i];
  }

  // c-[N-1] from the symmetry (Reflect, Mirror) or the period (Periodic) of the output.
  V* last = base + (n - 1) * stride;
  if (b == Boundary::Reflect) {
    const V s = z / (z - V(1));
    for (std::size_t i = 0; i < width; ++i) last[i] *= s;
  } else if (b == Boundary::Mirror) {
    const V s = z / (z * z - V(1));
    const V* prev = last - stride;
    for (std::size_t i = 0; i < width; ++i) last[i] = s * (last[i] + z * prev[i]);
  } else {
    const std::size_t pterms = std::min(h, n);
    std::fill(acc, acc + width, V(0));
    V zj = V(1);
    for (std::size_t j = 0; j < pterms; ++j) {
      const V* row = base + ((n - 1 + j) % n) * stride;
      for (std::size_t i = 0; i < width; ++i) acc[i] += zj * row[i];
      zj *= z;
    }
    V scale = -z;
    if (pterms == n) scale /= (V(1) - as<V>(pole_power(zd, static_cast<double>(n))));
    for (std::size_t i = 0; i < width; ++i) last[i] = scale * acc[i];
  }
  for (std::size_t k = n - 1; k-- > 0;) {
    V* row = base + k * stride;
    const V* next = row + stride;
    for (std::size_t i = 0; i < width; ++i) row[i] = z * (next[i] - row[i]);
  }
}

}  // namespace pole_filter
}  // namespace sv
