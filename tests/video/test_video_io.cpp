// sv::video::Decoder and Encoder: round trips of synthetic clips (ffv1 exact, libx264 and mpeg4
// lossy with flat frames), seeking, scaling on decode, damaged and wrong inputs (always an
// sv::Error naming the file, never a crash), and flat memory over long playback.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>

#include "splineview/error.h"
#include "splineview/video.h"
#include "video_test_util.h"

namespace {

using svtest::ClipSpec;
using svtest::write_clip;
namespace vid = sv::video;

class VideoIo : public svtest::TempDirTest {};

// Mean of channel c over a frame.
double mean_channel(const vid::Frame& f, int c) {
  double s = 0;
  for (std::size_t p = 0; p < f.rgba.size() / 4; ++p) s += f.rgba[p * 4 + c];
  return s / static_cast<double>(f.rgba.size() / 4);
}

// Expects an sv::Error whose message names `path`.
template <class F>
void expect_error_naming(F&& f, const std::string& path, const char* what) {
  try {
    f();
    ADD_FAILURE() << what << ": no error for " << path;
  } catch (const sv::Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos)
        << what << ": the message does not name the file: " << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
  }
}

TEST_F(VideoIo, LosslessRoundTripGivesEveryFrameExactly) {
  ClipSpec s;
  s.width = 37;  // odd sizes: ffv1 takes RGB at any size
  s.height = 21;
  s.frames = 17;
  s.fps = 25;
  const std::string p = path("exact.mkv");
  const vid::EncoderStats st = write_clip(p, s);
  EXPECT_EQ(st.video_frames, s.frames);
  EXPECT_EQ(st.width, s.width);
  EXPECT_EQ(st.height, s.height);

  vid::Decoder d(p);
  EXPECT_EQ(d.info().width, s.width);
  EXPECT_EQ(d.info().height, s.height);
  EXPECT_DOUBLE_EQ(d.info().fps, 25.0);
  EXPECT_EQ(d.info().codec, "ffv1");
  EXPECT_FALSE(d.info().has_audio);
  EXPECT_FALSE(d.info().is_camera);
  EXPECT_NEAR(d.info().duration_s, 17 / 25.0, 0.05);
  vid::Frame f;
  int k = 0;
  while (d.read(f)) {
    ASSERT_LT(k, s.frames);
    ASSERT_EQ(f.width, s.width);
    ASSERT_EQ(f.height, s.height);
    EXPECT_EQ(f.index, k);
    EXPECT_NEAR(f.pts_s, k / 25.0, 1e-3);
    int wrong = 0;
    for (int y = 0; y < s.height; ++y)
      for (int x = 0; x < s.width; ++x)
        for (int c = 0; c < 4; ++c) {
          const std::uint8_t want = c == 3 ? 255 : svtest::pattern(k, x, y, c);
          wrong += f.rgba[(static_cast<std::size_t>(y) * s.width + x) * 4 + c] != want;
        }
    EXPECT_EQ(wrong, 0) << "frame " << k;
    ++k;
  }
  EXPECT_EQ(k, s.frames);
  EXPECT_FALSE(d.read(f)) << "read() after the end";
  EXPECT_FALSE(d.read(f));
}

TEST_F(VideoIo, LossyCodecsKeepCountRateAndLevels) {
  for (const std::string codec : {"libx264", "mpeg4"}) {
    if (!vid::has_video_encoder(codec)) continue;
    ClipSpec s;
    s.width = 64;
    s.height = 48;
    s.frames = 25;
    s.fps = 30;
    s.codec = codec;
    s.audio = true;
    const std::string p = path("lossy_" + codec + ".mp4");
    const vid::EncoderStats st = write_clip(p, s);
    EXPECT_EQ(st.pixel_format, "yuv420p");
    vid::Decoder d(p);
    EXPECT_DOUBLE_EQ(d.info().fps, 30.0) << codec;
    EXPECT_EQ(d.info().frames, 25) << codec;
    EXPECT_TRUE(d.info().has_audio);
    EXPECT_EQ(d.info().audio_codec, "aac");
    vid::Frame f;
    int k = 0;
    while (d.read(f)) {
      EXPECT_NEAR(mean_channel(f, 1), svtest::flat_level(k), 3.0) << codec << " frame " << k;
      ++k;
    }
    EXPECT_EQ(k, 25) << codec;
    const vid::PacketCounts pc = vid::count_packets(p);
    EXPECT_EQ(pc.video, 25);
    EXPECT_GT(pc.audio, 0);
    EXPECT_EQ(pc.audio_codec, "aac");
  }
}

TEST_F(VideoIo, SeekReturnsTheFirstFrameAtOrAfterTheTime) {
  ClipSpec s;
  s.frames = 50;
  s.fps = 25;
  const std::string p = path("seek.mkv");
  write_clip(p, s);
  vid::Decoder d(p);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> t_of(0.0, 2.1);
  std::vector<double> times = {0.0, 0.04, 0.4, 1.0, 1.96, 0.039, 0.041, 2.5};
  for (int i = 0; i < 12; ++i) times.push_back(t_of(rng));
  vid::Frame f;
  for (double t : times) {
    d.seek(t);
    const int want = static_cast<int>(std::ceil(t * 25 - 1e-6));
    if (want >= s.frames) {
      EXPECT_FALSE(d.read(f)) << "seek past the end, t = " << t;
      continue;
    }
    ASSERT_TRUE(d.read(f)) << "t = " << t;
    EXPECT_EQ(f.index, want) << "t = " << t;
    EXPECT_NEAR(f.pts_s, want / 25.0, 1e-3) << "t = " << t;
    EXPECT_EQ(f.rgba[0], svtest::pattern(want, 0, 0, 0)) << "t = " << t;
    EXPECT_EQ(f.rgba[4 * 5 + 2], svtest::pattern(want, 5, 0, 2)) << "t = " << t;
    if (want + 1 < s.frames) {
      ASSERT_TRUE(d.read(f));
      EXPECT_EQ(f.index, want + 1) << "the frame after the seek target, t = " << t;
    }
  }
  d.rewind();
  EXPECT_EQ(svtest::decode_all(p), s.frames);
  int n = 0;
  while (d.read(f)) ++n;
  EXPECT_EQ(n, s.frames) << "rewind() then read to the end";
}

TEST_F(VideoIo, SeekInALongGopDecodesForwardFromTheKeyFrame) {
  if (!vid::has_video_encoder("libx264")) GTEST_SKIP() << "no libx264 in this libavcodec";
  ClipSpec s;
  s.width = 64;
  s.height = 48;
  s.frames = 25;
  s.fps = 25;
  s.codec = "libx264";
  const std::string p = path("gop.mp4");
  write_clip(p, s);
  vid::Decoder d(p);
  vid::Frame f;
  for (int k : {17, 3, 24, 0, 12}) {
    d.seek(k / 25.0);
    ASSERT_TRUE(d.read(f));
    EXPECT_EQ(f.index, k);
    EXPECT_NEAR(mean_channel(f, 0), svtest::flat_level(k), 3.0) << "frame " << k;
  }
}

TEST_F(VideoIo, MaxSizeScalesDownKeepingTheAspect) {
  ClipSpec s;
  s.width = 64;
  s.height = 48;
  s.frames = 3;
  const std::string p = path("big.mkv");
  write_clip(p, s);
  vid::DecoderOptions o;
  o.max_width = 32;
  vid::Decoder d(p, o);
  EXPECT_EQ(d.output_width(), 32);
  EXPECT_EQ(d.output_height(), 24);
  vid::Decoder full(p);
  vid::Frame f, g;
  int k = 0;
  while (d.read(f)) {
    ASSERT_TRUE(full.read(g));
    EXPECT_EQ(f.width, 32);
    EXPECT_EQ(f.height, 24);
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(mean_channel(f, c), mean_channel(g, c), 2.0);
    ++k;
  }
  EXPECT_EQ(k, 3);
  o.max_width = 0;
  o.max_height = 12;
  EXPECT_EQ(vid::Decoder(p, o).output_width(), 16);
  o.max_height = 100;  // never scaled up
  EXPECT_EQ(vid::Decoder(p, o).output_width(), 64);
}

TEST_F(VideoIo, MissingNotAVideoAndCameraAreClearErrors) {
  const std::string missing = path("missing.mp4");
  expect_error_naming([&] { vid::Decoder d(missing); }, missing, "missing file");
  const std::string text = path("text.mp4");
  std::ofstream(text) << "this is a text file, not a video\n" << std::string(4000, 'x');
  expect_error_naming([&] { vid::Decoder d(text); }, text, "text file");
  const std::string empty = path("empty.mkv");
  std::ofstream(empty).close();
  expect_error_naming([&] { vid::Decoder d(empty); }, empty, "empty file");
  expect_error_naming([&] { vid::Decoder d(dir_.string()); }, dir_.string(), "directory");
  for (const std::string cam : {"/dev/video99", "v4l2:/dev/video99"})
    expect_error_naming([&] { vid::Decoder d(cam); }, "/dev/video99", "camera");
}

TEST_F(VideoIo, AudioOnlyFileHasNoVideoStream) {
  // A hand-made WAV file (PCM, 1 s): a real media file without video.
  const std::string wav = path("tone.wav");
  {
    std::ofstream w(wav, std::ios::binary);
    auto u32 = [&](std::uint32_t v) { w.write(reinterpret_cast<const char*>(&v), 4); };
    auto u16 = [&](std::uint16_t v) { w.write(reinterpret_cast<const char*>(&v), 2); };
    const std::uint32_t n = 8000;
    w.write("RIFF", 4);
    u32(36 + n * 2);
    w.write("WAVEfmt ", 8);
    u32(16);
    u16(1);
    u16(1);
    u32(8000);
    u32(16000);
    u16(2);
    u16(16);
    w.write("data", 4);
    u32(n * 2);
    for (std::uint32_t i = 0; i < n; ++i) u16(static_cast<std::uint16_t>(i * 37));
  }
  try {
    vid::Decoder d(wav);
    ADD_FAILURE() << "no error for an audio-only file";
  } catch (const sv::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no video stream"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(wav), std::string::npos) << e.what();
  }
}

// Truncated and overwritten copies of an exact (ffv1 in Matroska) and a lossy (H.264 + AAC in
// MP4) clip: every one is an sv::Error naming the file, at open or while reading.
TEST_F(VideoIo, DamagedFilesAreErrorsNamingTheFile) {
  std::vector<std::string> sources;
  {
    ClipSpec s;
    s.width = 48;
    s.height = 32;
    s.frames = 40;
    s.audio = true;
    sources.push_back(path("src.mkv"));
    write_clip(sources.back(), s);
  }
  if (vid::has_video_encoder("libx264")) {
    ClipSpec s;
    s.width = 64;
    s.height = 48;
    s.frames = 40;
    s.codec = "libx264";
    s.audio = true;
    sources.push_back(path("src.mp4"));
    write_clip(sources.back(), s);
  }
  int serial = 0;
  for (const std::string& src : sources) {
    ASSERT_EQ(svtest::decode_all(src), 40) << src;
    const std::string ext = src.substr(src.size() - 4);
    for (double fraction : {0.5, 0.9}) {
      const std::string p = path("cut" + std::to_string(serial++) + ext);
      svtest::truncated_copy(src, p, fraction);
      expect_error_naming([&] { svtest::decode_all(p); }, p,
                          ("truncated at " + std::to_string(fraction)).c_str());
    }
    const std::string p = path("noise" + std::to_string(serial++) + ext);
    svtest::corrupted_copy(src, p, 0.1, 1234);
    expect_error_naming([&] { svtest::decode_all(p); }, p, "overwritten middle");
  }
}

// A stream whose codec this FFmpeg cannot decode: the AVI fourcc of an ffv1 clip replaced by an
// unknown one.
TEST_F(VideoIo, UnknownCodecIsAnUnsupportedCodecError) {
  ClipSpec s;
  const std::string src = path("clip.avi");
  write_clip(src, s);
  std::vector<char> b = svtest::read_bytes(src);
  int replaced = 0;
  for (std::size_t i = 0; i + 4 <= b.size() && i < 4096; ++i)
    if (std::string(&b[i], 4) == "FFV1") {
      std::copy_n("QZQZ", 4, &b[i]);
      ++replaced;
    }
  ASSERT_GT(replaced, 0) << "no FFV1 fourcc in the AVI header";
  const std::string p = path("unknown.avi");
  svtest::write_bytes(p, b);
  try {
    svtest::decode_all(p);
    ADD_FAILURE() << "no error for an unknown codec";
  } catch (const sv::Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(p), std::string::npos) << m;
    EXPECT_NE(m.find("unsupported codec"), std::string::npos) << m;
    EXPECT_NE(m.find("QZQZ"), std::string::npos) << m;
  }
}

TEST_F(VideoIo, EncoderRefusesUnknownCodecsAndWrongContainers) {
  vid::EncoderOptions eo;
  eo.codec = "nosuch";
  const std::string p = path("x.mp4");
  expect_error_naming([&] { vid::Encoder e(p, 16, 16, 25, 1, 1, 25, eo); }, p, "--codec nosuch");
  if (vid::has_video_encoder("libx264")) {
    eo.codec = "libx264";
    const std::string w = path("x.webm");
    try {
      vid::Encoder e(w, 16, 16, 25, 1, 1, 25, eo);
      ADD_FAILURE() << "webm took h264";
    } catch (const sv::Error& e) {
      EXPECT_NE(std::string(e.what()).find("cannot hold"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(vid::container_for(path("x.txt")), sv::Error);
  const std::string nodir = path("nodir/x.mkv");
  eo.codec = "ffv1";
  expect_error_naming([&] { vid::Encoder e(nodir, 16, 16, 25, 1, 1, 25, eo); }, nodir, "no dir");
  // A frame of the wrong size.
  vid::Encoder e(path("y.mkv"), 16, 16, 25, 1, 1, 25, eo);
  vid::Frame f;
  svtest::fill_frame(f, 15, 16, 0, false);
  EXPECT_THROW(e.write(f, 0), sv::Error);
}

TEST(VideoFormats, PixelFormatsAndSizes) {
  EXPECT_EQ(vid::encoder_pixel_format("ffv1").find("yuv"), std::string::npos)
      << "ffv1 should keep RGB: " << vid::encoder_pixel_format("ffv1");
  if (vid::has_video_encoder("libx264")) {
    EXPECT_EQ(vid::encoder_pixel_format("libx264"), "yuv420p");
    int w = 41, h = 31;
    vid::video_size_for("libx264", w, h);
    EXPECT_EQ(w, 40);
    EXPECT_EQ(h, 30);
    EXPECT_EQ(vid::default_video_codec("a.mp4"), "libx264");
    EXPECT_EQ(vid::default_video_codec("a.MKV"), "libx264");
  }
  int w = 41, h = 31;
  vid::video_size_for("ffv1", w, h);
  EXPECT_EQ(w, 41);
  EXPECT_EQ(h, 31);
  if (vid::has_video_encoder("libvpx-vp9")) {
    EXPECT_EQ(vid::default_video_codec("a.webm"), "libvpx-vp9");
  }
}

// Memory stays flat over long playback: the bundled clip decoded in a loop (rewinding at the
// end) for 5000 frames; the resident set after frame 500 and at the end differ by < 8 MB.
// (The suite runs with a small AddressSanitizer quarantine, so freed memory is reused.)
long resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  long size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

TEST(VideoMemory, FlatOverLongPlayback) {
  const std::string clip = std::string(SPLINEVIEW_ASSETS_DIR) + "/coffee_pan.mp4";
  vid::Decoder d(clip);
  vid::Frame f;
  long at500 = 0;
  int rewinds = 0;
  for (int n = 0; n < 5000;) {
    if (!d.read(f)) {
      d.rewind();
      ++rewinds;
      continue;
    }
    ++n;
    if (n == 500) at500 = resident_bytes();
  }
  const long at_end = resident_bytes();
  EXPECT_GT(rewinds, 0);
  EXPECT_LT(std::labs(at_end - at500), 8L << 20)
      << "RSS after frame 500: " << at500 / 1024 << " KiB, after 5000: " << at_end / 1024 << " KiB";
  std::printf("RSS after frame 500: %ld KiB, after frame 5000: %ld KiB (%d rewinds)\n",
              at500 / 1024, at_end / 1024, rewinds);
}

}  // namespace
