// The text parser on hand-written programs: op forms, SSA names, types,
// attributes, dense data layouts, locations, aliases and resources.
#include <gtest/gtest.h>

#include <cstring>

#include "ir/float_bits.h"
#include "parse/text/parser.h"
#include "support/test_support.h"

namespace kiln {
namespace {

std::unique_ptr<ir::Module> Parse(std::string_view text) {
  StatusOr<std::unique_ptr<ir::Module>> module =
      parse::ParseTextModule(text, "test.mlir");
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(*module) : nullptr;
}

// The ops of the first function's body.
std::vector<ir::Operation*> BodyOps(const ir::Module& module) {
  std::vector<ir::Operation*> ops;
  for (const auto& op :
       ir::func::Body(*module.Functions().at(0)).operations()) {
    ops.push_back(op.get());
  }
  return ops;
}

template <typename T>
std::string Bytes(std::initializer_list<T> values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), values.begin(), out.size());
  return out;
}

ir::Attribute Attr(std::string_view text) {
  StatusOr<ir::Attribute> attr = parse::ParseTextAttribute(text);
  EXPECT_TRUE(attr.ok()) << attr.status().ToString();
  return attr.ok() ? *attr : ir::Attribute();
}

TEST(TextParser, PrettyAndGenericFormsGiveTheSameIr) {
  auto pretty = Parse(R"(
    func.func @f(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
      %0 = stablehlo.add %a, %b : tensor<2xf32>
      %1 = stablehlo.compare LT, %0, %b, FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
      %2 = stablehlo.select %1, %0, %b : tensor<2xi1>, tensor<2xf32>
      return %2 : tensor<2xf32>
    })");
  auto generic = Parse(R"(
    "func.func"() <{function_type = (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>,
                    sym_name = "f"}> ({
    ^bb0(%x: tensor<2xf32>, %y: tensor<2xf32>):
      %0 = "stablehlo.add"(%x, %y) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      %1 = "stablehlo.compare"(%0, %y) {comparison_direction = #stablehlo<comparison_direction LT>,
          compare_type = #stablehlo<comparison_type FLOAT>}
          : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
      %2 = "stablehlo.select"(%1, %0, %y) : (tensor<2xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      "func.return"(%2) : (tensor<2xf32>) -> ()
    }) : () -> ())");
  ASSERT_TRUE(pretty && generic);
  std::string why;
  EXPECT_TRUE(ir::StructurallyEqual(*pretty, *generic,
                                    /*compare_locations=*/false, &why))
      << why;
  ir::Operation* compare = BodyOps(*pretty)[1];
  EXPECT_TRUE(compare->properties().Has("comparison_direction"));
  EXPECT_EQ(compare->GetAttr("compare_type").enum_value(), ir::kFloatCompare);
}

TEST(TextParser, InherentAttributesInEitherDictionaryBecomeProperties) {
  auto module = Parse(R"(
    func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "stablehlo.reverse"(%a) <{dimensions = array<i64: 0>}> {note = "x"} : (tensor<4xf32>) -> tensor<4xf32>
      %1 = "stablehlo.reverse"(%0) {dimensions = array<i64: 0>, note = "y"} : (tensor<4xf32>) -> tensor<4xf32>
      return %1 : tensor<4xf32>
    })");
  ASSERT_TRUE(module);
  for (ir::Operation* op : {BodyOps(*module)[0], BodyOps(*module)[1]}) {
    EXPECT_TRUE(op->properties().Has("dimensions"));
    EXPECT_FALSE(op->attributes().Has("dimensions"));
    EXPECT_TRUE(op->attributes().Has("note"));
  }
}

TEST(TextParser, ResolvesResultGroupsAndNumberedUses) {
  auto module = Parse(R"(
    func.func @f(%a: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
      %0:2, %1 = "test.three"(%a) : (tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<f32>)
      return %0#1, %1 : tensor<f32>, tensor<f32>
    })");
  ASSERT_TRUE(module);
  auto ops = BodyOps(*module);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0]->code(), ir::OpCode::kUnknown);
  EXPECT_EQ(ops[1]->operand(0), ops[0]->result(1));
  EXPECT_EQ(ops[1]->operand(1), ops[0]->result(2));
}

TEST(TextParser, KeepsOtherDialectsOpsAndAttributesGeneric) {
  auto module = Parse(R"(
    func.func @f(%a: tensor<8xf32>) -> tensor<8xf32> {
      %0 = "sdy.sharding_constraint"(%a) <{sharding = #sdy.sharding<@mesh, [{"x"}]>}>
          {mhlo.frontend_attributes = {a = "b"}} : (tensor<8xf32>) -> tensor<8xf32>
      return %0 : tensor<8xf32>
    })");
  ASSERT_TRUE(module);
  ir::Operation* op = BodyOps(*module)[0];
  EXPECT_EQ(op->code(), ir::OpCode::kUnknown);
  EXPECT_EQ(op->name(), "sdy.sharding_constraint");
  ir::Attribute sharding = op->GetAttr("sharding");
  ASSERT_TRUE(sharding.is(ir::AttrKind::kOpaque));
  EXPECT_EQ(sharding.opaque_text(), "sdy.sharding<@mesh, [{\"x\"}]>");
}

TEST(TextParser, StoresDenseFloatsIntsAndBoolsInStorageLayout) {
  ir::Attribute floats =
      Attr("dense<[[1.0, -2.5], [0.0, 3.0]]> : tensor<2x2xf32>");
  EXPECT_EQ(floats.dense_data(), Bytes<float>({1.0f, -2.5f, 0.0f, 3.0f}));
  EXPECT_FALSE(floats.dense_is_splat());

  ir::Attribute ints = Attr("dense<[-1, 255, 0]> : tensor<3xi16>");
  EXPECT_EQ(ints.dense_data(), Bytes<int16_t>({-1, 255, 0}));

  ir::Attribute bools = Attr("dense<[true, false, true]> : tensor<3xi1>");
  EXPECT_EQ(bools.dense_data(), std::string("\x01\x00\x01", 3));

  // Sub-byte integers take one byte each, holding the low bits.
  ir::Attribute nibbles = Attr("dense<[-1, 7, -8]> : tensor<3xi4>");
  EXPECT_EQ(nibbles.dense_data(), std::string("\x0F\x07\x08", 3));
}

TEST(TextParser, ReadsDenseSplatsHexDataAndEmptyTensors) {
  ir::Attribute splat = Attr("dense<2.0> : tensor<3x4xf64>");
  EXPECT_TRUE(splat.dense_is_splat());
  EXPECT_EQ(splat.dense_data(), Bytes<double>({2.0}));
  EXPECT_EQ(splat.DenseDataExpanded().size(), 12u * 8);

  // Raw little-endian bytes; the size of one element means a splat.
  ir::Attribute hex = Attr("dense<\"0x0000803F00000040\"> : tensor<2xf32>");
  EXPECT_EQ(hex.dense_data(), Bytes<float>({1.0f, 2.0f}));
  EXPECT_FALSE(hex.dense_is_splat());
  ir::Attribute hex_splat = Attr("dense<\"0x0000803F\"> : tensor<5xf32>");
  EXPECT_TRUE(hex_splat.dense_is_splat());

  ir::Attribute empty = Attr("dense<> : tensor<0x3xf32>");
  EXPECT_TRUE(empty.dense_data().empty());
  EXPECT_TRUE(Attr("dense<[]> : tensor<0xi32>").dense_data().empty());
}

TEST(TextParser, ReadsComplexAndHexFloatBitPatterns) {
  ir::Attribute complex =
      Attr("dense<[(1.0, -2.0), (0x7FC00000, 3.5)]> : tensor<2xcomplex<f32>>");
  std::string expected = Bytes<float>({1.0f, -2.0f});
  uint32_t nan = 0x7FC00000;
  expected.append(reinterpret_cast<const char*>(&nan), 4);
  expected += Bytes<float>({3.5f});
  EXPECT_EQ(complex.dense_data(), expected);

  // A negative NaN keeps its sign bit.
  ir::Attribute negative_nan = Attr("dense<0xFFC00000> : tensor<f32>");
  EXPECT_EQ(negative_nan.dense_data(), std::string("\x00\x00\xC0\xFF", 4));

  // Narrow floats: 1.0 is 0x38 in f8E4M3FN, 0x7F is its NaN.
  ir::Attribute f8 = Attr("dense<[1.0, 0x7F, -0.5]> : tensor<3xf8E4M3FN>");
  EXPECT_EQ(f8.dense_data(),
            std::string({static_cast<char>(
                             ir::EncodeFloat(ir::ElementType::kF8E4M3FN, 1.0)),
                         0x7F,
                         static_cast<char>(ir::EncodeFloat(
                             ir::ElementType::kF8E4M3FN, -0.5))}));
}

TEST(TextParser, ReadsScalarAttributesWithTheirTypes) {
  EXPECT_EQ(Attr("7 : i32"), ir::Attribute::Integer(
                                 7, ir::Type::Element(ir::ElementType::kI32)));
  EXPECT_EQ(Attr("7"), ir::Attribute::Integer(
                           7, ir::Type::Element(ir::ElementType::kI64)));
  // Signless integers read like MLIR: 255 : i8 is -1.
  EXPECT_EQ(Attr("255 : i8").int_value(), -1);
  EXPECT_EQ(Attr("255 : ui8").int_value(), 255);
  EXPECT_EQ(Attr("18446744073709551615 : ui64").int_value(), -1);
  EXPECT_EQ(Attr("1 : i1"), ir::Attribute::Bool(true));
  EXPECT_EQ(Attr("0x7FC00000 : f32").type(),
            ir::Type::Element(ir::ElementType::kF32));
  EXPECT_EQ(Attr("1.5 : bf16").float_value(), 1.5);
  EXPECT_EQ(Attr("0.1 : f32").float_value(), static_cast<double>(0.1f));
  EXPECT_EQ(Attr("\"a\\22b\\n\"").string_value(), "a\"b\n");
  EXPECT_EQ(Attr("@a::@b"), ir::Attribute::SymbolRef("a", {"b"}));
  EXPECT_EQ(Attr("array<i64: 1, -2>"), ir::Attribute::DenseI64Array({1, -2}));
  EXPECT_EQ(Attr("array<i1: true, false>"),
            ir::Attribute::DenseBoolArray({true, false}));
  EXPECT_EQ(Attr("{b, a = unit}").dictionary().size(), 2u);
  EXPECT_TRUE(Attr("tensor<2xf32>").is(ir::AttrKind::kType));
}

TEST(TextParser, NormalizesTheSpellingOfOtherDialectsAttributes) {
  // Line breaks, indentation and comments do not change the value.
  ir::Attribute multiline =
      Attr("#sdy.sharding<\n  @mesh, // the mesh\n  [{\"x\", \"y z\"}, {}]\n>");
  ir::Attribute one_line = Attr("#sdy.sharding<@mesh, [{\"x\", \"y z\"}, {}]>");
  EXPECT_EQ(multiline, one_line);
  EXPECT_EQ(one_line.opaque_text(),
            "sdy.sharding<@mesh, [{\"x\", \"y z\"}, {}]>");
  StatusOr<ir::Type> type = parse::ParseTextType("!foo.map<(d0, d1) ->  (d1)>");
  ASSERT_TRUE(type.ok()) << type.status().ToString();
  EXPECT_EQ(type->opaque_text(), "foo.map<(d0, d1) -> (d1)>");
}

TEST(TextParser, ParsesQuantizedTypes) {
  StatusOr<ir::Type> per_tensor =
      parse::ParseTextType("!quant.uniform<i8:f32, 0.5:-128>");
  ASSERT_TRUE(per_tensor.ok()) << per_tensor.status().ToString();
  const ir::QuantizedType& q = per_tensor->quantized();
  EXPECT_EQ(q.storage_type, ir::ElementType::kI8);
  EXPECT_EQ(q.expressed_type, ir::ElementType::kF32);
  EXPECT_EQ(q.storage_min, -128);
  EXPECT_EQ(q.storage_max, 127);
  EXPECT_EQ(q.scales, std::vector<double>({0.5}));
  EXPECT_EQ(q.zero_points, std::vector<int64_t>({-128}));
  EXPECT_FALSE(q.axis.has_value());

  StatusOr<ir::Type> per_axis =
      parse::ParseTextType("!quant.uniform<u8<1:255>:f16:1, {0.1:3, 2.0}>");
  ASSERT_TRUE(per_axis.ok()) << per_axis.status().ToString();
  const ir::QuantizedType& p = per_axis->quantized();
  EXPECT_EQ(p.storage_type, ir::ElementType::kUI8);
  EXPECT_EQ(p.storage_min, 1);
  EXPECT_EQ(p.storage_max, 255);
  EXPECT_EQ(p.axis, 1);
  EXPECT_EQ(p.zero_points, std::vector<int64_t>({3, 0}));

  EXPECT_FALSE(
      parse::ParseTextType("!quant.uniform<i8<-200:0>:f32, 1.0>").ok());
}

TEST(TextParser, ParsesBoundedDynamicTensorsInBothSpellings) {
  for (const char* text :
       {"tensor<?x2xf32, #stablehlo.bounds<5, ?>>",
        "tensor<?x2xf32, #stablehlo.type_extensions<bounds = [5, ?]>>"}) {
    StatusOr<ir::Type> type = parse::ParseTextType(text);
    ASSERT_TRUE(type.ok()) << type.status().ToString();
    EXPECT_EQ(type->shape(), std::vector<int64_t>({ir::kDynamic, 2}));
    EXPECT_EQ(type->bounds(), std::vector<int64_t>({5, ir::kDynamic}));
  }
}

// `pad = []` (found by the text fuzzer: an empty list reached memcpy with
// a null source) is no padding, as if `pad` were absent.
TEST(TextParser, ParsesAnEmptyConvolutionPadding) {
  auto module = Parse(R"(
    func.func @f(%x: tensor<2x3xf32>, %k: tensor<3x4xf32>) -> tensor<2x4xf32> {
      %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, f]x[i, o]->[b, f],
          window = {pad = []}
          {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
          : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
      return %0 : tensor<2x4xf32>
    })");
  ASSERT_TRUE(module);
  EXPECT_FALSE(BodyOps(*module)[0]->HasAttr("padding"));
}

TEST(TextParser, ParsesConvolutionWindowAttribute) {
  auto module = Parse(R"(
    func.func @f(%x: tensor<1x8x8x3xf32>, %k: tensor<3x3x3x4xf32>) -> tensor<1x4x4x4xf32> {
      %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
          window = {stride = [2, 2], pad = [[1, 0], [0, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 2], reverse = [false, true]}
          {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
          : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x4x4x4xf32>
      return %0 : tensor<1x4x4x4xf32>
    })");
  ASSERT_TRUE(module);
  ir::Operation* conv = BodyOps(*module)[0];
  EXPECT_EQ(conv->GetAttr("window_strides"),
            ir::Attribute::DenseI64Array({2, 2}));
  EXPECT_EQ(conv->GetAttr("rhs_dilation"),
            ir::Attribute::DenseI64Array({1, 2}));
  EXPECT_EQ(conv->GetAttr("window_reversal"),
            ir::Attribute::DenseBoolArray({false, true}));
  ir::Attribute padding = conv->GetAttr("padding");
  EXPECT_EQ(padding.type(), ir::TensorOf({2, 2}, ir::ElementType::kI64));
  EXPECT_EQ(padding.AsIntVector(), std::vector<int64_t>({1, 0, 0, 1}));
  const ir::ConvDimensionNumbers& d = conv->GetAttr("dimension_numbers").conv();
  EXPECT_EQ(d.input_batch_dimension, 0);
  EXPECT_EQ(d.input_feature_dimension, 3);
  EXPECT_EQ(d.input_spatial_dimensions, std::vector<int64_t>({1, 2}));
  EXPECT_EQ(d.kernel_input_feature_dimension, 2);
  EXPECT_EQ(d.kernel_output_feature_dimension, 3);
  EXPECT_EQ(d.output_spatial_dimensions, std::vector<int64_t>({1, 2}));
}

TEST(TextParser, ParsesDotGeneralDimensionsPrecisionAndAlgorithm) {
  auto module = Parse(R"(
    func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
      %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1],
          precision = [DEFAULT, HIGHEST],
          algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32,
                       lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 3,
                       allow_imprecise_accumulation = false>
          : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
      return %0 : tensor<2x3x5xf32>
    })");
  ASSERT_TRUE(module);
  ir::Operation* dot = BodyOps(*module)[0];
  const ir::DotDimensionNumbers& d =
      dot->GetAttr("dot_dimension_numbers").dot();
  EXPECT_EQ(d.lhs_batching_dimensions, std::vector<int64_t>({0}));
  EXPECT_EQ(d.rhs_contracting_dimensions, std::vector<int64_t>({1}));
  ir::Attribute precision = dot->GetAttr("precision_config");
  ASSERT_EQ(precision.array().size(), 2u);
  EXPECT_EQ(precision.array()[1],
            ir::Attribute::Enum(ir::EnumKind::kPrecision, 2));
  const ir::DotAlgorithm& algorithm = dot->GetAttr("algorithm").dot_algorithm();
  EXPECT_EQ(algorithm.lhs_precision_type,
            ir::Type::Element(ir::ElementType::kTF32));
  EXPECT_EQ(algorithm.num_primitive_operations, 3);
}

TEST(TextParser, ParsesStableHloStructAttributes) {
  ir::Attribute gather = Attr(
      "#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], "
      "start_index_map = [0], "
      "index_vector_dim = 1>");
  EXPECT_EQ(gather.gather().offset_dims, std::vector<int64_t>({1}));
  EXPECT_EQ(gather.gather().index_vector_dim, 1);
  ir::Attribute channel =
      Attr("#stablehlo.channel_handle<handle = 5, type = 2>");
  EXPECT_EQ(channel.channel_handle().handle, 5);
  ir::Attribute alias = Attr(
      "#stablehlo.output_operand_alias<output_tuple_indices = [0], "
      "operand_index = 1, "
      "operand_tuple_indices = []>");
  EXPECT_EQ(alias.output_operand_alias().operand_index, 1);
  ir::Attribute accuracy = Attr(
      "#stablehlo.result_accuracy<atol = 1.0e-5, ulps = 2, mode = "
      "#stablehlo.result_accuracy_mode<TOLERANCE>>");
  EXPECT_EQ(accuracy.result_accuracy().atol, 1.0e-5);
  EXPECT_EQ(accuracy.result_accuracy().rtol, 0.0);
  EXPECT_EQ(accuracy.result_accuracy().mode, 2);
  ir::Attribute conv = Attr(
      "#stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension "
      "= 1, "
      "input_spatial_dimensions = [2], kernel_input_feature_dimension = 1, "
      "kernel_output_feature_dimension = 0, kernel_spatial_dimensions = [2], "
      "output_batch_dimension = 0, output_feature_dimension = 1, "
      "output_spatial_dimensions = [2]>");
  EXPECT_EQ(conv, Attr("#stablehlo.conv<[b, f, 0]x[o, i, 0]->[b, f, 0]>"));
  EXPECT_FALSE(
      parse::ParseTextAttribute("#stablehlo.conv<[b, 0]x[i, o, 0]->[b, f, 0]>")
          .ok());
  // Dimension numbers no layout can show print (and read back) raw.
  ir::Attribute odd = Attr(
      "#stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension "
      "= 0, input_spatial_dimensions = [7], kernel_input_feature_dimension = "
      "1, kernel_output_feature_dimension = 0, kernel_spatial_dimensions = [], "
      "output_batch_dimension = 0, output_feature_dimension = 1, "
      "output_spatial_dimensions = [2]>");
  EXPECT_EQ(odd.ToString().substr(0, 20), "#stablehlo.conv<raw ");
  EXPECT_EQ(Attr(odd.ToString()), odd);
}

TEST(TextParser, ResolvesLocationAliasesDefinedAfterTheModule) {
  auto module = Parse(R"(#loc1 = loc("model.py":3:7)
    module @m {
      func.func public @main(%arg0: tensor<f32> loc("x")) -> tensor<f32> {
        %0 = stablehlo.negate %arg0 : tensor<f32> loc(#loc3)
        return %0 : tensor<f32> loc(#loc1)
      } loc(#loc1)
    } loc(#loc)
    #loc = loc(unknown)
    #loc2 = loc("jit(f)/neg"(#loc1))
    #loc3 = loc(callsite(#loc2 at fused<"meta">["a.py":1:2 to :9, "b.py":4:5 to 6:7]))
  )");
  ASSERT_TRUE(module);
  EXPECT_TRUE(module->op().loc().IsUnknown());
  ir::Operation* main = module->Functions()[0];
  EXPECT_EQ(main->loc(), ir::Location::FileLineCol("model.py", 3, 7));
  EXPECT_EQ(ir::func::Body(*main).argument(0)->loc(), ir::Location::Name("x"));
  ir::Location neg = BodyOps(*module)[0]->loc();
  ASSERT_EQ(neg.kind(), ir::LocationKind::kCallSite);
  EXPECT_EQ(neg.callee(),
            ir::Location::Name("jit(f)/neg",
                               ir::Location::FileLineCol("model.py", 3, 7)));
  ASSERT_EQ(neg.caller().kind(), ir::LocationKind::kFused);
  EXPECT_EQ(neg.caller().fused()[0],
            ir::Location::FileLineCol("a.py", 1, 2, 1, 9));
  EXPECT_EQ(neg.caller().fused()[1],
            ir::Location::FileLineCol("b.py", 4, 5, 6, 7));
  EXPECT_EQ(neg.caller().fused_metadata(), ir::Attribute::String("meta"));
}

TEST(TextParser, GivesOpsWithoutLocationTheirPlaceInTheFile) {
  auto module = Parse(
      "func.func @f(%a: tensor<f32>) -> tensor<f32> {\n"
      "  %0 = stablehlo.abs %a : tensor<f32>\n"
      "  return %0 : tensor<f32>\n}\n");
  ASSERT_TRUE(module);
  EXPECT_EQ(BodyOps(*module)[0]->loc(),
            ir::Location::FileLineCol("test.mlir", 2, 3));
}

TEST(TextParser, ReadsDenseResourceBlobsFromTheFileMetadata) {
  auto module = Parse(R"(
    func.func @f() -> tensor<2xf32> {
      %0 = stablehlo.constant dense_resource<weights> : tensor<2xf32>
      return %0 : tensor<2xf32>
    }
    {-#
      dialect_resources: {
        builtin: {
          weights: "0x040000000000803F00000040"
        }
      }
    #-}
  )");
  ASSERT_TRUE(module);
  ir::Attribute value = BodyOps(*module)[0]->GetAttr("value");
  ASSERT_TRUE(value.is(ir::AttrKind::kDenseResource));
  ASSERT_TRUE(value.resource()->present);
  EXPECT_EQ(value.resource()->alignment, 4u);
  EXPECT_EQ(value.resource()->data, Bytes<float>({1.0f, 2.0f}));
  EXPECT_EQ(module->resources().at("weights"), value.resource());
}

TEST(TextParser, ExpandsTypeAndAttributeAliases) {
  auto module = Parse(R"(
    !t = tensor<4xf32>
    #dims = array<i64: 0>
    func.func @f(%a: !t) -> !t {
      %0 = "stablehlo.reverse"(%a) {dimensions = #dims} : (!t) -> !t
      return %0 : !t
    })");
  ASSERT_TRUE(module);
  ir::Operation* reverse = BodyOps(*module)[0];
  EXPECT_EQ(reverse->result(0)->type(),
            ir::TensorOf({4}, ir::ElementType::kF32));
  EXPECT_EQ(reverse->GetAttr("dimensions"), ir::Attribute::DenseI64Array({0}));
}

TEST(TextParser, WrapsBareFunctionsInAnImplicitModule) {
  auto module = Parse(R"(
    func.func @a() { return }
    func.func private @b(tensor<f32>) -> tensor<f32>
  )");
  ASSERT_TRUE(module);
  ASSERT_EQ(module->Functions().size(), 2u);
  EXPECT_TRUE(module->Functions()[1]->region(0).empty());  // a declaration
  EXPECT_FALSE(ir::func::IsPublic(*module->Functions()[1]));
}

TEST(TextParser, ParsesWhileWithSharedLoopVariables) {
  auto module = Parse(R"(
    func.func @f(%n: tensor<i32>) -> tensor<i32> {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %0:2 = stablehlo.while(%i = %one, %acc = %n) : tensor<i32>, tensor<i32>
       cond {
        %c = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %c : tensor<i1>
      } do {
        %next = stablehlo.add %i, %one : tensor<i32>
        stablehlo.return %next, %acc : tensor<i32>, tensor<i32>
      }
      return %0#1 : tensor<i32>
    })");
  ASSERT_TRUE(module);
  ir::Operation* loop = BodyOps(*module)[1];
  ASSERT_EQ(loop->num_regions(), 2);
  const ir::Block& cond = loop->region(0).front();
  const ir::Block& body = loop->region(1).front();
  EXPECT_EQ(cond.num_arguments(), 2);
  EXPECT_EQ(cond.operations()[0]->operand(0), cond.argument(0));
  EXPECT_EQ(body.operations()[0]->operand(0), body.argument(0));
  EXPECT_EQ(body.operations()[0]->operand(1), BodyOps(*module)[0]->result(0));
}

TEST(TextParser, BuildsTheBodyOfACompactReduce) {
  auto module = Parse(R"(
    func.func @f(%x: tensor<4x5xf32>, %init: tensor<f32>) -> tensor<4xf32> {
      %0 = stablehlo.reduce(%x init: %init) applies stablehlo.maximum across dimensions = [1]
          : (tensor<4x5xf32>, tensor<f32>) -> tensor<4xf32> loc("r")
      return %0 : tensor<4xf32>
    })");
  ASSERT_TRUE(module);
  ir::Operation* reduce = BodyOps(*module)[0];
  EXPECT_EQ(reduce->GetAttr("dimensions"), ir::Attribute::DenseI64Array({1}));
  const ir::Block& block = reduce->region(0).front();
  ASSERT_EQ(block.num_arguments(), 2);
  EXPECT_EQ(block.argument(0)->type(), ir::TensorOf({}, ir::ElementType::kF32));
  ASSERT_EQ(block.operations().size(), 2u);
  const ir::Operation& inner = *block.operations()[0];
  EXPECT_EQ(inner.code(), ir::OpCode::kMaximum);
  EXPECT_EQ(inner.operand(1), block.argument(1));
  EXPECT_EQ(inner.loc(), ir::Location::Name("r"));
  EXPECT_EQ(block.operations()[1]->code(), ir::OpCode::kReturn);
}

TEST(TextParser, ReadsReducerArgumentsInPairs) {
  auto module = Parse(R"(
    func.func @f(%a: tensor<4xf32>, %b: tensor<4xi32>, %ia: tensor<f32>, %ib: tensor<i32>)
        -> (tensor<f32>, tensor<i32>) {
      %0:2 = stablehlo.reduce(%a init: %ia), (%b init: %ib) across dimensions = [0]
          : (tensor<4xf32>, tensor<4xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)
        reducer(%acc0: tensor<f32>, %x0: tensor<f32>) (%acc1: tensor<i32>, %x1: tensor<i32>) {
          stablehlo.return %x0, %acc1 : tensor<f32>, tensor<i32>
        }
      return %0#0, %0#1 : tensor<f32>, tensor<i32>
    })");
  ASSERT_TRUE(module);
  const ir::Block& block = BodyOps(*module)[0]->region(0).front();
  ASSERT_EQ(block.num_arguments(), 4);
  // Block arguments are ordered accumulators first: acc0, acc1, x0, x1.
  EXPECT_EQ(block.argument(1)->type(), ir::TensorOf({}, ir::ElementType::kI32));
  const ir::Operation& ret = *block.operations()[0];
  EXPECT_EQ(ret.operand(0), block.argument(2));
  EXPECT_EQ(ret.operand(1), block.argument(1));
}

TEST(TextParser, ParsesEveryPrettyAttributeForm) {
  auto module = Parse(R"(
    func.func @f(%a: tensor<3x8xf32>, %i: tensor<i64>, %t: tuple<tensor<f32>>) -> () {
      %0 = stablehlo.slice %a [1:3, 0:8:2] : (tensor<3x8xf32>) -> tensor<2x4xf32>
      %1 = stablehlo.dynamic_slice %a, %i, %i, sizes = [1, 4] : (tensor<3x8xf32>, tensor<i64>, tensor<i64>) -> tensor<1x4xf32>
      %2 = stablehlo.reduce_precision %a, format = e5m10 : tensor<3x8xf32>
      %3 = stablehlo.get_tuple_element %t[0] : (tuple<tensor<f32>>) -> tensor<f32>
      %4 = stablehlo.iota dim = 1 : tensor<3x8xi32>
      %5 = stablehlo.custom_call @"my-target"(%a) {has_side_effect = true} : (tensor<3x8xf32>) -> tensor<3x8xf32>
      %6 = stablehlo.pad %a, %3, low = [0, 1], high = [1, 0], interior = [0, 0] : (tensor<3x8xf32>, tensor<f32>) -> tensor<4x9xf32>
      return
    })");
  ASSERT_TRUE(module);
  auto ops = BodyOps(*module);
  EXPECT_EQ(ops[0]->GetAttr("start_indices"),
            ir::Attribute::DenseI64Array({1, 0}));
  EXPECT_EQ(ops[0]->GetAttr("limit_indices"),
            ir::Attribute::DenseI64Array({3, 8}));
  EXPECT_EQ(ops[0]->GetAttr("strides"), ir::Attribute::DenseI64Array({1, 2}));
  EXPECT_EQ(ops[1]->num_operands(), 3);
  EXPECT_EQ(ops[2]->GetAttr("exponent_bits").int_value(), 5);
  EXPECT_EQ(ops[2]->GetAttr("mantissa_bits").int_value(), 10);
  EXPECT_EQ(ops[3]->GetAttr("index").type(),
            ir::Type::Element(ir::ElementType::kI32));
  EXPECT_EQ(ops[4]->GetAttr("iota_dimension").int_value(), 1);
  EXPECT_EQ(ops[5]->GetAttr("call_target_name"),
            ir::Attribute::String("my-target"));
  EXPECT_EQ(ops[6]->GetAttr("edge_padding_low"),
            ir::Attribute::DenseI64Array({0, 1}));
}

TEST(TextParser, SplitsFilesAndReadsExpectedDiagnostics) {
  std::string text =
      "func.func @a() { return }\n"
      "// -----\n"
      "func.func @b() {\n"
      "  // expected-error@+1 {{first}}\n"
      "  %0 = foo\n"
      "  %1 = bar // expected-error {{second}}\n"
      "  // expected-error-re@-2 {{third.*}}\n"
      "}\n"
      "// -----\n"
      "// expected-warning@below {{fourth}}\n"
      "x\n";
  std::vector<parse::TextPart> parts = parse::SplitInputFile(text);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].first_line, 1);
  EXPECT_EQ(parts[1].first_line, 3);
  EXPECT_EQ(parts[2].first_line, 10);
  auto expected = parse::ExtractExpectedDiagnostics(parts[1]);
  ASSERT_EQ(expected.size(), 3u);
  EXPECT_EQ(expected[0].line, 5);
  EXPECT_EQ(expected[0].message, "first");
  EXPECT_EQ(expected[1].line, 6);
  EXPECT_EQ(expected[1].message, "second");
  EXPECT_EQ(expected[2].line, 5);
  auto warnings = parse::ExtractExpectedDiagnostics(parts[2]);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].severity,
            parse::ExpectedDiagnostic::Severity::kWarning);
  EXPECT_EQ(warnings[0].line, 11);
  // Errors in a part point at lines of the whole file.
  StatusOr<std::unique_ptr<ir::Module>> module =
      parse::ParseTextModule(parts[1].text, "split.mlir", parts[1].first_line);
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().message().substr(0, 15), "split.mlir:5:8:");
}

}  // namespace
}  // namespace kiln
