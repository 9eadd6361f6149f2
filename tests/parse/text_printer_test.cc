// The printer: the pretty spellings stablehlo-opt prints (expected lines
// taken from StableHLO's print_stablehlo.mlir CHECK lines), the generic
// form, locations, and the generic fallback when a pretty form cannot
// carry what an op holds.
#include <gtest/gtest.h>

#include "ir/printer.h"
#include "parse/text/parser.h"
#include "support/test_support.h"

namespace kiln {
namespace {

// Parses `body` as the body of a function taking `args`, prints it pretty
// without locations, and returns the printed lines of the body.
std::vector<std::string> PrintBody(const std::string& args,
                                   const std::string& body,
                                   ir::PrintOptions options = {false, false}) {
  std::string text =
      "func.func @f(" + args + ") {\n" + body + "\n  return\n}\n";
  StatusOr<std::unique_ptr<ir::Module>> module =
      parse::ParseTextModule(text, "p.mlir");
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return {};
  std::string printed = ir::PrintModule(**module, options);
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < printed.size()) {
    size_t end = printed.find('\n', start);
    std::string line = printed.substr(start, end - start);
    size_t first = line.find_first_not_of(' ');
    if (first != std::string::npos) lines.push_back(line.substr(first));
    start = end + 1;
  }
  // Drop module, func header, return and closing braces.
  return std::vector<std::string>(lines.begin() + 2, lines.end() - 3);
}

TEST(TextPrinter, PrintsElementwiseOpsWithTheShortTypeWhenTypesAgree) {
  auto lines = PrintBody(
      "%arg0: tensor<2xi32>, %arg1: tensor<2xf32>",
      R"(%0 = "stablehlo.abs"(%arg0) : (tensor<2xi32>) -> tensor<2xi32>
         %1 = "stablehlo.convert"(%arg0) : (tensor<2xi32>) -> tensor<2xf32>
         %2 = "stablehlo.add"(%arg1, %arg1) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
         %3 = "stablehlo.is_finite"(%arg1) : (tensor<2xf32>) -> tensor<2xi1>
         %4 = "stablehlo.complex"(%arg1, %arg1) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xcomplex<f32>>)");
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0], "%0 = stablehlo.abs %arg0 : tensor<2xi32>");
  EXPECT_EQ(lines[1],
            "%1 = stablehlo.convert %arg0 : (tensor<2xi32>) -> tensor<2xf32>");
  EXPECT_EQ(lines[2], "%2 = stablehlo.add %arg1, %arg1 : tensor<2xf32>");
  EXPECT_EQ(lines[3],
            "%3 = stablehlo.is_finite %arg1 : (tensor<2xf32>) -> tensor<2xi1>");
  EXPECT_EQ(lines[4],
            "%4 = stablehlo.complex %arg1, %arg1 : tensor<2xcomplex<f32>>");
}

TEST(TextPrinter, PrintsAttributeKeywordForms) {
  auto lines = PrintBody(
      "%arg0: tensor<1x2xf32>, %arg1: tensor<3xi32>, %arg2: tensor<3x4xi32>, "
      "%arg3: tensor<i64>, "
      "%arg4: tensor<8xf32>, %arg5: tensor<f32>, %arg6: tensor<3xi32>",
      R"(%0 = "stablehlo.broadcast_in_dim"(%arg0) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<1x2xf32>) -> tensor<1x2x3xf32>
         %1 = "stablehlo.transpose"(%arg0) {permutation = array<i64: 1, 0>} : (tensor<1x2xf32>) -> tensor<2x1xf32>
         %2 = "stablehlo.dynamic_slice"(%arg2, %arg3, %arg3) {slice_sizes = array<i64: 1, 4>} : (tensor<3x4xi32>, tensor<i64>, tensor<i64>) -> tensor<1x4xi32>
         %3 = "stablehlo.pad"(%arg4, %arg5) {edge_padding_high = array<i64: 4>, edge_padding_low = array<i64: 4>, interior_padding = array<i64: 0>} : (tensor<8xf32>, tensor<f32>) -> tensor<16xf32>
         %4 = "stablehlo.compare"(%arg6, %arg6) {comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type TOTALORDER>} : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
         %5 = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<1x10xf32>
         %6 = "stablehlo.reduce_precision"(%arg4) {exponent_bits = 8 : i32, mantissa_bits = 10 : i32} : (tensor<8xf32>) -> tensor<8xf32>
         %7 = "stablehlo.slice"(%arg4) {start_indices = array<i64: 0>, limit_indices = array<i64: 4>, strides = array<i64: 2>} : (tensor<8xf32>) -> tensor<2xf32>
         %8 = "stablehlo.concatenate"(%arg1, %arg6) {dimension = 0 : i64} : (tensor<3xi32>, tensor<3xi32>) -> tensor<6xi32>)");
  ASSERT_EQ(lines.size(), 9u);
  EXPECT_EQ(lines[0],
            "%0 = stablehlo.broadcast_in_dim %arg0, dims = [0, 1] : "
            "(tensor<1x2xf32>) -> tensor<1x2x3xf32>");
  EXPECT_EQ(lines[1],
            "%1 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<1x2xf32>) "
            "-> tensor<2x1xf32>");
  EXPECT_EQ(lines[2],
            "%2 = stablehlo.dynamic_slice %arg2, %arg3, %arg3, sizes = [1, 4] "
            ": (tensor<3x4xi32>, tensor<i64>, tensor<i64>) -> tensor<1x4xi32>");
  EXPECT_EQ(lines[3],
            "%3 = stablehlo.pad %arg4, %arg5, low = [4], high = [4], interior "
            "= [0] : (tensor<8xf32>, tensor<f32>) -> tensor<16xf32>");
  EXPECT_EQ(lines[4],
            "%4 = stablehlo.compare LT, %arg6, %arg6, TOTALORDER : "
            "(tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>");
  EXPECT_EQ(lines[5], "%5 = stablehlo.iota dim = 1 : tensor<1x10xf32>");
  EXPECT_EQ(
      lines[6],
      "%6 = stablehlo.reduce_precision %arg4, format = e8m10 : tensor<8xf32>");
  EXPECT_EQ(
      lines[7],
      "%7 = stablehlo.slice %arg4 [0:4:2] : (tensor<8xf32>) -> tensor<2xf32>");
  EXPECT_EQ(lines[8],
            "%8 = stablehlo.concatenate %arg1, %arg6, dim = 0 : "
            "(tensor<3xi32>, tensor<3xi32>) -> tensor<6xi32>");
}

TEST(TextPrinter, PrintsDotGeneralConvolutionAndCustomCall) {
  auto lines = PrintBody(
      "%arg0: tensor<2x2xi8>, %arg1: tensor<2x3xi8>, %arg2: "
      "tensor<1x8x8x3xf32>, %arg3: tensor<3x3x3x4xf32>",
      R"(%0 = "stablehlo.dot_general"(%arg0, %arg1) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision HIGH>, #stablehlo<precision HIGHEST>]} : (tensor<2x2xi8>, tensor<2x3xi8>) -> tensor<2x3xi32>
         %1 = "stablehlo.convolution"(%arg2, %arg3) {window_strides = array<i64: 2, 2>, padding = dense<1> : tensor<2x2xi64>, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64, batch_group_count = 1 : i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x4x4x4xf32>
         %2 = "stablehlo.custom_call"(%arg0, %arg0) {backend_config = "bar", call_target_name = "foo-not-id", has_side_effect = true} : (tensor<2x2xi8>, tensor<2x2xi8>) -> tensor<1x2x3xf32>)");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0],
            "%0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x "
            "[0], precision = [HIGH, HIGHEST] : (tensor<2x2xi8>, "
            "tensor<2x3xi8>) -> tensor<2x3xi32>");
  EXPECT_EQ(
      lines[1],
      "%1 = stablehlo.convolution(%arg2, %arg3) dim_numbers = [b, 0, 1, f]x[0, "
      "1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[1, 1], [1, "
      "1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : "
      "(tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x4x4x4xf32>");
  EXPECT_EQ(lines[2],
            "%2 = stablehlo.custom_call @\"foo-not-id\"(%arg0, %arg0) "
            "{backend_config = \"bar\", has_side_effect = true} : "
            "(tensor<2x2xi8>, tensor<2x2xi8>) -> tensor<1x2x3xf32>");
}

TEST(TextPrinter, LeavesOutInherentAttributesAtTheirDefault) {
  // Kiln keeps defaults absent (ir/attr_defaults.h): written or not, the IR
  // and the printed text are the same.
  auto lines = PrintBody(
      "%arg0: tensor<2x2xf32>",
      R"(%0 = "stablehlo.custom_call"(%arg0) {call_target_name = "foo", api_version = 1 : i32, has_side_effect = false} : (tensor<2x2xf32>) -> tensor<2x2xf32>
         %1 = "stablehlo.dot"(%arg0, %arg0) {precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
         %2 = "stablehlo.cholesky"(%arg0) {lower = false} : (tensor<2x2xf32>) -> tensor<2x2xf32>)");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0],
            "%0 = stablehlo.custom_call @foo(%arg0) : (tensor<2x2xf32>) -> "
            "tensor<2x2xf32>");
  EXPECT_EQ(lines[1],
            "%1 = stablehlo.dot %arg0, %arg0 : (tensor<2x2xf32>, "
            "tensor<2x2xf32>) -> tensor<2x2xf32>");
  EXPECT_EQ(lines[2], "%2 = stablehlo.cholesky %arg0 : tensor<2x2xf32>");
}

TEST(TextPrinter, PrintsTuplesBarriersAndTokens) {
  auto lines = PrintBody(
      "%arg0: tensor<i32>, %arg1: tensor<4xf32>",
      R"(%0 = "stablehlo.tuple"(%arg0, %arg0) : (tensor<i32>, tensor<i32>) -> tuple<tensor<i32>, tensor<i32>>
         %1 = "stablehlo.get_tuple_element"(%0) {index = 0 : i32} : (tuple<tensor<i32>, tensor<i32>>) -> tensor<i32>
         "stablehlo.optimization_barrier"() : () -> ()
         %2:2 = "stablehlo.optimization_barrier"(%arg1, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
         %3 = "stablehlo.create_token"() : () -> !stablehlo.token
         %4 = "stablehlo.after_all"(%3, %3) : (!stablehlo.token, !stablehlo.token) -> !stablehlo.token
         %5 = "stablehlo.replica_id"() : () -> tensor<ui32>)");
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(
      lines[0],
      "%0 = stablehlo.tuple %arg0, %arg0 : tuple<tensor<i32>, tensor<i32>>");
  EXPECT_EQ(lines[1],
            "%1 = stablehlo.get_tuple_element %0[0] : (tuple<tensor<i32>, "
            "tensor<i32>>) -> tensor<i32>");
  EXPECT_EQ(lines[2], "stablehlo.optimization_barrier()");
  EXPECT_EQ(lines[3],
            "%2:2 = stablehlo.optimization_barrier %arg1, %arg1 : "
            "tensor<4xf32>, tensor<4xf32>");
  EXPECT_EQ(lines[4], "%3 = stablehlo.create_token : !stablehlo.token");
  EXPECT_EQ(lines[5], "%4 = stablehlo.after_all %3, %3 : !stablehlo.token");
  EXPECT_EQ(lines[6], "%5 = stablehlo.replica_id : tensor<ui32>");
}

TEST(TextPrinter,
     PrintsConstantsWithAttributesAndQuantizedConstantsGenericLike) {
  auto lines = PrintBody(
      "",
      R"(%0 = "stablehlo.constant"() <{value = dense<[-2, 4]> : tensor<2xi64>}> {attr = 1 : i32} : () -> tensor<2xi64>
             %1 = "stablehlo.constant"() {value = dense<[1, 2]> : tensor<2xi8>} : () -> tensor<2x!quant.uniform<i8:f32, 2.000000e+00:15>>)");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "%0 = stablehlo.constant {attr = 1 : i32} dense<[-2, 4]> : "
            "tensor<2xi64>");
  EXPECT_EQ(
      lines[1],
      "%1 = stablehlo.constant() <{value = dense<[1, 2]> : tensor<2xi8>}> : () "
      "-> tensor<2x!quant.uniform<i8:f32, 2.000000e+00:15>>");
}

TEST(TextPrinter, PrintsWhileWithLoopVariablesAndCompactReduce) {
  auto lines = PrintBody("%arg0: tensor<i32>, %arg1: tensor<4xf32>",
                         R"(%0 = "stablehlo.while"(%arg0) ({
         ^bb0(%a: tensor<i32>):
           %c = "stablehlo.compare"(%a, %a) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
           "stablehlo.return"(%c) : (tensor<i1>) -> ()
         }, {
         ^bb0(%b: tensor<i32>):
           "stablehlo.return"(%b) : (tensor<i32>) -> ()
         }) : (tensor<i32>) -> tensor<i32>
         %1 = "stablehlo.reduce"(%arg1, %arg0) ({
         ^bb0(%x: tensor<i32>, %y: tensor<i32>):
           %s = "stablehlo.add"(%x, %y) : (tensor<i32>, tensor<i32>) -> tensor<i32>
           "stablehlo.return"(%s) : (tensor<i32>) -> ()
         }) {dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<i32>) -> tensor<i32>)");
  ASSERT_GE(lines.size(), 6u);
  EXPECT_EQ(lines[0], "%0 = stablehlo.while(%iterArg0 = %arg0) : tensor<i32>");
  EXPECT_EQ(lines[1], "cond {");
  EXPECT_EQ(lines[2],
            "%1 = stablehlo.compare LT, %iterArg0, %iterArg0 : (tensor<i32>, "
            "tensor<i32>) -> tensor<i1>");
  EXPECT_EQ(lines[3], "stablehlo.return %1 : tensor<i1>");
  EXPECT_EQ(lines[4], "} do {");
  // The body's arguments are not scalars of the first input's element
  // type, so the compact form could not rebuild them: the reduce prints
  // with its reducer.
  EXPECT_EQ(lines[7],
            "%2 = stablehlo.reduce(%arg1 init: %arg0) across dimensions = [0] "
            ": (tensor<4xf32>, tensor<i32>) -> tensor<i32>");
  EXPECT_EQ(lines[8], "reducer(%arg2: tensor<i32>, %arg3: tensor<i32>) {");
}

TEST(TextPrinter, FallsBackToGenericWhenThePrettyFormCannotCarryTheOp) {
  auto lines = PrintBody(
      "%arg0: tensor<1x2xf32>",
      R"(%0 = "stablehlo.broadcast_in_dim"(%arg0) {broadcast_dimensions = dense<[0, 1]> : tensor<2xi64>} : (tensor<1x2xf32>) -> tensor<1x2x3xf32>
         %1 = "stablehlo.iota"() {iota_dimension = 1 : i32} : () -> tensor<1x10xf32>)");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "%0 = \"stablehlo.broadcast_in_dim\"(%arg0) <{broadcast_dimensions "
            "= dense<[0, 1]> : tensor<2xi64>}> : (tensor<1x2xf32>) -> "
            "tensor<1x2x3xf32>");
  EXPECT_EQ(lines[1],
            "%1 = \"stablehlo.iota\"() <{iota_dimension = 1 : i32}> : () -> "
            "tensor<1x10xf32>");
}

TEST(TextPrinter, PrintsGenericFormWithPropertiesRegionsAndLocations) {
  std::string text = R"(
    func.func @f(%x: tensor<4xf32> loc("x"), %i: tensor<f32>) -> tensor<f32> {
      %0 = stablehlo.reduce(%x init: %i) applies stablehlo.add across dimensions = [0]
          : (tensor<4xf32>, tensor<f32>) -> tensor<f32> loc("r")
      return %0 : tensor<f32> loc("ret")
    } loc("f")
  )";
  StatusOr<std::unique_ptr<ir::Module>> module =
      parse::ParseTextModule(text, "g.mlir");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  std::string generic = ir::PrintModule(**module, {true, true});
  EXPECT_NE(
      generic.find(
          "\"func.func\"() <{function_type = (tensor<4xf32>, tensor<f32>) -> "
          "tensor<f32>, sym_name = \"f\"}> ({\n"),
      std::string::npos)
      << generic;
  EXPECT_NE(
      generic.find("^bb0(%arg0: tensor<4xf32> loc(\"x\"), %arg1: tensor<f32> "
                   "loc(\"g.mlir\":2:46)):"),
      std::string::npos)
      << generic;
  EXPECT_NE(generic.find("\"stablehlo.reduce\"(%arg0, %arg1) <{dimensions = "
                         "array<i64: 0>}> ({"),
            std::string::npos)
      << generic;
  EXPECT_NE(
      generic.find("\"func.return\"(%0) : (tensor<f32>) -> () loc(\"ret\")"),
      std::string::npos)
      << generic;
  EXPECT_NE(generic.find("}) : () -> () loc(\"f\")"), std::string::npos)
      << generic;
  // Pretty with locations: the compact reduce keeps its one location.
  std::string pretty = ir::PrintModule(**module, {false, true});
  EXPECT_NE(
      pretty.find(
          "applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, "
          "tensor<f32>) -> tensor<f32> loc(\"r\")"),
      std::string::npos)
      << pretty;
  EXPECT_NE(pretty.find("func.func @f(%arg0: tensor<4xf32> loc(\"x\"), "),
            std::string::npos)
      << pretty;
}

TEST(TextPrinter, KeepsEmptyBlocksAndMalformedModulesThroughARoundTrip) {
  for (const char* text : {
           "\"x.op\"() ({\n^bb0:\n^bb1:\n  \"x.end\"() : () -> ()\n}) : () -> "
           "()",
           "\"x.op\"() ({\n^bb0:\n}, {\n}) : () -> ()",
           // Module ops that cannot be the module stay generic ops.
           "\"builtin.module\"() : () -> ()",
           "\"builtin.module\"() ({\n^bb0:\n^bb1:\n}) : () -> ()",
       }) {
    StatusOr<std::unique_ptr<ir::Module>> module =
        parse::ParseTextModule(text, "b.mlir");
    ASSERT_TRUE(module.ok()) << module.status().ToString();
    for (bool generic : {false, true}) {
      std::string printed = ir::PrintModule(**module, {generic, true});
      StatusOr<std::unique_ptr<ir::Module>> again =
          parse::ParseTextModule(printed, "b2.mlir");
      ASSERT_TRUE(again.ok()) << again.status().ToString() << "\n" << printed;
      std::string why;
      EXPECT_TRUE(ir::StructurallyEqual(**module, **again, true, &why))
          << why << "\n"
          << printed;
    }
  }
}

TEST(TextPrinter, PrintsResourceBlobsAndReadsThemBack) {
  std::string text = R"(
    func.func @f() -> tensor<2xf32> {
      %0 = stablehlo.constant dense_resource<w> : tensor<2xf32>
      return %0 : tensor<2xf32>
    }
    {-# dialect_resources: { builtin: { w: "0x100000000000803F00000040" } } #-}
  )";
  StatusOr<std::unique_ptr<ir::Module>> module =
      parse::ParseTextModule(text, "r.mlir");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  std::string printed = ir::PrintModule(**module, {false, false});
  EXPECT_NE(printed.find("w: \"0x100000000000803F00000040\""),
            std::string::npos)
      << printed;
  StatusOr<std::unique_ptr<ir::Module>> again =
      parse::ParseTextModule(printed, "r2.mlir");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ((*again)->resources().at("w")->alignment, 16u);
  EXPECT_TRUE(ir::StructurallyEqual(**module, **again, false));
}

TEST(TextPrinter, RoundTripsSpecialFloatValuesExactly) {
  std::string text = R"(
    func.func @f() -> () {
      %0 = stablehlo.constant dense<[0x7FC00001, 0xFFC00000, 0x7F800000, -0.0, 1.0e-45]> : tensor<5xf32>
      %1 = stablehlo.constant dense<[0x7FF8000000000001, 2.2250738585072014E-308]> : tensor<2xf64>
      %2 = stablehlo.constant dense<[0x7E, 0xFF, 0x80]> : tensor<3xf8E4M3FN>
      %3 = stablehlo.constant dense<(0xFFC00000, -0.0)> : tensor<complex<f32>>
      "x.attrs"() {a = 0x7E01 : f16, b = 0xFFC00001 : f32, c = 0x7FF0000000000001 : f64, d = array<f32: 0xFFC00001, -0.0>} : () -> ()
      return
    }
  )";
  StatusOr<std::unique_ptr<ir::Module>> module =
      parse::ParseTextModule(text, "s.mlir");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  for (bool generic : {false, true}) {
    std::string printed = ir::PrintModule(**module, {generic, false});
    StatusOr<std::unique_ptr<ir::Module>> again =
        parse::ParseTextModule(printed, "s2.mlir");
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    std::string why;
    EXPECT_TRUE(ir::StructurallyEqual(**module, **again, false, &why))
        << why << "\n"
        << printed;
  }
}

}  // namespace
}  // namespace kiln
