// The image the viewer shows: read from a file, prefiltered on the CPU into cubic B-spline
// coefficients (reflect boundary, matching the textures' mirrored-repeat addressing), and
// uploaded as two float textures (raw samples and coefficients). Keeps the samples on the host
// for the value readout under the cursor.
#pragma once

#include <string>
#include <vector>

#include "splineview/array.h"
#include "splineview/gl/image_textures.h"

namespace sv::viewer {

struct ImageDocument {
  std::string path;
  std::string description;  // "600 x 400, RGB, 8-bit"
  ArrayF samples;           // dims (height, width), 1..4 channels, values in [0, 1]
  gl::ImageTextures textures;
  double load_ms = 0;       // reading and decoding the file
  double prefilter_ms = 0;  // CPU prefilter (float, degree 3)
  double upload_ms = 0;     // both texture uploads

  int width() const { return static_cast<int>(samples.dim(1)); }
  int height() const { return static_cast<int>(samples.dim(0)); }
  // Sample values at integer (x, y) inside the image, one per channel.
  std::vector<float> value_at(int x, int y) const;
};

// Reads, prefilters and uploads; needs a current GL context. Throws sv::Error naming the
// file and the problem.
ImageDocument load_document(const std::string& path);

// The bundled default image (assets/coffee.png): looked up next to an installed executable
// (<exe dir>/../share/splineview/assets) and then in the source tree it was built from.
// Returns the first existing path, or the source-tree path when none exists.
std::string default_image_path();

}  // namespace sv::viewer
