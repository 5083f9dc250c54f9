// sv::video::upscale_frame: the CPU reference path of video upscaling, sv::zoom on one frame.
#include <algorithm>
#include <cmath>

#include "splineview/video.h"

namespace sv::video {

void frame_to_array(const Frame& in, ArrayF& rgb) {
  if (in.width <= 0 || in.height <= 0 ||
      in.rgba.size() !=
          static_cast<std::size_t>(in.width) * static_cast<std::size_t>(in.height) * 4)
    throw Error("video frame: " + std::to_string(in.width) + "x" + std::to_string(in.height) +
                " with " + std::to_string(in.rgba.size()) + " bytes is not an RGBA frame");
  const std::size_t h = static_cast<std::size_t>(in.height), w = static_cast<std::size_t>(in.width);
  if (rgb.rank() != 2 || rgb.dim(0) != h || rgb.dim(1) != w || rgb.channels() != 3)
    rgb = ArrayF({h, w}, 3);
  float* dst = rgb.data();
  const std::uint8_t* src = in.rgba.data();
  for (std::size_t p = 0; p < h * w; ++p)
    for (std::size_t c = 0; c < 3; ++c)
      dst[p * 3 + c] = static_cast<float>(src[p * 4 + c]) / 255.0f;
}

std::uint8_t to_u8(float v) {
  const double x = std::clamp(static_cast<double>(v) * 255.0, 0.0, 255.0);
  return static_cast<std::uint8_t>(std::lround(x));
}

void array_to_frame(const ArrayF& rgb, Frame& out) {
  if (rgb.rank() != 2 || rgb.channels() < 3)
    throw Error("video frame: needs a 2-D array with 3 channels, got " +
                describe_shape(rgb.dims(), rgb.channels()));
  const std::size_t h = rgb.dim(0), w = rgb.dim(1), ch = rgb.channels();
  out.width = static_cast<int>(w);
  out.height = static_cast<int>(h);
  out.rgba.resize(h * w * 4);
  const float* src = rgb.data();
  std::uint8_t* dst = out.rgba.data();
  for (std::size_t p = 0; p < h * w; ++p) {
    for (std::size_t c = 0; c < 3; ++c) dst[p * 4 + c] = to_u8(src[p * ch + c]);
    dst[p * 4 + 3] = 255;
  }
}

void upscale_frame(const Frame& in, double scale, Method method, Frame& out, unsigned threads) {
  ArrayF rgb;
  frame_to_array(in, rgb);
  const ArrayF big = zoom(rgb, scale, ResampleOptions{method, Boundary::Reflect, threads});
  array_to_frame(big, out);
  out.pts = in.pts;
  out.pts_s = in.pts_s;
  out.index = in.index;
}

}  // namespace sv::video
