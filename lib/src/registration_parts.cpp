// The pieces the CPU registration objectives share (registration_parts.h).
#include "registration_parts.h"

#include <algorithm>

#include "parallel.h"
#include "splineview/bspline.h"

namespace sv::detail {

FfdView ffd_view(const std::vector<std::size_t>& image_shape,
                 const std::vector<std::size_t>& grid_shape, const std::vector<int>& spacing) {
  FfdView v;
  v.R = image_shape.size();
  v.off = 3 - v.R;
  for (std::size_t a = 0; a < v.R; ++a) {
    v.N[a + v.off] = image_shape[a];
    v.M[a + v.off] = grid_shape[a];
    v.delta[a + v.off] = spacing[a];
  }
  return v;
}

void spline_taps(double x, long n, Boundary b, SplineTaps& t) {
  const double fl = std::floor(x);
  if (fl >= 1 && fl + 2 <= static_cast<double>(n - 1)) {
    // Inside: the four taps floor(x) - 1 .. floor(x) + 2 need no boundary handling (the same
    // weights as axis_weights computes there, from the fractional offset).
    const long first = static_cast<long>(fl) - 1;
    for (int j = 0; j < 4; ++j) t.k[j] = first + j;
    bspline_weights_frac<double>(3, x - fl, t.w, 0);
    bspline_weights_frac<double>(3, x - fl, t.dw, 1);
    return;
  }
  long k2[4];
  axis_weights(x, n, 3, b, 0, t.w, t.k);
  axis_weights(x, n, 3, b, 1, t.dw, k2);
}

std::vector<double> ffd_weight_rows(int delta) {
  std::vector<double> rows(static_cast<std::size_t>(delta) * 4);
  for (int r = 0; r < delta; ++r)
    bspline_weights_frac<double>(3, static_cast<double>(r) / delta, rows.data() + r * 4, 0);
  return rows;
}

void ffd_adjoint(const Array<double>& g, const FfdView& v,
                 const std::vector<std::size_t>& grid_shape, unsigned threads,
                 Array<double>& gradient) {
  const std::size_t R = v.R;
  const std::size_t* N = v.N;
  const std::size_t* M = v.M;
  const int* delta = v.delta;
  const std::size_t rows = v.rows();
  const std::vector<double> wx = ffd_weight_rows(delta[2]), wy = ffd_weight_rows(delta[1]),
                            wz = ffd_weight_rows(delta[0]);
  // A[z][y][kx] = sum_x g[z][y][x] wx.
  std::vector<double> A(rows * M[2] * R, 0.0);
  parallel_for(rows, thread_count(threads, rows, 8), [&](std::size_t b, std::size_t e) {
    for (std::size_t row = b; row < e; ++row) {
      double* ar = A.data() + row * M[2] * R;
      const double* gr = g.data() + row * N[2] * R;
      for (std::size_t x = 0; x < N[2]; ++x) {
        const std::size_t tile = x / delta[2], r = x % delta[2];
        const double* w = wx.data() + r * 4;
        for (int n = 0; n < 4; ++n)
          for (std::size_t c = 0; c < R; ++c) ar[(tile + n) * R + c] += w[n] * gr[x * R + c];
      }
    }
  });
  // B[z][ky][kx] = sum_y A[z][y][kx] wy.
  const std::size_t plane = M[1] * M[2] * R;
  std::vector<double> B(N[0] * plane, 0.0);
  parallel_for(N[0], thread_count(threads, N[0], 1), [&](std::size_t b, std::size_t e) {
    for (std::size_t z = b; z < e; ++z) {
      double* bp = B.data() + z * plane;
      for (std::size_t y = 0; y < N[1]; ++y) {
        const std::size_t tile = y / delta[1], r = y % delta[1];
        const double* w = wy.data() + r * 4;
        const double* ar = A.data() + (z * N[1] + y) * M[2] * R;
        for (int m = 0; m < 4; ++m) {
          double* br = bp + (tile + m) * M[2] * R;
          for (std::size_t i = 0; i < M[2] * R; ++i) br[i] += w[m] * ar[i];
        }
      }
    }
  });
  // C[kz][ky][kx] = sum_z B[z][ky][kx] wz, split over ky (each output row summed in z order).
  gradient = Array<double>(grid_shape, R);
  double* C = gradient.data();
  if (R == 2) {
    std::copy(B.begin(), B.end(), C);
  } else {
    parallel_for(M[1], thread_count(threads, M[1], 1), [&](std::size_t b, std::size_t e) {
      const std::size_t len = M[2] * R;
      for (std::size_t z = 0; z < N[0]; ++z) {
        const std::size_t tile = z / delta[0], r = z % delta[0];
        const double* w = wz.data() + r * 4;
        for (int l = 0; l < 4; ++l)
          for (std::size_t ky = b; ky < e; ++ky) {
            double* cr = C + ((tile + l) * M[1] + ky) * len;
            const double* br = B.data() + z * plane + ky * len;
            for (std::size_t i = 0; i < len; ++i) cr[i] += w[l] * br[i];
          }
      }
    });
  }
}

}  // namespace sv::detail
