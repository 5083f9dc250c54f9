// splinetool smooth, indirect, reduce and expand (spline_commands.h): load IN, check it, run the
// core's transform (or, with --backend cuda, sv::cuda's) in the chosen
// precision, write OUT through the core's savers (which replace files atomically; NRRD and NIfTI
// keep IN's geometry, moved to the new grid by reduce and expand), and report.
#include "spline_commands.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "splineview/bspline.h"
#include "splineview/cuda_bspline.h"
#include "splineview/cuda_memory.h"
#include "splineview/cuda_pyramid.h"
#include "splineview/error.h"
#include "splineview/finite.h"
#include "splineview/geometry.h"
#include "splineview/io.h"
#include "splineview/pyramid.h"
#include "splineview/smoothing.h"
#include "splineview/text.h"

namespace splinetool {
namespace {

using Json = nlohmann::json;

const std::vector<std::string> kOutputs{".npy",    ".nrrd", ".nhdr", ".nii",
                                        ".nii.gz", ".tif",  ".tiff"};

// A comma-separated list of 1..3 numbers, as typed for `option`.
std::vector<double> numbers(const std::string& text, const char* option, const char* command) {
  std::vector<double> out;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = text.find(',', begin);
    const std::string item =
        text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || !std::isfinite(v))
      throw UsageError(std::string(command) + ": " + option +
                       " expects numbers joined by commas, got '" + sv::printable(text, 40) + "'");
    out.push_back(v);
    if (out.size() > 3)
      throw UsageError(std::string(command) + ": " + option + " takes at most 3 values");
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  return out;
}

// One value per axis from a list of one (every axis) or `rank`.
std::vector<double> per_axis(const std::vector<double>& v, std::size_t rank, const char* option,
                             const char* command, const sv::ArrayD& a) {
  if (v.size() == 1) return std::vector<double>(rank, v[0]);
  if (v.size() == rank) return v;
  throw sv::Error(std::string(command) + ": " + option + " gives " + std::to_string(v.size()) +
                  " values for the " + std::to_string(rank) + "-D input (" +
                  sv::describe_shape(a.dims(), a.channels()) + "); give one, or one per axis");
}

void check_paths(const SplineArgs& args, const char* command) {
  const std::string e = extension(args.out);
  if (std::find(kOutputs.begin(), kOutputs.end(), e) == kOutputs.end())
    throw UsageError(std::string(command) + ": cannot write '" + shown(args.out) +
                     "': OUT must end in .npy, .nrrd, .nhdr, .nii, .nii.gz, .tif or .tiff (the "
                     "values are floating point)");
  struct stat si {};
  struct stat so {};
  if (stat(args.in.c_str(), &si) == 0 && stat(args.out.c_str(), &so) == 0 &&
      si.st_dev == so.st_dev && si.st_ino == so.st_ino)
    throw UsageError(std::string(command) + ": OUT '" + shown(args.out) +
                     "' is the same file as IN; write the result elsewhere");
  std::string why;  // without a device: stop before IN is read, as the other cuda commands do
  if (args.backend == "cuda" && !sv::cuda::available(&why))
    throw sv::Error("--backend cuda cannot run here: " + why + "; use --backend cpu");
}

sv::Loaded load(const SplineArgs& args, const char* command) {
  sv::Loaded in = sv::load_any(args.in, args.channels);
  const sv::NonFinite nf = sv::scan_nonfinite(in.array);
  if (nf.count)
    throw sv::Error(
        std::string(command) + ": IN '" + shown(args.in) +
        "': " + sv::describe_nonfinite(nf, in.array.dims(), in.array.channels(), in.channel_axis) +
        "; the transform would spread them over whole lines");
  return in;
}

std::vector<int> degrees(const SplineArgs& args, std::size_t rank, const char* command,
                         const sv::ArrayD& a) {
  std::vector<int> d;
  for (double v :
       per_axis(numbers(args.degree, "--degree", command), rank, "--degree", command, a)) {
    if (v != static_cast<int>(v) || v < 0 || v > sv::kMaxDegree)
      throw UsageError(std::string(command) +
                       ": --degree values must be whole numbers in 0..7, "
                       "got " +
                       sv::format_number(v));
    d.push_back(static_cast<int>(v));
  }
  return d;
}

template <class T>
sv::ArrayD in_precision(sv::ArrayD&& a, const std::function<void(sv::Array<T>&)>& fn) {
  if constexpr (std::is_same_v<T, double>) {
    fn(a);
    return std::move(a);
  } else {
    sv::Array<T> t = sv::Array<T>::from(a);
    a = sv::ArrayD();
    fn(t);
    return sv::ArrayD::from(t);
  }
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

Json base_json(const char* command, const SplineArgs& args, sv::Boundary b, const sv::ArrayD& in,
               const sv::ArrayD& out, double seconds) {
  return Json{{"command", command},
              {"backend", args.backend},
              {"boundary", sv::boundary_name(b)},
              {"mode", sv::boundary_scipy_name(b)},
              {"precision", args.precision},
              {"input_shape", in.dims()},
              {"shape", out.dims()},
              {"channels", out.channels()},
              {"seconds", seconds}};
}

void save(const SplineArgs& args, const sv::ArrayD& a, const sv::Loaded& in,
          const sv::Geometry& g) {
  sv::save_any(args.out, a, args.precision == "single" ? sv::DType::F32 : sv::DType::F64,
               in.channel_axis, g);
}

void run_smooth(const SplineArgs& args) {
  check_paths(args, "smooth");
  sv::Loaded in = load(args, "smooth");
  sv::SplineTransformOptions opt;
  opt.degrees = degrees(args, in.array.rank(), "smooth", in.array);
  opt.lambda = args.lambda;
  opt.boundary = sv::parse_boundary(args.mode);
  opt.threads = args.threads;
  for (int n : opt.degrees) sv::smoothing_poles(n, opt.lambda);  // refuses before any work
  const sv::ArrayD input_shape(in.array.dims(), in.array.channels());
  const auto t0 = std::chrono::steady_clock::now();
  const bool cuda = args.backend == "cuda";
  auto work = [&](auto& a) {
    if (cuda) {
      sv::cuda::direct_transform(a, opt);
      if (!args.coefficients) sv::cuda::indirect_transform(a, opt);
      return;
    }
    sv::direct_transform(a, opt);
    if (!args.coefficients) sv::indirect_transform(a, opt);
  };
  sv::ArrayD out = args.precision == "single"
                       ? in_precision<float>(std::move(in.array), [&](sv::ArrayF& a) { work(a); })
                       : in_precision<double>(std::move(in.array), [&](sv::ArrayD& a) { work(a); });
  const double seconds = seconds_since(t0);
  save(args, out, in, in.geometry);
  if (args.json) {
    Json j = base_json("smooth", args, opt.boundary, input_shape, out, seconds);
    j["lambda"] = opt.lambda;
    j["degree"] = opt.degrees;
    j["output"] = args.coefficients ? "coefficients" : "samples";
    Json poles = Json::array();
    for (int n : opt.degrees) {
      const sv::SmoothingPoles p = sv::smoothing_poles(n, opt.lambda);
      Json z = Json::array();
      for (const auto& q : p.z) z.push_back(Json::array({q.real(), q.imag()}));
      poles.push_back({{"degree", n}, {"poles", z}, {"gain", p.gain}});
    }
    j["filters"] = poles;
    std::printf("%s\n", j.dump(2).c_str());
  }
}

void run_indirect(const SplineArgs& args) {
  check_paths(args, "indirect");
  sv::Loaded in = load(args, "indirect");
  sv::SplineTransformOptions opt;
  opt.degrees = degrees(args, in.array.rank(), "indirect", in.array);
  opt.boundary = sv::parse_boundary(args.mode);
  opt.threads = args.threads;
  const sv::ArrayD input_shape(in.array.dims(), in.array.channels());
  const auto t0 = std::chrono::steady_clock::now();
  const bool cuda = args.backend == "cuda";
  auto work = [&](auto& a) {
    if (cuda)
      sv::cuda::indirect_transform(a, opt);
    else
      sv::indirect_transform(a, opt);
  };
  sv::ArrayD out = args.precision == "single"
                       ? in_precision<float>(std::move(in.array), [&](sv::ArrayF& a) { work(a); })
                       : in_precision<double>(std::move(in.array), [&](sv::ArrayD& a) { work(a); });
  const double seconds = seconds_since(t0);
  save(args, out, in, in.geometry);
  if (args.json) {
    Json j = base_json("indirect", args, opt.boundary, input_shape, out, seconds);
    j["degree"] = opt.degrees;
    std::printf("%s\n", j.dump(2).c_str());
  }
}

// The pyramid's options from the arguments (one degree for every axis).
sv::ReduceOptions pyramid_options(const SplineArgs& args, const char* command,
                                  const sv::ArrayD& a) {
  sv::ReduceOptions opt;
  const std::vector<int> d = degrees(args, a.rank(), command, a);
  for (int n : d)
    if (n != d[0]) throw UsageError(std::string(command) + ": takes one --degree for every axis");
  opt.degree = d[0];
  opt.boundary = sv::parse_boundary(args.mode);
  if (opt.boundary != sv::Boundary::Reflect && opt.boundary != sv::Boundary::Mirror &&
      opt.boundary != sv::Boundary::Periodic)
    throw UsageError(std::string(command) + ": --mode " + args.mode +
                     " has no exact least-squares pyramid; use reflect (grid-mirror), mirror "
                     "or periodic (grid-wrap)");
  opt.threads = args.threads;
  return opt;
}

// The grid of the output in the world: output index q at input index scale q + offset per axis
// (Vec3 in i, j, k = x, y, z order, the reverse of the array's).
sv::Geometry moved(const sv::Geometry& g, const std::vector<double>& scale,
                   const std::vector<double>& offset) {
  sv::Vec3 s{1, 1, 1}, o{0, 0, 0};
  const std::size_t rank = scale.size();
  for (std::size_t d = 0; d < rank; ++d) {
    s[rank - 1 - d] = scale[d];
    o[rank - 1 - d] = offset[d];
  }
  return sv::geometry_resampled(g, s, o);
}

Json axes_json(const std::vector<sv::PyramidAxis>& axes) {
  Json out = Json::array();
  for (const sv::PyramidAxis& a : axes)
    out.push_back({{"fine", a.fine},
                   {"coarse", a.coarse},
                   {"origin", a.origin},
                   {"spacing", a.spacing},
                   {"left", sv::boundary_name(a.left)},
                   {"right", sv::boundary_name(a.right)}});
  return out;
}

void run_reduce(const SplineArgs& args) {
  check_paths(args, "reduce");
  sv::Loaded in = load(args, "reduce");
  sv::ReduceOptions opt = pyramid_options(args, "reduce", in.array);
  opt.input_is_coefficients = args.coefficients_in;
  opt.samples = !args.coefficients;
  std::vector<double> factors;
  if (!args.zoom.empty()) {
    factors = per_axis(numbers(args.zoom, "--zoom", "reduce"), in.array.rank(), "--zoom", "reduce",
                       in.array);
    for (double f : factors)
      if (!(f > 0 && f <= 1))
        throw UsageError("reduce: --zoom factors must be in (0, 1], got " + sv::format_number(f) +
                         " (reduce downscales; resample --zoom enlarges)");
  }
  const sv::ArrayD input_shape(in.array.dims(), in.array.channels());
  std::vector<sv::PyramidAxis> axes;
  const auto t0 = std::chrono::steady_clock::now();
  const bool cuda = args.backend == "cuda";
  auto work = [&](auto& a) {
    using T = std::decay_t<decltype(*a.data())>;
    sv::Reduced<T> r;
    if (cuda)
      r = factors.empty() ? sv::cuda::reduce2(a, opt) : sv::cuda::reduce(a, factors, opt);
    else
      r = factors.empty() ? sv::reduce2(a, opt) : sv::reduce(a, factors, opt);
    axes = r.axes;
    a = std::move(args.coefficients ? r.coefficients : r.samples);
  };
  sv::ArrayD out = args.precision == "single"
                       ? in_precision<float>(std::move(in.array), [&](sv::ArrayF& a) { work(a); })
                       : in_precision<double>(std::move(in.array), [&](sv::ArrayD& a) { work(a); });
  const double seconds = seconds_since(t0);
  std::vector<double> scale, offset;
  for (const sv::PyramidAxis& a : axes) {
    scale.push_back(a.spacing);
    offset.push_back(a.origin);
  }
  save(args, out, in, moved(in.geometry, scale, offset));
  if (args.json) {
    Json j = base_json("reduce", args, opt.boundary, input_shape, out, seconds);
    j["degree"] = opt.degree;
    j["output"] = args.coefficients ? "coefficients" : "samples";
    j["input"] = args.coefficients_in ? "coefficients" : "samples";
    j["axes"] = axes_json(axes);
    std::printf("%s\n", j.dump(2).c_str());
  }
}

void run_expand(const SplineArgs& args) {
  check_paths(args, "expand");
  sv::Loaded in = load(args, "expand");
  const sv::ReduceOptions opt = pyramid_options(args, "expand", in.array);
  const std::vector<double> v = numbers(args.shape, "--shape", "expand");
  if (v.size() != in.array.rank())
    throw sv::Error("expand: --shape gives " + std::to_string(v.size()) + " extents for the " +
                    std::to_string(in.array.rank()) + "-D input (" +
                    sv::describe_shape(in.array.dims(), in.array.channels()) +
                    "); give the fine shape, one extent per axis");
  std::vector<std::size_t> fine;
  std::vector<double> scale, offset;
  for (std::size_t d = 0; d < v.size(); ++d) {
    if (v[d] < 1 || v[d] != static_cast<double>(static_cast<std::size_t>(v[d])) || v[d] > 1e9)
      throw UsageError("expand: --shape extents must be whole numbers >= 1, got " +
                       sv::format_number(v[d]));
    fine.push_back(static_cast<std::size_t>(v[d]));
    const sv::PyramidAxis ax = sv::reduce2_axis(fine[d], opt);
    if (ax.coarse != in.array.dim(d))
      throw sv::Error("expand: axis " + std::to_string(d) + " of IN has " +
                      std::to_string(in.array.dim(d)) + " coefficients; a fine axis of " +
                      std::to_string(fine[d]) + " samples reduces to " + std::to_string(ax.coarse) +
                      " (--shape is the shape reduce halved)");
    scale.push_back(1 / ax.spacing);
    offset.push_back(-ax.origin / ax.spacing);
  }
  double points = static_cast<double>(in.array.channels());
  for (std::size_t n : fine) points *= static_cast<double>(n);
  if (points > static_cast<double>(kMaxResultValues))
    throw sv::Error("expand: --shape would make " + sv::format_number(points) +
                    " values; the limit is 2^27 per result");
  const sv::ArrayD input_shape(in.array.dims(), in.array.channels());
  const auto t0 = std::chrono::steady_clock::now();
  const bool cuda = args.backend == "cuda";
  auto work = [&](auto& a) {
    a = cuda ? sv::cuda::expand2(a, fine, opt) : sv::expand2(a, fine, opt);
  };
  sv::ArrayD out = args.precision == "single"
                       ? in_precision<float>(std::move(in.array), [&](sv::ArrayF& a) { work(a); })
                       : in_precision<double>(std::move(in.array), [&](sv::ArrayD& a) { work(a); });
  const double seconds = seconds_since(t0);
  save(args, out, in, moved(in.geometry, scale, offset));
  if (args.json) {
    Json j = base_json("expand", args, opt.boundary, input_shape, out, seconds);
    j["degree"] = opt.degree;
    std::printf("%s\n", j.dump(2).c_str());
  }
}

// The options every command takes.
void add_common(CLI::App* sub, SplineArgs& a, const char* in_help, const char* out_help) {
  sub->add_option("IN", a.in, in_help)->required();
  sub->add_option("OUT", a.out, out_help)->required();
  sub->add_option("--mode", a.mode,
                  "boundary mode: reflect (= grid-mirror, half-sample symmetric), mirror (whole-"
                  "sample symmetric), periodic (= grid-wrap); smooth and indirect also take "
                  "scipy.ndimage's other names (nearest -> reflect, wrap/constant/grid-constant "
                  "-> mirror, as the prefilter)")
      ->type_name("MODE")
      ->check(CLI::IsMember({"reflect", "grid-mirror", "mirror", "periodic", "grid-wrap", "wrap",
                             "nearest", "constant", "grid-constant"}))
      ->capture_default_str();
  sub->add_option("--precision", a.precision, "double (float64 OUT) or single (float32 OUT)")
      ->type_name("P")
      ->check(CLI::IsMember({"single", "double"}))
      ->capture_default_str();
  sub->add_option("--backend", a.backend, "cpu or cuda")
      ->type_name("B")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  sub->add_flag("--channels", a.channels, "the last axis of a .npy IN is channels");
  sub->add_option("--threads", a.threads, "CPU threads (0 = all)")->type_name("N");
  sub->add_flag("--json", a.json, "print a JSON report on stdout");
}

}  // namespace

void add_spline_commands(CLI::App& app, SplineCommands& c) {
  c.smooth_app = app.add_subcommand(
      "smooth",
      "the smoothing spline of IN (Unser's, degree n = 2r - 1, penalty lambda int (s^(r))^2): "
      "its samples at the grid, or its coefficients; lambda 0 interpolates");
  add_common(c.smooth_app, c.smooth, "samples (any format the tool reads)",
             "the smoothing spline's samples (or --coefficients)");
  c.smooth_app->add_option("--lambda", c.smooth.lambda, "smoothing parameter >= 0")
      ->type_name("L")
      ->required();
  c.smooth_app
      ->add_option("--degree", c.smooth.degree,
                   "spline degree, odd (1, 3, 5, 7) when lambda > 0; N or N0,N1[,N2] per axis")
      ->type_name("N")
      ->capture_default_str();
  c.smooth_app->add_flag("--coefficients", c.smooth.coefficients,
                         "write the B-spline coefficients (the direct transform) instead");

  c.indirect_app = app.add_subcommand(
      "indirect", "B-spline coefficients to the samples of their spline at the grid");
  add_common(c.indirect_app, c.indirect,
             "B-spline coefficients (e.g. from smooth --coefficients "
             "or prefilter)",
             "the samples");
  c.indirect_app->add_option("--degree", c.indirect.degree, "spline degree 0..7, or one per axis")
      ->type_name("N")
      ->required();

  c.reduce_app = app.add_subcommand(
      "reduce",
      "the least-squares (anti-aliased) approximation on a grid twice as coarse, or by --zoom F "
      "< 1: the coarse spline's samples at the coarse grid (or its coefficients)");
  add_common(c.reduce_app, c.reduce, "samples (or --coefficients-in)",
             "coarse samples (or --coefficients)");
  c.reduce_app->add_option("--degree", c.reduce.degree, "spline degree 0..7")
      ->type_name("N")
      ->capture_default_str();
  c.reduce_app
      ->add_option("--zoom", c.reduce.zoom,
                   "factor(s) in (0, 1], one or one per axis (default: halve, M = "
                   "ceil(N/2))")
      ->type_name("F");
  c.reduce_app->add_flag("--coefficients", c.reduce.coefficients,
                         "write the coarse coefficients (expand's input)");
  c.reduce_app->add_flag("--coefficients-in", c.reduce.coefficients_in,
                         "IN holds the fine B-spline coefficients");

  c.expand_app = app.add_subcommand(
      "expand", "the coarse spline of reduce --coefficients evaluated on the fine grid");
  add_common(c.expand_app, c.expand, "coarse coefficients (reduce --coefficients)",
             "the fine samples");
  c.expand_app->add_option("--shape", c.expand.shape, "the fine shape N0,N1[,N2] that was reduced")
      ->type_name("N0,N1")
      ->required();
  c.expand_app->add_option("--degree", c.expand.degree, "spline degree 0..7 (as reduce's)")
      ->type_name("N")
      ->capture_default_str();
}

void run_spline_commands(const SplineCommands& c) {
  if (c.smooth_app && c.smooth_app->parsed()) run_smooth(c.smooth);
  if (c.indirect_app && c.indirect_app->parsed()) run_indirect(c.indirect);
  if (c.reduce_app && c.reduce_app->parsed()) run_reduce(c.reduce);
  if (c.expand_app && c.expand_app->parsed()) run_expand(c.expand);
}

}  // namespace splinetool
