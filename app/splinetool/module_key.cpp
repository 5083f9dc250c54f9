// The build key that splinetool and its modules compare before a module is used (modules.h).
// Compiled into both; SPLINETOOL_BUILD_KEY comes from app/splinetool/CMakeLists.txt.
#include <string>

#include "modules.h"
#include "splineview/version.h"

#ifndef SPLINETOOL_BUILD_KEY
#error "SPLINETOOL_BUILD_KEY must be defined by the build"
#endif

namespace splinetool {

std::string module_build_key() {
  return std::string(SPLINETOOL_BUILD_KEY) + " commit " + sv::git_commit();
}

}  // namespace splinetool
