// interpreter.run_parallel over several programs: the reference
// interpreter's way of running a grid of replicas x partitions. Each
// program is compiled for its position and the programs run on their own
// threads as one launch (one exec::Communicator), so their collectives
// meet.
#ifndef KILN_TOOLS_CHECK_RUN_PARALLEL_H_
#define KILN_TOOLS_CHECK_RUN_PARALLEL_H_

#include <string>
#include <vector>

#include "compile/custom_call.h"

namespace kiln::check {

// Lowers `op` (interpreter.run_parallel) whose `programs` attribute is
// `grid` (rows are replicas, columns partitions) into one step that runs
// them all. Operands and results are split across the programs in
// row-major order by each program's argument and result counts. The
// programs are compiled with `registry`.
Status LowerRunParallel(compile::Lowering& lowering, const ir::Operation& op,
                        const std::vector<std::vector<std::string>>& grid,
                        const compile::CustomCallRegistry& registry);

}  // namespace kiln::check

#endif  // KILN_TOOLS_CHECK_RUN_PARALLEL_H_
