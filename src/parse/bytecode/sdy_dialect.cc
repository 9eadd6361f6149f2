// Shardy (`sdy`) attributes in bytecode.
//
// JAX writes its portable artifacts with Shardy's ops and attributes mixed in
// (a mesh per module, a sharding per argument), and Shardy encodes its
// attributes with a bytecode interface of its own: a varint code naming the
// attribute kind, then its parameters (source:
// shardy/dialect/sdy/ir/bytecode.td in openxla/shardy). Kiln keeps attributes
// of other dialects as their assembly text (ir::Attribute::Opaque), exactly
// as the text parser does (without the `#`), so this file turns each encoding
// back into the text Shardy prints for it: `#sdy.mesh<["x"=2]>`,
// `#sdy.sharding<@mesh, [{"x"}, {}]>`.
//
// Parameters that are attributes themselves (a mesh's axes, a sharding's
// dimensions) are references to other entries of the attribute table; they
// print in their nested form (`{"x", ?}` rather than a full attribute), so
// they are decoded here from their entry directly.

#include <iterator>
#include <string>

#include "base/strings.h"

#include "ir/print_util.h"
#include "parse/bytecode/attr_type_table.h"

namespace kiln::parse::bytecode {
namespace {

// The attribute kinds of Shardy's bytecode, by the code that starts each
// entry (bytecode.td's `SdyDialectTypes` list).
enum SdyCode : uint64_t {
  kManualAxes = 0,
  kMeshAxis = 1,
  kMesh = 2,
  kSubAxisInfo = 3,
  kAxisRef = 4,
  kDimensionSharding = 5,
  kTensorShardingV1 = 6,
  kTensorShardingPerValueV1 = 7,
  kDimMapping = 8,
  kTensorMapping = 9,
  kOpShardingRule = 10,
  kAxisRefList = 11,
  kListOfAxisRefLists = 12,
  kAllToAllParam = 13,
  kAllToAllParamList = 14,
  kTensorShardingV2 = 15,
  kTensorShardingPerValueV2 = 16,
  kTensorShardingV3 = 17,
};

// How each kind prints on its own, by code: attributes with a mnemonic of
// their own (`#sdy.mesh<...>`), or wrapped in the dialect's (`#sdy<axis_ref
// "x">`).
struct FullForm {
  const char* mnemonic;
  bool wrapped;
};
constexpr FullForm kFullForms[] = {
    {"manual_axes", true},
    {"mesh_axis", true},
    {"mesh", false},
    {"sub_axis_info", true},
    {"axis_ref", true},
    {"dimension_sharding", true},
    {"sharding", false},
    {"sharding_per_value", false},
    {"dim_mapping", true},
    {"tensor_mapping", true},
    {"op_sharding_rule", false},
    {"axis_ref_list", true},
    {"list_of_axis_ref_lists", true},
    {"all_to_all_param", true},
    {"all_to_all_param_list", true},
    {"sharding", false},
    {"sharding_per_value", false},
    {"sharding", false},
};
static_assert(std::size(kFullForms) == kTensorShardingV3 + 1);

// Shardy attributes nest a few levels (sharding > dimension > axis > sub-axis);
// anything deeper than this is a corrupt file.
constexpr int kMaxSdyNesting = 32;

// Shardy's reduction kinds (enums.td), as its printer spells them.
const char* ReductionName(int64_t value) {
  static const char* const kNames[] = {"sum", "min", "max", "product"};
  if (value >= 0 && value < 4) return kNames[value];
  return nullptr;
}

// Shardy names the factors of a sharding rule i, j, ..., z, then z_1, z_2...
std::string FactorName(int64_t index) {
  constexpr int64_t kLetters = 'z' - 'i' + 1;
  if (index < kLetters) return std::string(1, static_cast<char>('i' + index));
  return "z_" + std::to_string(index - kLetters + 1);
}

class SdyDecoder {
 public:
  explicit SdyDecoder(AttrTypeTable& table) : table_(table) {}

  // The full text of the attribute whose encoding `reader` holds.
  StatusOr<std::string> Full(ByteReader& reader) {
    ASSIGN_OR_RETURN(uint64_t code, reader.ReadVarInt());
    ASSIGN_OR_RETURN(std::string body, Body(code, reader));
    // Body() accepted the code, so it indexes the table.
    const FullForm& form = kFullForms[code];
    return form.wrapped ? StrCat("sdy<", form.mnemonic, body, ">")
                        : StrCat("sdy.", form.mnemonic, body);
  }

 private:
  // The nested text of the Shardy attribute that a reference in `reader`
  // names, which must be of one of `expected` kinds.
  StatusOr<std::string> Nested(ByteReader& reader,
                               std::initializer_list<uint64_t> expected,
                               uint64_t* code_out = nullptr) {
    const Container& file = table_.file();
    ASSIGN_OR_RETURN(uint64_t index,
                     reader.ReadIndex("attribute", file.attributes.size()));
    return NestedAt(reader, index, expected, code_out);
  }

  StatusOr<std::string> NestedAt(const ByteReader& from, uint64_t index,
                                 std::initializer_list<uint64_t> expected,
                                 uint64_t* code_out = nullptr) {
    const Container& file = table_.file();
    const AttrTypeEntry& entry = file.attributes[index];
    if (!entry.custom || file.dialects[entry.dialect] != "sdy") {
      return from.Error("attribute ", index,
                        " should be a Shardy attribute in Shardy's encoding");
    }
    if (depth_ >= kMaxSdyNesting) {
      return from.Error("Shardy attributes nested more than ", kMaxSdyNesting,
                        " deep");
    }
    ++depth_;
    ByteReader reader(entry.data, entry.offset, "attribute", index, "sdy");
    StatusOr<std::string> text = [&]() -> StatusOr<std::string> {
      ASSIGN_OR_RETURN(uint64_t code, reader.ReadVarInt());
      bool allowed = false;
      for (uint64_t kind : expected) allowed |= kind == code;
      if (!allowed) {
        return reader.Error("Shardy attribute of kind ", code,
                            " where another kind was expected");
      }
      if (code_out != nullptr) *code_out = code;
      ASSIGN_OR_RETURN(std::string body, Body(code, reader));
      if (!reader.empty()) {
        return reader.Error(reader.remaining(),
                            " unexpected bytes after the attribute");
      }
      return body;
    }();
    --depth_;
    return text;
  }

  // A list of nested attributes of one kind, each printed by `Nested`,
  // joined by ", ".
  StatusOr<std::string> NestedList(ByteReader& reader,
                                   std::initializer_list<uint64_t> expected) {
    ASSIGN_OR_RETURN(uint64_t count, reader.ReadCount("attributes"));
    std::string text;
    for (uint64_t i = 0; i < count; ++i) {
      ASSIGN_OR_RETURN(std::string item, Nested(reader, expected));
      if (i > 0) text += ", ";
      text += item;
    }
    return text;
  }

  StatusOr<std::string> SignedList(ByteReader& reader) {
    ASSIGN_OR_RETURN(uint64_t count, reader.ReadCount("integers"));
    std::string text;
    for (uint64_t i = 0; i < count; ++i) {
      ASSIGN_OR_RETURN(int64_t value, reader.ReadSignedVarInt());
      if (i > 0) text += ", ";
      text += std::to_string(value);
    }
    return text;
  }

  // The factor lists of a sharding rule (`[i, j]`), one per tensor dimension.
  StatusOr<std::string> FactorLists(ByteReader& reader) {
    ASSIGN_OR_RETURN(uint64_t count, reader.ReadCount("integers"));
    std::string text;
    for (uint64_t i = 0; i < count; ++i) {
      ASSIGN_OR_RETURN(int64_t value, reader.ReadSignedVarInt());
      if (value < 0) return reader.Error("negative factor index ", value);
      if (i > 0) text += ", ";
      text += FactorName(value);
    }
    return text;
  }

  StatusOr<std::string> Body(uint64_t code, ByteReader& reader) {
    switch (code) {
      case kManualAxes: {
        ASSIGN_OR_RETURN(uint64_t count, reader.ReadCount("axes"));
        std::string text = "{";
        for (uint64_t i = 0; i < count; ++i) {
          ASSIGN_OR_RETURN(std::string axis,
                           table_.ReadStringAttribute(reader));
          if (i > 0) text += ", ";
          text += ir::QuoteString(axis);
        }
        return text + "}";
      }
      case kMeshAxis: {
        ASSIGN_OR_RETURN(std::string_view name, table_.ReadString(reader));
        ASSIGN_OR_RETURN(int64_t size, reader.ReadSignedVarInt());
        return ir::QuoteString(name) + "=" + std::to_string(size);
      }
      case kMesh: {
        ASSIGN_OR_RETURN(std::string axes, NestedList(reader, {kMeshAxis}));
        ASSIGN_OR_RETURN(std::string device_ids, SignedList(reader));
        std::string text = "<[" + axes + "]";
        if (!device_ids.empty()) text += ", device_ids=[" + device_ids + "]";
        return text + ">";
      }
      case kSubAxisInfo: {
        ASSIGN_OR_RETURN(int64_t pre_size, reader.ReadSignedVarInt());
        ASSIGN_OR_RETURN(int64_t size, reader.ReadSignedVarInt());
        return "(" + std::to_string(pre_size) + ")" + std::to_string(size);
      }
      case kAxisRef: {
        ASSIGN_OR_RETURN(std::string_view name, table_.ReadString(reader));
        std::string text = ir::QuoteString(name);
        uint64_t index;
        bool present;
        RETURN_IF_ERROR(reader.ReadVarIntWithFlag(index, present));
        if (present) {
          if (index >= table_.file().attributes.size()) {
            return reader.Error("attribute index ", index, " out of range");
          }
          ASSIGN_OR_RETURN(std::string sub,
                           NestedAt(reader, index, {kSubAxisInfo}));
          text += ":" + sub;
        }
        return text;
      }
      case kDimensionSharding: {
        ASSIGN_OR_RETURN(std::string axes, NestedList(reader, {kAxisRef}));
        // Bools are one raw byte (MLIR's writeOwnedBool).
        ASSIGN_OR_RETURN(uint8_t closed, reader.ReadByte());
        uint64_t priority;
        bool has_priority;
        RETURN_IF_ERROR(reader.ReadVarIntWithFlag(priority, has_priority));
        std::string text = "{" + axes;
        if (closed == 0) text += axes.empty() ? "?" : ", ?";
        text += "}";
        if (has_priority) text += "p" + std::to_string(priority);
        return text;
      }
      case kTensorShardingV1:
      case kTensorShardingV2:
      case kTensorShardingV3: {
        ASSIGN_OR_RETURN(ir::Attribute mesh_or_ref,
                         table_.ReadAttribute(reader));
        std::string mesh;
        if (mesh_or_ref.is(ir::AttrKind::kOpaque) &&
            mesh_or_ref.opaque_text().rfind("sdy.mesh<", 0) == 0) {
          mesh = mesh_or_ref.opaque_text().substr(4);  // mesh<...>
        } else {
          mesh = mesh_or_ref.ToString();  // @name
        }
        ASSIGN_OR_RETURN(std::string dims,
                         NestedList(reader, {kDimensionSharding}));
        ASSIGN_OR_RETURN(std::string replicated,
                         NestedList(reader, {kAxisRef}));
        std::string unreduced;
        if (code != kTensorShardingV1) {
          ASSIGN_OR_RETURN(unreduced, NestedList(reader, {kAxisRef}));
        }
        std::string text = "<" + mesh + ", [" + dims + "]";
        if (!replicated.empty()) text += ", replicated={" + replicated + "}";
        if (!unreduced.empty()) text += ", unreduced={" + unreduced + "}";
        if (code == kTensorShardingV3) {
          ASSIGN_OR_RETURN(int64_t reduction, reader.ReadSignedVarInt());
          const char* name = ReductionName(reduction);
          if (name == nullptr) {
            return reader.Error("unknown Shardy reduction ", reduction);
          }
          text += std::string(", reduction=") + name;
        }
        return text + ">";
      }
      case kTensorShardingPerValueV1:
      case kTensorShardingPerValueV2: {
        ASSIGN_OR_RETURN(
            std::string shardings,
            NestedList(reader, {kTensorShardingV1, kTensorShardingV2,
                                kTensorShardingV3}));
        return "<[" + shardings + "]>";
      }
      case kDimMapping:
        return FactorLists(reader);
      case kTensorMapping: {
        ASSIGN_OR_RETURN(std::string dims, NestedList(reader, {kDimMapping}));
        return "[" + dims + "]";
      }
      case kOpShardingRule: {
        ASSIGN_OR_RETURN(std::string sizes, SignedList(reader));
        ASSIGN_OR_RETURN(std::string operands,
                         NestedList(reader, {kTensorMapping}));
        ASSIGN_OR_RETURN(std::string results,
                         NestedList(reader, {kTensorMapping}));
        std::string text = "<(" + operands + ")->(" + results + ") {";
        // Factor sizes print as i=2, j=4, ...
        int64_t factor = 0;
        size_t start = 0;
        while (start < sizes.size()) {
          size_t end = sizes.find(", ", start);
          if (end == std::string::npos) end = sizes.size();
          if (factor > 0) text += ", ";
          text += FactorName(factor++) + "=" + sizes.substr(start, end - start);
          start = end + 2;
        }
        text += "}";
        for (const char* group : {"reduction", "need_replication",
                                  "permutation", "blocked_propagation"}) {
          ASSIGN_OR_RETURN(std::string factors, FactorLists(reader));
          if (!factors.empty())
            text += std::string(" ") + group + "={" + factors + "}";
        }
        ASSIGN_OR_RETURN(uint8_t custom, reader.ReadByte());
        if (custom != 0) text += ", custom";
        return text + ">";
      }
      case kAxisRefList: {
        ASSIGN_OR_RETURN(std::string axes, NestedList(reader, {kAxisRef}));
        return "{" + axes + "}";
      }
      case kListOfAxisRefLists: {
        ASSIGN_OR_RETURN(std::string lists, NestedList(reader, {kAxisRefList}));
        return "[" + lists + "]";
      }
      case kAllToAllParam: {
        ASSIGN_OR_RETURN(std::string axes, NestedList(reader, {kAxisRef}));
        ASSIGN_OR_RETURN(int64_t src_dim, reader.ReadSignedVarInt());
        ASSIGN_OR_RETURN(int64_t tgt_dim, reader.ReadSignedVarInt());
        return "{" + axes + "}: " + std::to_string(src_dim) + "->" +
               std::to_string(tgt_dim);
      }
      case kAllToAllParamList: {
        ASSIGN_OR_RETURN(std::string params,
                         NestedList(reader, {kAllToAllParam}));
        return "[" + params + "]";
      }
      default:
        return reader.Error("unknown Shardy attribute code ", code,
                            " (Kiln reads codes 0 to 17)");
    }
  }

  AttrTypeTable& table_;
  int depth_ = 0;
};

}  // namespace

StatusOr<ir::Attribute> DecodeSdyAttribute(AttrTypeTable& table,
                                           ByteReader& reader) {
  SdyDecoder decoder(table);
  ASSIGN_OR_RETURN(std::string text, decoder.Full(reader));
  return ir::Attribute::Opaque(std::move(text));
}

}  // namespace kiln::parse::bytecode
