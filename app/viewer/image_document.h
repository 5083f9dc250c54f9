// The image the viewer shows: read from a file, uploaded as a float texture of the raw samples,
// and prefiltered into cubic B-spline coefficients (reflect boundary, matching the textures'
// mirrored-repeat addressing) straight into a second texture through sv::gl::TextureInterop:
// by CUDA when a device runs the GL context, else on the CPU with an upload (the interop's
// fallback, which says so once per document). The coefficients are then read back once, so
// that the value readout under the cursor evaluates the CPU reference on exactly what the views
// sample.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "accuracy.h"
#include "display_window.h"
#include "splineview/array.h"
#include "splineview/gl/image_textures.h"
#include "splineview/io.h"

namespace sv::viewer {

// How a 2-D image is held and shown: the affine map from its stored values to the normalised
// values the textures, the shaders and the accuracy figures work on, and what a display window
// can start from. All values in the file's raw units.
struct DisplayRange {
  DataScale scale;                    // raw = scale.raw(normalised)
  double data_min = 0, data_max = 0;  // over all samples and channels
  // Integer types: the type's range (uint8 0..255, uint16 0..65535, int16 -32768..32767).
  std::optional<std::array<double, 2>> type_range;
  // What the normalisation did, for the panel ("window 1002 to 2998 (0.1st to 99.9th
  // percentile)"); empty for 8-bit and [0, 1] data.
  std::string note;
  // The default ("auto") window: the normalisation itself, so that it shows the image as the
  // viewer always has: 8-bit data over its full scale, [0, 1] data as it is, anything else over
  // its 0.1st..99.9th percentiles.
  WindowLevel auto_window() const {
    return WindowLevel::from_range(scale.offset, scale.offset + scale.scale);
  }
};

// Normalises a loaded 2-D image in place for display: 8-bit data by its full scale (/ 255),
// floating data already in [0, 1] as it is, anything else (16-bit, CT int16, float) by a window
// from its 0.1st to its 99.9th percentile (v = (raw - p0.1) / (p99.9 - p0.1), not clamped), a
// constant image to 0.5. The map is affine, so it commutes with every interpolation method;
// the returned range says how to get the raw values back.
DisplayRange to_display_range(Loaded& loaded);
// The range of data that is already normalised (generated images): scale 1, offset 0.
DisplayRange unit_display_range(const ArrayD& values);

// An image decoded on the CPU (no GL: safe on a worker thread), before upload.
struct DecodedImage {
  std::string path;                     // empty for generated images
  std::string label;                    // file name, or "zone plate 512 x 512"
  std::string type;                     // "8-bit", "16-bit", "float, synthetic"
  std::shared_ptr<const ArrayD> exact;  // dims (height, width), 1..4 channels, in [0, 1]
  AnalyticTruth truth;                  // generated from a function: that function; else empty
  DisplayRange range;                   // how `exact` relates to the file's values
  double decode_ms = 0;
};

struct ImageDocument {
  std::string path;
  std::string label;
  std::string description;              // "600 x 400, RGB, 8-bit"
  std::shared_ptr<const ArrayD> exact;  // normalised values in double (the reference's input)
  AnalyticTruth truth;                  // the function of generated images (the zone plate)
  DisplayRange range;                   // raw = range.scale.raw(normalised value)
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

// The value of `method` at image position `position` (x, y; sample k at k) in the file's raw
// units, one per channel: the CPU reference (sv::sample in double, the method's degree) on the
// samples or coefficients the views sample, mapped back through doc.range.scale.
std::vector<double> raw_value_at(const ImageDocument& doc, gl::Fetch method,
                                 const glm::dvec2& position);
// The stored value of pixel (x, y) in raw units, one per channel (from the double copy).
std::vector<double> raw_pixel(const ImageDocument& doc, int x, int y);

// Reads and decodes a PNG or JPEG; no GL (runs on a worker thread). Throws sv::Error naming the
// file and the problem.
DecodedImage decode_image(const std::string& path);
// A generated image (values in [0, 1]) under a label; `truth`: the function it samples, if any.
DecodedImage synthetic_image(const std::string& label, const ArrayF& values,
                             AnalyticTruth truth = {});
// The bundled zone plate (sv::zone_plate 512 x 512, edge frequency 0.5) with its function.
DecodedImage zone_plate_image();
// Level 0 of a document's 2-D coefficient texture as floats (dims (H, W)), the first `channels`
// of each texel (swizzles do not apply to image queries, so this is what is stored); needs a
// current GL context.
ArrayF read_back(const gl::Texture& texture, const std::vector<std::size_t>& dims,
                 std::size_t channels);
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
