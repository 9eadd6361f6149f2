#include "runtime/dtype.h"

#include <gtest/gtest.h>

#include <set>

namespace kiln::runtime {
namespace {

TEST(DTypeTest, IrTypesStoreElementsTheSameWay) {
  int with_ir_type = 0;
  std::set<std::string_view> names;
  for (int i = 0; i < kNumDTypes; ++i) {
    DType dtype = static_cast<DType>(i);
    EXPECT_TRUE(names.insert(DTypeName(dtype)).second);
    std::optional<ir::ElementType> ir_type = ToIrElementType(dtype);
    if (!ir_type) continue;
    ++with_ir_type;
    // A buffer's bytes are the IR's dense data: same size per element.
    EXPECT_EQ(StorageBytes(dtype), ir::StorageBytes(*ir_type))
        << DTypeName(dtype);
    EXPECT_EQ(FromIrElementType(*ir_type), dtype);
  }
  EXPECT_EQ(kNumDTypes, 31);
  EXPECT_EQ(with_ir_type, 28);  // all but s1, u1 and token
  EXPECT_FALSE(ToIrElementType(DType::kS1).has_value());
  EXPECT_FALSE(ToIrElementType(DType::kToken).has_value());
  EXPECT_FALSE(FromIrElementType(ir::ElementType::kTF32).has_value());
}

TEST(DTypeTest, CanonicalizationKeepsLowBits) {
  uint8_t s4[] = {0x00, 0x07, 0x08, 0x0F, 0xF3, 0x18};
  CanonicalizeElements(DType::kS4, s4, 6);
  EXPECT_EQ(std::vector<uint8_t>(s4, s4 + 6),
            (std::vector<uint8_t>{0x00, 0x07, 0xF8, 0xFF, 0x03, 0xF8}));
  uint8_t u2[] = {0x07, 0xFC, 0x02};
  CanonicalizeElements(DType::kU2, u2, 3);
  EXPECT_EQ(std::vector<uint8_t>(u2, u2 + 3),
            (std::vector<uint8_t>{0x03, 0x00, 0x02}));
  uint8_t pred[] = {0, 1, 2, 0x80};
  CanonicalizeElements(DType::kPred, pred, 4);
  EXPECT_EQ(std::vector<uint8_t>(pred, pred + 4),
            (std::vector<uint8_t>{0, 1, 1, 1}));
  uint8_t s8[] = {0x80, 0x7F};
  CanonicalizeElements(DType::kS8, s8, 2);  // every byte is a valid s8
  EXPECT_EQ(s8[0], 0x80);
}

}  // namespace
}  // namespace kiln::runtime
