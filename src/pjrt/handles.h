// The objects behind PJRT's opaque handles, and the checks that a handle
// passed in is one of Kiln's.
//
// Each handle struct begins with a tag naming its kind (after the function
// table for PJRT_Memory, whose layout PJRT fixes), so a handle of the wrong
// kind, or memory that is no handle at all but readable, is reported as an
// INVALID_ARGUMENT instead of being used. Handles refer to runtime objects;
// they add only what the C ABI needs to hand out stable pointers (arrays of
// handles, strings, dimension arrays) for as long as the object lives.
#ifndef KILN_PJRT_HANDLES_H_
#define KILN_PJRT_HANDLES_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "exec/ffi.h"
#include "pjrt/named_values.h"
#include "pjrt_c_api.h"
#include "runtime/buffer.h"
#include "runtime/client.h"
#include "runtime/event.h"
#include "runtime/executable.h"
#include "runtime/topology.h"

// A device layout handed out by the Layouts extension: a dense layout's
// minor-to-major order, one entry per dimension.
struct PJRT_Layouts_MemoryLayout {
  std::vector<int64_t> minor_to_major;
};

namespace kiln::pjrt {

// A tag from eight ASCII characters (read as a little-endian integer, so
// the tag shows as text in a memory dump).
constexpr uint64_t MakeHandleTag(const char (&text)[9]) {
  uint64_t tag = 0;
  for (int i = 7; i >= 0; --i) tag = (tag << 8) | static_cast<uint8_t>(text[i]);
  return tag;
}

enum class HandleTag : uint64_t {
  kClient = MakeHandleTag("kln:clnt"),
  kDevice = MakeHandleTag("kln:devc"),
  kDescription = MakeHandleTag("kln:desc"),
  kMemory = MakeHandleTag("kln:memo"),
  kBuffer = MakeHandleTag("kln:bufr"),
  kEvent = MakeHandleTag("kln:evnt"),
  kTopology = MakeHandleTag("kln:topo"),
  kExecutable = MakeHandleTag("kln:exec"),
  kLoadedExecutable = MakeHandleTag("kln:load"),
  kExecuteContext = MakeHandleTag("kln:ectx"),
};

// What PJRT_Executable and PJRT_LoadedExecutable handles share: the
// runtime executable, the options it was compiled with, and the stable
// arrays and strings the query slots hand out.
struct ExecutableState {
  std::shared_ptr<runtime::Executable> executable;
  // The runtime client it was compiled for (its devices).
  const runtime::Client* client = nullptr;
  // The serialized xla.CompileOptionsProto it was compiled with.
  std::string compile_options;
  // The program as compiled, MLIR (for Serialize).
  std::string program;
  // For a program given as HLO: that module as a serialized
  // xla.HloModuleProtoWithConfig, which OptimizedProgram returns (format
  // "hlo_with_config"), so the framework reads back the HLO it sent rather
  // than StableHLO it may not convert (chlo ops); empty otherwise.
  std::string hlo_with_config;
  std::string fingerprint;  // hex
  std::vector<PJRT_Buffer_Type> output_types;
  std::vector<int64_t> output_dims;  // all outputs' dimensions, concatenated
  std::vector<size_t> output_ranks;
  std::vector<const char*> output_kinds;
  std::vector<size_t> output_kind_sizes;
  std::vector<const char*> parameter_kinds;
  std::vector<size_t> parameter_kind_sizes;
  NamedValueList cost_properties;
  // Serialized xla.OpSharding protos (Shardings extension); empty for a
  // program of one partition.
  std::vector<const char*> parameter_shardings;
  std::vector<size_t> parameter_sharding_sizes;
  std::vector<const char*> output_shardings;
  std::vector<size_t> output_sharding_sizes;
  // Layouts extension: the parameters' and outputs' layouts, owned here.
  std::vector<std::unique_ptr<PJRT_Layouts_MemoryLayout>> parameter_layouts;
  std::vector<std::unique_ptr<PJRT_Layouts_MemoryLayout>> output_layouts;
  std::vector<PJRT_Layouts_MemoryLayout*> parameter_layout_handles;
  std::vector<PJRT_Layouts_MemoryLayout*> output_layout_handles;
};

}  // namespace kiln::pjrt

struct PJRT_DeviceDescription {
  kiln::pjrt::HandleTag tag = kiln::pjrt::HandleTag::kDescription;
  kiln::runtime::DeviceDescription description;
  kiln::pjrt::NamedValueList attributes;
};

struct PJRT_Device {
  kiln::pjrt::HandleTag tag = kiln::pjrt::HandleTag::kDevice;
  kiln::runtime::Device* device = nullptr;
  PJRT_Client* client = nullptr;
  PJRT_DeviceDescription description;
  std::vector<PJRT_Memory*> memories;  // in runtime MemoryKind order
  PJRT_Memory* default_memory = nullptr;
};

namespace kiln::pjrt {

// Kiln's PJRT_Memory: PJRT fixes its first member (the function table).
struct Memory : PJRT_Memory {
  HandleTag tag = HandleTag::kMemory;
  runtime::MemorySpace* memory = nullptr;
  PJRT_Client* client = nullptr;
  std::vector<PJRT_Device*> devices;  // the devices that can address it

  // Per-memory user data (PJRT_Memory_FunctionTable::set_user_data): each
  // value's destructor runs when it is replaced or the memory goes away.
  std::mutex user_data_mutex;
  std::map<const void*, std::pair<void*, void (*)(void*)>> user_data;

  Memory();
  ~Memory();
};

}  // namespace kiln::pjrt

struct PJRT_TopologyDescription {
  kiln::pjrt::HandleTag tag = kiln::pjrt::HandleTag::kTopology;
  kiln::runtime::Topology topology;
  // A client's topology belongs to the client (destroying it is a no-op);
  // one made by TopologyDescription_Create or _Deserialize to the caller.
  bool owned_by_client = false;
  std::vector<std::unique_ptr<PJRT_DeviceDescription>> owned_descriptions;
  std::vector<PJRT_DeviceDescription*> descriptions;
  kiln::pjrt::NamedValueList attributes;
};

struct PJRT_Client {
  kiln::pjrt::HandleTag tag = kiln::pjrt::HandleTag::kClient;
  std::unique_ptr<kiln::runtime::Client> runtime;
  std::vector<std::unique_ptr<PJRT_Device>> owned_devices;
  std::vector<PJRT_Device*> devices;              // by id, in every process
  std::vector<PJRT_Device*> addressable_devices;  // this process's
  std::vector<std::unique_ptr<kiln::pjrt::Memory>> owned_memories;
  std::vector<PJRT_Memory*> memories;  // by id
  std::vector<PJRT_Memory*> addressable_memories;
  std::unique_ptr<PJRT_TopologyDescription> topology;

  PJRT_Device* device_handle(const kiln::runtime::Device* device) const {
    return devices[device->id()];
  }
  PJRT_Memory* memory_handle(const kiln::runtime::MemorySpace* memory) const {
    return memories[memory->id()];
  }
};

struct PJRT_Buffer {
  kiln::pjrt::HandleTag tag = kiln::pjrt::HandleTag::kBuffer;
  std::shared_ptr<kiln::runtime::Buffer> buffer;
  PJRT_Client* client = nullptr;

  PJRT_Buffer(std::shared_ptr<kiln::runtime::Buffer> b, PJRT_Client* c)
      : buffer(std::move(b)), client(c) {}

  // The dimensions (Dimensions hands out the runtime buffer's own array).
  const std::vector<int64_t>& dims() const { return buffer->shape().dims(); }
  // The buffer's dimension order, the last dimension the most minor unless
  // the buffer keeps another: an array that stays put for
  // GetMemoryLayout's callers, made on the first call (a dispatch creates
  // and destroys buffer handles that are never asked).
  const std::vector<int64_t>& minor_to_major();

 private:
  std::once_flag minor_to_major_once_;
  std::vector<int64_t> minor_to_major_;
};

struct PJRT_Executable {
  kiln::pjrt::HandleTag tag = kiln::pjrt::HandleTag::kExecutable;
  std::shared_ptr<const kiln::pjrt::ExecutableState> state;
};

struct PJRT_LoadedExecutable {
  kiln::pjrt::HandleTag tag = kiln::pjrt::HandleTag::kLoadedExecutable;
  std::shared_ptr<const kiln::pjrt::ExecutableState> state;
  PJRT_Client* client = nullptr;
  std::vector<PJRT_Device*> addressable_devices;   // replica-major
  std::vector<PJRT_LogicalDeviceIds> logical_ids;  // of each of those
  std::atomic<bool> deleted{false};
};

struct PJRT_Event {
  kiln::pjrt::HandleTag tag = kiln::pjrt::HandleTag::kEvent;
  std::shared_ptr<kiln::runtime::Event> event;
  // Only events made by PJRT_Event_Create may be set by the caller.
  bool settable = false;
};

// PJRT_ExecuteContext: the FFI user data that executions given this
// context hand to FFI handlers (PJRT_FFI_UserData_Add fills it). Runs hold
// it too, so destroying the context while they run is safe.
struct PJRT_ExecuteContext {
  kiln::pjrt::HandleTag tag = kiln::pjrt::HandleTag::kExecuteContext;
  std::shared_ptr<kiln::exec::FfiUserData> user_data =
      std::make_shared<kiln::exec::FfiUserData>();
};

namespace kiln::pjrt {

// The checked handle behind a pointer: INVALID_ARGUMENT naming `what` (e.g.
// "PJRT_Buffer_Delete_Args.buffer") when it is null or not a Kiln handle of
// that kind.
StatusOr<PJRT_Client*> CheckClient(PJRT_Client* client, std::string_view what);
StatusOr<PJRT_Device*> CheckDevice(PJRT_Device* device, std::string_view what);
StatusOr<PJRT_DeviceDescription*> CheckDescription(
    PJRT_DeviceDescription* description, std::string_view what);
StatusOr<Memory*> CheckMemory(PJRT_Memory* memory, std::string_view what);
StatusOr<PJRT_Buffer*> CheckBuffer(PJRT_Buffer* buffer, std::string_view what);
StatusOr<PJRT_Event*> CheckEvent(PJRT_Event* event, std::string_view what);
StatusOr<PJRT_Executable*> CheckExecutable(PJRT_Executable* executable,
                                           std::string_view what);
StatusOr<PJRT_LoadedExecutable*> CheckLoadedExecutable(
    PJRT_LoadedExecutable* executable, std::string_view what);
StatusOr<PJRT_ExecuteContext*> CheckExecuteContext(PJRT_ExecuteContext* context,
                                                   std::string_view what);
StatusOr<const PJRT_TopologyDescription*> CheckTopology(
    const PJRT_TopologyDescription* topology, std::string_view what);

// INVALID_ARGUMENT unless `owner` is `client` ("`what` belongs to another
// client").
Status CheckSameClient(const PJRT_Client* owner, const PJRT_Client* client,
                       std::string_view what);

// A new event handle for `event`; the caller owns it.
PJRT_Event* NewEventHandle(std::shared_ptr<runtime::Event> event);

// A new buffer handle for `buffer` of `client`; the caller owns it.
PJRT_Buffer* NewBufferHandle(std::shared_ptr<runtime::Buffer> buffer,
                             PJRT_Client* client);

}  // namespace kiln::pjrt

#endif  // KILN_PJRT_HANDLES_H_
