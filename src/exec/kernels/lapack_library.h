// What the kernels that call the library's LAPACK share (lapack_library.cc,
// lapack_library_eigen.cc), internal to exec/: the library's Fortran entry
// points, choosing the s/d/c/z routine for an element type, running a
// batch's matrices over the cores, and workspace queries.
//
// The library is OpenBLAS's scipy-openblas32 build (docs/exec.md,
// "Libraries"), the LAPACK that jaxlib's own targets run: its symbols carry
// the prefix `scipy_`, which LAPACK_GLOBAL adds to every name lapack.h
// declares. Its integers are 32 bits; a dimension past them is refused
// before a kernel is made (TooLargeForTheLibrary).
#ifndef KILN_EXEC_KERNELS_LAPACK_LIBRARY_H_
#define KILN_EXEC_KERNELS_LAPACK_LIBRARY_H_

#include <complex>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <type_traits>
#include <vector>

#include "exec/plan.h"

#define LAPACK_GLOBAL(lcname, UCNAME) scipy_##lcname##_
#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <lapack.h>  // NOLINT(build/include_order): needs the defines above
#undef lapack_complex_float
#undef lapack_complex_double

#include "exec/kernels/element.h"
#include "exec/kernels/lapack_util.h"
#include "exec/kernels/library_blas.h"
#include "exec/kernels/run_time_error.h"
#include "exec/parallel.h"

namespace kiln::exec::lapack {

static_assert(sizeof(lapack_int) == sizeof(int32_t));

// The routine of the four (s, d, c, z) that computes in T. Each routine is
// named by its `_base` entry point where it takes characters, whose hidden
// lengths (gfortran's convention: size_t, last) the caller passes.
template <typename T, typename S, typename D, typename C, typename Z>
constexpr auto Pick(S s, D d, C c, Z z) {
  if constexpr (std::is_same_v<T, float>) {
    return s;
  } else if constexpr (std::is_same_v<T, double>) {
    return d;
  } else if constexpr (std::is_same_v<T, c64>) {
    return c;
  } else {
    static_assert(std::is_same_v<T, c128>);
    return z;
  }
}

// A workspace size the library asked for (in `query`, after a call with
// lwork = -1), at least `least`.
template <typename T>
lapack_int QueriedSize(T query, lapack_int least = 1) {
  const auto size = static_cast<lapack_int>(RealPart(query));
  return size > least ? size : least;
}

// Runs `factor(b)` for each matrix b of a batch, the matrices over the
// cores when there are several; each calls the library on one thread
// (library_blas.h says why).
template <typename Factor>
void ForEachMatrix(int64_t batch, Factor&& factor) {
  UseOneLibraryThreadPerCall();
  if (batch == 1) {
    factor(int64_t{0});
    return;
  }
  ParallelFor(batch, 1, [&](int64_t first, int64_t last) {
    for (int64_t b = first; b < last; ++b) factor(b);
  });
}

// Whether every dimension fits the library's integers.
inline bool FitsTheLibrary(std::initializer_list<int64_t> dims) {
  for (int64_t d : dims) {
    if (!FitsBlasInt(d)) return false;
  }
  return true;
}

// Whether the workspaces of the eigensolvers and SVDs of order n (about
// 2 n^2 + 6 n + 1 elements) fit the library's integers too.
inline bool WorkspaceFitsTheLibrary(int64_t n) {
  return FitsBlasInt(n) && FitsBlasInt(2 * n * n + 6 * n + 1);
}

// A kernel that fails when it runs, saying that `routine` of an m x n
// matrix is past the library's 32-bit integers.
inline std::unique_ptr<Kernel> TooLargeForTheLibrary(const char* routine,
                                                     int64_t m, int64_t n) {
  return MakeRunTimeErrorKernel(UnimplementedError(
      routine, " of a ", m, " x ", n,
      " matrix: a dimension is past the LAPACK library's 32-bit integers"));
}

// NaN in T (both parts NaN for complex types).
template <typename T>
T NotANumber() {
  const Real<T> nan = std::numeric_limits<Real<T>>::quiet_NaN();
  if constexpr (kIsComplex<T>) {
    return T(nan, nan);
  } else {
    return nan;
  }
}

// Whether every element of the row-major `a` (count elements) is finite.
template <typename T>
bool AllFinite(const T* a, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    if (!IsFinite(a[i])) return false;
  }
  return true;
}

}  // namespace kiln::exec::lapack

#endif  // KILN_EXEC_KERNELS_LAPACK_LIBRARY_H_
