// Reading shapes and placement (device or memory) from argument structs.
#ifndef KILN_PJRT_SHAPES_H_
#define KILN_PJRT_SHAPES_H_

#include <string_view>

#include "base/status.h"
#include "pjrt/handles.h"
#include "runtime/shape.h"

namespace kiln::pjrt {

// The shape with element type `type` (a PJRT_Buffer_Type) and `num_dims`
// dimensions at `dims`. `what` prefixes the field names in errors
// ("PJRT_Client_BufferFromHostBuffer_Args.").
StatusOr<runtime::Shape> ReadShape(int type, const int64_t* dims,
                                   size_t num_dims, std::string_view what);

// Where a new buffer of `client` goes: `memory` when given (it must be
// addressable by `device` when both are given), else `device`'s default
// memory. Both must belong to `client` and this process; at least one
// must be given.
StatusOr<Memory*> ResolvePlacement(PJRT_Client* client, PJRT_Device* device,
                                   PJRT_Memory* memory, std::string_view what);

}  // namespace kiln::pjrt

#endif  // KILN_PJRT_SHAPES_H_
