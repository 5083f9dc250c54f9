// TIFF reading and writing through libtiff (>= 4.5 for per-call error handlers).
//
// Reading: the whole file is read through the input guard (io::read_file) and handed to libtiff
// with TIFFClientOpenExt over that buffer (memory-mapped procs), so libtiff never opens a path
// and every strip or tile it reads is bounded by the bytes we hold. libtiff's errors and
// warnings go to handlers set per call (TIFFOpenOptions) and, for the few messages libtiff
// raises without a TIFF handle, to process-wide handlers installed once that write nothing:
// libtiff never prints to stderr, and its first error becomes the sv::Error's reason.
// All pages are examined (sizes, types, limits) before any pixel memory is allocated.
//
// Writing: libtiff writes into a growable memory buffer (TIFFClientOpenExt again), which is then
// written with io::write_file_atomic (temporary + rename): a failed save leaves OUT untouched.
#include <tiffio.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "io_common.h"
#include "io_layout.h"
#include "splineview/io.h"
#include "splineview/text.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "io_tiff.cpp assumes a little-endian host (libtiff hands over native-order samples)"
#endif

namespace sv {

namespace {

using io::fail;

// ---- libtiff messages ----

// What libtiff said during one call: its first error (the reason we report).
struct Messages {
  std::string client_name;  // the name given to TIFFClientOpenExt (omitted from messages)
  std::string error;
};

thread_local Messages* t_messages = nullptr;  // for messages raised without a TIFF handle

void record(Messages* m, const char* module, const char* fmt, va_list ap) {
  if (!m || !m->error.empty()) return;
  char buf[512];
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  std::string text = buf;
  // libtiff names the file (our client name, the path) inside some messages: drop it, the
  // sv::Error starts with the path already.
  const std::string named = m->client_name + ": ";
  for (std::size_t at; !m->client_name.empty() && (at = text.find(named)) != std::string::npos;)
    text.erase(at, named.size());
  if (module && *module && m->client_name != module) text = std::string(module) + ": " + text;
  m->error = text;
}

int on_error(TIFF*, void* user, const char* module, const char* fmt, va_list ap) {
  record(static_cast<Messages*>(user), module, fmt, ap);
  return 1;  // handled: the process-wide handlers are not called
}

int on_warning(TIFF*, void*, const char*, const char*, va_list) {
  return 1;  // warnings (unknown tags, ...) are ignored; errors decide
}

void global_error(thandle_t, const char* module, const char* fmt, va_list ap) {
  record(t_messages, module, fmt, ap);
}
void global_warning(thandle_t, const char*, const char*, va_list) {}

// libtiff's process-wide handlers print to stderr; replace them once by handlers that only
// record (into the calling thread's Messages) or drop the message.
void silence_libtiff() {
  static std::once_flag once;
  std::call_once(once, [] {
    TIFFSetErrorHandler(nullptr);
    TIFFSetWarningHandler(nullptr);
    TIFFSetErrorHandlerExt(global_error);
    TIFFSetWarningHandlerExt(global_warning);
  });
}

// Sets t_messages for its lifetime.
class ScopedMessages {
 public:
  explicit ScopedMessages(Messages* m) : saved_(t_messages) { t_messages = m; }
  ~ScopedMessages() { t_messages = saved_; }
  ScopedMessages(const ScopedMessages&) = delete;
  ScopedMessages& operator=(const ScopedMessages&) = delete;

 private:
  Messages* saved_;
};

std::string reason(const Messages& m, const char* fallback) {
  return printable(m.error.empty() ? std::string(fallback) : m.error, 200);
}

// ---- memory-backed TIFF handles ----

// A buffer libtiff reads (read-only, mapped) or writes (grows).
struct MemFile {
  const unsigned char* rdata = nullptr;         // reading
  std::vector<unsigned char>* wdata = nullptr;  // writing
  std::uint64_t size = 0;
  std::uint64_t pos = 0;
};

tmsize_t mem_read(thandle_t h, void* buf, tmsize_t n) {
  auto* f = static_cast<MemFile*>(h);
  if (n <= 0 || f->pos >= f->size) return 0;
  const std::uint64_t k = std::min<std::uint64_t>(static_cast<std::uint64_t>(n), f->size - f->pos);
  const unsigned char* src = f->rdata ? f->rdata : f->wdata->data();
  std::memcpy(buf, src + f->pos, static_cast<std::size_t>(k));
  f->pos += k;
  return static_cast<tmsize_t>(k);
}

tmsize_t mem_write(thandle_t h, void* buf, tmsize_t n) {
  auto* f = static_cast<MemFile*>(h);
  if (!f->wdata || n < 0) return -1;
  const std::uint64_t end = f->pos + static_cast<std::uint64_t>(n);
  if (end > SIZE_MAX / 2) return -1;
  try {
    if (end > f->wdata->size()) f->wdata->resize(static_cast<std::size_t>(end));
  } catch (const std::exception&) {
    return -1;  // libtiff reports the failed write; nothing may escape into C code
  }
  if (n > 0) std::memcpy(f->wdata->data() + f->pos, buf, static_cast<std::size_t>(n));
  f->pos = end;
  f->size = std::max<std::uint64_t>(f->size, end);
  return n;
}

toff_t mem_seek(thandle_t h, toff_t off, int whence) {
  auto* f = static_cast<MemFile*>(h);
  std::uint64_t base = 0;
  if (whence == SEEK_CUR) base = f->pos;
  if (whence == SEEK_END) base = f->size;
  if (off > std::numeric_limits<std::uint64_t>::max() - base) return static_cast<toff_t>(-1);
  f->pos = base + off;
  return f->pos;
}

int mem_close(thandle_t) {
  return 0;
}
toff_t mem_size(thandle_t h) {
  return static_cast<MemFile*>(h)->size;
}

int mem_map(thandle_t h, void** base, toff_t* size) {
  auto* f = static_cast<MemFile*>(h);
  if (!f->rdata) return 0;
  *base = const_cast<unsigned char*>(f->rdata);
  *size = f->size;
  return 1;
}
void mem_unmap(thandle_t, void*, toff_t) {}

// An open TIFF over a MemFile, closed on destruction.
class Tiff {
 public:
  Tiff(MemFile* file, const char* mode, Messages* messages) {
    silence_libtiff();
    TIFFOpenOptions* opts = TIFFOpenOptionsAlloc();
    if (!opts) throw std::bad_alloc();
    TIFFOpenOptionsSetErrorHandlerExtR(opts, on_error, messages);
    TIFFOpenOptionsSetWarningHandlerExtR(opts, on_warning, nullptr);
    tif_ = TIFFClientOpenExt(messages->client_name.c_str(), mode, file, mem_read, mem_write,
                             mem_seek, mem_close, mem_size, mem_map, mem_unmap, opts);
    TIFFOpenOptionsFree(opts);
  }
  ~Tiff() {
    if (tif_) TIFFClose(tif_);
  }
  Tiff(const Tiff&) = delete;
  Tiff& operator=(const Tiff&) = delete;
  TIFF* get() const { return tif_; }
  // Flushes and closes; returns false when libtiff failed to write.
  bool close() {
    TIFF* t = tif_;
    tif_ = nullptr;
    if (!t) return false;
    const int ok = TIFFFlush(t);
    TIFFClose(t);
    return ok == 1;
  }

 private:
  TIFF* tif_ = nullptr;
};

// ---- reading ----

// Decoded bytes per compressed byte at most, per compression (see io.h).
double max_ratio(std::uint16_t compression) {
  switch (compression) {
    case COMPRESSION_NONE:
      return 1;
    case COMPRESSION_PACKBITS:
      return 64;  // 2 bytes -> a run of 128
    case COMPRESSION_ADOBE_DEFLATE:
    case COMPRESSION_DEFLATE:
      return 1032;  // deflate's limit
    case COMPRESSION_LZW:
      return 4096;  // a code of at least 9 bits yields at most 4096 bytes
    case COMPRESSION_JPEG:
    case COMPRESSION_OJPEG:
      return 1024;  // at least 1 bit per 8x8 block of (at most 16-bit) samples
    default:
      return 65536;  // other codecs libtiff decodes (zstd, LZMA, WebP, ...): generous
  }
}

const char* compression_name(std::uint16_t c) {
  const TIFFCodec* codec = TIFFFindCODEC(c);
  return codec && codec->name ? codec->name : "unknown";
}

// An open TIFF file read by libtiff itself (its directories only: the memory-mapped probe),
// without libtiff's own memory map ("rm"), closed on destruction.
class TiffFile {
 public:
  TiffFile(const std::string& path, Messages* messages) {
    silence_libtiff();
    TIFFOpenOptions* opts = TIFFOpenOptionsAlloc();
    if (!opts) throw std::bad_alloc();
    TIFFOpenOptionsSetErrorHandlerExtR(opts, on_error, messages);
    TIFFOpenOptionsSetWarningHandlerExtR(opts, on_warning, nullptr);
    tif_ = TIFFOpenExt(path.c_str(), "rm", opts);
    TIFFOpenOptionsFree(opts);
  }
  ~TiffFile() {
    if (tif_) TIFFClose(tif_);
  }
  TiffFile(const TiffFile&) = delete;
  TiffFile& operator=(const TiffFile&) = delete;
  TIFF* get() const { return tif_; }

 private:
  TIFF* tif_ = nullptr;
};

// One image file directory (page) as far as the loader needs it.
struct Page {
  std::uint64_t offset = 0;  // of the IFD (TIFFSetSubDirectory)
  std::size_t index = 0;     // IFD number in the chain
  std::uint32_t width = 0, height = 0;
  std::uint16_t spp = 1, bps = 1, format = SAMPLEFORMAT_UINT, planar = PLANARCONFIG_CONTIG;
  std::uint16_t photometric = PHOTOMETRIC_MINISBLACK, compression = COMPRESSION_NONE;
  bool tiled = false;
  std::uint32_t tile_w = 0, tile_h = 0, rows_per_strip = 0;
  bool palette = false;
  bool jpeg_rgb = false;               // YCbCr JPEG decoded to RGB by libjpeg
  io::Scalar scalar = io::Scalar::U8;  // the stored sample type
  std::size_t channels = 1;            // after palette expansion
  std::uint64_t stored_bytes = 0;      // compressed bytes present in the file
  // Strips that follow each other in the file with no gap, in order: their byte range
  // [data_begin, data_end) (what the memory-mapped read uses, for uncompressed pages).
  bool contiguous = false;
  std::uint64_t data_begin = 0, data_end = 0;
  std::uint16_t fill_order = FILLORDER_MSB2LSB;  // LSB2MSB: libtiff reverses every byte's bits
};

struct ImageJ {
  bool present = false;
  std::size_t images = 0, channels = 1, slices = 0, frames = 1;
  double spacing = 0;  // z, in `unit`
  std::string unit;
};

// mm per `unit`, or 0 when the unit is not a known length.
double unit_to_mm(std::string u) {
  u = io::to_lower(u);
  if (u == "micron" || u == "microns" || u == "um" || u == "\xc2\xb5m" || u == "\xb5m" ||
      u == "\\u00b5m" || u == "micrometer" || u == "micrometre")
    return 1e-3;
  if (u == "nm" || u == "nanometer" || u == "nanometre") return 1e-6;
  if (u == "mm" || u == "millimeter" || u == "millimetre") return 1;
  if (u == "cm" || u == "centimeter" || u == "centimetre") return 10;
  if (u == "m" || u == "meter" || u == "metre") return 1000;
  if (u == "inch" || u == "in") return 25.4;
  return 0;
}

// Parses "ImageJ=...\nkey=value\n..." (ImageJ's ImageDescription).
ImageJ parse_imagej(const std::string& path, const std::string& text) {
  ImageJ ij;
  if (text.compare(0, 7, "ImageJ=") != 0) return ij;
  ij.present = true;
  auto count = [&](const std::string& key, const std::string& v) -> std::size_t {
    if (v.empty() || v.size() > 12 || v.find_first_not_of("0123456789") != std::string::npos)
      fail(path, "ImageJ description: " + key + "=" + io::quote(v, 24) + " is not a count");
    const std::size_t n = std::stoull(v);
    if (n == 0) fail(path, "ImageJ description: " + key + "=0");
    return n;
  };
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    const std::size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "images") ij.images = count(key, value);
    if (key == "channels") ij.channels = count(key, value);
    if (key == "slices") ij.slices = count(key, value);
    if (key == "frames") ij.frames = count(key, value);
    if (key == "unit") ij.unit = value;
    if (key == "spacing") {
      char* endp = nullptr;
      const double s = std::strtod(value.c_str(), &endp);
      if (endp != value.c_str() && *endp == '\0' && std::isfinite(s) && s > 0) ij.spacing = s;
    }
  }
  return ij;
}

template <class T>
T get_tag(TIFF* tif, ttag_t tag, T fallback) {
  T v{};
  return TIFFGetField(tif, tag, &v) == 1 ? v : fallback;
}

std::string describe_page(const Page& p) {
  return std::to_string(p.width) + "x" + std::to_string(p.height) + " " +
         dtype_name(io::dtype_of(p.scalar)) + ", " + std::to_string(p.channels) +
         (p.channels == 1 ? " sample" : " samples") + " per pixel";
}

// Reads the current directory's fields into a Page and checks what the loader supports.
Page read_page(const std::string& path, TIFF* tif, std::size_t index, std::uint64_t file_size) {
  Page p;
  p.index = index;
  p.offset = TIFFCurrentDirOffset(tif);
  const std::string where = index == 0 ? std::string() : " (page " + std::to_string(index) + ")";
  auto refuse = [&](const std::string& what) { fail(path, "TIFF" + where + ": " + what); };
  if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &p.width) ||
      !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &p.height) || p.width == 0 || p.height == 0)
    refuse("missing or zero image size");
  p.spp = get_tag<std::uint16_t>(tif, TIFFTAG_SAMPLESPERPIXEL, 1);
  p.bps = get_tag<std::uint16_t>(tif, TIFFTAG_BITSPERSAMPLE, 1);
  p.format = get_tag<std::uint16_t>(tif, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_UINT);
  p.planar = get_tag<std::uint16_t>(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  p.compression = get_tag<std::uint16_t>(tif, TIFFTAG_COMPRESSION, COMPRESSION_NONE);
  p.fill_order = get_tag<std::uint16_t>(tif, TIFFTAG_FILLORDER, FILLORDER_MSB2LSB);
  if (!TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &p.photometric))
    p.photometric = p.spp >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK;
  const std::uint32_t depth = get_tag<std::uint32_t>(tif, TIFFTAG_IMAGEDEPTH, 1);
  if (depth > 1) refuse("ImageDepth " + std::to_string(depth) + " (SGI volume) is not supported");
  if (p.width > kImageMaxSide || p.height > kImageMaxSide)
    refuse("image size " + std::to_string(p.width) + "x" + std::to_string(p.height) +
           " exceeds the limit of " + std::to_string(kImageMaxSide) + " pixels per side");
  if (!TIFFIsCODECConfigured(p.compression))
    refuse("compression " + std::to_string(p.compression) + " (" + compression_name(p.compression) +
           ") cannot be decoded by this libtiff");
  if (p.planar != PLANARCONFIG_CONTIG && p.planar != PLANARCONFIG_SEPARATE)
    refuse("PlanarConfiguration " + std::to_string(p.planar) + " is not valid");

  // Sample type.
  const std::uint16_t b = p.bps;
  switch (p.format) {
    case SAMPLEFORMAT_UINT:
      p.scalar = b == 8    ? io::Scalar::U8
                 : b == 16 ? io::Scalar::U16
                 : b == 32 ? io::Scalar::U32
                 : b == 64 ? io::Scalar::U64
                           : io::Scalar::Bool;  // Bool marks "unsupported" here
      break;
    case SAMPLEFORMAT_INT:
      p.scalar = b == 8    ? io::Scalar::I8
                 : b == 16 ? io::Scalar::I16
                 : b == 32 ? io::Scalar::I32
                 : b == 64 ? io::Scalar::I64
                           : io::Scalar::Bool;
      break;
    case SAMPLEFORMAT_IEEEFP:
      p.scalar = b == 16   ? io::Scalar::F16
                 : b == 32 ? io::Scalar::F32
                 : b == 64 ? io::Scalar::F64
                           : io::Scalar::Bool;
      break;
    default:
      refuse("SampleFormat " + std::to_string(p.format) +
             " (void or complex) is not supported; unsigned and signed integers and IEEE "
             "floats are");
  }
  if (p.scalar == io::Scalar::Bool)
    refuse(std::to_string(b) + "-bit " + (p.format == SAMPLEFORMAT_IEEEFP ? "float" : "integer") +
           " samples are not supported (integers: 8, 16, 32 or 64 bits; floats: 16, 32 or 64)");

  // Photometric interpretation and samples per pixel.
  switch (p.photometric) {
    case PHOTOMETRIC_MINISBLACK:
    case PHOTOMETRIC_MINISWHITE:
      if (p.spp < 1 || p.spp > 4)
        refuse(std::to_string(p.spp) + " samples per pixel (1 to 4 are read)");
      p.channels = p.spp;
      break;
    case PHOTOMETRIC_RGB:
      if (p.spp < 3 || p.spp > 4)
        refuse("RGB with " + std::to_string(p.spp) + " samples per pixel (3 or 4 are read)");
      p.channels = p.spp;
      break;
    case PHOTOMETRIC_PALETTE:
      if (p.spp != 1 || p.format != SAMPLEFORMAT_UINT || (b != 8 && b != 16))
        refuse("palette image with " + std::to_string(p.spp) + " samples of " + std::to_string(b) +
               " bits (8- or 16-bit indices are read)");
      p.palette = true;
      p.channels = 3;
      break;
    case PHOTOMETRIC_YCBCR:
      if (p.compression != COMPRESSION_JPEG || p.spp != 3 || b != 8)
        refuse("YCbCr is read only from JPEG-compressed 8-bit files");
      if (!TIFFSetField(tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB))
        refuse("cannot convert YCbCr to RGB");
      p.jpeg_rgb = true;
      p.channels = 3;
      break;
    default:
      refuse("photometric interpretation " + std::to_string(p.photometric) +
             " (e.g. CMYK, CIELab, LogLuv) is not supported; grey, RGB, palette and JPEG "
             "YCbCr are");
  }

  // Strips or tiles, and the bytes they occupy in the file (declared counts cut at the end of
  // the file, so that a forged count cannot pass the size check below).
  p.tiled = TIFFIsTiled(tif) != 0;
  if (p.tiled) {
    if (!TIFFGetField(tif, TIFFTAG_TILEWIDTH, &p.tile_w) ||
        !TIFFGetField(tif, TIFFTAG_TILELENGTH, &p.tile_h) || p.tile_w == 0 || p.tile_h == 0)
      refuse("tiled image without a valid tile size");
  } else {
    p.rows_per_strip = get_tag<std::uint32_t>(tif, TIFFTAG_ROWSPERSTRIP, p.height);
    if (p.rows_per_strip == 0) refuse("RowsPerStrip is 0");
  }
  const std::uint32_t chunks = p.tiled ? TIFFNumberOfTiles(tif) : TIFFNumberOfStrips(tif);
  p.contiguous = !p.tiled && chunks > 0;
  for (std::uint32_t i = 0; i < chunks; ++i) {
    const std::uint64_t off = TIFFGetStrileOffset(tif, i);
    const std::uint64_t n = TIFFGetStrileByteCount(tif, i);
    if (off < file_size) p.stored_bytes += std::min<std::uint64_t>(n, file_size - off);
    if (i == 0) p.data_begin = p.data_end = off;
    if (off != p.data_end || n > std::numeric_limits<std::uint64_t>::max() - off)
      p.contiguous = false;
    else
      p.data_end = off + n;
  }
  return p;
}

bool same_layout(const Page& a, const Page& b) {
  return a.width == b.width && a.height == b.height && a.scalar == b.scalar &&
         a.channels == b.channels && a.palette == b.palette && a.photometric == b.photometric;
}

// Converts `n` samples of `s` at `src` (every `stride`-th sample) into dst (every
// `dst_stride`-th double).
void convert(const std::string& path, const unsigned char* src, std::size_t n, std::size_t stride,
             io::Scalar s, double* dst, std::size_t dst_stride) {
  const std::size_t size = io::scalar_size(s);
  if (stride == 1 && dst_stride == 1) {
    io::decode_values_or_fail(path, src, n, s, false, dst);
    return;
  }
  for (std::size_t i = 0; i < n; ++i)
    io::decode_values_or_fail(path, src + i * stride * size, 1, s, false, dst + i * dst_stride);
}

// Decodes the current directory into `out` (the page's h*w*channels doubles, interleaved).
// For an ImageJ channel page (`channel_of` >= 0) the page's single sample goes to that channel
// of `out` with `out_channels` channels.
void decode_page(const std::string& path, TIFF* tif, const Page& p, Messages& msgs, double* out,
                 std::size_t out_channels, std::size_t channel_of) {
  const std::size_t w = p.width, h = p.height;
  const std::size_t size = io::scalar_size(p.scalar);
  const bool separate = p.planar == PLANARCONFIG_SEPARATE && p.spp > 1;
  const std::size_t planes = separate ? p.spp : 1;
  const std::size_t per_pixel = separate ? 1 : (p.jpeg_rgb ? 3 : p.spp);  // samples per pixel
  const std::size_t cw = p.tiled ? p.tile_w : w;
  const std::size_t ch = p.tiled ? p.tile_h : std::min<std::size_t>(p.rows_per_strip, h);
  const tmsize_t chunk_size = p.tiled ? TIFFTileSize(tif) : TIFFStripSize(tif);
  if (chunk_size <= 0) fail(path, "corrupt TIFF: " + reason(msgs, "invalid strip or tile size"));
  std::vector<unsigned char> buf(static_cast<std::size_t>(chunk_size));
  std::vector<std::uint16_t> idx;  // palette indices of one row
  std::uint16_t *red = nullptr, *green = nullptr, *blue = nullptr;
  std::size_t palette_size = 0;
  double palette_scale = 1;
  if (p.palette) {
    if (!TIFFGetField(tif, TIFFTAG_COLORMAP, &red, &green, &blue) || !red || !green || !blue)
      fail(path, "TIFF: palette image without a ColorMap");
    palette_size = std::size_t{1} << p.bps;
    // Colormaps hold 16-bit values; 8-bit palettes are usually stored as v * 257 (or, by old
    // writers, as 0..255). Either gives uint8 values; anything else stays 16-bit.
    bool small = true, multiple = true;
    for (std::size_t i = 0; i < palette_size; ++i)
      for (const std::uint16_t v : {red[i], green[i], blue[i]}) {
        small = small && v <= 255;
        multiple = multiple && v % 257 == 0;
      }
    palette_scale = small ? 1 : multiple ? 1.0 / 257 : 1;
  }

  const std::size_t across = (w + cw - 1) / cw, down = (h + ch - 1) / ch;
  for (std::size_t plane = 0; plane < planes; ++plane) {
    for (std::size_t ty = 0; ty < down; ++ty) {
      for (std::size_t tx = 0; tx < across; ++tx) {
        tmsize_t got;
        msgs.error.clear();
        if (p.tiled) {
          const std::uint32_t t = TIFFComputeTile(tif, static_cast<std::uint32_t>(tx * cw),
                                                  static_cast<std::uint32_t>(ty * ch), 0,
                                                  static_cast<std::uint16_t>(plane));
          got = TIFFReadEncodedTile(tif, t, buf.data(), chunk_size);
        } else {
          const std::uint32_t s = static_cast<std::uint32_t>(ty + plane * down);
          got = TIFFReadEncodedStrip(tif, s, buf.data(), chunk_size);
        }
        const std::size_t rows = std::min(ch, h - ty * ch), cols = std::min(cw, w - tx * cw);
        const std::size_t row_bytes = cw * per_pixel * size;
        const std::size_t needed = ((rows - 1) * cw + cols) * per_pixel * size;
        if (got < 0 || !msgs.error.empty())
          fail(path, "corrupt TIFF: " + reason(msgs, "cannot decode a strip or tile"));
        if (static_cast<std::size_t>(got) < needed)
          fail(path, "corrupt TIFF: " + std::string(p.tiled ? "tile" : "strip") + " " +
                         std::to_string(ty * across + tx) + " holds " + std::to_string(got) +
                         " bytes, " + std::to_string(needed) + " expected");
        for (std::size_t r = 0; r < rows; ++r) {
          const std::size_t y = ty * ch + r, x0 = tx * cw;
          const unsigned char* src = buf.data() + r * row_bytes;
          if (p.palette) {
            idx.resize(cols);
            for (std::size_t i = 0; i < cols; ++i) {
              if (p.bps == 8) {
                idx[i] = src[i];
              } else {
                std::memcpy(&idx[i], src + 2 * i, 2);
              }
            }
            double* d = out + (y * w + x0) * out_channels;
            for (std::size_t i = 0; i < cols; ++i) {
              const std::uint16_t k = idx[i];
              if (k >= palette_size) fail(path, "TIFF: palette index beyond the ColorMap");
              d[i * 3 + 0] = red[k] * palette_scale;
              d[i * 3 + 1] = green[k] * palette_scale;
              d[i * 3 + 2] = blue[k] * palette_scale;
            }
          } else if (channel_of != static_cast<std::size_t>(-1)) {
            convert(path, src, cols, 1, p.scalar, out + (y * w + x0) * out_channels + channel_of,
                    out_channels);
          } else if (separate) {
            convert(path, src, cols, 1, p.scalar, out + (y * w + x0) * out_channels + plane,
                    out_channels);
          } else {
            convert(path, src, cols * per_pixel, 1, p.scalar, out + (y * w + x0) * out_channels, 1);
          }
        }
      }
    }
  }
}

// Physical size of one pixel along x or y: (value, in mm?) from X/YResolution.
struct Length {
  double value = 1;
  bool mm = false;
};

Length pixel_size(TIFF* tif, ttag_t tag, std::uint16_t res_unit, double imagej_mm) {
  float res = 0;
  Length l;
  if (TIFFGetField(tif, tag, &res) != 1 || !(res > 0) || !std::isfinite(res)) return l;
  const double v = 1.0 / static_cast<double>(res);
  if (!std::isfinite(v) || !(v > 0)) return l;
  if (res_unit == RESUNIT_INCH) return {v * 25.4, true};
  if (res_unit == RESUNIT_CENTIMETER) return {v * 10, true};
  if (imagej_mm > 0) return {v * imagej_mm, true};
  return {v, false};
}

// The pages, the ImageJ description's reading and the spacing of an open TIFF: everything the
// loader decides before it reads a sample (and the memory-mapped probe needs), with the loader's
// refusals (the limit on values in all only with `value_limit`: the memory-mapped read holds
// none of them). Leaves the first kept page current.
struct Structure {
  std::vector<Page> pages;
  std::size_t channels = 1, depth = 1, ij_channels = 1;
  std::vector<double> spacing;
};

Structure read_structure(const std::string& path, TIFF* tif, std::uint64_t file_size,
                         Messages& msgs, bool value_limit) {
  Structure st;
  std::vector<Page>& pages = st.pages;
  // Every directory: its layout, checked against the first kept one.
  std::string description;
  {
    char* desc = nullptr;
    if (TIFFGetField(tif, TIFFTAG_IMAGEDESCRIPTION, &desc) == 1 && desc) description = desc;
  }
  for (std::size_t index = 0;; ++index) {
    if (index >= kImageMaxSide)
      fail(path, "TIFF has more than " + std::to_string(kImageMaxSide) + " pages");
    const std::uint32_t subfile = get_tag<std::uint32_t>(tif, TIFFTAG_SUBFILETYPE, 0);
    // Reduced-resolution copies (pyramid levels, thumbnails) and transparency masks are skipped.
    if ((subfile & (FILETYPE_REDUCEDIMAGE | FILETYPE_MASK)) == 0) {
      Page p = read_page(path, tif, index, file_size);
      if (!pages.empty() && !same_layout(pages.front(), p))
        fail(path, "TIFF pages differ: page " + std::to_string(p.index) + " is " +
                       describe_page(p) + ", page " + std::to_string(pages.front().index) + " is " +
                       describe_page(pages.front()) +
                       " (only pages of one size and type form a volume)");
      pages.push_back(p);
    }
    msgs.error.clear();
    if (!TIFFReadDirectory(tif)) {
      if (!msgs.error.empty()) fail(path, "corrupt TIFF: " + reason(msgs, ""));
      break;
    }
  }
  if (pages.empty()) fail(path, "TIFF has no full-resolution page");
  const Page& first = pages.front();

  // ImageJ hyperstacks: pages in channel-fastest order (c, z, t).
  const ImageJ ij = parse_imagej(path, description);
  std::size_t channels = first.channels, depth = pages.size(), ij_channels = 1;
  if (ij.present) {
    const std::size_t slices = ij.slices ? ij.slices : 0;
    if (ij.frames > 1)
      fail(path, "ImageJ hyperstack with " + std::to_string(ij.frames) +
                     " frames (time points): only one time point is read and splineview has "
                     "no option to choose a frame; save a single frame (Fiji: Image > "
                     "Duplicate)");
    if (ij.channels > 1) {
      if (ij.channels > kMaxChannels || first.channels != 1)
        fail(path, "ImageJ hyperstack with " + std::to_string(ij.channels) + " channels of " +
                       std::to_string(first.channels) +
                       " samples: at most 4 single-sample channels are read");
      if (pages.size() % ij.channels != 0 || (slices && slices * ij.channels != pages.size()))
        fail(path, "ImageJ description says channels=" + std::to_string(ij.channels) +
                       (slices ? " slices=" + std::to_string(slices) : std::string()) +
                       " but the file has " + std::to_string(pages.size()) + " pages");
      ij_channels = ij.channels;
      channels = ij.channels;
      depth = pages.size() / ij.channels;
    }
    if (ij.images && ij.images != pages.size())
      fail(path, "ImageJ description says images=" + std::to_string(ij.images) +
                     " but the file has " + std::to_string(pages.size()) +
                     " pages (ImageJ's single-directory layout for large stacks is not read)");
  }

  // Limits before any pixel memory: values in all (for the loader, which holds them in
  // memory), and what the stored bytes can decode to.
  std::size_t values = 0;
  if (value_limit &&
      (!io::checked_mul(std::size_t{first.width} * first.height, channels, &values) ||
       !io::checked_mul(values, depth, &values) || values > kImageMaxValues))
    fail(path, "TIFF of " + std::to_string(depth) + " page(s) of " + describe_page(first) +
                   " exceeds the limit of " + std::to_string(kImageMaxValues) + " values");
  for (const Page& p : pages) {
    const double decoded = static_cast<double>(p.width) * p.height * p.spp *
                           static_cast<double>(io::scalar_size(p.scalar));
    if (decoded > static_cast<double>(p.stored_bytes) * max_ratio(p.compression))
      fail(path, "TIFF" + (p.index ? " page " + std::to_string(p.index) : std::string()) +
                     " declares " + std::to_string(static_cast<std::uint64_t>(decoded)) +
                     " bytes of samples but its strips or tiles hold only " +
                     std::to_string(p.stored_bytes) + " bytes (" + compression_name(p.compression) +
                     "; truncated or a decompression bomb)");
  }

  st.channels = channels;
  st.depth = depth;
  st.ij_channels = ij_channels;
  // Spacing: x and y from X/YResolution, z from ImageJ's spacing=; mm where a unit is known.
  const double ij_mm = ij.present ? unit_to_mm(ij.unit) : 0;
  TIFFSetSubDirectory(tif, st.pages.front().offset);
  const std::uint16_t res_unit = [&] {
    std::uint16_t u = RESUNIT_INCH;  // the TIFF default
    TIFFGetFieldDefaulted(tif, TIFFTAG_RESOLUTIONUNIT, &u);
    return u;
  }();
  const Length sx = pixel_size(tif, TIFFTAG_XRESOLUTION, res_unit, ij_mm);
  const Length sy = pixel_size(tif, TIFFTAG_YRESOLUTION, res_unit, ij_mm);
  st.spacing = {sy.value, sx.value};
  if (st.depth > 1) {
    double z = 1;
    if (ij.spacing > 0) z = ij_mm > 0 ? ij.spacing * ij_mm : ij.spacing;
    if (!std::isfinite(z) || !(z > 0)) z = 1;
    st.spacing.insert(st.spacing.begin(), z);
  }
  return st;
}

// The classic and BigTIFF signatures, in either byte order, in the first 8 of `n` bytes.
void check_signature(const std::string& path, const unsigned char* head, std::size_t n) {
  static const unsigned char kSigs[4][4] = {
      {'I', 'I', 42, 0}, {'M', 'M', 0, 42}, {'I', 'I', 43, 0}, {'M', 'M', 0, 43}};
  bool signature = false;
  for (const auto& sig : kSigs) signature = signature || (n >= 8 && !std::memcmp(head, sig, 4));
  if (!signature) fail(path, "not a TIFF file (no II*/MM* signature)");
}

Loaded load_tiff_impl(const std::string& path) {
  std::vector<unsigned char> bytes = io::read_file(path);
  check_signature(path, bytes.data(), bytes.size());

  MemFile file;
  file.rdata = bytes.data();
  file.size = bytes.size();
  Messages msgs;
  msgs.client_name = path;
  ScopedMessages scoped(&msgs);
  Tiff tiff(&file, "r", &msgs);
  TIFF* tif = tiff.get();
  if (!tif) fail(path, "corrupt TIFF: " + reason(msgs, "cannot read the first directory"));

  const Structure st = read_structure(path, tif, bytes.size(), msgs, true);
  const std::vector<Page>& pages = st.pages;
  const Page& first = pages.front();
  const std::size_t channels = st.channels, depth = st.depth, ij_channels = st.ij_channels;

  Loaded l;
  std::vector<std::size_t> dims;
  if (depth > 1) dims.push_back(depth);
  dims.push_back(first.height);
  dims.push_back(first.width);
  l.array = ArrayD(dims, channels);
  l.channel_axis = channels > 1;
  if (first.palette) {
    // 8-bit colormaps are stored as v * 257 (or 0..255); decode_page scales them to uint8.
    l.dtype = DType::U16;
  } else {
    l.dtype = io::dtype_of(first.scalar);
  }
  const std::size_t page_values = std::size_t{first.width} * first.height * channels;
  for (std::size_t i = 0; i < pages.size(); ++i) {
    const Page& p = pages[i];
    msgs.error.clear();
    if (!TIFFSetSubDirectory(tif, p.offset))
      fail(path, "corrupt TIFF: " + reason(msgs, "cannot re-read a directory"));
    if (p.jpeg_rgb) TIFFSetField(tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
    const std::size_t z = i / ij_channels;
    const std::size_t c = ij_channels > 1 ? i % ij_channels : static_cast<std::size_t>(-1);
    decode_page(path, tif, p, msgs, l.array.data() + z * page_values, channels, c);
  }
  if (first.palette) {
    bool u8 = true;
    for (std::size_t i = 0; i < l.array.size() && u8; ++i) u8 = l.array[i] <= 255;
    l.dtype = u8 ? DType::U8 : DType::U16;
  }

  l.spacing = st.spacing;
  return l;
}

// ---- the memory-mapped read's probe ----

io::DataLayout probe_tiff_impl(const std::string& path) {
  unsigned char head[8] = {};
  std::size_t got = 0;
  std::uint64_t file_size = 0;
  {
    io::InputFile in(path);
    file_size = in.size();
    std::vector<unsigned char> prefix;
    while (got < 8) {
      const std::size_t n = in.read_append(prefix, 8 - got);
      if (n == 0) break;
      got += n;
    }
    std::memcpy(head, prefix.data(), got);
  }
  check_signature(path, head, got);
  Messages msgs;
  msgs.client_name = path;
  ScopedMessages scoped(&msgs);
  TiffFile tiff(path, &msgs);
  TIFF* tif = tiff.get();
  if (!tif) fail(path, "corrupt TIFF: " + reason(msgs, "cannot read the first directory"));
  const Structure st = read_structure(path, tif, file_size, msgs, false);
  const Page& first = st.pages.front();
  io::DataLayout L;
  if (st.depth > 1) L.dims.push_back(st.depth);
  L.dims.push_back(first.height);
  L.dims.push_back(first.width);
  L.channels = st.channels;
  L.channel_axis = st.channels > 1;
  L.scalar = first.scalar;
  L.dtype = first.palette ? DType::U16 : io::dtype_of(first.scalar);
  L.big_endian = TIFFIsBigEndian(tif) != 0;
  L.data_path = path;
  L.error_path = path;
  L.spacing = st.spacing;
  io::finish_geometry(path, L.dims.size(), &L.spacing, &L.geometry);
  // Mapped only where the samples lie in the file as a C-order array: uncompressed strips,
  // interleaved samples, one page per slice, each page's strips and the pages one after
  // another (as ImageJ/Fiji and tifffile write uncompressed stacks).
  const std::size_t page_bytes =
      std::size_t{first.width} * first.height * first.spp * io::scalar_size(first.scalar);
  for (const Page& p : st.pages) {
    if (p.compression != COMPRESSION_NONE) {
      L.not_mappable = std::string("its pages are compressed (") + compression_name(p.compression) +
                       "); they are decoded into memory";
      break;
    }
    if (p.palette) {
      L.not_mappable = "it is a palette image (its indices become colours in memory)";
      break;
    }
    if (p.tiled) {
      L.not_mappable = "its pages are stored in tiles";
      break;
    }
    if (p.planar == PLANARCONFIG_SEPARATE && p.spp > 1) {
      L.not_mappable = "its samples are stored in separate planes";
      break;
    }
    if (p.fill_order != FILLORDER_MSB2LSB) {
      L.not_mappable = "its bytes are stored with the bit order reversed (FillOrder 2)";
      break;
    }
  }
  if (L.not_mappable.empty() && st.ij_channels > 1)
    L.not_mappable = "its channels are stored as separate pages (an ImageJ hyperstack)";
  if (L.not_mappable.empty()) {
    bool packed = true;
    for (std::size_t i = 0; i < st.pages.size() && packed; ++i) {
      const Page& p = st.pages[i];
      packed = p.contiguous && p.data_end - p.data_begin == page_bytes &&
               (i == 0 || p.data_begin == st.pages[i - 1].data_end);
    }
    if (!packed) L.not_mappable = "its strips are not stored one after another in page order";
  }
  if (L.not_mappable.empty()) {
    L.data_offset = static_cast<std::size_t>(first.data_begin);
    L.data_bytes = page_bytes * st.pages.size();
  }
  return L;
}

// ---- writing ----

void save_tiff_impl(const std::string& path, const ArrayD& a, DType dtype,
                    const std::vector<double>& spacing) {
  if (a.empty()) fail(path, "cannot save an empty array as TIFF");
  const std::size_t rank = a.rank(), channels = a.channels();
  if (!spacing.empty()) {
    if (spacing.size() != rank)
      fail(path, "spacing has " + std::to_string(spacing.size()) + " values for a rank-" +
                     std::to_string(rank) + " array");
    for (double s : spacing)
      if (!std::isfinite(s) || !(s > 0)) fail(path, "spacing values must be finite and positive");
  }
  const std::size_t depth = rank == 3 ? a.dim(0) : 1;
  const std::size_t height = rank == 1 ? 1 : a.dim(rank - 2);
  const std::size_t width = a.dim(rank - 1);
  if (width > 0xffffffffu || height > 0xffffffffu || depth > 0xffffffffu)
    fail(path, "array too large for TIFF");
  // TIFF has no bool: bool is written as uint8 0/1.
  const io::Scalar scalar = io::scalar_of(dtype == DType::Bool ? DType::U8 : dtype);
  const std::size_t size = io::scalar_size(scalar);
  std::uint16_t format = SAMPLEFORMAT_UINT;
  if (scalar == io::Scalar::I8 || scalar == io::Scalar::I16 || scalar == io::Scalar::I32 ||
      scalar == io::Scalar::I64)
    format = SAMPLEFORMAT_INT;
  if (scalar == io::Scalar::F16 || scalar == io::Scalar::F32 || scalar == io::Scalar::F64)
    format = SAMPLEFORMAT_IEEEFP;
  // Predictor 2 for integers; none for floats: predictor 3 is not decoded everywhere (tifffile
  // without the imagecodecs package, as in Debian 12, refuses it).
  const std::uint16_t predictor =
      format != SAMPLEFORMAT_IEEEFP && size <= 4 ? PREDICTOR_HORIZONTAL : PREDICTOR_NONE;

  const std::size_t row_values = width * channels;
  const std::size_t row_bytes = row_values * size;
  const std::size_t page_bytes = row_bytes * height;
  // BigTIFF when the samples alone come near classic TIFF's 4 GiB offsets.
  const double total = static_cast<double>(page_bytes) * static_cast<double>(depth);
  const bool big = total > 4294967296.0 - 268435456.0;
  const std::size_t rows_per_strip =
      std::max<std::size_t>(1, std::min<std::size_t>(height, (std::size_t{256} << 10) / row_bytes));

  std::string description = "ImageJ=1.11a\n";
  if (depth > 1) {
    description += "images=" + std::to_string(depth) + "\nslices=" + std::to_string(depth) + "\n";
  }
  if (!spacing.empty()) {
    description += "unit=mm\n";
    if (depth > 1) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g", spacing[0]);
      description += std::string("spacing=") + buf + "\n";
    }
  }
  if (depth > 1) description += "loop=false\n";

  std::vector<unsigned char> out;
  MemFile file;
  file.wdata = &out;
  Messages msgs;
  msgs.client_name = path;
  ScopedMessages scoped(&msgs);
  Tiff tiff(&file, big ? "w8" : "w", &msgs);
  TIFF* tif = tiff.get();
  if (!tif) fail(path, "cannot write TIFF: " + reason(msgs, "libtiff could not start"));
  std::vector<unsigned char> strip(rows_per_strip * row_bytes);
  for (std::size_t z = 0; z < depth; ++z) {
    bool ok = TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, static_cast<std::uint32_t>(width)) &&
              TIFFSetField(tif, TIFFTAG_IMAGELENGTH, static_cast<std::uint32_t>(height)) &&
              TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, static_cast<std::uint16_t>(size * 8)) &&
              TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT, format) &&
              TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, static_cast<std::uint16_t>(channels)) &&
              TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG) &&
              TIFFSetField(tif, TIFFTAG_PHOTOMETRIC,
                           channels >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK) &&
              TIFFSetField(tif, TIFFTAG_COMPRESSION, COMPRESSION_ADOBE_DEFLATE) &&
              TIFFSetField(tif, TIFFTAG_PREDICTOR, predictor) &&
              TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, static_cast<std::uint32_t>(rows_per_strip));
    if (ok && (channels == 2 || channels == 4)) {
      const std::uint16_t extra[1] = {EXTRASAMPLE_UNASSALPHA};
      ok = TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, 1, extra);
    }
    if (ok && !spacing.empty()) {
      ok = TIFFSetField(tif, TIFFTAG_XRESOLUTION, 1.0 / spacing[rank - 1]) &&
           TIFFSetField(tif, TIFFTAG_YRESOLUTION, 1.0 / (rank >= 2 ? spacing[rank - 2] : 1.0)) &&
           TIFFSetField(tif, TIFFTAG_RESOLUTIONUNIT, RESUNIT_NONE);
    }
    if (ok && z == 0) ok = TIFFSetField(tif, TIFFTAG_IMAGEDESCRIPTION, description.c_str());
    if (ok) ok = TIFFSetField(tif, TIFFTAG_SOFTWARE, "splineview");
    if (!ok) fail(path, "cannot write TIFF: " + reason(msgs, "a tag was refused"));
    const double* src = a.data() + z * height * row_values;
    for (std::size_t y0 = 0, s = 0; y0 < height; y0 += rows_per_strip, ++s) {
      const std::size_t rows = std::min(rows_per_strip, height - y0);
      io::encode_values(src + y0 * row_values, rows * row_values, scalar, strip.data());
      if (TIFFWriteEncodedStrip(tif, static_cast<std::uint32_t>(s), strip.data(),
                                static_cast<tmsize_t>(rows * row_bytes)) < 0)
        fail(path, "cannot write TIFF: " + reason(msgs, "a strip could not be written"));
    }
    if (!TIFFWriteDirectory(tif))
      fail(path, "cannot write TIFF: " + reason(msgs, "a directory could not be written"));
  }
  if (!tiff.close()) fail(path, "cannot write TIFF: " + reason(msgs, "flush failed"));
  io::write_file_atomic(path, out);
}

}  // namespace

namespace io {
DataLayout probe_tiff(const std::string& path) {
  return guard_memory(path, [&] { return probe_tiff_impl(path); });
}
}  // namespace io

Loaded load_tiff(const std::string& path) {
  return io::guard_memory(path, [&] { return io::finish_loaded(path, load_tiff_impl(path)); });
}

void save_tiff(const std::string& path, const ArrayD& a, DType dtype, bool /*channel_axis*/,
               const std::vector<double>& spacing) {
  io::guard_memory(path, [&] { save_tiff_impl(path, a, dtype, spacing); });
}

void save_tiff(const std::string& path, const ArrayD& a, DType dtype, bool channel_axis,
               const Geometry& geometry) {
  save_tiff(path, a, dtype, channel_axis, geometry_spacing(geometry, a.rank()));
}

}  // namespace sv
