// sv::version(): the project version CMake passes in (git_commit() is generated at build time).
#include "splineview/version.h"

#ifndef SPLINEVIEW_VERSION
#error "SPLINEVIEW_VERSION must be defined by the build"
#endif

namespace sv {

const char* version() {
  return SPLINEVIEW_VERSION;
}

}  // namespace sv
