// PjrtComputationClient: compilation through the in-memory and on-disk
// compile caches, and (de)serialization of computations.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/file.h"
#include "base/fingerprint.h"
#include "base/logging.h"
#include "base/strings.h"
#include "client/computation_record.h"
#include "client/pjrt_computation_types.h"
#include "kiln/compile_options.h"
#include "kiln/pjrt_computation_client.h"

namespace kiln::client {

using internal::ComputationRecord;
using internal::PjrtComputation;
namespace names = metric_names;

namespace {

// The program is sent to every plugin in this format: MLIR text or a
// StableHLO portable artifact (MLIR bytecode), told apart by the plugin.
constexpr const char kProgramFormat[] = "mlir";

// The cache key: the program, the serialized compile options, the sorted
// set of donated parameters, and the plugin it was compiled by.
uint64_t CacheKey(const std::string& program,
                  const std::string& compile_options,
                  const std::vector<int>& donated, const Client& client) {
  uint64_t key = Fingerprint64(program);
  key = FingerprintCombine(key, Fingerprint64(compile_options));
  key = FingerprintCombine(key, donated.size());
  for (int parameter : donated) {
    key = FingerprintCombine(key, static_cast<uint64_t>(parameter));
  }
  key = FingerprintCombine(key, Fingerprint64(client.platform_name()));
  key = FingerprintCombine(key, Fingerprint64(client.platform_version()));
  return key;
}

Status MakeDirectories(const std::string& path) {
  std::string partial;
  for (std::string_view piece : StrSplit(path, '/')) {
    partial += std::string(piece);
    if (!partial.empty() && partial != "." && partial != "..") {
      if (mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
        return Status(StatusCode::kPermissionDenied,
                      StrCat("cannot create the compile cache folder ", partial,
                             ": ", std::strerror(errno)));
      }
    }
    partial += "/";
  }
  return OkStatus();
}

// Compiles `computation`'s program through the plugin (no cache had its
// executable), timing it and counting it as uncached.
Status CompileUncached(Client& client, Metrics& metrics,
                       PjrtComputation& computation) {
  ScopedTimer timer(
      metrics.GetMetric(names::kCompileTime, MetricUnit::kNanoseconds));
  ASSIGN_OR_RETURN(computation.executable_,
                   client.Compile(computation.program_, kProgramFormat,
                                  computation.compile_options_));
  metrics.GetCounter(names::kUncachedCompile).Add();
  return OkStatus();
}

}  // namespace

StatusOr<std::vector<ComputationPtr>> PjrtComputationClient::Compile(
    std::vector<CompileInstance> instances) {
  std::vector<ComputationPtr> computations;
  for (size_t i = 0; i < instances.size(); ++i) {
    std::string name = instances[i].name.empty() ? "main" : instances[i].name;
    auto computation = CompileOne(std::move(instances[i]));
    if (!computation.ok()) {
      return computation.status().WithContext(
          StrCat("Compile of ", name, " (instance ", i, ")"));
    }
    computations.push_back(std::move(*computation));
  }
  return computations;
}

StatusOr<ComputationPtr> PjrtComputationClient::CompileOne(
    CompileInstance instance) {
  auto computation = std::make_shared<PjrtComputation>();
  computation->client_ = client_.get();
  computation->name_ = instance.name.empty() ? "main" : instance.name;
  std::vector<std::string> device_names = instance.devices;
  if (device_names.empty()) {
    device_names.push_back(instance.compilation_device.empty()
                               ? GetDefaultDevice()
                               : instance.compilation_device);
  }
  CompileOptions options;
  options.num_replicas = static_cast<int>(device_names.size());
  for (const std::string& name : device_names) {
    ASSIGN_OR_RETURN(Device * device, LookupDevice(name, /*any_process=*/true));
    computation->pjrt_devices_.push_back(device);
    computation->devices_.push_back(DeviceName(device));
    options.device_ids.push_back(device->id());
  }
  std::vector<int> donated = instance.donated_parameters;
  std::sort(donated.begin(), donated.end());
  donated.erase(std::unique(donated.begin(), donated.end()), donated.end());
  if (!donated.empty() && donated.front() < 0) {
    return InvalidArgumentError("donated parameter ", donated.front(),
                                " is negative");
  }
  computation->donated_parameters_ = donated;
  ASSIGN_OR_RETURN(computation->compile_options_,
                   SerializeCompileOptions(options));
  computation->program_ = std::move(instance.program);
  computation->hash_ = CacheKey(
      computation->program_, computation->compile_options_, donated, *client_);

  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    auto found = cache_.find(computation->hash_);
    if (found != cache_.end() &&
        found->second->program() == computation->program_) {
      metrics_->GetCounter(names::kCachedCompile).Add();
      return found->second;
    }
  }

  std::string cache_file;
  if (!persistent_cache_path_.empty()) {
    cache_file = StrCat(persistent_cache_path_, "/",
                        FingerprintToHex(computation->hash_), ".kiln");
    auto blob = ReadFile(cache_file);
    if (blob.ok()) {
      bool recompiled = false;
      auto loaded = LoadSerialized(*blob, &recompiled);
      if (loaded.ok() && (*loaded)->program() == computation->program_ &&
          (*loaded)->devices() == computation->devices_) {
        if (recompiled) {
          metrics_->GetCounter(names::kPersistentCacheRefused).Add();
        } else {
          metrics_->GetCounter(names::kPersistentCacheHit).Add();
          cache_file.clear();  // nothing to write back
        }
        computation = std::static_pointer_cast<PjrtComputation>(*loaded);
      } else {
        // An unreadable or foreign blob: compile and replace it.
        KILN_LOG(INFO) << "compile cache entry " << cache_file
                       << " is not usable: "
                       << (loaded.ok() ? "another program"
                                       : loaded.status().ToString());
        metrics_->GetCounter(names::kPersistentCacheRefused).Add();
      }
    } else {
      metrics_->GetCounter(names::kPersistentCacheMiss).Add();
    }
  }

  if (computation->executable_ == nullptr) {
    RETURN_IF_ERROR(CompileUncached(*client_, *metrics_, *computation));
  }

  if (!cache_file.empty()) {
    // A cache that cannot be written costs a recompile later, not a failure
    // now.
    auto serialized = SerializeComputation(computation);
    Status written = serialized.ok() ? MakeDirectories(persistent_cache_path_)
                                     : serialized.status();
    if (written.ok()) written = WriteFile(cache_file, *serialized);
    if (!written.ok()) {
      KILN_LOG(WARNING) << "compile cache: cannot store " << cache_file << ": "
                        << written.ToString();
    }
  }

  std::lock_guard<std::mutex> lock(cache_mutex_);
  cache_[computation->hash_] = computation;
  return ComputationPtr(computation);
}

StatusOr<std::string> PjrtComputationClient::SerializeComputation(
    const ComputationPtr& computation) {
  auto* pjrt = dynamic_cast<const PjrtComputation*>(computation.get());
  if (pjrt == nullptr || pjrt->client_ != client_.get()) {
    return InvalidArgumentError(
        "SerializeComputation: ",
        computation == nullptr ? "null" : computation->name(),
        " was not compiled by this client");
  }
  ComputationRecord record;
  record.platform_name = client_->platform_name();
  record.platform_version = client_->platform_version();
  record.name = pjrt->name_;
  record.program = pjrt->program_;
  record.compile_options = pjrt->compile_options_;
  record.devices = pjrt->devices_;
  record.donated_parameters = pjrt->donated_parameters_;
  auto executable = pjrt->executable_->Serialize();
  if (executable.ok()) {
    record.executable = std::move(*executable);
  } else if (executable.status().code() != StatusCode::kUnimplemented) {
    return executable.status().WithContext(
        StrCat("SerializeComputation of ", pjrt->name_));
  }
  // A plugin that cannot serialize leaves the executable empty: loading
  // the record compiles the program again.
  return EncodeComputationRecord(record);
}

StatusOr<ComputationPtr> PjrtComputationClient::DeserializeComputation(
    const std::string& serialized) {
  bool recompiled = false;
  ASSIGN_OR_RETURN(ComputationPtr computation,
                   LoadSerialized(serialized, &recompiled));
  std::lock_guard<std::mutex> lock(cache_mutex_);
  cache_[computation->hash()] = computation;
  return computation;
}

StatusOr<ComputationPtr> PjrtComputationClient::LoadSerialized(
    const std::string& serialized, bool* recompiled) {
  *recompiled = false;
  ASSIGN_OR_RETURN(ComputationRecord record,
                   internal::DecodeComputationRecord(serialized));
  if (record.platform_name != client_->platform_name()) {
    return FailedPreconditionError(
        "serialized computation ", record.name, " was compiled for platform '",
        record.platform_name, "'; this client's platform is '",
        client_->platform_name(), "'");
  }
  auto computation = std::make_shared<PjrtComputation>();
  computation->client_ = client_.get();
  computation->name_ = record.name;
  computation->program_ = std::move(record.program);
  computation->compile_options_ = std::move(record.compile_options);
  computation->donated_parameters_ = std::move(record.donated_parameters);
  for (const std::string& name : record.devices) {
    ASSIGN_OR_RETURN(Device * device, LookupDevice(name, /*any_process=*/true));
    computation->pjrt_devices_.push_back(device);
    computation->devices_.push_back(DeviceName(device));
  }
  if (computation->devices_.empty()) {
    return DataLossError("serialized computation ", record.name,
                         " names no devices");
  }
  computation->hash_ =
      CacheKey(computation->program_, computation->compile_options_,
               computation->donated_parameters_, *client_);

  if (!record.executable.empty() &&
      record.platform_version == client_->platform_version()) {
    ScopedTimer timer(
        metrics_->GetMetric(names::kDeserializeTime, MetricUnit::kNanoseconds));
    auto executable = client_->DeserializeAndLoad(
        record.executable, computation->compile_options_);
    if (executable.ok()) {
      computation->executable_ = std::move(*executable);
      return ComputationPtr(computation);
    }
    KILN_LOG(INFO) << "plugin refused the executable of " << record.name << " ("
                   << executable.status().ToString() << "); compiling it again";
  }
  // Refused, from another plugin version, or never serialized: the program
  // is in the record, so compile it.
  RETURN_IF_ERROR(CompileUncached(*client_, *metrics_, *computation));
  *recompiled = true;
  return ComputationPtr(computation);
}

}  // namespace kiln::client
