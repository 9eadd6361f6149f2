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

// A file is a portable artifact when StableHLO wrote it: the producer names
// the VHLO version, which must be one Kiln reads.
bool IsPortableArtifact(std::string_view producer) {
  return StartsWith(producer, "StableHLO_v");
}

Status CheckArtifactVersion(std::string_view producer) {
  std::optional<Version> version = ParseProducer(producer);
  if (!version) {
    return InvalidArgumentError(
        "MLIR bytecode produced by '", EscapeForMessage(producer),
        "' is not a StableHLO portable artifact of a version Kiln can read "
        "(Kiln reads ",
        kSupportedRange, ")");
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

// Any other producer wrote plain bytecode of the dialects themselves
// (stablehlo, chlo, func, ...), which must not hold VHLO: its version would
// be unknown.
Status CheckPlainFile(std::string_view producer, const Container& file) {
  for (std::string_view dialect : file.dialects) {
    if (dialect != "vhlo") continue;
    return InvalidArgumentError(
        "MLIR bytecode produced by '", EscapeForMessage(producer),
        "' holds VHLO ops but is not a StableHLO portable artifact, which "
        "names its VHLO version in the producer (Kiln reads ",
        kSupportedRange, ", and plain bytecode of the StableHLO dialects)");
  }
  return OkStatus();
}

StatusOr<std::unique_ptr<ir::Module>> Read(std::string_view bytes,
                                           const BytecodeReadOptions& options) {
  ASSIGN_OR_RETURN(Header header, ReadHeader(bytes));
  bool artifact = IsPortableArtifact(header.producer);
  // Artifacts of unknown VHLO versions are refused before anything else.
  if (artifact) RETURN_IF_ERROR(CheckArtifactVersion(header.producer));
  ASSIGN_OR_RETURN(Container file, ReadContainer(bytes));
  if (!artifact) RETURN_IF_ERROR(CheckPlainFile(header.producer, file));
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
