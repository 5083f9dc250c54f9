// splinetool upscale-video, run as a program: frames, rate, audio and size kept; the cpu result
// on a lossless codec equals sv::zoom of the decoded input frames rounded to 8 bits; a failing run
// leaves an existing OUT untouched; bad command lines exit 2 with one line; the cuda backend
// agrees with the cpu one within one 8-bit level (skipped without a device).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "splineview/array.h"
#include "splineview/cuda_device.h"
#include "splineview/resample.h"
#include "splineview/video.h"
#include "video_test_util.h"

namespace {

using svtest::ClipSpec;
namespace vid = sv::video;

struct ToolRun {
  int status = -1;
  std::string out, err;
};

// Runs splinetool with `args` (shell words), capturing stdout and stderr.
ToolRun splinetool(const std::string& args, const std::string& dir) {
  const std::string out = dir + "/stdout.txt", err = dir + "/stderr.txt";
  // No leak check in splinetool: upscale-video runs in a dlopen()ed module
  // (splinetool-video.so), and LeakSanitizer (GCC 12, glibc 2.36) crashes at exit reading the
  // dynamic TLS of a module that a thread never touched ("Tracer caught signal 11"), as the
  // GL-backed CLI tests' ASAN_OPTIONS avoid for Mesa.
  const std::string cmd = std::string("ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}") +
                          "detect_leaks=0\" '" + SPLINETOOL_PATH + "' " + args + " >'" + out +
                          "' 2>'" + err + "'";
  const int rc = std::system(cmd.c_str());
  ToolRun r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  auto slurp = [](const std::string& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

int lines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

std::vector<vid::Frame> decode_frames(const std::string& path) {
  vid::Decoder d(path);
  std::vector<vid::Frame> frames;
  vid::Frame f;
  while (d.read(f)) frames.push_back(f);
  return frames;
}

// The specification of the cpu path, written out independently: RGBA8 -> (H, W, 3) float v/255
// -> sv::zoom -> round(clamp(v * 255)).
std::vector<std::uint8_t> reference_rgb(const vid::Frame& in, double scale, sv::Method m, int& ow,
                                        int& oh) {
  sv::ArrayF a({static_cast<std::size_t>(in.height), static_cast<std::size_t>(in.width)}, 3);
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x)
      for (int c = 0; c < 3; ++c)
        a.at2(y, x, c) =
            static_cast<float>(in.rgba[(static_cast<std::size_t>(y) * in.width + x) * 4 + c]) /
            255.0f;
  sv::ResampleOptions o;
  o.method = m;
  const sv::ArrayF z = sv::zoom(a, scale, o);
  oh = static_cast<int>(z.dim(0));
  ow = static_cast<int>(z.dim(1));
  std::vector<std::uint8_t> out(z.size());
  for (std::size_t i = 0; i < z.size(); ++i)
    out[i] = static_cast<std::uint8_t>(
        std::lround(std::min(255.0, std::max(0.0, static_cast<double>(z[i]) * 255.0))));
  return out;
}

class UpscaleVideo : public svtest::TempDirTest {};

TEST_F(UpscaleVideo, CpuCubicOnFfv1EqualsZoomOfTheDecodedFrames) {
  ClipSpec s;
  s.width = 23;
  s.height = 17;
  s.frames = 9;
  s.fps = 24;
  s.audio = true;
  const std::string in = path("in.mkv"), out = path("out.mkv");
  svtest::write_clip(in, s);
  for (const auto& [method, scale] : std::vector<std::pair<std::string, double>>{
           {"cubic", 1.5}, {"linear", 2.0}, {"nearest", 0.7}, {"cubic-unfiltered", 3.0}}) {
    char scale_text[32];
    std::snprintf(scale_text, sizeof scale_text, "%g", scale);
    const ToolRun r = splinetool("upscale-video '" + in + "' '" + out + "' --scale " + scale_text +
                                     " --method " + method + " --codec ffv1 --quiet --json",
                                 dir_.string());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "") << "--quiet prints nothing on success";
    EXPECT_NE(r.out.find("\"frames\": 9"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\"upscale\""), std::string::npos) << r.out;

    const std::vector<vid::Frame> src = decode_frames(in), dst = decode_frames(out);
    ASSERT_EQ(dst.size(), src.size()) << method;
    vid::Decoder d(out);
    EXPECT_DOUBLE_EQ(d.info().fps, 24.0);
    // round(N * F) with halves to even (23 x 1.5 = 34.5 -> 34), as sv::zoom and scipy.
    EXPECT_EQ(d.info().width, static_cast<int>(std::nearbyint(s.width * scale)));
    EXPECT_EQ(d.info().height, static_cast<int>(std::nearbyint(s.height * scale)));
    for (std::size_t k = 0; k < src.size(); ++k) {
      int ow = 0, oh = 0;
      const std::vector<std::uint8_t> want =
          reference_rgb(src[k], scale, sv::parse_method(method), ow, oh);
      ASSERT_EQ(dst[k].width, ow);
      ASSERT_EQ(dst[k].height, oh);
      EXPECT_NEAR(dst[k].pts_s, src[k].pts_s, 1e-3);
      int wrong = 0;
      for (std::size_t p = 0; p < static_cast<std::size_t>(ow) * oh; ++p)
        for (int c = 0; c < 3; ++c) wrong += dst[k].rgba[p * 4 + c] != want[p * 3 + c];
      EXPECT_EQ(wrong, 0) << method << " x" << scale << " frame " << k;
    }
    const vid::PacketCounts a = vid::count_packets(in), b = vid::count_packets(out);
    EXPECT_EQ(b.audio_codec, a.audio_codec);
    EXPECT_EQ(b.audio, a.audio);
    EXPECT_GT(b.audio, 0);
  }
}

TEST_F(UpscaleVideo, DefaultMp4KeepsFramesRateAudioAndMakesTheSizeEven) {
  if (!vid::has_video_encoder("libx264")) GTEST_SKIP() << "no libx264 in this libavcodec";
  ClipSpec s;
  s.width = 41;  // 41 x 31 at 1.0 -> 40 x 30 (yuv420p: the odd last column and row dropped)
  s.height = 31;
  s.frames = 15;
  s.fps = 30;
  s.flat = 1;  // ffv1 keeps the odd size; flat frames survive the lossy output
  s.audio = true;
  s.audio_seconds = 0.7;  // audio longer than the video: every packet is still copied
  const std::string in = path("in.mkv");
  svtest::write_clip(in, s);
  for (const auto& [scale, w, h] :
       std::vector<std::tuple<const char*, int, int>>{{"2", 82, 62}, {"1", 40, 30}}) {
    const std::string out = path(std::string("out") + scale + ".mp4");
    const ToolRun r = splinetool(
        "upscale-video '" + in + "' '" + out + "' --scale " + scale + " --method linear --quiet",
        dir_.string());
    ASSERT_EQ(r.status, 0) << r.err;
    const vid::PacketCounts a = vid::count_packets(in), b = vid::count_packets(out);
    EXPECT_EQ(b.video, 15);
    EXPECT_EQ(b.video_codec, "h264");
    EXPECT_EQ(b.width, w);
    EXPECT_EQ(b.height, h);
    EXPECT_EQ(b.audio_codec, "aac");
    EXPECT_EQ(b.audio, a.audio);
    vid::Decoder d(out);
    EXPECT_DOUBLE_EQ(d.info().fps, 30.0);
    const std::vector<vid::Frame> frames = decode_frames(out);
    ASSERT_EQ(frames.size(), 15u);
    for (int k = 0; k < 15; ++k) {
      EXPECT_NEAR(frames[k].pts_s, k / 30.0, 1e-3);
      double mean = 0;
      for (std::size_t p = 0; p < frames[k].rgba.size() / 4; ++p) mean += frames[k].rgba[p * 4];
      EXPECT_NEAR(mean / static_cast<double>(frames[k].rgba.size() / 4), svtest::flat_level(k),
                  3.0);
    }
  }
}

TEST_F(UpscaleVideo, FailingRunLeavesAnExistingOutUntouched) {
  ClipSpec s;
  s.frames = 30;
  const std::string good = path("good.mkv"), cut = path("cut.mkv"), out = path("out.mkv");
  svtest::write_clip(good, s);
  svtest::truncated_copy(good, cut, 0.6);
  std::ofstream(out) << "precious";
  const ToolRun r =
      splinetool("upscale-video '" + cut + "' '" + out + "' --scale 2 --quiet", dir_.string());
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("splinetool: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(cut), std::string::npos) << r.err;
  std::ifstream in(out);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "precious");
  for (const auto& e : std::filesystem::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos)
        << "left behind: " << e.path();
  // webm cannot hold the AAC audio: refused before any frame, OUT untouched.
  if (vid::has_video_encoder("libvpx-vp9")) {
    ClipSpec a;
    a.audio = true;
    const std::string with_audio = path("aac.mkv"), webm = path("out.webm");
    svtest::write_clip(with_audio, a);
    std::ofstream(webm) << "precious";
    const ToolRun w = splinetool(
        "upscale-video '" + with_audio + "' '" + webm + "' --scale 2 --quiet", dir_.string());
    EXPECT_EQ(w.status, 1);
    EXPECT_NE(w.err.find("cannot hold"), std::string::npos) << w.err;
    EXPECT_NE(w.err.find(webm), std::string::npos) << w.err;
    std::ifstream in2(webm);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in2), {}), "precious");
  }
}

TEST_F(UpscaleVideo, BadCommandLinesAndInputsGiveOneLine) {
  ClipSpec s;
  s.frames = 3;
  const std::string in = path("in.mkv"), out = path("out.mkv");
  svtest::write_clip(in, s);
  const std::string io = "'" + in + "' '" + out + "' ";
  // Command-line faults: exit 2.
  for (const std::string& args : std::vector<std::string>{
           io + "--scale 0", io + "--scale -1", io + "--scale abc", io + "--scale 17",
           io + "--scale 2 --codec nosuch", io + "--scale 2 --method quintic",
           io + "--scale 2 --backend gl", io + "--scale 2 --crf 99",
           "'" + in + "' '" + in + "' --scale 2", io + "--scale 1.5 --backend cuda",
           io + "--scale 2 --backend cuda --method cubic-unfiltered",
           "'" + in + "' '" + path("out.txt") + "' --scale 2", io}) {
    const ToolRun r = splinetool("upscale-video " + args, dir_.string());
    EXPECT_EQ(r.status, 2) << args << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1) << args << ": " << r.err;
    EXPECT_EQ(r.err.rfind("splinetool: ", 0), 0u) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << args;
  }
  // Inputs and outputs that fail: exit 1, the file named.
  const std::string text = path("text.mp4");
  std::ofstream(text) << "not a video";
  for (const auto& [args, named] : std::vector<std::pair<std::string, std::string>>{
           {"'" + path("missing.mp4") + "' '" + out + "' --scale 2", path("missing.mp4")},
           {"'" + text + "' '" + out + "' --scale 2", text},
           {"'" + in + "' '" + path("no/dir/out.mkv") + "' --scale 2", path("no/dir/out.mkv")}}) {
    const ToolRun r = splinetool("upscale-video " + args, dir_.string());
    EXPECT_EQ(r.status, 1) << args << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << args;
  }
}

TEST_F(UpscaleVideo, CudaAgreesWithCpuWithinOneLevel) {
  std::string why;
  if (sv::cuda_devices(&why).empty()) GTEST_SKIP() << "no CUDA device: " << why;
  ClipSpec s;
  s.width = 64;
  s.height = 36;
  s.frames = 6;
  const std::string in = path("in.mkv");
  svtest::write_clip(in, s);
  for (const std::string method : {"cubic", "linear", "nearest"})
    for (const char* scale : {"2", "3", "4"}) {
      const std::string cpu = path("cpu.mkv"), gpu = path("gpu.mkv");
      const std::string common =
          " --scale " + std::string(scale) + " --method " + method + " --codec ffv1 --quiet";
      ToolRun r = splinetool("upscale-video '" + in + "' '" + cpu + "'" + common, dir_.string());
      ASSERT_EQ(r.status, 0) << r.err;
      r = splinetool("upscale-video '" + in + "' '" + gpu + "'" + common + " --backend cuda",
                     dir_.string());
      if (r.status != 0 && r.err.find("cannot run here") != std::string::npos)
        GTEST_SKIP() << r.err;
      ASSERT_EQ(r.status, 0) << r.err;
      const std::vector<vid::Frame> a = decode_frames(cpu), b = decode_frames(gpu);
      ASSERT_EQ(a.size(), b.size());
      int worst = 0;
      for (std::size_t k = 0; k < a.size(); ++k) {
        ASSERT_EQ(a[k].rgba.size(), b[k].rgba.size());
        for (std::size_t i = 0; i < a[k].rgba.size(); ++i)
          worst = std::max(worst, std::abs(int(a[k].rgba[i]) - int(b[k].rgba[i])));
      }
      EXPECT_LE(worst, 1) << method << " x" << scale;
    }
}

}  // namespace
