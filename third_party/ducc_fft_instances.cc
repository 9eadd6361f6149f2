// The DUCC FFT functions Kiln calls (exec/kernels/fft.cc: complex to
// complex, real to half-spectrum and back), instantiated for float and
// double. DUCC's own instantiation files (fft_inst1.cc, fft_inst2.cc) also
// build its DCTs, DSTs, Hartley and FFTPACK transforms and every function
// in long double, none of which Kiln calls; compiling them took four
// minutes of every build's processor time, in each of CI's three builds.
// Compiled into DUCC's library, with its flags (cmake/KilnDeps.cmake), not
// into any layer of src/: Kiln's code reaches DUCC through exec/kernels/fft.cc.
#include "ducc0/fft/fftnd_impl.h"

namespace DUCC0_NAMESPACE {
namespace detail_fft {

template void c2c(const cfmav<std::complex<float>>& in,
                  const vfmav<std::complex<float>>& out, const shape_t& axes,
                  bool forward, float fct, size_t nthreads);
template void c2c(const cfmav<std::complex<double>>& in,
                  const vfmav<std::complex<double>>& out, const shape_t& axes,
                  bool forward, double fct, size_t nthreads);
template void r2c(const cfmav<float>& in,
                  const vfmav<std::complex<float>>& out, size_t axis,
                  bool forward, float fct, size_t nthreads);
template void r2c(const cfmav<double>& in,
                  const vfmav<std::complex<double>>& out, size_t axis,
                  bool forward, double fct, size_t nthreads);
template void c2r(const cfmav<std::complex<float>>& in,
                  const vfmav<float>& out, size_t axis, bool forward,
                  float fct, size_t nthreads);
template void c2r(const cfmav<std::complex<double>>& in,
                  const vfmav<double>& out, size_t axis, bool forward,
                  double fct, size_t nthreads);

}  // namespace detail_fft
}  // namespace DUCC0_NAMESPACE
