// The backend registry of splinetool and its CPU backend (the core library: exact prefilter,
// double-accumulating reference sampler, zoom and rotate). The registry is a table of
// name -> factory; an entry without a factory is a backend that a later version provides.
#include "backend.h"

#include "splineview/error.h"

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

struct Entry {
  const char* name;
  std::unique_ptr<Backend> (*make)();  // null: not implemented in this version
};

const Entry kBackends[] = {
    {"cpu", []() -> std::unique_ptr<Backend> { return std::make_unique<CpuBackend>(); }},
    {"cuda", nullptr},
    {"gl", nullptr},
};

const Entry* find(const std::string& name) {
  for (const Entry& e : kBackends)
    if (name == e.name) return &e;
  return nullptr;
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

std::unique_ptr<Backend> make_backend(const std::string& name) {
  const Entry* e = find(name);
  if (!e) throw sv::Error("unknown backend '" + name + "' (expected cpu, cuda or gl)");
  if (!e->make)
    throw sv::Error("--backend " + name +
                    " is not implemented yet in this version; use --backend cpu");
  return e->make();
}

}  // namespace splinetool
