// splinetool-dicom.so: the DICOM reader (lib/src/io_dicom.cpp with GDCM) as a module (modules.h).
// The module holds its own copy of the core library, so the caller's input options
// (--allow-special-files, --volume) are handed over with every call.
#include "modules.h"
#include "splineview/input.h"
#include "splineview/io.h"

namespace {

sv::Loaded load(const std::string& path, const sv::InputOptions& options) {
  sv::set_input_options(options);
  return sv::load_dicom(path);
}

bool looks_like(const std::string& path, const sv::InputOptions& options) {
  sv::set_input_options(options);
  return sv::looks_like_dicom(path);
}

const splinetool::DicomModule kTable = {load, looks_like};

}  // namespace

extern "C" {

__attribute__((visibility("default"))) const char* splinetool_module_build_key() {
  static const std::string key = splinetool::module_build_key();
  return key.c_str();
}

__attribute__((visibility("default"))) const splinetool::DicomModule* splinetool_dicom_module() {
  return &kTable;
}

}  // extern "C"
