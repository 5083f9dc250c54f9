// Tests of volume loading (splineview/io.h): NIfTI-1 files built byte by byte here from the
// published layout (offsets written out below, independent of nifti1.h) in every supported
// datatype, both byte orders, plain and gzip; scaling, rank and spacing rules; round trips
// through save_nifti; every malformed variant gives an sv::Error naming the file; raw volumes
// and their spec strings; and nibabel as an independent oracle when Debian's python3 has it.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

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

class IoVolumeTest : public svtest::TempDirTest {};

void write_gz(const std::string& p, const std::string& bytes) {
  gzFile f = gzopen(p.c_str(), "wb");
  ASSERT_NE(f, nullptr) << p;
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

// Little- or big-endian bytes of an integer or float value.
template <class T>
std::string pack(T v, bool big_endian) {
  std::string s(sizeof(T), '\0');
  std::memcpy(&s[0], &v, sizeof(T));
  // The test machine is little endian (x86-64, aarch64 Linux).
  if (big_endian) std::reverse(s.begin(), s.end());
  return s;
}

// A NIfTI-1 single file, laid out by the offsets of the NIfTI-1 standard.
struct NiftiFile {
  std::vector<int> dim = {5, 4, 3};  // dim[1..]: x, y, z, ...
  int datatype = 16;
  int bitpix = 32;
  std::vector<float> pixdim = {0.5f, 0.75f, 2.5f};
  float vox_offset = 352;
  float slope = 0, inter = 0;
  bool big_endian = false;
  std::string magic = std::string("n+1\0", 4);
  std::int32_t sizeof_hdr = 348;
  std::string data;  // voxel bytes

  std::string bytes() const {
    std::string h(352, '\0');
    auto put = [&](std::size_t off, const std::string& b) { h.replace(off, b.size(), b); };
    put(0, pack(sizeof_hdr, big_endian));
    put(40, pack(static_cast<std::int16_t>(dim.size()), big_endian));
    for (std::size_t i = 0; i < 7; ++i)
      put(42 + 2 * i, pack(static_cast<std::int16_t>(i < dim.size() ? dim[i] : 1), big_endian));
    put(70, pack(static_cast<std::int16_t>(datatype), big_endian));
    put(72, pack(static_cast<std::int16_t>(bitpix), big_endian));
    put(76, pack(1.0f, big_endian));  // qfac
    for (std::size_t i = 0; i < 7; ++i)
      put(80 + 4 * i, pack(i < pixdim.size() ? pixdim[i] : 1.0f, big_endian));
    put(108, pack(vox_offset, big_endian));
    put(112, pack(slope, big_endian));
    put(116, pack(inter, big_endian));
    put(344, magic);
    if (vox_offset > 352 && std::isfinite(vox_offset))
      h.resize(static_cast<std::size_t>(vox_offset), '\0');
    if (vox_offset == 348) h.resize(348);
    return h + data;
  }
};

// Stored values per datatype: the value each one must load as.
struct TypeCase {
  int code;
  int bitpix;
  DType dtype;
  std::vector<double> values;  // 60 of them, cycled from these
  std::function<std::string(double, bool)> encode;
};

std::vector<TypeCase> type_cases() {
  return {
      {2,
       8,
       DType::U8,
       {0, 1, 127, 128, 255},
       [](double v, bool be) { return pack(static_cast<std::uint8_t>(v), be); }},
      {256,
       8,
       DType::I8,
       {-128, -1, 0, 1, 127},
       [](double v, bool be) { return pack(static_cast<std::int8_t>(v), be); }},
      {4,
       16,
       DType::I16,
       {-32768, -1, 0, 1, 32767, 258},
       [](double v, bool be) { return pack(static_cast<std::int16_t>(v), be); }},
      {512,
       16,
       DType::U16,
       {0, 1, 258, 32768, 65535},
       [](double v, bool be) { return pack(static_cast<std::uint16_t>(v), be); }},
      {8,
       32,
       DType::I32,
       {-2147483648.0, -1, 0, 16909060, 2147483647.0},
       [](double v, bool be) { return pack(static_cast<std::int32_t>(v), be); }},
      {768,
       32,
       DType::U32,
       {0, 1, 16909060, 4294967295.0},
       [](double v, bool be) { return pack(static_cast<std::uint32_t>(v), be); }},
      {16,
       32,
       DType::F32,
       {-1.5, 0, 0.1f, 3.4e38f, -std::numeric_limits<float>::denorm_min()},
       [](double v, bool be) { return pack(static_cast<float>(v), be); }},
      {64,
       64,
       DType::F64,
       {-1.5, 0, 0.1, 1e300, std::numeric_limits<double>::denorm_min()},
       [](double v, bool be) { return pack(v, be); }},
  };
}

std::string encode_all(const TypeCase& t, std::size_t n, bool be) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += t.encode(t.values[i % t.values.size()], be);
  return s;
}

// Asserts that `fn` throws sv::Error whose message starts with "<p>: " and contains `part`.
void expect_error(const std::string& p, const std::string& part, const std::function<void()>& fn) {
  try {
    fn();
    ADD_FAILURE() << "no error for " << p << " (expected '" << part << "')";
  } catch (const sv::Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(p + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find(part), std::string::npos) << msg << "\n(expected '" << part << "')";
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

// ---------------------------------------------------------------------------------- NIfTI

TEST_F(IoVolumeTest, NiftiEveryDatatypeByteOrderAndCompression) {
  for (const TypeCase& t : type_cases()) {
    for (bool be : {false, true}) {
      for (bool gz : {false, true}) {
        SCOPED_TRACE("datatype " + std::to_string(t.code) + (be ? " big" : " little") +
                     (gz ? " .nii.gz" : " .nii"));
        NiftiFile f;
        f.datatype = t.code;
        f.bitpix = t.bitpix;
        f.big_endian = be;
        f.data = encode_all(t, 60, be);
        const std::string p = path(gz ? "v.nii.gz" : "v.nii");
        if (gz)
          write_gz(p, f.bytes());
        else
          write_bytes(p, f.bytes());
        const sv::Loaded l = sv::load_any(p, false);
        EXPECT_EQ(l.dtype, t.dtype);
        EXPECT_FALSE(l.channel_axis);
        ASSERT_EQ(l.array.dims(), (std::vector<std::size_t>{3, 4, 5}));
        ASSERT_EQ(l.array.channels(), 1u);
        EXPECT_EQ(l.spacing, (std::vector<double>{2.5, 0.75, 0.5}));
        for (std::size_t i = 0; i < 60; ++i)
          ASSERT_EQ(l.array[i], t.values[i % t.values.size()]) << "voxel " << i;
      }
    }
  }
}

TEST_F(IoVolumeTest, NiftiAxisOrderIsXFastest) {
  NiftiFile f;
  f.dim = {4, 3, 2};
  f.datatype = 512;
  f.bitpix = 16;
  for (int i = 0; i < 24; ++i) f.data += pack(static_cast<std::uint16_t>(i), false);
  write_bytes(path("o.nii"), f.bytes());
  const sv::Loaded l = sv::load_nifti(path("o.nii"));
  ASSERT_EQ(l.array.dims(), (std::vector<std::size_t>{2, 3, 4}));
  // voxel (i, j, k) of the file is element (k, j, i) of the array
  EXPECT_EQ(l.array.at3(1, 2, 3), 1 * 12 + 2 * 4 + 3);
  EXPECT_EQ(l.array.at3(0, 1, 0), 4);
}

TEST_F(IoVolumeTest, NiftiScaling) {
  struct Case {
    float slope, inter;
    bool scaled;
    double a, b;  // y = a * x + b when scaled
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const Case cases[] = {
      {0.5f, -10.f, true, 0.5, -10}, {2.f, 0.f, true, 2, 0},  {1.f, 3.f, true, 1, 3},
      {2.f, nan, true, 2, 0},        {0.f, 5.f, false, 1, 0}, {nan, 5.f, false, 1, 0},
      {inf, 5.f, false, 1, 0},       {1.f, 0.f, false, 1, 0}, {-0.25f, 1.5f, true, -0.25, 1.5}};
  for (const Case& c : cases) {
    SCOPED_TRACE("slope " + std::to_string(c.slope) + " inter " + std::to_string(c.inter));
    NiftiFile f;
    f.dim = {6};
    f.datatype = 4;
    f.bitpix = 16;
    f.slope = c.slope;
    f.inter = c.inter;
    const std::int16_t stored[6] = {-32768, -3, 0, 1, 7, 32767};
    for (std::int16_t v : stored) f.data += pack(v, false);
    write_bytes(path("s.nii"), f.bytes());
    const sv::Loaded l = sv::load_nifti(path("s.nii"));
    EXPECT_EQ(l.dtype, c.scaled ? DType::F64 : DType::I16);
    ASSERT_EQ(l.array.dims(), (std::vector<std::size_t>{6}));
    for (int i = 0; i < 6; ++i) EXPECT_EQ(l.array[i], c.a * stored[i] + c.b) << i;
  }
}

TEST_F(IoVolumeTest, NiftiRankAndSpacing) {
  auto load = [&](NiftiFile f) {
    f.datatype = 2;
    f.bitpix = 8;
    std::size_t n = 1;
    for (int d : f.dim) n *= static_cast<std::size_t>(d);
    f.data.assign(n, '\x07');
    write_bytes(path("r.nii"), f.bytes());
    return sv::load_nifti(path("r.nii"));
  };
  NiftiFile f;
  f.dim = {7, 6};
  f.pixdim = {0.3f, 0.9f};
  sv::Loaded l = load(f);
  EXPECT_EQ(l.array.dims(), (std::vector<std::size_t>{6, 7}));
  EXPECT_EQ(l.spacing, (std::vector<double>{static_cast<double>(0.9f), static_cast<double>(0.3f)}));

  f.dim = {9};
  f.pixdim = {0};  // zero spacing reads as 1
  l = load(f);
  EXPECT_EQ(l.array.dims(), (std::vector<std::size_t>{9}));
  EXPECT_EQ(l.spacing, (std::vector<double>{1.0}));

  f.dim = {4, 3, 2, 1, 1};  // extra axes of size 1 are dropped
  f.pixdim = {-2, std::numeric_limits<float>::quiet_NaN(), 3, 7, 7};
  l = load(f);
  EXPECT_EQ(l.array.dims(), (std::vector<std::size_t>{2, 3, 4}));
  EXPECT_EQ(l.spacing, (std::vector<double>{3, 1, 2}));

  f.dim = {4, 3, 1};  // a single-slice 3-D file stays 3-D
  l = load(f);
  EXPECT_EQ(l.array.dims(), (std::vector<std::size_t>{1, 3, 4}));

  f.dim = {4, 3, 2, 5};
  expect_error(path("r.nii"), "is 4-D with 5 volumes; choose one with --volume INDEX (0 to 4)",
               [&] { load(f); });
  f.dim = {4, 3, 2, 1, 2};
  expect_error(path("r.nii"), "axes 5 to 7 must have size 1", [&] { load(f); });
}

TEST_F(IoVolumeTest, NiftiRoundTrip) {
  std::mt19937 rng(11);
  const std::vector<std::vector<std::size_t>> shapes = {{13}, {5, 7}, {3, 4, 6}};
  for (DType dtype : {DType::U8, DType::U16, DType::F32, DType::F64}) {
    for (const auto& shape : shapes) {
      for (const char* ext : {".nii", ".nii.gz", ".NII.GZ"}) {
        SCOPED_TRACE(std::string(sv::dtype_name(dtype)) + " " + ext + " rank " +
                     std::to_string(shape.size()));
        ArrayD a(shape);
        for (double& v : a.vec()) {
          const double u = std::uniform_real_distribution<double>(0, 1)(rng);
          v = dtype == DType::U8    ? std::floor(u * 256)
              : dtype == DType::U16 ? std::floor(u * 65536)
              : dtype == DType::F32 ? static_cast<double>(static_cast<float>(u * 10 - 5))
                                    : u * 10 - 5;
        }
        std::vector<double> spacing;
        for (std::size_t k = 0; k < shape.size(); ++k) spacing.push_back(0.25 * double(k + 1));
        const std::string p = path(std::string("rt") + ext);
        sv::save_nifti(p, a, dtype, spacing);
        EXPECT_EQ(read_bytes(p).substr(0, 2) == "\x1f\x8b", std::string(ext) != ".nii");
        const sv::Loaded l = sv::load_any(p, false);
        EXPECT_EQ(l.dtype, dtype);
        EXPECT_EQ(l.spacing, spacing);
        ASSERT_EQ(l.array.dims(), a.dims());
        EXPECT_EQ(l.array.vec(), a.vec());
      }
    }
  }
  // save_any picks NIfTI by extension (spacing 1).
  ArrayD a({2, 3});
  a[4] = 300.7;
  sv::save_any(path("any.nii"), a, DType::U8, false);
  const sv::Loaded l = sv::load_any(path("any.nii"), false);
  EXPECT_EQ(l.array[4], 255);
  EXPECT_EQ(l.spacing, (std::vector<double>{1, 1}));
  // What save_nifti refuses.
  expect_error(path("c.nii"), "one channel", [&] {
    sv::save_nifti(path("c.nii"), ArrayD({2, 2}, 3), DType::F32);
  });
  expect_error(path("c.nii"), "at most 32767",
               [&] { sv::save_nifti(path("c.nii"), ArrayD({40000}), DType::U8); });
  expect_error(path("c.nii"), "spacing has 1 values", [&] {
    sv::save_nifti(path("c.nii"), ArrayD({2, 2}), DType::U8, {1.0});
  });
  EXPECT_FALSE(fs::exists(path("c.nii")));
}

TEST_F(IoVolumeTest, NiftiErrorsNameTheFileAndTheProblem) {
  const std::string p = path("bad.nii");
  auto expect_file = [&](const std::string& bytes, const std::string& part) {
    SCOPED_TRACE(part);
    write_bytes(p, bytes);
    expect_error(p, part, [&] { sv::load_any(p, false); });
  };
  NiftiFile good;
  good.data = std::string(60 * 4, '\0');
  const std::string ok = good.bytes();
  write_bytes(p, ok);
  ASSERT_NO_THROW(sv::load_nifti(p));

  expect_file("", "truncated: 0 bytes, a NIfTI-1 header needs 348");
  expect_file(ok.substr(0, 200), "truncated: 200 bytes");
  expect_file(ok.substr(0, ok.size() - 1), "truncated: the header declares 592 bytes");
  expect_file(ok.substr(0, 352), "the file holds 352");
  expect_file(ok + "xy", "2 bytes after the voxel data");
  NiftiFile f = good;
  f.sizeof_hdr = 350;
  expect_file(f.bytes(), "not a NIfTI file (sizeof_hdr is 350, expected 348 for NIfTI-1 or 540");
  f.sizeof_hdr = 540;  // a NIfTI-1 header announcing NIfTI-2: its magic is not there
  expect_file(f.bytes(), "no NIfTI-2 magic");
  f = good;
  f.magic = std::string("ni1\0", 4);
  expect_file(f.bytes(), ".hdr/.img pair");
  f.magic = std::string("\0\0\0\0", 4);
  expect_file(f.bytes(), "no NIfTI-1 magic");
  f = good;
  f.dim = {};
  expect_file(f.bytes(), "dim[0] is 0");
  f.dim = {5, 4, 3, 1, 1, 1, 1, 1};
  expect_file(f.bytes(), "dim[0] is 8");
  f.dim = {5, -4, 3};
  expect_file(f.bytes(), "dim[2] is -4");
  f.dim = {5, 0, 3};
  expect_file(f.bytes(), "dim[2] is 0");
  f = good;
  f.datatype = 32;
  expect_file(f.bytes(), "datatype code 32 (complex64) is not supported");
  f.datatype = 128;
  expect_file(f.bytes(), "datatype code 128 (RGB24)");
  f.datatype = 1024;
  expect_file(f.bytes(), "datatype code 1024 (int64)");
  f.datatype = 9999;
  expect_file(f.bytes(), "datatype code 9999 (unknown)");
  f = good;
  f.vox_offset = 300;
  expect_file(f.bytes(), "vox_offset");
  f.vox_offset = 352.5f;
  expect_file(f.bytes(), "vox_offset");
  f.vox_offset = std::numeric_limits<float>::quiet_NaN();
  expect_file(f.bytes(), "vox_offset");
  f = good;
  f.dim = {32767, 32767, 32767};  // the header claims 140 TB
  expect_file(f.bytes(), "truncated: the header declares");

  // vox_offset 348 (no extension flag) and larger offsets with extension bytes are fine.
  f = good;
  f.vox_offset = 348;
  write_bytes(p, f.bytes());
  EXPECT_NO_THROW(sv::load_nifti(p));
  f.vox_offset = 400;
  write_bytes(p, f.bytes());
  EXPECT_NO_THROW(sv::load_nifti(p));

  // gzip variants.
  const std::string pz = path("bad.nii.gz");
  write_gz(pz, ok);
  ASSERT_NO_THROW(sv::load_any(pz, false));
  const std::string gz = read_bytes(pz);
  write_bytes(pz, gz.substr(0, gz.size() - 12));
  expect_error(pz, "truncated", [&] { sv::load_any(pz, false); });
  write_bytes(pz, gz.substr(0, 30));
  expect_error(pz, "truncated", [&] { sv::load_any(pz, false); });
  std::string corrupt = gz;
  for (std::size_t i = 20; i < 40 && i < corrupt.size(); ++i) corrupt[i] = '\xff';
  write_bytes(pz, corrupt);
  expect_error(pz, "gzip", [&] { sv::load_any(pz, false); });
  write_gz(pz, ok.substr(0, ok.size() - 4));
  expect_error(pz, "truncated: the voxel data needs 240 bytes, the file holds 236",
               [&] { sv::load_any(pz, false); });
  write_gz(pz, ok + "z");
  expect_error(pz, "data after the voxels", [&] { sv::load_any(pz, false); });
  f = good;
  f.dim = {32767, 32767, 32767};
  write_gz(pz, f.bytes());
  expect_error(pz, "cannot hold", [&] { sv::load_any(pz, false); });

  // Not a file.
  expect_error(path("missing.nii"), "cannot open",
               [&] { sv::load_any(path("missing.nii"), false); });
  fs::create_directories(path("dir.nii"));
  expect_error(path("dir.nii"), "cannot open", [&] { sv::load_any(path("dir.nii"), false); });
}

TEST_F(IoVolumeTest, NiftiMutatedFilesNeverCrash) {
  NiftiFile f;
  f.datatype = 4;
  f.bitpix = 16;
  f.data = std::string(120, '\x11');
  const std::string good = f.bytes();
  std::mt19937 rng(3);
  for (bool gz : {false, true}) {
    const std::string p = path(gz ? "m.nii.gz" : "m.nii");
    std::string base = good;
    if (gz) {
      write_gz(p, good);
      base = read_bytes(p);
    }
    std::vector<std::string> variants;
    for (std::size_t len = 0; len < base.size(); len += 1 + base.size() / 50)
      variants.push_back(base.substr(0, len));
    for (int k = 0; k < 300; ++k) {
      std::string m = base;
      const int flips = 1 + static_cast<int>(rng() % 4);
      // Mostly in the header, where the interesting fields are.
      for (int i = 0; i < flips; ++i)
        m[rng() % std::min<std::size_t>(m.size(), k % 2 ? m.size() : 352)] =
            static_cast<char>(rng() & 0xff);
      variants.push_back(m);
    }
    for (const std::string& v : variants) {
      write_bytes(p, v);
      try {
        sv::load_any(p, false);
      } catch (const sv::Error& e) {
        EXPECT_EQ(std::string(e.what()).rfind(p + ": ", 0), 0u) << e.what();
      }
    }
  }
}

// ---------------------------------------------------------------------------------- raw

TEST_F(IoVolumeTest, RawSpecParsing) {
  sv::RawSpec s = sv::parse_raw_spec("64x256x256:u16");
  EXPECT_EQ(s.dims, (std::vector<std::size_t>{64, 256, 256}));
  EXPECT_EQ(s.type, sv::RawSpec::Type::U16);
  EXPECT_FALSE(s.big_endian);
  EXPECT_TRUE(s.spacing.empty());
  EXPECT_EQ(s.offset, 0u);
  s = sv::parse_raw_spec("3x4:f32:be:spacing=2.5x0.5:offset=1024");
  EXPECT_EQ(s.dims, (std::vector<std::size_t>{3, 4}));
  EXPECT_EQ(s.type, sv::RawSpec::Type::F32);
  EXPECT_TRUE(s.big_endian);
  EXPECT_EQ(s.spacing, (std::vector<double>{2.5, 0.5}));
  EXPECT_EQ(s.offset, 1024u);
  s = sv::parse_raw_spec("7:i16:offset=3:le");
  EXPECT_EQ(s.type, sv::RawSpec::Type::I16);
  EXPECT_EQ(s.offset, 3u);
  EXPECT_EQ(sv::parse_raw_spec("1x2x3x4:f64").dims.size(), 4u);

  const std::pair<const char*, const char*> bad[] = {
      {"", "needs at least dims and a type"},
      {"64x64", "needs at least dims and a type"},
      {"64xx64:u8", "dims '64xx64'"},
      {"0x4:u8", "dims '0x4'"},
      {"-3:u8", "dims '-3'"},
      {"4 x4:u8", "dims '4 x4'"},
      {"1x2x3x4x5:u8", "more than 4 dims"},
      {"4:u32", "unknown type 'u32'"},
      {"4:u8:be:le", "byte order given twice"},
      {"4:u8:spacing=0", "spacing '0'"},
      {"4:u8:spacing=1xnan", "spacing '1xnan'"},
      {"4x4:u8:spacing=1x1x1", "spacing has 3 values for 2 dims"},
      {"4:u8:offset=-1", "offset '-1'"},
      {"4:u8:offset=1:offset=2", "offset given twice"},
      {"4:u8:big", "unknown field 'big'"},
  };
  for (const auto& [spec, part] : bad) {
    try {
      sv::parse_raw_spec(spec);
      ADD_FAILURE() << "no error for '" << spec << "'";
    } catch (const sv::Error& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind("raw volume spec '" + std::string(spec) + "': ", 0), 0u) << msg;
      EXPECT_NE(msg.find(part), std::string::npos) << msg;
    }
  }
}

TEST_F(IoVolumeTest, RawVolumes) {
  // u16 big endian behind a 5-byte header, anisotropic spacing.
  std::string bytes = "HEAD!";
  for (int i = 0; i < 24; ++i) bytes += pack(static_cast<std::uint16_t>(1000 * i + 7), true);
  write_bytes(path("v.raw"), bytes);
  sv::Loaded l = sv::load_raw(path("v.raw"),
                              sv::parse_raw_spec("2x3x4:u16:be:spacing=3x1x0.5:offset=5"), false);
  EXPECT_EQ(l.dtype, DType::U16);
  ASSERT_EQ(l.array.dims(), (std::vector<std::size_t>{2, 3, 4}));
  EXPECT_EQ(l.spacing, (std::vector<double>{3, 1, 0.5}));
  for (int i = 0; i < 24; ++i) EXPECT_EQ(l.array[i], 1000 * i + 7);

  // The other types, little endian.
  bytes.clear();
  for (int v : {-32768, -1, 0, 32767}) bytes += pack(static_cast<std::int16_t>(v), false);
  write_bytes(path("i.bin"), bytes);
  l = sv::load_raw(path("i.bin"), sv::parse_raw_spec("4:i16"), false);
  EXPECT_EQ(l.dtype, DType::F32);
  EXPECT_EQ(l.array.vec(), (std::vector<double>{-32768, -1, 0, 32767}));
  EXPECT_EQ(l.spacing, (std::vector<double>{1}));
  bytes = pack(1.5f, false) + pack(-0.1f, false);
  write_bytes(path("f.bin"), bytes);
  l = sv::load_raw(path("f.bin"), sv::parse_raw_spec("1x2:f32"), false);
  EXPECT_EQ(l.dtype, DType::F32);
  EXPECT_EQ(l.array.vec(), (std::vector<double>{1.5, static_cast<double>(-0.1f)}));
  write_bytes(path("d.bin"), pack(0.1, true));
  l = sv::load_raw(path("d.bin"), sv::parse_raw_spec("1:f64:be"), false);
  EXPECT_EQ(l.dtype, DType::F64);
  EXPECT_EQ(l.array[0], 0.1);
  write_bytes(path("u.bin"), "\x01\x02\x03\x04\x05\x06");
  l = sv::load_raw(path("u.bin"), sv::parse_raw_spec("2x3:u8"), true);  // 2 points, 3 channels
  EXPECT_EQ(l.dtype, DType::U8);
  EXPECT_TRUE(l.channel_axis);
  EXPECT_EQ(l.array.dims(), (std::vector<std::size_t>{2}));
  EXPECT_EQ(l.array.channels(), 3u);
  EXPECT_EQ(l.array.vec(), (std::vector<double>{1, 2, 3, 4, 5, 6}));

  // Sizes that do not match name both byte counts.
  expect_error(path("v.raw"),
               "the file holds 53 bytes, the raw spec needs 48 (24 values of 2 bytes)",
               [&] { sv::load_raw(path("v.raw"), sv::parse_raw_spec("2x3x4:u16"), false); });
  expect_error(
      path("v.raw"), "the file holds 53 bytes, the raw spec needs 54 (6 header bytes",
      [&] { sv::load_raw(path("v.raw"), sv::parse_raw_spec("2x3x4:u16:offset=6"), false); });
  expect_error(path("u.bin"), "channel axis of the raw spec has 6 entries",
               [&] { sv::load_raw(path("u.bin"), sv::parse_raw_spec("1x6:u8"), true); });
  expect_error(path("u.bin"), "1 to 3 spatial dims",
               [&] { sv::load_raw(path("u.bin"), sv::parse_raw_spec("1x1x2x3:u8"), false); });
  expect_error(path("u.bin"), "gives 3 spacings for 2 spatial axes", [&] {
    sv::load_raw(path("u.bin"), sv::parse_raw_spec("1x2x3:u8:spacing=1x1x1"), true);
  });
  expect_error(path("u.bin"), "too large", [&] {
    sv::load_raw(path("u.bin"), sv::parse_raw_spec("999999999x999999999x999999999:f64"), false);
  });
  expect_error(path("none.raw"), "cannot open",
               [&] { sv::load_raw(path("none.raw"), sv::parse_raw_spec("4:u8"), false); });

  // load_any with a spec: known extensions keep their format, others are raw.
  ArrayD a({2, 2});
  a[3] = 9;
  sv::save_npy(path("x.npy"), a, DType::F64, false);
  const sv::RawSpec spec = sv::parse_raw_spec("6:u8");
  EXPECT_EQ(sv::load_any(path("x.npy"), false, spec).array.vec(), a.vec());
  EXPECT_EQ(sv::load_any(path("u.bin"), false, spec).array.dims(), (std::vector<std::size_t>{6}));
  write_bytes(path("noext"), "abcdef");
  EXPECT_EQ(sv::load_any(path("noext"), false, spec).array[0], 'a');
  expect_error(path("noext"), "no file extension", [&] { sv::load_any(path("noext"), false); });
}

// ---------------------------------------------------------------------------------- nibabel

#ifndef SPLINEVIEW_PYTHON
#define SPLINEVIEW_PYTHON "/usr/bin/python3"
#endif

TEST_F(IoVolumeTest, NiftiNibabelOracle) {
  const std::string py = SPLINEVIEW_PYTHON;
  const std::string script = SPLINEVIEW_IO_TEST_DIR "/nibabel_oracle.py";
  if (std::system((py + " -c 'import nibabel, numpy' >/dev/null 2>&1").c_str()) != 0)
    GTEST_SKIP() << py << " has no nibabel (Debian: python3-nibabel, scripts/deps --test)";

  // nibabel writes; we read and must agree with what nibabel reads back.
  ASSERT_EQ(std::system((py + " " + script + " write " + dir_.string()).c_str()), 0);
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) {
    const std::string name = e.path().filename().string();
    const std::size_t at = name.find(".want.npy");
    if (at == std::string::npos) continue;
    const std::string stem = name.substr(0, at);
    const bool gz = stem.size() > 7 && stem.compare(stem.size() - 7, 7, "_nii_gz") == 0;
    const std::string file = path(stem + (gz ? ".nii.gz" : ".nii"));
    SCOPED_TRACE(file);
    const sv::Loaded got = sv::load_any(file, false);
    const sv::Loaded want = sv::load_npy(path(name), false);
    ASSERT_EQ(got.array.dims(), want.array.dims());
    std::istringstream zooms(read_bytes(path(stem + ".zooms.txt")));
    std::vector<double> spacing{std::istream_iterator<double>(zooms), {}};
    EXPECT_EQ(got.spacing, spacing);
    // nibabel scales in float32 when that holds the result; we scale in double.
    const bool scaled = stem.rfind("scaled", 0) == 0;
    for (std::size_t i = 0; i < got.array.size(); ++i) {
      if (scaled)
        ASSERT_NEAR(got.array[i], want.array[i], 1e-6 * (1 + std::fabs(want.array[i]))) << i;
      else
        ASSERT_EQ(got.array[i], want.array[i]) << i;
    }
    ++files;
  }
  EXPECT_EQ(files, 21);

  // We write; nibabel reads and compares with the .npy twins.
  std::mt19937 rng(2);
  int k = 0;
  for (DType dtype : {DType::U8, DType::U16, DType::F32, DType::F64}) {
    for (const auto& shape : std::vector<std::vector<std::size_t>>{{3, 4, 5}, {6, 7}}) {
      ArrayD a(shape);
      for (double& v : a.vec())
        v = dtype == DType::U8    ? double(rng() % 256)
            : dtype == DType::U16 ? double(rng() % 65536)
                                  : static_cast<double>(static_cast<float>(double(rng()) / 1e9));
      const std::vector<double> spacing =
          shape.size() == 3 ? std::vector<double>{2.5, 0.75, 0.5} : std::vector<double>{1.25, 3};
      const std::string stem = "o_" + std::to_string(k++);
      sv::save_nifti(path(stem + (k % 2 ? ".nii.gz" : ".nii")), a, dtype, spacing);
      sv::save_npy(path(stem + ".npy"), a, dtype, false);
      std::ostringstream s;
      s.precision(17);
      for (double v : spacing) s << v << ' ';
      write_bytes(path(stem + ".spacing.txt"), s.str());
    }
  }
  EXPECT_EQ(std::system((py + " " + script + " check " + dir_.string()).c_str()), 0);
}

}  // namespace
