// Ops with a computation region applied across data: reduce, reduce_window,
// select_and_scatter, map and sort, and the reduction-region rules they
// share with scatter and the collectives.
#include <limits>

#include "ir/verify_internal.h"

namespace kiln::ir::verifier {

bool IsPromotable(const Type& from, const Type& to) {
  Type a = IsTensor(from) ? from.element() : from;
  Type b = IsTensor(to) ? to.element() : to;
  if (a == b) return true;
  if (IsQuantizedElement(a) != IsQuantizedElement(b)) return false;
  if (IsQuantizedElement(a)) {
    const QuantizedType& qa = a.quantized();
    const QuantizedType& qb = b.quantized();
    return qa.expressed_type == qb.expressed_type &&
           IsUnsignedInteger(qa.storage_type) ==
               IsUnsignedInteger(qb.storage_type) &&
           BitWidth(qa.storage_type) <= BitWidth(qb.storage_type);
  }
  if (!a.is(TypeKind::kElement) || !b.is(TypeKind::kElement)) return false;
  ElementType ea = a.element_type();
  ElementType eb = b.element_type();
  if (Category(ea) != Category(eb)) return false;
  if (Category(ea) == ElementCategory::kBool) return true;
  return BitWidth(ea) <= BitWidth(eb);
}

Status CheckReducerRegion(const Operation& op, const Block& block,
                          const std::vector<Type>& inputs,
                          const std::vector<Type>& inits,
                          const std::vector<int64_t>& allowed_dims) {
  int64_t n = static_cast<int64_t>(inputs.size());
  // reduce_c6, reduce_window_c13, scatter_c15, select_and_scatter_c10
  if (block.num_arguments() != 2 * n) {
    return OpError(op, "Reduction-region must take ", 2 * n,
                   " parameters, but takes ", block.num_arguments(),
                   " parameter(s)");
  }
  ASSIGN_OR_RETURN(const Operation* terminator, RegionTerminator(op, block));
  if (terminator->num_operands() == 0) {
    return OpError(op,
                   "The reduction-region expected to return some "
                   "value(s)");
  }
  if (terminator->num_operands() != n) {
    return OpError(op, "Reduction-region here must produce ", n,
                   " tensors, but produces ", terminator->num_operands(),
                   " instead");
  }
  std::vector<Type> accumulators;
  for (const Value* value : terminator->operands()) {
    if (!IsTensor(value->type())) {
      return OpError(op,
                     "Reduction-region here must produce tensor-typed "
                     "result(s), but produces ",
                     Quoted(value->type()), " instead");
    }
    accumulators.push_back(value->type());
  }
  for (int64_t i = 0; i < n; ++i) {
    const Type& accumulator = accumulators[i];
    for (int64_t index : {i, n + i}) {
      const Type& arg = block.argument(index)->type();
      if (!IsTensor(arg) || !ShapesCompatible(accumulator, arg) ||
          accumulator.element() != arg.element()) {
        return OpError(op,
                       "The type of reduction-region's parameter at "
                       "index ",
                       index,
                       " is different than the corresponding result "
                       "type: ",
                       Quoted(arg), " vs ", Quoted(accumulator));
      }
    }
    const Type& init = inits[i];
    if (!IsTensor(init) || !ShapesCompatible(accumulator, init)) {
      return OpError(op,
                     "The shape of reduction-region's result type at "
                     "index ",
                     i,
                     " differs from the op's corresponding init-value "
                     "type: ",
                     Quoted(accumulator), " vs ", Quoted(init));
    }
    if (!IsPromotable(init, accumulator)) {
      return OpError(op,
                     "The element-type of reduction-region's result type "
                     "at index ",
                     i,
                     " is expected to be promotable from the op's "
                     "corresponding init-value element-type: ",
                     Quoted(accumulator), " vs ", Quoted(init));
    }
    const Type& arg = block.argument(n + i)->type();
    if (!IsPromotable(inputs[i], arg)) {
      return OpError(op,
                     "The element-type of reduction-region's argument at "
                     "index ",
                     n + i, " is expected to be promotable from ",
                     Quoted(ElementOf(inputs[i])), ", but got ",
                     Quoted(arg.element()));
    }
    // The block's tensors may only keep a subsequence of `allowed_dims`.
    if (arg.rank() > static_cast<int64_t>(allowed_dims.size())) {
      return OpError(op, "The rank of reduction-region's argument at index ",
                     n + i, " is expected to be <= ", allowed_dims.size(),
                     ", got ", arg.rank());
    }
    int64_t matched = 0;
    for (size_t d = 0; d < allowed_dims.size() && matched < arg.rank(); ++d) {
      if (DimsCompatible(allowed_dims[d], arg.dim(matched))) ++matched;
    }
    if (matched != arg.rank()) {
      return OpError(op, "The shape of reduction-region's argument at index ",
                     n + i,
                     " is not compatible with that of reduce-op's "
                     "input-parameter at index ",
                     i);
    }
  }
  return OkStatus();
}

namespace {

// The first `n` operands are inputs of compatible shapes.
Status CheckInputsCompatible(const Operation& op, int n) {
  for (int i = 1; i < n; ++i) {
    if (!ShapesCompatible(op.operand(0)->type(), op.operand(i)->type())) {
      return OpError(op,
                     "expects all inputs to have compatible shapes. Shape "
                     "at input-index ",
                     i, " is not compatible with shape at input-index 0");
    }
  }
  return OkStatus();
}

// Results: the inferred shape with each region result's element type.
Status CheckRegionResults(const Operation& op, const Block& block,
                          const std::vector<int64_t>& shape,
                          const std::vector<int64_t>& bounds) {
  std::vector<Type> inferred;
  for (const Type& type : TerminatorTypes(block)) {
    inferred.push_back(MakeTensor(shape, type.element(), bounds));
  }
  return CheckInferredResults(op, inferred);
}

Status VerifyReduce(const Operation& op) {
  if (op.num_operands() < 2 || op.num_operands() % 2 != 0) {
    return OpError(op, "expects N inputs and N init values, but got ",
                   op.num_operands(), " operands");
  }
  int n = op.num_operands() / 2;
  RETURN_IF_ERROR(ExpectResults(op, n));
  RETURN_IF_ERROR(ExpectRegions(op, 1));
  for (int i = 0; i < n; ++i) {
    RETURN_IF_ERROR(CheckOperandTensor(op, i, kAnyElement));
    RETURN_IF_ERROR(CheckOperandTensor(op, n + i, kAnyElement));
  }
  RETURN_IF_ERROR(CheckAllResultTensors(op, kAnyElement));
  RETURN_IF_ERROR(CheckInputsCompatible(op, n));
  ASSIGN_OR_RETURN(std::vector<int64_t> dimensions,
                   RequiredInts(op, "dimensions"));
  const Type& input = op.operand(0)->type();
  for (int64_t dim : dimensions) {
    // (C4)
    if (dim < 0 || dim >= input.rank()) {
      return OpError(op, "Out-of-bounds dimension ", dim,
                     " for input-tensor rank: ", input.rank());
    }
  }
  // (C5)
  if (HasDuplicates(dimensions)) {
    return OpError(op, "Duplicate reduction dimension in [",
                   JoinInts(dimensions), "]");
  }
  std::vector<int64_t> shape;
  std::vector<int64_t> bounds;
  std::vector<int64_t> input_bounds = BoundsOf(input);
  for (int64_t d = 0; d < input.rank(); ++d) {
    if (Contains(dimensions, d)) continue;
    shape.push_back(input.dim(d));
    bounds.push_back(input_bounds.empty() ? kDynamic : input_bounds[d]);
  }
  ASSIGN_OR_RETURN(const Block* block, SingleBlock(op, 0));
  std::vector<Type> inputs;
  std::vector<Type> inits;
  for (int i = 0; i < n; ++i) {
    inputs.push_back(op.operand(i)->type());
    inits.push_back(op.operand(n + i)->type());
  }
  RETURN_IF_ERROR(CheckReducerRegion(op, *block, inputs, inits, shape));
  // (C7), (C8)
  return CheckRegionResults(op, *block, shape, bounds);
}

// One spatial dimension of a window.
struct WindowDim {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t base_dilation = 1;
  int64_t window_dilation = 1;
  int64_t padding_low = 0;
  int64_t padding_high = 0;
};

// Reads window_dimensions, window_strides, base_dilations (lhs_dilation),
// window_dilations (rhs_dilation) and padding, checking sizes and signs.
StatusOr<std::vector<WindowDim>> ReadWindow(const Operation& op,
                                            const char* strides_name,
                                            const char* base_name,
                                            const char* window_name) {
  ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                   RequiredInts(op, "window_dimensions"));
  std::vector<WindowDim> window(dims.size());
  auto read = [&](const char* name, const char* what,
                  int64_t WindowDim::*field) -> Status {
    if (name == nullptr) return OkStatus();
    ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> values,
                     OptionalInts(op, name));
    if (!values) return OkStatus();
    if (!values->empty() && values->size() != dims.size()) {
      return OpError(op, "expects ", what,
                     " to have same dimension-size as size of window "
                     "dimensions (",
                     dims.size(), "), but got: ", values->size(), ".");
    }
    for (size_t i = 0; i < values->size(); ++i) window[i].*field = (*values)[i];
    return OkStatus();
  };
  RETURN_IF_ERROR(read(strides_name, "window-strides", &WindowDim::stride));
  RETURN_IF_ERROR(
      read(base_name, "base-dilation factors", &WindowDim::base_dilation));
  RETURN_IF_ERROR(read(window_name, "window-dilation factors",
                       &WindowDim::window_dilation));
  if (Attribute padding = op.GetAttr("padding")) {
    ASSIGN_OR_RETURN(IntElements values,
                     ReadIntElements(op, "padding", padding));
    if (values.shape.size() != 2 || values.shape[1] != 2) {
      return OpError(op,
                     "expects the shape of padding-attribute to be {N, "
                     "2}, but got {",
                     JoinInts(values.shape), "}.");
    }
    size_t rows = static_cast<size_t>(values.shape[0]);
    if (rows != 0 && rows != dims.size()) {
      return OpError(op,
                     "expects padding-entries to have same "
                     "dimension-size as size of window dimensions (",
                     dims.size(), "), but got: ", rows, ".");
    }
    for (size_t i = 0; i < rows; ++i) {
      window[i].padding_low = values.values[2 * i];
      window[i].padding_high = values.values[2 * i + 1];
    }
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    window[i].size = dims[i];
    if (dims[i] <= 0) {
      return OpError(op, "expects window to have positive value for ", i,
                     "-th window dimension, but got ", dims[i], ".");
    }
    if (window[i].stride <= 0) {
      return OpError(op, "expects window to have positive stride for ", i,
                     "-th window dimension, but got ", window[i].stride, ".");
    }
    if (window[i].base_dilation <= 0) {
      return OpError(op,
                     "expects window to have positive base dilation "
                     "factor for ",
                     i, "-th window dimension, but got ",
                     window[i].base_dilation, ".");
    }
    if (window[i].window_dilation <= 0) {
      return OpError(op,
                     "expects window to have positive window dilation "
                     "factor for ",
                     i, "-th window dimension, but got ",
                     window[i].window_dilation, ".");
    }
  }
  return window;
}

// The size of a windowed dimension: strided(pad(dilate(base)), dilate(window))
// computed in 128 bits; kDynamic for a dynamic base.
StatusOr<int64_t> WindowOutputSize(const Operation& op, int64_t base,
                                   const WindowDim& dim, size_t index) {
  if (base == kDynamic) return kDynamic;
  __int128 dilated_base =
      base == 0 ? 0 : static_cast<__int128>(base - 1) * dim.base_dilation + 1;
  __int128 padded = dilated_base + dim.padding_low + dim.padding_high;
  __int128 dilated_window =
      static_cast<__int128>(dim.size - 1) * dim.window_dilation + 1;
  if (padded < 0) {
    return OpError(op, "padding of window dimension ", index,
                   " makes its size negative");
  }
  if (padded == 0 || dilated_window > padded) return 0;
  __int128 out = (padded - dilated_window) / dim.stride + 1;
  if (out > std::numeric_limits<int64_t>::max()) {
    return OpError(op, "window dimension ", index, " is too large");
  }
  return static_cast<int64_t>(out);
}

Status VerifyReduceWindow(const Operation& op) {
  if (op.num_operands() < 2 || op.num_operands() % 2 != 0) {
    return OpError(op,
                   "requires at least 1 input value and as many init "
                   "values, but got ",
                   op.num_operands(), " operands");
  }
  int n = op.num_operands() / 2;
  RETURN_IF_ERROR(ExpectResults(op, n));
  RETURN_IF_ERROR(ExpectRegions(op, 1));
  RETURN_IF_ERROR(CheckAllOperandTensors(op, kAnyElement));
  RETURN_IF_ERROR(CheckAllResultTensors(op, kAnyElement));
  RETURN_IF_ERROR(CheckInputsCompatible(op, n));
  ASSIGN_OR_RETURN(
      std::vector<WindowDim> window,
      ReadWindow(op, "window_strides", "base_dilations", "window_dilations"));
  const Type& input = op.operand(0)->type();
  for (int i = 0; i < n; ++i) {
    const Type& type = op.operand(i)->type();
    if (type.rank() != static_cast<int64_t>(window.size())) {
      return OpError(op,
                     "expects window-dimensions size == input rank, but "
                     "got window-dimensions size: ",
                     window.size(), " and input: ", Quoted(type),
                     " with rank = ", type.rank(), ".");
    }
  }
  std::vector<int64_t> shape;
  std::vector<int64_t> window_sizes;
  for (size_t i = 0; i < window.size(); ++i) {
    ASSIGN_OR_RETURN(int64_t size,
                     WindowOutputSize(op, input.dim(i), window[i], i));
    shape.push_back(size);
    window_sizes.push_back(window[i].size);
  }
  ASSIGN_OR_RETURN(const Block* block, SingleBlock(op, 0));
  std::vector<Type> inputs;
  std::vector<Type> inits;
  for (int i = 0; i < n; ++i) {
    inputs.push_back(op.operand(i)->type());
    inits.push_back(op.operand(n + i)->type());
  }
  RETURN_IF_ERROR(CheckReducerRegion(op, *block, inputs, inits, window_sizes));
  return CheckRegionResults(op, *block, shape, {});
}

Status VerifySelectAndScatter(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 3));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(ExpectRegions(op, 2));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kAnyElement));
  RETURN_IF_ERROR(CheckOperandTensor(op, 1, kAnyElement));
  RETURN_IF_ERROR(CheckOperandScalarTensor(op, 2, kAnyElement));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyElement));
  const Type& operand = op.operand(0)->type();
  const Type& source = op.operand(1)->type();
  // (C1), (C3)
  for (int i = 1; i < 3; ++i) {
    const Type& type = op.operand(i)->type();
    if (!ElementsCompatible(type.element(), operand.element())) {
      return OpError(op, "expects ", i == 1 ? "source" : "init_value",
                     " to have the element type of operand ", Quoted(operand),
                     ", but got ", Quoted(type));
    }
  }
  ASSIGN_OR_RETURN(std::vector<WindowDim> window,
                   ReadWindow(op, "window_strides", nullptr, nullptr));
  // (C4), (C5)
  if (operand.rank() != static_cast<int64_t>(window.size())) {
    return OpError(op,
                   "expects window-dimensions size == operand rank, but "
                   "got window-dimensions size: ",
                   window.size(), " and operand: ", Quoted(operand),
                   " with rank = ", operand.rank(), ".");
  }
  // (C1): source has the windowed shape of operand.
  std::vector<int64_t> windowed;
  for (size_t i = 0; i < window.size(); ++i) {
    ASSIGN_OR_RETURN(int64_t size,
                     WindowOutputSize(op, operand.dim(i), window[i], i));
    windowed.push_back(size);
  }
  if (source.rank() != operand.rank()) {
    return OpError(op, "expects source to have the rank of operand, but got ",
                   Quoted(source));
  }
  for (int64_t i = 0; i < source.rank(); ++i) {
    if (!DimsCompatible(source.dim(i), windowed[i])) {
      return OpError(op,
                     "expects source shape to be compatible with the "
                     "windowed operand shape [",
                     JoinInts(windowed), "], but got ", Quoted(source));
    }
  }
  // (C9): select takes two 0-d tensors of the operand's element type and
  // returns tensor<i1>.
  ASSIGN_OR_RETURN(const Block* select, SingleBlock(op, 0));
  Type scalar = Type::Tensor({}, operand.element());
  if (select->num_arguments() != 2) {
    return OpError(op,
                   "expects the select-region to take 2 parameters, but "
                   "takes ",
                   select->num_arguments());
  }
  for (int i = 0; i < 2; ++i) {
    if (!TypesCompatible(select->argument(i)->type(), scalar)) {
      return OpError(op,
                     "expects the type of select-region's parameter at "
                     "index ",
                     i, " to be ", Quoted(scalar), ", but got ",
                     Quoted(select->argument(i)->type()));
    }
  }
  ASSIGN_OR_RETURN(const Operation* select_return,
                   RegionTerminator(op, *select));
  Type pred = Type::Tensor({}, Type::Element(ElementType::kI1));
  if (select_return->num_operands() != 1 ||
      select_return->operand(0)->type() != pred) {
    return OpError(op,
                   "expects select-region to return single value of type "
                   "'tensor<i1>'");
  }
  // (C10)
  ASSIGN_OR_RETURN(const Block* scatter, SingleBlock(op, 1));
  RETURN_IF_ERROR(
      CheckReducerRegion(op, *scatter, {source}, {op.operand(2)->type()}, {}));
  // (C11)
  return CheckRegionResults(op, *scatter, operand.shape(), BoundsOf(operand));
}

Status VerifyMap(const Operation& op) {
  RETURN_IF_ERROR(ExpectMinOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(ExpectRegions(op, 1));
  RETURN_IF_ERROR(CheckAllOperandTensors(op, kAnyElement));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyElement));
  const Type& first = op.operand(0)->type();
  for (int i = 1; i < op.num_operands(); ++i) {
    if (!ShapesCompatible(first, op.operand(i)->type())) {
      return OpError(op,
                     "expects all operands to have compatible shapes, but "
                     "got ",
                     Quoted(first), " and ", Quoted(op.operand(i)->type()));
    }
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> dimensions,
                   RequiredInts(op, "dimensions"));
  for (size_t i = 0; i < dimensions.size(); ++i) {
    if (dimensions[i] != static_cast<int64_t>(i)) {
      return OpError(op,
                     "requires monotonically increasing dimension "
                     "numbers, but got: ",
                     JoinInts(dimensions));
    }
  }
  if (static_cast<int64_t>(dimensions.size()) != first.rank()) {
    return OpError(op,
                   "applied to a subset of dimensions currently not "
                   "supported: operand dimensions = ",
                   first.rank(),
                   ", requested map dimensions size = ", dimensions.size());
  }
  ASSIGN_OR_RETURN(const Block* block, SingleBlock(op, 0));
  if (block->num_arguments() != op.num_operands()) {
    return OpError(op,
                   "expects number of operands to match the arity of map "
                   "computation, but got: ",
                   op.num_operands(), " and ", block->num_arguments());
  }
  for (int i = 0; i < block->num_arguments(); ++i) {
    const Type& arg = block->argument(i)->type();
    if (!IsTensor(arg) || arg.rank() != 0) {
      return OpError(op,
                     "computation arguments must be 0-rank tensor, but "
                     "got: arg #",
                     i, " of type ", Quoted(arg));
    }
    if (arg.element() != op.operand(i)->type().element()) {
      return OpError(op,
                     "element type of operands and computation arguments "
                     "must match, but got: ",
                     Quoted(op.operand(i)->type().element()), " and ",
                     Quoted(arg.element()));
    }
  }
  ASSIGN_OR_RETURN(const Operation* terminator, RegionTerminator(op, *block));
  if (terminator->num_operands() != 1) {
    return OpError(op, "computation must return single output, but got: ",
                   terminator->num_operands());
  }
  const Type& returned = terminator->operand(0)->type();
  if (!IsTensor(returned) || returned.rank() != 0) {
    return OpError(op, "computation must return 0-rank tensor, but got: ",
                   Quoted(returned));
  }
  return CheckInferredResults(
      op, {MakeTensor(first.shape(), returned.element(), BoundsOf(first))});
}

Status VerifySort(const Operation& op) {
  RETURN_IF_ERROR(ExpectMinOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, op.num_operands()));
  RETURN_IF_ERROR(ExpectRegions(op, 1));
  RETURN_IF_ERROR(CheckAllOperandTensors(op, kAnyElement));
  RETURN_IF_ERROR(CheckAllResultTensors(op, kAnyElement));
  RETURN_IF_ERROR(OptionalBool(op, "is_stable"));
  const Type& first = op.operand(0)->type();
  std::vector<Type> operand_types;
  for (int i = 0; i < op.num_operands(); ++i) {
    const Type& type = op.operand(i)->type();
    // (C1)
    if (!ShapesCompatible(first, type)) {
      return OpError(op, "requires the same shape for all operands, but got ",
                     Quoted(first), " and ", Quoted(type));
    }
    operand_types.push_back(type);
  }
  // (C4)
  ASSIGN_OR_RETURN(std::optional<int64_t> dimension,
                   OptionalInt(op, "dimension"));
  int64_t dim = dimension.value_or(-1);
  int64_t rank = first.rank();
  if (dim < -rank || dim >= rank) {
    return OpError(op, "dimension attribute value must be in range [", -rank,
                   ", ", rank, "), but found ", dim);
  }
  // (C5): the comparator takes a pair of 0-d tensors per operand.
  ASSIGN_OR_RETURN(const Block* block, SingleBlock(op, 0));
  if (block->num_arguments() != 2 * op.num_operands()) {
    return OpError(op, "comparator block should have ", 2 * op.num_operands(),
                   " arguments");
  }
  for (int i = 0; i < block->num_arguments(); ++i) {
    Type expected = Type::Tensor({}, op.operand(i / 2)->type().element());
    if (block->argument(i)->type() != expected) {
      return OpError(op, "comparator block argument #", i,
                     " should be of type ", Quoted(expected), " but got ",
                     Quoted(block->argument(i)->type()));
    }
  }
  ASSIGN_OR_RETURN(const Operation* terminator, RegionTerminator(op, *block));
  if (terminator->num_operands() != 1) {
    return OpError(op, "comparator must return single output but got ",
                   terminator->num_operands());
  }
  Type pred = Type::Tensor({}, Type::Element(ElementType::kI1));
  if (terminator->operand(0)->type() != pred) {
    return OpError(op, "comparator must return tensor<i1> but got ",
                   Quoted(terminator->operand(0)->type()));
  }
  // (C2), (C3)
  return CheckInferredResults(op, operand_types);
}

}  // namespace

void RegisterReduceVerifiers(VerifierTable& table) {
  table[static_cast<size_t>(OpCode::kReduce)] = VerifyReduce;
  table[static_cast<size_t>(OpCode::kReduceWindow)] = VerifyReduceWindow;
  table[static_cast<size_t>(OpCode::kSelectAndScatter)] =
      VerifySelectAndScatter;
  table[static_cast<size_t>(OpCode::kMap)] = VerifyMap;
  table[static_cast<size_t>(OpCode::kSort)] = VerifySort;
}

}  // namespace kiln::ir::verifier
