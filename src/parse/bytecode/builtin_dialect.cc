// The builtin dialect's bytecode encodings (mlir/IR/BuiltinDialectBytecode.td):
// a varint code (the position in the dialect's list) then the fields.

#include <cstring>

#include "ir/float_bits.h"
#include "parse/bytecode/attr_type_table.h"

namespace kiln::parse::bytecode {
namespace {

enum BuiltinAttrCode : uint64_t {
  kArray = 0,
  kDictionary = 1,
  kString = 2,
  kStringWithType = 3,
  kFlatSymbolRef = 4,
  kSymbolRef = 5,
  kTypeAttr = 6,
  kUnit = 7,
  kInteger = 8,
  kFloat = 9,
  kCallSiteLoc = 10,
  kFileLineColLoc = 11,
  kFusedLoc = 12,
  kFusedLocWithMetadata = 13,
  kNameLoc = 14,
  kUnknownLoc = 15,
  kDenseResourceElements = 16,
  kDenseArray = 17,
  kDenseIntOrFPElements = 18,
  kDenseStringElements = 19,
  kSparseElements = 20,
  kDistinct = 21,
  kFileLineColRange = 22,
};

// Float types by builtin type code; the codes from 21 on were added to
// MLIR in 2025 (older writers store those types as text).
struct BuiltinFloatCode {
  uint64_t code;
  ir::ElementType type;
};
constexpr BuiltinFloatCode kBuiltinFloats[] = {
    {3, ir::ElementType::kBF16},
    {4, ir::ElementType::kF16},
    {5, ir::ElementType::kF32},
    {6, ir::ElementType::kF64},
    {21, ir::ElementType::kTF32},
    {22, ir::ElementType::kF8E5M2},
    {23, ir::ElementType::kF8E4M3},
    {24, ir::ElementType::kF8E4M3FN},
    {25, ir::ElementType::kF8E5M2FNUZ},
    {26, ir::ElementType::kF8E4M3FNUZ},
    {27, ir::ElementType::kF8E4M3B11FNUZ},
    {28, ir::ElementType::kF8E3M4},
    {29, ir::ElementType::kF4E2M1FN},
    {30, ir::ElementType::kF6E2M3FN},
    {31, ir::ElementType::kF6E3M2FN},
    {32, ir::ElementType::kF8E8M0FNU},
};

StatusOr<std::vector<ir::Location>> ReadLocations(AttrTypeTable& table,
                                                  ByteReader& reader) {
  ASSIGN_OR_RETURN(uint64_t count, reader.ReadCount("locations"));
  std::vector<ir::Location> locations;
  locations.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    ASSIGN_OR_RETURN(ir::Location loc, table.ReadLocation(reader));
    locations.push_back(std::move(loc));
  }
  return locations;
}

// The element type of an integer or float attribute, with its bit width.
StatusOr<ir::ElementType> ScalarType(ByteReader& reader, const ir::Type& type) {
  if (!type.is(ir::TypeKind::kElement)) {
    return reader.Error("expected an integer, index or float type, got ",
                        type.ToString());
  }
  return type.element_type();
}

StatusOr<ir::Attribute> ReadDenseArray(AttrTypeTable& table,
                                       ByteReader& reader) {
  ASSIGN_OR_RETURN(ir::Type type, table.ReadType(reader));
  ASSIGN_OR_RETURN(ir::ElementType element, ScalarType(reader, type));
  ASSIGN_OR_RETURN(uint64_t size, reader.ReadVarInt());
  ASSIGN_OR_RETURN(std::string_view blob, reader.ReadBlob());
  uint64_t width = ir::StorageBytes(element);
  if (ir::IsComplex(element) || size > blob.size() / width ||
      size * width != blob.size()) {
    return reader.Error("dense array of ", size, " x ",
                        ir::ElementTypeName(element), " does not match its ",
                        blob.size(), " bytes of data");
  }
  auto element_bits = [&](uint64_t i) {
    uint64_t bits = 0;
    std::memcpy(&bits, blob.data() + i * width, width);
    return bits;
  };
  if (ir::IsFloat(element)) {
    std::vector<double> values(size);
    for (uint64_t i = 0; i < size; ++i) {
      values[i] = ir::DecodeFloat(element, element_bits(i));
    }
    return ir::Attribute::DenseFloatArray(element, std::move(values));
  }
  std::vector<int64_t> values(size);
  int bits = ir::BitWidth(element);
  for (uint64_t i = 0; i < size; ++i) {
    uint64_t raw = element_bits(i);
    if (ir::IsBool(element)) {
      raw = raw != 0;
    } else if (bits < 64) {
      uint64_t mask = (uint64_t{1} << bits) - 1;
      raw &= mask;
      if (ir::IsSignedInteger(element) && (raw >> (bits - 1)) & 1) raw |= ~mask;
    }
    values[i] = static_cast<int64_t>(raw);
  }
  return ir::Attribute::DenseIntArray(element, std::move(values));
}

}  // namespace

StatusOr<DecodedAttr> DecodeBuiltinAttribute(AttrTypeTable& table,
                                             ByteReader& reader) {
  ASSIGN_OR_RETURN(uint64_t code, reader.ReadVarInt());
  DecodedAttr result;
  switch (code) {
    case kArray: {
      ASSIGN_OR_RETURN(uint64_t count, reader.ReadCount("array elements"));
      std::vector<ir::Attribute> elements;
      elements.reserve(count);
      for (uint64_t i = 0; i < count; ++i) {
        ASSIGN_OR_RETURN(ir::Attribute element, table.ReadAttribute(reader));
        elements.push_back(std::move(element));
      }
      result.attr = ir::Attribute::Array(std::move(elements));
      return result;
    }
    case kDictionary: {
      ASSIGN_OR_RETURN(uint64_t count,
                       reader.ReadCount("dictionary entries", 2));
      std::vector<ir::NamedAttribute> entries;
      entries.reserve(count);
      for (uint64_t i = 0; i < count; ++i) {
        ASSIGN_OR_RETURN(std::string name, table.ReadStringAttribute(reader));
        ASSIGN_OR_RETURN(ir::Attribute value, table.ReadAttribute(reader));
        entries.emplace_back(std::move(name), std::move(value));
      }
      result.attr = MakeDictionary(std::move(entries));
      return result;
    }
    case kString: {
      ASSIGN_OR_RETURN(std::string_view text, table.ReadString(reader));
      result.attr = ir::Attribute::String(std::string(text));
      return result;
    }
    case kStringWithType: {
      ASSIGN_OR_RETURN(std::string_view text, table.ReadString(reader));
      RETURN_IF_ERROR(table.ReadType(reader));
      result.attr = ir::Attribute::String(std::string(text));
      return result;
    }
    case kFlatSymbolRef: {
      ASSIGN_OR_RETURN(std::string root, table.ReadStringAttribute(reader));
      result.attr = ir::Attribute::SymbolRef(std::move(root));
      return result;
    }
    case kSymbolRef: {
      ASSIGN_OR_RETURN(std::string root, table.ReadStringAttribute(reader));
      ASSIGN_OR_RETURN(uint64_t count, reader.ReadCount("nested references"));
      std::vector<std::string> nested;
      for (uint64_t i = 0; i < count; ++i) {
        ASSIGN_OR_RETURN(ir::Attribute ref, table.ReadAttribute(reader));
        if (!ref.is(ir::AttrKind::kSymbolRef) || !ref.symbol_nested().empty()) {
          return reader.Error("expected a flat symbol reference, got ",
                              ref.ToString());
        }
        nested.push_back(ref.symbol_root());
      }
      result.attr =
          ir::Attribute::SymbolRef(std::move(root), std::move(nested));
      return result;
    }
    case kTypeAttr: {
      ASSIGN_OR_RETURN(ir::Type type, table.ReadType(reader));
      result.attr = ir::Attribute::TypeAttr(std::move(type));
      return result;
    }
    case kUnit:
      result.attr = ir::Attribute::Unit();
      return result;
    case kInteger: {
      ASSIGN_OR_RETURN(ir::Type type, table.ReadType(reader));
      ASSIGN_OR_RETURN(ir::ElementType element, ScalarType(reader, type));
      if (!ir::IsInteger(element) && !ir::IsBool(element)) {
        return reader.Error("integer attribute of type ", type.ToString());
      }
      ASSIGN_OR_RETURN(int64_t value,
                       ReadKnownWidthInt(reader, ir::BitWidth(element),
                                         ir::IsSignedInteger(element)));
      // MLIR's `true` / `false` are i1 integer attributes.
      result.attr = ir::IsBool(element) ? ir::Attribute::Bool(value != 0)
                                        : ir::Attribute::Integer(value, type);
      return result;
    }
    case kFloat: {
      ASSIGN_OR_RETURN(ir::Type type, table.ReadType(reader));
      ASSIGN_OR_RETURN(ir::ElementType element, ScalarType(reader, type));
      ASSIGN_OR_RETURN(double value, ReadKnownFloat(reader, element));
      result.attr = ir::Attribute::Float(value, type);
      return result;
    }
    case kCallSiteLoc: {
      ASSIGN_OR_RETURN(ir::Location callee, table.ReadLocation(reader));
      ASSIGN_OR_RETURN(ir::Location caller, table.ReadLocation(reader));
      result.loc = ir::Location::CallSite(std::move(callee), std::move(caller));
      return result;
    }
    case kFileLineColLoc: {
      ASSIGN_OR_RETURN(std::string file, table.ReadStringAttribute(reader));
      ASSIGN_OR_RETURN(uint64_t line, reader.ReadVarInt());
      ASSIGN_OR_RETURN(uint64_t column, reader.ReadVarInt());
      result.loc =
          ir::Location::FileLineCol(std::move(file), static_cast<int64_t>(line),
                                    static_cast<int64_t>(column));
      return result;
    }
    case kFileLineColRange: {
      // The filename, then 0 to 4 numbers: start line, start column, then
      // the end column (3) or the end line and column (4).
      ASSIGN_OR_RETURN(std::string file, table.ReadStringAttribute(reader));
      ASSIGN_OR_RETURN(uint64_t count, reader.ReadVarInt());
      if (count > 4) return reader.Error("file range with ", count, " numbers");
      int64_t numbers[4] = {0, 0, 0, 0};
      for (uint64_t i = 0; i < count; ++i) {
        ASSIGN_OR_RETURN(uint64_t n, reader.ReadVarInt());
        numbers[i] = static_cast<int64_t>(n);
      }
      int64_t end_line = count == 4 ? numbers[2] : count == 3 ? numbers[0] : 0;
      int64_t end_column = count == 4   ? numbers[3]
                           : count == 3 ? numbers[2]
                                        : 0;
      result.loc = ir::Location::FileLineCol(std::move(file), numbers[0],
                                             numbers[1], end_line, end_column);
      return result;
    }
    case kFusedLoc:
    case kFusedLocWithMetadata: {
      ASSIGN_OR_RETURN(std::vector<ir::Location> locations,
                       ReadLocations(table, reader));
      ir::Attribute metadata;
      if (code == kFusedLocWithMetadata) {
        ASSIGN_OR_RETURN(metadata, table.ReadAttribute(reader));
      }
      result.loc =
          ir::Location::Fused(std::move(locations), std::move(metadata));
      return result;
    }
    case kNameLoc: {
      ASSIGN_OR_RETURN(std::string name, table.ReadStringAttribute(reader));
      ASSIGN_OR_RETURN(ir::Location child, table.ReadLocation(reader));
      result.loc = ir::Location::Name(std::move(name), std::move(child));
      return result;
    }
    case kUnknownLoc:
      result.loc = ir::Location::Unknown();
      return result;
    case kDenseResourceElements: {
      ASSIGN_OR_RETURN(ir::Type type, table.ReadType(reader));
      ASSIGN_OR_RETURN(std::shared_ptr<ir::ResourceBlob> blob,
                       table.ReadResource(reader));
      if (!type.IsTensor()) {
        return reader.Error("dense_resource needs a tensor type, got ",
                            type.ToString());
      }
      result.attr =
          ir::Attribute::DenseResource(std::move(type), std::move(blob));
      return result;
    }
    case kDenseArray: {
      ASSIGN_OR_RETURN(result.attr, ReadDenseArray(table, reader));
      return result;
    }
    case kDenseIntOrFPElements: {
      ASSIGN_OR_RETURN(ir::Type type, table.ReadType(reader));
      ASSIGN_OR_RETURN(std::string_view blob, reader.ReadBlob());
      bool splat = false;
      ASSIGN_OR_RETURN(std::string data,
                       DenseTensorData(reader, type, blob, splat));
      result.attr =
          ir::Attribute::DenseElements(std::move(type), std::move(data), splat);
      return result;
    }
    case kDenseStringElements:
      return reader.Error("dense string elements are not supported");
    case kSparseElements:
      return reader.Error("sparse elements are not supported");
    case kDistinct:
      return reader.Error("distinct attributes are not supported");
    default:
      return reader.Error("unknown builtin attribute code ", code);
  }
}

StatusOr<ir::Type> DecodeBuiltinType(AttrTypeTable& table, ByteReader& reader) {
  ASSIGN_OR_RETURN(uint64_t code, reader.ReadVarInt());
  for (const BuiltinFloatCode& entry : kBuiltinFloats) {
    if (entry.code == code) return ir::Type::Element(entry.type);
  }
  switch (code) {
    case 0: {  // integer: (width << 2) | signedness
      ASSIGN_OR_RETURN(uint64_t packed, reader.ReadVarInt());
      uint64_t width = packed >> 2;
      uint64_t signedness = packed & 3;  // signless, signed, unsigned
      std::string name = StrCat(signedness == 2 ? "ui" : "i", width);
      std::optional<ir::ElementType> element = ir::ParseElementTypeName(name);
      if (!element || signedness == 3 || (width == 1 && signedness == 2)) {
        return reader.Error("unsupported integer type of ", width,
                            " bits (signedness ", signedness, ")");
      }
      return ir::Type::Element(*element);
    }
    case 1:
      return ir::Type::Element(ir::ElementType::kIndex);
    case 2: {
      ASSIGN_OR_RETURN(std::vector<ir::Type> inputs,
                       ReadTypeList(table, reader));
      ASSIGN_OR_RETURN(std::vector<ir::Type> results,
                       ReadTypeList(table, reader));
      return ir::Type::Function(std::move(inputs), std::move(results));
    }
    case 9: {
      ASSIGN_OR_RETURN(ir::Type component, table.ReadType(reader));
      if (component == ir::Type::Element(ir::ElementType::kF32)) {
        return ir::Type::Element(ir::ElementType::kC64);
      }
      if (component == ir::Type::Element(ir::ElementType::kF64)) {
        return ir::Type::Element(ir::ElementType::kC128);
      }
      return reader.Error("complex of ", component.ToString(),
                          " is not supported");
    }
    case 10:
    case 11: {  // memref [memory space], shape, element, layout
      if (code == 11) RETURN_IF_ERROR(reader.ReadVarInt());
      ASSIGN_OR_RETURN(std::vector<int64_t> shape, ReadShape(reader));
      ASSIGN_OR_RETURN(ir::Type element, table.ReadType(reader));
      RETURN_IF_ERROR(reader.ReadVarInt());  // layout (not kept)
      return ir::Type::MemRef(std::move(shape), std::move(element));
    }
    case 12:
      return ir::Type::None();
    case 13:
    case 14: {
      ir::Attribute encoding;
      if (code == 14) {
        ASSIGN_OR_RETURN(encoding, table.ReadAttribute(reader));
      }
      ASSIGN_OR_RETURN(std::vector<int64_t> shape, ReadShape(reader));
      ASSIGN_OR_RETURN(ir::Type element, table.ReadType(reader));
      return ir::Type::Tensor(std::move(shape), std::move(element), encoding);
    }
    case 15: {
      ASSIGN_OR_RETURN(std::vector<ir::Type> elements,
                       ReadTypeList(table, reader));
      return ir::Type::Tuple(std::move(elements));
    }
    case 7:
    case 8:
      return reader.Error("f80 and f128 are not supported");
    case 16:
    case 17:
    case 18:
      return reader.Error("unranked memref and tensor types are not supported");
    case 19:
    case 20:
      return reader.Error("vector types are not supported");
    default:
      return reader.Error("unknown builtin type code ", code);
  }
}

}  // namespace kiln::parse::bytecode
