// Stand-ins for a build without FFmpeg's development files: the same API, every operation throws
// an sv::Error that says why (as cuda/src/none.cpp does for CUDA), has_video_encoder() is false
// and video_compiled() tells callers up front.
#include "splineview/video.h"

namespace sv::video {
namespace {

[[noreturn]] void no_video(const std::string& what) {
  throw Error(what +
              ": this build has no video support (FFmpeg's libavformat, libavcodec, "
              "libswscale and libavdevice development files were not found at configure "
              "time; see scripts/deps)");
}

}  // namespace

bool video_compiled() {
  return false;
}

struct Decoder::Impl {
  StreamInfo info;
  std::string source;
};

Decoder::Decoder(const std::string& source, const DecoderOptions&) {
  no_video("'" + source + "'");
}
Decoder::~Decoder() = default;
const StreamInfo& Decoder::info() const {
  return impl_->info;
}
int Decoder::output_width() const {
  return 0;
}
int Decoder::output_height() const {
  return 0;
}
const std::string& Decoder::source() const {
  return impl_->source;
}
bool Decoder::read(Frame&) {
  no_video("video decoding");
}
void Decoder::seek(double) {
  no_video("video decoding");
}
void Decoder::rewind() {
  no_video("video decoding");
}

struct Encoder::Impl {
  EncoderStats stats;
};

Encoder::Encoder(const std::string& path, int, int, int, int, int, int, const EncoderOptions&) {
  no_video("'" + path + "'");
}
Encoder::~Encoder() = default;
bool Encoder::copy_audio_from(const std::string&, bool) {
  no_video("video encoding");
}
void Encoder::add_audio(const AudioTrack&) {
  no_video("video encoding");
}
void Encoder::write(const Frame&, std::int64_t) {
  no_video("video encoding");
}
void Encoder::finish() {
  no_video("video encoding");
}
const EncoderStats& Encoder::stats() const {
  return impl_->stats;
}

std::string default_video_codec(const std::string& path) {
  no_video("'" + path + "'");
}
std::string container_for(const std::string& path) {
  no_video("'" + path + "'");
}
bool has_video_encoder(const std::string&) {
  return false;
}
std::string encoder_pixel_format(const std::string& codec) {
  no_video(codec);
}
void video_size_for(const std::string& codec, int&, int&) {
  no_video(codec);
}
PacketCounts count_packets(const std::string& path) {
  no_video("'" + path + "'");
}
std::string ffmpeg_versions() {
  return "none (built without FFmpeg)";
}

}  // namespace sv::video
