// Tests of the GLSL derivative quantities (shaders/bspline_quantity.glsl through
// gl::Evaluator) against the double-precision CPU derivatives (sv::SplineDerivatives on the same
// float coefficients, at the same float positions):
//  - precise: every first and second partial derivative (mixed included), the gradient
//    magnitude, the Laplacian and the Hessian's determinant, 2-D and 3-D, every boundary mode of
//    the fetch (reflect, mirror, periodic), 1 channel (the textureGather form for reflect and
//    periodic) and 3 channels (texelFetch), positions uniform in [-3, N+2] per axis, fresh random
//    data; an order-3 multi-index of mixed axes (dxxy) as well; per-mm scaling of the axes;
//  - otf (and the unfiltered cubic): first partials, mixed first partials, gradient magnitude,
//    within the measured filter precision of the texture unit;
//  - the refusals: second derivatives of otf, any derivative of nearest, linear, lut;
//  - polynomial reproduction: the cubic spline of a quadratic is that quadratic away from the
//    borders, so its Laplacian and Hessian are constant and its gradient is linear (analytic
//    values, no spline code in the oracle).
// Bounds are derived from the float arithmetic (see derivative_bound) and printed with the
// measured errors at the end (svgltest::record).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "gl_test_util.h"
#include "splineview/derivative.h"
#include "splineview/error.h"
#include "splineview/prefilter.h"

namespace {

using sv::Boundary;
using sv::gl::EvalOptions;
using sv::gl::Fetch;
using sv::gl::Quantity;
using sv::gl::QuantityKind;

constexpr double kU = 5.960464477539063e-08;  // 2^-24, the unit roundoff of float

const std::vector<Boundary> kBoundaries = {Boundary::Reflect, Boundary::Mirror, Boundary::Periodic};

// Sum of |weights| of one axis for derivative order 0, 1, 2 (max over the fractional offset a):
// 1; 1 + 2a - 2a^2 <= 1.5; (1 - a) + |3a - 2| + |1 - 3a| + a <= 4.
double weight_sum(int order) {
  return order == 0 ? 1.0 : order == 1 ? 1.5 : 4.0;
}

// The float error of one partial derivative of texture-axis multi-index `o` on coefficients of
// largest magnitude cmax: per axis the weights carry up to ~6 roundings relative to that axis's
// sum of |weights| (b = 1 - a, the powers, the fma, the closing sum) and the nested fma chain
// adds up to 4 (4 taps per axis), so K = 10 units per axis times cmax times the product of the
// axes' sums of |weights|; times the axis scales (exact powers of 2 here, or one more rounding).
double partial_bound(const std::array<int, 3>& o, std::size_t rank, double cmax,
                     const std::array<double, 3>& scale) {
  double s = 1.0;
  for (std::size_t d = 0; d < rank; ++d)
    s *= weight_sum(o[d]) * std::pow(scale[d], static_cast<double>(o[d]));
  return 10.0 * static_cast<double>(rank) * kU * cmax * s + kU * cmax * s;
}

std::array<int, 3> unit(std::size_t d) {
  std::array<int, 3> o{0, 0, 0};
  o[d] = 1;
  return o;
}

// The array-order multi-index of a texture-order one.
std::vector<int> array_order(const std::array<int, 3>& o, std::size_t rank) {
  std::vector<int> a(rank);
  for (std::size_t d = 0; d < rank; ++d) a[rank - 1 - d] = o[d];
  return a;
}

// The multi-indices (texture order) a quantity is made of.
std::vector<std::array<int, 3>> parts(const Quantity& q, std::size_t rank) {
  std::vector<std::array<int, 3>> out;
  switch (q.kind) {
    case QuantityKind::Value:
      out.push_back({0, 0, 0});
      break;
    case QuantityKind::Partial:
      out.push_back(q.order);
      break;
    case QuantityKind::GradientMagnitude:
      for (std::size_t d = 0; d < rank; ++d) out.push_back(unit(d));
      break;
    case QuantityKind::Laplacian:
      for (std::size_t d = 0; d < rank; ++d) {
        std::array<int, 3> o{0, 0, 0};
        o[d] = 2;
        out.push_back(o);
      }
      break;
    case QuantityKind::HessianDeterminant:
      for (std::size_t a = 0; a < rank; ++a)
        for (std::size_t b = 0; b < rank; ++b) {
          std::array<int, 3> o{0, 0, 0};
          ++o[a];
          ++o[b];
          out.push_back(o);
        }
      break;
  }
  return out;
}

struct Reference {
  double value = 0;
  double bound = 0;
};

// The quantity in double from the parts' values p[i] (scaled per axis), and the bound that the
// parts' bounds e[i] (and the float arithmetic combining them) imply.
Reference combine(const Quantity& q, std::size_t rank, const std::vector<double>& p,
                  const std::vector<double>& e) {
  Reference r;
  const double R = static_cast<double>(rank);
  switch (q.kind) {
    case QuantityKind::Value:
    case QuantityKind::Partial:
      r.value = p[0];
      r.bound = e[0];
      break;
    case QuantityKind::GradientMagnitude: {
      // | |g~| - |g| | <= |g~ - g| <= sum e_a; the squares, sums and sqrt: (R + 2) u |g|.
      double s = 0, eb = 0;
      for (std::size_t d = 0; d < rank; ++d) {
        s += p[d] * p[d];
        eb += e[d];
      }
      r.value = std::sqrt(s);
      r.bound = eb + (R + 2) * kU * (r.value + eb);
      break;
    }
    case QuantityKind::Laplacian: {
      double s = 0, a = 0, eb = 0;
      for (std::size_t d = 0; d < rank; ++d) {
        s += p[d];
        a += std::fabs(p[d]) + e[d];
        eb += e[d];
      }
      r.value = s;
      r.bound = eb + R * kU * a;
      break;
    }
    case QuantityKind::HessianDeterminant: {
      const auto h = [&](std::size_t i, std::size_t j) { return p[i * rank + j]; };
      const auto he = [&](std::size_t i, std::size_t j) { return e[i * rank + j]; };
      // First order: sum over the entries of |cofactor| * error (an off-diagonal entry is one
      // fetch used twice); second and third order through the largest entry H and error E;
      // the products and sums of the expansion: 12 u times the sum of |terms| (2-D: 3 u).
      double H = 0, E = 0;
      for (std::size_t i = 0; i < rank * rank; ++i) {
        H = std::max(H, std::fabs(p[i]));
        E = std::max(E, e[i]);
      }
      if (rank == 2) {
        r.value = h(0, 0) * h(1, 1) - h(0, 1) * h(0, 1);
        r.bound = std::fabs(h(1, 1)) * he(0, 0) + std::fabs(h(0, 0)) * he(1, 1) +
                  2 * std::fabs(h(0, 1)) * he(0, 1) + 2 * E * E +
                  3 * kU * (std::fabs(h(0, 0) * h(1, 1)) + h(0, 1) * h(0, 1) + 4 * E * H);
      } else {
        double cof_sum = 0, terms = 0;
        for (std::size_t i = 0; i < 3; ++i)
          for (std::size_t j = 0; j < 3; ++j) {
            const std::size_t i1 = (i + 1) % 3, i2 = (i + 2) % 3;
            const std::size_t j1 = (j + 1) % 3, j2 = (j + 2) % 3;
            const double cof = h(i1, j1) * h(i2, j2) - h(i1, j2) * h(i2, j1);
            cof_sum += std::fabs(cof) * he(i, j);
            terms += std::fabs(h(0, i)) *
                     (std::fabs(h(1, j1) * h(2, j2)) + std::fabs(h(1, j2) * h(2, j1)));
          }
        r.value = h(0, 0) * (h(1, 1) * h(2, 2) - h(1, 2) * h(1, 2)) -
                  h(0, 1) * (h(0, 1) * h(2, 2) - h(1, 2) * h(0, 2)) +
                  h(0, 2) * (h(0, 1) * h(1, 2) - h(1, 1) * h(0, 2));
        r.bound = cof_sum + 9 * (E * E * H + E * E * E) + 12 * kU * (terms + 9 * E * H * H);
      }
      break;
    }
  }
  return r;
}

// The reference of `q` at the float positions: sv::SplineDerivatives in double on the float
// coefficients (input_is_coefficients), each part scaled by the axis scales; per position and
// channel the value and the bound of the GLSL result (filter: per-part filter term for the
// hardware-filtered otf fetch, added to each part's bound).
std::vector<Reference> reference(const sv::ArrayF& coeffs, const std::vector<float>& pos,
                                 const Quantity& q, Boundary boundary,
                                 const std::array<double, 3>& scale, double filter_term) {
  const std::size_t rank = coeffs.rank(), ch = coeffs.channels();
  const std::size_t m = pos.size() / rank;
  sv::DerivativeOptions opt;
  opt.degree = 3;
  opt.boundary = boundary;
  opt.input_is_coefficients = true;
  opt.threads = 1;
  const sv::SplineDerivatives<double> spline(sv::ArrayD::from(coeffs), opt);
  const double cmax = svgltest::max_abs(coeffs);
  const std::vector<std::array<int, 3>> ps = parts(q, rank);
  std::vector<std::vector<int>> orders;
  std::vector<double> factor, part_bound;
  for (const auto& o : ps) {
    orders.push_back(array_order(o, rank));
    double f = 1;
    int total = 0;
    for (std::size_t d = 0; d < rank; ++d) {
      f *= std::pow(scale[d], static_cast<double>(o[d]));
      total += o[d];
    }
    factor.push_back(f);
    part_bound.push_back(partial_bound(o, rank, cmax, scale) + (total > 0 ? filter_term * f : 0));
  }
  std::vector<double> dpos(pos.begin(), pos.end());
  std::vector<double> out(m * ps.size() * ch);
  spline.partials(orders, dpos.data(), m, out.data());
  std::vector<Reference> refs(m * ch);
  std::vector<double> p(ps.size());
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t c = 0; c < ch; ++c) {
      for (std::size_t k = 0; k < ps.size(); ++k)
        p[k] = out[(i * ps.size() + k) * ch + c] * factor[k];
      refs[i * ch + c] = combine(q, rank, p, part_bound);
    }
  return refs;
}

struct Shape {
  std::vector<std::size_t> dims;
  std::size_t channels;
};

const std::vector<Shape>& shapes(std::size_t rank) {
  static const std::vector<Shape> two = {{{1, 1}, 1},   {{2, 5}, 1},  {{13, 11}, 1},
                                         {{23, 37}, 3}, {{17, 1}, 1}, {{31, 29}, 1}};
  static const std::vector<Shape> three = {{{1, 1, 1}, 1}, {{2, 2, 2}, 1},  {{5, 1, 6}, 1},
                                           {{6, 7, 5}, 3}, {{9, 4, 11}, 1}, {{12, 13, 10}, 1}};
  return rank == 2 ? two : three;
}

std::string case_label(const EvalOptions& o, std::size_t rank) {
  return std::string(sv::gl::fetch_name(o.fetch)) + " " + std::to_string(rank) + "-D " +
         sv::gl::quantity_name(o.quantity);
}

// Evaluates q with `opt` on random samples' coefficients at random positions and checks every
// output against its reference and bound; records the worst error relative to the bound.
void check_quantity(EvalOptions opt, std::size_t rank, std::size_t m, double filter_precision) {
  for (Boundary b : kBoundaries) {
    opt.boundary = b;
    for (const Shape& shape : shapes(rank)) {
      const std::uint32_t seed = svgltest::fresh_seed();
      SCOPED_TRACE(case_label(opt, rank) + " " + sv::boundary_name(b) + " " +
                   svgltest::shape_name(shape.dims, shape.channels) + " seed " +
                   std::to_string(seed));
      const sv::ArrayF samples = svgltest::random_array(shape.dims, shape.channels, seed);
      sv::ArrayF coeffs = samples;
      if (opt.fetch != Fetch::CubicUnfiltered) {
        sv::PrefilterOptions p;
        p.degree = 3;
        p.boundary = b;
        sv::prefilter(coeffs, p);
      }
      const sv::gl::SplineTexture tex(coeffs, sv::gl::TexFormat::R32F);
      const std::vector<float> pos = svgltest::random_positions(shape.dims, m, seed);
      const std::vector<float> gpu = svgltest::evaluator(opt, rank).evaluate(tex, pos.data(), m);
      // The hardware-filtered fetch: the weights' pair positions err by the filter precision
      // (texels), which moves each of the 2^rank lerps by up to that times the coefficient
      // range; the pair weights sum (in absolute value) to the axis's sum of |weights|.
      double filter_term = 0;
      if (opt.fetch == Fetch::CubicOtf || opt.fetch == Fetch::CubicUnfiltered)
        filter_term = static_cast<double>(rank) * filter_precision * svgltest::value_range(coeffs) *
                      std::pow(1.5, static_cast<double>(rank));
      const std::vector<Reference> ref =
          reference(coeffs, pos, opt.quantity, b, opt.axis_scale, filter_term);
      const std::size_t ch = shape.channels;
      double worst = 0, worst_bound = 0, worst_ratio = 0;
      std::size_t failures = 0;
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t c = 0; c < ch; ++c) {
          const Reference& r = ref[i * ch + c];
          const double err = std::fabs(static_cast<double>(gpu[i * ch + c]) - r.value);
          if (!(err <= r.bound)) {
            if (++failures <= 3)
              ADD_FAILURE() << "position " << i << " channel " << c << ": GLSL " << gpu[i * ch + c]
                            << ", reference " << r.value << ", error " << err << " > bound "
                            << r.bound;
          }
          const double ratio = r.bound > 0 ? err / r.bound : 0;
          if (ratio >= worst_ratio) {
            worst_ratio = ratio;
            worst = err;
            worst_bound = r.bound;
          }
        }
      EXPECT_EQ(failures, 0u);
      const double cmax = std::max(svgltest::max_abs(coeffs), 1e-30);
      svgltest::record(case_label(opt, rank), worst / cmax, worst_bound / cmax,
                       worst / std::ldexp(cmax, -24));
    }
  }
}

class GlDerivatives : public ::testing::Test {
 protected:
  void SetUp() override { SVGL_REQUIRE_CONTEXT(); }
};

TEST_F(GlDerivatives, PreciseQuantitiesMatchTheDoubleReference) {
  for (std::size_t rank : {2u, 3u}) {
    for (const Quantity& q : sv::gl::quantity_choices(rank)) {
      if (q.kind == QuantityKind::Value) continue;
      EvalOptions opt;
      opt.fetch = Fetch::CubicPrecise;
      opt.quantity = q;
      check_quantity(opt, rank, 400, 0.0);
    }
    // An order-3 multi-index mixing axes (2 along x, 1 along y).
    EvalOptions opt;
    opt.fetch = Fetch::CubicPrecise;
    opt.quantity = sv::gl::parse_quantity("dxxy", rank);
    check_quantity(opt, rank, 400, 0.0);
  }
}

TEST_F(GlDerivatives, PreciseQuantitiesPerMillimetre) {
  // Anisotropic voxels (x 0.5 mm, y 2 mm, z 1.25 mm): the derivatives along each axis scale by
  // 1 / spacing per order.
  for (const char* name : {"dx", "dyz", "dzz", "gradient-magnitude", "laplacian", "hessian-det"}) {
    EvalOptions opt;
    opt.fetch = Fetch::CubicPrecise;
    opt.quantity = sv::gl::parse_quantity(name, 3);
    opt.axis_scale = {2.0, 0.5, 0.8};
    check_quantity(opt, 3, 300, 0.0);
  }
}

TEST_F(GlDerivatives, OnTheFlyFirstDerivativesWithinTheFilterPrecision) {
  const double hw = svgltest::filter_precision();
  for (Fetch f : {Fetch::CubicOtf, Fetch::CubicUnfiltered}) {
    for (std::size_t rank : {2u, 3u}) {
      for (const char* name : {"dx", "dy", "dz", "dxy", "gradient-magnitude"}) {
        if (rank == 2 && name[1] == 'z') continue;
        EvalOptions opt;
        opt.fetch = f;
        opt.quantity = sv::gl::parse_quantity(name, rank);
        check_quantity(opt, rank, 400, hw);
      }
    }
  }
}

TEST_F(GlDerivatives, MethodsWithoutTheQuantityAreRefused) {
  const auto refused = [](Fetch f, const char* name, const char* words) {
    EvalOptions opt;
    opt.fetch = f;
    opt.quantity = sv::gl::parse_quantity(name, 2);
    try {
      sv::gl::Evaluator ev(opt, 2);
      ADD_FAILURE() << sv::gl::fetch_name(f) << " " << name << " was accepted";
    } catch (const sv::Error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  refused(Fetch::CubicOtf, "laplacian", "first derivatives only");
  refused(Fetch::CubicOtf, "dxx", "first derivatives only");
  refused(Fetch::CubicUnfiltered, "hessian-det", "first derivatives only");
  refused(Fetch::Nearest, "dx", "no derivatives");
  refused(Fetch::Linear, "gradient-magnitude", "no derivatives");
  refused(Fetch::CubicLut, "dy", "no derivatives");
  for (const char* bad : {"dxxx", "dyx", "dz", "dq", "gradient", ""}) {
    EXPECT_THROW(sv::gl::parse_quantity(bad, 2), sv::Error) << bad;
  }
  EXPECT_NO_THROW(sv::gl::parse_quantity("dz", 3));
  // Names round-trip.
  for (std::size_t rank : {2u, 3u})
    for (const Quantity& q : sv::gl::quantity_choices(rank))
      EXPECT_EQ(sv::gl::parse_quantity(sv::gl::quantity_name(q), rank), q);
}

// The quadratic f(p) = sum_ab A_ab (p_a - m_a)(p_b - m_b) + sum_a b_a (p_a - m_a) + 0.25 in
// array axis order: gradient 2 A (p - m) + b, Hessian 2 A, Laplacian 2 trace A.
struct Quadratic {
  std::size_t rank;
  std::array<std::array<double, 3>, 3> A{};
  std::array<double, 3> b{}, mid{};
  double at(const double* p) const {
    double v = 0.25;
    for (std::size_t i = 0; i < rank; ++i) {
      v += b[i] * (p[i] - mid[i]);
      for (std::size_t j = 0; j < rank; ++j) v += A[i][j] * (p[i] - mid[i]) * (p[j] - mid[j]);
    }
    return v;
  }
};

TEST_F(GlDerivatives, QuadraticsAreReproduced) {
  for (std::size_t rank : {2u, 3u}) {
    const std::uint32_t seed = svgltest::fresh_seed();
    SCOPED_TRACE(std::to_string(rank) + "-D seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const std::size_t n = rank == 2 ? 48 : 36;
    const std::vector<std::size_t> dims(rank, n);
    Quadratic f{rank};
    for (std::size_t i = 0; i < rank; ++i) {
      f.mid[i] = static_cast<double>(n - 1) / 2;
      f.b[i] = u(rng) / static_cast<double>(n);
      for (std::size_t j = i; j < rank; ++j)
        f.A[i][j] = f.A[j][i] = u(rng) / static_cast<double>(n * n);
    }
    sv::ArrayF samples(dims, 1);
    std::vector<double> p(rank);
    for (std::size_t k = 0; k < samples.size(); ++k) {
      std::size_t r = k;
      for (std::size_t d = rank; d-- > 0;) {
        p[d] = static_cast<double>(r % n);
        r /= n;
      }
      samples.vec()[k] = static_cast<float>(f.at(p.data()));
    }
    sv::ArrayF coeffs = samples;
    sv::prefilter(coeffs, {3, Boundary::Mirror, 0});
    const sv::gl::SplineTexture tex(coeffs, sv::gl::TexFormat::R32F);
    // Positions at least 14 samples from every border: the prefilter's boundary extension (not
    // a quadratic) reaches the taps there attenuated by 0.268^13 (the pole of the cubic).
    const std::size_t m = 500;
    std::vector<float> pos =
        svgltest::random_positions(dims, m, seed, -14.0, -14.0);  // [14, N - 15]
    double trace = 0;
    for (std::size_t i = 0; i < rank; ++i) trace += 2 * f.A[i][i];
    double det = 0;
    if (rank == 2) {
      det = 4 * (f.A[0][0] * f.A[1][1] - f.A[0][1] * f.A[0][1]);
    } else {
      const auto& a = f.A;
      det = 8 * (a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
                 a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
                 a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]));
    }
    const double cmax = svgltest::max_abs(coeffs);
    // The samples are float: their rounding (u times the largest sample) perturbs the spline by
    // at most that times the prefilter's gain (3 per axis in sup norm), and each derivative of
    // the perturbation by that times the derivative weights' sums; plus the fetch's own bound.
    const double smax = svgltest::max_abs(samples);
    const auto bound_of = [&](const std::array<int, 3>& o) {
      double s = 1;
      for (std::size_t d = 0; d < rank; ++d) s *= weight_sum(o[d]);
      // The boundary extension's effect on the coefficients the taps read (13 or more samples
      // in): at most 0.268^13 of the data's size, times the weights' sums (doubled for safety).
      return partial_bound(o, rank, cmax, {1, 1, 1}) +
             kU * smax * std::pow(3.0, static_cast<double>(rank)) * s +
             2 * std::pow(0.268, 13) * smax * s;
    };
    double lap_bound = 0, e2 = 0;
    for (std::size_t d = 0; d < rank; ++d) {
      std::array<int, 3> o{0, 0, 0};
      o[d] = 2;
      lap_bound += bound_of(o);
      e2 = std::max(e2, bound_of(o));
    }
    EvalOptions opt;
    opt.fetch = Fetch::CubicPrecise;
    opt.boundary = Boundary::Mirror;
    opt.quantity = {QuantityKind::Laplacian};
    const std::vector<float> lap = svgltest::evaluator(opt, rank).evaluate(tex, pos.data(), m);
    opt.quantity = {QuantityKind::HessianDeterminant};
    const std::vector<float> hdet = svgltest::evaluator(opt, rank).evaluate(tex, pos.data(), m);
    double lap_err = 0, lap_lo = 1e300, lap_hi = -1e300, grad_err = 0, grad_bound = 0;
    for (std::size_t i = 0; i < m; ++i) {
      lap_err = std::max(lap_err, std::fabs(lap[i] - trace));
      lap_lo = std::min(lap_lo, static_cast<double>(lap[i]));
      lap_hi = std::max(lap_hi, static_cast<double>(lap[i]));
    }
    EXPECT_LE(lap_err, lap_bound) << "Laplacian " << trace;
    std::printf("quadratic %zu-D: Laplacian %.6g, GLSL %.6g .. %.6g (max error %.3g, bound %.3g)\n",
                rank, trace, lap_lo, lap_hi, lap_err, lap_bound);
    // The Hessian determinant: first-order perturbation by the entries' errors.
    double H = 0;
    for (std::size_t i = 0; i < rank; ++i)
      for (std::size_t j = 0; j < rank; ++j) H = std::max(H, 2 * std::fabs(f.A[i][j]));
    const double det_bound = (rank == 2 ? 4 : 18) * e2 * (H + e2) * (rank == 3 ? H + e2 : 1.0) +
                             12 * kU * std::pow(H + e2, static_cast<double>(rank)) * 6;
    for (std::size_t i = 0; i < m; ++i)
      EXPECT_LE(std::fabs(hdet[i] - det), det_bound) << "position " << i << " det " << det;
    // Each first partial is the linear 2 A (p - m) + b.
    for (std::size_t t = 0; t < rank; ++t) {
      opt.quantity = {QuantityKind::Partial, unit(t)};
      const std::vector<float> g = svgltest::evaluator(opt, rank).evaluate(tex, pos.data(), m);
      const std::size_t a = rank - 1 - t;  // the array axis of texture axis t
      const double eb = bound_of(unit(t));
      grad_bound = std::max(grad_bound, eb);
      for (std::size_t i = 0; i < m; ++i) {
        double exact = f.b[a];
        for (std::size_t j = 0; j < rank; ++j)
          exact += 2 * f.A[a][j] * (static_cast<double>(pos[i * rank + j]) - f.mid[j]);
        const double err = std::fabs(g[i] - exact);
        grad_err = std::max(grad_err, err);
        EXPECT_LE(err, eb) << "d/d"
                           << "xyz"[t] << " at position " << i;
      }
    }
    svgltest::record("quadratic " + std::to_string(rank) + "-D laplacian", lap_err / cmax,
                     lap_bound / cmax, lap_err / std::ldexp(cmax, -24));
    svgltest::record("quadratic " + std::to_string(rank) + "-D gradient", grad_err / cmax,
                     grad_bound / cmax, grad_err / std::ldexp(cmax, -24));
  }
}

}  // namespace
