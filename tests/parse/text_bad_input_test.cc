// Bad input gives a clear `file:line:col: message` error, never a crash,
// a hang or unbounded memory: truncated files, unbalanced brackets, unknown
// types, absurd dimensions, deep nesting, invalid UTF-8.
#include <gtest/gtest.h>

#include "base/strings.h"
#include "parse/text/parser.h"
#include "support/test_support.h"

namespace kiln {
namespace {

// Parses `text` expecting an error whose message starts with the position
// `bad.mlir:LINE:COL:` and contains `needle`.
void ExpectError(std::string_view text, std::string_view position,
                 std::string_view needle) {
  StatusOr<std::unique_ptr<ir::Module>> module =
      parse::ParseTextModule(text, "bad.mlir");
  ASSERT_FALSE(module.ok()) << "parsed: " << text;
  std::string message(module.status().message());
  EXPECT_EQ(message.substr(0, position.size()), position) << message;
  EXPECT_NE(message.find(needle), std::string::npos) << message;
}

constexpr std::string_view kProgram = R"(#loc1 = loc("a.py":1:2)
module @m attributes {mhlo.num_partitions = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32> {mhlo.sharding = "{replicated}"} loc("x"),
                         %arg1: tensor<i64>) -> (tensor<3xf32> {jax.result_info = ""}) {
    %cst = stablehlo.constant dense<[[1.0, 2.0, 3.0], [0x7FC00000, -0.0, 5.5]]> : tensor<2x3xf32>
    %0 = stablehlo.add %arg0, %cst : tensor<2x3xf32> loc(#loc2)
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<3xf32>
    %2:2 = "stablehlo.sort"(%1, %1) <{dimension = 0 : i64}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>, %d: tensor<f32>):
      %p = stablehlo.compare GT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    }) : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
    %3 = stablehlo.dynamic_slice %2#0, %arg1, sizes = [3] : (tensor<3xf32>, tensor<i64>) -> tensor<3xf32>
    %4 = stablehlo.custom_call @foo(%3) {backend_config = "\22x\22", operand_layouts = [dense<0> : tensor<1xindex>]} : (tensor<3xf32>) -> tensor<3xf32>
    return %4 : tensor<3xf32>
  } loc(#loc1)
} loc(unknown)
#loc2 = loc("add"(#loc1))
{-# dialect_resources: { builtin: { k: "0x0400000001020304" } } #-}
)";

TEST(TextBadInput, EveryTruncationOfAProgramFailsCleanly) {
  ASSERT_TRUE(parse::ParseTextModule(kProgram, "bad.mlir").ok());
  int errors = 0;
  for (size_t length = 0; length < kProgram.size(); ++length) {
    std::string prefix(kProgram.substr(0, length));
    StatusOr<std::unique_ptr<ir::Module>> module =
        parse::ParseTextModule(prefix, "bad.mlir");
    if (module.ok()) continue;  // a few prefixes are complete programs
    ++errors;
    std::string message(module.status().message());
    ASSERT_EQ(message.substr(0, 9), "bad.mlir:")
        << "prefix of " << length << ": " << message;
  }
  // Nearly every prefix is incomplete.
  EXPECT_GT(errors, static_cast<int>(kProgram.size()) * 9 / 10);
}

TEST(TextBadInput, ReportsUnbalancedBrackets) {
  ExpectError("func.func @f() {\n  return\n", "bad.mlir:1:16:", "missing '}'");
  ExpectError("func.func @f(%a: tensor<2xf32) {\n}",
              "bad.mlir:1:30:", "expected '>'");
  ExpectError("#a = dense<[1, 2> : tensor<2xi32>",
              "bad.mlir:1:17:", "found '>'");
  ExpectError("}", "bad.mlir:1:1:", "expected operation name");
  ExpectError("#a = #foo.bar<{(]>", "bad.mlir:1:14:", "unbalanced");
}

TEST(TextBadInput, NamesUnknownTypesAndOps) {
  ExpectError("func.func @f(%a: tensor<2xfoo>) {\n}",
              "bad.mlir:1:27:", "unknown type 'foo'");
  ExpectError("func.func @f(%a: !undefined) {\n}",
              "bad.mlir:1:18:", "undefined type alias '!undefined'");
  ExpectError("func.func @f() {\n  %0 = stablehlo.bogus : tensor<f32>\n}",
              "bad.mlir:2:8:", "custom op 'stablehlo.bogus' is unknown");
  ExpectError("func.func @f(%a: tensor<f32>) {\n  %0 = stablehlo.gather %a\n}",
              "bad.mlir:2:8:", "has no pretty form");
}

TEST(TextBadInput, RejectsAbsurdDimensionsAndCounts) {
  ExpectError("func.func @f(%a: tensor<99999999999999999999xf32>) {\n}",
              "bad.mlir:1:25:", "dimension 99999999999999999999 is too large");
  ExpectError("func.func @f(%a: tensor<4294967296x4294967296xf32>) {\n}",
              "bad.mlir:1:", "more than 2^63-1 elements");
  ExpectError("func.func @f() {\n  %0:999999999 = \"x.y\"() : () -> ()\n}",
              "bad.mlir:2:", "invalid result count 999999999");
  ExpectError("#a = 99999999999999999999999 : i64",
              "bad.mlir:1:6:", "does not fit in 64 bits");
  ExpectError("#a = 300 : i8", "bad.mlir:1:6:", "out of range for i8");
  ExpectError("#a = dense<\"0x0102\"> : tensor<3xi32>",
              "bad.mlir:1:12:", "dense hex data has 2 bytes");
  ExpectError("#a = dense<[1, 2, 3]> : tensor<2xi32>",
              "bad.mlir:1:25:", "dense literal has shape [3]");
  // A splat of a huge tensor stays one element: no allocation.
  StatusOr<ir::Attribute> splat =
      parse::ParseTextAttribute("dense<1.0> : tensor<100000000x100000000xf32>");
  ASSERT_TRUE(splat.ok()) << splat.status().ToString();
  EXPECT_EQ(splat->dense_data().size(), 4u);
}

TEST(TextBadInput, BoundsNestingDepthWithoutExhaustingTheStack) {
  const int kDepth = 20000;
  std::string regions;
  for (int i = 0; i < kDepth; ++i) regions += "\"x.op\"() ({\n";
  ExpectError(regions, "bad.mlir:", "nesting deeper than");

  std::string arrays = "#a = " + std::string(kDepth, '[');
  ExpectError(arrays, "bad.mlir:1:", "nesting deeper than");

  std::string tuples = "func.func @f(%a: ";
  for (int i = 0; i < kDepth; ++i) tuples += "tuple<";
  ExpectError(tuples, "bad.mlir:1:", "nesting deeper than");

  std::string locations = "#l = loc(";
  for (int i = 0; i < kDepth; ++i) locations += "fused[";
  ExpectError(locations, "bad.mlir:1:", "nesting deeper than");

  std::string dense = "#a = dense<" + std::string(kDepth, '[');
  ExpectError(dense, "bad.mlir:1:", "nesting deeper than");

  // Location aliases that refer to each other in a long chain.
  std::string chain = "#l0 = loc(\"a\")\n";
  for (int i = 1; i < kDepth; ++i)
    chain += StrCat("#l", i, " = loc(\"n\"(#l", i - 1, "))\n");
  chain += StrCat("\"x.op\"() : () -> () loc(#l", kDepth - 1, ")\n");
  chain = StrCat("\"x.op\"() : () -> () loc(#l", kDepth - 1, ")\n", chain);
  StatusOr<std::unique_ptr<ir::Module>> module =
      parse::ParseTextModule(chain, "bad.mlir");
  ASSERT_FALSE(module.ok());
  EXPECT_NE(module.status().message().find("nesting deeper than"),
            std::string::npos)
      << module.status().message();
}

TEST(TextBadInput, RejectsInvalidUtf8) {
  ExpectError("#a = \"ok \xFF\xFE bad\"", "bad.mlir:1:6:", "invalid UTF-8");
  ExpectError("func.func @f() {\n  \xC3\x28\n}", "bad.mlir:2:3:", "non-ASCII");
  // Valid UTF-8 in strings and comments is fine.
  EXPECT_TRUE(
      parse::ParseTextModule(
          "// caf\xC3\xA9\n\"x.op\"() {s = \"\xE2\x82\xAC\"} : () -> ()",
          "ok.mlir")
          .ok());
}

TEST(TextBadInput, RejectsUndefinedAndRedefinedValues) {
  ExpectError(
      "func.func @f() {\n  %0 = \"x.a\"(%nope) : (tensor<f32>) -> "
      "tensor<f32>\n}",
      "bad.mlir:2:14:", "use of undeclared SSA value '%nope'");
  ExpectError(
      "func.func @f(%a: tensor<f32>) {\n  %a = stablehlo.abs %a : "
      "tensor<f32>\n}",
      "bad.mlir:2:3:", "redefinition of SSA value '%a'");
  ExpectError(
      "func.func @f(%a: tensor<f32>) {\n  %0 = stablehlo.abs %a : "
      "tensor<i32>\n}",
      "bad.mlir:2:22:", "expects different type than prior uses");
  ExpectError(
      "func.func @f(%a: tensor<f32>) {\n  %0, %1 = stablehlo.abs %a : "
      "tensor<f32>\n}",
      "bad.mlir:2:3:",
      "operation defines 1 results but was provided 2 to bind");
  ExpectError("\"x.a\"() : () -> () loc(#nowhere)",
              "bad.mlir:1:24:", "undefined location alias #nowhere");
}

TEST(TextBadInput, RejectsStrayBytesAndUnterminatedStrings) {
  ExpectError(std::string_view("\"x.a\"() : () -> ()\0", 19),
              "bad.mlir:1:19:", "unexpected character");
  ExpectError("#a = \"never closed\n", "bad.mlir:1:6:", "unterminated string");
  ExpectError("#a = dense<\"0xZZ\"> : tensor<1xi8>",
              "bad.mlir:1:12:", "invalid hex digit");
}

// Quantized storage is at most 32 bits wide, as in MLIR's quant dialect; a
// 64-bit storage type once overflowed computing its default range (UBSan,
// fuzz find tests/parse/fuzz_regressions/ubsan_45301647.mlir).
TEST(TextBadInput, RejectsQuantizedStorageWiderThan32Bits) {
  ExpectError("#a = 1 : tensor<!quant.uniform<i64:f32, 1.0>>",
              "bad.mlir:1:", "invalid quantized storage type 'i64'");
  ExpectError("func.func @f(%a: tensor<!quant.uniform<u64:f32, 1.0>>) {\n}",
              "bad.mlir:1:", "invalid quantized storage type");
  StatusOr<ir::Type> widest =
      parse::ParseTextType("!quant.uniform<i32:f32, 1.0>");
  EXPECT_TRUE(widest.ok()) << widest.status().ToString();
}

}  // namespace
}  // namespace kiln
