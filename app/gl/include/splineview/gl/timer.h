// GPU timing with GL_TIME_ELAPSED queries, buffered so that reading a result never stalls the
// pipeline: several queries are in flight, and results are collected only once the driver
// reports them available (typically one to three frames later).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "splineview/gl/objects.h"

namespace sv::gl {

class GpuTimer {
 public:
  // `depth` queries in flight at most (>= 2).
  explicit GpuTimer(int depth = 4);

  // Brackets the GL commands to time. Only one GpuTimer (or other GL_TIME_ELAPSED query) may
  // be active at a time. When all queries are still in flight this interval is not measured
  // (begin/end do nothing), rather than waiting for the GPU.
  void begin();
  void end();

  // Collects finished queries without waiting. Returns the newest finished interval in
  // milliseconds, once at least one has finished.
  std::optional<double> poll();
  // The newest finished interval, as of the last poll().
  std::optional<double> latest_ms() const { return latest_ms_; }
  // Intervals finished so far (each counted once).
  std::uint64_t finished_count() const { return finished_; }
  // Intervals skipped because every query was still in flight.
  std::uint64_t skipped_count() const { return skipped_; }

 private:
  struct Slot {
    Query query;
    bool pending = false;
  };
  std::vector<Slot> slots_;
  std::size_t next_ = 0;    // slot the next begin() uses
  std::size_t oldest_ = 0;  // oldest pending slot (valid when any is pending)
  std::size_t in_flight_ = 0;
  bool active_ = false;
  std::optional<double> latest_ms_;
  std::uint64_t finished_ = 0;
  std::uint64_t skipped_ = 0;
};

// Calls begin() now and end() at scope exit.
class ScopedGpuTimer {
 public:
  explicit ScopedGpuTimer(GpuTimer& timer) : timer_(timer) { timer_.begin(); }
  ~ScopedGpuTimer() { timer_.end(); }
  ScopedGpuTimer(const ScopedGpuTimer&) = delete;
  ScopedGpuTimer& operator=(const ScopedGpuTimer&) = delete;

 private:
  GpuTimer& timer_;
};

}  // namespace sv::gl
