// Lowering of the custom-call targets that StableHLO and XLA define and
// exporters write: jax.export's shape_assertion (a run-time check), the
// dynamic forms of top_k and approximate top-k whose k is a compile-time
// value once shapes are known, and XLA's ApproxTopK (computed exactly: the
// exact top k meets any recall target).
#include <cmath>
#include <string>
#include <vector>

#include "compile/custom_call.h"
#include "compile/lower_families.h"
#include "exec/kernels/run_time_error.h"
#include "exec/kernels/sort.h"

namespace kiln::compile {
namespace {

// shape_assertion(assert_what: tensor<i1>, values: integer scalars...)
// {error_message = "...{0}..."}: fails the run with the formatted message
// when assert_what is false (XLA checks it when it refines shapes; Kiln
// folds it to a constant then and checks it when the step runs).
Status LowerShapeAssertion(Lowering& lowering, const ir::Operation& op) {
  ir::Attribute message = op.GetAttr("error_message");
  if (!message.is(ir::AttrKind::kString)) {
    return InvalidArgumentError(op.Describe(),
                                ": shape_assertion needs a string attribute "
                                "error_message");
  }
  if (op.num_operands() < 1 || op.num_results() != 0) {
    return InvalidArgumentError(
        op.Describe(),
        ": shape_assertion takes an i1 predicate and integer "
        "values and has no results, got ",
        op.num_operands(), " operands and ", op.num_results(), " results");
  }
  std::vector<SlotId> inputs;
  std::vector<ElementType> value_types;
  for (int i = 0; i < op.num_operands(); ++i) {
    ASSIGN_OR_RETURN(SlotId slot, lowering.Operand(op, i));
    ArrayShape shape = lowering.shape(slot);
    bool ok = shape.rank() == 0 && (i == 0 ? shape.type == ElementType::kI1
                                           : ir::IsInteger(shape.type) &&
                                                 ir::BitWidth(shape.type) >= 8);
    if (!ok) {
      return InvalidArgumentError(
          op.Describe(), ": shape_assertion operand ", i, " is ",
          shape.ToString(),
          i == 0 ? ", expected tensor<i1>" : ", expected an integer scalar");
    }
    if (i > 0) value_types.push_back(shape.type);
    inputs.push_back(slot);
  }
  lowering.Emit(op,
                exec::MakeShapeAssertionKernel(message.string_value(),
                                               std::move(value_types)),
                std::move(inputs), {}, /*foldable=*/false);
  return OkStatus();
}

// Top k of the last dimension of `operand` into results 0 (values) and 1
// (indices).
Status EmitTopK(Lowering& lowering, const ir::Operation& op, SlotId operand,
                int64_t k) {
  ArrayShape in = lowering.shape(operand);
  if (in.rank() < 1 || k < 0 || k > in.dims.back()) {
    return InvalidArgumentError(op.Describe(), ": k = ", k,
                                " out of range for ", in.ToString());
  }
  std::vector<int64_t> dims = in.dims;
  dims.back() = k;
  ASSIGN_OR_RETURN(SlotId values, lowering.NewResult(op, 0, dims));
  ASSIGN_OR_RETURN(SlotId indices, lowering.NewResult(op, 1, dims));
  ElementType index_type = lowering.shape(indices).type;
  if (lowering.shape(values).type != in.type ||
      (index_type != ElementType::kI32 && index_type != ElementType::kI64)) {
    return InvalidArgumentError(
        op.Describe(), ": results ", lowering.shape(values).ToString(), " and ",
        lowering.shape(indices).ToString(), " are not values of ",
        in.ToString(), " and i32 or i64 indices");
  }
  lowering.Emit(op, exec::MakeTopKKernel(in, k, index_type), {operand},
                {values, indices});
  return OkStatus();
}

// stablehlo.dynamic_top_k(operand, k): chlo.top_k with k an operand.
Status LowerDynamicTopK(Lowering& lowering, const ir::Operation& op) {
  if (op.num_operands() != 2 || op.num_results() != 2) {
    return InvalidArgumentError(op.Describe(),
                                ": dynamic_top_k takes operand and k and "
                                "gives values and indices");
  }
  ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, 0));
  ASSIGN_OR_RETURN(std::vector<int64_t> k,
                   lowering.RequireConstantInts(op, 1, "k"));
  if (k.size() != 1) {
    return InvalidArgumentError(op.Describe(), ": k is not a scalar");
  }
  return EmitTopK(lowering, op, operand, k[0]);
}

// ApproxTopK(operand, iota, init_value, init_index) {backend_config =
// {top_k, reduction_dim, recall_target, aggregate_to_topk, ...}} and
// stablehlo.dynamic_approx_top_k(..., k): the k largest (or smallest)
// along reduction_dim with their iota values. Kiln computes the exact top
// k of the last dimension, largest first, which is what a max-k call with
// aggregate_to_topk and the iota of that dimension asks for.
Status LowerApproxTopK(Lowering& lowering, const ir::Operation& op) {
  const bool dynamic = op.num_operands() == 5;
  if ((op.num_operands() != 4 && !dynamic) || op.num_results() != 2) {
    return UnimplementedError(
        op.Describe(),
        ": approximate top-k of one operand (operand, iota, "
        "init value, init index",
        dynamic ? ", k" : "", ") into values and indices is supported, got ",
        op.num_operands(), " operands and ", op.num_results(), " results");
  }
  ir::Attribute config = op.GetAttr("mhlo.backend_config");
  if (!config.is(ir::AttrKind::kDictionary)) {
    config = op.GetAttr("backend_config");
  }
  auto int_entry = [&](std::string_view name) -> std::optional<int64_t> {
    if (!config.is(ir::AttrKind::kDictionary)) return std::nullopt;
    ir::Attribute value = config.Get(name);
    if (!value.is(ir::AttrKind::kInteger)) return std::nullopt;
    return value.int_value();
  };
  ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, 0));
  ArrayShape in = lowering.shape(operand);
  std::optional<int64_t> dim = int_entry("reduction_dim");
  if (!dim || *dim != in.rank() - 1) {
    return UnimplementedError(op.Describe(),
                              ": approximate top-k along a dimension other "
                              "than the last of ",
                              in.ToString());
  }
  if (config.is(ir::AttrKind::kDictionary)) {
    ir::Attribute aggregate = config.Get("aggregate_to_topk");
    if (aggregate.is(ir::AttrKind::kBool) && !aggregate.bool_value()) {
      return UnimplementedError(op.Describe(),
                                ": approximate top-k without "
                                "aggregate_to_topk");
    }
  }
  // Max-k calls start from the lowest value (-inf); min-k from the highest.
  ASSIGN_OR_RETURN(SlotId init, lowering.Operand(op, 2));
  const std::byte* init_data = lowering.ConstantData(init);
  bool max_k = false;
  if (init_data != nullptr && in.type == ElementType::kF32) {
    float value;
    std::memcpy(&value, init_data, sizeof(value));
    max_k = value < 0;
  } else if (init_data != nullptr && in.type == ElementType::kF64) {
    double value;
    std::memcpy(&value, init_data, sizeof(value));
    max_k = value < 0;
  } else if (init_data != nullptr && in.type == ElementType::kBF16) {
    max_k = (static_cast<uint8_t>(init_data[1]) & 0x80) != 0;
  } else if (init_data != nullptr && in.type == ElementType::kF16) {
    max_k = (static_cast<uint8_t>(init_data[1]) & 0x80) != 0;
  }
  if (!max_k) {
    return UnimplementedError(op.Describe(),
                              ": approximate top-k is supported for the "
                              "largest values of f32, f64, bf16 or f16 (an "
                              "init value of -inf)");
  }
  int64_t k;
  if (dynamic) {
    ASSIGN_OR_RETURN(std::vector<int64_t> ks,
                     lowering.RequireConstantInts(op, 4, "k"));
    if (ks.size() != 1) {
      return InvalidArgumentError(op.Describe(), ": k is not a scalar");
    }
    k = ks[0];
  } else {
    std::optional<int64_t> top_k = int_entry("top_k");
    if (!top_k) {
      return InvalidArgumentError(op.Describe(),
                                  ": backend_config has no integer top_k");
    }
    k = *top_k;
  }
  return EmitTopK(lowering, op, operand, k);
}

}  // namespace

void RegisterXlaTargets(CustomCallRegistry& registry) {
  registry.Register("shape_assertion", LowerShapeAssertion);
  registry.Register("stablehlo.dynamic_top_k", LowerDynamicTopK);
  registry.Register("ApproxTopK", LowerApproxTopK);
  registry.Register("stablehlo.dynamic_approx_top_k", LowerApproxTopK);
}

}  // namespace kiln::compile
