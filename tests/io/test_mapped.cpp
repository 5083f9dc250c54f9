// Memory-mapped volumes (splineview/mapped.h): for every mappable format, several dtypes and
// both byte orders, open_mapped + read_slices gives load_any's values exactly (in slabs of any
// size, as double and as float), and the same dims, dtype, spacing and geometry; files whose
// header claims more or fewer samples than they hold are refused naming the file; compressed
// and other formats are NotMappable with a sentence. create_mapped_output + commit writes what
// save_any writes for a float32 array (.npy and .nii byte for byte, NRRD the same header fields
// with raw data), and an unfinished output leaves neither OUT nor a temporary.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "splineview/error.h"
#include "splineview/finite.h"
#include "splineview/input.h"
#include "splineview/io.h"
#include "splineview/mapped.h"
#include "temp_dir_test.h"

namespace {

using svtest::io::read_bytes;
using svtest::io::write_bytes;

using sv::ArrayD;
using sv::DType;

class Mapped : public svtest::TempDirTest {
 protected:
  // The files in the test folder (to see that nothing was left behind).
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir_))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

// `size` bytes of `v` (its low bytes), little or big endian.
std::string bytes_of(std::uint64_t v, std::size_t size, bool big_endian) {
  std::string s(size, '\0');
  for (std::size_t i = 0; i < size; ++i)
    s[big_endian ? size - 1 - i : i] = static_cast<char>((v >> (8 * i)) & 0xffu);
  return s;
}

template <class T>
std::uint64_t bits_of(T v) {
  std::uint64_t u = 0;
  std::memcpy(&u, &v, sizeof v);
  return u;
}

// One stored type: how to write value i of a test pattern, and the value the loaders give.
struct Type {
  const char* npy;   // numpy descr without the byte order ("i2")
  const char* nrrd;  // NRRD type ("short"), nullptr where NRRD has none
  int nifti;         // NIfTI datatype code, 0 where NIfTI has none
  std::size_t size;
  std::function<std::uint64_t(std::size_t)> stored;  // the bits of value i
  std::function<double(std::size_t)> value;          // value i as loaded
};

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<Type> types() {
  auto pick = [](std::size_t i, const std::vector<double>& v) { return v[(i * 7 + 3) % v.size()]; };
  const std::vector<double> u8{0, 1, 127, 128, 200, 255}, i8{-128, -1, 0, 1, 5, 127},
      u16{0, 1, 258, 32768, 65535}, i16{-32768, -1, 0, 1, 258, 32767},
      u32{0, 1, 16909060, 4294967295.0}, i32{-2147483648.0, -1, 0, 16909060, 2147483647.0},
      i64{-9007199254740992.0, -1, 0, 12345678901.0, 9007199254740992.0},
      u64{0, 1, 9007199254740992.0, 18446744073709549568.0},
      f16{0, -2, 0.5, 65504, -0.000060975551605224609375},
      f32{-1.5, 0, 0.1f, 3.4e38f, -std::numeric_limits<float>::denorm_min(), 1e-30f, kInf},
      f64{-1.5, 0, 0.1, 1e300, std::numeric_limits<double>::denorm_min(), -7.25, kNaN, -kInf};
  std::vector<Type> t;
  t.push_back({"b1", nullptr, 0, 1, [](std::size_t i) { return (i % 3) ? 1u + i % 5 : 0u; },
               [](std::size_t i) { return (i % 3) ? 1.0 : 0.0; }});
  auto int_type = [&](const char* npy, const char* nrrd, int nifti, std::size_t size,
                      std::vector<double> v, bool is_signed) {
    t.push_back({npy, nrrd, nifti, size,
                 [=](std::size_t i) {
                   const double x = pick(i, v);
                   return is_signed ? static_cast<std::uint64_t>(static_cast<std::int64_t>(x))
                                    : static_cast<std::uint64_t>(x);
                 },
                 [=](std::size_t i) { return pick(i, v); }});
  };
  int_type("u1", "uchar", 2, 1, u8, false);
  int_type("i1", "signed char", 256, 1, i8, true);
  int_type("u2", "ushort", 512, 2, u16, false);
  int_type("i2", "short", 4, 2, i16, true);
  int_type("u4", "uint", 768, 4, u32, false);
  int_type("i4", "int", 8, 4, i32, true);
  int_type("i8", "long long", 0, 8, i64, true);
  int_type("u8", "unsigned long long", 0, 8, u64, false);
  t.push_back({"f2", nullptr, 0, 2,
               [=](std::size_t i) {
                 const double x = pick(i, f16);  // exact halves: sign, exponent, mantissa
                 if (x == 0) return std::uint64_t{0};
                 if (x == -2) return std::uint64_t{0xc000};
                 if (x == 0.5) return std::uint64_t{0x3800};
                 if (x == 65504) return std::uint64_t{0x7bff};
                 return std::uint64_t{0x83ff};  // the largest negative subnormal
               },
               [=](std::size_t i) { return pick(i, f16); }});
  t.push_back(
      {"f4", "float", 16, 4,
       [=](std::size_t i) { return bits_of(static_cast<float>(pick(i, f32))); },
       [=](std::size_t i) { return static_cast<double>(static_cast<float>(pick(i, f32))); }});
  t.push_back({"f8", "double", 64, 8, [=](std::size_t i) { return bits_of(pick(i, f64)); },
               [=](std::size_t i) { return pick(i, f64); }});
  return t;
}

std::string encode(const Type& t, std::size_t n, bool big_endian) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += bytes_of(t.stored(i), t.size, big_endian);
  return s;
}

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

std::string shape_text(const std::vector<std::size_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// The loader's double rounded to float as the library does it (beyond the range: +-inf).
float to_float(double v) {
  constexpr double kOverflow = 0x1.ffffffp+127;
  if (v >= kOverflow) return std::numeric_limits<float>::infinity();
  if (v <= -kOverflow) return -std::numeric_limits<float>::infinity();
  return static_cast<float>(v);
}

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b));
}

void expect_same_geometry(const sv::Geometry& a, const sv::Geometry& b, const std::string& what) {
  EXPECT_EQ(a.source, b.source) << what;
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) EXPECT_EQ(a.affine[r][c], b.affine[r][c]) << what;
}

// load_any and open_mapped agree on `p`: metadata, and every value in slabs of 1, 2, 3 and all
// slices, as double (bit for bit) and as float. Returns the number of values compared.
std::size_t expect_same(const std::string& p, bool channel_axis,
                        const std::optional<sv::RawSpec>& raw = std::nullopt) {
  const sv::Loaded l = raw ? sv::load_any(p, channel_axis, *raw) : sv::load_any(p, channel_axis);
  const sv::MappedVolume m = sv::open_mapped(p, channel_axis, raw);
  EXPECT_EQ(m.dims(), l.array.dims()) << p;
  EXPECT_EQ(m.channels(), l.array.channels()) << p;
  EXPECT_EQ(m.channel_axis(), l.channel_axis) << p;
  EXPECT_EQ(m.dtype(), l.dtype) << p;
  EXPECT_EQ(m.spacing(), l.spacing) << p;
  expect_same_geometry(m.geometry(), l.geometry, p);
  EXPECT_EQ(m.size(), l.array.size()) << p;
  if (m.dims() != l.array.dims() || m.channels() != l.array.channels()) return 0;
  const std::size_t slices = m.slices(), per = m.slice_values();
  for (std::size_t slab : {std::size_t{1}, std::size_t{2}, std::size_t{3}, slices}) {
    std::vector<double> d(slab * per);
    std::vector<float> f(slab * per);
    for (std::size_t first = 0; first < slices; first += slab) {
      const std::size_t count = std::min(slab, slices - first);
      m.read_slices(first, count, d.data());
      const sv::NonFinite nf = m.read_slices(first, count, f.data());
      const sv::NonFinite want_nf = sv::scan_nonfinite(&l.array[first * per], count * per);
      EXPECT_EQ(nf.count, want_nf.count) << p;
      if (nf.count && want_nf.count) {
        EXPECT_EQ(nf.first, want_nf.first) << p;
        EXPECT_TRUE(same_bits(nf.first_value, want_nf.first_value)) << p;
      }
      for (std::size_t i = 0; i < count * per; ++i) {
        const double want = l.array[first * per + i];
        if (!same_bits(d[i], want)) {
          ADD_FAILURE() << p << ": value " << first * per + i << " is " << d[i] << ", the loader "
                        << "gives " << want << " (slab " << slab << ")";
          return 0;
        }
        const float fw = to_float(want);
        if (!(f[i] == fw || (std::isnan(f[i]) && std::isnan(fw)))) {
          ADD_FAILURE() << p << ": float value " << first * per + i << " is " << f[i]
                        << ", expected " << fw;
          return 0;
        }
      }
      m.release_slices(first, count);
    }
  }
  // Boxes: the whole array, the interior, one index along each axis (a thin, "sagittal" box),
  // as the loader's values converted to float.
  const std::vector<std::size_t>& dims = m.dims();
  const std::size_t r = dims.size(), ch = m.channels();
  std::vector<std::pair<std::vector<std::size_t>, std::vector<std::size_t>>> boxes;
  boxes.push_back({std::vector<std::size_t>(r, 0), dims});
  std::vector<std::size_t> ilo(r), ihi(r);
  for (std::size_t d = 0; d < r; ++d) {
    ilo[d] = dims[d] > 2 ? 1 : 0;
    ihi[d] = dims[d] > 2 ? dims[d] - 1 : dims[d];
  }
  boxes.push_back({ilo, ihi});
  for (std::size_t a = 0; a < r; ++a) {
    std::vector<std::size_t> lo(r, 0), hi = dims;
    lo[a] = dims[a] / 2;
    hi[a] = lo[a] + 1;
    boxes.push_back({lo, hi});
  }
  for (const auto& [lo, hi] : boxes) {
    std::size_t n = ch;
    for (std::size_t d = 0; d < r; ++d) n *= hi[d] - lo[d];
    std::vector<float> got(n, -12345.0f);
    m.read_box(lo, hi, got.data());
    std::vector<std::size_t> idx = lo;
    for (std::size_t k = 0; k < n; k += ch) {
      std::size_t flat = 0;
      for (std::size_t d = 0; d < r; ++d) flat = flat * dims[d] + idx[d];
      for (std::size_t c = 0; c < ch; ++c) {
        const float fw = to_float(l.array[flat * ch + c]);
        const float g = got[k + c];
        if (!(g == fw || (std::isnan(g) && std::isnan(fw)))) {
          ADD_FAILURE() << p << ": read_box value " << k + c << " is " << g << ", expected " << fw;
          return 0;
        }
      }
      for (std::size_t d = r; d-- > 0;) {
        if (++idx[d] < hi[d]) break;
        idx[d] = lo[d];
      }
    }
  }
  return m.size();
}

// Asserts that `fn` throws sv::Error (not NotMappable) whose message starts with "<p>: " and
// contains `part`.
void expect_refused(const std::string& p, const std::string& part,
                    const std::function<void()>& fn) {
  try {
    fn();
    ADD_FAILURE() << "no error for " << p << " (expected '" << part << "')";
  } catch (const sv::NotMappable& e) {
    ADD_FAILURE() << p << ": NotMappable where an error was expected: " << e.what();
  } catch (const sv::Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(p + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find(part), std::string::npos) << msg << "\n(expected '" << part << "')";
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

void expect_not_mappable(const std::string& p, const std::string& part, bool channel_axis = false,
                         const std::optional<sv::RawSpec>& raw = std::nullopt) {
  try {
    sv::open_mapped(p, channel_axis, raw);
    ADD_FAILURE() << p << " was mapped (expected NotMappable: " << part << ")";
  } catch (const sv::NotMappable& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(p + ": cannot be mapped: ", 0), 0u) << msg;
    EXPECT_NE(msg.find(part), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

// ------------------------------------------------------------------------------------- .npy

TEST_F(Mapped, NpyEveryDtypeByteOrderAndMemoryOrder) {
  std::size_t compared = 0;
  for (const Type& t : types()) {
    for (bool be : {false, true}) {
      if (t.size == 1 && be) continue;
      for (bool fortran : {false, true}) {
        for (const auto& [shape, channel_axis] :
             std::vector<std::pair<std::vector<std::size_t>, bool>>{{{7}, false},
                                                                    {{5, 6}, false},
                                                                    {{4, 3, 5}, false},
                                                                    {{4, 3, 2}, true},
                                                                    {{3, 4, 5, 3}, true}}) {
          std::size_t n = 1;
          for (std::size_t d : shape) n *= d;
          const std::string descr = std::string(t.size == 1 ? "|" : be ? ">" : "<") + t.npy;
          const std::string p = path("a.npy");
          write_bytes(p, npy_file(descr, fortran, shape_text(shape), encode(t, n, be)));
          SCOPED_TRACE(descr + (fortran ? " fortran " : " C ") + shape_text(shape));
          compared += expect_same(p, channel_axis);
        }
      }
    }
  }
  EXPECT_GT(compared, 10000u);
}

TEST_F(Mapped, NativeFloat32IsUsedInPlace) {
  const std::string p = path("f.npy");
  const Type f4 = types()[10];
  ASSERT_STREQ(f4.npy, "f4");
  write_bytes(p, npy_file("<f4", false, "(3, 4)", encode(f4, 12, false)));
  const sv::MappedVolume m = sv::open_mapped(p, false);
  ASSERT_NE(m.native_f32(), nullptr);
  for (std::size_t i = 0; i < 12; ++i)
    EXPECT_EQ(m.native_f32()[i], static_cast<float>(f4.value(i)));
  EXPECT_EQ(m.data_offset() % 64, 0u);
  write_bytes(p, npy_file(">f4", false, "(3, 4)", encode(f4, 12, true)));
  EXPECT_EQ(sv::open_mapped(p, false).native_f32(), nullptr);  // big-endian: converted
  write_bytes(p, npy_file("<f4", true, "(3, 4)", encode(f4, 12, false)));
  EXPECT_EQ(sv::open_mapped(p, false).native_f32(), nullptr);  // Fortran order: gathered
}

TEST_F(Mapped, AFileTruncatedWhileMappedIsAnErrorNotACrash) {
  // Another process truncates the file under the map: the pages past its new end fault
  // (SIGBUS). Every read path (the native float32 copy, the decoding of other types, the
  // Fortran-order gather) turns that into one sentence naming the file; the process goes on.
  const Type f4 = types()[10];
  struct Case {
    const char* descr;
    bool fortran, big_endian;
  };
  int checked = 0;
  for (const Case& c :
       {Case{"<f4", false, false}, Case{">f4", false, true}, Case{"<f4", true, false}}) {
    const std::string p = path("t.npy");
    write_bytes(p,
                npy_file(c.descr, c.fortran, "(4, 64, 64)", encode(f4, 4 * 64 * 64, c.big_endian)));
    const sv::MappedVolume m = sv::open_mapped(p, false);
    std::vector<float> f(4 * 64 * 64);
    std::vector<double> d(4 * 64 * 64);
    m.read_slices(0, 4, f.data());  // whole: fine
    std::filesystem::resize_file(p, 0);
    for (int kind = 0; kind < 2; ++kind) {
      try {
        if (kind == 0)
          m.read_slices(0, 4, f.data());
        else
          m.read_slices(0, 4, d.data());
        ADD_FAILURE() << c.descr << (c.fortran ? " Fortran" : "") << ": no error";
      } catch (const sv::Error& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("t.npy"), std::string::npos) << msg;
        EXPECT_NE(msg.find("shorter"), std::string::npos) << msg;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 6);
  // The handler stays out of the way of faults that are not a guarded read's: a read of a
  // whole, untouched file still works afterwards.
  const std::string q = path("ok.npy");
  write_bytes(q, npy_file("<f4", false, "(2, 3)", encode(f4, 6, false)));
  std::vector<float> g(6);
  sv::open_mapped(q, false).read_slices(0, 2, g.data());
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(g[i], static_cast<float>(f4.value(i)));
}

TEST_F(Mapped, NativeFloatCopiesAreGuardedAndBounded) {
  // copy_native_f32: what the CUDA resampling reads a native float32 input through. The same
  // values as the map; a range outside the samples is refused; after the file is truncated
  // under the map, one sentence naming the file instead of a SIGBUS.
  const Type f4 = types()[10];
  const std::string p = path("n.npy");
  write_bytes(p, npy_file("<f4", false, "(4, 64, 64)", encode(f4, 4 * 64 * 64, false)));
  const sv::MappedVolume m = sv::open_mapped(p, false);
  const float* s = m.native_f32();
  ASSERT_NE(s, nullptr);
  std::vector<float> got(100);
  m.copy_native_f32(s + 4000, 100, got.data());
  for (std::size_t i = 0; i < 100; ++i) EXPECT_EQ(got[i], static_cast<float>(f4.value(4000 + i)));
  m.copy_native_f32(s + m.size() - 100, 100, got.data());  // the last samples
  EXPECT_THROW(m.copy_native_f32(s + m.size() - 99, 100, got.data()), std::invalid_argument);
  EXPECT_THROW(m.copy_native_f32(s - 1, 1, got.data()), std::invalid_argument);
  EXPECT_THROW(m.copy_native_f32(s, m.size() + 1, got.data()), std::invalid_argument);
  std::filesystem::resize_file(p, 0);
  try {
    m.copy_native_f32(s + 8000, 100, got.data());
    ADD_FAILURE() << "no error after the truncation";
  } catch (const sv::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("n.npy"), std::string::npos) << msg;
    EXPECT_NE(msg.find("shorter"), std::string::npos) << msg;
  }
  // Not native float32: no samples to copy from.
  const std::string q = path("b.npy");
  write_bytes(q, npy_file(">f4", false, "(2, 3)", encode(f4, 6, true)));
  const sv::MappedVolume b = sv::open_mapped(q, false);
  EXPECT_EQ(b.native_f32(), nullptr);
  EXPECT_THROW(b.copy_native_f32(s, 1, got.data()), std::invalid_argument);
}

TEST_F(Mapped, NpyInexactInt64HasTheLoadersMessage) {
  for (bool fortran : {false, true}) {
    const std::string p = path("big.npy");
    std::string data;
    for (std::uint64_t v : {1ull, 2ull, 3ull, 4ull, 9007199254740993ull, 6ull})
      data += bytes_of(v, 8, false);
    write_bytes(p, npy_file("<i8", fortran, "(3, 2)", data));
    std::string loader;
    try {
      sv::load_any(p, false);
    } catch (const sv::Error& e) {
      loader = e.what();
    }
    ASSERT_NE(loader.find("9007199254740993"), std::string::npos) << loader;
    const sv::MappedVolume m = sv::open_mapped(p, false);  // the header is fine
    std::vector<double> d(6);
    std::vector<float> f(6);
    for (int as_float = 0; as_float < 2; ++as_float) {
      try {
        if (as_float)
          m.read_slices(0, 3, f.data());
        else
          m.read_slices(0, 3, d.data());
        ADD_FAILURE() << "read_slices accepted an inexact int64";
      } catch (const sv::Error& e) {
        EXPECT_EQ(std::string(e.what()), loader);
      }
    }
    // The slices before it read fine.
    const std::size_t clean = fortran ? 1 : 2;  // Fortran: element (1, 1) sits in slice 1
    EXPECT_NO_THROW(m.read_slices(0, clean, d.data()));
  }
}

TEST_F(Mapped, NpyRefusesSizesThatDoNotMatchTheFile) {
  const std::string p = path("bad.npy");
  const std::string data(4 * 24, '\0');
  write_bytes(p, npy_file("<f4", false, "(2, 3, 4)", data.substr(4)));
  expect_refused(p, "truncated: expected 96 data bytes, found 92",
                 [&] { sv::open_mapped(p, false); });
  write_bytes(p, npy_file("<f4", false, "(2, 3, 4)", data + "x"));
  expect_refused(p, "trailing data", [&] { sv::open_mapped(p, false); });
  // A header that claims terabytes: refused at once, nothing allocated or mapped.
  write_bytes(p, npy_file("<f8", false, "(100000, 100000, 100000)", data));
  expect_refused(p, "truncated: expected 8000000000000000 data bytes",
                 [&] { sv::open_mapped(p, false); });
  write_bytes(p, npy_file("<f8", false, "(4294967296, 4294967296, 4294967296)", data));
  expect_refused(p, "is too large", [&] { sv::open_mapped(p, false); });
  // A header cut off, a bad magic, a bad dtype: the loader's messages.
  write_bytes(p, npy_file("<f4", false, "(2, 3, 4)", data).substr(0, 40));
  expect_refused(p, "truncated .npy header", [&] { sv::open_mapped(p, false); });
  write_bytes(p, "NUMPY");
  expect_refused(p, "not a .npy file", [&] { sv::open_mapped(p, false); });
  write_bytes(p, npy_file("<c8", false, "(2, 3, 4)", data));
  expect_refused(p, "complex numbers", [&] { sv::open_mapped(p, false); });
  write_bytes(p, npy_file("<f4", false, "(2, 3, 4, 5, 6)", data));
  expect_refused(p, "spatial axes", [&] { sv::open_mapped(p, false); });
  expect_refused(path("missing.npy"), "cannot open",
                 [&] { sv::open_mapped(path("missing.npy"), false); });
}

// ------------------------------------------------------------------------------------- NRRD

std::string nrrd_header(const Type& t, const std::string& sizes, int dimension, bool be,
                        const std::string& encoding, const std::string& extra) {
  return "NRRD0004\ntype: " + std::string(t.nrrd) + "\ndimension: " + std::to_string(dimension) +
         "\nsizes: " + sizes + "\nendian: " + (be ? "big" : "little") + "\nencoding: " + encoding +
         "\n" + extra;
}

TEST_F(Mapped, NrrdRawAttachedAndDetached) {
  std::size_t compared = 0;
  const std::vector<std::pair<std::string, std::string>> geometries = {
      {"", ""},
      {"spacings: 0.5 0.75 2.5\n", ""},
      {"space: left-posterior-superior\nspace directions: (0.5,0,0) (0,0.75,0.1) (0,0,2.5)\n"
       "space origin: (10,-20,30)\n",
       ""},
      {"space: RAS\nspace directions: (0,0.5,0) (0.75,0,0) (0,0,-2)\n", ""},
  };
  for (const Type& t : types()) {
    if (!t.nrrd) continue;
    for (bool be : {false, true}) {
      for (const auto& g : geometries) {
        const std::string head = nrrd_header(t, "5 4 3", 3, be, "raw", g.first);
        const std::string data = encode(t, 60, be);
        const std::string p = path("a.nrrd");
        write_bytes(p, head + "\n" + data);
        SCOPED_TRACE(std::string(t.nrrd) + (be ? " be " : " le ") + g.first);
        compared += expect_same(p, false);
        const std::string h = path("d.nhdr");
        write_bytes(path("d.raw"), data);
        write_bytes(h, head + "data file: d.raw\n");
        compared += expect_same(h, false);
      }
      // A channel axis (kinds), 2-D.
      const std::string p = path("c.nrrd");
      write_bytes(p, nrrd_header(t, "3 5 4", 3, be, "raw", "kinds: RGB-color domain domain\n") +
                         "\n" + encode(t, 60, be));
      compared += expect_same(p, false);
      EXPECT_EQ(sv::open_mapped(p, false).channels(), 3u);
    }
  }
  EXPECT_GT(compared, 3000u);
}

TEST_F(Mapped, NrrdRefusals) {
  const Type f4 = types()[10];
  const std::string head = nrrd_header(f4, "5 4 3", 3, false, "raw", "");
  const std::string data = encode(f4, 60, false);
  const std::string p = path("a.nrrd");
  write_bytes(p, head + "\n" + data.substr(3));
  expect_refused(p, "truncated: expected 240 data bytes, found 237",
                 [&] { sv::open_mapped(p, false); });
  write_bytes(p, head + "\n" + data + "xx");
  expect_refused(p, "trailing data", [&] { sv::open_mapped(p, false); });
  write_bytes(p, nrrd_header(f4, "100000 100000 100000", 3, false, "raw", "") + "\n" + data);
  expect_refused(p, "truncated: expected 4000000000000000 data bytes",
                 [&] { sv::open_mapped(p, false); });
  write_bytes(p, nrrd_header(f4, "5 4", 3, false, "raw", "") + "\n" + data);
  expect_refused(p, "'sizes' lists 2 values", [&] { sv::open_mapped(p, false); });
  // Detached: the message names the header and the data file.
  const std::string h = path("d.nhdr");
  write_bytes(path("d.raw"), data.substr(8));
  write_bytes(h, head + "data file: d.raw\n");
  expect_refused(h, "detached data file: " + path("d.raw") + ": truncated",
                 [&] { sv::open_mapped(h, false); });
  write_bytes(h, head + "data file: nowhere.raw\n");
  expect_refused(h, "detached data file: ", [&] { sv::open_mapped(h, false); });
  // Compressed and text data: valid, but read into memory.
  write_bytes(p, nrrd_header(f4, "5 4 3", 3, false, "gzip", "") + "\n" + data);
  expect_not_mappable(p, "gzip-compressed");
  write_bytes(p, nrrd_header(f4, "2", 1, false, "ascii", "") + "\n1 2\n");
  expect_not_mappable(p, "ascii");
}

// ------------------------------------------------------------------------------------ NIfTI

// A NIfTI-1 file: 348-byte header at the offsets of the standard, vox_offset 352; oriented by
// an sform (sform_code > 0), a qform (0) or not at all (< 0).
std::string nifti_file(const std::vector<int>& dim, int datatype, int bitpix, bool be, float slope,
                       float inter, const std::string& data, int sform_code = 0) {
  std::string h(352, '\0');
  auto put = [&](std::size_t off, std::uint64_t v, std::size_t n) {
    h.replace(off, n, bytes_of(v, n, be));
  };
  auto putf = [&](std::size_t off, float v) { put(off, bits_of(v), 4); };
  put(0, 348, 4);
  put(40, static_cast<std::uint16_t>(dim.size()), 2);
  for (std::size_t i = 0; i < 7; ++i) put(42 + 2 * i, i < dim.size() ? dim[i] : 1, 2);
  put(70, static_cast<std::uint16_t>(datatype), 2);
  put(72, static_cast<std::uint16_t>(bitpix), 2);
  putf(76, -1.0f);  // qfac
  const float pixdim[3] = {0.5f, 0.75f, 2.5f};
  for (std::size_t i = 0; i < 3; ++i) putf(80 + 4 * i, pixdim[i]);
  putf(108, 352);
  putf(112, slope);
  putf(116, inter);
  h[123] = 2;  // mm
  if (sform_code > 0) {
    put(254, static_cast<std::uint16_t>(sform_code), 2);
    const float srow[12] = {0, 0.5f, 0, 10, -0.75f, 0, 0.1f, -20, 0, 0, 2.5f, 30};
    for (std::size_t i = 0; i < 12; ++i) putf(280 + 4 * i, srow[i]);
  } else if (sform_code == 0) {
    put(252, 1, 2);  // qform_code 1
    putf(256, 0.0f);
    putf(260, 0.7071068f);
    putf(264, 0.0f);
    putf(268, 5);
    putf(272, 6);
    putf(276, 7);
  }
  h.replace(344, 4, std::string("n+1\0", 4));
  return h + data;
}

TEST_F(Mapped, NiftiEveryDatatypeByteOrderScalingAndGeometry) {
  std::size_t compared = 0;
  for (const Type& t : types()) {
    if (!t.nifti) continue;
    for (bool be : {false, true}) {
      for (const auto& [slope, inter] :
           std::vector<std::pair<float, float>>{{0, 0}, {1, 0}, {2.5f, -3}, {0.1f, 1000}}) {
        for (int sform : {-1, 0, 1}) {  // no orientation, qform, sform
          const std::string p = path("a.nii");
          write_bytes(p, nifti_file({5, 4, 3}, t.nifti, static_cast<int>(8 * t.size), be, slope,
                                    inter, encode(t, 60, be), sform));
          SCOPED_TRACE(std::string(t.npy) + (be ? " be" : " le") + " slope " +
                       std::to_string(slope) + " sform " + std::to_string(sform));
          compared += expect_same(p, false);
          const bool scaled = slope != 0 && (slope != 1 || inter != 0);
          EXPECT_EQ(sv::open_mapped(p, false).dtype() == DType::F64, scaled || t.nifti == 64);
        }
      }
    }
  }
  EXPECT_GT(compared, 3000u);
}

TEST_F(Mapped, NiftiVolumesOfA4DFile) {
  const Type i2 = types()[4];
  ASSERT_STREQ(i2.npy, "i2");
  const std::string p = path("v.nii");
  write_bytes(p, nifti_file({5, 4, 3, 2}, 4, 16, false, 0, 0, encode(i2, 120, false)));
  expect_refused(p, "choose one with --volume", [&] { sv::open_mapped(p, false); });
  for (long v : {0L, 1L}) {
    sv::InputOptions o;
    o.volume = v;
    const sv::ScopedInputOptions scoped(o);
    expect_same(p, false);
    EXPECT_EQ(sv::open_mapped(p, false).data_offset(), 352u + static_cast<std::size_t>(v) * 120);
  }
}

TEST_F(Mapped, NiftiRefusals) {
  const Type f4 = types()[10];
  const std::string data = encode(f4, 60, false);
  const std::string p = path("a.nii");
  write_bytes(p, nifti_file({5, 4, 3}, 16, 32, false, 0, 0, data.substr(1)));
  expect_refused(p, "truncated: the header declares 592 bytes", [&] { sv::open_mapped(p, false); });
  write_bytes(p, nifti_file({5, 4, 3}, 16, 32, false, 0, 0, data + "x"));
  expect_refused(p, "1 bytes after the voxel data", [&] { sv::open_mapped(p, false); });
  write_bytes(p, nifti_file({32767, 32767, 32767}, 16, 32, false, 0, 0, data));
  expect_refused(p, "truncated: the header declares", [&] { sv::open_mapped(p, false); });
  write_bytes(p, nifti_file({5, 4, 3}, 1792, 64, false, 0, 0, data));
  expect_refused(p, "is not supported", [&] { sv::open_mapped(p, false); });
  write_bytes(p, nifti_file({5, 4, 3}, 16, 32, false, 0, 0, data).substr(0, 100));
  expect_refused(p, "truncated: 100 bytes, a NIfTI-1 header needs 348",
                 [&] { sv::open_mapped(p, false); });
  // .nii.gz: read into memory.
  const std::string gz = path("a.nii.gz");
  const std::string plain = nifti_file({5, 4, 3}, 16, 32, false, 0, 0, data);
  gzFile f = gzopen(gz.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  gzwrite(f, plain.data(), static_cast<unsigned>(plain.size()));
  gzclose(f);
  expect_not_mappable(gz, "gzip-compressed");
  // The same bytes under a .nii name: the content decides, as in the loader.
  std::filesystem::copy_file(gz, path("gz_inside.nii"));
  expect_not_mappable(path("gz_inside.nii"), "gzip-compressed");
}

// -------------------------------------------------------------------------------------- raw

TEST_F(Mapped, RawEveryTypeOrderAndOffset) {
  std::size_t compared = 0;
  const std::vector<std::pair<const char*, int>> specs = {
      {"u8", 1}, {"u16", 3}, {"i16", 4}, {"f32", 10}, {"f64", 11}};
  for (const auto& [name, index] : specs) {
    const Type t = types()[static_cast<std::size_t>(index)];
    for (bool be : {false, true}) {
      for (const char* extra : {"", ":offset=13", ":spacing=2x0.5x0.25"}) {
        const std::string spec_text = std::string("3x4x5:") + name + (be ? ":be" : ":le") + extra;
        const sv::RawSpec spec = sv::parse_raw_spec(spec_text);
        const std::string p = path("vol.dat");
        write_bytes(p, std::string(spec.offset, 'h') + encode(t, 60, be));
        SCOPED_TRACE(spec_text);
        compared += expect_same(p, false, spec);
      }
      const sv::RawSpec spec = sv::parse_raw_spec(std::string("5x4x3:") + name + (be ? ":be" : ""));
      write_bytes(path("c.dat"), encode(t, 60, be));
      compared += expect_same(path("c.dat"), true, spec);  // the last dim as channels
    }
  }
  EXPECT_GT(compared, 1500u);
  const sv::RawSpec spec = sv::parse_raw_spec("3x4x5:f32");
  write_bytes(path("short.dat"), std::string(239, '\0'));
  expect_refused(path("short.dat"), "the file holds 239 bytes, the raw spec needs 240",
                 [&] { sv::open_mapped(path("short.dat"), false, spec); });
  // Without a spec an unknown extension is not mapped (load_any decides: DICOM or an error).
  expect_not_mappable(path("short.dat"), "no format");
}

// ------------------------------------------------------------------------- the fuzz seeds

// The fuzz harness's seed corpus (tests/fuzz/seeds) holds the formats as other tools write them
// (numpy, a NIfTI-2 4-D file, detached NRRD): every mappable one agrees with its loader.
TEST_F(Mapped, FuzzSeedsAgreeWithTheLoaders) {
  const std::string seeds = std::string(SPLINEVIEW_IO_TEST_DIR) + "/../fuzz/seeds/";
  struct Seed {
    const char* name;
    bool channel_axis;
    const char* raw;
    long volume;
  };
  const Seed list[] = {
      {"f32.npy", false, nullptr, -1},
      {"f64.npy", false, nullptr, -1},
      {"u8.npy", false, nullptr, -1},
      {"u16.npy", false, nullptr, -1},
      {"f32_channels.npy", true, nullptr, -1},
      {"i16_be.npy", false, nullptr, -1},
      {"f16.npy", false, nullptr, -1},
      {"i64_fortran.npy", false, nullptr, -1},
      {"bool.npy", false, nullptr, -1},
      {"raw.nrrd", false, nullptr, -1},
      {"oriented.nrrd", false, nullptr, -1},
      {"detached.nhdr", false, nullptr, -1},
      {"i16.nii", false, nullptr, -1},
      {"oriented.nii", false, nullptr, -1},
      {"n2_4d.nii", false, nullptr, 1},
      {"u16be.dat", false, "2x5x6:u16:be", -1},
      {"f32_offset.dat", false, "6x5:f32:offset=16", -1},
  };
  for (const Seed& s : list) {
    SCOPED_TRACE(s.name);
    sv::InputOptions o;
    o.volume = s.volume;
    const sv::ScopedInputOptions scoped(o);
    std::optional<sv::RawSpec> raw;
    if (s.raw) raw = sv::parse_raw_spec(s.raw);
    EXPECT_GT(expect_same(seeds + s.name, s.channel_axis, raw), 0u);
  }
  expect_not_mappable(seeds + "rgb_gzip.nrrd", "gzip");
  expect_not_mappable(seeds + "ascii.nrrd", "ascii");
  expect_not_mappable(seeds + "f32.nii.gz", "gzip");
}

// -------------------------------------------------------------------------------------- TIFF

// A classic TIFF written byte by byte (the project's own writer compresses): `pages` pages of
// h x w pixels of `spp` samples of `t` (value i of the whole array in C order), uncompressed
// strips of `rows` rows, the samples first (page after page), then the directories. `gap`
// inserts 4 stray bytes after the first strip of page 0 (strips no longer one after another);
// `page_gap` 4 bytes between pages 0 and 1.
struct TiffSpec {
  bool big_endian = false;
  std::size_t w = 7, h = 5, pages = 3, spp = 1, rows = 2;
  bool gap = false, page_gap = false, planar = false;
  int fill_order = 0;  // 0: no tag
  std::string description;
};

std::string tiff_file(const Type& t, int format, const TiffSpec& s) {
  const bool be = s.big_endian;
  auto u16 = [&](std::uint64_t v) { return bytes_of(v, 2, be); };
  auto u32 = [&](std::uint64_t v) { return bytes_of(v, 4, be); };
  std::string out =
      be ? std::string("MM") + u16(42) + u32(0) : std::string("II") + u16(42) + u32(0);
  const std::size_t row_bytes = s.w * s.spp * t.size;
  const std::size_t strips = (s.h + s.rows - 1) / s.rows;
  const std::string data = encode(t, s.pages * s.h * s.w * s.spp, be);
  std::vector<std::vector<std::uint64_t>> offsets(s.pages), counts(s.pages);
  for (std::size_t p = 0; p < s.pages; ++p) {
    if (p == 1 && s.page_gap) out += std::string(4, '\x7f');
    if (s.planar) {  // one strip per plane (rows = h): the page's bytes cut in spp parts
      const std::size_t plane = s.h * s.w * t.size;
      for (std::size_t k = 0; k < s.spp; ++k) {
        offsets[p].push_back(out.size());
        counts[p].push_back(plane);
        out += data.substr(p * s.h * row_bytes + k * plane, plane);
      }
      continue;
    }
    for (std::size_t k = 0; k < strips; ++k) {
      const std::size_t r0 = k * s.rows, r1 = std::min(s.h, r0 + s.rows);
      offsets[p].push_back(out.size());
      counts[p].push_back((r1 - r0) * row_bytes);
      out += data.substr((p * s.h + r0) * row_bytes, (r1 - r0) * row_bytes);
      if (p == 0 && k == 0 && s.gap) out += std::string(4, '\x7f');
    }
  }
  // Directories: entries sorted by tag; values over 4 bytes go after the entries.
  std::size_t prev_next = 4;  // where the previous "next IFD" offset lives
  for (std::size_t p = 0; p < s.pages; ++p) {
    if (out.size() % 2) out += '\0';
    struct Entry {
      std::uint16_t tag, type;
      std::vector<std::uint64_t> values;
      std::string ascii;
    };
    std::vector<Entry> e;
    const std::uint16_t SHORT = 3, LONG = 4, ASCII = 2;
    e.push_back({256, LONG, {s.w}, ""});
    e.push_back({257, LONG, {s.h}, ""});
    e.push_back({258, SHORT, std::vector<std::uint64_t>(s.spp, t.size * 8), ""});
    e.push_back({259, SHORT, {1}, ""});
    e.push_back({262, SHORT, {s.spp >= 3 ? 2u : 1u}, ""});
    if (s.fill_order) e.push_back({266, SHORT, {static_cast<std::uint64_t>(s.fill_order)}, ""});
    if (!s.description.empty() && p == 0) e.push_back({270, ASCII, {}, s.description + '\0'});
    e.push_back({273, LONG, offsets[p], ""});
    e.push_back({277, SHORT, {s.spp}, ""});
    e.push_back({278, LONG, {s.rows}, ""});
    e.push_back({279, LONG, counts[p], ""});
    e.push_back({284, SHORT, {s.planar ? 2u : 1u}, ""});
    e.push_back(
        {339, SHORT, std::vector<std::uint64_t>(s.spp, static_cast<std::uint64_t>(format)), ""});
    const std::size_t ifd = out.size();
    out.replace(prev_next, 4, u32(ifd));
    std::size_t extra = ifd + 2 + 12 * e.size() + 4;
    std::string body = u16(e.size()), tail;
    for (const Entry& x : e) {
      std::string v;
      if (x.type == ASCII)
        v = x.ascii;
      else
        for (std::uint64_t val : x.values) v += x.type == SHORT ? u16(val) : u32(val);
      const std::size_t count = x.type == ASCII ? x.ascii.size() : x.values.size();
      body += u16(x.tag) + u16(x.type) + u32(count);
      if (v.size() <= 4) {
        body += v + std::string(4 - v.size(), '\0');
      } else {
        body += u32(extra + tail.size());
        tail += v;
        if (tail.size() % 2) tail += '\0';
      }
    }
    prev_next = ifd + body.size();
    out += body + u32(0) + tail;
  }
  return out;
}

TEST_F(Mapped, TiffUncompressedStacksAreMappedAsTheLoaderReadsThem) {
  // Every integer and float type TIFF has, both byte orders, one and three samples per pixel,
  // one and several pages, strips of 1, 2 and all rows: values, dims, dtype, spacing and
  // geometry equal to load_any's.
  std::size_t compared = 0;
  for (const Type& t : types()) {
    const std::string n = t.npy;
    const int format = n[0] == 'f' ? 3 : n[0] == 'i' ? 2 : n[0] == 'u' ? 1 : 0;
    if (format == 0) continue;  // bool: no TIFF sample format
    for (bool be : {false, true}) {
      for (std::size_t spp : {std::size_t{1}, std::size_t{3}}) {
        for (std::size_t pages : {std::size_t{1}, std::size_t{4}}) {
          for (std::size_t rows : {std::size_t{1}, std::size_t{2}, std::size_t{5}}) {
            TiffSpec s;
            s.big_endian = be;
            s.spp = spp;
            s.pages = pages;
            s.rows = rows;
            const std::string p = path("t.tif");
            write_bytes(p, tiff_file(t, format, s));
            SCOPED_TRACE(n + (be ? " MM" : " II") + " spp " + std::to_string(spp) + " pages " +
                         std::to_string(pages) + " rows " + std::to_string(rows));
            compared += expect_same(p, spp > 1);
          }
        }
      }
    }
  }
  EXPECT_GT(compared, 0u);
  // An ImageJ stack's z spacing (and unit) reach the mapped geometry as the loader's.
  TiffSpec s;
  s.description = "ImageJ=1.54f\nimages=3\nslices=3\nunit=micron\nspacing=2.5\n";
  const std::string p = path("ij.tif");
  write_bytes(p, tiff_file(types()[3], 1, s));  // u2
  EXPECT_GT(expect_same(p, false), 0u);
  EXPECT_DOUBLE_EQ(sv::open_mapped(p, false).spacing()[0], 0.0025);
}

TEST_F(Mapped, TiffThatIsNotOneArrayInTheFileIsReadIntoMemory) {
  const Type t = types()[3];  // u2
  auto check = [&](TiffSpec s, const std::string& why) {
    const std::string p = path("n.tif");
    write_bytes(p, tiff_file(t, 1, s));
    try {
      sv::load_any(p, s.spp > 1);  // the loader reads it
    } catch (const sv::Error& e) {
      ADD_FAILURE() << why << ": the loader refused the file: " << e.what();
    }
    expect_not_mappable(p, why, s.spp > 1);
  };
  TiffSpec gap;
  gap.gap = true;
  check(gap, "not stored one after another");
  TiffSpec page_gap;
  page_gap.page_gap = true;
  check(page_gap, "not stored one after another");
  TiffSpec reversed;
  reversed.fill_order = 2;
  check(reversed, "FillOrder 2");
  TiffSpec planar;
  planar.spp = 3;
  planar.planar = true;
  planar.rows = 5;
  // Separate planes: each strip is one plane of one page; written as interleaved data here,
  // which the loader reads as planes, the mapped read must not claim.
  check(planar, "separate planes");
  TiffSpec hyper;
  hyper.pages = 4;
  hyper.description = "ImageJ=1.54f\nimages=4\nchannels=2\nslices=2\nhyperstack=true\n";
  check(hyper, "separate pages");
  // Compressed (the project's own writer: deflate).
  ArrayD a({3, 4, 5}, 1);
  sv::save_any(path("d.tif"), a, DType::U16, false);
  expect_not_mappable(path("d.tif"), "compressed (AdobeDeflate)");
}

TEST_F(Mapped, TiffRefusalsAreTheLoaders) {
  // A TIFF the loader refuses is refused by the probe with the loader's message, before any
  // sample is read: pages that differ, a truncated page.
  const Type t = types()[3];  // u2
  TiffSpec s;
  std::string bytes = tiff_file(t, 1, s);
  const std::string p = path("bad.tif");
  write_bytes(p, bytes.substr(0, 40));  // the samples cut, the directories gone
  std::string loader;
  try {
    sv::load_any(p, false);
  } catch (const sv::Error& e) {
    loader = e.what();
  }
  ASSERT_FALSE(loader.empty());
  expect_refused(p, loader.substr(p.size() + 2, 20), [&] { sv::open_mapped(p, false); });
  write_bytes(p, "II*\0garbage");
  expect_refused(p, "TIFF", [&] { sv::open_mapped(p, false); });
  write_bytes(p, "not a tiff at all");
  expect_refused(p, "not a TIFF file", [&] { sv::open_mapped(p, false); });
}

// --------------------------------------------------------------------- not mapped, any kind

TEST_F(Mapped, OtherFormatsAreNotMappable) {
  ArrayD a({4, 5}, 1);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i);
  sv::save_any(path("i.png"), a, DType::U8, false);
  expect_not_mappable(path("i.png"), "images");
  sv::save_any(path("t.tif"), a, DType::F32, false);
  expect_not_mappable(path("t.tif"), "compressed");
  std::filesystem::create_directory(path("slices"));
  expect_not_mappable(path("slices"), "folder");
  expect_not_mappable(path("s*.png"), "pattern");
  // A FIFO, when pipes are allowed: not mappable, and not opened (that would block).
  const std::string fifo = path("pipe.npy");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_refused(fifo, "not a regular file", [&] { sv::open_mapped(fifo, false); });
  sv::InputOptions o;
  o.allow_special = true;
  const sv::ScopedInputOptions scoped(o);
  expect_not_mappable(fifo, "not a regular file");
}

// ----------------------------------------------------------------------------------- output

// An array with distinct float values (exact in float32).
ArrayD pattern(const std::vector<std::size_t>& dims, std::size_t channels) {
  ArrayD a(dims, channels);
  for (std::size_t i = 0; i < a.size(); ++i)
    a[i] = static_cast<double>(static_cast<float>(0.37 * static_cast<double>(i) - 11.0));
  return a;
}

sv::Geometry oriented_geometry() {
  sv::Geometry g;
  g.affine = {{{0, 0.5, 0, 10}, {-0.75, 0, 0.1, -20}, {0, 0, 2.5, 30}, {0, 0, 0, 1}}};
  g.source = "sform";
  return g;
}

std::string without_line(std::string s, const std::string& starting) {
  const std::size_t i = s.find("\n" + starting);
  if (i == std::string::npos) return s;
  return s.erase(i + 1, s.find('\n', i + 1) - i);
}

TEST_F(Mapped, OutputMatchesSaveAny) {
  const sv::Geometry unoriented = sv::geometry_from_spacing({2.5, 0.75, 0.5});
  for (const char* ext : {".npy", ".nii", ".nrrd"}) {
    for (const sv::Geometry& g : {unoriented, oriented_geometry()}) {
      for (std::size_t channels : {std::size_t{1}, std::size_t{3}}) {
        if (channels > 1 && std::string(ext) == ".nii") continue;
        for (bool channel_axis : {false, true}) {
          const ArrayD a = pattern({3, 4, 5}, channels);
          const std::string want = path(std::string("want") + ext);
          const std::string got = path(std::string("got") + ext);
          SCOPED_TRACE(std::string(ext) + " channels " + std::to_string(channels) +
                       (g.oriented() ? " oriented" : ""));
          sv::save_any(want, a, DType::F32, channel_axis, g);
          std::filesystem::remove(got);
          {
            sv::MappedOutput out =
                sv::create_mapped_output(got, a.dims(), channels, channel_axis, g);
            ASSERT_EQ(out.size(), a.size());
            EXPECT_FALSE(std::filesystem::exists(got));  // only the temporary so far
            EXPECT_TRUE(std::filesystem::exists(out.temporary_path()));
            EXPECT_EQ(reinterpret_cast<std::uintptr_t>(out.data()) % 16, 0u);  // NIfTI: 352
            for (std::size_t i = 0; i < a.size(); ++i) out.data()[i] = static_cast<float>(a[i]);
            out.commit();
          }
          const std::string wb = read_bytes(want), gb = read_bytes(got);
          if (std::string(ext) == ".nrrd") {
            // The same fields, raw data instead of gzip, a padding comment.
            const std::size_t wend = wb.find("\n\n"), gend = gb.find("\n\n");
            ASSERT_NE(gend, std::string::npos);
            EXPECT_EQ((gend + 2) % 64, 0u);
            EXPECT_EQ(without_line(without_line(gb.substr(0, gend + 1), "encoding:"), "# padding"),
                      without_line(wb.substr(0, wend + 1), "encoding:"));
            EXPECT_NE(gb.find("\nencoding: raw\n"), std::string::npos);
            EXPECT_EQ(gb.size(), gend + 2 + 4 * a.size());
          } else {
            EXPECT_EQ(gb, wb);  // byte for byte
          }
          const bool with_channels = channel_axis || channels > 1;  // as the file stores it
          const sv::Loaded lw = sv::load_any(want, with_channels);
          const sv::Loaded lg = sv::load_any(got, with_channels);
          EXPECT_EQ(lg.array.dims(), lw.array.dims());
          EXPECT_EQ(lg.array.channels(), lw.array.channels());
          EXPECT_EQ(lg.array.vec(), lw.array.vec());
          EXPECT_EQ(lg.array.vec(), a.vec());
          EXPECT_EQ(lg.dtype, DType::F32);
          EXPECT_EQ(lg.spacing, lw.spacing);
          expect_same_geometry(lg.geometry, lw.geometry, got);
          expect_same(got, with_channels);  // and it maps back
        }
      }
    }
  }
  EXPECT_EQ(listing().size(), 6u);  // want/got .npy .nii .nrrd: no temporaries
}

TEST_F(Mapped, UnfinishedOutputLeavesNothing) {
  const std::string out = path("out.npy");
  {
    sv::MappedOutput o = sv::create_mapped_output(out, {10, 20}, 1, false, sv::Geometry());
    std::fill(o.data(), o.data() + o.size(), 1.0f);
  }  // never committed
  EXPECT_TRUE(listing().empty());
  const std::string before = "an existing result, to stay byte for byte\n";
  for (const char* ext : {".npy", ".nii", ".nrrd"}) {
    const std::string p = path(std::string("old") + ext);
    write_bytes(p, before);
    try {
      sv::MappedOutput o = sv::create_mapped_output(p, {4, 5}, 1, false, sv::Geometry());
      std::fill(o.data(), o.data() + o.size(), 2.0f);
      throw sv::Error("a failure before commit");
    } catch (const sv::Error&) {
    }
    EXPECT_EQ(read_bytes(p), before) << ext;
  }
  EXPECT_EQ(listing(), (std::vector<std::string>{"old.nii", "old.npy", "old.nrrd"}));
  // Refused before anything is created: other formats, what the saver refuses.
  for (const char* name : {"o.tif", "o.nii.gz", "o.nhdr", "o.png", "o"}) {
    const std::string p = path(name);
    const std::string why = sv::mapped_output_refusal(p);
    EXPECT_EQ(why.rfind(p + ": ", 0), 0u) << why;
    EXPECT_NE(why.find(".npy, .nrrd or .nii"), std::string::npos) << why;
    expect_refused(p, ".npy, .nrrd or .nii", [&] {
      sv::create_mapped_output(p, {4, 5}, 1, false, sv::Geometry());
    });
  }
  expect_refused(path("c.nii"), "one channel", [&] {
    sv::create_mapped_output(path("c.nii"), {4, 5}, 2, false, sv::Geometry());
  });
  expect_refused(path("w.nii"), "32767", [&] {
    sv::create_mapped_output(path("w.nii"), {2, 40000}, 1, false, sv::Geometry());
  });
  expect_refused(path("e.npy"), "empty", [&] {
    sv::create_mapped_output(path("e.npy"), {4, 0}, 1, false, sv::Geometry());
  });
  EXPECT_EQ(listing(), (std::vector<std::string>{"old.nii", "old.npy", "old.nrrd"}));
  // A folder that does not exist: the temporary cannot be created, one sentence.
  expect_refused(path("no/such/out.npy"), "cannot create temporary file", [&] {
    sv::create_mapped_output(path("no/such/out.npy"), {4, 5}, 1, false, sv::Geometry());
  });
}

TEST_F(Mapped, ScratchFileGoesAway) {
  std::string tmp;
  {
    sv::MappedOutput s = sv::create_mapped_scratch(path("out.npy"), {6, 7, 8}, 1);
    tmp = s.temporary_path();
    EXPECT_EQ(tmp.rfind(path("out.npy") + ".tmp-", 0), 0u) << tmp;
    EXPECT_EQ(std::filesystem::file_size(tmp), 6u * 7 * 8 * 4);
    s.data()[0] = 1;
    EXPECT_THROW(s.commit(), sv::Error);
  }
  EXPECT_FALSE(std::filesystem::exists(tmp));
  EXPECT_TRUE(listing().empty());
}

}  // namespace
