// Builds xla.HloModuleProto messages for the HLO reader's tests: one entry
// computation (and called ones) written instruction by instruction.
#ifndef KILN_TESTS_PARSE_HLO_BUILDER_H_
#define KILN_TESTS_PARSE_HLO_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/xla_hlo.pb.h"

namespace kiln::testing {

inline xla::ShapeProto ArrayShape(xla::PrimitiveType type,
                                  std::vector<int64_t> dims) {
  xla::ShapeProto shape;
  shape.set_element_type(type);
  for (int64_t dim : dims) shape.add_dimensions(dim);
  return shape;
}

inline xla::ShapeProto TupleShape(std::vector<xla::ShapeProto> elements) {
  xla::ShapeProto shape;
  shape.set_element_type(xla::TUPLE);
  for (auto& element : elements) *shape.add_tuple_shapes() = element;
  return shape;
}

// One computation under construction; ids are unique across the module.
class HloComputationBuilder {
 public:
  HloComputationBuilder(xla::HloModuleProto& module, std::string name,
                        int64_t& next_id)
      : computation_(module.add_computations()), next_id_(next_id) {
    computation_->set_name(std::move(name));
    computation_->set_id(next_id_++);
  }

  int64_t id() const { return computation_->id(); }

  // Adds an instruction; returns it (its id is set) for more fields.
  xla::HloInstructionProto& Add(std::string opcode, xla::ShapeProto shape,
                                std::vector<int64_t> operands = {}) {
    xla::HloInstructionProto& instr = *computation_->add_instructions();
    instr.set_id(next_id_++);
    instr.set_name(opcode + "." + std::to_string(instr.id()));
    instr.set_opcode(std::move(opcode));
    *instr.mutable_shape() = std::move(shape);
    for (int64_t operand : operands) instr.add_operand_ids(operand);
    computation_->set_root_id(instr.id());  // the last one, unless set
    return instr;
  }

  int64_t Parameter(int64_t number, xla::ShapeProto shape) {
    xla::HloInstructionProto& instr = Add("parameter", std::move(shape));
    instr.set_parameter_number(number);
    return instr.id();
  }

  int64_t ConstantF32(std::vector<int64_t> dims, std::vector<float> values) {
    xla::HloInstructionProto& instr =
        Add("constant", ArrayShape(xla::F32, dims));
    *instr.mutable_literal()->mutable_shape() = instr.shape();
    for (float value : values) instr.mutable_literal()->add_f32s(value);
    return instr.id();
  }

  void SetRoot(int64_t id) { computation_->set_root_id(id); }

 private:
  xla::HloComputationProto* computation_;
  int64_t& next_id_;
};

// A module whose entry is the last computation added.
class HloModuleBuilder {
 public:
  explicit HloModuleBuilder(std::string name) { module_.set_name(name); }

  HloComputationBuilder Computation(std::string name) {
    return HloComputationBuilder(module_, std::move(name), next_id_);
  }
  // A scalar f32 computation (a, b) -> `opcode`(a, b), for reducers.
  int64_t ScalarBinary(const std::string& opcode,
                       xla::PrimitiveType type = xla::F32) {
    HloComputationBuilder c = Computation(opcode + "_reducer");
    int64_t a = c.Parameter(0, ArrayShape(type, {}));
    int64_t b = c.Parameter(1, ArrayShape(type, {}));
    c.Add(opcode, ArrayShape(type, {}), {a, b});
    return c.id();
  }

  xla::HloModuleProto& Finish(const HloComputationBuilder& entry) {
    module_.set_entry_computation_id(entry.id());
    for (const auto& computation : module_.computations()) {
      if (computation.id() == entry.id()) {
        module_.set_entry_computation_name(computation.name());
      }
    }
    return module_;
  }
  xla::HloModuleProto& proto() { return module_; }

 private:
  xla::HloModuleProto module_;
  int64_t next_id_ = 1;
};

}  // namespace kiln::testing

#endif  // KILN_TESTS_PARSE_HLO_BUILDER_H_
