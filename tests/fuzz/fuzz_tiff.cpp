// libFuzzer target: sv::load_tiff (TIFF and BigTIFF through libtiff: every layout, compression
// and page structure the loader accepts, and the limits it checks before allocating), and the
// memory-mapped read of uncompressed stacks, which must agree with it (svfuzz::check_mapped).
#include <cstddef>
#include <cstdint>
#include <optional>

#include "fuzz_util.h"
#include "splineview/error.h"
#include "splineview/io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = svfuzz::write_input("input.tif", data, size);
  std::optional<sv::Loaded> loaded;
  try {
    loaded = sv::load_tiff(path);
  } catch (const sv::Error&) {
  }
  svfuzz::check_mapped(path, loaded && loaded->channel_axis, loaded ? &*loaded : nullptr);
  return 0;
}
