// Host-only parts of the CUDA API, built with and without the toolkit.
#include <string>

#include "config.h"
#include "splineview/bspline.h"
#include "splineview/cuda_memory.h"
#include "splineview/cuda_reconstruct.h"

namespace sv::cuda {

std::size_t Layout::points() const {
  std::size_t p = 1;
  for (std::size_t d : dims) p *= d;
  return p;
}

void Layout::check(const char* what) const {
  if (dims.empty() || dims.size() > 3)
    throw Error(std::string(what) + ": array rank must be 1, 2 or 3, got " +
                std::to_string(dims.size()));
  for (std::size_t d : dims)
    if (d == 0) throw Error(std::string(what) + ": array has a zero-size axis");
  if (channels == 0 || channels > 4)
    throw Error(std::string(what) + ": array must have 1 to 4 channels, got " +
                std::to_string(channels));
}

namespace detail {

void check_config(const Layout& layout, const PrefilterConfig& cfg, const char* what) {
  layout.check(what);
  check_degree(cfg.degree, 0, kMaxDegree);
  if (cfg.chunk < 0 || cfg.lines < 0 || cfg.fuse_lag < 0)
    throw Error(std::string(what) + ": chunk, lines and fuse_lag must be >= 0");
  for (std::size_t d : layout.dims)
    if (d > (std::size_t{1} << 30))
      throw Error(std::string(what) + ": axis longer than 2^30 samples");
}

}  // namespace detail

const char* fetch_name(Fetch f) {
  switch (f) {
    case Fetch::Nearest:
      return "nearest";
    case Fetch::Linear:
      return "linear";
    case Fetch::Cubic:
      return "cubic";
    case Fetch::Precise:
      return "precise";
  }
  return "?";
}

Fetch parse_fetch(const std::string& s) {
  for (Fetch f : {Fetch::Nearest, Fetch::Linear, Fetch::Cubic, Fetch::Precise})
    if (s == fetch_name(f)) return f;
  throw Error("unknown CUDA fetch '" + s + "' (expected nearest, linear, cubic or precise)");
}

}  // namespace sv::cuda
