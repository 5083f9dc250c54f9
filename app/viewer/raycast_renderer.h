// The ray-cast 3-D view's GL engine: compiles shaders/raycast.comp per fetch and mode, builds the
// empty-space grids of a volume's two textures (shaders/raycast_cells.comp) and renders one
// pane's rays into its own colour (RGBA8) and data (RGBA32F) textures, or every n-th ray into a
// small image that is read back for the accuracy meter. The rays and rules are those of
// raycast_reference.h. No UI: the view (raycast_view.h) and the benchmark drive it.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include <glm/glm.hpp>

#include "display_window.h"
#include "raycast_reference.h"
#include "splineview/geometry.h"
#include "splineview/gl/evaluator.h"
#include "splineview/gl/objects.h"
#include "splineview/gl/program.h"

namespace sv::viewer {

// The methods the 3-D view offers: trilinear (hardware, on the samples), cubic on the fly and
// cubic precise (on the coefficients).
constexpr std::array<gl::Fetch, 3> kRayMethods = {gl::Fetch::CubicPrecise, gl::Fetch::CubicOtf,
                                                  gl::Fetch::Linear};
// Every method a pane may take: the three above and the unfiltered cubic B-spline on the samples
// (approximating, not interpolating: the smoothest surface, shown for comparison).
constexpr std::array<gl::Fetch, 4> kRayMethodChoices = {
    gl::Fetch::CubicPrecise, gl::Fetch::CubicOtf, gl::Fetch::Linear, gl::Fetch::CubicUnfiltered};
// "cubic precise", "cubic otf", "trilinear", "cubic unfiltered".
const char* ray_method_label(gl::Fetch f);
bool is_ray_method(gl::Fetch f);

struct RaycastVolume {
  const gl::Texture* samples = nullptr;       // R32F 3-D, GL_LINEAR, GL_MIRRORED_REPEAT
  const gl::Texture* coefficients = nullptr;  // the cubic B-spline coefficients, the same
  std::array<std::size_t, 3> dims{1, 1, 1};   // (z, y, x)
  Geometry geometry;                          // index -> patient mm
};

// A pane's output textures (resized on demand) and a framebuffer to blit the colour from.
struct RayTarget {
  gl::Texture colour;  // RGBA8
  gl::Texture data;    // RGBA32F, see shaders/raycast.comp
  gl::Framebuffer framebuffer;
  int width = 0, height = 0;
  void ensure(int w, int h);
};

struct RayDrawOptions {
  bool skip = true;  // empty-space skipping over 8^3 cells (changes no result, only the time)
  // Also exact, each changing only the time (shaders/raycast.comp): the precise cubic checks
  // every sample against the Bezier range of its unit cube before reading its 64 taps, and a
  // cubic MIP first visits the segment where a trilinear march of the samples peaks. Both need
  // `skip`; they are here to be measured one by one.
  bool fine_bounds = true;
  bool mip_first_visit = true;
  bool precise_gather = true;  // precise taps by textureGather from a 2-D array copy (same sums)
  glm::vec3 background{0.08f, 0.08f, 0.09f};
};

class RaycastRenderer {
 public:
  // Needs a current GL 4.5 context; compiles the programs on first use (sv::Error naming the
  // shader file and line on failure).
  RaycastRenderer();

  // A new volume: keeps pointers to its textures (which must outlive their use here), builds the
  // two empty-space grids and the 2-D array copy of the coefficients. Throws sv::Error for a
  // missing texture.
  void set_volume(const RaycastVolume& v);
  bool has_volume() const { return volume_.samples != nullptr; }
  // The empty-space grid of the samples or the coefficients (raycast_cells.comp: RG32F, the
  // smallest and largest texel a sample in each 8^3 cell can reach), for tests.
  const gl::Texture& cells(bool coefficients) const {
    return coefficients ? cells_coefficients_ : cells_samples_;
  }
  // The precise cubic's grids (raycast_cells.comp, RC_BOUNDS, RC_BOUNDS_CELLS): the largest
  // Bezier control point of the spline per unit cube (R32F, (N + 1)^3: texel j + 1 holds cube
  // j = floor(p), j from -1), and per kPreciseCell^3 cell (RG32F) the coefficients' smallest and
  // the largest control point of the cubes j = kPreciseCell c - 1 .. kPreciseCell c +
  // kPreciseCell - 1, for tests.
  static constexpr int kPreciseCell = 4;  // the precise cubic's cells: kPreciseCell^3 voxels
  const gl::Texture& precise_fine() const { return fine_precise_; }
  const gl::Texture& precise_cells() const { return cells_precise_; }
  const RaycastVolume& volume() const { return volume_; }

  // Every ray of `frame` into `target` (sized to the frame). GL state left as found.
  void render(gl::Fetch method, const RayFrame& frame, const RaySettings& settings,
              const WindowLevel& wl, const RayDrawOptions& opt, RayTarget& target);
  // Every stride-th ray of `frame` (pixels (c * stride + offset, r * stride + offset)), read back:
  // cols x rows RGBA values (the data image), row r = pixel row r * stride + offset from the
  // bottom. Blocks (glGetTextureImage).
  std::vector<glm::vec4> measure(gl::Fetch method, const RayFrame& frame,
                                 const RaySettings& settings, const WindowLevel& wl,
                                 const RayDrawOptions& opt, int stride, int offset, int* cols,
                                 int* rows);

 private:
  gl::Program& program(gl::Fetch method, RayMode mode, bool gather);
  void dispatch(gl::Fetch method, const RayFrame& frame, const RaySettings& settings,
                const WindowLevel& wl, const RayDrawOptions& opt, int stride, int offset,
                const gl::Texture& colour, const gl::Texture& data);

  std::map<std::tuple<int, int, bool>, gl::Program> programs_;
  gl::Program cells_program_;
  RaycastVolume volume_;
  gl::Texture cells_samples_, cells_coefficients_;  // RG32F
  gl::Program fine_program_, precise_cells_program_;
  gl::Texture fine_precise_, cells_precise_;  // R32F / RG32F, the precise cubic's Bezier ranges
  gl::detail::Handle<gl::detail::TextureTraits> layers_;  // 2-D array copy of the coefficients
  gl::Texture tf_texture_;                                // RGBA32F, kTfTexels
  std::vector<glm::vec4> tf_uploaded_;
  RayTarget measure_target_;
};

}  // namespace sv::viewer
