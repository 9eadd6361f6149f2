// The partitioner's driver: the entry's tiles in and out, the ops of each
// block rewritten in turn, and any value as a global value or a tile.
#include "compile/spmd/partitioner.h"

#include <numeric>
#include <optional>

#include "base/strings.h"
#include "compile/spmd/tile_ops.h"

namespace kiln::compile::spmd {

Status Partitioner::Run() {
  Operation* entry = module_.EntryFunction();
  for (Operation* func : module_.Functions()) {
    if (func == entry) {
      RETURN_IF_ERROR(PartitionEntry(*func));
    } else if (ir::func::HasBody(*func)) {
      RETURN_IF_ERROR(RewriteBlock(ir::func::Body(*func)));
    }
  }
  return OkStatus();
}

Status Partitioner::PartitionEntry(Operation& func) {
  ir::Block& body = ir::func::Body(func);
  // Result layouts are read before the body is rewritten (inference
  // looks at the ops that make the results).
  ASSIGN_OR_RETURN(std::vector<std::optional<TileLayout>> result_layouts,
                   ResultLayouts(func, meshes_, target_.num_partitions));
  OpList out;
  std::vector<Type> inputs;
  for (int i = 0; i < body.num_arguments(); ++i) {
    Value* argument = body.argument(i);
    std::string what = StrCat("argument ", i, " of @", ir::func::Name(func));
    ASSIGN_OR_RETURN(
        std::optional<TileLayout> layout,
        LayoutOfAttrs(ir::func::ArgAttrs(func, i), meshes_, argument->type(),
                      target_.num_partitions, what));
    if (layout) {
      Type global = argument->type();
      ASSIGN_OR_RETURN(std::vector<int64_t> tile,
                       TileShape(global, *layout, what));
      argument->set_type(global.WithShape(tile));
      Value* local = argument;
      if (layout->HasUnreduced()) {
        local = SumUnreduced(argument, *layout, out, argument->loc());
      }
      Value* handle = LocalHandle(local, out, argument->loc());
      tiled_[argument] =
          Tiled{handle, WithoutUnreduced(*layout), global, nullptr};
      if (layout->HasUnreduced()) {
        // The device's own partial value, where it goes on unreduced.
        partial_sums_[argument] = PartialSum{argument,
                                             GroupKeys(*layout),
                                             {local, handle},
                                             WithoutUnreduced(*layout)};
      }
    }
    inputs.push_back(argument->type());
  }
  current_block_is_entry_ = true;
  Status rewritten = RewriteOps(body.TakeOperations(), out);
  current_block_is_entry_ = false;
  RETURN_IF_ERROR(rewritten);

  Operation* terminator = out.empty() ? nullptr : out.back().get();
  if (terminator == nullptr || terminator->name() != "func.return") {
    return InvalidArgumentError("@", ir::func::Name(func),
                                " does not end in func.return");
  }
  std::unique_ptr<Operation> ret = std::move(out.back());
  out.pop_back();
  std::vector<Type> results;
  for (int i = 0; i < ret->num_operands(); ++i) {
    Value* result = ret->operand(i);
    std::string what = StrCat("result ", i, " of @", ir::func::Name(func));
    const std::optional<TileLayout>& layout =
        i < static_cast<int>(result_layouts.size()) ? result_layouts[i]
                                                    : std::nullopt;
    Attribute attrs = ir::func::ResultAttrs(func, i);
    const bool annotated =
        attrs.is(AttrKind::kDictionary) &&
        (attrs.Get("sdy.sharding") || attrs.Get("mhlo.sharding"));
    auto tiled = tiled_.find(result);
    Value* value = nullptr;
    std::optional<TileLayout> chosen = layout;
    if (!annotated && tiled != tiled_.end() &&
        !tiled->second.layout.IsReplicated()) {
      // A result the program leaves open goes out as the tile it is.
      chosen = tiled->second.layout;
      value = tiled->second.local;
    } else if (layout) {
      value = layout->HasUnreduced()
                  ? KnownPartials(result, *layout, out, ret->loc())
                  : nullptr;
      if (value == nullptr) {
        ASSIGN_OR_RETURN(value, TileOf(result, WithoutUnreduced(*layout), out,
                                       ret->loc(), what));
        if (layout->HasUnreduced()) {
          value = SplitUnreduced(value, *layout, out, ret->loc());
        }
      }
    } else {
      ASSIGN_OR_RETURN(value, Global(result, out, ret->loc()));
    }
    ret->SetOperand(i, value);
    results.push_back(value->type());
    chosen_result_layouts_.push_back(std::move(chosen));
  }
  out.push_back(std::move(ret));
  DropUnusedSums(out);
  body.SetOperations(std::move(out));
  func.SetAttr("function_type",
               Attribute::TypeAttr(Type::Function(inputs, results)));
  return OkStatus();
}

Status Partitioner::RewriteBlock(ir::Block& block) {
  OpList out;
  RETURN_IF_ERROR(RewriteOps(block.TakeOperations(), out));
  block.SetOperations(std::move(out));
  return OkStatus();
}

StatusOr<Value*> Partitioner::Global(Value* value, OpList& out,
                                     const ir::Location& loc) {
  auto it = tiled_.find(value);
  if (it == tiled_.end()) return value;
  Tiled& tiled = it->second;
  // A layout of one tile: every device has the whole value.
  if (tiled.layout.IsReplicated()) return tiled.local;
  if (tiled.global == nullptr) {
    TileOps ops(out, loc, target_, next_channel_);
    ASSIGN_OR_RETURN(tiled.global, ops.Assemble(tiled.local, tiled.global_type,
                                                tiled.layout));
  }
  return tiled.global;
}

StatusOr<Value*> Partitioner::TileOf(Value* value, const TileLayout& layout,
                                     OpList& out, const ir::Location& loc,
                                     std::string_view what) {
  auto it = tiled_.find(value);
  if (it != tiled_.end() && SameTiles(it->second.layout, layout)) {
    return it->second.local;
  }
  if (!layout.IsReplicated() && !layout.HasUnreduced() &&
      !tiled_.count(value)) {
    std::string key;
    for (int64_t t : layout.tiles) key += StrCat(t, ",");
    for (const auto& tile : layout.tile_of_device) {
      for (int64_t c : tile) key += StrCat(c, ",");
    }
    ASSIGN_OR_RETURN(Value * made, Rematerialize(value, layout, key, out));
    if (made != nullptr) return made;
  }
  if (it != tiled_.end() && !it->second.layout.IsReplicated() &&
      !it->second.layout.HasUnreduced() && !layout.IsReplicated() &&
      !layout.HasUnreduced()) {
    // From one cut to another without the whole value, where it can.
    TileOps ops(out, loc, target_, next_channel_);
    if (Value* moved = ops.Reshard(it->second.local, it->second.global_type,
                                   it->second.layout, layout)) {
      return moved;
    }
  }
  ASSIGN_OR_RETURN(Value * global, Global(value, out, loc));
  if (layout.IsReplicated()) return global;
  TileOps ops(out, loc, target_, next_channel_);
  return ops.Slice(global, layout, what);
}

Status Partitioner::UseGlobals(Operation& op, OpList& out) {
  for (int i = 0; i < op.num_operands(); ++i) {
    ASSIGN_OR_RETURN(Value * global, Global(op.operand(i), out, op.loc()));
    op.SetOperand(i, global);
  }
  if (op.num_regions() == 0) return OkStatus();
  // Values of this block that the regions read: their global values are
  // made here, where every region can see them.
  std::vector<Value*> outer;
  for (const auto& region : op.regions()) {
    for (const auto& block : region->blocks()) {
      for (const auto& inner : block->operations()) {
        inner->Walk([&](Operation& nested) {
          for (Value* operand : nested.operands()) {
            if (tiled_.count(operand)) outer.push_back(operand);
          }
        });
      }
    }
  }
  for (Value* value : outer) {
    ASSIGN_OR_RETURN(Value * global, Global(value, out, op.loc()));
    substitutions_[value] = global;
  }
  return OkStatus();
}

TileLayout Partitioner::WholeLayout(int64_t rank) const {
  const size_t devices = target_.num_partitions;
  TileLayout layout;
  layout.tiles.assign(rank, 1);
  layout.tile_of_device.assign(devices, std::vector<int64_t>(rank, 0));
  layout.copy_of_device.resize(devices);
  std::iota(layout.copy_of_device.begin(), layout.copy_of_device.end(), 0);
  return layout;
}

bool Partitioner::IsWhole(Value* value) const {
  auto it = tiled_.find(value);
  return it == tiled_.end() || it->second.layout.IsReplicated();
}

const Type& Partitioner::GlobalType(Value* value) const {
  auto it = tiled_.find(value);
  return it != tiled_.end() ? it->second.global_type : value->type();
}

Value* Partitioner::LocalHandle(Value* local, OpList& out,
                                const ir::Location& loc) {
  auto cast =
      std::make_unique<Operation>("builtin.unrealized_conversion_cast",
                                  std::vector<Type>{local->type()}, loc);
  cast->AddOperand(local);
  out.push_back(std::move(cast));
  return out.back()->result(0);
}

Status Partitioner::RewriteOps(OpList ops, OpList& out) {
  for (std::unique_ptr<Operation>& op : ops) {
    const std::string target = CustomCallTarget(*op);
    // The sharding of @SPMDFullToShardShape's operand, from the @Sharding
    // call that makes it (read before that call is folded away).
    std::string full_to_shard_sharding;
    if (target == "SPMDFullToShardShape" && op->num_operands() == 1) {
      const Operation* producer = op->operand(0)->defining_op();
      if (producer != nullptr && CustomCallTarget(*producer) == "Sharding") {
        Attribute sharding = producer->GetAttr("mhlo.sharding");
        if (sharding.is(AttrKind::kString)) {
          full_to_shard_sharding = sharding.string_value();
        }
      }
    }
    for (int i = 0; i < op->num_operands(); ++i) {
      auto it = substitutions_.find(op->operand(i));
      if (it != substitutions_.end()) op->SetOperand(i, it->second);
    }
    if (IsManualComputation(*op)) {
      RETURN_IF_ERROR(InlineManualComputation(*op, out));
      removed_.push_back(std::move(op));
      continue;
    }
    if (op->name() == "func.call" && inline_depth_ < kMaxInlineDepth) {
      ASSIGN_OR_RETURN(bool inlined, InlineCall(*op, out));
      if (inlined) {
        removed_.push_back(std::move(op));
        continue;
      }
    }
    if (target == "SPMDFullToShardShape" || target == "SPMDShardToFullShape") {
      RETURN_IF_ERROR(
          RewriteGspmdShapeCall(*op, target, full_to_shard_sharding, out));
      removed_.push_back(std::move(op));
      continue;
    }
    ASSIGN_OR_RETURN(bool per_tile, RunPartitionedCallback(*op, out));
    if (per_tile) {
      out.push_back(std::move(op));
      continue;
    }
    if (target == "InspectSharding" && op->num_operands() == 1 &&
        op->num_results() == 1) {
      // The operand's sharding, then the operand itself.
      Value* operand = op->operand(0);
      auto it = tiled_.find(operand);
      RETURN_IF_ERROR(ReportInspectedSharding(
          *op, it != tiled_.end() ? it->second.layout : TileLayout{}));
      if (it != tiled_.end()) {
        Tiled forwarded = it->second;
        tiled_[op->result(0)] = forwarded;
      } else {
        substitutions_[op->result(0)] = operand;
      }
      removed_.push_back(std::move(op));
      continue;
    }
    // A Shardy constraint or reshard of the entry's values (not in a
    // manual computation's body, nor in a region) puts its value in the
    // constraint's cut, as XLA does: a sharding_constraint is where the
    // user fixes a layout, and the result's sharding is that one.
    if ((op->name() == "sdy.sharding_constraint" ||
         op->name() == "sdy.reshard") &&
        op->num_operands() == 1 && op->num_results() == 1 &&
        current_block_is_entry_ && manual_depth_ == 0) {
      ASSIGN_OR_RETURN(bool resharded, Reshard(*op, out));
      if (resharded) {
        removed_.push_back(std::move(op));
        continue;
      }
    }
    // Other sharding annotations are identities once the program is
    // partitioned; they leave the partition's program.
    if ((op->name() == "sdy.sharding_constraint" ||
         op->name() == "sdy.reshard" ||
         op->name() == "sdy.propagation_barrier" || target == "Sharding") &&
        op->num_operands() == 1 && op->num_results() == 1) {
      substitutions_[op->result(0)] = op->operand(0);
      removed_.push_back(std::move(op));
      continue;
    }
    ASSIGN_OR_RETURN(std::optional<int64_t> device, MaximalDevice(*op));
    if (device) {
      RETURN_IF_ERROR(UseGlobals(*op, out));
      RETURN_IF_ERROR(RunOnOneDevice(std::move(op), *device, out));
      continue;
    }
    if (!target.empty()) {
      ASSIGN_OR_RETURN(bool batched, RunBatchPartitionedCall(*op, out));
      if (batched) {
        Operation& call = *op;
        out.push_back(std::move(op));
        for (Value* result : call.results()) {
          pending_batched_[result].local = LocalHandle(result, out, call.loc());
          tiled_[result] = std::move(pending_batched_[result]);
        }
        pending_batched_.clear();
        continue;
      }
    }
    // An identity cast of a summed tile keeps the partials it sums.
    const Value* cast_of =
        op->name() == "builtin.unrealized_conversion_cast" &&
                op->num_operands() == 1 && op->num_results() == 1 &&
                op->operand(0)->type() == op->result(0)->type()
            ? op->operand(0)
            : nullptr;
    if (cast_of != nullptr && partial_sums_.count(cast_of) &&
        !tiled_.count(cast_of)) {
      // A whole sum: the cast is the sum itself, and keeps its partials.
      substitutions_[op->result(0)] = op->operand(0);
      removed_.push_back(std::move(op));
      continue;
    }
    {
      // A gather from a cut table: each device's partial rows, added.
      TileLayout layout;
      std::vector<std::vector<int64_t>> keys;
      ASSIGN_OR_RETURN(Value * partial,
                       GatherFromCutOperand(*op, out, layout, keys));
      if (partial != nullptr) {
        Value* result = op->result(0);
        Value* summed =
            AllReduce(partial, "stablehlo.add", keys, out, op->loc());
        Value* handle = LocalHandle(summed, out, op->loc());
        partial_sums_[result] =
            PartialSum{partial, keys, {summed, handle}, layout};
        tiled_[result] = Tiled{handle, layout, result->type(), nullptr};
        removed_.push_back(std::move(op));
        continue;
      }
    }
    ASSIGN_OR_RETURN(bool on_tiles, RunOnTiles(*op, out));
    if (!on_tiles) {
      ASSIGN_OR_RETURN(on_tiles, RunShapeOpOnTiles(*op, out));
    }
    pending_combine_.clear();
    if (!on_tiles) {
      ASSIGN_OR_RETURN(on_tiles, RunReduceOnTiles(*op, out));
    }
    if (!on_tiles) {
      ASSIGN_OR_RETURN(on_tiles, RunDotOnTiles(*op, out));
    }
    if (!on_tiles) {
      ASSIGN_OR_RETURN(on_tiles, RunConvolutionOnTiles(*op, out));
    }
    if (!on_tiles) {
      ASSIGN_OR_RETURN(on_tiles, RunGatherOnTiles(*op, out));
    }
    if (!on_tiles) {
      ASSIGN_OR_RETURN(on_tiles, RunScatterOnTiles(*op, out));
    }
    if (on_tiles) {
      Value* result = op->result(0);
      const ir::Location loc = op->loc();
      out.push_back(std::move(op));
      Value* local = result;
      const bool summed = pending_combine_ == "stablehlo.add";
      if (!pending_combine_.empty()) {
        local =
            AllReduce(result, pending_combine_, pending_group_key_, out, loc);
        pending_combine_.clear();
      }
      pending_tiled_.local = LocalHandle(local, out, loc);
      if (summed) {
        partial_sums_[result] = PartialSum{result,
                                           pending_group_key_,
                                           {local, pending_tiled_.local},
                                           pending_tiled_.layout};
      } else if (auto sum = cast_of == nullptr ? partial_sums_.end()
                                               : partial_sums_.find(cast_of);
                 sum != partial_sums_.end()) {
        PartialSum forwarded = sum->second;
        forwarded.chain.push_back(result);
        forwarded.chain.push_back(pending_tiled_.local);
        partial_sums_[result] = std::move(forwarded);
      }
      tiled_[result] = std::move(pending_tiled_);
      continue;
    }
    {
      // The entry's return takes tiles as they are (PartitionEntry).
      const bool entry_return = op->name() == "func.return" &&
                                op->parent_block() == nullptr &&
                                current_block_is_entry_;
      if (!entry_return) RETURN_IF_ERROR(UseGlobals(*op, out));
      for (const auto& region : op->regions()) {
        for (const auto& block : region->blocks()) {
          const bool saved = current_block_is_entry_;
          current_block_is_entry_ = false;
          Status status = RewriteBlock(*block);
          current_block_is_entry_ = saved;
          RETURN_IF_ERROR(status);
        }
      }
    }
    out.push_back(std::move(op));
  }
  return OkStatus();
}

}  // namespace kiln::compile::spmd
