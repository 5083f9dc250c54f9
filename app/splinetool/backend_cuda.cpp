// The CUDA backend of splinetool: the prefilter (sv::cuda::prefilter, in place on the device) and
// the reconstruction kernels (sv::cuda::SplineVolume, texture hardware or point taps). Resampling
// uploads the samples once, prefilters them on the device when the method needs coefficients,
// builds the spline volume from that device buffer and evaluates the positions the CPU path
// uses, computed in double exactly as lib/src/resample.cpp does and rounded once to float (the
// kernels' coordinate type). Everything is single precision; the double overloads refuse.
// GPU time is CUDA event time around the kernels (not the transfers).
#include "backend_cuda.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "splineview/cuda_memory.h"
#include "splineview/cuda_prefilter.h"
#include "splineview/cuda_reconstruct.h"
#include "splineview/error.h"
#include "splineview/text.h"

namespace splinetool {
namespace {

namespace cu = sv::cuda;

const char* const kDoubleRefused =
    "--backend cuda computes in single precision (float kernels); use --precision single";

// The kernels clamp coordinates to +-2^30 to keep their integer indices in range: refuse what that
// clamp would change, as the CPU sampler refuses non-finite coordinates, rather than return the
// value somewhere else.
constexpr double kPositionLimit = 1073741824.0;

float device_position(double p, std::size_t point, const char* what) {
  if (!(std::fabs(p) < kPositionLimit))
    throw sv::Error(std::string(what) + ": position " + std::to_string(point) +
                    " has a non-finite coordinate or one beyond +-2^30 (" + sv::format_number(p) +
                    "), which --backend cuda cannot evaluate");
  return static_cast<float>(p);
}

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(const BackendOptions& opt)
      : fetch_(opt.fetch.empty() ? default_fetch("cuda") : opt.fetch) {}

  const char* name() const override { return "cuda"; }

  void prefilter(sv::ArrayF& a, const sv::PrefilterOptions& opt) override {
    const cu::Layout layout = checked_layout(a);
    cu::DeviceBuffer data(a.size());
    data.upload(a.data(), a.size());
    prefilter_on_device(data, layout, opt.degree, opt.boundary);
    data.download(a.data(), a.size());
    cu::synchronize("--backend cuda: prefiltering");
  }
  void prefilter(sv::ArrayD&, const sv::PrefilterOptions&) override {
    throw sv::Error(kDoubleRefused);
  }

  // Evaluates with the configured fetch; sopt.degree is the command's business (it derives the
  // degree from the fetch, as for gl).
  void sample(const sv::ArrayF& c, const std::vector<double>& positions, double* out,
              const sv::SamplerOptions& sopt) override {
    if (sopt.derivative_axis >= 0)
      throw sv::Error("--backend cuda evaluates values only, no derivatives; use --backend cpu");
    const cu::Layout layout = checked_layout(c);
    const std::size_t rank = layout.rank(), m = positions.size() / rank;
    std::vector<float> pos(positions.size());
    for (std::size_t i = 0; i < pos.size(); ++i)
      pos[i] = device_position(positions[i], i / rank, "sample");
    const cu::SplineVolume volume(c, sopt.boundary);
    std::vector<float> values(m * layout.channels);
    evaluate(volume, cu::parse_fetch(fetch_), pos, m, values.data());
    std::copy(values.begin(), values.end(), out);
  }
  void sample(const sv::ArrayD&, const std::vector<double>&, double*,
              const sv::SamplerOptions&) override {
    throw sv::Error(kDoubleRefused);
  }

  sv::ArrayF zoom(const sv::ArrayF& a, double factor, const sv::ResampleOptions& opt) override {
    const cu::Fetch fetch = fetch_of(opt.method);
    // Extents, limits and messages as sv::zoom.
    if (!(factor > 0) || !std::isfinite(factor))
      throw sv::Error("zoom: the factor must be a positive number, got " +
                      sv::format_number(factor));
    std::vector<std::size_t> dims;
    for (std::size_t d : a.dims()) {
      // round(N * F) with halves to even, as scipy.ndimage.zoom (Python round) and the CPU path.
      const double e = std::nearbyint(static_cast<double>(d) * factor);
      if (e < 1)
        throw sv::Error("zoom: factor " + sv::format_number(factor) + " leaves an empty axis");
      if (e > 1e6)
        throw sv::Error("zoom: factor " + sv::format_number(factor) + " gives an axis over 1e6");
      dims.push_back(static_cast<std::size_t>(e));
    }
    const std::size_t rank = dims.size();
    std::size_t total = 1;
    for (std::size_t d : dims) total *= d;
    if (total > (std::size_t{1} << 31))
      throw sv::Error("zoom: output of " + std::to_string(total) + " points is too large");
    // Output sample j of an axis sits at input position (j + 1/2) / f - 1/2, f = out / in, with
    // the very expression of sv::zoom so that both paths round the same double.
    std::vector<float> pos(total * rank);
    std::vector<std::size_t> at(rank, 0);
    for (std::size_t p = 0; p < total; ++p) {
      for (std::size_t d = 0; d < rank; ++d) {
        const double f = static_cast<double>(dims[d]) / static_cast<double>(a.dim(d));
        pos[p * rank + d] =
            device_position((static_cast<double>(at[d]) + 0.5) / f - 0.5, p, "zoom");
      }
      for (std::size_t d = rank; d-- > 0;) {
        if (++at[d] < dims[d]) break;
        at[d] = 0;
      }
    }
    return resample(a, opt, fetch, std::move(dims), pos);
  }
  sv::ArrayD zoom(const sv::ArrayD&, double, const sv::ResampleOptions&) override {
    throw sv::Error(kDoubleRefused);
  }

  sv::ArrayF rotate(const sv::ArrayF& a, double degrees, const sv::ResampleOptions& opt) override {
    const cu::Fetch fetch = fetch_of(opt.method);
    if (a.rank() != 2)
      throw sv::Error("rotate: needs a 2-D image, got a " + std::to_string(a.rank()) + "-D array");
    if (!std::isfinite(degrees)) throw sv::Error("rotate: the angle must be finite");
    // About ((H-1)/2, (W-1)/2), counter-clockwise as displayed: output p takes the input at
    // R(-theta) (p - c) + c, with the expressions of sv::rotate.
    const std::size_t h = a.dim(0), w = a.dim(1);
    const double cy = (static_cast<double>(h) - 1) / 2, cx = (static_cast<double>(w) - 1) / 2;
    const double th = degrees * M_PI / 180.0, c = std::cos(th), s = std::sin(th);
    std::vector<float> pos(h * w * 2);
    for (std::size_t y = 0; y < h; ++y)
      for (std::size_t x = 0; x < w; ++x) {
        const double dx = static_cast<double>(x) - cx, dy = static_cast<double>(y) - cy;
        pos[(y * w + x) * 2 + 0] = device_position(dx * s + dy * c + cy, y * w + x, "rotate");
        pos[(y * w + x) * 2 + 1] = device_position(dx * c - dy * s + cx, y * w + x, "rotate");
      }
    return resample(a, opt, fetch, a.dims(), pos);
  }
  sv::ArrayD rotate(const sv::ArrayD&, double, const sv::ResampleOptions&) override {
    throw sv::Error(kDoubleRefused);
  }

  std::optional<double> gpu_ms() const override { return gpu_ms_; }

 private:
  static cu::Layout checked_layout(const sv::ArrayF& a) {
    const cu::Layout layout = cu::Layout::of(a);
    layout.check("--backend cuda");
    return layout;
  }

  cu::Fetch fetch_of(sv::Method method) const {
    const std::string name =
        fetch_for_method(method, fetch_is_prefiltered(fetch_) ? fetch_ : "", "cuda");
    if (name.empty())
      throw sv::Error(std::string("--backend cuda evaluates B-splines of degree 0, 1 and 3 only; "
                                  "--method ") +
                      sv::method_name(method) + " needs --backend cpu");
    return cu::parse_fetch(name);
  }

  // Runs `launch` (kernels queued on the default stream) between two CUDA events and adds the
  // elapsed time; the events are created on first use, once a device is known to be there.
  template <class Launch>
  void timed(Launch&& launch) {
    if (!timer_) timer_ = std::make_unique<cu::EventTimer>();
    timer_->start();
    launch();
    timer_->stop();
    gpu_ms_ += timer_->ms();
  }

  void prefilter_on_device(cu::DeviceBuffer& data, const cu::Layout& layout, int degree,
                           sv::Boundary boundary) {
    cu::PrefilterConfig cfg;
    cfg.degree = degree;
    cfg.boundary = boundary;
    timed([&] { cu::prefilter(data.data(), layout, cfg); });
  }

  // m positions (m * rank floats, host) -> m * channels floats in `out` (host).
  void evaluate(const cu::SplineVolume& volume, cu::Fetch fetch, const std::vector<float>& pos,
                std::size_t m, float* out) {
    if (m == 0) return;
    cu::DeviceBuffer device_pos(pos.size());
    device_pos.upload(pos.data(), pos.size());
    cu::DeviceBuffer result(m * volume.layout().channels);
    timed([&] { volume.sample(fetch, device_pos.data(), m, result.data()); });
    cu::synchronize("--backend cuda: evaluating the spline");
    result.download(out, result.size());
  }

  // Uploads the samples, prefilters them on the device when the method needs coefficients and
  // evaluates the spline at `pos` into an array of extents `dims`.
  sv::ArrayF resample(const sv::ArrayF& a, const sv::ResampleOptions& opt, cu::Fetch fetch,
                      std::vector<std::size_t> dims, const std::vector<float>& pos) {
    const cu::Layout layout = checked_layout(a);
    cu::DeviceBuffer data(a.size());
    data.upload(a.data(), a.size());
    if (sv::method_prefilters(opt.method))
      prefilter_on_device(data, layout, sv::method_degree(opt.method), opt.boundary);
    const cu::SplineVolume volume(data.data(), layout, opt.boundary);
    sv::ArrayF out(std::move(dims), a.channels());
    evaluate(volume, fetch, pos, out.points(), out.data());
    return out;
  }

  std::string fetch_;
  std::unique_ptr<cu::EventTimer> timer_;
  double gpu_ms_ = 0;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& opt) {
  // Asked before any input is read or any output touched: without a device (or without CUDA in
  // this build) the command stops here with the reason.
  std::string why;
  if (!cu::available(&why))
    throw sv::Error("--backend cuda cannot run here: " + why + "; use --backend cpu");
  return std::make_unique<CudaBackend>(opt);
}

}  // namespace splinetool
