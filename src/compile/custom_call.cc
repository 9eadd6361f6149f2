#include "compile/custom_call.h"

#include "exec/kernels/copy.h"
#include "exec/kernels/host_callback.h"

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
    // An annotation forwards its operand: a result of another type would
    // have the operand's bytes under the wrong shape.
    if (!(op.result(i)->type() == op.operand(i)->type())) {
      return InvalidArgumentError(
          op.Describe(), ": result ", i, " is ",
          op.result(i)->type().ToString(), " but the operand it forwards is ",
          op.operand(i)->type().ToString());
    }
    ASSIGN_OR_RETURN(std::vector<SlotId> leaves,
                     lowering.Leaves(op.operand(i)));
    lowering.Bind(op.result(i), std::move(leaves));
  }
  return OkStatus();
}

// Kiln's host callbacks (pure_callback, io_callback, jax.debug.print as
// Kiln's Python package lowers them): `mhlo.backend_config = {callback_id =
// N}` names the host's callback; tokens pass through.
Status LowerHostCallback(Lowering& lowering, const ir::Operation& op) {
  ir::Attribute config = op.GetAttr("mhlo.backend_config");
  ir::Attribute id = config.is(ir::AttrKind::kDictionary)
                         ? config.Get("callback_id")
                         : ir::Attribute();
  if (!id.is(ir::AttrKind::kInteger)) {
    return InvalidArgumentError(
        op.Describe(),
        ": kiln_python_callback needs mhlo.backend_config = {callback_id = N}");
  }
  std::vector<SlotId> inputs;
  std::vector<bool> input_is_token;
  std::vector<std::vector<int64_t>> input_dims;
  for (int i = 0; i < op.num_operands(); ++i) {
    ASSIGN_OR_RETURN(SlotId slot, lowering.Operand(op, i));
    inputs.push_back(slot);
    const bool token = lowering.slot(slot).is_token;
    input_is_token.push_back(token);
    if (!token) input_dims.push_back(op.operand(i)->type().shape());
  }
  std::vector<SlotId> outputs;
  std::vector<bool> output_is_token;
  for (int i = 0; i < op.num_results(); ++i) {
    const bool token = op.result(i)->type().is(ir::TypeKind::kToken);
    SlotId slot;
    if (token) {
      slot = lowering.NewToken();
      lowering.Bind(op.result(i), slot);
    } else {
      ASSIGN_OR_RETURN(slot, lowering.NewResult(op, i));
    }
    outputs.push_back(slot);
    output_is_token.push_back(token);
  }
  // Never folded: the callback has effects even when its inputs are constant.
  lowering.Emit(op,
                exec::MakeHostCallbackKernel(
                    static_cast<uint64_t>(id.int_value()),
                    std::move(input_is_token), std::move(output_is_token),
                    std::move(input_dims)),
                std::move(inputs), std::move(outputs), /*foldable=*/false);
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
          "LayoutConstraint", "InspectSharding"}) {
      r->Register(name, LowerAsIdentity);
    }
    r->Register("kiln_python_callback", LowerHostCallback);
    // Programs exported on GPUs: solver, sparse and random targets.
    RegisterGpuTargets(*r);
    // jax.export's shape assertions, the dynamic StableHLO targets and
    // XLA's own (top-k, Qr, Eigh).
    RegisterXlaTargets(*r);
    // lax.dce_sink: keeps its operands alive through dead-code elimination
    // and does nothing at run time (it has no results).
    r->Register("dce_sink", [](Lowering&, const ir::Operation& op) -> Status {
      if (op.num_results() != 0) {
        return InvalidArgumentError(op.Describe(), ": dce_sink has no results");
      }
      return OkStatus();
    });
    // Shardy's ops of the `sdy` dialect kept in exported programs.
    r->Register("sdy.sharding_constraint", LowerAsIdentity);
    r->Register("sdy.reshard", LowerAsIdentity);
    r->Register("sdy.propagation_barrier", LowerAsIdentity);
    r->Register("sdy.mesh",
                [](Lowering&, const ir::Operation&) { return OkStatus(); });
    // JAX's extended dtypes (PRNG keys) leave casts between a key and its
    // representation; after serialization both sides have the same type.
    r->Register("builtin.unrealized_conversion_cast",
                [](Lowering& lowering, const ir::Operation& op) -> Status {
                  if (op.num_operands() != op.num_results()) {
                    return UnimplementedError(
                        op.Describe(), ": a cast of ", op.num_operands(),
                        " values to ", op.num_results(),
                        " (Kiln reads one-to-one casts only)");
                  }
                  for (int i = 0; i < op.num_results(); ++i) {
                    if (op.operand(i)->type() != op.result(i)->type()) {
                      return UnimplementedError(
                          op.Describe(), ": a cast from ",
                          op.operand(i)->type().ToString(), " to ",
                          op.result(i)->type().ToString(),
                          " (Kiln reads casts between equal types only)");
                    }
                  }
                  return LowerAsIdentity(lowering, op);
                });
    return r;
  }();
  return *registry;
}

}  // namespace kiln::compile
