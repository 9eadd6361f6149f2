#include "compile/spmd_partition.h"

#include <cstring>
#include <map>
#include <set>

#include "base/strings.h"

namespace kiln::compile {
namespace {

using ir::Attribute;
using ir::AttrKind;
using ir::Operation;
using ir::Type;
using ir::Value;
using OpList = std::vector<std::unique_ptr<Operation>>;

// Channel handles of the collectives the partitioner adds: far above the
// ones frameworks number from 1, so that they never collide.
constexpr int64_t kFirstChannel = 1 << 20;

// The layout a value's attribute dictionary gives it: its `sdy.sharding`,
// else its `mhlo.sharding`; nullopt when it has neither or is replicated.
StatusOr<std::optional<TileLayout>> LayoutOfAttrs(
    const Attribute& attrs, const std::map<std::string, Mesh>& meshes,
    const Type& type, int num_partitions, std::string_view what) {
  if (!attrs.is(AttrKind::kDictionary)) return std::optional<TileLayout>();
  Attribute shardy = attrs.Get("sdy.sharding");
  Attribute gspmd = attrs.Get("mhlo.sharding");
  if (!shardy && !gspmd) return std::optional<TileLayout>();
  if (!type.IsTensor()) {
    return UnimplementedError(what, " is sharded but is not a tensor");
  }
  StatusOr<TileLayout> layout = [&]() -> StatusOr<TileLayout> {
    if (shardy) {
      ASSIGN_OR_RETURN(TensorSharding sharding,
                       ParseTensorSharding(shardy.ToString()));
      return LayoutOfShardy(sharding, meshes, type.rank(), num_partitions);
    }
    if (!gspmd.is(AttrKind::kString)) {
      return InvalidArgumentError("mhlo.sharding must be a string");
    }
    return LayoutOfGspmd(gspmd.string_value(), type.rank(), num_partitions);
  }();
  if (!layout.ok()) return layout.status().WithContext(what);
  if (layout->IsReplicated()) return std::optional<TileLayout>();
  return std::optional<TileLayout>(std::move(layout).value());
}

// The shape of one tile of a value of `type` under `layout`.
StatusOr<std::vector<int64_t>> TileShape(const Type& type,
                                         const TileLayout& layout,
                                         std::string_view what) {
  std::vector<int64_t> dims = type.shape();
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      return UnimplementedError(what, ": dimension ", i,
                                " is dynamic; Kiln partitions static shapes");
    }
    if (dims[i] % layout.tiles[i] != 0) {
      return UnimplementedError(what, ": dimension ", i, " of size ", dims[i],
                                " does not split into ", layout.tiles[i],
                                " equal tiles (uneven shardings need padding, "
                                "which Kiln does not do yet)");
    }
    dims[i] /= layout.tiles[i];
  }
  return dims;
}

// Builds the ops that slice and assemble tiles, appending them to a list.
class TileOps {
 public:
  TileOps(OpList& out, ir::Location loc, const PartitionTarget& target,
          int64_t& next_channel)
      : out_(out),
        loc_(std::move(loc)),
        target_(target),
        next_channel_(next_channel) {}

  // The partition's own tile of `global`.
  StatusOr<Value*> Slice(Value* global, const TileLayout& layout,
                         std::string_view what) {
    ASSIGN_OR_RETURN(std::vector<int64_t> tile,
                     TileShape(global->type(), layout, what));
    const std::vector<int64_t>& coords =
        layout.tile_of_device[target_.partition_id];
    std::vector<int64_t> start(tile.size()), limit(tile.size()),
        strides(tile.size(), 1);
    for (size_t i = 0; i < tile.size(); ++i) {
      start[i] = coords[i] * tile[i];
      limit[i] = start[i] + tile[i];
    }
    auto op = NewOp("stablehlo.slice", global->type().WithShape(tile));
    op->AddOperand(global);
    op->SetAttr("start_indices", Attribute::DenseI64Array(start));
    op->SetAttr("limit_indices", Attribute::DenseI64Array(limit));
    op->SetAttr("strides", Attribute::DenseI64Array(strides));
    return Append(std::move(op));
  }

  // The global value of `global_type` from the partition's tile `local` and
  // those of the devices that hold the other tiles (the devices with the
  // same copy number): an all_gather of every tile along a new leading
  // dimension, then a reshape and transpose that put the tiles in place.
  StatusOr<Value*> Assemble(Value* local, const Type& global_type,
                            const TileLayout& layout) {
    const int64_t tiles = layout.TileCount();
    const std::vector<int64_t> tile = local->type().shape();
    const size_t rank = tile.size();
    const int64_t devices = static_cast<int64_t>(layout.tile_of_device.size());
    const int64_t copies = devices / tiles;
    // Group c: the devices of copy c, in row-major order of their tiles.
    std::vector<int64_t> groups(static_cast<size_t>(devices));
    for (int64_t d = 0; d < devices; ++d) {
      int64_t linear = 0;
      for (size_t k = 0; k < rank; ++k) {
        linear = linear * layout.tiles[k] + layout.tile_of_device[d][k];
      }
      groups[layout.copy_of_device[d] * tiles + linear] = d;
    }
    // Over flattened ids, every replica gathering among its own partitions.
    std::vector<int64_t> flattened;
    for (int r = 0; r < target_.num_replicas; ++r) {
      for (int64_t d : groups) {
        flattened.push_back(r * int64_t{target_.num_partitions} + d);
      }
    }
    std::string bytes(flattened.size() * sizeof(int64_t), '\0');
    std::memcpy(bytes.data(), flattened.data(), bytes.size());
    Type groups_type = Type::Tensor({copies * target_.num_replicas, tiles},
                                    Type::Element(ir::ElementType::kI64));

    std::vector<int64_t> lead = {1};
    lead.insert(lead.end(), tile.begin(), tile.end());
    Value* stacked = Reshape(local, lead);
    std::vector<int64_t> gathered_shape = lead;
    gathered_shape[0] = tiles;
    auto gather =
        NewOp("stablehlo.all_gather", local->type().WithShape(gathered_shape));
    gather->AddOperand(stacked);
    gather->SetAttr(
        "all_gather_dim",
        Attribute::Integer(0, Type::Element(ir::ElementType::kI64)));
    gather->SetAttr("replica_groups",
                    Attribute::DenseElements(groups_type, bytes, false));
    gather->SetAttr("channel_handle",
                    Attribute::Channel(ir::ChannelHandle{next_channel_++, 1}));
    gather->SetAttr("use_global_device_ids", Attribute::Unit());
    Value* gathered = Append(std::move(gather));

    // [T, l...] -> [t_s for the cut dims s..., l...] -> each cut dim's tile
    // count beside its tile size -> the global shape.
    std::vector<int64_t> cut;
    for (size_t k = 0; k < rank; ++k) {
      if (layout.tiles[k] > 1) cut.push_back(static_cast<int64_t>(k));
    }
    std::vector<int64_t> split;
    for (int64_t k : cut) split.push_back(layout.tiles[k]);
    split.insert(split.end(), tile.begin(), tile.end());
    Value* value = Reshape(gathered, split);
    std::vector<int64_t> perm;
    for (size_t k = 0; k < rank; ++k) {
      auto at = std::find(cut.begin(), cut.end(), static_cast<int64_t>(k));
      if (at != cut.end()) perm.push_back(at - cut.begin());
      perm.push_back(static_cast<int64_t>(cut.size() + k));
    }
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i) {
      identity &= perm[i] == static_cast<int64_t>(i);
    }
    if (!identity) {
      std::vector<int64_t> permuted;
      for (int64_t p : perm) permuted.push_back(split[p]);
      auto transpose =
          NewOp("stablehlo.transpose", local->type().WithShape(permuted));
      transpose->AddOperand(value);
      transpose->SetAttr("permutation", Attribute::DenseI64Array(perm));
      value = Append(std::move(transpose));
    }
    return Reshape(value, global_type.shape());
  }

 private:
  std::unique_ptr<Operation> NewOp(std::string name, Type type) {
    return std::make_unique<Operation>(
        std::move(name), std::vector<Type>{std::move(type)}, loc_);
  }
  Value* Append(std::unique_ptr<Operation> op) {
    out_.push_back(std::move(op));
    return out_.back()->result(0);
  }
  Value* Reshape(Value* value, const std::vector<int64_t>& shape) {
    auto op = NewOp("stablehlo.reshape", value->type().WithShape(shape));
    op->AddOperand(value);
    return Append(std::move(op));
  }

  OpList& out_;
  ir::Location loc_;
  const PartitionTarget& target_;
  int64_t& next_channel_;
};

bool IsManualComputation(const Operation& op) {
  return op.name() == "sdy.manual_computation";
}

std::string CustomCallTarget(const Operation& op) {
  if (op.name() != "stablehlo.custom_call") return "";
  Attribute target = op.GetAttr("call_target_name");
  return target.is(AttrKind::kString) ? target.string_value() : "";
}

// Ops whose result element i depends on their operands' elements i only:
// a sharding of an operand is one of the result.
bool IsElementwise(const Operation& op) {
  static const std::set<std::string_view> kNames = {
      "stablehlo.abs",
      "stablehlo.add",
      "stablehlo.and",
      "stablehlo.atan2",
      "stablehlo.cbrt",
      "stablehlo.ceil",
      "stablehlo.clamp",
      "stablehlo.compare",
      "stablehlo.complex",
      "stablehlo.convert",
      "stablehlo.cosine",
      "stablehlo.count_leading_zeros",
      "stablehlo.divide",
      "stablehlo.exponential",
      "stablehlo.exponential_minus_one",
      "stablehlo.floor",
      "stablehlo.imag",
      "stablehlo.is_finite",
      "stablehlo.log",
      "stablehlo.log_plus_one",
      "stablehlo.logistic",
      "stablehlo.maximum",
      "stablehlo.minimum",
      "stablehlo.multiply",
      "stablehlo.negate",
      "stablehlo.not",
      "stablehlo.or",
      "stablehlo.popcnt",
      "stablehlo.power",
      "stablehlo.real",
      "stablehlo.reduce_precision",
      "stablehlo.remainder",
      "stablehlo.round_nearest_afz",
      "stablehlo.round_nearest_even",
      "stablehlo.rsqrt",
      "stablehlo.select",
      "stablehlo.shift_left",
      "stablehlo.shift_right_arithmetic",
      "stablehlo.shift_right_logical",
      "stablehlo.sign",
      "stablehlo.sine",
      "stablehlo.sqrt",
      "stablehlo.subtract",
      "stablehlo.tan",
      "stablehlo.tanh",
      "stablehlo.xor",
      "builtin.unrealized_conversion_cast",
  };
  return kNames.count(op.name()) > 0;
}

// The sharding a result without one of its own takes, where the program
// implies it: the value returned is a sharding constraint's, a manual
// computation's result, an argument, or an elementwise op of such values
// that agree. XLA's propagation gives the same in those cases; elsewhere
// the result stays replicated (every device has all of it), which is
// always correct.
class ResultLayoutInference {
 public:
  ResultLayoutInference(const Operation& entry,
                        const std::map<std::string, Mesh>& meshes,
                        int num_partitions)
      : entry_(entry), meshes_(meshes), num_partitions_(num_partitions) {}

  std::optional<TileLayout> Infer(const Value* value, int depth = 0) {
    auto it = memo_.find(value);
    if (it != memo_.end()) return it->second;
    std::optional<TileLayout> layout =
        depth > kMaxDepth ? std::nullopt : Compute(value, depth);
    memo_[value] = layout;
    return layout;
  }

 private:
  static constexpr int kMaxDepth = 64;

  std::optional<TileLayout> Compute(const Value* value, int depth) {
    if (!value->type().IsTensor()) return std::nullopt;
    const ir::Block& body = ir::func::Body(entry_);
    if (value->IsBlockArgument()) {
      if (value->owner_block() != &body) return std::nullopt;
      return Quiet(LayoutOfAttrs(ir::func::ArgAttrs(entry_, value->index()),
                                 meshes_, value->type(), num_partitions_,
                                 "argument"));
    }
    const Operation* op = value->defining_op();
    if (op == nullptr || op->parent_block() != &body) return std::nullopt;
    if (op->name() == "sdy.sharding_constraint" ||
        op->name() == "sdy.reshard") {
      StatusOr<TensorSharding> sharding =
          ParseTensorSharding(op->GetAttr("sharding").ToString());
      if (!sharding.ok()) return std::nullopt;
      return QuietLayout(LayoutOfShardy(*sharding, meshes_,
                                        value->type().rank(), num_partitions_));
    }
    if (IsManualComputation(*op)) {
      StatusOr<std::vector<TensorSharding>> shardings =
          ParseShardingPerValue(op->GetAttr("out_shardings").ToString());
      if (!shardings.ok() ||
          value->index() >= static_cast<int>(shardings->size())) {
        return std::nullopt;
      }
      return QuietLayout(LayoutOfShardy((*shardings)[value->index()], meshes_,
                                        value->type().rank(), num_partitions_));
    }
    if (CustomCallTarget(*op) == "Sharding") {
      Attribute sharding = op->GetAttr("mhlo.sharding");
      if (!sharding.is(AttrKind::kString)) return std::nullopt;
      return QuietLayout(LayoutOfGspmd(sharding.string_value(),
                                       value->type().rank(), num_partitions_));
    }
    if (!IsElementwise(*op) || op->num_results() != 1) return std::nullopt;
    std::optional<TileLayout> agreed;
    for (const Value* operand : op->operands()) {
      if (operand->type().shape() != value->type().shape()) continue;
      std::optional<TileLayout> layout = Infer(operand, depth + 1);
      if (!layout) continue;
      if (agreed && (agreed->tiles != layout->tiles ||
                     agreed->tile_of_device != layout->tile_of_device)) {
        return std::nullopt;
      }
      agreed = std::move(layout);
    }
    return agreed;
  }

  static std::optional<TileLayout> Quiet(
      StatusOr<std::optional<TileLayout>> layout) {
    return layout.ok() ? *layout : std::nullopt;
  }
  static std::optional<TileLayout> QuietLayout(StatusOr<TileLayout> layout) {
    if (!layout.ok() || layout->IsReplicated()) return std::nullopt;
    return *layout;
  }

  const Operation& entry_;
  const std::map<std::string, Mesh>& meshes_;
  int num_partitions_;
  std::map<const Value*, std::optional<TileLayout>> memo_;
};

// The layout of each result of `func`: its own sharding, else what
// ResultLayoutInference finds.
StatusOr<std::vector<std::optional<TileLayout>>> ResultLayouts(
    const Operation& func, const std::map<std::string, Mesh>& meshes,
    int num_partitions) {
  std::vector<std::optional<TileLayout>> layouts;
  const ir::Block& body = ir::func::Body(func);
  const Operation* terminator = body.terminator();
  if (terminator == nullptr) return layouts;
  ResultLayoutInference inference(func, meshes, num_partitions);
  for (int i = 0; i < terminator->num_operands(); ++i) {
    const Value* result = terminator->operand(i);
    Attribute attrs = ir::func::ResultAttrs(func, i);
    const bool annotated =
        attrs.is(AttrKind::kDictionary) &&
        (attrs.Get("sdy.sharding") || attrs.Get("mhlo.sharding"));
    if (annotated) {
      ASSIGN_OR_RETURN(
          std::optional<TileLayout> layout,
          LayoutOfAttrs(attrs, meshes, result->type(), num_partitions,
                        StrCat("result ", i, " of @", ir::func::Name(func))));
      layouts.push_back(std::move(layout));
    } else {
      layouts.push_back(inference.Infer(result));
    }
  }
  return layouts;
}

class Partitioner {
 public:
  Partitioner(ir::Module& module, const PartitionTarget& target,
              std::map<std::string, Mesh> meshes)
      : module_(module), target_(target), meshes_(std::move(meshes)) {}

  Status Run() {
    Operation* entry = module_.EntryFunction();
    for (Operation* func : module_.Functions()) {
      if (func == entry) {
        RETURN_IF_ERROR(PartitionEntry(*func));
      } else {
        RETURN_IF_ERROR(RewriteBlock(ir::func::Body(*func)));
      }
    }
    return OkStatus();
  }

 private:
  // The entry: tiles come in, global values are assembled from them, and
  // the partition's tiles of the results go out.
  Status PartitionEntry(Operation& func) {
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
        TileOps ops(out, argument->loc(), target_, next_channel_);
        ASSIGN_OR_RETURN(Value * assembled,
                         ops.Assemble(argument, global, *layout));
        substitutions_[argument] = assembled;
      }
      inputs.push_back(argument->type());
    }
    RETURN_IF_ERROR(RewriteOps(body.TakeOperations(), out));

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
      if (layout) {
        TileOps ops(out, ret->loc(), target_, next_channel_);
        ASSIGN_OR_RETURN(Value * tile, ops.Slice(result, *layout, what));
        ret->SetOperand(i, tile);
      }
      results.push_back(ret->operand(i)->type());
    }
    out.push_back(std::move(ret));
    body.SetOperations(std::move(out));
    func.SetAttr("function_type",
                 Attribute::TypeAttr(Type::Function(inputs, results)));
    return OkStatus();
  }

  Status RewriteBlock(ir::Block& block) {
    OpList out;
    RETURN_IF_ERROR(RewriteOps(block.TakeOperations(), out));
    block.SetOperations(std::move(out));
    return OkStatus();
  }

  // Rewrites `ops` in order into `out`: operands of replaced values are
  // redirected, manual computations inlined, and GSPMD's shard/full-shape
  // calls turned into slices and assemblies.
  Status RewriteOps(OpList ops, OpList& out) {
    for (std::unique_ptr<Operation>& op : ops) {
      for (int i = 0; i < op->num_operands(); ++i) {
        auto it = substitutions_.find(op->operand(i));
        if (it != substitutions_.end()) op->SetOperand(i, it->second);
      }
      for (const auto& region : op->regions()) {
        for (const auto& block : region->blocks()) {
          RETURN_IF_ERROR(RewriteBlock(*block));
        }
      }
      if (IsManualComputation(*op)) {
        RETURN_IF_ERROR(InlineManualComputation(*op, out));
        continue;
      }
      const std::string target = CustomCallTarget(*op);
      if (target == "SPMDFullToShardShape" ||
          target == "SPMDShardToFullShape") {
        RETURN_IF_ERROR(RewriteGspmdShapeCall(*op, target, out));
        continue;
      }
      out.push_back(std::move(op));
    }
    return OkStatus();
  }

  // `sdy.manual_computation`: operands sliced along the manual axes, the
  // body inlined on the tiles, results assembled along the manual axes.
  Status InlineManualComputation(Operation& op, OpList& out) {
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
      const TileLayout& layout = *in_layout;
      Value* tile = global;
      if (!layout.IsReplicated()) {
        TileOps ops(out, op.loc(), target_, next_channel_);
        ASSIGN_OR_RETURN(tile, ops.Slice(global, layout, what));
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
    RETURN_IF_ERROR(RewriteOps(std::move(cloned), out));
    for (int i = 0; i < op.num_results(); ++i) {
      Value* tile = terminator->operand(i);
      if (auto it = value_map.find(tile); it != value_map.end()) {
        tile = it->second;
      }
      if (auto it = substitutions_.find(tile); it != substitutions_.end()) {
        tile = it->second;
      }
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
      const TileLayout& layout = *out_layout;
      Value* global = tile;
      if (!layout.IsReplicated()) {
        ASSIGN_OR_RETURN(std::vector<int64_t> expected,
                         TileShape(global_type, layout, what));
        if (tile->type().shape() != expected) {
          return InvalidArgumentError(
              what, ": the body returns ", tile->type().ToString(),
              " for a tile of ", StrJoin(expected, "x"));
        }
        TileOps ops(out, op.loc(), target_, next_channel_);
        ASSIGN_OR_RETURN(global, ops.Assemble(tile, global_type, layout));
      } else if (tile->type() != global_type) {
        return InvalidArgumentError(what, ": the body returns ",
                                    tile->type().ToString(), " for ",
                                    global_type.ToString());
      }
      substitutions_[op.result(i)] = global;
    }
    return OkStatus();
  }

  // GSPMD's manual regions: `@SPMDFullToShardShape` takes the tile of its
  // operand (whose sharding the `@Sharding` call defining it gives), and
  // `@SPMDShardToFullShape` assembles the global value its own
  // `mhlo.sharding` describes.
  Status RewriteGspmdShapeCall(Operation& op, const std::string& target,
                               OpList& out) {
    if (op.num_operands() != 1 || op.num_results() != 1) {
      return InvalidArgumentError(op.Describe(), ": @", target,
                                  " takes one operand and has one result");
    }
    Value* operand = op.operand(0);
    const bool to_shard = target == "SPMDFullToShardShape";
    const Operation* sharding_op = to_shard ? operand->defining_op() : &op;
    if (to_shard && (sharding_op == nullptr ||
                     CustomCallTarget(*sharding_op) != "Sharding")) {
      return UnimplementedError(op.Describe(),
                                ": @SPMDFullToShardShape of a value without "
                                "an @Sharding custom call before it");
    }
    Attribute sharding = sharding_op->GetAttr("mhlo.sharding");
    if (!sharding.is(AttrKind::kString)) {
      return InvalidArgumentError(op.Describe(), ": no mhlo.sharding string");
    }
    const Type& global_type = to_shard ? operand->type() : op.result(0)->type();
    StatusOr<TileLayout> parsed = LayoutOfGspmd(
        sharding.string_value(), global_type.rank(), target_.num_partitions);
    if (!parsed.ok()) return parsed.status().WithContext(op.Describe());
    const TileLayout& layout = *parsed;
    TileOps ops(out, op.loc(), target_, next_channel_);
    Value* value = operand;
    if (!layout.IsReplicated()) {
      if (to_shard) {
        ASSIGN_OR_RETURN(value, ops.Slice(operand, layout, op.Describe()));
      } else {
        ASSIGN_OR_RETURN(value, ops.Assemble(operand, global_type, layout));
      }
    }
    if (value->type() != op.result(0)->type()) {
      return InvalidArgumentError(
          op.Describe(), ": gives ", op.result(0)->type().ToString(),
          " but the sharding makes ", value->type().ToString());
    }
    substitutions_[op.result(0)] = value;
    return OkStatus();
  }

  ir::Module& module_;
  const PartitionTarget& target_;
  std::map<std::string, Mesh> meshes_;
  std::map<const Value*, Value*> substitutions_;
  int64_t next_channel_ = kFirstChannel;
};

}  // namespace

StatusOr<EntryLayouts> ReadEntryLayouts(const ir::Module& module,
                                        int num_partitions) {
  EntryLayouts layouts;
  const Operation* entry = module.EntryFunction();
  if (entry == nullptr || num_partitions <= 1) return layouts;
  ASSIGN_OR_RETURN(auto meshes, ModuleMeshes(module));
  const ir::Block& body = ir::func::Body(*entry);
  for (int i = 0; i < body.num_arguments(); ++i) {
    ASSIGN_OR_RETURN(
        std::optional<TileLayout> layout,
        LayoutOfAttrs(ir::func::ArgAttrs(*entry, i), meshes,
                      body.argument(i)->type(), num_partitions,
                      StrCat("argument ", i, " of @", ir::func::Name(*entry))));
    layouts.arguments.push_back(std::move(layout));
  }
  ASSIGN_OR_RETURN(layouts.results,
                   ResultLayouts(*entry, meshes, num_partitions));
  return layouts;
}

StatusOr<bool> NeedsPartitioning(const ir::Module& module, int num_partitions) {
  if (num_partitions <= 1) return false;
  bool manual = false;
  module.op().Walk([&](Operation& op) {
    std::string target = CustomCallTarget(op);
    manual |= IsManualComputation(op) || target == "SPMDFullToShardShape" ||
              target == "SPMDShardToFullShape";
  });
  if (manual) return true;
  ASSIGN_OR_RETURN(EntryLayouts layouts,
                   ReadEntryLayouts(module, num_partitions));
  for (const auto* list : {&layouts.arguments, &layouts.results}) {
    for (const auto& layout : *list) {
      if (layout) return true;
    }
  }
  return false;
}

Status PartitionModule(ir::Module& module, const PartitionTarget& target) {
  if (target.partition_id < 0 || target.partition_id >= target.num_partitions) {
    return InvalidArgumentError("partition ", target.partition_id,
                                " is outside the program's ",
                                target.num_partitions, " partitions");
  }
  ASSIGN_OR_RETURN(auto meshes, ModuleMeshes(module));
  Partitioner partitioner(module, target, std::move(meshes));
  return partitioner.Run();
}

}  // namespace kiln::compile
