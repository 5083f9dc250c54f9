// Stand-ins for builds without the CUDA toolkit (cuda_grbf.h).
#include "no_cuda.h"
#include "splineview/cuda_grbf.h"

namespace sv::cuda {

template <class T>
GrbfWeights<T> grbf_solve(const Array<T>&, const GrbfOptions&, GrbfTiming*) {
  no_cuda("CUDA GRBF");
}
template <class T>
Array<T> grbf_grid(const GrbfWeights<T>&, const std::vector<std::vector<double>>&, GrbfTiming*) {
  no_cuda("CUDA GRBF");
}
template <class T>
Array<T> grbf_interpolate_grid(const Array<T>&, const GrbfOptions&,
                               const std::vector<std::vector<double>>&, GrbfTiming*,
                               GrbfWeights<T>*) {
  no_cuda("CUDA GRBF");
}
template <class T>
void grbf_sample(const GrbfWeights<T>&, const double*, std::size_t, double*, GrbfTiming*) {
  no_cuda("CUDA GRBF");
}

#define SV_GRBF_INSTANTIATE(T)                                                                  \
  template GrbfWeights<T> grbf_solve(const Array<T>&, const GrbfOptions&, GrbfTiming*);         \
  template Array<T> grbf_grid(const GrbfWeights<T>&, const std::vector<std::vector<double>>&,   \
                              GrbfTiming*);                                                     \
  template Array<T> grbf_interpolate_grid(const Array<T>&, const GrbfOptions&,                  \
                                          const std::vector<std::vector<double>>&, GrbfTiming*, \
                                          GrbfWeights<T>*);                                     \
  template void grbf_sample(const GrbfWeights<T>&, const double*, std::size_t, double*,         \
                            GrbfTiming*);
SV_GRBF_INSTANTIATE(float)
SV_GRBF_INSTANTIATE(double)
#undef SV_GRBF_INSTANTIATE

}  // namespace sv::cuda
