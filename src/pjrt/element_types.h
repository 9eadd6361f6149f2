// PJRT_Buffer_Type <-> the runtime's element types, in one table.
//
// Together with the runtime's table (runtime/dtype.h), which gives each
// runtime type its ir::ElementType, this maps every PJRT_Buffer_Type of
// 0.112 but INVALID to the IR: s1, u1 and token are the three without an
// IR element type.
#ifndef KILN_PJRT_ELEMENT_TYPES_H_
#define KILN_PJRT_ELEMENT_TYPES_H_

#include <string_view>

#include "base/status.h"
#include "pjrt_c_api.h"
#include "runtime/dtype.h"

namespace kiln::pjrt {

// X(PJRT_Buffer_Type suffix, runtime::DType enumerator)
#define KILN_PJRT_ELEMENT_TYPES(X) \
  X(PRED, kPred)                   \
  X(S8, kS8)                       \
  X(S16, kS16)                     \
  X(S32, kS32)                     \
  X(S64, kS64)                     \
  X(U8, kU8)                       \
  X(U16, kU16)                     \
  X(U32, kU32)                     \
  X(U64, kU64)                     \
  X(F16, kF16)                     \
  X(F32, kF32)                     \
  X(F64, kF64)                     \
  X(BF16, kBF16)                   \
  X(C64, kC64)                     \
  X(C128, kC128)                   \
  X(F8E5M2, kF8E5M2)               \
  X(F8E4M3FN, kF8E4M3FN)           \
  X(F8E4M3B11FNUZ, kF8E4M3B11FNUZ) \
  X(F8E5M2FNUZ, kF8E5M2FNUZ)       \
  X(F8E4M3FNUZ, kF8E4M3FNUZ)       \
  X(S4, kS4)                       \
  X(U4, kU4)                       \
  X(TOKEN, kToken)                 \
  X(S2, kS2)                       \
  X(U2, kU2)                       \
  X(F8E4M3, kF8E4M3)               \
  X(F8E3M4, kF8E3M4)               \
  X(F8E8M0FNU, kF8E8M0FNU)         \
  X(F4E2M1FN, kF4E2M1FN)           \
  X(S1, kS1)                       \
  X(U1, kU1)

// The runtime type of `type`; INVALID_ARGUMENT naming `what` for INVALID
// and for values that are no PJRT_Buffer_Type.
StatusOr<runtime::DType> DTypeFromPjrt(int type, std::string_view what);

PJRT_Buffer_Type DTypeToPjrt(runtime::DType dtype);

}  // namespace kiln::pjrt

#endif  // KILN_PJRT_ELEMENT_TYPES_H_
