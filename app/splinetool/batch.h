// `splinetool batch FILE`: many splinetool command lines run in one process, one a line of FILE
// (README "Batches"). The runner reads FILE a line at a time, splits each line into words
// (splineview/command_words.h) and hands them to the same function main() runs for a separate
// process, which builds a fresh command line parser for every line.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace splinetool {

struct BatchArgs {
  std::string file;         // the commands; "-" = standard input
  bool keep_going = false;  // run every line; exit 1 if any failed
  std::string log;          // --log LOG: one JSON object a command ("" = none)
};

// Runs one command: `argv` as a separate process would get it (argv[0] the program), `where`
// the text put after "splinetool: " in front of its error message ("batch FILE line N: ").
// Returns the exit status a separate run would have (0, 1, 2).
using CommandRunner =
    std::function<int(const std::vector<std::string>& argv, const std::string& where)>;

// Runs the batch; returns the exit status of `splinetool batch`. Throws sv::Error when FILE or
// LOG cannot be opened or FILE cannot be read.
int run_batch(const BatchArgs& args, const std::string& program, const CommandRunner& run);

// The longest line a batch file may hold (a line beyond it is refused, the next lines read).
constexpr std::size_t kMaxBatchLine = std::size_t{1} << 20;

}  // namespace splinetool
