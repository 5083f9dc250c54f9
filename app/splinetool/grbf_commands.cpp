// splinetool sample/resample --method grbf (grbf_commands.h): load IN, solve for the GRBF weights
// (exact and separable, or the published blocks with --grbf-blocks), evaluate at COORDS or on the
// resampled grid, write OUT and report the system's condition number, the support radius and the
// solve and evaluation times. --backend cuda solves and evaluates the exact scheme on the GPU
// (cuda_grbf.h); the blocked scheme is the CPU's only.
#include "grbf_commands.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "splineview/array.h"
#include "splineview/cuda_grbf.h"
#include "splineview/cuda_memory.h"
#include "splineview/error.h"
#include "splineview/geometry.h"
#include "splineview/grbf.h"
#include "splineview/io.h"
#include "splineview/text.h"
#include "splineview/transform.h"

namespace splinetool {
namespace {

using Json = nlohmann::json;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<double> parse_numbers(const std::string& text, char sep, const char* option) {
  std::vector<double> v;
  std::size_t i = 0;
  while (i <= text.size()) {
    const std::size_t j = std::min(text.find(sep, i), text.size());
    const std::string part = text.substr(i, j - i);
    std::size_t used = 0;
    double x = 0;
    try {
      x = std::stod(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (part.empty() || used != part.size() || !std::isfinite(x))
      throw UsageError(std::string(option) + " '" + shown(text) + "': '" + shown(part) +
                       "' is not a number");
    v.push_back(x);
    i = j + 1;
  }
  return v;
}

std::vector<double> sigma_of(const GrbfArgs& g, std::size_t rank, const char* command) {
  const std::vector<double> s = parse_numbers(g.sigma, ',', "--sigma");
  if (s.size() != 1 && s.size() != rank)
    throw UsageError(std::string(command) + ": --sigma " + g.sigma + " gives " +
                     std::to_string(s.size()) + " values for a " + std::to_string(rank) +
                     "-D input; give one, or one per axis in array order");
  for (double v : s)
    if (!(v > 0 && v <= 64))
      throw UsageError(std::string(command) + ": --sigma must be in (0, 64] samples, got " +
                       sv::format_number(v));
  return s;
}

std::vector<std::size_t> blocks_of(const GrbfArgs& g, std::size_t rank, const char* command) {
  const std::vector<double> b = parse_numbers(g.blocks, 'x', "--grbf-blocks");
  if (b.size() != 1 && b.size() != rank)
    throw UsageError(std::string(command) + ": --grbf-blocks " + g.blocks + " gives " +
                     std::to_string(b.size()) + " sizes for a " + std::to_string(rank) +
                     "-D input; give B or one per axis (BxB, BxBxB)");
  std::vector<std::size_t> out;
  for (double v : b) {
    if (!(v >= 1 && v <= 4096 && v == std::floor(v)))
      throw UsageError(std::string(command) + ": --grbf-blocks sizes must be whole numbers in " +
                       "1..4096, got " + sv::format_number(v));
    out.push_back(static_cast<std::size_t>(v));
  }
  return out;
}

sv::Loaded load(const std::string& path, bool channels, const CommonArgs& common) {
  if (path == "-") return load_stdin_npy(channels);
  if (common.raw.empty()) return sv::load_any(path, channels);
  return sv::load_any(path, channels, sv::parse_raw_spec(common.raw));
}

void refuse_common(const CommonArgs& common, const std::string& precision, const std::string& mode,
                   const std::string& boundary, const char* command) {
  if (common.backend != "cpu" && common.backend != "cuda")
    throw UsageError(std::string(command) + ": --method grbf runs on --backend cpu or cuda; " +
                     common.backend + " has no GRBF");
  std::string why;
  if (common.backend == "cuda" && !sv::cuda::available(&why))
    throw sv::Error("--backend cuda cannot run here: " + why + "; use --backend cpu");
  if (!mode.empty() || boundary != "reflect")
    throw UsageError(std::string(command) +
                     ": --method grbf has no boundary mode (the sum runs over the grid's samples "
                     "only); drop --mode/--boundary");
  if (!precision.empty() && precision != "single" && precision != "double")
    throw UsageError(std::string(command) + ": --precision must be single or double");
  if (common.allow_nonfinite)
    throw UsageError(std::string(command) +
                     ": --method grbf needs finite samples (every weight depends on every "
                     "sample); --allow-nonfinite is not supported");
}

// What both commands report about the system.
template <class T>
Json weights_json(const sv::GrbfWeights<T>& w) {
  Json axes = Json::array();
  for (const auto& a : w.system.axes)
    axes.push_back({{"n", a.n},
                    {"sigma", a.sigma},
                    {"lambda_min", a.lambda_min},
                    {"lambda_max", a.lambda_max},
                    {"condition", a.condition},
                    {"exact", a.exact}});
  return {{"condition", w.system.condition},
          {"axes", axes},
          {"radius", w.radius},
          {"max_abs_weight", w.max_abs_weight},
          {"max_abs_sample", w.max_abs_sample},
          {"truncation_bound", w.truncation_bound}};
}

// The solved interpolant: exact or blocked, in T.
template <class T>
struct Solved {
  bool blocked = false;
  bool cuda = false;  // solved on the GPU (sv::cuda, cuda_grbf.h), evaluated there too
  sv::GrbfWeights<T> exact;
  sv::GrbfBlocked<T> blocks;
  double seconds = 0;
  Json report;
};

template <class T>
Solved<T> solve(const sv::ArrayD& samples, const GrbfArgs& g, const std::vector<double>& sigma,
                const char* command, unsigned threads, bool cuda) {
  Solved<T> s;
  s.cuda = cuda;
  const sv::Array<T> f = sv::Array<T>::from(samples);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    if (g.blocks.empty()) {
      sv::GrbfOptions o;
      o.sigma = sigma;
      o.ridge = g.ridge;
      o.threads = threads;
      s.exact = cuda ? sv::cuda::grbf_solve(f, o) : sv::grbf_solve(f, o);
      s.seconds = seconds_since(t0);
      s.report = weights_json(s.exact);
      s.report["scheme"] = "exact";
    } else {
      if (cuda)
        throw UsageError(std::string(command) +
                         ": --grbf-blocks (the published scheme) runs on --backend cpu only");
      if (g.ridge != 0)
        throw UsageError(std::string(command) +
                         ": --ridge applies to the exact solve, not to --grbf-blocks (the "
                         "published scheme has no regularisation)");
      sv::GrbfBlockOptions o;
      o.sigma = sigma;
      o.block = blocks_of(g, samples.rank(), command);
      o.overlap = g.overlap;
      o.threads = threads;
      s.blocked = true;
      s.blocks = sv::grbf_blocked_solve(f, o);
      s.seconds = seconds_since(t0);
      std::size_t count = s.blocks.blocks.size();
      double wmax = 0;
      for (const auto& b : s.blocks.blocks) wmax = std::max(wmax, b.max_abs_weight);
      s.report = {{"scheme", "blocked"},
                  {"block", o.block},
                  {"overlap", o.overlap},
                  {"blocks", count},
                  {"seconds_inverse", s.blocks.seconds_inverse},
                  {"seconds_multiply", s.blocks.seconds_multiply},
                  {"max_abs_weight", wmax}};
    }
  } catch (const UsageError&) {
    throw;
  } catch (const sv::Error& e) {
    throw sv::Error(std::string(command) + " --method grbf: " + e.what());
  }
  return s;
}

template <class T>
void evaluate(const Solved<T>& s, const std::vector<double>& positions, std::size_t m, double* out,
              unsigned threads) {
  if (s.blocked) {
    sv::grbf_blocked_sample(s.blocks, positions.data(), m, out, threads);
  } else if (s.cuda) {
    sv::cuda::grbf_sample(s.exact, positions.data(), m, out);
  } else {
    sv::GrbfEvalOptions e;
    e.threads = threads;
    sv::grbf_sample(s.exact, positions.data(), m, out, e);
  }
}

void report(const Json& j, const std::string& out) {
  const std::string text = j.dump(2) + "\n";
  std::fputs(text.c_str(), out == "-" ? stderr : stdout);
}

template <class T>
void sample_in(const SampleArgs& args, const GrbfArgs& g, const char* prec) {
  sv::Loaded in = load(args.in, args.channels, args.common);
  const std::size_t rank = in.array.rank(), C = in.array.channels();
  const std::vector<double> sigma = sigma_of(g, rank, "sample");
  sv::Loaded c = args.coords == "-" ? load_stdin_npy(false) : sv::load_npy(args.coords, false);
  if (c.dtype != sv::DType::F32 && c.dtype != sv::DType::F64)
    throw sv::Error("sample: coordinates in '" + shown(args.coords) + "' are " +
                    sv::dtype_name(c.dtype) + "; they must be float32 or float64");
  const std::vector<std::size_t>& d = c.array.dims();
  if (!((d.size() == 2 && d[1] == rank) || (d.size() == 1 && rank == 1)))
    throw sv::Error("sample: coordinates in '" + shown(args.coords) + "' must have shape (M, " +
                    std::to_string(rank) + ") for the " + std::to_string(rank) + "-D input");
  const std::size_t m = d[0];
  const Solved<T> s =
      solve<T>(in.array, g, sigma, "sample", args.common.threads, args.common.backend == "cuda");
  sv::ArrayD out({m}, C);
  const auto t1 = std::chrono::steady_clock::now();
  evaluate(s, c.array.vec(), m, out.data(), args.common.threads);
  const double seconds_eval = seconds_since(t1);
  if (args.out == "-")
    sv::write_npy_stdout(out, sv::DType::F64, in.channel_axis);
  else
    sv::save_npy(args.out, out, sv::DType::F64, in.channel_axis);
  if (args.common.json) {
    Json j = s.report;
    j.update({{"command", "sample"},
              {"method", "grbf"},
              {"backend", args.common.backend},
              {"sigma", sv::grbf_sigma_per_axis(sigma, rank)},
              {"ridge", g.ridge},
              {"precision", prec},
              {"points", m},
              {"channels", C},
              {"seconds_solve", s.seconds},
              {"seconds_evaluate", seconds_eval},
              {"seconds", s.seconds + seconds_eval}});
    report(j, args.out);
  }
}

// One resampling step's output positions: per axis (zoom, shape, shift) or, for a 2-D rotation,
// one (y, x) row per output pixel.
struct Grid {
  std::vector<std::size_t> out_dims;
  std::vector<std::vector<double>> axes;  // separable steps
  std::vector<double> points;             // rotation
  sv::Vec3 scale{1, 1, 1}, offset{0, 0, 0};
};

Grid plan_step(const ResampleArgs& args, const std::vector<std::size_t>& in_dims) {
  const std::size_t rank = in_dims.size();
  Grid g;
  g.out_dims = in_dims;
  auto per_axis = [&](const std::vector<double>& v, const char* option) {
    if (v.size() == 1) return std::vector<double>(rank, v[0]);
    if (v.size() == rank) return v;
    throw sv::Error("resample: " + std::string(option) + " gives " + std::to_string(v.size()) +
                    " values for the " + std::to_string(rank) +
                    "-D input; give one, or one per axis in array order");
  };
  if (args.has_rotate) {
    if (rank != 2 || !args.axes.empty() || args.reshape)
      throw UsageError(
          "resample: --method grbf rotates 2-D inputs in their plane only (no --axes, no "
          "--reshape); use sample with COORDS for other transforms");
    const double angle = std::fmod(args.rotate, 360.0);
    const double c = sv::cosdg(angle), s = sv::sindg(angle);
    const double cy = (static_cast<double>(in_dims[0]) - 1) / 2,
                 cx = (static_cast<double>(in_dims[1]) - 1) / 2;
    g.points.reserve(in_dims[0] * in_dims[1] * 2);
    for (std::size_t y = 0; y < in_dims[0]; ++y)
      for (std::size_t x = 0; x < in_dims[1]; ++x) {  // scipy.ndimage.rotate's matrix
        const double oy = static_cast<double>(y) - cy, ox = static_cast<double>(x) - cx;
        g.points.push_back(c * oy + s * ox + cy);
        g.points.push_back(-s * oy + c * ox + cx);
      }
    return g;
  }
  if (args.has_shift) {
    const std::vector<double> sh = per_axis(args.shift, "--shift");
    for (std::size_t d = 0; d < rank; ++d) g.axes.push_back(sv::shift_positions(in_dims[d], sh[d]));
    return g;
  }
  std::vector<double> out(rank);
  if (args.has_shape) {
    if (args.shape.size() != rank)
      throw sv::Error("resample: --shape gives " + std::to_string(args.shape.size()) +
                      " extents for the " + std::to_string(rank) + "-D input");
    for (std::size_t d = 0; d < rank; ++d) out[d] = static_cast<double>(args.shape[d]);
  } else {
    const std::vector<double> z = per_axis(args.zoom, "--zoom");
    for (std::size_t d = 0; d < rank; ++d)
      out[d] = std::nearbyint(static_cast<double>(in_dims[d]) * z[d]);
  }
  double total = 1;
  for (std::size_t d = 0; d < rank; ++d) {
    if (out[d] < 1) throw sv::Error("resample: the zoom leaves an empty axis");
    total *= out[d];
  }
  if (total > static_cast<double>(kMaxResultValues))
    throw sv::Error("resample: the result would have " + sv::format_number(total) +
                    " points; the limit is 2^27");
  for (std::size_t d = 0; d < rank; ++d) {
    g.out_dims[d] = static_cast<std::size_t>(out[d]);
    g.axes.push_back(sv::zoom_positions(in_dims[d], g.out_dims[d], args.grid_mode));
    const double in = static_cast<double>(in_dims[d]);
    double z = args.grid_mode ? in / out[d] : (out[d] > 1 ? (in - 1) / (out[d] - 1) : 1.0);
    if (!(z > 0)) z = in / out[d];
    g.scale[rank - 1 - d] = z;
    g.offset[rank - 1 - d] = args.grid_mode ? 0.5 * z - 0.5 : 0.0;
  }
  return g;
}

template <class T>
sv::ArrayD resample_step(const Solved<T>& s, const Grid& grid, std::size_t C, unsigned threads) {
  if (!grid.points.empty()) {
    const std::size_t m = grid.points.size() / 2;
    sv::ArrayD out(grid.out_dims, C);
    evaluate(s, grid.points, m, out.data(), threads);
    return out;
  }
  if (!s.blocked && s.cuda) return sv::Array<double>::from(sv::cuda::grbf_grid(s.exact, grid.axes));
  if (!s.blocked) {
    sv::GrbfEvalOptions e;
    e.threads = threads;
    return sv::Array<double>::from(sv::grbf_grid(s.exact, grid.axes, e));
  }
  // The blocked scheme: every point of the tensor grid.
  const std::size_t rank = grid.axes.size();
  std::size_t m = 1;
  for (const auto& a : grid.axes) m *= a.size();
  std::vector<double> pts(m * rank);
  for (std::size_t i = 0; i < m; ++i) {
    std::size_t r = i;
    for (std::size_t d = rank; d-- > 0;) {
      pts[i * rank + d] = grid.axes[d][r % grid.axes[d].size()];
      r /= grid.axes[d].size();
    }
  }
  sv::ArrayD out(grid.out_dims, C);
  evaluate(s, pts, m, out.data(), threads);
  return out;
}

template <class T>
void resample_in(const ResampleArgs& args, const GrbfArgs& g, const char* prec) {
  sv::Loaded in = load(args.in, args.channels, args.common);
  const std::size_t rank = in.array.rank(), C = in.array.channels();
  const std::vector<double> sigma = sigma_of(g, rank, "resample");
  sv::ArrayD cur = std::move(in.array);
  sv::Geometry geometry = in.geometry;
  double seconds_solve = 0, seconds_eval = 0;
  Json last;
  for (int k = 0; k < args.repeat; ++k) {
    const Grid grid = plan_step(args, cur.dims());
    const Solved<T> s =
        solve<T>(cur, g, sigma, "resample", args.common.threads, args.common.backend == "cuda");
    seconds_solve += s.seconds;
    last = s.report;
    const auto t1 = std::chrono::steady_clock::now();
    cur = resample_step(s, grid, C, args.common.threads);
    seconds_eval += seconds_since(t1);
    geometry = sv::geometry_resampled(geometry, grid.scale, grid.offset);
  }
  const std::string ext = extension(args.out);
  double vmax = 0;
  for (std::size_t i = 0; i < cur.size(); ++i) vmax = std::max(vmax, cur[i]);
  const sv::DType dtype = ext == ".png"                   ? png_dtype(in.dtype, vmax)
                          : std::string(prec) == "single" ? sv::DType::F32
                                                          : sv::DType::F64;
  if (args.out == "-")
    sv::write_npy_stdout(cur, dtype, in.channel_axis);
  else
    sv::save_any(args.out, cur, dtype, in.channel_axis, geometry);
  if (args.common.json) {
    Json j = last;
    j.update({{"command", "resample"},
              {"method", "grbf"},
              {"backend", args.common.backend},
              {"sigma", sv::grbf_sigma_per_axis(sigma, rank)},
              {"ridge", g.ridge},
              {"precision", prec},
              {"shape", cur.dims()},
              {"channels", C},
              {"repeat", args.repeat},
              {"seconds_solve", seconds_solve},
              {"seconds_evaluate", seconds_eval},
              {"seconds", seconds_solve + seconds_eval}});
    report(j, args.out);
  }
}

}  // namespace

void add_grbf_options(CLI::App* sub, GrbfArgs& g, bool method) {
  if (method)
    sub->add_option("--method", g.method,
                    "grbf: Gaussian radial basis function interpolation instead of the B-spline "
                    "(--sigma, --ridge, --grbf-blocks)")
        ->type_name("grbf")
        ->check(CLI::IsMember({"grbf"}));
  g.sigma_opt = sub->add_option("--sigma", g.sigma,
                                "with --method grbf: the Gaussian's standard deviation in "
                                "samples, S or one per axis S0,S1[,S2] (default 1)")
                    ->type_name("S[,S..]");
  g.ridge_opt = sub->add_option("--ridge", g.ridge,
                                "with --method grbf: regularise every axis's kernel matrix as "
                                "A_d + LAMBDA I (the result no longer interpolates)")
                    ->type_name("LAMBDA")
                    ->check(CLI::NonNegativeNumber);
  g.blocks_opt = sub->add_option("--grbf-blocks", g.blocks,
                                 "with --method grbf: the published scheme, dense blocks of B "
                                 "samples per axis (B or BxB[xB]) each solved by an explicit "
                                 "inverse, instead of the exact whole-grid solve")
                     ->type_name("BxB");
  g.overlap_opt = sub->add_option("--overlap", g.overlap,
                                  "with --grbf-blocks: samples each block reaches beyond its tile "
                                  "(tiles of B - 2K), blended linearly where blocks overlap "
                                  "(default 0: the seams)")
                      ->type_name("K")
                      ->check(CLI::Range(0, 1024));
}

bool grbf_requested(const GrbfArgs& g, const std::string& method, const char* command) {
  if (method == "grbf") {
    if (g.overlap_opt && g.overlap_opt->count() > 0 && g.blocks.empty())
      throw UsageError(std::string(command) + ": --overlap goes with --grbf-blocks");
    return true;
  }
  for (CLI::Option* o : {g.sigma_opt, g.ridge_opt, g.blocks_opt, g.overlap_opt})
    if (o && o->count() > 0)
      throw UsageError(std::string(command) + ": " + o->get_name() + " goes with --method grbf");
  return false;
}

void run_grbf_sample(const SampleArgs& args, const GrbfArgs& g) {
  refuse_common(args.common, args.precision, args.mode, args.boundary, "sample");
  if (args.degree_given || args.no_prefilter || args.derivative >= 0)
    throw UsageError(
        "sample: --degree, --no-prefilter and --derivative are B-spline options; --method grbf "
        "takes --sigma");
  if (extension(args.out) != ".npy" && args.out != "-")
    throw UsageError("sample: OUT must be a .npy file");
  if (args.out == args.in || args.out == args.coords)
    throw UsageError("sample: OUT must not be IN or COORDS");
  if (args.precision == "single")
    sample_in<float>(args, g, "single");
  else
    sample_in<double>(args, g, "double");
}

void run_grbf_resample(const ResampleArgs& args, const GrbfArgs& g) {
  refuse_common(args.common, args.precision, args.mode, args.boundary, "resample");
  if (args.no_prefilter || args.point_sample || args.out_of_core || !args.reference.empty() ||
      args.compare_original)
    throw UsageError(
        "resample: --method grbf takes --zoom, --shape, --shift or --rotate with --sigma, "
        "--ridge, --grbf-blocks, --overlap, --precision, --channels, --repeat; not "
        "--no-prefilter, --point-sample, --out-of-core, --reference or --compare-original "
        "(measure with 'splinetool compare')");
  if (!args.has_zoom && !args.has_shape && !args.has_shift && !args.has_rotate)
    throw UsageError("resample: give one of --zoom, --shape, --shift or --rotate");
  const std::string ext = extension(args.out);
  const std::vector<std::string> ok{".npy", ".png",    ".nrrd", ".nhdr",
                                    ".nii", ".nii.gz", ".tif",  ".tiff"};
  if (args.out != "-" && std::find(ok.begin(), ok.end(), ext) == ok.end())
    throw UsageError("resample: OUT must be .npy, .png, .nrrd/.nhdr, .nii/.nii.gz or .tif/.tiff");
  if (args.out == args.in) throw UsageError("resample: OUT must not be IN");
  if (args.precision == "single")
    resample_in<float>(args, g, "single");
  else
    resample_in<double>(args, g, "double");
}

}  // namespace splinetool
