#include "exec/kernels/collectives.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <type_traits>

#include "base/strings.h"
#include "exec/executor.h"
#include "exec/kernels/element.h"
#include "exec/kernels/shape.h"
#include "ir/element_type.h"

namespace kiln::exec {
namespace {

// Reductions go through a block this large, which stays in the L1 cache
// while every member's input is combined into it.
constexpr int64_t kBlockBytes = 16384;
// all_reduce chunk boundaries are multiples of this many elements.
constexpr int64_t kChunkAlignment = 16;

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * dims[d + 1];
  }
  return strides;
}

// Joins the meeting of the running participant's group for `params`' step;
// a meeting of one when the group has one member (or the participant is
// in none).
StatusOr<Meeting> JoinGroup(RunContext& ctx, const CollectiveParams& params,
                            Contribution mine) {
  const int me = ctx.participant();
  const CollectiveGroups& groups = params.groups;
  if (me < 0 || me >= groups.num_participants()) {
    return InternalError("participant ", me, " is outside the ",
                         groups.num_participants(),
                         " participants the step was built for");
  }
  const std::vector<int>& group = groups.GroupOf(me);
  if (group.size() <= 1) return Meeting::Alone(std::move(mine));
  Communicator* communicator = ctx.communicator();
  if (communicator == nullptr) {
    return FailedPreconditionError(
        "needs the ", group.size(), " participants of group [",
        StrJoin(group, ", "),
        "], and this run has no peers (run every device of the program in "
        "one launch)");
  }
  if (communicator->num_participants() != groups.num_participants()) {
    return InternalError("the launch has ", communicator->num_participants(),
                         " participants; the step was built for ",
                         groups.num_participants());
  }
  return communicator->Join(params.step_id, groups.group_of[me], group, me,
                            groups.rank_of[me], std::move(mine),
                            ctx.cancel_flag());
}

// The running participant's group when it has members in other processes:
// its collectives then go through the launch's ProcessCollectives, each
// participant a rank of its own (see exec/collectives.h).
struct RemoteGroup {
  ProcessCollectives* collectives = nullptr;
  std::vector<int> devices;  // global device ids, in rank order
  int rank = 0;
};

std::optional<RemoteGroup> CrossProcessGroup(RunContext& ctx,
                                             const CollectiveParams& params) {
  const Communicator* communicator = ctx.communicator();
  const int me = ctx.participant();
  if (communicator == nullptr || me < 0 ||
      me >= params.groups.num_participants()) {
    return std::nullopt;
  }
  const std::vector<int>& group = params.groups.GroupOf(me);
  if (group.size() <= 1 || !communicator->SpansProcesses(group)) {
    return std::nullopt;
  }
  const CrossProcessLaunch& launch = communicator->cross_process();
  RemoteGroup remote;
  remote.collectives = launch.collectives.get();
  for (int member : group) remote.devices.push_back(launch.devices[member]);
  remote.rank = params.groups.rank_of[me];
  return remote;
}

// The reduction a cross-process collective does for `combiner` (what the
// region computes, also where the devices of this process call the region:
// types without a fast combiner), or UNIMPLEMENTED for one it cannot do (a
// general region, or and/or/xor). The process collectives refuse the
// element types they cannot reduce.
StatusOr<ProcessReduction> ProcessReductionOf(Combiner combiner,
                                              ElementType type) {
  switch (combiner) {
    case Combiner::kAdd:
      return ProcessReduction::kSum;
    case Combiner::kMultiply:
      return ProcessReduction::kProduct;
    case Combiner::kMaximum:
      return ProcessReduction::kMax;
    case Combiner::kMinimum:
      return ProcessReduction::kMin;
    default:
      break;
  }
  return UnimplementedError(
      "a reduction between processes supports add, multiply, maximum and "
      "minimum; this one (of ",
      ir::ElementTypeName(type),
      ") needs its region called per element, which runs only between "
      "devices of one process");
}

// Combines `count` elements of every source (in order) and writes the
// result to every target. Targets may be sources too: each block is read
// completely before it is written.
class Reducer {
 public:
  Reducer(ElementType type, Combiner combiner, std::unique_ptr<Region> body)
      : type_(type),
        bytes_(ir::StorageBytes(type)),
        combiner_(combiner),
        body_(body ? std::optional<ScalarRegion>(std::in_place, std::move(body))
                   : std::nullopt) {}

  Status Reduce(RunContext& ctx, const std::vector<const std::byte*>& sources,
                const std::vector<std::byte*>& targets, int64_t count) const {
    alignas(64) std::byte block[kBlockBytes];
    alignas(16) std::byte stage[16];
    const int64_t per_block = std::max<int64_t>(1, kBlockBytes / bytes_);
    for (int64_t start = 0; start < count; start += per_block) {
      const int64_t n = std::min(per_block, count - start);
      const int64_t offset = start * bytes_;
      std::memcpy(block, sources[0] + offset, n * bytes_);
      for (size_t k = 1; k < sources.size(); ++k) {
        const std::byte* value = sources[k] + offset;
        if (!body_) {
          ApplyCombiner(combiner_, type_, block, value, n);
          continue;
        }
        for (int64_t e = 0; e < n; ++e) {
          const std::byte* args[2] = {block + e * bytes_, value + e * bytes_};
          RETURN_IF_ERROR(body_->CallAndUpdate(ctx, args, &bytes_, stage));
        }
      }
      for (std::byte* target : targets) {
        std::memcpy(target + offset, block, n * bytes_);
      }
    }
    return OkStatus();
  }

 private:
  ElementType type_;
  int64_t bytes_;
  Combiner combiner_;
  std::optional<ScalarRegion> body_;
};

class AllReduceKernel : public Kernel {
 public:
  AllReduceKernel(CollectiveParams params, Combiner combiner,
                  std::unique_ptr<Region> body, bool root_only)
      : params_(std::move(params)),
        combiner_(combiner),
        reducer_(params_.operands[0].type, combiner, std::move(body)),
        root_only_(root_only) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    const ArrayShape& shape = params_.operands[0];
    const int64_t bytes = shape.byte_size();
    std::byte* out = ctx.Out<std::byte>(step, 0);
    if (std::optional<RemoteGroup> remote = CrossProcessGroup(ctx, params_)) {
      ASSIGN_OR_RETURN(ProcessReduction reduction,
                       ProcessReductionOf(combiner_, shape.type));
      RETURN_IF_ERROR(remote->collectives->AllReduce(
          remote->devices, remote->rank, shape.type, reduction,
          ctx.In<std::byte>(step, 0), out, shape.num_elements()));
      if (root_only_ && remote->rank != 0 && bytes > 0) {
        std::memset(out, 0, bytes);
      }
      return OkStatus();
    }
    ASSIGN_OR_RETURN(
        Meeting meeting,
        JoinGroup(ctx, params_,
                  Contribution{{ctx.In<std::byte>(step, 0)}, {out}}));
    const int n = meeting.size();
    const int rank = meeting.rank();
    if (root_only_ && rank != 0 && bytes > 0) std::memset(out, 0, bytes);
    // Rank r reduces chunk r for the whole group.
    const int64_t elements = shape.num_elements();
    auto boundary = [&](int r) -> int64_t {
      if (r >= n) return elements;
      int64_t at = elements * r / n;
      return at - at % kChunkAlignment;
    };
    const int64_t begin = boundary(rank), end = boundary(rank + 1);
    if (end > begin) {
      const int64_t offset = begin * ir::StorageBytes(shape.type);
      std::vector<const std::byte*> sources;
      std::vector<std::byte*> targets;
      for (int r = 0; r < n; ++r) {
        sources.push_back(meeting.member(r).inputs[0] + offset);
        if (!root_only_ || r == 0) {
          targets.push_back(meeting.member(r).outputs[0] + offset);
        }
      }
      RETURN_IF_ERROR(reducer_.Reduce(ctx, sources, targets, end - begin));
    }
    meeting.Leave();
    return OkStatus();
  }

 private:
  CollectiveParams params_;
  Combiner combiner_;
  Reducer reducer_;
  bool root_only_;
};

class AllGatherKernel : public Kernel {
 public:
  explicit AllGatherKernel(CollectiveParams params)
      : params_(std::move(params)) {
    for (size_t i = 0; i < params_.operands.size(); ++i) {
      const ArrayShape& in = params_.operands[i];
      const ArrayShape& out = params_.results[i];
      StridedCopy copy;
      copy.dims = in.dims;
      copy.source_strides = RowMajorStrides(in.dims);
      copy.target_strides = RowMajorStrides(out.dims);
      const int64_t d = params_.dimension;
      // Where rank k's part starts in the result, per rank.
      part_stride_.push_back(in.dims[d] * copy.target_strides[d]);
      copy.Simplify();
      copies_.push_back(std::move(copy));
    }
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    Contribution mine;
    for (size_t i = 0; i < copies_.size(); ++i) {
      mine.inputs.push_back(ctx.In<std::byte>(step, static_cast<int>(i)));
      mine.outputs.push_back(ctx.Out<std::byte>(step, static_cast<int>(i)));
    }
    if (std::optional<RemoteGroup> remote = CrossProcessGroup(ctx, params_)) {
      return RunAcrossProcesses(*remote, mine);
    }
    ASSIGN_OR_RETURN(Meeting meeting, JoinGroup(ctx, params_, mine));
    for (size_t i = 0; i < copies_.size(); ++i) {
      const int64_t bytes = ir::StorageBytes(params_.operands[i].type);
      StridedCopy copy = copies_[i];
      for (int k = 0; k < meeting.size(); ++k) {
        copy.target_offset = k * part_stride_[i];
        copy.Run(meeting.member(k).inputs[i], mine.outputs[i], bytes);
      }
    }
    meeting.Leave();
    return OkStatus();
  }

 private:
  // Gathers every rank's input whole, then places the parts as above.
  Status RunAcrossProcesses(const RemoteGroup& remote,
                            const Contribution& mine) const {
    const int n = static_cast<int>(remote.devices.size());
    for (size_t i = 0; i < copies_.size(); ++i) {
      const int64_t part = params_.operands[i].byte_size();
      std::vector<std::byte> gathered(static_cast<size_t>(part) * n);
      RETURN_IF_ERROR(remote.collectives->AllGather(
          remote.devices, remote.rank, mine.inputs[i], gathered.data(), part));
      const int64_t bytes = ir::StorageBytes(params_.operands[i].type);
      StridedCopy copy = copies_[i];
      for (int k = 0; k < n; ++k) {
        copy.target_offset = k * part_stride_[i];
        copy.Run(gathered.data() + k * part, mine.outputs[i], bytes);
      }
    }
    return OkStatus();
  }

  CollectiveParams params_;
  std::vector<StridedCopy> copies_;
  std::vector<int64_t> part_stride_;
};

class ReduceScatterKernel : public Kernel {
 public:
  ReduceScatterKernel(CollectiveParams params, Combiner combiner,
                      std::unique_ptr<Region> body)
      : params_(std::move(params)),
        combiner_(combiner),
        reducer_(params_.operands[0].type, combiner, std::move(body)) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    const ArrayShape& in = params_.operands[0];
    std::byte* out = ctx.Out<std::byte>(step, 0);
    if (std::optional<RemoteGroup> remote = CrossProcessGroup(ctx, params_)) {
      return RunAcrossProcesses(ctx, step, *remote, out);
    }
    ASSIGN_OR_RETURN(
        Meeting meeting,
        JoinGroup(ctx, params_,
                  Contribution{{ctx.In<std::byte>(step, 0)}, {out}}));
    const int n = meeting.size();
    const int64_t d = params_.dimension;
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < d; ++i) outer *= in.dims[i];
    for (int64_t i = d + 1; i < in.rank(); ++i) inner *= in.dims[i];
    const int64_t part = in.dims[d] / n;
    const int64_t run = part * inner;  // contiguous elements per outer index
    const int64_t bytes = ir::StorageBytes(in.type);
    std::vector<const std::byte*> sources(n);
    std::vector<std::byte*> targets(1);
    for (int64_t o = 0; o < outer && run > 0; ++o) {
      const int64_t source =
          (o * in.dims[d] + int64_t{meeting.rank()} * part) * inner * bytes;
      for (int r = 0; r < n; ++r) {
        sources[r] = meeting.member(r).inputs[0] + source;
      }
      targets[0] = out + o * run * bytes;
      RETURN_IF_ERROR(reducer_.Reduce(ctx, sources, targets, run));
    }
    meeting.Leave();
    return OkStatus();
  }

 private:
  // Reduces the whole input across the group, then keeps this rank's
  // block: simple, at the price of moving the whole array.
  Status RunAcrossProcesses(RunContext& ctx, const Step& step,
                            const RemoteGroup& remote, std::byte* out) const {
    const ArrayShape& in = params_.operands[0];
    ASSIGN_OR_RETURN(ProcessReduction reduction,
                     ProcessReductionOf(combiner_, in.type));
    std::vector<std::byte> reduced(static_cast<size_t>(in.byte_size()));
    RETURN_IF_ERROR(remote.collectives->AllReduce(
        remote.devices, remote.rank, in.type, reduction,
        ctx.In<std::byte>(step, 0), reduced.data(), in.num_elements()));
    const int n = static_cast<int>(remote.devices.size());
    const int64_t d = params_.dimension;
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < d; ++i) outer *= in.dims[i];
    for (int64_t i = d + 1; i < in.rank(); ++i) inner *= in.dims[i];
    const int64_t part = in.dims[d] / n;
    const int64_t run = part * inner;
    const int64_t bytes = ir::StorageBytes(in.type);
    for (int64_t o = 0; o < outer && run > 0; ++o) {
      const int64_t source =
          (o * in.dims[d] + int64_t{remote.rank} * part) * inner * bytes;
      std::memcpy(out + o * run * bytes, reduced.data() + source, run * bytes);
    }
    return OkStatus();
  }

  CollectiveParams params_;
  Combiner combiner_;
  Reducer reducer_;
};

class AllToAllKernel : public Kernel {
 public:
  explicit AllToAllKernel(CollectiveParams params)
      : params_(std::move(params)) {
    const int64_t split = params_.split_dimension;
    const int64_t concat = params_.concat_dimension;
    for (size_t i = 0; i < params_.operands.size(); ++i) {
      const ArrayShape& in = params_.operands[i];
      const ArrayShape& out = params_.results[i];
      Piece piece;
      piece.copy.dims = in.dims;
      piece.copy.source_strides = RowMajorStrides(in.dims);
      piece.copy.target_strides = RowMajorStrides(out.dims);
      // The block one rank sends: the input with the split dimension cut
      // into split_count parts.
      piece.copy.dims[split] = in.dims[split] / params_.split_count;
      piece.source_step =
          piece.copy.dims[split] * piece.copy.source_strides[split];
      piece.target_step =
          piece.copy.dims[concat] * piece.copy.target_strides[concat];
      // Across processes the blocks travel packed: `pack` cuts the block
      // for one rank out of the input, `unpack` places a received block.
      std::vector<int64_t> block_dims = piece.copy.dims;
      std::vector<int64_t> packed = RowMajorStrides(block_dims);
      piece.block_elements = 1;
      for (int64_t dim : block_dims) piece.block_elements *= dim;
      piece.pack.dims = block_dims;
      piece.pack.source_strides = piece.copy.source_strides;
      piece.pack.target_strides = packed;
      piece.unpack.dims = block_dims;
      piece.unpack.source_strides = packed;
      piece.unpack.target_strides = piece.copy.target_strides;
      piece.pack.Simplify();
      piece.unpack.Simplify();
      piece.copy.Simplify();
      pieces_.push_back(std::move(piece));
    }
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    Contribution mine;
    for (size_t i = 0; i < pieces_.size(); ++i) {
      mine.inputs.push_back(ctx.In<std::byte>(step, static_cast<int>(i)));
      mine.outputs.push_back(ctx.Out<std::byte>(step, static_cast<int>(i)));
    }
    if (std::optional<RemoteGroup> remote = CrossProcessGroup(ctx, params_)) {
      return RunAcrossProcesses(*remote, mine);
    }
    ASSIGN_OR_RETURN(Meeting meeting, JoinGroup(ctx, params_, mine));
    for (size_t i = 0; i < pieces_.size(); ++i) {
      const int64_t bytes = ir::StorageBytes(params_.operands[i].type);
      StridedCopy copy = pieces_[i].copy;
      copy.source_offset = int64_t{meeting.rank()} * pieces_[i].source_step;
      for (int k = 0; k < meeting.size(); ++k) {
        copy.target_offset = k * pieces_[i].target_step;
        copy.Run(meeting.member(k).inputs[i], mine.outputs[i], bytes);
      }
    }
    meeting.Leave();
    return OkStatus();
  }

 private:
  struct Piece {
    StridedCopy copy;
    int64_t source_step = 0;  // elements between the blocks sent to ranks
    int64_t target_step = 0;  // elements between the blocks received
    StridedCopy pack;
    StridedCopy unpack;
    int64_t block_elements = 0;
  };

  Status RunAcrossProcesses(const RemoteGroup& remote,
                            const Contribution& mine) const {
    const int n = static_cast<int>(remote.devices.size());
    for (size_t i = 0; i < pieces_.size(); ++i) {
      const Piece& piece = pieces_[i];
      const int64_t bytes = ir::StorageBytes(params_.operands[i].type);
      const int64_t block_bytes = piece.block_elements * bytes;
      std::vector<std::byte> send(static_cast<size_t>(block_bytes) * n);
      std::vector<std::byte> receive(send.size());
      StridedCopy pack = piece.pack;
      for (int r = 0; r < n; ++r) {
        pack.source_offset = r * piece.source_step;
        pack.Run(mine.inputs[i], send.data() + r * block_bytes, bytes);
      }
      RETURN_IF_ERROR(remote.collectives->AllToAll(remote.devices, remote.rank,
                                                   send.data(), receive.data(),
                                                   block_bytes));
      StridedCopy unpack = piece.unpack;
      for (int k = 0; k < n; ++k) {
        unpack.target_offset = k * piece.target_step;
        unpack.Run(receive.data() + k * block_bytes, mine.outputs[i], bytes);
      }
    }
    return OkStatus();
  }
  CollectiveParams params_;
  std::vector<Piece> pieces_;
};

class CollectivePermuteKernel : public Kernel {
 public:
  explicit CollectivePermuteKernel(CollectiveParams params)
      : params_(std::move(params)) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    const int64_t bytes = params_.operands[0].byte_size();
    std::byte* out = ctx.Out<std::byte>(step, 0);
    const int me = ctx.participant();
    if (std::optional<RemoteGroup> remote = CrossProcessGroup(ctx, params_)) {
      return RunAcrossProcesses(*remote, me, ctx.In<std::byte>(step, 0), out);
    }
    ASSIGN_OR_RETURN(
        Meeting meeting,
        JoinGroup(ctx, params_,
                  Contribution{{ctx.In<std::byte>(step, 0)}, {out}}));
    const int source = me >= 0 && me < static_cast<int>(params_.sources.size())
                           ? params_.sources[me]
                           : -1;
    if (bytes > 0) {
      if (source < 0) {
        std::memset(out, 0, bytes);
      } else {
        const int rank =
            meeting.size() == 1 ? 0 : params_.groups.rank_of[source];
        std::memcpy(out, meeting.member(rank).inputs[0], bytes);
      }
    }
    meeting.Leave();
    return OkStatus();
  }

 private:
  Status RunAcrossProcesses(const RemoteGroup& remote, int me,
                            const std::byte* in, std::byte* out) const {
    const int64_t bytes = params_.operands[0].byte_size();
    const int participants = static_cast<int>(params_.sources.size());
    std::vector<int> send_to;
    for (int p = 0; p < participants; ++p) {
      if (params_.sources[p] == me)
        send_to.push_back(params_.groups.rank_of[p]);
    }
    const int source = me < participants ? params_.sources[me] : -1;
    const int receive_from = source < 0 ? -1 : params_.groups.rank_of[source];
    RETURN_IF_ERROR(remote.collectives->SendReceive(
        remote.devices, remote.rank, in, send_to, out, receive_from, bytes));
    if (receive_from < 0 && bytes > 0) std::memset(out, 0, bytes);
    return OkStatus();
  }

  CollectiveParams params_;
};

// Reads element `i` of an integer array of `type` (root indices).
int64_t ReadIndex(const std::byte* data, ElementType type, int64_t i) {
  int64_t value = 0;
  DispatchNative(type, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      value = static_cast<int64_t>(reinterpret_cast<const T*>(data)[i]);
    }
  });
  return value;
}

class CollectiveBroadcastKernel : public Kernel {
 public:
  CollectiveBroadcastKernel(CollectiveParams params,
                            std::optional<ElementType> root_type)
      : params_(std::move(params)), root_type_(root_type) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    const size_t count = params_.operands.size();
    Contribution mine;
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      mine.inputs.push_back(ctx.In<std::byte>(step, static_cast<int>(i)));
    }
    for (size_t i = 0; i < count; ++i) {
      mine.outputs.push_back(ctx.Out<std::byte>(step, static_cast<int>(i)));
    }
    if (params_.groups.GroupOf(ctx.participant()).empty()) {
      for (size_t i = 0; i < count; ++i) {
        const int64_t bytes = params_.operands[i].byte_size();
        if (bytes > 0) std::memset(mine.outputs[i], 0, bytes);
      }
      return OkStatus();
    }
    if (std::optional<RemoteGroup> remote = CrossProcessGroup(ctx, params_)) {
      if (root_type_) {
        return UnimplementedError(
            "collective_broadcast with a dynamic root between processes");
      }
      for (size_t i = 0; i < count; ++i) {
        const int64_t bytes = params_.operands[i].byte_size();
        if (remote->rank == 0 && bytes > 0) {
          std::memcpy(mine.outputs[i], mine.inputs[i], bytes);
        }
        RETURN_IF_ERROR(remote->collectives->Broadcast(
            remote->devices, remote->rank, 0, mine.outputs[i], bytes));
      }
      return OkStatus();
    }
    ASSIGN_OR_RETURN(Meeting meeting, JoinGroup(ctx, params_, mine));
    for (size_t i = 0; i < count; ++i) {
      // Every member reads the roots of rank 0, so all agree on them.
      const int64_t root = root_type_
                               ? ReadIndex(meeting.member(0).inputs[count],
                                           *root_type_, static_cast<int64_t>(i))
                               : 0;
      if (root < 0 || root >= meeting.size()) {
        return InvalidArgumentError("root ", root, " of operand ", i,
                                    " is outside the group of ",
                                    meeting.size());
      }
      const int64_t bytes = params_.operands[i].byte_size();
      if (bytes > 0) {
        std::memcpy(mine.outputs[i],
                    meeting.member(static_cast<int>(root)).inputs[i], bytes);
      }
    }
    meeting.Leave();
    return OkStatus();
  }

 private:
  CollectiveParams params_;
  std::optional<ElementType> root_type_;
};

// The communicator of a run that uses channels: in this process, with
// every participant the step was built for.
StatusOr<Communicator*> ChannelCommunicator(RunContext& ctx,
                                            const ChannelParams& params,
                                            std::string_view what) {
  Communicator* communicator = ctx.communicator();
  const int participants =
      static_cast<int>(std::max(params.targets.size(), params.sources.size()));
  if (communicator == nullptr) {
    return FailedPreconditionError(
        what, " on channel ", params.channel,
        " needs the program's other participants, and this run has no peers "
        "(run every device of the program in one launch)");
  }
  if (communicator->num_participants() != participants) {
    return InternalError("the launch has ", communicator->num_participants(),
                         " participants; the step was built for ",
                         participants);
  }
  if (communicator->cross_process().collectives != nullptr) {
    return UnimplementedError(
        what, " on channel ", params.channel,
        ": channels between devices of different processes are not "
        "supported (collective_permute is)");
  }
  return communicator;
}

class SendKernel : public Kernel {
 public:
  explicit SendKernel(ChannelParams params) : params_(std::move(params)) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    ASSIGN_OR_RETURN(Communicator * communicator,
                     ChannelCommunicator(ctx, params_, "stablehlo.send"));
    const int me = ctx.participant();
    if (me < 0 || me >= static_cast<int>(params_.targets.size())) {
      return InternalError("participant ", me, " is outside the ",
                           params_.targets.size(),
                           " participants the step was built for");
    }
    std::string message;
    for (size_t i = 0; i < params_.shapes.size(); ++i) {
      const std::byte* in = ctx.In<std::byte>(step, static_cast<int>(i));
      message.append(reinterpret_cast<const char*>(in),
                     static_cast<size_t>(params_.shapes[i].byte_size()));
    }
    if (params_.any_receiver) {
      return communicator->Send(params_.channel, params_.host_transfer,
                                Communicator::kAnyReceiver, me,
                                std::move(message));
    }
    const std::vector<int>& targets = params_.targets[me];
    for (size_t t = 0; t < targets.size(); ++t) {
      RETURN_IF_ERROR(communicator->Send(
          params_.channel, params_.host_transfer, targets[t], me,
          t + 1 == targets.size() ? std::move(message) : message));
    }
    return OkStatus();
  }

 private:
  ChannelParams params_;
};

class RecvKernel : public Kernel {
 public:
  explicit RecvKernel(ChannelParams params) : params_(std::move(params)) {
    for (const ArrayShape& shape : params_.shapes) bytes_ += shape.byte_size();
  }

  Status Run(RunContext& ctx, const Step& step) const override {
    const int me = ctx.participant();
    if (me < 0 || me >= static_cast<int>(params_.sources.size())) {
      return InternalError("participant ", me, " is outside the ",
                           params_.sources.size(),
                           " participants the step was built for");
    }
    const bool receives = params_.any_receiver || params_.sources[me] >= 0;
    std::string message(static_cast<size_t>(bytes_), '\0');
    if (receives) {
      ASSIGN_OR_RETURN(Communicator * communicator,
                       ChannelCommunicator(ctx, params_, "stablehlo.recv"));
      RETURN_IF_ERROR(communicator->Receive(
          params_.channel, params_.host_transfer,
          params_.any_receiver ? Communicator::kAnyReceiver : me, me,
          reinterpret_cast<std::byte*>(message.data()), bytes_,
          ctx.cancel_flag()));
    }
    int64_t at = 0;
    for (size_t i = 0; i < params_.shapes.size(); ++i) {
      const int64_t bytes = params_.shapes[i].byte_size();
      if (bytes > 0) {
        std::memcpy(ctx.Out<std::byte>(step, static_cast<int>(i)),
                    message.data() + at, static_cast<size_t>(bytes));
      }
      at += bytes;
    }
    return OkStatus();
  }

 private:
  ChannelParams params_;
  int64_t bytes_ = 0;
};

}  // namespace

std::unique_ptr<Kernel> MakeSendKernel(ChannelParams params) {
  return std::make_unique<SendKernel>(std::move(params));
}

std::unique_ptr<Kernel> MakeRecvKernel(ChannelParams params) {
  return std::make_unique<RecvKernel>(std::move(params));
}

std::unique_ptr<Kernel> MakeAllReduceKernel(CollectiveParams params,
                                            Combiner combiner,
                                            std::unique_ptr<Region> body,
                                            bool root_only) {
  return std::make_unique<AllReduceKernel>(std::move(params), combiner,
                                           std::move(body), root_only);
}

std::unique_ptr<Kernel> MakeAllGatherKernel(CollectiveParams params) {
  return std::make_unique<AllGatherKernel>(std::move(params));
}

std::unique_ptr<Kernel> MakeReduceScatterKernel(CollectiveParams params,
                                                Combiner combiner,
                                                std::unique_ptr<Region> body) {
  return std::make_unique<ReduceScatterKernel>(std::move(params), combiner,
                                               std::move(body));
}

std::unique_ptr<Kernel> MakeAllToAllKernel(CollectiveParams params) {
  return std::make_unique<AllToAllKernel>(std::move(params));
}

std::unique_ptr<Kernel> MakeCollectivePermuteKernel(CollectiveParams params) {
  return std::make_unique<CollectivePermuteKernel>(std::move(params));
}

std::unique_ptr<Kernel> MakeCollectiveBroadcastKernel(
    CollectiveParams params, std::optional<ElementType> root_type) {
  return std::make_unique<CollectiveBroadcastKernel>(std::move(params),
                                                     root_type);
}

}  // namespace kiln::exec
