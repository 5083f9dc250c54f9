// Shared helpers for the core tests: seeded random data and an explicit sample extension that
// is written independently of the library's extend_index.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "splineview/array.h"

namespace svtest {

// A fresh seed per run, printed on failure through SCOPED_TRACE by the caller.
inline std::uint32_t fresh_seed() {
  static std::uint32_t s = std::random_device{}();
  return s++;
}

template <class T>
sv::Array<T> random_array(std::vector<std::size_t> dims, std::size_t channels, std::uint32_t seed,
                          double lo = 0, double hi = 1) {
  sv::Array<T> a(std::move(dims), channels);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<T>(u(rng));
  return a;
}

// The sample index that the extended signal holds at k, by walking the definition step by step
// (reflect: f0 f1 .. fN-1 fN-1 .. f0 f0 ..; mirror: f0 .. fN-1 fN-2 .. f1 f0 ..; periodic).
inline long explicit_extension(long k, long n, sv::Boundary b) {
  if (b == sv::Boundary::Periodic) {
    while (k < 0) k += n;
    while (k >= n) k -= n;
    return k;
  }
  if (n == 1) return 0;
  while (k < 0 || k >= n) {
    if (k < 0) k = (b == sv::Boundary::Reflect) ? -1 - k : -k;
    if (k >= n) k = (b == sv::Boundary::Reflect) ? 2 * n - 1 - k : 2 * n - 2 - k;
  }
  return k;
}

inline const std::vector<sv::Boundary>& all_boundaries() {
  static const std::vector<sv::Boundary> b{sv::Boundary::Reflect, sv::Boundary::Mirror,
                                           sv::Boundary::Periodic};
  return b;
}

}  // namespace svtest
