// The viewer's image pass for the reconstruction methods of the GLSL fetch library
// (shaders/bspline_fetch.glsl through shaders/view.frag): nearest, linear and cubic B-spline
// without prefilter on the raw samples; the lookup-table, on-the-fly and precise flavours of
// the prefiltered cubic on the coefficients; the Gaussian RBF (shaders/grbf_fetch.glsl) on its
// weights (the zoom and volume modes). gl::ViewPass knows only the first four methods of
// gl::FetchMethod; the viewer compares all the flavours the evaluator has (gl::Fetch), so it
// compiles the same shader files with each flavour's #define here.
#pragma once

#include <array>
#include <map>
#include <string>

#include <glm/glm.hpp>

#include "display_window.h"
#include "splineview/gl/evaluator.h"
#include "splineview/gl/image_textures.h"
#include "splineview/gl/objects.h"
#include "splineview/gl/program.h"
#include "splineview/gl/view_pass.h"
#include "view_transform.h"

namespace sv::viewer {

constexpr std::array<gl::Fetch, 6> kMethods = {gl::Fetch::Nearest,         gl::Fetch::Linear,
                                               gl::Fetch::CubicUnfiltered, gl::Fetch::CubicLut,
                                               gl::Fetch::CubicOtf,        gl::Fetch::CubicPrecise};
// The methods of the zoom and volume modes: the six above and the Gaussian RBF (issue 18), whose
// views draw from the mode's GRBF weights (solved per sigma; gl::ImageTextures::grbf, the volume
// document's weights) rather than from the samples or the coefficients. Key 7.
constexpr std::array<gl::Fetch, 7> kViewMethods = {
    gl::Fetch::Nearest,  gl::Fetch::Linear,   gl::Fetch::CubicUnfiltered,
    gl::Fetch::CubicLut, gl::Fetch::CubicOtf, gl::Fetch::CubicPrecise,
    gl::Fetch::Grbf};

// Names shown to users ("prefiltered cubic, on the fly", ...) and a short one for view labels.
const char* method_display_name(gl::Fetch f);
const char* method_short_name(gl::Fetch f);
// Command-line names are gl::fetch_name's ("nearest", ..., "otf", "precise"); "cubic" is
// accepted too, as the on-the-fly flavour (the viewer's name for it before the flavours).
// Throws sv::Error listing the valid names.
gl::Fetch parse_method(const std::string& name);
// The zoom and volume modes' names: parse_method's and "grbf".
gl::Fetch parse_view_method(const std::string& name);
// The B-spline degree a method reconstructs with (0 nearest, 1 linear, 3 cubic), for the CPU
// reference at the cursor.
int method_degree(gl::Fetch f);

// The GL viewport (origin bottom left) of a rectangle in window coordinates (origin top left,
// integer corners) of a framebuffer `fb_height` pixels high.
gl::Viewport to_viewport(const Rect& r, int fb_height);
// A cell in its own coordinates: the frame the views' shared transform is expressed in.
inline Rect local(const Rect& cell) {
  return {0.0, 0.0, cell.width, cell.height};
}

// Index of a method in kViewMethods (per-method program arrays; the first six are kMethods).
std::size_t method_index(gl::Fetch f);
// The bspline_fetch.glsl variant #define of a method, for the viewer's passes (2-D views and
// 3-D slices): the unfiltered cubic is the on-the-fly fetch on the raw samples; precise reads
// its taps with texelFetch (the gather form needs single-channel or 2-D array copies).
const char* method_fetch_define(gl::Fetch f);
// The Sigg-Hadwiger lookup table as the evaluator uploads it (gl::LutOptions{}, already
// rounded to halves, so the RGB16F upload stores exactly these values).
gl::Texture make_lut_texture();

// What a derivative view shows and how (shaders/bspline_quantity.glsl's sv_quantity_colour): the
// quantity (the value: the ordinary view through the display window), and its display range:
// signed quantities over [-range, range] through a diverging map centred at 0 (blue, light grey,
// red for one-channel data; per-channel grey 0.5 + q / (2 range) for colour images),
// non-negative ones (gradient magnitude) over [0, range] as grey.
struct QuantityView {
  gl::Quantity quantity{};
  double range = 1.0;  // > 0
  bool colour = true;  // the diverging colour map (one-channel data)
  bool is_value() const { return quantity.kind == gl::QuantityKind::Value; }
};
// The colour (RGB in [0, 1]) the shader gives a one-channel quantity q under `view` (for the
// legend and the tests).
glm::vec3 quantity_colour(double q, const QuantityView& view);
// The #defines of a program: the method's fetch variant plus the quantity's.
ShaderDefines view_defines(gl::Fetch method, const gl::Quantity& q, std::size_t rank);

class MethodPass {
 public:
  // Compiles the seven programs and the lookup table; needs a current GL 4.5 context. Throws
  // sv::Error naming the shader file and line on a compile error.
  MethodPass();

  // Draws `images` (samples or coefficients, as the method needs) into `viewport` of the bound
  // draw framebuffer; `frag_to_image` as for gl::ViewPass::draw; `display` maps the
  // reconstructed colour channels to grey before the clamp (the identity shows [0, 1]). Leaves
  // the GL state as it was.
  // `quantity`: a derivative quantity instead of the value (its program is compiled on first
  // use); a method that cannot show it (gl::quantity_problem) draws nothing and returns false.
  // gl::Fetch::Grbf draws from images.grbf with images.grbf_fetch; without weights (not solved
  // yet, or refused) it draws nothing and returns false.
  bool draw(const gl::ImageTextures& images, gl::Fetch method, const glm::mat3& frag_to_image,
            const gl::Viewport& viewport, float checker_px, const DisplayMap& display = {},
            const QuantityView& quantity = {});

 private:
  gl::Program& program(gl::Fetch method, const gl::Quantity& q);

  std::array<gl::Program, kViewMethods.size()> programs_;
  std::map<std::string, gl::Program> quantity_programs_;  // by "method/quantity"
  gl::Texture lut_;  // the Sigg-Hadwiger table, default layout (gl::LutOptions{})
  gl::VertexArray empty_vao_;
};

}  // namespace sv::viewer
