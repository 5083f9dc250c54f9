// Device buffers, copies, events and availability (see cuda_memory.h).
#include <cuda_runtime.h>

#include <atomic>
#include <string>

#include "check.cuh"
#include "splineview/cuda_device.h"
#include "splineview/cuda_memory.h"

namespace sv::cuda {

using detail::check;

namespace {
std::atomic<std::size_t> g_current{0}, g_peak{0};
void count_alloc(std::size_t bytes) {
  const std::size_t now = g_current += bytes;
  std::size_t peak = g_peak.load();
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
  }
}
}  // namespace

namespace detail {
void note_alloc(std::size_t bytes) {
  count_alloc(bytes);
}
void note_free(std::size_t bytes) {
  g_current -= bytes;
}
}  // namespace detail

AllocationStats allocation_stats() {
  return {g_current.load(), g_peak.load()};
}
void reset_allocation_peak() {
  g_peak = g_current.load();
}

bool available(std::string* why) {
  std::string reason;
  const auto devices = cuda_devices(&reason);
  if (devices.empty()) {
    if (why) *why = reason;
    return false;
  }
  return true;
}

void require(const char* what) {
  std::string why;
  if (!available(&why)) throw Error(std::string(what) + ": " + why);
}

DeviceBuffer::DeviceBuffer(std::size_t count) : count_(count) {
  if (count == 0) return;
  void* p = nullptr;
  const cudaError_t err = cudaMalloc(&p, count * sizeof(float));
  if (err != cudaSuccess) {
    cudaGetLastError();
    count_ = 0;
    throw Error("allocating " + std::to_string(count * sizeof(float)) + " bytes of GPU memory: " +
                (err == cudaErrorMemoryAllocation ? std::string("out of GPU memory")
                                                  : std::string(cudaGetErrorString(err))));
  }
  ptr_ = static_cast<float*>(p);
  count_alloc(count * sizeof(float));
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) {
    cudaFree(ptr_);
    g_current -= count_ * sizeof(float);
  }
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), count_(o.count_) {
  o.ptr_ = nullptr;
  o.count_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) {
      cudaFree(ptr_);
      g_current -= count_ * sizeof(float);
    }
    ptr_ = o.ptr_;
    count_ = o.count_;
    o.ptr_ = nullptr;
    o.count_ = 0;
  }
  return *this;
}

void DeviceBuffer::upload(const float* host, std::size_t count) {
  if (count > count_) throw Error("DeviceBuffer::upload: more floats than the buffer holds");
  check(cudaMemcpy(ptr_, host, count * sizeof(float), cudaMemcpyHostToDevice),
        "copying to the GPU");
}

void DeviceBuffer::download(float* host, std::size_t count) const {
  if (count > count_) throw Error("DeviceBuffer::download: more floats than the buffer holds");
  check(cudaMemcpy(host, ptr_, count * sizeof(float), cudaMemcpyDeviceToHost),
        "copying from the GPU");
}

namespace {
__global__ void fill_kernel(float* p, std::size_t n, float v) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    p[i] = v;
}
}  // namespace

void DeviceBuffer::fill(float value) {
  if (count_ == 0) return;
  fill_kernel<<<1024, 256>>>(ptr_, count_, value);
  detail::check_launch("filling a GPU buffer");
}

void DeviceBuffer::copy_from(const DeviceBuffer& src) {
  if (src.count_ != count_) throw Error("DeviceBuffer::copy_from: sizes differ");
  copy_device(ptr_, src.ptr_, count_);
}

void copy_device(float* dst, const float* src, std::size_t count) {
  check(cudaMemcpyAsync(dst, src, count * sizeof(float), cudaMemcpyDeviceToDevice),
        "copying on the GPU");
}

void synchronize(const char* what) {
  check(cudaDeviceSynchronize(), what);
}

EventTimer::EventTimer() {
  cudaEvent_t a = nullptr, b = nullptr;
  check(cudaEventCreate(&a), "creating a CUDA event");
  if (cudaEventCreate(&b) != cudaSuccess) {
    cudaEventDestroy(a);
    check(cudaErrorUnknown, "creating a CUDA event");
  }
  begin_ = a;
  end_ = b;
}

EventTimer::~EventTimer() {
  cudaEventDestroy(static_cast<cudaEvent_t>(begin_));
  cudaEventDestroy(static_cast<cudaEvent_t>(end_));
}

void EventTimer::start() {
  check(cudaEventRecord(static_cast<cudaEvent_t>(begin_)), "timing");
}
void EventTimer::stop() {
  check(cudaEventRecord(static_cast<cudaEvent_t>(end_)), "timing");
}

double EventTimer::ms() {
  check(cudaEventSynchronize(static_cast<cudaEvent_t>(end_)), "timing");
  float t = 0;
  check(cudaEventElapsedTime(&t, static_cast<cudaEvent_t>(begin_), static_cast<cudaEvent_t>(end_)),
        "timing");
  return t;
}

std::size_t device_memory_used() {
  std::size_t free_b = 0, total_b = 0;
  check(cudaMemGetInfo(&free_b, &total_b), "querying GPU memory");
  return total_b - free_b;
}

}  // namespace sv::cuda
