// splinetool derivative, gradient, gradient-magnitude, laplacian and hessian
// (filter_commands.h): check the command line, load IN, run the core's filter in float or double
// (sv::derivative_filter, gradient_filter, gradient_magnitude_filter, laplacian_filter,
// hessian_filter; with --backend cuda the same functions of sv::cuda, cuda_bspline.h), then write
// OUT (replaced atomically) and report.
#include "filter_commands.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "splineview/bspline.h"
#include "splineview/cuda_bspline.h"
#include "splineview/cuda_memory.h"
#include "splineview/derivative.h"
#include "splineview/error.h"
#include "splineview/finite.h"
#include "splineview/input.h"
#include "splineview/io.h"
#include "splineview/temp_files.h"
#include "splineview/text.h"

namespace splinetool {
namespace {

using Json = nlohmann::json;

enum class Kind { Derivative, Gradient, GradientMagnitude, Laplacian, Hessian };

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Derivative:
      return "derivative";
    case Kind::Gradient:
      return "gradient";
    case Kind::GradientMagnitude:
      return "gradient-magnitude";
    case Kind::Laplacian:
      return "laplacian";
    case Kind::Hessian:
      return "hessian";
  }
  return "";
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// --order: 1..3 whole numbers 0..7 joined by commas.
std::vector<int> parse_order(const std::string& text, const char* cmd) {
  std::vector<int> out;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = text.find(',', begin);
    const std::string item =
        text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    bool digits = !item.empty() && item.size() <= 3;
    for (char ch : item)
      if (!std::isdigit(static_cast<unsigned char>(ch))) digits = false;
    if (!digits)
      throw UsageError(std::string(cmd) +
                       ": --order expects one whole number >= 0 per axis joined by commas "
                       "(array order, e.g. 1,0 or 0,2,1), got '" +
                       sv::printable(text, 40) + "'");
    const int v = std::stoi(item);
    if (v > sv::kMaxDegree)
      throw UsageError(std::string(cmd) + ": --order " + std::to_string(v) +
                       " is above the largest degree, " + std::to_string(sv::kMaxDegree));
    out.push_back(v);
    if (out.size() > 3)
      throw UsageError(std::string(cmd) + ": --order takes at most 3 values (one per axis)");
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  return out;
}

// UsageError when OUT is the same file as IN (device and inode: links and ".." count).
void check_not_input(const std::string& out, const std::string& in, const char* cmd) {
  struct stat so {};
  struct stat si {};
  if (stat(out.c_str(), &so) != 0 || stat(in.c_str(), &si) != 0) return;
  if (so.st_dev == si.st_dev && so.st_ino == si.st_ino)
    throw UsageError(std::string(cmd) + ": OUT '" + shown(out) +
                     "' is the same file as IN; write the result elsewhere");
}

void check_output(const std::string& path, const std::vector<std::string>& allowed, const char* cmd,
                  const char* why) {
  const std::string e = extension(path);
  if (std::find(allowed.begin(), allowed.end(), e) != allowed.end()) return;
  std::string list;
  for (std::size_t i = 0; i < allowed.size(); ++i)
    list += (i == 0 ? "" : (i + 1 == allowed.size() ? " or " : ", ")) + allowed[i];
  throw UsageError(std::string(cmd) + ": cannot write '" + shown(path) + "': OUT must end in " +
                   list + why);
}

// A C-order little-endian .npy of `values` (float32 or float64) with any shape, written to a
// guarded temporary beside `path` and renamed into place (the format: numpy's
// "NEP 1 - A simple file format for NumPy arrays", version 1.0).
void save_npy_shaped(const std::string& path, const std::vector<double>& values,
                     const std::vector<std::size_t>& shape, bool single) {
  std::string dict = std::string("{'descr': '") + (single ? "<f4" : "<f8") +
                     "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i)  // Python's tuple: (5,) or (5, 6)
    dict +=
        std::to_string(shape[i]) + (shape.size() == 1 ? "," : (i + 1 < shape.size() ? ", " : ""));
  dict += "), }";
  std::size_t total = 10 + dict.size() + 1;
  const std::size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += '\x01';
  bytes += '\x00';
  const std::uint16_t hl = static_cast<std::uint16_t>(dict.size());
  bytes += static_cast<char>(hl & 0xff);
  bytes += static_cast<char>(hl >> 8);
  bytes += dict;
  const std::size_t header = bytes.size();
  const std::size_t item = single ? 4 : 8;
  bytes.resize(header + values.size() * item);
  char* p = bytes.data() + header;
  for (double v : values) {  // the machines splineview builds on are little endian (io_npy.cpp)
    if (single) {
      const float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
    } else {
      std::memcpy(p, &v, 8);
    }
    p += item;
  }
  static unsigned counter = 0;
  sv::TempFileGuard guard(path + ".tmp-" + std::to_string(static_cast<long>(::getpid())) + "-f" +
                          std::to_string(counter++));
  std::FILE* f = std::fopen(guard.path().c_str(), "wb");
  if (!f) throw sv::Error("'" + shown(path) + "': cannot create a temporary file beside it");
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size() &&
                  std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed) throw sv::Error("'" + shown(path) + "': cannot write the file");
  if (std::rename(guard.path().c_str(), path.c_str()) != 0)
    throw sv::Error("'" + shown(path) + "': cannot replace the file");
  guard.release();
}

struct Result {
  sv::ArrayD scalar;                   // derivative, gradient-magnitude, laplacian
  std::vector<sv::ArrayD> components;  // gradient (R), hessian (R(R+1)/2, hessian_index)
};

template <class T>
Result compute(Kind kind, const sv::ArrayD& in, const std::vector<int>& order,
               const sv::DerivativeOptions& opt, bool cuda) {
  const sv::Array<T> a = sv::Array<T>::from(in);
  Result r;
  switch (kind) {
    case Kind::Derivative:
      r.scalar = sv::ArrayD::from(cuda ? sv::cuda::derivative_filter(a, order, opt)
                                       : sv::derivative_filter(a, order, opt));
      break;
    case Kind::GradientMagnitude:
      r.scalar = sv::ArrayD::from(cuda ? sv::cuda::gradient_magnitude_filter(a, opt)
                                       : sv::gradient_magnitude_filter(a, opt));
      break;
    case Kind::Laplacian:
      r.scalar = sv::ArrayD::from(cuda ? sv::cuda::laplacian_filter(a, opt)
                                       : sv::laplacian_filter(a, opt));
      break;
    case Kind::Gradient:
      for (const sv::Array<T>& g :
           cuda ? sv::cuda::gradient_filter(a, opt) : sv::gradient_filter(a, opt))
        r.components.push_back(sv::ArrayD::from(g));
      break;
    case Kind::Hessian:
      for (const sv::Array<T>& h :
           cuda ? sv::cuda::hessian_filter(a, opt) : sv::hessian_filter(a, opt))
        r.components.push_back(sv::ArrayD::from(h));
      break;
  }
  return r;
}

void run_filter(Kind kind, const FilterArgs& args) {
  const char* cmd = kind_name(kind);
  if (args.backend != "cpu" && args.backend != "cuda")
    throw UsageError(std::string(cmd) + ": --backend must be cpu or cuda, got '" +
                     sv::printable(args.backend, 40) + "'");
  if (args.precision != "single" && args.precision != "double")
    throw UsageError(std::string(cmd) + ": --precision must be single or double, got '" +
                     sv::printable(args.precision, 40) + "'");
  if (!std::isfinite(args.cval)) throw UsageError(std::string(cmd) + ": --cval must be finite");
  const sv::Boundary boundary = sv::parse_boundary(args.mode);
  std::vector<int> order;
  if (kind == Kind::Derivative) {
    if (args.order.empty())
      throw UsageError("derivative: --order M0[,M1[,M2]] is required (one order per axis)");
    order = parse_order(args.order, cmd);
  }
  if ((kind == Kind::Laplacian || kind == Kind::Hessian) && args.degree < 2)
    throw UsageError(std::string(cmd) + ": needs second derivatives; degree " +
                     std::to_string(args.degree) + " has none (use --degree 2..7)");
  if ((kind == Kind::Gradient || kind == Kind::GradientMagnitude) && args.degree < 1)
    throw UsageError(std::string(cmd) + ": degree 0 (nearest) has no derivative");
  const bool components = kind == Kind::Gradient || kind == Kind::Hessian;
  if (kind == Kind::Hessian)
    check_output(args.out, {".npy"}, cmd,
                 " (the Hessian has R x R components per voxel, written as two trailing axes)");
  else if (kind == Kind::Gradient)
    check_output(args.out, {".npy", ".nrrd", ".nhdr"}, cmd,
                 " (the gradient has R components per voxel, a trailing axis)");
  else
    check_output(args.out, {".npy", ".nrrd", ".nhdr", ".nii", ".nii.gz", ".tif", ".tiff"}, cmd,
                 " (the result is signed floating point: no PNG)");
  check_not_input(args.out, args.in, cmd);
  if (args.allow_special || args.volume >= 0) {
    sv::InputOptions o;
    o.allow_special = args.allow_special;
    o.volume = args.volume;
    sv::set_input_options(o);
  }

  // Without a device the command stops here, before IN is read (the sentence of the other
  // --backend cuda commands).
  std::string why;
  if (args.backend == "cuda" && !sv::cuda::available(&why))
    throw sv::Error("--backend cuda cannot run here: " + why + "; use --backend cpu");

  const auto t_load = std::chrono::steady_clock::now();
  sv::Loaded in = sv::load_any(args.in, args.channels);
  const double seconds_load = seconds_since(t_load);
  const sv::ArrayD& a = in.array;
  const std::string where = std::string(cmd) + ": IN '" + shown(args.in) + "'";
  const sv::NonFinite nf = sv::scan_nonfinite(a);
  if (nf.count)
    throw sv::Error(where + ": " +
                    sv::describe_nonfinite(nf, a.dims(), a.channels(), in.channel_axis) +
                    "; the filter would spread it");
  if (kind == Kind::Derivative && order.size() != a.rank())
    throw UsageError(std::string(cmd) + ": --order has " + std::to_string(order.size()) +
                     (order.size() == 1 ? " value" : " values") + "; IN '" + shown(args.in) +
                     "' is " + std::to_string(a.rank()) + "-D (" +
                     sv::describe_shape(a.dims(), a.channels()) + "): give one per axis");
  if (kind == Kind::Derivative)
    for (std::size_t d = 0; d < order.size(); ++d)
      if (order[d] > args.degree)
        throw UsageError(std::string(cmd) + ": --order " + std::to_string(order[d]) + " on axis " +
                         std::to_string(d) + " is above --degree " + std::to_string(args.degree) +
                         " (a degree-n spline has derivatives up to order n)");
  if (components && a.channels() != 1)
    throw sv::Error(where + " has " + std::to_string(a.channels()) + " channels; " + cmd +
                    " takes one (its components form the trailing axes of OUT)");
  const std::string ext = extension(args.out);
  if ((ext == ".nii" || ext == ".nii.gz") && a.channels() != 1)
    throw sv::Error(std::string(cmd) + ": NIfTI output takes one channel; IN '" + shown(args.in) +
                    "' has " + std::to_string(a.channels()));

  sv::DerivativeOptions opt;
  opt.degree = args.degree;
  opt.boundary = boundary;
  opt.cval = args.cval;
  opt.threads = args.threads;
  opt.input_is_coefficients = args.no_prefilter;
  const bool single = args.precision == "single";
  const bool cuda = args.backend == "cuda";
  const auto t0 = std::chrono::steady_clock::now();
  Result r = single ? compute<float>(kind, a, order, opt, cuda)
                    : compute<double>(kind, a, order, opt, cuda);
  const double seconds = seconds_since(t0);

  double lo = HUGE_VAL, hi = -HUGE_VAL;
  auto span = [&](const sv::ArrayD& x) {
    for (double v : x.vec()) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  };
  const sv::DType dtype = single ? sv::DType::F32 : sv::DType::F64;
  const std::size_t rank = a.rank();
  std::vector<std::size_t> out_shape = a.dims();
  const auto t_save = std::chrono::steady_clock::now();
  if (!components) {
    span(r.scalar);
    if (in.channel_axis || a.channels() > 1) out_shape.push_back(a.channels());
    sv::save_any(args.out, r.scalar, dtype, in.channel_axis, in.geometry);
  } else if (kind == Kind::Gradient) {
    sv::ArrayD g(a.dims(), rank);
    for (std::size_t c = 0; c < rank; ++c) {
      span(r.components[c]);
      for (std::size_t p = 0; p < a.points(); ++p) g[p * rank + c] = r.components[c][p];
    }
    out_shape.push_back(rank);
    sv::save_any(args.out, g, dtype, true, in.geometry);
  } else {
    std::vector<double> values(a.points() * rank * rank);
    for (const sv::ArrayD& h : r.components) span(h);
    for (std::size_t p = 0; p < a.points(); ++p)
      for (std::size_t i = 0; i < rank; ++i)
        for (std::size_t j = 0; j < rank; ++j)
          values[(p * rank + i) * rank + j] = r.components[sv::hessian_index(i, j, rank)][p];
    out_shape.push_back(rank);
    out_shape.push_back(rank);
    save_npy_shaped(args.out, values, out_shape, single);
  }
  const double seconds_save = seconds_since(t_save);

  if (args.json) {
    Json j{{"command", cmd},
           {"in", args.in},
           {"out", args.out},
           {"shape", a.dims()},
           {"channels", a.channels()},
           {"out_shape", out_shape},
           {"degree", args.degree},
           {"mode", sv::boundary_scipy_name(boundary)},
           {"cval", args.cval},
           {"input", args.no_prefilter ? "coefficients" : "samples"},
           {"precision", args.precision},
           {"dtype", sv::dtype_name(dtype)},
           {"backend", args.backend},
           {"threads", args.threads},
           {"min", lo},
           {"max", hi},
           {"seconds", seconds},
           {"seconds_load", seconds_load},
           {"seconds_save", seconds_save}};
    if (kind == Kind::Derivative) j["order"] = order;
    if (kind == Kind::Hessian) j["components"] = "out[..., i, j] = d2 s / dx_i dx_j";
    if (kind == Kind::Gradient) j["components"] = "out[..., i] = d s / dx_i";
    const std::string text = j.dump(2) + "\n";
    std::fputs(text.c_str(), stdout);
  }
}

void add_filter_options(CLI::App* sub, FilterArgs& f) {
  sub->add_option("IN", f.in,
                  "samples (or, with --no-prefilter, B-spline coefficients): any format the tool "
                  "reads")
      ->required();
  sub->add_option("OUT", f.out, "the result (float32 with --precision single, else float64)")
      ->required();
  sub->add_option("--degree", f.degree, "B-spline degree 0..7")
      ->type_name("N")
      ->check(CLI::Range(0, 7))
      ->capture_default_str();
  CLI::Option* boundary =
      sub->add_option("--boundary", f.mode,
                      "reflect (half-sample symmetric), mirror (whole-sample symmetric) or "
                      "periodic; --mode takes every scipy.ndimage mode")
          ->type_name("MODE")
          ->check(CLI::IsMember({"reflect", "mirror", "periodic"}));
  CLI::Option* mode =
      sub->add_option("--mode", f.mode,
                      "boundary mode, scipy.ndimage's names (map_coordinates semantics at the "
                      "grid points): reflect = grid-mirror, mirror, grid-wrap (= periodic), "
                      "wrap and constant (the mirror spline there), nearest, grid-constant "
                      "(with --cval)")
          ->type_name("MODE")
          ->check(CLI::IsMember({"reflect", "grid-mirror", "mirror", "periodic", "grid-wrap",
                                 "wrap", "nearest", "constant", "grid-constant"}))
          ->capture_default_str();
  mode->excludes(boundary);
  sub->add_option("--cval", f.cval, "the value outside for --mode grid-constant")
      ->type_name("V")
      ->capture_default_str();
  sub->add_option("--precision", f.precision,
                  "double: all double (float64 OUT); single: float samples, coefficients and "
                  "passes, double sums per line (float32 OUT)")
      ->type_name("P")
      ->check(CLI::IsMember({"single", "double"}))
      ->capture_default_str();
  sub->add_option("--backend", f.backend,
                  "cpu or cuda (the same filters on the GPU, float or double, every mode)")
      ->type_name("B")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  sub->add_flag("--no-prefilter", f.no_prefilter,
                "IN holds B-spline coefficients (scipy's prefilter=False): no prefilter");
  sub->add_flag("--channels", f.channels,
                "the last axis of a .npy IN is channels (1..4), filtered one by one; colour "
                "images imply it");
  sub->add_flag("--json", f.json, "print a JSON report (with timings) on stdout");
  sub->add_option("--threads", f.threads, "CPU threads (0 = all hardware threads)")
      ->type_name("N")
      ->check(CLI::Range(0u, 4096u))
      ->capture_default_str();
  sub->add_flag("--allow-special-files", f.allow_special,
                "also read inputs that are pipes or devices");
  sub->add_option("--volume", f.volume, "which volume of a 4-D NIfTI input to read, from 0")
      ->type_name("INDEX")
      ->check(CLI::Range(0L, 2147483647L));
}

}  // namespace

void add_filter_commands(CLI::App& app, FilterCommands& c) {
  c.derivative_app = app.add_subcommand(
      "derivative",
      "a partial derivative of the interpolating B-spline at the grid points (--order per "
      "axis), computed in the coefficient domain");
  add_filter_options(c.derivative_app, c.derivative);
  c.derivative_app
      ->add_option("--order", c.derivative.order,
                   "the order per axis in array order, each 0..degree, e.g. 1,0 (d/dy) or 0,0,2 "
                   "(d2/dx2 of a volume)")
      ->type_name("M0[,M1[,M2]]")
      ->required();
  c.gradient_app =
      app.add_subcommand("gradient",
                         "the R first derivatives at the grid points (OUT: .npy/.nrrd, a trailing "
                         "component axis in array order)");
  add_filter_options(c.gradient_app, c.gradient);
  c.gradient_magnitude_app = app.add_subcommand(
      "gradient-magnitude", "the length of the spline's gradient at the grid points");
  add_filter_options(c.gradient_magnitude_app, c.gradient_magnitude);
  c.laplacian_app = app.add_subcommand(
      "laplacian", "the sum of the pure second derivatives at the grid points (degree >= 2)");
  add_filter_options(c.laplacian_app, c.laplacian);
  c.hessian_app =
      app.add_subcommand("hessian",
                         "the R x R second derivatives at the grid points (OUT: .npy of shape "
                         "(..., R, R); degree >= 2)");
  add_filter_options(c.hessian_app, c.hessian);
}

void run_filter_commands(const FilterCommands& c) {
  if (c.derivative_app && c.derivative_app->parsed()) run_filter(Kind::Derivative, c.derivative);
  if (c.gradient_app && c.gradient_app->parsed()) run_filter(Kind::Gradient, c.gradient);
  if (c.gradient_magnitude_app && c.gradient_magnitude_app->parsed())
    run_filter(Kind::GradientMagnitude, c.gradient_magnitude);
  if (c.laplacian_app && c.laplacian_app->parsed()) run_filter(Kind::Laplacian, c.laplacian);
  if (c.hessian_app && c.hessian_app->parsed()) run_filter(Kind::Hessian, c.hessian);
}

}  // namespace splinetool
