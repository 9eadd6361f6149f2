#include "pjrt/layouts.h"

#include <cstring>
#include <span>

#include "pjrt/args.h"
#include "runtime/host_layout.h"

namespace kiln::pjrt {

StatusOr<std::vector<int64_t>> HostStrides(
    const PJRT_Buffer_MemoryLayout* layout, const runtime::Shape& shape,
    std::string_view what) {
  if (layout == nullptr) return std::vector<int64_t>();
  const int type = RawEnumValue(layout->type);
  switch (type) {
    case PJRT_Buffer_MemoryLayout_Type_Tiled: {
      const PJRT_Buffer_MemoryLayout_Tiled& tiled = layout->tiled;
      if (tiled.num_tiles != 0) {
        return UnimplementedError(what, " has ", tiled.num_tiles,
                                  " tiles; Kiln supports host layouts without "
                                  "tiles");
      }
      if (tiled.minor_to_major == nullptr && tiled.minor_to_major_size > 0) {
        return InvalidArgumentError(what, ".tiled.minor_to_major is null");
      }
      if (tiled.minor_to_major_size > runtime::kMaxRank) {
        return InvalidArgumentError(
            what, ".tiled.minor_to_major_size is ", tiled.minor_to_major_size,
            ", but ", shape.ToString(), " has ", shape.rank(), " dimensions");
      }
      std::span<const int64_t> minor_to_major(tiled.minor_to_major,
                                              tiled.minor_to_major_size);
      auto strides =
          runtime::ByteStridesFromMinorToMajor(shape, minor_to_major);
      if (!strides.ok()) return strides.status().WithContext(what);
      return std::move(*strides);
    }
    case PJRT_Buffer_MemoryLayout_Type_Strides: {
      const PJRT_Buffer_MemoryLayout_Strides& strides = layout->strides;
      if (strides.num_byte_strides != shape.rank()) {
        return InvalidArgumentError(what, " has ", strides.num_byte_strides,
                                    " byte strides, but ", shape.ToString(),
                                    " has ", shape.rank(), " dimensions");
      }
      if (strides.byte_strides == nullptr && strides.num_byte_strides > 0) {
        return InvalidArgumentError(what, ".strides.byte_strides is null");
      }
      return std::vector<int64_t>(
          strides.byte_strides,
          strides.byte_strides + strides.num_byte_strides);
    }
    default:
      return InvalidArgumentError(what, ".type is ", type,
                                  ", which is not a "
                                  "PJRT_Buffer_MemoryLayout_Type");
  }
}

Status CheckDeviceLayout(const PJRT_Buffer_MemoryLayout* layout,
                         const runtime::Shape& shape, std::string_view what) {
  ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                   HostStrides(layout, shape, what));
  if (!strides.empty() && !runtime::IsDenseRowMajor(shape, strides)) {
    return UnimplementedError(
        what, " asks for a layout other than dense row-major for ",
        shape.ToString(), "; Kiln keeps buffers dense row-major");
  }
  return OkStatus();
}

void FillDenseLayout(const std::vector<int64_t>& minor_to_major,
                     PJRT_Buffer_MemoryLayout* layout) {
  std::memset(layout, 0, sizeof(*layout));
  layout->struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
  layout->type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  layout->tiled.struct_size = PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE;
  layout->tiled.minor_to_major = minor_to_major.data();
  layout->tiled.minor_to_major_size = minor_to_major.size();
  layout->tiled.tile_dims = nullptr;
  layout->tiled.tile_dim_sizes = nullptr;
  layout->tiled.num_tiles = 0;
}

}  // namespace kiln::pjrt
