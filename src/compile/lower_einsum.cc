// Lowering of ragged_dot (chlo) and einsum: a ragged product's groups and
// an einsum's subscripts read into the kernels' parameters.
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "base/containers.h"
#include "compile/lower_families.h"
#include "exec/kernels/dot.h"
#include "exec/kernels/einsum.h"
#include "exec/kernels/element.h"
#include "exec/kernels/shape.h"

namespace kiln::compile {
namespace {

using ir::OpCode;

// The integer list `name` of a #chlo.ragged_dot<...> attribute, held as a
// struct or as its text (`name = [1, 2]`).
std::vector<int64_t> StructInts(const ir::Attribute& attr,
                                std::string_view name) {
  if (attr.is(ir::AttrKind::kDialectStruct)) {
    for (const auto& [key, value] : attr.struct_fields()) {
      if (key == name) {
        if (auto ints = value.AsIntVector()) return *ints;
      }
    }
    return {};
  }
  std::vector<int64_t> values;
  if (!attr.is(ir::AttrKind::kOpaque)) return values;
  const std::string& text = attr.opaque_text();
  size_t at = text.find(name);
  if (at == std::string::npos) return values;
  size_t open = text.find('[', at), close = text.find(']', at);
  if (open == std::string::npos || close == std::string::npos || close < open)
    return values;
  for (std::string_view piece : StrSplit(
           std::string_view(text).substr(open + 1, close - open - 1), ',')) {
    if (auto value = ParseInt64(StripWhitespace(piece)))
      values.push_back(*value);
  }
  return values;
}

Status LowerRaggedDot(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(SlotId lhs, lowering.Operand(op, 0));
  ASSIGN_OR_RETURN(SlotId rhs, lowering.Operand(op, 1));
  ASSIGN_OR_RETURN(SlotId sizes, lowering.Operand(op, 2));
  ir::Attribute dn = op.GetAttr("ragged_dot_dimension_numbers");
  if (!dn.is(ir::AttrKind::kDialectStruct) && !dn.is(ir::AttrKind::kOpaque)) {
    return InvalidArgumentError(op.Describe(),
                                ": missing ragged_dot_dimension_numbers",
                                dn ? StrCat(" (got ", dn.ToString(), ")") : "");
  }
  std::vector<int64_t> lhs_batch = StructInts(dn, "lhs_batching_dimensions");
  std::vector<int64_t> rhs_batch = StructInts(dn, "rhs_batching_dimensions");
  std::vector<int64_t> lhs_contract =
      StructInts(dn, "lhs_contracting_dimensions");
  std::vector<int64_t> rhs_contract =
      StructInts(dn, "rhs_contracting_dimensions");
  std::vector<int64_t> lhs_ragged = StructInts(dn, "lhs_ragged_dimensions");
  std::vector<int64_t> rhs_group = StructInts(dn, "rhs_group_dimensions");
  ArrayShape l = lowering.shape(lhs), r = lowering.shape(rhs),
             g = lowering.shape(sizes);
  if (lhs_ragged.size() != 1 || rhs_group.size() != 1 || g.rank() != 1 ||
      Contains(lhs_contract, lhs_ragged[0]) ||
      Contains(lhs_batch, lhs_ragged[0])) {
    return UnimplementedError(
        op.Describe(),
        ": only a ragged non-contracting lhs "
        "dimension with a group dimension in rhs is supported");
  }
  RETURN_IF_ERROR(
      CheckDistinctDims(op, lhs_batch, l.rank(), "lhs batching dimensions"));
  RETURN_IF_ERROR(
      CheckDistinctDims(op, rhs_batch, r.rank(), "rhs batching dimensions"));
  RETURN_IF_ERROR(CheckDistinctDims(op, lhs_contract, l.rank(),
                                    "lhs contracting dimensions"));
  RETURN_IF_ERROR(CheckDistinctDims(op, rhs_contract, r.rank(),
                                    "rhs contracting dimensions"));
  RETURN_IF_ERROR(
      CheckDistinctDims(op, rhs_group, r.rank(), "rhs group dimensions"));
  int64_t groups = r.dims[rhs_group[0]];
  if (g.dims[0] != groups || lhs_batch.size() != rhs_batch.size() ||
      lhs_contract.size() != rhs_contract.size()) {
    return InvalidArgumentError(op.Describe(), ": operands do not match");
  }
  std::vector<int64_t> lhs_perm = lhs_batch, rhs_perm = rhs_group, result_dims;
  rhs_perm.insert(rhs_perm.end(), rhs_batch.begin(), rhs_batch.end());
  int64_t batch = 1, m = 1, k = 1, n = 1, ragged_inner = 1;
  for (int64_t d : lhs_batch) {
    batch *= l.dims[d];
    result_dims.push_back(l.dims[d]);
  }
  bool after_ragged = false;
  for (int64_t d = 0; d < l.rank(); ++d) {
    if (Contains(lhs_batch, d) || Contains(lhs_contract, d)) continue;
    lhs_perm.push_back(d);
    m *= l.dims[d];
    result_dims.push_back(l.dims[d]);
    if (after_ragged) ragged_inner *= l.dims[d];
    if (d == lhs_ragged[0]) after_ragged = true;
  }
  for (size_t i = 0; i < lhs_contract.size(); ++i) {
    if (l.dims[lhs_contract[i]] != r.dims[rhs_contract[i]]) {
      return InvalidArgumentError(op.Describe(), ": contracting sizes differ");
    }
    k *= l.dims[lhs_contract[i]];
    lhs_perm.push_back(lhs_contract[i]);
    rhs_perm.push_back(rhs_contract[i]);
  }
  for (int64_t d = 0; d < r.rank(); ++d) {
    if (Contains(rhs_batch, d) || Contains(rhs_contract, d) ||
        d == rhs_group[0])
      continue;
    rhs_perm.push_back(d);
    n *= r.dims[d];
    result_dims.push_back(r.dims[d]);
  }
  ASSIGN_OR_RETURN(ArrayShape result, lowering.ResultShape(op, 0, result_dims));
  ElementType compute = exec::ComputeType(result.type);
  auto kernel =
      exec::MakeRaggedMatmulKernel(compute, batch, m, k, n, groups,
                                   l.dims[lhs_ragged[0]], ragged_inner, g.type);
  if (!kernel) return UnsupportedType(op, result.type);
  SlotId a = TransposeSlot(lowering, op,
                           ConvertSlot(lowering, op, lhs, compute), lhs_perm);
  SlotId b = TransposeSlot(lowering, op,
                           ConvertSlot(lowering, op, rhs, compute), rhs_perm);
  SlotId out = lowering.NewTemp(ArrayShape{compute, result_dims});
  lowering.Emit(op, std::move(kernel), {a, b, sizes}, {out});
  lowering.Bind(op.result(0), ConvertSlot(lowering, op, out, result.type));
  return OkStatus();
}

// einsum ("ab,bc->ac") and unary_einsum ("ab->ba"): labels are letters.
Status LowerEinsum(Lowering& lowering, const ir::Operation& op) {
  ir::Attribute config = op.GetAttr("einsum_config");
  if (!config.is(ir::AttrKind::kString)) {
    return InvalidArgumentError(op.Describe(), ": missing einsum_config");
  }
  std::string_view text = config.string_value();
  size_t arrow = text.find("->");
  if (arrow == std::string_view::npos) {
    return InvalidArgumentError(op.Describe(), ": einsum_config \"", text,
                                "\" has no ->");
  }
  std::vector<std::string_view> inputs = StrSplit(text.substr(0, arrow), ',');
  std::string_view output = text.substr(arrow + 2);
  if (static_cast<int>(inputs.size()) != op.num_operands()) {
    return InvalidArgumentError(op.Describe(), ": einsum_config \"", text,
                                "\" names ", inputs.size(),
                                " operands; the op has ", op.num_operands());
  }
  std::map<char, int> label_of;
  std::vector<int64_t> label_sizes;
  std::vector<exec::EinsumOperand> operands;
  std::vector<SlotId> slots;
  ElementType type = ElementType::kF32;
  for (int k = 0; k < op.num_operands(); ++k) {
    ASSIGN_OR_RETURN(SlotId slot, lowering.Operand(op, k));
    ArrayShape shape = lowering.shape(slot);
    std::string_view labels = StripWhitespace(inputs[k]);
    if (static_cast<int64_t>(labels.size()) != shape.rank()) {
      return InvalidArgumentError(op.Describe(), ": \"", labels,
                                  "\" does not label ", shape.ToString());
    }
    exec::EinsumOperand operand;
    operand.dims = shape.dims;
    for (size_t d = 0; d < labels.size(); ++d) {
      auto [it, inserted] =
          label_of.emplace(labels[d], static_cast<int>(label_sizes.size()));
      if (inserted) label_sizes.push_back(shape.dims[d]);
      if (label_sizes[it->second] != shape.dims[d]) {
        return InvalidArgumentError(op.Describe(), ": label ", labels[d],
                                    " has sizes ", label_sizes[it->second],
                                    " and ", shape.dims[d]);
      }
      operand.labels.push_back(it->second);
    }
    operands.push_back(std::move(operand));
    slots.push_back(slot);
    type = shape.type;
  }
  std::vector<int> result_labels;
  std::vector<int64_t> result_dims;
  for (char c : StripWhitespace(output)) {
    auto it = label_of.find(c);
    if (it == label_of.end()) {
      return InvalidArgumentError(op.Describe(), ": output label ", c,
                                  " is not an input label");
    }
    result_labels.push_back(it->second);
    result_dims.push_back(label_sizes[it->second]);
  }
  ASSIGN_OR_RETURN(ArrayShape result, lowering.ResultShape(op, 0, result_dims));
  ElementType compute = exec::ComputeType(result.type);
  for (SlotId& slot : slots) slot = ConvertSlot(lowering, op, slot, compute);
  auto kernel =
      exec::MakeEinsumKernel(compute, std::move(operands),
                             std::move(result_labels), std::move(label_sizes));
  if (!kernel) return UnsupportedType(op, type);
  SlotId out = lowering.NewTemp(ArrayShape{compute, result_dims});
  lowering.Emit(op, std::move(kernel), std::move(slots), {out});
  lowering.Bind(op.result(0), ConvertSlot(lowering, op, out, result.type));
  return OkStatus();
}

}  // namespace

void RegisterEinsumLowerings() {
  RegisterLowering(OpCode::kEinsum, LowerEinsum);
  RegisterLowering(OpCode::kUnaryEinsum, LowerEinsum);
  RegisterLowering(OpCode::kChloRaggedDot, LowerRaggedDot);
}

}  // namespace kiln::compile
