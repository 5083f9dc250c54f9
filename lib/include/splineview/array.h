// Containers for 1-D, 2-D and 3-D sampled data with 1..4 interleaved channels.
// Axis order follows NumPy: dims() is (z, y, x) for 3-D, (y, x) for 2-D; x varies fastest and
// the channels of one sample are adjacent (interleaved), as in a (..., C) NumPy array.
#pragma once

#include <cstddef>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "splineview/error.h"

namespace sv {

constexpr std::size_t kMaxRank = 3;
constexpr std::size_t kMaxChannels = 4;

// Element types that files can hold; the arithmetic always happens in float or double.
// dtype_name() gives NumPy's names ("uint8", "int16", "float16", "bool", ...). Loaded values
// are the stored numbers (bool: 0 or 1); saving rounds and clamps to the type (splineview/io.h).
enum class DType { U8, U16, F32, F64, Bool, I8, I16, I32, I64, U32, U64, F16 };

const char* dtype_name(DType t);
// The largest value of an integer type (uint8 255, uint16 65535, int16 32767, ..., uint64
// 2^64 - 1 as a double), 1 for bool and the floating types: the "full scale" that display
// code maps to white, and the default peak of PSNR.
double dtype_full_scale(DType t);
bool dtype_is_integer(DType t);  // also true for bool

// Extension beyond [0, N-1]: every scipy.ndimage boundary mode (docs/DESIGN.md, docs/ACCURACY.md
// "Boundary modes and scipy"). Reflect, Mirror and Periodic are exact sample extensions that the
// prefilter and the sampler share; the other four follow scipy.ndimage 1.10 as measured there:
//  Reflect      half-sample symmetric  ... f1 f0 | f0 f1 ...   (scipy 'reflect' = 'grid-mirror';
//               GL mirrored repeat)
//  Mirror       whole-sample symmetric ... f2 f1 | f0 f1 f2 ... (scipy 'mirror')
//  Periodic     period N               ... fN-1 | f0 f1 ...    (scipy 'grid-wrap'; GL repeat)
//  Wrap         scipy 'wrap': the position is wrapped with period N-1 into [0, N-1] (f0 and
//               fN-1 "overlap"), then the whole-sample symmetric (Mirror) spline is evaluated
//  Nearest      scipy 'nearest': edge values repeated ... f0 f0 | f0 f1 ...
//  Constant     scipy 'constant': Mirror spline on [0, N-1], cval at any position outside
//  GridConstant scipy 'grid-constant': cval repeated ... k k | f0 f1 ... fN-1 | k k ...
// Only Reflect, Mirror and Periodic exist on the GPU (CUDA and GL refuse the others).
enum class Boundary { Reflect, Mirror, Periodic, Wrap, Nearest, Constant, GridConstant };

// Our name: "reflect", "mirror", "periodic", "wrap", "nearest", "constant", "grid-constant".
const char* boundary_name(Boundary b);
// scipy.ndimage's name: as boundary_name, but Periodic is "grid-wrap".
const char* boundary_scipy_name(Boundary b);
// Parses our names and scipy's ("reflect" | "grid-mirror" | "mirror" | "periodic" | "grid-wrap" |
// "wrap" | "nearest" | "constant" | "grid-constant"); throws sv::Error naming the bad value.
// Note "wrap" is scipy's 'wrap' (period N-1), not "periodic".
Boundary parse_boundary(const std::string& s);
// True for the modes the GPU paths implement (Reflect, Mirror, Periodic).
bool boundary_on_gpu(Boundary b);

template <class T>
class Array {
 public:
  Array() = default;
  // Zero-initialised array; throws sv::Error on rank outside 1..3, a zero extent or channels
  // outside 1..4.
  explicit Array(std::vector<std::size_t> dims, std::size_t channels = 1)
      : dims_(std::move(dims)), channels_(channels) {
    if (dims_.empty() || dims_.size() > kMaxRank)
      throw Error("array rank must be 1, 2 or 3, got " + std::to_string(dims_.size()));
    for (std::size_t d : dims_)
      if (d == 0) throw Error("array has a zero-size axis");
    if (channels_ == 0 || channels_ > kMaxChannels)
      throw Error("array must have 1 to 4 channels, got " + std::to_string(channels_));
    data_.assign(points() * channels_, T(0));
  }

  template <class U>
  static Array from(const Array<U>& other) {
    Array a(other.dims(), other.channels());
    for (std::size_t i = 0; i < a.size(); ++i) a.data()[i] = static_cast<T>(other.data()[i]);
    return a;
  }

  const std::vector<std::size_t>& dims() const { return dims_; }
  std::size_t rank() const { return dims_.size(); }
  std::size_t channels() const { return channels_; }
  std::size_t dim(std::size_t axis) const { return dims_.at(axis); }
  // Number of sample positions (product of dims).
  std::size_t points() const {
    return std::accumulate(dims_.begin(), dims_.end(), std::size_t{1},
                           [](std::size_t a, std::size_t b) { return a * b; });
  }
  // Number of scalars (points * channels).
  std::size_t size() const { return data_.size(); }
  bool empty() const { return data_.empty(); }

  T* data() { return data_.data(); }
  const T* data() const { return data_.data(); }
  std::vector<T>& vec() { return data_; }
  const std::vector<T>& vec() const { return data_; }

  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }

  // Element access by (y, x[, c]) for 2-D arrays and (z, y, x[, c]) for 3-D arrays.
  T& at2(std::size_t y, std::size_t x, std::size_t c = 0) {
    return data_[(y * dims_[1] + x) * channels_ + c];
  }
  const T& at2(std::size_t y, std::size_t x, std::size_t c = 0) const {
    return data_[(y * dims_[1] + x) * channels_ + c];
  }
  T& at3(std::size_t z, std::size_t y, std::size_t x, std::size_t c = 0) {
    return data_[((z * dims_[1] + y) * dims_[2] + x) * channels_ + c];
  }
  const T& at3(std::size_t z, std::size_t y, std::size_t x, std::size_t c = 0) const {
    return data_[((z * dims_[1] + y) * dims_[2] + x) * channels_ + c];
  }

 private:
  std::vector<std::size_t> dims_;
  std::size_t channels_ = 1;
  std::vector<T> data_;
};

using ArrayF = Array<float>;
using ArrayD = Array<double>;

// "3x512x512 (2 channels)"-style description for messages.
std::string describe_shape(const std::vector<std::size_t>& dims, std::size_t channels);

}  // namespace sv
