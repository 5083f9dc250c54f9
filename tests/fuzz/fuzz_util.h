// Shared by the libFuzzer targets (tests/fuzz/fuzz_*.cpp): each input is written to a file in a
// private folder under /dev/shm (a real path with the extension the loader expects, so the
// loaders run exactly as they do on user files) and handed to an sv loader. sv::Error is the
// expected way to refuse an input; anything else (a crash, a sanitizer report, another
// exception escaping, a leak, a timeout, memory beyond -rss_limit_mb) is a finding.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace svfuzz {

// The folder /dev/shm/sv-fuzz-<pid> (or $TMPDIR when /dev/shm is missing), made once.
inline const std::string& work_dir() {
  static const std::string dir = [] {
    const char* base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : std::getenv("TMPDIR");
    std::string d = std::string(base ? base : "/tmp") + "/sv-fuzz-" + std::to_string(getpid());
    std::string cmd = "mkdir -p '" + d + "'";
    if (std::system(cmd.c_str()) != 0) std::abort();
    return d;
  }();
  return dir;
}

// Writes `size` bytes to work_dir()/name and returns the path.
inline std::string write_input(const std::string& name, const std::uint8_t* data,
                               std::size_t size) {
  const std::string path = work_dir() + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

}  // namespace svfuzz
