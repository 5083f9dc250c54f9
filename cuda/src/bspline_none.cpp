// Stand-ins for builds without the CUDA toolkit (cuda_bspline.h): the CPU's argument checks (so
// bad input gets the same sentence everywhere), then a sentence saying this build has no CUDA.
#include <string>

#include "no_cuda.h"
#include "splineview/bspline.h"
#include "splineview/cuda_bspline.h"

namespace sv::cuda {
namespace {

void check_transform(const Layout& layout, const SplineTransformOptions& opt, bool direct,
                     const char* what) {
  layout.check(what);
  for (std::size_t a = 0; a < layout.rank(); ++a) {
    const int n = transform_degree(opt, a, layout.rank());
    if (direct) smoothing_poles(n, opt.lambda);
  }
}

void check_orders(std::size_t rank, const std::vector<int>& order, const DerivativeOptions& opt,
                  const char* what) {
  check_degree(opt.degree, 0, kMaxDegree);
  check_derivative_order(order, rank, opt.degree, what);
}

}  // namespace

template <class T>
bool direct_transform_tiled(int, double) {
  return false;
}
template <class T>
void direct_transform(T*, const Layout& layout, const SplineTransformOptions& opt) {
  check_transform(layout, opt, true, "CUDA direct transform");
  no_cuda("CUDA direct transform");
}
template <class T>
void indirect_transform(const T*, T*, const Layout& layout, const SplineTransformOptions& opt) {
  check_transform(layout, opt, false, "CUDA indirect transform");
  no_cuda("CUDA indirect transform");
}
template <class T>
void derivative_filter(const T*, T*, const Layout& layout, const std::vector<int>& order,
                       const DerivativeOptions& opt) {
  layout.check("CUDA derivative");
  check_orders(layout.rank(), order, opt, "CUDA derivative");
  no_cuda("CUDA derivative");
}
template <class T>
void gradient_filter(const T*, const std::vector<T*>&, const Layout& layout,
                     const DerivativeOptions&) {
  layout.check("CUDA gradient");
  no_cuda("CUDA gradient");
}
template <class T>
void gradient_magnitude_filter(const T*, T*, const Layout& layout, const DerivativeOptions&) {
  layout.check("CUDA gradient magnitude");
  no_cuda("CUDA gradient magnitude");
}
template <class T>
void hessian_filter(const T*, const std::vector<T*>&, const Layout& layout,
                    const DerivativeOptions&) {
  layout.check("CUDA Hessian");
  no_cuda("CUDA Hessian");
}
template <class T>
void laplacian_filter(const T*, T*, const Layout& layout, const DerivativeOptions&) {
  layout.check("CUDA Laplacian");
  no_cuda("CUDA Laplacian");
}
template <class T>
void direct_transform(Array<T>& a, const SplineTransformOptions& opt) {
  check_transform(Layout::of(a), opt, true, "CUDA direct transform");
  no_cuda("CUDA direct transform");
}
template <class T>
void indirect_transform(Array<T>& a, const SplineTransformOptions& opt) {
  check_transform(Layout::of(a), opt, false, "CUDA indirect transform");
  no_cuda("CUDA indirect transform");
}
template <class T>
Array<T> derivative_filter(const Array<T>& input, const std::vector<int>& order,
                           const DerivativeOptions& opt) {
  check_orders(input.rank(), order, opt, "CUDA derivative");
  no_cuda("CUDA derivative");
}
template <class T>
std::vector<Array<T>> gradient_filter(const Array<T>&, const DerivativeOptions&) {
  no_cuda("CUDA gradient");
}
template <class T>
Array<T> gradient_magnitude_filter(const Array<T>&, const DerivativeOptions&) {
  no_cuda("CUDA gradient magnitude");
}
template <class T>
std::vector<Array<T>> hessian_filter(const Array<T>&, const DerivativeOptions&) {
  no_cuda("CUDA Hessian");
}
template <class T>
Array<T> laplacian_filter(const Array<T>&, const DerivativeOptions&) {
  no_cuda("CUDA Laplacian");
}

#define SV_BSPLINE_INSTANTIATE(T)                                                                  \
  template bool direct_transform_tiled<T>(int, double);                                            \
  template void direct_transform<T>(T*, const Layout&, const SplineTransformOptions&);             \
  template void indirect_transform<T>(const T*, T*, const Layout&, const SplineTransformOptions&); \
  template void derivative_filter<T>(const T*, T*, const Layout&, const std::vector<int>&,         \
                                     const DerivativeOptions&);                                    \
  template void gradient_filter<T>(const T*, const std::vector<T*>&, const Layout&,                \
                                   const DerivativeOptions&);                                      \
  template void gradient_magnitude_filter<T>(const T*, T*, const Layout&,                          \
                                             const DerivativeOptions&);                            \
  template void hessian_filter<T>(const T*, const std::vector<T*>&, const Layout&,                 \
                                  const DerivativeOptions&);                                       \
  template void laplacian_filter<T>(const T*, T*, const Layout&, const DerivativeOptions&);        \
  template void direct_transform<T>(Array<T>&, const SplineTransformOptions&);                     \
  template void indirect_transform<T>(Array<T>&, const SplineTransformOptions&);                   \
  template Array<T> derivative_filter<T>(const Array<T>&, const std::vector<int>&,                 \
                                         const DerivativeOptions&);                                \
  template std::vector<Array<T>> gradient_filter<T>(const Array<T>&, const DerivativeOptions&);    \
  template Array<T> gradient_magnitude_filter<T>(const Array<T>&, const DerivativeOptions&);       \
  template std::vector<Array<T>> hessian_filter<T>(const Array<T>&, const DerivativeOptions&);     \
  template Array<T> laplacian_filter<T>(const Array<T>&, const DerivativeOptions&);

SV_BSPLINE_INSTANTIATE(float)
SV_BSPLINE_INSTANTIATE(double)

}  // namespace sv::cuda
