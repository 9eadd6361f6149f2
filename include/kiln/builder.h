// ProgramBuilder: writes a StableHLO program (MLIR text) from C++, so a
// model can be written without writing MLIR by hand.
//
//   ProgramBuilder b("affine");
//   Value x = b.Parameter(Shape(PJRT_Buffer_Type_F32, {4, 8}));
//   Value w = b.Parameter(Shape(PJRT_Buffer_Type_F32, {8, 2}));
//   Value y = b.Dot(x, w) + b.Broadcast(b.ConstantScalar(F32, 1.0), {4, 2});
//   StatusOr<std::string> program = b.Build({y});
//
// Ops appear in the text in the order they are added; C++ does not fix the
// order in which a call's arguments are evaluated, so write one op per
// statement where the exact text matters (it never changes the meaning).
// Shapes are checked as ops are added; the first error is kept and
// returned by Build (later ops on a failed value fail quietly), so a model
// reads as straight-line code.
#ifndef KILN_CLIENT_BUILDER_H_
#define KILN_CLIENT_BUILDER_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "kiln/shape.h"

namespace kiln::client {

class ProgramBuilder;

// A value of the program being built: its SSA name and shape. A
// default-constructed or failed Value is invalid.
class Value {
 public:
  Value() = default;
  bool valid() const { return builder_ != nullptr && !name_.empty(); }
  const Shape& shape() const { return shape_; }
  // "%3", "%arg0".
  const std::string& name() const { return name_; }
  ProgramBuilder* builder() const { return builder_; }

 private:
  friend class ProgramBuilder;
  Value(ProgramBuilder* builder, std::string name, Shape shape)
      : builder_(builder), name_(std::move(name)), shape_(std::move(shape)) {}
  ProgramBuilder* builder_ = nullptr;
  std::string name_;
  Shape shape_;
};

// stablehlo.compare directions.
enum class CompareDirection { kEq, kNe, kLt, kLe, kGt, kGe };

// The dimension numbers of stablehlo.dot_general.
struct DotDimensions {
  std::vector<int64_t> lhs_batching;
  std::vector<int64_t> rhs_batching;
  std::vector<int64_t> lhs_contracting;
  std::vector<int64_t> rhs_contracting;
};

class ProgramBuilder {
 public:
  explicit ProgramBuilder(std::string name = "main");
  ProgramBuilder(const ProgramBuilder&) = delete;
  ProgramBuilder& operator=(const ProgramBuilder&) = delete;

  // The next parameter of @main (parameters are numbered in call order).
  Value Parameter(const Shape& shape);

  // Constants: a scalar, a splat of a scalar, or dense row-major values
  // (converted to the element type; integers and floats of any width).
  Value ConstantScalar(PJRT_Buffer_Type type, double value);
  Value ConstantSplat(const Shape& shape, double value);
  Value Constant(const Shape& shape, std::span<const double> values);
  Value Iota(const Shape& shape, int64_t dimension);

  // Elementwise ops on operands of one shape.
  Value Add(Value lhs, Value rhs);
  Value Subtract(Value lhs, Value rhs);
  Value Multiply(Value lhs, Value rhs);
  Value Divide(Value lhs, Value rhs);
  Value Maximum(Value lhs, Value rhs);
  Value Minimum(Value lhs, Value rhs);
  Value Power(Value lhs, Value rhs);
  Value Negate(Value operand);
  Value Exp(Value operand);
  Value Log(Value operand);
  Value Tanh(Value operand);
  Value Logistic(Value operand);
  Value Sqrt(Value operand);
  Value Rsqrt(Value operand);
  Value Abs(Value operand);
  // An i1 tensor of the operands' shape.
  Value Compare(Value lhs, Value rhs, CompareDirection direction);
  // `pred` is i1 of the operands' shape, or a scalar i1.
  Value Select(Value pred, Value on_true, Value on_false);
  Value Convert(Value operand, PJRT_Buffer_Type type);

  Value DotGeneral(Value lhs, Value rhs, const DotDimensions& dimensions);
  // Matrix product of [m, k] and [k, n].
  Value Dot(Value lhs, Value rhs);
  // stablehlo.broadcast_in_dim: operand dimension i becomes result
  // dimension broadcast_dimensions[i].
  Value BroadcastInDim(Value operand, std::vector<int64_t> result_dimensions,
                       std::vector<int64_t> broadcast_dimensions);
  // A scalar (or lower-rank trailing-aligned value) broadcast to `dims`.
  Value Broadcast(Value operand, std::vector<int64_t> dimensions);
  Value Reshape(Value operand, std::vector<int64_t> dimensions);
  Value Transpose(Value operand, std::vector<int64_t> permutation);
  // Sum or maximum over `dimensions` (removed from the result).
  Value ReduceSum(Value operand, std::vector<int64_t> dimensions);
  Value ReduceMax(Value operand, std::vector<int64_t> dimensions);

  // Lets output `output_index` reuse the storage of `parameter` (emitted as
  // `tf.aliasing_output`); the parameter's buffer is donated to each run.
  void Donate(Value parameter, int output_index);
  // The parameters given to Donate, sorted.
  std::vector<int> donated_parameters() const;

  // The first error, or OK.
  const Status& status() const { return status_; }

  // The module: `module @NAME { func.func public @main(...) { ... } }`.
  // Checks that donated parameters and their outputs have the same shape.
  StatusOr<std::string> Build(std::span<const Value> outputs) const;

 private:
  Value Fail(Status status);
  // Checks that `values` are valid values of this builder.
  bool Check(std::initializer_list<const Value*> values);
  Value Emit(const std::string& text, Shape shape);
  Value Elementwise(const char* op, Value lhs, Value rhs);
  Value Unary(const char* op, Value operand, bool float_only);
  Value Reduce(const char* op, double init, Value operand,
               std::vector<int64_t> dimensions);
  std::string NextName();

  std::string name_;
  std::vector<Shape> parameters_;
  std::vector<std::pair<int, int>> donations_;  // (parameter, output)
  std::string body_;
  int next_id_ = 0;
  Status status_;
};

// Arithmetic on Values of one builder.
Value operator+(Value lhs, Value rhs);
Value operator-(Value lhs, Value rhs);
Value operator*(Value lhs, Value rhs);
Value operator/(Value lhs, Value rhs);
Value operator-(Value operand);

}  // namespace kiln::client

#endif  // KILN_CLIENT_BUILDER_H_
