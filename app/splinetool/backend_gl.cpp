// The GL backend of splinetool: the samples (or, for the prefiltered flavours, their float
// B-spline coefficients computed on the CPU with sv::prefilter<float>) go into a float texture,
// and sv::gl::Evaluator evaluates them in a headless EGL context, one fragment per position
// (sample) or per output pixel (zoom, rotate). All GL work happens in single precision; the
// double overloads refuse. GPU time is summed from the evaluator's timer queries.
#include "backend_gl.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>
#include <utility>

#include "splineview/error.h"
#include "splineview/gl/evaluator.h"
#include "splineview/gl/gl.h"
#include "splineview/gl/grids.h"
#include "splineview/gl/headless.h"

namespace splinetool {
namespace {

namespace gl = sv::gl;

const char* const kDoubleRefused =
    "--backend gl computes in single precision (float textures); use --precision single";

std::string format_value(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// A 1-D array as the single row of a 1 x N image (the evaluator works in 2-D and 3-D).
sv::ArrayF as_texture_shape(const sv::ArrayF& a) {
  if (a.rank() != 1) return a;
  sv::ArrayF b({1, a.dim(0)}, a.channels());
  b.vec() = a.vec();
  return b;
}

// The context and the compiled evaluators (one a fetch, boundary, derivative and rank). A
// command owns one for its lifetime; in a batch (share_gl_context) every command shares one,
// created by the first that needs it and destroyed when the batch ends, so the batch pays for
// the context and each shader once.
struct GlSession {
  using Key = std::tuple<int, int, int, std::size_t>;
  // Declared first so that it is destroyed last, after every GL object below.
  std::unique_ptr<gl::HeadlessContext> context;
  std::map<Key, std::unique_ptr<gl::Evaluator>> evaluators;
  bool timer_trusted = true;
};

bool g_share = false;
std::unique_ptr<GlSession> g_shared;

class GlBackend final : public Backend {
 public:
  explicit GlBackend(const BackendOptions& opt)
      : fetch_(gl::parse_fetch(opt.fetch.empty() ? "otf" : opt.fetch)),
        format_(gl::parse_format(opt.format.empty() ? "r32f" : opt.format)) {
    if (!g_share) {
      own_ = std::make_unique<GlSession>();
      session_ = own_.get();
      return;
    }
    if (!g_shared) g_shared = std::make_unique<GlSession>();
    session_ = g_shared.get();
    // A shared context starts every command clean: no error left by an earlier one.
    if (session_->context)
      while (glGetError() != GL_NO_ERROR) {
      }
  }

  const char* name() const override { return "gl"; }

  // On the CPU, in float: the coefficients the GL backend uploads (prefiltering on the GPU is a
  // later issue). `splinetool prefilter` refuses --backend gl rather than pretend otherwise.
  void prefilter(sv::ArrayF& a, const sv::PrefilterOptions& opt) override { sv::prefilter(a, opt); }
  void prefilter(sv::ArrayD&, const sv::PrefilterOptions&) override {
    throw sv::Error(kDoubleRefused);
  }

  // Evaluates with the configured fetch flavour; sopt.degree is the command's business.
  void sample(const sv::ArrayF& c, const std::vector<double>& positions, double* out,
              const sv::SamplerOptions& sopt) override {
    const std::size_t rank = c.rank(), m = positions.size() / rank;
    const sv::ArrayF data = as_texture_shape(c);
    const std::size_t tex_rank = data.rank();
    std::vector<float> pos(m * tex_rank);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t d = 0; d < tex_rank; ++d)
        pos[i * tex_rank + d] = rank == tex_rank
                                    ? static_cast<float>(positions[i * rank + d])
                                    : (d == 0 ? 0.0f : static_cast<float>(positions[i]));
    const int derivative =
        sopt.derivative_axis < 0 ? -1 : sopt.derivative_axis + static_cast<int>(tex_rank - rank);
    const gl::SplineTexture tex = texture(data, fetch_);
    gl::Evaluator& ev = evaluator(fetch_, sopt.boundary, derivative, tex_rank);
    double ms = 0;
    const Wall wall;
    const std::vector<float> v = ev.evaluate(tex, pos.data(), m, &ms);
    add_time(ms, wall.ms());
    std::copy(v.begin(), v.end(), out);
  }
  void sample(const sv::ArrayD&, const std::vector<double>&, double*,
              const sv::SamplerOptions&) override {
    throw sv::Error(kDoubleRefused);
  }

  sv::ArrayF zoom(const sv::ArrayF& a, double factor, const sv::ResampleOptions& opt) override {
    std::vector<std::size_t> dims;
    for (std::size_t d : a.dims()) {
      // round(N * F) with halves to even, as scipy.ndimage.zoom (Python round) and the CPU path.
      const double e = std::nearbyint(static_cast<double>(d) * factor);
      if (e < 1) throw sv::Error("zoom: factor " + format_value(factor) + " leaves an empty axis");
      if (e > 65536)
        throw sv::Error("zoom: factor " + format_value(factor) +
                        " gives an axis over 65536 samples (too large for --backend gl)");
      dims.push_back(static_cast<std::size_t>(e));
    }
    const gl::Fetch fetch = fetch_of(opt.method);
    const sv::ArrayF data = as_texture_shape(coefficients(a, opt));
    const std::size_t rank = data.rank();
    // Output sample j of an axis sits at input position (j + 1/2) / f - 1/2, f = out / in.
    std::vector<double> step(rank), first(rank);
    const std::size_t offset = rank - a.rank();  // 1 for a 1-D input shown as 1 x N
    for (std::size_t d = 0; d < rank; ++d) {
      const double out_n = d < offset ? 1.0 : static_cast<double>(dims[d - offset]);
      const double f = out_n / static_cast<double>(data.dim(d));
      step[d] = 1.0 / f;
      first[d] = 0.5 / f - 0.5;
    }
    const gl::SplineTexture tex = texture(data, fetch);
    gl::Evaluator& ev = evaluator(fetch, opt.boundary, -1, rank);
    sv::ArrayF out(dims, a.channels());
    const std::size_t rows = rank == 3 ? dims[1] : (offset ? 1 : dims[0]);
    const std::size_t cols = dims.back();
    const std::size_t slices = rank == 3 ? dims[0] : 1;
    for (std::size_t k = 0; k < slices; ++k) {
      gl::GridMapping g;
      g.rows = rows;
      g.cols = cols;
      for (std::size_t d = 0; d < rank; ++d) g.origin[d] = first[d];
      if (rank == 3) g.origin[0] = first[0] + static_cast<double>(k) * step[0];
      g.step_row[rank - 2] = step[rank - 2];
      g.step_col[rank - 1] = step[rank - 1];
      double ms = 0;
      const Wall wall;
      const sv::ArrayF slice = ev.render_grid(tex, g, &ms);
      add_time(ms, wall.ms());
      std::copy(slice.data(), slice.data() + slice.size(), out.data() + k * slice.size());
    }
    return out;
  }
  sv::ArrayD zoom(const sv::ArrayD&, double, const sv::ResampleOptions&) override {
    throw sv::Error(kDoubleRefused);
  }

  sv::ArrayF rotate(const sv::ArrayF& a, double degrees, const sv::ResampleOptions& opt) override {
    if (a.rank() != 2)
      throw sv::Error("rotate: needs a 2-D image, got a " + std::to_string(a.rank()) + "-D array");
    const gl::Fetch fetch = fetch_of(opt.method);
    const sv::ArrayF data = coefficients(a, opt);
    const std::size_t h = a.dim(0), w = a.dim(1);
    const gl::GridMapping g = gl::rotation_grid(h, w, degrees);
    const gl::SplineTexture tex = texture(data, fetch);
    gl::Evaluator& ev = evaluator(fetch, opt.boundary, -1, 2);
    double ms = 0;
    const Wall wall;
    sv::ArrayF out = ev.render_grid(tex, g, &ms);
    add_time(ms, wall.ms());
    return out;
  }
  sv::ArrayD rotate(const sv::ArrayD&, double, const sv::ResampleOptions&) override {
    throw sv::Error(kDoubleRefused);
  }

  // Null on software renderers, whose timer results are not the draws' time (Mesa llvmpipe 22.3
  // returns timestamps for small draws and a fraction of the time for large ones), and when a
  // result was implausible (longer than the call that it timed).
  std::optional<double> gpu_ms() const override {
    if (timer_implausible_ || !session_->timer_trusted) return std::nullopt;
    return gpu_ms_;
  }

 private:
  using Key = GlSession::Key;

  class Wall {
   public:
    double ms() const {
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
          .count();
    }

   private:
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  };

  void add_time(double gpu_ms, double wall_ms) {
    if (!(gpu_ms >= 0) || gpu_ms > wall_ms + 1.0) timer_implausible_ = true;
    gpu_ms_ += gpu_ms;
  }

  gl::Fetch fetch_of(sv::Method method) const {
    const std::string name = fetch_for_method(method, gl::fetch_name(fetch_));
    if (name.empty())
      throw sv::Error(std::string("--backend gl has no ") + sv::method_name(method) +
                      " fetch (cubic only); use --backend cpu");
    return gl::parse_fetch(name);
  }

  // The input, prefiltered in float on the CPU when the method needs coefficients.
  static sv::ArrayF coefficients(const sv::ArrayF& a, const sv::ResampleOptions& opt) {
    sv::ArrayF c = a;
    if (sv::method_prefilters(opt.method))
      sv::prefilter(c,
                    sv::PrefilterOptions{sv::method_degree(opt.method), opt.boundary, opt.threads});
    return c;
  }

  void ensure_context() {
    if (session_->context) return;
    try {
      session_->context = std::make_unique<gl::HeadlessContext>();
      session_->timer_trusted = gl::timer_queries_meaningful();
    } catch (const std::exception& e) {
      throw sv::Error(std::string("--backend gl: no OpenGL 4.5 context: ") + e.what());
    }
  }

  gl::Evaluator& evaluator(gl::Fetch fetch, sv::Boundary boundary, int derivative,
                           std::size_t rank) {
    ensure_context();
    const Key key{static_cast<int>(fetch), static_cast<int>(boundary), derivative, rank};
    auto it = session_->evaluators.find(key);
    if (it == session_->evaluators.end()) {
      gl::EvalOptions opt;
      opt.fetch = fetch;
      opt.boundary = boundary;
      opt.derivative_axis = derivative;
      it = session_->evaluators.emplace(key, std::make_unique<gl::Evaluator>(opt, rank)).first;
    }
    return *it->second;
  }

  // Uploads `data` (creating the context first when needed). R16 (unsigned normalised) holds
  // [0, 1] only, which is checked here, before any GL work, so that the message can say why
  // (coefficients overshoot their samples).
  gl::SplineTexture texture(const sv::ArrayF& data, gl::Fetch fetch) {
    if (format_ == gl::TexFormat::R16) {
      const auto [lo, hi] = std::minmax_element(data.vec().begin(), data.vec().end());
      const bool finite = std::all_of(data.vec().begin(), data.vec().end(),
                                      [](float v) { return std::isfinite(v); });
      if (!finite || *lo < 0.0f || *hi > 1.0f)
        throw sv::Error(std::string("--format r16 (unsigned normalised) holds values in [0, 1] "
                                    "only; the ") +
                        (gl::fetch_prefiltered(fetch) ? "B-spline coefficients" : "samples") +
                        " span [" + format_value(*lo) + ", " + format_value(*hi) + "]" +
                        (finite ? "" : " with non-finite values") + "; use --format r16f or r32f");
    }
    ensure_context();
    return gl::SplineTexture(data, format_);
  }

  std::unique_ptr<GlSession> own_;  // null when the session is shared
  GlSession* session_ = nullptr;
  gl::Fetch fetch_;
  gl::TexFormat format_;
  double gpu_ms_ = 0;
  bool timer_implausible_ = false;
};

}  // namespace

std::unique_ptr<Backend> make_gl_backend(const BackendOptions& opt) {
  return std::make_unique<GlBackend>(opt);
}

void share_gl_context(bool share) {
  g_share = share;
  if (!share) g_shared.reset();
}

GlStatus gl_status() {
  GlStatus s;
  s.compiled = true;
  try {
    const gl::HeadlessContext context;
    s.works = true;
    s.description = context.description();
    s.platform = context.platform();
  } catch (const std::exception& e) {
    s.reason = e.what();
  }
  return s;
}

}  // namespace splinetool
