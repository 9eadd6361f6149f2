// The suite's programs and their expected outputs, computed here from the
// inputs (never by a plugin). Inputs are small integers and binary
// fractions, so every f32 result is exact whatever order a plugin sums in.
#include "tools/conform/programs.h"

namespace kiln::conform {
namespace {

const std::vector<float> kA = {1, 2, 3, 4};
const std::vector<float> kB = {0.5f, -1, 10, 100};

HostArray F32(std::vector<int64_t> dims, const std::vector<float>& values) {
  return MakeArray(PJRT_Buffer_Type_F32, std::move(dims), values);
}

std::vector<float> Elementwise(const std::vector<float>& a,
                               const std::vector<float>& b,
                               float (*op)(float, float)) {
  std::vector<float> out;
  for (size_t i = 0; i < a.size(); ++i) out.push_back(op(a[i], b[i]));
  return out;
}

float Add(float x, float y) { return x + y; }
float Multiply(float x, float y) { return x * y; }

TestProgram AddF32() {
  TestProgram program;
  program.name = "add_f32";
  program.summary = "a + b over f32[4]";
  program.required = true;
  // Named @sum: the client's test plugin compiles modules of that name only.
  program.text = R"mlir(module @sum {
  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
)mlir";
  program.inputs = {F32({4}, kA), F32({4}, kB)};
  program.expected = {F32({4}, Elementwise(kA, kB, Add))};
  return program;
}

TestProgram DotF32() {
  TestProgram program;
  program.name = "dot_f32";
  program.summary = "f32[2,3] x f32[3,2] matrix product (dot_general)";
  program.text = R"mlir(module @dot {
  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<3x2xf32>) -> tensor<2x2xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
    return %0 : tensor<2x2xf32>
  }
}
)mlir";
  std::vector<float> lhs = {1, 2, 3, 4, 5, 6};
  std::vector<float> rhs = {7, -8, 9, 10, -11, 12};
  std::vector<float> product(4, 0.0f);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k)
        product[i * 2 + j] += lhs[i * 3 + k] * rhs[k * 2 + j];
  program.inputs = {F32({2, 3}, lhs), F32({3, 2}, rhs)};
  program.expected = {F32({2, 2}, product)};
  return program;
}

TestProgram ReduceSum() {
  TestProgram program;
  program.name = "reduce_sum";
  program.summary = "row sums of f32[2,3] (reduce with an add body)";
  program.text = R"mlir(module @reduce_sum {
  func.func public @main(%arg0: tensor<2x3xf32>) -> tensor<2xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
)mlir";
  std::vector<float> values = {1, 2, 3, -4, 0.5f, 8};
  std::vector<float> sums = {0, 0};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) sums[i] += values[i * 3 + j];
  program.inputs = {F32({2, 3}, values)};
  program.expected = {F32({2}, sums)};
  return program;
}

TestProgram WhileLoop() {
  TestProgram program;
  program.name = "while_loop";
  program.summary =
      "doubles x while a counter < n (n an input); counter and x out";
  program.text = R"mlir(module @while_loop {
  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<i32>) -> (tensor<i32>, tensor<4xf32>) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0:3 = stablehlo.while(%iterArg = %c, %iterArg_0 = %arg0, %iterArg_1 = %arg1) : tensor<i32>, tensor<4xf32>, tensor<i32>
    cond {
      %1 = stablehlo.compare  LT, %iterArg, %iterArg_1,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    } do {
      %c_2 = stablehlo.constant dense<1> : tensor<i32>
      %1 = stablehlo.add %iterArg, %c_2 : tensor<i32>
      %2 = stablehlo.add %iterArg_0, %iterArg_0 : tensor<4xf32>
      stablehlo.return %1, %2, %iterArg_1 : tensor<i32>, tensor<4xf32>, tensor<i32>
    }
    return %0#0, %0#1 : tensor<i32>, tensor<4xf32>
  }
}
)mlir";
  const int32_t trips = 5;
  int32_t counter = 0;
  std::vector<float> x = kB;
  while (counter < trips) {
    ++counter;
    for (float& value : x) value += value;
  }
  program.inputs = {F32({4}, kB),
                    MakeArray<int32_t>(PJRT_Buffer_Type_S32, {}, {trips})};
  program.expected = {MakeArray<int32_t>(PJRT_Buffer_Type_S32, {}, {counter}),
                      F32({4}, x)};
  return program;
}

TestProgram MultipleOutputs() {
  TestProgram program;
  program.name = "multiple_outputs";
  program.summary = "(a + b, a * b, sum of a): three outputs, one a scalar";
  program.text = R"mlir(module @multiple_outputs {
  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<f32>) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>
    %1 = stablehlo.multiply %arg0, %arg1 : tensor<4xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<f32>
  }
}
)mlir";
  float total = 0;
  for (float value : kA) total += value;
  program.inputs = {F32({4}, kA), F32({4}, kB)};
  program.expected = {F32({4}, Elementwise(kA, kB, Add)),
                      F32({4}, Elementwise(kA, kB, Multiply)),
                      F32({}, {total})};
  return program;
}

TestProgram I1Logic() {
  TestProgram program;
  program.name = "i1_logic";
  program.summary = "compare to i1, and with an i1 input, select by it";
  program.text = R"mlir(module @i1_logic {
  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<4xi1>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xf32>) {
    %0 = stablehlo.compare  GT, %arg0, %arg1,  FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %1 = stablehlo.and %0, %arg2 : tensor<4xi1>
    %2 = stablehlo.select %arg2, %arg0, %arg1 : tensor<4xi1>, tensor<4xf32>
    return %0, %1, %2 : tensor<4xi1>, tensor<4xi1>, tensor<4xf32>
  }
}
)mlir";
  std::vector<uint8_t> mask = {1, 1, 0, 0};
  std::vector<uint8_t> greater, both;
  std::vector<float> selected;
  for (size_t i = 0; i < kA.size(); ++i) {
    greater.push_back(kA[i] > kB[i] ? 1 : 0);
    both.push_back(greater.back() && mask[i] ? 1 : 0);
    selected.push_back(mask[i] ? kA[i] : kB[i]);
  }
  program.inputs = {F32({4}, kA), F32({4}, kB),
                    MakeArray(PJRT_Buffer_Type_PRED, {4}, mask)};
  program.expected = {MakeArray(PJRT_Buffer_Type_PRED, {4}, greater),
                      MakeArray(PJRT_Buffer_Type_PRED, {4}, both),
                      F32({4}, selected)};
  return program;
}

TestProgram Bfloat16Add() {
  TestProgram program;
  program.name = "bf16_add";
  program.summary = "a + b over bf16[4], two sums that round to even";
  program.text = R"mlir(module @bf16_add {
  func.func public @main(%arg0: tensor<4xbf16>, %arg1: tensor<4xbf16>) -> tensor<4xbf16> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<4xbf16>
    return %0 : tensor<4xbf16>
  }
}
)mlir";
  // 256 + 1 and 1 + 2^-8 lie halfway between bf16 neighbours.
  std::vector<float> a = {1.5f, -2.0f, 256.0f, 1.0f};
  std::vector<float> b = {0.25f, 0.5f, 1.0f, 0.00390625f};
  std::vector<uint16_t> a_bits, b_bits, sum_bits;
  for (size_t i = 0; i < a.size(); ++i) {
    a_bits.push_back(FloatToBfloat16(a[i]));
    b_bits.push_back(FloatToBfloat16(b[i]));
    // The f32 sum of two bf16 values this close in magnitude is exact, so
    // rounding it once is the correctly rounded bf16 sum.
    sum_bits.push_back(FloatToBfloat16(Bfloat16ToFloat(a_bits.back()) +
                                       Bfloat16ToFloat(b_bits.back())));
  }
  program.inputs = {MakeArray(PJRT_Buffer_Type_BF16, {4}, a_bits),
                    MakeArray(PJRT_Buffer_Type_BF16, {4}, b_bits)};
  program.expected = {MakeArray(PJRT_Buffer_Type_BF16, {4}, sum_bits)};
  return program;
}

TestProgram Int64Arithmetic() {
  TestProgram program;
  program.name = "i64_arithmetic";
  program.summary = "a * b + a over i64[3], values past 32 bits";
  program.text = R"mlir(module @i64_arithmetic {
  func.func public @main(%arg0: tensor<3xi64>, %arg1: tensor<3xi64>) -> tensor<3xi64> {
    %0 = stablehlo.multiply %arg0, %arg1 : tensor<3xi64>
    %1 = stablehlo.add %0, %arg0 : tensor<3xi64>
    return %1 : tensor<3xi64>
  }
}
)mlir";
  std::vector<int64_t> a = {(int64_t{1} << 33) + 1, -7, 123456789012};
  std::vector<int64_t> b = {3, int64_t{1} << 31, -2};
  std::vector<int64_t> out;
  for (size_t i = 0; i < a.size(); ++i) out.push_back(a[i] * b[i] + a[i]);
  program.inputs = {MakeArray(PJRT_Buffer_Type_S64, {3}, a),
                    MakeArray(PJRT_Buffer_Type_S64, {3}, b)};
  program.expected = {MakeArray(PJRT_Buffer_Type_S64, {3}, out)};
  return program;
}

}  // namespace

const char kDonatingAddProgram[] = R"mlir(module @sum {
  func.func public @main(%arg0: tensor<4xf32> {tf.aliasing_output = 0 : i32}, %arg1: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
)mlir";

const std::vector<TestProgram>& TestPrograms() {
  static const std::vector<TestProgram> programs = {
      AddF32(),          DotF32(),  ReduceSum(),   WhileLoop(),
      MultipleOutputs(), I1Logic(), Bfloat16Add(), Int64Arithmetic()};
  return programs;
}

const TestProgram& AddProgram() { return TestPrograms().front(); }

}  // namespace kiln::conform
