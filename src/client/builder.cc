// ProgramBuilder: shape checks and the StableHLO text of each op, in the
// pretty forms StableHLO's own printer uses (the forms JAX emits).
#include "kiln/builder.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>

#include "base/strings.h"

namespace kiln::client {
namespace {

bool IsFloat(PJRT_Buffer_Type type) {
  switch (type) {
    case PJRT_Buffer_Type_F16:
    case PJRT_Buffer_Type_BF16:
    case PJRT_Buffer_Type_F32:
    case PJRT_Buffer_Type_F64:
    case PJRT_Buffer_Type_F8E5M2:
    case PJRT_Buffer_Type_F8E4M3FN:
    case PJRT_Buffer_Type_F8E4M3B11FNUZ:
    case PJRT_Buffer_Type_F8E5M2FNUZ:
    case PJRT_Buffer_Type_F8E4M3FNUZ:
    case PJRT_Buffer_Type_F8E4M3:
    case PJRT_Buffer_Type_F8E3M4:
    case PJRT_Buffer_Type_F8E8M0FNU:
    case PJRT_Buffer_Type_F4E2M1FN:
      return true;
    default:
      return false;
  }
}

bool IsComplex(PJRT_Buffer_Type type) {
  return type == PJRT_Buffer_Type_C64 || type == PJRT_Buffer_Type_C128;
}

bool IsUnsigned(PJRT_Buffer_Type type) {
  switch (type) {
    case PJRT_Buffer_Type_U1:
    case PJRT_Buffer_Type_U2:
    case PJRT_Buffer_Type_U4:
    case PJRT_Buffer_Type_U8:
    case PJRT_Buffer_Type_U16:
    case PJRT_Buffer_Type_U32:
    case PJRT_Buffer_Type_U64:
      return true;
    default:
      return false;
  }
}

bool IsInteger(PJRT_Buffer_Type type) {
  return !IsFloat(type) && !IsComplex(type) && type != PJRT_Buffer_Type_PRED &&
         IsArrayElementType(type);
}

std::string DimsList(const std::vector<int64_t>& dims) {
  return StrCat("[", StrJoin(dims, ", "), "]");
}

// The bit pattern of a non-finite float in the types MLIR text spells only
// in hex.
std::optional<std::string> NonFiniteHex(PJRT_Buffer_Type type, double value) {
  bool nan = std::isnan(value);
  bool negative = std::signbit(value);
  switch (type) {
    case PJRT_Buffer_Type_F32:
      return nan ? "0x7FC00000" : (negative ? "0xFF800000" : "0x7F800000");
    case PJRT_Buffer_Type_F64:
      return nan ? "0x7FF8000000000000"
                 : (negative ? "0xFFF0000000000000" : "0x7FF0000000000000");
    case PJRT_Buffer_Type_F16:
      return nan ? "0x7E00" : (negative ? "0xFC00" : "0x7C00");
    case PJRT_Buffer_Type_BF16:
      return nan ? "0x7FC0" : (negative ? "0xFF80" : "0x7F80");
    default:
      return std::nullopt;
  }
}

// One element of a dense attribute.
StatusOr<std::string> FormatElement(PJRT_Buffer_Type type, double value) {
  if (type == PJRT_Buffer_Type_PRED) return value != 0 ? "true" : "false";
  if (IsFloat(type)) {
    if (!std::isfinite(value)) {
      auto hex = NonFiniteHex(type, value);
      if (!hex) {
        return InvalidArgumentError("constant ", value, " of type ",
                                    ElementTypeName(type),
                                    " cannot be written as text");
      }
      return *hex;
    }
    // Always with a '.', which MLIR's float literals need; enough digits to
    // read back the same value.
    char text[64];
    std::snprintf(text, sizeof(text),
                  type == PJRT_Buffer_Type_F64 ? "%.17e" : "%.9e", value);
    return std::string(text);
  }
  if (IsInteger(type)) {
    if (value != std::floor(value) || !std::isfinite(value)) {
      return InvalidArgumentError("constant ", value, " is not an integer (",
                                  ElementTypeName(type), ")");
    }
    int bits = ElementTypeBits(type);
    double low = IsUnsigned(type) ? 0 : -std::ldexp(1.0, bits - 1);
    double high = IsUnsigned(type) ? std::ldexp(1.0, bits) - 1
                                   : std::ldexp(1.0, bits - 1) - 1;
    if (value < low || value > high) {
      return InvalidArgumentError("constant ", value, " does not fit ",
                                  ElementTypeName(type));
    }
    char text[32];
    std::snprintf(text, sizeof(text), "%.0f", value);
    return std::string(text);
  }
  return UnimplementedError("constants of type ", ElementTypeName(type),
                            " are not supported by the builder");
}

// Nested brackets for a dense attribute of `dims`.
void AppendDense(std::string& out, const std::vector<std::string>& elements,
                 const std::vector<int64_t>& dims, size_t depth, size_t& next) {
  if (depth == dims.size()) {
    out += elements[next++];
    return;
  }
  out += "[";
  for (int64_t i = 0; i < dims[depth]; ++i) {
    if (i > 0) out += ", ";
    AppendDense(out, elements, dims, depth + 1, next);
  }
  out += "]";
}

const char* CompareName(CompareDirection direction) {
  switch (direction) {
    case CompareDirection::kEq:
      return "EQ";
    case CompareDirection::kNe:
      return "NE";
    case CompareDirection::kLt:
      return "LT";
    case CompareDirection::kLe:
      return "LE";
    case CompareDirection::kGt:
      return "GT";
    case CompareDirection::kGe:
      return "GE";
  }
  return "EQ";
}

// Checks a list of distinct dimension indices of a rank-`rank` value.
Status CheckDimensions(std::string_view op, std::string_view what,
                       const std::vector<int64_t>& dims, int64_t rank) {
  std::set<int64_t> seen;
  for (int64_t dim : dims) {
    if (dim < 0 || dim >= rank) {
      return InvalidArgumentError(op, ": ", what, " ", DimsList(dims),
                                  " has dimension ", dim,
                                  " out of range for rank ", rank);
    }
    if (!seen.insert(dim).second) {
      return InvalidArgumentError(op, ": ", what, " ", DimsList(dims),
                                  " repeats dimension ", dim);
    }
  }
  return OkStatus();
}

// A module or function name as an MLIR symbol: bare when it can be.
std::string SymbolName(const std::string& name) {
  bool bare =
      !name.empty() &&
      (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' &&
        c != '$') {
      bare = false;
    }
  }
  return bare ? StrCat("@", name)
              : StrCat("@\"", EscapeForMessage(name, 200), "\"");
}

}  // namespace

ProgramBuilder::ProgramBuilder(std::string name) : name_(std::move(name)) {}

std::string ProgramBuilder::NextName() { return StrCat("%", next_id_++); }

Value ProgramBuilder::Fail(Status status) {
  if (status_.ok()) status_ = std::move(status);
  return Value();
}

bool ProgramBuilder::Check(std::initializer_list<const Value*> values) {
  if (!status_.ok()) return false;
  for (const Value* value : values) {
    if (!value->valid()) {
      Fail(InvalidArgumentError("an operand is not a value of the program"));
      return false;
    }
    if (value->builder() != this) {
      Fail(InvalidArgumentError("value ", value->name(),
                                " belongs to another ProgramBuilder"));
      return false;
    }
  }
  return true;
}

Value ProgramBuilder::Emit(const std::string& text, Shape shape) {
  std::string name = NextName();
  StrAppend(body_, "    ", name, " = ", text, "\n");
  return Value(this, std::move(name), std::move(shape));
}

Value ProgramBuilder::Parameter(const Shape& shape) {
  if (!status_.ok()) return Value();
  Status valid = ValidateShape(shape);
  if (!valid.ok()) return Fail(valid.WithContext("parameter"));
  std::string name = StrCat("%arg", parameters_.size());
  parameters_.push_back(shape);
  return Value(this, std::move(name), shape);
}

Value ProgramBuilder::ConstantScalar(PJRT_Buffer_Type type, double value) {
  return ConstantSplat(Shape(type, {}), value);
}

Value ProgramBuilder::ConstantSplat(const Shape& shape, double value) {
  if (!status_.ok()) return Value();
  Status valid = ValidateShape(shape);
  if (!valid.ok()) return Fail(valid.WithContext("constant"));
  auto element = FormatElement(shape.element_type, value);
  if (!element.ok()) return Fail(element.status());
  return Emit(
      StrCat("stablehlo.constant dense<", *element, "> : ", shape.ToMlirType()),
      shape);
}

Value ProgramBuilder::Constant(const Shape& shape,
                               std::span<const double> values) {
  if (!status_.ok()) return Value();
  Status valid = ValidateShape(shape);
  if (!valid.ok()) return Fail(valid.WithContext("constant"));
  if (static_cast<int64_t>(values.size()) != shape.ElementCount()) {
    return Fail(InvalidArgumentError("constant ", shape.ToString(), " needs ",
                                     shape.ElementCount(), " values, got ",
                                     values.size()));
  }
  std::vector<std::string> elements;
  elements.reserve(values.size());
  for (double value : values) {
    auto element = FormatElement(shape.element_type, value);
    if (!element.ok()) return Fail(element.status());
    elements.push_back(std::move(*element));
  }
  std::string dense = "dense<";
  size_t next = 0;
  AppendDense(dense, elements, shape.dimensions, 0, next);
  StrAppend(dense, ">");
  return Emit(StrCat("stablehlo.constant ", dense, " : ", shape.ToMlirType()),
              shape);
}

Value ProgramBuilder::Iota(const Shape& shape, int64_t dimension) {
  if (!status_.ok()) return Value();
  Status valid = ValidateShape(shape);
  if (!valid.ok()) return Fail(valid.WithContext("stablehlo.iota"));
  if (dimension < 0 || dimension >= shape.rank()) {
    return Fail(InvalidArgumentError("stablehlo.iota: dimension ", dimension,
                                     " out of range for ", shape.ToString()));
  }
  return Emit(
      StrCat("stablehlo.iota dim = ", dimension, " : ", shape.ToMlirType()),
      shape);
}

Value ProgramBuilder::Elementwise(const char* op, Value lhs, Value rhs) {
  if (!Check({&lhs, &rhs})) return Value();
  if (lhs.shape() != rhs.shape()) {
    return Fail(InvalidArgumentError("stablehlo.", op, ": operand shapes ",
                                     lhs.shape().ToString(), " and ",
                                     rhs.shape().ToString(), " differ"));
  }
  return Emit(StrCat("stablehlo.", op, " ", lhs.name(), ", ", rhs.name(), " : ",
                     lhs.shape().ToMlirType()),
              lhs.shape());
}

Value ProgramBuilder::Unary(const char* op, Value operand, bool float_only) {
  if (!Check({&operand})) return Value();
  PJRT_Buffer_Type type = operand.shape().element_type;
  if (float_only && !IsFloat(type) && !IsComplex(type)) {
    return Fail(InvalidArgumentError("stablehlo.", op,
                                     " needs a floating-point operand, not ",
                                     operand.shape().ToString()));
  }
  return Emit(StrCat("stablehlo.", op, " ", operand.name(), " : ",
                     operand.shape().ToMlirType()),
              operand.shape());
}

Value ProgramBuilder::Add(Value lhs, Value rhs) {
  return Elementwise("add", lhs, rhs);
}
Value ProgramBuilder::Subtract(Value lhs, Value rhs) {
  return Elementwise("subtract", lhs, rhs);
}
Value ProgramBuilder::Multiply(Value lhs, Value rhs) {
  return Elementwise("multiply", lhs, rhs);
}
Value ProgramBuilder::Divide(Value lhs, Value rhs) {
  return Elementwise("divide", lhs, rhs);
}
Value ProgramBuilder::Maximum(Value lhs, Value rhs) {
  return Elementwise("maximum", lhs, rhs);
}
Value ProgramBuilder::Minimum(Value lhs, Value rhs) {
  return Elementwise("minimum", lhs, rhs);
}
Value ProgramBuilder::Power(Value lhs, Value rhs) {
  return Elementwise("power", lhs, rhs);
}
Value ProgramBuilder::Negate(Value operand) {
  return Unary("negate", operand, false);
}
Value ProgramBuilder::Exp(Value operand) {
  return Unary("exponential", operand, true);
}
Value ProgramBuilder::Log(Value operand) { return Unary("log", operand, true); }
Value ProgramBuilder::Tanh(Value operand) {
  return Unary("tanh", operand, true);
}
Value ProgramBuilder::Logistic(Value operand) {
  return Unary("logistic", operand, true);
}
Value ProgramBuilder::Sqrt(Value operand) {
  return Unary("sqrt", operand, true);
}
Value ProgramBuilder::Rsqrt(Value operand) {
  return Unary("rsqrt", operand, true);
}
Value ProgramBuilder::Abs(Value operand) {
  return Unary("abs", operand, false);
}

Value ProgramBuilder::Compare(Value lhs, Value rhs,
                              CompareDirection direction) {
  if (!Check({&lhs, &rhs})) return Value();
  if (lhs.shape() != rhs.shape()) {
    return Fail(InvalidArgumentError("stablehlo.compare: operand shapes ",
                                     lhs.shape().ToString(), " and ",
                                     rhs.shape().ToString(), " differ"));
  }
  PJRT_Buffer_Type type = lhs.shape().element_type;
  const char* compare_type =
      IsFloat(type)                                         ? "FLOAT"
      : (IsUnsigned(type) || type == PJRT_Buffer_Type_PRED) ? "UNSIGNED"
                                                            : "SIGNED";
  if (IsComplex(type)) {
    return Fail(InvalidArgumentError(
        "stablehlo.compare: complex operands are not supported"));
  }
  Shape result(PJRT_Buffer_Type_PRED, lhs.shape().dimensions);
  return Emit(StrCat("stablehlo.compare  ", CompareName(direction), ", ",
                     lhs.name(), ", ", rhs.name(), ",  ", compare_type, " : (",
                     lhs.shape().ToMlirType(), ", ", rhs.shape().ToMlirType(),
                     ") -> ", result.ToMlirType()),
              result);
}

Value ProgramBuilder::Select(Value pred, Value on_true, Value on_false) {
  if (!Check({&pred, &on_true, &on_false})) return Value();
  if (pred.shape().element_type != PJRT_Buffer_Type_PRED) {
    return Fail(InvalidArgumentError("stablehlo.select: predicate ",
                                     pred.shape().ToString(), " is not i1"));
  }
  if (on_true.shape() != on_false.shape()) {
    return Fail(InvalidArgumentError("stablehlo.select: branch shapes ",
                                     on_true.shape().ToString(), " and ",
                                     on_false.shape().ToString(), " differ"));
  }
  if (pred.shape().rank() != 0 &&
      pred.shape().dimensions != on_true.shape().dimensions) {
    return Fail(InvalidArgumentError(
        "stablehlo.select: predicate ", pred.shape().ToString(),
        " is neither a scalar nor of the branches' dimensions ",
        on_true.shape().ToString()));
  }
  return Emit(StrCat("stablehlo.select ", pred.name(), ", ", on_true.name(),
                     ", ", on_false.name(), " : ", pred.shape().ToMlirType(),
                     ", ", on_true.shape().ToMlirType()),
              on_true.shape());
}

Value ProgramBuilder::Convert(Value operand, PJRT_Buffer_Type type) {
  if (!Check({&operand})) return Value();
  Shape result(type, operand.shape().dimensions);
  Status valid = ValidateShape(result);
  if (!valid.ok()) return Fail(valid.WithContext("stablehlo.convert"));
  return Emit(
      StrCat("stablehlo.convert ", operand.name(), " : (",
             operand.shape().ToMlirType(), ") -> ", result.ToMlirType()),
      result);
}

Value ProgramBuilder::DotGeneral(Value lhs, Value rhs,
                                 const DotDimensions& dimensions) {
  if (!Check({&lhs, &rhs})) return Value();
  const Shape& a = lhs.shape();
  const Shape& b = rhs.shape();
  constexpr std::string_view op = "stablehlo.dot_general";
  if (a.element_type != b.element_type) {
    return Fail(InvalidArgumentError(op, ": element types of ", a.ToString(),
                                     " and ", b.ToString(), " differ"));
  }
  for (const auto& [dims, rank, what] :
       {std::tuple{&dimensions.lhs_batching, a.rank(), "lhs batching dims"},
        std::tuple{&dimensions.rhs_batching, b.rank(), "rhs batching dims"},
        std::tuple{&dimensions.lhs_contracting, a.rank(),
                   "lhs contracting dims"},
        std::tuple{&dimensions.rhs_contracting, b.rank(),
                   "rhs contracting dims"}}) {
    Status status = CheckDimensions(op, what, *dims, rank);
    if (!status.ok()) return Fail(status);
  }
  if (dimensions.lhs_batching.size() != dimensions.rhs_batching.size() ||
      dimensions.lhs_contracting.size() != dimensions.rhs_contracting.size()) {
    return Fail(InvalidArgumentError(
        op,
        ": lhs and rhs list different numbers of batching or "
        "contracting dimensions"));
  }
  for (size_t i = 0; i < dimensions.lhs_batching.size(); ++i) {
    if (a.dimensions[dimensions.lhs_batching[i]] !=
        b.dimensions[dimensions.rhs_batching[i]]) {
      return Fail(InvalidArgumentError(
          op, ": batching dimension ", i, " has size ",
          a.dimensions[dimensions.lhs_batching[i]], " in ", a.ToString(),
          " but ", b.dimensions[dimensions.rhs_batching[i]], " in ",
          b.ToString()));
    }
  }
  for (size_t i = 0; i < dimensions.lhs_contracting.size(); ++i) {
    if (a.dimensions[dimensions.lhs_contracting[i]] !=
        b.dimensions[dimensions.rhs_contracting[i]]) {
      return Fail(InvalidArgumentError(
          op, ": contracting dimension ", i, " has size ",
          a.dimensions[dimensions.lhs_contracting[i]], " in ", a.ToString(),
          " but ", b.dimensions[dimensions.rhs_contracting[i]], " in ",
          b.ToString()));
    }
  }
  // Result: batch dims, then lhs free dims, then rhs free dims.
  Shape result(a.element_type, {});
  for (int64_t dim : dimensions.lhs_batching) {
    result.dimensions.push_back(a.dimensions[dim]);
  }
  auto append_free = [&result](const Shape& shape,
                               const std::vector<int64_t>& batching,
                               const std::vector<int64_t>& contracting) {
    for (int64_t dim = 0; dim < shape.rank(); ++dim) {
      if (std::find(batching.begin(), batching.end(), dim) == batching.end() &&
          std::find(contracting.begin(), contracting.end(), dim) ==
              contracting.end()) {
        result.dimensions.push_back(shape.dimensions[dim]);
      }
    }
  };
  append_free(a, dimensions.lhs_batching, dimensions.lhs_contracting);
  append_free(b, dimensions.rhs_batching, dimensions.rhs_contracting);
  std::string attributes;
  if (!dimensions.lhs_batching.empty()) {
    attributes = StrCat("batching_dims = ", DimsList(dimensions.lhs_batching),
                        " x ", DimsList(dimensions.rhs_batching), ", ");
  }
  StrAppend(attributes,
            "contracting_dims = ", DimsList(dimensions.lhs_contracting), " x ",
            DimsList(dimensions.rhs_contracting));
  return Emit(StrCat(op, " ", lhs.name(), ", ", rhs.name(), ", ", attributes,
                     " : (", a.ToMlirType(), ", ", b.ToMlirType(), ") -> ",
                     result.ToMlirType()),
              result);
}

Value ProgramBuilder::Dot(Value lhs, Value rhs) {
  if (!Check({&lhs, &rhs})) return Value();
  if (lhs.shape().rank() != 2 || rhs.shape().rank() != 2) {
    return Fail(InvalidArgumentError("Dot multiplies matrices, not ",
                                     lhs.shape().ToString(), " and ",
                                     rhs.shape().ToString()));
  }
  return DotGeneral(lhs, rhs, DotDimensions{{}, {}, {1}, {0}});
}

Value ProgramBuilder::BroadcastInDim(
    Value operand, std::vector<int64_t> result_dimensions,
    std::vector<int64_t> broadcast_dimensions) {
  if (!Check({&operand})) return Value();
  constexpr std::string_view op = "stablehlo.broadcast_in_dim";
  const Shape& in = operand.shape();
  Shape result(in.element_type, std::move(result_dimensions));
  Status valid = ValidateShape(result);
  if (!valid.ok()) return Fail(valid.WithContext(op));
  if (static_cast<int64_t>(broadcast_dimensions.size()) != in.rank()) {
    return Fail(InvalidArgumentError(
        op, ": dims ", DimsList(broadcast_dimensions), " for operand ",
        in.ToString(), " of rank ", in.rank()));
  }
  Status dims_valid =
      CheckDimensions(op, "dims", broadcast_dimensions, result.rank());
  if (!dims_valid.ok()) return Fail(dims_valid);
  for (int64_t i = 0; i < in.rank(); ++i) {
    int64_t from = in.dimensions[i];
    int64_t to = result.dimensions[broadcast_dimensions[i]];
    if (from != 1 && from != to) {
      return Fail(InvalidArgumentError(op, ": operand dimension ", i, " of ",
                                       in.ToString(), " cannot broadcast to ",
                                       result.ToString()));
    }
  }
  return Emit(StrCat(op, " ", operand.name(),
                     ", dims = ", DimsList(broadcast_dimensions), " : (",
                     in.ToMlirType(), ") -> ", result.ToMlirType()),
              result);
}

Value ProgramBuilder::Broadcast(Value operand,
                                std::vector<int64_t> dimensions) {
  if (!Check({&operand})) return Value();
  int64_t rank = operand.shape().rank();
  int64_t result_rank = static_cast<int64_t>(dimensions.size());
  if (rank > result_rank) {
    return Fail(
        InvalidArgumentError("Broadcast of ", operand.shape().ToString(),
                             " to a lower rank ", DimsList(dimensions)));
  }
  std::vector<int64_t> broadcast_dimensions;
  for (int64_t i = 0; i < rank; ++i) {
    broadcast_dimensions.push_back(result_rank - rank + i);
  }
  return BroadcastInDim(operand, std::move(dimensions),
                        std::move(broadcast_dimensions));
}

Value ProgramBuilder::Reshape(Value operand, std::vector<int64_t> dimensions) {
  if (!Check({&operand})) return Value();
  Shape result(operand.shape().element_type, std::move(dimensions));
  Status valid = ValidateShape(result);
  if (!valid.ok()) return Fail(valid.WithContext("stablehlo.reshape"));
  if (result.ElementCount() != operand.shape().ElementCount()) {
    return Fail(InvalidArgumentError(
        "stablehlo.reshape: ", operand.shape().ToString(), " has ",
        operand.shape().ElementCount(), " elements, ", result.ToString(),
        " has ", result.ElementCount()));
  }
  return Emit(
      StrCat("stablehlo.reshape ", operand.name(), " : (",
             operand.shape().ToMlirType(), ") -> ", result.ToMlirType()),
      result);
}

Value ProgramBuilder::Transpose(Value operand,
                                std::vector<int64_t> permutation) {
  if (!Check({&operand})) return Value();
  const Shape& in = operand.shape();
  if (static_cast<int64_t>(permutation.size()) != in.rank()) {
    return Fail(InvalidArgumentError("stablehlo.transpose: permutation ",
                                     DimsList(permutation), " for ",
                                     in.ToString()));
  }
  Status valid = CheckDimensions("stablehlo.transpose", "permutation",
                                 permutation, in.rank());
  if (!valid.ok()) return Fail(valid);
  Shape result(in.element_type, {});
  for (int64_t dim : permutation)
    result.dimensions.push_back(in.dimensions[dim]);
  return Emit(StrCat("stablehlo.transpose ", operand.name(),
                     ", dims = ", DimsList(permutation), " : (",
                     in.ToMlirType(), ") -> ", result.ToMlirType()),
              result);
}

Value ProgramBuilder::Reduce(const char* op, double init, Value operand,
                             std::vector<int64_t> dimensions) {
  if (!Check({&operand})) return Value();
  const Shape& in = operand.shape();
  Status valid =
      CheckDimensions("stablehlo.reduce", "dimensions", dimensions, in.rank());
  if (!valid.ok()) return Fail(valid);
  std::sort(dimensions.begin(), dimensions.end());
  Value init_value = ConstantScalar(in.element_type, init);
  if (!init_value.valid()) return Value();
  Shape result(in.element_type, {});
  for (int64_t dim = 0; dim < in.rank(); ++dim) {
    if (!std::binary_search(dimensions.begin(), dimensions.end(), dim)) {
      result.dimensions.push_back(in.dimensions[dim]);
    }
  }
  return Emit(StrCat("stablehlo.reduce(", operand.name(),
                     " init: ", init_value.name(), ") applies stablehlo.", op,
                     " across dimensions = ", DimsList(dimensions), " : (",
                     in.ToMlirType(), ", ", init_value.shape().ToMlirType(),
                     ") -> ", result.ToMlirType()),
              result);
}

Value ProgramBuilder::ReduceSum(Value operand,
                                std::vector<int64_t> dimensions) {
  return Reduce("add", 0, operand, std::move(dimensions));
}

Value ProgramBuilder::ReduceMax(Value operand,
                                std::vector<int64_t> dimensions) {
  if (!Check({&operand})) return Value();
  PJRT_Buffer_Type type = operand.shape().element_type;
  double lowest;
  if (IsFloat(type)) {
    lowest = -std::numeric_limits<double>::infinity();
  } else if (type == PJRT_Buffer_Type_PRED || IsUnsigned(type)) {
    lowest = 0;
  } else {
    lowest = -std::ldexp(1.0, ElementTypeBits(type) - 1);
  }
  return Reduce("maximum", lowest, operand, std::move(dimensions));
}

void ProgramBuilder::Donate(Value parameter, int output_index) {
  if (!Check({&parameter})) return;
  if (!StartsWith(parameter.name(), "%arg")) {
    Fail(InvalidArgumentError("Donate: ", parameter.name(),
                              " is not a parameter"));
    return;
  }
  int index = static_cast<int>(*ParseInt64(parameter.name().substr(4)));
  for (const auto& [donated, output] : donations_) {
    if (donated == index) {
      Fail(InvalidArgumentError("Donate: parameter ", index,
                                " is already donated to output ", output));
      return;
    }
  }
  donations_.emplace_back(index, output_index);
}

std::vector<int> ProgramBuilder::donated_parameters() const {
  std::vector<int> parameters;
  for (const auto& [parameter, output] : donations_) {
    parameters.push_back(parameter);
  }
  std::sort(parameters.begin(), parameters.end());
  return parameters;
}

StatusOr<std::string> ProgramBuilder::Build(
    std::span<const Value> outputs) const {
  RETURN_IF_ERROR(status_);
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].valid() || outputs[i].builder() != this) {
      return InvalidArgumentError("output ", i,
                                  " is not a value of this program");
    }
  }
  std::vector<std::string> attributes(parameters_.size());
  std::set<int> aliased_outputs;
  for (const auto& [parameter, output] : donations_) {
    if (output < 0 || output >= static_cast<int>(outputs.size())) {
      return InvalidArgumentError("parameter ", parameter,
                                  " is donated to output ", output, " of ",
                                  outputs.size());
    }
    if (parameters_[parameter] != outputs[output].shape()) {
      return InvalidArgumentError(
          "parameter ", parameter, " (", parameters_[parameter].ToString(),
          ") is donated to output ", output, " of another shape (",
          outputs[output].shape().ToString(), ")");
    }
    if (!aliased_outputs.insert(output).second) {
      return InvalidArgumentError("output ", output,
                                  " is the alias of two parameters");
    }
    attributes[parameter] =
        StrCat(" {tf.aliasing_output = ", output, " : i32}");
  }
  std::string out = StrCat("module ", SymbolName(name_), " {\n");
  StrAppend(out, "  func.func public @main(");
  for (size_t i = 0; i < parameters_.size(); ++i) {
    if (i > 0) out += ", ";
    StrAppend(out, "%arg", i, ": ", parameters_[i].ToMlirType(), attributes[i]);
  }
  out += ")";
  if (!outputs.empty()) {
    out += " -> (";
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (i > 0) out += ", ";
      out += outputs[i].shape().ToMlirType();
    }
    out += ")";
  }
  out += " {\n";
  out += body_;
  out += "    return";
  if (!outputs.empty()) {
    std::vector<std::string> names;
    std::vector<std::string> types;
    for (const Value& output : outputs) {
      names.push_back(output.name());
      types.push_back(output.shape().ToMlirType());
    }
    StrAppend(out, " ", StrJoin(names, ", "), " : ", StrJoin(types, ", "));
  }
  out += "\n  }\n}\n";
  return out;
}

Value operator+(Value lhs, Value rhs) {
  ProgramBuilder* b = lhs.builder() ? lhs.builder() : rhs.builder();
  return b == nullptr ? Value() : b->Add(lhs, rhs);
}
Value operator-(Value lhs, Value rhs) {
  ProgramBuilder* b = lhs.builder() ? lhs.builder() : rhs.builder();
  return b == nullptr ? Value() : b->Subtract(lhs, rhs);
}
Value operator*(Value lhs, Value rhs) {
  ProgramBuilder* b = lhs.builder() ? lhs.builder() : rhs.builder();
  return b == nullptr ? Value() : b->Multiply(lhs, rhs);
}
Value operator/(Value lhs, Value rhs) {
  ProgramBuilder* b = lhs.builder() ? lhs.builder() : rhs.builder();
  return b == nullptr ? Value() : b->Divide(lhs, rhs);
}
Value operator-(Value operand) {
  ProgramBuilder* b = operand.builder();
  return b == nullptr ? Value() : b->Negate(operand);
}

}  // namespace kiln::client
