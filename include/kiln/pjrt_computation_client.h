// The ComputationClient over the PJRT C API of any plugin.
#ifndef KILN_CLIENT_PJRT_COMPUTATION_CLIENT_H_
#define KILN_CLIENT_PJRT_COMPUTATION_CLIENT_H_

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/computation_client.h"
#include "kiln/pjrt.h"

namespace kiln::client {

struct PjrtComputationClientOptions {
  // The plugin library (ignored when `plugin` is set).
  std::string plugin_path;
  std::shared_ptr<const Plugin> plugin;
  // Named options for PJRT_Client_Create.
  std::vector<NamedValue> create_options;
  // The key-value store of a job of several processes (with the options
  // num_nodes and node_id): the plugin exchanges devices and meets for
  // collectives through it (kiln/key_value_store.h). Null in one process.
  std::shared_ptr<KeyValueStore> key_value_store;
  // A folder for the on-disk compile cache (created if missing); empty:
  // none.
  std::string persistent_cache_path;
};

class PjrtComputationClient : public ComputationClient {
 public:
  // Loads the plugin and creates its client. Any number of these may exist;
  // only ComputationClient::Create is limited to one.
  static StatusOr<std::unique_ptr<PjrtComputationClient>> Create(
      PjrtComputationClientOptions options);
  // Waits for executions still running.
  ~PjrtComputationClient() override;

  StatusOr<std::vector<DataPtr>> TransferToDevice(
      std::span<const TensorSource> tensors) override;
  StatusOr<std::vector<Literal>> TransferFromDevice(
      std::span<const DataPtr> data) override;
  StatusOr<std::vector<ComputationPtr>> Compile(
      std::vector<CompileInstance> instances) override;
  StatusOr<std::vector<DataPtr>> ExecuteComputation(
      const Computation& computation, std::span<const DataPtr> arguments,
      const std::string& device,
      const ExecuteComputationOptions& options = {}) override;
  StatusOr<std::vector<std::vector<DataPtr>>> ExecuteReplicated(
      const Computation& computation,
      std::span<const std::vector<DataPtr>> arguments,
      std::span<const std::string> devices,
      const ExecuteReplicatedOptions& options = {}) override;
  Status WaitDeviceOps(std::span<const std::string> devices) override;
  StatusOr<MemoryInfo> GetMemoryInfo(const std::string& device) override;
  std::string GetDefaultDevice() const override;
  std::vector<std::string> GetLocalDevices() const override;
  std::vector<std::string> GetAllDevices() const override;
  std::string GetPlatformName() const override;
  StatusOr<std::string> SerializeComputation(
      const ComputationPtr& computation) override;
  StatusOr<ComputationPtr> DeserializeComputation(
      const std::string& serialized) override;
  Metrics& metrics() override { return *metrics_; }

  // The PJRT client underneath, and the device a name stands for: one of
  // this process's, or with `any_process` one of any process of the job
  // (what a compile over every device names).
  Client& pjrt_client() const { return *client_; }
  StatusOr<Device*> LookupDevice(std::string_view name,
                                 bool any_process = false) const;
  // The buffer behind a Data of this client (null when it has no value).
  std::shared_ptr<Buffer> GetBuffer(const DataPtr& data) const;
  // Wraps a buffer as Data.
  DataPtr WrapBuffer(std::shared_ptr<Buffer> buffer) const;

  // Executions started and not yet finished, per device name.
  class InFlight;

 private:
  PjrtComputationClient() = default;
  StatusOr<ComputationPtr> CompileOne(CompileInstance instance);
  // Builds the executable of a computation from its serialized record,
  // recompiling from the program when the plugin refuses the blob.
  StatusOr<ComputationPtr> LoadSerialized(const std::string& serialized,
                                          bool* recompiled);
  std::string DeviceName(const Device* device) const;

  std::shared_ptr<Client> client_;
  std::string platform_;  // "KILN"
  std::string persistent_cache_path_;
  std::shared_ptr<Metrics> metrics_ = std::make_shared<Metrics>();
  std::shared_ptr<InFlight> in_flight_;
  std::mutex cache_mutex_;
  std::map<uint64_t, ComputationPtr> cache_;
};

}  // namespace kiln::client

#endif  // KILN_CLIENT_PJRT_COMPUTATION_CLIENT_H_
