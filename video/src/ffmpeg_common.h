// Shared plumbing of the video layer: FFmpeg headers, RAII owners for its objects, error text,
// the captured log, and the one-time device registration. Private to video/src.
#pragma once

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavdevice/avdevice.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/error.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
}

#include <memory>
#include <string>

#include "splineview/error.h"

namespace sv::video::detail {

struct FormatInputDeleter {
  void operator()(AVFormatContext* f) const { avformat_close_input(&f); }
};
struct CodecContextDeleter {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
struct PacketDeleter {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};
struct FrameDeleter {
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};
struct SwsDeleter {
  void operator()(SwsContext* s) const { sws_freeContext(s); }
};

using InputPtr = std::unique_ptr<AVFormatContext, FormatInputDeleter>;
using CodecPtr = std::unique_ptr<AVCodecContext, CodecContextDeleter>;
using PacketPtr = std::unique_ptr<AVPacket, PacketDeleter>;
using FramePtr = std::unique_ptr<AVFrame, FrameDeleter>;
using SwsPtr = std::unique_ptr<SwsContext, SwsDeleter>;

PacketPtr make_packet();
FramePtr make_frame();

// av_strerror's text ("Invalid data found when processing input").
std::string av_error_text(int err);

// Installs the capturing log callback and registers the input devices (once per process).
void init_ffmpeg();
// Clears the captured error log; last_log() returns the last error-level line FFmpeg logged
// since then ("" if none), without its trailing newline.
void clear_log();
std::string last_log();

// "<what>: <av_error_text(err)>" plus " (FFmpeg: <last log line>)" when the log adds something.
std::string describe(const std::string& what, int err);

// Opens a file or camera for demuxing, with the same errors as the Decoder. `camera_device` is
// the device path for a camera source, "" for a file.
InputPtr open_input(const std::string& source, const std::string& label,
                    const std::string& camera_device);

// "/dev/videoN" or "v4l2:/dev/videoN" -> "/dev/videoN"; anything else -> "".
std::string camera_device_of(const std::string& source);

// a/b as double, 0 when b == 0.
double to_double(AVRational r);

}  // namespace sv::video::detail
