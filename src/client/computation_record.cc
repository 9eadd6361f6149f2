#include "client/computation_record.h"

#include <cstdint>

#include "base/strings.h"

namespace kiln::client::internal {
namespace {

constexpr std::string_view kMagic = "KILNCMP";
constexpr char kFormatVersion = 1;

void PutUint64(std::string& out, uint64_t value) {
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>(value >> (8 * i)));
}

void PutBytes(std::string& out, std::string_view bytes) {
  PutUint64(out, bytes.size());
  out.append(bytes);
}

// Reads the fields back in order; every length is checked against what is
// left.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : rest_(bytes) {}

  StatusOr<uint64_t> Uint64(std::string_view field) {
    if (rest_.size() < 8) return Truncated(field);
    uint64_t value = 0;
    for (int i = 0; i < 8; ++i) {
      value |= uint64_t{static_cast<unsigned char>(rest_[i])} << (8 * i);
    }
    rest_.remove_prefix(8);
    return value;
  }

  StatusOr<std::string> Bytes(std::string_view field) {
    ASSIGN_OR_RETURN(uint64_t size, Uint64(field));
    if (size > rest_.size()) return Truncated(field);
    std::string value(rest_.substr(0, size));
    rest_.remove_prefix(size);
    return value;
  }

  size_t remaining() const { return rest_.size(); }

 private:
  Status Truncated(std::string_view field) const {
    return DataLossError("computation record is truncated in its ", field);
  }
  std::string_view rest_;
};

}  // namespace

std::string EncodeComputationRecord(const ComputationRecord& record) {
  std::string out(kMagic);
  out.push_back(kFormatVersion);
  PutBytes(out, record.platform_name);
  PutBytes(out, record.platform_version);
  PutBytes(out, record.name);
  PutBytes(out, record.program);
  PutBytes(out, record.compile_options);
  PutUint64(out, record.devices.size());
  for (const std::string& device : record.devices) PutBytes(out, device);
  PutUint64(out, record.donated_parameters.size());
  for (int parameter : record.donated_parameters) {
    PutUint64(out, static_cast<uint64_t>(static_cast<int64_t>(parameter)));
  }
  PutBytes(out, record.executable);
  return out;
}

StatusOr<ComputationRecord> DecodeComputationRecord(std::string_view bytes) {
  if (bytes.size() < kMagic.size() + 1 ||
      bytes.substr(0, kMagic.size()) != kMagic) {
    return DataLossError(
        "not a Kiln computation record (it does not begin "
        "with \"KILNCMP\")");
  }
  if (bytes[kMagic.size()] != kFormatVersion) {
    return DataLossError(
        "computation record of format ", static_cast<int>(bytes[kMagic.size()]),
        "; this client reads format ", static_cast<int>(kFormatVersion));
  }
  Reader reader(bytes.substr(kMagic.size() + 1));
  ComputationRecord record;
  ASSIGN_OR_RETURN(record.platform_name, reader.Bytes("platform name"));
  ASSIGN_OR_RETURN(record.platform_version, reader.Bytes("platform version"));
  ASSIGN_OR_RETURN(record.name, reader.Bytes("name"));
  ASSIGN_OR_RETURN(record.program, reader.Bytes("program"));
  ASSIGN_OR_RETURN(record.compile_options, reader.Bytes("compile options"));
  ASSIGN_OR_RETURN(uint64_t num_devices, reader.Uint64("device count"));
  // Each device takes at least its 8-byte length.
  if (num_devices > reader.remaining() / 8) {
    return DataLossError("computation record claims ", num_devices,
                         " devices in ", reader.remaining(), " bytes");
  }
  for (uint64_t i = 0; i < num_devices; ++i) {
    ASSIGN_OR_RETURN(std::string device, reader.Bytes("devices"));
    record.devices.push_back(std::move(device));
  }
  ASSIGN_OR_RETURN(uint64_t num_donated, reader.Uint64("donation count"));
  if (num_donated > reader.remaining() / 8) {
    return DataLossError("computation record claims ", num_donated,
                         " donated parameters in ", reader.remaining(),
                         " bytes");
  }
  for (uint64_t i = 0; i < num_donated; ++i) {
    ASSIGN_OR_RETURN(uint64_t parameter, reader.Uint64("donations"));
    int64_t value = static_cast<int64_t>(parameter);
    if (value < 0 || value > INT32_MAX) {
      return DataLossError("computation record donates parameter ", value);
    }
    record.donated_parameters.push_back(static_cast<int>(value));
  }
  ASSIGN_OR_RETURN(record.executable, reader.Bytes("executable"));
  if (reader.remaining() != 0) {
    return DataLossError("computation record has ", reader.remaining(),
                         " bytes after its last field");
  }
  return record;
}

}  // namespace kiln::client::internal
