// The viewer's choice of mode from the content of a file (mode_choice.h).
#include "mode_choice.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "splineview/error.h"

namespace sv::viewer {

namespace {

std::string lower_extension(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  const std::size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string e = path.substr(dot);
  std::transform(e.begin(), e.end(), e.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return e;
}

bool one_of(const std::string& e, std::initializer_list<const char*> list) {
  for (const char* x : list)
    if (e == x) return true;
  return false;
}

}  // namespace

bool is_video_source(const std::string& path) {
  if (path.rfind("synthetic", 0) == 0 || path.rfind("/dev/video", 0) == 0) return true;
  return one_of(lower_extension(path), {".mp4", ".m4v", ".mkv", ".mov", ".webm", ".avi", ".nut",
                                        ".mpg", ".mpeg", ".ts", ".mts", ".flv", ".ogv", ".wmv"});
}

ModeChoice choose_mode(const std::string& path, const std::optional<RawSpec>& raw) {
  if (path.empty()) return {"zoom", "no file: the bundled photograph"};
  if (is_video_source(path)) return {"video", "a video source"};
  const std::string e = lower_extension(path);
  if (!raw &&
      one_of(e, {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".hdr", ".pgm", ".ppm", ".pnm", ".tga"}))
    return {"zoom", "an image file (" + e + ")"};
  // Arrays, volumes, TIFF, DICOM, folders and raw data: their rank decides.
  const Loaded l = raw ? load_any(path, false, *raw) : load_any(path, false);
  const std::string shape = describe_shape(l.array.dims(), l.array.channels());
  switch (l.array.rank()) {
    case 2:
      return {"zoom", "a 2-D image of " + shape};
    case 3:
      return {"volume", "a 3-D volume of " + shape};
    default:
      throw Error(path + ": " + shape + " is 1-D; the viewer shows 2-D images and 3-D volumes");
  }
}

}  // namespace sv::viewer
