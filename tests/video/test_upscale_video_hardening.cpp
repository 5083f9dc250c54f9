// splinetool upscale-video against damaged input and interruptions (issue 12):
//  - IN whose audio is cut (fewer packets than its MP4 sample table lists, video intact) is an
//    error (exit 1, one line naming IN, OUT untouched) unless --no-audio (OUT without audio) or
//    --allow-damaged (OUT with the packets that are there, a warning line); complete audio,
//    shorter than the video or not, is never called damaged;
//  - the advice for audio a container cannot hold depends on OUT: ".mkv" only when OUT is not
//    already Matroska and Matroska holds the codec;
//  - SIGTERM mid-run leaves no temporary file (sv::TempFileGuard) and no OUT.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "splineview/video.h"
#include "video_test_util.h"

namespace {

using svtest::ClipSpec;
namespace vid = sv::video;
namespace fs = std::filesystem;

struct ToolRun {
  int status = -1;
  std::string out, err;
};

std::string slurp(const std::string& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

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
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

int lines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

std::vector<std::string> temporaries(const fs::path& dir) {
  std::vector<std::string> t;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp-") != std::string::npos)
      t.push_back(e.path().string());
  return t;
}

class UpscaleVideoHardening : public svtest::TempDirTest {
 protected:
  // An MP4 (mpeg4 video, 12 flat frames = 0.5 s; AAC audio of 3 s) and a copy cut inside the
  // audio-only tail: every video frame is there, the last audio packets are not.
  void make_cut_audio_clip(const std::string& whole, const std::string& cut) {
    ClipSpec s;
    s.codec = "mpeg4";
    s.width = 48;
    s.height = 32;
    s.frames = 12;
    s.fps = 24;
    s.audio = true;
    s.audio_seconds = 3.0;
    svtest::write_clip(whole, s);
    svtest::truncated_copy(whole, cut, 0.8);
    // The premise: the cut removed audio packets only.
    const vid::PacketCounts a = vid::count_packets(whole), b = vid::count_packets(cut);
    ASSERT_EQ(a.video, 12);
    ASSERT_GT(a.audio, 100);  // 3 s of 1024-sample AAC frames at 48 kHz: 141 (+ priming)
    ASSERT_EQ(svtest::decode_all(cut), 12) << "the cut must leave the video complete";
    ASSERT_LT(b.audio, a.audio) << "the cut must remove audio packets";
    ASSERT_GT(b.audio, 0);
  }
};

}  // namespace

TEST_F(UpscaleVideoHardening, TruncatedAudioIsAnErrorUnlessNoAudioOrAllowDamaged) {
  const std::string whole = path("whole.mp4"), cut = path("cut.mp4"), out = path("out.mkv");
  make_cut_audio_clip(whole, cut);
  if (HasFatalFailure()) return;
  const std::int64_t present = vid::count_packets(cut).audio;

  // Default: refused, one line naming IN and the audio, OUT untouched, nothing left behind.
  std::ofstream(out) << "precious";
  ToolRun r =
      splinetool("upscale-video '" + cut + "' '" + out + "' --scale 2 --quiet", dir_.string());
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("splinetool: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(cut), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("audio"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--no-audio"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--allow-damaged"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(out), "precious");
  EXPECT_TRUE(temporaries(dir_).empty());

  // --no-audio: the video alone.
  r = splinetool("upscale-video '" + cut + "' '" + out + "' --scale 2 --quiet --no-audio",
                 dir_.string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  vid::PacketCounts c = vid::count_packets(out);
  EXPECT_EQ(c.video, 12);
  EXPECT_EQ(c.audio, 0);

  // --allow-damaged: the packets that are there, and a warning line that says so.
  fs::remove(out);
  r = splinetool(
      "upscale-video '" + cut + "' '" + out + "' --scale 2 --quiet --allow-damaged --json",
      dir_.string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("warning"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(cut), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("\"damaged\": \""), std::string::npos) << r.out;
  c = vid::count_packets(out);
  EXPECT_EQ(c.video, 12);
  // Every whole packet that is there; the one the cut split (flagged corrupt) is not copied.
  EXPECT_GE(c.audio, present - 1);
  EXPECT_LE(c.audio, present);
  EXPECT_NE(r.err.find("holds the " + std::to_string(c.audio) + " audio packets"),
            std::string::npos)
      << r.err;

  // --no-audio and --allow-damaged contradict each other: a usage error.
  r = splinetool(
      "upscale-video '" + cut + "' '" + path("x.mkv") + "' --scale 2 --no-audio --allow-damaged",
      dir_.string());
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_FALSE(fs::exists(path("x.mkv")));

  // The whole file is complete: accepted with every audio packet, no warning.
  r = splinetool("upscale-video '" + whole + "' '" + path("whole_out.mkv") + "' --scale 2 --quiet",
                 dir_.string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(vid::count_packets(path("whole_out.mkv")).audio, vid::count_packets(whole).audio);
}

TEST_F(UpscaleVideoHardening, CompleteAudioShorterThanTheVideoIsNotDamage) {
  // Audio that ends before the video by design (0.2 s of audio under 1 s of video), in the two
  // containers whose declarations are checked (MP4 sample table, Matroska DURATION tag).
  for (const std::string& ext : std::vector<std::string>{".mp4", ".mkv"}) {
    ClipSpec s;
    s.codec = ext == ".mp4" ? "mpeg4" : "ffv1";
    s.frames = 24;
    s.fps = 24;
    s.audio = true;
    s.audio_seconds = 0.2;
    const std::string in = path("short_audio" + ext), out = path("short_audio_out" + ext);
    svtest::write_clip(in, s);
    const ToolRun r =
        splinetool("upscale-video '" + in + "' '" + out + "' --scale 2 --quiet", dir_.string());
    ASSERT_EQ(r.status, 0) << ext << ": " << r.err;
    EXPECT_EQ(r.err, "") << ext;
    EXPECT_EQ(vid::count_packets(out).audio, vid::count_packets(in).audio) << ext;
  }
}

TEST_F(UpscaleVideoHardening, CutMatroskaAudioIsAnError) {
  // Matroska states each track's duration (DURATION tag): audio cut short of it is damage.
  ClipSpec s;
  s.frames = 12;
  s.audio = true;
  s.audio_seconds = 3.0;
  const std::string whole = path("whole.mkv"), cut = path("cut.mkv"), out = path("out.mkv");
  svtest::write_clip(whole, s);
  svtest::truncated_copy(whole, cut, 0.8);
  ASSERT_EQ(svtest::decode_all(cut), 12) << "the cut must leave the video complete";
  ASSERT_LT(vid::count_packets(cut).audio, vid::count_packets(whole).audio);
  ToolRun r =
      splinetool("upscale-video '" + cut + "' '" + out + "' --scale 2 --quiet", dir_.string());
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("audio ends at"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  r = splinetool("upscale-video '" + cut + "' '" + out + "' --scale 2 --quiet --allow-damaged",
                 dir_.string());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(vid::count_packets(out).audio, vid::count_packets(cut).audio);
}

TEST_F(UpscaleVideoHardening, AudioAdviceDependsOnOut) {
  // mu-law audio: NUT holds it, Matroska and MP4 do not (at FFmpeg's normal compliance), so
  // "write .mkv" would be advice that cannot be followed.
  ClipSpec s;
  s.frames = 6;
  s.audio = true;
  s.audio_codec = "pcm_mulaw";
  const std::string mulaw = path("mulaw.nut");
  svtest::write_clip(mulaw, s);
  ASSERT_EQ(vid::count_packets(mulaw).audio_codec, "pcm_mulaw");
  for (const std::string& out : {path("a.mkv"), path("a.mp4")}) {
    const ToolRun r =
        splinetool("upscale-video '" + mulaw + "' '" + out + "' --scale 2 --quiet", dir_.string());
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("cannot hold"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find(".mkv, which"), std::string::npos) << out << ": " << r.err;
    EXPECT_NE(r.err.find("--no-audio"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
  }
  // 16-bit PCM: Matroska holds it, MP4 does not: the advice for an .mp4 OUT names .mkv.
  s.audio_codec = "pcm_s16le";
  const std::string pcm = path("pcm.nut");
  svtest::write_clip(pcm, s);
  const ToolRun r = splinetool(
      "upscale-video '" + pcm + "' '" + path("b.mp4") + "' --scale 2 --quiet", dir_.string());
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("write .mkv"), std::string::npos) << r.err;
  const ToolRun ok = splinetool(
      "upscale-video '" + pcm + "' '" + path("b.mkv") + "' --scale 2 --quiet", dir_.string());
  EXPECT_EQ(ok.status, 0) << ok.err;
}

TEST_F(UpscaleVideoHardening, SigtermMidRunLeavesNoTemporary) {
  const std::string clip = std::string(SPLINEVIEW_ASSETS_DIR) + "/coffee_pan.mp4";
  const std::string out = path("up.mkv"), err = path("sigterm_stderr.txt");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // The child: splinetool alone in its process, stderr to a file.
    FILE* e = std::freopen(err.c_str(), "w", stderr);
    (void)e;
    execl(SPLINETOOL_PATH, SPLINETOOL_PATH, "upscale-video", clip.c_str(), out.c_str(), "--scale",
          "3", "--quiet", static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait until the temporary exists (the encoder has opened it: the run is under way; its bytes
  // may still sit in FFmpeg's buffers), let the run go on a little, then stop it.
  const auto t0 = std::chrono::steady_clock::now();
  bool started = false, exited = false;
  int status = 0;
  while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(120)) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    if (!temporaries(dir_).empty()) {
      started = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!exited) {
    ASSERT_EQ(kill(pid, SIGTERM), 0);
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
  }
  ASSERT_TRUE(started) << "the run ended (status " << status
                       << ") before its temporary grew: " << slurp(err);
  // Ended by the signal itself (the default action, re-raised after the clean-up) ...
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << "status " << status;
  // ... with neither the temporary nor a partial OUT left.
  EXPECT_TRUE(temporaries(dir_).empty());
  EXPECT_FALSE(fs::exists(out));
}
