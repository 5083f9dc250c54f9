// Buffered GL_TIME_ELAPSED queries (see splineview/gl/timer.h).
#include "splineview/gl/timer.h"

#include "splineview/error.h"

namespace sv::gl {

GpuTimer::GpuTimer(int depth) {
  if (depth < 2) throw Error("GpuTimer needs a depth of at least 2, got " + std::to_string(depth));
  slots_.resize(static_cast<std::size_t>(depth));
  for (Slot& s : slots_) s.query = Query::create(GL_TIME_ELAPSED);
}

void GpuTimer::begin() {
  if (active_) throw Error("GpuTimer::begin called twice without end");
  poll();
  if (in_flight_ == slots_.size()) {  // every query still in flight: skip, never wait
    ++skipped_;
    return;
  }
  SV_GL_CHECK(glBeginQuery(GL_TIME_ELAPSED, slots_[next_].query.id()));
  active_ = true;
}

void GpuTimer::end() {
  if (!active_) return;
  SV_GL_CHECK(glEndQuery(GL_TIME_ELAPSED));
  active_ = false;
  slots_[next_].pending = true;
  if (in_flight_ == 0) oldest_ = next_;
  ++in_flight_;
  next_ = (next_ + 1) % slots_.size();
}

std::optional<double> GpuTimer::poll() {
  // Queries finish in the order they were issued: stop at the first one still running.
  while (in_flight_ > 0) {
    Slot& slot = slots_[oldest_];
    GLuint available = GL_FALSE;
    SV_GL_CHECK(glGetQueryObjectuiv(slot.query.id(), GL_QUERY_RESULT_AVAILABLE, &available));
    if (available != GL_TRUE) break;
    GLuint64 ns = 0;
    SV_GL_CHECK(glGetQueryObjectui64v(slot.query.id(), GL_QUERY_RESULT, &ns));
    latest_ms_ = static_cast<double>(ns) * 1e-6;
    ++finished_;
    slot.pending = false;
    --in_flight_;
    oldest_ = (oldest_ + 1) % slots_.size();
  }
  return latest_ms_;
}

}  // namespace sv::gl
