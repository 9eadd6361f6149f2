#include "exec/array_shape.h"

#include "base/strings.h"

namespace kiln::exec {

int64_t NumElements(const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (int64_t dim : dims) count *= dim;
  return count;
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  return strides;
}

int64_t ArrayShape::num_elements() const { return NumElements(dims); }

std::vector<int64_t> ArrayShape::Strides() const {
  return RowMajorStrides(dims);
}

std::string ArrayShape::ToString() const {
  std::string text = "tensor<";
  for (int64_t dim : dims) StrAppend(text, dim, "x");
  StrAppend(text, ir::ElementTypeName(type), ">");
  return text;
}

}  // namespace kiln::exec
