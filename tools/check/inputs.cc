#include "tools/check/inputs.h"

#include <cstring>
#include <random>

#include "exec/kernels/element.h"

namespace kiln::check {

void FillRandom(const exec::ValueSpec& spec, uint64_t seed, std::byte* buffer) {
  if (spec.is_token) return;
  std::mt19937_64 engine(seed);
  ir::ElementType type = spec.shape.type;
  int64_t count = spec.shape.num_elements();
  for (int64_t i = 0; i < count; ++i) {
    if (ir::IsComplex(type)) {
      std::uniform_real_distribution<double> real(-2.0, 2.0);
      exec::StoreComplex(type, buffer, i,
                         exec::c128(real(engine), real(engine)));
    } else if (ir::IsFloat(type)) {
      std::uniform_real_distribution<double> real(-2.0, 2.0);
      exec::StoreDouble(type, buffer, i, real(engine));
    } else if (ir::IsBool(type)) {
      exec::StoreInt(type, buffer, i, engine() & 1);
    } else {
      int64_t low = ir::IsUnsignedInteger(type) ? 0 : -8;
      std::uniform_int_distribution<int64_t> integer(low, 8);
      exec::StoreInt(type, buffer, i, integer(engine));
    }
  }
}

StatusOr<std::vector<exec::AlignedBuffer>> RandomArguments(
    const exec::Plan& plan, uint64_t seed) {
  std::vector<exec::AlignedBuffer> buffers;
  for (size_t i = 0; i < plan.arguments().size(); ++i) {
    const exec::ValueSpec& spec = plan.arguments()[i];
    ASSIGN_OR_RETURN(exec::AlignedBuffer buffer,
                     exec::AllocateAligned(spec.byte_size()));
    FillRandom(spec, seed + i, buffer.data());
    buffers.push_back(std::move(buffer));
  }
  return buffers;
}

ConcreteArguments ConcretizeArguments(const ir::Operation& entry,
                                      int64_t size) {
  ConcreteArguments result;
  const ir::Block& body = ir::func::Body(entry);
  bool dynamic = false;
  for (int i = 0; i < body.num_arguments(); ++i) {
    const ir::Type& type = body.argument(i)->type();
    if (type.IsTensor() && !type.HasStaticShape()) dynamic = true;
  }
  if (!dynamic) return result;
  // JAX passes dimension variables first, as integer scalars.
  bool leading = true;
  for (int i = 0; i < body.num_arguments(); ++i) {
    const ir::Type& type = body.argument(i)->type();
    if (!type.IsTensor()) {
      result.types.push_back(type);
      leading = false;
      continue;
    }
    std::vector<int64_t> dims = type.shape();
    for (int64_t& dim : dims) {
      if (dim == ir::kDynamic) dim = size;
    }
    result.types.push_back(type.WithShape(dims));
    ir::Type element = type.element();
    bool scalar_int = dims.empty() && element.is(ir::TypeKind::kElement) &&
                      ir::IsInteger(element.element_type());
    leading &= scalar_int;
    if (leading) {
      std::string bytes(ir::StorageBytes(element.element_type()), '\0');
      exec::StoreInt(element.element_type(),
                     reinterpret_cast<std::byte*>(bytes.data()), 0, size);
      result.values[i] = bytes;
    }
  }
  return result;
}

}  // namespace kiln::check
