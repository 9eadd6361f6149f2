#include "exec/kernels/special_math.h"

#include <cmath>
#include <limits>

namespace kiln::exec {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// A starting point for erfinv: the single-precision approximation of
// M. Giles, "Approximating the erfinv function" (GPU Computing Gems, 2010),
// good to about 1e-7 relative; Newton steps below finish the job.
double ErfInvInitial(double x) {
  double w = -std::log((1.0 - x) * (1.0 + x));
  double p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = std::sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  return p * x;
}

}  // namespace

double ErfInv(double y) {
  if (std::isnan(y) || y < -1.0 || y > 1.0) return kNaN;
  if (y == 1.0) return kInf;
  if (y == -1.0) return -kInf;
  if (y == 0.0) return y;
  double a = std::fabs(y);
  double x = ErfInvInitial(a);
  if (!std::isfinite(x)) x = 6.0;
  // Newton on erf(x) = a, or on erfc(x) = 1 - a (exact for a >= 0.5) where
  // erf is too close to 1 to resolve the residual.
  const double two_over_sqrt_pi = 1.1283791670955126;
  for (int i = 0; i < 3; ++i) {
    double residual = a < 0.5 ? std::erf(x) - a : (1.0 - a) - std::erfc(x);
    double slope = two_over_sqrt_pi * std::exp(-x * x);
    if (slope == 0.0) break;
    x -= residual / slope;
  }
  return y < 0 ? -x : x;
}

double Lgamma(double x) {
  int sign;
  return lgamma_r(x, &sign);
}

double Digamma(double x) {
  if (std::isnan(x) || x == -kInf) return kNaN;
  if (x == kInf) return kInf;
  double result = 0.0;
  if (x <= 0.0 && x == std::floor(x)) return kNaN;  // a pole
  if (x < 0.5) {
    // Reflection: psi(1 - x) - psi(x) = pi / tan(pi x).
    result = -kPi / std::tan(kPi * x);
    x = 1.0 - x;
  }
  while (x < 6.0) {
    result -= 1.0 / x;
    x += 1.0;
  }
  // Asymptotic series: ln x - 1/(2x) - sum B_2k / (2k x^2k).
  double inv = 1.0 / x;
  double inv2 = inv * inv;
  double series =
      inv2 *
      (1.0 / 12 -
       inv2 * (1.0 / 120 -
               inv2 * (1.0 / 252 -
                       inv2 * (1.0 / 240 -
                               inv2 * (1.0 / 132 - inv2 * (691.0 / 32760 -
                                                           inv2 / 12.0))))));
  return result + std::log(x) - 0.5 * inv - series;
}

double BesselI1e(double x) {
  if (std::isnan(x)) return x;
  double a = std::fabs(x);
  double result;
  if (a == kInf) {
    result = 0.0;
  } else if (a <= 30.0) {
    // I1(a) = sum (a/2)^(2k+1) / (k! (k+1)!): all terms positive.
    double half = a / 2.0;
    double term = half;
    double sum = term;
    double q = half * half;
    for (int k = 1; k < 500; ++k) {
      term *= q / (static_cast<double>(k) * (k + 1));
      sum += term;
      if (term < sum * 1e-17) break;
    }
    result = sum * std::exp(-a);
  } else {
    // e^-a I1(a) ~ 1/sqrt(2 pi a) * sum (-1)^k prod_{j<=k} (4 - (2j-1)^2)
    // / (k! (8a)^k), stopped at the smallest term.
    double sum = 1.0;
    double term = 1.0;
    for (int k = 1; k < 60; ++k) {
      double odd = 2.0 * k - 1.0;
      double next = term * -(4.0 - odd * odd) / (k * 8.0 * a);
      if (std::fabs(next) >= std::fabs(term)) break;
      term = next;
      sum += term;
    }
    result = sum / std::sqrt(2.0 * kPi * a);
  }
  return x < 0 ? -result : result;
}

}  // namespace kiln::exec
