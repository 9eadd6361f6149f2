#include "parse/bytecode/reader.h"

#include <array>

#include "parse/bytecode/attr_type_table.h"
#include "parse/bytecode/container.h"
#include "parse/bytecode/ir_reader.h"

namespace kiln::parse::bytecode {
namespace {

using Version = std::array<int64_t, 3>;

// The VHLO versions Kiln reads. Patch releases do not change VHLO, so any
// 1.20.x is read as 1.20.
constexpr Version kMinVersion = {0, 9, 0};
constexpr Version kMaxVersion = {1, 20, 0};
constexpr std::string_view kSupportedRange =
    "StableHLO portable artifacts, VHLO 0.9.0 to 1.20.0";

// "StableHLO_v1.2.3" -> {1, 2, 3}.
std::optional<Version> ParseProducer(std::string_view producer) {
  constexpr std::string_view kPrefix = "StableHLO_v";
  if (!StartsWith(producer, kPrefix)) return std::nullopt;
  std::vector<std::string_view> parts =
      StrSplit(producer.substr(kPrefix.size()), '.');
  if (parts.size() != 3) return std::nullopt;
  Version version;
  for (int i = 0; i < 3; ++i) {
    std::optional<int64_t> number = ParseInt64(parts[i]);
    if (!number || *number < 0) return std::nullopt;
    version[i] = *number;
  }
  return version;
}

Status CheckProducer(std::string_view producer) {
  std::optional<Version> version = ParseProducer(producer);
  if (!version) {
    return InvalidArgumentError(
        "MLIR bytecode produced by '", EscapeForMessage(producer),
        "' is not a StableHLO portable artifact (Kiln reads ", kSupportedRange,
        ")");
  }
  bool too_old = *version < kMinVersion;
  bool too_new = Version{(*version)[0], (*version)[1], 0} > kMaxVersion;
  if (too_old || too_new) {
    return InvalidArgumentError(
        "StableHLO portable artifact produced by '", EscapeForMessage(producer),
        "' is ", too_old ? "older" : "newer", " than the versions Kiln reads (",
        kSupportedRange, ")");
  }
  return OkStatus();
}

StatusOr<std::unique_ptr<ir::Module>> Read(std::string_view bytes,
                                           const BytecodeReadOptions& options) {
  ASSIGN_OR_RETURN(Header header, ReadHeader(bytes));
  RETURN_IF_ERROR(CheckProducer(header.producer));
  ASSIGN_OR_RETURN(Container file, ReadContainer(bytes));
  AttrTypeTable table(file, options);
  IrReader ir_reader(file, table);
  ASSIGN_OR_RETURN(std::unique_ptr<ir::Operation> module_op,
                   ir_reader.ReadModuleOp());
  auto module = std::make_unique<ir::Module>(std::move(module_op));
  module->resources() = std::move(table.resources());
  return module;
}

}  // namespace

bool LooksLikeBytecode(std::string_view bytes) {
  return bytes.substr(0, kMagic.size()) == kMagic;
}

StatusOr<std::unique_ptr<ir::Module>> ReadBytecodeModule(
    std::string_view bytes, std::string_view source_name,
    const BytecodeReadOptions& options) {
  StatusOr<std::unique_ptr<ir::Module>> module = Read(bytes, options);
  if (!module.ok()) return module.status().WithContext(source_name);
  (*module)->set_source_name(std::string(source_name));
  return module;
}

}  // namespace kiln::parse::bytecode
