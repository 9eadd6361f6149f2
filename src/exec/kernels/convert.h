// Element type conversion (stablehlo.convert) and bit reinterpretation
// (stablehlo.bitcast_convert).
#ifndef KILN_EXEC_KERNELS_CONVERT_H_
#define KILN_EXEC_KERNELS_CONVERT_H_

#include <memory>

#include "exec/plan.h"

namespace kiln::exec {

// Converts `count` elements of type `from` into type `to` with the spec's
// rules: floats round to nearest even; float to integer truncates, maps NaN
// to 0 and saturates; to i1 is `!= 0`; complex to real keeps the real part;
// integers wrap to the destination width.
std::unique_ptr<Kernel> MakeConvertKernel(ElementType from, ElementType to,
                                          int64_t count);

// Converts `count` elements in a plain loop, for kernels that convert
// internally.
void ConvertElements(ElementType from, const std::byte* input, ElementType to,
                     std::byte* output, int64_t count);

// Reinterprets the bits of `count` input elements of `from` as elements of
// `to`; when the widths differ the last dimension splits or merges
// elements (little-endian, as XLA does). Sub-byte types use their logical
// bits.
std::unique_ptr<Kernel> MakeBitcastConvertKernel(ElementType from,
                                                 ElementType to,
                                                 int64_t input_count);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_CONVERT_H_
