#include "ir/types.h"

#include <functional>

#include "base/logging.h"
#include "ir/attributes.h"

namespace kiln::ir {

struct Type::Storage {
  TypeKind kind;
  ElementType element_type = ElementType::kF32;
  QuantizedType quantized{};
  std::vector<int64_t> shape;
  std::vector<Type> types;     // element (tensor/memref: one), tuple, future, inputs
  std::vector<Type> results;   // function results
  Attribute encoding;
  std::string text;            // opaque
};

bool QuantizedType::operator==(const QuantizedType& other) const {
  return storage_type == other.storage_type && storage_min == other.storage_min &&
         storage_max == other.storage_max && expressed_type == other.expressed_type &&
         axis == other.axis && scales == other.scales && zero_points == other.zero_points;
}

namespace {
std::shared_ptr<Type::Storage> NewStorage(TypeKind kind) {
  auto storage = std::make_shared<Type::Storage>();
  storage->kind = kind;
  return storage;
}
}  // namespace

Type Type::Element(ElementType element) {
  // Element types are used everywhere; share one node per type.
  static const std::vector<Type>* kCache = [] {
    auto* cache = new std::vector<Type>();
    for (int i = 0; i < kNumElementTypes; ++i) {
      auto storage = NewStorage(TypeKind::kElement);
      storage->element_type = static_cast<ElementType>(i);
      cache->push_back(Type(storage));
    }
    return cache;
  }();
  return (*kCache)[static_cast<int>(element)];
}

Type Type::Quantized(QuantizedType quantized) {
  auto storage = NewStorage(TypeKind::kQuantized);
  storage->quantized = std::move(quantized);
  return Type(storage);
}

Type Type::Tensor(std::vector<int64_t> shape, Type element) {
  return Tensor(std::move(shape), std::move(element), Attribute());
}

Type Type::Tensor(std::vector<int64_t> shape, Type element,
                  const Attribute& encoding) {
  auto storage = NewStorage(TypeKind::kTensor);
  storage->shape = std::move(shape);
  storage->types.push_back(std::move(element));
  storage->encoding = encoding;
  return Type(storage);
}

Type Type::Token() {
  static const Type kToken(NewStorage(TypeKind::kToken));
  return kToken;
}

Type Type::Tuple(std::vector<Type> elements) {
  auto storage = NewStorage(TypeKind::kTuple);
  storage->types = std::move(elements);
  return Type(storage);
}

Type Type::Function(std::vector<Type> inputs, std::vector<Type> results) {
  auto storage = NewStorage(TypeKind::kFunction);
  storage->types = std::move(inputs);
  storage->results = std::move(results);
  return Type(storage);
}

Type Type::Future(std::vector<Type> elements) {
  auto storage = NewStorage(TypeKind::kFuture);
  storage->types = std::move(elements);
  return Type(storage);
}

Type Type::MemRef(std::vector<int64_t> shape, Type element) {
  auto storage = NewStorage(TypeKind::kMemRef);
  storage->shape = std::move(shape);
  storage->types.push_back(std::move(element));
  return Type(storage);
}

Type Type::UnrankedTensor(Type element) {
  auto storage = NewStorage(TypeKind::kUnrankedTensor);
  storage->types.push_back(std::move(element));
  return Type(storage);
}

Type Type::None() {
  static const Type kNoneType(NewStorage(TypeKind::kNone));
  return kNoneType;
}

Type Type::Opaque(std::string text) {
  auto storage = NewStorage(TypeKind::kOpaque);
  storage->text = std::move(text);
  return Type(storage);
}

TypeKind Type::kind() const {
  KILN_CHECK(storage_) << "kind() of a null Type";
  return storage_->kind;
}

ElementType Type::element_type() const {
  KILN_CHECK(is(TypeKind::kElement)) << ToString();
  return storage_->element_type;
}

const QuantizedType& Type::quantized() const {
  KILN_CHECK(is(TypeKind::kQuantized)) << ToString();
  return storage_->quantized;
}

const std::vector<int64_t>& Type::shape() const {
  KILN_CHECK(is(TypeKind::kTensor) || is(TypeKind::kMemRef)) << ToString();
  return storage_->shape;
}

Type Type::element() const {
  KILN_CHECK(is(TypeKind::kTensor) || is(TypeKind::kMemRef) || is(TypeKind::kUnrankedTensor))
      << ToString();
  return storage_->types[0];
}

const Attribute& Type::encoding() const {
  KILN_CHECK(is(TypeKind::kTensor)) << ToString();
  return storage_->encoding;
}

std::optional<std::vector<int64_t>> Type::bounds() const {
  if (!is(TypeKind::kTensor) || !storage_->encoding.is(AttrKind::kTypeExtensions)) {
    return std::nullopt;
  }
  return storage_->encoding.bounds();
}

bool Type::HasStaticShape() const {
  for (int64_t d : shape()) {
    if (d == kDynamic) return false;
  }
  return true;
}

int64_t Type::NumElements() const {
  int64_t count = 1;
  for (int64_t d : shape()) {
    if (d == kDynamic || d < 0) return -1;
    count *= d;
  }
  return count;
}

ElementType Type::StorageElementType() const {
  Type e = element();
  if (e.is(TypeKind::kQuantized)) return e.quantized().storage_type;
  return e.element_type();
}

Type Type::WithShape(std::vector<int64_t> shape) const {
  return Tensor(std::move(shape), element());
}

Type Type::WithElement(Type element) const {
  return Tensor(shape(), std::move(element), encoding());
}

const std::vector<Type>& Type::elements() const {
  KILN_CHECK(is(TypeKind::kTuple) || is(TypeKind::kFuture)) << ToString();
  return storage_->types;
}

const std::vector<Type>& Type::inputs() const {
  KILN_CHECK(is(TypeKind::kFunction)) << ToString();
  return storage_->types;
}

const std::vector<Type>& Type::results() const {
  KILN_CHECK(is(TypeKind::kFunction)) << ToString();
  return storage_->results;
}

const std::string& Type::opaque_text() const {
  KILN_CHECK(is(TypeKind::kOpaque)) << ToString();
  return storage_->text;
}

bool operator==(const Type& a, const Type& b) {
  if (a.storage_ == b.storage_) return true;
  if (!a.storage_ || !b.storage_) return false;
  const Type::Storage& x = *a.storage_;
  const Type::Storage& y = *b.storage_;
  if (x.kind != y.kind) return false;
  switch (x.kind) {
    case TypeKind::kElement: return x.element_type == y.element_type;
    case TypeKind::kQuantized: return x.quantized == y.quantized;
    case TypeKind::kTensor:
      return x.shape == y.shape && x.types == y.types && x.encoding == y.encoding;
    case TypeKind::kMemRef: return x.shape == y.shape && x.types == y.types;
    case TypeKind::kUnrankedTensor: return x.types == y.types;
    case TypeKind::kToken:
    case TypeKind::kNone: return true;
    case TypeKind::kTuple:
    case TypeKind::kFuture: return x.types == y.types;
    case TypeKind::kFunction: return x.types == y.types && x.results == y.results;
    case TypeKind::kOpaque: return x.text == y.text;
  }
  return false;
}

size_t Type::Hash() const {
  if (!storage_) return 0;
  size_t h = std::hash<int>()(static_cast<int>(storage_->kind));
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  switch (storage_->kind) {
    case TypeKind::kElement: mix(static_cast<size_t>(storage_->element_type)); break;
    case TypeKind::kQuantized:
      mix(static_cast<size_t>(storage_->quantized.storage_type));
      mix(storage_->quantized.scales.size());
      break;
    case TypeKind::kTensor:
    case TypeKind::kMemRef:
      for (int64_t d : storage_->shape) mix(static_cast<size_t>(d));
      mix(storage_->types[0].Hash());
      break;
    case TypeKind::kTuple:
    case TypeKind::kFuture:
    case TypeKind::kFunction:
    case TypeKind::kUnrankedTensor:
      for (const Type& t : storage_->types) mix(t.Hash());
      for (const Type& t : storage_->results) mix(t.Hash());
      break;
    case TypeKind::kOpaque: mix(std::hash<std::string>()(storage_->text)); break;
    default: break;
  }
  return h;
}

}  // namespace kiln::ir
