// A small MLIR bytecode writer for the bytecode reader's tests: it builds
// files byte by byte from the format's description (mlir/docs/
// BytecodeFormat.md), so tests can make exactly the structure they need,
// valid or broken.
#ifndef KILN_TESTS_PARSE_BYTECODE_TEST_WRITER_H_
#define KILN_TESTS_PARSE_BYTECODE_TEST_WRITER_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::parse::bytecode::testing {

// PrefixVarInt: the number of trailing zeros of the first byte counts the
// bytes that follow.
inline std::string VarInt(uint64_t value) {
  std::string out;
  if (value < (uint64_t{1} << 56)) {
    int extra = 0;
    while (extra < 7 && value >= (uint64_t{1} << (7 * (extra + 1)))) ++extra;
    uint64_t encoded = ((value << 1) | 1) << extra;
    for (int i = 0; i <= extra; ++i)
      out.push_back(static_cast<char>(encoded >> (8 * i)));
    return out;
  }
  out.push_back('\0');
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>(value >> (8 * i)));
  return out;
}

inline std::string SignedVarInt(int64_t value) {
  return VarInt((static_cast<uint64_t>(value) << 1) ^
                static_cast<uint64_t>(value >> 63));
}

inline std::string WithFlag(uint64_t value, bool flag) {
  return VarInt((value << 1) | (flag ? 1 : 0));
}

inline std::string Section(uint8_t id, std::string_view data) {
  return std::string(1, static_cast<char>(id)) + VarInt(data.size()) +
         std::string(data);
}

// Builds the tables of a file and assembles it around an IR section.
class Writer {
 public:
  // A portable artifact's tables start with builtin (0) and vhlo (1);
  // plain bytecode lists its own dialects.
  explicit Writer(uint64_t version = 6,
                  std::string producer = "StableHLO_v1.20.0",
                  std::vector<std::string> dialects = {"builtin", "vhlo"})
      : version_(version), producer_(std::move(producer)) {
    for (const std::string& dialect : dialects) Dialect(dialect);
  }

  uint64_t String(const std::string& text) {
    auto [it, inserted] = strings_.try_emplace(text, string_list_.size());
    if (inserted) string_list_.push_back(text);
    return it->second;
  }
  uint64_t Dialect(const std::string& name) {
    dialects_.push_back(String(name));
    return dialects_.size() - 1;
  }
  // An op name of a dialect (index in op name order).
  uint64_t OpName(uint64_t dialect, const std::string& name,
                  bool registered = true) {
    op_names_.push_back({dialect, String(name), registered});
    return op_names_.size() - 1;
  }
  // Attribute / type entries with a custom encoding (or text when !custom).
  uint64_t Attr(uint64_t dialect, std::string encoding, bool custom = true) {
    attrs_.push_back({dialect, std::move(encoding), custom});
    return attrs_.size() - 1;
  }
  uint64_t Type(uint64_t dialect, std::string encoding, bool custom = true) {
    types_.push_back({dialect, std::move(encoding), custom});
    return types_.size() - 1;
  }
  uint64_t Properties(std::string blob) {
    properties_.push_back(std::move(blob));
    return properties_.size() - 1;
  }

  // Builtin and VHLO helpers.
  uint64_t UnknownLoc() { return Attr(0, VarInt(15)); }
  uint64_t BuiltinString(const std::string& text) {
    return Attr(0, VarInt(2) + VarInt(String(text)));
  }
  uint64_t VhloString(const std::string& text) {
    return Attr(1, VarInt(14) + VarInt(String(text)));
  }
  uint64_t VhloType(uint64_t code) { return Type(1, VarInt(code)); }
  uint64_t VhloTensorType(const std::vector<int64_t>& shape, uint64_t element) {
    std::string encoding = VarInt(20) + VarInt(shape.size());
    for (int64_t dim : shape) encoding += SignedVarInt(dim);
    return Type(1, encoding + VarInt(element));
  }

  // The file: header, then sections in `order` (ids; the default is the
  // order MLIR writes).
  std::string Build(const std::string& ir, std::vector<uint8_t> order = {
                                               1, 3, 2, 4, 6, 5, 0, 8}) const {
    std::map<uint8_t, std::string> sections;
    sections[0] = StringSection();
    sections[1] = DialectSection();
    std::string attr_type,
        offsets = VarInt(attrs_.size()) + VarInt(types_.size());
    for (const auto* table : {&attrs_, &types_}) {
      for (const Entry& entry : *table) {
        attr_type += entry.encoding;
        offsets += VarInt(entry.dialect) + VarInt(1) +
                   WithFlag(entry.encoding.size(), entry.custom);
      }
    }
    sections[2] = attr_type;
    sections[3] = offsets;
    sections[4] = ir;
    sections[5] = "";
    sections[6] = VarInt(0);
    std::string properties = VarInt(properties_.size());
    for (const std::string& blob : properties_)
      properties += VarInt(blob.size()) + blob;
    sections[8] = properties;
    std::string out =
        "ML\xef"
        "R" +
        VarInt(version_) + producer_ + std::string(1, '\0');
    for (uint8_t id : order) {
      if (id == 8 && version_ < 5) continue;
      out += Section(id, sections[id]);
    }
    return out;
  }

 private:
  struct Entry {
    uint64_t dialect;
    std::string encoding;
    bool custom;
  };
  struct OpNameEntry {
    uint64_t dialect;
    uint64_t name;
    bool registered;
  };

  std::string StringSection() const {
    std::string out = VarInt(string_list_.size());
    for (auto it = string_list_.rbegin(); it != string_list_.rend(); ++it) {
      out += VarInt(it->size() + 1);
    }
    for (const std::string& text : string_list_)
      out += text + std::string(1, '\0');
    return out;
  }
  std::string DialectSection() const {
    std::string out = VarInt(dialects_.size());
    for (uint64_t name : dialects_) {
      out += version_ >= 1 ? WithFlag(name, false) : VarInt(name);
    }
    if (version_ >= 4) out += VarInt(op_names_.size());
    for (const OpNameEntry& op : op_names_) {
      out += VarInt(op.dialect) + VarInt(1);
      out += version_ >= 5 ? WithFlag(op.name, op.registered) : VarInt(op.name);
    }
    return out;
  }

  uint64_t version_;
  std::string producer_;
  std::map<std::string, uint64_t> strings_;
  std::vector<std::string> string_list_;
  std::vector<uint64_t> dialects_;
  std::vector<OpNameEntry> op_names_;
  std::vector<Entry> attrs_;
  std::vector<Entry> types_;
  std::vector<std::string> properties_;
};

}  // namespace kiln::parse::bytecode::testing

#endif  // KILN_TESTS_PARSE_BYTECODE_TEST_WRITER_H_
