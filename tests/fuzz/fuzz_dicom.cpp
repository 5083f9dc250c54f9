// libFuzzer target: sv::load_dicom on one file (GDCM reads from a path, so each input is
// written to a file first; the structure check of io_dicom.cpp runs before GDCM sees it).
#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"
#include "splineview/error.h"
#include "splineview/io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = svfuzz::write_input("input.dcm", data, size);
  try {
    sv::load_dicom(path);
  } catch (const sv::Error&) {
  }
  return 0;
}
