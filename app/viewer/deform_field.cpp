// The deform mode's engine: FFD fields by three GLSL kernels (see deform_field.h).
#include "deform_field.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <random>

#include "splineview/bspline.h"
#include "splineview/error.h"
#include "splineview/ffd.h"
#include "splineview/gl/gl.h"
#include "splineview/gl/state.h"
#include "splineview/io.h"

namespace sv::viewer {
namespace {

constexpr double kPi = 3.14159265358979323846;

std::string shape_text(const std::vector<std::size_t>& dims) {
  std::string s;
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? " x " : "") + std::to_string(dims[i]);
  return s;
}

// Array axis a of a rank-R array is texture axis R - 1 - a.
int size_along(const std::vector<std::size_t>& shape, int texture_axis) {
  const int r = static_cast<int>(shape.size());
  return texture_axis < r ? static_cast<int>(shape[static_cast<std::size_t>(r - 1 - texture_axis)])
                          : 1;
}

}  // namespace

const char* ffd_gl_kernel_name(FfdGlKernel k) {
  switch (k) {
    case FfdGlKernel::Texture:
      return "texture";
    case FfdGlKernel::PerVoxel:
      return "per-voxel";
    default:
      return "tile";
  }
}

const char* ffd_gl_kernel_label(FfdGlKernel k) {
  switch (k) {
    case FfdGlKernel::Texture:
      return "texture hardware";
    case FfdGlKernel::PerVoxel:
      return "per-voxel precise";
    default:
      return "thread per tile";
  }
}

FfdGlKernel parse_ffd_gl_kernel(const std::string& name) {
  for (FfdGlKernel k : kFfdGlKernels)
    if (name == ffd_gl_kernel_name(k)) return k;
  throw Error("unknown field kernel '" + name + "' (texture, per-voxel, tile)");
}

const char* ffd_preset_name(FfdPreset p) {
  switch (p) {
    case FfdPreset::None:
      return "none";
    case FfdPreset::SmoothRandom:
      return "smooth-random";
    case FfdPreset::Swirl:
      return "swirl";
    default:
      return "folding";
  }
}

FfdPreset parse_ffd_preset(const std::string& name) {
  for (FfdPreset p :
       {FfdPreset::None, FfdPreset::SmoothRandom, FfdPreset::Swirl, FfdPreset::Folding})
    if (name == ffd_preset_name(p)) return p;
  throw Error("unknown field preset '" + name + "' (none, smooth-random, swirl, folding)");
}

ArrayD make_preset_grid(FfdPreset preset, const std::vector<std::size_t>& image_shape,
                        const std::vector<int>& delta, double amplitude, std::uint32_t seed) {
  const std::vector<std::size_t> m = ffd_grid_shape(image_shape, delta);
  const std::size_t r = m.size();
  ArrayD grid(m, r);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  // Control point (index per array axis) -> its voxel position and the image centre.
  std::vector<double> centre(r), half(r);
  for (std::size_t a = 0; a < r; ++a) {
    centre[a] = (static_cast<double>(image_shape[a]) - 1.0) / 2.0;
    half[a] = static_cast<double>(image_shape[a]) / 2.0;
  }
  const std::size_t ny = m[r - 2], nx = m[r - 1], nz = r == 3 ? m[0] : 1;
  const double dy = delta[r - 2], dx = delta[r - 1];
  for (std::size_t k = 0; k < nz; ++k) {
    for (std::size_t j = 0; j < ny; ++j) {
      for (std::size_t i = 0; i < nx; ++i) {
        double* c = grid.data() + (((k * ny) + j) * nx + i) * r;
        double* cy = c + (r - 2);  // components in array order: [z,] y, x
        double* cx = c + (r - 1);
        const double py = (static_cast<double>(j) - 1.0) * dy;
        const double px = (static_cast<double>(i) - 1.0) * dx;
        double zfall = 1.0;
        if (r == 3) {
          const double pz = (static_cast<double>(k) - 1.0) * delta[0];
          const double tz = (pz - centre[0]) / half[0];
          zfall = std::max(0.0, 1.0 - tz * tz);
        }
        switch (preset) {
          case FfdPreset::None:
            break;
          case FfdPreset::SmoothRandom:
            for (std::size_t a = 0; a < r; ++a) c[a] = amplitude * delta[a] * uniform(rng);
            break;
          case FfdPreset::Swirl: {
            const double ry = py - centre[r - 2], rx = px - centre[r - 1];
            const double rim = std::min(half[r - 2], half[r - 1]);
            const double t = std::sqrt(ry * ry + rx * rx) / rim;
            const double fall = t < 1.0 ? (1.0 - t * t) * (1.0 - t * t) : 0.0;
            const double angle = amplitude * kPi / 2.0 * fall * zfall;
            // Backward map: output voxel p shows the moving image at p + u, rotated by angle.
            *cx = std::cos(angle) * rx - std::sin(angle) * ry - rx;
            *cy = std::sin(angle) * rx + std::cos(angle) * ry - ry;
            break;
          }
          case FfdPreset::Folding: {
            // The two control columns either side of the middle swapped over along x (the left
            // one shows content from the right and the other way round), over the middle of
            // the rows: at amplitude 1, 1 + du_x/dx = 1 - 2 x 1.5 x 0.625 < 0 between them.
            const std::size_t left = (nx - 2) / 2;
            const double sign = i == left ? 1.0 : i == left + 1 ? -1.0 : 0.0;
            const double ty = (py - centre[r - 2]) / half[r - 2];
            const double band = std::abs(ty) < 0.6 ? 1.0 - (ty / 0.6) * (ty / 0.6) : 0.0;
            *cx = sign * amplitude * 1.5 * dx * band * zfall;
            break;
          }
        }
      }
    }
  }
  return grid;
}

ArrayD load_ffd_grid(const std::string& path, const std::vector<int>& delta,
                     const std::vector<std::size_t>& image_shape) {
  Loaded loaded;
  try {
    loaded = load_any(path, true);
  } catch (const Error& e) {
    const std::string what = e.what();
    throw Error(what.rfind(path, 0) == 0 ? what : path + ": " + what);
  }
  const ArrayD& g = loaded.array;
  const std::size_t r = image_shape.size();
  if (g.rank() != r || g.channels() != r) {
    throw Error(path + ": a control grid for a " + std::to_string(r) +
                "-D image must have shape (" + (r == 3 ? "M_z, " : "") + "M_y, M_x, " +
                std::to_string(r) + ") (the last axis the displacement components), got " +
                shape_text(g.dims()) + " with " + std::to_string(g.channels()) + " component" +
                (g.channels() == 1 ? "" : "s") + " per point");
  }
  try {
    check_ffd_grid(g, delta, image_shape);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
  return g;
}

std::vector<int> parse_spacing(const std::string& text, std::size_t rank) {
  std::vector<int> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t x = text.find_first_of("xX", start);
    const std::string part = text.substr(start, x == std::string::npos ? x : x - start);
    char* end = nullptr;
    const long v = std::strtol(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || v < 1 || v > 4096)
      throw Error("--spacing must be N or NxN (2-D) or NxNxN (3-D) with integers 1..4096, got '" +
                  text + "'");
    parts.push_back(static_cast<int>(v));
    if (x == std::string::npos) break;
    start = x + 1;
  }
  if (parts.size() == 1) return std::vector<int>(rank, parts[0]);
  if (parts.size() != rank)
    throw Error("--spacing '" + text + "' has " + std::to_string(parts.size()) + " values for a " +
                std::to_string(rank) + "-D image (one, or one per axis)");
  return parts;
}

FfdGlEngine::FfdGlEngine(const ArrayF& coefficients)
    : shape_(coefficients.dims()), channels_(coefficients.channels()) {
  if (rank() != 2 && rank() != 3)
    throw Error("the deform mode shows 2-D images and 3-D volumes, got " + shape_text(shape_));
  // The coefficients as RGBA (grey -> g g g 1, grey + alpha -> g g g a, RGB -> r g b 1).
  const std::size_t n = coefficients.points();
  std::vector<float> rgba(n * 4);
  for (std::size_t i = 0; i < n; ++i) {
    const float* c = coefficients.data() + i * channels_;
    float* o = rgba.data() + i * 4;
    if (channels_ <= 2) {
      o[0] = o[1] = o[2] = c[0];
      o[3] = channels_ == 2 ? c[1] : 1.0f;
    } else {
      o[0] = c[0];
      o[1] = c[1];
      o[2] = c[2];
      o[3] = channels_ == 4 ? c[3] : 1.0f;
    }
  }
  coefficients_ = make_texture(GL_RGBA32F, false);
  coefficients_.upload(GL_RGBA, GL_FLOAT, rgba.data());
  for (Outputs& o : outputs_) {
    o.field = make_texture(GL_RGBA32F, true);
    o.detj = make_texture(GL_R32F, false);
    o.warped = make_texture(GL_RGBA32F, false);
  }
  const std::string r = std::to_string(rank());
  warp_ = gl::Program({{GL_COMPUTE_SHADER, "ffd_warp.comp"}}, {{"SV_RANK", r}});
  for (FfdGlKernel k : kFfdGlKernels) {
    program(k, false);
    program(k, true);
  }
  timer_ = gl::Query::create(GL_TIME_ELAPSED);
}

gl::Texture FfdGlEngine::make_texture(GLenum format, bool linear) const {
  gl::Texture t = rank() == 2
                      ? gl::Texture::create_2d(format, size_along(shape_, 0), size_along(shape_, 1))
                      : gl::Texture::create_3d(format, size_along(shape_, 0), size_along(shape_, 1),
                                               size_along(shape_, 2));
  t.set_filter(linear ? GL_LINEAR : GL_NEAREST, linear ? GL_LINEAR : GL_NEAREST);
  t.set_wrap(GL_CLAMP_TO_EDGE);
  return t;
}

gl::Program& FfdGlEngine::program(FfdGlKernel k, bool jacobian) {
  const int key = static_cast<int>(k) * 2 + (jacobian ? 1 : 0);
  auto it = programs_.find(key);
  if (it != programs_.end()) return it->second;
  ShaderDefines defines = {{"SV_RANK", std::to_string(rank())}};
  defines.emplace_back(k == FfdGlKernel::Texture    ? "SV_FFD_TEXTURE"
                       : k == FfdGlKernel::PerVoxel ? "SV_FFD_PRECISE"
                                                    : "SV_FFD_TILE",
                       "");
  if (jacobian) defines.emplace_back("SV_FFD_JACOBIAN", "");
  return programs_.emplace(key, gl::Program({{GL_COMPUTE_SHADER, "ffd_field.comp"}}, defines))
      .first->second;
}

void FfdGlEngine::set_grid(const ArrayD& grid, const std::vector<int>& delta) {
  check_ffd_grid(grid, delta, shape_);
  const std::size_t r = rank();
  // The grid texture: control points in texture axis order, components (x, y[, z], 0).
  const std::vector<std::size_t>& m = grid.dims();
  const std::size_t n = grid.points();
  std::vector<float> rgba(n * 4, 0.0f);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t c = 0; c < r; ++c)
      rgba[i * 4 + c] = static_cast<float>(grid.data()[i * r + (r - 1 - c)]);
  const int mx = static_cast<int>(m[r - 1]), my = static_cast<int>(m[r - 2]);
  if (!grid_ || grid_.width() != mx || grid_.height() != my ||
      (r == 3 && grid_.depth() != static_cast<int>(m[0]))) {
    grid_ = r == 2 ? gl::Texture::create_2d(GL_RGBA32F, mx, my)
                   : gl::Texture::create_3d(GL_RGBA32F, mx, my, static_cast<int>(m[0]));
    grid_.set_filter(GL_LINEAR, GL_LINEAR);
    grid_.set_wrap(GL_CLAMP_TO_EDGE);
  }
  grid_.upload(GL_RGBA, GL_FLOAT, rgba.data());
  if (delta != delta_) {
    // Weight rows of the tile kernel in double, rounded once: per texture axis d, offsets r in
    // 0 .. delta_d - 1, the values then the derivatives (per voxel: / delta).
    weight_stride_ = *std::max_element(delta.begin(), delta.end());
    std::vector<float> rows(r * 2 * static_cast<std::size_t>(weight_stride_) * 4, 0.0f);
    for (std::size_t d = 0; d < r; ++d) {
      const int dd = delta[r - 1 - d];
      for (int k = 0; k < 2; ++k) {
        for (int off = 0; off < dd; ++off) {
          double w[4];
          bspline_weights_frac(3, static_cast<double>(off) / dd, w, k);
          for (int t = 0; t < 4; ++t) {
            const double v = k == 1 ? w[t] / dd : w[t];
            rows[((d * 2 + static_cast<std::size_t>(k)) * static_cast<std::size_t>(weight_stride_) +
                  static_cast<std::size_t>(off)) *
                     4 +
                 static_cast<std::size_t>(t)] = static_cast<float>(v);
          }
        }
      }
    }
    weights_ =
        gl::Buffer::create(static_cast<GLsizeiptr>(rows.size() * sizeof(float)), rows.data(), 0);
    delta_ = delta;
  }
}

void FfdGlEngine::dispatch(FfdGlKernel k, bool jacobian, const gl::Texture& target) {
  gl::Program& p = program(k, jacobian);
  const std::size_t r = rank();
  int size[3] = {size_along(shape_, 0), size_along(shape_, 1), size_along(shape_, 2)};
  int delta[3] = {1, 1, 1};
  for (std::size_t d = 0; d < r; ++d) delta[d] = delta_[r - 1 - d];
  SV_GL_CHECK(glProgramUniform3i(p.id(), 0, size[0], size[1], size[2]));
  SV_GL_CHECK(glProgramUniform3i(p.id(), 1, delta[0], delta[1], delta[2]));
  if (k == FfdGlKernel::Tile) {
    SV_GL_CHECK(glProgramUniform1i(p.id(), 2, weight_stride_));
    SV_GL_CHECK(glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, weights_.id()));
  }
  SV_GL_CHECK(glUseProgram(p.id()));
  SV_GL_CHECK(glBindTextureUnit(0, grid_.id()));
  SV_GL_CHECK(glBindImageTexture(0, target.id(), 0, r == 3 ? GL_TRUE : GL_FALSE, 0, GL_WRITE_ONLY,
                                 jacobian ? GL_R32F : GL_RGBA32F));
  const int local[3] = {r == 2 ? 8 : 4, r == 2 ? 8 : 4, r == 2 ? 1 : 4};
  GLuint groups[3] = {1, 1, 1};
  for (std::size_t d = 0; d < 3; ++d) {
    const int items = k == FfdGlKernel::Tile ? (size[d] + delta[d] - 1) / delta[d] : size[d];
    groups[d] = static_cast<GLuint>((items + local[d] - 1) / local[d]);
  }
  SV_GL_CHECK(glDispatchCompute(groups[0], groups[1], groups[2]));
  SV_GL_CHECK(glMemoryBarrier(GL_SHADER_IMAGE_ACCESS_BARRIER_BIT | GL_TEXTURE_FETCH_BARRIER_BIT |
                              GL_TEXTURE_UPDATE_BARRIER_BIT));
}

FfdGlTiming FfdGlEngine::run(FfdGlKernel k) {
  if (!grid_) throw Error("the deform engine has no control grid yet");
  gl::ScopedState saved;
  FfdGlTiming timing;
  const Outputs& o = out(k);
  const bool timed = gl::timer_queries_meaningful();
  SV_GL_CHECK(glFinish());
  const auto t0 = std::chrono::steady_clock::now();
  if (timed) SV_GL_CHECK(glBeginQuery(GL_TIME_ELAPSED, timer_.id()));
  dispatch(k, false, o.field);
  if (timed) SV_GL_CHECK(glEndQuery(GL_TIME_ELAPSED));
  SV_GL_CHECK(glFinish());
  timing.wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (timed) {
    GLuint64 ns = 0;
    SV_GL_CHECK(glGetQueryObjectui64v(timer_.id(), GL_QUERY_RESULT, &ns));
    timing.gpu_ms = static_cast<double>(ns) / 1e6;
  }
  dispatch(k, true, o.detj);
  // The warped image: the moving image's coefficients at x + u(x).
  const std::size_t r = rank();
  int size[3] = {size_along(shape_, 0), size_along(shape_, 1), size_along(shape_, 2)};
  SV_GL_CHECK(glProgramUniform3i(warp_.id(), 0, size[0], size[1], size[2]));
  SV_GL_CHECK(glUseProgram(warp_.id()));
  SV_GL_CHECK(glBindTextureUnit(0, coefficients_.id()));
  const GLboolean layered = r == 3 ? GL_TRUE : GL_FALSE;
  SV_GL_CHECK(glBindImageTexture(0, o.field.id(), 0, layered, 0, GL_READ_ONLY, GL_RGBA32F));
  SV_GL_CHECK(glBindImageTexture(1, o.warped.id(), 0, layered, 0, GL_WRITE_ONLY, GL_RGBA32F));
  const int local = r == 2 ? 8 : 4;
  SV_GL_CHECK(glDispatchCompute(static_cast<GLuint>((size[0] + local - 1) / local),
                                static_cast<GLuint>((size[1] + local - 1) / local),
                                static_cast<GLuint>(r == 2 ? 1 : (size[2] + local - 1) / local)));
  SV_GL_CHECK(glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT | GL_TEXTURE_UPDATE_BARRIER_BIT |
                              GL_SHADER_IMAGE_ACCESS_BARRIER_BIT));
  // Leave no image, buffer or texture unit bound for the passes that follow.
  SV_GL_CHECK(glBindImageTexture(0, 0, 0, GL_FALSE, 0, GL_READ_ONLY, GL_RGBA32F));
  SV_GL_CHECK(glBindImageTexture(1, 0, 0, GL_FALSE, 0, GL_READ_ONLY, GL_RGBA32F));
  SV_GL_CHECK(glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, 0));
  SV_GL_CHECK(glBindTextureUnit(0, 0));
  return timing;
}

ArrayF FfdGlEngine::read(const gl::Texture& t, GLenum format, std::size_t components) const {
  const std::size_t n = std::accumulate(shape_.begin(), shape_.end(), std::size_t{1},
                                        [](std::size_t a, std::size_t b) { return a * b; });
  std::vector<float> data(n * components);
  SV_GL_CHECK(glMemoryBarrier(GL_TEXTURE_UPDATE_BARRIER_BIT));
  SV_GL_CHECK(glPixelStorei(GL_PACK_ALIGNMENT, 1));
  SV_GL_CHECK(glGetTextureImage(t.id(), 0, format, GL_FLOAT,
                                static_cast<GLsizei>(data.size() * sizeof(float)), data.data()));
  SV_GL_CHECK(glPixelStorei(GL_PACK_ALIGNMENT, 4));
  ArrayF a(shape_, components);
  a.vec() = std::move(data);
  return a;
}

ArrayF FfdGlEngine::read_field(FfdGlKernel k) const {
  const ArrayF rgba = read(out(k).field, GL_RGBA, 4);
  const std::size_t r = rank();
  ArrayF f(shape_, r);
  for (std::size_t i = 0; i < f.points(); ++i)
    for (std::size_t c = 0; c < r; ++c) f.data()[i * r + c] = rgba.data()[i * 4 + (r - 1 - c)];
  return f;
}

ArrayF FfdGlEngine::read_detj(FfdGlKernel k) const {
  return read(out(k).detj, GL_RED, 1);
}

ArrayF FfdGlEngine::read_warped(FfdGlKernel k) const {
  const ArrayF rgba = read(out(k).warped, GL_RGBA, 4);
  ArrayF w(shape_, channels_);
  for (std::size_t i = 0; i < w.points(); ++i) {
    const float* s = rgba.data() + i * 4;
    float* o = w.data() + i * channels_;
    if (channels_ <= 2) {
      o[0] = s[0];
      if (channels_ == 2) o[1] = s[3];
    } else {
      for (std::size_t c = 0; c < channels_; ++c) o[c] = s[c];
    }
  }
  return w;
}

FieldError field_error(const ArrayF& field, const ArrayD& reference) {
  if (field.dims() != reference.dims() || field.channels() != reference.channels())
    throw Error("field_error: the field and the reference differ in shape");
  FieldError e;
  e.per_voxel = ArrayF(field.dims(), 1);
  const std::size_t r = field.channels();
  double sum = 0;
  for (std::size_t i = 0; i < field.points(); ++i) {
    double s = 0;
    for (std::size_t c = 0; c < r; ++c) {
      const double d = static_cast<double>(field.data()[i * r + c]) - reference.data()[i * r + c];
      s += d * d;
      e.max_component = std::max(e.max_component, std::abs(d));
    }
    const double n = std::sqrt(s);
    e.per_voxel.data()[i] = static_cast<float>(n);
    e.max = std::max(e.max, n);
    sum += n;
  }
  e.mean = sum / static_cast<double>(std::max<std::size_t>(1, field.points()));
  return e;
}

template <class T>
DetJStats detj_stats(const Array<T>& detj) {
  DetJStats s;
  s.min = std::numeric_limits<double>::infinity();
  s.max = -s.min;
  for (T v : detj.vec()) {
    s.min = std::min(s.min, static_cast<double>(v));
    s.max = std::max(s.max, static_cast<double>(v));
    if (!(v > T(0))) ++s.folded;
  }
  return s;
}
template DetJStats detj_stats(const Array<float>&);
template DetJStats detj_stats(const Array<double>&);

}  // namespace sv::viewer
