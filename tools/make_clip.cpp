// make_clip: renders the bundled video clip, assets/coffee_pan.mp4: a slow camera move (pan and
// zoom with eased, sub-pixel motion) over a photograph, evaluated with the exact cubic B-spline
// (sv::prefilter + sv::sample in double), with a generated chord as the audio track. Built by
// CMake, never run at build time:
//
//   build/video/make_clip assets/coffee.png assets/coffee_pan.mp4
//
// Defaults: 960x540 at 30 fps, 4 s, H.264 (libx264, crf 20, yuv420p) and AAC 128 kb/s stereo
// 48 kHz in MP4. The window is 16:9, about 0.8 of the photograph's width at the start and 0.6 at
// the end, moving from its left to its right half, so every frame shows new sub-pixel positions.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "splineview/io.h"
#include "splineview/prefilter.h"
#include "splineview/sampler.h"
#include "splineview/video.h"

namespace {

double ease(double t) {
  return t * t * (3 - 2 * t);
}  // smoothstep: starts and stops gently

void usage() {
  std::fprintf(stderr,
               "usage: make_clip IMAGE OUT [--width W] [--height H] [--fps F] [--seconds S] "
               "[--crf N]\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    usage();
    return 2;
  }
  const std::string image = argv[1], out = argv[2];
  int width = 960, height = 540, fps = 30, crf = 20;
  double seconds = 4;
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const char* v = argv[i + 1];
    if (k == "--width")
      width = std::atoi(v);
    else if (k == "--height")
      height = std::atoi(v);
    else if (k == "--fps")
      fps = std::atoi(v);
    else if (k == "--seconds")
      seconds = std::atof(v);
    else if (k == "--crf")
      crf = std::atoi(v);
    else {
      usage();
      return 2;
    }
  }
  try {
    sv::Loaded src = sv::load_image(image);
    sv::ArrayD coeffs = src.array;
    if (coeffs.rank() != 2) throw sv::Error("'" + image + "' is not a 2-D image");
    sv::prefilter(coeffs, sv::PrefilterOptions{3, sv::Boundary::Reflect, 0});
    const double ih = static_cast<double>(coeffs.dim(0)), iw = static_cast<double>(coeffs.dim(1));
    const std::size_t channels = coeffs.channels();

    sv::video::EncoderOptions eo;
    eo.codec = "libx264";
    eo.crf = crf;
    sv::video::Encoder enc(out, width, height, fps, 1, 1, fps, eo);

    // Audio: an A major chord with a slow tremolo, faded in and out, panned apart.
    sv::video::AudioTrack audio;
    const std::size_t n = static_cast<std::size_t>(seconds * audio.sample_rate);
    audio.samples.resize(n * 2);
    const double freqs[3] = {220.0, 277.18, 329.63};
    for (std::size_t i = 0; i < n; ++i) {
      const double t = static_cast<double>(i) / audio.sample_rate;
      const double fade = std::min({1.0, t / 0.3, (seconds - t) / 0.5});
      const double trem = 0.8 + 0.2 * std::sin(2 * M_PI * 0.5 * t);
      double l = 0, r = 0;
      for (int k = 0; k < 3; ++k) {
        const double s = std::sin(2 * M_PI * freqs[k] * t);
        l += s * (1.0 - 0.3 * k);
        r += s * (0.4 + 0.3 * k);
      }
      audio.samples[2 * i] = static_cast<float>(0.15 * fade * trem * l);
      audio.samples[2 * i + 1] = static_cast<float>(0.15 * fade * trem * r);
    }
    enc.add_audio(audio);

    const int frames = static_cast<int>(std::lround(seconds * fps));
    std::vector<double> pos(static_cast<std::size_t>(width) * height * 2);
    std::vector<double> values(static_cast<std::size_t>(width) * height * channels);
    sv::video::Frame frame;
    frame.width = width;
    frame.height = height;
    frame.rgba.assign(static_cast<std::size_t>(width) * height * 4, 255);
    for (int k = 0; k < frames; ++k) {
      const double u = ease(frames > 1 ? static_cast<double>(k) / (frames - 1) : 0.0);
      const double win_w = iw * (0.8 - 0.2 * u);  // zoom in
      const double scale = win_w / width;         // image samples per output pixel
      const double win_h = scale * height;
      const double cx = win_w / 2 + (iw - win_w) * (0.1 + 0.8 * u);  // pan left to right
      const double cy = win_h / 2 + (ih - win_h) * (0.6 - 0.3 * u);  // and slightly up
      for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) {
          const std::size_t p = static_cast<std::size_t>(y) * width + x;
          pos[2 * p] = cy + (y + 0.5 - height / 2.0) * scale - 0.5;
          pos[2 * p + 1] = cx + (x + 0.5 - width / 2.0) * scale - 0.5;
        }
      sv::sample(coeffs, pos.data(), pos.size() / 2, values.data(),
                 sv::SamplerOptions{3, sv::Boundary::Reflect, -1, 0});
      for (std::size_t p = 0; p < pos.size() / 2; ++p)
        for (std::size_t c = 0; c < 3; ++c) {
          const double v = values[p * channels + (channels >= 3 ? c : 0)];
          frame.rgba[p * 4 + c] =
              static_cast<std::uint8_t>(std::lround(std::fmin(255.0, std::fmax(0.0, v * 255.0))));
        }
      enc.write(frame, k);
      std::fprintf(stderr, "\rmake_clip: frame %d / %d", k + 1, frames);
    }
    enc.finish();
    std::fprintf(stderr, "\nmake_clip: wrote %s (%lld frames, %s %s, audio %s, %lld packets)\n",
                 out.c_str(), static_cast<long long>(enc.stats().video_frames),
                 enc.stats().video_codec.c_str(), enc.stats().pixel_format.c_str(),
                 enc.stats().audio_codec.c_str(),
                 static_cast<long long>(enc.stats().audio_packets));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_clip: %s\n", e.what());
    return 1;
  }
  return 0;
}
