// The HLO reader (parse/hlo): module structure, tuples, called computations,
// donation, and refusals. Programs are built with the proto API.
#include "parse/hlo/reader.h"

#include <gtest/gtest.h>

#include <string>

#include "ir/printer.h"
#include "parse/parse.h"
#include "parse/hlo_builder.h"

namespace kiln::parse::hlo {
namespace {

using testing::ArrayShape;
using testing::HloModuleBuilder;
using testing::TupleShape;

std::string Print(const ir::Module& module) {
  ir::PrintOptions options;
  options.locations = false;
  return ir::PrintModule(module, options);
}

TEST(HloReaderTest, UntuplesTheEntryRootIntoResults) {
  HloModuleBuilder m("tuple_root");
  auto entry = m.Computation("main.1");
  int64_t x = entry.Parameter(0, ArrayShape(xla::F32, {2, 3}));
  int64_t y = entry.Parameter(1, ArrayShape(xla::F32, {2, 3}));
  int64_t sum = entry.Add("add", ArrayShape(xla::F32, {2, 3}), {x, y}).id();
  auto f32 = ArrayShape(xla::F32, {2, 3});
  int64_t tuple = entry.Add("tuple", TupleShape({f32, f32}), {sum, x}).id();
  int64_t gte_id = entry.Add("get-tuple-element", f32, {tuple}).id();
  entry.Add("tuple", TupleShape({f32, f32}), {gte_id, y});
  auto module = ConvertHloModule(m.Finish(entry), "test");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  ir::Operation* main = (*module)->EntryFunction();
  ASSERT_NE(main, nullptr);
  ir::Type type = ir::func::FunctionType(*main);
  EXPECT_EQ(type.inputs().size(), 2u);
  EXPECT_EQ(type.results().size(), 2u);
  std::string text = Print(**module);
  EXPECT_NE(text.find("stablehlo.add"), std::string::npos) << text;
  // Tuples only regroup: no tuple ops are left.
  EXPECT_EQ(text.find("stablehlo.tuple"), std::string::npos) << text;
  EXPECT_EQ(text.find("get_tuple_element"), std::string::npos) << text;
  // The result is (add, y): gte 0 of (add, x) is the add.
  const ir::Operation* ret = ir::func::Body(*main).terminator();
  ASSERT_EQ(ret->num_operands(), 2);
  EXPECT_TRUE(ret->operand(0)->defining_op()->is(ir::OpCode::kAdd));
  EXPECT_EQ(ret->operand(1), ir::func::Body(*main).argument(1));
}

TEST(HloReaderTest, InlinesCallsAndMakesRegionsOfReducers) {
  HloModuleBuilder m("called");
  int64_t add = m.ScalarBinary("add");
  auto callee = m.Computation("twice");
  int64_t p = callee.Parameter(0, ArrayShape(xla::F32, {4}));
  callee.Add("add", ArrayShape(xla::F32, {4}), {p, p});
  int64_t callee_id = callee.id();
  auto entry = m.Computation("main");
  int64_t x = entry.Parameter(0, ArrayShape(xla::F32, {4}));
  auto& call = entry.Add("call", ArrayShape(xla::F32, {4}), {x});
  call.add_called_computation_ids(callee_id);
  int64_t zero = entry.ConstantF32({}, {0.0f});
  auto& reduce =
      entry.Add("reduce", ArrayShape(xla::F32, {}), {call.id(), zero});
  reduce.add_dimensions(0);
  reduce.add_called_computation_ids(add);
  auto module = ConvertHloModule(m.Finish(entry), "test");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  std::string text = Print(**module);
  EXPECT_EQ(text.find("func.call"), std::string::npos) << text;
  EXPECT_NE(text.find("stablehlo.reduce"), std::string::npos) << text;
  EXPECT_EQ((*module)->Functions().size(), 1u);
}

TEST(HloReaderTest, MarksAliasedAndDonatedParameters) {
  HloModuleBuilder m("donation");
  auto entry = m.Computation("main");
  auto f32 = ArrayShape(xla::F32, {3});
  int64_t a = entry.Parameter(0, f32);
  int64_t b = entry.Parameter(1, f32);
  int64_t c = entry.Parameter(2, f32);
  int64_t sum = entry.Add("add", f32, {a, b}).id();
  int64_t product = entry.Add("multiply", f32, {b, c}).id();
  entry.Add("tuple", TupleShape({f32, f32}), {sum, product});
  xla::HloModuleProto& proto = m.Finish(entry);
  auto* alias = proto.mutable_input_output_alias()->add_entries();
  alias->add_output_shape_index(1);
  alias->set_parameter_number(2);
  proto.mutable_buffer_donor()->add_entries()->set_parameter_number(0);
  auto module = ConvertHloModule(proto, "test");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  std::string text = Print(**module);
  EXPECT_NE(text.find("%arg2: tensor<3xf32> {tf.aliasing_output = 1 : i32}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("%arg0: tensor<3xf32> {jax.buffer_donor = true}"),
            std::string::npos)
      << text;
}

TEST(HloReaderTest, RefusesAnUnsupportedOpcodeByName) {
  HloModuleBuilder m("unsupported");
  auto entry = m.Computation("main");
  int64_t x = entry.Parameter(0, ArrayShape(xla::F32, {4}));
  entry.Add("all-to-all", ArrayShape(xla::F32, {4}), {x});
  auto module = ConvertHloModule(m.Finish(entry), "prog.hlo.pb");
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(module.status().message().find(
                "HLO opcode 'all-to-all' is not supported"),
            std::string::npos)
      << module.status().ToString();
  EXPECT_NE(module.status().message().find("prog.hlo.pb"), std::string::npos);
}

TEST(HloReaderTest, RefusesMalformedBytesWithoutCrashing) {
  for (std::string bytes :
       {std::string("\xff\xff\xff\xff garbage", 12), std::string("\x1a\x05" "ab", 4),
        std::string()}) {
    auto module = ReadHloModule(bytes, "bad");
    EXPECT_FALSE(module.ok());
  }
  // A valid module cut short: every prefix reads or fails, never crashes
  // (a cut between fields can still be a valid module), and most fail.
  HloModuleBuilder m("cut");
  auto entry = m.Computation("main");
  int64_t x = entry.Parameter(0, ArrayShape(xla::F32, {4}));
  entry.Add("negate", ArrayShape(xla::F32, {4}), {x});
  std::string bytes = m.Finish(entry).SerializeAsString();
  size_t failed = 0;
  for (size_t size = 0; size < bytes.size(); ++size) {
    failed += !ReadHloModule(std::string_view(bytes).substr(0, size), "cut").ok();
  }
  EXPECT_GT(failed, bytes.size() / 2);
  EXPECT_TRUE(ReadHloModule(bytes, "whole").ok());
}

TEST(HloReaderTest, RefusesOperandsThatAreNotEarlierInstructions) {
  HloModuleBuilder m("order");
  auto entry = m.Computation("main");
  int64_t x = entry.Parameter(0, ArrayShape(xla::F32, {4}));
  entry.Add("negate", ArrayShape(xla::F32, {4}), {x + 5});
  auto module = ConvertHloModule(m.Finish(entry), "test");
  ASSERT_FALSE(module.ok());
  EXPECT_NE(module.status().message().find("is not an earlier instruction"),
            std::string::npos)
      << module.status().ToString();
}

TEST(HloReaderTest, HonoursPermutedLayoutsAndRefusesOthers) {
  HloModuleBuilder m("layouts");
  auto entry = m.Computation("main");
  auto shape = ArrayShape(xla::F32, {2, 3});
  shape.mutable_layout()->add_minor_to_major(0);
  shape.mutable_layout()->add_minor_to_major(1);
  entry.Parameter(0, shape);
  xla::HloModuleProto proto = m.Finish(entry);
  EXPECT_TRUE(ConvertHloModule(proto, "test").ok());
  proto.mutable_computations(0)
      ->mutable_instructions(0)
      ->mutable_shape()
      ->mutable_layout()
      ->set_minor_to_major(1, 0);
  auto module = ConvertHloModule(proto, "test");
  ASSERT_FALSE(module.ok());
  EXPECT_NE(module.status().message().find("not a permutation"),
            std::string::npos)
      << module.status().ToString();
}

TEST(HloReaderTest, ParseProgramDispatchesOnFormat) {
  HloModuleBuilder m("formats");
  auto entry = m.Computation("main");
  entry.Parameter(0, ArrayShape(xla::S32, {}));
  std::string bytes = m.Finish(entry).SerializeAsString();
  EXPECT_TRUE(ParseProgram(bytes, "hlo", "p").ok());
  xla::HloModuleProtoWithConfig with_config;
  *with_config.mutable_hlo_module() = m.proto();
  EXPECT_TRUE(
      ParseProgram(with_config.SerializeAsString(), "hlo_with_config", "p").ok());
  xla::HloProto dump;
  *dump.mutable_hlo_module() = m.proto();
  EXPECT_TRUE(ParseFile(dump.SerializeAsString(), "x.hlo.pb").ok());
  EXPECT_TRUE(ParseFile(bytes, "x.hlo.pb").ok());
  EXPECT_FALSE(ParseProgram(bytes, "xla", "p").ok());
}

}  // namespace
}  // namespace kiln::parse::hlo
