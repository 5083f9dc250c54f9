// libFuzzer target: sv::load_nrrd on an attached .nrrd or a detached .nhdr header (the first
// byte's low bit chooses), and the memory-mapped read, which must agree with it
// (svfuzz::check_mapped). Beside the input lies "detached.raw" (4096 bytes) for headers that
// name a data file.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "fuzz_util.h"
#include "splineview/error.h"
#include "splineview/io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool companion = [] {
    std::vector<std::uint8_t> bytes(4096);
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i * 37);
    svfuzz::write_input("detached.raw", bytes.data(), bytes.size());
    return true;
  }();
  (void)companion;
  if (size < 1) return 0;
  const bool detached = (data[0] & 1) != 0;
  const std::string path =
      svfuzz::write_input(detached ? "input.nhdr" : "input.nrrd", data + 1, size - 1);
  std::optional<sv::Loaded> loaded;
  try {
    loaded = sv::load_nrrd(path);
  } catch (const sv::Error&) {
  }
  svfuzz::check_mapped(path, false, loaded ? &*loaded : nullptr);
  return 0;
}
