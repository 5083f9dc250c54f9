// A fixed-length history of per-frame timings for the panel's plots: the newest values in a
// ring, read back oldest first.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>

namespace sv::viewer {

template <std::size_t N>
class FrameHistory {
 public:
  void push(float value) {
    values_[next_] = value;
    next_ = (next_ + 1) % N;
    count_ = std::min(count_ + 1, N);
  }
  std::size_t count() const { return count_; }
  // The i-th value, oldest first (i < count()).
  float at(std::size_t i) const { return values_[(next_ + N - count_ + i) % N]; }
  float latest() const { return count_ ? at(count_ - 1) : 0.0f; }
  float average() const {
    float sum = 0;
    for (std::size_t i = 0; i < count_; ++i) sum += at(i);
    return count_ ? sum / static_cast<float>(count_) : 0.0f;
  }
  float max() const {
    float m = 0;
    for (std::size_t i = 0; i < count_; ++i) m = std::max(m, at(i));
    return m;
  }

 private:
  std::array<float, N> values_{};
  std::size_t next_ = 0;
  std::size_t count_ = 0;
};

}  // namespace sv::viewer
