// Device memory, timing and status for the CUDA half of splineview, behind plain C++ (no CUDA
// types): code outside cuda/ compiles with the host compiler. Every function throws sv::Error
// with a sentence naming the operation when CUDA fails, and when this build or machine has no
// CUDA (cuda_available() says which, without throwing).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "splineview/array.h"

namespace sv::cuda {

// True when a CUDA device can run this build's kernels; otherwise false with a sentence in
// `why` ("this build has no CUDA", "no CUDA device on this machine", ...). Never throws.
bool available(std::string* why = nullptr);

// Throws sv::Error("<what>: <why not>") unless available().
void require(const char* what);

// Shape of an array in device memory: NumPy axis order (z, y, x), x fastest, channels
// interleaved, exactly like sv::Array.
struct Layout {
  std::vector<std::size_t> dims;
  std::size_t channels = 1;

  std::size_t rank() const { return dims.size(); }
  std::size_t points() const;
  std::size_t size() const { return points() * channels; }  // floats
  // Throws sv::Error unless rank 1..3, no zero extent, channels 1..4.
  void check(const char* what) const;
  template <class T>
  static Layout of(const Array<T>& a) {
    return Layout{a.dims(), a.channels()};
  }
};

// An owning buffer of floats in device memory (move-only).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // Allocates `count` floats; throws sv::Error naming the size on failure (out of memory).
  explicit DeviceBuffer(std::size_t count);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  float* data() { return ptr_; }
  const float* data() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(float); }

  void upload(const float* host, std::size_t count);    // count <= size()
  void download(float* host, std::size_t count) const;  // count <= size()
  void fill(float value);                               // e.g. poison with NaN
  void copy_from(const DeviceBuffer& src);              // device to device, same size

 private:
  float* ptr_ = nullptr;
  std::size_t count_ = 0;
};

// Device-to-device copy of `count` floats (the bandwidth floor of the benchmarks).
void copy_device(float* dst, const float* src, std::size_t count);

// Waits for all queued work; throws sv::Error with the first asynchronous error, if any.
void synchronize(const char* what);

// Elapsed GPU time between start() and stop(), from CUDA events on the default stream.
class EventTimer {
 public:
  EventTimer();
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start();
  void stop();
  double ms();  // waits for stop()

 private:
  void* begin_ = nullptr;
  void* end_ = nullptr;
};

// Bytes held by DeviceBuffers (this process, this library): now, and the most at any time since
// the last reset_peak(); the benchmarks report the peak of a prefilter from it.
struct AllocationStats {
  std::size_t current = 0;
  std::size_t peak = 0;
};
AllocationStats allocation_stats();
void reset_allocation_peak();

// Device memory in use right now (total - free, all processes), in bytes; for peak reports.
std::size_t device_memory_used();

}  // namespace sv::cuda
