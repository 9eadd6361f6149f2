// Helpers shared by the lower_*.cc files, and the table of families.
#include "compile/lower_families.h"

#include "exec/kernels/convert.h"

namespace kiln::compile {

void RegisterAllLowerings() {
  RegisterStructuralLowerings();
  RegisterElementwiseLowerings();
  RegisterShapeLowerings();
  RegisterReduceLowerings();
  RegisterDotLowerings();
  RegisterGatherScatterLowerings();
  RegisterControlFlowLowerings();
  RegisterMiscLowerings();
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

}  // namespace kiln::compile
