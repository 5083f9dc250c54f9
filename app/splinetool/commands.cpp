// Implementation of the splinetool commands: load, validate, compute on the chosen backend,
// then save (atomically, through the core's savers) and report. See commands.h.
#include "commands.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "backend.h"
#include "splineview/bspline.h"
#include "splineview/cuda_device.h"
#include "splineview/cuda_out_of_core.h"
#include "splineview/error.h"
#include "splineview/finite.h"
#include "splineview/input.h"
#include "splineview/io.h"
#include "splineview/mapped.h"
#include "splineview/metrics.h"
#include "splineview/pyramid.h"
#include "splineview/text.h"
#include "splineview/transform.h"
#include "splineview/version.h"

namespace splinetool {
namespace {

using Json = nlohmann::json;

// "-": standard input (an input) or standard output (OUT), always as .npy.
bool is_stdio(const std::string& path) {
  return path == "-";
}

// Where the reports go (the --json object, resample's metric lines): stdout, or stderr when OUT
// is "-" and stdout carries the data.
std::FILE* g_report = stdout;

// `batch -` reads its commands from standard input.
bool g_stdin_is_batch = false;

// An input array: "-" is a .npy on standard input; else by its extension, or with --raw as
// headerless data when the extension names no format (COORDS is always .npy and does not come
// through here).
sv::Loaded load_input(const std::string& path, bool channels, const CommonArgs& common) {
  if (is_stdio(path)) return load_stdin_npy(channels);
  if (common.raw.empty()) return sv::load_any(path, channels);
  return sv::load_any(path, channels, sv::parse_raw_spec(common.raw));
}

}  // namespace

sv::Loaded load_stdin_npy(bool channels) {
  if (g_stdin_is_batch)
    throw sv::Error(
        "standard input ('-') holds the commands of 'batch -', not an array; give the array as "
        "a file, or the batch as a file and the array on standard input");
  return sv::load_npy_stdin(channels);
}

void reset_command_state() {
  g_report = stdout;
  sv::set_input_options(sv::InputOptions{});
}

void set_stdin_is_batch(bool taken) {
  g_stdin_is_batch = taken;
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

namespace {

// The non-finite policy: NaN/inf in an input is refused with the count and the first index,
// unless --allow-nonfinite (the prefilter's recursion would spread one NaN along every line).
void refuse_nonfinite(const sv::NonFinite& nf, const std::vector<std::size_t>& dims,
                      std::size_t channels, bool channel_axis, const std::string& path,
                      const CommonArgs& common) {
  if (common.allow_nonfinite || nf.count == 0) return;
  throw sv::Error(shown(path) + ": " + sv::describe_nonfinite(nf, dims, channels, channel_axis) +
                  "; pass --allow-nonfinite to process " + (nf.count == 1 ? "it" : "them") +
                  " anyway");
}

void check_finite(const sv::Loaded& in, const std::string& path, const CommonArgs& common) {
  if (common.allow_nonfinite) return;
  refuse_nonfinite(sv::scan_nonfinite(in.array), in.array.dims(), in.array.channels(),
                   in.channel_axis, path, common);
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
  // Standard input and output: at most one input may be "-"; OUT "-" must not be a terminal
  // (a .npy is binary), and the reports then go to stderr.
  const Named* from_stdin = nullptr;
  for (const Named& given : inputs) {
    if (!is_stdio(given.path)) continue;
    if (from_stdin)
      throw UsageError(std::string(command) + ": " + from_stdin->role + " and " + given.role +
                       " are both '-'; only one input can come from standard input");
    from_stdin = &given;
  }
  if (is_stdio(out)) {
    if (::isatty(1))
      throw UsageError(std::string(command) +
                       ": OUT '-' writes a binary .npy to standard output, which is a terminal; "
                       "redirect it to a file or a pipe");
    g_report = stderr;
    return;
  }
  for (const Named& o : with_data_file({"OUT", out}, true)) {
    struct stat so {};
    if (::stat(o.path.c_str(), &so) != 0) continue;
    for (const Named& given : inputs) {
      if (given.path.empty() || is_stdio(given.path)) continue;
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
// The out-of-core paths (prefilter, resample --out-of-core) take every mode.
template <class Args>
bool takes_every_mode(const Args& args) {
  if constexpr (std::is_same_v<Args, PrefilterArgs>) {
    return args.out_of_core;
  } else if constexpr (std::is_same_v<Args, ResampleArgs>) {
    return args.out_of_core;
  } else {
    return false;
  }
}

template <class Args>
sv::Boundary resolve_boundary(const Args& args, const char* command) {
  const sv::Boundary b = sv::parse_boundary(args.mode.empty() ? args.boundary : args.mode);
  if (!std::isfinite(args.cval))
    throw UsageError(std::string(command) + ": --cval must be a finite number");
  if (is_gpu(args.common.backend) && !sv::boundary_on_gpu(b) && !takes_every_mode(args))
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
  if (is_stdio(path)) return;  // standard output: .npy
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
  std::fprintf(g_report, "max_abs %.9g\nrms     %.9g\nsse     %.9g\npsnr_db %.9g\ncount   %zu\n",
               s.max_abs, s.rms, s.sse, s.psnr, s.count);
  // The non-finite lines only when there is something to say (finite data prints as before).
  if (s.nonfinite_a + s.nonfinite_b > 0) {
    std::fprintf(g_report, "nonfinite_a %zu%s\nnonfinite_b %zu%s\nnonfinite_mismatch %zu\n",
                 s.nonfinite_a, m.first_text(s.nonfinite_a, s.first_nonfinite_a, m.first_a).c_str(),
                 s.nonfinite_b, m.first_text(s.nonfinite_b, s.first_nonfinite_b, m.first_b).c_str(),
                 s.nonfinite_mismatch);
  }
  std::fprintf(g_report, "identical %s\n", s.identical() ? "yes" : "no");
}

void print_json(const Json& j) {
  const std::string text = j.dump(2) + "\n";
  std::fputs(text.c_str(), g_report);
}

// Writes a result to OUT: a file by its extension, or "-" as .npy on standard output (no
// geometry), only now that the whole result is computed.
void save_result(const std::string& out, const sv::ArrayD& a, sv::DType dtype, bool channel_axis,
                 const sv::Geometry& geometry) {
  if (is_stdio(out)) {
    sv::write_npy_stdout(a, dtype, channel_axis);
    return;
  }
  sv::save_any(out, a, dtype, channel_axis, geometry);
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
  sv::Loaded c = is_stdio(path) ? load_stdin_npy(false) : sv::load_npy(path, false);
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

}  // namespace

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

namespace {

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
    a = args.has_rotate ? backend.rotate(a, angle, opt) : backend.zoom(a, args.zoom[0], opt);
  return cast<double>(std::move(a));
}

// round(x) as Python 3 rounds, which scipy.ndimage.zoom uses for its output shape: halves to
// even (5 x 0.5 -> 2, 7 x 0.5 -> 4).
double round_half_even(double x) {
  return std::nearbyint(x);  // the default rounding mode: to nearest, ties to even
}

enum class Op { Zoom, Shape, Shift, Rotate };

// One resampling step, worked out before any work: the extents in and out, and for --rotate
// scipy's matrix and offset in the plane (axis_a, axis_b).
struct Step {
  std::vector<std::size_t> in_dims, out_dims;
  double matrix[4] = {1, 0, 0, 1};
  double offset[2] = {0, 0};
};

struct Plan {
  Op op = Op::Zoom;
  std::vector<Step> steps;
  std::vector<double> zoom, shift;  // per spatial axis
  std::size_t axis_a = 0, axis_b = 1;
};

std::string list_text(const std::vector<double>& v) {
  std::string t;
  for (std::size_t i = 0; i < v.size(); ++i) t += (i ? "," : "") + sv::format_number(v[i]);
  return t;
}

// One value per spatial axis from a list of one (every axis) or `rank` values.
std::vector<double> per_axis(const std::vector<double>& given, std::size_t rank, const char* option,
                             const std::string& shape) {
  if (given.size() == 1) return std::vector<double>(rank, given[0]);
  if (given.size() == rank) return given;
  throw sv::Error("resample: " + std::string(option) + " " + list_text(given) + " gives " +
                  std::to_string(given.size()) + " values for the " + std::to_string(rank) +
                  "-D input (" + shape + "); give one, or one per axis in array order");
}

// The steps of a resample of an input of `dims` and `channels`, their extents checked before any
// work: no axis may become empty and no step may produce more than `max_values` scalars
// (kMaxResultValues for results held in memory), so the work and the output stay bounded
// whatever the factors, shape and --repeat.
Plan plan_resample(const std::vector<std::size_t>& input_dims, std::size_t channels,
                   const ResampleArgs& args, std::size_t max_values = kMaxResultValues) {
  Plan plan;
  const std::size_t rank = input_dims.size();
  plan.op = args.has_zoom    ? Op::Zoom
            : args.has_shape ? Op::Shape
            : args.has_shift ? Op::Shift
                             : Op::Rotate;
  const std::string what = sv::describe_shape(input_dims, channels);
  if (plan.op == Op::Zoom) plan.zoom = per_axis(args.zoom, rank, "--zoom", what);
  if (plan.op == Op::Shift) plan.shift = per_axis(args.shift, rank, "--shift", what);
  if (plan.op == Op::Shape && args.shape.size() != rank)
    throw sv::Error("resample: --shape gives " + std::to_string(args.shape.size()) +
                    " extents for the " + std::to_string(rank) + "-D input (" + what +
                    "); give one per spatial axis, in array order");
  double c = 1, s = 0;
  if (plan.op == Op::Rotate) {
    if (rank != 2 && rank != 3)
      throw sv::Error("resample: --rotate needs a 2-D or 3-D array; '" + shown(args.in) + "' is " +
                      std::to_string(rank) + "-D (" + what + "); use --zoom");
    // scipy's axes: default (1, 0); negative values count from the end; the order does not
    // matter (scipy sorts them).
    std::vector<long> axes{1, 0};
    if (!args.axes.empty()) axes.assign(args.axes.begin(), args.axes.end());
    for (long& a : axes) {
      if (a < 0) a += static_cast<long>(rank);
      if (a < 0 || a >= static_cast<long>(rank))
        throw sv::Error("resample: --axes names no plane of the " + std::to_string(rank) +
                        "-D input (" + what + "); axes are 0.." + std::to_string(rank - 1) +
                        " (or -" + std::to_string(rank) + "..-1)");
    }
    if (axes[0] == axes[1]) throw sv::Error("resample: --axes must name two different axes");
    plan.axis_a = static_cast<std::size_t>(std::min(axes[0], axes[1]));
    plan.axis_b = static_cast<std::size_t>(std::max(axes[0], axes[1]));
    const double angle = std::fmod(args.rotate, 360.0);
    c = sv::cosdg(angle);
    s = sv::sindg(angle);
  }
  std::vector<std::size_t> dims = input_dims;
  for (int k = 0; k < args.repeat; ++k) {
    Step st;
    st.in_dims = dims;
    double total = static_cast<double>(channels);
    std::vector<double> out(rank);
    for (std::size_t d = 0; d < rank; ++d) out[d] = static_cast<double>(dims[d]);
    if (plan.op == Op::Zoom)
      for (std::size_t d = 0; d < rank; ++d) out[d] = round_half_even(out[d] * plan.zoom[d]);
    if (plan.op == Op::Shape)
      for (std::size_t d = 0; d < rank; ++d) out[d] = static_cast<double>(args.shape[d]);
    if (plan.op == Op::Rotate) {
      // scipy.ndimage.rotate: rot = [[c, s], [-s, c]] on (axis_a, axis_b); with reshape the
      // plane holds the whole rotated input; output o takes the input at rot o + offset.
      const double iy = out[plan.axis_a], ix = out[plan.axis_b];
      double oy = iy, ox = ix;
      if (args.reshape) {
        // out_bounds = rot @ [[0, 0, iy, iy], [0, ix, 0, ix]]; extents (ptp + 0.5) truncated
        const double r0[4] = {c * 0 + s * 0, c * 0 + s * ix, c * iy + s * 0, c * iy + s * ix};
        const double r1[4] = {-s * 0 + c * 0, -s * 0 + c * ix, -s * iy + c * 0, -s * iy + c * ix};
        oy = std::trunc(*std::max_element(r0, r0 + 4) - *std::min_element(r0, r0 + 4) + 0.5);
        ox = std::trunc(*std::max_element(r1, r1 + 4) - *std::min_element(r1, r1 + 4) + 0.5);
      }
      out[plan.axis_a] = oy;
      out[plan.axis_b] = ox;
      const double ocy = (oy - 1) / 2, ocx = (ox - 1) / 2;
      st.matrix[0] = c;
      st.matrix[1] = s;
      st.matrix[2] = -s;
      st.matrix[3] = c;
      st.offset[0] = (iy - 1) / 2 - (c * ocy + s * ocx);
      st.offset[1] = (ix - 1) / 2 - (-s * ocy + c * ocx);
    }
    for (std::size_t d = 0; d < rank; ++d) {
      if (out[d] < 1)
        throw sv::Error("resample: " +
                        std::string(plan.op == Op::Zoom ? "--zoom " + list_text(args.zoom)
                                                        : std::string("--rotate --reshape")) +
                        " leaves an empty axis" +
                        (k > 0 ? " at step " + std::to_string(k + 1) : "") + " of the " + what +
                        " input");
      total *= out[d];
    }
    if (total > static_cast<double>(max_values))
      throw sv::Error("resample: " +
                      std::string(plan.op == Op::Zoom    ? "--zoom " + list_text(args.zoom)
                                  : plan.op == Op::Shape ? "--shape"
                                  : plan.op == Op::Shift ? "--shift"
                                  : args.reshape         ? "--rotate --reshape"
                                                         : "--rotate") +
                      (args.repeat > 1 ? " (step " + std::to_string(k + 1) + ")" : "") +
                      " would make " + sv::format_number(total) + " values of the " + what +
                      " input; the limit is " + std::to_string(max_values) +
                      (max_values == kMaxResultValues ? " (2^27)" : "") + " per result");
    for (std::size_t d = 0; d < rank; ++d) dims[d] = static_cast<std::size_t>(out[d]);
    st.out_dims = dims;
    plan.steps.push_back(st);
  }
  return plan;
}

// A --zoom below 1 on some axis, or a --shape smaller than IN's extents (in_dims) on some axis,
// that asks for the anti-aliasing (no --point-sample).
bool wants_antialias(const ResampleArgs& args, const std::vector<std::size_t>& in_dims) {
  if (args.point_sample) return false;
  if (args.has_zoom)
    return std::any_of(args.zoom.begin(), args.zoom.end(), [](double z) { return z < 1; });
  if (args.has_shape && args.shape.size() == in_dims.size())
    for (std::size_t d = 0; d < in_dims.size(); ++d)
      if (args.shape[d] < in_dims[d]) return true;
  return false;
}

// The least-squares reduction has an exact finite form only where the mode's symmetry maps the
// output grid onto itself (pyramid.h): reflect (grid-mirror) and grid-wrap with --grid-mode
// true, mirror with --grid-mode false.
bool antialias_exact(const ResampleArgs& args, sv::Boundary b) {
  return args.grid_mode ? (b == sv::Boundary::Reflect || b == sv::Boundary::Periodic)
                        : b == sv::Boundary::Mirror;
}

// --zoom below 1 and --shape smaller than IN are anti-aliased on the CPU unless --point-sample,
// where the mode and grid allow it: the least-squares reduction (sv::reduce_to_shape) of the
// axes that shrink, at scipy's output positions; the axes that grow are then zoomed from its
// samples as before. Elsewhere (and on the GPU backends) the spline is point-sampled, as
// scipy.ndimage.zoom does, with a note on stderr.
bool antialiased(const ResampleArgs& args, sv::Boundary b,
                 const std::vector<std::size_t>& in_dims) {
  return wants_antialias(args, in_dims) && antialias_exact(args, b) && !is_gpu(args.common.backend);
}

template <class T>
sv::ArrayD antialiased_zoom(sv::Array<T>&& t, const Step& st, const ResampleArgs& args,
                            const sv::SamplerOptions& sopt, bool prefilter) {
  sv::ReduceOptions ro;
  ro.degree = sopt.degree;
  ro.boundary = sopt.boundary;
  ro.grid = args.grid_mode ? sv::PyramidGrid::Cells : sv::PyramidGrid::Nodes;
  ro.threads = sopt.threads;
  ro.input_is_coefficients = !prefilter;
  ro.samples = true;
  std::vector<std::size_t> shrunk(st.in_dims.size());
  bool grows = false;
  for (std::size_t d = 0; d < shrunk.size(); ++d) {
    shrunk[d] = std::min(st.in_dims[d], st.out_dims[d]);
    grows = grows || st.out_dims[d] > st.in_dims[d];
  }
  sv::Reduced<T> r = sv::reduce_to_shape(t, shrunk, ro);
  t = sv::Array<T>();
  if (!grows) return sv::ArrayD::from(r.samples);
  return sv::zoom(std::move(r.samples), st.out_dims, args.grid_mode, sopt, true);
}

// The CPU path: every step through the streamed transforms of the core (sv::zoom, sv::shift,
// sv::affine_transform(_planes): no array of positions; memory input + coefficients + output
// + a few slices), in T. Single precision rounds each step's result to float, as before.
template <class T>
sv::ArrayD transformed(sv::ArrayD&& input, const Plan& plan, const ResampleArgs& args,
                       const sv::SamplerOptions& sopt, bool prefilter) {
  sv::ArrayD a = std::move(input);
  for (const Step& st : plan.steps) {
    sv::Array<T> t = cast<T>(std::move(a));
    a = sv::ArrayD();
    switch (plan.op) {
      case Op::Zoom:
      case Op::Shape:
        if (antialiased(args, sopt.boundary, st.in_dims))
          a = antialiased_zoom(std::move(t), st, args, sopt, prefilter);
        else
          a = sv::zoom(std::move(t), st.out_dims, args.grid_mode, sopt, prefilter);
        break;
      case Op::Shift:
        a = sv::shift(std::move(t), plan.shift, sopt, prefilter);
        break;
      case Op::Rotate:
        if (t.rank() == 2)
          a = sv::affine_transform(std::move(t), {st.matrix, st.matrix + 4},
                                   {st.offset, st.offset + 2}, st.out_dims, sopt, prefilter);
        else
          a = sv::affine_transform_planes(t, plan.axis_a, plan.axis_b, st.matrix, st.offset,
                                          st.out_dims[plan.axis_a], st.out_dims[plan.axis_b], sopt,
                                          prefilter);
        break;
    }
    if constexpr (std::is_same_v<T, float>)
      for (double& v : a.vec()) v = static_cast<double>(static_cast<float>(v));
  }
  return a;
}

// The output's grid in the world after the steps: output index q of a step sits at input index
// scale q + offset per axis (geometry_resampled works in i, j, k = x, y, z order, the reverse
// of the array's). Zoom: the positions of the step; --shift and --rotate keep the grid (the
// content moves within it), --reshape moves the plane's centre to the new one's.
sv::Geometry resampled_geometry(sv::Geometry g, const Plan& plan, bool grid_mode) {
  for (const Step& st : plan.steps) {
    const std::size_t rank = st.in_dims.size();
    sv::Vec3 scale{1, 1, 1}, offset{0, 0, 0};
    for (std::size_t d = 0; d < rank; ++d) {
      const std::size_t ijk = rank - 1 - d;
      const double in = static_cast<double>(st.in_dims[d]);
      const double out = static_cast<double>(st.out_dims[d]);
      if (plan.op == Op::Zoom || plan.op == Op::Shape) {
        double z = grid_mode ? in / out : (out > 1 ? (in - 1) / (out - 1) : 1.0);
        if (!(z > 0)) z = in / out;  // one input sample: every output sits on it
        scale[ijk] = z;
        offset[ijk] = grid_mode ? 0.5 * z - 0.5 : 0.0;
      } else if (plan.op == Op::Rotate && (d == plan.axis_a || d == plan.axis_b)) {
        offset[ijk] = (in - 1) / 2 - (out - 1) / 2;
      }
    }
    g = sv::geometry_resampled(g, scale, offset);
  }
  return g;
}

}  // namespace

// Progress of an out-of-core pass on stderr, one line about every 10%.
std::function<void(std::size_t, std::size_t)> progress_lines(const char* command,
                                                             const char* unit) {
  return [command, unit, last = -1](std::size_t done, std::size_t total) mutable {
    const int pct = static_cast<int>(100.0 * static_cast<double>(done) /
                                     static_cast<double>(std::max<std::size_t>(total, 1)));
    if (pct / 10 == last / 10 && done < total) return;
    last = pct;
    std::fprintf(stderr, "splinetool: %s: %zu of %zu %s (%d%%)\n", command, done, total, unit, pct);
  };
}

Json out_of_core_json(const sv::cuda::OutOfCoreStats& st) {
  return Json{{"slabs", st.slabs},       {"slab_slices", st.slab_slices},
              {"halo", st.halo},         {"device_bytes", st.device_bytes},
              {"bytes_up", st.bytes_up}, {"bytes_down", st.bytes_down}};
}

namespace {

// --- --out-of-core from file to file: IN mapped, the result written in place into OUT -------

// Values converted per slab when a mapped IN becomes float32 (whole slices, at least one).
constexpr std::size_t kSlabValues = std::size_t{1} << 23;

// The OUT of --out-of-core is filled in place: a .npy, .nrrd or .nii file (exit 2 otherwise).
void check_out_of_core_output(const std::string& out, const char* command) {
  if (is_stdio(out))
    throw UsageError(std::string(command) +
                     ": --out-of-core writes its result in place into OUT; standard output ('-') "
                     "cannot be written that way: give a .npy, .nrrd or .nii file");
  const std::string why = sv::mapped_output_refusal(out);
  if (!why.empty()) throw UsageError(std::string(command) + ": --out-of-core: " + why);
}

// IN mapped for --out-of-core; or nothing, after one line on stderr saying why, when it has to
// be read into memory (standard input, compressed data, formats that are not mapped).
std::optional<sv::MappedVolume> map_input(const std::string& path, bool channels,
                                          const CommonArgs& common, const char* command) {
  std::string why;
  if (is_stdio(path)) {
    why = "standard input cannot be mapped";
  } else {
    try {
      if (common.raw.empty()) return sv::open_mapped(path, channels);
      return sv::open_mapped(path, channels, sv::parse_raw_spec(common.raw));
    } catch (const sv::NotMappable& e) {
      why = e.what();
    }
  }
  std::fprintf(stderr, "splinetool: %s: --out-of-core: %s; reading it into memory instead\n",
               command, why.c_str());
  return std::nullopt;
}

// The mapped IN as float32 in `out` (C order, in.size() floats; null: only scanned, a slab
// at a time through a scratch buffer), a slab of slices at a time on
// up to `threads` threads (0: every hardware thread, at most 16; each takes the next slab);
// returns its non-finite values (counted as the loader's doubles; the first in file order). No
// progress lines: a refusal after it must still be the only line on stderr.
sv::NonFinite convert_mapped(const sv::MappedVolume& in, float* out, unsigned threads) {
  const std::size_t per = in.slice_values(), slices = in.slices();
  const std::size_t slab = std::max<std::size_t>(1, kSlabValues / per);
  const std::size_t slabs = (slices + slab - 1) / slab;
  std::vector<sv::NonFinite> found(slabs);
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex error_lock;
  const auto work = [&] {
    try {
      std::vector<float> scratch;  // without `out`: the values are only scanned
      for (std::size_t s = next++; s < slabs; s = next++) {
        const std::size_t first = s * slab, n = std::min(slab, slices - first);
        if (!out) scratch.resize(n * per);
        found[s] = in.read_slices(first, n, out ? out + first * per : scratch.data());
        in.release_slices(first, n);
      }
    } catch (...) {
      const std::lock_guard<std::mutex> lock(error_lock);
      if (!error) error = std::current_exception();
      next = slabs;  // the others stop at their next slab
    }
  };
  unsigned t = threads ? threads : std::max(1u, std::thread::hardware_concurrency());
  t = static_cast<unsigned>(std::min<std::size_t>({t, 16, slabs}));
  std::vector<std::thread> pool;
  for (unsigned k = 1; k < t; ++k) pool.emplace_back(work);
  work();
  for (std::thread& th : pool) th.join();
  if (error) std::rethrow_exception(error);
  sv::NonFinite total;
  for (std::size_t s = 0; s < slabs; ++s) {
    const sv::NonFinite& nf = found[s];
    if (nf.count > 0 && total.count == 0) {
      total.first = s * slab * per + nf.first;
      total.first_value = nf.first_value;
    }
    total.count += nf.count;
  }
  return total;
}

// What --json says about a mapped IN.
Json mapped_json(const sv::MappedVolume& in, double convert_seconds, bool work_file) {
  return Json{{"input_mapped", true},
              {"input_storage", in.describe()},
              {"convert_seconds", convert_seconds},
              {"work_file", work_file}};
}

Json prefilter_json(const PrefilterArgs& args, const Backend& backend,
                    const sv::PrefilterOptions& opt, Precision precision,
                    const std::vector<std::size_t>& dims, std::size_t channels, bool channel_axis,
                    double seconds) {
  Json j{{"command", "prefilter"},
         {"backend", backend.name()},
         {"degree", args.degree},
         {"boundary", sv::boundary_name(opt.boundary)},
         {"mode", sv::boundary_scipy_name(opt.boundary)},
         {"cval", args.cval},
         {"precision", precision_name(precision)},
         {"shape", shape_json(dims, channels, channel_axis)},
         {"seconds", seconds}};
  j.update(gpu_json(backend, "", args.common));
  return j;
}

sv::cuda::OutOfCoreConfig out_of_core_config(const PrefilterArgs& args,
                                             const sv::PrefilterOptions& opt) {
  sv::cuda::OutOfCoreConfig cfg;
  cfg.degree = opt.degree;
  cfg.boundary = opt.boundary;
  cfg.device_budget = args.memory_budget_mib << 20;
  cfg.progress = progress_lines("prefilter", "slices");
  return cfg;
}

// prefilter --out-of-core with IN mapped: IN converted into OUT's mapped float32 samples, the
// CUDA pass in place there, OUT renamed into place. No array is held in memory.
void prefilter_mapped(const PrefilterArgs& args, const Backend& backend,
                      const sv::PrefilterOptions& opt, const sv::MappedVolume& in) {
  sv::MappedOutput out = sv::create_mapped_output(args.out, in.dims(), in.channels(),
                                                  in.channel_axis(), in.geometry());
  const Stopwatch convert_clock;
  refuse_nonfinite(convert_mapped(in, out.data(), args.common.threads), in.dims(), in.channels(),
                   in.channel_axis(), args.in, args.common);
  const double convert_seconds = convert_clock.seconds();
  const Stopwatch clock;
  const sv::cuda::OutOfCoreStats st = sv::cuda::prefilter_out_of_core(
      out.data(), sv::cuda::Layout{in.dims(), in.channels()}, out_of_core_config(args, opt));
  const double seconds = clock.seconds();
  check_result(out.data(), out.size(), in.dims(), in.channels(), in.channel_axis(), "prefilter",
               "single", args.common);
  out.commit();
  if (args.common.json) {
    Json j = prefilter_json(args, backend, opt, Precision::Single, in.dims(), in.channels(),
                            in.channel_axis(), seconds);
    j["out_of_core"] = out_of_core_json(st);
    j["out_of_core"].update(mapped_json(in, convert_seconds, false));
    print_json(j);
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

  if (args.memory_budget_mib && !args.out_of_core)
    throw UsageError("prefilter: --memory-budget applies to --out-of-core only");
  if (args.out_of_core && (args.common.backend != "cuda" || precision != Precision::Single))
    throw UsageError(
        "prefilter: --out-of-core runs on --backend cuda in single precision (the CPU "
        "prefilter already works in host memory)");
  if (args.out_of_core) {
    check_out_of_core_output(args.out, "prefilter");
    if (const std::optional<sv::MappedVolume> mapped =
            map_input(args.in, args.channels, args.common, "prefilter"))
      return prefilter_mapped(args, *backend, opt, *mapped);
  }
  sv::Loaded in = load_input(args.in, args.channels, args.common);
  check_finite(in, args.in, args.common);
  const Stopwatch clock;
  sv::ArrayD result;
  Json ooc_json;
  if (args.out_of_core) {
    sv::ArrayF f(in.array.dims(), in.array.channels());
    for (std::size_t i = 0; i < f.size(); ++i) f[i] = static_cast<float>(in.array[i]);
    in.array = sv::ArrayD();
    const sv::cuda::OutOfCoreStats st = sv::cuda::prefilter_out_of_core(
        f.data(), sv::cuda::Layout{f.dims(), f.channels()}, out_of_core_config(args, opt));
    result = sv::ArrayD(f.dims(), f.channels());
    for (std::size_t i = 0; i < f.size(); ++i) result[i] = f[i];
    ooc_json = out_of_core_json(st);
    ooc_json["input_mapped"] = false;
  } else {
    result = precision == Precision::Single
                 ? prefiltered<float>(*backend, std::move(in.array), opt)
                 : prefiltered<double>(*backend, std::move(in.array), opt);
  }
  const double seconds = clock.seconds();
  check_result(result.data(), result.size(), result.dims(), result.channels(), in.channel_axis,
               "prefilter", precision_name(precision), args.common);
  save_result(args.out, result, precision == Precision::Single ? sv::DType::F32 : sv::DType::F64,
              in.channel_axis, in.geometry);
  if (args.common.json) {
    Json j = prefilter_json(args, *backend, opt, precision, result.dims(), result.channels(),
                            in.channel_axis, seconds);
    if (args.out_of_core) j["out_of_core"] = ooc_json;
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
  if (is_stdio(args.out))
    sv::write_npy_stdout(out, sv::DType::F64, in.channel_axis);
  else
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

// The method a --degree (and --no-prefilter) amounts to, for the report ("" when none does).
const char* method_of_degree(int degree, bool prefilter) {
  switch (degree) {
    case 0:
      return "nearest";
    case 1:
      return "linear";
    case 3:
      return prefilter ? "cubic" : "cubic-unfiltered";
    case 5:
      return prefilter ? "quintic" : "";
    case 7:
      return prefilter ? "septic" : "";
    default:
      return "";
  }
}

namespace {

// scipy's positions per axis for --zoom/--shape/--shift (the CPU path's), for the out-of-core
// resampling.
std::vector<std::vector<double>> position_tables(const Plan& plan,
                                                 const std::vector<std::size_t>& in_dims,
                                                 bool grid_mode) {
  const std::vector<std::size_t>& out_dims = plan.steps.back().out_dims;
  std::vector<std::vector<double>> tables(in_dims.size());
  for (std::size_t d = 0; d < in_dims.size(); ++d)
    tables[d] = plan.op == Op::Shift ? sv::shift_positions(in_dims[d], plan.shift[d])
                                     : sv::zoom_positions(in_dims[d], out_dims[d], grid_mode);
  return tables;
}

// The out-of-core pass of a one-step plan: --zoom/--shape/--shift by scipy's positions per axis,
// --rotate by scipy.ndimage.rotate's matrix on (axis_a, axis_b) as a full square matrix (the
// identity on the other axis: its zero terms leave every position's sum unchanged).
sv::cuda::OutOfCoreStats out_of_core_pass(const float* in, const std::vector<std::size_t>& in_dims,
                                          const Plan& plan, bool grid_mode, float* out,
                                          const sv::cuda::OutOfCoreResampleConfig& cfg) {
  const sv::cuda::Layout layout{in_dims, 1};
  if (plan.op != Op::Rotate)
    return sv::cuda::resample_out_of_core(in, layout, position_tables(plan, in_dims, grid_mode),
                                          out, cfg);
  const Step& st = plan.steps.back();
  const std::size_t r = in_dims.size(), a = plan.axis_a, b = plan.axis_b;
  std::vector<double> matrix(r * r, 0.0), offset(r, 0.0);
  for (std::size_t d = 0; d < r; ++d) matrix[d * r + d] = 1.0;
  matrix[a * r + a] = st.matrix[0];
  matrix[a * r + b] = st.matrix[1];
  matrix[b * r + a] = st.matrix[2];
  matrix[b * r + b] = st.matrix[3];
  offset[a] = st.offset[0];
  offset[b] = st.offset[1];
  return sv::cuda::affine_out_of_core(in, layout, matrix, offset, st.out_dims, out, cfg);
}

sv::cuda::OutOfCoreResampleConfig out_of_core_resample_config(const ResampleArgs& args,
                                                              const sv::ResampleOptions& opt,
                                                              int degree, bool prefilter) {
  sv::cuda::OutOfCoreResampleConfig rc;
  rc.degree = degree;
  rc.mode = opt.boundary;
  rc.cval = args.cval;
  rc.prefilter = prefilter;
  rc.device_budget = args.memory_budget_mib << 20;
  rc.progress = progress_lines("resample", "output slices");
  return rc;
}

// --out-of-core resamples one channel (the CUDA pass has no channel axis).
void check_one_channel(std::size_t channels, const std::string& in) {
  if (channels != 1)
    throw sv::Error("resample: --out-of-core resamples one channel; '" + shown(in) + "' has " +
                    std::to_string(channels) +
                    "; use --backend cuda without --out-of-core, or "
                    "--backend cpu");
}

// What --json reports for every resample (the caller adds comparisons and out-of-core figures).
Json resample_json(const ResampleArgs& args, const Backend& backend, const sv::ResampleOptions& opt,
                   int degree, bool prefilter, Precision precision, double seconds,
                   const std::vector<std::size_t>& dims, std::size_t channels, bool channel_axis,
                   const std::string& fetch, const std::vector<std::size_t>& in_dims) {
  const char* m = args.degree >= 0 ? method_of_degree(degree, prefilter) : args.method.c_str();
  Json j{{"command", "resample"},
         {"backend", backend.name()},
         {"method", *m ? Json(m) : Json(nullptr)},
         {"degree", degree},
         {"prefilter", prefilter},
         {"boundary", sv::boundary_name(opt.boundary)},
         {"mode", sv::boundary_scipy_name(opt.boundary)},
         {"cval", args.cval},
         {"precision", precision_name(precision)},
         {"steps", args.repeat},
         {"seconds", seconds},
         {"shape", shape_json(dims, channels, channel_axis)}};
  if (args.has_rotate) {
    j["rotate_degrees"] = args.rotate;
    j["reshape"] = args.reshape;
  } else if (args.has_zoom) {
    j["zoom"] = args.zoom.size() == 1 ? Json(args.zoom[0]) : Json(args.zoom);
  } else if (args.has_shape) {
    j["output_shape"] = args.shape;
  } else {
    j["shift"] = args.shift.size() == 1 ? Json(args.shift[0]) : Json(args.shift);
  }
  if (args.has_zoom || args.has_shape) j["grid_mode"] = args.grid_mode;
  // how a --zoom below 1 or a smaller --shape was done (the GPU backends and --out-of-core
  // point-sample)
  if (args.has_zoom || args.has_shape)
    j["downsampling"] = antialiased(args, opt.boundary, in_dims) ? "least-squares" : "point";
  j.update(gpu_json(backend, fetch, args.common));
  return j;
}

// resample --out-of-core with IN mapped: IN used in place when it is native float32, else
// converted slab by slab into a float32 work file beside OUT (removed at the end); the result
// goes straight into OUT's mapped samples, renamed into place at the end. The result is on
// disk, not in memory: no kMaxResultValues (a disk without room for it is refused up front).
void resample_mapped(const ResampleArgs& args, const Backend& backend,
                     const sv::ResampleOptions& opt, int degree, bool prefilter,
                     const sv::MappedVolume& in) {
  check_one_channel(in.channels(), args.in);
  const Plan plan =
      plan_resample(in.dims(), 1, args, std::numeric_limits<std::size_t>::max() / sizeof(float));
  const std::vector<std::size_t>& out_dims = plan.steps.back().out_dims;
  const Stopwatch convert_clock;
  const float* samples = in.native_f32();
  std::optional<sv::MappedOutput> work;
  sv::NonFinite nf;
  if (samples) {
    nf = convert_mapped(in, nullptr, args.common.threads);  // scanned through guarded copies
  } else {
    work = sv::create_mapped_scratch(args.out, in.dims(), 1);
    nf = convert_mapped(in, work->data(), args.common.threads);
    samples = work->data();
  }
  refuse_nonfinite(nf, in.dims(), 1, in.channel_axis(), args.in, args.common);
  const double convert_seconds = convert_clock.seconds();
  sv::MappedOutput out =
      sv::create_mapped_output(args.out, out_dims, 1, in.channel_axis(),
                               resampled_geometry(in.geometry(), plan, args.grid_mode));
  const Stopwatch clock;
  const sv::cuda::OutOfCoreStats st =
      out_of_core_pass(samples, in.dims(), plan, args.grid_mode, out.data(), [&] {
        sv::cuda::OutOfCoreResampleConfig cfg =
            out_of_core_resample_config(args, opt, degree, prefilter);
        // IN's own map: read through guarded copies (a file truncated meanwhile is an error
        // naming it, not a SIGBUS). A work file is this process's own.
        if (!work)
          cfg.read_input = [&in](float* dst, const float* src, std::size_t n) {
            in.copy_native_f32(src, n, dst);
          };
        return cfg;
      }());
  const double seconds = clock.seconds();
  check_result(out.data(), out.size(), out_dims, 1, in.channel_axis(), "resample", "single",
               args.common);
  const bool had_work_file = work.has_value();
  work.reset();  // the work file goes first
  out.commit();
  if (args.common.json) {
    Json j = resample_json(args, backend, opt, degree, prefilter, Precision::Single, seconds,
                           out_dims, 1, in.channel_axis(), "", in.dims());
    j["out_of_core"] = out_of_core_json(st);
    j["out_of_core"].update(mapped_json(in, convert_seconds, had_work_file));
    print_json(j);
  }
}

}  // namespace

void run_resample(const ResampleArgs& args) {
  std::unique_ptr<Backend> backend =
      make_backend(args.common.backend, backend_options(args.common));
  // The numbers are checked while parsing (main.cpp); these guard direct callers.
  const int ops = static_cast<int>(args.has_zoom) + static_cast<int>(args.has_rotate) +
                  static_cast<int>(args.has_shape) + static_cast<int>(args.has_shift);
  if (ops != 1)
    throw UsageError(
        "resample: give exactly one of --zoom F, --shape N0,N1,.., --shift S or --rotate DEG");
  if (args.repeat < 1)
    throw UsageError("resample: --repeat must be at least 1, got " + std::to_string(args.repeat));
  if (args.has_zoom)
    for (double z : args.zoom)
      if (!(z > 0 && z <= kMaxZoom))
        throw UsageError("resample: --zoom must be a number in (0, " + sv::format_number(kMaxZoom) +
                         "], got " + sv::format_number(z));
  if (args.has_rotate && !std::isfinite(args.rotate))
    throw UsageError("resample: --rotate must be a finite angle in degrees, got " +
                     sv::format_number(args.rotate));
  if ((!args.axes.empty() || args.reshape) && !args.has_rotate)
    throw UsageError("resample: --axes and --reshape go with --rotate");
  if (args.no_prefilter && args.degree < 0)
    throw UsageError(
        "resample: --no-prefilter goes with --degree N (or use --method "
        "cubic-unfiltered)");
  if (!(args.disc >= 0 && std::isfinite(args.disc)))
    throw UsageError("resample: --disc must be a fraction >= 0, got " +
                     sv::format_number(args.disc));
  if (!(args.peak > 0 && std::isfinite(args.peak)))
    throw UsageError("resample: --peak must be a positive number, got " +
                     sv::format_number(args.peak));
  const sv::Method method = sv::parse_method(args.method);
  if (args.degree >= 0) sv::check_degree(args.degree, 0, sv::kMaxDegree);
  const int degree = args.degree >= 0 ? args.degree : sv::method_degree(method);
  const bool prefilter = args.degree >= 0 ? !args.no_prefilter : sv::method_prefilters(method);
  const sv::ResampleOptions opt{method, resolve_boundary(args, "resample"), args.common.threads,
                                args.cval};
  const sv::SamplerOptions sopt{degree, opt.boundary, -1, args.common.threads, args.cval};
  const Precision precision = resolve_precision(args.precision, args.common.backend, "resample");
  // On gl and cuda: the method picks the fetch; --fetch picks the flavour of the prefiltered
  // cubic (on cuda also of cubic-unfiltered, which has no fetch of its own there).
  std::string fetch;
  const std::string& name = args.common.backend;
  const bool gpu = is_gpu(name);
  if (args.memory_budget_mib && !args.out_of_core)
    throw UsageError("resample: --memory-budget applies to --out-of-core only");
  if (args.out_of_core) {
    if (name != "cuda" || precision != Precision::Single)
      throw UsageError(
          "resample: --out-of-core runs on --backend cuda in single precision (the CPU "
          "resampling already streams in host memory)");
    if (args.repeat != 1) throw UsageError("resample: --out-of-core resamples once (no --repeat)");
    if (args.channels)
      throw UsageError("resample: --out-of-core takes one channel (no --channels)");
  }
  if (gpu && !args.out_of_core) {
    // scipy's extras are CPU only: the GPU backends zoom by one factor with aligned pixel areas
    // and rotate 2-D images in place.
    const char* cpu_only = args.has_shape                          ? "--shape"
                           : args.has_shift                        ? "--shift"
                           : args.has_zoom && args.zoom.size() > 1 ? "a per-axis --zoom"
                           : !args.grid_mode                       ? "--grid-mode false"
                           : !args.axes.empty()                    ? "--axes"
                           : args.reshape                          ? "--reshape"
                           : args.degree >= 0                      ? "--degree"
                                                                   : nullptr;
    if (cpu_only)
      throw UsageError(std::string("resample: ") + cpu_only + " is CPU only (use --backend cpu); " +
                       "--backend " + name + " zooms by one factor or rotates a 2-D image");
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
  if (args.out_of_core) {
    check_out_of_core_output(args.out, "resample");
    if (!args.reference.empty() || args.compare_original)
      std::fprintf(stderr,
                   "splinetool: resample: --out-of-core: %s compares the result in memory; "
                   "reading IN into memory instead\n",
                   args.reference.empty() ? "--compare-original" : "--reference");
    else if (const std::optional<sv::MappedVolume> mapped =
                 map_input(args.in, args.channels, args.common, "resample"))
      return resample_mapped(args, *backend, opt, degree, prefilter, *mapped);
  }

  sv::Loaded in = load_input(args.in, args.channels, args.common);
  check_finite(in, args.in, args.common);
  const sv::ArrayD& input = in.array;
  const std::vector<std::size_t> in_dims = input.dims();  // IN is moved into the work below
  if (args.has_rotate && gpu && !args.out_of_core && input.rank() != 2)
    throw sv::Error("resample: --rotate on --backend " + name + " needs a 2-D image; '" +
                    shown(args.in) + "' is " + std::to_string(input.rank()) + "-D (" +
                    sv::describe_shape(input.dims(), input.channels()) +
                    "); use --backend cpu or --zoom");
  const Plan plan = plan_resample(input.dims(), input.channels(), args);
  const char* shrink = args.has_zoom ? "--zoom below 1" : "--shape smaller than IN";
  if (!gpu && wants_antialias(args, input.dims()) && !antialias_exact(args, opt.boundary))
    std::fprintf(stderr,
                 "splinetool: note: resample: %s with --mode %s and --grid-mode %s "
                 "point-samples the spline (the anti-aliasing least-squares reduction is exact "
                 "for --mode reflect or grid-wrap with --grid-mode true, mirror with false); "
                 "--point-sample says so and silences this\n",
                 shrink, sv::boundary_scipy_name(opt.boundary), args.grid_mode ? "true" : "false");
  if (gpu && wants_antialias(args, input.dims()))
    std::fprintf(stderr,
                 "splinetool: note: resample: %s on --backend %s point-samples the spline (the "
                 "anti-aliasing least-squares reduction runs on --backend cpu); --point-sample "
                 "says so and silences this\n",
                 shrink, name.c_str());
  if (extension(args.out) == ".png" && input.rank() != 2)
    throw sv::Error("resample: a .png output needs a 2-D result; '" + shown(args.in) + "' is " +
                    std::to_string(input.rank()) + "-D");
  double input_max = -HUGE_VAL;
  for (double v : input.vec()) input_max = std::max(input_max, v);

  // What to measure the result against, if anything (loaded before the work starts). A full
  // turn is measured against the input, unless --reshape changed the shape.
  const double step = std::fmod(args.rotate, 360.0);
  const double total = args.has_rotate ? std::fmod(step * args.repeat, 360.0) : 0.0;
  const bool full_turn = args.has_rotate && std::fabs(std::remainder(total, 360.0)) < 1e-9 &&
                         plan.steps.back().out_dims == input.dims();
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
  sv::ArrayD result;
  Json ooc_json;
  if (args.out_of_core) {
    // Scipy's positions per axis or rotate's matrix (the CPU path's), then the slabs.
    check_one_channel(input.channels(), args.in);
    const std::vector<std::size_t>& out_dims = plan.steps.back().out_dims;
    sv::ArrayF f(input.dims(), 1);
    for (std::size_t i = 0; i < f.size(); ++i) f[i] = static_cast<float>(input[i]);
    std::vector<float> out(std::accumulate(out_dims.begin(), out_dims.end(), std::size_t{1},
                                           std::multiplies<std::size_t>()));
    const sv::cuda::OutOfCoreStats st =
        out_of_core_pass(f.data(), input.dims(), plan, args.grid_mode, out.data(),
                         out_of_core_resample_config(args, opt, degree, prefilter));
    result = sv::ArrayD(out_dims, 1);
    for (std::size_t i = 0; i < out.size(); ++i) result[i] = out[i];
    ooc_json = out_of_core_json(st);
    ooc_json["input_mapped"] = false;
  } else if (gpu)
    result = precision == Precision::Single
                 ? resampled<float>(*backend, std::move(in.array), args, opt)
                 : resampled<double>(*backend, std::move(in.array), args, opt);
  else
    result = precision == Precision::Single
                 ? transformed<float>(std::move(in.array), plan, args, sopt, prefilter)
                 : transformed<double>(std::move(in.array), plan, args, sopt, prefilter);
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

  const std::string ext = is_stdio(args.out) ? ".npy" : extension(args.out);
  const sv::DType dtype = ext == ".png"                    ? png_dtype(in.dtype, input_max)
                          : precision == Precision::Single ? sv::DType::F32
                                                           : sv::DType::F64;
  std::size_t clipped = 0;
  if (ext == ".png") clipped = warn_png_mapping(args.out, result, dtype);
  save_result(args.out, result, dtype, in.channel_axis,
              resampled_geometry(in.geometry, plan, args.grid_mode));

  if (args.common.json) {
    Json j = resample_json(args, *backend, opt, degree, prefilter, precision, seconds,
                           result.dims(), result.channels(), in.channel_axis, fetch, in_dims);
    if (args.has_rotate) j["axes"] = {plan.axis_a, plan.axis_b};
    if (ext == ".png") {
      j["png_dtype"] = sv::dtype_name(dtype);
      j["clipped"] = clipped;
    }
    if (reference) j["peak"] = peak;
    if (args.out_of_core) j["out_of_core"] = ooc_json;
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
  if (is_stdio(args.a) && is_stdio(args.b))
    throw UsageError("compare: A and B are both '-'; only one input can come from standard input");
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

namespace {

// The first difference between what the loader and the memory-mapped read make of a file, or
// "" when they agree exactly (values bit for bit, NaN as NaN), read a bounded slab at a time.
std::string mapped_difference(const sv::Loaded& l, const sv::MappedVolume& m) {
  if (m.dims() != l.array.dims() || m.channels() != l.array.channels())
    return "the shape is " + sv::describe_shape(m.dims(), m.channels()) + ", not " +
           sv::describe_shape(l.array.dims(), l.array.channels());
  if (m.channel_axis() != l.channel_axis) return "the channel axis differs";
  if (m.dtype() != l.dtype)
    return std::string("the dtype is ") + sv::dtype_name(m.dtype()) + ", not " +
           sv::dtype_name(l.dtype);
  if (m.spacing() != l.spacing) return "the spacing differs";
  if (m.geometry().affine != l.geometry.affine || m.geometry().source != l.geometry.source)
    return "the geometry differs";
  const std::size_t per = m.slice_values();
  const std::size_t slab = std::max<std::size_t>(1, kSlabValues / per);
  std::vector<double> d(std::min(slab, m.slices()) * per);
  for (std::size_t first = 0; first < m.slices(); first += slab) {
    const std::size_t n = std::min(slab, m.slices() - first);
    m.read_slices(first, n, d.data());
    for (std::size_t i = 0; i < n * per; ++i) {
      const double a = d[i], b = l.array[first * per + i];
      if (std::memcmp(&a, &b, sizeof a) != 0 && !(std::isnan(a) && std::isnan(b)))
        return "value " + std::to_string(first * per + i) + " is " + sv::format_number(a) +
               ", not " + sv::format_number(b);
    }
  }
  return "";
}

}  // namespace

// `splinetool info FILE`: what the loaders make of a file (the same loaders every command uses),
// and whether --out-of-core maps it.
void run_info_file(const InfoArgs& args) {
  sv::Loaded in = load_input(args.file, args.channels, args.common);
  std::optional<sv::MappedVolume> mapped;
  std::string not_mapped;  // why not, when it is not
  if (is_stdio(args.file)) {
    not_mapped = "standard input cannot be mapped";
  } else {
    try {
      mapped = args.common.raw.empty()
                   ? sv::open_mapped(args.file, args.channels)
                   : sv::open_mapped(args.file, args.channels, sv::parse_raw_spec(args.common.raw));
    } catch (const sv::NotMappable& e) {
      not_mapped = e.what();
    } catch (const sv::Error& e) {
      if (args.check_mapped)
        throw sv::Error(shown(args.file) +
                        ": the memory-mapped read disagrees with the loader: the loader reads "
                        "the file, the mapped read refuses it: " +
                        e.what());
      not_mapped = e.what();
    }
  }
  if (mapped && args.check_mapped) {
    std::string diff;
    try {
      diff = mapped_difference(in, *mapped);
    } catch (const sv::Error& e) {
      diff = std::string("reading it fails: ") + e.what();
    }
    if (!diff.empty())
      throw sv::Error(shown(args.file) +
                      ": the memory-mapped read disagrees with the loader: " + diff);
  }
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
        {"nonfinite", nf.count},
        {"mapped", mapped.has_value()},
        {"mapped_storage", mapped ? Json(mapped->describe()) : Json(nullptr)},
        {"not_mapped_reason", mapped ? Json(nullptr) : Json(not_mapped)},
        {"mapped_checked", mapped.has_value() && args.check_mapped}};
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
  if (mapped)
    std::printf("  --out-of-core: mapped (%s)%s\n", mapped->describe().c_str(),
                args.check_mapped ? ", checked against the loader" : "");
  else
    std::printf("  --out-of-core: read into memory (%s)\n", not_mapped.c_str());
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
