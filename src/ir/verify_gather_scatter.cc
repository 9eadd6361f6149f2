// gather, dynamic_gather and scatter: dimension numbers, slice sizes and the
// shapes they imply (spec constraints (C1)-(C23) of gather and scatter).
#include "ir/verify_internal.h"

namespace kiln::ir::verifier {
namespace {

// "Expects each element of NAME to be in range [0, rank-of('WHAT')) i.e.
// [0, N). got: V."
Status CheckDimsInRange(const Operation& op, const std::vector<int64_t>& dims,
                        std::string_view name, std::string_view what,
                        int64_t rank) {
  for (int64_t dim : dims) {
    if (dim < 0 || dim >= rank) {
      return OpError(op, "Expects each element of ", name,
                     " to be in range [0, rank-of('", what, "')) i.e. [0, ",
                     rank, "). got: ", dim, ".");
    }
  }
  return OkStatus();
}

Status CheckSorted(const Operation& op, const std::vector<int64_t>& dims,
                   std::string_view name) {
  if (IsSortedAscending(dims)) return OkStatus();
  return OpError(op, "expects ", name, " to be sorted, got: [", JoinInts(dims),
                 "]");
}

Status CheckUnique(const Operation& op, const std::vector<int64_t>& dims,
                   std::string_view name) {
  if (!HasDuplicates(dims)) return OkStatus();
  return OpError(op, "expects ", name, " to not repeat, got: [", JoinInts(dims),
                 "]");
}

// is_unique(concatenate(a, b)).
Status CheckDisjoint(const Operation& op, const std::vector<int64_t>& a,
                     std::string_view a_name, const std::vector<int64_t>& b,
                     std::string_view b_name) {
  std::vector<int64_t> all = a;
  all.insert(all.end(), b.begin(), b.end());
  for (size_t i = 0; i < all.size(); ++i) {
    for (size_t j = i + 1; j < all.size(); ++j) {
      if (all[i] == all[j]) {
        return OpError(op, "has duplicated dimension from ", a_name, " and ",
                       b_name, ": ", all[i]);
      }
    }
  }
  return OkStatus();
}

// The batching dimensions of the operand and of the indices pair up and
// have compatible sizes.
Status CheckBatchingDims(
    const Operation& op, const Type& operand, const Type& indices,
    const std::vector<int64_t>& operand_batching, std::string_view operand_name,
    const std::vector<int64_t>& indices_batching, std::string_view indices_name,
    std::string_view indices_what, int64_t index_vector_dim) {
  RETURN_IF_ERROR(CheckSorted(op, operand_batching, operand_name));
  RETURN_IF_ERROR(CheckDimsInRange(op, operand_batching, operand_name,
                                   "operand", operand.rank()));
  RETURN_IF_ERROR(CheckUnique(op, indices_batching, indices_name));
  RETURN_IF_ERROR(CheckDimsInRange(op, indices_batching, indices_name,
                                   indices_what, indices.rank()));
  if (Contains(indices_batching, index_vector_dim)) {
    return OpError(op, "expects ", indices_name,
                   " not to include index_vector_dim ", index_vector_dim, ".");
  }
  if (operand_batching.size() != indices_batching.size()) {
    return OpError(op, operand_name, " and ", indices_name,
                   " should have the same size.");
  }
  for (size_t i = 0; i < operand_batching.size(); ++i) {
    int64_t a = operand.dim(operand_batching[i]);
    int64_t b = indices.dim(indices_batching[i]);
    if (!DimsCompatible(a, b)) {
      return OpError(op, operand_name, "[", i, "] and ", indices_name, "[", i,
                     "] must have compatible sizes, but got ", a, " and ", b,
                     ".");
    }
  }
  return OkStatus();
}

// `slice_sizes` is nullopt when the sizes are not known (dynamic_gather
// with a non-constant operand); `num_slice_sizes` is -1 when even their
// count is unknown.
Status VerifyGatherCommon(
    const Operation& op, const std::optional<std::vector<int64_t>>& slice_sizes,
    int64_t num_slice_sizes) {
  const Type& operand = op.operand(0)->type();
  const Type& indices = op.operand(1)->type();
  ASSIGN_OR_RETURN(Attribute attr,
                   AttrOfKind(op, "dimension_numbers",
                              AttrKind::kGatherDimensionNumbers, true));
  RETURN_IF_ERROR(OptionalBool(op, "indices_are_sorted"));
  const GatherDimensionNumbers& dn = attr.gather();
  int64_t index_vector_dim = dn.index_vector_dim;
  // (C1)
  int64_t implied_rank = static_cast<int64_t>(dn.offset_dims.size() +
                                              dn.collapsed_slice_dims.size() +
                                              dn.operand_batching_dims.size());
  if (operand.rank() != implied_rank) {
    return OpError(
        op, "offset_dims size (", dn.offset_dims.size(),
        ") plus collapse_slice_dims size (", dn.collapsed_slice_dims.size(),
        ") plus operand_batching_dims size (", dn.operand_batching_dims.size(),
        ") is not equal to operand rank (", operand.rank(), ")");
  }
  // (C2)
  if (index_vector_dim < 0 || index_vector_dim > indices.rank()) {
    return OpError(op,
                   "Expects index_vector_dim to be in range [0, "
                   "rank-of('start_indices')] i.e. [0, ",
                   indices.rank(), "]. got: ", index_vector_dim, ".");
  }
  // (C3)
  int64_t index_size =
      index_vector_dim < indices.rank() ? indices.dim(index_vector_dim) : 1;
  if (index_size != kDynamic &&
      index_size != static_cast<int64_t>(dn.start_index_map.size())) {
    return OpError(op, "start_index_map size (", dn.start_index_map.size(),
                   ") is not equal to size of index dimension (",
                   index_vector_dim, ") of start_indices (", index_size, ")");
  }
  // (C4)
  RETURN_IF_ERROR(CheckSorted(op, dn.offset_dims, "offset_dims"));
  RETURN_IF_ERROR(CheckUnique(op, dn.offset_dims, "offset_dims"));
  // (C6)-(C8)
  RETURN_IF_ERROR(
      CheckDisjoint(op, dn.collapsed_slice_dims, "collapsed_slice_dims",
                    dn.operand_batching_dims, "operand_batching_dims"));
  RETURN_IF_ERROR(
      CheckSorted(op, dn.collapsed_slice_dims, "collapsed_slice_dims"));
  RETURN_IF_ERROR(CheckDimsInRange(op, dn.collapsed_slice_dims,
                                   "collapsed_slice_dims", "operand",
                                   operand.rank()));
  // (C10)-(C17)
  RETURN_IF_ERROR(CheckBatchingDims(
      op, operand, indices, dn.operand_batching_dims, "operand_batching_dims",
      dn.start_indices_batching_dims, "start_indices_batching_dims",
      "start_indices", index_vector_dim));
  // (C18), (C19)
  RETURN_IF_ERROR(CheckDisjoint(op, dn.start_index_map, "start_index_map",
                                dn.operand_batching_dims,
                                "operand_batching_dims"));
  RETURN_IF_ERROR(CheckDimsInRange(op, dn.start_index_map, "start_index_map",
                                   "operand", operand.rank()));
  // (C20)
  if (num_slice_sizes >= 0 && num_slice_sizes != operand.rank()) {
    return OpError(op, "slice_sizes size (", num_slice_sizes,
                   ") not equal to operand rank (", operand.rank(), ")");
  }
  if (slice_sizes) {
    const std::vector<int64_t>& sizes = *slice_sizes;
    // (C9), (C12)
    for (const auto& [dims, name] :
         {std::pair<const std::vector<int64_t>&, const char*>{
              dn.collapsed_slice_dims, "collapsed_slice_dims"},
          {dn.operand_batching_dims, "operand_batching_dims"}}) {
      for (int64_t dim : dims) {
        if (sizes[dim] > 1) {
          return OpError(op, "Expects that for each dim in ", name,
                         ", slice_sizes[dim] should be <= 1, but got ",
                         sizes[dim]);
        }
      }
    }
    // (C21)
    for (int64_t i = 0; i < operand.rank(); ++i) {
      int64_t size = operand.dim(i);
      if (sizes[i] < 0 || (size != kDynamic && sizes[i] > size)) {
        return OpError(op, "slice size (", sizes[i],
                       ") is out of bounds for operand dimension (",
                       DimText(size), ") at index ", i);
      }
    }
  }
  // (C5), (C22): the result shape combines the batch sizes of the indices
  // with the kept slice sizes.
  std::vector<int64_t> batch_sizes;
  std::vector<int64_t> batch_bounds;
  std::vector<int64_t> indices_bounds = BoundsOf(indices);
  for (int64_t d = 0; d < indices.rank(); ++d) {
    if (d == index_vector_dim) continue;
    batch_sizes.push_back(indices.dim(d));
    batch_bounds.push_back(indices_bounds.empty() ? kDynamic
                                                  : indices_bounds[d]);
  }
  std::vector<int64_t> offset_sizes;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (Contains(dn.collapsed_slice_dims, d) ||
        Contains(dn.operand_batching_dims, d)) {
      continue;
    }
    offset_sizes.push_back(slice_sizes ? (*slice_sizes)[d] : kDynamic);
  }
  int64_t result_rank =
      static_cast<int64_t>(dn.offset_dims.size() + batch_sizes.size());
  for (int64_t dim : dn.offset_dims) {
    if (dim < 0 || dim >= result_rank) {
      return OpError(op,
                     "Expects each element of offset_dims to be in range "
                     "[0, implied-result-rank) i.e. [0, ",
                     result_rank, "). got: ", dim, ".");
    }
  }
  std::vector<int64_t> shape;
  std::vector<int64_t> bounds;
  size_t next_offset = 0;
  size_t next_batch = 0;
  for (int64_t r = 0; r < result_rank; ++r) {
    if (Contains(dn.offset_dims, r)) {
      shape.push_back(next_offset < offset_sizes.size()
                          ? offset_sizes[next_offset]
                          : kDynamic);
      bounds.push_back(kDynamic);
      ++next_offset;
    } else {
      shape.push_back(next_batch < batch_sizes.size() ? batch_sizes[next_batch]
                                                      : kDynamic);
      bounds.push_back(next_batch < batch_bounds.size()
                           ? batch_bounds[next_batch]
                           : kDynamic);
      ++next_batch;
    }
  }
  // (C23)
  return CheckInferredResults(op,
                              {MakeTensor(shape, operand.element(), bounds)});
}

Status VerifyGather(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 2));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kAnyElement));
  RETURN_IF_ERROR(CheckOperandTensor(op, 1, kInt));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyElement));
  ASSIGN_OR_RETURN(std::vector<int64_t> sizes, RequiredInts(op, "slice_sizes"));
  int64_t count = static_cast<int64_t>(sizes.size());
  if (count != op.operand(0)->type().rank()) {
    return OpError(op, "slice_sizes size (", count,
                   ") not equal to operand rank (",
                   op.operand(0)->type().rank(), ")");
  }
  return VerifyGatherCommon(op, sizes, count);
}

Status VerifyDynamicGather(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 3));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kAnyElement));
  RETURN_IF_ERROR(CheckOperandTensor(op, 1, kInt));
  RETURN_IF_ERROR(CheckOperand1DTensor(op, 2, kInt, false));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyElement));
  const Type& sizes_type = op.operand(2)->type();
  int64_t count = sizes_type.dim(0) == kDynamic ? -1 : sizes_type.dim(0);
  std::optional<std::vector<int64_t>> sizes = ConstantInts(op.operand(2));
  if (sizes && static_cast<int64_t>(sizes->size()) != count) sizes.reset();
  if (count != op.operand(0)->type().rank()) sizes.reset();
  return VerifyGatherCommon(op, sizes, count);
}

Status VerifyScatter(const Operation& op) {
  int num_operands = op.num_operands();
  if (num_operands < 3 || num_operands % 2 == 0) {
    return OpError(op,
                   "expects N inputs, the scatter indices and N updates, "
                   "but got ",
                   num_operands, " operands");
  }
  int n = (num_operands - 1) / 2;
  RETURN_IF_ERROR(ExpectResults(op, n));
  RETURN_IF_ERROR(ExpectRegions(op, 1));
  for (int i = 0; i < num_operands; ++i) {
    RETURN_IF_ERROR(CheckOperandTensor(op, i, i == n ? kInt : kAnyElement));
  }
  RETURN_IF_ERROR(CheckAllResultTensors(op, kAnyElement));
  ASSIGN_OR_RETURN(Attribute attr,
                   AttrOfKind(op, "scatter_dimension_numbers",
                              AttrKind::kScatterDimensionNumbers, true));
  RETURN_IF_ERROR(OptionalBool(op, "indices_are_sorted"));
  RETURN_IF_ERROR(OptionalBool(op, "unique_indices"));
  const ScatterDimensionNumbers& dn = attr.scatter();
  const Type& input = op.operand(0)->type();
  const Type& indices = op.operand(n)->type();
  const Type& update = op.operand(n + 1)->type();
  // (C1), (C3)
  for (int i = 1; i < n; ++i) {
    if (!ShapesCompatible(op.operand(i)->type(), input)) {
      return OpError(op, "Not all inputs have compatible shapes.");
    }
    if (!ShapesCompatible(op.operand(n + 1 + i)->type(), update)) {
      return OpError(op, "Not all updates have compatible shapes.");
    }
  }
  int64_t index_vector_dim = dn.index_vector_dim;
  // (C2)
  int64_t window_size = static_cast<int64_t>(dn.update_window_dims.size() +
                                             dn.inserted_window_dims.size() +
                                             dn.input_batching_dims.size());
  if (input.rank() != window_size) {
    return OpError(op,
                   "Expects rank-of operand to match "
                   "size-of('update_window_dims') + "
                   "size-of('inserted_window_dims') + "
                   "size-of('input_batching_dims') i.e. ",
                   window_size, " but got ", input.rank(), ".");
  }
  // (C7), (C8)
  if (!IsSortedAscending(dn.update_window_dims)) {
    return OpError(op, "Expects update_window_dims to be sorted; got: [",
                   JoinInts(dn.update_window_dims), "].");
  }
  if (HasDuplicates(dn.update_window_dims)) {
    return OpError(op, "Expects update_window_dims to not repeat; got: [",
                   JoinInts(dn.update_window_dims), "].");
  }
  RETURN_IF_ERROR(CheckDimsInRange(op, dn.update_window_dims,
                                   "update_window_dims", "updates",
                                   update.rank()));
  // (C9), (C10)
  RETURN_IF_ERROR(CheckDisjoint(op, dn.inserted_window_dims,
                                "inserted_window_dims", dn.input_batching_dims,
                                "input_batching_dims"));
  if (!IsSortedAscending(dn.inserted_window_dims)) {
    return OpError(op, "Expects inserted_window_dims to be sorted; got: [",
                   JoinInts(dn.inserted_window_dims), "].");
  }
  RETURN_IF_ERROR(CheckDimsInRange(op, dn.inserted_window_dims,
                                   "inserted_window_dims", "operand",
                                   input.rank()));
  // (C21)
  if (index_vector_dim < 0 || index_vector_dim > indices.rank()) {
    return OpError(op,
                   "Expects index_vector_dim to be in range [0, "
                   "rank-of('scatter_indices')] i.e. [0, ",
                   indices.rank(), "]. got: ", index_vector_dim, ".");
  }
  // (C11)-(C17)
  if (!IsSortedAscending(dn.input_batching_dims)) {
    return OpError(op, "Expects input_batching_dims to be sorted; got: [",
                   JoinInts(dn.input_batching_dims), "].");
  }
  if (HasDuplicates(dn.scatter_indices_batching_dims)) {
    return OpError(op,
                   "Expects scatter_indices_batching_dims to not repeat; "
                   "got: [",
                   JoinInts(dn.scatter_indices_batching_dims), "].");
  }
  RETURN_IF_ERROR(CheckBatchingDims(
      op, input, indices, dn.input_batching_dims, "input_batching_dims",
      dn.scatter_indices_batching_dims, "scatter_indices_batching_dims",
      "scatter_indices", index_vector_dim));
  // (C18)
  int64_t index_size =
      index_vector_dim < indices.rank() ? indices.dim(index_vector_dim) : 1;
  int64_t num_map =
      static_cast<int64_t>(dn.scatter_dims_to_operand_dims.size());
  if (index_size != kDynamic && index_size != num_map) {
    return OpError(op, "Scatter op has ", num_map,
                   " elements in scatter_dims_to_operand_dims and the bound "
                   "of dimension index_vector_dim=",
                   index_vector_dim, " of scatter_indices is ", index_size,
                   ". These two numbers must be equal.");
  }
  // (C19), (C20)
  RETURN_IF_ERROR(CheckDisjoint(op, dn.scatter_dims_to_operand_dims,
                                "scatter_dims_to_operand_dims",
                                dn.input_batching_dims, "input_batching_dims"));
  RETURN_IF_ERROR(CheckDimsInRange(op, dn.scatter_dims_to_operand_dims,
                                   "scatter_dims_to_operand_dims", "operand",
                                   input.rank()));
  // (C4): updates = combine(update_scatter_dim_sizes, update_window_dim_sizes).
  int64_t indices_rank = indices.rank();
  int64_t expanded_rank =
      index_vector_dim == indices_rank ? indices_rank + 1 : indices_rank;
  int64_t expected_rank =
      expanded_rank - 1 + static_cast<int64_t>(dn.update_window_dims.size());
  if (update.rank() != expected_rank) {
    return OpError(op, "expects updates tensor must be of rank ", expected_rank,
                   " ( == rank-of('scatter_indices') - 1 + "
                   "size-of('update_window_dims'), where 'scatter_indices' is "
                   "expanded by a trailing 1 dimension if 'index_vector_dim' "
                   "== rank-of('scatter_indices')), but got ",
                   update.rank(), ".");
  }
  std::vector<int64_t> window_input_dims;
  for (int64_t d = 0; d < input.rank(); ++d) {
    if (!Contains(dn.inserted_window_dims, d) &&
        !Contains(dn.input_batching_dims, d)) {
      window_input_dims.push_back(d);
    }
  }
  std::vector<int64_t> scatter_indices_dims;
  for (int64_t d = 0; d < indices_rank; ++d) {
    if (d != index_vector_dim) scatter_indices_dims.push_back(d);
  }
  size_t next_window = 0;
  size_t next_scatter = 0;
  for (int64_t d = 0; d < update.rank(); ++d) {
    int64_t size = update.dim(d);
    if (Contains(dn.update_window_dims, d)) {
      if (next_window >= window_input_dims.size()) break;
      int64_t input_dim = window_input_dims[next_window++];
      int64_t bound = input.dim(input_dim);
      if (size != kDynamic && bound != kDynamic && size > bound) {
        return OpError(op,
                       "expects bounds of the window dimensions of "
                       "updates to not exceed the bounds of the "
                       "corresponding dimensions of operand. For "
                       "dimension ",
                       d, ", updates bound is ", size, ", operand bound is ",
                       bound, ".");
      }
    } else {
      if (next_scatter >= scatter_indices_dims.size()) break;
      int64_t index_dim = scatter_indices_dims[next_scatter++];
      int64_t bound = indices.dim(index_dim);
      if (!DimsCompatible(size, bound)) {
        return OpError(op,
                       "expects bounds of the scatter dimensions of "
                       "updates to be same as the bounds of the "
                       "corresponding dimensions of scatter indices. For "
                       "scatter dimension ",
                       d, ", updates bound is ", size,
                       " , scatter_indices bound is ", bound, ".");
      }
    }
  }
  // (C6), (C22): the update computation.
  ASSIGN_OR_RETURN(const Block* block, SingleBlock(op, 0));
  std::vector<Type> inputs;
  std::vector<Type> inits;
  for (int i = 0; i < n; ++i) {
    inputs.push_back(op.operand(i)->type());
    inits.push_back(Type::Tensor({}, op.operand(n + 1 + i)->type().element()));
  }
  RETURN_IF_ERROR(CheckReducerRegion(op, *block, inputs, inits, {}));
  // (C23): results have the inputs' shapes and the region's element types.
  std::vector<Type> returned = TerminatorTypes(*block);
  for (int i = 0; i < n; ++i) {
    const Type& result = op.result(i)->type();
    if (!ShapesCompatible(result, op.operand(i)->type()) ||
        (i < static_cast<int>(returned.size()) && IsTensor(returned[i]) &&
         !SameElementType(result, returned[i], false))) {
      return OpError(op, "expects result #", i, " to have the shape of input #",
                     i,
                     " and the element type of the update computation, "
                     "but got ",
                     Quoted(result));
    }
  }
  return OkStatus();
}

}  // namespace

void RegisterGatherScatterVerifiers(VerifierTable& table) {
  table[static_cast<size_t>(OpCode::kGather)] = VerifyGather;
  table[static_cast<size_t>(OpCode::kDynamicGather)] = VerifyDynamicGather;
  table[static_cast<size_t>(OpCode::kScatter)] = VerifyScatter;
}

}  // namespace kiln::ir::verifier
