// The CUDA B-spline operations of cuda_bspline.h (issue 17) against the CPU versions in double
// (smoothing.h, derivative.h) on the same inputs: the direct transform (lambda 0 and > 0, real
// poles, complex pairs, poles near the unit circle), the indirect transform with per-axis degrees,
// derivatives of random multi-indices, the gradient, its magnitude, the Hessian and the Laplacian;
// every boundary mode, 1-3 D, odd and tiny extents, channels, degrees 0/1-7, float and double,
// from samples and from coefficients. Each result must lie within a bound derived from the
// operation (below); the worst measured share of the bound is printed for docs/ACCURACY.md.
// Outputs are poisoned with NaN before each run (a NaN anywhere fails). Skips with the reason when
// there is no CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "require_cuda.h"
#include "splineview/bspline.h"
#include "splineview/cuda_bspline.h"
#include "splineview/cuda_prefilter.h"
#include "splineview/derivative.h"
#include "splineview/prefilter.h"
#include "splineview/smoothing.h"

namespace {

using sv::Array;
using sv::ArrayD;
using sv::Boundary;
namespace cu = sv::cuda;

const std::vector<Boundary> kModes = {Boundary::Reflect,     Boundary::Mirror,  Boundary::Periodic,
                                      Boundary::Wrap,        Boundary::Nearest, Boundary::Constant,
                                      Boundary::GridConstant};

// Device memory of n elements of T, poisoned with NaN.
template <class T>
struct Dev {
  explicit Dev(std::size_t n) : count(n), buf((n * sizeof(T) + 3) / 4) {
    buf.fill(std::numeric_limits<float>::quiet_NaN());
  }
  T* ptr() { return reinterpret_cast<T*>(buf.data()); }
  void upload(const Array<T>& a) {
    buf.upload(reinterpret_cast<const float*>(a.data()), (a.size() * sizeof(T) + 3) / 4);
  }
  Array<T> download(const std::vector<std::size_t>& dims, std::size_t channels) const {
    Array<T> a(dims, channels);
    std::vector<float> raw(buf.size());
    buf.download(raw.data(), raw.size());
    std::copy_n(reinterpret_cast<const T*>(raw.data()), a.size(), a.data());
    return a;
  }
  std::size_t count;
  cu::DeviceBuffer buf;
};

template <class T>
Array<T> random_array(std::vector<std::size_t> dims, std::size_t channels, std::mt19937& rng) {
  Array<T> a(std::move(dims), channels);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (std::size_t i = 0; i < a.size(); ++i) a.data()[i] = static_cast<T>(u(rng));
  return a;
}

double max_abs(const ArrayD& a) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a.data()[i]));
  return m;
}

// The l1 norm of the direct transform's impulse response (degree, lambda) on one axis: how much
// the coefficients can exceed the samples, and what an error of the samples' size can become.
double direct_l1(int degree, double lambda) {
  static std::map<std::pair<int, double>, double> cache;
  const auto key = std::make_pair(degree, lambda);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  ArrayD line({4001});
  line.data()[2000] = 1;
  sv::SplineTransformOptions o;
  o.degree = degree;
  o.lambda = lambda;
  o.boundary = Boundary::Periodic;
  sv::direct_transform(line, o);
  double s = 0;
  for (std::size_t i = 0; i < line.size(); ++i) s += std::fabs(line.data()[i]);
  return cache[key] = s;
}

// Worst measured error / bound per operation, printed at the end.
std::map<std::string, double>& worst() {
  static std::map<std::string, double> w;
  return w;
}
struct Report : ::testing::Environment {
  void TearDown() override {
    for (const auto& [k, v] : worst())
      std::printf("[ bound    ] %-40s worst error / derived bound %.3g\n", k.c_str(), v);
  }
};
const auto* const kReport = ::testing::AddGlobalTestEnvironment(new Report);

// Every element within `bound` of the reference (NaN fails).
template <class T>
void expect_close(const Array<T>& got, const ArrayD& ref, double bound, const std::string& what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  double err = 0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double d = std::fabs(static_cast<double>(got.data()[i]) - ref.data()[i]);
    if (!(d <= err)) {
      err = std::isnan(d) ? std::numeric_limits<double>::infinity() : d;
      at = i;
    }
  }
  EXPECT_LE(err, bound) << what << ": worst at element " << at << " (got "
                        << static_cast<double>(got.data()[at]) << ", double reference "
                        << ref.data()[at] << ")";
  const std::string key = what.substr(0, what.find(' '));
  double& w = worst()[key];
  w = std::max(w, err / bound);
}

std::string shape_name(const std::vector<std::size_t>& dims, std::size_t channels) {
  std::string s;
  for (std::size_t d : dims) s += (s.empty() ? "" : "x") + std::to_string(d);
  if (channels > 1) s += "c" + std::to_string(channels);
  return s;
}

// SV_BSPLINE_SMALL=1 (the compute-sanitizer runs): the small shapes only.
bool skip_big(const std::vector<std::size_t>& dims) {
  static const bool small = std::getenv("SV_BSPLINE_SMALL") != nullptr;
  std::size_t n = 1;
  for (std::size_t d : dims) n *= d;
  return small && n > 400;
}

template <class T>
constexpr double eps() {
  return std::numeric_limits<T>::epsilon();
}

const std::vector<std::vector<std::size_t>> kShapes = {
    {1},     {2},      {5},       {37},       {1201},    {3001},      {2, 3},
    {1, 17}, {19, 23}, {45, 130}, {7, 9, 11}, {5, 1, 6}, {12, 33, 40}};

// ---- Direct transform ---------------------------------------------------------------------------

// Bound: per axis the recursions round each value a few times (at most 8 operations per pole,
// each relative eps) and the start error is below eps; the error of the samples' size is then
// amplified by at most the remaining axes' l1 norms. So |got - ref| <= 16 R P eps L^R max|f|
// (P poles, L the l1 norm of one axis's filter).
template <class T>
void check_direct(Boundary mode, int degree, double lambda, const std::vector<std::size_t>& dims,
                  std::size_t channels, std::mt19937& rng) {
  const Array<T> f = random_array<T>(dims, channels, rng);
  sv::SplineTransformOptions o;
  o.degree = degree;
  o.lambda = lambda;
  o.boundary = mode;
  ArrayD ref = ArrayD::from(f);
  sv::direct_transform(ref, o);
  Dev<T> d(f.size());
  d.upload(f);
  cu::direct_transform<T>(d.ptr(), cu::Layout::of(f), o);
  cu::synchronize("test");
  const Array<T> got = d.download(dims, channels);
  const double R = static_cast<double>(dims.size());
  const double P =
      static_cast<double>(std::max<std::size_t>(1, sv::smoothing_poles(degree, lambda).z.size()));
  const double L = direct_l1(degree, lambda);
  // A conjugate pair run as one complex pass pair keeps Im(H_z x) / Im(a), whose rounding is
  // relative to |H_z x| <= pair_amplification(z) |result| (cuda_bspline.h).
  double kappa = 1;
  for (const auto& z : sv::smoothing_poles(degree, lambda).z)
    if (z.imag() != 0 && cu::pair_amplification(z) <= cu::kPairTwoPassLimit)
      kappa = std::max(kappa, cu::pair_amplification(z));
  const double bound = 16 * R * P * kappa * eps<T>() * std::pow(L, R) * max_abs(ArrayD::from(f));
  expect_close(got, ref, bound,
               std::string("direct_") + (sizeof(T) == 4 ? "float" : "double") + " " +
                   sv::boundary_name(mode) + " n=" + std::to_string(degree) +
                   " lambda=" + std::to_string(lambda) + " " + shape_name(dims, channels));
}

TEST(CudaBspline, DirectTransformInterpolatingEveryDegreeModeShape) {
  REQUIRE_CUDA();
  std::mt19937 rng(std::random_device{}());
  for (int degree = 0; degree <= 7; ++degree)
    for (Boundary mode : kModes)
      for (const auto& dims : kShapes) {
        if (skip_big(dims)) continue;
        if ((degree + static_cast<int>(mode) + static_cast<int>(dims.size())) % 3 != 0 &&
            dims.size() == 3)
          continue;  // a third of the 3-D cases per degree (every mode still meets every degree)
        check_direct<float>(mode, degree, 0.0, dims, 1, rng);
        check_direct<double>(mode, degree, 0.0, dims, 1, rng);
      }
}

TEST(CudaBspline, DirectTransformLambdaZeroIsThePrefilterBitForBit) {
  REQUIRE_CUDA();
  std::mt19937 rng(7);
  for (int degree : {2, 3, 5, 7})
    for (Boundary mode : {Boundary::Reflect, Boundary::Mirror, Boundary::Periodic})
      for (const auto& dims : kShapes) {
        const sv::ArrayF f = random_array<float>(dims, 1, rng);
        cu::PrefilterConfig cfg;
        cfg.degree = degree;
        cfg.boundary = mode;
        sv::ArrayF a = f;
        cu::prefilter(a, cfg);
        sv::SplineTransformOptions o;
        o.degree = degree;
        o.boundary = mode;
        sv::ArrayF b = f;
        cu::direct_transform(b, o);
        for (std::size_t i = 0; i < a.size(); ++i)
          ASSERT_EQ(a.data()[i], b.data()[i]) << "degree " << degree << " " << shape_name(dims, 1);
      }
}

TEST(CudaBspline, DirectTransformSmoothingRealComplexAndLongPoles) {
  REQUIRE_CUDA();
  std::mt19937 rng(std::random_device{}());
  // Cubic: 1/144 is the double root; below it two real poles, above a conjugate pair; 30 puts
  // the poles near the unit circle (a horizon longer than a tile's apron: the line kernel).
  for (int degree : {1, 3, 5, 7})
    for (double lambda : {0.002, 0.5, 30.0})
      for (Boundary mode : kModes)
        for (const auto& dims : kShapes) {
          if (skip_big(dims)) continue;
          if (dims.size() == 3 && (static_cast<int>(mode) + degree) % 2) continue;
          check_direct<float>(mode, degree, lambda, dims, 1, rng);
          check_direct<double>(mode, degree, lambda, dims, 1, rng);
        }
  // Per-axis degrees and channels.
  for (Boundary mode : {Boundary::Reflect, Boundary::Mirror, Boundary::Periodic}) {
    const Array<float> f = random_array<float>({9, 14, 21}, 3, rng);
    sv::SplineTransformOptions o;
    o.degrees = {1, 3, 5};
    o.lambda = 0.1;
    o.boundary = mode;
    ArrayD ref = ArrayD::from(f);
    sv::direct_transform(ref, o);
    Array<float> got = f;
    cu::direct_transform(got, o);
    const double L = direct_l1(1, 0.1) * direct_l1(3, 0.1) * direct_l1(5, 0.1);
    double kappa = 1;  // as in check_direct
    for (int n : {1, 3, 5})
      for (const auto& z : sv::smoothing_poles(n, 0.1).z)
        if (z.imag() != 0 && cu::pair_amplification(z) <= cu::kPairTwoPassLimit)
          kappa = std::max(kappa, cu::pair_amplification(z));
    expect_close(got, ref, 16 * 3 * 3 * kappa * eps<float>() * L * max_abs(ArrayD::from(f)),
                 std::string("direct_float per-axis degrees ") + sv::boundary_name(mode));
  }
}

// Conjugate pairs in the prefilter's tiles (one second-order section each way): chunked lines
// (apron from the source and from the side buffer), transposed x tiles with channels, whole
// lines, every mode; against the CPU's double transform with check_direct's bound.
TEST(CudaBspline, DirectTransformPairsInTiles) {
  REQUIRE_CUDA();
  std::mt19937 rng(std::random_device{}());
  // Cubic: one pair (lambda 0.5: |z| 0.43; 30: |z| 0.74, near the real axis); quintic: a real
  // pole and a pair; degree 7, lambda 0.5: two pairs.
  EXPECT_TRUE(cu::direct_transform_tiled<float>(3, 0.5));
  EXPECT_TRUE(cu::direct_transform_tiled<float>(3, 30.0));
  EXPECT_TRUE(cu::direct_transform_tiled<float>(5, 0.5));
  EXPECT_TRUE(cu::direct_transform_tiled<float>(7, 0.5));
  const std::vector<std::vector<std::size_t>> shapes = {
      {2}, {3}, {40, 1500}, {700, 24}, {9, 70, 66}};
  for (const auto& [degree, lambda] :
       std::vector<std::pair<int, double>>{{3, 0.5}, {3, 30.0}, {5, 0.5}, {7, 0.5}})
    for (Boundary mode : {Boundary::Reflect, Boundary::Mirror, Boundary::Periodic})
      for (const auto& dims : shapes)
        for (std::size_t channels : {std::size_t{1}, std::size_t{2}}) {
          if (skip_big(dims)) continue;
          check_direct<float>(mode, degree, lambda, dims, channels, rng);
        }
  // 2-D images large enough for both axes in one pass (prefilter_2d_sections), and a larger
  // volume than kShapes has: a pair, two real poles.
  for (double lambda : {0.5, 0.005})
    for (Boundary mode : {Boundary::Reflect, Boundary::Mirror, Boundary::Periodic})
      for (const std::vector<std::size_t>& dims :
           {std::vector<std::size_t>{2600, 3001}, std::vector<std::size_t>{120, 150, 161}}) {
        if (skip_big(dims)) continue;
        check_direct<float>(mode, 3, lambda, dims, 1, rng);
      }
}

// ---- Indirect transform -------------------------------------------------------------------------

// Bound: positive taps summing to 1 per axis, at most 8 of them: each FIR adds at most 9 eps of
// max|c| (the values stay within max|c|), so |got - ref| <= 9 R eps max|c|.
TEST(CudaBspline, IndirectTransformPerAxisDegreesEveryMode) {
  REQUIRE_CUDA();
  std::mt19937 rng(std::random_device{}());
  for (Boundary mode : kModes)
    for (const auto& dims : kShapes)
      for (int d0 = 0; d0 <= 7; ++d0) {
        if (skip_big(dims)) continue;
        sv::SplineTransformOptions o;
        o.boundary = mode;
        for (std::size_t a = 0; a < dims.size(); ++a)
          o.degrees.push_back((d0 + 3 * static_cast<int>(a)) % 8);
        for (int fl = 0; fl < 2; ++fl) {
          const std::size_t ch = dims.size() == 2 && d0 == 3 ? 2 : 1;
          ArrayD ref;
          double bound = 0;
          std::string what = std::string("indirect_") + (fl ? "float " : "double ") +
                             sv::boundary_name(mode) + " n0=" + std::to_string(d0) + " " +
                             shape_name(dims, ch);
          if (fl) {
            Array<float> c = random_array<float>(dims, ch, rng);
            ref = ArrayD::from(c);
            sv::indirect_transform(ref, o);
            bound = 9 * static_cast<double>(dims.size()) * eps<float>() * max_abs(ArrayD::from(c));
            Dev<float> s(c.size()), d(c.size());
            s.upload(c);
            cu::indirect_transform<float>(s.ptr(), d.ptr(), cu::Layout::of(c), o);
            cu::synchronize("test");
            expect_close(d.download(dims, ch), ref, bound, what);
          } else {
            ArrayD c = random_array<double>(dims, ch, rng);
            ref = c;
            sv::indirect_transform(ref, o);
            bound = 9 * static_cast<double>(dims.size()) * eps<double>() * max_abs(c);
            Dev<double> s(c.size()), d(c.size());
            s.upload(c);
            cu::indirect_transform<double>(s.ptr(), d.ptr(), cu::Layout::of(c), o);
            cu::synchronize("test");
            expect_close(d.download(dims, ch), ref, bound, what);
          }
        }
      }
}

TEST(CudaBspline, IndirectAfterDirectGivesTheSamplesBack) {
  REQUIRE_CUDA();
  std::mt19937 rng(std::random_device{}());
  for (Boundary mode : {Boundary::Reflect, Boundary::Mirror, Boundary::Periodic}) {
    const Array<float> f = random_array<float>({31, 40}, 1, rng);
    sv::SplineTransformOptions o;
    o.degree = 5;
    o.boundary = mode;
    Array<float> a = f;
    cu::direct_transform(a, o);
    cu::indirect_transform(a, o);
    const double bound = 32 * 2 * 2 * eps<float>() * std::pow(direct_l1(5, 0), 2);
    expect_close(a, ArrayD::from(f), bound, std::string("roundtrip ") + sv::boundary_name(mode));
  }
}

// ---- Derivative filters -------------------------------------------------------------------------

// Bound for a filter of multi-index alpha on R axes, per term: the coefficients carry the direct
// transform's error (as above: 16 R P eps L^R max|f|; none when the input is coefficients), which
// the per-axis FIRs amplify by at most prod ||K_a||_1 <= 2^|alpha| (m differences of positive
// weights summing to 1); the FIRs themselves add at most (n + 2) eps per axis of 2^|alpha| max|c|,
// max|c| <= L^R max|f|. Terms add (the Laplacian) or combine no worse than their sum (the
// magnitude, a norm: |(|a| - |b|)| <= |a - b|).
double filter_bound(double eps_t, int degree, std::size_t R, int order_sum, double terms,
                    bool coefficients, double maxf) {
  const double L = coefficients ? 1.0 : direct_l1(degree, 0.0);
  const double P = std::max(1, degree / 2);
  const double coef = coefficients ? 0.0 : 16 * static_cast<double>(R) * P * eps_t;
  const double fir = static_cast<double>(R) * (degree + 2) * eps_t;
  return terms * (coef + fir) * std::pow(L, static_cast<double>(R)) * std::pow(2.0, order_sum) *
         maxf;
}

enum class Op { Derivative, Gradient, Magnitude, Hessian, Laplacian };

const char* op_name(Op op) {
  switch (op) {
    case Op::Derivative:
      return "derivative";
    case Op::Gradient:
      return "gradient";
    case Op::Magnitude:
      return "gradient_magnitude";
    case Op::Hessian:
      return "hessian";
    default:
      return "laplacian";
  }
}

// The device call of `op` (outputs in ptrs: one, or a gradient's or Hessian's components).
template <class T>
void run_device(Op op, const T* src, const std::vector<T*>& ptrs, const cu::Layout& layout,
                const std::vector<int>& order, const sv::DerivativeOptions& o) {
  switch (op) {
    case Op::Derivative:
      cu::derivative_filter<T>(src, ptrs[0], layout, order, o);
      break;
    case Op::Gradient:
      cu::gradient_filter<T>(src, ptrs, layout, o);
      break;
    case Op::Magnitude:
      cu::gradient_magnitude_filter<T>(src, ptrs[0], layout, o);
      break;
    case Op::Hessian:
      cu::hessian_filter<T>(src, ptrs, layout, o);
      break;
    case Op::Laplacian:
      cu::laplacian_filter<T>(src, ptrs[0], layout, o);
      break;
  }
  cu::synchronize("test");
}

template <class T>
void check_filter(Op op, Boundary mode, int degree, const std::vector<std::size_t>& dims,
                  std::size_t channels, bool coefficients, std::mt19937& rng) {
  const Array<T> f = random_array<T>(dims, channels, rng);
  const ArrayD fd = ArrayD::from(f);
  sv::DerivativeOptions o;
  o.degree = degree;
  o.boundary = mode;
  o.cval = 0.375;
  o.input_is_coefficients = coefficients;
  o.threads = 2;
  const std::size_t R = dims.size();
  std::vector<ArrayD> ref;
  int order_sum = 0;
  double terms = 1;
  std::vector<int> order(R, 0);
  switch (op) {
    case Op::Derivative: {
      std::uniform_int_distribution<int> u(0, degree);
      for (auto& m : order) m = u(rng);
      for (int m : order) order_sum += m;
      ref.push_back(sv::derivative_filter(fd, order, o));
      break;
    }
    case Op::Gradient:
      ref = sv::gradient_filter(fd, o);
      order_sum = 1;
      break;
    case Op::Magnitude:
      ref.push_back(sv::gradient_magnitude_filter(fd, o));
      order_sum = 1;
      terms = static_cast<double>(R);
      break;
    case Op::Hessian:
      ref = sv::hessian_filter(fd, o);
      order_sum = 2;
      break;
    case Op::Laplacian:
      ref.push_back(sv::laplacian_filter(fd, o));
      order_sum = 2;
      terms = static_cast<double>(R);
      break;
  }
  Dev<T> src(f.size());
  src.upload(f);
  std::vector<Dev<T>> outs;
  outs.reserve(ref.size());
  std::vector<T*> ptrs;
  for (std::size_t q = 0; q < ref.size(); ++q) {
    outs.emplace_back(f.size());
    ptrs.push_back(outs.back().ptr());
  }
  const cu::Layout layout = cu::Layout::of(f);
  run_device(op, src.ptr(), ptrs, layout, order, o);
  // GridConstant's cval is part of the input's size (it enters the coefficients).
  const double maxf = std::max(max_abs(fd), mode == Boundary::GridConstant ? o.cval : 0.0);
  const double bound = filter_bound(eps<T>(), degree, R, order_sum, terms, coefficients, maxf);
  std::string orders;
  for (int m : order) orders += std::to_string(m);
  for (std::size_t q = 0; q < ref.size(); ++q)
    expect_close(outs[q].download(dims, channels), ref[q], bound,
                 std::string(op_name(op)) + "_" + (sizeof(T) == 4 ? "float" : "double") + " " +
                     sv::boundary_name(mode) + " n=" + std::to_string(degree) +
                     (op == Op::Derivative ? " order=" + orders : "") + " term " +
                     std::to_string(q) + (coefficients ? " coefficients " : " samples ") +
                     shape_name(dims, channels));
}

const std::vector<std::vector<std::size_t>> kFilterShapes = {
    {1},    {2},      {6},      {41},      {3001},    {1, 9},
    {3, 2}, {17, 29}, {40, 77}, {5, 7, 9}, {2, 1, 3}, {11, 20, 35}};

TEST(CudaBspline, DerivativesOfRandomMultiIndicesEveryDegreeAndMode) {
  REQUIRE_CUDA();
  std::mt19937 rng(std::random_device{}());
  for (int degree = 1; degree <= 7; ++degree)
    for (Boundary mode : kModes)
      for (const auto& dims : kFilterShapes)
        for (int coefficients = 0; coefficients < 2; ++coefficients) {
          if (skip_big(dims)) continue;
          check_filter<float>(Op::Derivative, mode, degree, dims, 1, coefficients, rng);
          check_filter<double>(Op::Derivative, mode, degree, dims, 1, coefficients, rng);
        }
}

TEST(CudaBspline, GradientHessianLaplacianMagnitude) {
  REQUIRE_CUDA();
  std::mt19937 rng(std::random_device{}());
  for (Op op : {Op::Gradient, Op::Magnitude, Op::Hessian, Op::Laplacian})
    for (int degree : {2, 3, 4, 5, 7})
      for (Boundary mode : kModes)
        for (const auto& dims : kFilterShapes) {
          if (skip_big(dims)) continue;
          if (dims.size() == 1 && op == Op::Hessian && degree != 3) continue;
          const bool coefficients = (degree + static_cast<int>(mode)) % 3 == 0;
          check_filter<float>(op, mode, degree, dims, 1, coefficients, rng);
          check_filter<double>(op, mode, degree, dims, 1, coefficients, rng);
        }
  // Channels are filtered one by one.
  for (Op op : {Op::Derivative, Op::Laplacian, Op::Magnitude})
    check_filter<float>(op, Boundary::Mirror, 3, {13, 18}, 3, false, rng);
  // The gradient of degree 1 (order 1 of the linear spline: plain differences, right-hand).
  check_filter<double>(Op::Gradient, Boundary::Reflect, 1, {9, 10}, 1, false, rng);
}

// The streamed kernel (2-D and 3-D, spans up to 5) splits the outer axis into chunks of planes
// (read with their halo planes) and the plane into tiles: arrays large enough for several of
// each, with channels and every term count it takes (1, 2, 3 and 6), every mode, quintic too.
TEST(CudaBspline, StreamedFiltersAcrossChunksTilesAndChannels) {
  REQUIRE_CUDA();
  std::mt19937 rng(std::random_device{}());
  const std::vector<std::vector<std::size_t>> shapes = {{67, 45, 70}, {530, 300}};
  for (const auto& dims : shapes)
    for (Boundary mode : kModes)
      for (int degree : {3, 5}) {
        if (skip_big(dims)) continue;
        const bool coefficients = (degree + static_cast<int>(mode)) % 2 == 0;
        const Op op = (static_cast<int>(mode) % 2) ? Op::Hessian : Op::Laplacian;
        check_filter<float>(op, mode, degree, dims, 1, coefficients, rng);
        check_filter<double>(Op::Gradient, mode, degree, dims, 1, !coefficients, rng);
        check_filter<float>(Op::Derivative, mode, degree, dims, 2, coefficients, rng);
      }
  check_filter<double>(Op::Magnitude, Boundary::Mirror, 3, {70, 45, 67}, 3, true, rng);
}

// The streamed kernel (the default for 2-D and 3-D spans up to 5) and the tile kernel
// (SV_STENCIL_KERNEL=tile) sum the same products in the same order (x, then y, then z, taps
// ascending), each through one fused multiply-add, so their outputs agree bit for bit: 2-D widths
// that leave a partial block (300, 37), heights that leave several chunks, 3-D tiles cut in y,
// quintic spans, every term count (1, 2, 3, 6), every mode (GridConstant's outside value in the
// halos).
template <class T>
std::vector<Array<T>> run_op(Op op, const Array<T>& f, int degree, Boundary mode,
                             bool coefficients) {
  sv::DerivativeOptions o;
  o.degree = degree;
  o.boundary = mode;
  o.cval = 0.375;
  o.input_is_coefficients = coefficients;
  const std::size_t R = f.rank();
  const std::size_t count = op == Op::Gradient ? R : op == Op::Hessian ? R * (R + 1) / 2 : 1;
  Dev<T> src(f.size());
  src.upload(f);
  std::vector<Dev<T>> outs;
  outs.reserve(count);
  std::vector<T*> ptrs;
  for (std::size_t q = 0; q < count; ++q) {
    outs.emplace_back(f.size());
    ptrs.push_back(outs.back().ptr());
  }
  const cu::Layout layout = cu::Layout::of(f);
  std::vector<int> order(R, 0);
  order[R - 1] = 1;
  run_device(op, src.ptr(), ptrs, layout, order, o);
  std::vector<Array<T>> r;
  for (auto& d : outs) r.push_back(d.download(f.dims(), 1));
  return r;
}

template <class T>
void expect_kernels_agree(Op op, const std::vector<std::size_t>& dims, int degree, Boundary mode,
                          bool coefficients, std::mt19937& rng) {
  const Array<T> f = random_array<T>(dims, 1, rng);
  // The Laplacian's terms (not merged: that sums in another order, tested below).
  ASSERT_EQ(setenv("SV_STREAM_LAPLACIAN", "terms", 1), 0);
  const std::vector<Array<T>> streamed = run_op(op, f, degree, mode, coefficients);
  unsetenv("SV_STREAM_LAPLACIAN");
  ASSERT_EQ(setenv("SV_STENCIL_KERNEL", "tile", 1), 0);
  const std::vector<Array<T>> tile = run_op(op, f, degree, mode, coefficients);
  unsetenv("SV_STENCIL_KERNEL");
  ASSERT_EQ(streamed.size(), tile.size());
  for (std::size_t q = 0; q < streamed.size(); ++q) {
    std::size_t diff = 0, first = 0;
    for (std::size_t i = 0; i < f.size(); ++i) {
      const T a = streamed[q].data()[i], b = tile[q].data()[i];
      if (!(a == b)) {
        if (diff++ == 0) first = i;
      }
    }
    EXPECT_EQ(diff, 0u) << op_name(op) << (sizeof(T) == 4 ? " float " : " double ")
                        << sv::boundary_name(mode) << " n=" << degree << " term " << q << " "
                        << shape_name(dims, 1) << ": first difference at element " << first << " ("
                        << streamed[q].data()[first] << " against " << tile[q].data()[first] << ")";
  }
}

TEST(CudaBspline, StreamedKernelEqualsTheTileKernelBitForBit) {
  REQUIRE_CUDA();
  std::mt19937 rng(std::random_device{}());
  const std::vector<std::vector<std::size_t>> shapes = {
      {530, 300}, {75, 37}, {5, 3001}, {67, 45, 70}, {9, 20, 33}};
  for (const auto& dims : shapes)
    for (Boundary mode : kModes)
      for (int degree : {2, 3, 5}) {
        if (skip_big(dims)) continue;
        const bool coefficients = (degree + static_cast<int>(mode)) % 2 == 0;
        expect_kernels_agree<float>(Op::Laplacian, dims, degree, mode, coefficients, rng);
        expect_kernels_agree<double>(Op::Derivative, dims, degree, mode, !coefficients, rng);
        if (mode == Boundary::Reflect || mode == Boundary::GridConstant) {
          expect_kernels_agree<float>(Op::Hessian, dims, degree, mode, coefficients, rng);
          expect_kernels_agree<double>(Op::Gradient, dims, degree, mode, coefficients, rng);
          expect_kernels_agree<float>(Op::Magnitude, dims, degree, mode, coefficients, rng);
        }
      }
}

// The merged Laplacian (degrees 2 and 3, whose second-derivative FIR is a multiple of the value
// FIR minus the centre tap: one term of x, y and z FIRs instead of rank terms) against the same
// streamed kernel summing the terms: within the filters' bound, and really another path for
// degrees 2 and 3 (its rounding differs somewhere on these random arrays) while degree 5 keeps
// the terms (bit for bit the same). Its agreement with the CPU's double reference is in the
// tests above (every mode, 2-D and 3-D, channels).
TEST(CudaBspline, MergedLaplacianEqualsTheTermsWithinTheBound) {
  REQUIRE_CUDA();
  std::mt19937 rng(std::random_device{}());
  const std::vector<std::vector<std::size_t>> shapes = {{67, 45, 70}, {530, 300}, {9, 20, 33}};
  auto check = [&](auto zero, const std::vector<std::size_t>& dims, int degree, Boundary mode,
                   bool coefficients) {
    using T = decltype(zero);
    const Array<T> f = random_array<T>(dims, 1, rng);
    const Array<T> merged = run_op(Op::Laplacian, f, degree, mode, coefficients)[0];
    ASSERT_EQ(setenv("SV_STREAM_LAPLACIAN", "terms", 1), 0);
    const Array<T> terms = run_op(Op::Laplacian, f, degree, mode, coefficients)[0];
    unsetenv("SV_STREAM_LAPLACIAN");
    const std::size_t R = dims.size();
    const double bound = filter_bound(
        eps<T>(), degree, R, 2, static_cast<double>(R), coefficients,
        std::max(max_abs(ArrayD::from(f)), mode == Boundary::GridConstant ? 0.375 : 0.0));
    double worst = 0;
    std::size_t differ = 0;
    for (std::size_t i = 0; i < f.size(); ++i) {
      const double d = std::fabs(static_cast<double>(merged.data()[i]) - terms.data()[i]);
      worst = std::max(worst, d);
      differ += merged.data()[i] != terms.data()[i];
    }
    const std::string what = std::string(sizeof(T) == 4 ? "float " : "double ") +
                             sv::boundary_name(mode) + " n=" + std::to_string(degree) + " " +
                             shape_name(dims, 1);
    EXPECT_LE(worst, bound) << what;
    if (degree <= 3)
      EXPECT_GT(differ, 0u) << what << ": the merged path did not run";
    else
      EXPECT_EQ(differ, 0u) << what << ": degree 5 has no merged path";
  };
  for (const auto& dims : shapes)
    for (Boundary mode : kModes)
      for (int degree : {2, 3, 5}) {
        if (skip_big(dims)) continue;
        const bool coefficients = (degree + static_cast<int>(mode)) % 2 == 0;
        check(0.0f, dims, degree, mode, coefficients);
        check(0.0, dims, degree, mode, !coefficients);
      }
}

TEST(CudaBspline, HostConveniencesMatchTheDeviceCalls) {
  REQUIRE_CUDA();
  std::mt19937 rng(3);
  const ArrayD f = random_array<double>({15, 16, 17}, 1, rng);
  sv::DerivativeOptions o;
  o.degree = 3;
  o.boundary = Boundary::Nearest;
  const ArrayD lap = cu::laplacian_filter(f, o);
  const ArrayD ref = sv::laplacian_filter(f, o);
  expect_close(lap, ref, filter_bound(eps<double>(), 3, 3, 2, 3, false, max_abs(f)),
               "laplacian_host");
  const auto g = cu::gradient_filter(f, o);
  ASSERT_EQ(g.size(), 3u);
  const auto h = cu::hessian_filter(f, o);
  ASSERT_EQ(h.size(), 6u);
  const ArrayD dxy = cu::derivative_filter(f, {0, 1, 1}, o);
  for (std::size_t i = 0; i < dxy.size(); ++i)
    ASSERT_NEAR(dxy.data()[i], h[sv::hessian_index(1, 2, 3)].data()[i], 1e-12);
}

TEST(CudaBspline, RefusalsNameTheProblem) {
  REQUIRE_CUDA();
  const ArrayD f({8, 8});
  sv::DerivativeOptions o;
  o.degree = 3;
  auto message = [](auto fn) {
    try {
      fn();
    } catch (const sv::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] { cu::derivative_filter(f, {4, 0}, o); }).find("order"), std::string::npos);
  EXPECT_NE(message([&] { cu::derivative_filter(f, {1}, o); }).find("derivative"),
            std::string::npos);
  o.degree = 1;
  EXPECT_NE(message([&] { cu::laplacian_filter(f, o); }).find("second derivatives"),
            std::string::npos);
  sv::SplineTransformOptions t;
  t.degree = 4;
  t.lambda = 0.5;
  ArrayD g = f;
  EXPECT_NE(message([&] { cu::direct_transform(g, t); }), "no error");
  t.degree = 3;
  t.lambda = -1;
  EXPECT_NE(message([&] { cu::direct_transform(g, t); }), "no error");
  Dev<double> s(64), d(64);
  sv::DerivativeOptions ok;
  EXPECT_NE(message([&] {
              cu::gradient_filter<double>(s.ptr(), {d.ptr()}, cu::Layout{{8, 8}, 1}, ok);
            }).find("outputs expected"),
            std::string::npos);
}

}  // namespace
