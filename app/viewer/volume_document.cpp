// Loading, upload and prefiltering of the slices mode's volume (see volume_document.h).
#include "volume_document.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <new>
#include <optional>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include "elapsed.h"
#include "splineview/error.h"
#include "splineview/geometry.h"
#include "splineview/gl/cuda_interop.h"
#include "splineview/mapped.h"
#include "splineview/prefilter.h"
#include "splineview/pyramid.h"
#include "splineview/synthetic.h"
#include "volume_stream.h"

#ifndef SPLINEVIEW_ASSET_DIR
#define SPLINEVIEW_ASSET_DIR "assets"
#endif

namespace sv::viewer {
namespace {

constexpr const char* kDefaultVolume = "mri_t1_head.nrrd";
constexpr std::size_t kMaxStatisticsValues = std::size_t{4} << 20;

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

// A scalar 3-D volume, or an error naming `name` and the shape.
void check_shape(const std::string& name, const std::vector<std::size_t>& dims,
                 std::size_t channels) {
  if (dims.size() != 3) {
    throw Error(name + ": the slices mode shows 3-D volumes, this one has shape " +
                describe_shape(dims, channels));
  }
  if (channels != 1) {
    throw Error(name + ": the slices mode shows scalar volumes, this one has " +
                std::to_string(channels) +
                " channels (convert it to one channel, e.g. its luminance, first)");
  }
}

// The shape, texture size and memory checks shared by every source; `name` opens the message.
void check_limits(const std::string& name, const std::array<std::size_t, 3>& dims,
                  const VolumeLimits& limits) {
  const std::string shape = std::to_string(dims[2]) + "x" + std::to_string(dims[1]) + "x" +
                            std::to_string(dims[0]) + " voxels (x, y, z)";
  if (limits.max_texture_side > 0) {
    for (std::size_t d : dims) {
      if (d > static_cast<std::size_t>(limits.max_texture_side)) {
        throw Error(name + ": volume of " + shape + " exceeds the largest 3-D texture of " +
                    std::to_string(limits.max_texture_side) + " per side (GL_MAX_3D_TEXTURE_SIZE)");
      }
    }
  }
  const double bytes = 2.0 * 4.0 * static_cast<double>(dims[0]) * static_cast<double>(dims[1]) *
                       static_cast<double>(dims[2]);
  if (bytes > static_cast<double>(limits.texture_budget)) {
    throw Error(name + ": volume of " + shape + " needs " + mib_text(bytes) +
                " of textures (samples and coefficients, float32), over the budget of " +
                mib_text(static_cast<double>(limits.texture_budget)));
  }
}

// Voxels per axis after a reduction by 2^level (sv::reduce's round(n F), halves to even; axes
// of one voxel stay).
std::array<std::size_t, 3> reduced_dims(const std::array<std::size_t, 3>& dims, int level) {
  std::array<std::size_t, 3> out = dims;
  for (std::size_t& n : out)
    if (n > 1)
      n = std::max<std::size_t>(
          1, static_cast<std::size_t>(std::nearbyint(std::ldexp(static_cast<double>(n), -level))));
  return out;
}

bool fits(const std::array<std::size_t, 3>& dims, const VolumeLimits& limits) {
  if (limits.max_texture_side > 0)
    for (std::size_t d : dims)
      if (d > static_cast<std::size_t>(limits.max_texture_side)) return false;
  const double bytes = 2.0 * 4.0 * static_cast<double>(dims[0]) * static_cast<double>(dims[1]) *
                       static_cast<double>(dims[2]);
  return bytes <= static_cast<double>(limits.texture_budget);
}

// Keeps `exact` (the values in double) for the accuracy overlay when it fits the budget; else
// records why not.
void keep_exact(DecodedVolume& v, std::shared_ptr<const ArrayD> exact, const std::string& name,
                const VolumeLimits& limits) {
  const double bytes = 8.0 * static_cast<double>(v.dims[0]) * static_cast<double>(v.dims[1]) *
                       static_cast<double>(v.dims[2]);
  if (bytes <= static_cast<double>(limits.accuracy_budget)) {
    v.exact = std::move(exact);
    v.accuracy_note.clear();
  } else {
    v.exact.reset();
    v.accuracy_note = "no accuracy overlay for " + name + ": its reference needs " +
                      mib_text(bytes) +
                      " of doubles (and as much again for their coefficients), over the " +
                      "budget of " + mib_text(static_cast<double>(limits.accuracy_budget));
  }
}

// Every how many values the statistics pick one (at most kMaxStatisticsValues picked).
std::size_t statistics_stride(std::size_t count) {
  return std::max<std::size_t>(1, (count + kMaxStatisticsValues - 1) / kMaxStatisticsValues);
}

// The 1st and 99th percentiles of the picked values (reordered).
template <class T>
std::pair<double, double> percentiles_of(std::vector<T>& picked) {
  const auto percentile = [&picked](double q) {
    const auto k =
        static_cast<std::size_t>(std::llround(q * static_cast<double>(picked.size() - 1)));
    std::nth_element(picked.begin(), picked.begin() + static_cast<std::ptrdiff_t>(k), picked.end());
    return static_cast<double>(picked[k]);
  };
  const double p01 = percentile(0.01);
  return {p01, percentile(0.99)};
}

// The 1st and 99th percentiles of at most kMaxStatisticsValues evenly spread values: every
// statistics_stride-th value in storage order, from the first.
template <class T>
std::pair<double, double> percentiles_1_99(const std::vector<T>& values) {
  const std::size_t stride = statistics_stride(values.size());
  std::vector<T> picked;
  picked.reserve(values.size() / stride + 1);
  for (std::size_t i = 0; i < values.size(); i += stride) picked.push_back(values[i]);
  return percentiles_of(picked);
}

// The default window from v's statistics: integer data (and overviews of integer files)
// [p01, p99], float data [min, max]; a constant volume gets a window of 1 around its value.
void set_default_window(DecodedVolume& v) {
  const bool percentiles = v.integer_valued || v.overview_of_integers;
  double wlo = percentiles ? v.p01 : v.min;
  double whi = percentiles ? v.p99 : v.max;
  if (!(whi > wlo)) {  // a (nearly) constant volume: fall back to the full range, then to 1
    wlo = v.min;
    whi = v.max;
  }
  if (!(whi > wlo)) {
    wlo = v.min - 0.5;
    whi = v.min + 0.5;
  }
  v.default_window = {whi - wlo, (whi + wlo) / 2.0};
}

// Value range, percentiles, integer test and the default window.
void compute_statistics(DecodedVolume& v) {
  const std::vector<float>& values = v.samples.vec();
  double lo = values.front(), hi = values.front();
  bool integer = true;
  for (float x : values) {
    lo = std::min(lo, static_cast<double>(x));
    hi = std::max(hi, static_cast<double>(x));
    if (integer && x != std::floor(x)) integer = false;
  }
  v.min = lo;
  v.max = hi;
  v.integer_valued = integer;
  std::tie(v.p01, v.p99) = percentiles_1_99(values);
  set_default_window(v);
}

std::string describe(const DecodedVolume& v) {
  const std::string type =
      v.integer_valued && v.dtype == DType::F32 ? "int16 (as float32)" : dtype_name(v.dtype);
  return std::to_string(v.dims[2]) + " x " + std::to_string(v.dims[1]) + " x " +
         std::to_string(v.dims[0]) + " voxels (x, y, z), " + type + ", " + number(v.spacing[2]) +
         " x " + number(v.spacing[1]) + " x " + number(v.spacing[0]) + " mm, " +
         (v.geometry.oriented()
              ? "orientation " + orientation_code(v.geometry) + " (" + v.geometry.source + ")"
              : std::string("orientation not stated"));
}

// Level 0 of an R32F 3-D texture as floats. Sets the pack state it needs (no pack buffer,
// tight rows) and restores it.
ArrayF read_back(const gl::Texture& texture, const std::array<std::size_t, 3>& dims) {
  ArrayF out({dims[0], dims[1], dims[2]}, 1);
  GLint alignment = 0, row_length = 0, image_height = 0, buffer = 0;
  glGetIntegerv(GL_PACK_ALIGNMENT, &alignment);
  glGetIntegerv(GL_PACK_ROW_LENGTH, &row_length);
  glGetIntegerv(GL_PACK_IMAGE_HEIGHT, &image_height);
  glGetIntegerv(GL_PIXEL_PACK_BUFFER_BINDING, &buffer);
  glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
  glPixelStorei(GL_PACK_ALIGNMENT, 4);
  glPixelStorei(GL_PACK_ROW_LENGTH, 0);
  glPixelStorei(GL_PACK_IMAGE_HEIGHT, 0);
  glGetTextureImage(texture.id(), 0, GL_RED, GL_FLOAT,
                    static_cast<GLsizei>(out.size() * sizeof(float)), out.data());
  glPixelStorei(GL_PACK_ALIGNMENT, alignment);
  glPixelStorei(GL_PACK_ROW_LENGTH, row_length);
  glPixelStorei(GL_PACK_IMAGE_HEIGHT, image_height);
  glBindBuffer(GL_PIXEL_PACK_BUFFER, static_cast<GLuint>(buffer));
  gl::check_error("reading back the coefficient texture", __FILE__, __LINE__);
  return out;
}

// Where an overview's views stream the full resolution from: the file's map where it can be
// mapped (and holds what the loader read: same dims, one channel), else the values read, as
// float, in RAM.
std::shared_ptr<const FullResolutionSource> full_resolution_source(
    const std::string& path, const std::optional<RawSpec>& raw, const ArrayD& values) {
  std::string why;
  try {
    MappedVolume map = open_mapped(path, false, raw);
    const std::vector<std::size_t> want{values.dim(0), values.dim(1), values.dim(2)};
    if (map.dims() == want && map.channels() == 1)
      return std::make_shared<const FullResolutionSource>(std::move(map));
    why = "its map's shape differs from what the loader read";
  } catch (const Error& e) {
    why = e.what();
  }
  auto source = std::make_shared<FullResolutionSource>(ArrayF::from(values));
  source->set_description(source->description() + "; not a memory map: " + why);
  return source;
}

// The overview options (decode_volume): the least-squares projection of the volume's cubic
// spline onto the spline space of 2^level times the spacing, its samples at the coarse grid
// positions; reflect with the pixel-edge grid keeps the volume's outer edges where they are.
ReduceOptions overview_reduce_options() {
  ReduceOptions ro;
  ro.degree = 3;
  ro.boundary = Boundary::Reflect;
  ro.grid = PyramidGrid::Cells;
  ro.samples = true;
  return ro;
}

std::vector<double> overview_factors(const std::array<std::size_t, 3>& full, int level) {
  std::vector<double> factors(3, 1.0);
  for (std::size_t d = 0; d < 3; ++d)
    if (full[d] > 1) factors[d] = std::ldexp(1.0, -level);
  return factors;
}

// The overview of a memory-mapped volume, built without the volume in RAM: the reduction is
// separable (per axis: prefilter, projection, coarse samples), so each slice is reduced in y
// and x as it is read (slabs of at most 32 MiB of doubles, released from the page cache after
// use), and the stack of reduced slices (1/4^level of the volume) in z. Equal to sv::reduce of
// the whole volume to rounding. Also what decode_volume takes from the values: whether all are
// integers, and the percentiles' picks (the same values percentiles_1_99 picks).
struct StreamedOverview {
  Reduced<double> reduced;
  bool integers = true;
  std::vector<double> picked;
};

StreamedOverview stream_overview(const MappedVolume& map, int level) {
  const std::array<std::size_t, 3> full{map.dims()[0], map.dims()[1], map.dims()[2]};
  const std::vector<double> f = overview_factors(full, level);
  const ReduceOptions ro = overview_reduce_options();
  const std::size_t slice = full[1] * full[2], total = slice * full[0];
  const std::size_t stride = statistics_stride(total);
  const std::size_t per_slab =
      std::max<std::size_t>(1, (std::size_t{32} << 20) / (slice * sizeof(double)));
  StreamedOverview out;
  out.picked.reserve(total / stride + 1);
  std::vector<double> slab;
  ArrayD plane({full[1], full[2]}, 1), stack;
  std::vector<PyramidAxis> plane_axes;
  for (std::size_t z0 = 0; z0 < full[0]; z0 += per_slab) {
    const std::size_t n = std::min(per_slab, full[0] - z0);
    slab.resize(n * slice);
    map.read_slices(z0, n, slab.data());
    const std::size_t base = z0 * slice;
    for (std::size_t i = (base + stride - 1) / stride * stride; i < base + slab.size(); i += stride)
      out.picked.push_back(slab[i - base]);
    if (out.integers)
      for (double x : slab)
        if (x != std::floor(x)) {
          out.integers = false;
          break;
        }
    for (std::size_t k = 0; k < n; ++k) {
      std::copy(slab.begin() + static_cast<std::ptrdiff_t>(k * slice),
                slab.begin() + static_cast<std::ptrdiff_t>((k + 1) * slice), plane.vec().begin());
      Reduced<double> r = reduce(plane, {f[1], f[2]}, ro);
      if (stack.size() == 0) {
        stack = ArrayD({full[0], r.samples.dim(0), r.samples.dim(1)}, 1);
        plane_axes = r.axes;
      }
      std::copy(r.samples.vec().begin(), r.samples.vec().end(),
                stack.vec().begin() + static_cast<std::ptrdiff_t>((z0 + k) * r.samples.size()));
    }
    map.release_slices(z0, n);
  }
  out.reduced = reduce(stack, {f[0], 1.0, 1.0}, ro);
  out.reduced.axes[1] = plane_axes[0];
  out.reduced.axes[2] = plane_axes[1];
  return out;
}

}  // namespace

gl::Texture volume_texture(const std::array<std::size_t, 3>& dims) {
  gl::Texture t = gl::Texture::create_3d(GL_R32F, static_cast<int>(dims[2]),
                                         static_cast<int>(dims[1]), static_cast<int>(dims[0]));
  t.set_filter(GL_LINEAR, GL_LINEAR);
  t.set_wrap(GL_MIRRORED_REPEAT);  // the reflect boundary of the prefilter
  return t;
}

VolumeLimits query_volume_limits() {
  VolumeLimits limits;
  GLint side = 0;
  glGetIntegerv(GL_MAX_3D_TEXTURE_SIZE, &side);
  limits.max_texture_side = side;
  return limits;
}

DecodedVolume decode_samples(ArrayF samples, const glm::dvec3& spacing, const std::string& name,
                             DType dtype, const VolumeLimits& limits, bool overview_of_integers) {
  check_shape(name, samples.dims(), samples.channels());
  DecodedVolume v;
  v.name = name;
  v.dims = {samples.dim(0), samples.dim(1), samples.dim(2)};
  v.full_dims = v.dims;
  check_limits(name, v.dims, limits);
  for (float x : samples.vec()) {
    if (!std::isfinite(x)) throw Error(name + ": the volume holds NaN or infinite values");
  }
  v.samples = std::move(samples);
  v.spacing = spacing;
  for (int a = 0; a < 3; ++a)
    if (!(v.spacing[a] > 0.0) || !std::isfinite(v.spacing[a])) v.spacing[a] = 1.0;
  v.geometry = geometry_from_spacing({v.spacing[0], v.spacing[1], v.spacing[2]});
  v.dtype = dtype;
  v.overview_of_integers = overview_of_integers;
  compute_statistics(v);
  v.description = describe(v);
  const double bytes = 8.0 * static_cast<double>(v.samples.size());
  keep_exact(v,
             bytes <= static_cast<double>(limits.accuracy_budget)
                 ? std::make_shared<const ArrayD>(ArrayD::from(v.samples))
                 : nullptr,
             name, limits);
  return v;
}

DecodedVolume decode_volume(const std::string& path, const std::optional<RawSpec>& raw,
                            const VolumeLimits& limits) {
  const auto start = std::chrono::steady_clock::now();
  const std::string name = std::filesystem::path(path).filename().string();
  DecodedVolume v;
  try {
    // A file that must become an overview is read from its memory map where it has one (the
    // volume never in RAM: stream_overview); everything else through its loader.
    std::optional<MappedVolume> map;
    try {
      map = open_mapped(path, false, raw);
      if (map->rank() != 3 || map->channels() != 1 ||
          overview_level_for({map->dims()[0], map->dims()[1], map->dims()[2]}, limits) <= 0)
        map.reset();
    } catch (const Error&) {  // not mappable, or refused: the loader says why
      map.reset();
    }
    Loaded loaded;
    if (!map) {
      loaded = raw ? load_any(path, false, *raw) : load_any(path, false);
      // The checks of decode_samples, before the float copy.
      check_shape(path, loaded.array.dims(), loaded.array.channels());
    }
    const std::vector<std::size_t> dims = map ? map->dims() : loaded.array.dims();
    const std::array<std::size_t, 3> full{dims[0], dims[1], dims[2]};
    const int level = overview_level_for(full, limits);
    if (level < 0) {  // not even a one-voxel overview fits: the sentence of the limit
      check_limits(path, full, limits);
      throw Error(path + ": the volume does not fit the texture limits at any resolution");
    }
    const std::vector<double> file_spacing = map ? map->spacing() : loaded.spacing;
    glm::dvec3 spacing(1.0);
    for (std::size_t i = 0; i < 3 && i < file_spacing.size(); ++i)
      spacing[static_cast<int>(i)] = file_spacing[i];
    const DType dtype = map ? map->dtype() : loaded.dtype;
    // Its own orientation, whatever the file is called (unoriented: diag(spacing)).
    Geometry geometry = map ? map->geometry() : loaded.geometry;
    check_geometry(geometry, 3, path);
    std::string overview_note;
    std::shared_ptr<const FullResolutionSource> full_resolution;
    bool file_integers = true;
    std::optional<std::pair<double, double>> file_percentiles;  // of an integer file
    std::array<double, 3> overview_origin{0, 0, 0}, overview_step{1, 1, 1};
    bool overview_streamed = false;
    if (level > 0) {
      // The overview: the least-squares projection of the volume's cubic spline onto the spline
      // space of 2^level times the spacing (anti-aliased), its samples at the coarse grid
      // positions (overview_reduce_options). Coarse voxel l sits at fine index origin + T l on
      // each axis, which places it in the patient frame (geometry_resampled takes i, j, k = x,
      // y, z order).
      Reduced<double> r;
      if (map) {
        StreamedOverview so = stream_overview(*map, level);
        file_integers = so.integers;
        if (file_integers) file_percentiles = percentiles_of(so.picked);
        r = std::move(so.reduced);
        if (limits.detail_budget > 0)  // the views stream from the same map
          full_resolution = std::make_shared<const FullResolutionSource>(std::move(*map));
        map.reset();
        overview_streamed = true;
      } else {
        for (double x : loaded.array.vec())
          if (x != std::floor(x)) {
            file_integers = false;
            break;
          }
        // Integer files keep the window the file itself would get: the percentiles of its own
        // values, not of the overview's (which rings a little beyond them).
        if (file_integers) file_percentiles = percentiles_1_99(loaded.array.vec());
        r = reduce(loaded.array, overview_factors(full, level), overview_reduce_options());
        if (limits.detail_budget > 0)  // else nothing streams: no map, no copy
          full_resolution = full_resolution_source(path, raw, loaded.array);
      }
      const Vec3 scale{r.axes[2].spacing, r.axes[1].spacing, r.axes[0].spacing};
      const Vec3 offset{r.axes[2].origin, r.axes[1].origin, r.axes[0].origin};
      geometry = geometry_resampled(geometry, scale, offset);
      for (std::size_t d = 0; d < 3; ++d) {
        overview_origin[d] = r.axes[d].origin;
        overview_step[d] = r.axes[d].spacing;
      }
      for (int d = 0; d < 3; ++d) spacing[d] *= r.axes[static_cast<std::size_t>(d)].spacing;
      loaded.array = std::move(r.samples);
      const std::string name_only = std::filesystem::path(path).filename().string();
      overview_note =
          "overview of " + name_only + ": 1/" + std::to_string(1 << level) +
          " resolution per axis (least-squares cubic B-spline reduction); the " +
          std::to_string(full[2]) + " x " + std::to_string(full[1]) + " x " +
          std::to_string(full[0]) + " voxels (x, y, z) exceed the " +
          (limits.max_texture_side > 0 && std::max({full[0], full[1], full[2]}) >
                                              static_cast<std::size_t>(limits.max_texture_side)
               ? "largest 3-D texture (" + std::to_string(limits.max_texture_side) + " per side)"
               : "texture budget of " + mib_text(static_cast<double>(limits.texture_budget)));
    }
    const ArrayD& a = loaded.array;
    ArrayF samples = ArrayF::from(a);
    // The doubles as read stay for the accuracy overlay's reference when they fit its budget.
    std::shared_ptr<const ArrayD> exact;
    VolumeLimits float_only = limits;
    float_only.accuracy_budget = 0;  // decode_samples' copy from the floats is not wanted
    const bool keep =
        8.0 * static_cast<double>(a.size()) <= static_cast<double>(limits.accuracy_budget);
    if (keep) exact = std::make_shared<const ArrayD>(std::move(loaded.array));
    loaded = Loaded{};
    v = decode_samples(std::move(samples), spacing, path, dtype, float_only,
                       level > 0 && file_integers);
    v.geometry = geometry;
    if (file_percentiles) {
      std::tie(v.p01, v.p99) = *file_percentiles;
      set_default_window(v);
    }
    v.overview_level = level;
    v.overview_streamed = overview_streamed;
    v.full_dims = full;
    v.overview_note = overview_note;
    v.full_resolution = std::move(full_resolution);
    v.overview_origin = overview_origin;
    v.overview_step = overview_step;
    v.description = describe(v);
    if (level > 0)
      v.description += ", overview 1/" + std::to_string(1 << level) + " of " +
                       std::to_string(full[2]) + " x " + std::to_string(full[1]) + " x " +
                       std::to_string(full[0]);
    keep_exact(v, std::move(exact), path, limits);
  } catch (const std::bad_alloc&) {
    throw Error(path + ": out of memory while reading the volume");
  }
  v.path = path;
  v.name = name;
  v.load_ms = ms_since(start);
  return v;
}

DecodedVolume decode_marschner_lobb(std::size_t n, const VolumeLimits& limits) {
  const auto start = std::chrono::steady_clock::now();
  const std::string name = "Marschner-Lobb " + std::to_string(n) + "^3";
  if (n == 0) throw Error(name + ": the grid needs at least one sample per axis");
  check_limits(name, {n, n, n}, limits);
  DecodedVolume v = decode_samples(marschner_lobb(n), {1.0, 1.0, 1.0}, name, DType::F32, limits);
  v.truth.label = "the Marschner-Lobb function";
  v.truth.value = [n](const double* p, std::size_t) {
    return marschner_lobb_sample_at(p[0], p[1], p[2], n);
  };
  v.load_ms = ms_since(start);
  return v;
}

VolumeDocument upload_volume(DecodedVolume volume, const VolumeLimits& limits, bool allow_cuda) {
  VolumeDocument doc;
  const std::string name = volume.path.empty() ? volume.name : volume.path;
  doc.volume = std::move(volume);
  const DecodedVolume& v = doc.volume;
  try {
    auto start = std::chrono::steady_clock::now();
    doc.samples_texture = volume_texture(v.dims);
    doc.samples_texture.upload(GL_RED, GL_FLOAT, v.samples.data());
    doc.upload_ms = ms_since(start);

    start = std::chrono::steady_clock::now();
    doc.coefficients_texture = volume_texture(v.dims);
    {
      gl::InteropOptions interop_options;
      interop_options.allow_cuda = allow_cuda;
      interop_options.on_fallback = [&doc](const std::string& notice) {
        doc.prefilter_notice = notice;
      };
      gl::TextureInterop interop(doc.coefficients_texture, interop_options);
      interop.prefilter_into(v.samples, {3, Boundary::Reflect, 0});
      doc.prefilter_on_gpu = interop.uses_cuda();
    }
    doc.prefilter_ms = ms_since(start);

    const double bytes = 4.0 * static_cast<double>(v.samples.size());
    if (bytes <= static_cast<double>(limits.readout_budget)) {
      start = std::chrono::steady_clock::now();
      doc.coefficients = read_back(doc.coefficients_texture, v.dims);
      doc.readback_ms = ms_since(start);
    } else {
      doc.readout_note = "no CPU readout: the volume's " + mib_text(bytes) + " exceed the " +
                         mib_text(static_cast<double>(limits.readout_budget)) + " read back for it";
      doc.volume.samples = ArrayF{};  // the textures hold them; spare the host memory
      if (doc.volume.exact) {
        doc.volume.exact.reset();
        doc.volume.accuracy_note = "no accuracy overlay for " + name +
                                   ": its coefficients are not read back (over the readout "
                                   "budget of " +
                                   mib_text(static_cast<double>(limits.readout_budget)) + ")";
      }
    }
  } catch (const std::bad_alloc&) {
    throw Error(name + ": out of memory while uploading the volume");
  } catch (const Error& e) {
    throw Error(name + ": " + e.what());
  }
  return doc;
}

int overview_level_for(const std::array<std::size_t, 3>& dims, const VolumeLimits& limits) {
  for (int level = 0; level < 31; ++level) {
    if (fits(reduced_dims(dims, level), limits)) return level;
    if (reduced_dims(dims, level) == std::array<std::size_t, 3>{1, 1, 1}) break;
  }
  return -1;
}

std::string default_volume_path() {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(exe.parent_path() / ".." / "share" / "splineview" / "assets");
  candidates.emplace_back(SPLINEVIEW_ASSET_DIR);
  for (const fs::path& dir : candidates) {
    const fs::path p = dir / kDefaultVolume;
    if (fs::exists(p, ec)) return p.lexically_normal().string();
  }
  return (fs::path(SPLINEVIEW_ASSET_DIR) / kDefaultVolume).string();
}

}  // namespace sv::viewer
