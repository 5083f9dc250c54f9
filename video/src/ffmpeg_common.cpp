// Shared plumbing of the video layer (see ffmpeg_common.h): the captured FFmpeg log, error text,
// opening inputs (files and V4L2 cameras) with one clear sentence per failure.
#include "ffmpeg_common.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <system_error>

namespace sv::video::detail {
namespace {

std::mutex g_log_mutex;
std::string g_last_log;  // last error-level line since clear_log()
bool g_print_log = false;

void log_callback(void* avcl, int level, const char* fmt, va_list vl) {
  if (g_print_log) {
    va_list copy;
    va_copy(copy, vl);
    av_log_default_callback(avcl, level, fmt, copy);
    va_end(copy);
  }
  if (level > AV_LOG_ERROR) return;
  char line[1024];
  int print_prefix = 1;
  av_log_format_line2(avcl, level, fmt, vl, line, sizeof line, &print_prefix);
  std::string s(line);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  for (char& ch : s)
    if (ch == '\n' || ch == '\r') ch = ' ';
  if (s.empty()) return;
  std::lock_guard<std::mutex> lock(g_log_mutex);
  g_last_log = s;
}

}  // namespace

PacketPtr make_packet() {
  PacketPtr p(av_packet_alloc());
  if (!p) throw std::bad_alloc();
  return p;
}

FramePtr make_frame() {
  FramePtr f(av_frame_alloc());
  if (!f) throw std::bad_alloc();
  return f;
}

std::string av_error_text(int err) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {};
  if (av_strerror(err, buf, sizeof buf) < 0) std::snprintf(buf, sizeof buf, "FFmpeg error %d", err);
  return buf;
}

void init_ffmpeg() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = std::getenv("SPLINEVIEW_FFMPEG_LOG");
    g_print_log = env && *env && std::string(env) != "0";
    av_log_set_callback(log_callback);
    avdevice_register_all();
  });
}

void clear_log() {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  g_last_log.clear();
}

std::string last_log() {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  return g_last_log;
}

std::string describe(const std::string& what, int err) {
  std::string s = what + ": " + av_error_text(err);
  const std::string log = last_log();
  if (!log.empty() && log.find(av_error_text(err)) == std::string::npos)
    s += " (FFmpeg: " + log + ")";
  return s;
}

std::string camera_device_of(const std::string& source) {
  std::string dev = source;
  if (dev.rfind("v4l2:", 0) == 0) dev = dev.substr(5);
  if (dev.rfind("/dev/video", 0) == 0) return dev;
  return source.rfind("v4l2:", 0) == 0 ? dev : "";
}

InputPtr open_input(const std::string& source, const std::string& label,
                    const std::string& camera_device) {
  init_ffmpeg();
  clear_log();
  const AVInputFormat* input_format = nullptr;
  std::string url = source;
  if (!camera_device.empty()) {
    input_format = av_find_input_format("video4linux2");
    if (!input_format)
      throw Error(label + " cannot be opened: this FFmpeg has no video4linux2 input device");
    url = camera_device;
    std::error_code ec;
    if (!std::filesystem::exists(url, ec)) throw Error(label + " cannot be opened: no such device");
  } else {
    std::error_code ec;
    const auto status = std::filesystem::status(source, ec);
    if (!std::filesystem::exists(status)) throw Error(label + ": no such file");
    if (std::filesystem::is_directory(status)) throw Error(label + " is a directory, not a video");
  }
  AVFormatContext* raw = nullptr;
  const int err = avformat_open_input(&raw, url.c_str(), input_format, nullptr);
  if (err < 0) {
    if (!camera_device.empty()) throw Error(describe(label + " cannot be opened", err));
    if (err == AVERROR_INVALIDDATA)
      throw Error(label + " is not a video file FFmpeg can read (" + av_error_text(err) + ")");
    throw Error(describe(label + " cannot be opened", err));
  }
  InputPtr fmt(raw);
  const int info = avformat_find_stream_info(fmt.get(), nullptr);
  if (info < 0) throw Error(describe(label + ": cannot read its stream information", info));
  return fmt;
}

double to_double(AVRational r) {
  return r.den == 0 ? 0.0 : static_cast<double>(r.num) / static_cast<double>(r.den);
}

}  // namespace sv::video::detail
