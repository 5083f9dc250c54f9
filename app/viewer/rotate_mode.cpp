// The repeated-rotation mode (see rotate_mode.h).
#include "rotate_mode.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <future>
#include <iterator>
#include <limits>
#include <optional>

#include <imgui.h>

#include "image_document.h"
#include "image_window.h"
#include "layout.h"
#include "panel_widgets.h"
#include "rotation_run.h"
#include "splineview/error.h"
#include "splineview/gl/gl.h"
#include "splineview/gl/image_textures.h"
#include "splineview/io.h"
#include "splineview/synthetic.h"

namespace sv::viewer {
namespace {

// Work per frame: advance() units until this much time has passed (at least one unit).
constexpr double kWorkBudgetMs = 8.0;
// Playback speed, steps per second.
constexpr double kPlayStepsPerSecond = 4.0;
// Error image gains offered (the default is the second).
constexpr float kGains[] = {1.0f, 10.0f, 100.0f};
constexpr std::size_t kMaxViews = 4;
constexpr std::size_t kSyntheticSize = 512;

// One colour per view/curve (Okabe-Ito: distinguishable with the common colour deficiencies).
constexpr ImU32 kColours[kMaxViews] = {IM_COL32(230, 159, 0, 255), IM_COL32(86, 180, 233, 255),
                                       IM_COL32(0, 158, 115, 255), IM_COL32(204, 121, 167, 255)};

const char* const kBundled[] = {"photograph (coffee.png)", "zone plate 512 x 512",
                                "resolution chart 512 x 512"};

// An image ready to rotate, decoded off the GL thread.
struct Source {
  ArrayD image;             // dims (H, W), 1..4 channels, as sv::load_image returns it
  std::string name;         // for the title ("coffee.png", "zone plate")
  std::string path;         // the file, empty for synthetic images
  std::string description;  // "600 x 400, 3 channels"
  DisplayRange range;       // how `image` (normalised) relates to the file's raw values
};

Source load_file(const std::string& path) {
  Loaded loaded = load_any(path, false);
  if (loaded.array.rank() != 2)
    throw Error(path + ": the rotate mode needs a 2-D image, this one has shape " +
                describe_shape(loaded.array.dims(), loaded.array.channels()));
  Source s;
  s.range = to_display_range(loaded);  // the run works on normalised values
  s.image = std::move(loaded.array);
  s.name = std::filesystem::path(path).filename().string();
  s.path = path;
  return s;
}

Source synthetic(std::size_t index) {
  Source s;
  if (index == 1) {
    s.image = ArrayD::from(zone_plate(kSyntheticSize, kSyntheticSize));
    s.name = "zone plate";
  } else {
    s.image = ArrayD::from(resolution_chart());
    s.name = "resolution chart";
  }
  s.range = unit_display_range(s.image);
  return s;
}

std::string describe(const ArrayD& a) {
  return std::to_string(a.dim(1)) + " x " + std::to_string(a.dim(0)) + ", " +
         std::to_string(a.channels()) + (a.channels() == 1 ? " channel" : " channels");
}

Layout layout_for(std::size_t views) {
  return views <= 1 ? Layout::Single : views == 2 ? Layout::Pair : Layout::Grid;
}

// A tick spacing of 1, 2 or 5 x 10^n giving about `count` intervals over `range`.
double nice_step(double range, int count) {
  const double raw = range / count;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * p >= raw) return m * p;
  return 10.0 * p;
}

// |result - original| amplified into grey: min(1, gain * max over channels).
ArrayF error_image(const ArrayF& result, const ArrayF& original, float gain) {
  const std::size_t ch = result.channels();
  ArrayF e(result.dims(), 1);
  for (std::size_t p = 0; p < e.size(); ++p) {
    float m = 0.0f;
    for (std::size_t c = 0; c < ch; ++c)
      m = std::max(m, std::fabs(result[p * ch + c] - original[p * ch + c]));
    e[p] = std::min(1.0f, gain * m);
  }
  return e;
}

nlohmann::json finite_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

}  // namespace

struct RotateMode::Impl {
  Impl(const RotateOptions& o, MethodPass& p) : options(o), pass(p) {}

  RotateOptions options;  // the settings of the next run (the panel edits these)
  MethodPass& pass;
  std::string error;

  std::future<Source> loading;
  std::string loading_name;
  std::optional<Source> source;
  ImageWindow window;
  bool first_source = true;  // the command line's window applies to the first image only

  std::unique_ptr<RotationRun> run;
  bool run_failed = false;
  bool restart_pending = false;
  std::uint64_t generation = 0;  // counts runs, so that stale view textures are noticed

  // Display state.
  int shown = 0;       // the step shown, 0..steps_done()
  bool follow = true;  // shown follows the newest step while the run computes
  bool playing = false;
  double last_play_s = 0;
  bool show_error = false;
  int gain_index = 1;
  bool show_disc = true;
  // The PSNR reference: the original rotated exactly by the accumulated angle (true), or the
  // original as it is (splinetool's --compare-original; meaningful at full turns).
  bool rotated_reference = true;

  ViewTransform view;
  bool fit_pending = true;
  glm::dvec2 cell_size{0.0, 0.0};
  bool dragging = false;
  std::optional<std::size_t> hover_cell;
  std::optional<glm::dvec2> hover_position;  // image position under the cursor
  std::vector<Rect> last_cells;              // the views as last drawn (for the report)

  struct ViewTexture {
    gl::ImageTextures textures;
    std::uint64_t generation = 0;
    int step = -1;
    bool error = false;
    float gain = 0;
    gl::Fetch method = gl::Fetch::Nearest;
  };
  std::vector<ViewTexture> view_textures;

  // ---- loading and runs ----

  void start_loading(std::function<Source()> job, std::string name) {
    loading_name = std::move(name);
    loading = std::async(std::launch::async, std::move(job));
  }

  // Takes the decoded image when ready (or waits for it) and starts its run.
  void poll_loading(bool wait) {
    if (!loading.valid()) return;
    if (!wait && loading.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
    try {
      Source s = loading.get();
      s.description = describe(s.image);
      if (first_source) {
        window.reset(s.range, options.window, options.level);
      } else {
        window.reset(s.range);
      }
      first_source = false;
      source = std::move(s);
      fit_pending = true;
      restart_pending = true;
    } catch (const std::exception& e) {
      error = e.what();
    }
  }

  void start_run() {
    restart_pending = false;
    run.reset();  // free the previous results before the new run keeps its own
    run_failed = false;
    ++generation;
    shown = 0;
    follow = true;
    playing = false;
    if (!source) return;
    RotationSettings s;
    s.step_deg = options.step_deg;
    s.steps = options.steps;
    s.disc = options.disc;
    s.cuda_prefilter = options.cuda_prefilter;
    try {
      run = std::make_unique<RotationRun>(source->image, options.methods, s);
    } catch (const std::exception& e) {
      error = e.what();
      run_failed = true;
    }
  }

  void work(double budget_ms) {
    if (!run || run_failed || run->done()) return;
    const auto start = std::chrono::steady_clock::now();
    try {
      do {
        run->advance();
      } while (!run->done() &&
               std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                       .count() < budget_ms);
    } catch (const std::exception& e) {
      error = std::string("repeated rotation stopped: ") + e.what();
      run_failed = true;
    }
  }

  int available() const { return run ? run->steps_done() : 0; }
  int steps() const { return run ? run->settings().steps : options.steps; }

  void show(int step) {
    shown = std::clamp(step, 0, available());
    follow = false;
  }

  void toggle_play() {
    playing = !playing;
    follow = false;
    if (playing && shown >= steps()) shown = 0;  // play again from the start
    last_play_s = -1;                            // the first frame only starts the clock
  }

  void play(double time_s) {
    if (!playing) return;
    if (last_play_s < 0) last_play_s = time_s;
    const double period = 1.0 / kPlayStepsPerSecond;
    while (time_s - last_play_s >= period) {
      last_play_s += period;
      if (shown < available()) ++shown;
    }
    if (shown >= steps()) playing = false;
  }

  // ---- views ----

  std::vector<Rect> cells(const FrameInfo& f) const {
    const std::size_t n = run ? run->methods().size() : options.methods.size();
    std::vector<Rect> c = layout_cells(layout_for(n), f.area);
    if (c.size() > n) c.resize(n);  // three methods in the grid: the fourth cell stays empty
    return c;
  }

  glm::dvec2 image_size() const {
    return source ? glm::dvec2(source->image.dim(1), source->image.dim(0)) : glm::dvec2(1.0, 1.0);
  }

  void fit(const Rect& cell) {
    view = ViewTransform::fit(image_size(), local(cell));
    fit_pending = false;
  }

  // Keeps the image point at the cells' centre when their size changes.
  void follow_cells(const std::vector<Rect>& c) {
    if (c.empty() || !source) return;
    const glm::dvec2 size(c.front().width, c.front().height);
    if (fit_pending) {
      fit(c.front());
    } else if (size != cell_size && cell_size.x > 0) {
      const glm::dvec2 centre = view.image_position(cell_size / 2.0);
      view = ViewTransform::looking_at(centre, local(c.front()), view.zoom(), view.angle());
    }
    cell_size = size;
  }

  void input(const FrameInfo& f, const std::vector<Rect>& c) {
    if (!ImGui::GetCurrentContext()) return;
    const ImGuiIO& io = ImGui::GetIO();
    const glm::dvec2 cursor = glm::dvec2(io.MousePos.x, io.MousePos.y) * f.fb_scale;
    hover_cell.reset();
    if (f.mouse_free && ImGui::IsMousePosValid()) {
      for (std::size_t i = 0; i < c.size(); ++i)
        if (c[i].contains(cursor)) hover_cell = i;
    }
    hover_position.reset();
    // Window/level first: Shift + left drag must not also pan.
    const bool window_drag =
        window.handle_drag(hover_cell.has_value() && !dragging,
                           glm::dvec2(io.MouseDelta.x, io.MouseDelta.y) * f.fb_scale);
    if (hover_cell) {
      const glm::dvec2 local_cursor = cursor - glm::dvec2(c[*hover_cell].x, c[*hover_cell].y);
      hover_position = view.image_position(local_cursor);
      if (io.MouseWheel != 0.0f)
        view.zoom_about(local_cursor, std::pow(1.2, static_cast<double>(io.MouseWheel)));
      if (!window_drag && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) dragging = true;
    }
    if (dragging) {
      if (!io.MouseDown[ImGuiMouseButton_Left])
        dragging = false;
      else
        view.pan_by(glm::dvec2(io.MouseDelta.x, io.MouseDelta.y) * f.fb_scale);
    }
    if (f.keyboard_free) {
      if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_LeftArrow), true)) show(shown - 1);
      if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_RightArrow), true)) show(shown + 1);
      if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Space), false)) toggle_play();
      // ImGui 1.86 has no ImGuiKey_R; its GLFW backend indexes keys by GLFW key code, which is
      // the upper-case ASCII code for letters.
      if (ImGui::IsKeyPressed('R', false)) fit_pending = true;
    }
  }

  // The texture view i shows now, uploaded when the step, method or display changed.
  const gl::ImageTextures& view_texture(std::size_t i) {
    if (view_textures.size() < run->methods().size()) view_textures.resize(run->methods().size());
    ViewTexture& v = view_textures[i];
    const float gain = kGains[gain_index];
    const bool stale = v.generation != generation || v.step != shown || v.error != show_error ||
                       (show_error && v.gain != gain) || v.method != run->methods()[i];
    if (stale) {
      const ArrayF result = run->result(i, shown);
      v.textures.samples =
          gl::upload_image(show_error ? error_image(result, run->original(), gain) : result);
      v.generation = generation;
      v.step = shown;
      v.error = show_error;
      v.gain = gain;
      v.method = run->methods()[i];
    }
    return v.textures;
  }

  // PSNR of view i at the shown step ("original" at step 0).
  // The PSNR series the plot and the labels show.
  const std::vector<double>& curve(std::size_t m) const {
    return rotated_reference ? run->psnr_rotated(m) : run->psnr(m);
  }

  std::string psnr_text(std::size_t i) const {
    char buf[64];
    if (shown == 0) return "original";
    const double p = curve(i)[static_cast<std::size_t>(shown - 1)];
    if (std::isinf(p))
      std::snprintf(buf, sizeof buf, "PSNR inf");
    else
      std::snprintf(buf, sizeof buf, "PSNR %.2f dB", p);
    return buf;
  }

  // The readout at image position p (x, y): the nearest pixel, the original's stored values and
  // each method's result at the shown step there, in raw units (null pixel outside the image).
  nlohmann::json readout(const glm::dvec2& p) const {
    nlohmann::json r{{"position", {p.x, p.y}}, {"units", "raw"}, {"step", shown}};
    if (!run || !source) return r;
    const double w = static_cast<double>(run->width()), h = static_cast<double>(run->height());
    if (!(p.x >= -0.5 && p.y >= -0.5 && p.x <= w - 0.5 && p.y <= h - 0.5)) {
      r["pixel"] = nullptr;
      return r;
    }
    const auto x = static_cast<std::size_t>(std::clamp(std::floor(p.x + 0.5), 0.0, w - 1));
    const auto y = static_cast<std::size_t>(std::clamp(std::floor(p.y + 0.5), 0.0, h - 1));
    r["pixel"] = {x, y};
    const DataScale& scale = source->range.scale;
    const std::size_t channels = source->image.channels();
    std::vector<double> stored(channels);
    for (std::size_t c = 0; c < channels; ++c)
      stored[c] = scale.raw(source->image.vec()[(y * run->width() + x) * channels + c]);
    r["stored"] = stored;
    nlohmann::json values;
    for (std::size_t m = 0; m < run->methods().size(); ++m) {
      std::vector<double> v;
      for (float c : run->pixel(m, shown, x, y)) v.push_back(scale.raw(c));
      values[gl::fetch_name(run->methods()[m])] = v;
    }
    r["values"] = values;
    return r;
  }

  void readout_section() {
    if (!hover_position) {
      ImGui::TextDisabled("cursor outside the views");
      return;
    }
    const nlohmann::json r = readout(*hover_position);
    if (r["pixel"].is_null()) {
      ImGui::TextDisabled("outside the image");
      return;
    }
    const auto line = [](const std::string& head, const nlohmann::json& values) {
      std::string text = head;
      char number[32];
      for (const nlohmann::json& v : values) {
        std::snprintf(number, sizeof number, " %.6g", v.get<double>());
        text += number;
      }
      ImGui::TextUnformatted(text.c_str());
    };
    line("pixel (" + std::to_string(r["pixel"][0].get<std::size_t>()) + ", " +
             std::to_string(r["pixel"][1].get<std::size_t>()) + ") original:",
         r["stored"]);
    for (gl::Fetch m : run->methods())
      line(std::string(method_short_name(m)) + ", step " + std::to_string(shown) + ":",
           r["values"][gl::fetch_name(m)]);
    ImGui::TextDisabled("raw values (the file's units), not windowed%s",
                        run->keeps_float() ? ""
                                           : "; steps kept as 16-bit copies of the automatic "
                                             "window, clamped to it");
  }

  // ---- panel pieces ----

  void method_controls() {
    bool changed = false;
    int count = static_cast<int>(options.methods.size());
    if (ImGui::SliderInt("views", &count, 1, static_cast<int>(kMaxViews))) {
      while (options.methods.size() < static_cast<std::size_t>(count)) {
        // The next method not shown yet, in the panel's order.
        gl::Fetch next = kMethods[0];
        for (gl::Fetch m : kMethods)
          if (std::find(options.methods.begin(), options.methods.end(), m) ==
              options.methods.end()) {
            next = m;
            break;
          }
        options.methods.push_back(next);
      }
      options.methods.resize(static_cast<std::size_t>(count));
      changed = true;
    }
    for (std::size_t i = 0; i < options.methods.size(); ++i) {
      char label[32];
      std::snprintf(label, sizeof label, "view %zu", i + 1);
      const ImVec2 at = ImGui::GetCursorScreenPos();
      const float side = ImGui::GetTextLineHeight();
      ImGui::GetWindowDrawList()->AddRectFilled(
          ImVec2(at.x, at.y + ImGui::GetStyle().FramePadding.y),
          ImVec2(at.x + side, at.y + ImGui::GetStyle().FramePadding.y + side), kColours[i], 2.0f);
      ImGui::Dummy(ImVec2(side, side));
      ImGui::SameLine();
      changed |= method_combo(label, &options.methods[i]);
    }
    if (changed) restart_pending = true;
  }

  void experiment_controls() {
    ImGui::InputDouble("degrees per step", &options.step_deg, 1.0, 10.0, "%.3f");
    if (ImGui::IsItemDeactivatedAfterEdit()) restart_pending = true;
    ImGui::InputInt("steps (K)", &options.steps);
    options.steps = std::clamp(options.steps, 1, 3600);
    if (ImGui::IsItemDeactivatedAfterEdit()) restart_pending = true;
    if (ImGui::Checkbox("prefilter with CUDA when available", &options.cuda_prefilter))
      restart_pending = true;
    if (ImGui::Button("restart")) restart_pending = true;
    if (run) {
      ImGui::SameLine();
      ImGui::TextDisabled("running: %g deg x %d = %g deg; prefilter on the %s",
                          run->settings().step_deg, steps(), run->settings().step_deg * steps(),
                          run->prefilter_backend());
      if (!run->prefilter_notice().empty())
        ImGui::TextWrapped("%s", run->prefilter_notice().c_str());
      if (std::string(run->prefilter_backend()) == "cuda")
        ImGui::TextWrapped(
            "CUDA prefilter: results differ from splinetool's CPU path by float ulps.");
      if (!run->keeps_float())
        ImGui::TextWrapped(
            "Steps are kept as 16-bit display copies (%.0f MiB) to stay in the "
            "memory budget; the PSNR uses the float results.",
            static_cast<double>(run->kept_bytes()) / (1024.0 * 1024.0));
    }
  }

  void playback_controls() {
    const int k = steps();
    if (ImGui::Button("|<")) show(0);
    ImGui::SameLine();
    if (ImGui::Button("<")) show(shown - 1);
    ImGui::SameLine();
    if (ImGui::Button(playing ? "pause" : "play")) toggle_play();
    ImGui::SameLine();
    if (ImGui::Button(">")) show(shown + 1);
    ImGui::SameLine();
    if (ImGui::Button(">|")) show(k);
    int step = shown;
    if (ImGui::SliderInt("step", &step, 0, k)) show(step);
    if (available() < k)
      ImGui::TextDisabled("computed: %d of %d steps%s", available(), k,
                          follow ? " (following)" : "");
    ImGui::Checkbox("error image", &show_error);
    if (show_error) {
      ImGui::SameLine();
      const char* gains[] = {"x1", "x10", "x100"};
      ImGui::SetNextItemWidth(ImGui::CalcTextSize("x100").x * 2.5f);
      ImGui::Combo("gain", &gain_index, gains, 3);
      ImGui::TextDisabled("grey = min(1, gain x max over channels |result - original|)");
    }
    ImGui::Checkbox("outline the measuring disc", &show_disc);
  }

  // PSNR against step, one curve per method, the shown step marked; click or drag to scrub.
  void psnr_plot(const FrameInfo& f) {
    const std::size_t n = run->methods().size();
    const int k = steps();
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    bool has_inf = false;
    for (std::size_t m = 0; m < n; ++m)
      for (double p : curve(m)) {
        if (std::isinf(p)) {
          has_inf = true;
          continue;
        }
        lo = std::min(lo, p);
        hi = std::max(hi, p);
      }
    if (!(lo <= hi)) {  // nothing finite yet
      lo = 0;
      hi = 50;
    }
    if (hi - lo < 1.0) {
      lo -= 0.5;
      hi += 0.5;
    }
    const double tick = nice_step(hi - lo, 4);
    lo = std::floor(lo / tick) * tick;
    hi = std::ceil(hi / tick) * tick;

    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float width =
        std::max(ImGui::GetContentRegionAvail().x, 40.0f);  // never 0 (ImGui asserts)
    const float height = 170.0f * f.ui_scale;
    const ImVec2 p0 = ImGui::GetCursorScreenPos();
    ImGui::InvisibleButton("psnr plot", ImVec2(width, height));
    const bool active = ImGui::IsItemActive();
    const float label_w = ImGui::CalcTextSize("100.0").x + 6.0f * f.ui_scale;
    const float text_h = ImGui::GetTextLineHeight();
    const ImVec2 a(p0.x + label_w, p0.y + 4.0f * f.ui_scale);  // plot area corners
    const ImVec2 b(p0.x + width - 6.0f * f.ui_scale, p0.y + height - text_h - 4.0f * f.ui_scale);
    const auto x_of = [&](double step) { return a.x + static_cast<float>(step / k) * (b.x - a.x); };
    const auto y_of = [&](double db) {
      if (std::isinf(db)) return a.y;
      return b.y - static_cast<float>((db - lo) / (hi - lo)) * (b.y - a.y);
    };

    dl->AddRectFilled(a, b, IM_COL32(20, 22, 26, 255));
    const ImU32 grid = IM_COL32(70, 74, 82, 255), text = IM_COL32(190, 190, 190, 255);
    for (double v = lo; v <= hi + tick / 2; v += tick) {
      const float y = y_of(v);
      dl->AddLine(ImVec2(a.x, y), ImVec2(b.x, y), grid);
      char buf[32];
      std::snprintf(buf, sizeof buf, tick < 1 ? "%.1f" : "%.0f", v);
      dl->AddText(ImVec2(p0.x, y - text_h / 2), text, buf);
    }
    const double xtick = std::max(1.0, nice_step(k, 6));
    for (double s = 0; s <= k + 0.5; s += xtick) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "%.0f", s);
      const float w = ImGui::CalcTextSize(buf).x;
      dl->AddText(ImVec2(std::min(x_of(s) - w / 2, b.x - w), b.y + 2.0f), text, buf);
    }
    dl->AddText(ImVec2(a.x + 4.0f, a.y + 2.0f), text, has_inf ? "dB (top edge = inf)" : "dB");

    dl->PushClipRect(ImVec2(a.x - 3, a.y - 3), ImVec2(b.x + 3, b.y + 3), true);
    for (std::size_t m = 0; m < n; ++m) {
      std::vector<ImVec2> pts;
      const std::vector<double>& p = curve(m);
      for (std::size_t s = 0; s < p.size(); ++s)
        pts.emplace_back(x_of(static_cast<double>(s + 1)), y_of(p[s]));
      if (pts.size() > 1)
        dl->AddPolyline(pts.data(), static_cast<int>(pts.size()), kColours[m], 0,
                        2.0f * f.ui_scale);
      if (pts.size() <= 12)
        for (const ImVec2& q : pts) dl->AddCircleFilled(q, 2.5f * f.ui_scale, kColours[m]);
    }
    dl->PopClipRect();
    dl->AddLine(ImVec2(x_of(shown), a.y), ImVec2(x_of(shown), b.y), IM_COL32(255, 255, 255, 200),
                1.5f * f.ui_scale);

    if (active) {
      const double s = (ImGui::GetIO().MousePos.x - a.x) / (b.x - a.x) * static_cast<double>(k);
      show(static_cast<int>(std::lround(s)));
      playing = false;
    }

    // Legend: colour, method, PSNR at the shown step.
    for (std::size_t m = 0; m < n; ++m) {
      const ImVec2 at = ImGui::GetCursorScreenPos();
      const float side = ImGui::GetTextLineHeight() * 0.8f;
      dl->AddRectFilled(ImVec2(at.x, at.y + side * 0.15f), ImVec2(at.x + side, at.y + side * 1.15f),
                        kColours[m], 2.0f);
      ImGui::Dummy(ImVec2(side, side));
      ImGui::SameLine();
      ImGui::Text("%s: %s", method_short_name(run->methods()[m]), psnr_text(m).c_str());
    }
  }

  void timing_section() {
    const bool gpu = gl::timer_queries_meaningful();
    for (std::size_t m = 0; m < run->methods().size(); ++m) {
      const std::vector<StepTiming>& t = run->timing(m);
      if (t.empty()) continue;
      double pre = 0, up = 0, total = 0, g = 0;
      for (const StepTiming& s : t) {
        pre += s.prefilter_ms;
        up += s.upload_ms;
        total += s.total_ms;
        g += s.gpu_ms.value_or(0.0);
      }
      const double c = static_cast<double>(t.size());
      char gpu_text[32] = "n/a";
      if (gpu) std::snprintf(gpu_text, sizeof gpu_text, "%.2f", g / c);
      ImGui::Text("%s: step %.1f ms (prefilter %.1f, upload %.1f, GPU %s)",
                  method_short_name(run->methods()[m]), total / c, pre / c, up / c, gpu_text);
    }
    if (!gpu)
      ImGui::TextDisabled("GPU times n/a: software renderer (timer queries not meaningful)");
  }
};

RotateMode::RotateMode(const RotateOptions& options, MethodPass& pass)
    : impl_(std::make_unique<Impl>(options, pass)) {
  const std::string path = options.image.empty() ? default_image_path() : options.image;
  impl_->start_loading([path] { return load_file(path); },
                       std::filesystem::path(path).filename().string());
}

RotateMode::~RotateMode() = default;

bool RotateMode::open(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    impl_->error = path + ": no such file";
    return false;
  }
  impl_->poll_loading(true);  // one load at a time: the previous one lands first
  impl_->start_loading([path] { return load_file(path); },
                       std::filesystem::path(path).filename().string());
  return true;
}

std::vector<std::string> RotateMode::bundled() const {
  return {std::begin(kBundled), std::end(kBundled)};
}

bool RotateMode::open_bundled(std::size_t index) {
  if (index >= std::size(kBundled)) {
    impl_->error = "no bundled image " + std::to_string(index);
    return false;
  }
  if (index == 0) return open(default_image_path());
  impl_->poll_loading(true);
  impl_->start_loading([index] { return synthetic(index); }, kBundled[index]);
  return true;
}

std::string RotateMode::title() const {
  if (impl_->source) return impl_->source->name;
  return impl_->loading_name;
}

void RotateMode::update(const FrameInfo& f) {
  Impl& s = *impl_;
  s.poll_loading(false);
  if (s.restart_pending && s.source) s.start_run();
  const std::vector<Rect> c = s.cells(f);
  s.follow_cells(c);
  s.input(f, c);
  s.work(kWorkBudgetMs);
  // Following the newest step, or kept within the steps done (the run starts again from step 1
  // when its CUDA prefilter fails).
  s.shown = s.follow ? s.available() : std::min(s.shown, s.available());
  s.play(f.time_s);
}

void RotateMode::panel(const FrameInfo& f) {
  Impl& s = *impl_;
  section("Repeated rotation");
  if (s.source) ImGui::Text("%s (%s)", s.source->name.c_str(), s.source->description.c_str());
  if (s.loading.valid()) ImGui::TextDisabled("loading %s ...", s.loading_name.c_str());
  if (error_text(s.error, "rotate error")) s.error.clear();
  if (s.source) s.window.panel(f.ui_scale);

  section("Methods");
  s.method_controls();
  section("Experiment");
  s.experiment_controls();
  if (!s.run) return;
  section("Steps");
  s.playback_controls();
  section("Readout");
  s.readout_section();
  section("PSNR per step");
  ImGui::TextDisabled(
      "inside the centred disc of radius %.2f x min(H, W), peak 1 = %.6g raw (normalised "
      "units; the display window does not change them)",
      s.options.disc, s.source ? s.source->range.scale.scale : 1.0);
  if (ImGui::RadioButton("against the original turned exactly", s.rotated_reference))
    s.rotated_reference = true;
  if (ImGui::RadioButton("against the original as it is", !s.rotated_reference))
    s.rotated_reference = false;
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "The original as it is, as splinetool resample --compare-original measures:\n"
        "meaningful where the turns add up to whole turns (step 36 of 36 x 10 degrees).");
  if (s.rotated_reference)
    ImGui::TextWrapped(
        "reference: the original turned once by k x angle (cubic B-spline in double); the "
        "original itself at whole turns");
  s.psnr_plot(f);
  section("Time per step");
  s.timing_section();
}

void RotateMode::overlays(const FrameInfo& f, ImDrawList* list) {
  Impl& s = *impl_;
  if (!s.run || !list) return;
  const std::vector<Rect> c = s.cells(f);
  const auto pt = [&](double x, double y) {
    return ImVec2(static_cast<float>(x / f.fb_scale.x), static_cast<float>(y / f.fb_scale.y));
  };
  const double margin = 6.0 * f.ui_scale * f.fb_scale.x;
  const float pad = 4.0f * f.ui_scale;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const Rect& cell = c[i];
    if (s.show_disc && s.run->settings().disc > 0) {
      const ViewTransform v = s.view.shifted({cell.x, cell.y});
      const glm::dvec2 centre = v.window_position({(static_cast<double>(s.run->width()) - 1) / 2,
                                                   (static_cast<double>(s.run->height()) - 1) / 2});
      const double r = s.run->settings().disc *
                       static_cast<double>(std::min(s.run->width(), s.run->height())) * v.zoom();
      list->PushClipRect(pt(cell.x, cell.y), pt(cell.x + cell.width, cell.y + cell.height), true);
      list->AddCircle(pt(centre.x, centre.y), static_cast<float>(r / f.fb_scale.x),
                      IM_COL32(255, 255, 255, 110), 96, 1.5f * f.ui_scale);
      list->PopClipRect();
    }
    char text[160];
    std::snprintf(text, sizeof text, "%zu  %s  step %d: %s%s", i + 1,
                  method_short_name(s.run->methods()[i]), s.shown, s.psnr_text(i).c_str(),
                  s.show_error ? (s.gain_index == 0   ? "  |error| x1"
                                  : s.gain_index == 1 ? "  |error| x10"
                                                      : "  |error| x100")
                               : "");
    const ImVec2 size = ImGui::CalcTextSize(text);
    const ImVec2 at = pt(cell.x + margin, cell.y + margin);
    const float swatch = size.y;
    list->AddRectFilled(at, ImVec2(at.x + swatch + size.x + 3 * pad, at.y + size.y + 2 * pad),
                        IM_COL32(0, 0, 0, 170), 3.0f * f.ui_scale);
    list->AddRectFilled(ImVec2(at.x + pad, at.y + pad),
                        ImVec2(at.x + pad + swatch, at.y + pad + swatch), kColours[i], 2.0f);
    list->AddText(ImVec2(at.x + 2 * pad + swatch, at.y + pad), IM_COL32(235, 235, 235, 255), text);
  }
}

void RotateMode::draw(const FrameInfo& f) {
  Impl& s = *impl_;
  if (!s.run) return;
  try {
    const std::vector<Rect> c = s.cells(f);
    s.last_cells = c;
    const float checker = 16.0f * f.ui_scale;
    for (std::size_t i = 0; i < c.size(); ++i) {
      const glm::mat3 m = s.view.shifted({c[i].x, c[i].y}).frag_to_image(f.fb_height);
      // The error image is a grey of its own: never windowed.
      s.pass.draw(s.view_texture(i), gl::Fetch::Nearest, m, to_viewport(c[i], f.fb_height), checker,
                  s.show_error ? DisplayMap{} : s.window.map());
    }
  } catch (const std::exception& e) {
    s.error = e.what();
  }
}

std::optional<Progress> RotateMode::progress() const {
  const Impl& s = *impl_;
  if (s.loading.valid()) return Progress{"loading " + s.loading_name, 0.0f};
  if (!s.run || s.run_failed || s.run->done()) return std::nullopt;
  char what[160];
  std::snprintf(what, sizeof what, "rotating: step %d of %d (%s)", s.run->next_step(),
                s.run->settings().steps,
                method_display_name(s.run->methods()[s.run->next_method()]));
  return Progress{what, static_cast<float>(s.run->progress())};
}

bool RotateMode::settled() const {
  const Impl& s = *impl_;
  if (s.loading.valid() || (s.restart_pending && s.source)) return false;
  if (s.run) return s.run->done() || s.run_failed;
  return !s.error.empty();  // nothing loaded and nothing coming: the error is final
}

void RotateMode::finish() {
  Impl& s = *impl_;
  s.poll_loading(true);
  if (s.restart_pending && s.source) s.start_run();
  s.work(std::numeric_limits<double>::infinity());
  if (s.follow) s.shown = s.available();
}

const std::string& RotateMode::error() const {
  return impl_->error;
}

void RotateMode::clear_error() {
  impl_->error.clear();
}

nlohmann::json RotateMode::report() const {
  const Impl& s = *impl_;
  nlohmann::json j{{"mode", "rotate"},
                   {"image", s.source ? (s.source->path.empty() ? s.source->name : s.source->path)
                                      : s.loading_name},
                   {"step_deg", s.run ? s.run->settings().step_deg : s.options.step_deg},
                   {"steps", s.steps()},
                   {"disc", s.run ? s.run->settings().disc : s.options.disc}};
  if (!s.run) {
    j["methods"] = nlohmann::json::array();
    return j;
  }
  const RotationRun& r = *s.run;
  j["prefilter"] = r.prefilter_backend();
  j["prefilter_notice"] = r.prefilter_notice();
  j["steps_done"] = r.steps_done();
  j["kept"] = r.keeps_float() ? "float" : "16-bit";
  nlohmann::json methods = nlohmann::json::array();
  for (std::size_t m = 0; m < r.methods().size(); ++m) {
    nlohmann::json psnr = nlohmann::json::array(), rms = nlohmann::json::array();
    for (double p : r.psnr(m)) psnr.push_back(finite_or_null(p));
    for (double v : r.rms(m)) rms.push_back(v);
    nlohmann::json psnr_rot = nlohmann::json::array(), rms_rot = nlohmann::json::array();
    for (double p : r.psnr_rotated(m)) psnr_rot.push_back(finite_or_null(p));
    for (double v : r.rms_rotated(m)) rms_rot.push_back(v);
    double pre = 0, gpu = 0;
    bool has_gpu = !r.timing(m).empty();
    for (const StepTiming& t : r.timing(m)) {
      pre += t.prefilter_ms;
      if (t.gpu_ms)
        gpu += *t.gpu_ms;
      else
        has_gpu = false;
    }
    const double n = std::max<double>(1.0, static_cast<double>(r.timing(m).size()));
    nlohmann::json rect;  // the view's rectangle, framebuffer pixels (x, y, width, height)
    if (m < s.last_cells.size()) {
      const Rect& c = s.last_cells[m];
      rect = {c.x, c.y, c.width, c.height};
    }
    methods.push_back({{"method", gl::fetch_name(r.methods()[m])},
                       {"rect", rect},
                       {"psnr_db", psnr},
                       {"rms", rms},
                       {"psnr_rotated_db", psnr_rot},
                       {"rms_rotated", rms_rot},
                       {"prefilter_ms_per_step", pre / n},
                       {"gpu_ms_per_step", has_gpu ? nlohmann::json(gpu / n) : nlohmann::json()}});
  }
  j["methods"] = methods;
  if (s.source) {
    j["display_window"] = s.window.report();
    j["accuracy_units"] = {{"normalised", true}, {"raw_per_unit", s.source->range.scale.scale}};
  }
  nlohmann::json probes = nlohmann::json::array();
  for (const glm::dvec2& p : s.options.probes) probes.push_back(s.readout(p));
  j["readout"] = probes;
  return j;
}

}  // namespace sv::viewer
