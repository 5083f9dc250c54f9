// libFuzzer target: sv::load_nifti (.nii, or .nii.gz when the input starts with the gzip
// signature: the loader decides by content; the name follows suit), and the memory-mapped read,
// which must agree with it (svfuzz::check_mapped).
#include <cstddef>
#include <cstdint>
#include <optional>

#include "fuzz_util.h"
#include "splineview/error.h"
#include "splineview/io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const bool gz = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  const std::string path = svfuzz::write_input(gz ? "input.nii.gz" : "input.nii", data, size);
  std::optional<sv::Loaded> loaded;
  try {
    loaded = sv::load_nifti(path);
  } catch (const sv::Error&) {
  }
  svfuzz::check_mapped(path, false, loaded ? &*loaded : nullptr);
  return 0;
}
