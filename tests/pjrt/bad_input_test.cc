// Bad input gets a clear error and changes nothing: struct sizes from older
// and newer callers, unknown extensions, nulls, bad enums, bad shapes, and
// handles that are not what they claim to be or belong to another client.
#include <cstring>
#include <memory>

#include "plugin_harness.h"

namespace kiln::testing {
namespace {

class BadInputTest : public PluginTest {
 protected:
  BadInputTest() : PluginTest(2) {}
};

TEST_F(BadInputTest, ZeroStructSizeNamesTheStructAndBothSizes) {
  auto args = KILN_ARGS(PJRT_Client_Devices_Args);
  args.struct_size = 0;
  args.client = client_;
  ErrorInfo error = TakeError(api_, api_->PJRT_Client_Devices(&args));
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error.message.find("PJRT_Client_Devices_Args"), std::string::npos)
      << error.message;
  EXPECT_NE(error.message.find("struct_size is 0"), std::string::npos)
      << error.message;
  EXPECT_NE(
      error.message.find(std::to_string(PJRT_Client_Devices_Args_STRUCT_SIZE)),
      std::string::npos)
      << error.message;
}

TEST_F(BadInputTest, StructTooSmallForNeededOutputsIsRejected) {
  // An older caller whose struct ends before the output this call makes.
  auto args = KILN_ARGS(PJRT_Buffer_ToHostBuffer_Args);
  args.struct_size = PJRT_STRUCT_SIZE(PJRT_Buffer_ToHostBuffer_Args, dst_size);
  ErrorInfo error = TakeError(api_, api_->PJRT_Buffer_ToHostBuffer(&args));
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error.message.find("PJRT_Buffer_ToHostBuffer_Args.struct_size is " +
                               std::to_string(args.struct_size)),
            std::string::npos)
      << error.message;
}

TEST_F(BadInputTest, OlderCallersWithoutOptionalTrailingFieldsWork) {
  // PJRT_Client_Create_Args before the kv_try_get fields (0.61).
  auto create = KILN_ARGS(PJRT_Client_Create_Args);
  create.struct_size = PJRT_STRUCT_SIZE(PJRT_Client_Create_Args, client);
  PJRT_ASSERT_OK(api_, api_->PJRT_Client_Create(&create));
  DestroyClient(create.client);
  // PJRT_Client_CreateViewOfDeviceBuffer_Args before `memory`: the
  // garbage where `memory` would be must not be read.
  struct {
    PJRT_Client_CreateViewOfDeviceBuffer_Args args;
    uint8_t tail[16];
  } view;
  std::memset(&view, 0xEE, sizeof(view));
  alignas(64) float memory[2] = {1, 2};
  std::vector<int64_t> dims = {2};
  view.args.struct_size =
      PJRT_STRUCT_SIZE(PJRT_Client_CreateViewOfDeviceBuffer_Args, buffer);
  view.args.extension_start = nullptr;
  view.args.client = client_;
  view.args.device_buffer_ptr = memory;
  view.args.dims = dims.data();
  view.args.num_dims = 1;
  view.args.element_type = PJRT_Buffer_Type_F32;
  view.args.layout = nullptr;
  view.args.device = Devices()[0];
  view.args.on_delete_callback = nullptr;
  view.args.on_delete_callback_arg = nullptr;
  view.args.stream = 0;
  PJRT_ASSERT_OK(api_, api_->PJRT_Client_CreateViewOfDeviceBuffer(&view.args));
  EXPECT_EQ(DownloadF32(view.args.buffer), (std::vector<float>{1, 2}));
  DestroyBuffer(view.args.buffer);
}

TEST_F(BadInputTest, NewerCallersWithALargerStructWork) {
  // A caller built against a later header: unknown fields follow.
  struct {
    PJRT_Client_PlatformName_Args args;
    uint8_t newer_fields[64];
  } call;
  std::memset(&call, 0x5A, sizeof(call));
  call.args.struct_size = sizeof(call);
  call.args.extension_start = nullptr;
  call.args.client = client_;
  PJRT_ASSERT_OK(api_, api_->PJRT_Client_PlatformName(&call.args));
  EXPECT_EQ(std::string(call.args.platform_name, call.args.platform_name_size),
            "kiln");
  for (uint8_t byte : call.newer_fields) EXPECT_EQ(byte, 0x5A);
}

TEST_F(BadInputTest, UnknownExtensionsInAChainAreIgnored) {
  PJRT_Extension_Base second{PJRT_Extension_Base_STRUCT_SIZE,
                             PJRT_Extension_Type_Unknown, nullptr};
  SetRawEnum(second.type, 9999);
  PJRT_Extension_Base first{PJRT_Extension_Base_STRUCT_SIZE,
                            PJRT_Extension_Type_Profiler, &second};
  auto create = KILN_ARGS(PJRT_Client_Create_Args);
  create.extension_start = &first;
  PJRT_ASSERT_OK(api_, api_->PJRT_Client_Create(&create));
  DestroyClient(create.client);
  float data[2] = {3, 4};
  std::vector<int64_t> dims = {2};
  auto upload = KILN_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
  upload.extension_start = &first;
  upload.client = client_;
  upload.data = data;
  upload.type = PJRT_Buffer_Type_F32;
  upload.dims = dims.data();
  upload.num_dims = 1;
  upload.device = Devices()[0];
  PJRT_ASSERT_OK(api_, api_->PJRT_Client_BufferFromHostBuffer(&upload));
  EXPECT_EQ(AwaitAndDestroy(upload.done_with_host_buffer).code,
            PJRT_Error_Code_OK);
  EXPECT_EQ(DownloadF32(upload.buffer), (std::vector<float>{3, 4}));
  DestroyBuffer(upload.buffer);
}

TEST_F(BadInputTest, NullArgumentsAndHandles) {
  EXPECT_EQ(TakeError(api_, api_->PJRT_Client_Devices(nullptr)).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(TakeError(api_, api_->PJRT_Buffer_ToHostBuffer(nullptr)).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
  api_->PJRT_Error_Destroy(nullptr);  // logged, not fatal
  auto devices = KILN_ARGS(PJRT_Client_Devices_Args);
  ErrorInfo error = TakeError(api_, api_->PJRT_Client_Devices(&devices));
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(error.message, "PJRT_Client_Devices_Args.client is null");
  auto await = KILN_ARGS(PJRT_Event_Await_Args);
  EXPECT_EQ(TakeError(api_, api_->PJRT_Event_Await(&await)).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
  auto on_ready = KILN_ARGS(PJRT_Event_OnReady_Args);
  auto create_event = KILN_ARGS(PJRT_Event_Create_Args);
  PJRT_ASSERT_OK(api_, api_->PJRT_Event_Create(&create_event));
  on_ready.event = create_event.event;
  on_ready.callback = nullptr;
  EXPECT_EQ(TakeError(api_, api_->PJRT_Event_OnReady(&on_ready)).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
  DestroyEvent(create_event.event);
  // Host data missing for a nonempty shape.
  std::vector<int64_t> dims = {4};
  auto upload = KILN_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
  upload.client = client_;
  upload.data = nullptr;
  upload.type = PJRT_Buffer_Type_F32;
  upload.dims = dims.data();
  upload.num_dims = 1;
  upload.device = Devices()[0];
  EXPECT_EQ(
      TakeError(api_, api_->PJRT_Client_BufferFromHostBuffer(&upload)).code,
      PJRT_Error_Code_INVALID_ARGUMENT);
  // Dimensions missing.
  float data[4] = {};
  upload.data = data;
  upload.dims = nullptr;
  EXPECT_EQ(
      TakeError(api_, api_->PJRT_Client_BufferFromHostBuffer(&upload)).code,
      PJRT_Error_Code_INVALID_ARGUMENT);
  // Neither device nor memory.
  upload.dims = dims.data();
  upload.device = nullptr;
  EXPECT_EQ(
      TakeError(api_, api_->PJRT_Client_BufferFromHostBuffer(&upload)).code,
      PJRT_Error_Code_INVALID_ARGUMENT);
}

TEST_F(BadInputTest, BadEnumValues) {
  float data[2] = {};
  std::vector<int64_t> dims = {2};
  auto upload = KILN_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
  upload.client = client_;
  upload.data = data;
  upload.type = PJRT_Buffer_Type_F32;
  upload.dims = dims.data();
  upload.num_dims = 1;
  upload.device = Devices()[0];
  SetRawEnum(upload.host_buffer_semantics, 7);
  ErrorInfo error =
      TakeError(api_, api_->PJRT_Client_BufferFromHostBuffer(&upload));
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error.message.find("host_buffer_semantics is 7"), std::string::npos)
      << error.message;
  PJRT_NamedValue option = KILN_ARGS(PJRT_NamedValue);
  option.name = "cpu_device_count";
  option.name_size = 16;
  SetRawEnum(option.type, 9);
  auto create = KILN_ARGS(PJRT_Client_Create_Args);
  create.create_options = &option;
  create.num_options = 1;
  EXPECT_EQ(TakeError(api_, api_->PJRT_Client_Create(&create)).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
  auto event = KILN_ARGS(PJRT_Event_Create_Args);
  PJRT_ASSERT_OK(api_, api_->PJRT_Event_Create(&event));
  auto set = KILN_ARGS(PJRT_Event_Set_Args);
  set.event = event.event;
  SetRawEnum(set.error_code, 42);
  EXPECT_EQ(TakeError(api_, api_->PJRT_Event_Set(&set)).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
  set.error_code = PJRT_Error_Code_OK;
  PJRT_EXPECT_OK(api_, api_->PJRT_Event_Set(&set));
  DestroyEvent(event.event);
}

TEST_F(BadInputTest, NegativeOverflowingAndTooManyDimensions) {
  struct Case {
    std::vector<int64_t> dims;
    const char* message;
  };
  const Case cases[] = {
      {{2, -3}, "negative"},
      {{INT64_MAX, 2}, "overflows"},
      {{INT64_MAX / 2, 4}, "overflows"},  // element count fits, bytes do not
      {std::vector<int64_t>(65, 1), "at most 64"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    auto args = KILN_ARGS(PJRT_Client_CreateUninitializedBuffer_Args);
    args.client = client_;
    args.shape_dims = c.dims.data();
    args.shape_num_dims = c.dims.size();
    args.shape_element_type = PJRT_Buffer_Type_F32;
    args.device = Devices()[0];
    ErrorInfo error =
        TakeError(api_, api_->PJRT_Client_CreateUninitializedBuffer(&args));
    EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
    EXPECT_NE(error.message.find(c.message), std::string::npos)
        << error.message;
  }
  // A zero dimension makes any other size fine: the buffer is empty.
  std::vector<int64_t> empty = {0, INT64_MAX};
  auto args = KILN_ARGS(PJRT_Client_CreateUninitializedBuffer_Args);
  args.client = client_;
  args.shape_dims = empty.data();
  args.shape_num_dims = 2;
  args.shape_element_type = PJRT_Buffer_Type_F32;
  args.device = Devices()[0];
  PJRT_ASSERT_OK(api_, api_->PJRT_Client_CreateUninitializedBuffer(&args));
  EXPECT_TRUE(Download(args.buffer).empty());
  DestroyBuffer(args.buffer);
}

TEST_F(BadInputTest, ABufferTooLargeForTheMachineIsResourceExhausted) {
  std::vector<int64_t> dims = {int64_t{1} << 50};
  auto args = KILN_ARGS(PJRT_Client_CreateUninitializedBuffer_Args);
  args.client = client_;
  args.shape_dims = dims.data();
  args.shape_num_dims = 1;
  args.shape_element_type = PJRT_Buffer_Type_U8;
  args.device = Devices()[0];
  EXPECT_EQ(
      TakeError(api_, api_->PJRT_Client_CreateUninitializedBuffer(&args)).code,
      PJRT_Error_Code_RESOURCE_EXHAUSTED);
}

TEST_F(BadInputTest, HandlesOfTheWrongKindAreRejected) {
  PJRT_Device* device = Devices()[0];
  auto is_deleted = KILN_ARGS(PJRT_Buffer_IsDeleted_Args);
  is_deleted.buffer = reinterpret_cast<PJRT_Buffer*>(device);
  ErrorInfo error = TakeError(api_, api_->PJRT_Buffer_IsDeleted(&is_deleted));
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(error.message,
            "PJRT_Buffer_IsDeleted_Args.buffer is not a PJRT_Buffer made by "
            "Kiln (or was destroyed)");
  // A PJRT_Memory whose function table is someone else's.
  PJRT_Memory_FunctionTable foreign_table{};
  PJRT_Memory foreign{&foreign_table};
  auto kind = KILN_ARGS(PJRT_Memory_Kind_Args);
  kind.memory = &foreign;
  EXPECT_EQ(TakeError(api_, api_->PJRT_Memory_Kind(&kind)).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
  auto description = KILN_ARGS(PJRT_DeviceDescription_Id_Args);
  description.device_description =
      reinterpret_cast<PJRT_DeviceDescription*>(client_);
  EXPECT_EQ(TakeError(api_, api_->PJRT_DeviceDescription_Id(&description)).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
}

TEST_F(BadInputTest, HandlesOfAnotherClientAreRejected) {
  PJRT_Client* other = CreateClient(2);
  PJRT_Device* other_device = Devices(other)[1];
  PJRT_Buffer* buffer = UploadF32({1, 2}, {2});
  auto copy = KILN_ARGS(PJRT_Buffer_CopyToDevice_Args);
  copy.buffer = buffer;
  copy.dst_device = other_device;
  ErrorInfo error = TakeError(api_, api_->PJRT_Buffer_CopyToDevice(&copy));
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error.message.find("belongs to another client"), std::string::npos)
      << error.message;
  auto to_memory = KILN_ARGS(PJRT_Buffer_CopyToMemory_Args);
  to_memory.buffer = buffer;
  to_memory.dst_memory = DefaultMemory(other_device);
  EXPECT_EQ(TakeError(api_, api_->PJRT_Buffer_CopyToMemory(&to_memory)).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
  float data[2] = {};
  std::vector<int64_t> dims = {2};
  auto upload = KILN_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
  upload.client = client_;
  upload.data = data;
  upload.type = PJRT_Buffer_Type_F32;
  upload.dims = dims.data();
  upload.num_dims = 1;
  upload.device = other_device;
  EXPECT_EQ(
      TakeError(api_, api_->PJRT_Client_BufferFromHostBuffer(&upload)).code,
      PJRT_Error_Code_INVALID_ARGUMENT);
  DestroyBuffer(buffer);
  DestroyClient(other);
}

TEST_F(BadInputTest, ClientCreateOptions) {
  auto make = [&](PJRT_NamedValue option) {
    auto args = KILN_ARGS(PJRT_Client_Create_Args);
    args.create_options = &option;
    args.num_options = 1;
    ErrorInfo error = TakeError(api_, api_->PJRT_Client_Create(&args));
    return std::make_pair(error, args.client);
  };
  PJRT_NamedValue text = KILN_ARGS(PJRT_NamedValue);
  text.name = "cpu_device_count";
  text.name_size = 16;
  text.type = PJRT_NamedValue_kString;
  text.string_value = "3";
  text.value_size = 1;
  auto [ok, client] = make(text);
  ASSERT_EQ(ok.code, PJRT_Error_Code_OK) << Describe(ok);
  EXPECT_EQ(Devices(client).size(), 3u);
  DestroyClient(client);
  for (const char* bad : {"three", "0", "-2", "100000", ""}) {
    text.string_value = bad;
    text.value_size = std::strlen(bad);
    EXPECT_EQ(make(text).first.code, PJRT_Error_Code_INVALID_ARGUMENT) << bad;
  }
  PJRT_NamedValue unknown = KILN_ARGS(PJRT_NamedValue);
  unknown.name = "asynchronous";
  unknown.name_size = 12;
  unknown.type = PJRT_NamedValue_kBool;
  unknown.bool_value = true;
  unknown.value_size = 1;
  auto [ignored, client2] = make(unknown);
  EXPECT_EQ(ignored.code, PJRT_Error_Code_OK) << Describe(ignored);
  EXPECT_EQ(Devices(client2).size(), 1u);  // the default
  DestroyClient(client2);
  PJRT_NamedValue nodes = KILN_ARGS(PJRT_NamedValue);
  nodes.name = "num_nodes";
  nodes.name_size = 9;
  nodes.type = PJRT_NamedValue_kInt64;
  nodes.int64_value = 2;
  nodes.value_size = 1;
  // Several processes need the key-value callbacks, which `make` omits.
  ErrorInfo no_store = make(nodes).first;
  EXPECT_EQ(no_store.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(no_store.message.find("kv_get_callback"), std::string::npos)
      << no_store.message;
  // An option entry with a bad struct_size.
  PJRT_NamedValue truncated = text;
  truncated.struct_size = 8;
  EXPECT_EQ(make(truncated).first.code, PJRT_Error_Code_INVALID_ARGUMENT);
  // A count with no array.
  auto args = KILN_ARGS(PJRT_Client_Create_Args);
  args.create_options = nullptr;
  args.num_options = 3;
  EXPECT_EQ(TakeError(api_, api_->PJRT_Client_Create(&args)).code,
            PJRT_Error_Code_INVALID_ARGUMENT);
}

TEST_F(BadInputTest, DefaultDeviceAssignmentNeedsEnoughDevices) {
  int assignment[8] = {};
  auto args = KILN_ARGS(PJRT_Client_DefaultDeviceAssignment_Args);
  args.client = client_;
  args.default_assignment = assignment;
  args.default_assignment_size = 8;
  args.num_replicas = 3;
  args.num_partitions = 1;
  ErrorInfo error =
      TakeError(api_, api_->PJRT_Client_DefaultDeviceAssignment(&args));
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_NE(error.message.find("cpu_device_count"), std::string::npos)
      << error.message;
  args.num_replicas = 0;
  EXPECT_EQ(
      TakeError(api_, api_->PJRT_Client_DefaultDeviceAssignment(&args)).code,
      PJRT_Error_Code_INVALID_ARGUMENT);
  args.num_replicas = 1;
  args.num_partitions = 2;
  PJRT_ASSERT_OK(api_, api_->PJRT_Client_DefaultDeviceAssignment(&args));
  EXPECT_EQ(assignment[0], 0);
  EXPECT_EQ(assignment[1], 1);
}

// An error made outside Kiln, with its own function table, as a framework
// callback makes them.
struct ForeignError : PJRT_Error {
  std::string message = "made elsewhere";
  int destroyed = 0;
};

TEST_F(BadInputTest, ErrorsMadeElsewhereAreReadThroughTheirTable) {
  static const PJRT_Error_FunctionTable table = {
      PJRT_Error_FunctionTable_STRUCT_SIZE,
      sizeof(ForeignError),
      nullptr,
      [](PJRT_Error* e) { ++static_cast<ForeignError*>(e)->destroyed; },
      [](const PJRT_Error* e, const char** message, size_t* size) {
        *message = static_cast<const ForeignError*>(e)->message.data();
        *size = static_cast<const ForeignError*>(e)->message.size();
      },
      [](const PJRT_Error*) { return PJRT_Error_Code_ABORTED; },
      nullptr,
  };
  ForeignError error;
  error.vtable = &table;
  auto code = KILN_ARGS(PJRT_Error_GetCode_Args);
  code.error = &error;
  PJRT_ASSERT_OK(api_, api_->PJRT_Error_GetCode(&code));
  EXPECT_EQ(code.code, PJRT_Error_Code_ABORTED);
  auto message = KILN_ARGS(PJRT_Error_Message_Args);
  message.error = &error;
  api_->PJRT_Error_Message(&message);
  EXPECT_EQ(std::string(message.message, message.message_size),
            "made elsewhere");
  auto payloads = KILN_ARGS(PJRT_Error_ForEachPayload_Args);
  payloads.error = &error;
  payloads.visitor = [](const char*, size_t, const char*, size_t, void*) {};
  PJRT_EXPECT_OK(api_, api_->PJRT_Error_ForEachPayload(&payloads));
  auto destroy = KILN_ARGS(PJRT_Error_Destroy_Args);
  destroy.error = &error;
  api_->PJRT_Error_Destroy(&destroy);
  EXPECT_EQ(error.destroyed, 1);
}

TEST_F(BadInputTest, KilnErrorsCarryTheFunctionTable) {
  auto devices = KILN_ARGS(PJRT_Client_Devices_Args);
  PJRT_Error* error = api_->PJRT_Client_Devices(&devices);
  ASSERT_NE(error, nullptr);
  ASSERT_NE(error->vtable, nullptr);
  EXPECT_EQ(error->vtable->struct_size, PJRT_Error_FunctionTable_STRUCT_SIZE);
  EXPECT_EQ(error->vtable->get_code(error), PJRT_Error_Code_INVALID_ARGUMENT);
  const char* text = nullptr;
  size_t size = 0;
  error->vtable->message(error, &text, &size);
  EXPECT_EQ(std::string(text, size), "PJRT_Client_Devices_Args.client is null");
  error->vtable->destroy(error);
}

}  // namespace
}  // namespace kiln::testing
