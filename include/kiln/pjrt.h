// C++ types over the PJRT C handles of any plugin: client, device, memory,
// buffer, loaded executable, and event (as a future with callbacks).
//
// Each type owns its handle and destroys it through the plugin's table.
// Buffers and executables keep their client alive; devices and memories
// belong to the client and live as long as it. Errors are Kiln Statuses
// with the plugin's code and message.
#ifndef KILN_CLIENT_PJRT_H_
#define KILN_CLIENT_PJRT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "kiln/key_value_store.h"
#include "kiln/plugin.h"
#include "kiln/shape.h"
#include "pjrt_c_api.h"

namespace kiln::client {

class Client;
class Device;

// A PJRT event viewed as a future. An empty Future (default-constructed)
// is ready with OK.
class Future {
 public:
  Future() = default;
  // Takes ownership of `event` (may be null: an empty future).
  Future(std::shared_ptr<const Plugin> plugin, PJRT_Event* event);
  ~Future();
  Future(Future&& other) noexcept;
  Future& operator=(Future&& other) noexcept;
  Future(const Future&) = delete;
  Future& operator=(const Future&) = delete;

  bool empty() const { return event_ == nullptr; }
  // Whether the event has fired (with success or an error).
  StatusOr<bool> IsReady() const;
  // Blocks until the event fires; returns its status.
  Status Await() const;
  // Calls `callback` exactly once with the event's status: at once on this
  // thread if it has fired, else later on a plugin thread. The future is
  // consumed; the event is destroyed after the callback returns. An error
  // registering the callback is returned and the callback is not called.
  Status OnReady(std::function<void(Status)> callback) &&;

  PJRT_Event* release();

 private:
  std::shared_ptr<const Plugin> plugin_;
  PJRT_Event* event_ = nullptr;
};

// A memory space of a device ("device", "pinned_host", ...).
class Memory {
 public:
  PJRT_Memory* handle() const { return handle_; }
  int id() const { return id_; }
  const std::string& kind() const { return kind_; }
  // PJRT_Memory_Kind_Id; absent for plugins older than 0.48.
  std::optional<int> kind_id() const { return kind_id_; }
  const std::string& debug_string() const { return debug_string_; }
  const std::string& to_string() const { return to_string_; }
  // The devices that can address this memory.
  const std::vector<Device*>& devices() const { return devices_; }

 private:
  friend class Client;
  PJRT_Memory* handle_ = nullptr;
  int id_ = 0;
  std::string kind_;
  std::optional<int> kind_id_;
  std::string debug_string_;
  std::string to_string_;
  std::vector<Device*> devices_;
};

// A device's allocator statistics (PJRT_Device_MemoryStats); fields the
// plugin does not report are nullopt.
struct DeviceMemoryStats {
  int64_t bytes_in_use = 0;
  std::optional<int64_t> peak_bytes_in_use;
  std::optional<int64_t> num_allocs;
  std::optional<int64_t> largest_alloc_size;
  std::optional<int64_t> bytes_limit;
  std::optional<int64_t> bytes_reserved;
  std::optional<int64_t> peak_bytes_reserved;
  std::optional<int64_t> bytes_reservable_limit;
  std::optional<int64_t> largest_free_block_bytes;
  std::optional<int64_t> pool_bytes;
  std::optional<int64_t> peak_pool_bytes;
};

// A device of a client, with its description.
class Device {
 public:
  PJRT_Device* handle() const { return handle_; }
  int id() const { return id_; }
  int process_index() const { return process_index_; }
  // -1 when the plugin does not report one.
  int local_hardware_id() const { return local_hardware_id_; }
  bool addressable() const { return addressable_; }
  const std::string& kind() const { return kind_; }
  const std::string& debug_string() const { return debug_string_; }
  const std::string& to_string() const { return to_string_; }
  const std::vector<NamedValue>& attributes() const { return attributes_; }
  // The memories this device addresses, and its default one (null when the
  // plugin reports none).
  const std::vector<Memory*>& memories() const { return memories_; }
  Memory* default_memory() const { return default_memory_; }

  StatusOr<DeviceMemoryStats> GetMemoryStats() const;

 private:
  friend class Client;
  const Client* client_ = nullptr;
  PJRT_Device* handle_ = nullptr;
  int id_ = 0;
  int process_index_ = 0;
  int local_hardware_id_ = -1;
  bool addressable_ = false;
  std::string kind_;
  std::string debug_string_;
  std::string to_string_;
  std::vector<NamedValue> attributes_;
  std::vector<Memory*> memories_;
  Memory* default_memory_ = nullptr;
};

// A buffer on a device. Destroying it releases the plugin's buffer.
class Buffer {
 public:
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  PJRT_Buffer* handle() const { return handle_; }
  const Shape& shape() const { return shape_; }
  // The device holding the buffer (null if the plugin did not say).
  Device* device() const { return device_; }
  const Client& client() const { return *client_; }

  // An event that fires when the buffer's contents are final.
  StatusOr<Future> ReadyEvent() const;
  // Blocks until the buffer is ready; returns its status (an execution
  // error reaches the caller here).
  Status AwaitReady() const;
  // Starts a copy of the dense row-major contents into `dst` (exactly
  // shape().ByteSize() bytes, alive until the future fires).
  StatusOr<Future> ToHostAsync(void* dst, size_t dst_size) const;
  // Copies the contents into `dst` and waits for the copy.
  Status ToHost(void* dst, size_t dst_size) const;
  StatusOr<size_t> OnDeviceSizeInBytes() const;
  StatusOr<std::unique_ptr<Buffer>> CopyToDevice(const Device& device) const;
  StatusOr<std::unique_ptr<Buffer>> CopyToMemory(const Memory& memory) const;
  // Frees the device memory; the handle stays valid for IsDeleted.
  Status Delete();
  StatusOr<bool> IsDeleted() const;
  StatusOr<Memory*> GetMemory() const;

 private:
  friend class Client;
  friend class Executable;
  Buffer(std::shared_ptr<const Client> client, PJRT_Buffer* handle)
      : client_(std::move(client)), handle_(handle) {}
  // Reads the element type, dimensions and device of the handle.
  Status Describe();

  std::shared_ptr<const Client> client_;
  PJRT_Buffer* handle_ = nullptr;
  Shape shape_;
  Device* device_ = nullptr;
};

// Options of one execution.
struct ExecuteOptions {
  // Inputs the plugin must not donate even if the program aliases them.
  std::vector<int64_t> non_donatable_input_indices;
  int launch_id = 0;
};

// What one Execute returns: the outputs of each device and, per device, an
// event that fires when that device has finished.
struct ExecuteResult {
  std::vector<std::vector<std::unique_ptr<Buffer>>> outputs;
  std::vector<Future> device_complete;
};

// A compiled program loaded on devices (PJRT_LoadedExecutable).
class Executable {
 public:
  ~Executable();
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;

  PJRT_LoadedExecutable* handle() const { return handle_; }
  const std::string& name() const { return name_; }
  int64_t num_replicas() const { return num_replicas_; }
  int64_t num_partitions() const { return num_partitions_; }
  int64_t num_outputs() const { return num_outputs_; }
  // The plugin's fingerprint, or nullopt when it does not give one.
  const std::optional<std::string>& fingerprint() const { return fingerprint_; }
  const std::vector<Device*>& addressable_devices() const {
    return addressable_devices_;
  }

  // Output element types and dimensions (PJRT_Executable_OutputElementTypes
  // and _OutputDimensions).
  StatusOr<std::vector<Shape>> OutputShapes() const;
  // The plugin's serialized form of this executable.
  StatusOr<std::string> Serialize() const;

  // Runs on `arguments.size()` devices: arguments[d] are device d's inputs.
  // With `execute_device` set, runs once on that device (arguments.size()
  // must be 1). Returns at once; the outputs become ready later.
  StatusOr<ExecuteResult> Execute(
      std::span<const std::vector<Buffer*>> arguments,
      const ExecuteOptions& options, Device* execute_device = nullptr) const;

  Status Delete();
  StatusOr<bool> IsDeleted() const;

 private:
  friend class Client;
  Executable(std::shared_ptr<const Client> client,
             PJRT_LoadedExecutable* handle)
      : client_(std::move(client)), handle_(handle) {}
  Status Describe();

  std::shared_ptr<const Client> client_;
  PJRT_LoadedExecutable* handle_ = nullptr;
  PJRT_Executable* executable_ = nullptr;
  std::string name_;
  int64_t num_replicas_ = 1;
  int64_t num_partitions_ = 1;
  int64_t num_outputs_ = 0;
  std::optional<std::string> fingerprint_;
  std::vector<Device*> addressable_devices_;
};

// How a host buffer may be used by the plugin (PJRT_HostBufferSemantics).
enum class HostBufferSemantics {
  kImmutableOnlyDuringCall = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
  kImmutableUntilTransferCompletes =
      PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes,
  kImmutableZeroCopy = PJRT_HostBufferSemantics_kImmutableZeroCopy,
};

// A PJRT client of one plugin, with its devices and memories.
class Client : public std::enable_shared_from_this<Client> {
 public:
  // Creates a client with the given create options (PJRT_Client_Create) and
  // reads its devices and memories. With `store`, the plugin gets it as
  // its key-value callbacks (kv_get / kv_put): a client of one process of
  // several (options num_nodes and node_id) exchanges its devices and sets
  // up its collectives through it. The client keeps the store alive.
  static StatusOr<std::shared_ptr<Client>> Create(
      std::shared_ptr<const Plugin> plugin,
      const std::vector<NamedValue>& options = {},
      std::shared_ptr<KeyValueStore> store = nullptr);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const Plugin& plugin() const { return *plugin_; }
  const std::shared_ptr<const Plugin>& shared_plugin() const { return plugin_; }
  PJRT_Client* handle() const { return handle_; }
  const std::string& platform_name() const { return platform_name_; }
  const std::string& platform_version() const { return platform_version_; }
  int process_index() const { return process_index_; }

  const std::vector<Device*>& devices() const { return devices_; }
  const std::vector<Device*>& addressable_devices() const {
    return addressable_devices_;
  }
  // Every memory the client addresses.
  const std::vector<Memory*>& memories() const { return memories_; }

  // The device with global id `id` (PJRT_Client_LookupDevice).
  StatusOr<Device*> LookupDevice(int id) const;
  // The wrappers of plugin handles (null for a handle this client does not
  // know).
  Device* FindDevice(const PJRT_Device* handle) const;
  Memory* FindMemory(const PJRT_Memory* handle) const;

  // Copies `data` (dense row-major, shape.ByteSize() bytes) into a new
  // buffer in `memory`, or the default memory of `device` when memory is
  // null. With semantics other than kImmutableOnlyDuringCall, `data` must
  // stay alive until `done_with_host_buffer` fires; when that pointer is
  // null the call waits for it.
  StatusOr<std::unique_ptr<Buffer>> BufferFromHost(
      const void* data, const Shape& shape, const Device* device,
      const Memory* memory = nullptr,
      HostBufferSemantics semantics =
          HostBufferSemantics::kImmutableOnlyDuringCall,
      Future* done_with_host_buffer = nullptr) const;

  // Compiles `program` (format "mlir": MLIR text or a StableHLO portable
  // artifact) with a serialized xla.CompileOptionsProto.
  StatusOr<std::unique_ptr<Executable>> Compile(
      std::string_view program, std::string_view format,
      std::string_view compile_options) const;
  // Loads an executable from the plugin's serialized form; the compile
  // options, when given, override the serialized ones.
  StatusOr<std::unique_ptr<Executable>> DeserializeAndLoad(
      std::string_view serialized, std::string_view compile_options = {}) const;

  // The plugin's default device ids for replicas x partitions, replica
  // major.
  StatusOr<std::vector<int>> DefaultDeviceAssignment(int num_replicas,
                                                     int num_partitions) const;

 private:
  explicit Client(std::shared_ptr<const Plugin> plugin)
      : plugin_(std::move(plugin)) {}
  Status Describe();
  StatusOr<Memory*> AddMemory(PJRT_Memory* handle);
  StatusOr<std::unique_ptr<Executable>> WrapExecutable(
      PJRT_LoadedExecutable* handle) const;

  std::shared_ptr<const Plugin> plugin_;
  std::shared_ptr<KeyValueStore> store_;
  PJRT_Client* handle_ = nullptr;
  std::string platform_name_;
  std::string platform_version_;
  int process_index_ = 0;
  std::vector<std::unique_ptr<Device>> device_storage_;
  std::vector<std::unique_ptr<Memory>> memory_storage_;
  std::vector<Device*> devices_;
  std::vector<Device*> addressable_devices_;
  std::vector<Memory*> memories_;
  std::map<const PJRT_Device*, Device*> device_by_handle_;
  std::map<const PJRT_Memory*, Memory*> memory_by_handle_;
};

}  // namespace kiln::client

#endif  // KILN_CLIENT_PJRT_H_
