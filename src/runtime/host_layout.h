// Host layouts: how the elements of a shape are placed in host memory, as
// a byte stride per dimension, and the copies between such a layout and a
// buffer's dense row-major storage.
#ifndef KILN_RUNTIME_HOST_LAYOUT_H_
#define KILN_RUNTIME_HOST_LAYOUT_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "runtime/shape.h"

namespace kiln::runtime {

// Byte strides of the dense row-major layout of `shape`.
std::vector<int64_t> DenseByteStrides(const Shape& shape);

// Byte strides of the dense layout of `shape` whose dimensions are ordered
// `minor_to_major` (XLA's layout notation: minor_to_major[0] varies
// fastest). INVALID_ARGUMENT unless it is a permutation of the dimensions.
StatusOr<std::vector<int64_t>> ByteStridesFromMinorToMajor(
    const Shape& shape, std::span<const int64_t> minor_to_major);

// Whether `minor_to_major` is the row-major layout (rank-1, ..., 0); an
// empty one counts as row-major, as Buffer stores it.
bool IsRowMajorLayout(std::span<const int64_t> minor_to_major);

// OK when `minor_to_major` is a permutation of the `rank` dimensions (or
// empty); INVALID_ARGUMENT naming it otherwise.
Status CheckMinorToMajor(std::span<const int64_t> minor_to_major, size_t rank);

// "{1,0}": XLA's text of a layout (and what PjRtLayout serializes to).
std::string LayoutToString(std::span<const int64_t> minor_to_major);

// Byte strides of a buffer of `shape` laid out by `minor_to_major` (checked
// by CheckMinorToMajor; empty: row-major).
std::vector<int64_t> LayoutByteStrides(const Shape& shape,
                                       std::span<const int64_t> minor_to_major);

// The dimensions of the dense row-major array whose bytes are those of a
// `dims` array laid out by `minor_to_major`: most major first.
std::vector<int64_t> PhysicalDims(std::span<const int64_t> dims,
                                  std::span<const int64_t> minor_to_major);

// Whether `byte_strides` describe the dense row-major layout of `shape`
// (strides of dimensions of size 1 do not matter).
bool IsDenseRowMajor(const Shape& shape, std::span<const int64_t> byte_strides);

// Checks strides for reading the elements of `shape` from host memory: one
// per dimension, and every element's offset fits in int64. Negative and
// zero strides are allowed (elements may be read more than once).
Status CheckSourceStrides(const Shape& shape,
                          std::span<const int64_t> byte_strides);

// Checks that the bytes `byte_strides` (already checked by
// CheckSourceStrides) reach from `data` lie inside the address space a
// process can have (below 2^56 on Linux): host memory of unknown size
// cannot be checked further, but strides that reach past every possible
// address are certainly wrong.
Status CheckHostSpan(const void* data, const Shape& shape,
                     std::span<const int64_t> byte_strides);

// Checks strides for writing the elements of `shape` into `dst_size` bytes
// of host memory and returns how many bytes the layout spans: one stride
// per dimension, none negative, no two elements at overlapping bytes, and
// everything inside `dst_size`.
StatusOr<int64_t> CheckDestinationStrides(const Shape& shape,
                                          std::span<const int64_t> byte_strides,
                                          int64_t dst_size);

// Copies the elements of `shape` from `src`, laid out by `src_strides`, to
// `dst` in dense row-major order.
void GatherToDense(const Shape& shape, const void* src,
                   std::span<const int64_t> src_strides, void* dst);

// Copies the elements of `shape` from dense row-major `src` to `dst`, laid
// out by `dst_strides`.
void ScatterFromDense(const Shape& shape, const void* src, void* dst,
                      std::span<const int64_t> dst_strides);

// Copies the elements of `shape` from `src` laid out by `src_strides` to
// `dst` laid out by `dst_strides` (both checked; the two must not overlap).
void CopyStrided(const Shape& shape, const void* src,
                 std::span<const int64_t> src_strides, void* dst,
                 std::span<const int64_t> dst_strides);

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_HOST_LAYOUT_H_
