// Index-to-world geometry: construction from spacing, checks, nibabel-style orientation codes,
// resampled grids and small 4x4 helpers.
#include "splineview/geometry.h"

#include <cmath>
#include <string>

#include "splineview/error.h"
#include "splineview/text.h"

namespace sv {

namespace {

using Mat3 = std::array<std::array<double, 3>, 3>;

double det3(const Mat3& m) {
  return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
         m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
         m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

// Inverse transpose of a 3x3 matrix (false when singular).
bool inverse_transpose3(const Mat3& m, Mat3* out) {
  const double d = det3(m);
  if (!(std::fabs(d) > 0) || !std::isfinite(d)) return false;
  // Cofactor matrix divided by the determinant is the inverse transpose.
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      const int r1 = (r + 1) % 3, r2 = (r + 2) % 3, c1 = (c + 1) % 3, c2 = (c + 2) % 3;
      (*out)[r][c] = (m[r1][c1] * m[r2][c2] - m[r1][c2] * m[r2][c1]) / d;
    }
  return true;
}

// The orthogonal polar factor of a non-singular 3x3 matrix (the rotation or rotoreflection
// closest to it), by Newton's iteration Q <- (Q + Q^-T) / 2, which converges quadratically.
bool polar_rotation(Mat3 q, Mat3* out) {
  for (int it = 0; it < 100; ++it) {
    Mat3 inv_t;
    if (!inverse_transpose3(q, &inv_t)) return false;
    double change = 0;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) {
        const double v = 0.5 * (q[r][c] + inv_t[r][c]);
        change = std::fmax(change, std::fabs(v - q[r][c]));
        q[r][c] = v;
      }
    if (change < 1e-15) break;
  }
  *out = q;
  return true;
}

}  // namespace

Mat4 mat4_identity() {
  return Mat4{{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}};
}

Mat4 mat4_mul(const Mat4& a, const Mat4& b) {
  Mat4 r{};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      double s = 0;
      for (int k = 0; k < 4; ++k) s += a[i][k] * b[k][j];
      r[i][j] = s;
    }
  return r;
}

Mat4 mat4_inverse(const Mat4& m) {
  // Gauss-Jordan elimination with partial pivoting.
  double a[4][8];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 8; ++j) a[i][j] = j < 4 ? m[i][j] : (j - 4 == i ? 1.0 : 0.0);
  double scale = 0;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) scale = std::fmax(scale, std::fabs(m[i][j]));
  for (int c = 0; c < 4; ++c) {
    int p = c;
    for (int r = c + 1; r < 4; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[p][c])) p = r;
    if (!(std::fabs(a[p][c]) > 1e-12 * scale)) throw Error("the affine is singular");
    if (p != c)
      for (int j = 0; j < 8; ++j) std::swap(a[p][j], a[c][j]);
    const double d = a[c][c];
    for (int j = 0; j < 8; ++j) a[c][j] /= d;
    for (int r = 0; r < 4; ++r) {
      if (r == c) continue;
      const double f = a[r][c];
      if (f == 0) continue;
      for (int j = 0; j < 8; ++j) a[r][j] -= f * a[c][j];
    }
  }
  Mat4 r{};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) r[i][j] = a[i][j + 4];
  return r;
}

Geometry geometry_from_spacing(const std::vector<double>& spacing) {
  if (spacing.empty() || spacing.size() > 3)
    throw Error("spacing must have 1 to 3 values, got " + std::to_string(spacing.size()));
  Geometry g;
  const std::size_t rank = spacing.size();
  for (std::size_t a = 0; a < rank; ++a) {
    const double s = spacing[a];
    if (!(std::isfinite(s) && s > 0))
      throw Error("spacing of axis " + std::to_string(a) + " must be finite and > 0, got " +
                  format_number(s));
    const std::size_t col = rank - 1 - a;  // array axis a is index axis rank-1-a
    g.affine[col][col] = s;
  }
  return g;
}

std::vector<double> geometry_spacing(const Geometry& g, std::size_t rank) {
  std::vector<double> s(rank);
  for (std::size_t a = 0; a < rank; ++a) {
    const std::size_t col = rank - 1 - a;
    double n = 0;
    for (int r = 0; r < 3; ++r) n += g.affine[r][col] * g.affine[r][col];
    s[a] = std::sqrt(n);
  }
  return s;
}

void check_geometry(const Geometry& g, std::size_t rank, const std::string& what) {
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c)
      if (!std::isfinite(g.affine[r][c]))
        throw Error(what + ": the affine has a non-finite entry (row " + std::to_string(r) +
                    ", column " + std::to_string(c) + ")");
  if (g.affine[3][0] != 0 || g.affine[3][1] != 0 || g.affine[3][2] != 0 || g.affine[3][3] != 1)
    throw Error(what + ": the affine's last row is not 0 0 0 1");
  if (rank < 1 || rank > 3) throw Error(what + ": rank must be 1 to 3");
  // Gram matrix of the used columns: full rank <=> positive definite.
  double norms[3];
  for (std::size_t c = 0; c < rank; ++c) {
    double n = 0;
    for (int r = 0; r < 3; ++r) n += g.affine[r][c] * g.affine[r][c];
    norms[c] = std::sqrt(n);
    if (!(norms[c] > 0))
      throw Error(what + ": the direction of index axis " + std::string(1, "ijk"[c]) + " is zero");
  }
  if (rank >= 2) {
    Mat3 m{};
    for (int r = 0; r < 3; ++r)
      for (std::size_t c = 0; c < 3; ++c) m[r][c] = c < rank ? g.affine[r][c] / norms[c] : 0.0;
    if (rank == 2) {
      // Complete with the cross product of the two unit columns.
      m[0][2] = m[1][0] * m[2][1] - m[2][0] * m[1][1];
      m[1][2] = m[2][0] * m[0][1] - m[0][0] * m[2][1];
      m[2][2] = m[0][0] * m[1][1] - m[1][0] * m[0][1];
      const double n = std::sqrt(m[0][2] * m[0][2] + m[1][2] * m[1][2] + m[2][2] * m[2][2]);
      if (n > 0)
        for (int r = 0; r < 3; ++r) m[r][2] /= n;
    }
    if (!(std::fabs(det3(m)) > 1e-9))
      throw Error(what + ": the index axes' directions are linearly dependent");
  }
}

std::string orientation_code(const Geometry& g) {
  Mat3 m{};
  for (int c = 0; c < 3; ++c) {
    double n = 0;
    for (int r = 0; r < 3; ++r) n += g.affine[r][c] * g.affine[r][c];
    n = std::sqrt(n);
    if (!(n > 0)) return "";
    for (int r = 0; r < 3; ++r) m[r][c] = g.affine[r][c] / n;
  }
  Mat3 q;
  if (!polar_rotation(m, &q)) return "";
  static const char kLetters[3][2] = {{'L', 'R'}, {'P', 'A'}, {'I', 'S'}};
  std::string code(3, '?');
  for (int c = 0; c < 3; ++c) {
    int best = -1;
    for (int r = 0; r < 3; ++r)
      if (q[r][c] != 0 && (best < 0 || std::fabs(q[r][c]) > std::fabs(q[best][c]))) best = r;
    if (best < 0) return "";
    code[c] = kLetters[best][q[best][c] > 0 ? 1 : 0];
    for (int c2 = 0; c2 < 3; ++c2) q[best][c2] = 0;  // each world axis once
  }
  return code;
}

Vec3 index_to_world(const Geometry& g, const Vec3& ijk) {
  Vec3 w{};
  for (int r = 0; r < 3; ++r)
    w[r] = g.affine[r][0] * ijk[0] + g.affine[r][1] * ijk[1] + g.affine[r][2] * ijk[2] +
           g.affine[r][3];
  return w;
}

Vec3 world_to_index(const Geometry& g, const Vec3& xyz) {
  const Mat4 inv = mat4_inverse(g.affine);
  Vec3 v{};
  for (int r = 0; r < 3; ++r)
    v[r] = inv[r][0] * xyz[0] + inv[r][1] * xyz[1] + inv[r][2] * xyz[2] + inv[r][3];
  return v;
}

Geometry geometry_resampled(const Geometry& g, const Vec3& scale_ijk, const Vec3& offset_ijk) {
  Mat4 s = mat4_identity();
  for (int a = 0; a < 3; ++a) {
    s[a][a] = scale_ijk[a];
    s[a][3] = offset_ijk[a];
  }
  Geometry out = g;
  out.affine = mat4_mul(g.affine, s);
  return out;
}

Mat4 flip_ras_lps(const Mat4& m) {
  Mat4 r = m;
  for (int c = 0; c < 4; ++c) {
    r[0][c] = -r[0][c];
    r[1][c] = -r[1][c];
  }
  return r;
}

}  // namespace sv
