// Internal helpers shared by the file-format modules (io_image, io_npy, io_nrrd, io_any):
// error reporting that names the file, whole-file reading, atomic (temporary + rename) writing,
// overflow-checked size arithmetic, and conversion between doubles and stored scalar types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "splineview/array.h"
#include "splineview/error.h"

namespace sv::io {

// Throws sv::Error("<path>: <what>").
[[noreturn]] void fail(const std::string& path, const std::string& what);

// Reads the whole file; throws "<path>: cannot open: <reason>" or "<path>: cannot read: ...".
std::vector<unsigned char> read_file(const std::string& path);

// Writes `n` bytes to "<path>.tmp-<pid>-<counter>" in the same directory, flushes it to disk and
// renames it over `path`. On any failure the temporary file is removed and sv::Error is thrown,
// so whatever was at `path` before is left untouched.
void write_file_atomic(const std::string& path, const void* data, std::size_t n);
inline void write_file_atomic(const std::string& path, const std::vector<unsigned char>& bytes) {
  write_file_atomic(path, bytes.data(), bytes.size());
}

// The extension including the dot, in lower case ("" when there is none): "A/b.PNG" -> ".png".
std::string lower_extension(const std::string& path);
std::string to_lower(std::string s);

// Overflow-checked multiplication; returns false on overflow.
inline bool checked_mul(std::size_t a, std::size_t b, std::size_t* out) {
  if (a != 0 && b > SIZE_MAX / a) return false;
  *out = a * b;
  return true;
}

// Scalar types as stored in files. I16 exists only for reading NRRD "short".
enum class Scalar { U8, U16, I16, F32, F64 };
std::size_t scalar_size(Scalar s);
Scalar scalar_of(DType t);

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

// Decodes `n` values of type `s` from `src` (little or big endian) into `dst`.
void decode_values(const unsigned char* src, std::size_t n, Scalar s, bool big_endian, double* dst);
// Encodes `n` doubles as type `s` (integers rounded and clamped, NaN -> 0), little endian;
// I16 is read-only and throws.
void encode_values(const double* src, std::size_t n, Scalar s, unsigned char* dst);
// Encodes `n` floats as float32, little endian.
void encode_f32(const float* src, std::size_t n, unsigned char* dst);

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
