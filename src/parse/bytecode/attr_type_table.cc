#include "parse/bytecode/attr_type_table.h"

#include <algorithm>
#include <cstring>

#include "ir/float_bits.h"

namespace kiln::parse::bytecode {
namespace {

// Attributes nest (arrays of dictionaries of arrays...) and locations chain
// (call sites of call sites); real files stay far below this.
constexpr int kMaxNesting = 200;

// The dialects whose own bytecode encodings Kiln decodes.
template <StatusOr<ir::Attribute> (*Decode)(AttrTypeTable&, ByteReader&)>
StatusOr<DecodedAttr> AsDecodedAttr(AttrTypeTable& table, ByteReader& reader) {
  ASSIGN_OR_RETURN(ir::Attribute attr, Decode(table, reader));
  return DecodedAttr{std::move(attr), std::nullopt};
}

struct DialectCodec {
  std::string_view dialect;
  StatusOr<DecodedAttr> (*attribute)(AttrTypeTable&, ByteReader&);
  StatusOr<ir::Type> (*type)(AttrTypeTable&, ByteReader&);
};
constexpr DialectCodec kCodecs[] = {
    {"builtin", DecodeBuiltinAttribute, DecodeBuiltinType},
    {"vhlo", AsDecodedAttr<DecodeVhloAttribute>, DecodeVhloType},
    {"stablehlo", AsDecodedAttr<DecodeStablehloAttribute>, DecodeStablehloType},
    {"chlo", AsDecodedAttr<DecodeChloAttribute>, nullptr},
    {"quant", nullptr, DecodeQuantType},
    {"sdy", AsDecodedAttr<DecodeSdyAttribute>, nullptr},
};

const DialectCodec* FindCodec(std::string_view dialect) {
  for (const DialectCodec& codec : kCodecs) {
    if (codec.dialect == dialect) return &codec;
  }
  return nullptr;
}

// "builtin, vhlo, ..." for messages: the dialects with attribute (or type)
// decoders.
std::string CodecNames(bool attributes) {
  std::vector<std::string_view> names;
  for (const DialectCodec& codec : kCodecs) {
    if ((attributes ? codec.attribute != nullptr : codec.type != nullptr)) {
      names.push_back(codec.dialect);
    }
  }
  return StrJoin(names, ", ");
}

class NestingGuard {
 public:
  explicit NestingGuard(int& depth) : depth_(depth) { ++depth_; }
  ~NestingGuard() { --depth_; }

 private:
  int& depth_;
};

}  // namespace

AttrTypeTable::AttrTypeTable(const Container& file,
                             const BytecodeReadOptions& options)
    : file_(file),
      options_(options),
      attributes_(file.attributes.size()),
      types_(file.types.size()) {}

StatusOr<const DecodedAttr*> AttrTypeTable::ResolveAttribute(uint64_t index) {
  if (index >= attributes_.size()) {
    return InvalidArgumentError("attribute index ", index, " is out of range (",
                                attributes_.size(), " attributes)");
  }
  AttrSlot& slot = attributes_[index];
  if (slot.state == State::kDone) return &slot.value;
  const AttrTypeEntry& entry = file_.attributes[index];
  if (slot.state == State::kReading) {
    return InvalidArgumentError("attribute ", index, " at offset ",
                                entry.offset, " refers to itself");
  }
  if (depth_ >= kMaxNesting) {
    return InvalidArgumentError("attribute ", index, " at offset ",
                                entry.offset, " is nested more than ",
                                kMaxNesting, " deep");
  }
  NestingGuard guard(depth_);
  slot.state = State::kReading;
  StatusOr<DecodedAttr> decoded = DecodeAttribute(entry, index);
  if (!decoded.ok()) {
    slot.state = State::kUnread;
    return decoded.status();
  }
  // `slot` is still valid: the table is sized once, in the constructor.
  slot.value = std::move(decoded).value();
  slot.state = State::kDone;
  return &slot.value;
}

StatusOr<DecodedAttr> AttrTypeTable::DecodeAttribute(const AttrTypeEntry& entry,
                                                     uint64_t index) {
  std::string_view dialect = file_.dialects[entry.dialect];
  ByteReader reader(entry.data, entry.offset, "attribute", index, dialect);
  DecodedAttr result;
  if (!entry.custom) {
    ASSIGN_OR_RETURN(std::string_view text, reader.ReadNullTerminated());
    if (!reader.empty()) return reader.Error("unexpected bytes after the text");
    StatusOr<ir::Attribute> parsed = AttributeFromText(text);
    if (!parsed.ok()) return parsed.status().WithContext(reader.what());
    result.attr = std::move(parsed).value();
    return result;
  }
  const DialectCodec* codec = FindCodec(dialect);
  if (codec == nullptr || codec->attribute == nullptr) {
    return reader.Error(
        "Kiln cannot decode the bytecode encoding of attributes of dialect '",
        EscapeForMessage(dialect), "' (only ", CodecNames(true),
        ", or assembly text)");
  }
  ASSIGN_OR_RETURN(result, codec->attribute(*this, reader));
  if (!reader.empty()) {
    return reader.Error(reader.remaining(),
                        " unexpected bytes after the attribute");
  }
  return result;
}

StatusOr<ir::Attribute> AttrTypeTable::Attribute(uint64_t index) {
  ASSIGN_OR_RETURN(const DecodedAttr* decoded, ResolveAttribute(index));
  if (decoded->loc) {
    return InvalidArgumentError(
        "attribute ", index, " at offset ", file_.attributes[index].offset,
        " is a location where an attribute was expected");
  }
  return decoded->attr;
}

StatusOr<ir::Location> AttrTypeTable::Location(uint64_t index) {
  ASSIGN_OR_RETURN(const DecodedAttr* decoded, ResolveAttribute(index));
  if (!decoded->loc) {
    return InvalidArgumentError("attribute ", index, " at offset ",
                                file_.attributes[index].offset,
                                " is not a location but one was expected");
  }
  return *decoded->loc;
}

StatusOr<ir::Type> AttrTypeTable::Type(uint64_t index) {
  if (index >= types_.size()) {
    return InvalidArgumentError("type index ", index, " is out of range (",
                                types_.size(), " types)");
  }
  TypeSlot& slot = types_[index];
  if (slot.state == State::kDone) return slot.value;
  const AttrTypeEntry& entry = file_.types[index];
  if (slot.state == State::kReading) {
    return InvalidArgumentError("type ", index, " at offset ", entry.offset,
                                " refers to itself");
  }
  if (depth_ >= kMaxNesting) {
    return InvalidArgumentError("type ", index, " at offset ", entry.offset,
                                " is nested more than ", kMaxNesting, " deep");
  }
  NestingGuard guard(depth_);
  slot.state = State::kReading;
  StatusOr<ir::Type> decoded = DecodeType(entry, index);
  if (!decoded.ok()) {
    slot.state = State::kUnread;
    return decoded.status();
  }
  slot.value = std::move(decoded).value();
  slot.state = State::kDone;
  return slot.value;
}

StatusOr<ir::Type> AttrTypeTable::DecodeType(const AttrTypeEntry& entry,
                                             uint64_t index) {
  std::string_view dialect = file_.dialects[entry.dialect];
  ByteReader reader(entry.data, entry.offset, "type", index, dialect);
  if (!entry.custom) {
    ASSIGN_OR_RETURN(std::string_view text, reader.ReadNullTerminated());
    if (!reader.empty()) return reader.Error("unexpected bytes after the text");
    if (options_.parse_type) {
      StatusOr<ir::Type> parsed = options_.parse_type(text);
      if (!parsed.ok()) {
        return parsed.status().WithContext(StrCat(
            reader.what(), ": cannot parse '", EscapeForMessage(text), "'"));
      }
      return parsed;
    }
    if (!text.empty() && text.front() == '!') {
      return ir::Type::Opaque(std::string(text.substr(1)));
    }
    // Older writers store builtin types they cannot encode (f8E4M3FN, ...)
    // as text.
    if (std::optional<ir::ElementType> element =
            ir::ParseElementTypeName(text)) {
      return ir::Type::Element(*element);
    }
    return reader.Error("type '", EscapeForMessage(text),
                        "' is stored as text and no type parser was given");
  }
  const DialectCodec* codec = FindCodec(dialect);
  if (codec == nullptr || codec->type == nullptr) {
    return reader.Error(
        "Kiln cannot decode the bytecode encoding of types of dialect '",
        EscapeForMessage(dialect), "' (only ", CodecNames(false),
        ", or assembly text)");
  }
  ASSIGN_OR_RETURN(ir::Type type, codec->type(*this, reader));
  if (!reader.empty()) {
    return reader.Error(reader.remaining(), " unexpected bytes after the type");
  }
  return type;
}

StatusOr<ir::Attribute> AttrTypeTable::AttributeFromText(
    std::string_view text) {
  if (options_.parse_attribute) {
    StatusOr<ir::Attribute> parsed = options_.parse_attribute(text);
    if (!parsed.ok()) {
      return parsed.status().WithContext(
          StrCat("cannot parse '", EscapeForMessage(text, 200), "'"));
    }
    return parsed;
  }
  std::string_view body = text;
  if (!body.empty() && body.front() == '#') body.remove_prefix(1);
  return ir::Attribute::Opaque(std::string(body));
}

StatusOr<ir::Attribute> AttrTypeTable::ReadAttribute(ByteReader& reader) {
  ASSIGN_OR_RETURN(uint64_t index, reader.ReadVarInt());
  StatusOr<ir::Attribute> attr = Attribute(index);
  if (!attr.ok()) return attr.status().WithContext(reader.what());
  return attr;
}

StatusOr<ir::Location> AttrTypeTable::ReadLocation(ByteReader& reader) {
  ASSIGN_OR_RETURN(uint64_t index, reader.ReadVarInt());
  StatusOr<ir::Location> loc = Location(index);
  if (!loc.ok()) return loc.status().WithContext(reader.what());
  return loc;
}

StatusOr<ir::Type> AttrTypeTable::ReadType(ByteReader& reader) {
  ASSIGN_OR_RETURN(uint64_t index, reader.ReadVarInt());
  StatusOr<ir::Type> type = Type(index);
  if (!type.ok()) return type.status().WithContext(reader.what());
  return type;
}

StatusOr<std::string> AttrTypeTable::ReadStringAttribute(ByteReader& reader) {
  ASSIGN_OR_RETURN(ir::Attribute attr, ReadAttribute(reader));
  if (!attr.is(ir::AttrKind::kString)) {
    return reader.Error("expected a string attribute, got ", attr.ToString());
  }
  return attr.string_value();
}

StatusOr<std::string_view> AttrTypeTable::ReadString(ByteReader& reader) {
  ASSIGN_OR_RETURN(uint64_t index,
                   reader.ReadIndex("string", file_.strings.size()));
  return file_.strings[index];
}

StatusOr<std::shared_ptr<ir::ResourceBlob>> AttrTypeTable::ReadResource(
    ByteReader& reader) {
  ASSIGN_OR_RETURN(uint64_t index,
                   reader.ReadIndex("resource handle", file_.resources.size()));
  const ResourceEntry& entry = file_.resources[index];
  std::string key(entry.key);
  auto [it, inserted] = resources_.try_emplace(key);
  if (inserted) {
    auto blob = std::make_shared<ir::ResourceBlob>();
    blob->key = key;
    blob->present = entry.has_blob;
    blob->alignment = entry.alignment;
    blob->data = std::string(entry.blob);
    it->second = std::move(blob);
  }
  return it->second;
}

StatusOr<ir::Attribute> ReadEnumAttribute(ByteReader& reader,
                                          ir::EnumKind kind) {
  ASSIGN_OR_RETURN(uint64_t value, reader.ReadVarInt());
  if (value > 64 ||
      ir::EnumValueName(kind, static_cast<int64_t>(value)).empty()) {
    return reader.Error("invalid ", ir::EnumKindName(kind), " value ", value);
  }
  return ir::Attribute::Enum(kind, static_cast<int64_t>(value));
}

StatusOr<std::vector<int64_t>> ReadSignedVarInts(ByteReader& reader,
                                                 std::string_view what) {
  ASSIGN_OR_RETURN(uint64_t count, reader.ReadCount(what));
  std::vector<int64_t> values;
  values.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    ASSIGN_OR_RETURN(int64_t value, reader.ReadSignedVarInt());
    values.push_back(value);
  }
  return values;
}

StatusOr<std::vector<int64_t>> ReadShape(ByteReader& reader) {
  ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                   ReadSignedVarInts(reader, "dimensions"));
  for (int64_t dim : shape) {
    if (dim < 0 && dim != ir::kDynamic) {
      return reader.Error("invalid dimension size ", dim);
    }
  }
  return shape;
}

StatusOr<std::vector<ir::Type>> ReadTypeList(AttrTypeTable& table,
                                             ByteReader& reader) {
  ASSIGN_OR_RETURN(uint64_t count, reader.ReadCount("types"));
  std::vector<ir::Type> types;
  types.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    ASSIGN_OR_RETURN(ir::Type type, table.ReadType(reader));
    types.push_back(std::move(type));
  }
  return types;
}

StatusOr<ir::ElementType> ScalarElementType(ByteReader& reader,
                                            const ir::Type& type,
                                            std::string_view what) {
  if (!type.is(ir::TypeKind::kElement)) {
    return reader.Error(what, " must be a scalar type, got ", type.ToString());
  }
  return type.element_type();
}

ir::Attribute MakeDictionary(std::vector<ir::NamedAttribute> entries) {
  std::stable_sort(
      entries.begin(), entries.end(),
      [](const ir::NamedAttribute& a, const ir::NamedAttribute& b) {
        return a.first < b.first;
      });
  return ir::Attribute::Dictionary(std::move(entries));
}

StatusOr<int64_t> ReadKnownWidthInt(ByteReader& reader, int width,
                                    bool is_signed) {
  uint64_t bits;
  if (width <= 8) {
    ASSIGN_OR_RETURN(uint8_t byte, reader.ReadByte());
    bits = byte;
  } else if (width <= 64) {
    ASSIGN_OR_RETURN(int64_t value, reader.ReadSignedVarInt());
    bits = static_cast<uint64_t>(value);
  } else {
    return reader.Error("integers of ", width, " bits are not supported");
  }
  if (width < 64) {
    uint64_t mask = (uint64_t{1} << width) - 1;
    bits &= mask;
    if (is_signed && (bits >> (width - 1)) & 1) bits |= ~mask;
  }
  return static_cast<int64_t>(bits);
}

StatusOr<double> ReadKnownFloat(ByteReader& reader, ir::ElementType type) {
  if (!ir::IsFloat(type)) {
    return reader.Error("expected a float type, got ",
                        ir::ElementTypeName(type));
  }
  ASSIGN_OR_RETURN(int64_t bits, ReadKnownWidthInt(reader, ir::BitWidth(type),
                                                   /*is_signed=*/false));
  return ir::DecodeFloat(type, static_cast<uint64_t>(bits));
}

namespace {

// Number of elements of a static shape, or nullopt on overflow.
std::optional<uint64_t> CountElements(const std::vector<int64_t>& shape) {
  uint64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0) return std::nullopt;
    if (dim != 0 && count > UINT64_MAX / static_cast<uint64_t>(dim)) {
      return std::nullopt;
    }
    count *= static_cast<uint64_t>(dim);
  }
  return count;
}

}  // namespace

StatusOr<std::string> DenseTensorData(ByteReader& reader, const ir::Type& type,
                                      std::string_view blob, bool& splat) {
  if (!type.IsTensor()) {
    return reader.Error("dense elements need a tensor type, got ",
                        type.ToString());
  }
  std::optional<uint64_t> count = CountElements(type.shape());
  if (!count) {
    return reader.Error(
        "dense elements need a static shape of countable size, got ",
        type.ToString());
  }
  ir::Type element = type.element();
  ir::ElementType storage;
  if (element.is(ir::TypeKind::kElement)) {
    storage = element.element_type();
  } else if (element.is(ir::TypeKind::kQuantized)) {
    storage = element.quantized().storage_type;
  } else {
    return reader.Error("dense elements of ", type.ToString(),
                        " are not supported");
  }
  uint64_t width = ir::StorageBytes(storage);
  splat = false;
  if (ir::IsBool(storage)) {
    // i1 data is one byte per element, or bit-packed (LSB first), or one
    // byte for a splat; the reader of the format accepts all three.
    std::string data;
    uint64_t packed = (*count + 7) / 8;
    if (blob.size() == packed && blob.size() != *count) {
      data.resize(*count);
      for (uint64_t i = 0; i < *count; ++i) {
        data[i] = (static_cast<uint8_t>(blob[i / 8]) >> (i % 8)) & 1;
      }
    } else if (blob.size() == *count || blob.size() == 1) {
      data.resize(blob.size());
      for (size_t i = 0; i < blob.size(); ++i) data[i] = blob[i] != 0;
    } else {
      return reader.Error("dense i1 data of ", blob.size(),
                          " bytes does not fit ", type.ToString());
    }
    if (data.size() > 1 &&
        data.find(data[0] ? '\0' : '\1') == std::string::npos) {
      data.resize(1);
    }
    splat = data.size() == 1 && *count != 0;
    return data;
  }
  if (*count != 0 && blob.size() == width) {
    splat = true;
    return std::string(blob);
  }
  // An empty tensor has no elements to store, but MLIR's writer may still
  // store one (JAX's `dense<> : tensor<3x0xi16>` arrives with 2 bytes).
  if (*count == 0 && blob.size() <= width) return std::string();
  if (*count > blob.size() / width || *count * width != blob.size()) {
    return reader.Error("dense data of ", blob.size(), " bytes does not fit ",
                        type.ToString(), " (", width, " bytes per element)");
  }
  return std::string(blob);
}

}  // namespace kiln::parse::bytecode
