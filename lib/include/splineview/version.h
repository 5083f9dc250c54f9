// The version of this build: the project version from CMake and the git commit the sources were
// built from ("unknown" outside a git checkout; "+dirty" when the tree had uncommitted changes).
// Both executables print these with --version, beside what the build can use (CUDA, GL, FFmpeg).
#pragma once

namespace sv {

const char* version();     // "0.1.0"
const char* git_commit();  // "de9bf50" / "de9bf50+dirty" / "unknown"

}  // namespace sv
