// Element types and array shapes as the client sees them: PJRT's element
// type numbers (`PJRT_Buffer_Type`), with the names StableHLO and NumPy use.
#ifndef KILN_CLIENT_SHAPE_H_
#define KILN_CLIENT_SHAPE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "pjrt_c_api.h"

namespace kiln::client {

// The StableHLO spelling of an element type ("f32", "i1", "ui8", "bf16",
// "complex<f32>"), or "invalid(N)" for a number that is not a PJRT type.
std::string_view ElementTypeName(PJRT_Buffer_Type type);

// The element type for a StableHLO spelling ("f32", "i32", "i1", ...) or a
// PJRT name ("F32", "S32", "PRED", ...); nullopt for anything else.
std::optional<PJRT_Buffer_Type> ParseElementType(std::string_view name);

// Bits of one element (1 for pred and the 1-bit integers, 4 for s4, ...);
// 0 for INVALID and TOKEN.
int ElementTypeBits(PJRT_Buffer_Type type);

// True when the client knows how many bytes an element takes on the host:
// every PJRT type but INVALID and TOKEN. Sub-byte types take one byte each.
bool IsArrayElementType(PJRT_Buffer_Type type);

// The shape of a dense array: an element type and dimensions (row-major).
struct Shape {
  PJRT_Buffer_Type element_type = PJRT_Buffer_Type_INVALID;
  std::vector<int64_t> dimensions;

  Shape() = default;
  Shape(PJRT_Buffer_Type type, std::vector<int64_t> dims)
      : element_type(type), dimensions(std::move(dims)) {}

  int64_t rank() const { return static_cast<int64_t>(dimensions.size()); }
  // Product of the dimensions (1 for a scalar).
  int64_t ElementCount() const;
  // Bytes of the dense row-major host representation (one byte per element
  // for sub-byte types, as PJRT's host buffers hold them).
  int64_t ByteSize() const;
  // "f32[4,8]"; "f32[]" for a scalar.
  std::string ToString() const;
  // "tensor<4x8xf32>", the StableHLO type.
  std::string ToMlirType() const;

  friend bool operator==(const Shape& a, const Shape& b) {
    return a.element_type == b.element_type && a.dimensions == b.dimensions;
  }
  friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }
};

// Checks that every dimension is non-negative and that the byte size fits
// in int64; the error names the shape.
Status ValidateShape(const Shape& shape);

}  // namespace kiln::client

#endif  // KILN_CLIENT_SHAPE_H_
