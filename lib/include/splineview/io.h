// File input/output: PNG and JPEG images (8 and 16 bit), NumPy .npy arrays and NRRD volumes.
// Every loader validates what it reads and throws sv::Error naming the file and the problem;
// every saver writes to a temporary file beside the target and renames it into place, so a
// failed save never damages a file already on disk.
//
// Common rules: error messages are one line and start with "<path>: ". Integer outputs (uint8,
// uint16, image samples) are rounded to nearest and clamped; NaN becomes 0. Arrays with more
// than one channel are always written with their channel axis, even when `channel_axis` is
// false; `channel_axis` = true with one channel writes a channel axis of size 1.
#pragma once

#include <string>

#include "splineview/array.h"

namespace sv {

// What was loaded: the values (as double), the element type the file stored, and whether the
// array has a trailing channel axis (colour images always; .npy only when asked).
struct Loaded {
  ArrayD array;
  DType dtype = DType::F64;
  bool channel_axis = false;
  // Voxel spacing per axis (array order) where the format stores it, else all 1.
  std::vector<double> spacing;
};

// Image files: PNG (8/16 bit, grey, grey+alpha, RGB, RGBA) and JPEG (8 bit). Values are
// normalised to [0, 1] (divided by 255 or 65535). A grey image has no channel axis. The file's
// signature decides PNG vs JPEG (not the extension); dtype is U8 or U16; spacing is {1, 1}.
Loaded load_image(const std::string& path);
// Writes a 2-D array with 1..4 channels; values in [0,1] are scaled, rounded and clamped to
// `bits` (8 or 16; JPEG only 8). The format follows the extension (.png, .jpg/.jpeg). JPEG
// (quality 95, no chroma subsampling) takes 1 or 3 channels (alpha is refused) and at most
// 65535 pixels per side; the encoder always writes YCbCr, so a grey JPEG reads back as three
// equal channels.
void save_image(const std::string& path, const ArrayD& a, int bits = 8);

// NumPy .npy, version 1.0/2.0/3.0, C order, little-endian float32, float64, uint8, uint16
// (big-endian variants and Fortran order are rejected with a clear error). With channel_axis
// the last axis is channels (1..4) and the remaining 1..3 axes are spatial; without it all
// axes (1..3) are spatial. Values keep their numeric value (no normalisation). The file size
// must match the header exactly (truncated files and trailing bytes are errors).
Loaded load_npy(const std::string& path, bool channel_axis);
// Writes float32 (F32), float64 (F64), uint8 or uint16 (rounded, clamped), format version
// 1.0. The shape is the array's dims plus a trailing channel axis when channel_axis is true or
// the array has more than one channel. Doubles beyond the float32 range become +-inf.
void save_npy(const std::string& path, const ArrayD& a, DType dtype, bool channel_axis);
void save_npy(const std::string& path, const ArrayF& a, bool channel_axis);  // float32

// NRRD (http://teem.sourceforge.net/nrrd/format.html): 1..3 spatial axes plus an optional
// leading channel axis of 1..4 (kinds "vector"/"RGB-color"/"RGBA-color" etc.), encodings raw
// and gzip (also ascii), types uchar/ushort/short/float/double, little or big endian, attached
// data or a single detached "data file" (relative to the header's folder); "byte skip" and
// "line skip" must be 0. Axis order in the file is x fastest, as in our arrays. Any kind other
// than domain/space/time/none/??? on the first axis makes it the channel axis; such a kind on
// another axis is an error. "short" data is reported as DType::F32 (which holds every int16
// exactly). Spacings are read from "space directions" (vector lengths) or else "spacings",
// in array order; missing, NaN or zero spacings read as 1.
Loaded load_nrrd(const std::string& path);
// Writes NRRD0004 with gzip-compressed little-endian data, kinds (RGB-color/RGBA-color for 3/4
// channels, else vector; domain for spatial axes) and "spacings" when `spacing` is given (one
// positive value per array axis, array order). A ".nhdr" path writes a detached header plus
// "<stem>.raw.gz" beside it (the data file is replaced first, then the header; each atomically).
void save_nrrd(const std::string& path, const ArrayD& a, DType dtype, bool channel_axis,
               const std::vector<double>& spacing = {});

// Chooses by extension: .png .jpg .jpeg -> image, .npy -> npy, .nrrd .nhdr -> nrrd.
// `channel_axis` applies to .npy only (images imply it for colour; NRRD states it).
Loaded load_any(const std::string& path, bool channel_axis);
// dtype applies to .npy and .nrrd; images use 8 bit unless dtype is U16 (16-bit PNG; an
// error for JPEG). Unknown extensions throw "<path>: unsupported file extension '.xyz' ...".
void save_any(const std::string& path, const ArrayD& a, DType dtype, bool channel_axis);

}  // namespace sv
