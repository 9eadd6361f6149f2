// Many threads creating, copying, reading and deleting buffers on several
// devices at once, with event callbacks that destroy their events; run it
// under ThreadSanitizer (-DKILN_SANITIZE=thread) to check for races.
#include <atomic>
#include <thread>

#include "plugin_harness.h"

namespace kiln::testing {
namespace {

class ConcurrencyTest : public PluginTest {
 protected:
  ConcurrencyTest() : PluginTest(4) {}
};

struct CallbackCounter {
  const PJRT_Api* api;
  PJRT_Event* event;
  std::atomic<int>* fired;
};

TEST_F(ConcurrencyTest, ThreadsCreateCopyReadAndDeleteBuffersOnSeveralDevices) {
  constexpr int kThreads = 8;
  constexpr int kIterations = 40;
  const std::vector<PJRT_Device*> devices = Devices();
  ASSERT_EQ(devices.size(), 4u);
  std::vector<std::vector<PJRT_Memory*>> memories;
  for (PJRT_Device* device : devices) memories.push_back(Memories(device));
  std::atomic<int> callbacks_fired{0};
  std::atomic<int> failures{0};
  std::atomic<bool> stop_watcher{false};

  // Reads client-wide state while the others work.
  std::thread watcher([&] {
    while (!stop_watcher.load()) {
      for (PJRT_Device* device : devices) {
        auto stats = KILN_ARGS(PJRT_Device_MemoryStats_Args);
        stats.device = device;
        if (TakeError(api_, api_->PJRT_Device_MemoryStats(&stats)).code !=
            PJRT_Error_Code_OK) {
          failures.fetch_add(1);
        }
      }
      std::this_thread::yield();
    }
  });

  auto work = [&](int thread) {
    for (int i = 0; i < kIterations; ++i) {
      const int n = 64 + 16 * ((thread + i) % 8);
      std::vector<float> values(n);
      for (int k = 0; k < n; ++k) values[k] = thread * 1000.0f + i + k * 0.5f;
      std::vector<int64_t> dims = {n};
      auto upload = KILN_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
      upload.client = client_;
      upload.data = values.data();
      upload.type = PJRT_Buffer_Type_F32;
      upload.dims = dims.data();
      upload.num_dims = 1;
      upload.host_buffer_semantics =
          static_cast<PJRT_HostBufferSemantics>(i % 3);
      upload.device = devices[thread % 4];
      if (TakeError(api_, api_->PJRT_Client_BufferFromHostBuffer(&upload))
              .code != PJRT_Error_Code_OK) {
        failures.fetch_add(1);
        continue;
      }
      // Copies start before the upload has finished.
      auto to_device = KILN_ARGS(PJRT_Buffer_CopyToDevice_Args);
      to_device.buffer = upload.buffer;
      to_device.dst_device = devices[(thread + i + 1) % 4];
      auto to_memory = KILN_ARGS(PJRT_Buffer_CopyToMemory_Args);
      to_memory.buffer = upload.buffer;
      to_memory.dst_memory = memories[(thread + 2) % 4][1 + i % 2];
      if (TakeError(api_, api_->PJRT_Buffer_CopyToDevice(&to_device)).code !=
              PJRT_Error_Code_OK ||
          TakeError(api_, api_->PJRT_Buffer_CopyToMemory(&to_memory)).code !=
              PJRT_Error_Code_OK) {
        failures.fetch_add(1);
        continue;
      }
      // The original goes away while its copies may still be reading it.
      DestroyBuffer(upload.buffer);
      // A callback that destroys its own event, as frameworks do.
      auto ready = KILN_ARGS(PJRT_Buffer_ReadyEvent_Args);
      ready.buffer = to_memory.dst_buffer;
      if (TakeError(api_, api_->PJRT_Buffer_ReadyEvent(&ready)).code ==
          PJRT_Error_Code_OK) {
        auto* counter =
            new CallbackCounter{api_, ready.event, &callbacks_fired};
        auto on_ready = KILN_ARGS(PJRT_Event_OnReady_Args);
        on_ready.event = ready.event;
        on_ready.user_arg = counter;
        on_ready.callback = [](PJRT_Error* error, void* arg) {
          auto* c = static_cast<CallbackCounter*>(arg);
          TakeError(c->api, error);
          auto destroy = KILN_ARGS(PJRT_Event_Destroy_Args);
          destroy.event = c->event;
          c->api->PJRT_Event_Destroy(&destroy);
          c->fired->fetch_add(1);
          delete c;
        };
        if (TakeError(api_, api_->PJRT_Event_OnReady(&on_ready)).code !=
            PJRT_Error_Code_OK) {
          failures.fetch_add(1);
        }
      }
      if (DownloadF32(to_device.dst_buffer) != values ||
          DownloadF32(to_memory.dst_buffer) != values) {
        failures.fetch_add(1);
      }
      // The host memory lives until the upload says it is done with it.
      if (AwaitAndDestroy(upload.done_with_host_buffer).code !=
          PJRT_Error_Code_OK) {
        failures.fetch_add(1);
      }
      DestroyBuffer(to_device.dst_buffer);
      DestroyBuffer(to_memory.dst_buffer);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(work, t);
  for (std::thread& thread : threads) thread.join();
  stop_watcher = true;
  watcher.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(callbacks_fired.load(), kThreads * kIterations);
  // Everything was released.
  for (PJRT_Device* device : devices) {
    auto stats = KILN_ARGS(PJRT_Device_MemoryStats_Args);
    stats.device = device;
    PJRT_ASSERT_OK(api_, api_->PJRT_Device_MemoryStats(&stats));
    EXPECT_EQ(stats.bytes_in_use, 0);
  }
}

TEST_F(ConcurrencyTest, ClientsComeAndGoWhileOthersWork) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        PJRT_Client* client = CreateClient(1 + (t + i) % 3);
        if (client == nullptr) {
          failures.fetch_add(1);
          continue;
        }
        std::vector<PJRT_Device*> devices = Devices(client);
        float value = static_cast<float>(t * 100 + i);
        std::vector<int64_t> dims = {1};
        auto upload = KILN_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
        upload.client = client;
        upload.data = &value;
        upload.type = PJRT_Buffer_Type_F32;
        upload.dims = dims.data();
        upload.num_dims = 1;
        upload.host_buffer_semantics =
            PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
        upload.device = devices.back();
        if (TakeError(api_, api_->PJRT_Client_BufferFromHostBuffer(&upload))
                .code != PJRT_Error_Code_OK) {
          failures.fetch_add(1);
        } else {
          if (DownloadF32(upload.buffer) != std::vector<float>{value}) {
            failures.fetch_add(1);
          }
          AwaitAndDestroy(upload.done_with_host_buffer);
          DestroyBuffer(upload.buffer);
        }
        DestroyClient(client);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace kiln::testing
