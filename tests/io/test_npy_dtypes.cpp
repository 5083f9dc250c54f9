// .npy of every numeric dtype (issue 13 item 3): round trips of bool, int8..int64, uint8..uint64,
// float16/32/64; float16 decoding and rounding (subnormals, the largest value, infinities, NaN,
// ties to even, no double rounding); the int64/uint64 exactness boundary (2^53) and its message;
// rounding half away from zero and clamping on save; big-endian and Fortran-order files written
// by hand; the refusal of complex, object, string, structured and date dtypes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "splineview/error.h"
#include "splineview/io.h"
#include "temp_dir_test.h"

namespace {

using svtest::io::read_bytes;
using svtest::io::write_bytes;

using sv::ArrayD;
using sv::DType;

class NpyDtypes : public svtest::TempDirTest {};

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kTwo53 = 9007199254740992.0;
constexpr double kTwo63 = 9223372036854775808.0;

// A version 1.0 .npy file: the dict, padded as numpy does, then `data`.
std::string npy_file(const std::string& descr, bool fortran, const std::string& shape,
                     const std::string& data) {
  std::string h = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                  ", 'shape': " + shape + ", }";
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>((h.size() >> 8) & 0xff);
  return out + h + data;
}

// The data bytes of a .npy file that we wrote (after the header's newline).
std::string npy_data(const std::string& file) {
  const std::size_t hlen = static_cast<unsigned char>(file[8]) |
                           (static_cast<std::size_t>(static_cast<unsigned char>(file[9])) << 8);
  return file.substr(10 + hlen);
}

std::string npy_header_text(const std::string& file) {
  const std::size_t hlen = static_cast<unsigned char>(file[8]) |
                           (static_cast<std::size_t>(static_cast<unsigned char>(file[9])) << 8);
  return file.substr(10, hlen);
}

// `v` as `n` bytes, little or big endian.
std::string bytes_of(std::uint64_t v, int n, bool big_endian = false) {
  std::string s(static_cast<std::size_t>(n), '\0');
  for (int i = 0; i < n; ++i)
    s[static_cast<std::size_t>(big_endian ? n - 1 - i : i)] =
        static_cast<char>((v >> (8 * i)) & 0xffu);
  return s;
}

std::uint64_t value_of(const std::string& s, std::size_t at, int n) {
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i)
    v |= static_cast<std::uint64_t>(static_cast<unsigned char>(s[at + static_cast<std::size_t>(i)]))
         << (8 * i);
  return v;
}

std::uint64_t bits_of(double d) {
  std::uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

void expect_error(const std::function<void()>& fn, const std::string& path,
                  const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected '" << needle << "'";
  } catch (const sv::Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << "'" << msg << "' lacks '" << needle << "'";
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

struct TypeCase {
  DType dtype;
  const char* name;
  const char* descr;
  std::vector<double> values;  // all exactly representable in the type
};

std::vector<TypeCase> all_types() {
  return {
      {DType::Bool, "bool", "|b1", {0, 1, 1, 0, 1}},
      {DType::I8, "int8", "|i1", {-128, -1, 0, 1, 127}},
      {DType::U8, "uint8", "|u1", {0, 1, 128, 254, 255}},
      {DType::I16, "int16", "<i2", {-32768, -1024, 0, 3000, 32767}},
      {DType::U16, "uint16", "<u2", {0, 1, 40000, 65534, 65535}},
      {DType::I32, "int32", "<i4", {-2147483648.0, -7, 0, 123456789, 2147483647.0}},
      {DType::U32, "uint32", "<u4", {0, 1, 3000000000.0, 4294967294.0, 4294967295.0}},
      {DType::I64, "int64", "<i8", {-kTwo63, -kTwo53, -1, kTwo53, 0x1p62}},
      {DType::U64, "uint64", "<u8", {0, 1, kTwo53, kTwo63, 0x1.fffffffffffffp63}},
      {DType::F16, "float16", "<f2", {-65504, -0x1p-24, 0.333251953125, 0x1.ff8p-15, kInf}},
      {DType::F32, "float32", "<f4", {-3.4028234663852886e38, 0x1p-149, 0.1f, 1e30f, -kInf}},
      {DType::F64, "float64", "<f8", {-1.7976931348623157e308, 4.9e-324, 0.1, 1e300, kInf}},
  };
}

TEST_F(NpyDtypes, RoundTripEveryDtype) {
  for (const TypeCase& c : all_types()) {
    SCOPED_TRACE(c.name);
    EXPECT_STREQ(sv::dtype_name(c.dtype), c.name);
    for (bool channels : {false, true}) {
      ArrayD a(channels ? std::vector<std::size_t>{2, 3} : std::vector<std::size_t>{3, 2, 5},
               channels ? 4 : 1);
      for (std::size_t i = 0; i < a.size(); ++i) a[i] = c.values[i % c.values.size()];
      const std::string p = path(std::string(c.name) + (channels ? "_c" : "") + ".npy");
      sv::save_npy(p, a, c.dtype, channels);
      const std::string file = read_bytes(p);
      EXPECT_NE(npy_header_text(file).find(std::string("'descr': '") + c.descr + "'"),
                std::string::npos)
          << npy_header_text(file);
      EXPECT_EQ((file.size() - npy_data(file).size()) % 64, 0u);  // data aligned as numpy does
      const sv::Loaded l = sv::load_npy(p, channels);
      EXPECT_EQ(l.dtype, c.dtype);
      ASSERT_EQ(l.array.dims(), a.dims());
      ASSERT_EQ(l.array.channels(), a.channels());
      for (std::size_t i = 0; i < a.size(); ++i)
        EXPECT_EQ(bits_of(l.array[i]), bits_of(a[i])) << "element " << i << ": " << l.array[i];
    }
  }
}

// Every float16 bit pattern: decoded exactly (checked against the definition for the normal
// range), and encoding the decoded value gives the same bits back.
TEST_F(NpyDtypes, Float16AllPatterns) {
  std::string data;
  for (std::uint32_t h = 0; h < 65536; ++h) data += bytes_of(h, 2);
  write_bytes(path("all.npy"), npy_file("<f2", false, "(65536,)", data));
  const sv::Loaded l = sv::load_npy(path("all.npy"), false);
  EXPECT_EQ(l.dtype, DType::F16);
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const double v = l.array[h];
    const int e = (h >> 10) & 0x1f;
    const double m = h & 0x3ff;
    const double sign = (h & 0x8000u) ? -1 : 1;
    double want = e == 0   ? sign * m * 0x1p-24
                  : e < 31 ? sign * (1 + m / 1024) * std::ldexp(1.0, e - 15)
                  : m == 0 ? sign * kInf
                           : kNaN;
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(v)) << h;
    } else {
      ASSERT_EQ(bits_of(v), bits_of(want)) << "pattern " << h << ": " << v << " vs " << want;
    }
  }
  sv::save_npy(path("again.npy"), l.array, DType::F16, false);
  const std::string out = npy_data(read_bytes(path("again.npy")));
  ASSERT_EQ(out.size(), data.size());
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const auto got = static_cast<std::uint32_t>(value_of(out, 2 * h, 2));
    if (((h >> 10) & 0x1f) == 31 && (h & 0x3ff) != 0)  // NaN: a quiet NaN of the same sign
      EXPECT_EQ(got, (h & 0x8000u) | 0x7e00u) << h;
    else
      ASSERT_EQ(got, h) << "pattern " << h;
  }
}

TEST_F(NpyDtypes, Float16Rounding) {
  struct Case {
    double v;
    std::uint32_t bits;
  };
  const Case cases[] = {
      {0.0, 0x0000},
      {-0.0, 0x8000},
      {1.0, 0x3c00},
      {0x1p-24, 0x0001},                // smallest subnormal
      {0x1p-25, 0x0000},                // half of it: tie, to even (0)
      {0x1.0000000000001p-25, 0x0001},  // just above the tie
      {3 * 0x1p-25, 0x0002},            // tie between 1 and 2 ulps: to even (2)
      {5 * 0x1p-25, 0x0002},            // tie between 2 and 3: to even (2)
      {1023.5 * 0x1p-24, 0x0400},       // largest subnormal + half: to the smallest normal
      {0x1p-14, 0x0400},                // smallest normal
      {65504.0, 0x7bff},                // largest
      {65519.99, 0x7bff},               // below the tie with 65536
      {65520.0, 0x7c00},                // the tie rounds to even = infinity
      {-65520.0, 0xfc00},
      {1e6, 0x7c00},
      {kInf, 0x7c00},
      {-kInf, 0xfc00},
      {1 + 0x1p-11, 0x3c00},            // tie between 1 and 1 + 2^-10: to even (1)
      {1 + 3 * 0x1p-11, 0x3c02},        // tie: to even (1 + 2^-9)
      {1 + 0x1p-11 + 0x1p-40, 0x3c01},  // above the tie (float rounding first would give 1)
      {-2.0009765625, 0xc000},          // -(2 + 2^-10): tie, to even (-2)
      {0.1, 0x2e66},
  };
  ArrayD a({sizeof cases / sizeof cases[0] + 1});
  for (std::size_t i = 0; i < a.size() - 1; ++i) a[i] = cases[i].v;
  a[a.size() - 1] = -kNaN;
  sv::save_npy(path("r.npy"), a, DType::F16, false);
  const std::string data = npy_data(read_bytes(path("r.npy")));
  for (std::size_t i = 0; i < a.size() - 1; ++i)
    EXPECT_EQ(value_of(data, 2 * i, 2), cases[i].bits) << "value " << cases[i].v;
  const std::uint64_t nan = value_of(data, 2 * (a.size() - 1), 2);
  EXPECT_EQ(nan & 0x7c00u, 0x7c00u);
  EXPECT_NE(nan & 0x03ffu, 0u);
  EXPECT_TRUE(std::isnan(sv::load_npy(path("r.npy"), false).array[a.size() - 1]));
}

// 2^53 is the largest magnitude below which every integer is a double.
TEST_F(NpyDtypes, Int64ExactnessBoundary) {
  const auto i64 = [](std::int64_t v, bool be = false) {
    return bytes_of(static_cast<std::uint64_t>(v), 8, be);
  };
  const std::int64_t two53 = std::int64_t{1} << 53;
  std::string ok;
  for (std::int64_t v : {two53, -two53, two53 - 1, std::numeric_limits<std::int64_t>::min(),
                         std::int64_t{1} << 62, two53 + 2})
    ok += i64(v);
  write_bytes(path("ok.npy"), npy_file("<i8", false, "(6,)", ok));
  const sv::Loaded l = sv::load_npy(path("ok.npy"), false);
  EXPECT_EQ(l.dtype, DType::I64);
  EXPECT_EQ(l.array[0], kTwo53);
  EXPECT_EQ(l.array[1], -kTwo53);
  EXPECT_EQ(l.array[2], kTwo53 - 1);
  EXPECT_EQ(l.array[3], -kTwo63);
  EXPECT_EQ(l.array[4], 0x1p62);
  EXPECT_EQ(l.array[5], kTwo53 + 2);

  std::string bad;
  for (int i = 0; i < 20; ++i) bad += i64(i == 12 ? two53 + 1 : i);
  const std::string p = path("bad.npy");
  write_bytes(p, npy_file("<i8", false, "(4, 5)", bad));
  expect_error([&] { sv::load_npy(p, false); }, p,
               "int64 value 9007199254740993 at element 12 is not exactly representable as a "
               "double");

  write_bytes(p, npy_file(">i8", false, "(2,)", i64(0, true) + i64(-two53 - 1, true)));
  expect_error([&] { sv::load_npy(p, false); }, p,
               "int64 value -9007199254740993 at element 1 is not exactly representable");
  write_bytes(p, npy_file("<i8", false, "(1,)", i64(std::numeric_limits<std::int64_t>::max())));
  expect_error([&] { sv::load_npy(p, false); }, p, "int64 value 9223372036854775807 at element 0");

  write_bytes(p, npy_file("<u8", false, "(3,)",
                          bytes_of(1ull << 63, 8) + bytes_of(1ull << 53, 8) + bytes_of(~0ull, 8)));
  expect_error([&] { sv::load_npy(p, false); }, p,
               "uint64 value 18446744073709551615 at element 2 is not exactly representable");
  write_bytes(p, npy_file("<u8", false, "(2,)", bytes_of(1ull << 63, 8) + bytes_of(1ull << 53, 8)));
  EXPECT_EQ(sv::load_npy(p, false).array[0], kTwo63);

  // In a Fortran-order file the element index is the C-order one (numpy's a.flat index):
  // shape (2, 3), C index 4 is (1, 1), stored at Fortran offset 1 + 2 * 1 = 3.
  std::string f;
  for (int k = 0; k < 6; ++k) f += i64(k == 3 ? two53 + 1 : k);
  write_bytes(p, npy_file("<i8", true, "(2, 3)", f));
  expect_error([&] { sv::load_npy(p, false); }, p, "int64 value 9007199254740993 at element 4");
}

TEST_F(NpyDtypes, SaveRoundsHalfAwayFromZeroAndClamps) {
  const std::vector<double> in = {2.5,  -2.5, 0.5,   -0.5, 1.49999, 0.49999999999999994,
                                  kNaN, kInf, -kInf, 1e30, -1e30,   -0.0};
  ArrayD a({in.size()});
  for (std::size_t i = 0; i < in.size(); ++i) a[i] = in[i];
  struct Want {
    DType dtype;
    int size;
    std::vector<std::int64_t> values;  // as signed (unsigned types fit)
  };
  const std::int64_t i64max = std::numeric_limits<std::int64_t>::max();
  const std::int64_t i64min = std::numeric_limits<std::int64_t>::min();
  const Want wants[] = {
      {DType::Bool, 1, {1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0}},
      {DType::I8, 1, {3, -3, 1, -1, 1, 0, 0, 127, -128, 127, -128, 0}},
      {DType::U8, 1, {3, 0, 1, 0, 1, 0, 0, 255, 0, 255, 0, 0}},
      {DType::I16, 2, {3, -3, 1, -1, 1, 0, 0, 32767, -32768, 32767, -32768, 0}},
      {DType::U16, 2, {3, 0, 1, 0, 1, 0, 0, 65535, 0, 65535, 0, 0}},
      {DType::I32, 4, {3, -3, 1, -1, 1, 0, 0, 2147483647, -2147483648, 2147483647, -2147483648, 0}},
      {DType::U32, 4, {3, 0, 1, 0, 1, 0, 0, 4294967295, 0, 4294967295, 0, 0}},
      {DType::I64, 8, {3, -3, 1, -1, 1, 0, 0, i64max, i64min, i64max, i64min, 0}},
      {DType::U64, 8, {3, 0, 1, 0, 1, 0, 0, -1, 0, -1, 0, 0}},  // -1: all ones
  };
  for (const Want& w : wants) {
    SCOPED_TRACE(sv::dtype_name(w.dtype));
    sv::save_npy(path("s.npy"), a, w.dtype, false);
    const std::string data = npy_data(read_bytes(path("s.npy")));
    ASSERT_EQ(data.size(), in.size() * static_cast<std::size_t>(w.size));
    for (std::size_t i = 0; i < in.size(); ++i) {
      const std::uint64_t mask = w.size == 8 ? ~0ull : (1ull << (8 * w.size)) - 1;
      EXPECT_EQ(value_of(data, i * static_cast<std::size_t>(w.size), w.size),
                static_cast<std::uint64_t>(w.values[i]) & mask)
          << "input " << in[i];
    }
  }
  // Near the int64/uint64 ends: doubles at 2^63 and beyond clamp; 2^63 - 1024 is kept.
  ArrayD big({4});
  big[0] = 0x1.fffffffffffffp62;
  big[1] = kTwo63;
  big[2] = -kTwo63;
  big[3] = 0x1p64;
  sv::save_npy(path("b.npy"), big, DType::I64, false);
  std::string data = npy_data(read_bytes(path("b.npy")));
  EXPECT_EQ(value_of(data, 0, 8), 0x7ffffffffffffc00ull);
  EXPECT_EQ(value_of(data, 8, 8), static_cast<std::uint64_t>(i64max));
  EXPECT_EQ(value_of(data, 16, 8), 1ull << 63);
  sv::save_npy(path("b.npy"), big, DType::U64, false);
  data = npy_data(read_bytes(path("b.npy")));
  EXPECT_EQ(value_of(data, 8, 8), 1ull << 63);
  EXPECT_EQ(value_of(data, 16, 8), 0u);
  EXPECT_EQ(value_of(data, 24, 8), ~0ull);
}

// Each type written little and big endian by hand reads the same values.
TEST_F(NpyDtypes, BigEndianDecode) {
  struct Case {
    const char* kind;
    int size;
    DType dtype;
    std::vector<std::uint64_t> raw;
    std::vector<double> want;
  };
  const Case cases[] = {
      {"i", 2, DType::I16, {0x8000, 0xffff, 0x0102, 0x7fff}, {-32768, -1, 258, 32767}},
      {"u", 2, DType::U16, {0x8000, 0xffff, 0x0102, 0}, {32768, 65535, 258, 0}},
      {"i",
       4,
       DType::I32,
       {0x80000000, 0xfffffffe, 0x01020304, 5},
       {-2147483648.0, -2, 16909060, 5}},
      {"u",
       4,
       DType::U32,
       {0x80000000, 0xfffffffe, 0x01020304, 5},
       {2147483648.0, 4294967294.0, 16909060, 5}},
      {"i",
       8,
       DType::I64,
       {0xffffffffffffffff, 0x0102030405060800, 0xffe0000000000000, 0},
       {-1, 72623859790383104.0, -9007199254740992.0, 0}},
      {"u",
       8,
       DType::U64,
       {0xffe0000000000000, 0x0102030405060800, 1, 0},
       {18437736874454810624.0, 72623859790383104.0, 1, 0}},
      {"f", 2, DType::F16, {0x3c00, 0xc000, 0x0001, 0x7bff}, {1, -2, 0x1p-24, 65504}},
      {"f",
       4,
       DType::F32,
       {0x3f800000, 0xc0490fdb, 0x00000001, 0x7f800000},
       {1, -3.1415927410125732, 0x1p-149, kInf}},
      {"f",
       8,
       DType::F64,
       {0x3ff0000000000000, 0xc00921fb54442d18, 1, 0xfff0000000000000},
       {1, -3.141592653589793, 4.9406564584124654e-324, -kInf}},
  };
  for (const Case& c : cases) {
    for (bool be : {false, true}) {
      const std::string descr = std::string(be ? ">" : "<") + c.kind + std::to_string(c.size);
      SCOPED_TRACE(descr);
      std::string data;
      for (std::uint64_t r : c.raw) data += bytes_of(r, c.size, be);
      write_bytes(path("e.npy"), npy_file(descr, false, "(2, 2)", data));
      const sv::Loaded l = sv::load_npy(path("e.npy"), false);
      EXPECT_EQ(l.dtype, c.dtype);
      for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(l.array[i], c.want[i]) << i;
    }
  }
  // Single bytes: every byte-order mark numpy may write, and bool bytes other than 0/1.
  for (const char* d : {"|i1", "<i1", ">i1", "=i1", "i1"}) {
    write_bytes(path("b.npy"), npy_file(d, false, "(2,)", "\x80\x7f"));
    const sv::Loaded l = sv::load_npy(path("b.npy"), false);
    EXPECT_EQ(l.dtype, DType::I8) << d;
    EXPECT_EQ(l.array[0], -128) << d;
    EXPECT_EQ(l.array[1], 127) << d;
  }
  write_bytes(path("b.npy"), npy_file("|b1", false, "(4,)", std::string("\x00\x01\x02\xff", 4)));
  const sv::Loaded b = sv::load_npy(path("b.npy"), false);
  EXPECT_EQ(b.dtype, DType::Bool);
  EXPECT_EQ(b.array.vec(), (std::vector<double>{0, 1, 1, 1}));
  // '=' is native order (little endian here).
  write_bytes(path("n.npy"), npy_file("=u2", false, "(1,)", bytes_of(0x0102, 2)));
  EXPECT_EQ(sv::load_npy(path("n.npy"), false).array[0], 258);
}

// Fortran order: the first axis varies fastest in the file; loaded arrays are C order.
TEST_F(NpyDtypes, FortranOrderDecode) {
  // value(index) = 100 i0 + 10 i1 + i2 (+ 1000 c), written in Fortran order as int16.
  const auto fortran_bytes = [](const std::vector<std::size_t>& shape, bool be) {
    std::size_t n = 1;
    for (std::size_t d : shape) n *= d;
    std::string data;
    for (std::size_t f = 0; f < n; ++f) {
      std::size_t rest = f;
      std::vector<std::size_t> idx(shape.size());
      for (std::size_t k = 0; k < shape.size(); ++k) {
        idx[k] = rest % shape[k];
        rest /= shape[k];
      }
      std::uint64_t v = 0;
      for (std::size_t k = 0; k < idx.size(); ++k) v = v * 10 + idx[k];
      data += bytes_of(v, 2, be);
    }
    return data;
  };
  const auto c_value = [](const std::vector<std::size_t>& idx) {
    double v = 0;
    for (std::size_t i : idx) v = v * 10 + static_cast<double>(i);
    return v;
  };
  write_bytes(path("f2.npy"), npy_file("<i2", true, "(3, 4)", fortran_bytes({3, 4}, false)));
  sv::Loaded l = sv::load_npy(path("f2.npy"), false);
  ASSERT_EQ(l.array.dims(), (std::vector<std::size_t>{3, 4}));
  for (std::size_t y = 0; y < 3; ++y)
    for (std::size_t x = 0; x < 4; ++x) EXPECT_EQ(l.array.at2(y, x), c_value({y, x}));

  write_bytes(path("f3.npy"), npy_file(">i2", true, "(2, 3, 4)", fortran_bytes({2, 3, 4}, true)));
  l = sv::load_npy(path("f3.npy"), false);
  ASSERT_EQ(l.array.dims(), (std::vector<std::size_t>{2, 3, 4}));
  EXPECT_EQ(l.dtype, DType::I16);
  for (std::size_t z = 0; z < 2; ++z)
    for (std::size_t y = 0; y < 3; ++y)
      for (std::size_t x = 0; x < 4; ++x) EXPECT_EQ(l.array.at3(z, y, x), c_value({z, y, x}));

  // With a channel axis: (3, 4, 2) -> 3x4, 2 channels; and a 3-D volume with 3 channels.
  write_bytes(path("fc.npy"), npy_file("<i2", true, "(3, 4, 2)", fortran_bytes({3, 4, 2}, false)));
  l = sv::load_npy(path("fc.npy"), true);
  ASSERT_EQ(l.array.dims(), (std::vector<std::size_t>{3, 4}));
  ASSERT_EQ(l.array.channels(), 2u);
  for (std::size_t y = 0; y < 3; ++y)
    for (std::size_t x = 0; x < 4; ++x)
      for (std::size_t c = 0; c < 2; ++c) EXPECT_EQ(l.array.at2(y, x, c), c_value({y, x, c}));
  write_bytes(path("fv.npy"),
              npy_file("<i2", true, "(2, 3, 4, 3)", fortran_bytes({2, 3, 4, 3}, false)));
  l = sv::load_npy(path("fv.npy"), true);
  ASSERT_EQ(l.array.channels(), 3u);
  for (std::size_t z = 0; z < 2; ++z)
    for (std::size_t y = 0; y < 3; ++y)
      for (std::size_t x = 0; x < 4; ++x)
        for (std::size_t c = 0; c < 3; ++c)
          EXPECT_EQ(l.array.at3(z, y, x, c), c_value({z, y, x, c}));

  // 1-D and size-1 axes: Fortran and C order are the same bytes.
  write_bytes(path("f1.npy"), npy_file("<i2", true, "(5,)", fortran_bytes({5}, false)));
  EXPECT_EQ(sv::load_npy(path("f1.npy"), false).array.vec(), (std::vector<double>{0, 1, 2, 3, 4}));
  write_bytes(path("fs.npy"), npy_file("<i2", true, "(1, 3, 1)", fortran_bytes({1, 3, 1}, false)));
  EXPECT_EQ(sv::load_npy(path("fs.npy"), false).array.vec(), (std::vector<double>{0, 10, 20}));
  // The size checks hold in Fortran order too.
  const std::string p = path("ft.npy");
  write_bytes(p, npy_file("<i2", true, "(3, 4)", fortran_bytes({3, 4}, false).substr(2)));
  expect_error([&] { sv::load_npy(p, false); }, p, "truncated: expected 24 data bytes, found 22");
}

TEST_F(NpyDtypes, Refusals) {
  const std::string p = path("r.npy");
  const std::string data(64, '\0');
  const struct {
    const char* descr;
    const char* why;
  } cases[] = {
      {"<c16", "unsupported dtype '<c16' (complex numbers"},
      {"<c8", "unsupported dtype '<c8' (complex numbers"},
      {"|O", "unsupported dtype '|O' (Python objects"},
      {"<U4", "unsupported dtype '<U4' (strings"},
      {"|S8", "unsupported dtype '|S8' (strings"},
      {"|V8", "unsupported dtype '|V8' (raw or structured records"},
      {"<M8[ns]", "unsupported dtype '<M8[ns]' (dates and times"},
      {"<m8[s]", "unsupported dtype '<m8[s]' (dates and times"},
      {"<f16", "unsupported dtype '<f16' (extended-precision floats"},
      {"<i3", "unsupported dtype '<i3' (unknown type"},
      {"|i2", "unsupported dtype '|i2' ('|' (no byte order) on a multi-byte type"},
      {"<q8", "unsupported dtype '<q8' (unknown type"},
      {"<", "unsupported dtype '<' (no type"},
      {"<f", "unsupported dtype '<f' (not a numeric type and size"},
      {"<f4x", "unsupported dtype '<f4x' (not a numeric type and size"},
      {"<f0000004", "unsupported dtype '<f0000004' (not a numeric type and size"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.descr);
    write_bytes(p, npy_file(c.descr, false, "(8,)", data));
    expect_error([&] { sv::load_npy(p, false); }, p, c.why);
    expect_error([&] { sv::load_npy(p, false); }, p,
                 "expected a numeric dtype: bool, int8..int64, uint8..uint64, float16, float32, "
                 "float64");
  }
  // A control byte in the descr is shown escaped, never raw.
  write_bytes(p, npy_file(std::string("<\x01z"), false, "(8,)", data));
  try {
    sv::load_npy(p, false);
    ADD_FAILURE() << "no error";
  } catch (const sv::Error& e) {
    EXPECT_EQ(std::string(e.what()).find('\x01'), std::string::npos) << e.what();
  }
  // Structured dtypes: the descr is a list; the message quotes its text.
  std::string h =
      "{'descr': [('x', '<f4'), ('y', '<i4')], 'fortran_order': False, 'shape': (8,), }";
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  write_bytes(p,
              std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(h.size()) + '\0' + h + data);
  expect_error([&] { sv::load_npy(p, false); }, p,
               "unsupported dtype '[('x', '<f4'), ('y', '<i4')]' (a structured dtype");
  // Sizes are checked with the element size of the type.
  write_bytes(p, npy_file("<i8", false, "(9,)", data));
  expect_error([&] { sv::load_npy(p, false); }, p, "truncated: expected 72 data bytes, found 64");
  write_bytes(p, npy_file("<f2", false, "(31,)", data));
  expect_error([&] { sv::load_npy(p, false); }, p,
               "trailing data: expected 62 data bytes, found 64");
}

// NRRD and NIfTI-1 write the types that they read back and refuse the others by name.
TEST_F(NpyDtypes, NrrdAndNiftiOutputTypes) {
  ArrayD a({2, 3});
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i) - 2;
  sv::save_nrrd(path("s.nrrd"), a, DType::I16, false);
  EXPECT_EQ(sv::load_nrrd(path("s.nrrd")).array.vec(), a.vec());
  sv::save_nrrd(path("b.nrrd"), a, DType::Bool, false);
  EXPECT_EQ(sv::load_nrrd(path("b.nrrd")).array.vec(), (std::vector<double>{1, 1, 0, 1, 1, 1}));
  // Every integer type is an NRRD type: written and read back as itself.
  for (DType t : {DType::I8, DType::I32, DType::I64}) {
    sv::save_nrrd(path("t.nrrd"), a, t, false);
    const sv::Loaded l = sv::load_nrrd(path("t.nrrd"));
    EXPECT_EQ(l.dtype, t) << sv::dtype_name(t);
    EXPECT_EQ(l.array.vec(), a.vec()) << sv::dtype_name(t);
  }
  for (DType t : {DType::U32, DType::U64}) {
    sv::save_nrrd(path("t.nrrd"), a, t, false);
    const sv::Loaded l = sv::load_nrrd(path("t.nrrd"));
    EXPECT_EQ(l.dtype, t) << sv::dtype_name(t);
    EXPECT_EQ(l.array.vec(), (std::vector<double>{0, 0, 0, 1, 2, 3})) << sv::dtype_name(t);
  }
  {
    const std::string p = path("x.nrrd");
    expect_error([&] { sv::save_nrrd(p, a, DType::F16, false); }, p, "cannot save float16 as NRRD");
  }
  for (DType t : {DType::I8, DType::I16, DType::I32}) {
    sv::save_nifti(path("s.nii"), a, t);
    EXPECT_EQ(sv::load_nifti(path("s.nii")).array.vec(), a.vec()) << sv::dtype_name(t);
  }
  sv::save_nifti(path("u.nii"), a, DType::U32);
  EXPECT_EQ(sv::load_nifti(path("u.nii")).array.vec(), (std::vector<double>{0, 0, 0, 1, 2, 3}));
  for (DType t : {DType::I64, DType::U64, DType::F16}) {
    const std::string p = path("x.nii");
    expect_error([&] { sv::save_nifti(p, a, t); }, p,
                 std::string("cannot save ") + sv::dtype_name(t) + " as NIfTI-1");
  }
}

}  // namespace
