// PjrtComputationClient: creation, devices, transfers and execution.
// Compilation and the caches are in pjrt_computation_client_compile.cc.
#include <algorithm>
#include <atomic>

#include "base/logging.h"
#include "base/strings.h"
#include "client/pjrt_computation_types.h"
#include "kiln/pjrt_computation_client.h"

namespace kiln::client {

using internal::PjrtComputation;
using internal::PjrtData;
namespace names = metric_names;

StatusOr<std::unique_ptr<PjrtComputationClient>> PjrtComputationClient::Create(
    PjrtComputationClientOptions options) {
  std::shared_ptr<const Plugin> plugin = options.plugin;
  if (plugin == nullptr) {
    ASSIGN_OR_RETURN(plugin, Plugin::Load(options.plugin_path));
  }
  std::unique_ptr<PjrtComputationClient> client(new PjrtComputationClient());
  ASSIGN_OR_RETURN(
      client->client_,
      Client::Create(plugin, options.create_options, options.key_value_store));
  if (client->client_->addressable_devices().empty()) {
    return FailedPreconditionError("PJRT plugin ", plugin->path(),
                                   " provides no addressable devices");
  }
  client->platform_ = ToUpper(client->client_->platform_name());
  client->persistent_cache_path_ = std::move(options.persistent_cache_path);
  client->in_flight_ = std::make_shared<InFlight>();
  return client;
}

PjrtComputationClient::~PjrtComputationClient() {
  if (in_flight_ != nullptr) in_flight_->Wait({});
}

std::string PjrtComputationClient::DeviceName(const Device* device) const {
  const std::vector<Device*>& devices = client_->devices();
  auto found = std::find(devices.begin(), devices.end(), device);
  return StrCat(platform_, ":", found - devices.begin());
}

StatusOr<Device*> PjrtComputationClient::LookupDevice(std::string_view name,
                                                      bool any_process) const {
  ASSIGN_OR_RETURN(auto parsed, ParseDeviceName(name));
  if (ToUpper(parsed.first) != platform_) {
    return InvalidArgumentError("device '", name, "' is not a ", platform_,
                                " device (this client's devices are ",
                                platform_, ":0 to ", platform_, ":",
                                client_->devices().size() - 1, ")");
  }
  if (parsed.second >= static_cast<int>(client_->devices().size())) {
    return InvalidArgumentError("device '", name, "' does not exist; ",
                                platform_, " has ", client_->devices().size(),
                                " devices");
  }
  Device* device = client_->devices()[parsed.second];
  if (!device->addressable() && !any_process) {
    return InvalidArgumentError("device '", name,
                                "' is not addressable from this process");
  }
  return device;
}

std::string PjrtComputationClient::GetDefaultDevice() const {
  return DeviceName(client_->addressable_devices().front());
}

std::vector<std::string> PjrtComputationClient::GetLocalDevices() const {
  std::vector<std::string> names;
  for (Device* device : client_->addressable_devices()) {
    names.push_back(DeviceName(device));
  }
  return names;
}

std::vector<std::string> PjrtComputationClient::GetAllDevices() const {
  std::vector<std::string> names;
  for (Device* device : client_->devices()) names.push_back(DeviceName(device));
  return names;
}

std::string PjrtComputationClient::GetPlatformName() const {
  return client_->platform_name();
}

std::shared_ptr<Buffer> PjrtComputationClient::GetBuffer(
    const DataPtr& data) const {
  auto* pjrt_data = dynamic_cast<const PjrtData*>(data.get());
  if (pjrt_data == nullptr || pjrt_data->client() != client_.get()) {
    return nullptr;
  }
  return pjrt_data->buffer();
}

DataPtr PjrtComputationClient::WrapBuffer(
    std::shared_ptr<Buffer> buffer) const {
  std::string device =
      buffer->device() == nullptr ? "" : DeviceName(buffer->device());
  Shape shape = buffer->shape();
  return std::make_shared<PjrtData>(std::move(device), std::move(shape),
                                    client_.get(), std::move(buffer));
}

StatusOr<std::vector<DataPtr>> PjrtComputationClient::TransferToDevice(
    std::span<const TensorSource> tensors) {
  ScopedTimer timer(metrics_->GetMetric(names::kTransferToDeviceTime,
                                        MetricUnit::kNanoseconds));
  std::vector<DataPtr> data;
  data.reserve(tensors.size());
  int64_t bytes = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorSource& tensor = tensors[i];
    ASSIGN_OR_RETURN(Device * device, LookupDevice(tensor.device));
    auto buffer = client_->BufferFromHost(tensor.data, tensor.shape, device);
    if (!buffer.ok()) {
      return buffer.status().WithContext(
          StrCat("TransferToDevice of tensor ", i, " (",
                 tensor.shape.ToString(), ") to ", tensor.device));
    }
    bytes += tensor.shape.ByteSize();
    data.push_back(std::make_shared<PjrtData>(
        DeviceName(device), tensor.shape, client_.get(),
        std::shared_ptr<Buffer>(std::move(*buffer))));
  }
  metrics_->GetMetric(names::kInboundData, MetricUnit::kBytes)
      .AddSample(static_cast<double>(bytes));
  return data;
}

StatusOr<std::vector<Literal>> PjrtComputationClient::TransferFromDevice(
    std::span<const DataPtr> data) {
  ScopedTimer timer(metrics_->GetMetric(names::kTransferFromDeviceTime,
                                        MetricUnit::kNanoseconds));
  std::vector<Literal> literals(data.size());
  std::vector<Future> copies;
  copies.reserve(data.size());
  int64_t bytes = 0;
  // Start every copy, then wait for all: the copies overlap.
  for (size_t i = 0; i < data.size(); ++i) {
    if (data[i] == nullptr) {
      return InvalidArgumentError("TransferFromDevice: data ", i, " is null");
    }
    std::shared_ptr<Buffer> buffer = GetBuffer(data[i]);
    if (buffer == nullptr) {
      return InvalidArgumentError(
          "TransferFromDevice: data ", i, " (", data[i]->shape().ToString(),
          " on ", data[i]->device(), ") ",
          dynamic_cast<const PjrtData*>(data[i].get()) == nullptr ||
                  dynamic_cast<const PjrtData*>(data[i].get())->client() !=
                      client_.get()
              ? "belongs to another client"
              : "has no value (it was donated to an execution)");
    }
    literals[i].shape = buffer->shape();
    literals[i].bytes.resize(buffer->shape().ByteSize());
    ASSIGN_OR_RETURN(Future copy,
                     buffer->ToHostAsync(literals[i].bytes.data(),
                                         literals[i].bytes.size()));
    copies.push_back(std::move(copy));
    bytes += buffer->shape().ByteSize();
  }
  for (size_t i = 0; i < copies.size(); ++i) {
    Status status = copies[i].Await();
    if (!status.ok()) {
      // Wait for the others before their destinations go away.
      for (size_t j = i + 1; j < copies.size(); ++j) {
        copies[j].Await().IgnoreError();
      }
      return status.WithContext(StrCat("TransferFromDevice of data ", i));
    }
  }
  metrics_->GetMetric(names::kOutboundData, MetricUnit::kBytes)
      .AddSample(static_cast<double>(bytes));
  return literals;
}

namespace {

// The inputs of one device as buffers, checked against the computation.
StatusOr<std::vector<Buffer*>> CollectArguments(
    const PjrtComputation& computation, std::span<const DataPtr> arguments,
    const std::string& device_name, const Client* client,
    std::vector<std::shared_ptr<Buffer>>& keep_alive) {
  std::vector<Buffer*> buffers;
  for (size_t i = 0; i < arguments.size(); ++i) {
    auto* data = dynamic_cast<const PjrtData*>(arguments[i].get());
    if (data == nullptr || data->client() != client) {
      return InvalidArgumentError("execution of ", computation.name(),
                                  ": argument ", i,
                                  " belongs to another client");
    }
    std::shared_ptr<Buffer> buffer = data->buffer();
    if (buffer == nullptr) {
      return InvalidArgumentError("execution of ", computation.name(),
                                  ": argument ", i, " (",
                                  data->shape().ToString(),
                                  ") has no value; it was donated to an "
                                  "earlier execution");
    }
    if (data->device() != device_name) {
      return InvalidArgumentError("execution of ", computation.name(), " on ",
                                  device_name, ": argument ", i, " is on ",
                                  data->device());
    }
    buffers.push_back(buffer.get());
    keep_alive.push_back(std::move(buffer));
  }
  return buffers;
}

// Every parameter the program does not donate: the plugin must copy rather
// than reuse those buffers, which the caller still holds.
std::vector<int64_t> NonDonatable(size_t num_arguments,
                                  const std::vector<int>& donated) {
  std::vector<int64_t> indices;
  for (size_t i = 0; i < num_arguments; ++i) {
    if (!std::binary_search(donated.begin(), donated.end(),
                            static_cast<int>(i))) {
      indices.push_back(static_cast<int64_t>(i));
    }
  }
  return indices;
}

void ReleaseDonated(std::span<const DataPtr> arguments,
                    const std::vector<int>& donated) {
  for (int index : donated) {
    if (index < static_cast<int>(arguments.size())) {
      static_cast<PjrtData*>(arguments[index].get())->Release();
    }
  }
}

}  // namespace

StatusOr<std::vector<DataPtr>> PjrtComputationClient::ExecuteComputation(
    const Computation& computation, std::span<const DataPtr> arguments,
    const std::string& device_name, const ExecuteComputationOptions& options) {
  auto* pjrt = dynamic_cast<const PjrtComputation*>(&computation);
  if (pjrt == nullptr || pjrt->client_ != client_.get()) {
    return InvalidArgumentError("ExecuteComputation: computation ",
                                computation.name(),
                                " was not compiled by this client");
  }
  if (pjrt->devices_.size() != 1) {
    return InvalidArgumentError("ExecuteComputation: ", computation.name(),
                                " is compiled for ", pjrt->devices_.size(),
                                " replicas; run it with ExecuteReplicated");
  }
  ASSIGN_OR_RETURN(Device * device, LookupDevice(device_name));
  std::string canonical = DeviceName(device);
  std::vector<std::shared_ptr<Buffer>> keep_alive;
  ASSIGN_OR_RETURN(
      std::vector<Buffer*> buffers,
      CollectArguments(*pjrt, arguments, canonical, client_.get(), keep_alive));
  ExecuteOptions execute_options;
  execute_options.non_donatable_input_indices =
      NonDonatable(arguments.size(), pjrt->donated_parameters_);

  int64_t start = MetricNowNanos();
  in_flight_->Begin(canonical);
  std::vector<std::vector<Buffer*>> argument_lists = {std::move(buffers)};
  auto result =
      pjrt->executable_->Execute(argument_lists, execute_options, device);
  if (!result.ok()) {
    in_flight_->End(canonical);
    metrics_->GetCounter(names::kExecuteFailed).Add();
    return result.status().WithContext(StrCat(
        "ExecuteComputation of ", computation.name(), " on ", canonical));
  }
  metrics_->GetCounter(names::kExecuteComputation).Add();
  ReleaseDonated(arguments, pjrt->donated_parameters_);

  std::vector<DataPtr> outputs;
  for (std::unique_ptr<Buffer>& buffer : result->outputs[0]) {
    outputs.push_back(WrapBuffer(std::shared_ptr<Buffer>(std::move(buffer))));
  }
  // The timer stops when the device says it is done, on whatever thread
  // the plugin fires the event.
  std::shared_ptr<Metrics> metrics = metrics_;
  std::shared_ptr<InFlight> in_flight = in_flight_;
  Status registered =
      std::move(result->device_complete[0])
          .OnReady([metrics, in_flight, start, canonical](Status status) {
            int64_t now = MetricNowNanos();
            metrics->GetMetric(names::kExecuteTime, MetricUnit::kNanoseconds)
                .AddSample(static_cast<double>(now - start), now);
            if (!status.ok()) {
              metrics->GetCounter(names::kExecuteFailed).Add();
            }
            in_flight->End(canonical);
          });
  if (!registered.ok()) {
    KILN_LOG(WARNING) << "cannot watch the execution of " << computation.name()
                      << ": " << registered.ToString();
    in_flight_->End(canonical);
  }
  return outputs;
}

StatusOr<std::vector<std::vector<DataPtr>>>
PjrtComputationClient::ExecuteReplicated(
    const Computation& computation,
    std::span<const std::vector<DataPtr>> arguments,
    std::span<const std::string> devices,
    const ExecuteReplicatedOptions& options) {
  auto* pjrt = dynamic_cast<const PjrtComputation*>(&computation);
  if (pjrt == nullptr || pjrt->client_ != client_.get()) {
    return InvalidArgumentError("ExecuteReplicated: computation ",
                                computation.name(),
                                " was not compiled by this client");
  }
  if (arguments.size() != devices.size()) {
    return InvalidArgumentError("ExecuteReplicated of ", computation.name(),
                                ": ", arguments.size(), " argument lists for ",
                                devices.size(), " devices");
  }
  // In a job of several processes each runs the replicas on its own
  // devices: the compiled devices of this process, in replica order.
  std::vector<std::string> local_devices;
  for (size_t d = 0; d < pjrt->pjrt_devices_.size(); ++d) {
    if (pjrt->pjrt_devices_[d]->process_index() == client_->process_index()) {
      local_devices.push_back(pjrt->devices_[d]);
    }
  }
  if (devices.size() != local_devices.size()) {
    return InvalidArgumentError(
        "ExecuteReplicated of ", computation.name(), ": compiled for ",
        pjrt->devices_.size(), " devices (", local_devices.size(),
        " in this process), asked to run on ", devices.size());
  }
  std::vector<std::string> canonical;
  std::vector<std::vector<Buffer*>> argument_lists;
  std::vector<std::shared_ptr<Buffer>> keep_alive;
  for (size_t d = 0; d < devices.size(); ++d) {
    ASSIGN_OR_RETURN(Device * device, LookupDevice(devices[d]));
    canonical.push_back(DeviceName(device));
    if (canonical.back() != local_devices[d]) {
      return InvalidArgumentError("ExecuteReplicated of ", computation.name(),
                                  ": this process's replica ", d,
                                  " was compiled for ", local_devices[d],
                                  ", not ", canonical.back());
    }
    ASSIGN_OR_RETURN(std::vector<Buffer*> buffers,
                     CollectArguments(*pjrt, arguments[d], canonical.back(),
                                      client_.get(), keep_alive));
    argument_lists.push_back(std::move(buffers));
  }
  ExecuteOptions execute_options;
  execute_options.non_donatable_input_indices = NonDonatable(
      arguments.empty() ? 0 : arguments[0].size(), pjrt->donated_parameters_);

  int64_t start = MetricNowNanos();
  for (const std::string& name : canonical) in_flight_->Begin(name);
  auto result = pjrt->executable_->Execute(argument_lists, execute_options);
  if (!result.ok()) {
    for (const std::string& name : canonical) in_flight_->End(name);
    metrics_->GetCounter(names::kExecuteFailed).Add();
    return result.status().WithContext(
        StrCat("ExecuteReplicated of ", computation.name()));
  }
  metrics_->GetCounter(names::kExecuteReplicated).Add();
  for (const std::vector<DataPtr>& device_arguments : arguments) {
    ReleaseDonated(device_arguments, pjrt->donated_parameters_);
  }
  std::vector<std::vector<DataPtr>> outputs(devices.size());
  for (size_t d = 0; d < devices.size(); ++d) {
    for (std::unique_ptr<Buffer>& buffer : result->outputs[d]) {
      outputs[d].push_back(
          WrapBuffer(std::shared_ptr<Buffer>(std::move(buffer))));
    }
  }
  // One sample when the last device finishes.
  auto remaining =
      std::make_shared<std::atomic<int>>(static_cast<int>(devices.size()));
  std::shared_ptr<Metrics> metrics = metrics_;
  std::shared_ptr<InFlight> in_flight = in_flight_;
  for (size_t d = 0; d < devices.size(); ++d) {
    std::string name = canonical[d];
    auto on_done = [metrics, in_flight, start, remaining, name](Status status) {
      if (!status.ok()) metrics->GetCounter(names::kExecuteFailed).Add();
      if (remaining->fetch_sub(1) == 1) {
        int64_t now = MetricNowNanos();
        metrics
            ->GetMetric(names::kExecuteReplicatedTime, MetricUnit::kNanoseconds)
            .AddSample(static_cast<double>(now - start), now);
      }
      in_flight->End(name);
    };
    Status registered = std::move(result->device_complete[d]).OnReady(on_done);
    if (!registered.ok()) on_done(registered);
  }
  return outputs;
}

Status PjrtComputationClient::WaitDeviceOps(
    std::span<const std::string> devices) {
  std::vector<std::string> canonical;
  for (const std::string& name : devices) {
    ASSIGN_OR_RETURN(Device * device, LookupDevice(name));
    canonical.push_back(DeviceName(device));
  }
  in_flight_->Wait(canonical);
  return OkStatus();
}

StatusOr<MemoryInfo> PjrtComputationClient::GetMemoryInfo(
    const std::string& device_name) {
  ASSIGN_OR_RETURN(Device * device, LookupDevice(device_name));
  ASSIGN_OR_RETURN(DeviceMemoryStats stats, device->GetMemoryStats());
  MemoryInfo info;
  info.bytes_used = stats.bytes_in_use;
  info.peak_bytes_used = stats.peak_bytes_in_use.value_or(stats.bytes_in_use);
  info.bytes_limit = stats.bytes_limit.value_or(0);
  return info;
}

}  // namespace kiln::client
