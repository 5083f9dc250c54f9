// Whole-array resampling on the CPU: zoom and rotation with every method, built on the
// prefilter and the reference sampler (so it is exactly the mathematical object the GPU paths
// are compared against).
#include "splineview/resample.h"

#include <cmath>
#include <vector>

#include "splineview/prefilter.h"
#include "splineview/sampler.h"

namespace sv {

const char* method_name(Method m) {
  switch (m) {
    case Method::Nearest:
      return "nearest";
    case Method::Linear:
      return "linear";
    case Method::CubicUnfiltered:
      return "cubic-unfiltered";
    case Method::Cubic:
      return "cubic";
    case Method::Quintic:
      return "quintic";
    case Method::Septic:
      return "septic";
  }
  return "?";
}

Method parse_method(const std::string& s) {
  for (Method m : {Method::Nearest, Method::Linear, Method::CubicUnfiltered, Method::Cubic,
                   Method::Quintic, Method::Septic})
    if (s == method_name(m)) return m;
  throw Error("unknown method '" + s +
              "' (expected nearest, linear, cubic-unfiltered, cubic, quintic or septic)");
}

namespace {

// Evaluates the input at `positions`: interpolated (prefiltered; sv::interpolate, which pads
// for the modes that need it) or, for nearest, linear and cubic-unfiltered, sampled as it is.
template <class T>
Array<T> evaluate(const Array<T>& samples, std::vector<std::size_t> dims,
                  const std::vector<double>& positions, const ResampleOptions& opt) {
  Array<T> out(std::move(dims), samples.channels());
  std::vector<double> v(out.size());
  const SamplerOptions sopt{method_degree(opt.method), opt.boundary, -1, opt.threads, opt.cval};
  if (method_prefilters(opt.method))
    interpolate(samples, positions.data(), out.points(), v.data(), sopt);
  else
    sample(samples, positions.data(), out.points(), v.data(), sopt);
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<T>(v[i]);
  return out;
}

}  // namespace

template <class T>
Array<T> zoom(const Array<T>& samples, double factor, const ResampleOptions& opt) {
  if (!(factor > 0) || !std::isfinite(factor))
    throw Error("zoom: the factor must be a positive number, got " + std::to_string(factor));
  std::vector<std::size_t> dims;
  for (std::size_t d : samples.dims()) {
    // round(N * F) with halves to even, as scipy.ndimage.zoom (Python round) and the CPU path.
    const double e = std::nearbyint(static_cast<double>(d) * factor);
    if (e < 1) throw Error("zoom: factor " + std::to_string(factor) + " leaves an empty axis");
    if (e > 1e6) throw Error("zoom: factor " + std::to_string(factor) + " gives an axis over 1e6");
    dims.push_back(static_cast<std::size_t>(e));
  }
  const std::size_t rank = dims.size();
  std::size_t total = 1;
  for (std::size_t d : dims) total *= d;
  if (total > (std::size_t{1} << 31))
    throw Error("zoom: output of " + std::to_string(total) + " points is too large");
  std::vector<double> pos(total * rank);
  std::vector<std::size_t> at(rank, 0);
  for (std::size_t p = 0; p < total; ++p) {
    for (std::size_t d = 0; d < rank; ++d) {
      const double f = static_cast<double>(dims[d]) / static_cast<double>(samples.dim(d));
      pos[p * rank + d] = (static_cast<double>(at[d]) + 0.5) / f - 0.5;
    }
    for (std::size_t d = rank; d-- > 0;) {
      if (++at[d] < dims[d]) break;
      at[d] = 0;
    }
  }
  return evaluate(samples, dims, pos, opt);
}

template <class T>
Array<T> rotate(const Array<T>& samples, double degrees, const ResampleOptions& opt) {
  if (samples.rank() != 2)
    throw Error("rotate: needs a 2-D image, got a " + std::to_string(samples.rank()) + "-D array");
  if (!std::isfinite(degrees)) throw Error("rotate: the angle must be finite");
  const std::size_t h = samples.dim(0), w = samples.dim(1);
  const double cy = (static_cast<double>(h) - 1) / 2, cx = (static_cast<double>(w) - 1) / 2;
  const double th = degrees * M_PI / 180.0, c = std::cos(th), s = std::sin(th);
  std::vector<double> pos(h * w * 2);
  for (std::size_t y = 0; y < h; ++y)
    for (std::size_t x = 0; x < w; ++x) {
      // Counter-clockwise as displayed (y down): output p takes the input at R(-theta) p.
      const double dx = static_cast<double>(x) - cx, dy = static_cast<double>(y) - cy;
      pos[(y * w + x) * 2 + 0] = dx * s + dy * c + cy;
      pos[(y * w + x) * 2 + 1] = dx * c - dy * s + cx;
    }
  return evaluate(samples, samples.dims(), pos, opt);
}

template Array<float> zoom<float>(const Array<float>&, double, const ResampleOptions&);
template Array<double> zoom<double>(const Array<double>&, double, const ResampleOptions&);
template Array<float> rotate<float>(const Array<float>&, double, const ResampleOptions&);
template Array<double> rotate<double>(const Array<double>&, double, const ResampleOptions&);

}  // namespace sv
