// Compute backends of splinetool: the operations the commands need (prefilter, point sampling,
// zoom, rotation), behind one small interface so that the CUDA and OpenGL paths slot in without
// touching the commands. Backends: cpu (the core library), gl (the GLSL fetch family through a
// headless EGL context; prefiltering stays on the CPU, in float) and cuda (prefilter and
// reconstruction kernels of cuda/, in float; refused with the reason where no device can run
// them).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "splineview/array.h"
#include "splineview/prefilter.h"
#include "splineview/resample.h"
#include "splineview/sampler.h"

namespace splinetool {

// Every operation comes in float and double: "single" precision keeps samples and
// coefficients in float (the sampler still accumulates in double), "double" keeps all in double.
// A backend that cannot compute in one of them throws sv::Error from those overloads.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;

  virtual void prefilter(sv::ArrayF& a, const sv::PrefilterOptions& opt) = 0;
  virtual void prefilter(sv::ArrayD& a, const sv::PrefilterOptions& opt) = 0;

  // positions: m * rank coordinates (array axis order); out: m * channels values.
  virtual void sample(const sv::ArrayF& c, const std::vector<double>& positions, double* out,
                      const sv::SamplerOptions& opt) = 0;
  virtual void sample(const sv::ArrayD& c, const std::vector<double>& positions, double* out,
                      const sv::SamplerOptions& opt) = 0;

  virtual sv::ArrayF zoom(const sv::ArrayF& a, double factor, const sv::ResampleOptions& opt) = 0;
  virtual sv::ArrayD zoom(const sv::ArrayD& a, double factor, const sv::ResampleOptions& opt) = 0;
  virtual sv::ArrayF rotate(const sv::ArrayF& a, double degrees,
                            const sv::ResampleOptions& opt) = 0;
  virtual sv::ArrayD rotate(const sv::ArrayD& a, double degrees,
                            const sv::ResampleOptions& opt) = 0;

  // GPU time of the operations run so far, in milliseconds (GL timer queries, CUDA events around
  // the kernels); nullopt for backends without one.
  virtual std::optional<double> gpu_ms() const { return std::nullopt; }
};

// What a GPU backend evaluates with; empty strings mean the backend's default (default_fetch();
// format r32f). cpu accepts only empty options, cuda no format.
struct BackendOptions {
  std::string fetch;   // one of fetch_names(backend)
  std::string format;  // gl only: one of format_names()
};

// Names accepted by --backend, in the order the help text lists them.
std::vector<std::string> backend_names();

// True when this build can create the named backend (gl: compiled in; cuda: built with the CUDA
// toolkit). Whether a GL context can be created on this machine is gl_status()'s question,
// whether a CUDA device is there sv::cuda_devices()'s.
bool backend_available(const std::string& name);

// Creates the named backend; throws sv::Error with a one-line sentence when the name is
// unknown, the backend is not built, or the options do not fit it, and for cuda when no device
// can run its kernels (checked here, before any work). The gl backend creates its GL context
// lazily, on the first operation.
std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& opt = {});

// The fetch flavours of the GPU backends and the GL texture formats by name, known without GL or
// CUDA so that the command line can be checked before any context or device exists (they match
// sv::gl::fetch_name / format_name and sv::cuda::fetch_name).
// gl: nearest, linear, cubic-unfiltered, lut, otf, precise; cuda: nearest, linear, cubic,
// precise; cpu: none.
std::vector<std::string> fetch_names(const std::string& backend = "gl");
std::vector<std::string> all_fetch_names();             // the union, for the command line parser
std::string default_fetch(const std::string& backend);  // gl otf, cuda precise, cpu ""
std::vector<std::string> format_names();                // r32f, r16f, r16
bool fetch_is_prefiltered(const std::string& fetch);    // lut, otf, precise, cubic
int fetch_degree(const std::string& fetch);             // 0 nearest, 1 linear, 3 the cubic ones
// gl: otf, precise, cubic-unfiltered; cuda: none (its kernels evaluate values only).
bool fetch_has_derivative(const std::string& fetch, const std::string& backend = "gl");
// The fetch flavour that resamples with `method` on a GPU backend ("" when there is none, e.g.
// quintic); `cubic_fetch` is the flavour of the prefiltered cubic ("" = the default). cuda has
// no separate unfiltered fetch: cubic-unfiltered runs the cubic flavour on the raw samples.
std::string fetch_for_method(sv::Method method, const std::string& cubic_fetch,
                             const std::string& backend = "gl");

// Whether the GL backend works here: compiled in, and a headless context could be created.
struct GlStatus {
  bool compiled = false;
  bool works = false;
  std::string description;  // GL_RENDERER, GL_VERSION (when it works)
  std::string platform;     // EGL platform: "surfaceless" or "device" (when it works)
  std::string reason;       // why not (when it does not)
};
GlStatus gl_status();

}  // namespace splinetool
