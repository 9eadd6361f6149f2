// LAPACK's Schur form: gehrd (Hessenberg reduction) and gees, and the
// Schur routine geev builds on (lapack_geev.cc).
//
// The Schur form of a Hessenberg matrix comes from the small-bulge
// double-shift (real) and single-shift (complex) QR iterations of xLAHQR,
// with its shifts and deflation tests, which is what LAPACK's xHSEQR runs
// below order 75.
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "exec/executor.h"
#include "exec/kernels/lapack.h"
#include "exec/kernels/lapack_schur.h"
#include "exec/kernels/lapack_util.h"

namespace kiln::exec {
namespace {

using lapack::Abs1;
using lapack::Conj;
using lapack::Matrix;
using lapack::MatrixView;
using lapack::Real;
using lapack::Schur;
using lapack::SchurResult;

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

}  // namespace

namespace lapack {

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

template SchurResult<float> Schur(Matrix<float>&, bool);
template SchurResult<double> Schur(Matrix<double>&, bool);
template SchurResult<c64> Schur(Matrix<c64>&, bool);
template SchurResult<c128> Schur(Matrix<c128>&, bool);

}  // namespace lapack

std::unique_ptr<Kernel> MakeGehrdKernel(ElementType type, int64_t batch,
                                        int64_t n, int64_t low, int64_t high) {
  return lapack::MakeForType<GehrdKernel>(type, batch, n, low, high);
}

std::unique_ptr<Kernel> MakeGeesKernel(ElementType type, int64_t batch,
                                       int64_t n, bool vectors) {
  return lapack::MakeForType<GeesKernel>(type, batch, n, vectors);
}

}  // namespace kiln::exec
