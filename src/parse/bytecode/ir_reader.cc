#include "parse/bytecode/ir_reader.h"

#include "ir/attr_defaults.h"
#include "parse/bytecode/vhlo_ops.h"

namespace kiln::parse::bytecode {
namespace {

// Regions nest (functions, loops, branches); real programs stay far below.
constexpr int kMaxRegionNesting = 128;

// Bits of an op's encoding mask (mlir/Bytecode/Encoding.h).
enum OpMask : uint8_t {
  kHasAttrs = 0x01,
  kHasResults = 0x02,
  kHasOperands = 0x04,
  kHasSuccessors = 0x08,
  kHasRegions = 0x10,
  kHasUseListOrders = 0x20,
  kHasProperties = 0x40,
};

// The smallest encoding of an op: name, mask and location.
constexpr uint64_t kMinOpBytes = 3;

// A sparse array of `size` integers (DialectBytecodeWriter's
// writeSparseArray): `(count << 1) | sparse`, then either `count` values
// (the rest are zero) or the bits of an index and `count` values packed as
// `(value << bits) | index`.
StatusOr<std::vector<int64_t>> ReadSparseArray(ByteReader& reader,
                                               uint64_t size) {
  uint64_t count;
  bool sparse;
  RETURN_IF_ERROR(reader.ReadVarIntWithFlag(count, sparse));
  std::vector<int64_t> values(size, 0);
  if (count > size) {
    return reader.Error("sparse array of ", count, " values for ", size,
                        " segments");
  }
  uint64_t index_bits = 0;
  if (sparse && count > 0) {
    ASSIGN_OR_RETURN(index_bits, reader.ReadVarInt());
    if (index_bits > 8) {
      return reader.Error("sparse array indices of ", index_bits, " bits");
    }
  }
  for (uint64_t i = 0; i < count; ++i) {
    ASSIGN_OR_RETURN(uint64_t word, reader.ReadVarInt());
    uint64_t index = sparse ? word & ((uint64_t{1} << index_bits) - 1) : i;
    uint64_t value = sparse ? word >> index_bits : word;
    if (index >= size) {
      return reader.Error("sparse array index ", index, " for ", size,
                          " segments");
    }
    if (value > INT32_MAX) {
      return reader.Error("segment size ", value, " does not fit in i32");
    }
    values[index] = static_cast<int64_t>(value);
  }
  return values;
}

}  // namespace

IrReader::IrReader(const Container& file, AttrTypeTable& table)
    : file_(file), table_(table) {
  op_names_.reserve(file.op_names.size());
  for (const OpNameEntry& entry : file.op_names) {
    OpNameInfo info;
    info.entry = &entry;
    std::string_view dialect = file.dialects[entry.dialect];
    // An empty name is an old spelling of a dialect-less op name.
    info.full_name = entry.name.empty() ? std::string(dialect)
                                        : StrCat(dialect, ".", entry.name);
    info.is_vhlo = dialect == "vhlo";
    if (info.is_vhlo) info.vhlo = LookupVhloOp(entry.name);
    if (!info.is_vhlo) info.ods = LookupOdsOp(info.full_name);
    op_names_.push_back(std::move(info));
  }
}

StatusOr<std::unique_ptr<ir::Operation>> IrReader::ReadModuleOp() {
  ByteReader reader(file_.ir.data, file_.ir.offset, "IR section");
  ir::Block top;
  uint64_t num_ops = 0;
  scopes_.emplace_back();
  scopes_.back().next_ids.push_back(0);
  RETURN_IF_ERROR(ReadBlockHeader(reader, top, num_ops));
  RETURN_IF_ERROR(ReadOps(reader, top, num_ops, RegionState{{&top}, 0}, 0));
  if (!reader.empty()) {
    return reader.Error(reader.remaining(),
                        " unexpected bytes after the top-level ops");
  }
  if (!forward_uses_.empty()) {
    return InvalidArgumentError(
        "IR section: ", forward_uses_.size(),
        " operand(s) refer to values that are never defined");
  }
  if (top.operations().size() == 1 &&
      top.operations()[0]->is(ir::OpCode::kModule)) {
    std::unique_ptr<ir::Operation> module = top.Remove(0);
    if (module->num_regions() != 1 || module->region(0).num_blocks() != 1) {
      return InvalidArgumentError(
          "IR section: builtin.module must have one region "
          "with one block, got ",
          module->num_regions(), " region(s)");
    }
    return module;
  }
  // Like MLIR, wrap top-level ops that are not a single module.
  auto module = std::make_unique<ir::Operation>("builtin.module",
                                                std::vector<ir::Type>{});
  module->AddRegion().AddBlock().SetOperations(top.TakeOperations());
  return module;
}

Status IrReader::ReadBlockHeader(ByteReader& reader, ir::Block& block,
                                 uint64_t& num_ops) {
  bool has_args;
  RETURN_IF_ERROR(reader.ReadVarIntWithFlag(num_ops, has_args));
  if (num_ops > reader.remaining() / kMinOpBytes) {
    return reader.Error("block claims ", num_ops, " ops but only ",
                        reader.remaining(), " bytes remain");
  }
  if (!has_args) return OkStatus();
  ASSIGN_OR_RETURN(uint64_t num_args, reader.ReadCount("block arguments"));
  std::vector<ir::Value*> args;
  args.reserve(num_args);
  for (uint64_t i = 0; i < num_args; ++i) {
    ir::Type type;
    ir::Location loc;
    if (file_.version >= kVersionElideUnknownBlockArgLocation) {
      uint64_t type_index;
      bool has_loc;
      RETURN_IF_ERROR(reader.ReadVarIntWithFlag(type_index, has_loc));
      StatusOr<ir::Type> resolved = table_.Type(type_index);
      if (!resolved.ok()) return resolved.status().WithContext(reader.what());
      type = std::move(resolved).value();
      if (has_loc) {
        ASSIGN_OR_RETURN(loc, table_.ReadLocation(reader));
      }
    } else {
      ASSIGN_OR_RETURN(type, table_.ReadType(reader));
      ASSIGN_OR_RETURN(loc, table_.ReadLocation(reader));
    }
    args.push_back(block.AddArgument(std::move(type), std::move(loc)));
  }
  RETURN_IF_ERROR(DefineValues(reader, args));
  if (file_.version >= kVersionUseListOrdering) {
    ASSIGN_OR_RETURN(uint8_t has_orders, reader.ReadByte());
    if (has_orders) RETURN_IF_ERROR(SkipUseListOrders(reader, num_args));
  }
  return OkStatus();
}

Status IrReader::ReadOps(ByteReader& reader, ir::Block& block, uint64_t num_ops,
                         const RegionState& region, int depth) {
  for (uint64_t i = 0; i < num_ops; ++i) {
    RETURN_IF_ERROR(ReadOp(reader, block, region, depth));
  }
  return OkStatus();
}

Status IrReader::ReadProperties(ByteReader& reader, const OpNameInfo& name,
                                ir::NamedAttrList& properties) {
  std::string_view full_name = name.full_name;
  if (!name.entry->registered.has_value()) {
    return reader.Error("op '", EscapeForMessage(full_name),
                        "' has properties, which bytecode version ",
                        file_.version, " cannot have");
  }
  ASSIGN_OR_RETURN(uint64_t index,
                   reader.ReadIndex("properties", file_.properties.size()));
  const Section& properties_blob = file_.properties[index];
  ByteReader blob(properties_blob.data, properties_blob.offset, "properties",
                  index, full_name);
  if (!*name.entry->registered) {
    // Ops unknown to the writer keep their properties as one dictionary
    // attribute, whose reference is the blob.
    ASSIGN_OR_RETURN(ir::Attribute dict, table_.ReadAttribute(blob));
    if (!dict.is(ir::AttrKind::kDictionary)) {
      return blob.Error("properties of '", EscapeForMessage(full_name),
                        "' must be a dictionary, got ", dict.ToString());
    }
    for (const auto& [key, value] : dict.dictionary())
      properties.Set(key, value);
  } else if (name.is_vhlo) {
    const VhloOpInfo* info = name.vhlo;
    if (info == nullptr) {
      return reader.Error("unknown VHLO op '", EscapeForMessage(full_name),
                          "'");
    }
    // Every VHLO attribute is required: one attribute reference each.
    for (std::string_view property : info->properties) {
      ASSIGN_OR_RETURN(ir::Attribute value, table_.ReadAttribute(blob));
      properties.Set(std::string(property), value);
    }
  } else if (name.ods != nullptr) {
    RETURN_IF_ERROR(ReadOdsProperties(blob, *name.ods, properties));
  } else {
    return reader.Error(
        "op '", EscapeForMessage(full_name),
        "' stores properties in an encoding Kiln does not know");
  }
  if (!blob.empty()) {
    return blob.Error(blob.remaining(),
                      " unexpected bytes after the properties");
  }
  return OkStatus();
}

Status IrReader::ReadOdsProperties(ByteReader& blob, const OdsOpInfo& op,
                                   ir::NamedAttrList& properties) {
  Status first_error;
  for (size_t i = 0; i < op.layouts.size(); ++i) {
    ByteReader attempt = blob;
    ir::NamedAttrList read;
    Status status = ReadOdsLayout(attempt, op, op.layouts[i], read);
    if (status.ok() && attempt.empty()) {
      blob = attempt;
      for (const auto& [key, value] : read) properties.Set(key, value);
      return OkStatus();
    }
    if (i == 0) {
      first_error = status.ok() ? attempt.Error(attempt.remaining(),
                                                " unexpected bytes after the "
                                                "properties")
                                : status;
    }
  }
  if (op.layouts.size() == 1) return first_error;
  return InvalidArgumentError(first_error.message(), " (nor do they fit the ",
                              op.layouts.size() - 1, " other layout(s) of '",
                              op.name, "' Kiln knows)");
}

Status IrReader::ReadOdsLayout(ByteReader& blob, const OdsOpInfo& op,
                               const OdsLayout& layout,
                               ir::NamedAttrList& properties) {
  using Kind = OdsProperty::Kind;
  // From version 6 segment sizes follow the attributes as sparse arrays;
  // before, they are dense i32 array attributes in the sorted order.
  bool native_segments = file_.version >= kVersionNativeSegmentSizes;
  std::vector<const OdsProperty*> segments;
  for (const OdsProperty& property : layout) {
    bool is_segments = property.kind == Kind::kOperandSegments ||
                       property.kind == Kind::kResultSegments;
    if (is_segments && native_segments) {
      segments.push_back(&property);
      continue;
    }
    if (property.kind != Kind::kOptional) {
      ASSIGN_OR_RETURN(ir::Attribute value, table_.ReadAttribute(blob));
      if (is_segments && (!value.is(ir::AttrKind::kDenseArray) ||
                          value.dense_array_type() != ir::ElementType::kI32 ||
                          value.dense_array_size() != property.num_segments)) {
        return blob.Error("'", property.name, "' of '", op.name,
                          "' must be array<i32> of ", property.num_segments,
                          " sizes, got ", value.ToString());
      }
      properties.Set(std::string(property.name), std::move(value));
      continue;
    }
    uint64_t attr_index;
    bool present;
    RETURN_IF_ERROR(blob.ReadVarIntWithFlag(attr_index, present));
    if (!present) continue;
    StatusOr<ir::Attribute> value = table_.Attribute(attr_index);
    if (!value.ok()) return value.status().WithContext(blob.what());
    properties.Set(std::string(property.name), std::move(value).value());
  }
  for (const OdsProperty* property : segments) {
    ASSIGN_OR_RETURN(std::vector<int64_t> sizes,
                     ReadSparseArray(blob, property->num_segments));
    properties.Set(
        std::string(property->name),
        ir::Attribute::DenseIntArray(ir::ElementType::kI32, std::move(sizes)));
  }
  return OkStatus();
}

Status IrReader::ReadOp(ByteReader& reader, ir::Block& block,
                        const RegionState& region, int depth) {
  ASSIGN_OR_RETURN(uint64_t name_index,
                   reader.ReadIndex("op name", file_.op_names.size()));
  const OpNameInfo& name = op_names_[name_index];
  const std::string& full_name = name.full_name;
  ASSIGN_OR_RETURN(uint8_t mask, reader.ReadByte());
  if (mask & 0x80) return reader.Error("invalid op encoding mask ", int{mask});
  ASSIGN_OR_RETURN(ir::Location loc, table_.ReadLocation(reader));

  ir::NamedAttrList attributes;
  ir::NamedAttrList properties;
  if (mask & kHasAttrs) {
    ASSIGN_OR_RETURN(ir::Attribute dict, table_.ReadAttribute(reader));
    if (!dict.is(ir::AttrKind::kDictionary)) {
      return reader.Error("attributes of '", EscapeForMessage(full_name),
                          "' must be a dictionary, got ", dict.ToString());
    }
    for (const auto& [key, value] : dict.dictionary())
      attributes.Set(key, value);
  }
  if (mask & kHasProperties) {
    RETURN_IF_ERROR(ReadProperties(reader, name, properties));
  }
  std::vector<ir::Type> result_types;
  if (mask & kHasResults) {
    ASSIGN_OR_RETURN(uint64_t num_results, reader.ReadCount("results"));
    result_types.reserve(num_results);
    for (uint64_t i = 0; i < num_results; ++i) {
      ASSIGN_OR_RETURN(ir::Type type, table_.ReadType(reader));
      result_types.push_back(std::move(type));
    }
  }
  // Operands and successors are resolved once the op exists.
  std::vector<uint64_t> operand_ids;
  if (mask & kHasOperands) {
    ASSIGN_OR_RETURN(uint64_t num_operands, reader.ReadCount("operands"));
    operand_ids.reserve(num_operands);
    for (uint64_t i = 0; i < num_operands; ++i) {
      ASSIGN_OR_RETURN(uint64_t id,
                       reader.ReadIndex("value", scopes_.back().values.size()));
      operand_ids.push_back(id);
    }
  }
  std::vector<ir::Block*> successors;
  if (mask & kHasSuccessors) {
    ASSIGN_OR_RETURN(uint64_t num_successors, reader.ReadCount("successors"));
    for (uint64_t i = 0; i < num_successors; ++i) {
      ASSIGN_OR_RETURN(uint64_t index, reader.ReadIndex("successor block",
                                                        region.blocks.size()));
      successors.push_back(region.blocks[index]);
    }
  }
  if (file_.version >= kVersionUseListOrdering && (mask & kHasUseListOrders)) {
    RETURN_IF_ERROR(SkipUseListOrders(reader, result_types.size()));
  }
  uint64_t num_regions = 0;
  bool isolated = false;
  if (mask & kHasRegions) {
    RETURN_IF_ERROR(reader.ReadVarIntWithFlag(num_regions, isolated));
    if (num_regions > reader.remaining()) {
      return reader.Error("op '", EscapeForMessage(full_name), "' claims ",
                          num_regions, " regions but only ", reader.remaining(),
                          " bytes remain");
    }
  }

  std::unique_ptr<ir::Operation> op;
  if (name.is_vhlo) {
    VhloOp vhlo;
    vhlo.info = name.vhlo;
    if (vhlo.info == nullptr) {
      return reader.Error("unknown VHLO op '", EscapeForMessage(full_name),
                          "' (Kiln reads VHLO 0.9.0 to 1.20.0)");
    }
    vhlo.loc = std::move(loc);
    vhlo.attributes = std::move(properties);
    // Before properties (bytecode < 5) the VHLO attributes sit in the
    // attribute dictionary with the discardable ones.
    for (const auto& [key, value] : attributes) {
      bool inherent =
          std::find(vhlo.info->properties.begin(), vhlo.info->properties.end(),
                    key) != vhlo.info->properties.end();
      (inherent ? vhlo.attributes : vhlo.discardable).Set(key, value);
    }
    vhlo.result_types = std::move(result_types);
    ir::Operation* parent = block.ParentOp();
    bool in_function = parent != nullptr && parent->is(ir::OpCode::kFunc);
    StatusOr<std::unique_ptr<ir::Operation>> converted =
        ConvertVhloOp(std::move(vhlo), in_function);
    if (!converted.ok()) {
      return converted.status().WithContext(
          StrCat(reader.what(), " at offset ", reader.offset()));
    }
    op = std::move(converted).value();
  } else {
    op = std::make_unique<ir::Operation>(full_name, result_types,
                                         std::move(loc));
    for (const auto& [key, value] : properties) op->SetAttr(key, value);
    for (const auto& [key, value] : attributes) op->SetAttr(key, value);
    // As the text parser does: an attribute holding its default reads as
    // absent.
    ir::EraseDefaultAttributes(*op);
  }
  for (uint64_t i = 0; i < num_regions; ++i) op->AddRegion();
  for (ir::Block* successor : successors) op->AddSuccessor(successor);
  ir::Operation* raw = block.Append(std::move(op));
  for (uint64_t id : operand_ids) {
    ir::Value*& slot = scopes_.back().values[id];
    if (slot == nullptr) {
      placeholders_.push_back(
          std::make_unique<ir::Value>(ir::Type(), nullptr, nullptr, 0));
      slot = placeholders_.back().get();
      forward_uses_[slot];
    }
    auto forward = forward_uses_.find(slot);
    if (forward != forward_uses_.end()) {
      forward->second.emplace_back(raw, raw->num_operands());
    }
    raw->AddOperand(slot);
  }
  // Like MLIR, results are numbered only inside regions that define values.
  if (region.num_values > 0 && raw->num_results() > 0) {
    RETURN_IF_ERROR(DefineValues(reader, raw->results()));
  }
  if (num_regions > 0)
    RETURN_IF_ERROR(ReadRegions(reader, *raw, isolated, depth + 1));
  return OkStatus();
}

Status IrReader::ReadRegions(ByteReader& reader, ir::Operation& op,
                             bool isolated, int depth) {
  if (depth > kMaxRegionNesting) {
    return reader.Error("regions nested more than ", kMaxRegionNesting,
                        " deep");
  }
  // From version 2, the regions of an isolated op are in their own section.
  std::string owner;
  std::optional<ByteReader> section_reader;
  ByteReader* regions_reader = &reader;
  if (isolated && file_.version >= kVersionLazyLoading) {
    ASSIGN_OR_RETURN(Section section, reader.ReadSection());
    if (section.id != static_cast<uint8_t>(SectionId::kIR)) {
      return reader.Error("expected an IR section for the regions of '",
                          op.name(), "', got ", SectionName(section.id));
    }
    // Messages name the op, and the function when it is one.
    owner = op.name();
    ir::Attribute symbol = op.GetAttr("sym_name");
    if (symbol.is(ir::AttrKind::kString))
      StrAppend(owner, " @", symbol.string_value());
    section_reader.emplace(section.data, section.offset, "regions",
                           ByteReader::kNoIndex, owner);
    regions_reader = &*section_reader;
  }
  if (isolated) {
    scopes_.emplace_back();
  }
  for (int i = 0; i < op.num_regions(); ++i) {
    RETURN_IF_ERROR(ReadRegion(*regions_reader, op.region(i), depth));
  }
  if (isolated) scopes_.pop_back();
  if (section_reader && !section_reader->empty()) {
    return section_reader->Error(section_reader->remaining(),
                                 " unexpected bytes after the regions");
  }
  return OkStatus();
}

Status IrReader::ReadRegion(ByteReader& reader, ir::Region& region, int depth) {
  ASSIGN_OR_RETURN(uint64_t num_blocks, reader.ReadCount("blocks"));
  if (num_blocks == 0) return OkStatus();
  ASSIGN_OR_RETURN(uint64_t num_values, reader.ReadCount("values"));
  RegionState state;
  state.num_values = num_values;
  for (uint64_t i = 0; i < num_blocks; ++i)
    state.blocks.push_back(&region.AddBlock());
  // Every value is defined by bytes of its own (a block argument or a
  // result type), so more live value slots than IR bytes is corrupt.
  if (num_values > file_.ir.data.size() - live_values_) {
    return reader.Error("region declares ", num_values,
                        " values, more than the IR "
                        "section can define");
  }
  live_values_ += num_values;
  Scope& scope = scopes_.back();
  uint64_t base = scope.values.size();
  scope.values.resize(base + num_values, nullptr);
  scope.next_ids.push_back(base);
  for (ir::Block* block : state.blocks) {
    uint64_t num_ops = 0;
    RETURN_IF_ERROR(ReadBlockHeader(reader, *block, num_ops));
    RETURN_IF_ERROR(ReadOps(reader, *block, num_ops, state, depth));
  }
  Scope& same_scope = scopes_.back();
  same_scope.values.resize(base);
  same_scope.next_ids.pop_back();
  live_values_ -= num_values;
  return OkStatus();
}

Status IrReader::SkipUseListOrders(ByteReader& reader, uint64_t range_size) {
  uint64_t num_entries = 1;
  if (range_size > 1) {
    ASSIGN_OR_RETURN(num_entries, reader.ReadCount("use-list orders"));
  }
  for (uint64_t i = 0; i < num_entries; ++i) {
    if (range_size > 1) {
      RETURN_IF_ERROR(reader.ReadIndex("use-list value", range_size));
    }
    uint64_t num_indices;
    bool pairs;
    RETURN_IF_ERROR(reader.ReadVarIntWithFlag(num_indices, pairs));
    if (num_indices > reader.remaining()) {
      return reader.Error("use-list order of ", num_indices,
                          " indices but only ", reader.remaining(),
                          " bytes remain");
    }
    for (uint64_t j = 0; j < num_indices; ++j) {
      RETURN_IF_ERROR(reader.ReadVarInt());
    }
  }
  return OkStatus();
}

Status IrReader::DefineValues(ByteReader& reader,
                              const std::vector<ir::Value*>& values) {
  Scope& scope = scopes_.back();
  uint64_t& next = scope.next_ids.back();
  if (values.size() > scope.values.size() - next) {
    return reader.Error("defines ", values.size(), " value(s) from number ",
                        next, " but its scope has only ", scope.values.size(),
                        " value slots");
  }
  for (ir::Value* value : values) {
    ir::Value*& slot = scope.values[next++];
    if (slot != nullptr) {
      auto forward = forward_uses_.find(slot);
      if (forward == forward_uses_.end()) {
        return reader.Error("value ", next - 1, " is defined twice");
      }
      for (auto [user, index] : forward->second) user->SetOperand(index, value);
      forward_uses_.erase(forward);
    }
    slot = value;
  }
  return OkStatus();
}

}  // namespace kiln::parse::bytecode
