// Streaming the full-resolution region under each slice view (see volume_stream.h).
#include "volume_stream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>
#include <new>
#include <utility>

#include "elapsed.h"
#include "splineview/error.h"
#include "splineview/halo.h"
#include "splineview/prefilter.h"

namespace sv::viewer {
namespace {

bool ready(const std::future<DetailRegion>& f) {
  return f.valid() && f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

// The part [lo, hi) of a (z, y, x) array.
ArrayF crop(const ArrayF& a, const std::array<std::size_t, 3>& lo,
            const std::array<std::size_t, 3>& hi) {
  ArrayF out({hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]}, 1);
  float* o = out.data();
  for (std::size_t z = lo[0]; z < hi[0]; ++z)
    for (std::size_t y = lo[1]; y < hi[1]; ++y) {
      const float* row = &a.at3(z, y, lo[2]);
      o = std::copy(row, row + (hi[2] - lo[2]), o);
    }
  return out;
}

}  // namespace

bool DetailBox::covers(const DetailBox& inner) const {
  for (std::size_t d = 0; d < 3; ++d)
    if (inner.lo[d] < lo[d] || inner.hi[d] > hi[d]) return false;
  return true;
}

FullResolutionSource::FullResolutionSource(MappedVolume map)
    : map_(std::make_unique<MappedVolume>(std::move(map))) {
  const std::vector<std::size_t>& d = map_->dims();
  if (d.size() != 3 || map_->channels() != 1)
    throw Error(map_->path() + ": the map is not a scalar 3-D volume");
  dims_ = {d[0], d[1], d[2]};
  description_ = "memory map of " + map_->path() + " (" + map_->describe() + ")";
}

FullResolutionSource::FullResolutionSource(ArrayF samples) : samples_(std::move(samples)) {
  if (samples_.dims().size() != 3 || samples_.channels() != 1)
    throw Error("full-resolution samples: not a scalar 3-D volume");
  dims_ = {samples_.dim(0), samples_.dim(1), samples_.dim(2)};
  description_ = "the full-resolution samples in RAM (" +
                 mib_text(4.0 * static_cast<double>(samples_.size())) + ")";
}

ArrayF FullResolutionSource::read(const DetailBox& box) const {
  for (std::size_t d = 0; d < 3; ++d)
    if (box.hi[d] > dims_[d] || box.lo[d] >= box.hi[d])
      throw Error("full-resolution read: the box lies outside the volume");
  if (!map_) return crop(samples_, box.lo, box.hi);
  // The box's rows through the map's guarded conversion (a sagittal or coronal box reads its
  // rows, not whole slices).
  ArrayF out(std::vector<std::size_t>{box.dims()[0], box.dims()[1], box.dims()[2]}, 1);
  map_->read_box({box.lo[0], box.lo[1], box.lo[2]}, {box.hi[0], box.hi[1], box.hi[2]}, out.data());
  return out;
}

std::size_t detail_halo() {
  static const std::size_t halo = prefilter_halo<float>(3, 3);
  return halo;
}

DetailPlan plan_detail(const DecodedVolume& v, const gl::GridMapping& grid,
                       const VolumeLimits& limits) {
  DetailPlan plan;
  if (v.overview_level <= 0) return plan;
  if (grid.rows == 0 || grid.cols == 0) {
    plan.why = "the view has no pixels";
    return plan;
  }
  // The file index of the four corner pixel centres; every pixel centre lies in their hull.
  std::array<double, 3> lo, hi;
  lo.fill(std::numeric_limits<double>::infinity());
  hi.fill(-std::numeric_limits<double>::infinity());
  for (const double r : {0.0, static_cast<double>(grid.rows - 1)})
    for (const double c : {0.0, static_cast<double>(grid.cols - 1)}) {
      std::array<double, 3> q{};
      for (std::size_t d = 0; d < 3; ++d)
        q[d] = grid.origin[d] + r * grid.step_row[d] + c * grid.step_col[d];
      const std::array<double, 3> f = v.file_index(q);
      for (std::size_t d = 0; d < 3; ++d) {
        lo[d] = std::min(lo[d], f[d]);
        hi[d] = std::max(hi[d], f[d]);
      }
    }
  // Widened by the cubic's support (2 samples each side), clamped to the file.
  for (std::size_t d = 0; d < 3; ++d) {
    const double n = static_cast<double>(v.full_dims[d]);
    const double a = std::clamp(std::floor(lo[d]) - 2.0, 0.0, n);
    const double b = std::clamp(std::floor(hi[d]) + 3.0, 0.0, n);
    plan.core.lo[d] = static_cast<std::size_t>(a);
    plan.core.hi[d] = static_cast<std::size_t>(std::max(a, b));
  }
  if (plan.core.empty()) {
    plan.why = "the view shows none of the file's voxels";
    return plan;
  }
  // The pixel's size in overview voxels: at one or more, the overview (anti-aliased) is what
  // the view can show; below, the file's own voxels show more.
  double pixel = 0;
  for (const auto* step : {&grid.step_row, &grid.step_col})
    pixel = std::max(pixel, std::sqrt((*step)[0] * (*step)[0] + (*step)[1] * (*step)[1] +
                                      (*step)[2] * (*step)[2]));
  const double bytes = 8.0 * static_cast<double>(plan.core.voxels());
  const double per_view = static_cast<double>(limits.detail_budget) / 4.0;
  const std::array<std::size_t, 3> dims = plan.core.dims();
  const std::size_t side = std::max({dims[0], dims[1], dims[2]});
  if (limits.detail_budget == 0) {
    plan.why = "streaming off";
    plan.detail = "the detail budget is 0";
  } else if (pixel >= 1.0) {
    plan.why = "zoom in to stream";
    char text[96];
    std::snprintf(text, sizeof text, "a pixel spans %.2f overview voxels; below 1 it streams",
                  pixel);
    plan.detail = text;
  } else if (bytes > per_view) {
    plan.why = "too large to stream";
    plan.detail = mib_text(bytes) + " of textures, over the " + mib_text(per_view) +
                  " per view of the detail budget; zoom in further";
  } else if (limits.max_texture_side > 0 &&
             side > static_cast<std::size_t>(limits.max_texture_side)) {
    plan.why = "too large to stream";
    plan.detail = std::to_string(side) + " voxels on a side, over the largest 3-D texture (" +
                  std::to_string(limits.max_texture_side) + "); zoom in further";
  } else {
    plan.stream = true;
    plan.request = plan.core;
    DetailBox wide;
    for (std::size_t d = 0; d < 3; ++d) {
      wide.lo[d] = plan.core.lo[d] >= kDetailMargin ? plan.core.lo[d] - kDetailMargin : 0;
      wide.hi[d] = std::min(v.full_dims[d], plan.core.hi[d] + kDetailMargin);
    }
    const std::array<std::size_t, 3> w = wide.dims();
    if (8.0 * static_cast<double>(wide.voxels()) <= per_view &&
        (limits.max_texture_side <= 0 ||
         std::max({w[0], w[1], w[2]}) <= static_cast<std::size_t>(limits.max_texture_side)))
      plan.request = wide;
  }
  return plan;
}

DetailRegion compute_detail(const FullResolutionSource& source, const DetailBox& box) {
  const auto start = std::chrono::steady_clock::now();
  DetailRegion r;
  r.box = box;
  const std::size_t h = detail_halo();
  for (std::size_t d = 0; d < 3; ++d) {
    r.read.lo[d] = box.lo[d] >= h ? box.lo[d] - h : 0;
    r.read.hi[d] = std::min(source.dims()[d], box.hi[d] + h);
  }
  try {
    const ArrayF window = source.read(r.read);
    std::array<std::size_t, 3> lo{}, hi{};
    for (std::size_t d = 0; d < 3; ++d) {
      lo[d] = box.lo[d] - r.read.lo[d];
      hi[d] = box.hi[d] - r.read.lo[d];
    }
    // Where the window ends at the file's face, prefilter_region's reflect extension of the
    // window is the file's; elsewhere the window holds the whole halo.
    PrefilterOptions opt;
    opt.degree = 3;
    opt.boundary = Boundary::Reflect;
    opt.threads = 1;  // a worker thread per view already
    r.coefficients =
        prefilter_region(window, {lo[0], lo[1], lo[2]}, {hi[0], hi[1], hi[2]}, opt, 0.0, h);
    r.samples = crop(window, lo, hi);
    r.exact = std::make_shared<const ArrayD>(ArrayD::from(r.samples));
    r.exact_coefficients = std::make_shared<ArrayD>(prefilter_region(
        ArrayD::from(window), {lo[0], lo[1], lo[2]}, {hi[0], hi[1], hi[2]}, opt, 0.0, h));
  } catch (const std::bad_alloc&) {
    throw Error("streaming the full resolution: out of memory for a box of " +
                mib_text(4.0 * static_cast<double>(r.read.voxels())));
  }
  r.ms = ms_since(start);
  return r;
}

DetailTextures upload_detail(DetailRegion region) {
  const auto start = std::chrono::steady_clock::now();
  DetailTextures t;
  t.box = region.box;
  t.samples_texture = volume_texture(region.box.dims());
  t.samples_texture.upload(GL_RED, GL_FLOAT, region.samples.data());
  t.coefficients_texture = volume_texture(region.box.dims());
  t.coefficients_texture.upload(GL_RED, GL_FLOAT, region.coefficients.data());
  gl::check_error("uploading a streamed box", __FILE__, __LINE__);
  t.samples = std::move(region.samples);
  t.coefficients = std::move(region.coefficients);
  t.exact = std::move(region.exact);
  t.exact_coefficients = std::move(region.exact_coefficients);
  t.compute_ms = region.ms;
  t.upload_ms = ms_since(start);
  return t;
}

SliceMapping detail_mapping(const DecodedVolume& v, const SliceMapping& m, const DetailBox& box) {
  SliceMapping out;
  for (int d = 0; d < 3; ++d) {
    const auto i = static_cast<std::size_t>(d);
    out.corner[d] =
        v.overview_origin[i] + v.overview_step[i] * m.corner[d] - static_cast<double>(box.lo[i]);
    out.right[d] = v.overview_step[i] * m.right[d];
    out.up[d] = v.overview_step[i] * m.up[d];
  }
  return out;
}

void VolumeStreamer::reset(std::shared_ptr<const FullResolutionSource> source) {
  for (View& w : views_) {
    if (w.pending.valid()) abandoned_.push_back(std::move(w.pending));
    w = View{};
  }
  source_ = std::move(source);
}

void VolumeStreamer::collect(std::size_t i, const DetailPlan& plan, bool wait) {
  View& w = views_[i];
  if (!w.pending.valid() || !(wait || ready(w.pending))) return;
  DetailRegion region;
  try {
    region = w.pending.get();
  } catch (const std::exception& e) {
    w.failed = plan.core;  // not asked for again while the view needs this core
    throw Error(e.what());
  }
  // A result that no longer covers its view is dropped; the view asks again.
  if (plan.stream && region.box.covers(plan.core)) {
    w.current.reset();  // the old textures go first
    w.current = upload_detail(std::move(region));
  }
}

void VolumeStreamer::update(const std::array<DetailPlan, 4>& plans, double time_s, bool now) {
  abandoned_.erase(std::remove_if(abandoned_.begin(), abandoned_.end(),
                                  [](std::future<DetailRegion>& f) { return ready(f); }),
                   abandoned_.end());
  if (!source_) return;
  std::string error;
  const auto guarded = [&error](auto&& f) {
    try {
      f();
    } catch (const std::exception& e) {
      if (error.empty()) error = e.what();
    }
  };
  for (std::size_t i = 0; i < views_.size(); ++i) {
    guarded([&] { collect(i, plans[i], now); });
    View& w = views_[i];
    const DetailPlan& plan = plans[i];
    if (!plan.stream) continue;
    if (plan.core != w.wanted) {
      w.wanted = plan.core;
      w.wanted_since = time_s;
    }
    if (w.current && w.current->box.covers(plan.core)) continue;
    if (w.failed && *w.failed == plan.core) continue;  // not again for the same box
    if (w.pending.valid() || !(now || time_s - w.wanted_since >= kDebounceS)) continue;
    const DetailBox box = plan.request.empty() ? plan.core : plan.request;
    std::shared_ptr<const FullResolutionSource> source = source_;
    w.pending =
        std::async(std::launch::async, [source, box] { return compute_detail(*source, box); });
  }
  if (now)
    for (std::size_t i = 0; i < views_.size(); ++i) guarded([&] { collect(i, plans[i], true); });
  if (!error.empty()) throw Error(error);
}

const DetailTextures* VolumeStreamer::detail(std::size_t i, const DetailPlan& plan) const {
  const View& w = views_[i];
  if (!source_ || !plan.stream || !w.current || !w.current->box.covers(plan.core)) return nullptr;
  return &*w.current;
}

bool VolumeStreamer::settled(const std::array<DetailPlan, 4>& plans) const {
  if (!source_) return true;
  for (std::size_t i = 0; i < views_.size(); ++i) {
    const View& w = views_[i];
    if (!plans[i].stream || detail(i, plans[i])) continue;
    if (w.failed && *w.failed == plans[i].core) continue;
    return false;
  }
  return true;
}

bool VolumeStreamer::busy() const {
  for (const View& w : views_)
    if (w.pending.valid()) return true;
  return false;
}

}  // namespace sv::viewer
