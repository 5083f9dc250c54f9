// The ray-cast view's camera, rays, transfer functions and CPU march (see raycast_reference.h).
#include "raycast_reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "splineview/error.h"
#include "splineview/sampler.h"

namespace sv::viewer {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kInf = std::numeric_limits<double>::infinity();

double radians(double deg) {
  return deg * kPi / 180.0;
}

// The affine's 3x3 part as a glm matrix (column c = index axis c) and its translation.
glm::dmat3 linear_part(const Geometry& g) {
  glm::dmat3 a(1.0);
  for (int c = 0; c < 3; ++c)
    for (int r = 0; r < 3; ++r)
      a[c][r] = g.affine[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)];
  return a;
}
glm::dvec3 translation(const Geometry& g) {
  return {g.affine[0][3], g.affine[1][3], g.affine[2][3]};
}

glm::dvec3 texture_dims(const std::array<std::size_t, 3>& dims) {
  return {static_cast<double>(dims[2]), static_cast<double>(dims[1]), static_cast<double>(dims[0])};
}

double ramp(double x, double a, double b) {
  return std::clamp((x - a) / (b - a), 0.0, 1.0);
}

}  // namespace

const char* ray_mode_name(RayMode m) {
  switch (m) {
    case RayMode::Mip:
      return "mip";
    case RayMode::Iso:
      return "iso";
    case RayMode::Dvr:
      return "dvr";
  }
  return "?";
}

const char* ray_mode_label(RayMode m) {
  switch (m) {
    case RayMode::Mip:
      return "maximum intensity";
    case RayMode::Iso:
      return "isosurface";
    case RayMode::Dvr:
      return "volume rendering";
  }
  return "?";
}

RayMode parse_ray_mode(const std::string& name) {
  for (RayMode m : kRayModes)
    if (name == ray_mode_name(m)) return m;
  throw Error("unknown 3-D view \"" + name + "\" (valid: mip, iso, dvr)");
}

// ---- camera -----------------------------------------------------------------------------------

glm::dvec3 OrbitCamera::eye() const {
  const double y = radians(yaw_deg), p = radians(pitch_deg);
  return target + distance_mm *
                      glm::dvec3(std::sin(y) * std::cos(p), std::cos(y) * std::cos(p), std::sin(p));
}
glm::dvec3 OrbitCamera::forward() const {
  return glm::normalize(target - eye());
}
glm::dvec3 OrbitCamera::right() const {
  return glm::normalize(glm::cross(forward(), glm::dvec3(0.0, 0.0, 1.0)));
}
glm::dvec3 OrbitCamera::up() const {
  return glm::cross(right(), forward());
}

void OrbitCamera::rotate(double dx_px, double dy_px) {
  yaw_deg = std::remainder(yaw_deg + 0.4 * dx_px, 360.0);
  pitch_deg = std::clamp(pitch_deg + 0.4 * dy_px, -89.0, 89.0);
}

void OrbitCamera::zoom(double notches) {
  distance_mm = std::clamp(distance_mm * std::pow(0.9, notches), 1.0, 1e5);
}

OrbitCamera fit_camera(const Geometry& g, const std::array<std::size_t, 3>& dims, double yaw_deg,
                       double pitch_deg) {
  const glm::dvec3 n = texture_dims(dims);
  std::vector<glm::dvec3> corners;
  for (int c = 0; c < 8; ++c) {
    const Vec3 ijk = {(c & 1) ? n.x - 0.5 : -0.5, (c & 2) ? n.y - 0.5 : -0.5,
                      (c & 4) ? n.z - 0.5 : -0.5};
    const Vec3 w = index_to_world(g, ijk);
    corners.emplace_back(w[0], w[1], w[2]);
  }
  glm::dvec3 centre(0.0);
  for (const glm::dvec3& c : corners) centre += c / 8.0;
  double radius = 0.0;
  for (const glm::dvec3& c : corners) radius = std::max(radius, glm::length(c - centre));
  OrbitCamera cam;
  cam.target = centre;
  cam.yaw_deg = yaw_deg;
  cam.pitch_deg = std::clamp(pitch_deg, -89.0, 89.0);
  cam.distance_mm = std::max(1.0, 1.08 * radius / std::sin(radians(cam.fov_deg / 2.0)));
  return cam;
}

RayFrame ray_frame(const OrbitCamera& c, const Geometry& g, const std::array<std::size_t, 3>& dims,
                   int width, int height) {
  if (width <= 0 || height <= 0) throw Error("ray-cast view: an empty pane");
  RayFrame f;
  f.width = width;
  f.height = height;
  const glm::dvec3 fw = c.forward(), r = c.right(), u = c.up();
  const double s = 2.0 * std::tan(radians(c.fov_deg / 2.0)) / std::min(width, height);
  f.w0 = fw + (0.5 - width / 2.0) * s * r + (0.5 - height / 2.0) * s * u;
  f.wx = s * r;
  f.wy = s * u;
  const glm::dmat3 m = glm::inverse(linear_part(g));
  f.d0 = m * f.w0;
  f.dx = m * f.wx;
  f.dy = m * f.wy;
  f.eye = m * (c.eye() - translation(g));
  f.normal_matrix = glm::transpose(m);
  f.light = -fw;
  f.dims = texture_dims(dims);
  return f;
}

// ---- transfer functions -----------------------------------------------------------------------

glm::dvec4 TransferFunction::lookup(double value) const {
  const double last = static_cast<double>(table.size() - 1);
  const double u = std::clamp((value - low) / (high - low) * last, 0.0, last);
  const auto i = static_cast<std::size_t>(std::floor(u));
  const std::size_t i1 = std::min(i + 1, table.size() - 1);
  const double t = u - static_cast<double>(i);
  return glm::dvec4(table[i]) * (1.0 - t) + glm::dvec4(table[i1]) * t;
}

double TransferFunction::visible_low() const {
  for (std::size_t k = 0; k < table.size(); ++k)
    if (table[k].a > 0.0f)
      return k == 0 ? -kInf
                    : low + (high - low) * static_cast<double>(k - 1) /
                                static_cast<double>(table.size() - 1);
  return kInf;
}

double TransferFunction::visible_high() const {
  for (std::size_t k = table.size(); k-- > 0;)
    if (table[k].a > 0.0f)
      return k + 1 == table.size() ? kInf
                                   : low + (high - low) * static_cast<double>(k + 1) /
                                               static_cast<double>(table.size() - 1);
  return -kInf;
}

const std::vector<std::string>& tf_presets() {
  static const std::vector<std::string> names = {"CT bone", "MRI soft tissue", "grey ramp"};
  return names;
}

TransferFunction make_transfer_function(const std::string& preset, double low, double high,
                                        double opacity_per_mm) {
  if (!(low < high) || !std::isfinite(low) || !std::isfinite(high))
    throw Error("transfer function: the value range must have low < high, got " +
                std::to_string(low) + " .. " + std::to_string(high));
  TransferFunction tf;
  tf.preset = preset;
  tf.low = low;
  tf.high = high;
  tf.opacity_per_mm = opacity_per_mm;
  tf.table.resize(kTfTexels);
  for (int k = 0; k < kTfTexels; ++k) {
    const double x = static_cast<double>(k) / (kTfTexels - 1);
    glm::dvec3 rgb;
    double a;
    if (preset == "CT bone") {
      // Soft tissue transparent, bone from a dark red rim to ivory.
      rgb = glm::mix(glm::dvec3(0.55, 0.25, 0.15), glm::dvec3(1.0, 0.95, 0.85), ramp(x, 0.3, 0.8));
      a = ramp(x, 0.3, 0.7);
    } else if (preset == "MRI soft tissue") {
      // A faint skin, brighter tissue more opaque.
      rgb = glm::mix(glm::dvec3(0.85, 0.5, 0.4), glm::dvec3(1.0, 0.92, 0.82), x);
      a = x < 0.5 ? 0.25 * ramp(x, 0.15, 0.5) : 0.25 + 0.75 * ramp(x, 0.5, 1.0);
    } else if (preset == "grey ramp") {
      rgb = glm::dvec3(x);
      a = x;
    } else {
      std::string valid;
      for (const std::string& n : tf_presets()) valid += (valid.empty() ? "" : ", ") + n;
      throw Error("unknown transfer function preset \"" + preset + "\" (valid: " + valid + ")");
    }
    tf.table[static_cast<std::size_t>(k)] = glm::vec4(glm::dvec4(rgb, a));
  }
  return tf;
}

// ---- the march --------------------------------------------------------------------------------

double dvr_shade_threshold(const RaySettings& s) {
  return 1e-6 * std::abs(s.tf.high - s.tf.low);
}

bool ray_box(const glm::dvec3& eye, const glm::dvec3& dir, const glm::dvec3& dims, double* t0,
             double* t1) {
  double lo = 0.0, hi = kInf;
  for (int a = 0; a < 3; ++a) {
    const double b0 = -0.5, b1 = dims[a] - 0.5;
    if (dir[a] == 0.0) {
      if (eye[a] < b0 || eye[a] > b1) return false;
      continue;
    }
    double ta = (b0 - eye[a]) / dir[a], tb = (b1 - eye[a]) / dir[a];
    if (ta > tb) std::swap(ta, tb);
    lo = std::max(lo, ta);
    hi = std::min(hi, tb);
  }
  *t0 = lo;
  *t1 = hi;
  return lo < hi;
}

RaySpline::RaySpline(const ArrayD& data, int degree) : data_(data), degree_(degree) {
  if (data.rank() != 3 || data.channels() != 1)
    throw Error("ray-cast reference: a 3-D one-channel volume is needed");
  if (degree != 1 && degree != 3) throw Error("ray-cast reference: degree 1 or 3");
  n_[0] = static_cast<long>(data.dims()[2]);
  n_[1] = static_cast<long>(data.dims()[1]);
  n_[2] = static_cast<long>(data.dims()[0]);
}

double RaySpline::eval(const glm::dvec3& p, int derivative_axis) const {
  double w[3][4];
  long k[3][4];
  for (int a = 0; a < 3; ++a)
    axis_weights(p[a], n_[a], degree_, Boundary::Reflect, a == derivative_axis ? 1 : 0, w[a], k[a]);
  const int taps = degree_ + 1;
  const double* c = data_.data();
  double acc = 0.0;
  for (int z = 0; z < taps; ++z) {
    double plane = 0.0;
    for (int y = 0; y < taps; ++y) {
      const double* row = c + (k[2][z] * n_[1] + k[1][y]) * n_[0];
      double r = 0.0;
      for (int x = 0; x < taps; ++x) r += w[0][x] * row[k[0][x]];
      plane += w[1][y] * r;
    }
    acc += w[2][z] * plane;
  }
  return acc;
}

double RaySpline::value(const glm::dvec3& p) const {
  return eval(p, -1);
}

glm::dvec3 RaySpline::gradient(const glm::dvec3& p) const {
  glm::dvec3 g;
  for (int a = 0; a < 3; ++a) {
    if (degree_ == 3) {
      g[a] = eval(p, a);
    } else {
      glm::dvec3 e(0.0);
      e[a] = 1.0;
      g[a] = 0.5 * (eval(p + e, -1) - eval(p - e, -1));
    }
  }
  return g;
}

RayTruth::RayTruth(std::function<double(const double*)> f) : f_(std::move(f)) {
  if (!f_) throw Error("ray-cast reference: no analytic function");
}

double RayTruth::value(const glm::dvec3& p) const {
  const double zyx[3] = {p.z, p.y, p.x};
  return f_(zyx);
}

glm::dvec3 RayTruth::gradient(const glm::dvec3& p) const {
  constexpr double h = 1e-4;
  glm::dvec3 g;
  for (int a = 0; a < 3; ++a) {
    glm::dvec3 e(0.0);
    e[a] = h;
    g[a] = (value(p + e) - value(p - e)) / (2.0 * h);
  }
  return g;
}

namespace {

template <class Field>
RayResult march(const Field& s, const RayFrame& f, const RaySettings& st, int x, int y) {
  RayResult out;
  const glm::dvec3 w = f.w0 + static_cast<double>(x) * f.wx + static_cast<double>(y) * f.wy;
  const glm::dvec3 di = f.d0 + static_cast<double>(x) * f.dx + static_cast<double>(y) * f.dy;
  const double len = glm::length(di);
  const glm::dvec3 dir = di / len;
  const double mm = glm::length(w) / len;  // mm per index unit along this ray
  double t0 = 0, t1 = 0;
  if (!ray_box(f.eye, dir, f.dims, &t0, &t1)) return out;
  const double h = st.step;
  const auto segments = static_cast<long>(std::ceil((t1 - t0) / h));
  if (st.mode == RayMode::Mip) out.value = -kInf;
  bool have_prev = false;
  double prev_t = 0.0;
  for (long k = 0; k < segments; ++k) {
    const double a = t0 + static_cast<double>(k) * h;
    const double b = std::min(a + h, t1);
    const double t = 0.5 * (a + b);
    const double v = s.value(f.eye + t * dir);
    ++out.samples;
    if (st.mode == RayMode::Mip) {
      out.hit = true;
      out.value = std::max(out.value, v);
    } else if (st.mode == RayMode::Iso) {
      if (v >= st.iso) {
        double t_hit = t;
        if (have_prev) {  // bisection on [prev_t, t]: below iso at the start, not below at the end
          double lo = prev_t, hi = t;
          for (int i = 0; i < 60; ++i) {
            const double m = 0.5 * (lo + hi);
            (s.value(f.eye + m * dir) >= st.iso ? hi : lo) = m;
          }
          t_hit = 0.5 * (lo + hi);
        }
        out.hit = true;
        out.depth_mm = t_hit * mm;
        const glm::dvec3 g = f.normal_matrix * s.gradient(f.eye + t_hit * dir);
        glm::dvec3 n = glm::length(g) > 0.0 ? -glm::normalize(g) : f.light;
        if (glm::dot(n, -glm::normalize(w)) < 0.0) n = -n;
        out.normal = n;
        return out;
      }
      have_prev = true;
      prev_t = t;
    } else {
      glm::dvec4 c = st.tf.lookup(v);
      if (st.dvr_shade && c.a > 0.0) {
        const glm::dvec3 g = f.normal_matrix * s.gradient(f.eye + t * dir);
        const double len_g = glm::length(g);
        if (len_g > dvr_shade_threshold(st)) {
          const double shade = 0.35 + 0.65 * std::abs(glm::dot(g / len_g, glm::normalize(w)));
          c = glm::dvec4(glm::dvec3(c) * shade, c.a);
        }
      }
      const double sigma = c.a * st.tf.opacity_per_mm;
      const double alpha = 1.0 - std::exp(-sigma * (b - a) * mm);
      const double wgt = (1.0 - out.rgba.a) * alpha;
      out.rgba += glm::dvec4(wgt * glm::dvec3(c), wgt);
      out.hit = true;
      if (out.rgba.a >= st.dvr_cutoff) break;
    }
  }
  return out;
}

}  // namespace

RayResult march_ray(const RaySpline& s, const RayFrame& f, const RaySettings& st, int x, int y) {
  return march(s, f, st, x, y);
}

RayResult march_ray(const RayTruth& t, const RayFrame& f, const RaySettings& st, int x, int y) {
  return march(t, f, st, x, y);
}

double angle_between_deg(const glm::dvec3& a, const glm::dvec3& b) {
  return 2.0 * std::asin(std::min(1.0, glm::length(a - b) / 2.0)) * 180.0 / kPi;
}

RayErrors compare_rays(RayMode mode, const std::vector<glm::vec4>& gpu,
                       const std::vector<RayResult>& reference) {
  if (gpu.size() != reference.size())
    throw Error("ray-cast accuracy: " + std::to_string(gpu.size()) + " GPU rays against " +
                std::to_string(reference.size()) + " reference rays");
  RayErrors e;
  double sum = 0.0, sum_angle = 0.0;
  for (std::size_t i = 0; i < gpu.size(); ++i) {
    const glm::vec4& g = gpu[i];
    const RayResult& r = reference[i];
    double err = 0.0;
    if (mode == RayMode::Mip) {
      if (!r.hit || g.y < 0.5f) continue;
      err = std::abs(static_cast<double>(g.x) - r.value);
    } else if (mode == RayMode::Iso) {
      const bool gpu_hit = g.x >= 0.0f;
      if (gpu_hit != r.hit) {
        ++e.mismatched;
        continue;
      }
      if (!r.hit) continue;
      err = std::abs(static_cast<double>(g.x) - r.depth_mm);
      const double angle = angle_between_deg(glm::dvec3(g.y, g.z, g.w), r.normal);
      sum_angle += angle * angle;
      e.angle_max = std::max(e.angle_max, angle);
    } else {
      if (!r.hit) continue;
      for (int c = 0; c < 4; ++c)
        err = std::max(err, std::abs(static_cast<double>(g[c]) - r.rgba[c]));
    }
    sum += err * err;
    e.max = std::max(e.max, err);
    ++e.rays;
  }
  if (e.rays > 0) {
    e.rms = std::sqrt(sum / static_cast<double>(e.rays));
    e.angle_rms = std::sqrt(sum_angle / static_cast<double>(e.rays));
  }
  return e;
}

}  // namespace sv::viewer
