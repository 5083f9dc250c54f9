// Loading, upload and prefiltering of the viewer's image (see image_document.h).
#include "image_document.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <system_error>

#include "elapsed.h"
#include "method_pass.h"
#include "splineview/error.h"
#include "splineview/gl/cuda_interop.h"
#include "splineview/io.h"
#include "splineview/prefilter.h"
#include "splineview/sampler.h"
#include "splineview/synthetic.h"
#include "splineview/text.h"

#ifndef SPLINEVIEW_ASSET_DIR
#define SPLINEVIEW_ASSET_DIR "assets"
#endif

namespace sv::viewer {
namespace {

constexpr const char* kDefaultImage = "coffee.png";

const char* channel_name(std::size_t channels) {
  switch (channels) {
    case 1:
      return "grey";
    case 2:
      return "grey + alpha";
    case 3:
      return "RGB";
    default:
      return "RGBA";
  }
}

// The coefficient texture: R32F for grey, RGBA32F otherwise (the interop writes those two),
// swizzled like gl::upload_image's textures so the shaders always read RGBA. The interop fills
// the colour channels it is not given with 0 and alpha with 1, so grey + alpha lands in (r, g).
gl::Texture coefficient_texture(const ArrayF& samples) {
  const std::size_t channels = samples.channels();
  gl::Texture t =
      gl::Texture::create_2d(channels == 1 ? GL_R32F : GL_RGBA32F, static_cast<int>(samples.dim(1)),
                             static_cast<int>(samples.dim(0)));
  t.set_filter(GL_LINEAR, GL_LINEAR);
  t.set_wrap(GL_MIRRORED_REPEAT);
  switch (channels) {
    case 1:
      t.set_swizzle(GL_RED, GL_RED, GL_RED, GL_ONE);
      break;
    case 2:
      t.set_swizzle(GL_RED, GL_RED, GL_RED, GL_GREEN);
      break;
    case 3:
      t.set_swizzle(GL_RED, GL_GREEN, GL_BLUE, GL_ONE);
      break;
    default:
      t.set_swizzle(GL_RED, GL_GREEN, GL_BLUE, GL_ALPHA);
      break;
  }
  return t;
}

}  // namespace

ArrayF read_back(const gl::Texture& texture, const std::vector<std::size_t>& dims,
                 std::size_t channels) {
  const std::size_t stored = texture.internal_format() == GL_R32F ? 1 : 4;
  std::vector<float> texels(dims[0] * dims[1] * stored);
  GLint alignment = 0, row_length = 0;
  glGetIntegerv(GL_PACK_ALIGNMENT, &alignment);
  glGetIntegerv(GL_PACK_ROW_LENGTH, &row_length);
  glPixelStorei(GL_PACK_ALIGNMENT, 4);
  glPixelStorei(GL_PACK_ROW_LENGTH, 0);
  glGetTextureImage(texture.id(), 0, stored == 1 ? GL_RED : GL_RGBA, GL_FLOAT,
                    static_cast<GLsizei>(texels.size() * sizeof(float)), texels.data());
  glPixelStorei(GL_PACK_ALIGNMENT, alignment);
  glPixelStorei(GL_PACK_ROW_LENGTH, row_length);
  gl::check_error("reading back the coefficient texture", __FILE__, __LINE__);
  ArrayF out(dims, channels);
  for (std::size_t i = 0; i < dims[0] * dims[1]; ++i)
    for (std::size_t c = 0; c < channels; ++c) out.vec()[i * channels + c] = texels[i * stored + c];
  return out;
}

namespace {

std::optional<std::array<double, 2>> type_range(DType t) {
  if (!dtype_is_integer(t)) return std::nullopt;
  const double full = dtype_full_scale(t);
  switch (t) {
    case DType::I8:
    case DType::I16:
    case DType::I32:
    case DType::I64:
      return std::array<double, 2>{-full - 1.0, full};
    default:
      return std::array<double, 2>{0.0, full};
  }
}

}  // namespace

DisplayRange unit_display_range(const ArrayD& values) {
  DisplayRange r;
  const std::vector<double>& v = values.vec();
  if (!v.empty()) {
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    r.data_min = *lo;
    r.data_max = *hi;
  }
  return r;
}

DisplayRange to_display_range(Loaded& loaded) {
  DisplayRange r = unit_display_range(loaded.array);
  r.type_range = type_range(loaded.dtype);
  // 8-bit data (photographs) by its full scale; floating data already in [0, 1] as it is.
  if (loaded.dtype == DType::U8 || loaded.dtype == DType::Bool) {
    r.scale = {0.0, dtype_full_scale(loaded.dtype)};
    scale_to_unit(loaded);
    return r;
  }
  std::vector<double>& v = loaded.array.vec();
  if (!dtype_is_integer(loaded.dtype) &&
      std::all_of(v.begin(), v.end(), [](double x) { return x >= 0 && x <= 1; }))
    return r;
  // Everything else through a window from the 0.1st to the 99.9th percentile (as medical and
  // microscopy viewers start): the mapping is affine, so it commutes with the interpolation and
  // is exactly a window applied after it; values beyond the window show clamped.
  std::vector<double> sorted(v);
  const std::size_t n = sorted.size();
  const std::size_t i_lo = n / 1000, i_hi = n - 1 - n / 1000;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(i_lo),
                   sorted.end());
  double lo = sorted[i_lo];
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(i_hi),
                   sorted.end());
  double hi = sorted[i_hi];
  if (!(hi > lo)) {  // nearly constant: the full range
    lo = r.data_min;
    hi = r.data_max;
  }
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) {
    // Constant: shown mid grey, v = raw - lo + 0.5 (so raw = (lo - 0.5) + 1 * v).
    r.scale = {std::isfinite(lo) ? lo - 0.5 : 0.0, 1.0};
    for (double& x : v) x = 0.5;
    r.note = "constant " + format_number(lo) + ", shown grey";
    return r;
  }
  r.scale = {lo, hi - lo};
  for (double& x : v) x = (x - lo) / (hi - lo);
  r.note =
      "window " + format_number(lo) + " to " + format_number(hi) + " (0.1st to 99.9th percentile)";
  return r;
}

std::vector<double> raw_value_at(const ImageDocument& doc, gl::Fetch method,
                                 const glm::dvec2& position) {
  const ArrayF& data = gl::fetch_prefiltered(method) ? doc.coefficients : doc.samples;
  std::vector<double> values(data.channels());
  SamplerOptions opt;
  opt.degree = method_degree(method);
  opt.threads = 1;
  const double p[2] = {position.y, position.x};
  sample(data, p, 1, values.data(), opt);
  for (double& v : values) v = doc.range.scale.raw(v);
  return values;
}

std::vector<double> raw_pixel(const ImageDocument& doc, int x, int y) {
  const std::size_t channels = doc.exact->channels();
  const std::size_t at = (static_cast<std::size_t>(y) * static_cast<std::size_t>(doc.width()) +
                          static_cast<std::size_t>(x)) *
                         channels;
  std::vector<double> values(channels);
  for (std::size_t c = 0; c < channels; ++c)
    values[c] = doc.range.scale.raw(doc.exact->vec()[at + c]);
  return values;
}

DecodedImage decode_image(const std::string& path) {
  DecodedImage d;
  d.path = path;
  d.label = std::filesystem::path(path).filename().string();
  const auto start = std::chrono::steady_clock::now();
  // Any 2-D file the loaders read: images, .npy, TIFF, a 2-D NIfTI/NRRD, a DICOM slice.
  Loaded loaded = load_any(path, false);
  if (loaded.array.rank() != 2) {
    throw Error(path + ": the zoom and rotate modes show 2-D images, this one has shape " +
                describe_shape(loaded.array.dims(), loaded.array.channels()) +
                (loaded.array.rank() == 3 ? " (open it in the volume mode)" : ""));
  }
  d.range = to_display_range(loaded);  // the shaders and overlays work on normalised values
  d.type =
      std::string(dtype_name(loaded.dtype)) + (d.range.note.empty() ? "" : ", " + d.range.note);
  d.exact = std::make_shared<const ArrayD>(std::move(loaded.array));
  d.decode_ms = ms_since(start);
  return d;
}

DecodedImage synthetic_image(const std::string& label, const ArrayF& values, AnalyticTruth truth) {
  DecodedImage d;
  d.label = label;
  d.type = "float, synthetic";
  d.exact = std::make_shared<const ArrayD>(ArrayD::from(values));
  d.range = unit_display_range(*d.exact);
  d.truth = std::move(truth);
  return d;
}

DecodedImage zone_plate_image() {
  constexpr std::size_t kSize = 512;
  constexpr double kEdgeFrequency = 0.5;
  AnalyticTruth truth;
  truth.label = "the zone plate function";
  truth.value = [](const double* p, std::size_t) {
    return zone_plate_at(p[0], p[1], kSize, kSize, kEdgeFrequency);
  };
  return synthetic_image("zone plate 512 x 512", zone_plate(kSize, kSize, kEdgeFrequency),
                         std::move(truth));
}

ImageDocument make_document(DecodedImage decoded) {
  ImageDocument doc;
  doc.path = decoded.path;
  doc.label = decoded.label;
  doc.exact = decoded.exact;
  doc.truth = std::move(decoded.truth);
  doc.range = decoded.range;
  doc.samples = ArrayF::from(*decoded.exact);
  doc.load_ms = decoded.decode_ms;

  auto start = std::chrono::steady_clock::now();
  doc.textures.samples = gl::upload_image(doc.samples);
  doc.upload_ms = ms_since(start);

  start = std::chrono::steady_clock::now();
  doc.textures.coefficients = coefficient_texture(doc.samples);
  {
    gl::InteropOptions interop_options;
    interop_options.on_fallback = [&doc](const std::string& notice) {
      doc.prefilter_notice = notice;
    };
    gl::TextureInterop interop(doc.textures.coefficients, interop_options);
    interop.prefilter_into(doc.samples, {3, Boundary::Reflect, 0});
    doc.prefilter_on_gpu = interop.uses_cuda();
    doc.prefilter_kernel_ms = interop.last_kernel_ms();
  }
  doc.prefilter_ms = ms_since(start);

  start = std::chrono::steady_clock::now();
  doc.coefficients =
      read_back(doc.textures.coefficients, doc.samples.dims(), doc.samples.channels());
  doc.readback_ms = ms_since(start);

  doc.description = std::to_string(doc.width()) + " x " + std::to_string(doc.height()) + ", " +
                    channel_name(doc.samples.channels()) + ", " + decoded.type;
  return doc;
}

ImageDocument load_document(const std::string& path) {
  return make_document(decode_image(path));
}

std::string asset_path(const std::string& name) {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(exe.parent_path() / ".." / "share" / "splineview" / "assets");
  candidates.emplace_back(SPLINEVIEW_ASSET_DIR);
  for (const fs::path& dir : candidates) {
    const fs::path p = dir / name;
    if (fs::exists(p, ec)) return p.lexically_normal().string();
  }
  return (fs::path(SPLINEVIEW_ASSET_DIR) / name).string();
}

std::string default_image_path() {
  return asset_path(kDefaultImage);
}

}  // namespace sv::viewer
