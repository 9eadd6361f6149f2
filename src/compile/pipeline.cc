// The compile pipeline (pipeline.h): its steps in order, each a function
// over the programs of the device positions, and Compile, the steps that
// compile one program.
#include "compile/pipeline.h"

#include <algorithm>
#include <optional>
#include <span>

#include "base/logging.h"
#include "base/strings.h"
#include "compile/custom_call.h"
#include "compile/lowering.h"
#include "compile/recover_erfc.h"
#include "compile/sharding.h"
#include "compile/spmd_partition.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace kiln::compile {
namespace {

// One device position's program as the steps carry it: the input module
// until a step rewrites it, then the position's own copy (`owned`, which
// is verified again before lowering).
struct PositionProgram {
  CompileOptions options;
  const ir::Module* module = nullptr;
  std::unique_ptr<ir::Module> owned;
  std::unique_ptr<exec::Plan> plan;
  std::unique_ptr<Lowering> lowering;

  ir::Module& Rewrite() {
    if (owned == nullptr) {
      owned = module->Clone();
      module = owned.get();
    }
    return *owned;
  }
};

struct PipelineState {
  const ir::Module& input;
  const PipelineOptions& options;
  std::vector<PositionProgram> positions;
  CompiledProgram result;
};

bool UsesProcessIds(const ir::Module& module) {
  bool uses = false;
  module.op().Walk([&](ir::Operation& op) {
    uses |= op.name() == "stablehlo.replica_id" ||
            op.name() == "stablehlo.partition_id";
  });
  return uses;
}

std::string SerializeLayout(const std::optional<TileLayout>& layout) {
  return SerializeOpSharding(layout ? *layout : TileLayout{});
}

Status Verify(PipelineState& state) { return ir::VerifyModule(state.input); }

// Decides whether the program is partitioned and how many programs it
// compiles to, and partitions each (spmd_partition.h).
Status Partition(PipelineState& state) {
  const PipelineOptions& options = state.options;
  CompiledProgram& result = state.result;
  ASSIGN_OR_RETURN(result.partitioned,
                   NeedsPartitioning(state.input, options.num_partitions));
  if (options.num_partitions > 1) {
    ASSIGN_OR_RETURN(EntryLayouts layouts,
                     ReadEntryLayouts(state.input, options.num_partitions));
    for (const auto& layout : layouts.arguments) {
      result.parameter_shardings.push_back(SerializeLayout(layout));
    }
    // A partitioned program's results go out as its first partition gives
    // them (below); the others are whole on every device.
    if (!result.partitioned) {
      for (const auto& layout : layouts.results) {
        result.output_shardings.push_back(SerializeLayout(layout));
      }
    }
  }
  // A program of several devices left whole on each: every value it
  // inspects is replicated.
  if (!result.partitioned && options.num_devices > 1) {
    RETURN_IF_ERROR(ReportReplicatedInspections(state.input));
  }
  // One program per device position when the program asks which one it is
  // or is partitioned.
  int positions = std::max(1, options.num_devices);
  if (!result.partitioned && !UsesProcessIds(state.input)) positions = 1;
  for (int position = 0; position < positions; ++position) {
    PositionProgram program;
    program.options = options.plan;
    ProcessPosition& where = program.options.position;
    where.num_replicas = options.num_replicas;
    where.num_partitions = options.num_partitions;
    where.replica_id = position / options.num_partitions;
    where.partition_id = position % options.num_partitions;
    program.module = &state.input;
    if (result.partitioned) {
      PartitionTarget target;
      target.partition_id = where.partition_id;
      target.num_partitions = options.num_partitions;
      target.num_replicas = options.num_replicas;
      // The first position's partitioning answers inspect_array_sharding.
      target.report_inspections = position == 0;
      std::vector<std::optional<TileLayout>> result_layouts;
      RETURN_IF_ERROR(
          PartitionModule(program.Rewrite(), target, &result_layouts));
      if (LogLevelEnabled(LogLevel::kDebug)) {
        KILN_LOG(DEBUG) << "partition " << target.partition_id << " of "
                        << options.num_partitions << ":\n"
                        << ir::PrintModule(*program.module);
      }
      if (position == 0) {
        // What the results go out as, where the program left them open too.
        for (const auto& layout : result_layouts) {
          result.output_shardings.push_back(SerializeLayout(layout));
        }
        // What the first partition runs: its tiles, its collectives, no
        // Shardy left.
        std::unique_ptr<ir::Module> first = program.module->Clone();
        StripShardy(*first);
        ir::PrintOptions print_options;
        print_options.locations = false;
        result.partitioned_text = ir::PrintModule(*first, print_options);
      }
    }
    state.positions.push_back(std::move(program));
  }
  return OkStatus();
}

// Entry arguments and results in other layouts than row-major: each
// position's program is rewritten to read and write the physical arrays.
Status Layouts(PipelineState& state) {
  ASSIGN_OR_RETURN(
      state.result.memory_layouts,
      ChooseMemoryLayouts(state.input, state.options.argument_layouts));
  if (state.result.memory_layouts.AllRowMajor()) return OkStatus();
  for (PositionProgram& program : state.positions) {
    RETURN_IF_ERROR(
        ApplyMemoryLayouts(program.Rewrite(), state.result.memory_layouts));
  }
  return OkStatus();
}

// Expansions of erfc rebuilt as one op, where the options ask.
Status RecoverErfcStep(PipelineState& state) {
  for (PositionProgram& program : state.positions) {
    if (!program.options.recover_erfc || !NamesErfc(*program.module)) {
      continue;
    }
    if (program.owned != nullptr) {
      RecoverErfc(*program.owned);
      continue;
    }
    // The input is kept unless there is an expansion to rebuild.
    std::unique_ptr<ir::Module> copy = program.module->Clone();
    if (RecoverErfc(*copy) == 0) continue;
    program.owned = std::move(copy);
    program.module = program.owned.get();
  }
  return OkStatus();
}

// Each position's entry lowered to steps over slots, fused block by block.
Status Lower(PipelineState& state) {
  for (PositionProgram& program : state.positions) {
    const CompileOptions& options = program.options;
    // Lowering trusts the verifier's guarantees (operand counts, attribute
    // kinds, shape rules): a rewritten program is checked again.
    if (program.owned != nullptr) {
      RETURN_IF_ERROR(ir::VerifyModule(*program.owned));
    }
    const ir::Operation* entry =
        options.entry.empty() ? program.module->EntryFunction()
                              : program.module->LookupFunction(options.entry);
    if (entry != nullptr && !ir::func::HasBody(*entry)) entry = nullptr;
    if (entry == nullptr) {
      return InvalidArgumentError(
          "the module has no entry function",
          options.entry.empty()
              ? std::string(" (@main or a single public function)")
              : StrCat(" @", options.entry));
    }
    const CustomCallRegistry& custom_calls =
        options.custom_calls != nullptr ? *options.custom_calls
                                        : CustomCallRegistry::Builtin();
    program.plan = std::make_unique<exec::Plan>();
    program.lowering = std::make_unique<Lowering>(*program.module, custom_calls,
                                                  *program.plan);
    Lowering& lowering = *program.lowering;
    lowering.set_fold_constants(options.fold_constants);
    lowering.set_fuse_elementwise(options.fuse_elementwise);
    lowering.set_use_onednn(options.use_onednn,
                            options.onednn_min_multiply_adds);
    lowering.set_position(options.position);
    lowering.set_host_transfers_between_participants(
        options.host_transfers_between_participants);
    RETURN_IF_ERROR(lowering.LowerEntry(*entry, options.argument_types,
                                        options.argument_values));
  }
  return OkStatus();
}

// Scratch slots placed in the arena; the plans are done.
Status PlanStep(PipelineState& state) {
  for (PositionProgram& program : state.positions) {
    RETURN_IF_ERROR(program.lowering->Finish());
    program.lowering.reset();
    state.result.plans.push_back(std::move(program.plan));
  }
  return OkStatus();
}

using StepFn = Status (*)(PipelineState&);
struct PipelineStep {
  std::string_view name;
  StepFn run;
};

// The pipeline; kPipelineSteps names these in this order.
constexpr PipelineStep kSteps[] = {
    {"verify", Verify},   {"partition", Partition},
    {"layouts", Layouts}, {"recover-erfc", RecoverErfcStep},
    {"lower", Lower},     {"plan", PlanStep},
};
constexpr bool StepsAreNamedInOrder() {
  if (std::size(kSteps) != std::size(kPipelineSteps)) return false;
  for (size_t i = 0; i < std::size(kSteps); ++i) {
    if (kSteps[i].name != kPipelineSteps[i]) return false;
  }
  return true;
}
static_assert(StepsAreNamedInOrder(), "kPipelineSteps names kSteps in order");

// The first position's program as it stands.
std::string Snapshot(const PipelineState& state) {
  const ir::PrintOptions& print = state.options.print_options;
  if (state.positions.empty()) return ir::PrintModule(state.input, print);
  const PositionProgram& first = state.positions.front();
  if (first.plan != nullptr) return exec::DescribePlan(*first.plan);
  if (!state.result.plans.empty()) {
    return exec::DescribePlan(*state.result.plans.front());
  }
  return ir::PrintModule(*first.module, print);
}

// Runs the steps of kSteps that `run` names, in order, stopping after
// `stop_after` (empty: none).
Status RunSteps(PipelineState& state, std::span<const std::string_view> run,
                std::string_view stop_after) {
  for (const PipelineStep& step : kSteps) {
    if (std::find(run.begin(), run.end(), step.name) == run.end()) continue;
    RETURN_IF_ERROR(step.run(state));
    if (step.name == stop_after) {
      state.result.stopped_at = Snapshot(state);
      break;
    }
  }
  return OkStatus();
}

}  // namespace

StatusOr<CompiledProgram> RunPipeline(const ir::Module& module,
                                      const PipelineOptions& options) {
  if (!options.stop_after.empty() &&
      std::find(std::begin(kPipelineSteps), std::end(kPipelineSteps),
                options.stop_after) == std::end(kPipelineSteps)) {
    return InvalidArgumentError("no compile step named '", options.stop_after,
                                "' (the steps: ", StrJoin(kPipelineSteps, ", "),
                                ")");
  }
  PipelineState state{module, options};
  RETURN_IF_ERROR(RunSteps(state, kPipelineSteps, options.stop_after));
  return std::move(state.result);
}

StatusOr<std::unique_ptr<exec::Plan>> Compile(const ir::Module& module,
                                              const CompileOptions& options) {
  PipelineOptions pipeline;
  pipeline.plan = options;
  PipelineState state{module, pipeline};
  PositionProgram program;
  program.options = options;
  program.module = &module;
  state.positions.push_back(std::move(program));
  // One program as it is: no partitioning, no layouts.
  constexpr std::string_view kOneProgram[] = {"verify", "recover-erfc", "lower",
                                              "plan"};
  RETURN_IF_ERROR(RunSteps(state, kOneProgram, {}));
  return std::move(state.result.plans.front());
}

}  // namespace kiln::compile
