// B-spline basis of degree 0..7: values, weights with derivatives, prefilter poles and gain.
#include "splineview/bspline.h"

#include <cmath>
#include <string>

#include "splineview/error.h"

namespace sv {

void check_degree(int n, int lo, int hi, const char* what) {
  if (n < lo || n > hi)
    throw Error(std::string(what) + " must be between " + std::to_string(lo) + " and " +
                std::to_string(hi) + ", got " + std::to_string(n));
}

template <class T>
void bspline_weights_frac(int n, T u, T* w, int deriv) {
  check_degree(n, 0, kMaxDegree);
  check_degree(deriv, 0, n, "derivative order");
  // Cox-de Boor for uniform knots: row d holds the d+1 non-zero basis values of degree d at
  // offset u. Every term is a sum of non-negative products, so nothing cancels.
  const int top = n - deriv;
  w[0] = T(1);
  for (int d = 1; d <= top; ++d) {
    const T inv = T(1) / T(d);
    T prev = w[0];
    w[0] = (T(1) - u) * prev * inv;
    for (int j = 1; j < d; ++j) {
      const T cur = w[j];
      w[j] = ((u + T(d - j)) * prev + (T(j + 1) - u) * cur) * inv;
      prev = cur;
    }
    w[d] = u * prev * inv;
  }
  // Each derivative is the difference of neighbouring weights of one degree lower:
  // beta_n'(t) = beta_{n-1}(t + 1/2) - beta_{n-1}(t - 1/2).
  for (int d = top + 1; d <= n; ++d) {
    w[d] = w[d - 1];
    for (int j = d - 1; j >= 1; --j) w[j] = w[j - 1] - w[j];
    w[0] = -w[0];
  }
}

template <class T>
long bspline_weights(int n, T x, T* w, int deriv) {
  // Odd degrees have knots at integers, even degrees at half-integers.
  const T t = (n % 2 == 0) ? x + T(0.5) : x;
  const T fl = std::floor(t);
  T u = t - fl;
  if (u >= T(1)) u = T(0);  // guards against rounding when x is just below an integer
  bspline_weights_frac<T>(n, u, w, deriv);
  return static_cast<long>(fl) - n / 2;
}

double bspline(int n, double t) {
  check_degree(n, 0, kMaxDegree);
  const double half = (n + 1) / 2.0;
  if (!(std::fabs(t) < half)) {
    // Degree 0 is 1/2 at +-1/2 in the symmetric convention; we use the half-open [-1/2, 1/2).
    return (n == 0 && t == -0.5) ? 1.0 : 0.0;
  }
  double w[kMaxDegree + 1];
  long first = bspline_weights<double>(n, t, w);
  // beta_n(t) is the weight of coefficient index 0 at position t.
  long j = -first;
  return (j >= 0 && j <= n) ? w[j] : 0.0;
}

Poles bspline_poles(int n) {
  check_degree(n, 0, kMaxDegree);
  // Roots |z| < 1 of the z-transform of the sampled B-spline b_n[k] = beta_n(k), computed to
  // 36 digits with mpmath and rounded to double (they match Unser 1999 / Thevenaz 2000).
  Poles p;
  switch (n) {
    case 2:
      p.z = {-0.171572875253809902396622551580603843, 0, 0};
      p.count = 1;
      break;
    case 3:
      p.z = {-0.267949192431122706472553658494127633, 0, 0};
      p.count = 1;
      break;
    case 4:
      p.z = {-0.361341225900220177092212841325675255, -0.0137254292973391213603312269391282041, 0};
      p.count = 2;
      break;
    case 5:
      p.z = {-0.43057534709997379185143478349352011, -0.0430962882032646538227123768225501825, 0};
      p.count = 2;
      break;
    case 6:
      p.z = {-0.488294589303044755130118038883789062, -0.0816792710762375125979377657370590807,
             -0.00141415180832581775108724397655859253};
      p.count = 3;
      break;
    case 7:
      p.z = {-0.535280430796438165542403781681646072, -0.122554615192326690515272264359357344,
             -0.00914869480960827692859302165164785342};
      p.count = 3;
      break;
    default:
      p.count = 0;
      break;
  }
  p.gain = 1.0;
  for (int i = 0; i < p.count; ++i) p.gain *= (1.0 - p.z[i]) * (1.0 - 1.0 / p.z[i]);
  return p;
}

template long bspline_weights<float>(int, float, float*, int);
template long bspline_weights<double>(int, double, double*, int);
template void bspline_weights_frac<float>(int, float, float*, int);
template void bspline_weights_frac<double>(int, double, double*, int);

}  // namespace sv
