// The viewer's live video mode: a video file or a camera decoded with FFmpeg on a worker
// thread, every frame uploaded (double-buffered pixel buffers for the raw samples; pinned
// staging, CUDA unpack and the CUDA prefilter straight into an interop texture for the B-spline
// coefficients: gl::FrameUploader) and drawn upscaled to the window by the chosen method, beside
// or wiped against bilinear and nearest.
//
// Two upscaling paths for the prefiltered cubic:
//   shader  the GLSL fetch of the chosen method at every window pixel (any zoom, rotation);
//   tiles   CUDA, integer factor 2..4: one thread per input cell writes its f x f output pixels
//           from the 4 x 4 coefficients in registers (sv::cuda::upscale_to_surface), and the
//           view shows that texture with nearest sampling (exact cubic at the tile positions).
// Without CUDA the mode still runs: CPU prefilter, frames decoded at most 640 x 360, said so.
//
// Playback: a clock in the video's time advances with real time while playing; each frame the
// newest decoded frame that is due is shown. Frames decoded but overtaken before they could be
// shown count as display drops (rendering too slow); a frame that was due while the decoder had
// none ready counts as a decode drop, and the clock waits for it (decoding too slow). Cameras are
// live: the newest frame is always shown. In screenshot and --measure runs (FrameInfo::batch)
// every frame shows the next decoded frame, so the frame time is the pipeline's throughput.
//
// Mouse and keys over the views: wheel zooms about the cursor, drag pans, drag the wipe
// divider, middle drag or Shift + left drag sets window/level, R fits, Space play/pause, Right
// steps one frame (paused), L the loupe, Home rewinds.
//
// Display window: the zoom and rotate modes' ImageWindow on the frames' 8-bit values (R, G and
// B alike), automatic = 0..255 = the identity (the frames as decoded); applied in view.frag
// after the reconstruction (DisplayMap), so the cubic's overshoot survives until the display
// clamp. Readout under the cursor: the frame pixel, its stored 8-bit RGB and each shown view's
// interpolated value in 0..255 units (CPU double reference on the shown frame, readout()).
#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "image_window.h"
#include "layout.h"
#include "method_pass.h"
#include "mode.h"
#include "splineview/gl/frame_upload.h"
#include "splineview/gl/timer.h"
#include "splineview/video.h"

namespace sv::viewer {

enum class VideoPath { Shader, Tiles };

struct VideoOptions {
  std::string source;  // file or camera ("/dev/video0"); empty: the bundled clip
  gl::Fetch method = gl::Fetch::CubicOtf;  // the upscaled view's method (shader path)
  gl::Fetch compare = gl::Fetch::Linear;   // the other view of pair and wipe
  Layout layout = Layout::Single;          // single, pair (method | compare), grid (+ nearest,
                                           // cubic unfiltered), wipe (method left, compare right)
  VideoPath path = VideoPath::Shader;
  int factor = 0;  // tiles: 2..4; 0 = the integer nearest to the view's zoom
  bool loop = true;
  bool paused = false;
  bool allow_cuda = true;
  // Frames decoded at most this size (0 = native); 0 with no CUDA: 640 x 360.
  int max_width = 0, max_height = 0;
  // The display window in 8-bit units (--window, --level); each missing one is the automatic
  // window's (0..255: width 255, level 127.5). Kept across sources (all are 8-bit).
  std::optional<double> window;
  std::optional<double> level;
  // Frame positions (x, y) whose readout the report lists (--probe).
  std::vector<glm::dvec2> probes;
};

class VideoMode final : public Mode {
 public:
  // Starts opening the source in the background; needs the GL context current. Never throws
  // for a bad source: the error goes to error().
  VideoMode(VideoOptions options, MethodPass& pass);
  ~VideoMode() override;
  VideoMode(const VideoMode&) = delete;
  VideoMode& operator=(const VideoMode&) = delete;

  const char* name() const override { return "video"; }
  bool open(const std::string& path) override;
  std::vector<std::string> bundled() const override;
  bool open_bundled(std::size_t index) override;
  std::string title() const override;
  void update(const FrameInfo& f) override;
  void panel(const FrameInfo& f) override;
  void overlays(const FrameInfo& f, ImDrawList* list) override;
  void draw(const FrameInfo& f) override;
  std::optional<Progress> progress() const override;
  bool settled() const override;
  void finish() override;
  const std::string& error() const override { return error_; }
  void clear_error() override { error_.clear(); }
  std::vector<PassTiming> timings() const override;
  nlohmann::json report() const override;

  // The readout at frame position `p` (x, y; pixel k at k) on the frame shown: the position, the
  // frame index, the nearest pixel and its stored 8-bit RGB, and every method's interpolated
  // value there in 0..255 units (the CPU double reference: sv::sample on the frame's samples,
  // or on coefficients prefiltered in double from the 2 * kReadoutMargin + 2 square of pixels
  // around p, which differs from the whole frame's by less than 1e-9 levels), plus "tiles" on
  // the tile path (the cubic at the tile pixel shown there); "shown" lists the views' keys.
  // The report's "readout" entries; the panel shows the same for the cursor.
  nlohmann::json readout(const glm::dvec2& p) const;
  static constexpr int kReadoutMargin = 24;

  // For tests: frames shown so far, and the drops.
  std::int64_t frames_shown() const { return shown_; }
  std::int64_t decode_drops() const { return decode_drops_; }
  std::int64_t display_drops() const { return display_drops_; }

 private:
  struct Decoded {
    video::Frame frame;
    std::uint64_t epoch = 0;  // increments at every loop and seek
    double decode_ms = 0;
  };
  // Everything the decode thread shares with the GL thread (under mu).
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<Decoded> ready;
    std::vector<video::Frame> spare;  // recycled buffers
    bool stop = false;
    bool opened = false;
    bool eos = false;
    bool loop = true;
    std::optional<double> seek_to;
    std::uint64_t epoch = 0;
    std::string error;
    video::StreamInfo info;
    int width = 0, height = 0;  // output size of the decoder
  };
  static constexpr std::size_t kQueue = 4;

  void start(const std::string& source, std::string label);
  void stop();
  static void decode_loop(std::shared_ptr<Shared> s, std::string source, video::DecoderOptions opt);
  void take_frame(Decoded d);
  void recycle(video::Frame frame);
  std::vector<Rect> cells(const FrameInfo& f) const;
  void handle_input(const FrameInfo& f, const std::vector<Rect>& cells);
  int tile_factor() const;
  std::string fps_text() const;  // "29.8 fps", or "measuring fps" before the first figure
  std::vector<gl::Fetch> view_methods() const;

  VideoOptions options_;
  MethodPass& pass_;
  std::string label_;
  std::string error_;
  std::shared_ptr<Shared> shared_;
  std::thread thread_;
  std::unique_ptr<gl::FrameUploader> uploader_;
  std::string notice_;  // CPU fallback / reduced size sentence
  video::StreamInfo info_;
  bool have_info_ = false;

  // Playback.
  double clock_s_ = 0;       // video time of the playback clock
  double last_time_s_ = -1;  // FrameInfo::time_s of the previous update
  double shown_pts_ = 0;
  std::int64_t shown_index_ = -1;
  std::uint64_t shown_epoch_ = 0;
  bool has_frame_ = false;
  video::Frame frame_;  // the frame shown (kept for the readout; recycled when replaced)
  bool step_pending_ = false;
  std::int64_t shown_ = 0, decode_drops_ = 0, display_drops_ = 0;
  bool waiting_for_decode_ = false;
  double fps_window_start_ = -1;
  std::int64_t fps_window_frames_ = 0;
  // Frames shown per second over the last whole one-second window; none before the first
  // window ends (the panel says "measuring", never a false 0).
  std::optional<double> video_fps_;

  // View.
  ViewTransform view_;
  bool fit_pending_ = true;
  double wipe_ = 0.5;
  bool dragging_ = false, dragging_divider_ = false;
  bool loupe_ = false;
  float loupe_factor_ = 4.0f;
  std::optional<std::size_t> hover_cell_;
  glm::dvec2 hover_local_{0.0};
  float ui_scale_ = 1.0f;
  std::vector<Rect> cells_;  // the views' cells at the last update (for the report)
  ImageWindow window_;       // on the 8-bit values; the textures hold value / 255

  // Timing: per stage histories (ms) and GL timers of the view passes.
  FrameHistory<kHistoryLength> decode_ms_, upload_ms_, transfer_ms_, prefilter_ms_, tiles_ms_,
      upscale_ms_, present_ms_;
  gl::GpuTimer upscale_timer_;
  bool timers_meaningful_ = true;
  double draw_end_s_ = -1;
  std::chrono::steady_clock::time_point draw_end_{};
  // Resident KiB and GPU bytes in use at the first frame and at frame 500 (report() adds now).
  std::array<std::optional<std::size_t>, 2> rss_kib_{};
  std::array<std::optional<std::size_t>, 2> gpu_bytes_{};
  std::vector<std::size_t> rss_by_1000_;  // resident KiB at frames 1000, 2000, ...
};

// The bundled clip (assets/coffee_pan.mp4), found like default_image_path().
std::string default_video_path();

}  // namespace sv::viewer
