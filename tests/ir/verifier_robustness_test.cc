// The verifier on hostile input: absurd sizes, deep nesting, and corpus
// programs mutated at random (attributes of the wrong kind, types of the
// wrong kind, missing operands, extra regions). Every case must end in a
// Status, never a crash; run these under the sanitizers to check memory.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>

#include "base/file.h"
#include "parse/text/parser.h"
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

constexpr int64_t kHuge = int64_t{1} << 62;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

Status VerifyOne(const std::string& name, std::vector<Type> operand_types,
                 std::vector<Type> result_types,
                 std::vector<NamedAttribute> attrs = {}) {
  ModuleBuilder b(operand_types, {});
  std::vector<Value*> operands;
  for (size_t i = 0; i < operand_types.size(); ++i) {
    operands.push_back(b.arg(i));
  }
  b.Add(name, operands, result_types, attrs);
  b.Return({});
  return b.Verify();
}

TEST(VerifierRobustnessTest, AbsurdSizesAreErrorsNotOverflows) {
  Type huge = T({kHuge, kHuge, 4}, ElementType::kF32);
  // Element counts overflow int64; the sizes are not compared as numbers.
  EXPECT_FALSE(
      VerifyOne("stablehlo.reshape", {huge}, {T({4, kHuge}, ElementType::kF32)})
          .ok());
  EXPECT_FALSE(VerifyOne("stablehlo.slice", {huge},
                         {T({1, 1, 1}, ElementType::kF32)},
                         {{"start_indices", I64s({kMin, 0, 0})},
                          {"limit_indices", I64s({kMax, 1, 1})},
                          {"strides", I64s({1, 1, 1})}})
                   .ok());
  EXPECT_FALSE(VerifyOne("stablehlo.all_to_all",
                         {T({4, kHuge}, ElementType::kF32)},
                         {T({4, kHuge}, ElementType::kF32)},
                         {{"split_dimension", I64(0)},
                          {"concat_dimension", I64(1)},
                          {"split_count", I64(4)},
                          {"replica_groups", DenseI64({1, 4}, {0, 1, 2, 3})}})
                   .ok());
  EXPECT_FALSE(
      VerifyOne("stablehlo.reduce_window",
                {T({kHuge}, ElementType::kF32), Scalar(ElementType::kF32)},
                {T({1}, ElementType::kF32)},
                {{"window_dimensions", I64s({kMax})},
                 {"window_dilations", I64s({kMax})},
                 {"padding", DenseI64({1, 2}, {kMax, kMax})}})
          .ok());
  // A replica-group tensor of 2^40 elements is refused, not materialized.
  Attribute giant = Attribute::DenseElements(
      T({1, int64_t{1} << 40}, ElementType::kI64), std::string(8, '\0'),
      /*splat=*/true);
  Status status =
      VerifyOne("stablehlo.all_gather", {T({8}, ElementType::kF32)},
                {T({8}, ElementType::kF32)},
                {{"all_gather_dim", I64(0)}, {"replica_groups", giant}});
  EXPECT_NE(status.message().find("has too many elements"),
            std::string_view::npos)
      << status.message();
}

TEST(VerifierRobustnessTest, DeepNestingIsRefused) {
  ModuleBuilder b({}, {});
  Block* block = &b.body();
  for (int i = 0; i < 5000; ++i) {
    Operation* op = b.Add("test.nest", {}, {}, {}, block);
    block = &op->AddRegion().AddBlock();
  }
  b.Return({});
  Status status = b.Verify();
  EXPECT_NE(status.message().find("nested more than"), std::string_view::npos)
      << status.message();
}

// Random changes to an op, each of which the verifier must survive.
class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}

  void Mutate(Operation& op) {
    const std::vector<std::string>& names = InherentAttributeNames(op.code());
    switch (Pick(5)) {
      case 0:
        if (!names.empty()) op.SetAttr(names[Pick(names.size())], AnyAttr());
        break;
      case 1:
        if (!names.empty()) op.RemoveAttr(names[Pick(names.size())]);
        break;
      case 2:
        if (op.num_results() > 0) {
          op.result(Pick(op.num_results()))->set_type(AnyType());
        }
        break;
      case 3:
        if (op.num_operands() > 0) {
          std::vector<Value*> operands = op.operands();
          operands.erase(operands.begin() + Pick(operands.size()));
          op.set_operands(operands);
        }
        break;
      default:
        op.AddRegion();
        break;
    }
  }

 private:
  size_t Pick(size_t n) { return n == 0 ? 0 : rng_() % n; }

  int64_t AnyInt() {
    static constexpr int64_t kValues[] = {-1, 0, 1, 2, 3, kHuge, kMax, kMin};
    return kValues[Pick(std::size(kValues))];
  }

  std::vector<int64_t> AnyInts() {
    std::vector<int64_t> values(Pick(4));
    for (int64_t& value : values) value = AnyInt();
    return values;
  }

  Type AnyType() {
    switch (Pick(6)) {
      case 0:
        return Type::Token();
      case 1:
        return Type::Tuple({Type::Token()});
      case 2:
        return Type::Element(ElementType::kF32);
      case 3:
        return Type::MemRef({2}, Type::Element(ElementType::kF32));
      default: {
        std::vector<int64_t> shape(Pick(4));
        for (int64_t& dim : shape) dim = Pick(2) ? kDynamic : AnyInt() & 7;
        return T(shape, static_cast<ElementType>(Pick(kNumElementTypes)));
      }
    }
  }

  Attribute AnyAttr() {
    switch (Pick(10)) {
      case 0:
        return Attribute::Unit();
      case 1:
        return I64(AnyInt());
      case 2:
        return Attribute::String("a.b");
      case 3:
        return I64s(AnyInts());
      case 4:
        return Attribute::Array({I64(AnyInt()), Attribute::Unit()});
      case 5:
        return Attribute::Enum(static_cast<EnumKind>(Pick(8)), AnyInt() & 7);
      case 6:
        return Attribute::Gather(GatherDimensionNumbers{
            AnyInts(), AnyInts(), AnyInts(), AnyInts(), AnyInts(), AnyInt()});
      case 7:
        return Attribute::Dot(
            DotDimensionNumbers{AnyInts(), AnyInts(), AnyInts(), AnyInts()});
      case 8:
        return Attribute::DotAlgorithmAttr(DotAlgorithm{});
      default:
        return Attribute::TypeAttr(AnyType());
    }
  }

  std::mt19937_64 rng_;
};

TEST(VerifierRobustnessTest, MutatedCorpusProgramsNeverCrash) {
  KILN_REQUIRE_SHARED_DIR(shared);
  Mutator mutator(/*seed=*/20240611);
  int verified = 0;
  int rejected = 0;
  for (const std::string& path :
       kiln::testing::ListFiles(shared + "/corpus/stablehlo/syntax", ".mlir")) {
    StatusOr<std::string> text = ReadFile(path);
    ASSERT_OK(text);
    for (const parse::TextPart& part : parse::SplitInputFile(*text)) {
      for (int round = 0; round < 3; ++round) {
        StatusOr<std::unique_ptr<Module>> module =
            parse::ParseTextModule(part.text, path, part.first_line);
        if (!module.ok()) break;
        std::vector<Operation*> ops;
        (*module)->op().Walk([&](Operation& op) { ops.push_back(&op); });
        for (int i = 0; i < 3; ++i) {
          mutator.Mutate(*ops[(round * 7 + i * 13) % ops.size()]);
        }
        (VerifyModule(**module).ok() ? verified : rejected)++;
      }
    }
  }
  // Mutants land on both sides: the verifier neither accepts nor rejects
  // everything.
  EXPECT_GT(verified, 100);
  EXPECT_GT(rejected, 100);
}

}  // namespace
}  // namespace kiln::ir
