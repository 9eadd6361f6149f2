// Shardy's pretty op forms in text: they read into the same ops and opaque
// attributes as their generic forms (which is what the printer writes and
// what the bytecode reader makes of JAX's artifacts).
#include <gtest/gtest.h>

#include "ir/printer.h"
#include "parse/text/parser.h"

namespace kiln {
namespace {

// What JAX 0.10.2 prints for a shard_map with a psum inside a jit whose
// argument is sharded, plus a sharding constraint and a reshard.
constexpr std::string_view kPretty = R"mlir(
module @jit_g attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) {
    %c = sdy.sharding_constraint %arg0 <@mesh, [{"x"}, {}]> : tensor<8x4xf32>
    %r = sdy.reshard %c <@mesh, [{"x"}, {"y"}]> : tensor<8x4xf32>
    %0 = sdy.manual_computation(%r) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{}, {"y"}]>] manual_axes={"x", "y"} (%arg1: tensor<2x2xf32>) {
      %1 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>, use_global_device_ids}> ({
      ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
        %2 = stablehlo.add %arg2, %arg3 : tensor<f32>
        stablehlo.return %2 : tensor<f32>
      }) : (tensor<2x2xf32>) -> tensor<2x2xf32>
      sdy.return %1 : tensor<2x2xf32>
    } : (tensor<8x4xf32>) -> tensor<2x4xf32>
    return %0 : tensor<2x4xf32>
  }
}
)mlir";

std::unique_ptr<ir::Module> Parse(std::string_view text) {
  StatusOr<std::unique_ptr<ir::Module>> module =
      parse::ParseTextModule(text, "shardy.mlir");
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

const ir::Operation* Find(const ir::Module& module, std::string_view name) {
  const ir::Operation* found = nullptr;
  module.op().Walk([&](ir::Operation& op) {
    if (found == nullptr && op.name() == name) found = &op;
  });
  return found;
}

TEST(TextShardyTest, ReadsPrettyForms) {
  std::unique_ptr<ir::Module> module = Parse(kPretty);
  ASSERT_NE(module, nullptr);
  const ir::Operation* mesh = Find(*module, "sdy.mesh");
  ASSERT_NE(mesh, nullptr);
  EXPECT_EQ(mesh->GetAttr("sym_name").string_value(), "mesh");
  EXPECT_EQ(mesh->GetAttr("mesh").ToString(), "#sdy.mesh<[\"x\"=4, \"y\"=2]>");
  EXPECT_TRUE(mesh->GetAttr("stablehlo.mesh"));

  const ir::Operation* constraint = Find(*module, "sdy.sharding_constraint");
  ASSERT_NE(constraint, nullptr);
  EXPECT_EQ(constraint->GetAttr("sharding").ToString(),
            "#sdy.sharding<@mesh, [{\"x\"}, {}]>");
  EXPECT_EQ(constraint->num_operands(), 1);
  EXPECT_EQ(constraint->result(0)->type().ToString(), "tensor<8x4xf32>");

  const ir::Operation* manual = Find(*module, "sdy.manual_computation");
  ASSERT_NE(manual, nullptr);
  EXPECT_EQ(manual->GetAttr("in_shardings").ToString(),
            "#sdy.sharding_per_value<[<@mesh, [{\"x\"}, {\"y\"}]>]>");
  EXPECT_EQ(manual->GetAttr("manual_axes").ToString(),
            "#sdy<manual_axes{\"x\", \"y\"}>");
  ASSERT_EQ(manual->num_regions(), 1);
  const ir::Block& body = manual->region(0).front();
  EXPECT_EQ(body.argument(0)->type().ToString(), "tensor<2x2xf32>");
  EXPECT_EQ(body.terminator()->name(), "sdy.return");
  EXPECT_EQ(body.terminator()->num_operands(), 1);
  EXPECT_EQ(manual->result(0)->type().ToString(), "tensor<2x4xf32>");
}

TEST(TextShardyTest, GenericFormReadsBackTheSame) {
  std::unique_ptr<ir::Module> pretty = Parse(kPretty);
  ASSERT_NE(pretty, nullptr);
  ir::PrintOptions options;
  options.generic = true;
  std::string generic = ir::PrintModule(*pretty, options);
  std::unique_ptr<ir::Module> again = Parse(generic);
  ASSERT_NE(again, nullptr);
  std::string why;
  EXPECT_TRUE(ir::StructurallyEqual(*pretty, *again, false, &why)) << why;
}

TEST(TextShardyTest, RefusesMalformedForms) {
  for (std::string_view bad : {
           "sdy.mesh = <[\"x\"=2]>",
           "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
           "  %0 = sdy.sharding_constraint %a : tensor<2xf32>\n"
           "  return %0 : tensor<2xf32>\n}",
           "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
           "  %0 = sdy.manual_computation(%a) in_shardings=[<@m, [{}]>] "
           "manual_axes={} (%b: tensor<2xf32>) { sdy.return %b : "
           "tensor<2xf32> } : (tensor<2xf32>) -> tensor<2xf32>\n"
           "  return %0 : tensor<2xf32>\n}",
       }) {
    StatusOr<std::unique_ptr<ir::Module>> module =
        parse::ParseTextModule(bad, "bad.mlir");
    EXPECT_FALSE(module.ok()) << bad;
  }
}

}  // namespace
}  // namespace kiln
