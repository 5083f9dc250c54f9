// The backend registry of splinetool, its CPU backend (the core library: exact prefilter,
// double-accumulating reference sampler, zoom and rotate) and the fetch names of the GPU
// backends that the command line checks without a GL context or CUDA device. The registry is a
// table of name -> factory; an entry without a factory is a backend another build provides.
#include "backend.h"

#include <algorithm>

#include "backend_cuda.h"
#include "commands.h"
#include "splineview/cuda_device.h"
#include "splineview/error.h"

#ifdef SPLINEVIEW_HAVE_GL
#include "backend_gl.h"
#endif

namespace splinetool {
namespace {

class CpuBackend final : public Backend {
 public:
  const char* name() const override { return "cpu"; }

  void prefilter(sv::ArrayF& a, const sv::PrefilterOptions& opt) override { sv::prefilter(a, opt); }
  void prefilter(sv::ArrayD& a, const sv::PrefilterOptions& opt) override { sv::prefilter(a, opt); }

  void sample(const sv::ArrayF& c, const std::vector<double>& positions, double* out,
              const sv::SamplerOptions& opt) override {
    sv::sample(c, positions.data(), positions.size() / c.rank(), out, opt);
  }
  void sample(const sv::ArrayD& c, const std::vector<double>& positions, double* out,
              const sv::SamplerOptions& opt) override {
    sv::sample(c, positions.data(), positions.size() / c.rank(), out, opt);
  }

  sv::ArrayF zoom(const sv::ArrayF& a, double factor, const sv::ResampleOptions& opt) override {
    return sv::zoom(a, factor, opt);
  }
  sv::ArrayD zoom(const sv::ArrayD& a, double factor, const sv::ResampleOptions& opt) override {
    return sv::zoom(a, factor, opt);
  }
  sv::ArrayF rotate(const sv::ArrayF& a, double degrees, const sv::ResampleOptions& opt) override {
    return sv::rotate(a, degrees, opt);
  }
  sv::ArrayD rotate(const sv::ArrayD& a, double degrees, const sv::ResampleOptions& opt) override {
    return sv::rotate(a, degrees, opt);
  }
};

using Factory = std::unique_ptr<Backend> (*)(const BackendOptions&);

struct Entry {
  const char* name;
  Factory make;             // null: not available in this build
  const char* why_missing;  // the sentence when `make` is null
};

std::unique_ptr<Backend> make_cpu(const BackendOptions&) {
  return std::make_unique<CpuBackend>();
}

// splineview_cuda is linked into every build (without the toolkit its calls throw, and
// sv::cuda::available() says why), so cuda always has a factory; it refuses where no device is.
const Entry kBackends[] = {
    {"cpu", make_cpu, ""},
    {"cuda", make_cuda_backend, ""},
#ifdef SPLINEVIEW_HAVE_GL
    {"gl", make_gl_backend, ""},
#else
    {"gl", nullptr,
     "--backend gl is not built in this splinetool (configure with SPLINEVIEW_BUILD_VIEWER=ON); "
     "use --backend cpu"},
#endif
};

const Entry* find(const std::string& name) {
  for (const Entry& e : kBackends)
    if (name == e.name) return &e;
  return nullptr;
}

const char* const kGlFetches[] = {"nearest", "linear", "cubic-unfiltered", "lut", "otf", "precise"};
const char* const kCudaFetches[] = {"nearest", "linear", "cubic", "precise"};

bool is_one_of(const std::string& s, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return s == n; });
}

std::string list_names(const std::vector<std::string>& names) {
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i)
    list += (i == 0 ? "" : (i + 1 == names.size() ? " or " : ", ")) + names[i];
  return list;
}

// --fetch and --format against the backend's vocabulary, before the backend exists (so before
// any GL context or CUDA device work). A mismatch is a command-line error (exit status 2).
void check_options(const std::string& backend, const BackendOptions& opt) {
  const std::vector<std::string> fetches = fetch_names(backend);
  if (!opt.fetch.empty() && fetches.empty())
    throw UsageError("--fetch selects how a GPU backend fetches; it needs --backend gl or cuda");
  if (!opt.fetch.empty() && std::find(fetches.begin(), fetches.end(), opt.fetch) == fetches.end())
    throw UsageError("--fetch " + opt.fetch + " is not a fetch of --backend " + backend +
                     " (expected " + list_names(fetches) + ")");
  if (!opt.format.empty() && backend != "gl")
    throw UsageError("--format selects the GL texture format; it needs --backend gl");
}

}  // namespace

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const Entry& e : kBackends) names.emplace_back(e.name);
  return names;
}

bool backend_available(const std::string& name) {
  const Entry* e = find(name);
  if (!e || !e->make) return false;
  return name != "cuda" || sv::cuda_compiled();
}

std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& opt) {
  const Entry* e = find(name);
  if (!e) throw sv::Error("unknown backend '" + name + "' (expected cpu, cuda or gl)");
  if (!e->make) throw sv::Error(e->why_missing);
  check_options(name, opt);
  return e->make(opt);
}

std::vector<std::string> fetch_names(const std::string& backend) {
  if (backend == "gl")
    return std::vector<std::string>(std::begin(kGlFetches), std::end(kGlFetches));
  if (backend == "cuda")
    return std::vector<std::string>(std::begin(kCudaFetches), std::end(kCudaFetches));
  return {};
}

std::vector<std::string> all_fetch_names() {
  std::vector<std::string> names = fetch_names("gl");
  for (const std::string& n : fetch_names("cuda"))
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  return names;
}

std::string default_fetch(const std::string& backend) {
  // cuda defaults to the exact-arithmetic flavour: its hardware-filtered cubic carries the
  // texture unit's 8-bit weights, which users of a CUDA backend would not expect by default.
  if (backend == "gl") return "otf";
  if (backend == "cuda") return "precise";
  return "";
}

std::vector<std::string> format_names() {
  return {"r32f", "r16f", "r16"};
}

bool fetch_is_prefiltered(const std::string& fetch) {
  return is_one_of(fetch, {"lut", "otf", "precise", "cubic"});
}

int fetch_degree(const std::string& fetch) {
  if (fetch == "nearest") return 0;
  if (fetch == "linear") return 1;
  return 3;
}

bool fetch_has_derivative(const std::string& fetch, const std::string& backend) {
  return backend == "gl" && is_one_of(fetch, {"otf", "precise", "cubic-unfiltered"});
}

std::string fetch_for_method(sv::Method method, const std::string& cubic_fetch,
                             const std::string& backend) {
  const std::string cubic = cubic_fetch.empty() ? default_fetch(backend) : cubic_fetch;
  switch (method) {
    case sv::Method::Nearest:
      return "nearest";
    case sv::Method::Linear:
      return "linear";
    case sv::Method::CubicUnfiltered:
      return backend == "cuda" ? cubic : "cubic-unfiltered";
    case sv::Method::Cubic:
      return cubic;
    case sv::Method::Quintic:
    case sv::Method::Septic:
      break;
  }
  return "";
}

#ifndef SPLINEVIEW_HAVE_GL
GlStatus gl_status() {
  GlStatus s;
  s.reason = "this splinetool was built without the GL layer (SPLINEVIEW_BUILD_VIEWER=OFF)";
  return s;
}
#endif

}  // namespace splinetool
