// (being written)
#include "bench_cuda.h"
namespace cbench {
Json run_reconstruct(const ReconstructOptions&) { return {}; }
}
