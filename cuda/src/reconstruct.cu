// (being written)
#include "splineview/cuda_reconstruct.h"
