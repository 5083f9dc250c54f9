// sv::video::Encoder: RGBA frames -> swscale (one cached context) -> an FFmpeg video encoder ->
// libavformat, plus an optional audio stream: packets copied from another file (CopiedAudio) or
// generated samples encoded (EncodedAudio). Audio packets are written as the video advances (up
// to the time of each video frame), and av_interleaved_write_frame orders what remains, so the
// muxer never buffers more than a few packets.
//
// Choices: a lossless codec (ffv1, png, ...) gets an RGB pixel format, so RGB frames survive
// exactly; any other codec gets yuv420p where it can (with BT.709 coefficients, limited range,
// and tagged so), which needs even sizes: an odd width or height drops its last column or row.
// MP4/MOV files are written with the index first (movflags +faststart), so the frame count is
// known to readers even before the end of the file. ffv1 is written as version 3 with slice
// CRCs, so damage is detected on decoding.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "ffmpeg_common.h"
#include "splineview/video.h"

namespace sv::video {

using namespace detail;

namespace {

std::string lower_extension(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  const std::size_t dot = name.find_last_of('.');
  if (dot == std::string::npos || dot == 0) return "";
  std::string e = name.substr(dot);
  for (char& ch : e) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return e;
}

bool is_rgb_format(AVPixelFormat f) {
  const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(f);
  return d && (d->flags & AV_PIX_FMT_FLAG_RGB) && d->comp[0].depth == 8 &&
         !(d->flags & AV_PIX_FMT_FLAG_PAL);
}

AVPixelFormat choose_pixel_format(const AVCodec* codec) {
  const AVPixelFormat* list = codec->pix_fmts;
  if (!list) return AV_PIX_FMT_YUV420P;
  const AVCodecDescriptor* desc = avcodec_descriptor_get(codec->id);
  const bool lossless_only =
      desc && (desc->props & AV_CODEC_PROP_LOSSLESS) && !(desc->props & AV_CODEC_PROP_LOSSY);
  const AVPixelFormat rgb_order[] = {AV_PIX_FMT_RGB24, AV_PIX_FMT_BGR24, AV_PIX_FMT_BGR0,
                                     AV_PIX_FMT_RGB0,  AV_PIX_FMT_0RGB,  AV_PIX_FMT_0BGR,
                                     AV_PIX_FMT_GBRP,  AV_PIX_FMT_RGBA,  AV_PIX_FMT_BGRA};
  auto offered = [list](AVPixelFormat f) {
    for (const AVPixelFormat* p = list; *p != AV_PIX_FMT_NONE; ++p)
      if (*p == f) return true;
    return false;
  };
  auto first_rgb = [&]() {
    for (AVPixelFormat f : rgb_order)
      if (offered(f)) return f;
    return AV_PIX_FMT_NONE;
  };
  if (lossless_only && first_rgb() != AV_PIX_FMT_NONE) return first_rgb();
  if (offered(AV_PIX_FMT_YUV420P)) return AV_PIX_FMT_YUV420P;
  if (first_rgb() != AV_PIX_FMT_NONE) return first_rgb();
  return list[0];
}

const AVCodec* find_video_encoder(const std::string& name) {
  const AVCodec* c = avcodec_find_encoder_by_name(name.c_str());
  return c && c->type == AVMEDIA_TYPE_VIDEO ? c : nullptr;
}

void crop_size(AVPixelFormat fmt, int& width, int& height) {
  const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(fmt);
  if (!d) return;
  const int mw = (1 << d->log2_chroma_w) - 1, mh = (1 << d->log2_chroma_h) - 1;
  width &= ~mw;
  height &= ~mh;
}

double packet_seconds(const AVPacket* p, AVRational tb) {
  const std::int64_t t = p->dts != AV_NOPTS_VALUE ? p->dts : p->pts;
  return t == AV_NOPTS_VALUE ? -1e300 : static_cast<double>(t) * to_double(tb);
}

// A source of audio packets, in decoding order, with timestamps in time_base().
class AudioSource {
 public:
  virtual ~AudioSource() = default;
  virtual const AVCodecParameters* params() const = 0;
  virtual AVRational time_base() const = 0;
  // Fills `p` with the next packet; false at the end.
  virtual bool next(AVPacket* p) = 0;
  // What was missing from a damaged source whose damage was allowed ("" when complete).
  virtual std::string damage() const { return ""; }
};

// The packets of another file's first audio stream, unchanged. The audio must be complete
// (see copy_audio_from): a read error, a packet the demuxer flags as corrupt, fewer packets than
// the container's sample table lists (MP4/MOV), or packets that end before the track's declared
// duration (Matroska's per-track DURATION tag) are an error, unless `allow_damaged`: then the
// packets that are there are copied and damage() says what was missing.
class CopiedAudio final : public AudioSource {
 public:
  CopiedAudio(InputPtr in, int index, bool allow_damaged)
      : in_(std::move(in)), index_(index), allow_damaged_(allow_damaged) {
    for (unsigned i = 0; i < in_->nb_streams; ++i)
      if (static_cast<int>(i) != index_) in_->streams[i]->discard = AVDISCARD_ALL;
    const AVStream* st = in_->streams[index_];
    if (st->nb_frames > 0) declared_packets_ = st->nb_frames;
    const AVDictionaryEntry* tag = av_dict_get(st->metadata, "DURATION", nullptr, 0);
    int hh = 0, mm = 0;
    double ss = 0;
    if (tag && std::sscanf(tag->value, "%d:%d:%lf", &hh, &mm, &ss) == 3)
      declared_seconds_ = hh * 3600.0 + mm * 60.0 + ss;
  }
  const AVCodecParameters* params() const override { return in_->streams[index_]->codecpar; }
  AVRational time_base() const override { return in_->streams[index_]->time_base; }
  bool next(AVPacket* p) override {
    if (ended_) return false;
    for (;;) {
      const int err = av_read_frame(in_.get(), p);
      if (err == AVERROR_EOF) {
        check_complete();
        ended_ = true;
        return false;
      }
      if (err < 0) {
        damaged(describe("cannot read its audio after packet " + std::to_string(packets_), err));
        ended_ = true;
        return false;
      }
      if (p->stream_index != index_) {
        av_packet_unref(p);
        continue;
      }
      if (p->flags & AV_PKT_FLAG_CORRUPT) {
        av_packet_unref(p);
        damaged("its audio packet " + std::to_string(packets_ + 1) + " is marked corrupt");
        ended_ = true;
        return false;
      }
      ++packets_;
      const std::int64_t t = p->pts != AV_NOPTS_VALUE ? p->pts : p->dts;
      if (t != AV_NOPTS_VALUE) {
        const AVStream* st = in_->streams[index_];
        const std::int64_t start = st->start_time != AV_NOPTS_VALUE ? st->start_time : 0;
        const double tb = to_double(st->time_base);
        const double d = static_cast<double>(std::max<std::int64_t>(p->duration, 0)) * tb;
        end_s_ = std::max(end_s_, static_cast<double>(t - start) * tb + d);
        longest_packet_s_ = std::max(longest_packet_s_, d);
      }
      return true;
    }
  }
  std::string damage() const override { return damage_; }

 private:
  std::string label() const { return "'" + std::string(in_->url) + "'"; }

  void damaged(const std::string& what) {
    const std::string msg = label() + ": " + what;
    if (!allow_damaged_)
      throw Error(msg +
                  " (truncated or damaged audio; --no-audio drops the audio, --allow-damaged "
                  "copies what is there)");
    if (damage_.empty()) damage_ = msg;
  }

  // At the end of the packets: did every packet the container announces arrive?
  void check_complete() {
    if (declared_packets_ > 0 && packets_ < declared_packets_) {
      damaged("its audio ends after " + std::to_string(packets_) + " of the " +
              std::to_string(declared_packets_) + " packets its container lists");
    } else if (declared_packets_ <= 0 && declared_seconds_ > 0) {
      // Two packets (or 50 ms) of slack for rounding in the tag and the packets' durations.
      const double slack = std::max(2.0 * longest_packet_s_, 0.05);
      if (end_s_ < declared_seconds_ - slack) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "its audio ends at %.3f s but its container says %.3f s",
                      end_s_, declared_seconds_);
        damaged(buf);
      }
    }
  }

  InputPtr in_;
  int index_;
  bool allow_damaged_;
  bool ended_ = false;
  std::int64_t declared_packets_ = 0, packets_ = 0;
  double declared_seconds_ = 0, end_s_ = 0, longest_packet_s_ = 0;
  std::string damage_;
};

// Generated samples through an audio encoder (aac, libopus, ...).
class EncodedAudio final : public AudioSource {
 public:
  EncodedAudio(const AudioTrack& track, const AVCodec* codec, bool global_header)
      : track_(track), frame_(make_frame()) {
    if (track.channels < 1 || track.channels > 8 || track.sample_rate <= 0)
      throw Error("audio track: needs 1..8 channels and a positive sample rate");
    ctx_.reset(avcodec_alloc_context3(codec));
    if (!ctx_) throw std::bad_alloc();
    AVSampleFormat fmt = AV_SAMPLE_FMT_NONE;
    for (const AVSampleFormat* f = codec->sample_fmts; f && *f != AV_SAMPLE_FMT_NONE; ++f)
      if (*f == AV_SAMPLE_FMT_FLTP || *f == AV_SAMPLE_FMT_FLT || *f == AV_SAMPLE_FMT_S16) {
        fmt = *f;
        break;
      }
    if (fmt == AV_SAMPLE_FMT_NONE)
      throw Error(std::string("audio encoder ") + codec->name +
                  " takes none of the sample formats flt, fltp, s16");
    ctx_->sample_fmt = fmt;
    ctx_->sample_rate = track.sample_rate;
    av_channel_layout_default(&ctx_->ch_layout, track.channels);
    ctx_->bit_rate = track.bit_rate;
    ctx_->time_base = AVRational{1, track.sample_rate};
    if (global_header) ctx_->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    const int err = avcodec_open2(ctx_.get(), codec, nullptr);
    if (err < 0)
      throw Error(describe(std::string("cannot open the audio encoder ") + codec->name, err));
    par_.reset(avcodec_parameters_alloc());
    avcodec_parameters_from_context(par_.get(), ctx_.get());
    frame_size_ = ctx_->frame_size > 0 ? ctx_->frame_size : 1024;
  }
  const AVCodecParameters* params() const override { return par_.get(); }
  AVRational time_base() const override { return ctx_->time_base; }
  bool next(AVPacket* p) override {
    for (;;) {
      const int r = avcodec_receive_packet(ctx_.get(), p);
      if (r == 0) return true;
      if (r == AVERROR_EOF) return false;
      if (r != AVERROR(EAGAIN)) throw Error(describe("audio encoding failed", r));
      send_next();
    }
  }

 private:
  struct ParDeleter {
    void operator()(AVCodecParameters* p) const { avcodec_parameters_free(&p); }
  };

  void send_next() {
    const std::size_t ch = static_cast<std::size_t>(track_.channels);
    const std::size_t total = track_.samples.size() / ch;
    if (pos_ >= total) {
      avcodec_send_frame(ctx_.get(), nullptr);
      return;
    }
    const std::size_t n =
        std::min<std::size_t>(static_cast<std::size_t>(frame_size_), total - pos_);
    av_frame_unref(frame_.get());
    frame_->format = ctx_->sample_fmt;
    frame_->nb_samples = static_cast<int>(n);
    frame_->sample_rate = ctx_->sample_rate;
    av_channel_layout_copy(&frame_->ch_layout, &ctx_->ch_layout);
    int err = av_frame_get_buffer(frame_.get(), 0);
    if (err < 0) throw Error(describe("audio encoding: no frame buffer", err));
    const float* src = track_.samples.data() + pos_ * ch;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t c = 0; c < ch; ++c) {
        const float v = std::clamp(src[i * ch + c], -1.0f, 1.0f);
        switch (ctx_->sample_fmt) {
          case AV_SAMPLE_FMT_FLTP:
            reinterpret_cast<float*>(frame_->extended_data[c])[i] = v;
            break;
          case AV_SAMPLE_FMT_FLT:
            reinterpret_cast<float*>(frame_->extended_data[0])[i * ch + c] = v;
            break;
          default:
            reinterpret_cast<std::int16_t*>(frame_->extended_data[0])[i * ch + c] =
                static_cast<std::int16_t>(std::lround(v * 32767.0f));
        }
      }
    frame_->pts = static_cast<std::int64_t>(pos_);
    pos_ += n;
    err = avcodec_send_frame(ctx_.get(), frame_.get());
    if (err < 0) throw Error(describe("audio encoding failed", err));
  }

  AudioTrack track_;
  CodecPtr ctx_;
  std::unique_ptr<AVCodecParameters, ParDeleter> par_;
  FramePtr frame_;
  int frame_size_ = 1024;
  std::size_t pos_ = 0;
};

}  // namespace

struct Encoder::Impl {
  std::string path, label;
  AVFormatContext* oc = nullptr;
  CodecPtr enc;
  AVStream* vst = nullptr;
  AVStream* ast = nullptr;
  std::unique_ptr<AudioSource> audio;
  PacketPtr packet = make_packet();
  PacketPtr audio_packet = make_packet();
  bool audio_pending = false;  // audio_packet holds the next audio packet
  bool audio_done = false;
  FramePtr frame = make_frame();
  SwsPtr sws;
  int in_w = 0, in_h = 0;  // frames given to write()
  AVRational input_tb{1, 1};
  std::int64_t last_pts = AV_NOPTS_VALUE;
  bool header_written = false, finished = false;
  EncoderStats stats;
  EncoderOptions opt;

  ~Impl() {
    if (oc) {
      if (oc->pb && !(oc->oformat->flags & AVFMT_NOFILE)) avio_closep(&oc->pb);
      avformat_free_context(oc);
    }
  }

  [[noreturn]] void fail(const std::string& what, int err) const {
    throw Error(describe(label + ": " + what, err));
  }

  void open(int width, int height, AVRational fps, AVRational tb) {
    init_ffmpeg();
    clear_log();
    label = "'" + path + "'";
    if (width <= 0 || height <= 0) throw Error(label + ": the video size must be positive");
    if (fps.num <= 0 || fps.den <= 0) throw Error(label + ": the frame rate must be positive");
    if (tb.num <= 0 || tb.den <= 0) tb = av_inv_q(fps);
    in_w = width;
    in_h = height;
    input_tb = tb;
    const std::string format = opt.format.empty() ? container_for(path) : opt.format;
    int err = avformat_alloc_output_context2(&oc, nullptr, format.c_str(), path.c_str());
    if (err < 0 || !oc) fail("cannot set up the " + format + " container", err);

    const std::string codec_name = opt.codec.empty() ? default_video_codec(path) : opt.codec;
    const AVCodec* codec = find_video_encoder(codec_name);
    if (!codec)
      throw Error(label + ": this FFmpeg has no video encoder named '" + codec_name + "'");
    if (avformat_query_codec(oc->oformat, codec->id, FF_COMPLIANCE_NORMAL) == 0)
      throw Error(label + ": the " + oc->oformat->name + " container cannot hold " + codec->name +
                  " video (" + avcodec_get_name(codec->id) + ")");
    const AVPixelFormat pix = choose_pixel_format(codec);
    int w = width, h = height;
    crop_size(pix, w, h);
    if (w <= 0 || h <= 0)
      throw Error(label + ": " + std::to_string(width) + "x" + std::to_string(height) +
                  " is too small for " + av_get_pix_fmt_name(pix));

    enc.reset(avcodec_alloc_context3(codec));
    if (!enc) throw std::bad_alloc();
    enc->width = w;
    enc->height = h;
    enc->pix_fmt = pix;
    enc->framerate = fps;
    enc->time_base = tb;
    enc->thread_count = std::max(0, opt.threads);
    enc->sample_aspect_ratio = AVRational{1, 1};
    if (!is_rgb_format(pix)) {
      enc->colorspace = AVCOL_SPC_BT709;
      enc->color_primaries = AVCOL_PRI_BT709;
      enc->color_trc = AVCOL_TRC_BT709;
      enc->color_range = AVCOL_RANGE_MPEG;
    }
    if (oc->oformat->flags & AVFMT_GLOBALHEADER) enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    const std::string name = codec->name;
    const bool has_crf =
        av_opt_find(codec->priv_class ? static_cast<void*>(enc->priv_data) : nullptr, "crf",
                    nullptr, 0, 0) != nullptr;
    if (opt.crf >= 0 && !has_crf)
      throw Error(label + ": the " + name + " encoder has no constant rate factor (--crf)");
    if (has_crf && (opt.crf >= 0 || name.find("vpx") != std::string::npos)) {
      // libvpx: constant quality needs the bit rate 0 (else crf is only a cap).
      const int crf = opt.crf >= 0 ? opt.crf : 32;
      av_opt_set_int(enc->priv_data, "crf", crf, 0);
      if (name.find("vpx") != std::string::npos) enc->bit_rate = 0;
    }
    if (name == "libx264" || name == "libx264rgb")
      av_opt_set(enc->priv_data, "preset", "medium", 0);
    if (name.find("vpx") != std::string::npos) {
      av_opt_set(enc->priv_data, "deadline", "good", 0);
      av_opt_set_int(enc->priv_data, "cpu-used", 4, 0);
      av_opt_set_int(enc->priv_data, "row-mt", 1, 0);
    }
    if (name == "ffv1") {
      enc->level = 3;
      av_opt_set_int(enc->priv_data, "slicecrc", 1, 0);
    }
    if (!has_crf && codec->id == AV_CODEC_ID_MPEG4) {
      enc->flags |= AV_CODEC_FLAG_QSCALE;
      enc->global_quality = FF_QP2LAMBDA * 3;
    }
    clear_log();
    err = avcodec_open2(enc.get(), codec, nullptr);
    if (err < 0 && av_cmp_q(tb, av_inv_q(fps)) != 0) {
      // Some encoders (mpeg4) take only time bases up to 1/65535: count in frames instead.
      enc->time_base = av_inv_q(fps);
      clear_log();
      err = avcodec_open2(enc.get(), codec, nullptr);
    }
    if (err < 0)
      fail("cannot open the " + name + " encoder for " + std::to_string(w) + "x" +
               std::to_string(h) + " " + av_get_pix_fmt_name(pix),
           err);

    vst = avformat_new_stream(oc, nullptr);
    if (!vst) throw std::bad_alloc();
    vst->time_base = enc->time_base;
    vst->avg_frame_rate = fps;
    err = avcodec_parameters_from_context(vst->codecpar, enc.get());
    if (err < 0) fail("cannot describe the video stream", err);

    frame->format = pix;
    frame->width = w;
    frame->height = h;
    err = av_frame_get_buffer(frame.get(), 0);
    if (err < 0) fail("cannot allocate a frame", err);
    sws.reset(sws_getContext(w, h, AV_PIX_FMT_RGBA, w, h, pix,
                             SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, nullptr, nullptr,
                             nullptr));
    if (!sws) throw Error(label + ": cannot convert RGBA to " + av_get_pix_fmt_name(pix));
    if (!is_rgb_format(pix))
      sws_setColorspaceDetails(sws.get(), sws_getCoefficients(SWS_CS_ITU709), 1,
                               sws_getCoefficients(SWS_CS_ITU709), 0, 0, 1 << 16, 1 << 16);

    if (!(oc->oformat->flags & AVFMT_NOFILE)) {
      err = avio_open(&oc->pb, path.c_str(), AVIO_FLAG_WRITE);
      if (err < 0) fail("cannot be created", err);
    }
    stats.video_codec = name;
    stats.pixel_format = av_get_pix_fmt_name(pix);
    stats.width = w;
    stats.height = h;
  }

  void add_audio_stream(std::unique_ptr<AudioSource> src) {
    if (header_written) throw Error(label + ": audio must be added before the first frame");
    if (ast) throw Error(label + ": the file already has an audio stream");
    const AVCodecID id = src->params()->codec_id;
    if (avformat_query_codec(oc->oformat, id, FF_COMPLIANCE_NORMAL) == 0)
      throw Error(label + ": the " + oc->oformat->name + " container cannot hold " +
                  avcodec_get_name(id) + " audio");
    ast = avformat_new_stream(oc, nullptr);
    if (!ast) throw std::bad_alloc();
    const int err = avcodec_parameters_copy(ast->codecpar, src->params());
    if (err < 0) fail("cannot describe the audio stream", err);
    ast->codecpar->codec_tag = 0;
    ast->time_base = src->time_base();
    audio = std::move(src);
    stats.audio_codec = avcodec_get_name(id);
  }

  void write_header() {
    AVDictionary* options = nullptr;
    const std::string fmt = oc->oformat->name;
    if (fmt == "mp4" || fmt == "mov") av_dict_set(&options, "movflags", "+faststart", 0);
    clear_log();
    const int err = avformat_write_header(oc, &options);
    av_dict_free(&options);
    if (err < 0) fail("cannot write the container header", err);
    header_written = true;
  }

  void mux(AVPacket* p) {
    const int err = av_interleaved_write_frame(oc, p);  // takes the packet's reference
    if (err < 0) fail("cannot write to the file", err);
  }

  // Writes audio packets up to `seconds` (all of them when seconds is infinite).
  void pump_audio(double seconds) {
    if (!audio) return;
    while (!audio_done) {
      if (!audio_pending) {
        if (!audio->next(audio_packet.get())) {
          audio_done = true;
          break;
        }
        audio_pending = true;
      }
      if (packet_seconds(audio_packet.get(), audio->time_base()) > seconds) break;
      av_packet_rescale_ts(audio_packet.get(), audio->time_base(), ast->time_base);
      audio_packet->stream_index = ast->index;
      audio_packet->pos = -1;
      audio_pending = false;
      mux(audio_packet.get());
      ++stats.audio_packets;
    }
  }

  void drain_video() {
    for (;;) {
      const int r = avcodec_receive_packet(enc.get(), packet.get());
      if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) return;
      if (r < 0) fail("video encoding failed", r);
      // One frame long (in the input's time base) unless the encoder says otherwise, so the
      // last frame keeps its duration and readers derive the input's average rate.
      if (packet->duration <= 0)
        packet->duration =
            std::max<std::int64_t>(1, av_rescale_q(1, av_inv_q(enc->framerate), enc->time_base));
      av_packet_rescale_ts(packet.get(), enc->time_base, vst->time_base);
      packet->stream_index = vst->index;
      const double t = packet_seconds(packet.get(), vst->time_base);
      pump_audio(t);
      mux(packet.get());
      ++stats.video_frames;
    }
  }

  void write(const Frame& f, std::int64_t pts) {
    if (finished) throw Error(label + ": write() after finish()");
    if (f.width != in_w || f.height != in_h ||
        f.rgba.size() != static_cast<std::size_t>(in_w) * static_cast<std::size_t>(in_h) * 4)
      throw Error(label + ": frame of " + std::to_string(f.width) + "x" + std::to_string(f.height) +
                  " given to an encoder of " + std::to_string(in_w) + "x" + std::to_string(in_h));
    if (!header_written) write_header();
    int err = av_frame_make_writable(frame.get());
    if (err < 0) fail("cannot allocate a frame", err);
    const std::uint8_t* src[4] = {f.rgba.data(), nullptr, nullptr, nullptr};
    const int src_stride[4] = {in_w * 4, 0, 0, 0};
    // Cropping: the context converts the top-left enc->width x enc->height pixels.
    sws_scale(sws.get(), src, src_stride, 0, enc->height, frame->data, frame->linesize);
    std::int64_t p = av_rescale_q(pts, input_tb, enc->time_base);
    if (last_pts != AV_NOPTS_VALUE && p <= last_pts) p = last_pts + 1;
    last_pts = p;
    frame->pts = p;
    clear_log();
    err = avcodec_send_frame(enc.get(), frame.get());
    if (err < 0) fail("video encoding failed", err);
    drain_video();
  }

  void finish() {
    if (finished) return;
    if (!header_written) write_header();
    clear_log();
    int err = avcodec_send_frame(enc.get(), nullptr);
    if (err < 0 && err != AVERROR_EOF) fail("video encoding failed", err);
    drain_video();
    pump_audio(1e300);
    if (audio) stats.audio_damage = audio->damage();
    err = av_interleaved_write_frame(oc, nullptr);
    if (err < 0) fail("cannot write to the file", err);
    err = av_write_trailer(oc);
    if (err < 0) fail("cannot finish the file", err);
    if (oc->pb && !(oc->oformat->flags & AVFMT_NOFILE)) {
      err = avio_closep(&oc->pb);
      if (err < 0) fail("cannot close the file", err);
    }
    finished = true;
  }
};

Encoder::Encoder(const std::string& path, int width, int height, int fps_num, int fps_den,
                 int time_base_num, int time_base_den, const EncoderOptions& opt)
    : impl_(new Impl) {
  impl_->path = path;
  impl_->opt = opt;
  impl_->open(width, height, AVRational{fps_num, fps_den},
              AVRational{time_base_num, time_base_den});
}

Encoder::~Encoder() = default;

bool Encoder::copy_audio_from(const std::string& source, bool allow_damaged) {
  InputPtr in = open_input(source, "'" + source + "'", "");
  int index = -1;
  for (unsigned i = 0; i < in->nb_streams; ++i)
    if (in->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_AUDIO) {
      index = static_cast<int>(i);
      break;
    }
  if (index < 0) return false;
  const AVCodecID id = in->streams[index]->codecpar->codec_id;
  if (avformat_query_codec(impl_->oc->oformat, id, FF_COMPLIANCE_NORMAL) == 0) {
    // Advice that can be followed: another container only when it would hold this codec.
    const AVOutputFormat* mkv = av_guess_format("matroska", nullptr, nullptr);
    const bool mkv_holds = mkv && avformat_query_codec(mkv, id, FF_COMPLIANCE_NORMAL) == 1;
    const std::string advice = std::string(impl_->oc->oformat->name) != "matroska" && mkv_holds
                                   ? "write .mkv, which holds it, or drop the audio"
                                   : "drop the audio";
    throw Error(impl_->label + ": the " + impl_->oc->oformat->name + " container cannot hold the " +
                avcodec_get_name(id) + " audio of '" + source + "', which is copied unchanged (" +
                advice + ")");
  }
  impl_->add_audio_stream(std::make_unique<CopiedAudio>(std::move(in), index, allow_damaged));
  return true;
}

void Encoder::add_audio(const AudioTrack& track) {
  std::string name = track.codec;
  if (name.empty()) name = std::string(impl_->oc->oformat->name) == "webm" ? "libopus" : "aac";
  const AVCodec* codec = avcodec_find_encoder_by_name(name.c_str());
  if (!codec || codec->type != AVMEDIA_TYPE_AUDIO)
    throw Error(impl_->label + ": this FFmpeg has no audio encoder named '" + name + "'");
  impl_->add_audio_stream(std::make_unique<EncodedAudio>(
      track, codec, (impl_->oc->oformat->flags & AVFMT_GLOBALHEADER) != 0));
}

void Encoder::write(const Frame& frame, std::int64_t pts) {
  impl_->write(frame, pts);
}
void Encoder::finish() {
  impl_->finish();
}
const EncoderStats& Encoder::stats() const {
  return impl_->stats;
}

std::string container_for(const std::string& path) {
  init_ffmpeg();
  const std::string e = lower_extension(path);
  if (e == ".mkv") return "matroska";
  if (e == ".mp4" || e == ".m4v") return "mp4";
  if (e == ".mov") return "mov";
  if (e == ".webm") return "webm";
  if (e == ".nut") return "nut";
  if (e == ".avi") return "avi";
  const AVOutputFormat* f = av_guess_format(nullptr, path.c_str(), nullptr);
  if (!f || f->video_codec == AV_CODEC_ID_NONE)
    throw Error("'" + path + "': " + (e.empty() ? "no extension" : "'" + e + "'") +
                " names no video container FFmpeg can write (use .mp4, .mkv, .mov, .webm, .nut "
                "or .avi)");
  return f->name;
}

bool has_video_encoder(const std::string& name) {
  init_ffmpeg();
  return find_video_encoder(name) != nullptr;
}

std::string default_video_codec(const std::string& path) {
  const std::string c = container_for(path);
  if (c == "webm") return "libvpx-vp9";
  if (c == "nut" || c == "avi") return "ffv1";
  if (c == "mp4" || c == "mov" || c == "matroska")
    return has_video_encoder("libx264") ? "libx264" : "mpeg4";
  const AVOutputFormat* f = av_guess_format(c.c_str(), nullptr, nullptr);
  const AVCodec* codec = f ? avcodec_find_encoder(f->video_codec) : nullptr;
  if (!codec) throw Error("'" + path + "': no default video encoder for the " + c + " container");
  return codec->name;
}

std::string encoder_pixel_format(const std::string& codec) {
  init_ffmpeg();
  const AVCodec* c = find_video_encoder(codec);
  if (!c) throw Error("this FFmpeg has no video encoder named '" + codec + "'");
  return av_get_pix_fmt_name(choose_pixel_format(c));
}

void video_size_for(const std::string& codec, int& width, int& height) {
  init_ffmpeg();
  const AVCodec* c = find_video_encoder(codec);
  if (!c) throw Error("this FFmpeg has no video encoder named '" + codec + "'");
  crop_size(choose_pixel_format(c), width, height);
}

PacketCounts count_packets(const std::string& path) {
  InputPtr in = open_input(path, "'" + path + "'", "");
  PacketCounts counts;
  int v = -1, a = -1;
  for (unsigned i = 0; i < in->nb_streams; ++i) {
    const AVStream* s = in->streams[i];
    if (v < 0 && s->codecpar->codec_type == AVMEDIA_TYPE_VIDEO) {
      v = static_cast<int>(i);
      counts.video_codec = avcodec_get_name(s->codecpar->codec_id);
      counts.width = s->codecpar->width;
      counts.height = s->codecpar->height;
      counts.fps_num = s->avg_frame_rate.num;
      counts.fps_den = s->avg_frame_rate.den;
    } else if (a < 0 && s->codecpar->codec_type == AVMEDIA_TYPE_AUDIO) {
      a = static_cast<int>(i);
      counts.audio_codec = avcodec_get_name(s->codecpar->codec_id);
    }
  }
  PacketPtr p = make_packet();
  for (;;) {
    const int err = av_read_frame(in.get(), p.get());
    if (err == AVERROR_EOF) break;
    if (err < 0) throw Error(describe("'" + path + "': cannot read its packets", err));
    if (p->stream_index == v) ++counts.video;
    if (p->stream_index == a) ++counts.audio;
    av_packet_unref(p.get());
  }
  return counts;
}

bool video_compiled() {
  return true;
}

std::string ffmpeg_versions() {
  auto v = [](unsigned x) {
    return std::to_string(AV_VERSION_MAJOR(x)) + "." + std::to_string(AV_VERSION_MINOR(x)) + "." +
           std::to_string(AV_VERSION_MICRO(x));
  };
  return "libavformat " + v(avformat_version()) + ", libavcodec " + v(avcodec_version()) +
         ", libswscale " + v(swscale_version());
}

}  // namespace sv::video
