// Compile options: the bytes a plugin receives.
#include "kiln/compile_options.h"

#include <gtest/gtest.h>

#include "proto/xla_compile_options.pb.h"
#include "support/test_support.h"

namespace kiln::client {
namespace {

TEST(CompileOptionsTest, SingleDeviceAssignmentHasXlasBytes) {
  CompileOptions options;
  options.device_ids = {0};
  ASSERT_OK_AND_ASSIGN(std::string bytes, SerializeCompileOptions(options));
  xla::CompileOptionsProto proto;
  ASSERT_TRUE(proto.ParseFromString(bytes));
  const auto& build = proto.executable_build_options();
  EXPECT_EQ(build.num_replicas(), 1);
  EXPECT_EQ(build.num_partitions(), 1);
  EXPECT_EQ(build.device_ordinal(), -1);
  // The 1x1 assignment on device 0, as the PJRT notes give its bytes:
  // replica_count 1, computation_count 1, one row holding device 0.
  std::string assignment = build.device_assignment().SerializeAsString();
  EXPECT_EQ(assignment, std::string("\x08\x01\x10\x01\x1a\x03\x0a\x01\x00", 9));
}

TEST(CompileOptionsTest, ReplicatedAssignmentRoundTrips) {
  CompileOptions options;
  options.num_replicas = 2;
  options.num_partitions = 2;
  options.device_ids = {3, 2, 1, 0};  // replica-major
  ASSERT_OK_AND_ASSIGN(std::string bytes, SerializeCompileOptions(options));
  xla::CompileOptionsProto proto;
  ASSERT_TRUE(proto.ParseFromString(bytes));
  const auto& assignment = proto.executable_build_options().device_assignment();
  ASSERT_EQ(assignment.computation_devices_size(), 2);
  // Partition 0 runs on devices 3 (replica 0) and 1 (replica 1).
  EXPECT_EQ(assignment.computation_devices(0).replica_device_ids(0), 3);
  EXPECT_EQ(assignment.computation_devices(0).replica_device_ids(1), 1);
  EXPECT_EQ(assignment.computation_devices(1).replica_device_ids(0), 2);
  ASSERT_OK_AND_ASSIGN(CompileOptions back, ParseCompileOptions(bytes));
  EXPECT_EQ(back.num_replicas, 2);
  EXPECT_EQ(back.num_partitions, 2);
  EXPECT_EQ(back.device_ids, options.device_ids);
}

TEST(CompileOptionsTest, RejectsInconsistentOptions) {
  CompileOptions options;
  options.num_replicas = 2;
  options.device_ids = {0};
  auto bytes = SerializeCompileOptions(options);
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().code(), StatusCode::kInvalidArgument);
  options.num_replicas = 0;
  EXPECT_FALSE(SerializeCompileOptions(options).ok());
  CompileOptions portable;
  portable.portable = true;
  portable.num_partitions = 2;
  EXPECT_FALSE(SerializeCompileOptions(portable).ok());
}

TEST(CompileOptionsTest, ParseRejectsGarbageAndHugeCounts) {
  EXPECT_FALSE(ParseCompileOptions("\xff\xff\xff").ok());
  xla::CompileOptionsProto proto;
  proto.mutable_executable_build_options()->set_num_replicas(int64_t{1} << 40);
  auto parsed = ParseCompileOptions(proto.SerializeAsString());
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kiln::client
