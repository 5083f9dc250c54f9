// Internal: where a file keeps its samples, from its header alone. Each format module parses
// the header with the very code its loader uses (same checks, same messages, same geometry) and
// stops before the samples are read; lib/src/mapped.cpp maps what these describe. The header
// writers that the savers use are shared here too, so that a mapped output gets the bytes a
// saver would write.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "io_common.h"
#include "splineview/geometry.h"
#include "splineview/io.h"

namespace sv::io {

struct DataLayout {
  std::vector<std::size_t> dims;  // spatial, array order (z, y, x)
  std::size_t channels = 1;
  bool channel_axis = false;
  DType dtype = DType::F64;    // what the loader reports in Loaded::dtype
  Scalar scalar = Scalar::U8;  // what the file stores
  bool big_endian = false;
  bool fortran_order = false;  // .npy: the first axis varies fastest
  // NIfTI's scl_slope / scl_inter as the loader applies them (value = stored * slope + inter,
  // in double), when `scaled`.
  bool scaled = false;
  double slope = 1, inter = 0;
  std::string data_path;        // the file that holds the samples (the header's, or a detached one)
  std::size_t data_offset = 0;  // bytes before the first sample there
  std::size_t data_bytes = 0;   // bytes of samples (checked against the file's size)
  // Messages about the samples (an inexact int64) read "<error_path>: <error_prefix>...".
  std::string error_path, error_prefix;
  // As finish_loaded leaves them.
  std::vector<double> spacing;
  Geometry geometry;
  // Non-empty: the samples cannot be mapped (compressed or text data, a pipe), and why, as a
  // sentence without the path; nothing below `channel_axis` is meaningful then.
  std::string not_mappable;
};

// Each reads no more than the header (a bounded prefix of the file) and looks at the sizes of
// the files on disk; a header the loader would refuse is refused with the loader's sv::Error.
// Except probe_raw (which checks its spec first, as load_raw does), they open `path` at once:
// call them for regular files only (check_regular), never for a FIFO.
DataLayout probe_npy(const std::string& path, bool channel_axis);
DataLayout probe_nrrd(const std::string& path);
DataLayout probe_nifti(const std::string& path, long volume);
DataLayout probe_raw(const std::string& path, const RawSpec& spec, bool channel_axis);
// TIFF (libtiff reads the directories, never a sample): mapped when the samples lie in the file
// as one C-order array (uncompressed, interleaved strips, each page's strips and the pages one
// after another); else not_mappable says what stands in the way. No limit on the number of
// values (the loader's, for memory, does not apply).
DataLayout probe_tiff(const std::string& path);

// The header bytes the savers write for an array of `dims` (array order, non-empty) with
// `channels` (stored with a channel axis when channel_axis or channels > 1), stored as `dtype`:
// .npy (save_npy); NIfTI-1 (save_nifti: the 352 bytes before the voxels); NRRD (save_nrrd with
// `geometry`, whose column lengths give the spacing as save_any passes it), with "encoding:
// <encoding>" ("gzip" as save_nrrd writes, or "raw"), up to and including the blank line that
// ends an attached header. Each checks what its saver checks and fails naming `path`.
std::vector<unsigned char> npy_header_bytes(const std::string& path,
                                            const std::vector<std::size_t>& dims,
                                            std::size_t channels, bool channel_axis, DType dtype);
std::vector<unsigned char> nifti_header_bytes(const std::string& path,
                                              const std::vector<std::size_t>& dims,
                                              std::size_t channels, DType dtype,
                                              const Geometry& geometry);
std::string nrrd_header_text(const std::string& path, const std::vector<std::size_t>& dims,
                             std::size_t channels, bool channel_axis, DType dtype,
                             const Geometry& geometry, const char* encoding);

}  // namespace sv::io
