// The backend registry of splinetool, its CPU backend (the core library: exact prefilter,
// double-accumulating reference sampler, zoom and rotate) and the GL fetch names that the
// command line checks without a GL context. The registry is a table of name -> factory; an entry
// without a factory is a backend that a later version (or another build) provides.
#include "backend.h"

#include <algorithm>

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

std::unique_ptr<Backend> make_cpu(const BackendOptions& opt) {
  if (!opt.fetch.empty() || !opt.format.empty())
    throw sv::Error(std::string("--") + (opt.fetch.empty() ? "format" : "fetch") +
                    " selects how the GL shaders fetch; it needs --backend gl");
  return std::make_unique<CpuBackend>();
}

const Entry kBackends[] = {
    {"cpu", make_cpu, ""},
    {"cuda", nullptr, "--backend cuda is not implemented yet in this version; use --backend cpu"},
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

const char* const kFetchNames[] = {"nearest", "linear", "cubic-unfiltered",
                                   "lut",     "otf",    "precise"};

bool is_one_of(const std::string& s, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return s == n; });
}

}  // namespace

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const Entry& e : kBackends) names.emplace_back(e.name);
  return names;
}

bool backend_available(const std::string& name) {
  const Entry* e = find(name);
  return e && e->make;
}

std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& opt) {
  const Entry* e = find(name);
  if (!e) throw sv::Error("unknown backend '" + name + "' (expected cpu, cuda or gl)");
  if (!e->make) throw sv::Error(e->why_missing);
  return e->make(opt);
}

std::vector<std::string> fetch_names() {
  return std::vector<std::string>(std::begin(kFetchNames), std::end(kFetchNames));
}

std::vector<std::string> format_names() {
  return {"r32f", "r16f", "r16"};
}

bool fetch_is_prefiltered(const std::string& fetch) {
  return is_one_of(fetch, {"lut", "otf", "precise"});
}

int fetch_degree(const std::string& fetch) {
  if (fetch == "nearest") return 0;
  if (fetch == "linear") return 1;
  return 3;
}

bool fetch_has_derivative(const std::string& fetch) {
  return is_one_of(fetch, {"otf", "precise", "cubic-unfiltered"});
}

std::string fetch_for_method(sv::Method method, const std::string& cubic_fetch) {
  switch (method) {
    case sv::Method::Nearest:
      return "nearest";
    case sv::Method::Linear:
      return "linear";
    case sv::Method::CubicUnfiltered:
      return "cubic-unfiltered";
    case sv::Method::Cubic:
      return cubic_fetch.empty() ? "otf" : cubic_fetch;
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
