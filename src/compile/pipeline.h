// The compiler's entry point for a program of a client's devices: a parsed
// module in, the plans of its device positions out. The steps, in order
// (kPipelineSteps; each a function of pipeline.cc):
//
//   verify        the module obeys StableHLO's rules (ir/verifier.h); every
//                 later step trusts them
//   partition     a sharded program becomes one program per partition over
//                 its tiles (spmd_partition.h); others are left whole
//   layouts       entry arguments and results in a layout other than
//                 row-major are rewritten to the physical arrays
//                 (memory_layouts.h)
//   recover-erfc  float expansions of erfc become one erfc op
//                 (recover_erfc.h)
//   lower         ops become kernel steps over slots, runs of elementwise
//                 steps fused block by block (lowering.h,
//                 fuse_elementwise.cc)
//   plan          scratch slots get arena offsets (buffer_planner.h)
//
// A program is compiled once per device position when it is partitioned or
// reads its replica or partition id, else once for all of them. The runtime
// calls RunPipeline and nothing else of compile/; `kiln print
// --stop-after STEP` prints a program as it stands after any step.
#ifndef KILN_COMPILE_PIPELINE_H_
#define KILN_COMPILE_PIPELINE_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compile/compiler.h"
#include "compile/memory_layouts.h"
#include "exec/plan.h"
#include "ir/operation.h"
#include "ir/printer.h"

namespace kiln::compile {

inline constexpr std::string_view kPipelineSteps[] = {
    "verify", "partition", "layouts", "recover-erfc", "lower", "plan"};

struct PipelineOptions {
  int num_replicas = 1;
  int num_partitions = 1;
  // Devices the program runs on (num_replicas x num_partitions of them, or
  // one for a portable program).
  int num_devices = 1;
  // Layouts the compile options ask of the arguments, minor-to-major (an
  // empty entry: none), over the program's own `mhlo.layout_mode`.
  std::vector<std::vector<int64_t>> argument_layouts;
  // Options of every plan; RunPipeline sets each plan's position.
  CompileOptions plan;
  // A step of kPipelineSteps: run up to it and print the first position's
  // program (after `lower` and `plan`, its plan) into
  // CompiledProgram::stopped_at. Empty: every step.
  std::string stop_after;
  // How that program is printed.
  ir::PrintOptions print_options;
};

struct CompiledProgram {
  bool partitioned = false;
  // One plan, or one per device position (in device-assignment order).
  std::vector<std::unique_ptr<exec::Plan>> plans;
  // The layouts the entry takes and gives (memory_layouts.h).
  MemoryLayouts memory_layouts;
  // With more than one partition: each entry argument's and result's
  // sharding as a serialized xla.OpSharding (a result as the program leaves
  // it, where it left it open).
  std::vector<std::string> parameter_shardings;
  std::vector<std::string> output_shardings;
  // What the first partition of a partitioned program runs, printed
  // without locations and without Shardy; empty for other programs.
  std::string partitioned_text;
  // With PipelineOptions::stop_after: the program after that step.
  std::string stopped_at;
};

// Runs the pipeline over `module`. Errors are those of the step that
// fails; an unknown `stop_after` is INVALID_ARGUMENT.
StatusOr<CompiledProgram> RunPipeline(const ir::Module& module,
                                      const PipelineOptions& options);

}  // namespace kiln::compile

#endif  // KILN_COMPILE_PIPELINE_H_
