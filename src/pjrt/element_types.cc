#include "pjrt/element_types.h"

namespace kiln::pjrt {

StatusOr<runtime::DType> DTypeFromPjrt(int type, std::string_view what) {
  switch (type) {
#define KILN_PJRT_FROM(pjrt, dtype) \
  case PJRT_Buffer_Type_##pjrt:     \
    return runtime::DType::dtype;
    KILN_PJRT_ELEMENT_TYPES(KILN_PJRT_FROM)
#undef KILN_PJRT_FROM
    case PJRT_Buffer_Type_INVALID:
      return InvalidArgumentError(what, " is PJRT_Buffer_Type_INVALID");
    default:
      return InvalidArgumentError(what, " is ", type,
                                  ", which is not a PJRT_Buffer_Type");
  }
}

PJRT_Buffer_Type DTypeToPjrt(runtime::DType dtype) {
  switch (dtype) {
#define KILN_PJRT_TO(pjrt, dtype_enum) \
  case runtime::DType::dtype_enum:     \
    return PJRT_Buffer_Type_##pjrt;
    KILN_PJRT_ELEMENT_TYPES(KILN_PJRT_TO)
#undef KILN_PJRT_TO
  }
  return PJRT_Buffer_Type_INVALID;
}

}  // namespace kiln::pjrt
