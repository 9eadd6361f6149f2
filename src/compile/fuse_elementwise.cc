// Loop fusion of elementwise steps.
//
// When a region is complete (every step emitted, every lifetime known),
// runs of consecutive elementwise steps over the same number of elements
// become one fused step (exec/fusion.h). Inside the fused step a value
// that no step outside the run reads lives only in a per-thread tile
// buffer; the others are written to their slots as before. The run's
// inputs live to its last step and its outputs from its first, so the
// buffer planner never lets a fused step write over what it still reads.
//
// A value produced inside a run joins it only when its consumer reads it
// element by element: a view (broadcast, transpose, ...) reads its source
// whole, so a source computed in the same run would not be complete yet.
// A kernel that runs better over its whole range than over tiles (a
// transpose too large for a core's first-level cache,
// ElementwiseKernel::runs_well_in_tiles) joins no run; one that reads
// nothing of the run is stepped over and runs before the fused step.
//
// Then a reduction of trailing dimensions (exec/kernels/row_reduce.h)
// that directly follows an elementwise step (fused or not) takes that
// step as its producer: the value it reduces is computed row by row into
// a per-thread buffer and never written to memory, or, where steps after
// the reduction read it too (softmax's exponentials), written as it is
// reduced instead of read back.
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "compile/lowering.h"
#include "exec/fusion.h"
#include "exec/kernels/row_reduce.h"

namespace kiln::compile {
namespace {

using exec::ElementwiseKernel;
using exec::FusedNode;
using exec::FusedOperand;

// Fusing fewer elements than this saves nothing: the tile loop costs
// about as much as the arrays it avoids.
constexpr int64_t kMinFusedElements = 64;
// The most steps over another number of elements a run steps over.
constexpr size_t kMaxHoistedSteps = 8;
// The most steps one fused kernel takes.
constexpr size_t kMaxFusedSteps = 512;
// The shortest rows a reduction takes a producer for whose operand is
// also written for later readers.
constexpr int64_t kMinWrittenRowLength = 64;

const ElementwiseKernel* AsElementwise(const exec::Step& step) {
  const auto* kernel =
      dynamic_cast<const ElementwiseKernel*>(step.kernel.get());
  if (kernel == nullptr) return nullptr;
  if (kernel->num_inputs() > exec::kMaxFusedNodeOperands ||
      kernel->num_outputs() > exec::kMaxFusedNodeOperands ||
      static_cast<size_t>(kernel->num_inputs()) != step.inputs.size() ||
      static_cast<size_t>(kernel->num_outputs()) != step.outputs.size()) {
    return nullptr;
  }
  return kernel;
}

// `step`'s kernel if it is elementwise and may join a fused run.
const ElementwiseKernel* AsFusable(const exec::Step& step) {
  const ElementwiseKernel* kernel = AsElementwise(step);
  return kernel != nullptr && kernel->runs_well_in_tiles() ? kernel : nullptr;
}

// Whether `step` is an elementwise kernel too small for threads or fusion
// that exec::MakeElementwiseSequence can run.
bool Sequenceable(const exec::Step& step) {
  const ElementwiseKernel* kernel = AsElementwise(step);
  return kernel != nullptr && kernel->count() < kMinFusedElements &&
         kernel->num_inputs() <= exec::kMaxSequencedOperands &&
         kernel->num_outputs() <= exec::kMaxSequencedOperands;
}

// Makes each run of two or more consecutive small elementwise steps one
// step that runs them back to back (exec::MakeElementwiseSequence), at the
// run's first index. The members keep their order, so every slot is read
// and written as before and no lifetime changes. The step's inputs are
// the members' inputs that no earlier member wrote, its outputs all the
// members' outputs.
void SequenceSmallSteps(std::vector<exec::Step>& steps,
                        std::vector<int64_t>& indices) {
  std::vector<exec::Step> out;
  std::vector<int64_t> out_indices;
  size_t begin = 0;
  while (begin < steps.size()) {
    size_t end = begin;
    while (end < steps.size() && Sequenceable(steps[end])) ++end;
    if (end - begin < 2) {
      out.push_back(std::move(steps[begin]));
      out_indices.push_back(indices[begin]);
      ++begin;
      continue;
    }
    exec::Step sequence;
    std::set<SlotId> written;
    std::vector<exec::Step> members;
    for (size_t k = begin; k < end; ++k) {
      exec::Step& member = steps[k];
      for (SlotId in : member.inputs) {
        if (written.count(in) == 0 &&
            std::find(sequence.inputs.begin(), sequence.inputs.end(), in) ==
                sequence.inputs.end()) {
          sequence.inputs.push_back(in);
        }
      }
      for (SlotId o : member.outputs) {
        written.insert(o);
        sequence.outputs.push_back(o);
      }
      sequence.where += k == begin ? "sequence of " : "; ";
      sequence.where += member.where;
      members.push_back(std::move(member));
    }
    sequence.kernel = exec::MakeElementwiseSequence(std::move(members));
    out.push_back(std::move(sequence));
    out_indices.push_back(indices[begin]);
    begin = end;
  }
  steps = std::move(out);
  indices = std::move(out_indices);
}

}  // namespace

void Lowering::ReadBroadcastScalars(exec::Step& step) {
  const ElementwiseKernel* kernel = AsElementwise(step);
  if (kernel == nullptr) return;
  for (size_t i = 0; i < step.inputs.size(); ++i) {
    auto broadcast = scalar_broadcasts_.find(alias_root_[step.inputs[i]]);
    if (broadcast == scalar_broadcasts_.end() ||
        kernel->reads_whole(static_cast<int>(i))) {
      continue;
    }
    std::unique_ptr<ElementwiseKernel> scalar =
        kernel->WithScalarInput(static_cast<int>(i));
    if (scalar == nullptr) continue;
    kernel = scalar.get();
    step.kernel = std::move(scalar);
    step.inputs[i] = broadcast->second;
  }
}

bool Lowering::OtherFrameStepBetween(int64_t a, int64_t b) const {
  const int frame = frames_.back().id;
  for (int64_t i = a + 1; i < b; ++i) {
    if (i < static_cast<int64_t>(index_frame_.size()) && index_frame_[i] >= 0 &&
        index_frame_[i] != frame) {
      return true;
    }
  }
  return false;
}

bool Lowering::ScratchDeadAfter(SlotId root, int64_t index) const {
  const exec::Slot& s = plan_.slots()[root];
  return s.kind == exec::SlotKind::kTemp && !s.is_token &&
         last_use_[root] <= index;
}

void Lowering::FuseElementwiseSteps() {
  exec::Region& region = *frames_.back().region;
  std::vector<int64_t>& indices = frame_step_indices_[frames_.back().id];
  if (indices.size() != region.steps.size()) return;  // not tracked: leave it

  // Broadcast scalars whose readers all read the scalar itself
  // (ReadBroadcastScalars), and views whose readers all read their source
  // (NoteBypassedView), are dead: drop them, and their arrays.
  {
    std::vector<exec::Step> live;
    std::vector<int64_t> live_indices;
    for (size_t k = 0; k < region.steps.size(); ++k) {
      exec::Step& step = region.steps[k];
      if (step.outputs.size() == 1 &&
          (scalar_broadcasts_.count(step.outputs[0]) != 0 ||
           bypassed_views_.count(step.outputs[0]) != 0) &&
          ScratchDeadAfter(step.outputs[0], indices[k])) {
        first_def_[step.outputs[0]] = -1;  // never in memory
        continue;
      }
      live.push_back(std::move(step));
      live_indices.push_back(indices[k]);
    }
    region.steps = std::move(live);
    indices = std::move(live_indices);
  }

  std::vector<exec::Step> fused_steps;
  std::vector<int64_t> fused_indices;
  std::vector<int64_t> fused_last_indices;  // a fused step's last index
  fused_steps.reserve(region.steps.size());

  // A nested region's step between two steps of this region (the indices
  // of this frame's dropped broadcasts are no such step).
  auto foreign_between = [&](int64_t a, int64_t b) {
    return OtherFrameStepBetween(a, b);
  };

  size_t begin = 0;
  while (begin < region.steps.size()) {
    const ElementwiseKernel* first = AsFusable(region.steps[begin]);
    if (first == nullptr || first->count() < kMinFusedElements) {
      fused_steps.push_back(std::move(region.steps[begin]));
      fused_indices.push_back(indices[begin]);
      fused_last_indices.push_back(indices[begin]);
      ++begin;
      continue;
    }
    // Extend the run while the next step is elementwise over as many
    // elements, reads values of the run element by element, and no step of
    // a nested region lies between.
    std::map<SlotId, size_t> produced;  // root slot -> step of the run
    auto note_outputs = [&](size_t s) {
      for (SlotId id : region.steps[s].outputs) produced[alias_root_[id]] = s;
    };
    note_outputs(begin);
    // Run members in order; `end` is one past the last. Elementwise steps
    // over fewer elements that read nothing the run made (batch norm's
    // per-channel scale between the subtraction of the mean and the
    // multiplication) are stepped over and run before the fused step, so
    // that the run goes on after them.
    std::vector<size_t> members = {begin};
    std::vector<size_t> hoisted;
    size_t end = begin + 1;
    for (size_t next_at = begin + 1;
         next_at < region.steps.size() && members.size() < kMaxFusedSteps;
         ++next_at) {
      const ElementwiseKernel* next = AsElementwise(region.steps[next_at]);
      if (next == nullptr ||
          foreign_between(indices[next_at - 1], indices[next_at])) {
        break;
      }
      const exec::Step& step = region.steps[next_at];
      bool reads_run = false, readable = true;
      for (size_t i = 0; i < step.inputs.size(); ++i) {
        SlotId root = alias_root_[step.inputs[i]];
        if (produced.count(root)) {
          reads_run = true;
          if (next->reads_whole(static_cast<int>(i))) readable = false;
        }
      }
      // A step that runs better alone (a large transpose) is stepped over
      // as smaller ones are, and runs before the fused step.
      const bool alone = !next->runs_well_in_tiles();
      if (alone || next->count() != first->count()) {
        // Only smaller steps are stepped over: a larger one would be taken
        // out of the run it starts itself, and run alone, unfused.
        if (reads_run || (!alone && next->count() > first->count()) ||
            hoisted.size() >= kMaxHoistedSteps) {
          break;
        }
        bool fresh = true;  // its outputs are new arrays of its own
        for (SlotId id : step.outputs) {
          fresh = fresh && alias_root_[id] == id &&
                  first_def_[id] == indices[next_at] &&
                  (slot(id).kind == exec::SlotKind::kTemp ||
                   slot(id).kind == exec::SlotKind::kOutput);
        }
        if (!fresh) break;
        hoisted.push_back(next_at);
        continue;
      }
      if (!readable) break;
      note_outputs(next_at);
      members.push_back(next_at);
      end = next_at + 1;
    }
    // Steps stepped over after the run's last member stay where they are.
    while (!hoisted.empty() && hoisted.back() >= end) hoisted.pop_back();
    if (members.size() < 2) {
      fused_steps.push_back(std::move(region.steps[begin]));
      fused_indices.push_back(indices[begin]);
      fused_last_indices.push_back(indices[begin]);
      ++begin;
      continue;
    }

    const int64_t first_index = indices[begin];
    const int64_t last_index = indices[end - 1];
    // Hoisted steps run before the fused step: their outputs are written
    // from the run's first index on.
    for (size_t h : hoisted) {
      for (SlotId id : region.steps[h].outputs) {
        first_def_[id] = std::min(first_def_[id], first_index);
      }
      fused_steps.push_back(std::move(region.steps[h]));
      fused_indices.push_back(first_index);
      fused_last_indices.push_back(first_index);
    }
    // A value made in the run that nothing after the run reads (its last
    // use is inside the run) and that is an ordinary scratch array lives
    // in a tile buffer.
    auto internal = [&](SlotId id) {
      return alias_root_[id] == id && ScratchDeadAfter(id, last_index);
    };

    // The last step of the run that reads each value made in the run, so
    // that tile buffers are reused once their value is dead.
    std::map<SlotId, size_t> last_reader;
    for (size_t s : members) {
      for (SlotId id : region.steps[s].inputs) last_reader[alias_root_[id]] = s;
    }
    std::map<int, std::vector<int>> free_tiles;  // element bytes -> buffers
    std::map<size_t, std::vector<std::pair<int, int>>> release_after;

    std::vector<int> input_bytes, output_bytes, tile_bytes;
    std::vector<SlotId> inputs, outputs;
    std::map<std::pair<SlotId, int>, int> input_index;  // (slot, bytes)
    std::map<SlotId, FusedOperand> where;               // root -> operand
    std::vector<FusedNode> nodes;
    // Range-invariant tiles (broadcast scalars): tile -> the node that
    // fills it, and whether some reader reads it element by element.
    std::map<int, size_t> invariant_node;
    std::map<int, bool> invariant_read_per_element;
    std::string description = "fusion of";
    for (size_t s : members) {
      exec::Step& step = region.steps[s];
      std::unique_ptr<exec::Kernel> owned = std::move(step.kernel);
      auto* kernel = static_cast<ElementwiseKernel*>(owned.release());
      FusedNode node;
      node.kernel.reset(kernel);
      for (size_t i = 0; i < step.inputs.size(); ++i) {
        SlotId id = step.inputs[i];
        auto found = where.find(alias_root_[id]);
        if (found != where.end()) {
          const FusedOperand& operand = found->second;
          auto invariant = operand.kind == FusedOperand::Kind::kTile
                               ? invariant_node.find(operand.index)
                               : invariant_node.end();
          if (invariant != invariant_node.end() &&
              !kernel->reads_whole(static_cast<int>(i))) {
            // A broadcast scalar: read its one element if the kernel can.
            std::unique_ptr<ElementwiseKernel> scalar =
                kernel->WithScalarInput(static_cast<int>(i));
            if (scalar != nullptr) {
              node.kernel = std::move(scalar);
              kernel = node.kernel.get();
            } else {
              invariant_read_per_element[operand.index] = true;
            }
          }
          node.inputs.push_back(operand);
          continue;
        }
        int bytes = kernel->input_bytes(static_cast<int>(i));
        auto [it, added] = input_index.try_emplace(
            {id, bytes}, static_cast<int>(inputs.size()));
        if (added) {
          inputs.push_back(id);
          input_bytes.push_back(bytes);
        }
        node.inputs.push_back({FusedOperand::Kind::kInput, it->second});
      }
      for (size_t j = 0; j < step.outputs.size(); ++j) {
        SlotId id = step.outputs[j];
        int bytes = kernel->output_bytes(static_cast<int>(j));
        FusedOperand operand;
        if (internal(id) && kernel->range_invariant()) {
          // Filled on a range's first tile, read by every tile after: a
          // buffer of its own, never handed on.
          operand = {FusedOperand::Kind::kTile,
                     static_cast<int>(tile_bytes.size())};
          invariant_node[operand.index] = nodes.size();
          tile_bytes.push_back(bytes);
          node.once_per_range = true;
          first_def_[id] = -1;
        } else if (internal(id)) {
          std::vector<int>& free = free_tiles[bytes];
          int buffer;
          if (free.empty()) {
            buffer = static_cast<int>(tile_bytes.size());
            tile_bytes.push_back(bytes);
          } else {
            buffer = free.back();
            free.pop_back();
          }
          operand = {FusedOperand::Kind::kTile, buffer};
          // A value no one reads still needs its tile while its step runs.
          auto reader = last_reader.find(id);
          size_t last = reader == last_reader.end() ? s : reader->second;
          release_after[last].push_back({bytes, buffer});
          first_def_[id] = -1;  // no memory of its own
        } else {
          operand = {FusedOperand::Kind::kOutput,
                     static_cast<int>(outputs.size())};
          outputs.push_back(id);
          output_bytes.push_back(bytes);
        }
        where[alias_root_[id]] = operand;
        node.outputs.push_back(operand);
      }
      // Buffers whose values die at this step serve the steps after it.
      for (auto [bytes, buffer] : release_after[s]) {
        free_tiles[bytes].push_back(buffer);
      }
      description += s == begin ? " " : "; ";
      description += step.where;
      nodes.push_back(std::move(node));
    }
    for (auto [tile, filler] : invariant_node) {
      nodes[filler].first_element_only = !invariant_read_per_element[tile];
    }
    // The fused step reads its inputs until its last element and writes
    // its outputs from its first.
    for (SlotId id : inputs) NoteUse(id, last_index);
    for (SlotId id : outputs) {
      SlotId root = alias_root_[id];
      if (first_def_[root] >= 0) {
        first_def_[root] = std::min(first_def_[root], first_index);
      }
    }
    exec::Step step;
    step.kernel = exec::MakeFusedKernel(
        first->count(), std::move(input_bytes), std::move(output_bytes),
        std::move(tile_bytes), std::move(nodes));
    step.inputs = std::move(inputs);
    step.outputs = std::move(outputs);
    step.where = std::move(description);
    fused_steps.push_back(std::move(step));
    fused_indices.push_back(first_index);
    fused_last_indices.push_back(last_index);
    fused_away_ += static_cast<int64_t>(members.size()) - 1;
    begin = end;
  }
  FuseRowReductions(fused_steps, fused_indices, fused_last_indices,
                    foreign_between);
  NoteInPlaceWrites(fused_steps, fused_indices, fused_last_indices);
  SequenceSmallSteps(fused_steps, fused_indices);
  region.steps = std::move(fused_steps);
  indices = std::move(fused_indices);
}

void Lowering::FuseRowReductions(
    std::vector<exec::Step>& steps, std::vector<int64_t>& indices,
    std::vector<int64_t>& last_indices,
    const std::function<bool(int64_t, int64_t)>& foreign_between) {
  std::vector<exec::Step> out;
  std::vector<int64_t> out_indices, out_last;
  size_t k = 0;
  while (k < steps.size()) {
    bool fused = false;
    if (k + 1 < steps.size()) {
      exec::Step& producer = steps[k];
      exec::Step& reduce = steps[k + 1];
      const ElementwiseKernel* elementwise = AsElementwise(producer);
      const exec::RowReduceParams* rows =
          exec::RowReduceParamsOf(*reduce.kernel);
      int reduced = -1;
      bool write_reduced = false;
      if (elementwise != nullptr && rows != nullptr &&
          elementwise->count() == rows->rows * rows->row_length &&
          elementwise->count() >= kMinFusedElements &&
          reduce.inputs.size() == 2 && reduce.outputs.size() == 1 &&
          !foreign_between(last_indices[k], indices[k + 1])) {
        SlotId operand = alias_root_[reduce.inputs[0]];
        for (size_t j = 0; j < producer.outputs.size(); ++j) {
          if (producer.outputs[j] == operand) reduced = static_cast<int>(j);
        }
        // An ordinary scratch value read by no one after the reduction
        // lives only in the reduction's buffer; any other is written as it
        // is reduced, which spares the reduction reading it back. Its rows
        // must be long enough to amortize a producer call per row.
        if (reduced >= 0 && !ScratchDeadAfter(operand, indices[k + 1])) {
          write_reduced = true;
          if (rows->row_length < kMinWrittenRowLength) reduced = -1;
        }
      }
      if (reduced >= 0) {
        exec::Step step;
        step.inputs = producer.inputs;
        step.inputs.push_back(reduce.inputs[1]);
        for (size_t j = 0; j < producer.outputs.size(); ++j) {
          if (static_cast<int>(j) != reduced || write_reduced) {
            step.outputs.push_back(producer.outputs[j]);
          }
        }
        step.outputs.push_back(reduce.outputs[0]);
        for (SlotId id : step.inputs) NoteUse(id, indices[k + 1]);
        for (SlotId id : step.outputs) {
          SlotId root = alias_root_[id];
          if (first_def_[root] >= 0) {
            first_def_[root] = std::min(first_def_[root], indices[k]);
          }
        }
        if (!write_reduced) {
          first_def_[producer.outputs[reduced]] = -1;  // never in memory
        }
        step.where = producer.where.rfind("fusion of", 0) == 0
                         ? producer.where + "; " + reduce.where
                         : "fusion of " + producer.where + "; " + reduce.where;
        auto* kernel =
            static_cast<ElementwiseKernel*>(producer.kernel.release());
        step.kernel = exec::MakeFusedRowReduceKernel(
            *rows, std::unique_ptr<ElementwiseKernel>(kernel), reduced,
            write_reduced);
        out.push_back(std::move(step));
        out_indices.push_back(indices[k]);
        out_last.push_back(indices[k + 1]);
        ++fused_away_;
        k += 2;
        fused = true;
      }
    }
    if (!fused) {
      out.push_back(std::move(steps[k]));
      out_indices.push_back(indices[k]);
      out_last.push_back(last_indices[k]);
      ++k;
    }
  }
  steps = std::move(out);
  indices = std::move(out_indices);
  last_indices = std::move(out_last);
}

void Lowering::NoteInPlaceWrites(const std::vector<exec::Step>& steps,
                                 const std::vector<int64_t>& indices,
                                 const std::vector<int64_t>& last_indices) {
  for (size_t k = 0; k < steps.size(); ++k) {
    const exec::Step& step = steps[k];
    NoteInPlaceUpdates(step, indices[k], last_indices[k]);
    const ElementwiseKernel* kernel = AsElementwise(step);
    if (kernel == nullptr) continue;
    std::set<SlotId> taken;
    for (size_t j = 0; j < step.outputs.size(); ++j) {
      SlotId out = step.outputs[j];
      if (alias_root_[out] != out || slot(out).kind != exec::SlotKind::kTemp) {
        continue;
      }
      for (size_t i = 0; i < step.inputs.size(); ++i) {
        SlotId root = alias_root_[step.inputs[i]];
        if (taken.count(root) != 0 ||
            !ScratchDeadAfter(root, last_indices[k]) ||
            slot(root).byte_size() != slot(out).byte_size()) {
          continue;
        }
        // Every read of the input, through any alias, must allow it.
        bool can = true;
        for (size_t r = 0; r < step.inputs.size() && can; ++r) {
          if (alias_root_[step.inputs[r]] == root) {
            can =
                kernel->CanWriteOver(static_cast<int>(j), static_cast<int>(r));
          }
        }
        if (!can) continue;
        taken.insert(root);
        in_place_writes_.push_back({out, root, indices[k], last_indices[k]});
        break;
      }
    }
  }
}

void Lowering::NoteInPlaceUpdates(const exec::Step& step, int64_t first,
                                  int64_t last) {
  for (size_t j = 0; j < step.outputs.size(); ++j) {
    int updated = step.kernel->UpdatedInput(static_cast<int>(j));
    SlotId out = step.outputs[j];
    if (updated < 0 || alias_root_[out] != out ||
        slot(out).kind != exec::SlotKind::kTemp) {
      continue;
    }
    SlotId root = alias_root_[step.inputs[updated]];
    if (ScratchDeadAfter(root, last) &&
        slot(root).byte_size() == slot(out).byte_size() &&
        UpdatesInPlace(step, static_cast<int>(j), root)) {
      in_place_writes_.push_back({out, root, first, last});
    }
  }
}

}  // namespace kiln::compile
