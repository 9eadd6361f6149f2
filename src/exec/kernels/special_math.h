// Special functions of the CHLO ops, in double precision (f32 callers round
// the result once).
#ifndef KILN_EXEC_KERNELS_SPECIAL_MATH_H_
#define KILN_EXEC_KERNELS_SPECIAL_MATH_H_

namespace kiln::exec {

// The inverse of erf on [-1, 1] (±inf at ±1, NaN outside).
double ErfInv(double y);
// The digamma function psi(x) (NaN at the poles 0, -1, -2, ...).
double Digamma(double x);
// log|Gamma(x)| (thread-safe, unlike std::lgamma on glibc).
double Lgamma(double x);
// exp(-|x|) * I1(x), the exponentially scaled modified Bessel function of
// the first kind of order one.
double BesselI1e(double x);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_SPECIAL_MATH_H_
