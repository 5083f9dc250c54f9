// Helpers of the video suites: synthetic clips whose frames encode their own number (written
// with sv::video::Encoder), file damage (truncation, overwritten bytes), and the fixture with a
// temporary directory (tests/io/temp_dir_test.h).
#pragma once

#include <cstdint>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "../io/temp_dir_test.h"
#include "splineview/video.h"

namespace svtest {

// Frame k of the exact sequence: every channel mixes k with the position, so a frame that is
// out of place, shifted or altered differs somewhere.
inline std::uint8_t pattern(int k, int x, int y, int c) {
  switch (c) {
    case 0:
      return static_cast<std::uint8_t>((k * 7 + x * 3) & 255);
    case 1:
      return static_cast<std::uint8_t>((k * 3 + y * 5 + 11) & 255);
    default:
      return static_cast<std::uint8_t>((k + x * y + 101) & 255);
  }
}

// A flat grey level for lossy codecs: frame k is k * 9 + 20 (k < 25).
inline int flat_level(int k) {
  return (k % 25) * 9 + 20;
}

inline void fill_frame(sv::video::Frame& f, int w, int h, int k, bool flat) {
  f.width = w;
  f.height = h;
  f.rgba.resize(static_cast<std::size_t>(w) * h * 4);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 4; ++c)
        f.rgba[(static_cast<std::size_t>(y) * w + x) * 4 + c] =
            c == 3 ? 255 : (flat ? static_cast<std::uint8_t>(flat_level(k)) : pattern(k, x, y, c));
}

struct ClipSpec {
  int width = 40, height = 30, frames = 12, fps = 24;
  std::string codec = "ffv1";  // ffv1 (exact) or a lossy one
  int flat = -1;               // 1: flat grey frames (lossy codecs), 0: pattern; -1: by codec
  bool audio = false;          // a generated tone (aac)
  double audio_seconds = -1;   // -1: as long as the video
  std::string audio_codec = "aac";
};

inline sv::video::EncoderStats write_clip(const std::string& path, const ClipSpec& s) {
  sv::video::EncoderOptions eo;
  eo.codec = s.codec;
  sv::video::Encoder enc(path, s.width, s.height, s.fps, 1, 1, s.fps, eo);
  if (s.audio) {
    sv::video::AudioTrack t;
    t.codec = s.audio_codec;
    const double secs = s.audio_seconds > 0 ? s.audio_seconds : double(s.frames) / s.fps;
    const std::size_t n = static_cast<std::size_t>(secs * t.sample_rate);
    t.samples.resize(n * 2);
    for (std::size_t i = 0; i < n; ++i)
      t.samples[2 * i] = t.samples[2 * i + 1] = static_cast<float>(
          0.2 * std::sin(2 * 3.14159265358979 * 440.0 * double(i) / t.sample_rate));
    enc.add_audio(t);
  }
  const bool flat = s.flat < 0 ? s.codec != "ffv1" : s.flat != 0;
  sv::video::Frame f;
  for (int k = 0; k < s.frames; ++k) {
    fill_frame(f, s.width, s.height, k, flat);
    enc.write(f, k);
  }
  enc.finish();
  return enc.stats();
}

inline std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

inline void write_bytes(const std::string& path, const std::vector<char>& b) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(b.data(), static_cast<std::streamsize>(b.size()));
}

// A copy of `src` cut after `fraction` of its bytes.
inline void truncated_copy(const std::string& src, const std::string& dst, double fraction) {
  std::vector<char> b = read_bytes(src);
  b.resize(static_cast<std::size_t>(static_cast<double>(b.size()) * fraction));
  write_bytes(dst, b);
}

// A copy of `src` with `fraction` of its bytes, centred in the middle, overwritten with noise.
inline void corrupted_copy(const std::string& src, const std::string& dst, double fraction,
                           unsigned seed) {
  std::vector<char> b = read_bytes(src);
  const std::size_t n = static_cast<std::size_t>(static_cast<double>(b.size()) * fraction);
  const std::size_t start = b.size() / 2 - n / 2;
  std::mt19937 rng(seed);
  for (std::size_t i = start; i < start + n; ++i) b[i] = static_cast<char>(rng() & 255);
  write_bytes(dst, b);
}

// Decodes every frame; returns the count (throws what the decoder throws).
inline std::int64_t decode_all(const std::string& path) {
  sv::video::Decoder d(path);
  sv::video::Frame f;
  std::int64_t n = 0;
  while (d.read(f)) ++n;
  return n;
}

}  // namespace svtest
