// Warping by an FFD grid or a dense field (ffd_warp.h): the zero grid is the identity for the
// interpolating methods; a constant integer shift equals sv::shift and a direct index shift; a
// smooth random grid matches a brute-force double reference (ffd_displacement per voxel, then
// sv::interpolate there); the dense-field variant equals the grid variant bit for bit; channels,
// output shapes and thread counts; the refusals name the problem.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "splineview/error.h"
#include "splineview/ffd.h"
#include "splineview/ffd_warp.h"
#include "splineview/interpolant.h"
#include "splineview/sampler.h"
#include "splineview/transform.h"
#include "test_util.h"

namespace {

using sv::Array;
using Shape = std::vector<std::size_t>;
using Delta = std::vector<int>;

template <class T>
Array<T> random_grid(const Shape& shape, const Delta& delta, std::uint32_t seed, double amplitude,
                     std::size_t extra = 0) {
  Shape m = sv::ffd_grid_shape(shape, delta);
  for (auto& v : m) v += extra;
  return svtest::random_array<T>(m, shape.size(), seed, -amplitude, amplitude);
}

template <class T>
Array<T> constant_grid(const Shape& shape, const Delta& delta, const std::vector<double>& u) {
  Array<T> g(sv::ffd_grid_shape(shape, delta), shape.size());
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = static_cast<T>(u[i % u.size()]);
  return g;
}

template <class A, class B>
double max_diff(const Array<A>& a, const Array<B>& b) {
  EXPECT_EQ(a.dims(), b.dims());
  EXPECT_EQ(a.channels(), b.channels());
  double m = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    m = std::max(m, std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
  return m;
}

template <class T>
double range_of(const Array<T>& a) {
  const auto [lo, hi] = std::minmax_element(a.vec().begin(), a.vec().end());
  return static_cast<double>(*hi) - static_cast<double>(*lo);
}

// Nearest and GridConstant pad the samples by 33 (cubic) to 69 (septic) per side before the
// prefilter: in 3-D with degree 5 and 7 that is millions of points per call, too slow for a
// sanitizer build at this test's count of calls; those pairs are covered in 2-D.
bool too_slow(sv::Method m, sv::Boundary b, std::size_t rank) {
  return rank == 3 && sv::method_degree(m) > 3 &&
         (b == sv::Boundary::Nearest || b == sv::Boundary::GridConstant);
}

template <class T>
constexpr double eps() {
  return std::numeric_limits<T>::epsilon();
}

std::string message_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const sv::Error& e) {
    return e.what();
  }
  return "(no sv::Error)";
}

const sv::Method kAllMethods[] = {sv::Method::Nearest,         sv::Method::Linear,
                                  sv::Method::CubicUnfiltered, sv::Method::Cubic,
                                  sv::Method::Quintic,         sv::Method::Septic};

// The prefilter's round trip (interpolating at the samples) in ulp of the data scale: exact for
// nearest and linear, a few ulp for cubic, more for the larger gains of quintic and septic.
double round_trip_ulp(sv::Method m) {
  switch (m) {
    case sv::Method::Cubic:
      return 16;
    case sv::Method::Quintic:
      return 64;
    case sv::Method::Septic:
      return 512;
    default:
      return 0;
  }
}

// The positions of every voxel of `shape` displaced by `u` (rank values per voxel, or none).
template <class U>
std::vector<double> displaced(const Shape& shape, const U* u) {
  const std::size_t r = shape.size();
  const std::size_t nz = r == 3 ? shape[0] : 1, ny = shape[r - 2], nx = shape[r - 1];
  std::vector<double> pos(nz * ny * nx * r);
  for (std::size_t z = 0, i = 0; z < nz; ++z)
    for (std::size_t y = 0; y < ny; ++y)
      for (std::size_t x = 0; x < nx; ++x, ++i) {
        const double p3[3] = {double(z), double(y), double(x)};
        for (std::size_t a = 0; a < r; ++a)
          pos[i * r + a] = p3[a + 3 - r] + (u ? static_cast<double>(u[i * r + a]) : 0.0);
      }
  return pos;
}

// sv::interpolate (or sv::sample for the methods that do not prefilter) of `f` at `pos`, the
// result rounded to T as warp rounds it.
template <class T>
Array<T> interpolated(const Array<T>& f, const std::vector<double>& pos, const Shape& out_shape,
                      const sv::WarpOptions& opt) {
  const sv::SamplerOptions so{sv::method_degree(opt.method), opt.boundary, -1, 0, opt.cval};
  Array<T> out(out_shape, f.channels());
  std::vector<double> v(out.size());
  if (sv::method_prefilters(opt.method))
    sv::interpolate(f, pos.data(), out.points(), v.data(), so);
  else
    sv::sample(f, pos.data(), out.points(), v.data(), so);
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<T>(v[i]);
  return out;
}

// The zero grid gives the field 0 exactly, so warp is sv::interpolate at the voxels, bit for
// bit, and that is the input to the prefilter's round trip.
template <class T>
void zero_grid_is_identity() {
  const std::uint32_t seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  double worst_cubic = 0;
  const Shape shapes[] = {{23, 31}, {9, 12, 17}};
  const Delta deltas[] = {{4, 5}, {3, 4, 5}};
  for (int s = 0; s < 2; ++s)
    for (std::size_t channels : {1, 3}) {
      const Array<T> f = svtest::random_array<T>(shapes[s], channels, seed + s, -1, 1);
      const Array<T> zero(sv::ffd_grid_shape(shapes[s], deltas[s]), shapes[s].size());
      const std::vector<double> pos = displaced<T>(shapes[s], nullptr);
      for (sv::Method m : kAllMethods)
        for (sv::Boundary b : {sv::Boundary::Reflect, sv::Boundary::Nearest,
                               sv::Boundary::GridConstant, sv::Boundary::Constant}) {
          if (too_slow(m, b, shapes[s].size())) continue;
          sv::WarpOptions opt;
          opt.method = m;
          opt.boundary = b;
          opt.cval = 0.25;
          const Array<T> w = sv::warp(f, zero, deltas[s], opt);
          SCOPED_TRACE(std::string(sv::method_name(m)) + " " + sv::boundary_name(b) + " " +
                       std::to_string(shapes[s].size()) + "-D, " + std::to_string(channels) +
                       " channels");
          EXPECT_EQ(max_diff(w, interpolated(f, pos, shapes[s], opt)), 0.0);
          // The round trip itself (the prefilter's accuracy, not the warp's) for the methods
          // up to cubic; quintic and septic amplify rounding more (test_prefilter covers them).
          if (m == sv::Method::CubicUnfiltered || sv::method_degree(m) > 3) continue;
          const double d = max_diff(w, f);
          const double range = range_of(f);  // ulp of the range, as test_prefilter counts
          EXPECT_LE(d, round_trip_ulp(m) * eps<T>() * range) << d / (eps<T>() * range) << " ulp";
          if (m == sv::Method::Cubic) worst_cubic = std::max(worst_cubic, d / (eps<T>() * range));
        }
    }
  std::printf("zero grid, %s: prefiltered cubic within %.2f ulp of the range of the input\n",
              sizeof(T) == 4 ? "float" : "double", worst_cubic);
}

TEST(FfdWarp, ZeroGridIsTheIdentityDouble) {
  zero_grid_is_identity<double>();
}
TEST(FfdWarp, ZeroGridIsTheIdentityFloat) {
  zero_grid_is_identity<float>();
}

// A bound on the spline's slope along any axis: the largest difference of neighbouring
// coefficients (the derivative of a degree-n spline is a degree-(n-1) spline of them).
template <class T>
double slope_bound(const Array<T>& f, const sv::WarpOptions& opt) {
  const sv::SamplerOptions so{std::max(1, sv::method_degree(opt.method)), opt.boundary, -1, 0,
                              opt.cval};
  const sv::Interpolant<T> spline(f, so, sv::method_prefilters(opt.method));
  const Array<T>& c = spline.coefficients();
  double m = std::fabs(opt.cval);  // GridConstant's cval beyond the edges
  for (T v : c.vec()) m = std::max(m, 2.0 * std::fabs(static_cast<double>(v)));
  return m;  // |c[k+1] - c[k]| <= 2 max |c|
}

// All control points (0, 2, -3) (3-D) or (2, -3) (2-D): output x takes the input at x + u, which
// is sv::shift by -u (scipy: output i takes i - s) with every mode, and f[x + u] itself away
// from the borders. The field of a constant grid is that constant only to a few ulp (the weights
// sum to 1 in floating point only), so the values are exact where the method is piecewise
// constant (nearest) and otherwise within (position error) x (slope) of the exact shift; under
// wrap and constant, voxels that land exactly on the first or last sample are skipped (those
// modes jump there: a position an ulp below 0 is the last sample under wrap, cval under
// constant).
template <class T>
void constant_integer_shift() {
  const std::uint32_t seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  double worst_cubic_shift = 0, worst_linear_index = 0;
  const Shape shapes[] = {{26, 21}, {8, 14, 19}};
  const Delta deltas[] = {{5, 3}, {4, 5, 3}};
  const std::vector<double> shifts[] = {{2, -3}, {0, 2, -3}};
  for (int s = 0; s < 2; ++s) {
    const Shape& shape = shapes[s];
    const std::size_t r = shape.size();
    const Array<T> f = svtest::random_array<T>(shape, 2, seed + s, 0, 1);
    const Array<T> grid = constant_grid<T>(shape, deltas[s], shifts[s]);
    const Array<T> u = sv::ffd_field(grid, deltas[s], shape);
    double dpos = 0;  // how far the field is from the constant
    for (std::size_t i = 0; i < u.size(); ++i)
      dpos = std::max(dpos, std::fabs(static_cast<double>(u[i]) - shifts[s][i % r]));
    EXPECT_LE(dpos, 8 * eps<T>() * 3);
    const std::vector<double> pos = displaced(shape, u.data());
    for (sv::Method m : kAllMethods)
      for (sv::Boundary b :
           {sv::Boundary::Reflect, sv::Boundary::Mirror, sv::Boundary::Periodic, sv::Boundary::Wrap,
            sv::Boundary::Nearest, sv::Boundary::Constant, sv::Boundary::GridConstant}) {
        SCOPED_TRACE(std::string(sv::method_name(m)) + " " + sv::boundary_name(b) + " " +
                     std::to_string(r) + "-D");
        if (too_slow(m, b, r)) continue;
        sv::WarpOptions opt;
        opt.method = m;
        opt.boundary = b;
        opt.cval = 0.5;
        const Array<T> w = sv::warp(f, grid, deltas[s], opt);
        // Bit for bit sv::interpolate at the positions the field gives.
        EXPECT_EQ(max_diff(w, interpolated(f, pos, shape, opt)), 0.0);
        // Against sv::shift (the same spline, exact integer positions).
        sv::SamplerOptions so{sv::method_degree(m), b, -1, 0, 0.5};
        std::vector<double> minus(r);
        for (std::size_t a = 0; a < r; ++a) minus[a] = -shifts[s][a];
        const Array<double> ref = sv::shift(f, minus, so, sv::method_prefilters(m));
        const double tol =
            m == sv::Method::Nearest ? 0.0 : double(r) * dpos * slope_bound(f, opt) + 4 * eps<T>();
        const bool seams = b == sv::Boundary::Wrap || b == sv::Boundary::Constant;
        double worst_shift = 0, worst_index = 0;
        const std::size_t nz = r == 3 ? shape[0] : 1, ny = shape[r - 2], nx = shape[r - 1];
        for (std::size_t z = 0, i = 0; z < nz; ++z)
          for (std::size_t y = 0; y < ny; ++y)
            for (std::size_t x = 0; x < nx; ++x, ++i) {
              const long sy = static_cast<long>(y) + static_cast<long>(shifts[s][r - 2]);
              const long sx = static_cast<long>(x) + static_cast<long>(shifts[s][r - 1]);
              const bool on_seam = sy == 0 || sx == 0 || sy == static_cast<long>(ny) - 1 ||
                                   sx == static_cast<long>(nx) - 1 ||
                                   (r == 3 && (z == 0 || z == nz - 1));
              const bool inside =
                  sy >= 0 && sx >= 0 && sy < static_cast<long>(ny) && sx < static_cast<long>(nx);
              for (std::size_t c = 0; c < 2; ++c) {
                const double v = static_cast<double>(w[i * 2 + c]);
                if (!(seams && on_seam))
                  worst_shift = std::max(worst_shift, std::fabs(v - ref[i * 2 + c]));
                if (inside && !(seams && on_seam) && m != sv::Method::CubicUnfiltered)
                  worst_index = std::max(
                      worst_index,
                      std::fabs(v - static_cast<double>(
                                        f[((z * ny + sy) * nx + sx) * 2 + c])));  // f[x + u]
              }
            }
        EXPECT_LE(worst_shift, tol) << worst_shift / eps<T>() << " ulp";
        if (m == sv::Method::Cubic)
          worst_cubic_shift = std::max(worst_cubic_shift, worst_shift / eps<T>());
        if (m == sv::Method::Linear)
          worst_linear_index = std::max(worst_linear_index, worst_index / eps<T>());
        if (m == sv::Method::CubicUnfiltered) continue;  // smooths: not the samples
        EXPECT_LE(worst_index, tol + round_trip_ulp(m) * eps<T>() * range_of(f))
            << worst_index / eps<T>() << " ulp";
      }
  }
  std::printf(
      "constant shift, %s: cubic within %.2f ulp of sv::shift, linear within %.2f ulp of the "
      "shifted samples (values in [0, 1])\n",
      sizeof(T) == 4 ? "float" : "double", worst_cubic_shift, worst_linear_index);
}

TEST(FfdWarp, ConstantIntegerShiftIsAShiftDouble) {
  constant_integer_shift<double>();
}
TEST(FfdWarp, ConstantIntegerShiftIsAShiftFloat) {
  constant_integer_shift<float>();
}

// The brute-force double reference: the displacement by ffd_displacement at each voxel, then
// sv::interpolate (prefilter + sample, padded for the modes that need it) at x + u.
Array<double> reference_warp(const Array<double>& f, const Array<double>& grid, const Delta& delta,
                             const Shape& out_shape, const sv::WarpOptions& opt) {
  const std::size_t r = out_shape.size();
  Array<double> probe(out_shape, 1);
  std::vector<double> pos(probe.points() * r);
  const std::size_t nz = r == 3 ? out_shape[0] : 1, ny = out_shape[r - 2], nx = out_shape[r - 1];
  for (std::size_t z = 0, i = 0; z < nz; ++z)
    for (std::size_t y = 0; y < ny; ++y)
      for (std::size_t x = 0; x < nx; ++x, ++i) {
        const double p3[3] = {double(z), double(y), double(x)};
        const double* p = p3 + (3 - r);
        double u[3];
        sv::ffd_displacement(grid, delta, p, u);
        for (std::size_t a = 0; a < r; ++a) pos[i * r + a] = p[a] + u[a];
      }
  sv::SamplerOptions so{sv::method_degree(opt.method), opt.boundary, -1, 0, opt.cval};
  Array<double> out(out_shape, f.channels());
  if (sv::method_prefilters(opt.method))
    sv::interpolate(f, pos.data(), probe.points(), out.data(), so);
  else
    sv::sample(f, pos.data(), probe.points(), out.data(), so);
  return out;
}

TEST(FfdWarp, SmoothRandomGridMatchesTheDoubleReference) {
  const std::uint32_t seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  struct Case {
    Shape shape;
    Delta delta;
    Shape out_shape;  // empty: the moving image's
  };
  const Case cases[] = {{{37, 29}, {5, 4}, {}},
                        {{30, 25}, {3, 7}, {33, 20}},
                        {{11, 17, 14}, {4, 5, 3}, {}},
                        {{9, 10, 12}, {2, 3, 4}, {12, 8, 13}}};
  int k = 0;
  double worst_d = 0, worst_f = 0, worst_d_bound = 0, worst_f_bound = 0;  // in ulp of max|f| = 3
  double worst_cubic_d = 0, worst_cubic_f = 0;
  for (const Case& cs : cases) {
    ++k;
    const Shape out_shape = cs.out_shape.empty() ? cs.shape : cs.out_shape;
    const Array<double> f = svtest::random_array<double>(cs.shape, 1 + k % 3, seed + k, -2, 3);
    // Displacements up to 4 voxels (smooth: one random value per control point), so positions
    // leave the image near its borders and every mode is exercised.
    const Array<double> grid = random_grid<double>(out_shape, cs.delta, seed + 100 + k, 4.0, k % 2);
    const Array<float> gridf = Array<float>::from(grid);
    const Array<float> ff = Array<float>::from(f);
    const std::size_t r = out_shape.size();
    const Array<double> uref = sv::ffd_field_reference(grid, cs.delta, out_shape);
    const std::vector<double> ref_pos = displaced(out_shape, uref.data());
    const double dpos = max_diff(sv::ffd_field(grid, cs.delta, out_shape), uref);
    const double dposf = max_diff(sv::ffd_field(gridf, cs.delta, out_shape), uref);
    EXPECT_LE(dpos, 8 * eps<double>() * 4);
    EXPECT_LE(dposf, 8 * eps<float>() * 4);
    for (sv::Method m : kAllMethods)
      for (sv::Boundary b :
           {sv::Boundary::Reflect, sv::Boundary::Mirror, sv::Boundary::Periodic, sv::Boundary::Wrap,
            sv::Boundary::Nearest, sv::Boundary::Constant, sv::Boundary::GridConstant}) {
        if (m == sv::Method::Nearest) continue;  // a tie decided by an ulp of u: tested apart
        SCOPED_TRACE(std::string(sv::method_name(m)) + " " + sv::boundary_name(b) + " case " +
                     std::to_string(k));
        if (too_slow(m, b, r)) continue;
        sv::WarpOptions opt;
        opt.method = m;
        opt.boundary = b;
        opt.cval = -0.75;
        opt.output_shape = cs.out_shape;
        const Array<double> ref = reference_warp(f, grid, cs.delta, out_shape, opt);
        // Double: the field is within a few ulp of max|u| of the reference's (dpos), so the
        // values are within r dpos (slope) of the reference, plus the rounding of the sums of up
        // to 8^3 products of weights and coefficients (64 ulp of L = 2 max|c|).
        const Array<double> w = sv::warp(f, grid, cs.delta, opt);
        const double L = slope_bound(f, opt);
        const double d = max_diff(w, ref);
        const double bound = double(r) * dpos * L + 64 * eps<double>() * L;
        EXPECT_LE(d, bound) << d / eps<double>() << " ulp";
        worst_d = std::max(worst_d, d / (3 * eps<double>()));
        if (m == sv::Method::Cubic)
          worst_cubic_d = std::max(worst_cubic_d, d / (3 * eps<double>()));
        worst_d_bound = std::max(worst_d_bound, d / bound);
        // Float: grid, field, samples and coefficients in float; against sv::interpolate of the
        // float samples at the reference positions (what differs is the float field).
        const Array<float> wf = sv::warp(ff, gridf, cs.delta, opt);
        const Array<float> reff = interpolated(ff, ref_pos, out_shape, opt);
        const double Lf = slope_bound(ff, opt);
        const double df = max_diff(wf, reff);
        const double boundf = double(r) * dposf * Lf + 64 * eps<float>() * Lf;
        worst_f = std::max(worst_f, df / (3 * eps<float>()));
        if (m == sv::Method::Cubic)
          worst_cubic_f = std::max(worst_cubic_f, df / (3 * eps<float>()));
        worst_f_bound = std::max(worst_f_bound, df / boundf);
        EXPECT_LE(df, boundf) << df / eps<float>() << " ulp";
      }
  }
  std::printf(
      "warp vs the double reference, worst: double %.2f ulp of max|f| (%.3f of the bound), "
      "float %.2f float ulp (%.3f of the bound); prefiltered cubic: double %.2f, float %.2f\n",
      worst_d, worst_d_bound, worst_f, worst_f_bound, worst_cubic_d, worst_cubic_f);
}

TEST(FfdWarp, NearestPicksTheReferenceSampleAwayFromTies) {
  const std::uint32_t seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Shape shape{13, 15, 11};
  const Delta delta{3, 4, 5};
  const Array<double> f = svtest::random_array<double>(shape, 1, seed, 0, 1);
  const Array<double> grid = random_grid<double>(shape, delta, seed + 1, 3.0);
  sv::WarpOptions opt;
  opt.method = sv::Method::Nearest;
  const Array<double> w = sv::warp(f, grid, delta, opt);
  const Array<double> ref = reference_warp(f, grid, delta, shape, opt);
  const Array<double> u = sv::ffd_field_reference(grid, delta, shape);
  std::size_t compared = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    bool near_tie = false;
    for (std::size_t a = 0; a < 3; ++a) {
      const double frac = u[i * 3 + a] - std::floor(u[i * 3 + a]);
      near_tie = near_tie || std::fabs(frac - 0.5) < 1e-9;
    }
    if (near_tie) continue;
    ++compared;
    ASSERT_EQ(w[i], ref[i]) << "voxel " << i;
  }
  EXPECT_GT(compared, w.size() / 2);
}

TEST(FfdWarp, DenseFieldVariantEqualsTheGridVariant) {
  const std::uint32_t seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Shape shapes[] = {{41, 33}, {14, 19, 23}};
  const Delta deltas[] = {{6, 4}, {5, 3, 7}};
  for (int s = 0; s < 2; ++s) {
    const Array<float> f = svtest::random_array<float>(shapes[s], 2, seed + s, 0, 100);
    const Array<float> grid = random_grid<float>(shapes[s], deltas[s], seed + 10 + s, 3.0, 1);
    for (sv::Method m : {sv::Method::Linear, sv::Method::Cubic, sv::Method::Quintic}) {
      sv::WarpOptions opt;
      opt.method = m;
      opt.boundary = sv::Boundary::Mirror;
      const Array<float> field = sv::ffd_field(grid, deltas[s], shapes[s]);
      const Array<float> a = sv::warp(f, grid, deltas[s], opt);
      const Array<float> b = sv::warp_with_field(f, field, opt);
      EXPECT_EQ(max_diff(a, b), 0.0) << sv::method_name(m);
      // Thread counts change nothing.
      opt.threads = 1;
      EXPECT_EQ(max_diff(sv::warp(f, grid, deltas[s], opt), a), 0.0);
      opt.threads = 3;
      EXPECT_EQ(max_diff(sv::warp_with_field(f, field, opt), a), 0.0);
    }
  }
}

TEST(FfdWarp, ChannelsAreWarpedAlike) {
  const std::uint32_t seed = svtest::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Shape shape{12, 13, 14};
  const Delta delta{4, 4, 4};
  const Array<double> f = svtest::random_array<double>(shape, 4, seed, -1, 1);
  const Array<double> grid = random_grid<double>(shape, delta, seed + 1, 2.5);
  const Array<double> w = sv::warp(f, grid, delta);
  ASSERT_EQ(w.channels(), 4u);
  for (std::size_t c = 0; c < 4; ++c) {
    Array<double> one(shape, 1);
    for (std::size_t i = 0; i < one.size(); ++i) one[i] = f[i * 4 + c];
    const Array<double> wc = sv::warp(one, grid, delta);
    double d = 0;
    for (std::size_t i = 0; i < wc.size(); ++i) d = std::max(d, std::fabs(wc[i] - w[i * 4 + c]));
    EXPECT_EQ(d, 0.0) << "channel " << c;
  }
}

TEST(FfdWarp, RefusesBadInputsNamingTheProblem) {
  const Shape shape{20, 16};
  const Delta delta{5, 5};
  const Array<double> f(shape, 1);
  const Array<double> good(sv::ffd_grid_shape(shape, delta), 2);
  auto has = [](const std::string& msg, const std::string& part) {
    EXPECT_NE(msg.find(part), std::string::npos) << "message: " << msg;
  };
  // A 3-D grid for a 2-D image.
  const Array<double> g3({7, 7, 7}, 3);
  has(message_of([&] { sv::warp(f, g3, {5, 5, 5}); }), "needs a 2-D grid");
  // Wrong component count.
  const Array<double> g1(sv::ffd_grid_shape(shape, delta), 3);
  has(message_of([&] { sv::warp(f, g1, delta); }), "displacement components");
  // Too few control points: axis y needs floor(19 / 5) + 4 = 7.
  const Array<double> small({6, 7}, 2);
  const std::string m = message_of([&] { sv::warp(f, small, delta); });
  has(m, "axis y");
  has(m, "has 6 control points");
  has(m, "at least 7");
  // A bigger output shape needs more points.
  sv::WarpOptions big;
  big.output_shape = {40, 16};
  has(message_of([&] { sv::warp(f, good, delta, big); }), "axis y");
  // Output shape of the wrong rank.
  sv::WarpOptions wrong;
  wrong.output_shape = {20, 16, 3};
  has(message_of([&] { sv::warp(f, good, delta, wrong); }), "output shape");
  // Spacing below 1, wrong size.
  has(message_of([&] { sv::warp(f, good, {0, 5}); }), "at least 1 voxel");
  has(message_of([&] { sv::warp(f, good, {5}); }), "one per axis");
  // Non-finite and huge values.
  Array<double> nan = good;
  nan[5] = std::numeric_limits<double>::quiet_NaN();
  has(message_of([&] { sv::warp(f, nan, delta); }), "non-finite");
  Array<double> huge = good;
  huge[3] = 1e10;
  has(message_of([&] { sv::warp(f, huge, delta); }), "at most 1e9");
  // A 1-D moving image.
  has(message_of([&] { sv::warp(Array<double>({10}, 1), good, delta); }), "2-D or 3-D");
  // Dense fields: wrong components, non-finite.
  has(message_of([&] { sv::warp_with_field(f, Array<double>(shape, 3)); }), "2 components");
  Array<double> field(shape, 2);
  field[7] = std::numeric_limits<double>::infinity();
  has(message_of([&] { sv::warp_with_field(f, field); }), "non-finite value (inf)");
}

}  // namespace
