// Host-only parts of the CUDA upscaling (cuda_upscale.h), built with and without the toolkit:
// method names and the argument checks.
#include <string>

#include "splineview/cuda_upscale.h"
#include "upscale_check.h"

namespace sv::cuda {

const char* upscale_method_name(UpscaleMethod m) {
  switch (m) {
    case UpscaleMethod::Nearest:
      return "nearest";
    case UpscaleMethod::Linear:
      return "linear";
    case UpscaleMethod::Cubic:
      return "cubic";
  }
  return "?";
}

UpscaleMethod parse_upscale_method(const std::string& s) {
  for (UpscaleMethod m : {UpscaleMethod::Nearest, UpscaleMethod::Linear, UpscaleMethod::Cubic})
    if (s == upscale_method_name(m)) return m;
  throw Error("unknown upscaling method '" + s + "' (expected nearest, linear or cubic)");
}

namespace detail {

namespace {

void check_image(const Layout& layout, const char* what) {
  layout.check(what);
  if (layout.rank() != 2)
    throw Error(std::string(what) + ": needs a 2-D image, got a " + std::to_string(layout.rank()) +
                "-D array");
}

}  // namespace

void check_upscale(const Layout& layout, int factor, UpscaleMethod method, Boundary boundary,
                   const char* what) {
  check_image(layout, what);
  if (factor < 1 || factor > kMaxUpscaleFactor)
    throw Error(std::string(what) + ": the factor must be an integer from 1 to " +
                std::to_string(kMaxUpscaleFactor) + ", got " + std::to_string(factor));
  if (method != UpscaleMethod::Nearest && method != UpscaleMethod::Linear &&
      method != UpscaleMethod::Cubic)
    throw Error(std::string(what) + ": unknown upscaling method");
  if (!boundary_on_gpu(boundary))
    throw Error(std::string(what) + ": boundary mode '" + boundary_name(boundary) +
                "' is CPU only (reflect, mirror and periodic on the GPU)");
  for (std::size_t d : layout.dims)
    if (d * static_cast<std::size_t>(factor) >= (std::size_t{1} << 30))
      throw Error(std::string(what) + ": a " + describe_shape(layout.dims, layout.channels) +
                  " image upscaled by " + std::to_string(factor) +
                  " has an axis of 2^30 samples or more");
}

void check_unpack(std::size_t src_pitch, int src_channels, const Layout& layout, const char* what) {
  check_image(layout, what);
  if (src_channels < 1 || src_channels > 4)
    throw Error(std::string(what) + ": 8-bit pixels must have 1 to 4 channels, got " +
                std::to_string(src_channels));
  if (layout.channels > static_cast<std::size_t>(src_channels))
    throw Error(std::string(what) + ": cannot make " + std::to_string(layout.channels) +
                " float channels out of " + std::to_string(src_channels) + "-channel pixels");
  const std::size_t row = layout.dims[1] * static_cast<std::size_t>(src_channels);
  if (src_pitch < row)
    throw Error(std::string(what) + ": a pitch of " + std::to_string(src_pitch) +
                " bytes is shorter than a row of " + std::to_string(row) + " bytes");
  for (std::size_t d : layout.dims)
    if (d >= (std::size_t{1} << 30))
      throw Error(std::string(what) + ": an axis of 2^30 samples or more");
}

}  // namespace detail
}  // namespace sv::cuda
