#include "compile/custom_call.h"

#include "exec/kernels/copy.h"

namespace kiln::compile {

void CustomCallRegistry::Register(std::string name, LowerFn lower) {
  entries_[std::move(name)] = std::move(lower);
}

const LowerFn* CustomCallRegistry::Find(std::string_view name) const {
  auto it = entries_.find(name);
  if (it != entries_.end()) return &it->second;
  return fallback_ != nullptr ? fallback_->Find(name) : nullptr;
}

Status LowerAsIdentity(Lowering& lowering, const ir::Operation& op) {
  if (op.num_results() > op.num_operands()) {
    return InvalidArgumentError(op.Describe(), ": ", op.num_results(),
                                " results but only ", op.num_operands(),
                                " operands to forward");
  }
  for (int i = 0; i < op.num_results(); ++i) {
    ASSIGN_OR_RETURN(std::vector<SlotId> leaves,
                     lowering.Leaves(op.operand(i)));
    lowering.Bind(op.result(i), std::move(leaves));
  }
  return OkStatus();
}

const CustomCallRegistry& CustomCallRegistry::Builtin() {
  static const CustomCallRegistry* registry = [] {
    auto* r = new CustomCallRegistry();
    // JAX's `cpu` linear-algebra rules call LAPACK through these.
    RegisterLapackTargets(*r);
    // Sharding and placement annotations: identities on one device.
    for (const char* name :
         {"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape",
          "annotate_device_placement", "MoveToHost", "MoveToDevice",
          "xla.sdy.Sharding", "xla.sdy.GlobalToLocalShape",
          "xla.sdy.LocalToGlobalShape", "xla.sdy.FuncResultSharding",
          "xla.sdy.ShardingGroup", "xla.sdy.PropagationBarrier",
          "LayoutConstraint", "X64Combine"}) {
      r->Register(name, LowerAsIdentity);
    }
    // The shape assertions of jax.export: checked when shapes are refined;
    // on static shapes they hold by construction.
    r->Register("shape_assertion",
                [](Lowering&, const ir::Operation&) { return OkStatus(); });
    // Shardy's ops of the `sdy` dialect kept in exported programs.
    r->Register("sdy.sharding_constraint", LowerAsIdentity);
    r->Register("sdy.reshard", LowerAsIdentity);
    r->Register("sdy.propagation_barrier", LowerAsIdentity);
    r->Register("sdy.mesh",
                [](Lowering&, const ir::Operation&) { return OkStatus(); });
    return r;
  }();
  return *registry;
}

}  // namespace kiln::compile
