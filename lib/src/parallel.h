// A minimal fork-join helper: splits [0, n) into contiguous chunks over std::threads.
// Used where the work per item is substantial (lines of a prefilter pass, rows of a resample).
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

#include "splineview/threads.h"

namespace sv::detail {

inline unsigned thread_count(unsigned requested, std::size_t items, std::size_t min_per_thread) {
  unsigned hw = requested ? requested : default_thread_count();
  std::size_t useful = std::max<std::size_t>(1, items / std::max<std::size_t>(1, min_per_thread));
  return static_cast<unsigned>(std::min<std::size_t>(hw, useful));
}

// Calls fn(begin, end) on disjoint chunks covering [0, n); rethrows the first exception.
template <class Fn>
void parallel_for(std::size_t n, unsigned threads, Fn&& fn) {
  if (n == 0) return;
  threads = std::max(
      1u, std::min<unsigned>(threads, static_cast<unsigned>(std::min<std::size_t>(n, 1024))));
  if (threads == 1) {
    fn(std::size_t{0}, n);
    return;
  }
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> errors(threads);
  std::size_t chunk = (n + threads - 1) / threads;
  for (unsigned t = 0; t < threads; ++t) {
    std::size_t b = t * chunk, e = std::min(n, b + chunk);
    if (b >= e) break;
    pool.emplace_back([&, t, b, e] {
      try {
        fn(b, e);
      } catch (...) {
        errors[t] = std::current_exception();
      }
    });
  }
  for (auto& th : pool) th.join();
  for (auto& err : errors)
    if (err) std::rethrow_exception(err);
}

}  // namespace sv::detail
