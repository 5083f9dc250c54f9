// 2-D images on the GPU as the fetch library expects them (shaders/bspline_fetch.glsl): float
// textures (R32F, RG32F, RGB32F or RGBA32F by channel count, swizzled so that shaders always
// read RGBA: grey -> (g, g, g, 1), grey+alpha -> (g, g, g, a), RGB -> (r, g, b, 1)),
// GL_MIRRORED_REPEAT addressing (the reflect boundary) and GL_LINEAR filtering, no mipmaps.
#pragma once

#include "splineview/array.h"
#include "splineview/gl/evaluator.h"
#include "splineview/gl/fetch_method.h"
#include "splineview/gl/objects.h"

namespace sv::gl {

// Uploads a 2-D array (dims (height, width), 1..4 channels; row 0 is the top row and becomes
// texture row 0). Throws sv::Error for other shapes or sizes beyond GL_MAX_TEXTURE_SIZE.
Texture upload_image(const ArrayF& image);

// The raw samples of an image and its B-spline coefficients (prefiltered with the reflect
// boundary), the two textures a view chooses from.
struct ImageTextures {
  Texture samples;
  Texture coefficients;
  // The weights of the Gaussian RBF (Fetch::Grbf; upload_image of sv::grbf_solve's w) and its
  // sigma and support radius; empty until a view asks for the GRBF.
  Texture grbf;
  GrbfFetchOptions grbf_fetch;

  const Texture& for_method(FetchMethod m) const {
    return uses_coefficients(m) ? coefficients : samples;
  }
};

}  // namespace sv::gl
