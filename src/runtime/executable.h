// A compiled program bound to a client's devices, and its execution.
//
// Compile reads the program (MLIR text or a bytecode portable artifact),
// verifies it, and lowers it to one exec::Plan per device position when
// the program asks which replica or partition it is (replica_id,
// partition_id), else to one plan shared by every device. Plans are
// immutable, so any number of executions may run at once.
//
// Execute checks the arguments on the calling thread and returns the
// output buffers at once, before their bytes exist. The run itself waits
// for the arguments' ready events and then goes on the device's queue; the
// outputs' ready events fire when it is done, with the run's error if it
// failed, so whoever reads an output learns of the failure. Programs too
// small to be worth a hand-off run on the calling thread instead (see
// `runs_inline`).
//
// A program whose collectives span several devices runs as a launch: one
// participant per device position, all sharing one exec::Communicator.
// Its participants never run inline, and they go on their device queues
// together, in one critical section shared by all launches, once every
// participant's inputs are ready: every queue then sees launches in the
// same order, so two launches on the same devices cannot each hold a
// queue the other waits for. A launch starts either from ExecuteLaunch
// (every position at once) or from one Execute per device with the same
// `launch_id` (PyTorch/XLA's way); the launch starts when its last
// participant joins.
#ifndef KILN_RUNTIME_EXECUTABLE_H_
#define KILN_RUNTIME_EXECUTABLE_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "exec/collectives.h"
#include "runtime/buffer.h"
#include "runtime/client.h"
#include "runtime/event.h"
#include "runtime/memory_space.h"
#include "runtime/run_registry.h"
#include "runtime/shape.h"

namespace kiln::exec {
class Plan;
class ProcessCollectives;
class FfiUserData;
}  // namespace kiln::exec

namespace kiln::runtime {

// How to compile: the program's replicas and partitions and the devices
// they run on.
struct CompileSpec {
  int num_replicas = 1;
  int num_partitions = 1;
  // Global device ids in replica-major order (entry r * num_partitions + p
  // runs partition p of replica r). Empty: the client's default assignment.
  std::vector<int> device_assignment;
  // A portable executable has no fixed device: each execution names the
  // device it runs on. Needs one replica and one partition.
  bool portable = false;
  // Layouts asked of the arguments by the compile options, minor-to-major
  // (an empty entry: none asked), which win over the program's own
  // `mhlo.layout_mode` (compile/memory_layouts.h).
  std::vector<std::vector<int64_t>> argument_layouts;
};

// An argument or output of an executable.
struct ValueInfo {
  Shape shape;
  MemoryKind memory_kind = MemoryKind::kDevice;
  // The layout it is taken or given in (empty: row-major). Execute lays
  // out an argument of another layout anew before the run reads it.
  std::vector<int64_t> minor_to_major;
};

// Estimates of the work of one execution (PJRT_Executable_GetCostAnalysis).
struct CostAnalysis {
  double flops = 0;
  double transcendentals = 0;
  double bytes_accessed = 0;
};

// Memory one execution takes (PJRT_Executable_GetCompiledMemoryStats).
struct CompiledMemoryStats {
  int64_t argument_bytes = 0;
  int64_t output_bytes = 0;
  // Output bytes that reuse a donated argument's memory.
  int64_t alias_bytes = 0;
  // Scratch memory of one run.
  int64_t temp_bytes = 0;
  // The plan's constants: what stands for generated code on Kiln.
  int64_t constant_bytes = 0;
};

// One device's arguments for Execute.
struct ExecuteRequest {
  // The device position the run takes (index into addressable_devices()),
  // or -1 with `device` set: a portable executable or a one-device program
  // runs on any device; a multi-device program runs the replica or
  // partition that its assignment places on `device`.
  int position = -1;
  Device* device = nullptr;
  std::vector<std::shared_ptr<Buffer>> arguments;
  // Arguments whose buffers must not be donated even where the program
  // aliases them to an output.
  std::set<int> non_donatable;
  // PJRT_ExecuteOptions.launch_id: for a program with collectives started
  // one device at a time, the executions with the same id form one launch.
  int64_t launch_id = 0;
  // What FFI handlers of the run see (exec/ffi.h): the user data of the
  // execute context (may be null) and the run's id.
  std::shared_ptr<const exec::FfiUserData> ffi_user_data;
  int64_t run_id = 0;
};

struct ExecuteResult {
  std::vector<std::shared_ptr<Buffer>> outputs;
  // Fires when the run is done (with its error, if it failed).
  std::shared_ptr<Event> done;
};

class Executable {
 public:
  // Parses, verifies and compiles `program` for `client`'s devices.
  // INVALID_ARGUMENT for a program that does not parse or verify, an
  // assignment that names unknown devices or does not fit the replica and
  // partition counts; UNIMPLEMENTED for ops Kiln cannot run.
  static StatusOr<std::shared_ptr<Executable>> Compile(const Client& client,
                                                       std::string_view program,
                                                       const CompileSpec& spec);

  // Cancels the runs in flight whose outputs are all gone (run_registry.h).
  ~Executable();
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;

  // The module's name (`module @jit_f`), else "main".
  const std::string& name() const { return name_; }
  int num_replicas() const { return spec_.num_replicas; }
  int num_partitions() const { return spec_.num_partitions; }
  bool portable() const { return spec_.portable; }
  const CompileSpec& spec() const { return spec_; }
  // The devices of the assignment, replica-major (empty when portable),
  // in every process.
  const std::vector<Device*>& devices() const { return devices_; }
  // Those of this process, in assignment order, and their positions in
  // the assignment (r * num_partitions + p).
  const std::vector<Device*>& addressable_devices() const {
    return addressable_devices_;
  }
  const std::vector<int>& addressable_positions() const {
    return addressable_positions_;
  }
  const std::vector<ValueInfo>& parameters() const { return parameters_; }
  const std::vector<ValueInfo>& outputs() const { return outputs_; }
  // For each output, the argument the program donates to it, or -1.
  const std::vector<int>& output_aliases() const { return output_aliases_; }
  // A fingerprint of the program text and the spec, stable across
  // processes.
  uint64_t fingerprint() const { return fingerprint_; }
  // The program as Kiln read it, printed as MLIR text.
  const std::string& program_text() const { return program_text_; }
  // The program as it runs (OptimizedProgram): for a partitioned program,
  // the first partition's, over its tiles; else the program text.
  const std::string& optimized_text() const { return optimized_text_; }
  const CostAnalysis& cost() const { return cost_; }
  const CompiledMemoryStats& memory_stats() const { return memory_stats_; }
  // Serialized `xla.OpSharding` protos of the parameters and outputs of a
  // partitioned program (empty for one that is not partitioned).
  const std::vector<std::string>& parameter_shardings() const {
    return parameter_shardings_;
  }
  const std::vector<std::string>& output_shardings() const {
    return output_shardings_;
  }
  // Whether executions run on the caller's thread when their arguments are
  // ready (see executable.cc).
  bool runs_inline() const { return runs_inline_; }

  // Whether the program has collectives between devices, so that its runs
  // start as launches (see the file comment).
  bool has_collectives() const { return has_collectives_; }

  // Starts one execution. Errors in the request (argument count, shapes,
  // devices, deleted buffers) come back here as INVALID_ARGUMENT and start
  // nothing; errors of the run come through the result's events. For a
  // program with collectives, the execution is one participant of the
  // launch `request.launch_id` and starts when all have joined.
  StatusOr<ExecuteResult> Execute(ExecuteRequest request) const;

  // Starts one execution per request (normally one per device position,
  // as PJRT_LoadedExecutable_Execute gives them). Every request is
  // prepared before any starts. A program with collectives needs exactly
  // one request per position; they run as one launch.
  StatusOr<std::vector<ExecuteResult>> ExecuteLaunch(
      std::vector<ExecuteRequest> requests) const;

  // The checks Execute and ExecuteLaunch make before they start anything.
  Status CheckRequest(const ExecuteRequest& request) const;

 private:
  Executable() = default;

  struct Target {
    Device* device = nullptr;
    size_t plan = 0;
    int position = 0;  // the participant id in a launch
    int local = 0;     // the index into addressable_devices()
  };
  StatusOr<Target> Resolve(const ExecuteRequest& request) const;
  // CheckRequest's checks of the arguments, for the target Resolve gave.
  Status CheckArguments(const ExecuteRequest& request,
                        const Target& target) const;
  // Where a launch's participants are when they span processes (empty
  // when all are here).
  exec::CrossProcessLaunch CrossProcess() const;
  // One execution ready to start (defined in executable.cc).
  struct Prepared;
  StatusOr<std::unique_ptr<Prepared>> Prepare(ExecuteRequest request) const;
  // Links the run into the client's registry (run_registry.h).
  void Register(Prepared& prepared) const;
  // Starts a run that meets no peers: inline when it is small and its
  // inputs are ready, else (registered) on its device's queue when they
  // are.
  void Start(Prepared& prepared) const;
  // Joins `prepared` to the launch `launch_id`; starts it when complete.
  Status JoinLaunch(int64_t launch_id,
                    std::unique_ptr<Prepared> prepared) const;
  // Ends the members of pending launch `launch_id` with an error naming
  // `status` (a device that could not join).
  void FailLaunch(int64_t launch_id, const Status& status) const;

  std::string name_;
  CompileSpec spec_;
  std::vector<Device*> devices_;
  std::vector<Device*> addressable_devices_;
  std::vector<int> addressable_positions_;
  std::shared_ptr<exec::ProcessCollectives> process_collectives_;
  std::vector<ValueInfo> parameters_;
  std::vector<ValueInfo> outputs_;
  std::vector<int> output_aliases_;
  std::vector<std::string> parameter_shardings_;
  std::vector<std::string> output_shardings_;
  // One plan per device position, or one shared by all.
  std::vector<std::shared_ptr<const exec::Plan>> plans_;
  uint64_t fingerprint_ = 0;
  std::string program_text_;
  std::string optimized_text_;
  CostAnalysis cost_;
  CompiledMemoryStats memory_stats_;
  bool runs_inline_ = false;
  bool has_collectives_ = false;
  std::chrono::milliseconds collective_timeout_{0};
  // The client's runs in flight (run_registry.h): destroying the
  // executable cancels those of its runs that nobody can receive results
  // from.
  std::shared_ptr<RunRegistry> client_runs_;
  // Launches being joined one device at a time, by launch id.
  struct PendingLaunch;
  mutable std::mutex launches_mutex_;
  mutable std::map<int64_t, std::shared_ptr<PendingLaunch>> launches_;
};

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_EXECUTABLE_H_
