#include "base/status.h"

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace kiln {
namespace {

StatusOr<int> ParsePositive(int value) {
  if (value <= 0) return InvalidArgumentError("expected a positive value, got ", value);
  return value;
}

StatusOr<int> DoubledPositive(int value) {
  ASSIGN_OR_RETURN(int parsed, ParsePositive(value));
  return parsed * 2;
}

Status CheckBoth(int a, int b) {
  RETURN_IF_ERROR(ParsePositive(a));
  RETURN_IF_ERROR(ParsePositive(b));
  return OkStatus();
}

TEST(StatusTest, DefaultIsOk) {
  Status status;
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kOk);
  EXPECT_EQ(status.ToString(), "OK");
}

TEST(StatusTest, ErrorBuildersConcatenateArguments) {
  Status status = NotFoundError("device ", 3, " of ", 2);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(status.message(), "device 3 of 2");
  EXPECT_EQ(status.ToString(), "NOT_FOUND: device 3 of 2");
}

TEST(StatusTest, CodesMatchPjrtNumbering) {
  EXPECT_EQ(static_cast<int>(StatusCode::kInvalidArgument), 3);
  EXPECT_EQ(static_cast<int>(StatusCode::kUnimplemented), 12);
  EXPECT_EQ(static_cast<int>(StatusCode::kUnauthenticated), 16);
}

TEST(StatusTest, PayloadsAndContextAreCopiedNotShared) {
  Status base = InternalError("boom");
  Status with = base.WithPayload("key", "value").WithContext("compile");
  EXPECT_TRUE(base.payloads().empty());
  ASSERT_EQ(with.payloads().size(), 1u);
  EXPECT_EQ(with.payloads()[0].first, "key");
  EXPECT_EQ(with.message(), "compile: boom");
  EXPECT_EQ(base.message(), "boom");
}

TEST(StatusOrTest, PropagatesValuesAndErrors) {
  EXPECT_EQ(*DoubledPositive(4), 8);
  StatusOr<int> failed = DoubledPositive(-1);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(), "expected a positive value, got -1");
  EXPECT_TRUE(CheckBoth(1, 2).ok());
  EXPECT_EQ(CheckBoth(1, 0).code(), StatusCode::kInvalidArgument);
}

TEST(StatusOrTest, OkStatusBecomesInternalError) {
  StatusOr<int> value = OkStatus();
  EXPECT_FALSE(value.ok());
  EXPECT_EQ(value.status().code(), StatusCode::kInternal);
}

TEST(StatusOrTest, HoldsMoveOnlyValues) {
  StatusOr<std::unique_ptr<int>> value = std::make_unique<int>(7);
  ASSERT_TRUE(value.ok());
  std::unique_ptr<int> taken = std::move(value).value();
  EXPECT_EQ(*taken, 7);
}

}  // namespace
}  // namespace kiln
