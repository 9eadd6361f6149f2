// Attribute readers of the verifier: integer and boolean lists, integers
// with range constraints, enums and dense integer tensors, each refusing a
// present attribute of the wrong kind.
#include <limits>

#include "ir/verify_internal.h"

namespace kiln::ir::verifier {

StatusOr<Attribute> AttrOfKind(const Operation& op, std::string_view name,
                               AttrKind kind, bool required) {
  Attribute attr = op.GetAttr(name);
  if (!attr) {
    if (required) return OpError(op, "requires attribute '", name, "'");
    return Attribute();
  }
  if (!attr.is(kind)) {
    return OpError(op, "attribute '", name,
                   "' has the wrong kind: ", attr.ToString());
  }
  return attr;
}

StatusOr<IntElements> ReadIntElements(const Operation& op,
                                      std::string_view name,
                                      const Attribute& attr) {
  IntElements out;
  if (attr.is(AttrKind::kDenseArray) || attr.is(AttrKind::kArray)) {
    std::optional<std::vector<int64_t>> values = attr.AsIntVector();
    if (!values) {
      return OpError(op, "attribute '", name, "' must hold integers, but got ",
                     attr.ToString());
    }
    out.shape = {static_cast<int64_t>(values->size())};
    out.values = std::move(*values);
    return out;
  }
  if (!attr.is(AttrKind::kDenseElements)) {
    return OpError(op, "attribute '", name,
                   "' must be an integer array or dense tensor, but got ",
                   attr.ToString());
  }
  Type type = attr.type();
  if (!IsTensor(type) ||
      !(IsIntElement(type.element()) || IsPredElement(type.element()) ||
        IsScalarElement(type.element(), ElementType::kIndex))) {
    return OpError(op, "attribute '", name,
                   "' must be a dense tensor of integers, but got ",
                   attr.ToString());
  }
  std::optional<int64_t> count = StaticElementCount(type.shape());
  if (!count || *count > kMaxAttrElements) {
    return OpError(op, "attribute '", name, "' of type ", Quoted(type),
                   " has too many elements");
  }
  std::optional<std::vector<int64_t>> values = attr.AsIntVector();
  if (!values || static_cast<int64_t>(values->size()) != *count) {
    return OpError(op, "attribute '", name, "' has malformed data");
  }
  out.shape = type.shape();
  out.values = std::move(*values);
  return out;
}

StatusOr<std::optional<std::vector<int64_t>>> OptionalInts(
    const Operation& op, std::string_view name) {
  Attribute attr = op.GetAttr(name);
  if (!attr) return std::optional<std::vector<int64_t>>();
  ASSIGN_OR_RETURN(IntElements elements, ReadIntElements(op, name, attr));
  if (elements.shape.size() != 1) {
    return OpError(op, "expects the shape of ", name,
                   " attribute to be 1-D, but got {", JoinInts(elements.shape),
                   "}.");
  }
  return std::optional<std::vector<int64_t>>(std::move(elements.values));
}

StatusOr<std::vector<int64_t>> RequiredInts(const Operation& op,
                                            std::string_view name) {
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> values,
                   OptionalInts(op, name));
  if (!values) return OpError(op, "requires attribute '", name, "'");
  return std::move(*values);
}

StatusOr<std::optional<std::vector<bool>>> OptionalBools(
    const Operation& op, std::string_view name) {
  Attribute attr = op.GetAttr(name);
  if (!attr) return std::optional<std::vector<bool>>();
  std::vector<bool> out;
  if (attr.is(AttrKind::kDenseArray) &&
      attr.dense_array_type() == ElementType::kI1) {
    for (int64_t v : attr.dense_ints()) out.push_back(v != 0);
    return std::optional<std::vector<bool>>(std::move(out));
  }
  if (attr.is(AttrKind::kDenseElements) && IsTensor(attr.type()) &&
      IsPredElement(attr.type().element())) {
    ASSIGN_OR_RETURN(IntElements elements, ReadIntElements(op, name, attr));
    if (elements.shape.size() != 1) {
      return OpError(op, "expects the shape of ", name,
                     " attribute to be 1-D, but got {",
                     JoinInts(elements.shape), "}.");
    }
    for (int64_t v : elements.values) out.push_back(v != 0);
    return std::optional<std::vector<bool>>(std::move(out));
  }
  if (attr.is(AttrKind::kArray)) {
    for (const Attribute& element : attr.array()) {
      if (!element.is(AttrKind::kBool)) break;
      out.push_back(element.bool_value());
    }
    if (out.size() == attr.array().size()) {
      return std::optional<std::vector<bool>>(std::move(out));
    }
  }
  return OpError(op, "attribute '", name, "' must be a list of booleans, got ",
                 attr.ToString());
}

StatusOr<std::optional<int64_t>> OptionalInt(const Operation& op,
                                             std::string_view name) {
  Attribute attr = op.GetAttr(name);
  if (!attr) return std::optional<int64_t>();
  if (!attr.is(AttrKind::kInteger)) {
    return OpError(op, "attribute '", name,
                   "' must be an integer attribute, but got ", attr.ToString());
  }
  return std::optional<int64_t>(attr.int_value());
}

StatusOr<int64_t> RequiredInt(const Operation& op, std::string_view name) {
  ASSIGN_OR_RETURN(std::optional<int64_t> value, OptionalInt(op, name));
  if (!value) return OpError(op, "requires attribute '", name, "'");
  return *value;
}

StatusOr<int64_t> RequiredNonNegativeInt(const Operation& op,
                                         std::string_view name, int bits) {
  ASSIGN_OR_RETURN(int64_t value, RequiredInt(op, name));
  int64_t max = bits >= 64 ? std::numeric_limits<int64_t>::max()
                           : (int64_t{1} << (bits - 1)) - 1;
  if (value < 0 || value > max) {
    return OpError(op, "attribute '", name,
                   "' failed to satisfy constraint: ", bits,
                   "-bit signless integer attribute whose value is "
                   "non-negative, but got ",
                   value);
  }
  return value;
}

StatusOr<int64_t> RequiredPositiveInt(const Operation& op,
                                      std::string_view name, int bits) {
  ASSIGN_OR_RETURN(int64_t value, RequiredInt(op, name));
  int64_t max = bits >= 64 ? std::numeric_limits<int64_t>::max()
                           : (int64_t{1} << (bits - 1)) - 1;
  if (value <= 0 || value > max) {
    return OpError(op, "attribute '", name,
                   "' failed to satisfy constraint: ", bits,
                   "-bit signless integer attribute whose value is "
                   "positive, but got ",
                   value);
  }
  return value;
}

StatusOr<bool> OptionalBool(const Operation& op, std::string_view name,
                            bool fallback) {
  Attribute attr = op.GetAttr(name);
  if (!attr) return fallback;
  if (attr.is(AttrKind::kBool)) return attr.bool_value();
  if (attr.is(AttrKind::kUnit)) return true;
  return OpError(op, "attribute '", name, "' must be a boolean, but got ",
                 attr.ToString());
}

StatusOr<std::optional<int64_t>> OptionalEnum(const Operation& op,
                                              std::string_view name,
                                              EnumKind kind) {
  Attribute attr = op.GetAttr(name);
  if (!attr) return std::optional<int64_t>();
  if (!attr.is(AttrKind::kEnum) || attr.enum_kind() != kind ||
      EnumValueName(kind, attr.enum_value()).empty()) {
    return OpError(op, "attribute '", name, "' must be a #stablehlo<",
                   EnumKindName(kind), " ...> attribute, but got ",
                   attr.ToString());
  }
  return std::optional<int64_t>(attr.enum_value());
}

StatusOr<int64_t> RequiredEnum(const Operation& op, std::string_view name,
                               EnumKind kind) {
  ASSIGN_OR_RETURN(std::optional<int64_t> value, OptionalEnum(op, name, kind));
  if (!value) return OpError(op, "requires attribute '", name, "'");
  return *value;
}

}  // namespace kiln::ir::verifier
