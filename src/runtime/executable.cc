#include "runtime/executable.h"

#include <algorithm>
#include <set>
#include <unordered_set>

#include "base/fingerprint.h"
#include "base/logging.h"
#include "compile/pipeline.h"
#include "exec/collectives.h"
#include "exec/executor.h"
#include "exec/parallel.h"
#include "exec/plan.h"
#include "ir/elementwise_traits.h"
#include "ir/printer.h"
#include "parse/parse.h"
#include "runtime/device.h"
#include "runtime/storage.h"
#include "runtime/tracing.h"
#include "runtime/transfer.h"
#include "runtime/work_queue.h"

namespace kiln::runtime {
namespace {

// Executions whose estimated work is below this many floating-point
// operations run on the calling thread when their arguments are ready: a
// hand-off to the device's queue costs a thread wake-up (a few
// microseconds), more than such a program takes. The figure is the one
// XLA's CPU client uses for the same decision (its comment: correlated
// with a thread context switch, about 5 us).
constexpr double kInlineFlopLimit = 1000;
// And whose operands and results, summed over every op, stay below this
// many bytes. Flops alone call a sort, a gather or a transpose of any size
// free; run on the caller's thread, such a program opened OpenMP regions
// there, and libgomp keeps a team per calling thread: with two teams on
// the machine's cores, it shortens how long idle threads spin before they
// sleep, and every later region on the device's queue paid for waking its
// team (solve 256 took 0.6 ms before an argsort of 512 x 1024 rows ran
// inline, 1.6-1.9 ms after).
constexpr double kInlineByteLimit = 64 * 1024;

// --- Cost analysis --------------------------------------------------------

double StaticElements(const ir::Type& type) {
  if (!type.IsTensor() || !type.HasStaticShape()) return 0;
  return static_cast<double>(type.NumElements());
}

double StaticBytes(const ir::Type& type) {
  if (!type.IsTensor() || !type.HasStaticShape()) return 0;
  return StaticElements(type) * ir::StorageBytes(type.StorageElementType());
}

// Ops that move or reinterpret data without arithmetic.
bool IsDataMovement(std::string_view name) {
  static const std::unordered_set<std::string_view> kNames = {
      "stablehlo.constant",
      "stablehlo.reshape",
      "stablehlo.transpose",
      "stablehlo.broadcast_in_dim",
      "stablehlo.broadcast",
      "stablehlo.slice",
      "stablehlo.dynamic_slice",
      "stablehlo.dynamic_update_slice",
      "stablehlo.concatenate",
      "stablehlo.gather",
      "stablehlo.pad",
      "stablehlo.reverse",
      "stablehlo.iota",
      "stablehlo.convert",
      "stablehlo.bitcast_convert",
      "stablehlo.get_tuple_element",
      "stablehlo.tuple",
      "stablehlo.optimization_barrier",
      "stablehlo.custom_call",
      "stablehlo.copy",
  };
  return kNames.count(name) > 0;
}

// An estimate of one run's work: flops as XLA's cost analysis counts them
// (a multiply-add is two), per op of every function.
CostAnalysis EstimateCost(const ir::Module& module) {
  CostAnalysis cost;
  module.op().Walk([&](ir::Operation& op) {
    std::string_view name = op.name();
    if (name == "builtin.module" || name == "func.func" ||
        name == "func.return" || name == "stablehlo.return" ||
        name == "func.call") {
      return;
    }
    double result_elements = 0;
    for (int i = 0; i < op.num_results(); ++i) {
      result_elements += StaticElements(op.result(i)->type());
      cost.bytes_accessed += StaticBytes(op.result(i)->type());
    }
    for (int i = 0; i < op.num_operands(); ++i) {
      cost.bytes_accessed += StaticBytes(op.operand(i)->type());
    }
    if (name == "stablehlo.dot_general" &&
        op.GetAttr("dot_dimension_numbers")
            .is(ir::AttrKind::kDotDimensionNumbers)) {
      const ir::Type& lhs = op.operand(0)->type();
      double contracted = 1;
      for (int64_t d : op.GetAttr("dot_dimension_numbers")
                           .dot()
                           .lhs_contracting_dimensions) {
        if (lhs.IsTensor() && d >= 0 && d < lhs.rank())
          contracted *= lhs.dim(d);
      }
      cost.flops += 2 * result_elements * contracted;
    } else if (name == "stablehlo.dot" && op.num_operands() == 2) {
      const ir::Type& lhs = op.operand(0)->type();
      double contracted =
          lhs.IsTensor() && lhs.rank() > 0 ? lhs.dim(lhs.rank() - 1) : 1;
      cost.flops += 2 * result_elements * contracted;
    } else if (name == "stablehlo.convolution" && op.num_operands() == 2 &&
               op.GetAttr("dimension_numbers")
                   .is(ir::AttrKind::kConvDimensionNumbers)) {
      const ir::Type& kernel = op.operand(1)->type();
      int64_t out_dim = op.GetAttr("dimension_numbers")
                            .conv()
                            .kernel_output_feature_dimension;
      double per_output = StaticElements(kernel);
      if (kernel.IsTensor() && out_dim >= 0 && out_dim < kernel.rank() &&
          kernel.dim(out_dim) > 0) {
        per_output /= static_cast<double>(kernel.dim(out_dim));
      }
      cost.flops += 2 * result_elements * per_output;
    } else if (name == "stablehlo.reduce" ||
               name == "stablehlo.reduce_window") {
      for (int i = 0; i < op.num_operands() / 2; ++i) {
        cost.flops += StaticElements(op.operand(i)->type());
      }
    } else if (const ir::ElementwiseTraits* traits =
                   ir::FindElementwiseTraits(op.code());
               traits != nullptr &&
               traits->cost == ir::OpCost::kTranscendental) {
      cost.transcendentals += result_elements;
      cost.flops += result_elements;
    } else if (!IsDataMovement(name) && op.num_regions() == 0) {
      cost.flops += result_elements;
    }
  });
  return cost;
}

// --- Specs ----------------------------------------------------------------

StatusOr<Shape> ShapeOf(const exec::ValueSpec& spec, std::string_view what) {
  if (spec.is_token) return Shape::Make(DType::kToken, {});
  std::optional<DType> dtype = FromIrElementType(spec.shape.type);
  if (!dtype) {
    return UnimplementedError(what, " has element type ",
                              ir::ElementTypeName(spec.shape.type),
                              ", which no PJRT buffer can hold");
  }
  return Shape::Make(*dtype, spec.shape.dims);
}

// The shape of the value whose bytes are the row-major array `physical`
// when laid out by `minor_to_major` (empty: row-major, the same shape).
StatusOr<Shape> LogicalShape(const Shape& physical,
                             const std::vector<int64_t>& minor_to_major) {
  if (minor_to_major.empty()) return physical;
  const size_t rank = physical.rank();
  std::vector<int64_t> dims(rank);
  for (size_t k = 0; k < rank; ++k) {
    dims[minor_to_major[k]] = physical.dims()[rank - 1 - k];
  }
  return Shape::Make(physical.dtype(), dims);
}

// The memory kind a function argument or result asks for
// (`mhlo.memory_kind = "pinned_host"`), `device` when it asks for none.
StatusOr<MemoryKind> MemoryKindOf(const ir::Attribute& attrs,
                                  std::string_view what) {
  if (!attrs.is(ir::AttrKind::kDictionary)) return MemoryKind::kDevice;
  ir::Attribute kind = attrs.Get("mhlo.memory_kind");
  if (!kind) return MemoryKind::kDevice;
  if (!kind.is(ir::AttrKind::kString)) {
    return InvalidArgumentError(what, ": mhlo.memory_kind must be a string");
  }
  std::optional<MemoryKind> parsed = MemoryKindFromName(kind.string_value());
  if (!parsed) {
    return InvalidArgumentError(what, ": unknown memory kind \"",
                                kind.string_value(),
                                "\" (Kiln has device, pinned_host and "
                                "unpinned_host)");
  }
  return *parsed;
}

Status CheckAssignment(const Client& client, const CompileSpec& spec,
                       std::vector<int>& ids) {
  if (spec.num_replicas < 1 || spec.num_partitions < 1) {
    return InvalidArgumentError("num_replicas (", spec.num_replicas,
                                ") and num_partitions (", spec.num_partitions,
                                ") must be at least 1");
  }
  int64_t count = int64_t{spec.num_replicas} * spec.num_partitions;
  if (spec.portable) {
    if (count != 1) {
      return InvalidArgumentError(
          "a portable executable has one replica and one partition; this one "
          "asks for ",
          spec.num_replicas, " x ", spec.num_partitions);
    }
    ids.clear();
    return OkStatus();
  }
  if (spec.device_assignment.empty()) {
    ASSIGN_OR_RETURN(ids, client.DefaultDeviceAssignment(spec.num_replicas,
                                                         spec.num_partitions));
    return OkStatus();
  }
  if (static_cast<int64_t>(spec.device_assignment.size()) != count) {
    return InvalidArgumentError(
        "the device assignment has ", spec.device_assignment.size(),
        " devices; ", spec.num_replicas, " replicas x ", spec.num_partitions,
        " partitions need ", count);
  }
  std::set<int> seen;
  for (int id : spec.device_assignment) {
    RETURN_IF_ERROR(
        client.LookupDevice(id).status().WithContext("device assignment"));
    if (!seen.insert(id).second) {
      return InvalidArgumentError("the device assignment names device ", id,
                                  " twice");
    }
  }
  ids = spec.device_assignment;
  return OkStatus();
}

// Hands the runtime's storage to the plan's outputs.
class StorageOutputs : public exec::OutputAllocator {
 public:
  explicit StorageOutputs(const std::vector<std::shared_ptr<Storage>>& storage)
      : storage_(storage) {}
  StatusOr<void*> Allocate(int index, const exec::ValueSpec& spec) override {
    if (index < 0 || index >= static_cast<int>(storage_.size()) ||
        storage_[index]->size() < static_cast<size_t>(spec.byte_size())) {
      return InternalError("output ", index, " has no storage of ",
                           spec.byte_size(), " bytes");
    }
    return storage_[index]->data();
  }

 private:
  const std::vector<std::shared_ptr<Storage>>& storage_;
};

// Everything one run needs, kept alive until it is done.
struct Run {
  std::shared_ptr<const exec::Plan> plan;
  std::vector<std::shared_ptr<Storage>> arguments;  // null for tokens
  std::vector<std::shared_ptr<Storage>> outputs;
  std::shared_ptr<Event> done;
  // The launch's communicator (null for a run on its own) and the run's
  // participant id there.
  std::shared_ptr<exec::Communicator> communicator;
  int participant = 0;
  std::shared_ptr<const exec::FfiUserData> ffi_user_data;
  int device_ordinal = 0;
  int64_t run_id = 0;
  std::string name;  // the program's, for traces
  // Cancels the run (run_registry.h); its scratch arena's bytes, held from
  // the client's memory budget while the run lives.
  RunControl control;
  MemoryReservation scratch;
  // The run's place among its device's runs in flight (in_flight.h).
  InFlightLimit::Token in_flight;

  Status Execute() const {
    std::vector<const void*> pointers;
    pointers.reserve(arguments.size());
    for (const auto& storage : arguments) {
      pointers.push_back(storage ? storage->data() : nullptr);
    }
    StorageOutputs allocator(outputs);
    exec::RunOptions options;
    options.flush_denormals = true;
    options.communicator = communicator.get();
    options.participant = participant;
    options.cancel = control.flag();
    options.ffi_user_data = ffi_user_data.get();
    options.device_ordinal = device_ordinal;
    options.run_id = run_id;
    if (!TracingActive()) {
      return exec::Execute(*plan, pointers, allocator, options).status();
    }
    // A profiler is listening (runtime/tracing.h): the run and its steps.
    exec::Profile profile;
    const int64_t origin_ns = WallNanos();
    options.profile = &profile;
    Status status = exec::Execute(*plan, pointers, allocator, options).status();
    RecordRun(name, device_ordinal, origin_ns, WallNanos(), profile, origin_ns);
    return status;
  }
};

StatusOr<std::shared_ptr<Storage>> ArgumentStorage(
    const ExecuteRequest& request, size_t i) {
  auto storage = request.arguments[i]->AcquireStorage();
  if (!storage.ok()) {
    return InvalidArgumentError("argument ", i, ": ",
                                storage.status().message());
  }
  return storage;
}

void Finish(std::shared_ptr<Run> run) {
  Status status = run->Execute();
  std::shared_ptr<Event> done = std::move(run->done);
  // Drop the run's holds on argument storage before anyone hears it is
  // done (a waiter may be the last user of borrowed host memory).
  run.reset();
  done->Set(std::move(status)).IgnoreError();
}

// Ends a run that never started with `status`.
void Fail(std::shared_ptr<Run> run, const Status& status) {
  std::shared_ptr<Event> done = std::move(run->done);
  run.reset();
  done->Set(status).IgnoreError();
}

// Held while the participants of one launch go on their queues, so that
// all queues see launches in one order.
std::mutex& LaunchOrderMutex() {
  static std::mutex* mutex = new std::mutex();
  return *mutex;
}

}  // namespace

// One execution ready to start: its run, where it goes, and when its
// inputs are ready.
struct Executable::Prepared {
  std::shared_ptr<Run> run;
  std::shared_ptr<WorkQueue> queue;
  std::shared_ptr<Event> inputs_ready;
  int position = 0;
  int local = 0;  // index into addressable_devices()
  ExecuteResult result;
};

// The participants of a launch that joins one device at a time.
struct Executable::PendingLaunch {
  std::vector<std::unique_ptr<Prepared>> members;  // by position
  size_t joined = 0;
};

namespace {

// Starts the participants of one launch (one per position, in order) once
// all their inputs are ready: together, under LaunchOrderMutex. When some
// participant's inputs failed, none runs: that participant reports its
// inputs' error and the others name it.
//
// `members` are this process's participants; with `cross_process` set the
// launch has `num_participants` in all processes and the others run there.
template <typename Member>
void StartLaunch(std::vector<std::unique_ptr<Member>> members,
                 std::chrono::milliseconds timeout, int num_participants,
                 exec::CrossProcessLaunch cross_process) {
  auto communicator =
      std::make_shared<exec::Communicator>(num_participants, timeout);
  if (cross_process.collectives != nullptr) {
    communicator->SetCrossProcess(std::move(cross_process));
  }
  std::vector<std::shared_ptr<Event>> ready;
  for (auto& member : members) {
    member->run->communicator = communicator;
    ready.push_back(member->inputs_ready);
  }
  std::shared_ptr<Event> all_ready = Event::AfterAll(ready);
  // Shared: event callbacks are copyable.
  auto launch = std::make_shared<std::vector<std::unique_ptr<Member>>>(
      std::move(members));
  all_ready->OnReady([launch, communicator](const Status& status) {
    std::vector<std::unique_ptr<Member>>& members = *launch;
    if (!status.ok()) {
      size_t failed = 0;
      while (failed < members.size() &&
             members[failed]->inputs_ready->status().ok()) {
        ++failed;
      }
      communicator->Abort(
          failed < members.size() ? members[failed]->position : 0, status);
      for (size_t i = 0; i < members.size(); ++i) {
        Fail(std::move(members[i]->run),
             i == failed ? status
                         : AbortedError("participant ", failed,
                                        " of the launch could not start: ",
                                        status.ToString()));
      }
      return;
    }
    std::lock_guard<std::mutex> lock(LaunchOrderMutex());
    for (auto& member : members) {
      member->queue->Enqueue(
          [run = std::move(member->run)]() mutable { Finish(std::move(run)); });
    }
  });
}

}  // namespace

Executable::~Executable() {
  // Launches some devices joined and others never will: their runs end
  // now, rather than leave their events unset for ever.
  std::map<int64_t, std::shared_ptr<PendingLaunch>> pending;
  {
    std::lock_guard<std::mutex> lock(launches_mutex_);
    pending.swap(launches_);
  }
  for (auto& [launch_id, launch] : pending) {
    for (auto& member : launch->members) {
      if (member == nullptr) continue;
      Fail(std::move(member->run),
           CancelledError("the executable ", name_,
                          " was destroyed before every device joined launch ",
                          launch_id));
    }
  }
  if (client_runs_ != nullptr) client_runs_->CancelUnobserved(this);
}

exec::CrossProcessLaunch Executable::CrossProcess() const {
  exec::CrossProcessLaunch launch;
  if (addressable_devices_.size() == devices_.size()) return launch;
  launch.collectives = process_collectives_;
  for (Device* device : devices_) {
    launch.devices.push_back(device->id());
    launch.local.push_back(device->addressable());
  }
  return launch;
}

StatusOr<std::shared_ptr<Executable>> Executable::Compile(
    const Client& client, std::string_view program, const CompileSpec& spec) {
  std::shared_ptr<Executable> executable(new Executable());
  executable->spec_ = spec;
  std::vector<int> ids;
  RETURN_IF_ERROR(CheckAssignment(client, spec, ids));
  executable->spec_.device_assignment = ids;
  for (int id : ids) {
    ASSIGN_OR_RETURN(Device * device, client.LookupDevice(id));
    if (device->addressable()) {
      executable->addressable_positions_.push_back(
          static_cast<int>(executable->devices_.size()));
      executable->addressable_devices_.push_back(device);
    }
    executable->devices_.push_back(device);
  }
  executable->process_collectives_ = client.process_collectives();

  ASSIGN_OR_RETURN(std::unique_ptr<ir::Module> module,
                   parse::ParseModule(program, "<program>"));
  const ir::Operation* entry = module->EntryFunction();
  if (entry == nullptr) {
    return InvalidArgumentError(
        "the program has no entry function (@main or a single public "
        "function)");
  }
  std::string name = module->name();
  executable->name_ = name.empty() ? "main" : name;

  compile::PipelineOptions options;
  options.num_replicas = spec.num_replicas;
  options.num_partitions = spec.num_partitions;
  options.num_devices = static_cast<int>(ids.size());
  options.argument_layouts = spec.argument_layouts;
  ASSIGN_OR_RETURN(compile::CompiledProgram compiled,
                   compile::RunPipeline(*module, options));
  for (std::unique_ptr<exec::Plan>& plan : compiled.plans) {
    executable->plans_.push_back(std::move(plan));
  }
  executable->parameter_shardings_ = std::move(compiled.parameter_shardings);
  executable->output_shardings_ = std::move(compiled.output_shardings);
  const compile::MemoryLayouts& memory_layouts = compiled.memory_layouts;
  const exec::Plan& plan = *executable->plans_.front();

  for (size_t i = 0; i < plan.arguments().size(); ++i) {
    std::string what = StrCat("argument ", i);
    ValueInfo info;
    ASSIGN_OR_RETURN(info.shape, ShapeOf(plan.arguments()[i], what));
    // Arguments are flattened tuples only when the entry takes tuples;
    // memory kinds are read where arguments and leaves coincide.
    if (static_cast<int>(plan.arguments().size()) ==
        ir::func::Body(*entry).num_arguments()) {
      ASSIGN_OR_RETURN(info.memory_kind,
                       MemoryKindOf(ir::func::ArgAttrs(*entry, i), what));
      ASSIGN_OR_RETURN(info.shape,
                       LogicalShape(info.shape, memory_layouts.arguments[i]));
      info.minor_to_major = memory_layouts.arguments[i];
    }
    executable->parameters_.push_back(std::move(info));
  }
  const ir::Operation* terminator = ir::func::Body(*entry).terminator();
  bool results_match =
      terminator != nullptr &&
      terminator->num_operands() == static_cast<int>(plan.outputs().size());
  for (size_t i = 0; i < plan.outputs().size(); ++i) {
    std::string what = StrCat("result ", i);
    ValueInfo info;
    ASSIGN_OR_RETURN(info.shape, ShapeOf(plan.outputs()[i], what));
    if (results_match) {
      ASSIGN_OR_RETURN(info.memory_kind,
                       MemoryKindOf(ir::func::ResultAttrs(*entry, i), what));
      ASSIGN_OR_RETURN(info.shape,
                       LogicalShape(info.shape, memory_layouts.results[i]));
      info.minor_to_major = memory_layouts.results[i];
    }
    executable->outputs_.push_back(std::move(info));
  }
  executable->output_aliases_ = plan.output_aliases();

  // Without locations: a portable artifact's debug locations can make the
  // text many times larger, and they change nothing the fingerprint or a
  // reader of OptimizedProgram cares about.
  ir::PrintOptions print_options;
  print_options.locations = false;
  executable->program_text_ = ir::PrintModule(*module, print_options);
  // What a partitioned program's first partition runs: its tiles, its
  // collectives, no Shardy left.
  executable->optimized_text_ = compiled.partitioned
                                    ? std::move(compiled.partitioned_text)
                                    : executable->program_text_;
  uint64_t fingerprint = Fingerprint64(executable->program_text_);
  fingerprint = FingerprintCombine(fingerprint, spec.num_replicas);
  fingerprint = FingerprintCombine(fingerprint, spec.num_partitions);
  fingerprint = FingerprintCombine(fingerprint, spec.portable ? 1 : 0);
  for (int id : ids) fingerprint = FingerprintCombine(fingerprint, id);
  executable->fingerprint_ = fingerprint;

  executable->cost_ = EstimateCost(*module);
  executable->has_collectives_ =
      executable->devices_.size() > 1 && plan.num_collectives() > 0;
  executable->collective_timeout_ = client.collective_timeout();
  executable->client_runs_ = client.runs();
  // Participants of a launch wait for each other, and a loop may not end:
  // never on the caller's thread.
  bool has_loop = false;
  module->op().Walk([&](ir::Operation& op) {
    if (op.name() == "stablehlo.while") has_loop = true;
  });
  executable->runs_inline_ =
      executable->cost_.flops < kInlineFlopLimit &&
      executable->cost_.bytes_accessed < kInlineByteLimit &&
      !executable->has_collectives_ && !has_loop;

  CompiledMemoryStats& stats = executable->memory_stats_;
  for (const ValueInfo& info : executable->parameters_) {
    stats.argument_bytes += info.shape.byte_size();
  }
  for (size_t i = 0; i < executable->outputs_.size(); ++i) {
    stats.output_bytes += executable->outputs_[i].shape.byte_size();
    if (executable->output_aliases_[i] >= 0) {
      stats.alias_bytes += executable->outputs_[i].shape.byte_size();
    }
  }
  stats.temp_bytes = plan.arena_bytes();
  for (const exec::AlignedBuffer& constant : plan.constants()) {
    stats.constant_bytes += static_cast<int64_t>(constant.size());
  }
  return executable;
}

StatusOr<Executable::Target> Executable::Resolve(
    const ExecuteRequest& request) const {
  Target target;
  target.device = request.device;
  if (request.position >= 0) {
    if (request.position >= static_cast<int>(addressable_devices_.size())) {
      return InvalidArgumentError(
          "device position ", request.position, " is outside the executable's ",
          addressable_devices_.size(), " addressable devices");
    }
    target.device = addressable_devices_[request.position];
    target.position = addressable_positions_[request.position];
    target.local = request.position;
    if (plans_.size() > 1) target.plan = target.position;
  } else if (target.device == nullptr) {
    return InvalidArgumentError("no device to execute on");
  } else if (!target.device->addressable()) {
    return InvalidArgumentError(
        target.device->debug_string(), " belongs to process ",
        target.device->process_index(),
        "; an execution runs only on this process's devices");
  } else if (devices_.size() > 1) {
    // One replica or partition of a multi-device program, run alone on its
    // device (PyTorch/XLA runs replicated programs one device at a time).
    auto it = std::find(devices_.begin(), devices_.end(), target.device);
    if (it == devices_.end()) {
      return InvalidArgumentError(target.device->debug_string(),
                                  " is not among the ", devices_.size(),
                                  " devices of the executable's assignment");
    }
    size_t position = static_cast<size_t>(it - devices_.begin());
    target.position = static_cast<int>(position);
    target.local = static_cast<int>(std::find(addressable_positions_.begin(),
                                              addressable_positions_.end(),
                                              target.position) -
                                    addressable_positions_.begin());
    if (plans_.size() > 1) target.plan = position;
  }
  return target;
}

Status Executable::CheckRequest(const ExecuteRequest& request) const {
  ASSIGN_OR_RETURN(Target target, Resolve(request));
  return CheckArguments(request, target);
}

Status Executable::CheckArguments(const ExecuteRequest& request,
                                  const Target& target) const {
  const size_t count = request.arguments.size();
  if (count != parameters_.size()) {
    return InvalidArgumentError("the executable takes ", parameters_.size(),
                                " arguments; ", count, " were given");
  }
  for (size_t i = 0; i < count; ++i) {
    const std::shared_ptr<Buffer>& buffer = request.arguments[i];
    if (buffer == nullptr) {
      return InvalidArgumentError("argument ", i, " is null");
    }
    if (buffer->IsDeleted()) {
      return InvalidArgumentError("argument ", i, " (", buffer->ToString(),
                                  ") was deleted or donated");
    }
    // JAX passes tokens as empty arrays (pred[0]): a token carries no data,
    // so any buffer without elements stands for one.
    const bool token_stand_in = parameters_[i].shape.dtype() == DType::kToken &&
                                buffer->shape().element_count() == 0;
    if (!(buffer->shape() == parameters_[i].shape) && !token_stand_in) {
      return InvalidArgumentError(
          "argument ", i, " is ", buffer->shape().ToString(),
          "; the executable takes ", parameters_[i].shape.ToString());
    }
    if (buffer->device() != target.device) {
      return InvalidArgumentError("argument ", i, " (", buffer->ToString(),
                                  ") is not on ", target.device->debug_string(),
                                  ", where this execution runs");
    }
  }
  for (int index : request.non_donatable) {
    if (index < 0 || index >= static_cast<int>(count)) {
      return InvalidArgumentError("non-donatable input index ", index,
                                  " is outside the ", count, " arguments");
    }
  }
  // A donated buffer must be used once: donating it would free what its
  // other use still reads. XLA refuses the call in the same way, and JAX
  // relies on it (`f(donate(a), a)` raises).
  for (int output_alias : output_aliases_) {
    if (output_alias < 0 || request.non_donatable.count(output_alias) > 0) {
      continue;
    }
    const size_t donated = static_cast<size_t>(output_alias);
    for (size_t i = 0; i < count; ++i) {
      if (i == donated || request.arguments[i] != request.arguments[donated]) {
        continue;
      }
      return InvalidArgumentError(
          "argument ", donated, " is donated and also passed as argument ", i,
          ": a buffer cannot be donated and used again in the same call to "
          "Execute()");
    }
  }
  return OkStatus();
}

StatusOr<std::unique_ptr<Executable::Prepared>> Executable::Prepare(
    ExecuteRequest request) const {
  ASSIGN_OR_RETURN(Target target, Resolve(request));
  RETURN_IF_ERROR(CheckArguments(request, target));
  // An argument in another layout than the program takes is laid out anew
  // (the copy is the run's, so the caller's buffer is not donated).
  for (size_t i = 0; i < request.arguments.size(); ++i) {
    const std::vector<int64_t>& layout = parameters_[i].minor_to_major;
    if (request.arguments[i]->minor_to_major() == layout) continue;
    ASSIGN_OR_RETURN(request.arguments[i],
                     Relayout(request.arguments[i], layout));
    request.non_donatable.insert(static_cast<int>(i));
  }
  Device* device = target.device;
  const std::shared_ptr<const exec::Plan>& plan = plans_[target.plan];
  const size_t count = request.arguments.size();
  // Which arguments give their storage to an output.
  std::vector<int> donated_to(count, -1);
  for (size_t output = 0; output < output_aliases_.size(); ++output) {
    int argument = output_aliases_[output];
    if (argument < 0 || request.non_donatable.count(argument) > 0 ||
        request.arguments[argument]->external_reference_count() > 0) {
      continue;
    }
    donated_to[argument] = static_cast<int>(output);
  }

  auto run = std::make_shared<Run>();
  // A place among the device's runs in flight, taken before any output is
  // allocated. Not for runs with collectives, which wait for partners the
  // caller may be about to issue, nor on a device's queue thread (a host
  // callback issuing work there could wait on the run that called it).
  if (!has_collectives_ && device->in_flight() != nullptr &&
      !WorkQueue::OnAnyQueueThread()) {
    run->in_flight = device->in_flight()->Acquire();
  }
  run->plan = plan;
  run->participant = target.position;
  run->ffi_user_data = request.ffi_user_data;
  run->device_ordinal = device->id();
  run->run_id = request.run_id;
  run->name = name();
  run->arguments.resize(count);
  std::vector<std::shared_ptr<Event>> ready;
  ready.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    ready.push_back(request.arguments[i]->ready_event());
    if (donated_to[i] >= 0) continue;
    ASSIGN_OR_RETURN(run->arguments[i], ArgumentStorage(request, i));
  }

  // Outputs: fresh storage, or a donated argument's when nothing else
  // holds it (an earlier execution may still be reading it).
  run->outputs.resize(outputs_.size());
  for (size_t i = 0; i < count; ++i) {
    if (donated_to[i] < 0) continue;
    auto storage = request.arguments[i]->Donate();
    if (!storage.ok()) {
      // Deleted or given an external reference meanwhile, or holding an
      // error: read it as an ordinary argument.
      donated_to[i] = -1;
      ASSIGN_OR_RETURN(run->arguments[i], ArgumentStorage(request, i));
      continue;
    }
    std::shared_ptr<Storage> donated = std::move(storage).value();
    const int output = donated_to[i];
    // Only this run holds the bytes now: no earlier work still reads them.
    if (donated != nullptr && donated.use_count() == 1 && donated->writable() &&
        donated->size() >=
            static_cast<size_t>(outputs_[output].shape.byte_size())) {
      run->outputs[output] = donated;
    }
    run->arguments[i] = std::move(donated);
  }
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (run->outputs[i] != nullptr) continue;
    // The plan writes every byte of its outputs.
    StatusOr<std::shared_ptr<Storage>> storage =
        Storage::Allocate(outputs_[i].shape.byte_size(), device->counters(),
                          StorageFill::kUninitialized);
    if (!storage.ok()) {
      return storage.status().WithContext(StrCat(
          "output ", i, " (", outputs_[i].shape.ToString(), ") of ", name_));
    }
    run->outputs[i] = std::move(storage).value();
  }
  StatusOr<MemoryReservation> scratch =
      MemoryReservation::Take(device->counters()->budget, plan->arena_bytes());
  if (!scratch.ok()) {
    return scratch.status().WithContext(
        StrCat("the scratch memory of ", name_));
  }
  run->scratch = std::move(scratch).value();

  auto prepared = std::make_unique<Prepared>();
  prepared->result.done = Event::Create();
  run->done = prepared->result.done;
  prepared->result.outputs.reserve(outputs_.size());
  for (size_t i = 0; i < outputs_.size(); ++i) {
    prepared->result.outputs.push_back(Buffer::Create(
        outputs_[i].shape, device->memory_space(outputs_[i].memory_kind),
        run->outputs[i], prepared->result.done, outputs_[i].minor_to_major));
  }
  prepared->run = std::move(run);
  prepared->queue = device->queue();
  prepared->inputs_ready = Event::AfterAll(ready);
  prepared->position = target.position;
  prepared->local = target.local;
  return prepared;
}

void Executable::Register(Prepared& prepared) const {
  prepared.run->control.Register(client_runs_, this, prepared.result.outputs);
}

void Executable::Start(Prepared& prepared) const {
  // Small and its inputs ready: inline, ending before Execute returns, so
  // nothing can cancel it (it has no loops) and it skips the client's
  // registry.
  const std::shared_ptr<Event>& inputs_ready = prepared.inputs_ready;
  if (runs_inline_ && inputs_ready->IsReady() && inputs_ready->status().ok()) {
    exec::SerialScope serial;  // no thread team for the caller's thread
    Finish(std::move(prepared.run));
    return;
  }
  // Else on its device's queue once its inputs are ready.
  Register(prepared);
  inputs_ready->OnReady(
      [run = std::move(prepared.run),
       queue = std::move(prepared.queue)](const Status& status) mutable {
        if (!status.ok()) {
          Fail(std::move(run), status);
          return;
        }
        queue->Enqueue(
            [run = std::move(run)]() mutable { Finish(std::move(run)); });
      });
}

Status Executable::JoinLaunch(int64_t launch_id,
                              std::unique_ptr<Prepared> prepared) const {
  std::vector<std::unique_ptr<Prepared>> members;
  {
    std::lock_guard<std::mutex> lock(launches_mutex_);
    std::shared_ptr<PendingLaunch>& pending = launches_[launch_id];
    if (pending == nullptr) {
      pending = std::make_shared<PendingLaunch>();
      pending->members.resize(addressable_devices_.size());
    }
    const int local = prepared->local;
    if (pending->members[local] != nullptr) {
      return InvalidArgumentError(
          "device position ", prepared->position, " (",
          addressable_devices_[local]->debug_string(),
          ") already joined launch ", launch_id,
          " of this executable; each device joins a launch once");
    }
    pending->members[local] = std::move(prepared);
    if (++pending->joined < addressable_devices_.size()) return OkStatus();
    members = std::move(pending->members);
    launches_.erase(launch_id);
  }
  StartLaunch(std::move(members), collective_timeout_,
              static_cast<int>(devices_.size()), CrossProcess());
  return OkStatus();
}

void Executable::FailLaunch(int64_t launch_id, const Status& status) const {
  std::shared_ptr<PendingLaunch> pending;
  {
    std::lock_guard<std::mutex> lock(launches_mutex_);
    auto it = launches_.find(launch_id);
    if (it == launches_.end()) return;
    pending = std::move(it->second);
    launches_.erase(it);
  }
  for (auto& member : pending->members) {
    if (member == nullptr) continue;
    Fail(std::move(member->run),
         AbortedError("another device of launch ", launch_id,
                      " could not join it: ", status.ToString()));
  }
}

StatusOr<ExecuteResult> Executable::Execute(ExecuteRequest request) const {
  const int64_t launch_id = request.launch_id;
  auto prepared_or = Prepare(std::move(request));
  if (!prepared_or.ok()) {
    // The devices that joined already would wait for this one forever.
    if (has_collectives_) FailLaunch(launch_id, prepared_or.status());
    return prepared_or.status();
  }
  std::unique_ptr<Prepared> prepared = std::move(prepared_or).value();
  if (has_collectives_) {
    ExecuteResult result = prepared->result;
    Register(*prepared);
    RETURN_IF_ERROR(JoinLaunch(launch_id, std::move(prepared)));
    return result;
  }
  Start(*prepared);
  return std::move(prepared->result);
}

StatusOr<std::vector<ExecuteResult>> Executable::ExecuteLaunch(
    std::vector<ExecuteRequest> requests) const {
  std::vector<std::unique_ptr<Prepared>> prepared;
  prepared.reserve(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    auto one = Prepare(std::move(requests[i]));
    if (!one.ok()) {
      // Nothing has started: the prepared runs are dropped unstarted.
      return one.status().WithContext(StrCat("execution ", i));
    }
    prepared.push_back(std::move(one).value());
  }
  std::vector<ExecuteResult> results;
  results.reserve(prepared.size());
  if (!has_collectives_) {
    for (auto& one : prepared) {
      Start(*one);
      results.push_back(std::move(one->result));
    }
    return results;
  }
  for (const auto& one : prepared) results.push_back(one->result);
  std::vector<std::unique_ptr<Prepared>> members(addressable_devices_.size());
  for (auto& one : prepared) {
    const int local = one->local;
    if (members[local] != nullptr) {
      return InvalidArgumentError("device position ", one->position,
                                  " is given twice in one launch");
    }
    Register(*one);
    members[local] = std::move(one);
  }
  for (size_t local = 0; local < members.size(); ++local) {
    if (members[local] == nullptr) {
      return InvalidArgumentError(
          "the program's collectives need all ", addressable_devices_.size(),
          " of this process's device positions in one launch; position ",
          addressable_positions_[local], " is missing");
    }
  }
  StartLaunch(std::move(members), collective_timeout_,
              static_cast<int>(devices_.size()), CrossProcess());
  return results;
}

}  // namespace kiln::runtime
