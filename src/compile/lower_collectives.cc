// Lowering of the collectives: all_reduce, collective_reduce, all_gather,
// reduce_scatter, all_to_all, collective_permute and collective_broadcast;
// and of send and recv, whose channels run through the same communicator.
//
// The process groups are resolved here, over flattened participant ids
// (replica_id * num_partitions + partition_id), following the StableHLO
// spec's modes (spec: "Parallel execution"): without a channel (or channel
// 0) `cross_replica`; with one, `cross_replica_and_partition`, or
// `flattened_ids` under use_global_device_ids; all_to_all,
// collective_permute and collective_broadcast use `cross_partition` with a
// channel. The table of every participant's group goes into the step, so
// one plan serves every position. Programs of one participant keep the
// identity lowering (a copy).
#include <algorithm>
#include <set>

#include "compile/lower_families.h"
#include "exec/kernels/collectives.h"

namespace kiln::compile {
namespace {

using ir::OpCode;

enum class GroupMode {
  kCrossReplica,
  kCrossPartition,
  kCrossReplicaAndPartition,
  kFlattenedIds,
};

// What the ids of replica_groups (or source_target_pairs) count.
std::string_view IdKind(GroupMode mode) {
  switch (mode) {
    case GroupMode::kCrossReplica:
    case GroupMode::kCrossReplicaAndPartition:
      return "replica";
    case GroupMode::kCrossPartition:
      return "partition";
    case GroupMode::kFlattenedIds:
      return "flattened device";
  }
  return "";
}

int64_t ChannelId(const ir::Operation& op) {
  ir::Attribute channel = op.GetAttr("channel_handle");
  if (!channel.is(ir::AttrKind::kChannelHandle)) return 0;
  return channel.channel_handle().handle;
}

// The mode of all_reduce, all_gather, reduce_scatter and collective_reduce.
GroupMode ReplicaGroupMode(const ir::Operation& op) {
  if (ChannelId(op) <= 0) return GroupMode::kCrossReplica;
  return BoolAttr(op, "use_global_device_ids")
             ? GroupMode::kFlattenedIds
             : GroupMode::kCrossReplicaAndPartition;
}

// The mode of all_to_all, collective_permute and collective_broadcast.
GroupMode PartitionGroupMode(const ir::Operation& op) {
  return ChannelId(op) > 0 ? GroupMode::kCrossPartition
                           : GroupMode::kCrossReplica;
}

// replica_groups as lists of ids (-1 pads ragged rows); empty when absent
// or empty, which means one group of every id.
StatusOr<std::vector<std::vector<int64_t>>> ReadReplicaGroups(
    const ir::Operation& op) {
  std::vector<std::vector<int64_t>> groups;
  ir::Attribute attr = op.GetAttr("replica_groups");
  if (!attr) return groups;
  std::optional<std::vector<int64_t>> values = attr.AsIntVector();
  if (!attr.is(ir::AttrKind::kDenseElements) || !values ||
      attr.type().rank() != 2) {
    return UnimplementedError(op.Describe(), ": replica_groups ",
                              attr.ToString(),
                              " (Kiln reads a 2-D tensor of ids)");
  }
  const int64_t rows = attr.type().dim(0), columns = attr.type().dim(1);
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int64_t> group;
    for (int64_t c = 0; c < columns; ++c) {
      int64_t id = (*values)[r * columns + c];
      if (id != -1) group.push_back(id);
    }
    groups.push_back(std::move(group));
  }
  if (groups.size() == 1 && groups[0].empty()) groups.clear();
  return groups;
}

// How many ids of `mode` there are.
int64_t IdCount(const ProcessPosition& position, GroupMode mode) {
  switch (mode) {
    case GroupMode::kCrossReplica:
    case GroupMode::kCrossReplicaAndPartition:
      return position.num_replicas;
    case GroupMode::kCrossPartition:
      return position.num_partitions;
    case GroupMode::kFlattenedIds:
      return int64_t{position.num_replicas} * position.num_partitions;
  }
  return 0;
}

struct GroupRules {
  bool equal_sizes = true;
  // Every participant must be in a group.
  bool cover = true;
};

// The process groups of `op` over flattened ids, checked: ids in range and
// unique, and (per `rules`) groups of one size that cover every
// participant.
StatusOr<exec::CollectiveGroups> ResolveGroups(
    const ir::Operation& op, const ProcessPosition& position, GroupMode mode,
    std::vector<std::vector<int64_t>> ids, GroupRules rules) {
  const int replicas = position.num_replicas;
  const int partitions = position.num_partitions;
  const int participants = replicas * partitions;
  const int64_t count = IdCount(position, mode);
  if (ids.empty()) {
    std::vector<int64_t> all(count);
    for (int64_t i = 0; i < count; ++i) all[i] = i;
    ids.push_back(std::move(all));
  }
  std::set<int64_t> seen;
  for (const std::vector<int64_t>& group : ids) {
    for (int64_t id : group) {
      if (id < 0 || id >= count) {
        return InvalidArgumentError(
            op.Describe(), ": ", IdKind(mode), " id ", id,
            " in replica_groups is out of range [0, ", count, ") (", replicas,
            " replicas x ", partitions, " partitions)");
      }
      if (!seen.insert(id).second) {
        return InvalidArgumentError(op.Describe(), ": ", IdKind(mode), " id ",
                                    id, " appears twice in replica_groups");
      }
    }
    if (rules.equal_sizes && group.size() != ids[0].size()) {
      return InvalidArgumentError(
          op.Describe(), ": replica_groups have groups of unequal sizes (",
          ids[0].size(), " and ", group.size(), ")");
    }
  }
  if (rules.cover && static_cast<int64_t>(seen.size()) != count) {
    for (int64_t id = 0; id < count; ++id) {
      if (seen.count(id) == 0) {
        return InvalidArgumentError(op.Describe(), ": ", IdKind(mode), " id ",
                                    id, " is in no group of replica_groups");
      }
    }
  }
  auto flat = [&](int64_t replica, int64_t partition) {
    return static_cast<int>(replica * partitions + partition);
  };
  std::vector<std::vector<int>> groups;
  switch (mode) {
    case GroupMode::kCrossReplica:
      for (int p = 0; p < partitions; ++p) {
        for (const auto& group : ids) {
          std::vector<int>& out = groups.emplace_back();
          for (int64_t r : group) out.push_back(flat(r, p));
        }
      }
      break;
    case GroupMode::kCrossPartition:
      for (int r = 0; r < replicas; ++r) {
        for (const auto& group : ids) {
          std::vector<int>& out = groups.emplace_back();
          for (int64_t p : group) out.push_back(flat(r, p));
        }
      }
      break;
    case GroupMode::kCrossReplicaAndPartition:
      for (const auto& group : ids) {
        std::vector<int>& out = groups.emplace_back();
        for (int p = 0; p < partitions; ++p) {
          for (int64_t r : group) out.push_back(flat(r, p));
        }
      }
      break;
    case GroupMode::kFlattenedIds:
      for (const auto& group : ids) {
        std::vector<int>& out = groups.emplace_back();
        for (int64_t id : group) out.push_back(static_cast<int>(id));
      }
      break;
  }
  return exec::CollectiveGroups::Make(std::move(groups), participants);
}

int Participants(const Lowering& lowering) {
  return lowering.position().num_replicas * lowering.position().num_partitions;
}

exec::CollectiveParams NewParams(Lowering& lowering,
                                 exec::CollectiveGroups groups) {
  exec::CollectiveParams params;
  params.step_id = lowering.NewCollectiveId();
  params.groups = std::move(groups);
  return params;
}

// Every result bound to a copy of its operand: a collective whose groups
// all have one member.
Status LowerAsCopies(Lowering& lowering, const ir::Operation& op) {
  for (int i = 0; i < op.num_results(); ++i) {
    ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, i));
    ASSIGN_OR_RETURN(SlotId out,
                     lowering.NewResult(op, i, lowering.shape(operand).dims));
    lowering.EmitCopy(op, operand, out);
  }
  return OkStatus();
}

StatusOr<std::vector<SlotId>> Operands(Lowering& lowering,
                                       const ir::Operation& op) {
  std::vector<SlotId> slots;
  for (int i = 0; i < op.num_operands(); ++i) {
    ASSIGN_OR_RETURN(SlotId slot, lowering.Operand(op, i));
    if (lowering.slot(slot).is_token) {
      return InvalidArgumentError(op.Describe(), ": operand ", i,
                                  " is a token");
    }
    slots.push_back(slot);
  }
  if (slots.empty() || static_cast<int>(slots.size()) != op.num_results()) {
    return InvalidArgumentError(op.Describe(),
                                ": expected one result per "
                                "operand");
  }
  return slots;
}

// The reduction region: a fast combiner when the kernels know it for
// `type`, else the lowered region (called per element).
StatusOr<std::unique_ptr<exec::Region>> LowerReducer(Lowering& lowering,
                                                     const ir::Operation& op,
                                                     ElementType type,
                                                     exec::Combiner& combiner) {
  if (op.num_regions() != 1) {
    return InvalidArgumentError(op.Describe(), ": expected one region");
  }
  combiner = MatchCombiner(op.region(0));
  if (exec::HasFastCombiner(combiner, type)) {
    return std::unique_ptr<exec::Region>();
  }
  // The region runs between devices of this process; `combiner` still
  // names what it computes, for a reduction between processes (bf16 and
  // f16 sums cross as f32).
  return LowerScalarRegion(lowering, op.region(0), {type, type});
}

// all_reduce and collective_reduce (variadic: one step per operand, each
// reduced on its own).
Status LowerAllReduce(Lowering& lowering, const ir::Operation& op) {
  const bool root_only = op.is(OpCode::kCollectiveReduce);
  ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> ids,
                   ReadReplicaGroups(op));
  // Groups may differ in size (spec example: ragged replica groups).
  ASSIGN_OR_RETURN(
      exec::CollectiveGroups groups,
      ResolveGroups(op, lowering.position(), ReplicaGroupMode(op),
                    std::move(ids), GroupRules{/*equal_sizes=*/false}));
  ASSIGN_OR_RETURN(std::vector<SlotId> operands, Operands(lowering, op));
  if (groups.LargestGroup() <= 1) return LowerAsCopies(lowering, op);
  for (size_t i = 0; i < operands.size(); ++i) {
    ArrayShape shape = lowering.shape(operands[i]);
    ASSIGN_OR_RETURN(ArrayShape result,
                     lowering.ResultShape(op, static_cast<int>(i), shape.dims));
    if (result.type != shape.type) {
      return UnimplementedError(op.Describe(), ": result element type ",
                                ir::ElementTypeName(result.type),
                                " differs from the operand's ",
                                ir::ElementTypeName(shape.type));
    }
    exec::Combiner combiner;
    ASSIGN_OR_RETURN(std::unique_ptr<exec::Region> body,
                     LowerReducer(lowering, op, shape.type, combiner));
    exec::CollectiveParams params = NewParams(lowering, groups);
    params.operands = {shape};
    params.results = {shape};
    ASSIGN_OR_RETURN(SlotId out,
                     lowering.NewResult(op, static_cast<int>(i), shape.dims));
    lowering.Emit(op,
                  exec::MakeAllReduceKernel(std::move(params), combiner,
                                            std::move(body), root_only),
                  {operands[i]}, {out}, /*foldable=*/false);
  }
  return OkStatus();
}

StatusOr<int64_t> DimensionAttr(const ir::Operation& op, std::string_view name,
                                const ArrayShape& shape) {
  ASSIGN_OR_RETURN(int64_t dimension, IntAttr(op, name));
  if (dimension < 0 || dimension >= shape.rank()) {
    return InvalidArgumentError(op.Describe(), ": ", name, " ", dimension,
                                " is out of range for ", shape.ToString());
  }
  return dimension;
}

Status LowerAllGather(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> ids,
                   ReadReplicaGroups(op));
  ASSIGN_OR_RETURN(exec::CollectiveGroups groups,
                   ResolveGroups(op, lowering.position(), ReplicaGroupMode(op),
                                 std::move(ids), GroupRules{}));
  ASSIGN_OR_RETURN(std::vector<SlotId> operands, Operands(lowering, op));
  const int64_t size = groups.LargestGroup();
  if (size <= 1) return LowerAsCopies(lowering, op);
  exec::CollectiveParams params = NewParams(lowering, std::move(groups));
  std::vector<SlotId> outputs;
  for (size_t i = 0; i < operands.size(); ++i) {
    ArrayShape shape = lowering.shape(operands[i]);
    ASSIGN_OR_RETURN(params.dimension,
                     DimensionAttr(op, "all_gather_dim", shape));
    std::vector<int64_t> dims = shape.dims;
    dims[params.dimension] *= size;
    ASSIGN_OR_RETURN(SlotId out,
                     lowering.NewResult(op, static_cast<int>(i), dims));
    params.operands.push_back(shape);
    params.results.push_back(lowering.shape(out));
    outputs.push_back(out);
  }
  lowering.Emit(op, exec::MakeAllGatherKernel(std::move(params)),
                std::move(operands), std::move(outputs), /*foldable=*/false);
  return OkStatus();
}

Status LowerReduceScatter(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> ids,
                   ReadReplicaGroups(op));
  ASSIGN_OR_RETURN(exec::CollectiveGroups groups,
                   ResolveGroups(op, lowering.position(), ReplicaGroupMode(op),
                                 std::move(ids), GroupRules{}));
  ASSIGN_OR_RETURN(std::vector<SlotId> operands, Operands(lowering, op));
  const int64_t size = groups.LargestGroup();
  if (size <= 1) return LowerAsCopies(lowering, op);
  for (size_t i = 0; i < operands.size(); ++i) {
    ArrayShape shape = lowering.shape(operands[i]);
    exec::CollectiveParams params = NewParams(lowering, groups);
    ASSIGN_OR_RETURN(params.dimension,
                     DimensionAttr(op, "scatter_dimension", shape));
    if (shape.dims[params.dimension] % size != 0) {
      return InvalidArgumentError(op.Describe(), ": dimension ",
                                  params.dimension, " of ", shape.ToString(),
                                  " does not split into ", size, " parts");
    }
    std::vector<int64_t> dims = shape.dims;
    dims[params.dimension] /= size;
    ASSIGN_OR_RETURN(SlotId out,
                     lowering.NewResult(op, static_cast<int>(i), dims));
    if (lowering.shape(out).type != shape.type) {
      return UnimplementedError(op.Describe(), ": result element type ",
                                ir::ElementTypeName(lowering.shape(out).type),
                                " differs from the operand's ",
                                ir::ElementTypeName(shape.type));
    }
    exec::Combiner combiner;
    ASSIGN_OR_RETURN(std::unique_ptr<exec::Region> body,
                     LowerReducer(lowering, op, shape.type, combiner));
    params.operands = {shape};
    params.results = {lowering.shape(out)};
    lowering.Emit(op,
                  exec::MakeReduceScatterKernel(std::move(params), combiner,
                                                std::move(body)),
                  {operands[i]}, {out}, /*foldable=*/false);
  }
  return OkStatus();
}

Status LowerAllToAll(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> ids,
                   ReadReplicaGroups(op));
  ASSIGN_OR_RETURN(
      exec::CollectiveGroups groups,
      ResolveGroups(op, lowering.position(), PartitionGroupMode(op),
                    std::move(ids), GroupRules{}));
  ASSIGN_OR_RETURN(std::vector<SlotId> operands, Operands(lowering, op));
  const int64_t size = groups.LargestGroup();
  ASSIGN_OR_RETURN(int64_t split_count, IntAttr(op, "split_count"));
  if (split_count != size) {
    return InvalidArgumentError(op.Describe(), ": split_count ", split_count,
                                " differs from the group size ", size);
  }
  exec::CollectiveParams params = NewParams(lowering, std::move(groups));
  params.split_count = split_count;
  std::vector<SlotId> outputs;
  for (size_t i = 0; i < operands.size(); ++i) {
    ArrayShape shape = lowering.shape(operands[i]);
    ASSIGN_OR_RETURN(params.split_dimension,
                     DimensionAttr(op, "split_dimension", shape));
    ASSIGN_OR_RETURN(params.concat_dimension,
                     DimensionAttr(op, "concat_dimension", shape));
    if (shape.dims[params.split_dimension] % split_count != 0) {
      return InvalidArgumentError(
          op.Describe(), ": dimension ", params.split_dimension, " of ",
          shape.ToString(), " does not split into ", split_count, " parts");
    }
    std::vector<int64_t> dims = shape.dims;
    dims[params.split_dimension] /= split_count;
    dims[params.concat_dimension] *= split_count;
    ASSIGN_OR_RETURN(SlotId out,
                     lowering.NewResult(op, static_cast<int>(i), dims));
    params.operands.push_back(shape);
    params.results.push_back(lowering.shape(out));
    outputs.push_back(out);
  }
  if (size <= 1) {
    for (size_t i = 0; i < operands.size(); ++i) {
      lowering.EmitCopy(op, operands[i], outputs[i]);
    }
    return OkStatus();
  }
  lowering.Emit(op, exec::MakeAllToAllKernel(std::move(params)),
                std::move(operands), std::move(outputs), /*foldable=*/false);
  return OkStatus();
}

// One participant: the operand itself (a member of its own group) or
// zeros (in none).
Status LowerAlone(Lowering& lowering, const ir::Operation& op, bool member) {
  ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, 0));
  ArrayShape shape = lowering.shape(operand);
  if (member) {
    ASSIGN_OR_RETURN(SlotId out, lowering.NewResult(op, 0, shape.dims));
    lowering.EmitCopy(op, operand, out);
    return OkStatus();
  }
  ASSIGN_OR_RETURN(
      SlotId zeros,
      lowering.NewConstant(shape, std::string(shape.byte_size(), '\0')));
  lowering.Bind(op.result(0), zeros);
  return OkStatus();
}

Status LowerCollectivePermute(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(std::vector<int64_t> pairs,
                   IntsAttr(op, "source_target_pairs", std::vector<int64_t>{}));
  const GroupMode mode = PartitionGroupMode(op);
  const ProcessPosition& position = lowering.position();
  const int64_t count = IdCount(position, mode);
  std::vector<int64_t> source_of(count, -1);
  std::set<int64_t> sources;
  for (size_t i = 0; i + 1 < pairs.size(); i += 2) {
    const int64_t source = pairs[i], target = pairs[i + 1];
    for (int64_t id : {source, target}) {
      if (id < 0 || id >= count) {
        return InvalidArgumentError(
            op.Describe(), ": ", IdKind(mode), " id ", id,
            " in source_target_pairs is out of range [0, ", count, ")");
      }
    }
    if (!sources.insert(source).second || source_of[target] >= 0) {
      return InvalidArgumentError(op.Describe(), ": ", IdKind(mode), " id ",
                                  source_of[target] >= 0 ? target : source,
                                  " appears twice as a ",
                                  source_of[target] >= 0 ? "target" : "source",
                                  " in source_target_pairs");
    }
    source_of[target] = source;
  }
  if (Participants(lowering) == 1) {
    return LowerAlone(lowering, op, /*member=*/source_of[0] == 0);
  }
  // Each replica (or partition) line exchanges within itself: its members
  // meet as one group.
  ASSIGN_OR_RETURN(exec::CollectiveGroups groups,
                   ResolveGroups(op, position, mode, {}, GroupRules{}));
  exec::CollectiveParams params = NewParams(lowering, std::move(groups));
  params.sources.assign(Participants(lowering), -1);
  const int partitions = position.num_partitions;
  for (int participant = 0; participant < Participants(lowering);
       ++participant) {
    const int replica = participant / partitions;
    const int partition = participant % partitions;
    const bool by_replica = mode == GroupMode::kCrossReplica;
    const int64_t source = source_of[by_replica ? replica : partition];
    if (source < 0) continue;
    params.sources[participant] =
        by_replica ? static_cast<int>(source) * partitions + partition
                   : replica * partitions + static_cast<int>(source);
  }
  ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, 0));
  ArrayShape shape = lowering.shape(operand);
  ASSIGN_OR_RETURN(SlotId out, lowering.NewResult(op, 0, shape.dims));
  params.operands = {shape};
  params.results = {shape};
  lowering.Emit(op, exec::MakeCollectivePermuteKernel(std::move(params)),
                {operand}, {out}, /*foldable=*/false);
  return OkStatus();
}

// XLA's `_xla_send_recv_source_target_pairs` frontend attribute ("{{0,1},
// {1,2}}") as a flat list of ids, source then target; nullopt when the op
// has none.
StatusOr<std::optional<std::vector<int64_t>>> SendRecvPairs(
    const ir::Operation& op) {
  ir::Attribute frontend = op.GetAttr("mhlo.frontend_attributes");
  ir::Attribute pairs = frontend.is(ir::AttrKind::kDictionary)
                            ? frontend.Get("_xla_send_recv_source_target_pairs")
                            : ir::Attribute();
  if (!pairs) return std::optional<std::vector<int64_t>>();
  if (!pairs.is(ir::AttrKind::kString)) {
    return InvalidArgumentError(
        op.Describe(), ": _xla_send_recv_source_target_pairs must be a string");
  }
  std::vector<int64_t> ids;
  const std::string& text = pairs.string_value();
  for (size_t i = 0; i < text.size();) {
    if (text[i] < '0' || text[i] > '9') {
      if (text.find_first_of("{},= ", i) != i) {
        return InvalidArgumentError(
            op.Describe(),
            ": cannot read _xla_send_recv_source_target_pairs \"", text, "\"");
      }
      ++i;
      continue;
    }
    size_t end = text.find_first_not_of("0123456789", i);
    if (end == std::string::npos) end = text.size();
    std::optional<int64_t> id = ParseInt64(text.substr(i, end - i));
    if (!id) {
      return InvalidArgumentError(op.Describe(), ": id \"",
                                  text.substr(i, end - i), "\" is too large");
    }
    ids.push_back(*id);
    i = end;
  }
  if (ids.size() % 2 != 0) {
    return InvalidArgumentError(op.Describe(),
                                ": _xla_send_recv_source_target_pairs \"", text,
                                "\" has an id without its pair");
  }
  return std::optional<std::vector<int64_t>>(std::move(ids));
}

// What stablehlo.send and stablehlo.recv share: the channel and who talks
// to whom. With source-target pairs, ids are replica ids without a
// channel and partition ids with one (as for collective_permute), and a
// target has one source; without them, every message of the channel goes
// to whoever receives first, in order (the StableHLO interpreter's
// channels). Host transfers (is_host_transfer) pass between participants
// only where the compile options ask for it.
StatusOr<exec::ChannelParams> ResolveChannel(Lowering& lowering,
                                             const ir::Operation& op) {
  const bool host = BoolAttr(op, "is_host_transfer");
  if (host && !lowering.host_transfers_between_participants()) {
    return UnimplementedError(
        op.Describe(), ": ", op.name(),
        " with is_host_transfer needs the host's send and recv callbacks, "
        "which Kiln does not provide");
  }
  exec::ChannelParams params;
  params.channel = ChannelId(op);
  params.host_transfer = host;
  const int participants = Participants(lowering);
  params.targets.assign(participants, {});
  params.sources.assign(participants, -1);
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> pairs,
                   SendRecvPairs(op));
  if (!pairs) {
    params.any_receiver = true;
    return params;
  }
  const GroupMode mode = PartitionGroupMode(op);
  const ProcessPosition& position = lowering.position();
  const int64_t count = IdCount(position, mode);
  std::vector<int64_t> source_of(count, -1);
  for (size_t i = 0; i + 1 < pairs->size(); i += 2) {
    const int64_t source = (*pairs)[i], target = (*pairs)[i + 1];
    for (int64_t id : {source, target}) {
      if (id < 0 || id >= count) {
        return InvalidArgumentError(op.Describe(), ": ", IdKind(mode), " id ",
                                    id,
                                    " in _xla_send_recv_source_target_pairs "
                                    "is out of range [0, ",
                                    count, ")");
      }
    }
    if (source_of[target] >= 0) {
      return InvalidArgumentError(
          op.Describe(), ": ", IdKind(mode), " id ", target,
          " appears twice as a target in _xla_send_recv_source_target_pairs");
    }
    source_of[target] = source;
  }
  const int partitions = position.num_partitions;
  const bool by_replica = mode == GroupMode::kCrossReplica;
  for (int participant = 0; participant < participants; ++participant) {
    const int replica = participant / partitions;
    const int partition = participant % partitions;
    const int64_t source = source_of[by_replica ? replica : partition];
    if (source < 0) continue;
    const int from = by_replica
                         ? static_cast<int>(source) * partitions + partition
                         : replica * partitions + static_cast<int>(source);
    params.sources[participant] = from;
    params.targets[from].push_back(participant);
  }
  return params;
}

// stablehlo.send: tensors, then a token; the result is a token.
Status LowerSend(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(exec::ChannelParams params, ResolveChannel(lowering, op));
  std::vector<SlotId> inputs;
  for (int i = 0; i < op.num_operands(); ++i) {
    ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, i));
    if (lowering.slot(operand).is_token) {
      if (i + 1 != op.num_operands()) {
        return InvalidArgumentError(op.Describe(),
                                    ": the token must be the last operand");
      }
    } else {
      params.shapes.push_back(lowering.shape(operand));
    }
    inputs.push_back(operand);
  }
  std::vector<SlotId> outputs;
  for (int i = 0; i < op.num_results(); ++i) {
    if (!op.result(i)->type().is(ir::TypeKind::kToken)) {
      return InvalidArgumentError(op.Describe(), ": result ", i,
                                  " must be a token");
    }
    SlotId token = lowering.NewToken();
    lowering.Bind(op.result(i), token);
    outputs.push_back(token);
  }
  lowering.Emit(op, exec::MakeSendKernel(std::move(params)), std::move(inputs),
                std::move(outputs), /*foldable=*/false);
  return OkStatus();
}

// stablehlo.recv: a token; the results are tensors, then a token.
Status LowerRecv(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(exec::ChannelParams params, ResolveChannel(lowering, op));
  std::vector<SlotId> inputs;
  for (int i = 0; i < op.num_operands(); ++i) {
    ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, i));
    inputs.push_back(operand);
  }
  std::vector<SlotId> outputs;
  for (int i = 0; i < op.num_results(); ++i) {
    SlotId slot;
    if (op.result(i)->type().is(ir::TypeKind::kToken)) {
      if (i + 1 != op.num_results()) {
        return InvalidArgumentError(op.Describe(),
                                    ": the token must be the last result");
      }
      slot = lowering.NewToken();
      lowering.Bind(op.result(i), slot);
    } else {
      ASSIGN_OR_RETURN(slot, lowering.NewResult(op, i));
      params.shapes.push_back(lowering.shape(slot));
    }
    outputs.push_back(slot);
  }
  lowering.Emit(op, exec::MakeRecvKernel(std::move(params)), std::move(inputs),
                std::move(outputs), /*foldable=*/false);
  return OkStatus();
}

// collective_broadcast, variadic; with has_dynamic_root the last operand
// holds each data operand's root (an index into the group).
Status LowerCollectiveBroadcast(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> ids,
                   ReadReplicaGroups(op));
  ASSIGN_OR_RETURN(exec::CollectiveGroups groups,
                   ResolveGroups(op, lowering.position(),
                                 PartitionGroupMode(op), std::move(ids),
                                 GroupRules{/*equal_sizes=*/false,
                                            /*cover=*/false}));
  const bool dynamic_root = BoolAttr(op, "has_dynamic_root");
  const int data = op.num_operands() - (dynamic_root ? 1 : 0);
  if (data < 1 || data != op.num_results()) {
    return InvalidArgumentError(op.Describe(),
                                ": expected one result per data operand");
  }
  std::vector<SlotId> inputs, outputs;
  exec::CollectiveParams params;
  for (int i = 0; i < op.num_operands(); ++i) {
    ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, i));
    inputs.push_back(operand);
    if (i >= data) continue;
    ArrayShape shape = lowering.shape(operand);
    ASSIGN_OR_RETURN(SlotId out, lowering.NewResult(op, i, shape.dims));
    params.operands.push_back(shape);
    params.results.push_back(shape);
    outputs.push_back(out);
  }
  std::optional<ElementType> root_type;
  if (dynamic_root) {
    ArrayShape roots = lowering.shape(inputs.back());
    if (!ir::IsInteger(roots.type) || roots.num_elements() < data) {
      return InvalidArgumentError(op.Describe(), ": the roots ",
                                  roots.ToString(), " must be ", data,
                                  " integers");
    }
    root_type = roots.type;
  }
  params.step_id = lowering.NewCollectiveId();
  params.groups = std::move(groups);
  lowering.Emit(
      op, exec::MakeCollectiveBroadcastKernel(std::move(params), root_type),
      std::move(inputs), std::move(outputs), /*foldable=*/false);
  return OkStatus();
}

}  // namespace

void RegisterCollectiveLowerings() {
  RegisterLowering(OpCode::kAllReduce, LowerAllReduce);
  RegisterLowering(OpCode::kCollectiveReduce, LowerAllReduce);
  RegisterLowering(OpCode::kAllGather, LowerAllGather);
  RegisterLowering(OpCode::kReduceScatter, LowerReduceScatter);
  RegisterLowering(OpCode::kAllToAll, LowerAllToAll);
  RegisterLowering(OpCode::kCollectivePermute, LowerCollectivePermute);
  RegisterLowering(OpCode::kCollectiveBroadcast, LowerCollectiveBroadcast);
  RegisterLowering(OpCode::kSend, LowerSend);
  RegisterLowering(OpCode::kRecv, LowerRecv);
}

}  // namespace kiln::compile
