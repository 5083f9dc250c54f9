// Stand-ins for builds without the CUDA toolkit: every operation throws a sentence saying so;
// available() says so without throwing.
#include <string>

#include "config.h"
#include "no_cuda.h"
#include "splineview/cuda_device.h"
#include "splineview/cuda_memory.h"
#include "splineview/cuda_out_of_core.h"
#include "splineview/cuda_prefilter.h"
#include "splineview/cuda_reconstruct.h"
#include "splineview/cuda_upscale.h"
#include "upscale_check.h"

namespace sv::cuda {

bool available(std::string* why) {
  if (why) cuda_devices(why);
  return false;
}
void require(const char* what) {
  no_cuda(what);
}

OutOfCoreStats prefilter_out_of_core(float*, const Layout&, const OutOfCoreConfig&) {
  no_cuda("out-of-core prefilter");
}
HostRegistration::HostRegistration(void*, std::size_t) {
  no_cuda("page-locking host memory for the GPU");
}
HostRegistration::~HostRegistration() = default;
OutOfCoreStats resample_out_of_core(const float*, const Layout&,
                                    const std::vector<std::vector<double>>&, float*,
                                    const OutOfCoreResampleConfig&) {
  no_cuda("out-of-core resampling");
}
OutOfCoreStats affine_out_of_core(const float*, const Layout&, const std::vector<double>&,
                                  const std::vector<double>&, const std::vector<std::size_t>&,
                                  float*, const OutOfCoreResampleConfig&) {
  no_cuda("out-of-core affine resampling");
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
void prefilter_fused_xy(float*, const Layout& layout, const PrefilterConfig& cfg) {
  detail::check_config(layout, cfg, "CUDA prefilter");
  no_cuda("CUDA prefilter");
}
bool prefilter_fusable(const Layout&, const PrefilterConfig&) {
  return false;
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

void unpack_u8(const std::uint8_t*, std::size_t src_pitch, int src_channels, float*,
               const Layout& layout) {
  detail::check_unpack(src_pitch, src_channels, layout, "CUDA unpacking of 8-bit pixels");
  no_cuda("CUDA unpacking of 8-bit pixels");
}
void upscale(const float*, const Layout& layout, int factor, UpscaleMethod method,
             Boundary boundary, float*) {
  detail::check_upscale(layout, factor, method, boundary, "CUDA upscaling");
  no_cuda("CUDA upscaling");
}
void upscale_u8(const float*, const Layout& layout, int factor, UpscaleMethod method,
                Boundary boundary, std::uint8_t*) {
  detail::check_upscale(layout, factor, method, boundary, "CUDA upscaling to 8 bits");
  no_cuda("CUDA upscaling to 8 bits");
}
void upscale_to_surface(const float*, const Layout& layout, int factor, UpscaleMethod method,
                        Boundary boundary, std::uint64_t, SurfaceFormat) {
  detail::check_upscale(layout, factor, method, boundary, "CUDA upscaling into a texture");
  no_cuda("CUDA upscaling into a texture");
}
struct FrameUpscaler::Impl {};
FrameUpscaler::FrameUpscaler(int factor, UpscaleMethod method) {
  detail::check_upscale(Layout{{1, 1}, 1}, factor, method, Boundary::Reflect,
                        "CUDA frame upscaler");
  no_cuda("CUDA frame upscaler");
}
FrameUpscaler::~FrameUpscaler() = default;
void FrameUpscaler::run(const std::uint8_t*, int, int, int, std::uint8_t*) {
  no_cuda("CUDA frame upscaler");
}
const FrameUpscaler::Timing& FrameUpscaler::last_timing() const {
  no_cuda("CUDA frame upscaler");
}
ArrayF upscale(const ArrayF& samples, int factor, UpscaleMethod method, Boundary boundary) {
  detail::check_upscale(Layout::of(samples), factor, method, boundary, "CUDA upscaling");
  no_cuda("CUDA upscaling");
}

}  // namespace sv::cuda
