// Lowering of reduce and reduce_window.
#include <algorithm>

#include "compile/lower_families.h"
#include "exec/kernels/element.h"
#include "exec/kernels/elementwise.h"
#include "exec/kernels/reduce.h"
#include "exec/kernels/shape.h"

namespace kiln::compile {
namespace {

using ir::OpCode;

// Inputs (N), inits (N) and the element types, checked.
struct Variadic {
  std::vector<SlotId> inputs;
  std::vector<SlotId> inits;
  std::vector<ArrayShape> shapes;
  std::vector<ElementType> types;
};

// The first 2 * n operands of `op` (n = half of them when -1).
StatusOr<Variadic> ReadVariadic(Lowering& lowering, const ir::Operation& op,
                                int n = -1) {
  if (n < 0) {
    if (op.num_operands() % 2 != 0)
      n = 0;
    else
      n = op.num_operands() / 2;
  }
  if (n == 0 || op.num_operands() < 2 * n) {
    return InvalidArgumentError(op.Describe(),
                                ": expected N inputs and N inits");
  }
  Variadic v;
  for (int i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(SlotId input, lowering.Operand(op, i));
    ASSIGN_OR_RETURN(SlotId init, lowering.Operand(op, n + i));
    ArrayShape shape = lowering.shape(input);
    if (i > 0 && shape.dims != v.shapes[0].dims) {
      return InvalidArgumentError(op.Describe(),
                                  ": inputs of different shapes");
    }
    if (lowering.shape(init).num_elements() != 1 ||
        lowering.shape(init).type != shape.type) {
      return InvalidArgumentError(op.Describe(), ": init ", i,
                                  " must be a scalar of ",
                                  ir::ElementTypeName(shape.type));
    }
    v.inputs.push_back(input);
    v.inits.push_back(init);
    v.shapes.push_back(shape);
    v.types.push_back(shape.type);
  }
  return v;
}

// The comparison direction of `op` if it is a compare of `lhs` and `rhs`,
// in that order, that compares `type` as C++ does (for i1, an unsigned
// compare: false < true, as C++'s bool); -1 otherwise.
int64_t CompareOf(const ir::Operation* op, const ir::Value* lhs,
                  const ir::Value* rhs, ElementType type) {
  std::optional<Comparison> c = ComparisonOf(op);
  const bool like_cpp =
      c && (ComparesLikeCpp(c->type, type) ||
            (type == ElementType::kI1 && c->type == ir::kUnsignedCompare));
  if (!c || op->operand(0) != lhs || op->operand(1) != rhs || !like_cpp) {
    return -1;
  }
  return c->direction;
}

// The two operands of `op`, a binary `code` op, when one of them is
// `known`: the other. Null otherwise.
const ir::Value* OtherOperand(const ir::Operation* op, OpCode code,
                              const ir::Value* known) {
  if (op == nullptr || !op->is(code) || op->num_operands() != 2) {
    return nullptr;
  }
  if (op->operand(0) == known) return op->operand(1);
  if (op->operand(1) == known) return op->operand(0);
  return nullptr;
}

// Whether the body of a reduce of (values, indices) is JAX's argmax or
// argmin reducer (jax._src.lax.lax, _compute_argminmax), matched by its
// dataflow, with the accumulator (av, ai) as the first two arguments and
// the element (x, xi) as the last two:
//   keep = compare(GT or LT, av, x) or compare(NE, av, av)
//   keep_index = keep or (compare(EQ, av, x) and compare(LT, ai, xi))
//   return select(keep, av, x), select(keep_index, ai, xi)
// True for argmax (GT), false for argmin; nothing for any other body.
std::optional<bool> MatchArgReducer(const ir::Region& region,
                                    const std::vector<ElementType>& types) {
  if (region.num_blocks() != 1 || types.size() != 2) return std::nullopt;
  const ir::Block& block = region.front();
  const auto& ops = block.operations();
  // The nine ops above and the return: no others.
  if (block.num_arguments() != 4 || ops.size() != 10) return std::nullopt;
  for (int i = 0; i < 4; ++i) {
    const ir::Type& type = block.argument(i)->type();
    if (!type.IsTensor() || type.rank() != 0 ||
        !type.element().is(ir::TypeKind::kElement) ||
        type.element().element_type() != types[i % 2]) {
      return std::nullopt;
    }
  }
  const ir::Value* av = block.argument(0);
  const ir::Value* ai = block.argument(1);
  const ir::Value* x = block.argument(2);
  const ir::Value* xi = block.argument(3);
  const ir::Operation& ret = *ops.back();
  if (ret.num_operands() != 2) return std::nullopt;
  auto select_of = [](const ir::Value* value, const ir::Value* on_true,
                      const ir::Value* on_false) -> const ir::Value* {
    const ir::Operation* op = value->defining_op();
    if (op == nullptr || !op->is(OpCode::kSelect) || op->num_operands() != 3 ||
        op->operand(1) != on_true || op->operand(2) != on_false) {
      return nullptr;
    }
    return op->operand(0);
  };
  const ir::Value* keep = select_of(ret.operand(0), av, x);
  const ir::Value* keep_index = select_of(ret.operand(1), ai, xi);
  if (keep == nullptr || keep_index == nullptr) return std::nullopt;
  // keep: the ordering compare or'ed with av's NaN test.
  const ir::Operation* keep_or = keep->defining_op();
  if (keep_or == nullptr || !keep_or->is(OpCode::kOr) ||
      keep_or->num_operands() != 2) {
    return std::nullopt;
  }
  int64_t direction = -1;
  bool nan_test = false;
  for (int k = 0; k < 2; ++k) {
    const ir::Operation* c = keep_or->operand(k)->defining_op();
    const int64_t order = CompareOf(c, av, x, types[0]);
    if (order == ir::kGT || order == ir::kLT) {
      direction = order;
    } else if (CompareOf(c, av, av, types[0]) == ir::kNE) {
      nan_test = true;
    } else {
      return std::nullopt;
    }
  }
  if (direction < 0 || !nan_test) return std::nullopt;
  // keep_index: keep or'ed with the tie test.
  const ir::Value* tie =
      OtherOperand(keep_index->defining_op(), OpCode::kOr, keep);
  if (tie == nullptr || tie->defining_op() == nullptr ||
      !tie->defining_op()->is(OpCode::kAnd) ||
      tie->defining_op()->num_operands() != 2) {
    return std::nullopt;
  }
  bool equal = false, earlier = false;
  for (int k = 0; k < 2; ++k) {
    const ir::Operation* c = tie->defining_op()->operand(k)->defining_op();
    if (CompareOf(c, av, x, types[0]) == ir::kEQ ||
        CompareOf(c, x, av, types[0]) == ir::kEQ) {
      equal = true;
    } else if (CompareOf(c, ai, xi, types[1]) == ir::kLT) {
      earlier = true;
    } else {
      return std::nullopt;
    }
  }
  if (!equal || !earlier) return std::nullopt;
  return direction == ir::kGT;
}

// The body's combiner when the kernel can apply it directly, else the
// lowered body.
StatusOr<std::unique_ptr<exec::Region>> LowerBody(Lowering& lowering,
                                                  const ir::Region& region,
                                                  const Variadic& v,
                                                  exec::Combiner& combiner) {
  combiner = MatchCombiner(region);
  if (v.inputs.size() == 1 && exec::HasFastCombiner(combiner, v.types[0]) &&
      combiner != exec::Combiner::kReplace &&
      combiner != exec::Combiner::kKeep) {
    return std::unique_ptr<exec::Region>();
  }
  combiner = exec::Combiner::kGeneric;
  std::vector<ElementType> params = v.types;
  params.insert(params.end(), v.types.begin(), v.types.end());
  return LowerScalarRegion(lowering, region, params);
}

Status NeedOneRegion(const ir::Operation& op) {
  if (op.num_regions() != 1) {
    return InvalidArgumentError(op.Describe(), ": expected one region");
  }
  return OkStatus();
}

// The combiner of a one-input reduce or reduce_window of f16 or bf16 that
// computes in f32 (kGeneric: not one). Max and min of the f32 values are
// the f32 values of the narrow max and min (the conversions are exact both
// ways), so their bits are the narrow ones, NaNs included. A sum
// accumulates in f32 and rounds once, as the order and the intermediate
// precision of a reduction are the implementation's (XLA:CPU's f16 cumsum
// is neither the per-step rounded sum nor this one): it is the more
// accurate. Either way the f32 kernels run typed (rows, prefix scans)
// where the narrow ones called their body per element (jnp.max of 1 Mi
// f16: 1000x XLA:CPU's time; jnp.cumsum of f16 rows: past 30 s).
exec::Combiner NarrowFloatCombiner(const ir::Region& region,
                                   const Variadic& v) {
  const ElementType type = v.types[0];
  if (v.inputs.size() != 1 ||
      (type != ElementType::kF16 && type != ElementType::kBF16)) {
    return exec::Combiner::kGeneric;
  }
  const exec::Combiner combiner = MatchCombiner(region);
  if (combiner != exec::Combiner::kMaximum &&
      combiner != exec::Combiner::kMinimum &&
      combiner != exec::Combiner::kAdd) {
    return exec::Combiner::kGeneric;
  }
  return combiner;
}

// Emits `kernel`, made for f32, on the f32 conversions of v's input and
// init, into f32 of `dims`, and binds the op's result to its conversion
// back to the narrow type.
void EmitInF32(Lowering& lowering, const ir::Operation& op, const Variadic& v,
               std::unique_ptr<exec::Kernel> kernel,
               const std::vector<int64_t>& dims) {
  SlotId input = ConvertSlot(lowering, op, v.inputs[0], ElementType::kF32);
  SlotId init = ConvertSlot(lowering, op, v.inits[0], ElementType::kF32);
  SlotId wide = lowering.NewTemp(ArrayShape{ElementType::kF32, dims});
  lowering.Emit(op, std::move(kernel), {input, init}, {wide},
                /*foldable=*/false);
  lowering.Bind(op.result(0), ConvertSlot(lowering, op, wide, v.types[0]));
}

// The elementwise op of a combiner, if it has one.
std::optional<exec::BinaryOp> CombinerOp(exec::Combiner combiner) {
  switch (combiner) {
    case exec::Combiner::kAdd:
      return exec::BinaryOp::kAdd;
    case exec::Combiner::kMultiply:
      return exec::BinaryOp::kMultiply;
    case exec::Combiner::kMaximum:
      return exec::BinaryOp::kMaximum;
    case exec::Combiner::kMinimum:
      return exec::BinaryOp::kMinimum;
    case exec::Combiner::kAnd:
      return exec::BinaryOp::kAnd;
    case exec::Combiner::kOr:
      return exec::BinaryOp::kOr;
    case exec::Combiner::kXor:
      return exec::BinaryOp::kXor;
    default:
      return std::nullopt;
  }
}

// A one-input reduce over dimensions of size one (JAX's in-bounds mask of
// a gather reduces its index vector's dimension of one; all() and any()
// over an axis of one) with a known combiner of a native type: each result
// is body(init, x), one elementwise op (which the fusion pass can join to
// its neighbours) instead of a reduction of a million rows of one element.
// False when the reduce is not of that kind.
StatusOr<bool> LowerReduceOfOne(Lowering& lowering, const ir::Operation& op,
                                const Variadic& v,
                                const std::vector<int64_t>& result_dims) {
  const ArrayShape& input = v.shapes[0];
  const ElementType type = v.types[0];
  if (v.inputs.size() != 1 || input.num_elements() == 0 ||
      exec::NumElements(result_dims) != input.num_elements() ||
      exec::ComputeType(type) != type) {
    return false;
  }
  const std::optional<exec::BinaryOp> binary =
      CombinerOp(MatchCombiner(op.region(0)));
  if (!binary) return false;
  const int64_t count = input.num_elements();
  auto kernel =
      exec::MakeBinaryKernel(*binary, type, count, ir::BitWidth(type));
  if (kernel == nullptr || exec::BinaryResultType(*binary, type) != type) {
    return false;
  }
  // The init, broadcast to the result's shape.
  SlotId init = lowering.NewTemp(ArrayShape{type, result_dims});
  exec::StridedCopy splat;
  splat.dims = result_dims;
  splat.source_strides.assign(result_dims.size(), 0);
  splat.target_strides = exec::RowMajorStrides(result_dims);
  lowering.Emit(op,
                exec::MakeStridedCopyKernel(std::move(splat),
                                            input.element_bytes()),
                {v.inits[0]}, {init});
  SlotId values = lowering.NewAlias(v.inputs[0], ArrayShape{type, result_dims});
  ASSIGN_OR_RETURN(SlotId out, lowering.NewResult(op, 0, result_dims));
  lowering.Emit(op, std::move(kernel), {init, values}, {out});
  return true;
}

Status LowerReduce(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(Variadic v, ReadVariadic(lowering, op));
  ASSIGN_OR_RETURN(std::vector<int64_t> dimensions, IntsAttr(op, "dimensions"));
  int64_t rank = v.shapes[0].rank();
  std::vector<int64_t> result_dims;
  for (int64_t d : dimensions) {
    if (d < 0 || d >= rank ||
        std::count(dimensions.begin(), dimensions.end(), d) > 1) {
      return InvalidArgumentError(op.Describe(), ": bad dimensions [",
                                  StrJoin(dimensions, ", "), "] for rank ",
                                  rank);
    }
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(dimensions.begin(), dimensions.end(), d) ==
        dimensions.end()) {
      result_dims.push_back(v.shapes[0].dims[d]);
    }
  }
  RETURN_IF_ERROR(NeedOneRegion(op));
  ASSIGN_OR_RETURN(bool of_one, LowerReduceOfOne(lowering, op, v, result_dims));
  if (of_one) return OkStatus();
  exec::ReduceParams p;
  p.inputs = v.shapes;
  p.dimensions = dimensions;
  // JAX's argmax and argmin run typed rather than through the body.
  std::unique_ptr<exec::Kernel> kernel;
  if (std::optional<bool> max = MatchArgReducer(op.region(0), v.types)) {
    kernel = exec::MakeArgReduceKernel(p, *max);
  }
  if (kernel == nullptr) {
    const exec::Combiner narrow = NarrowFloatCombiner(op.region(0), v);
    if (narrow != exec::Combiner::kGeneric) {
      p.inputs[0].type = ElementType::kF32;
      p.combiner = narrow;
      EmitInF32(lowering, op, v, exec::MakeReduceKernel(std::move(p), nullptr),
                result_dims);
      return OkStatus();
    }
    ASSIGN_OR_RETURN(std::unique_ptr<exec::Region> body,
                     LowerBody(lowering, op.region(0), v, p.combiner));
    kernel = exec::MakeReduceKernel(std::move(p), std::move(body));
  }
  std::vector<SlotId> outputs;
  for (size_t i = 0; i < v.inputs.size(); ++i) {
    ASSIGN_OR_RETURN(SlotId out,
                     lowering.NewResult(op, static_cast<int>(i), result_dims));
    outputs.push_back(out);
  }
  std::vector<SlotId> inputs = v.inputs;
  inputs.insert(inputs.end(), v.inits.begin(), v.inits.end());
  lowering.Emit(op, std::move(kernel), std::move(inputs), std::move(outputs),
                /*foldable=*/false);
  return OkStatus();
}

Status LowerReduceWindow(Lowering& lowering, const ir::Operation& op) {
  RETURN_IF_ERROR(NeedOneRegion(op));
  if (op.num_operands() % 2 != 0) {
    return InvalidArgumentError(op.Describe(),
                                ": expected N inputs and N inits");
  }
  WindowAttrs window;
  ASSIGN_OR_RETURN(window.dimensions, IntsAttr(op, "window_dimensions"));
  const std::vector<int64_t> none;
  ASSIGN_OR_RETURN(window.strides, IntsAttr(op, "window_strides", none));
  ASSIGN_OR_RETURN(window.base_dilations, IntsAttr(op, "base_dilations", none));
  ASSIGN_OR_RETURN(window.window_dilations,
                   IntsAttr(op, "window_dilations", none));
  ASSIGN_OR_RETURN(window.padding, IntsAttr(op, "padding", none));
  return EmitReduceWindow(lowering, op, op.num_operands() / 2,
                          std::move(window), op.region(0));
}

// The direction of a select_and_scatter's select region when it is
// `compare direction(a, b)` of its two arguments in order, one of GE, GT,
// LE or LT comparing elements of `type` as C++ does.
std::optional<exec::CompareDirection> MatchSelectComparison(
    const ir::Region& region, ElementType type) {
  if (region.num_blocks() != 1) return std::nullopt;
  const ir::Block& block = region.front();
  const auto& ops = block.operations();
  if (block.num_arguments() != 2 || ops.size() != 2) return std::nullopt;
  const ir::Operation& compare = *ops[0];
  const ir::Operation& ret = *ops[1];
  std::optional<Comparison> comparison = ComparisonOf(&compare);
  if (!comparison.has_value() || ret.num_operands() != 1 ||
      ret.operand(0) != compare.result(0) ||
      compare.operand(0) != block.argument(0) ||
      compare.operand(1) != block.argument(1) ||
      !ComparesLikeCpp(comparison->type, type)) {
    return std::nullopt;
  }
  switch (comparison->direction) {
    case ir::kGE:
    case ir::kGT:
    case ir::kLE:
    case ir::kLT:
      return static_cast<exec::CompareDirection>(comparison->direction);
    default:
      return std::nullopt;
  }
}

Status LowerSelectAndScatter(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, 0));
  ASSIGN_OR_RETURN(SlotId source, lowering.Operand(op, 1));
  ASSIGN_OR_RETURN(SlotId init, lowering.Operand(op, 2));
  if (op.num_regions() != 2) {
    return InvalidArgumentError(op.Describe(),
                                ": expected select and scatter regions");
  }
  exec::SelectAndScatterParams p;
  p.operand = lowering.shape(operand);
  p.source_dims = lowering.shape(source).dims;
  int64_t rank = p.operand.rank();
  std::vector<int64_t> ones(rank, 1);
  ASSIGN_OR_RETURN(p.window_dimensions,
                   IntsAttr(op, "window_dimensions", ones));
  ASSIGN_OR_RETURN(p.window_strides, IntsAttr(op, "window_strides", ones));
  ASSIGN_OR_RETURN(std::vector<int64_t> padding,
                   IntsAttr(op, "padding", std::vector<int64_t>(2 * rank, 0)));
  if (static_cast<int64_t>(p.window_dimensions.size()) != rank ||
      static_cast<int64_t>(p.window_strides.size()) != rank ||
      static_cast<int64_t>(padding.size()) != 2 * rank ||
      static_cast<int64_t>(p.source_dims.size()) != rank ||
      lowering.shape(source).type != p.operand.type ||
      lowering.shape(init).num_elements() != 1) {
    return InvalidArgumentError(op.Describe(),
                                ": operands and window attributes "
                                "do not match ",
                                p.operand.ToString());
  }
  for (int64_t d = 0; d < rank; ++d) {
    p.padding_low.push_back(padding[2 * d]);
    int64_t padded = p.operand.dims[d] + padding[2 * d] + padding[2 * d + 1];
    int64_t expected =
        (p.window_strides[d] <= 0 || p.window_dimensions[d] <= 0) ? -1
        : padded < p.window_dimensions[d]
            ? 0
            : (padded - p.window_dimensions[d]) / p.window_strides[d] + 1;
    if (expected != p.source_dims[d]) {
      return InvalidArgumentError(
          op.Describe(), ": source ", lowering.shape(source).ToString(),
          " does not match the windows of ", p.operand.ToString());
    }
  }
  ElementType type = p.operand.type;
  p.select_direction = MatchSelectComparison(op.region(0), type);
  p.scatter_combiner = MatchCombiner(op.region(1));
  if (!exec::HasFastCombiner(p.scatter_combiner, type)) {
    p.scatter_combiner = exec::Combiner::kGeneric;
  }
  ASSIGN_OR_RETURN(std::unique_ptr<exec::Region> select,
                   LowerScalarRegion(lowering, op.region(0), {type, type}));
  ASSIGN_OR_RETURN(std::unique_ptr<exec::Region> scatter,
                   LowerScalarRegion(lowering, op.region(1), {type, type}));
  ASSIGN_OR_RETURN(SlotId out, lowering.NewResult(op, 0, p.operand.dims));
  lowering.Emit(op,
                exec::MakeSelectAndScatterKernel(
                    std::move(p), std::move(select), std::move(scatter)),
                {operand, source, init}, {out}, /*foldable=*/false);
  return OkStatus();
}

Status LowerMap(Lowering& lowering, const ir::Operation& op) {
  if (op.num_operands() == 0 || op.num_regions() != 1) {
    return InvalidArgumentError(op.Describe(), ": expected inputs and a body");
  }
  std::vector<SlotId> inputs;
  std::vector<ArrayShape> shapes;
  std::vector<ElementType> types;
  for (int i = 0; i < op.num_operands(); ++i) {
    ASSIGN_OR_RETURN(SlotId input, lowering.Operand(op, i));
    ArrayShape shape = lowering.shape(input);
    if (i > 0 && shape.dims != shapes[0].dims) {
      return InvalidArgumentError(op.Describe(),
                                  ": inputs of different shapes");
    }
    inputs.push_back(input);
    shapes.push_back(shape);
    types.push_back(shape.type);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<exec::Region> body,
                   LowerScalarRegion(lowering, op.region(0), types));
  ASSIGN_OR_RETURN(SlotId out, lowering.NewResult(op, 0, shapes[0].dims));
  lowering.Emit(
      op, exec::MakeMapKernel(shapes, lowering.shape(out), std::move(body)),
      std::move(inputs), {out}, /*foldable=*/false);
  return OkStatus();
}

}  // namespace

Status EmitReduceWindow(Lowering& lowering, const ir::Operation& op,
                        int num_inputs, WindowAttrs window,
                        const ir::Region& body_region) {
  ASSIGN_OR_RETURN(Variadic v, ReadVariadic(lowering, op, num_inputs));
  const int64_t rank = v.shapes[0].rank();
  auto or_default = [&](std::vector<int64_t>& list, int64_t size,
                        int64_t value) {
    if (list.empty()) list.assign(size, value);
  };
  or_default(window.strides, rank, 1);
  or_default(window.base_dilations, rank, 1);
  or_default(window.window_dilations, rank, 1);
  or_default(window.padding, 2 * rank, 0);
  exec::ReduceWindowParams p;
  p.inputs = v.shapes;
  p.window_dimensions = std::move(window.dimensions);
  p.window_strides = std::move(window.strides);
  p.base_dilations = std::move(window.base_dilations);
  p.window_dilations = std::move(window.window_dilations);
  const std::vector<int64_t>& padding = window.padding;
  if (static_cast<int64_t>(p.window_dimensions.size()) != rank ||
      static_cast<int64_t>(p.window_strides.size()) != rank ||
      static_cast<int64_t>(p.base_dilations.size()) != rank ||
      static_cast<int64_t>(p.window_dilations.size()) != rank ||
      static_cast<int64_t>(padding.size()) != 2 * rank) {
    return InvalidArgumentError(op.Describe(),
                                ": window attributes do not match rank ", rank);
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (p.window_dimensions[d] <= 0 || p.window_strides[d] <= 0 ||
        p.base_dilations[d] <= 0 || p.window_dilations[d] <= 0) {
      return InvalidArgumentError(op.Describe(),
                                  ": window sizes, strides and "
                                  "dilations must be positive");
    }
    int64_t size = v.shapes[0].dims[d];
    int64_t padded = (size == 0 ? 0 : (size - 1) * p.base_dilations[d] + 1) +
                     padding[2 * d] + padding[2 * d + 1];
    int64_t window_size =
        (p.window_dimensions[d] - 1) * p.window_dilations[d] + 1;
    p.output_dims.push_back(padded < window_size
                                ? 0
                                : (padded - window_size) / p.window_strides[d] +
                                      1);
    p.padding_low.push_back(padding[2 * d]);
  }
  const exec::Combiner narrow = NarrowFloatCombiner(body_region, v);
  if (narrow != exec::Combiner::kGeneric) {
    p.inputs[0].type = ElementType::kF32;
    p.combiner = narrow;
    const std::vector<int64_t> dims = p.output_dims;
    EmitInF32(lowering, op, v,
              exec::MakeReduceWindowKernel(std::move(p), nullptr), dims);
    return OkStatus();
  }
  ASSIGN_OR_RETURN(std::unique_ptr<exec::Region> body,
                   LowerBody(lowering, body_region, v, p.combiner));
  std::vector<SlotId> outputs;
  for (size_t i = 0; i < v.inputs.size(); ++i) {
    ASSIGN_OR_RETURN(
        SlotId out, lowering.NewResult(op, static_cast<int>(i), p.output_dims));
    outputs.push_back(out);
  }
  std::vector<SlotId> inputs = v.inputs;
  inputs.insert(inputs.end(), v.inits.begin(), v.inits.end());
  lowering.Emit(op, exec::MakeReduceWindowKernel(std::move(p), std::move(body)),
                std::move(inputs), std::move(outputs), /*foldable=*/false);
  return OkStatus();
}

void RegisterReduceLowerings() {
  RegisterLowering(OpCode::kSelectAndScatter, LowerSelectAndScatter);
  RegisterLowering(OpCode::kMap, LowerMap);
  RegisterLowering(OpCode::kReduce, LowerReduce);
  RegisterLowering(OpCode::kReduceWindow, LowerReduceWindow);
}

}  // namespace kiln::compile
