// Tests of the accuracy overlay's choice of reference in a headless EGL context (accuracy.h):
// the analytic data's functions (the zone plate and Marschner-Lobb hold their functions at the
// integer positions), "truth" figures equal an independent CPU computation within the
// GPU path's own error, "another method" figures equal sv::compare of the GPU fetch against
// that method in double, the ground truth orders the methods as interpolation theory says
// while "same method" cannot (nearest is exact against itself and far from the truth), truth
// is refused for data without a function, and the volume mode reports the reference per view.
// Exits 77 (skipped, with the reason) without a GL 4.5 context.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "accuracy.h"
#include "image_document.h"
#include "layout.h"
#include "method_pass.h"
#include "splineview/error.h"
#include "splineview/gl/evaluator.h"
#include "splineview/gl/gl.h"
#include "splineview/gl/headless.h"
#include "splineview/gl/objects.h"
#include "splineview/metrics.h"
#include "splineview/prefilter.h"
#include "splineview/sampler.h"
#include "splineview/synthetic.h"
#include "volume_document.h"
#include "volume_mode.h"

namespace {

using namespace sv::viewer;
namespace gl = sv::gl;

constexpr gl::Fetch kAll[] = {gl::Fetch::Nearest,  gl::Fetch::Linear,   gl::Fetch::CubicUnfiltered,
                              gl::Fetch::CubicLut, gl::Fetch::CubicOtf, gl::Fetch::CubicPrecise};

// A view of the zone plate at a zoom that is not an integer, slightly rotated, over the part
// where the rings approach Nyquist: pixel centres fall between the samples.
gl::GridMapping zone_plate_grid() {
  gl::GridMapping g;
  g.rows = 150;
  g.cols = 170;
  g.origin = {300.3, 280.7, 0.0};
  g.step_row = {0.37, 0.041, 0.0};
  g.step_col = {-0.043, 0.39, 0.0};
  return g;
}

std::vector<AccuracyResult> measure(AccuracyMeter& meter, const std::vector<AccuracyJob>& jobs,
                                    const AccuracyReference& reference) {
  meter.measure(jobs, reference);
  meter.finish();
  return meter.results();
}

std::vector<AccuracyJob> jobs_of_all_methods(const gl::GridMapping& g) {
  std::vector<AccuracyJob> jobs;
  for (gl::Fetch m : kAll) {
    AccuracyJob j;
    j.method = m;
    j.grid = g;
    jobs.push_back(j);
  }
  return jobs;
}

AccuracyReference truth_reference() {
  AccuracyReference r;
  r.kind = ReferenceKind::Truth;
  return r;
}

AccuracyReference method_reference(gl::Fetch m) {
  AccuracyReference r;
  r.kind = ReferenceKind::Method;
  r.method = m;
  return r;
}

TEST(AnalyticData, ZonePlateSamplesAreItsFunction) {
  const DecodedImage d = zone_plate_image();
  ASSERT_TRUE(d.truth);
  ASSERT_EQ(d.exact->dims(), (std::vector<std::size_t>{512, 512}));
  double worst = 0;
  for (std::size_t y = 0; y < 512; ++y) {
    for (std::size_t x = 0; x < 512; ++x) {
      const double p[2] = {static_cast<double>(y), static_cast<double>(x)};
      const double f = d.truth.value(p, 0);
      EXPECT_EQ(d.exact->at2(y, x), static_cast<double>(static_cast<float>(f)));
      worst = std::max(worst, std::fabs(d.exact->at2(y, x) - f));
    }
  }
  EXPECT_LE(worst, 6e-8) << "the samples are the function rounded to float";
  // A position between samples is the function there, not the samples.
  const double mid[2] = {100.5, 411.25};
  EXPECT_EQ(d.truth.value(mid, 0), sv::zone_plate_at(100.5, 411.25, 512, 512, 0.5));
}

TEST(AnalyticData, MarschnerLobbSamplesAreItsFunction) {
  VolumeLimits limits;
  const DecodedVolume v = decode_marschner_lobb(kMarschnerLobbSize, limits);
  ASSERT_TRUE(v.truth);
  ASSERT_TRUE(v.exact);
  const std::size_t n = kMarschnerLobbSize;
  double worst = 0;
  for (std::size_t z = 0; z < n; ++z)
    for (std::size_t y = 0; y < n; ++y)
      for (std::size_t x = 0; x < n; ++x) {
        const double p[3] = {static_cast<double>(z), static_cast<double>(y),
                             static_cast<double>(x)};
        const double f = v.truth.value(p, 0);
        EXPECT_EQ(static_cast<double>(v.samples.at3(z, y, x)),
                  static_cast<double>(static_cast<float>(f)));
        worst = std::max(worst, std::fabs(v.exact->at3(z, y, x) - f));
      }
  EXPECT_LE(worst, 6e-8);
  // Sample units: position k is coordinate -1 + (2k + 1) / n, between samples too.
  const double p[3] = {3.5, 20.25, 7.0};
  EXPECT_EQ(v.truth.value(p, 0),
            sv::marschner_lobb_at(-1 + 15.0 / 41, -1 + 41.5 / 41, -1 + 8.0 / 41));
  // A file has no function.
  EXPECT_FALSE(
      decode_samples(sv::marschner_lobb(8), {1, 1, 1}, "file", sv::DType::F32, limits).truth);
}

TEST(References, NamesAndParsing) {
  EXPECT_EQ(reference_id(AccuracyReference{}), "same-method");
  EXPECT_EQ(reference_id(method_reference(gl::Fetch::CubicPrecise)), "method:precise");
  EXPECT_EQ(reference_id(method_reference(gl::Fetch::Nearest)), "method:nearest");
  EXPECT_EQ(reference_id(truth_reference()), "truth");
  EXPECT_EQ(reference_label(method_reference(gl::Fetch::CubicPrecise)), "precise cubic in double");
  EXPECT_EQ(parse_reference("same"), AccuracyReference{});
  EXPECT_EQ(parse_reference("precise"), method_reference(gl::Fetch::CubicPrecise));
  EXPECT_EQ(parse_reference("linear"), method_reference(gl::Fetch::Linear));
  EXPECT_EQ(parse_reference("truth"), truth_reference());
  EXPECT_THROW(parse_reference("exact"), sv::Error);
  EXPECT_THROW(parse_reference(""), sv::Error);
}

class ZonePlate : public ::testing::Test {
 protected:
  void SetUp() override {
    doc_ = std::make_unique<ImageDocument>(make_document(zone_plate_image()));
  }
  std::unique_ptr<AccuracyMeter> meter() const {
    return std::make_unique<AccuracyMeter>(doc_->exact, doc_->samples, doc_->coefficients,
                                           doc_->truth);
  }
  std::unique_ptr<ImageDocument> doc_;
};

// Truth figures equal an independent CPU computation: the method in double (sv::sample) minus
// the function at the same float positions, within the GPU path's own error (the same-method
// figures): | |gpu - f| - |cpu - f| | <= |gpu - cpu| per point, and so for the RMS and max.
TEST_F(ZonePlate, TruthFiguresEqualTheMethodInDoubleAgainstTheFunction) {
  auto m = meter();
  const std::vector<AccuracyJob> jobs = jobs_of_all_methods(zone_plate_grid());
  const std::vector<AccuracyResult> truth = measure(*m, jobs, truth_reference());
  const std::vector<AccuracyResult> same = measure(*m, jobs, AccuracyReference{});
  ASSERT_EQ(truth.size(), jobs.size());
  std::vector<float> positions;
  std::vector<std::size_t> pixels;
  job_positions(zone_plate_grid(), {512, 512}, &positions, &pixels);
  const std::size_t n = pixels.size();
  ASSERT_EQ(n, 150u * 170u) << "the whole view is inside the image";
  sv::ArrayD coefficients(*doc_->exact);
  sv::prefilter(coefficients, sv::PrefilterOptions{3, sv::Boundary::Reflect, 0});
  const std::vector<double> pos(positions.begin(), positions.end());
  sv::ArrayD f({n}, 1);
  for (std::size_t i = 0; i < n; ++i)
    f.data()[i] = sv::zone_plate_at(pos[2 * i], pos[2 * i + 1], 512, 512, 0.5);
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    SCOPED_TRACE(gl::fetch_name(jobs[j].method));
    EXPECT_EQ(reference_id(truth[j].reference), "truth");
    EXPECT_EQ(truth[j].points, n);
    sv::SamplerOptions opt;
    opt.degree = method_degree(jobs[j].method);
    opt.boundary = sv::Boundary::Reflect;
    sv::ArrayD cpu({n}, 1);
    sample(gl::fetch_prefiltered(jobs[j].method) ? coefficients : *doc_->exact, pos.data(), n,
           cpu.data(), opt);
    const sv::ErrorStats expected = sv::compare(cpu, f);
    const double slack = same[j].stats.rms * (1 + 1e-9) + 1e-15;
    EXPECT_NEAR(truth[j].stats.rms, expected.rms, slack)
        << "truth " << truth[j].stats.rms << " cpu " << expected.rms;
    EXPECT_NEAR(truth[j].stats.max_abs, expected.max_abs,
                same[j].stats.max_abs * (1 + 1e-9) + 1e-15);
    std::printf(
        "zone plate, %-10s truth RMS %.4g max %.4g (cpu double %.4g); same-method RMS "
        "%.3g\n",
        gl::fetch_name(jobs[j].method), truth[j].stats.rms, truth[j].stats.max_abs, expected.rms,
        same[j].stats.rms);
  }
}

// "Another method": nearest (and linear) on the GPU against precise in double equal sv::compare
// of the GPU fetch (gl::Evaluator at the same float positions) and sv::sample degree 3 on the
// double prefilter.
TEST_F(ZonePlate, AnotherMethodFiguresEqualCompareOfGpuAgainstThatMethodInDouble) {
  auto m = meter();
  const gl::GridMapping g = zone_plate_grid();
  const std::vector<AccuracyJob> jobs = {{gl::Fetch::Nearest, g}, {gl::Fetch::Linear, g}};
  const std::vector<AccuracyResult> r =
      measure(*m, jobs, method_reference(gl::Fetch::CubicPrecise));
  ASSERT_EQ(r.size(), 2u);
  std::vector<float> positions;
  std::vector<std::size_t> pixels;
  job_positions(g, {512, 512}, &positions, &pixels);
  const std::size_t n = pixels.size();
  sv::ArrayD coefficients(*doc_->exact);
  sv::prefilter(coefficients, sv::PrefilterOptions{3, sv::Boundary::Reflect, 0});
  const std::vector<double> pos(positions.begin(), positions.end());
  sv::SamplerOptions opt;
  opt.degree = 3;
  opt.boundary = sv::Boundary::Reflect;
  sv::ArrayD precise({n}, 1);
  sample(coefficients, pos.data(), n, precise.data(), opt);
  const gl::SplineTexture tex(doc_->samples, gl::TexFormat::R32F);
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    SCOPED_TRACE(gl::fetch_name(jobs[j].method));
    EXPECT_EQ(reference_id(r[j].reference), "method:precise");
    gl::EvalOptions eo;
    eo.fetch = jobs[j].method;
    eo.boundary = sv::Boundary::Reflect;
    gl::Evaluator evaluator(eo, 2);
    const std::vector<float> values = evaluator.evaluate(tex, positions.data(), n);
    sv::ArrayD gpu({n}, 1);
    std::copy(values.begin(), values.end(), gpu.data());
    const sv::ErrorStats expected = sv::compare(gpu, precise);
    EXPECT_EQ(r[j].stats.rms, expected.rms);
    EXPECT_EQ(r[j].stats.max_abs, expected.max_abs);
    EXPECT_EQ(r[j].stats.sse, expected.sse);
    EXPECT_GT(r[j].stats.rms, 1e-3) << "nearest and linear differ from the cubic";
  }
  // The precise view against precise in double is the same-method figure.
  const std::vector<AccuracyResult> p =
      measure(*m, {{gl::Fetch::CubicPrecise, g}}, method_reference(gl::Fetch::CubicPrecise));
  const std::vector<AccuracyResult> s =
      measure(*m, {{gl::Fetch::CubicPrecise, g}}, AccuracyReference{});
  EXPECT_EQ(p[0].stats.rms, s[0].stats.rms);
}

// The confusion the reference choice removes: against itself nearest is exact, against the
// truth it is the worst; the truth orders precise cubic < linear < nearest.
TEST_F(ZonePlate, GroundTruthOrdersTheMethodsWhereSameMethodCannot) {
  auto m = meter();
  const gl::GridMapping g = zone_plate_grid();
  const std::vector<AccuracyJob> jobs = {
      {gl::Fetch::Nearest, g}, {gl::Fetch::Linear, g}, {gl::Fetch::CubicPrecise, g}};
  const std::vector<AccuracyResult> truth = measure(*m, jobs, truth_reference());
  const std::vector<AccuracyResult> same = measure(*m, jobs, AccuracyReference{});
  const double nearest = truth[0].stats.rms, linear = truth[1].stats.rms,
               precise = truth[2].stats.rms;
  EXPECT_LT(precise, linear);
  EXPECT_LT(linear, nearest);
  EXPECT_LT(precise, 0.5 * linear) << "the cubic is much closer to the truth";
  EXPECT_LE(same[0].stats.rms, 1e-7) << "nearest against nearest in double";
  EXPECT_GT(nearest, 1e-2);
  EXPECT_GT(nearest, 1e4 * std::max(same[0].stats.rms, 1e-9))
      << "orders of magnitude between 'exact GPU path' and 'true error'";
  std::printf(
      "zone plate truth RMS: nearest %.4g, linear %.4g, precise %.4g; nearest same-method "
      "RMS %.3g\n",
      nearest, linear, precise, same[0].stats.rms);
}

TEST(Truth, RefusedForDataWithoutAFunction) {
  DecodedImage d = synthetic_image("file-like", sv::zone_plate(32, 32));
  ASSERT_FALSE(d.truth);
  const ImageDocument doc = make_document(std::move(d));
  AccuracyMeter meter(doc.exact, doc.samples, doc.coefficients);
  EXPECT_FALSE(meter.has_truth());
  gl::GridMapping g;
  g.rows = 8;
  g.cols = 8;
  g.origin = {3.3, 4.4, 0};
  g.step_row = {0.5, 0, 0};
  g.step_col = {0, 0.5, 0};
  EXPECT_THROW(meter.measure({{gl::Fetch::Linear, g}}, truth_reference()), sv::Error);

  AccuracyOverlay overlay;
  overlay.reference = truth_reference();
  overlay.reset(std::make_unique<AccuracyMeter>(doc.exact, doc.samples, doc.coefficients));
  EXPECT_NE(overlay.reference_problem(), "");
  overlay.update({{gl::Fetch::Linear, g}}, 1.0, true);
  EXPECT_TRUE(overlay.settled()) << "nothing to measure: no endless wait in screenshot mode";
  EXPECT_EQ(overlay.result(0), nullptr);
  // Switching to another reference measures again; results follow the reference.
  overlay.reference = method_reference(gl::Fetch::CubicPrecise);
  EXPECT_EQ(overlay.reference_problem(), "");
  overlay.update({{gl::Fetch::Linear, g}}, 2.0, true);
  ASSERT_NE(overlay.result(0), nullptr);
  EXPECT_EQ(reference_id(overlay.result(0)->reference), "method:precise");
  overlay.reference = AccuracyReference{};
  EXPECT_EQ(overlay.result(0), nullptr) << "figures of another reference are not shown";
  overlay.update({{gl::Fetch::Linear, g}}, 2.1, false);
  overlay.update({{gl::Fetch::Linear, g}}, 2.2, true);
  ASSERT_NE(overlay.result(0), nullptr);
  EXPECT_EQ(reference_id(overlay.result(0)->reference), "same-method");
}

// The volume mode on Marschner-Lobb with --reference truth: every view's accuracy says
// "truth" in the report, and the cubic beats nearest against it.
TEST(VolumeModeReference, MarschnerLobbTruthInTheReport) {
  VolumeOptions options;
  options.path = kMarschnerLobbName;
  options.methods = {gl::Fetch::CubicPrecise, gl::Fetch::Nearest, gl::Fetch::Linear,
                     gl::Fetch::CubicOtf};
  options.allow_cuda = false;
  options.reference = truth_reference();
  VolumeMode mode(options);
  mode.finish();
  ASSERT_EQ(mode.error(), "");
  const gl::Texture colour = gl::Texture::create_2d(GL_RGBA32F, 360, 280);
  gl::Framebuffer fbo = gl::Framebuffer::create();
  fbo.attach_color(colour);
  fbo.check_complete();
  glBindFramebuffer(GL_FRAMEBUFFER, fbo.id());
  FrameInfo f;
  f.area = {0, 0, 360, 280};
  f.fb_width = 360;
  f.fb_height = 280;
  mode.draw(f);
  mode.finish();
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  ASSERT_EQ(mode.error(), "");
  const nlohmann::json r = mode.report();
  EXPECT_EQ(r["accuracy_reference"], "truth");
  EXPECT_FALSE(r.contains("accuracy_reference_problem"));
  for (std::size_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(r["views"][i].contains("accuracy")) << r["views"][i].dump();
    EXPECT_EQ(r["views"][i]["accuracy"]["reference"], "truth");
  }
  const double precise = r["views"][0]["accuracy"]["rms"].get<double>();
  const double nearest = r["views"][1]["accuracy"]["rms"].get<double>();
  EXPECT_LT(precise, nearest);
  std::printf("Marschner-Lobb truth RMS: precise (axial) %.4g, nearest (coronal) %.4g\n", precise,
              nearest);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::unique_ptr<gl::HeadlessContext> context;
  try {
    context = std::make_unique<gl::HeadlessContext>();
  } catch (const std::exception& e) {
    std::printf("skipped: no headless GL 4.5 context: %s\n", e.what());
    return 77;
  }
  std::printf("headless GL: %s (EGL platform %s)\n", context->description().c_str(),
              context->platform().c_str());
  return RUN_ALL_TESTS();
}
