// Calls and manual regions: func.call and sdy.manual_computation inlined,
// GSPMD's shard/full-shape calls, sharding constraints, and custom calls run
// per partition, per share of a batch, or on one device.
#include "compile/spmd/partitioner.h"

#include <algorithm>

#include "base/strings.h"

namespace kiln::compile::spmd {

StatusOr<bool> Partitioner::Reshard(Operation& op, OpList& out) {
  Value* operand = op.operand(0);
  const Type& type = GlobalType(operand);
  if (!type.IsTensor() || !type.HasStaticShape()) return false;
  StatusOr<TensorSharding> sharding =
      ParseTensorSharding(op.GetAttr("sharding").ToString());
  if (!sharding.ok()) return false;
  StatusOr<TileLayout> layout =
      LayoutOfShardy(*sharding, meshes_, type.rank(), target_.num_partitions);
  if (!layout.ok() || layout->HasUnreduced()) return false;
  std::string what = op.Describe();
  if (layout->IsReplicated()) {
    ASSIGN_OR_RETURN(Value * whole, Global(operand, out, op.loc()));
    substitutions_[op.result(0)] = whole;
    return true;
  }
  if (!TileShape(type, *layout, what).ok()) return false;
  ASSIGN_OR_RETURN(Value * local,
                   TileOf(operand, *layout, out, op.loc(), what));
  tiled_[op.result(0)] =
      Tiled{LocalHandle(local, out, op.loc()), *layout, type, nullptr};
  return true;
}

StatusOr<bool> Partitioner::RunPartitionedCallback(Operation& op, OpList& out) {
  if (CustomCallTarget(op) != "kiln_python_callback") return false;
  Attribute config = op.GetAttr("mhlo.backend_config");
  Attribute partitioned = config.is(AttrKind::kDictionary)
                              ? config.Get("partitioned")
                              : Attribute();
  if (!partitioned.is(AttrKind::kBool) || !partitioned.bool_value()) {
    return false;
  }
  for (const Value* result : op.results()) {
    if (!result->type().IsToken()) {
      return InvalidArgumentError(op.Describe(),
                                  ": a partitioned host callback returns "
                                  "only tokens");
    }
  }
  for (int i = 0; i < op.num_operands(); ++i) {
    Value* operand = op.operand(i);
    auto it = tiled_.find(operand);
    if (it == tiled_.end()) continue;  // whole on every device
    const TileLayout layout = it->second.layout;
    ASSIGN_OR_RETURN(Value * local,
                     TileOf(operand, layout, out, op.loc(), op.Describe()));
    op.SetOperand(i, local);
  }
  op.RemoveAttr("sdy.sharding");
  op.RemoveAttr("mhlo.sharding");
  return true;
}

Status Partitioner::ReportInspectedSharding(const Operation& op,
                                            const TileLayout& layout) {
  if (!target_.report_inspections) return OkStatus();
  return CallInspectSharding(op, layout);
}

StatusOr<bool> Partitioner::RunBatchPartitionedCall(Operation& op,
                                                    OpList& out) {
  if (op.num_regions() != 0 || op.num_results() == 0 ||
      !IsBatchPartitionableTarget(CustomCallTarget(op))) {
    return false;
  }
  Attribute frontend = op.GetAttr("mhlo.frontend_attributes");
  if (!frontend.is(AttrKind::kDictionary)) return false;
  Attribute batch_attr = frontend.Get("num_batch_dims");
  if (!batch_attr.is(AttrKind::kString)) return false;
  std::optional<int64_t> parsed = ParseInt64(batch_attr.string_value());
  if (!parsed || *parsed <= 0) return false;
  const size_t b = static_cast<size_t>(*parsed);
  const Tiled* reference = nullptr;
  for (Value* operand : op.operands()) {
    auto it = tiled_.find(operand);
    if (it != tiled_.end() && !it->second.layout.IsReplicated()) {
      reference = &it->second;
      break;
    }
  }
  if (reference == nullptr) return false;
  const TileLayout& ref = reference->layout;
  const std::vector<int64_t>& ref_shape = reference->global_type.shape();
  if (ref_shape.size() < b) return false;
  for (size_t d = b; d < ref.tiles.size(); ++d) {
    if (ref.tiles[d] != 1) return false;
  }
  const std::vector<int64_t> batch(ref_shape.begin(), ref_shape.begin() + b);
  auto fits = [&](const Type& type) {
    return type.IsTensor() && type.HasStaticShape() &&
           type.shape().size() >= b &&
           std::equal(batch.begin(), batch.end(), type.shape().begin());
  };
  // The batch layout over a value of `rank` dimensions.
  auto layout_of_rank = [&](size_t rank) {
    TileLayout layout = ref;
    layout.tiles.assign(ref.tiles.begin(), ref.tiles.begin() + b);
    layout.tiles.resize(rank, 1);
    for (std::vector<int64_t>& tile : layout.tile_of_device) {
      tile.resize(b);
      tile.resize(rank, 0);
    }
    return layout;
  };
  for (Value* operand : op.operands()) {
    auto it = tiled_.find(operand);
    const Type& global =
        it != tiled_.end() ? it->second.global_type : operand->type();
    if (!fits(global)) return false;
  }
  for (Value* result : op.results()) {
    if (!fits(result->type())) return false;
  }
  for (int i = 0; i < op.num_operands(); ++i) {
    Value* operand = op.operand(i);
    auto it = tiled_.find(operand);
    const Type& global =
        it != tiled_.end() ? it->second.global_type : operand->type();
    ASSIGN_OR_RETURN(Value * local,
                     TileOf(operand, layout_of_rank(global.rank()), out,
                            op.loc(), op.Describe()));
    op.SetOperand(i, local);
  }
  for (Value* result : op.results()) {
    const Type global = result->type();
    TileLayout layout = layout_of_rank(global.rank());
    ASSIGN_OR_RETURN(std::vector<int64_t> tile,
                     TileShape(global, layout, op.Describe()));
    result->set_type(global.WithShape(tile));
    pending_batched_[result] =
        Tiled{nullptr, std::move(layout), global, nullptr};
  }
  // The result layouts XLA would report for the call are the operands';
  // the op's own sharding annotation no longer describes its tiles.
  op.RemoveAttr("sdy.sharding");
  op.RemoveAttr("mhlo.sharding");
  return true;
}

StatusOr<std::optional<int64_t>> Partitioner::MaximalDevice(
    const Operation& op) const {
  Attribute shardy = op.attributes().Get("sdy.sharding");
  if (shardy) {
    StatusOr<std::vector<TensorSharding>> shardings =
        ParseShardingPerValue(shardy.ToString());
    if (!shardings.ok() || shardings->empty()) return std::nullopt;
    const TensorSharding& first = (*shardings)[0];
    const Mesh* mesh = nullptr;
    if (first.inline_mesh) {
      mesh = &*first.inline_mesh;
    } else if (auto it = meshes_.find(first.mesh_name); it != meshes_.end()) {
      mesh = &it->second;
    }
    if (mesh == nullptr || !mesh->axis_names.empty() ||
        mesh->device_ids.size() != 1) {
      return std::nullopt;
    }
    return std::optional<int64_t>(mesh->device_ids[0]);
  }
  Attribute gspmd = op.attributes().Get("mhlo.sharding");
  if (gspmd.is(AttrKind::kString)) {
    const std::string& text = gspmd.string_value();
    size_t at = text.find("maximal device=");
    if (at == std::string::npos) return std::nullopt;
    std::optional<int64_t> device = ParseInt64(
        text.substr(at + 15, text.find_first_of(" }", at + 15) - (at + 15)));
    if (device) return device;
  }
  return std::nullopt;
}

Status Partitioner::RunOnOneDevice(std::unique_ptr<Operation> op,
                                   int64_t device, OpList& out) {
  if (device < 0 || device >= target_.num_partitions) {
    return InvalidArgumentError(op->Describe(), ": placed on device ", device,
                                " of a program of ", target_.num_partitions,
                                " partitions");
  }
  const bool here = device == target_.partition_id;
  Operation& placed = *op;
  const ir::Location loc = op->loc();
  std::vector<Value*> results;
  if (here) {
    op->RemoveAttr("sdy.sharding");
    out.push_back(std::move(op));
    results = placed.results();
  }
  // The group: the placed device first (the broadcast's source), then
  // the others, in every replica.
  std::vector<int64_t> group = {device};
  for (int64_t d = 0; d < target_.num_partitions; ++d) {
    if (d != device) group.push_back(d);
  }
  for (int i = 0; i < placed.num_results(); ++i) {
    const Type& type = placed.result(i)->type();
    Value* value = here ? results[i] : nullptr;
    if (type.IsToken()) {
      if (!here) {
        auto token = std::make_unique<Operation>("stablehlo.after_all",
                                                 std::vector<Type>{type}, loc);
        out.push_back(std::move(token));
        value = out.back()->result(0);
      }
      substitutions_[placed.result(i)] = value;
      continue;
    }
    if (!type.IsTensor() || !type.HasStaticShape()) {
      return UnimplementedError(placed.Describe(), ": result ", i, " (",
                                type.ToString(),
                                ") of an op placed on one device");
    }
    if (!here) value = Zeros(type, out, loc);
    auto broadcast = std::make_unique<Operation>(
        "stablehlo.collective_broadcast", std::vector<Type>{type}, loc);
    broadcast->AddOperand(value);
    broadcast->SetAttr("replica_groups", ReplicaGroups(group, 1));
    broadcast->SetAttr("channel_handle", Attribute::Channel(ir::ChannelHandle{
                                             next_channel_++, 1}));
    out.push_back(std::move(broadcast));
    substitutions_[placed.result(i)] = out.back()->result(0);
  }
  if (!here) removed_.push_back(std::move(op));
  return OkStatus();
}

StatusOr<bool> Partitioner::InlineCall(Operation& call, OpList& out) {
  Attribute callee_attr = call.GetAttr("callee");
  if (!callee_attr.is(AttrKind::kSymbolRef)) return false;
  const Operation* callee = module_.LookupFunction(callee_attr.symbol_root());
  if (callee == nullptr || !ir::func::HasBody(*callee)) return false;
  const ir::Block& body = ir::func::Body(*callee);
  if (body.num_arguments() != call.num_operands()) return false;
  const Operation* terminator = body.terminator();
  if (terminator == nullptr || terminator->name() != "func.return" ||
      terminator->num_operands() != call.num_results()) {
    return false;
  }
  std::map<const Value*, Value*> value_map;
  for (int i = 0; i < call.num_operands(); ++i) {
    value_map[body.argument(i)] = call.operand(i);
  }
  OpList cloned;
  for (const auto& inner : body.operations()) {
    if (inner.get() == terminator) break;
    cloned.push_back(inner->Clone(value_map));
  }
  ++inline_depth_;
  Status status = RewriteOps(std::move(cloned), out);
  --inline_depth_;
  RETURN_IF_ERROR(status);
  for (int i = 0; i < call.num_results(); ++i) {
    Value* result = terminator->operand(i);
    if (auto it = value_map.find(result); it != value_map.end()) {
      result = it->second;
    }
    if (auto it = substitutions_.find(result); it != substitutions_.end()) {
      result = it->second;
    }
    substitutions_[call.result(i)] = result;
  }
  return true;
}

Status Partitioner::InlineManualComputation(Operation& op, OpList& out) {
  ASSIGN_OR_RETURN(
      std::vector<TensorSharding> in_shardings,
      ParseShardingPerValue(op.GetAttr("in_shardings").ToString()));
  ASSIGN_OR_RETURN(
      std::vector<TensorSharding> out_shardings,
      ParseShardingPerValue(op.GetAttr("out_shardings").ToString()));
  ASSIGN_OR_RETURN(std::vector<std::string> manual_axes,
                   ParseManualAxes(op.GetAttr("manual_axes").ToString()));
  if (op.num_regions() != 1 || op.region(0).num_blocks() != 1) {
    return InvalidArgumentError(op.Describe(), ": needs one body block");
  }
  ir::Block& body = op.region(0).front();
  if (static_cast<int>(in_shardings.size()) != op.num_operands() ||
      body.num_arguments() != op.num_operands() ||
      static_cast<int>(out_shardings.size()) != op.num_results()) {
    return InvalidArgumentError(
        op.Describe(), ": ", op.num_operands(), " operands, ",
        in_shardings.size(), " in_shardings, ", body.num_arguments(),
        " body arguments, ", op.num_results(), " results and ",
        out_shardings.size(), " out_shardings do not match");
  }
  std::map<const Value*, Value*> value_map;
  for (int i = 0; i < op.num_operands(); ++i) {
    Value* global = op.operand(i);
    std::string what = StrCat(op.Describe(), ": operand ", i);
    if (!global->type().IsTensor()) {
      // Tokens (ordered effects) pass into the body as they are.
      value_map[body.argument(i)] = global;
      continue;
    }
    StatusOr<TileLayout> in_layout =
        LayoutOfShardy(in_shardings[i], meshes_, global->type().rank(),
                       target_.num_partitions, &manual_axes);
    if (!in_layout.ok()) return in_layout.status().WithContext(what);
    Value* tile = in_layout->HasUnreduced()
                      ? KnownPartials(global, *in_layout, out, op.loc())
                      : nullptr;
    if (tile == nullptr) {
      ASSIGN_OR_RETURN(tile, TileOf(global, WithoutUnreduced(*in_layout), out,
                                    op.loc(), what));
      if (in_layout->HasUnreduced()) {
        tile = SplitUnreduced(tile, *in_layout, out, op.loc());
      }
    }
    if (tile->type() != body.argument(i)->type()) {
      return InvalidArgumentError(
          what, ": its tile is ", tile->type().ToString(),
          " but the body takes ", body.argument(i)->type().ToString());
    }
    value_map[body.argument(i)] = tile;
  }
  // The body, cloned in front of where the op was and rewritten in turn
  // (it may hold manual computations of its own).
  OpList cloned;
  const Operation* terminator = body.terminator();
  if (terminator == nullptr || terminator->name() != "sdy.return") {
    return InvalidArgumentError(op.Describe(),
                                ": the body does not end in sdy.return");
  }
  for (const auto& inner : body.operations()) {
    if (inner.get() == terminator) break;
    cloned.push_back(inner->Clone(value_map));
  }
  ++manual_depth_;
  Status rewritten = RewriteOps(std::move(cloned), out);
  --manual_depth_;
  RETURN_IF_ERROR(rewritten);
  for (int i = 0; i < op.num_results(); ++i) {
    Value* tile = terminator->operand(i);
    if (auto it = value_map.find(tile); it != value_map.end()) {
      tile = it->second;
    }
    if (auto it = substitutions_.find(tile); it != substitutions_.end()) {
      tile = it->second;
    }
    // A tile of a manual computation nested in the body is, for this
    // one, a whole value.
    ASSIGN_OR_RETURN(tile, Global(tile, out, op.loc()));
    const Type& global_type = op.result(i)->type();
    std::string what = StrCat(op.Describe(), ": result ", i);
    if (!global_type.IsTensor()) {
      substitutions_[op.result(i)] = tile;
      continue;
    }
    StatusOr<TileLayout> out_layout =
        LayoutOfShardy(out_shardings[i], meshes_, global_type.rank(),
                       target_.num_partitions, &manual_axes);
    if (!out_layout.ok()) return out_layout.status().WithContext(what);
    // With unreduced axes, the body's values are partial values: they
    // are summed where the program reads the result, and go on as they
    // are where it passes it on unreduced (KnownPartials).
    std::optional<PartialSum> partials;
    if (out_layout->HasUnreduced()) {
      Value* partial = tile;
      std::vector<std::vector<int64_t>> keys = GroupKeys(*out_layout);
      tile = SumUnreduced(tile, *out_layout, out, op.loc());
      *out_layout = WithoutUnreduced(*out_layout);
      partials = PartialSum{partial, std::move(keys), {tile}, *out_layout};
    }
    const TileLayout& layout = *out_layout;
    Value* global = tile;
    if (!layout.IsReplicated()) {
      ASSIGN_OR_RETURN(std::vector<int64_t> expected,
                       TileShape(global_type, layout, what));
      if (tile->type().shape() != expected) {
        return InvalidArgumentError(what, ": the body returns ",
                                    tile->type().ToString(), " for a tile of ",
                                    StrJoin(expected, "x"));
      }
      // Kept as the partition's tile; assembled if an op needs it whole.
      Value* handle = LocalHandle(tile, out, op.loc());
      tiled_[op.result(i)] = Tiled{handle, layout, global_type, nullptr};
      if (partials) {
        partials->chain.push_back(handle);
        partial_sums_[op.result(i)] = std::move(*partials);
      }
      continue;
    } else if (tile->type() != global_type) {
      return InvalidArgumentError(what, ": the body returns ",
                                  tile->type().ToString(), " for ",
                                  global_type.ToString());
    }
    substitutions_[op.result(i)] = global;
    if (partials) partial_sums_[global] = std::move(*partials);
  }
  return OkStatus();
}

Status Partitioner::RewriteGspmdShapeCall(Operation& op,
                                          const std::string& target,
                                          const std::string& operand_sharding,
                                          OpList& out) {
  if (op.num_operands() != 1 || op.num_results() != 1) {
    return InvalidArgumentError(op.Describe(), ": @", target,
                                " takes one operand and has one result");
  }
  Value* operand = op.operand(0);
  const bool to_shard = target == "SPMDFullToShardShape";
  std::string sharding;
  if (to_shard) {
    if (operand_sharding.empty()) {
      return UnimplementedError(op.Describe(),
                                ": @SPMDFullToShardShape of a value without "
                                "an @Sharding custom call before it");
    }
    sharding = operand_sharding;
  } else {
    Attribute own = op.GetAttr("mhlo.sharding");
    if (!own.is(AttrKind::kString)) {
      return InvalidArgumentError(op.Describe(), ": no mhlo.sharding string");
    }
    sharding = own.string_value();
  }
  const Type& global_type = to_shard ? operand->type() : op.result(0)->type();
  StatusOr<TileLayout> parsed =
      LayoutOfGspmd(sharding, global_type.rank(), target_.num_partitions);
  if (!parsed.ok()) return parsed.status().WithContext(op.Describe());
  const TileLayout& layout = *parsed;
  if (to_shard) {
    ASSIGN_OR_RETURN(Value * tile,
                     TileOf(operand, layout, out, op.loc(), op.Describe()));
    if (tile->type() != op.result(0)->type()) {
      return InvalidArgumentError(
          op.Describe(), ": gives ", op.result(0)->type().ToString(),
          " but the sharding makes ", tile->type().ToString());
    }
    substitutions_[op.result(0)] = tile;
    return OkStatus();
  }
  ASSIGN_OR_RETURN(Value * tile, Global(operand, out, op.loc()));
  if (layout.IsReplicated()) {
    substitutions_[op.result(0)] = tile;
    return OkStatus();
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> expected,
                   TileShape(global_type, layout, op.Describe()));
  if (tile->type().shape() != expected) {
    return InvalidArgumentError(op.Describe(), ": takes ",
                                tile->type().ToString(), " for a tile of ",
                                StrJoin(expected, "x"));
  }
  tiled_[op.result(0)] =
      Tiled{LocalHandle(tile, out, op.loc()), layout, global_type, nullptr};
  return OkStatus();
}

}  // namespace kiln::compile::spmd
