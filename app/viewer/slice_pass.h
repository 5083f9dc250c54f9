// The volume slices mode's GL pass: draws one planar slice of a volume (shaders/slice.frag)
// into a viewport with any of the seven reconstruction methods of the 2-D view (nearest, linear
// and the unfiltered cubic on the samples; the lookup-table, on-the-fly and precise flavours of
// the prefiltered cubic on the coefficients; the Gaussian RBF on its weights), grey through
// window/level, a checkerboard outside the volume.
#pragma once

#include <array>
#include <map>
#include <string>

#include "display_window.h"
#include "method_pass.h"
#include "slice_geometry.h"
#include "splineview/gl/evaluator.h"
#include "splineview/gl/objects.h"
#include "splineview/gl/program.h"
#include "splineview/gl/view_pass.h"

namespace sv::viewer {

// Window/level (WindowLevel, display_window.h) in the volume's values.
// The grey of `value` as the pass computes it (low and 1 / window rounded to float, as the
// shader receives them).
float window_level_grey(float value, const WindowLevel& wl);

// The pixel grid of a slice view in `cell` (integer corners, framebuffer pixels) as slice.frag
// samples it, for the accuracy meter: pixel (row r from the top, column c) has its centre at
// the fragment c + 0.5 right of and cell.height - r - 0.5 above the viewport's bottom-left
// corner, so it samples mapping.corner + (c + 0.5) * right + (height - r - 0.5) * up
// (SliceGeometry::mapping): origin = corner + 0.5 * right + (height - 0.5) * up, step_col =
// right, step_row = -up, in array axis order (z, y, x), voxel units. The shader evaluates the
// same affine map in float (uniforms rounded to float), the meter in double rounded once.
gl::GridMapping slice_grid(const SliceGeometry& geometry, Plane plane, const Rect& cell);

// The two R32F 3-D textures of a volume (GL_LINEAR, GL_MIRRORED_REPEAT: the reflect boundary).
struct VolumeTextures {
  const gl::Texture* samples = nullptr;
  const gl::Texture* coefficients = nullptr;
};
// The Gaussian RBF's weights of a volume (R32F 3-D, read with texelFetch) with their sigma and
// support radius (gl::Fetch::Grbf draws nothing without them).
struct VolumeGrbf {
  const gl::Texture* weights = nullptr;
  gl::GrbfFetchOptions fetch;
};

class SlicePass {
 public:
  // Compiles slice.frag once per method (#define as in MethodPass) and the lookup table; needs
  // a current GL 4.5 context. Throws sv::Error naming the shader file and line on a compile
  // error.
  SlicePass();

  // Draws the slice `mapping` (slice_geometry.h; its corner at the viewport's bottom-left
  // corner) into `viewport` of the bound draw framebuffer. Leaves the GL state as it was,
  // texture bindings of units 0 and 1 included.
  // `quantity`: a derivative quantity instead of the value (compiled on first use), derivatives
  // along the volume's array axes times `axis_scale` (texture order x, y, z; 1 / spacing: per
  // mm); a method that cannot show it (gl::quantity_problem) draws nothing and returns false.
  // gl::Fetch::Grbf draws from `grbf` (nothing, returning false, without weights).
  bool draw(const VolumeTextures& volume, gl::Fetch method, const SliceMapping& mapping,
            const gl::Viewport& viewport, const WindowLevel& wl, float checker_px,
            const QuantityView& quantity = {}, const glm::vec3& axis_scale = glm::vec3(1.0f),
            const VolumeGrbf& grbf = {});

 private:
  gl::Program& program(gl::Fetch method, const gl::Quantity& q);

  std::array<gl::Program, kViewMethods.size()> programs_;
  std::map<std::string, gl::Program> quantity_programs_;  // by "method/quantity"
  gl::Texture lut_;  // the Sigg-Hadwiger table, default layout (gl::LutOptions{})
  gl::VertexArray empty_vao_;
};

}  // namespace sv::viewer
