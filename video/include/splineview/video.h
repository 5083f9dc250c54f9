// Video input and output through FFmpeg (libavformat/libavcodec/libswscale/libavdevice), in plain
// C++: no FFmpeg type appears here, so the viewer and splinetool compile without its headers.
//
//  Decoder  a file or a V4L2 camera -> 8-bit RGBA frames, one at a time, into a caller's Frame
//           whose buffer is reused (no allocation per frame once sized). Decoder errors are
//           fatal (AV_EF_EXPLODE), and a file that ends before its container said it would is
//           reported, so a damaged file is an sv::Error naming it, never garbage frames.
//  Encoder  8-bit RGBA frames -> a video file through FFmpeg's encoders, with an optional audio
//           track: the packets of another file's audio stream copied unchanged, or generated
//           samples encoded (the bundled clip's tone). Audio is interleaved with the video as
//           the video advances, so memory stays flat whatever the length.
//
// Every failure is an sv::Error with one sentence naming the file (or camera) and the problem,
// with FFmpeg's own explanation appended where it has one. FFmpeg's log is captured, not printed
// (set SPLINEVIEW_FFMPEG_LOG=1 in the environment to see it on stderr).
// Thread safety: one Decoder or Encoder is used from one thread at a time; distinct objects may
// live on distinct threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "splineview/array.h"
#include "splineview/resample.h"

namespace sv::video {

struct StreamInfo {
  int width = 0, height = 0;                   // coded picture size
  double fps = 0;                              // average frame rate (frames per second)
  double duration_s = -1;                      // <0 unknown (cameras)
  std::int64_t frames = -1;                    // frame count if known or estimated, else -1
  std::string codec, container, pixel_format;  // FFmpeg names, for the UI
  bool has_audio = false;
  bool is_camera = false;
  // Exact rationals behind fps and the timestamps (for the Encoder, which keeps them).
  int fps_num = 0, fps_den = 1;              // average frame rate
  int time_base_num = 0, time_base_den = 1;  // unit of Frame::pts
  std::string audio_codec;                   // "" without audio
};

struct Frame {  // 8-bit RGBA, row major, top row first, tightly packed
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgba;  // width * height * 4 (alpha 255)
  double pts_s = 0;                // presentation time in seconds from stream start
  std::int64_t index = 0;          // 0-based frame number since open / seek target
  std::int64_t pts = 0;            // presentation time in StreamInfo::time_base units (raw)
};

struct DecoderOptions {
  int max_width = 0, max_height = 0;  // >0: scale down (swscale, keep aspect) to fit; 0 = native
  int threads = 0;                    // decoder threads, 0 = auto
};

class Decoder {
 public:
  // `source`: a file path, or a camera: "/dev/videoN" or "v4l2:/dev/videoN" (FFmpeg's
  // video4linux2 input from libavdevice). Throws sv::Error naming the source and the problem
  // (no such file, not a video, no video stream, unsupported codec "<name>", camera cannot be
  // opened ...).
  explicit Decoder(const std::string& source, const DecoderOptions& opt = {});
  ~Decoder();
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  const StreamInfo& info() const;
  int output_width() const;  // after max_width/height
  int output_height() const;
  const std::string& source() const;

  // Decodes the next frame into `out` (reusing its buffer). Returns false at the clean end of
  // the stream (and on every call after it). Throws sv::Error on corrupt or truncated data, and
  // on a camera that stopped delivering frames.
  // Frame::index counts frames from the open, or from the seek target: after seek(t) the first
  // frame's index is round(pts_s * fps) (the frame number of a constant-rate file).
  bool read(Frame& out);
  // Seeks to the first frame at or after `seconds` (seek to the previous key frame, decode
  // forward); for files only (throws for cameras). rewind() == seek(0).
  void seek(double seconds);
  void rewind();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Generated audio for an Encoder: interleaved float samples in [-1, 1].
struct AudioTrack {
  int sample_rate = 48000;
  int channels = 2;
  std::vector<float> samples;  // frames * channels, interleaved
  std::string codec;           // "" = the container's default (aac for mp4/mov/mkv, opus for webm)
  int bit_rate = 128000;
};

struct EncoderOptions {
  std::string codec;  // "" = default_video_codec(path)
  int crf = -1;       // constant rate factor for encoders that have one (x264, vpx); -1 = default
  int threads = 0;    // encoder threads, 0 = auto
  // The container format by FFmpeg's short name ("mp4", "matroska", ...); "" = from the path's
  // extension (set it when writing to a temporary name).
  std::string format;
};

// What an Encoder wrote (for checks and reports).
struct EncoderStats {
  std::int64_t video_frames = 0;
  std::int64_t audio_packets = 0;
  std::string video_codec, pixel_format, audio_codec;
  int width = 0, height = 0;  // encoded picture size (see video_size_for)
  // Copied audio that was damaged, copied anyway (copy_audio_from(..., true)): what was missing,
  // one sentence naming the source; "" when the audio was complete (or generated).
  std::string audio_damage;
};

class Encoder {
 public:
  // Opens `path` for writing (it is created now; the caller removes it after a failure).
  // Frames must be width x height RGBA. fps_num/fps_den is the frame rate; timestamps are in
  // time_base_num/time_base_den units (e.g. a Decoder's StreamInfo, to keep the input's).
  // Throws sv::Error for an unknown encoder, one the container cannot hold, a size the
  // encoder's pixel format cannot take (odd sizes for 4:2:0: see video_size_for()), or a file
  // that cannot be created.
  Encoder(const std::string& path, int width, int height, int fps_num, int fps_den,
          int time_base_num, int time_base_den, const EncoderOptions& opt = {});
  ~Encoder();
  Encoder(const Encoder&) = delete;
  Encoder& operator=(const Encoder&) = delete;

  // Audio, before the first write(): copy the audio stream of `source` packet by packet
  // (returns false when it has none), or encode generated samples. Throws when the container
  // cannot hold that audio codec ("... cannot hold aac audio; ...").
  // Copied audio must be complete: write() and finish() throw, naming `source`, when reading its
  // audio fails, a packet is flagged corrupt, fewer packets arrive than its container lists
  // (MP4/MOV sample tables), or the packets end more than max(2 packets, 50 ms) before the
  // track's declared duration (Matroska's per-track DURATION tag). Containers that declare
  // neither are checked for read errors and corrupt packets only. With `allow_damaged` the
  // packets that are there are copied and stats().audio_damage says what was missing.
  bool copy_audio_from(const std::string& source, bool allow_damaged = false);
  void add_audio(const AudioTrack& track);

  // Encodes one frame. pts in the time base given above; it must increase (a frame whose pts
  // does not is given the previous one + 1).
  void write(const Frame& frame, std::int64_t pts);
  // Flushes the encoder, writes the rest of the audio and the trailer, closes the file.
  void finish();

  const EncoderStats& stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The video encoder used for `path` when none is named: libx264 for .mp4/.mkv/.mov (mpeg4 when
// this libavcodec has no libx264), libvpx-vp9 for .webm, ffv1 for .nut and .avi. Throws for
// other extensions.
std::string default_video_codec(const std::string& path);
// The FFmpeg container name for `path`'s extension ("mp4", "matroska", "webm", "mov", ...);
// throws for an extension FFmpeg cannot write.
std::string container_for(const std::string& path);
// True when this libavcodec has a video encoder of that name.
bool has_video_encoder(const std::string& name);
// The pixel format an Encoder uses for `codec`: an RGB format when the encoder takes one exactly
// (ffv1, png, libx264rgb: lossless codecs stay lossless), else yuv420p when it can, else its
// first. And the frame size it can take for a wanted size: 4:2:0 and 4:2:2 formats need even
// sizes, so an odd width or height loses its last column or row (the picture is cropped by one
// pixel, never scaled or padded).
std::string encoder_pixel_format(const std::string& codec);
void video_size_for(const std::string& codec, int& width, int& height);

// Counts the packets of a file's streams (demuxing only): checks that a written file holds what
// was written.
struct PacketCounts {
  std::int64_t video = 0, audio = 0;
  std::string video_codec, audio_codec;  // "" when the stream is missing
  int width = 0, height = 0;
  int fps_num = 0, fps_den = 1;
};
PacketCounts count_packets(const std::string& path);

// The CPU upscaling of one frame (splinetool upscale-video --backend cpu, and the reference the
// GPU paths are checked against): RGBA8 -> ArrayF (H, W, 3) with values v / 255 (alpha dropped)
// -> sv::zoom(samples, scale, {method, reflect}) (output extent round(N * scale) per axis, output
// sample j at input position (j + 1/2) / (N_out / N) - 1/2) -> 8 bits: round(clamp(v * 255, 0,
// 255)), halves away from zero, alpha 255. pts, pts_s and index are copied.
void frame_to_array(const Frame& in, ArrayF& rgb);  // reuses rgb when its shape fits
void array_to_frame(const ArrayF& rgb, Frame& out);
std::uint8_t to_u8(float v);
void upscale_frame(const Frame& in, double scale, Method method, Frame& out, unsigned threads = 0);

// False in a build configured without FFmpeg's development files: then every Decoder and Encoder
// constructor throws an sv::Error saying so and has_video_encoder() is false.
bool video_compiled();

// "libavformat 59.27.100, libavcodec 59.37.100, libswscale 6.7.100" (for reports).
std::string ffmpeg_versions();

}  // namespace sv::video
