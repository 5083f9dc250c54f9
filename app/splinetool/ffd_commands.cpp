// splinetool ffd and warp (ffd_commands.h): load and check the control grid (and the moving
// image or the reference), compute the whole result with the core (sv::ffd_field,
// sv::ffd_jacobian_determinant_field, sv::warp), then write OUT (and JOUT) through the core's
// savers, which replace files atomically, and report.
#include "ffd_commands.h"

#include "commands.h"
#include "ffd_grid_input.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "splineview/cuda_registration.h"
#include "splineview/cuda_warp.h"
#include "splineview/error.h"
#include "splineview/ffd.h"
#include "splineview/ffd_warp.h"
#include "splineview/finite.h"
#include "splineview/input.h"
#include "splineview/io.h"
#include "splineview/niftyreg.h"
#include "splineview/registration.h"
#include "splineview/text.h"

namespace splinetool {
namespace {

using Json = nlohmann::json;

// UsageError unless `path` ends in one of `allowed` (what: "OUT" or "--jacobian").
void check_output(const std::string& path, const std::vector<std::string>& allowed,
                  const char* command, const char* what, const char* why = "") {
  const std::string e = extension(path);
  if (std::find(allowed.begin(), allowed.end(), e) != allowed.end()) return;
  std::string list;
  for (std::size_t i = 0; i < allowed.size(); ++i)
    list += (i == 0 ? "" : (i + 1 == allowed.size() ? " or " : ", ")) + allowed[i];
  throw UsageError(std::string(command) + ": cannot write '" + shown(path) + "': " + what +
                   " must end in " + list + why);
}

// UsageError when an output is the same file as an input or another output (device and inode,
// so links and ".." count; only existing files can coincide, and outputs are compared by name
// too).
void check_distinct(const std::vector<std::pair<const char*, std::string>>& outputs,
                    const std::vector<std::pair<const char*, std::string>>& inputs,
                    const char* command) {
  auto same = [](const std::string& a, const std::string& b) {
    struct stat sa {};
    struct stat sb {};
    if (stat(a.c_str(), &sa) != 0 || stat(b.c_str(), &sb) != 0) return false;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  };
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].second.empty()) continue;
    for (const auto& in : inputs)
      if (!in.second.empty() && same(outputs[i].second, in.second))
        throw UsageError(std::string(command) + ": " + outputs[i].first + " '" +
                         shown(outputs[i].second) + "' is the same file as " + in.first +
                         "; write the result elsewhere");
    for (std::size_t j = i + 1; j < outputs.size(); ++j)
      if (outputs[i].second == outputs[j].second || same(outputs[i].second, outputs[j].second))
        throw UsageError(std::string(command) + ": " + outputs[i].first + " and " +
                         outputs[j].first + " are the same file '" + shown(outputs[i].second) +
                         "'");
  }
}

// A comma-separated list of 1..3 whole numbers in [lo, hi], as typed for `option`.
std::vector<long> parse_integers(const std::string& text, const char* option, long lo, long hi,
                                 const char* command) {
  std::vector<long> out;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = text.find(',', begin);
    const std::string item =
        text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    bool digits = !item.empty() && item.size() <= 12;
    for (std::size_t k = (item.size() > 1 && item[0] == '-') ? 1 : 0; k < item.size(); ++k)
      if (!std::isdigit(static_cast<unsigned char>(item[k]))) digits = false;
    if (!digits)
      throw UsageError(std::string(command) + ": " + option + " expects whole numbers joined by " +
                       "commas, got '" + sv::printable(text, 40) + "'");
    const long v = std::stol(item);
    if (v < lo || v > hi)
      throw UsageError(std::string(command) + ": " + option + " values must be in " +
                       std::to_string(lo) + ".." + std::to_string(hi) + ", got " +
                       std::to_string(v));
    out.push_back(v);
    if (out.size() > 3)
      throw UsageError(std::string(command) + ": " + option + " takes at most 3 values");
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  return out;
}

// The spacing per axis for a grid of `rank`: one value for every axis or one per axis.
std::vector<int> spacing_for(const std::string& text, std::size_t rank, const char* command) {
  const std::vector<long> v = parse_integers(text, "--spacing", 1, 100000, command);
  if (v.size() != 1 && v.size() != rank)
    throw UsageError(std::string(command) + ": --spacing has " + std::to_string(v.size()) +
                     " values; the " + std::to_string(rank) + "-D grid takes 1 or " +
                     std::to_string(rank));
  std::vector<int> d(rank);
  for (std::size_t a = 0; a < rank; ++a) d[a] = static_cast<int>(v.size() == 1 ? v[0] : v[a]);
  return d;
}

std::string shape_text(const std::vector<std::size_t>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? " x " : "") + std::to_string(v[i]);
  return s;
}

// The control grid: a .npy (or NRRD) whose last axis holds the components, checked against
// the spacing (and, when given, the image shape); errors name GRID.
sv::ArrayD load_grid(const std::string& path, const std::string& spacing, const char* command,
                     std::vector<int>& delta) {
  if (spacing.empty())
    throw UsageError(std::string(command) +
                     ": --spacing D is required for a .npy or NRRD GRID (a "
                     "NiftyReg .nii/.nii.gz grid carries its own)");
  sv::Loaded g = sv::load_any(path, true);
  const std::string where = std::string(command) + ": GRID '" + shown(path) + "'";
  if (!g.channel_axis || (g.array.rank() != 2 && g.array.rank() != 3))
    throw sv::Error(where + " must be an array of shape (M_y, M_x, 2) or (M_z, M_y, M_x, 3), got " +
                    sv::describe_shape(g.array.dims(), g.array.channels()) +
                    (g.channel_axis ? "" : " without a component axis"));
  delta = spacing_for(spacing, g.array.rank(), command);
  try {
    sv::check_ffd_grid(g.array, delta);
  } catch (const sv::Error& e) {
    throw sv::Error(where + ": " + e.what());
  }
  return std::move(g.array);
}

void check_grid_for(const sv::ArrayD& grid, const std::vector<int>& delta,
                    const std::vector<std::size_t>& shape, const std::string& path,
                    const char* command) {
  try {
    sv::check_ffd_grid(grid, delta, shape);
  } catch (const sv::Error& e) {
    throw sv::Error(std::string(command) + ": GRID '" + shown(path) +
                    "' is too small: " + e.what());
  }
}

struct DetStats {
  double min = 0, max = 0;
  std::size_t folded = 0;  // det J <= 0
};

DetStats det_stats(const sv::ArrayD& det) {
  DetStats s{HUGE_VAL, -HUGE_VAL, 0};
  for (double v : det.vec()) {
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    if (!(v > 0)) ++s.folded;
  }
  return s;
}

Json det_json(const DetStats& s, double seconds) {
  return Json{{"det_jacobian_min", s.min},
              {"det_jacobian_max", s.max},
              {"folded", s.folded},
              {"seconds_jacobian", seconds}};
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

void print_json(const Json& j) {
  const std::string text = j.dump(2) + "\n";
  std::fputs(text.c_str(), stdout);
}

void apply_input_options(const CommonArgs& c) {
  if (!c.allow_special && c.volume < 0) return;
  sv::InputOptions o;
  o.allow_special = c.allow_special;
  o.volume = c.volume;
  sv::set_input_options(o);
}

// --backend cpu|cuda, --precision (default double on the CPU, single on cuda, where double is
// refused: `single_what` says what runs in float there) and --kernel of warp and register;
// UsageError naming `command` and the option.
struct DeviceChoice {
  bool cuda = false;
  std::string precision;
  sv::cuda::FfdKernel kernel = sv::cuda::FfdKernel::ThreadPerTileFma;
};

DeviceChoice device_choice(const char* command, const std::string& backend,
                           const std::string& precision, const std::string& kernel,
                           const char* single_what) {
  const std::string cmd(command);
  DeviceChoice c;
  c.cuda = backend == "cuda";
  if (!c.cuda && backend != "cpu")
    throw UsageError(cmd + ": --backend must be cpu or cuda, got '" + sv::printable(backend, 40) +
                     "'");
  c.precision = precision.empty() ? (c.cuda ? "single" : "double") : precision;
  if (c.precision != "single" && c.precision != "double")
    throw UsageError(cmd + ": --precision must be single or double, got '" +
                     sv::printable(c.precision, 40) + "'");
  if (c.cuda && c.precision != "single")
    throw UsageError(cmd + ": --backend cuda computes in single precision (" + single_what +
                     "); drop --precision double or use --backend cpu");
  try {
    c.kernel = sv::cuda::parse_ffd_kernel(kernel);
  } catch (const sv::Error& e) {
    throw UsageError(cmd + ": --kernel: " + e.what());
  }
  return c;
}

const std::vector<std::string> kJacobianOut = {".npy",    ".nrrd", ".nhdr", ".nii",
                                               ".nii.gz", ".tif",  ".tiff"};

}  // namespace

void run_ffd(const FfdArgs& args) {
  const char* cmd = "ffd";
  if (args.shape.empty() == args.reference.empty())
    throw UsageError("ffd: give the image grid with --shape N0,N1[,N2] or --reference IMAGE");
  check_output(args.out, {".npy", ".nrrd", ".nhdr"}, cmd, "OUT",
               " (a displacement field has R components per voxel; NIfTI output takes one)");
  if (!args.jacobian.empty()) check_output(args.jacobian, kJacobianOut, cmd, "--jacobian");
  std::vector<std::size_t> shape;
  if (!args.shape.empty())
    for (long v : parse_integers(args.shape, "--shape", 1, 100000000, cmd))
      shape.push_back(static_cast<std::size_t>(v));
  check_distinct({{"OUT", args.out}, {"--jacobian", args.jacobian}},
                 {{"GRID", args.grid}, {"--reference", args.reference}}, cmd);
  apply_input_options(args.common);

  std::vector<int> delta;
  const sv::ArrayD grid =
      is_niftyreg_grid(args.grid)
          ? load_niftyreg_grid_input(args.grid, args.spacing, args.reference, cmd, delta)
          : load_grid(args.grid, args.spacing, cmd, delta);
  sv::Geometry geometry;
  if (!args.reference.empty()) {
    const sv::Loaded ref = sv::load_any(args.reference, false);
    shape = ref.array.dims();
    geometry = ref.geometry;
  }
  if (shape.size() != grid.rank())
    throw sv::Error("ffd: GRID '" + shown(args.grid) + "' is " + std::to_string(grid.rank()) +
                    "-D (" + sv::describe_shape(grid.dims(), grid.channels()) + "), the image " +
                    shape_text(shape) + " is " + std::to_string(shape.size()) + "-D");
  check_grid_for(grid, delta, shape, args.grid, cmd);
  std::size_t points = 1;
  for (std::size_t n : shape) points *= n;
  if (points * grid.rank() > (std::size_t{1} << 30))
    throw sv::Error("ffd: the field of " + shape_text(shape) + " voxels x " +
                    std::to_string(grid.rank()) + " components exceeds 2^30 values");

  const auto t0 = std::chrono::steady_clock::now();
  const sv::ArrayD field = sv::ffd_field(grid, delta, shape, args.common.threads);
  const double seconds = seconds_since(t0);
  sv::ArrayD det;
  DetStats stats;
  double seconds_det = 0;
  if (!args.jacobian.empty()) {
    const auto t1 = std::chrono::steady_clock::now();
    det = sv::ffd_jacobian_determinant_field(grid, delta, shape, args.common.threads);
    seconds_det = seconds_since(t1);
    stats = det_stats(det);
  }
  double max_u = 0;
  for (double v : field.vec()) max_u = std::max(max_u, std::fabs(v));

  const sv::DType dtype = args.double_precision ? sv::DType::F64 : sv::DType::F32;
  sv::save_any(args.out, field, dtype, true, geometry);
  if (!args.jacobian.empty()) sv::save_any(args.jacobian, det, dtype, false, geometry);

  if (args.common.json) {
    Json j{{"command", "ffd"},
           {"grid", args.grid},
           {"grid_shape", grid.dims()},
           {"spacing", delta},
           {"shape", shape},
           {"out", args.out},
           {"out_shape",
            [&] {
              std::vector<std::size_t> s = shape;
              s.push_back(grid.rank());
              return s;
            }()},
           {"dtype", sv::dtype_name(dtype)},
           {"max_abs_displacement", max_u},
           {"seconds", seconds},
           {"threads", args.common.threads},
           {"jacobian", args.jacobian.empty() ? Json(nullptr) : Json(args.jacobian)}};
    if (!args.jacobian.empty()) j.update(det_json(stats, seconds_det));
    print_json(j);
  }
}

namespace {

template <class T>
sv::ArrayD warped(const sv::ArrayD& moving, const sv::ArrayD& grid, const std::vector<int>& delta,
                  const sv::WarpOptions& opt) {
  const sv::Array<T> w = sv::warp(sv::Array<T>::from(moving), sv::Array<T>::from(grid), delta, opt);
  return sv::ArrayD::from(w);
}

}  // namespace

void run_warp(const WarpArgs& args) {
  const char* cmd = "warp";
  const sv::Method method = sv::parse_method(args.method);
  const sv::Boundary boundary = sv::parse_boundary(args.mode);
  const DeviceChoice dc = device_choice(cmd, args.backend, args.precision, args.kernel,
                                        "float field and coefficients, the sampler in double");
  const bool cuda = dc.cuda;
  const std::string& precision = dc.precision;
  const sv::cuda::FfdKernel kernel = dc.kernel;
  if (!std::isfinite(args.cval)) throw UsageError("warp: --cval must be a finite number");
  check_output(args.out, {".npy", ".png", ".nrrd", ".nhdr", ".nii", ".nii.gz", ".tif", ".tiff"},
               cmd, "OUT");
  if (!args.jacobian.empty()) check_output(args.jacobian, kJacobianOut, cmd, "--jacobian");
  check_distinct({{"OUT", args.out}, {"--jacobian", args.jacobian}},
                 {{"MOVING", args.moving}, {"GRID", args.grid}}, cmd);
  check_warp_reference_option(args.grid, args.reference);
  apply_input_options(args.common);

  std::vector<int> delta;
  const sv::ArrayD grid =
      is_niftyreg_grid(args.grid)
          ? load_niftyreg_grid_input(args.grid, args.spacing, args.reference, cmd, delta)
          : load_grid(args.grid, args.spacing, cmd, delta);
  sv::Loaded in = sv::load_any(args.moving, args.channels);
  check_moving_on_reference(args.grid, args.reference, in, args.moving);
  const sv::ArrayD& moving = in.array;
  const sv::NonFinite nf = sv::scan_nonfinite(moving);
  if (nf.count)
    throw sv::Error("warp: '" + shown(args.moving) + "': " +
                    sv::describe_nonfinite(nf, moving.dims(), moving.channels(), in.channel_axis) +
                    "; the interpolation would spread it");
  if (moving.rank() != grid.rank())
    throw sv::Error("warp: MOVING '" + shown(args.moving) + "' is " +
                    std::to_string(moving.rank()) + "-D (" +
                    sv::describe_shape(moving.dims(), moving.channels()) + "), GRID '" +
                    shown(args.grid) + "' is " + std::to_string(grid.rank()) + "-D (" +
                    sv::describe_shape(grid.dims(), grid.channels()) + "); they must agree");
  check_grid_for(grid, delta, moving.dims(), args.grid, cmd);
  const std::string ext = extension(args.out);
  if (ext == ".png" && moving.rank() != 2)
    throw sv::Error("warp: a .png output needs a 2-D image; '" + shown(args.moving) + "' is " +
                    std::to_string(moving.rank()) + "-D");
  if ((ext == ".nii" || ext == ".nii.gz") && moving.channels() != 1)
    throw sv::Error("warp: NIfTI output takes one channel; '" + shown(args.moving) + "' has " +
                    std::to_string(moving.channels()));

  sv::WarpOptions opt;
  opt.method = method;
  opt.boundary = boundary;
  opt.cval = args.cval;
  opt.threads = args.common.threads;
  const bool single = precision == "single";
  const auto t0 = std::chrono::steady_clock::now();
  sv::ArrayD result;
  if (cuda) {
    sv::cuda::WarpConfig cfg;
    cfg.method = method;
    cfg.boundary = boundary;
    cfg.cval = args.cval;
    cfg.kernel = kernel;
    result = sv::ArrayD::from(
        sv::cuda::warp(sv::ArrayF::from(moving), sv::ArrayF::from(grid), delta, cfg));
  } else {
    result =
        single ? warped<float>(moving, grid, delta, opt) : warped<double>(moving, grid, delta, opt);
  }
  const double seconds = seconds_since(t0);
  sv::ArrayD det;
  DetStats stats;
  double seconds_det = 0;
  const bool want_det = !args.jacobian.empty() || args.common.json;
  if (want_det) {
    const auto t1 = std::chrono::steady_clock::now();
    det = sv::ffd_jacobian_determinant_field(grid, delta, moving.dims(), args.common.threads);
    seconds_det = seconds_since(t1);
    stats = det_stats(det);
  }

  sv::DType dtype = single ? sv::DType::F32 : sv::DType::F64;
  std::size_t clipped = 0;
  if (ext == ".png") {
    double input_max = -HUGE_VAL;
    for (double v : moving.vec()) input_max = std::max(input_max, v);
    dtype = png_dtype(in.dtype, input_max);
    const double full = sv::dtype_full_scale(dtype);
    for (double v : result.vec())
      if (v < -0.5 || v >= full + 0.5) ++clipped;
    if (clipped)
      std::fprintf(stderr,
                   "splinetool: warning: %s: %zu of %zu values lie outside [0, %s] and are "
                   "clipped (%s PNG; values are written as they are, rounded)\n",
                   shown(args.out).c_str(), clipped, result.size(), sv::format_number(full).c_str(),
                   sv::dtype_name(dtype));
  }
  sv::save_any(args.out, result, dtype, in.channel_axis, in.geometry);
  if (!args.jacobian.empty())
    sv::save_any(args.jacobian, det, single ? sv::DType::F32 : sv::DType::F64, false, in.geometry);

  if (args.common.json) {
    Json j{{"command", "warp"},
           {"moving", args.moving},
           {"grid", args.grid},
           {"out", args.out},
           {"shape", moving.dims()},
           {"channels", moving.channels()},
           {"grid_shape", grid.dims()},
           {"spacing", delta},
           {"method", sv::method_name(method)},
           {"mode", sv::boundary_scipy_name(boundary)},
           {"cval", args.cval},
           {"precision", precision},
           {"backend", args.backend},
           {"kernel", cuda ? Json(sv::cuda::ffd_kernel_name(kernel)) : Json(nullptr)},
           {"dtype", sv::dtype_name(dtype)},
           {"voxels", moving.points()},
           {"seconds", seconds},
           {"threads", args.common.threads},
           {"jacobian", args.jacobian.empty() ? Json(nullptr) : Json(args.jacobian)}};
    j.update(det_json(stats, seconds_det));
    if (ext == ".png") j["clipped"] = clipped;
    print_json(j);
  }
}

namespace {

// One image of `register`: one channel, rank 2 or 3, finite values; errors name it.
sv::Loaded load_register_image(const std::string& path, const char* role) {
  sv::Loaded in = sv::load_any(path, false);
  const sv::ArrayD& a = in.array;
  const std::string where = std::string("register: ") + role + " '" + shown(path) + "'";
  if (a.channels() != 1)
    throw sv::Error(where + " has " + std::to_string(a.channels()) +
                    " channels; register takes one (convert it to grey first)");
  if (a.rank() != 2 && a.rank() != 3)
    throw sv::Error(where + " is " + std::to_string(a.rank()) + "-D (" +
                    sv::describe_shape(a.dims(), a.channels()) +
                    "); register takes 2-D images and 3-D volumes");
  const sv::NonFinite nf = sv::scan_nonfinite(a);
  if (nf.count)
    throw sv::Error(where + ": " + sv::describe_nonfinite(nf, a.dims(), a.channels(), false) +
                    "; the similarity cannot be computed over it");
  return in;
}

Json level_json(const sv::FfdLevelHistory& h) {
  return Json{{"image_shape", h.image_shape},
              {"spacing", h.spacing},
              {"iterations", h.iterations},
              {"evaluations", h.evaluations},
              {"stop", h.stop},
              {"similarity_start", h.ssd.empty() ? Json(nullptr) : Json(h.ssd.front())},
              {"similarity_end", h.ssd.empty() ? Json(nullptr) : Json(h.ssd.back())},
              {"bending_energy_end", h.energy.empty() ? Json(nullptr) : Json(h.energy.back())},
              {"objective_start", h.objective.empty() ? Json(nullptr) : Json(h.objective.front())},
              {"objective_end", h.objective.empty() ? Json(nullptr) : Json(h.objective.back())}};
}

// Root mean square of a - b.
double rms_difference(const sv::ArrayD& a, const sv::ArrayD& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(s / static_cast<double>(a.size()));
}

}  // namespace

void run_register(const RegisterArgs& args) {
  const char* cmd = "register";
  const DeviceChoice dc =
      device_choice(cmd, args.backend, args.precision, args.kernel,
                    "float field and coefficients; sums, optimiser and bending energy in double");
  const bool cuda = dc.cuda;
  const std::string& precision = dc.precision;
  const sv::cuda::FfdKernel kernel = dc.kernel;
  if (args.metric != "nmi" && args.metric != "ssd")
    throw UsageError("register: --metric must be nmi or ssd, got '" +
                     sv::printable(args.metric, 40) + "'");
  if (args.optimizer != "lbfgs" && args.optimizer != "gd")
    throw UsageError("register: --optimizer must be lbfgs or gd, got '" +
                     sv::printable(args.optimizer, 40) + "'");
  if (!(args.bending >= 0) || !std::isfinite(args.bending))
    throw UsageError("register: --bending must be a finite weight >= 0");
  if (!(args.tolerance >= 0) || !std::isfinite(args.tolerance))
    throw UsageError("register: --tolerance must be a finite number >= 0");
  check_output(args.out, {".npy", ".nii", ".nii.gz"}, cmd, "OUT",
               " (.npy: the grid in this tool's convention; .nii/.nii.gz: a NiftyReg "
               "control-point grid for FIXED, as reg_f3d -cpp writes)");
  if (!args.warped.empty())
    check_output(args.warped, {".npy", ".nrrd", ".nhdr", ".nii", ".nii.gz", ".tif", ".tiff"}, cmd,
                 "--warped");
  if (!args.jacobian.empty()) check_output(args.jacobian, kJacobianOut, cmd, "--jacobian");
  check_distinct({{"OUT", args.out}, {"--warped", args.warped}, {"--jacobian", args.jacobian}},
                 {{"FIXED", args.fixed}, {"MOVING", args.moving}}, cmd);
  apply_input_options(args.common);

  const sv::Loaded fixed_in = load_register_image(args.fixed, "FIXED");
  const sv::Loaded moving_in = load_register_image(args.moving, "MOVING");
  const sv::ArrayD& fixed = fixed_in.array;
  const sv::ArrayD& moving = moving_in.array;
  if (fixed.dims() != moving.dims())
    throw sv::Error("register: FIXED '" + shown(args.fixed) + "' (" +
                    sv::describe_shape(fixed.dims(), 1) + ") and MOVING '" + shown(args.moving) +
                    "' (" + sv::describe_shape(moving.dims(), 1) +
                    ") differ in shape; register needs both on the same voxel grid (resample "
                    "one first)");
  sv::FfdRegistrationOptions opt;
  opt.spacing = spacing_for(args.spacing, fixed.rank(), cmd);
  opt.levels = args.levels;
  opt.iterations = args.iterations;
  opt.bending_weight = args.bending;
  opt.metric = args.metric == "nmi" ? sv::FfdMetric::Nmi : sv::FfdMetric::Ssd;
  opt.bins = args.bins;
  opt.optimizer =
      args.optimizer == "gd" ? sv::FfdOptimizer::GradientDescent : sv::FfdOptimizer::Lbfgs;
  opt.tolerance = args.tolerance;
  opt.threads = args.common.threads;

  const auto t0 = std::chrono::steady_clock::now();
  sv::FfdRegistrationResult r;
  if (cuda)
    r = sv::cuda::register_ffd(sv::ArrayF::from(fixed), sv::ArrayF::from(moving), opt, kernel);
  else if (precision == "single")
    r = sv::register_ffd(sv::ArrayF::from(fixed), sv::ArrayF::from(moving), opt);
  else
    r = sv::register_ffd(fixed, moving, opt);
  const double seconds = seconds_since(t0);

  const std::string ext = extension(args.out);
  if (ext == ".npy")
    sv::save_npy(args.out, r.grid, sv::DType::F64, true);
  else
    sv::save_niftyreg_grid(args.out, r.grid, r.spacing, fixed_in.geometry);

  // The result: MOVING warped onto FIXED (cubic, the registration's reflect extension), in
  // double, for the figures and --warped.
  sv::WarpOptions wo;
  wo.threads = args.common.threads;
  const sv::ArrayD warped = sv::warp(moving, r.grid, r.spacing, wo);
  if (!args.warped.empty())
    sv::save_any(args.warped, warped, precision == "single" ? sv::DType::F32 : sv::DType::F64,
                 false, fixed_in.geometry);
  DetStats stats;
  double seconds_det = 0;
  if (!args.jacobian.empty() || args.common.json) {
    const auto t1 = std::chrono::steady_clock::now();
    const sv::ArrayD det =
        sv::ffd_jacobian_determinant_field(r.grid, r.spacing, fixed.dims(), args.common.threads);
    seconds_det = seconds_since(t1);
    stats = det_stats(det);
    if (!args.jacobian.empty())
      sv::save_any(args.jacobian, det, precision == "single" ? sv::DType::F32 : sv::DType::F64,
                   false, fixed_in.geometry);
  }
  if (args.common.json) {
    Json levels = Json::array();
    for (const sv::FfdLevelHistory& h : r.levels) levels.push_back(level_json(h));
    Json j{{"command", "register"},
           {"fixed", args.fixed},
           {"moving", args.moving},
           {"out", args.out},
           {"out_format", ext == ".npy" ? "npy" : "niftyreg"},
           {"shape", fixed.dims()},
           {"grid_shape", r.grid.dims()},
           {"spacing", r.spacing},
           {"metric", args.metric},
           {"bins", args.metric == "nmi" ? Json(args.bins) : Json(nullptr)},
           {"bending", args.bending},
           {"optimizer", args.optimizer},
           {"precision", precision},
           {"backend", args.backend},
           {"kernel", cuda ? Json(sv::cuda::ffd_kernel_name(kernel)) : Json(nullptr)},
           {"iterations", r.iterations},
           {"levels", levels},
           {"rms_before", rms_difference(moving, fixed)},
           {"rms_after", rms_difference(warped, fixed)},
           {"seconds", seconds},
           {"seconds_by_stage",
            {{"field", r.time.field},
             {"warp", r.time.warp},
             {"gradient", r.time.gradient},
             {"regulariser", r.time.regulariser},
             {"setup", r.time.setup}}},
           {"threads", args.common.threads}};
    j.update(det_json(stats, seconds_det));
    print_json(j);
  }
}

// ---- The command line ------------------------------------------------------------------------

namespace {

void add_shared(CLI::App* sub, CommonArgs& common, std::string& spacing, std::string& jacobian) {
  sub->add_option("--spacing", spacing,
                  "control-point spacing in voxels, a whole number >= 1 for every axis or one "
                  "per axis in array order (D or D0,D1[,D2]); required for a .npy/NRRD GRID, "
                  "taken from a NiftyReg GRID's header")
      ->type_name("D[,D..]");
  sub->add_option("--jacobian", jacobian,
                  "also write the Jacobian determinant of x -> x + u(x) at every voxel (.npy, "
                  ".nrrd/.nhdr, .nii/.nii.gz or .tif/.tiff)")
      ->type_name("JOUT");
  sub->add_flag("--json", common.json, "print a JSON report on stdout");
  sub->add_option("--threads", common.threads, "CPU threads (0 = all hardware threads)")
      ->type_name("N")
      ->check(CLI::Range(0u, 4096u))
      ->capture_default_str();
  sub->add_flag("--allow-special-files", common.allow_special,
                "also read inputs that are pipes or devices");
  sub->add_option("--volume", common.volume, "which volume of a 4-D NIfTI input to read, from 0")
      ->type_name("INDEX")
      ->check(CLI::Range(0L, 2147483647L));
}

const char* const kGridHelp =
    "control grid: a .npy of shape (M_z, M_y, M_x, 3) or (M_y, M_x, 2), displacements in voxels, "
    "the last axis the components in array axis order (z, y, x); control point j of an axis at "
    "voxel (j - 1) * D; at least floor((N - 1) / D) + 4 points per axis. Or a NiftyReg "
    "control-point grid (.nii/.nii.gz, reg_f3d -cpp) with --reference REF, the image it was "
    "computed for";

}  // namespace

void add_ffd_commands(CLI::App& app, FfdCommands& c) {
  FfdArgs& f = c.ffd;
  c.ffd_app = app.add_subcommand(
      "ffd",
      "the dense displacement field of a cubic B-spline control grid (OUT: shape (N..., R), "
      "float32 or --double), optionally its Jacobian determinant map");
  CLI::App* ffd = c.ffd_app;
  ffd->add_option("GRID", f.grid, kGridHelp)->required();
  ffd->add_option("OUT", f.out, "the field: .npy or .nrrd/.nhdr (a vector per voxel)")->required();
  CLI::Option* shape =
      ffd->add_option("--shape", f.shape, "the image's extents in array order, N0,N1[,N2]")
          ->type_name("N0,N1[,N2]");
  CLI::Option* ref = ffd->add_option("--reference", f.reference,
                                     "take the shape and geometry from this image (NRRD and "
                                     "NIfTI outputs keep the geometry)")
                         ->type_name("IMAGE");
  shape->excludes(ref);
  ffd->add_flag("--double", f.double_precision, "write float64 (default float32)");
  add_shared(ffd, f.common, f.spacing, f.jacobian);

  WarpArgs& w = c.warp;
  c.warp_app = app.add_subcommand(
      "warp",
      "resample MOVING at x + u(x) for the field of a control grid (same shape and geometry; "
      "dtype as resample's)");
  CLI::App* warp = c.warp_app;
  warp->add_option("MOVING", w.moving, "image or volume (any format the tool reads)")->required();
  warp->add_option("GRID", w.grid, kGridHelp)->required();
  warp->add_option("OUT", w.out,
                   "the warped image: .npy, .png, .nrrd/.nhdr, .nii/.nii.gz or .tif/.tiff (NRRD "
                   "and NIfTI keep MOVING's geometry)")
      ->required();
  warp->add_option("--method", w.method, "interpolation method")
      ->type_name("M")
      ->check(
          CLI::IsMember({"nearest", "linear", "cubic-unfiltered", "cubic", "quintic", "septic"}))
      ->capture_default_str();
  CLI::Option* boundary =
      warp->add_option("--boundary", w.mode,
                       "as resample's: reflect (half-sample symmetric), mirror (whole-sample "
                       "symmetric) or periodic; --mode takes every scipy.ndimage mode")
          ->type_name("MODE")
          ->check(CLI::IsMember({"reflect", "mirror", "periodic"}));
  CLI::Option* mode =
      warp->add_option(
              "--mode", w.mode,
              "boundary mode, scipy.ndimage's names: reflect = grid-mirror, mirror, "
              "grid-wrap (= periodic), wrap, nearest, constant or grid-constant (with --cval)")
          ->type_name("MODE")
          ->check(CLI::IsMember({"reflect", "grid-mirror", "mirror", "periodic", "grid-wrap",
                                 "wrap", "nearest", "constant", "grid-constant"}))
          ->capture_default_str();
  mode->excludes(boundary);
  warp->add_option("--cval", w.cval, "the value outside for --mode constant and grid-constant")
      ->type_name("V")
      ->capture_default_str();
  warp->add_option("--precision", w.precision,
                   "single: float samples, grid, field and coefficients (the sampler accumulates "
                   "in double; float32 output); double: all double (float64 output). Default: "
                   "double on the CPU, single with --backend cuda (the only one it has)")
      ->type_name("P")
      ->check(CLI::IsMember({"single", "double"}));
  warp->add_option("--backend", w.backend,
                   "cpu (sv::warp) or cuda (the field by a CUDA FFD kernel, the spline "
                   "prefiltered and sampled on the GPU; every method and mode)")
      ->type_name("B")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  warp->add_option("--kernel", w.kernel,
                   "--backend cuda: the field kernel, texture, per-voxel, tile-lerp or tile-fma")
      ->type_name("K")
      ->check(CLI::IsMember({"texture", "per-voxel", "tile-lerp", "tile-fma"}))
      ->capture_default_str();
  warp->add_option("--reference", w.reference,
                   "with a NiftyReg GRID: the image it was computed for (reg_f3d -ref); MOVING "
                   "must lie on its voxel grid")
      ->type_name("REF");
  warp->add_flag("--channels", w.channels,
                 "the last axis of a .npy MOVING is channels (1..4); colour images imply it");
  add_shared(warp, w.common, w.spacing, w.jacobian);

  RegisterArgs& g = c.reg;
  c.register_app = app.add_subcommand(
      "register",
      "the cubic B-spline control grid that warps MOVING onto FIXED (intensity-based FFD "
      "registration as NiftyReg's reg_f3d: NMI or SSD plus bending energy, L-BFGS, "
      "multi-resolution); OUT as `warp` and `ffd` take it");
  CLI::App* reg = c.register_app;
  reg->add_option("FIXED", g.fixed, "the reference image or volume (any format the tool reads)")
      ->required();
  reg->add_option("MOVING", g.moving, "the image to warp onto FIXED (same shape)")->required();
  reg->add_option("OUT", g.out,
                  "the control grid: .npy (shape (M..., R), displacements in voxels, float64) or "
                  ".nii/.nii.gz (a NiftyReg control-point grid for FIXED, float32)")
      ->required();
  reg->add_option("--metric", g.metric,
                  "nmi: normalised mutual information from a joint histogram with cubic "
                  "B-spline Parzen windows (any two modalities); ssd: sum of squared "
                  "differences (one modality)")
      ->type_name("M")
      ->check(CLI::IsMember({"nmi", "ssd"}))
      ->capture_default_str();
  reg->add_option("--bins", g.bins, "--metric nmi: histogram bins per image")
      ->type_name("N")
      ->check(CLI::Range(8, 1024))
      ->capture_default_str();
  reg->add_option("--levels", g.levels, "resolution levels, each halving the images")
      ->type_name("N")
      ->check(CLI::Range(1, 10))
      ->capture_default_str();
  reg->add_option("--iterations", g.iterations, "the most optimiser iterations per level")
      ->type_name("N")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  reg->add_option("--bending", g.bending, "the weight of the bending energy (reg_f3d's -be)")
      ->type_name("W")
      ->capture_default_str();
  reg->add_option("--optimizer", g.optimizer, "lbfgs or gd (gradient descent)")
      ->type_name("O")
      ->check(CLI::IsMember({"lbfgs", "gd"}))
      ->capture_default_str();
  reg->add_option("--tolerance", g.tolerance,
                  "stop a level when an iteration lowers the objective by less than this "
                  "fraction of it")
      ->type_name("T")
      ->capture_default_str();
  reg->add_option("--precision", g.precision,
                  "single: float images, field and coefficients; double (the CPU's default)")
      ->type_name("P")
      ->check(CLI::IsMember({"single", "double"}));
  reg->add_option("--backend", g.backend,
                  "cpu or cuda (the field, warp and gradient on the GPU; the same optimiser)")
      ->type_name("B")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  reg->add_option("--kernel", g.kernel,
                  "--backend cuda: the field kernel, texture, per-voxel, tile-lerp or tile-fma")
      ->type_name("K")
      ->check(CLI::IsMember({"texture", "per-voxel", "tile-lerp", "tile-fma"}))
      ->capture_default_str();
  reg->add_option("--warped", g.warped,
                  "also write MOVING warped by the result (cubic; FIXED's geometry): .npy, "
                  ".nrrd/.nhdr, .nii/.nii.gz or .tif/.tiff")
      ->type_name("WOUT");
  add_shared(reg, g.common, g.spacing, g.jacobian);
  reg->get_option("--spacing")
      ->description(
          "control-point spacing at the finest level in voxels, D or D0,D1[,D2] in array "
          "order (reg_f3d's default: 5)")
      ->capture_default_str();
}

void run_ffd_commands(const FfdCommands& c) {
  if (c.ffd_app && c.ffd_app->parsed()) run_ffd(c.ffd);
  if (c.warp_app && c.warp_app->parsed()) run_warp(c.warp);
  if (c.register_app && c.register_app->parsed()) run_register(c.reg);
}

}  // namespace splinetool
