// PJRT_Buffer_MemoryLayout: host layouts for transfers, and device layouts
// (dense, in any order of the dimensions; row-major by default).
//
// Framework code fills PJRT_Buffer_MemoryLayout without setting its
// struct_size (XLA's own helpers leave it, and the union members' sizes,
// unset), so Kiln reads a layout by its `type` and never checks those
// sizes; every field exists in every PJRT version that has the struct.
#ifndef KILN_PJRT_LAYOUTS_H_
#define KILN_PJRT_LAYOUTS_H_

#include <string_view>
#include <vector>

#include "base/status.h"
#include "pjrt_c_api.h"
#include "runtime/shape.h"

namespace kiln::pjrt {

// The byte strides a host layout gives `shape`; empty for a null layout,
// which means dense row-major (for a scalar, every layout is that). Tiled
// layouts may order the dimensions in any way but have no tiles; strided
// layouts give one stride per dimension.
StatusOr<std::vector<int64_t>> HostStrides(
    const PJRT_Buffer_MemoryLayout* layout, const runtime::Shape& shape,
    std::string_view what);

// OK when `layout` is null or describes the dense row-major layout;
// UNIMPLEMENTED for any other device layout (for the calls that make
// buffers only row-major).
Status CheckDeviceLayout(const PJRT_Buffer_MemoryLayout* layout,
                         const runtime::Shape& shape, std::string_view what);

// The minor-to-major order of the dense device layout `layout` asks of a
// buffer of `shape`: empty for null or row-major. Tiled layouts without
// tiles give theirs; strided ones must be dense in some order of the
// dimensions. UNIMPLEMENTED for tiles, padding or gaps, INVALID_ARGUMENT
// for a layout that does not fit the shape.
StatusOr<std::vector<int64_t>> ReadDeviceLayout(
    const PJRT_Buffer_MemoryLayout* layout, const runtime::Shape& shape,
    std::string_view what);

// Fills `layout` with the dense layout of a buffer whose minor-to-major
// order is `minor_to_major` (which must outlive its use).
void FillDenseLayout(const std::vector<int64_t>& minor_to_major,
                     PJRT_Buffer_MemoryLayout* layout);

}  // namespace kiln::pjrt

#endif  // KILN_PJRT_LAYOUTS_H_
