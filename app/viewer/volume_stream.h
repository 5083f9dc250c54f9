// Streaming the full-resolution region under each slice view of an overview (issue 15): a
// volume over the GPU texture limits opens as an overview (volume_document.h); a view zoomed in
// far enough that the file's own voxels would show more than the overview's gets its own pair of
// R32F 3-D textures (samples and cubic coefficients) holding the file's full-resolution box under
// that view, and draws from them exactly as a full-resolution document would.
//
// - Source (FullResolutionSource): the file's memory map (sv::open_mapped: .npy, raw NRRD/.nhdr,
//   uncompressed NIfTI, headerless raw; read slice by slice under the map's SIGBUS guard) when
//   the file can be mapped, else the full-resolution float samples decode_volume read to compute
//   the overview (kept in RAM).
// - Box (plan_detail): the view's pixel grid (slice_grid) has its four corner pixel centres
//   mapped to the file's index (DecodedVolume::file_index), their bounding box widened by 2
//   samples (the cubic's support) and clamped to the file: the "core" box the view needs. A view
//   streams when its pixels are finer than the overview's voxels and the core's textures (8 bytes a
//   voxel) fit VolumeLimits::detail_budget / 4 (and GL_MAX_3D_TEXTURE_SIZE); else it shows the
//   overview and the plan says why. A job asks for the core plus kDetailMargin voxels per side
//   where that still fits (DetailPlan::request), so that scrolling a few slices or a short pan
//   reuses the box.
// - Coefficients (compute_detail): the box plus the prefilter halo sv::prefilter_halo<float>(3,
//   3) per side (clamped to the file) is read, and sv::prefilter_region gives the box's
//   coefficients with the reflect boundary at the file's real faces: within chunk_bound(3, 3,
//   halo) times the data range (about float epsilon / 2) of the whole-volume prefilter's. The
//   same region is prefiltered in double too, as the reference of the view's accuracy overlay
//   (VolumeMode keeps a meter per streamed view; docs/ACCURACY.md, "The volume mode's overlay").
// - The slice pass draws a streamed view with the overview's map moved to the box's index
//   (detail_mapping: file index minus the box's origin).
//
// VolumeStreamer keeps the per-view bookkeeping of VolumeMode: one job at most per view on a
// worker thread (std::async, no GL), started once the view's box has stayed the same for
// kDebounceS; results uploaded on the GL thread; a view keeps showing its previous box while it
// still covers the view (else the overview) until the new one arrives.
#pragma once

#include <array>
#include <cstddef>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "slice_geometry.h"
#include "slice_pass.h"
#include "splineview/array.h"
#include "splineview/gl/evaluator.h"
#include "splineview/gl/objects.h"
#include "splineview/mapped.h"
#include "volume_document.h"

namespace sv::viewer {

// A box of the file's voxels: [lo, hi) per axis, array order (z, y, x).
struct DetailBox {
  std::array<std::size_t, 3> lo{0, 0, 0}, hi{0, 0, 0};
  std::array<std::size_t, 3> dims() const { return {hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]}; }
  std::size_t voxels() const { return dims()[0] * dims()[1] * dims()[2]; }
  bool empty() const { return !(lo[0] < hi[0] && lo[1] < hi[1] && lo[2] < hi[2]); }
  // `inner` lies within this box.
  bool covers(const DetailBox& inner) const;
  bool operator==(const DetailBox& o) const { return lo == o.lo && hi == o.hi; }
  bool operator!=(const DetailBox& o) const { return !(*this == o); }
};

// The file's values at full resolution, readable from any thread.
class FullResolutionSource {
 public:
  // The file's map (its dims must be the volume's, one channel).
  explicit FullResolutionSource(MappedVolume map);
  // The full-resolution samples in RAM.
  explicit FullResolutionSource(ArrayF samples);

  const std::array<std::size_t, 3>& dims() const { return dims_; }
  bool mapped() const { return map_ != nullptr; }
  // "memory map of /path/file.npy (float32 little-endian at byte 128 of ...)" or
  // "the full-resolution samples in RAM (7.8 MiB, the file cannot be mapped: ...)".
  const std::string& description() const { return description_; }
  void set_description(std::string d) { description_ = std::move(d); }
  // The values of `box` (dims box.dims(), C order); throws sv::Error naming the file when the
  // map cannot be read (a file truncated meanwhile).
  ArrayF read(const DetailBox& box) const;

 private:
  std::unique_ptr<MappedVolume> map_;
  ArrayF samples_;
  std::array<std::size_t, 3> dims_{1, 1, 1};
  std::string description_;
};

// The prefilter halo of the streamed boxes: sv::prefilter_halo<float>(3, 3).
constexpr std::size_t kDetailMargin = 8;
std::size_t detail_halo();

// What a view of an overview shows.
struct DetailPlan {
  bool stream = false;  // the view streams `core`
  DetailBox core;       // the file's voxels the view's pixels need (empty: none of the file)
  // What a job reads for it: the core plus kDetailMargin voxels per side (clamped to the file)
  // where that still fits the budget, so that a few slices of scrolling or a short pan need no
  // new box; else the core.
  DetailBox request;
  std::string why;     // when not streamed, a few words for the view ("zoom in to stream")
  std::string detail;  // and the figures behind them, for the panel and the report
};
// The plan for the view whose pixel grid (in the overview's index, slice_grid) is `grid`.
// Never streams a full-resolution document (overview_level 0).
DetailPlan plan_detail(const DecodedVolume& v, const gl::GridMapping& grid,
                       const VolumeLimits& limits);

// The result of a streaming job (no GL): the core's samples and its coefficients (cubic,
// reflect at the file's faces, prefilter_region with detail_halo()).
struct DetailRegion {
  DetailBox box;   // what the job was asked for (a plan's request: its core and a margin)
  DetailBox read;  // the box plus the halo, clamped to the file: what was read
  ArrayF samples;
  ArrayF coefficients;
  // For the accuracy overlay of the streamed view: the box's values in double (the file's values
  // as read) and its coefficients computed in double from the same read region with the same
  // halo (prefilter_region<double>): the reference of what the view draws.
  std::shared_ptr<const ArrayD> exact;
  std::shared_ptr<ArrayD> exact_coefficients;
  double ms = 0;  // reading and prefiltering
};
DetailRegion compute_detail(const FullResolutionSource& source, const DetailBox& box);

// A streamed box on the GPU (R32F, GL_LINEAR, GL_MIRRORED_REPEAT, as the document's textures),
// with its samples and coefficients kept on the host for the readout (and the tests).
struct DetailTextures {
  DetailBox box;  // the file's voxels the textures hold
  gl::Texture samples_texture, coefficients_texture;
  ArrayF samples, coefficients;
  std::shared_ptr<const ArrayD> exact;  // DetailRegion's, for the accuracy overlay
  std::shared_ptr<ArrayD> exact_coefficients;
  double compute_ms = 0, upload_ms = 0;
  VolumeTextures textures() const { return {&samples_texture, &coefficients_texture}; }
};
DetailTextures upload_detail(DetailRegion region);

// The slice map `m` (the overview's index, slice_geometry.h) moved to the index of `box`
// (file index minus box.lo).
SliceMapping detail_mapping(const DecodedVolume& v, const SliceMapping& m, const DetailBox& box);

// The streaming state of the four views (by plane index). GL thread, except the jobs.
class VolumeStreamer {
 public:
  static constexpr double kDebounceS = 0.25;

  // A new document: forgets the boxes (running jobs finish on their own and are dropped).
  // `source` null: nothing streams (a full-resolution document or a generated volume).
  void reset(std::shared_ptr<const FullResolutionSource> source);
  // Per frame, with the current views' plans: starts a job for a view whose box has been the
  // same for kDebounceS (at once with `now`, which also waits for the jobs and uploads them
  // before returning), uploads finished jobs whose core still covers their view.
  // Throws sv::Error from a job (the view then shows the overview).
  void update(const std::array<DetailPlan, 4>& plans, double time_s, bool now);

  // The textures view i draws from for `plan` (a box that covers plan.core), or nullptr.
  const DetailTextures* detail(std::size_t i, const DetailPlan& plan) const;
  // Nothing to stream for these plans that is not on the GPU yet.
  bool settled(const std::array<DetailPlan, 4>& plans) const;
  bool busy() const;  // a job runs
  const std::shared_ptr<const FullResolutionSource>& source() const { return source_; }

 private:
  struct View {
    std::optional<DetailTextures> current;
    std::future<DetailRegion> pending;
    std::optional<DetailBox> failed;  // the box whose job threw: not asked for again
    DetailBox wanted;                 // the plan's core last seen
    double wanted_since = 0;          // when it became that
  };
  void collect(std::size_t i, const DetailPlan& plan, bool wait);

  std::shared_ptr<const FullResolutionSource> source_;
  std::array<View, 4> views_;
  std::vector<std::future<DetailRegion>> abandoned_;  // jobs of a previous document
};

}  // namespace sv::viewer
