// libFuzzer target: sv::parse_raw_spec and sv::load_raw (with the memory-mapped read, which
// must agree with it: svfuzz::check_mapped). The input is "SPEC\nDATA": the spec
// parser gets the first line; when it accepts it, the data is loaded with that spec (channel
// axis when the spec has four dims, so both layouts are reached).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "fuzz_util.h"
#include "splineview/error.h"
#include "splineview/io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const void* nl = std::memchr(data, '\n', size);
  const std::size_t spec_len =
      nl ? static_cast<std::size_t>(static_cast<const std::uint8_t*>(nl) - data) : size;
  const std::string spec(reinterpret_cast<const char*>(data), spec_len);
  sv::RawSpec parsed;
  try {
    parsed = sv::parse_raw_spec(spec);
  } catch (const sv::Error&) {
    return 0;
  }
  const std::size_t skip = nl ? spec_len + 1 : size;
  const std::string path = svfuzz::write_input("input.dat", data + skip, size - skip);
  std::optional<sv::Loaded> loaded;
  try {
    loaded = sv::load_raw(path, parsed, parsed.dims.size() == 4);
  } catch (const sv::Error&) {
  }
  svfuzz::check_mapped(path, parsed.dims.size() == 4, loaded ? &*loaded : nullptr, parsed);
  return 0;
}
