// Types of StableHLO values: tensors (of element or quantized types),
// tokens, tuples, functions, futures, and types of other dialects kept as
// text.
//
// `Type` is a small immutable handle with value semantics: copies share the
// same node, and `==` compares structure. A default-constructed Type is
// null (`!type`).
#ifndef KILN_IR_TYPES_H_
#define KILN_IR_TYPES_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/element_type.h"

namespace kiln::ir {

class Attribute;

// A dimension whose size is not known statically (`?`).
inline constexpr int64_t kDynamic = std::numeric_limits<int64_t>::min();

enum class TypeKind : uint8_t {
  kElement,    // a scalar element type used on its own (`f32`, `index`)
  kQuantized,  // !quant.uniform<...>
  kTensor,     // tensor<...>
  kToken,      // !stablehlo.token
  kTuple,      // tuple<...>
  kFunction,   // (inputs) -> results
  kFuture,     // !stablehlo.future<...>
  kMemRef,     // memref<...> (custom_call buffers)
  kNone,       // none
  kOpaque,     // a type of another dialect, kept as its text: !sdy.foo<...>
  kUnrankedTensor,  // tensor<*xT> (custom_call operands may be unranked)
};

// A uniform quantized element type. Per-tensor when `axis` is empty
// (exactly one scale and zero point); per-axis otherwise.
struct QuantizedType {
  ElementType storage_type;   // an integer type
  int64_t storage_min;        // the storage range (defaults: the full range)
  int64_t storage_max;
  ElementType expressed_type;  // a float type
  std::optional<int32_t> axis;
  std::vector<double> scales;
  std::vector<int64_t> zero_points;
  // Whether the storage range was written explicitly (`i8<-127:127>`).
  bool explicit_storage_range = false;

  bool operator==(const QuantizedType& other) const;
};

class Type {
 public:
  Type() = default;

  static Type Element(ElementType element);
  static Type Quantized(QuantizedType quantized);
  // `element` is an element or quantized type. `encoding` is null or an
  // attribute such as #stablehlo.bounds<...>.
  static Type Tensor(std::vector<int64_t> shape, Type element);
  static Type Tensor(std::vector<int64_t> shape, Type element,
                     const Attribute& encoding);
  static Type Token();
  static Type Tuple(std::vector<Type> elements);
  static Type Function(std::vector<Type> inputs, std::vector<Type> results);
  static Type Future(std::vector<Type> elements);
  static Type MemRef(std::vector<int64_t> shape, Type element);
  static Type UnrankedTensor(Type element);
  static Type None();
  // `text` is everything after '!', e.g. "sdy.mesh<...>".
  static Type Opaque(std::string text);

  explicit operator bool() const { return storage_ != nullptr; }
  TypeKind kind() const;
  bool is(TypeKind kind) const { return storage_ && this->kind() == kind; }
  bool IsTensor() const { return is(TypeKind::kTensor); }
  bool IsToken() const { return is(TypeKind::kToken); }
  bool IsTuple() const { return is(TypeKind::kTuple); }

  // kElement.
  ElementType element_type() const;
  // kQuantized.
  const QuantizedType& quantized() const;

  // kTensor and kMemRef.
  const std::vector<int64_t>& shape() const;
  int64_t rank() const { return static_cast<int64_t>(shape().size()); }
  int64_t dim(int64_t i) const { return shape()[i]; }
  // The element (or quantized) type; also of kUnrankedTensor.
  Type element() const;
  // The encoding attribute (null if none).
  const Attribute& encoding() const;
  // Bounds from a #stablehlo.bounds encoding (kDynamic where unbounded).
  std::optional<std::vector<int64_t>> bounds() const;
  bool HasStaticShape() const;
  // Product of the dimensions; -1 if any is dynamic.
  int64_t NumElements() const;
  // For a tensor of an element type: that element type; of a quantized
  // type: its storage type.
  ElementType StorageElementType() const;
  // A tensor with the same element type (and no encoding) and a new shape.
  Type WithShape(std::vector<int64_t> shape) const;
  // A tensor with the same shape and a new element type.
  Type WithElement(Type element) const;

  // kTuple, kFuture: elements. kFunction: inputs / results.
  const std::vector<Type>& elements() const;
  const std::vector<Type>& inputs() const;
  const std::vector<Type>& results() const;

  // kOpaque.
  const std::string& opaque_text() const;

  // The MLIR text of the type.
  std::string ToString() const;

  size_t Hash() const;
  friend bool operator==(const Type& a, const Type& b);
  friend bool operator!=(const Type& a, const Type& b) { return !(a == b); }

  struct Storage;

 private:
  explicit Type(std::shared_ptr<const Storage> storage)
      : storage_(std::move(storage)) {}
  std::shared_ptr<const Storage> storage_;
};

// Shorthand for a tensor of an element type.
inline Type TensorOf(std::vector<int64_t> shape, ElementType element) {
  return Type::Tensor(std::move(shape), Type::Element(element));
}

}  // namespace kiln::ir

#endif  // KILN_IR_TYPES_H_
