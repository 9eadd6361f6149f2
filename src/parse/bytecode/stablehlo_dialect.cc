// The bytecode encodings of the stablehlo dialect itself
// (stablehlo/dialect/StablehloBytecode.cpp) and of CHLO (ChloBytecode.cpp),
// found in plain MLIR bytecode of a StableHLO module (not a portable
// artifact, whose attributes are VHLO's). Each entry is a varint code, then
// the fields; the values are the ones the text parser builds from the same
// attribute's text.

#include "parse/bytecode/attr_type_table.h"

namespace kiln::parse::bytecode {
namespace {

using ir::ElementType;

enum StablehloAttrCode : uint64_t {
  // 0 was ArgResultAliasAttr, long gone.
  kChannelHandle = 1,
  kComparisonDirection = 2,
  kComparisonType = 3,
  kConvDimensionNumbers = 4,
  kDotDimensionNumbers = 5,
  kFftType = 6,
  kGatherDimensionNumbers = 7,
  kPrecision = 8,
  kRngAlgorithm = 9,
  kRngDistribution = 10,
  kScatterDimensionNumbers = 11,
  kTranspose = 12,
  kTypeExtensions = 13,
  kOutputOperandAlias = 14,
  kDotAlgorithm = 15,
  kResultAccuracyMode = 16,
  kResultAccuracy = 17,
  kReplicaGroupMeshAxes = 18,
  kSubAxisInfo = 19,
  kAxisRef = 20,
  kMeshAxis = 21,
  kMesh = 22,
};

enum StablehloTypeCode : uint64_t {
  kToken = 0,
  kFuture = 1,
};

// The attributes that are one enum value.
struct EnumCode {
  uint64_t code;
  ir::EnumKind kind;
};
constexpr EnumCode kStablehloEnums[] = {
    {kComparisonDirection, ir::EnumKind::kComparisonDirection},
    {kComparisonType, ir::EnumKind::kComparisonType},
    {kFftType, ir::EnumKind::kFftType},
    {kPrecision, ir::EnumKind::kPrecision},
    {kRngAlgorithm, ir::EnumKind::kRngAlgorithm},
    {kRngDistribution, ir::EnumKind::kRngDistribution},
    {kTranspose, ir::EnumKind::kTranspose},
    {kResultAccuracyMode, ir::EnumKind::kResultAccuracyMode},
};
// CHLO's attributes (codes 0 and 1) are StableHLO's first two enums.
constexpr EnumCode kChloEnums[] = {
    {0, ir::EnumKind::kComparisonDirection},
    {1, ir::EnumKind::kComparisonType},
};

const EnumCode* FindEnum(const EnumCode* begin, const EnumCode* end,
                         uint64_t code) {
  for (const EnumCode* entry = begin; entry != end; ++entry) {
    if (entry->code == code) return entry;
  }
  return nullptr;
}

StatusOr<bool> ReadBool(ByteReader& reader) {
  // writeOwnedBool: one raw byte.
  ASSIGN_OR_RETURN(uint8_t byte, reader.ReadByte());
  if (byte > 1) return reader.Error("invalid boolean byte ", int{byte});
  return byte == 1;
}

StatusOr<ir::Attribute> ReadConv(ByteReader& reader) {
  ir::ConvDimensionNumbers dims;
  ASSIGN_OR_RETURN(dims.input_batch_dimension, reader.ReadSignedVarInt());
  ASSIGN_OR_RETURN(dims.input_feature_dimension, reader.ReadSignedVarInt());
  ASSIGN_OR_RETURN(dims.input_spatial_dimensions,
                   ReadSignedVarInts(reader, "dimensions"));
  ASSIGN_OR_RETURN(dims.kernel_input_feature_dimension,
                   reader.ReadSignedVarInt());
  ASSIGN_OR_RETURN(dims.kernel_output_feature_dimension,
                   reader.ReadSignedVarInt());
  ASSIGN_OR_RETURN(dims.kernel_spatial_dimensions,
                   ReadSignedVarInts(reader, "dimensions"));
  ASSIGN_OR_RETURN(dims.output_batch_dimension, reader.ReadSignedVarInt());
  ASSIGN_OR_RETURN(dims.output_feature_dimension, reader.ReadSignedVarInt());
  ASSIGN_OR_RETURN(dims.output_spatial_dimensions,
                   ReadSignedVarInts(reader, "dimensions"));
  return ir::Attribute::Conv(std::move(dims));
}

StatusOr<ir::Attribute> ReadDot(ByteReader& reader) {
  ir::DotDimensionNumbers dims;
  ASSIGN_OR_RETURN(dims.lhs_batching_dimensions,
                   ReadSignedVarInts(reader, "dimensions"));
  ASSIGN_OR_RETURN(dims.rhs_batching_dimensions,
                   ReadSignedVarInts(reader, "dimensions"));
  ASSIGN_OR_RETURN(dims.lhs_contracting_dimensions,
                   ReadSignedVarInts(reader, "dimensions"));
  ASSIGN_OR_RETURN(dims.rhs_contracting_dimensions,
                   ReadSignedVarInts(reader, "dimensions"));
  return ir::Attribute::Dot(std::move(dims));
}

// The fields of gather or scatter dimension numbers: five lists, of which
// the third and fourth are the batching dimensions (from StableHLO 1.1;
// absent unless `batching`), then the index vector dimension.
Status ReadGatherLikeFields(ByteReader& reader, bool batching,
                            std::vector<int64_t>* lists[5],
                            int64_t& index_vector_dim) {
  for (int i = 0; i < 5; ++i) {
    bool is_batching = i == 2 || i == 3;
    if (is_batching && !batching) continue;
    ASSIGN_OR_RETURN(*lists[i], ReadSignedVarInts(reader, "dimensions"));
  }
  ASSIGN_OR_RETURN(index_vector_dim, reader.ReadSignedVarInt());
  return OkStatus();
}

// Reads gather or scatter dimension numbers, in the current layout or, when
// that does not fit the entry, the one from before batching dimensions:
// dialect versions are optional, and JAX writes none.
Status ReadGatherLike(ByteReader& reader, std::vector<int64_t>* lists[5],
                      int64_t& index_vector_dim, std::string_view what) {
  ByteReader old_layout = reader;
  Status current = ReadGatherLikeFields(reader, true, lists, index_vector_dim);
  if (current.ok() && reader.empty()) return OkStatus();
  for (int i = 0; i < 5; ++i) lists[i]->clear();
  if (ReadGatherLikeFields(old_layout, false, lists, index_vector_dim).ok() &&
      old_layout.empty()) {
    reader = old_layout;
    return OkStatus();
  }
  return reader.Error(
      what,
      " fit neither the layout with batching dimensions nor the one "
      "before (",
      current.ok() ? StrCat(reader.remaining(), " bytes left over")
                   : std::string(current.message()),
      ")");
}

StatusOr<ir::Attribute> ReadGather(ByteReader& reader) {
  ir::GatherDimensionNumbers dims;
  std::vector<int64_t>* lists[5] = {
      &dims.offset_dims, &dims.collapsed_slice_dims,
      &dims.operand_batching_dims, &dims.start_indices_batching_dims,
      &dims.start_index_map};
  RETURN_IF_ERROR(ReadGatherLike(reader, lists, dims.index_vector_dim,
                                 "gather dimension numbers"));
  return ir::Attribute::Gather(std::move(dims));
}

StatusOr<ir::Attribute> ReadScatter(ByteReader& reader) {
  ir::ScatterDimensionNumbers dims;
  std::vector<int64_t>* lists[5] = {
      &dims.update_window_dims, &dims.inserted_window_dims,
      &dims.input_batching_dims, &dims.scatter_indices_batching_dims,
      &dims.scatter_dims_to_operand_dims};
  RETURN_IF_ERROR(ReadGatherLike(reader, lists, dims.index_vector_dim,
                                 "scatter dimension numbers"));
  return ir::Attribute::Scatter(std::move(dims));
}

StatusOr<ir::Attribute> ReadDotAlgorithm(AttrTypeTable& table,
                                         ByteReader& reader) {
  ir::DotAlgorithm algorithm;
  ASSIGN_OR_RETURN(algorithm.lhs_precision_type, table.ReadType(reader));
  ASSIGN_OR_RETURN(algorithm.rhs_precision_type, table.ReadType(reader));
  ASSIGN_OR_RETURN(algorithm.accumulation_type, table.ReadType(reader));
  ASSIGN_OR_RETURN(algorithm.lhs_component_count, reader.ReadSignedVarInt());
  ASSIGN_OR_RETURN(algorithm.rhs_component_count, reader.ReadSignedVarInt());
  ASSIGN_OR_RETURN(algorithm.num_primitive_operations,
                   reader.ReadSignedVarInt());
  ASSIGN_OR_RETURN(algorithm.allow_imprecise_accumulation, ReadBool(reader));
  return ir::Attribute::DotAlgorithmAttr(std::move(algorithm));
}

StatusOr<ir::Attribute> ReadResultAccuracy(AttrTypeTable& table,
                                           ByteReader& reader) {
  ir::ResultAccuracy accuracy;
  ASSIGN_OR_RETURN(accuracy.atol, ReadKnownFloat(reader, ElementType::kF64));
  ASSIGN_OR_RETURN(accuracy.rtol, ReadKnownFloat(reader, ElementType::kF64));
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

ir::Attribute I64(int64_t value) {
  return ir::Attribute::Integer(value, ir::Type::Element(ElementType::kI64));
}

// The mesh attributes (replica groups by mesh axes): their parts are
// decoded as structs, which MeshAttributeText prints; the top-level ones
// become their text, which goes through the attribute grammar.
StatusOr<ir::Attribute> ReadMeshAttribute(AttrTypeTable& table,
                                          ByteReader& reader, uint64_t code) {
  switch (code) {
    case kSubAxisInfo: {
      ASSIGN_OR_RETURN(int64_t pre_size, reader.ReadSignedVarInt());
      ASSIGN_OR_RETURN(int64_t size, reader.ReadSignedVarInt());
      return ir::Attribute::DialectStruct(
          "stablehlo.sub_axis_info",
          {{"pre_size", I64(pre_size)}, {"size", I64(size)}});
    }
    case kAxisRef: {
      ASSIGN_OR_RETURN(std::string_view name, table.ReadString(reader));
      std::vector<ir::NamedAttribute> fields = {
          {"name", ir::Attribute::String(std::string(name))}};
      ASSIGN_OR_RETURN(bool has_sub_axis, ReadBool(reader));
      if (has_sub_axis) {
        ASSIGN_OR_RETURN(ir::Attribute sub_axis, table.ReadAttribute(reader));
        fields.emplace_back("sub_axis_info", std::move(sub_axis));
      }
      return ir::Attribute::DialectStruct("stablehlo.axis_ref",
                                          std::move(fields));
    }
    case kMeshAxis: {
      ASSIGN_OR_RETURN(std::string_view name, table.ReadString(reader));
      ASSIGN_OR_RETURN(int64_t size, reader.ReadSignedVarInt());
      return ir::Attribute::DialectStruct(
          "stablehlo.mesh_axis",
          {{"name", ir::Attribute::String(std::string(name))},
           {"size", I64(size)}});
    }
    case kMesh: {
      ASSIGN_OR_RETURN(ir::Attribute axes, table.ReadAttribute(reader));
      ASSIGN_OR_RETURN(bool has_device_ids, ReadBool(reader));
      ir::Attribute device_ids;
      if (has_device_ids) {
        ASSIGN_OR_RETURN(device_ids, table.ReadAttribute(reader));
      }
      return table.AttributeFromText(MeshText(axes, device_ids));
    }
    default: {  // kReplicaGroupMeshAxes
      ASSIGN_OR_RETURN(ir::Attribute mesh, table.ReadAttribute(reader));
      ASSIGN_OR_RETURN(uint64_t count, reader.ReadCount("axes"));
      std::vector<ir::Attribute> axes;
      for (uint64_t i = 0; i < count; ++i) {
        ASSIGN_OR_RETURN(ir::Attribute axis, table.ReadAttribute(reader));
        axes.push_back(std::move(axis));
      }
      return table.AttributeFromText(StrCat(
          "#stablehlo.replica_group_mesh_axes<mesh = ", MeshAttributeText(mesh),
          ", axes = ", MeshAttributeText(ir::Attribute::Array(std::move(axes))),
          ">"));
    }
  }
}

}  // namespace

namespace {

// `key = value, ...` of a mesh struct, as StableHLO prints its fields.
std::string StructFieldsText(const ir::Attribute& attr) {
  std::string out;
  for (const auto& [key, value] : attr.struct_fields()) {
    if (!out.empty()) out += ", ";
    if (value.is(ir::AttrKind::kDialectStruct) &&
        value.struct_name() == "stablehlo.sub_axis_info") {
      // `sub_axis_info = (pre_size)size`.
      const auto& fields = value.struct_fields();
      StrAppend(out, key, " = (", fields[0].second.int_value(), ")",
                fields[1].second.int_value());
    } else if (value.is(ir::AttrKind::kInteger)) {
      StrAppend(out, key, " = ", value.int_value());
    } else {
      StrAppend(out, key, " = ", MeshAttributeText(value));
    }
  }
  return out;
}

}  // namespace

std::string MeshAttributeText(const ir::Attribute& attr) {
  if (attr.is(ir::AttrKind::kArray)) {
    return StrCat("[",
                  StrJoin(attr.array(), ", ",
                          [](std::string& out, const ir::Attribute& a) {
                            out += MeshAttributeText(a);
                          }),
                  "]");
  }
  if (!attr.is(ir::AttrKind::kDialectStruct)) return attr.ToString();
  return StrCat("#", attr.struct_name(), "<", StructFieldsText(attr), ">");
}

std::string MeshText(const ir::Attribute& axes,
                     const ir::Attribute& device_ids) {
  // StableHLO prints `axes=[<name = "x", size = 2>], device_ids=...`: the
  // axes without their attribute name, `=` without spaces.
  std::string text = "#stablehlo.mesh<axes=[";
  if (axes.is(ir::AttrKind::kArray)) {
    for (size_t i = 0; i < axes.array().size(); ++i) {
      const ir::Attribute& axis = axes.array()[i];
      if (i > 0) text += ", ";
      text += axis.is(ir::AttrKind::kDialectStruct)
                  ? StrCat("<", StructFieldsText(axis), ">")
                  : axis.ToString();
    }
  }
  text += "]";
  if (device_ids) StrAppend(text, ", device_ids=", device_ids.ToString());
  return text + ">";
}

StatusOr<ir::Attribute> DecodeStablehloAttribute(AttrTypeTable& table,
                                                 ByteReader& reader) {
  ASSIGN_OR_RETURN(uint64_t code, reader.ReadVarInt());
  if (const EnumCode* entry = FindEnum(std::begin(kStablehloEnums),
                                       std::end(kStablehloEnums), code)) {
    return ReadEnumAttribute(reader, entry->kind);
  }
  switch (code) {
    case kChannelHandle: {
      ir::ChannelHandle channel;
      ASSIGN_OR_RETURN(channel.handle, reader.ReadSignedVarInt());
      ASSIGN_OR_RETURN(channel.type, reader.ReadSignedVarInt());
      return ir::Attribute::Channel(channel);
    }
    case kConvDimensionNumbers:
      return ReadConv(reader);
    case kDotDimensionNumbers:
      return ReadDot(reader);
    case kGatherDimensionNumbers:
      return ReadGather(reader);
    case kScatterDimensionNumbers:
      return ReadScatter(reader);
    case kTypeExtensions: {
      ASSIGN_OR_RETURN(std::vector<int64_t> bounds,
                       ReadSignedVarInts(reader, "bounds"));
      return ir::Attribute::Bounds(std::move(bounds));
    }
    case kOutputOperandAlias: {
      ir::OutputOperandAlias alias;
      ASSIGN_OR_RETURN(alias.output_tuple_indices,
                       ReadSignedVarInts(reader, "output tuple indices"));
      ASSIGN_OR_RETURN(alias.operand_index, reader.ReadSignedVarInt());
      ASSIGN_OR_RETURN(alias.operand_tuple_indices,
                       ReadSignedVarInts(reader, "operand tuple indices"));
      return ir::Attribute::OutputOperandAliasAttr(std::move(alias));
    }
    case kDotAlgorithm:
      return ReadDotAlgorithm(table, reader);
    case kResultAccuracy:
      return ReadResultAccuracy(table, reader);
    case kReplicaGroupMeshAxes:
    case kSubAxisInfo:
    case kAxisRef:
    case kMeshAxis:
    case kMesh:
      return ReadMeshAttribute(table, reader, code);
    default:
      return reader.Error("unknown stablehlo attribute code ", code,
                          " (Kiln reads codes 1 to 22)");
  }
}

StatusOr<ir::Type> DecodeStablehloType(AttrTypeTable& table,
                                       ByteReader& reader) {
  ASSIGN_OR_RETURN(uint64_t code, reader.ReadVarInt());
  switch (code) {
    case kToken:
      return ir::Type::Token();
    case kFuture: {
      ASSIGN_OR_RETURN(std::vector<ir::Type> elements,
                       ReadTypeList(table, reader));
      return ir::Type::Future(std::move(elements));
    }
    default:
      return reader.Error("unknown stablehlo type code ", code,
                          " (Kiln reads codes 0 and 1)");
  }
}

StatusOr<ir::Attribute> DecodeChloAttribute(AttrTypeTable& table,
                                            ByteReader& reader) {
  ASSIGN_OR_RETURN(uint64_t code, reader.ReadVarInt());
  const EnumCode* entry =
      FindEnum(std::begin(kChloEnums), std::end(kChloEnums), code);
  if (entry == nullptr) {
    return reader.Error("unknown chlo attribute code ", code,
                        " (Kiln reads codes 0 and 1)");
  }
  ASSIGN_OR_RETURN(ir::Attribute value, ReadEnumAttribute(reader, entry->kind));
  // The text parser keeps `#chlo<comparison_direction LT>` as its text.
  return ir::Attribute::Opaque(
      StrCat("chlo<", ir::EnumKindName(entry->kind), " ",
             ir::EnumValueName(entry->kind, value.enum_value()), ">"));
}

}  // namespace kiln::parse::bytecode
