// Small helpers the viewer's timing and memory figures share.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace sv::viewer {

// Milliseconds since `start` on the steady clock.
inline double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// "12.3 MiB".
inline std::string mib_text(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", bytes / (1024.0 * 1024.0));
  return text;
}

}  // namespace sv::viewer
