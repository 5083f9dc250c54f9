// File input/output: PNG and JPEG images (8 and 16 bit), NumPy .npy arrays and NRRD volumes.
// Every loader validates what it reads and throws sv::Error naming the file and the problem;
// every saver writes to a temporary file beside the target and renames it into place, so a
// failed save never damages a file already on disk.
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
// normalised to [0, 1] (divided by 255 or 65535). A grey image has no channel axis.
Loaded load_image(const std::string& path);
// Writes a 2-D array with 1..4 channels; values in [0,1] are scaled, rounded and clamped to
// `bits` (8 or 16; JPEG only 8). The format follows the extension (.png, .jpg/.jpeg).
void save_image(const std::string& path, const ArrayD& a, int bits = 8);

// NumPy .npy, version 1.0/2.0/3.0, C order, little-endian float32, float64, uint8, uint16
// (big-endian variants and Fortran order are rejected with a clear error). With channel_axis
// the last axis is channels (1..4) and the remaining 1..3 axes are spatial; without it all
// axes (1..3) are spatial. Values keep their numeric value (no normalisation).
Loaded load_npy(const std::string& path, bool channel_axis);
// Writes float32 (F32), float64 (F64), uint8 or uint16 (rounded, clamped). The shape is the
// array's dims plus a trailing channel axis when channel_axis is true.
void save_npy(const std::string& path, const ArrayD& a, DType dtype, bool channel_axis);
void save_npy(const std::string& path, const ArrayF& a, bool channel_axis);  // float32

// NRRD (http://teem.sourceforge.net/nrrd/format.html): 1..3 spatial axes plus an optional
// leading channel axis of 1..4 (kinds "vector"/"RGB-color"/"RGBA-color" etc.), encodings raw
// and gzip, types uchar/ushort/short/float/double, little or big endian, attached data or a
// detached "data file". Axis order in the file is x fastest, as in our arrays. Spacings are
// read from "spacings" or "space directions".
Loaded load_nrrd(const std::string& path);
void save_nrrd(const std::string& path, const ArrayD& a, DType dtype, bool channel_axis,
               const std::vector<double>& spacing = {});

// Chooses by extension: .png .jpg .jpeg -> image, .npy -> npy, .nrrd .nhdr -> nrrd.
// `channel_axis` applies to .npy only (images imply it for colour; NRRD states it).
Loaded load_any(const std::string& path, bool channel_axis);
// dtype applies to .npy and .nrrd; images use 8 bit unless dtype is U16 (16-bit PNG).
void save_any(const std::string& path, const ArrayD& a, DType dtype, bool channel_axis);

}  // namespace sv
