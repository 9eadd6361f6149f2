// The HLO reader's inside: turns the instructions of one HLO computation
// into StableHLO ops appended to a block (reader.cc drives it per module,
// instructions.cc holds the per-opcode table).
#ifndef KILN_PARSE_HLO_EMITTER_H_
#define KILN_PARSE_HLO_EMITTER_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "ir/operation.h"
#include "proto/xla_hlo.pb.h"

namespace kiln::parse::hlo {

// A value of an HLO instruction: its shape and its leaves in tuple
// pre-order (one leaf for an array or a token).
struct HloValue {
  const xla::ShapeProto* shape = nullptr;
  std::vector<ir::Value*> leaves;
};

// The leaf types of `shape` in pre-order (arrays as tensors, tokens).
StatusOr<std::vector<ir::Type>> LeafTypes(const xla::ShapeProto& shape,
                                          std::string_view what);
// The tensor type of an array shape.
StatusOr<ir::Type> ArrayType(const xla::ShapeProto& shape,
                             std::string_view what);
// The IR element type of an XLA primitive type.
StatusOr<ir::ElementType> ElementTypeOf(int primitive_type,
                                        std::string_view what);
// The first leaf and the leaf count of the sub-shape at `index`.
StatusOr<std::pair<int, int>> LeafRange(const xla::ShapeProto& shape,
                                        const std::vector<int64_t>& index,
                                        std::string_view what);
// The dense elements attribute of an array literal.
StatusOr<ir::Attribute> LiteralAttribute(const xla::LiteralProto& literal,
                                         const xla::ShapeProto& shape,
                                         std::string_view what);

class Emitter {
 public:
  Emitter(const std::map<int64_t, const xla::HloComputationProto*>& computations,
          std::string source_name)
      : computations_(computations), source_name_(std::move(source_name)) {}

  // Emits `computation` into `block`; `parameter_leaves` holds the leaves of
  // its parameters in parameter order. Returns the leaves of its root.
  StatusOr<std::vector<ir::Value*>> EmitComputation(
      const xla::HloComputationProto& computation, ir::Block& block,
      const std::vector<ir::Value*>& parameter_leaves);

  // The opcodes the reader has converted so far (for tools and tests).
  const std::map<std::string, int>& opcodes_seen() const { return seen_; }

 private:
  struct Scope {
    const xla::HloComputationProto* computation;
    ir::Block* block;
    std::map<int64_t, HloValue> values;
  };

  Status EmitInstruction(Scope& scope, const xla::HloInstructionProto& instr,
                         const std::vector<ir::Value*>& parameter_leaves,
                         const std::vector<int>& parameter_offsets);
  // Converts one non-parameter instruction; returns its leaves.
  StatusOr<std::vector<ir::Value*>> Convert(
      Scope& scope, const xla::HloInstructionProto& instr,
      const std::vector<const HloValue*>& operands);

  // Appends `name` with `operands` and `results` to the scope's block.
  ir::Operation* Append(Scope& scope, const xla::HloInstructionProto& instr,
                        std::string_view name,
                        std::vector<ir::Value*> operands,
                        std::vector<ir::Type> results);
  // A region of `op` whose one block takes scalar leaves of `computation`'s
  // parameters and returns its root with stablehlo.return.
  Status EmitRegion(ir::Operation& op, int64_t computation_id,
                    std::string_view what);
  // A region of `op` with no arguments whose block emits `computation` on
  // values of the enclosing scope (conditional branches).
  Status EmitCapturingRegion(ir::Operation& op, int64_t computation_id,
                             const std::vector<ir::Value*>& leaves,
                             std::string_view what);
  StatusOr<const xla::HloComputationProto*> Called(int64_t id,
                                                   std::string_view what);
  ir::Location LocationOf(const xla::HloInstructionProto& instr) const;

  const std::map<int64_t, const xla::HloComputationProto*>& computations_;
  std::string source_name_;
  std::map<std::string, int> seen_;
  int depth_ = 0;
};

// "add.5 (add) in computation main" for messages.
std::string Describe(const xla::HloInstructionProto& instr);

}  // namespace kiln::parse::hlo

#endif  // KILN_PARSE_HLO_EMITTER_H_
