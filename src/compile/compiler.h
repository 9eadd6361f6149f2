// Compiling a StableHLO module into an exec::Plan.
#ifndef KILN_COMPILE_COMPILER_H_
#define KILN_COMPILE_COMPILER_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "exec/plan.h"
#include "ir/operation.h"

namespace kiln::compile {

class CustomCallRegistry;

// A device's place in a replicated or partitioned program.
struct ProcessPosition {
  int replica_id = 0;
  int partition_id = 0;
  int num_replicas = 1;
  int num_partitions = 1;
};

struct CompileOptions {
  // The entry function; empty: @main, else the only public function.
  std::string entry;
  // Concrete types of the entry's arguments, for programs with dynamic
  // shapes (empty: the program's own types, which must then be static).
  std::vector<ir::Type> argument_types;
  // Values of entry arguments that shapes depend on (JAX's dimension
  // variables), as raw little-endian bytes, by argument number. The plan is
  // specialized on them: a run must pass the same values.
  std::map<int, std::string> argument_values;
  // Custom-call targets (null: CustomCallRegistry::Builtin()).
  const CustomCallRegistry* custom_calls = nullptr;
  // Run small steps whose inputs are all constants while compiling (their
  // results become constants). Off: every step runs at run time.
  bool fold_constants = true;
  // Fuse runs of elementwise steps into kernels that pass values between
  // them in cache-sized tiles (compile/fuse_elementwise.cc), reductions
  // with their producers, and a dense layer's bias add into the matmul
  // (lower_dot.cc). Off: every op writes its whole result, the reference
  // that fused plans are tested against.
  bool fuse_elementwise = true;
  // Run dot_general and convolution through oneDNN where it implements
  // the types and dimension numbers (docs/compile.md). Off: Kiln's own
  // kernels everywhere, the reference tier the oneDNN path is tested
  // against.
  bool use_onednn = true;
  // The smallest dot_general or convolution, in multiply-adds, that goes
  // to oneDNN. A oneDNN call costs about 3 us before it computes, and
  // waking its OpenMP team more: on one core Kiln's matmul is faster up to
  // about 2^17 multiply-adds and within 1.5x up to 2^20, where it starts
  // splitting over threads itself (bench/exec/dense_bench.cc,
  // BM_DotPlanSmall).
  int64_t onednn_min_multiply_adds = int64_t{1} << 20;
  // Where this plan runs among the program's replicas and partitions:
  // replica_id and partition_id lower to these values. Collectives resolve
  // their groups over all num_replicas x num_partitions participants, so
  // the plan of any position serves every position of a program that does
  // not read its ids; a run meets its peers through the communicator in
  // exec::RunOptions.
  ProcessPosition position;
  // Host transfers (send and recv with is_host_transfer) pass between the
  // program's participants through their channels, as the StableHLO
  // interpreter runs them (`kiln check`'s run_parallel cases). Off: they
  // need the host's callbacks, which Kiln does not provide, and fail to
  // compile.
  bool host_transfers_between_participants = false;
  // Compile each float expansion of erfc (JAX's, named after erfc) as one
  // erfc op (compile/recover_erfc.h), on a copy of the module: the program
  // the framework reads back keeps its ops. Off: the expansion runs as
  // written.
  bool recover_erfc = true;
};

// Compiles `module` into an immutable plan: the pipeline's steps that
// compile one program as it is (verify, recover-erfc, lower and plan;
// pipeline.h, where it is defined), for tools and tests; a client's
// programs go through RunPipeline. Errors name the op and its location; an
// unsupported custom-call target is an error here, not at run time.
StatusOr<std::unique_ptr<exec::Plan>> Compile(
    const ir::Module& module, const CompileOptions& options = {});

}  // namespace kiln::compile

#endif  // KILN_COMPILE_COMPILER_H_
