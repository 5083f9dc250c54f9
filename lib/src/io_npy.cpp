// NumPy .npy reading and writing, written from the format description in numpy's
// numpy/lib/format.py documentation: a magic string, a version, a header length and a Python
// dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)}, followed by the raw data.
// Every numeric dtype is read (bool, int8..int64, uint8..uint64, float16/32/64) in either byte
// order and either memory order (Fortran order is reordered into ours, C order).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "io_common.h"
#include "io_layout.h"
#include "splineview/io.h"

namespace sv {

namespace {

using io::fail;

constexpr unsigned char kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

// A value of the small subset of Python literals that .npy headers use.
struct PyValue {
  enum Kind { kStr, kBool, kInt, kNone, kSeq } kind = kNone;
  std::string str;
  bool boolean = false;
  std::size_t integer = 0;
  std::vector<PyValue> items;
  std::size_t begin = 0, end = 0;  // where its text lies in the header, for messages
};

// Recursive-descent parser for the header dict. Errors carry the file name.
class HeaderParser {
 public:
  HeaderParser(const std::string& path, const std::string& text) : path_(path), s_(text) {}

  std::vector<std::pair<std::string, PyValue>> parse_dict() {
    std::vector<std::pair<std::string, PyValue>> out;
    skip_ws();
    expect('{');
    for (;;) {
      skip_ws();
      if (peek() == '}') {
        ++i_;
        break;
      }
      PyValue key = parse_value(0);
      if (key.kind != PyValue::kStr) bad("dictionary key is not a string");
      skip_ws();
      expect(':');
      PyValue value = parse_value(0);
      out.emplace_back(key.str, std::move(value));
      skip_ws();
      if (peek() == ',') {
        ++i_;
      } else if (peek() != '}') {
        bad("expected ',' or '}'");
      }
    }
    skip_ws();
    if (i_ != s_.size()) bad("unexpected text after the dictionary");
    return out;
  }

 private:
  [[noreturn]] void bad(const std::string& what) {
    fail(path_, "malformed .npy header (" + what + " at offset " + std::to_string(i_) + ")");
  }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  void expect(char c) {
    if (peek() != c) bad(std::string("expected '") + c + "'");
    ++i_;
  }
  bool take_word(const char* w) {
    std::size_t n = std::strlen(w);
    if (s_.compare(i_, n, w) != 0) return false;
    i_ += n;
    return true;
  }

  PyValue parse_value(int depth) {
    if (depth > 16) bad("nesting too deep");
    skip_ws();
    PyValue v;
    v.begin = i_;
    char c = peek();
    if (c == '\'' || c == '"') {
      ++i_;
      v.kind = PyValue::kStr;
      while (i_ < s_.size() && s_[i_] != c) {
        if (s_[i_] == '\\' && i_ + 1 < s_.size()) ++i_;
        v.str += s_[i_++];
      }
      expect(c);
    } else if (c == '(' || c == '[') {
      char close = c == '(' ? ')' : ']';
      ++i_;
      v.kind = PyValue::kSeq;
      for (;;) {
        skip_ws();
        if (peek() == close) {
          ++i_;
          break;
        }
        v.items.push_back(parse_value(depth + 1));
        skip_ws();
        if (peek() == ',') {
          ++i_;
        } else if (peek() != close) {
          bad(std::string("expected ',' or '") + close + "'");
        }
      }
    } else if (c >= '0' && c <= '9') {
      v.kind = PyValue::kInt;
      while (peek() >= '0' && peek() <= '9') {
        std::size_t digit = static_cast<std::size_t>(s_[i_++] - '0');
        if (v.integer > (SIZE_MAX - digit) / 10) bad("integer too large");
        v.integer = v.integer * 10 + digit;
      }
      if (peek() == 'L' || peek() == 'l') ++i_;  // Python 2 long suffix ("3L")
    } else if (take_word("True")) {
      v.kind = PyValue::kBool;
      v.boolean = true;
    } else if (take_word("False")) {
      v.kind = PyValue::kBool;
    } else if (take_word("None")) {
      v.kind = PyValue::kNone;
    } else if (c == '-') {
      bad("negative number");
    } else if (c == '{') {
      bad("nested dictionary");
    } else {
      bad("unexpected character " + io::quote(s_.substr(i_, 1)));
    }
    v.end = i_;
    return v;
  }

  const std::string& path_;
  const std::string& s_;
  std::size_t i_ = 0;
};

struct NpyType {
  DType dtype;
  std::size_t size;
  bool big_endian;
};

constexpr const char* kExpected =
    "expected a numeric dtype: bool, int8..int64, uint8..uint64, float16, float32, float64";

[[noreturn]] void refuse_descr(const std::string& path, const std::string& d, const char* why) {
  fail(path, "unsupported dtype " + io::quote(d, 40) + " (" + why + "; " + kExpected + ")");
}

// numpy's descr strings ('<i2', '>f8', '|b1', ...; dtype.str): a byte order ('<' little, '>'
// big, '=' native, '|' not applicable: one byte; numpy always writes one, a missing one reads as
// native), a kind and a size in bytes.
NpyType parse_descr(const std::string& path, const std::string& header, const PyValue& descr) {
  if (descr.kind != PyValue::kStr)
    fail(path, "unsupported dtype " +
                   io::quote(header.substr(descr.begin, descr.end - descr.begin), 60) +
                   " (a structured dtype; " + kExpected + ")");
  const std::string& d = descr.str;
  const auto refuse = [&](const char* why) { refuse_descr(path, d, why); };
  std::size_t i = 0;
  char order = '=';
  if (!d.empty() && (d[0] == '<' || d[0] == '>' || d[0] == '=' || d[0] == '|')) order = d[i++];
  if (i >= d.size()) refuse("no type");
  const char kind = d[i++];
  std::size_t size = 0;
  const std::size_t digits = i;
  while (i < d.size() && d[i] >= '0' && d[i] <= '9' && i - digits < 4)
    size = size * 10 + static_cast<std::size_t>(d[i++] - '0');
  const bool sized = i > digits && i == d.size();
  switch (kind) {
    case 'c':
      refuse_descr(path, d, "complex numbers");
    case 'O':
      refuse_descr(path, d, "Python objects");
    case 'S':
    case 'a':
    case 'U':
      refuse_descr(path, d, "strings");
    case 'V':
      refuse_descr(path, d, "raw or structured records");
    case 'M':
    case 'm':
      refuse_descr(path, d, "dates and times");
    default:
      break;
  }
  if (!sized) refuse("not a numeric type and size");
  DType t = DType::F64;
  if (kind == 'b' && size == 1) {
    t = DType::Bool;
  } else if (kind == 'i' && (size == 1 || size == 2 || size == 4 || size == 8)) {
    t = size == 1 ? DType::I8 : size == 2 ? DType::I16 : size == 4 ? DType::I32 : DType::I64;
  } else if (kind == 'u' && (size == 1 || size == 2 || size == 4 || size == 8)) {
    t = size == 1 ? DType::U8 : size == 2 ? DType::U16 : size == 4 ? DType::U32 : DType::U64;
  } else if (kind == 'f' && (size == 2 || size == 4 || size == 8)) {
    t = size == 2 ? DType::F16 : size == 4 ? DType::F32 : DType::F64;
  } else if (kind == 'f') {
    refuse("extended-precision floats");
  } else {
    refuse("unknown type");
  }
  if (order == '|' && size != 1) refuse("'|' (no byte order) on a multi-byte type");
  // '=' is the writer's native order; every platform we build for is little endian.
  return {t, size, order == '>'};
}

std::string shape_text(const std::vector<std::size_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) s += ",";
  return s + ")";
}

// The elements of a Fortran-order array of `shape` (each `size` bytes) in C order.
std::vector<unsigned char> to_c_order(const unsigned char* src,
                                      const std::vector<std::size_t>& shape, std::size_t size) {
  const std::size_t rank = shape.size();
  std::size_t count = 1;
  for (std::size_t d : shape) count *= d;  // checked by the caller
  // Fortran strides (in elements) of each axis; walk the C-order index like an odometer.
  std::vector<std::size_t> stride(rank), index(rank, 0);
  std::size_t s = 1;
  for (std::size_t k = 0; k < rank; ++k) {
    stride[k] = s;
    s *= shape[k];
  }
  std::vector<unsigned char> out(count * size);
  std::size_t from = 0;  // Fortran offset of `index`
  for (std::size_t i = 0; i < count; ++i) {
    std::memcpy(out.data() + i * size, src + from * size, size);
    for (std::size_t k = rank; k-- > 0;) {
      if (++index[k] < shape[k]) {
        from += stride[k];
        break;
      }
      from -= stride[k] * (shape[k] - 1);
      index[k] = 0;
    }
  }
  return out;
}

// The preamble of a .npy file: where the header dict starts and how long it is.
struct NpyPreamble {
  std::size_t preamble = 0, header_len = 0;
};

// `bytes` holds at least the first 12 bytes of the file, or the whole file when it is shorter.
NpyPreamble parse_npy_preamble(const std::string& path, const std::vector<unsigned char>& bytes) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    fail(path, "not a .npy file (bad magic; expected \\x93NUMPY)");
  const unsigned major = bytes[6];
  const unsigned minor = bytes[7];
  NpyPreamble p;
  if (major == 1) {
    p.header_len = bytes[8] | (static_cast<std::size_t>(bytes[9]) << 8);
    p.preamble = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail(path, "truncated .npy header");
    p.header_len = bytes[8] | (static_cast<std::size_t>(bytes[9]) << 8) |
                   (static_cast<std::size_t>(bytes[10]) << 16) |
                   (static_cast<std::size_t>(bytes[11]) << 24);
    p.preamble = 12;
  } else {
    fail(path, "unsupported .npy version " + std::to_string(major) + "." + std::to_string(minor) +
                   " (expected 1.0, 2.0 or 3.0)");
  }
  return p;
}

// What a .npy header declares, checked by the rules of load_npy (everything but the data).
struct NpyHeader {
  NpyType type{};
  bool fortran = false;
  std::vector<std::size_t> shape, dims;
  std::size_t channels = 1, count = 0, offset = 0, data_bytes = 0;
};

// `bytes` holds at least the preamble and the header the preamble declares, if the file does.
NpyHeader parse_npy_header(const std::string& path, bool channel_axis,
                           const std::vector<unsigned char>& bytes, const NpyPreamble& p) {
  const std::size_t preamble = p.preamble, header_len = p.header_len;
  if (header_len > bytes.size() - preamble)
    fail(path, "truncated .npy header: declares " + std::to_string(header_len) +
                   " header bytes, file has " + std::to_string(bytes.size() - preamble));
  const std::string header(reinterpret_cast<const char*>(bytes.data() + preamble), header_len);
  const auto dict = HeaderParser(path, header).parse_dict();

  const PyValue* descr = nullptr;
  const PyValue* fortran = nullptr;
  const PyValue* shape_v = nullptr;
  for (const auto& kv : dict) {
    if (kv.first == "descr") descr = &kv.second;
    if (kv.first == "fortran_order") fortran = &kv.second;
    if (kv.first == "shape") shape_v = &kv.second;
  }
  if (!descr) fail(path, ".npy header lacks 'descr'");
  if (!fortran) fail(path, ".npy header lacks 'fortran_order'");
  if (!shape_v) fail(path, ".npy header lacks 'shape'");
  NpyHeader h;
  h.type = parse_descr(path, header, *descr);
  if (fortran->kind != PyValue::kBool) fail(path, "'fortran_order' is not True or False");
  h.fortran = fortran->boolean;
  if (shape_v->kind != PyValue::kSeq) fail(path, "'shape' is not a tuple");
  std::vector<std::size_t>& shape = h.shape;
  for (const PyValue& item : shape_v->items) {
    if (item.kind != PyValue::kInt) fail(path, "'shape' holds a non-integer");
    shape.push_back(item.integer);
  }

  // Shape rules: an optional trailing channel axis of 1..4 and 1..3 spatial axes.
  const std::string shape_str = "shape " + shape_text(shape);
  for (std::size_t d : shape)
    if (d == 0) fail(path, shape_str + " has a zero-size axis");
  h.dims = shape;
  if (channel_axis) {
    if (shape.empty()) fail(path, shape_str + " has no channel axis (the array is a scalar)");
    h.channels = shape.back();
    h.dims.pop_back();
    if (h.channels > kMaxChannels)
      fail(path, shape_str + ": the channel axis (last) has " + std::to_string(h.channels) +
                     " entries (expected 1 to 4)");
  }
  if (h.dims.empty() || h.dims.size() > kMaxRank)
    fail(path, shape_str + " has " + std::to_string(h.dims.size()) + " spatial axes" +
                   (channel_axis ? " besides the channel axis" : "") + " (expected 1 to 3)");

  h.count = 1;
  for (std::size_t d : shape)
    if (!io::checked_mul(h.count, d, &h.count)) fail(path, shape_str + " is too large");
  if (!io::checked_mul(h.count, h.type.size, &h.data_bytes))
    fail(path, shape_str + " is too large");
  h.offset = preamble + header_len;
  return h;
}

// The data must be exactly what the header declares (`found` bytes follow the header; `known`:
// the count is the file's, not "at least").
void check_npy_data_size(const std::string& path, std::size_t data_bytes, std::size_t found,
                         bool known) {
  if (found < data_bytes)
    fail(path, "truncated: expected " + std::to_string(data_bytes) + " data bytes, found " +
                   std::to_string(found));
  if (found > data_bytes)
    fail(path, "trailing data: expected " + std::to_string(data_bytes) + " data bytes, found " +
                   (known ? std::to_string(found) : "more"));
}

Loaded load_npy_impl(const std::string& path, bool channel_axis) {
  // A regular file is read whole (its size bounds the work); an opted-in pipe or device only as
  // far as the header claims: the preamble, the header, then the data plus one byte.
  io::InputFile in(path);
  std::vector<unsigned char> bytes;
  const bool whole = in.regular();
  auto read_to = [&](std::size_t total) {
    if (!whole && bytes.size() < total) in.read_append(bytes, total - bytes.size());
  };
  if (whole)
    in.read_append(bytes, SIZE_MAX);
  else
    read_to(12);
  const NpyPreamble p = parse_npy_preamble(path, bytes);
  if (!whole && p.header_len > kMaxSpecialHeader)
    fail(path, "the .npy header declares " + std::to_string(p.header_len) +
                   " bytes, more than the " + std::to_string(kMaxSpecialHeader) +
                   " read from a non-regular file");
  read_to(p.preamble + p.header_len);
  const NpyHeader h = parse_npy_header(path, channel_axis, bytes, p);
  if (h.data_bytes < SIZE_MAX - h.offset) read_to(h.offset + h.data_bytes + 1);
  check_npy_data_size(path, h.data_bytes, bytes.size() - h.offset, whole);

  Loaded out;
  out.array = ArrayD(h.dims, h.channels);
  out.dtype = h.type.dtype;
  out.channel_axis = channel_axis;
  out.spacing.assign(h.dims.size(), 1.0);
  const unsigned char* data = bytes.data() + h.offset;
  std::vector<unsigned char> reordered;
  if (h.fortran && h.shape.size() > 1) {
    // Fortran order: the first axis varies fastest. Gather the elements into C order (the last
    // axis fastest) before decoding, so that element indices in messages are C-order ones.
    reordered = to_c_order(data, h.shape, h.type.size);
    data = reordered.data();
  }
  io::decode_values_or_fail(path, data, h.count, io::scalar_of(h.type.dtype), h.type.big_endian,
                            out.array.data());
  return out;
}

// Builds a version 1.0 preamble and header for `shape`, padded with spaces so that the data
// starts at a multiple of 64 bytes, as numpy does. Our headers are far below the 64 KiB limit
// of version 1.0 (at most four axes).
std::vector<unsigned char> npy_header(const char* descr, const std::vector<std::size_t>& shape) {
  std::string dict = std::string("{'descr': '") + descr +
                     "', 'fortran_order': False, 'shape': " + shape_text(shape) + ", }";
  const std::size_t preamble = 10;
  const std::size_t total = preamble + dict.size() + 1;
  dict.append((total + 63) / 64 * 64 - total, ' ');
  dict += '\n';
  const std::size_t hlen = dict.size();
  std::vector<unsigned char> out(kMagic, kMagic + 6);
  out.push_back(1);
  out.push_back(0);
  out.push_back(static_cast<unsigned char>(hlen & 0xffu));
  out.push_back(static_cast<unsigned char>((hlen >> 8) & 0xffu));
  out.insert(out.end(), dict.begin(), dict.end());
  return out;
}

// The shape a saver writes: the dims, plus the channel axis when asked for or needed.
std::vector<std::size_t> stored_shape(const std::string& path, const std::vector<std::size_t>& dims,
                                      std::size_t channels, bool channel_axis) {
  if (dims.empty()) fail(path, "cannot save an empty array");
  std::vector<std::size_t> shape = dims;
  if (channel_axis || channels > 1) shape.push_back(channels);
  return shape;
}

template <class T>
std::vector<std::size_t> save_shape(const std::string& path, const Array<T>& a, bool channel_axis) {
  if (a.empty()) fail(path, "cannot save an empty array");
  return stored_shape(path, a.dims(), a.channels(), channel_axis);
}

const char* npy_descr(DType t) {
  switch (t) {
    case DType::Bool:
      return "|b1";
    case DType::I8:
      return "|i1";
    case DType::U8:
      return "|u1";
    case DType::I16:
      return "<i2";
    case DType::U16:
      return "<u2";
    case DType::I32:
      return "<i4";
    case DType::U32:
      return "<u4";
    case DType::I64:
      return "<i8";
    case DType::U64:
      return "<u8";
    case DType::F16:
      return "<f2";
    case DType::F32:
      return "<f4";
    case DType::F64:
      return "<f8";
  }
  return "<f8";
}

}  // namespace

Loaded load_npy(const std::string& path, bool channel_axis) {
  return io::guard_memory(
      path, [&] { return io::finish_loaded(path, load_npy_impl(path, channel_axis)); });
}

namespace {

void write_all(const unsigned char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(1, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0)
      throw Error(std::string("standard output: cannot write: ") +
                  (w < 0 ? std::strerror(errno) : "no progress"));
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

}  // namespace

// The bytes save_npy would write, in blocks to standard output (splinetool's "-"), once the
// whole result exists.
void write_npy_stdout(const ArrayD& a, DType dtype, bool channel_axis) {
  const std::string where = "standard output";
  const std::vector<unsigned char> head =
      npy_header(npy_descr(dtype), save_shape(where, a, channel_axis));
  write_all(head.data(), head.size());
  const io::Scalar s = io::scalar_of(dtype);
  const std::size_t size = io::scalar_size(s), block = std::size_t{1} << 17;
  std::vector<unsigned char> buf(block * size);
  for (std::size_t i = 0; i < a.size(); i += block) {
    const std::size_t n = std::min(block, a.size() - i);
    io::encode_values(a.data() + i, n, s, buf.data());
    write_all(buf.data(), n * size);
  }
}

void save_npy(const std::string& path, const ArrayD& a, DType dtype, bool channel_axis) {
  io::guard_memory(path, [&] {
    std::vector<unsigned char> out =
        npy_header(npy_descr(dtype), save_shape(path, a, channel_axis));
    const std::size_t start = out.size();
    const io::Scalar s = io::scalar_of(dtype);
    out.resize(start + a.size() * io::scalar_size(s));
    io::encode_values(a.data(), a.size(), s, out.data() + start);
    io::write_file_atomic(path, out);
  });
}

void save_npy(const std::string& path, const ArrayF& a, bool channel_axis) {
  io::guard_memory(path, [&] {
    std::vector<unsigned char> out = npy_header("<f4", save_shape(path, a, channel_axis));
    const std::size_t start = out.size();
    out.resize(start + a.size() * 4);
    io::encode_f32(a.data(), a.size(), out.data() + start);
    io::write_file_atomic(path, out);
  });
}

namespace io {

DataLayout probe_npy(const std::string& path, bool channel_axis) {
  return guard_memory(path, [&] {
    DataLayout out;
    InputFile in(path);
    std::vector<unsigned char> bytes;
    auto read_to = [&](std::size_t total) {
      if (bytes.size() < total) in.read_append(bytes, total - bytes.size());
    };
    read_to(12);
    const NpyPreamble p = parse_npy_preamble(path, bytes);
    if (p.header_len > kMaxSpecialHeader) {
      out.not_mappable = "its .npy header declares " + std::to_string(p.header_len) +
                         " bytes, more than the " + std::to_string(kMaxSpecialHeader) +
                         " a header is read for";
      return out;
    }
    read_to(p.preamble + p.header_len);
    const NpyHeader h = parse_npy_header(path, channel_axis, bytes, p);
    check_npy_data_size(path, h.data_bytes, in.size() > h.offset ? in.size() - h.offset : 0, true);
    out.dims = h.dims;
    out.channels = h.channels;
    out.channel_axis = channel_axis;
    out.dtype = h.type.dtype;
    out.scalar = scalar_of(h.type.dtype);
    out.big_endian = h.type.big_endian;
    out.fortran_order = h.fortran && h.shape.size() > 1;
    out.data_path = out.error_path = path;
    out.data_offset = h.offset;
    out.data_bytes = h.data_bytes;
    out.spacing.assign(h.dims.size(), 1.0);
    finish_geometry(path, h.dims.size(), &out.spacing, &out.geometry);
    return out;
  });
}

std::vector<unsigned char> npy_header_bytes(const std::string& path,
                                            const std::vector<std::size_t>& dims,
                                            std::size_t channels, bool channel_axis, DType dtype) {
  return npy_header(npy_descr(dtype), stored_shape(path, dims, channels, channel_axis));
}

}  // namespace io

}  // namespace sv
