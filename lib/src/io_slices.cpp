// A stack of 2-D slice files read as one volume: a folder of images, or a glob pattern, in
// natural sort order (slice2 before slice10), as Fiji's "Image Sequence" and napari do.
#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "io_common.h"
#include "splineview/io.h"
#include "splineview/text.h"

namespace sv {

namespace {

// Natural order: runs of digits compare by value (leading zeros ignored, then by length of the
// run so that "01" and "1" stay distinct and ordered), everything else byte by byte.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i])) != 0;
    const bool db = std::isdigit(static_cast<unsigned char>(b[j])) != 0;
    if (da && db) {
      std::size_t i2 = i, j2 = j;
      while (i2 < a.size() && std::isdigit(static_cast<unsigned char>(a[i2]))) ++i2;
      while (j2 < b.size() && std::isdigit(static_cast<unsigned char>(b[j2]))) ++j2;
      std::size_t zi = i, zj = j;  // skip leading zeros
      while (zi + 1 < i2 && a[zi] == '0') ++zi;
      while (zj + 1 < j2 && b[zj] == '0') ++zj;
      const std::size_t li = i2 - zi, lj = j2 - zj;
      if (li != lj) return li < lj;
      const int c = a.compare(zi, li, b, zj, lj);
      if (c != 0) return c < 0;
      if (i2 - i != j2 - j) return i2 - i < j2 - j;
      i = i2, j = j2;
    } else {
      if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
      ++i, ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

}  // namespace

bool natural_order_less(const std::string& a, const std::string& b) {
  return natural_less(a, b);
}

bool is_slice_pattern(const std::string& path) {
  return path.find_first_of("*?[") != std::string::npos;
}

std::vector<std::string> slice_files(const std::string& folder_or_pattern) {
  std::vector<std::string> files;
  if (is_slice_pattern(folder_or_pattern)) {
    glob_t g{};
    const int rc = ::glob(folder_or_pattern.c_str(), GLOB_ERR | GLOB_NOSORT, nullptr, &g);
    if (rc == GLOB_NOMATCH) {
      globfree(&g);
      io::fail(folder_or_pattern, "no file matches the pattern");
    }
    if (rc != 0) {
      globfree(&g);
      io::fail(folder_or_pattern, "cannot expand the pattern (a folder could not be read)");
    }
    for (std::size_t i = 0; i < g.gl_pathc; ++i) {
      struct stat st {};
      if (::stat(g.gl_pathv[i], &st) == 0 && S_ISDIR(st.st_mode)) continue;
      files.emplace_back(g.gl_pathv[i]);
    }
    globfree(&g);
  } else {
    std::error_code ec;
    std::filesystem::directory_iterator it(folder_or_pattern, ec), end;
    if (ec) io::fail(folder_or_pattern, "cannot read the folder: " + ec.message());
    for (; it != end; it.increment(ec)) {
      if (ec) io::fail(folder_or_pattern, "cannot read the folder: " + ec.message());
      const std::string name = it->path().filename().string();
      if (name.empty() || name[0] == '.') continue;  // hidden files (.DS_Store, ...)
      if (it->is_directory(ec)) continue;
      if (!io::known_extension(name)) continue;  // README.txt, thumbnails.db, ...
      files.push_back(it->path().string());
    }
  }
  std::sort(files.begin(), files.end(), natural_less);
  if (files.empty())
    io::fail(folder_or_pattern,
             "the folder holds no DICOM files and no slice files (images, .npy, TIFF, ...; "
             "hidden files and unknown extensions are skipped)");
  return files;
}

Loaded load_slices(const std::string& folder_or_pattern, const std::vector<std::string>& files) {
  if (files.empty()) io::fail(folder_or_pattern, "no files to read as slices");
  Loaded out;
  std::vector<std::size_t> dims;
  std::size_t channels = 1, plane = 0;
  for (std::size_t z = 0; z < files.size(); ++z) {
    const std::string& f = files[z];
    Loaded s = load_any(f, false);
    if (s.array.rank() != 2)
      io::fail(folder_or_pattern, "slice " + std::to_string(z) + " (" + sv::printable(f) + ") is " +
                                      std::to_string(s.array.rank()) +
                                      "-D; every slice must be a 2-D image");
    if (z == 0) {
      dims = s.array.dims();
      channels = s.array.channels();
      plane = s.array.size();
      // The whole stack within the image limits before anything more is read.
      if (files.size() > kImageMaxValues / plane)
        io::fail(folder_or_pattern, std::to_string(files.size()) + " slices of " +
                                        describe_shape(dims, channels) + " exceed " +
                                        std::to_string(kImageMaxValues) + " values");
      out.array = ArrayD({files.size(), dims[0], dims[1]}, channels);
      out.dtype = s.dtype;
      out.channel_axis = s.channel_axis;
      out.spacing = {1.0, s.spacing[0], s.spacing[1]};
    } else if (s.array.dims() != dims || s.array.channels() != channels) {
      io::fail(folder_or_pattern, "slice " + std::to_string(z) + " (" + sv::printable(f) + ") is " +
                                      describe_shape(s.array.dims(), s.array.channels()) +
                                      ", slice 0 (" + sv::printable(files[0]) + ") is " +
                                      describe_shape(dims, channels) +
                                      "; every slice must have the same size and channels");
    } else if (s.dtype != out.dtype) {
      io::fail(folder_or_pattern, "slice " + std::to_string(z) + " (" + sv::printable(f) +
                                      ") stores " + dtype_name(s.dtype) + ", slice 0 stores " +
                                      dtype_name(out.dtype) + "; every slice must have one type");
    }
    std::copy(s.array.data(), s.array.data() + plane, out.array.data() + z * plane);
  }
  return io::finish_loaded(folder_or_pattern, std::move(out));
}

}  // namespace sv
