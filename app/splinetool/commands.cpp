// Implementation of the splinetool commands: load, validate, compute on the chosen backend,
// then save (atomically, through the core's savers) and report. See commands.h.
#include "commands.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "backend.h"
#include "splineview/bspline.h"
#include "splineview/cuda_device.h"
#include "splineview/error.h"
#include "splineview/finite.h"
#include "splineview/io.h"
#include "splineview/metrics.h"
#include "splineview/text.h"
#include "splineview/version.h"

namespace splinetool {
namespace {

using Json = nlohmann::json;

// An input array: by its extension, or with --raw as headerless data when the extension names
// no format (COORDS is always .npy and does not come through here).
sv::Loaded load_input(const std::string& path, bool channels, const CommonArgs& common) {
  if (common.raw.empty()) return sv::load_any(path, channels);
  return sv::load_any(path, channels, sv::parse_raw_spec(common.raw));
}

// Lower-case extension including the dot ("" when there is none).
std::string extension(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  const std::size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string e = path.substr(dot);
  std::transform(e.begin(), e.end(), e.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (e == ".gz" && dot >= 4) {  // ".nii.gz" counts as one extension
    std::string stem = path.substr(dot - 4, 4);
    std::transform(stem.begin(), stem.end(), stem.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    if (stem == ".nii" && (slash == std::string::npos || dot - 4 > slash)) return ".nii.gz";
  }
  return e;
}

// A path as messages show it: control bytes escaped, never more than a line.
std::string shown(const std::string& path) {
  return sv::printable(path, 512);
}

// The non-finite policy: NaN/inf in an input is refused with the count and the first index,
// unless --allow-nonfinite (the prefilter's recursion would spread one NaN along every line).
void check_finite(const sv::Loaded& in, const std::string& path, const CommonArgs& common) {
  if (common.allow_nonfinite) return;
  const sv::NonFinite nf = sv::scan_nonfinite(in.array);
  if (nf.count == 0) return;
  throw sv::Error(
      shown(path) + ": " +
      sv::describe_nonfinite(nf, in.array.dims(), in.array.channels(), in.channel_axis) +
      "; pass --allow-nonfinite to process " + (nf.count == 1 ? "it" : "them") + " anyway");
}

// A result computed from finite data that is not finite: the values overflowed the arithmetic.
// Refused (nothing is written) unless --allow-nonfinite.
template <class T>
void check_result(const T* data, std::size_t n, const std::vector<std::size_t>& dims,
                  std::size_t channels, bool channel_axis, const char* command,
                  const char* precision, const CommonArgs& common) {
  if (common.allow_nonfinite) return;
  const sv::NonFinite nf = sv::scan_nonfinite(data, n);
  if (nf.count == 0) return;
  throw sv::Error(std::string(command) + ": the result has " +
                  sv::describe_nonfinite(nf, dims, channels, channel_axis) +
                  ": the input's values are too large for " + precision +
                  " precision arithmetic; nothing was written (--allow-nonfinite writes it)");
}

// --- OUT must not be an input ---------------------------------------------------------------

// The detached data file a .nhdr header names (resolved against the header's folder), or ""
// when there is none that could be read (the loader reports those problems itself).
std::string nhdr_data_file(const std::string& header) {
  std::ifstream f(header, std::ios::binary);
  if (!f) return "";
  std::string line;
  std::size_t read = 0;
  while (read < 65536 && std::getline(f, line)) {
    read += line.size() + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) break;
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, colon);
    if (key != "data file" && key != "datafile") continue;
    std::size_t b = colon + 1;
    while (b < line.size() && line[b] == ' ') ++b;
    std::string value = line.substr(b);
    while (!value.empty() && value.back() == ' ') value.pop_back();
    if (value.empty() || value.rfind("LIST", 0) == 0) return "";
    if (value[0] == '/') return value;
    const std::size_t slash = header.find_last_of('/');
    return slash == std::string::npos ? value : header.substr(0, slash + 1) + value;
  }
  return "";
}

struct Named {
  std::string role;  // "IN", "COORDS", "--reference", "OUT", "the data file of IN", ...
  std::string path;
};

// The files a path stands for: itself and, for a .nhdr header, its detached data file (for OUT:
// the "<stem>.raw.gz" that sv::save_nrrd writes beside it).
std::vector<Named> with_data_file(const Named& n, bool output) {
  std::vector<Named> files{n};
  if (extension(n.path) != ".nhdr") return files;
  std::string data;
  if (output) {
    const std::size_t dot = n.path.find_last_of('.');
    data = n.path.substr(0, dot) + ".raw.gz";
  } else {
    data = nhdr_data_file(n.path);
  }
  if (!data.empty()) files.push_back({"the data file of " + n.role, data});
  return files;
}

// Refuses (UsageError, exit 2) an OUT that is the same file as one of the inputs, however it is
// reached: symbolic links, hard links and ".." all end at the same device and inode, which is
// what is compared (stat follows links). Only existing files can coincide; an OUT that does not
// exist yet cannot be an input. Checked before any input is read.
void check_out_is_not_an_input(const std::string& out, const std::vector<Named>& inputs,
                               const char* command) {
  for (const Named& o : with_data_file({"OUT", out}, true)) {
    struct stat so {};
    if (::stat(o.path.c_str(), &so) != 0) continue;
    for (const Named& given : inputs) {
      if (given.path.empty()) continue;
      for (const Named& i : with_data_file(given, false)) {
        struct stat si {};
        if (::stat(i.path.c_str(), &si) != 0) continue;
        if (so.st_dev == si.st_dev && so.st_ino == si.st_ino)
          throw UsageError(std::string(command) + ": " + o.role + " '" + shown(o.path) +
                           "' is the same file as " + i.role + " '" + shown(i.path) +
                           "'; write the result to another file");
      }
    }
  }
}

enum class Precision { Single, Double };

Precision parse_precision(const std::string& s) {
  if (s == "single") return Precision::Single;
  if (s == "double") return Precision::Double;
  throw sv::Error("unknown precision '" + s + "' (expected single or double)");
}

const char* precision_name(Precision p) {
  return p == Precision::Single ? "single" : "double";
}

// The GPU backends: they evaluate through named fetch flavours and compute in float.
bool is_gpu(const std::string& backend) {
  return backend == "gl" || backend == "cuda";
}

// The boundary mode from --mode (scipy's name) or --boundary; the modes beyond reflect, mirror
// and periodic are CPU only, refused on gl and cuda.
template <class Args>
sv::Boundary resolve_boundary(const Args& args, const char* command) {
  const sv::Boundary b = sv::parse_boundary(args.mode.empty() ? args.boundary : args.mode);
  if (!std::isfinite(args.cval))
    throw UsageError(std::string(command) + ": --cval must be a finite number");
  if (is_gpu(args.common.backend) && !sv::boundary_on_gpu(b))
    throw UsageError(std::string(command) + ": --mode " + sv::boundary_scipy_name(b) +
                     " is CPU only (use --backend cpu); the " + args.common.backend +
                     " backend implements reflect, mirror and grid-wrap (periodic)");
  return b;
}

// --precision as given, or the backend's own when it was left out (double on cpu; single on gl,
// whose textures are float, and on cuda, whose kernels are).
Precision resolve_precision(const std::string& given, const std::string& backend,
                            const char* command) {
  if (given.empty()) return is_gpu(backend) ? Precision::Single : Precision::Double;
  const Precision p = parse_precision(given);
  if (is_gpu(backend) && p == Precision::Double)
    throw UsageError(std::string(command) + ": --backend " + backend +
                     " computes in single precision (" +
                     (backend == "gl" ? "float textures" : "float kernels") +
                     "); use --precision single or leave it out");
  return p;
}

BackendOptions backend_options(const CommonArgs& common) {
  return BackendOptions{common.fetch, common.format};
}

// "a, b or c" (or "a, b, c" with last = ", ").
std::string join_names(const std::vector<std::string>& names, const char* last = " or ") {
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i)
    list += (i == 0 ? "" : (i + 1 == names.size() ? last : ", ")) + names[i];
  return list;
}

// The prefiltered (interpolating cubic) flavours of a GPU backend, in fetch_names() order.
std::vector<std::string> prefiltered_fetches(const std::string& backend) {
  std::vector<std::string> out;
  for (const std::string& f : fetch_names(backend))
    if (fetch_is_prefiltered(f)) out.push_back(f);
  return out;
}

// The report fields every computing command adds: how a GPU backend fetched (null elsewhere),
// the GL texture format (null off gl) and the GPU time of the computation (null without a GPU
// timer).
Json gpu_json(const Backend& backend, const std::string& fetch, const CommonArgs& common) {
  const bool gl = std::string(backend.name()) == "gl";
  const bool gpu = is_gpu(backend.name());
  const std::optional<double> ms = backend.gpu_ms();
  return Json{{"fetch", gpu && !fetch.empty() ? Json(fetch) : Json(nullptr)},
              {"format", gl ? Json(common.format.empty() ? "r32f" : common.format) : Json(nullptr)},
              {"gpu_ms", ms ? Json(*ms) : Json(nullptr)}};
}

// Throws unless OUT's extension is one of `allowed` (checked before any work is done).
void check_output(const std::string& path, const std::vector<std::string>& allowed,
                  const char* command) {
  const std::string e = extension(path);
  if (std::find(allowed.begin(), allowed.end(), e) != allowed.end()) return;
  std::string list;
  for (std::size_t i = 0; i < allowed.size(); ++i)
    list += (i == 0 ? "" : (i + 1 == allowed.size() ? " or " : ", ")) + allowed[i];
  throw UsageError(std::string(command) + ": cannot write '" + shown(path) + "': OUT must end in " +
                   list);
}

// The NumPy shape of an array as a file stores it: dims, plus channels with a channel axis.
Json shape_json(const std::vector<std::size_t>& dims, std::size_t channels, bool channel_axis) {
  Json s = Json::array();
  for (std::size_t d : dims) s.push_back(d);
  if (channel_axis) s.push_back(channels);
  return s;
}

// JSON cannot hold infinities: PSNR of identical arrays (+inf) and of arrays with a non-finite
// mismatch (-inf) is written as null; "identical" tells the two apart.
Json number_or_null(double v) {
  return std::isfinite(v) ? Json(v) : Json(nullptr);
}

// What a measurement is of: the shape of the compared arrays, for the multi-index of the first
// non-finite value of each side ("a": the first array / the result; "b": the second / the
// reference).
struct Measured {
  sv::ErrorStats stats;
  std::vector<std::size_t> dims;
  std::size_t channels = 1;
  bool channel_axis = false;
  double first_a = 0, first_b = 0;  // the first non-finite value of each side

  Json first_json(std::size_t count, std::size_t flat) const {
    if (count == 0) return Json(nullptr);
    return Json(sv::unravel_index(dims, channels, flat, channel_axis));
  }
  std::string first_text(std::size_t count, std::size_t flat, double value) const {
    if (count == 0) return "";
    return std::string(" (") + sv::nonfinite_name(value) + " at " +
           sv::format_index(sv::unravel_index(dims, channels, flat, channel_axis)) + " first)";
  }
};

Json stats_json(const Measured& m) {
  const sv::ErrorStats& s = m.stats;
  return Json{{"max_abs", number_or_null(s.max_abs)},
              {"rms", number_or_null(s.rms)},
              {"sse", number_or_null(s.sse)},
              {"psnr_db", number_or_null(s.psnr)},
              {"count", s.count},
              {"identical", s.identical()},
              {"nonfinite_a", s.nonfinite_a},
              {"nonfinite_b", s.nonfinite_b},
              {"nonfinite_first_a", m.first_json(s.nonfinite_a, s.first_nonfinite_a)},
              {"nonfinite_first_b", m.first_json(s.nonfinite_b, s.first_nonfinite_b)},
              {"nonfinite_mismatch", s.nonfinite_mismatch}};
}

void print_stats(const Measured& m) {
  const sv::ErrorStats& s = m.stats;
  std::printf("max_abs %.9g\nrms     %.9g\nsse     %.9g\npsnr_db %.9g\ncount   %zu\n", s.max_abs,
              s.rms, s.sse, s.psnr, s.count);
  // The non-finite lines only when there is something to say (finite data prints as before).
  if (s.nonfinite_a + s.nonfinite_b > 0) {
    std::printf("nonfinite_a %zu%s\nnonfinite_b %zu%s\nnonfinite_mismatch %zu\n", s.nonfinite_a,
                m.first_text(s.nonfinite_a, s.first_nonfinite_a, m.first_a).c_str(), s.nonfinite_b,
                m.first_text(s.nonfinite_b, s.first_nonfinite_b, m.first_b).c_str(),
                s.nonfinite_mismatch);
  }
  std::printf("identical %s\n", s.identical() ? "yes" : "no");
}

void print_json(const Json& j) {
  std::cout << j.dump(2) << "\n";
}

class Stopwatch {
 public:
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// The positions of `sample`, one row per point, and the rows that hold a non-finite coordinate
// (only with --allow-nonfinite: those rows are evaluated at 0 here and written as NaN).
struct Coordinates {
  std::vector<double> positions;
  std::vector<std::size_t> nonfinite_rows;
};

// Positions beyond this are outside any sensible use (the sampler's own limit).
constexpr double kMaxCoordinate = 1e12;

// Reads the coordinates file of `sample`: (M, rank) or, for a 1-D input, (M,); float32/64.
Coordinates load_coordinates(const std::string& path, std::size_t rank, const CommonArgs& common) {
  sv::Loaded c = sv::load_npy(path, false);
  if (c.dtype != sv::DType::F32 && c.dtype != sv::DType::F64)
    throw sv::Error("sample: coordinates in '" + shown(path) + "' are " + sv::dtype_name(c.dtype) +
                    "; they must be float32 or float64");
  const std::vector<std::size_t>& d = c.array.dims();
  const bool ok = (d.size() == 2 && d[1] == rank) || (d.size() == 1 && rank == 1);
  if (!ok) {
    std::string shape = "(";
    for (std::size_t i = 0; i < d.size(); ++i) shape += (i ? ", " : "") + std::to_string(d[i]);
    shape += d.size() == 1 ? ",)" : ")";
    throw sv::Error("sample: coordinates in '" + shown(path) + "' have shape " + shape + "; a " +
                    std::to_string(rank) + "-D input needs shape (M, " + std::to_string(rank) +
                    ")" + (rank == 1 ? " or (M,)" : ""));
  }
  check_finite(c, path, common);
  Coordinates out;
  out.positions = std::move(c.array.vec());
  std::vector<double>& p = out.positions;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (!std::isfinite(p[i])) {
      const std::size_t row = i / rank;
      if (out.nonfinite_rows.empty() || out.nonfinite_rows.back() != row)
        out.nonfinite_rows.push_back(row);
      continue;
    }
    if (std::fabs(p[i]) > kMaxCoordinate)
      throw sv::Error(shown(path) + ": coordinate " + sv::format_number(p[i]) + " at " +
                      sv::format_index(sv::unravel_index(d, 1, i, false)) +
                      " is beyond +-1e12 sample units");
  }
  for (std::size_t row : out.nonfinite_rows)
    for (std::size_t k = 0; k < rank; ++k) p[row * rank + k] = 0.0;
  return out;
}

Measured measure(const sv::ArrayD& result, const sv::ArrayD& target, double disc, double peak,
                 bool channel_axis) {
  std::vector<unsigned char> mask;
  if (result.rank() == 2 && disc > 0) mask = sv::disc_mask(result.dim(0), result.dim(1), disc);
  Measured m{sv::compare(result, target, mask, peak), result.dims(), result.channels(),
             channel_axis};
  if (m.stats.nonfinite_a > 0) m.first_a = result[m.stats.first_nonfinite_a];
  if (m.stats.nonfinite_b > 0) m.first_b = target[m.stats.first_nonfinite_b];
  return m;
}

// Moves when the element type already matches, converts otherwise.
template <class To, class From>
sv::Array<To> cast(sv::Array<From>&& a) {
  if constexpr (std::is_same_v<To, From>)
    return std::move(a);
  else
    return sv::Array<To>::from(a);
}

// The coefficients of `samples`, computed in T.
template <class T>
sv::ArrayD prefiltered(Backend& backend, sv::ArrayD&& samples, const sv::PrefilterOptions& opt) {
  sv::Array<T> c = cast<T>(std::move(samples));
  backend.prefilter(c, opt);
  return cast<double>(std::move(c));
}

// Samples (prefiltered first unless `prefilter` is false) evaluated at `positions`, in T.
template <class T>
void sampled(Backend& backend, sv::ArrayD&& samples, bool prefilter,
             const sv::PrefilterOptions& popt, const std::vector<double>& positions,
             const sv::SamplerOptions& sopt, double* out) {
  sv::Array<T> c = cast<T>(std::move(samples));
  if (prefilter && sv::interpolation_pad(sopt.boundary, sopt.degree) > 0) {
    // nearest and grid-constant: padded before the prefilter (CPU only; refused on the GPU)
    sv::interpolate(c, positions.data(), positions.size() / c.rank(), out, sopt);
    return;
  }
  if (prefilter) backend.prefilter(c, popt);
  backend.sample(c, positions, out, sopt);
}

// The depth of a PNG written from data of type `input` whose largest value is `input_max`.
// Stored values are written as they are (rounded, clamped to the type): 8-bit and 16-bit
// inputs keep their depth; other data takes 8 bits when its values fit [0, 255], else 16 bits.
// (Decided on the input, so the overshoot of an interpolation is clipped, and said so, rather
// than moving the whole image to 16 bits.)
sv::DType png_dtype(sv::DType input, double input_max) {
  if (input == sv::DType::U8 || input == sv::DType::Bool) return sv::DType::U8;
  if (input == sv::DType::U16) return sv::DType::U16;
  return input_max < 255.5 ? sv::DType::U8 : sv::DType::U16;
}

// Says on stderr (one line each) what writing `a` to a PNG of `t` loses: values outside the
// type's range (clipped) and data that lies within [0, 1] (an image of 0s and 1s: the values
// are not scaled). Returns the clipped count.
std::size_t warn_png_mapping(const std::string& out, const sv::ArrayD& a, sv::DType t) {
  const double full = sv::dtype_full_scale(t);
  std::size_t clipped = 0;
  double lo = HUGE_VAL, hi = -HUGE_VAL;
  for (double v : a.vec()) {
    if (v < -0.5 || v >= full + 0.5) ++clipped;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (clipped)
    std::fprintf(stderr,
                 "splinetool: warning: %s: %s of %s values lie outside [0, %s] and are clipped "
                 "(%s PNG; values are written as they are, rounded)\n",
                 shown(out).c_str(), std::to_string(clipped).c_str(),
                 std::to_string(a.size()).c_str(), sv::format_number(full).c_str(),
                 sv::dtype_name(t));
  if (hi <= 1.0 && lo >= 0.0 && hi > 0.0)
    std::fprintf(stderr,
                 "splinetool: warning: %s: the values lie within [0, 1]; a PNG stores them as "
                 "they are (0 or 1 after rounding), not scaled: write .npy, .tif or .nrrd to "
                 "keep them\n",
                 shown(out).c_str());
  return clipped;
}

// Resamples `args.repeat` times, each step on the previous result, in T.
template <class T>
sv::ArrayD resampled(Backend& backend, sv::ArrayD&& input, const ResampleArgs& args,
                     const sv::ResampleOptions& opt) {
  sv::Array<T> a = cast<T>(std::move(input));
  // Rotation by any finite angle: reduced modulo 360 first (std::fmod is exact), so a huge angle
  // never reaches the trigonometry as a number whose radians overflow.
  const double angle = std::fmod(args.rotate, 360.0);
  for (int k = 0; k < args.repeat; ++k)
    a = args.has_rotate ? backend.rotate(a, angle, opt) : backend.zoom(a, args.zoom, opt);
  return cast<double>(std::move(a));
}

// The extents of every --zoom step (round(N * F) per axis, as sv::zoom computes them), checked
// before any work: no axis may become empty and no step may produce more than kMaxResultValues
// scalars, so the work and the output stay bounded whatever the factor and --repeat.
void check_zoom_steps(const sv::ArrayD& input, const ResampleArgs& args) {
  std::vector<std::size_t> dims = input.dims();
  for (int k = 0; k < args.repeat; ++k) {
    double total = static_cast<double>(input.channels());
    for (std::size_t& d : dims) {
      const double e = std::round(static_cast<double>(d) * args.zoom);
      if (e < 1)
        throw sv::Error("resample: --zoom " + sv::format_number(args.zoom) +
                        " leaves an empty axis" +
                        (k > 0 ? " at step " + std::to_string(k + 1) : "") + " of the " +
                        sv::describe_shape(input.dims(), input.channels()) + " input");
      total *= e;
      d = total <= static_cast<double>(kMaxResultValues) ? static_cast<std::size_t>(e) : 0;
    }
    if (total > static_cast<double>(kMaxResultValues))
      throw sv::Error("resample: --zoom " + sv::format_number(args.zoom) +
                      (args.repeat > 1 ? " (step " + std::to_string(k + 1) + ")" : "") +
                      " would make " + sv::format_number(total) + " values of the " +
                      sv::describe_shape(input.dims(), input.channels()) + " input; the limit is " +
                      std::to_string(kMaxResultValues) + " (2^27) per result");
  }
}

}  // namespace

void run_prefilter(const PrefilterArgs& args) {
  if (args.common.backend == "gl")
    throw UsageError(
        "prefilter: --backend gl does not prefilter on the GPU in this version (its sample and "
        "resample prefilter on the CPU, in float); use --backend cpu");
  std::unique_ptr<Backend> backend = make_backend(args.common.backend);
  sv::check_degree(args.degree, 0, sv::kMaxDegree);
  const sv::PrefilterOptions opt{args.degree, resolve_boundary(args, "prefilter"),
                                 args.common.threads};
  const Precision precision = resolve_precision(args.precision, args.common.backend, "prefilter");
  check_output(args.out, {".npy", ".nrrd", ".nhdr", ".nii", ".nii.gz", ".tif", ".tiff"},
               "prefilter");
  check_out_is_not_an_input(args.out, {{"IN", args.in}}, "prefilter");

  sv::Loaded in = load_input(args.in, args.channels, args.common);
  check_finite(in, args.in, args.common);
  const Stopwatch clock;
  const sv::ArrayD result = precision == Precision::Single
                                ? prefiltered<float>(*backend, std::move(in.array), opt)
                                : prefiltered<double>(*backend, std::move(in.array), opt);
  const double seconds = clock.seconds();
  check_result(result.data(), result.size(), result.dims(), result.channels(), in.channel_axis,
               "prefilter", precision_name(precision), args.common);
  sv::save_any(args.out, result, precision == Precision::Single ? sv::DType::F32 : sv::DType::F64,
               in.channel_axis, in.geometry);
  if (args.common.json) {
    Json j{{"command", "prefilter"},
           {"backend", backend->name()},
           {"degree", args.degree},
           {"boundary", sv::boundary_name(opt.boundary)},
           {"mode", sv::boundary_scipy_name(opt.boundary)},
           {"cval", args.cval},
           {"precision", precision_name(precision)},
           {"shape", shape_json(result.dims(), result.channels(), in.channel_axis)},
           {"seconds", seconds}};
    j.update(gpu_json(*backend, "", args.common));
    print_json(j);
  }
}

void run_sample(const SampleArgs& args) {
  std::unique_ptr<Backend> backend =
      make_backend(args.common.backend, backend_options(args.common));
  sv::check_degree(args.degree, 0, sv::kMaxDegree);
  const sv::Boundary boundary = resolve_boundary(args, "sample");
  const Precision precision = resolve_precision(args.precision, args.common.backend, "sample");
  check_output(args.out, {".npy"}, "sample");

  // On gl and cuda the fetch flavour decides the degree and whether IN is prefiltered.
  const std::string& name = args.common.backend;
  const bool gpu = is_gpu(name);
  const std::string fetch =
      gpu ? (args.common.fetch.empty() ? default_fetch(name) : args.common.fetch) : "";
  int degree = args.degree;
  if (gpu) {
    if (fetch_is_prefiltered(fetch) && args.degree != 3)
      throw UsageError("sample: --fetch " + fetch +
                       " evaluates the cubic B-spline only (--degree 3); degree " +
                       std::to_string(args.degree) + " needs --backend cpu");
    if (!fetch_is_prefiltered(fetch) && args.degree_given && args.degree != fetch_degree(fetch))
      throw UsageError("sample: --fetch " + fetch + " is degree " +
                       std::to_string(fetch_degree(fetch)) + "; --degree " +
                       std::to_string(args.degree) + " applies to the prefiltered flavours (" +
                       join_names(prefiltered_fetches(name), ", ") + ") only");
    degree = fetch_degree(fetch);
    if (args.derivative >= 0 && name == "cuda")
      throw UsageError(
          "sample: --backend cuda evaluates values only, no derivatives; use --backend cpu or gl");
    if (args.derivative >= 0 && !fetch_has_derivative(fetch, name))
      throw UsageError("sample: --fetch " + fetch +
                       " has no derivative on --backend gl (use --fetch otf or precise)");
  }
  if (args.derivative >= 0 && degree == 0)
    throw UsageError("sample: degree 0 (nearest) has no derivative");
  const bool prefilter = !args.no_prefilter && (!gpu || fetch_is_prefiltered(fetch));
  check_out_is_not_an_input(args.out, {{"IN", args.in}, {"COORDS", args.coords}}, "sample");

  sv::Loaded in = load_input(args.in, args.channels, args.common);
  check_finite(in, args.in, args.common);
  const std::size_t rank = in.array.rank(), channels = in.array.channels();
  if (args.derivative >= static_cast<int>(rank))
    throw sv::Error("sample: --derivative " + std::to_string(args.derivative) +
                    " names no axis of the " + std::to_string(rank) + "-D input (axes 0.." +
                    std::to_string(rank - 1) + ")");
  const Coordinates coords = load_coordinates(args.coords, rank, args.common);
  const std::size_t m = coords.positions.size() / rank;

  const sv::PrefilterOptions popt{degree, boundary, args.common.threads};
  const sv::SamplerOptions sopt{degree, boundary, args.derivative, args.common.threads, args.cval};
  sv::ArrayD out({m}, channels);
  const Stopwatch clock;
  if (precision == Precision::Single)
    sampled<float>(*backend, std::move(in.array), prefilter, popt, coords.positions, sopt,
                   out.data());
  else
    sampled<double>(*backend, std::move(in.array), prefilter, popt, coords.positions, sopt,
                    out.data());
  const double seconds = clock.seconds();
  check_result(out.data(), out.size(), out.dims(), channels, in.channel_axis, "sample",
               precision_name(precision), args.common);
  for (std::size_t row : coords.nonfinite_rows)
    for (std::size_t c = 0; c < channels; ++c)
      out[row * channels + c] = std::numeric_limits<double>::quiet_NaN();
  sv::save_npy(args.out, out, sv::DType::F64, in.channel_axis);
  if (args.common.json) {
    Json j{{"command", "sample"},
           {"backend", backend->name()},
           {"degree", degree},
           {"boundary", sv::boundary_name(boundary)},
           {"mode", sv::boundary_scipy_name(boundary)},
           {"cval", args.cval},
           {"precision", precision_name(precision)},
           {"prefilter", prefilter},
           {"derivative", args.derivative >= 0 ? Json(args.derivative) : Json(nullptr)},
           {"shape", shape_json(out.dims(), channels, in.channel_axis)},
           {"nonfinite_rows", coords.nonfinite_rows.size()},
           {"seconds", seconds}};
    j.update(gpu_json(*backend, fetch, args.common));
    print_json(j);
  }
}

void run_resample(const ResampleArgs& args) {
  std::unique_ptr<Backend> backend =
      make_backend(args.common.backend, backend_options(args.common));
  // The numbers are checked while parsing (main.cpp); these guard direct callers.
  if (args.has_zoom == args.has_rotate)
    throw UsageError("resample: give exactly one of --zoom F or --rotate DEG");
  if (args.repeat < 1)
    throw UsageError("resample: --repeat must be at least 1, got " + std::to_string(args.repeat));
  if (args.has_zoom && !(args.zoom > 0 && args.zoom <= kMaxZoom))
    throw UsageError("resample: --zoom must be a number in (0, " + sv::format_number(kMaxZoom) +
                     "], got " + sv::format_number(args.zoom));
  if (args.has_rotate && !std::isfinite(args.rotate))
    throw UsageError("resample: --rotate must be a finite angle in degrees, got " +
                     sv::format_number(args.rotate));
  if (!(args.disc >= 0 && std::isfinite(args.disc)))
    throw UsageError("resample: --disc must be a fraction >= 0, got " +
                     sv::format_number(args.disc));
  if (!(args.peak > 0 && std::isfinite(args.peak)))
    throw UsageError("resample: --peak must be a positive number, got " +
                     sv::format_number(args.peak));
  const sv::ResampleOptions opt{sv::parse_method(args.method), resolve_boundary(args, "resample"),
                                args.common.threads, args.cval};
  const Precision precision = resolve_precision(args.precision, args.common.backend, "resample");
  // On gl and cuda: the method picks the fetch; --fetch picks the flavour of the prefiltered
  // cubic (on cuda also of cubic-unfiltered, which has no fetch of its own there).
  std::string fetch;
  const std::string& name = args.common.backend;
  if (is_gpu(name)) {
    const bool cuda = name == "cuda";
    const std::string& f = args.common.fetch;
    if (!f.empty() && !fetch_is_prefiltered(f))
      throw UsageError("resample: --fetch picks the flavour of --method cubic (" +
                       join_names(prefiltered_fetches(name)) + "); for " + f + " use --method " +
                       f);
    const bool takes_flavour =
        opt.method == sv::Method::Cubic || (cuda && opt.method == sv::Method::CubicUnfiltered);
    if (!f.empty() && !takes_flavour)
      throw UsageError("resample: --fetch " + f + " applies to --method cubic" +
                       (cuda ? " or cubic-unfiltered" : "") + " only, not --method " + args.method);
    fetch = fetch_for_method(opt.method, f, name);
    if (fetch.empty())
      throw UsageError("resample: --backend " + name + " evaluates " +
                       (cuda ? "B-splines of degree 0, 1 and 3" : "cubic B-splines") +
                       " only; --method " + args.method + " needs --backend cpu");
  }
  check_output(args.out, {".npy", ".png", ".nrrd", ".nhdr", ".nii", ".nii.gz", ".tif", ".tiff"},
               "resample");
  check_out_is_not_an_input(args.out, {{"IN", args.in}, {"--reference", args.reference}},
                            "resample");

  sv::Loaded in = load_input(args.in, args.channels, args.common);
  check_finite(in, args.in, args.common);
  const sv::ArrayD& input = in.array;
  if (args.has_rotate && input.rank() != 2)
    throw sv::Error("resample: --rotate needs a 2-D image; '" + shown(args.in) + "' is " +
                    std::to_string(input.rank()) + "-D (" +
                    sv::describe_shape(input.dims(), input.channels()) + "); use --zoom");
  if (extension(args.out) == ".png" && input.rank() != 2)
    throw sv::Error("resample: a .png output needs a 2-D result; '" + shown(args.in) + "' is " +
                    std::to_string(input.rank()) + "-D");
  if (args.has_zoom) check_zoom_steps(input, args);
  double input_max = -HUGE_VAL;
  for (double v : input.vec()) input_max = std::max(input_max, v);

  // What to measure the result against, if anything (loaded before the work starts).
  const double step = std::fmod(args.rotate, 360.0);
  const double total = args.has_rotate ? std::fmod(step * args.repeat, 360.0) : 0.0;
  const bool full_turn = args.has_rotate && std::fabs(std::remainder(total, 360.0)) < 1e-9;
  std::unique_ptr<sv::ArrayD> reference;
  std::string against;
  double peak = args.has_peak ? args.peak : sv::dtype_full_scale(in.dtype);
  if (!args.reference.empty()) {
    sv::Loaded r = load_input(args.reference, args.channels, args.common);
    check_finite(r, args.reference, args.common);
    reference = std::make_unique<sv::ArrayD>(std::move(r.array));
    against = "the reference '" + shown(args.reference) + "'";
    if (!args.has_peak) peak = std::max(peak, sv::dtype_full_scale(r.dtype));
  } else if (args.compare_original || full_turn) {
    reference = std::make_unique<sv::ArrayD>(input);
    against = "the input";
  }

  const Stopwatch clock;
  sv::ArrayD result = precision == Precision::Single
                          ? resampled<float>(*backend, std::move(in.array), args, opt)
                          : resampled<double>(*backend, std::move(in.array), args, opt);
  const double seconds = clock.seconds();
  check_result(result.data(), result.size(), result.dims(), result.channels(), in.channel_axis,
               "resample", precision_name(precision), args.common);

  Measured measured;
  if (reference) {
    if (result.dims() != reference->dims() || result.channels() != reference->channels())
      throw sv::Error(
          "resample: cannot compare the " + sv::describe_shape(result.dims(), result.channels()) +
          " result with " + against + " (" +
          sv::describe_shape(reference->dims(), reference->channels()) + "): the shapes differ");
    measured = measure(result, *reference, args.disc, peak, in.channel_axis);
  }

  const std::string ext = extension(args.out);
  const sv::DType dtype = ext == ".png"                    ? png_dtype(in.dtype, input_max)
                          : precision == Precision::Single ? sv::DType::F32
                                                           : sv::DType::F64;
  std::size_t clipped = 0;
  if (ext == ".png") clipped = warn_png_mapping(args.out, result, dtype);
  // The output's grid in the world: rotation keeps the grid (the content turns within it); each
  // zoom step puts output sample q at input position (q + 1/2) / F - 1/2 on every axis.
  sv::Geometry geometry = in.geometry;
  if (args.has_zoom) {
    sv::Vec3 scale{1, 1, 1}, offset{0, 0, 0};
    for (std::size_t axis = 0; axis < result.rank(); ++axis) {
      scale[axis] = 1.0 / args.zoom;
      offset[axis] = 0.5 / args.zoom - 0.5;
    }
    for (int k = 0; k < args.repeat; ++k)
      geometry = sv::geometry_resampled(geometry, scale, offset);
  }
  sv::save_any(args.out, result, dtype, in.channel_axis, geometry);

  if (args.common.json) {
    Json j{{"command", "resample"},
           {"backend", backend->name()},
           {"method", sv::method_name(opt.method)},
           {"boundary", sv::boundary_name(opt.boundary)},
           {"mode", sv::boundary_scipy_name(opt.boundary)},
           {"cval", args.cval},
           {"precision", precision_name(precision)},
           {"steps", args.repeat},
           {"seconds", seconds},
           {"shape", shape_json(result.dims(), result.channels(), in.channel_axis)}};
    if (args.has_rotate)
      j["rotate_degrees"] = args.rotate;
    else
      j["zoom"] = args.zoom;
    if (ext == ".png") {
      j["png_dtype"] = sv::dtype_name(dtype);
      j["clipped"] = clipped;
    }
    if (reference) j["peak"] = peak;
    j.update(gpu_json(*backend, fetch, args.common));
    if (reference) {
      j["compared_with"] = args.reference.empty() ? "input" : "reference";
      j["disc"] = result.rank() == 2 && args.disc > 0 ? Json(args.disc) : Json(nullptr);
      j.update(stats_json(measured));
    }
    print_json(j);
  } else if (reference && (args.compare_original || !args.reference.empty())) {
    print_stats(measured);
  }
}

void run_compare(const CompareArgs& args) {
  std::unique_ptr<Backend> backend = make_backend(args.common.backend);
  if (args.has_disc && !(args.disc > 0 && std::isfinite(args.disc)))
    throw UsageError("compare: --disc must be a positive fraction, got " +
                     sv::format_number(args.disc));
  if (!(args.peak > 0 && std::isfinite(args.peak)))
    throw UsageError("compare: --peak must be a positive number, got " +
                     sv::format_number(args.peak));
  const sv::Loaded la = load_input(args.a, args.channels, args.common);
  check_finite(la, args.a, args.common);
  const sv::Loaded lb = load_input(args.b, args.channels, args.common);
  check_finite(lb, args.b, args.common);
  const sv::ArrayD& a = la.array;
  const sv::ArrayD& b = lb.array;
  if (a.dims() != b.dims() || a.channels() != b.channels())
    throw sv::Error("compare: shapes differ: '" + shown(args.a) + "' is " +
                    sv::describe_shape(a.dims(), a.channels()) + ", '" + shown(args.b) + "' is " +
                    sv::describe_shape(b.dims(), b.channels()));
  if (args.has_disc && a.rank() != 2)
    throw sv::Error("compare: --disc needs 2-D arrays; these are " + std::to_string(a.rank()) +
                    "-D");
  const double peak =
      args.has_peak ? args.peak
                    : std::max(sv::dtype_full_scale(la.dtype), sv::dtype_full_scale(lb.dtype));
  const Measured m =
      measure(a, b, args.has_disc ? args.disc : 0.0, peak, la.channel_axis || lb.channel_axis);
  if (args.common.json) {
    Json j{{"command", "compare"},
           {"disc", args.has_disc ? Json(args.disc) : Json(nullptr)},
           {"peak", peak}};
    j.update(stats_json(m));
    print_json(j);
  } else {
    print_stats(m);
  }
}

// `splinetool info FILE`: what the loaders make of a file (the same loaders every command uses).
void run_info_file(const InfoArgs& args) {
  sv::Loaded in = load_input(args.file, args.channels, args.common);
  for (auto& row : in.geometry.affine)
    for (double& v : row) v += 0.0;  // -0 reads as 0
  const sv::ArrayD& a = in.array;
  const sv::NonFinite nf = sv::scan_nonfinite(a);
  double lo = 0, hi = 0;
  bool any = false;
  for (double v : a.vec())
    if (std::isfinite(v)) {
      lo = any ? std::min(lo, v) : v;
      hi = any ? std::max(hi, v) : v;
      any = true;
    }
  const std::string code = in.geometry.oriented() ? sv::orientation_code(in.geometry) : "";
  if (args.common.json) {
    Json affine = Json::array();
    for (const auto& row : in.geometry.affine) affine.push_back(Json(row));
    Json j{
        {"command", "info"},
        {"file", args.file},
        {"shape", shape_json(a.dims(), a.channels(), in.channel_axis)},
        {"dims", a.dims()},
        {"channels", a.channels()},
        {"dtype", sv::dtype_name(in.dtype)},
        {"spacing", in.spacing},
        {"affine", affine},
        {"oriented", in.geometry.oriented()},
        {"orientation", code.empty() ? Json(nullptr) : Json(code)},
        {"orientation_source", in.geometry.oriented() ? Json(in.geometry.source) : Json(nullptr)},
        {"min", any ? Json(lo) : Json(nullptr)},
        {"max", any ? Json(hi) : Json(nullptr)},
        {"nonfinite", nf.count}};
    print_json(j);
    return;
  }
  std::printf("%s\n", shown(args.file).c_str());
  std::printf("  shape: %s, %s\n", sv::describe_shape(a.dims(), a.channels()).c_str(),
              sv::dtype_name(in.dtype));
  std::printf("  spacing (array order, mm where the file states a unit):");
  for (double v : in.spacing) std::printf(" %.6g", v);
  std::printf("\n  orientation: %s\n",
              in.geometry.oriented()
                  ? (code + " (from " + in.geometry.source + ")").c_str()
                  : "not stated by the file (index axes are not patient directions)");
  std::printf("  index-to-world affine (RAS+ mm; columns i, j, k = x, y, z index):\n");
  for (const auto& row : in.geometry.affine)
    std::printf("    %12.6g %12.6g %12.6g %12.6g\n", row[0], row[1], row[2], row[3]);
  if (any) std::printf("  values: %.9g to %.9g\n", lo, hi);
  if (nf.count) std::printf("  non-finite values: %zu\n", nf.count);
}

void run_info(const InfoArgs& args) {
  if (!args.file.empty()) return run_info_file(args);
  make_backend(args.common.backend);
  std::string why;
  const std::vector<sv::CudaDeviceInfo> devices = sv::cuda_devices(&why);
  const GlStatus gl = gl_status();
  if (args.common.json) {
    Json j{{"command", "info"}, {"version", sv::version()}, {"commit", sv::git_commit()}};
    Json backends = Json::object();
    for (const std::string& n : backend_names()) backends[n] = backend_available(n);
    j["backends"] = backends;
    j["cuda_compiled"] = sv::cuda_compiled();
    Json list = Json::array();
    for (const sv::CudaDeviceInfo& d : devices)
      list.push_back(
          {{"index", d.index},
           {"name", d.name},
           {"compute_capability", std::to_string(d.major) + "." + std::to_string(d.minor)},
           {"global_memory_bytes", d.global_memory},
           {"multiprocessors", d.multiprocessors},
           {"memory_bandwidth_gbs", d.memory_bandwidth_gbs}});
    j["cuda_devices"] = list;
    if (devices.empty()) j["cuda_none_reason"] = why;
    j["gl"] = {{"compiled", gl.compiled},
               {"works", gl.works},
               {"description", gl.works ? Json(gl.description) : Json(nullptr)},
               {"platform", gl.works ? Json(gl.platform) : Json(nullptr)},
               {"none_reason", gl.works ? Json(nullptr) : Json(gl.reason)}};
    print_json(j);
    return;
  }
  std::printf("splinetool %s (splineview, commit %s)\n", sv::version(), sv::git_commit());
  std::printf("backends:");
  for (const std::string& n : backend_names())
    std::printf(" %s%s", n.c_str(), backend_available(n) ? "" : " (not available)");
  std::printf("\nCUDA compiled: %s\n", sv::cuda_compiled() ? "yes" : "no");
  if (devices.empty()) std::printf("CUDA devices: none (%s)\n", why.c_str());
  for (const sv::CudaDeviceInfo& d : devices)
    std::printf("CUDA device %d: %s, compute capability %d.%d, %.1f GiB, %d SMs, %.0f GB/s\n",
                d.index, d.name.c_str(), d.major, d.minor,
                static_cast<double>(d.global_memory) / (1024.0 * 1024.0 * 1024.0),
                d.multiprocessors, d.memory_bandwidth_gbs);
  if (gl.works)
    std::printf("GL: %s (EGL %s)\n", gl.description.c_str(), gl.platform.c_str());
  else
    std::printf("GL: none (%s)\n", gl.reason.c_str());
}

}  // namespace splinetool
