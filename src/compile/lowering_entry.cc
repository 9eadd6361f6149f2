// The lowering of an entry function: its arguments and results as the
// plan's argument and output slots, donation (outputs computed into the
// memory of the arguments they alias), and Finish, which places the
// scratch slots in the arena (the pipeline's `plan` step).
#include "compile/lowering.h"

#include <algorithm>
#include <map>
#include <set>

#include "compile/buffer_planner.h"
#include "compile/lower_families.h"
#include "exec/kernels/elementwise_kernel.h"

namespace kiln::compile {

namespace {

// The output an argument is donated to: tf.aliasing_output = N; or -1.
int AliasedOutput(const ir::Operation& func, int argument) {
  ir::Attribute attrs = ir::func::ArgAttrs(func, argument);
  if (!attrs.is(ir::AttrKind::kDictionary)) return -1;
  ir::Attribute alias = attrs.Get("tf.aliasing_output");
  if (alias.is(ir::AttrKind::kInteger))
    return static_cast<int>(alias.int_value());
  return -1;
}

bool IsBufferDonor(const ir::Operation& func, int argument) {
  ir::Attribute attrs = ir::func::ArgAttrs(func, argument);
  if (!attrs.is(ir::AttrKind::kDictionary)) return false;
  ir::Attribute donor = attrs.Get("jax.buffer_donor");
  return donor.is(ir::AttrKind::kBool) ? donor.bool_value()
                                       : donor.is(ir::AttrKind::kUnit);
}

}  // namespace

Status Lowering::LowerEntry(const ir::Operation& func,
                            const std::vector<ir::Type>& argument_types,
                            const std::map<int, std::string>& argument_values) {
  const ir::Block& body = ir::func::Body(func);
  if (!argument_types.empty() &&
      static_cast<int>(argument_types.size()) != body.num_arguments()) {
    return InvalidArgumentError("@", ir::func::Name(func), " takes ",
                                body.num_arguments(), " arguments; ",
                                argument_types.size(), " types were given");
  }
  exec::Region& main = plan_.mutable_main();
  frames_.push_back(Frame{&main, next_frame_id_++, {}});
  // Arguments: one slot per leaf.
  std::vector<int> leaf_owner;  // argument number of each argument leaf
  for (int i = 0; i < body.num_arguments(); ++i) {
    const ir::Value* argument = body.argument(i);
    ir::Type type =
        argument_types.empty() ? argument->type() : argument_types[i];
    std::vector<ir::Type> leaves;
    FlattenType(type, leaves);
    std::vector<SlotId> slots;
    for (const ir::Type& leaf : leaves) {
      exec::Slot slot;
      if (leaf.IsToken()) {
        slot.is_token = true;
        slot.shape = ArrayShape{ElementType::kI1, {0}};
      } else if (leaf.IsTensor()) {
        if (!leaf.HasStaticShape()) {
          return InvalidArgumentError(
              "argument ", i, " of @", ir::func::Name(func), " has type ",
              leaf.ToString(),
              "; give concrete argument shapes to compile a program with "
              "dynamic shapes");
        }
        ASSIGN_OR_RETURN(slot.shape.type, SlotElementType(leaf));
        slot.shape.dims = leaf.shape();
      } else {
        return UnimplementedError("argument ", i, " of @", ir::func::Name(func),
                                  " has unsupported type ", leaf.ToString());
      }
      slot.kind = exec::SlotKind::kArgument;
      slot.index = static_cast<int32_t>(plan_.arguments().size());
      plan_.mutable_arguments().push_back({slot.shape, slot.is_token});
      leaf_owner.push_back(i);
      SlotId id = AddSlot(slot);
      main.params.push_back(id);
      slots.push_back(id);
    }
    auto value = argument_values.find(i);
    if (value != argument_values.end() && slots.size() == 1 &&
        !slot(slots[0]).is_token) {
      // Specialize on a known value (a dimension variable).
      ASSIGN_OR_RETURN(SlotId constant,
                       NewConstant(slot(slots[0]).shape, value->second));
      slots[0] = constant;
    }
    Bind(argument, std::move(slots));
  }

  ASSIGN_OR_RETURN(std::vector<const ir::Value*> results, LowerBlockBody(body));
  const ir::Operation& terminator = *body.terminator();

  // Donation: which argument leaf each output leaf may alias.
  std::vector<SlotId> result_leaves;
  for (const ir::Value* value : results) {
    ASSIGN_OR_RETURN(std::vector<SlotId> leaves, Leaves(value));
    result_leaves.insert(result_leaves.end(), leaves.begin(), leaves.end());
  }
  std::vector<int> aliases(result_leaves.size(), -1);
  std::vector<bool> argument_taken(plan_.arguments().size(), false);
  for (size_t leaf = 0; leaf < leaf_owner.size(); ++leaf) {
    int output = AliasedOutput(func, leaf_owner[leaf]);
    if (output >= 0 && output < static_cast<int>(aliases.size()) &&
        aliases[output] < 0) {
      aliases[output] = static_cast<int>(leaf);
      argument_taken[leaf] = true;
    }
  }
  // The module-level form XLA's importers write:
  //   mhlo.input_output_alias = [{alias = {kind = "may_alias",
  //     parameter_index = array<i64>, parameter_number = 0 : i64},
  //     output_index = array<i64: 0>}]
  ir::Attribute module_aliases =
      module_.op().GetAttr("mhlo.input_output_alias");
  if (module_aliases.is(ir::AttrKind::kArray)) {
    for (const ir::Attribute& entry : module_aliases.array()) {
      if (!entry.is(ir::AttrKind::kDictionary)) continue;
      ir::Attribute output_index = entry.Get("output_index");
      ir::Attribute alias = entry.Get("alias");
      if (!alias.is(ir::AttrKind::kDictionary)) continue;
      ir::Attribute parameter = alias.Get("parameter_number");
      if (!parameter.is(ir::AttrKind::kInteger)) continue;
      int64_t output = 0;
      if (output_index.is(ir::AttrKind::kDenseArray) &&
          !output_index.dense_ints().empty()) {
        output = output_index.dense_ints()[0];
      }
      if (output < 0 || output >= static_cast<int64_t>(aliases.size()) ||
          aliases[output] >= 0) {
        continue;
      }
      for (size_t leaf = 0; leaf < leaf_owner.size(); ++leaf) {
        if (leaf_owner[leaf] == parameter.int_value() &&
            !argument_taken[leaf]) {
          aliases[output] = static_cast<int>(leaf);
          argument_taken[leaf] = true;
          break;
        }
      }
    }
  }
  for (size_t leaf = 0; leaf < leaf_owner.size(); ++leaf) {
    if (argument_taken[leaf] || !IsBufferDonor(func, leaf_owner[leaf]))
      continue;
    // A donor goes to the first output of the same shape not yet aliased.
    for (size_t output = 0; output < aliases.size(); ++output) {
      const exec::Slot& out = slot(result_leaves[output]);
      if (aliases[output] < 0 && !out.is_token &&
          out.shape == plan_.arguments()[leaf].shape) {
        aliases[output] = static_cast<int>(leaf);
        argument_taken[leaf] = true;
        break;
      }
    }
  }

  // Outputs: a value computed by a step of the entry region is written in
  // place into the output buffer; anything else (an argument, a constant, a
  // value returned twice, an aliased output) is copied there at the end.
  std::set<SlotId> claimed;
  std::vector<std::pair<SlotId, SlotId>> late_copies;  // aliased outputs
  std::vector<std::pair<SlotId, SlotId>> copies;
  for (size_t k = 0; k < result_leaves.size(); ++k) {
    SlotId id = result_leaves[k];
    const exec::Slot& s = slot(id);
    plan_.mutable_outputs().push_back({s.shape, s.is_token});
    // A reshape or bitcast of a computed value is the same bytes: the value
    // is computed into the output buffer too.
    SlotId root = alias_root_[id];
    const exec::Slot& r = slot(root);
    if (r.kind == exec::SlotKind::kTemp && r.is_token == s.is_token &&
        r.shape.byte_size() == s.shape.byte_size() &&
        slot_frame_[root] == frames_.back().id && first_def_[root] >= 0 &&
        !claimed.count(root) &&
        (aliases[k] < 0 ||
         CanComputeIntoDonatedOutput(main, root, main.params[aliases[k]],
                                     result_leaves))) {
      claimed.insert(root);
      // The slot and every alias of it now live in the output buffer.
      for (size_t other = 0; other < plan_.slots().size(); ++other) {
        if (alias_root_[other] != root) continue;
        exec::Slot& mutable_slot = plan_.mutable_slots()[other];
        mutable_slot.kind = exec::SlotKind::kOutput;
        mutable_slot.index = static_cast<int32_t>(k);
      }
      continue;
    }
    exec::Slot out;
    out.shape = s.shape;
    out.is_token = s.is_token;
    out.kind = exec::SlotKind::kOutput;
    out.index = static_cast<int32_t>(k);
    SlotId out_id = AddSlot(out);
    (aliases[k] >= 0 ? late_copies : copies).emplace_back(id, out_id);
  }
  for (auto [from, to] : copies) EmitCopy(terminator, from, to);
  // Aliased outputs may overwrite donated arguments: snapshot arguments
  // that are still needed, then write them last.
  for (auto& [from, to] : late_copies) {
    if (slot(from).kind == exec::SlotKind::kArgument) {
      SlotId snapshot = NewTemp(slot(from).shape);
      EmitCopy(terminator, from, snapshot);
      from = snapshot;
    }
  }
  for (auto [from, to] : late_copies) EmitCopy(terminator, from, to);
  for (size_t k = 0; k < result_leaves.size(); ++k) {
    main.results.push_back(-1);
  }
  // The main region's results are the output slots, by output index.
  for (size_t id = 0; id < plan_.slots().size(); ++id) {
    const exec::Slot& s = plan_.slots()[id];
    if (s.kind == exec::SlotKind::kOutput && alias_root_[id] == id) {
      main.results[s.index] = static_cast<SlotId>(id);
    }
  }
  plan_.mutable_output_aliases() = aliases;
  if (fuse_elementwise_) FuseElementwiseSteps();
  frames_.pop_back();
  return OkStatus();
}

bool Lowering::UpdatesInPlace(const exec::Step& step, int output,
                              SlotId root) const {
  const int updated = step.kernel->UpdatedInput(output);
  if (updated < 0 || alias_root_[step.inputs[updated]] != root) return false;
  // The update and the indices are read while the output is written: none
  // may be a view of that memory.
  for (size_t i = 0; i < step.inputs.size(); ++i) {
    if (static_cast<int>(i) != updated && alias_root_[step.inputs[i]] == root) {
      return false;
    }
  }
  return true;
}

bool Lowering::CanComputeIntoDonatedOutput(
    const exec::Region& main, SlotId value, SlotId argument,
    const std::vector<SlotId>& returned) const {
  if (slot(argument).kind != exec::SlotKind::kArgument) return false;
  // The argument returned as itself is copied out at the end, after the
  // value is written.
  for (SlotId r : returned) {
    if (alias_root_[r] == alias_root_[argument]) return false;
  }
  auto reads_argument = [&](const exec::Step& step) {
    for (SlotId in : step.inputs) {
      if (alias_root_[in] == alias_root_[argument]) return true;
    }
    return false;
  };
  auto writes_value = [&](const exec::Step& step) {
    for (SlotId out : step.outputs) {
      if (alias_root_[out] == value) return true;
    }
    return false;
  };
  // A step runs regions when their steps took indices between its own and
  // the previous step's of this region.
  const std::vector<int64_t>& indices =
      frame_step_indices_.at(frames_.back().id);
  if (indices.size() != main.steps.size()) return false;
  auto runs_regions = [&](size_t position) {
    return OtherFrameStepBetween(position == 0 ? -1 : indices[position - 1],
                                 indices[position]);
  };
  size_t defining = main.steps.size();
  for (size_t p = 0; p < main.steps.size(); ++p) {
    if (writes_value(main.steps[p])) {
      if (defining != main.steps.size()) return false;  // written twice
      defining = p;
    }
  }
  if (defining == main.steps.size() || runs_regions(defining)) return false;
  for (size_t p = 0; p < main.steps.size(); ++p) {
    const exec::Step& step = main.steps[p];
    if (p > defining) {
      if (reads_argument(step) || runs_regions(p)) return false;
      continue;
    }
    if (!reads_argument(step)) continue;
    const auto* elementwise =
        dynamic_cast<const exec::ElementwiseKernel*>(step.kernel.get());
    if (elementwise == nullptr) {
      // Not fusable, so done before the defining step starts; but the
      // defining step itself must read element by element, or be an update
      // of the argument (a scatter into it) that reads it nowhere else.
      if (p == defining) {
        const auto out =
            std::find_if(step.outputs.begin(), step.outputs.end(),
                         [&](SlotId o) { return alias_root_[o] == value; });
        if (!UpdatesInPlace(step, static_cast<int>(out - step.outputs.begin()),
                            alias_root_[argument])) {
          return false;
        }
      }
      continue;
    }
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      if (alias_root_[step.inputs[i]] == alias_root_[argument] &&
          elementwise->reads_whole(static_cast<int>(i))) {
        return false;
      }
    }
  }
  return true;
}

Status Lowering::Finish() {
  plan_.set_num_collectives(next_collective_id_);
  std::vector<BufferRequest> requests;
  std::vector<SlotId> ids;
  std::vector<int64_t> request_of(plan_.slots().size(), -1);
  for (size_t id = 0; id < plan_.slots().size(); ++id) {
    const exec::Slot& s = plan_.slots()[id];
    if (s.kind != exec::SlotKind::kTemp || first_def_[id] < 0) continue;
    request_of[id] = static_cast<int64_t>(requests.size());
    requests.push_back({s.byte_size(), first_def_[id],
                        std::max(first_def_[id], last_use_[id])});
    ids.push_back(static_cast<SlotId>(id));
  }
  // In-place writes whose lifetimes are still as they were noted: the
  // output is first written by that step and the input last read by it
  // (a later reader, such as a loop that captures it, ends the claim).
  for (const InPlaceWrite& write : in_place_writes_) {
    int64_t out = request_of[write.output], in = request_of[write.input];
    if (out < 0 || in < 0 || alias_root_[write.output] != write.output ||
        alias_root_[write.input] != write.input ||
        slot(write.output).is_token || slot(write.input).is_token ||
        first_def_[write.output] != write.first ||
        last_use_[write.input] != write.last ||
        first_def_[write.input] >= write.first) {
      continue;
    }
    requests[out].takes_over = in;
  }
  BufferPlan buffers = PlanBuffers(requests, exec::kBufferAlignment);
  for (size_t i = 0; i < ids.size(); ++i) {
    plan_.mutable_slots()[ids[i]].offset = buffers.offsets[i];
  }
  for (size_t id = 0; id < plan_.slots().size(); ++id) {
    SlotId root = alias_root_[id];
    if (root != static_cast<SlotId>(id) &&
        plan_.slots()[id].kind == exec::SlotKind::kTemp) {
      plan_.mutable_slots()[id].offset = plan_.slots()[root].offset;
    }
  }
  plan_.set_arena_bytes(buffers.total_bytes);
  plan_.set_live_peak_bytes(buffers.live_peak_bytes);
  plan_.set_num_steps(counter_ - fused_away_);
  return OkStatus();
}

}  // namespace kiln::compile
