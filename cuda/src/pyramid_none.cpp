// Stand-ins for builds without the CUDA toolkit (cuda_pyramid.h): the CPU's argument checks (so
// bad input gets the same sentence everywhere), then a sentence saying this build has no CUDA.
#include "../../lib/src/pyramid_lines.h"
#include "no_cuda.h"
#include "splineview/cuda_pyramid.h"

namespace sv::cuda {
namespace {

std::vector<std::size_t> coarse_dims(const std::vector<PyramidAxis>& axes) {
  std::vector<std::size_t> out;
  for (const PyramidAxis& a : axes) out.push_back(a.coarse);
  return out;
}

}  // namespace

Layout reduce2_layout(const Layout& fine, const PyramidOptions& opt) {
  ReduceOptions o;
  static_cast<PyramidOptions&>(o) = opt;
  return Layout{coarse_dims(pyramid_detail::reduce2_axes(fine.rank(), fine.points(), fine.dims, o)),
                fine.channels};
}

Layout reduce_layout(const Layout& fine, const std::vector<double>& factors,
                     const ReduceOptions& opt) {
  const auto shape =
      pyramid_detail::reduce_factor_shape(fine.rank(), fine.points(), fine.dims, factors, opt);
  return Layout{coarse_dims(pyramid_detail::reduce_shape_axes(fine.rank(), fine.points(), fine.dims,
                                                              shape, opt)),
                fine.channels};
}

template <class T>
void reduce2(const T*, const Layout& fine, T*, T*, const ReduceOptions& opt) {
  pyramid_detail::reduce2_axes(fine.rank(), fine.points(), fine.dims, opt);
  no_cuda("CUDA reduce2");
}
template <class T>
void reduce_to_shape(const T*, const Layout& fine, const std::vector<std::size_t>& shape, T*, T*,
                     const ReduceOptions& opt) {
  pyramid_detail::reduce_shape_axes(fine.rank(), fine.points(), fine.dims, shape, opt);
  no_cuda("CUDA reduce");
}
template <class T>
void expand2(const T*, const Layout& coarse, const std::vector<std::size_t>& fine_dims, T*,
             const PyramidOptions& opt) {
  pyramid_detail::expand_plan(coarse.dims, fine_dims, opt);
  no_cuda("CUDA expand2");
}
template <class T>
Reduced<T> reduce2(const Array<T>& a, const ReduceOptions& opt) {
  pyramid_detail::reduce2_axes(a.rank(), a.points(), a.dims(), opt);
  no_cuda("CUDA reduce2");
}
template <class T>
Reduced<T> reduce_to_shape(const Array<T>& a, const std::vector<std::size_t>& shape,
                           const ReduceOptions& opt) {
  pyramid_detail::reduce_shape_axes(a.rank(), a.points(), a.dims(), shape, opt);
  no_cuda("CUDA reduce");
}
template <class T>
Reduced<T> reduce(const Array<T>& a, const std::vector<double>& factors, const ReduceOptions& opt) {
  pyramid_detail::reduce_factor_shape(a.rank(), a.points(), a.dims(), factors, opt);
  no_cuda("CUDA reduce");
}
template <class T>
Array<T> expand2(const Array<T>& coarse, const std::vector<std::size_t>& fine_dims,
                 const PyramidOptions& opt) {
  pyramid_detail::expand_plan(coarse.dims(), fine_dims, opt);
  no_cuda("CUDA expand2");
}

#define SV_PYRAMID_INSTANTIATE(T)                                                                \
  template void reduce2<T>(const T*, const Layout&, T*, T*, const ReduceOptions&);               \
  template void reduce_to_shape<T>(const T*, const Layout&, const std::vector<std::size_t>&, T*, \
                                   T*, const ReduceOptions&);                                    \
  template void expand2<T>(const T*, const Layout&, const std::vector<std::size_t>&, T*,         \
                           const PyramidOptions&);                                               \
  template Reduced<T> reduce2<T>(const Array<T>&, const ReduceOptions&);                         \
  template Reduced<T> reduce<T>(const Array<T>&, const std::vector<double>&,                     \
                                const ReduceOptions&);                                           \
  template Reduced<T> reduce_to_shape<T>(const Array<T>&, const std::vector<std::size_t>&,       \
                                         const ReduceOptions&);                                  \
  template Array<T> expand2<T>(const Array<T>&, const std::vector<std::size_t>&,                 \
                               const PyramidOptions&);

SV_PYRAMID_INSTANTIATE(float)
SV_PYRAMID_INSTANTIATE(double)

}  // namespace sv::cuda
