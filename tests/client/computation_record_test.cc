// The serialized computation record: round trip and damaged input.
#include "client/computation_record.h"

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace kiln::client::internal {
namespace {

ComputationRecord Sample() {
  ComputationRecord record;
  record.platform_name = "kiln";
  record.platform_version = "kiln 0.1.0";
  record.name = "step";
  record.program = "module {}";
  record.compile_options = std::string("\x1a\x02\x08\x01", 4);
  record.devices = {"KILN:0", "KILN:1"};
  record.donated_parameters = {0, 3};
  record.executable = std::string("\0blob\0", 6);
  return record;
}

TEST(ComputationRecordTest, RoundTrips) {
  std::string bytes = EncodeComputationRecord(Sample());
  ASSERT_OK_AND_ASSIGN(ComputationRecord back, DecodeComputationRecord(bytes));
  ComputationRecord expected = Sample();
  EXPECT_EQ(back.platform_name, expected.platform_name);
  EXPECT_EQ(back.platform_version, expected.platform_version);
  EXPECT_EQ(back.name, expected.name);
  EXPECT_EQ(back.program, expected.program);
  EXPECT_EQ(back.compile_options, expected.compile_options);
  EXPECT_EQ(back.devices, expected.devices);
  EXPECT_EQ(back.donated_parameters, expected.donated_parameters);
  EXPECT_EQ(back.executable, expected.executable);
}

TEST(ComputationRecordTest, EveryTruncationIsDataLoss) {
  std::string bytes = EncodeComputationRecord(Sample());
  for (size_t size = 0; size < bytes.size(); ++size) {
    auto decoded = DecodeComputationRecord(bytes.substr(0, size));
    ASSERT_FALSE(decoded.ok()) << size;
    EXPECT_EQ(decoded.status().code(), StatusCode::kDataLoss);
  }
  auto longer = DecodeComputationRecord(bytes + "x");
  ASSERT_FALSE(longer.ok());
  EXPECT_EQ(longer.status().code(), StatusCode::kDataLoss);
}

TEST(ComputationRecordTest, HugeLengthsAreErrorsNotAllocations) {
  std::string bytes = EncodeComputationRecord(Sample());
  // The platform name's length field starts after the 8-byte header.
  std::string damaged = bytes;
  for (int i = 0; i < 8; ++i) damaged[8 + i] = '\xff';
  EXPECT_FALSE(DecodeComputationRecord(damaged).ok());
  EXPECT_FALSE(DecodeComputationRecord("KILNCMP\x07").ok());
  EXPECT_FALSE(DecodeComputationRecord("ELF").ok());
}

}  // namespace
}  // namespace kiln::client::internal
