// sv::video::Decoder: demux (libavformat), decode (libavcodec, errors fatal) and convert to RGBA
// (libswscale, one cached context), one frame per read(). Packets and frames are unreferenced as
// soon as they are used, and the output buffer belongs to the caller's Frame, so memory stays
// flat over any length of playback.
//
// Damage is reported, not concealed: the decoder runs with AV_EF_EXPLODE | AV_EF_CRCCHECK, a
// packet the demuxer marks corrupt is an error, a read error is an error, and at the end of a
// file read from its start the number of frames is checked against the container's count (or,
// without one, the last timestamp against the container's duration).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "ffmpeg_common.h"
#include "splineview/video.h"

namespace sv::video {

using namespace detail;

struct Decoder::Impl {
  std::string source, label, camera;
  DecoderOptions opt;
  InputPtr fmt;
  CodecPtr dec;
  AVStream* stream = nullptr;
  int stream_index = -1;
  PacketPtr packet = make_packet();
  FramePtr frame = make_frame();
  SwsPtr sws;
  // What the cached swscale context was made for.
  int sws_w = -1, sws_h = -1, sws_fmt = -1, sws_space = -1, sws_range = -1;
  StreamInfo info;
  int out_w = 0, out_h = 0;
  std::int64_t container_frames = -1;  // the container's own frame count (not an estimate)
  double container_duration = -1;      // seconds, the video stream's or the file's
  double frame_duration = 0;           // 1 / fps (0 unknown)
  bool flushing = false, done = false;
  bool from_start = true;       // read sequentially since open/rewind (for the count check)
  std::int64_t decoded = 0;     // frames returned since open/rewind
  std::int64_t next_index = 0;  // Frame::index of the next frame
  bool index_from_pts = false;  // after a seek: index from the first frame's pts
  double seek_target = -1;      // >= 0: drop frames before this time
  std::int64_t last_pts = AV_NOPTS_VALUE;
  double last_pts_s = -1;

  bool is_camera() const { return !camera.empty(); }

  [[noreturn]] void fail(const std::string& what, int err) const {
    throw Error(describe(label + ": " + what, err));
  }

  void open() {
    camera = camera_device_of(source);
    label = camera.empty() ? "'" + source + "'" : "camera " + camera;
    fmt = open_input(source, label, camera);
    for (unsigned i = 0; i < fmt->nb_streams; ++i)
      if (fmt->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_VIDEO &&
          !(fmt->streams[i]->disposition & AV_DISPOSITION_ATTACHED_PIC)) {
        stream_index = static_cast<int>(i);
        break;
      }
    if (stream_index < 0)
      throw Error(label + " has no video stream (" + std::to_string(fmt->nb_streams) +
                  " other stream" + (fmt->nb_streams == 1 ? "" : "s") + ")");
    stream = fmt->streams[stream_index];
    for (unsigned i = 0; i < fmt->nb_streams; ++i)
      if (static_cast<int>(i) != stream_index) fmt->streams[i]->discard = AVDISCARD_ALL;

    const AVCodecParameters* par = stream->codecpar;
    const AVCodec* codec = avcodec_find_decoder(par->codec_id);
    if (!codec) {
      std::string name = avcodec_get_name(par->codec_id);
      if (par->codec_id == AV_CODEC_ID_NONE && par->codec_tag != 0) {
        char tag[AV_FOURCC_MAX_STRING_SIZE] = {};
        av_fourcc_make_string(tag, par->codec_tag);
        name = std::string("unknown tag ") + tag;
      }
      throw Error(label + ": unsupported codec \"" + name +
                  "\" (this FFmpeg has no decoder for it)");
    }
    dec.reset(avcodec_alloc_context3(codec));
    if (!dec) throw std::bad_alloc();
    int err = avcodec_parameters_to_context(dec.get(), par);
    if (err < 0) fail("cannot set up the " + std::string(codec->name) + " decoder", err);
    dec->pkt_timebase = stream->time_base;
    dec->thread_count = std::max(0, opt.threads);
    dec->thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE;
    dec->err_recognition = AV_EF_CRCCHECK | AV_EF_EXPLODE;
    if (is_camera()) dec->flags |= AV_CODEC_FLAG_LOW_DELAY;
    err = avcodec_open2(dec.get(), codec, nullptr);
    if (err < 0) fail("cannot open the " + std::string(codec->name) + " decoder", err);
    if (par->width <= 0 || par->height <= 0)
      throw Error(label + ": the video stream has no picture size");

    info.width = par->width;
    info.height = par->height;
    AVRational rate = stream->avg_frame_rate;
    if (rate.num <= 0 || rate.den <= 0) rate = stream->r_frame_rate;
    if (rate.num <= 0 || rate.den <= 0) rate = av_guess_frame_rate(fmt.get(), stream, nullptr);
    if (rate.num > 0 && rate.den > 0) {
      info.fps = to_double(rate);
      info.fps_num = rate.num;
      info.fps_den = rate.den;
      frame_duration = 1.0 / info.fps;
    }
    info.time_base_num = stream->time_base.num;
    info.time_base_den = stream->time_base.den;
    info.codec = codec->name;
    info.container = fmt->iformat->name;
    const char* pix = av_get_pix_fmt_name(static_cast<AVPixelFormat>(par->format));
    info.pixel_format = pix ? pix : "unknown";
    info.is_camera = is_camera();
    for (unsigned i = 0; i < fmt->nb_streams; ++i)
      if (fmt->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_AUDIO) {
        info.has_audio = true;
        info.audio_codec = avcodec_get_name(fmt->streams[i]->codecpar->codec_id);
        break;
      }
    if (!is_camera()) {
      // The video stream's own duration: the stream's field, else Matroska's per-track
      // DURATION tag, else the file's duration when the video is its only stream (with audio
      // the file may legitimately run longer than the video).
      const AVDictionaryEntry* tag = av_dict_get(stream->metadata, "DURATION", nullptr, 0);
      int hh = 0, mm = 0;
      double ss = 0;
      if (stream->duration != AV_NOPTS_VALUE && stream->duration > 0)
        container_duration = static_cast<double>(stream->duration) * to_double(stream->time_base);
      else if (tag && std::sscanf(tag->value, "%d:%d:%lf", &hh, &mm, &ss) == 3)
        container_duration = hh * 3600.0 + mm * 60.0 + ss;
      else if (fmt->duration != AV_NOPTS_VALUE && fmt->duration > 0 && fmt->nb_streams == 1)
        container_duration = static_cast<double>(fmt->duration) / AV_TIME_BASE;
      info.duration_s = container_duration;
      if (container_duration <= 0 && fmt->duration != AV_NOPTS_VALUE && fmt->duration > 0)
        info.duration_s = static_cast<double>(fmt->duration) / AV_TIME_BASE;
      if (stream->nb_frames > 0) {
        container_frames = stream->nb_frames;
        info.frames = stream->nb_frames;
      } else if (container_duration > 0 && info.fps > 0) {
        info.frames = std::llround(container_duration * info.fps);
      }
    }

    out_w = info.width;
    out_h = info.height;
    double s = 1.0;
    if (opt.max_width > 0) s = std::min(s, static_cast<double>(opt.max_width) / info.width);
    if (opt.max_height > 0) s = std::min(s, static_cast<double>(opt.max_height) / info.height);
    if (s < 1.0) {
      out_w = std::max(1, static_cast<int>(std::lround(info.width * s)));
      out_h = std::max(1, static_cast<int>(std::lround(info.height * s)));
    }
  }

  double seconds_of(std::int64_t pts) const {
    const std::int64_t start = stream->start_time != AV_NOPTS_VALUE ? stream->start_time : 0;
    return static_cast<double>(pts - start) * to_double(stream->time_base);
  }

  // Converts the decoded frame into `out` (RGBA, out_w x out_h) through the cached context.
  void convert(Frame& out) {
    const AVFrame* f = frame.get();
    if (f->width <= 0 || f->height <= 0 || f->format < 0)
      throw Error(label + ": the decoder returned a frame without a picture");
    if (f->width != sws_w || f->height != sws_h || f->format != sws_fmt ||
        f->colorspace != sws_space || f->color_range != sws_range) {
      sws.reset(sws_getContext(
          f->width, f->height, static_cast<AVPixelFormat>(f->format), out_w, out_h, AV_PIX_FMT_RGBA,
          SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, nullptr, nullptr, nullptr));
      if (!sws)
        throw Error(label + ": cannot convert " +
                    std::string(av_get_pix_fmt_name(static_cast<AVPixelFormat>(f->format))) +
                    " pictures to RGBA");
      const AVPixFmtDescriptor* desc = av_pix_fmt_desc_get(static_cast<AVPixelFormat>(f->format));
      if (desc && !(desc->flags & AV_PIX_FMT_FLAG_RGB)) {
        // YUV input: the matrix and range the stream states (BT.601 when it states none).
        const int space =
            f->colorspace == AVCOL_SPC_BT709 ? SWS_CS_ITU709
            : (f->colorspace == AVCOL_SPC_BT2020_NCL || f->colorspace == AVCOL_SPC_BT2020_CL)
                ? SWS_CS_BT2020
                : SWS_CS_DEFAULT;
        const int full = f->color_range == AVCOL_RANGE_JPEG ? 1 : 0;
        sws_setColorspaceDetails(sws.get(), sws_getCoefficients(space), full,
                                 sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16);
      }
      sws_w = f->width;
      sws_h = f->height;
      sws_fmt = f->format;
      sws_space = f->colorspace;
      sws_range = f->color_range;
    }
    out.width = out_w;
    out.height = out_h;
    out.rgba.resize(static_cast<std::size_t>(out_w) * static_cast<std::size_t>(out_h) * 4);
    std::uint8_t* dst[4] = {out.rgba.data(), nullptr, nullptr, nullptr};
    const int dst_stride[4] = {out_w * 4, 0, 0, 0};
    sws_scale(sws.get(), f->data, f->linesize, 0, f->height, dst, dst_stride);
  }

  // End of a file read from its start: was all of it there?
  void check_complete() const {
    if (is_camera()) return;
    if (from_start && container_frames > 0 && decoded < container_frames)
      throw Error(label + " ends after " + std::to_string(decoded) + " of the " +
                  std::to_string(container_frames) +
                  " frames its container lists (truncated or damaged file)");
    if (from_start && container_frames <= 0 && container_duration > 0 && frame_duration > 0) {
      const double end = decoded > 0 ? last_pts_s + frame_duration : 0.0;
      const double slack = std::max(2.5 * frame_duration, 0.05);
      if (end < container_duration - slack) {
        char buf[160];
        std::snprintf(buf, sizeof buf,
                      " ends at %.3f s but its container says %.3f s (truncated or damaged file)",
                      end, container_duration);
        throw Error(label + buf);
      }
    }
  }

  bool read(Frame& out) {
    if (done) return false;
    for (;;) {
      int ret = avcodec_receive_frame(dec.get(), frame.get());
      if (ret == 0) {
        std::int64_t pts = frame->best_effort_timestamp;
        if (pts == AV_NOPTS_VALUE) pts = frame->pts;
        if (pts == AV_NOPTS_VALUE) {
          // No timestamp: one frame duration after the previous one.
          const double tb = to_double(stream->time_base);
          const std::int64_t step =
              frame_duration > 0 && tb > 0
                  ? std::max<std::int64_t>(1, std::llround(frame_duration / tb))
                  : 1;
          pts = last_pts == AV_NOPTS_VALUE
                    ? (stream->start_time != AV_NOPTS_VALUE ? stream->start_time : 0)
                    : last_pts + step;
        }
        const double t = seconds_of(pts);
        if (seek_target >= 0) {
          const double tolerance = frame_duration > 0 ? 1e-3 * frame_duration : 1e-6;
          if (t < seek_target - tolerance) {
            av_frame_unref(frame.get());
            continue;
          }
          seek_target = -1;
        }
        try {
          convert(out);
        } catch (...) {
          av_frame_unref(frame.get());
          throw;
        }
        av_frame_unref(frame.get());
        if (index_from_pts) {
          next_index = info.fps > 0 ? std::llround(t * info.fps) : 0;
          index_from_pts = false;
        }
        out.index = next_index++;
        out.pts = pts;
        out.pts_s = t;
        last_pts = pts;
        last_pts_s = t;
        ++decoded;
        return true;
      }
      if (ret == AVERROR_EOF) {
        done = true;
        check_complete();
        return false;
      }
      if (ret != AVERROR(EAGAIN))
        fail("corrupt video data (decoding frame " + std::to_string(decoded) + " failed)", ret);
      // The decoder wants input.
      if (flushing) {
        done = true;
        check_complete();
        return false;
      }
      clear_log();
      ret = av_read_frame(fmt.get(), packet.get());
      if (ret == AVERROR_EOF) {
        if (!is_camera() && fmt->pb && fmt->pb->error < 0) fail("read error", fmt->pb->error);
        flushing = true;
        ret = avcodec_send_packet(dec.get(), nullptr);
        if (ret < 0 && ret != AVERROR_EOF) fail("corrupt video data at the end", ret);
        continue;
      }
      if (ret < 0) {
        if (is_camera()) throw Error(describe(label + " stopped delivering frames", ret));
        fail("cannot read the file (damaged?)", ret);
      }
      if (packet->stream_index != stream_index) {
        av_packet_unref(packet.get());
        continue;
      }
      if (packet->flags & AV_PKT_FLAG_CORRUPT) {
        av_packet_unref(packet.get());
        throw Error(label + ": corrupt video data (the demuxer marks the packet after frame " +
                    std::to_string(decoded) + " as damaged; truncated file?)");
      }
      ret = avcodec_send_packet(dec.get(), packet.get());
      av_packet_unref(packet.get());
      if (ret < 0 && ret != AVERROR(EAGAIN))
        fail("corrupt video data (decoding frame " + std::to_string(decoded) + " failed)", ret);
    }
  }

  void seek(double seconds) {
    if (is_camera()) throw Error(label + ": a camera cannot seek");
    if (!std::isfinite(seconds)) throw Error(label + ": cannot seek to a non-finite time");
    seconds = std::max(0.0, seconds);
    const double tb = to_double(stream->time_base);
    const std::int64_t start = stream->start_time != AV_NOPTS_VALUE ? stream->start_time : 0;
    const std::int64_t ts = start + static_cast<std::int64_t>(std::floor(seconds / tb));
    clear_log();
    int ret = av_seek_frame(fmt.get(), stream_index, ts, AVSEEK_FLAG_BACKWARD);
    if (ret < 0)
      ret = avformat_seek_file(fmt.get(), stream_index, std::numeric_limits<std::int64_t>::min(),
                               ts, ts, 0);
    if (ret < 0) fail("cannot seek to " + std::to_string(seconds) + " s", ret);
    avcodec_flush_buffers(dec.get());
    done = false;
    flushing = false;
    last_pts = AV_NOPTS_VALUE;
    last_pts_s = -1;
    decoded = 0;
    from_start = seconds <= 0;
    seek_target = seconds;
    next_index = 0;
    index_from_pts = !from_start;
  }
};

Decoder::Decoder(const std::string& source, const DecoderOptions& opt) : impl_(new Impl) {
  impl_->source = source;
  impl_->opt = opt;
  impl_->open();
}

Decoder::~Decoder() = default;

const StreamInfo& Decoder::info() const {
  return impl_->info;
}
int Decoder::output_width() const {
  return impl_->out_w;
}
int Decoder::output_height() const {
  return impl_->out_h;
}
const std::string& Decoder::source() const {
  return impl_->source;
}
bool Decoder::read(Frame& out) {
  return impl_->read(out);
}
void Decoder::seek(double seconds) {
  impl_->seek(seconds);
}
void Decoder::rewind() {
  impl_->seek(0);
}

}  // namespace sv::video
