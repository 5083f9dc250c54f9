// load_any / save_any: choose the file format from the (case-insensitive) extension.
#include <string>

#include "io_common.h"
#include "splineview/io.h"

namespace sv {

namespace {

enum class Format { kImage, kNpy, kNrrd };

Format format_of(const std::string& path) {
  const std::string ext = io::lower_extension(path);
  if (ext == ".png" || ext == ".jpg" || ext == ".jpeg") return Format::kImage;
  if (ext == ".npy") return Format::kNpy;
  if (ext == ".nrrd" || ext == ".nhdr") return Format::kNrrd;
  const std::string expected = " (expected .png, .jpg, .jpeg, .npy, .nrrd or .nhdr)";
  if (ext.empty()) io::fail(path, "no file extension" + expected);
  io::fail(path, "unsupported file extension '" + ext + "'" + expected);
}

}  // namespace

Loaded load_any(const std::string& path, bool channel_axis) {
  switch (format_of(path)) {
    case Format::kImage:
      return load_image(path);
    case Format::kNpy:
      return load_npy(path, channel_axis);
    case Format::kNrrd:
      return load_nrrd(path);
  }
  io::fail(path, "internal error: unknown format");
}

void save_any(const std::string& path, const ArrayD& a, DType dtype, bool channel_axis) {
  switch (format_of(path)) {
    case Format::kImage:
      save_image(path, a, dtype == DType::U16 ? 16 : 8);
      return;
    case Format::kNpy:
      save_npy(path, a, dtype, channel_axis);
      return;
    case Format::kNrrd:
      save_nrrd(path, a, dtype, channel_axis);
      return;
  }
}

}  // namespace sv
