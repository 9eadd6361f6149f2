// Element classes (the ODS type constraints of StableHLO ops), the
// quantized-type rules, and the operand/result type checks built on them.
#include <cmath>
#include <cstdio>
#include <limits>

#include "ir/verify_internal.h"

namespace kiln::ir::verifier {

// ---- Element classes --------------------------------------------------------

uint32_t ClassOf(const Type& element) {
  if (element.is(TypeKind::kQuantized)) {
    const QuantizedType& q = element.quantized();
    if (!IsInteger(q.storage_type) || !IsFloat(q.expressed_type)) return 0;
    return q.axis.has_value() ? kPerAxisQuantized : kQuantized;
  }
  if (!element.is(TypeKind::kElement)) return 0;
  ElementType type = element.element_type();
  if (type == ElementType::kIndex) return kIndex;
  switch (Category(type)) {
    case ElementCategory::kBool:
      return kPred;
    case ElementCategory::kSignedInt:
      return kSignedInt;
    case ElementCategory::kUnsignedInt:
      return kUnsignedInt;
    case ElementCategory::kFloat:
      return kFloat;
    case ElementCategory::kComplex:
      return kComplex;
  }
  return 0;
}

std::string DescribeClasses(uint32_t classes) {
  static constexpr std::pair<uint32_t, std::string_view> kNames[] = {
      {kPred, "pred"},
      {kInt, "integer"},
      {kSignedInt, "signed integer"},
      {kUnsignedInt, "unsigned integer"},
      {kFloat, "float"},
      {kComplex, "complex"},
      {kQuantized, "per-tensor quantized"},
      {kPerAxisQuantized, "per-axis quantized"},
      {kIndex, "index"},
  };
  std::vector<std::string_view> names;
  uint32_t covered = 0;
  for (const auto& [bits, name] : kNames) {
    if ((classes & bits) == bits && (covered & bits) == 0) {
      names.push_back(name);
      covered |= bits;
    }
  }
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out.append(i + 1 == names.size() ? " or " : ", ");
    out.append(names[i]);
  }
  return out;
}

bool IsTensor(const Type& type) { return type.is(TypeKind::kTensor); }

bool IsTensorOf(const Type& type, uint32_t classes) {
  return IsTensor(type) && (ClassOf(type.element()) & classes) != 0;
}

bool IsQuantizedElement(const Type& element) {
  return element.is(TypeKind::kQuantized);
}

bool IsPerAxisElement(const Type& element) {
  return element.is(TypeKind::kQuantized) &&
         element.quantized().axis.has_value();
}

Type ElementOf(const Type& type) {
  return IsTensor(type) ? type.element() : Type();
}

Type ExpressedOrSelf(const Type& element) {
  if (element.is(TypeKind::kQuantized)) {
    return Type::Element(element.quantized().expressed_type);
  }
  return element;
}

Type StorageOrSelf(const Type& element) {
  if (element.is(TypeKind::kQuantized)) {
    return Type::Element(element.quantized().storage_type);
  }
  return element;
}

int ElementBitWidth(const Type& element) {
  if (element.is(TypeKind::kQuantized)) {
    return BitWidth(element.quantized().storage_type);
  }
  if (!element.is(TypeKind::kElement)) return 0;
  return BitWidth(element.element_type());
}

bool IsFloatElement(const Type& element) {
  return element.is(TypeKind::kElement) && IsFloat(element.element_type());
}
bool IsComplexElement(const Type& element) {
  return element.is(TypeKind::kElement) && IsComplex(element.element_type());
}
bool IsIntElement(const Type& element) {
  return element.is(TypeKind::kElement) && IsInteger(element.element_type()) &&
         element.element_type() != ElementType::kIndex;
}
bool IsPredElement(const Type& element) {
  return element.is(TypeKind::kElement) && IsBool(element.element_type());
}
bool IsScalarElement(const Type& element, ElementType type) {
  return element.is(TypeKind::kElement) && element.element_type() == type;
}

namespace {

// The largest finite value and the smallest positive value of a float
// format, for the scale range rule.
std::pair<double, double> FloatRange(ElementType type) {
  switch (type) {
    case ElementType::kF64:
      return {std::numeric_limits<double>::max(),
              std::numeric_limits<double>::denorm_min()};
    case ElementType::kF32:
    case ElementType::kTF32:
      return {std::numeric_limits<float>::max(),
              std::numeric_limits<float>::denorm_min()};
    default:
      break;
  }
  std::optional<FloatFormat> format = GetFloatFormat(type);
  if (!format) return {0, 0};
  // Largest finite: the top exponent (minus one when it encodes inf/NaN
  // for IEEE formats) with a full mantissa (minus one ulp where all-ones is
  // NaN). Smallest positive: the smallest subnormal.
  int max_exponent = (1 << format->exponent_bits) - 1 - format->exponent_bias;
  double mantissa = 2.0 - std::ldexp(1.0, -format->mantissa_bits);
  switch (format->non_finite) {
    case FloatNonFinite::kIeee:
      max_exponent -= 1;
      break;
    case FloatNonFinite::kNanOnlyAllOnes:
      mantissa -= std::ldexp(1.0, -format->mantissa_bits);
      break;
    case FloatNonFinite::kE8M0:
      max_exponent -= 1;
      mantissa = 1.0;
      break;
    default:
      break;
  }
  double largest = std::ldexp(mantissa, max_exponent);
  double smallest =
      std::ldexp(1.0, 1 - format->exponent_bias - format->mantissa_bits);
  return {largest, smallest};
}

std::pair<int64_t, int64_t> StorageRange(ElementType storage) {
  int bits = BitWidth(storage);
  if (IsUnsignedInteger(storage)) {
    if (bits >= 63) return {0, std::numeric_limits<int64_t>::max()};
    return {0, (int64_t{1} << bits) - 1};
  }
  if (bits >= 64) {
    return {std::numeric_limits<int64_t>::min(),
            std::numeric_limits<int64_t>::max()};
  }
  return {-(int64_t{1} << (bits - 1)), (int64_t{1} << (bits - 1)) - 1};
}

}  // namespace

Status CheckQuantizedTypeRules(const Type& type, std::string_view what,
                               bool value_rules) {
  if (!IsTensor(type) || !type.element().is(TypeKind::kQuantized)) {
    return OkStatus();
  }
  const QuantizedType& q = type.element().quantized();
  auto fail = [&](const auto&... args) {
    return InvalidArgumentError(what, " has an invalid quantized type ",
                                Quoted(type), ": ", args...);
  };
  if (!IsInteger(q.storage_type) || q.storage_type == ElementType::kIndex) {
    return fail("storage type must be an integer type");
  }
  if (!IsFloat(q.expressed_type)) {
    return fail("expressed type must be a float type");
  }
  auto [lowest, highest] = StorageRange(q.storage_type);
  // (C4)
  if (q.storage_min < lowest || q.storage_max > highest ||
      q.storage_min >= q.storage_max) {
    return fail("storage range [", q.storage_min, ", ", q.storage_max,
                "] must be a non-empty subrange of [", lowest, ", ", highest,
                "]");
  }
  // (C10), (C11)
  if (q.scales.size() != q.zero_points.size()) {
    return fail(q.scales.size(), " scales but ", q.zero_points.size(),
                " zero points");
  }
  if (!q.axis.has_value() && q.scales.size() != 1) {
    return fail("per-tensor quantization needs exactly one scale, got ",
                q.scales.size());
  }
  auto [largest, smallest] = FloatRange(q.expressed_type);
  for (double scale : q.scales) {
    // (C6), (C7)
    if (!std::isfinite(scale) || scale < smallest || scale > largest) {
      return fail("scale ", FloatText(scale), " out of expressed type range");
    }
  }
  if (q.axis.has_value() && *q.axis < 0) {
    return fail("illegal quantized dimension: ", *q.axis);
  }
  if (!value_rules) return OkStatus();
  for (int64_t zero_point : q.zero_points) {
    // (C8)
    if (zero_point < q.storage_min || zero_point > q.storage_max) {
      return fail("zero point ", zero_point, " is outside the storage range [",
                  q.storage_min, ", ", q.storage_max, "]");
    }
  }
  if (q.axis.has_value()) {
    // (C12), (C13) of quantized tensor types.
    int64_t axis = *q.axis;
    if (axis < 0 || axis >= type.rank()) {
      return fail("quantization dimension ", axis, " out of range for rank ",
                  type.rank());
    }
    int64_t dim = type.dim(axis);
    if (dim != kDynamic && dim != static_cast<int64_t>(q.scales.size())) {
      return fail("quantization dimension ", axis, " has size ", dim, " but ",
                  q.scales.size(), " scales");
    }
  }
  return OkStatus();
}

Status CheckTypeRules(const Type& type, std::string_view what) {
  if (type.is(TypeKind::kOpaque) &&
      StartsWith(type.opaque_text(), "stablehlo.")) {
    std::string_view name = std::string_view(type.opaque_text()).substr(10);
    return InvalidArgumentError(
        what, ": unknown stablehlo type: ", name.substr(0, name.find('<')));
  }
  if (type.IsTuple()) {
    for (const Type& element : type.elements()) {
      RETURN_IF_ERROR(CheckTypeRules(element, what));
    }
    return OkStatus();
  }
  if (type.is(TypeKind::kFunction)) {
    for (const auto* list : {&type.inputs(), &type.results()}) {
      for (const Type& element : *list) {
        RETURN_IF_ERROR(CheckTypeRules(element, what));
      }
    }
    return OkStatus();
  }
  if (IsTensor(type) || type.is(TypeKind::kMemRef)) {
    // Every later layer counts elements in int64; a shape whose known sizes
    // multiply past that is refused here, once.
    std::vector<int64_t> known;
    for (int64_t dim : type.shape()) {
      if (dim != kDynamic) known.push_back(dim);
    }
    std::optional<int64_t> count = StaticElementCount(known);
    if (!count) {
      return InvalidArgumentError(what, ": ", Quoted(type),
                                  " has negative sizes or more elements than "
                                  "fit in 64 bits");
    }
    // ... and so are its bytes (2^62 f32 elements count, their bytes do not).
    const Type element = type.element();
    if (element.is(TypeKind::kElement) || element.is(TypeKind::kQuantized)) {
      const int64_t bytes = StorageBytes(type.StorageElementType());
      if (bytes > 1 && *count > std::numeric_limits<int64_t>::max() / bytes) {
        return InvalidArgumentError(what, ": ", Quoted(type),
                                    " takes more bytes than fit in 64 bits");
      }
    }
  }
  return CheckQuantizedTypeRules(type, what, /*value_rules=*/false);
}

std::string FloatText(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%e", value);
  return buffer;
}

namespace {

Status CheckValueTensor(const Operation& op, std::string_view kind, int i,
                        const Type& type, uint32_t classes) {
  std::string why;
  if (IsTensorOf(type, classes)) {
    Status rules = CheckQuantizedTypeRules(type, "it");
    if (rules.ok()) return OkStatus();
    why = StrCat(" (", rules.message(), ")");
  }
  return OpError(op, kind, " #", i, " must be ranked tensor of ",
                 DescribeClasses(classes), " values, but got ", Quoted(type),
                 why);
}

}  // namespace

Status CheckOperandTensor(const Operation& op, int i, uint32_t classes) {
  return CheckValueTensor(op, "operand", i, op.operand(i)->type(), classes);
}

Status CheckResultTensor(const Operation& op, int i, uint32_t classes) {
  return CheckValueTensor(op, "result", i, op.result(i)->type(), classes);
}

Status CheckAllOperandTensors(const Operation& op, uint32_t classes) {
  for (int i = 0; i < op.num_operands(); ++i) {
    RETURN_IF_ERROR(CheckOperandTensor(op, i, classes));
  }
  return OkStatus();
}

Status CheckAllResultTensors(const Operation& op, uint32_t classes) {
  for (int i = 0; i < op.num_results(); ++i) {
    RETURN_IF_ERROR(CheckResultTensor(op, i, classes));
  }
  return OkStatus();
}

Status CheckOperandScalarTensor(const Operation& op, int i, uint32_t classes) {
  const Type& type = op.operand(i)->type();
  if (IsTensorOf(type, classes) && type.rank() == 0) return OkStatus();
  return OpError(op, "operand #", i, " must be 0D tensor of ",
                 DescribeClasses(classes), " values, but got ", Quoted(type));
}

Status CheckOperand1DTensor(const Operation& op, int i, uint32_t classes,
                            bool require_static) {
  const Type& type = op.operand(i)->type();
  if (IsTensorOf(type, classes) && type.rank() == 1 &&
      (!require_static || type.HasStaticShape())) {
    return OkStatus();
  }
  return OpError(op, "operand #", i, " must be ",
                 require_static ? "statically shaped " : "",
                 "1-dimensional tensor of ", DescribeClasses(classes),
                 " values, but got ", Quoted(type));
}

Status CheckOperandToken(const Operation& op, int i) {
  if (op.operand(i)->type().IsToken()) return OkStatus();
  return OpError(op, "operand #", i, " must be token, but got ",
                 Quoted(op.operand(i)->type()));
}

Status CheckResultToken(const Operation& op, int i) {
  if (op.result(i)->type().IsToken()) return OkStatus();
  return OpError(op, "result #", i, " must be token, but got ",
                 Quoted(op.result(i)->type()));
}

}  // namespace kiln::ir::verifier
