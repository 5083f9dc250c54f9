// The fetch flavours of splinetool's GPU backends and the GL texture formats by name (backend.h),
// known without GL or CUDA so that the command line is checked before any context or device
// exists. Compiled into splinetool and into the GL module (splinetool-gl.so), which maps methods to
// fetches with fetch_for_method.
#include <algorithm>
#include <initializer_list>
#include <iterator>
#include <string>
#include <vector>

#include "backend.h"

namespace splinetool {
namespace {

const char* const kGlFetches[] = {"nearest", "linear", "cubic-unfiltered", "lut", "otf", "precise"};
const char* const kCudaFetches[] = {"nearest", "linear", "cubic", "precise"};

bool is_one_of(const std::string& s, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return s == n; });
}

}  // namespace

std::vector<std::string> fetch_names(const std::string& backend) {
  if (backend == "gl")
    return std::vector<std::string>(std::begin(kGlFetches), std::end(kGlFetches));
  if (backend == "cuda")
    return std::vector<std::string>(std::begin(kCudaFetches), std::end(kCudaFetches));
  return {};
}

std::vector<std::string> all_fetch_names() {
  std::vector<std::string> names = fetch_names("gl");
  for (const std::string& n : fetch_names("cuda"))
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  return names;
}

std::string default_fetch(const std::string& backend) {
  // cuda defaults to the exact-arithmetic flavour: its hardware-filtered cubic carries the
  // texture unit's 8-bit weights, which users of a CUDA backend would not expect by default.
  if (backend == "gl") return "otf";
  if (backend == "cuda") return "precise";
  return "";
}

std::vector<std::string> format_names() {
  return {"r32f", "r16f", "r16"};
}

bool fetch_is_prefiltered(const std::string& fetch) {
  return is_one_of(fetch, {"lut", "otf", "precise", "cubic"});
}

int fetch_degree(const std::string& fetch) {
  if (fetch == "nearest") return 0;
  if (fetch == "linear") return 1;
  return 3;
}

bool fetch_has_derivative(const std::string& fetch, const std::string& backend) {
  return backend == "gl" && is_one_of(fetch, {"otf", "precise", "cubic-unfiltered"});
}

std::string fetch_for_method(sv::Method method, const std::string& cubic_fetch,
                             const std::string& backend) {
  const std::string cubic = cubic_fetch.empty() ? default_fetch(backend) : cubic_fetch;
  switch (method) {
    case sv::Method::Nearest:
      return "nearest";
    case sv::Method::Linear:
      return "linear";
    case sv::Method::CubicUnfiltered:
      return backend == "cuda" ? cubic : "cubic-unfiltered";
    case sv::Method::Cubic:
      return cubic;
    case sv::Method::Quintic:
    case sv::Method::Septic:
      break;
  }
  return "";
}

}  // namespace splinetool
