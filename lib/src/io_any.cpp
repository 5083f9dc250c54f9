// load_any / save_any: choose the file format from the (case-insensitive) extension.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

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
      ".nii, .nii.gz, .tif, .tiff or .dcm; or a folder or glob pattern of slices)";
  if (ext.empty()) io::fail(path, "no file extension" + expected);
  io::fail(path, "unsupported file extension '" + ext + "'" + expected);
}

// A folder holds DICOM when one of its (non-hidden) files has a .dcm extension or the Part 10
// "DICM" marker; otherwise it is read as a stack of 2-D slices.
bool folder_holds_dicom(const std::string& dir) {
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.' || !it->is_regular_file(ec)) continue;
    if (io::lower_extension(name) == ".dcm") return true;
    if (known_format(name) == Format::kUnknown && looks_like_dicom(it->path().string()))
      return true;
  }
  return false;
}

// DICOM comes by a .dcm extension, a folder (one series), or the Part 10 "DICM" marker of a
// file whose extension names no other format (DICOM files often have none).
bool is_dicom_path(const std::string& path) {
  if (io::lower_extension(path) == ".dcm") return true;
  return known_format(path) == Format::kUnknown && looks_like_dicom(path);
}

// A folder (DICOM series or slice stack) or a glob pattern of slices, into *out; false when
// `path` is an ordinary file path.
bool load_many(const std::string& path, Loaded* out) {
  std::error_code ec;
  // A folder named like a file ("x.nii") is a mistake to report, not a stack to read.
  if (known_format(path) == Format::kUnknown && std::filesystem::is_directory(path, ec)) {
    *out = folder_holds_dicom(path) ? load_dicom(path) : load_slices(path, slice_files(path));
    return true;
  }
  if (is_slice_pattern(path) && !std::filesystem::exists(path, ec)) {
    *out = load_slices(path, slice_files(path));
    return true;
  }
  return false;
}

}  // namespace

Loaded load_any(const std::string& path, bool channel_axis) {
  Loaded many;
  if (load_many(path, &many)) return many;
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
  if (std::filesystem::is_directory(path, ec) || io::lower_extension(path) == ".dcm" ||
      (is_slice_pattern(path) && !std::filesystem::exists(path, ec)))
    return load_any(path, channel_axis);
  if (known_format(path) == Format::kUnknown) return load_raw(path, raw, channel_axis);
  return load_any(path, channel_axis);
}

void save_any(const std::string& path, const ArrayD& a, DType dtype, bool channel_axis) {
  save_any(path, a, dtype, channel_axis, geometry_from_spacing(std::vector<double>(a.rank(), 1.0)));
}

void save_any(const std::string& path, const ArrayD& a, DType dtype, bool channel_axis,
              const Geometry& geometry) {
  switch (format_of(path)) {
    case Format::kImage:
      save_image(path, a, dtype == DType::U16 ? 16 : 8);
      return;
    case Format::kNpy:
      save_npy(path, a, dtype, channel_axis);
      return;
    case Format::kNrrd:
      save_nrrd(path, a, dtype, channel_axis, geometry);
      return;
    case Format::kNifti:
      save_nifti(path, a, dtype, geometry);
      return;
    case Format::kTiff:
      save_tiff(path, a, dtype, channel_axis, geometry);
      return;
    case Format::kUnknown:
      break;
  }
}

// --- standard input and output (splinetool's "-") ------------------------------------------

Loaded load_npy_stdin(bool channel_axis) {
  static const char* const kStdin = "/dev/stdin";
  static const std::string kPrefix = std::string(kStdin) + ": ";
  if (::isatty(0))
    throw Error("standard input: is a terminal; pipe or redirect a .npy into it (a < in.npy)");
  InputOptions o = input_options();
  o.allow_special = true;  // a pipe: read only as far as its header claims
  const ScopedInputOptions scoped(o);
  try {
    return load_npy(kStdin, channel_axis);
  } catch (const Error& e) {
    const std::string m = e.what();
    if (m.compare(0, kPrefix.size(), kPrefix) == 0)
      throw Error("standard input: " + m.substr(kPrefix.size()));
    throw;
  }
}

void scale_to_unit(Loaded& l) {
  if (!dtype_is_integer(l.dtype)) return;
  const double full = dtype_full_scale(l.dtype);
  for (double& v : l.array.vec()) v /= full;
}

namespace io {
bool known_extension(const std::string& path) {
  return known_format(path) != Format::kUnknown;
}
}  // namespace io

}  // namespace sv
