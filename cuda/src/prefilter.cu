// (being written)
#include "splineview/cuda_prefilter.h"
