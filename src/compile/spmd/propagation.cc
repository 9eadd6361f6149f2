// Result layout inference: the sharding a result of the entry takes where
// the program implies one without writing it (Shardy's propagation, in part).
#include "compile/spmd/common.h"

#include <set>

#include "base/strings.h"

namespace kiln::compile::spmd {
namespace {

// The sharding a result without one of its own takes, where the program
// implies it: the value returned is a sharding constraint's, a manual
// computation's result, an argument, an elementwise op of such values that
// agree, or (for Shardy's shardings) what ShardingOf follows through the
// ops that move and contract dimensions. XLA's propagation gives the same
// in those cases; elsewhere the result stays replicated (every device has
// all of it). Any choice is correct: a result computed whole is sliced to
// it.
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
    // Partial sums are summed where an op takes them; a result the program
    // leaves open goes out summed.
    if (layout && layout->HasUnreduced()) {
      layout = WithoutUnreduced(std::move(*layout));
      if (layout->IsReplicated()) layout.reset();
    }
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
    if (!IsElementwise(*op) || op->num_results() != 1) {
      // Ops that move or contract dimensions: what Shardy's propagation
      // gives their result, where the operands' shardings are Shardy's.
      std::optional<TensorSharding> sharding = ShardingOf(value, depth);
      if (!sharding) return std::nullopt;
      return QuietLayout(LayoutOfShardy(*sharding, meshes_,
                                        value->type().rank(), num_partitions_));
    }
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

  // The Shardy sharding of `value` that the shardings written in the
  // program imply, following them forward through elementwise ops,
  // transpose, broadcast_in_dim, reduce, concatenate and dot_general, the
  // way Shardy's propagation does in the absence of conflicts: a dot's
  // batch and lhs free dimensions keep the lhs's axes, its rhs free
  // dimensions the rhs's, unless an earlier dimension took the axis
  // already; contracted and reduced axes are gone. Nullopt where nothing
  // is implied or the operands disagree.
  std::optional<TensorSharding> ShardingOf(const Value* value, int depth) {
    if (depth > kMaxDepth || !value->type().IsTensor()) return std::nullopt;
    auto it = sharding_memo_.find(value);
    if (it != sharding_memo_.end()) return it->second;
    std::optional<TensorSharding> sharding = ComputeSharding(value, depth);
    if (sharding) {
      sharding->unreduced.clear();
      if (static_cast<int64_t>(sharding->dims.size()) != value->type().rank()) {
        sharding.reset();
      }
    }
    sharding_memo_[value] = sharding;
    return sharding;
  }

  static std::optional<TensorSharding> Parsed(const Attribute& attr) {
    if (!attr) return std::nullopt;
    StatusOr<TensorSharding> sharding = ParseTensorSharding(attr.ToString());
    if (!sharding.ok()) return std::nullopt;
    return *std::move(sharding);
  }

  static bool SameAxes(const std::vector<AxisRef>& a,
                       const std::vector<AxisRef>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].name != b[i].name || a[i].pre_size != b[i].pre_size ||
          a[i].size != b[i].size) {
        return false;
      }
    }
    return true;
  }

  static bool SameMesh(const TensorSharding& a, const TensorSharding& b) {
    return a.mesh_name == b.mesh_name && !a.inline_mesh && !b.inline_mesh;
  }

  // A sharding over `from`'s mesh whose dimension i takes the axes of
  // `from`'s dimension source[i] (-1: none).
  static TensorSharding Moved(const TensorSharding& from,
                              const std::vector<int64_t>& source) {
    TensorSharding result;
    result.mesh_name = from.mesh_name;
    result.inline_mesh = from.inline_mesh;
    for (int64_t s : source) {
      result.dims.push_back(s >= 0 && s < static_cast<int64_t>(from.dims.size())
                                ? from.dims[s]
                                : std::vector<AxisRef>{});
    }
    return result;
  }

  // How many devices `axes` of `sharding`'s mesh cut a dimension into; -1
  // when an axis is not in the mesh.
  int64_t CutCount(const TensorSharding& sharding,
                   const std::vector<AxisRef>& axes) const {
    const Mesh* mesh = nullptr;
    if (sharding.inline_mesh) {
      mesh = &*sharding.inline_mesh;
    } else {
      auto it = meshes_.find(sharding.mesh_name);
      if (it != meshes_.end()) mesh = &it->second;
    }
    if (mesh == nullptr) return -1;
    int64_t count = 1;
    for (const AxisRef& axis : axes) {
      const int index = mesh->AxisIndex(axis.name);
      if (index < 0) return -1;
      count *= axis.size < 0 ? mesh->axis_sizes[index] : axis.size;
    }
    return count;
  }

  // A reshape's sharding: the dimensions are matched in groups of equal
  // element counts. A dimension split into several gives its axes to the
  // first (major) one, where they cut it evenly; dimensions merged into one
  // give it their axes major to minor, as long as each one before the last
  // sharded one is cut into single elements. Nullopt where the axes do not
  // carry over.
  std::optional<TensorSharding> Reshaped(const TensorSharding& from,
                                         const std::vector<int64_t>& in,
                                         const std::vector<int64_t>& out) {
    if (from.dims.size() != in.size()) return std::nullopt;
    TensorSharding result;
    result.mesh_name = from.mesh_name;
    result.inline_mesh = from.inline_mesh;
    result.dims.assign(out.size(), {});
    size_t i = 0, o = 0;
    while (i < in.size() || o < out.size()) {
      // One group: the fewest dimensions on both sides with equal counts.
      size_t i_end = i, o_end = o;
      int64_t in_count = 1, out_count = 1;
      if (i_end < in.size()) in_count *= in[i_end++];
      if (o_end < out.size()) out_count *= out[o_end++];
      while (in_count != out_count) {
        if (in_count < out_count && i_end < in.size()) {
          in_count *= in[i_end++];
        } else if (out_count < in_count && o_end < out.size()) {
          out_count *= out[o_end++];
        } else {
          return std::nullopt;
        }
      }
      // Size-1 dimensions that follow join the group on either side.
      std::vector<AxisRef> axes;
      bool whole_so_far = true;
      for (size_t d = i; d < i_end; ++d) {
        if (from.dims[d].empty()) continue;
        if (!whole_so_far) return std::nullopt;
        const int64_t cuts = CutCount(from, from.dims[d]);
        if (cuts < 0) return std::nullopt;
        axes.insert(axes.end(), from.dims[d].begin(), from.dims[d].end());
        whole_so_far = cuts == in[d];
      }
      if (!axes.empty()) {
        // The axes go to the group's first output dimension of size > 1.
        size_t target = o;
        while (target < o_end && out[target] == 1) ++target;
        const int64_t cuts = CutCount(from, axes);
        if (target == o_end || cuts <= 0 || out[target] % cuts != 0) {
          return std::nullopt;
        }
        // Merged dimensions: the minor ones' axes are only whole-element
        // cuts of the major ones when the group lands in one dimension.
        if (i_end - i > 1 && o_end - o > 1) return std::nullopt;
        result.dims[target] = std::move(axes);
      }
      i = i_end;
      o = o_end;
      if (i == in.size() && o == out.size()) break;
    }
    return result;
  }

  // The function of the module a func.call calls (with a body), or null.
  const Operation* Callee(const Operation& call) const {
    Attribute callee = call.GetAttr("callee");
    if (!callee.is(AttrKind::kSymbolRef) || entry_.parent_block() == nullptr) {
      return nullptr;
    }
    for (const std::unique_ptr<Operation>& op :
         entry_.parent_block()->operations()) {
      if (op->name() == "func.func" &&
          ir::func::Name(*op) == callee.symbol_root() &&
          ir::func::HasBody(*op)) {
        return op.get();
      }
    }
    return nullptr;
  }

  std::optional<TensorSharding> ComputeSharding(const Value* value, int depth) {
    const ir::Block& body = ir::func::Body(entry_);
    if (value->IsBlockArgument()) {
      if (value->owner_block() != &body) return std::nullopt;
      Attribute attrs = ir::func::ArgAttrs(entry_, value->index());
      if (!attrs.is(AttrKind::kDictionary)) return std::nullopt;
      return Parsed(attrs.Get("sdy.sharding"));
    }
    const Operation* op = value->defining_op();
    if (op == nullptr || op->parent_block() != &body) return std::nullopt;
    const std::string_view name = op->name();
    if (name == "sdy.sharding_constraint" || name == "sdy.reshard") {
      return Parsed(op->GetAttr("sharding"));
    }
    if (IsManualComputation(*op)) {
      StatusOr<std::vector<TensorSharding>> shardings =
          ParseShardingPerValue(op->GetAttr("out_shardings").ToString());
      if (!shardings.ok() ||
          value->index() >= static_cast<int>(shardings->size())) {
        return std::nullopt;
      }
      return (*shardings)[value->index()];
    }
    const std::vector<int64_t>& shape = value->type().shape();
    auto operand_sharding = [&](int i) -> std::optional<TensorSharding> {
      if (i >= op->num_operands()) return std::nullopt;
      return ShardingOf(op->operand(i), depth + 1);
    };
    if ((IsElementwise(*op) && op->num_results() == 1) ||
        name == "stablehlo.concatenate") {
      // Operands of the result's shape (a concatenation's of its rank) must
      // agree, along the concatenated dimension too; operands with no
      // sharding take any.
      int64_t along = -1;
      if (name == "stablehlo.concatenate") {
        Attribute dimension = op->GetAttr("dimension");
        if (!dimension.is(AttrKind::kInteger)) return std::nullopt;
        along = dimension.int_value();
      }
      std::optional<TensorSharding> agreed;
      for (int i = 0; i < op->num_operands(); ++i) {
        const Type& type = op->operand(i)->type();
        if (!type.IsTensor() || type.rank() != value->type().rank()) continue;
        if (along < 0 && type.shape() != shape) continue;
        std::optional<TensorSharding> sharding = operand_sharding(i);
        if (!sharding) continue;
        if (agreed) {
          if (!SameMesh(*agreed, *sharding)) return std::nullopt;
          for (size_t d = 0; d < agreed->dims.size(); ++d) {
            if (!SameAxes(agreed->dims[d], sharding->dims[d])) {
              return std::nullopt;
            }
          }
        }
        agreed = std::move(sharding);
      }
      return agreed;
    }
    if (name == "func.call") {
      // What the callee returns: its result's own sharding, else that of
      // the sharding constraint it returns, or of the argument it returns
      // (its declared sharding, else the call's operand's), as Shardy sees
      // through the call once inlined.
      const Operation* callee = Callee(*op);
      if (callee == nullptr) return std::nullopt;
      const ir::Block& callee_body = ir::func::Body(*callee);
      const int i = value->index();
      Attribute result_attrs = ir::func::ResultAttrs(*callee, i);
      if (result_attrs.is(AttrKind::kDictionary)) {
        if (auto own = Parsed(result_attrs.Get("sdy.sharding"))) return own;
      }
      const Operation* ret = callee_body.terminator();
      if (ret == nullptr || i >= ret->num_operands()) return std::nullopt;
      const Value* returned = ret->operand(i);
      // Exported functions wrap their values in identity casts.
      const Operation* maker = returned->defining_op();
      while (maker != nullptr &&
             maker->name() == "builtin.unrealized_conversion_cast" &&
             maker->num_operands() == 1 &&
             maker->operand(0)->type() == returned->type()) {
        returned = maker->operand(0);
        maker = returned->defining_op();
      }
      if (maker != nullptr && (maker->name() == "sdy.sharding_constraint" ||
                               maker->name() == "sdy.reshard")) {
        return Parsed(maker->GetAttr("sharding"));
      }
      if (!returned->IsBlockArgument() ||
          returned->owner_block() != &callee_body ||
          returned->index() >= op->num_operands()) {
        return std::nullopt;
      }
      Attribute arg_attrs = ir::func::ArgAttrs(*callee, returned->index());
      if (arg_attrs.is(AttrKind::kDictionary)) {
        if (auto declared = Parsed(arg_attrs.Get("sdy.sharding"))) {
          return declared;
        }
      }
      return operand_sharding(returned->index());
    }
    if (name == "stablehlo.transpose") {
      Attribute permutation = op->GetAttr("permutation");
      std::optional<TensorSharding> operand = operand_sharding(0);
      if (!operand || !permutation.is(AttrKind::kDenseArray)) {
        return std::nullopt;
      }
      return Moved(*operand, permutation.dense_ints());
    }
    if (name == "stablehlo.broadcast_in_dim") {
      Attribute dims = op->GetAttr("broadcast_dimensions");
      std::optional<TensorSharding> operand = operand_sharding(0);
      if (!operand || !dims.is(AttrKind::kDenseArray)) return std::nullopt;
      const std::vector<int64_t>& in_shape = op->operand(0)->type().shape();
      std::vector<int64_t> source(shape.size(), -1);
      for (size_t i = 0; i < dims.dense_ints().size(); ++i) {
        const int64_t j = dims.dense_ints()[i];
        if (j < 0 || j >= static_cast<int64_t>(shape.size()) ||
            i >= in_shape.size()) {
          return std::nullopt;
        }
        // A dimension broadcast from size 1 is new: it has no axes.
        if (in_shape[i] == shape[j]) source[j] = static_cast<int64_t>(i);
      }
      return Moved(*operand, source);
    }
    if (name == "stablehlo.reshape") {
      std::optional<TensorSharding> operand = operand_sharding(0);
      if (!operand) return std::nullopt;
      return Reshaped(*operand, op->operand(0)->type().shape(), shape);
    }
    if (name == "stablehlo.reduce") {
      Attribute dims = op->GetAttr("dimensions");
      const int inputs = op->num_operands() / 2;
      if (!dims.is(AttrKind::kDenseArray) || value->index() >= inputs) {
        return std::nullopt;
      }
      std::optional<TensorSharding> operand = operand_sharding(value->index());
      if (!operand) return std::nullopt;
      std::set<int64_t> reduced(dims.dense_ints().begin(),
                                dims.dense_ints().end());
      std::vector<int64_t> source;
      for (int64_t d = 0; d < static_cast<int64_t>(operand->dims.size()); ++d) {
        if (!reduced.count(d)) source.push_back(d);
      }
      return Moved(*operand, source);
    }
    if (name == "stablehlo.dot_general" && op->num_operands() == 2) {
      Attribute numbers = op->GetAttr("dot_dimension_numbers");
      if (!numbers.is(AttrKind::kDotDimensionNumbers)) return std::nullopt;
      const ir::DotDimensionNumbers& dot = numbers.dot();
      std::optional<TensorSharding> lhs = operand_sharding(0);
      std::optional<TensorSharding> rhs = operand_sharding(1);
      if (lhs && rhs && !SameMesh(*lhs, *rhs)) rhs.reset();
      if (!lhs && !rhs) return std::nullopt;
      const std::vector<int64_t> lhs_free = DotFreeDims(
          op->operand(0)->type().rank(), dot.lhs_batching_dimensions,
          dot.lhs_contracting_dimensions);
      const std::vector<int64_t> rhs_free = DotFreeDims(
          op->operand(1)->type().rank(), dot.rhs_batching_dimensions,
          dot.rhs_contracting_dimensions);
      const TensorSharding& any = lhs ? *lhs : *rhs;
      TensorSharding result;
      result.mesh_name = any.mesh_name;
      result.inline_mesh = any.inline_mesh;
      std::set<std::string> taken;
      auto add = [&](const std::optional<TensorSharding>& from, int64_t dim,
                     const std::optional<TensorSharding>& other,
                     int64_t other_dim) {
        std::vector<AxisRef> axes;
        if (from && dim < static_cast<int64_t>(from->dims.size())) {
          axes = from->dims[dim];
        }
        if (axes.empty() && other && other_dim >= 0 &&
            other_dim < static_cast<int64_t>(other->dims.size())) {
          axes = other->dims[other_dim];
        }
        std::vector<AxisRef> kept;
        for (AxisRef& axis : axes) {
          if (taken.count(axis.name)) break;  // the rest stay minor: drop
          kept.push_back(axis);
        }
        for (const AxisRef& axis : kept) taken.insert(axis.name);
        result.dims.push_back(std::move(kept));
      };
      for (size_t k = 0; k < dot.lhs_batching_dimensions.size(); ++k) {
        add(lhs, dot.lhs_batching_dimensions[k], rhs,
            k < dot.rhs_batching_dimensions.size()
                ? dot.rhs_batching_dimensions[k]
                : -1);
      }
      for (int64_t d : lhs_free) add(lhs, d, std::nullopt, -1);
      for (int64_t d : rhs_free) add(rhs, d, std::nullopt, -1);
      return result;
    }
    return std::nullopt;
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
  std::map<const Value*, std::optional<TensorSharding>> sharding_memo_;
};

}  // namespace

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

}  // namespace kiln::compile::spmd
