// fft: FFT, IFFT, RFFT and IRFFT over the trailing 1 to 3 dimensions.
#ifndef KILN_EXEC_KERNELS_FFT_H_
#define KILN_EXEC_KERNELS_FFT_H_

#include <memory>
#include <vector>

#include "exec/plan.h"

namespace kiln::exec {

enum class FftKind { kFft, kIfft, kRfft, kIrfft };

// `input` and `output` are the operand and result shapes; `lengths` the
// fft_length attribute (the sizes of the transformed trailing dimensions
// of the real side). Computed in double precision; IFFT and IRFFT scale
// by 1/n.
std::unique_ptr<Kernel> MakeFftKernel(FftKind kind, ArrayShape input,
                                      ArrayShape output,
                                      std::vector<int64_t> lengths);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_FFT_H_
