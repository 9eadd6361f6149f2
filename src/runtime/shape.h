// The shape of a runtime buffer: an element type and dense dimensions.
#ifndef KILN_RUNTIME_SHAPE_H_
#define KILN_RUNTIME_SHAPE_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "runtime/dtype.h"

namespace kiln::runtime {

// The most dimensions a buffer may have (numpy's limit).
inline constexpr size_t kMaxRank = 64;

class Shape {
 public:
  // Checks and builds a shape: at most kMaxRank dimensions, none negative,
  // an element count and byte size that fit in int64, and no dimensions
  // for tokens. Errors are INVALID_ARGUMENT naming the offending value.
  static StatusOr<Shape> Make(DType dtype, std::span<const int64_t> dims);

  Shape() = default;

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  size_t rank() const { return dims_.size(); }
  int64_t element_count() const { return element_count_; }
  // Bytes of the dense row-major storage (StorageBytes per element).
  int64_t byte_size() const { return byte_size_; }

  // "f32[2,3]".
  std::string ToString() const;

  friend bool operator==(const Shape& a, const Shape& b) {
    return a.dtype_ == b.dtype_ && a.dims_ == b.dims_;
  }

 private:
  DType dtype_ = DType::kF32;
  std::vector<int64_t> dims_;
  int64_t element_count_ = 1;
  int64_t byte_size_ = 4;
};

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_SHAPE_H_
