// Halos (halo.h): the impulse response behind the bound against the prefilter itself, the bound
// against chunked results for every degree, mode and rank, and the bound's tightness.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "splineview/bspline.h"
#include "splineview/halo.h"
#include "splineview/interpolant.h"
#include "splineview/prefilter.h"

namespace {

using sv::Array;
using sv::Boundary;

const Boundary kModes[] = {Boundary::Reflect,     Boundary::Mirror,  Boundary::Periodic,
                           Boundary::Wrap,        Boundary::Nearest, Boundary::Constant,
                           Boundary::GridConstant};

// The whole array's coefficients as the package and the sampler use them: the prefilter under
// prefilter_boundary(mode), or sv::Interpolant's padded interpolant for Nearest / GridConstant
// (cropped back to the array).
Array<double> whole(const Array<double>& f, int degree, Boundary b, double cval) {
  sv::SamplerOptions so;
  so.degree = degree;
  so.boundary = b;
  so.cval = cval;
  const sv::Interpolant<double> spline(f, so, true);
  const Array<double>& c = spline.coefficients();
  const std::size_t pad = spline.pad();
  if (pad == 0) return c;
  Array<double> out(f.dims(), f.channels());
  std::vector<std::size_t> at(f.rank(), 0);
  for (std::size_t p = 0; p < out.points(); ++p) {
    std::size_t off = 0;
    for (std::size_t d = 0; d < f.rank(); ++d) off = off * c.dim(d) + at[d] + pad;
    out[p] = c[off];
    for (std::size_t d = f.rank(); d-- > 0;) {
      if (++at[d] < f.dim(d)) break;
      at[d] = 0;
    }
  }
  return out;
}

// |a (the region) - b cropped to the region|.
double region_error(const Array<double>& region, const Array<double>& full,
                    const std::vector<std::size_t>& lo) {
  const std::size_t rank = full.rank();
  std::vector<std::size_t> at(rank, 0);
  double worst = 0;
  for (std::size_t p = 0; p < region.points(); ++p) {
    std::size_t off = 0;
    for (std::size_t d = 0; d < rank; ++d) off = off * full.dim(d) + lo[d] + at[d];
    worst = std::max(worst, std::fabs(region[p] - full[off]));
    for (std::size_t d = rank; d-- > 0;) {
      if (++at[d] < region.dim(d)) break;
      at[d] = 0;
    }
  }
  return worst;
}

TEST(Halo, ImpulseResponseIsThePrefilterOfADelta) {
  // g from the poles' closed forms against sv::prefilter (double) of a unit impulse in the
  // middle of a long periodic line: two independent computations of the same filter.
  for (int degree = 2; degree <= 7; ++degree) {
    const std::size_t n = 1001, mid = 500;
    Array<double> d({n}, 1);
    d[mid] = 1.0;
    sv::PrefilterOptions opt;
    opt.degree = degree;
    opt.boundary = Boundary::Periodic;
    sv::prefilter(d, opt);
    const std::vector<double> g = sv::prefilter_impulse_response(degree, 120);
    // A few ulp of the largest value (the prefilter's own rounding).
    const double tol = 8 * std::numeric_limits<double>::epsilon() * std::fabs(g[0]);
    for (std::size_t m = 0; m <= 120; ++m) {
      EXPECT_NEAR(g[m], d[mid + m], tol) << "degree " << degree << " m " << m;
      EXPECT_NEAR(g[m], d[mid - m], tol) << "degree " << degree << " m " << m;
    }
    EXPECT_GT(std::fabs(g[40]), 0.0) << "the response is computed far out";
    // G = 1 / B_n(-1): the sum of |g| is the filter's gain at the Nyquist frequency, where the
    // sampled B-spline's symbol is sum_k beta_n(k) (-1)^k.
    double b = 0;
    for (int k = -4; k <= 4; ++k) b += sv::bspline(degree, k) * ((k % 2 == 0) ? 1 : -1);
    EXPECT_NEAR(sv::prefilter_norm(degree), 1.0 / b, 1e-12 / b) << "degree " << degree;
  }
}

TEST(Halo, HaloGrowsWithDegreeAndPrecision) {
  for (int degree = 2; degree <= 7; ++degree) {
    const std::size_t hf = sv::prefilter_halo<float>(degree, 1);
    const std::size_t hd = sv::prefilter_halo<double>(degree, 1);
    EXPECT_LT(hf, hd) << degree;
    EXPECT_LE(sv::chunk_bound(degree, 1, hd), std::numeric_limits<double>::epsilon() / 2);
    EXPECT_GT(sv::chunk_bound(degree, 1, hd - 1), std::numeric_limits<double>::epsilon() / 2);
    EXPECT_LE(sv::prefilter_halo<double>(degree, 1), sv::prefilter_halo<double>(degree, 3));
    if (degree > 2) {
      EXPECT_GE(hd, sv::prefilter_halo<double>(degree - 1, 1));
    }
  }
}

TEST(Halo, ChunkedEqualsWholeWithinTheBound) {
  // Every degree and mode, 1-3 D, halos from 1 sample (errors far above rounding, so the bound
  // itself is tested) to the double-precision halo; random data, random regions (touching the
  // array's ends or not).
  std::mt19937 rng(15);
  std::uniform_real_distribution<double> u(-1.0, 2.0);
  const double eps = std::numeric_limits<double>::epsilon();
  int cases = 0;
  double worst_ratio = 0;  // measured error / bound where the bound is above rounding
  for (int degree = 2; degree <= 7; ++degree) {
    for (Boundary b : kModes) {
      for (std::size_t rank = 1; rank <= 3; ++rank) {
        std::vector<std::size_t> dims;
        for (std::size_t d = 0; d < rank; ++d)
          dims.push_back(rank == 3 ? 14 + rng() % 8 : 20 + rng() % 30);
        Array<double> f(dims, 1);
        for (std::size_t i = 0; i < f.size(); ++i) f[i] = u(rng);
        const double cval = 0.75;
        const double range = 3.0;  // data in [-1, 2]; cval inside it
        const Array<double> ref = whole(f, degree, b, cval);
        const double g = sv::prefilter_norm(degree);
        const double rounding = 64 * eps * std::pow(g, static_cast<double>(rank)) * 2.0;
        for (std::size_t halo : {std::size_t{1}, std::size_t{3}, std::size_t{6}, std::size_t{10},
                                 sv::prefilter_halo<double>(degree, rank)}) {
          std::vector<std::size_t> lo(rank), hi(rank);
          for (std::size_t d = 0; d < rank; ++d) {
            lo[d] = rng() % (dims[d] / 2);
            hi[d] = lo[d] + 1 + rng() % (dims[d] - lo[d]);
          }
          sv::PrefilterOptions opt;
          opt.degree = degree;
          opt.boundary = b;
          const Array<double> r = sv::prefilter_region(f, lo, hi, opt, cval, halo);
          const double err = region_error(r, ref, lo);
          const double bound = range * sv::chunk_bound(degree, rank, halo);
          EXPECT_LE(err, bound + rounding)
              << "degree " << degree << " mode " << sv::boundary_name(b) << " rank " << rank
              << " halo " << halo;
          if (bound > 1e3 * rounding) worst_ratio = std::max(worst_ratio, err / bound);
          ++cases;
        }
      }
    }
  }
  RecordProperty("cases", cases);
  std::printf("chunked vs whole: %d cases, largest error / bound %.3g\n", cases, worst_ratio);
  EXPECT_GT(cases, 600);
}

TEST(Halo, BoundIsAttainedToAFactorOfTwo) {
  // The worst signal for one chunk sample k: zero inside the window, sign(g[k - j]) outside, so
  // every neglected term adds. The error is then sum_{j outside} |g[k - j]| = T(h) (the array
  // is long enough that its own ends do not matter) with a data range of 2: half the bound.
  for (int degree = 2; degree <= 7; ++degree) {
    for (std::size_t halo : {2, 4, 8}) {
      const std::size_t n = 401, k = 200;
      const std::vector<double> g = sv::prefilter_impulse_response(degree, n);
      Array<double> f({n}, 1);
      for (std::size_t j = 0; j < n; ++j) {
        const long m = static_cast<long>(k) - static_cast<long>(j);
        if (static_cast<std::size_t>(std::labs(m)) <= halo) continue;
        f[j] = g[static_cast<std::size_t>(std::labs(m))] >= 0 ? 1.0 : -1.0;
      }
      sv::PrefilterOptions opt;
      opt.degree = degree;
      opt.boundary = Boundary::Mirror;
      Array<double> full = f;
      sv::prefilter(full, opt);
      const Array<double> r = sv::prefilter_region(f, {k}, {k + 1}, opt, 0.0, halo);
      const double err = std::fabs(r[0] - full[k]);
      const double bound = 2.0 * sv::chunk_bound(degree, 1, halo);
      EXPECT_LE(err, bound * (1 + 1e-9)) << degree << " " << halo;
      EXPECT_GE(err, 0.5 * bound * (1 - 1e-6)) << degree << " " << halo;
    }
  }
}

TEST(Halo, RegionChecksItsArguments) {
  Array<double> f({10, 12}, 1);
  sv::PrefilterOptions opt;
  EXPECT_THROW(sv::prefilter_region(f, {0}, {5}, opt, 0.0, 4), sv::Error);
  EXPECT_THROW(sv::prefilter_region(f, {3, 0}, {3, 5}, opt, 0.0, 4), sv::Error);
  EXPECT_THROW(sv::prefilter_region(f, {0, 0}, {11, 5}, opt, 0.0, 4), sv::Error);
  EXPECT_THROW(sv::prefilter_halo(3, 1, 0.0), sv::Error);
  // The tail is summed in long double: even 1e-300 has a finite halo.
  EXPECT_LT(sv::prefilter_halo(7, 3, 1e-300), std::size_t{1200});
}

}  // namespace
