#include "splineview/threads.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <thread>

namespace sv {

std::optional<unsigned> parse_thread_count(const char* value) {
  if (!value) return std::nullopt;
  const char* p = value;
  while (*p == ' ' || *p == '\t') ++p;
  unsigned long n = 0;
  const char* digits = p;
  while (std::isdigit(static_cast<unsigned char>(*p))) {
    n = n * 10 + static_cast<unsigned long>(*p - '0');
    if (n > 4096) return std::nullopt;
    ++p;
  }
  if (p == digits || n == 0) return std::nullopt;
  while (*p == ' ' || *p == '\t') ++p;
  if (*p != '\0' && *p != ',') return std::nullopt;
  return static_cast<unsigned>(n);
}

unsigned default_thread_count() {
  static const unsigned count = [] {
    for (const char* name : {"SPLINEVIEW_NUM_THREADS", "OMP_NUM_THREADS"})
      if (auto n = parse_thread_count(std::getenv(name))) return *n;
    return std::max(1u, std::thread::hardware_concurrency());
  }();
  return count;
}

}  // namespace sv
