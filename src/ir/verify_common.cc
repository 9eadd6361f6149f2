// Helpers shared by the verifier's op families: messages, element classes,
// type compatibility and attribute readers.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <unordered_set>

#include "ir/verify_internal.h"

namespace kiln::ir::verifier {

// ---- Errors ----------------------------------------------------------------

std::string OpPrefix(const Operation& op) {
  std::string where = op.loc().ShortString();
  if (where.empty()) return StrCat("'", op.name(), "' op ");
  return StrCat(where, ": '", op.name(), "' op ");
}

std::string Quoted(const Type& type) {
  return StrCat("'", type ? type.ToString() : std::string("<null>"), "'");
}

std::string QuotedList(const std::vector<Type>& types) {
  return StrJoin(types, ", ", [](std::string& out, const Type& type) {
    out.append(Quoted(type));
  });
}

std::string DimText(int64_t dim) {
  return dim == kDynamic ? std::string("?") : std::to_string(dim);
}

std::string JoinInts(const std::vector<int64_t>& values) {
  return StrJoin(values, ", ");
}

// ---- Element classes -------------------------------------------------------

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
    if (!StaticElementCount(known)) {
      return InvalidArgumentError(what, ": ", Quoted(type),
                                  " has negative sizes or more elements than "
                                  "fit in 64 bits");
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

// ---- Counts -----------------------------------------------------------------

Status ExpectOperands(const Operation& op, int count) {
  if (op.num_operands() == count) return OkStatus();
  return OpError(op, "expected ", count, " operand(s), but found ",
                 op.num_operands());
}

Status ExpectResults(const Operation& op, int count) {
  if (op.num_results() == count) return OkStatus();
  return OpError(op, "expected ", count, " result(s), but found ",
                 op.num_results());
}

Status ExpectMinOperands(const Operation& op, int count) {
  if (op.num_operands() >= count) return OkStatus();
  return OpError(op, "expected ", count, " or more operands, but found ",
                 op.num_operands());
}

Status ExpectMinResults(const Operation& op, int count) {
  if (op.num_results() >= count) return OkStatus();
  return OpError(op, "expected ", count, " or more results, but found ",
                 op.num_results());
}

Status ExpectRegions(const Operation& op, int count) {
  if (op.num_regions() == count) return OkStatus();
  return OpError(op, "expected ", count, " region(s), but found ",
                 op.num_regions());
}

// ---- Shapes and type compatibility ----------------------------------------

std::vector<int64_t> BoundsOf(const Type& type) {
  if (!IsTensor(type)) return {};
  std::optional<std::vector<int64_t>> bounds = type.bounds();
  if (!bounds || static_cast<int64_t>(bounds->size()) != type.rank()) {
    return {};
  }
  return *bounds;
}

namespace {

// Static sizes of `shape` must not exceed `bounds`.
bool WithinBounds(const std::vector<int64_t>& shape,
                  const std::vector<int64_t>& bounds) {
  if (bounds.empty()) return true;
  if (shape.size() != bounds.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (bounds[i] != kDynamic && shape[i] != kDynamic && shape[i] > bounds[i]) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool ShapesCompatible(const Type& a, const Type& b) {
  if (!IsTensor(a) || !IsTensor(b)) return false;
  if (a.rank() != b.rank()) return false;
  for (int64_t i = 0; i < a.rank(); ++i) {
    if (!DimsCompatible(a.dim(i), b.dim(i))) return false;
  }
  return WithinBounds(a.shape(), BoundsOf(b)) &&
         WithinBounds(b.shape(), BoundsOf(a));
}

bool ElementsCompatible(const Type& a, const Type& b) {
  if (a.is(TypeKind::kQuantized) && b.is(TypeKind::kQuantized)) {
    const QuantizedType& qa = a.quantized();
    const QuantizedType& qb = b.quantized();
    if (qa.storage_type != qb.storage_type ||
        qa.storage_min != qb.storage_min || qa.storage_max != qb.storage_max) {
      return false;
    }
  }
  return ExpressedOrSelf(a) == ExpressedOrSelf(b);
}

bool TypesCompatible(const Type& a, const Type& b) {
  if (IsTensor(a) && IsTensor(b)) {
    return ShapesCompatible(a, b) &&
           ElementsCompatible(a.element(), b.element());
  }
  if (a.IsToken() && b.IsToken()) return true;
  if (a.IsTuple() && b.IsTuple()) {
    return TypeListsCompatible(a.elements(), b.elements());
  }
  return a == b;
}

bool TypeListsCompatible(const std::vector<Type>& a,
                         const std::vector<Type>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!TypesCompatible(a[i], b[i])) return false;
  }
  return true;
}

bool SameElementType(const Type& a, const Type& b, bool ignore_fp_precision) {
  Type ea = IsTensor(a) ? a.element() : a;
  Type eb = IsTensor(b) ? b.element() : b;
  if (ignore_fp_precision && IsFloatElement(ea) && IsFloatElement(eb)) {
    return true;
  }
  return ea == eb;
}

Type MakeTensor(std::vector<int64_t> shape, Type element,
                const std::vector<int64_t>& bounds) {
  bool any_bound = false;
  if (bounds.size() == shape.size()) {
    for (size_t i = 0; i < bounds.size(); ++i) {
      if (bounds[i] != kDynamic && shape[i] == kDynamic) any_bound = true;
    }
  }
  if (!any_bound) return Type::Tensor(std::move(shape), std::move(element));
  std::vector<int64_t> kept = bounds;
  for (size_t i = 0; i < kept.size(); ++i) {
    if (shape[i] != kDynamic) kept[i] = kDynamic;
  }
  return Type::Tensor(std::move(shape), std::move(element),
                      Attribute::Bounds(std::move(kept)));
}

Status CheckInferredResults(const Operation& op,
                            const std::vector<Type>& inferred) {
  std::vector<Type> declared = op.result_types();
  if (TypeListsCompatible(inferred, declared)) return OkStatus();
  return OpError(op, "inferred type(s) ", QuotedList(inferred),
                 " are incompatible with return type(s) of operation ",
                 QuotedList(declared));
}

Type MostSpecific(const std::vector<Type>& types) {
  if (types.empty()) return Type();
  const Type& first = types.front();
  if (!IsTensor(first)) return first;
  for (const Type& type : types) {
    if (!IsTensor(type) || type.rank() != first.rank()) return first;
  }
  int64_t rank = first.rank();
  std::vector<int64_t> shape(rank, kDynamic);
  std::vector<int64_t> bounds(rank, kDynamic);
  for (int64_t i = 0; i < rank; ++i) {
    for (const Type& type : types) {
      if (type.dim(i) != kDynamic) {
        shape[i] = type.dim(i);
        break;
      }
      std::vector<int64_t> type_bounds = BoundsOf(type);
      if (!type_bounds.empty() && type_bounds[i] != kDynamic) {
        bounds[i] = bounds[i] == kDynamic ? type_bounds[i]
                                          : std::min(bounds[i], type_bounds[i]);
      }
    }
  }
  return MakeTensor(std::move(shape), first.element(), bounds);
}

std::optional<int64_t> StaticElementCount(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim == kDynamic || dim < 0) return std::nullopt;
    if (dim != 0 && count > std::numeric_limits<int64_t>::max() / dim) {
      return std::nullopt;
    }
    count *= dim;
  }
  return count;
}

bool IsStaticOrSingleBounded(const Type& type) {
  if (!IsTensor(type)) return false;
  std::vector<int64_t> bounds = BoundsOf(type);
  int dynamic = 0;
  for (int64_t i = 0; i < type.rank(); ++i) {
    if (type.dim(i) != kDynamic) continue;
    if (++dynamic > 1 || bounds.empty() || bounds[i] == kDynamic) return false;
  }
  return true;
}

std::optional<std::vector<int64_t>> ConstantInts(const Value* value) {
  const Operation* producer = value->defining_op();
  if (producer == nullptr || !producer->is(OpCode::kConstant)) {
    return std::nullopt;
  }
  Attribute attr = producer->GetAttr("value");
  if (!attr.is(AttrKind::kDenseElements) || !IsTensor(attr.type()) ||
      !(IsIntElement(attr.type().element()) ||
        IsScalarElement(attr.type().element(), ElementType::kIndex))) {
    return std::nullopt;
  }
  // Shape-like operands are short; larger constants are not read.
  std::optional<int64_t> count = StaticElementCount(attr.type().shape());
  if (!count || *count > (int64_t{1} << 16)) return std::nullopt;
  std::optional<std::vector<int64_t>> values = attr.AsIntVector();
  if (!values || static_cast<int64_t>(values->size()) != *count) {
    return std::nullopt;
  }
  return values;
}

Status CheckShapeOperand(const Operation& op, int index, const Type& result) {
  const Type& shape = op.operand(index)->type();
  if (IsTensor(shape) && shape.rank() == 1 && shape.dim(0) != kDynamic &&
      shape.dim(0) != result.rank()) {
    return OpError(op,
                   "result should have a rank equal to the number of "
                   "elements in output_shape; got ",
                   Quoted(result), " and ", Quoted(shape));
  }
  std::optional<std::vector<int64_t>> values = ConstantInts(op.operand(index));
  if (!values) return OkStatus();
  bool compatible = static_cast<int64_t>(values->size()) == result.rank();
  for (size_t i = 0; compatible && i < values->size(); ++i) {
    if (result.dim(i) != kDynamic && (*values)[i] != result.dim(i)) {
      compatible = false;
    }
    if ((*values)[i] < 0) compatible = false;
  }
  if (!compatible) {
    return OpError(op, "output shape [", JoinInts(*values),
                   "] is incompatible with return type of operation ",
                   Quoted(result));
  }
  return OkStatus();
}

// ---- Attributes
// --------------------------------------------------------------

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

// ---- Regions
// --------------------------------------------------------------------

StatusOr<const Block*> SingleBlock(const Operation& op, int index) {
  if (index >= op.num_regions()) {
    return OpError(op, "expected region #", index, ", but the op has ",
                   op.num_regions(), " region(s)");
  }
  const Region& region = op.region(index);
  if (region.num_blocks() != 1) {
    return OpError(op, "region #", index,
                   " must have exactly one block, but has ",
                   region.num_blocks());
  }
  return &region.front();
}

std::vector<Type> ArgumentTypes(const Block& block) {
  std::vector<Type> types;
  for (int i = 0; i < block.num_arguments(); ++i) {
    types.push_back(block.argument(i)->type());
  }
  return types;
}

std::vector<Type> TerminatorTypes(const Block& block) {
  std::vector<Type> types;
  const Operation* terminator = block.terminator();
  if (!terminator) return types;
  for (const Value* operand : terminator->operands()) {
    types.push_back(operand->type());
  }
  return types;
}

StatusOr<const Operation*> RegionTerminator(const Operation& op,
                                            const Block& block) {
  const Operation* terminator = block.terminator();
  if (!terminator || !terminator->is(OpCode::kReturn)) {
    return OpError(op, "region block must end with 'stablehlo.return', but ",
                   terminator ? StrCat("ends with '", terminator->name(), "'")
                              : std::string("is empty"));
  }
  return terminator;
}

// ---- Lists
// -------------------------------------------------------------------

bool HasDuplicates(const std::vector<int64_t>& values) {
  std::unordered_set<int64_t> seen;
  for (int64_t v : values) {
    if (!seen.insert(v).second) return true;
  }
  return false;
}

bool IsSortedAscending(const std::vector<int64_t>& values) {
  return std::is_sorted(values.begin(), values.end());
}

bool Contains(const std::vector<int64_t>& values, int64_t value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

bool IsPermutation(const std::vector<int64_t>& values) {
  int64_t size = static_cast<int64_t>(values.size());
  std::vector<bool> seen(values.size(), false);
  for (int64_t v : values) {
    if (v < 0 || v >= size || seen[v]) return false;
    seen[v] = true;
  }
  return true;
}

}  // namespace kiln::ir::verifier
