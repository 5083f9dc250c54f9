// Image files. Decoding: PNG through libpng and JPEG through libjpeg-turbo (both verify what
// they read: chunk CRCs, the zlib Adler-32, complete image data, every JPEG warning is an
// error); BMP, GIF (first frame), Radiance HDR, binary PGM/PPM and TGA through stb_image, each
// after our own header walk that checks the file holds the data the header announces (stb
// silently reads zeros past the end of its buffer). Every decoder is preceded by limits on the
// declared size (see io.h), checked before any pixel buffer is allocated.
// Encoding: 8-bit PNG and JPEG through stb_image_write; 16-bit PNG through libpng.
// Files are decoded from and encoded into memory so that reading reports errors uniformly and
// writing can be atomic (see io_common.h). No decoder prints anything: libpng's and libjpeg's
// messages are routed into the exception text.
//
// JPEG goes through libjpeg's own API (jpeglib.h, Debian's libjpeg62-turbo-dev) rather than the
// TurboJPEG wrapper: it lets us read the frame header before any pixel memory exists, turn each
// warning into an error through emit_message, and silence output_message.
#include <png.h>
#include <stb_image.h>
#include <stb_image_write.h>

// jpeglib.h needs FILE and size_t declared first.
#include <cstdio>
#include <cstdlib>
// clang-format off
#include <jpeglib.h>
#include <jerror.h>
// clang-format on

#include <algorithm>
#include <climits>
#include <csetjmp>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "io_common.h"
#include "splineview/io.h"

namespace sv {

namespace {

using io::fail;

enum class ImageKind { kPng, kJpeg, kBmp, kGif, kHdr, kPnm, kTga };

const char* kind_name(ImageKind k) {
  switch (k) {
    case ImageKind::kPng:
      return "PNG";
    case ImageKind::kJpeg:
      return "JPEG";
    case ImageKind::kBmp:
      return "BMP";
    case ImageKind::kGif:
      return "GIF";
    case ImageKind::kHdr:
      return "Radiance HDR";
    case ImageKind::kPnm:
      return "PNM";
    case ImageKind::kTga:
      return "TGA";
  }
  return "image";
}

bool starts_with(const std::vector<unsigned char>& b, const char* sig, std::size_t n) {
  return b.size() >= n && std::memcmp(b.data(), sig, n) == 0;
}

ImageKind detect_kind(const std::string& path, const std::vector<unsigned char>& b) {
  if (starts_with(b, "\x89PNG\r\n\x1a\n", 8)) return ImageKind::kPng;
  if (b.size() >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff) return ImageKind::kJpeg;
  if (starts_with(b, "BM", 2)) return ImageKind::kBmp;
  if (starts_with(b, "GIF87a", 6) || starts_with(b, "GIF89a", 6)) return ImageKind::kGif;
  if (starts_with(b, "#?RADIANCE\n", 11) || starts_with(b, "#?RGBE\n", 7)) return ImageKind::kHdr;
  if (b.size() >= 3 && b[0] == 'P' && b[1] >= '1' && b[1] <= '7' &&
      (b[2] == ' ' || b[2] == '\t' || b[2] == '\n' || b[2] == '\r')) {
    if (b[1] == '5' || b[1] == '6') return ImageKind::kPnm;
    fail(path, std::string("unsupported PNM variant P") + static_cast<char>(b[1]) +
                   " (only binary PGM P5 and PPM P6 are read)");
  }
  if (starts_with(b, "8BPS", 4)) fail(path, "unsupported image format (Photoshop PSD)");
  if (io::lower_extension(path) == ".tga") return ImageKind::kTga;
  fail(path,
       "not an image this program reads (unrecognised signature; PNG, JPEG, BMP, GIF, Radiance "
       "HDR and binary PGM/PPM are recognised by their content, TGA by the .tga extension)");
}

std::string num(std::size_t v) {
  return std::to_string(v);
}

// Limits on the declared size, before any pixel buffer exists: first the sides (which also
// keeps the size arithmetic below from overflowing), then, after the format's plausibility
// check against the file size, the number of values.
void check_sides(const std::string& path, ImageKind kind, std::size_t w, std::size_t h) {
  const std::string name = kind_name(kind);
  if (w == 0 || h == 0)
    fail(path, name + " header declares an empty image (" + num(w) + " x " + num(h) + ")");
  if (w > kImageMaxSide || h > kImageMaxSide)
    fail(path, name + " header declares " + num(w) + " x " + num(h) + " pixels; the limit is " +
                   num(kImageMaxSide) + " pixels per side");
}

void check_values(const std::string& path, ImageKind kind, std::size_t w, std::size_t h,
                  std::size_t channels) {
  const std::string name = kind_name(kind);
  check_sides(path, kind, w, h);
  // w, h <= 1e6 and channels <= 4: no overflow.
  const std::size_t values = w * h * channels;
  if (values > kImageMaxValues)
    fail(path, name + " header declares " + num(w) + " x " + num(h) + " pixels x " + num(channels) +
                   " channels = " + num(values) + " values; the limit is " + num(kImageMaxValues) +
                   " values (2 GiB as doubles)");
}

// Refuses a declared size that the file cannot hold: `min_bytes` is the fewest bytes any valid
// file of that size needs (from the format's best possible compression), `why` says whence.
void check_plausible(const std::string& path, ImageKind kind, std::size_t w, std::size_t h,
                     std::size_t min_bytes, std::size_t data_bytes, std::size_t file_size,
                     const std::string& why) {
  if (min_bytes <= data_bytes) return;
  fail(path, std::string(kind_name(kind)) + " header declares " + num(w) + " x " + num(h) +
                 " pixels, impossible with " + num(data_bytes) +
                 " bytes of image data in a file of " + num(file_size) +
                 " bytes (they need at least " + num(min_bytes) + ": " + why +
                 "; truncated file or forged header)");
}

// The pixels as decoded: 8-bit, 16-bit or float samples, interleaved.
struct Pixels {
  std::size_t w = 0, h = 0, channels = 0;
  DType dtype = DType::U8;
};

Loaded make_loaded(const Pixels& p) {
  Loaded out;
  out.array = ArrayD({p.h, p.w}, p.channels);
  out.dtype = p.dtype;
  out.channel_axis = p.channels > 1;
  out.spacing = {1.0, 1.0};
  return out;
}

// Stored values are the values: no normalisation.
template <class T>
void fill_values(Loaded* out, const T* src) {
  double* dst = out->array.data();
  const std::size_t n = out->array.size();
  for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<double>(src[i]);
}

// ================================================================================= PNG

constexpr std::size_t kDeflateMaxRatio = 1032;  // deflate: 258 bytes per 2-bit match at best

struct PngJob {
  // input
  const unsigned char* data;
  std::size_t size;
  std::size_t pos;
  // output
  png_uint_32 w, h;
  int file_channels, file_bits, channels, bits;
  unsigned char* pixels;  // malloc'ed, rows of `rowbytes`
  png_bytep* rows;        // malloc'ed
  std::size_t rowbytes;
  bool stopped;  // stopped by us after png_read_info (w, h, channels, bits are set)
  bool out_of_memory;
  char message[512];
};

void png_job_read(png_structp png, png_bytep out, png_size_t n) {
  auto* job = static_cast<PngJob*>(png_get_io_ptr(png));
  if (n > job->size - job->pos) png_error(png, "the file ends early (truncated)");
  std::memcpy(out, job->data + job->pos, n);
  job->pos += n;
}

void png_job_error(png_structp png, png_const_charp msg) {
  auto* job = static_cast<PngJob*>(png_get_error_ptr(png));
  std::snprintf(job->message, sizeof job->message, "%s", msg ? msg : "unknown error");
  png_longjmp(png, 1);
}

// Warnings concern ancillary information we do not use (text, colour profiles); the ones that
// concern the image (CRC, zlib, image data) are raised as errors by the settings below.
void png_job_warning(png_structp, png_const_charp) {}

// Decodes job->data in two steps: with job->pixels == nullptr it stops after the header
// (job->stopped; w, h, channels, bits set) so the caller can check the limits; called again it
// decodes. Holds no C++ objects with destructors across setjmp/longjmp. Returns false with
// job->message set (or job->out_of_memory) on failure.
bool png_decode(PngJob* job, bool header_only) {
  png_structp png =
      png_create_read_struct(PNG_LIBPNG_VER_STRING, job, png_job_error, png_job_warning);
  if (!png) {
    std::snprintf(job->message, sizeof job->message, "cannot initialise libpng");
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (!info) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    std::snprintf(job->message, sizeof job->message, "cannot initialise libpng");
    return false;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    std::free(job->rows);
    job->rows = nullptr;
    std::free(job->pixels);
    job->pixels = nullptr;
    return false;
  }
  job->pos = 0;
  png_set_read_fn(png, job, png_job_read);
  // CRC errors in any chunk, critical or ancillary, are errors; so are "benign" errors (extra
  // or missing compressed data, a bad Adler-32 at the end of the stream).
  png_set_crc_action(png, PNG_CRC_ERROR_QUIT, PNG_CRC_ERROR_QUIT);
  png_set_benign_errors(png, 0);
#ifdef PNG_IGNORE_ADLER32
  // The last argument is a boolean "ignore": PNG_OPTION_OFF (2) would switch the check off.
  png_set_option(png, PNG_IGNORE_ADLER32, 0);
#endif
  png_set_user_limits(png, static_cast<png_uint_32>(kImageMaxSide),
                      static_cast<png_uint_32>(kImageMaxSide));
  png_set_chunk_malloc_max(png, 8u << 20);  // ancillary chunks (text, profiles) up to 8 MiB
  png_set_chunk_cache_max(png, 1000);

  png_read_info(png, info);
  png_uint_32 w = 0, h = 0;
  int bit_depth = 0, color_type = 0, interlace = 0;
  png_get_IHDR(png, info, &w, &h, &bit_depth, &color_type, &interlace, nullptr, nullptr);
  job->w = w;
  job->h = h;
  job->file_bits = bit_depth;
  job->file_channels = png_get_channels(png, info);

  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  job->channels = png_get_channels(png, info);
  job->bits = png_get_bit_depth(png, info);
  job->rowbytes = png_get_rowbytes(png, info);
  if (header_only) {
    job->stopped = true;
    png_destroy_read_struct(&png, &info, nullptr);
    return true;
  }

  job->pixels = static_cast<unsigned char*>(std::malloc(job->rowbytes * h));
  job->rows = static_cast<png_bytep*>(std::malloc(sizeof(png_bytep) * h));
  if (!job->pixels || !job->rows) {
    job->out_of_memory = true;
    std::snprintf(job->message, sizeof job->message, "out of memory");
    png_longjmp(png, 1);
  }
  for (png_uint_32 y = 0; y < h; ++y) job->rows[y] = job->pixels + y * job->rowbytes;
  png_read_image(png, job->rows);
  png_read_end(png, nullptr);  // checks the chunks after the image data, through IEND
  png_destroy_read_struct(&png, &info, nullptr);
  std::free(job->rows);
  job->rows = nullptr;
  return true;
}

// The bytes in IDAT chunks (libpng has read the header, so the chunk layout up to the first IDAT
// is sound; the walk stops where the file does).
std::size_t png_idat_bytes(const std::vector<unsigned char>& b) {
  std::size_t pos = 8, total = 0;
  while (b.size() - pos >= 12) {
    const std::size_t len = static_cast<std::size_t>(b[pos]) << 24 |
                            static_cast<std::size_t>(b[pos + 1]) << 16 |
                            static_cast<std::size_t>(b[pos + 2]) << 8 | b[pos + 3];
    if (std::memcmp(&b[pos + 4], "IDAT", 4) == 0) total += std::min(len, b.size() - pos - 12);
    if (len > b.size() - pos - 12) break;
    pos += 12 + len;
  }
  return total;
}

Loaded load_png(const std::string& path, const std::vector<unsigned char>& bytes) {
  PngJob job{};
  job.data = bytes.data();
  job.size = bytes.size();
  auto failed = [&]() {
    if (job.out_of_memory) throw std::bad_alloc();
    fail(path, std::string("corrupt PNG: ") + job.message);
  };
  if (!png_decode(&job, true)) failed();
  check_sides(path, ImageKind::kPng, job.w, job.h);
  // Deflate expands at most 1032:1, so the image data needs at least raw / 1032 bytes.
  const std::size_t raw_bits = static_cast<std::size_t>(job.w) * job.h *
                               static_cast<std::size_t>(job.file_channels * job.file_bits);
  const std::size_t raw_bytes = (raw_bits + 7) / 8;
  check_plausible(path, ImageKind::kPng, job.w, job.h, raw_bytes / kDeflateMaxRatio,
                  png_idat_bytes(bytes), bytes.size(), "deflate expands at most 1032:1");
  check_values(path, ImageKind::kPng, job.w, job.h, static_cast<std::size_t>(job.channels));

  if (!png_decode(&job, false)) failed();
  std::unique_ptr<unsigned char, decltype(&std::free)> hold(job.pixels, &std::free);
  Pixels p;
  p.w = job.w;
  p.h = job.h;
  p.channels = static_cast<std::size_t>(job.channels);
  p.dtype = job.bits == 16 ? DType::U16 : DType::U8;
  if (p.channels < 1 || p.channels > 4 || (job.bits != 8 && job.bits != 16))
    fail(path, "unexpected PNG layout from libpng");
  Loaded out = make_loaded(p);
  double* dst = out.array.data();
  const std::size_t row_values = p.w * p.channels;
  for (std::size_t y = 0; y < p.h; ++y) {
    const unsigned char* src = job.pixels + y * job.rowbytes;
    double* d = dst + y * row_values;
    if (job.bits == 16) {
      for (std::size_t i = 0; i < row_values; ++i)  // PNG stores big endian
        d[i] = static_cast<double>((src[2 * i] << 8) | src[2 * i + 1]);
    } else {
      for (std::size_t i = 0; i < row_values; ++i) d[i] = src[i];
    }
  }
  return out;
}

// ================================================================================= JPEG

// What the marker walk learns: the frame and whether each scan's tables were defined.
struct JpegLayout {
  std::size_t w = 0, h = 0, components = 0;
  std::size_t min_blocks = 0;     // blocks of the component with the fewest
  std::size_t entropy_bytes = 0;  // entropy-coded data of all scans
};

std::uint16_t be16(const unsigned char* p) {
  return static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}

// Walks the markers from SOI to EOI: refuses what libjpeg would accept silently (a scan whose
// Huffman table is not defined: libjpeg-turbo substitutes the standard tables) or what it cannot
// bound (arithmetic coding), and finds the frame size for the limits.
JpegLayout walk_jpeg(const std::string& path, const std::vector<unsigned char>& b) {
  auto bad = [&](const std::string& what) { fail(path, "corrupt JPEG: " + what); };
  const std::size_t n = b.size();
  JpegLayout lay;
  struct Comp {
    int id, hs, vs, tq;
  };
  std::vector<Comp> comps;
  bool have_sof = false, progressive = false;
  bool dqt[4] = {false, false, false, false};
  bool dht_dc[4] = {false, false, false, false}, dht_ac[4] = {false, false, false, false};
  std::size_t scans = 0;
  std::size_t pos = 2;
  for (;;) {
    if (pos >= n) bad("the file ends before its end-of-image marker (truncated)");
    if (b[pos] != 0xff) bad("expected a marker at byte " + num(pos));
    while (pos < n && b[pos] == 0xff) ++pos;  // fill bytes
    if (pos >= n) bad("the file ends before its end-of-image marker (truncated)");
    const unsigned m = b[pos++];
    if (m == 0xd9) break;  // EOI
    if (m == 0xd8) bad("a second start-of-image marker at byte " + num(pos - 2));
    if (m == 0x01 || (m >= 0xd0 && m <= 0xd7)) continue;  // standalone markers
    if (m == 0x00) bad("a stuffed zero byte outside entropy-coded data at byte " + num(pos - 1));
    if (n - pos < 2) bad("the file ends inside a marker segment (truncated)");
    const std::size_t len = be16(&b[pos]);
    if (len < 2) bad("a marker segment with an invalid length " + num(len));
    if (len > n - pos) bad("the file ends inside a marker segment (truncated)");
    const unsigned char* s = &b[pos + 2];
    const std::size_t sl = len - 2;
    pos += len;
    if (m == 0xdb) {  // DQT
      std::size_t i = 0;
      while (i < sl) {
        const unsigned pq = s[i] >> 4, tq = s[i] & 15u;
        if (tq > 3 || pq > 1) bad("a quantisation table with an invalid number or precision");
        const std::size_t size = pq ? 128 : 64;
        if (sl - i - 1 < size) bad("a quantisation table segment that is too short");
        dqt[tq] = true;
        i += 1 + size;
      }
    } else if (m == 0xc4) {  // DHT
      std::size_t i = 0;
      while (i < sl) {
        if (sl - i < 17) bad("a Huffman table segment that is too short");
        const unsigned tc = s[i] >> 4, th = s[i] & 15u;
        if (tc > 1 || th > 3) bad("a Huffman table with an invalid class or number");
        std::size_t count = 0;
        for (int k = 1; k <= 16; ++k) count += s[i + static_cast<std::size_t>(k)];
        if (sl - i - 17 < count) bad("a Huffman table segment that is too short");
        (tc ? dht_ac : dht_dc)[th] = true;
        i += 17 + count;
      }
    } else if ((m >= 0xc0 && m <= 0xcf) && m != 0xc4 && m != 0xc8 && m != 0xcc) {  // SOFn
      if (m != 0xc0 && m != 0xc1 && m != 0xc2) {
        const char* what = m == 0xc3                  ? "lossless"
                           : (m >= 0xc5 && m <= 0xc7) ? "hierarchical"
                                                      : "arithmetic-coded";
        fail(path, std::string("unsupported JPEG: ") + what +
                       " (baseline, extended sequential and progressive Huffman-coded JPEG are "
                       "read)");
      }
      if (have_sof) bad("more than one frame header");
      have_sof = true;
      progressive = m == 0xc2;
      if (sl < 6) bad("a frame header that is too short");
      lay.h = be16(s + 1);
      lay.w = be16(s + 3);
      lay.components = s[5];
      if (lay.h == 0) bad("a frame height of 0 (a DNL marker is not supported)");
      if (lay.w == 0) bad("a frame width of 0");
      if (lay.components == 0) bad("a frame with no components");
      if (sl < 6 + 3 * lay.components) bad("a frame header that is too short");
      int hmax = 1, vmax = 1;
      for (std::size_t c = 0; c < lay.components; ++c) {
        const unsigned char* q = s + 6 + 3 * c;
        Comp k{q[0], q[1] >> 4, q[1] & 15, q[2]};
        if (k.hs < 1 || k.hs > 4 || k.vs < 1 || k.vs > 4) bad("invalid sampling factors");
        if (k.tq > 3) bad("a component with an invalid quantisation table number");
        hmax = std::max(hmax, k.hs);
        vmax = std::max(vmax, k.vs);
        comps.push_back(k);
      }
      lay.min_blocks = SIZE_MAX;
      for (const Comp& k : comps) {
        const std::size_t cw = (lay.w * static_cast<std::size_t>(k.hs) + hmax - 1) / hmax;
        const std::size_t ch = (lay.h * static_cast<std::size_t>(k.vs) + vmax - 1) / vmax;
        lay.min_blocks = std::min(lay.min_blocks, ((cw + 7) / 8) * ((ch + 7) / 8));
      }
    } else if (m == 0xda) {  // SOS
      if (!have_sof) bad("a scan before the frame header");
      if (sl < 1) bad("a scan header that is too short");
      const std::size_t ns = s[0];
      if (ns < 1 || ns > 4 || sl < 1 + 2 * ns + 3) bad("an invalid scan header");
      const unsigned ss = s[1 + 2 * ns], ah = s[3 + 2 * ns] >> 4;
      for (std::size_t j = 0; j < ns; ++j) {
        const int id = s[1 + 2 * j];
        const unsigned td = s[2 + 2 * j] >> 4, ta = s[2 + 2 * j] & 15u;
        const Comp* k = nullptr;
        for (const Comp& c : comps)
          if (c.id == id) k = &c;
        if (!k)
          bad("a scan names component " + num(static_cast<std::size_t>(id)) +
              ", which the frame does not have");
        if (!dqt[k->tq])
          bad("quantisation table " + num(static_cast<std::size_t>(k->tq)) +
              " is used but not defined (no DQT segment for it)");
        const bool need_dc = progressive ? (ss == 0 && ah == 0) : true;
        const bool need_ac = progressive ? ss > 0 : true;
        if ((need_dc && (td > 3 || !dht_dc[td])) || (need_ac && (ta > 3 || !dht_ac[ta])))
          bad("Huffman table " + std::string(need_dc && (td > 3 || !dht_dc[td]) ? "DC " : "AC ") +
              num(need_dc && (td > 3 || !dht_dc[td]) ? td : ta) +
              " is used but not defined (no DHT segment for it)");
      }
      ++scans;
      // Skip the entropy-coded data: up to the next marker other than RSTn and stuffing.
      const std::size_t data_start = pos;
      for (;;) {
        if (pos >= n) bad("the file ends inside the image data (truncated)");
        if (b[pos] != 0xff) {
          ++pos;
          continue;
        }
        if (pos + 1 >= n) bad("the file ends inside the image data (truncated)");
        const unsigned c = b[pos + 1];
        if (c == 0x00 || (c >= 0xd0 && c <= 0xd7)) {
          pos += 2;
        } else if (c == 0xff) {
          ++pos;
        } else {
          break;
        }
      }
      lay.entropy_bytes += pos - data_start;
    }
    // APPn, COM, DRI, DNL and the rest: skipped (libjpeg checks what it uses).
  }
  if (!have_sof) bad("no frame header (SOF) before the end-of-image marker");
  if (scans == 0) bad("no image data (no scan) before the end-of-image marker");
  return lay;
}

struct JpegError {
  jpeg_error_mgr pub;  // first member: libjpeg passes &pub back to us
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void jpeg_on_error(j_common_ptr c) {
  auto* e = reinterpret_cast<JpegError*>(c->err);
  (*c->err->format_message)(c, e->message);
  std::longjmp(e->jump, 1);
}

// Level -1 is a warning (corrupt data, premature end of file ...): an error for us. Higher
// levels are trace messages, ignored.
void jpeg_on_message(j_common_ptr c, int level) {
  if (level < 0) jpeg_on_error(c);
}

void jpeg_on_output(j_common_ptr) {}

struct JpegJob {
  const unsigned char* data;
  std::size_t size;
  std::size_t w, h, channels;  // expected from the walk; checked against libjpeg's view
  bool cmyk;
  unsigned char* pixels;  // malloc'ed, w * h * channels
  bool out_of_memory;
  bool mismatch;
  char message[JMSG_LENGTH_MAX];
};

// Holds no C++ objects with destructors across setjmp/longjmp.
bool jpeg_decode(JpegJob* job) {
  jpeg_decompress_struct cinfo;
  JpegError err;
  std::memset(&cinfo, 0, sizeof cinfo);
  cinfo.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = jpeg_on_error;
  err.pub.emit_message = jpeg_on_message;
  err.pub.output_message = jpeg_on_output;
  err.message[0] = '\0';
  if (setjmp(err.jump)) {
    std::snprintf(job->message, sizeof job->message, "%s", err.message);
    jpeg_destroy_decompress(&cinfo);
    std::free(job->pixels);
    job->pixels = nullptr;
    return false;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, job->data, static_cast<unsigned long>(job->size));
  jpeg_read_header(&cinfo, TRUE);
  if (cinfo.image_width != job->w || cinfo.image_height != job->h ||
      static_cast<std::size_t>(cinfo.num_components) != job->channels) {
    job->mismatch = true;
    std::snprintf(job->message, sizeof job->message, "the frame header changed between reads");
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  job->cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
  if (cinfo.num_components == 1) {
    cinfo.out_color_space = JCS_GRAYSCALE;
  } else if (job->cmyk) {
    cinfo.out_color_space = JCS_CMYK;
  } else {
    cinfo.out_color_space = JCS_RGB;
  }
  jpeg_start_decompress(&cinfo);
  const std::size_t oc = static_cast<std::size_t>(cinfo.output_components);
  const std::size_t stride = static_cast<std::size_t>(cinfo.output_width) * oc;
  job->channels = oc;
  job->pixels = static_cast<unsigned char*>(std::malloc(stride * cinfo.output_height));
  if (!job->pixels) {
    job->out_of_memory = true;
    std::snprintf(err.message, sizeof err.message, "out of memory");
    std::longjmp(err.jump, 1);
  }
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = job->pixels + static_cast<std::size_t>(cinfo.output_scanline) * stride;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);  // reads through EOI: a warning there is an error too
  jpeg_destroy_decompress(&cinfo);
  return true;
}

Loaded load_jpeg(const std::string& path, const std::vector<unsigned char>& bytes) {
  const JpegLayout lay = walk_jpeg(path, bytes);
  if (lay.components != 1 && lay.components != 3 && lay.components != 4)
    fail(path,
         "unsupported JPEG: " + num(lay.components) + " components (1, 3 and 4 (CMYK) are read)");
  const std::size_t out_channels = lay.components == 1 ? 1 : 3;
  check_sides(path, ImageKind::kJpeg, lay.w, lay.h);
  // Huffman coding spends at least one bit on each 8x8 block of every component in the first
  // scan (a DC code, or a DC code and an end-of-block code), and each component has at least
  // min_blocks blocks.
  check_plausible(path, ImageKind::kJpeg, lay.w, lay.h, (lay.min_blocks + 7) / 8, lay.entropy_bytes,
                  bytes.size(), "Huffman coding spends at least 1 bit per 8x8 block");
  check_values(path, ImageKind::kJpeg, lay.w, lay.h, out_channels);

  JpegJob job{};
  job.data = bytes.data();
  job.size = bytes.size();
  job.w = lay.w;
  job.h = lay.h;
  job.channels = lay.components;
  if (!jpeg_decode(&job)) {
    if (job.out_of_memory) throw std::bad_alloc();
    fail(path, std::string("corrupt JPEG: ") + job.message);
  }
  std::unique_ptr<unsigned char, decltype(&std::free)> hold(job.pixels, &std::free);
  Pixels p;
  p.w = lay.w;
  p.h = lay.h;
  p.channels = out_channels;
  Loaded out = make_loaded(p);
  const std::size_t n = p.w * p.h;
  double* dst = out.array.data();
  if (job.channels == 4) {
    // Adobe CMYK/YCCK JPEGs store inverted ink: R = C * K / 255 (likewise G, B).
    for (std::size_t i = 0; i < n; ++i) {
      const unsigned char* q = job.pixels + 4 * i;
      for (std::size_t c = 0; c < 3; ++c)
        dst[3 * i + c] = static_cast<double>((q[c] * q[3] + 127) / 255);
    }
  } else {
    fill_values(&out, job.pixels);
  }
  return out;
}

// ============================================================= stb_image formats (with walks)

struct StbFree {
  void operator()(void* p) const { stbi_image_free(p); }
};

std::uint32_t le32(const unsigned char* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}
std::uint16_t le16(const unsigned char* p) {
  return static_cast<std::uint16_t>(p[0] | (p[1] << 8));
}

// The header facts the walks establish.
struct StbPlan {
  std::size_t w = 0, h = 0;
  double scale = 255.0;      // PNM: maxval
  std::size_t data = 0;      // PNM: offset of the samples
  std::size_t channels = 0;  // PNM
};

void need(const std::string& path, ImageKind kind, bool ok, const std::string& what) {
  if (!ok) fail(path, std::string("corrupt ") + kind_name(kind) + ": " + what);
}

void truncated(const std::string& path, ImageKind kind, std::size_t w, std::size_t h,
               std::size_t needed, std::size_t have) {
  fail(path, std::string("truncated ") + kind_name(kind) + ": the header declares " + num(w) +
                 " x " + num(h) + " pixels, which take " + num(needed) + " bytes; the file has " +
                 num(have));
}

StbPlan plan_bmp(const std::string& path, const std::vector<unsigned char>& b) {
  const ImageKind k = ImageKind::kBmp;
  need(path, k, b.size() >= 26, "the headers are incomplete");
  const std::size_t offset = le32(&b[10]);
  const std::uint32_t hsz = le32(&b[14]);
  StbPlan p;
  std::size_t bpp = 0, compression = 0;
  if (hsz == 12) {
    p.w = le16(&b[18]);
    p.h = le16(&b[20]);
    bpp = le16(&b[24]);
  } else {
    need(path, k, b.size() >= 34, "the headers are incomplete");
    const auto w = static_cast<std::int32_t>(le32(&b[18]));
    const auto h = static_cast<std::int32_t>(le32(&b[22]));
    need(path, k, w > 0 && h != 0 && h != INT32_MIN, "invalid width or height");
    p.w = static_cast<std::size_t>(w);
    p.h = static_cast<std::size_t>(h < 0 ? -static_cast<std::int64_t>(h) : h);
    bpp = le16(&b[28]);
    compression = le32(&b[30]);
  }
  check_sides(path, k, p.w, p.h);
  if ((compression == 0 || compression == 3) &&
      (bpp == 1 || bpp == 4 || bpp == 8 || bpp == 16 || bpp == 24 || bpp == 32)) {
    const std::size_t stride = (p.w * bpp + 31) / 32 * 4;
    const std::size_t needed = offset + stride * p.h;
    if (needed > b.size()) truncated(path, k, p.w, p.h, needed, b.size());
  }
  // Anything else (RLE, embedded JPEG/PNG, odd depths) stb refuses with its own reason.
  return p;
}

// Skips PNM whitespace and '#' comments; returns false at the end of the data.
bool pnm_skip(const std::vector<unsigned char>& b, std::size_t* pos) {
  while (*pos < b.size()) {
    const unsigned char c = b[*pos];
    if (c == '#') {
      while (*pos < b.size() && b[*pos] != '\n' && b[*pos] != '\r') ++*pos;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
      ++*pos;
    } else {
      return true;
    }
  }
  return false;
}

bool pnm_number(const std::vector<unsigned char>& b, std::size_t* pos, std::size_t* out) {
  if (!pnm_skip(b, pos)) return false;
  std::size_t v = 0, digits = 0;
  while (*pos < b.size() && b[*pos] >= '0' && b[*pos] <= '9') {
    if (v > 100000000) return false;  // far beyond any limit
    v = v * 10 + static_cast<std::size_t>(b[*pos] - '0');
    ++*pos;
    ++digits;
  }
  *out = v;
  return digits > 0;
}

StbPlan plan_pnm(const std::string& path, const std::vector<unsigned char>& b) {
  const ImageKind k = ImageKind::kPnm;
  const std::size_t channels = b[1] == '6' ? 3 : 1;
  std::size_t pos = 2, maxval = 0;
  StbPlan p;
  need(path, k,
       pnm_number(b, &pos, &p.w) && pnm_number(b, &pos, &p.h) && pnm_number(b, &pos, &maxval),
       "the header (width, height, maxval) is incomplete or not a number");
  need(path, k, pos < b.size(), "no whitespace after the header");
  ++pos;  // the single whitespace byte before the data
  need(path, k, maxval >= 1 && maxval <= 65535, "maxval " + num(maxval) + " outside 1..65535");
  check_sides(path, k, p.w, p.h);
  const std::size_t needed = pos + p.w * p.h * channels * (maxval > 255 ? 2 : 1);
  if (needed > b.size()) truncated(path, k, p.w, p.h, needed, b.size());
  p.scale = static_cast<double>(maxval);
  p.data = pos;
  p.channels = channels;
  return p;
}

StbPlan plan_tga(const std::string& path, const std::vector<unsigned char>& b) {
  const ImageKind k = ImageKind::kTga;
  need(path, k, b.size() >= 18, "the header is incomplete");
  const std::size_t idlen = b[0], indexed = b[1], type = b[2];
  const std::size_t pal_start = le16(&b[3]), pal_len = le16(&b[5]), pal_bits = b[7];
  StbPlan p;
  p.w = le16(&b[12]);
  p.h = le16(&b[14]);
  const std::size_t bpp = b[16];
  need(path, k, type == 1 || type == 2 || type == 3 || type == 9 || type == 10 || type == 11,
       "unsupported image type " + num(type));
  check_sides(path, k, p.w, p.h);
  const std::size_t px = (bpp + 7) / 8;
  need(path, k, px >= 1 && px <= 4, "unsupported " + num(bpp) + " bits per pixel");
  std::size_t pos = 18 + idlen;
  if (indexed) pos += pal_start + pal_len * ((pal_bits + 7) / 8);  // as stb reads it
  if (pos > b.size()) truncated(path, k, p.w, p.h, pos, b.size());
  const std::size_t pixels = p.w * p.h;
  if (type < 8) {
    const std::size_t needed = pos + pixels * px;
    if (needed > b.size()) truncated(path, k, p.w, p.h, needed, b.size());
    return p;
  }
  // RLE: walk the packets until they cover every pixel.
  std::size_t covered = 0;
  while (covered < pixels) {
    if (pos >= b.size())
      fail(path, "truncated TGA: the run-length data covers " + num(covered) + " of " +
                     num(pixels) + " pixels");
    const unsigned cmd = b[pos++];
    const std::size_t count = (cmd & 127u) + 1;
    pos += (cmd & 128u) ? px : count * px;
    if (pos > b.size())
      fail(path, "truncated TGA: the run-length data covers " + num(covered) + " of " +
                     num(pixels) + " pixels");
    covered += count;
  }
  return p;
}

StbPlan plan_hdr(const std::string& path, const std::vector<unsigned char>& b) {
  const ImageKind k = ImageKind::kHdr;
  // Header lines up to an empty line, then "-Y <h> +X <w>".
  std::size_t pos = 0;
  auto line = [&]() {
    std::string s;
    while (pos < b.size() && b[pos] != '\n') {
      if (s.size() < 1024) s.push_back(static_cast<char>(b[pos]));
      ++pos;
    }
    need(path, k, pos < b.size(), "the header does not end");
    ++pos;
    return s;
  };
  line();  // signature
  while (!line().empty()) {
  }
  const std::string res = line();
  unsigned long long hh = 0, ww = 0;
  char tail = 0;
  need(path, k, std::sscanf(res.c_str(), "-Y %llu +X %llu%c", &hh, &ww, &tail) == 2,
       "unsupported resolution line (only \"-Y <height> +X <width>\" is read)");
  need(path, k, hh <= kImageMaxSide && ww <= kImageMaxSide,
       "header declares more than " + num(kImageMaxSide) + " pixels per side");
  StbPlan p;
  p.w = static_cast<std::size_t>(ww);
  p.h = static_cast<std::size_t>(hh);
  check_sides(path, k, p.w, p.h);
  const std::size_t flat = pos + 4 * p.w * p.h;
  // stb reads flat data when the width is outside 8..32767 or the first scanline does not start
  // with a run-length header; then every pixel takes 4 bytes.
  const bool rle_width = p.w >= 8 && p.w < 32768;
  if (!rle_width || b.size() - pos < 4 || b[pos] != 2 || b[pos + 1] != 2 || (b[pos + 2] & 0x80)) {
    if (flat > b.size()) truncated(path, k, p.w, p.h, flat, b.size());
    return p;
  }
  // A run-length scanline takes at least 4 + 4 * 2 * ceil(w / 127) bytes.
  const std::size_t min_line = 4 + 8 * ((p.w + 126) / 127);
  check_plausible(path, k, p.w, p.h, min_line * p.h, b.size() - pos, b.size(),
                  "a run-length scanline takes at least 4 + 8 * ceil(width / 127) bytes");
  auto cut = [&](std::size_t y) {
    fail(path, "truncated Radiance HDR: the data ends in scanline " + num(y) + " of " + num(p.h));
  };
  for (std::size_t y = 0; y < p.h; ++y) {
    if (b.size() - pos < 4) cut(y);
    need(path, k, b[pos] == 2 && b[pos + 1] == 2 && !(b[pos + 2] & 0x80),
         "scanline " + num(y) + " is not run-length encoded like the first");
    need(path, k, static_cast<std::size_t>((b[pos + 2] << 8) | b[pos + 3]) == p.w,
         "scanline " + num(y) + " has the wrong length");
    pos += 4;
    for (int c = 0; c < 4; ++c) {
      std::size_t i = 0;
      while (i < p.w) {
        if (pos >= b.size()) cut(y);
        std::size_t count = b[pos++];
        if (count > 128) {
          count -= 128;
          ++pos;
        } else {
          pos += count;
        }
        if (pos > b.size()) cut(y);
        need(path, k, count <= p.w - i, "bad run-length data in scanline " + num(y));
        i += count;
      }
    }
  }
  return p;
}

StbPlan plan_gif(const std::string& path, const std::vector<unsigned char>& b) {
  const ImageKind k = ImageKind::kGif;
  need(path, k, b.size() >= 13, "the header is incomplete");
  StbPlan p;
  p.w = le16(&b[6]);
  p.h = le16(&b[8]);
  check_sides(path, k, p.w, p.h);
  // Walk to the first image's data and check its sub-blocks are all present.
  std::size_t pos = 13;
  if (b[10] & 0x80) pos += 3u << ((b[10] & 7) + 1);
  std::size_t data = 0;
  auto sub_blocks = [&]() {
    data = 0;
    for (;;) {
      need(path, k, pos < b.size(), "the file ends inside a data block (truncated)");
      const std::size_t len = b[pos++];
      if (len == 0) return;
      need(path, k, len <= b.size() - pos, "the file ends inside a data block (truncated)");
      pos += len;
      data += len;
    }
  };
  for (;;) {
    need(path, k, pos < b.size(), "the file ends before the first image (truncated)");
    const unsigned char tag = b[pos++];
    if (tag == 0x21) {  // extension
      need(path, k, pos < b.size(), "the file ends inside an extension (truncated)");
      ++pos;
      sub_blocks();
    } else if (tag == 0x2c) {  // image descriptor
      need(path, k, b.size() - pos >= 9, "the file ends inside an image descriptor");
      const unsigned flags = b[pos + 8];
      pos += 9;
      if (flags & 0x80) pos += 3u << ((flags & 7) + 1);
      need(path, k, pos < b.size(), "the file ends before the image data (truncated)");
      ++pos;  // LZW minimum code size
      sub_blocks();
      // LZW: a code of at least 1 bit yields at most 4096 pixels. The canvas (what stb
      // allocates) is held to what the first frame's data can cover.
      check_plausible(path, k, p.w, p.h, (p.w * p.h + 32767) / 32768, data, b.size(),
                      "an LZW code of at least 1 bit yields at most 4096 pixels");
      return p;
    } else {
      need(path, k, false, "no image before the trailer");
    }
  }
}

std::string stb_reason() {
  const char* r = stbi_failure_reason();
  return r ? r : "unknown error";
}

Loaded load_stb(const std::string& path, const std::vector<unsigned char>& bytes, ImageKind kind) {
  StbPlan plan;
  switch (kind) {
    case ImageKind::kBmp:
      plan = plan_bmp(path, bytes);
      break;
    case ImageKind::kTga:
      plan = plan_tga(path, bytes);
      break;
    case ImageKind::kHdr:
      plan = plan_hdr(path, bytes);
      break;
    case ImageKind::kGif:
      plan = plan_gif(path, bytes);
      break;
    default:
      fail(path, "internal error: not an stb format");
  }
  const std::string name = kind_name(kind);
  auto corrupt = [&]() {
    fail(path, "corrupt or unsupported " + name + " (stb_image: " + stb_reason() + ")");
  };
  if (bytes.size() > static_cast<std::size_t>(INT_MAX))
    fail(path, name + " file too large for the decoder (over 2 GiB)");
  const int len = static_cast<int>(bytes.size());
  int w = 0, h = 0, comp = 0;
  if (!stbi_info_from_memory(bytes.data(), len, &w, &h, &comp)) corrupt();
  if (w <= 0 || h <= 0 || comp < 1 || comp > 4 || static_cast<std::size_t>(w) != plan.w ||
      static_cast<std::size_t>(h) != plan.h)
    fail(path, "corrupt " + name + ": the decoder reads a different size (" + num(plan.w) + " x " +
                   num(plan.h) + " in the header)");
  check_values(path, kind, plan.w, plan.h, static_cast<std::size_t>(comp));

  Pixels p;
  p.w = plan.w;
  p.h = plan.h;
  void* pixels = nullptr;
  enum { k8, k16, kF } depth = k8;
  if (kind == ImageKind::kHdr) {
    depth = kF;
    pixels = stbi_loadf_from_memory(bytes.data(), len, &w, &h, &comp, 0);
  } else if (stbi_is_16_bit_from_memory(bytes.data(), len)) {
    depth = k16;
    pixels = stbi_load_16_from_memory(bytes.data(), len, &w, &h, &comp, 0);
  } else {
    pixels = stbi_load_from_memory(bytes.data(), len, &w, &h, &comp, 0);
  }
  if (!pixels) corrupt();
  std::unique_ptr<void, StbFree> hold(pixels);
  if (static_cast<std::size_t>(w) != plan.w || static_cast<std::size_t>(h) != plan.h || comp < 1 ||
      comp > 4)
    fail(path, "unexpected " + name + " layout from the decoder");
  p.channels = static_cast<std::size_t>(comp);
  Loaded out = make_loaded(p);
  switch (depth) {
    case k8:
      out.dtype = DType::U8;
      fill_values(&out, static_cast<const unsigned char*>(pixels));
      break;
    case k16:
      out.dtype = DType::U16;
      fill_values(&out, static_cast<const std::uint16_t*>(pixels));
      break;
    case kF:
      out.dtype = DType::F32;
      fill_values(&out, static_cast<const float*>(pixels));
      break;
  }
  return out;
}

// Binary PGM/PPM, decoded here (stb_image 2.27 reads 16-bit PNM samples in the host's byte
// order; PNM stores them big endian): the samples, each at most maxval.
Loaded load_pnm(const std::string& path, const std::vector<unsigned char>& b) {
  const StbPlan plan = plan_pnm(path, b);
  check_values(path, ImageKind::kPnm, plan.w, plan.h, plan.channels);
  Pixels p;
  p.w = plan.w;
  p.h = plan.h;
  p.channels = plan.channels;
  Loaded out = make_loaded(p);
  const bool wide = plan.scale > 255;
  out.dtype = wide ? DType::U16 : DType::U8;
  const unsigned char* src = b.data() + plan.data;
  double* dst = out.array.data();
  const std::size_t n = out.array.size();
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned v = wide ? static_cast<unsigned>((src[2 * i] << 8) | src[2 * i + 1]) : src[i];
    if (v > plan.scale)
      fail(path, "corrupt PNM: sample " + num(i) + " is " + num(v) + ", above maxval " +
                     num(static_cast<std::size_t>(plan.scale)));
    dst[i] = v;
  }
  return out;
}

Loaded load_image_impl(const std::string& path) {
  const std::vector<unsigned char> bytes = io::read_file(path);
  const ImageKind kind = detect_kind(path, bytes);
  switch (kind) {
    case ImageKind::kPng:
      return load_png(path, bytes);
    case ImageKind::kJpeg:
      return load_jpeg(path, bytes);
    case ImageKind::kPnm:
      return load_pnm(path, bytes);
    default:
      return load_stb(path, bytes, kind);
  }
}

// --- 16-bit PNG through libpng, into memory -------------------------------------------------

struct PngSink {
  std::vector<unsigned char>* out;
  char message[256];
  bool out_of_memory;
};

void png_sink_write(png_structp png, png_bytep data, png_size_t n) {
  auto* sink = static_cast<PngSink*>(png_get_io_ptr(png));
  bool ok = true;
  try {
    sink->out->insert(sink->out->end(), data, data + n);
  } catch (...) {
    ok = false;
  }
  if (!ok) {
    sink->out_of_memory = true;
    png_error(png, "out of memory");
  }
}

void png_sink_flush(png_structp) {}

void png_on_error(png_structp png, png_const_charp msg) {
  auto* sink = static_cast<PngSink*>(png_get_error_ptr(png));
  std::snprintf(sink->message, sizeof sink->message, "%s", msg ? msg : "unknown error");
  png_longjmp(png, 1);
}

void png_on_warning(png_structp, png_const_charp) {}

// Encodes big-endian 16-bit rows (`rows` holds h * w * channels * 2 bytes). Holds no C++ objects
// with destructors across setjmp/longjmp. Returns false with sink->message set on failure.
bool encode_png16(const unsigned char* rows, png_uint_32 w, png_uint_32 h, int channels,
                  PngSink* sink) {
  static const int kColorType[5] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA,
                                    PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGBA};
  png_structp png =
      png_create_write_struct(PNG_LIBPNG_VER_STRING, sink, png_on_error, png_on_warning);
  if (!png) {
    std::snprintf(sink->message, sizeof sink->message, "cannot initialise libpng");
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (!info) {
    png_destroy_write_struct(&png, nullptr);
    std::snprintf(sink->message, sizeof sink->message, "cannot initialise libpng");
    return false;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return false;
  }
  png_set_write_fn(png, sink, png_sink_write, png_sink_flush);
  png_set_IHDR(png, info, w, h, 16, kColorType[channels], PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  const std::size_t stride = static_cast<std::size_t>(w) * static_cast<std::size_t>(channels) * 2;
  for (png_uint_32 y = 0; y < h; ++y) png_write_row(png, rows + y * stride);
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}
// stb's write callback; C code sits between us and the caller, so no exception may escape.
struct StbSink {
  std::vector<unsigned char>* out;
  bool out_of_memory;
};

void stb_sink(void* context, void* data, int size) {
  auto* sink = static_cast<StbSink*>(context);
  if (sink->out_of_memory || size <= 0) return;
  const auto* p = static_cast<const unsigned char*>(data);
  try {
    sink->out->insert(sink->out->end(), p, p + size);
  } catch (...) {
    sink->out_of_memory = true;
  }
}

void save_image_impl(const std::string& path, const ArrayD& a, int bits) {
  const std::string ext = io::lower_extension(path);
  ImageKind kind;
  if (ext == ".png") {
    kind = ImageKind::kPng;
  } else if (ext == ".jpg" || ext == ".jpeg") {
    kind = ImageKind::kJpeg;
  } else {
    fail(path, "unsupported image extension '" + ext + "' (expected .png, .jpg or .jpeg)");
  }
  if (a.empty()) fail(path, "cannot save an empty array");
  if (a.rank() != 2)
    fail(path, "an image must be 2-D, got a " + std::to_string(a.rank()) + "-D array of shape " +
                   describe_shape(a.dims(), a.channels()));
  if (bits != 8 && bits != 16)
    fail(path, "unsupported bit depth " + std::to_string(bits) + " (expected 8 or 16)");
  const std::size_t h = a.dim(0), w = a.dim(1), c = a.channels();
  if (kind == ImageKind::kJpeg) {
    if (bits != 8) fail(path, "JPEG supports only 8-bit samples (use .png for 16 bits)");
    if (c != 1 && c != 3)
      fail(path, "JPEG cannot store " + std::to_string(c) +
                     " channels (alpha is not supported; expected 1 or 3, use .png)");
    if (w > 65535 || h > 65535)
      fail(path, "image of " + describe_shape(a.dims(), c) + " exceeds the JPEG limit of 65535");
  }
  // Row bytes must fit an int for stb and a png_uint_32 for libpng.
  if (w * c * 2 > static_cast<std::size_t>(INT_MAX) || h > static_cast<std::size_t>(INT_MAX))
    fail(path, "image of " + describe_shape(a.dims(), c) + " is too large to encode");

  std::vector<unsigned char> encoded;
  const std::size_t n = a.size();
  if (bits == 8) {
    std::vector<unsigned char> px(n);
    for (std::size_t i = 0; i < n; ++i)
      px[i] = static_cast<unsigned char>(io::quantize(a[i], 255.0));
    const int iw = static_cast<int>(w), ih = static_cast<int>(h), ic = static_cast<int>(c);
    StbSink sink{&encoded, false};
    // JPEG quality 95: stb then keeps full-resolution chroma (it subsamples at 90 and below).
    int ok = kind == ImageKind::kPng
                 ? stbi_write_png_to_func(stb_sink, &sink, iw, ih, ic, px.data(), iw * ic)
                 : stbi_write_jpg_to_func(stb_sink, &sink, iw, ih, ic, px.data(), 95);
    if (sink.out_of_memory) throw std::bad_alloc();
    if (!ok) fail(path, "the stb image writer failed");
  } else {
    std::vector<unsigned char> rows(n * 2);
    for (std::size_t i = 0; i < n; ++i) {
      auto v = static_cast<unsigned>(io::quantize(a[i], 65535.0));
      rows[2 * i] = static_cast<unsigned char>(v >> 8);  // PNG stores 16-bit big endian
      rows[2 * i + 1] = static_cast<unsigned char>(v & 0xffu);
    }
    PngSink sink{&encoded, {0}, false};
    if (!encode_png16(rows.data(), static_cast<png_uint_32>(w), static_cast<png_uint_32>(h),
                      static_cast<int>(c), &sink)) {
      if (sink.out_of_memory) throw std::bad_alloc();
      fail(path, std::string("libpng failed: ") + sink.message);
    }
  }
  io::write_file_atomic(path, encoded);
}

}  // namespace

Loaded load_image(const std::string& path) {
  return io::guard_memory(path, [&] { return io::finish_loaded(path, load_image_impl(path)); });
}

void save_image(const std::string& path, const ArrayD& a, int bits) {
  io::guard_memory(path, [&] { save_image_impl(path, a, bits); });
}

}  // namespace sv
