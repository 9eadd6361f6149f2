#include "runtime/buffer.h"

#include <gtest/gtest.h>

#include <cstring>

#include "runtime/client.h"
#include "runtime/transfer.h"
#include "support/test_support.h"

namespace kiln::runtime {
namespace {

class RuntimeBufferTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto client = Client::Create({2});
    ASSERT_TRUE(client.ok());
    client_ = std::move(*client);
  }
  MemorySpace* memory(int device = 0) {
    return client_->devices()[device]->default_memory_space();
  }
  Shape F32(std::vector<int64_t> dims) {
    return *Shape::Make(DType::kF32, dims);
  }

  std::unique_ptr<Client> client_;
};

TEST_F(RuntimeBufferTest, DeleteReleasesStorageAndCountsIt) {
  MemoryCounters& counters = *client_->devices()[0]->counters();
  const int64_t before = counters.bytes_in_use.load();
  ASSERT_OK_AND_ASSIGN(auto buffer, Buffer::CreateZeroed(F32({10}), memory()));
  EXPECT_EQ(counters.bytes_in_use.load() - before, 40);
  EXPECT_OK(buffer->AcquireStorage());
  buffer->Delete();
  EXPECT_TRUE(buffer->IsDeleted());
  EXPECT_EQ(counters.bytes_in_use.load(), before);
  EXPECT_EQ(buffer->AcquireStorage().status().code(),
            StatusCode::kFailedPrecondition);
}

TEST_F(RuntimeBufferTest, HoldsKeepStorageAliveAfterDelete) {
  ASSERT_OK_AND_ASSIGN(auto buffer, Buffer::CreateZeroed(F32({4}), memory()));
  ASSERT_OK(buffer->IncreaseExternalReferenceCount());
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Storage> in_flight,
                       buffer->AcquireStorage());
  std::weak_ptr<Storage> weak = in_flight;
  in_flight.reset();
  buffer->Delete();
  EXPECT_FALSE(weak.expired());  // the external reference holds it
  ASSERT_OK(buffer->DecreaseExternalReferenceCount());
  EXPECT_TRUE(weak.expired());
  EXPECT_EQ(buffer->DecreaseExternalReferenceCount().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(RuntimeBufferTest, DonationTakesTheStorage) {
  ASSERT_OK_AND_ASSIGN(auto buffer, Buffer::CreateZeroed(F32({4}), memory()));
  ASSERT_OK(buffer->IncreaseExternalReferenceCount());
  EXPECT_EQ(buffer->Donate().status().code(), StatusCode::kFailedPrecondition);
  ASSERT_OK(buffer->DecreaseExternalReferenceCount());
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Storage> storage, buffer->Donate());
  EXPECT_NE(storage, nullptr);
  EXPECT_TRUE(buffer->IsDeleted());
  EXPECT_NE(buffer->AcquireStorage().status().message().find("donated"),
            std::string_view::npos);
}

TEST_F(RuntimeBufferTest, PendingBuffersAreReadyWhenTheirWriterSaysSo) {
  ASSERT_OK_AND_ASSIGN(auto buffer, Buffer::CreatePending(F32({2}), memory()));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Storage> storage,
                       buffer->AcquireStorage());
  float out[2] = {0, 0};
  ASSERT_OK_AND_ASSIGN(auto done, TransferToHost(buffer, out, 8, std::nullopt));
  EXPECT_FALSE(done->IsReady());  // waits for the bytes
  float values[2] = {3, 4};
  std::memcpy(storage->data(), values, 8);
  ASSERT_OK(buffer->ready_event()->Set());
  ASSERT_OK(done->Await());
  EXPECT_EQ(out[0], 3);
  EXPECT_EQ(out[1], 4);
}

TEST_F(RuntimeBufferTest, AWriterErrorReachesEveryReader) {
  ASSERT_OK_AND_ASSIGN(auto buffer, Buffer::CreatePending(F32({2}), memory()));
  ASSERT_OK_AND_ASSIGN(auto copy, CopyToMemory(buffer, memory(1)));
  float out[2];
  ASSERT_OK_AND_ASSIGN(auto done, TransferToHost(copy, out, 8, std::nullopt));
  ASSERT_OK(buffer->ready_event()->Set(InternalError("kernel failed")));
  EXPECT_EQ(done->Await().message(), "kernel failed");
  EXPECT_EQ(copy->ready_event()->Await().message(), "kernel failed");
}

TEST_F(RuntimeBufferTest, TransfersHonourHostBufferSemantics) {
  alignas(64) float host[4] = {1, 2, 3, 4};
  ASSERT_OK_AND_ASSIGN(
      HostTransfer zero_copy,
      TransferFromHost(host, F32({4}), std::nullopt,
                       HostBufferSemantics::kImmutableZeroCopy, memory()));
  ASSERT_OK_AND_ASSIGN(auto storage, zero_copy.buffer->AcquireStorage());
  EXPECT_EQ(storage->data(), host);
  EXPECT_TRUE(storage->is_external());
  EXPECT_FALSE(storage->writable());
  storage.reset();
  EXPECT_FALSE(zero_copy.done_with_host_buffer->IsReady());
  zero_copy.buffer.reset();  // last user of the host memory
  EXPECT_TRUE(zero_copy.done_with_host_buffer->IsReady());

  ASSERT_OK_AND_ASSIGN(
      HostTransfer later,
      TransferFromHost(host, F32({4}), std::nullopt,
                       HostBufferSemantics::kImmutableUntilTransferCompletes,
                       memory()));
  ASSERT_OK(later.done_with_host_buffer->Await());
  host[0] = 100;  // allowed once done
  float out[4];
  ASSERT_OK_AND_ASSIGN(auto done,
                       TransferToHost(later.buffer, out, 16, std::nullopt));
  ASSERT_OK(done->Await());
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[3], 4);
}

TEST_F(RuntimeBufferTest, DeferredRawCopyWaitsForItsDestination) {
  float host[3] = {7, 8, 9};
  ASSERT_OK_AND_ASSIGN(
      HostTransfer up,
      TransferFromHost(host, F32({3}), std::nullopt,
                       HostBufferSemantics::kImmutableOnlyDuringCall,
                       memory()));
  ASSERT_OK_AND_ASSIGN(DeferredRawCopy copy,
                       CopyRawToHostDeferred(up.buffer, 4, 8));
  EXPECT_FALSE(copy.done->IsReady());
  float out[2] = {0, 0};
  copy.provide_destination(static_cast<void*>(out));
  copy.provide_destination(static_cast<void*>(nullptr));  // ignored
  ASSERT_OK(copy.done->Await());
  EXPECT_EQ(out[0], 8);
  EXPECT_EQ(out[1], 9);
  EXPECT_FALSE(CopyRawToHostDeferred(up.buffer, 4, 9).ok());
}

}  // namespace
}  // namespace kiln::runtime
