// The reconstruction methods a view can show, with their names (command line and UI), which
// texture each one reads (raw samples or B-spline coefficients) and which fetch variant of
// shaders/bspline_fetch.glsl it compiles.
#pragma once

#include <array>
#include <string>

namespace sv::gl {

enum class FetchMethod {
  Nearest,          // nearest sample
  Linear,           // hardware bilinear
  CubicUnfiltered,  // cubic B-spline on the raw samples: smooth but blurred, not interpolating
  CubicPrefiltered  // cubic B-spline on prefiltered coefficients: interpolates the samples
};

constexpr std::array<FetchMethod, 4> kFetchMethods = {FetchMethod::Nearest, FetchMethod::Linear,
                                                      FetchMethod::CubicUnfiltered,
                                                      FetchMethod::CubicPrefiltered};

// Command-line names: "nearest", "linear", "cubic-unfiltered", "cubic".
const char* cli_name(FetchMethod m);
// Names shown to users: "nearest", "linear", "cubic B-spline (unfiltered)",
// "prefiltered cubic B-spline".
const char* display_name(FetchMethod m);
// Parses a command-line name; throws sv::Error listing the valid names.
FetchMethod parse_fetch_method(const std::string& name);

// True when the method reads the coefficient texture rather than the raw samples.
bool uses_coefficients(FetchMethod m);
// The #define that selects the fetch variant in bspline_fetch.glsl ("SV_FETCH_CUBIC", ...).
const char* fetch_define(FetchMethod m);

}  // namespace sv::gl
