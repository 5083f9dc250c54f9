// Tests of the file I/O module (splineview/io.h): exact round trips of every dtype and shape
// through .npy, NRRD and PNG, approximate JPEG round trips, hand-written NRRD variants (raw,
// big endian, detached, ascii), the error messages for malformed files, atomic saves that
// leave an existing file untouched, robustness against truncated and mutated files, and
// interoperability with numpy when Debian's python3 has it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "splineview/error.h"
#include "splineview/io.h"
#include "temp_dir_test.h"

namespace fs = std::filesystem;

namespace {

using svtest::io::read_bytes;
using svtest::io::write_bytes;

using sv::ArrayD;
using sv::DType;

// A fresh directory per test, removed afterwards.
class IoTest : public svtest::TempDirTest {
 protected:
  // Names of the entries in the test directory (to spot leftover temporary files).
  std::set<std::string> listing() const {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.insert(e.path().filename().string());
    return names;
  }
};

// Runs fn, expects sv::Error whose message starts with "<path>: " and contains `needle`.
void expect_error(const std::function<void()>& fn, const std::string& path,
                  const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "no sv::Error thrown; expected one containing '" << needle << "'";
  } catch (const sv::Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << "message does not start with the path: " << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << "message lacks '" << needle << "': " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "message is not one line: " << msg;
  }
}

// Values exactly representable in `t` (integers for U8/U16, floats for F32), including
// awkward ones for the floating types.
ArrayD sample_array(const std::vector<std::size_t>& dims, std::size_t channels, DType t,
                    std::uint32_t seed) {
  ArrayD a(dims, channels);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1e3, 1e3);
  const double specials[] = {0.0,
                             -0.0,
                             1.0,
                             -1.5,
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(),
                             std::numeric_limits<double>::quiet_NaN(),
                             1e-310,
                             1e300,
                             3.141592653589793};
  for (std::size_t i = 0; i < a.size(); ++i) {
    switch (t) {
      case DType::U8:
        a[i] = static_cast<double>(rng() % 256);
        break;
      case DType::U16:
        a[i] = static_cast<double>(rng() % 65536);
        break;
      case DType::F32:
        a[i] = i < 7 ? specials[i] : static_cast<double>(static_cast<float>(u(rng)));
        if (i == 7) a[i] = static_cast<double>(1e-40f);  // float denormal
        break;
      case DType::F64:
        a[i] = i < 10 ? specials[i] : u(rng);
        break;
      default:  // the other dtypes: tests/io/test_npy_dtypes.cpp
        ADD_FAILURE() << "no sample values for " << sv::dtype_name(t);
        return a;
    }
  }
  return a;
}

// Bitwise comparison (NaN payloads and the sign of zero included).
void expect_same_bits(const ArrayD& got, const ArrayD& want) {
  ASSERT_EQ(got.dims(), want.dims());
  ASSERT_EQ(got.channels(), want.channels());
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(double)) != 0) {
      ADD_FAILURE() << "element " << i << ": got " << got[i] << ", want " << want[i];
      return;
    }
  }
}

const DType kAllTypes[] = {DType::U8, DType::U16, DType::F32, DType::F64};

const std::vector<std::vector<std::size_t>> kShapes = {{7}, {5, 6}, {3, 4, 5}};

std::string npy_with_header(const std::string& dict, const std::string& data, int major = 1) {
  std::string h = dict;
  const std::size_t pre = major == 1 ? 10 : 12;
  while ((pre + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  const std::size_t n = h.size();
  out += static_cast<char>(n & 0xff);
  out += static_cast<char>((n >> 8) & 0xff);
  if (major != 1) {
    out += static_cast<char>((n >> 16) & 0xff);
    out += static_cast<char>((n >> 24) & 0xff);
  }
  return out + h + data;
}

std::string le_f32(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[i] = static_cast<char>((u >> (8 * i)) & 0xff);
  return s;
}

// ---------------------------------------------------------------------------------- .npy

TEST_F(IoTest, IoNpyRoundTripEveryDtypeAndShape) {
  std::uint32_t seed = 1;
  for (DType t : kAllTypes) {
    for (const auto& dims : kShapes) {
      for (std::size_t c = 1; c <= 4; ++c) {
        for (bool channel_axis : {false, true}) {
          if (!channel_axis && c > 1) continue;  // covered by the trailing-axis test
          SCOPED_TRACE(std::string(sv::dtype_name(t)) + " " + sv::describe_shape(dims, c) +
                       (channel_axis ? " with channel axis" : ""));
          const ArrayD a = sample_array(dims, c, t, seed++);
          const std::string p = path("a.npy");
          sv::save_npy(p, a, t, channel_axis);
          const sv::Loaded l = sv::load_npy(p, channel_axis);
          EXPECT_EQ(l.dtype, t);
          EXPECT_EQ(l.channel_axis, channel_axis);
          EXPECT_EQ(l.spacing, std::vector<double>(dims.size(), 1.0));
          expect_same_bits(l.array, a);
        }
      }
    }
  }
}

TEST_F(IoTest, IoNpyFloatArrayOverload) {
  sv::ArrayF f({4, 3}, 2);
  for (std::size_t i = 0; i < f.size(); ++i) f[i] = static_cast<float>(i) * 0.1f - 1.0f;
  sv::save_npy(path("f.npy"), f, true);
  const sv::Loaded l = sv::load_npy(path("f.npy"), true);
  EXPECT_EQ(l.dtype, DType::F32);
  ASSERT_EQ(l.array.dims(), f.dims());
  ASSERT_EQ(l.array.channels(), 2u);
  for (std::size_t i = 0; i < f.size(); ++i) EXPECT_EQ(l.array[i], static_cast<double>(f[i]));
}

TEST_F(IoTest, IoNpyChannelAxisLayout) {
  // channels > 1 without channel_axis still writes the trailing axis.
  ArrayD a = sample_array({4, 5}, 3, DType::F64, 7);
  sv::save_npy(path("c.npy"), a, DType::F64, false);
  expect_same_bits(sv::load_npy(path("c.npy"), true).array, a);
  const sv::Loaded spatial = sv::load_npy(path("c.npy"), false);
  EXPECT_EQ(spatial.array.dims(), (std::vector<std::size_t>{4, 5, 3}));
  EXPECT_EQ(spatial.array.channels(), 1u);
  EXPECT_FALSE(spatial.channel_axis);

  // channel_axis with one channel writes a trailing axis of 1.
  ArrayD g = sample_array({6}, 1, DType::F64, 8);
  sv::save_npy(path("g.npy"), g, DType::F64, true);
  EXPECT_EQ(sv::load_npy(path("g.npy"), false).array.dims(), (std::vector<std::size_t>{6, 1}));
  EXPECT_NE(read_bytes(path("g.npy")).find("'shape': (6, 1)"), std::string::npos);
  sv::save_npy(path("g1.npy"), g, DType::F64, false);
  EXPECT_NE(read_bytes(path("g1.npy")).find("'shape': (6,)"), std::string::npos);
}

TEST_F(IoTest, IoNpyHeaderLayout) {
  sv::save_npy(path("h.npy"), ArrayD({2, 3}), DType::U16, false);
  const std::string b = read_bytes(path("h.npy"));
  ASSERT_GE(b.size(), 10u);
  EXPECT_EQ(b.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const std::size_t hlen = static_cast<unsigned char>(b[8]) | static_cast<unsigned char>(b[9]) << 8;
  EXPECT_EQ((10 + hlen) % 64, 0u);
  EXPECT_EQ(b.size(), 10 + hlen + 2 * 3 * 2);
  EXPECT_EQ(b[10 + hlen - 1], '\n');
  EXPECT_NE(b.find("{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3), }"),
            std::string::npos);
}

TEST_F(IoTest, IoNpyIntegerRoundingAndClamping) {
  const double in[] = {-1.0,
                       0.49,
                       0.5,
                       1.5,
                       254.6,
                       300.0,
                       std::nan(""),
                       std::numeric_limits<double>::infinity(),
                       -std::numeric_limits<double>::infinity()};
  ArrayD a({9});
  for (std::size_t i = 0; i < 9; ++i) a[i] = in[i];
  sv::save_npy(path("u8.npy"), a, DType::U8, false);
  const double want8[] = {0, 0, 1, 2, 255, 255, 0, 255, 0};
  const ArrayD g8 = sv::load_npy(path("u8.npy"), false).array;
  for (std::size_t i = 0; i < 9; ++i) EXPECT_EQ(g8[i], want8[i]) << "input " << in[i];

  a[5] = 70000.0;
  a[4] = 65534.5;
  sv::save_npy(path("u16.npy"), a, DType::U16, false);
  const double want16[] = {0, 0, 1, 2, 65535, 65535, 0, 65535, 0};
  const ArrayD g16 = sv::load_npy(path("u16.npy"), false).array;
  for (std::size_t i = 0; i < 9; ++i) EXPECT_EQ(g16[i], want16[i]) << "index " << i;

  // float32 output: out-of-range doubles become infinities, not undefined behaviour.
  ArrayD big({3});
  big[0] = 1e300;
  big[1] = -1e300;
  big[2] = 1e-300;
  sv::save_npy(path("f.npy"), big, DType::F32, false);
  const ArrayD gf = sv::load_npy(path("f.npy"), false).array;
  EXPECT_EQ(gf[0], std::numeric_limits<double>::infinity());
  EXPECT_EQ(gf[1], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(gf[2], 0.0);
}

TEST_F(IoTest, IoNpyReadsVersions2And3AndPython2Headers) {
  const std::string data = le_f32(1.5f) + le_f32(-2.0f);
  for (int major : {1, 2, 3}) {
    write_bytes(
        path("v.npy"),
        npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", data, major));
    const sv::Loaded l = sv::load_npy(path("v.npy"), false);
    ASSERT_EQ(l.array.size(), 2u) << "version " << major;
    EXPECT_EQ(l.array[0], 1.5);
    EXPECT_EQ(l.array[1], -2.0);
  }
  // Python 2 numpy wrote long integers with an L suffix; keys in any order, double quotes.
  write_bytes(
      path("p2.npy"),
      npy_with_header("{\"shape\": (1L, 2L), \"fortran_order\": False, \"descr\": \"<f4\"}", data));
  EXPECT_EQ(sv::load_npy(path("p2.npy"), false).array.dims(), (std::vector<std::size_t>{1, 2}));
  // '<u1' is accepted like '|u1'.
  write_bytes(path("u1.npy"),
              npy_with_header("{'descr': '<u1', 'fortran_order': False, 'shape': (3,), }",
                              std::string("\x01\x02\xff", 3)));
  const sv::Loaded u1 = sv::load_npy(path("u1.npy"), false);
  EXPECT_EQ(u1.dtype, DType::U8);
  EXPECT_EQ(u1.array[2], 255.0);
}

TEST_F(IoTest, IoNpyErrors) {
  const std::string p = path("e.npy");
  const std::string good_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), }";
  const std::string data64(64, '\0');

  expect_error([&] { sv::load_npy(path("missing.npy"), false); }, path("missing.npy"),
               "cannot open: No such file or directory");

  write_bytes(p, npy_with_header(good_dict, std::string(10, '\0')));
  expect_error([&] { sv::load_npy(p, false); }, p, "truncated: expected 64 data bytes, found 10");

  write_bytes(p, npy_with_header(good_dict, data64 + "junk"));
  expect_error([&] { sv::load_npy(p, false); }, p,
               "trailing data: expected 64 data bytes, found 68");

  write_bytes(p, "PK\x03\x04 not numpy at all");
  expect_error([&] { sv::load_npy(p, false); }, p, "bad magic");

  write_bytes(p, "\x93NUMPY\x01");
  expect_error([&] { sv::load_npy(p, false); }, p, "bad magic");

  write_bytes(p, std::string("\x93NUMPY\x04\x00\x10\x00", 10) + std::string(16, ' '));
  expect_error([&] { sv::load_npy(p, false); }, p, "unsupported .npy version 4.0");

  write_bytes(p, std::string("\x93NUMPY\x01\x00\xff\x7f", 10) + "{'descr'");
  expect_error([&] { sv::load_npy(p, false); }, p, "truncated .npy header");

  for (const char* bad : {"<c16", "|O", "<U2", "<M8[s]", "<f16", "<i3"}) {
    write_bytes(p, npy_with_header(std::string("{'descr': '") + bad +
                                       "', 'fortran_order': False, 'shape': (4, 4), }",
                                   data64));
    expect_error([&] { sv::load_npy(p, false); }, p,
                 std::string("unsupported dtype '") + bad + "'");
  }
  // Big-endian and Fortran-order data load (tests/io/test_npy_dtypes.cpp checks the values).
  write_bytes(
      p, npy_with_header("{'descr': '>f4', 'fortran_order': False, 'shape': (16,), }", data64));
  EXPECT_EQ(sv::load_npy(p, false).dtype, DType::F32);

  write_bytes(p, npy_with_header("{'descr': [('x', '<f4')], 'fortran_order': False, "
                                 "'shape': (16,), }",
                                 data64));
  expect_error([&] { sv::load_npy(p, false); }, p, "structured");

  write_bytes(
      p, npy_with_header("{'descr': '<f4', 'fortran_order': True, 'shape': (4, 4), }", data64));
  EXPECT_EQ(sv::load_npy(p, false).array.dims(), (std::vector<std::size_t>{4, 4}));

  write_bytes(p,
              npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4), }", ""));
  expect_error([&] { sv::load_npy(p, false); }, p, "(0, 4) has a zero-size axis");

  write_bytes(p, npy_with_header("{'descr': '|u1', 'fortran_order': False, 'shape': (2, 2, 5), }",
                                 std::string(20, '\0')));
  expect_error([&] { sv::load_npy(p, true); }, p, "channel axis (last) has 5 entries");
  EXPECT_EQ(sv::load_npy(p, false).array.dims(), (std::vector<std::size_t>{2, 2, 5}));

  write_bytes(p,
              npy_with_header("{'descr': '|u1', 'fortran_order': False, 'shape': (2, 2, 2, 2), }",
                              std::string(16, '\0')));
  expect_error([&] { sv::load_npy(p, false); }, p, "4 spatial axes");
  EXPECT_EQ(sv::load_npy(p, true).array.channels(), 2u);

  write_bytes(p, npy_with_header("{'descr': '|u1', 'fortran_order': False, 'shape': (), }",
                                 std::string(1, '\0')));
  expect_error([&] { sv::load_npy(p, false); }, p, "0 spatial axes");
  expect_error([&] { sv::load_npy(p, true); }, p, "no channel axis");

  write_bytes(p, npy_with_header("{'descr': '|u1', 'fortran_order': False, 'shape': (4,), }",
                                 std::string(4, '\0')));
  expect_error([&] { sv::load_npy(p, true); }, p, "0 spatial axes besides the channel axis");

  // Huge declared shapes fail on the size checks without allocating.
  write_bytes(p, npy_with_header("{'descr': '<f8', 'fortran_order': False, "
                                 "'shape': (1099511627776, 1099511627776), }",
                                 data64));
  expect_error([&] { sv::load_npy(p, false); }, p, "too large");
  write_bytes(p, npy_with_header("{'descr': '<f8', 'fortran_order': False, "
                                 "'shape': (100000, 100000, 100000), }",
                                 data64));
  expect_error([&] { sv::load_npy(p, false); }, p, "truncated: expected 8000000000000000");
  write_bytes(p, npy_with_header("{'descr': '<f8', 'fortran_order': False, "
                                 "'shape': (99999999999999999999999,), }",
                                 data64));
  expect_error([&] { sv::load_npy(p, false); }, p, "integer too large");

  for (const char* bad_dict :
       {"{'descr': '<f4', 'fortran_order': False}", "{'descr': '<f4', 'shape': (4, 4)}",
        "['descr']", "{'descr': '<f4', 'fortran_order': False, 'shape': (4, -4), }",
        "{'descr': '<f4' 'fortran_order': False, 'shape': (4, 4), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4)} x",
        "{'descr': '<f4', 'fortran_order': False, 'shape': 16, }",
        "{'descr': '<f4', 'fortran_order': 0, 'shape': (4, 4), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': ((((((((((((((("
        "(((((((((((4))))))))))))))))))))))))))))}"}) {
    SCOPED_TRACE(bad_dict);
    write_bytes(p, npy_with_header(bad_dict, data64));
    expect_error([&] { sv::load_npy(p, false); }, p, "");
  }
}

// ---------------------------------------------------------------------------------- images

TEST_F(IoTest, IoImagePng8RoundTripExact) {
  for (std::size_t c = 1; c <= 4; ++c) {
    SCOPED_TRACE(std::to_string(c) + " channels");
    ArrayD a({9, 13}, c);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>((i * 37) % 256);
    sv::save_image(path("a.png"), a, 8);
    const sv::Loaded l = sv::load_image(path("a.png"));
    EXPECT_EQ(l.dtype, DType::U8);
    EXPECT_EQ(l.channel_axis, c > 1);
    EXPECT_EQ(l.spacing, (std::vector<double>{1.0, 1.0}));
    expect_same_bits(l.array, a);
  }
}

TEST_F(IoTest, IoImagePng16KeepsAll65536Levels) {
  ArrayD ramp({256, 256});
  for (std::size_t i = 0; i < ramp.size(); ++i) ramp[i] = static_cast<double>(i);
  sv::save_image(path("ramp.png"), ramp, 16);
  const sv::Loaded l = sv::load_image(path("ramp.png"));
  EXPECT_EQ(l.dtype, DType::U16);
  EXPECT_FALSE(l.channel_axis);
  expect_same_bits(l.array, ramp);
  std::set<double> levels(l.array.vec().begin(), l.array.vec().end());
  EXPECT_EQ(levels.size(), 65536u);

  for (std::size_t c = 2; c <= 4; ++c) {
    SCOPED_TRACE(std::to_string(c) + " channels");
    ArrayD a({5, 7}, c);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>((i * 7919 + 13) % 65536);
    sv::save_image(path("c.png"), a, 16);
    const sv::Loaded lc = sv::load_image(path("c.png"));
    EXPECT_EQ(lc.dtype, DType::U16);
    EXPECT_TRUE(lc.channel_axis);
    expect_same_bits(lc.array, a);
  }
}

TEST_F(IoTest, IoImageQuantisesAndClamps) {
  // Stored values are written as they are: rounded, clamped to the type, never scaled.
  ArrayD a({1, 6});
  a[0] = -0.2;
  a[1] = 300.7;
  a[2] = std::nan("");
  a[3] = 127.5;
  a[4] = 0.49;
  a[5] = 1.0;
  sv::save_image(path("q.png"), a, 8);
  const ArrayD g = sv::load_image(path("q.png")).array;
  EXPECT_EQ(g[0], 0.0);
  EXPECT_EQ(g[1], 255.0);
  EXPECT_EQ(g[2], 0.0);
  EXPECT_EQ(g[3], 128.0);
  EXPECT_EQ(g[4], 0.0);
  EXPECT_EQ(g[5], 1.0);
  sv::save_image(path("q16.png"), a, 16);
  const ArrayD g16 = sv::load_image(path("q16.png")).array;
  EXPECT_EQ(g16[1], 301.0);
  EXPECT_EQ(g16[3], 128.0);
}

TEST_F(IoTest, IoImageJpegRoundTripApproximate) {
  ArrayD a({48, 64}, 3);
  for (std::size_t y = 0; y < 48; ++y)
    for (std::size_t x = 0; x < 64; ++x) {
      a.at2(y, x, 0) = 255.0 * static_cast<double>(x) / 63.0;
      a.at2(y, x, 1) = 255.0 * static_cast<double>(y) / 47.0;
      a.at2(y, x, 2) = 255.0 * (0.5 + 0.25 * std::sin(static_cast<double>(x + y) / 10.0));
    }
  for (const char* name : {"a.jpg", "a.JPEG"}) {
    sv::save_image(path(name), a, 8);
    const sv::Loaded l = sv::load_image(path(name));
    EXPECT_EQ(l.dtype, DType::U8);
    EXPECT_TRUE(l.channel_axis);
    ASSERT_EQ(l.array.dims(), a.dims());
    ASSERT_EQ(l.array.channels(), 3u);
    double max_err = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
      max_err = std::max(max_err, std::fabs(l.array[i] - a[i]));
    EXPECT_LT(max_err, 0.04 * 255) << name;
  }
  // Grey input: stb writes every JPEG as YCbCr, so it reads back as three equal channels.
  ArrayD g({16, 16});
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = 17.0 * static_cast<double>(i % 16);
  sv::save_image(path("g.jpg"), g, 8);
  const sv::Loaded lg = sv::load_image(path("g.jpg"));
  ASSERT_EQ(lg.array.channels(), 3u);
  double max_err = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    EXPECT_EQ(lg.array[3 * i], lg.array[3 * i + 1]);
    EXPECT_EQ(lg.array[3 * i], lg.array[3 * i + 2]);
    max_err = std::max(max_err, std::fabs(lg.array[3 * i] - g[i]));
  }
  EXPECT_LT(max_err, 0.04 * 255);
}

TEST_F(IoTest, IoImageErrors) {
  const std::string png = path("x.png");
  expect_error([&] { sv::load_image(png); }, png, "cannot open: No such file or directory");

  write_bytes(png, "this is plain text, not an image");
  expect_error([&] { sv::load_image(png); }, png, "not an image this program reads");

  write_bytes(png, std::string("\x89PNG\r\n\x1a\n", 8) + std::string(40, '\x07'));
  expect_error([&] { sv::load_image(png); }, png, "corrupt PNG: ");

  // A valid PNG cut short.
  ArrayD a({32, 32}, 3);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i % 97) / 96.0;
  sv::save_image(png, a, 8);
  const std::string whole = read_bytes(png);
  write_bytes(png, whole.substr(0, whole.size() / 2));
  expect_error([&] { sv::load_image(png); }, png, "corrupt PNG: ");

  const std::string jpg = path("x.jpg");
  write_bytes(jpg, std::string("\xff\xd8\xff\xe0", 4) + std::string(20, '\0'));
  expect_error([&] { sv::load_image(jpg); }, jpg, "corrupt JPEG: ");

  expect_error([&] { sv::save_image(jpg, a, 16); }, jpg, "JPEG supports only 8-bit");
  expect_error([&] { sv::save_image(jpg, ArrayD({4, 4}, 4), 8); }, jpg, "JPEG cannot store 4");
  expect_error([&] { sv::save_image(jpg, ArrayD({4, 4}, 2), 8); }, jpg, "JPEG cannot store 2");
  expect_error([&] { sv::save_image(jpg, ArrayD({70000, 1}), 8); }, jpg, "JPEG limit");
  expect_error([&] { sv::save_image(png, ArrayD({4, 4, 4}), 8); }, png, "must be 2-D");
  expect_error([&] { sv::save_image(png, ArrayD({4}), 8); }, png, "must be 2-D");
  expect_error([&] { sv::save_image(png, a, 12); }, png, "unsupported bit depth 12");
  expect_error([&] { sv::save_image(png, ArrayD(), 8); }, png, "empty array");
  expect_error([&] { sv::save_image(path("x.bmp"), a, 8); }, path("x.bmp"),
               "unsupported image extension '.bmp'");
}

// ---------------------------------------------------------------------------------- NRRD

TEST_F(IoTest, IoNrrdGzipRoundTripEveryDtypeAndShape) {
  std::uint32_t seed = 100;
  for (DType t : kAllTypes) {
    for (const auto& dims : kShapes) {
      for (std::size_t c = 1; c <= 4; ++c) {
        for (bool channel_axis : {false, true}) {
          if (!channel_axis && c > 1) continue;
          SCOPED_TRACE(std::string(sv::dtype_name(t)) + " " + sv::describe_shape(dims, c) +
                       (channel_axis ? " with channel axis" : ""));
          const ArrayD a = sample_array(dims, c, t, seed++);
          std::vector<double> spacing;
          for (std::size_t i = 0; i < dims.size(); ++i) spacing.push_back(0.5 + 0.25 * double(i));
          sv::save_nrrd(path("a.nrrd"), a, t, channel_axis, spacing);
          const sv::Loaded l = sv::load_nrrd(path("a.nrrd"));
          EXPECT_EQ(l.dtype, t);
          EXPECT_EQ(l.channel_axis, channel_axis);
          EXPECT_EQ(l.spacing, spacing);
          expect_same_bits(l.array, a);
        }
      }
    }
  }
}

TEST_F(IoTest, IoNrrdHeaderWritten) {
  ArrayD a({2, 3, 4}, 3);
  sv::save_nrrd(path("h.nrrd"), a, DType::U16, true, {2.0, 0.5, 0.25});
  const std::string b = read_bytes(path("h.nrrd"));
  EXPECT_EQ(b.rfind("NRRD0004\n", 0), 0u);
  for (const char* line :
       {"\ntype: ushort\n", "\ndimension: 4\n", "\nsizes: 3 4 3 2\n",
        "\nkinds: RGB-color domain domain domain\n", "\nspacings: nan 0.25 0.5 2\n",
        "\nendian: little\n", "\nencoding: gzip\n\n"})
    EXPECT_NE(b.find(line), std::string::npos) << "missing " << line;

  // Without spacing, no spacings field; loads as unit spacing.
  sv::save_nrrd(path("n.nrrd"), ArrayD({5}), DType::F32, false);
  EXPECT_EQ(read_bytes(path("n.nrrd")).find("spacings"), std::string::npos);
  EXPECT_EQ(sv::load_nrrd(path("n.nrrd")).spacing, std::vector<double>{1.0});

  expect_error(
      [&] {
        sv::save_nrrd(path("s.nrrd"), a, DType::F32, true, {1.0, 2.0});
      },
      path("s.nrrd"), "spacing has 2 values for a 3-D array");
  expect_error(
      [&] {
        sv::save_nrrd(path("s.nrrd"), a, DType::F32, true, {1.0, -2.0, 1.0});
      },
      path("s.nrrd"), "not positive");
  EXPECT_FALSE(fs::exists(path("s.nrrd")));
}

TEST_F(IoTest, IoNrrdRawLittleEndianAttached) {
  std::string data;
  for (int i = 0; i < 6; ++i) data += le_f32(static_cast<float>(i) - 2.5f);
  write_bytes(path("r.nrrd"),
              "NRRD0001\r\n# a comment\r\ncontent: test\r\ntype: float\r\ndimension: 2\r\n"
              "sizes: 3 2\r\nendian: little\r\nencoding: raw\r\nspacings: 0.5 2\r\n"
              "key:=value: with colon\r\n\r\n" +
                  data);
  const sv::Loaded l = sv::load_nrrd(path("r.nrrd"));
  EXPECT_EQ(l.dtype, DType::F32);
  EXPECT_FALSE(l.channel_axis);
  ASSERT_EQ(l.array.dims(), (std::vector<std::size_t>{2, 3}));
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(l.array[i], static_cast<double>(i) - 2.5);
  EXPECT_EQ(l.spacing, (std::vector<double>{2.0, 0.5}));  // array order: y, x
}

TEST_F(IoTest, IoNrrdBigEndianDetachedData) {
  // ushort, big endian, detached raw data in a sub-folder, relative to the header's folder.
  fs::create_directories(dir_ / "data");
  std::string be;
  const unsigned values[] = {0, 1, 256, 0x1234, 65535, 40000};
  for (unsigned v : values) {
    be += static_cast<char>(v >> 8);
    be += static_cast<char>(v & 0xff);
  }
  write_bytes(path("data/v.raw"), be);
  write_bytes(path("v.nhdr"),
              "NRRD0004\ntype: unsigned short\ndimension: 3\nsizes: 1 2 3\nendian: big\n"
              "encoding: raw\nspace dimension: 3\n"
              "space directions: (1.5,0,0) (0,0,-2) (0,3,4)\ndata file: data/v.raw\n");
  const sv::Loaded l = sv::load_nrrd(path("v.nhdr"));
  EXPECT_EQ(l.dtype, DType::U16);
  ASSERT_EQ(l.array.dims(), (std::vector<std::size_t>{3, 2, 1}));
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(l.array[i], static_cast<double>(values[i]));
  EXPECT_EQ(l.spacing, (std::vector<double>{5.0, 2.0, 1.5}));

  // short (int16) big endian with an RGB channel axis, absolute detached gzip-free path.
  std::string s16;
  const int svals[] = {-32768, -1, 0, 1, 32767, -300};
  for (int v : svals) {
    auto u = static_cast<std::uint16_t>(static_cast<std::int16_t>(v));
    s16 += static_cast<char>(u >> 8);
    s16 += static_cast<char>(u & 0xff);
  }
  write_bytes(path("s.raw"), s16);
  write_bytes(path("s.nhdr"),
              "NRRD0005\ntype: short\ndimension: 2\nsizes: 3 2\nendian: big\n"
              "encoding: raw\nkinds: RGB-color domain\ndata file: " +
                  fs::absolute(path("s.raw")).string() + "\n");
  const sv::Loaded s = sv::load_nrrd(path("s.nhdr"));
  EXPECT_EQ(s.dtype, DType::I16);  // the stored type
  EXPECT_TRUE(s.channel_axis);
  ASSERT_EQ(s.array.dims(), std::vector<std::size_t>{2});
  ASSERT_EQ(s.array.channels(), 3u);
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(s.array[i], static_cast<double>(svals[i]));
  EXPECT_EQ(s.spacing, std::vector<double>{1.0});

  // double, big endian, gzip-compressed detached data written through our own writer's data.
  ArrayD d = sample_array({2, 3}, 1, DType::F64, 5);
  sv::save_nrrd(path("d.nhdr"), d, DType::F64, false);
  EXPECT_TRUE(fs::exists(path("d.raw.gz")));
  EXPECT_NE(read_bytes(path("d.nhdr")).find("data file: d.raw.gz\n"), std::string::npos);
  expect_same_bits(sv::load_nrrd(path("d.nhdr")).array, d);
  expect_same_bits(sv::load_any(path("d.nhdr"), false).array, d);
}

TEST_F(IoTest, IoNrrdAsciiAndKinds) {
  write_bytes(path("a.nrrd"),
              "NRRD0004\ntype: uchar\ndimension: 3\nsizes: 2 2 2\nencoding: ascii\n"
              "kinds: vector domain domain\nspace directions: none (2,0) (0, 3)\n\n"
              "1 2, 3 4\n5 6 7 255\n");
  const sv::Loaded l = sv::load_nrrd(path("a.nrrd"));
  EXPECT_EQ(l.dtype, DType::U8);
  EXPECT_TRUE(l.channel_axis);
  ASSERT_EQ(l.array.dims(), (std::vector<std::size_t>{2, 2}));
  ASSERT_EQ(l.array.channels(), 2u);
  EXPECT_EQ(l.array.at2(1, 1, 1), 255.0);
  EXPECT_EQ(l.array.at2(0, 1, 0), 3.0);
  EXPECT_EQ(l.spacing, (std::vector<double>{3.0, 2.0}));
}

TEST_F(IoTest, IoNrrdErrors) {
  const std::string p = path("e.nrrd");
  const std::string head = "NRRD0004\ntype: float\ndimension: 2\nsizes: 2 2\nendian: little\n";
  expect_error([&] { sv::load_nrrd(path("none.nrrd")); }, path("none.nrrd"),
               "cannot open: No such file or directory");

  write_bytes(p, "NRRX0004\n");
  expect_error([&] { sv::load_nrrd(p); }, p, "bad magic");
  write_bytes(p, "NRRD0004garbage\n");
  expect_error([&] { sv::load_nrrd(p); }, p, "bad magic line");

  write_bytes(p, head + "encoding: bzip2\n\n" + std::string(16, '\0'));
  expect_error([&] { sv::load_nrrd(p); }, p, "unsupported NRRD encoding 'bzip2'");

  write_bytes(p, head + "encoding: raw\n\n" + std::string(10, '\0'));
  expect_error([&] { sv::load_nrrd(p); }, p, "truncated: expected 16 data bytes, found 10");
  write_bytes(p, head + "encoding: raw\n\n" + std::string(17, '\0'));
  expect_error([&] { sv::load_nrrd(p); }, p, "trailing data: expected 16 data bytes, found 17");

  write_bytes(p, head + "encoding: gzip\n\n" + std::string(16, 'x'));
  expect_error([&] { sv::load_nrrd(p); }, p, "corrupt gzip data");

  // A real gzip stream cut short, and one holding too much.
  sv::save_nrrd(path("g.nrrd"), sample_array({40, 40}, 1, DType::F64, 3), DType::F64, false);
  std::string g = read_bytes(path("g.nrrd"));
  write_bytes(p, g.substr(0, g.size() - 200));
  expect_error([&] { sv::load_nrrd(p); }, p, "truncated");
  std::string more = g;
  more.replace(more.find("sizes: 40 40"), 12, "sizes: 40 39");
  write_bytes(p, more);
  expect_error([&] { sv::load_nrrd(p); }, p, "gzip data holds more than");

  // Enormous declared sizes against a few bytes of gzip: refused before allocating.
  write_bytes(p,
              "NRRD0004\ntype: double\ndimension: 3\nsizes: 100000 100000 100000\n"
              "endian: little\nencoding: gzip\n\n" +
                  g.substr(g.find("\n\n") + 2));
  expect_error([&] { sv::load_nrrd(p); }, p, "cannot hold");
  write_bytes(p,
              "NRRD0004\ntype: double\ndimension: 3\nsizes: 9999999999999999 100000 100000\n"
              "endian: little\nencoding: raw\n\n");
  expect_error([&] { sv::load_nrrd(p); }, p, "too large");

  write_bytes(p,
              "NRRD0004\ntype: float\ndimension: 2\nsizes: 5 2\nkinds: vector domain\n"
              "endian: little\nencoding: raw\n\n" +
                  std::string(40, '\0'));
  expect_error([&] { sv::load_nrrd(p); }, p, "channel axis (kind 'vector') has 5 entries");
  write_bytes(p,
              "NRRD0004\ntype: float\ndimension: 2\nsizes: 2 3\nkinds: domain RGB-color\n"
              "endian: little\nencoding: raw\n\n" +
                  std::string(24, '\0'));
  expect_error([&] { sv::load_nrrd(p); }, p, "only the first (fastest) axis");
  write_bytes(p, "NRRD0004\ntype: uchar\ndimension: 4\nsizes: 2 2 2 2\nencoding: raw\n\n" +
                     std::string(16, '\0'));
  expect_error([&] { sv::load_nrrd(p); }, p, "4 spatial axes");
  write_bytes(p, "NRRD0004\ntype: uchar\ndimension: 2\nsizes: 2 0\nencoding: raw\n\n");
  expect_error([&] { sv::load_nrrd(p); }, p, "has a zero-size axis");
  write_bytes(p, "NRRD0004\ntype: uchar\ndimension: 3\nsizes: 2 2\nencoding: raw\n\n");
  expect_error([&] { sv::load_nrrd(p); }, p, "'sizes' lists 2 values but 'dimension' is 3");
  write_bytes(p, "NRRD0004\ntype: block\ndimension: 1\nsizes: 2\nencoding: raw\n\n12345678");
  expect_error([&] { sv::load_nrrd(p); }, p, "unsupported NRRD type 'block'");
  write_bytes(p, "NRRD0004\ntype: float\ndimension: 1\nsizes: 2\nencoding: raw\n\n12345678");
  expect_error([&] { sv::load_nrrd(p); }, p, "lacks 'endian'");
  write_bytes(p,
              "NRRD0004\ntype: uchar\ndimension: 1\nsizes: 2\nencoding: raw\n"
              "byte skip: 4\n\n123456");
  expect_error([&] { sv::load_nrrd(p); }, p, "'byte skip: 4' is not supported");
  write_bytes(p, "NRRD0004\ntype: uchar\ndimension: 1\nsizes: 2\nencoding: raw\n");
  expect_error([&] { sv::load_nrrd(p); }, p, "no 'data file'");
  write_bytes(p, "NRRD0004\ntype: uchar\ndimension: 1\nthis line is wrong\n\n");
  expect_error([&] { sv::load_nrrd(p); }, p, "malformed NRRD header line");
  write_bytes(p, "NRRD0004\ntype: uchar\nsizes: 2\nencoding: raw\n\n12");
  expect_error([&] { sv::load_nrrd(p); }, p, "lacks 'dimension'");
  write_bytes(p, "NRRD0004\ntype: uchar\ndimension: 1\nsizes: 3\nencoding: ascii\n\n10 20");
  expect_error([&] { sv::load_nrrd(p); }, p, "expected 3 ascii values, found 2");
  write_bytes(p, "NRRD0004\ntype: uchar\ndimension: 1\nsizes: 3\nencoding: ascii\n\n1 2 x");
  expect_error([&] { sv::load_nrrd(p); }, p, "malformed ascii data at value 3");
  write_bytes(p,
              "NRRD0004\ntype: uchar\ndimension: 1\nsizes: 2\nencoding: raw\n"
              "data file: LIST\n");
  expect_error([&] { sv::load_nrrd(p); }, p, "multiple data files");

  // A missing detached file: the message names the header and the data file.
  const std::string h = path("h.nhdr");
  write_bytes(h,
              "NRRD0004\ntype: uchar\ndimension: 1\nsizes: 2\nencoding: raw\n"
              "data file: gone.raw\n");
  expect_error([&] { sv::load_nrrd(h); }, h, "gone.raw: cannot open: No such file");
  // Errors in detached data name the header and the data file.
  write_bytes(path("short.raw"), "1");
  write_bytes(h,
              "NRRD0004\ntype: uchar\ndimension: 1\nsizes: 2\nencoding: raw\n"
              "data file: short.raw\n");
  expect_error([&] { sv::load_nrrd(h); }, h,
               "detached data file: " + path("short.raw") + ": truncated");
}

// ---------------------------------------------------------------------------------- any

TEST_F(IoTest, IoAnyDispatchesByExtension) {
  ArrayD rgb({6, 5}, 3);
  for (std::size_t i = 0; i < rgb.size(); ++i) rgb[i] = static_cast<double>(i % 256);
  sv::save_any(path("a.PNG"), rgb, DType::U8, true);
  expect_same_bits(sv::load_any(path("a.PNG"), false).array, rgb);
  sv::save_any(path("b.png"), rgb, DType::U16, true);
  EXPECT_EQ(sv::load_any(path("b.png"), false).dtype, DType::U16);
  sv::save_any(path("c.Jpg"), rgb, DType::U8, true);
  EXPECT_EQ(sv::load_any(path("c.Jpg"), false).array.channels(), 3u);

  ArrayD vol = sample_array({3, 4, 5}, 2, DType::F64, 11);
  sv::save_any(path("v.NPY"), vol, DType::F64, true);
  expect_same_bits(sv::load_any(path("v.NPY"), true).array, vol);
  sv::save_any(path("v.nrrd"), vol, DType::F64, true);
  const sv::Loaded n = sv::load_any(path("v.nrrd"), false);  // NRRD states its channel axis
  EXPECT_TRUE(n.channel_axis);
  expect_same_bits(n.array, vol);

  const std::string x = path("thing.xyz");
  expect_error([&] { sv::load_any(x, false); }, x,
               "unsupported file extension '.xyz' (expected .png, .jpg, .jpeg, .bmp, .gif, .hdr, "
               ".pgm, .ppm, .pnm, .tga, .npy, .nrrd, .nhdr, .nii, .nii.gz, .tif, .tiff or .dcm; "
               "or a folder or glob pattern of slices)");
  expect_error([&] { sv::save_any(x, vol, DType::F64, false); }, x,
               "unsupported file extension '.xyz'");
  expect_error([&] { sv::load_any(path("noext"), false); }, path("noext"), "no file extension");
  expect_error([&] { sv::load_any(path(".npy"), false); }, path(".npy"), "no file extension");
  EXPECT_FALSE(fs::exists(x));
}

// ---------------------------------------------------------------------------------- atomic

TEST_F(IoTest, IoAtomicFailedSavesLeaveTargetUntouched) {
  const std::string original = "original bytes that must survive\n";
  ArrayD rgba({4, 4}, 4);
  ArrayD grey({4, 4});
  struct Case {
    std::string name;
    std::function<void(const std::string&)> save;
  };
  const std::vector<Case> cases = {
      {"t.jpg", [&](const std::string& p) { sv::save_any(p, grey, DType::U16, false); }},
      {"t.jpeg", [&](const std::string& p) { sv::save_image(p, rgba, 8); }},
      {"t.xyz", [&](const std::string& p) { sv::save_any(p, grey, DType::F32, false); }},
      {"t.png",
       [&](const std::string& p) {
         sv::save_image(p, ArrayD({2, 2, 2}), 8);
       }},
      {"t.npy", [&](const std::string& p) { sv::save_npy(p, ArrayD(), DType::F32, false); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string p = path(c.name);
    write_bytes(p, original);
    const auto before = listing();
    EXPECT_THROW(c.save(p), sv::Error);
    EXPECT_EQ(read_bytes(p), original);
    EXPECT_EQ(listing(), before);
  }

  // A directory that does not exist: nothing is created anywhere.
  const std::string nowhere = path("no/such/dir/out.npy");
  const auto before = listing();
  expect_error([&] { sv::save_npy(nowhere, grey, DType::F32, false); }, nowhere,
               "cannot create temporary file");
  EXPECT_EQ(listing(), before);

  // The rename fails after the temporary file was written (the target is a non-empty
  // directory): the temporary file is removed and the directory is untouched.
  fs::create_directories(dir_ / "target.npy");
  write_bytes(path("target.npy/inside"), original);
  const auto before2 = listing();
  expect_error([&] { sv::save_npy(path("target.npy"), grey, DType::F32, false); },
               path("target.npy"), "cannot replace the file");
  EXPECT_EQ(listing(), before2);
  EXPECT_EQ(read_bytes(path("target.npy/inside")), original);
  expect_error([&] { sv::load_npy(path("target.npy"), false); }, path("target.npy"),
               "cannot open: Is a directory");

  // A successful save replaces the file and leaves no temporary behind.
  const std::string ok = path("ok.npy");
  write_bytes(ok, original);
  sv::save_npy(ok, grey, DType::F32, false);
  EXPECT_NE(read_bytes(ok), original);
  for (const std::string& name : listing())
    EXPECT_EQ(name.find(".tmp-"), std::string::npos) << "leftover " << name;
}

// ---------------------------------------------------------------------------------- robustness

// Truncations and random byte mutations of valid files must load or throw sv::Error, never
// crash (run under the sanitizers in Debug builds).
TEST_F(IoTest, IoRobustAgainstCorruptFiles) {
  ArrayD a({12, 10}, 3);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i % 53) / 52.0;
  sv::save_npy(path("s.npy"), a, DType::F32, true);
  sv::save_nrrd(path("s.nrrd"), a, DType::U16, true, {1.0, 2.0});
  sv::save_image(path("s.png"), a, 8);
  sv::save_image(path("s16.png"), a, 16);
  sv::save_image(path("s.jpg"), a, 8);
  std::mt19937 rng(1234);
  for (const char* name : {"s.npy", "s.nrrd", "s.png", "s16.png", "s.jpg"}) {
    SCOPED_TRACE(name);
    const std::string good = read_bytes(path(name));
    const std::string p = path(std::string("bad-") + name);
    std::vector<std::string> variants;
    for (std::size_t len = 0; len < good.size(); len += 1 + good.size() / 60)
      variants.push_back(good.substr(0, len));
    for (int k = 0; k < 150; ++k) {
      std::string m = good;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) m[rng() % m.size()] = static_cast<char>(rng() & 0xff);
      variants.push_back(m);
    }
    for (const std::string& v : variants) {
      write_bytes(p, v);
      try {
        sv::load_any(p, true);
      } catch (const sv::Error& e) {
        EXPECT_EQ(std::string(e.what()).rfind(p + ": ", 0), 0u) << e.what();
      }
    }
  }
}

// ---------------------------------------------------------------------------------- numpy

#ifndef SPLINEVIEW_PYTHON
#define SPLINEVIEW_PYTHON "/usr/bin/python3"
#endif

TEST_F(IoTest, IoNumpyInterop) {
  const std::string py = SPLINEVIEW_PYTHON;
  if (std::system((py + " -c 'import numpy' >/dev/null 2>&1").c_str()) != 0)
    GTEST_SKIP() << py << " with numpy is not available";

  // numpy writes; we read. Values follow formulas that C++ reproduces bit for bit.
  const std::string writer = path("write.py");
  write_bytes(writer,
              "import sys, numpy as np\n"
              "d = sys.argv[1]\n"
              "def ar(shape):\n"
              "    return np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)\n"
              "np.save(d + '/f4.npy', (ar((3, 4, 5)) * 0.25 - 3).astype('<f4'))\n"
              "np.save(d + '/f8.npy', ar((7,)) / 7.0)\n"
              "np.save(d + '/u1.npy', (ar((4, 5, 3)) % 256).astype(np.uint8))\n"
              "np.save(d + '/u2.npy', ((ar((2, 3, 4, 2)) * 257) % 65536).astype('<u2'))\n"
              "for v in [(2, 0), (3, 0)]:\n"
              "    with open(d + '/v%d.npy' % v[0], 'wb') as f:\n"
              "        np.lib.format.write_array(f, ar((2, 3)) / 7.0, version=v)\n");
  ASSERT_EQ(std::system((py + " " + writer + " " + dir_.string()).c_str()), 0);

  auto check = [&](const std::string& name, bool channel_axis, std::vector<std::size_t> dims,
                   std::size_t channels, DType dtype, const std::function<double(double)>& f) {
    SCOPED_TRACE(name);
    const sv::Loaded l = sv::load_npy(path(name), channel_axis);
    EXPECT_EQ(l.dtype, dtype);
    ASSERT_EQ(l.array.dims(), dims);
    ASSERT_EQ(l.array.channels(), channels);
    for (std::size_t i = 0; i < l.array.size(); ++i)
      ASSERT_EQ(l.array[i], f(static_cast<double>(i))) << "element " << i;
  };
  check("f4.npy", false, {3, 4, 5}, 1, DType::F32,
        [](double i) { return static_cast<double>(static_cast<float>(i * 0.25 - 3)); });
  check("f8.npy", false, {7}, 1, DType::F64, [](double i) { return i / 7.0; });
  check("u1.npy", true, {4, 5}, 3, DType::U8, [](double i) { return std::fmod(i, 256.0); });
  check("u2.npy", true, {2, 3, 4}, 2, DType::U16,
        [](double i) { return std::fmod(i * 257, 65536.0); });
  check("v2.npy", false, {2, 3}, 1, DType::F64, [](double i) { return i / 7.0; });
  check("v3.npy", false, {2, 3}, 1, DType::F64, [](double i) { return i / 7.0; });

  // We write; numpy reads and checks dtype, shape and values.
  auto fill = [](std::vector<std::size_t> dims, std::size_t c,
                 const std::function<double(double)>& f) {
    ArrayD a(std::move(dims), c);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = f(static_cast<double>(i));
    return a;
  };
  sv::save_npy(path("o_f4.npy"), fill({3, 4, 5}, 1, [](double i) { return i * 0.25 - 3; }),
               DType::F32, false);
  sv::save_npy(path("o_f8.npy"), fill({7}, 1, [](double i) { return i / 7.0; }), DType::F64, false);
  sv::save_npy(path("o_u1.npy"), fill({4, 5}, 3, [](double i) { return std::fmod(i, 256.0); }),
               DType::U8, true);
  sv::save_npy(path("o_u2.npy"),
               fill({2, 3, 4}, 2, [](double i) { return std::fmod(i * 257, 65536.0); }), DType::U16,
               true);
  sv::save_npy(path("o_c1.npy"), fill({2, 3}, 1, [](double i) { return i; }), DType::F64, true);
  const std::string reader = path("read.py");
  write_bytes(reader,
              "import sys, numpy as np\n"
              "d = sys.argv[1]\n"
              "def ar(shape):\n"
              "    return np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)\n"
              "cases = [('o_f4', '<f4', ar((3, 4, 5)) * 0.25 - 3),\n"
              "         ('o_f8', '<f8', ar((7,)) / 7.0),\n"
              "         ('o_u1', '|u1', ar((4, 5, 3)) % 256),\n"
              "         ('o_u2', '<u2', (ar((2, 3, 4, 2)) * 257) % 65536),\n"
              "         ('o_c1', '<f8', ar((2, 3, 1)))]\n"
              "for name, dt, want in cases:\n"
              "    a = np.load(d + '/' + name + '.npy')\n"
              "    assert a.dtype.str == dt, (name, a.dtype.str)\n"
              "    assert a.shape == want.shape, (name, a.shape)\n"
              "    assert a.flags['C_CONTIGUOUS']\n"
              "    assert np.array_equal(a, want.astype(dt)), name\n"
              "print('numpy read all files')\n");
  EXPECT_EQ(std::system((py + " " + reader + " " + dir_.string()).c_str()), 0);
}

}  // namespace
