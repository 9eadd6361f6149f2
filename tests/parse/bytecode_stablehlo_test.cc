// Plain StableHLO bytecode (MLIR's own encoding of the stablehlo, chlo,
// func and quant dialects, not a VHLO artifact) built byte by byte: every
// stablehlo attribute kind must decode to the value the text parser builds
// from its text, op properties follow the ODS order (optional attributes,
// segment sizes in both encodings, unregistered ops), and malformed input
// is an error that says what is wrong.

#include <gtest/gtest.h>

#include "parse/bytecode/reader.h"
#include "parse/bytecode_test_writer.h"
#include "support/test_support.h"

#ifdef KILN_HAVE_PARSE_TEXT
#include "parse/text/parser.h"
#endif

namespace kiln::parse::bytecode {
namespace {

using testing::Section;
using testing::SignedVarInt;
using testing::VarInt;
using testing::WithFlag;
using testing::Writer;

// Dialects of the files below, in table order.
constexpr uint64_t kBuiltin = 0;
constexpr uint64_t kFunc = 1;
constexpr uint64_t kStablehlo = 2;
constexpr uint64_t kChlo = 3;
constexpr uint64_t kQuant = 4;

// Builtin codes (BuiltinDialectBytecode.td) used below.
constexpr uint64_t kArrayAttr = 0;
constexpr uint64_t kDictionaryAttr = 1;
constexpr uint64_t kTypeAttr = 6;
constexpr uint64_t kIntegerType = 0;
constexpr uint64_t kF32Type = 5;
constexpr uint64_t kRankedTensorType = 13;
constexpr uint64_t kRankedTensorWithEncodingType = 14;

std::string Op(uint64_t name, uint8_t mask, uint64_t loc,
               const std::string& rest) {
  return VarInt(name) + std::string(1, static_cast<char>(mask)) + VarInt(loc) +
         rest;
}

// A plain file: `func.func @main(%arg0: tensor<f32>) -> tensor<f32>` whose
// body the test writes (the function returns %arg0).
struct Plain {
  explicit Plain(uint64_t version)
      : version(version),
        w(version, "MLIR23.0.0git",
          {"builtin", "func", "stablehlo", "chlo", "quant"}) {
    loc = w.UnknownLoc();
    f32 = w.Type(kBuiltin, VarInt(kF32Type));
    tensor_f32 =
        w.Type(kBuiltin, VarInt(kRankedTensorType) + VarInt(0) + VarInt(f32));
    uint64_t func_type =
        w.Type(kBuiltin, VarInt(2) + VarInt(1) + VarInt(tensor_f32) +
                             VarInt(1) + VarInt(tensor_f32));
    uint64_t type_attr =
        w.Attr(kBuiltin, VarInt(kTypeAttr) + VarInt(func_type));
    uint64_t name = w.BuiltinString("main");
    module_op = w.OpName(kBuiltin, "module");
    func_op = w.OpName(kFunc, "func");
    return_op = w.OpName(kFunc, "return");
    if (version >= 5) {
      // ?arg_attrs, function_type, ?no_inline, ?res_attrs, sym_name,
      // ?sym_visibility.
      func_props = w.Properties(WithFlag(0, false) + VarInt(type_attr) +
                                WithFlag(0, false) + WithFlag(0, false) +
                                VarInt(name) + WithFlag(0, false));
    } else {
      func_props =
          Dictionary({{"function_type", type_attr}, {"sym_name", name}});
    }
  }

  uint64_t Dictionary(
      const std::vector<std::pair<std::string, uint64_t>>& entries) {
    std::string encoding = VarInt(kDictionaryAttr) + VarInt(entries.size());
    for (const auto& [key, value] : entries) {
      encoding += VarInt(w.BuiltinString(key)) + VarInt(value);
    }
    return w.Attr(kBuiltin, encoding);
  }

  // The file, with `ops` (`num_ops` of them, defining `num_results` values)
  // before the return.
  std::string Build(const std::string& ops, uint64_t num_ops,
                    uint64_t num_results = 0) {
    std::string body = WithFlag(num_ops + 1, true) + VarInt(1) +
                       WithFlag(tensor_f32, false) + std::string(1, '\0');
    body += ops + Op(return_op, 0x04, loc, VarInt(1) + VarInt(0));
    std::string func_region = VarInt(1) + VarInt(1 + num_results) + body;
    std::string func =
        Op(func_op, version >= 5 ? 0x50 : 0x11, loc,
           VarInt(func_props) + WithFlag(1, true) + Section(4, func_region));
    std::string module_region =
        VarInt(1) + VarInt(0) + WithFlag(1, false) + func;
    std::string ir =
        WithFlag(1, false) +
        Op(module_op, 0x10, loc, WithFlag(1, true) + Section(4, module_region));
    return w.Build(ir);
  }

  uint64_t version;
  Writer w;
  uint64_t loc = 0, f32 = 0, tensor_f32 = 0;
  uint64_t module_op = 0, func_op = 0, return_op = 0, func_props = 0;
};

StatusOr<std::unique_ptr<ir::Module>> Read(const std::string& bytes) {
  BytecodeReadOptions options;
#ifdef KILN_HAVE_PARSE_TEXT
  options.parse_attribute = [](std::string_view text) {
    return ParseTextAttribute(text);
  };
  options.parse_type = [](std::string_view text) {
    return ParseTextType(text);
  };
#endif
  return ReadBytecodeModule(bytes, "plain.mlirbc", options);
}

// The first op of @main.
const ir::Operation& FirstOp(const ir::Module& module) {
  return *ir::func::Body(*module.LookupFunction("main")).operations()[0];
}

std::string ReadError(const std::string& bytes) {
  StatusOr<std::unique_ptr<ir::Module>> module = Read(bytes);
  EXPECT_FALSE(module.ok());
  if (module.ok()) return "";
  EXPECT_EQ(module.status().code(), StatusCode::kInvalidArgument);
  return std::string(module.status().message());
}

// A custom_call @t(%arg0) whose discardable attributes are `attrs`.
std::string CustomCallWith(
    Plain& p, const std::vector<std::pair<std::string, uint64_t>>& attrs) {
  uint64_t op = p.w.OpName(kStablehlo, "custom_call");
  uint64_t target = p.w.BuiltinString("t");
  // ?api_version, ?backend_config, call_target_name, ?called_computations,
  // ?has_side_effect, ?operand_layouts, ?output_operand_aliases,
  // ?result_layouts.
  std::string blob = WithFlag(0, false) + WithFlag(0, false) + VarInt(target);
  for (int i = 0; i < 5; ++i) blob += WithFlag(0, false);
  uint64_t props = p.w.Properties(blob);
  uint64_t dict = p.Dictionary(attrs);
  return Op(op, 0x45, p.loc,
            VarInt(dict) + VarInt(props) + VarInt(1) + VarInt(0));
}

std::string Ints(const std::vector<int64_t>& values) {
  std::string out = VarInt(values.size());
  for (int64_t v : values) out += SignedVarInt(v);
  return out;
}

#ifdef KILN_HAVE_PARSE_TEXT

TEST(BytecodeStablehloTest, DecodesEveryAttributeKindAsTheTextParserDoes) {
  Plain p(6);
  auto attr = [&](uint64_t dialect, uint64_t code, const std::string& rest) {
    return p.w.Attr(dialect, VarInt(code) + rest);
  };
  uint64_t bf16 = p.w.Type(kBuiltin, VarInt(3));
  uint64_t mode = attr(kStablehlo, 16, VarInt(2));
  // The encodings of StablehloBytecode.cpp, and the text of each value.
  struct Case {
    uint64_t attr;
    const char* text;
  };
  std::vector<Case> cases = {
      {attr(kStablehlo, 1, SignedVarInt(5) + SignedVarInt(2)),
       "#stablehlo.channel_handle<handle = 5, type = 2>"},
      {attr(kStablehlo, 2, VarInt(5)), "#stablehlo<comparison_direction LT>"},
      {attr(kStablehlo, 3, VarInt(2)),
       "#stablehlo<comparison_type TOTALORDER>"},
      {attr(kStablehlo, 4,
            SignedVarInt(0) + SignedVarInt(3) + Ints({1, 2}) + SignedVarInt(2) +
                SignedVarInt(3) + Ints({0, 1}) + SignedVarInt(0) +
                SignedVarInt(3) + Ints({1, 2})),
       "#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>"},
      {attr(kStablehlo, 5, Ints({0}) + Ints({0}) + Ints({2}) + Ints({1})),
       "#stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions "
       "= [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = "
       "[1]>"},
      {attr(kStablehlo, 6, VarInt(2)), "#stablehlo<fft_type RFFT>"},
      {attr(kStablehlo, 7,
            Ints({2}) + Ints({1}) + Ints({0}) + Ints({0}) + Ints({1}) +
                SignedVarInt(2)),
       "#stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [1], "
       "operand_batching_dims = [0], start_indices_batching_dims = [0], "
       "start_index_map = [1], index_vector_dim = 2>"},
      // Writers from before batching dimensions stored three lists.
      {attr(kStablehlo, 7, Ints({1}) + Ints({0}) + Ints({0}) + SignedVarInt(1)),
       "#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], "
       "start_index_map = [0], index_vector_dim = 1>"},
      {attr(kStablehlo, 8, VarInt(2)), "#stablehlo<precision HIGHEST>"},
      {attr(kStablehlo, 9, VarInt(2)), "#stablehlo<rng_algorithm PHILOX>"},
      {attr(kStablehlo, 10, VarInt(2)), "#stablehlo<rng_distribution NORMAL>"},
      {attr(kStablehlo, 11,
            Ints({1}) + Ints({0}) + Ints({}) + Ints({}) + Ints({0}) +
                SignedVarInt(1)),
       "#stablehlo.scatter<update_window_dims = [1], inserted_window_dims = "
       "[0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>"},
      {attr(kStablehlo, 12, VarInt(3)), "#stablehlo<transpose ADJOINT>"},
      {attr(kStablehlo, 13, Ints({ir::kDynamic, 4})),
       "#stablehlo.bounds<?, 4>"},
      {attr(kStablehlo, 14, Ints({1}) + SignedVarInt(0) + Ints({})),
       "#stablehlo.output_operand_alias<output_tuple_indices = [1], "
       "operand_index = 0, operand_tuple_indices = []>"},
      {attr(kStablehlo, 15,
            VarInt(bf16) + VarInt(bf16) + VarInt(p.f32) + SignedVarInt(1) +
                SignedVarInt(1) + SignedVarInt(3) + std::string(1, '\1')),
       "#stablehlo.dot_algorithm<lhs_precision_type = bf16, "
       "rhs_precision_type = bf16, accumulation_type = f32, "
       "lhs_component_count = 1, rhs_component_count = 1, "
       "num_primitive_operations = 3, allow_imprecise_accumulation = true>"},
      // f64 fields are their bits as a zigzag varint: 0.5 and 0.
      {attr(kStablehlo, 17,
            SignedVarInt(0x3FE0000000000000) + SignedVarInt(0) +
                SignedVarInt(2) + VarInt(mode)),
       "#stablehlo.result_accuracy<atol = 5.000000e-01, rtol = 0.000000e+00, "
       "ulps = 2, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>"},
      {attr(kChlo, 0, VarInt(3)), "#chlo<comparison_direction GT>"},
      {attr(kChlo, 1, VarInt(3)), "#chlo<comparison_type SIGNED>"},
  };
  std::vector<std::pair<std::string, uint64_t>> attrs;
  for (size_t i = 0; i < cases.size(); ++i) {
    attrs.emplace_back(StrCat("a", i), cases[i].attr);
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ir::Module> module,
                       Read(p.Build(CustomCallWith(p, attrs), 1)));
  const ir::Operation& op = FirstOp(*module);
  EXPECT_EQ(op.name(), "stablehlo.custom_call");
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].text);
    ASSERT_OK_AND_ASSIGN(ir::Attribute expected,
                         ParseTextAttribute(cases[i].text));
    EXPECT_EQ(op.GetAttr(StrCat("a", i)), expected)
        << op.GetAttr(StrCat("a", i)).ToString();
  }
}

TEST(BytecodeStablehloTest, DecodesTokensBoundsAndQuantizedTypes) {
  Plain p(6);
  uint64_t i8 = p.w.Type(kBuiltin, VarInt(kIntegerType) + VarInt(8 << 2));
  uint64_t bounds =
      p.w.Attr(kStablehlo, VarInt(13) + Ints({4}));  // #stablehlo.bounds<4>
  struct Case {
    uint64_t type;
    const char* text;
  };
  uint64_t uniform =
      p.w.Type(kQuant, VarInt(4) + VarInt(1) + VarInt(i8) + VarInt(p.f32) +
                           SignedVarInt(0x3FE0000000000000) + SignedVarInt(3) +
                           SignedVarInt(-128) + SignedVarInt(127));
  uint64_t per_axis =
      p.w.Type(kQuant, VarInt(5) + VarInt(1) + VarInt(i8) + VarInt(p.f32) +
                           VarInt(0) + SignedVarInt(-127) + SignedVarInt(127) +
                           VarInt(2) + SignedVarInt(0x3FE0000000000000) +
                           SignedVarInt(0x3FF0000000000000) + Ints({1, 2}));
  std::vector<Case> cases = {
      {p.w.Type(kStablehlo, VarInt(0)), "!stablehlo.token"},
      {p.w.Type(kStablehlo, VarInt(1) + VarInt(1) + VarInt(p.tensor_f32)),
       "!stablehlo.future<tensor<f32>>"},
      {p.w.Type(kBuiltin, VarInt(kRankedTensorWithEncodingType) +
                              VarInt(bounds) + Ints({ir::kDynamic}) +
                              VarInt(p.f32)),
       "tensor<?xf32, #stablehlo.bounds<4>>"},
      {p.w.Type(kBuiltin,
                VarInt(kRankedTensorType) + Ints({4}) + VarInt(uniform)),
       "tensor<4x!quant.uniform<i8:f32, 5.000000e-01:3>>"},
      {p.w.Type(kBuiltin,
                VarInt(kRankedTensorType) + Ints({2}) + VarInt(per_axis)),
       "tensor<2x!quant.uniform<i8<-127:127>:f32:0, {5.000000e-01:1, "
       "1.000000e+00:2}>>"},
  };
  std::vector<std::pair<std::string, uint64_t>> attrs;
  for (size_t i = 0; i < cases.size(); ++i) {
    attrs.emplace_back(
        StrCat("t", i),
        p.w.Attr(kBuiltin, VarInt(kTypeAttr) + VarInt(cases[i].type)));
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ir::Module> module,
                       Read(p.Build(CustomCallWith(p, attrs), 1)));
  const ir::Operation& op = FirstOp(*module);
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].text);
    ASSERT_OK_AND_ASSIGN(ir::Type expected, ParseTextType(cases[i].text));
    ir::Attribute decoded = op.GetAttr(StrCat("t", i));
    ASSERT_TRUE(decoded.is(ir::AttrKind::kType)) << decoded.ToString();
    EXPECT_EQ(decoded.type(), expected) << decoded.type().ToString();
  }
}

#else

TEST(BytecodeStablehloTest, NeedsTheTextParser) {
  GTEST_SKIP() << "the expected values come from the text parser "
                  "(parse/text), which this build lacks";
}

#endif  // KILN_HAVE_PARSE_TEXT

// stablehlo.compare %arg0, %arg0 with `blob` as its properties.
std::string CompareWithProperties(Plain& p, const std::string& blob,
                                  uint64_t& result_type) {
  uint64_t i1 = p.w.Type(kBuiltin, VarInt(kIntegerType) + VarInt(1 << 2));
  result_type =
      p.w.Type(kBuiltin, VarInt(kRankedTensorType) + VarInt(0) + VarInt(i1));
  uint64_t op = p.w.OpName(kStablehlo, "compare");
  return Op(op, 0x46, p.loc,
            VarInt(p.w.Properties(blob)) + VarInt(1) + VarInt(result_type) +
                VarInt(2) + VarInt(0) + VarInt(0));
}

TEST(BytecodeStablehloTest, ReadsRequiredAndOptionalProperties) {
  for (bool with_type : {false, true}) {
    SCOPED_TRACE(with_type ? "compare_type present" : "compare_type absent");
    Plain p(6);
    uint64_t direction = p.w.Attr(kStablehlo, VarInt(2) + VarInt(4));  // LE
    uint64_t type = p.w.Attr(kStablehlo, VarInt(3) + VarInt(1));       // FLOAT
    // ?compare_type, comparison_direction.
    uint64_t result_type;
    std::string op = CompareWithProperties(
        p, WithFlag(with_type ? type : 0, with_type) + VarInt(direction),
        result_type);
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<ir::Module> module,
                         Read(p.Build(op, 1, 1)));
    const ir::Operation& compare = FirstOp(*module);
    EXPECT_EQ(compare.GetAttr("comparison_direction"),
              ir::Attribute::Enum(ir::EnumKind::kComparisonDirection, ir::kLE));
    EXPECT_EQ(compare.HasAttr("compare_type"), with_type);
    EXPECT_TRUE(compare.attributes().empty());  // all inherent
  }
}

TEST(BytecodeStablehloTest, ReadsPropertiesFromTheAttributeDictionary) {
  // Before version 5 inherent attributes sit with the discardable ones.
  Plain p(4);
  uint64_t direction = p.w.Attr(kStablehlo, VarInt(2) + VarInt(0));  // EQ
  uint64_t note = p.w.BuiltinString("kept");
  uint64_t dict =
      p.Dictionary({{"comparison_direction", direction}, {"note", note}});
  uint64_t i1 = p.w.Type(kBuiltin, VarInt(kIntegerType) + VarInt(1 << 2));
  uint64_t result_type =
      p.w.Type(kBuiltin, VarInt(kRankedTensorType) + VarInt(0) + VarInt(i1));
  uint64_t op = p.w.OpName(kStablehlo, "compare");
  std::string compare = Op(op, 0x07, p.loc,
                           VarInt(dict) + VarInt(1) + VarInt(result_type) +
                               VarInt(2) + VarInt(0) + VarInt(0));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ir::Module> module,
                       Read(p.Build(compare, 1, 1)));
  const ir::Operation& read = FirstOp(*module);
  EXPECT_TRUE(read.properties().Has("comparison_direction"));
  EXPECT_TRUE(read.attributes().Has("note"));
}

// chlo.scan(%arg0) with an empty region and `blob` as its properties.
std::string ScanWithProperties(Plain& p, const std::string& blob) {
  uint64_t op = p.w.OpName(kChlo, "scan");
  std::string region = VarInt(1) + VarInt(0) + WithFlag(0, false);
  return Op(op, 0x56, p.loc,
            VarInt(p.w.Properties(blob)) + VarInt(1) + VarInt(p.tensor_f32) +
                VarInt(1) + VarInt(0) + WithFlag(1, false) + region);
}

TEST(BytecodeStablehloTest, ReadsSegmentSizesInBothEncodings) {
  ir::Attribute one_zero =
      ir::Attribute::DenseIntArray(ir::ElementType::kI32, {1, 0});
  ir::Attribute one_one =
      ir::Attribute::DenseIntArray(ir::ElementType::kI32, {1, 1});
  {
    // Version 6: sparse arrays after the attributes, sparse ([1, 0]: one
    // value, index bits 0) and dense ([1, 1]).
    Plain p(6);
    uint64_t dimension = p.w.Attr(
        kBuiltin,
        VarInt(8) +
            VarInt(p.w.Type(kBuiltin, VarInt(kIntegerType) + VarInt(64 << 2))) +
            SignedVarInt(0));
    // dimension, ?is_associative, ?is_reverse, ?scan_dim_size, then the
    // operand and result segments.
    std::string blob = VarInt(dimension) + WithFlag(0, false) +
                       WithFlag(0, false) + WithFlag(0, false) +
                       WithFlag(1, true) + VarInt(0) + VarInt(1) +
                       WithFlag(2, false) + VarInt(1) + VarInt(1);
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<ir::Module> module,
                         Read(p.Build(ScanWithProperties(p, blob), 1, 1)));
    const ir::Operation& scan = FirstOp(*module);
    EXPECT_EQ(scan.GetAttr("operandSegmentSizes"), one_zero);
    EXPECT_EQ(scan.GetAttr("resultSegmentSizes"), one_one);
  }
  {
    // Version 5: dense i32 array attributes at their place by name.
    Plain p(5);
    uint64_t i64 = p.w.Type(kBuiltin, VarInt(kIntegerType) + VarInt(64 << 2));
    uint64_t i32 = p.w.Type(kBuiltin, VarInt(kIntegerType) + VarInt(32 << 2));
    uint64_t dimension =
        p.w.Attr(kBuiltin, VarInt(8) + VarInt(i64) + SignedVarInt(0));
    auto array = [&](int32_t a, int32_t b) {
      std::string data(8, '\0');
      data[0] = static_cast<char>(a);
      data[4] = static_cast<char>(b);
      return p.w.Attr(kBuiltin,
                      VarInt(17) + VarInt(i32) + VarInt(2) + VarInt(8) + data);
    };
    // dimension, ?is_associative, ?is_reverse, operandSegmentSizes,
    // resultSegmentSizes, ?scan_dim_size.
    std::string blob = VarInt(dimension) + WithFlag(0, false) +
                       WithFlag(0, false) + VarInt(array(1, 0)) +
                       VarInt(array(1, 1)) + WithFlag(0, false);
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<ir::Module> module,
                         Read(p.Build(ScanWithProperties(p, blob), 1, 1)));
    const ir::Operation& scan = FirstOp(*module);
    EXPECT_EQ(scan.GetAttr("operandSegmentSizes"), one_zero);
    EXPECT_EQ(scan.GetAttr("resultSegmentSizes"), one_one);
  }
}

TEST(BytecodeStablehloTest, ReadsThePropertiesOfUnregisteredOps) {
  // Ops the writer did not know keep their properties as one dictionary,
  // which the properties blob refers to.
  Plain p(6);
  uint64_t value = p.w.BuiltinString("v");
  uint64_t dict = p.Dictionary({{"value", value}});
  uint64_t op = p.w.OpName(p.w.Dialect("check"), "expect_eq_const",
                           /*registered=*/false);
  std::string check =
      Op(op, 0x44, p.loc,
         VarInt(p.w.Properties(VarInt(dict))) + VarInt(1) + VarInt(0));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ir::Module> module,
                       Read(p.Build(check, 1)));
  const ir::Operation& read = FirstOp(*module);
  EXPECT_EQ(read.name(), "check.expect_eq_const");
  EXPECT_EQ(read.GetAttr("value"), ir::Attribute::String("v"));
}

TEST(BytecodeStablehloTest, ReadsTheLayoutsOfOtherVersionsOfAnOp) {
  {
    // StableHLO 1.18 added custom_call's result_tilings, last by name.
    Plain p(6);
    uint64_t op = p.w.OpName(kStablehlo, "custom_call");
    uint64_t target = p.w.BuiltinString("t");
    uint64_t tilings = p.w.Attr(kBuiltin, VarInt(kArrayAttr) + VarInt(0));
    std::string blob = WithFlag(0, false) + WithFlag(0, false) + VarInt(target);
    for (int i = 0; i < 5; ++i) blob += WithFlag(0, false);
    blob += WithFlag(tilings, true);
    std::string call = Op(op, 0x44, p.loc,
                          VarInt(p.w.Properties(blob)) + VarInt(1) + VarInt(0));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<ir::Module> module,
                         Read(p.Build(call, 1)));
    const ir::Operation& read = FirstOp(*module);
    EXPECT_EQ(read.GetAttr("call_target_name"), ir::Attribute::String("t"));
    // [] is result_tilings' default, dropped as the text parser drops it.
    EXPECT_FALSE(read.HasAttr("result_tilings"));
    EXPECT_TRUE(read.attributes().empty());
  }
  {
    // Older MLIR stored func.call's callee alone.
    Plain p(6);
    uint64_t op = p.w.OpName(kFunc, "call");
    uint64_t callee =
        p.w.Attr(kBuiltin, VarInt(4) + VarInt(p.w.BuiltinString("main")));
    std::string call = Op(op, 0x46, p.loc,
                          VarInt(p.w.Properties(VarInt(callee))) + VarInt(1) +
                              VarInt(p.tensor_f32) + VarInt(1) + VarInt(0));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<ir::Module> module,
                         Read(p.Build(call, 1, 1)));
    EXPECT_EQ(FirstOp(*module).GetAttr("callee"),
              ir::Attribute::SymbolRef("main"));
  }
}

TEST(BytecodeStablehloTest, RejectsMalformedEncodingsWithTheirReason) {
  struct Case {
    const char* what;
    uint64_t dialect;
    std::string encoding;
    const char* message;
  };
  std::vector<Case> cases = {
      {"unknown code", kStablehlo, VarInt(99),
       "unknown stablehlo attribute code 99"},
      {"enum out of range", kStablehlo, VarInt(2) + VarInt(9),
       "invalid comparison_direction value 9"},
      {"bool not 0 or 1", kStablehlo,
       VarInt(20) + VarInt(0) + std::string(1, '\7'), "invalid boolean byte 7"},
      {"truncated conv", kStablehlo, VarInt(4) + SignedVarInt(0), "offset"},
      {"gather that fits no layout", kStablehlo,
       VarInt(7) + Ints({1}) + Ints({0}), "gather"},
      {"trailing bytes", kStablehlo, VarInt(8) + VarInt(0) + VarInt(0),
       "unexpected bytes after the attribute"},
      {"unknown chlo code", kChlo, VarInt(5), "unknown chlo attribute code 5"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Plain p(6);
    uint64_t bad = p.w.Attr(c.dialect, c.encoding);
    std::string message =
        ReadError(p.Build(CustomCallWith(p, {{"x", bad}}), 1));
    EXPECT_NE(message.find(c.message), std::string::npos) << message;
  }
  {
    SCOPED_TRACE("quant type Kiln does not read");
    Plain p(6);
    uint64_t calibrated = p.w.Type(kQuant, VarInt(3) + VarInt(p.f32));
    uint64_t bad = p.w.Attr(kBuiltin, VarInt(kTypeAttr) + VarInt(calibrated));
    std::string message =
        ReadError(p.Build(CustomCallWith(p, {{"x", bad}}), 1));
    EXPECT_NE(message.find("quant type code 3 is not supported"),
              std::string::npos)
        << message;
  }
  {
    SCOPED_TRACE("attribute of a dialect without a decoder");
    Plain p(6);
    uint64_t bad = p.w.Attr(p.w.Dialect("mystery"), VarInt(0));
    std::string message =
        ReadError(p.Build(CustomCallWith(p, {{"x", bad}}), 1));
    EXPECT_NE(message.find("attributes of dialect 'mystery'"),
              std::string::npos)
        << message;
  }
}

TEST(BytecodeStablehloTest, RejectsMalformedProperties) {
  {
    SCOPED_TRACE("trailing bytes");
    Plain p(6);
    uint64_t direction = p.w.Attr(kStablehlo, VarInt(2) + VarInt(0));
    uint64_t result_type;
    std::string op = CompareWithProperties(
        p, WithFlag(0, false) + VarInt(direction) + VarInt(0), result_type);
    std::string message = ReadError(p.Build(op, 1, 1));
    EXPECT_NE(message.find("unexpected bytes after the properties"),
              std::string::npos)
        << message;
  }
  {
    SCOPED_TRACE("fits none of an op's layouts");
    Plain p(6);
    uint64_t op = p.w.OpName(kFunc, "call");
    std::string call =
        Op(op, 0x44, p.loc,
           VarInt(p.w.Properties(WithFlag(0, false))) + VarInt(1) + VarInt(0));
    std::string message = ReadError(p.Build(call, 1));
    EXPECT_NE(message.find("other layout(s) of 'func.call'"), std::string::npos)
        << message;
  }
  {
    SCOPED_TRACE("sparse segment index past the segments");
    Plain p(6);
    uint64_t dimension = p.w.Attr(
        kBuiltin,
        VarInt(8) +
            VarInt(p.w.Type(kBuiltin, VarInt(kIntegerType) + VarInt(64 << 2))) +
            SignedVarInt(0));
    std::string blob = VarInt(dimension) + WithFlag(0, false) +
                       WithFlag(0, false) + WithFlag(0, false) +
                       WithFlag(1, true) + VarInt(3) + VarInt((1 << 3) | 5);
    std::string message = ReadError(p.Build(ScanWithProperties(p, blob), 1, 1));
    EXPECT_NE(message.find("sparse array index 5 for 2 segments"),
              std::string::npos)
        << message;
  }
  {
    SCOPED_TRACE("registered op Kiln has no ODS entry for");
    Plain p(6);
    uint64_t op = p.w.OpName(kStablehlo, "future_op");
    std::string future =
        Op(op, 0x44, p.loc,
           VarInt(p.w.Properties(WithFlag(0, false))) + VarInt(1) + VarInt(0));
    std::string message = ReadError(p.Build(future, 1));
    EXPECT_NE(message.find("'stablehlo.future_op' stores properties in an "
                           "encoding Kiln does not know"),
              std::string::npos)
        << message;
  }
}

}  // namespace
}  // namespace kiln::parse::bytecode
