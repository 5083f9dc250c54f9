// Shared helpers of the GL evaluator tests: the headless context (created once per process;
// tests skip with its error when there is none), fresh random data and positions, the CPU
// double reference, and a record of the measured errors that is printed at the end.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "splineview/array.h"
#include "splineview/gl/evaluator.h"
#include "splineview/gl/headless.h"

#include "../common/error_stats.h"

namespace svgltest {

// The process's headless context, or nullptr with the reason in context_error().
sv::gl::HeadlessContext* context();
const std::string& context_error();

// Skips the current test (visibly, with the reason) when no context could be created.
#define SVGL_REQUIRE_CONTEXT()                                                   \
  do {                                                                           \
    if (!::svgltest::context())                                                  \
      GTEST_SKIP() << "no headless GL context: " << ::svgltest::context_error(); \
  } while (0)

// A fresh seed per call (random_device once, then counting); tests print it on failure.
std::uint32_t fresh_seed();

sv::ArrayF random_array(const std::vector<std::size_t>& dims, std::size_t channels,
                        std::uint32_t seed, float lo = 0.0f, float hi = 1.0f);

// m positions (rank floats each, array axis order), uniform in [lo_d, hi_d] with
// lo_d = -margin_lo, hi_d = N_d - 1 + margin_hi per axis.
std::vector<float> random_positions(const std::vector<std::size_t>& dims, std::size_t m,
                                    std::uint32_t seed, double margin_lo = 3.0,
                                    double margin_hi = 3.0);

// The CPU reference (sv::sample, double accumulation) at the float positions.
std::vector<double> reference(const sv::ArrayF& coefficients, const std::vector<float>& positions,
                              int degree, sv::Boundary boundary, int derivative_axis = -1);

// Error statistics (tests/common/error_stats.h).
using svtest::max_abs;
using svtest::max_abs_difference;
using svtest::value_range;

// An evaluator per option set, compiled once per process.
sv::gl::Evaluator& evaluator(const sv::gl::EvalOptions& opt, std::size_t rank);

// The measured filter precision of the texture unit in texel units: max |linear fetch - exact|
// on tent textures (slope 1 along one axis, constant along the others) of 2-D and 3-D shapes up
// to 61 texels, every boundary mode, positions in [-3, N+2]: the error of the hardware's
// coordinate-to-weight arithmetic over the positions the tests use. On NVIDIA this is the
// 8-bit weight (about 2^-9); on Mesa llvmpipe it is float arithmetic.
double filter_precision();

// Records a measured error (relative to the data range), its bound, and the error in float ulps
// of the largest coefficient magnitude (2^-24 max|c|) under `key`; the table of maxima per key
// is printed when the test program ends.
void record(const std::string& key, double error, double bound, double ulps);

std::string shape_name(const std::vector<std::size_t>& dims, std::size_t channels);

}  // namespace svgltest
