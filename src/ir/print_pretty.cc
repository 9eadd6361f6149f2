// Pretty forms: the declarative ones of op_format.h, and the hand-written
// ones (func.func, module, while, reduce, constant, optimization_barrier,
// chlo.scan). Each checks first that the form can carry everything the op
// holds; when it cannot, the op prints in the generic form.
#include <algorithm>

#include "base/strings.h"
#include "ir/print_util.h"
#include "ir/printer_impl.h"

namespace kiln::ir {
namespace {

bool IsIntegerOf(const Attribute& a, ElementType type) {
  return a.is(AttrKind::kInteger) && a.type() == Type::Element(type);
}
bool IsI64Array(const Attribute& a) {
  return a.is(AttrKind::kDenseArray) &&
         a.dense_array_type() == ElementType::kI64;
}

std::string IntList(const std::vector<int64_t>& values) {
  return StrCat("[", StrJoin(values, ", "), "]");
}

std::string UnsignedString(const Attribute& a) {
  uint64_t raw = static_cast<uint64_t>(a.int_value());
  int bits = BitWidth(a.type().element_type());
  if (bits < 64) raw &= (1ULL << bits) - 1;
  return std::to_string(raw);
}

std::string TypeList(const std::vector<Type>& types) {
  return StrJoin(types, ", ",
                 [](std::string& out, const Type& t) { out += t.ToString(); });
}

std::vector<Type> OperandTypes(const Operation& op) {
  std::vector<Type> types;
  for (int i = 0; i < op.num_operands(); ++i)
    types.push_back(op.operand(i)->type());
  return types;
}

bool AllEqual(const std::vector<Type>& types) {
  for (const Type& t : types) {
    if (t != types.front()) return false;
  }
  return true;
}

// Whether a convolution layout (batch/feature or in/out feature plus
// spatial dimensions) is a permutation the [b, 0, 1, f] spelling can show.
bool IsLayout(int64_t first, int64_t second,
              const std::vector<int64_t>& spatial) {
  int64_t rank = 2 + static_cast<int64_t>(spatial.size());
  std::vector<bool> used(rank, false);
  auto take = [&](int64_t d) {
    if (d < 0 || d >= rank || used[d]) return false;
    used[d] = true;
    return true;
  };
  if (!take(first) || !take(second)) return false;
  for (int64_t d : spatial) {
    if (!take(d)) return false;
  }
  return true;
}

}  // namespace

bool OpPrinter::PrintPretty(const Operation& op, int indent) {
  switch (op.code()) {
    case OpCode::kFunc:
      return PrintFunc(op, indent);
    case OpCode::kModule:
      return PrintModuleOp(op, indent);
    case OpCode::kWhile:
      return PrintWhile(op, indent);
    case OpCode::kReduce:
      return PrintReduce(op, indent);
    case OpCode::kConstant:
    case OpCode::kArithConstant:
      return PrintConstant(op);
    case OpCode::kOptimizationBarrier:
      return PrintOptimizationBarrier(op);
    case OpCode::kChloScan:
      return PrintScan(op, indent);
    default:
      break;
  }
  const OpFormat* format = GetOpFormat(op.code());
  if (!format) return false;
  std::string text;
  if (!PrintFormatted(op, *format, text)) return false;
  out_ += text;
  return true;
}

bool OpPrinter::PrintFormatted(const Operation& op, const OpFormat& format,
                               std::string& text) {
  if (op.num_regions() > 0 || !op.successors().empty()) return false;
  int singles = 0;
  for (const FormatPiece& piece : format.pieces) {
    if (piece.kind == FormatPiece::Kind::kOperand) ++singles;
  }
  if (format.fixed_operands >= 0 ? op.num_operands() != format.fixed_operands
                                 : op.num_operands() < singles) {
    return false;
  }
  text = OpName(op);
  Emitter emitter(text);
  int next_operand = 0;
  const auto& pieces = format.pieces;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const FormatPiece& piece = pieces[i];
    switch (piece.kind) {
      case FormatPiece::Kind::kLiteral:
        emitter.Emit(piece.text, piece.glued);
        break;
      case FormatPiece::Kind::kOperand:
        emitter.Emit(NameOf(op.operand(next_operand++)));
        break;
      case FormatPiece::Kind::kOperands:
        for (bool first = true; next_operand < op.num_operands();
             first = false) {
          if (!first) emitter.Emit(",");
          emitter.Emit(NameOf(op.operand(next_operand++)));
        }
        break;
      case FormatPiece::Kind::kOperandsWithComma:
        while (next_operand < op.num_operands()) {
          emitter.Emit(NameOf(op.operand(next_operand++)));
          emitter.Emit(",");
        }
        break;
      case FormatPiece::Kind::kAttribute:
        if (!PrintFormatAttribute(op, piece, emitter)) return false;
        break;
      case FormatPiece::Kind::kAttrDict: {
        std::vector<NamedAttribute> rest =
            RemainingAttributes(op, format.attributes);
        if (!rest.empty()) emitter.Emit(AttrDict(rest));
        break;
      }
      case FormatPiece::Kind::kOptionalBegin: {
        // The group prints when its first attribute is present.
        bool present = false;
        for (int j = static_cast<int>(i) + 1; j < piece.group_end; ++j) {
          if (pieces[j].kind == FormatPiece::Kind::kAttribute) {
            present = op.HasAttr(pieces[j].text);
            break;
          }
        }
        if (!present) i = static_cast<size_t>(piece.group_end);
        break;
      }
      case FormatPiece::Kind::kOptionalEnd:
        break;
      case FormatPiece::Kind::kTypes:
        if (!PrintFormatTypes(op, piece.types, emitter)) return false;
        break;
    }
  }
  return true;
}

bool OpPrinter::PrintFormatAttribute(const Operation& op,
                                     const FormatPiece& piece,
                                     Emitter& emitter) {
  Attribute a = op.GetAttr(piece.text);
  switch (piece.attr_kind) {
    case FormatAttrKind::kI64:
    case FormatAttrKind::kI32: {
      ElementType type = piece.attr_kind == FormatAttrKind::kI64
                             ? ElementType::kI64
                             : ElementType::kI32;
      if (!IsIntegerOf(a, type)) return false;
      emitter.Emit(std::to_string(a.int_value()));
      return true;
    }
    case FormatAttrKind::kU32:
    case FormatAttrKind::kU64: {
      ElementType type = piece.attr_kind == FormatAttrKind::kU32
                             ? ElementType::kUI32
                             : ElementType::kUI64;
      if (!IsIntegerOf(a, type)) return false;
      emitter.Emit(UnsignedString(a));
      return true;
    }
    case FormatAttrKind::kF64:
      if (!a.is(AttrKind::kFloat) ||
          a.type() != Type::Element(ElementType::kF64))
        return false;
      emitter.Emit(FloatElementString(ElementType::kF64, a.float_value()));
      return true;
    case FormatAttrKind::kI64Array:
      if (!IsI64Array(a)) return false;
      emitter.Emit(IntList(a.dense_ints()));
      return true;
    case FormatAttrKind::kBool:
      if (!a.is(AttrKind::kBool)) return false;
      emitter.Emit(a.bool_value() ? "true" : "false");
      return true;
    case FormatAttrKind::kString:
      if (!a.is(AttrKind::kString)) return false;
      emitter.Emit(QuoteString(a.string_value()));
      return true;
    case FormatAttrKind::kCallTarget:
      if (!a.is(AttrKind::kString)) return false;
      emitter.Emit(SymbolString(a.string_value()));
      return true;
    case FormatAttrKind::kSymbol:
      if (!a.is(AttrKind::kSymbolRef)) return false;
      emitter.Emit(a.ToString());
      return true;
    case FormatAttrKind::kEnum:
      if (!a.is(AttrKind::kEnum) || a.enum_kind() != piece.enum_kind ||
          EnumValueName(a.enum_kind(), a.enum_value()).empty()) {
        return false;
      }
      emitter.Emit(EnumValueName(a.enum_kind(), a.enum_value()));
      return true;
    case FormatAttrKind::kPrecisionList: {
      if (!a.is(AttrKind::kArray)) return false;
      std::vector<std::string_view> names;
      for (const Attribute& e : a.array()) {
        if (!e.is(AttrKind::kEnum) || e.enum_kind() != EnumKind::kPrecision)
          return false;
        std::string_view name =
            EnumValueName(EnumKind::kPrecision, e.enum_value());
        if (name.empty()) return false;
        names.push_back(name);
      }
      emitter.Emit(StrCat("[", StrJoin(names, ", "), "]"));
      return true;
    }
    case FormatAttrKind::kDotDimensions: {
      if (!a.is(AttrKind::kDotDimensionNumbers)) return false;
      const DotDimensionNumbers& d = a.dot();
      std::string text;
      if (!d.lhs_batching_dimensions.empty() ||
          !d.rhs_batching_dimensions.empty()) {
        text = StrCat("batching_dims = ", IntList(d.lhs_batching_dimensions),
                      " x ", IntList(d.rhs_batching_dimensions), ", ");
      }
      StrAppend(text,
                "contracting_dims = ", IntList(d.lhs_contracting_dimensions),
                " x ", IntList(d.rhs_contracting_dimensions));
      emitter.Emit(text);
      return true;
    }
    case FormatAttrKind::kDotAlgorithm: {
      if (!a.is(AttrKind::kDotAlgorithm)) return false;
      const DotAlgorithm& d = a.dot_algorithm();
      if (!d.lhs_precision_type || !d.rhs_precision_type ||
          !d.accumulation_type)
        return false;
      std::string text = a.ToString();
      emitter.Emit(
          text.substr(std::string_view("#stablehlo.dot_algorithm").size()));
      return true;
    }
    case FormatAttrKind::kSliceRanges: {
      Attribute limits = op.GetAttr("limit_indices");
      Attribute strides = op.GetAttr("strides");
      if (!IsI64Array(a) || !IsI64Array(limits) || !IsI64Array(strides))
        return false;
      size_t n = a.dense_ints().size();
      if (limits.dense_ints().size() != n || strides.dense_ints().size() != n)
        return false;
      std::string text = "[";
      for (size_t i = 0; i < n; ++i) {
        if (i) text += ", ";
        StrAppend(text, a.dense_ints()[i], ":", limits.dense_ints()[i]);
        if (strides.dense_ints()[i] != 1)
          StrAppend(text, ":", strides.dense_ints()[i]);
      }
      emitter.Emit(text + "]");
      return true;
    }
    case FormatAttrKind::kExponentMantissa: {
      Attribute mantissa = op.GetAttr("mantissa_bits");
      if (!IsIntegerOf(a, ElementType::kI32) ||
          !IsIntegerOf(mantissa, ElementType::kI32) || a.int_value() < 0 ||
          mantissa.int_value() < 0) {
        return false;
      }
      emitter.Emit(StrCat("e", a.int_value(), "m", mantissa.int_value()));
      return true;
    }
    case FormatAttrKind::kConvDimensions: {
      if (!a.is(AttrKind::kConvDimensionNumbers)) return false;
      const ConvDimensionNumbers& c = a.conv();
      if (!IsLayout(c.input_batch_dimension, c.input_feature_dimension,
                    c.input_spatial_dimensions) ||
          !IsLayout(c.kernel_input_feature_dimension,
                    c.kernel_output_feature_dimension,
                    c.kernel_spatial_dimensions) ||
          !IsLayout(c.output_batch_dimension, c.output_feature_dimension,
                    c.output_spatial_dimensions) ||
          c.input_spatial_dimensions.size() !=
              c.kernel_spatial_dimensions.size() ||
          c.input_spatial_dimensions.size() !=
              c.output_spatial_dimensions.size()) {
        return false;
      }
      std::string text = a.ToString();  // #stablehlo.conv<...>
      std::string_view prefix = "#stablehlo.conv<";
      emitter.Emit(text.substr(prefix.size(), text.size() - prefix.size() - 1));
      return true;
    }
    case FormatAttrKind::kWindow: {
      std::vector<std::string> parts;
      for (const auto& [name, keyword] : WindowAttributeKeywords()) {
        Attribute value = op.GetAttr(name);
        if (!value) continue;
        if (name == "padding") {
          if (!value.is(AttrKind::kDenseElements)) return false;
          Type type = value.type();
          if (type.rank() != 2 || type.dim(1) != 2 ||
              type.element() != Type::Element(ElementType::kI64)) {
            return false;
          }
          std::optional<std::vector<int64_t>> ints = value.AsIntVector();
          if (!ints) return false;
          std::string text = StrCat(keyword, " = [");
          for (size_t i = 0; i + 1 < ints->size(); i += 2) {
            if (i) text += ", ";
            StrAppend(text, "[", (*ints)[i], ", ", (*ints)[i + 1], "]");
          }
          parts.push_back(text + "]");
        } else if (name == "window_reversal") {
          if (!value.is(AttrKind::kDenseArray) ||
              value.dense_array_type() != ElementType::kI1) {
            return false;
          }
          parts.push_back(StrCat(keyword, " = [",
                                 StrJoin(value.dense_ints(), ", ",
                                         [](std::string& out, int64_t v) {
                                           out += v ? "true" : "false";
                                         }),
                                 "]"));
        } else {
          if (!IsI64Array(value)) return false;
          parts.push_back(StrCat(keyword, " = ", IntList(value.dense_ints())));
        }
      }
      emitter.Emit(StrJoin(parts, ", "));
      return true;
    }
    case FormatAttrKind::kAny:
      if (!a) return false;
      emitter.Emit(a.ToString());
      return true;
  }
  return false;
}

bool OpPrinter::PrintFormatTypes(const Operation& op, FormatTypes types,
                                 Emitter& emitter) {
  std::vector<Type> operands = OperandTypes(op);
  std::vector<Type> results = op.result_types();
  std::string functional = Type::Function(operands, results).ToString();
  auto emit = [&emitter](const std::string& text) {
    emitter.Emit(":");
    emitter.Emit(text);
  };
  switch (types) {
    case FormatTypes::kSame:
    case FormatTypes::kSameNoResult:
    case FormatTypes::kVariadicSame: {
      size_t expected = types == FormatTypes::kSameNoResult ? 0 : 1;
      if (results.size() != expected) return false;
      std::vector<Type> all = operands;
      all.insert(all.end(), results.begin(), results.end());
      if (all.empty()) return false;
      emit(AllEqual(all) && !all[0].is(TypeKind::kFunction) ? all[0].ToString()
                                                            : functional);
      return true;
    }
    case FormatTypes::kFunctional:
      emit(functional);
      return true;
    case FormatTypes::kResults:
      if (!operands.empty() || results.empty()) return false;
      emit(TypeList(results));
      return true;
    case FormatTypes::kReturn:
      if (!results.empty()) return false;
      if (!operands.empty()) emit(TypeList(operands));
      return true;
    case FormatTypes::kOperandList:
      if (!results.empty() || operands.empty()) return false;
      emit(TypeList(operands));
      return true;
    case FormatTypes::kSelect:
      if (operands.size() != 3 || results.size() != 1) return false;
      if (operands[1] == operands[2] && operands[1] == results[0] &&
          !operands[0].is(TypeKind::kFunction)) {
        emit(StrCat(operands[0].ToString(), ", ", results[0].ToString()));
      } else {
        emit(functional);
      }
      return true;
    case FormatTypes::kTuple:
      if (results.size() != 1) return false;
      if (results[0].IsTuple() && results[0].elements() == operands) {
        emit(results[0].ToString());
      } else {
        emit(functional);
      }
      return true;
    case FormatTypes::kComplex: {
      if (results.size() != 1) return false;
      const Type& r = results[0];
      bool short_form =
          operands.size() == 2 && operands[0] == operands[1] && r.IsTensor() &&
          r.element().is(TypeKind::kElement) &&
          IsComplex(r.element().element_type()) &&
          operands[0] == r.WithElement(Type::Element(
                             ComplexComponentType(r.element().element_type())));
      emit(short_form ? r.ToString() : functional);
      return true;
    }
    case FormatTypes::kArrow: {
      if (operands.empty()) return false;
      std::string text = StrCat(TypeList(operands), " -> ");
      if (results.size() == 1 && !results[0].is(TypeKind::kFunction)) {
        text += results[0].ToString();
      } else {
        StrAppend(text, "(", TypeList(results), ")");
      }
      emit(text);
      return true;
    }
    case FormatTypes::kCastTo:
      if (operands.size() != 1 || results.size() != 1) return false;
      emit(StrCat(operands[0].ToString(), " to ", results[0].ToString()));
      return true;
    case FormatTypes::kFromValue: {
      Attribute value = op.GetAttr("value");
      return results.empty() && operands.size() == 1 && value &&
             value.type() == operands[0];
    }
  }
  return false;
}

}  // namespace kiln::ir
