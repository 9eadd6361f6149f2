// Encoding and decoding of every float format of ElementType, through
// double (which holds every value of every format ≤ f64 exactly).
//
// Encoding rounds to nearest, ties to even. Values too large for a format
// become infinity where the format has one; otherwise NaN where it has one;
// otherwise (f4E2M1FN, f6*) the largest finite value of the right sign.
// NaN input gives the format's NaN (or, without NaN, the largest value).
#ifndef KILN_IR_FLOAT_BITS_H_
#define KILN_IR_FLOAT_BITS_H_

#include <cstdint>

#include "ir/element_type.h"

namespace kiln::ir {

// The bit pattern (low BitWidth bits) of `value` in float type `type`.
uint64_t EncodeFloat(ElementType type, double value);

// The value of bit pattern `bits` (low BitWidth bits) of float type `type`.
double DecodeFloat(ElementType type, uint64_t bits);

// The canonical quiet NaN of a float type with NaNs.
uint64_t NanBits(ElementType type);

}  // namespace kiln::ir

#endif  // KILN_IR_FLOAT_BITS_H_
