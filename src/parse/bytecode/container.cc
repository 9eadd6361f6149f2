#include "parse/bytecode/container.h"

#include <array>

namespace kiln::parse::bytecode {
namespace {

Status ReadStrings(const Section& section, Container& file) {
  ByteReader reader(section.data, section.offset, "string section");
  ASSIGN_OR_RETURN(uint64_t count, reader.ReadCount("strings"));
  file.strings.resize(count);
  // Lengths come in reverse order; the strings are packed at the end of the
  // section, each with its NUL.
  uint64_t end = section.data.size();
  for (uint64_t i = count; i-- > 0;) {
    ASSIGN_OR_RETURN(uint64_t length, reader.ReadVarInt());
    if (length == 0 || length > end) {
      return reader.Error("string ", i, " has invalid length ", length);
    }
    uint64_t start = end - length;
    if (section.data[end - 1] != '\0') {
      return reader.Error("string ", i, " is not NUL-terminated");
    }
    file.strings[i] = section.data.substr(start, length - 1);
    end = start;
  }
  if (section.data.size() - reader.remaining() != end) {
    return reader.Error(
        "string lengths and string data do not meet: lengths end at ",
        section.data.size() - reader.remaining(), ", data starts at ", end);
  }
  return OkStatus();
}

StatusOr<std::string_view> ReadStringRef(ByteReader& reader,
                                         const Container& file) {
  ASSIGN_OR_RETURN(uint64_t index,
                   reader.ReadIndex("string", file.strings.size()));
  return file.strings[index];
}

Status ReadDialects(const Section& section, Container& file) {
  ByteReader reader(section.data, section.offset, "dialect section");
  ASSIGN_OR_RETURN(uint64_t count, reader.ReadCount("dialects"));
  file.dialects.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    if (file.version < kVersionDialectVersioning) {
      ASSIGN_OR_RETURN(std::string_view name, ReadStringRef(reader, file));
      file.dialects.push_back(name);
      continue;
    }
    uint64_t name_index;
    bool has_version;
    RETURN_IF_ERROR(reader.ReadVarIntWithFlag(name_index, has_version));
    if (name_index >= file.strings.size()) {
      return reader.Error("dialect name string index ", name_index,
                          " out of range");
    }
    file.dialects.push_back(file.strings[name_index]);
    if (has_version) {
      // Dialect versions are opaque to Kiln: VHLO keeps its version in the
      // producer string, and builtin has none.
      ASSIGN_OR_RETURN(Section version, reader.ReadSection());
      if (version.id != static_cast<uint8_t>(SectionId::kDialectVersions)) {
        return reader.Error("expected a dialect version section, got ",
                            SectionName(version.id));
      }
    }
  }
  if (file.version >= kVersionElideUnknownBlockArgLocation) {
    ASSIGN_OR_RETURN(uint64_t num_ops, reader.ReadCount("op names"));
    file.op_names.reserve(num_ops);
  }
  while (!reader.empty()) {
    ASSIGN_OR_RETURN(uint64_t dialect,
                     reader.ReadIndex("dialect", file.dialects.size()));
    ASSIGN_OR_RETURN(uint64_t num_names, reader.ReadCount("op names"));
    for (uint64_t i = 0; i < num_names; ++i) {
      OpNameEntry entry;
      entry.dialect = dialect;
      if (file.version < kVersionNativeProperties) {
        ASSIGN_OR_RETURN(entry.name, ReadStringRef(reader, file));
      } else {
        uint64_t name_index;
        bool registered;
        RETURN_IF_ERROR(reader.ReadVarIntWithFlag(name_index, registered));
        if (name_index >= file.strings.size()) {
          return reader.Error("op name string index ", name_index,
                              " out of range");
        }
        entry.name = file.strings[name_index];
        entry.registered = registered;
      }
      file.op_names.push_back(entry);
    }
  }
  return OkStatus();
}

Status ReadAttrTypeOffsets(const Section& offsets, const Section& data,
                           Container& file) {
  ByteReader reader(offsets.data, offsets.offset,
                    "attribute/type offset section");
  ASSIGN_OR_RETURN(uint64_t num_attrs, reader.ReadCount("attributes"));
  ASSIGN_OR_RETURN(uint64_t num_types, reader.ReadCount("types"));
  if (num_attrs + num_types > reader.remaining()) {
    return reader.Error(num_attrs, " attributes and ", num_types,
                        " types do not fit in the ", reader.remaining(),
                        " bytes that remain");
  }
  uint64_t data_offset = 0;
  auto read_entries = [&](std::vector<AttrTypeEntry>& entries, uint64_t count,
                          std::string_view kind) -> Status {
    entries.reserve(count);
    while (entries.size() < count) {
      ASSIGN_OR_RETURN(uint64_t dialect,
                       reader.ReadIndex("dialect", file.dialects.size()));
      ASSIGN_OR_RETURN(uint64_t group_size, reader.ReadCount(kind));
      if (group_size > count - entries.size()) {
        return reader.Error("group of ", group_size, " ", kind, " exceeds the ",
                            count, " declared");
      }
      for (uint64_t i = 0; i < group_size; ++i) {
        AttrTypeEntry entry;
        entry.dialect = dialect;
        uint64_t size;
        RETURN_IF_ERROR(reader.ReadVarIntWithFlag(size, entry.custom));
        if (size > data.data.size() - data_offset) {
          return reader.Error(kind, " entry ", entries.size(), " of ", size,
                              " bytes runs past the end of the attribute/type "
                              "section");
        }
        entry.data = data.data.substr(data_offset, size);
        entry.offset = data.offset + data_offset;
        data_offset += size;
        entries.push_back(entry);
      }
    }
    return OkStatus();
  };
  RETURN_IF_ERROR(read_entries(file.attributes, num_attrs, "attributes"));
  RETURN_IF_ERROR(read_entries(file.types, num_types, "types"));
  if (!reader.empty()) return reader.Error("unexpected trailing bytes");
  return OkStatus();
}

// AsmResourceEntryKind.
enum ResourceKind : uint8_t {
  kBlobResource = 0,
  kBoolResource = 1,
  kStringResource = 2
};

Status ReadResourceGroup(ByteReader& offsets, ByteReader& data, Container& file,
                         std::optional<uint64_t> dialect) {
  ASSIGN_OR_RETURN(uint64_t count, offsets.ReadCount("resources"));
  for (uint64_t i = 0; i < count; ++i) {
    ASSIGN_OR_RETURN(std::string_view key, ReadStringRef(offsets, file));
    ASSIGN_OR_RETURN(uint64_t size, offsets.ReadVarInt());
    ASSIGN_OR_RETURN(uint8_t kind, offsets.ReadByte());
    uint64_t entry_offset = data.offset();
    ASSIGN_OR_RETURN(std::string_view bytes, data.ReadBytes(size));
    if (!dialect) continue;  // external resources are not Kiln's
    ResourceEntry entry;
    entry.dialect = *dialect;
    entry.key = key;
    if (!bytes.empty()) {
      if (kind != kBlobResource) {
        return offsets.Error("resource '", EscapeForMessage(key),
                             "' of dialect '", file.dialects[*dialect],
                             "' has kind ", int{kind}, ", expected a blob");
      }
      ByteReader blob(bytes, entry_offset, "resource", ByteReader::kNoIndex,
                      key);
      ASSIGN_OR_RETURN(entry.alignment, blob.ReadVarInt());
      ASSIGN_OR_RETURN(uint64_t blob_size, blob.ReadVarInt());
      RETURN_IF_ERROR(blob.AlignTo(entry.alignment));
      ASSIGN_OR_RETURN(entry.blob, blob.ReadBytes(blob_size));
      if (!blob.empty()) return blob.Error("unexpected trailing bytes");
      entry.has_blob = true;
    }
    file.resources.push_back(entry);
  }
  return OkStatus();
}

Status ReadResources(const Section& data_section, const Section& offset_section,
                     Container& file) {
  ByteReader offsets(offset_section.data, offset_section.offset,
                     "resource offset section");
  ByteReader data(data_section.data, data_section.offset, "resource section");
  ASSIGN_OR_RETURN(uint64_t num_external, offsets.ReadCount("resource groups"));
  for (uint64_t i = 0; i < num_external; ++i) {
    RETURN_IF_ERROR(ReadStringRef(offsets, file));
    RETURN_IF_ERROR(ReadResourceGroup(offsets, data, file, std::nullopt));
  }
  while (!offsets.empty()) {
    ASSIGN_OR_RETURN(uint64_t dialect,
                     offsets.ReadIndex("dialect", file.dialects.size()));
    RETURN_IF_ERROR(ReadResourceGroup(offsets, data, file, dialect));
  }
  return OkStatus();
}

Status ReadProperties(const Section& section, Container& file) {
  if (section.data.empty()) return OkStatus();
  ByteReader reader(section.data, section.offset, "properties section");
  ASSIGN_OR_RETURN(uint64_t count, reader.ReadCount("properties"));
  file.properties.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    Section blob;
    blob.id = static_cast<uint8_t>(SectionId::kProperties);
    ASSIGN_OR_RETURN(uint64_t size, reader.ReadVarInt());
    blob.offset = reader.offset();
    ASSIGN_OR_RETURN(blob.data, reader.ReadBytes(size));
    file.properties.push_back(blob);
  }
  if (!reader.empty()) {
    return reader.Error("unexpected trailing bytes after ", count,
                        " properties");
  }
  return OkStatus();
}

}  // namespace

StatusOr<Header> ReadHeader(std::string_view bytes) {
  if (bytes.substr(0, kMagic.size()) != kMagic) {
    return InvalidArgumentError(
        "not MLIR bytecode: the file does not start with "
        "the magic bytes 4D 4C EF 52");
  }
  ByteReader reader(bytes.substr(kMagic.size()), kMagic.size(),
                    "bytecode header");
  Header header;
  ASSIGN_OR_RETURN(header.version, reader.ReadVarInt());
  ASSIGN_OR_RETURN(header.producer, reader.ReadNullTerminated());
  return header;
}

StatusOr<Container> ReadContainer(std::string_view bytes) {
  ASSIGN_OR_RETURN(Header header, ReadHeader(bytes));
  if (header.version > kMaxBytecodeVersion) {
    return InvalidArgumentError(
        "MLIR bytecode version ", header.version, " (producer '",
        EscapeForMessage(header.producer),
        "') is newer than the newest Kiln reads (", kMaxBytecodeVersion, ")");
  }
  Container file;
  file.version = header.version;
  file.producer = header.producer;

  size_t start = kMagic.size();
  {
    // Skip the header again to find where the sections start.
    ByteReader reader(bytes.substr(start), start, "bytecode header");
    RETURN_IF_ERROR(reader.ReadVarInt());
    RETURN_IF_ERROR(reader.ReadNullTerminated());
    start = reader.offset();
  }
  ByteReader reader(bytes.substr(start), start, "bytecode file");
  std::array<std::optional<Section>, kNumSectionIds> sections;
  while (!reader.empty()) {
    ASSIGN_OR_RETURN(Section section, reader.ReadSection());
    if (sections[section.id]) {
      return reader.Error("duplicate ", SectionName(section.id));
    }
    sections[section.id] = section;
  }
  for (SectionId required :
       {SectionId::kString, SectionId::kDialect, SectionId::kAttrType,
        SectionId::kAttrTypeOffset, SectionId::kIR}) {
    if (!sections[static_cast<int>(required)]) {
      return InvalidArgumentError("MLIR bytecode has no ",
                                  SectionName(static_cast<uint8_t>(required)));
    }
  }
  auto section = [&](SectionId id) -> const Section& {
    return *sections[static_cast<int>(id)];
  };
  RETURN_IF_ERROR(ReadStrings(section(SectionId::kString), file));
  RETURN_IF_ERROR(ReadDialects(section(SectionId::kDialect), file));
  RETURN_IF_ERROR(ReadAttrTypeOffsets(section(SectionId::kAttrTypeOffset),
                                      section(SectionId::kAttrType), file));
  bool has_resources =
      sections[static_cast<int>(SectionId::kResource)].has_value();
  bool has_offsets =
      sections[static_cast<int>(SectionId::kResourceOffset)].has_value();
  if (has_resources != has_offsets) {
    return InvalidArgumentError("MLIR bytecode has a ",
                                has_resources
                                    ? "resource section without a resource "
                                      "offset section"
                                    : "resource offset section without a "
                                      "resource section");
  }
  if (has_resources) {
    RETURN_IF_ERROR(ReadResources(section(SectionId::kResource),
                                  section(SectionId::kResourceOffset), file));
  }
  if (sections[static_cast<int>(SectionId::kProperties)]) {
    RETURN_IF_ERROR(ReadProperties(section(SectionId::kProperties), file));
  }
  file.ir = section(SectionId::kIR);
  return file;
}

}  // namespace kiln::parse::bytecode
