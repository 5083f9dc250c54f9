// NRRD volumes, written from the format specification at
// http://teem.sourceforge.net/nrrd/format.html: a "NRRD000X" magic line, "field: value" lines,
// then either a blank line and the attached data or a "data file" field naming a detached one.
// Reads raw, gzip and ascii encodings of uchar/ushort/short/float/double in either byte order;
// writes gzip-compressed little-endian data (attached for .nrrd, detached for .nhdr).
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <type_traits>
#include <vector>

#include "io_common.h"
#include "io_layout.h"
#include "splineview/io.h"
#include "splineview/text.h"

namespace sv {

namespace {

using io::fail;

std::string trim(const std::string& s) {
  std::size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  std::size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split_ws(const std::string& s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    std::size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

// Quotes header text for an error message: printable and at most 60 characters.
std::string quote_line(const std::string& line) {
  return io::quote(line, 60);
}

bool parse_size(const std::string& s, std::size_t* out) {
  if (s.empty() || s.size() > 19) return false;
  std::size_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<std::size_t>(c - '0');
  }
  *out = v;
  return true;
}

bool parse_double(const std::string& s, double* out) {
  if (s.empty()) return false;
  const std::string lower = io::to_lower(s);
  if (lower == "nan") {
    *out = std::nan("");
    return true;
  }
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return false;
  *out = v;
  return true;
}

struct NrrdType {
  io::Scalar scalar;
  DType dtype;  // what Loaded reports: the stored type
};

bool parse_type(const std::string& raw, NrrdType* out) {
  const std::string t = io::to_lower(raw);
  if (t == "uchar" || t == "unsigned char" || t == "uint8" || t == "uint8_t") {
    *out = {io::Scalar::U8, DType::U8};
  } else if (t == "ushort" || t == "unsigned short" || t == "unsigned short int" || t == "uint16" ||
             t == "uint16_t") {
    *out = {io::Scalar::U16, DType::U16};
  } else if (t == "short" || t == "short int" || t == "signed short" || t == "signed short int" ||
             t == "int16" || t == "int16_t") {
    *out = {io::Scalar::I16, DType::I16};
  } else if (t == "signed char" || t == "int8" || t == "int8_t") {
    *out = {io::Scalar::I8, DType::I8};
  } else if (t == "int" || t == "signed int" || t == "int32" || t == "int32_t") {
    *out = {io::Scalar::I32, DType::I32};
  } else if (t == "uint" || t == "unsigned int" || t == "uint32" || t == "uint32_t") {
    *out = {io::Scalar::U32, DType::U32};
  } else if (t == "longlong" || t == "long long" || t == "long long int" ||
             t == "signed long long" || t == "signed long long int" || t == "int64" ||
             t == "int64_t") {
    *out = {io::Scalar::I64, DType::I64};
  } else if (t == "ulonglong" || t == "unsigned long long" || t == "unsigned long long int" ||
             t == "uint64" || t == "uint64_t") {
    *out = {io::Scalar::U64, DType::U64};
  } else if (t == "float") {
    *out = {io::Scalar::F32, DType::F32};
  } else if (t == "double") {
    *out = {io::Scalar::F64, DType::F64};
  } else {
    return false;
  }
  return true;
}

// Kinds that describe a spatial (domain) axis; any other kind marks a channel axis.
bool is_spatial_kind(const std::string& k) {
  return k == "domain" || k == "space" || k == "time" || k == "???" || k == "none";
}

// Parses a "(a,b,c)" vector starting at v[*i] (after spaces); advances *i past ')'.
std::vector<double> parse_vector(const std::string& path, const std::string& field,
                                 const std::string& v, std::size_t* i) {
  const std::size_t close = v.find(')', *i);
  if (close == std::string::npos) fail(path, "malformed '" + field + "': missing ')'");
  std::string inner = v.substr(*i + 1, close - *i - 1);
  std::replace(inner.begin(), inner.end(), ',', ' ');
  std::vector<double> out;
  for (const std::string& tok : split_ws(inner)) {
    double c;
    if (!parse_double(tok, &c)) fail(path, "malformed '" + field + "' value " + quote_line(tok));
    out.push_back(c);
  }
  *i = close + 1;
  return out;
}

// Parses "space directions": one "(a,b,c)" vector or "none" per axis ("none" -> empty).
std::vector<std::vector<double>> parse_space_directions(const std::string& path,
                                                        const std::string& v) {
  std::vector<std::vector<double>> out;
  std::size_t i = 0;
  while (i < v.size()) {
    if (std::isspace(static_cast<unsigned char>(v[i]))) {
      ++i;
    } else if (v.compare(i, 4, "none") == 0) {
      out.emplace_back();
      i += 4;
    } else if (v[i] == '(') {
      out.push_back(parse_vector(path, "space directions", v, &i));
      if (out.back().empty()) fail(path, "malformed 'space directions': an empty vector");
    } else {
      fail(path, "malformed 'space directions': " + quote_line(v));
    }
  }
  return out;
}

double vector_length(const std::vector<double>& d) {
  if (d.empty()) return std::nan("");
  double sum = 0;
  for (double c : d) sum += c * c;
  return std::sqrt(sum);
}

// The sign flips from a named NRRD space to RAS+ (x, y, z), or false for spaces that are not
// patient frames (scanner-xyz, 3D-right-handed, ...: their axes are not anatomical).
bool space_to_ras(const std::string& space, double flip[3]) {
  const std::string s = io::to_lower(space);
  flip[0] = flip[1] = flip[2] = 1;
  if (s == "right-anterior-superior" || s == "ras") return true;
  if (s == "left-anterior-superior" || s == "las") {
    flip[0] = -1;
    return true;
  }
  if (s == "left-posterior-superior" || s == "lps") {
    flip[0] = flip[1] = -1;
    return true;
  }
  return false;
}

// Where the data of a NRRD lives, for messages: errors always name the header file and, for a
// detached data file, that file too ("h.nhdr: detached data file: /d/h.raw: truncated ...").
struct DataSource {
  std::string header;
  std::string prefix;  // "" for attached data, else "detached data file: <path>: "
  [[noreturn]] void fail(const std::string& what) const { io::fail(header, prefix + what); }
};

// Inflates gzip or zlib data into exactly `expected` bytes (concatenated gzip members allowed).
// The output grows (doubling from 64 KiB, capped at `expected`) with what actually inflates,
// so a small stream that claims gigabytes fails as truncated having allocated about what it
// held, not the claim.
std::vector<unsigned char> inflate_exact(const DataSource& where, const unsigned char* src,
                                         std::size_t n, std::size_t expected) {
  // Deflate cannot expand data by more than about 1032:1; refuse before allocating when the
  // header declares more than the compressed data could possibly hold.
  if (expected / 1032 > n + 64)
    where.fail("truncated: " + std::to_string(n) + " bytes of gzip data cannot hold the " +
               std::to_string(expected) + " data bytes the header declares");
  std::vector<unsigned char> out(std::min<std::size_t>(expected, std::size_t{1} << 16));
  z_stream zs;
  std::memset(&zs, 0, sizeof zs);
  if (inflateInit2(&zs, 15 + 32) != Z_OK) where.fail("cannot initialise zlib");
  std::size_t in_pos = 0, out_pos = 0;
  unsigned char spill[64];  // detects data beyond what the header declares
  std::string problem;
  for (;;) {
    if (zs.avail_in == 0 && in_pos < n) {
      std::size_t chunk = std::min<std::size_t>(n - in_pos, 1u << 30);
      zs.next_in = const_cast<unsigned char*>(src + in_pos);
      zs.avail_in = static_cast<uInt>(chunk);
      in_pos += chunk;
    }
    if (out_pos == out.size() && out.size() < expected) {
      try {
        out.resize(out.size() > expected / 2 ? expected : 2 * out.size());
      } catch (...) {
        inflateEnd(&zs);
        throw;
      }
    }
    bool spilling = out_pos == expected;
    std::size_t room =
        spilling ? sizeof spill : std::min<std::size_t>(out.size() - out_pos, 1u << 30);
    zs.next_out = spilling ? spill : out.data() + out_pos;
    zs.avail_out = static_cast<uInt>(room);
    int rc = inflate(&zs, Z_NO_FLUSH);
    std::size_t produced = room - zs.avail_out;
    if (spilling && produced > 0) {
      problem = "gzip data holds more than the " + std::to_string(expected) +
                " bytes the header declares";
      break;
    }
    out_pos += produced;
    if (rc == Z_STREAM_END) {
      const bool input_left = zs.avail_in > 0 || in_pos < n;
      if (!input_left) {
        if (out_pos < expected)
          problem = "truncated: expected " + std::to_string(expected) +
                    " data bytes, gzip data holds " + std::to_string(out_pos);
        break;
      }
      if (inflateReset(&zs) != Z_OK) {
        problem = "zlib reset failed";
        break;
      }
      continue;
    }
    if (rc == Z_BUF_ERROR && zs.avail_in == 0 && in_pos >= n) {
      problem = "truncated gzip data: decompressed " + std::to_string(out_pos) + " of " +
                std::to_string(expected) + " expected bytes";
      break;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      problem = std::string("corrupt gzip data (zlib: ") + (zs.msg ? zs.msg : "error") + ")";
      break;
    }
  }
  inflateEnd(&zs);
  if (!problem.empty()) where.fail(problem);
  return out;
}

std::vector<unsigned char> gzip_compress(const unsigned char* src, std::size_t n) {
  z_stream zs;
  std::memset(&zs, 0, sizeof zs);
  if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw Error("cannot initialise zlib");
  std::vector<unsigned char> out;
  std::size_t in_pos = 0;
  unsigned char buf[1 << 16];
  int rc = Z_OK;
  do {
    if (zs.avail_in == 0 && in_pos < n) {
      std::size_t chunk = std::min<std::size_t>(n - in_pos, 1u << 30);
      zs.next_in = const_cast<unsigned char*>(src + in_pos);
      zs.avail_in = static_cast<uInt>(chunk);
      in_pos += chunk;
    }
    const int flush = (in_pos >= n && zs.avail_in == 0) ? Z_FINISH : Z_NO_FLUSH;
    zs.next_out = buf;
    zs.avail_out = sizeof buf;
    rc = deflate(&zs, flush);
    if (rc == Z_STREAM_ERROR) {
      deflateEnd(&zs);
      throw Error("zlib compression failed");
    }
    try {
      out.insert(out.end(), buf, buf + (sizeof buf - zs.avail_out));
    } catch (...) {
      deflateEnd(&zs);
      throw;
    }
  } while (rc != Z_STREAM_END);
  deflateEnd(&zs);
  return out;
}

// Parses whitespace (or comma) separated numbers of the ascii encoding.
void parse_ascii(const DataSource& where, const unsigned char* src, std::size_t n,
                 std::size_t count, double* dst) {
  std::string text(reinterpret_cast<const char*>(src), n);
  std::replace(text.begin(), text.end(), ',', ' ');
  const char* p = text.c_str();
  const char* end = p + text.size();
  std::size_t got = 0;
  for (;;) {
    while (p < end && std::isspace(static_cast<unsigned char>(*p))) ++p;
    if (p >= end) break;
    char* next = nullptr;
    double v = std::strtod(p, &next);
    if (next == p) where.fail("malformed ascii data at value " + std::to_string(got + 1));
    if (got == count)
      where.fail("ascii data holds more than the " + std::to_string(count) +
                 " values the header declares");
    dst[got++] = v;
    p = next;
  }
  if (got < count)
    where.fail("truncated: expected " + std::to_string(count) + " ascii values, found " +
               std::to_string(got));
}

// True when `b` holds an empty line (the end of an attached NRRD header), searching from `from`.
bool has_blank_line(const std::vector<unsigned char>& b, std::size_t from) {
  for (std::size_t i = from; i + 1 < b.size(); ++i)
    if (b[i] == '\n' &&
        (b[i + 1] == '\n' || (b[i + 1] == '\r' && i + 2 < b.size() && b[i + 2] == '\n')))
      return true;
  return false;
}

std::size_t saturating_add(std::size_t a, std::size_t b) {
  return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

// Reads the header part of a NRRD into `bytes`, up to its blank line, 4096 bytes at a time
// (the whole input when it has none: a detached header); false when kMaxSpecialHeader bytes
// hold no end of the header.
bool read_header_part(io::InputFile& in, std::vector<unsigned char>& bytes) {
  std::size_t scanned = 0;
  while (!has_blank_line(bytes, scanned)) {
    if (bytes.size() >= kMaxSpecialHeader) return false;
    // Not a NRRD: stop here, the magic check says so.
    if (bytes.size() >= 8 && std::memcmp(bytes.data(), "NRRD000", 7) != 0) break;
    scanned = bytes.size() < 2 ? 0 : bytes.size() - 2;
    if (in.read_append(bytes, 4096) == 0) break;  // the end: a detached header
  }
  return true;
}

enum class Enc { kRaw, kGzip, kAscii };

// What a NRRD header declares, checked as load_nrrd checks it: everything before the data.
struct NrrdHeader {
  NrrdType type{};
  std::string type_s, sizes_s, data_file, space_s, origin_s;
  Enc enc = Enc::kRaw;
  bool big_endian = false;
  bool channel = false;
  std::size_t dimension = 0, spatial = 0, count = 0, data_bytes = 0;
  std::vector<std::size_t> sizes;  // fastest axis first, as the file lists them
  std::vector<double> axis_spacing;
  std::vector<std::vector<double>> directions;
  std::size_t data_offset = std::string::npos;  // start of attached data, if any
  // How many encoded bytes a non-regular input may supply: what the header claims plus the
  // slack that shows trailing data (regular files are bounded by their size).
  std::size_t encoded_limit = 0;

  std::vector<std::size_t> dims() const {  // array order, without the channel axis
    return std::vector<std::size_t>(sizes.rbegin(), sizes.rend() - (channel ? 1 : 0));
  }
};

// `bytes` holds the file, or at least its header up to the blank line that ends it.
NrrdHeader parse_nrrd_header(const std::string& path, const std::vector<unsigned char>& bytes) {
  NrrdHeader h;
  const std::size_t size = bytes.size();
  auto line_at = [&](std::size_t pos, std::size_t* next) {
    std::size_t e = pos;
    while (e < size && bytes[e] != '\n') ++e;
    *next = e < size ? e + 1 : size;
    std::string line(reinterpret_cast<const char*>(bytes.data() + pos), e - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return line;
  };

  std::size_t pos = 0;
  if (size < 8 || std::memcmp(bytes.data(), "NRRD000", 7) != 0 || bytes[7] < '1' || bytes[7] > '9')
    fail(path, "not a NRRD file (bad magic; expected 'NRRD000X')");
  const std::string magic = line_at(0, &pos);
  if (magic.size() != 8) fail(path, "not a NRRD file (bad magic line " + quote_line(magic) + ")");

  std::string &type_s = h.type_s, &sizes_s = h.sizes_s, &data_file = h.data_file,
              &space_s = h.space_s, &origin_s = h.origin_s;
  std::string encoding = "raw", endian, kinds_s, spacings_s, directions_s;
  std::size_t& dimension = h.dimension;
  bool have_dimension = false;
  std::size_t& data_offset = h.data_offset;
  while (pos < size) {
    std::size_t next;
    const std::string line = line_at(pos, &next);
    const bool at_eof = next == size && (size == 0 || bytes[size - 1] != '\n');
    pos = next;
    if (line.empty()) {
      if (!at_eof) data_offset = pos;
      break;
    }
    if (line[0] == '#') continue;
    const std::size_t kv = line.find(":=");
    const std::size_t colon = line.find(": ");
    if (kv != std::string::npos && (colon == std::string::npos || kv < colon)) continue;
    if (colon == std::string::npos) fail(path, "malformed NRRD header line " + quote_line(line));
    const std::string key = io::to_lower(trim(line.substr(0, colon)));
    const std::string value = trim(line.substr(colon + 2));
    if (key == "type") {
      type_s = value;
    } else if (key == "dimension") {
      if (!parse_size(value, &dimension) || dimension == 0)
        fail(path, "bad " + quote_line("dimension: " + value));
      have_dimension = true;
    } else if (key == "sizes") {
      sizes_s = value;
    } else if (key == "encoding") {
      encoding = io::to_lower(value);
    } else if (key == "endian") {
      endian = io::to_lower(value);
    } else if (key == "kinds") {
      kinds_s = value;
    } else if (key == "spacings") {
      spacings_s = value;
    } else if (key == "space directions") {
      directions_s = value;
    } else if (key == "space") {
      space_s = value;
    } else if (key == "space origin") {
      origin_s = value;
    } else if (key == "data file" || key == "datafile") {
      data_file = value;
    } else if (key == "byte skip" || key == "byteskip" || key == "line skip" || key == "lineskip") {
      if (value != "0") fail(path, quote_line(key + ": " + value) + " is not supported (only 0)");
    }
    // Other fields (content, space dimension, units, min/max, centers, ...) do not affect how
    // the samples are read or where they sit.
  }

  // --- validate the header ---
  if (type_s.empty()) fail(path, "NRRD header lacks 'type'");
  NrrdType& type = h.type;
  if (!parse_type(type_s, &type))
    fail(path, "unsupported NRRD type " + quote_line(type_s) +
                   " (expected an integer type of 8 to 64 bits, float or double)");
  if (!have_dimension) fail(path, "NRRD header lacks 'dimension'");
  if (sizes_s.empty()) fail(path, "NRRD header lacks 'sizes'");
  const std::vector<std::string> size_toks = split_ws(sizes_s);
  if (size_toks.size() != dimension)
    fail(path, "'sizes' lists " + std::to_string(size_toks.size()) + " values but 'dimension' is " +
                   std::to_string(dimension));
  std::vector<std::size_t>& sizes = h.sizes;
  sizes.resize(dimension);
  for (std::size_t i = 0; i < dimension; ++i)
    if (!parse_size(size_toks[i], &sizes[i]))
      fail(path,
           "bad size '" + short_number(size_toks[i]) + "' in " + quote_line("sizes: " + sizes_s));
  for (std::size_t s : sizes)
    if (s == 0) fail(path, quote_line("sizes: " + sizes_s) + " has a zero-size axis");

  std::vector<std::string> kinds;
  if (!kinds_s.empty()) {
    kinds = split_ws(kinds_s);
    // Multi-word kinds do not exist, but "???" and hyphenated names do; one token per axis.
    if (kinds.size() != dimension)
      fail(path, "'kinds' lists " + std::to_string(kinds.size()) + " values but 'dimension' is " +
                     std::to_string(dimension));
  }
  bool& channel = h.channel;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (is_spatial_kind(kinds[i])) continue;
    if (i != 0)
      fail(path, "axis " + std::to_string(i) + " has kind " + quote_line(kinds[i]) +
                     "; only the first (fastest) axis can be a channel axis");
    channel = true;
    if (sizes[0] > kMaxChannels)
      fail(path, "the channel axis (kind " + quote_line(kinds[0]) + ") has " +
                     std::to_string(sizes[0]) + " entries (expected 1 to 4)");
  }
  const std::size_t spatial = h.spatial = dimension - (channel ? 1 : 0);
  if (spatial < 1 || spatial > kMaxRank)
    fail(path, std::to_string(spatial) + " spatial axes (expected 1 to 3" +
                   std::string(channel ? "" : "; mark a channel axis in 'kinds'") + ")");

  std::vector<double>& axis_spacing = h.axis_spacing;
  axis_spacing.assign(dimension, std::nan(""));
  std::vector<std::vector<double>>& directions = h.directions;
  if (!directions_s.empty()) {
    directions = parse_space_directions(path, directions_s);
    if (directions.size() != dimension)
      fail(path, "'space directions' lists " + std::to_string(directions.size()) +
                     " entries but 'dimension' is " + std::to_string(dimension));
    for (std::size_t i = 0; i < dimension; ++i) axis_spacing[i] = vector_length(directions[i]);
  } else if (!spacings_s.empty()) {
    std::vector<std::string> toks = split_ws(spacings_s);
    if (toks.size() != dimension)
      fail(path, "'spacings' lists " + std::to_string(toks.size()) + " values but 'dimension' is " +
                     std::to_string(dimension));
    for (std::size_t i = 0; i < dimension; ++i)
      if (!parse_double(toks[i], &axis_spacing[i]))
        fail(path, "bad spacing '" + short_number(toks[i]) + "'");
  }

  Enc& enc = h.enc;
  if (encoding == "raw") {
    enc = Enc::kRaw;
  } else if (encoding == "gzip" || encoding == "gz") {
    enc = Enc::kGzip;
  } else if (encoding == "ascii" || encoding == "text" || encoding == "txt") {
    enc = Enc::kAscii;
  } else {
    fail(path,
         "unsupported NRRD encoding " + quote_line(encoding) + " (expected raw, gzip or ascii)");
  }
  if (enc != Enc::kAscii && io::scalar_size(type.scalar) > 1) {
    if (endian.empty())
      fail(path, "NRRD header lacks 'endian' (required for " + quote_line(type_s) + ")");
    if (endian != "little" && endian != "big")
      fail(path, "bad " + quote_line("endian: " + endian) + " (expected little or big)");
    h.big_endian = endian == "big";
  }

  std::size_t &count = h.count, &data_bytes = h.data_bytes;
  count = 1;
  for (std::size_t s : sizes)
    if (!io::checked_mul(count, s, &count))
      fail(path, quote_line("sizes: " + sizes_s) + " is too large");
  if (!io::checked_mul(count, io::scalar_size(type.scalar), &data_bytes))
    fail(path, quote_line("sizes: " + sizes_s) + " is too large");
  if (enc == Enc::kRaw)
    h.encoded_limit = saturating_add(data_bytes, 1);
  else if (enc == Enc::kGzip)
    h.encoded_limit = saturating_add(data_bytes, data_bytes / 1024 + (std::size_t{1} << 16));
  else
    h.encoded_limit =
        saturating_add(count > SIZE_MAX / 64 ? SIZE_MAX : 64 * count, std::size_t{1} << 16);
  return h;
}

// The detached data file a header names, relative to the header's folder.
std::string detached_path(const std::string& path, const NrrdHeader& h) {
  const std::string& data_file = h.data_file;
  if (data_file.rfind("LIST", 0) == 0 ||
      (data_file.find('%') != std::string::npos && split_ws(data_file).size() >= 4))
    fail(path, quote_line("data file: " + data_file) + ": multiple data files are not supported");
  std::filesystem::path p(data_file);
  if (p.is_relative()) p = std::filesystem::path(path).parent_path() / p;
  return p.string();
}

std::string detached_prefix(const std::string& data_path) {
  return "detached data file: " + printable(data_path, std::string::npos) + ": ";
}

// Raw data must be exactly what the header declares.
void check_raw_size(const DataSource& where, std::size_t src_n, std::size_t data_bytes) {
  if (src_n < data_bytes)
    where.fail("truncated: expected " + std::to_string(data_bytes) + " data bytes, found " +
               std::to_string(src_n));
  if (src_n > data_bytes)
    where.fail("trailing data: expected " + std::to_string(data_bytes) + " data bytes, found " +
               std::to_string(src_n));
}

// The spacing (array order) and geometry a header states, as load_nrrd reports them (before
// finish_loaded).
void nrrd_spacing_geometry(const std::string& path, const NrrdHeader& h,
                           std::vector<double>* spacing, Geometry* geometry) {
  const bool channel = h.channel;
  const std::size_t dimension = h.dimension, spatial = h.spatial;
  const std::vector<double>& axis_spacing = h.axis_spacing;
  const std::vector<std::vector<double>>& directions = h.directions;
  const std::string &space_s = h.space_s, &origin_s = h.origin_s;
  // Spacing in array order (NRRD lists the fastest axis first); unknown or zero -> 1.
  for (std::size_t i = dimension; i-- > (channel ? 1u : 0u);) {
    double s = std::fabs(axis_spacing[i]);
    spacing->push_back(std::isfinite(s) && s > 0 ? s : 1.0);
  }
  // Orientation: a named patient space with a 3-vector direction per spatial axis.
  double flip[3];
  if (!space_s.empty() && space_to_ras(space_s, flip)) {
    if (directions.empty())
      fail(path, quote_line("space: " + space_s) + " without 'space directions'");
    const std::size_t first = channel ? 1 : 0;
    if (channel && !directions[0].empty())
      fail(path, "the channel axis must have 'none' in 'space directions'");
    Geometry g;
    for (std::size_t a = 0; a < spatial; ++a) {
      const std::vector<double>& d = directions[first + a];
      if (d.size() != 3)
        fail(path, "'space directions' entry " + std::to_string(first + a) + " has " +
                       std::to_string(d.size()) + " components; space " + quote_line(space_s) +
                       " needs 3");
      for (int r = 0; r < 3; ++r) g.affine[r][a] = d[r] * flip[r];
    }
    if (spatial == 2) {  // the third index axis: the unit normal of the plane
      double n[3] = {g.affine[1][0] * g.affine[2][1] - g.affine[2][0] * g.affine[1][1],
                     g.affine[2][0] * g.affine[0][1] - g.affine[0][0] * g.affine[2][1],
                     g.affine[0][0] * g.affine[1][1] - g.affine[1][0] * g.affine[0][1]};
      const double len = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
      for (int r = 0; r < 3; ++r) g.affine[r][2] = len > 0 ? n[r] / len : 0.0;
    }
    if (!origin_s.empty()) {
      std::size_t i = origin_s.find('(');
      if (i == std::string::npos) fail(path, "malformed 'space origin': " + quote_line(origin_s));
      const std::vector<double> o = parse_vector(path, "space origin", origin_s, &i);
      if (o.size() != 3)
        fail(path, "'space origin' has " + std::to_string(o.size()) + " components, expected 3");
      for (int r = 0; r < 3; ++r) g.affine[r][3] = o[r] * flip[r];
    }
    g.source = "nrrd space " + io::to_lower(space_s);
    *geometry = g;
  }
}

Loaded load_nrrd_impl(const std::string& path) {
  // A regular file is read whole (its size bounds the work). An opted-in pipe or device: the
  // header up to its blank line (at most kMaxSpecialHeader bytes), the data once the header
  // says how much there is.
  io::InputFile in(path);
  std::vector<unsigned char> bytes;
  if (in.regular())
    in.read_append(bytes, SIZE_MAX);
  else if (!read_header_part(in, bytes))
    fail(path, "no end of the NRRD header in the first " + std::to_string(kMaxSpecialHeader) +
                   " bytes of a non-regular file");
  const NrrdHeader h = parse_nrrd_header(path, bytes);
  const std::size_t count = h.count, data_bytes = h.data_bytes;

  // --- locate the data ---
  std::vector<unsigned char> detached;
  const unsigned char* src = nullptr;
  std::size_t src_n = 0;
  DataSource where{path, ""};
  if (!h.data_file.empty()) {
    const std::string p = detached_path(path, h);
    try {
      detached = io::read_file(p, h.encoded_limit);
    } catch (const Error& e) {
      fail(path, std::string("detached data file: ") + e.what());
    }
    where.prefix = detached_prefix(p);
    src = detached.data();
    src_n = detached.size();
  } else {
    if (h.data_offset == std::string::npos)
      fail(path, "NRRD header has no 'data file' and no blank line before attached data");
    const std::size_t size = bytes.size();
    if (!in.regular() && size - h.data_offset < h.encoded_limit)
      in.read_append(bytes, h.encoded_limit - (size - h.data_offset));
    src = bytes.data() + h.data_offset;
    src_n = bytes.size() - h.data_offset;
  }

  Loaded out;
  // (Constructing the array allocates; every size above was validated first.)
  auto make_array = [&] { out.array = ArrayD(h.dims(), h.channel ? h.sizes[0] : 1); };
  // int64/uint64 values a double cannot hold are refused, naming the first.
  auto decode_exact = [&](const unsigned char* data) {
    const std::optional<io::InexactValue> bad =
        io::decode_values_checked(data, count, h.type.scalar, h.big_endian, out.array.data());
    if (bad)
      where.fail(std::string(dtype_name(h.type.dtype)) + " value " + bad->value + " at element " +
                 std::to_string(bad->index) + " is not exactly representable as a double");
  };
  if (h.enc == Enc::kRaw) {
    check_raw_size(where, src_n, data_bytes);
    make_array();
    decode_exact(src);
  } else if (h.enc == Enc::kGzip) {
    std::vector<unsigned char> raw = inflate_exact(where, src, src_n, data_bytes);
    make_array();
    decode_exact(raw.data());
  } else {
    // Every value takes at least one character plus a separator: check before allocating.
    if (count - 1 > src_n / 2)
      where.fail("truncated: " + std::to_string(src_n) + " bytes of ascii data cannot hold " +
                 std::to_string(count) + " values");
    make_array();
    parse_ascii(where, src, src_n, count, out.array.data());
  }
  out.dtype = h.type.dtype;
  out.channel_axis = h.channel;
  nrrd_spacing_geometry(path, h, &out.spacing, &out.geometry);
  return out;
}

// The NRRD type written for `t` (bool as uchar 0/1); float16, which NRRD lacks, is refused,
// naming the path and the dtype.
const char* nrrd_type_name(const std::string& path, DType t) {
  switch (t) {
    case DType::Bool:
    case DType::U8:
      return "uchar";
    case DType::U16:
      return "ushort";
    case DType::I16:
      return "short";
    case DType::F32:
      return "float";
    case DType::F64:
      return "double";
    case DType::I8:
      return "signed char";
    case DType::I32:
      return "int";
    case DType::I64:
      return "long long";
    case DType::U32:
      return "uint";
    case DType::U64:
      return "unsigned long long";
    case DType::F16:
      break;
  }
  fail(path, std::string("cannot save ") + dtype_name(t) +
                 " as NRRD (NRRD has no half-float type; save as float32 or .npy)");
}

std::string format_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// The header save_nrrd writes for an array of `dims` and `channels`, up to and including the
// "encoding: <encoding>" line (the caller ends it: a blank line, or the detached "data file").
std::string nrrd_header(const std::string& path, const std::vector<std::size_t>& dims,
                        std::size_t channels, DType dtype, bool channel_axis,
                        const std::vector<double>& spacing, const Geometry* geometry,
                        const char* encoding) {
  const std::size_t rank = dims.size();
  if (rank == 0) fail(path, "cannot save an empty array");
  if (!spacing.empty() && spacing.size() != rank)
    fail(path, "spacing has " + std::to_string(spacing.size()) + " values for a " +
                   std::to_string(rank) + "-D array");
  for (double s : spacing)
    if (!std::isfinite(s) || s <= 0) fail(path, "spacing " + format_double(s) + " is not positive");
  const bool oriented = geometry && geometry->oriented();
  if (geometry) {
    try {
      check_geometry(*geometry, rank, "the geometry to write");
    } catch (const Error& e) {
      fail(path, e.what());
    }
  }
  const bool channel = channel_axis || channels > 1;

  // Axes fastest first: channel, x, y, z.
  std::vector<std::size_t> sizes;
  std::vector<std::string> kinds;
  std::vector<std::string> spacings, directions;
  if (channel) {
    sizes.push_back(channels);
    kinds.push_back(channels == 3 ? "RGB-color" : channels == 4 ? "RGBA-color" : "vector");
    spacings.push_back("nan");
    directions.push_back("none");
  }
  for (std::size_t i = rank; i-- > 0;) {
    sizes.push_back(dims[i]);
    kinds.push_back("domain");
    spacings.push_back(spacing.empty() ? "1" : format_double(spacing[i]));
    if (oriented) {
      // Index axis (fastest first) = column of the affine; written in LPS as 3D Slicer does.
      const std::size_t col = rank - 1 - i;
      directions.push_back("(" + format_double(-geometry->affine[0][col]) + "," +
                           format_double(-geometry->affine[1][col]) + "," +
                           format_double(geometry->affine[2][col]) + ")");
    }
  }
  auto join = [](const auto& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i) s += ' ';
      if constexpr (std::is_same_v<std::decay_t<decltype(v[i])>, std::string>) {
        s += v[i];
      } else {
        s += std::to_string(v[i]);
      }
    }
    return s;
  };

  std::string header = "NRRD0004\n";
  header += "# Complete NRRD file format specification at:\n";
  header += "# http://teem.sourceforge.net/nrrd/format.html\n";
  header += std::string("type: ") + nrrd_type_name(path, dtype) + "\n";
  header += "dimension: " + std::to_string(sizes.size()) + "\n";
  header += "sizes: " + join(sizes) + "\n";
  header += "kinds: " + join(kinds) + "\n";
  if (oriented) {
    header += "space: left-posterior-superior\n";
    header += "space directions: " + join(directions) + "\n";
    header += "space origin: (" + format_double(-geometry->affine[0][3]) + "," +
              format_double(-geometry->affine[1][3]) + "," + format_double(geometry->affine[2][3]) +
              ")\n";
  } else if (!spacing.empty()) {
    header += "spacings: " + join(spacings) + "\n";
  }
  header += "endian: little\n";
  header += std::string("encoding: ") + encoding + "\n";
  return header;
}

void save_nrrd_impl(const std::string& path, const ArrayD& a, DType dtype, bool channel_axis,
                    const std::vector<double>& spacing, const Geometry* geometry) {
  if (a.empty()) fail(path, "cannot save an empty array");
  std::string header =
      nrrd_header(path, a.dims(), a.channels(), dtype, channel_axis, spacing, geometry, "gzip");
  const bool detached = io::lower_extension(path) == ".nhdr";

  const io::Scalar scalar = io::scalar_of(dtype);
  std::vector<unsigned char> raw(a.size() * io::scalar_size(scalar));
  io::encode_values(a.data(), a.size(), scalar, raw.data());
  std::vector<unsigned char> packed = gzip_compress(raw.data(), raw.size());
  raw = std::vector<unsigned char>();

  if (detached) {
    // Data beside the header: "<name>.raw.gz" for "<name>.nhdr".
    const std::filesystem::path target(path);
    const std::string data_name = target.stem().string() + ".raw.gz";
    header += "data file: " + data_name + "\n";
    const std::filesystem::path data_path = target.parent_path() / data_name;
    // Both temporaries are written (each guarded against signals) before either is renamed:
    // the data file first, then the header that refers to it.
    io::write_files_atomic(
        {{data_path.string(), packed.data(), packed.size()}, {path, header.data(), header.size()}});
  } else {
    header += "\n";
    std::vector<unsigned char> file(header.begin(), header.end());
    file.insert(file.end(), packed.begin(), packed.end());
    io::write_file_atomic(path, file);
  }
}

}  // namespace

Loaded load_nrrd(const std::string& path) {
  return io::guard_memory(path, [&] { return io::finish_loaded(path, load_nrrd_impl(path)); });
}

void save_nrrd(const std::string& path, const ArrayD& a, DType dtype, bool channel_axis,
               const std::vector<double>& spacing) {
  io::guard_memory(path, [&] { save_nrrd_impl(path, a, dtype, channel_axis, spacing, nullptr); });
}

void save_nrrd(const std::string& path, const ArrayD& a, DType dtype, bool channel_axis,
               const Geometry& geometry) {
  io::guard_memory(path, [&] {
    save_nrrd_impl(path, a, dtype, channel_axis, geometry_spacing(geometry, a.rank()), &geometry);
  });
}

namespace io {

DataLayout probe_nrrd(const std::string& path) {
  return guard_memory(path, [&] {
    DataLayout out;
    std::vector<unsigned char> bytes;
    InputFile in(path);
    if (!read_header_part(in, bytes)) {
      out.not_mappable = "its NRRD header does not end within the first " +
                         std::to_string(kMaxSpecialHeader) + " bytes";
      return out;
    }
    const NrrdHeader h = parse_nrrd_header(path, bytes);
    if (h.enc != Enc::kRaw) {
      out.not_mappable = std::string("its NRRD data is ") +
                         (h.enc == Enc::kGzip ? "gzip-compressed" : "ascii text") +
                         " (only raw encoding is mapped)";
      return out;
    }
    DataSource where{path, ""};
    std::size_t found = 0;
    if (!h.data_file.empty()) {
      out.data_path = detached_path(path, h);
      try {
        if (!check_regular(out.data_path)) {
          out.not_mappable = "its detached data file is not a regular file";
          return out;
        }
        found = InputFile(out.data_path).size();
      } catch (const Error& e) {
        fail(path, std::string("detached data file: ") + e.what());
      }
      where.prefix = detached_prefix(out.data_path);
    } else {
      if (h.data_offset == std::string::npos)
        fail(path, "NRRD header has no 'data file' and no blank line before attached data");
      out.data_path = path;
      out.data_offset = h.data_offset;
      found = in.size() > h.data_offset ? in.size() - h.data_offset : 0;
    }
    check_raw_size(where, found, h.data_bytes);
    out.dims = h.dims();
    out.channels = h.channel ? h.sizes[0] : 1;
    out.channel_axis = h.channel;
    out.dtype = h.type.dtype;
    out.scalar = h.type.scalar;
    out.big_endian = h.big_endian;
    out.data_bytes = h.data_bytes;
    out.error_path = path;
    out.error_prefix = where.prefix;
    nrrd_spacing_geometry(path, h, &out.spacing, &out.geometry);
    finish_geometry(path, out.dims.size(), &out.spacing, &out.geometry);
    return out;
  });
}

std::string nrrd_header_text(const std::string& path, const std::vector<std::size_t>& dims,
                             std::size_t channels, bool channel_axis, DType dtype,
                             const Geometry& geometry, const char* encoding) {
  return nrrd_header(path, dims, channels, dtype, channel_axis,
                     geometry_spacing(geometry, dims.size()), &geometry, encoding) +
         "\n";
}

}  // namespace io

}  // namespace sv
