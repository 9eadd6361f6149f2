// FileKeyValueStore: the key-value store processes of one machine share
// through a directory.
#include "kiln/key_value_store.h"

#include <gtest/gtest.h>

#include <thread>

#include "multiprocess/launcher.h"

namespace kiln::client {
namespace {

class FileKeyValueStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = multiprocess::MakeTemporaryDirectory("kiln_kv_");
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override { multiprocess::RemoveDirectory(dir_); }
  std::string dir_;
};

TEST_F(FileKeyValueStoreTest, PutValuesAreReadByAnotherStoreOfTheDirectory) {
  auto writer = FileKeyValueStore::Open(dir_ + "/kv");
  auto reader = FileKeyValueStore::Open(dir_ + "/kv");
  ASSERT_TRUE(writer.ok() && reader.ok());
  // Keys with slashes and binary values survive.
  const std::string value("a\0b/c", 5);
  ASSERT_TRUE((*writer)->Put("kiln/gloo/0,1/0/rank_1", value).ok());
  auto read =
      (*reader)->Get("kiln/gloo/0,1/0/rank_1", std::chrono::milliseconds(100));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, value);
  ASSERT_TRUE((*writer)->Put("empty", "").ok());
  EXPECT_EQ(*(*reader)->Get("empty", std::chrono::milliseconds(100)), "");
}

TEST_F(FileKeyValueStoreTest, GetWaitsForAKeyPutLater) {
  auto store = FileKeyValueStore::Open(dir_);
  ASSERT_TRUE(store.ok());
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_TRUE((*store)->Put("late", "here").ok());
  });
  auto read = (*store)->Get("late", std::chrono::seconds(10));
  writer.join();
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, "here");
}

TEST_F(FileKeyValueStoreTest, AMissingKeyTimesOut) {
  auto store = FileKeyValueStore::Open(dir_);
  ASSERT_TRUE(store.ok());
  const auto start = std::chrono::steady_clock::now();
  auto read = (*store)->Get("never", std::chrono::milliseconds(50));
  EXPECT_EQ(read.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_GE(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(50));
  EXPECT_EQ(FileKeyValueStore::Open("").status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kiln::client
