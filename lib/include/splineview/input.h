// How the loaders (load_npy, load_nrrd and its detached data file, load_nifti, load_raw,
// load_image, load_any) open their inputs.
//
// By default only regular files are read: a character or block device (/dev/zero, a disk), a
// FIFO or a socket is refused before it is opened, with "<path>: not a regular file (a
// character device); only regular files are read", so a wrong path can neither block nor read
// without end. A directory fails with "<path>: cannot open: Is a directory".
//
// A program that wants pipes or devices (e.g. `<(zcat vol.nii.gz)`) opts in with
// allow_special. Even then no read is unbounded: a non-regular input is read only as far as its
// header claims, plus a small slack that detects trailing data:
//   .npy: the preamble, the header it declares, then the data bytes the header declares + 1;
//   NRRD (attached): at most kMaxSpecialHeader bytes of header, then the encoded data
//     (raw: the declared bytes + 1; gzip: the declared bytes + 1/1024 + 64 KiB; ascii: 64
//     bytes per declared value + 64 KiB); a detached data file the same;
//   NIfTI (.nii, .nii.gz): the 348-byte header, vox_offset, the declared voxel bytes + 1;
//   raw: the bytes the spec needs + 1;
//   images and anything else without a claim: at most kMaxUnclaimedSpecial bytes.
// Regular files are bounded by their size on disk: claimed bytes must be present before they
// are allocated, and compressed data grows its buffer with what actually inflates.
#pragma once

#include <cstddef>
#include <string>

namespace sv {

struct InputOptions {
  bool allow_special = false;  // also read devices, FIFOs and sockets (bounded, see above)
  // Which volume of a 4-D file (NIfTI dim[4] > 1) to read, from 0; -1 (the default) refuses
  // 4-D files with a message that names the volume count and this choice (--volume INDEX).
  long volume = -1;
};

constexpr std::size_t kMaxSpecialHeader = std::size_t{1} << 20;      // 1 MiB
constexpr std::size_t kMaxUnclaimedSpecial = std::size_t{64} << 20;  // 64 MiB

// The process-wide options every loader uses (thread-safe; the default is all off).
InputOptions input_options();
void set_input_options(const InputOptions& options);

// Applies the guard to `path` without reading it: throws the sv::Error a loader would
// ("<path>: not a regular file (a FIFO); only regular files are read", "<path>: cannot open:
// ..."). For code that looks into an input before the loader does (e.g. a .nhdr's data file
// name), so that it neither blocks on a FIFO nor reads a device. Nothing is opened (it looks
// with stat()), so an opted-in FIFO is left for the loader.
void check_input(const std::string& path);

// Sets the options for its lifetime and restores the previous ones (tests, one-off loads).
class ScopedInputOptions {
 public:
  explicit ScopedInputOptions(const InputOptions& options) : saved_(input_options()) {
    set_input_options(options);
  }
  ~ScopedInputOptions() { set_input_options(saved_); }
  ScopedInputOptions(const ScopedInputOptions&) = delete;
  ScopedInputOptions& operator=(const ScopedInputOptions&) = delete;

 private:
  InputOptions saved_;
};

}  // namespace sv
