// HLO programs (built with the proto API, read by parse/hlo) compiled and
// run; expected values are worked out by hand, not by another backend.
#include <gtest/gtest.h>

#include "parse/hlo/reader.h"
#include "parse/hlo_builder.h"
#include "program_runner.h"

namespace kiln::testing {
namespace {

StatusOr<std::vector<HostArray>> RunHlo(const xla::HloModuleProto& proto,
                                        const std::vector<HostArray>& inputs) {
  ASSIGN_OR_RETURN(std::unique_ptr<ir::Module> module,
                   parse::hlo::ConvertHloModule(proto, "test.hlo"));
  ASSIGN_OR_RETURN(std::unique_ptr<exec::Plan> plan,
                   compile::Compile(*module, {}));
  return RunPlan(*plan, inputs);
}

TEST(HloProgramTest, RunsBroadcastMultiplyAndReduce) {
  HloModuleBuilder m("mul_reduce");
  int64_t add = m.ScalarBinary("add");
  auto entry = m.Computation("main");
  int64_t x = entry.Parameter(0, ArrayShape(xla::F32, {2, 3}));
  int64_t scale = entry.ConstantF32({3}, {1.0f, 10.0f, 100.0f});
  auto& broadcast = entry.Add("broadcast", ArrayShape(xla::F32, {2, 3}), {scale});
  broadcast.add_dimensions(1);
  int64_t product = entry.Add("multiply", ArrayShape(xla::F32, {2, 3}),
                              {x, broadcast.id()}).id();
  int64_t zero = entry.ConstantF32({}, {0.0f});
  auto& reduce = entry.Add("reduce", ArrayShape(xla::F32, {2}), {product, zero});
  reduce.add_dimensions(1);
  reduce.add_called_computation_ids(add);
  auto outputs = RunHlo(
      m.Finish(entry),
      {HostArray::Of<float>(ir::ElementType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  // 1 + 20 + 300 and 4 + 50 + 600.
  EXPECT_EQ((*outputs)[0].As<float>(), (std::vector<float>{321, 654}));
}

TEST(HloProgramTest, RunsAWhileLoopOverATuple) {
  // (i, acc) = (0, x); while i < 5: (i + 1, acc * 2)  ->  x * 32.
  HloModuleBuilder m("loop");
  auto s32 = ArrayShape(xla::S32, {});
  auto f32 = ArrayShape(xla::F32, {2});
  auto state = TupleShape({s32, f32});
  auto cond = m.Computation("cond");
  {
    int64_t p = cond.Parameter(0, state);
    auto& i = cond.Add("get-tuple-element", s32, {p});
    i.set_tuple_index(0);
    auto& five = cond.Add("constant", s32);
    *five.mutable_literal()->mutable_shape() = s32;
    five.mutable_literal()->add_s32s(5);
    auto& less = cond.Add("compare", ArrayShape(xla::PRED, {}),
                          {i.id(), five.id()});
    less.set_comparison_direction("LT");
  }
  auto body = m.Computation("body");
  {
    int64_t p = body.Parameter(0, state);
    auto& i = body.Add("get-tuple-element", s32, {p});
    i.set_tuple_index(0);
    auto& acc = body.Add("get-tuple-element", f32, {p});
    acc.set_tuple_index(1);
    auto& one = body.Add("constant", s32);
    *one.mutable_literal()->mutable_shape() = s32;
    one.mutable_literal()->add_s32s(1);
    int64_t next = body.Add("add", s32, {i.id(), one.id()}).id();
    int64_t doubled = body.Add("add", f32, {acc.id(), acc.id()}).id();
    body.Add("tuple", state, {next, doubled});
  }
  auto entry = m.Computation("main");
  int64_t x = entry.Parameter(0, f32);
  auto& zero = entry.Add("constant", s32);
  *zero.mutable_literal()->mutable_shape() = s32;
  zero.mutable_literal()->add_s32s(0);
  int64_t init = entry.Add("tuple", state, {zero.id(), x}).id();
  auto& loop = entry.Add("while", state, {init});
  loop.add_called_computation_ids(body.id());
  loop.add_called_computation_ids(cond.id());
  auto& result = entry.Add("get-tuple-element", f32, {loop.id()});
  result.set_tuple_index(1);
  auto outputs = RunHlo(m.Finish(entry), {HostArray::Of<float>(
                                             ir::ElementType::kF32, {2}, {1, -3})});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  EXPECT_EQ((*outputs)[0].As<float>(), (std::vector<float>{32, -96}));
}

TEST(HloProgramTest, RunsDotAndAConditional) {
  // pred ? dot(a, b) : negate(dot(a, b)), a 2x3 by b 3x1.
  HloModuleBuilder m("dot_cond");
  auto out = ArrayShape(xla::F32, {2, 1});
  auto keep = m.Computation("keep");
  keep.Parameter(0, out);
  int64_t keep_id = keep.id();
  auto flip = m.Computation("flip");
  int64_t q = flip.Parameter(0, out);
  flip.Add("negate", out, {q});
  int64_t flip_id = flip.id();
  auto entry = m.Computation("main");
  int64_t a = entry.Parameter(0, ArrayShape(xla::F32, {2, 3}));
  int64_t b = entry.Parameter(1, ArrayShape(xla::F32, {3, 1}));
  int64_t pred = entry.Parameter(2, ArrayShape(xla::PRED, {}));
  auto& dot = entry.Add("dot", out, {a, b});
  dot.mutable_dot_dimension_numbers()->add_lhs_contracting_dimensions(1);
  dot.mutable_dot_dimension_numbers()->add_rhs_contracting_dimensions(0);
  auto& cond = entry.Add("conditional", out, {pred, dot.id(), dot.id()});
  cond.add_called_computation_ids(keep_id);
  cond.add_called_computation_ids(flip_id);
  xla::HloModuleProto proto = m.Finish(entry);
  auto a_values = HostArray::Of<float>(ir::ElementType::kF32, {2, 3},
                                       {1, 2, 3, 4, 5, 6});
  auto b_values = HostArray::Of<float>(ir::ElementType::kF32, {3, 1}, {1, 0, -1});
  for (bool taken : {true, false}) {
    auto outputs = RunHlo(
        proto, {a_values, b_values,
                HostArray::Of<uint8_t>(ir::ElementType::kI1, {}, {taken})});
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    float sign = taken ? 1.0f : -1.0f;
    EXPECT_EQ((*outputs)[0].As<float>(),
              (std::vector<float>{sign * -2, sign * -2}));
  }
}

}  // namespace
}  // namespace kiln::testing
