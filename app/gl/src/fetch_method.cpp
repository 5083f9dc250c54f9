// Names and properties of the reconstruction methods (see splineview/gl/fetch_method.h).
#include "splineview/gl/fetch_method.h"

#include "splineview/error.h"

namespace sv::gl {

const char* cli_name(FetchMethod m) {
  switch (m) {
    case FetchMethod::Nearest:
      return "nearest";
    case FetchMethod::Linear:
      return "linear";
    case FetchMethod::CubicUnfiltered:
      return "cubic-unfiltered";
    case FetchMethod::CubicPrefiltered:
      return "cubic";
  }
  return "?";
}

const char* display_name(FetchMethod m) {
  switch (m) {
    case FetchMethod::Nearest:
      return "nearest";
    case FetchMethod::Linear:
      return "linear";
    case FetchMethod::CubicUnfiltered:
      return "cubic B-spline (unfiltered)";
    case FetchMethod::CubicPrefiltered:
      return "prefiltered cubic B-spline";
  }
  return "?";
}

FetchMethod parse_fetch_method(const std::string& name) {
  std::string valid;
  for (FetchMethod m : kFetchMethods) {
    if (name == cli_name(m)) return m;
    valid += (valid.empty() ? "" : ", ") + std::string(cli_name(m));
  }
  throw Error("unknown method \"" + name + "\" (valid: " + valid + ")");
}

bool uses_coefficients(FetchMethod m) {
  return m == FetchMethod::CubicPrefiltered;
}

const char* fetch_define(FetchMethod m) {
  switch (m) {
    case FetchMethod::Nearest:
      return "SV_FETCH_NEAREST";
    case FetchMethod::Linear:
      return "SV_FETCH_LINEAR";
    case FetchMethod::CubicUnfiltered:
    case FetchMethod::CubicPrefiltered:
      return "SV_FETCH_CUBIC";
  }
  return "SV_FETCH_NEAREST";
}

}  // namespace sv::gl
