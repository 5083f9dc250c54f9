// The word splitter of the batch files (`splinetool batch`, `splineview --batch`): one line into
// the words of one command, as a POSIX shell splits a simple command, without any expansion.
// Fuzzed alone by tests/fuzz/fuzz_batch_words.cpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sv {

// Splits `line` (one line, without its newline) into `words`:
// - words are separated by blanks (spaces, tabs); an unquoted '#' that starts a word starts a
//   comment to the end of the line;
// - '...' keeps everything up to the next ' as it is; "..." too, except that \" \\ \$ and \`
//   stand for the second character (any other backslash is kept); outside quotes a backslash
//   makes the next character ordinary; quoted and unquoted parts next to each other make one
//   word, and '' or "" alone is an empty word;
// - refused, because a shell would do something else with them and splinetool would not:
//   an unquoted ; | & < > ( ) ` or $, a $ or ` inside "...", an unterminated quote, a backslash
//   at the end of the line (no continuation lines), a NUL byte.
// Returns "" on success, else why the line cannot be split (with the 1-based byte column); the
// words are then unspecified. Globs (* ? [) and ~ are ordinary characters.
std::string split_command_words(std::string_view line, std::vector<std::string>& words);

}  // namespace sv
