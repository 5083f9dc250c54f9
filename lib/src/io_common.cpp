// Shared plumbing of the file I/O module: reading whole files, atomic saves through a temporary
// file and rename, and the byte-level conversions between stored scalars and doubles.
#include "io_common.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>

namespace sv::io {

void fail(const std::string& path, const std::string& what) {
  throw Error(path + ": " + what);
}

namespace {

std::string errno_text(int e) {
  return std::strerror(e);
}

struct FileCloser {
  std::FILE* f;
  ~FileCloser() {
    if (f) std::fclose(f);
  }
};

}  // namespace

std::vector<unsigned char> read_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) fail(path, "cannot open: " + errno_text(errno));
  FileCloser closer{f};
  std::vector<unsigned char> bytes;
  struct stat st {};
  if (::fstat(::fileno(f), &st) != 0) fail(path, "cannot open: " + errno_text(errno));
  if (S_ISDIR(st.st_mode)) fail(path, "cannot open: " + errno_text(EISDIR));
  // Reserve from the current size of a regular file; the loop below reads until EOF either way,
  // so a file that changes size while we read is still handled.
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    try {
      bytes.reserve(static_cast<std::size_t>(st.st_size));
    } catch (const std::exception&) {
      fail(path, "cannot read: out of memory for " + std::to_string(st.st_size) + " bytes");
    }
  }
  unsigned char buf[1 << 16];
  for (;;) {
    std::size_t got = std::fread(buf, 1, sizeof buf, f);
    bytes.insert(bytes.end(), buf, buf + got);
    if (got < sizeof buf) {
      if (std::ferror(f)) fail(path, "cannot read: " + errno_text(errno));
      break;
    }
  }
  return bytes;
}

void write_file_atomic(const std::string& path, const void* data, std::size_t n) {
  static std::atomic<unsigned> counter{0};
  const std::string tmp = path + ".tmp-" + std::to_string(static_cast<long>(::getpid())) + "-" +
                          std::to_string(counter.fetch_add(1));
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) fail(path, "cannot create temporary file '" + tmp + "': " + errno_text(errno));
  std::string problem;
  if (n > 0 && std::fwrite(data, 1, n, f) != n) problem = "cannot write: " + errno_text(errno);
  if (problem.empty() && std::fflush(f) != 0) problem = "cannot write: " + errno_text(errno);
  if (problem.empty() && ::fsync(::fileno(f)) != 0 && errno != EINVAL && errno != EROFS)
    problem = "cannot write: " + errno_text(errno);
  if (std::fclose(f) != 0 && problem.empty()) problem = "cannot write: " + errno_text(errno);
  if (problem.empty() && std::rename(tmp.c_str(), path.c_str()) != 0)
    problem = "cannot replace the file: " + errno_text(errno);
  if (!problem.empty()) {
    std::remove(tmp.c_str());
    fail(path, problem);
  }
}

std::string to_lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string lower_extension(const std::string& path) {
  std::size_t slash = path.find_last_of('/');
  std::size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  // A leading dot names a hidden file, not an extension.
  std::size_t name_start = slash == std::string::npos ? 0 : slash + 1;
  if (dot == name_start) return "";
  return to_lower(path.substr(dot));
}

std::size_t scalar_size(Scalar s) {
  switch (s) {
    case Scalar::U8:
      return 1;
    case Scalar::U16:
    case Scalar::I16:
      return 2;
    case Scalar::F32:
      return 4;
    case Scalar::F64:
      return 8;
  }
  return 1;
}

Scalar scalar_of(DType t) {
  switch (t) {
    case DType::U8:
      return Scalar::U8;
    case DType::U16:
      return Scalar::U16;
    case DType::F32:
      return Scalar::F32;
    case DType::F64:
      return Scalar::F64;
  }
  return Scalar::F64;
}

float to_f32(double v) {
  // FLT_MAX plus half an ulp: from here on round-to-nearest gives infinity.
  constexpr double kOverflow = 0x1.ffffffp+127;
  if (v >= kOverflow) return std::numeric_limits<float>::infinity();
  if (v <= -kOverflow) return -std::numeric_limits<float>::infinity();
  return static_cast<float>(v);  // also NaN
}

namespace {

template <int N>
std::uint64_t load_uint(const unsigned char* p, bool big_endian) {
  std::uint64_t v = 0;
  for (int i = 0; i < N; ++i) {
    int shift = big_endian ? 8 * (N - 1 - i) : 8 * i;
    v |= static_cast<std::uint64_t>(p[i]) << shift;
  }
  return v;
}

template <int N>
void store_le(std::uint64_t v, unsigned char* p) {
  for (int i = 0; i < N; ++i) p[i] = static_cast<unsigned char>((v >> (8 * i)) & 0xffu);
}

}  // namespace

void decode_values(const unsigned char* src, std::size_t n, Scalar s, bool big_endian,
                   double* dst) {
  switch (s) {
    case Scalar::U8:
      for (std::size_t i = 0; i < n; ++i) dst[i] = src[i];
      break;
    case Scalar::U16:
      for (std::size_t i = 0; i < n; ++i)
        dst[i] = static_cast<double>(load_uint<2>(src + 2 * i, big_endian));
      break;
    case Scalar::I16:
      for (std::size_t i = 0; i < n; ++i) {
        auto u = static_cast<std::uint16_t>(load_uint<2>(src + 2 * i, big_endian));
        dst[i] = u >= 0x8000u ? static_cast<double>(u) - 65536.0 : static_cast<double>(u);
      }
      break;
    case Scalar::F32:
      for (std::size_t i = 0; i < n; ++i) {
        auto u = static_cast<std::uint32_t>(load_uint<4>(src + 4 * i, big_endian));
        float f;
        std::memcpy(&f, &u, sizeof f);
        dst[i] = f;
      }
      break;
    case Scalar::F64:
      for (std::size_t i = 0; i < n; ++i) {
        std::uint64_t u = load_uint<8>(src + 8 * i, big_endian);
        std::memcpy(&dst[i], &u, sizeof u);
      }
      break;
  }
}

void encode_values(const double* src, std::size_t n, Scalar s, unsigned char* dst) {
  switch (s) {
    case Scalar::U8:
      for (std::size_t i = 0; i < n; ++i)
        dst[i] = static_cast<unsigned char>(quantize(src[i], 255.0));
      break;
    case Scalar::U16:
      for (std::size_t i = 0; i < n; ++i)
        store_le<2>(static_cast<std::uint64_t>(quantize(src[i], 65535.0)), dst + 2 * i);
      break;
    case Scalar::I16:
      throw Error("internal error: int16 output is not supported");
    case Scalar::F32:
      for (std::size_t i = 0; i < n; ++i) {
        float f = to_f32(src[i]);
        std::uint32_t u;
        std::memcpy(&u, &f, sizeof u);
        store_le<4>(u, dst + 4 * i);
      }
      break;
    case Scalar::F64:
      for (std::size_t i = 0; i < n; ++i) {
        std::uint64_t u;
        std::memcpy(&u, &src[i], sizeof u);
        store_le<8>(u, dst + 8 * i);
      }
      break;
  }
}

void encode_f32(const float* src, std::size_t n, unsigned char* dst) {
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t u;
    std::memcpy(&u, &src[i], sizeof u);
    store_le<4>(u, dst + 4 * i);
  }
}

}  // namespace sv::io
