// The VHLO dialect's bytecode encodings (stablehlo/dialect/VhloBytecode.cpp):
// a varint code, then the fields. VHLO attributes and types are decoded
// straight into the IR's StableHLO / builtin equivalents; what depends on
// the op (dense arrays, symbols, flattened structs) is done by the op
// conversion (vhlo_ops.cc).

#include "ir/float_bits.h"
#include "parse/bytecode/attr_type_table.h"

namespace kiln::parse::bytecode {
namespace {

using ir::ElementType;

enum VhloAttrCode : uint64_t {
  kArrayV1 = 1,
  kBooleanV1 = 2,
  kComparisonDirectionV1 = 3,
  kComparisonTypeV1 = 4,
  kCustomCallApiVersionV1 = 5,
  kDictionaryV1 = 6,
  kFftTypeV1 = 7,
  kFloatV1 = 8,
  kIntegerV1 = 9,
  kOutputOperandAliasV1 = 10,
  kPrecisionV1 = 11,
  kRngAlgorithmV1 = 12,
  kRngDistributionV1 = 13,
  kStringV1 = 14,
  kTensorV1 = 15,
  kTransposeV1 = 16,
  kTypeV1 = 17,
  kTypeExtensionsV1 = 18,
  kResultAccuracyModeV1 = 19,
  kResultAccuracyV1 = 20,
  kSubAxisInfoV1 = 21,
  kAxisRefV1 = 22,
  kReplicaGroupMeshAxesV1 = 23,
  kMeshAxisV1 = 24,
  kMeshV1 = 25,
};

// VHLO types without fields, by code.
struct VhloScalarType {
  uint64_t code;
  ElementType type;
};
constexpr VhloScalarType kVhloScalarTypes[] = {
    {0, ElementType::kI1},
    {2, ElementType::kBF16},
    {3, ElementType::kF16},
    {4, ElementType::kF32},
    {5, ElementType::kF64},
    {6, ElementType::kF8E4M3FN},
    {7, ElementType::kF8E5M2},
    {9, ElementType::kIndex},
    {10, ElementType::kI4},
    {11, ElementType::kI8},
    {12, ElementType::kI16},
    {13, ElementType::kI32},
    {14, ElementType::kI64},
    {15, ElementType::kUI4},
    {16, ElementType::kUI8},
    {17, ElementType::kUI16},
    {18, ElementType::kUI32},
    {19, ElementType::kUI64},
    {27, ElementType::kF8E4M3FNUZ},
    {28, ElementType::kF8E5M2FNUZ},
    {29, ElementType::kF8E4M3B11FNUZ},
    {31, ElementType::kI2},
    {32, ElementType::kUI2},
    {34, ElementType::kTF32},
    {35, ElementType::kF8E4M3},
    {36, ElementType::kF8E3M4},
    {37, ElementType::kF4E2M1FN},
    {38, ElementType::kF6E2M3FN},
    {39, ElementType::kF6E3M2FN},
    {40, ElementType::kF8E8M0FNU},
};

enum VhloTypeCode : uint64_t {
  kComplexV1 = 1,
  kFunctionV1 = 8,
  kRankedTensorV1 = 20,
  kRankedTensorWithEncodingV1 = 21,
  kTokenV1 = 22,
  kTupleV1 = 23,
  kUniformQuantizedV1 = 24,
  kUnrankedTensorV1 = 25,
  kWitnessV1 = 26,
  kUniformQuantizedPerAxisV1 = 30,
  kNoneV1 = 33,
  kRankedBufferV1 = 41,
  kFutureV1 = 42,
};

StatusOr<ir::Type> ReadTensor(AttrTypeTable& table, ByteReader& reader,
                              bool has_encoding) {
  ir::Attribute encoding;
  if (has_encoding) {
    ASSIGN_OR_RETURN(encoding, table.ReadAttribute(reader));
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> shape, ReadShape(reader));
  ASSIGN_OR_RETURN(ir::Type element, table.ReadType(reader));
  if (!element.is(ir::TypeKind::kElement) &&
      !element.is(ir::TypeKind::kQuantized)) {
    return reader.Error("tensor of ", element.ToString(), " is not supported");
  }
  return ir::Type::Tensor(std::move(shape), std::move(element), encoding);
}

}  // namespace

StatusOr<ir::Attribute> DecodeVhloAttribute(AttrTypeTable& table,
                                            ByteReader& reader) {
  ASSIGN_OR_RETURN(uint64_t code, reader.ReadVarInt());
  switch (code) {
    case kArrayV1: {
      ASSIGN_OR_RETURN(uint64_t count, reader.ReadCount("array elements"));
      std::vector<ir::Attribute> elements;
      elements.reserve(count);
      for (uint64_t i = 0; i < count; ++i) {
        ASSIGN_OR_RETURN(ir::Attribute element, table.ReadAttribute(reader));
        elements.push_back(std::move(element));
      }
      return ir::Attribute::Array(std::move(elements));
    }
    case kBooleanV1: {
      ASSIGN_OR_RETURN(uint64_t value, reader.ReadVarInt());
      if (value > 1) return reader.Error("invalid boolean value ", value);
      return ir::Attribute::Bool(value == 1);
    }
    case kComparisonDirectionV1:
      return ReadEnumAttribute(reader, ir::EnumKind::kComparisonDirection);
    case kComparisonTypeV1:
      return ReadEnumAttribute(reader, ir::EnumKind::kComparisonType);
    case kCustomCallApiVersionV1: {
      // StableHLO keeps the API version as an i32 integer attribute.
      ASSIGN_OR_RETURN(uint64_t value, reader.ReadVarInt());
      if (value > 4)
        return reader.Error("invalid custom_call API version ", value);
      return ir::Attribute::Integer(static_cast<int64_t>(value),
                                    ir::Type::Element(ElementType::kI32));
    }
    case kDictionaryV1: {
      ASSIGN_OR_RETURN(uint64_t count,
                       reader.ReadCount("dictionary entries", 2));
      std::vector<ir::NamedAttribute> entries;
      entries.reserve(count);
      for (uint64_t i = 0; i < count; ++i) {
        ASSIGN_OR_RETURN(std::string name, table.ReadStringAttribute(reader));
        ASSIGN_OR_RETURN(ir::Attribute value, table.ReadAttribute(reader));
        entries.emplace_back(std::move(name), std::move(value));
      }
      return MakeDictionary(std::move(entries));
    }
    case kFftTypeV1:
      return ReadEnumAttribute(reader, ir::EnumKind::kFftType);
    case kFloatV1: {
      ASSIGN_OR_RETURN(ir::Type type, table.ReadType(reader));
      ASSIGN_OR_RETURN(ElementType element,
                       ScalarElementType(reader, type, "float attribute"));
      ASSIGN_OR_RETURN(double value, ReadKnownFloat(reader, element));
      return ir::Attribute::Float(value, std::move(type));
    }
    case kIntegerV1: {
      ASSIGN_OR_RETURN(ir::Type type, table.ReadType(reader));
      ASSIGN_OR_RETURN(ElementType element,
                       ScalarElementType(reader, type, "integer attribute"));
      if (!ir::IsInteger(element)) {
        return reader.Error("integer attribute of type ", type.ToString());
      }
      ASSIGN_OR_RETURN(int64_t value,
                       ReadKnownWidthInt(reader, ir::BitWidth(element),
                                         ir::IsSignedInteger(element)));
      return ir::Attribute::Integer(value, std::move(type));
    }
    case kOutputOperandAliasV1: {
      ir::OutputOperandAlias alias;
      ASSIGN_OR_RETURN(alias.output_tuple_indices,
                       ReadSignedVarInts(reader, "output tuple indices"));
      ASSIGN_OR_RETURN(alias.operand_index, reader.ReadSignedVarInt());
      ASSIGN_OR_RETURN(alias.operand_tuple_indices,
                       ReadSignedVarInts(reader, "operand tuple indices"));
      return ir::Attribute::OutputOperandAliasAttr(std::move(alias));
    }
    case kPrecisionV1:
      return ReadEnumAttribute(reader, ir::EnumKind::kPrecision);
    case kRngAlgorithmV1:
      return ReadEnumAttribute(reader, ir::EnumKind::kRngAlgorithm);
    case kRngDistributionV1:
      return ReadEnumAttribute(reader, ir::EnumKind::kRngDistribution);
    case kStringV1: {
      ASSIGN_OR_RETURN(std::string_view text, table.ReadString(reader));
      return ir::Attribute::String(std::string(text));
    }
    case kTensorV1: {
      ASSIGN_OR_RETURN(ir::Type type, table.ReadType(reader));
      ASSIGN_OR_RETURN(std::string_view blob, reader.ReadBlob());
      bool splat = false;
      ASSIGN_OR_RETURN(std::string data,
                       DenseTensorData(reader, type, blob, splat));
      return ir::Attribute::DenseElements(std::move(type), std::move(data),
                                          splat);
    }
    case kTransposeV1:
      return ReadEnumAttribute(reader, ir::EnumKind::kTranspose);
    case kTypeV1: {
      ASSIGN_OR_RETURN(ir::Type type, table.ReadType(reader));
      return ir::Attribute::TypeAttr(std::move(type));
    }
    case kTypeExtensionsV1: {
      ASSIGN_OR_RETURN(std::vector<int64_t> bounds,
                       ReadSignedVarInts(reader, "bounds"));
      return ir::Attribute::Bounds(std::move(bounds));
    }
    case kResultAccuracyModeV1:
      return ReadEnumAttribute(reader, ir::EnumKind::kResultAccuracyMode);
    case kResultAccuracyV1: {
      ir::ResultAccuracy accuracy;
      ASSIGN_OR_RETURN(accuracy.atol,
                       ReadKnownFloat(reader, ElementType::kF64));
      ASSIGN_OR_RETURN(accuracy.rtol,
                       ReadKnownFloat(reader, ElementType::kF64));
      ASSIGN_OR_RETURN(accuracy.ulps, reader.ReadSignedVarInt());
      ASSIGN_OR_RETURN(ir::Attribute mode, table.ReadAttribute(reader));
      if (!mode.is(ir::AttrKind::kEnum) ||
          mode.enum_kind() != ir::EnumKind::kResultAccuracyMode) {
        return reader.Error(
            "result accuracy mode must be a result_accuracy_mode, got ",
            mode.ToString());
      }
      accuracy.mode = mode.enum_value();
      return ir::Attribute::ResultAccuracyAttr(accuracy);
    }
    case kSubAxisInfoV1: {
      ASSIGN_OR_RETURN(int64_t pre_size, reader.ReadSignedVarInt());
      ASSIGN_OR_RETURN(int64_t size, reader.ReadSignedVarInt());
      ir::Type i64 = ir::Type::Element(ElementType::kI64);
      return ir::Attribute::DialectStruct(
          "stablehlo.sub_axis_info",
          {{"pre_size", ir::Attribute::Integer(pre_size, i64)},
           {"size", ir::Attribute::Integer(size, i64)}});
    }
    case kAxisRefV1: {
      ASSIGN_OR_RETURN(ir::Attribute name, table.ReadAttribute(reader));
      ASSIGN_OR_RETURN(uint64_t has_sub_axis, reader.ReadVarInt());
      std::vector<ir::NamedAttribute> fields = {{"name", name}};
      if (has_sub_axis) {
        ASSIGN_OR_RETURN(ir::Attribute sub_axis, table.ReadAttribute(reader));
        fields.emplace_back("sub_axis_info", sub_axis);
      }
      return ir::Attribute::DialectStruct("stablehlo.axis_ref",
                                          std::move(fields));
    }
    case kReplicaGroupMeshAxesV1: {
      ASSIGN_OR_RETURN(ir::Attribute mesh, table.ReadAttribute(reader));
      ASSIGN_OR_RETURN(ir::Attribute axes, table.ReadAttribute(reader));
      if (!mesh.is(ir::AttrKind::kString)) {
        return reader.Error("mesh name must be a string, got ",
                            mesh.ToString());
      }
      return table.AttributeFromText(
          StrCat("#stablehlo.replica_group_mesh_axes<mesh = ",
                 ir::Attribute::SymbolRef(mesh.string_value()).ToString(),
                 ", axes = ", MeshAttributeText(axes), ">"));
    }
    case kMeshAxisV1: {
      ASSIGN_OR_RETURN(ir::Attribute name, table.ReadAttribute(reader));
      ASSIGN_OR_RETURN(int64_t size, reader.ReadSignedVarInt());
      return ir::Attribute::DialectStruct(
          "stablehlo.mesh_axis",
          {{"name", name},
           {"size", ir::Attribute::Integer(
                        size, ir::Type::Element(ElementType::kI64))}});
    }
    case kMeshV1: {
      ASSIGN_OR_RETURN(ir::Attribute axes, table.ReadAttribute(reader));
      uint64_t device_ids_index;
      bool present;
      RETURN_IF_ERROR(reader.ReadVarIntWithFlag(device_ids_index, present));
      ir::Attribute device_ids;
      if (present) {
        ASSIGN_OR_RETURN(device_ids, table.Attribute(device_ids_index));
      }
      return table.AttributeFromText(MeshText(axes, device_ids));
    }
    default:
      return reader.Error("unknown VHLO attribute code ", code,
                          " (Kiln reads VHLO up to 1.20.0)");
  }
}

StatusOr<ir::Type> DecodeVhloType(AttrTypeTable& table, ByteReader& reader) {
  ASSIGN_OR_RETURN(uint64_t code, reader.ReadVarInt());
  for (const VhloScalarType& entry : kVhloScalarTypes) {
    if (entry.code == code) return ir::Type::Element(entry.type);
  }
  switch (code) {
    case kComplexV1: {
      ASSIGN_OR_RETURN(ir::Type component, table.ReadType(reader));
      if (component == ir::Type::Element(ElementType::kF32)) {
        return ir::Type::Element(ElementType::kC64);
      }
      if (component == ir::Type::Element(ElementType::kF64)) {
        return ir::Type::Element(ElementType::kC128);
      }
      return reader.Error("complex of ", component.ToString(),
                          " is not supported");
    }
    case kFunctionV1: {
      ASSIGN_OR_RETURN(std::vector<ir::Type> inputs,
                       ReadTypeList(table, reader));
      ASSIGN_OR_RETURN(std::vector<ir::Type> outputs,
                       ReadTypeList(table, reader));
      return ir::Type::Function(std::move(inputs), std::move(outputs));
    }
    case kRankedTensorV1:
      return ReadTensor(table, reader, /*has_encoding=*/false);
    case kRankedTensorWithEncodingV1:
      return ReadTensor(table, reader, /*has_encoding=*/true);
    case kTokenV1:
      return ir::Type::Token();
    case kTupleV1: {
      ASSIGN_OR_RETURN(std::vector<ir::Type> elements,
                       ReadTypeList(table, reader));
      return ir::Type::Tuple(std::move(elements));
    }
    case kUniformQuantizedV1:
      return ReadUniformQuantizedType(table, reader);
    case kUniformQuantizedPerAxisV1:
      return ReadUniformQuantizedPerAxisType(table, reader);
    case kUnrankedTensorV1:
      return reader.Error("unranked tensors are not supported");
    case kWitnessV1:
      return ir::Type::Opaque("shape.witness");
    case kNoneV1:
      return ir::Type::None();
    case kRankedBufferV1: {
      ASSIGN_OR_RETURN(std::vector<int64_t> shape, ReadShape(reader));
      ASSIGN_OR_RETURN(ir::Type element, table.ReadType(reader));
      return ir::Type::MemRef(std::move(shape), std::move(element));
    }
    case kFutureV1: {
      ASSIGN_OR_RETURN(std::vector<ir::Type> elements,
                       ReadTypeList(table, reader));
      return ir::Type::Future(std::move(elements));
    }
    default:
      return reader.Error("unknown VHLO type code ", code,
                          " (Kiln reads VHLO up to 1.20.0)");
  }
}

}  // namespace kiln::parse::bytecode
