// The volume the slices mode shows: its samples (raw values as float, one channel), spacing,
// value statistics for the default window/level, and two GL 3-D R32F textures: the samples and
// their cubic B-spline coefficients (reflect boundary, matching the textures' mirrored-repeat
// addressing), prefiltered straight into the texture through sv::gl::TextureInterop: by CUDA
// when a device runs the GL context, else on the CPU with an upload (recorded, with the
// interop's sentence). The coefficients are read back once, when the volume is small enough,
// so that the readout under the cursor evaluates the CPU reference on what the views sample.
//
// The accuracy overlay (accuracy.h) needs three arrays on the host: the values in double as
// read (the reference's input), and the float samples and coefficients the textures hold. The
// doubles are kept from the file when the volume is small enough (limits.accuracy_budget:
// 128 MiB of doubles, 16 Mi voxels, e.g. 256^3; the MRI head of 1 Mi voxels takes 7.8 MiB), the
// floats are the decoded samples and the read-back coefficients (limits.readout_budget). A
// larger volume is shown without the overlay, and accuracy_note says why in one sentence (a
// 512^3 volume would need 1 GiB of doubles, and the reference's double coefficients as much
// again).
//
// Loading comes in two steps so that the UI never waits for a file: decode_volume() reads and
// checks the file and touches no GL (run it on a worker thread); upload_volume() creates the
// textures and prefilters (on the GL thread). Both throw sv::Error with one sentence naming the
// file (or the generated volume) and the problem: unreadable or unsupported files, colour or
// non-3-D data (refused: the mode shows scalar volumes; convert colour volumes to one channel
// first), NaN or infinite values, volumes over GL_MAX_3D_TEXTURE_SIZE or the texture memory budget,
// GL out of memory.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "accuracy.h"
#include "slice_geometry.h"
#include "slice_pass.h"
#include "splineview/array.h"
#include "splineview/gl/objects.h"
#include "splineview/io.h"

namespace sv::viewer {

class FullResolutionSource;  // volume_stream.h

// What a volume may take.
struct VolumeLimits {
  // GL_MAX_3D_TEXTURE_SIZE of the context; 0: not checked here (the texture creation still
  // refuses). query_volume_limits() fills it on the GL thread.
  int max_texture_side = 0;
  // Bytes of the two R32F textures together (samples + coefficients).
  std::size_t texture_budget = std::size_t{2} << 30;
  // Coefficients are read back for the CPU readout up to this many bytes of floats.
  std::size_t readout_budget = std::size_t{64} << 20;
  // The values in double are kept for the accuracy overlay up to this many bytes (its
  // reference prefilters a copy of them, as much again, when a cubic view is measured).
  std::size_t accuracy_budget = std::size_t{128} << 20;
  // Bytes of the streamed full-resolution boxes' textures of an overview's four views together
  // (volume_stream.h; each view's box gets a quarter); 0: no streaming.
  std::size_t detail_budget = std::size_t{512} << 20;
};
// The defaults with GL_MAX_3D_TEXTURE_SIZE of the current context.
VolumeLimits query_volume_limits();

// The result of the decode step (no GL).
struct DecodedVolume {
  std::string path;  // the file; empty for generated volumes
  std::string name;  // "mri_t1_head.nrrd", "Marschner-Lobb 41^3"
  ArrayF samples;    // dims (z, y, x), 1 channel, the stored values (not normalised)
  // The values in double as read (generated volumes: the float samples), the accuracy
  // reference's input; null over limits.accuracy_budget (accuracy_note says why).
  std::shared_ptr<const ArrayD> exact;
  std::string accuracy_note;
  // Generated from a function (Marschner-Lobb): that function, for the overlay's ground truth.
  AnalyticTruth truth;
  std::array<std::size_t, 3> dims{1, 1, 1};  // (z, y, x), kept when samples are released
  glm::dvec3 spacing{1.0, 1.0, 1.0};         // mm per voxel, array order (z, y, x)
  // Where the voxels sit in the patient frame (RAS+ mm, splineview/geometry.h): the file's own
  // orientation; diag(spacing), unoriented, when it states none (and for generated volumes).
  Geometry geometry;
  DType dtype = DType::F32;     // what the file stored (NRRD/NIfTI int16 reads as F32)
  bool integer_valued = false;  // every value is an integer (8/16-bit and int16 data)
  double min = 0, max = 0;      // value range
  // 1st and 99th percentiles (of at most 4M evenly spread voxels); an overview of an integer
  // file: the file's own (so the default window is the full-resolution document's).
  double p01 = 0, p99 = 0;
  // The default window: integer data [p01, p99] (so a few bright voxels do not wash the image
  // out), float data [min, max]; a constant volume gets a window of 1 around its value.
  WindowLevel default_window;
  // "128 x 128 x 62 voxels (x, y, z), uint8, 2 x 2 x 3 mm, orientation LIP (nrrd space ...)"
  std::string description;
  // A file over the texture limits (GL_MAX_3D_TEXTURE_SIZE, limits.texture_budget) is shown as
  // an overview: its least-squares cubic B-spline reduction (sv::reduce, reflect, pixel-edge
  // grid: anti-aliased, the volume's outer edges kept) by 2^overview_level along every axis
  // longer than one voxel, the smallest level that fits; dims, spacing and geometry are the
  // overview's (each overview voxel placed exactly where the reduction puts it in the patient
  // frame), full_dims the file's. 0: the file at full resolution (full_dims == dims).
  int overview_level = 0;
  std::array<std::size_t, 3> full_dims{1, 1, 1};
  // The file's index of overview index q per axis (z, y, x): overview_origin + overview_step q
  // (0 and 1 at full resolution).
  std::array<double, 3> overview_origin{0, 0, 0}, overview_step{1, 1, 1};
  std::array<double, 3> file_index(const std::array<double, 3>& q) const {
    return {overview_origin[0] + overview_step[0] * q[0],
            overview_origin[1] + overview_step[1] * q[1],
            overview_origin[2] + overview_step[2] * q[2]};
  }
  // One sentence naming the file, the full size and the overview's factor; empty at full
  // resolution. The mode shows it on the views.
  std::string overview_note;
  // Where an overview's views stream the file's full-resolution values from (volume_stream.h):
  // the file's memory map where it can be mapped, else the full-resolution float samples read
  // to compute the overview, kept in RAM; null at full resolution, for generated volumes and
  // with limits.detail_budget 0.
  std::shared_ptr<const FullResolutionSource> full_resolution;
  bool overview_of_integers = false;  // an overview of integer-valued data (its window rule)
  // The overview was built from the file's memory map slab by slab (the volume never in RAM);
  // false: from the values read by the loader (files that cannot be mapped: compressed ones).
  bool overview_streamed = false;
  double load_ms = 0;  // reading, decoding and the statistics
};

// Reads a NRRD, NIfTI (.nii, .nii.gz) or .npy volume (sv::load_any), with the geometry the file
// states (Loaded::geometry); with `raw`, a path without one of those extensions is read as
// headerless raw data per the spec. Checks the shape (3-D, one channel); a volume over `limits`
// becomes an overview (DecodedVolume::overview_level). No GL.
DecodedVolume decode_volume(const std::string& path, const std::optional<RawSpec>& raw,
                            const VolumeLimits& limits);
// The Marschner-Lobb test signal (sv::marschner_lobb: f_M = 6, alpha = 0.25, values in [0, 1])
// on an n^3 grid, spacing 1 mm. The mode uses n = 41, the resolution of Marschner and Lobb's
// study, where the signal's ripples sit near the Nyquist limit and the reconstruction filters
// differ most visibly.
constexpr std::size_t kMarschnerLobbSize = 41;
DecodedVolume decode_marschner_lobb(std::size_t n, const VolumeLimits& limits);
// A volume from samples already in memory (tests, generated data): statistics and checks as
// for a file; `name` names it in messages. Unoriented (geometry diag(spacing)); a caller may set
// `geometry` afterwards.
// overview_of_integers: the samples are an overview of integer-valued data (the default window
// then comes from the percentiles, as the file's would).
DecodedVolume decode_samples(ArrayF samples, const glm::dvec3& spacing, const std::string& name,
                             DType dtype, const VolumeLimits& limits,
                             bool overview_of_integers = false);

// The volume on the GPU (the upload step's result).
struct VolumeDocument {
  DecodedVolume volume;
  gl::Texture samples_texture;       // R32F, GL_LINEAR, GL_MIRRORED_REPEAT
  gl::Texture coefficients_texture;  // the same for the cubic coefficients
  ArrayF coefficients;               // read back; empty when over the readout budget
  std::string readout_note;          // why there is no CPU readout (empty when there is)
  bool prefilter_on_gpu = false;     // the interop took the CUDA path
  std::string prefilter_notice;      // the interop's fallback sentence; empty on the CUDA path
  double upload_ms = 0;              // the samples texture
  double prefilter_ms = 0;           // the interop call: CUDA prefilter, or CPU prefilter + upload
  double readback_ms = 0;            // the coefficients, for the readout

  VolumeTextures textures() const { return {&samples_texture, &coefficients_texture}; }
  bool has_readout() const { return !coefficients.empty(); }
  // What the accuracy overlay needs is here (exact values, samples, coefficients); else
  // volume.accuracy_note says why not.
  bool has_accuracy_input() const {
    return volume.exact && has_readout() && !volume.samples.empty();
  }
};

// Creates the textures, uploads the samples and prefilters into the coefficient texture; reads
// the coefficients back when they fit limits.readout_budget (else releases the samples too, and
// says why in readout_note). Needs the current GL context. `allow_cuda` = false forces the
// interop's CPU path.
VolumeDocument upload_volume(DecodedVolume volume, const VolumeLimits& limits,
                             bool allow_cuda = true);

// An R32F 3-D texture of `dims` (z, y, x) with the documents' parameters: GL_LINEAR,
// GL_MIRRORED_REPEAT (the reflect boundary of the prefilter).
gl::Texture volume_texture(const std::array<std::size_t, 3>& dims);

// The overview level a volume of `dims` (z, y, x) needs under `limits`: the smallest k >= 0 such
// that the reduction by 2^k (round(n / 2^k) voxels per axis longer than one, halves to even, as
// sv::reduce) fits GL_MAX_3D_TEXTURE_SIZE and the texture budget; -1 when none does.
int overview_level_for(const std::array<std::size_t, 3>& dims, const VolumeLimits& limits);

// The bundled volume (assets/mri_t1_head.nrrd), looked up like default_image_path(): next to
// an installed executable, then in the source tree.
std::string default_volume_path();

}  // namespace sv::viewer
