// libFuzzer target: sv::load_tiff (TIFF and BigTIFF through libtiff: every layout, compression
// and page structure the loader accepts, and the limits it checks before allocating).
#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"
#include "splineview/error.h"
#include "splineview/io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = svfuzz::write_input("input.tif", data, size);
  try {
    sv::load_tiff(path);
  } catch (const sv::Error&) {
  }
  return 0;
}
