// LAPACK's nonsymmetric eigensolvers: gehrd (Hessenberg reduction), gees
// (Schur form) and geev (eigenvalues and eigenvectors).
//
// The Schur form of a Hessenberg matrix comes from the small-bulge
// double-shift (real) and single-shift (complex) QR iterations of xLAHQR,
// with its shifts and deflation tests, which is what LAPACK's xHSEQR runs
// below order 75. geev balances the matrix by diagonal scaling (xGEBAL's
// scaling; permutations are not needed for the result), computes the
// Schur form, then each eigenvector by back substitution on it (forward
// substitution for left eigenvectors, through T's 2x2 blocks for real
// types), transforms back and normalizes as xGEEV does.
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "exec/executor.h"
#include "exec/kernels/lapack.h"
#include "exec/kernels/lapack_util.h"

namespace kiln::exec {
namespace {

using lapack::Abs1;
using lapack::Conj;
using lapack::Matrix;
using lapack::MatrixView;
using lapack::Real;

// Standardizes the real 2x2 block [a b; c d] (xLANV2): on return it is
// upper triangular (real eigenvalues) or has a == d and b * c < 0
// (complex ones), equal to R^T [a b; c d] R with R = [cs -sn; sn cs]; the
// eigenvalues are (rt1r + i rt1i, rt2r + i rt2i) with rt1i >= 0.
template <typename R>
void StandardizeBlock(R& a, R& b, R& c, R& d, R& rt1r, R& rt1i, R& rt2r,
                      R& rt2i, R& cs, R& sn) {
  const R eps = std::numeric_limits<R>::epsilon();
  const R safmin = std::numeric_limits<R>::min();
  const R safmn2 = std::ldexp(
      R(1), static_cast<int>(std::log(safmin / eps) / std::log(R(2)) / 2));
  const R safmx2 = 1 / safmn2;
  auto sign = [](R x) { return std::copysign(R(1), x); };
  if (c == 0) {
    cs = 1;
    sn = 0;
  } else if (b == 0) {
    // Swap rows and columns.
    cs = 0;
    sn = 1;
    std::swap(a, d);
    b = -c;
    c = 0;
  } else if (a - d == 0 && sign(b) != sign(c)) {
    cs = 1;
    sn = 0;
  } else {
    R temp = a - d;
    R p = temp / 2;
    R bcmax = std::max(std::abs(b), std::abs(c));
    R bcmis = std::min(std::abs(b), std::abs(c)) * sign(b) * sign(c);
    R scale = std::max(std::abs(p), bcmax);
    R z = (p / scale) * p + (bcmax / scale) * bcmis;
    if (z >= 4 * eps) {
      // Real eigenvalues: make the block upper triangular.
      z = p + std::copysign(std::sqrt(scale) * std::sqrt(z), p);
      a = d + z;
      d = d - (bcmax / z) * bcmis;
      R tau = std::hypot(c, z);
      cs = z / tau;
      sn = c / tau;
      b = b - c;
      c = 0;
    } else {
      // Complex or nearly equal real eigenvalues: equalize the diagonal.
      R sigma = b + c;
      for (int count = 0; count < 20; ++count) {
        R scale2 = std::max(std::abs(temp), std::abs(sigma));
        if (scale2 >= safmx2) {
          sigma *= safmn2;
          temp *= safmn2;
        } else if (scale2 <= safmn2) {
          sigma *= safmx2;
          temp *= safmx2;
        } else {
          break;
        }
      }
      p = temp / 2;
      R tau = std::hypot(sigma, temp);
      cs = std::sqrt((1 + std::abs(sigma) / tau) / 2);
      sn = -(p / (tau * cs)) * sign(sigma);
      R aa = a * cs + b * sn, bb = -a * sn + b * cs;
      R cc = c * cs + d * sn, dd = -c * sn + d * cs;
      a = aa * cs + cc * sn;
      b = bb * cs + dd * sn;
      c = -aa * sn + cc * cs;
      d = -bb * sn + dd * cs;
      temp = (a + d) / 2;
      a = temp;
      d = temp;
      if (c != 0) {
        if (b != 0) {
          if (sign(b) == sign(c)) {
            // Real eigenvalues after all: make it upper triangular.
            R sab = std::sqrt(std::abs(b)), sac = std::sqrt(std::abs(c));
            p = std::copysign(sab * sac, c);
            tau = 1 / std::sqrt(std::abs(b + c));
            a = temp + p;
            d = temp - p;
            b = b - c;
            c = 0;
            R cs1 = sab * tau, sn1 = sac * tau;
            R rotated = cs * cs1 - sn * sn1;
            sn = cs * sn1 + sn * cs1;
            cs = rotated;
          }
        } else {
          b = -c;
          c = 0;
          R rotated = cs;
          cs = -sn;
          sn = rotated;
        }
      }
    }
  }
  rt1r = a;
  rt2r = d;
  if (c == 0) {
    rt1i = 0;
    rt2i = 0;
  } else {
    rt1i = std::sqrt(std::abs(b)) * std::sqrt(std::abs(c));
    rt2i = -rt1i;
  }
}

constexpr int kExceptionalShiftPeriod = 10;

// The real Schur form of the upper Hessenberg `h` (zero below its
// subdiagonal) in place, accumulating the transformations into the
// columns of `z` when `want_z` (xLAHQR with WANTT). Written with LAPACK's
// 1-based indices. Returns info (k > 0: rows k.. did not converge).
template <typename R>
int32_t RealSchur(MatrixView<R> h, MatrixView<R> z, bool want_z, R* wr, R* wi) {
  const int64_t n = h.rows;
  if (n == 0) return 0;
  auto H = [&](int64_t i, int64_t j) -> R& { return h(i - 1, j - 1); };
  auto rotate = [](R cs, R sn, R& x, R& y) {
    R tx = x, ty = y;
    x = cs * tx + sn * ty;
    y = cs * ty - sn * tx;
  };
  if (n == 1) {
    wr[0] = H(1, 1);
    wi[0] = 0;
    return 0;
  }
  const R ulp = std::numeric_limits<R>::epsilon();
  const R smlnum = std::numeric_limits<R>::min() * (R(n) / ulp);
  const int64_t ilo = 1, ihi = n, i1 = 1, i2 = n;
  const int64_t itmax = 30 * std::max<int64_t>(10, n);
  int64_t kdefl = 0;
  int64_t i = ihi;
  while (i >= ilo) {
    int64_t l = ilo;
    bool split = false;
    for (int64_t its = 0; its <= itmax; ++its) {
      // A single small subdiagonal element (Ahues & Kressner's test).
      int64_t k = i;
      for (; k >= l + 1; --k) {
        if (std::abs(H(k, k - 1)) <= smlnum) break;
        R tst = std::abs(H(k - 1, k - 1)) + std::abs(H(k, k));
        if (tst == 0) {
          if (k - 2 >= ilo) tst += std::abs(H(k - 1, k - 2));
          if (k + 1 <= ihi) tst += std::abs(H(k + 1, k));
        }
        if (std::abs(H(k, k - 1)) <= ulp * tst) {
          R ab = std::max(std::abs(H(k, k - 1)), std::abs(H(k - 1, k)));
          R ba = std::min(std::abs(H(k, k - 1)), std::abs(H(k - 1, k)));
          R aa =
              std::max(std::abs(H(k, k)), std::abs(H(k - 1, k - 1) - H(k, k)));
          R bb =
              std::min(std::abs(H(k, k)), std::abs(H(k - 1, k - 1) - H(k, k)));
          R s = aa + ab;
          if (ba * (ab / s) <= std::max(smlnum, ulp * (bb * (aa / s)))) break;
        }
      }
      l = k;
      if (l > ilo) H(l, l - 1) = 0;
      if (l >= i - 1) {
        split = true;
        break;
      }
      ++kdefl;
      R h11, h12, h21, h22;
      if (kdefl % (2 * kExceptionalShiftPeriod) == 0) {
        R s = std::abs(H(i, i - 1)) + std::abs(H(i - 1, i - 2));
        h11 = R(0.75) * s + H(i, i);
        h12 = R(-0.4375) * s;
        h21 = s;
        h22 = h11;
      } else if (kdefl % kExceptionalShiftPeriod == 0) {
        R s = std::abs(H(l + 1, l)) + std::abs(H(l + 2, l + 1));
        h11 = R(0.75) * s + H(l, l);
        h12 = R(-0.4375) * s;
        h21 = s;
        h22 = h11;
      } else {
        // Francis' double shift: the eigenvalues of the trailing 2x2.
        h11 = H(i - 1, i - 1);
        h21 = H(i, i - 1);
        h12 = H(i - 1, i);
        h22 = H(i, i);
      }
      R rt1r = 0, rt1i = 0, rt2r = 0, rt2i = 0;
      R s = std::abs(h11) + std::abs(h12) + std::abs(h21) + std::abs(h22);
      if (s != 0) {
        h11 /= s;
        h21 /= s;
        h12 /= s;
        h22 /= s;
        R tr = (h11 + h22) / 2;
        R det = (h11 - tr) * (h22 - tr) - h12 * h21;
        R rtdisc = std::sqrt(std::abs(det));
        if (det >= 0) {
          rt1r = tr * s;
          rt2r = rt1r;
          rt1i = rtdisc * s;
          rt2i = -rt1i;
        } else {
          // Two real shifts: use the one closer to h22 twice.
          rt1r = tr + rtdisc;
          rt2r = tr - rtdisc;
          if (std::abs(rt1r - h22) <= std::abs(rt2r - h22)) {
            rt1r *= s;
            rt2r = rt1r;
          } else {
            rt2r *= s;
            rt1r = rt2r;
          }
          rt1i = rt2i = 0;
        }
      }
      // Two consecutive small subdiagonal elements: start the sweep at m.
      int64_t m = i - 2;
      R v[3];
      for (; m >= l; --m) {
        R h21s = H(m + 1, m);
        R scale = std::abs(H(m, m) - rt2r) + std::abs(rt2i) + std::abs(h21s);
        h21s = H(m + 1, m) / scale;
        v[0] = h21s * H(m, m + 1) +
               (H(m, m) - rt1r) * ((H(m, m) - rt2r) / scale) -
               rt1i * (rt2i / scale);
        v[1] = h21s * (H(m, m) + H(m + 1, m + 1) - rt1r - rt2r);
        v[2] = h21s * H(m + 2, m + 1);
        scale = std::abs(v[0]) + std::abs(v[1]) + std::abs(v[2]);
        v[0] /= scale;
        v[1] /= scale;
        v[2] /= scale;
        if (m == l) break;
        R h00 = std::abs(H(m, m - 1)) * (std::abs(v[1]) + std::abs(v[2]));
        R h01 = ulp * std::abs(v[0]) *
                (std::abs(H(m - 1, m - 1)) + std::abs(H(m, m)) +
                 std::abs(H(m + 1, m + 1)));
        if (h00 <= h01) break;
      }
      // The double-shift QR sweep: chase the bulge down with reflectors.
      for (int64_t kk = m; kk <= i - 1; ++kk) {
        const int64_t nr = std::min<int64_t>(3, i - kk + 1);
        if (kk > m) {
          for (int64_t t = 0; t < nr; ++t) v[t] = H(kk + t, kk - 1);
        }
        R t1 = lapack::MakeReflector(nr, v[0], &v[1], 1);
        if (kk > m) {
          H(kk, kk - 1) = v[0];
          H(kk + 1, kk - 1) = 0;
          if (kk < i - 1) H(kk + 2, kk - 1) = 0;
        } else if (m > l) {
          H(kk, kk - 1) *= 1 - t1;
        }
        R v2 = v[1], t2 = t1 * v2;
        if (nr == 3) {
          R v3 = v[2], t3 = t1 * v3;
          for (int64_t j = kk; j <= i2; ++j) {
            R sum = H(kk, j) + v2 * H(kk + 1, j) + v3 * H(kk + 2, j);
            H(kk, j) -= sum * t1;
            H(kk + 1, j) -= sum * t2;
            H(kk + 2, j) -= sum * t3;
          }
          for (int64_t j = i1; j <= std::min(kk + 3, i); ++j) {
            R sum = H(j, kk) + v2 * H(j, kk + 1) + v3 * H(j, kk + 2);
            H(j, kk) -= sum * t1;
            H(j, kk + 1) -= sum * t2;
            H(j, kk + 2) -= sum * t3;
          }
          if (want_z) {
            for (int64_t j = 0; j < n; ++j) {
              R sum = z(j, kk - 1) + v2 * z(j, kk) + v3 * z(j, kk + 1);
              z(j, kk - 1) -= sum * t1;
              z(j, kk) -= sum * t2;
              z(j, kk + 1) -= sum * t3;
            }
          }
        } else if (nr == 2) {
          for (int64_t j = kk; j <= i2; ++j) {
            R sum = H(kk, j) + v2 * H(kk + 1, j);
            H(kk, j) -= sum * t1;
            H(kk + 1, j) -= sum * t2;
          }
          for (int64_t j = i1; j <= i; ++j) {
            R sum = H(j, kk) + v2 * H(j, kk + 1);
            H(j, kk) -= sum * t1;
            H(j, kk + 1) -= sum * t2;
          }
          if (want_z) {
            for (int64_t j = 0; j < n; ++j) {
              R sum = z(j, kk - 1) + v2 * z(j, kk);
              z(j, kk - 1) -= sum * t1;
              z(j, kk) -= sum * t2;
            }
          }
        }
      }
    }
    if (!split) return static_cast<int32_t>(i);
    if (l == i) {
      // A 1x1 block has converged.
      wr[i - 1] = H(i, i);
      wi[i - 1] = 0;
    } else if (l == i - 1) {
      // A 2x2 block: standardize it and apply the rotation to the rest.
      R cs, sn;
      StandardizeBlock(H(i - 1, i - 1), H(i - 1, i), H(i, i - 1), H(i, i),
                       wr[i - 2], wi[i - 2], wr[i - 1], wi[i - 1], cs, sn);
      for (int64_t j = i + 1; j <= i2; ++j)
        rotate(cs, sn, H(i - 1, j), H(i, j));
      for (int64_t j = i1; j <= i - 2; ++j)
        rotate(cs, sn, H(j, i - 1), H(j, i));
      if (want_z) {
        for (int64_t j = 0; j < n; ++j)
          rotate(cs, sn, z(j, i - 2), z(j, i - 1));
      }
    }
    kdefl = 0;
    i = l - 1;
  }
  return 0;
}

// The complex Schur form of the upper Hessenberg `h` in place (xLAHQR for
// complex types: single Wilkinson shifts, real subdiagonal), accumulating
// into `z` when `want_z`. 1-based indices as in LAPACK. Returns info.
template <typename R>
int32_t ComplexSchur(MatrixView<std::complex<R>> h,
                     MatrixView<std::complex<R>> z, bool want_z,
                     std::complex<R>* w) {
  using C = std::complex<R>;
  const int64_t n = h.rows;
  if (n == 0) return 0;
  auto H = [&](int64_t i, int64_t j) -> C& { return h(i - 1, j - 1); };
  auto scale_z = [&](int64_t col, C factor) {
    if (!want_z) return;
    for (int64_t j = 0; j < n; ++j) z(j, col - 1) *= factor;
  };
  if (n == 1) {
    w[0] = H(1, 1);
    return 0;
  }
  const int64_t ilo = 1, ihi = n, i1 = 1, i2 = n;
  // Make the subdiagonal real by a diagonal unitary similarity.
  for (int64_t i = ilo + 1; i <= ihi; ++i) {
    if (H(i, i - 1).imag() == 0) continue;
    C sc = H(i, i - 1) / Abs1(H(i, i - 1));
    sc = std::conj(sc) / std::abs(sc);
    H(i, i - 1) = std::abs(H(i, i - 1));
    for (int64_t j = i; j <= i2; ++j) H(i, j) *= sc;
    for (int64_t j = i1; j <= std::min(i2, i + 1); ++j)
      H(j, i) *= std::conj(sc);
    scale_z(i, std::conj(sc));
  }
  const R ulp = std::numeric_limits<R>::epsilon();
  const R smlnum = std::numeric_limits<R>::min() * (R(n) / ulp);
  const int64_t itmax = 30 * std::max<int64_t>(10, n);
  int64_t kdefl = 0;
  int64_t i = ihi;
  while (i >= ilo) {
    int64_t l = ilo;
    bool split = false;
    for (int64_t its = 0; its <= itmax; ++its) {
      int64_t k = i;
      for (; k >= l + 1; --k) {
        if (Abs1(H(k, k - 1)) <= smlnum) break;
        R tst = Abs1(H(k - 1, k - 1)) + Abs1(H(k, k));
        if (tst == 0) {
          if (k - 2 >= ilo) tst += std::abs(H(k - 1, k - 2).real());
          if (k + 1 <= ihi) tst += std::abs(H(k + 1, k).real());
        }
        if (std::abs(H(k, k - 1).real()) <= ulp * tst) {
          R ab = std::max(Abs1(H(k, k - 1)), Abs1(H(k - 1, k)));
          R ba = std::min(Abs1(H(k, k - 1)), Abs1(H(k - 1, k)));
          R aa = std::max(Abs1(H(k, k)), Abs1(H(k - 1, k - 1) - H(k, k)));
          R bb = std::min(Abs1(H(k, k)), Abs1(H(k - 1, k - 1) - H(k, k)));
          R s = aa + ab;
          if (ba * (ab / s) <= std::max(smlnum, ulp * (bb * (aa / s)))) break;
        }
      }
      l = k;
      if (l > ilo) H(l, l - 1) = 0;
      if (l >= i) {
        split = true;
        break;
      }
      ++kdefl;
      C t;
      if (kdefl % (2 * kExceptionalShiftPeriod) == 0) {
        t = R(0.75) * std::abs(H(i, i - 1).real()) + H(i, i);
      } else if (kdefl % kExceptionalShiftPeriod == 0) {
        t = R(0.75) * std::abs(H(l + 1, l).real()) + H(l, l);
      } else {
        // Wilkinson's shift.
        t = H(i, i);
        C u = std::sqrt(H(i - 1, i)) * std::sqrt(H(i, i - 1));
        R s = Abs1(u);
        if (s != 0) {
          C x = R(0.5) * (H(i - 1, i - 1) - t);
          R sx = Abs1(x);
          s = std::max(s, Abs1(x));
          C y = s * std::sqrt((x / s) * (x / s) + (u / s) * (u / s));
          if (sx > 0) {
            C unit = x / sx;
            if (unit.real() * y.real() + unit.imag() * y.imag() < 0) y = -y;
          }
          t -= u * (u / (x + y));
        }
      }
      // Two consecutive small subdiagonal elements: start at m.
      int64_t m = i - 1;
      C v[2];
      auto start_vector = [&](int64_t row) {
        C h11 = H(row, row), h22 = H(row + 1, row + 1);
        C h11s = h11 - t;
        R h21 = H(row + 1, row).real();
        R s = Abs1(h11s) + std::abs(h21);
        h11s /= s;
        h21 /= s;
        v[0] = h11s;
        v[1] = h21;
        return std::make_pair(h11s, std::make_pair(h11, h22));
      };
      bool found = false;
      for (; m >= l + 1; --m) {
        auto [h11s, diag] = start_vector(m);
        R h21 = v[1].real();
        R h10 = H(m, m - 1).real();
        if (std::abs(h10) * std::abs(h21) <=
            ulp * (Abs1(h11s) * (Abs1(diag.first) + Abs1(diag.second)))) {
          found = true;
          break;
        }
      }
      if (!found) {
        m = l;
        start_vector(l);
      }
      // The single-shift QR sweep.
      for (int64_t kk = m; kk <= i - 1; ++kk) {
        if (kk > m) {
          v[0] = H(kk, kk - 1);
          v[1] = H(kk + 1, kk - 1);
        }
        C t1 = lapack::MakeReflector(2, v[0], &v[1], 1);
        if (kk > m) {
          H(kk, kk - 1) = v[0];
          H(kk + 1, kk - 1) = 0;
        }
        C v2 = v[1];
        R t2 = (t1 * v2).real();
        for (int64_t j = kk; j <= i2; ++j) {
          C sum = std::conj(t1) * H(kk, j) + t2 * H(kk + 1, j);
          H(kk, j) -= sum;
          H(kk + 1, j) -= sum * v2;
        }
        for (int64_t j = i1; j <= std::min(kk + 2, i); ++j) {
          C sum = t1 * H(j, kk) + t2 * H(j, kk + 1);
          H(j, kk) -= sum;
          H(j, kk + 1) -= sum * std::conj(v2);
        }
        if (want_z) {
          for (int64_t j = 0; j < n; ++j) {
            C sum = t1 * z(j, kk - 1) + t2 * z(j, kk);
            z(j, kk - 1) -= sum;
            z(j, kk) -= sum * std::conj(v2);
          }
        }
        if (kk == m && m > l) {
          // Started below l: rescale to keep H(m, m-1) real.
          C temp = C(1) - t1;
          temp /= std::abs(temp);
          H(m + 1, m) *= std::conj(temp);
          if (m + 2 <= i) H(m + 2, m + 1) *= temp;
          for (int64_t j = m; j <= i; ++j) {
            if (j == m + 1) continue;
            for (int64_t c = j + 1; c <= i2; ++c) H(j, c) *= temp;
            for (int64_t r = i1; r <= j - 1; ++r) H(r, j) *= std::conj(temp);
            scale_z(j, std::conj(temp));
          }
        }
      }
      // Keep H(i, i-1) real.
      C temp = H(i, i - 1);
      if (temp.imag() != 0) {
        R rtemp = std::abs(temp);
        H(i, i - 1) = rtemp;
        temp /= rtemp;
        for (int64_t c = i + 1; c <= i2; ++c) H(i, c) *= std::conj(temp);
        for (int64_t r = i1; r <= i - 1; ++r) H(r, i) *= temp;
        scale_z(i, temp);
      }
    }
    if (!split) return static_cast<int32_t>(i);
    w[i - 1] = H(i, i);
    kdefl = 0;
    i = l - 1;
  }
  return 0;
}

// Hessenberg reduction, Q, then the Schur form: T overwrites `a`, Z is
// returned (identity-sized zero when `want_z` is false).
template <typename T>
struct SchurResult {
  Matrix<T> z;
  std::vector<T> w;             // complex types
  std::vector<Real<T>> wr, wi;  // real types
  int32_t info = 0;
};

template <typename T>
SchurResult<T> Schur(Matrix<T>& a, bool want_z) {
  const int64_t n = a.rows();
  SchurResult<T> result;
  std::vector<T> tau(std::max<int64_t>(n - 1, 0));
  if (n > 0) lapack::HessenbergReduce(a.view(), 0, n - 1, tau.data());
  result.z =
      want_z ? lapack::HessenbergQ(a.view(), tau.data()) : Matrix<T>(n, n);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = j + 2; i < n; ++i) a(i, j) = T(0);
  if constexpr (kIsComplex<T>) {
    result.w.assign(n, T(0));
    result.info =
        ComplexSchur(a.view(), result.z.view(), want_z, result.w.data());
  } else {
    result.wr.assign(n, 0);
    result.wi.assign(n, 0);
    result.info = RealSchur(a.view(), result.z.view(), want_z, result.wr.data(),
                            result.wi.data());
  }
  return result;
}

template <typename T>
class GehrdKernel : public Kernel {
 public:
  GehrdKernel(int64_t batch, int64_t n, int64_t low, int64_t high)
      : batch_(batch), n_(n), low_(low), high_(high) {}
  Status Run(RunContext& ctx, const Step& step) const override {
    const T* in = ctx.In<T>(step, 0);
    T* out = ctx.Out<T>(step, 0);
    T* tau = ctx.Out<T>(step, 1);
    int32_t* info = ctx.Out<int32_t>(step, 2);
    const int64_t n1 = std::max<int64_t>(n_ - 1, 0);
    Matrix<T> a(n_, n_);
    for (int64_t b = 0; b < batch_; ++b) {
      if (ctx.cancelled()) return ctx.CancelledStatus();
      lapack::LoadMatrix(in + b * n_ * n_, a);
      if (n_ > 0) {
        lapack::HessenbergReduce(a.view(), low_ - 1, high_ - 1, tau + b * n1);
      }
      lapack::StoreMatrix(a, out + b * n_ * n_);
      info[b] = 0;
    }
    return OkStatus();
  }

 private:
  int64_t batch_, n_, low_, high_;
};

template <typename T>
class GeesKernel : public Kernel {
 public:
  GeesKernel(int64_t batch, int64_t n, bool vectors)
      : batch_(batch), n_(n), vectors_(vectors) {}
  Status Run(RunContext& ctx, const Step& step) const override {
    using R = Real<T>;
    const int64_t n = n_;
    const T* in = ctx.In<T>(step, 0);
    T* t_out = ctx.Out<T>(step, 0);
    T* z_out = ctx.Out<T>(step, 1);
    constexpr bool kComplex = kIsComplex<T>;
    const int first_int = kComplex ? 3 : 4;
    int32_t* sdim = ctx.Out<int32_t>(step, first_int);
    int32_t* info = ctx.Out<int32_t>(step, first_int + 1);
    Matrix<T> a(n, n);
    for (int64_t b = 0; b < batch_; ++b) {
      if (ctx.cancelled()) return ctx.CancelledStatus();
      lapack::LoadMatrix(in + b * n * n, a);
      const R scale = lapack::RangeScale(a);
      lapack::Scale(a, scale);
      SchurResult<T> schur = Schur(a, vectors_);
      lapack::Scale(a, 1 / scale);
      for (T& x : schur.w) x /= scale;
      for (R& x : schur.wr) x /= scale;
      for (R& x : schur.wi) x /= scale;
      lapack::StoreMatrix(a, t_out + b * n * n);
      lapack::StoreMatrix(schur.z, z_out + b * n * n);
      if constexpr (kComplex) {
        std::copy(schur.w.begin(), schur.w.end(), ctx.Out<T>(step, 2) + b * n);
      } else {
        std::copy(schur.wr.begin(), schur.wr.end(),
                  ctx.Out<R>(step, 2) + b * n);
        std::copy(schur.wi.begin(), schur.wi.end(),
                  ctx.Out<R>(step, 3) + b * n);
      }
      sdim[b] = 0;
      info[b] = schur.info;
    }
    return OkStatus();
  }

 private:
  int64_t batch_, n_;
  bool vectors_;
};

// Balances `a` by a diagonal similarity D^-1 A D with powers of 2 that
// make each row and column norm comparable (xGEBAL's scaling step);
// returns D.
template <typename T>
std::vector<Real<T>> Balance(Matrix<T>& a) {
  using R = Real<T>;
  const int64_t n = a.rows();
  const R radix = 2, factor = R(0.95);
  const R sfmin1 = lapack::SafeMin<T>() / lapack::Ulp<T>();
  const R sfmax1 = 1 / sfmin1;
  const R sfmin2 = sfmin1 * radix, sfmax2 = 1 / sfmin2;
  std::vector<R> scale(n, 1);
  bool changed = true;
  while (changed) {
    changed = false;
    for (int64_t i = 0; i < n; ++i) {
      R c = lapack::Norm2(&a(0, i), n);
      R r = lapack::Norm2(&a(i, 0), n, n);
      // The largest elements of the column and the row (IxAMAX's choice).
      int64_t ica = 0, ira = 0;
      for (int64_t k = 1; k < n; ++k) {
        if (Abs1(a(k, i)) > Abs1(a(ica, i))) ica = k;
        if (Abs1(a(i, k)) > Abs1(a(i, ira))) ira = k;
      }
      R ca = std::abs(a(ica, i)), ra = std::abs(a(i, ira));
      if (c == 0 || r == 0) continue;
      if (!std::isfinite(c + ca + r + ra)) return scale;
      R g = r / radix, f = 1, s = c + r;
      while (c < g && std::max({f, c, ca}) < sfmax2 &&
             std::min({r, g, ra}) > sfmin2) {
        f *= radix;
        c *= radix;
        ca *= radix;
        r /= radix;
        g /= radix;
        ra /= radix;
      }
      g = c / radix;
      while (g >= r && std::max(r, ra) < sfmax2 &&
             std::min({f, c, g, ca}) > sfmin2) {
        f /= radix;
        c /= radix;
        g /= radix;
        ca /= radix;
        r *= radix;
        ra *= radix;
      }
      if (c + r >= factor * s) continue;
      if (f < 1 && scale[i] < 1 && f * scale[i] <= sfmin1) continue;
      if (f > 1 && scale[i] > 1 && scale[i] >= sfmax1 / f) continue;
      scale[i] *= f;
      changed = true;
      for (int64_t k = 0; k < n; ++k) a(i, k) /= f;
      for (int64_t k = 0; k < n; ++k) a(k, i) *= f;
    }
  }
  return scale;
}

// Solves the 2x2 system m x = rhs (complex), perturbing a pivot smaller
// than `smin` up to it.
template <typename C, typename R>
void Solve2x2(C m00, C m01, C m10, C m11, C& x0, C& x1, R smin) {
  // Partial pivoting on the first column.
  bool swap = Abs1(m10) > Abs1(m00);
  if (swap) {
    std::swap(m00, m10);
    std::swap(m01, m11);
    std::swap(x0, x1);
  }
  if (Abs1(m00) < smin) m00 = C(smin);
  C l = m10 / m00;
  C u11 = m11 - l * m01;
  if (Abs1(u11) < smin) u11 = C(smin);
  C rhs1 = x1 - l * x0;
  x1 = rhs1 / u11;
  x0 = (x0 - m01 * x1) / m00;
}

// Where T's diagonal block containing index j starts and its size (2 for
// the complex-pair blocks of a real Schur form).
template <typename T>
int64_t BlockStart(const Matrix<T>& t, int64_t j) {
  if constexpr (!kIsComplex<T>) {
    if (j > 0 && t(j, j - 1) != T(0)) return j - 1;
  }
  return j;
}

// The eigenvectors of the (quasi-)triangular Schur form `t` for the
// eigenvalue `lambda` whose diagonal block is [p, p + size): x with
// (T - lambda) x = 0 (right, zero below the block) or u with
// u (T - lambda) = 0 (left, zero above it, returned conjugated so that it
// transforms like a right eigenvector).
template <typename T>
std::vector<std::complex<Real<T>>> SchurEigenvector(
    const Matrix<T>& t, std::complex<Real<T>> lambda, int64_t p, int64_t size,
    bool left) {
  using R = Real<T>;
  using C = std::complex<R>;
  const int64_t n = t.rows();
  const R ulp = lapack::Ulp<T>();
  const R smlnum = lapack::SafeMin<T>() * (R(n) / ulp);
  const R smin = std::max(ulp * Abs1(lambda), smlnum);
  const R big = std::sqrt(std::numeric_limits<R>::max());
  auto at = [&](int64_t i, int64_t j) { return C(t(i, j)); };
  std::vector<C> x(n, C(0));
  if (size == 1) {
    x[p] = C(1);
  } else {
    // A null vector of the 2x2 block minus lambda (or of its transpose).
    C a = at(p, p) - lambda, b = at(p, p + 1), c = at(p + 1, p),
      d = at(p + 1, p + 1) - lambda;
    if (left) std::swap(b, c);
    if (Abs1(b) >= Abs1(c)) {
      x[p] = C(1);
      x[p + 1] = -a / b;
    } else {
      x[p] = -d / c;
      x[p + 1] = C(1);
    }
  }
  auto rescale = [&](C value) {
    if (Abs1(value) <= big) return;
    R f = 1 / Abs1(value);
    for (C& e : x) e *= f;
  };
  if (!left) {
    for (int64_t j = p - 1; j >= 0;) {
      int64_t start = BlockStart(t, j);
      auto rhs = [&](int64_t row) {
        C sum = C(0);
        for (int64_t i = j + 1; i < p + size; ++i) sum += at(row, i) * x[i];
        return -sum;
      };
      if (start == j) {
        C denom = at(j, j) - lambda;
        if (Abs1(denom) < smin) denom = C(smin);
        x[j] = rhs(j) / denom;
        rescale(x[j]);
      } else {
        C x0 = rhs(j - 1), x1 = rhs(j);
        Solve2x2(at(j - 1, j - 1) - lambda, at(j - 1, j), at(j, j - 1),
                 at(j, j) - lambda, x0, x1, smin);
        x[j - 1] = x0;
        x[j] = x1;
        rescale(Abs1(x0) > Abs1(x1) ? x0 : x1);
      }
      j = start - 1;
    }
  } else {
    for (int64_t j = p + size; j < n;) {
      bool pair = j + 1 < n && BlockStart(t, j + 1) == j;
      auto rhs = [&](int64_t col) {
        C sum = C(0);
        for (int64_t i = p; i < j; ++i) sum += x[i] * at(i, col);
        return -sum;
      };
      if (!pair) {
        C denom = at(j, j) - lambda;
        if (Abs1(denom) < smin) denom = C(smin);
        x[j] = rhs(j) / denom;
        rescale(x[j]);
        j += 1;
      } else {
        C x0 = rhs(j), x1 = rhs(j + 1);
        Solve2x2(at(j, j) - lambda, at(j + 1, j), at(j, j + 1),
                 at(j + 1, j + 1) - lambda, x0, x1, smin);
        x[j] = x0;
        x[j + 1] = x1;
        rescale(Abs1(x0) > Abs1(x1) ? x0 : x1);
        j += 2;
      }
    }
    for (C& e : x) e = std::conj(e);
  }
  return x;
}

// v := Z x, undoes the balancing (times D for right eigenvectors, divided
// for left ones) and normalizes as xGEEV: unit 2-norm; for complex
// eigenvalues the largest component is made real (positive for complex
// types, with the sign of its real part for real types, as xLARTG leaves
// it).
template <typename T>
std::vector<std::complex<Real<T>>> FinishEigenvector(
    const Matrix<T>& z, const std::vector<Real<T>>& scale,
    const std::vector<std::complex<Real<T>>>& x, bool left, bool real_value) {
  using R = Real<T>;
  using C = std::complex<R>;
  const int64_t n = z.rows();
  std::vector<C> v(n, C(0));
  for (int64_t k = 0; k < n; ++k) {
    if (x[k] == C(0)) continue;
    for (int64_t i = 0; i < n; ++i) v[i] += C(z(i, k)) * x[k];
  }
  for (int64_t i = 0; i < n; ++i)
    v[i] = left ? v[i] / scale[i] : v[i] * scale[i];
  R norm = lapack::Norm2(v.data(), n);
  if (norm > 0) {
    for (C& e : v) e /= norm;
  }
  if (real_value && !kIsComplex<T>) {
    for (C& e : v) e = C(e.real(), 0);
    return v;
  }
  int64_t largest = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (lapack::AbsSquared(v[i]) > lapack::AbsSquared(v[largest])) largest = i;
  }
  C pivot = v[largest];
  R magnitude = std::abs(pivot);
  if (magnitude > 0) {
    C phase = std::conj(pivot) / magnitude;
    if constexpr (!kIsComplex<T>) {
      if (pivot.real() != 0 && std::signbit(pivot.real())) phase = -phase;
    }
    for (C& e : v) e *= phase;
    v[largest] = C(v[largest].real(), 0);
  }
  return v;
}

template <typename T>
class GeevKernel : public Kernel {
 public:
  GeevKernel(int64_t batch, int64_t n, bool left, bool right)
      : batch_(batch), n_(n), left_(left), right_(right) {}
  Status Run(RunContext& ctx, const Step& step) const override {
    using R = Real<T>;
    using C = std::complex<R>;
    constexpr bool kComplex = kIsComplex<T>;
    const int64_t n = n_;
    const T* in = ctx.In<T>(step, 0);
    const int first_vector = kComplex ? 1 : 2;
    C* vl_out = ctx.Out<C>(step, first_vector);
    C* vr_out = ctx.Out<C>(step, first_vector + 1);
    int32_t* info = ctx.Out<int32_t>(step, first_vector + 2);
    const R nan = std::numeric_limits<R>::quiet_NaN();
    Matrix<T> a(n, n);
    for (int64_t b = 0; b < batch_; ++b) {
      if (ctx.cancelled()) return ctx.CancelledStatus();
      lapack::LoadMatrix(in + b * n * n, a);
      std::vector<C> w(n);
      C* vl = vl_out + b * n * n;
      C* vr = vr_out + b * n * n;
      std::fill(vl, vl + n * n, C(0));
      std::fill(vr, vr + n * n, C(0));
      bool finite = true;
      for (int64_t j = 0; j < n && finite; ++j)
        for (int64_t i = 0; i < n; ++i)
          finite = finite && lapack::IsFinite(a(i, j));
      if (!finite) {
        // As JAX's kernel: info -4 and nothing computed.
        info[b] = -4;
        std::fill(w.begin(), w.end(), C(nan, nan));
        std::fill(vl, vl + n * n, C(nan, nan));
        std::fill(vr, vr + n * n, C(nan, nan));
      } else {
        const R range = lapack::RangeScale(a);
        lapack::Scale(a, range);
        std::vector<R> scale = Balance(a);
        SchurResult<T> schur = Schur(a, left_ || right_);
        info[b] = schur.info;
        for (int64_t k = 0; k < n; ++k) {
          if constexpr (kComplex) {
            w[k] = schur.w[k] / range;
          } else {
            w[k] = C(schur.wr[k], schur.wi[k]) / range;
          }
        }
        for (int64_t k = 0; k < n && schur.info == 0; ++k) {
          // Real types: a complex pair's second eigenvector is the
          // conjugate of the first.
          if (!kComplex && w[k].imag() < 0) continue;
          int64_t size = !kComplex && w[k].imag() > 0 ? 2 : 1;
          C lambda = kComplex ? C(a(k, k)) : w[k] * range;
          for (bool is_left : {false, true}) {
            if (!(is_left ? left_ : right_)) continue;
            std::vector<C> x = SchurEigenvector(a, lambda, k, size, is_left);
            std::vector<C> v =
                FinishEigenvector(schur.z, scale, x, is_left, w[k].imag() == 0);
            C* out = is_left ? vl : vr;
            for (int64_t i = 0; i < n; ++i) {
              out[i * n + k] = v[i];
              if (size == 2) out[i * n + k + 1] = std::conj(v[i]);
            }
          }
        }
      }
      if constexpr (kComplex) {
        std::copy(w.begin(), w.end(), ctx.Out<C>(step, 0) + b * n);
      } else {
        R* wr = ctx.Out<R>(step, 0) + b * n;
        R* wi = ctx.Out<R>(step, 1) + b * n;
        for (int64_t k = 0; k < n; ++k) {
          wr[k] = w[k].real();
          wi[k] = w[k].imag();
        }
      }
    }
    return OkStatus();
  }

 private:
  int64_t batch_, n_;
  bool left_, right_;
};

}  // namespace

std::unique_ptr<Kernel> MakeGehrdKernel(ElementType type, int64_t batch,
                                        int64_t n, int64_t low, int64_t high) {
  return lapack::MakeForType<GehrdKernel>(type, batch, n, low, high);
}

std::unique_ptr<Kernel> MakeGeesKernel(ElementType type, int64_t batch,
                                       int64_t n, bool vectors) {
  return lapack::MakeForType<GeesKernel>(type, batch, n, vectors);
}

std::unique_ptr<Kernel> MakeGeevKernel(ElementType type, int64_t batch,
                                       int64_t n, bool left, bool right) {
  return lapack::MakeForType<GeevKernel>(type, batch, n, left, right);
}

}  // namespace kiln::exec
