// Resampling of whole 2-D images (and 3-D volumes for zoom) on the CPU: zoom by a factor and
// rotation about the centre, optionally repeated (each step prefilters the previous result).
#pragma once

#include <string>

#include "splineview/array.h"

namespace sv {

enum class Method { Nearest, Linear, CubicUnfiltered, Cubic, Quintic, Septic };

const char* method_name(Method m);
Method parse_method(const std::string& s);  // throws sv::Error naming the bad value
// Inline: the numerical core (splineview_math: sv::warp, the registration) uses them without
// linking the rest of resampling (splineview_core).
inline int method_degree(Method m) {  // 0, 1, 3, 3, 5, 7
  switch (m) {
    case Method::Nearest:
      return 0;
    case Method::Linear:
      return 1;
    case Method::CubicUnfiltered:
    case Method::Cubic:
      return 3;
    case Method::Quintic:
      return 5;
    case Method::Septic:
      return 7;
  }
  return 3;
}
inline bool method_prefilters(Method m) {  // false for nearest, linear, cubic-unfiltered
  return m == Method::Cubic || m == Method::Quintic || m == Method::Septic;
}

struct ResampleOptions {
  Method method = Method::Cubic;
  Boundary boundary = Boundary::Reflect;
  unsigned threads = 0;
  double cval = 0.0;  // the value outside for Boundary::Constant and GridConstant
};

// Output extent round(N * factor) per axis (halves to even, as scipy.ndimage.zoom); output sample j
// sits at input position (j + 1/2) / factor - 1/2 (pixel areas aligned; the image keeps its
// extent).
template <class T>
Array<T> zoom(const Array<T>& samples, double factor, const ResampleOptions& opt = {});

// 2-D only: rotates by `degrees` (counter-clockwise as displayed, y down) about the centre
// ((H-1)/2, (W-1)/2); same extent as the input. Output pixel p takes the input at
// R(-degrees) (p - centre) + centre.
template <class T>
Array<T> rotate(const Array<T>& samples, double degrees, const ResampleOptions& opt = {});

}  // namespace sv
