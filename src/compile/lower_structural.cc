// Lowering of ops that define or route values: constant, iota, call,
// composite, tuples, tokens, optimization_barrier, convert,
// bitcast_convert, reduce_precision, uniform_quantize/dequantize.
#include <cstring>

#include "compile/lower_families.h"
#include "exec/kernels/convert.h"
#include "exec/kernels/copy.h"
#include "exec/kernels/data_movement.h"
#include "exec/kernels/element.h"
#include "exec/kernels/quantize.h"
#include "exec/kernels/shape.h"

namespace kiln::compile {
namespace {

using ir::OpCode;

// Dense data in Kiln's canonical form: i1 as 0/1, signed sub-byte types
// sign-extended, unsigned sub-byte types zero-extended.
void NormalizeStorage(ElementType type, std::string& data) {
  int bits = ir::BitWidth(type);
  if (ir::IsBool(type)) {
    for (char& c : data) c = c != 0 ? 1 : 0;
  } else if (ir::IsInteger(type) && bits < 8) {
    for (char& c : data) {
      c = static_cast<char>(exec::WrapToBits(static_cast<unsigned char>(c),
                                             bits, ir::IsSignedInteger(type)));
    }
  }
}

// Splat constants larger than this are not expanded into memory.
constexpr int64_t kMaxExpandedSplatBytes = 64 * 1024;

Status LowerConstant(Lowering& lowering, const ir::Operation& op) {
  ir::Attribute value = op.GetAttr("value");
  ASSIGN_OR_RETURN(ArrayShape shape, lowering.ResultShape(op, 0));
  // Constants are stored in their storage type even inside quantized ops.
  const ir::Type& type = op.result(0)->type();
  shape.type = type.StorageElementType();
  std::string data;
  ElementType wanted_type = lowering.SlotElementType(type).value();
  if (value.is(ir::AttrKind::kDenseElements) && value.dense_is_splat() &&
      shape.byte_size() > kMaxExpandedSplatBytes && wanted_type == shape.type) {
    // A large splat stays one element: a broadcast view of a scalar
    // constant, which consumers fuse with and folding never expands.
    std::string element = value.dense_data();
    if (static_cast<int64_t>(element.size()) != shape.element_bytes()) {
      return InvalidArgumentError(op.Describe(), ": splat element has ",
                                  element.size(), " bytes; ", shape.ToString(),
                                  " needs ", shape.element_bytes());
    }
    NormalizeStorage(shape.type, element);
    ASSIGN_OR_RETURN(SlotId scalar,
                     lowering.NewConstant(ArrayShape{shape.type, {}}, element));
    exec::StridedCopy broadcast;
    broadcast.dims = shape.dims;
    broadcast.source_strides.assign(shape.dims.size(), 0);
    broadcast.target_strides = shape.Strides();
    SlotId result = lowering.NewTemp(shape);
    lowering.Emit(op,
                  exec::MakeStridedCopyKernel(std::move(broadcast),
                                              shape.element_bytes()),
                  {scalar}, {result});
    lowering.Bind(op.result(0), result);
    return OkStatus();
  }
  if (value.is(ir::AttrKind::kDenseElements)) {
    data = value.DenseDataExpanded();
  } else if (value.is(ir::AttrKind::kDenseResource)) {
    const auto& blob = value.resource();
    if (!blob || !blob->present) {
      return InvalidArgumentError(op.Describe(), ": dense_resource blob ",
                                  blob ? blob->key : "", " has no data");
    }
    data = blob->data;
  } else {
    return InvalidArgumentError(op.Describe(), ": unsupported constant value ",
                                value ? value.ToString() : "(none)");
  }
  if (static_cast<int64_t>(data.size()) != shape.byte_size()) {
    return InvalidArgumentError(op.Describe(), ": constant data has ",
                                data.size(), " bytes; ", shape.ToString(),
                                " needs ", shape.byte_size());
  }
  NormalizeStorage(shape.type, data);
  ASSIGN_OR_RETURN(SlotId slot, lowering.NewConstant(shape, data));
  if (lowering.slot(slot).shape.type != shape.type) {
    return InternalError("constant type mismatch");
  }
  // Inside a quantized op lowered through float, a quantized constant is
  // still stored as integers: the caller dequantizes operands, not
  // results, so dequantize here.
  ElementType wanted = lowering.SlotElementType(type).value();
  if (wanted != shape.type && type.element().is(ir::TypeKind::kQuantized)) {
    SlotId expressed = lowering.NewTemp(ArrayShape{wanted, shape.dims});
    const ir::QuantizedType& q = type.element().quantized();
    exec::QuantizationParams params{
        q.storage_type,        q.storage_min, q.storage_max, q.expressed_type,
        q.axis ? *q.axis : -1, q.scales,      q.zero_points};
    lowering.Emit(op, exec::MakeDequantizeKernel(shape, params), {slot},
                  {expressed});
    slot = expressed;
  }
  lowering.Bind(op.result(0), slot);
  return OkStatus();
}

Status LowerIota(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(int64_t dimension, IntAttr(op, "iota_dimension"));
  std::optional<std::vector<int64_t>> dims;
  if (op.is(OpCode::kDynamicIota)) {
    ASSIGN_OR_RETURN(dims,
                     lowering.RequireConstantInts(op, 0, "the output shape"));
  }
  ASSIGN_OR_RETURN(ArrayShape shape, lowering.ResultShape(op, 0, dims));
  if (dimension < 0 || (shape.rank() > 0 && dimension >= shape.rank())) {
    return InvalidArgumentError(op.Describe(), ": iota_dimension ", dimension,
                                " out of range for ", shape.ToString());
  }
  SlotId out = lowering.NewTemp(shape);
  lowering.Emit(op, exec::MakeIotaKernel(shape, dimension), {}, {out});
  lowering.Bind(op.result(0), out);
  return OkStatus();
}

Status LowerCall(Lowering& lowering, const ir::Operation& op) {
  ir::Attribute callee_attr = op.GetAttr("callee");
  if (!callee_attr.is(ir::AttrKind::kSymbolRef)) {
    return InvalidArgumentError(op.Describe(), ": missing callee");
  }
  const ir::Operation* callee =
      lowering.module().LookupFunction(callee_attr.symbol_root());
  if (callee == nullptr) {
    return InvalidArgumentError(op.Describe(), ": no function @",
                                callee_attr.symbol_root());
  }
  std::vector<std::vector<SlotId>> arguments;
  for (const ir::Value* operand : op.operands()) {
    ASSIGN_OR_RETURN(std::vector<SlotId> leaves, lowering.Leaves(operand));
    arguments.push_back(std::move(leaves));
  }
  return lowering.InlineCall(op, *callee, arguments);
}

Status LowerComposite(Lowering& lowering, const ir::Operation& op) {
  // JAX's lax.top_k arrives as a chlo.top_k composite whose decomposition
  // sorts the whole last dimension; the top_k kernel selects k instead.
  ir::Attribute name = op.GetAttr("name");
  if (name.is(ir::AttrKind::kString) && name.string_value() == "chlo.top_k") {
    ir::Attribute attributes = op.GetAttr("composite_attributes");
    ir::Attribute k = attributes.is(ir::AttrKind::kDictionary)
                          ? attributes.Get("k")
                          : ir::Attribute();
    ir::Attribute largest = attributes.is(ir::AttrKind::kDictionary)
                                ? attributes.Get("largest")
                                : ir::Attribute();
    const bool descending =
        !largest || (largest.is(ir::AttrKind::kBool) && largest.bool_value());
    if (k.is(ir::AttrKind::kInteger) && descending && op.num_operands() == 1 &&
        op.num_results() == 2) {
      ASSIGN_OR_RETURN(SlotId operand, lowering.Operand(op, 0));
      return EmitTopK(lowering, op, operand, k.int_value());
    }
  }
  ir::Attribute decomposition = op.GetAttr("decomposition");
  if (!decomposition.is(ir::AttrKind::kSymbolRef)) {
    return InvalidArgumentError(op.Describe(), ": missing decomposition");
  }
  const ir::Operation* callee =
      lowering.module().LookupFunction(decomposition.symbol_root());
  if (callee == nullptr) {
    return InvalidArgumentError(op.Describe(), ": no decomposition function @",
                                decomposition.symbol_root());
  }
  std::vector<std::vector<SlotId>> arguments;
  for (const ir::Value* operand : op.operands()) {
    ASSIGN_OR_RETURN(std::vector<SlotId> leaves, lowering.Leaves(operand));
    arguments.push_back(std::move(leaves));
  }
  return lowering.InlineCall(op, *callee, arguments);
}

Status LowerTuple(Lowering& lowering, const ir::Operation& op) {
  std::vector<SlotId> leaves;
  for (const ir::Value* operand : op.operands()) {
    ASSIGN_OR_RETURN(std::vector<SlotId> part, lowering.Leaves(operand));
    leaves.insert(leaves.end(), part.begin(), part.end());
  }
  lowering.Bind(op.result(0), std::move(leaves));
  return OkStatus();
}

int64_t CountLeaves(const ir::Type& type) {
  if (!type.IsTuple()) return 1;
  int64_t count = 0;
  for (const ir::Type& element : type.elements()) count += CountLeaves(element);
  return count;
}

Status LowerGetTupleElement(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(int64_t index, IntAttr(op, "index"));
  const ir::Type& tuple = op.operand(0)->type();
  if (!tuple.IsTuple() || index < 0 ||
      index >= static_cast<int64_t>(tuple.elements().size())) {
    return InvalidArgumentError(op.Describe(), ": index ", index,
                                " out of range for ", tuple.ToString());
  }
  ASSIGN_OR_RETURN(std::vector<SlotId> leaves, lowering.Leaves(op.operand(0)));
  int64_t begin = 0;
  for (int64_t i = 0; i < index; ++i) begin += CountLeaves(tuple.elements()[i]);
  int64_t count = CountLeaves(tuple.elements()[index]);
  lowering.Bind(op.result(0),
                std::vector<SlotId>(leaves.begin() + begin,
                                    leaves.begin() + begin + count));
  return OkStatus();
}

// Results are the operands (optimization_barrier and similar).
Status LowerForward(Lowering& lowering, const ir::Operation& op) {
  for (int i = 0; i < op.num_results(); ++i) {
    ASSIGN_OR_RETURN(std::vector<SlotId> leaves,
                     lowering.Leaves(op.operand(i)));
    lowering.Bind(op.result(i), std::move(leaves));
  }
  return OkStatus();
}

Status LowerToken(Lowering& lowering, const ir::Operation& op) {
  lowering.Bind(op.result(0), lowering.NewToken());
  return OkStatus();
}

Status LowerConvert(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(SlotId input, lowering.Operand(op, 0));
  ASSIGN_OR_RETURN(ArrayShape result,
                   lowering.ResultShape(op, 0, lowering.shape(input).dims));
  // A convert to the operand's own type (JAX converts weakly typed values
  // so) is the operand itself.
  if (result.type == lowering.shape(input).type) {
    lowering.Bind(op.result(0), lowering.NewAlias(input, result));
    return OkStatus();
  }
  SlotId out = lowering.NewTemp(result);
  lowering.Emit(op,
                exec::MakeConvertKernel(lowering.shape(input).type, result.type,
                                        result.num_elements()),
                {input}, {out});
  lowering.Bind(op.result(0), out);
  return OkStatus();
}

Status LowerBitcastConvert(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(SlotId input, lowering.Operand(op, 0));
  const ArrayShape& in = lowering.shape(input);
  // Bits are reinterpreted in the storage types (quantized included).
  ElementType to = op.result(0)->type().StorageElementType();
  int from_bits = ir::BitWidth(in.type), to_bits = ir::BitWidth(to);
  std::vector<int64_t> dims = in.dims;
  if (from_bits > to_bits) {
    dims.push_back(from_bits / to_bits);
  } else if (from_bits < to_bits) {
    if (dims.empty() || dims.back() * from_bits != to_bits) {
      return InvalidArgumentError(op.Describe(), ": cannot bitcast ",
                                  in.ToString(), " to ",
                                  ir::ElementTypeName(to));
    }
    dims.pop_back();
  }
  ASSIGN_OR_RETURN(ArrayShape result, lowering.ResultShape(op, 0, dims));
  result.type = to;
  // Between two types of the same whole-byte width (u32 and f32: JAX's
  // random floats) the bits stay where they are: the result is the operand's
  // memory read as the other type, and a fusion runs through it. Bools are
  // copied, since the kernel writes them as 0 or 1.
  if (from_bits == to_bits && from_bits == ir::StorageBytes(in.type) * 8 &&
      to_bits == ir::StorageBytes(to) * 8 && !ir::IsBool(in.type) &&
      !ir::IsBool(to)) {
    lowering.Bind(op.result(0), lowering.NewAlias(input, result));
    return OkStatus();
  }
  SlotId out = lowering.NewTemp(result);
  lowering.Emit(op,
                exec::MakeBitcastConvertKernel(in.type, to, in.num_elements()),
                {input}, {out});
  lowering.Bind(op.result(0), out);
  return OkStatus();
}

Status LowerReducePrecision(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(SlotId input, lowering.Operand(op, 0));
  ASSIGN_OR_RETURN(int64_t exponent_bits, IntAttr(op, "exponent_bits"));
  ASSIGN_OR_RETURN(int64_t mantissa_bits, IntAttr(op, "mantissa_bits"));
  ArrayShape shape = lowering.shape(input);
  auto format = ir::GetFloatFormat(shape.type);
  if (!format) return UnsupportedType(op, shape.type);
  if (exponent_bits < 1 || mantissa_bits < 0) {
    return InvalidArgumentError(op.Describe(), ": exponent_bits ",
                                exponent_bits, " and mantissa_bits ",
                                mantissa_bits, " must be at least 1 and 0");
  }
  ElementType compute = exec::ComputeType(shape.type);
  // Bits the source type already lacks change nothing; the rest is the same
  // rounding in the wider compute type.
  int source_e = format->exponent_bits, source_m = format->mantissa_bits;
  int compute_e = compute == ElementType::kF64 ? 11 : 8;
  int compute_m = compute == ElementType::kF64 ? 52 : 23;
  int e =
      exponent_bits >= source_e ? compute_e : static_cast<int>(exponent_bits);
  int m =
      mantissa_bits >= source_m ? compute_m : static_cast<int>(mantissa_bits);
  SlotId operand = ConvertSlot(lowering, op, input, compute);
  SlotId out = lowering.NewTemp(ArrayShape{compute, shape.dims});
  lowering.Emit(
      op, exec::MakeReducePrecisionKernel(compute, shape.num_elements(), e, m),
      {operand}, {out});
  lowering.Bind(op.result(0), ConvertSlot(lowering, op, out, shape.type));
  return OkStatus();
}

exec::QuantizationParams ParamsOf(const ir::QuantizedType& q) {
  return exec::QuantizationParams{
      q.storage_type,        q.storage_min, q.storage_max, q.expressed_type,
      q.axis ? *q.axis : -1, q.scales,      q.zero_points};
}

Status LowerUniformQuantize(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(SlotId input, lowering.Operand(op, 0));
  const ir::Type& result_type = op.result(0)->type();
  if (!result_type.IsTensor() ||
      !result_type.element().is(ir::TypeKind::kQuantized)) {
    return InvalidArgumentError(op.Describe(), ": result must be quantized");
  }
  const ir::QuantizedType& q = result_type.element().quantized();
  SlotId expressed = input;
  const ir::Type& in_type = op.operand(0)->type();
  if (in_type.IsTensor() && in_type.element().is(ir::TypeKind::kQuantized)) {
    // Requantization: through the expressed type.
    const ir::QuantizedType& from = in_type.element().quantized();
    expressed = lowering.NewTemp(
        ArrayShape{from.expressed_type, lowering.shape(input).dims});
    lowering.Emit(
        op, exec::MakeDequantizeKernel(lowering.shape(input), ParamsOf(from)),
        {input}, {expressed});
  }
  ASSIGN_OR_RETURN(ArrayShape result,
                   lowering.ResultShape(op, 0, lowering.shape(input).dims));
  SlotId out = lowering.NewTemp(result);
  lowering.Emit(
      op, exec::MakeQuantizeKernel(lowering.shape(expressed), ParamsOf(q)),
      {expressed}, {out});
  lowering.Bind(op.result(0), out);
  return OkStatus();
}

Status LowerUniformDequantize(Lowering& lowering, const ir::Operation& op) {
  ASSIGN_OR_RETURN(SlotId input, lowering.Operand(op, 0));
  const ir::Type& in_type = op.operand(0)->type();
  if (!in_type.IsTensor() || !in_type.element().is(ir::TypeKind::kQuantized)) {
    return InvalidArgumentError(op.Describe(), ": operand must be quantized");
  }
  ASSIGN_OR_RETURN(ArrayShape result,
                   lowering.ResultShape(op, 0, lowering.shape(input).dims));
  SlotId out = lowering.NewTemp(result);
  lowering.Emit(
      op,
      exec::MakeDequantizeKernel(lowering.shape(input),
                                 ParamsOf(in_type.element().quantized())),
      {input}, {out});
  lowering.Bind(op.result(0), out);
  return OkStatus();
}

}  // namespace

void RegisterStructuralLowerings() {
  RegisterLowering(OpCode::kConstant, LowerConstant);
  RegisterLowering(OpCode::kIota, LowerIota);
  RegisterLowering(OpCode::kDynamicIota, LowerIota);
  RegisterLowering(OpCode::kCall, LowerCall);
  RegisterLowering(OpCode::kComposite, LowerComposite);
  RegisterLowering(OpCode::kTuple, LowerTuple);
  RegisterLowering(OpCode::kGetTupleElement, LowerGetTupleElement);
  RegisterLowering(OpCode::kOptimizationBarrier, LowerForward);
  RegisterLowering(OpCode::kAfterAll, LowerToken);
  RegisterLowering(OpCode::kCreateToken, LowerToken);
  RegisterLowering(OpCode::kConvert, LowerConvert);
  RegisterLowering(OpCode::kBitcastConvert, LowerBitcastConvert);
  RegisterLowering(OpCode::kReducePrecision, LowerReducePrecision);
  RegisterLowering(OpCode::kUniformQuantize, LowerUniformQuantize);
  RegisterLowering(OpCode::kUniformDequantize, LowerUniformDequantize);
}

}  // namespace kiln::compile
