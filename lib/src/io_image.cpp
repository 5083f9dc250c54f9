// PNG and JPEG images. Decoding goes through stb_image (8- and 16-bit PNG, baseline and
// progressive JPEG); 8-bit PNG and JPEG encoding through stb_image_write; 16-bit PNG encoding
// through libpng, which stb cannot do. Files are decoded from and encoded into memory so that
// reading reports errors uniformly and writing can be atomic (see io_common.h).
#include <png.h>
#include <stb_image.h>
#include <stb_image_write.h>

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

enum class ImageKind { kPng, kJpeg };

bool has_png_magic(const std::vector<unsigned char>& b) {
  static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a};
  return b.size() >= 8 && std::memcmp(b.data(), sig, 8) == 0;
}

bool has_jpeg_magic(const std::vector<unsigned char>& b) {
  return b.size() >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff;
}

std::string stb_reason() {
  const char* r = stbi_failure_reason();
  return r ? r : "unknown error";
}

struct StbFree {
  void operator()(void* p) const { stbi_image_free(p); }
};

Loaded load_image_impl(const std::string& path) {
  const std::vector<unsigned char> bytes = io::read_file(path);
  ImageKind kind;
  if (has_png_magic(bytes)) {
    kind = ImageKind::kPng;
  } else if (has_jpeg_magic(bytes)) {
    kind = ImageKind::kJpeg;
  } else {
    fail(path, "not a PNG or JPEG image (unrecognised signature)");
  }
  const char* kind_name = kind == ImageKind::kPng ? "PNG" : "JPEG";
  if (bytes.size() > static_cast<std::size_t>(INT_MAX))
    fail(path, std::string(kind_name) + " file too large for the decoder (over 2 GiB)");
  const int len = static_cast<int>(bytes.size());

  int w = 0, h = 0, comp = 0;
  if (!stbi_info_from_memory(bytes.data(), len, &w, &h, &comp))
    fail(path,
         std::string("corrupt or unsupported ") + kind_name + " image (stb: " + stb_reason() + ")");
  const bool sixteen = stbi_is_16_bit_from_memory(bytes.data(), len) != 0;

  void* pixels = nullptr;
  if (sixteen) {
    pixels = stbi_load_16_from_memory(bytes.data(), len, &w, &h, &comp, 0);
  } else {
    pixels = stbi_load_from_memory(bytes.data(), len, &w, &h, &comp, 0);
  }
  if (!pixels)
    fail(path,
         std::string("corrupt or unsupported ") + kind_name + " image (stb: " + stb_reason() + ")");
  std::unique_ptr<void, StbFree> hold(pixels);
  if (w <= 0 || h <= 0 || comp < 1 || comp > 4)
    fail(path, std::string("unexpected ") + kind_name + " layout from the decoder");

  Loaded out;
  out.array = ArrayD({static_cast<std::size_t>(h), static_cast<std::size_t>(w)},
                     static_cast<std::size_t>(comp));
  out.dtype = sixteen ? DType::U16 : DType::U8;
  out.channel_axis = comp > 1;
  out.spacing = {1.0, 1.0};
  double* dst = out.array.data();
  const std::size_t n = out.array.size();
  if (sixteen) {
    const auto* src = static_cast<const std::uint16_t*>(pixels);
    for (std::size_t i = 0; i < n; ++i) dst[i] = src[i] / 65535.0;
  } else {
    const auto* src = static_cast<const unsigned char*>(pixels);
    for (std::size_t i = 0; i < n; ++i) dst[i] = src[i] / 255.0;
  }
  return out;
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
      px[i] = static_cast<unsigned char>(io::quantize(a[i] * 255.0, 255.0));
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
      auto v = static_cast<unsigned>(io::quantize(a[i] * 65535.0, 65535.0));
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
  return io::guard_memory(path, [&] { return load_image_impl(path); });
}

void save_image(const std::string& path, const ArrayD& a, int bits) {
  io::guard_memory(path, [&] { save_image_impl(path, a, bits); });
}

}  // namespace sv
