// splineview: the interactive viewer. Parses the command line and runs the viewer; every
// error that escapes ends here as one line on stderr and a non-zero exit code.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "deform_field.h"
#include "deform_mode.h"
#include "layout.h"
#include "method_pass.h"
#include "mode_choice.h"
#include "rotate_mode.h"
#include "splineview/command_words.h"
#include "splineview/cuda_device.h"
#include "splineview/error.h"
#include "splineview/io.h"
#include "splineview/version.h"
#include "splineview/video.h"
#include "video_mode.h"
#include "viewer.h"
#include "volume_mode.h"
#include "zoom_mode.h"

namespace {

// Parses "WxH" (e.g. "1280x800").
bool parse_size(const std::string& text, int* width, int* height) {
  int w = 0, h = 0;
  char x = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c", &w, &x, &h, &extra) != 3) return false;
  if ((x != 'x' && x != 'X') || w < 64 || h < 64 || w > 16384 || h > 16384) return false;
  *width = w;
  *height = h;
  return true;
}

// What --version prints: the version, the commit, and what this build can use (checked without
// a window or GL context: the GL version is in the panel and in --report).
std::string version_text() {
  std::string t = std::string("splineview ") + sv::version() + " (git " + sv::git_commit() + ")\n";
  t += std::string("CUDA: ") +
       (sv::cuda_compiled() ? "compiled in (GPUs are looked for at run time)"
                            : "not compiled in (prefiltering on the CPU)") +
       "\n";
  t += "FFmpeg: " +
       (sv::video::video_compiled() ? "compiled in (" + sv::video::ffmpeg_versions() + ")"
                                    : std::string("not compiled in (no video mode)")) +
       "\n";
  t += "OpenGL: 4.5 core profile required";
  return t;
}

// Command lines shown by --help, run as written from the source folder (scan.raw: any file of
// 32 * 64 * 48 * 2 bytes); tests/viewer/test_viewer_cli.py runs every one.
constexpr const char* kExamples =
    "Examples (assets/ is the bundled data of the source folder):\n"
    "  splineview assets/coffee.png --layout grid --methods nearest,linear,otf,precise\n"
    "  splineview assets/coffee.png --layout wipe --methods linear,precise --zoom 8 "
    "--center 120,80\n"
    "  splineview --mode rotate assets/ascent.png --step-angle 45 --steps 8\n"
    "  splineview --mode volume assets/mri_t1_head.nrrd --methods nearest,otf,otf,precise "
    "--heat-map\n"
    "  splineview --mode volume scan.raw --raw 32x64x48:u16:le:spacing=2x1x1\n"
    "  splineview --mode volume assets/mri_t1_head.nrrd --view3d iso\n"
    "  splineview --mode video assets/coffee_pan.mp4 --layout wipe --compare nearest\n"
    "  splineview --mode video synthetic:1280x720 --path tiles --factor 3\n"
    "  splineview --mode video /dev/video0 --decode-size 640x360\n"
    "  splineview --mode deform --preset folding --heat-map\n"
    "  splineview --mode deform assets/mri_t1_head.nrrd --preset swirl --spacing 12\n"
    "  splineview assets/coffee.png --headless --screenshot shot.png --report shot.json\n";

// Splits "a,b,c" into its parts.
std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::string::size_type start = 0;
  while (true) {
    const std::string::size_type comma = text.find(',', start);
    parts.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

// parse_command_line's result when the options describe a run (anything else is an exit status).
constexpr int kRun = -1;

// Parses a command line (argv[0] the program) into the viewer's options. Returns kRun when there
// is something to run: `out` holds the options, or `batch` the --batch file. Otherwise returns
// the exit status, having printed what the user asked for (--help, --version) or the error.
int parse_command_line(int argc, char** argv, sv::viewer::ViewerOptions* out, std::string* batch) {
  {
    sv::viewer::ViewerOptions options;
    sv::viewer::ZoomOptions zoom_options;
    std::string image;
    bool no_accuracy = false;
    std::string mode = "zoom";
    std::string method;
    std::string methods;
    std::string layout = sv::viewer::layout_name(zoom_options.layout);
    std::string size = std::to_string(options.width) + "x" + std::to_string(options.height);
    double zoom = 0;
    std::string center;

    CLI::App app{
        "splineview: compares nearest, linear, unfiltered cubic B-spline and prefiltered "
        "(exact, interpolating) cubic B-spline reconstruction on the GPU, in up to four "
        "synchronised views."};
    app.set_version_flag("--version", version_text(),
                         "print the version, the git commit and what this build can use (CUDA, "
                         "FFmpeg), then exit");
    app.footer(kExamples);
    app.add_option("file", image,
                   "an image (PNG, JPEG, TIFF, .npy, a DICOM slice, ...: zoom and rotate; default "
                   "the bundled photograph assets/coffee.png), a volume (NIfTI, NRRD, DICOM "
                   "file or folder, TIFF stack, .npy, a folder or glob of slices, raw with "
                   "--raw: volume; default the bundled MRI head), or a video (file, /dev/videoN, "
                   "synthetic[:WxH]: video); zone-plate and marschner-lobb name the generated "
                   "analytic data (zoom, volume). Without --mode the content picks the mode.");
    app.add_option("--mode", mode,
                   "zoom: compare methods on a 2-D image (zoom, pan, rotate); rotate: repeated "
                   "rotation of a 2-D image with PSNR per step; volume: slices of a 3-D volume "
                   "(axial, coronal, sagittal, oblique); video: live upscaling of a video file "
                   "or camera (/dev/videoN); deform: a 2-D image or a volume's axial slices warped "
                   "by a cubic B-spline FFD field, its three GLSL field kernels side by side with "
                   "det J and their error against the double reference (default image: the bundled "
                   "assets/ascent.png). Default: picked from FILE (a video -> video, a "
                   "2-D image -> zoom, a 3-D volume -> volume); zoom without FILE")
        ->check(CLI::IsMember({"zoom", "rotate", "volume", "video", "deform"}));
    const std::string method_names =
        "nearest | linear | cubic-unfiltered | lut | otf | precise | grbf (zoom and volume)";
    auto* method_option = app.add_option(
        "--method", method, method_names + " (cubic = otf): the method of the first view");
    app.add_option("--methods", methods,
                   "comma-separated methods of the views in layout order (volume: axial, "
                   "coronal, sagittal, oblique) (" +
                       method_names + ")")
        ->excludes(method_option);
    app.add_option("--layout", layout,
                   "single | pair (side by side) | grid (2x2) | wipe (split with a divider)")
        ->check(CLI::IsMember({"single", "pair", "grid", "wipe"}))
        ->capture_default_str();
    app.add_option("--angle", zoom_options.angle_deg,
                   "view rotation in degrees, counter-clockwise as displayed")
        ->check(CLI::Range(-360.0, 360.0));
    app.add_option("--zoom", zoom,
                   "window pixels per image sample (volume mode: per mm, all views, about the "
                   "crosshair) (default: fit the view)")
        ->check(CLI::Range(1.0 / 64, 1024.0));
    app.add_option("--center", center,
                   "image position X,Y (in samples, 0,0 = centre of the top-left sample) to "
                   "show at the centre of each view (default: the image centre)");
    app.add_option("--screenshot", options.screenshot,
                   "render the mode's default view once it has settled, write the whole window "
                   "to this PNG and exit (a file that fails to load is then an error, not a "
                   "fallback to the default image)");
    app.add_option("--report", options.report,
                   "with --screenshot: also write the mode's figures (view, accuracy per view, "
                   "PSNR curves) to this JSON file");
    app.add_flag("--no-accuracy", no_accuracy,
                 "do not measure the views against the double-precision reference");
    app.add_flag("--heat-map", zoom_options.heat_map, "show the error heat map over the views");
    std::string reference;
    app.add_option("--reference", reference,
                   "what the accuracy overlay measures the views against: same (each view's "
                   "method in double, the default), a method name such as precise (that method "
                   "in double), or truth (the analytic function: zone plate, Marschner-Lobb)");
    app.add_flag("--headless", options.headless,
                 "render offscreen through EGL, without a window system (with --screenshot; "
                 "for GPU machines without a display)");
    app.add_option("--measure", options.measure_frames,
                   "with --screenshot: time N frames of the settled view (each finished before "
                   "the next) and add the figures to the report")
        ->check(CLI::Range(1, 100000));
    double step_angle = 10.0;
    int steps = 36;
    bool cpu_prefilter = false;
    app.add_option("--step-angle", step_angle,
                   "rotate mode: degrees per step (counter-clockwise as displayed)")
        ->check(CLI::Range(-360.0, 360.0))
        ->capture_default_str();
    app.add_option("--steps", steps, "rotate mode: number of steps K")
        ->check(CLI::Range(1, 3600))
        ->capture_default_str();
    app.add_flag("--cpu-prefilter", cpu_prefilter,
                 "rotate mode: prefilter each step on the CPU (as splinetool's gl backend) even "
                 "where CUDA is available");
    double texture_budget_mib = 0;
    app.add_option("--texture-budget", texture_budget_mib,
                   "volume mode: MiB of GPU textures the volume may take (samples and "
                   "coefficients; default 2048); a larger volume is shown as an overview, its "
                   "anti-aliased reduction by 2, 4, ... per axis, whose views stream the file's "
                   "full resolution where zoomed in (--detail-budget)")
        ->check(CLI::PositiveNumber);
    std::string crosshair;
    app.add_option("--crosshair", crosshair,
                   "volume mode: the crosshair at the file's voxel I,J,K (x, y, z index; an "
                   "overview maps it to its own grid) (default: the volume's central voxel)");
    std::string view3d, view3d_methods, view3d_angles, tf_preset;
    std::optional<double> iso, opacity, ray_step;
    app.add_option("--view3d", view3d,
                   "volume mode: start in the ray-cast 3-D view: mip (maximum intensity), iso "
                   "(shaded isosurface) or dvr (volume rendering through a transfer function)")
        ->check(CLI::IsMember({"mip", "iso", "dvr"}));
    app.add_option("--view3d-methods", view3d_methods,
                   "volume mode, 3-D view: comma-separated methods of its side-by-side panes "
                   "(precise, otf, linear, cubic-unfiltered; default precise,otf,linear)");
    app.add_option("--view3d-angles", view3d_angles,
                   "volume mode, 3-D view: the camera's YAW,PITCH in degrees (0,0 looks from "
                   "anterior; default 120,10)");
    app.add_option("--iso", iso, "volume mode, 3-D view: the isosurface value (raw units)");
    app.add_option("--tf", tf_preset,
                   "volume mode, 3-D view: the transfer function preset (\"CT bone\", \"MRI soft "
                   "tissue\", \"grey ramp\"), over the display window");
    app.add_option("--opacity", opacity, "volume mode, 3-D view: DVR opacity per mm (default 0.05)")
        ->check(CLI::Range(1e-6, 100.0));
    bool dvr_shade = false;
    app.add_flag("--dvr-shade", dvr_shade,
                 "volume mode, 3-D view: shade DVR samples by the spline gradient (a headlight)");
    app.add_option("--ray-step", ray_step,
                   "volume mode, 3-D view: the ray's step in voxels (0.05..1, default 0.5)")
        ->check(CLI::Range(0.05, 1.0));
    double detail_budget_mib = -1;
    app.add_option("--detail-budget", detail_budget_mib,
                   "volume mode, overviews: MiB of GPU textures for the full-resolution boxes "
                   "streamed under the four views together (default 512; 0: no streaming)")
        ->check(CLI::NonNegativeNumber);
    std::string raw;
    app.add_option("--raw", raw,
                   "volume mode: read FILE as headerless raw data, DIMS:TYPE[:le|be]"
                   "[:spacing=SZxSYxSX][:offset=N], DIMS in array order ZxYxX (e.g. "
                   "64x128x128:u16:le:spacing=2x1x1)");
    std::string video_path = "shader", compare = "linear";
    int factor = 0;
    bool paused = false, no_loop = false;
    app.add_option("--path", video_path,
                   "video mode: shader (the GLSL fetch at every window pixel) | tiles (CUDA "
                   "thread-per-tile upscale by an integer factor)")
        ->check(CLI::IsMember({"shader", "tiles"}))
        ->capture_default_str();
    app.add_option("--factor", factor, "video mode, tiles: 2, 3 or 4 (default: nearest the zoom)")
        ->check(CLI::Range(2, 4));
    app.add_option("--compare", compare,
                   "video mode: the method of the second view in pair and wipe layouts")
        ->capture_default_str();
    std::string decode_size;
    app.add_option("--decode-size", decode_size,
                   "video mode: decode frames at most WxH (scaled down, aspect kept; default: "
                   "native with CUDA, 640x360 without)");
    app.add_flag("--paused", paused, "video mode: start paused on the first frame");
    app.add_flag("--no-loop", no_loop, "video mode: stop at the end instead of looping");
    std::optional<double> window_width, window_level;
    app.add_option(
           "--window", window_width,
           "display window width in the data's raw values (volume, zoom, rotate, video: e.g. "
           "--window 4095 --level 2047.5 shows 0..4095 from black to white; default: "
           "the automatic window, percentiles or an 8-bit image's or video's full "
           "scale)")
        ->check(CLI::PositiveNumber);
    app.add_option("--level", window_level,
                   "display window centre in the data's raw values (volume, zoom, rotate, video)");
    std::string quantity;
    app.add_option("--quantity", quantity,
                   "zoom and volume: what the views show: value (default), a partial derivative "
                   "(dx, dy, dz, dxx, dxy, ..., up to order 2 per axis), gradient-magnitude, "
                   "laplacian or hessian-det; one name for every view, or comma-separated names "
                   "per view in layout order (volume: plane order). Derivatives per texel (zoom) "
                   "or per mm (volume); methods without them (nearest, linear, lut; otf: first "
                   "derivatives only) say so on the view");
    std::optional<double> quantity_range;
    app.add_option("--quantity-range", quantity_range,
                   "zoom and volume: the derivative views' display range R: -R..R for signed "
                   "quantities, 0..R for the gradient magnitude (default: automatic per quantity)")
        ->check(CLI::PositiveNumber);
    double lambda = 0.0;
    app.add_option("--lambda", lambda,
                   "zoom and volume: the smoothing spline's lambda for the prefiltered views' "
                   "coefficients (the direct transform, by CUDA into the GL texture where the "
                   "prefilter runs there, else on the CPU; 0, the default: the interpolating "
                   "prefilter)")
        ->check(CLI::NonNegativeNumber);
    double sigma = 1.0;
    app.add_option("--sigma", sigma,
                   "zoom and volume: the Gaussian RBF's sigma in samples for the grbf views "
                   "(0 < S <= 64, default 1; the weights are solved in float, and a sigma that "
                   "makes the system singular in float is refused on the view)");
    std::vector<std::string> probes;
    app.add_option("--probe", probes,
                   "zoom, rotate and video, with --report: add the readout at image (video: frame) "
                   "position X,Y (in samples): the nearest pixel's stored values and every "
                   "method's value there, in raw units (repeatable)");
    std::string preset = "swirl", spacing, grid_path, kernels, overlays;
    std::optional<double> amplitude, heat_top;
    std::optional<int> slice;
    app.add_option("--preset", preset,
                   "deform mode: the synthetic field: none | smooth-random | swirl | folding "
                   "(folding: det J < 0 in the middle)")
        ->check(CLI::IsMember({"none", "smooth-random", "swirl", "folding"}))
        ->capture_default_str();
    app.add_option("--amplitude", amplitude,
                   "deform mode: the preset's strength (smooth-random: displacement in "
                   "spacings; swirl: quarter turns at the centre; folding: shear in 1.5 "
                   "spacings; default 0.25, 0.5, 1)")
        ->check(CLI::Range(0.0, 10.0));
    app.add_option("--spacing", spacing,
                   "deform mode: control-point spacing in voxels, N or one per array axis "
                   "(NYxNX, NZxNYxNX) (default 32 in 2-D, 12 in 3-D; required with --grid)");
    app.add_option("--grid", grid_path,
                   "deform mode: a control grid (.npy of shape (M_y, M_x, 2) or (M_z, M_y, M_x, "
                   "3): displacements in voxels, last axis in array order (z, y, x), point j at "
                   "voxel (j - 1) * spacing) instead of the preset");
    app.add_option("--kernels", kernels,
                   "deform mode: the views, comma-separated field kernels: texture, per-voxel, "
                   "tile (default all three)");
    app.add_option("--overlays", overlays,
                   "deform mode: comma-separated overlays: grid, detj, heat (the heat map; also "
                   "--heat-map), or none (default grid,detj)");
    app.add_option("--heat-top", heat_top,
                   "deform mode: the field error (voxels) at the heat map's top colour; the map "
                   "spans four decades below it (default 1e-2)")
        ->check(CLI::Range(1e-12, 1e6));
    app.add_option("--slice", slice, "deform mode, volumes: the axial slice (z index) shown")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--size", size, "window size WxH")->capture_default_str();
    app.add_option("--frames", options.screenshot_frames,
                   "with --screenshot: frames to render before taking it (at least 3)")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
    app.add_option("--batch", *batch,
                   "render the screenshot runs listed in this file in one process: one run per "
                   "line, its options as on this command line (--screenshot required, --report "
                   "and the rest as wanted; words split as a shell does, with '...', \"...\" and "
                   "\\ but no expansions; blank lines and lines starting with # skipped). The runs "
                   "share one headless GL context and its compiled shaders (--headless is "
                   "implied) and each writes what a process of its own would. Stops at the first "
                   "run that fails, with its exit status. Takes no other option")
        ->type_name("FILE");
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
      std::string what = e.what();
      std::replace(what.begin(), what.end(), '\n', ' ');
      std::fprintf(stderr, "splineview: error: %s (see splineview --help)\n", what.c_str());
      return 2;
    }

    if (!batch->empty()) {
      for (const CLI::Option* o : app.get_options())
        if (o->count() > 0 && o->get_name() != "--batch") {
          std::fprintf(stderr,
                       "splineview: error: --batch takes no other option (%s): each line of the "
                       "file holds its run's options\n",
                       o->get_name().c_str());
          return 2;
        }
      return kRun;
    }
    // Values the parser accepted but the converters refuse (a method or raw spec name) are
    // command-line errors too: exit status 2.
    try {
      zoom_options.layout = *sv::viewer::parse_layout(layout);
      if (!method.empty()) zoom_options.methods[0] = sv::viewer::parse_view_method(method);
      if (!methods.empty()) {
        const std::vector<std::string> names = split_commas(methods);
        if (names.size() > zoom_options.methods.size()) {
          std::fprintf(stderr, "splineview: error: --methods takes at most 4 methods, got %zu\n",
                       names.size());
          return 2;
        }
        for (std::size_t i = 0; i < names.size(); ++i)
          zoom_options.methods[i] = sv::viewer::parse_view_method(names[i]);
      }
      if (zoom > 0) zoom_options.zoom = zoom;
      if (!center.empty()) {
        double x = 0, y = 0;
        char extra = 0;
        if (std::sscanf(center.c_str(), "%lf,%lf%c", &x, &y, &extra) != 2) {
          std::fprintf(stderr, "splineview: error: --center must be X,Y, got %s\n", center.c_str());
          return 2;
        }
        zoom_options.center = glm::dvec2(x, y);
      }
      for (const std::string& probe : probes) {
        double x = 0, y = 0;
        char extra = 0;
        if (std::sscanf(probe.c_str(), "%lf,%lf%c", &x, &y, &extra) != 2 || !std::isfinite(x) ||
            !std::isfinite(y)) {
          std::fprintf(stderr, "splineview: error: --probe must be X,Y, got %s\n", probe.c_str());
          return 2;
        }
        zoom_options.probes.emplace_back(x, y);
      }
      zoom_options.window = window_width;
      zoom_options.level = window_level;
      if (!parse_size(size, &options.width, &options.height)) {
        std::fprintf(stderr, "splineview: error: --size must be WxH with 64..16384 each, got %s\n",
                     size.c_str());
        return 2;
      }
      if ((options.headless || options.measure_frames > 0) && options.screenshot.empty()) {
        std::fprintf(stderr, "splineview: error: --headless and --measure need --screenshot\n");
        return 2;
      }
      if (!options.report.empty() && options.screenshot.empty()) {
        std::fprintf(stderr, "splineview: error: --report needs --screenshot\n");
        return 2;
      }
      // Without --mode the file's content picks the mode (a video, a 2-D image, a volume).
      if (app.count("--mode") == 0 && image == sv::viewer::kZonePlateName) mode = "zoom";
      if (app.count("--mode") == 0 && image == sv::viewer::kMarschnerLobbName) mode = "volume";
      if (app.count("--mode") == 0 && !image.empty() && image != sv::viewer::kZonePlateName &&
          image != sv::viewer::kMarschnerLobbName) {
        std::optional<sv::RawSpec> spec;
        if (!raw.empty()) spec = sv::parse_raw_spec(raw);
        try {
          mode = sv::viewer::choose_mode(image, spec).mode;
        } catch (const sv::Error& e) {
          std::fprintf(stderr, "splineview: error: %s\n", e.what());
          return 1;
        }
      }
      // --quantity: one name for all views, or one per view; parsed for the mode's rank.
      const auto quantities = [&quantity](std::size_t rank) {
        std::array<std::optional<sv::gl::Quantity>, 4> q;
        if (quantity.empty()) return q;
        const std::vector<std::string> names = split_commas(quantity);
        if (names.size() > q.size())
          throw sv::Error("--quantity takes at most 4 names, got " + std::to_string(names.size()));
        for (std::size_t i = 0; i < q.size(); ++i)
          if (names.size() == 1 || i < names.size())
            q[i] = sv::gl::parse_quantity(names[names.size() == 1 ? 0 : i], rank);
        return q;
      };
      if (mode == "zoom") zoom_options.quantities = quantities(2);
      zoom_options.quantity_range = quantity_range;
      if (!std::isfinite(lambda)) throw sv::Error("--lambda must be finite");
      zoom_options.lambda = lambda;
      if (!(sigma > 0 && sigma <= 64))
        throw sv::Error("--sigma must be in (0, 64] samples, got " + std::to_string(sigma));
      zoom_options.sigma = sigma;
      zoom_options.image = mode == "zoom" ? image : std::string();
      zoom_options.accuracy = !no_accuracy;
      if (!reference.empty()) zoom_options.reference = sv::viewer::parse_reference(reference);
      zoom_options.strict = !options.screenshot.empty();
      options.modes.push_back({"zoom", "Zoom", [zoom_options](sv::viewer::MethodPass& pass) {
                                 return std::make_unique<sv::viewer::ZoomMode>(zoom_options, pass);
                               }});
      sv::viewer::RotateOptions rotate_options;
      if (mode == "rotate") rotate_options.image = image;
      rotate_options.step_deg = step_angle;
      rotate_options.steps = steps;
      rotate_options.cuda_prefilter = !cpu_prefilter;
      rotate_options.window = window_width;
      rotate_options.level = window_level;
      rotate_options.probes = zoom_options.probes;
      if (!methods.empty() || !method.empty()) {
        rotate_options.methods.clear();
        for (const std::string& name :
             methods.empty() ? std::vector<std::string>{method} : split_commas(methods)) {
          // The GRBF is a zoom and volume method: the rotation mode keeps its own for it.
          if (mode != "rotate" && sv::viewer::parse_view_method(name) == sv::gl::Fetch::Grbf)
            continue;
          rotate_options.methods.push_back(sv::viewer::parse_method(name));
        }
        if (rotate_options.methods.empty())
          rotate_options.methods = sv::viewer::RotateOptions{}.methods;
      }
      options.modes.push_back(
          {"rotate", "Rotation", [rotate_options](sv::viewer::MethodPass& pass) {
             return std::make_unique<sv::viewer::RotateMode>(rotate_options, pass);
           }});
      sv::viewer::VolumeOptions volume_options;
      if (mode == "volume") volume_options.path = image;
      if (!raw.empty()) volume_options.raw = sv::parse_raw_spec(raw);
      if (!method.empty()) volume_options.method = sv::viewer::parse_view_method(method);
      volume_options.sigma = sigma;
      if (!methods.empty()) volume_options.methods = zoom_options.methods;  // plane order
      volume_options.window = window_width;
      volume_options.level = window_level;
      volume_options.accuracy = !no_accuracy;
      volume_options.heat_map = zoom_options.heat_map;
      volume_options.reference = zoom_options.reference;
      if (mode == "volume") volume_options.quantities = quantities(3);
      volume_options.lambda = lambda;
      volume_options.quantity_range = quantity_range;
      volume_options.texture_budget =
          static_cast<std::size_t>(texture_budget_mib * 1024.0 * 1024.0);
      if (detail_budget_mib >= 0)
        volume_options.detail_budget =
            static_cast<std::size_t>(detail_budget_mib * 1024.0 * 1024.0);
      if (zoom > 0) volume_options.zoom = zoom;
      if (!crosshair.empty()) {
        double i = 0, j = 0, k = 0;
        char extra = 0;
        if (std::sscanf(crosshair.c_str(), "%lf,%lf,%lf%c", &i, &j, &k, &extra) != 3) {
          std::fprintf(stderr, "splineview: error: --crosshair must be I,J,K, got %s\n",
                       crosshair.c_str());
          return 2;
        }
        volume_options.crosshair = glm::dvec3(k, j, i);
      }
      if (!view3d.empty()) {
        volume_options.view3d.active = true;
        volume_options.view3d.mode = sv::viewer::parse_ray_mode(view3d);
      }
      if (!view3d_methods.empty()) {
        volume_options.view3d.methods.clear();
        for (const std::string& name : split_commas(view3d_methods)) {
          const sv::gl::Fetch f = sv::viewer::parse_method(name);
          if (!sv::viewer::is_ray_method(f)) {
            std::fprintf(stderr,
                         "splineview: error: --view3d-methods takes precise, otf, linear or "
                         "cubic-unfiltered, got %s\n",
                         name.c_str());
            return 2;
          }
          volume_options.view3d.methods.push_back(f);
        }
      }
      if (!view3d_angles.empty()) {
        double yaw = 0, pitch = 0;
        char extra = 0;
        if (std::sscanf(view3d_angles.c_str(), "%lf,%lf%c", &yaw, &pitch, &extra) != 2 ||
            !std::isfinite(yaw) || !std::isfinite(pitch)) {
          std::fprintf(stderr, "splineview: error: --view3d-angles must be YAW,PITCH, got %s\n",
                       view3d_angles.c_str());
          return 2;
        }
        volume_options.view3d.yaw_deg = yaw;
        volume_options.view3d.pitch_deg = pitch;
      }
      volume_options.view3d.iso = iso;
      volume_options.view3d.opacity = opacity;
      if (ray_step) volume_options.view3d.step = *ray_step;
      volume_options.view3d.dvr_shade = dvr_shade;
      if (!tf_preset.empty()) {
        (void)sv::viewer::make_transfer_function(tf_preset, 0.0, 1.0);  // refuses unknown names
        volume_options.view3d.tf_preset = tf_preset;
      }
      volume_options.view3d.accuracy = !no_accuracy;
      volume_options.view3d.truth =
          volume_options.reference.kind == sv::viewer::ReferenceKind::Truth;
      options.modes.push_back({"volume", "Volume", [volume_options](sv::viewer::MethodPass&) {
                                 return std::make_unique<sv::viewer::VolumeMode>(volume_options);
                               }});
    } catch (const sv::Error& e) {
      std::fprintf(stderr, "splineview: error: %s\n", e.what());
      return 2;
    }
    try {
      sv::viewer::VideoOptions video_options;
      if (mode == "video") video_options.source = image;
      if (!method.empty() &&
          (mode == "video" || sv::viewer::parse_view_method(method) != sv::gl::Fetch::Grbf))
        video_options.method = sv::viewer::parse_method(method);
      video_options.compare = sv::viewer::parse_method(compare);
      if (mode == "video" && app.count("--layout") > 0)
        video_options.layout = *sv::viewer::parse_layout(layout);
      video_options.path =
          video_path == "tiles" ? sv::viewer::VideoPath::Tiles : sv::viewer::VideoPath::Shader;
      video_options.factor = factor;
      if (!decode_size.empty() &&
          !parse_size(decode_size, &video_options.max_width, &video_options.max_height)) {
        std::fprintf(stderr,
                     "splineview: error: --decode-size must be WxH with 64..16384 each, got %s\n",
                     decode_size.c_str());
        return 2;
      }
      video_options.paused = paused;
      video_options.loop = !no_loop;
      video_options.window = window_width;
      video_options.level = window_level;
      video_options.probes = zoom_options.probes;
      options.modes.push_back({"video", "Video", [video_options](sv::viewer::MethodPass& pass) {
                                 return std::make_unique<sv::viewer::VideoMode>(video_options,
                                                                                pass);
                               }});
    } catch (const sv::Error& e) {
      std::fprintf(stderr, "splineview: error: %s\n", e.what());
      return 2;
    }
    try {
      sv::viewer::DeformOptions deform_options;
      if (mode == "deform") deform_options.path = image;
      deform_options.preset = sv::viewer::parse_ffd_preset(preset);
      deform_options.amplitude = amplitude;
      deform_options.spacing = spacing;
      deform_options.grid = grid_path;
      if (!grid_path.empty() && spacing.empty()) {
        std::fprintf(stderr,
                     "splineview: error: --grid needs --spacing (the control-point "
                     "spacing the grid was made for)\n");
        return 2;
      }
      if (!spacing.empty())
        (void)sv::viewer::parse_spacing(spacing, 2 + (spacing.find('x') != spacing.rfind('x')));
      if (!kernels.empty()) {
        deform_options.kernels = {false, false, false};
        for (const std::string& k : split_commas(kernels))
          deform_options.kernels[static_cast<std::size_t>(sv::viewer::parse_ffd_gl_kernel(k))] =
              true;
      }
      deform_options.heat_map = zoom_options.heat_map;
      if (!overlays.empty()) {
        deform_options.grid_lines = deform_options.detj = false;
        for (const std::string& o : split_commas(overlays)) {
          if (o == "grid") {
            deform_options.grid_lines = true;
          } else if (o == "detj") {
            deform_options.detj = true;
          } else if (o == "heat") {
            deform_options.heat_map = true;
          } else if (o != "none") {
            std::fprintf(stderr,
                         "splineview: error: --overlays takes grid, detj, heat or none, got %s\n",
                         o.c_str());
            return 2;
          }
        }
      }
      if (heat_top) deform_options.heat_top = *heat_top;
      deform_options.slice = slice;
      deform_options.accuracy = !no_accuracy;
      if (zoom > 0) deform_options.zoom = zoom;
      deform_options.strict = !options.screenshot.empty();
      options.modes.push_back({"deform", "Deform", [deform_options](sv::viewer::MethodPass&) {
                                 return std::make_unique<sv::viewer::DeformMode>(deform_options);
                               }});
    } catch (const sv::Error& e) {
      std::fprintf(stderr, "splineview: error: %s\n", e.what());
      return 2;
    }
    options.initial_mode = mode;
    *out = std::move(options);
    return kRun;
  }
}

// --batch FILE: parses every line first (a bad line runs nothing: exit 2), then runs them.
int run_batch(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "splineview: error: --batch %s: cannot open the file\n", path.c_str());
    return 2;
  }
  std::vector<sv::viewer::BatchJob> jobs;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string name = path + ":" + std::to_string(number);
    // Words as splinetool batch splits them (a POSIX shell's simple words, no expansions; an
    // unquoted # starts a comment; shell operators refused).
    std::vector<std::string> words;
    const std::string why = sv::split_command_words(line, words);
    if (!why.empty()) {
      std::fprintf(stderr, "splineview: error: %s: %s\n", name.c_str(), why.c_str());
      return 2;
    }
    if (words.empty()) continue;
    words.insert(words.begin(), "splineview");
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(w.data());
    sv::viewer::BatchJob job;
    job.name = name;
    std::string nested;
    const int status =
        parse_command_line(static_cast<int>(argv.size()), argv.data(), &job.options, &nested);
    if (status != kRun && status != 0) {
      std::fprintf(stderr, "splineview: error: %s: the line's options are refused (above)\n",
                   name.c_str());
      return status;
    }
    if (status != kRun || !nested.empty() || job.options.screenshot.empty()) {
      std::fprintf(stderr,
                   "splineview: error: %s: a batch line must describe one screenshot run "
                   "(--screenshot, no --batch, --help or --version)\n",
                   name.c_str());
      return 2;
    }
    job.options.headless = true;
    jobs.push_back(std::move(job));
  }
  if (jobs.empty()) {
    std::fprintf(stderr, "splineview: error: --batch %s: no runs in the file\n", path.c_str());
    return 2;
  }
  return sv::viewer::run_viewer_batch(jobs);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    sv::viewer::ViewerOptions options;
    std::string batch;
    const int status = parse_command_line(argc, argv, &options, &batch);
    if (status != kRun) return status;
    if (!batch.empty()) return run_batch(batch);
    return sv::viewer::run_viewer(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "splineview: error: %s\n", e.what());
    return 1;
  } catch (...) {
    std::fprintf(stderr, "splineview: error: unknown exception\n");
    return 1;
  }
}
