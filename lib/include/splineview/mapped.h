// Memory-mapped volume files: reading arrays larger than RAM a few slices at a time, and
// writing results straight into their file (splinetool's --out-of-core).
//
// Input: open_mapped() reads a file's header with the parser its loader uses (io.h: the same
// checks and messages, and the same dims, dtype, spacing and geometry as sv::Loaded), checks
// that the file holds exactly the samples the header declares, and maps the file read-only.
// read_slices() converts any stored type and byte order to float or double with the loader's
// value conversions (NIfTI scl_slope/scl_inter, bool as 0/1, float16 exactly, int64/uint64 that
// a double cannot hold refused with the loader's message), so the values are the loader's
// exactly. Mapped: .npy (every numeric dtype, either byte order, C or Fortran order), NRRD with
// raw encoding (.nrrd with attached data, .nhdr with one detached data file), uncompressed
// NIfTI-1/2 (.nii; one volume of a 4-D file by sv::InputOptions::volume), headerless raw data
// with a RawSpec, and uncompressed TIFF stacks stored as one C-order array (interleaved samples,
// strips and pages one after another). Not mapped (sv::NotMappable, one sentence naming the file
// and why, so that the caller can read it with load_any instead): gzip or ascii NRRD data,
// .nii.gz, compressed, tiled or otherwise scattered TIFF, images,
// DICOM, folders and globs of slices, pipes and devices. Work is bounded by the file's real size:
// a header that claims more (or fewer) samples than the file holds is refused (sv::Error naming
// the file) before anything is mapped.
//
// Output: create_mapped_output() writes the header that save_any writes for a float32 array
// (shared code: .npy byte for byte; NIfTI-1 byte for byte; NRRD the same fields with "encoding:
// raw" and a comment line that pads the header to a multiple of 64 bytes), reserves the file's
// full size on disk (so a full disk is an error now, never a signal later) and maps the samples
// read-write. It writes "<OUT>.tmp-<pid>-<n>" beside OUT, registered with sv::TempFileGuard, and
// renames it over OUT in commit(): an exception, an early return or a terminating signal before
// commit() leaves no temporary and OUT as it was.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "splineview/array.h"
#include "splineview/error.h"
#include "splineview/finite.h"
#include "splineview/geometry.h"
#include "splineview/io.h"

namespace sv {

// The file is valid as far as its header goes but its samples cannot be mapped; what() is one
// sentence: "<path>: cannot be mapped: it is gzip-compressed (.nii.gz)".
class NotMappable : public Error {
 public:
  explicit NotMappable(const std::string& what) : Error(what) {}
};

class MappedVolume {
 public:
  MappedVolume();
  ~MappedVolume();
  MappedVolume(MappedVolume&&) noexcept;
  MappedVolume& operator=(MappedVolume&&) noexcept;
  MappedVolume(const MappedVolume&) = delete;
  MappedVolume& operator=(const MappedVolume&) = delete;

  const std::string& path() const;
  const std::vector<std::size_t>& dims() const;  // spatial, array order (z, y, x)
  std::size_t rank() const { return dims().size(); }
  std::size_t channels() const;
  bool channel_axis() const;                   // as Loaded::channel_axis
  DType dtype() const;                         // as Loaded::dtype
  const std::vector<double>& spacing() const;  // as Loaded::spacing
  const Geometry& geometry() const;            // as Loaded::geometry
  std::size_t slices() const { return dims()[0]; }
  std::size_t slice_values() const;  // scalars per slice along axis 0 (channels included)
  std::size_t size() const;          // scalars in all

  // How the samples are stored: type, byte order, and where (the file mapped: a .nhdr's data
  // file; the byte offset of the first sample in it).
  DType stored_type() const;
  bool big_endian() const;
  bool fortran_order() const;
  const std::string& data_path() const;
  std::size_t data_offset() const;
  // A short description for reports: "int16 big-endian at byte 352 of <data path>".
  std::string describe() const;

  // The samples themselves when they are float32 in this machine's byte order, in C order,
  // unscaled, at a 4-byte aligned address: size() floats, read-only; else nullptr.
  const float* native_f32() const;
  // Copies `count` floats from `src`, a range within native_f32()'s samples, to dst under the
  // same SIGBUS guard as read_slices: a file truncated under the map is sv::Error naming it,
  // never a crash. Throws std::invalid_argument for a range outside the samples (or no
  // native_f32). Safe from several threads at once.
  void copy_native_f32(const float* src, std::size_t count, float* dst) const;

  // Slices [first, first + count) along axis 0 as C-order values (count * slice_values()),
  // converted as the loader converts them; float is the double value rounded to nearest (beyond
  // the float range: +-inf). Throws sv::Error with the loader's message for an int64/uint64
  // value a double cannot hold (the element index counted from the start of the array).
  // The float version also returns the non-finite values among them (as the loader's doubles:
  // a finite value beyond the float range, which becomes +-inf, is not counted), `first`
  // counted within these slices.
  void read_slices(std::size_t first, std::size_t count, double* out) const;
  NonFinite read_slices(std::size_t first, std::size_t count, float* out) const;
  // The values of the box [lo, hi) of the spatial axes (every channel), C order, as float the
  // way read_slices converts them: only the box's rows are read from a C-order file (a
  // sagittal box of a large volume touches its rows, not whole slices); a Fortran-order file is
  // read slice by slice and cropped. Throws std::invalid_argument for a box outside the array
  // (or of another rank), sv::Error as read_slices does.
  void read_box(const std::vector<std::size_t>& lo, const std::vector<std::size_t>& hi,
                float* out) const;
  // Hints that slices [first, first + count) will not be read again soon (their pages may
  // leave memory); no effect on the values.
  void release_slices(std::size_t first, std::size_t count) const;

  struct Impl;  // lib/src/mapped.cpp
  explicit MappedVolume(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

// Chooses the format as load_any(path, channel_axis[, *raw]) does (with `raw`, a path whose
// extension names no format is headerless raw data). Throws sv::NotMappable for what is read
// only into memory (above), sv::Error for a file the loader would refuse (the same message, with
// few exceptions: where both apply, a refusal may name another of the file's problems first).
MappedVolume open_mapped(const std::string& path, bool channel_axis,
                         const std::optional<RawSpec>& raw = std::nullopt);

class MappedOutput {
 public:
  MappedOutput();
  ~MappedOutput();  // without commit(): unmaps and removes the temporary
  MappedOutput(MappedOutput&&) noexcept;
  MappedOutput& operator=(MappedOutput&&) noexcept;
  MappedOutput(const MappedOutput&) = delete;
  MappedOutput& operator=(const MappedOutput&) = delete;

  float* data();  // size() floats, C order, read-write (initially zero)
  const float* data() const;
  std::size_t size() const;
  const std::vector<std::size_t>& dims() const;
  std::size_t channels() const;
  const std::string& path() const;            // OUT ("" for a scratch file)
  const std::string& temporary_path() const;  // the file being written
  // Writes the samples to disk, closes the file and renames it over path(). Throws sv::Error
  // naming OUT ("cannot write: ...", "cannot replace the file: ...") and removes the temporary
  // when that fails. Not for scratch files.
  void commit();

  struct Impl;  // lib/src/mapped.cpp
  explicit MappedOutput(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

// "" when create_mapped_output can write `path`; else one sentence naming the file, its format
// and what can be written instead (.tif, .nii.gz and .nhdr are compressed or split files; images
// and other extensions are refused too).
std::string mapped_output_refusal(const std::string& path);
// A float32 .npy, .nrrd (raw, attached) or .nii (one channel) for `dims` (1..3 spatial axes,
// array order) and `channels` (1..4), with `geometry` where the format holds it (.npy drops it,
// as save_any does). Throws sv::Error naming `path`: the refusal above, what save_any would
// refuse (a NIfTI axis beyond 32767, several channels in NIfTI, a bad geometry), a file that
// cannot be created or a disk without room for it.
MappedOutput create_mapped_output(const std::string& path, const std::vector<std::size_t>& dims,
                                  std::size_t channels, bool channel_axis,
                                  const Geometry& geometry);
// A headerless float32 work file "<beside>.tmp-<pid>-<n>" in the folder of `beside`, guarded as
// above and always removed when the object goes (commit() is refused).
MappedOutput create_mapped_scratch(const std::string& beside, const std::vector<std::size_t>& dims,
                                   std::size_t channels);

}  // namespace sv
