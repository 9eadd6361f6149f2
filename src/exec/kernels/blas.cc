#include "exec/kernels/blas.h"

#include "exec/kernels/vectorize.h"

namespace kiln::exec {

namespace {

// The loops, inlined into each multiversioned entry point below so that
// each is compiled for that version's vectors.
template <typename T>
[[gnu::always_inline]] inline T DotInterleavedLoop(const T* v, const T* x,
                                                   int64_t n) {
  T partial[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) partial[k] += v[i + k] * x[i + k];
  }
  T sum = ((partial[0] + partial[1]) + (partial[2] + partial[3])) +
          ((partial[4] + partial[5]) + (partial[6] + partial[7]));
  for (; i < n; ++i) sum += v[i] * x[i];
  return sum;
}

template <typename T>
[[gnu::always_inline]] inline void SubtractScaledLoop(T* y, const T* x, T f,
                                                      int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] -= f * x[i];
}

template <typename T>
[[gnu::always_inline]] inline void AddScaledLoop(T* y, const T* x, T f,
                                                 int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += f * x[i];
}

template <typename T>
[[gnu::always_inline]] inline void SubtractRank2Loop(T* a, const T* v, T yc,
                                                     const T* y, T vc,
                                                     int64_t n) {
  for (int64_t i = 0; i < n; ++i) a[i] -= v[i] * yc + y[i] * vc;
}

template <typename T>
[[gnu::always_inline]] inline void RotatePairLoop(T* x, T* y, T c, T s,
                                                  int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const T xi = x[i], yi = y[i];
    x[i] = c * xi + s * yi;
    y[i] = c * yi - s * xi;
  }
}

}  // namespace

KILN_VECTORIZED void SubtractScaled(float* y, const float* x, float f,
                                    int64_t n) {
  SubtractScaledLoop(y, x, f, n);
}

KILN_VECTORIZED void SubtractScaled(double* y, const double* x, double f,
                                    int64_t n) {
  SubtractScaledLoop(y, x, f, n);
}

KILN_VECTORIZED void AddScaled(float* y, const float* x, float f, int64_t n) {
  AddScaledLoop(y, x, f, n);
}

KILN_VECTORIZED void AddScaled(double* y, const double* x, double f,
                               int64_t n) {
  AddScaledLoop(y, x, f, n);
}

KILN_VECTORIZED float DotInterleaved(const float* v, const float* x,
                                     int64_t n) {
  return DotInterleavedLoop(v, x, n);
}

KILN_VECTORIZED double DotInterleaved(const double* v, const double* x,
                                      int64_t n) {
  return DotInterleavedLoop(v, x, n);
}

KILN_VECTORIZED void SubtractRank2(float* a, const float* v, float yc,
                                   const float* y, float vc, int64_t n) {
  SubtractRank2Loop(a, v, yc, y, vc, n);
}

KILN_VECTORIZED void SubtractRank2(double* a, const double* v, double yc,
                                   const double* y, double vc, int64_t n) {
  SubtractRank2Loop(a, v, yc, y, vc, n);
}

KILN_VECTORIZED void RotatePair(float* x, float* y, float c, float s,
                                int64_t n) {
  RotatePairLoop(x, y, c, s, n);
}

KILN_VECTORIZED void RotatePair(double* x, double* y, double c, double s,
                                int64_t n) {
  RotatePairLoop(x, y, c, s, n);
}

}  // namespace kiln::exec
