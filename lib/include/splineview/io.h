// File input/output: PNG and JPEG images (8 and 16 bit), NumPy .npy arrays, NRRD and NIfTI-1
// volumes, and headerless raw volumes described by a RawSpec.
// Every loader validates what it reads and throws sv::Error naming the file and the problem;
// every saver writes to a temporary file beside the target and renames it into place, so a
// failed save never damages a file already on disk.
//
// Common rules: error messages are one line and start with "<path>: ". Integer outputs (uint8,
// uint16, image samples) are rounded to nearest and clamped; NaN becomes 0. Arrays with more
// than one channel are always written with their channel axis, even when `channel_axis` is
// false; `channel_axis` = true with one channel writes a channel axis of size 1.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "splineview/array.h"
#include "splineview/geometry.h"

namespace sv {

// What was loaded: the values (as double), the element type the file stored, and whether the
// array has a trailing channel axis (colour images always; .npy only when asked).
struct Loaded {
  ArrayD array;
  DType dtype = DType::F64;
  bool channel_axis = false;
  // Voxel spacing per axis (array order) where the format stores it, else all 1; always the
  // column lengths of geometry.affine (geometry_spacing).
  std::vector<double> spacing;
  // Index-to-world transform in RAS+ mm (splineview/geometry.h). geometry.oriented() is true
  // only when the file states an orientation; otherwise the affine is diag(spacing).
  Geometry geometry;
};

// Image files. Read: PNG (libpng: 1/2/4/8/16-bit grey, grey+alpha, RGB, RGBA, palette,
// interlaced; every chunk CRC and the zlib Adler-32 verified; image data must be complete and
// IEND present), JPEG (libjpeg-turbo: baseline, extended sequential and progressive Huffman;
// grey, YCbCr, Adobe CMYK/YCCK -> RGB; every libjpeg warning, e.g. "Premature end of JPEG
// file", is an error; a scan whose quantisation or Huffman table is not defined is refused),
// and through stb_image BMP (uncompressed), GIF (first frame, RGBA), Radiance HDR, binary
// PGM/PPM (P5/P6, 8 or 16 bit) and TGA; the file must hold all the data its header announces.
// The signature decides the format (not the extension), except TGA, which has none and is
// read when the extension is .tga. Values are the stored samples, as in every format (8-bit
// 0..255 with dtype U8, 16-bit 0..65535 with dtype U16, PNM 0..maxval; HDR its linear float
// values, dtype F32; 1-, 2- and 4-bit grey PNG widened to 8 bits, v * 255 / (2^bits - 1), as
// libpng, PIL and imageio give it); scale_to_unit maps integer data to [0, 1] for display code. A
// grey image has no channel axis; 16-bit PNG stays 16-bit; spacing is {1, 1}. Before any pixel
// memory is allocated the declared size must pass: at most kImageMaxSide pixels per side (JPEG:
// 65500, libjpeg-turbo's limit), at most kImageMaxValues values (width x height x channels), and a
// size the file can hold at the format's best compression (PNG: deflate expands at most 1032:1;
// JPEG: at least 1 bit per 8x8 block of the smallest component; GIF: at most 4096 pixels per LZW
// code; HDR: run-length scanlines of at least 4 + 8 ceil(w/127) bytes; BMP, PNM, TGA: their exact
// data size). Arithmetic-coded, lossless and hierarchical JPEG, ASCII PNM and PSD are refused.
// Errors carry the decoder's reason, e.g. "<path>: corrupt PNG: IDAT: CRC error", "<path>: corrupt
// JPEG: Premature end of JPEG file".
inline constexpr std::size_t kImageMaxSide = 1000000;
inline constexpr std::size_t kImageMaxValues = std::size_t{1} << 28;  // 2 GiB as doubles
Loaded load_image(const std::string& path);
// Writes a 2-D array with 1..4 channels; values are stored as they are, rounded and clamped to
// [0, 2^bits - 1] (`bits` 8 or 16; JPEG only 8); nothing is scaled. The format follows the
// extension (.png, .jpg/.jpeg). JPEG (quality 95, no chroma subsampling) takes 1 or 3 channels
// (alpha is refused) and at most 65535 pixels per side; the encoder always writes YCbCr, so a grey
// JPEG reads back as three equal channels.
void save_image(const std::string& path, const ArrayD& a, int bits = 8);

// NumPy .npy, version 1.0/2.0/3.0, every numeric dtype: bool ('|b1'), int8/16/32/64, uint8/16/
// 32/64, float16/32/64, each in either byte order ('<', '>', '=' native; '|' for one byte), in
// C or Fortran order (fortran_order True is reordered into our C order, x fastest). Loaded.dtype
// is the file's type (e.g. DType::I16) and values keep their numeric value (no normalisation):
// bool reads as 0/1 (any non-zero byte as 1), float16 exactly (subnormals, +-inf, NaN). An
// int64/uint64 value that a double cannot hold exactly (beyond 2^53 in magnitude, unless a
// multiple of a high enough power of two) is an error naming it and its C-order element index:
// "<path>: int64 value 9007199254740993 at element 12 is not exactly representable as a
// double". Complex, object, string, structured, void and datetime dtypes and long double are
// refused naming the descr. With channel_axis the last axis is channels (1..4) and the
// remaining 1..3 axes are spatial; without it all axes (1..3) are spatial. The file size must
// match the header exactly (truncated files and trailing bytes are errors).
Loaded load_npy(const std::string& path, bool channel_axis);
// Writes `dtype` ('<' little endian, '|' for one-byte types), C order, format version 1.0. The
// shape is the array's dims plus a trailing channel axis when channel_axis is true or the array
// has more than one channel. Integer types: NaN becomes 0, other values are rounded half away
// from zero (2.5 -> 3, -2.5 -> -3) and clamped to the type's range (+-inf to its ends; int64
// saturates at 2^63 - 1, which load_npy then refuses as inexact). Bool: 0 and NaN -> False,
// any other value -> True. float16 and float32: round to nearest even; magnitudes beyond the
// range become +-inf (float16 from 65520 on); NaN stays NaN.
void save_npy(const std::string& path, const ArrayD& a, DType dtype, bool channel_axis);
void save_npy(const std::string& path, const ArrayF& a, bool channel_axis);  // float32

// NRRD (http://teem.sourceforge.net/nrrd/format.html): 1..3 spatial axes plus an optional
// leading channel axis of 1..4 (kinds "vector"/"RGB-color"/"RGBA-color" etc.), encodings raw
// and gzip (also ascii), types uchar/ushort/short/float/double, little or big endian, attached
// data or a single detached "data file" (relative to the header's folder); "byte skip" and
// "line skip" must be 0. Axis order in the file is x fastest, as in our arrays. Any kind other
// than domain/space/time/none/??? on the first axis makes it the channel axis; such a kind on
// another axis is an error. Types: every integer type of 8 to 64 bits, float and double; dtype
// is the stored type (int64/uint64 values a double cannot hold are refused). Spacings are read
// from "space directions" (vector lengths) or else "spacings", in array order; missing, NaN or
// zero spacings read as 1. Geometry (RAS+, splineview/geometry.h): a named patient space
// ("right-anterior-superior"/"RAS", "left-anterior-superior"/"LAS",
// "left-posterior-superior"/"LPS") with a 3-vector "space directions" entry per spatial axis
// and an optional "space origin" gives an oriented affine (source "nrrd space <name>"); the
// third column of a 2-D image is the plane's unit normal. Other spaces (scanner-xyz,
// 3D-right-handed, ...) and files without "space" are unoriented.
Loaded load_nrrd(const std::string& path);
// Writes NRRD0004 with gzip-compressed little-endian data, kinds (RGB-color/RGBA-color for 3/4
// channels, else vector; domain for spatial axes) and "spacings" when `spacing` is given (one
// positive value per array axis, array order); with an oriented `geometry` instead "space:
// left-posterior-superior", "space directions" and "space origin" (as 3D Slicer writes them).
// Every dtype but float16 is written as its own NRRD type (bool as uchar). A ".nhdr" path writes a
// detached header plus
// "<stem>.raw.gz" beside it (the data file is replaced first, then the header; each atomically).
void save_nrrd(const std::string& path, const ArrayD& a, DType dtype, bool channel_axis,
               const std::vector<double>& spacing = {});
void save_nrrd(const std::string& path, const ArrayD& a, DType dtype, bool channel_axis,
               const Geometry& geometry);

// NIfTI-1 and NIfTI-2 single files (.nii, and .nii.gz through zlib; the file's gzip signature
// decides, not the extension), either byte order (detected from sizeof_hdr = 348 or 540).
// 1..4 axes; dim[5..7] must be 1. A 4-D file (dim[4] > 1) is read one volume at a time: the
// index comes from sv::InputOptions::volume (splinetool --volume), and without one the file is
// refused with a message naming the volume count. Axis order: the file's i (dim[1]) varies
// fastest, so dims() is (dim[3], dim[2], dim[1]) = (z, y, x).
// Geometry (RAS+ mm, splineview/geometry.h), by the precedence nibabel applies: the sform when
// sform_code > 0 (source "sform"), else the qform (quaternion, qoffset, pixdim, qfac =
// pixdim[0]) when qform_code > 0 (source "qform"), else diag(|pixdim|) with no orientation (the
// standard's "method 1"; nibabel shows such files with an Analyze-style fallback affine that
// flips x and centres the volume: we do not invent an orientation the file does not state).
// Spatial units (xyzt_units) are converted to mm (metre x1000, micron x0.001; unknown = mm;
// nibabel does not convert). Zero, NaN or infinite pixdim read as 1. spacing = the affine's
// column lengths.
// Data types and their dtype: the stored type (uint8, int8, int16, uint16, int32, uint32,
// float32, float64); other types (int64, complex, RGB,
// ...) are errors naming the datatype code. When scl_slope is finite and non-zero every value
// becomes scl_slope * stored + scl_inter (in double; a non-finite scl_inter counts as 0) and,
// unless that is the identity, dtype is F64. ANALYZE 7.5 and .hdr/.img pairs ("ni1", "ni2")
// are rejected; the file must end where the voxel data ends (all volumes).
Loaded load_nifti(const std::string& path);
// Writes a one-channel array of rank 1..3 as NIfTI-1 ("n+1", little endian, vox_offset 352,
// no extensions; .nii.gz paths gzip-compressed) with datatype uint8, uint16, float32 or float64
// per `dtype` (integers rounded and clamped), scl_slope 1 and scl_inter 0. An oriented geometry
// is written as the sform (code 1, scanner) and, when its directions are orthonormal, also as
// the qform (code 1; pixdim[0] = qfac), units mm; pixdim = the column lengths. An unoriented one
// (or `spacing`: array order, one positive value per axis; empty = all 1) writes pixdim only,
// both codes 0. NIfTI-1 stores float32: the affine comes back within float32 rounding.
void save_nifti(const std::string& path, const ArrayD& a, DType dtype,
                const std::vector<double>& spacing = {});
void save_nifti(const std::string& path, const ArrayD& a, DType dtype, const Geometry& geometry);

// NIfTI vector images: the 5-D layout the standard gives vector-valued data (dim[0] = 5,
// dim[4] = 1 time point, dim[5] = the components; NIFTI_INTENT_VECTOR), which load_nifti
// refuses. NiftyReg stores its transformations so (splineview/niftyreg.h).
// What the header says the data are: intent_code, intent_p1..3, intent_name (up to 15
// characters) and descrip (up to 79).
struct NiftiIntent {
  int code = 0;
  double p1 = 0, p2 = 0, p3 = 0;
  std::string name, descrip;
};
struct NiftiVector {
  // dims (dim[3], dim[2], dim[1]) = (z, y, x), always rank 3 (a 2-D image has z = 1), with
  // dim[5] channels, channel c = component c as stored (channel_axis is true); dtype, scaling,
  // geometry and spacing as load_nifti gives them.
  Loaded image;
  NiftiIntent intent;
  // Millimetres per the file's spatial unit (xyzt_units: metre 1000, micron 0.001, else 1), the
  // factor the geometry was converted by; for values that are positions or lengths.
  double unit_mm = 1.0;
};
// NIfTI-1 or NIfTI-2, .nii or .nii.gz, as load_nifti reads them (byte order, datatypes,
// scl_slope, geometry, the same checks of size and truncation), with dim[0] 5 to 7, dim[4] = 1,
// dim[5] 2 to 4 and dim[6] = dim[7] = 1 (never a file load_nifti reads: that needs dim[5] = 1);
// the components are stored one whole volume after another.
// Errors name the file and the field, e.g. "<path>: dim[4] is 3; a vector image has one time
// point (dim[4] = 1)".
NiftiVector load_nifti_vector(const std::string& path);
// Writes a rank 1..3 array with 2..4 channels as such a NIfTI-1 vector image: dim[0] = 5,
// dim[1..3] = x, y, z (1 beyond the rank), dim[4] = 1, dim[5] = channels, `intent` in the
// header, the rest as save_nifti(path, a, dtype, geometry) writes it.
void save_nifti_vector(const std::string& path, const ArrayD& a, DType dtype,
                       const Geometry& geometry, const NiftiIntent& intent);

// A headerless raw volume: its dims in array order (z, y, x; plus the channel count last when
// loaded with a channel axis), the stored scalar type, byte order, spacing of the spatial axes
// (empty = all 1) and the number of header bytes to skip.
struct RawSpec {
  enum class Type { U8, U16, I16, F32, F64 };
  std::vector<std::size_t> dims;
  Type type = Type::U8;
  bool big_endian = false;
  std::vector<double> spacing;
  std::size_t offset = 0;
};
// Parses "DIMS:TYPE[:le|:be][:spacing=S0xS1[xS2]][:offset=BYTES]", e.g. "64x256x256:u16:be" or
// "40x512x512:f32:spacing=2.5x0.7x0.7:offset=1024": DIMS are 1..4 positive integers joined by
// 'x' in array order; TYPE is u8, u16, i16, f32 or f64; little endian unless ":be". Throws
// sv::Error "raw volume spec '<spec>': <problem>".
RawSpec parse_raw_spec(const std::string& spec);
// Reads `path` as raw data laid out per `spec` (x fastest). With channel_axis the last of
// spec.dims is the channel count (1..4) and the others (1..3) are spatial; without it all
// (1..3) are spatial. The file size must be exactly offset + product(dims) * type size (the
// error names the expected and the actual byte count). dtype: u8 -> U8, u16 -> U16, i16 and
// f32 -> F32, f64 -> F64; values keep their numeric value.
Loaded load_raw(const std::string& path, const RawSpec& spec, bool channel_axis);

// DICOM (through GDCM; lib/src/io_dicom.cpp), read only. `path` is a file (one slice, or a
// multi-frame file: Enhanced CT/MR per-frame functional groups, or RT-Dose style
// GridFrameOffsetVector) or a folder holding one series: its files with the Part 10 "DICM"
// marker or a .dcm extension are read; other files (README, .DS_Store), DICOM files without an
// image (DICOMDIR, reports) and subfolders are skipped. Refused, each with one line naming the
// path: more than one SeriesInstanceUID (the message lists each series and its file count),
// mixed image sizes, pixel types, orientations or PixelSpacing, two slices at one position,
// uneven slice spacing (beyond max(0.01 mm, 1%) of the mean step: resampling is not done),
// positions off one line, several slices or frames without ImagePositionPatient and
// ImageOrientationPatient, an oriented image without PixelSpacing, a folder with no image,
// photometric interpretations other than MONOCHROME1/2 and RGB, BitsAllocated other than
// 8/16/32, Explicit VR Big Endian, more than kDicomMaxValues values (checked before allocating).
// Geometry (source "dicom"): DICOM's LPS+ converted to RAS+. i (x, fastest) runs along the
// IOP row direction with PixelSpacing[1], j along the IOP column direction with
// PixelSpacing[0], k in order of the IPP projection on row x column; the k column is the mean
// IPP step (a gantry tilt gives a non-orthogonal affine, kept as it is), the origin the IPP of
// the first slice. One slice: a 2-D array, k column = normal x SliceThickness (else
// SpacingBetweenSlices, else 1). One slice without IPP/IOP: unoriented, spacing from
// PixelSpacing. A standard axial series orients as "LPS" (sv::orientation_code).
// Values: BitsStored bits at HighBit, sign-extended when PixelRepresentation is 1; then
// RescaleSlope/RescaleIntercept (per frame in Enhanced files) in double. dtype: the stored type
// (U8, U16, I8, I16, U32, I32) when the rescale is the identity, else F64. MONOCHROME1 keeps its
// stored values (not inverted); RGB is 3 channels (no rescale). Compressed transfer syntaxes
// are whatever GDCM decodes (JPEG baseline/lossless, JPEG-LS, JPEG 2000); RLE Lossless is
// decoded by splineview. Files are read through the input guard and must be regular files.
// Bounded work: before anything is allocated, each file must be able to hold what its Rows x
// Columns x SamplesPerPixel x NumberOfFrames claim at its transfer syntax's best compression
// (native data: exactly; deflate 1032:1; RLE 64:1; JPEG 64 samples per byte; JPEG-LS and
// JPEG 2000 2^18 samples per byte), else "<path>: the file is too small for its image: ...".
// Safety: splineview walks the file's structure itself first; then GDCM (which Debian builds
// with assertions on: it aborts on many damaged data sets) runs in a child process
// (lib/src/isolate.h) and its result comes back through a pipe; if GDCM aborts, crashes, exits
// or makes no progress for 120 s, the load is one error naming the path and what happened,
// e.g. "<path>: the DICOM decoder (GDCM) stopped on an assertion or abort (SIGABRT) while
// reading it (a damaged or unsupported file): gdcmImageHelper.cxx:197: Assertion `...'
// failed.", and the calling process goes on. The result is held twice while it streams back.
// SPLINEVIEW_IN_PROCESS_DECODERS=1 in the environment runs GDCM in the calling process
// (debugging, or fuzzing GDCM itself).
inline constexpr std::size_t kDicomMaxValues = std::size_t{1} << 28;  // 2 GiB as doubles
Loaded load_dicom(const std::string& path);
// True when `path` is a regular file with "DICM" at byte 128 (reads 132 bytes; never throws).
bool looks_like_dicom(const std::string& path);

// TIFF and BigTIFF through libtiff (lib/src/io_tiff.cpp). Read: 8/16/32/64-bit unsigned and
// signed integer and 16/32/64-bit float samples (SampleFormat); 1..4 samples per pixel
// (MINISBLACK or MINISWHITE grey, with extra samples as further channels; RGB and RGBA), chunky
// or separate planes, strips or tiles, every compression this libtiff decodes (none, LZW,
// Deflate, PackBits, JPEG, zstd, ...), predictors 2 and 3. Stored values are the values (no
// normalisation: uint16 4095 loads as 4095) and dtype is the file's sample type. MINISWHITE
// keeps the stored values (not inverted, as tifffile does). Palette images (8- or 16-bit
// indices) are expanded to RGB through the ColorMap: uint8 when the map holds 8-bit colours
// (v * 257, or all <= 255), else its 16-bit values (U16). JPEG YCbCr is decoded to RGB; other
// YCbCr, CMYK, CIELab, 1/2/4/12-bit and complex samples are refused. The Orientation tag is
// ignored (rows as stored, as tifffile and Fiji do).
// Pages: reduced-resolution pages and masks (NewSubfileType bits 0 and 2: pyramid levels,
// thumbnails) and SubIFDs are skipped; the remaining pages must all have the same size, sample
// type and samples per pixel and form a volume (z = page order; one page is a 2-D array);
// pages that differ are an error naming both. ImageJ files (ImageDescription "ImageJ=..."):
// images= must match the page count; channels=C (2..4, one sample per page, channel-fastest
// page order) becomes the channel axis and the slices the z axis; frames > 1 is refused (there
// is no option to pick a time point); ImageJ's single-directory layout for > 4 GB stacks is
// refused.
// Spacing (array order z, y, x): x and y from X/YResolution (pixel size = 1/resolution): in mm
// when ResolutionUnit is inch (x 25.4) or centimetre (x 10), or when it is none and an ImageJ
// unit= names a length (micron/um/µm, nm, mm, cm, m, inch); otherwise the raw 1/resolution with
// no unit; missing or invalid resolutions read as 1. z is ImageJ's spacing= (converted the same
// way), else 1. TIFF states no orientation: geometry is diag(spacing), unoriented.
// Limits, checked on every page before pixel memory is allocated: kImageMaxSide pixels per
// side and pages, kImageMaxValues values in all, and decoded bytes at most the strip/tile bytes
// present in the file times the compression's best ratio (none 1, PackBits 64, Deflate 1032,
// LZW 4096, JPEG 1024, others 65536). libtiff never prints; its first error is the reason:
// "<path>: corrupt TIFF: <libtiff's message>".
Loaded load_tiff(const std::string& path);
// Writes rank 1..3 (rank 1 as one row; rank 3 as one page per z) with 1..4 channels (grey,
// grey+alpha, RGB, RGBA; `channel_axis` has no effect: TIFF always stores samples per pixel)
// as uint8/uint16/uint32/uint64, int8..int64, float16/32/64 per `dtype` (bool as uint8 0/1;
// integers rounded and clamped), Deflate-compressed with predictor 2 for integers up to 32 bits
// (none for floats: tifffile without imagecodecs cannot undo predictor 3), strips of about
// 256 KiB, and an ImageJ-compatible ImageDescription
// ("ImageJ=1.11a\nimages=N\nslices=N\nunit=mm\nspacing=Z\nloop=false\n", as tifffile's
// imagej=True writes and Fiji reads). With `spacing` (array order, positive, in mm):
// X/YResolution = 1/spacing with ResolutionUnit none plus unit=mm (Fiji's convention), and
// spacing= for z. BigTIFF when the samples exceed 3.75 GiB (Fiji opens those only through
// Bio-Formats). Written in memory, then atomically (temporary + rename).
void save_tiff(const std::string& path, const ArrayD& a, DType dtype, bool channel_axis,
               const std::vector<double>& spacing = {});
// As above with the spacing of `geometry` (its column lengths; TIFF holds no orientation).
void save_tiff(const std::string& path, const ArrayD& a, DType dtype, bool channel_axis,
               const Geometry& geometry);

// A stack of 2-D slice files as one volume (z = file order): every file is read with
// load_any, must be 2-D and have the first one's size, channels and dtype. spacing = (1, the
// first slice's spacing); no orientation. The total must stay within kImageMaxValues (checked
// after the first slice, before the others are read). Errors name `folder_or_pattern` and the
// slice. slice_files lists the files of a folder (regular files whose extension names a
// format load_any reads, hidden files skipped) or the matches of a glob(3) pattern (folders
// skipped), in natural sort order: digit runs compare by value ("s2" < "s10").
Loaded load_slices(const std::string& folder_or_pattern, const std::vector<std::string>& files);
std::vector<std::string> slice_files(const std::string& folder_or_pattern);
bool is_slice_pattern(const std::string& path);  // has '*', '?' or '['
bool natural_order_less(const std::string& a, const std::string& b);

// For display and for studies that work on [0, 1] images: divides the values of integer-typed
// data by dtype_full_scale(dtype) (uint8 / 255, uint16 / 65535, ...); floating data is left as
// it is. The loaders themselves never do this (stored values are the values).
void scale_to_unit(Loaded& l);

// Standard input and output as .npy streams (splinetool's "-").
// load_npy_stdin reads a .npy from standard input as load_npy reads a file, through the input
// guard's special-file path whatever InputOptions::allow_special says (a pipe is read only as
// far as its header claims, plus one byte that shows trailing data; a regular file redirected
// to it is bounded by its size). Errors start with "standard input: "; a terminal on standard
// input is refused (nothing would end the read), as is a stream that is not a .npy ("standard
// input: not a .npy file (bad magic; expected \x93NUMPY)").
Loaded load_npy_stdin(bool channel_axis);
// Writes `a` as save_npy(path, a, dtype, channel_axis) writes a file, byte for byte, to standard
// output, converting in blocks (no second copy of the data). Throws sv::Error("standard output:
// cannot write: <reason>") when a write fails.
void write_npy_stdout(const ArrayD& a, DType dtype, bool channel_axis);

// Chooses by extension: .png .jpg .jpeg .bmp .gif .hdr .pgm .ppm .pnm .tga -> image (whose
// signature then decides the format), .npy -> npy, .nrrd .nhdr -> nrrd,
// .nii .nii.gz -> nifti, .tif .tiff -> tiff, .dcm or a folder -> dicom; a file with another or no
// extension is DICOM when it has the "DICM" marker. `channel_axis` applies to .npy only (images
// imply it for colour; NRRD states it; NIfTI has none).
Loaded load_any(const std::string& path, bool channel_axis);
// As above, except that a path without one of those extensions is read with load_raw(path,
// raw, channel_axis) instead of being an error (how headerless data comes in next to files
// that describe themselves); a folder or .dcm file is still DICOM, a "DICM" marker is not
// looked for.
Loaded load_any(const std::string& path, bool channel_axis, const RawSpec& raw);
// dtype applies to .npy, .nrrd, .nii/.nii.gz and .tif/.tiff; images use 8 bit unless dtype is U16
// (16-bit PNG; an error for JPEG). Unknown extensions throw "<path>: unsupported file extension
// '.xyz' ...".
void save_any(const std::string& path, const ArrayD& a, DType dtype, bool channel_axis);
// As above, keeping `geometry` where the format can hold it (NIfTI, NRRD: the affine; formats
// with spacing only take its column lengths; .npy and images drop it).
void save_any(const std::string& path, const ArrayD& a, DType dtype, bool channel_axis,
              const Geometry& geometry);

}  // namespace sv
