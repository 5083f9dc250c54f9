// Internal helpers shared by the file-format modules (io_image, io_npy, io_nrrd, io_any):
// error reporting that names the file, the input guard (regular files only, bounded reads),
// atomic (temporary + rename, signal-safe) writing,
// overflow-checked size arithmetic, and conversion between doubles and stored scalar types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "splineview/array.h"
#include "splineview/error.h"
#include "splineview/input.h"
#include "splineview/io.h"

namespace sv::io {

// Throws sv::Error("<path>: <what>"), the path made printable (control bytes escaped, never
// shortened).
[[noreturn]] void fail(const std::string& path, const std::string& what);

// "'<text>'" with the text made printable and short (sv::printable): how loaders quote what
// they read from a file or a spec.
std::string quote(std::string_view text, std::size_t max_len = 80);

// An input opened through the guard of splineview/input.h: regular files only unless
// InputOptions::allow_special; a refused input is never opened (opening a FIFO would block,
// opening some devices has effects). Throws "<path>: not a regular file (a FIFO); only regular
// files are read", "<path>: cannot open: <reason>".
class InputFile {
 public:
  explicit InputFile(const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::string& path() const { return path_; }
  bool regular() const { return regular_; }
  // The size of a regular file when it was opened (0 for other inputs).
  std::size_t size() const { return size_; }
  // Appends up to `n` more bytes to `out` and returns how many it appended (fewer only at the
  // end of the input). The buffer grows with what arrives, never by `n` up front, except that
  // a regular file reserves min(n, its size) at once. Throws "<path>: cannot read: ...".
  std::size_t read_append(std::vector<unsigned char>& out, std::size_t n);
  // Hands the descriptor over (e.g. to zlib's gzdopen); the caller closes it.
  int release_fd();

 private:
  std::string path_;
  int fd_ = -1;
  bool regular_ = false;
  std::size_t size_ = 0;
};

// The guard of InputFile without opening anything: throws InputFile's errors for an input that
// is refused (a device or FIFO without InputOptions::allow_special, a missing file, a folder);
// returns whether `path` is a regular file (false: an opted-in device, FIFO or socket).
bool check_regular(const std::string& path);

// Reads a whole regular file, or at most `special_limit` bytes of an opted-in device or pipe
// (the caller passes what the format claims plus slack, so that extra bytes show as trailing
// data). The errors are InputFile's.
std::vector<unsigned char> read_file(const std::string& path, std::size_t special_limit);
// For formats that state no size up front (images): a whole regular file, or an opted-in
// device or pipe up to kMaxUnclaimedSpecial bytes; more is "<path>: more than 67108864 bytes
// from a non-regular file (a character device)".
std::vector<unsigned char> read_file(const std::string& path);

// Writes `n` bytes to "<path>.tmp-<pid>-<counter>" in the same directory, flushes it to disk and
// renames it over `path`. The temporary is registered with sv::TempFileGuard from before it is
// created until the rename, so it is removed on any failure, exception or terminating signal
// (SIGINT, SIGTERM, SIGXFSZ, ...), and sv::Error is thrown: whatever was at `path` before is
// left untouched.
void write_file_atomic(const std::string& path, const void* data, std::size_t n);
inline void write_file_atomic(const std::string& path, const std::vector<unsigned char>& bytes) {
  write_file_atomic(path, bytes.data(), bytes.size());
}

// Several files that belong together (a .nhdr header and its data file): every temporary is
// written and flushed first (each guarded as above), then they are renamed in the order given.
// A failure before the renames leaves every target untouched.
struct FileToWrite {
  std::string path;
  const void* data;
  std::size_t n;
};
void write_files_atomic(const std::vector<FileToWrite>& files);

// "<path>.tmp-<pid>-<counter>": the name of a temporary beside `path` (every writer's, so that
// a left-over one is recognisable; register it with sv::TempFileGuard before creating it).
std::string temporary_name(const std::string& path);

// The extension including the dot, in lower case ("" when there is none): "A/b.PNG" -> ".png".
std::string lower_extension(const std::string& path);
std::string to_lower(std::string s);

// Overflow-checked multiplication; returns false on overflow.
inline bool checked_mul(std::size_t a, std::size_t b, std::size_t* out) {
  if (a != 0 && b > SIZE_MAX / a) return false;
  *out = a * b;
  return true;
}

// Scalar types as stored in files, one per DType (NRRD "short" and NIfTI int16 read through
// I16 although those loaders report them as DType::F32).
enum class Scalar { Bool, I8, U8, I16, U16, I32, U32, I64, U64, F16, F32, F64 };
std::size_t scalar_size(Scalar s);
Scalar scalar_of(DType t);
DType dtype_of(Scalar s);

// Rounds to the nearest integer and clamps to [0, max]; NaN becomes 0.
inline double quantize(double v, double max) {
  if (!(v > 0)) return 0;  // also NaN
  if (v >= max) return max;
  double r = static_cast<double>(static_cast<std::uint64_t>(v + 0.5));
  return r > max ? max : r;
}

// double -> float with IEEE round-to-nearest; values beyond the float range become +-inf
// (a plain cast of an out-of-range double is undefined behaviour in C++).
float to_f32(double v);
// IEEE binary16 <-> double. half_to_double is exact (subnormals, +-inf, NaN kept);
// double_to_half rounds to nearest, ties to even (directly from the double, no double rounding),
// magnitudes from 65520 on (and infinities) become +-inf, NaN becomes a quiet NaN of its sign.
double half_to_double(std::uint16_t h);
std::uint16_t double_to_half(double v);

// The first stored value that decode_values could not represent exactly as a double (int64 or
// uint64 beyond 2^53 in magnitude and not a multiple of a high enough power of two).
struct InexactValue {
  std::size_t index = 0;  // element index within the decoded run
  std::string value;      // the stored value in decimal
};

// Decodes `n` values of type `s` from `src` (little or big endian) into `dst`. Every type but
// int64/uint64 converts exactly; bool bytes read as 0 (zero byte) or 1 (any other byte). An
// int64/uint64 value that a double cannot hold is stored rounded to nearest; decode_values_checked
// returns the first such value so that the caller can name it (decode_values_or_fail does),
// decode_values ignores it (for types that cannot have one).
std::optional<InexactValue> decode_values_checked(const unsigned char* src, std::size_t n, Scalar s,
                                                  bool big_endian, double* dst);
inline void decode_values(const unsigned char* src, std::size_t n, Scalar s, bool big_endian,
                          double* dst) {
  decode_values_checked(src, n, s, big_endian, dst);
}
// decode_values_checked, throwing on an inexact value: "<path>: int64 value 9007199254740993 at
// element 12 is not exactly representable as a double" (the element index is `first_index` plus the
// position within this run).
void decode_values_or_fail(const std::string& path, const unsigned char* src, std::size_t n,
                           Scalar s, bool big_endian, double* dst, std::size_t first_index = 0);
// Encodes `n` doubles as type `s`, little endian. Integer types: NaN becomes 0, other values
// are rounded to nearest with halves away from zero (std::round: 2.5 -> 3, -2.5 -> -3) and
// clamped to the type's range (+-inf to its ends). Bool: 0 and NaN become 0 (False), every other
// value 1 (True). float16 and float32: round to nearest even, beyond the range +-inf, NaN kept.
void encode_values(const double* src, std::size_t n, Scalar s, unsigned char* dst);
// Encodes `n` floats as float32, little endian.
void encode_f32(const float* src, std::size_t n, unsigned char* dst);

// Whether the extension of `path` names a format load_any reads (defined in io_any.cpp).
bool known_extension(const std::string& path);

// The last step of every loader: a missing spacing becomes all 1; an unoriented geometry
// becomes diag(spacing); an oriented one is checked (check_geometry) and the spacing set to its
// column lengths. Errors name the path.
Loaded finish_loaded(const std::string& path, Loaded l);
// The same for a file's metadata alone (`rank` spatial axes), for code that reads the samples
// another way (splineview/mapped.h): the spacing and geometry finish_loaded would leave.
void finish_geometry(const std::string& path, std::size_t rank, std::vector<double>* spacing,
                     Geometry* geometry);

// Converts std::bad_alloc raised while loading or saving into a clear sv::Error.
template <class Fn>
auto guard_memory(const std::string& path, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    fail(path, "out of memory");
  } catch (const std::length_error&) {
    fail(path, "out of memory (size too large)");
  }
}

}  // namespace sv::io
