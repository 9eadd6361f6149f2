#include "runtime/host_layout.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>

namespace kiln::runtime {
namespace {

// Sets *out to |a| * b + c for non-negative b and c; false when that
// overflows int64.
bool MulAddFits(int64_t a, int64_t b, int64_t c, int64_t* out) {
  if (a == std::numeric_limits<int64_t>::min()) return false;
  int64_t magnitude = a < 0 ? -a : a;
  if (b != 0 && magnitude > (std::numeric_limits<int64_t>::max() - c) / b) {
    return false;
  }
  *out = magnitude * b + c;
  return true;
}

// One copy loop for both directions: walks the elements in row-major order
// and copies each between the dense side and the strided side. The
// innermost run is copied with one memcpy when the strided side is
// contiguous there too.
template <bool kToDense>
void StridedCopy(const Shape& shape, const uint8_t* src, uint8_t* dst,
                 std::span<const int64_t> strides) {
  const int64_t element_bytes = StorageBytes(shape.dtype());
  if (shape.element_count() == 0 || element_bytes == 0) return;
  const std::vector<int64_t>& dims = shape.dims();
  const size_t rank = dims.size();
  if (rank == 0) {
    std::memcpy(dst, src, element_bytes);
    return;
  }
  // Merge trailing dimensions that are contiguous on the strided side into
  // one run.
  int64_t run_elements = dims[rank - 1];
  size_t outer_rank = rank - 1;
  const bool inner_contiguous = strides[rank - 1] == element_bytes;
  if (inner_contiguous) {
    while (outer_rank > 0 &&
           strides[outer_rank - 1] == strides[outer_rank] * dims[outer_rank]) {
      --outer_rank;
      run_elements *= dims[outer_rank];
    }
  }
  const int64_t inner_stride = strides[rank - 1];
  std::vector<int64_t> index(outer_rank, 0);
  int64_t dense_offset = 0;
  int64_t strided_offset = 0;
  while (true) {
    if (inner_contiguous) {
      const int64_t bytes = run_elements * element_bytes;
      if (kToDense) {
        std::memcpy(dst + dense_offset, src + strided_offset, bytes);
      } else {
        std::memcpy(dst + strided_offset, src + dense_offset, bytes);
      }
      dense_offset += bytes;
    } else {
      int64_t offset = strided_offset;
      for (int64_t i = 0; i < run_elements; ++i) {
        if (kToDense) {
          std::memcpy(dst + dense_offset, src + offset, element_bytes);
        } else {
          std::memcpy(dst + offset, src + dense_offset, element_bytes);
        }
        dense_offset += element_bytes;
        offset += inner_stride;
      }
    }
    // Advance the odometer over the outer dimensions.
    size_t d = outer_rank;
    while (d > 0) {
      --d;
      strided_offset += strides[d];
      if (++index[d] < dims[d]) break;
      strided_offset -= strides[d] * dims[d];
      index[d] = 0;
      if (d == 0) return;
    }
    if (outer_rank == 0) return;
  }
}

}  // namespace

std::vector<int64_t> DenseByteStrides(const Shape& shape) {
  std::vector<int64_t> strides(shape.rank());
  int64_t stride = StorageBytes(shape.dtype());
  for (size_t i = shape.rank(); i-- > 0;) {
    strides[i] = stride;
    stride *= std::max<int64_t>(shape.dims()[i], 1);
  }
  return strides;
}

StatusOr<std::vector<int64_t>> ByteStridesFromMinorToMajor(
    const Shape& shape, std::span<const int64_t> minor_to_major) {
  const size_t rank = shape.rank();
  if (minor_to_major.size() != rank) {
    return InvalidArgumentError("minor_to_major has ", minor_to_major.size(),
                                " entries, but ", shape.ToString(), " has ",
                                rank, " dimensions");
  }
  std::vector<bool> seen(rank, false);
  for (int64_t dim : minor_to_major) {
    if (dim < 0 || dim >= static_cast<int64_t>(rank) || seen[dim]) {
      return InvalidArgumentError(
          "minor_to_major {", StrJoin(minor_to_major, ","),
          "} is not a permutation of the dimensions of ", shape.ToString());
    }
    seen[dim] = true;
  }
  std::vector<int64_t> strides(rank);
  int64_t stride = StorageBytes(shape.dtype());
  for (int64_t dim : minor_to_major) {
    strides[dim] = stride;
    // Fits: the product of all dimensions fits (Shape checked it), and the
    // partial products of non-zero dimensions are no larger.
    stride *= std::max<int64_t>(shape.dims()[dim], 1);
  }
  return strides;
}

bool IsRowMajorLayout(std::span<const int64_t> minor_to_major) {
  const int64_t rank = static_cast<int64_t>(minor_to_major.size());
  for (int64_t i = 0; i < rank; ++i) {
    if (minor_to_major[i] != rank - 1 - i) return false;
  }
  return true;
}

Status CheckMinorToMajor(std::span<const int64_t> minor_to_major, size_t rank) {
  if (minor_to_major.empty()) return OkStatus();
  bool valid = minor_to_major.size() == rank;
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; valid && i < minor_to_major.size(); ++i) {
    const int64_t dim = minor_to_major[i];
    valid = dim >= 0 && dim < static_cast<int64_t>(rank) && !seen[dim];
    if (valid) seen[dim] = true;
  }
  if (valid) return OkStatus();
  return InvalidArgumentError("the layout ", LayoutToString(minor_to_major),
                              " is not a permutation of ", rank,
                              " dimensions");
}

std::string LayoutToString(std::span<const int64_t> minor_to_major) {
  return StrCat("{", StrJoin(minor_to_major, ","), "}");
}

std::vector<int64_t> LayoutByteStrides(
    const Shape& shape, std::span<const int64_t> minor_to_major) {
  if (minor_to_major.empty()) return DenseByteStrides(shape);
  std::vector<int64_t> strides(shape.rank());
  int64_t stride = StorageBytes(shape.dtype());
  for (int64_t dim : minor_to_major) {
    strides[dim] = stride;
    stride *= std::max<int64_t>(shape.dims()[dim], 1);
  }
  return strides;
}

std::vector<int64_t> PhysicalDims(std::span<const int64_t> dims,
                                  std::span<const int64_t> minor_to_major) {
  if (minor_to_major.empty()) return {dims.begin(), dims.end()};
  std::vector<int64_t> physical;
  physical.reserve(dims.size());
  for (size_t i = minor_to_major.size(); i-- > 0;) {
    physical.push_back(dims[minor_to_major[i]]);
  }
  return physical;
}

void CopyStrided(const Shape& shape, const void* src,
                 std::span<const int64_t> src_strides, void* dst,
                 std::span<const int64_t> dst_strides) {
  if (IsDenseRowMajor(shape, dst_strides)) {
    GatherToDense(shape, src, src_strides, dst);
  } else if (IsDenseRowMajor(shape, src_strides)) {
    ScatterFromDense(shape, src, dst, dst_strides);
  } else {
    std::vector<uint8_t> dense(static_cast<size_t>(shape.byte_size()));
    GatherToDense(shape, src, src_strides, dense.data());
    ScatterFromDense(shape, dense.data(), dst, dst_strides);
  }
}

bool IsDenseRowMajor(const Shape& shape,
                     std::span<const int64_t> byte_strides) {
  if (byte_strides.size() != shape.rank()) return false;
  if (shape.element_count() == 0) return true;
  std::vector<int64_t> dense = DenseByteStrides(shape);
  for (size_t i = 0; i < shape.rank(); ++i) {
    if (shape.dims()[i] != 1 && byte_strides[i] != dense[i]) return false;
  }
  return true;
}

Status CheckSourceStrides(const Shape& shape,
                          std::span<const int64_t> byte_strides) {
  if (byte_strides.size() != shape.rank()) {
    return InvalidArgumentError(byte_strides.size(), " byte strides for ",
                                shape.ToString(), ", which has ", shape.rank(),
                                " dimensions");
  }
  if (shape.element_count() == 0) return OkStatus();
  // The farthest element from the start, on either side, must be reachable
  // with int64 arithmetic.
  int64_t reach = StorageBytes(shape.dtype());
  for (size_t i = 0; i < shape.rank(); ++i) {
    if (!MulAddFits(byte_strides[i], shape.dims()[i] - 1, reach, &reach)) {
      return InvalidArgumentError("byte strides {", StrJoin(byte_strides, ","),
                                  "} for ", shape.ToString(),
                                  " reach beyond the int64 range");
    }
  }
  return OkStatus();
}

Status CheckHostSpan(const void* data, const Shape& shape,
                     std::span<const int64_t> byte_strides) {
  if (shape.element_count() == 0) return OkStatus();
  constexpr uint64_t kAddressSpaceEnd = uint64_t{1} << 56;
  // Offsets of the lowest and highest byte touched, relative to `data`;
  // CheckSourceStrides made sure these sums fit in int64.
  int64_t lowest = 0;
  int64_t highest = StorageBytes(shape.dtype());
  for (size_t i = 0; i < shape.rank(); ++i) {
    const int64_t reach = byte_strides[i] * (shape.dims()[i] - 1);
    (reach < 0 ? lowest : highest) += reach;
  }
  const uint64_t start = reinterpret_cast<uintptr_t>(data);
  if (static_cast<uint64_t>(-lowest) > start ||
      static_cast<uint64_t>(highest) > kAddressSpaceEnd - start) {
    return InvalidArgumentError(
        "byte strides {", StrJoin(byte_strides, ","), "} for ",
        shape.ToString(), " reach from ", lowest, " to ", highest,
        " bytes around the host data, outside the process's address space");
  }
  return OkStatus();
}

StatusOr<int64_t> CheckDestinationStrides(const Shape& shape,
                                          std::span<const int64_t> byte_strides,
                                          int64_t dst_size) {
  RETURN_IF_ERROR(CheckSourceStrides(shape, byte_strides));
  const int64_t element_bytes = StorageBytes(shape.dtype());
  if (shape.element_count() == 0 || element_bytes == 0) return 0;
  for (size_t i = 0; i < shape.rank(); ++i) {
    if (byte_strides[i] < 0) {
      return InvalidArgumentError("byte stride ", byte_strides[i],
                                  " of dimension ", i, " of ", shape.ToString(),
                                  " is negative; a destination layout needs "
                                  "strides of zero or more");
    }
  }
  // Sort the dimensions that have more than one element by stride; each
  // must step over the whole extent of the ones inside it, or two elements
  // would land on the same bytes.
  std::vector<size_t> order;
  for (size_t i = 0; i < shape.rank(); ++i) {
    if (shape.dims()[i] > 1) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return byte_strides[a] < byte_strides[b];
  });
  int64_t extent = element_bytes;  // bytes spanned by the inner dimensions
  for (size_t i : order) {
    if (byte_strides[i] < extent) {
      return InvalidArgumentError(
          "byte strides {", StrJoin(byte_strides, ","), "} for ",
          shape.ToString(), " make elements overlap: dimension ", i, " steps ",
          byte_strides[i], " bytes, but the dimensions inside it span ",
          extent);
    }
    extent = byte_strides[i] * (shape.dims()[i] - 1) + extent;
  }
  if (extent > dst_size) {
    return InvalidArgumentError("the layout with byte strides {",
                                StrJoin(byte_strides, ","), "} for ",
                                shape.ToString(), " spans ", extent,
                                " bytes, but the destination has ", dst_size);
  }
  return extent;
}

void GatherToDense(const Shape& shape, const void* src,
                   std::span<const int64_t> src_strides, void* dst) {
  StridedCopy<true>(shape, static_cast<const uint8_t*>(src),
                    static_cast<uint8_t*>(dst), src_strides);
}

void ScatterFromDense(const Shape& shape, const void* src, void* dst,
                      std::span<const int64_t> dst_strides) {
  StridedCopy<false>(shape, static_cast<const uint8_t*>(src),
                     static_cast<uint8_t*>(dst), dst_strides);
}

}  // namespace kiln::runtime
