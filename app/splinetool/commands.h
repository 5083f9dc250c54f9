// The splinetool commands (prefilter, sample, resample, compare, info, upscale-video): their
// arguments as plain structs filled by the command line parser, and one function per command. A
// command validates everything and computes its whole result before it writes OUT, so a failure
// never creates or damages an output file; failures are thrown as sv::Error with one sentence.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "splineview/array.h"
#include "splineview/error.h"
#include "splineview/io.h"

namespace splinetool {

// A command line that parses but asks for something impossible (OUT the same file as an input,
// options the backend cannot take together, ...): main() reports it like a parse error, exit
// status 2. These are all checked before any input is read, except OUT against the inputs,
// which is checked before any work.
class UsageError : public sv::Error {
 public:
  using sv::Error::Error;
};

// Options every command takes.
struct CommonArgs {
  std::string backend = "cpu";  // cpu | cuda | gl
  bool json = false;            // print a JSON object on stdout
  unsigned threads = 0;         // CPU threads; 0 = all hardware threads
  std::string fetch;            // gl and cuda: fetch flavour ("" = otf on gl, precise on cuda)
  std::string format;           // gl only: texture format ("" = r32f)
  std::string raw;  // --raw SPEC: how to read inputs without a known extension ("" = refuse them)
  // --allow-nonfinite: process NaN/inf in the data (and, for sample, NaN rows of COORDS) instead
  // of refusing them (prefilter, sample, resample, compare).
  bool allow_nonfinite = false;
  // --allow-special-files: inputs may also be pipes or devices (sv::InputOptions::allow_special;
  // read only as far as their headers claim). By default only regular files are read.
  bool allow_special = false;
  // --volume INDEX: which volume of a 4-D input (NIfTI) to read; -1 = refuse 4-D inputs.
  long volume = -1;
};

struct PrefilterArgs {
  CommonArgs common;
  std::string in, out;
  int degree = 3;
  std::string boundary = "reflect";
  std::string mode;       // --mode: scipy.ndimage's name; "" = --boundary decides
  double cval = 0.0;      // --cval: the value outside for mode constant and grid-constant
  std::string precision;  // "" = the backend's own: double on cpu, single on cuda
  bool channels = false;
  // --out-of-core: the CUDA prefilter in slabs with the derived halo (host memory only held on
  // the device a slab at a time); --memory-budget MIB caps the device memory (0: 80% of free).
  bool out_of_core = false;
  std::size_t memory_budget_mib = 0;
};

struct SampleArgs {
  CommonArgs common;
  std::string in, coords, out;
  int degree = 3;
  bool degree_given = false;  // --degree was on the command line
  std::string boundary = "reflect";
  std::string mode;       // --mode: scipy.ndimage's name; "" = --boundary decides
  double cval = 0.0;      // --cval: the value outside for mode constant and grid-constant
  std::string precision;  // "" = the backend's own: double on cpu, single on gl and cuda
  bool channels = false;
  bool no_prefilter = false;
  int derivative = -1;  // >= 0: derivative along this array axis
};

struct ResampleArgs {
  CommonArgs common;
  std::string in, out;
  // Exactly one operation: --zoom, --shape, --shift or --rotate.
  bool has_zoom = false, has_rotate = false, has_shape = false, has_shift = false;
  // --zoom: one factor for every spatial axis, or one per axis (array order); each in
  // (0, kMaxZoom]; each step's result at most kMaxResultValues scalars.
  std::vector<double> zoom{1.0};
  std::vector<std::size_t> shape;  // --shape: the output's spatial extents (array order)
  std::vector<double> shift;       // --shift: one per axis or one for all (output i takes i - s)
  // --grid-mode: true (the default) aligns pixel areas, output i at (i + 1/2) in/out - 1/2;
  // false aligns the corner samples, output i at i (in - 1)/(out - 1) (scipy's grid_mode).
  bool grid_mode = true;
  // --point-sample: a --zoom below 1 samples the interpolating spline at the output positions
  // (scipy.ndimage.zoom) instead of the least-squares reduction (the default on the CPU).
  bool point_sample = false;
  double rotate = 0.0;    // degrees per step (any finite angle; reduced modulo 360 exactly)
  std::vector<int> axes;  // --axes I,J: the plane of --rotate (default the last two axes)
  bool reshape = false;   // --reshape: the output holds the whole rotated input (scipy's default)
  int repeat = 1;
  std::string method = "cubic";
  int degree = -1;            // --degree N: the spline of degree N (0..7) instead of --method
  bool no_prefilter = false;  // with --degree: the input is the coefficients
  std::string boundary = "reflect";
  std::string mode;       // --mode: scipy.ndimage's name; "" = --boundary decides
  double cval = 0.0;      // --cval: the value outside for mode constant and grid-constant
  std::string precision;  // "" = the backend's own: double on cpu, single on gl and cuda
  bool channels = false;
  std::string reference;  // compare the result with this file
  bool compare_original = false;
  double disc = 0.35;  // metrics inside the centred disc of radius disc * min(H, W) (2-D)
  double peak = 1.0;
  bool has_peak = false;  // else the peak is the input type's full scale (sv::dtype_full_scale)
  // --out-of-core (with --backend cuda, --zoom/--shape/--shift): output slabs along the slowest
  // axis, each from its input window with the derived halo; --memory-budget MIB caps the device
  // memory (0: 80% of free). Every mode and degree, as the CPU path.
  bool out_of_core = false;
  std::size_t memory_budget_mib = 0;
};

struct CompareArgs {
  CommonArgs common;
  std::string a, b;
  bool has_disc = false;
  double disc = 0.35;
  double peak = 1.0;
  bool has_peak = false;  // else the larger full scale of the two inputs' types
  bool channels = false;
};

// upscale-video IN OUT: every frame zoomed by `scale` (see upscale_video.cpp).
struct UpscaleVideoArgs {
  std::string in, out;
  double scale = 2.0;
  std::string method = "cubic";  // nearest | linear | cubic-unfiltered | cubic
  std::string backend = "cpu";   // cpu | cuda
  std::string codec;             // "" = the container's default
  int crf = -1;                  // -1 = the encoder's default
  unsigned threads = 0;          // CPU threads of the cpu upscaler
  bool quiet = false, json = false, no_audio = false;
  bool allow_damaged = false;  // copy damaged/truncated audio (what is there) instead of failing
};

struct InfoArgs {
  CommonArgs common;
  std::string file;  // "" = the system (version, backends, devices); else describe this file
  bool channels = false;
  // --check-mapped: also read FILE as --out-of-core does (memory-mapped, sv::open_mapped) and
  // fail unless that gives the loader's dims, dtype, geometry and values exactly.
  bool check_mapped = false;
};

// Bounds of resample --zoom: the factor (checked while parsing), and the number of scalars
// (points * channels) one step may produce (checked per step before any work: 2^27, 1 GiB as
// double), so the output is bounded whatever the factor and --repeat.
constexpr double kMaxZoom = 10000;
constexpr std::size_t kMaxResultValues = std::size_t{1} << 27;

void run_prefilter(const PrefilterArgs& args);
void run_sample(const SampleArgs& args);
void run_resample(const ResampleArgs& args);
void run_compare(const CompareArgs& args);
void run_info(const InfoArgs& args);
void run_upscale_video(const UpscaleVideoArgs& args);

// Shared by the command files (defined in commands.cpp).
// Lower-case extension including the dot ("" when there is none; ".nii.gz" counts as one).
std::string extension(const std::string& path);
// A path as messages show it: control bytes escaped, never more than a line.
std::string shown(const std::string& path);
// The depth of a PNG written from data of type `input` whose largest value is `input_max`:
// 8-bit and 16-bit inputs keep theirs; other data 8 bits when its values fit [0, 255].
sv::DType png_dtype(sv::DType input, double input_max);
// A .npy from standard input ("-" as an input), refused when standard input holds the commands
// of `batch -` (set_stdin_is_batch).
sv::Loaded load_stdin_npy(bool channels);

// What one command may change in the process, put back before the next one of a batch (where
// the reports go, the loaders' input options), so that no state passes from one line to the next.
void reset_command_state();
// `batch -`: standard input carries the batch file, so no command may read an array from it.
void set_stdin_is_batch(bool taken);

}  // namespace splinetool
