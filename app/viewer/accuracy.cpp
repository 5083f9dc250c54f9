// The accuracy overlay's measurement (see accuracy.h).
#include "accuracy.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>

#include "elapsed.h"
#include "method_pass.h"
#include "splineview/error.h"
#include "splineview/gl/gl.h"
#include "splineview/grbf.h"
#include "splineview/prefilter.h"
#include "splineview/sampler.h"
#include "splineview/smoothing.h"

namespace sv::viewer {
namespace {

// Points per GPU evaluate() call and per reference chunk: big enough to amortise a draw (or a
// thread fork), small enough that one step stays within a frame on a GPU.
constexpr std::size_t kGpuChunk = 1 << 16;
constexpr std::size_t kReferenceChunk = 1 << 15;

}  // namespace

bool operator==(const AccuracyReference& a, const AccuracyReference& b) {
  return a.kind == b.kind && (a.kind != ReferenceKind::Method || a.method == b.method);
}

std::string reference_id(const AccuracyReference& r) {
  switch (r.kind) {
    case ReferenceKind::SameMethod:
      return "same-method";
    case ReferenceKind::Method:
      return std::string("method:") + gl::fetch_name(r.method);
    case ReferenceKind::Truth:
      return "truth";
  }
  return "?";
}

std::string reference_label(const AccuracyReference& r) {
  switch (r.kind) {
    case ReferenceKind::SameMethod:
      return "each view's own method in double";
    case ReferenceKind::Method:
      if (r.method == gl::Fetch::CubicPrecise) return "precise cubic in double";
      if (gl::fetch_prefiltered(r.method)) return "prefiltered cubic in double";
      return std::string(method_display_name(r.method)) + " in double";
    case ReferenceKind::Truth:
      return "the analytic function (ground truth)";
  }
  return "?";
}

std::string reference_tag(const AccuracyReference& r) {
  switch (r.kind) {
    case ReferenceKind::SameMethod:
      return {};
    case ReferenceKind::Method:
      return std::string("  vs ") + gl::fetch_name(r.method);
    case ReferenceKind::Truth:
      return "  vs truth";
  }
  return {};
}

AccuracyReference parse_reference(const std::string& name) {
  AccuracyReference r;
  if (name == "same" || name == "same-method") return r;
  if (name == "truth") {
    r.kind = ReferenceKind::Truth;
    return r;
  }
  try {
    r.kind = ReferenceKind::Method;
    r.method = parse_method(name);
  } catch (const Error&) {
    throw Error(
        "--reference must be same, truth or a method name (nearest, linear, unfiltered, "
        "lut, otf, precise), got '" +
        name + "'");
  }
  return r;
}

bool same_jobs(const std::vector<AccuracyJob>& a, const std::vector<AccuracyJob>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const gl::GridMapping &x = a[i].grid, &y = b[i].grid;
    if (a[i].method != b[i].method || a[i].quantity != b[i].quantity || x.rows != y.rows ||
        x.cols != y.cols || x.origin != y.origin || x.step_row != y.step_row ||
        x.step_col != y.step_col)
      return false;
  }
  return true;
}

void job_positions(const gl::GridMapping& grid, const std::vector<std::size_t>& dims,
                   std::vector<float>* positions, std::vector<std::size_t>* pixels) {
  const std::size_t rank = dims.size();
  if (rank < 2 || rank > 3) throw Error("accuracy: 2-D or 3-D data only");
  positions->clear();
  pixels->clear();
  float p[3] = {0, 0, 0};
  for (std::size_t r = 0; r < grid.rows; ++r) {
    for (std::size_t c = 0; c < grid.cols; ++c) {
      bool inside = true;
      for (std::size_t d = 0; d < rank; ++d) {
        // The order of operations is part of the contract (tests recompute it in NumPy).
        const double q = grid.origin[d] + static_cast<double>(r) * grid.step_row[d] +
                         static_cast<double>(c) * grid.step_col[d];
        p[d] = static_cast<float>(q);
        const double n = static_cast<double>(dims[d]);
        inside =
            inside && static_cast<double>(p[d]) >= -0.5 && static_cast<double>(p[d]) <= n - 0.5;
      }
      if (!inside) continue;
      positions->insert(positions->end(), p, p + rank);
      pixels->push_back(r * grid.cols + c);
    }
  }
}

void quantity_reference(const SplineDerivatives<double>& spline, const gl::Quantity& q,
                        const std::array<double, 3>& axis_scale, const double* positions,
                        std::size_t m, double* out) {
  const std::size_t rank = spline.rank(), ch = spline.channels();
  // The parts (array-order multi-indices) and their factors.
  std::vector<std::vector<int>> orders;
  std::vector<double> factor;
  const auto add = [&](std::array<int, 3> tex_order) {  // texture order -> array order
    std::vector<int> o(rank, 0);
    double f = 1;
    for (std::size_t d = 0; d < rank; ++d) {
      o[rank - 1 - d] = tex_order[d];
      f *= std::pow(axis_scale[d], tex_order[d]);
    }
    orders.push_back(std::move(o));
    factor.push_back(f);
  };
  switch (q.kind) {
    case gl::QuantityKind::Value:
      add({0, 0, 0});
      break;
    case gl::QuantityKind::Partial:
      add(q.order);
      break;
    case gl::QuantityKind::GradientMagnitude:
      for (std::size_t d = 0; d < rank; ++d) {
        std::array<int, 3> o{0, 0, 0};
        o[d] = 1;
        add(o);
      }
      break;
    case gl::QuantityKind::Laplacian:
      for (std::size_t d = 0; d < rank; ++d) {
        std::array<int, 3> o{0, 0, 0};
        o[d] = 2;
        add(o);
      }
      break;
    case gl::QuantityKind::HessianDeterminant:
      for (std::size_t a = 0; a < rank; ++a)
        for (std::size_t b = 0; b < rank; ++b) {
          std::array<int, 3> o{0, 0, 0};
          ++o[a];
          ++o[b];
          add(o);
        }
      break;
  }
  const std::size_t k = orders.size();
  std::vector<double> parts(m * k * ch);
  spline.partials(orders, positions, m, parts.data());
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t c = 0; c < ch; ++c) {
      const auto part = [&](std::size_t j) { return parts[(i * k + j) * ch + c] * factor[j]; };
      double v = 0;
      switch (q.kind) {
        case gl::QuantityKind::Value:
        case gl::QuantityKind::Partial:
          v = part(0);
          break;
        case gl::QuantityKind::GradientMagnitude:
          for (std::size_t j = 0; j < k; ++j) v += part(j) * part(j);
          v = std::sqrt(v);
          break;
        case gl::QuantityKind::Laplacian:
          for (std::size_t j = 0; j < k; ++j) v += part(j);
          break;
        case gl::QuantityKind::HessianDeterminant: {
          const auto h = [&](std::size_t a, std::size_t b) { return part(a * rank + b); };
          if (rank == 2) {
            v = h(0, 0) * h(1, 1) - h(0, 1) * h(1, 0);
          } else {
            v = h(0, 0) * (h(1, 1) * h(2, 2) - h(1, 2) * h(2, 1)) -
                h(0, 1) * (h(1, 0) * h(2, 2) - h(1, 2) * h(2, 0)) +
                h(0, 2) * (h(1, 0) * h(2, 1) - h(1, 1) * h(2, 0));
          }
          break;
        }
      }
      out[i * ch + c] = v;
    }
}

double quantity_range(const ArrayF& coefficients, const gl::Quantity& q,
                      const std::array<double, 3>& axis_scale) {
  const std::size_t rank = coefficients.rank();
  if (coefficients.size() == 0 || rank < 2 || rank > 3) return 1.0;
  DerivativeOptions opt;
  opt.degree = 3;
  opt.boundary = Boundary::Reflect;
  opt.input_is_coefficients = true;
  opt.threads = 1;
  // A rational lattice of positions (golden-ratio steps per axis) inside the array.
  constexpr std::size_t kPoints = 8192;
  const double steps[3] = {0.6180339887498949, 0.7548776662466927, 0.5698402909980532};
  std::vector<double> pos(kPoints * rank);
  for (std::size_t i = 0; i < kPoints; ++i)
    for (std::size_t d = 0; d < rank; ++d) {
      const double t = std::fmod((static_cast<double>(i) + 0.5) * steps[d], 1.0);
      pos[i * rank + d] = t * static_cast<double>(coefficients.dim(d) - 1);
    }
  const std::size_t ch = coefficients.channels();
  std::vector<double> values(kPoints * ch);
  {
    const SplineDerivatives<double> d(ArrayD::from(coefficients), opt);
    quantity_reference(d, q, axis_scale, pos.data(), kPoints, values.data());
  }
  for (double& v : values) v = std::fabs(v);
  const std::size_t k = static_cast<std::size_t>(0.995 * static_cast<double>(values.size() - 1));
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
  const double r = values[k];
  return std::isfinite(r) && r > 0 ? r : 1.0;
}

std::uint32_t heat_colour(float error) {
  if (!std::isfinite(error)) return 0;  // transparent
  // Anchors of the scale per decade: blue, cyan, green, yellow, orange, red, white.
  struct Rgb {
    float r, g, b;
  };
  static constexpr Rgb kAnchors[] = {
      {0.05f, 0.05f, 0.45f}, {0.0f, 0.55f, 0.85f}, {0.1f, 0.75f, 0.3f}, {0.95f, 0.9f, 0.2f},
      {1.0f, 0.55f, 0.1f},   {0.85f, 0.1f, 0.1f},  {1.0f, 1.0f, 1.0f}};
  constexpr int kSteps = static_cast<int>(sizeof kAnchors / sizeof kAnchors[0]) - 1;
  const double decade = std::log10(std::max(static_cast<double>(error), 1e-30));
  const double t =
      std::clamp((decade - kHeatMinDecade) / (kHeatMaxDecade - kHeatMinDecade), 0.0, 1.0) * kSteps;
  const int i = std::min(static_cast<int>(t), kSteps - 1);
  const float f = static_cast<float>(t - i);
  const Rgb& a = kAnchors[i];
  const Rgb& b = kAnchors[i + 1];
  const auto byte = [](float v) {
    return static_cast<std::uint32_t>(std::lround(std::clamp(v, 0.0f, 1.0f) * 255.0f));
  };
  return byte(a.r + (b.r - a.r) * f) | byte(a.g + (b.g - a.g) * f) << 8 |
         byte(a.b + (b.b - a.b) * f) << 16 | 0xffu << 24;
}

// One measurement in progress.
struct AccuracyMeter::Pending {
  std::vector<AccuracyJob> jobs;
  AccuracyReference against;
  std::vector<std::vector<float>> positions;  // per job
  std::vector<std::vector<std::size_t>> pixels;
  // Per job, (points) x channels, empty without points: compared as they are (sv::compare
  // reads the float side as double), no copies of viewport-sized arrays.
  std::vector<ArrayF> gpu;
  std::vector<ArrayD> reference;
  std::vector<std::size_t> gpu_done;           // points evaluated per job
  std::atomic<std::size_t> reference_done{0};  // points over all jobs
  std::atomic<bool> reference_finished{false};
  std::size_t total_points = 0;
  std::string worker_error;  // set by the worker before reference_finished
};

AccuracyMeter::AccuracyMeter(std::shared_ptr<const ArrayD> exact, const ArrayF& samples,
                             const ArrayF& coefficients, AnalyticTruth truth, double lambda,
                             const std::array<double, 3>& axis_scale,
                             std::shared_ptr<ArrayD> exact_coefficients)
    : exact_(std::move(exact)),
      exact_coefficients_(std::move(exact_coefficients)),
      truth_(std::move(truth)),
      lambda_(lambda),
      axis_scale_(axis_scale),
      samples_tex_(samples, gl::TexFormat::R32F),
      coefficients_tex_(coefficients, gl::TexFormat::R32F) {
  if (!exact_ || exact_->dims() != samples.dims() || exact_->channels() != samples.channels() ||
      coefficients.dims() != samples.dims() || coefficients.channels() != samples.channels())
    throw Error("accuracy: the exact values, samples and coefficients must have one shape");
  if (exact_coefficients_ && exact_coefficients_->dims() != samples.dims())
    throw Error("accuracy: the exact coefficients must have the samples' shape");
}

AccuracyMeter::~AccuracyMeter() {
  stop_worker();
}

void AccuracyMeter::set_grbf(std::shared_ptr<const GrbfWeights<float>> gpu,
                             std::shared_ptr<const GrbfWeights<double>> exact) {
  if (!gpu || !exact) {
    clear_grbf();
    return;
  }
  if (gpu->w.dims() != exact_->dims() || gpu->w.channels() != exact_->channels() ||
      exact->w.dims() != exact_->dims() || exact->w.channels() != exact_->channels())
    throw Error("accuracy: the GRBF weights must have the data's shape");
  clear_grbf();
  grbf_tex_ = std::make_unique<gl::SplineTexture>(gpu->w, gl::TexFormat::R32F);
  grbf_gpu_ = std::move(gpu);
  grbf_exact_ = std::move(exact);
}

void AccuracyMeter::clear_grbf() {
  stop_worker();
  if (pending_) {  // abandoned: its grbf jobs would read weights that are gone
    pending_.reset();
    busy_ = false;
  }
  for (auto it = evaluators_.begin(); it != evaluators_.end();)
    it = it->first.rfind("grbf/", 0) == 0 ? evaluators_.erase(it) : std::next(it);
  grbf_tex_.reset();
  grbf_gpu_.reset();
  grbf_exact_.reset();
}

void AccuracyMeter::stop_worker() {
  cancel_ = true;
  if (worker_.joinable()) worker_.join();
  cancel_ = false;
}

void AccuracyMeter::measure(std::vector<AccuracyJob> jobs, AccuracyReference reference) {
  if (reference.kind == ReferenceKind::Truth && !truth_)
    throw Error("accuracy: no ground truth for data that is not analytic");
  stop_worker();
  auto p = std::make_unique<Pending>();
  p->jobs = std::move(jobs);
  p->against = reference;
  const std::size_t channels = exact_->channels();
  for (const AccuracyJob& job : p->jobs) {
    std::vector<float> pos;
    std::vector<std::size_t> pix;
    const bool derivative = job.quantity.kind != gl::QuantityKind::Value;
    const bool measurable =
        gl::quantity_problem(job.method, job.quantity, exact_->rank()).empty() &&
        !(derivative && reference.kind == ReferenceKind::Truth) &&
        !(job.method == gl::Fetch::Grbf && !grbf_exact_);
    if (measurable) job_positions(job.grid, exact_->dims(), &pos, &pix);
    p->total_points += pix.size();
    p->gpu.push_back(pix.empty() ? ArrayF() : ArrayF({pix.size()}, channels));
    p->reference.push_back(pix.empty() ? ArrayD() : ArrayD({pix.size()}, channels));
    p->gpu_done.push_back(0);
    p->positions.push_back(std::move(pos));
    p->pixels.push_back(std::move(pix));
  }
  pending_ = std::move(p);
  busy_ = true;
  start_reference();
}

void AccuracyMeter::start_reference() {
  Pending* p = pending_.get();
  // The method each job is compared with (SameMethod: its own; Truth: none).
  const auto reference_method = [p](const AccuracyJob& j) {
    return p->against.kind == ReferenceKind::Method ? p->against.method : j.method;
  };
  // Derivative jobs compare with a cubic: the reference method's if it is one (the unfiltered
  // cubic: the spline of the samples), else the prefiltered cubic.
  const auto derivative_prefiltered = [reference_method](const AccuracyJob& j) {
    return reference_method(j) != gl::Fetch::CubicUnfiltered;
  };
  const auto is_derivative = [](const AccuracyJob& j) {
    return j.quantity.kind != gl::QuantityKind::Value;
  };
  const bool need_coefficients =
      !exact_coefficients_ && p->against.kind != ReferenceKind::Truth &&
      std::any_of(p->jobs.begin(), p->jobs.end(), [&](const AccuracyJob& j) {
        return is_derivative(j) ? derivative_prefiltered(j)
                                : gl::fetch_prefiltered(reference_method(j));
      });
  worker_ = std::thread([this, p, need_coefficients, reference_method, derivative_prefiltered,
                         is_derivative, grbf = grbf_exact_] {
    try {
      if (need_coefficients) {
        // The coefficients of the same lambda as the GPU's (lambda 0: sv::prefilter's bits).
        auto c = std::make_shared<ArrayD>(*exact_);
        SplineTransformOptions t;
        t.degree = 3;
        t.lambda = lambda_;
        t.boundary = Boundary::Reflect;
        direct_transform(*c, t);
        exact_coefficients_ = std::move(c);
      }
      const std::size_t rank = exact_->rank();
      const std::size_t channels = exact_->channels();
      std::vector<double> pos;
      if (p->against.kind == ReferenceKind::Truth) {
        // The function in double at the same float positions.
        for (std::size_t j = 0; j < p->jobs.size(); ++j) {
          const std::size_t m = p->pixels[j].size();
          double q[3] = {0, 0, 0};
          for (std::size_t i = 0; i < m; ++i) {
            if (i % kReferenceChunk == 0 && cancel_) return;
            for (std::size_t d = 0; d < rank; ++d)
              q[d] = static_cast<double>(p->positions[j][i * rank + d]);
            for (std::size_t c = 0; c < channels; ++c)
              p->reference[j][i * channels + c] = truth_.value(q, c);
            if ((i + 1) % kReferenceChunk == 0 || i + 1 == m)
              p->reference_done += (i % kReferenceChunk) + 1;
          }
        }
        p->reference_finished = true;
        return;
      }
      for (std::size_t j = 0; j < p->jobs.size(); ++j) {
        const gl::Fetch method = reference_method(p->jobs[j]);
        if (is_derivative(p->jobs[j])) {
          const bool pre = derivative_prefiltered(p->jobs[j]);
          std::shared_ptr<SplineDerivatives<double>>& spline =
              pre ? prefiltered_derivatives_ : unfiltered_derivatives_;
          if (!spline) {
            DerivativeOptions d;
            d.degree = 3;
            d.boundary = Boundary::Reflect;
            d.input_is_coefficients = true;
            spline = std::make_shared<SplineDerivatives<double>>(
                pre ? ArrayD(*exact_coefficients_) : ArrayD(*exact_), d);
          }
          const std::size_t m = p->pixels[j].size();
          for (std::size_t begin = 0; begin < m; begin += kReferenceChunk) {
            if (cancel_) return;
            const std::size_t n = std::min(kReferenceChunk, m - begin);
            pos.assign(p->positions[j].begin() + static_cast<std::ptrdiff_t>(begin * rank),
                       p->positions[j].begin() + static_cast<std::ptrdiff_t>((begin + n) * rank));
            quantity_reference(*spline, p->jobs[j].quantity, axis_scale_, pos.data(), n,
                               p->reference[j].data() + begin * channels);
            p->reference_done += n;
          }
          continue;
        }
        if (method == gl::Fetch::Grbf) {
          // The GRBF interpolant in double: the double weights' truncated sum (its bound below
          // the double precision of the data).
          const std::size_t m = p->pixels[j].size();
          GrbfEvalOptions eo;
          eo.threads = 1;
          for (std::size_t begin = 0; begin < m && grbf; begin += kReferenceChunk) {
            if (cancel_) return;
            const std::size_t n = std::min(kReferenceChunk, m - begin);
            pos.assign(p->positions[j].begin() + static_cast<std::ptrdiff_t>(begin * rank),
                       p->positions[j].begin() + static_cast<std::ptrdiff_t>((begin + n) * rank));
            grbf_sample(*grbf, pos.data(), n, p->reference[j].data() + begin * channels, eo);
            p->reference_done += n;
          }
          continue;
        }
        SamplerOptions opt;
        opt.degree = method_degree(method);
        opt.boundary = Boundary::Reflect;
        const ArrayD& data = gl::fetch_prefiltered(method) ? *exact_coefficients_ : *exact_;
        const std::size_t m = p->pixels[j].size();
        for (std::size_t begin = 0; begin < m; begin += kReferenceChunk) {
          if (cancel_) return;
          const std::size_t n = std::min(kReferenceChunk, m - begin);
          pos.assign(p->positions[j].begin() + static_cast<std::ptrdiff_t>(begin * rank),
                     p->positions[j].begin() + static_cast<std::ptrdiff_t>((begin + n) * rank));
          sample(data, pos.data(), n, p->reference[j].data() + begin * channels, opt);
          p->reference_done += n;
        }
      }
    } catch (const std::exception& e) {
      p->worker_error = e.what();
    }
    p->reference_finished = true;
  });
}

float AccuracyMeter::fraction() const {
  if (!pending_ || !busy_) return 1.0f;
  const Pending& p = *pending_;
  if (p.total_points == 0) return 1.0f;
  std::size_t gpu = 0;
  for (std::size_t d : p.gpu_done) gpu += d;
  return static_cast<float>(gpu + p.reference_done) / static_cast<float>(2 * p.total_points);
}

void AccuracyMeter::step(double budget_ms) {
  if (!busy_ || !pending_) return;
  Pending& p = *pending_;
  const auto start = std::chrono::steady_clock::now();
  const std::size_t rank = exact_->rank();
  const std::size_t channels = exact_->channels();
  for (std::size_t j = 0; j < p.jobs.size(); ++j) {
    const gl::Fetch method = p.jobs[j].method;
    const std::size_t m = p.pixels[j].size();
    if (m == 0) continue;  // nothing to measure (no positions, or a quantity it cannot show)
    const gl::Quantity& q = p.jobs[j].quantity;
    const std::string key = std::string(gl::fetch_name(method)) + "/" + gl::quantity_name(q);
    auto it = evaluators_.find(key);
    if (it == evaluators_.end()) {
      gl::EvalOptions opt;
      opt.fetch = method;
      opt.boundary = Boundary::Reflect;
      opt.quantity = q;
      if (q.kind != gl::QuantityKind::Value) opt.axis_scale = axis_scale_;
      if (method == gl::Fetch::Grbf && grbf_gpu_) {
        opt.grbf.sigma = grbf_gpu_->sigma;
        opt.grbf.radius = grbf_gpu_->radius;
      }
      it = evaluators_.emplace(key, std::make_unique<gl::Evaluator>(opt, rank)).first;
    }
    if (method == gl::Fetch::Grbf && !grbf_tex_) continue;
    const gl::SplineTexture& tex = method == gl::Fetch::Grbf       ? *grbf_tex_
                                   : gl::fetch_prefiltered(method) ? coefficients_tex_
                                                                   : samples_tex_;
    while (p.gpu_done[j] < m) {
      if (budget_ms >= 0 && ms_since(start) > budget_ms) return;
      const std::size_t begin = p.gpu_done[j];
      const std::size_t n = std::min(kGpuChunk, m - begin);
      const std::vector<float> values =
          it->second->evaluate(tex, p.positions[j].data() + begin * rank, n);
      std::copy(values.begin(), values.end(),
                p.gpu[j].vec().begin() + static_cast<std::ptrdiff_t>(begin * channels));
      p.gpu_done[j] += n;
    }
  }
  if (p.reference_finished) complete();
}

void AccuracyMeter::finish() {
  while (busy_) {
    step(-1.0);
    if (busy_) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

void AccuracyMeter::complete() {
  if (worker_.joinable()) worker_.join();
  Pending& p = *pending_;
  if (!p.worker_error.empty()) {
    busy_ = false;
    pending_.reset();
    throw Error("accuracy reference: " + p.worker_error);
  }
  const std::size_t channels = exact_->channels();
  std::vector<AccuracyResult> results;
  for (std::size_t j = 0; j < p.jobs.size(); ++j) {
    AccuracyResult r;
    r.job = p.jobs[j];
    r.reference = p.against;
    const std::size_t m = p.pixels[j].size();
    r.points = m;
    r.error.assign(r.job.grid.rows * r.job.grid.cols, std::numeric_limits<float>::quiet_NaN());
    if (m > 0) {
      const ArrayF& gpu = p.gpu[j];
      const ArrayD& ref = p.reference[j];
      r.stats = compare(gpu, ref);
      for (std::size_t i = 0; i < m; ++i) {
        double e = 0;
        for (std::size_t c = 0; c < channels; ++c)
          e = std::max(
              e, std::fabs(static_cast<double>(gpu[i * channels + c]) - ref[i * channels + c]));
        const float ef = static_cast<float>(e);
        r.error[p.pixels[j][i]] = ef;
        r.error_max = std::max(r.error_max, ef);
      }
    }
    results.push_back(std::move(r));
  }
  results_ = std::move(results);
  ++generation_;
  busy_ = false;
  pending_.reset();
}

// ---- AccuracyOverlay ----

void AccuracyOverlay::reset(std::unique_ptr<AccuracyMeter> meter, std::string note) {
  meter_ = std::move(meter);
  note_ = std::move(note);
  jobs_.clear();
  jobs_reference_ = reference;
  jobs_changed_s_ = 0;
  jobs_measured_ = false;
  heat_.clear();
  heat_generation_ = 0;
}

std::string AccuracyOverlay::reference_problem() const {
  if (reference.kind != ReferenceKind::Truth || !meter_ || meter_->has_truth()) return {};
  return "no ground truth: only analytic data (the zone plate, the Marschner-Lobb volume) has "
         "a function to compare with; files are samples of an unknown signal";
}

void AccuracyOverlay::update(std::vector<AccuracyJob> jobs, double time_s, bool now) {
  if (!enabled || !meter_) return;
  if (!reference_problem().empty()) return;
  if (!same_jobs(jobs, jobs_)) {
    jobs_ = std::move(jobs);
    jobs_changed_s_ = time_s;
    jobs_measured_ = false;
  }
  if (reference != jobs_reference_) {  // a new reference: measure at once (no debounce)
    jobs_reference_ = reference;
    if (jobs_measured_) jobs_changed_s_ = time_s - kDebounceS;
    jobs_measured_ = false;
  }
  if (!jobs_measured_ && (now || time_s - jobs_changed_s_ >= kDebounceS)) {
    meter_->measure(jobs_, jobs_reference_);
    jobs_measured_ = true;
  }
  std::exception_ptr failure;
  try {
    if (now) {
      meter_->finish();
    } else {
      meter_->step(kBudgetMs);
    }
  } catch (...) {
    failure = std::current_exception();
  }
  upload_heat_maps();
  if (failure) std::rethrow_exception(failure);
}

void AccuracyOverlay::upload_heat_maps() {
  if (!meter_ || meter_->generation() == heat_generation_) return;
  heat_generation_ = meter_->generation();
  heat_.clear();
  for (const AccuracyResult& r : meter_->results()) {
    const int w = static_cast<int>(r.job.grid.cols), h = static_cast<int>(r.job.grid.rows);
    if (w <= 0 || h <= 0) {
      heat_.emplace_back();
      continue;
    }
    std::vector<std::uint32_t> rgba(r.error.size());
    for (std::size_t i = 0; i < rgba.size(); ++i) rgba[i] = heat_colour(r.error[i]);
    gl::Texture t = gl::Texture::create_2d(GL_RGBA8, w, h);
    t.set_filter(GL_NEAREST, GL_NEAREST);
    t.upload_2d(GL_RGBA, GL_UNSIGNED_BYTE, rgba.data());
    heat_.push_back(std::move(t));
  }
}

const std::vector<AccuracyResult>& AccuracyOverlay::results() const {
  static const std::vector<AccuracyResult> kNone;
  return meter_ ? meter_->results() : kNone;
}

const AccuracyResult* AccuracyOverlay::result(std::size_t i) const {
  if (!meter_ || !jobs_measured_ || meter_->busy()) return nullptr;
  const std::vector<AccuracyResult>& r = meter_->results();
  if (i >= r.size() || r.size() != jobs_.size() || r[i].reference != reference) return nullptr;
  std::vector<AccuracyJob> measured;
  for (const AccuracyResult& x : r) measured.push_back(x.job);
  return same_jobs(measured, jobs_) ? &r[i] : nullptr;
}

const gl::Texture* AccuracyOverlay::heat_texture(std::size_t i) const {
  return i < heat_.size() && heat_[i] ? &heat_[i] : nullptr;
}

}  // namespace sv::viewer
