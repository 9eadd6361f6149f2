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
        reducer_(params_.operands[0].type, combiner, std::move(body)),
        root_only_(root_only) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    const ArrayShape& shape = params_.operands[0];
    const int64_t bytes = shape.byte_size();
    std::byte* out = ctx.Out<std::byte>(step, 0);
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
  CollectiveParams params_;
  std::vector<StridedCopy> copies_;
  std::vector<int64_t> part_stride_;
};

class ReduceScatterKernel : public Kernel {
 public:
  ReduceScatterKernel(CollectiveParams params, Combiner combiner,
                      std::unique_ptr<Region> body)
      : params_(std::move(params)),
        reducer_(params_.operands[0].type, combiner, std::move(body)) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    const ArrayShape& in = params_.operands[0];
    std::byte* out = ctx.Out<std::byte>(step, 0);
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
  CollectiveParams params_;
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
  };
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

}  // namespace

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
