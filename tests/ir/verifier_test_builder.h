// A small builder of ir::Modules for the verifier's unit tests: one function
// whose body is appended op by op, each op at its own test.mlir line so that
// messages can be checked for their location.
#ifndef KILN_TESTS_IR_VERIFIER_TEST_BUILDER_H_
#define KILN_TESTS_IR_VERIFIER_TEST_BUILDER_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/operation.h"
#include "ir/verifier.h"

namespace kiln::ir::testing {

inline Type T(std::vector<int64_t> shape, ElementType element) {
  return TensorOf(std::move(shape), element);
}
inline Type Scalar(ElementType element) { return T({}, element); }
inline Type PerTensor(ElementType storage, double scale, int64_t zero_point,
                      ElementType expressed = ElementType::kF32) {
  QuantizedType q;
  q.storage_type = storage;
  q.storage_min = storage == ElementType::kI8 ? -128 : 0;
  q.storage_max = storage == ElementType::kI8 ? 127 : 255;
  q.expressed_type = expressed;
  q.scales = {scale};
  q.zero_points = {zero_point};
  return Type::Quantized(q);
}
inline Type PerAxis(int32_t axis, std::vector<double> scales,
                    std::vector<int64_t> zero_points) {
  QuantizedType q;
  q.storage_type = ElementType::kI8;
  q.storage_min = -128;
  q.storage_max = 127;
  q.expressed_type = ElementType::kF32;
  q.axis = axis;
  q.scales = std::move(scales);
  q.zero_points = std::move(zero_points);
  return Type::Quantized(q);
}
inline Type QT(std::vector<int64_t> shape, Type quantized) {
  return Type::Tensor(std::move(shape), std::move(quantized));
}
inline Attribute I64s(std::vector<int64_t> values) {
  return Attribute::DenseI64Array(std::move(values));
}
inline Attribute I64(int64_t value) {
  return Attribute::Integer(value, Type::Element(ElementType::kI64));
}
// dense<values> : tensor<shape x i64>.
inline Attribute DenseI64(std::vector<int64_t> shape,
                          const std::vector<int64_t>& values) {
  std::string data(values.size() * 8, '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    for (int b = 0; b < 8; ++b) {
      data[i * 8 + b] = static_cast<char>(
          (static_cast<uint64_t>(values[i]) >> (8 * b)) & 0xFF);
    }
  }
  return Attribute::DenseElements(T(std::move(shape), ElementType::kI64),
                                  std::move(data), false);
}

// One module with one function `@main(inputs) -> results`.
class ModuleBuilder {
 public:
  ModuleBuilder(std::vector<Type> inputs, std::vector<Type> results)
      : results_(results) {
    auto func =
        std::make_unique<Operation>("func.func", std::vector<Type>{}, Loc());
    func->SetAttr("sym_name", Attribute::String("main"));
    func->SetAttr("function_type", Attribute::TypeAttr(Type::Function(
                                       inputs, std::move(results))));
    Block& body = func->AddRegion().AddBlock();
    for (const Type& type : inputs) body.AddArgument(type);
    func_ = module_.body().Append(std::move(func));
    block_ = &body;
  }

  Module& module() { return module_; }
  Operation& func() { return *func_; }
  Block& body() { return *block_; }
  Value* arg(int i) { return block_->argument(i); }

  // Appends `name(operands) {attrs} : results` to `block` (the body by
  // default), at the next test.mlir line.
  Operation* Add(const std::string& name, std::vector<Value*> operands,
                 std::vector<Type> results,
                 std::vector<NamedAttribute> attrs = {},
                 Block* block = nullptr) {
    auto op = std::make_unique<Operation>(name, std::move(results), Loc());
    op->set_operands(std::move(operands));
    for (auto& [key, value] : attrs) op->SetAttr(key, value);
    return (block ? block : block_)->Append(std::move(op));
  }

  // A new region of `op` with one block taking `args`.
  Block& AddBlock(Operation* op, const std::vector<Type>& args) {
    Block& block = op->AddRegion().AddBlock();
    for (const Type& type : args) block.AddArgument(type);
    return block;
  }

  // A region of `op` computing `name(arg0, arg1)` over two 0-d `element`
  // tensors and returning it (a reducer or comparator body).
  Block& AddBinaryBody(Operation* op, const std::string& name, Type element,
                       Type result_element) {
    Type scalar = Type::Tensor({}, element);
    Block& block = AddBlock(op, {scalar, scalar});
    Operation* body = Add(name, {block.argument(0), block.argument(1)},
                          {Type::Tensor({}, result_element)}, {}, &block);
    Add("stablehlo.return", {body->result(0)}, {}, {}, &block);
    return block;
  }

  // func.return of `values`.
  void Return(std::vector<Value*> values) {
    Add("func.return", std::move(values), {});
  }

  // The line the next op will be placed at.
  int next_line() const { return line_ + 1; }

  Status Verify() { return VerifyModule(module_); }

 private:
  Location Loc() { return Location::FileLineCol("test.mlir", ++line_, 3); }

  Module module_;
  std::vector<Type> results_;
  Operation* func_ = nullptr;
  Block* block_ = nullptr;
  int line_ = 0;
};

}  // namespace kiln::ir::testing

#endif  // KILN_TESTS_IR_VERIFIER_TEST_BUILDER_H_
