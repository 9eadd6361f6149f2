// The container level of an MLIR bytecode file: the header, the top-level
// sections (in any order) and the tables they define: strings, dialects and
// op names, attribute/type entries, dialect resources and op properties.
// Nothing here knows about any dialect; attributes, types and the IR are
// decoded from these tables by the other parts of the reader.
#ifndef KILN_PARSE_BYTECODE_CONTAINER_H_
#define KILN_PARSE_BYTECODE_CONTAINER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "parse/bytecode/encoding.h"

namespace kiln::parse::bytecode {

struct OpNameEntry {
  uint64_t dialect = 0;
  std::string_view name;  // without the dialect prefix
  // Whether the op was registered in the writer's context (version >= 5).
  std::optional<bool> registered;
};

// One attribute or type: the bytes of its encoding, either a dialect's own
// encoding (`custom`) or NUL-terminated assembly text.
struct AttrTypeEntry {
  uint64_t dialect = 0;
  bool custom = false;
  std::string_view data;
  uint64_t offset = 0;  // file offset of data
};

// A dialect resource (the blobs of `dense_resource` attributes), in the
// order that resource handles index.
struct ResourceEntry {
  uint64_t dialect = 0;
  std::string_view key;
  bool has_blob = false;
  uint64_t alignment = 0;
  std::string_view blob;
};

struct Container {
  uint64_t version = 0;
  std::string_view producer;
  std::vector<std::string_view> strings;
  std::vector<std::string_view> dialects;
  std::vector<OpNameEntry> op_names;
  std::vector<AttrTypeEntry> attributes;
  std::vector<AttrTypeEntry> types;
  std::vector<ResourceEntry> resources;
  // Raw property blobs, indexed as ops refer to them (version >= 5).
  std::vector<Section> properties;
  Section ir;
};

// Reads the header and every top-level section of `bytes` and builds the
// tables. Checks everything that can be checked without decoding
// attributes, types or ops.
StatusOr<Container> ReadContainer(std::string_view bytes);

// Reads just the version and producer (for early checks and messages).
struct Header {
  uint64_t version = 0;
  std::string_view producer;
};
StatusOr<Header> ReadHeader(std::string_view bytes);

}  // namespace kiln::parse::bytecode

#endif  // KILN_PARSE_BYTECODE_CONTAINER_H_
