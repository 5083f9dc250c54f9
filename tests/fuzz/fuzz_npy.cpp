// libFuzzer target: sv::load_npy and, on the same file, the memory-mapped read of --out-of-core,
// which must agree with it (svfuzz::check_mapped). The first byte's low bit chooses channel_axis;
// the rest is the file.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "fuzz_util.h"
#include "splineview/error.h"
#include "splineview/io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const bool channels = (data[0] & 1) != 0;
  const std::string path = svfuzz::write_input("input.npy", data + 1, size - 1);
  std::optional<sv::Loaded> loaded;
  try {
    loaded = sv::load_npy(path, channels);
  } catch (const sv::Error&) {
  }
  svfuzz::check_mapped(path, channels, loaded ? &*loaded : nullptr);
  return 0;
}
