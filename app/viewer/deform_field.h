// The deform mode's engine (GL, no window): a cubic B-spline FFD control grid (sv::ffd_field's
// convention, lib/include/splineview/ffd.h) evaluated on the GL side by three kernels written
// in GLSL that mirror the CUDA ones (cuda/include/splineview/cuda_ffd.h; shaders/ffd_field.comp):
//   texture    texture hardware: the grid in an RGBA32F texture with GL_LINEAR, the cubic by the
//              Sigg-Hadwiger trick (2^rank filtered fetches per voxel): the filter unit's
//              fractional weights (8 bits on NVIDIA) limit its accuracy, the seams of "Accuracy
//              of GPU-based B-spline evaluation" (Ruijters et al.), Figure 1
//   per-voxel  per voxel, exact float weights, texelFetch of the 4^rank control points
//   tile       thread per tile ("Accelerating B-spline Interpolation on GPUs", Zachariadis et
//              al.): one compute invocation per tile of delta^rank voxels, the control points in
//              registers, weight rows computed in double on the host
// Each kernel writes its field (RGBA32F, u in texture axis order x, y[, z], voxels), its det J
// (R32F, the same kernel with derivative weights) and the warped image (RGBA32F:
// moving(x + u(x)), the prefiltered cubic with the reflect boundary, as sv::warp) into textures
// of its own. Tests and the mode read them back. Needs a current GL 4.5 context.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "splineview/array.h"
#include "splineview/gl/objects.h"
#include "splineview/gl/program.h"

namespace sv::viewer {

enum class FfdGlKernel { Texture, PerVoxel, Tile };
constexpr std::array<FfdGlKernel, 3> kFfdGlKernels = {FfdGlKernel::Texture, FfdGlKernel::PerVoxel,
                                                      FfdGlKernel::Tile};
// "texture", "per-voxel", "tile" (command line, --report).
const char* ffd_gl_kernel_name(FfdGlKernel k);
// "texture hardware", "per-voxel precise", "thread per tile" (the views' labels).
const char* ffd_gl_kernel_label(FfdGlKernel k);
// Throws sv::Error naming the value and the valid names.
FfdGlKernel parse_ffd_gl_kernel(const std::string& name);

// The bundled synthetic fields, smooth by construction (cubic B-splines on a coarse grid):
//   none           zero displacement (the image as it is)
//   smooth-random  every control point displaced by a uniform random vector of at most
//                  amplitude x delta per axis (a fixed seed: the same field every time); up to
//                  amplitude 0.25 it cannot fold (|du_a/dx_b| <= 2 x 0.25)
//   swirl          a rotation about the image centre by amplitude x 90 degrees at the centre,
//                  falling off smoothly to none at the inscribed circle's rim (in 3-D about the
//                  z axis, in every slice, with a z falloff)
//   folding        the two control columns either side of the middle swapped over along x by
//                  amplitude x 1.5 delta each, over the middle rows: at amplitude 1 the mapping
//                  folds over (det J < 0) between them, so the red overlay has something to
//                  show; below amplitude 0.5 it does not fold
enum class FfdPreset { None, SmoothRandom, Swirl, Folding };
const char* ffd_preset_name(FfdPreset p);
FfdPreset parse_ffd_preset(const std::string& name);
// The control grid (ffd_grid_shape(image_shape, delta) points, rank channels, array axis order)
// of a preset.
ArrayD make_preset_grid(FfdPreset preset, const std::vector<std::size_t>& image_shape,
                        const std::vector<int>& delta, double amplitude,
                        std::uint32_t seed = 20240611);

// Reads a control grid from a .npy file (shape (M_y, M_x, 2) or (M_z, M_y, M_x, 3), the ffd.h
// convention; splinetool's grids) for an image of `image_shape` at spacing `delta`. Throws
// sv::Error "<path>: <problem>" for a file that cannot be read, a grid of another rank or
// component count than the image, too few control points (sv::check_ffd_grid's sentence), or
// non-finite values.
ArrayD load_ffd_grid(const std::string& path, const std::vector<int>& delta,
                     const std::vector<std::size_t>& image_shape);

// Parses "8", "8x8" (y x x) or "4x8x8" (z x y x x) into one spacing per axis of a rank-`rank`
// image; one number applies to every axis. Throws sv::Error.
std::vector<int> parse_spacing(const std::string& text, std::size_t rank);

struct FfdGlTiming {
  std::optional<double> gpu_ms;  // the field dispatch, GL timer query (null: not meaningful)
  double wall_ms = 0;            // the field dispatch between two glFinish, CPU clock
};

class FfdGlEngine {
 public:
  // `coefficients`: the moving image's cubic B-spline coefficients (reflect boundary), dims
  // (y, x) or (z, y, x), 1..4 channels. Compiles the programs of its rank.
  explicit FfdGlEngine(const ArrayF& coefficients);

  std::size_t rank() const { return shape_.size(); }
  const std::vector<std::size_t>& image_shape() const { return shape_; }
  std::size_t channels() const { return channels_; }

  // Checks the grid for the image (sv::check_ffd_grid) and uploads it (rounded to float).
  void set_grid(const ArrayD& grid, const std::vector<int>& delta);
  const std::vector<int>& delta() const { return delta_; }

  // The field, det J and warped image of `kernel` for the current grid.
  FfdGlTiming run(FfdGlKernel kernel);

  // Read back (GL -> host), in array axis order: the field (rank channels, component c along
  // array axis c), det J (1 channel), the warped image (the image's channels).
  ArrayF read_field(FfdGlKernel kernel) const;
  ArrayF read_detj(FfdGlKernel kernel) const;
  ArrayF read_warped(FfdGlKernel kernel) const;

  const gl::Texture& field_texture(FfdGlKernel k) const { return out(k).field; }
  const gl::Texture& detj_texture(FfdGlKernel k) const { return out(k).detj; }
  const gl::Texture& warped_texture(FfdGlKernel k) const { return out(k).warped; }

 private:
  struct Outputs {
    gl::Texture field, detj, warped;
  };
  const Outputs& out(FfdGlKernel k) const { return outputs_[static_cast<std::size_t>(k)]; }
  gl::Program& program(FfdGlKernel k, bool jacobian);
  gl::Texture make_texture(GLenum format, bool linear) const;
  void dispatch(FfdGlKernel k, bool jacobian, const gl::Texture& target);
  ArrayF read(const gl::Texture& t, GLenum format, std::size_t components) const;

  std::vector<std::size_t> shape_;  // array axis order
  std::size_t channels_ = 1;
  std::vector<int> delta_;
  gl::Texture coefficients_;
  gl::Texture grid_;
  gl::Buffer weights_;
  int weight_stride_ = 0;
  std::array<Outputs, 3> outputs_;
  std::map<int, gl::Program> programs_;
  gl::Program warp_;
  gl::Query timer_;
};

// The field error of one kernel against the double reference, per voxel the Euclidean norm of
// u_kernel - u_reference in voxels.
struct FieldError {
  double max = 0, mean = 0;
  double max_component = 0;  // the largest |difference| of one component
  ArrayF per_voxel;          // the norms, one channel, image dims (the heat map)
};
FieldError field_error(const ArrayF& field, const ArrayD& reference);

struct DetJStats {
  double min = 0, max = 0;
  std::size_t folded = 0;  // voxels with det J <= 0
};
template <class T>
DetJStats detj_stats(const Array<T>& detj);

}  // namespace sv::viewer
