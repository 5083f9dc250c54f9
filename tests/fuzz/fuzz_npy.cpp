// libFuzzer target: sv::load_npy. The first byte's low bit chooses channel_axis; the rest is
// the file.
#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"
#include "splineview/error.h"
#include "splineview/io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const bool channels = (data[0] & 1) != 0;
  const std::string path = svfuzz::write_input("input.npy", data + 1, size - 1);
  try {
    sv::load_npy(path, channels);
  } catch (const sv::Error&) {
  }
  return 0;
}
