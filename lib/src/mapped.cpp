// Memory-mapped volume files (splineview/mapped.h). The headers are parsed by the loaders' own
// code (the probe_* functions of io_layout.h); this file maps what they describe, converts the
// stored samples with the loaders' decoders (io_common.h) and writes outputs whose headers come
// from the savers' own header writers.
#include "splineview/mapped.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csetjmp>
#include <csignal>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "io_common.h"
#include "io_layout.h"
#include "splineview/input.h"
#include "splineview/temp_files.h"
#include "splineview/text.h"

namespace sv {

namespace {

constexpr bool kLittleEndian = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

std::string errno_text(int e) {
  return std::strerror(e);
}

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw NotMappable(printable(path, std::string::npos) + ": cannot be mapped: " + why);
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Reads from the map are copies guarded against SIGBUS: a file that another process truncates
// while it is mapped makes the pages beyond its new end fault. The handler, installed on the
// first guarded copy, jumps back out of the copy of this thread when one is running (a memcpy:
// nothing to unwind) and otherwise hands the signal to the previous disposition.
// volatile, with signal fences around the copy: the handler reads it asynchronously, and an
// optimiser that sees no reader between the two stores around memcpy would drop the first
// (as GCC -O2 did: the guard then fell through to the default action in Release builds).
thread_local sigjmp_buf* volatile t_bus_jump = nullptr;
struct sigaction g_previous_bus;

void on_sigbus(int sig, siginfo_t* info, void* context) {
  if (t_bus_jump) siglongjmp(*t_bus_jump, 1);
  if ((g_previous_bus.sa_flags & SA_SIGINFO) && g_previous_bus.sa_sigaction) {
    g_previous_bus.sa_sigaction(sig, info, context);
    return;
  }
  if (g_previous_bus.sa_handler != SIG_DFL && g_previous_bus.sa_handler != SIG_IGN) {
    g_previous_bus.sa_handler(sig);
    return;
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

// Copies `bytes` from the map; false when a page of it is gone (the file shrank).
bool copy_from_map(void* dst, const void* src, std::size_t bytes) {
  static std::once_flag installed;
  std::call_once(installed, [] {
    struct sigaction sa {};
    sa.sa_sigaction = on_sigbus;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_SIGINFO;
    ::sigaction(SIGBUS, &sa, &g_previous_bus);
  });
  sigjmp_buf env;
  sigjmp_buf* const saved = t_bus_jump;
  if (sigsetjmp(env, 1) != 0) {
    t_bus_jump = saved;
    return false;
  }
  t_bus_jump = &env;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  std::memcpy(dst, src, bytes);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t_bus_jump = saved;
  return true;
}

std::size_t page_size() {
  static const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

// The layout of `path` as load_any(path, channel_axis[, raw]) would read it, or NotMappable.
io::DataLayout probe(const std::string& path, bool channel_axis,
                     const std::optional<RawSpec>& raw) {
  std::error_code ec;
  const std::string ext = io::lower_extension(path);
  const bool known = io::known_extension(path);
  if (std::filesystem::is_directory(path, ec) && (raw || !known))
    refuse(path, "a folder (a DICOM series or a stack of slices) is read into memory");
  if (ext == ".dcm") refuse(path, "DICOM files are read into memory");
  if (is_slice_pattern(path) && !std::filesystem::exists(path, ec))
    refuse(path, "a pattern of slice files is read into memory");
  if (!known) {
    // Without a spec load_any reads such a file as DICOM (by its marker) or refuses it.
    if (!raw) refuse(path, "its extension names no format that is mapped");
    return io::probe_raw(path, *raw, channel_axis);
  }
  // Never opened unless it is a regular file (opening a FIFO blocks).
  if (!io::check_regular(path)) refuse(path, "it is not a regular file");
  if (ext == ".npy") return io::probe_npy(path, channel_axis);
  if (ext == ".nrrd" || ext == ".nhdr") return io::probe_nrrd(path);
  if (ext == ".nii") return io::probe_nifti(path, input_options().volume);
  if (ext == ".gz") refuse(path, "it is gzip-compressed (.nii.gz)");
  if (ext == ".tif" || ext == ".tiff") return io::probe_tiff(path);
  refuse(path, "images are read into memory");
}

}  // namespace

// ------------------------------------------------------------------------------ MappedVolume

struct MappedVolume::Impl {
  io::DataLayout layout;
  std::string path;
  void* map = nullptr;
  std::size_t map_length = 0;
  const unsigned char* data = nullptr;  // the first sample
  std::size_t value_size = 1, slice_values = 1, size = 0;

  ~Impl() {
    if (map) ::munmap(map, map_length);
  }

  [[noreturn]] void fail_inexact(std::size_t index, const std::string& value) const {
    io::fail(layout.error_path, layout.error_prefix + dtype_name(io::dtype_of(layout.scalar)) +
                                    " value " + value + " at element " + std::to_string(index) +
                                    " is not exactly representable as a double");
  }

  // The file shrank under the map (another process truncated it): one sentence.
  [[noreturn]] void fail_shrunk() const {
    throw Error(printable(path, std::string::npos) +
                ": the file became shorter while it was being read (changed by another "
                "process?); its data are incomplete");
  }

  // `bytes` raw bytes of the map at byte offset `at` from the first sample into dst.
  void copy_raw(void* dst, std::size_t at, std::size_t bytes) const {
    if (!copy_from_map(dst, data + at, bytes)) fail_shrunk();
  }

  // n values from C-order value `first` on (C-order files only), scaled as the loader scales:
  // raw bytes copied out of the map (guarded) a block at a time, then decoded.
  void decode(std::size_t first, std::size_t n, double* out) const {
    constexpr std::size_t kBlock = std::size_t{1} << 16;
    std::vector<unsigned char> raw(std::min(kBlock, n) * value_size);
    for (std::size_t i = 0; i < n; i += kBlock) {
      const std::size_t k = std::min(kBlock, n - i);
      copy_raw(raw.data(), (first + i) * value_size, k * value_size);
      const std::optional<io::InexactValue> bad =
          io::decode_values_checked(raw.data(), k, layout.scalar, layout.big_endian, out + i);
      if (bad) fail_inexact(first + i + bad->index, bad->value);
    }
    scale(out, n);
  }

  void scale(double* v, std::size_t n) const {
    if (!layout.scaled) return;
    for (std::size_t i = 0; i < n; ++i) v[i] = v[i] * layout.slope + layout.inter;
  }

  // Slices [first, first + count) of a Fortran-order file: for each C-order position j within a
  // slice, the slab's values along axis 0 are one contiguous run in the file. Counts the
  // non-finite values into *nf when given.
  template <class T>
  void gather_fortran(std::size_t first, std::size_t count, T* out, NonFinite* nf) const {
    std::vector<std::size_t> shape = layout.dims;
    if (layout.channel_axis) shape.push_back(layout.channels);
    const std::size_t k_axes = shape.size();
    std::vector<std::size_t> stride(k_axes, 0), index(k_axes, 0);  // Fortran strides, values
    std::size_t s = shape[0];
    for (std::size_t k = 1; k < k_axes; ++k) {
      stride[k] = s;
      s *= shape[k];
    }
    std::vector<double> run(count);
    std::vector<unsigned char> raw(count * value_size);
    std::size_t base = 0;  // Fortran offset of (0, index[1..])
    std::size_t first_bad = SIZE_MAX;
    std::string bad_value;
    for (std::size_t j = 0; j < slice_values; ++j) {
      copy_raw(raw.data(), (base + first) * value_size, count * value_size);
      const std::optional<io::InexactValue> bad = io::decode_values_checked(
          raw.data(), count, layout.scalar, layout.big_endian, run.data());
      if (bad && (first + bad->index) * slice_values + j < first_bad) {
        first_bad = (first + bad->index) * slice_values + j;
        bad_value = bad->value;
      }
      scale(run.data(), count);
      if (nf) add(nf, scan_nonfinite(run.data(), count), slice_values, j);
      for (std::size_t z = 0; z < count; ++z) out[z * slice_values + j] = convert<T>(run[z]);
      for (std::size_t k = k_axes; k-- > 1;) {  // the next position, last axis fastest
        if (++index[k] < shape[k]) {
          base += stride[k];
          break;
        }
        base -= stride[k] * (shape[k] - 1);
        index[k] = 0;
      }
    }
    if (first_bad != SIZE_MAX) fail_inexact(first_bad, bad_value);
  }

  // Adds the non-finite values of a run whose element k sits at index k * stride + offset.
  static void add(NonFinite* total, const NonFinite& run, std::size_t stride, std::size_t offset) {
    if (run.count == 0) return;
    const std::size_t index = run.first * stride + offset;
    if (total->count == 0 || index < total->first) {
      total->first = index;
      total->first_value = run.first_value;
    }
    total->count += run.count;
  }

  template <class T>
  static T convert(double v) {
    if constexpr (std::is_same_v<T, float>)
      return io::to_f32(v);
    else
      return v;
  }

  void check_range(std::size_t first, std::size_t count) const {
    const std::size_t slices = layout.dims[0];
    if (first > slices || count > slices - first)
      throw Error(printable(path, std::string::npos) + ": slices " + std::to_string(first) +
                  " to " + std::to_string(first + count) + " asked for; the array has " +
                  std::to_string(slices));
  }
};

MappedVolume::MappedVolume() = default;
MappedVolume::MappedVolume(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MappedVolume::~MappedVolume() = default;
MappedVolume::MappedVolume(MappedVolume&&) noexcept = default;
MappedVolume& MappedVolume::operator=(MappedVolume&&) noexcept = default;

const std::string& MappedVolume::path() const {
  return impl_->path;
}
const std::vector<std::size_t>& MappedVolume::dims() const {
  return impl_->layout.dims;
}
std::size_t MappedVolume::channels() const {
  return impl_->layout.channels;
}
bool MappedVolume::channel_axis() const {
  return impl_->layout.channel_axis;
}
DType MappedVolume::dtype() const {
  return impl_->layout.dtype;
}
const std::vector<double>& MappedVolume::spacing() const {
  return impl_->layout.spacing;
}
const Geometry& MappedVolume::geometry() const {
  return impl_->layout.geometry;
}
std::size_t MappedVolume::slice_values() const {
  return impl_->slice_values;
}
std::size_t MappedVolume::size() const {
  return impl_->size;
}
DType MappedVolume::stored_type() const {
  return io::dtype_of(impl_->layout.scalar);
}
bool MappedVolume::big_endian() const {
  return impl_->layout.big_endian;
}
bool MappedVolume::fortran_order() const {
  return impl_->layout.fortran_order;
}
const std::string& MappedVolume::data_path() const {
  return impl_->layout.data_path;
}
std::size_t MappedVolume::data_offset() const {
  return impl_->layout.data_offset;
}

std::string MappedVolume::describe() const {
  const io::DataLayout& L = impl_->layout;
  std::string s = dtype_name(stored_type());
  if (io::scalar_size(L.scalar) > 1) s += L.big_endian ? " big-endian" : " little-endian";
  if (L.fortran_order) s += ", Fortran order";
  if (L.scaled) s += ", scaled";
  return s + " at byte " + std::to_string(L.data_offset) + " of '" +
         printable(L.data_path, std::string::npos) + "'";
}

const float* MappedVolume::native_f32() const {
  const Impl& m = *impl_;
  const io::DataLayout& L = m.layout;
  if (L.scalar != io::Scalar::F32 || L.big_endian != !kLittleEndian || L.fortran_order ||
      L.scaled || reinterpret_cast<std::uintptr_t>(m.data) % alignof(float) != 0)
    return nullptr;
  return reinterpret_cast<const float*>(m.data);
}

void MappedVolume::copy_native_f32(const float* src, std::size_t count, float* dst) const {
  const float* samples = native_f32();
  if (!samples || src < samples || count > size() ||
      static_cast<std::size_t>(src - samples) > size() - count)
    throw std::invalid_argument("MappedVolume::copy_native_f32: range outside the samples");
  impl_->copy_raw(dst, static_cast<std::size_t>(src - samples) * sizeof(float),
                  count * sizeof(float));
}

void MappedVolume::read_slices(std::size_t first, std::size_t count, double* out) const {
  const Impl& m = *impl_;
  m.check_range(first, count);
  if (m.layout.fortran_order)
    m.gather_fortran(first, count, out, nullptr);
  else
    m.decode(first * m.slice_values, count * m.slice_values, out);
}

NonFinite MappedVolume::read_slices(std::size_t first, std::size_t count, float* out) const {
  const Impl& m = *impl_;
  m.check_range(first, count);
  const std::size_t begin = first * m.slice_values, n = count * m.slice_values;
  NonFinite nf;
  if (native_f32()) {
    m.copy_raw(out, begin * sizeof(float), n * sizeof(float));
    return scan_nonfinite(out, n);  // float -> double is exact
  }
  if (m.layout.fortran_order) {
    m.gather_fortran(first, count, out, &nf);
    return nf;
  }
  // Through doubles, a bounded block at a time.
  constexpr std::size_t kBlock = std::size_t{1} << 16;
  std::vector<double> block(std::min(kBlock, n));
  for (std::size_t i = 0; i < n; i += kBlock) {
    const std::size_t k = std::min(kBlock, n - i);
    m.decode(begin + i, k, block.data());
    Impl::add(&nf, scan_nonfinite(block.data(), k), 1, i);
    for (std::size_t j = 0; j < k; ++j) out[i + j] = io::to_f32(block[j]);
  }
  return nf;
}

void MappedVolume::read_box(const std::vector<std::size_t>& lo, const std::vector<std::size_t>& hi,
                            float* out) const {
  const Impl& m = *impl_;
  const std::vector<std::size_t>& dims = m.layout.dims;
  const std::size_t r = dims.size();
  if (lo.size() != r || hi.size() != r)
    throw std::invalid_argument("MappedVolume::read_box: a box of another rank");
  for (std::size_t d = 0; d < r; ++d)
    if (!(lo[d] < hi[d] && hi[d] <= dims[d]))
      throw std::invalid_argument("MappedVolume::read_box: the box lies outside the array");
  const std::size_t ch = channels();
  const std::size_t row = (hi[r - 1] - lo[r - 1]) * ch;  // values per row of the box
  // Row strides in values (C order, channels interleaved last).
  std::vector<std::size_t> stride(r, ch);
  for (std::size_t d = r - 1; d-- > 0;) stride[d] = stride[d + 1] * dims[d + 1];
  if (m.layout.fortran_order) {  // whole slices, cropped
    std::vector<float> slab(m.slice_values);
    for (std::size_t z = lo[0]; z < hi[0]; ++z) {
      (void)read_slices(z, 1, slab.data());
      if (r == 1) {
        out = std::copy(slab.begin(), slab.end(), out);
        continue;
      }
      std::vector<std::size_t> idx(lo.begin() + 1, lo.end() - 1);  // axes 1 .. r - 2
      while (true) {
        std::size_t at = lo[r - 1] * ch;
        for (std::size_t d = 1; d + 1 < r; ++d) at += idx[d - 1] * stride[d];
        out = std::copy(slab.begin() + static_cast<std::ptrdiff_t>(at),
                        slab.begin() + static_cast<std::ptrdiff_t>(at + row), out);
        std::size_t d = r - 1;
        while (d-- > 1) {
          if (++idx[d - 1] < hi[d]) break;
          idx[d - 1] = lo[d];
        }
        if (d == 0) break;
      }
    }
    return;
  }
  std::vector<double> block(native_f32() ? 0 : row);
  std::vector<std::size_t> idx(lo.begin(), lo.end() - 1);  // axes 0 .. r - 2
  while (true) {
    std::size_t first = lo[r - 1] * ch;
    for (std::size_t d = 0; d + 1 < r; ++d) first += idx[d] * stride[d];
    if (native_f32()) {
      m.copy_raw(out, first * sizeof(float), row * sizeof(float));
    } else {
      m.decode(first, row, block.data());
      for (std::size_t j = 0; j < row; ++j) out[j] = io::to_f32(block[j]);
    }
    out += row;
    std::size_t d = r - 1;
    while (d-- > 0) {
      if (++idx[d] < hi[d]) break;
      idx[d] = lo[d];
    }
    if (d == static_cast<std::size_t>(-1)) break;
  }
}

void MappedVolume::release_slices(std::size_t first, std::size_t count) const {
  const Impl& m = *impl_;
  m.check_range(first, count);
  if (m.layout.fortran_order || count == 0) return;  // a slab is spread over the whole file
  const std::size_t page = page_size();
  const auto start =
      reinterpret_cast<std::uintptr_t>(m.data + first * m.slice_values * m.value_size);
  const auto end = start + count * m.slice_values * m.value_size;
  const std::uintptr_t a = (start + page - 1) / page * page, b = end / page * page;
  // Pages wholly inside the slices leave this process's memory (the file keeps them).
  if (b > a) ::madvise(reinterpret_cast<void*>(a), b - a, MADV_DONTNEED);
}

MappedVolume open_mapped(const std::string& path, bool channel_axis,
                         const std::optional<RawSpec>& raw) {
  io::DataLayout layout = probe(path, channel_axis, raw);
  if (!layout.not_mappable.empty()) refuse(path, layout.not_mappable);
  auto impl = std::make_unique<MappedVolume::Impl>();
  impl->path = path;
  impl->value_size = io::scalar_size(layout.scalar);
  impl->slice_values = layout.channels;
  for (std::size_t k = 1; k < layout.dims.size(); ++k) impl->slice_values *= layout.dims[k];
  impl->size = impl->slice_values * layout.dims[0];  // checked by the probe (data_bytes)

  const std::string& data_path = layout.data_path;
  io::InputFile file(data_path);
  const int fd = file.release_fd();
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    io::fail(data_path, "cannot open: " + errno_text(e));
  }
  const auto length = static_cast<std::size_t>(st.st_size);
  if (layout.data_offset > length || layout.data_bytes > length - layout.data_offset) {
    ::close(fd);
    io::fail(data_path, "the file changed while it was opened (it now holds " +
                            std::to_string(length) + " bytes)");
  }
  void* map = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, 0);
  const int e = errno;
  ::close(fd);
  if (map == MAP_FAILED) refuse(path, "the system cannot map it (" + errno_text(e) + ")");
  impl->map = map;
  impl->map_length = length;
  impl->data = static_cast<const unsigned char*>(map) + layout.data_offset;
  impl->layout = std::move(layout);
  return MappedVolume(std::move(impl));
}

// ------------------------------------------------------------------------------ MappedOutput

struct MappedOutput::Impl {
  std::string path;  // "" for a scratch file
  TempFileGuard guard;
  int fd = -1;
  void* map = nullptr;
  std::size_t map_length = 0, header = 0, size = 0;
  std::vector<std::size_t> dims;
  std::size_t channels = 1;

  ~Impl() {
    if (map) ::munmap(map, map_length);
    if (fd >= 0) ::close(fd);
    // then the guard removes the temporary, unless it was renamed into place
  }
};

MappedOutput::MappedOutput() = default;
MappedOutput::MappedOutput(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MappedOutput::~MappedOutput() = default;
MappedOutput::MappedOutput(MappedOutput&&) noexcept = default;
MappedOutput& MappedOutput::operator=(MappedOutput&&) noexcept = default;

float* MappedOutput::data() {
  return reinterpret_cast<float*>(static_cast<unsigned char*>(impl_->map) + impl_->header);
}
const float* MappedOutput::data() const {
  return reinterpret_cast<const float*>(static_cast<const unsigned char*>(impl_->map) +
                                        impl_->header);
}
std::size_t MappedOutput::size() const {
  return impl_->size;
}
const std::vector<std::size_t>& MappedOutput::dims() const {
  return impl_->dims;
}
std::size_t MappedOutput::channels() const {
  return impl_->channels;
}
const std::string& MappedOutput::path() const {
  return impl_->path;
}
const std::string& MappedOutput::temporary_path() const {
  return impl_->guard.path();
}

void MappedOutput::commit() {
  Impl& m = *impl_;
  if (m.path.empty()) throw Error("internal error: a scratch file is never committed");
  std::string problem;
  if (::msync(m.map, m.map_length, MS_SYNC) != 0) problem = "cannot write: " + errno_text(errno);
  ::munmap(m.map, m.map_length);
  m.map = nullptr;
  if (problem.empty() && ::fsync(m.fd) != 0 && errno != EINVAL && errno != EROFS)
    problem = "cannot write: " + errno_text(errno);
  if (::close(m.fd) != 0 && problem.empty()) problem = "cannot write: " + errno_text(errno);
  m.fd = -1;
  if (!problem.empty()) io::fail(m.path, problem);
  if (std::rename(m.guard.path().c_str(), m.path.c_str()) != 0)
    io::fail(m.path, "cannot replace the file: " + errno_text(errno));
  m.guard.release();
}

namespace {

// A guarded temporary beside `beside` holding `header` and room for the samples, mapped
// read-write; `path` is OUT for messages and commit() ("" for a scratch file).
MappedOutput create_mapped(const std::string& path, const std::string& beside,
                           const std::vector<unsigned char>& header,
                           const std::vector<std::size_t>& dims, std::size_t channels) {
  const std::string& named = path.empty() ? beside : path;
  if (dims.empty() || dims.size() > kMaxRank)
    io::fail(named, "cannot write a " + std::to_string(dims.size()) + "-D array (1 to 3 axes)");
  if (channels < 1 || channels > kMaxChannels)
    io::fail(named, "cannot write " + std::to_string(channels) + " channels (1 to 4)");
  std::size_t n = channels, bytes = 0;
  for (std::size_t d : dims) {
    if (d == 0) io::fail(named, "cannot save an empty array");
    if (!io::checked_mul(n, d, &n)) io::fail(named, "the array is too large");
  }
  if (!io::checked_mul(n, sizeof(float), &bytes) || bytes > SIZE_MAX - header.size() ||
      header.size() + bytes > static_cast<std::size_t>(INT64_MAX))
    io::fail(named, "the array is too large");
  const std::size_t total = header.size() + bytes;

  auto m = std::make_unique<MappedOutput::Impl>();
  m->path = path;
  m->dims = dims;
  m->channels = channels;
  m->size = n;
  m->header = header.size();
  // Registered before the file exists, so that no moment leaves an unguarded temporary.
  m->guard = TempFileGuard(io::temporary_name(beside));
  const std::string& tmp = m->guard.path();
  do {
    m->fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  } while (m->fd < 0 && errno == EINTR);
  if (m->fd < 0)
    io::fail(named, "cannot create temporary file '" + printable(tmp, std::string::npos) +
                        "': " + errno_text(errno));
  // Every block is reserved now: a full disk or a file-size limit is an error here, never a
  // SIGBUS when the mapping is written.
  const int rc = ::posix_fallocate(m->fd, 0, static_cast<off_t>(total));
  if (rc != 0) io::fail(named, "cannot write: " + errno_text(rc));
  void* map = ::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
  if (map == MAP_FAILED) io::fail(named, "cannot map the temporary file: " + errno_text(errno));
  m->map = map;
  m->map_length = total;
  if (!header.empty()) std::memcpy(map, header.data(), header.size());
  return MappedOutput(std::move(m));
}

// The NRRD header with a comment line that makes its length a multiple of 64 bytes, so that the
// float samples after it are aligned.
std::vector<unsigned char> padded_nrrd_header(std::string text) {
  // text ends with the blank line; the comment goes before it.
  text.pop_back();
  std::string comment = "# padding: the data starts at a multiple of 64 bytes";
  const std::size_t used = text.size() + comment.size() + 2;  // + its newline + the blank line
  comment.append((64 - used % 64) % 64, ' ');
  text += comment + "\n\n";
  return std::vector<unsigned char>(text.begin(), text.end());
}

}  // namespace

std::string mapped_output_refusal(const std::string& path) {
  const std::string ext = io::lower_extension(path);
  if (ext == ".npy" || ext == ".nrrd" || ext == ".nii") return "";
  std::string why;
  if (ext == ".gz" && ends_with(io::to_lower(path), ".nii.gz"))
    why = "a .nii.gz file is gzip-compressed as a whole";
  else if (ext == ".nhdr")
    why = "a .nhdr header is written with a separate gzip-compressed data file";
  else if (ext == ".tif" || ext == ".tiff")
    why = "a TIFF file is written in compressed strips";
  else if (ext.empty())
    why = "a file without an extension names no format";
  else
    why = "'" + printable(ext, 20) + "' files are not written in place";
  return printable(path, std::string::npos) + ": " + why +
         "; a result written in place, slab by slab, is a .npy, .nrrd or .nii file (float32; "
         "convert it afterwards)";
}

MappedOutput create_mapped_output(const std::string& path, const std::vector<std::size_t>& dims,
                                  std::size_t channels, bool channel_axis,
                                  const Geometry& geometry) {
  const std::string refusal = mapped_output_refusal(path);
  if (!refusal.empty()) throw Error(refusal);
  return io::guard_memory(path, [&] {
    if (dims.empty()) io::fail(path, "cannot save an empty array");
    const std::string ext = io::lower_extension(path);
    std::vector<unsigned char> header;
    if (ext == ".npy")
      header = io::npy_header_bytes(path, dims, channels, channel_axis, DType::F32);
    else if (ext == ".nii")
      header = io::nifti_header_bytes(path, dims, channels, DType::F32, geometry);
    else
      header = padded_nrrd_header(
          io::nrrd_header_text(path, dims, channels, channel_axis, DType::F32, geometry, "raw"));
    return create_mapped(path, path, header, dims, channels);
  });
}

MappedOutput create_mapped_scratch(const std::string& beside, const std::vector<std::size_t>& dims,
                                   std::size_t channels) {
  return io::guard_memory(beside, [&] { return create_mapped("", beside, {}, dims, channels); });
}

}  // namespace sv
