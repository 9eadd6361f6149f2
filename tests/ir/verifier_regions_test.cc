// Ops with regions and dimension numbers: reduce, sort, map, if/case,
// while, gather/scatter, dot_general, convolution and the collectives.
#include <gtest/gtest.h>

#include "support/test_support.h"
#include "verifier_test_builder.h"

namespace kiln::ir {
namespace {

using testing::DenseI64;
using testing::I64;
using testing::I64s;
using testing::ModuleBuilder;
using testing::Scalar;
using testing::T;

constexpr ElementType kF32 = ElementType::kF32;
constexpr ElementType kF64 = ElementType::kF64;
constexpr ElementType kI32 = ElementType::kI32;

bool MessageHas(const Status& status, std::string_view text) {
  return status.message().find(text) != std::string_view::npos;
}

// reduce(input, init) over `dimensions` with an add body over `body`.
Status VerifyReduce(Type input, Type init, std::vector<int64_t> dimensions,
                    Type result, ElementType body) {
  ModuleBuilder b({input, init}, {});
  Operation* reduce = b.Add("stablehlo.reduce", {b.arg(0), b.arg(1)}, {result},
                            {{"dimensions", I64s(dimensions)}});
  b.AddBinaryBody(reduce, "stablehlo.add", Type::Element(body),
                  Type::Element(body));
  b.Return({});
  return b.Verify();
}

TEST(VerifierRegionsTest, ReduceRemovesTheReducedDimensions) {
  EXPECT_OK(
      VerifyReduce(T({4, 6}, kF32), Scalar(kF32), {1}, T({4}, kF32), kF32));
  EXPECT_TRUE(MessageHas(
      VerifyReduce(T({4, 6}, kF32), Scalar(kF32), {1}, T({6}, kF32), kF32),
      "inferred type(s) 'tensor<4xf32>'"));
  EXPECT_TRUE(MessageHas(
      VerifyReduce(T({4, 6}, kF32), Scalar(kF32), {2}, T({4}, kF32), kF32),
      "Out-of-bounds dimension 2 for input-tensor rank: 2"));
  // The body may work in a wider type; the result then has that type.
  EXPECT_OK(
      VerifyReduce(T({4, 6}, kF32), Scalar(kF32), {1}, T({4}, kF64), kF64));
  EXPECT_TRUE(MessageHas(
      VerifyReduce(T({4, 6}, kF32), Scalar(kF32), {1}, T({4}, kI32), kI32),
      "is expected to be promotable"));
}

TEST(VerifierRegionsTest, ReducerBodySignature) {
  ModuleBuilder b({T({4}, kF32), Scalar(kF32)}, {});
  Operation* reduce = b.Add("stablehlo.reduce", {b.arg(0), b.arg(1)},
                            {Scalar(kF32)}, {{"dimensions", I64s({0})}});
  Type scalar = Scalar(kF32);
  Block& body = b.AddBlock(reduce, {scalar, scalar, scalar});
  b.Add("stablehlo.return", {body.argument(0)}, {}, {}, &body);
  b.Return({});
  Status status = b.Verify();
  EXPECT_TRUE(MessageHas(status,
                         "Reduction-region must take 2 parameters, "
                         "but takes 3 parameter(s)"))
      << status.message();
}

TEST(VerifierRegionsTest, RegionsMustEndWithReturn) {
  ModuleBuilder b({T({4}, kF32), Scalar(kF32)}, {});
  Operation* reduce = b.Add("stablehlo.reduce", {b.arg(0), b.arg(1)},
                            {Scalar(kF32)}, {{"dimensions", I64s({0})}});
  b.AddBlock(reduce, {Scalar(kF32), Scalar(kF32)});  // empty body
  b.Return({});
  Status status = b.Verify();
  EXPECT_TRUE(MessageHas(status, "must end with 'stablehlo.return'"))
      << status.message();
}

TEST(VerifierRegionsTest, SortComparator) {
  auto sort = [](Type comparator_arg, Type comparator_result,
                 int64_t dimension) {
    Type input = T({4, 5}, kF32);
    ModuleBuilder b({input}, {});
    Operation* op = b.Add("stablehlo.sort", {b.arg(0)}, {input},
                          {{"dimension", I64(dimension)}});
    Block& body = b.AddBlock(op, {comparator_arg, comparator_arg});
    Operation* cmp =
        b.Add("stablehlo.compare", {body.argument(0), body.argument(1)},
              {comparator_result},
              {{"comparison_direction",
                Attribute::Enum(EnumKind::kComparisonDirection, kGT)}},
              &body);
    b.Add("stablehlo.return", {cmp->result(0)}, {}, {}, &body);
    b.Return({});
    return b.Verify();
  };
  Type pred = Scalar(ElementType::kI1);
  EXPECT_OK(sort(Scalar(kF32), pred, 1));
  EXPECT_OK(sort(Scalar(kF32), pred, -2));
  EXPECT_TRUE(MessageHas(sort(Scalar(kF32), pred, 2),
                         "dimension attribute value must be in range [-2, 2), "
                         "but found 2"));
  EXPECT_TRUE(MessageHas(sort(Scalar(kI32), pred, 0),
                         "comparator block argument #0 should be of type "
                         "'tensor<f32>' but got 'tensor<i32>'"));
}

TEST(VerifierRegionsTest, IfBranchesAgree) {
  auto build = [](Type then_type, Type else_type, Type result) {
    ModuleBuilder b({Scalar(ElementType::kI1), then_type, else_type}, {});
    Operation* op = b.Add("stablehlo.if", {b.arg(0)}, {result});
    Block& then_block = b.AddBlock(op, {});
    b.Add("stablehlo.return", {b.arg(1)}, {}, {}, &then_block);
    Block& else_block = b.AddBlock(op, {});
    b.Add("stablehlo.return", {b.arg(2)}, {}, {}, &else_block);
    b.Return({});
    return b.Verify();
  };
  EXPECT_OK(build(T({2}, kF32), T({kDynamic}, kF32), T({2}, kF32)));
  EXPECT_TRUE(MessageHas(build(T({2}, kF32), T({2}, kI32), T({2}, kF32)),
                         "branch 0 and branch 1 have mismatched return "
                         "types"));
  EXPECT_TRUE(MessageHas(build(Scalar(kF32), Scalar(kF32), Scalar(kI32)),
                         "inferred type(s) 'tensor<f32>' are incompatible"));
}

TEST(VerifierRegionsTest, WhileCarriesItsOperands) {
  auto build = [](Type cond_arg, Type body_result) {
    Type counter = Scalar(kI32);
    ModuleBuilder b({counter}, {});
    Operation* op = b.Add("stablehlo.while", {b.arg(0)}, {counter});
    Block& cond = b.AddBlock(op, {cond_arg});
    Operation* cmp =
        b.Add("stablehlo.compare", {cond.argument(0), cond.argument(0)},
              {Scalar(ElementType::kI1)},
              {{"comparison_direction",
                Attribute::Enum(EnumKind::kComparisonDirection, kLT)}},
              &cond);
    b.Add("stablehlo.return", {cmp->result(0)}, {}, {}, &cond);
    Block& body = b.AddBlock(op, {counter});
    Operation* next = b.Add("stablehlo.convert", {body.argument(0)},
                            {body_result}, {}, &body);
    b.Add("stablehlo.return", {next->result(0)}, {}, {}, &body);
    b.Return({});
    return b.Verify();
  };
  EXPECT_OK(build(Scalar(kI32), Scalar(kI32)));
  EXPECT_TRUE(MessageHas(build(Scalar(kF32), Scalar(kI32)),
                         "compatible with condition block arguments"));
  EXPECT_TRUE(MessageHas(build(Scalar(kI32), Scalar(kF32)),
                         "compatible with body block return types"));
}

Status VerifyGather(GatherDimensionNumbers dn, std::vector<int64_t> sizes,
                    Type result) {
  ModuleBuilder b({T({3, 4, 2}, kI32), T({2, 3, 2}, ElementType::kI64)}, {});
  b.Add("stablehlo.gather", {b.arg(0), b.arg(1)}, {result},
        {{"dimension_numbers", Attribute::Gather(dn)},
         {"slice_sizes", I64s(sizes)}});
  b.Return({});
  return b.Verify();
}

TEST(VerifierRegionsTest, GatherInfersItsShape) {
  GatherDimensionNumbers dn;
  dn.offset_dims = {2, 3};
  dn.collapsed_slice_dims = {0};
  dn.start_index_map = {1, 0};
  dn.index_vector_dim = 2;
  // batch dims (2, 3) from the indices, offsets (2, 2) from slice sizes.
  EXPECT_OK(VerifyGather(dn, {1, 2, 2}, T({2, 3, 2, 2}, kI32)));
  EXPECT_TRUE(MessageHas(VerifyGather(dn, {1, 2, 2}, T({2, 3, 2, 3}, kI32)),
                         "inferred type(s) 'tensor<2x3x2x2xi32>'"));
  EXPECT_TRUE(MessageHas(VerifyGather(dn, {1, 2, 8}, T({2, 3, 2, 8}, kI32)),
                         "slice size (8) is out of bounds for operand "
                         "dimension (2) at index 2"));
  EXPECT_TRUE(MessageHas(VerifyGather(dn, {2, 2, 2}, T({2, 3, 2, 2}, kI32)),
                         "Expects that for each dim in collapsed_slice_dims, "
                         "slice_sizes[dim] should be <= 1, but got 2"));
  GatherDimensionNumbers unsorted = dn;
  unsorted.offset_dims = {3, 2};
  EXPECT_TRUE(
      MessageHas(VerifyGather(unsorted, {1, 2, 2}, T({2, 3, 2, 2}, kI32)),
                 "expects offset_dims to be sorted, got: [3, 2]"));
  GatherDimensionNumbers bad_map = dn;
  bad_map.start_index_map = {1, 3};
  EXPECT_TRUE(
      MessageHas(VerifyGather(bad_map, {1, 2, 2}, T({2, 3, 2, 2}, kI32)),
                 "Expects each element of start_index_map to be in "
                 "range [0, rank-of('operand')) i.e. [0, 3). got: 3."));
  GatherDimensionNumbers bad_ivd = dn;
  bad_ivd.index_vector_dim = 4;
  EXPECT_TRUE(
      MessageHas(VerifyGather(bad_ivd, {1, 2, 2}, T({2, 3, 2, 2}, kI32)),
                 "Expects index_vector_dim to be in range [0, "
                 "rank-of('start_indices')] i.e. [0, 3]. got: 4."));
}

TEST(VerifierRegionsTest, ScatterUpdatesShape) {
  auto scatter = [](Type updates) {
    Type input = T({200, 100, 300}, kF32);
    ModuleBuilder b({input, T({10, 2}, kI32), updates}, {});
    ScatterDimensionNumbers dn;
    dn.update_window_dims = {1};
    dn.inserted_window_dims = {0, 1};
    dn.scatter_dims_to_operand_dims = {0, 1};
    dn.index_vector_dim = 1;
    Operation* op =
        b.Add("stablehlo.scatter", {b.arg(0), b.arg(1), b.arg(2)}, {input},
              {{"scatter_dimension_numbers", Attribute::Scatter(dn)}});
    b.AddBinaryBody(op, "stablehlo.add", Type::Element(kF32),
                    Type::Element(kF32));
    b.Return({});
    return b.Verify();
  };
  EXPECT_OK(scatter(T({10, 300}, kF32)));
  EXPECT_TRUE(MessageHas(scatter(T({10, 301}, kF32)),
                         "For dimension 1, updates bound is 301, operand bound "
                         "is 300."));
  EXPECT_TRUE(MessageHas(scatter(T({10, 300, 1}, kF32)),
                         "expects updates tensor must be of rank 2"));
}

TEST(VerifierRegionsTest, DotGeneralShapesAndAlgorithm) {
  auto dot = [](DotDimensionNumbers dn, Type result,
                std::vector<NamedAttribute> extra = {}) {
    ModuleBuilder b({T({2, 3, 4}, kF32), T({2, 4, 5}, kF32)}, {});
    extra.push_back({"dot_dimension_numbers", Attribute::Dot(dn)});
    b.Add("stablehlo.dot_general", {b.arg(0), b.arg(1)}, {result}, extra);
    b.Return({});
    return b.Verify();
  };
  DotDimensionNumbers dn;
  dn.lhs_batching_dimensions = {0};
  dn.rhs_batching_dimensions = {0};
  dn.lhs_contracting_dimensions = {2};
  dn.rhs_contracting_dimensions = {1};
  EXPECT_OK(dot(dn, T({2, 3, 5}, kF32)));
  EXPECT_TRUE(MessageHas(dot(dn, T({2, 5, 3}, kF32)),
                         "inferred shape '[2, 3, 5]' is incompatible"));
  DotDimensionNumbers bad = dn;
  bad.rhs_contracting_dimensions = {2};
  EXPECT_TRUE(MessageHas(dot(bad, T({2, 3, 4}, kF32)),
                         "contracting dimension sizes must match for "
                         "lhs/rhs"));
  bad = dn;
  bad.lhs_contracting_dimensions = {3};
  EXPECT_TRUE(MessageHas(dot(bad, T({2, 3, 5}, kF32)),
                         "lhs_contracting_dimensions value: 3 is out of "
                         "range: [0, 3)"));

  DotAlgorithm algorithm;
  algorithm.lhs_precision_type = Type::Element(kF32);
  algorithm.rhs_precision_type = Type::Element(kF32);
  algorithm.accumulation_type = Type::Element(kF32);
  EXPECT_OK(dot(dn, T({2, 3, 5}, kF32),
                {{"algorithm", Attribute::DotAlgorithmAttr(algorithm)}}));
  algorithm.lhs_component_count = 3;
  EXPECT_TRUE(
      MessageHas(dot(dn, T({2, 3, 5}, kF32),
                     {{"algorithm", Attribute::DotAlgorithmAttr(algorithm)}}),
                 "dot algorithm not known to be supported on any hardware"));
}

TEST(VerifierRegionsTest, ConvolutionOutputShape) {
  auto conv = [](Type result, int64_t feature_groups) {
    // NHWC input 1x8x8x4, HWIO kernel 3x3x4x16, stride 2, padding 1.
    ModuleBuilder b(
        {T({1, 8, 8, 4}, kF32), T({3, 3, 4 / feature_groups, 16}, kF32)}, {});
    ConvDimensionNumbers dn;
    dn.input_batch_dimension = 0;
    dn.input_feature_dimension = 3;
    dn.input_spatial_dimensions = {1, 2};
    dn.kernel_spatial_dimensions = {0, 1};
    dn.kernel_input_feature_dimension = 2;
    dn.kernel_output_feature_dimension = 3;
    dn.output_batch_dimension = 0;
    dn.output_feature_dimension = 3;
    dn.output_spatial_dimensions = {1, 2};
    b.Add("stablehlo.convolution", {b.arg(0), b.arg(1)}, {result},
          {{"dimension_numbers", Attribute::Conv(dn)},
           {"window_strides", I64s({2, 2})},
           {"padding", DenseI64({2, 2}, {1, 1, 1, 1})},
           {"feature_group_count", I64(feature_groups)},
           {"batch_group_count", I64(1)}});
    b.Return({});
    return b.Verify();
  };
  // (8 + 2 - 3) / 2 + 1 = 4
  EXPECT_OK(conv(T({1, 4, 4, 16}, kF32), 1));
  EXPECT_OK(conv(T({1, 4, 4, 16}, kF32), 2));
  EXPECT_TRUE(MessageHas(conv(T({1, 5, 4, 16}, kF32), 1),
                         "inferred shape '[1, 4, 4, 16]' is incompatible"));
  EXPECT_TRUE(
      MessageHas(conv(T({1, 4, 4, 16}, kF32), 3), "feature_group_count"));
}

TEST(VerifierRegionsTest, AllReduceReplicaGroups) {
  auto all_reduce = [](Attribute groups) {
    Type data = T({10}, kF32);
    ModuleBuilder b({data}, {});
    Operation* op = b.Add("stablehlo.all_reduce", {b.arg(0)}, {data},
                          {{"replica_groups", groups}});
    b.AddBinaryBody(op, "stablehlo.maximum", Type::Element(kF32),
                    Type::Element(kF32));
    b.Return({});
    return b.Verify();
  };
  EXPECT_OK(all_reduce(DenseI64({2, 2}, {0, 2, 1, 3})));
  EXPECT_TRUE(MessageHas(all_reduce(DenseI64({1, 4}, {0, 1, 1, 3})),
                         "replica id #1 seen more than once"));
  EXPECT_TRUE(MessageHas(all_reduce(DenseI64({1, 3}, {0, 1, 3})),
                         "replica id #2 not seen in replica groups"));
  EXPECT_TRUE(MessageHas(all_reduce(DenseI64({4}, {0, 1, 2, 3})),
                         "replica groups should be a rank 2 tensor"));
}

TEST(VerifierRegionsTest, AllToAllShape) {
  auto all_to_all = [](int64_t split_count, Type result) {
    ModuleBuilder b({T({4, 16}, kF32)}, {});
    std::vector<int64_t> group;  // one group of replicas 0..split_count-1
    for (int64_t i = 0; i < split_count; ++i) group.push_back(i);
    b.Add("stablehlo.all_to_all", {b.arg(0)}, {result},
          {{"split_dimension", I64(1)},
           {"concat_dimension", I64(0)},
           {"split_count", I64(split_count)},
           {"replica_groups", DenseI64({1, split_count}, group)}});
    b.Return({});
    return b.Verify();
  };
  EXPECT_OK(all_to_all(4, T({16, 4}, kF32)));
  EXPECT_TRUE(MessageHas(all_to_all(4, T({16, 16}, kF32)),
                         "inferred type(s) 'tensor<16x4xf32>'"));
  EXPECT_TRUE(MessageHas(all_to_all(5, T({20, 3}, kF32)),
                         "split dimension has size 16, expected to be a "
                         "multiple of split_count 5"));
}

}  // namespace
}  // namespace kiln::ir
