// The static description of a dense array at run time: element type and
// dimensions. Buffers are row-major with ir::StorageBytes() per element, the
// same layout as DenseElementsAttr data (one byte for i1 and sub-byte types).
#ifndef KILN_EXEC_ARRAY_SHAPE_H_
#define KILN_EXEC_ARRAY_SHAPE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ir/element_type.h"

namespace kiln::exec {

using ir::ElementType;

struct ArrayShape {
  ElementType type = ElementType::kF32;
  std::vector<int64_t> dims;

  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  int64_t num_elements() const;
  int64_t element_bytes() const { return ir::StorageBytes(type); }
  int64_t byte_size() const { return num_elements() * element_bytes(); }
  // Row-major strides in elements.
  std::vector<int64_t> Strides() const;
  // "tensor<2x3xf32>".
  std::string ToString() const;

  bool operator==(const ArrayShape&) const = default;
};

// Row-major strides (in elements) of `dims`.
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims);

// Product of `dims` (1 for rank 0).
int64_t NumElements(const std::vector<int64_t>& dims);

}  // namespace kiln::exec

#endif  // KILN_EXEC_ARRAY_SHAPE_H_
