// Threads transferring, copying and deleting runtime buffers on several
// devices at once (run under ThreadSanitizer to check for races).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "runtime/client.h"
#include "runtime/transfer.h"
#include "support/test_support.h"

namespace kiln::runtime {
namespace {

TEST(RuntimeConcurrencyTest, ThreadsShareDevicesAndBuffers) {
  ASSERT_OK_AND_ASSIGN(auto client, Client::Create({4}));
  std::atomic<int> failures{0};
  auto work = [&](int thread) {
    for (int i = 0; i < 50; ++i) {
      const int n = 32 + i;
      std::vector<int32_t> values(n);
      for (int k = 0; k < n; ++k) values[k] = thread * 100000 + i * 100 + k;
      Shape shape = *Shape::Make(DType::kS32, std::vector<int64_t>{n});
      Device* home = client->devices()[thread % 4];
      auto up = TransferFromHost(values.data(), shape, std::nullopt,
                                 static_cast<HostBufferSemantics>(i % 3),
                                 home->default_memory_space());
      if (!up.ok()) {
        failures.fetch_add(1);
        continue;
      }
      Device* away = client->devices()[(thread + i) % 4];
      auto copy =
          CopyToMemory(up->buffer, away->memory_space(MemoryKind::kPinnedHost));
      if (!copy.ok()) {
        failures.fetch_add(1);
        continue;
      }
      up->buffer->Delete();  // while the copy may still read it
      std::vector<int32_t> out(n, -1);
      auto done = TransferToHost(*copy, out.data(), n * 4, std::nullopt);
      if (!done.ok() || !(*done)->Await().ok() || out != values) {
        failures.fetch_add(1);
      }
      if (!up->done_with_host_buffer->Await().ok()) failures.fetch_add(1);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) threads.emplace_back(work, t);
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace kiln::runtime
