// splinetool: the command-line face of splineview (prefilter, point sampling, zoom/rotation,
// error metrics, device info, video upscaling). This file only declares the command line (CLI11)
// and turns every failure into one line "splinetool: <message>" on stderr and a non-zero exit
// status: 0 success (and --help), 1 the command failed, 2 the command line is wrong.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "backend.h"
#include "batch.h"
#include "commands.h"
#include "ffd_commands.h"
#include "filter_commands.h"
#include "grbf_commands.h"
#include "spline_commands.h"
#include "splineview/cuda_device.h"
#include "splineview/error.h"
#include "splineview/input.h"
#include "splineview/io.h"
#include "splineview/text.h"
#include "splineview/version.h"
#include "splineview/video.h"

namespace {

using splinetool::CommonArgs;

// --- option checks ------------------------------------------------------------------------------
// CLI11 runs these on the text before converting it, so a bad value never reaches CLI11's own
// messages (which echo the text in full): ours name the option (CLI11 puts it first), show
// numbers formatted (%.6g) and any other text shortened and with control bytes escaped.

// The whole text as a double (strtod: also "inf", "nan", hex floats), or nothing.
std::optional<double> parse_number(const std::string& text) {
  if (text.empty() || text.size() > 4096) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return v;
}

// What a bad value looked like, for a message: a number formatted, other text shortened.
std::string shown_value(const std::string& text) {
  if (const std::optional<double> v = parse_number(text)) return sv::format_number(*v);
  return "'" + sv::short_number(text) + "'";
}

// A real number in [lo, hi] (lo excluded when lo_open); finite unless `allow_inf`.
CLI::Validator number_in(double lo, bool lo_open, double hi, const std::string& range) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const std::optional<double> v = parse_number(text);
        if (!v) return "expected a number " + range + ", got " + shown_value(text);
        const bool ok = std::isfinite(*v) && (lo_open ? *v > lo : *v >= lo) && *v <= hi;
        if (ok) return {};
        return "must be a number " + range + ", got " + sv::format_number(*v);
      },
      "", "");
}

// An integer in [lo, hi] (written as digits, optionally signed).
CLI::Validator integer_in(long long lo, long long hi, const std::string& range) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        std::size_t i = (!text.empty() && (text[0] == '-' || text[0] == '+')) ? 1 : 0;
        bool digits = i < text.size();
        for (std::size_t k = i; k < text.size(); ++k)
          if (text[k] < '0' || text[k] > '9') digits = false;
        if (!digits)
          return "expected an integer " + range + ", got '" + sv::short_number(text) + "'";
        const std::optional<double> v = parse_number(text);
        if (v && *v >= static_cast<double>(lo) && *v <= static_cast<double>(hi)) return {};
        return "must be an integer " + range + ", got " + sv::short_number(text);
      },
      "", "");
}

// One of `names`.
CLI::Validator one_of(const std::vector<std::string>& names) {
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i)
    list += (i == 0 ? "" : (i + 1 == names.size() ? " or " : ", ")) + names[i];
  return CLI::Validator(
      [names, list](std::string& text) -> std::string {
        for (const std::string& n : names)
          if (text == n) return {};
        return "expected " + list + ", got '" + sv::printable(text, 40) + "'";
      },
      "", "");
}

// A comma-separated list of 1..3 numbers (array order), each accepted by `one` (a validator's
// function: "" when fine, else why); parsed by parse_list after CLI11 has checked it.
CLI::Validator list_of(const CLI::Validator& one, const std::string& what) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        if (text.empty() || text.size() > 4096) return "expected " + what;
        std::size_t count = 0, begin = 0;
        while (true) {
          const std::size_t comma = text.find(',', begin);
          std::string item =
              text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
          if (++count > 3) return "expected " + what + " (at most 3 values)";
          const std::string why = one(item);
          if (!why.empty()) return why;
          if (comma == std::string::npos) break;
          begin = comma + 1;
        }
        return {};
      },
      "", "");
}

std::vector<double> parse_list(const std::string& text) {
  std::vector<double> out;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = text.find(',', begin);
    out.push_back(*parse_number(
        text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin)));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  return out;
}

const char* const kBoundaryHelp =
    "extension beyond the edges: reflect (half-sample symmetric), mirror (whole-sample "
    "symmetric) or periodic";
const char* const kModeHelp =
    "scipy.ndimage's boundary mode, with its semantics (docs/ACCURACY.md, \"Boundary modes and "
    "scipy\"): reflect = grid-mirror, mirror, grid-wrap (= periodic), wrap (period N-1), "
    "nearest, constant or grid-constant (with --cval); CPU only except reflect, mirror and "
    "grid-wrap";
const char* const kPrecisionHelp =
    "single: float samples and coefficients (the sampler accumulates in double); double: all "
    "double";
const char* const kPrecisionHelpGpu =
    "single: float samples and coefficients (the CPU sampler accumulates in double); double: "
    "all double. Default: double on cpu, single on gl and cuda (float textures and kernels; "
    "double is refused there)";

void add_common(CLI::App* sub, CommonArgs& common, bool threads = true) {
  sub->add_option("--backend", common.backend,
                  "compute backend: cpu, gl (GLSL fetches in a headless EGL context; "
                  "prefiltering on the CPU in float) or cuda (prefilter and evaluation kernels "
                  "in float; needs a CUDA device)")
      ->type_name("NAME")
      ->check(one_of(splinetool::backend_names()))
      ->capture_default_str();
  sub->add_flag("--json", common.json, "print a JSON object on stdout");
  sub->add_flag("--allow-special-files", common.allow_special,
                "also read inputs that are pipes or devices (e.g. <(zcat vol.nii.gz)), each only "
                "as far as its header claims; by default only regular files are read");
  sub->add_option("--volume", common.volume,
                  "which volume of a 4-D input (NIfTI) to read, from 0; without it a 4-D input "
                  "is refused with its volume count")
      ->type_name("INDEX")
      ->check(integer_in(0, 2147483647, "in 0..2147483647"));
  if (threads)
    sub->add_option("--threads", common.threads, "CPU threads, 0..4096 (0 = all hardware threads)")
        ->type_name("N")
        ->check(integer_in(0, 4096, "in 0..4096"))
        ->capture_default_str();
}

// --allow-nonfinite: the one switch of the non-finite policy (README: "Non-finite data").
void add_allow_nonfinite(CLI::App* sub, CommonArgs& common, const char* what) {
  sub->add_flag("--allow-nonfinite", common.allow_nonfinite, what);
}

// --boundary (our three exact modes, the GPU's too), --mode (every scipy.ndimage mode, by
// scipy's name; excludes --boundary) and --cval.
template <class Args>
void add_boundary(CLI::App* sub, Args& args) {
  CLI::Option* b = sub->add_option("--boundary", args.boundary, kBoundaryHelp)
                       ->type_name("MODE")
                       ->check(one_of({"reflect", "mirror", "periodic"}))
                       ->capture_default_str();
  CLI::Option* m = sub->add_option("--mode", args.mode, kModeHelp)
                       ->type_name("SCIPY_MODE")
                       ->check(one_of({"reflect", "grid-mirror", "mirror", "grid-wrap", "wrap",
                                       "nearest", "constant", "grid-constant"}));
  m->excludes(b);
  sub->add_option("--cval", args.cval, "the value outside for --mode constant and grid-constant")
      ->type_name("V")
      ->check(number_in(-HUGE_VAL, false, HUGE_VAL, "(a finite number)"))
      ->capture_default_str();
}

// --out-of-core (with `help`) and --memory-budget MIB, for prefilter and resample.
void add_out_of_core(CLI::App* sub, bool& out_of_core, std::size_t& budget_mib,
                     const std::string& help) {
  sub->add_flag("--out-of-core", out_of_core, help);
  sub->add_option("--memory-budget", budget_mib,
                  "with --out-of-core: device memory to use, in MiB (0: 80% of the free memory)")
      ->type_name("MIB");
}

void add_precision(CLI::App* sub, std::string& precision) {
  CLI::Option* o = sub->add_option("--precision", precision,
                                   precision.empty() ? kPrecisionHelpGpu : kPrecisionHelp)
                       ->type_name("P")
                       ->check(one_of({"single", "double"}));
  if (!precision.empty()) o->capture_default_str();
}

// --fetch and --format: how the gl and cuda backends evaluate (refused on cpu; each backend
// checks that the name is one of its own, after parsing).
void add_gpu_options(CLI::App* sub, CommonArgs& common, const char* fetch_help) {
  sub->add_option("--fetch", common.fetch, fetch_help)
      ->type_name("F")
      ->check(one_of(splinetool::all_fetch_names()));
  sub->add_option("--format", common.format,
                  "gl only: texture format r32f (default), r16f (half float) or r16 (16-bit "
                  "unsigned normalised: data in [0, 1] only, so no prefiltered flavour)")
      ->type_name("FMT")
      ->check(one_of(splinetool::format_names()));
}

void add_degree(CLI::App* sub, int& degree) {
  sub->add_option("--degree", degree, "B-spline degree 0..7 (0 nearest, 1 linear)")
      ->type_name("N")
      ->check(integer_in(0, 7, "in 0..7"))
      ->capture_default_str();
}

// --raw SPEC, checked while parsing so that a malformed spec is a command-line error (exit 2).
void add_raw(CLI::App* sub, std::string& raw) {
  sub->add_option("--raw", raw,
                  "read inputs whose extension names no format as headerless data laid out as "
                  "DIMS:TYPE[:le|:be][:spacing=AxBxC][:offset=BYTES], e.g. 64x256x256:u16 (dims in "
                  "array order z,y,x; TYPE u8, u16, i16, f32 or f64; little endian by default)")
      ->type_name("SPEC")
      ->check(
          [](const std::string& spec) -> std::string {
            try {
              sv::parse_raw_spec(spec);
              return {};
            } catch (const sv::Error& e) {
              return sv::printable(e.what(), 300);
            }
          },
          "SPEC");
}

const char* const kPeakHelp =
    "peak value for the PSNR (default: the full scale of the inputs' stored type: 255 for 8-bit, "
    "65535 for 16-bit data; 1 for floating-point data)";
const char* const kChannelsHelp =
    "the last axis of a .npy (or --raw) input is channels (1..4); colour images imply it";

// The last guard of every message: one line (newlines from CLI11's multi-line texts become
// spaces), no byte a terminal could act on (other control bytes as \xNN; file names are escaped
// where they are quoted, this catches anything else), and no run of more than 24 digits echoed in
// full (numbers are formatted where they are checked; this catches anything else).
std::string one_line(const std::string& s) {
  std::string out;
  std::size_t digits = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const unsigned char ch = static_cast<unsigned char>(s[i]);
    if (ch >= '0' && ch <= '9') {
      std::size_t end = i;
      while (end < s.size() && s[end] >= '0' && s[end] <= '9') ++end;
      digits = end - i;
      if (digits > 24) {
        out += s.substr(i, 12) + "...(" + std::to_string(digits) + " digits)";
      } else {
        out += s.substr(i, digits);
      }
      i = end - 1;
      continue;
    }
    if (ch == '\n' || ch == '\r') {
      out += ' ';
    } else if (ch < 0x20 || ch == 0x7f) {
      static const char* const hex = "0123456789ABCDEF";
      out += "\\x";
      out += hex[ch >> 4];
      out += hex[ch & 15];
    } else {
      out += static_cast<char>(ch);
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// --version: the version and commit, then what this build can use (no device is probed: that is
// `splinetool info`).
std::string version_text() {
  std::string v = std::string("splinetool ") + sv::version() + " (splineview, commit " +
                  sv::git_commit() + ")\n";
  v += std::string("CUDA: ") +
       (sv::cuda_compiled() ? "compiled in (--backend cuda; `splinetool info` lists the devices)"
                            : "not compiled in") +
       "\n";
#ifdef SPLINEVIEW_HAVE_GL
  v += "GL backend: compiled in (--backend gl; `splinetool info` tries a context)\n";
#else
  v += "GL backend: not compiled in\n";
#endif
  v += std::string("FFmpeg: ") + (sv::video::video_compiled()
                                      ? "compiled in (" + sv::video::ffmpeg_versions() + ")"
                                      : std::string("not compiled in (no upscale-video)"));
  return v;
}

// One command, parsed by a fresh CLI11 app as a separate process would parse it, run and turned
// into an exit status; every failure is the one line "splinetool: <where><message>" on stderr.
// main() runs it once; `batch` runs it once a line (`where` then names the batch file and the
// line, and `in_batch` refuses a nested batch). Nothing it sets outlives it: the argument
// structs and the parser are its own, and reset_command_state() puts back the process state a
// command may change.
int run_command(const std::vector<std::string>& args, const std::string& where, bool in_batch) {
  splinetool::reset_command_state();
  std::vector<const char*> argv;
  argv.reserve(args.size() + 1);
  for (const std::string& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  const int argc = static_cast<int>(args.size());

  CLI::App app{
      "splinetool: exact B-spline interpolation on the command line (splineview).\n"
      "Arrays use NumPy's axis order (z, y, x), x fastest; a trailing channel axis only with\n"
      "--channels (colour images imply it). Position k is the centre of sample k.",
      "splinetool"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_text,
                       "print the version, the git commit and whether CUDA, the GL backend and "
                       "FFmpeg are compiled in, then exit");
  // Subcommands inherit the footer set before they are added.
  const std::string exit_note =
      "Exit status: 0 success, 1 the command failed, 2 bad command line. Errors are one line\n"
      "'splinetool: <message>' on stderr; on failure OUT is neither created nor changed.";
  app.footer(exit_note);

  splinetool::PrefilterArgs pre;
  CLI::App* prefilter =
      app.add_subcommand("prefilter",
                         "turn samples into B-spline coefficients (OUT: .npy or .nrrd, float32 for "
                         "single, float64 for double)");
  prefilter->add_option("IN", pre.in, "samples: .npy, .nrrd, .nii, .nii.gz, .png, .jpg or --raw")
      ->required();
  prefilter
      ->add_option("OUT", pre.out,
                   "coefficients: .npy, .nrrd/.nhdr, .nii/.nii.gz or .tif/.tiff (NRRD and NIfTI "
                   "keep the input's geometry, TIFF its spacing)")
      ->required();
  add_degree(prefilter, pre.degree);
  add_boundary(prefilter, pre);
  add_precision(prefilter, pre.precision);
  prefilter->add_flag("--channels", pre.channels, kChannelsHelp);
  add_raw(prefilter, pre.common.raw);
  add_allow_nonfinite(prefilter, pre.common,
                      "prefilter data holding NaN or inf instead of refusing it (the recursion "
                      "spreads each one along its lines: those results are NaN)");
  add_out_of_core(prefilter, pre.out_of_core, pre.memory_budget_mib,
                  "with --backend cuda: filter in slabs along the slowest axis, each with a halo "
                  "from the derived bound, so the array need not fit on the GPU (progress on "
                  "stderr)");
  add_common(prefilter, pre.common);

  splinetool::SampleArgs smp;
  CLI::App* sample = app.add_subcommand(
      "sample",
      "evaluate the interpolating spline at positions (OUT: float64 .npy of shape "
      "(M,) or (M, C) with a channel axis)");
  sample->add_option("IN", smp.in, "samples (prefiltered here unless --no-prefilter)")->required();
  sample
      ->add_option("COORDS", smp.coords,
                   "float32/float64 .npy of shape (M, d), d = spatial rank of IN (1-D: also "
                   "(M,)); one position per row in array axis order, in sample units")
      ->required();
  sample->add_option("OUT", smp.out, "values: .npy")->required();
  CLI::Option* sample_degree = sample
                                   ->add_option("--degree", smp.degree,
                                                "B-spline degree 0..7 (0 nearest, 1 linear); on "
                                                "gl and cuda the fetch decides (3 for the cubic "
                                                "flavours)")
                                   ->type_name("N")
                                   ->check(integer_in(0, 7, "in 0..7"))
                                   ->capture_default_str();
  add_boundary(sample, smp);
  sample->add_flag("--no-prefilter", smp.no_prefilter,
                   "use IN as coefficients directly (e.g. the unfiltered cubic B-spline)");
  add_precision(sample, smp.precision);
  sample->add_flag("--channels", smp.channels, kChannelsHelp);
  sample
      ->add_option("--derivative", smp.derivative,
                   "evaluate the first derivative along this array axis instead")
      ->type_name("AXIS")
      ->check(integer_in(0, 2, "0..2 (an array axis)"));
  add_gpu_options(sample, smp.common,
                  "gl: nearest, linear (hardware filtering), cubic-unfiltered (cubic B-spline on "
                  "the raw samples), or the prefiltered cubic as lut (Sigg-Hadwiger lookup "
                  "table), otf (weights computed on the fly; default) or precise (16 point "
                  "fetches, fma blends; 64 in 3-D). cuda: nearest, linear (texture hardware), "
                  "cubic (hardware-filtered fetches, 8-bit weights) or precise (point taps, fma; "
                  "default)");
  add_raw(sample, smp.common.raw);
  add_allow_nonfinite(sample, smp.common,
                      "evaluate data holding NaN or inf instead of refusing it (prefiltering "
                      "spreads each one along its lines), and write NaN for COORDS rows with a "
                      "non-finite coordinate");
  add_common(sample, smp.common);
  splinetool::GrbfArgs smp_grbf;  // --method grbf (grbf_commands.cpp)
  splinetool::add_grbf_options(sample, smp_grbf, true);

  splinetool::ResampleArgs res;
  std::string res_zoom, res_shape, res_shift, res_axes, res_grid_mode;
  CLI::App* resample = app.add_subcommand(
      "resample",
      "zoom (any rank) or rotate about the centre (2-D) a whole array, optionally "
      "repeated (OUT: .npy, .png (8 bit, clamped) or .nrrd)");
  resample->add_option("IN", res.in, "samples: .npy, .nrrd, .nii, .nii.gz, .png, .jpg or --raw")
      ->required();
  resample
      ->add_option("OUT", res.out,
                   "result: .npy, .png, .nrrd/.nhdr, .nii/.nii.gz or .tif/.tiff (NRRD and NIfTI "
                   "keep the geometry, the grid scaled by --zoom)")
      ->required();
  CLI::Option* zoom =
      resample
          ->add_option("--zoom", res_zoom,
                       "zoom factor in (0, 10000], one for every axis or one per axis in array "
                       "order (F or F0,F1[,F2]; scipy.ndimage.zoom): output extent round(N * F) "
                       "per axis (halves to even, as scipy); each step's result at most 2^27 "
                       "values")
          ->type_name("F[,F..]")
          ->check(list_of(number_in(0, true, splinetool::kMaxZoom, "in (0, 10000]"),
                          "factors in (0, 10000] joined by commas"));
  CLI::Option* shape =
      resample
          ->add_option("--shape", res_shape,
                       "zoom to this output shape (spatial extents in array order, N0[,N1[,N2]]; "
                       "scipy.ndimage.zoom's output shape: the factors are out/in per axis)")
          ->type_name("N[,N..]")
          ->check(list_of(integer_in(1, 100000000, "in 1..100000000"),
                          "extents in 1..100000000 joined by commas"));
  CLI::Option* shift_opt =
      resample
          ->add_option("--shift", res_shift,
                       "shift by S samples, one for every axis or one per axis in array order "
                       "(scipy.ndimage.shift: output i takes the spline at i - S)")
          ->type_name("S[,S..]")
          ->check(list_of(number_in(-1e9, false, 1e9, "in [-1e9, 1e9]"),
                          "shifts in [-1e9, 1e9] joined by commas"));
  CLI::Option* grid_mode =
      resample
          ->add_option("--grid-mode", res_grid_mode,
                       "with --zoom or --shape: true (default) aligns pixel areas, output i at "
                       "(i + 1/2) in/out - 1/2 (scipy grid_mode=True); false aligns the corner "
                       "samples, output i at i (in - 1)/(out - 1) (scipy's default)")
          ->type_name("true|false")
          ->check(one_of({"true", "false"}));
  CLI::Option* rotate =
      resample
          ->add_option("--rotate", res.rotate,
                       "rotate by DEG degrees per step (counter-clockwise as displayed; any "
                       "finite angle, reduced modulo 360; scipy.ndimage.rotate's matrix)")
          ->type_name("DEG")
          ->check(number_in(-HUGE_VAL, false, HUGE_VAL, "(a finite angle in degrees)"));
  CLI::Option* axes =
      resample
          ->add_option("--axes", res_axes,
                       "with --rotate: the plane, two array axes I,J (default 1,0: the first "
                       "two; negative counts from the end; order does not matter, as in scipy)")
          ->type_name("I,J")
          ->check(list_of(integer_in(-3, 2, "in -3..2"), "two axes joined by a comma"));
  resample->add_flag("--reshape", res.reshape,
                     "with --rotate: the output plane holds the whole rotated input (scipy's "
                     "reshape=True); without it the shape is kept");
  zoom->excludes(rotate);
  for (CLI::Option* a : {zoom, rotate, shape, shift_opt})
    for (CLI::Option* b : {zoom, rotate, shape, shift_opt})
      if (a != b) a->excludes(b);
  resample->add_option("--repeat", res.repeat, "K steps, each on the previous result")
      ->type_name("K")
      ->check(integer_in(1, 1000000, "in 1..1000000"))
      ->capture_default_str();
  CLI::Option* res_method = resample->add_option("--method", res.method, "interpolation method")
                                ->type_name("M")
                                ->check(one_of({"nearest", "linear", "cubic-unfiltered", "cubic",
                                                "quintic", "septic", "grbf"}))
                                ->capture_default_str();
  CLI::Option* res_degree =
      resample
          ->add_option("--degree", res.degree,
                       "the interpolating spline of degree N, 0..7 (scipy's order), instead of "
                       "--method (CPU only)")
          ->type_name("N")
          ->check(integer_in(0, 7, "in 0..7"));
  res_degree->excludes(res_method);
  resample->add_flag("--no-prefilter", res.no_prefilter,
                     "with --degree: IN is the coefficients (scipy's prefilter=False)");
  resample->add_flag("--point-sample", res.point_sample,
                     "--zoom below 1: sample the spline at the output positions (scipy.ndimage."
                     "zoom) instead of the anti-aliased least-squares reduction, the CPU's "
                     "default");
  add_boundary(resample, res);
  add_precision(resample, res.precision);
  resample->add_flag("--channels", res.channels, kChannelsHelp);
  resample
      ->add_option("--reference", res.reference,
                   "measure the result against this array (same shape)")
      ->type_name("IN2");
  resample->add_flag("--compare-original", res.compare_original,
                     "measure the result against the input (automatic when the total rotation "
                     "is a multiple of 360 degrees)");
  resample
      ->add_option("--disc", res.disc,
                   "2-D metrics only inside the centred disc of radius FRACTION * min(H, W) "
                   "(0 = whole image)")
      ->type_name("FRACTION")
      ->check(number_in(0, false, HUGE_VAL, ">= 0"))
      ->capture_default_str();
  CLI::Option* res_peak = resample->add_option("--peak", res.peak, kPeakHelp)
                              ->type_name("P")
                              ->check(number_in(0, true, HUGE_VAL, "> 0"));
  add_gpu_options(resample, res.common,
                  "gl: flavour of --method cubic: lut, otf (default) or precise; cuda: flavour of "
                  "--method cubic and cubic-unfiltered: cubic or precise (default). The other "
                  "methods map to their own fetch (quintic and septic are cpu only)");
  add_raw(resample, res.common.raw);
  add_allow_nonfinite(resample, res.common,
                      "resample data (and a --reference) holding NaN or inf instead of refusing "
                      "it (the prefiltering methods spread each one along its lines; a .png "
                      "writes NaN as 0)");
  add_out_of_core(resample, res.out_of_core, res.memory_budget_mib,
                  "with --backend cuda and --zoom, --shape, --shift or --rotate (any --axes, "
                  "--reshape): resample in slabs along the slowest axis, each from its input "
                  "window with the derived halo, so the data need not fit on the GPU (every "
                  "mode and --degree as on the CPU; one channel, once; progress on stderr)");
  add_common(resample, res.common);
  splinetool::GrbfArgs res_grbf;  // --method grbf (grbf_commands.cpp)
  splinetool::add_grbf_options(resample, res_grbf, false);

  splinetool::CompareArgs cmp;
  CLI::App* compare = app.add_subcommand(
      "compare", "error metrics between two arrays of the same shape (max_abs, rms, sse, psnr)");
  compare->add_option("A", cmp.a, "first array")->required();
  compare->add_option("B", cmp.b, "second array")->required();
  CLI::Option* disc = compare
                          ->add_option("--disc", cmp.disc,
                                       "2-D only: compare inside the centred disc of radius "
                                       "FRACTION * min(H, W) (default: all)")
                          ->type_name("FRACTION")
                          ->check(number_in(0, true, HUGE_VAL, "> 0"));
  CLI::Option* cmp_peak = compare->add_option("--peak", cmp.peak, kPeakHelp)
                              ->type_name("P")
                              ->check(number_in(0, true, HUGE_VAL, "> 0"));
  compare->add_flag("--channels", cmp.channels, kChannelsHelp);
  add_raw(compare, cmp.common.raw);
  add_allow_nonfinite(compare, cmp.common,
                      "measure arrays holding NaN or inf instead of refusing them: the figures "
                      "cover the points where both are finite, and the NaN/inf of each side and "
                      "the mismatches are counted apart");
  add_common(compare, cmp.common, false);

  splinetool::InfoArgs inf;
  CLI::App* info = app.add_subcommand(
      "info",
      "without FILE: version, backends, whether CUDA was compiled in and which devices it sees, "
      "and whether a headless OpenGL context works (with its renderer); with FILE: its shape, "
      "type, spacing, index-to-world affine (RAS+ mm) and orientation code");
  info->add_option("FILE", inf.file,
                   "an image, volume or array file to describe (any format the tool reads)");
  info->add_flag("--channels", inf.channels, kChannelsHelp);
  info->add_flag("--check-mapped", inf.check_mapped,
                 "also read FILE the way --out-of-core does (memory-mapped, where the format "
                 "allows) and fail (exit 1) unless that gives the loader's shape, dtype, geometry "
                 "and values exactly");
  add_raw(info, inf.common.raw);
  add_common(info, inf.common, false);
  splinetool::UpscaleVideoArgs upv;
  CLI::App* upscale_video = app.add_subcommand(
      "upscale-video",
      "upscale every frame of a video (FFmpeg decoders and encoders): same frames, frame rate "
      "and timestamps, audio copied unchanged");
  upscale_video->add_option("IN", upv.in, "video file (anything FFmpeg reads)")->required();
  upscale_video
      ->add_option("OUT", upv.out,
                   "video file: .mp4, .mkv, .mov (default codec libx264), .webm (libvpx-vp9), "
                   ".nut or .avi (ffv1)")
      ->required();
  upscale_video
      ->add_option(
          "--scale", upv.scale,
          "zoom factor, > 0 and <= 16 (output extent round(N * S) per axis; cuda: 2, 3 or 4)")
      ->type_name("S")
      ->required()
      ->check(
          [](const std::string& v) -> std::string {
            try {
              std::size_t used = 0;
              const double s = std::stod(v, &used);
              if (used == v.size() && s > 0 && s <= 16) return {};
            } catch (const std::exception&) {
            }
            return "must be a number in (0, 16], got '" + v + "'";
          },
          "S");
  upscale_video->add_option("--method", upv.method, "interpolation method")
      ->type_name("M")
      ->check(CLI::IsMember({"nearest", "linear", "cubic-unfiltered", "cubic"}))
      ->capture_default_str();
  upscale_video
      ->add_option("--backend", upv.backend,
                   "cpu (sv::zoom per frame) or cuda (sv::cuda::FrameUpscaler: integer factors "
                   "2..4, nearest, linear or cubic; needs a CUDA device)")
      ->type_name("NAME")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  upscale_video
      ->add_option("--codec", upv.codec,
                   "FFmpeg video encoder (e.g. libx264, libvpx-vp9, ffv1, mpeg4; default: by OUT's "
                   "extension)")
      ->type_name("NAME")
      ->check(
          [](const std::string& name) -> std::string {
            if (sv::video::has_video_encoder(name)) return {};
            return "this FFmpeg (" + sv::video::ffmpeg_versions() +
                   ") has no video encoder named '" + name + "'";
          },
          "NAME");
  upscale_video
      ->add_option("--crf", upv.crf,
                   "constant rate factor for encoders that have one (libx264 default 23, "
                   "libvpx-vp9 32)")
      ->type_name("N")
      ->check(CLI::Range(0, 63));
  upscale_video->add_option("--threads", upv.threads, "CPU threads of the cpu upscaler (0 = all)")
      ->type_name("N")
      ->capture_default_str();
  CLI::Option* no_audio =
      upscale_video->add_flag("--no-audio", upv.no_audio, "do not copy IN's audio");
  upscale_video
      ->add_flag("--allow-damaged", upv.allow_damaged,
                 "copy IN's audio even when it is truncated or damaged (the packets that are "
                 "there, said on stderr); without it such audio is an error")
      ->excludes(no_audio);
  upscale_video->add_flag("--quiet", upv.quiet, "no progress on stderr");
  upscale_video->add_flag("--json", upv.json, "print a JSON summary on stdout");
  // Deformation fields: ffd and warp (ffd_commands.cpp).
  splinetool::FfdCommands ffd_cmds;
  splinetool::add_ffd_commands(app, ffd_cmds);
  // Derivatives: derivative, gradient, gradient-magnitude, laplacian, hessian (filter_commands).
  splinetool::FilterCommands filter_cmds;
  splinetool::add_filter_commands(app, filter_cmds);
  // B-spline transforms: smooth, indirect, reduce, expand (spline_commands.cpp).
  splinetool::SplineCommands spline_cmds;
  splinetool::add_spline_commands(app, spline_cmds);
  // Many commands in one process (batch.cpp).
  splinetool::BatchArgs bat;
  CLI::App* batch = app.add_subcommand(
      "batch",
      "run many splinetool commands in this one process, one a line of FILE, each parsed and "
      "run exactly as a separate 'splinetool ...' (same outputs, same exit status): words split "
      "as a POSIX shell's simple words ('...', \"...\", backslash; no expansions, pipes or "
      "redirections), blank lines and '#' comments skipped; stops at the first failing line "
      "with its exit status (its error 'splinetool: batch FILE line N: ...'). A line may not "
      "run batch; --help and --version on a line print as they would alone");
  batch
      ->add_option("FILE", bat.file,
                   "the commands, without the word splinetool; - = standard "
                   "input (the commands' inputs then cannot be -)")
      ->required();
  batch->add_flag("--keep-going", bat.keep_going,
                  "run every line even after failures; exit 1 if any failed (each failure "
                  "reported with its line number, then a summary line)");
  batch
      ->add_option("--log", bat.log,
                   "write one JSON object a command to LOG: line, status, seconds, the offsets "
                   "where its output ends on stdout and stderr (regular files only, else null), "
                   "the resident memory at its start and its peak, and the largest peak of the "
                   "child processes so far, in KiB (null where unknown)")
      ->type_name("LOG");
  batch->footer(
      "Exit status: 0 every line succeeded; else the first failing line's (1 the command failed,\n"
      "2 its command line is wrong), or with --keep-going 1. A failing line's error is one line\n"
      "'splinetool: batch FILE line N: <message>' on stderr; FILE missing or unreadable: exit 1.");

  // Every example here runs as written from the source folder (tests/cli/test_hardening.py runs
  // them in a folder holding a copy of assets/).
  app.footer(
      "Examples (assets/ is the bundled data of the source folder):\n"
      "  splinetool prefilter assets/ascent.png coeffs.npy --degree 5\n"
      "  splinetool resample assets/ascent.png rotated.png --rotate 10 --repeat 36 "
      "--compare-original\n"
      "  splinetool compare assets/ascent.png rotated.png\n"
      "  splinetool resample assets/mri_t1_head.nrrd head_half.nrrd --zoom 0.5 --json\n"
      "Run 'splinetool COMMAND --help' for the options of a command.\n" +
      exit_note);

  try {
    app.parse(argc, argv.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    std::string command = "splinetool";
    for (const CLI::App* sub : app.get_subcommands()) command += " " + sub->get_name();
    std::fprintf(stderr, "splinetool: %s (see '%s --help')\n", one_line(where + e.what()).c_str(),
                 command.c_str());
    return 2;
  }

  try {
    // The input options of the command that was given (one subcommand per run).
    for (const splinetool::CommonArgs* c :
         {&pre.common, &smp.common, &res.common, &cmp.common, &inf.common})
      if (c->allow_special || c->volume >= 0) {
        sv::InputOptions o;
        o.allow_special = c->allow_special;
        o.volume = c->volume;
        sv::set_input_options(o);
      }
    if (batch->parsed()) {
      if (in_batch)
        throw splinetool::UsageError("batch: a line of a batch cannot run another batch");
      return splinetool::run_batch(bat, args.at(0),
                                   [](const std::vector<std::string>& line, const std::string& at) {
                                     return run_command(line, at, true);
                                   });
    }
    if (prefilter->parsed()) splinetool::run_prefilter(pre);
    if (sample->parsed()) {
      smp.degree_given = sample_degree->count() > 0;
      if (splinetool::grbf_requested(smp_grbf, smp_grbf.method, "sample"))
        splinetool::run_grbf_sample(smp, smp_grbf);
      else
        splinetool::run_sample(smp);
    }
    if (resample->parsed()) {
      res.has_zoom = zoom->count() > 0;
      res.has_rotate = rotate->count() > 0;
      res.has_shape = shape->count() > 0;
      res.has_shift = shift_opt->count() > 0;
      if (res.has_zoom) res.zoom = parse_list(res_zoom);
      if (res.has_shift) res.shift = parse_list(res_shift);
      if (res.has_shape)
        for (double v : parse_list(res_shape)) res.shape.push_back(static_cast<std::size_t>(v));
      if (axes->count() > 0) {
        for (double v : parse_list(res_axes)) res.axes.push_back(static_cast<int>(v));
        if (res.axes.size() != 2)
          throw splinetool::UsageError("resample: --axes takes two axes I,J");
      }
      if (grid_mode->count() > 0) {
        if (!res.has_zoom && !res.has_shape)
          throw splinetool::UsageError("resample: --grid-mode goes with --zoom or --shape");
        res.grid_mode = res_grid_mode == "true";
      }
      res.has_peak = res_peak->count() > 0;
      if (splinetool::grbf_requested(res_grbf, res.method, "resample"))
        splinetool::run_grbf_resample(res, res_grbf);
      else
        splinetool::run_resample(res);
    }
    if (compare->parsed()) {
      cmp.has_disc = disc->count() > 0;
      cmp.has_peak = cmp_peak->count() > 0;
      splinetool::run_compare(cmp);
    }
    if (info->parsed()) splinetool::run_info(inf);
    if (upscale_video->parsed()) splinetool::run_upscale_video(upv);
    splinetool::run_ffd_commands(ffd_cmds);
    splinetool::run_filter_commands(filter_cmds);
    splinetool::run_spline_commands(spline_cmds);
  } catch (const splinetool::UsageError& e) {
    std::string command = "splinetool";
    for (const CLI::App* sub : app.get_subcommands()) command += " " + sub->get_name();
    std::fprintf(stderr, "splinetool: %s (see '%s --help')\n", one_line(where + e.what()).c_str(),
                 command.c_str());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "splinetool: %sout of memory\n", one_line(where).c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "splinetool: %s\n", one_line(where + e.what()).c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_command(std::vector<std::string>(argv, argv + argc), "", false);
}
