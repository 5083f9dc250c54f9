// The ray-cast 3-D view's GL engine (see raycast_renderer.h).
#include "raycast_renderer.h"

#include <cmath>
#include <limits>
#include <string>

#include "splineview/error.h"
#include "splineview/gl/state.h"

namespace sv::viewer {
namespace {

// Units, image units and uniform locations fixed by shaders/raycast.comp.
constexpr GLuint kVolumeUnit = 0;
constexpr GLuint kLayersUnit = 2;
constexpr GLuint kCellsUnit = 3;
constexpr GLuint kTfUnit = 4;
constexpr GLuint kSamplesUnit = 5;
constexpr GLuint kFineUnit = 6;
constexpr GLint kPane = 0, kOffset = 1, kEye = 2, kD0 = 3, kDx = 4, kDy = 5, kW0 = 6, kWx = 7,
                kWy = 8, kNormalMatrix = 9, kLight = 10, kStep = 11, kLowScale = 12, kIso = 13,
                kTfRange = 14, kDvr = 15, kSkip = 16, kBackground = 17, kShade = 18;
constexpr int kGroup = 8;
constexpr int kCell = 8;

void set3(const gl::Program& p, GLint loc, const glm::dvec3& v) {
  SV_GL_CHECK(glProgramUniform3f(p.id(), loc, static_cast<float>(v.x), static_cast<float>(v.y),
                                 static_cast<float>(v.z)));
}

const char* fetch_define(gl::Fetch f) {
  switch (f) {
    case gl::Fetch::Linear:
      return "SV_FETCH_LINEAR";
    case gl::Fetch::CubicOtf:
    case gl::Fetch::CubicUnfiltered:
      return "SV_FETCH_CUBIC";
    case gl::Fetch::CubicPrecise:
      return "SV_FETCH_CUBIC_PRECISE";
    default:
      throw Error(std::string("the 3-D view has no \"") + gl::fetch_name(f) +
                  "\" method (trilinear, otf, precise or cubic-unfiltered)");
  }
}

const char* mode_define(RayMode m) {
  switch (m) {
    case RayMode::Mip:
      return "RC_MIP";
    case RayMode::Iso:
      return "RC_ISO";
    case RayMode::Dvr:
      return "RC_DVR";
  }
  return "RC_MIP";
}

// One pass of raycast_cells.comp from `volume` into a new grid of nx x ny x nz (RG32F ranges, or
// R32F largest values).
gl::Texture grid_for(const gl::Program& program, const gl::Texture& volume, int nx, int ny, int nz,
                     GLenum format = GL_RG32F, const gl::Texture* fine = nullptr) {
  gl::Texture cells = gl::Texture::create_3d(format, nx, ny, nz);
  cells.set_filter(GL_NEAREST, GL_NEAREST);
  cells.set_wrap(GL_CLAMP_TO_EDGE);
  SV_GL_CHECK(glUseProgram(program.id()));
  SV_GL_CHECK(glBindTextureUnit(kVolumeUnit, volume.id()));
  SV_GL_CHECK(glBindTextureUnit(1, fine ? fine->id() : 0));  // u_fine of RC_BOUNDS_CELLS
  SV_GL_CHECK(glBindImageTexture(0, cells.id(), 0, GL_TRUE, 0, GL_WRITE_ONLY, format));
  SV_GL_CHECK(glDispatchCompute(static_cast<GLuint>((nx + 3) / 4),
                                static_cast<GLuint>((ny + 3) / 4),
                                static_cast<GLuint>((nz + 3) / 4)));
  SV_GL_CHECK(glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT));
  SV_GL_CHECK(glBindImageTexture(0, 0, 0, GL_FALSE, 0, GL_READ_ONLY, GL_RG32F));
  SV_GL_CHECK(glBindTextureUnit(1, 0));
  return cells;
}

// The 8^3 cells of a volume (one more than fit, for the half voxel beyond the last one).
gl::Texture cells_for(const gl::Program& program, const gl::Texture& volume) {
  return grid_for(program, volume, volume.width() / kCell + 1, volume.height() / kCell + 1,
                  volume.depth() / kCell + 1);
}

}  // namespace

const char* ray_method_label(gl::Fetch f) {
  switch (f) {
    case gl::Fetch::CubicPrecise:
      return "cubic precise";
    case gl::Fetch::CubicOtf:
      return "cubic otf";
    case gl::Fetch::Linear:
      return "trilinear";
    case gl::Fetch::CubicUnfiltered:
      return "cubic unfiltered";
    default:
      return gl::fetch_name(f);
  }
}

bool is_ray_method(gl::Fetch f) {
  return f == gl::Fetch::CubicPrecise || f == gl::Fetch::CubicOtf || f == gl::Fetch::Linear ||
         f == gl::Fetch::CubicUnfiltered;
}

void RayTarget::ensure(int w, int h) {
  if (w == width && h == height && colour) return;
  colour = gl::Texture::create_2d(GL_RGBA8, w, h);
  colour.set_filter(GL_NEAREST, GL_NEAREST);
  data = gl::Texture::create_2d(GL_RGBA32F, w, h);
  data.set_filter(GL_NEAREST, GL_NEAREST);
  framebuffer = gl::Framebuffer::create();
  framebuffer.attach_color(colour);
  framebuffer.check_complete();
  width = w;
  height = h;
}

RaycastRenderer::RaycastRenderer() {
  tf_texture_ = gl::Texture::create_1d(GL_RGBA32F, kTfTexels);
  tf_texture_.set_filter(GL_NEAREST, GL_NEAREST);
  tf_texture_.set_wrap(GL_CLAMP_TO_EDGE);
}

gl::Program& RaycastRenderer::program(gl::Fetch method, RayMode mode, bool gather) {
  gather = gather && method == gl::Fetch::CubicPrecise;
  const auto key = std::make_tuple(static_cast<int>(method), static_cast<int>(mode), gather);
  auto it = programs_.find(key);
  if (it != programs_.end()) return it->second;
  ShaderDefines defines = {{fetch_define(method), ""}, {mode_define(mode), ""}};
  if (method == gl::Fetch::CubicPrecise)
    defines.push_back({"RC_CELL", std::to_string(RaycastRenderer::kPreciseCell)});
  if (gather) defines.push_back({"SV_PRECISE_GATHER", ""});
  return programs_.emplace(key, gl::Program({{GL_COMPUTE_SHADER, "raycast.comp"}}, defines))
      .first->second;
}

void RaycastRenderer::set_volume(const RaycastVolume& v) {
  if (!v.samples || !*v.samples || !v.coefficients || !*v.coefficients)
    throw Error("ray-cast view: the volume has no textures");
  gl::ScopedState saved;
  if (!cells_program_) cells_program_ = gl::Program({{GL_COMPUTE_SHADER, "raycast_cells.comp"}});
  volume_ = v;
  cells_samples_ = cells_for(cells_program_, *v.samples);
  cells_coefficients_ = cells_for(cells_program_, *v.coefficients);
  // The precise cubic's Bezier ranges: the largest control point per unit cube (texel j + 1 for
  // cube j = -1 .. N - 1), and per kPreciseCell^3 cell the largest of those over the cubes its
  // samples reach (with the coefficients' smallest as the lower end).
  const std::string cell = std::to_string(kPreciseCell);
  if (!fine_program_)
    fine_program_ =
        gl::Program({{GL_COMPUTE_SHADER, "raycast_cells.comp"}}, {{"RC_BOUNDS", ""},
                                                                  {"RC_BOUNDS_BLOCK", "1"},
                                                                  {"RC_BOUNDS_REACH", "1"},
                                                                  {"RC_BOUNDS_MAX_ONLY", ""}});
  if (!precise_cells_program_)
    precise_cells_program_ = gl::Program({{GL_COMPUTE_SHADER, "raycast_cells.comp"}},
                                         {{"RC_BOUNDS_CELLS", ""}, {"RC_CELL", cell}});
  const gl::Texture& c0 = *v.coefficients;
  fine_precise_ =
      grid_for(fine_program_, c0, c0.width() + 1, c0.height() + 1, c0.depth() + 1, GL_R32F);
  cells_precise_ = grid_for(precise_cells_program_, c0, c0.width() / kPreciseCell + 1,
                            c0.height() / kPreciseCell + 1, c0.depth() / kPreciseCell + 1, GL_RG32F,
                            &fine_precise_);
  // The coefficients as a 2-D array (layer k = slice z = k) for the gathered precise fetch.
  const gl::Texture& c = *v.coefficients;
  GLuint id = 0;
  SV_GL_CHECK(glCreateTextures(GL_TEXTURE_2D_ARRAY, 1, &id));
  layers_ = gl::detail::Handle<gl::detail::TextureTraits>(id);
  SV_GL_CHECK(glTextureStorage3D(id, 1, c.internal_format(), c.width(), c.height(), c.depth()));
  SV_GL_CHECK(glCopyImageSubData(c.id(), GL_TEXTURE_3D, 0, 0, 0, 0, id, GL_TEXTURE_2D_ARRAY, 0, 0,
                                 0, 0, c.width(), c.height(), c.depth()));
  SV_GL_CHECK(glTextureParameteri(id, GL_TEXTURE_MIN_FILTER, GL_NEAREST));
  SV_GL_CHECK(glTextureParameteri(id, GL_TEXTURE_MAG_FILTER, GL_NEAREST));
  SV_GL_CHECK(glTextureParameteri(id, GL_TEXTURE_WRAP_S, GL_MIRRORED_REPEAT));
  SV_GL_CHECK(glTextureParameteri(id, GL_TEXTURE_WRAP_T, GL_MIRRORED_REPEAT));
  SV_GL_CHECK(glBindTextureUnit(kVolumeUnit, 0));
}

void RaycastRenderer::dispatch(gl::Fetch method, const RayFrame& f, const RaySettings& st,
                               const WindowLevel& wl, const RayDrawOptions& opt, int stride,
                               int offset, const gl::Texture& colour, const gl::Texture& data) {
  if (!has_volume()) throw Error("ray-cast view: no volume");
  if (!(st.step >= 0.05 && st.step <= 1.0))
    throw Error("ray-cast view: the step must lie in 0.05 .. 1 voxel, got " +
                std::to_string(st.step));
  gl::Program& p = program(method, st.mode, opt.precise_gather);
  const bool coefficients = gl::fetch_prefiltered(method);
  SV_GL_CHECK(glProgramUniform4i(p.id(), kPane, f.width, f.height, stride, stride));
  SV_GL_CHECK(glProgramUniform2i(p.id(), kOffset, offset, offset));
  set3(p, kEye, f.eye);
  set3(p, kD0, f.d0);
  set3(p, kDx, f.dx);
  set3(p, kDy, f.dy);
  set3(p, kW0, f.w0);
  set3(p, kWx, f.wx);
  set3(p, kWy, f.wy);
  p.set(kNormalMatrix, glm::mat3(f.normal_matrix));
  set3(p, kLight, f.light);
  p.set(kStep, static_cast<float>(st.step));
  p.set(kLowScale, glm::vec2(static_cast<float>(wl.low()), static_cast<float>(1.0 / wl.window)));
  p.set(kIso, glm::vec4(static_cast<float>(st.iso), static_cast<float>(st.bisections), 0, 0));
  p.set(kTfRange, glm::vec4(static_cast<float>(st.tf.low), static_cast<float>(st.tf.high),
                            static_cast<float>(st.tf.visible_low()),
                            static_cast<float>(st.tf.visible_high())));
  p.set(kDvr,
        glm::vec2(static_cast<float>(st.tf.opacity_per_mm), static_cast<float>(st.dvr_cutoff)));
  p.set(kSkip, opt.skip ? 1 | (opt.fine_bounds ? 2 : 0) | (opt.mip_first_visit ? 4 : 0) : 0);
  p.set(kShade, glm::vec2(st.dvr_shade ? 1.0f : 0.0f, static_cast<float>(dvr_shade_threshold(st))));
  SV_GL_CHECK(glProgramUniform3f(p.id(), kBackground, opt.background.r, opt.background.g,
                                 opt.background.b));
  if (st.mode == RayMode::Dvr && st.tf.table != tf_uploaded_) {
    if (st.tf.table.size() != static_cast<std::size_t>(kTfTexels))
      throw Error("ray-cast view: a transfer function needs " + std::to_string(kTfTexels) +
                  " entries");
    tf_texture_.upload(GL_RGBA, GL_FLOAT, st.tf.table.data());
    tf_uploaded_ = st.tf.table;
  }

  gl::ScopedState saved;
  SV_GL_CHECK(glUseProgram(p.id()));
  SV_GL_CHECK(glBindSampler(kVolumeUnit, 0));
  SV_GL_CHECK(glBindTextureUnit(kVolumeUnit,
                                coefficients ? volume_.coefficients->id() : volume_.samples->id()));
  SV_GL_CHECK(glBindTextureUnit(kLayersUnit, layers_.id()));
  SV_GL_CHECK(glBindSampler(kLayersUnit, 0));
  const bool precise = method == gl::Fetch::CubicPrecise;
  SV_GL_CHECK(glBindTextureUnit(kCellsUnit, precise        ? cells_precise_.id()
                                            : coefficients ? cells_coefficients_.id()
                                                           : cells_samples_.id()));
  SV_GL_CHECK(glBindSampler(kCellsUnit, 0));
  SV_GL_CHECK(glBindTextureUnit(kSamplesUnit, volume_.samples->id()));
  SV_GL_CHECK(glBindSampler(kSamplesUnit, 0));
  SV_GL_CHECK(glBindTextureUnit(kFineUnit, fine_precise_.id()));
  SV_GL_CHECK(glBindSampler(kFineUnit, 0));
  SV_GL_CHECK(glBindTextureUnit(kTfUnit, tf_texture_.id()));
  SV_GL_CHECK(glBindSampler(kTfUnit, 0));
  SV_GL_CHECK(glBindImageTexture(0, colour.id(), 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RGBA8));
  SV_GL_CHECK(glBindImageTexture(1, data.id(), 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RGBA32F));
  SV_GL_CHECK(glDispatchCompute(static_cast<GLuint>((colour.width() + kGroup - 1) / kGroup),
                                static_cast<GLuint>((colour.height() + kGroup - 1) / kGroup), 1));
  SV_GL_CHECK(glMemoryBarrier(GL_FRAMEBUFFER_BARRIER_BIT | GL_TEXTURE_UPDATE_BARRIER_BIT |
                              GL_TEXTURE_FETCH_BARRIER_BIT));
  SV_GL_CHECK(glBindImageTexture(0, 0, 0, GL_FALSE, 0, GL_READ_ONLY, GL_RGBA8));
  SV_GL_CHECK(glBindImageTexture(1, 0, 0, GL_FALSE, 0, GL_READ_ONLY, GL_RGBA32F));
  for (GLuint unit : {kLayersUnit, kCellsUnit, kTfUnit, kSamplesUnit, kFineUnit})
    SV_GL_CHECK(glBindTextureUnit(unit, 0));
}

void RaycastRenderer::render(gl::Fetch method, const RayFrame& frame, const RaySettings& settings,
                             const WindowLevel& wl, const RayDrawOptions& opt, RayTarget& target) {
  target.ensure(frame.width, frame.height);
  dispatch(method, frame, settings, wl, opt, 1, 0, target.colour, target.data);
}

std::vector<glm::vec4> RaycastRenderer::measure(gl::Fetch method, const RayFrame& frame,
                                                const RaySettings& settings, const WindowLevel& wl,
                                                const RayDrawOptions& opt, int stride, int offset,
                                                int* cols, int* rows) {
  if (stride < 1 || offset < 0 || offset >= stride)
    throw Error("ray-cast view: measuring needs stride >= 1 and 0 <= offset < stride");
  const int c = (frame.width - offset + stride - 1) / stride;
  const int r = (frame.height - offset + stride - 1) / stride;
  measure_target_.ensure(c, r);
  dispatch(method, frame, settings, wl, opt, stride, offset, measure_target_.colour,
           measure_target_.data);
  std::vector<glm::vec4> out(static_cast<std::size_t>(c) * static_cast<std::size_t>(r));
  SV_GL_CHECK(glGetTextureImage(measure_target_.data.id(), 0, GL_RGBA, GL_FLOAT,
                                static_cast<GLsizei>(out.size() * sizeof(glm::vec4)), out.data()));
  *cols = c;
  *rows = r;
  return out;
}

}  // namespace sv::viewer
