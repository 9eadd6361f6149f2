#include "tools/check/run_parallel.h"

#include <cstring>
#include <thread>

#include "compile/compiler.h"
#include "exec/collectives.h"
#include "exec/executor.h"

namespace kiln::check {
namespace {

using compile::Lowering;
using exec::SlotId;

// Runs one plan per participant, each on its own thread, sharing one
// communicator; copies each program's outputs into the step's outputs.
class RunParallelKernel : public exec::Kernel {
 public:
  struct Program {
    std::unique_ptr<exec::Plan> plan;
    size_t first_input = 0;   // its arguments among the step's inputs
    size_t first_output = 0;  // its results among the step's outputs
  };
  explicit RunParallelKernel(std::vector<Program> programs)
      : programs_(std::move(programs)) {}

  Status Run(exec::RunContext& ctx, const exec::Step& step) const override {
    const int count = static_cast<int>(programs_.size());
    exec::Communicator communicator(count,
                                    exec::Communicator::DefaultTimeout());
    std::vector<exec::OwningOutputAllocator> allocators(count);
    std::vector<Status> statuses(count);
    std::vector<std::thread> threads;
    for (int i = 0; i < count; ++i) {
      threads.emplace_back([&, i] {
        const Program& program = programs_[i];
        std::vector<const void*> arguments;
        for (size_t a = 0; a < program.plan->arguments().size(); ++a) {
          arguments.push_back(ctx.In<std::byte>(
              step, static_cast<int>(program.first_input + a)));
        }
        exec::RunOptions options;
        options.cancel = ctx.cancel_flag();
        options.communicator = &communicator;
        options.participant = i;
        statuses[i] =
            exec::Execute(*program.plan, arguments, allocators[i], options)
                .status();
      });
    }
    for (std::thread& thread : threads) thread.join();
    for (int i = 0; i < count; ++i) {
      // The first failure is the cause; the others name it.
      if (communicator.failure().has_value() && !statuses[i].ok() &&
          statuses[i].code() != StatusCode::kAborted) {
        return statuses[i].WithContext(StrCat("program ", i));
      }
    }
    for (int i = 0; i < count; ++i) {
      if (!statuses[i].ok()) {
        return statuses[i].WithContext(StrCat("program ", i));
      }
    }
    for (int i = 0; i < count; ++i) {
      const Program& program = programs_[i];
      for (size_t o = 0; o < program.plan->outputs().size(); ++o) {
        const int64_t bytes = program.plan->outputs()[o].byte_size();
        if (bytes == 0) continue;
        std::memcpy(ctx.Out<std::byte>(
                        step, static_cast<int>(program.first_output + o)),
                    allocators[i].buffer(static_cast<int>(o)).data(), bytes);
      }
    }
    return OkStatus();
  }

 private:
  std::vector<Program> programs_;
};

}  // namespace

Status LowerRunParallel(Lowering& lowering, const ir::Operation& op,
                        const std::vector<std::vector<std::string>>& grid,
                        const compile::CustomCallRegistry& registry) {
  const int replicas = static_cast<int>(grid.size());
  const int partitions = replicas > 0 ? static_cast<int>(grid[0].size()) : 0;
  for (const auto& row : grid) {
    if (static_cast<int>(row.size()) != partitions || partitions == 0) {
      return InvalidArgumentError(op.Describe(),
                                  ": programs is not a full grid of "
                                  "replicas x partitions");
    }
  }
  std::vector<SlotId> inputs, outputs;
  std::vector<RunParallelKernel::Program> programs;
  int next_operand = 0, next_result = 0;
  for (int r = 0; r < replicas; ++r) {
    for (int p = 0; p < partitions; ++p) {
      const std::string& name = grid[r][p];
      const ir::Operation* func = lowering.module().LookupFunction(name);
      if (func == nullptr) {
        return InvalidArgumentError(op.Describe(), ": no function @", name);
      }
      compile::CompileOptions options;
      options.entry = name;
      options.custom_calls = &registry;
      options.use_onednn = lowering.use_onednn();
      options.onednn_min_multiply_adds = lowering.onednn_min_multiply_adds();
      options.position.replica_id = r;
      options.position.partition_id = p;
      options.position.num_replicas = replicas;
      options.position.num_partitions = partitions;
      // The interpreter's host transfers pass between its processes.
      options.host_transfers_between_participants = true;
      auto compiled = compile::Compile(lowering.module(), options);
      if (!compiled.ok()) {
        return compiled.status().WithContext(StrCat("@", name));
      }
      std::unique_ptr<exec::Plan> plan = std::move(compiled).value();
      RunParallelKernel::Program program;
      program.first_input = inputs.size();
      program.first_output = outputs.size();
      for (size_t a = 0; a < plan->arguments().size(); ++a) {
        if (next_operand >= op.num_operands()) {
          return InvalidArgumentError(op.Describe(),
                                      ": too few operands for the programs");
        }
        ASSIGN_OR_RETURN(SlotId slot, lowering.Operand(op, next_operand++));
        inputs.push_back(slot);
      }
      for (size_t o = 0; o < plan->outputs().size(); ++o) {
        if (next_result >= op.num_results()) {
          return InvalidArgumentError(op.Describe(),
                                      ": too few results for the programs");
        }
        const ir::Value* result = op.result(next_result);
        SlotId slot;
        if (result->type().is(ir::TypeKind::kToken)) {
          slot = lowering.NewToken();
          lowering.Bind(result, slot);
          ++next_result;
        } else {
          ASSIGN_OR_RETURN(slot, lowering.NewResult(op, next_result++));
        }
        outputs.push_back(slot);
      }
      program.plan = std::move(plan);
      programs.push_back(std::move(program));
    }
  }
  if (next_operand != op.num_operands() || next_result != op.num_results()) {
    return InvalidArgumentError(op.Describe(), ": ", op.num_operands(),
                                " operands and ", op.num_results(),
                                " results do not match the programs");
  }
  lowering.Emit(op, std::make_unique<RunParallelKernel>(std::move(programs)),
                std::move(inputs), std::move(outputs), /*foldable=*/false);
  return OkStatus();
}

}  // namespace kiln::check
