// Tests of image decoding (sv::load_image): PNG through libpng with every checksum verified
// and complete data required, JPEG through libjpeg-turbo with warnings as errors and missing
// tables refused, BMP/TGA/PNM/GIF/HDR through stb_image behind header walks, and the size
// limits checked before any pixel memory exists. The PNG, PGM/PPM and GIF files are written by
// hand here (an encoder independent of the decoder under test); BMP, TGA and HDR by
// stb_image_write.
#include <gtest/gtest.h>
#include <stb/stb_image.h>
#include <stb/stb_image_write.h>
#include <sys/resource.h>
#include <zlib.h>

#include <cstdio>
// clang-format off
#include <jpeglib.h>
// clang-format on

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
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

class ImageDecodeTest : public svtest::TempDirTest {};

// Loads `path` expecting sv::Error; returns its message (empty when none was thrown). Also
// checks the message starts with the path, is one line, and nothing reached stderr/stdout.
std::string load_error(const std::string& path) {
  std::string msg;
  testing::internal::CaptureStderr();
  testing::internal::CaptureStdout();
  try {
    sv::load_image(path);
  } catch (const sv::Error& e) {
    msg = e.what();
  }
  const std::string err = testing::internal::GetCapturedStderr();
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(err, "") << "the decoder printed to stderr";
  EXPECT_EQ(out, "") << "the decoder printed to stdout";
  if (msg.empty()) {
    ADD_FAILURE() << path << " loaded; expected an error";
    return msg;
  }
  EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  return msg;
}

void expect_refused(const std::string& path, const std::vector<std::string>& needles) {
  const std::string msg = load_error(path);
  for (const std::string& n : needles)
    EXPECT_NE(msg.find(n), std::string::npos) << "message lacks '" << n << "': " << msg;
}

long max_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// ----------------------------------------------------------------- a PNG writer (by hand)

void put32(std::string* s, std::uint32_t v) {
  for (int k = 3; k >= 0; --k) s->push_back(static_cast<char>((v >> (8 * k)) & 0xffu));
}

std::string chunk(const std::string& type, const std::string& data) {
  std::string c;
  put32(&c, static_cast<std::uint32_t>(data.size()));
  const std::string body = type + data;
  c += body;
  put32(&c, static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(body.data()),
                                             static_cast<uInt>(body.size()))));
  return c;
}

struct PngSpec {
  std::size_t w = 0, h = 0;
  int color_type = 0;  // 0 grey, 2 RGB, 3 palette, 4 grey+alpha, 6 RGBA
  int bits = 8;
  bool interlace = false;
  std::vector<std::uint16_t> samples;  // h * w * channels (palette: indices)
  std::string plte, trns, text;        // optional chunks (text: a tEXt chunk's data)
  int level = 9;                       // zlib level (0: stored blocks)
  std::size_t idat_split = 0;          // > 0: IDAT chunks of this many bytes
  bool iend = true;
};

int png_channels(int color_type) {
  switch (color_type) {
    case 2:
      return 3;
    case 4:
      return 2;
    case 6:
      return 4;
    default:
      return 1;
  }
}

// The filtered (filter type 0) image data: one row of each pass (Adam7) or of the image.
std::string png_raw(const PngSpec& s) {
  const std::size_t c = static_cast<std::size_t>(png_channels(s.color_type));
  struct Pass {
    std::size_t x0, y0, dx, dy;
  };
  std::vector<Pass> passes = {{0, 0, 1, 1}};
  if (s.interlace)
    passes = {{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4},
              {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}};
  std::string raw;
  for (const Pass& p : passes) {
    if (p.x0 >= s.w || p.y0 >= s.h) continue;  // empty pass: no rows at all
    for (std::size_t y = p.y0; y < s.h; y += p.dy) {
      raw.push_back('\0');
      unsigned acc = 0;
      int nbits = 0;
      for (std::size_t x = p.x0; x < s.w; x += p.dx)
        for (std::size_t k = 0; k < c; ++k) {
          const unsigned v = s.samples[(y * s.w + x) * c + k];
          if (s.bits == 16) {
            raw.push_back(static_cast<char>(v >> 8));
            raw.push_back(static_cast<char>(v & 0xffu));
          } else {
            acc = (acc << s.bits) | v;
            nbits += s.bits;
            if (nbits == 8) {
              raw.push_back(static_cast<char>(acc));
              acc = 0;
              nbits = 0;
            }
          }
        }
      if (nbits > 0) raw.push_back(static_cast<char>(acc << (8 - nbits)));
    }
  }
  return raw;
}

std::string zlib_compress(const std::string& raw, int level) {
  uLongf n = compressBound(static_cast<uLong>(raw.size()));
  std::string z(n, '\0');
  EXPECT_EQ(
      compress2(reinterpret_cast<Bytef*>(&z[0]), &n, reinterpret_cast<const Bytef*>(raw.data()),
                static_cast<uLong>(raw.size()), level),
      Z_OK);
  z.resize(n);
  return z;
}

std::string png_ihdr(std::size_t w, std::size_t h, int bits, int color_type, bool interlace) {
  std::string ihdr;
  put32(&ihdr, static_cast<std::uint32_t>(w));
  put32(&ihdr, static_cast<std::uint32_t>(h));
  ihdr += static_cast<char>(bits);
  ihdr += static_cast<char>(color_type);
  ihdr += std::string("\0\0", 2);
  ihdr += static_cast<char>(interlace ? 1 : 0);
  return ihdr;
}

std::string png_from_zlib(const PngSpec& s, const std::string& z) {
  std::string f("\x89PNG\r\n\x1a\n", 8);
  f += chunk("IHDR", png_ihdr(s.w, s.h, s.bits, s.color_type, s.interlace));
  if (!s.text.empty()) f += chunk("tEXt", s.text);
  if (!s.plte.empty()) f += chunk("PLTE", s.plte);
  if (!s.trns.empty()) f += chunk("tRNS", s.trns);
  const std::size_t step = s.idat_split ? s.idat_split : z.size();
  for (std::size_t i = 0; i < z.size(); i += step) f += chunk("IDAT", z.substr(i, step));
  if (s.iend) f += chunk("IEND", "");
  return f;
}

std::string make_png(const PngSpec& s) {
  return png_from_zlib(s, zlib_compress(png_raw(s), s.level));
}

// Offset of the first byte of the data of the first chunk of `type`.
std::size_t chunk_data(const std::string& png, const std::string& type) {
  const std::size_t at = png.find(type);
  EXPECT_NE(at, std::string::npos) << type;
  return at + 4;
}

void expect_values(const sv::Loaded& l, std::size_t h, std::size_t w, std::size_t c,
                   const std::vector<double>& want) {
  ASSERT_EQ(l.array.dims(), (std::vector<std::size_t>{h, w}));
  ASSERT_EQ(l.array.channels(), c);
  ASSERT_EQ(l.array.size(), want.size());
  EXPECT_EQ(l.channel_axis, c > 1);
  for (std::size_t i = 0; i < want.size(); ++i) ASSERT_EQ(l.array[i], want[i]) << "value " << i;
}

PngSpec rgb_ramp(std::size_t w, std::size_t h) {
  PngSpec s;
  s.w = w;
  s.h = h;
  s.color_type = 2;
  for (std::size_t i = 0; i < w * h * 3; ++i)
    s.samples.push_back(static_cast<std::uint16_t>((i * 37 + 11) % 256));
  return s;
}

// The values a decoder must give: the stored samples (`max`, the type's full scale, is only
// checked: every sample must fit it).
std::vector<double> scaled(const std::vector<std::uint16_t>& v, double max) {
  std::vector<double> out;
  for (std::uint16_t x : v) {
    EXPECT_LE(x, max);
    out.push_back(x);
  }
  return out;
}

// ---------------------------------------------------------------------------------- PNG

TEST_F(ImageDecodeTest, PngHandWrittenLoadsExactly) {
  PngSpec s = rgb_ramp(13, 9);
  write_bytes(path("a.png"), make_png(s));
  const sv::Loaded l = sv::load_image(path("a.png"));
  EXPECT_EQ(l.dtype, DType::U8);
  expect_values(l, 9, 13, 3, scaled(s.samples, 255.0));
}

// A flipped byte in the image data of an IDAT chunk (stored deflate blocks, so zlib itself
// cannot notice and the pixels alone would silently change): the chunk CRC must refuse it.
TEST_F(ImageDecodeTest, PngCrcErrorInImageDataRefused) {
  PngSpec s = rgb_ramp(16, 16);
  s.level = 0;
  s.idat_split = 400;  // the first IDAT holds image bytes only; the Adler-32 sits in the last
  std::string f = make_png(s);
  write_bytes(path("ok.png"), f);
  expect_values(sv::load_image(path("ok.png")), 16, 16, 3, scaled(s.samples, 255.0));
  f[chunk_data(f, "IDAT") + 200] ^= 0x10;
  write_bytes(path("flip.png"), f);
  expect_refused(path("flip.png"), {"corrupt PNG", "IDAT", "CRC"});

  // Compressed data with a flipped byte: refused too (by the CRC or by zlib).
  PngSpec z = rgb_ramp(32, 32);
  std::string g = make_png(z);
  g[chunk_data(g, "IDAT") + 20] ^= 0x01;
  write_bytes(path("flipz.png"), g);
  expect_refused(path("flipz.png"), {"corrupt PNG"});
}

TEST_F(ImageDecodeTest, PngCrcErrorInAncillaryChunkRefused) {
  PngSpec s = rgb_ramp(8, 8);
  s.text = std::string("Comment\0made by hand", 20);
  std::string f = make_png(s);
  write_bytes(path("ok.png"), f);
  EXPECT_NO_THROW(sv::load_image(path("ok.png")));
  f[chunk_data(f, "tEXt") + 12] ^= 0x20;
  write_bytes(path("flip.png"), f);
  expect_refused(path("flip.png"), {"corrupt PNG", "tEXt", "CRC error"});
}

// The zlib stream's own checksum (Adler-32) is verified: wrong Adler-32 with correct CRCs.
TEST_F(ImageDecodeTest, PngAdlerErrorRefused) {
  PngSpec s = rgb_ramp(8, 8);
  s.level = 0;
  std::string z = zlib_compress(png_raw(s), 0);
  z[z.size() - 1] ^= 0x01;
  write_bytes(path("adler.png"), png_from_zlib(s, z));
  expect_refused(path("adler.png"), {"corrupt PNG"});
}

TEST_F(ImageDecodeTest, PngTruncatedDataOrMissingIendRefused) {
  PngSpec s = rgb_ramp(24, 24);
  const std::string z = zlib_compress(png_raw(s), 9);
  // The zlib stream cut in half, the chunks themselves intact (CRCs right, IEND present).
  write_bytes(path("half.png"), png_from_zlib(s, z.substr(0, z.size() / 2)));
  expect_refused(path("half.png"), {"corrupt PNG"});
  // Complete image data, no IEND.
  PngSpec noend = s;
  noend.iend = false;
  write_bytes(path("noend.png"), make_png(noend));
  expect_refused(path("noend.png"), {"corrupt PNG", "truncated"});
  // The file cut anywhere: always refused, never partial pixels.
  const std::string whole = make_png(s);
  for (std::size_t len = 8; len < whole.size(); len += 7) {
    write_bytes(path("cut.png"), whole.substr(0, len));
    const std::string msg = load_error(path("cut.png"));
    EXPECT_TRUE(msg.find("corrupt PNG") != std::string::npos ||
                msg.find("truncated file") != std::string::npos)
        << msg;
  }
}

TEST_F(ImageDecodeTest, Png16BitKeepsSixteenBits) {
  PngSpec s;
  s.w = 3;
  s.h = 2;
  s.color_type = 0;
  s.bits = 16;
  s.samples = {0x1234, 0x0001, 0xfffe, 0x8001, 0x00ff, 0xabcd};  // none is a multiple of 257
  write_bytes(path("g16.png"), make_png(s));
  const sv::Loaded l = sv::load_image(path("g16.png"));
  EXPECT_EQ(l.dtype, DType::U16);
  expect_values(l, 2, 3, 1, scaled(s.samples, 65535.0));

  PngSpec rgba = s;
  rgba.color_type = 6;
  rgba.samples.clear();
  for (std::size_t i = 0; i < 24; ++i)
    rgba.samples.push_back(static_cast<std::uint16_t>(i * 2731 + 3));
  rgba.interlace = true;
  write_bytes(path("rgba16.png"), make_png(rgba));
  const sv::Loaded l4 = sv::load_image(path("rgba16.png"));
  EXPECT_EQ(l4.dtype, DType::U16);
  expect_values(l4, 2, 3, 4, scaled(rgba.samples, 65535.0));
}

// Palette, low bit depths, tRNS and interlacing decode to the pixels of the straight image.
TEST_F(ImageDecodeTest, PngPaletteLowBitAndInterlacedMatchStraight) {
  std::mt19937 rng(7);
  const std::size_t w = 19, h = 11;  // odd sizes: partial bytes and every Adam7 pass uneven
  for (int bits : {1, 2, 4, 8}) {
    SCOPED_TRACE("bits " + std::to_string(bits));
    const unsigned levels = 1u << bits;
    std::vector<std::uint16_t> idx(w * h);
    for (auto& v : idx) v = static_cast<std::uint16_t>(rng() % levels);
    for (bool interlace : {false, true}) {
      SCOPED_TRACE(interlace ? "interlaced" : "straight");
      // Grey at this depth loads as uint8 (libpng widens it, as PIL and imageio do): value v
      // reads as v * 255 / (2^bits - 1), exact for 1, 2 and 4 bits (x255, x85, x17).
      PngSpec g;
      g.w = w;
      g.h = h;
      g.bits = bits;
      g.interlace = interlace;
      g.samples = idx;
      write_bytes(path("g.png"), make_png(g));
      const sv::Loaded lg = sv::load_image(path("g.png"));
      EXPECT_EQ(lg.dtype, DType::U8);
      std::vector<std::uint16_t> widened;
      for (std::uint16_t v : idx)
        widened.push_back(static_cast<std::uint16_t>(v * 255 / (levels - 1)));
      expect_values(lg, h, w, 1, scaled(widened, 255.0));

      // Palette at this depth: entries k -> (k*7, 255-k, k*3) mod 256, so the same as RGB.
      PngSpec p = g;
      p.color_type = 3;
      std::vector<std::uint16_t> rgb;
      for (unsigned k = 0; k < levels; ++k) {
        p.plte += static_cast<char>((k * 7) % 256);
        p.plte += static_cast<char>(255 - k);
        p.plte += static_cast<char>((k * 3) % 256);
      }
      for (std::uint16_t k : idx) {
        rgb.push_back(static_cast<std::uint16_t>((k * 7) % 256));
        rgb.push_back(static_cast<std::uint16_t>(255 - k));
        rgb.push_back(static_cast<std::uint16_t>((k * 3) % 256));
      }
      write_bytes(path("p.png"), make_png(p));
      expect_values(sv::load_image(path("p.png")), h, w, 3, scaled(rgb, 255.0));

      // The same RGB written straight (8-bit RGB) and read back: identical.
      PngSpec r;
      r.w = w;
      r.h = h;
      r.color_type = 2;
      r.interlace = interlace;
      r.samples = rgb;
      write_bytes(path("r.png"), make_png(r));
      expect_values(sv::load_image(path("r.png")), h, w, 3, scaled(rgb, 255.0));

      // Palette with tRNS: alpha per entry (k * 5 % 256; entries beyond tRNS are opaque).
      PngSpec t = p;
      for (unsigned k = 0; k < std::min(levels, 3u); ++k)
        t.trns += static_cast<char>((k * 5) % 256);
      std::vector<std::uint16_t> rgba;
      for (std::size_t i = 0; i < idx.size(); ++i) {
        for (int c = 0; c < 3; ++c) rgba.push_back(rgb[3 * i + static_cast<std::size_t>(c)]);
        rgba.push_back(static_cast<std::uint16_t>(idx[i] < 3 ? (idx[i] * 5) % 256 : 255));
      }
      write_bytes(path("t.png"), make_png(t));
      expect_values(sv::load_image(path("t.png")), h, w, 4, scaled(rgba, 255.0));
    }
  }
}

TEST_F(ImageDecodeTest, PngImplausibleOrOversizedDeclaredSizeRefused) {
  // A valid 8x8 grey PNG whose IHDR claims 100000 x 100000 (10 GB of pixels): a few hundred
  // bytes cannot inflate to that (deflate: 1032:1 at most).
  PngSpec s;
  s.w = 8;
  s.h = 8;
  s.samples.assign(64, 7);
  const std::string z = zlib_compress(png_raw(s), 9);
  std::string f("\x89PNG\r\n\x1a\n", 8);
  f += chunk("IHDR", png_ihdr(100000, 100000, 8, 0, false));
  f += chunk("IDAT", z);
  f += chunk("IEND", "");
  write_bytes(path("bomb.png"), f);
  const long before = max_rss_kib();
  expect_refused(path("bomb.png"),
                 {"100000 x 100000", std::to_string(f.size()) + " bytes", "1032"});
  EXPECT_LT(max_rss_kib() - before, 64 * 1024) << "KiB of peak RSS growth";

  // More values than the limit, whatever the file size.
  std::string big("\x89PNG\r\n\x1a\n", 8);
  big += chunk("IHDR", png_ihdr(20000, 20000, 8, 2, false));
  big += chunk("IDAT", z);
  big += chunk("IDAT", std::string(1200000, 'x'));  // enough image data for 1032:1
  big += chunk("IEND", "");
  write_bytes(path("big.png"), big);
  expect_refused(path("big.png"), {"20000 x 20000", "limit", std::to_string(sv::kImageMaxValues)});
}

// ---------------------------------------------------------------------------------- JPEG

std::string noise_jpeg(const std::string& p, std::size_t w, std::size_t h, std::size_t c,
                       unsigned seed) {
  ArrayD a({h, w}, c);
  std::mt19937 rng(seed);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(rng() % 256);
  sv::save_image(p, a, 8);
  return read_bytes(p);
}

// Offset of marker 0xFF `m` (searched from the start; only for the header markers here).
std::size_t marker(const std::string& j, unsigned char m) {
  for (std::size_t i = 2; i + 1 < j.size(); ++i)
    if (static_cast<unsigned char>(j[i]) == 0xff && static_cast<unsigned char>(j[i + 1]) == m)
      return i;
  ADD_FAILURE() << "no marker " << static_cast<int>(m);
  return 0;
}

std::size_t seg_len(const std::string& j, std::size_t at) {
  return (static_cast<unsigned char>(j[at + 2]) << 8 | static_cast<unsigned char>(j[at + 3])) + 2u;
}

TEST_F(ImageDecodeTest, JpegForgedHugeFrameRefusedBeforeAllocating) {
  std::string j = noise_jpeg(path("s.jpg"), 16, 16, 3, 1);
  const std::size_t sof = marker(j, 0xc0);
  for (std::size_t k : {5u, 7u}) {  // height, width: 16000 = 0x3e80
    j[sof + k] = static_cast<char>(0x3e);
    j[sof + k + 1] = static_cast<char>(0x80);
  }
  write_bytes(path("bomb.jpg"), j);
  const long before = max_rss_kib();
  expect_refused(path("bomb.jpg"),
                 {"16000 x 16000", "file of " + std::to_string(j.size()) + " bytes"});
  EXPECT_LT(max_rss_kib() - before, 64 * 1024) << "KiB of peak RSS growth";
}

TEST_F(ImageDecodeTest, JpegTruncatedWithEndMarkerRefused) {
  const std::string j = noise_jpeg(path("n.jpg"), 64, 64, 3, 2);
  EXPECT_NO_THROW(sv::load_image(path("n.jpg")));
  const std::size_t sos = marker(j, 0xda);
  const std::size_t data = sos + seg_len(j, sos);
  std::string cut = j.substr(0, data + (j.size() - data) / 2);
  while (!cut.empty() && static_cast<unsigned char>(cut.back()) == 0xff) cut.pop_back();
  write_bytes(path("cut_eoi.jpg"), cut + "\xff\xd9");
  expect_refused(path("cut_eoi.jpg"), {"corrupt JPEG: ", "Corrupt JPEG data"});
  // Cut without an end marker.
  write_bytes(path("cut.jpg"), cut);
  expect_refused(path("cut.jpg"), {"corrupt JPEG: ", "truncated"});
}

TEST_F(ImageDecodeTest, JpegMissingQuantisationOrHuffmanTableRefused) {
  const std::string j = noise_jpeg(path("n.jpg"), 24, 24, 3, 3);
  for (const unsigned char m :
       {static_cast<unsigned char>(0xdb),
        static_cast<unsigned char>(0xc4)}) {  // DQT, DHT: remove every such segment
    std::string k = j;
    for (;;) {
      const std::size_t at = k.find(std::string("\xff") + static_cast<char>(m));
      if (at == std::string::npos || at > marker(k, 0xda)) break;
      k.erase(at, seg_len(k, at));
    }
    const std::string p = path(m == 0xdb ? "nodqt.jpg" : "nodht.jpg");
    write_bytes(p, k);
    expect_refused(p, {"corrupt JPEG: ", m == 0xdb ? "quantisation table 0" : "Huffman table DC 0",
                       "not defined"});
  }
}

TEST_F(ImageDecodeTest, JpegRoundTripAndGreyThroughLibjpeg) {
  ArrayD a({40, 56}, 3);
  for (std::size_t y = 0; y < 40; ++y)
    for (std::size_t x = 0; x < 56; ++x)
      for (std::size_t c = 0; c < 3; ++c)
        a.at2(y, x, c) =
            255.0 * (0.5 + 0.4 * std::sin(static_cast<double>(x * (c + 1) + 2 * y) / 9.0));
  sv::save_image(path("r.jpg"), a, 8);
  const sv::Loaded l = sv::load_image(path("r.jpg"));
  EXPECT_EQ(l.dtype, DType::U8);
  ASSERT_EQ(l.array.dims(), a.dims());
  ASSERT_EQ(l.array.channels(), 3u);
  double max_err = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    max_err = std::max(max_err, std::fabs(l.array[i] - a[i]));
  EXPECT_LT(max_err, 0.04 * 255);
}

// A JPEG whose entropy data is damaged mid-stream (not at its end): libjpeg's "corrupt data"
// warning is an error.
TEST_F(ImageDecodeTest, JpegCorruptEntropyDataRefusedOrExact) {
  const std::string j = noise_jpeg(path("n.jpg"), 48, 48, 3, 4);
  const std::size_t sos = marker(j, 0xda);
  const std::size_t data = sos + seg_len(j, sos);
  std::string k = j;
  // Insert a marker in the middle of the scan: "premature end of data segment".
  k.insert(data + (j.size() - data) / 2, "\xff\xd0");
  write_bytes(path("rst.jpg"), k);
  expect_refused(path("rst.jpg"), {"corrupt JPEG: "});
}

// Padding the file (a comment segment, an ancillary chunk) does not make a forged size
// plausible: the bound counts the image data only.
TEST_F(ImageDecodeTest, PaddingDoesNotMakeAForgedSizePlausible) {
  std::string j = noise_jpeg(path("s.jpg"), 16, 16, 3, 1);
  const std::size_t sof = marker(j, 0xc0);
  for (std::size_t k : {5u, 7u}) {
    j[sof + k] = static_cast<char>(0x3e);
    j[sof + k + 1] = static_cast<char>(0x80);
  }
  std::string com = "\xff\xfe\xff\xff" + std::string(65533, 'c');
  std::string padded = j.substr(0, 2);
  for (int i = 0; i < 10; ++i) padded += com;  // 655 KB of comments, more than 16000^2/512
  padded += j.substr(2);
  write_bytes(path("padded.jpg"), padded);
  const long before = max_rss_kib();
  expect_refused(path("padded.jpg"), {"16000 x 16000", "bytes of image data"});
  EXPECT_LT(max_rss_kib() - before, 64 * 1024) << "KiB of peak RSS growth";

  PngSpec s;
  s.w = 8;
  s.h = 8;
  s.samples.assign(64, 7);
  std::string f("\x89PNG\r\n\x1a\n", 8);
  f += chunk("IHDR", png_ihdr(16000, 16000, 8, 0, false));
  f += chunk("prVt", std::string(300000, 'p'));
  f += chunk("IDAT", zlib_compress(png_raw(s), 9));
  f += chunk("IEND", "");
  write_bytes(path("padded.png"), f);
  expect_refused(path("padded.png"), {"16000 x 16000", "bytes of image data", "1032"});
}

// Real and extreme images pass the bounds: the bundled photographs (libpng's pixels equal
// stb_image's, an independent decoder), the coffee photograph as JPEG (libjpeg within 4 levels
// of stb_image), and flat images, which compress best (zlib level 9, JPEG quality 95).
TEST_F(ImageDecodeTest, RealAndFlatImagesPassTheBounds) {
  for (const char* name : {"coffee.png", "ascent.png"}) {
    SCOPED_TRACE(name);
    const std::string p = std::string(SPLINEVIEW_IO_TEST_DIR) + "/../../assets/" + name;
    const sv::Loaded l = sv::load_image(p);
    int w = 0, h = 0, c = 0;
    unsigned char* ref = stbi_load(p.c_str(), &w, &h, &c, 0);
    ASSERT_NE(ref, nullptr);
    std::vector<double> want;
    for (std::size_t i = 0; i < static_cast<std::size_t>(w * h * c); ++i) want.push_back(ref[i]);
    stbi_image_free(ref);
    expect_values(l, static_cast<std::size_t>(h), static_cast<std::size_t>(w),
                  static_cast<std::size_t>(c), want);
    if (c == 3 || c == 1) {
      sv::save_image(path("photo.jpg"), l.array, 8);
      const sv::Loaded lj = sv::load_image(path("photo.jpg"));
      unsigned char* rj = stbi_load(path("photo.jpg").c_str(), &w, &h, &c, 0);
      ASSERT_NE(rj, nullptr);
      ASSERT_EQ(lj.array.size(), static_cast<std::size_t>(w * h * c));
      double worst = 0;
      for (std::size_t i = 0; i < lj.array.size(); ++i)
        worst = std::max(worst, std::fabs(lj.array[i] - rj[i]));
      stbi_image_free(rj);
      EXPECT_LE(worst, 4.0);
    }
  }
  PngSpec flat;
  flat.w = 3000;
  flat.h = 3000;
  flat.samples.assign(flat.w * flat.h, 0);
  const std::string f = make_png(flat);
  write_bytes(path("flat.png"), f);
  const sv::Loaded lf = sv::load_image(path("flat.png"));
  EXPECT_EQ(lf.array.size(), 9000000u);
  EXPECT_EQ(*std::max_element(lf.array.vec().begin(), lf.array.vec().end()), 0.0);
  EXPECT_LT(f.size() * 900, 9000000u) << "zlib did not come near its best ratio: " << f.size();

  ArrayD fj({1024, 1024});
  for (std::size_t i = 0; i < fj.size(); ++i) fj[i] = 0.5;
  sv::save_image(path("flat.jpg"), fj, 8);
  const sv::Loaded lj = sv::load_image(path("flat.jpg"));
  EXPECT_EQ(lj.array.size(), 1024u * 1024u * 3u);
}

// JPEGs stb_image_write cannot make, written with libjpeg: progressive with 4:2:0 chroma and
// restart markers, progressive grey; both equal stb_image's decode within 4 levels (chroma
// upsampling differs). Arithmetic coding is refused by name.
std::string libjpeg_write(std::size_t w, std::size_t h, bool grey, bool progressive, bool arith) {
  jpeg_compress_struct c;
  jpeg_error_mgr e;
  c.err = jpeg_std_error(&e);
  jpeg_create_compress(&c);
  unsigned char* out = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &out, &size);
  c.image_width = static_cast<JDIMENSION>(w);
  c.image_height = static_cast<JDIMENSION>(h);
  c.input_components = grey ? 1 : 3;
  c.in_color_space = grey ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 90, TRUE);
  if (progressive) jpeg_simple_progression(&c);
  if (arith) c.arith_code = TRUE;
  c.restart_interval = 3;
  jpeg_start_compress(&c, TRUE);
  std::vector<unsigned char> row(w * 3);
  while (c.next_scanline < c.image_height) {
    for (std::size_t i = 0; i < row.size(); ++i)
      row[i] = static_cast<unsigned char>((i * 7 + c.next_scanline * 5) % 256);
    JSAMPROW r = row.data();
    jpeg_write_scanlines(&c, &r, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  std::string bytes(reinterpret_cast<const char*>(out), size);
  std::free(out);
  return bytes;
}

TEST_F(ImageDecodeTest, JpegProgressiveAndSubsampledDecode) {
  for (bool grey : {false, true}) {
    SCOPED_TRACE(grey ? "grey" : "colour 4:2:0");
    write_bytes(path("p.jpg"), libjpeg_write(77, 53, grey, true, false));
    const sv::Loaded l = sv::load_image(path("p.jpg"));
    int w = 0, h = 0, c = 0;
    unsigned char* ref = stbi_load(path("p.jpg").c_str(), &w, &h, &c, 0);
    ASSERT_NE(ref, nullptr);
    ASSERT_EQ(l.array.dims(), (std::vector<std::size_t>{53, 77}));
    ASSERT_EQ(l.array.channels(), static_cast<std::size_t>(c));
    double worst = 0;
    for (std::size_t i = 0; i < l.array.size(); ++i)
      worst = std::max(worst, std::fabs(l.array[i] - ref[i]));
    stbi_image_free(ref);
    EXPECT_LE(worst, 4.0);
  }
  write_bytes(path("a.jpg"), libjpeg_write(16, 16, false, false, true));
  expect_refused(path("a.jpg"), {"unsupported JPEG: arithmetic-coded"});
}

// ------------------------------------------------------------- BMP, TGA, HDR, PNM, GIF

void to_string_sink(void* ctx, void* data, int size) {
  static_cast<std::string*>(ctx)->append(static_cast<const char*>(data),
                                         static_cast<std::size_t>(size));
}

std::vector<unsigned char> pattern8(std::size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<unsigned char>((i * 53 + seed * 17 + i / 7) % 256);
  return v;
}

std::vector<double> scaled8(const std::vector<unsigned char>& v) {
  std::vector<double> out;
  for (unsigned char x : v) out.push_back(x);
  return out;
}

TEST_F(ImageDecodeTest, BmpAndTgaLoadThePixelsWritten) {
  const int w = 13, h = 7;
  for (int c : {3, 4}) {
    SCOPED_TRACE(std::to_string(c) + " channels");
    const auto px = pattern8(static_cast<std::size_t>(w * h * c), static_cast<unsigned>(c));
    std::string bmp;
    ASSERT_TRUE(stbi_write_bmp_to_func(to_string_sink, &bmp, w, h, c, px.data()));
    write_bytes(path("a.bmp"), bmp);
    const sv::Loaded lb = sv::load_any(path("a.bmp"), false);
    EXPECT_EQ(lb.dtype, DType::U8);
    expect_values(lb, h, w, static_cast<std::size_t>(c), scaled8(px));

    for (int rle : {0, 1}) {
      SCOPED_TRACE(rle ? "RLE" : "uncompressed");
      stbi_write_tga_with_rle = rle;
      std::string tga;
      ASSERT_TRUE(stbi_write_tga_to_func(to_string_sink, &tga, w, h, c, px.data()));
      write_bytes(path("a.tga"), tga);
      expect_values(sv::load_any(path("a.tga"), false), h, w, static_cast<std::size_t>(c),
                    scaled8(px));
      // Truncated: refused (stb alone would read zeros for the missing pixels).
      write_bytes(path("cut.tga"), tga.substr(0, tga.size() - 5));
      expect_refused(path("cut.tga"), {"truncated TGA"});
    }
    write_bytes(path("cut.bmp"), bmp.substr(0, bmp.size() - 3));
    expect_refused(path("cut.bmp"), {"truncated BMP", std::to_string(bmp.size()) + " bytes"});
  }
  stbi_write_tga_with_rle = 1;
  // A flat image compresses in TGA RLE and still loads.
  const std::vector<unsigned char> flat(300 * 200 * 3, 77);
  std::string tga;
  ASSERT_TRUE(stbi_write_tga_to_func(to_string_sink, &tga, 300, 200, 3, flat.data()));
  write_bytes(path("flat.tga"), tga);
  expect_values(sv::load_image(path("flat.tga")), 200, 300, 3, scaled8(flat));
}

TEST_F(ImageDecodeTest, BmpDeclaringHugeSizeRefusedBeforeAllocating) {
  const std::vector<unsigned char> px(4 * 4 * 3, 9);
  std::string bmp;
  ASSERT_TRUE(stbi_write_bmp_to_func(to_string_sink, &bmp, 4, 4, 3, px.data()));
  auto set32 = [&](std::size_t at, std::uint32_t v) {
    for (int k = 0; k < 4; ++k)
      bmp[at + static_cast<std::size_t>(k)] = static_cast<char>(v >> (8 * k));
  };
  set32(18, 8000);  // 8000 x 8000 x 3 = 192 M values: under the value limit, but not in the file
  set32(22, 8000);
  write_bytes(path("huge.bmp"), bmp);
  const long before = max_rss_kib();
  expect_refused(path("huge.bmp"), {"truncated BMP", "8000 x 8000", std::to_string(bmp.size())});
  EXPECT_LT(max_rss_kib() - before, 64 * 1024) << "KiB of peak RSS growth";
  set32(18, 3000000);
  write_bytes(path("huge2.bmp"), bmp);
  expect_refused(path("huge2.bmp"), {"3000000 x 8000", "limit"});
}

TEST_F(ImageDecodeTest, HdrLoadsLinearFloats) {
  for (int w : {40, 5}) {  // run-length scanlines (width 8..32767) and flat pixels
    SCOPED_TRACE("width " + std::to_string(w));
    const int h = 3;
    // Values k/256 with the largest of each pixel in [0.5, 1): exact in RGBE.
    std::vector<float> px;
    for (int i = 0; i < w * h; ++i) {
      px.push_back(static_cast<float>(128 + (i * 5) % 128) / 256.0f);
      px.push_back(static_cast<float>((i / 4) % 128) / 256.0f);  // runs for the RLE coder
      px.push_back(static_cast<float>((i * 11) % 128) / 256.0f);
    }
    std::string hdr;
    ASSERT_TRUE(stbi_write_hdr_to_func(to_string_sink, &hdr, w, h, 3, px.data()));
    write_bytes(path("a.hdr"), hdr);
    const sv::Loaded l = sv::load_any(path("a.hdr"), false);
    EXPECT_EQ(l.dtype, DType::F32);
    expect_values(l, static_cast<std::size_t>(h), static_cast<std::size_t>(w), 3,
                  std::vector<double>(px.begin(), px.end()));
    write_bytes(path("cut.hdr"), hdr.substr(0, hdr.size() - 6));
    expect_refused(path("cut.hdr"), {"Radiance HDR"});
  }
}

TEST_F(ImageDecodeTest, PnmLoadsNormalisedByMaxval) {
  // PGM 8-bit with a comment, PPM 8-bit, PGM 16-bit (maxval 65535) and 10-bit (maxval 1023).
  const std::size_t w = 5, h = 3;
  std::string pgm = "P5\n# a comment\n5 3\n255\n";
  std::vector<double> want;
  for (std::size_t i = 0; i < w * h; ++i) {
    pgm += static_cast<char>(i * 17);
    want.push_back(static_cast<double>(i * 17));
  }
  write_bytes(path("a.pgm"), pgm);
  const sv::Loaded l = sv::load_any(path("a.pgm"), false);
  EXPECT_EQ(l.dtype, DType::U8);
  expect_values(l, h, w, 1, want);
  write_bytes(path("cut.pgm"), pgm.substr(0, pgm.size() - 1));
  expect_refused(path("cut.pgm"), {"truncated PNM"});

  std::string ppm = "P6 5 3 255\n";
  want.clear();
  for (std::size_t i = 0; i < w * h * 3; ++i) {
    ppm += static_cast<char>((i * 29) % 256);
    want.push_back(static_cast<double>((i * 29) % 256));
  }
  write_bytes(path("a.ppm"), ppm);
  expect_values(sv::load_any(path("a.ppm"), false), h, w, 3, want);

  for (unsigned maxval : {65535u, 1023u}) {
    SCOPED_TRACE("maxval " + std::to_string(maxval));
    std::string p16 = "P5\n5 3\n" + std::to_string(maxval) + "\n";
    want.clear();
    for (std::size_t i = 0; i < w * h; ++i) {
      const unsigned v = static_cast<unsigned>(i * 4099 + 1) % (maxval + 1);
      p16 += static_cast<char>(v >> 8);
      p16 += static_cast<char>(v & 0xffu);
      want.push_back(static_cast<double>(v));
    }
    write_bytes(path("b.pnm"), p16);
    const sv::Loaded l16 = sv::load_any(path("b.pnm"), false);
    EXPECT_EQ(l16.dtype, DType::U16);
    expect_values(l16, h, w, 1, want);
  }
  write_bytes(path("ascii.pgm"), "P2\n2 1\n255\n0 255\n");
  expect_refused(path("ascii.pgm"), {"P2"});
}

// A GIF written by hand: LZW with a clear code every two literals, so every code is 3 bits.
std::string make_gif(std::size_t w, std::size_t h, const std::vector<unsigned char>& idx,
                     const std::string& palette12) {
  std::string g = "GIF89a";
  g += static_cast<char>(w & 0xff);
  g += static_cast<char>(w >> 8);
  g += static_cast<char>(h & 0xff);
  g += static_cast<char>(h >> 8);
  g += static_cast<char>(0x81);  // global colour table of 4 entries
  g += std::string("\0\0", 2);
  g += palette12;
  g += '\x2c';
  g += std::string("\0\0\0\0", 4);
  g += static_cast<char>(w & 0xff);
  g += static_cast<char>(w >> 8);
  g += static_cast<char>(h & 0xff);
  g += static_cast<char>(h >> 8);
  g += '\0';
  g += '\x02';  // LZW minimum code size 2: clear 4, end 5
  std::vector<unsigned> codes = {4};
  for (std::size_t i = 0; i < idx.size(); ++i) {
    if (i > 0 && i % 2 == 0) codes.push_back(4);
    codes.push_back(idx[i]);
  }
  codes.push_back(5);
  std::string data;
  unsigned acc = 0;
  int nbits = 0;
  for (unsigned c : codes) {
    acc |= c << nbits;
    nbits += 3;
    while (nbits >= 8) {
      data += static_cast<char>(acc & 0xffu);
      acc >>= 8;
      nbits -= 8;
    }
  }
  if (nbits > 0) data += static_cast<char>(acc & 0xffu);
  for (std::size_t i = 0; i < data.size(); i += 255) {
    const std::string block = data.substr(i, 255);
    g += static_cast<char>(block.size());
    g += block;
  }
  g += '\0';
  g += ';';
  return g;
}

TEST_F(ImageDecodeTest, GifFirstFrameLoads) {
  const std::size_t w = 7, h = 5;
  const std::string pal("\x00\x00\x00\xff\x00\x00\x00\x80\x00\x10\x20\xf0", 12);
  std::vector<unsigned char> idx(w * h);
  for (std::size_t i = 0; i < idx.size(); ++i)
    idx[i] = static_cast<unsigned char>((i * 7 + i / 3) % 4);
  const std::string gif = make_gif(w, h, idx, pal);
  write_bytes(path("a.gif"), gif);
  const sv::Loaded l = sv::load_any(path("a.gif"), false);
  std::vector<double> want;
  for (unsigned char k : idx) {
    for (std::size_t c = 0; c < 3; ++c) want.push_back(static_cast<unsigned char>(pal[3 * k + c]));
    want.push_back(255.0);
  }
  EXPECT_EQ(l.dtype, DType::U8);
  expect_values(l, h, w, 4, want);
  write_bytes(path("cut.gif"), gif.substr(0, gif.size() - 6));
  expect_refused(path("cut.gif"), {"GIF", "truncated"});
  // A 60-byte GIF claiming 16000 x 16000.
  std::string bomb = gif;
  bomb[6] = bomb[8] = static_cast<char>(0x80);
  bomb[7] = bomb[9] = static_cast<char>(0x3e);
  write_bytes(path("bomb.gif"), bomb);
  expect_refused(path("bomb.gif"), {"16000 x 16000", "LZW"});
}

TEST_F(ImageDecodeTest, UnknownSignatureAndTgaByExtension) {
  write_bytes(path("x.png"), "plain text, not an image at all");
  expect_refused(path("x.png"), {"not an image this program reads"});
  write_bytes(path("x.psd"), "8BPS and then some bytes");
  expect_refused(path("x.psd"), {"PSD"});
  // A JPEG named .png is read as JPEG (the signature decides), and errors say JPEG.
  const std::string j = noise_jpeg(path("n.jpg"), 8, 8, 3, 5);
  write_bytes(path("j.png"), j.substr(0, j.size() / 2));
  const std::string msg = load_error(path("j.png"));
  EXPECT_NE(msg.find("JPEG"), std::string::npos) << msg;
  const std::string reason = msg.substr(std::min(msg.size(), path("j.png").size()));
  EXPECT_EQ(reason.find("png"), std::string::npos) << msg;
  EXPECT_EQ(reason.find("PNG"), std::string::npos) << msg;
}

}  // namespace
