// Quantized element types. The quant dialect (plain bytecode;
// mlir/include/mlir/Dialect/Quant/IR/QuantDialectBytecode.td) and VHLO
// (VhloBytecode.cpp) lay out the two uniform kinds alike: flags, storage
// type, expressed type, then the per-tensor or per-axis parameters.

#include "parse/bytecode/attr_type_table.h"

namespace kiln::parse::bytecode {
namespace {

using ir::ElementType;

// The quant dialect's type codes (QuantDialectTypes' list).
enum QuantTypeCode : uint64_t {
  kAnyQuantized = 1,
  kAnyQuantizedWithExpressedType = 2,
  kCalibratedQuantized = 3,
  kUniformQuantized = 4,
  kUniformQuantizedPerAxis = 5,
  kUniformQuantizedSubChannel = 6,
};

// The integer range of a quantized storage type.
void StorageRange(ElementType storage, int64_t& min, int64_t& max) {
  int bits = ir::BitWidth(storage);
  if (ir::IsUnsignedInteger(storage)) {
    min = 0;
    max = bits >= 64 ? INT64_MAX
                     : static_cast<int64_t>((uint64_t{1} << bits) - 1);
  } else {
    min = bits >= 64 ? INT64_MIN : -(int64_t{1} << (bits - 1));
    max = bits >= 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
  }
}

// Storage type, expressed type and flags shared by both quantized types.
Status ReadQuantizedCommon(AttrTypeTable& table, ByteReader& reader,
                           ir::QuantizedType& quantized) {
  ASSIGN_OR_RETURN(uint64_t flags, reader.ReadVarInt());
  ASSIGN_OR_RETURN(ir::Type storage, table.ReadType(reader));
  ASSIGN_OR_RETURN(ir::Type expressed, table.ReadType(reader));
  ASSIGN_OR_RETURN(
      ElementType storage_element,
      ScalarElementType(reader, storage, "quantized storage type"));
  ASSIGN_OR_RETURN(
      ElementType expressed_element,
      ScalarElementType(reader, expressed, "quantized expressed type"));
  if (!ir::IsInteger(storage_element) ||
      storage_element == ElementType::kIndex) {
    return reader.Error("quantized storage type must be an integer, got ",
                        storage.ToString());
  }
  if (!ir::IsFloat(expressed_element)) {
    return reader.Error("quantized expressed type must be a float, got ",
                        expressed.ToString());
  }
  // The signedness is in the flags (bit 0: signed), not in the type.
  std::string name =
      StrCat((flags & 1) ? "i" : "ui", ir::BitWidth(storage_element));
  std::optional<ElementType> element = ir::ParseElementTypeName(name);
  if (!element) {
    return reader.Error("unsupported quantized storage type ", name);
  }
  quantized.storage_type = *element;
  quantized.expressed_type = expressed_element;
  return OkStatus();
}

void SetStorageRange(ir::QuantizedType& quantized, int64_t min, int64_t max) {
  int64_t full_min, full_max;
  StorageRange(quantized.storage_type, full_min, full_max);
  quantized.storage_min = min;
  quantized.storage_max = max;
  quantized.explicit_storage_range = min != full_min || max != full_max;
}

}  // namespace

StatusOr<ir::Type> ReadUniformQuantizedType(AttrTypeTable& table,
                                            ByteReader& reader) {
  ir::QuantizedType quantized;
  RETURN_IF_ERROR(ReadQuantizedCommon(table, reader, quantized));
  ASSIGN_OR_RETURN(double scale, ReadKnownFloat(reader, ElementType::kF64));
  ASSIGN_OR_RETURN(int64_t zero_point, reader.ReadSignedVarInt());
  ASSIGN_OR_RETURN(int64_t min, reader.ReadSignedVarInt());
  ASSIGN_OR_RETURN(int64_t max, reader.ReadSignedVarInt());
  quantized.scales = {scale};
  quantized.zero_points = {zero_point};
  SetStorageRange(quantized, min, max);
  return ir::Type::Quantized(std::move(quantized));
}

StatusOr<ir::Type> ReadUniformQuantizedPerAxisType(AttrTypeTable& table,
                                                   ByteReader& reader) {
  ir::QuantizedType quantized;
  RETURN_IF_ERROR(ReadQuantizedCommon(table, reader, quantized));
  ASSIGN_OR_RETURN(uint64_t axis, reader.ReadVarInt());
  if (axis > INT32_MAX) {
    return reader.Error("quantized dimension ", axis, " too large");
  }
  quantized.axis = static_cast<int32_t>(axis);
  ASSIGN_OR_RETURN(int64_t min, reader.ReadSignedVarInt());
  ASSIGN_OR_RETURN(int64_t max, reader.ReadSignedVarInt());
  SetStorageRange(quantized, min, max);
  ASSIGN_OR_RETURN(uint64_t num_scales, reader.ReadCount("scales"));
  for (uint64_t i = 0; i < num_scales; ++i) {
    ASSIGN_OR_RETURN(double scale, ReadKnownFloat(reader, ElementType::kF64));
    quantized.scales.push_back(scale);
  }
  ASSIGN_OR_RETURN(quantized.zero_points,
                   ReadSignedVarInts(reader, "zero points"));
  if (quantized.zero_points.size() != quantized.scales.size()) {
    return reader.Error("per-axis quantization with ", quantized.scales.size(),
                        " scales and ", quantized.zero_points.size(),
                        " zero points");
  }
  return ir::Type::Quantized(std::move(quantized));
}

StatusOr<ir::Type> DecodeQuantType(AttrTypeTable& table, ByteReader& reader) {
  ASSIGN_OR_RETURN(uint64_t code, reader.ReadVarInt());
  switch (code) {
    case kUniformQuantized:
      return ReadUniformQuantizedType(table, reader);
    case kUniformQuantizedPerAxis:
      return ReadUniformQuantizedPerAxisType(table, reader);
    case kAnyQuantized:
    case kAnyQuantizedWithExpressedType:
    case kCalibratedQuantized:
    case kUniformQuantizedSubChannel:
      return reader.Error("quant type code ", code,
                          " is not supported (Kiln reads !quant.uniform, "
                          "per tensor and per axis)");
    default:
      return reader.Error("unknown quant type code ", code);
  }
}

}  // namespace kiln::parse::bytecode
