// Headerless raw volumes: the layout comes from a RawSpec (usually parsed from a short string
// such as "64x256x256:u16:be") instead of from the file.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "io_common.h"
#include "io_layout.h"
#include "splineview/io.h"

namespace sv {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = s.find(sep, start);
    parts.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

// Digits only (no sign, no blanks), without overflow.
bool parse_size(const std::string& s, std::size_t* out) {
  if (s.empty() || s.size() > 18) return false;
  std::size_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<std::size_t>(c - '0');
  }
  *out = v;
  return true;
}

bool parse_positive(const std::string& s, double* out) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return false;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v) || !(v > 0)) return false;
  *out = v;
  return true;
}

std::size_t type_size(RawSpec::Type t) {
  switch (t) {
    case RawSpec::Type::U8:
      return 1;
    case RawSpec::Type::U16:
    case RawSpec::Type::I16:
      return 2;
    case RawSpec::Type::F32:
      return 4;
    case RawSpec::Type::F64:
      return 8;
  }
  return 1;
}

io::Scalar scalar_of(RawSpec::Type t) {
  switch (t) {
    case RawSpec::Type::U8:
      return io::Scalar::U8;
    case RawSpec::Type::U16:
      return io::Scalar::U16;
    case RawSpec::Type::I16:
      return io::Scalar::I16;
    case RawSpec::Type::F32:
      return io::Scalar::F32;
    case RawSpec::Type::F64:
      return io::Scalar::F64;
  }
  return io::Scalar::U8;
}

// The smallest DType that holds every stored value exactly (int16 in float, as NRRD "short").
DType dtype_of(RawSpec::Type t) {
  switch (t) {
    case RawSpec::Type::U8:
      return DType::U8;
    case RawSpec::Type::U16:
      return DType::U16;
    case RawSpec::Type::I16:
    case RawSpec::Type::F32:
      return DType::F32;
    case RawSpec::Type::F64:
      return DType::F64;
  }
  return DType::F64;
}

// What a spec declares for `path`, checked as load_raw checks it (everything before the data).
struct RawLayout {
  std::vector<std::size_t> dims;
  std::size_t channels = 1, n = 0, size = 0, expected = 0;
};

RawLayout raw_layout(const std::string& path, const RawSpec& spec, bool channel_axis) {
  RawLayout L;
  std::vector<std::size_t>& dims = L.dims;
  dims = spec.dims;
  std::size_t& channels = L.channels;
  if (channel_axis) {
    if (dims.size() < 2)
      io::fail(path,
               "a raw volume with a channel axis needs 2 to 4 dims (spatial dims, then "
               "channels), the spec gives " +
                   std::to_string(dims.size()));
    channels = dims.back();
    dims.pop_back();
    if (channels < 1 || channels > kMaxChannels)
      io::fail(path, "the channel axis of the raw spec has " + std::to_string(channels) +
                         " entries, expected 1 to 4");
  }
  if (dims.empty() || dims.size() > kMaxRank)
    io::fail(path,
             "a raw volume has 1 to 3 spatial dims, the spec gives " + std::to_string(dims.size()));
  for (std::size_t d : dims)
    if (d == 0) io::fail(path, "the raw spec has a zero-size axis");
  if (!spec.spacing.empty() && spec.spacing.size() != dims.size())
    io::fail(path, "the raw spec gives " + std::to_string(spec.spacing.size()) + " spacings for " +
                       std::to_string(dims.size()) + " spatial axes");

  L.size = type_size(spec.type);
  std::size_t data_bytes = 0;
  L.n = channels;
  for (std::size_t d : dims)
    if (!io::checked_mul(L.n, d, &L.n)) io::fail(path, "the raw spec's dims are too large");
  if (!io::checked_mul(L.n, L.size, &data_bytes) || data_bytes > SIZE_MAX - spec.offset)
    io::fail(path, "the raw spec's dims are too large");
  L.expected = spec.offset + data_bytes;
  return L;
}

// A regular file must be exactly as long as the spec needs.
void check_raw_file_size(const std::string& path, const RawSpec& spec, const RawLayout& L,
                         std::size_t file_size) {
  if (file_size != L.expected)
    io::fail(path, "the file holds " + std::to_string(file_size) + " bytes, the raw spec needs " +
                       std::to_string(L.expected) + " (" +
                       (spec.offset ? std::to_string(spec.offset) + " header bytes + " : "") +
                       std::to_string(L.n) + " values of " + std::to_string(L.size) + " bytes)");
}

Loaded read_raw(const std::string& path, const RawSpec& spec, bool channel_axis) {
  const RawLayout L = raw_layout(path, spec, channel_axis);
  const std::size_t expected = L.expected;

  // Compare sizes before reading, so a wrong spec on a large file fails at once; a device or
  // pipe (only when opted in) is read no further than the spec needs plus one byte.
  io::InputFile in(path);
  if (in.regular()) check_raw_file_size(path, spec, L, in.size());
  std::vector<unsigned char> bytes;
  in.read_append(bytes, expected < SIZE_MAX ? expected + 1 : expected);
  if (bytes.size() != expected)
    io::fail(path, "the file holds " + std::string(bytes.size() > expected ? "more than " : "") +
                       std::to_string(bytes.size() > expected ? expected : bytes.size()) +
                       " bytes, the raw spec needs " + std::to_string(expected));

  Loaded out;
  out.array = ArrayD(L.dims, L.channels);
  out.channel_axis = channel_axis;
  out.dtype = dtype_of(spec.type);
  out.spacing = spec.spacing.empty() ? std::vector<double>(L.dims.size(), 1.0) : spec.spacing;
  io::decode_values(bytes.data() + spec.offset, L.n, scalar_of(spec.type), spec.big_endian,
                    out.array.data());
  return out;
}

}  // namespace

RawSpec parse_raw_spec(const std::string& spec) {
  auto bad = [&](const std::string& what) -> Error {
    return Error("raw volume spec " + io::quote(spec) + ": " + what +
                 " (expected DIMS:TYPE[:le|:be][:spacing=AxBxC][:offset=BYTES], e.g. "
                 "64x256x256:u16)");
  };
  const std::vector<std::string> fields = split(spec, ':');
  if (fields.size() < 2) throw bad("needs at least dims and a type");
  RawSpec out;
  for (const std::string& d : split(fields[0], 'x')) {
    std::size_t v = 0;
    if (!parse_size(d, &v) || v == 0)
      throw bad("dims " + io::quote(fields[0], 40) + " are not positive integers joined by 'x'");
    out.dims.push_back(v);
  }
  if (out.dims.size() > 4) throw bad("more than 4 dims");

  const std::string& t = fields[1];
  if (t == "u8")
    out.type = RawSpec::Type::U8;
  else if (t == "u16")
    out.type = RawSpec::Type::U16;
  else if (t == "i16")
    out.type = RawSpec::Type::I16;
  else if (t == "f32")
    out.type = RawSpec::Type::F32;
  else if (t == "f64")
    out.type = RawSpec::Type::F64;
  else
    throw bad("unknown type " + io::quote(t, 40) + " (u8, u16, i16, f32 or f64)");

  bool have_order = false, have_spacing = false, have_offset = false;
  for (std::size_t i = 2; i < fields.size(); ++i) {
    const std::string& f = fields[i];
    if (f == "le" || f == "be") {
      if (have_order) throw bad("byte order given twice");
      have_order = true;
      out.big_endian = f == "be";
    } else if (f.rfind("spacing=", 0) == 0) {
      if (have_spacing) throw bad("spacing given twice");
      have_spacing = true;
      for (const std::string& s : split(f.substr(8), 'x')) {
        double v = 0;
        if (!parse_positive(s, &v))
          throw bad("spacing " + io::quote(f.substr(8), 40) +
                    " is not positive numbers joined by 'x'");
        out.spacing.push_back(v);
      }
    } else if (f.rfind("offset=", 0) == 0) {
      if (have_offset) throw bad("offset given twice");
      have_offset = true;
      if (!parse_size(f.substr(7), &out.offset))
        throw bad("offset " + io::quote(f.substr(7), 40) + " is not a byte count");
    } else {
      throw bad("unknown field " + io::quote(f, 40));
    }
  }
  if (!out.spacing.empty() && out.spacing.size() != out.dims.size() &&
      out.spacing.size() + 1 != out.dims.size())
    throw bad("spacing has " + std::to_string(out.spacing.size()) + " values for " +
              std::to_string(out.dims.size()) + " dims");
  return out;
}

Loaded load_raw(const std::string& path, const RawSpec& spec, bool channel_axis) {
  return io::guard_memory(
      path, [&] { return io::finish_loaded(path, read_raw(path, spec, channel_axis)); });
}

namespace io {

DataLayout probe_raw(const std::string& path, const RawSpec& spec, bool channel_axis) {
  return guard_memory(path, [&] {
    DataLayout out;
    const RawLayout L = raw_layout(path, spec, channel_axis);
    if (!check_regular(path)) {
      out.not_mappable = "it is not a regular file";
      return out;
    }
    check_raw_file_size(path, spec, L, InputFile(path).size());
    out.dims = L.dims;
    out.channels = L.channels;
    out.channel_axis = channel_axis;
    out.dtype = sv::dtype_of(spec.type);  // the RawSpec overloads above
    out.scalar = sv::scalar_of(spec.type);
    out.big_endian = spec.big_endian;
    out.data_path = out.error_path = path;
    out.data_offset = spec.offset;
    out.data_bytes = L.expected - spec.offset;
    out.spacing = spec.spacing.empty() ? std::vector<double>(L.dims.size(), 1.0) : spec.spacing;
    finish_geometry(path, L.dims.size(), &out.spacing, &out.geometry);
    return out;
  });
}

}  // namespace io

}  // namespace sv
