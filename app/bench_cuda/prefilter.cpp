// (being written)
#include "bench_cuda.h"
namespace cbench {
Json run_prefilter(const PrefilterOptions&) { return {}; }
}  // namespace cbench
