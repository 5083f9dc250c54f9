// A device array of n elements of T owned for one host-convenience call (upload from an
// sv::Array, download into one), freed on scope exit; movable, not copyable. Failures become
// sv::Error naming the caller's operation (check.cuh).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "check.cuh"
#include "splineview/array.h"

namespace sv::cuda::detail {

template <class T>
class DeviceCopy {
 public:
  DeviceCopy(std::size_t n, const char* what) {
    check(cudaMalloc(&p_, std::max<std::size_t>(n, 1) * sizeof(T)), what);
  }
  DeviceCopy(const Array<T>& a, const char* what) : DeviceCopy(a.size(), what) {
    check(cudaMemcpy(p_, a.data(), a.size() * sizeof(T), cudaMemcpyHostToDevice), what);
  }
  ~DeviceCopy() { cudaFree(p_); }
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
  DeviceCopy(DeviceCopy&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  T* get() const { return static_cast<T*>(p_); }
  void download(Array<T>& a, const char* what) const {
    check(cudaMemcpy(a.data(), p_, a.size() * sizeof(T), cudaMemcpyDeviceToHost), what);
  }

 private:
  void* p_ = nullptr;
};

}  // namespace sv::cuda::detail
