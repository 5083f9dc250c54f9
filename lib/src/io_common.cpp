// Shared plumbing of the file I/O module: the input guard (regular files only unless opted in,
// bounded reads), atomic saves through a guarded temporary file and rename, and the byte-level
// conversions between stored scalars and doubles.
#include "io_common.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>

#include "splineview/temp_files.h"
#include "splineview/text.h"

namespace sv::io {

void fail(const std::string& path, const std::string& what) {
  throw Error(printable(path, std::string::npos) + ": " + what);
}

std::string quote(std::string_view text, std::size_t max_len) {
  return "'" + printable(text, max_len) + "'";
}

namespace {

std::string errno_text(int e) {
  return std::strerror(e);
}

std::atomic<bool> g_allow_special{false};
std::atomic<long> g_volume{-1};

// What a non-regular file is, for the message.
const char* kind_of(mode_t mode) {
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

[[noreturn]] void refuse_special(const std::string& path, mode_t mode) {
  fail(path,
       std::string("not a regular file (") + kind_of(mode) + "); only regular files are read");
}

}  // namespace

}  // namespace sv::io

namespace sv {

InputOptions input_options() {
  InputOptions o;
  o.allow_special = io::g_allow_special.load();
  o.volume = io::g_volume.load();
  return o;
}

void set_input_options(const InputOptions& options) {
  io::g_allow_special.store(options.allow_special);
  io::g_volume.store(options.volume);
}

}  // namespace sv

namespace sv::io {

namespace {

// The guard, before anything is opened: opening a FIFO blocks until a writer comes (and a
// reader that opens and closes it breaks the writer's pipe), and opening some devices does
// something (rewinds a tape, arms a watchdog). Returns whether `path` is a regular file.
bool check_before_open(const std::string& path, bool allow_special) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) fail(path, "cannot open: " + errno_text(errno));
  if (S_ISDIR(st.st_mode)) fail(path, "cannot open: " + errno_text(EISDIR));
  const bool regular = S_ISREG(st.st_mode);
  if (!regular && !allow_special) refuse_special(path, st.st_mode);
  return regular;
}

}  // namespace

InputFile::InputFile(const std::string& path) : path_(path) {
  const bool allow_special = input_options().allow_special;
  struct stat st {};
  regular_ = check_before_open(path, allow_special);
  // O_NONBLOCK for what looked like a regular file: should it have been swapped for a FIFO in
  // the meantime, open() returns at once and the fstat() below refuses it.
  const int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | (regular_ ? O_NONBLOCK : 0);
  do {
    fd_ = ::open(path.c_str(), flags);
  } while (fd_ < 0 && errno == EINTR);
  if (fd_ < 0) fail(path, "cannot open: " + errno_text(errno));
  if (::fstat(fd_, &st) != 0) {
    const int e = errno;
    ::close(fd_);
    fail(path, "cannot open: " + errno_text(e));
  }
  if (S_ISDIR(st.st_mode) || (regular_ && !S_ISREG(st.st_mode))) {
    ::close(fd_);
    if (S_ISDIR(st.st_mode)) fail(path, "cannot open: " + errno_text(EISDIR));
    if (!allow_special) refuse_special(path, st.st_mode);
    fail(path, "cannot open: the file changed while it was opened");
  }
  if (regular_) {
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
    size_ = static_cast<std::size_t>(st.st_size);
  }
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

int InputFile::release_fd() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

std::size_t InputFile::read_append(std::vector<unsigned char>& out, std::size_t n) {
  if (fd_ < 0) fail(path_, "cannot read: the file is closed");
  if (regular_) {
    const std::size_t want = std::min(n, size_);
    try {
      if (want <= SIZE_MAX - out.size()) out.reserve(out.size() + want);
    } catch (const std::exception&) {
      fail(path_, "cannot read: out of memory for " + std::to_string(want) + " bytes");
    }
  }
  constexpr std::size_t kChunk = std::size_t{1} << 16;
  std::size_t got = 0;
  while (got < n) {
    const std::size_t want = std::min(n - got, kChunk);
    const std::size_t old = out.size();
    out.resize(old + want);  // geometric growth of the capacity, with what arrives
    ssize_t r;
    do {
      r = ::read(fd_, out.data() + old, want);
    } while (r < 0 && errno == EINTR);
    if (r < 0) {
      const int e = errno;
      out.resize(old);
      fail(path_, "cannot read: " + errno_text(e));
    }
    out.resize(old + static_cast<std::size_t>(r));
    got += static_cast<std::size_t>(r);
    if (r == 0) break;
  }
  return got;
}

std::vector<unsigned char> read_file(const std::string& path, std::size_t special_limit) {
  InputFile in(path);
  std::vector<unsigned char> bytes;
  in.read_append(bytes, in.regular() ? SIZE_MAX : special_limit);
  return bytes;
}

std::vector<unsigned char> read_file(const std::string& path) {
  InputFile in(path);
  std::vector<unsigned char> bytes;
  in.read_append(bytes, in.regular() ? SIZE_MAX : kMaxUnclaimedSpecial + 1);
  if (!in.regular() && bytes.size() > kMaxUnclaimedSpecial) {
    struct stat st {};
    const bool known = ::stat(path.c_str(), &st) == 0;
    fail(path, "more than " + std::to_string(kMaxUnclaimedSpecial) +
                   " bytes from a non-regular file" +
                   (known ? std::string(" (") + kind_of(st.st_mode) + ")" : std::string()));
  }
  return bytes;
}

bool check_regular(const std::string& path) {
  return check_before_open(path, input_options().allow_special);
}

}  // namespace sv::io

namespace sv {

void check_input(const std::string& path) {
  io::check_regular(path);
}

}  // namespace sv

namespace sv::io {

std::string temporary_name(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return path + ".tmp-" + std::to_string(static_cast<long>(::getpid())) + "-" +
         std::to_string(counter.fetch_add(1));
}

namespace {

// Writes and flushes `n` bytes to the (guarded) temporary; returns the problem, "" if none.
std::string write_temporary(const std::string& path, const std::string& tmp, const void* data,
                            std::size_t n) {
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) fail(path, "cannot create temporary file '" + tmp + "': " + errno_text(errno));
  std::string problem;
  if (n > 0 && std::fwrite(data, 1, n, f) != n) problem = "cannot write: " + errno_text(errno);
  if (problem.empty() && std::fflush(f) != 0) problem = "cannot write: " + errno_text(errno);
  if (problem.empty() && ::fsync(::fileno(f)) != 0 && errno != EINVAL && errno != EROFS)
    problem = "cannot write: " + errno_text(errno);
  if (std::fclose(f) != 0 && problem.empty()) problem = "cannot write: " + errno_text(errno);
  return problem;
}

}  // namespace

void write_file_atomic(const std::string& path, const void* data, std::size_t n) {
  write_files_atomic({{path, data, n}});
}

void write_files_atomic(const std::vector<FileToWrite>& files) {
  // Registered before the file exists, so that no moment leaves an unguarded temporary; the
  // guards' destructors remove every temporary not yet renamed on the way out.
  std::vector<TempFileGuard> guards;
  guards.reserve(files.size());
  for (const FileToWrite& f : files) {
    guards.emplace_back(temporary_name(f.path));
    const std::string problem = write_temporary(f.path, guards.back().path(), f.data, f.n);
    if (!problem.empty()) fail(f.path, problem);
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (std::rename(guards[i].path().c_str(), files[i].path.c_str()) != 0)
      fail(files[i].path, "cannot replace the file: " + errno_text(errno));
    guards[i].release();
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
    case Scalar::Bool:
    case Scalar::I8:
    case Scalar::U8:
      return 1;
    case Scalar::I16:
    case Scalar::U16:
    case Scalar::F16:
      return 2;
    case Scalar::I32:
    case Scalar::U32:
    case Scalar::F32:
      return 4;
    case Scalar::I64:
    case Scalar::U64:
    case Scalar::F64:
      return 8;
  }
  return 1;
}

Scalar scalar_of(DType t) {
  switch (t) {
    case DType::Bool:
      return Scalar::Bool;
    case DType::I8:
      return Scalar::I8;
    case DType::U8:
      return Scalar::U8;
    case DType::I16:
      return Scalar::I16;
    case DType::U16:
      return Scalar::U16;
    case DType::I32:
      return Scalar::I32;
    case DType::U32:
      return Scalar::U32;
    case DType::I64:
      return Scalar::I64;
    case DType::U64:
      return Scalar::U64;
    case DType::F16:
      return Scalar::F16;
    case DType::F32:
      return Scalar::F32;
    case DType::F64:
      return Scalar::F64;
  }
  return Scalar::F64;
}

DType dtype_of(Scalar s) {
  switch (s) {
    case Scalar::Bool:
      return DType::Bool;
    case Scalar::I8:
      return DType::I8;
    case Scalar::U8:
      return DType::U8;
    case Scalar::I16:
      return DType::I16;
    case Scalar::U16:
      return DType::U16;
    case Scalar::I32:
      return DType::I32;
    case Scalar::U32:
      return DType::U32;
    case Scalar::I64:
      return DType::I64;
    case Scalar::U64:
      return DType::U64;
    case Scalar::F16:
      return DType::F16;
    case Scalar::F32:
      return DType::F32;
    case Scalar::F64:
      return DType::F64;
  }
  return DType::F64;
}

float to_f32(double v) {
  // FLT_MAX plus half an ulp: from here on round-to-nearest gives infinity.
  constexpr double kOverflow = 0x1.ffffffp+127;
  if (v >= kOverflow) return std::numeric_limits<float>::infinity();
  if (v <= -kOverflow) return -std::numeric_limits<float>::infinity();
  return static_cast<float>(v);  // also NaN
}

double half_to_double(std::uint16_t h) {
  const int e = (h >> 10) & 0x1f;
  const int m = h & 0x3ff;
  double v;
  if (e == 0)
    v = std::ldexp(static_cast<double>(m), -24);  // zero and subnormals: m * 2^-24
  else if (e == 31)
    v = m == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  else
    v = std::ldexp(static_cast<double>(m + 1024), e - 25);  // (1 + m/1024) * 2^(e-15)
  return (h & 0x8000u) ? -v : v;
}

std::uint16_t double_to_half(double v) {
  const std::uint16_t sign = std::signbit(v) ? 0x8000u : 0u;
  if (std::isnan(v)) return static_cast<std::uint16_t>(sign | 0x7e00u);
  const double a = std::fabs(v);
  // 65504 (the largest half) plus half an ulp (16): the tie rounds to the even 65536 = inf.
  if (a >= 65520.0) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (a < 0x1p-14) {
    // Subnormal (or zero): a multiple of 2^-24. The scaling is exact; nearbyint rounds half to
    // even (the default rounding mode). 1024 is the smallest normal, whose bits it also is.
    const double m = std::nearbyint(a * 0x1p24);
    return static_cast<std::uint16_t>(sign | static_cast<unsigned>(m));
  }
  int exp2 = 0;
  std::frexp(a, &exp2);    // a = f * 2^exp2, f in [0.5, 1): a in [2^(exp2-1), 2^exp2)
  const int e = exp2 - 1;  // -14..15
  double m = std::nearbyint(std::ldexp(a, 10 - e));  // 1024..2048
  int biased = e + 15;
  if (m >= 2048.0) {
    m = 1024.0;
    ++biased;  // at most 30 here, since a < 65520
  }
  return static_cast<std::uint16_t>(sign | (static_cast<unsigned>(biased) << 10) |
                                    (static_cast<unsigned>(m) - 1024u));
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

// Two's complement reinterpretation of the low N bytes.
template <int N>
std::int64_t to_signed(std::uint64_t u) {
  if constexpr (N == 8) {
    return u >= (std::uint64_t{1} << 63)
               ? -static_cast<std::int64_t>(~u) - 1  // no overflow: ~u < 2^63
               : static_cast<std::int64_t>(u);
  } else {
    const std::uint64_t half = std::uint64_t{1} << (8 * N - 1);
    return u >= half ? static_cast<std::int64_t>(u) - static_cast<std::int64_t>(2 * half)
                     : static_cast<std::int64_t>(u);
  }
}

template <int N>
void decode_signed(const unsigned char* src, std::size_t n, bool big_endian, double* dst) {
  for (std::size_t i = 0; i < n; ++i)
    dst[i] = static_cast<double>(to_signed<N>(load_uint<N>(src + N * i, big_endian)));
}

template <int N>
void decode_unsigned(const unsigned char* src, std::size_t n, bool big_endian, double* dst) {
  for (std::size_t i = 0; i < n; ++i)
    dst[i] = static_cast<double>(load_uint<N>(src + N * i, big_endian));
}

constexpr double kTwo53 = 9007199254740992.0;
constexpr double kTwo63 = 9223372036854775808.0;
constexpr double kTwo64 = 18446744073709551616.0;

// Rounds half away from zero and clamps to [lo, hi] (both exact as doubles); NaN -> 0.
double round_clamp(double v, double lo, double hi) {
  if (std::isnan(v)) return 0;
  const double r = std::round(v);
  return r < lo ? lo : r > hi ? hi : r;
}

template <int N>
void encode_signed(const double* src, std::size_t n, unsigned char* dst) {
  const double hi = std::ldexp(1.0, 8 * N - 1) - 1;
  for (std::size_t i = 0; i < n; ++i) {
    const auto v = static_cast<std::int64_t>(round_clamp(src[i], -hi - 1, hi));
    store_le<N>(static_cast<std::uint64_t>(v), dst + N * i);
  }
}

template <int N>
void encode_unsigned(const double* src, std::size_t n, unsigned char* dst) {
  const double hi = std::ldexp(1.0, 8 * N) - 1;
  for (std::size_t i = 0; i < n; ++i)
    store_le<N>(static_cast<std::uint64_t>(round_clamp(src[i], 0, hi)), dst + N * i);
}

}  // namespace

std::optional<InexactValue> decode_values_checked(const unsigned char* src, std::size_t n, Scalar s,
                                                  bool big_endian, double* dst) {
  std::optional<InexactValue> inexact;
  switch (s) {
    case Scalar::Bool:
      for (std::size_t i = 0; i < n; ++i) dst[i] = src[i] != 0 ? 1.0 : 0.0;
      break;
    case Scalar::I8:
      decode_signed<1>(src, n, big_endian, dst);
      break;
    case Scalar::U8:
      decode_unsigned<1>(src, n, big_endian, dst);
      break;
    case Scalar::I16:
      decode_signed<2>(src, n, big_endian, dst);
      break;
    case Scalar::U16:
      decode_unsigned<2>(src, n, big_endian, dst);
      break;
    case Scalar::I32:
      decode_signed<4>(src, n, big_endian, dst);
      break;
    case Scalar::U32:
      decode_unsigned<4>(src, n, big_endian, dst);
      break;
    case Scalar::I64:
      for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t v = to_signed<8>(load_uint<8>(src + 8 * i, big_endian));
        const double d = static_cast<double>(v);
        dst[i] = d;
        // From 2^53 on a double holds v exactly only when converting back gives v (2^63, the
        // rounding of values near INT64_MAX, is out of range and never exact).
        if (!inexact && std::fabs(d) >= kTwo53 &&
            (d >= kTwo63 || static_cast<std::int64_t>(d) != v))
          inexact = InexactValue{i, std::to_string(v)};
      }
      break;
    case Scalar::U64:
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t v = load_uint<8>(src + 8 * i, big_endian);
        const double d = static_cast<double>(v);
        dst[i] = d;
        if (!inexact && d >= kTwo53 && (d >= kTwo64 || static_cast<std::uint64_t>(d) != v))
          inexact = InexactValue{i, std::to_string(v)};
      }
      break;
    case Scalar::F16:
      for (std::size_t i = 0; i < n; ++i)
        dst[i] = half_to_double(static_cast<std::uint16_t>(load_uint<2>(src + 2 * i, big_endian)));
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
  return inexact;
}

void decode_values_or_fail(const std::string& path, const unsigned char* src, std::size_t n,
                           Scalar s, bool big_endian, double* dst, std::size_t first_index) {
  const std::optional<InexactValue> inexact = decode_values_checked(src, n, s, big_endian, dst);
  if (inexact)
    fail(path, std::string(dtype_name(dtype_of(s))) + " value " + inexact->value + " at element " +
                   std::to_string(first_index + inexact->index) +
                   " is not exactly representable as a double");
}

void encode_values(const double* src, std::size_t n, Scalar s, unsigned char* dst) {
  switch (s) {
    case Scalar::Bool:
      for (std::size_t i = 0; i < n; ++i) dst[i] = src[i] != 0 && !std::isnan(src[i]) ? 1 : 0;
      break;
    case Scalar::I8:
      encode_signed<1>(src, n, dst);
      break;
    case Scalar::U8:
      encode_unsigned<1>(src, n, dst);
      break;
    case Scalar::I16:
      encode_signed<2>(src, n, dst);
      break;
    case Scalar::U16:
      encode_unsigned<2>(src, n, dst);
      break;
    case Scalar::I32:
      encode_signed<4>(src, n, dst);
      break;
    case Scalar::U32:
      encode_unsigned<4>(src, n, dst);
      break;
    case Scalar::I64:
      // 2^63 - 1 is not a double: clamp in double to [-2^63, 2^63) and the top separately.
      for (std::size_t i = 0; i < n; ++i) {
        const double r = std::isnan(src[i]) ? 0 : std::round(src[i]);
        const std::int64_t v = r >= kTwo63    ? std::numeric_limits<std::int64_t>::max()
                               : r <= -kTwo63 ? std::numeric_limits<std::int64_t>::min()
                                              : static_cast<std::int64_t>(r);
        store_le<8>(static_cast<std::uint64_t>(v), dst + 8 * i);
      }
      break;
    case Scalar::U64:
      for (std::size_t i = 0; i < n; ++i) {
        const double r = std::isnan(src[i]) ? 0 : std::round(src[i]);
        const std::uint64_t v = r >= kTwo64 ? std::numeric_limits<std::uint64_t>::max()
                                : r <= 0    ? 0
                                            : static_cast<std::uint64_t>(r);
        store_le<8>(v, dst + 8 * i);
      }
      break;
    case Scalar::F16:
      for (std::size_t i = 0; i < n; ++i) store_le<2>(double_to_half(src[i]), dst + 2 * i);
      break;
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

void finish_geometry(const std::string& path, std::size_t rank, std::vector<double>* spacing,
                     Geometry* geometry) {
  if (spacing->empty()) spacing->assign(rank, 1.0);
  try {
    if (geometry->oriented()) {
      check_geometry(*geometry, rank, "the orientation");
      *spacing = geometry_spacing(*geometry, rank);
    } else {
      *geometry = geometry_from_spacing(*spacing);
    }
  } catch (const Error& e) {
    fail(path, e.what());
  }
}

Loaded finish_loaded(const std::string& path, Loaded l) {
  finish_geometry(path, l.array.rank(), &l.spacing, &l.geometry);
  return l;
}

}  // namespace sv::io
