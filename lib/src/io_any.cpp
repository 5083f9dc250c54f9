// load_any / save_any: choose the file format from the (case-insensitive) extension.
#include <filesystem>
#include <string>

#include "io_common.h"
#include "splineview/io.h"

namespace sv {

namespace {

enum class Format { kImage, kNpy, kNrrd, kNifti, kTiff, kUnknown };

// Format::kUnknown when the extension names none of the formats.
Format known_format(const std::string& path) {
  const std::string ext = io::lower_extension(path);
  if (ext == ".png" || ext == ".jpg" || ext == ".jpeg" || ext == ".bmp" || ext == ".gif" ||
      ext == ".hdr" || ext == ".pgm" || ext == ".ppm" || ext == ".pnm" || ext == ".tga")
    return Format::kImage;
  if (ext == ".npy") return Format::kNpy;
  if (ext == ".nrrd" || ext == ".nhdr") return Format::kNrrd;
  if (ext == ".nii") return Format::kNifti;
  if (ext == ".tif" || ext == ".tiff") return Format::kTiff;
  const std::string lower = io::to_lower(path);
  const std::string nii_gz = ".nii.gz";
  if (ext == ".gz" && lower.size() > nii_gz.size() &&
      lower.compare(lower.size() - nii_gz.size(), nii_gz.size(), nii_gz) == 0)
    return Format::kNifti;
  return Format::kUnknown;
}

Format format_of(const std::string& path) {
  const Format f = known_format(path);
  if (f != Format::kUnknown) return f;
  const std::string ext = io::lower_extension(path);
  const std::string expected =
      " (expected .png, .jpg, .jpeg, .bmp, .gif, .hdr, .pgm, .ppm, .pnm, .tga, .npy, .nrrd, .nhdr, "
      ".nii, .nii.gz, .tif or .tiff)";
  if (ext.empty()) io::fail(path, "no file extension" + expected);
  io::fail(path, "unsupported file extension '" + ext + "'" + expected);
}

// DICOM comes by a .dcm extension, a folder (one series), or the Part 10 "DICM" marker of a
// file whose extension names no other format (DICOM files often have none).
bool is_dicom_path(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return true;
  if (io::lower_extension(path) == ".dcm") return true;
  return known_format(path) == Format::kUnknown && looks_like_dicom(path);
}

}  // namespace

Loaded load_any(const std::string& path, bool channel_axis) {
  if (is_dicom_path(path)) return load_dicom(path);
  switch (format_of(path)) {
    case Format::kImage:
      return load_image(path);
    case Format::kNpy:
      return load_npy(path, channel_axis);
    case Format::kNrrd:
      return load_nrrd(path);
    case Format::kNifti:
      return load_nifti(path);
    case Format::kTiff:
      return load_tiff(path);
    case Format::kUnknown:
      break;
  }
  io::fail(path, "internal error: unknown format");
}

Loaded load_any(const std::string& path, bool channel_axis, const RawSpec& raw) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec) || io::lower_extension(path) == ".dcm")
    return load_dicom(path);
  if (known_format(path) == Format::kUnknown) return load_raw(path, raw, channel_axis);
  return load_any(path, channel_axis);
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
    case Format::kNifti:
      save_nifti(path, a, dtype);
      return;
    case Format::kTiff:
      save_tiff(path, a, dtype, channel_axis);
      return;
    case Format::kUnknown:
      break;
  }
}

}  // namespace sv
