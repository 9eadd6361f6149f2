// Helpers shared by the lower_*.cc files, and the table of families.
#include "compile/lower_families.h"

#include <algorithm>

#include "exec/kernels/element.h"

#include "exec/kernels/convert.h"
#include "exec/kernels/shape.h"

namespace kiln::compile {

void RegisterAllLowerings() {
  RegisterStructuralLowerings();
  RegisterElementwiseLowerings();
  RegisterShapeLowerings();
  RegisterReduceLowerings();
  RegisterDotLowerings();
  RegisterEinsumLowerings();
  RegisterGatherScatterLowerings();
  RegisterControlFlowLowerings();
  RegisterMiscLowerings();
  RegisterCollectiveLowerings();
  RegisterSortLowerings();
}

SlotId ConvertSlot(Lowering& lowering, const ir::Operation& op, SlotId slot,
                   ElementType to) {
  const ArrayShape& shape = lowering.shape(slot);
  if (shape.type == to) return slot;
  SlotId converted = lowering.NewTemp(ArrayShape{to, shape.dims});
  lowering.Emit(op,
                exec::MakeConvertKernel(shape.type, to, shape.num_elements()),
                {slot}, {converted});
  return converted;
}

SlotId TransposeSlot(Lowering& lowering, const ir::Operation& op, SlotId slot,
                     const std::vector<int64_t>& permutation) {
  bool identity = true;
  for (size_t i = 0; i < permutation.size(); ++i) {
    identity &= permutation[i] == static_cast<int64_t>(i);
  }
  if (identity) return slot;
  ArrayShape in = lowering.shape(slot);
  std::vector<int64_t> in_strides = in.Strides();
  exec::StridedCopy copy;
  ArrayShape out{in.type, {}};
  for (int64_t d : permutation) {
    out.dims.push_back(in.dims[d]);
    copy.source_strides.push_back(in_strides[d]);
  }
  copy.dims = out.dims;
  copy.target_strides = out.Strides();
  SlotId result = lowering.NewTemp(out);
  lowering.Emit(
      op, exec::MakeStridedCopyKernel(std::move(copy), in.element_bytes()),
      {slot}, {result});
  return result;
}

StatusOr<std::vector<int64_t>> IntsAttr(
    const ir::Operation& op, std::string_view name,
    std::optional<std::vector<int64_t>> fallback) {
  ir::Attribute attr = op.GetAttr(name);
  if (!attr) {
    if (fallback) return *fallback;
    return InvalidArgumentError(op.Describe(), ": missing attribute ", name);
  }
  auto values = attr.AsIntVector();
  if (!values) {
    return InvalidArgumentError(op.Describe(), ": attribute ", name,
                                " should be a list of integers, got ",
                                attr.ToString());
  }
  return *values;
}

StatusOr<int64_t> IntAttr(const ir::Operation& op, std::string_view name,
                          std::optional<int64_t> fallback) {
  ir::Attribute attr = op.GetAttr(name);
  if (!attr) {
    if (fallback) return *fallback;
    return InvalidArgumentError(op.Describe(), ": missing attribute ", name);
  }
  if (attr.is(ir::AttrKind::kInteger)) return attr.int_value();
  auto values = attr.AsIntVector();
  if (values && values->size() == 1) return (*values)[0];
  return InvalidArgumentError(op.Describe(), ": attribute ", name,
                              " should be an integer, got ", attr.ToString());
}

bool BoolAttr(const ir::Operation& op, std::string_view name) {
  ir::Attribute attr = op.GetAttr(name);
  if (attr.is(ir::AttrKind::kBool)) return attr.bool_value();
  return attr.is(ir::AttrKind::kUnit);
}

Status UnsupportedType(const ir::Operation& op, ElementType type) {
  return UnimplementedError(op.Describe(), ": element type ",
                            ir::ElementTypeName(type), " is not supported");
}

std::optional<double> FloatSplat(const ir::Operation& op, bool narrow_too) {
  if (!op.is(ir::OpCode::kConstant) || op.num_results() != 1)
    return std::nullopt;
  ir::Attribute value = op.GetAttr("value");
  if (!value.is(ir::AttrKind::kDenseElements) || !value.dense_is_splat()) {
    return std::nullopt;
  }
  const ir::Type type = op.result(0)->type();
  if (!type.IsTensor() || !type.element().is(ir::TypeKind::kElement)) {
    return std::nullopt;
  }
  const ir::ElementType element = type.element().element_type();
  const bool narrow =
      element == ir::ElementType::kF16 || element == ir::ElementType::kBF16;
  if (element != ir::ElementType::kF32 && element != ir::ElementType::kF64 &&
      !(narrow_too && narrow)) {
    return std::nullopt;
  }
  const std::string& data = value.dense_data();
  if (data.size() != static_cast<size_t>(ir::StorageBytes(element))) {
    return std::nullopt;
  }
  return exec::LoadDouble(element,
                          reinterpret_cast<const std::byte*>(data.data()), 0);
}

std::optional<Comparison> ComparisonOf(const ir::Operation* op) {
  if (op == nullptr || !op->is(ir::OpCode::kCompare) ||
      op->num_operands() != 2) {
    return std::nullopt;
  }
  ir::Attribute direction = op->GetAttr("comparison_direction");
  if (!direction.is(ir::AttrKind::kEnum)) return std::nullopt;
  ir::Attribute type = op->GetAttr("compare_type");
  return Comparison{direction.enum_value(), type.is(ir::AttrKind::kEnum)
                                                ? type.enum_value()
                                                : int64_t{ir::kNoType}};
}

bool ComparesLikeCpp(int64_t compare_type, ElementType type) {
  switch (compare_type) {
    case ir::kNoType:
      return true;
    case ir::kFloatCompare:
      return ir::IsFloat(type);
    case ir::kSignedCompare:
      return ir::IsSignedInteger(type);
    case ir::kUnsignedCompare:
      return ir::IsUnsignedInteger(type);
    default:
      return false;
  }
}

exec::Combiner MatchCombiner(const ir::Region& region) {
  using exec::Combiner;
  if (region.num_blocks() != 1) return Combiner::kGeneric;
  const ir::Block& block = region.front();
  if (block.num_arguments() != 2) return Combiner::kGeneric;
  const auto& ops = block.operations();
  const ir::Value* a = block.argument(0);
  const ir::Value* b = block.argument(1);
  if (ops.size() == 1) {
    const ir::Operation& ret = *ops[0];
    if (ret.num_operands() != 1) return Combiner::kGeneric;
    if (ret.operand(0) == b) return Combiner::kReplace;
    if (ret.operand(0) == a) return Combiner::kKeep;
    return Combiner::kGeneric;
  }
  if (ops.size() != 2) return Combiner::kGeneric;
  const ir::Operation& op = *ops[0];
  const ir::Operation& ret = *ops[1];
  if (ret.num_operands() != 1 || op.num_results() != 1 ||
      ret.operand(0) != op.result(0) || op.num_operands() != 2) {
    return Combiner::kGeneric;
  }
  bool in_order = op.operand(0) == a && op.operand(1) == b;
  bool swapped = op.operand(0) == b && op.operand(1) == a;
  if (!in_order && !swapped) return Combiner::kGeneric;
  // The element types must match the arguments (no implicit conversion).
  if (op.result(0)->type() != a->type()) return Combiner::kGeneric;
  switch (op.code()) {
    case ir::OpCode::kAdd:
      return Combiner::kAdd;
    case ir::OpCode::kMultiply:
      return Combiner::kMultiply;
    case ir::OpCode::kMaximum:
      return Combiner::kMaximum;
    case ir::OpCode::kMinimum:
      return Combiner::kMinimum;
    case ir::OpCode::kAnd:
      return Combiner::kAnd;
    case ir::OpCode::kOr:
      return Combiner::kOr;
    case ir::OpCode::kXor:
      return Combiner::kXor;
    default:
      return Combiner::kGeneric;
  }
}

StatusOr<std::unique_ptr<exec::Region>> LowerScalarRegion(
    Lowering& lowering, const ir::Region& region,
    const std::vector<ElementType>& types) {
  std::vector<exec::ValueSpec> specs;
  for (ElementType type : types) specs.push_back({ArrayShape{type, {}}, false});
  return lowering.LowerRegion(region, specs, Lowering::RegionResults::kAny);
}

int CountUses(const ir::Operation& op, const ir::Value* value) {
  int uses = static_cast<int>(
      std::count(op.operands().begin(), op.operands().end(), value));
  for (const auto& region : op.regions()) {
    for (const auto& block : region->blocks()) {
      for (const auto& inner : block->operations()) {
        uses += CountUses(*inner, value);
      }
    }
  }
  return uses;
}

const ir::Operation* OnlyReader(const ir::Operation& op) {
  const ir::Block* block = op.parent_block();
  if (block == nullptr || op.num_results() != 1) return nullptr;
  const ir::Value* value = op.result(0);
  const auto& ops = block->operations();
  int64_t position = block->IndexOf(&op);
  if (position < 0) return nullptr;
  const ir::Operation* user = nullptr;
  for (size_t i = position + 1; i < ops.size(); ++i) {
    int uses = CountUses(*ops[i], value);
    if (uses == 0) continue;
    if (user != nullptr || uses > 1) return nullptr;
    user = ops[i].get();
  }
  return user;
}

}  // namespace kiln::compile
