#include "pjrt/layouts.h"

#include <algorithm>
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

StatusOr<std::vector<int64_t>> ReadDeviceLayout(
    const PJRT_Buffer_MemoryLayout* layout, const runtime::Shape& shape,
    std::string_view what) {
  if (layout == nullptr) return std::vector<int64_t>();
  std::vector<int64_t> minor_to_major;
  if (RawEnumValue(layout->type) == PJRT_Buffer_MemoryLayout_Type_Tiled &&
      layout->tiled.num_tiles == 0 &&
      (layout->tiled.minor_to_major != nullptr ||
       layout->tiled.minor_to_major_size == 0)) {
    minor_to_major.assign(
        layout->tiled.minor_to_major,
        layout->tiled.minor_to_major + layout->tiled.minor_to_major_size);
    if (Status valid = runtime::CheckMinorToMajor(minor_to_major, shape.rank());
        !valid.ok() || minor_to_major.size() != shape.rank()) {
      return InvalidArgumentError(
          what, ".tiled.minor_to_major ",
          runtime::LayoutToString(minor_to_major),
          " is not a permutation of the dimensions of ", shape.ToString());
    }
  } else {
    ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                     HostStrides(layout, shape, what));
    // Dense strides in some order: the dimensions sorted by stride (size-1
    // dimensions, whose stride does not matter, kept in row-major order)
    // must give those strides back.
    std::vector<int64_t> order(shape.rank());
    for (size_t i = 0; i < order.size(); ++i) {
      order[i] = static_cast<int64_t>(order.size() - 1 - i);
    }
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      const bool a_one = shape.dims()[a] == 1, b_one = shape.dims()[b] == 1;
      if (a_one || b_one) return false;
      return strides[a] < strides[b];
    });
    std::vector<int64_t> dense = runtime::LayoutByteStrides(shape, order);
    for (size_t d = 0; d < order.size(); ++d) {
      if (shape.dims()[d] != 1 && dense[d] != strides[d]) {
        return UnimplementedError(
            what, " asks for byte strides {", StrJoin(strides, ","), "} for ",
            shape.ToString(), ", which are not dense in any order of the "
            "dimensions; Kiln's device buffers are dense");
      }
    }
    minor_to_major = std::move(order);
  }
  if (runtime::IsRowMajorLayout(minor_to_major)) minor_to_major.clear();
  return minor_to_major;
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
