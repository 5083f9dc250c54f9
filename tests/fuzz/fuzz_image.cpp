// libFuzzer target: sv::load_image (PNG, JPEG and the other image formats the build reads; the
// loader decides by the file's signature, so one target covers them all).
#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"
#include "splineview/error.h"
#include "splineview/io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = svfuzz::write_input("input.img", data, size);
  try {
    sv::load_image(path);
  } catch (const sv::Error&) {
  }
  return 0;
}
