#include "runtime/shape.h"

#include <limits>

namespace kiln::runtime {

StatusOr<Shape> Shape::Make(DType dtype, std::span<const int64_t> dims) {
  if (dims.size() > kMaxRank) {
    return InvalidArgumentError("a shape of rank ", dims.size(),
                                " exceeds the maximum rank ", kMaxRank);
  }
  if (dtype == DType::kToken && !dims.empty()) {
    return InvalidArgumentError("a token has no dimensions, but ", dims.size(),
                                " were given");
  }
  Shape shape;
  shape.dtype_ = dtype;
  shape.dims_.assign(dims.begin(), dims.end());
  bool has_zero_dim = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      return InvalidArgumentError("dimension ", i, " of ", shape.ToString(),
                                  " is negative (", dims[i], ")");
    }
    has_zero_dim |= dims[i] == 0;
  }
  // A shape with a zero dimension holds no elements, however large the
  // other dimensions are.
  int64_t count = has_zero_dim ? 0 : 1;
  for (size_t i = 0; i < dims.size() && count != 0; ++i) {
    if (count > std::numeric_limits<int64_t>::max() / dims[i]) {
      return InvalidArgumentError("the element count of ", shape.ToString(),
                                  " overflows int64");
    }
    count *= dims[i];
  }
  int64_t bytes_per_element = StorageBytes(dtype);
  if (bytes_per_element != 0 &&
      count > std::numeric_limits<int64_t>::max() / bytes_per_element) {
    return InvalidArgumentError("the byte size of ", shape.ToString(),
                                " overflows int64");
  }
  shape.element_count_ = count;
  shape.byte_size_ = count * bytes_per_element;
  return shape;
}

std::string Shape::ToString() const {
  return StrCat(DTypeName(dtype_), "[", StrJoin(dims_, ","), "]");
}

}  // namespace kiln::runtime
