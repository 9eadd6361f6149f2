// The MLIR text forms of types and attributes (Type::ToString and
// Attribute::ToString). The op printer (printer.cc) builds on these.
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "base/strings.h"
#include "ir/attributes.h"
#include "ir/float_bits.h"
#include "ir/print_util.h"
#include "ir/types.h"

namespace kiln::ir {
namespace {

std::string DimString(int64_t d) { return d == kDynamic ? "?" : std::to_string(d); }

}  // namespace

std::string FormatDouble(double value) {
  // Shortest of a few precisions that reads back to the same double.
  char text[64];
  for (int precision : {6, 9, 17}) {
    std::snprintf(text, sizeof(text), "%.*e", precision, value);
    if (std::strtod(text, nullptr) == value) break;
  }
  return text;
}

bool IsBareIdentifier(std::string_view text) {
  if (text.empty()) return false;
  auto ok_first = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
  if (!ok_first(text[0])) return false;
  for (char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '$' && c != '.') {
      return false;
    }
  }
  return true;
}

namespace {

void AppendIntList(std::string& out, const std::vector<int64_t>& values) {
  out += "[";
  out += StrJoin(values, ", ");
  out += "]";
}

}  // namespace

// Quotes and escapes a string the way MLIR prints string attributes.
std::string QuoteString(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      const char* hex = "0123456789ABCDEF";
      out.push_back('\\');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  out.push_back('"');
  return out;
}

// `@name` or `@"name"`.
std::string SymbolString(std::string_view name) {
  return IsBareIdentifier(name) ? StrCat("@", name) : StrCat("@", QuoteString(name));
}

// A float element value in MLIR's style: decimal, or hex bits for values a
// decimal cannot carry (NaN, infinities).
namespace {
std::string HexBits(ElementType type, uint64_t bits) {
  int digits = (BitWidth(type) + 3) / 4;
  char text[32];
  std::snprintf(text, sizeof(text), "0x%0*llX", digits, static_cast<unsigned long long>(bits));
  return text;
}
}  // namespace

std::string FloatElementString(ElementType type, double value) {
  if (!std::isfinite(value)) return HexBits(type, EncodeFloat(type, value));
  if (type == ElementType::kF64 || !IsFloat(type)) return FormatDouble(value);
  // The fewest digits (at least MLIR's usual 7) that read back to the same
  // value of `type`, reading as the text parser does: f32 rounds once from
  // decimal, narrower types go through double.
  uint64_t bits = EncodeFloat(type, value);
  char text[64];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(text, sizeof(text), "%.*e", precision, value);
    double read = type == ElementType::kF32
                      ? static_cast<double>(std::strtof(text, nullptr))
                      : std::strtod(text, nullptr);
    if (EncodeFloat(type, read) == bits) return text;
  }
  return FormatDouble(value);
}

// A float element from its raw bits: non-finite values keep their exact
// bit pattern (sign and NaN payload).
std::string FloatBitsString(ElementType type, uint64_t bits) {
  double value = DecodeFloat(type, bits);
  if (!std::isfinite(value)) return HexBits(type, bits);
  return FloatElementString(type, value);
}

std::string Type::ToString() const {
  if (!storage_) return "<<null type>>";
  switch (kind()) {
    case TypeKind::kElement: return std::string(ElementTypeName(element_type()));
    case TypeKind::kQuantized: {
      const QuantizedType& q = quantized();
      std::string storage(ElementTypeName(q.storage_type));
      if (IsUnsignedInteger(q.storage_type)) storage = "u" + storage.substr(2);
      std::string out = StrCat("!quant.uniform<", storage);
      if (q.explicit_storage_range) StrAppend(out, "<", q.storage_min, ":", q.storage_max, ">");
      StrAppend(out, ":", ElementTypeName(q.expressed_type));
      auto param = [](double scale, int64_t zero_point) {
        std::string p = FormatDouble(scale);
        if (zero_point != 0) StrAppend(p, ":", zero_point);
        return p;
      };
      if (q.axis) {
        StrAppend(out, ":", *q.axis, ", {");
        for (size_t i = 0; i < q.scales.size(); ++i) {
          if (i) out += ",";
          out += param(q.scales[i], i < q.zero_points.size() ? q.zero_points[i] : 0);
        }
        out += "}";
      } else {
        StrAppend(out, ", ", param(q.scales.empty() ? 1.0 : q.scales[0],
                                   q.zero_points.empty() ? 0 : q.zero_points[0]));
      }
      out += ">";
      return out;
    }
    case TypeKind::kTensor:
    case TypeKind::kMemRef: {
      std::string out = kind() == TypeKind::kTensor ? "tensor<" : "memref<";
      for (int64_t d : shape()) StrAppend(out, DimString(d), "x");
      out += element().ToString();
      if (kind() == TypeKind::kTensor && encoding()) StrAppend(out, ", ", encoding().ToString());
      out += ">";
      return out;
    }
    case TypeKind::kUnrankedTensor: return StrCat("tensor<*x", element().ToString(), ">");
    case TypeKind::kToken: return "!stablehlo.token";
    case TypeKind::kNone: return "none";
    case TypeKind::kTuple:
      return StrCat("tuple<", StrJoin(elements(), ", ", [](std::string& o, const Type& t) {
                      o += t.ToString();
                    }), ">");
    case TypeKind::kFuture:
      return StrCat("!stablehlo.future<",
                    StrJoin(elements(), ", ", [](std::string& o, const Type& t) {
                      o += t.ToString();
                    }), ">");
    case TypeKind::kFunction: {
      auto list = [](const std::vector<Type>& types) {
        return StrJoin(types, ", ", [](std::string& o, const Type& t) { o += t.ToString(); });
      };
      std::string out = StrCat("(", list(inputs()), ") -> ");
      if (results().size() == 1 && !results()[0].is(TypeKind::kFunction)) {
        out += results()[0].ToString();
      } else {
        StrAppend(out, "(", list(results()), ")");
      }
      return out;
    }
    case TypeKind::kOpaque: return StrCat("!", opaque_text());
  }
  return "<<type>>";
}

namespace {

// One element of a dense attribute's data, as MLIR prints it.
std::string DenseElementString(Type element, const char* data) {
  ElementType et = element.is(TypeKind::kQuantized) ? element.quantized().storage_type
                                                    : element.element_type();
  int bytes = StorageBytes(et);
  if (IsComplex(et)) {
    ElementType part = ComplexComponentType(et);
    int part_bytes = StorageBytes(part);
    uint64_t re = 0, im = 0;
    std::memcpy(&re, data, part_bytes);
    std::memcpy(&im, data + part_bytes, part_bytes);
    return StrCat("(", FloatBitsString(part, re), ", ", FloatBitsString(part, im), ")");
  }
  uint64_t raw = 0;
  std::memcpy(&raw, data, bytes);
  if (IsFloat(et)) return FloatBitsString(et, raw);
  if (IsBool(et)) return raw ? "true" : "false";
  int bits = BitWidth(et);
  if (bits < 64) raw &= (1ULL << bits) - 1;
  if (IsUnsignedInteger(et)) return std::to_string(raw);
  if (bits < 64 && (raw >> (bits - 1)) & 1) raw |= ~0ULL << bits;
  return std::to_string(static_cast<int64_t>(raw));
}

void AppendNested(std::string& out, const std::vector<int64_t>& shape, size_t dim,
                  Type element, const std::string& data, int bytes, int64_t& index) {
  if (dim == shape.size()) {
    out += DenseElementString(element, data.data() + index * bytes);
    ++index;
    return;
  }
  out += "[";
  for (int64_t i = 0; i < shape[dim]; ++i) {
    if (i) out += ", ";
    AppendNested(out, shape, dim + 1, element, data, bytes, index);
  }
  out += "]";
}

std::string DenseElementsString(const Attribute& attr) {
  Type type = attr.type();
  Type element = type.element();
  ElementType et = type.StorageElementType();
  int bytes = StorageBytes(et);
  const std::string& data = attr.dense_data();
  std::string out = "dense<";
  int64_t count = type.NumElements();
  if (attr.dense_is_splat() && count != 0) {
    out += DenseElementString(element, data.data());
  } else if (count == 0) {
    // `dense<>` (MLIR also accepts `dense<[]>`).
  } else if (count > 100) {
    out += "\"0x";
    const char* hex = "0123456789ABCDEF";
    for (unsigned char c : data) {
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
    out += "\"";
  } else {
    int64_t index = 0;
    AppendNested(out, type.shape(), 0, element, data, bytes, index);
  }
  StrAppend(out, "> : ", type.ToString());
  return out;
}

void AppendField(std::string& out, bool& first, const char* name,
                 const std::vector<int64_t>& values, bool omit_empty = true) {
  if (omit_empty && values.empty()) return;
  if (!first) out += ", ";
  first = false;
  StrAppend(out, name, " = ");
  AppendIntList(out, values);
}

// Whether batch/feature and spatial dimensions are a permutation of the
// layout's rank (what the [b, 0, 1, f] spelling can show).
bool IsConvLayout(int64_t first, int64_t second, const std::vector<int64_t>& spatial) {
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

std::string ConvLayout(int64_t batch, int64_t feature, const std::vector<int64_t>& spatial,
                       char batch_letter, char feature_letter) {
  int64_t rank = 2 + static_cast<int64_t>(spatial.size());
  std::vector<std::string> slots(rank, "?");
  if (batch >= 0 && batch < rank) slots[batch] = std::string(1, batch_letter);
  if (feature >= 0 && feature < rank) slots[feature] = std::string(1, feature_letter);
  for (size_t i = 0; i < spatial.size(); ++i) {
    if (spatial[i] >= 0 && spatial[i] < rank) slots[spatial[i]] = std::to_string(i);
  }
  return StrCat("[", StrJoin(slots, ", "), "]");
}

}  // namespace

std::string Attribute::ToString() const {
  if (!storage_) return "<<null attribute>>";
  switch (kind()) {
    case AttrKind::kUnit: return "unit";
    case AttrKind::kBool: return bool_value() ? "true" : "false";
    case AttrKind::kInteger: {
      Type t = type();
      if (t.is(TypeKind::kElement) && IsBool(t.element_type())) {
        return int_value() ? "true" : "false";
      }
      std::string value;
      if (t.is(TypeKind::kElement) && IsUnsignedInteger(t.element_type())) {
        uint64_t raw = static_cast<uint64_t>(int_value());
        int bits = BitWidth(t.element_type());
        if (bits < 64) raw &= (1ULL << bits) - 1;
        value = std::to_string(raw);
      } else {
        value = std::to_string(int_value());
      }
      return StrCat(value, " : ", t.ToString());
    }
    case AttrKind::kFloat: {
      Type t = type();
      ElementType et = t.is(TypeKind::kElement) ? t.element_type() : ElementType::kF64;
      return StrCat(FloatElementString(et, float_value()), " : ", t.ToString());
    }
    case AttrKind::kString: return QuoteString(string_value());
    case AttrKind::kType: return type().ToString();
    case AttrKind::kArray:
      return StrCat("[", StrJoin(array(), ", ", [](std::string& o, const Attribute& a) {
                      o += a.ToString();
                    }), "]");
    case AttrKind::kDictionary: {
      std::string out = "{";
      bool first = true;
      for (const auto& [name, value] : dictionary()) {
        if (!first) out += ", ";
        first = false;
        out += IsBareIdentifier(name) ? name : QuoteString(name);
        if (!value.is(AttrKind::kUnit)) StrAppend(out, " = ", value.ToString());
      }
      out += "}";
      return out;
    }
    case AttrKind::kDenseArray: {
      ElementType et = dense_array_type();
      std::string out = StrCat("array<", ElementTypeName(et));
      if (dense_array_size() > 0) {
        out += ": ";
        if (IsFloat(et)) {
          out += StrJoin(dense_floats(), ", ", [et](std::string& o, double v) {
            o += FloatElementString(et, v);
          });
        } else if (IsBool(et)) {
          out += StrJoin(dense_ints(), ", ", [](std::string& o, int64_t v) {
            o += v ? "true" : "false";
          });
        } else {
          out += StrJoin(dense_ints(), ", ");
        }
      }
      out += ">";
      return out;
    }
    case AttrKind::kDenseElements: return DenseElementsString(*this);
    case AttrKind::kDenseResource:
      return StrCat("dense_resource<", resource() ? resource()->key : std::string("?"),
                    "> : ", type().ToString());
    case AttrKind::kSymbolRef: {
      std::string out = SymbolString(symbol_root());
      for (const std::string& nested : symbol_nested()) StrAppend(out, "::", SymbolString(nested));
      return out;
    }
    case AttrKind::kEnum:
      return StrCat("#stablehlo<", EnumKindName(enum_kind()), " ",
                    EnumValueName(enum_kind(), enum_value()), ">");
    case AttrKind::kDotDimensionNumbers: {
      const DotDimensionNumbers& d = dot();
      std::string out = "#stablehlo.dot<";
      bool first = true;
      AppendField(out, first, "lhs_batching_dimensions", d.lhs_batching_dimensions);
      AppendField(out, first, "rhs_batching_dimensions", d.rhs_batching_dimensions);
      AppendField(out, first, "lhs_contracting_dimensions", d.lhs_contracting_dimensions);
      AppendField(out, first, "rhs_contracting_dimensions", d.rhs_contracting_dimensions);
      return out + ">";
    }
    case AttrKind::kGatherDimensionNumbers: {
      const GatherDimensionNumbers& g = gather();
      std::string out = "#stablehlo.gather<";
      bool first = true;
      AppendField(out, first, "offset_dims", g.offset_dims);
      AppendField(out, first, "collapsed_slice_dims", g.collapsed_slice_dims);
      AppendField(out, first, "operand_batching_dims", g.operand_batching_dims);
      AppendField(out, first, "start_indices_batching_dims", g.start_indices_batching_dims);
      AppendField(out, first, "start_index_map", g.start_index_map);
      StrAppend(out, first ? "" : ", ", "index_vector_dim = ", g.index_vector_dim, ">");
      return out;
    }
    case AttrKind::kScatterDimensionNumbers: {
      const ScatterDimensionNumbers& s = scatter();
      std::string out = "#stablehlo.scatter<";
      bool first = true;
      AppendField(out, first, "update_window_dims", s.update_window_dims);
      AppendField(out, first, "inserted_window_dims", s.inserted_window_dims);
      AppendField(out, first, "input_batching_dims", s.input_batching_dims);
      AppendField(out, first, "scatter_indices_batching_dims", s.scatter_indices_batching_dims);
      AppendField(out, first, "scatter_dims_to_operand_dims", s.scatter_dims_to_operand_dims);
      StrAppend(out, first ? "" : ", ", "index_vector_dim = ", s.index_vector_dim, ">");
      return out;
    }
    case AttrKind::kConvDimensionNumbers: {
      const ConvDimensionNumbers& c = conv();
      if (!IsConvLayout(c.input_batch_dimension, c.input_feature_dimension,
                        c.input_spatial_dimensions) ||
          !IsConvLayout(c.kernel_input_feature_dimension, c.kernel_output_feature_dimension,
                        c.kernel_spatial_dimensions) ||
          !IsConvLayout(c.output_batch_dimension, c.output_feature_dimension,
                        c.output_spatial_dimensions) ||
          c.input_spatial_dimensions.size() != c.kernel_spatial_dimensions.size() ||
          c.input_spatial_dimensions.size() != c.output_spatial_dimensions.size()) {
        // Not a layout the [b, 0, f] spelling can show: the raw fields.
        auto list = [](const std::vector<int64_t>& v) { return StrCat("[", StrJoin(v, ", "), "]"); };
        return StrCat("#stablehlo.conv<raw input_batch_dimension = ", c.input_batch_dimension,
                      ", input_feature_dimension = ", c.input_feature_dimension,
                      ", input_spatial_dimensions = ", list(c.input_spatial_dimensions),
                      ", kernel_input_feature_dimension = ", c.kernel_input_feature_dimension,
                      ", kernel_output_feature_dimension = ", c.kernel_output_feature_dimension,
                      ", kernel_spatial_dimensions = ", list(c.kernel_spatial_dimensions),
                      ", output_batch_dimension = ", c.output_batch_dimension,
                      ", output_feature_dimension = ", c.output_feature_dimension,
                      ", output_spatial_dimensions = ", list(c.output_spatial_dimensions), ">");
      }
      return StrCat("#stablehlo.conv<",
                    ConvLayout(c.input_batch_dimension, c.input_feature_dimension,
                               c.input_spatial_dimensions, 'b', 'f'),
                    "x",
                    ConvLayout(c.kernel_input_feature_dimension,
                               c.kernel_output_feature_dimension, c.kernel_spatial_dimensions,
                               'i', 'o'),
                    "->",
                    ConvLayout(c.output_batch_dimension, c.output_feature_dimension,
                               c.output_spatial_dimensions, 'b', 'f'),
                    ">");
    }
    case AttrKind::kDotAlgorithm: {
      const DotAlgorithm& a = dot_algorithm();
      return StrCat("#stablehlo.dot_algorithm<lhs_precision_type = ",
                    a.lhs_precision_type.ToString(),
                    ", rhs_precision_type = ", a.rhs_precision_type.ToString(),
                    ", accumulation_type = ", a.accumulation_type.ToString(),
                    ", lhs_component_count = ", a.lhs_component_count,
                    ", rhs_component_count = ", a.rhs_component_count,
                    ", num_primitive_operations = ", a.num_primitive_operations,
                    ", allow_imprecise_accumulation = ", a.allow_imprecise_accumulation, ">");
    }
    case AttrKind::kChannelHandle:
      return StrCat("#stablehlo.channel_handle<handle = ", channel_handle().handle,
                    ", type = ", channel_handle().type, ">");
    case AttrKind::kOutputOperandAlias: {
      const OutputOperandAlias& a = output_operand_alias();
      std::string out = "#stablehlo.output_operand_alias<output_tuple_indices = ";
      AppendIntList(out, a.output_tuple_indices);
      StrAppend(out, ", operand_index = ", a.operand_index, ", operand_tuple_indices = ");
      AppendIntList(out, a.operand_tuple_indices);
      return out + ">";
    }
    case AttrKind::kResultAccuracy: {
      // Like MLIR, fields at their default (+0) are left out.
      const ResultAccuracy& r = result_accuracy();
      auto is_default = [](double v) { return v == 0 && !std::signbit(v); };
      std::string out = "#stablehlo.result_accuracy<";
      if (!is_default(r.atol)) StrAppend(out, "atol = ", FormatDouble(r.atol), ", ");
      if (!is_default(r.rtol)) StrAppend(out, "rtol = ", FormatDouble(r.rtol), ", ");
      if (r.ulps != 0) StrAppend(out, "ulps = ", r.ulps, ", ");
      StrAppend(out, "mode = #stablehlo.result_accuracy_mode<",
                EnumValueName(EnumKind::kResultAccuracyMode, r.mode), ">>");
      return out;
    }
    case AttrKind::kTypeExtensions:
      return StrCat("#stablehlo.bounds<",
                    StrJoin(bounds(), ", ", [](std::string& o, int64_t b) { o += DimString(b); }),
                    ">");
    case AttrKind::kDialectStruct: {
      std::string out = StrCat("#", struct_name(), "<");
      bool first = true;
      for (const auto& [name, value] : struct_fields()) {
        if (!first) out += ", ";
        first = false;
        StrAppend(out, name, " = ", value.ToString());
      }
      return out + ">";
    }
    case AttrKind::kOpaque: return StrCat("#", opaque_text());
  }
  return "<<attribute>>";
}

}  // namespace kiln::ir
