// What the CUDA GRBF solve shares with sv::grbf_solve around the weights themselves: the
// checks, the system and its refusal before, the support radius and truncation bound after.
#pragma once

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "splineview/array.h"
#include "splineview/error.h"
#include "splineview/grbf.h"

namespace sv::cuda::detail_grbf {

inline std::string fmt(double v, const char* f = "%.3g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

template <class T>
GrbfWeights<T> prepare(const Array<T>& f, const GrbfOptions& opt) {
  if (f.empty()) throw Error("GRBF: the samples are empty");
  GrbfWeights<T> g;
  g.sigma = grbf_sigma_per_axis(opt.sigma, f.rank());
  g.ridge = opt.ridge;
  for (std::size_t i = 0; i < f.size(); ++i) {
    if (!std::isfinite(static_cast<double>(f[i])))
      throw Error("GRBF: the samples hold NaN or inf (at scalar " + std::to_string(i) + ")");
    g.max_abs_sample = std::max(g.max_abs_sample, std::fabs(static_cast<double>(f[i])));
  }
  {
    // The spectra (O(n^3) per axis) are kept for the shapes already seen.
    static std::mutex mutex;
    static std::map<std::tuple<std::vector<std::size_t>, std::vector<double>, double>, GrbfSystem>
        seen;
    std::lock_guard<std::mutex> lock(mutex);
    const auto key = std::make_tuple(f.dims(), g.sigma, opt.ridge);
    auto it = seen.find(key);
    if (it == seen.end()) {
      if (seen.size() > 64) seen.clear();
      it = seen.emplace(key, grbf_system(f.dims(), opt)).first;
    }
    g.system = it->second;
  }
  const double eps = std::numeric_limits<T>::epsilon();
  if (!(g.system.condition * eps < kGrbfSingularLimit)) {
    std::string sig, per_axis;
    for (std::size_t d = 0; d < g.sigma.size(); ++d) sig += (d ? "," : "") + fmt(g.sigma[d]);
    for (std::size_t d = 0; d < g.system.axes.size(); ++d)
      per_axis += (d ? " x " : "") + fmt(g.system.axes[d].condition);
    throw Error("GRBF: sigma " + sig + " makes the " + describe_shape(f.dims(), 1) +
                " system singular in " + (sizeof(T) == 4 ? "float" : "double") +
                " precision: condition number " + fmt(g.system.condition) + " (per axis " +
                per_axis + ")");
  }
  return g;
}

template <class T>
void finish(GrbfWeights<T>& g, double max_abs_weight) {
  const double eps = std::numeric_limits<T>::epsilon();
  g.max_abs_weight = max_abs_weight;
  g.radius = grbf_support_radius(g.sigma, g.max_abs_weight, g.max_abs_sample, 0.5 * eps);
  g.truncation_bound = grbf_truncation_bound(g.sigma, g.radius, g.max_abs_weight);
}

}  // namespace sv::cuda::detail_grbf
