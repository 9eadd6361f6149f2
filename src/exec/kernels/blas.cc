#include "exec/kernels/blas.h"

#include <mutex>

#include <oneapi/dnnl/dnnl.h>

#include "base/thread_pool.h"
#include "exec/kernels/vectorize.h"

namespace kiln::exec {

Status Sgemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n,
             int64_t k, float alpha, const float* a, int64_t lda,
             const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return OkStatus();
  if (k == 0) {
    if (beta == 1.0f) return OkStatus();
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
      }
    }
    return OkStatus();
  }
  dnnl_status_t status;
  {
    std::lock_guard<std::mutex> all_cores(AllCoresMutex());
    status = dnnl_sgemm(transpose_a ? 'T' : 'N', transpose_b ? 'T' : 'N', m, n,
                        k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  if (status != dnnl_success) {
    return InternalError("oneDNN: dnnl_sgemm failed with status ",
                         static_cast<int>(status));
  }
  return OkStatus();
}

KILN_VECTORIZED void SubtractScaled(float* y, const float* x, float f,
                                    int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] -= f * x[i];
}

KILN_VECTORIZED void RotatePair(float* x, float* y, float c, float s,
                                int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float xi = x[i], yi = y[i];
    x[i] = c * xi + s * yi;
    y[i] = c * yi - s * xi;
  }
}

KILN_VECTORIZED void RotatePair(double* x, double* y, double c, double s,
                                int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double xi = x[i], yi = y[i];
    x[i] = c * xi + s * yi;
    y[i] = c * yi - s * xi;
  }
}

}  // namespace kiln::exec
