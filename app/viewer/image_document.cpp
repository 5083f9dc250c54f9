// Loading, CPU prefiltering and upload of the viewer's image (see image_document.h).
#include "image_document.h"

#include <chrono>
#include <filesystem>
#include <system_error>

#include "splineview/error.h"
#include "splineview/io.h"
#include "splineview/prefilter.h"

#ifndef SPLINEVIEW_ASSET_DIR
#define SPLINEVIEW_ASSET_DIR "assets"
#endif

namespace sv::viewer {
namespace {

constexpr const char* kDefaultImage = "coffee.png";

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

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

}  // namespace

std::vector<float> ImageDocument::value_at(int x, int y) const {
  std::vector<float> v;
  if (x < 0 || y < 0 || x >= width() || y >= height()) return v;
  for (std::size_t c = 0; c < samples.channels(); ++c)
    v.push_back(samples.at2(static_cast<std::size_t>(y), static_cast<std::size_t>(x), c));
  return v;
}

ImageDocument load_document(const std::string& path) {
  ImageDocument doc;
  doc.path = path;
  auto start = std::chrono::steady_clock::now();
  Loaded loaded = load_image(path);
  if (loaded.array.rank() != 2) {
    throw Error(path + ": the viewer shows 2-D images, this one has shape " +
                describe_shape(loaded.array.dims(), loaded.array.channels()));
  }
  doc.samples = ArrayF::from(loaded.array);
  doc.load_ms = ms_since(start);

  start = std::chrono::steady_clock::now();
  ArrayF coefficients = doc.samples;
  prefilter<float>(coefficients, {3, Boundary::Reflect, 0});
  doc.prefilter_ms = ms_since(start);

  start = std::chrono::steady_clock::now();
  doc.textures.samples = gl::upload_image(doc.samples);
  doc.textures.coefficients = gl::upload_image(coefficients);
  doc.upload_ms = ms_since(start);

  doc.description = std::to_string(doc.width()) + " x " + std::to_string(doc.height()) + ", " +
                    channel_name(doc.samples.channels()) + ", " + dtype_name(loaded.dtype);
  return doc;
}

std::string default_image_path() {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(exe.parent_path() / ".." / "share" / "splineview" / "assets");
  candidates.emplace_back(SPLINEVIEW_ASSET_DIR);
  for (const fs::path& dir : candidates) {
    const fs::path p = dir / kDefaultImage;
    if (fs::exists(p, ec)) return p.lexically_normal().string();
  }
  return (fs::path(SPLINEVIEW_ASSET_DIR) / kDefaultImage).string();
}

}  // namespace sv::viewer
