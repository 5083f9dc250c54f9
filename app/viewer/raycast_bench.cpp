// splineview-raycast-bench: the ray-cast 3-D view's speed and accuracy at any size, headless
// (EGL, no window, no UI): every method (cubic precise, cubic otf, trilinear) and mode (MIP,
// isosurface, DVR) on a volume file, each as one full-size pane and as the view's three panes
// side by side, with and without empty-space skipping. Per case: GL timer (GL_TIME_ELAPSED) of
// each frame after warm-up, median and 95th percentile; whether skipping changed any pixel's data
// (it must not); and the error of every n-th ray against the CPU march in double
// (raycast_reference.h). Writes JSON (--out) and PNGs of the three panes side by side (--png
// PREFIX: PREFIX_mip.png, PREFIX_iso.png, PREFIX_dvr.png), and prints a table.
//
//   splineview-raycast-bench [VOLUME] [--size 3840x2160] [--frames 30] [--out r.json]
//                            [--png shot] [--step 0.5] [--yaw 30] [--pitch 15]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "raycast_reference.h"
#include "raycast_renderer.h"
#include "splineview/error.h"
#include "splineview/gl/gl.h"
#include "splineview/gl/headless.h"
#include "splineview/io.h"
#include "splineview/prefilter.h"

namespace {

using namespace sv::viewer;
namespace gl = sv::gl;

struct Args {
  std::string volume = std::string(SPLINEVIEW_ASSET_DIR) + "/mri_t1_head.nrrd";
  int width = 3840, height = 2160;
  int frames = 30;
  std::string out, png;
  double step = 0.5, yaw = 120.0, pitch = 10.0;
  double zoom = 0.0;  // wheel notches closer than the fitted camera (10% each)
  int stride = 0;     // accuracy: every n-th ray (0: about 4000 rays)
  std::vector<RayMode> modes = {kRayModes.begin(), kRayModes.end()};
  std::vector<gl::Fetch> methods = {kRayMethodChoices.begin(), kRayMethodChoices.end()};
  bool gather = true;           // precise taps by textureGather (RayDrawOptions::precise_gather)
  bool fine_bounds = true;      // RayDrawOptions::fine_bounds
  bool mip_first_visit = true;  // RayDrawOptions::mip_first_visit
  double iso = -1.0;  // the isosurface's place in the window [p01, p99], 0..1 (default 0.3)
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "splineview-raycast-bench: %s\nusage: splineview-raycast-bench [VOLUME] [--size "
               "WxH] [--frames N] [--out JSON] [--png PREFIX] [--step S] [--yaw DEG] [--pitch "
               "DEG] [--stride N] [--modes mip,iso,dvr] [--methods "
               "precise,otf,linear,cubic-unfiltered] [--iso F] [--no-gather] [--zoom NOTCHES] "
               "[--no-fine-bounds] "
               "[--no-first-visit]\n",
               why.c_str());
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(k + " needs a value");
      return argv[++i];
    };
    if (k == "--size") {
      if (std::sscanf(value().c_str(), "%dx%d", &a.width, &a.height) != 2 || a.width < 8 ||
          a.height < 8)
        usage("--size must be WxH");
    } else if (k == "--frames") {
      a.frames = std::max(1, std::atoi(value().c_str()));
    } else if (k == "--out") {
      a.out = value();
    } else if (k == "--png") {
      a.png = value();
    } else if (k == "--step") {
      a.step = std::atof(value().c_str());
    } else if (k == "--yaw") {
      a.yaw = std::atof(value().c_str());
    } else if (k == "--pitch") {
      a.pitch = std::atof(value().c_str());
    } else if (k == "--modes") {
      a.modes.clear();
      std::string list = value();
      for (std::size_t start = 0; start <= list.size();) {
        const std::size_t comma = std::min(list.find(',', start), list.size());
        a.modes.push_back(parse_ray_mode(list.substr(start, comma - start)));
        start = comma + 1;
      }
    } else if (k == "--methods") {
      a.methods.clear();
      std::string list = value();
      for (std::size_t start = 0; start <= list.size();) {
        const std::size_t comma = std::min(list.find(',', start), list.size());
        const gl::Fetch f = gl::parse_fetch(list.substr(start, comma - start));
        if (!is_ray_method(f)) usage("--methods takes precise, otf, linear, cubic-unfiltered");
        a.methods.push_back(f);
        start = comma + 1;
      }
    } else if (k == "--zoom") {
      a.zoom = std::atof(value().c_str());
    } else if (k == "--no-gather") {
      a.gather = false;
    } else if (k == "--no-fine-bounds") {
      a.fine_bounds = false;
    } else if (k == "--no-first-visit") {
      a.mip_first_visit = false;
    } else if (k == "--iso") {
      a.iso = std::atof(value().c_str());
    } else if (k == "--stride") {
      a.stride = std::max(1, std::atoi(value().c_str()));
    } else if (!k.empty() && k[0] == '-') {
      usage("unknown option " + k);
    } else {
      a.volume = k;
    }
  }
  return a;
}

gl::Texture texture_of(const sv::ArrayF& a) {
  gl::Texture t =
      gl::Texture::create_3d(GL_R32F, static_cast<int>(a.dims()[2]), static_cast<int>(a.dims()[1]),
                             static_cast<int>(a.dims()[0]));
  t.set_filter(GL_LINEAR, GL_LINEAR);
  t.set_wrap(GL_MIRRORED_REPEAT);
  t.upload(GL_RED, GL_FLOAT, a.data());
  return t;
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

// Times `draw` (GL commands) `frames` times after a warm-up of at least 3 frames and 0.5 s (the
// GPU's clocks ramp up after the idle time of a shader compile), each with its own
// GL_TIME_ELAPSED query read back at once: median and 95th percentile in ms. Where timer queries
// measure nothing (a software renderer), the wall time of each finished frame instead.
template <class Draw>
std::pair<double, double> time_frames(int frames, Draw draw) {
  gl::Query q = gl::Query::create(GL_TIME_ELAPSED);
  const auto warm = std::chrono::steady_clock::now();
  for (int i = 0; i < 3 || std::chrono::steady_clock::now() - warm < std::chrono::milliseconds(500);
       ++i) {
    draw();
    glFinish();
  }
  std::vector<double> ms;
  const bool timer = gl::timer_queries_meaningful();
  for (int i = 0; i < frames; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    if (timer) glBeginQuery(GL_TIME_ELAPSED, q.id());
    draw();
    if (timer) {
      glEndQuery(GL_TIME_ELAPSED);
      GLuint64 ns = 0;
      glGetQueryObjectui64v(q.id(), GL_QUERY_RESULT, &ns);
      ms.push_back(static_cast<double>(ns) * 1e-6);
    } else {
      glFinish();
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
  }
  return {percentile(ms, 0.5), percentile(ms, 0.95)};
}

std::vector<glm::vec4> read_data(const RayTarget& t) {
  std::vector<glm::vec4> v(static_cast<std::size_t>(t.width) * static_cast<std::size_t>(t.height));
  glGetTextureImage(t.data.id(), 0, GL_RGBA, GL_FLOAT,
                    static_cast<GLsizei>(v.size() * sizeof(glm::vec4)), v.data());
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args args = parse(argc, argv);
    gl::HeadlessContext context;
    const std::string gpu = context.description();
    std::printf("GL: %s\n", gpu.c_str());
    sv::Loaded loaded = sv::load_any(args.volume, false);
    if (loaded.array.rank() != 3 || loaded.array.channels() != 1)
      throw sv::Error(args.volume + ": a 3-D one-channel volume is needed");
    const auto& d = loaded.array.dims();
    const std::array<std::size_t, 3> dims = {d[0], d[1], d[2]};
    sv::ArrayF samples = sv::ArrayF::from(loaded.array);
    sv::ArrayF coefficients = samples;
    sv::prefilter(coefficients, sv::PrefilterOptions{3, sv::Boundary::Reflect, 0});
    sv::ArrayD exact_coefficients = loaded.array;
    sv::prefilter(exact_coefficients, sv::PrefilterOptions{3, sv::Boundary::Reflect, 0});
    const gl::Texture samples_tex = texture_of(samples);
    const gl::Texture coefficients_tex = texture_of(coefficients);
    const double p01 = percentile(loaded.array.vec(), 0.01);
    const double p99 = percentile(loaded.array.vec(), 0.99);
    const WindowLevel wl = WindowLevel::from_range(p01, p99 > p01 ? p99 : p01 + 1.0);

    RaycastRenderer renderer;
    renderer.set_volume({&samples_tex, &coefficients_tex, dims, loaded.geometry});
    OrbitCamera cam = fit_camera(loaded.geometry, dims, args.yaw, args.pitch);
    cam.zoom(args.zoom);
    const int w = args.width, h = args.height;
    const RayFrame full = ray_frame(cam, loaded.geometry, dims, w, h);
    const int pane_w = (w - 4) / 3;
    const RayFrame pane = ray_frame(cam, loaded.geometry, dims, pane_w, h);

    const sv::ArrayD& exact = loaded.array;
    const RaySpline linear(exact, 1), cubic(exact_coefficients, 3), unfiltered(exact, 3);
    const int stride =
        args.stride > 0 ? args.stride
                        : std::max(1, static_cast<int>(std::sqrt(double(w) * double(h) / 4000.0)));

    nlohmann::json report = {
        {"gl", gpu},
        {"volume", args.volume},
        {"dims_zyx", dims},
        {"size", {w, h}},
        {"step_voxels", args.step},
        {"skipping",
         {{"cells", true},
          {"fine_bounds", args.fine_bounds},
          {"mip_first_visit", args.mip_first_visit}}},
        {"frames", args.frames},
        {"timing", gl::timer_queries_meaningful() ? "GL timer query" : "wall clock (glFinish)"},
        {"camera",
         {{"yaw", args.yaw},
          {"pitch", args.pitch},
          {"zoom_notches", args.zoom},
          {"distance_mm", cam.distance_mm}}},
        {"window", {wl.low(), wl.high()}},
        {"cases", nlohmann::json::array()}};
    std::printf("%-6s %-14s %11s %11s %8s %11s %11s %14s %s\n", "mode", "method", "skip ms",
                "p95 ms", "fps", "noskip ms", "3-pane ms", "skip changed", "accuracy");
    for (RayMode mode : args.modes) {
      RaySettings st;
      st.mode = mode;
      st.step = args.step;
      st.iso = p01 + (args.iso >= 0.0 ? args.iso : 0.3) * (p99 - p01);
      st.tf = make_transfer_function(mode == RayMode::Dvr ? "MRI soft tissue" : "grey ramp",
                                     wl.low(), wl.high(), 0.05);
      std::vector<RayTarget> panes(3);
      for (std::size_t m = 0; m < kRayMethodChoices.size(); ++m) {
        const gl::Fetch method = kRayMethodChoices[m];
        if (std::find(args.methods.begin(), args.methods.end(), method) == args.methods.end())
          continue;
        RayTarget target, target_noskip;
        RayDrawOptions skip_on, skip_off;
        skip_on.precise_gather = skip_off.precise_gather = args.gather;
        skip_on.fine_bounds = args.fine_bounds;
        skip_on.mip_first_visit = args.mip_first_visit;
        skip_off.skip = false;
        const auto [ms, p95] = time_frames(
            args.frames, [&] { renderer.render(method, full, st, wl, skip_on, target); });
        const auto [ms_noskip, p95_noskip] = time_frames(std::max(3, args.frames / 3), [&] {
          renderer.render(method, full, st, wl, skip_off, target_noskip);
        });
        (void)p95_noskip;
        const std::vector<glm::vec4> a = read_data(target), b = read_data(target_noskip);
        std::size_t changed = 0;
        // MIP's third value counts the samples taken, which skipping is meant to change.
        for (std::size_t i = 0; i < a.size(); ++i) {
          const bool differs =
              mode == RayMode::Mip ? (a[i].x != b[i].x || a[i].y != b[i].y) : a[i] != b[i];
          if (differs && changed < 5)  // the first few, to find out why
            std::printf(
                "       skipping changed pixel (%zu, %zu): %.9g %.9g %.9g %.9g, without "
                "skipping %.9g %.9g %.9g %.9g\n",
                i % static_cast<std::size_t>(w), i / static_cast<std::size_t>(w), a[i].x, a[i].y,
                a[i].z, a[i].w, b[i].x, b[i].y, b[i].z, b[i].w);
          changed += differs;
        }
        // MIP: samples per ray through the volume, with and without skipping.
        double samples_skip = 0, samples_noskip = 0, rays_in = 0, steps = 0;
        if (mode == RayMode::Mip)
          for (std::size_t i = 0; i < a.size(); ++i)
            if (b[i].y > 0.5f) {
              samples_skip += a[i].z;
              steps += a[i].w;
              samples_noskip += b[i].z;
              rays_in += 1;
            }
        // Three panes side by side, one method each, as the view draws them.
        double ms3 = std::nan("");
        if (m == 0)
          ms3 = time_frames(args.frames, [&] {
                  for (std::size_t k = 0; k < kRayMethods.size(); ++k)
                    renderer.render(kRayMethods[k], pane, st, wl, skip_on, panes[k]);
                }).first;
        // Accuracy: every stride-th ray against the CPU march in double.
        int cols = 0, rows = 0;
        const std::vector<glm::vec4> g =
            renderer.measure(method, full, st, wl, skip_on, stride, stride / 2, &cols, &rows);
        std::vector<RayResult> ref(g.size());
        const RaySpline& spline = method == gl::Fetch::Linear            ? linear
                                  : method == gl::Fetch::CubicUnfiltered ? unfiltered
                                                                         : cubic;
        std::vector<std::thread> workers;
        const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
        for (unsigned t = 0; t < threads; ++t)
          workers.emplace_back([&, t] {
            for (std::size_t i = t; i < ref.size(); i += threads) {
              const int x =
                  static_cast<int>(i % static_cast<std::size_t>(cols)) * stride + stride / 2;
              const int y =
                  static_cast<int>(i / static_cast<std::size_t>(cols)) * stride + stride / 2;
              ref[i] = march_ray(spline, full, st, x, y);
            }
          });
        for (std::thread& t : workers) t.join();
        const RayErrors e = compare_rays(mode, g, ref);
        char acc[160];
        if (mode == RayMode::Iso)
          std::snprintf(acc, sizeof acc, "depth rms %.2e max %.2e mm, normal rms %.2e max %.2e deg",
                        e.rms, e.max, e.angle_rms, e.angle_max);
        else
          std::snprintf(acc, sizeof acc, "rms %.2e max %.2e", e.rms, e.max);
        std::printf("%-6s %-14s %11.3f %11.3f %8.1f %11.3f %11.3f %14zu %s\n", ray_mode_name(mode),
                    ray_method_label(method), ms, p95, 1000.0 / ms, ms_noskip, ms3, changed, acc);
        if (rays_in > 0)
          std::printf(
              "       samples per ray through the volume: %.1f (without skipping %.1f); loop "
              "iterations %.1f\n",
              samples_skip / rays_in, samples_noskip / rays_in, steps / rays_in);
        std::fflush(stdout);
        report["cases"].push_back(
            {{"mode", ray_mode_name(mode)},
             {"method", ray_method_label(method)},
             {"gpu_ms_median", ms},
             {"gpu_ms_p95", p95},
             {"fps", 1000.0 / ms},
             {"gpu_ms_no_skipping", ms_noskip},
             {"gpu_ms_three_panes", ms3},
             {"pixels_changed_by_skipping", changed},
             {"mip_samples_per_ray", rays_in > 0 ? samples_skip / rays_in : std::nan("")},
             {"mip_samples_per_ray_no_skipping",
              rays_in > 0 ? samples_noskip / rays_in : std::nan("")},
             {"mip_iterations_per_ray", rays_in > 0 ? steps / rays_in : std::nan("")},
             {"accuracy",
              {{"rays", e.rays},
               {"stride", stride},
               {"rms", e.rms},
               {"max", e.max},
               {"angle_rms_deg", e.angle_rms},
               {"angle_max_deg", e.angle_max},
               {"mismatched", e.mismatched}}}});
      }
      if (!args.png.empty()) {
        // The three panes side by side (precise | otf | trilinear), 2-pixel gaps, top row first.
        sv::ArrayD img({static_cast<std::size_t>(h), static_cast<std::size_t>(w)}, 3);
        std::fill(img.vec().begin(), img.vec().end(), 40.0);
        std::vector<unsigned char> rgba(static_cast<std::size_t>(pane_w) * h * 4);
        for (std::size_t k = 0; k < panes.size(); ++k) {
          glGetTextureImage(panes[k].colour.id(), 0, GL_RGBA, GL_UNSIGNED_BYTE,
                            static_cast<GLsizei>(rgba.size()), rgba.data());
          const std::size_t x0 = k * static_cast<std::size_t>(pane_w + 2);
          for (int y = 0; y < h; ++y)
            for (int x = 0; x < pane_w; ++x)
              for (int c = 0; c < 3; ++c)
                img.data()[((static_cast<std::size_t>(h - 1 - y) * w) + x0 + x) * 3 + c] =
                    rgba[(static_cast<std::size_t>(y) * pane_w + x) * 4 + c];
        }
        const std::string path = args.png + "_" + ray_mode_name(mode) + ".png";
        sv::save_image(path, img, 8);
        std::printf("wrote %s (cubic precise | cubic otf | trilinear)\n", path.c_str());
      }
    }
    if (!args.out.empty()) {
      std::ofstream f(args.out);
      f << report.dump(2) << "\n";
      if (!f) throw sv::Error("cannot write " + args.out);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "splineview-raycast-bench: error: %s\n", e.what());
    return 1;
  }
}
