// Compute backends of splinetool: the operations the commands need (prefilter, point sampling,
// zoom, rotation), behind one small interface so that the CUDA and OpenGL paths can slot in
// later without touching the commands. Today only the CPU backend (the core library) exists;
// asking for another one fails with a sentence that says so.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "splineview/array.h"
#include "splineview/prefilter.h"
#include "splineview/resample.h"
#include "splineview/sampler.h"

namespace splinetool {

// Every operation comes in float and double: "single" precision keeps samples and
// coefficients in float (the sampler still accumulates in double), "double" keeps all in double.
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
};

// Names accepted by --backend, in the order the help text lists them.
std::vector<std::string> backend_names();

// True when this build can create the named backend.
bool backend_available(const std::string& name);

// Creates the named backend; throws sv::Error with a one-line sentence when the name is
// unknown or the backend is not implemented in this version.
std::unique_ptr<Backend> make_backend(const std::string& name);

}  // namespace splinetool
