// splinetool upscale-video: decode IN (sv::video::Decoder), upscale every frame (cpu: sv::zoom
// through sv::video::upscale_frame; cuda: sv::cuda::FrameUpscaler, integer factors 2..4), encode
// OUT (sv::video::Encoder) with IN's frame rate and timestamps and IN's audio packets copied
// unchanged. IN's audio must be complete (sv::video::Encoder::copy_audio_from says what that
// means): truncated or damaged audio is an error unless --no-audio (drop it) or --allow-damaged
// (copy the packets that are there, said on stderr). The file is written under a temporary name
// beside OUT and renamed at the end, after its frame and audio packet counts were read back and
// found equal to what was written; any failure, and SIGINT/SIGTERM/... (sv::TempFileGuard),
// removes the temporary file and leaves OUT as it was.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "splineview/cuda_device.h"
#include "splineview/error.h"
#include "splineview/resample.h"
#include "splineview/temp_files.h"
#include "splineview/video.h"

#if __has_include("splineview/cuda_upscale.h")
#include "splineview/cuda_upscale.h"
#define SPLINETOOL_HAVE_CUDA_UPSCALER 1
#else
#define SPLINETOOL_HAVE_CUDA_UPSCALER 0
#endif

namespace splinetool {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Progress on stderr: one line rewritten with \r on a terminal, else a plain line every 5 s.
class Progress {
 public:
  Progress(bool enabled, std::int64_t total)
      : enabled_(enabled),
        tty_(::isatty(2) != 0),
        total_(total),
        start_(Clock::now()),
        last_(start_) {}
  void update(std::int64_t done, bool final = false) {
    if (!enabled_) return;
    const auto now = Clock::now();
    const double since_last = std::chrono::duration<double>(now - last_).count();
    if (!final && since_last < (tty_ ? 0.2 : 5.0)) return;
    if (final && !tty_ && !printed_) return;  // a short run prints nothing when not on a tty
    last_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double fps = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
    char line[200];
    if (total_ > 0) {
      const double eta =
          fps > 0 ? static_cast<double>(std::max<std::int64_t>(0, total_ - done)) / fps : 0;
      std::snprintf(
          line, sizeof line, "upscale-video: frame %lld / %lld (%3.0f%%), %.1f fps, ETA %d:%02d",
          static_cast<long long>(done), static_cast<long long>(total_),
          100.0 * static_cast<double>(std::min(done, total_)) / static_cast<double>(total_), fps,
          static_cast<int>(eta) / 60, static_cast<int>(eta) % 60);
    } else {
      std::snprintf(line, sizeof line, "upscale-video: frame %lld, %.1f fps",
                    static_cast<long long>(done), fps);
    }
    if (tty_)
      std::fprintf(stderr, "\r%s\033[K%s", line, final ? "\n" : "");
    else
      std::fprintf(stderr, "%s\n", line);
    std::fflush(stderr);
    printed_ = true;
  }
  // Before an error line: end the \r line so the error starts on its own.
  void interrupt() {
    if (enabled_ && tty_ && printed_) std::fprintf(stderr, "\n");
    printed_ = false;
  }

 private:
  bool enabled_, tty_;
  std::int64_t total_;
  Clock::time_point start_, last_;
  bool printed_ = false;
};

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
  return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}

// The frame upscaler of a backend.
class Upscaler {
 public:
  virtual ~Upscaler() = default;
  virtual void run(const sv::video::Frame& in, sv::video::Frame& out) = 0;
};

class CpuUpscaler final : public Upscaler {
 public:
  CpuUpscaler(double scale, sv::Method method, unsigned threads)
      : scale_(scale), method_(method), threads_(threads) {}
  void run(const sv::video::Frame& in, sv::video::Frame& out) override {
    sv::video::upscale_frame(in, scale_, method_, out, threads_);
  }

 private:
  double scale_;
  sv::Method method_;
  unsigned threads_;
};

#if SPLINETOOL_HAVE_CUDA_UPSCALER
class CudaUpscaler final : public Upscaler {
 public:
  CudaUpscaler(int factor, sv::cuda::UpscaleMethod method) : factor_(factor), up_(factor, method) {}
  void run(const sv::video::Frame& in, sv::video::Frame& out) override {
    out.width = in.width * factor_;
    out.height = in.height * factor_;
    out.rgba.resize(static_cast<std::size_t>(out.width) * static_cast<std::size_t>(out.height) * 4);
    up_.run(in.rgba.data(), in.width, in.height, 4, out.rgba.data());
    for (std::size_t p = 3; p < out.rgba.size(); p += 4) out.rgba[p] = 255;
    out.pts = in.pts;
    out.pts_s = in.pts_s;
    out.index = in.index;
  }

 private:
  int factor_;
  sv::cuda::FrameUpscaler up_;
};
#endif

// Checks the backend's conditions before any work (UsageError for the command line's faults).
std::unique_ptr<Upscaler> make_upscaler(const UpscaleVideoArgs& a, sv::Method method) {
  if (a.backend == "cpu") return std::make_unique<CpuUpscaler>(a.scale, method, a.threads);
  if (a.backend != "cuda")
    throw UsageError("unknown backend '" + a.backend + "' (expected cpu or cuda)");
  const int factor = static_cast<int>(std::lround(a.scale));
  if (std::fabs(a.scale - factor) > 0 || factor < 2 || factor > 4)
    throw UsageError("--backend cuda upscales by an integer factor 2, 3 or 4, not --scale " +
                     number(a.scale) + " (use --backend cpu for other factors)");
  if (method == sv::Method::CubicUnfiltered)
    throw UsageError(
        "--backend cuda has no cubic-unfiltered upscaler (nearest, linear or cubic; or use "
        "--backend cpu)");
#if SPLINETOOL_HAVE_CUDA_UPSCALER
  std::string why;
  if (sv::cuda_devices(&why).empty())
    throw sv::Error("--backend cuda cannot run here: " + why + "; use --backend cpu");
  const sv::cuda::UpscaleMethod m = method == sv::Method::Nearest ? sv::cuda::UpscaleMethod::Nearest
                                    : method == sv::Method::Linear ? sv::cuda::UpscaleMethod::Linear
                                                                   : sv::cuda::UpscaleMethod::Cubic;
  return std::make_unique<CudaUpscaler>(factor, m);
#else
  throw sv::Error(
      "--backend cuda cannot run here: this build has no CUDA upscaler; use --backend cpu");
#endif
}

}  // namespace

void run_upscale_video(const UpscaleVideoArgs& a) {
  const auto t_start = Clock::now();
  if (!sv::video::video_compiled())
    throw sv::Error(
        "upscale-video: this splinetool was built without FFmpeg (no video support; "
        "scripts/deps installs its development files)");
  if (!(a.scale > 0) || !std::isfinite(a.scale))
    throw UsageError("--scale must be a positive number");
  if (same_file(a.in, a.out))
    throw UsageError("OUT is IN ('" + a.out + "'): write the result to another file");
  const sv::Method method = sv::parse_method(a.method);
  if (method == sv::Method::Quintic || method == sv::Method::Septic)
    throw UsageError("upscale-video: --method must be nearest, linear, cubic-unfiltered or cubic");
  std::string container, codec;
  try {
    container = sv::video::container_for(a.out);
    codec = a.codec.empty() ? sv::video::default_video_codec(a.out) : a.codec;
  } catch (const sv::Error& e) {
    throw UsageError(e.what());
  }
  if (!sv::video::has_video_encoder(codec))
    throw UsageError("--codec " + codec + ": this FFmpeg has no video encoder of that name");
  std::unique_ptr<Upscaler> upscaler = make_upscaler(a, method);

  // The output directory must exist before any work is done.
  const fs::path out_path(a.out);
  const fs::path dir = out_path.has_parent_path() ? out_path.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw sv::Error("cannot write '" + a.out + "': the directory '" + dir.string() +
                    "' does not exist");
  if (::access(dir.c_str(), W_OK) != 0)
    throw sv::Error("cannot write '" + a.out + "': the directory '" + dir.string() +
                    "' is not writable");

  sv::video::Decoder dec(a.in);
  const sv::video::StreamInfo& info = dec.info();
  if (info.fps_num <= 0) throw sv::Error("'" + a.in + "': the video stream states no frame rate");
  // round(N * F), halves to even: the extent sv::zoom gives every frame (resample.h).
  const int out_w = static_cast<int>(std::nearbyint(info.width * a.scale));
  const int out_h = static_cast<int>(std::nearbyint(info.height * a.scale));
  if (out_w < 2 || out_h < 2 || out_w > 16384 || out_h > 16384)
    throw UsageError("--scale " + number(a.scale) + " makes " + std::to_string(info.width) + "x" +
                     std::to_string(info.height) + " frames " + std::to_string(out_w) + "x" +
                     std::to_string(out_h) + " (each side must be 2..16384)");

  // Removed on every failure and on terminating signals, unless renamed into place.
  sv::TempFileGuard tmp(a.out + ".tmp-" + std::to_string(static_cast<long>(::getpid())));
  sv::video::EncoderOptions eo;
  eo.codec = codec;
  eo.crf = a.crf;
  eo.format = container;
  std::optional<sv::video::Encoder> enc;
  bool audio = false;
  try {
    enc.emplace(tmp.path(), out_w, out_h, info.fps_num, info.fps_den, info.time_base_num,
                info.time_base_den, eo);
    if (info.has_audio && !a.no_audio) audio = enc->copy_audio_from(a.in, a.allow_damaged);
  } catch (const sv::Error& e) {
    // The encoder names the temporary file; the user knows OUT.
    std::string msg = e.what();
    const std::string t = "'" + tmp.path() + "'", o = "'" + a.out + "'";
    for (std::size_t at = msg.find(t); at != std::string::npos; at = msg.find(t, at + o.size()))
      msg.replace(at, t.size(), o);
    if (msg.find("audio") != std::string::npos && msg.find("cannot hold") != std::string::npos)
      msg += " (--no-audio)";
    throw sv::Error(msg);
  }

  Progress progress(!a.quiet, info.frames);
  sv::video::Frame in, out;
  double decode_ms = 0, upscale_ms = 0, encode_ms = 0;
  std::int64_t frames = 0;
  try {
    for (;;) {
      auto t0 = Clock::now();
      const bool got = dec.read(in);
      decode_ms += ms_since(t0);
      if (!got) break;
      t0 = Clock::now();
      upscaler->run(in, out);
      upscale_ms += ms_since(t0);
      t0 = Clock::now();
      enc->write(out, in.pts);
      encode_ms += ms_since(t0);
      ++frames;
      progress.update(frames);
    }
    const auto t0 = Clock::now();
    enc->finish();
    encode_ms += ms_since(t0);
  } catch (...) {
    progress.interrupt();
    throw;
  }
  progress.update(frames, true);
  if (frames == 0) throw sv::Error("'" + a.in + "' has no frames");

  // Read the result back: every frame and every audio packet must be there.
  const sv::video::EncoderStats stats = enc->stats();
  enc.reset();
  const sv::video::PacketCounts got = sv::video::count_packets(tmp.path());
  if (got.video != frames)
    throw sv::Error("'" + a.out + "' would hold " + std::to_string(got.video) +
                    " frames, not the " + std::to_string(frames) + " of '" + a.in +
                    "'; not written");
  std::int64_t audio_in = 0;
  if (audio) {
    // Complete audio: IN's packets, counted independently; damaged audio copied on request:
    // the packets that were there (a second read of IN could fail where the copy stopped).
    audio_in =
        stats.audio_damage.empty() ? sv::video::count_packets(a.in).audio : stats.audio_packets;
    if (got.audio != audio_in)
      throw sv::Error("'" + a.out + "' would hold " + std::to_string(got.audio) +
                      " audio packets, not the " + std::to_string(audio_in) + " of '" + a.in +
                      "'; not written");
  }
  if (std::rename(tmp.path().c_str(), a.out.c_str()) != 0)
    throw sv::Error("cannot write '" + a.out + "': " + std::string(std::strerror(errno)));
  tmp.release();
  if (!stats.audio_damage.empty())
    std::fprintf(stderr,
                 "splinetool: warning: %s; --allow-damaged: '%s' holds the %lld audio packets "
                 "that were there\n",
                 stats.audio_damage.c_str(), a.out.c_str(),
                 static_cast<long long>(stats.audio_packets));

  if (a.json) {
    const double seconds = ms_since(t_start) / 1000.0;
    Json j{
        {"command", "upscale-video"},
        {"input", a.in},
        {"output", a.out},
        {"backend", a.backend},
        {"method", a.method},
        {"scale", a.scale},
        {"codec", stats.video_codec},
        {"pixel_format", stats.pixel_format},
        {"container", container},
        {"input_codec", info.codec},
        {"input_size", {info.width, info.height}},
        {"output_size", {stats.width, stats.height}},
        {"frames", frames},
        {"video_fps", info.fps},
        {"audio", audio ? Json{{"codec", stats.audio_codec},
                               {"packets", got.audio},
                               {"damaged", stats.audio_damage.empty() ? Json(nullptr)
                                                                      : Json(stats.audio_damage)}}
                        : Json(nullptr)},
        {"seconds", seconds},
        {"fps", seconds > 0 ? static_cast<double>(frames) / seconds : 0.0},
        {"stage_ms", {{"decode", decode_ms}, {"upscale", upscale_ms}, {"encode", encode_ms}}},
        {"ffmpeg", sv::video::ffmpeg_versions()}};
    std::cout << j.dump(2) << std::endl;
  }
}

}  // namespace splinetool
