// Stand-ins for builds without the CUDA toolkit: every operation throws a sentence saying so;
// available() says so without throwing.
#include <string>

#include "config.h"
#include "splineview/cuda_device.h"
#include "splineview/cuda_memory.h"
#include "splineview/cuda_prefilter.h"
#include "splineview/cuda_reconstruct.h"

namespace sv::cuda {
namespace {
[[noreturn]] void no_cuda(const char* what) {
  std::string why;
  cuda_devices(&why);
  throw Error(std::string(what) + ": " + why);
}
}  // namespace

bool available(std::string* why) {
  if (why) cuda_devices(why);
  return false;
}
void require(const char* what) {
  no_cuda(what);
}

DeviceBuffer::DeviceBuffer(std::size_t count) : count_(count) {
  if (count) no_cuda("allocating GPU memory");
}
DeviceBuffer::~DeviceBuffer() = default;
DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), count_(o.count_) {
  o.ptr_ = nullptr;
  o.count_ = 0;
}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  ptr_ = o.ptr_;
  count_ = o.count_;
  o.ptr_ = nullptr;
  o.count_ = 0;
  return *this;
}
void DeviceBuffer::upload(const float*, std::size_t) {
  no_cuda("copying to the GPU");
}
void DeviceBuffer::download(float*, std::size_t) const {
  no_cuda("copying from the GPU");
}
void DeviceBuffer::fill(float) {
  no_cuda("filling a GPU buffer");
}
void DeviceBuffer::copy_from(const DeviceBuffer&) {
  no_cuda("copying on the GPU");
}
void copy_device(float*, const float*, std::size_t) {
  no_cuda("copying on the GPU");
}
void synchronize(const char* what) {
  no_cuda(what);
}
EventTimer::EventTimer() {
  no_cuda("creating a CUDA event");
}
EventTimer::~EventTimer() = default;
void EventTimer::start() {}
void EventTimer::stop() {}
double EventTimer::ms() {
  return 0;
}
AllocationStats allocation_stats() {
  return {};
}
void reset_allocation_peak() {}
std::size_t device_memory_used() {
  no_cuda("querying GPU memory");
}

void prefilter(float*, const Layout& layout, const PrefilterConfig& cfg) {
  detail::check_config(layout, cfg, "CUDA prefilter");
  no_cuda("CUDA prefilter");
}
void prefilter_axis(float*, const Layout&, std::size_t, const PrefilterConfig&) {
  no_cuda("CUDA prefilter");
}
void prefilter_axis(const float*, float*, const Layout&, std::size_t, const PrefilterConfig&) {
  no_cuda("CUDA prefilter");
}
std::vector<bool> prefilter_out_of_place(const Layout& layout, const PrefilterConfig& cfg) {
  detail::check_config(layout, cfg, "CUDA prefilter");
  no_cuda("CUDA prefilter");
}
void prefilter_to_surface(const float*, const Layout&, std::uint64_t, SurfaceFormat, float*,
                          const PrefilterConfig&) {
  no_cuda("CUDA prefilter");
}
void prefilter(ArrayF&, const PrefilterConfig&) {
  no_cuda("CUDA prefilter");
}

struct SplineVolume::Impl {};
SplineVolume::SplineVolume(const float*, const Layout&, Boundary, CoefficientFormat) {
  no_cuda("CUDA reconstruction");
}
SplineVolume::SplineVolume(const ArrayF&, Boundary, CoefficientFormat) {
  no_cuda("CUDA reconstruction");
}
SplineVolume::~SplineVolume() = default;
const Layout& SplineVolume::layout() const {
  no_cuda("CUDA reconstruction");
}
Boundary SplineVolume::boundary() const {
  no_cuda("CUDA reconstruction");
}
void SplineVolume::sample(Fetch, const float*, std::size_t, float*) const {
  no_cuda("CUDA reconstruction");
}
void sample(const ArrayF&, Boundary, Fetch, const std::vector<double>&, double*) {
  no_cuda("CUDA reconstruction");
}

}  // namespace sv::cuda
