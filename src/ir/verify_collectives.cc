// Collectives and communication: all_gather, all_reduce, all_to_all,
// collective_broadcast, collective_permute, collective_reduce,
// reduce_scatter, replica_id, partition_id, infeed, outfeed, send, recv,
// async_start and async_done.
#include <set>

#include "ir/verify_internal.h"

namespace kiln::ir::verifier {
namespace {

// Channel types of #stablehlo.channel_handle.
constexpr int64_t kDeviceToDevice = 1;
constexpr int64_t kDeviceToHost = 2;
constexpr int64_t kHostToDevice = 3;

// The replica_groups rules: a rank-2 tensor whose ids are unique and cover
// [0, N); -1 pads ragged groups unless all groups must have the same size.
// Mesh-axes replica groups (#stablehlo.replica_group_mesh_axes) are
// accepted as they are.
Status CheckReplicaGroups(const Operation& op, bool same_size,
                          bool use_global_device_ids,
                          std::optional<int64_t> expected_group_size,
                          bool must_cover = true) {
  Attribute attr = op.GetAttr("replica_groups");
  if (!attr) return OpError(op, "requires attribute 'replica_groups'");
  if (attr.is(AttrKind::kDialectStruct) || attr.is(AttrKind::kOpaque)) {
    return OkStatus();
  }
  ASSIGN_OR_RETURN(IntElements groups,
                   ReadIntElements(op, "replica_groups", attr));
  if (groups.shape.size() != 2) {
    return OpError(op,
                   "replica groups should be a rank 2 tensor, but got "
                   "shape {",
                   JoinInts(groups.shape), "}");
  }
  if (use_global_device_ids && groups.values.empty()) {
    return OpError(op,
                   "if `use_global_device_ids` is set, the replica "
                   "groups cannot be empty");
  }
  std::set<int64_t> seen;
  for (int64_t id : groups.values) {
    if (id == -1) {
      if (!same_size) continue;
      return OpError(op, "Invalid replica id -1");
    }
    if (!seen.insert(id).second) {
      return OpError(op, "replica id #", id, " seen more than once");
    }
  }
  for (int64_t id = 0; must_cover && id < static_cast<int64_t>(seen.size());
       ++id) {
    if (!seen.count(id)) {
      return OpError(op, "replica id #", id, " not seen in replica groups");
    }
  }
  if (same_size && expected_group_size &&
      (groups.shape[0] == 0 || groups.shape[1] != *expected_group_size)) {
    return OpError(op, "group size of replica_groups must be ",
                   *expected_group_size);
  }
  return OkStatus();
}

StatusOr<std::optional<ChannelHandle>> ReadChannelHandle(const Operation& op) {
  ASSIGN_OR_RETURN(Attribute attr, AttrOfKind(op, "channel_handle",
                                              AttrKind::kChannelHandle, false));
  if (!attr) return std::optional<ChannelHandle>();
  return std::optional<ChannelHandle>(attr.channel_handle());
}

// With use_global_device_ids, the channel id (0 when absent) must be
// positive (or, for all_gather, non-negative).
Status CheckGlobalDeviceIds(const Operation& op, bool allow_zero,
                            bool* use_global_device_ids) {
  ASSIGN_OR_RETURN(bool use_global, OptionalBool(op, "use_global_device_ids"));
  *use_global_device_ids = use_global;
  ASSIGN_OR_RETURN(std::optional<ChannelHandle> channel, ReadChannelHandle(op));
  if (!use_global) return OkStatus();
  int64_t id = channel ? channel->handle : 0;
  if (allow_zero && id < 0) {
    return OpError(op,
                   "channel_id cannot be negative when "
                   "useGlobalDeviceIds is set");
  }
  if (!allow_zero && id <= 0) {
    return OpError(op,
                   "channel_id must be positive when useGlobalDeviceIds "
                   "is set but got: ",
                   id);
  }
  return OkStatus();
}

// The reduction region of all_reduce, reduce_scatter and collective_reduce
// applies to each operand on its own: two 0-d tensors of a promotable
// element type in, one out.
Status CheckCollectiveReducer(const Operation& op,
                              const std::vector<Type>& operands) {
  RETURN_IF_ERROR(ExpectRegions(op, 1));
  ASSIGN_OR_RETURN(const Block* block, SingleBlock(op, 0));
  for (const Type& type : operands) {
    RETURN_IF_ERROR(CheckReducerRegion(op, *block, {type},
                                       {Type::Tensor({}, type.element())}, {}));
  }
  return OkStatus();
}

// Each result has its operand's (inferred) shape and the region's element
// type.
Status CheckReducedResults(const Operation& op, int num_data) {
  const Block& block = op.region(0).front();
  std::vector<Type> returned = TerminatorTypes(block);
  if (returned.empty() || !IsTensor(returned[0])) return OkStatus();
  for (int i = 0; i < num_data; ++i) {
    const Type& result = op.result(i)->type();
    Type expected = op.operand(i)->type().WithElement(returned[0].element());
    if (!TypesCompatible(result, expected)) {
      return OpError(op, "inferred type(s) ", Quoted(expected),
                     " are incompatible with return type(s) of operation ",
                     Quoted(result));
    }
  }
  return OkStatus();
}

Status VerifyAllReduce(const Operation& op) {
  RETURN_IF_ERROR(ExpectResults(op, op.num_operands()));
  RETURN_IF_ERROR(CheckAllOperandTensors(op, kAnyElement));
  RETURN_IF_ERROR(CheckAllResultTensors(op, kAnyElement));
  bool use_global = false;
  RETURN_IF_ERROR(CheckGlobalDeviceIds(op, false, &use_global));
  // (C1)-(C4)
  RETURN_IF_ERROR(CheckReplicaGroups(op, false, use_global, std::nullopt));
  std::vector<Type> operands;
  for (const Value* value : op.operands()) operands.push_back(value->type());
  // (C5)
  RETURN_IF_ERROR(CheckCollectiveReducer(op, operands));
  // (C6), (C7)
  return CheckReducedResults(op, op.num_operands());
}

// The number of data operands of a collective that may take its root as a
// last operand (`has_dynamic_root`: collective_reduce and
// collective_broadcast), after checking them, its results (one per data
// operand) and the root.
StatusOr<int> CheckDataAndDynamicRoot(const Operation& op,
                                      std::string_view name) {
  ASSIGN_OR_RETURN(bool dynamic_root, OptionalBool(op, "has_dynamic_root"));
  int num_data = op.num_operands() - (dynamic_root ? 1 : 0);
  if (dynamic_root && op.num_operands() < 2) {
    return OpError(op, name,
                   " with has_dynamic_root=true requires at least two "
                   "operands (data + root)");
  }
  if (num_data < 1) {
    return OpError(op, name, " requires at least one data operand");
  }
  RETURN_IF_ERROR(ExpectResults(op, num_data));
  for (int i = 0; i < num_data; ++i) {
    RETURN_IF_ERROR(CheckOperandTensor(op, i, kAnyElement));
  }
  RETURN_IF_ERROR(CheckAllResultTensors(op, kAnyElement));
  if (dynamic_root) {
    const Type& root = op.operand(num_data)->type();
    if (!IsTensor(root) || root.rank() != 1 ||
        !IsScalarElement(root.element(), ElementType::kI32)) {
      return OpError(op, "last operand of ", name,
                     " with has_dynamic_root=true must be a rank-1 i32 "
                     "tensor");
    }
    if (root.dim(0) != kDynamic && root.dim(0) != num_data) {
      return OpError(op, "last operand of ", name,
                     " with has_dynamic_root=true must have the same number "
                     "of elements as data operands (",
                     num_data, "), but got ", root.dim(0));
    }
  }
  return num_data;
}

Status VerifyCollectiveReduce(const Operation& op) {
  ASSIGN_OR_RETURN(int num_data,
                   CheckDataAndDynamicRoot(op, "collective_reduce"));
  bool use_global = false;
  RETURN_IF_ERROR(CheckGlobalDeviceIds(op, false, &use_global));
  RETURN_IF_ERROR(CheckReplicaGroups(op, false, use_global, std::nullopt));
  std::vector<Type> operands;
  for (int i = 0; i < num_data; ++i) operands.push_back(op.operand(i)->type());
  RETURN_IF_ERROR(CheckCollectiveReducer(op, operands));
  return CheckReducedResults(op, num_data);
}

Status VerifyReduceScatter(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  RETURN_IF_ERROR(CheckOperandTensor(op, 0, kAnyElement));
  RETURN_IF_ERROR(CheckResultTensor(op, 0, kAnyElement));
  ASSIGN_OR_RETURN(int64_t dim,
                   RequiredNonNegativeInt(op, "scatter_dimension"));
  bool use_global = false;
  RETURN_IF_ERROR(CheckGlobalDeviceIds(op, false, &use_global));
  RETURN_IF_ERROR(CheckReplicaGroups(op, true, use_global, std::nullopt));
  const Type& operand = op.operand(0)->type();
  const Type& result = op.result(0)->type();
  RETURN_IF_ERROR(CheckCollectiveReducer(op, {operand}));
  // (C8)
  if (operand.rank() != result.rank()) {
    return OpError(op, "operand and result should have same rank");
  }
  if (dim >= operand.rank()) {
    return OpError(op, "scatter dim should be less than operand/result rank");
  }
  int64_t in = operand.dim(dim);
  int64_t out = result.dim(dim);
  if (in == 0) {
    return OpError(op,
                   "operand dimension size at scatter_dimension cannot be "
                   "zero");
  }
  if (out == 0) {
    return OpError(op,
                   "result dimension size at scatter_dimension cannot be "
                   "zero");
  }
  if (in != kDynamic && out != kDynamic && in % out != 0) {
    return OpError(op, "operand scatter dimension has size ", in,
                   ", expected to be a multiple of result scatter dimension "
                   "size ",
                   out);
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (i != dim && !DimsCompatible(operand.dim(i), result.dim(i))) {
      return OpError(op, "non scatter dimensions should be same for operand (",
                     operand.dim(i), ") and result (", result.dim(i), ")");
    }
  }
  // (C9)
  std::vector<Type> returned = TerminatorTypes(op.region(0).front());
  if (!returned.empty() && IsTensor(returned[0]) &&
      returned[0].element() != result.element()) {
    return OpError(op, "result element-type is expected to be ",
                   Quoted(returned[0].element()), ", but got ",
                   Quoted(result.element()));
  }
  return OkStatus();
}

Status VerifyAllGather(const Operation& op) {
  RETURN_IF_ERROR(ExpectMinOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, op.num_operands()));
  RETURN_IF_ERROR(CheckAllOperandTensors(op, kAnyElement));
  RETURN_IF_ERROR(CheckAllResultTensors(op, kAnyElement));
  ASSIGN_OR_RETURN(int64_t dim, RequiredNonNegativeInt(op, "all_gather_dim"));
  bool use_global = false;
  RETURN_IF_ERROR(CheckGlobalDeviceIds(op, true, &use_global));
  RETURN_IF_ERROR(CheckReplicaGroups(op, true, use_global, std::nullopt));
  for (int i = 0; i < op.num_operands(); ++i) {
    const Type& operand = op.operand(i)->type();
    const Type& result = op.result(i)->type();
    // (C1)
    if (dim >= operand.rank()) {
      return OpError(op, "all_gather_dim must be a valid index of operand");
    }
    if (operand.dim(dim) == 0) {
      return OpError(op,
                     "dimension size of operand at 'all_gather_dim' "
                     "cannot be zero");
    }
    // (C6)
    if (operand.rank() != result.rank()) {
      return OpError(op, "operand and result must have the same rank");
    }
    for (int64_t d = 0; d < operand.rank(); ++d) {
      if (d != dim && !DimsCompatible(operand.dim(d), result.dim(d))) {
        return OpError(op,
                       "operand and result should have the same shape "
                       "except for the dimension size at "
                       "'all_gather_dim'");
      }
    }
    int64_t in = operand.dim(dim);
    int64_t out = result.dim(dim);
    if (in != kDynamic && out != kDynamic && out % in != 0) {
      return OpError(op, "result gather dimension has size ", out,
                     ", expected to be a multiple of operand gather dimension "
                     "size ",
                     in);
    }
    if (!ElementsCompatible(operand.element(), result.element())) {
      return OpError(op,
                     "requires the same element type for operand and "
                     "result at index ",
                     i);
    }
  }
  return OkStatus();
}

Status VerifyAllToAll(const Operation& op) {
  RETURN_IF_ERROR(ExpectMinOperands(op, 1));
  if (op.num_results() != op.num_operands()) {
    return OpError(op, "requires the same number of operands and results");
  }
  RETURN_IF_ERROR(CheckAllOperandTensors(op, kAnyElement));
  RETURN_IF_ERROR(CheckAllResultTensors(op, kAnyElement));
  ASSIGN_OR_RETURN(int64_t split_dim,
                   RequiredNonNegativeInt(op, "split_dimension"));
  ASSIGN_OR_RETURN(int64_t concat_dim,
                   RequiredNonNegativeInt(op, "concat_dimension"));
  ASSIGN_OR_RETURN(int64_t split_count, RequiredPositiveInt(op, "split_count"));
  RETURN_IF_ERROR(ReadChannelHandle(op));
  // (C5)-(C8)
  RETURN_IF_ERROR(CheckReplicaGroups(op, true, false, split_count));
  std::vector<Type> inferred;
  for (int i = 0; i < op.num_operands(); ++i) {
    const Type& operand = op.operand(i)->type();
    const Type& result = op.result(i)->type();
    if (operand.element() != result.element()) {
      return OpError(op,
                     "requires the same element type for operand and "
                     "result at index ",
                     i);
    }
    // (C1), (C3)
    if (split_dim >= operand.rank()) {
      return OpError(op, "AllToAll split_dimension ", split_dim,
                     " is out-of-bounds for input rank ", operand.rank());
    }
    if (concat_dim >= operand.rank()) {
      return OpError(op, "AllToAll concat_dimension ", concat_dim,
                     " is out-of-bounds for input rank ", operand.rank());
    }
    // (C2), (C9)
    std::vector<int64_t> shape = operand.shape();
    if (shape[split_dim] != kDynamic) {
      if (shape[split_dim] % split_count != 0) {
        return OpError(op, "split dimension has size ", shape[split_dim],
                       ", expected to be a multiple of split_count ",
                       split_count);
      }
      shape[split_dim] /= split_count;
    }
    if (shape[concat_dim] != kDynamic) {
      __int128 size = static_cast<__int128>(shape[concat_dim]) * split_count;
      shape[concat_dim] =
          size > INT64_MAX ? kDynamic : static_cast<int64_t>(size);
    }
    inferred.push_back(MakeTensor(shape, operand.element()));
  }
  return CheckInferredResults(op, inferred);
}

Status VerifyCollectiveBroadcast(const Operation& op) {
  ASSIGN_OR_RETURN(int num_data,
                   CheckDataAndDynamicRoot(op, "collective_broadcast"));
  RETURN_IF_ERROR(ReadChannelHandle(op));
  // Processes outside every group receive zeros, so the groups need not
  // cover all ids.
  RETURN_IF_ERROR(CheckReplicaGroups(op, true, false, std::nullopt,
                                     /*must_cover=*/false));
  std::vector<Type> inferred;
  for (int i = 0; i < num_data; ++i) inferred.push_back(op.operand(i)->type());
  return CheckInferredResults(op, inferred);
}

// source_target_pairs of collective_permute (and send/recv): an (N, 2)
// tensor of non-negative ids with unique sources and unique targets.
Status CheckSourceTargetPairs(const Operation& op, bool required) {
  Attribute attr = op.GetAttr("source_target_pairs");
  if (!attr) {
    if (required)
      return OpError(op, "requires attribute 'source_target_pairs'");
    return OkStatus();
  }
  ASSIGN_OR_RETURN(IntElements pairs,
                   ReadIntElements(op, "source_target_pairs", attr));
  if (pairs.shape.size() != 2) {
    return OpError(op,
                   "expect source_target_pairs attribute to be of rank 2, "
                   "but got rank ",
                   pairs.shape.size());
  }
  if (pairs.shape[1] != 2) {
    return OpError(op,
                   "expect source_target_pairs attribute of shape (N, 2), "
                   "but got (",
                   JoinInts(pairs.shape), ")");
  }
  std::set<int64_t> sources;
  std::set<int64_t> targets;
  for (size_t i = 0; i + 1 < pairs.values.size(); i += 2) {
    int64_t source = pairs.values[i];
    int64_t target = pairs.values[i + 1];
    if (source < 0 || target < 0) {
      return OpError(op, "replica ids in source_target_pairs must be >= 0");
    }
    if (!sources.insert(source).second) {
      return OpError(op, "duplicate sources not allowed");
    }
    if (!targets.insert(target).second) {
      return OpError(op, "duplicate targets not allowed");
    }
  }
  return OkStatus();
}

Status VerifyCollectivePermute(const Operation& op) {
  RETURN_IF_ERROR(ExpectMinOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, op.num_operands()));
  RETURN_IF_ERROR(CheckAllOperandTensors(op, kAnyElement));
  RETURN_IF_ERROR(CheckAllResultTensors(op, kAnyElement));
  RETURN_IF_ERROR(ReadChannelHandle(op));
  RETURN_IF_ERROR(CheckSourceTargetPairs(op, true));
  std::vector<Type> inferred;
  for (const Value* value : op.operands()) inferred.push_back(value->type());
  return CheckInferredResults(op, inferred);
}

Status VerifyReplicaOrPartitionId(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 0));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  const Type& result = op.result(0)->type();
  if (!IsTensor(result) || result.rank() != 0 ||
      !IsScalarElement(result.element(), ElementType::kUI32)) {
    return OpError(op,
                   "result #0 must be 0D tensor of 32-bit unsigned "
                   "integer values, but got ",
                   Quoted(result));
  }
  return OkStatus();
}

// The results of infeed and recv: tensors (or tuples) followed by a token.
Status CheckValuesThenToken(const Operation& op,
                            std::string_view all_but_last) {
  if (op.num_results() < 1) {
    return OpError(op, "result is expected to be at least of size 1, but got ",
                   op.num_results());
  }
  for (int i = 0; i + 1 < op.num_results(); ++i) {
    const Type& type = op.result(i)->type();
    if (!IsTensor(type) && !type.IsTuple()) {
      return OpError(op, all_but_last, ", but got ", Quoted(type));
    }
  }
  const Type& last = op.result(op.num_results() - 1)->type();
  if (!last.IsToken()) {
    return OpError(op,
                   "last element of result types is expected to be of "
                   "token type, but got ",
                   Quoted(last));
  }
  return OkStatus();
}

Status VerifyInfeed(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 1));
  RETURN_IF_ERROR(CheckOperandToken(op, 0));
  RETURN_IF_ERROR(AttrOfKind(op, "infeed_config", AttrKind::kString, false));
  RETURN_IF_ERROR(CheckValuesThenToken(
      op,
      "all elements of result types, except the last element, are "
      "expected to be of tensor type"));
  Attribute layout = op.GetAttr("layout");
  if (!layout) return OkStatus();
  if (!layout.is(AttrKind::kArray)) {
    return OpError(op, "layout-attribute expected to be an array, but got ",
                   layout.ToString());
  }
  size_t expected = static_cast<size_t>(op.num_results() - 1);
  if (layout.array().size() != expected) {
    return OpError(op, "layout-attribute size must be ", expected,
                   " (which is the number of op-results - 1 (for token "
                   "result)), but got ",
                   layout.array().size());
  }
  for (const Attribute& element : layout.array()) {
    if (!element.is(AttrKind::kArray)) {
      return OpError(op,
                     "layout-attribute expected to have elements of type "
                     "array, but got ",
                     element.ToString());
    }
    for (const Attribute& leaf : element.array()) {
      if (!leaf.is(AttrKind::kInteger)) {
        return OpError(op,
                       "layout-attribute's leaf elements are expected to "
                       "be of type integer, but got ",
                       leaf.ToString());
      }
    }
  }
  return OkStatus();
}

Status VerifyOutfeed(const Operation& op) {
  RETURN_IF_ERROR(ExpectMinOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  for (int i = 0; i + 1 < op.num_operands(); ++i) {
    const Type& type = op.operand(i)->type();
    if (!IsTensorOf(type, kAnyOrPerAxis) && !type.IsTuple()) {
      return OpError(op, "operand #", i, " must be a tensor, but got ",
                     Quoted(type));
    }
  }
  RETURN_IF_ERROR(CheckOperandToken(op, op.num_operands() - 1));
  RETURN_IF_ERROR(AttrOfKind(op, "outfeed_config", AttrKind::kString, false));
  return CheckResultToken(op, 0);
}

// send_c1 / recv_c1: the channel type follows is_host_transfer.
Status CheckChannelType(const Operation& op, int64_t host_type,
                        const char* host_name) {
  ASSIGN_OR_RETURN(std::optional<ChannelHandle> channel, ReadChannelHandle(op));
  ASSIGN_OR_RETURN(bool host, OptionalBool(op, "is_host_transfer"));
  if (!channel) return OkStatus();
  if (host && channel->type != host_type) {
    return OpError(op, "channel_type should be ", host_name,
                   " when is_host_transfer is true");
  }
  if (!host && channel->type != kDeviceToDevice) {
    return OpError(op,
                   "channel_type should be DEVICE_TO_DEVICE when "
                   "is_host_transfer is false");
  }
  return OkStatus();
}

Status VerifySend(const Operation& op) {
  RETURN_IF_ERROR(ExpectMinOperands(op, 1));
  RETURN_IF_ERROR(ExpectResults(op, 1));
  for (int i = 0; i + 1 < op.num_operands(); ++i) {
    const Type& type = op.operand(i)->type();
    if (!IsTensorOf(type, kAnyOrPerAxis) && !type.IsTuple()) {
      return OpError(op, "operand #", i, " must be a tensor, but got ",
                     Quoted(type));
    }
  }
  RETURN_IF_ERROR(CheckOperandToken(op, op.num_operands() - 1));
  RETURN_IF_ERROR(CheckResultToken(op, 0));
  RETURN_IF_ERROR(CheckSourceTargetPairs(op, false));
  return CheckChannelType(op, kDeviceToHost, "DEVICE_TO_HOST");
}

Status VerifyRecv(const Operation& op) {
  RETURN_IF_ERROR(ExpectOperands(op, 1));
  RETURN_IF_ERROR(CheckOperandToken(op, 0));
  RETURN_IF_ERROR(CheckChannelType(op, kHostToDevice, "HOST_TO_DEVICE"));
  RETURN_IF_ERROR(CheckSourceTargetPairs(op, false));
  return CheckValuesThenToken(op,
                              "everything but the last element of result "
                              "types is expected to be of tensor type");
}

// async_start / async_done wrap other computations; their futures are
// checked no further than being well-typed values.
Status VerifyAsync(const Operation& op) { return OkStatus(); }

}  // namespace

void RegisterCollectiveVerifiers(VerifierTable& table) {
  table[static_cast<size_t>(OpCode::kAllReduce)] = VerifyAllReduce;
  table[static_cast<size_t>(OpCode::kCollectiveReduce)] =
      VerifyCollectiveReduce;
  table[static_cast<size_t>(OpCode::kReduceScatter)] = VerifyReduceScatter;
  table[static_cast<size_t>(OpCode::kAllGather)] = VerifyAllGather;
  table[static_cast<size_t>(OpCode::kAllToAll)] = VerifyAllToAll;
  table[static_cast<size_t>(OpCode::kCollectiveBroadcast)] =
      VerifyCollectiveBroadcast;
  table[static_cast<size_t>(OpCode::kCollectivePermute)] =
      VerifyCollectivePermute;
  table[static_cast<size_t>(OpCode::kReplicaId)] = VerifyReplicaOrPartitionId;
  table[static_cast<size_t>(OpCode::kPartitionId)] = VerifyReplicaOrPartitionId;
  table[static_cast<size_t>(OpCode::kInfeed)] = VerifyInfeed;
  table[static_cast<size_t>(OpCode::kOutfeed)] = VerifyOutfeed;
  table[static_cast<size_t>(OpCode::kSend)] = VerifySend;
  table[static_cast<size_t>(OpCode::kRecv)] = VerifyRecv;
  table[static_cast<size_t>(OpCode::kAsyncStart)] = VerifyAsync;
  table[static_cast<size_t>(OpCode::kAsyncDone)] = VerifyAsync;
}

}  // namespace kiln::ir::verifier
