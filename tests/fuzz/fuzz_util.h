// Shared by the libFuzzer targets (tests/fuzz/fuzz_*.cpp): each input is written to a file in a
// private folder under /dev/shm (a real path with the extension the loader expects, so the
// loaders run exactly as they do on user files) and handed to an sv loader. sv::Error is the
// expected way to refuse an input; anything else (a crash, a sanitizer report, another
// exception escaping, a leak, a timeout, memory beyond -rss_limit_mb) is a finding. The targets
// of the mapped formats also read the file as --out-of-core does (check_mapped) and abort where
// that disagrees with the loader.
#pragma once

#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "splineview/error.h"
#include "splineview/io.h"
#include "splineview/mapped.h"

namespace svfuzz {

// The folder /dev/shm/sv-fuzz-<pid> (or $TMPDIR when /dev/shm is missing), made once.
inline const std::string& work_dir() {
  static const std::string dir = [] {
    const char* base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : std::getenv("TMPDIR");
    std::string d = std::string(base ? base : "/tmp") + "/sv-fuzz-" + std::to_string(getpid());
    std::string cmd = "mkdir -p '" + d + "'";
    if (std::system(cmd.c_str()) != 0) std::abort();
    return d;
  }();
  return dir;
}

// Writes `size` bytes to work_dir()/name and returns the path.
inline std::string write_input(const std::string& name, const std::uint8_t* data,
                               std::size_t size) {
  const std::string path = work_dir() + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

[[noreturn]] inline void mapped_finding(const std::string& what) {
  std::fprintf(stderr, "mapped read disagrees with the loader: %s\n", what.c_str());
  std::abort();
}

// The memory-mapped read of --out-of-core (sv::open_mapped, read_slices) against the loader on
// the same file: `loaded` is what the loader gave, nullptr when it refused the file. A file the
// loader refuses must be refused by the mapped read too (sv::Error at open or while reading;
// NotMappable is fine either way); a file it reads must be NotMappable or map to the same
// dims, dtype, spacing, geometry and values (bit for bit). Anything else aborts: a finding.
inline void check_mapped(const std::string& path, bool channel_axis, const sv::Loaded* loaded,
                         const std::optional<sv::RawSpec>& raw = std::nullopt) {
  std::optional<sv::MappedVolume> m;
  try {
    m = sv::open_mapped(path, channel_axis, raw);
  } catch (const sv::NotMappable&) {
    return;
  } catch (const sv::Error& e) {
    if (loaded)
      mapped_finding(std::string("the loader reads it, open_mapped refuses: ") + e.what());
    return;
  }
  std::vector<double> values(m->size());
  try {
    m->read_slices(0, m->slices(), values.data());
  } catch (const sv::Error& e) {
    if (loaded)
      mapped_finding(std::string("the loader reads it, read_slices refuses: ") + e.what());
    return;
  }
  if (!loaded) mapped_finding("the loader refuses it, the mapped read accepts it");
  const sv::Loaded& l = *loaded;
  if (m->dims() != l.array.dims() || m->channels() != l.array.channels() ||
      m->channel_axis() != l.channel_axis || m->dtype() != l.dtype || m->spacing() != l.spacing ||
      m->geometry().affine != l.geometry.affine || m->geometry().source != l.geometry.source)
    mapped_finding("the metadata differ");
  for (std::size_t i = 0; i < values.size(); ++i)
    if (std::memcmp(&values[i], &l.array[i], sizeof(double)) != 0 &&
        !(std::isnan(values[i]) && std::isnan(l.array[i])))
      mapped_finding("value " + std::to_string(i) + " differs");
  // read_box (the viewer's streamed boxes): the interior box, as the loader's values in float.
  const std::vector<std::size_t>& dims = m->dims();
  std::vector<std::size_t> lo(dims.size()), hi(dims.size());
  std::size_t n = m->channels();
  for (std::size_t d = 0; d < dims.size(); ++d) {
    lo[d] = dims[d] > 2 ? 1 : 0;
    hi[d] = dims[d] > 2 ? dims[d] - 1 : dims[d];
    n *= hi[d] - lo[d];
  }
  std::vector<float> box(n);
  try {
    m->read_box(lo, hi, box.data());
  } catch (const sv::Error& e) {
    mapped_finding(std::string("read_slices reads it, read_box refuses: ") + e.what());
  }
  std::vector<std::size_t> idx = lo;
  const std::size_t ch = m->channels();
  for (std::size_t k = 0; k < n; k += ch) {
    std::size_t flat = 0;
    for (std::size_t d = 0; d < dims.size(); ++d) flat = flat * dims[d] + idx[d];
    for (std::size_t c = 0; c < ch; ++c) {
      const double v = l.array[flat * ch + c];  // rounded as the map's float reads round
      const float want = v >= 0x1.ffffffp+127    ? std::numeric_limits<float>::infinity()
                         : v <= -0x1.ffffffp+127 ? -std::numeric_limits<float>::infinity()
                                                 : static_cast<float>(v);
      const float got = box[k + c];
      if (std::memcmp(&got, &want, sizeof(float)) != 0 && !(std::isnan(got) && std::isnan(want)))
        mapped_finding("read_box value " + std::to_string(k + c) + " differs");
    }
    for (std::size_t d = dims.size(); d-- > 0;) {
      if (++idx[d] < hi[d]) break;
      idx[d] = lo[d];
    }
  }
}

}  // namespace svfuzz
