// The CUDA spline evaluators of cuda_ndimage.h for double data (see ndimage_sample.cuh).
#include "ndimage_sample.cuh"

using sv::cuda::nd::Spline;
using sv::cuda::nd::Stream;
SV_ND_SAMPLE_INSTANTIATE(double)
