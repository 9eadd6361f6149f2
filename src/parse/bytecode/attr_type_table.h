// The attribute and type tables of a bytecode file, decoded on first use.
//
// Entries refer to each other by index; decoding follows those references
// recursively with a depth limit, and an entry that (directly or not)
// refers to itself is an error rather than a hang. Entries in a dialect's
// own encoding are decoded by that dialect's file (builtin_dialect.cc,
// vhlo_dialect.cc, stablehlo_dialect.cc, ...); entries stored as assembly
// text go through the options' hooks.
#ifndef KILN_PARSE_BYTECODE_ATTR_TYPE_TABLE_H_
#define KILN_PARSE_BYTECODE_ATTR_TYPE_TABLE_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "ir/attributes.h"
#include "ir/location.h"
#include "ir/types.h"
#include "parse/bytecode/container.h"
#include "parse/bytecode/encoding.h"
#include "parse/bytecode/reader.h"

namespace kiln::parse::bytecode {

// A decoded attribute entry: most are attributes, locations are kept apart
// because the IR has a separate type for them.
struct DecodedAttr {
  ir::Attribute attr;
  std::optional<ir::Location> loc;
};

class AttrTypeTable {
 public:
  AttrTypeTable(const Container& file, const BytecodeReadOptions& options);

  StatusOr<ir::Attribute> Attribute(uint64_t index);
  StatusOr<ir::Location> Location(uint64_t index);
  StatusOr<ir::Type> Type(uint64_t index);

  // Reads a reference (a varint index) from `reader` and resolves it.
  StatusOr<ir::Attribute> ReadAttribute(ByteReader& reader);
  StatusOr<ir::Location> ReadLocation(ByteReader& reader);
  StatusOr<ir::Type> ReadType(ByteReader& reader);
  // A reference to a string attribute: its text.
  StatusOr<std::string> ReadStringAttribute(ByteReader& reader);
  // An attribute given as assembly text (with its '#'): parsed by the
  // options' hook, else kept as ir::Attribute::Opaque.
  StatusOr<ir::Attribute> AttributeFromText(std::string_view text);
  // A reference into the string table.
  StatusOr<std::string_view> ReadString(ByteReader& reader);
  // A reference to a dialect resource: its blob, shared with every
  // attribute that refers to it.
  StatusOr<std::shared_ptr<ir::ResourceBlob>> ReadResource(ByteReader& reader);

  // The blobs referred to so far, by key (they move into the module).
  std::map<std::string, std::shared_ptr<ir::ResourceBlob>>& resources() {
    return resources_;
  }
  const Container& file() const { return file_; }

 private:
  enum class State : uint8_t { kUnread, kReading, kDone };
  struct AttrSlot {
    State state = State::kUnread;
    DecodedAttr value;
  };
  struct TypeSlot {
    State state = State::kUnread;
    ir::Type value;
  };

  StatusOr<const DecodedAttr*> ResolveAttribute(uint64_t index);
  StatusOr<DecodedAttr> DecodeAttribute(const AttrTypeEntry& entry,
                                        uint64_t index);
  StatusOr<ir::Type> DecodeType(const AttrTypeEntry& entry, uint64_t index);

  const Container& file_;
  const BytecodeReadOptions& options_;
  std::vector<AttrSlot> attributes_;
  std::vector<TypeSlot> types_;
  std::map<std::string, std::shared_ptr<ir::ResourceBlob>> resources_;
  int depth_ = 0;
};

// Dialect decoders, one call per entry with custom encoding (the table in
// attr_type_table.cc says which dialect has which).
StatusOr<DecodedAttr> DecodeBuiltinAttribute(AttrTypeTable& table,
                                             ByteReader& reader);
StatusOr<ir::Type> DecodeBuiltinType(AttrTypeTable& table, ByteReader& reader);
StatusOr<ir::Attribute> DecodeVhloAttribute(AttrTypeTable& table,
                                            ByteReader& reader);
StatusOr<ir::Type> DecodeVhloType(AttrTypeTable& table, ByteReader& reader);
// Shardy's attributes, kept as the assembly text Shardy prints for them.
StatusOr<ir::Attribute> DecodeSdyAttribute(AttrTypeTable& table,
                                           ByteReader& reader);
// The stablehlo dialect's own encoding (plain bytecode, not VHLO).
StatusOr<ir::Attribute> DecodeStablehloAttribute(AttrTypeTable& table,
                                                 ByteReader& reader);
StatusOr<ir::Type> DecodeStablehloType(AttrTypeTable& table,
                                       ByteReader& reader);
// CHLO's two enums, kept as their assembly text (as the text parser keeps
// every `#chlo<...>` attribute).
StatusOr<ir::Attribute> DecodeChloAttribute(AttrTypeTable& table,
                                            ByteReader& reader);
// The quant dialect's types (!quant.uniform).
StatusOr<ir::Type> DecodeQuantType(AttrTypeTable& table, ByteReader& reader);

// Shared helpers of the dialect decoders.

// A dictionary attribute of `entries` in any order (the last of equal
// names wins). Sorting first keeps building it O(n log n) for any input.
ir::Attribute MakeDictionary(std::vector<ir::NamedAttribute> entries);

// An integer of `width` bits as the bytecode stores it (one raw byte up to
// 8 bits, else a zigzag varint), sign- or zero-extended to 64 bits.
StatusOr<int64_t> ReadKnownWidthInt(ByteReader& reader, int width,
                                    bool is_signed);
// A float of element type `type` as the bits of its format.
StatusOr<double> ReadKnownFloat(ByteReader& reader, ir::ElementType type);
// A varint holding a value of StableHLO's enum `kind` (VHLO and the
// stablehlo dialect number them alike).
StatusOr<ir::Attribute> ReadEnumAttribute(ByteReader& reader,
                                          ir::EnumKind kind);
// A count, then that many zigzag varints (writeSignedVarInts).
StatusOr<std::vector<int64_t>> ReadSignedVarInts(ByteReader& reader,
                                                 std::string_view what);
// A shape: a count, then zigzag varints (kDynamic for `?`).
StatusOr<std::vector<int64_t>> ReadShape(ByteReader& reader);
// A count, then that many type references.
StatusOr<std::vector<ir::Type>> ReadTypeList(AttrTypeTable& table,
                                             ByteReader& reader);
// The element type of a scalar type; `what` names it in messages.
StatusOr<ir::ElementType> ScalarElementType(ByteReader& reader,
                                            const ir::Type& type,
                                            std::string_view what);
// The uniform quantized types, which VHLO and the quant dialect lay out
// alike after their type code (quant_dialect.cc).
StatusOr<ir::Type> ReadUniformQuantizedType(AttrTypeTable& table,
                                            ByteReader& reader);
StatusOr<ir::Type> ReadUniformQuantizedPerAxisType(AttrTypeTable& table,
                                                   ByteReader& reader);
// The StableHLO text of the mesh attributes (#stablehlo.mesh, axis_ref,
// replica_group_mesh_axes; stablehlo_dialect.cc), which the IR keeps as
// their text, as the text parser does. Their parts are decoded as
// ir::Attribute::DialectStruct first: MeshAttributeText prints those
// (and arrays of them), MeshText a whole mesh.
std::string MeshAttributeText(const ir::Attribute& attr);
std::string MeshText(const ir::Attribute& axes,
                     const ir::Attribute& device_ids);

// The raw data of a dense tensor attribute of `type` (a ranked tensor with
// static shape), checked against the type and with bit-packed i1 data
// unpacked. Sets `splat` when the data is a single element repeated.
StatusOr<std::string> DenseTensorData(ByteReader& reader, const ir::Type& type,
                                      std::string_view blob, bool& splat);

}  // namespace kiln::parse::bytecode

#endif  // KILN_PARSE_BYTECODE_ATTR_TYPE_TABLE_H_
