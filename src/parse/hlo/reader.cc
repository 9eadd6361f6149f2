#include "parse/hlo/reader.h"

#include <cstring>
#include <map>
#include <set>

#include "ir/verifier.h"
#include "parse/hlo/emitter.h"
#include "proto/xla_hlo.pb.h"

namespace kiln::parse::hlo {
namespace {

using ir::Attribute;
using ir::ElementType;
using ir::Type;

// XLA's PrimitiveType numbers (xla_data.proto) and the IR's element types.
struct PrimitiveTypeEntry {
  int number;
  ElementType element;
  std::string_view name;
};
constexpr PrimitiveTypeEntry kPrimitiveTypes[] = {
    {xla::PRED, ElementType::kI1, "pred"},
    {xla::S2, ElementType::kI2, "s2"},
    {xla::S4, ElementType::kI4, "s4"},
    {xla::S8, ElementType::kI8, "s8"},
    {xla::S16, ElementType::kI16, "s16"},
    {xla::S32, ElementType::kI32, "s32"},
    {xla::S64, ElementType::kI64, "s64"},
    {xla::U2, ElementType::kUI2, "u2"},
    {xla::U4, ElementType::kUI4, "u4"},
    {xla::U8, ElementType::kUI8, "u8"},
    {xla::U16, ElementType::kUI16, "u16"},
    {xla::U32, ElementType::kUI32, "u32"},
    {xla::U64, ElementType::kUI64, "u64"},
    {xla::F16, ElementType::kF16, "f16"},
    {xla::BF16, ElementType::kBF16, "bf16"},
    {xla::F32, ElementType::kF32, "f32"},
    {xla::F64, ElementType::kF64, "f64"},
    {xla::C64, ElementType::kC64, "c64"},
    {xla::C128, ElementType::kC128, "c128"},
    {xla::F8E5M2, ElementType::kF8E5M2, "f8e5m2"},
    {xla::F8E4M3, ElementType::kF8E4M3, "f8e4m3"},
    {xla::F8E4M3FN, ElementType::kF8E4M3FN, "f8e4m3fn"},
    {xla::F8E4M3B11FNUZ, ElementType::kF8E4M3B11FNUZ, "f8e4m3b11fnuz"},
    {xla::F8E3M4, ElementType::kF8E3M4, "f8e3m4"},
    {xla::F8E5M2FNUZ, ElementType::kF8E5M2FNUZ, "f8e5m2fnuz"},
    {xla::F8E4M3FNUZ, ElementType::kF8E4M3FNUZ, "f8e4m3fnuz"},
    {xla::F4E2M1FN, ElementType::kF4E2M1FN, "f4e2m1fn"},
    {xla::F8E8M0FNU, ElementType::kF8E8M0FNU, "f8e8m0fnu"},
};

// The product of the dimensions; -1 for a negative dimension or one that
// does not fit in 64 bits (ArrayType refuses such shapes).
int64_t ElementCount(const xla::ShapeProto& shape) {
  int64_t count = 1;
  for (int64_t dim : shape.dimensions()) {
    if (dim < 0 || __builtin_mul_overflow(count, dim, &count)) return -1;
  }
  return count;
}

// Appends `count` elements of `values` as `Bytes` bytes each.
template <typename Wire, typename Stored = Wire, typename Field>
Status AppendRepeated(const Field& values, int64_t count, std::string& data,
                      std::string_view field, std::string_view what) {
  if (values.size() != count) {
    return InvalidArgumentError(what, ": literal has ", values.size(),
                                " values in ", field, " for ", count,
                                " elements");
  }
  for (const Wire& value : values) {
    Stored stored = static_cast<Stored>(value);
    data.append(reinterpret_cast<const char*>(&stored), sizeof(Stored));
  }
  return OkStatus();
}

Status AppendBytes(const std::string& bytes, int64_t count, int element_bytes,
                   std::string& data, std::string_view field,
                   std::string_view what) {
  if (static_cast<int64_t>(bytes.size()) != count * element_bytes) {
    return InvalidArgumentError(what, ": literal has ", bytes.size(),
                                " bytes in ", field, " for ", count,
                                " elements of ", element_bytes, " bytes");
  }
  data += bytes;
  return OkStatus();
}

// Whether every element of `data` (elements of `size` bytes) is the first.
bool AllEqual(const std::string& data, size_t size) {
  for (size_t at = size; at + size <= data.size(); at += size) {
    if (std::memcmp(data.data(), data.data() + at, size) != 0) return false;
  }
  return true;
}

// A layout is physical: it says how a value lies in memory, never what the
// value is (HLO's semantics do not depend on it). Kiln's buffers are
// row-major and PJRT transfers convert to and from the framework's host
// layout, so a layout that is a permutation of the dimensions is honoured
// as it is; anything else is refused.
Status CheckLayouts(const xla::ShapeProto& shape, std::string_view what) {
  if (shape.element_type() == xla::TUPLE) {
    for (int i = 0; i < shape.tuple_shapes_size(); ++i) {
      RETURN_IF_ERROR(
          CheckLayouts(shape.tuple_shapes(i), StrCat(what, " element ", i)));
    }
    return OkStatus();
  }
  if (!shape.has_layout()) return OkStatus();
  const auto& order = shape.layout().minor_to_major();
  if (order.empty()) return OkStatus();
  std::vector<bool> seen(shape.dimensions_size(), false);
  bool permutation = order.size() == shape.dimensions_size();
  for (int64_t dim : order) {
    if (!permutation || dim < 0 || dim >= shape.dimensions_size() ||
        seen[dim]) {
      permutation = false;
      break;
    }
    seen[dim] = true;
  }
  if (!permutation) {
    return InvalidArgumentError(what, " has layout {", StrJoin(order, ","),
                                "}, which is not a permutation of its ",
                                shape.dimensions_size(), " dimensions");
  }
  return OkStatus();
}

Status CheckSize(std::string_view bytes, std::string_view what) {
  if (bytes.size() > static_cast<size_t>(INT32_MAX)) {
    return InvalidArgumentError(what, " is ", bytes.size(),
                                " bytes, more than protobuf reads (2 GiB)");
  }
  return OkStatus();
}

}  // namespace

StatusOr<ElementType> ElementTypeOf(int primitive_type, std::string_view what) {
  for (const PrimitiveTypeEntry& entry : kPrimitiveTypes) {
    if (entry.number == primitive_type) return entry.element;
  }
  return UnimplementedError(what, ": element type ",
                            xla::PrimitiveType_Name(
                                static_cast<xla::PrimitiveType>(primitive_type)),
                            " (", primitive_type, ") is not supported");
}

StatusOr<Type> ArrayType(const xla::ShapeProto& shape, std::string_view what) {
  ASSIGN_OR_RETURN(ElementType element,
                   ElementTypeOf(shape.element_type(), what));
  std::vector<int64_t> dims;
  for (int i = 0; i < shape.dimensions_size(); ++i) {
    if (shape.dimensions(i) < 0) {
      return InvalidArgumentError(what, ": dimension ", i, " is ",
                                  shape.dimensions(i));
    }
    if (i < shape.is_dynamic_dimension_size() &&
        shape.is_dynamic_dimension(i)) {
      return UnimplementedError(what, ": dimension ", i,
                                " is dynamic (bounded dynamic shapes are not "
                                "supported)");
    }
    dims.push_back(shape.dimensions(i));
  }
  if (ElementCount(shape) < 0) {
    return InvalidArgumentError(what, ": the dimensions multiply to more "
                                "elements than fit in 64 bits");
  }
  return Type::Tensor(std::move(dims), Type::Element(element));
}

StatusOr<std::vector<Type>> LeafTypes(const xla::ShapeProto& shape,
                                      std::string_view what) {
  std::vector<Type> types;
  if (shape.element_type() == xla::TUPLE) {
    for (int i = 0; i < shape.tuple_shapes_size(); ++i) {
      ASSIGN_OR_RETURN(std::vector<Type> inner,
                       LeafTypes(shape.tuple_shapes(i), what));
      types.insert(types.end(), inner.begin(), inner.end());
    }
    return types;
  }
  if (shape.element_type() == xla::TOKEN) {
    types.push_back(Type::Token());
    return types;
  }
  ASSIGN_OR_RETURN(Type type, ArrayType(shape, what));
  types.push_back(std::move(type));
  return types;
}

namespace {
int CountLeaves(const xla::ShapeProto& shape) {
  if (shape.element_type() != xla::TUPLE) return 1;
  int count = 0;
  for (const auto& element : shape.tuple_shapes()) count += CountLeaves(element);
  return count;
}
}  // namespace

StatusOr<std::pair<int, int>> LeafRange(const xla::ShapeProto& shape,
                                        const std::vector<int64_t>& index,
                                        std::string_view what) {
  const xla::ShapeProto* current = &shape;
  int first = 0;
  for (int64_t i : index) {
    if (current->element_type() != xla::TUPLE || i < 0 ||
        i >= current->tuple_shapes_size()) {
      return InvalidArgumentError(what, ": shape index {", StrJoin(index, ","),
                                  "} is out of range");
    }
    for (int64_t j = 0; j < i; ++j) {
      first += CountLeaves(current->tuple_shapes(j));
    }
    current = &current->tuple_shapes(i);
  }
  return std::make_pair(first, CountLeaves(*current));
}

StatusOr<Attribute> LiteralAttribute(const xla::LiteralProto& literal,
                                     const xla::ShapeProto& shape,
                                     std::string_view what) {
  ASSIGN_OR_RETURN(Type type, ArrayType(shape, what));
  int64_t count = ElementCount(shape);
  std::string data;
  size_t element_bytes = 0;
  switch (shape.element_type()) {
    case xla::PRED:
      RETURN_IF_ERROR((AppendRepeated<bool, uint8_t>(literal.preds(), count,
                                                     data, "preds", what)));
      element_bytes = 1;
      break;
    case xla::S8:
      RETURN_IF_ERROR(AppendBytes(literal.s8s(), count, 1, data, "s8s", what));
      element_bytes = 1;
      break;
    case xla::U8:
      RETURN_IF_ERROR(AppendBytes(literal.u8s(), count, 1, data, "u8s", what));
      element_bytes = 1;
      break;
    case xla::S4:
      RETURN_IF_ERROR(AppendBytes(literal.s4s(), count, 1, data, "s4s", what));
      element_bytes = 1;
      break;
    case xla::U4:
      RETURN_IF_ERROR(AppendBytes(literal.u4s(), count, 1, data, "u4s", what));
      element_bytes = 1;
      break;
    case xla::S16:
      RETURN_IF_ERROR(AppendBytes(literal.s16s(), count, 2, data, "s16s", what));
      element_bytes = 2;
      break;
    case xla::U16:
      RETURN_IF_ERROR(AppendBytes(literal.u16s(), count, 2, data, "u16s", what));
      element_bytes = 2;
      break;
    case xla::F16:
      RETURN_IF_ERROR(AppendBytes(literal.f16s(), count, 2, data, "f16s", what));
      element_bytes = 2;
      break;
    case xla::BF16:
      RETURN_IF_ERROR(
          AppendBytes(literal.bf16s(), count, 2, data, "bf16s", what));
      element_bytes = 2;
      break;
    case xla::F8E5M2:
      RETURN_IF_ERROR(
          AppendBytes(literal.f8e5m2s(), count, 1, data, "f8e5m2s", what));
      element_bytes = 1;
      break;
    case xla::F8E4M3FN:
      RETURN_IF_ERROR(
          AppendBytes(literal.f8e4m3fns(), count, 1, data, "f8e4m3fns", what));
      element_bytes = 1;
      break;
    case xla::S32:
      RETURN_IF_ERROR((AppendRepeated<int32_t>(literal.s32s(), count, data,
                                               "s32s", what)));
      element_bytes = 4;
      break;
    case xla::U32:
      RETURN_IF_ERROR((AppendRepeated<uint32_t>(literal.u32s(), count, data,
                                                "u32s", what)));
      element_bytes = 4;
      break;
    case xla::S64:
      RETURN_IF_ERROR((AppendRepeated<int64_t>(literal.s64s(), count, data,
                                               "s64s", what)));
      element_bytes = 8;
      break;
    case xla::U64:
      RETURN_IF_ERROR((AppendRepeated<uint64_t>(literal.u64s(), count, data,
                                                "u64s", what)));
      element_bytes = 8;
      break;
    case xla::F32:
      RETURN_IF_ERROR(
          (AppendRepeated<float>(literal.f32s(), count, data, "f32s", what)));
      element_bytes = 4;
      break;
    case xla::F64:
      RETURN_IF_ERROR(
          (AppendRepeated<double>(literal.f64s(), count, data, "f64s", what)));
      element_bytes = 8;
      break;
    case xla::C64:
      RETURN_IF_ERROR((AppendRepeated<float>(literal.c64s(), 2 * count, data,
                                             "c64s", what)));
      element_bytes = 8;
      break;
    case xla::C128:
      RETURN_IF_ERROR((AppendRepeated<double>(literal.c128s(), 2 * count, data,
                                              "c128s", what)));
      element_bytes = 16;
      break;
    default:
      return UnimplementedError(
          what, ": constants of element type ",
          xla::PrimitiveType_Name(
              static_cast<xla::PrimitiveType>(shape.element_type())),
          " are not supported");
  }
  if (count > 1 && AllEqual(data, element_bytes)) {
    data.resize(element_bytes);
    return Attribute::DenseElements(type, std::move(data), /*splat=*/true);
  }
  return Attribute::DenseElements(type, std::move(data), /*splat=*/false);
}

StatusOr<std::unique_ptr<ir::Module>> ConvertHloModule(
    const xla::HloModuleProto& proto, std::string_view source_name) {
  std::map<int64_t, const xla::HloComputationProto*> computations;
  for (const xla::HloComputationProto& computation : proto.computations()) {
    if (!computations.emplace(computation.id(), &computation).second) {
      return InvalidArgumentError(source_name, ": computation id ",
                                  computation.id(), " appears twice");
    }
  }
  const xla::HloComputationProto* entry = nullptr;
  if (auto it = computations.find(proto.entry_computation_id());
      it != computations.end()) {
    entry = it->second;
  } else {
    for (const auto& computation : proto.computations()) {
      if (computation.name() == proto.entry_computation_name()) {
        entry = &computation;
      }
    }
  }
  if (entry == nullptr) {
    return InvalidArgumentError(
        source_name, ": the HLO module has no entry computation (id ",
        proto.entry_computation_id(), ", name '",
        proto.entry_computation_name(), "', ", proto.computations_size(),
        " computations)");
  }

  // The entry's parameters in parameter order.
  std::map<int64_t, const xla::HloInstructionProto*> parameters;
  const xla::HloInstructionProto* root = nullptr;
  for (const auto& instr : entry->instructions()) {
    if (instr.opcode() == "parameter") {
      if (!parameters.emplace(instr.parameter_number(), &instr).second) {
        return InvalidArgumentError(source_name, ": parameter ",
                                    instr.parameter_number(),
                                    " appears twice in the entry computation");
      }
    }
    if (instr.id() == entry->root_id()) root = &instr;
  }
  if (root == nullptr) {
    return InvalidArgumentError(source_name, ": the entry computation '",
                                entry->name(), "' has no root instruction (id ",
                                entry->root_id(), ")");
  }
  int64_t expected = 0;
  std::vector<Type> argument_types;
  std::vector<int> parameter_offsets;
  for (const auto& [number, instr] : parameters) {
    if (number != expected++) {
      return InvalidArgumentError(source_name,
                                  ": the entry computation has no parameter ",
                                  expected - 1);
    }
    std::string what = StrCat("entry parameter ", number);
    RETURN_IF_ERROR(CheckLayouts(instr->shape(), what));
    parameter_offsets.push_back(static_cast<int>(argument_types.size()));
    ASSIGN_OR_RETURN(std::vector<Type> leaves, LeafTypes(instr->shape(), what));
    argument_types.insert(argument_types.end(), leaves.begin(), leaves.end());
  }
  RETURN_IF_ERROR(CheckLayouts(root->shape(), "the entry result"));
  if (proto.has_host_program_shape()) {
    const auto& program = proto.host_program_shape();
    for (int i = 0; i < program.parameters_size(); ++i) {
      RETURN_IF_ERROR(
          CheckLayouts(program.parameters(i), StrCat("entry parameter ", i)));
    }
    RETURN_IF_ERROR(CheckLayouts(program.result(), "the entry result"));
  }

  auto module = std::make_unique<ir::Module>();
  module->set_source_name(std::string(source_name));
  if (!proto.name().empty()) {
    module->op().SetAttr("sym_name", Attribute::String(proto.name()));
  }
  auto func = std::make_unique<ir::Operation>(
      "func.func", std::vector<Type>{},
      ir::Location::Name(entry->name()));
  func->SetAttr("sym_name", Attribute::String("main"));
  ir::Block& body = func->AddRegion().AddBlock();
  std::vector<ir::Value*> arguments;
  for (const Type& type : argument_types) {
    arguments.push_back(body.AddArgument(type));
  }
  Emitter emitter(computations, std::string(source_name));
  ASSIGN_OR_RETURN(std::vector<ir::Value*> results,
                   emitter.EmitComputation(*entry, body, arguments));
  std::vector<Type> result_types;
  for (ir::Value* value : results) result_types.push_back(value->type());
  auto ret = std::make_unique<ir::Operation>("func.return",
                                             std::vector<Type>{});
  ret->set_operands(results);
  body.Append(std::move(ret));
  func->SetAttr("function_type",
                Attribute::TypeAttr(Type::Function(argument_types,
                                                   result_types)));

  // Donation: an aliased parameter leaf names the output leaf it becomes
  // (tf.aliasing_output, as JAX writes it); a buffer donor may be reused.
  std::vector<std::vector<ir::NamedAttribute>> arg_attrs(argument_types.size());
  auto leaf_of_parameter = [&](int64_t number,
                               const google::protobuf::RepeatedField<int64_t>&
                                   index) -> StatusOr<int> {
    auto it = parameters.find(number);
    if (it == parameters.end()) {
      return InvalidArgumentError(source_name, ": alias of parameter ", number,
                                  ", which the entry computation lacks");
    }
    std::vector<int64_t> path(index.begin(), index.end());
    ASSIGN_OR_RETURN(auto range, LeafRange(it->second->shape(), path,
                                           StrCat("parameter ", number)));
    if (range.second != 1) {
      return UnimplementedError(source_name, ": alias of parameter ", number,
                                " at {", StrJoin(path, ","),
                                "}, a tuple, is not supported");
    }
    return parameter_offsets[number] + range.first;
  };
  std::set<int> aliased_outputs;
  for (const auto& alias : proto.input_output_alias().entries()) {
    ASSIGN_OR_RETURN(int argument,
                     leaf_of_parameter(alias.parameter_number(),
                                       alias.parameter_shape_index()));
    std::vector<int64_t> path(alias.output_shape_index().begin(),
                              alias.output_shape_index().end());
    ASSIGN_OR_RETURN(auto range,
                     LeafRange(root->shape(), path, "the entry result"));
    if (range.second != 1) {
      return UnimplementedError(source_name, ": alias to output {",
                                StrJoin(path, ","),
                                "}, a tuple, is not supported");
    }
    if (argument_types[argument] != result_types[range.first]) {
      return InvalidArgumentError(
          source_name, ": parameter ", alias.parameter_number(),
          " is aliased to output {", StrJoin(path, ","),
          "} of another type");
    }
    if (!aliased_outputs.insert(range.first).second) {
      return InvalidArgumentError(source_name, ": output {",
                                  StrJoin(path, ","), "} is aliased twice");
    }
    arg_attrs[argument].emplace_back(
        "tf.aliasing_output",
        Attribute::Integer(range.first, Type::Element(ElementType::kI32)));
  }
  for (const auto& donor : proto.buffer_donor().entries()) {
    ASSIGN_OR_RETURN(int argument,
                     leaf_of_parameter(donor.parameter_number(),
                                       donor.parameter_shape_index()));
    if (arg_attrs[argument].empty()) {
      arg_attrs[argument].emplace_back("jax.buffer_donor",
                                       Attribute::Bool(true));
    }
  }
  bool any_attrs = false;
  for (const auto& attrs : arg_attrs) any_attrs |= !attrs.empty();
  if (any_attrs) {
    std::vector<Attribute> dicts;
    for (auto& attrs : arg_attrs) {
      dicts.push_back(Attribute::Dictionary(std::move(attrs)));
    }
    func->SetAttr("arg_attrs", Attribute::Array(std::move(dicts)));
  }
  module->body().Append(std::move(func));
  Status verified = ir::VerifyModule(*module);
  if (!verified.ok()) {
    return Status(verified.code(),
                  StrCat(source_name, ": the HLO module converts to StableHLO "
                                      "that does not verify: ",
                         verified.message()));
  }
  return module;
}

StatusOr<std::unique_ptr<ir::Module>> ReadHloModule(
    std::string_view bytes, std::string_view source_name) {
  RETURN_IF_ERROR(CheckSize(bytes, source_name));
  xla::HloModuleProto proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return InvalidArgumentError(source_name, ": ", bytes.size(),
                                " bytes are not a serialized xla.HloModuleProto");
  }
  return ConvertHloModule(proto, source_name);
}

StatusOr<std::unique_ptr<ir::Module>> ReadHloModuleWithConfig(
    std::string_view bytes, std::string_view source_name) {
  RETURN_IF_ERROR(CheckSize(bytes, source_name));
  xla::HloModuleProtoWithConfig proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return InvalidArgumentError(
        source_name, ": ", bytes.size(),
        " bytes are not a serialized xla.HloModuleProtoWithConfig");
  }
  return ConvertHloModule(proto.hlo_module(), source_name);
}

StatusOr<std::unique_ptr<ir::Module>> ReadHloFile(
    std::string_view bytes, std::string_view source_name) {
  RETURN_IF_ERROR(CheckSize(bytes, source_name));
  xla::HloProto wrapped;
  if (wrapped.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) &&
      wrapped.has_hlo_module() && wrapped.hlo_module().computations_size() > 0) {
    return ConvertHloModule(wrapped.hlo_module(), source_name);
  }
  return ReadHloModule(bytes, source_name);
}

}  // namespace kiln::parse::hlo
