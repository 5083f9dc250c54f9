// Which viewer mode shows a file when --mode is not given: a video (file extension, camera
// device, synthetic source) -> video; an image file -> zoom; anything else the loaders read is
// loaded once and its rank decides: 2-D -> zoom, 3-D -> volume. No GL, so it is tested alone.
#pragma once

#include <optional>
#include <string>

#include "splineview/io.h"

namespace sv::viewer {

struct ModeChoice {
  std::string mode;  // "zoom", "volume" or "video"
  std::string why;   // "a video file (.mp4)", "a 3-D array of 64 x 128 x 128"
};

// Throws sv::Error naming the file when it cannot be read, or when no mode shows it (1-D data).
ModeChoice choose_mode(const std::string& path, const std::optional<RawSpec>& raw);

// True for sources the video mode opens: synthetic[:WxH], /dev/videoN, and the extensions of
// video containers (.mp4 .m4v .mkv .mov .webm .avi .nut .mpg .mpeg .ts .mts .flv .ogv .wmv).
bool is_video_source(const std::string& path);

}  // namespace sv::viewer
