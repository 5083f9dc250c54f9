// libFuzzer target: the batch-line splitter (lib/src/command_words.cpp, `splinetool batch` and
// `splineview --batch`). The input is one line. Besides crashes and sanitizer reports, a finding
// is a split that does not round-trip: every accepted line's words, each quoted back in single
// quotes (' as '\''), must split again into the same words, and the same words quoted in double
// quotes (with \" \\ \$ \` escaped) too; no word may hold a NUL byte.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "splineview/command_words.h"

namespace {

std::string single_quoted(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& w : words) {
    line += line.empty() ? "'" : " '";
    for (char c : w) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

std::string double_quoted(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& w : words) {
    line += line.empty() ? "\"" : "\t\"";
    for (char c : w) {
      if (c == '"' || c == '\\' || c == '$' || c == '`') line += '\\';
      line += c;
    }
    line += '"';
  }
  return line;
}

void check_round_trip(const std::string& line, const std::vector<std::string>& words) {
  std::vector<std::string> again;
  const std::string why = sv::split_command_words(line, again);
  if (!why.empty() || again != words) {
    std::fprintf(stderr, "fuzz_batch_words: the words quoted back as [%s] split %s\n", line.c_str(),
                 why.empty() ? "into other words" : why.c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> words;
  const std::string why = sv::split_command_words(line, words);
  if (!why.empty()) return 0;
  for (const std::string& w : words)
    if (w.find('\0') != std::string::npos) {
      std::fprintf(stderr, "fuzz_batch_words: a word holds a NUL byte\n");
      std::abort();
    }
  check_round_trip(single_quoted(words), words);
  check_round_trip(double_quoted(words), words);
  return 0;
}
