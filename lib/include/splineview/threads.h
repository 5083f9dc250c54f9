// How many threads the library's CPU functions use when their options say 0 ("all cores").
//
// The environment decides, read once per process: SPLINEVIEW_NUM_THREADS, else OMP_NUM_THREADS
// (the first number of a list such as "4,2"), else std::thread::hardware_concurrency(). A
// value that is not a whole number from 1 to 4096 is ignored. OMP_NUM_THREADS is honoured
// because process pools set it: dask.distributed's workers start with OMP_NUM_THREADS=1 (its
// nanny's pre-spawn environment), so a LocalCluster of N one-thread workers runs N filters at
// once instead of N times all cores. An explicit `threads` in an options struct still wins.
#pragma once

#include <optional>

namespace sv {

// The thread count for options that say 0.
unsigned default_thread_count();

// The count a variable's value names: a whole number from 1 to 4096, optionally followed by a
// comma and more (OMP_NUM_THREADS's list form; the first entry counts), surrounding blanks
// allowed; nullopt for a null pointer, an empty or malformed value, 0 or more than 4096.
std::optional<unsigned> parse_thread_count(const char* value);

}  // namespace sv
