// Custom calls to handlers registered through XLA's FFI (exec/ffi.h): the
// typed FFI's custom calls (`api_version = 4`, or JAX's spelling: a
// dictionary `mhlo.backend_config`) lower to one FFI call step whose
// arguments are the operands and whose results are the op's results, with
// the dictionary's entries as the handler's attributes.
#include <cstring>

#include "compile/custom_call.h"
#include "exec/kernels/ffi_call.h"
#include "ir/float_bits.h"

namespace kiln::compile {
namespace {

// XLA's primitive type numbers for Kiln's element types; INVALID where the
// FFI has none Kiln can hand over (sub-byte types: Kiln stores one element
// per byte, XLA packs them).
XLA_FFI_DataType FfiDataType(ElementType type) {
  switch (type) {
    case ElementType::kI1:
      return XLA_FFI_DataType_PRED;
    case ElementType::kI8:
      return XLA_FFI_DataType_S8;
    case ElementType::kI16:
      return XLA_FFI_DataType_S16;
    case ElementType::kI32:
      return XLA_FFI_DataType_S32;
    case ElementType::kI64:
      return XLA_FFI_DataType_S64;
    case ElementType::kIndex:
      return XLA_FFI_DataType_S64;
    case ElementType::kUI8:
      return XLA_FFI_DataType_U8;
    case ElementType::kUI16:
      return XLA_FFI_DataType_U16;
    case ElementType::kUI32:
      return XLA_FFI_DataType_U32;
    case ElementType::kUI64:
      return XLA_FFI_DataType_U64;
    case ElementType::kF16:
      return XLA_FFI_DataType_F16;
    case ElementType::kBF16:
      return XLA_FFI_DataType_BF16;
    case ElementType::kF32:
      return XLA_FFI_DataType_F32;
    case ElementType::kF64:
      return XLA_FFI_DataType_F64;
    case ElementType::kC64:
      return XLA_FFI_DataType_C64;
    case ElementType::kC128:
      return XLA_FFI_DataType_C128;
    case ElementType::kF8E5M2:
      return XLA_FFI_DataType_F8E5M2;
    case ElementType::kF8E4M3FN:
      return XLA_FFI_DataType_F8E4M3FN;
    case ElementType::kF8E4M3B11FNUZ:
      return XLA_FFI_DataType_F8E4M3B11FNUZ;
    case ElementType::kF8E5M2FNUZ:
      return XLA_FFI_DataType_F8E5M2FNUZ;
    case ElementType::kF8E4M3FNUZ:
      return XLA_FFI_DataType_F8E4M3FNUZ;
    case ElementType::kF8E4M3:
      return XLA_FFI_DataType_F8E4M3;
    case ElementType::kF8E3M4:
      return XLA_FFI_DataType_F8E3M4;
    case ElementType::kF8E8M0FNU:
      return XLA_FFI_DataType_F8E8M0FNU;
    default:
      return XLA_FFI_DataType_INVALID;
  }
}

// The bytes of integer `value` as an element of `type` (little-endian).
std::string IntegerBytes(ElementType type, int64_t value) {
  std::string bytes(static_cast<size_t>(ir::StorageBytes(type)), '\0');
  std::memcpy(bytes.data(), &value, bytes.size());
  return bytes;
}

std::string FloatBytes(ElementType type, double value) {
  std::string bytes(static_cast<size_t>(ir::StorageBytes(type)), '\0');
  if (type == ElementType::kF64) {
    std::memcpy(bytes.data(), &value, sizeof(value));
  } else if (type == ElementType::kF32) {
    float narrow = static_cast<float>(value);
    std::memcpy(bytes.data(), &narrow, sizeof(narrow));
  } else {
    uint64_t bits = ir::EncodeFloat(type, value);
    std::memcpy(bytes.data(), &bits, bytes.size());
  }
  return bytes;
}

class AttributeEncoder {
 public:
  explicit AttributeEncoder(const ir::Operation& op) : op_(op) {}

  Status Add(exec::FfiAttributes& out, const std::string& name,
             const ir::Attribute& value) {
    switch (value.kind()) {
      case ir::AttrKind::kBool:
        out.AddScalar(name, XLA_FFI_DataType_PRED,
                      std::string(1, value.bool_value() ? '\1' : '\0'));
        return OkStatus();
      case ir::AttrKind::kInteger: {
        ASSIGN_OR_RETURN(ElementType type, ElementOf(name, value.type()));
        out.AddScalar(name, FfiDataType(type),
                      IntegerBytes(type, value.int_value()));
        return OkStatus();
      }
      case ir::AttrKind::kFloat: {
        ASSIGN_OR_RETURN(ElementType type, ElementOf(name, value.type()));
        out.AddScalar(name, FfiDataType(type),
                      FloatBytes(type, value.float_value()));
        return OkStatus();
      }
      case ir::AttrKind::kString:
        out.AddString(name, value.string_value());
        return OkStatus();
      case ir::AttrKind::kDictionary: {
        auto nested = std::make_unique<exec::FfiAttributes>();
        for (const auto& entry : value.dictionary()) {
          RETURN_IF_ERROR(Add(*nested, entry.first, entry.second));
        }
        out.AddDictionary(name, std::move(nested));
        return OkStatus();
      }
      case ir::AttrKind::kDenseArray: {
        ElementType type = value.dense_array_type();
        XLA_FFI_DataType dtype = FfiDataType(type);
        if (dtype == XLA_FFI_DataType_INVALID) break;
        std::string data;
        const bool is_float = ir::Category(type) == ir::ElementCategory::kFloat;
        for (int64_t i = 0; i < value.dense_array_size(); ++i) {
          data += is_float ? FloatBytes(type, value.dense_floats()[i])
                           : IntegerBytes(type, value.dense_ints()[i]);
        }
        out.AddArray(name, dtype, data,
                     static_cast<size_t>(value.dense_array_size()));
        return OkStatus();
      }
      case ir::AttrKind::kDenseElements: {
        const ir::Type& type = value.type();
        if (!type.IsTensor()) break;
        ASSIGN_OR_RETURN(ElementType element, ElementOf(name, type.element()));
        std::string data = value.DenseDataExpanded();
        const size_t count =
            data.size() / static_cast<size_t>(ir::StorageBytes(element));
        out.AddArray(name, FfiDataType(element), data, count);
        return OkStatus();
      }
      case ir::AttrKind::kArray: {
        // A list of integers (a Python tuple in jax.ffi.ffi_call): an i64
        // array, as XLA reads it.
        std::optional<std::vector<int64_t>> ints = value.AsIntVector();
        if (!ints) break;
        std::string data(ints->size() * sizeof(int64_t), '\0');
        if (!ints->empty()) std::memcpy(data.data(), ints->data(), data.size());
        out.AddArray(name, XLA_FFI_DataType_S64, data, ints->size());
        return OkStatus();
      }
      default:
        break;
    }
    return InvalidArgumentError(
        op_.Describe(), ": FFI attribute \"", name, "\" = ", value.ToString(),
        " has no FFI encoding (scalars, strings, dense arrays and "
        "dictionaries do)");
  }

 private:
  StatusOr<ElementType> ElementOf(const std::string& name,
                                  const ir::Type& type) const {
    if (!type.is(ir::TypeKind::kElement) ||
        FfiDataType(type.element_type()) == XLA_FFI_DataType_INVALID) {
      return InvalidArgumentError(op_.Describe(), ": FFI attribute \"", name,
                                  "\" has type ", type.ToString(),
                                  ", which the FFI cannot pass");
    }
    return type.element_type();
  }

  const ir::Operation& op_;
};

// Refuses layouts other than the default (row-major) one: FFI buffers are
// handed over as Kiln stores them.
Status CheckDefaultLayouts(const ir::Operation& op, const char* attr_name,
                           const std::vector<int64_t>& ranks) {
  ir::Attribute layouts = op.GetAttr(attr_name);
  if (!layouts || !layouts.is(ir::AttrKind::kArray)) return OkStatus();
  for (size_t i = 0; i < layouts.array().size() && i < ranks.size(); ++i) {
    std::optional<std::vector<int64_t>> layout =
        layouts.array()[i].AsIntVector();
    std::vector<int64_t> expected;
    for (int64_t d = ranks[i] - 1; d >= 0; --d) expected.push_back(d);
    if (layout && !layout->empty() && *layout != expected) {
      return UnimplementedError(op.Describe(), ": ", attr_name, "[", i,
                                "] = ", layouts.array()[i].ToString(),
                                " (Kiln hands FFI handlers row-major buffers)");
    }
  }
  return OkStatus();
}

}  // namespace

bool IsFfiCustomCall(const ir::Operation& op) {
  ir::Attribute version = op.GetAttr("api_version");
  if (version.is(ir::AttrKind::kInteger) && version.int_value() == 4) {
    return true;
  }
  if (version.is(ir::AttrKind::kEnum) && version.enum_value() == 4) {
    return true;
  }
  return op.GetAttr("mhlo.backend_config").is(ir::AttrKind::kDictionary);
}

Status LowerFfiCall(Lowering& lowering, const ir::Operation& op,
                    const std::string& target) {
  std::optional<exec::FfiHandler> handler = exec::FindFfiHandler(target);
  if (!handler) {
    return UnimplementedError(op.Describe(), ": custom_call target \"", target,
                              "\" has no FFI handler registered for Kiln");
  }
  if (!IsFfiCustomCall(op)) {
    return UnimplementedError(
        op.Describe(), ": custom_call target \"", target,
        "\" is called with the legacy custom-call API; Kiln runs typed FFI "
        "handlers (api_version = 4, or a dictionary mhlo.backend_config)");
  }
  // Attributes: the dictionary backend config (XLA's typed FFI).
  auto attributes = std::make_unique<exec::FfiAttributes>();
  ir::Attribute config = op.GetAttr("mhlo.backend_config");
  if (!config) config = op.GetAttr("backend_config");
  if (config.is(ir::AttrKind::kDictionary)) {
    AttributeEncoder encoder(op);
    for (const auto& entry : config.dictionary()) {
      RETURN_IF_ERROR(encoder.Add(*attributes, entry.first, entry.second));
    }
  } else if (config && !(config.is(ir::AttrKind::kString) &&
                         config.string_value().empty())) {
    return InvalidArgumentError(op.Describe(), ": FFI custom_call \"", target,
                                "\" has a backend_config that is not a "
                                "dictionary: ",
                                config.ToString());
  }

  std::vector<SlotId> inputs;
  std::vector<exec::FfiBufferSpec> args;
  std::vector<int64_t> operand_ranks;
  for (int i = 0; i < op.num_operands(); ++i) {
    ASSIGN_OR_RETURN(SlotId slot, lowering.Operand(op, i));
    exec::Slot info = lowering.slot(slot);
    exec::FfiBufferSpec spec;
    if (info.is_token) {
      spec.dtype = XLA_FFI_DataType_TOKEN;
    } else {
      spec.dtype = FfiDataType(info.shape.type);
      spec.dims = info.shape.dims;
      if (spec.dtype == XLA_FFI_DataType_INVALID) {
        return UnimplementedError(op.Describe(), ": operand ", i, " of type ",
                                  info.shape.ToString(),
                                  " cannot be passed to an FFI handler");
      }
    }
    operand_ranks.push_back(static_cast<int64_t>(spec.dims.size()));
    inputs.push_back(slot);
    args.push_back(std::move(spec));
  }
  std::vector<SlotId> outputs;
  std::vector<exec::FfiBufferSpec> rets;
  std::vector<int64_t> result_ranks;
  for (int i = 0; i < op.num_results(); ++i) {
    exec::FfiBufferSpec spec;
    SlotId slot;
    if (op.result(i)->type().IsToken()) {
      slot = lowering.NewToken();
      lowering.Bind(op.result(i), slot);
      spec.dtype = XLA_FFI_DataType_TOKEN;
    } else {
      ASSIGN_OR_RETURN(slot, lowering.NewResult(op, i));
      ArrayShape shape = lowering.shape(slot);
      spec.dtype = FfiDataType(shape.type);
      spec.dims = shape.dims;
      if (spec.dtype == XLA_FFI_DataType_INVALID) {
        return UnimplementedError(op.Describe(), ": result ", i, " of type ",
                                  shape.ToString(),
                                  " cannot be passed to an FFI handler");
      }
    }
    result_ranks.push_back(static_cast<int64_t>(spec.dims.size()));
    outputs.push_back(slot);
    rets.push_back(std::move(spec));
  }
  RETURN_IF_ERROR(CheckDefaultLayouts(op, "operand_layouts", operand_ranks));
  RETURN_IF_ERROR(CheckDefaultLayouts(op, "result_layouts", result_ranks));

  // An aliased result holds its operand's value when the handler starts,
  // as the one buffer XLA hands over for both would.
  ir::Attribute aliases = op.GetAttr("output_operand_aliases");
  if (aliases.is(ir::AttrKind::kArray)) {
    for (const ir::Attribute& alias : aliases.array()) {
      if (!alias.is(ir::AttrKind::kOutputOperandAlias)) continue;
      const ir::OutputOperandAlias& pair = alias.output_operand_alias();
      int64_t output =
          pair.output_tuple_indices.empty() ? 0 : pair.output_tuple_indices[0];
      int64_t operand = pair.operand_index;
      if (output < 0 || output >= op.num_results() || operand < 0 ||
          operand >= op.num_operands() ||
          lowering.slot(outputs[output]).byte_size() !=
              lowering.slot(inputs[operand]).byte_size()) {
        return InvalidArgumentError(op.Describe(), ": output_operand_alias ",
                                    alias.ToString(),
                                    " does not pair a "
                                    "result with an operand of its size");
      }
      lowering.EmitCopy(op, inputs[operand], outputs[output]);
    }
  }

  ASSIGN_OR_RETURN(
      std::unique_ptr<exec::Kernel> kernel,
      exec::MakeFfiCallKernel(target, *handler, std::move(attributes),
                              std::move(args), std::move(rets)));
  // Never folded: handlers may have effects.
  lowering.Emit(op, std::move(kernel), std::move(inputs), std::move(outputs),
                /*foldable=*/false);
  return OkStatus();
}

}  // namespace kiln::compile
