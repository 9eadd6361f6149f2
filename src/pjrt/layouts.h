// PJRT_Buffer_MemoryLayout: host layouts for transfers, and the device
// layout Kiln keeps (dense row-major).
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

// OK when `layout` is null or describes the dense row-major layout Kiln
// keeps every buffer in; UNIMPLEMENTED for any other device layout.
Status CheckDeviceLayout(const PJRT_Buffer_MemoryLayout* layout,
                         const runtime::Shape& shape, std::string_view what);

// Fills `layout` with the dense row-major layout of a buffer whose
// minor-to-major order is `minor_to_major` (which must outlive its use).
void FillDenseLayout(const std::vector<int64_t>& minor_to_major,
                     PJRT_Buffer_MemoryLayout* layout);

}  // namespace kiln::pjrt

#endif  // KILN_PJRT_LAYOUTS_H_
