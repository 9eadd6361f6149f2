// ComputationClient: the one class through which a framework crosses into
// PJRT (the seam PyTorch/XLA draws). A training step crosses it four times:
// TransferToDevice, Compile, ExecuteComputation, TransferFromDevice; each
// crossing is measured in metrics().
//
// Devices are named "PLATFORM:ordinal" ("KILN:0", "CUDA:1"): the plugin's
// platform name in capitals and the device's index among the client's
// devices.
#ifndef KILN_CLIENT_COMPUTATION_CLIENT_H_
#define KILN_CLIENT_COMPUTATION_CLIENT_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "base/status.h"
#include "kiln/metrics.h"
#include "kiln/shape.h"

namespace kiln::client {

// The names under which a ComputationClient records its crossings.
namespace metric_names {
// Timers (nanoseconds), one sample per call.
inline constexpr char kTransferToDeviceTime[] = "TransferToDeviceTime";
inline constexpr char kTransferFromDeviceTime[] = "TransferFromDeviceTime";
inline constexpr char kCompileTime[] = "CompileTime";
// From the call until the device reports the execution finished.
inline constexpr char kExecuteTime[] = "ExecuteTime";
inline constexpr char kExecuteReplicatedTime[] = "ExecuteReplicatedTime";
inline constexpr char kDeserializeTime[] = "DeserializeTime";
// Bytes moved, one sample per transfer call.
inline constexpr char kInboundData[] = "InboundData";
inline constexpr char kOutboundData[] = "OutboundData";
// Counters.
inline constexpr char kCachedCompile[] = "CachedCompile";
inline constexpr char kUncachedCompile[] = "UncachedCompile";
inline constexpr char kPersistentCacheHit[] = "PersistentCacheHit";
inline constexpr char kPersistentCacheMiss[] = "PersistentCacheMiss";
inline constexpr char kPersistentCacheRefused[] = "PersistentCacheRefused";
inline constexpr char kExecuteComputation[] = "ExecuteComputation";
inline constexpr char kExecuteReplicated[] = "ExecuteReplicated";
inline constexpr char kExecuteFailed[] = "ExecuteFailed";
}  // namespace metric_names

// A handle to an array on a device. Execution outputs are handed out at
// once and become ready later; reading one waits for it.
class Data {
 public:
  Data(std::string device, Shape shape)
      : device_(std::move(device)), shape_(std::move(shape)) {}
  virtual ~Data() = default;
  const std::string& device() const { return device_; }
  const Shape& shape() const { return shape_; }
  // False once the array was donated to an execution (its storage now
  // belongs to an output) or released.
  virtual bool HasValue() const = 0;

 private:
  std::string device_;
  Shape shape_;
};
using DataPtr = std::shared_ptr<Data>;

// A compiled program, ready to run on the devices it was compiled for.
class Computation {
 public:
  virtual ~Computation() = default;
  virtual const std::string& name() const = 0;
  // The program as given to Compile (MLIR text or a portable artifact).
  virtual const std::string& program() const = 0;
  // The compile cache key (program, compile options, donated parameters).
  virtual uint64_t hash() const = 0;
  // The devices it runs on: one, or one per replica.
  virtual const std::vector<std::string>& devices() const = 0;
  // The parameters the program donates (aliases to outputs), sorted.
  virtual const std::vector<int>& donated_parameters() const = 0;
};
using ComputationPtr = std::shared_ptr<Computation>;

// Host data to put on a device: `data` holds shape.ByteSize() bytes, dense
// and row-major, and needs to live only during TransferToDevice.
struct TensorSource {
  Shape shape;
  const void* data = nullptr;
  std::string device;
};

// Host data read back from a device.
struct Literal {
  Shape shape;
  std::vector<uint8_t> bytes;

  // The elements as T (T must match the element type's size).
  template <typename T>
  std::vector<T> ToVector() const {
    static_assert(std::is_trivially_copyable_v<T>);
    std::vector<T> values(bytes.size() / sizeof(T));
    if (!values.empty()) std::memcpy(values.data(), bytes.data(), bytes.size());
    return values;
  }
};

// One program to compile.
struct CompileInstance {
  // MLIR text or a StableHLO portable artifact (sent in format "mlir").
  std::string program;
  // For messages and reports; "main" when empty.
  std::string name;
  // The device it runs on (a single-device program; the default device when
  // empty).
  std::string compilation_device;
  // For a replicated program: one device per replica (overrides
  // compilation_device).
  std::vector<std::string> devices;
  // The parameters the program aliases to outputs (`tf.aliasing_output` or
  // `jax.buffer_donor`), so their buffers are given up to each execution.
  // Every other parameter is passed as non-donatable. Part of the cache key.
  std::vector<int> donated_parameters;
};

struct ExecuteComputationOptions {
  // PJRT outputs are already flat; kept for the seam's signature.
  bool explode_tuple = true;
};

struct ExecuteReplicatedOptions {};

// A device's memory as GetMemoryInfo reports it.
struct MemoryInfo {
  int64_t bytes_used = 0;
  int64_t peak_bytes_used = 0;
  // 0 when the plugin does not report a limit.
  int64_t bytes_limit = 0;
};

class ComputationClient {
 public:
  virtual ~ComputationClient() = default;

  // Copies host arrays to devices. Returns when the plugin holds the bytes
  // (the caller's memory may be reused); the arrays may become ready later.
  virtual StatusOr<std::vector<DataPtr>> TransferToDevice(
      std::span<const TensorSource> tensors) = 0;
  // Reads arrays back, blocking until every one is there.
  virtual StatusOr<std::vector<Literal>> TransferFromDevice(
      std::span<const DataPtr> data) = 0;

  // Compiles programs, through the compile cache: a program compiled before
  // with the same options and donations comes back without compiling.
  virtual StatusOr<std::vector<ComputationPtr>> Compile(
      std::vector<CompileInstance> instances) = 0;

  // Runs a single-device computation on `device`. Returns at once with the
  // outputs, which become ready when the device finishes. Donated
  // arguments lose their value.
  virtual StatusOr<std::vector<DataPtr>> ExecuteComputation(
      const Computation& computation, std::span<const DataPtr> arguments,
      const std::string& device,
      const ExecuteComputationOptions& options = {}) = 0;
  // Runs a replicated computation: arguments[i] are the inputs of
  // devices[i]; returns the outputs of each device.
  virtual StatusOr<std::vector<std::vector<DataPtr>>> ExecuteReplicated(
      const Computation& computation,
      std::span<const std::vector<DataPtr>> arguments,
      std::span<const std::string> devices,
      const ExecuteReplicatedOptions& options = {}) = 0;

  // Blocks until every execution started on `devices` (all when empty) has
  // finished.
  virtual Status WaitDeviceOps(std::span<const std::string> devices) = 0;
  virtual StatusOr<MemoryInfo> GetMemoryInfo(const std::string& device) = 0;

  virtual std::string GetDefaultDevice() const = 0;
  // The devices this process addresses, and every device of the platform.
  virtual std::vector<std::string> GetLocalDevices() const = 0;
  virtual std::vector<std::string> GetAllDevices() const = 0;
  // The plugin's platform name ("kiln", "cuda").
  virtual std::string GetPlatformName() const = 0;

  // A self-contained blob: the executable in the plugin's form plus what is
  // needed to rebuild it if the plugin refuses that form later.
  virtual StatusOr<std::string> SerializeComputation(
      const ComputationPtr& computation) = 0;
  virtual StatusOr<ComputationPtr> DeserializeComputation(
      const std::string& serialized) = 0;

  // The metrics of every crossing of this client.
  virtual Metrics& metrics() = 0;

  // The process-wide client, chosen by $PJRT_DEVICE: "KILN" loads Kiln's
  // plugin; any other name loads the library at $<NAME>_LIBRARY_PATH or
  // $PJRT_LIBRARY_PATH. Unset: FAILED_PRECONDITION "$PJRT_DEVICE is not
  // set.". A second call: FAILED_PRECONDITION "ComputationClient can only be
  // initialized once.". $KILN_PERSISTENT_CACHE_PATH, when set, is a folder
  // for the on-disk compile cache.
  static StatusOr<ComputationClient*> Create();
  // The process-wide client, or null before Create succeeded.
  static ComputationClient* Get();
};

// Where Kiln's plugin is: $KILN_LIBRARY_PATH, else libpjrt_kiln.so in the
// running program's ../lib or its own folder, else the installed library.
// NOT_FOUND lists every place tried.
StatusOr<std::string> FindKilnPlugin();

// The plugin library for a platform name, as $PJRT_DEVICE chooses it:
// "KILN" (any case) is FindKilnPlugin(); any other NAME is the library at
// $<NAME>_LIBRARY_PATH, else $PJRT_LIBRARY_PATH.
StatusOr<std::string> FindPluginForPlatform(std::string_view platform);

// Splits "KILN:3" into ("KILN", 3); INVALID_ARGUMENT for anything else.
StatusOr<std::pair<std::string, int>> ParseDeviceName(std::string_view name);

}  // namespace kiln::client

#endif  // KILN_CLIENT_COMPUTATION_CLIENT_H_
