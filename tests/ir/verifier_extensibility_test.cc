// custom_call, composite and the communication ops: layouts, aliases,
// decompositions, tokens and channel types.
#include <gtest/gtest.h>

#include "support/test_support.h"
#include "verifier_test_builder.h"

namespace kiln::ir {
namespace {

using testing::DenseI64;
using testing::I64;
using testing::ModuleBuilder;
using testing::Scalar;
using testing::T;

constexpr ElementType kF32 = ElementType::kF32;

bool MessageHas(const Status& status, std::string_view text) {
  return status.message().find(text) != std::string_view::npos;
}

Attribute IndexLayout(std::vector<int64_t> values) {
  std::string data(values.size() * 8, '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    for (int b = 0; b < 8; ++b) {
      data[i * 8 + b] = static_cast<char>(
          (static_cast<uint64_t>(values[i]) >> (8 * b)) & 0xFF);
    }
  }
  return Attribute::DenseElements(
      T({static_cast<int64_t>(values.size())}, ElementType::kIndex), data,
      false);
}

Status VerifyCustomCall(std::vector<Type> operands, std::vector<Type> results,
                        std::vector<NamedAttribute> attrs) {
  ModuleBuilder b(operands, {});
  std::vector<Value*> values;
  for (size_t i = 0; i < operands.size(); ++i) values.push_back(b.arg(i));
  attrs.push_back({"call_target_name", Attribute::String("foo")});
  b.Add("stablehlo.custom_call", values, results, attrs);
  b.Return({});
  return b.Verify();
}

TEST(VerifierExtensibilityTest, CustomCallLayouts) {
  Type matrix = T({2, 3}, kF32);
  EXPECT_OK(VerifyCustomCall(
      {matrix}, {matrix},
      {{"operand_layouts", Attribute::Array({IndexLayout({1, 0})})},
       {"result_layouts", Attribute::Array({IndexLayout({0, 1})})}}));
  EXPECT_TRUE(MessageHas(
      VerifyCustomCall(
          {matrix}, {matrix},
          {{"operand_layouts", Attribute::Array({IndexLayout({1, 0})})}}),
      "Layout attributes should be specified for either both operands and "
      "results or none"));
  EXPECT_TRUE(MessageHas(
      VerifyCustomCall(
          {matrix}, {matrix},
          {{"operand_layouts", Attribute::Array({IndexLayout({0, 1, 2})})},
           {"result_layouts", Attribute::Array({IndexLayout({0, 1})})}}),
      "layout must be a permutation of [0, 2)"));
  EXPECT_TRUE(
      MessageHas(VerifyCustomCall(
                     {Type::Token()}, {},
                     {{"operand_layouts", Attribute::Array({IndexLayout({0})})},
                      {"result_layouts", Attribute::Array({})}}),
                 "Only tensor types can have non-empty layout"));
}

TEST(VerifierExtensibilityTest, CustomCallOutputOperandAliases) {
  Type pair = Type::Tuple({T({1, 1}, kF32), T({2, 3}, kF32)});
  auto alias = [](std::vector<int64_t> output, int64_t operand,
                  std::vector<int64_t> operand_path) {
    return Attribute::Array(
        {Attribute::OutputOperandAliasAttr(OutputOperandAlias{
            std::move(output), operand, std::move(operand_path)})});
  };
  Type result = Type::Tuple({T({2, 3}, kF32)});
  EXPECT_OK(VerifyCustomCall({pair}, {result},
                             {{"output_operand_aliases", alias({0}, 0, {1})}}));
  EXPECT_TRUE(MessageHas(
      VerifyCustomCall({pair}, {result},
                       {{"output_operand_aliases", alias({0}, 1, {1})}}),
      "expects operandIndex in the output_operand_alias attribute "
      "to be in range [0, 1); got: 1"));
  EXPECT_TRUE(MessageHas(
      VerifyCustomCall({pair}, {result},
                       {{"output_operand_aliases", alias({0}, 0, {2})}}),
      "operand_tuple_indices in the output_operand_alias attribute out of "
      "bounds"));
  EXPECT_TRUE(MessageHas(
      VerifyCustomCall({pair}, {Type::Tuple({T({20, 30}, kF32)})},
                       {{"output_operand_aliases", alias({0}, 0, {1})}}),
      "shapes mismatch in the output_operand_alias attribute"));
}

TEST(VerifierExtensibilityTest, CustomCallBackendConfigFollowsApiVersion) {
  Attribute typed_ffi = Attribute::Integer(4, Type::Element(ElementType::kI32));
  EXPECT_OK(VerifyCustomCall(
      {}, {},
      {{"api_version", typed_ffi},
       {"backend_config", Attribute::Dictionary({{"foo", I64(42)}})}}));
  EXPECT_TRUE(MessageHas(
      VerifyCustomCall({}, {},
                       {{"api_version", typed_ffi},
                        {"backend_config", Attribute::String("bar=42")}}),
      "must be a dictionary attribute"));
}

TEST(VerifierExtensibilityTest, CompositeNameAndDecomposition) {
  auto composite = [](const std::string& name, Type decomposition_input) {
    ModuleBuilder b({Scalar(kF32)}, {});
    auto callee = std::make_unique<Operation>("func.func", std::vector<Type>{});
    callee->SetAttr("sym_name", Attribute::String("decomposition"));
    callee->SetAttr("function_type",
                    Attribute::TypeAttr(Type::Function({decomposition_input},
                                                       {decomposition_input})));
    Block& body = callee->AddRegion().AddBlock();
    body.AddArgument(decomposition_input);
    b.module().body().Append(std::move(callee));
    b.Add("func.return", {body.argument(0)}, {}, {}, &body);
    b.Add("stablehlo.composite", {b.arg(0)}, {Scalar(kF32)},
          {{"name", Attribute::String(name)},
           {"decomposition", Attribute::SymbolRef("decomposition")}});
    b.Return({});
    return b.Verify();
  };
  EXPECT_OK(composite("f00._.$", Scalar(kF32)));
  for (const char* bad : {"foo", ".foo", "foo.", "0.foo", "foo.%"}) {
    EXPECT_TRUE(MessageHas(composite(bad, Scalar(kF32)),
                           "name must be a valid namespaced op name"))
        << bad;
  }
  EXPECT_TRUE(MessageHas(composite("a.b", Scalar(ElementType::kF64)),
                         "operand at index 0 has type 'tensor<f32>', but "
                         "decomposition has type 'tensor<f64>'"));
}

TEST(VerifierExtensibilityTest, InfeedAndRecvEndWithAToken) {
  auto infeed = [](std::vector<Type> results) {
    ModuleBuilder b({Type::Token()}, {});
    b.Add("stablehlo.infeed", {b.arg(0)}, std::move(results));
    b.Return({});
    return b.Verify();
  };
  EXPECT_OK(infeed({T({3}, kF32), Type::Token()}));
  EXPECT_TRUE(MessageHas(infeed({}),
                         "result is expected to be at least of "
                         "size 1, but got 0"));
  EXPECT_TRUE(MessageHas(infeed({T({3}, kF32), T({3}, kF32)}),
                         "last element of result types is expected to be of "
                         "token type"));
  EXPECT_TRUE(MessageHas(infeed({Type::Token(), Type::Token()}),
                         "except the last element, are expected to be of "
                         "tensor type"));
}

TEST(VerifierExtensibilityTest, SendChannelTypeFollowsHostTransfer) {
  auto send = [](int64_t channel_type, bool host) {
    ModuleBuilder b({T({2}, kF32), Type::Token()}, {});
    b.Add("stablehlo.send", {b.arg(0), b.arg(1)}, {Type::Token()},
          {{"channel_handle", Attribute::Channel({1, channel_type})},
           {"is_host_transfer", Attribute::Bool(host)}});
    b.Return({});
    return b.Verify();
  };
  EXPECT_OK(send(2, true));   // DEVICE_TO_HOST
  EXPECT_OK(send(1, false));  // DEVICE_TO_DEVICE
  EXPECT_TRUE(MessageHas(send(1, true),
                         "channel_type should be "
                         "DEVICE_TO_HOST when "
                         "is_host_transfer is true"));
  EXPECT_TRUE(MessageHas(send(2, false),
                         "channel_type should be "
                         "DEVICE_TO_DEVICE when "
                         "is_host_transfer is false"));
}

TEST(VerifierExtensibilityTest, AllGatherAndReduceScatterShapes) {
  auto all_gather = [](Type result) {
    ModuleBuilder b({T({8, 2}, kF32)}, {});
    b.Add("stablehlo.all_gather", {b.arg(0)}, {result},
          {{"all_gather_dim", I64(1)},
           {"replica_groups", DenseI64({2, 4}, {0, 2, 4, 6, 1, 3, 5, 7})}});
    b.Return({});
    return b.Verify();
  };
  EXPECT_OK(all_gather(T({8, 8}, kF32)));
  EXPECT_TRUE(MessageHas(all_gather(T({4, 8}, kF32)),
                         "same shape except for the dimension size at "
                         "'all_gather_dim'"));
  EXPECT_TRUE(MessageHas(all_gather(T({8, 7}, kF32)),
                         "result gather dimension has size 7, expected to be "
                         "a multiple of operand gather dimension size 2"));

  auto reduce_scatter = [](Type result) {
    ModuleBuilder b({T({4, 16}, kF32)}, {});
    Operation* op = b.Add("stablehlo.reduce_scatter", {b.arg(0)}, {result},
                          {{"scatter_dimension", I64(1)},
                           {"replica_groups", DenseI64({1, 4}, {0, 1, 2, 3})}});
    b.AddBinaryBody(op, "stablehlo.add", Type::Element(kF32),
                    Type::Element(kF32));
    b.Return({});
    return b.Verify();
  };
  EXPECT_OK(reduce_scatter(T({4, 4}, kF32)));
  EXPECT_TRUE(MessageHas(reduce_scatter(T({4, 5}, kF32)),
                         "operand scatter dimension has size 16, expected to "
                         "be a multiple of result scatter dimension size 5"));
  EXPECT_TRUE(MessageHas(reduce_scatter(T({3, 4}, kF32)),
                         "non scatter dimensions should be same for operand "
                         "(4) and result (3)"));
}

TEST(VerifierExtensibilityTest, CollectiveBroadcastDynamicRoot) {
  auto broadcast = [](std::vector<Type> operands, int results) {
    ModuleBuilder b(operands, {});
    std::vector<Value*> values;
    for (size_t i = 0; i < operands.size(); ++i) values.push_back(b.arg(i));
    std::vector<Type> result_types(results, T({4}, kF32));
    b.Add("stablehlo.collective_broadcast", values, result_types,
          {{"replica_groups", DenseI64({1, 2}, {0, 1})},
           {"has_dynamic_root", Attribute::Unit()}});
    b.Return({});
    return b.Verify();
  };
  EXPECT_OK(broadcast({T({4}, kF32), T({1}, ElementType::kI32)}, 1));
  EXPECT_TRUE(MessageHas(broadcast({T({1}, ElementType::kI32)}, 0),
                         "requires at least two operands (data + root)"));
  EXPECT_TRUE(MessageHas(broadcast({T({4}, kF32), T({1}, kF32)}, 1),
                         "must be a rank-1 i32 tensor"));
  EXPECT_TRUE(MessageHas(
      broadcast({T({4}, kF32), T({4}, kF32), T({1}, ElementType::kI32)}, 2),
      "must have the same number of elements as data operands "
      "(2), but got 1"));
}

}  // namespace
}  // namespace kiln::ir
