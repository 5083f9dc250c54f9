// The live video mode (see video_mode.h).
#include "video_mode.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <utility>

#include <GLFW/glfw3.h>
#include <imgui.h>

#include "elapsed.h"
#include "image_document.h"
#include "panel_widgets.h"
#include "splineview/cuda_memory.h"
#include "splineview/error.h"
#include "splineview/gl/state.h"
#include "splineview/prefilter.h"
#include "splineview/sampler.h"
#include "splineview/synthetic.h"

namespace sv::viewer {
namespace {

constexpr const char* kBundledClip = "coffee_pan.mp4";
constexpr int kCpuMaxWidth = 640, kCpuMaxHeight = 360;
constexpr double kLoupeSide = 260.0;

// Resident set size of this process in KiB (Linux /proc/self/statm), if readable.
std::optional<std::size_t> rss_kib() {
  std::ifstream in("/proc/self/statm");
  std::size_t pages = 0, resident = 0;
  if (!(in >> pages >> resident)) return std::nullopt;
  return resident * 4;  // 4 KiB pages
}

std::string file_name(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string clock_text(double s) {
  if (!(s >= 0)) s = 0;
  const int total = static_cast<int>(s);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%d:%02d.%02d", total / 60, total % 60,
                static_cast<int>((s - total) * 100));
  return buf;
}

// The frames' values as the display window sees them: 8-bit, the textures hold value / 255, the
// automatic window is the full scale (the identity on the textures: the frames as decoded).
DisplayRange frame_display_range() {
  DisplayRange r;
  r.scale = {0.0, 255.0};
  r.data_min = 0.0;
  r.data_max = 255.0;
  r.type_range = std::array<double, 2>{0.0, 255.0};
  return r;
}

// Where frames come from: a file or camera through FFmpeg, or the built-in moving pattern.
class FrameSource {
 public:
  virtual ~FrameSource() = default;
  virtual video::StreamInfo info() const = 0;
  virtual int width() const = 0;
  virtual int height() const = 0;
  virtual bool read(video::Frame& out) = 0;
  virtual void seek(double seconds) = 0;
};

class DecoderSource final : public FrameSource {
 public:
  DecoderSource(const std::string& source, const video::DecoderOptions& opt) : dec_(source, opt) {}
  video::StreamInfo info() const override { return dec_.info(); }
  int width() const override { return dec_.output_width(); }
  int height() const override { return dec_.output_height(); }
  bool read(video::Frame& out) override { return dec_.read(out); }
  void seek(double seconds) override { dec_.seek(seconds); }

 private:
  video::Decoder dec_;
};

// "synthetic[:WxH]": a zone plate under a diagonal drift of about 1.6 pixels per frame, 30 fps,
// 10 s, generated without FFmpeg: frame k is a window of a larger pattern drawn once, moved by
// whole pixels (a row copy per line), so making a frame costs a few milliseconds even at 4K.
class SyntheticSource final : public FrameSource {
 public:
  static constexpr int kMargin = 256, kFrames = 300;
  SyntheticSource(int w, int h) : w_(w), h_(h) {
    const std::size_t bw = static_cast<std::size_t>(w + kMargin),
                      bh = static_cast<std::size_t>(h + kMargin);
    const ArrayF plate = zone_plate(bh, bw, 0.45);
    base_.resize(bw * bh * 4);
    for (std::size_t y = 0; y < bh; ++y)
      for (std::size_t x = 0; x < bw; ++x) {
        const float v = plate[y * bw + x];
        const std::size_t i = (y * bw + x) * 4;
        // Warm grey with a colour tilt across the frame, so the three channels differ.
        base_[i + 0] = static_cast<std::uint8_t>(std::lround(255.0 * std::clamp(v, 0.0f, 1.0f)));
        base_[i + 1] = static_cast<std::uint8_t>(std::lround(
            255.0 * std::clamp(0.85f * v + 0.1f * static_cast<float>(x) / static_cast<float>(bw),
                               0.0f, 1.0f)));
        base_[i + 2] = static_cast<std::uint8_t>(std::lround(
            255.0 * std::clamp(0.7f * v + 0.2f * static_cast<float>(y) / static_cast<float>(bh),
                               0.0f, 1.0f)));
        base_[i + 3] = 255;
      }
  }
  video::StreamInfo info() const override {
    video::StreamInfo i;
    i.width = w_;
    i.height = h_;
    i.fps = 30;
    i.fps_num = 30;
    i.duration_s = kFrames / 30.0;
    i.frames = kFrames;
    i.codec = "synthetic";
    i.container = "none";
    i.pixel_format = "rgba";
    return i;
  }
  int width() const override { return w_; }
  int height() const override { return h_; }
  bool read(video::Frame& out) override {
    if (next_ >= kFrames) return false;
    out.width = w_;
    out.height = h_;
    out.rgba.resize(static_cast<std::size_t>(w_) * static_cast<std::size_t>(h_) * 4);
    const int ox = static_cast<int>(next_ * 13 / 8 % kMargin),
              oy = static_cast<int>(next_ % kMargin);
    const std::size_t bw = static_cast<std::size_t>(w_ + kMargin);
    for (int y = 0; y < h_; ++y)
      std::memcpy(out.rgba.data() + static_cast<std::size_t>(y) * static_cast<std::size_t>(w_) * 4,
                  base_.data() +
                      ((static_cast<std::size_t>(y + oy)) * bw + static_cast<std::size_t>(ox)) * 4,
                  static_cast<std::size_t>(w_) * 4);
    out.index = next_;
    out.pts = next_;
    out.pts_s = static_cast<double>(next_) / 30.0;
    ++next_;
    return true;
  }
  void seek(double seconds) override {
    next_ = std::clamp<std::int64_t>(static_cast<std::int64_t>(std::ceil(seconds * 30 - 1e-9)), 0,
                                     kFrames);
  }

 private:
  int w_, h_;
  std::vector<std::uint8_t> base_;
  std::int64_t next_ = 0;
};

// "synthetic" or "synthetic:WxH" -> the size; nullopt for anything else.
std::optional<std::pair<int, int>> synthetic_size(const std::string& source) {
  if (source == "synthetic") return std::make_pair(1920, 1080);
  int w = 0, h = 0;
  char extra = 0;
  if (source.rfind("synthetic:", 0) == 0 &&
      std::sscanf(source.c_str() + 10, "%dx%d%c", &w, &h, &extra) == 2 && w >= 16 && h >= 16 &&
      w <= 8192 && h <= 8192)
    return std::make_pair(w, h);
  if (source.rfind("synthetic", 0) == 0)
    throw Error("'" + source + "': expected synthetic or synthetic:WxH (16..8192 each)");
  return std::nullopt;
}

}  // namespace

std::string default_video_path() {
  return asset_path(kBundledClip);
}

VideoMode::VideoMode(VideoOptions options, MethodPass& pass)
    : options_(std::move(options)), pass_(pass) {
  timers_meaningful_ = gl::timer_queries_meaningful();
  window_.reset(frame_display_range(), options_.window, options_.level);
  const std::string src = options_.source.empty() ? default_video_path() : options_.source;
  start(src, options_.source.empty() ? std::string("bundled clip (") + kBundledClip + ")"
                                     : file_name(src));
}

VideoMode::~VideoMode() {
  stop();
}

void VideoMode::stop() {
  if (shared_) {
    {
      std::lock_guard<std::mutex> lock(shared_->mu);
      shared_->stop = true;
    }
    shared_->cv.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  shared_.reset();
}

void VideoMode::start(const std::string& source, std::string label) {
  stop();
  label_ = std::move(label);
  shared_ = std::make_shared<Shared>();
  shared_->loop = options_.loop;
  have_info_ = false;
  has_frame_ = false;
  frame_ = video::Frame{};
  shown_index_ = -1;
  clock_s_ = 0;
  last_time_s_ = -1;
  shown_ = decode_drops_ = display_drops_ = 0;
  fps_window_start_ = -1;
  fps_window_frames_ = 0;
  video_fps_.reset();
  fit_pending_ = true;
  rss_kib_ = {};
  gpu_bytes_ = {};
  rss_by_1000_.clear();
  video::DecoderOptions opt;
  opt.max_width = options_.max_width;
  opt.max_height = options_.max_height;
  notice_.clear();
  std::string why;
  if (!options_.allow_cuda || !cuda::available(&why)) {
    notice_ = "No CUDA (" + (options_.allow_cuda ? why : std::string("turned off")) +
              "): frames are prefiltered on the CPU";
    if (opt.max_width == 0 && opt.max_height == 0) {
      opt.max_width = kCpuMaxWidth;
      opt.max_height = kCpuMaxHeight;
      notice_ += " and decoded at most " + std::to_string(kCpuMaxWidth) + " x " +
                 std::to_string(kCpuMaxHeight);
    }
    notice_ += ".";
  }
  thread_ = std::thread(decode_loop, shared_, source, opt);
}

// The worker: opens the source, then keeps up to kQueue decoded frames ready; loops, seeks and
// stops on request. Every error ends the loop with its message in Shared::error.
void VideoMode::decode_loop(std::shared_ptr<Shared> s, std::string source,
                            video::DecoderOptions opt) {
  std::unique_ptr<FrameSource> dec;
  try {
    if (const auto size = synthetic_size(source)) {
      int w = size->first, h = size->second;
      if (opt.max_width > 0 && opt.max_height > 0 && (w > opt.max_width || h > opt.max_height)) {
        const double k = std::min(static_cast<double>(opt.max_width) / w,
                                  static_cast<double>(opt.max_height) / h);
        w = std::max(16, static_cast<int>(w * k));
        h = std::max(16, static_cast<int>(h * k));
      }
      dec = std::make_unique<SyntheticSource>(w, h);
    } else {
      dec = std::make_unique<DecoderSource>(source, opt);
    }
    std::lock_guard<std::mutex> lock(s->mu);
    s->info = dec->info();
    s->width = dec->width();
    s->height = dec->height();
    s->opened = true;
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(s->mu);
    s->error = e.what();
    s->eos = true;  // nothing more will come: finish() must not wait for a frame
    s->cv.notify_all();
    return;
  }
  s->cv.notify_all();
  for (;;) {
    video::Frame frame;
    std::uint64_t epoch = 0;
    {
      std::unique_lock<std::mutex> lock(s->mu);
      s->cv.wait(lock,
                 [&] { return s->stop || s->seek_to || (!s->eos && s->ready.size() < kQueue); });
      if (s->stop) return;
      if (s->seek_to) {
        const double t = *s->seek_to;
        s->seek_to.reset();
        s->ready.clear();
        s->eos = false;
        ++s->epoch;
        lock.unlock();
        try {
          dec->seek(t);
        } catch (const std::exception& e) {
          std::lock_guard<std::mutex> relock(s->mu);
          s->error = e.what();
          s->eos = true;
          s->cv.notify_all();
          return;
        }
        continue;
      }
      if (!s->spare.empty()) {
        frame = std::move(s->spare.back());
        s->spare.pop_back();
      }
      epoch = s->epoch;
    }
    const auto t0 = std::chrono::steady_clock::now();
    bool got = false;
    try {
      got = dec->read(frame);
      if (!got) {
        bool loop = false;
        {
          std::lock_guard<std::mutex> lock(s->mu);
          loop = s->loop && !dec->info().is_camera;
        }
        if (loop) {
          dec->seek(0.0);
          got = dec->read(frame);
          std::lock_guard<std::mutex> lock(s->mu);
          epoch = ++s->epoch;
        }
      }
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(s->mu);
      s->error = e.what();
      s->eos = true;
      s->cv.notify_all();
      return;
    }
    const double ms = ms_since(t0);
    std::lock_guard<std::mutex> lock(s->mu);
    if (!got) {
      s->eos = true;
      s->spare.push_back(std::move(frame));
    } else if (epoch == s->epoch && !s->seek_to) {
      s->ready.push_back(Decoded{std::move(frame), epoch, ms});
    } else {
      s->spare.push_back(std::move(frame));  // a seek overtook it
    }
    s->cv.notify_all();
  }
}

void VideoMode::recycle(video::Frame frame) {
  std::lock_guard<std::mutex> lock(shared_->mu);
  shared_->spare.push_back(std::move(frame));
  shared_->cv.notify_all();
}

bool VideoMode::open(const std::string& path) {
  error_.clear();
  options_.source = path;
  start(path, file_name(path));
  return true;
}

std::vector<std::string> VideoMode::bundled() const {
  return {std::string("coffee, slow pan and zoom (") + kBundledClip + ")",
          "synthetic 1920 x 1080 (moving zone plate, no decoding)",
          "synthetic 3840 x 2160 (moving zone plate, no decoding)"};
}

bool VideoMode::open_bundled(std::size_t index) {
  error_.clear();
  if (index == 0) {
    options_.source.clear();
    start(default_video_path(), std::string("bundled clip (") + kBundledClip + ")");
  } else if (index == 1 || index == 2) {
    options_.source = index == 1 ? "synthetic:1920x1080" : "synthetic:3840x2160";
    start(options_.source, options_.source);
  } else {
    return false;
  }
  return true;
}

std::string VideoMode::fps_text() const {
  if (!video_fps_) return "measuring fps";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f fps", *video_fps_);
  return buf;
}

std::string VideoMode::title() const {
  return label_;
}

std::vector<gl::Fetch> VideoMode::view_methods() const {
  switch (options_.layout) {
    case Layout::Single:
      return {options_.method};
    case Layout::Pair:
    case Layout::Wipe:
      return {options_.method, options_.compare};
    case Layout::Grid:
      return {options_.method, gl::Fetch::Linear, gl::Fetch::Nearest, gl::Fetch::CubicUnfiltered};
  }
  return {options_.method};
}

int VideoMode::tile_factor() const {
  if (options_.factor >= 2) return std::min(options_.factor, 4);
  return std::clamp(static_cast<int>(std::lround(view_.zoom())), 2, 4);
}

std::vector<Rect> VideoMode::cells(const FrameInfo& f) const {
  return layout_cells(options_.layout, f.area);
}

// Shows a decoded frame: upload, prefilter (and tiles), statistics; returns its buffer.
void VideoMode::take_frame(Decoded d) {
  video::Frame& fr = d.frame;
  try {
    if (!uploader_ || uploader_->width() != fr.width || uploader_->height() != fr.height) {
      uploader_.reset();
      gl::InteropOptions io;
      io.allow_cuda = options_.allow_cuda;
      io.on_fallback = [](const std::string&) {};  // the panel says it (notice_)
      uploader_ = std::make_unique<gl::FrameUploader>(fr.width, fr.height, io);
      if (!uploader_->uses_cuda() && options_.path == VideoPath::Tiles)
        options_.path = VideoPath::Shader;
    }
    const std::vector<gl::Fetch> methods = view_methods();
    const bool tiles = options_.path == VideoPath::Tiles && uploader_->uses_cuda();
    const bool coefficients = std::any_of(methods.begin() + (tiles ? 1 : 0), methods.end(),
                                          [](gl::Fetch m) { return gl::fetch_prefiltered(m); }) ||
                              loupe_;
    uploader_->upload(fr.rgba.data(), coefficients);
    if (tiles) uploader_->upscale_tiles(tile_factor());
  } catch (const Error& e) {
    error_ = e.what();
    recycle(std::move(fr));
    return;
  }
  const gl::FrameUploadTimes& t = uploader_->times();
  decode_ms_.push(static_cast<float>(d.decode_ms));
  upload_ms_.push(static_cast<float>(t.host_ms));
  if (t.transfer_ms && t.unpack_ms)
    transfer_ms_.push(static_cast<float>(*t.transfer_ms + *t.unpack_ms));
  if (t.prefilter_ms) prefilter_ms_.push(static_cast<float>(*t.prefilter_ms));
  if (t.tiles_ms) tiles_ms_.push(static_cast<float>(*t.tiles_ms));
  has_frame_ = true;
  shown_pts_ = fr.pts_s;
  shown_index_ = fr.index;
  shown_epoch_ = d.epoch;
  ++shown_;
  ++fps_window_frames_;
  if (shown_ == 1) {
    rss_kib_[0] = rss_kib();
    gpu_bytes_[0] = gl::device_memory_used();
  }
  if (shown_ == 500) {
    rss_kib_[1] = rss_kib();
    gpu_bytes_[1] = gl::device_memory_used();
  }
  if (shown_ % 1000 == 0)
    if (const std::optional<std::size_t> r = rss_kib()) rss_by_1000_.push_back(*r);
  // Keep the shown frame for the readout; the one it replaces goes back to the decoder.
  std::swap(frame_, fr);
  if (!fr.rgba.empty()) recycle(std::move(fr));
}

void VideoMode::update(const FrameInfo& f) {
  ui_scale_ = f.ui_scale;
  if (draw_end_s_ >= 0) present_ms_.push(static_cast<float>(ms_since(draw_end_)));
  draw_end_s_ = -1;
  const double dt = last_time_s_ < 0 ? 0.0 : std::clamp(f.time_s - last_time_s_, 0.0, 0.25);
  last_time_s_ = f.time_s;

  // Source state.
  std::optional<Decoded> next;
  std::vector<Decoded> overtaken;
  {
    std::unique_lock<std::mutex> lock(shared_->mu);
    if (!shared_->error.empty()) {
      error_ = "video: " + shared_->error;
      shared_->error.clear();
    }
    if (shared_->opened && !have_info_) {
      info_ = shared_->info;
      have_info_ = true;
    }
    shared_->loop = options_.loop;
    if (f.batch && have_info_ && shared_->ready.empty() && !shared_->eos) {
      // Throughput runs: wait for the decoder rather than skip a frame.
      shared_->cv.wait_for(lock, std::chrono::seconds(5),
                           [&] { return !shared_->ready.empty() || shared_->eos; });
    }
    std::deque<Decoded>& q = shared_->ready;
    if (!q.empty() && q.front().epoch != shown_epoch_ && has_frame_) {
      clock_s_ = q.front().frame.pts_s;  // loop or seek: the clock jumps with the video
    }
    if (f.batch || step_pending_ || (!has_frame_ && !q.empty())) {
      if (!q.empty()) {
        next = std::move(q.front());
        q.pop_front();
        step_pending_ = false;
        clock_s_ = next->frame.pts_s;
      }
    } else if (!options_.paused && have_info_) {
      if (info_.is_camera) {
        while (q.size() > 1) {
          overtaken.push_back(std::move(q.front()));
          q.pop_front();
        }
        if (!q.empty()) {
          next = std::move(q.front());
          q.pop_front();
        }
      } else {
        const double frame_s = info_.fps > 0 ? 1.0 / info_.fps : 1.0 / 30;
        if (q.empty() && !shared_->eos) {
          // Due but not decoded yet: the clock waits; count the frame once.
          if (has_frame_ && clock_s_ + dt > shown_pts_ + frame_s * 1.5) {
            if (!waiting_for_decode_) ++decode_drops_;
            waiting_for_decode_ = true;
          } else {
            clock_s_ += dt;
          }
        } else {
          waiting_for_decode_ = false;
          clock_s_ += dt;
          while (!q.empty() && q.front().frame.pts_s <= clock_s_ + 1e-6) {
            if (next) overtaken.push_back(std::move(*next));
            next = std::move(q.front());
            q.pop_front();
          }
        }
      }
    }
    for (Decoded& d : overtaken) shared_->spare.push_back(std::move(d.frame));
  }
  shared_->cv.notify_all();
  display_drops_ += static_cast<std::int64_t>(overtaken.size());
  if (next) take_frame(std::move(*next));

  // Measured video frame rate over one-second windows.
  // The first window starts at the first frame shown (opening the source is not playback).
  if (fps_window_start_ < 0 && has_frame_) {
    fps_window_start_ = f.time_s;
    fps_window_frames_ = 0;
  }
  if (fps_window_start_ >= 0 && f.time_s - fps_window_start_ >= 1.0) {
    video_fps_ = static_cast<double>(fps_window_frames_) / (f.time_s - fps_window_start_);
    fps_window_start_ = f.time_s;
    fps_window_frames_ = 0;
  }

  const std::vector<Rect> c = cells(f);
  cells_ = c;
  if (fit_pending_ && uploader_ && !c.empty()) {
    view_ = ViewTransform::fit(glm::dvec2(uploader_->width(), uploader_->height()), local(c[0]));
    fit_pending_ = false;
  }
  handle_input(f, c);
}

void VideoMode::handle_input(const FrameInfo& f, const std::vector<Rect>& c) {
  hover_cell_.reset();
  if (c.empty()) return;
  const ImGuiIO& io = ImGui::GetIO();
  const glm::dvec2 cursor = glm::dvec2(io.MousePos.x, io.MousePos.y) * f.fb_scale;
  if (ImGui::IsMousePosValid() && f.mouse_free)
    for (std::size_t i = 0; i < c.size(); ++i)
      if (c[i].contains(cursor)) {
        hover_cell_ = i;
        hover_local_ = cursor - glm::dvec2(c[i].x, c[i].y);
      }
  if (!ImGui::IsMouseDown(ImGuiMouseButton_Left)) dragging_ = dragging_divider_ = false;
  // Window/level first (middle or Shift + left drag, as in the other modes): a Shift + left
  // drag neither pans nor moves the wipe divider.
  const bool window_drag =
      window_.handle_drag(hover_cell_.has_value() && !dragging_ && !dragging_divider_,
                          glm::dvec2(io.MouseDelta.x, io.MouseDelta.y) * f.fb_scale);
  if (hover_cell_ && f.mouse_free) {
    if (io.MouseWheel != 0.0f)
      view_.zoom_about(hover_local_, std::pow(1.2, static_cast<double>(io.MouseWheel)));
    if (!window_drag && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
      const bool near_divider =
          options_.layout == Layout::Wipe &&
          std::fabs(cursor.x - wipe_divider_x(c[0], wipe_)) <= 6.0 * f.ui_scale;
      (near_divider ? dragging_divider_ : dragging_) = true;
    }
  }
  if (dragging_divider_)
    wipe_ = std::clamp((cursor.x - c[0].x) / std::max(1.0, c[0].width), 0.0, 1.0);
  else if (dragging_)
    view_.pan_by(glm::dvec2(io.MouseDelta.x, io.MouseDelta.y) * f.fb_scale);
  if (f.keyboard_free) {
    if (ImGui::IsKeyPressed(GLFW_KEY_R, false)) fit_pending_ = true;
    if (ImGui::IsKeyPressed(GLFW_KEY_SPACE, false)) options_.paused = !options_.paused;
    if (ImGui::IsKeyPressed(GLFW_KEY_RIGHT, true) && options_.paused) step_pending_ = true;
    if (ImGui::IsKeyPressed(GLFW_KEY_L, false)) loupe_ = !loupe_;
    if (ImGui::IsKeyPressed(GLFW_KEY_HOME, false) && have_info_ && !info_.is_camera) {
      std::lock_guard<std::mutex> lock(shared_->mu);
      shared_->seek_to = 0.0;
      shared_->cv.notify_all();
    }
  }
}

void VideoMode::panel(const FrameInfo& f) {
  section("Video");
  ImGui::TextWrapped("%s", label_.c_str());
  if (have_info_) {
    ImGui::TextDisabled("%d x %d, %s, %s, %.3g fps%s", info_.width, info_.height,
                        info_.codec.c_str(), info_.pixel_format.c_str(), info_.fps,
                        info_.has_audio ? (", audio " + info_.audio_codec).c_str() : "");
    if (uploader_ && (uploader_->width() != info_.width || uploader_->height() != info_.height))
      ImGui::TextDisabled("decoded at %d x %d", uploader_->width(), uploader_->height());
  } else if (error_.empty()) {
    ImGui::TextDisabled("opening ...");
  }
  if (!notice_.empty()) ImGui::TextWrapped("%s", notice_.c_str());
  // The error itself is shown once, by the shell (Data section, from error()).
  window_.panel(f.ui_scale);

  section("Playback");
  if (ImGui::Button(options_.paused ? "play [Space]" : "pause [Space]"))
    options_.paused = !options_.paused;
  ImGui::SameLine();
  if (ImGui::Button("step [Right]")) {
    options_.paused = true;
    step_pending_ = true;
  }
  ImGui::SameLine();
  ImGui::Checkbox("loop", &options_.loop);
  if (have_info_ && !info_.is_camera && info_.duration_s > 0) {
    float t = static_cast<float>(shown_pts_);
    const std::string text = clock_text(shown_pts_) + " / " + clock_text(info_.duration_s);
    if (ImGui::SliderFloat("seek", &t, 0.0f, static_cast<float>(info_.duration_s), text.c_str())) {
      std::lock_guard<std::mutex> lock(shared_->mu);
      shared_->seek_to = static_cast<double>(t);
      shared_->cv.notify_all();
      step_pending_ = options_.paused;
    }
  }
  ImGui::Text("frame %lld, %s", static_cast<long long>(shown_index_ + 1), fps_text().c_str());
  ImGui::Text("dropped: %lld decode, %lld display", static_cast<long long>(decode_drops_),
              static_cast<long long>(display_drops_));
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "decode: frames that were due before the decoder had them (the clock waited)\n"
        "display: decoded frames overtaken by a newer one before they could be shown");

  section("Upscaling");
  const bool cuda_ok = uploader_ && uploader_->uses_cuda();
  int path = options_.path == VideoPath::Tiles ? 1 : 0;
  ImGui::RadioButton("shader (any zoom)", &path, 0);
  ImGui::SameLine();
  if (!cuda_ok) ImGui::BeginDisabled();
  ImGui::RadioButton("CUDA tiles (2x-4x)", &path, 1);
  if (!cuda_ok) ImGui::EndDisabled();
  options_.path = path == 1 && cuda_ok ? VideoPath::Tiles : VideoPath::Shader;
  if (options_.path == VideoPath::Tiles) {
    int factor = options_.factor;
    ImGui::SliderInt("factor", &factor, 0, 4, factor < 2 ? "auto (zoom)" : "%dx");
    options_.factor = factor < 2 ? 0 : factor;
    ImGui::TextDisabled("%dx: one thread per input pixel writes its %d x %d outputs", tile_factor(),
                        tile_factor(), tile_factor());
  } else {
    method_combo("method", &options_.method);
  }
  int layout = static_cast<int>(options_.layout);
  const char* layouts[] = {"single", "pair", "grid", "wipe"};
  if (ImGui::Combo("layout", &layout, layouts, 4)) options_.layout = static_cast<Layout>(layout);
  if (options_.layout == Layout::Pair || options_.layout == Layout::Wipe)
    method_combo("compare with", &options_.compare);
  ImGui::Checkbox("loupe [L]", &loupe_);
  if (loupe_) ImGui::SliderFloat("loupe zoom", &loupe_factor_, 2.0f, 16.0f, "%.0fx");
  ImGui::TextDisabled(
      "zoom %.2fx; wheel zooms, drag pans, R fits, middle or Shift+left drag: window/level",
      view_.zoom());

  section("Readout");
  if (hover_cell_ && has_frame_) {
    const glm::dvec2 p = view_.image_position(hover_local_);
    ImGui::Text("frame position x %.3f, y %.3f", p.x, p.y);
    const nlohmann::json r = readout(p);
    if (r["pixel"].is_null()) {
      ImGui::TextDisabled("outside the frame");
    } else {
      const auto line = [](const std::string& head, const nlohmann::json& values) {
        std::string text = head;
        char number[32];
        for (const nlohmann::json& v : values) {
          std::snprintf(number, sizeof number, " %.2f", v.get<double>());
          text += number;
        }
        ImGui::TextUnformatted(text.c_str());
      };
      std::string stored = "pixel (" + std::to_string(r["pixel"][0].get<int>()) + ", " +
                           std::to_string(r["pixel"][1].get<int>()) + ") stored RGB:";
      for (const nlohmann::json& v : r["stored"]) stored += " " + std::to_string(v.get<int>());
      ImGui::TextUnformatted(stored.c_str());
      const std::vector<gl::Fetch> methods = view_methods();
      const bool tiles = options_.path == VideoPath::Tiles && uploader_ &&
                         uploader_->tile_factor() > 0 && r["values"].contains("tiles");
      for (std::size_t i = 0; i < methods.size(); ++i) {
        if (i == 0 && tiles) {
          line("cubic, tiles " + std::to_string(uploader_->tile_factor()) + "x:",
               r["values"]["tiles"]);
        } else {
          line(std::string(method_short_name(methods[i])) + ":",
               r["values"][gl::fetch_name(methods[i])]);
        }
      }
      ImGui::TextDisabled(
          "0..255 units, before the display window; the views' values from the CPU double "
          "reference (sv::sample, the method's degree, on this frame's samples or coefficients), "
          "not read back from the screen");
    }
  } else {
    ImGui::TextDisabled(has_frame_ ? "cursor outside the views" : "no frame yet");
  }

  section("Per frame");
  const auto row = [](const char* name, const FrameHistory<kHistoryLength>& h) {
    if (h.count() == 0) return;
    ImGui::TextUnformatted(name);
    ImGui::PushID(name);
    plot("##stage", h, "ms", 32.0f);
    ImGui::PopID();
  };
  row("decode (CPU thread)", decode_ms_);
  row(notice_.empty() ? "upload (staging copies)" : "upload + CPU prefilter", upload_ms_);
  row("to GPU + unpack (CUDA)", transfer_ms_);
  row("prefilter (CUDA)", prefilter_ms_);
  row("tile upscale (CUDA)", tiles_ms_);
  row("upscale (GL views)", upscale_ms_);
  row("present (UI + swap)", present_ms_);
}

void VideoMode::overlays(const FrameInfo& f, ImDrawList* list) {
  if (!uploader_) return;
  const std::vector<Rect> c = cells(f);
  const std::vector<gl::Fetch> methods = view_methods();
  const glm::dvec2 s = f.fb_scale;
  const bool tiles = options_.path == VideoPath::Tiles && uploader_->tile_factor() > 0;
  const auto label_at = [&](const glm::dvec2& at, const std::string& text) {
    const ImVec2 p(static_cast<float>(at.x / s.x), static_cast<float>(at.y / s.y));
    const ImVec2 size = ImGui::CalcTextSize(text.c_str());
    list->AddRectFilled(ImVec2(p.x, p.y), ImVec2(p.x + size.x + 10, p.y + size.y + 6),
                        IM_COL32(0, 0, 0, 170), 3.0f);
    list->AddText(ImVec2(p.x + 5, p.y + 3), IM_COL32(235, 235, 235, 255), text.c_str());
  };
  const auto name_of = [&](std::size_t i) {
    if (i == 0 && tiles)
      return "prefiltered cubic, CUDA tiles " + std::to_string(uploader_->tile_factor()) + "x";
    return std::string(method_display_name(methods[i]));
  };
  const double pad = 8.0 * f.ui_scale;
  if (options_.layout == Layout::Wipe) {
    const int x = wipe_divider_x(c[0], wipe_);
    label_at({c[0].x + pad, c[0].y + pad}, name_of(0));
    const std::string right = name_of(1);
    const double w = ImGui::CalcTextSize(right.c_str()).x * s.x + 10 * s.x;
    label_at({c[0].x + c[0].width - pad - w, c[0].y + pad}, right);
    list->AddLine(
        ImVec2(static_cast<float>(x / s.x), static_cast<float>(c[0].y / s.y)),
        ImVec2(static_cast<float>(x / s.x), static_cast<float>((c[0].y + c[0].height) / s.y)),
        IM_COL32(255, 255, 255, 220), 2.0f);
  } else {
    for (std::size_t i = 0; i < c.size() && i < methods.size(); ++i)
      label_at({c[i].x + pad, c[i].y + pad}, name_of(i));
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s  frame %lld  %s  dropped %lld decode, %lld display",
                clock_text(shown_pts_).c_str(), static_cast<long long>(shown_index_ + 1),
                fps_text().c_str(), static_cast<long long>(decode_drops_),
                static_cast<long long>(display_drops_));
  label_at({f.area.x + pad, f.area.y + f.area.height - pad - 24.0 * f.ui_scale}, buf);
  if (loupe_ && hover_cell_) {
    const Rect& cell = c[*hover_cell_];
    const Rect l = loupe_rect(cell, hover_local_ + glm::dvec2(cell.x, cell.y),
                              kLoupeSide * f.ui_scale, 24.0 * f.ui_scale);
    list->AddRect(ImVec2(static_cast<float>(l.x / s.x), static_cast<float>(l.y / s.y)),
                  ImVec2(static_cast<float>((l.x + l.width) / s.x),
                         static_cast<float>((l.y + l.height) / s.y)),
                  IM_COL32(255, 255, 255, 230), 0.0f, 0, 2.0f);
  }
}

void VideoMode::draw(const FrameInfo& f) {
  if (!uploader_ || !has_frame_ || f.fb_width <= 0 || f.fb_height <= 0) {
    draw_end_ = std::chrono::steady_clock::now();
    draw_end_s_ = f.time_s;
    return;
  }
  const std::vector<Rect> c = cells(f);
  const std::vector<gl::Fetch> methods = view_methods();
  const float checker = 16.0f * f.ui_scale;
  if (const std::optional<double> ms = upscale_timer_.poll();
      ms && timers_meaningful_ && upscale_timer_.finished_count() > 0)
    upscale_ms_.push(static_cast<float>(*ms));
  const bool tiles = options_.path == VideoPath::Tiles && uploader_->tile_factor() > 0;
  // Draws view `slot` with the image map `m` into `part`: the tile texture with nearest for the
  // tile path's view, else the view's method on the frame's textures.
  const auto draw_slot = [&](std::size_t slot, const glm::mat3& m, const Rect& part) {
    if (slot == 0 && tiles) {
      // Tile texture coordinate q = k p + (k - 1) / 2 for image position p.
      const float k = static_cast<float>(uploader_->tile_factor());
      glm::mat3 a(1.0f);
      a[0][0] = k;
      a[1][1] = k;
      a[2][0] = (k - 1.0f) / 2.0f;
      a[2][1] = (k - 1.0f) / 2.0f;
      pass_.draw(uploader_->tiles(), gl::Fetch::Nearest, a * m, to_viewport(part, f.fb_height),
                 checker, window_.map());
    } else {
      pass_.draw(uploader_->textures(), methods[slot], m, to_viewport(part, f.fb_height), checker,
                 window_.map());
    }
  };
  const auto draw_view = [&](std::size_t slot, const Rect& cell, const Rect& part) {
    draw_slot(slot, view_.shifted({cell.x, cell.y}).frag_to_image(f.fb_height), part);
  };
  {
    gl::ScopedGpuTimer timing(upscale_timer_);
    if (options_.layout == Layout::Wipe) {
      const Rect& cell = c[0];
      const double x = wipe_divider_x(cell, wipe_);
      const Rect left{cell.x, cell.y, x - cell.x, cell.height};
      const Rect right{x, cell.y, cell.x + cell.width - x, cell.height};
      if (left.width > 0) draw_view(0, cell, left);
      if (right.width > 0) draw_view(1, cell, right);
    } else {
      for (std::size_t i = 0; i < c.size() && i < methods.size(); ++i) draw_view(i, c[i], c[i]);
    }
  }
  if (loupe_ && hover_cell_ && *hover_cell_ < c.size()) {
    const Rect& cell = c[*hover_cell_];
    const Rect l = loupe_rect(cell, hover_local_ + glm::dvec2(cell.x, cell.y),
                              kLoupeSide * f.ui_scale, 24.0 * f.ui_scale);
    const glm::dvec2 p = view_.image_position(hover_local_);
    const ViewTransform magnified =
        ViewTransform::looking_at(p, local(l), view_.zoom() * loupe_factor_, view_.angle());
    std::size_t slot = options_.layout == Layout::Wipe
                           ? (hover_local_.x + cell.x < wipe_divider_x(cell, wipe_) ? 0 : 1)
                           : *hover_cell_;
    draw_slot(slot, magnified.shifted({l.x, l.y}).frag_to_image(f.fb_height), l);
  }
  draw_end_ = std::chrono::steady_clock::now();
  draw_end_s_ = f.time_s;
}

nlohmann::json VideoMode::readout(const glm::dvec2& p) const {
  nlohmann::json r;
  r["position"] = {p.x, p.y};
  r["units"] = "8-bit";
  const int w = frame_.width, h = frame_.height;
  if (!has_frame_ || w <= 0 || h <= 0 ||
      frame_.rgba.size() < static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * 4) {
    r["pixel"] = nullptr;
    return r;
  }
  r["frame"] = frame_.index;
  const bool inside = p.x >= -0.5 && p.y >= -0.5 && p.x <= w - 0.5 && p.y <= h - 0.5;
  if (!inside) {
    r["pixel"] = nullptr;
    return r;
  }
  const int x = std::clamp(static_cast<int>(std::floor(p.x + 0.5)), 0, w - 1);
  const int y = std::clamp(static_cast<int>(std::floor(p.y + 0.5)), 0, h - 1);
  const auto at = [&](int px, int py, int c) {
    return frame_.rgba[(static_cast<std::size_t>(py) * static_cast<std::size_t>(w) +
                        static_cast<std::size_t>(px)) *
                           4 +
                       static_cast<std::size_t>(c)];
  };
  r["pixel"] = {x, y};
  r["stored"] = {at(x, y, 0), at(x, y, 1), at(x, y, 2)};
  // The pixels around p (whole frame where it ends within the margin, so its borders are
  // exact): every method's support, and for the prefilter a margin over which its influence
  // decays by |z|^24 = 0.268^24 < 1e-13.
  const int fx = static_cast<int>(std::floor(p.x)), fy = static_cast<int>(std::floor(p.y));
  const int x0 = std::max(0, fx - kReadoutMargin), x1 = std::min(w, fx + kReadoutMargin + 2);
  const int y0 = std::max(0, fy - kReadoutMargin), y1 = std::min(h, fy + kReadoutMargin + 2);
  ArrayD samples({static_cast<std::size_t>(y1 - y0), static_cast<std::size_t>(x1 - x0)}, 3);
  for (int j = y0; j < y1; ++j)
    for (int i = x0; i < x1; ++i)
      for (int c = 0; c < 3; ++c)
        samples.at2(static_cast<std::size_t>(j - y0), static_cast<std::size_t>(i - x0),
                    static_cast<std::size_t>(c)) = at(i, j, c);
  ArrayD coefficients = samples;
  PrefilterOptions pre;
  pre.degree = 3;
  pre.boundary = Boundary::Reflect;  // as gl::FrameUploader's prefilters
  pre.threads = 1;
  prefilter(coefficients, pre);
  const auto value = [&](gl::Fetch m, const glm::dvec2& q) {
    std::vector<double> v(3);
    SamplerOptions opt;
    opt.degree = method_degree(m);
    opt.boundary = Boundary::Reflect;
    opt.threads = 1;
    const double position[2] = {q.y - y0, q.x - x0};
    sample(gl::fetch_prefiltered(m) ? coefficients : samples, position, 1, v.data(), opt);
    return v;
  };
  nlohmann::json values;
  for (gl::Fetch m : kMethods) values[gl::fetch_name(m)] = value(m, p);
  nlohmann::json shown = nlohmann::json::array();
  const std::vector<gl::Fetch> methods = view_methods();
  const int k = options_.path == VideoPath::Tiles && uploader_ ? uploader_->tile_factor() : 0;
  for (std::size_t i = 0; i < methods.size(); ++i) {
    if (i == 0 && k > 0) {
      // The tile view shows, with nearest sampling, the cubic at tile pixel q = round(k p +
      // (k - 1) / 2), i.e. at frame position (q - (k - 1) / 2) / k.
      const double off = (k - 1) / 2.0;
      const glm::dvec2 q(std::clamp(std::floor(k * p.x + off + 0.5), 0.0, k * w - 1.0),
                         std::clamp(std::floor(k * p.y + off + 0.5), 0.0, k * h - 1.0));
      values["tiles"] = value(gl::Fetch::CubicPrecise, (q - off) / static_cast<double>(k));
      shown.push_back("tiles");
    } else {
      shown.push_back(gl::fetch_name(methods[i]));
    }
  }
  r["values"] = values;
  r["shown"] = shown;
  return r;
}

std::optional<Progress> VideoMode::progress() const {
  if (!have_info_ && error_.empty()) return Progress{"opening " + label_, -1.0f};
  return std::nullopt;
}

bool VideoMode::settled() const {
  if (!error_.empty()) return true;
  if (!shared_) return true;
  std::lock_guard<std::mutex> lock(shared_->mu);
  return has_frame_ || !shared_->error.empty() || (shared_->opened && shared_->eos);
}

void VideoMode::finish() {
  // Waits (bounded) for the first frame; update() then shows it.
  if (!shared_ || !error_.empty()) return;
  std::unique_lock<std::mutex> lock(shared_->mu);
  shared_->cv.wait_for(lock, std::chrono::seconds(30), [&] {
    return !shared_->ready.empty() || !shared_->error.empty() || shared_->eos;
  });
}

std::vector<PassTiming> VideoMode::timings() const {
  std::vector<PassTiming> t;
  const auto add = [&](const char* name, const FrameHistory<kHistoryLength>& h) {
    if (h.count() > 0) t.push_back({name, &h});
  };
  add("video decode (CPU)", decode_ms_);
  add("frame upload (CPU copies)", upload_ms_);
  add("frame to GPU + unpack (CUDA)", transfer_ms_);
  add("frame prefilter (CUDA)", prefilter_ms_);
  add("tile upscale (CUDA)", tiles_ms_);
  add("upscale views (GL)", upscale_ms_);
  add("present (UI + swap)", present_ms_);
  return t;
}

nlohmann::json VideoMode::report() const {
  nlohmann::json j;
  j["mode"] = "video";
  j["source"] = label_;
  if (have_info_) {
    j["stream"] = {{"width", info_.width},       {"height", info_.height},
                   {"fps", info_.fps},           {"codec", info_.codec},
                   {"frames", info_.frames},     {"duration_s", info_.duration_s},
                   {"audio", info_.audio_codec}, {"camera", info_.is_camera}};
  }
  if (uploader_) {
    j["frame_size"] = {uploader_->width(), uploader_->height()};
    j["prefilter"] = uploader_->uses_cuda() ? "cuda" : "cpu";
  }
  j["notice"] = notice_;
  j["path"] = options_.path == VideoPath::Tiles ? "tiles" : "shader";
  j["tile_factor"] = uploader_ ? uploader_->tile_factor() : 0;
  j["zoom"] = view_.zoom();
  j["layout"] = layout_name(options_.layout);
  nlohmann::json methods = nlohmann::json::array();
  for (gl::Fetch m : view_methods()) methods.push_back(gl::fetch_name(m));
  j["methods"] = methods;
  // Where each view is (framebuffer pixels, origin top left: x, y, width, height) and where the
  // frame's extent (-1/2 .. size - 1/2) lands in it (x0, y0, x1, y1; unrotated view).
  nlohmann::json views = nlohmann::json::array();
  for (std::size_t i = 0; i < view_methods().size() && !cells_.empty(); ++i) {
    const Rect& cell = cells_[options_.layout == Layout::Wipe ? 0 : std::min(i, cells_.size() - 1)];
    Rect part = cell;
    if (options_.layout == Layout::Wipe) {
      const double x = wipe_divider_x(cell, wipe_);
      part = i == 0 ? Rect{cell.x, cell.y, x - cell.x, cell.height}
                    : Rect{x, cell.y, cell.x + cell.width - x, cell.height};
    } else if (i >= cells_.size()) {
      break;
    }
    nlohmann::json v;
    v["method"] = gl::fetch_name(view_methods()[i]);
    v["rect"] = {part.x, part.y, part.width, part.height};
    if (uploader_) {
      const glm::dvec2 a = view_.window_position({-0.5, -0.5}) + glm::dvec2(cell.x, cell.y);
      const glm::dvec2 b =
          view_.window_position({uploader_->width() - 0.5, uploader_->height() - 0.5}) +
          glm::dvec2(cell.x, cell.y);
      v["frame_rect"] = {a.x, a.y, b.x, b.y};
    }
    views.push_back(v);
  }
  j["views"] = views;
  j["frames_shown"] = shown_;
  j["video_fps"] = video_fps_ ? nlohmann::json(*video_fps_) : nlohmann::json();
  j["video_fps_text"] = fps_text();
  j["last_frame_index"] = shown_index_;
  j["dropped_decode"] = decode_drops_;
  j["dropped_display"] = display_drops_;
  j["display_window"] = window_.report();
  nlohmann::json probes = nlohmann::json::array();
  for (const glm::dvec2& at : options_.probes) probes.push_back(readout(at));
  j["readout"] = probes;
  const auto median = [](const FrameHistory<kHistoryLength>& h) -> nlohmann::json {
    if (h.count() == 0) return nullptr;
    std::vector<float> v;
    for (std::size_t i = 0; i < h.count(); ++i) v.push_back(h.at(i));
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  j["median_ms"] = {{"decode", median(decode_ms_)},
                    {"upload", median(upload_ms_)},
                    {"to_gpu_unpack", median(transfer_ms_)},
                    {"prefilter", median(prefilter_ms_)},
                    {"tiles", median(tiles_ms_)},
                    {"upscale_views", median(upscale_ms_)},
                    {"present", median(present_ms_)}};
  const auto opt = [](const std::optional<std::size_t>& v) -> nlohmann::json {
    return v ? nlohmann::json(*v) : nlohmann::json();
  };
  // The last figures are read now, not per frame (a /proc read and a CUDA query per frame
  // would put the check in the hot path).
  const std::optional<std::size_t> rss_now = shown_ > 0 ? rss_kib() : std::nullopt;
  const std::optional<std::size_t> gpu_now =
      shown_ > 0 ? gl::device_memory_used() : std::optional<std::size_t>();
  j["memory"] = {{"rss_kib_first", opt(rss_kib_[0])},     {"rss_kib_500", opt(rss_kib_[1])},
                 {"rss_kib_last", opt(rss_now)},          {"rss_kib_every_1000", rss_by_1000_},
                 {"gpu_bytes_first", opt(gpu_bytes_[0])}, {"gpu_bytes_500", opt(gpu_bytes_[1])},
                 {"gpu_bytes_last", opt(gpu_now)}};
  return j;
}

}  // namespace sv::viewer
