// Event semantics through the plugin: OnReady firing synchronously or from
// another thread, destroying an event inside its own callback, framework-
// created events, and errors carried by events.
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "plugin_harness.h"

namespace kiln::testing {
namespace {

class EventTest : public PluginTest {
 protected:
  PJRT_Event* CreateEvent() {
    auto args = KILN_ARGS(PJRT_Event_Create_Args);
    ErrorInfo info = TakeError(api_, api_->PJRT_Event_Create(&args));
    EXPECT_EQ(info.code, PJRT_Error_Code_OK) << Describe(info);
    return args.event;
  }
  ErrorInfo SetEvent(PJRT_Event* event, PJRT_Error_Code code,
                     const std::string& message = "") {
    auto args = KILN_ARGS(PJRT_Event_Set_Args);
    args.event = event;
    args.error_code = code;
    args.error_message = message.data();
    args.error_message_size = message.size();
    return TakeError(api_, api_->PJRT_Event_Set(&args));
  }
  bool IsReady(PJRT_Event* event) {
    auto args = KILN_ARGS(PJRT_Event_IsReady_Args);
    args.event = event;
    EXPECT_EQ(TakeError(api_, api_->PJRT_Event_IsReady(&args)).code,
              PJRT_Error_Code_OK);
    return args.is_ready;
  }
  PJRT_Event* ReadyEventOf(PJRT_Buffer* buffer) {
    auto args = KILN_ARGS(PJRT_Buffer_ReadyEvent_Args);
    args.buffer = buffer;
    EXPECT_EQ(TakeError(api_, api_->PJRT_Buffer_ReadyEvent(&args)).code,
              PJRT_Error_Code_OK);
    return args.event;
  }
};

// What a callback saw, and the event it must destroy (as jaxlib does).
struct CallbackRecord {
  const PJRT_Api* api = nullptr;
  PJRT_Event* destroy_me = nullptr;
  std::atomic<int> calls{0};
  std::atomic<bool> on_calling_thread{false};
  std::thread::id caller;
  ErrorInfo error;
};

void RecordAndDestroy(PJRT_Error* error, void* user_arg) {
  auto* record = static_cast<CallbackRecord*>(user_arg);
  // The callback owns the error; convert it the way a framework does.
  record->error = TakeError(record->api, error);
  record->on_calling_thread = std::this_thread::get_id() == record->caller;
  if (record->destroy_me != nullptr) {
    auto args = KILN_ARGS(PJRT_Event_Destroy_Args);
    args.event = record->destroy_me;
    EXPECT_EQ(record->api->PJRT_Event_Destroy(&args), nullptr);
  }
  record->calls.fetch_add(1);
}

TEST_F(EventTest, OnReadyOfAReadyEventRunsBeforeReturningAndMayDestroyIt) {
  PJRT_Buffer* buffer = UploadF32({1, 2}, {2});
  PJRT_Event* event = ReadyEventOf(buffer);
  ASSERT_EQ(AwaitAndDestroy(ReadyEventOf(buffer)).code, PJRT_Error_Code_OK);
  CallbackRecord record;
  record.api = api_;
  record.destroy_me = event;
  record.caller = std::this_thread::get_id();
  auto args = KILN_ARGS(PJRT_Event_OnReady_Args);
  args.event = event;
  args.callback = &RecordAndDestroy;
  args.user_arg = &record;
  PJRT_ASSERT_OK(api_, api_->PJRT_Event_OnReady(&args));
  // Ran synchronously, exactly once, with no error; the event is gone.
  EXPECT_EQ(record.calls.load(), 1);
  EXPECT_TRUE(record.on_calling_thread);
  EXPECT_EQ(record.error.code, PJRT_Error_Code_OK);
  DestroyBuffer(buffer);
}

TEST_F(EventTest, OnReadyRunsOnTheSettingThreadAndMayDestroyTheEvent) {
  PJRT_Event* event = CreateEvent();
  ASSERT_NE(event, nullptr);
  EXPECT_FALSE(IsReady(event));
  CallbackRecord record;
  record.api = api_;
  record.destroy_me = event;
  record.caller = std::this_thread::get_id();
  auto args = KILN_ARGS(PJRT_Event_OnReady_Args);
  args.event = event;
  args.callback = &RecordAndDestroy;
  args.user_arg = &record;
  PJRT_ASSERT_OK(api_, api_->PJRT_Event_OnReady(&args));
  EXPECT_EQ(record.calls.load(), 0);  // not ready yet
  std::thread setter([&] {
    ErrorInfo set = SetEvent(event, PJRT_Error_Code_ABORTED, "stopped early");
    EXPECT_EQ(set.code, PJRT_Error_Code_OK) << Describe(set);
  });
  setter.join();
  EXPECT_EQ(record.calls.load(), 1);
  EXPECT_FALSE(record.on_calling_thread);
  EXPECT_EQ(record.error.code, PJRT_Error_Code_ABORTED);
  EXPECT_EQ(record.error.message, "stopped early");
}

TEST_F(EventTest, OnReadyFiresForAsynchronousTransferCompletion) {
  // A transfer whose done event fires from the device's queue thread.
  std::vector<float> data(1 << 16, 3.0f);
  std::vector<int64_t> dims = {static_cast<int64_t>(data.size())};
  auto args = KILN_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
  args.client = client_;
  args.data = data.data();
  args.type = PJRT_Buffer_Type_F32;
  args.dims = dims.data();
  args.num_dims = 1;
  args.host_buffer_semantics =
      PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
  args.device = Devices()[0];
  PJRT_ASSERT_OK(api_, api_->PJRT_Client_BufferFromHostBuffer(&args));
  CallbackRecord record;
  record.api = api_;
  record.destroy_me = args.done_with_host_buffer;
  record.caller = std::this_thread::get_id();
  auto on_ready = KILN_ARGS(PJRT_Event_OnReady_Args);
  on_ready.event = args.done_with_host_buffer;
  on_ready.callback = &RecordAndDestroy;
  on_ready.user_arg = &record;
  PJRT_ASSERT_OK(api_, api_->PJRT_Event_OnReady(&on_ready));
  // The buffer's contents are final once its ready event fires, and by
  // then the done event has fired too.
  EXPECT_EQ(DownloadF32(args.buffer), data);
  for (int i = 0; i < 1000 && record.calls.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(record.calls.load(), 1);
  EXPECT_EQ(record.error.code, PJRT_Error_Code_OK);
  DestroyBuffer(args.buffer);
}

TEST_F(EventTest, EveryCallbackRunsOnce) {
  PJRT_Event* event = CreateEvent();
  CallbackRecord records[3];
  for (CallbackRecord& record : records) {
    record.api = api_;
    auto args = KILN_ARGS(PJRT_Event_OnReady_Args);
    args.event = event;
    args.callback = &RecordAndDestroy;
    args.user_arg = &record;
    PJRT_ASSERT_OK(api_, api_->PJRT_Event_OnReady(&args));
  }
  EXPECT_EQ(SetEvent(event, PJRT_Error_Code_OK).code, PJRT_Error_Code_OK);
  for (CallbackRecord& record : records) {
    EXPECT_EQ(record.calls.load(), 1);
    EXPECT_EQ(record.error.code, PJRT_Error_Code_OK);
  }
  DestroyEvent(event);
}

TEST_F(EventTest, CreatedEventSetWithAnErrorReportsIt) {
  PJRT_Event* event = CreateEvent();
  EXPECT_EQ(SetEvent(event, PJRT_Error_Code_DATA_LOSS, "bits fell out").code,
            PJRT_Error_Code_OK);
  EXPECT_TRUE(IsReady(event));
  // Event_Error gives a fresh error on each call.
  for (int i = 0; i < 2; ++i) {
    auto args = KILN_ARGS(PJRT_Event_Error_Args);
    args.event = event;
    ErrorInfo error = TakeError(api_, api_->PJRT_Event_Error(&args));
    EXPECT_EQ(error.code, PJRT_Error_Code_DATA_LOSS);
    EXPECT_EQ(error.message, "bits fell out");
  }
  ErrorInfo awaited = AwaitAndDestroy(event);
  EXPECT_EQ(awaited.code, PJRT_Error_Code_DATA_LOSS);
}

TEST_F(EventTest, SettingTwiceFailsAndKeepsTheFirstStatus) {
  PJRT_Event* event = CreateEvent();
  EXPECT_EQ(SetEvent(event, PJRT_Error_Code_OK).code, PJRT_Error_Code_OK);
  ErrorInfo second = SetEvent(event, PJRT_Error_Code_INTERNAL, "late");
  EXPECT_EQ(second.code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_EQ(AwaitAndDestroy(event).code, PJRT_Error_Code_OK);
}

TEST_F(EventTest, KilnsOwnEventsCannotBeSetByTheCaller) {
  PJRT_Buffer* buffer = UploadF32({1}, {1});
  PJRT_Event* event = ReadyEventOf(buffer);
  ErrorInfo set = SetEvent(event, PJRT_Error_Code_INTERNAL, "hijack");
  EXPECT_EQ(set.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(set.message.find("PJRT_Event_Create"), std::string::npos)
      << set.message;
  EXPECT_EQ(AwaitAndDestroy(event).code, PJRT_Error_Code_OK);
  DestroyBuffer(buffer);
}

TEST_F(EventTest, ErrorOfAPendingEventIsAFailedPrecondition) {
  PJRT_Event* event = CreateEvent();
  auto args = KILN_ARGS(PJRT_Event_Error_Args);
  args.event = event;
  EXPECT_EQ(TakeError(api_, api_->PJRT_Event_Error(&args)).code,
            PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_EQ(SetEvent(event, PJRT_Error_Code_OK).code, PJRT_Error_Code_OK);
  DestroyEvent(event);
}

TEST_F(EventTest, AwaitBlocksUntilAnotherThreadSetsTheEvent) {
  PJRT_Event* event = CreateEvent();
  std::atomic<bool> set{false};
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    set = true;
    EXPECT_EQ(SetEvent(event, PJRT_Error_Code_OK).code, PJRT_Error_Code_OK);
  });
  auto args = KILN_ARGS(PJRT_Event_Await_Args);
  args.event = event;
  PJRT_EXPECT_OK(api_, api_->PJRT_Event_Await(&args));
  EXPECT_TRUE(set.load());
  setter.join();
  DestroyEvent(event);
}

TEST_F(EventTest, ErrorsCarryTheirPayloadsThroughEvents) {
  std::vector<int64_t> dims = {2};
  PJRT_NamedValue payload = KILN_ARGS(PJRT_NamedValue);
  payload.name = "origin";
  payload.name_size = 6;
  payload.type = PJRT_NamedValue_kString;
  payload.string_value = "unit-test";
  payload.value_size = 9;
  auto args = KILN_ARGS(PJRT_Client_CreateErrorBuffer_Args);
  args.client = client_;
  args.error_code = PJRT_Error_Code_RESOURCE_EXHAUSTED;
  args.error_message = "no room";
  args.error_message_size = 7;
  args.shape_dims = dims.data();
  args.shape_num_dims = 1;
  args.shape_element_type = PJRT_Buffer_Type_F32;
  args.memory = DefaultMemory(Devices()[0]);
  args.payload = &payload;
  args.num_payload = 1;
  PJRT_ASSERT_OK(api_, api_->PJRT_Client_CreateErrorBuffer(&args));
  PJRT_Event* event = ReadyEventOf(args.buffer);
  CallbackRecord record;
  record.api = api_;
  record.destroy_me = event;
  auto on_ready = KILN_ARGS(PJRT_Event_OnReady_Args);
  on_ready.event = event;
  on_ready.callback = &RecordAndDestroy;
  on_ready.user_arg = &record;
  PJRT_ASSERT_OK(api_, api_->PJRT_Event_OnReady(&on_ready));
  ASSERT_EQ(record.calls.load(), 1);
  EXPECT_EQ(record.error.code, PJRT_Error_Code_RESOURCE_EXHAUSTED);
  EXPECT_EQ(record.error.message, "no room");
  ASSERT_EQ(record.error.payloads.size(), 1u);
  EXPECT_EQ(record.error.payloads[0].first, "origin");
  EXPECT_EQ(record.error.payloads[0].second, "unit-test");
  DestroyBuffer(args.buffer);
}

// A callback running on a device's own thread may destroy everything,
// the client included (the queue then finishes on its own).
TEST_F(EventTest, ACallbackOnADeviceThreadMayDestroyTheClient) {
  PJRT_Client* client = CreateClient(2);
  std::vector<PJRT_Device*> devices = Devices(client);
  float value = 5.0f;
  std::vector<int64_t> dims = {1};
  auto upload = KILN_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
  upload.client = client;
  upload.data = &value;
  upload.type = PJRT_Buffer_Type_F32;
  upload.dims = dims.data();
  upload.num_dims = 1;
  upload.device = devices[1];
  PJRT_ASSERT_OK(api_, api_->PJRT_Client_BufferFromHostBuffer(&upload));
  DestroyEvent(upload.done_with_host_buffer);
  // A raw copy whose destination comes later: its event is certainly
  // pending when the callback is registered, and fires on the device's
  // queue thread once the destination is given.
  auto copy = KILN_ARGS(PJRT_Buffer_CopyRawToHostFuture_Args);
  copy.buffer = upload.buffer;
  copy.offset = 0;
  copy.transfer_size = 4;
  PJRT_ASSERT_OK(api_, api_->PJRT_Buffer_CopyRawToHostFuture(&copy));
  struct Teardown {
    const PJRT_Api* api;
    PJRT_Client* client;
    PJRT_Buffer* buffer;
    PJRT_Event* event;
    std::atomic<bool> done{false};
    std::thread::id thread;
  } teardown{api_, client, upload.buffer, copy.event};
  auto on_ready = KILN_ARGS(PJRT_Event_OnReady_Args);
  on_ready.event = copy.event;
  on_ready.user_arg = &teardown;
  on_ready.callback = [](PJRT_Error* error, void* arg) {
    auto* t = static_cast<Teardown*>(arg);
    EXPECT_EQ(TakeError(t->api, error).code, PJRT_Error_Code_OK);
    t->thread = std::this_thread::get_id();
    auto event = KILN_ARGS(PJRT_Event_Destroy_Args);
    event.event = t->event;
    t->api->PJRT_Event_Destroy(&event);
    auto buffer = KILN_ARGS(PJRT_Buffer_Destroy_Args);
    buffer.buffer = t->buffer;
    t->api->PJRT_Buffer_Destroy(&buffer);
    auto client = KILN_ARGS(PJRT_Client_Destroy_Args);
    client.client = t->client;
    EXPECT_EQ(t->api->PJRT_Client_Destroy(&client), nullptr);
    t->done = true;
  };
  PJRT_ASSERT_OK(api_, api_->PJRT_Event_OnReady(&on_ready));
  float out = 0;
  PJRT_Buffer_CopyRawToHostFuture_Callback_Args ready{};
  ready.struct_size = PJRT_Buffer_CopyRawToHostFuture_Callback_Args_STRUCT_SIZE;
  ready.callback_data = copy.callback_data;
  ready.error_code = PJRT_Error_Code_OK;
  ready.dst = &out;
  copy.future_ready_callback(&ready);
  for (int i = 0; i < 5000 && !teardown.done.load(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(teardown.done.load());
  EXPECT_NE(teardown.thread, std::this_thread::get_id());
  EXPECT_EQ(out, 5.0f);
}

TEST_F(EventTest, DestroyingANullEventIsAllowed) {
  auto args = KILN_ARGS(PJRT_Event_Destroy_Args);
  args.event = nullptr;
  PJRT_EXPECT_OK(api_, api_->PJRT_Event_Destroy(&args));
}

}  // namespace
}  // namespace kiln::testing
