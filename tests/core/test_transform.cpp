// The streamed geometric transforms (transform.h): the separable path equals the reference
// sampler at the same positions for every mode, degree, rank and channel count; the blockwise
// affine path equals sv::interpolate at the positions it computes; integer shifts reproduce the
// samples; the plane-wise affine equals a 2-D affine per plane; the general affine path's
// specialised evaluator equals the generic sampler exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "splineview/bspline.h"
#include "splineview/interpolant.h"
#include "splineview/sampler.h"
#include "splineview/transform.h"
#include "test_util.h"

namespace {

using sv::ArrayD;
using sv::Boundary;

const Boundary kModes[] = {Boundary::Reflect,     Boundary::Mirror,  Boundary::Periodic,
                           Boundary::Wrap,        Boundary::Nearest, Boundary::Constant,
                           Boundary::GridConstant};

// Every point of the outer product of per-axis positions, row-major (positions[i * rank + d]).
std::vector<double> outer(const std::vector<std::vector<double>>& axes) {
  std::vector<double> pos;
  std::vector<std::size_t> at(axes.size(), 0);
  std::size_t m = 1;
  for (const auto& a : axes) m *= a.size();
  for (std::size_t p = 0; p < m; ++p) {
    for (std::size_t d = 0; d < axes.size(); ++d) pos.push_back(axes[d][at[d]]);
    for (std::size_t d = axes.size(); d-- > 0;) {
      if (++at[d] < axes[d].size()) break;
      at[d] = 0;
    }
  }
  return pos;
}

double max_abs_diff(const std::vector<double>& a, const double* b) {
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(a[i] - b[i]));
  return d;
}

TEST(Transform, SeparableEqualsTheSamplerAtTheSamePositions) {
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-9, 30);
  const std::vector<std::vector<std::size_t>> shapes{{23}, {1}, {9, 14}, {2, 7}, {5, 6, 7}};
  for (const auto& dims : shapes)
    for (Boundary b : kModes)
      for (int degree = 0; degree <= sv::kMaxDegree; ++degree)
        for (std::size_t channels : {1, 2}) {
          SCOPED_TRACE(std::string(sv::boundary_name(b)) + " degree " + std::to_string(degree) +
                       " " + sv::describe_shape(dims, channels));
          const ArrayD c = svtest::random_array<double>(dims, channels, seed + 7u * degree);
          std::vector<std::vector<double>> axes;
          for (std::size_t d = 0; d < dims.size(); ++d) {
            std::vector<double> x(dims[d] + 5);
            for (double& v : x) v = u(rng);
            x[0] = 0;  // the edges and a tie
            x[1] = static_cast<double>(dims[d] - 1);
            x[2] = 2.5;
            axes.push_back(x);
          }
          sv::SamplerOptions opt;
          opt.degree = degree;
          opt.boundary = b;
          opt.cval = 0.75;
          const sv::Interpolant<double> spline(c, opt, false);
          const ArrayD got = sv::resample_axes(spline, axes, opt);
          const std::vector<double> want = sv::sample(c, outer(axes), opt);
          ASSERT_EQ(got.size(), want.size());
          EXPECT_LE(max_abs_diff(want, got.data()), 1e-14);
          // Samples (prefilter, and the padding of Nearest / GridConstant) = sv::interpolate.
          const sv::Interpolant<double> interp(c, opt, true);
          const ArrayD got2 = sv::resample_axes(interp, axes, opt);
          const std::vector<double> want2 = sv::interpolate(c, outer(axes), opt);
          EXPECT_LE(max_abs_diff(want2, got2.data()), 1e-13);
        }
}

TEST(Transform, FloatCoefficientsAndThreads) {
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const sv::ArrayF f = svtest::random_array<float>({40, 37, 3}, 1, seed);
  for (unsigned threads : {1u, 2u, 5u}) {
    sv::SamplerOptions opt;
    opt.boundary = Boundary::Mirror;
    opt.threads = threads;
    const ArrayD z = sv::zoom(f, {81, 20, 7}, false, opt);
    std::vector<std::vector<double>> axes{sv::zoom_positions(40, 81, false),
                                          sv::zoom_positions(37, 20, false),
                                          sv::zoom_positions(3, 7, false)};
    const std::vector<double> want = sv::interpolate(f, outer(axes), opt);
    EXPECT_LE(max_abs_diff(want, z.data()), 1e-13) << threads << " threads";
  }
}

TEST(Transform, ZoomPositionsFollowScipy) {
  const auto corners = sv::zoom_positions(10, 19, false);
  EXPECT_EQ(corners.front(), 0.0);
  EXPECT_EQ(corners.back(), 9.0);
  const auto areas = sv::zoom_positions(10, 20, true);
  EXPECT_EQ(areas.front(), -0.25);
  EXPECT_EQ(areas.back(), 9.25);
  EXPECT_EQ(sv::zoom_positions(5, 1, false), std::vector<double>{0.0});
}

TEST(Transform, IntegerShiftWithMirrorReproducesTheSamples) {
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const ArrayD f = svtest::random_array<double>({17, 21}, 1, seed);
  for (int degree = 0; degree <= sv::kMaxDegree; ++degree) {
    sv::SamplerOptions opt;
    opt.degree = degree;
    opt.boundary = Boundary::Mirror;
    const ArrayD s = sv::shift(f, {3.0, -4.0}, opt);
    double worst = 0;
    for (std::size_t y = 0; y < 17; ++y)
      for (std::size_t x = 0; x < 21; ++x) {
        // Output (y, x) takes input (y - 3, x + 4), mirrored at the edges.
        const long sy = sv::extend_index(static_cast<long>(y) - 3, 17, Boundary::Mirror);
        const long sx = sv::extend_index(static_cast<long>(x) + 4, 21, Boundary::Mirror);
        worst = std::max(worst, std::fabs(s.at2(y, x) - f.at2(static_cast<std::size_t>(sy),
                                                              static_cast<std::size_t>(sx))));
      }
    EXPECT_LE(worst, 1e-14) << "degree " << degree;  // the prefilter's rounding
  }
}

TEST(Transform, AffineEqualsInterpolateAtItsPositions) {
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const ArrayD f = svtest::random_array<double>({11, 13, 9}, 2, seed);
  const std::vector<double> m{0.9, -0.3, 0.2, 0.4, 1.1, -0.5, 0.1, 0.3, 0.8};
  const std::vector<double> off{-2.0, 1.5, 3.25};
  const std::vector<std::size_t> out_dims{12, 9, 10};
  for (Boundary b : kModes)
    for (int degree : {0, 1, 3, 5}) {
      sv::SamplerOptions opt;
      opt.degree = degree;
      opt.boundary = b;
      opt.cval = -0.5;
      const ArrayD got = sv::affine_transform(f, m, off, out_dims, opt);
      std::vector<double> pos;
      for (std::size_t i = 0; i < 12; ++i)
        for (std::size_t j = 0; j < 9; ++j)
          for (std::size_t k = 0; k < 10; ++k)
            for (std::size_t h = 0; h < 3; ++h)
              pos.push_back(
                  ((static_cast<double>(i) * m[h * 3] + static_cast<double>(j) * m[h * 3 + 1]) +
                   static_cast<double>(k) * m[h * 3 + 2]) +
                  off[h]);
      const std::vector<double> want = sv::interpolate(f, pos, opt);
      EXPECT_LE(max_abs_diff(want, got.data()), 1e-13)
          << sv::boundary_name(b) << " degree " << degree;
      // A diagonal matrix takes the separable path: the same values as the blockwise one.
      const std::vector<double> diag{1.3, 0, 0, 0, 0.7, 0, 0, 0, -0.9};
      const ArrayD sep = sv::affine_transform(f, diag, off, out_dims, opt);
      std::vector<double> dpos;
      for (std::size_t i = 0; i < 12; ++i)
        for (std::size_t j = 0; j < 9; ++j)
          for (std::size_t k = 0; k < 10; ++k) {
            dpos.push_back(static_cast<double>(i) * 1.3 + off[0]);
            dpos.push_back(static_cast<double>(j) * 0.7 + off[1]);
            dpos.push_back(static_cast<double>(k) * -0.9 + off[2]);
          }
      EXPECT_LE(max_abs_diff(sv::interpolate(f, dpos, opt), sep.data()), 1e-13)
          << sv::boundary_name(b) << " degree " << degree << " (diagonal)";
    }
}

// The general affine path sums interior points (and, for the modes that only extend indices,
// border and outside points) with an evaluator specialised per degree, rank and channel count;
// it must give exactly what the generic sampler gives at the same positions. Dyadic matrices and
// offsets put positions exactly on 0, N-1, the half-integers (degree 0 ties) and beyond.
TEST(Transform, AffineFastPathEqualsGenericSampler) {
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  struct Case {
    std::vector<std::size_t> in_dims, out_dims;
    std::vector<double> m, off;
  };
  const Case cases[] = {
      {{9, 12}, {14, 19}, {0.5, -0.25, 0.75, 0.5}, {-1.5, -2.0}},
      {{7, 10}, {9, 13}, {0.8660254037844387, 0.5, -0.5, 0.8660254037844387}, {0.3, 2.1}},
      {{5, 6, 7}, {6, 7, 8}, {0.5, 0.25, 0, -0.25, 0.75, 0.5, 0, -0.5, 1}, {-1.0, 0.5, -1.5}},
  };
  for (const Case& cs : cases)
    for (std::size_t channels : {1, 4}) {  // the specialised counts (2 and 3 go to sv::sample)
      const ArrayD f = svtest::random_array<double>(cs.in_dims, channels, seed);
      const std::size_t in_rank = cs.in_dims.size(), out_rank = cs.out_dims.size();
      std::vector<double> pos;
      std::vector<std::size_t> o(out_rank, 0);
      std::size_t m = 1;
      for (std::size_t d : cs.out_dims) m *= d;
      for (std::size_t p = 0; p < m; ++p) {
        for (std::size_t h = 0; h < in_rank; ++h) {
          double t = 0;  // scipy's order: the columns, then the offset
          for (std::size_t l = 0; l < out_rank; ++l)
            t += static_cast<double>(o[l]) * cs.m[h * out_rank + l];
          t += cs.off[h];
          pos.push_back(t);
        }
        for (std::size_t l = out_rank; l-- > 0;) {
          if (++o[l] < cs.out_dims[l]) break;
          o[l] = 0;
        }
      }
      for (Boundary b : kModes)
        for (int degree = 0; degree <= sv::kMaxDegree; ++degree) {
          sv::SamplerOptions opt;
          opt.degree = degree;
          opt.boundary = b;
          opt.cval = 0.75;
          const ArrayD got = sv::affine_transform(f, cs.m, cs.off, cs.out_dims, opt);
          const std::vector<double> want = sv::interpolate(f, pos, opt);
          ASSERT_EQ(want.size(), got.size());
          std::size_t differ = 0;
          for (std::size_t i = 0; i < want.size(); ++i)
            if (!(want[i] == got.data()[i])) ++differ;
          EXPECT_EQ(differ, 0u) << sv::boundary_name(b) << " degree " << degree << ", " << in_rank
                                << "-D, " << channels << " channel(s)";
        }
    }
}

// rotate's plane-wise path samples planes in groups (as the channels of one array): every mode
// and degree gives what the 2-D affine path gives per plane.
TEST(Transform, PlaneGroupsEqualPlaneByPlane) {
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const ArrayD f = svtest::random_array<double>({7, 6, 9}, 1, seed);  // 9 planes: 2 groups + 1
  const double m[4] = {0.5, -0.75, 0.75, 0.5}, off[2] = {1.5, -0.5};
  for (Boundary b : kModes)
    for (int degree = 0; degree <= sv::kMaxDegree; ++degree) {
      sv::SamplerOptions opt;
      opt.degree = degree;
      opt.boundary = b;
      opt.cval = -0.25;
      const ArrayD got = sv::affine_transform_planes(f, 0, 1, m, off, 8, 7, opt);
      std::size_t differ = 0;
      for (std::size_t x = 0; x < 9; ++x) {
        ArrayD plane({7, 6}, 1);
        for (std::size_t z = 0; z < 7; ++z)
          for (std::size_t y = 0; y < 6; ++y) plane.at2(z, y) = f.at3(z, y, x);
        const ArrayD want = sv::affine_transform(plane, std::vector<double>(m, m + 4),
                                                 std::vector<double>(off, off + 2), {8, 7}, opt);
        for (std::size_t a = 0; a < 8; ++a)
          for (std::size_t c = 0; c < 7; ++c)
            if (!(got.at3(a, c, x) == want.at2(a, c))) ++differ;
      }
      EXPECT_EQ(differ, 0u) << sv::boundary_name(b) << " degree " << degree;
    }
}

TEST(Transform, PlanesEqualTwoDimensionalAffinePerPlane) {
  const auto seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const ArrayD f = svtest::random_array<double>({6, 8, 7}, 1, seed);
  const double m[4] = {0.8, 0.6, -0.6, 0.8}, off[2] = {1.0, -0.5};
  sv::SamplerOptions opt;
  opt.boundary = Boundary::Nearest;
  // Axes (0, 2): planes f[:, y, :], output 9 x 5 per plane.
  const ArrayD got = sv::affine_transform_planes(f, 0, 2, m, off, 9, 5, opt);
  ASSERT_EQ(got.dims(), (std::vector<std::size_t>{9, 8, 5}));
  for (std::size_t y = 0; y < 8; ++y) {
    ArrayD plane({6, 7}, 1);
    for (std::size_t z = 0; z < 6; ++z)
      for (std::size_t x = 0; x < 7; ++x) plane.at2(z, x) = f.at3(z, y, x);
    const ArrayD want = sv::affine_transform(plane, std::vector<double>(m, m + 4),
                                             std::vector<double>(off, off + 2), {9, 5}, opt);
    for (std::size_t a = 0; a < 9; ++a)
      for (std::size_t b = 0; b < 5; ++b) EXPECT_EQ(got.at3(a, y, b), want.at2(a, b));
  }
}

TEST(Transform, BadArgumentsAreClearErrors) {
  const ArrayD f({4, 5}, 1);
  sv::SamplerOptions opt;
  EXPECT_THROW(sv::zoom(f, {3}, false, opt), sv::Error);
  EXPECT_THROW(sv::shift(f, {1.0}, opt), sv::Error);
  EXPECT_THROW(sv::affine_transform(f, {1, 0, 0}, {0, 0}, {3, 3}, opt), sv::Error);
  EXPECT_THROW(sv::affine_transform(f, {1e300, 0, 0, 1e300}, {0, 0}, {3, 3}, opt), sv::Error);
  opt.derivative_axis = 0;
  EXPECT_THROW(sv::zoom(f, {3, 3}, false, opt), sv::Error);
}

}  // namespace
