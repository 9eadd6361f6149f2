// Lowering of the custom-call targets that StableHLO and XLA define and
// exporters write: jax.export's shape_assertion (a run-time check), the
// dynamic forms of top_k, approximate top-k, reduce_window and
// rng_bit_generator whose extra operands are compile-time values once
// shapes are known, XLA's ApproxTopK (computed exactly: the exact top k
// meets any recall target), and XLA's linear-algebra targets that its
// expanders lower on every backend (Qr, ProductOfElementaryHouseholder-
// Reflectors, Eigh; TPU exports carry them, with XLA's TPU-only
// LuDecomposition).
#include <cmath>
#include <string>
#include <vector>

#include "compile/custom_call.h"
#include "compile/linalg_call.h"
#include "compile/lower_families.h"
#include "exec/kernels/elementwise.h"
#include "exec/kernels/lapack.h"
#include "exec/kernels/run_time_error.h"
#include "exec/kernels/sort.h"
#include "exec/kernels/shape.h"

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

// The body of the function `op`'s called_computations names (the only
// one it must name).
StatusOr<const ir::Region*> CalledComputation(const Lowering& lowering,
                                              const ir::Operation& op) {
  ir::Attribute called = op.GetAttr("called_computations");
  if (!called.is(ir::AttrKind::kArray) || called.array().size() != 1 ||
      !called.array()[0].is(ir::AttrKind::kSymbolRef)) {
    return InvalidArgumentError(op.Describe(),
                                ": expected called_computations to name one "
                                "function");
  }
  std::string name = called.array()[0].symbol_root();
  const ir::Operation* func = lowering.module().LookupFunction(name);
  if (func == nullptr || !ir::func::HasBody(*func)) {
    return InvalidArgumentError(op.Describe(), ": called computation @", name,
                                " is not a function of the module");
  }
  return &func->region(0);
}

// ApproxTopK(inputs..., init_values...) {backend_config = {top_k,
// reduction_dim, recall_target, aggregate_to_topk, ...},
// called_computations = [@comparator]} and
// stablehlo.dynamic_approx_top_k(inputs..., init_values..., k): the inputs
// sorted along reduction_dim by the comparator (stably), each cut to the
// results' size along it. That is XLA's fallback for backends without an
// approximate kernel, which JAX lowers to for every platform but TPU: the
// exact top k, or the leading elements of the exact order where
// aggregate_to_topk is false and the results keep more than k.
Status LowerApproxTopK(Lowering& lowering, const ir::Operation& op,
                       bool dynamic) {
  const int extra = dynamic ? 1 : 0;
  const int n = op.num_results();
  if (n == 0 || op.num_operands() != 2 * n + extra) {
    return InvalidArgumentError(
        op.Describe(), ": approximate top-k takes N inputs, N init values",
        dynamic ? " and k" : "", " into N results, got ", op.num_operands(),
        " operands and ", n, " results");
  }
  ir::Attribute config = op.GetAttr("mhlo.backend_config");
  if (!config.is(ir::AttrKind::kDictionary)) {
    config = op.GetAttr("backend_config");
  }
  if (!config.is(ir::AttrKind::kDictionary)) {
    return InvalidArgumentError(op.Describe(),
                                ": approximate top-k needs a backend_config "
                                "dictionary with reduction_dim");
  }
  auto int_entry = [&](std::string_view name) -> std::optional<int64_t> {
    ir::Attribute value = config.Get(name);
    if (!value.is(ir::AttrKind::kInteger)) return std::nullopt;
    return value.int_value();
  };
  std::vector<SlotId> inputs;
  for (int i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(SlotId input, lowering.Operand(op, i));
    inputs.push_back(input);
  }
  ArrayShape in = lowering.shape(inputs[0]);
  std::optional<int64_t> dim = int_entry("reduction_dim");
  if (!dim || *dim < 0 || *dim >= in.rank()) {
    return InvalidArgumentError(op.Describe(), ": reduction_dim ",
                                dim ? StrCat(*dim) : std::string("(missing)"),
                                " out of range for ", in.ToString());
  }
  ir::Attribute aggregate = config.Get("aggregate_to_topk");
  const bool aggregate_to_topk =
      !aggregate.is(ir::AttrKind::kBool) || aggregate.bool_value();
  int64_t k;
  if (dynamic) {
    ASSIGN_OR_RETURN(std::vector<int64_t> ks,
                     lowering.RequireConstantInts(op, 2 * n, "k"));
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
  // The results' size along the dimension: k when aggregating, else what
  // the exporter computed from the recall target (at least k).
  ASSIGN_OR_RETURN(ArrayShape first, lowering.ResultShape(op, 0));
  const int64_t kept = first.rank() == in.rank() ? first.dims[*dim] : -1;
  if (k <= 0 || k > in.dims[*dim] || kept < k || kept > in.dims[*dim] ||
      (aggregate_to_topk && kept != k)) {
    return InvalidArgumentError(op.Describe(), ": k = ", k, " and results of ",
                                first.ToString(), " do not fit ",
                                in.ToString(), " along dimension ", *dim);
  }
  ASSIGN_OR_RETURN(const ir::Region* comparator,
                   CalledComputation(lowering, op));
  ASSIGN_OR_RETURN(std::vector<SlotId> sorted,
                   EmitSort(lowering, op, inputs, *dim, *comparator,
                            /*bind_results=*/false));
  std::vector<int64_t> limit = in.dims;
  limit[*dim] = kept;
  exec::StridedCopy copy;
  copy.dims = limit;
  copy.source_strides = in.Strides();
  copy.target_strides = exec::RowMajorStrides(limit);
  for (int i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(SlotId out, lowering.NewResult(op, i, limit));
    if (lowering.shape(out).type != lowering.shape(sorted[i]).type) {
      return InvalidArgumentError(op.Describe(), ": result ", i, " ",
                                  lowering.shape(out).ToString(),
                                  " is not of input ", i, "'s element type");
    }
    lowering.Emit(op,
                  exec::MakeStridedCopyKernel(
                      copy, lowering.shape(sorted[i]).element_bytes()),
                  {sorted[i]}, {out});
  }
  return OkStatus();
}

// stablehlo.dynamic_reduce_window(inputs..., init_values...,
// window_dimensions, window_strides, base_dilations, window_dilations,
// padding) {called_computations = [@body]}: reduce_window with the window
// as operands, which must be compile-time values once shapes are known.
Status LowerDynamicReduceWindow(Lowering& lowering, const ir::Operation& op) {
  const int n = op.num_results();
  if (n == 0 || op.num_operands() != 2 * n + 5) {
    return InvalidArgumentError(
        op.Describe(),
        ": dynamic_reduce_window takes N inputs, N init values and the five "
        "window operands into N results, got ",
        op.num_operands(), " operands and ", n, " results");
  }
  WindowAttrs window;
  ASSIGN_OR_RETURN(window.dimensions,
                   lowering.RequireConstantInts(op, 2 * n, "window_dimensions"));
  ASSIGN_OR_RETURN(window.strides,
                   lowering.RequireConstantInts(op, 2 * n + 1, "window_strides"));
  ASSIGN_OR_RETURN(window.base_dilations,
                   lowering.RequireConstantInts(op, 2 * n + 2, "base_dilations"));
  ASSIGN_OR_RETURN(
      window.window_dilations,
      lowering.RequireConstantInts(op, 2 * n + 3, "window_dilations"));
  ASSIGN_OR_RETURN(window.padding,
                   lowering.RequireConstantInts(op, 2 * n + 4, "padding"));
  // Empty lists would read as defaults; the operands always give all.
  ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, 0));
  const size_t rank = lowering.shape(operand).rank();
  if (window.dimensions.size() != rank || window.strides.size() != rank ||
      window.base_dilations.size() != rank ||
      window.window_dilations.size() != rank ||
      window.padding.size() != 2 * rank) {
    return InvalidArgumentError(op.Describe(),
                                ": window operands do not match rank ", rank);
  }
  ASSIGN_OR_RETURN(const ir::Region* body, CalledComputation(lowering, op));
  return EmitReduceWindow(lowering, op, n, std::move(window), *body);
}

// stablehlo.dynamic_rng_bit_generator(initial_state, output_shape)
// {rng_algorithm}: rng_bit_generator with the output's shape an operand.
Status LowerDynamicRngBitGenerator(Lowering& lowering,
                                   const ir::Operation& op) {
  if (op.num_operands() != 2 || op.num_results() != 2) {
    return InvalidArgumentError(op.Describe(),
                                ": dynamic_rng_bit_generator takes the state "
                                "and the output shape into the new state and "
                                "the bits");
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                   lowering.RequireConstantInts(op, 1, "output_shape"));
  for (int64_t d : dims) {
    if (d < 0) {
      return InvalidArgumentError(op.Describe(), ": output_shape [",
                                  StrJoin(dims, ", "),
                                  "] has a negative dimension");
    }
  }
  return EmitRngBitGenerator(lowering, op, std::move(dims));
}

// --- XLA's linear-algebra targets -------------------------------------------
//
// XLA's QrExpander and EighExpander rewrite these calls on every backend, so
// XLA:CPU runs them: Qr(a) -> (a, taus) with R on and above the diagonal
// and the Householder reflectors below (LAPACK's geqrf form),
// ProductOfElementaryHouseholderReflectors(a, taus) -> q (orgqr), and
// Eigh(a) {backend_config = "lower,sort,max_iter,tol"} -> (v, w) with the
// eigenvectors as columns. Arrays are row-major with leading batch
// dimensions; the results come as one tuple (as XLA writes them) or as
// separate results. Kiln computes them with its LAPACK kernels, so the
// Jacobi iteration's max_iter and tol do not apply; eigenvalues come in
// ascending order, which meets `sort`.

// The matrix operand: its element type (f32, f64, c64, c128), batch size
// and trailing dimensions.
struct XlaMatrix {
  SlotId slot;
  ElementType type;
  std::vector<int64_t> batch_dims;
  int64_t rows, cols;
};

StatusOr<XlaMatrix> ReadMatrix(Lowering& lowering, const ir::Operation& op,
                                   int i) {
  ASSIGN_OR_RETURN(SlotId slot, lowering.Operand(op, i));
  const ArrayShape shape = lowering.shape(slot);
  const ElementType type = shape.type;
  if (type != ElementType::kF32 && type != ElementType::kF64 &&
      type != ElementType::kC64 && type != ElementType::kC128) {
    return InvalidArgumentError(op.Describe(), ": operand ", i, " ",
                                shape.ToString(),
                                " is not of f32, f64, complex<f32> or "
                                "complex<f64>");
  }
  if (shape.rank() < 2) {
    return InvalidArgumentError(op.Describe(), ": operand ", i, " ",
                                shape.ToString(), " is not a matrix");
  }
  XlaMatrix m{slot, type,
                  std::vector<int64_t>(shape.dims.begin(), shape.dims.end() - 2),
                  shape.dims[shape.rank() - 2], shape.dims[shape.rank() - 1]};
  return m;
}

std::vector<int64_t> WithBatch(const std::vector<int64_t>& batch,
                               std::initializer_list<int64_t> dims) {
  std::vector<int64_t> out = batch;
  out.insert(out.end(), dims);
  return out;
}

// Makes result slots of `shapes` and binds them to the op's results: one
// tuple of that many leaves, or that many results. The declared types must
// be those shapes.
StatusOr<std::vector<SlotId>> TupleOrResults(Lowering& lowering,
                                             const ir::Operation& op,
                                             const std::vector<ArrayShape>& shapes) {
  std::vector<ir::Type> declared;
  const bool tuple = op.num_results() == 1 && op.result(0)->type().IsTuple();
  if (tuple) {
    declared = op.result(0)->type().elements();
  } else {
    for (int i = 0; i < op.num_results(); ++i) {
      declared.push_back(op.result(i)->type());
    }
  }
  if (declared.size() != shapes.size()) {
    return InvalidArgumentError(op.Describe(), ": expects ", shapes.size(),
                                " results (or a tuple of them), got ",
                                declared.size());
  }
  std::vector<SlotId> slots;
  for (size_t i = 0; i < shapes.size(); ++i) {
    bool same = declared[i].IsTensor() && declared[i].shape() == shapes[i].dims;
    if (same) {
      StatusOr<ElementType> type = lowering.SlotElementType(declared[i]);
      same = type.ok() && *type == shapes[i].type;
    }
    if (!same) {
      return InvalidArgumentError(op.Describe(), ": result ", i, " is ",
                                  declared[i].ToString(), ", expected ",
                                  shapes[i].ToString());
    }
    slots.push_back(lowering.NewTemp(shapes[i]));
  }
  if (tuple) {
    lowering.Bind(op.result(0), slots);
  } else {
    for (size_t i = 0; i < slots.size(); ++i) {
      lowering.Bind(op.result(static_cast<int>(i)), slots[i]);
    }
  }
  return slots;
}

Status LowerXlaQr(Lowering& lowering, const ir::Operation& op) {
  if (op.num_operands() != 1) {
    return InvalidArgumentError(op.Describe(), ": Qr takes one matrix");
  }
  ASSIGN_OR_RETURN(XlaMatrix a, ReadMatrix(lowering, op, 0));
  const int64_t k = std::min(a.rows, a.cols);
  ASSIGN_OR_RETURN(
      std::vector<SlotId> out,
      TupleOrResults(lowering, op,
                     {{a.type, WithBatch(a.batch_dims, {a.rows, a.cols})},
                      {a.type, WithBatch(a.batch_dims, {k})}}));
  lowering.Emit(op,
                exec::MakeGeqrfKernel(a.type, exec::NumElements(a.batch_dims),
                                      a.rows, a.cols),
                {a.slot}, out);
  return OkStatus();
}

Status LowerXlaHouseholderProduct(Lowering& lowering, const ir::Operation& op) {
  if (op.num_operands() != 2) {
    return InvalidArgumentError(
        op.Describe(),
        ": ProductOfElementaryHouseholderReflectors takes a matrix and taus");
  }
  ASSIGN_OR_RETURN(XlaMatrix a, ReadMatrix(lowering, op, 0));
  ASSIGN_OR_RETURN(SlotId taus, lowering.Operand(op, 1));
  const ArrayShape tau_shape = lowering.shape(taus);
  if (tau_shape.type != a.type || tau_shape.rank() != a.batch_dims.size() + 1 ||
      !std::equal(a.batch_dims.begin(), a.batch_dims.end(),
                  tau_shape.dims.begin())) {
    return InvalidArgumentError(op.Describe(), ": taus ", tau_shape.ToString(),
                                " do not match the matrix ",
                                lowering.shape(a.slot).ToString());
  }
  const int64_t k = tau_shape.dims.back();
  if (!(a.rows >= a.cols && a.cols >= k)) {
    return InvalidArgumentError(op.Describe(),
                                ": needs rows >= columns >= reflectors, got ",
                                a.rows, "x", a.cols, " and ", k, " reflectors");
  }
  ASSIGN_OR_RETURN(
      std::vector<SlotId> out,
      TupleOrResults(lowering, op,
                     {{a.type, WithBatch(a.batch_dims, {a.rows, a.cols})}}));
  lowering.Emit(op,
                exec::MakeOrgqrKernel(a.type, exec::NumElements(a.batch_dims),
                                      a.rows, a.cols, k),
                {a.slot, taus}, out);
  return OkStatus();
}

Status LowerXlaEigh(Lowering& lowering, const ir::Operation& op) {
  if (op.num_operands() != 1) {
    return InvalidArgumentError(op.Describe(), ": Eigh takes one matrix");
  }
  ASSIGN_OR_RETURN(XlaMatrix a, ReadMatrix(lowering, op, 0));
  if (a.rows != a.cols) {
    return InvalidArgumentError(op.Describe(), ": Eigh needs a square matrix, got ",
                                lowering.shape(a.slot).ToString());
  }
  // backend_config "lower,sort_eigenvalues,max_iter,tol"; lower by default.
  bool lower = true;
  ir::Attribute config = op.GetAttr("backend_config");
  if (config.is(ir::AttrKind::kString) && !config.string_value().empty()) {
    const std::string& text = config.string_value();
    const std::string first = text.substr(0, text.find(','));
    if (first != "0" && first != "1") {
      return InvalidArgumentError(op.Describe(), ": Eigh backend_config \"",
                                  text,
                                  "\" does not start with lower (0 or 1)");
    }
    lower = first == "1";
  }
  const int64_t n = a.rows;
  ASSIGN_OR_RETURN(
      std::vector<SlotId> out,
      TupleOrResults(lowering, op,
                     {{a.type, WithBatch(a.batch_dims, {n, n})},
                      {RealTypeOf(a.type), WithBatch(a.batch_dims, {n})}}));
  SlotId info = lowering.NewTemp({ElementType::kI32, a.batch_dims});
  lowering.Emit(op,
                exec::MakeSyevdKernel(a.type, exec::NumElements(a.batch_dims),
                                      n, lower, /*vectors=*/true),
                {a.slot}, {out[0], out[1], info});
  return OkStatus();
}

// LuDecomposition(a) -> (lu, pivots, permutation), XLA's TPU target:
// getrf's factors, its pivots 0-based, and the row permutation they make
// (row i of P a is row permutation[i] of a).
Status LowerXlaLu(Lowering& lowering, const ir::Operation& op) {
  if (op.num_operands() != 1) {
    return InvalidArgumentError(op.Describe(),
                                ": LuDecomposition takes one matrix");
  }
  ASSIGN_OR_RETURN(XlaMatrix a, ReadMatrix(lowering, op, 0));
  const int64_t k = std::min(a.rows, a.cols);
  const int64_t batch = exec::NumElements(a.batch_dims);
  ASSIGN_OR_RETURN(
      std::vector<SlotId> out,
      TupleOrResults(lowering, op,
                     {{a.type, WithBatch(a.batch_dims, {a.rows, a.cols})},
                      {ElementType::kI32, WithBatch(a.batch_dims, {k})},
                      {ElementType::kI32, WithBatch(a.batch_dims, {a.rows})}}));
  const ArrayShape pivot_shape{ElementType::kI32, WithBatch(a.batch_dims, {k})};
  SlotId one_based = lowering.NewTemp(pivot_shape);
  SlotId info = lowering.NewTemp({ElementType::kI32, a.batch_dims});
  lowering.Emit(op, exec::MakeGetrfKernel(a.type, batch, a.rows, a.cols),
                {a.slot}, {out[0], one_based, info});
  const int32_t one = 1;
  ASSIGN_OR_RETURN(
      SlotId ones,
      lowering.NewSplatConstant(
          pivot_shape,
          std::string(reinterpret_cast<const char*>(&one), sizeof(one))));
  lowering.Emit(op,
                exec::MakeBinaryKernel(exec::BinaryOp::kSubtract,
                                       ElementType::kI32, batch * k, 32),
                {one_based, ones}, {out[1]});
  lowering.Emit(op, exec::MakeLuPivotsToPermutationKernel(batch, k, a.rows),
                {out[1]}, {out[2]});
  return OkStatus();
}

}  // namespace

void RegisterXlaTargets(CustomCallRegistry& registry) {
  registry.Register("shape_assertion", LowerShapeAssertion);
  registry.Register("stablehlo.dynamic_top_k", LowerDynamicTopK);
  registry.Register("ApproxTopK",
                    [](Lowering& lowering, const ir::Operation& op) {
                      return LowerApproxTopK(lowering, op, /*dynamic=*/false);
                    });
  registry.Register("stablehlo.dynamic_approx_top_k",
                    [](Lowering& lowering, const ir::Operation& op) {
                      return LowerApproxTopK(lowering, op, /*dynamic=*/true);
                    });
  registry.Register("stablehlo.dynamic_reduce_window",
                    LowerDynamicReduceWindow);
  registry.Register("Qr", LowerXlaQr);
  registry.Register("ProductOfElementaryHouseholderReflectors",
                    LowerXlaHouseholderProduct);
  registry.Register("Eigh", LowerXlaEigh);
  registry.Register("LuDecomposition", LowerXlaLu);
  registry.Register("stablehlo.dynamic_rng_bit_generator",
                    LowerDynamicRngBitGenerator);
}

}  // namespace kiln::compile
