// bench_pyramid: CPU speed of the B-spline pyramid (lib/include/splineview/pyramid.h) on a
// 256^3 float volume of uniform random values, best of 5 runs per line, 1 and 2 threads; the
// library's prefilter of the same volume for scale. Not built by CMake (a benchmark note for
// docs/DESIGN.md, "The B-spline pyramid"); from the repository root:
//
//   g++ -std=c++17 -O3 -DNDEBUG -Ilib/include -Ilib/src tools/bench_pyramid.cpp \
//       lib/src/{pyramid,bspline,array,sampler,prefilter,interpolant}.cpp -lpthread \
//       -o /tmp/bench_pyramid && /tmp/bench_pyramid
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "splineview/prefilter.h"
#include "splineview/pyramid.h"

namespace {

template <class F>
double best_ms(F&& f, int reps = 5) {
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return best;
}

}  // namespace

int main() {
  sv::Array<float> a({256, 256, 256});
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(0, 1);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = u(rng);
  for (unsigned threads : {1u, 2u}) {
    for (int n : {1, 3, 5}) {
      sv::ReduceOptions o;
      o.degree = n;
      o.threads = threads;
      const double samples = best_ms([&] { sv::reduce2(a, o); });
      o.input_is_coefficients = true;
      const double coefficients = best_ms([&] { sv::reduce2(a, o); });
      o.input_is_coefficients = false;
      o.samples = true;
      const double both = best_ms([&] { sv::reduce2(a, o); });
      o.samples = false;
      const double any = best_ms([&] { sv::reduce(a, {0.4, 0.4, 0.4}, o); });
      std::printf(
          "threads %u degree %d: reduce2 from samples %.1f ms, from coefficients %.1f ms, "
          "with coarse samples %.1f ms; reduce by 0.4 %.1f ms\n",
          threads, n, samples, coefficients, both, any);
    }
    sv::PrefilterOptions po;
    po.degree = 3;
    po.threads = threads;
    sv::Array<float> b = a;
    const double prefilter = best_ms([&] { sv::prefilter(b, po); });
    std::printf("threads %u: prefilter (degree 3, in place) %.1f ms\n", threads, prefilter);
  }
}
