// Collectives between the participants of a launch (exec/collectives.h):
// all_reduce, collective_reduce, all_gather, reduce_scatter, all_to_all,
// collective_permute and collective_broadcast, and the channels of send and
// recv. Each step joins the meeting
// of the running participant's group and reads its peers' memory in place;
// a participant whose group has one member works alone. Data movement
// works for every element type (bytes are moved as stored); reductions
// need the element type's arithmetic (a fast combiner, else the lowered
// region).
#ifndef KILN_EXEC_KERNELS_COLLECTIVES_H_
#define KILN_EXEC_KERNELS_COLLECTIVES_H_

#include <memory>
#include <optional>
#include <vector>

#include "exec/collectives.h"
#include "exec/kernels/region_call.h"
#include "exec/plan.h"

namespace kiln::exec {

struct CollectiveParams {
  // The op's identity in the program: the same in every participant's plan.
  int64_t step_id = 0;
  CollectiveGroups groups;
  // One per operand (all_gather and all_to_all are variadic; the others
  // take one).
  std::vector<ArrayShape> operands;
  std::vector<ArrayShape> results;
  // all_gather_dim, scatter_dimension.
  int64_t dimension = 0;
  // all_to_all.
  int64_t split_dimension = 0;
  int64_t concat_dimension = 0;
  int64_t split_count = 1;  // the group size
  // collective_permute: per participant, the participant it receives from
  // (in its own group), or -1 (it receives zeros).
  std::vector<int> sources;
};

// all_reduce: every member's output is the combination of the members'
// inputs in rank order. Member r reduces the r-th chunk of the elements
// for the whole group and writes it into every member's output. `body` is
// null for a fast combiner. With `root_only` (collective_reduce) only rank
// 0 receives the result and the others zeros.
std::unique_ptr<Kernel> MakeAllReduceKernel(CollectiveParams params,
                                            Combiner combiner,
                                            std::unique_ptr<Region> body,
                                            bool root_only = false);

// all_gather: output i is the members' inputs i concatenated along
// `dimension` in rank order.
std::unique_ptr<Kernel> MakeAllGatherKernel(CollectiveParams params);

// reduce_scatter: member r's output is block r (along `dimension`) of the
// combination of the members' inputs.
std::unique_ptr<Kernel> MakeReduceScatterKernel(CollectiveParams params,
                                                Combiner combiner,
                                                std::unique_ptr<Region> body);

// all_to_all: each input i is split along `split_dimension` into group-size
// blocks; block r goes to rank r, which concatenates what it receives
// along `concat_dimension` in rank order.
std::unique_ptr<Kernel> MakeAllToAllKernel(CollectiveParams params);

// collective_permute: each participant receives its source's input, or
// zeros without one.
std::unique_ptr<Kernel> MakeCollectivePermuteKernel(CollectiveParams params);

// collective_broadcast: output i of each member is input i of the group's
// root; participants in no group get zeros. The root is rank 0, or with
// `root_type` (has_dynamic_root) element i of the last input, an integer
// array of that type (read from rank 0, so every member agrees).
std::unique_ptr<Kernel> MakeCollectiveBroadcastKernel(
    CollectiveParams params,
    std::optional<ElementType> root_type = std::nullopt);

// Channels between participants (stablehlo.send and stablehlo.recv, see
// Communicator::Send). Per participant, the participants a send delivers
// to (empty: it sends nothing), or the participant a receive takes from
// (-1: it receives zeros); `any_receiver` instead puts every message in
// one queue of the channel that any receive takes from, in order.
struct ChannelParams {
  int64_t channel = 0;
  bool host_transfer = false;
  bool any_receiver = false;
  std::vector<std::vector<int>> targets;  // send
  std::vector<int> sources;               // recv
  // The tensors carried, in order (a token is not one).
  std::vector<ArrayShape> shapes;
};

// stablehlo.send: inputs are the tensors (then the token); the output is
// the token. The bytes are copied into the channel, so the send returns at
// once.
std::unique_ptr<Kernel> MakeSendKernel(ChannelParams params);

// stablehlo.recv: the input is the token; outputs are the tensors (then the
// token), filled from the oldest message of the channel.
std::unique_ptr<Kernel> MakeRecvKernel(ChannelParams params);

}  // namespace kiln::exec

#endif  // KILN_EXEC_KERNELS_COLLECTIVES_H_
