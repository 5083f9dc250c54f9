// The backend registry of splinetool and its CPU backend (the core library: exact prefilter,
// double-accumulating reference sampler, zoom and rotate). The registry is a table of name ->
// factory; an entry without a factory is a backend another build provides. The gl factory loads
// the GL module (modules.cpp); the fetch names of the GPU backends are in fetch_names.cpp.
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

#ifndef SPLINEVIEW_HAVE_GL
GlStatus gl_status() {
  GlStatus s;
  s.reason = "this splinetool was built without the GL layer (SPLINEVIEW_BUILD_VIEWER=OFF)";
  return s;
}
#endif

}  // namespace splinetool
