// The image the viewer shows: read from a file, uploaded as a float texture of the raw samples,
// and prefiltered into cubic B-spline coefficients (reflect boundary, matching the textures'
// mirrored-repeat addressing) straight into a second texture through sv::gl::TextureInterop:
// by CUDA when a device runs the GL context, else on the CPU with an upload (the interop's
// fallback, which says so once per document). The coefficients are then read back once, so
// that the value readout under the cursor evaluates the CPU reference on exactly what the views
// sample.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "accuracy.h"
#include "splineview/array.h"
#include "splineview/gl/image_textures.h"
#include "splineview/io.h"

namespace sv::viewer {

// An image decoded on the CPU (no GL: safe on a worker thread), before upload.
// Maps a loaded 2-D image into [0, 1] for display: 8-bit data by its full scale (/ 255),
// floating data already in [0, 1] as it is, anything else (16-bit, CT int16, float) through a
// window from its 0.1st to its 99.9th percentile, with a note saying so. (The map is affine, so
// it commutes with every interpolation method: the same as windowing after it.)
void to_display_range(Loaded& loaded, std::string* note);

struct DecodedImage {
  std::string path;                     // empty for generated images
  std::string label;                    // file name, or "zone plate 512 x 512"
  std::string type;                     // "8-bit", "16-bit", "float, synthetic"
  std::shared_ptr<const ArrayD> exact;  // dims (height, width), 1..4 channels, in [0, 1]
  AnalyticTruth truth;                  // generated from a function: that function; else empty
  double decode_ms = 0;
};

struct ImageDocument {
  std::string path;
  std::string label;
  std::string description;              // "600 x 400, RGB, 8-bit"
  std::shared_ptr<const ArrayD> exact;  // the file's values in double (the reference's input)
  AnalyticTruth truth;                  // the function of generated images (the zone plate)
  ArrayF samples;                       // dims (height, width), 1..4 channels, values in [0, 1]
  ArrayF coefficients;                  // read back from textures.coefficients, same shape
  gl::ImageTextures textures;
  bool prefilter_on_gpu = false;  // the interop took the CUDA path
  std::string prefilter_notice;   // the interop's fallback sentence; empty on the CUDA path
  double load_ms = 0;             // reading and decoding the file
  double upload_ms = 0;           // the samples texture
  double prefilter_ms = 0;        // the interop call: CUDA prefilter, or CPU prefilter + upload
  std::optional<double> prefilter_kernel_ms;  // CUDA event time of the prefilter kernels
  double readback_ms = 0;                     // the coefficients, for the readout

  int width() const { return static_cast<int>(samples.dim(1)); }
  int height() const { return static_cast<int>(samples.dim(0)); }
};

// Reads and decodes a PNG or JPEG; no GL (runs on a worker thread). Throws sv::Error naming the
// file and the problem.
DecodedImage decode_image(const std::string& path);
// A generated image (values in [0, 1]) under a label; `truth`: the function it samples, if any.
DecodedImage synthetic_image(const std::string& label, const ArrayF& values,
                             AnalyticTruth truth = {});
// The bundled zone plate (sv::zone_plate 512 x 512, edge frequency 0.5) with its function.
DecodedImage zone_plate_image();
// Uploads and prefilters; needs a current GL context. Throws sv::Error.
ImageDocument make_document(DecodedImage decoded);
// decode_image then make_document.
ImageDocument load_document(const std::string& path);

// A bundled asset by file name: next to an installed executable
// (<exe dir>/../share/splineview/assets), then in the source tree it was built from; the
// source-tree path when none exists.
std::string asset_path(const std::string& name);

// The bundled default image (assets/coffee.png): looked up next to an installed executable
// (<exe dir>/../share/splineview/assets) and then in the source tree it was built from.
// Returns the first existing path, or the source-tree path when none exists.
std::string default_image_path();

}  // namespace sv::viewer
