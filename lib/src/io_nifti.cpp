// NIfTI-1 single files (.nii, .nii.gz). The header layout and the datatype codes come from
// Debian's nifti1.h (libnifti2-dev: struct nifti_1_header, DT_*); every field is read at its
// offsetof() position in the byte order the file declares, and the data bytes go through the
// same decoders as .npy and NRRD.
//
// Why not niftiio's nifti_image_read()/nifti_image_write() from the same package: with
// libniftiio 3.0.1 (Debian 12) a truncated .nii or .nii.gz loads as success (the missing voxels
// are simply not there), a corrupt dim[] makes it calloc() whatever the header claims before
// the file is looked at (tens of terabytes; an abort under ASan), a file with a bad magic is read
// anyway, some errors are printed to stderr whatever the debug level, and the writer returns
// void with no way to learn that it failed. None of that fits "one sv::Error naming the file";
// its CMake package config is broken there too (it references nifti_tool binaries the -dev
// package does not ship). zlib's gz* functions read .nii.gz (and plain files transparently).
#include <nifti1.h>
#include <nifti2.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "io_common.h"
#include "io_layout.h"
#include "splineview/io.h"
#include "splineview/text.h"

namespace sv {

namespace {

using io::fail;

static_assert(sizeof(nifti_1_header) == 348, "nifti1.h: the NIfTI-1 header is 348 bytes");
constexpr std::size_t kHeaderSize = 348;
// The header, the 4-byte extension flag (all zero: no extensions), then the voxels.
constexpr std::size_t kWriteOffset = 352;

#define SV_NIFTI_OFFSET(field) offsetof(nifti_1_header, field)

// The types we read, by NIfTI datatype code.
struct StoredType {
  int code;
  std::size_t size;
  DType dtype;  // the DType reported for unscaled data: the stored type
  io::Scalar scalar;
};

constexpr StoredType kTypes[] = {
    {DT_UINT8, 1, DType::U8, io::Scalar::U8},     {DT_INT8, 1, DType::I8, io::Scalar::I8},
    {DT_INT16, 2, DType::I16, io::Scalar::I16},   {DT_UINT16, 2, DType::U16, io::Scalar::U16},
    {DT_INT32, 4, DType::I32, io::Scalar::I32},   {DT_UINT32, 4, DType::U32, io::Scalar::U32},
    {DT_FLOAT32, 4, DType::F32, io::Scalar::F32}, {DT_FLOAT64, 8, DType::F64, io::Scalar::F64},
};

const char* other_type_name(int code) {
  switch (code) {
    case DT_BINARY:
      return "binary";
    case DT_COMPLEX64:
      return "complex64";
    case DT_RGB24:
      return "RGB24";
    case DT_INT64:
      return "int64";
    case DT_UINT64:
      return "uint64";
    case DT_FLOAT128:
      return "float128";
    case DT_COMPLEX128:
      return "complex128";
    case DT_COMPLEX256:
      return "complex256";
    case DT_RGBA32:
      return "RGBA32";
    default:
      return nullptr;
  }
}

std::uint64_t load_uint(const unsigned char* p, std::size_t n, bool big_endian) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i)
    v |= static_cast<std::uint64_t>(p[i]) << (big_endian ? 8 * (n - 1 - i) : 8 * i);
  return v;
}

// Reads header fields in the file's byte order.
class HeaderView {
 public:
  HeaderView(const unsigned char* h, bool big_endian) : h_(h), be_(big_endian) {}
  std::int16_t i16(std::size_t off) const {
    return static_cast<std::int16_t>(static_cast<std::uint16_t>(load_uint(h_ + off, 2, be_)));
  }
  std::int32_t i32(std::size_t off) const {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(load_uint(h_ + off, 4, be_)));
  }
  double f32(std::size_t off) const {
    const auto u = static_cast<std::uint32_t>(load_uint(h_ + off, 4, be_));
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
  }
  const unsigned char* bytes(std::size_t off) const { return h_ + off; }

 private:
  const unsigned char* h_;
  bool be_;
};

// A file read through zlib: gzip data is inflated (concatenated members too), anything else is
// passed through unchanged. Opened through the input guard (regular files only, unless opted
// in; then every read is bounded by what the header claims).
class GzFile {
 public:
  explicit GzFile(const std::string& path) : path_(path) {
    io::InputFile in(path);
    regular_ = in.regular();
    size_ = in.size();
    const int fd = in.release_fd();
    f_ = gzdopen(fd, "rb");
    if (!f_) {
      ::close(fd);
      fail(path, "cannot open: out of memory");
    }
    gzbuffer(f_, 1u << 17);
  }
  ~GzFile() {
    if (f_) gzclose(f_);
  }
  GzFile(const GzFile&) = delete;
  GzFile& operator=(const GzFile&) = delete;

  // Reads up to n bytes; fewer only at the end of the (decompressed) data. Corrupt or cut-off
  // gzip data is an error.
  std::size_t read(unsigned char* dst, std::size_t n) {
    std::size_t got = 0;
    while (got < n) {
      const auto chunk = static_cast<unsigned>(std::min<std::size_t>(n - got, 1u << 30));
      const int r = gzread(f_, dst + got, chunk);
      if (r < 0) fail_zlib();
      got += static_cast<std::size_t>(r);
      if (static_cast<unsigned>(r) < chunk) {
        // gzread stops short at the end of the data, and also where a gzip stream is cut off
        // (reported through gzerror as Z_BUF_ERROR).
        int err = Z_OK;
        gzerror(f_, &err);
        if (err != Z_OK && err != Z_STREAM_END) fail_zlib();
        break;
      }
    }
    return got;
  }
  // Skips n bytes; false when the data ends first.
  bool skip(std::size_t n) { return skip_count(n) == n; }
  // Skips up to n bytes; returns how many there were.
  std::size_t skip_count(std::size_t n) {
    unsigned char buf[4096];
    std::size_t done = 0;
    while (done < n) {
      const std::size_t want = std::min(n - done, sizeof buf);
      const std::size_t got = read(buf, want);
      done += got;
      if (got < want) break;
    }
    return done;
  }
  // True when the file is not gzip data (meaningful after the first read).
  bool plain() const { return gzdirect(f_) != 0; }
  // A regular file (whose size is known), not an opted-in pipe or device.
  bool regular() const { return regular_; }
  // The size of the file on disk (compressed size for .nii.gz; 0 when not regular).
  std::size_t size_on_disk() const { return size_; }

 private:
  [[noreturn]] void fail_zlib() {
    int err = Z_OK;
    const char* msg = gzerror(f_, &err);
    if (err == Z_ERRNO) fail(path_, std::string("cannot read: ") + std::strerror(errno));
    if (err == Z_BUF_ERROR) fail(path_, "truncated gzip data (the compressed stream is cut off)");
    fail(path_, std::string("corrupt gzip data (zlib: ") + (msg && *msg ? msg : "error") + ")");
  }

  std::string path_;
  gzFile f_ = nullptr;
  bool regular_ = false;
  std::size_t size_ = 0;
};

// Positive finite spacing; anything else reads as 1 (as in NRRD).
double spacing_of(double pixdim) {
  const double s = std::fabs(pixdim);
  return std::isfinite(s) && s > 0 ? s : 1.0;
}

// The fields we use, from a NIfTI-1 (348-byte) or NIfTI-2 (540-byte) header.
struct Header {
  int version = 1;
  bool be = false;
  std::size_t size = 348;
  std::int64_t ndim = 0;
  std::int64_t dim[8] = {0, 1, 1, 1, 1, 1, 1, 1};
  int datatype = 0;
  double pixdim[8] = {0, 1, 1, 1, 1, 1, 1, 1};
  double vox_offset = 0;
  double scl_slope = 0, scl_inter = 0;
  int qform_code = 0, sform_code = 0;
  double quatern[3] = {0, 0, 0}, qoffset[3] = {0, 0, 0};
  double srow[3][4] = {};
  int xyzt_units = 0;
  // What the data mean (sv::NiftiIntent): read for load_nifti_vector.
  int intent_code = 0;
  double intent_p[3] = {0, 0, 0};
  std::string intent_name, descrip;
};

// A fixed-size character field up to its first NUL.
std::string text_field(const unsigned char* p, std::size_t n) {
  std::size_t len = 0;
  while (len < n && p[len] != 0) ++len;
  return std::string(reinterpret_cast<const char*>(p), len);
}

#define SV_NIFTI2_OFFSET(field) offsetof(nifti_2_header, field)
static_assert(sizeof(nifti_2_header) == 540, "nifti2.h: the NIfTI-2 header is 540 bytes");

// Reads the first 348 bytes already in `h` (and, for NIfTI-2, the rest through `read_more`,
// which returns how many of the bytes asked for it read).
Header parse_header(const std::string& path, unsigned char* h,
                    const std::function<std::size_t(unsigned char*, std::size_t)>& read_more) {
  Header out;
  // The byte order is the one in which sizeof_hdr reads 348 or 540.
  const auto size_le =
      static_cast<std::int32_t>(static_cast<std::uint32_t>(load_uint(h, 4, false)));
  const auto size_be = static_cast<std::int32_t>(static_cast<std::uint32_t>(load_uint(h, 4, true)));
  if (size_le == 348 || size_le == 540) {
    out.be = false;
  } else if (size_be == 348 || size_be == 540) {
    out.be = true;
  } else {
    fail(path, "not a NIfTI file (sizeof_hdr is " + std::to_string(size_le) +
                   ", expected 348 for NIfTI-1 or 540 for NIfTI-2)");
  }
  out.version = (out.be ? size_be : size_le) == 540 ? 2 : 1;
  const HeaderView hv(h, out.be);
  if (out.version == 1) {
    const unsigned char* magic = hv.bytes(SV_NIFTI_OFFSET(magic));
    if (std::memcmp(magic, "ni1", 4) == 0)
      fail(path,
           "is the header of a NIfTI-1 .hdr/.img pair (magic 'ni1'); only single .nii files "
           "are read");
    if (std::memcmp(magic, "n+1", 4) != 0)
      fail(path, "no NIfTI-1 magic 'n+1' at byte 344 (found " +
                     io::quote(std::string_view(reinterpret_cast<const char*>(magic), 4)) +
                     "; ANALYZE 7.5 files are not supported)");
    out.ndim = hv.i16(SV_NIFTI_OFFSET(dim));
    for (int i = 1; i <= 7; ++i)
      out.dim[i] = hv.i16(SV_NIFTI_OFFSET(dim) + 2 * static_cast<std::size_t>(i));
    out.datatype = hv.i16(SV_NIFTI_OFFSET(datatype));
    for (int i = 0; i <= 7; ++i)
      out.pixdim[i] = hv.f32(SV_NIFTI_OFFSET(pixdim) + 4 * static_cast<std::size_t>(i));
    out.vox_offset = hv.f32(SV_NIFTI_OFFSET(vox_offset));
    out.scl_slope = hv.f32(SV_NIFTI_OFFSET(scl_slope));
    out.scl_inter = hv.f32(SV_NIFTI_OFFSET(scl_inter));
    out.qform_code = hv.i16(SV_NIFTI_OFFSET(qform_code));
    out.sform_code = hv.i16(SV_NIFTI_OFFSET(sform_code));
    out.quatern[0] = hv.f32(SV_NIFTI_OFFSET(quatern_b));
    out.quatern[1] = hv.f32(SV_NIFTI_OFFSET(quatern_c));
    out.quatern[2] = hv.f32(SV_NIFTI_OFFSET(quatern_d));
    out.qoffset[0] = hv.f32(SV_NIFTI_OFFSET(qoffset_x));
    out.qoffset[1] = hv.f32(SV_NIFTI_OFFSET(qoffset_y));
    out.qoffset[2] = hv.f32(SV_NIFTI_OFFSET(qoffset_z));
    for (std::size_t c = 0; c < 4; ++c) {
      out.srow[0][c] = hv.f32(SV_NIFTI_OFFSET(srow_x) + 4 * c);
      out.srow[1][c] = hv.f32(SV_NIFTI_OFFSET(srow_y) + 4 * c);
      out.srow[2][c] = hv.f32(SV_NIFTI_OFFSET(srow_z) + 4 * c);
    }
    out.xyzt_units = h[SV_NIFTI_OFFSET(xyzt_units)];
    out.intent_code = hv.i16(SV_NIFTI_OFFSET(intent_code));
    out.intent_p[0] = hv.f32(SV_NIFTI_OFFSET(intent_p1));
    out.intent_p[1] = hv.f32(SV_NIFTI_OFFSET(intent_p2));
    out.intent_p[2] = hv.f32(SV_NIFTI_OFFSET(intent_p3));
    out.intent_name = text_field(h + SV_NIFTI_OFFSET(intent_name), 16);
    out.descrip = text_field(h + SV_NIFTI_OFFSET(descrip), 80);
    return out;
  }
  // NIfTI-2: read the remaining 192 header bytes.
  static_assert(kHeaderSize < 540, "");
  std::vector<unsigned char> full(540);
  std::memcpy(full.data(), h, kHeaderSize);
  const std::size_t more = read_more(full.data() + kHeaderSize, 540 - kHeaderSize);
  if (more < 540 - kHeaderSize)
    fail(path,
         "truncated: " + std::to_string(kHeaderSize + more) + " bytes, a NIfTI-2 header needs 540");
  out.size = 540;
  const HeaderView v(full.data(), out.be);
  const unsigned char* magic = v.bytes(SV_NIFTI2_OFFSET(magic));
  if (std::memcmp(magic, "ni2", 4) == 0)
    fail(path,
         "is the header of a NIfTI-2 .hdr/.img pair (magic 'ni2'); only single .nii files are "
         "read");
  if (std::memcmp(magic, "n+2", 4) != 0 || std::memcmp(magic + 4, "\r\n\032\n", 4) != 0)
    fail(path, "no NIfTI-2 magic 'n+2\\0\\r\\n\\032\\n' at byte 4 (found " +
                   io::quote(std::string_view(reinterpret_cast<const char*>(magic), 8)) + ")");
  auto i64 = [&](std::size_t off) {
    return static_cast<std::int64_t>(load_uint(full.data() + off, 8, out.be));
  };
  auto i32 = [&](std::size_t off) { return v.i32(off); };
  auto f64 = [&](std::size_t off) {
    const std::uint64_t u = load_uint(full.data() + off, 8, out.be);
    double d;
    std::memcpy(&d, &u, sizeof d);
    return d;
  };
  out.ndim = i64(SV_NIFTI2_OFFSET(dim));
  for (std::size_t i = 1; i <= 7; ++i) out.dim[i] = i64(SV_NIFTI2_OFFSET(dim) + 8 * i);
  out.datatype = v.i16(SV_NIFTI2_OFFSET(datatype));
  for (std::size_t i = 0; i <= 7; ++i) out.pixdim[i] = f64(SV_NIFTI2_OFFSET(pixdim) + 8 * i);
  const std::int64_t off = i64(SV_NIFTI2_OFFSET(vox_offset));
  out.vox_offset = static_cast<double>(off);
  out.scl_slope = f64(SV_NIFTI2_OFFSET(scl_slope));
  out.scl_inter = f64(SV_NIFTI2_OFFSET(scl_inter));
  out.qform_code = i32(SV_NIFTI2_OFFSET(qform_code));
  out.sform_code = i32(SV_NIFTI2_OFFSET(sform_code));
  out.quatern[0] = f64(SV_NIFTI2_OFFSET(quatern_b));
  out.quatern[1] = f64(SV_NIFTI2_OFFSET(quatern_c));
  out.quatern[2] = f64(SV_NIFTI2_OFFSET(quatern_d));
  out.qoffset[0] = f64(SV_NIFTI2_OFFSET(qoffset_x));
  out.qoffset[1] = f64(SV_NIFTI2_OFFSET(qoffset_y));
  out.qoffset[2] = f64(SV_NIFTI2_OFFSET(qoffset_z));
  for (std::size_t c = 0; c < 4; ++c) {
    out.srow[0][c] = f64(SV_NIFTI2_OFFSET(srow_x) + 8 * c);
    out.srow[1][c] = f64(SV_NIFTI2_OFFSET(srow_y) + 8 * c);
    out.srow[2][c] = f64(SV_NIFTI2_OFFSET(srow_z) + 8 * c);
  }
  out.xyzt_units = i32(SV_NIFTI2_OFFSET(xyzt_units));
  out.intent_code = i32(SV_NIFTI2_OFFSET(intent_code));
  out.intent_p[0] = f64(SV_NIFTI2_OFFSET(intent_p1));
  out.intent_p[1] = f64(SV_NIFTI2_OFFSET(intent_p2));
  out.intent_p[2] = f64(SV_NIFTI2_OFFSET(intent_p3));
  out.intent_name = text_field(full.data() + SV_NIFTI2_OFFSET(intent_name), 16);
  out.descrip = text_field(full.data() + SV_NIFTI2_OFFSET(descrip), 80);
  return out;
}

// Millimetres per spatial unit of xyzt_units (NIFTI_UNITS_METER 1, MM 2, MICRON 3; unknown 0
// is taken as mm, as most software does).
double unit_to_mm(int xyzt_units) {
  switch (xyzt_units & 0x07) {
    case 1:
      return 1000.0;
    case 3:
      return 0.001;
    default:
      return 1.0;
  }
}

// The index-to-world affine by the standard's precedence as nibabel applies it: the sform when
// sform_code > 0, else the qform (quaternion, pixdim, qfac = pixdim[0]) when qform_code > 0,
// else "method 1" (diag(pixdim), no orientation). RAS+ mm; `rank` spatial axes.
Geometry header_geometry(const std::string& path, const Header& hd) {
  const double mm = unit_to_mm(hd.xyzt_units);
  Geometry g;
  if (hd.sform_code > 0) {
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 4; ++c) g.affine[r][c] = hd.srow[r][c] * mm;
    g.source = "sform";
    return g;
  }
  if (hd.qform_code > 0) {
    double b = hd.quatern[0], c = hd.quatern[1], d = hd.quatern[2];
    if (!std::isfinite(b) || !std::isfinite(c) || !std::isfinite(d))
      fail(path, "the qform quaternion has a non-finite parameter");
    double a2 = 1.0 - (b * b + c * c + d * d);
    double a = 0;
    if (a2 < 1e-7) {  // the standard: a = 0, (b, c, d) renormalised (a 180-degree rotation)
      const double n = std::sqrt(b * b + c * c + d * d);
      if (!(n > 0)) fail(path, "the qform quaternion is zero");
      b /= n, c /= n, d /= n;
    } else {
      a = std::sqrt(a2);
    }
    const double R[3][3] = {
        {a * a + b * b - c * c - d * d, 2 * (b * c - a * d), 2 * (b * d + a * c)},
        {2 * (b * c + a * d), a * a + c * c - b * b - d * d, 2 * (c * d - a * b)},
        {2 * (b * d - a * c), 2 * (c * d + a * b), a * a + d * d - c * c - b * b}};
    const double qfac = hd.pixdim[0] < 0 ? -1.0 : 1.0;
    const double sx = spacing_of(hd.pixdim[1]), sy = spacing_of(hd.pixdim[2]),
                 sz = spacing_of(hd.pixdim[3]) * qfac;
    for (int r = 0; r < 3; ++r) {
      g.affine[r][0] = R[r][0] * sx * mm;
      g.affine[r][1] = R[r][1] * sy * mm;
      g.affine[r][2] = R[r][2] * sz * mm;
      g.affine[r][3] = hd.qoffset[r] * mm;
    }
    g.source = "qform";
    return g;
  }
  for (int i = 0; i < 3; ++i) g.affine[i][i] = spacing_of(hd.pixdim[i + 1]) * mm;
  return g;  // unoriented
}

// What a header declares, checked as load_nifti checks it: everything before the voxels.
struct Layout {
  std::size_t rank = 0;
  std::vector<std::size_t> dims;  // array order (z, y, x)
  std::size_t volumes = 1, vol = 0;
  const StoredType* type = nullptr;
  std::size_t offset = 0;  // vox_offset
  std::size_t n = 0;       // values per volume (a vector image: voxels x components)
  std::size_t vol_bytes = 0, data_bytes = 0, total = 0;
  std::size_t components = 1;  // a vector image's dim[5]; 1 otherwise
};

// `vector`: the file is read as a vector image (load_nifti_vector): dim[0] 5 to 7, dim[4] = 1,
// dim[5] the components (2 to 4), dim[6..7] = 1; rank 3, one "volume" holding every component.
// Otherwise (load_nifti, probe_nifti): 1 to 4 axes, one volume of a 4-D file by `volume`.
Layout nifti_layout(const std::string& path, const Header& hd, long volume, bool vector = false) {
  if (hd.ndim < 1 || hd.ndim > 7)
    fail(path, "dim[0] is " + std::to_string(hd.ndim) + ", expected 1 to 7");
  const int ndim = static_cast<int>(hd.ndim);
  // NIfTI-1 stores sizes as int16; NIfTI-2 as int64 (limited here to 2^31 per axis).
  std::size_t dim[8] = {0, 1, 1, 1, 1, 1, 1, 1};
  for (int i = 1; i <= ndim; ++i) {
    const std::int64_t d = hd.dim[i];
    if (d < 1)
      fail(path,
           "dim[" + std::to_string(i) + "] is " + std::to_string(d) + " (sizes must be positive)");
    if (d > 2147483647)
      fail(path, "dim[" + std::to_string(i) + "] is " + std::to_string(d) +
                     " (more than 2^31 - 1 samples per axis)");
    dim[i] = static_cast<std::size_t>(d);
  }
  std::size_t components = 1;
  if (vector) {
    if (ndim < 5)
      fail(path, "is " + std::to_string(ndim) +
                     "-D, not a vector image (dim[0] = 5 with the components along dim[5])");
    for (int i = 6; i <= ndim; ++i)
      if (dim[i] != 1)
        fail(path, "dim[" + std::to_string(i) + "] is " + std::to_string(dim[i]) +
                       "; a vector image has dim[6] = dim[7] = 1");
    if (dim[4] != 1)
      fail(path, "dim[4] is " + std::to_string(dim[4]) +
                     "; a vector image has one time point (dim[4] = 1)");
    if (dim[5] < 2 || dim[5] > 4)
      fail(path, "has " + std::to_string(dim[5]) +
                     (dim[5] == 1 ? " vector component" : " vector components") +
                     " (dim[5]); 2 to 4 are read (a file with dim[5] = 1 is an image)");
    components = dim[5];
  } else {
    for (int i = 5; i <= ndim; ++i)
      if (dim[i] != 1)
        fail(path, "is " + std::to_string(ndim) + "-D (dim[" + std::to_string(i) +
                       "] = " + std::to_string(dim[i]) +
                       "); only 1 to 4 axes are read, axes 5 to 7 must have size 1 (5-D vector "
                       "images such as NiftyReg control-point grids are read by splinetool ffd "
                       "and warp with --reference)");
  }
  const std::size_t volumes = !vector && ndim >= 4 ? dim[4] : 1;
  if (volume < 0 && volumes > 1)
    fail(path, "is 4-D with " + std::to_string(volumes) +
                   " volumes; choose one with --volume INDEX (0 to " + std::to_string(volumes - 1) +
                   ")");
  const std::size_t vol = volume < 0 ? 0 : static_cast<std::size_t>(volume);
  if (vol >= volumes)
    fail(path, "volume index " + std::to_string(volume) + " is out of range: the file holds " +
                   std::to_string(volumes) + (volumes == 1 ? " volume" : " volumes"));
  const std::size_t rank = vector ? 3 : static_cast<std::size_t>(ndim < 3 ? ndim : 3);

  const int code = hd.datatype;
  const StoredType* type = nullptr;
  for (const StoredType& t : kTypes)
    if (t.code == code) type = &t;
  if (!type) {
    const char* name = other_type_name(code);
    fail(path, "NIfTI datatype code " + std::to_string(code) +
                   (name ? " (" + std::string(name) + ")" : std::string(" (unknown)")) +
                   " is not supported; readable: uint8, int8, int16, uint16, int32, uint32, "
                   "float32, float64");
  }

  const double vox_offset = hd.vox_offset;
  // The standard asks for 352 (NIfTI-2: 544) or more in a .nii; the bare header size is
  // accepted too.
  if (!(vox_offset >= static_cast<double>(hd.size)) || vox_offset > 2147483647.0 ||
      vox_offset != std::floor(vox_offset))
    fail(path, "vox_offset " + format_number(vox_offset) + " is not a whole number of bytes from " +
                   std::to_string(hd.size) + " on");
  const auto offset = static_cast<std::size_t>(vox_offset);

  // One volume is n voxels (vol_bytes); the file holds `volumes` of them.
  std::size_t n = 1, vol_bytes = 0, data_bytes = 0, total = 0;
  for (std::size_t i = 1; i <= rank; ++i)
    if (!io::checked_mul(n, dim[i], &n)) fail(path, "the declared size overflows");
  if (!io::checked_mul(n, components, &n)) fail(path, "the declared size overflows");
  if (!io::checked_mul(n, type->size, &vol_bytes) ||
      !io::checked_mul(vol_bytes, volumes, &data_bytes) || data_bytes > SIZE_MAX - offset)
    fail(path, "the declared size overflows");
  total = offset + data_bytes;

  std::vector<std::size_t> dims;
  for (std::size_t k = 0; k < rank; ++k) dims.push_back(dim[rank - k]);
  return Layout{rank, dims,      volumes,    vol,   type,      offset,
                n,    vol_bytes, data_bytes, total, components};
}

// A plain (uncompressed) regular file must be exactly as long as its header declares.
void check_plain_size(const std::string& path, const Layout& L, std::size_t size_on_disk) {
  if (size_on_disk < L.total)
    fail(path, "truncated: the header declares " + std::to_string(L.total) + " bytes (" +
                   std::to_string(L.offset) + " before the voxels, " +
                   std::to_string(L.data_bytes) + " of voxels), the file holds " +
                   std::to_string(size_on_disk));
  if (size_on_disk > L.total)
    fail(path, std::to_string(size_on_disk - L.total) +
                   " bytes after the voxel data (the header declares " + std::to_string(L.total) +
                   " bytes in all)");
}

// NIfTI: "if scl_slope is nonzero, each voxel value is scaled as y = scl_slope * x +
// scl_inter". A NaN or infinite slope means no scaling as well (as nibabel reads it). True when
// the values change (then dtype is F64).
bool nifti_scaling(const Header& hd, double* slope, double* inter) {
  *slope = hd.scl_slope;
  *inter = hd.scl_inter;
  if (!std::isfinite(*inter)) *inter = 0;
  return std::isfinite(*slope) && *slope != 0 && (*slope != 1 || *inter != 0);
}

// The geometry (and, unoriented, the spacing) load_nifti reports before finish_loaded.
void nifti_geometry(const std::string& path, const Header& hd, std::size_t rank,
                    std::vector<double>* spacing, Geometry* geometry) {
  *geometry = header_geometry(path, hd);  // finish_loaded derives the spacing
  if (!geometry->oriented())
    for (std::size_t k = 0; k < rank; ++k)
      spacing->push_back(geometry->affine[rank - 1 - k][rank - 1 - k]);
}

// Reads the file (one volume of it, or with `vector` the whole vector image); `header`, when
// not null, receives the parsed header.
Loaded read_nifti(const std::string& path, long volume, bool vector = false,
                  Header* header = nullptr) {
  GzFile file(path);
  unsigned char h[kHeaderSize];
  const std::size_t got = file.read(h, kHeaderSize);
  if (got < kHeaderSize)
    fail(path, "truncated: " + std::to_string(got) + " bytes, a NIfTI-1 header needs " +
                   std::to_string(kHeaderSize));
  const Header hd =
      parse_header(path, h, [&](unsigned char* dst, std::size_t n) { return file.read(dst, n); });
  const Layout L = nifti_layout(path, hd, volume, vector);
  const std::size_t offset = L.offset, n = L.n, vol_bytes = L.vol_bytes, vol = L.vol,
                    data_bytes = L.data_bytes, total = L.total;

  // Before allocating what the header claims: a plain file must be exactly that long; gzip data
  // cannot expand more than about 1032:1. (A pipe or device, when opted in, is read only as far
  // as the header claims.)
  if (!file.regular()) {
    // checked as it is read
  } else if (file.plain()) {
    check_plain_size(path, L, file.size_on_disk());
  } else if (total / 1032 > file.size_on_disk() + 64) {
    fail(path, "truncated: " + std::to_string(file.size_on_disk()) +
                   " bytes of gzip data cannot hold the " + std::to_string(total) +
                   " bytes the header declares");
  }

  if (!file.skip(offset - hd.size))
    fail(path, "truncated: the data ends before vox_offset " + std::to_string(offset));
  // Voxel bytes present, for the message when some are missing.
  std::size_t held = file.skip_count(vol * vol_bytes);
  auto truncated = [&]() {
    fail(path, "truncated: the voxel data needs " + std::to_string(data_bytes) +
                   " bytes, the file holds " + std::to_string(held));
  };
  if (held < vol * vol_bytes) truncated();
  // A plain regular file holds every claimed byte (checked above): one allocation. Compressed
  // or non-regular data grows its buffer with what arrives (doubling from 1 MiB, capped at the
  // claim), so a small .nii.gz claiming gigabytes fails as truncated having allocated about what
  // it held.
  std::vector<unsigned char> raw;
  std::size_t have = 0;
  if (file.plain() && file.regular()) {
    raw.resize(vol_bytes);
    have = file.read(raw.data(), vol_bytes);
  } else {
    raw.resize(std::min<std::size_t>(vol_bytes, std::size_t{1} << 20));
    for (;;) {
      const std::size_t want = raw.size() - have;
      const std::size_t arrived = file.read(raw.data() + have, want);
      have += arrived;
      if (arrived < want || have == vol_bytes) break;
      raw.resize(raw.size() > vol_bytes / 2 ? vol_bytes : 2 * raw.size());
    }
  }
  held += have;
  if (have < vol_bytes) truncated();
  // The volumes after this one must be there too (a cut-off file is damaged whichever volume
  // is asked for).
  const std::size_t after = data_bytes - (vol + 1) * vol_bytes;
  held += file.skip_count(after);
  if (held < data_bytes) truncated();
  unsigned char extra;
  if (file.read(&extra, 1) != 0)
    fail(path,
         "data after the voxels (the header declares " + std::to_string(total) + " bytes in all)");

  Loaded out;
  nifti_geometry(path, hd, L.rank, &out.spacing, &out.geometry);
  out.dtype = L.type->dtype;
  if (vector) {
    // The components are whole volumes one after another (dim[5] varies slowest); the array
    // interleaves them.
    out.array = ArrayD(L.dims, L.components);
    out.channel_axis = true;
    std::vector<double> planes(n);
    io::decode_values(raw.data(), n, L.type->scalar, hd.be, planes.data());
    const std::size_t points = n / L.components;
    double* dst = out.array.data();
    for (std::size_t c = 0; c < L.components; ++c)
      for (std::size_t p = 0; p < points; ++p) dst[p * L.components + c] = planes[c * points + p];
  } else {
    out.array = ArrayD(L.dims, 1);
    io::decode_values(raw.data(), n, L.type->scalar, hd.be, out.array.data());
  }
  if (header) *header = hd;
  double slope = 1, inter = 0;
  if (nifti_scaling(hd, &slope, &inter)) {
    for (double& v : out.array.vec()) v = v * slope + inter;
    out.dtype = DType::F64;
  }
  return out;
}

void put(unsigned char* h, std::size_t off, std::uint64_t v, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    h[off + i] = static_cast<unsigned char>((v >> (8 * i)) & 0xffu);
}
void put_i16(unsigned char* h, std::size_t off, int v) {
  put(h, off, static_cast<std::uint16_t>(static_cast<std::int16_t>(v)), 2);
}
void put_f32(unsigned char* h, std::size_t off, double v) {
  const float f = io::to_f32(v);
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  put(h, off, u, 4);
}

std::vector<unsigned char> gzip(const std::string& path, const std::vector<unsigned char>& src) {
  z_stream zs;
  std::memset(&zs, 0, sizeof zs);
  // windowBits 15 + 16: a gzip wrapper, as .gz readers expect.
  if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    fail(path, "cannot initialise zlib");
  std::vector<unsigned char> out;
  unsigned char buf[1 << 16];
  std::size_t pos = 0;
  int rc = Z_OK;
  do {
    const std::size_t chunk = std::min<std::size_t>(src.size() - pos, 1u << 30);
    zs.next_in = const_cast<unsigned char*>(src.data() + pos);
    zs.avail_in = static_cast<uInt>(chunk);
    pos += chunk;
    const int flush = pos == src.size() ? Z_FINISH : Z_NO_FLUSH;
    do {
      zs.next_out = buf;
      zs.avail_out = sizeof buf;
      rc = deflate(&zs, flush);
      if (rc == Z_STREAM_ERROR) {
        deflateEnd(&zs);
        fail(path, "zlib compression failed");
      }
      out.insert(out.end(), buf, buf + (sizeof buf - zs.avail_out));
    } while (zs.avail_out == 0);
  } while (rc != Z_STREAM_END);
  deflateEnd(&zs);
  return out;
}

// The qform parameters of a direction matrix (columns of unit length): the quaternion
// (b, c, d) with a >= 0 and qfac, when the directions are orthonormal (within 1e-4); false
// otherwise (sheared or skewed: only the sform can hold it).
bool qform_of(double R[3][3], double q[3], double* qfac) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double dot = 0;
      for (int r = 0; r < 3; ++r) dot += R[r][i] * R[r][j];
      if (std::fabs(dot - (i == j ? 1.0 : 0.0)) > 1e-4) return false;
    }
  const double det = R[0][0] * (R[1][1] * R[2][2] - R[1][2] * R[2][1]) -
                     R[0][1] * (R[1][0] * R[2][2] - R[1][2] * R[2][0]) +
                     R[0][2] * (R[1][0] * R[2][1] - R[1][1] * R[2][0]);
  *qfac = det < 0 ? -1.0 : 1.0;
  if (det < 0)
    for (int r = 0; r < 3; ++r) R[r][2] = -R[r][2];
  // A proper rotation's quaternion, from its largest diagonal combination (numerically stable).
  const double tr = R[0][0] + R[1][1] + R[2][2];
  double a, b, c, d;
  if (tr > 0) {
    const double s = 2 * std::sqrt(tr + 1);
    a = 0.25 * s, b = (R[2][1] - R[1][2]) / s, c = (R[0][2] - R[2][0]) / s,
    d = (R[1][0] - R[0][1]) / s;
  } else if (R[0][0] > R[1][1] && R[0][0] > R[2][2]) {
    const double s = 2 * std::sqrt(1 + R[0][0] - R[1][1] - R[2][2]);
    a = (R[2][1] - R[1][2]) / s, b = 0.25 * s, c = (R[0][1] + R[1][0]) / s,
    d = (R[0][2] + R[2][0]) / s;
  } else if (R[1][1] > R[2][2]) {
    const double s = 2 * std::sqrt(1 + R[1][1] - R[0][0] - R[2][2]);
    a = (R[0][2] - R[2][0]) / s, b = (R[0][1] + R[1][0]) / s, c = 0.25 * s,
    d = (R[1][2] + R[2][1]) / s;
  } else {
    const double s = 2 * std::sqrt(1 + R[2][2] - R[0][0] - R[1][1]);
    a = (R[1][0] - R[0][1]) / s, b = (R[0][2] + R[2][0]) / s, c = (R[1][2] + R[2][1]) / s,
    d = 0.25 * s;
  }
  if (a < 0) b = -b, c = -c, d = -d;
  q[0] = b, q[1] = c, q[2] = d;
  return true;
}

// The 352 bytes write_nifti puts before the voxels of an array of `dims` (one channel), or,
// with `intent`, before the components of a vector image (save_nifti_vector: dim[0] = 5,
// dim[4] = 1, dim[5] = channels, the intent fields and descrip set).
std::vector<unsigned char> nifti_header(const std::string& path,
                                        const std::vector<std::size_t>& dims, std::size_t channels,
                                        DType dtype, const Geometry& g,
                                        const NiftiIntent* intent = nullptr) {
  const std::size_t rank = dims.size();
  if (channels != 1 && !intent)
    fail(path, "NIfTI output takes one channel; the array has " + std::to_string(channels));
  if (intent && channels < 2)
    fail(path, "a NIfTI vector image has 2 to 4 components; the array has one channel");
  for (std::size_t k = 0; k < rank; ++k)
    if (dims[k] > 32767)
      fail(path, "NIfTI-1 holds at most 32767 samples per axis; axis " + std::to_string(k) +
                     " has " + std::to_string(dims[k]));
  try {
    check_geometry(g, rank, "the geometry to write");
  } catch (const Error& e) {
    fail(path, e.what());
  }
  // Index axes beyond the rank: whatever the geometry holds, but never a zero column.
  double cols[3] = {0, 0, 0};
  for (int c = 0; c < 3; ++c) {
    for (int r = 0; r < 3; ++r) cols[c] += g.affine[r][c] * g.affine[r][c];
    cols[c] = std::sqrt(cols[c]);
  }
  for (std::size_t c = 0; c < rank; ++c)
    if (!std::isfinite(io::to_f32(cols[c])) || !(io::to_f32(cols[c]) > 0))
      fail(path, "spacing " + format_number(cols[c]) + " is not a positive float32 value");

  int code = DT_FLOAT64;
  switch (dtype) {
    case DType::Bool:  // 0/1 bytes
    case DType::U8:
      code = DT_UINT8;
      break;
    case DType::U16:
      code = DT_UINT16;
      break;
    case DType::I8:
      code = DT_INT8;
      break;
    case DType::I16:
      code = DT_INT16;
      break;
    case DType::I32:
      code = DT_INT32;
      break;
    case DType::U32:
      code = DT_UINT32;
      break;
    case DType::F32:
      code = DT_FLOAT32;
      break;
    case DType::F64:
      code = DT_FLOAT64;
      break;
    case DType::I64:
    case DType::U64:
    case DType::F16:  // load_nifti does not read these back (NIfTI-1 has no float16)
      fail(path, std::string("cannot save ") + dtype_name(dtype) +
                     " as NIfTI-1 (uint8, int8, uint16, int16, int32, uint32, float32 and "
                     "float64 are written; save as float64 or .npy)");
  }
  const std::size_t size = io::scalar_size(io::scalar_of(dtype));

  std::vector<unsigned char> bytes(kWriteOffset, 0);
  unsigned char* h = bytes.data();
  put(h, SV_NIFTI_OFFSET(sizeof_hdr), 348, 4);
  put_i16(h, SV_NIFTI_OFFSET(dim), intent ? 5 : static_cast<int>(rank));
  for (std::size_t i = 1; i <= 7; ++i)
    put_i16(h, SV_NIFTI_OFFSET(dim) + 2 * i, i <= rank ? static_cast<int>(dims[rank - i]) : 1);
  if (intent) {
    put_i16(h, SV_NIFTI_OFFSET(dim) + 2 * 5, static_cast<int>(channels));
    put_i16(h, SV_NIFTI_OFFSET(intent_code), intent->code);
    put_f32(h, SV_NIFTI_OFFSET(intent_p1), intent->p1);
    put_f32(h, SV_NIFTI_OFFSET(intent_p2), intent->p2);
    put_f32(h, SV_NIFTI_OFFSET(intent_p3), intent->p3);
    // Text fields keep a terminating NUL (15 and 79 characters at most).
    std::memcpy(h + SV_NIFTI_OFFSET(intent_name), intent->name.data(),
                std::min<std::size_t>(intent->name.size(), 15));
    std::memcpy(h + SV_NIFTI_OFFSET(descrip), intent->descrip.data(),
                std::min<std::size_t>(intent->descrip.size(), 79));
  }
  put_i16(h, SV_NIFTI_OFFSET(datatype), code);
  put_i16(h, SV_NIFTI_OFFSET(bitpix), static_cast<int>(8 * size));
  for (std::size_t i = 1; i <= 7; ++i)
    put_f32(h, SV_NIFTI_OFFSET(pixdim) + 4 * i,
            i <= 3 && (i <= rank || cols[i - 1] > 0) ? cols[i - 1] : 1.0);
  double qfac = 1.0;
  if (g.oriented()) {
    // Both transforms, code 1 (scanner-based anatomical): the sform exactly as given (as
    // float32), the qform too when the directions are orthonormal.
    h[SV_NIFTI_OFFSET(xyzt_units)] = NIFTI_UNITS_MM;
    put_i16(h, SV_NIFTI_OFFSET(sform_code), NIFTI_XFORM_SCANNER_ANAT);
    for (std::size_t c = 0; c < 4; ++c) {
      put_f32(h, SV_NIFTI_OFFSET(srow_x) + 4 * c, g.affine[0][c]);
      put_f32(h, SV_NIFTI_OFFSET(srow_y) + 4 * c, g.affine[1][c]);
      put_f32(h, SV_NIFTI_OFFSET(srow_z) + 4 * c, g.affine[2][c]);
    }
    double R[3][3];
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) R[r][c] = cols[c] > 0 ? g.affine[r][c] / cols[c] : 0.0;
    double q[3];
    if (qform_of(R, q, &qfac)) {
      put_i16(h, SV_NIFTI_OFFSET(qform_code), NIFTI_XFORM_SCANNER_ANAT);
      put_f32(h, SV_NIFTI_OFFSET(quatern_b), q[0]);
      put_f32(h, SV_NIFTI_OFFSET(quatern_c), q[1]);
      put_f32(h, SV_NIFTI_OFFSET(quatern_d), q[2]);
      put_f32(h, SV_NIFTI_OFFSET(qoffset_x), g.affine[0][3]);
      put_f32(h, SV_NIFTI_OFFSET(qoffset_y), g.affine[1][3]);
      put_f32(h, SV_NIFTI_OFFSET(qoffset_z), g.affine[2][3]);
    }
  }
  put_f32(h, SV_NIFTI_OFFSET(pixdim), qfac);
  put_f32(h, SV_NIFTI_OFFSET(vox_offset), static_cast<double>(kWriteOffset));
  put_f32(h, SV_NIFTI_OFFSET(scl_slope), 1.0);
  std::memcpy(h + SV_NIFTI_OFFSET(magic), "n+1", 4);
  return bytes;
}

void write_nifti(const std::string& path, const ArrayD& a, DType dtype, const Geometry& g,
                 const NiftiIntent* intent = nullptr) {
  std::vector<unsigned char> bytes = nifti_header(path, a.dims(), a.channels(), dtype, g, intent);
  const io::Scalar scalar = io::scalar_of(dtype);
  const std::size_t size = io::scalar_size(scalar);
  bytes.resize(kWriteOffset + a.size() * size);
  if (a.channels() == 1) {
    io::encode_values(a.data(), a.size(), scalar, bytes.data() + kWriteOffset);
  } else {
    // A vector image stores its components one whole volume after another.
    const std::size_t points = a.points(), channels = a.channels();
    std::vector<double> plane(points);
    for (std::size_t c = 0; c < channels; ++c) {
      for (std::size_t p = 0; p < points; ++p) plane[p] = a.data()[p * channels + c];
      io::encode_values(plane.data(), points, scalar,
                        bytes.data() + kWriteOffset + c * points * size);
    }
  }

  if (io::lower_extension(path) == ".gz")
    io::write_file_atomic(path, gzip(path, bytes));
  else
    io::write_file_atomic(path, bytes);
}

}  // namespace

Loaded load_nifti(const std::string& path) {
  return io::guard_memory(
      path, [&] { return io::finish_loaded(path, read_nifti(path, input_options().volume)); });
}

void save_nifti(const std::string& path, const ArrayD& a, DType dtype,
                const std::vector<double>& spacing) {
  io::guard_memory(path, [&] {
    if (!spacing.empty() && spacing.size() != a.rank())
      fail(path, "spacing has " + std::to_string(spacing.size()) + " values for a " +
                     std::to_string(a.rank()) + "-D array");
    Geometry g;
    try {
      g = geometry_from_spacing(spacing.empty() ? std::vector<double>(a.rank(), 1.0) : spacing);
    } catch (const Error& e) {
      fail(path, e.what());
    }
    write_nifti(path, a, dtype, g);
  });
}

void save_nifti(const std::string& path, const ArrayD& a, DType dtype, const Geometry& geometry) {
  io::guard_memory(path, [&] { write_nifti(path, a, dtype, geometry); });
}

NiftiVector load_nifti_vector(const std::string& path) {
  return io::guard_memory(path, [&] {
    Header hd;
    NiftiVector out;
    out.image = io::finish_loaded(path, read_nifti(path, -1, true, &hd));
    out.intent.code = hd.intent_code;
    out.intent.p1 = hd.intent_p[0];
    out.intent.p2 = hd.intent_p[1];
    out.intent.p3 = hd.intent_p[2];
    out.intent.name = hd.intent_name;
    out.intent.descrip = hd.descrip;
    out.unit_mm = unit_to_mm(hd.xyzt_units);
    return out;
  });
}

void save_nifti_vector(const std::string& path, const ArrayD& a, DType dtype,
                       const Geometry& geometry, const NiftiIntent& intent) {
  io::guard_memory(path, [&] { write_nifti(path, a, dtype, geometry, &intent); });
}

namespace io {

DataLayout probe_nifti(const std::string& path, long volume) {
  return guard_memory(path, [&] {
    DataLayout out;
    InputFile in(path);
    std::vector<unsigned char> bytes;
    in.read_append(bytes, kHeaderSize);
    // What zlib (the loader's GzFile) takes for gzip data: the gzip signature.
    if (bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b) {
      out.not_mappable = "it is gzip-compressed (.nii.gz)";
      return out;
    }
    if (bytes.size() < kHeaderSize)
      fail(path, "truncated: " + std::to_string(bytes.size()) + " bytes, a NIfTI-1 header needs " +
                     std::to_string(kHeaderSize));
    const Header hd = parse_header(path, bytes.data(), [&](unsigned char* dst, std::size_t n) {
      std::vector<unsigned char> more;
      const std::size_t got = in.read_append(more, n);
      if (got) std::memcpy(dst, more.data(), got);
      return got;
    });
    const Layout L = nifti_layout(path, hd, volume);
    check_plain_size(path, L, in.size());
    out.dims = L.dims;
    out.dtype = L.type->dtype;
    out.scalar = L.type->scalar;
    out.big_endian = hd.be;
    out.scaled = nifti_scaling(hd, &out.slope, &out.inter);
    if (out.scaled) out.dtype = DType::F64;
    out.data_path = out.error_path = path;
    out.data_offset = L.offset + L.vol * L.vol_bytes;
    out.data_bytes = L.vol_bytes;
    nifti_geometry(path, hd, L.rank, &out.spacing, &out.geometry);
    finish_geometry(path, L.rank, &out.spacing, &out.geometry);
    return out;
  });
}

std::vector<unsigned char> nifti_header_bytes(const std::string& path,
                                              const std::vector<std::size_t>& dims,
                                              std::size_t channels, DType dtype,
                                              const Geometry& geometry) {
  return nifti_header(path, dims, channels, dtype, geometry);
}

}  // namespace io

}  // namespace sv
