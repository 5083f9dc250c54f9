// Tests of TIFF reading and writing (sv::load_tiff, sv::save_tiff; lib/src/io_tiff.cpp): round
// trips of every sample type, channel count and rank; files written here directly with libtiff
// (independently of save_tiff) in the layouts the reader must handle (strips and tiles, chunky
// and separate planes, every common compression and predictor, MINISWHITE, palette, pyramid
// pages, ImageJ hyperstacks, resolution units); and refusals (truncation, bombs, pages that
// differ, unsupported kinds) as one-line sv::Errors naming the file, with libtiff silent.
#include <gtest/gtest.h>
#include <tiffio.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "splineview/error.h"
#include "splineview/io.h"
#include "temp_dir_test.h"

namespace {

using sv::ArrayD;
using sv::DType;

class TiffTest : public svtest::TempDirTest {};

std::string read_bytes(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The message of the sv::Error that fn throws ("" when it throws none).
std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const sv::Error& e) {
    return e.what();
  }
  return "";
}

// Expects an sv::Error naming `path` and containing `part`, on one line, with nothing on stderr.
void expect_refused(const std::string& path, const std::string& part) {
  testing::internal::CaptureStderr();
  const std::string msg = error_of([&] { sv::load_tiff(path); });
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "") << "libtiff printed";
  ASSERT_NE(msg, "") << path << " was accepted";
  EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << msg;
  EXPECT_NE(msg.find(part), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

// A value for element i of type t that exercises the type's range exactly.
double sample_value(DType t, std::size_t i) {
  const double k = static_cast<double>(i % 97);
  switch (t) {
    case DType::Bool:
      return static_cast<double>(i % 2);
    case DType::U8:
      return std::fmod(k * 37, 256);
    case DType::I8:
      return std::fmod(k * 37, 256) - 128;
    case DType::U16:
      return std::fmod(k * 4099, 65536);
    case DType::I16:
      return std::fmod(k * 4099, 65536) - 32768;
    case DType::U32:
      return k * 44000000 + 7;
    case DType::I32:
      return k * 44000000 - 2147483647.0;
    case DType::U64:
      return k * 1e15 + 3;  // below 2^53: exact
    case DType::I64:
      return k * 1e14 - 4e15;
    case DType::F16:
      return (k - 48) * 0.25;
    case DType::F32:
      return (k - 48) * 0.1f;
    case DType::F64:
      return (k - 48) * 0.1 + 1e-12;
  }
  return 0;
}

ArrayD make_array(std::vector<std::size_t> dims, std::size_t channels, DType t) {
  ArrayD a(std::move(dims), channels);
  for (std::size_t i = 0; i < a.size(); ++i) {
    double v = sample_value(t, i);
    if (t == DType::F32) v = static_cast<double>(static_cast<float>(v));
    a[i] = v;
  }
  return a;
}

TEST_F(TiffTest, RoundTripEveryTypeChannelsAndRank) {
  const DType types[] = {DType::U8,  DType::I8,  DType::U16, DType::I16, DType::U32, DType::I32,
                         DType::U64, DType::I64, DType::F16, DType::F32, DType::F64, DType::Bool};
  for (DType t : types) {
    for (std::size_t channels : {1, 2, 3, 4}) {
      for (std::size_t rank : {2, 3}) {
        SCOPED_TRACE(std::string(sv::dtype_name(t)) + " channels " + std::to_string(channels) +
                     " rank " + std::to_string(rank));
        std::vector<std::size_t> dims =
            rank == 2 ? std::vector<std::size_t>{5, 7} : std::vector<std::size_t>{3, 5, 7};
        const ArrayD a = make_array(dims, channels, t);
        const std::string p = path("rt.tif");
        sv::save_tiff(p, a, t, channels > 1);
        const sv::Loaded l = sv::load_tiff(p);
        EXPECT_EQ(l.dtype, t == DType::Bool ? DType::U8 : t);
        EXPECT_EQ(l.array.dims(), a.dims());
        EXPECT_EQ(l.array.channels(), channels);
        EXPECT_EQ(l.channel_axis, channels > 1);
        ASSERT_EQ(l.array.size(), a.size());
        for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(l.array[i], a[i]) << "element " << i;
        EXPECT_FALSE(l.geometry.oriented());
        EXPECT_EQ(l.spacing, std::vector<double>(rank, 1.0));
      }
    }
  }
}

TEST_F(TiffTest, RoundTripSpacingInMillimetres) {
  const ArrayD a = make_array({4, 6, 5}, 1, DType::F32);
  const std::string p = path("sp.tiff");
  sv::save_tiff(p, a, DType::F32, false, std::vector<double>{2.5, 0.75, 0.5});
  const sv::Loaded l = sv::load_tiff(p);
  ASSERT_EQ(l.spacing.size(), 3u);
  EXPECT_DOUBLE_EQ(l.spacing[0], 2.5);
  EXPECT_NEAR(l.spacing[1], 0.75, 1e-6);  // X/YResolution are float32 rationals
  EXPECT_NEAR(l.spacing[2], 0.5, 1e-6);
  // Through load_any / save_any with a geometry.
  const std::string q = path("any.TIF");
  sv::save_any(q, a, DType::U16, false, sv::geometry_from_spacing({3, 1, 2}));
  const sv::Loaded m = sv::load_any(q, false);
  EXPECT_EQ(m.dtype, DType::U16);
  EXPECT_DOUBLE_EQ(m.spacing[0], 3);
  EXPECT_NEAR(m.spacing[2], 2, 1e-6);
  // Rank 1 is written as one row.
  ArrayD line({9});
  for (std::size_t i = 0; i < 9; ++i) line[i] = static_cast<double>(i);
  sv::save_tiff(p, line, DType::U8, false);
  const sv::Loaded r = sv::load_tiff(p);
  EXPECT_EQ(r.array.dims(), (std::vector<std::size_t>{1, 9}));
}

TEST_F(TiffTest, ValuesAreClampedAndRoundedOnSave) {
  ArrayD a({1, 4});
  a[0] = -3;
  a[1] = 2.6;
  a[2] = 300;
  a[3] = std::nan("");
  const std::string p = path("c.tif");
  sv::save_tiff(p, a, DType::U8, false);
  const sv::Loaded l = sv::load_tiff(p);
  EXPECT_EQ(l.array.vec(), (std::vector<double>{0, 3, 255, 0}));
}

TEST_F(TiffTest, FailedSaveLeavesTheTargetUntouched) {
  const std::string p = path("keep.tif");
  write_bytes(p, "precious");
  const ArrayD a = make_array({3, 3}, 1, DType::U8);
  const std::string msg = error_of([&] {
    sv::save_tiff(p, a, DType::U8, false, std::vector<double>{1, -1});
  });
  EXPECT_NE(msg.find("spacing"), std::string::npos) << msg;
  EXPECT_EQ(read_bytes(p), "precious");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_),
                          std::filesystem::directory_iterator()),
            1);
}

// ---- files written directly with libtiff ----

struct Spec {
  std::uint32_t w = 13, h = 11;
  std::uint16_t spp = 1, bps = 16, format = SAMPLEFORMAT_UINT;
  std::uint16_t photometric = PHOTOMETRIC_MINISBLACK, planar = PLANARCONFIG_CONTIG;
  std::uint16_t compression = COMPRESSION_NONE, predictor = 0;
  std::uint32_t tile = 0;            // tile side (multiple of 16), 0 = strips
  std::uint32_t rows_per_strip = 4;  // strips
  int pages = 1;
  std::uint32_t subfile = 0;
  std::string description;
  float xres = 0, yres = 0;
  std::uint16_t res_unit = 0;
  bool big = false;
};

// The value of sample (page, y, x, c) as written by write_spec (fits 8 bits).
double ref(std::size_t z, std::size_t y, std::size_t x, std::size_t c) {
  return static_cast<double>((z * 31 + y * 7 + x * 3 + c * 50) % 251);
}

void put(unsigned char* dst, const Spec& s, double v) {
  if (s.format == SAMPLEFORMAT_IEEEFP && s.bps == 32) {
    const float f = static_cast<float>(v);
    std::memcpy(dst, &f, 4);
  } else if (s.format == SAMPLEFORMAT_IEEEFP && s.bps == 64) {
    std::memcpy(dst, &v, 8);
  } else if (s.bps <= 8) {
    dst[0] = static_cast<unsigned char>(v);
  } else if (s.bps <= 16) {
    const std::uint16_t u = static_cast<std::uint16_t>(v);
    std::memcpy(dst, &u, 2);
  } else {
    const std::uint32_t u = static_cast<std::uint32_t>(v);
    std::memcpy(dst, &u, 4);
  }
}

std::string write_spec(const std::string& p, const Spec& s,
                       const std::function<void(TIFF*, int)>& extra = nullptr) {
  TIFF* tif = TIFFOpen(p.c_str(), s.big ? "w8" : "w");
  EXPECT_NE(tif, nullptr);
  if (!tif) return p;
  const std::size_t bytes = (s.bps + 7) / 8;
  const bool separate = s.planar == PLANARCONFIG_SEPARATE;
  for (int z = 0; z < s.pages; ++z) {
    TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, s.w);
    TIFFSetField(tif, TIFFTAG_IMAGELENGTH, s.h);
    TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, s.spp);
    TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, s.bps);
    TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT, s.format);
    TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, s.photometric);
    TIFFSetField(tif, TIFFTAG_PLANARCONFIG, s.planar);
    TIFFSetField(tif, TIFFTAG_COMPRESSION, s.compression);
    if (s.predictor) TIFFSetField(tif, TIFFTAG_PREDICTOR, s.predictor);
    if (s.subfile && z == 1) TIFFSetField(tif, TIFFTAG_SUBFILETYPE, s.subfile);
    if (!s.description.empty() && z == 0)
      TIFFSetField(tif, TIFFTAG_IMAGEDESCRIPTION, s.description.c_str());
    if (s.xres > 0) TIFFSetField(tif, TIFFTAG_XRESOLUTION, s.xres);
    if (s.yres > 0) TIFFSetField(tif, TIFFTAG_YRESOLUTION, s.yres);
    if (s.res_unit) TIFFSetField(tif, TIFFTAG_RESOLUTIONUNIT, s.res_unit);
    if ((s.spp == 2 || s.spp == 4) && s.photometric != PHOTOMETRIC_PALETTE) {
      const std::uint16_t extra_samples[1] = {EXTRASAMPLE_UNASSALPHA};
      TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, 1, extra_samples);
    }
    if (extra) extra(tif, z);
    const std::size_t planes = separate ? s.spp : 1, per = separate ? 1 : s.spp;
    if (s.tile) {
      TIFFSetField(tif, TIFFTAG_TILEWIDTH, s.tile);
      TIFFSetField(tif, TIFFTAG_TILELENGTH, s.tile);
      std::vector<unsigned char> buf(s.tile * s.tile * per * bytes);
      for (std::size_t pl = 0; pl < planes; ++pl)
        for (std::uint32_t ty = 0; ty < s.h; ty += s.tile)
          for (std::uint32_t tx = 0; tx < s.w; tx += s.tile) {
            std::fill(buf.begin(), buf.end(), 0);
            for (std::uint32_t y = ty; y < std::min(s.h, ty + s.tile); ++y)
              for (std::uint32_t x = tx; x < std::min(s.w, tx + s.tile); ++x)
                for (std::size_t c = 0; c < per; ++c)
                  put(&buf[(((y - ty) * s.tile + (x - tx)) * per + c) * bytes], s,
                      ref(z, y, x, separate ? pl : c));
            EXPECT_GE(TIFFWriteTile(tif, buf.data(), tx, ty, 0, static_cast<std::uint16_t>(pl)), 0);
          }
    } else {
      TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, s.rows_per_strip);
      std::vector<unsigned char> row(s.w * per * bytes);
      for (std::size_t pl = 0; pl < planes; ++pl)
        for (std::uint32_t y = 0; y < s.h; ++y) {
          for (std::uint32_t x = 0; x < s.w; ++x)
            for (std::size_t c = 0; c < per; ++c)
              put(&row[(x * per + c) * bytes], s, ref(z, y, x, separate ? pl : c));
          EXPECT_EQ(TIFFWriteScanline(tif, row.data(), y, static_cast<std::uint16_t>(pl)), 1);
        }
    }
    EXPECT_EQ(TIFFWriteDirectory(tif), 1);
  }
  TIFFClose(tif);
  return p;
}

// Sets the value of an IFD entry of type LONG and count 1 (little endian): StripByteCounts
// (279) by default, or StripOffsets (273).
bool forge_strip_byte_count(std::string* bytes, std::uint32_t v, std::uint16_t tag = 279) {
  const unsigned char want[8] = {static_cast<unsigned char>(tag & 0xff),
                                 static_cast<unsigned char>(tag >> 8),
                                 4,
                                 0,
                                 1,
                                 0,
                                 0,
                                 0};
  for (std::size_t i = 8; i + 12 <= bytes->size(); ++i)
    if (std::memcmp(bytes->data() + i, want, 8) == 0) {
      std::memcpy(&(*bytes)[i + 8], &v, 4);
      return true;
    }
  return false;
}

void expect_ref(const sv::Loaded& l, const Spec& s, int pages) {
  const std::size_t ch = s.spp;
  ASSERT_EQ(l.array.channels(), ch);
  ASSERT_EQ(l.array.points(), std::size_t{s.w} * s.h * static_cast<std::size_t>(pages));
  for (std::size_t z = 0; z < static_cast<std::size_t>(pages); ++z)
    for (std::size_t y = 0; y < s.h; ++y)
      for (std::size_t x = 0; x < s.w; ++x)
        for (std::size_t c = 0; c < ch; ++c)
          ASSERT_EQ(l.array[((z * s.h + y) * s.w + x) * ch + c], ref(z, y, x, c))
              << "z " << z << " y " << y << " x " << x << " c " << c;
}

TEST_F(TiffTest, ReadsStripsTilesPlanesCompressionsPredictors) {
  const std::uint16_t compressions[] = {COMPRESSION_NONE, COMPRESSION_LZW,
                                        COMPRESSION_ADOBE_DEFLATE, COMPRESSION_PACKBITS};
  int n = 0;
  for (std::uint16_t comp : compressions)
    for (std::uint32_t tile : {0u, 16u})
      for (int planar : {PLANARCONFIG_CONTIG, PLANARCONFIG_SEPARATE})
        for (int spp : {1, 3, 4})
          for (int bits : {8, 16, 32, -32, -64}) {
            Spec s;
            s.compression = comp;
            s.tile = tile;
            s.planar = static_cast<std::uint16_t>(planar);
            s.spp = static_cast<std::uint16_t>(spp);
            s.photometric = spp >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK;
            s.bps = static_cast<std::uint16_t>(bits < 0 ? -bits : bits);
            s.format = bits < 0 ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT;
            if (comp == COMPRESSION_LZW || comp == COMPRESSION_ADOBE_DEFLATE)
              s.predictor = bits < 0 ? PREDICTOR_FLOATINGPOINT : PREDICTOR_HORIZONTAL;
            s.pages = n % 3 == 0 ? 2 : 1;
            s.big = n % 5 == 0;
            SCOPED_TRACE("case " + std::to_string(n));
            const std::string p = write_spec(path("v" + std::to_string(n++) + ".tif"), s);
            const sv::Loaded l = sv::load_tiff(p);
            expect_ref(l, s, s.pages);
            EXPECT_EQ(l.array.rank(), s.pages > 1 ? 3u : 2u);
            const DType want = bits == 8     ? DType::U8
                               : bits == 16  ? DType::U16
                               : bits == 32  ? DType::U32
                               : bits == -32 ? DType::F32
                                             : DType::F64;
            EXPECT_EQ(l.dtype, want);
          }
}

TEST_F(TiffTest, SignedSamplesKeepTheirValues) {
  for (int bits : {8, 16, 32}) {
    Spec s;
    s.bps = static_cast<std::uint16_t>(bits);
    s.format = SAMPLEFORMAT_INT;
    const std::string p = path("s.tif");
    write_spec(p, s);
    const sv::Loaded l = sv::load_tiff(p);
    EXPECT_EQ(l.dtype, bits == 8 ? DType::I8 : bits == 16 ? DType::I16 : DType::I32);
    expect_ref(l, s, 1);  // the reference values are positive and fit int8
  }
  // Negative values through save_tiff's independent encoding path are in the round-trip test;
  // here a -1 written by libtiff directly.
  const std::string p = path("neg.tif");
  TIFF* tif = TIFFOpen(p.c_str(), "w");
  ASSERT_NE(tif, nullptr);
  TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, 2);
  TIFFSetField(tif, TIFFTAG_IMAGELENGTH, 1);
  TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, 16);
  TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_INT);
  TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
  std::int16_t row[2] = {-1, -32768};
  TIFFWriteScanline(tif, row, 0, 0);
  TIFFClose(tif);
  EXPECT_EQ(sv::load_tiff(p).array.vec(), (std::vector<double>{-1, -32768}));
}

TEST_F(TiffTest, MinIsWhiteKeepsStoredValues) {
  Spec s;
  s.bps = 8;
  s.photometric = PHOTOMETRIC_MINISWHITE;
  expect_ref(sv::load_tiff(write_spec(path("w.tif"), s)), s, 1);
}

TEST_F(TiffTest, PaletteExpandsToRgb) {
  Spec s;
  s.bps = 8;
  s.photometric = PHOTOMETRIC_PALETTE;
  std::vector<std::uint16_t> r(256), g(256), b(256);
  for (int i = 0; i < 256; ++i) {
    r[i] = static_cast<std::uint16_t>(i * 257);
    g[i] = static_cast<std::uint16_t>((255 - i) * 257);
    b[i] = static_cast<std::uint16_t>((i / 2) * 257);
  }
  const std::string p = write_spec(path("pal.tif"), s, [&](TIFF* tif, int) {
    TIFFSetField(tif, TIFFTAG_COLORMAP, r.data(), g.data(), b.data());
  });
  const sv::Loaded l = sv::load_tiff(p);
  EXPECT_EQ(l.dtype, DType::U8);
  ASSERT_EQ(l.array.channels(), 3u);
  for (std::size_t y = 0; y < s.h; ++y)
    for (std::size_t x = 0; x < s.w; ++x) {
      const int k = static_cast<int>(ref(0, y, x, 0));
      ASSERT_EQ(l.array.at2(y, x, 0), k);
      ASSERT_EQ(l.array.at2(y, x, 1), 255 - k);
      ASSERT_EQ(l.array.at2(y, x, 2), k / 2);
    }
  // A map with 16-bit colours stays 16-bit.
  r[1] = 1000;
  write_spec(p, s, [&](TIFF* tif, int) {
    TIFFSetField(tif, TIFFTAG_COLORMAP, r.data(), g.data(), b.data());
  });
  const sv::Loaded m = sv::load_tiff(p);
  EXPECT_EQ(m.dtype, DType::U16);
  EXPECT_EQ(m.array.at2(0, 0, 1), 65535);
}

TEST_F(TiffTest, ReducedResolutionPagesAreSkippedAndDifferingPagesRefused) {
  Spec s;
  s.bps = 8;
  s.pages = 3;
  s.subfile = FILETYPE_REDUCEDIMAGE;  // page 1 is a reduced copy (same size here; skipped)
  const sv::Loaded l = sv::load_tiff(write_spec(path("pyr.tif"), s));
  EXPECT_EQ(l.array.dims(), (std::vector<std::size_t>{2, 11, 13}));
  for (std::size_t x = 0; x < 13; ++x) EXPECT_EQ(l.array.at3(1, 0, x), ref(2, 0, x, 0));

  // A second page of another size.
  const std::string p = path("differ.tif");
  Spec d;
  d.pages = 2;
  write_spec(p, d, [&](TIFF* tif, int z) {
    if (z == 1) TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, 12);
  });
  expect_refused(p, "TIFF pages differ: page 1 is 12x11 uint16");
}

TEST_F(TiffTest, ImageJHyperstacks) {
  Spec s;
  s.bps = 16;
  s.pages = 6;
  s.description = "ImageJ=1.53t\nimages=6\nchannels=2\nslices=3\nhyperstack=true\nmode=composite\n";
  const sv::Loaded l = sv::load_tiff(write_spec(path("hs.tif"), s));
  EXPECT_EQ(l.array.dims(), (std::vector<std::size_t>{3, 11, 13}));
  ASSERT_EQ(l.array.channels(), 2u);
  for (std::size_t z = 0; z < 3; ++z)
    for (std::size_t c = 0; c < 2; ++c) EXPECT_EQ(l.array.at3(z, 2, 5, c), ref(z * 2 + c, 2, 5, 0));

  s.description = "ImageJ=1.53t\nimages=6\nslices=3\nframes=2\n";
  expect_refused(write_spec(path("frames.tif"), s), "2 frames");
  s.description = "ImageJ=1.53t\nimages=6\nchannels=6\n";
  expect_refused(write_spec(path("six.tif"), s), "6 channels");
  s.description = "ImageJ=1.53t\nimages=9\n";
  expect_refused(write_spec(path("nine.tif"), s), "images=9");
}

TEST_F(TiffTest, SpacingFromResolutionAndImageJ) {
  Spec s;
  s.bps = 8;
  s.pages = 2;
  s.xres = 4;
  s.yres = 2;
  s.res_unit = RESUNIT_CENTIMETER;
  sv::Loaded l = sv::load_tiff(write_spec(path("cm.tif"), s));
  EXPECT_NEAR(l.spacing[2], 2.5, 1e-9);
  EXPECT_NEAR(l.spacing[1], 5, 1e-9);
  EXPECT_EQ(l.spacing[0], 1);

  s.res_unit = RESUNIT_INCH;
  l = sv::load_tiff(write_spec(path("inch.tif"), s));
  EXPECT_NEAR(l.spacing[2], 25.4 / 4, 1e-9);

  s.res_unit = RESUNIT_NONE;
  s.description = "ImageJ=1.53t\nimages=2\nslices=2\nunit=micron\nspacing=3.5\n";
  l = sv::load_tiff(write_spec(path("um.tif"), s));
  EXPECT_NEAR(l.spacing[0], 3.5e-3, 1e-12);
  EXPECT_NEAR(l.spacing[1], 0.5e-3, 1e-12);
  EXPECT_NEAR(l.spacing[2], 0.25e-3, 1e-12);

  s.description = "ImageJ=1.53t\nimages=2\nslices=2\nunit=pixel\nspacing=3.5\n";
  l = sv::load_tiff(write_spec(path("raw.tif"), s));
  EXPECT_EQ(l.spacing, (std::vector<double>{3.5, 0.5, 0.25}));  // no unit: raw values
}

TEST_F(TiffTest, Refusals) {
  // Not a TIFF.
  write_bytes(path("no.tif"), "not a tiff at all");
  expect_refused(path("no.tif"), "not a TIFF file");

  // Truncated: every cut of a small compressed and an uncompressed file fails cleanly.
  for (int comp : {COMPRESSION_NONE, COMPRESSION_ADOBE_DEFLATE}) {
    Spec s;
    s.compression = static_cast<std::uint16_t>(comp);
    s.pages = 2;
    const std::string full = read_bytes(write_spec(path("full.tif"), s));
    for (std::size_t cut = 0; cut < full.size(); cut += 7) {
      const std::string p = path("cut.tif");
      write_bytes(p, full.substr(0, cut));
      testing::internal::CaptureStderr();
      const std::string msg = error_of([&] { sv::load_tiff(p); });
      EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
      // A cut inside the second page's data may leave a valid first page only when the cut
      // removes the second IFD entirely; the file then reads as one page, otherwise it fails.
      if (!msg.empty()) {
        EXPECT_EQ(msg.rfind(p + ": ", 0), 0u) << msg;
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
      }
    }
  }

  // Uncompressed strips shorter than the image: refused before any pixel memory.
  {
    Spec s;
    s.w = 64;
    s.h = 64;
    s.bps = 8;
    s.rows_per_strip = 64;
    const std::string p = write_spec(path("short.tif"), s);
    std::string bytes = read_bytes(p);
    // The strip starts 100 bytes before the end of the file: most of it is missing.
    ASSERT_TRUE(
        forge_strip_byte_count(&bytes, static_cast<std::uint32_t>(bytes.size() - 100), 273));
    write_bytes(p, bytes);
    expect_refused(p, "declares 4096 bytes of samples but its strips or tiles hold only 100");
  }

  // Size limit: a 2000000-pixel-wide header.
  {
    Spec s;
    s.w = 2000000;
    s.h = 1;
    s.bps = 8;
    s.rows_per_strip = 1;
    expect_refused(write_spec(path("wide.tif"), s), "pixels per side");
  }

  // Bomb: 4096 x 4096 PackBits whose byte count is forged small (a real one would need at
  // least 1/64 of the 16 MiB).
  {
    Spec s;
    s.w = 4096;
    s.h = 4096;
    s.bps = 8;
    s.rows_per_strip = 4096;
    s.compression = COMPRESSION_PACKBITS;
    const std::string p = write_spec(path("bomb.tif"), s);
    std::string bytes = read_bytes(p);
    ASSERT_TRUE(forge_strip_byte_count(&bytes, 100));
    write_bytes(p, bytes);
    expect_refused(p, "strips or tiles hold only 100 bytes (PackBits");
  }

  // Unsupported kinds.
  {
    Spec s;
    s.bps = 8;
    s.spp = 4;
    s.photometric = PHOTOMETRIC_SEPARATED;
    expect_refused(write_spec(path("cmyk.tif"), s), "photometric interpretation 5");
    Spec c;
    c.format = SAMPLEFORMAT_COMPLEXINT;
    c.bps = 32;
    expect_refused(write_spec(path("cplx.tif"), c), "SampleFormat 5");
    Spec b;
    b.bps = 12;
    expect_refused(write_spec(path("b12.tif"), b), "12-bit integer samples");
  }
}

TEST_F(TiffTest, LoadAnyAndErrorsNameTheFormat) {
  const ArrayD a = make_array({2, 3}, 1, DType::U8);
  sv::save_any(path("a.tiff"), a, DType::U8, false);
  EXPECT_EQ(sv::load_any(path("a.tiff"), false).array.vec(), a.vec());
  const std::string msg = error_of([&] { sv::load_any(path("a.xyz"), false); });
  EXPECT_NE(msg.find(".tif"), std::string::npos) << msg;
}

}  // namespace
